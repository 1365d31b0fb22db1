"""Multi-output trees and forests (y of shape (n_samples, n_outputs)): scikit-learn's
behaviour and trees, a brute-force twin of the split search, invariants, bad input."""

import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitree
from jitree.model.builder import Scaling

from naive import pinball_loss, walk_against, weighted_quantile

sklearn_tree = pytest.importorskip("sklearn.tree")


def _regression(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    Y = np.column_stack([X[:, 0] + 0.3 * rng.normal(size=n),
                         X[:, 1] ** 2 + 0.3 * rng.normal(size=n),
                         np.sin(X[:, 2]) * 5.0])
    return X, Y


def _classification(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    Y = np.column_stack([(X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int),
                         np.digitize(X[:, 1] + 0.3 * rng.normal(size=n), [-1.0, 0.0, 1.0]),
                         np.where(X[:, 2] > 0.5, 5, 9)])
    return X, Y


def _split_set(tree):
    """The (feature, threshold) tests of a tree, whatever the node numbering."""
    internal = tree.feature >= 0
    return sorted(zip(tree.feature[internal].tolist(),
                      np.round(tree.threshold[internal], 9).tolist(), strict=True))


def _same_partition(ours, theirs, X):
    """Whether two trees send the rows of X to the same groups of leaves (deep nodes of a few
    samples often hold several splits of one partition: the trees may then test other
    features, which scikit-learn draws in a random order)."""
    def groups(leaves):
        return sorted(tuple(np.flatnonzero(leaves == leaf)) for leaf in np.unique(leaves))

    return groups(ours.apply(X)) == groups(theirs.apply(X))


# -- the same trees as scikit-learn on tie-free data ---------------------------------------------

@pytest.mark.parametrize("criterion", ["squared_error", "poisson"])
@pytest.mark.parametrize("max_depth", [1, 3, 6])
def test_regressor_equals_sklearn(criterion, max_depth):
    X, Y = _regression()
    X = X.astype(np.float32)  # scikit-learn's thresholds are midpoints of float32 values
    if criterion == "poisson":
        Y = np.exp(Y / 4.0)
    ours = jitree.DecisionTreeRegressor(criterion=criterion, max_depth=max_depth).fit(X, Y)
    theirs = sklearn_tree.DecisionTreeRegressor(criterion=criterion, max_depth=max_depth,
                                                random_state=0).fit(X, Y)
    assert ours.n_outputs_ == theirs.n_outputs_ == 3
    assert ours.tree_.n_outputs == 3 and ours.tree_.value.shape == (ours.tree_.node_count, 3)
    assert _same_partition(ours, theirs, X)
    if max_depth <= 3:  # nodes of many samples: no ties between splits
        assert _split_set(ours.tree_) == _split_set(theirs.tree_)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours.score(X, Y), theirs.score(X, Y), rtol=1e-12)
    # impurities: the mean of the outputs' (scikit-learn's), node by node in split order
    np.testing.assert_allclose(sorted(ours.tree_.impurity), sorted(theirs.tree_.impurity),
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
@pytest.mark.parametrize("max_depth", [1, 2, 3])  # deeper, class counts tie between splits
def test_classifier_equals_sklearn(criterion, max_depth):
    X, Y = _classification()
    X = X.astype(np.float32)  # scikit-learn's thresholds are midpoints of float32 values
    ours = jitree.DecisionTreeClassifier(criterion=criterion, max_depth=max_depth).fit(X, Y)
    theirs = sklearn_tree.DecisionTreeClassifier(criterion=criterion, max_depth=max_depth,
                                                 random_state=0).fit(X, Y)
    assert ours.n_outputs_ == theirs.n_outputs_ == 3
    assert ours.n_classes_ == list(theirs.n_classes_) == [2, 4, 2]
    for a, b in zip(ours.classes_, theirs.classes_, strict=True):
        assert list(a) == list(b)
    assert _same_partition(ours, theirs, X)
    assert _split_set(ours.tree_) == _split_set(theirs.tree_)
    proba, reference = ours.predict_proba(X), theirs.predict_proba(X)
    assert isinstance(proba, list) and len(proba) == 3
    for p, q in zip(proba, reference, strict=True):
        np.testing.assert_allclose(p, q, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    assert ours.predict(X).shape == (X.shape[0], 3)
    log_proba = ours.predict_log_proba(X)
    with np.errstate(divide="ignore"):
        for p, q in zip(log_proba, proba, strict=True):
            np.testing.assert_array_equal(p, np.log(q))


def test_labels_of_each_output_keep_their_type():
    X, Y = _classification()
    labels = np.empty(Y.shape, dtype=object)
    labels[:, 0] = Y[:, 0]
    labels[:, 1] = np.array(["low", "mid", "high", "top"])[Y[:, 1]]
    labels[:, 2] = Y[:, 2] == 5
    model = jitree.DecisionTreeClassifier(max_depth=4).fit(X, labels)
    assert [list(c) for c in model.classes_] == [[0, 1], ["high", "low", "mid", "top"],
                                                 [False, True]]
    predicted = model.predict(X)
    assert predicted.dtype == object and predicted.shape == labels.shape
    assert model.score(X, labels) == pytest.approx(np.mean(np.all(predicted == labels, axis=1)))
    strings = jitree.DecisionTreeClassifier(max_depth=4).fit(X, labels[:, 1:2].repeat(2, 1))
    assert strings.predict(X).dtype == strings.classes_[0].dtype


def test_classifier_score_is_subset_accuracy():
    X, Y = _classification()
    model = jitree.DecisionTreeClassifier(max_depth=3).fit(X, Y)
    predicted = model.predict(X)
    expected = np.mean(np.all(predicted == Y, axis=1))
    assert model.score(X, Y) == pytest.approx(expected)
    weight = np.arange(1.0, X.shape[0] + 1.0)
    assert model.score(X, Y, weight) == pytest.approx(
        np.average(np.all(predicted == Y, axis=1), weights=weight))


def test_regressor_score_is_mean_r2():
    from sklearn.metrics import r2_score

    X, Y = _regression()
    model = jitree.DecisionTreeRegressor(max_depth=3).fit(X, Y)
    assert model.score(X, Y) == pytest.approx(r2_score(Y, model.predict(X)), rel=1e-12)
    weight = np.arange(1.0, X.shape[0] + 1.0)
    assert model.score(X, Y, weight) == pytest.approx(
        r2_score(Y, model.predict(X), sample_weight=weight), rel=1e-12)


# -- a brute-force twin of the root split ---------------------------------------------------------

def _best_root_split(X, Y, w, regression):
    """(feature, threshold) of the split of largest decrease of the mean impurity over the
    outputs (variance, or Gini index), by trying every split."""
    def impurity(rows):
        weight = w[rows]
        total = weight.sum()
        value = 0.0
        for j in range(Y.shape[1]):
            y = Y[rows, j]
            if regression:
                mean = np.sum(weight * y) / total
                value += np.sum(weight * (y - mean) ** 2) / total
            else:
                fractions = np.array([weight[y == c].sum() for c in np.unique(Y[:, j])]) / total
                value += 1.0 - np.sum(fractions ** 2)
        return value / Y.shape[1]

    everything = np.arange(X.shape[0])
    parent = impurity(everything)
    best = (-np.inf, None)
    for f in range(X.shape[1]):
        values = np.unique(X[:, f])
        for low, high in zip(values[:-1], values[1:], strict=True):
            left = everything[X[:, f] <= low]
            right = everything[X[:, f] > low]
            gain = parent * w.sum() - (w[left].sum() * impurity(left)
                                       + w[right].sum() * impurity(right))
            if gain > best[0] + 1e-9:
                best = (gain, (f, (low + high) / 2.0))
    return best


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans(), st.booleans())
def test_root_split_is_the_brute_force_best(seed, regression, weighted):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 40))
    X = rng.normal(size=(n, 3))
    if regression:
        Y = rng.normal(size=(n, 2))
    else:
        Y = np.column_stack([rng.integers(0, 2, n), rng.integers(0, 3, n)])
    w = rng.integers(1, 4, n).astype(np.float64) if weighted else np.ones(n)
    gain, split = _best_root_split(X, Y, w, regression)
    cls = jitree.DecisionTreeRegressor if regression else jitree.DecisionTreeClassifier
    model = cls(max_depth=1).fit(X, Y, sample_weight=w)
    tree = model.tree_
    if split is None or gain <= 1e-9:
        return
    assert tree.node_count == 3
    ours = (int(tree.feature[0]), float(tree.threshold[0]))
    # the same decrease (another split may tie with it)
    left = X[:, ours[0]] <= ours[1]
    decrease = tree.weighted_n_node_samples[0] * tree.impurity[0] - (
        tree.weighted_n_node_samples[1] * tree.impurity[1]
        + tree.weighted_n_node_samples[2] * tree.impurity[2])
    assert decrease == pytest.approx(gain, rel=1e-7, abs=1e-9)
    assert tree.n_node_samples[1] == left.sum() or tree.n_node_samples[2] == left.sum()


def _squared_error_root(X, Y, w):
    """(score, (feature, n_left)) of the first best root split under multi-output squared
    error of the kernels' targets ``Y`` and weights ``w``, every score computed as the scan
    computes it (the same operations in the same
    order, so the same bits): sums of w y added in each feature's stable sorted order, then
    the sum over outputs of S_l**2 / W_l + S_r**2 / W_r; the first strictly larger score
    wins, features in index order."""
    n, n_outputs = Y.shape
    totals = []
    for j in range(n_outputs):
        total = 0.0
        for i in range(n):
            total += float(w[i]) * float(Y[i, j])
        totals.append(total)
    weight = float(w.sum())
    best = (-np.inf, None)
    for f in range(X.shape[1]):
        order = np.argsort(X[:, f], kind="stable")
        values = X[order, f]
        left = [0.0] * n_outputs
        weight_left = 0.0
        for p in range(n - 1):
            i = order[p]
            for j in range(n_outputs):
                left[j] += float(w[i]) * float(Y[i, j])
            weight_left += float(w[i])
            if values[p + 1] <= values[p]:
                continue
            weight_right = weight - weight_left
            score = 0.0
            for j in range(n_outputs):
                right = totals[j] - left[j]
                score += left[j] * left[j] / weight_left + right * right / weight_right
            if score > best[0]:
                best = (score, (f, p + 1))
    return best


def _tie_data(rng, n, n_outputs, weighted, kind):
    """X, Y, w whose root candidates tie or nearly tie. ``ties``: rows and their mirror
    images (x -> 3 - x, the same y and weight) give pairs of candidates of equal score on
    every feature, and a copied column ties two features (integer features, outputs and
    weights). ``near``: the rows of a sequence followed by the same rows in reverse order,
    then nudged by about 1e-15, give pairs of candidates whose scores differ in their last
    bits (the estimate's slack must cover them). ``continuous``: no ties."""
    half = n // 2
    if kind == "ties":
        X = rng.integers(0, 4, size=(half, 3)).astype(np.float64)
        X[:, 2] = X[:, 0]
        X = np.vstack([X, 3.0 - X])
        Y = rng.integers(-2, 3, size=(half, n_outputs)).astype(np.float64)
        Y[:, -1] = Y[:, 0]
        Y = np.vstack([Y, Y])
        w = rng.integers(1, 3, half).astype(np.float64) if weighted else np.ones(half)
        return X, Y, np.concatenate([w, w])
    if kind == "near":
        order = np.arange(2 * half, dtype=np.float64)
        X = np.column_stack([order, order[::-1], rng.normal(size=2 * half)])
        Y = rng.normal(size=(half, n_outputs))
        Y = np.vstack([Y, Y[::-1]]) + 1e-15 * rng.normal(size=(2 * half, n_outputs))
        w = rng.integers(1, 3, half).astype(np.float64) if weighted else np.ones(half)
        return X, Y, np.concatenate([w, w[::-1]])
    X = rng.normal(size=(n, 3))
    Y = rng.normal(size=(n, n_outputs)) * rng.uniform(0.01, 100.0, n_outputs)
    return X, Y, rng.uniform(0.1, 3.0, n) if weighted else np.ones(n)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 9),
       st.sampled_from(["ties", "near", "continuous"]), st.booleans())
def test_squared_error_root_is_the_exact_first_best(seed, n_outputs, kind, weighted):
    """The multi-output squared-error scan scores candidates by an estimate and computes the
    exact score of those that may win only: its root split is the one of the exact scores,
    to the bit, ties and near ties included (see :func:`_tie_data`)."""
    rng = np.random.default_rng(seed)
    X, Y, w = _tie_data(rng, int(rng.integers(8, 70)), n_outputs, weighted, kind)
    # the kernels' targets and weights: each output centred, all on one power-of-two scale
    scaling = Scaling.of(Y, w, True)
    score, split = _squared_error_root(X, scaling.targets(Y), scaling.weights(w))
    tree = jitree.DecisionTreeRegressor(max_depth=1).fit(X, Y, sample_weight=w).tree_
    if split is None:
        assert tree.node_count == 1
        return
    if tree.node_count == 1:  # no split improves on the node (the pure node's rule)
        assert np.all(Y == Y[0])
        return
    assert (int(tree.feature[0]), int(tree.n_node_samples[tree.children_left[0]])) == split


# -- the order criteria over several outputs ------------------------------------------------------

def _loss_sum(Y, w, alpha):
    """The outputs' mean pinball losses (naive), times 2 at alpha 0.5 (absolute error),
    summed: a node's impurity times the outputs' number."""
    factor = 2.0 if alpha == 0.5 else 1.0
    return factor * sum(pinball_loss(Y[:, j], w, alpha) for j in range(Y.shape[1]))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("params", [dict(max_depth=4), dict(min_samples_leaf=10)])
@pytest.mark.parametrize("weighted", [False, True])
def test_absolute_error_equals_sklearn(seed, params, weighted):
    """scikit-learn's multi-output absolute error: the same splits (ties aside: see
    :func:`naive.walk_against`), every node's medians and its impurity (the mean of the
    outputs' mean absolute deviations)."""
    X, Y = _regression(300, seed)
    X = X.astype(np.float32)
    w = np.random.default_rng(seed).uniform(0.5, 2.0, Y.shape[0]) if weighted else None
    ours = jitree.DecisionTreeRegressor(criterion="absolute_error", **params).fit(X, Y, w)
    theirs = sklearn_tree.DecisionTreeRegressor(criterion="absolute_error", random_state=0,
                                                **params).fit(X, Y, w)

    def same_node(a, b):
        assert ours.tree_.impurity[a] == pytest.approx(theirs.tree_.impurity[b], rel=1e-9)
        np.testing.assert_array_equal(ours.tree_.value[a], theirs.tree_.value[b, :, 0])
        return True

    ties, same = walk_against(ours.tree_, theirs.tree_, X, Y,
                              np.ones(Y.shape[0]) if w is None else w, "absolute_error", 0,
                              same_node)
    assert same >= 0.5 * (ours.tree_.node_count - ours.tree_.n_leaves)
    if ties == 0:
        np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 4), st.sampled_from([0.5, 0.2, 0.9]),
       st.sampled_from(["none", "integer", "extreme"]), st.floats(0.0, 0.3))
def test_order_criteria_root_is_the_brute_force_best(seed, n_outputs, alpha, weights, missing):
    """The root's split: the largest decrease of the outputs' summed pinball losses over
    every threshold of every feature, missing values on either side or alone (brute force);
    the root's value each output's weighted quantile. Unit and integer weights take the
    scans' walk, weights spanning more than its range the Fenwick tree."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 36))
    X = rng.normal(size=(n, 2))
    X[rng.random((n, 2)) < missing] = np.nan
    Y = np.round(rng.normal(size=(n, n_outputs)) * rng.uniform(0.5, 20.0, n_outputs), 1)
    w = {"none": np.ones(n), "integer": rng.integers(1, 5, n).astype(float),
         "extreme": rng.choice([1e-3, 1.0, 50.0], n)}[weights]
    criterion = "absolute_error" if alpha == 0.5 else "quantile"
    model = jitree.DecisionTreeRegressor(criterion=criterion, quantile=alpha,
                                         max_depth=1).fit(X, Y, w)
    tree = model.tree_
    for j in range(n_outputs):
        assert tree.value[0, j] == weighted_quantile(Y[:, j], w, alpha)
    assert tree.impurity[0] == pytest.approx(_loss_sum(Y, w, alpha) / n_outputs, rel=1e-9,
                                             abs=1e-12)

    def loss(mask):  # the summed losses of the samples of mask
        return _loss_sum(Y[mask], w[mask], alpha) * w[mask].sum()

    best = -np.inf
    for f in range(2):
        absent = np.isnan(X[:, f])
        values = np.unique(X[~absent, f])
        sides = [X[:, f] <= (low + high) / 2
                 for low, high in zip(values[:-1], values[1:], strict=True)]
        sides += [side | absent for side in sides]
        if absent.any() and (~absent).any():
            sides.append(~absent)
        for left in sides:
            if w[left].sum() > 0 and w[~left].sum() > 0:
                best = max(best, loss(np.ones(n, dtype=bool)) - loss(left) - loss(~left))
    if tree.node_count == 1:
        assert best <= 1e-9 * max(1.0, loss(np.ones(n, dtype=bool)))
        return
    left = model.apply(X) == tree.children_left[0]
    ours = loss(np.ones(n, dtype=bool)) - loss(left) - loss(~left)
    assert ours == pytest.approx(best, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("criterion,alpha", [("absolute_error", 0.5), ("quantile", 0.8)])
@pytest.mark.parametrize("splitter", ["best", "random"])
def test_every_node_holds_each_outputs_quantile(criterion, alpha, splitter):
    """Every node (not only leaves; depth-wise and best-first, missing values, weights)
    holds each output's weighted quantile of its samples and the mean over outputs of
    their losses as its impurity."""
    X, Y = _regression(300, 4)
    rng = np.random.default_rng(5)
    X[rng.random(X.shape) < 0.1] = np.nan
    w = rng.integers(1, 4, Y.shape[0]).astype(float)
    for params in (dict(max_depth=5), dict(max_leaf_nodes=15, min_samples_leaf=3)):
        model = jitree.DecisionTreeRegressor(criterion=criterion, quantile=alpha,
                                             splitter=splitter, random_state=0,
                                             **params).fit(X, Y, w)
        tree = model.tree_
        members = model.decision_path(X).toarray().astype(bool).T
        assert tree.node_count > 5
        for node in range(tree.node_count):
            rows = members[node]
            for j in range(Y.shape[1]):
                assert tree.value[node, j] == weighted_quantile(Y[rows, j], w[rows], alpha)
            assert tree.impurity[node] == pytest.approx(
                _loss_sum(Y[rows], w[rows], alpha) / Y.shape[1],
                rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("criterion", ["absolute_error", "quantile"])
def test_copies_of_one_output_grow_its_order_tree(criterion):
    """Copies of one output grow the single-output tree of an order criterion."""
    X, Y = _regression()
    options = dict(criterion=criterion, quantile=0.3 if criterion == "quantile" else None,
                   max_depth=6)
    single = jitree.DecisionTreeRegressor(**options).fit(X, Y[:, 1])
    multi = jitree.DecisionTreeRegressor(**options).fit(X, np.column_stack([Y[:, 1]] * 2))
    np.testing.assert_array_equal(single.tree_.feature, multi.tree_.feature)
    np.testing.assert_array_equal(single.tree_.threshold, multi.tree_.threshold)
    np.testing.assert_array_equal(multi.tree_.value, np.column_stack([single.tree_.value] * 2))
    np.testing.assert_allclose(multi.tree_.impurity, single.tree_.impurity, rtol=1e-12)


@pytest.mark.parametrize("cls", [jitree.RandomForestRegressor, jitree.ExtraTreesRegressor])
def test_forest_with_absolute_error(cls):
    """A forest's trees of several outputs under absolute error: each tree's leaves hold
    its bag's medians, and the forest predicts their mean, output by output."""
    X, Y = _regression(300, 6)
    forest = cls(n_estimators=5, criterion="absolute_error", max_depth=6,
                 random_state=0).fit(X, Y)
    assert forest.predict(X).shape == Y.shape
    np.testing.assert_allclose(forest.predict(X),
                               np.mean([tree.predict(X) for tree in forest], axis=0),
                               rtol=1e-12)
    assert forest.score(X, Y) > 0.5


# -- invariants -----------------------------------------------------------------------------------

def test_copies_of_one_output_grow_its_tree():
    """Several copies of one output grow the single-output tree (the criterion is their
    mean)."""
    X, Y = _regression()
    single = jitree.DecisionTreeRegressor(max_depth=5).fit(X, Y[:, 0])
    multi = jitree.DecisionTreeRegressor(max_depth=5).fit(X, np.column_stack([Y[:, 0]] * 3))
    np.testing.assert_array_equal(single.tree_.feature, multi.tree_.feature)
    np.testing.assert_array_equal(single.tree_.threshold, multi.tree_.threshold)
    np.testing.assert_allclose(multi.predict(X), np.column_stack([single.predict(X)] * 3),
                               rtol=1e-12)
    Xc, Yc = _classification()
    labels = Yc[:, 1].astype(int)
    # entropy: the single-output scan scores a split as each output's term does (gini's
    # single-output scan keeps running sums, rounded otherwise, which can flip a near tie)
    single = jitree.DecisionTreeClassifier(criterion="entropy", max_depth=5).fit(Xc, labels)
    multi = jitree.DecisionTreeClassifier(criterion="entropy", max_depth=5).fit(
        Xc, np.column_stack([labels] * 2))
    np.testing.assert_array_equal(single.tree_.feature, multi.tree_.feature)
    np.testing.assert_array_equal(single.tree_.threshold, multi.tree_.threshold)
    np.testing.assert_allclose(multi.predict_proba(Xc)[1], single.predict_proba(Xc))


def test_outputs_of_different_scales():
    """Each output is centred on its own mean: an (exact) offset of one output changes no
    split."""
    X, Y = _regression()
    Y = np.round(Y * 1024.0) / 1024.0  # offsets below are then exact
    offset = np.array([2.0**20, -3.0, 0.0])
    shifted = Y + offset
    a = jitree.DecisionTreeRegressor(max_depth=6, min_samples_leaf=5).fit(X, Y)
    b = jitree.DecisionTreeRegressor(max_depth=6, min_samples_leaf=5).fit(X, shifted)
    assert _same_partition(a, b, X)
    np.testing.assert_allclose(b.predict(X) - offset, a.predict(X), atol=1e-6)
    np.testing.assert_allclose(a.tree_.impurity, b.tree_.impurity, rtol=1e-6)


@pytest.mark.parametrize("options", [
    dict(splitter="random", random_state=3),
    dict(max_leaf_nodes=12),
    dict(max_features=2, random_state=1),
    dict(min_samples_leaf=7, min_impurity_decrease=1e-3),
    dict(ccp_alpha=0.01),
])
@pytest.mark.parametrize("task", ["regression", "classification"])
def test_growth_options(options, task):
    X, Y = _regression() if task == "regression" else _classification()
    cls = jitree.DecisionTreeRegressor if task == "regression" else jitree.DecisionTreeClassifier
    model = cls(**options).fit(X, Y)
    leaves = model.apply(X)
    assert model.tree_.children_left[leaves].max() == -1
    predicted = model.predict(X)
    assert predicted.shape == Y.shape
    # every leaf predicts its samples' mean (regression) or majority (classification)
    for leaf in np.unique(leaves)[:10]:
        rows = leaves == leaf
        if task == "regression":
            np.testing.assert_allclose(predicted[rows][0], Y[rows].mean(axis=0), rtol=1e-9,
                                       atol=1e-9)
        else:
            proba = model.predict_proba(X[rows][:1])
            for j in range(Y.shape[1]):
                labels, counts = np.unique(Y[rows, j], return_counts=True)
                fractions = dict(zip(labels.tolist(), (counts / counts.sum()).tolist(),
                                     strict=True))
                for k, label in enumerate(model.classes_[j]):
                    assert proba[j][0, k] == pytest.approx(fractions.get(label, 0.0))


def test_missing_values_and_categories():
    rng = np.random.default_rng(5)
    n = 600
    X = rng.normal(size=(n, 3))
    X[:, 2] = rng.integers(0, 12, n)
    Y = np.column_stack([np.where(np.isin(X[:, 2], [1, 4, 7]), 2.0, -1.0) + X[:, 0],
                         (X[:, 2] % 3) + 0.1 * rng.normal(size=n)])
    X[rng.random(n) < 0.1, 0] = np.nan
    for mode in ("subset", "one_vs_rest", "multiway"):
        model = jitree.DecisionTreeRegressor(categorical_features=[2], categorical_split=mode,
                                             max_depth=6).fit(X, Y)
        # one-vs-rest needs a split per category: a depth-6 tree fits less of y
        assert model.score(X, Y) > (0.5 if mode == "one_vs_rest" else 0.8)
        leaves = model.apply(X)
        for leaf in np.unique(leaves):
            np.testing.assert_allclose(model.predict(X[leaves == leaf][:1])[0],
                                       Y[leaves == leaf].mean(axis=0), atol=1e-9)
    classes = np.column_stack([(Y[:, 0] > 0).astype(int), np.round(Y[:, 1]).astype(int)])
    model = jitree.DecisionTreeClassifier(categorical_features=[2], max_depth=6).fit(X, classes)
    assert model.score(X, classes) > 0.8


def test_user_criterion_equals_builtin():
    import numba

    @numba.njit
    def mean_gini(stats, weight):  # two outputs of two classes each: blocks of 2
        total = 0.0
        for j in range(2):
            square = 0.0
            for c in range(2):
                p = stats[2 * j + c] / weight
                square += p * p
            total += 1.0 - square
        return total / 2.0

    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 4))
    Y = np.column_stack([(X[:, 0] + rng.normal(size=300) > 0), (X[:, 1] > 0.3)]).astype(int)
    ours = jitree.DecisionTreeClassifier(criterion=jitree.Criterion(impurity=mean_gini),
                                         max_depth=4).fit(X, Y)
    builtin = jitree.DecisionTreeClassifier(max_depth=4).fit(X, Y)
    np.testing.assert_array_equal(ours.tree_.feature, builtin.tree_.feature)
    np.testing.assert_array_equal(ours.tree_.threshold, builtin.tree_.threshold)
    np.testing.assert_allclose(ours.tree_.impurity, builtin.tree_.impurity, atol=1e-12)


def test_class_weight_multiplies_the_outputs_weights():
    X, Y = _classification()
    Y = Y[:, :2].astype(int)
    weights = [{0: 1.0, 1: 3.0}, {0: 2.0, 1: 1.0, 2: 1.0, 3: 0.5}]
    model = jitree.DecisionTreeClassifier(max_depth=4, class_weight=weights).fit(X, Y)
    factor = (np.array([1.0, 3.0])[Y[:, 0]] * np.array([2.0, 1.0, 1.0, 0.5])[Y[:, 1]])
    weighted = jitree.DecisionTreeClassifier(max_depth=4).fit(X, Y, sample_weight=factor)
    np.testing.assert_array_equal(model.tree_.threshold, weighted.tree_.threshold)
    X = X.astype(np.float32)
    theirs = sklearn_tree.DecisionTreeClassifier(max_depth=4, class_weight="balanced",
                                                 random_state=0).fit(X, Y)
    ours = jitree.DecisionTreeClassifier(max_depth=4, class_weight="balanced").fit(X, Y)
    assert _same_partition(ours, theirs, X)
    for p, q in zip(ours.predict_proba(X), theirs.predict_proba(X), strict=True):
        np.testing.assert_allclose(p, q, atol=1e-12)


def test_pickle_and_column_vector():
    X, Y = _classification()
    model = jitree.DecisionTreeClassifier(max_depth=4).fit(X, Y)
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    assert again.tree_.n_outputs == 3
    # one column stays a single-output fit: without a warning for a tree, with one at the
    # user's call for a forest, as scikit-learn's trees and forests do
    column = _regression()[1][:, :1]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        single = jitree.DecisionTreeRegressor(max_depth=2).fit(X, column)
        labels = jitree.DecisionTreeClassifier(max_depth=2).fit(X, Y[:, :1])
    assert single.n_outputs_ == 1 and single.predict(X).ndim == 1
    assert labels.n_outputs_ == 1 and labels.predict(X).ndim == 1 and labels.classes_.ndim == 1
    np.testing.assert_array_equal(
        single.predict(X), jitree.DecisionTreeRegressor(max_depth=2).fit(X, column[:, 0])
        .predict(X))
    with warnings.catch_warnings():  # so does the pruning's y, as the fit's
        warnings.simplefilter("error")
        pruned = single.prune_reduced_error(X, column)
    flat = jitree.DecisionTreeRegressor(max_depth=2).fit(X, column).prune_reduced_error(
        X, column[:, 0])
    np.testing.assert_array_equal(pruned.tree_.children_left, flat.tree_.children_left)
    for forest, target in (
            (jitree.RandomForestRegressor(n_estimators=2, max_depth=2, random_state=0), column),
            (jitree.ExtraTreesClassifier(n_estimators=2, max_depth=2, random_state=0),
             Y[:, :1])):
        with pytest.warns(Warning, match="column-vector") as caught:
            forest.fit(X, target)
        assert [w.filename for w in caught] == [__file__]
        assert forest.predict(X).ndim == 1


def test_chunked_prediction():
    X, Y = _classification()
    model = jitree.DecisionTreeClassifier(max_depth=4).fit(X, Y)
    chunks = iter([X[:150], X[150:]])
    proba = model.predict_proba(chunks)
    for p, q in zip(proba, model.predict_proba(X), strict=True):
        np.testing.assert_array_equal(p, q)
    np.testing.assert_array_equal(model.predict(iter([X[:10], X[10:]])), model.predict(X))


# -- forests --------------------------------------------------------------------------------------

@pytest.mark.parametrize("cls", [jitree.RandomForestClassifier, jitree.ExtraTreesClassifier])
def test_forest_classifier(cls):
    X, Y = _classification(600)
    forest = cls(n_estimators=15, random_state=0, oob_score=True, bootstrap=True,
                 max_depth=8).fit(X, Y)
    assert forest.n_outputs_ == 3 and forest.n_classes_ == [2, 4, 2]
    proba = forest.predict_proba(X)
    mean = [np.mean([tree.predict_proba(X)[j] for tree in forest], axis=0) for j in range(3)]
    for p, q in zip(proba, mean, strict=True):
        np.testing.assert_allclose(p, q, atol=1e-12)
    predicted = forest.predict(X)
    for j in range(3):
        np.testing.assert_array_equal(predicted[:, j],
                                      forest.classes_[j].take(np.argmax(proba[j], axis=1)))
    assert forest.oob_decision_function_.shape == (600, 4, 3)
    # the out-of-bag score is the score's measure (every output right) on the rows' out-of-bag
    # votes, as scikit-learn computes it
    has = ~np.isnan(forest.oob_decision_function_).any(axis=(1, 2))
    votes = np.column_stack([forest.classes_[j].take(np.argmax(
        forest.oob_decision_function_[has, :n, j], axis=1))
        for j, n in enumerate(forest.n_classes_)])
    assert forest.oob_score_ == pytest.approx(np.mean(np.all(votes == Y[has], axis=1)))
    assert 0.3 < forest.oob_score_ <= 1.0
    assert forest.score(X, Y) == pytest.approx(np.mean(np.all(predicted == Y, axis=1)))


@pytest.mark.parametrize("cls", [jitree.RandomForestRegressor, jitree.ExtraTreesRegressor])
def test_forest_regressor(cls):
    from sklearn.ensemble import RandomForestRegressor

    X, Y = _regression(600)
    forest = cls(n_estimators=20, random_state=0, oob_score=True, bootstrap=True).fit(X, Y)
    predicted = forest.predict(X)
    assert predicted.shape == Y.shape
    np.testing.assert_allclose(predicted, np.mean([t.predict(X) for t in forest], axis=0),
                               atol=1e-12)
    assert forest.oob_prediction_.shape == Y.shape
    reference = RandomForestRegressor(n_estimators=20, random_state=0, oob_score=True).fit(X, Y)
    assert abs(forest.oob_score_ - reference.oob_score_) < 0.1


@pytest.mark.filterwarnings("ignore:class_weight='balanced_subsample' with warm_start")
def test_forest_class_weight_and_warm_start():
    X, Y = _classification(500)
    Y = Y[:, :2].astype(int)
    forest = jitree.RandomForestClassifier(n_estimators=5, random_state=0, warm_start=True,
                                           class_weight="balanced_subsample").fit(X, Y)
    forest.set_params(n_estimators=8).fit(X, Y)
    assert len(forest) == 8
    with pytest.raises(ValueError, match="outputs"):
        forest.set_params(n_estimators=10).fit(X, Y[:, 0])
    with pytest.raises(ValueError, match="one dict per output"):
        jitree.RandomForestClassifier(class_weight=[{0: 1.0}]).fit(X, Y)


# -- what a multi-output fit refuses --------------------------------------------------------------

@pytest.mark.parametrize("cls, options, match", [
    (jitree.DecisionTreeClassifier, dict(criterion="gain_ratio"), "scores one output"),
    (jitree.DecisionTreeClassifier, dict(criterion="twoing"), "scores one output"),
    (jitree.DecisionTreeRegressor, dict(monotonic_cst=[1, 0, 0, 0, 0]), "Monotonicity"),
    (jitree.DecisionTreeRegressor, dict(honest=True), "single-output"),
    (jitree.DecisionTreeRegressor, dict(store_leaf_samples=True), "single-output"),
    (jitree.RandomForestRegressor, dict(store_leaf_samples=True), "single-output"),
    (jitree.DecisionTreeClassifier, dict(class_weight={0: 1.0}), "list of"),
])
def test_refused(cls, options, match):
    X, Y = _regression()
    if cls in (jitree.DecisionTreeClassifier,):
        Y = (Y > 0).astype(int)
    with pytest.raises(ValueError, match=match):
        cls(**options).fit(X, Y)


def test_bad_targets():
    X, Y = _regression()
    with pytest.raises(ValueError, match="NaN"):
        jitree.DecisionTreeRegressor().fit(X, np.where(np.arange(400)[:, None] == 3, np.nan, Y))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        jitree.DecisionTreeRegressor().fit(X, Y[:-1])
    with pytest.raises(ValueError, match="no column"):
        jitree.DecisionTreeRegressor().fit(X, np.zeros((400, 0)))
    with pytest.raises(ValueError, match="Poisson|poisson|negative"):
        jitree.DecisionTreeRegressor(criterion="poisson").fit(X, Y)
    model = jitree.DecisionTreeRegressor(max_depth=2).fit(X, Y)
    with pytest.raises(ValueError, match="single-output"):
        model.prune_reduced_error(X, Y[:, 0])
    with pytest.raises(ValueError, match="shape"):
        model.score(X, Y[:, :2])


# -- persistence ----------------------------------------------------------------------------------

@pytest.mark.parametrize("task", ["regression", "classification"])
def test_save_and_load(task, tmp_path):
    X, Y = _regression() if task == "regression" else _classification()
    cls = jitree.DecisionTreeRegressor if task == "regression" else jitree.DecisionTreeClassifier
    model = cls(max_depth=5).fit(X, Y)
    jitree.save(model, tmp_path / "model.jitree")
    loaded = jitree.load(tmp_path / "model.jitree")
    assert loaded.n_outputs_ == 3 and loaded.tree_.n_outputs == 3
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    if task == "classification":
        assert loaded.n_classes_ == model.n_classes_
        for a, b in zip(loaded.classes_, model.classes_, strict=True):
            assert a.dtype == b.dtype and list(a) == list(b)
        for p, q in zip(loaded.predict_proba(X), model.predict_proba(X), strict=True):
            np.testing.assert_array_equal(p, q)


def test_forest_pickle():
    X, Y = _classification()
    forest = jitree.RandomForestClassifier(n_estimators=4, random_state=0).fit(X, Y)
    again = pickle.loads(pickle.dumps(forest))
    np.testing.assert_array_equal(again.predict(X), forest.predict(X))


# -- conversion from scikit-learn -----------------------------------------------------------------

@pytest.mark.parametrize("task", ["regression", "classification"])
def test_from_sklearn(task):
    from sklearn import ensemble

    X, Y = _regression() if task == "regression" else _classification()
    if task == "regression":
        estimators = [sklearn_tree.DecisionTreeRegressor(max_depth=6, random_state=0),
                      ensemble.RandomForestRegressor(n_estimators=5, random_state=0)]
    else:
        estimators = [sklearn_tree.DecisionTreeClassifier(max_depth=6, random_state=0),
                      ensemble.ExtraTreesClassifier(n_estimators=5, random_state=0)]
    for estimator in estimators:
        estimator.fit(X, Y)
        model = jitree.from_sklearn(estimator)
        assert model.n_outputs_ == 3
        np.testing.assert_array_equal(model.predict(X), estimator.predict(X))
        if task == "classification":
            for p, q in zip(model.predict_proba(X), estimator.predict_proba(X), strict=True):
                np.testing.assert_allclose(p, q, atol=1e-12)


# -- batch and Dask prediction --------------------------------------------------------------------

def _mixed_label_classifier():
    """A classifier whose outputs' labels differ in type (ints, strings) and in count."""
    X, Y = _classification()
    labels = np.array(["no", "maybe", "yes", "sure"])[Y[:, 1]]
    targets = np.empty((Y.shape[0], 3), dtype=object)
    targets[:, 0], targets[:, 1], targets[:, 2] = Y[:, 0], labels, Y[:, 2]
    return X, jitree.DecisionTreeClassifier(max_depth=6).fit(X, targets)


def _batch_models():
    X, Y = _classification()
    classifier = jitree.RandomForestClassifier(n_estimators=3, max_depth=6,
                                               random_state=0).fit(X, Y)
    Xr, Yr = _regression()
    regressor = jitree.DecisionTreeRegressor(max_depth=6).fit(Xr, Yr)
    return [(X, classifier), (Xr, regressor)]


@pytest.mark.parametrize("chunk_rows", [7, 400])
def test_batch_predict_file(tmp_path, chunk_rows):
    from jitree.batch import predict_file

    for X, model in _batch_models():
        np.save(tmp_path / "X.npy", X)
        expected = model.predict(X)
        assert expected.shape == (X.shape[0], 3)
        got = predict_file(model, tmp_path / "X.npy", chunk_rows=chunk_rows)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
        out = predict_file(model, tmp_path / "X.npy", tmp_path / "p.npy", chunk_rows=chunk_rows)
        np.testing.assert_array_equal(np.load(out), expected)
    X, classifier = _batch_models()[0]
    proba = classifier.predict_proba(X)
    got = predict_file(classifier, tmp_path / "X.npy", chunk_rows=chunk_rows,
                       method="predict_proba")
    assert isinstance(got, list) and len(got) == len(proba)
    for p, q in zip(got, proba, strict=True):
        np.testing.assert_array_equal(p, q)
    out = predict_file(classifier, tmp_path / "X.npy", tmp_path / "p.npy",
                       chunk_rows=chunk_rows, method="predict_proba")
    np.testing.assert_array_equal(np.load(out), np.hstack(proba))


def test_batch_csv_header_and_mixed_labels(tmp_path):
    from jitree.batch import predict_file

    X, model = _mixed_label_classifier()
    np.save(tmp_path / "X.npy", X)
    expected = model.predict(X)
    assert expected.dtype == object and expected[0, 1] in ("no", "maybe", "yes", "sure")
    np.testing.assert_array_equal(predict_file(model, tmp_path / "X.npy", chunk_rows=50),
                                  expected)
    with pytest.raises(ValueError, match="object"):  # .npy cannot hold mixed labels
        predict_file(model, tmp_path / "X.npy", tmp_path / "p.npy")
    out = predict_file(model, tmp_path / "X.npy", tmp_path / "p.csv", chunk_rows=50)
    lines = Path(out).read_text().splitlines()
    assert lines[0] == "prediction_0,prediction_1,prediction_2"
    assert lines[1:] == [",".join(map(str, row)) for row in expected.tolist()]
    out = predict_file(model, tmp_path / "X.npy", tmp_path / "q.csv", method="predict_proba")
    header = Path(out).read_text().splitlines()[0].split(",")
    assert header == [f"proba_{j}_{c}" for j, classes in enumerate(model.classes_)
                      for c in classes]


def test_dask_array_predictions():
    da = pytest.importorskip("dask.array")
    import dask

    import jitree.dask

    X, model = _batch_models()[0]
    blocks = da.from_array(X, chunks=(150, 5))
    labels = jitree.dask.predict(model, blocks)
    assert labels.shape == (X.shape[0], 3)
    np.testing.assert_array_equal(labels.compute(), model.predict(X))
    proba = jitree.dask.predict_proba(model, blocks)
    expected = model.predict_proba(X)
    assert [p.shape for p in proba] == [q.shape for q in expected]
    for p, q in zip(dask.compute(*proba), expected, strict=True):
        np.testing.assert_array_equal(p, q)
    Xr, regressor = _batch_models()[1]
    values = jitree.dask.predict(regressor, da.from_array(Xr, chunks=(150, 5)))
    np.testing.assert_array_equal(values.compute(), regressor.predict(Xr))


def test_dask_dataframe_predictions():
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    import jitree.dask

    X, model = _mixed_label_classifier()
    frame = dd.from_pandas(pd.DataFrame(X), chunksize=150)
    labels = jitree.dask.predict(model, frame).compute()
    expected = model.predict(X)
    assert list(labels.columns) == [0, 1, 2]
    assert [labels[j].tolist() for j in range(3)] == [expected[:, j].tolist() for j in range(3)]
    proba = jitree.dask.predict_proba(model, frame)
    for got, q, classes in zip(proba, model.predict_proba(X), model.classes_, strict=True):
        got = got.compute()
        assert list(got.columns) == classes.tolist()
        np.testing.assert_array_equal(got.to_numpy(), q)
