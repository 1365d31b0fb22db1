"""Post-pruning: cost complexity (against scikit-learn and a naive twin), reduced error (naive
twin, never more pruning-set errors), pessimistic (C4.5's textbook example)."""

import numpy as np
import pytest

import jitree
from jitree.model.pruning import pessimistic_extra_errors

from naive import node_members


def _data(n=1500, seed=0, classes=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    score = X[:, 0] + 0.7 * X[:, 1] ** 2 + rng.normal(scale=0.8, size=n)
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))
    return X, y


def _check_compact(tree):
    """Every node reachable once from the root, leaves' samples add up to the root's."""
    reached = np.zeros(tree.node_count, dtype=int)
    reached[0] = 1
    for node in range(tree.node_count):
        if tree.children_left[node] >= 0:
            assert tree.children_left[node] > node and tree.children_right[node] > node
            reached[tree.children_left[node]] += 1
            reached[tree.children_right[node]] += 1
    assert (reached == 1).all()
    leaves = tree.children_left < 0
    assert tree.n_node_samples[leaves].sum() == tree.n_node_samples[0]
    assert (tree.feature[leaves] == jitree.TREE_UNDEFINED).all()


def naive_ccp_path(tree):
    """Weakest-link pruning, recomputing every subtree from scratch at each step."""
    r = tree.weighted_n_node_samples * tree.impurity / tree.weighted_n_node_samples[0]
    is_leaf = tree.children_left < 0

    def leaves_below(node):
        if is_leaf[node]:
            return [node]
        return (leaves_below(tree.children_left[node])
                + leaves_below(tree.children_right[node]))

    alphas, impurities = [0.0], [sum(r[leaf] for leaf in leaves_below(0))]
    while not is_leaf[0]:
        internal = [node for node in range(tree.node_count)
                    if not is_leaf[node] and node in _reachable(tree, is_leaf)]
        g = {node: (r[node] - sum(r[leaf] for leaf in leaves_below(node)))
             / (len(leaves_below(node)) - 1) for node in internal}
        weakest = min(g, key=lambda node: (g[node], node))
        is_leaf[weakest] = True
        alphas.append(g[weakest])
        impurities.append(sum(r[leaf] for leaf in leaves_below(0)))
    return np.array(alphas), np.array(impurities)


def _reachable(tree, is_leaf):
    seen, stack = set(), [0]
    while stack:
        node = stack.pop()
        seen.add(node)
        if not is_leaf[node]:
            stack += [tree.children_left[node], tree.children_right[node]]
    return seen


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ccp_path_matches_naive_twin(seed):
    X, y = _data(n=300, seed=seed)
    model = jitree.DecisionTreeClassifier(max_depth=6, random_state=0)
    path = model.cost_complexity_pruning_path(X, y)
    tree = jitree.DecisionTreeClassifier(max_depth=6).fit(X, y).tree_
    alphas, impurities = naive_ccp_path(tree)
    np.testing.assert_allclose(path.ccp_alphas, alphas, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(path.impurities, impurities, rtol=1e-9, atol=1e-15)
    assert np.all(np.diff(path.ccp_alphas) >= -1e-15)


def test_ccp_path_and_pruned_trees_equal_sklearn_on_tie_free_data():
    sklearn_tree = pytest.importorskip("sklearn.tree")
    from sklearn.datasets import make_regression

    # continuous targets: every split and every effective alpha is unique
    X, y = make_regression(800, 6, noise=3.0, random_state=0)
    X = X.astype(np.float32)
    ours = jitree.DecisionTreeRegressor().cost_complexity_pruning_path(X, y)
    theirs = sklearn_tree.DecisionTreeRegressor(random_state=0).cost_complexity_pruning_path(X, y)
    # absolute tolerance: scikit-learn's pure leaves keep a rounding residue of variance
    # (~1e-13 here), jitree's are exactly 0
    scale = theirs.impurities[-1]
    np.testing.assert_allclose(ours.ccp_alphas, theirs.ccp_alphas, rtol=1e-9,
                               atol=1e-12 * scale)
    np.testing.assert_allclose(ours.impurities, theirs.impurities, rtol=1e-9,
                               atol=1e-12 * scale)
    # alphas between two successive path values (at a path value itself the outcome rests on
    # the last bit of g(t), which the two libraries round differently)
    middles = (theirs.ccp_alphas[1:] + theirs.ccp_alphas[:-1]) / 2
    for alpha in middles[[10, len(middles) // 2, -3]]:
        pruned = jitree.DecisionTreeRegressor(ccp_alpha=alpha).fit(X, y)
        reference = sklearn_tree.DecisionTreeRegressor(ccp_alpha=alpha, random_state=0).fit(X, y)
        assert pruned.tree_.node_count == reference.tree_.node_count
        np.testing.assert_allclose(pruned.predict(X), reference.predict(X), rtol=1e-9)
        _check_compact(pruned.tree_)


def test_ccp_classification_alphas_equal_sklearn_up_to_tie_order():
    sklearn_tree = pytest.importorskip("sklearn.tree")
    from sklearn.datasets import make_classification

    X, y = make_classification(1500, 8, n_informative=5, random_state=0)
    X = X.astype(np.float32)
    ours = jitree.DecisionTreeClassifier(max_depth=8).cost_complexity_pruning_path(X, y)
    theirs = sklearn_tree.DecisionTreeClassifier(max_depth=8, random_state=0) \
        .cost_complexity_pruning_path(X, y)
    # Equal alphas (several branches with the same effective alpha) are pruned in node order,
    # which differs between the libraries: compare the alphas as sorted lists and the impurity
    # reached after the last prune of each distinct alpha.
    np.testing.assert_allclose(np.sort(ours.ccp_alphas), np.sort(theirs.ccp_alphas),
                               rtol=1e-9, atol=1e-12)

    def after_each_alpha(path):
        last = np.r_[np.diff(path.ccp_alphas) > 1e-12, True]
        return path.impurities[last]

    np.testing.assert_allclose(after_each_alpha(ours), after_each_alpha(theirs), rtol=1e-9)


def test_ccp_alpha_prunes_and_keeps_arrays_compact():
    X, y = _data()
    full = jitree.DecisionTreeClassifier().fit(X, y)
    path = full.cost_complexity_pruning_path(X, y)
    sizes = []
    for alpha in path.ccp_alphas[::10]:
        model = jitree.DecisionTreeClassifier(ccp_alpha=alpha).fit(X, y)
        _check_compact(model.tree_)
        sizes.append(model.tree_.node_count)
    assert sizes == sorted(sizes, reverse=True) and sizes[0] == full.tree_.node_count
    root_only = jitree.DecisionTreeClassifier(ccp_alpha=path.ccp_alphas[-1]).fit(X, y)
    assert root_only.tree_.node_count == 1
    with pytest.raises(ValueError, match="ccp_alpha"):
        jitree.DecisionTreeClassifier(ccp_alpha=-0.1).fit(X, y)


def naive_reduced_error(tree, X, y, node_prediction, regression):
    """Recursive twin: returns the set of nodes turned into leaves."""
    members = node_members(tree, X)
    pruned = set()

    def cost(node):  # error of the best pruned subtree below node
        rows = members[node]
        if regression:
            as_leaf = float(np.sum((y[rows] - node_prediction[node]) ** 2))
        else:
            as_leaf = float(np.sum(y[rows] != node_prediction[node]))
        if tree.children_left[node] < 0:
            return as_leaf
        below = cost(tree.children_left[node]) + cost(tree.children_right[node])
        if as_leaf <= below:
            pruned.add(node)
            return as_leaf
        return below

    cost(0)
    # a pruned node's descendants disappear: keep only the top-most pruned nodes
    top = set()
    for node in pruned:
        parent_chain = _ancestors(tree, node)
        if not any(a in pruned for a in parent_chain):
            top.add(node)
    return top


def _ancestors(tree, node):
    parent = {}
    for p in range(tree.node_count):
        if tree.children_left[p] >= 0:
            parent[tree.children_left[p]] = p
            parent[tree.children_right[p]] = p
    chain = []
    while node in parent:
        node = parent[node]
        chain.append(node)
    return chain


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reduced_error_classification_matches_twin_and_never_adds_errors(seed):
    X, y = _data(n=1200, seed=seed)
    X_train, y_train, X_prune, y_prune = X[:800], y[:800], X[800:], y[800:]
    model = jitree.DecisionTreeClassifier(random_state=0).fit(X_train, y_train)
    before = model.tree_
    errors_before = np.sum(model.predict(X_prune) != y_prune)
    node_class = np.argmax(before.value, axis=1)
    expected_top = naive_reduced_error(before, X_prune, y_prune, node_class, regression=False)
    model.prune_reduced_error(X_prune, y_prune)
    after = model.tree_
    _check_compact(after)
    assert np.sum(model.predict(X_prune) != y_prune) <= errors_before
    assert after.node_count < before.node_count
    # the surviving leaves are the naive twin's: same number of nodes removed
    removed = sum(_subtree_size(before, node) - 1 for node in expected_top)
    assert after.node_count == before.node_count - removed


def _subtree_size(tree, node):
    if tree.children_left[node] < 0:
        return 1
    return 1 + _subtree_size(tree, tree.children_left[node]) \
        + _subtree_size(tree, tree.children_right[node])


def test_reduced_error_regression_never_increases_squared_error():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 4))
    y = np.sin(X[:, 0]) + 0.3 * rng.normal(size=1000)
    model = jitree.DecisionTreeRegressor(random_state=0).fit(X[:600], y[:600])
    before = model.tree_
    sse_before = np.sum((model.predict(X[600:]) - y[600:]) ** 2)
    expected_top = naive_reduced_error(before, X[600:], y[600:], before.value[:, 0], True)
    model.prune_reduced_error(X[600:], y[600:])
    _check_compact(model.tree_)
    assert np.sum((model.predict(X[600:]) - y[600:]) ** 2) <= sse_before + 1e-9
    removed = sum(_subtree_size(before, node) - 1 for node in expected_top)
    assert model.tree_.node_count == before.node_count - removed


def test_reduced_error_refuses_unknown_labels_and_bad_input():
    X, y = _data(n=400)
    model = jitree.DecisionTreeClassifier(max_depth=4).fit(X, y)
    n_nodes = model.tree_.node_count
    # a label never seen at fit would be an error at every node and collapse the tree
    with pytest.raises(ValueError, match="not among the classes"):
        model.prune_reduced_error(X[:50], np.full(50, 99))
    assert model.tree_.node_count == n_nodes
    _check_compact(model.tree_)
    with pytest.raises(ValueError, match="inconsistent"):
        model.prune_reduced_error(X[:50], y[:40])
    with pytest.raises(jitree.NotFittedError):
        jitree.DecisionTreeClassifier().prune_reduced_error(X, y)


def test_pessimistic_extra_errors_textbook_values():
    # C4.5 (Quinlan 1993, ch. 4) at CF = 25%: upper error rates U(0, 6) = 0.206,
    # U(0, 9) = 0.143, U(0, 1) = 0.750 (exact binomial for no error) and U(1, 16) = 0.157
    # (jitree, like C4.5's code, uses the normal approximation there: 0.155).
    assert (0 + pessimistic_extra_errors(6, 0, 0.25)) / 6 == pytest.approx(0.206, abs=5e-4)
    assert (0 + pessimistic_extra_errors(9, 0, 0.25)) / 9 == pytest.approx(0.143, abs=5e-4)
    assert (0 + pessimistic_extra_errors(1, 0, 0.25)) / 1 == pytest.approx(0.750, abs=5e-4)
    assert (1 + pessimistic_extra_errors(16, 1, 0.25)) / 16 == pytest.approx(0.157, abs=3e-3)


def _tree_from_counts(children_left, children_right, counts):
    counts = np.asarray(counts, dtype=float)
    n = counts.sum(axis=1)
    internal = np.asarray(children_left) >= 0
    return jitree.Tree(
        n_features=1, n_classes=2, feature=np.where(internal, 0, -2),
        threshold=np.where(internal, 0.5, -2.0), children_left=children_left,
        children_right=children_right, value=counts,
        impurity=1 - ((counts / n[:, None]) ** 2).sum(axis=1), n_node_samples=n.astype(int),
        weighted_n_node_samples=n)


def test_pessimistic_pruning_hand_worked_example():
    # Quinlan's example: a node with 16 cases (15 of one class) split into leaves of 6, 9 and
    # 1 pure cases (here as a binary tree: 16 -> (6) and 10 -> (9), (1)).
    # Leaves' estimates: 6*0.206 + 9*0.143 + 1*0.750 = 3.27 errors; the node as a leaf:
    # 16*0.155 = 2.48 errors, fewer: the whole subtree is replaced by a leaf.
    tree = _tree_from_counts([1, -1, 3, -1, -1], [2, -1, 4, -1, -1],
                             [[15, 1], [6, 0], [9, 1], [9, 0], [0, 1]])
    model = jitree.DecisionTreeClassifier._from_tree(tree, classes=np.array([0, 1]))
    model.prune_pessimistic(0.25)
    assert model.tree_.node_count == 1
    # a split that removes most errors is kept: 150/50 -> 140/5 and 10/45 (50 errors -> 15)
    tree = _tree_from_counts([1, -1, -1], [2, -1, -1], [[150, 50], [140, 5], [10, 45]])
    model = jitree.DecisionTreeClassifier._from_tree(tree, classes=np.array([0, 1]))
    as_leaf = 50 + pessimistic_extra_errors(200, 50, 0.25)
    below = (5 + pessimistic_extra_errors(145, 5, 0.25)
             + 10 + pessimistic_extra_errors(55, 10, 0.25))
    assert below + 0.1 < as_leaf
    assert model.prune_pessimistic(0.25).tree_.node_count == 3
    # ... while a split that moves errors around without removing any is pruned
    tree = _tree_from_counts([1, -1, -1], [2, -1, -1], [[150, 50], [100, 0], [50, 50]])
    model = jitree.DecisionTreeClassifier._from_tree(tree, classes=np.array([0, 1]))
    assert model.prune_pessimistic(0.25).tree_.node_count == 1


def test_pessimistic_pruning_does_not_depend_on_the_weights_units():
    """The counts are taken in the root's number of samples: weights scaled by any factor, or
    class weights equal for every class, prune as unit weights do (and whole weights as
    their scaled copies)."""
    X, y = _data()
    whole = np.random.default_rng(3).integers(1, 4, X.shape[0]).astype(float)
    for confidence in (0.25, 0.05):
        unit = jitree.DecisionTreeClassifier(random_state=0).fit(X, y)
        unit.prune_pessimistic(confidence)
        for kwargs in ({"sample_weight": np.full(X.shape[0], 1.0 / X.shape[0])},
                       {"sample_weight": np.full(X.shape[0], 1e6)}):
            scaled = jitree.DecisionTreeClassifier(random_state=0).fit(X, y, **kwargs)
            scaled.prune_pessimistic(confidence)
            np.testing.assert_array_equal(scaled.apply(X), unit.apply(X))
        equal = jitree.DecisionTreeClassifier(random_state=0,
                                              class_weight={0: 1e-3, 1: 1e-3, 2: 1e-3})
        equal.fit(X, y).prune_pessimistic(confidence)
        np.testing.assert_array_equal(equal.apply(X), unit.apply(X))
        counted = jitree.DecisionTreeClassifier(random_state=0).fit(X, y, sample_weight=whole)
        counted.prune_pessimistic(confidence)
        shrunk = jitree.DecisionTreeClassifier(random_state=0).fit(X, y,
                                                                   sample_weight=whole / 64)
        shrunk.prune_pessimistic(confidence)
        np.testing.assert_array_equal(shrunk.apply(X), counted.apply(X))
    # a confidence too small for 1 - CF to differ from 1 still prunes (to the root, here)
    tiny = jitree.DecisionTreeClassifier(random_state=0).fit(X, y).prune_pessimistic(1e-300)
    assert tiny.tree_.node_count <= unit.tree_.node_count


def test_pessimistic_prunes_more_with_smaller_confidence():
    X, y = _data()
    sizes = []
    for confidence in (0.5, 0.25, 0.05, 0.001):
        model = jitree.DecisionTreeClassifier(random_state=0).fit(X, y)
        model.prune_pessimistic(confidence)
        _check_compact(model.tree_)
        sizes.append(model.tree_.node_count)
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] < sizes[0]
    with pytest.raises(ValueError, match="confidence"):
        model.prune_pessimistic(1.5)
    with pytest.raises(AttributeError):
        _ = jitree.DecisionTreeRegressor().prune_pessimistic  # classifiers only
