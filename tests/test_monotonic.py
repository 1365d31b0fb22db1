"""Monotonic constraints (monotonic_cst): scikit-learn's parameter and meaning."""

import numpy as np
import pytest

import jitree

from naive import walk_against


def _data(seed, n=1500, d=4, task="regression", noise=0.5):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = 3 * X[:, 0] - 2 * X[:, 1] + np.sin(6 * X[:, 2]) + rng.normal(0, noise, n)
    if task == "classification":
        y = (y > np.median(y)).astype(np.int64)
    return X, y


CONSTRAINTS = [1, -1, 1, 0]


def _walk_same(ours, theirs, X, y, w, criterion, n_classes):
    """:func:`naive.walk_against` with the nodes' values (class fractions) equal."""
    def same_value(a, b):
        if ours.children_left[a] < 0 and ours.impurity[a] == 0.0 < theirs.impurity[b] < 1e-12:
            # scikit-learn's weighted child impurities are differences of sums: a pure node
            # may keep a rounding residue above its purity threshold and be split (into
            # children of the same value); jitree sums a child's own samples and finds it pure
            return False
        ours_value = ours.value[a] / ours.value[a].sum() if n_classes else ours.value[a]
        np.testing.assert_allclose(ours_value, theirs.value[b].ravel(), rtol=1e-9,
                                   atol=1e-12)
        return True

    return walk_against(ours, theirs, X, y, w, criterion, n_classes, same_value)


@pytest.mark.parametrize("task", ["regression", "classification"])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("params", [dict(max_depth=5), dict(min_samples_leaf=10),
                                    dict(max_leaf_nodes=30)])
@pytest.mark.parametrize("weighted", [False, True])
def test_constrained_trees_identical_to_sklearn(task, seed, params, weighted):
    sklearn_tree = pytest.importorskip("sklearn.tree")
    X, y = _data(seed, task=task)
    X = X.astype(np.float32)  # the values scikit-learn splits
    w = np.random.default_rng(seed).uniform(0.5, 2.0, y.shape[0]) if weighted else None
    if task == "regression":
        ours = jitree.DecisionTreeRegressor(monotonic_cst=CONSTRAINTS, **params)
        theirs = sklearn_tree.DecisionTreeRegressor(monotonic_cst=CONSTRAINTS,
                                                    random_state=0, **params)
        criterion, n_classes = "squared_error", 0
    else:
        ours = jitree.DecisionTreeClassifier(monotonic_cst=CONSTRAINTS, **params)
        theirs = sklearn_tree.DecisionTreeClassifier(monotonic_cst=CONSTRAINTS,
                                                     random_state=0, **params)
        criterion, n_classes = "gini", 2
    ours.fit(X, y, w)
    theirs.fit(X, y, w)
    ties, same = _walk_same(ours.tree_, theirs.tree_, X, y,
                            np.ones(y.shape[0]) if w is None else w, criterion, n_classes)
    assert same >= 0.9 * (ours.tree_.node_count - ours.tree_.n_leaves)
    if ties == 0:
        if task == "regression":
            np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-12)
        else:
            np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X),
                                       atol=1e-12)


def _assert_monotone(predict, X, constraints, seed=0, n_points=40, n_grid=60):
    """Along every constrained feature, predictions on a grid (other features held at
    random points) never move against the constraint."""
    rng = np.random.default_rng(seed)
    low = np.nanmin(X, axis=0)
    high = np.nanmax(X, axis=0)
    for f, sign in enumerate(constraints):
        if sign == 0:
            continue
        grid = np.linspace(low[f] - 0.1, high[f] + 0.1, n_grid)
        points = rng.uniform(low, high, (n_points, X.shape[1]))
        rows = np.repeat(points, n_grid, axis=0)
        rows[:, f] = np.tile(grid, n_points)
        steps = np.diff(predict(rows).reshape(n_points, n_grid), axis=1)
        assert (steps * sign >= 0.0).all(), (f, (steps * sign).min())


@pytest.mark.parametrize("model", [
    jitree.DecisionTreeRegressor(monotonic_cst=CONSTRAINTS),
    jitree.DecisionTreeRegressor(monotonic_cst=CONSTRAINTS, splitter="random", random_state=1),
    jitree.DecisionTreeRegressor(monotonic_cst=CONSTRAINTS, max_leaf_nodes=40),
    jitree.DecisionTreeRegressor(monotonic_cst=CONSTRAINTS, criterion="poisson"),
    jitree.RandomForestRegressor(monotonic_cst=CONSTRAINTS, n_estimators=10, random_state=0),
    jitree.ExtraTreesRegressor(monotonic_cst=CONSTRAINTS, n_estimators=10, random_state=0),
    jitree.DecisionTreeClassifier(monotonic_cst=CONSTRAINTS),
    jitree.DecisionTreeClassifier(monotonic_cst=CONSTRAINTS, criterion="entropy",
                                  min_samples_leaf=3),
    jitree.RandomForestClassifier(monotonic_cst=CONSTRAINTS, n_estimators=10,
                                  random_state=0),
    jitree.ExtraTreesClassifier(monotonic_cst=CONSTRAINTS, n_estimators=10, random_state=0),
    # honest trees: values estimated on other rows, bounded again (honest.monotone_values)
    jitree.DecisionTreeRegressor(monotonic_cst=CONSTRAINTS, honest=True, random_state=0),
    jitree.DecisionTreeRegressor(monotonic_cst=CONSTRAINTS, honest=True,
                                 criterion="absolute_error", random_state=0),
    jitree.DecisionTreeClassifier(monotonic_cst=CONSTRAINTS, honest=True, random_state=0),
    jitree.RandomForestRegressor(monotonic_cst=CONSTRAINTS, honest=True, n_estimators=10,
                                 random_state=0),
    jitree.RandomForestClassifier(monotonic_cst=CONSTRAINTS, honest=True, n_estimators=10,
                                  random_state=0),
], ids=lambda model: "-".join([type(model).__name__, model.get_params().get("splitter", ""),
                               model.get_params().get("criterion", "")]
                              + (["honest"] if model.get_params().get("honest") else [])))
@pytest.mark.parametrize("missing", [False, True])
def test_predictions_are_monotone_on_grids(model, missing):
    task = "classification" if "Classifier" in type(model).__name__ else "regression"
    X, y = _data(3, n=800, task=task, noise=1.5)
    if getattr(model, "criterion", None) == "poisson":
        y = np.exp(y / 3)
    if missing:
        X[np.random.default_rng(4).random(X.shape) < 0.1] = np.nan
    model.fit(X, y)
    _assert_monotone(_prediction(model, task), X, CONSTRAINTS)
    # an unconstrained tree on the same noisy data is not monotone: the test can fail
    free = jitree.clone(model).set_params(monotonic_cst=None).fit(X, y)
    with pytest.raises(AssertionError):
        _assert_monotone(_prediction(free, task), X, CONSTRAINTS)


def _prediction(model, task):
    if task == "regression":
        return model.predict

    def probability(rows):
        return model.predict_proba(rows)[:, 1]

    return probability


def test_ordinal_features_and_user_criteria_take_constraints():
    X, y = _data(5, n=600)
    X[:, 0] = np.round(X[:, 0] * 8)
    model = jitree.DecisionTreeRegressor(monotonic_cst=CONSTRAINTS, ordinal_features=[0],
                                         categorical_features=[3]).fit(X, y)
    _assert_monotone(model.predict, X, CONSTRAINTS)

    import numba

    @numba.njit
    def variance(stats, weight):
        mean = stats[0] / weight
        return stats[1] / weight - mean * mean

    user = jitree.DecisionTreeRegressor(criterion=jitree.Criterion(impurity=variance),
                                        monotonic_cst=CONSTRAINTS, max_depth=6).fit(X, y)
    builtin = jitree.DecisionTreeRegressor(monotonic_cst=CONSTRAINTS, max_depth=6).fit(X, y)
    _assert_monotone(user.predict, X, CONSTRAINTS)
    np.testing.assert_allclose(user.predict(X), builtin.predict(X), rtol=1e-9, atol=1e-12)


def test_zero_constraints_grow_the_unconstrained_tree():
    X, y = _data(6, n=500)
    free = jitree.DecisionTreeRegressor(max_depth=6).fit(X, y).tree_
    zero = jitree.DecisionTreeRegressor(max_depth=6, monotonic_cst=[0, 0, 0, 0]).fit(X, y).tree_
    np.testing.assert_array_equal(zero.feature, free.feature)
    np.testing.assert_array_equal(zero.threshold, free.threshold)
    np.testing.assert_array_equal(zero.value, free.value)


def test_constrained_values_stay_within_their_bounds():
    # node values are clipped: a right child under an increasing constraint never predicts
    # below its left sibling, at every depth
    X, y = _data(7, n=1000, noise=2.0)
    tree = jitree.DecisionTreeRegressor(monotonic_cst=[1, 0, 0, 0]).fit(X, y).tree_

    def values(node):
        if tree.children_left[node] < 0:
            return [tree.value[node, 0]]
        return values(tree.children_left[node]) + values(tree.children_right[node])

    for node in range(tree.node_count):
        if tree.children_left[node] >= 0 and tree.feature[node] == 0:
            assert max(values(tree.children_left[node])) <= \
                min(values(tree.children_right[node])) + 1e-12


def _naive_monotone_values(tree, value, monotonic):
    """honest.monotone_values by recursion: a node's value clipped to its bounds; a
    constrained threshold split's children bounded at the mean of their values clipped to
    the node's bounds."""
    out = value.astype(float)

    def visit(node, low, high):
        out[node] = min(max(value[node], low), high)
        first, last = tree.children_left[node], tree.children_right[node]
        if first < 0:
            return
        sign = monotonic[tree.feature[node]] if tree.split_kind[node] == 0 else 0
        if sign == 0:
            for child in range(first, last + 1) if tree.split_kind[node] == 2 \
                    else (first, last):
                visit(child, low, high)
            return
        middle = (min(max(value[first], low), high) / 2.0
                  + min(max(value[last], low), high) / 2.0)
        if sign > 0:
            visit(first, low, middle)
            visit(last, middle, high)
        else:
            visit(first, middle, high)
            visit(last, low, middle)

    visit(0, -np.inf, np.inf)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_honest_bounds_against_their_definition(seed):
    """The honest trees' bounding of re-estimated values (monotone_values) against the
    recursive definition, on a constrained tree's structure with random values: regression
    values, and a classifier's class weights (bounded on the fraction of class 0), with
    categorical splits (unconstrained, every child inherits the bounds) among them."""
    from jitree.model import honest
    from jitree.model.tree import node_levels

    rng = np.random.default_rng(seed)
    X, y = _data(seed, n=600)
    X[:, 3] = np.floor(X[:, 3] * 6)
    constraints = np.array([1, -1, 0, 0], dtype=np.int8)
    tree = jitree.DecisionTreeRegressor(
        monotonic_cst=constraints, categorical_features=[3],
        categorical_split="multiway" if seed % 2 else "subset", max_leaf_nodes=60,
        random_state=seed).fit(X, y).tree_
    tree_levels = node_levels(tree)
    value = rng.normal(size=(tree.node_count, 1))
    bounded = honest.monotone_values(tree, value, constraints, tree_levels)
    np.testing.assert_array_equal(bounded[:, 0],
                                  _naive_monotone_values(tree, value[:, 0], constraints))
    assert not np.array_equal(bounded, value)  # the random values broke the constraints
    weights = rng.uniform(0.0, 5.0, (tree.node_count, 2))
    weights[0] += 1.0
    classifier = jitree.Tree(tree.n_features, 2, tree.feature, tree.threshold,
                             tree.children_left, tree.children_right, weights, tree.impurity,
                             tree.n_node_samples, tree.weighted_n_node_samples,
                             tree.split_kind, tree.missing_left, tree.category_offset,
                             tree.category_bits, tree.multiway_slot, tree.n_categories,
                             tree.feature_kind)
    bounded = honest.monotone_values(classifier, weights, constraints, tree_levels)
    total = weights.sum(axis=1)
    np.testing.assert_allclose(bounded.sum(axis=1), total, rtol=1e-15)
    np.testing.assert_allclose(bounded[:, 0] / total, _naive_monotone_values(
        classifier, weights[:, 0] / total, constraints), rtol=1e-15)


@pytest.mark.parametrize("model", [
    jitree.DecisionTreeClassifier(random_state=42),
    jitree.DecisionTreeClassifier(max_leaf_nodes=900, random_state=42),
    jitree.RandomForestClassifier(n_estimators=5, random_state=42),
    jitree.ExtraTreesClassifier(n_estimators=5, random_state=42),
], ids=["depth-first", "best-first", "random-forest", "extra-trees"])
def test_class_probabilities_keep_the_constraints_in_every_bit(model):
    """scikit-learn's check: test rows moved far along a constrained feature never move
    P(class 1) against the constraint. Two leaves that the growth bounds to the same
    fraction hold different class weights, whose quotients differed in the last bit (a
    decision tree failed every one of these checks); the probabilities are now bounded
    themselves (monotone.exact_probabilities), within a rounding error of the quotients."""
    datasets = pytest.importorskip("sklearn.datasets")
    X, y = datasets.make_classification(n_samples=1000, n_features=5, n_informative=5,
                                        n_redundant=0, random_state=42)
    X_train, y_train, X_test = X[:900], y[:900], X[900:]
    model = jitree.clone(model).set_params(monotonic_cst=[1, -1, 0, 0, 0])
    model.fit(X_train, y_train)
    proba = model.predict_proba(X_test)
    for feature, shift, sign in ((0, 10, 1), (0, -10, -1), (1, 10, -1), (1, -10, 1)):
        moved = X_test.copy()
        moved[:, feature] += shift
        assert np.all((model.predict_proba(moved)[:, 1] - proba[:, 1]) * sign >= 0.0)
    trees = getattr(model, "estimators_", [model])
    for tree in trees:
        table = tree._node_proba()
        quotients = tree.tree_.probability_table()
        assert np.abs(table - quotients).max() <= 1e-15
        np.testing.assert_array_equal(table.sum(axis=1), 1.0)


@pytest.mark.parametrize("split", ["subset", "one_vs_rest", "multiway", "missing"])
def test_constrained_class_weights_are_never_negative(split):
    """A constrained classifier's pure nodes, whose class weight came out a rounding error
    above their weight (sample weights, and a categorical or missing-value split whose sides
    are differences of sums), gave the other class a weight of -1e-14 and probabilities
    just outside [0, 1]."""
    outside = 0
    for seed in range(12):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(100, 700))
        X = rng.normal(size=(n, 4))
        X[:, 1] = rng.integers(0, 5, n)
        y = (X[:, 0] + 0.3 * X[:, 1] + rng.normal(scale=0.7, size=n) > 0.5).astype(int)
        if split == "missing":
            X[rng.random(X.shape) < 0.2] = np.nan
            params = {}
        else:
            params = dict(categorical_features=[1], categorical_split=split)
        weight = rng.uniform(0.2, 3.0, n)
        for model in (jitree.DecisionTreeClassifier(monotonic_cst=[0, 0, 0, -1],
                                                    random_state=seed, **params),
                      jitree.RandomForestClassifier(monotonic_cst=[0, 0, 0, -1],
                                                    n_estimators=3, random_state=seed,
                                                    **params)):
            model.fit(X, y, sample_weight=weight)
            for tree in getattr(model, "estimators_", [model]):
                assert tree.tree_.value.min() >= 0.0
            proba = model.predict_proba(X)
            outside += int(((proba < 0.0) | (proba > 1.0)).any())
    assert outside == 0


def test_constraints_set_after_the_fit_change_no_probability():
    """monotonic_cst set on a tree grown without it does not bound its probabilities (the
    fitted tree is as it was grown)."""
    X, y = _data(11, n=800, task="classification", noise=1.5)
    free = jitree.DecisionTreeClassifier(random_state=0).fit(X, y)
    before = free.predict_proba(X)
    free.set_params(monotonic_cst=CONSTRAINTS)
    np.testing.assert_array_equal(free.predict_proba(X), before)


def test_constrained_model_saves_and_loads(tmp_path):
    X, y = _data(8, n=400, task="classification")
    model = jitree.DecisionTreeClassifier(monotonic_cst=CONSTRAINTS, max_depth=6).fit(X, y)
    path = tmp_path / "monotone.jitree"
    jitree.save(model, path)
    loaded = jitree.load(path)
    assert list(loaded.monotonic_cst) == CONSTRAINTS
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))


@pytest.mark.parametrize("constraints, message", [
    ([1, 0, 0], "shape"),
    ([1, 0, 0, 0, 0], "shape"),
    ([2, 0, 0, 0], "-1, 0 or 1"),
    ([0.5, 0, 0, 0], "-1, 0 or 1"),
    (["a", 0, 0, 0], "-1, 0 or 1"),
    ([[1, 0, 0, 0]], "shape"),
])
def test_bad_constraints(constraints, message):
    X, y = _data(9, n=100)
    with pytest.raises(ValueError, match=message):
        jitree.DecisionTreeRegressor(monotonic_cst=constraints).fit(X, y)
    with pytest.raises(ValueError, match=message):
        jitree.RandomForestRegressor(monotonic_cst=constraints, n_estimators=2).fit(X, y)


def test_refused_where_scikit_learn_refuses_and_on_categories():
    X, y = _data(10, n=200)
    with pytest.raises(TypeError, match="monotonic_cst"):
        jitree.DecisionTreeRegressor(monotonic_cst="increasing").fit(X, y)
    three = np.digitize(y, np.quantile(y, [0.33, 0.66]))
    with pytest.raises(ValueError, match="multiclass"):
        jitree.DecisionTreeClassifier(monotonic_cst=CONSTRAINTS).fit(X, three)
    with pytest.raises(ValueError, match="multiclass"):
        jitree.RandomForestClassifier(monotonic_cst=CONSTRAINTS, n_estimators=2).fit(X, three)
    X[:, 3] = np.floor(X[:, 3] * 5)
    with pytest.raises(ValueError, match="categorical feature"):
        jitree.DecisionTreeRegressor(monotonic_cst=[0, 0, 0, 1],
                                     categorical_features=[3]).fit(X, y)


def test_a_y_of_one_class_takes_constraints():
    # one class: a single leaf, nothing to bound (it raised IndexError on the missing
    # second class column)
    X = np.array([[0.0], [1.0], [2.0]])
    model = jitree.DecisionTreeClassifier(monotonic_cst=[-1]).fit(X, [1, 1, 1])
    assert model.tree_.node_count == 1
    np.testing.assert_array_equal(model.predict(X), [1, 1, 1])
    np.testing.assert_array_equal(model.predict_proba(X), np.ones((3, 1)))
