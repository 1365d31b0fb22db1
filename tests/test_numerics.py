"""Trees that do not depend on the units of the target or of the weights: no overflow, no
cancellation, no split on rounding noise (the trees grow on scaled copies, see
:class:`jitree.model.builder.Scaling`)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitree
from jitree.model.builder import Scaling


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    step = (X[:, 0] > 0).astype(np.float64)
    return X, step


def _same_structure(a, b):
    for name in ("feature", "children_left", "children_right", "n_node_samples"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_array_equal(a.threshold, b.threshold)


REGRESSORS = [
    lambda: jitree.DecisionTreeRegressor(),
    lambda: jitree.RandomForestRegressor(n_estimators=4, random_state=0),
    lambda: jitree.ExtraTreesRegressor(n_estimators=4, random_state=0),
]


@pytest.mark.parametrize("make", REGRESSORS)
@pytest.mark.parametrize("low, high", [(-1e200, 1e200), (1e8, 1e8 + 1), (-1e-200, 1e-200),
                                       (1e16, 1e16 + 4)])
def test_step_target_fitted_whatever_its_units(make, low, high):
    # overflowing squares (1e200), cancelling variances (1e8 + {0, 1}), underflowing ones
    X, step = _data()
    y = np.where(step > 0, high, low)
    model = make().fit(X, y)
    np.testing.assert_allclose(model.predict(X), y, rtol=1e-13)  # means of equal values
    assert model.score(X, y) > 1.0 - 1e-12
    trees = getattr(model, "estimators_", [model])
    for tree in trees:
        if not isinstance(model, jitree.ExtraTreesRegressor):
            # one split separates the two values; the leaves are pure and are not split again
            assert tree.tree_.node_count == 3
            assert tree.tree_.feature[0] == 0
        assert np.isfinite(tree.tree_.impurity).all()
    if high > 1e-100:  # a variance near 1e-400 underflows: impurities, importances read 0
        np.testing.assert_allclose(model.feature_importances_.sum(), 1.0)
        assert np.argmax(model.feature_importances_) == 0


@pytest.mark.parametrize("offset, scale", [(1e8, 1.0), (0.0, 1e-120), (-3e5, 7.0),
                                           (0.0, 2.0**40)])
def test_regression_tree_independent_of_offset_and_scale(offset, scale):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 5))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=400)
    # leaves of 10 samples or more: no two candidate splits score within rounding of each
    # other (tiny nodes have exact and near ties, which rounding decides either way)
    reference = jitree.DecisionTreeRegressor(max_depth=6, min_samples_leaf=10).fit(X, y)
    moved = jitree.DecisionTreeRegressor(max_depth=6, min_samples_leaf=10).fit(
        X, offset + scale * y)
    _same_structure(reference.tree_, moved.tree_)
    np.testing.assert_allclose(moved.predict(X), offset + scale * reference.predict(X),
                               rtol=1e-9, atol=1e-9 * abs(scale))
    np.testing.assert_allclose(moved.tree_.impurity, scale**2 * reference.tree_.impurity,
                               rtol=1e-6, atol=1e-12 * scale**2)


def test_scale_by_power_of_two_changes_no_bit():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] ** 2 + rng.normal(size=300)
    a = jitree.DecisionTreeRegressor().fit(X, y)
    b = jitree.DecisionTreeRegressor().fit(X, y * 2.0**-30)
    _same_structure(a.tree_, b.tree_)
    np.testing.assert_array_equal(b.tree_.value, a.tree_.value * 2.0**-30)


@pytest.mark.parametrize("make", [
    lambda: jitree.DecisionTreeRegressor(),
    lambda: jitree.DecisionTreeRegressor(splitter="random", random_state=0),
    lambda: jitree.ExtraTreesRegressor(n_estimators=3, random_state=0),
    lambda: jitree.RandomForestRegressor(n_estimators=3, random_state=0),
])
@pytest.mark.parametrize("value", [0.1 + 0.2, 1e8 + 0.3, -7.25e-3])
def test_constant_target_gives_a_single_leaf(make, value):
    X, _ = _data(500)
    model = make().fit(X, np.full(500, value))
    for tree in getattr(model, "estimators_", [model]):
        assert tree.tree_.node_count == 1
        assert tree.tree_.impurity[0] == 0.0
    np.testing.assert_allclose(model.predict(X), value, rtol=1e-15)


def test_pure_children_are_not_split_on_rounding_noise():
    # many equal targets in each child of the first split (sums of 0.1 round at every step)
    rng = np.random.default_rng(3)
    X = rng.normal(size=(20_000, 3))
    y = np.where(X[:, 0] > 0.3, 0.1, 1e3 + 0.7)
    weight = rng.integers(1, 4, 20_000).astype(np.float64)
    for sample_weight in (None, weight):
        model = jitree.DecisionTreeRegressor().fit(X, y, sample_weight=sample_weight)
        assert model.tree_.node_count == 3


@pytest.mark.parametrize("factor", [1e160, 1e-200, 1e300, 3.0])
@pytest.mark.parametrize("task", ["classification", "regression"])
def test_uniformly_scaled_weights_grow_the_same_tree(factor, task):
    X, step = _data(400, seed=4)
    rng = np.random.default_rng(4)
    if task == "classification":
        y = (step + (X[:, 1] > 0.5)).astype(int)
        make = lambda: jitree.DecisionTreeClassifier(max_depth=6)  # noqa: E731
    else:
        y = X[:, 0] + X[:, 1] ** 2 + 0.1 * rng.normal(size=400)
        make = lambda: jitree.DecisionTreeRegressor(max_depth=6)  # noqa: E731
    plain = make().fit(X, y)
    scaled = make().fit(X, y, sample_weight=np.full(400, factor))
    _same_structure(plain.tree_, scaled.tree_)
    np.testing.assert_array_equal(plain.tree_.impurity, scaled.tree_.impurity)
    np.testing.assert_allclose(scaled.tree_.weighted_n_node_samples,
                               factor * plain.tree_.weighted_n_node_samples, rtol=1e-12)
    np.testing.assert_array_equal(plain.predict(X), scaled.predict(X))
    np.testing.assert_allclose(plain.feature_importances_, scaled.feature_importances_,
                               rtol=1e-12)


def test_huge_class_weight_grows_the_same_tree():
    X, step = _data(300, seed=5)
    y = (step + (X[:, 2] > 0.5)).astype(int)
    plain = jitree.DecisionTreeClassifier(max_depth=5).fit(X, y)
    heavy = jitree.DecisionTreeClassifier(max_depth=5,
                                          class_weight={0: 1e300, 1: 1e300, 2: 1e300}).fit(X, y)
    _same_structure(plain.tree_, heavy.tree_)
    assert np.isfinite(heavy.tree_.impurity).all()
    forest = jitree.RandomForestClassifier(n_estimators=3, random_state=0,
                                           class_weight={0: 1e300, 1: 1e300, 2: 1e300})
    forest.fit(X, y)
    assert forest.score(X, y) > 0.9


def test_non_uniform_weights_scaled_by_power_of_two_change_no_bit():
    X, step = _data(300, seed=6)
    rng = np.random.default_rng(6)
    y = X[:, 0] - X[:, 3] ** 2 + 0.2 * rng.normal(size=300)
    weight = rng.uniform(0.1, 3.0, 300)
    a = jitree.DecisionTreeRegressor().fit(X, y, sample_weight=weight)
    b = jitree.DecisionTreeRegressor().fit(X, y, sample_weight=weight * 2.0**700)
    _same_structure(a.tree_, b.tree_)
    np.testing.assert_array_equal(a.tree_.value, b.tree_.value)


def test_measures_neither_overflow_nor_cancel():
    assert jitree.impurity([1e16, 1e16 + 2], "squared_error") == 1.0
    assert jitree.impurity([0, 1], "gini", sample_weight=[1e300, 1e300]) == 0.5
    assert jitree.impurity([0, 1], "entropy", sample_weight=[1e-300, 1e-300]) == 1.0
    assert jitree.impurity([3.3] * 7, "squared_error") == 0.0
    np.testing.assert_allclose(jitree.impurity([-1e200, 1e200], "squared_error"),
                               np.finfo(np.float64).max)  # 1e400: beyond float64
    assert jitree.split_gain([1e8, 1e8, 1e8 + 1, 1e8 + 1], [0, 0, 1, 1],
                             "squared_error") == 0.25
    y = np.array([2.0, 3.5, 7.0, 1.0])
    for shift in (0.0, 1e9):
        np.testing.assert_allclose(jitree.impurity(y + shift, "squared_error"), np.var(y),
                                   rtol=1e-6)


def test_scaling_round_trips():
    rng = np.random.default_rng(7)
    y = rng.normal(size=50) * 1e150 + 3e151
    weight = rng.uniform(0.5, 2.0, 50)
    scaling = Scaling.of(y, weight, True)
    scaled = scaling.targets(y)
    assert np.abs(scaled).max() < 1.0
    assert abs(np.average(scaled, weights=weight)) < 1e-12
    np.testing.assert_allclose(scaling.means(scaled), y, rtol=1e-14)
    assert 1.0 <= scaling.weights(weight).max() < 2.0


def _lowest_bit(value):
    """Exponent of the lowest set bit of a float (value = n / 2**k, n odd: -k)."""
    numerator, denominator = float(value).as_integer_ratio()
    return (numerator & -numerator).bit_length() - denominator.bit_length()


@settings(deadline=None, max_examples=200)
@given(values=st.lists(st.integers(-2**20, 2**20), min_size=1, max_size=40),
       step=st.sampled_from([1.0, 0.5, 0.25, 3.0, 1e-3, 0.1]),
       offset=st.sampled_from([0.0, 1e6, -7.25, 1e-9]))
def test_centre_on_the_targets_grid(values, step, offset):
    """Targets on a grid coarse enough for exact sums (at most 52 bits from the largest to
    the coarsest power of two dividing every target) are centred on their mean rounded to
    that grid: it moves by at most half the grid, and every centred target is exact. Other
    targets (full precision) keep their mean."""
    y = np.array(values, dtype=np.float64) * step + offset
    scaling = Scaling.of(y, np.ones_like(y), True)
    if y.min() == y.max():
        return
    z = np.ldexp(y, -scaling.magnitude)
    nonzero = z[z != 0.0]
    grid = min(_lowest_bit(v) for v in nonzero)
    mean = 0.0
    for v in z:  # added in index order, as the scaling adds them
        mean += float(v)
    mean /= len(z)
    if np.abs(z).max() < np.ldexp(1.0, grid + 52):
        assert abs(scaling.centre - mean) <= np.ldexp(1.0, grid - 1)
        np.testing.assert_array_equal((z - scaling.centre) + scaling.centre, z)
    else:
        assert scaling.centre == mean


def test_centre_does_not_depend_on_the_order_of_the_targets():
    """Zeros first (zero-inflated counts, or rows sorted by target) do not hide the targets'
    grid: the centre is the same in any order, and leaves of equal targets are exact."""
    rng = np.random.default_rng(0)
    y = np.concatenate([np.zeros(300), rng.integers(1, 50, 1000)]).astype(float)
    ones = np.ones_like(y)
    centre = Scaling.of(y, ones, True).centre
    for order in (rng.permutation(y.shape[0]), np.argsort(-y, kind="stable")):
        assert Scaling.of(y[order], ones, True).centre == centre
    assert centre == float(np.round(centre * 64) / 64)  # on the grid of 50 / 64 (magnitude 6)
    X = rng.normal(size=(y.shape[0], 3))
    model = jitree.DecisionTreeRegressor(max_depth=6).fit(X, y)
    leaves = model.apply(X)
    pure = [leaf for leaf in np.unique(leaves) if np.ptp(y[leaves == leaf]) == 0]
    assert pure  # the case: leaves of equal targets (the zeros)
    for leaf in pure:
        np.testing.assert_array_equal(model.predict(X[leaves == leaf]), y[leaves == leaf])


@pytest.mark.parametrize("seed", range(6))
def test_integer_targets_grow_one_tree_whatever_their_storage(seed):
    """Integer targets: integer weights or the rows repeated, dense or sparse X, give the
    same tree (equal partitions score the same bits, so ties go by the tie rule), and a
    leaf of equal targets predicts them exactly."""
    scipy_sparse = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(200, 10)).round(1)
    X[rng.random(X.shape) < 0.3] = 0.0
    y = np.where((X[:, :5] ** 2).sum(axis=1) > 2.5, 1.0, -1.0) + rng.integers(0, 3, 200)
    draw = rng.integers(0, 200, 100)
    w = np.bincount(draw, minlength=200).astype(float)
    params = dict(max_features=0.5, random_state=seed)
    weighted = jitree.DecisionTreeRegressor(**params).fit(X, y, sample_weight=w)
    repeated = jitree.DecisionTreeRegressor(**params).fit(X[draw], y[draw])
    sparse = jitree.DecisionTreeRegressor(**params).fit(scipy_sparse.csc_matrix(X), y,
                                                        sample_weight=w)
    for name in ("feature", "threshold", "children_left", "children_right",
                 "weighted_n_node_samples"):
        np.testing.assert_array_equal(getattr(weighted.tree_, name),
                                      getattr(repeated.tree_, name), err_msg=name)
    _same_structure(weighted.tree_, sparse.tree_)
    np.testing.assert_array_equal(weighted.predict(X), repeated.predict(X))
    full = jitree.DecisionTreeRegressor(random_state=seed).fit(X, y)
    np.testing.assert_array_equal(full.predict(X)[np.unique(X, axis=0, return_index=True)[1]],
                                  y[np.unique(X, axis=0, return_index=True)[1]])
