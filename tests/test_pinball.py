"""Order-statistic regression criteria: absolute_error (median leaves) and quantile
(pinball loss), against brute force and scikit-learn."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitree
from jitree.kernels import pinball

from naive import mean_absolute_deviation, pinball_loss, walk_against, weighted_quantile


def _data(seed, n, d=4, missing=0.0):
    """Tie-free targets (a noisy function of the first feature)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = X[:, 0] + np.sin(2 * X[:, 1]) + rng.normal(size=n)
    if missing:
        X[rng.random((n, d)) < missing] = np.nan
    return X, y


def _loss_of(criterion, alpha):
    """The node impurity of ``criterion`` (naive)."""
    if criterion == "absolute_error":
        return mean_absolute_deviation
    return lambda y, w: pinball_loss(y, w, alpha)


def _walk_same(ours, theirs, X, y, w):
    """:func:`naive.walk_against` under absolute error, with the nodes' impurities and
    medians equal."""
    def same_node(a, b):
        assert ours.impurity[a] == pytest.approx(theirs.impurity[b], rel=1e-9, abs=1e-12)
        assert ours.value[a, 0] == theirs.value[b, 0, 0]
        return True

    return walk_against(ours, theirs, X, y, w, "absolute_error", 0, same_node)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("params", [dict(max_depth=4), dict(min_samples_leaf=8),
                                    dict(max_depth=6, min_samples_split=30)])
@pytest.mark.parametrize("weighted", [False, True])
def test_absolute_error_tree_identical_to_sklearn(seed, params, weighted):
    sklearn_tree = pytest.importorskip("sklearn.tree")
    X, y = _data(seed, 600)
    X = X.astype(np.float32)  # the values scikit-learn splits
    w = np.random.default_rng(seed + 10).uniform(0.5, 2.0, y.shape[0]) if weighted else None
    ours = jitree.DecisionTreeRegressor(criterion="absolute_error", **params).fit(X, y, w)
    theirs = sklearn_tree.DecisionTreeRegressor(criterion="absolute_error", random_state=0,
                                                **params).fit(X, y, w)
    ties, same = _walk_same(ours.tree_, theirs.tree_, X, y,
                            np.ones_like(y) if w is None else w)
    # with unit weights, absolute error ties exactly more often than the variance does (a
    # sum of differences of the same targets), and a tie leaves its subtrees uncompared
    assert same >= 0.5 * (ours.tree_.node_count - ours.tree_.n_leaves)
    if ties == 0:
        assert ours.tree_.node_count == theirs.tree_.node_count
        np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


def _brute_force(X, y, w, alpha, factor, min_samples_leaf=1):
    """Best impurity decrease over every threshold of every feature, with the missing
    values (NaN) sent left or right, and the split of the non-missing from the missing
    samples (as the trees consider them)."""
    W = w.sum()

    def loss(mask):
        return factor * pinball_loss(y[mask], w[mask], alpha) * w[mask].sum() / W

    def allowed(mask):
        return (mask.sum() >= min_samples_leaf and (~mask).sum() >= min_samples_leaf
                and w[mask].sum() > 0 and w[~mask].sum() > 0)

    parent = factor * pinball_loss(y, w, alpha)
    best = -np.inf
    for f in range(X.shape[1]):
        missing = np.isnan(X[:, f])
        values = np.unique(X[~missing, f])
        candidates = [X[:, f] <= low / 2 + high / 2
                      for low, high in zip(values[:-1], values[1:], strict=True)]
        sides = [c for c in candidates] + [c | missing for c in candidates]
        if missing.any() and (~missing).any():
            sides.append(~missing)
        for left in sides:
            if allowed(left):
                best = max(best, parent - loss(left) - loss(~left))
    return best


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(4, 40), st.sampled_from([0.5, 0.1, 0.9, 0.37]),
       st.sampled_from(["none", "integer", "spread", "extreme"]), st.floats(0.0, 0.4),
       st.integers(1, 3))
def test_root_split_is_the_brute_force_best(seed, n, alpha, weights, missing,
                                            min_samples_leaf):
    """Every weight regime (unit and integer weights take the walk, weights spanning more
    than WALK_SPAN the Fenwick tree), missing values, absolute error and quantiles."""
    rng = np.random.default_rng(seed)
    X, y = _data(seed, n, d=2, missing=missing)
    y = np.round(y, 1)  # ties in y too
    w = {"none": np.ones(n), "integer": rng.integers(1, 5, n).astype(float),
         "spread": rng.uniform(0.5, 3.0, n),
         "extreme": rng.choice([1e-3, 1.0, 50.0], n)}[weights]
    criterion = "absolute_error" if alpha == 0.5 else "quantile"
    factor = 2.0 if criterion == "absolute_error" else 1.0
    model = jitree.DecisionTreeRegressor(criterion=criterion, quantile=alpha, max_depth=1,
                                         min_samples_leaf=min_samples_leaf).fit(X, y, w)
    tree = model.tree_
    assert tree.impurity[0] == pytest.approx(factor * pinball_loss(y, w, alpha), rel=1e-9,
                                             abs=1e-12)
    assert tree.value[0, 0] == weighted_quantile(y, w, alpha)
    best = _brute_force(X, y, w, alpha, factor, min_samples_leaf)
    if tree.node_count == 1:
        assert best == -np.inf or best <= 1e-12
        return
    leaves = model.apply(X)
    left = leaves == tree.children_left[0]
    ours = factor * (pinball_loss(y, w, alpha)
                     - pinball_loss(y[left], w[left], alpha) * w[left].sum() / w.sum()
                     - pinball_loss(y[~left], w[~left], alpha) * w[~left].sum() / w.sum())
    assert ours == pytest.approx(best, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("criterion,alpha", [("absolute_error", 0.5), ("quantile", 0.9),
                                             ("quantile", 0.25)])
@pytest.mark.parametrize("splitter", ["best", "random"])
@pytest.mark.parametrize("weights", ["none", "integer", "extreme"])
def test_every_node_holds_its_quantile_and_loss(criterion, alpha, splitter, weights):
    """Values and impurities of every node (not only leaves) from its samples, with missing
    values and max_leaf_nodes (best-first) too."""
    rng = np.random.default_rng(7)
    X, y = _data(3, 400, d=3, missing=0.1)
    w = {"none": np.ones(400), "integer": rng.integers(1, 4, 400).astype(float),
         "extreme": rng.choice([1e-3, 1.0, 100.0], 400)}[weights]
    loss = _loss_of(criterion, alpha)
    for params in (dict(max_depth=6), dict(max_leaf_nodes=20, min_samples_leaf=3)):
        model = jitree.DecisionTreeRegressor(criterion=criterion, quantile=alpha,
                                             splitter=splitter, random_state=1,
                                             **params).fit(X, y, w)
        tree = model.tree_
        members = model.decision_path(X).toarray().astype(bool).T
        assert tree.node_count > 5
        for node in range(tree.node_count):
            rows = members[node]
            assert tree.value[node, 0] == weighted_quantile(y[rows], w[rows], alpha)
            assert tree.impurity[node] == pytest.approx(loss(y[rows], w[rows]), rel=1e-9,
                                                        abs=1e-12)


def test_quantile_at_one_half_is_absolute_error_halved():
    X, y = _data(4, 500)
    mae = jitree.DecisionTreeRegressor(criterion="absolute_error", max_depth=5).fit(X, y)
    q50 = jitree.DecisionTreeRegressor(criterion="quantile", quantile=0.5,
                                       max_depth=5).fit(X, y)
    np.testing.assert_array_equal(mae.tree_.feature, q50.tree_.feature)
    np.testing.assert_array_equal(mae.tree_.threshold, q50.tree_.threshold)
    np.testing.assert_array_equal(mae.tree_.value, q50.tree_.value)
    np.testing.assert_allclose(mae.tree_.impurity, 2 * q50.tree_.impurity, rtol=1e-12)


def test_high_quantile_trees_predict_high():
    """Coverage on held-out data: a 0.9-quantile tree lies above about 90% of targets."""
    X, y = _data(5, 20_000)
    model = jitree.DecisionTreeRegressor(criterion="quantile", quantile=0.9,
                                         min_samples_leaf=200).fit(X[:10_000], y[:10_000])
    covered = np.mean(y[10_000:] <= model.predict(X[10_000:]))
    assert 0.86 < covered < 0.94


def test_offset_and_scale_of_targets():
    """A power-of-two scale of y changes no tree and comes back exactly in the values (each
    a target or the midpoint of two); an offset changes no split (the scans centre each
    node's sums: no cancellation)."""
    X, y = _data(6, 800)
    w = np.random.default_rng(6).uniform(0.5, 2.0, 800)  # no exact ties between splits
    base = jitree.DecisionTreeRegressor(criterion="absolute_error", max_depth=6).fit(X, y, w)
    scaled = jitree.DecisionTreeRegressor(criterion="absolute_error",
                                          max_depth=6).fit(X, y * 2.0**40, w)
    np.testing.assert_array_equal(base.tree_.threshold, scaled.tree_.threshold)
    np.testing.assert_array_equal(base.tree_.value * 2.0**40, scaled.tree_.value)
    midpoints = (y[:, None] + y[None, :]) / 2
    assert np.isin(base.tree_.value[:, 0], np.r_[y, midpoints.ravel()]).all()
    shifted = jitree.DecisionTreeRegressor(criterion="absolute_error",
                                           max_depth=6).fit(X, y + 1e9, w)
    np.testing.assert_array_equal(base.tree_.threshold, shifted.tree_.threshold)
    np.testing.assert_allclose(base.predict(X) + 1e9, shifted.predict(X), rtol=1e-15)


def test_monotonic_with_absolute_error():
    sklearn_tree = pytest.importorskip("sklearn.tree")
    X, y = _data(8, 800, d=2)
    X = X.astype(np.float32)
    params = dict(criterion="absolute_error", max_depth=5, monotonic_cst=[1, -1])
    ours = jitree.DecisionTreeRegressor(**params).fit(X, y)
    theirs = sklearn_tree.DecisionTreeRegressor(random_state=0, **params).fit(X, y)
    grid = np.linspace(-3, 3, 60, dtype=np.float32)
    for f, sign in ((0, 1), (1, -1)):
        for row in X[:30]:
            points = np.repeat(row[None], grid.shape[0], axis=0)
            points[:, f] = grid
            assert (sign * np.diff(ours.predict(points)) >= 0).all()
    ties, same = walk_against(ours.tree_, theirs.tree_, X, y, np.ones_like(y),
                              "absolute_error", 0, lambda a, b: True)
    if ties == 0:
        np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


@pytest.mark.parametrize("forest", [jitree.RandomForestRegressor, jitree.ExtraTreesRegressor])
def test_forests_with_order_criteria(forest):
    X, y = _data(9, 600, missing=0.05)
    for params in (dict(criterion="absolute_error"), dict(criterion="quantile", quantile=0.8)):
        model = forest(n_estimators=5, random_state=0, max_depth=6, **params).fit(X, y)
        expected = np.mean([tree.predict(X) for tree in model.estimators_], axis=0)
        np.testing.assert_allclose(model.predict(X), expected, rtol=1e-12)
        again = forest(n_estimators=5, random_state=0, max_depth=6, **params).fit(X, y)
        np.testing.assert_array_equal(model.predict(X), again.predict(X))


def test_pruning_and_persistence(tmp_path):
    X, y = _data(10, 500)
    model = jitree.DecisionTreeRegressor(criterion="quantile", quantile=0.3,
                                         ccp_alpha=0.01).fit(X, y)
    full = jitree.DecisionTreeRegressor(criterion="quantile", quantile=0.3).fit(X, y)
    assert model.tree_.node_count < full.tree_.node_count
    jitree.save(model, tmp_path / "quantile.jitree")
    loaded = jitree.load(tmp_path / "quantile.jitree")
    assert loaded.criterion == "quantile" and loaded.quantile == 0.3
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_order_statistics_kernel_matches_naive():
    rng = np.random.default_rng(11)
    for _ in range(200):
        n = int(rng.integers(1, 12))
        y = np.sort(np.round(rng.normal(size=n), 1))
        w = rng.choice([0.0, 0.5, 1.0, 2.0], n)
        if w.sum() == 0:
            w[0] = 1.0
        alpha = float(rng.choice([0.5, 0.1, 0.75]))
        q, loss = pinball.order_statistics(y, w, alpha)
        assert q == weighted_quantile(y, w, alpha)
        assert loss == pytest.approx(pinball_loss(y, w, alpha) * w.sum(), abs=1e-12)


def test_bad_input():
    X, y = _data(12, 50)
    with pytest.raises(ValueError, match="quantile"):
        jitree.DecisionTreeRegressor(criterion="quantile").fit(X, y)
    for bad in (0.0, 1.0, 1.5, -0.1):
        with pytest.raises(ValueError, match="quantile"):
            jitree.DecisionTreeRegressor(criterion="quantile", quantile=bad).fit(X, y)
    with pytest.raises(TypeError, match="quantile"):
        jitree.DecisionTreeRegressor(criterion="quantile", quantile="high").fit(X, y)
    Xc = X.copy()
    Xc[:, 0] = np.arange(50) % 3
    with pytest.raises(ValueError, match="categorical"):
        jitree.DecisionTreeRegressor(criterion="absolute_error",
                                     categorical_features=[0]).fit(Xc, y)
    with pytest.raises(ValueError, match="criterion"):
        jitree.DecisionTreeClassifier(criterion="absolute_error").fit(X, y > 0)
    # other criteria ignore quantile, as HistGradientBoosting's other losses do
    jitree.DecisionTreeRegressor(quantile=0.9).fit(X, y)


def test_measures_of_the_order_criteria():
    rng = np.random.default_rng(13)
    y = rng.normal(size=30)
    w = rng.uniform(0.5, 2.0, 30)
    groups = rng.integers(0, 3, 30)
    assert jitree.impurity(y, "absolute_error", w) == pytest.approx(
        mean_absolute_deviation(y, w), rel=1e-12)
    assert jitree.impurity(y, "quantile", w, quantile=0.8) == pytest.approx(
        pinball_loss(y, w, 0.8), rel=1e-12)
    expected = pinball_loss(y, w, 0.2) - sum(
        w[groups == g].sum() / w.sum() * pinball_loss(y[groups == g], w[groups == g], 0.2)
        for g in range(3))
    assert jitree.split_gain(y, groups, "quantile", w, quantile=0.2) == pytest.approx(
        expected, rel=1e-9, abs=1e-12)
    with pytest.raises(ValueError, match="quantile"):
        jitree.impurity(y, "quantile")
