"""The sample-order growth (``jitree.kernels.sample_order``) of the random splitter and of the
best splitter on wide X: its passes and its sort against NumPy twins, its trees against the
presorted growth's (identical, under Hypothesis), and when a fit takes it."""

import tracemalloc

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitree
import jitree.model._base as base_module
import jitree.model.builder as builder
import jitree.model.forest as forest_module
from jitree.datasets import make_classification_data
from jitree.kernels import criteria, sample_order
from jitree.kernels._jit import prefetch
from jitree.kernels.categorical import MISSING_LEFT, MISSING_RIGHT
from jitree.kernels.records import SampleOrder, TreeData
from jitree.kernels.sample_order import (
    PACKED_CLASSES,
    RADIX_MIN,
    argsort_keys,
    column_range,
    columns_range,
    flat_x,
    node_ranges,
    node_sides,
    renumber,
    split_samples,
)
from jitree.kernels.select import permutation_step, undo_walk
from jitree.model.builder import (
    GrowParams,
    SampleX,
    exact_sums,
    renumbering,
    sample_order_growth,
)

_MODULES = (builder, base_module, forest_module)
TREE_ARRAYS = ("feature", "threshold", "children_left", "children_right", "missing_left",
               "n_node_samples", "value", "impurity", "weighted_n_node_samples")


def _forced(patch, sample_order):
    """Make every fit grow in sample order whenever it grows the same tree
    (``sample_order`` true, whatever ``max_features``), or never."""
    if sample_order:
        def growth(params, sample_weight, n_features, X=None):
            return builder.sample_order_exact(params, sample_weight)
    else:
        def growth(params, sample_weight, n_features, X=None):
            return False
    for module in _MODULES:
        patch.setattr(module, "sample_order_growth", growth)


def _fit_both(make):
    """``make()`` with the presorted growth, then with the sample-order growth."""
    with pytest.MonkeyPatch.context() as patch:
        _forced(patch, False)
        presorted = make()
    with pytest.MonkeyPatch.context() as patch:
        _forced(patch, True)
        sampled = make()
    return presorted, sampled


def _trees(model):
    return [e.tree_ for e in model.estimators_] if hasattr(model, "estimators_") \
        else [model.tree_]


def assert_same_trees(a, b):
    trees_a, trees_b = _trees(a), _trees(b)
    assert len(trees_a) == len(trees_b)
    for ta, tb in zip(trees_a, trees_b, strict=True):
        assert ta.node_count == tb.node_count
        for name in TREE_ARRAYS:
            np.testing.assert_array_equal(np.asarray(getattr(ta, name)),
                                          np.asarray(getattr(tb, name)), err_msg=name)


# -- the passes, against NumPy ------------------------------------------------------------------

@st.composite
def segments(draw):
    # segments longer than a block of samples (SIDE_BLOCK) too
    n = draw(st.integers(257, 700)) if draw(st.booleans()) else draw(st.integers(1, 40))
    d = draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    X = rng.integers(-3, 4, (n, d)).astype(dtype)
    X[rng.random((n, d)) < draw(st.sampled_from([0.0, 0.3, 1.0]))] = np.nan
    samples = rng.permutation(n).astype(np.int32)
    if draw(st.booleans()):
        return X, samples, 0, n, rng  # a whole node
    start = draw(st.integers(0, n - 1))
    end = draw(st.integers(start + 1, n))
    return X, samples, start, end, rng


def _held(X, by_column):
    """X as SampleOrder holds it: by row, or its transpose (by column)."""
    return np.ascontiguousarray(X.T) if by_column else X


@settings(deadline=None, max_examples=60)
@given(segments(), st.booleans())
def test_node_ranges_and_column_range_are_numpy_min_max(segment, by_column):
    X, samples, start, end, rng = segment
    # distinct values, so that every block's range counts
    X = np.where(np.isnan(X), X, rng.normal(size=X.shape)).astype(X.dtype)
    d = X.shape[1]
    held = _held(X, by_column)
    low, high, present = np.empty(d), np.empty(d), np.empty(d, dtype=np.int64)
    node_ranges(held, by_column, samples, start, end, low, high, present)
    # the passes of the draws that visit few features: some features, in walk order, in
    # blocks of samples; the features not visited keep what they held
    visit = rng.permutation(d)[:rng.integers(0, d + 1)].astype(np.int64)
    some = np.full((3, d), 7.0), np.full(d, 7, dtype=np.int64)
    flat = flat_x(held, by_column)
    columns_range(flat, np.concatenate([visit, [-1]]), visit.shape[0], samples, start, end,
                  some[0][0], some[0][1], some[1])
    for f in range(d):
        # the one-feature pass of the draws that visit few features agrees
        assert column_range(flat, f, samples, start, end) == (low[f], high[f], present[f])
        got = (some[0][0, f], some[0][1, f], some[1][f])
        assert got == ((low[f], high[f], present[f]) if f in visit else (7.0, 7.0, 7))
        values = X[samples[start:end], f].astype(np.float64)
        values = values[~np.isnan(values)]
        assert present[f] == values.size
        if values.size:
            assert (low[f], high[f]) == (values.min(), values.max())
        else:
            assert (low[f], high[f]) == (np.inf, -np.inf)


def _tree_data(n, d, label, target, weight):
    """A TreeData for the sample-order passes (no sorted arrays)."""
    return TreeData(np.empty((d, 0), dtype=np.int32), np.empty((d, 0)),
                    np.empty((1, 0), dtype=np.uint8), label, np.empty((1, 0), dtype=np.uint8),
                    target, np.empty(0), weight, bool(np.any(weight != 1.0)),
                    label.shape[0] == 0, np.empty((n, 0)), np.empty((n, 0), dtype=np.int32),
                    np.empty(0))


def _targets(rng, n, regression, weighted):
    """Whole-number weights (or ones), and a regression target or 2-6 classes (up to
    PACKED_CLASSES, node_sides counts them in one register when unweighted), with the
    number of statistics of a node: (weight, label, target, n_stats)."""
    weight = rng.integers(1, 4, n).astype(np.float64) if weighted else np.ones(n)
    if regression:
        return weight, np.empty(0, dtype=np.uint8), rng.normal(size=n), 2
    n_classes = int(rng.integers(2, PACKED_CLASSES + 3))
    return weight, rng.integers(0, n_classes, n).astype(np.uint8), np.empty(0), n_classes


@settings(deadline=None, max_examples=60)
@given(segments(), st.booleans(), st.booleans(), st.booleans(), st.booleans())
def test_node_sides_are_numpy_sums(segment, regression, weighted, full, by_column):
    X, samples, start, end, rng = segment
    n, d = X.shape
    chosen = rng.permutation(d)[:rng.integers(1, d + 1)].astype(np.int64)
    count = chosen.shape[0]
    threshold = rng.integers(-3, 4, count) + 0.5 * rng.integers(0, 2, count)
    weight, label, target, n_stats = _targets(rng, n, regression, weighted)
    node = samples[start:end]
    present = (~np.isnan(X[node])).sum(axis=0).astype(np.int64)
    side_stats = np.full((2, d + 1, n_stats), np.nan)  # and the spare slot of an odd count
    side_totals = np.full((2, 2, d + 1), np.nan)
    node_sides(_tree_data(n, d, label, target, weight), flat_x(_held(X, by_column), by_column),
               samples, start, end, chosen, count, threshold.astype(np.float64), present,
               full, side_stats, side_totals)
    for t, f in enumerate(chosen):
        values = X[node, f]
        for side, members in enumerate([node[values <= threshold[t]], node[np.isnan(values)]]):
            w = weight[members]
            if regression:
                # the sums in sample order, as kernels.criteria.accumulate adds them; the
                # second one only for a user's criterion (full)
                want = [0.0, 0.0]
                for i in members:
                    want[0] += weight[i] * target[i]
                    if full:
                        want[1] += weight[i] * target[i] * target[i]
            else:
                want = np.bincount(label[members], weights=w, minlength=n_stats)
            np.testing.assert_array_equal(side_stats[side, t], want)
            assert side_totals[side, 0, t] == w.sum()
            assert side_totals[side, 1, t] == members.size


@settings(deadline=None, max_examples=60)
@given(st.integers(1, 300), st.integers(1, 5), st.booleans(), st.booleans(), st.booleans(),
       st.booleans(), st.integers(0, 2**32 - 1))
def test_renumber_is_the_numpy_gather(n, d, by_column, regression, weighted, with_codes,
                                      seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)).astype([np.float32, np.float64][rng.integers(2)])
    codes = np.empty((0, 0), dtype=np.uint8)
    if with_codes:  # X's values as bytes (SampleX.codes), copied alike
        X = rng.integers(0, 256, (n, d)).astype(X.dtype)
        codes = _held(X.astype(np.uint8), by_column)
    codes.flags.writeable = False
    weight, label, target, _ = _targets(rng, n, regression, weighted)
    samples = rng.permutation(n).astype(np.int32)
    # open nodes: some of the segments that cut the rows, each sorted (as a node's samples)
    cuts = np.unique(np.concatenate([[0, n], rng.integers(0, n + 1, 4)]))
    segments_ = [(a, b) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
    for a, b in segments_:
        samples[a:b] = np.sort(samples[a:b])
    open_ = [seg for seg in segments_ if rng.random() < 0.6]
    open_nodes = np.array([[7] * len(open_), [a for a, _ in open_], [b for _, b in open_]],
                          dtype=np.int64).reshape(3, len(open_))
    before = samples.copy()
    held = _held(X, by_column)
    held.flags.writeable = False  # as the growth holds X
    data, order = renumber(_tree_data(n, d, label, target, weight),
                           SampleOrder(held, by_column, samples, np.empty(n, dtype=np.int32),
                                       8.0, codes, True), open_nodes)
    old = np.concatenate([before[a:b] for a, b in open_] + [np.empty(0, dtype=np.int32)])
    # the open samples numbered in node order, the others left as they were
    renumbered = before.copy()
    for a, b in open_:
        renumbered[a:b] = -1
    np.testing.assert_array_equal(samples[renumbered >= 0], before[renumbered >= 0])
    np.testing.assert_array_equal(samples[renumbered < 0], np.arange(old.size))
    np.testing.assert_array_equal(order.samples, samples)
    # X, the labels, targets and weights copied in that order
    np.testing.assert_array_equal(order.X, _held(X[old], by_column))
    if with_codes:
        np.testing.assert_array_equal(order.codes, _held(X[old].astype(np.uint8), by_column))
    else:
        assert order.codes.size == 0
    assert order.by_column == by_column and order.renumber == 8.0
    np.testing.assert_array_equal(data.sample_weight, weight[old])
    if regression:
        np.testing.assert_array_equal(data.target, target[old])
        assert data.label.size == 0
    else:
        np.testing.assert_array_equal(data.label, label[old])
        assert data.target.size == 0
    assert data.target_term.size == 0


@settings(deadline=None, max_examples=60)
@given(segments(), st.booleans(), st.booleans(), st.booleans(), st.booleans(),
       st.booleans())
def test_split_samples_is_the_numpy_partition(segment, regression, weighted, nan_left,
                                              searched, by_column):
    X, samples, start, end, rng = segment
    n, d = X.shape
    f = int(rng.integers(d))
    threshold = rng.integers(-3, 4) + 0.5 * rng.integers(0, 2)
    weight, label, target, n_stats = _targets(rng, n, regression, weighted)
    before = samples.copy()
    stats, weights = np.full((2, n_stats), np.nan), np.full(2, np.nan)
    counts = np.full(2, -1, dtype=np.int64)
    split_samples(_tree_data(n, d, label, target, weight),
                  SampleOrder(_held(X, by_column), by_column, samples,
                              np.full(n, -1, dtype=np.int32), 0.0,
                              np.empty((0, 0), dtype=np.uint8), True),
                  np.array([start]), np.array([end]), np.array([f]), np.array([threshold]),
                  np.array([MISSING_LEFT if nan_left else MISSING_RIGHT]), np.array([0]),
                  stats, weights, counts, regression and not searched, 1)
    node = before[start:end]
    values = X[node, f]
    left = (values <= threshold) | (nan_left & np.isnan(values))
    # a stable partition of the node's segment, and nothing else moved
    np.testing.assert_array_equal(samples[start:end], np.concatenate([node[left],
                                                                      node[~left]]))
    np.testing.assert_array_equal(samples[:start], before[:start])
    np.testing.assert_array_equal(samples[end:], before[end:])
    for side, members in enumerate([node[left], node[~left]]):
        w = weight[members]
        assert counts[side] == members.size
        if regression and not searched:
            assert weights[side] == pytest.approx(w.sum(), rel=1e-12)
            want = [np.sum(w * target[members]), np.sum(w * target[members] ** 2)]
            np.testing.assert_allclose(stats[side], want, rtol=1e-12, atol=1e-12)
    if not regression or searched:
        # children whose statistics and weights are the search's (a classifier's, the best
        # splitter's: its trees against the presorted growth's below): the partition leaves
        # them alone
        assert np.isnan(stats).all() and np.isnan(weights).all()


@settings(deadline=None, max_examples=100)
@given(st.integers(1, 40), st.integers(0, 2**64 - 1), st.data())
def test_undo_walk_leaves_the_order_as_the_walk_found_it(n, key, data):
    # the best splitter's nodes share one walk order, each leaving it as it found it
    steps = data.draw(st.integers(0, n))
    before = np.random.default_rng(key % 1000).permutation(n)
    order = before.copy()
    for step in range(steps):
        permutation_step(np.uint64(key), step, order)
    np.testing.assert_array_equal(np.sort(order), np.arange(n))
    undo_walk(np.uint64(key), steps, order)
    np.testing.assert_array_equal(order, before)


# -- the trees, against the presorted growth's ---------------------------------------------------

@st.composite
def fits(draw, splitter):
    # the best splitter's nodes of RADIX_MIN samples and more take the radix sort
    large = splitter == "best" and draw(st.booleans())
    n = draw(st.integers(RADIX_MIN, 600)) if large else draw(st.integers(2, 80))
    d = draw(st.integers(1, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    if draw(st.booleans()):
        X = rng.integers(0, draw(st.integers(2, 8)), (n, d)).astype(dtype)
    else:  # signed values, ties, and -0.0 beside 0.0
        X = (rng.integers(-4, 5, (n, d)) * draw(st.sampled_from([1.0, 0.1, 1e-300]))
             ).astype(dtype)
        X[(X == 0) & (rng.random((n, d)) < 0.5)] = -0.0
    X[rng.random((n, d)) < draw(st.sampled_from([0.0, 0.2]))] = np.nan
    # the best splitter's trees are the presorted growth's for regression targets and any
    # weights too
    regression = splitter == "best" and draw(st.booleans())
    n_classes = 2 if regression else draw(st.integers(2, 4))
    if regression:  # ties, or values whose sums round
        y = rng.integers(0, 4, n) * draw(st.sampled_from([1.0, 0.1, np.pi]))
        criterion = draw(st.sampled_from(["squared_error", "poisson"]))
    else:
        y = rng.integers(0, n_classes, n)
        criterion = draw(st.sampled_from(["gini", "entropy", "misclassification",
                                          "gain_ratio"]))
    weights = ["none", "whole", "zeros", "equal"] + (["fractional"] if splitter == "best"
                                                     else [])
    weight = draw(st.sampled_from(weights))
    w = {"none": None, "whole": rng.integers(1, 4, n).astype(np.float64),
         "zeros": rng.integers(0, 3, n).astype(np.float64),
         "equal": np.full(n, 0.3), "fractional": rng.random(n) * 3}[weight]
    if w is not None and not w.sum() > 0:
        w[0] = 1.0
    if regression and criterion == "poisson" and not (y * (w if w is not None else 1)).sum() > 0:
        y[0 if w is None else np.argmax(w)] = 1.0  # a sample of positive weight
    params = dict(
        splitter=splitter, random_state=draw(st.integers(0, 1000)),
        max_features=draw(st.integers(1, d)), criterion=criterion,
        min_samples_leaf=draw(st.integers(1, 4)),
        max_depth=draw(st.sampled_from([None, 1, 3])),
        max_leaf_nodes=draw(st.sampled_from([None, 2, 5])),
        min_impurity_decrease=draw(st.sampled_from([0.0, 0.01])))
    if n_classes == 2 and draw(st.booleans()):
        params["monotonic_cst"] = rng.integers(-1, 2, d).tolist()
    if d >= 2 and draw(st.booleans()):
        params["interaction_cst"] = [[0, 1]] + ([[1, d - 1]] if d > 2 else [])
    return X, y, w, params


def _same_tree_both_ways(case):
    X, y, w, params = case
    model = jitree.DecisionTreeRegressor if params["criterion"] in (
        "squared_error", "poisson") else jitree.DecisionTreeClassifier
    a, b = _fit_both(lambda: model(**params).fit(X, y, sample_weight=w))
    assert_same_trees(a, b)


@settings(deadline=None, max_examples=80)
@given(fits("random"))
def test_sample_order_tree_is_the_presorted_tree_under_hypothesis(case):
    _same_tree_both_ways(case)


@settings(deadline=None, max_examples=60)
@given(fits("best"))
def test_best_splitter_sample_order_tree_is_the_presorted_tree(case):
    _same_tree_both_ways(case)


@st.composite
def two_valued_fits(draw):
    # X of two values a feature, none missing (the best splitter's unsorted search,
    # kernels.split.scan_two_valued), a few columns of more values or of missing ones
    # beside them (the sorted search, in the same nodes)
    n = draw(st.integers(4, 400))
    d = draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    low, high = draw(st.sampled_from([(0.0, 1.0), (-0.5, 3.25), (2.0, 7.0), (-1e30, 1e30)]))
    X = np.where(rng.random((n, d)) < rng.uniform(0.05, 0.95, d), high, low).astype(dtype)
    if d > 1 and draw(st.booleans()):
        X[:, -1] = rng.integers(0, 4, n)
        if draw(st.booleans()):
            X[rng.random(n) < 0.2, -1] = np.nan
    regression = draw(st.booleans())
    if regression:  # ties, or sums that round
        y = rng.integers(0, 4, n) * draw(st.sampled_from([1.0, 0.1, np.pi]))
        criterion = draw(st.sampled_from(["squared_error", "poisson"]))
    else:
        y = rng.integers(0, draw(st.integers(1, 4)), n)
        criterion = draw(st.sampled_from(["gini", "entropy", "misclassification",
                                          "gain_ratio"]))
    # whole weights: the classifier's unsorted search; fractional: only the regressor's
    w = {"none": None, "whole": rng.integers(0, 4, n).astype(np.float64),
         "fractional": rng.random(n) * 3}[draw(st.sampled_from(["none", "whole",
                                                               "fractional"]))]
    if w is not None and not w.sum() > 0:
        w[0] = 1.0
    if criterion == "poisson" and not (y * (w if w is not None else 1)).sum() > 0:
        y[0 if w is None else np.argmax(w)] = 1.0  # a sample of positive weight
    params = dict(
        random_state=draw(st.integers(0, 1000)), max_features=draw(st.integers(1, d)),
        criterion=criterion, min_samples_leaf=draw(st.integers(1, 5)),
        min_weight_fraction_leaf=draw(st.sampled_from([0.0, 0.1])),
        max_depth=draw(st.sampled_from([None, 2])),
        max_leaf_nodes=draw(st.sampled_from([None, 4])))
    if not regression and draw(st.booleans()):
        params["monotonic_cst"] = rng.integers(-1, 2, d).tolist()
    return X, y, w, params


@settings(deadline=None, max_examples=80)
@given(two_valued_fits())
def test_two_valued_features_grow_the_presorted_tree(case):
    # the search of a two-valued feature adds up its one candidate's sums without sorting
    # the node's samples: the same scores, to the bit, and so the same trees
    X, y, w, params = case
    model = jitree.DecisionTreeRegressor if params["criterion"] in (
        "squared_error", "poisson") else jitree.DecisionTreeClassifier
    if "monotonic_cst" in params and len(np.unique(y)) > 2:
        params.pop("monotonic_cst")  # binary classification only
    a, b = _fit_both(lambda: model(**params).fit(X, y, sample_weight=w))
    assert_same_trees(a, b)


@pytest.mark.parametrize("bootstrap", [False, True])
@pytest.mark.parametrize("forest, extra", [
    (jitree.ExtraTreesClassifier, {}), (jitree.RandomForestClassifier, {}),
    # the best splitter's: whatever the weights and targets
    (jitree.RandomForestClassifier, {"class_weight": "balanced"}),
    (jitree.RandomForestRegressor, {"max_features": "sqrt"}),
    (jitree.RandomForestRegressor, {"max_features": 0.5, "criterion": "poisson"})])
def test_sample_order_forest_is_the_presorted_forest(forest, extra, bootstrap):
    # nodes of more samples than RADIX_MIN: the best splitter's radix sort
    X, y = make_classification_data(2000, 8, 3, seed=4)
    rng = np.random.default_rng(0)
    X[rng.random(X.shape) < 0.05] = np.nan
    X[:, 2] = np.round(X[:, 2])  # ties
    regression = forest is jitree.RandomForestRegressor
    if regression:
        y = np.exp(np.nan_to_num(X[:, 0]) / 2) + rng.random(2000) / 3
    a, b = _fit_both(lambda: forest(
        n_estimators=4, bootstrap=bootstrap, random_state=1, n_jobs=2, **extra).fit(X, y))
    assert_same_trees(a, b)
    predict = "predict" if regression else "predict_proba"
    np.testing.assert_array_equal(getattr(a, predict)(X), getattr(b, predict)(X))


@pytest.mark.parametrize("splitter", ["random", "best"])
def test_sample_order_tree_on_threads_is_the_one_thread_tree(splitter):
    # the search and the partition run in parallel blocks on a large input
    X, y = make_classification_data(60_000, 48, 3, seed=5)
    one = jitree.DecisionTreeClassifier(splitter=splitter, max_features=3, random_state=0,
                                        n_jobs=1).fit(X, y)
    two = jitree.DecisionTreeClassifier(splitter=splitter, max_features=3, random_state=0,
                                        n_jobs=2).fit(X, y)
    assert_same_trees(one, two)


def _regression_data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 6))
    X[rng.random(X.shape) < 0.05] = np.nan
    y = np.exp(np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) ** 2 / 4) + rng.random(3000)
    return X, y, rng.integers(1, 4, 3000) * 0.5


def _regressors(make):
    """``make()`` grown in each feature's sorted order (forced), then in sample order (the
    regressor's own choice)."""
    with pytest.MonkeyPatch.context() as patch:
        _forced(patch, False)
        presorted = make()
    return presorted, make()


@pytest.mark.parametrize("kind, params", [
    ("tree", {}),
    ("tree", {"max_features": 3, "min_samples_leaf": 5}),
    ("tree", {"criterion": "poisson", "min_samples_leaf": 3}),
    ("tree", {"monotonic_cst": [1, 0, -1, 0, 0, 0]}),
    ("forest", {"max_features": 0.5}),
    ("forest", {"bootstrap": True}),
])
def test_sample_order_regressor_is_the_presorted_one_to_rounding(kind, params):
    # A regressor's sides are added in sample order instead of each feature's order: where
    # no two candidates tie (nodes of tens of samples and more, continuous targets), its
    # trees are the presorted growth's, their statistics equal to rounding.
    X, y, w = _regression_data()
    if kind == "tree":
        def make():
            return jitree.DecisionTreeRegressor(splitter="random", max_depth=6,
                                                random_state=2, **params).fit(
                X, y, sample_weight=w)
    else:
        def make():
            return jitree.ExtraTreesRegressor(n_estimators=3, max_depth=6, random_state=2,
                                              n_jobs=2, **params).fit(X, y)
    presorted, sampled = _regressors(make)
    for ta, tb in zip(_trees(presorted), _trees(sampled), strict=True):
        assert ta.node_count == tb.node_count
        for name in ("feature", "threshold", "children_left", "children_right",
                     "missing_left", "n_node_samples"):
            np.testing.assert_array_equal(getattr(ta, name), getattr(tb, name), err_msg=name)
        for name in ("value", "impurity", "weighted_n_node_samples"):
            np.testing.assert_allclose(getattr(ta, name), getattr(tb, name), rtol=1e-9,
                                       atol=1e-12, err_msg=name)
    np.testing.assert_allclose(presorted.predict(X), sampled.predict(X), rtol=1e-9)


def test_full_depth_sample_order_regressor_fits_as_the_presorted_one():
    # In small nodes, features that split the samples alike tie up to rounding, and the
    # last bits pick one or the other: the trees may test other features there, but they
    # fit the training samples alike.
    X, y, _ = _regression_data()
    presorted, sampled = _regressors(
        lambda: jitree.ExtraTreesRegressor(n_estimators=3, random_state=2).fit(X, y))
    for ta, tb in zip(_trees(presorted), _trees(sampled), strict=True):
        assert ta.node_count == tb.node_count
    np.testing.assert_allclose(presorted.predict(X), sampled.predict(X), rtol=1e-9)
    np.testing.assert_allclose(sampled.predict(X), y, rtol=1e-9)  # one sample a leaf


# -- when a fit takes it ------------------------------------------------------------------------

def _params(**changes):
    params = GrowParams(criterion=0, is_regression=False, random_splitter=True, seed=0,
                        max_depth=10, min_samples_split=2, min_samples_leaf=1,
                        min_weight_leaf=0.0, max_features=4, max_leaf_nodes=0,
                        min_impurity_decrease=0.0, purity_threshold=1.0,
                        impurity_threshold=0.0)
    for name, value in changes.items():
        setattr(params, name, value)
    return params


def test_sample_order_growth_only_for_what_it_grows():
    ones = np.ones(10)

    def growth(params, weight=ones, n_features=20):
        return sample_order_growth(params, weight, n_features)

    assert growth(_params())
    assert growth(_params(max_features=20))  # faster at every max_features
    assert not growth(_params(n_outputs=2))
    assert not growth(_params(feature_kind=np.array([0, 2] + [0] * 18)))
    assert growth(_params(feature_kind=np.array([0, 1] + [0] * 18)))
    # a classifier only where the sums are exact (the presorted growth's tree)
    assert not growth(_params(), np.array([1.0, 0.5, 2.0]))
    # a regressor whatever its weights, unless its criterion needs order statistics
    assert growth(_params(is_regression=True, criterion=criteria.SQUARED_ERROR),
                  np.array([1.0, 0.5, 2.0]))
    assert growth(_params(is_regression=True, criterion=criteria.POISSON))
    for order in criteria.ORDER_CRITERIA:
        assert not growth(_params(is_regression=True, criterion=order))
    assert not growth(_params(is_regression=True, n_outputs=2))
    # the best splitter: drawing at most 1/16 of the features a node, with a built-in
    # criterion without order statistics, whatever the weights and the task
    best = _params(random_splitter=False)
    assert not growth(best)  # 4 of 20 features
    assert growth(best, n_features=64)
    assert not growth(best, n_features=63)
    assert growth(best, np.array([1.0, 0.5, 2.0]), n_features=1000)
    for code in (criteria.SQUARED_ERROR, criteria.POISSON):
        assert growth(_params(random_splitter=False, is_regression=True, criterion=code),
                      np.array([1.0, 0.5, 2.0]), n_features=1000)
    # a regressor's from 1/12 of the features a node
    best_regressor = _params(random_splitter=False, is_regression=True,
                             criterion=criteria.SQUARED_ERROR)
    assert growth(best_regressor, n_features=48)
    assert not growth(best_regressor, n_features=47)
    for order in criteria.ORDER_CRITERIA:
        assert not growth(_params(random_splitter=False, is_regression=True,
                                  criterion=order), n_features=1000)
    assert not growth(_params(random_splitter=False, criterion=object()),  # a user's
                      n_features=1000)
    assert not growth(_params(random_splitter=False, n_outputs=2), n_features=1000)
    assert not growth(_params(random_splitter=False, is_regression=True, n_outputs=2),
                      n_features=1000)
    # on X of whole numbers 0 .. 255 (held as bytes), from 1/4 of the features a node
    whole = np.random.default_rng(0).integers(0, 256, (9000, 20)).astype(np.float32)
    for params in (best, best_regressor):
        assert sample_order_growth(params, ones, 20, X=whole)  # 4 of 20 features
        assert sample_order_growth(params, ones, 20, X=np.asfortranarray(whole))
        assert not sample_order_growth(_params(random_splitter=False, max_features=6,
                                               is_regression=params.is_regression,
                                               criterion=params.criterion), ones, 20,
                                       X=whole)
        assert not sample_order_growth(params, ones, 20)  # X unknown
        for other in (0.5, 256.0, -1.0, -0.0, np.nan):  # in the last block of rows
            changed = whole.copy()
            changed[-1, 7] = other
            assert not sample_order_growth(params, ones, 20, X=changed)
            assert not builder.whole_numbers(changed)
    assert builder.whole_numbers(whole) and not builder.whole_numbers(whole[:0])
    assert not sample_order_growth(_params(random_splitter=False, criterion=object()),
                                   ones, 20, X=whole)
    assert not growth(_params(random_splitter=False,
                              feature_kind=np.array([2] + [0] * 999)), n_features=1000)


def test_exact_sums():
    assert exact_sums(None)
    assert exact_sums(np.full(5, 0.3))
    assert exact_sums(np.array([1.0, 3.0, 2.0]))
    assert not exact_sums(np.array([1.0, 1.5]))
    assert not exact_sums(np.array([2.0**41, 1.0]))


@pytest.fixture
def taken(monkeypatch):
    """The shapes of the X every fit takes in sample order (a :class:`SampleX`), in order."""
    shapes = []
    of = SampleX.of.__func__

    def spy(cls, X, params, keep=None):
        held = of(cls, X, params, keep)
        shapes.append(held.shape)
        return held

    monkeypatch.setattr(SampleX, "of", classmethod(spy))
    return shapes


def test_extra_trees_classifier_grows_in_sample_order(taken):
    X, y = make_classification_data(300, 9, 3, seed=1)
    jitree.ExtraTreesClassifier(n_estimators=3, random_state=0).fit(X, y)
    assert taken == [(300, 9)]  # once for the forest
    jitree.ExtraTreesClassifier(n_estimators=3, random_state=0,
                                class_weight="balanced").fit(X, y)
    jitree.ExtraTreesRegressor(n_estimators=3, random_state=0,
                               criterion="absolute_error").fit(X, y.astype(float))
    assert len(taken) == 1
    jitree.ExtraTreesRegressor(n_estimators=3, random_state=0).fit(X, y.astype(float))
    assert taken[1:] == [(300, 9)]
    jitree.DecisionTreeClassifier(splitter="random", max_features="sqrt").fit(
        X, y, sample_weight=np.r_[np.zeros(10), np.ones(290)])
    assert taken[2:] == [(290, 9)]  # the zero-weight rows left out


def _fit_by(by_column, make):
    """``make()`` with the sample-order growth holding X by column (or by row) whatever
    the draw, and the layouts the fit's trees took."""
    layouts = []
    of = SampleX.of.__func__

    def spy(cls, X, params, keep=None):
        held = of(cls, X, params, keep)
        layouts.append(held.by_column)
        return held

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(builder, "reads_by_column", lambda params, n_features: by_column)
        patch.setattr(SampleX, "of", classmethod(spy))
        return make(), layouts


@pytest.mark.parametrize("forest, extra", [
    (jitree.ExtraTreesClassifier, {}),
    (jitree.ExtraTreesClassifier, {"bootstrap": True, "max_features": 0.5}),
    (jitree.ExtraTreesRegressor, {"max_features": "sqrt"}),
    (jitree.ExtraTreesRegressor, {"bootstrap": True, "criterion": "poisson"}),
    (jitree.RandomForestClassifier, {"max_features": 1}),  # the best splitter's growth
])
def test_trees_are_the_same_by_column_and_by_row(forest, extra):
    X, y = make_classification_data(1500, 30, 3, seed=6)
    rng = np.random.default_rng(1)
    X[rng.random(X.shape) < 0.05] = np.nan
    X[:, 3] = np.round(X[:, 3])  # ties
    weight = rng.integers(1, 3, X.shape[0]).astype(np.float64)
    if forest in (jitree.ExtraTreesRegressor,):
        y = np.exp(np.nan_to_num(X[:, 0]) / 2) + rng.random(X.shape[0]) / 3
    for X_given in (X, np.asfortranarray(X.astype(np.float32))):
        def make(X_given=X_given):
            return forest(n_estimators=3, random_state=2, n_jobs=2, **extra).fit(
                X_given, y, sample_weight=weight)
        by_row, row_layouts = _fit_by(False, make)
        by_column, column_layouts = _fit_by(True, make)
        assert row_layouts == [False] and column_layouts == [True]
        assert_same_trees(by_row, by_column)
    # a single tree, and rows left out for their zero weight
    weight[:7] = 0.0
    model = (jitree.ExtraTreeRegressor if forest is jitree.ExtraTreesRegressor
             else jitree.ExtraTreeClassifier)
    by_row, _ = _fit_by(False, lambda: model(random_state=0, max_features=3).fit(
        X, y, sample_weight=weight))
    by_column, layouts = _fit_by(True, lambda: model(random_state=0, max_features=3).fit(
        X, y, sample_weight=weight))
    assert layouts == [True]
    assert_same_trees(by_row, by_column)


def _fit_renumbering(ratio, make):
    """``make()`` with the sample-order growth renumbering its samples each time the open
    nodes' mean size falls ``ratio`` times (0: never), whatever X's size."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(builder, "renumbering", lambda params, held: ratio)
        return make()


@pytest.mark.parametrize("forest, extra", [
    (jitree.ExtraTreesClassifier, {}),  # X by column
    (jitree.ExtraTreesClassifier, {"max_features": None, "max_depth": 12}),  # by row
    (jitree.ExtraTreesClassifier, {"min_samples_leaf": 3, "criterion": "entropy"}),
    (jitree.ExtraTreesRegressor, {"max_features": 0.5}),
    (jitree.ExtraTreesRegressor, {"bootstrap": True, "criterion": "poisson"}),
    # the best splitter's growth on wide X, whatever the weights
    (jitree.RandomForestClassifier, {"max_features": 1, "class_weight": "balanced"}),
    (jitree.RandomForestRegressor, {"max_features": 2}),
    (jitree.ExtraTreesClassifier, {"max_leaf_nodes": 40}),  # best-first: never renumbers
])
def test_renumbered_samples_grow_the_same_trees(forest, extra):
    X, y = make_classification_data(1500, 30, 3, seed=7)
    rng = np.random.default_rng(2)
    X[rng.random(X.shape) < 0.05] = np.nan
    X[:, 4] = np.round(X[:, 4])  # ties
    regression = forest in (jitree.ExtraTreesRegressor, jitree.RandomForestRegressor)
    if regression:  # sums that round, and fractional weights
        y = np.exp(np.nan_to_num(X[:, 0]) / 2) + rng.random(X.shape[0]) / 3
        weight = rng.random(X.shape[0]) * 2
    else:
        weight = rng.integers(1, 3, X.shape[0]).astype(np.float64)

    def make():
        return forest(n_estimators=3, random_state=3, n_jobs=2, **extra).fit(
            X, y, sample_weight=weight)

    # every halving of the nodes' mean size, as often as the growth checks
    a, b = _fit_renumbering(0.0, make), _fit_renumbering(2.0, make)
    assert_same_trees(a, b)
    predict = "predict" if regression else "predict_proba"
    np.testing.assert_array_equal(getattr(a, predict)(X), getattr(b, predict)(X))


def test_renumbering_only_where_it_pays():
    def ratio(n_rows, n_features, max_features, dtype=np.float32, max_leaf_nodes=0):
        params = GrowParams(
            criterion=0, is_regression=False, random_splitter=True, seed=0, max_depth=0,
            min_samples_split=2, min_samples_leaf=1, min_weight_leaf=0.0,
            max_features=max_features, max_leaf_nodes=max_leaf_nodes,
            min_impurity_decrease=0.0, purity_threshold=0.0, impurity_threshold=0.0)
        return renumbering(params, SampleX(np.broadcast_to(np.zeros(1, dtype=dtype),
                                                           (n_rows, n_features))))

    assert ratio(200_000, 20, 4) == builder.RENUMBER_RATIO > 0
    assert ratio(200_000, 20, 20) > 0  # by row
    assert ratio(100_000, 20, 4, np.float64) > 0  # a column's bytes decide
    assert ratio(100_000, 20, 4) == 0  # a column that the caches hold
    assert ratio(200_000, 20, 4, max_leaf_nodes=64) == 0  # best-first
    assert ratio(200_000, 400, 25) == 0  # one feature in 16: the copies cost more
    # the best splitter's sorted draws never renumber (a quarter of the features a node on
    # whole numbers)
    params = _params(random_splitter=False, max_features=4, max_depth=0)
    assert renumbering(params, SampleX(np.zeros((200_000, 20), dtype=np.float32))) == 0


def test_extra_trees_hold_x_by_column_when_nodes_draw_few_features():
    # sqrt(64) = 8 features a node, 1/8 of them: by column; every feature: by row
    X, y = make_classification_data(300, 64, 3, seed=1)
    layouts = []
    of = SampleX.of.__func__

    def spy(cls, X, params, keep=None):
        held = of(cls, X, params, keep)
        layouts.append((held.by_column, held.shape, held.X.flags.c_contiguous))
        return held

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SampleX, "of", classmethod(spy))
        jitree.ExtraTreesClassifier(n_estimators=2, random_state=0).fit(X, y)
        jitree.ExtraTreesRegressor(n_estimators=2, random_state=0).fit(X, y.astype(float))
        jitree.ExtraTreesClassifier(n_estimators=2, random_state=0, max_features=16).fit(X, y)
        jitree.ExtraTreesClassifier(n_estimators=2, random_state=0, max_features=17).fit(X, y)
        jitree.RandomForestClassifier(n_estimators=2, random_state=0, max_features=4).fit(X, y)
    assert layouts == [(True, (300, 64), True), (False, (300, 64), True),
                       (True, (300, 64), True), (False, (300, 64), True),
                       (False, (300, 64), True)]
    # a forest's bag of rows, held by column too
    held = SampleX(np.ascontiguousarray(X.T), True)
    keep = np.random.default_rng(0).random(300) < 0.6
    bag = held.subset(keep)
    assert bag.by_column and bag.shape == (keep.sum(), 64) and bag.X.flags.c_contiguous
    np.testing.assert_array_equal(bag.X.T, X[keep])
    with pytest.raises(AssertionError):
        held.subset(keep[:-1])


def test_prefetch_is_a_hint_that_reads_nothing():
    @numba.njit
    def read(values, i):
        prefetch(values, i)
        prefetch(values, np.uint64(i))
        return values[i]

    for dtype in (np.float32, np.float64, np.int32):
        assert read(np.arange(5, dtype=dtype), 3) == 3
    # the hint is emitted, not left out
    assert all("llvm.prefetch" in read.inspect_llvm(signature)
               for signature in read.signatures)
    with pytest.raises(numba.TypingError):
        numba.njit(lambda values: prefetch(values, 0))(np.zeros((2, 2)))


@pytest.mark.parametrize("by_column", [False, True])
@pytest.mark.parametrize("order", ["C", "F"])
def test_x_is_taken_in_one_copy(by_column, order):
    rng = np.random.default_rng(4)
    X = np.asarray(rng.normal(size=(2500, 200)), order=order)
    keep = rng.random(X.shape[0]) < 0.7
    params = _params(max_features=50 if by_column else 200)
    tracemalloc.start()
    held = SampleX.of(X, params, keep)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert held.by_column == by_column and held.X.flags.c_contiguous
    np.testing.assert_array_equal(held.X.T if by_column else held.X, X[keep])
    # the held copy and at most a block of the rows or the columns (not a second copy)
    assert peak < 1.25 * held.X.nbytes
    # Fortran-ordered X, held by column, is not copied; a forest's sparse X made dense is
    # made in that order
    whole = SampleX.of(X, params)
    assert np.shares_memory(whole.X, X) == (by_column == (order == "F"))
    np.testing.assert_array_equal(whole.X.T if by_column else whole.X, X)
    # read-only X (a DataFrame's in pandas 3, a memory map) is held as writeable X is: not
    # copied when its order serves (the growth reads X read-only, one compiled type)
    X.flags.writeable = False
    for rows in (None, keep):
        held = SampleX.of(X, params, rows)
        assert np.shares_memory(held.X, X) == (rows is None and by_column == (order == "F"))
        np.testing.assert_array_equal(held.X.T if by_column else held.X,
                                      X if rows is None else X[keep])
    # a strided view of F-ordered X stays F-ordered
    assert jitree.model.validation.check_X(X[::2]).flags.f_contiguous == (order == "F")


def test_forest_makes_sparse_x_dense_in_the_order_it_reads():
    scipy_sparse = pytest.importorskip("scipy.sparse")
    X, y = make_classification_data(300, 64, 3, seed=1)
    X[X < 0.5] = 0.0
    given = []
    of = SampleX.of.__func__

    def spy(cls, X, params, keep=None):
        given.append(X.flags.f_contiguous)
        return of(cls, X, params, keep)

    # a budget of leaves: the dense growth, not the sparse one
    def forest():
        return jitree.ExtraTreesClassifier(n_estimators=2, random_state=0, max_leaf_nodes=40)

    expected = forest().fit(X, y)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SampleX, "of", classmethod(spy))
        model = forest().fit(scipy_sparse.csr_matrix(X), y)
    assert given == [True]
    assert_same_trees(expected, model)
    # class weights take the presorted growth, which reads the Fortran-ordered dense X
    balanced = dict(n_estimators=2, random_state=0, max_leaf_nodes=40, class_weight="balanced")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SampleX, "of", classmethod(spy))
        model = jitree.ExtraTreesClassifier(**balanced).fit(scipy_sparse.csr_matrix(X), y)
    assert given == [True]  # no sample-order growth
    assert_same_trees(jitree.ExtraTreesClassifier(**balanced).fit(X, y), model)


@st.composite
def sort_keys(draw):
    n = draw(st.sampled_from([draw(st.integers(1, 40)), draw(st.integers(RADIX_MIN - 2, 700))]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["normal", "ties", "float32", "special"]))
    if kind == "normal":
        x = rng.normal(size=n) * 10.0 ** rng.integers(-300, 300, n)
    elif kind == "ties":
        x = rng.integers(-3, 3, n).astype(float)
    elif kind == "float32":
        x = rng.normal(size=n).astype(np.float32).astype(float)
    else:
        x = rng.choice([0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, 5e-324, -5e-324, 1.0,
                        -1.0, np.finfo(float).max, -np.finfo(float).max], n)
    return x, draw(st.integers(0, 3))


@settings(deadline=None, max_examples=150)
@given(sort_keys())
def test_argsort_keys_is_numpys_stable_argsort(case):
    # the best splitter's sort of a node's values: positions by value, NaN last, equal
    # values (-0.0 and 0.0 too) in position order
    x, spare_room = case
    n = x.shape[0]
    size = n + spare_room
    key = np.full(size, 7.0)
    keys = (key, key.view(np.uint64), np.empty(size, dtype=np.uint64),
            np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int64),
            np.empty((8, 256), dtype=np.int64))
    key[:n] = x
    argsort_keys(keys, n)
    np.testing.assert_array_equal(keys[3][:n], np.argsort(x, kind="stable"))


def test_wide_random_forest_grows_in_sample_order(taken):
    # sqrt(400) = 20 features a node, 1/20 of them: the sorted draw; 1/16 of 256 is 16
    X, y = make_classification_data(300, 400, 3, seed=1)
    jitree.RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)
    assert taken == [(300, 400)]
    jitree.RandomForestClassifier(n_estimators=3, random_state=0).fit(X[:, :100], y)
    jitree.RandomForestRegressor(n_estimators=3, random_state=0).fit(X, y.astype(float))
    jitree.RandomForestRegressor(n_estimators=3, random_state=0, max_features="sqrt",
                                 criterion="absolute_error").fit(X, y.astype(float))
    assert taken == [(300, 400)]  # narrow X, every feature a node, order statistics
    jitree.RandomForestRegressor(n_estimators=3, random_state=0, max_features="sqrt").fit(
        X, y.astype(float))
    jitree.RandomForestClassifier(n_estimators=3, random_state=0,
                                  class_weight={0: 1, 1: 2, 2: 3}).fit(X, y)
    jitree.DecisionTreeClassifier(max_features="sqrt", random_state=0).fit(X, y)
    assert taken[1:] == [(300, 400)] * 3


# -- X's values as bytes (SampleX.codes) ---------------------------------------------------------

@settings(deadline=None, max_examples=150)
@given(st.integers(0, 40), st.integers(1, 6), st.sampled_from([np.float32, np.float64]),
       st.lists(st.sampled_from([0.5, 256.0, -1.0, -0.0, np.nan, np.inf, 1e-300, 255.0]),
                max_size=2), st.integers(0, 2**32 - 1))
def test_small_codes_is_the_numpy_test(n, d, dtype, others, seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 256, (n, d)).astype(dtype)
    for value in others:  # a few values that are not whole numbers 0 .. 255, anywhere
        if X.size:
            X.flat[rng.integers(X.size)] = value
    codes = np.full(X.shape, 7, dtype=np.uint8)
    whole = bool(np.all((X >= 0) & (X <= 255) & (X == np.floor(X)) & ~np.signbit(X)))
    assert sample_order.small_codes(X, codes) == whole
    if whole:
        np.testing.assert_array_equal(codes, X.astype(np.uint8))
        assert builder.byte_codes(X) is not None or X.size == 0
    else:
        assert builder.byte_codes(X) is None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("make", [
    lambda: jitree.RandomForestClassifier(n_estimators=3, random_state=0),
    lambda: jitree.RandomForestClassifier(n_estimators=2, random_state=1, bootstrap=False,
                                          class_weight="balanced"),
    lambda: jitree.RandomForestRegressor(n_estimators=2, random_state=2, max_features="sqrt"),
    lambda: jitree.DecisionTreeClassifier(max_features="sqrt", random_state=3)])
def test_byte_codes_grow_the_same_trees(make, dtype, monkeypatch):
    # binary, one-hot-like and 10-level features: whole numbers 0 .. 9, held as bytes by the
    # best splitter's sample-order growth (400 features, sqrt: 20 a node); the trees are
    # those grown from X's values, and the presorted growth's
    rng = np.random.default_rng(0)
    X = np.hstack([rng.random((400, 300)) < rng.uniform(0.02, 0.5, 300),
                   rng.integers(0, 10, (400, 90)),
                   rng.integers(0, 256, (400, 10))]).astype(dtype)  # sorted by radix
    y = (X[:, 0] + X[:, 301] / 5 + rng.random(400) > 1.2).astype(int)
    held = []
    real = builder.byte_codes

    def spy(X):
        held.append(real(X))
        return held[-1]

    def fit():
        model = make()
        return model.fit(X, y.astype(float) if "Regressor" in type(model).__name__ else y)

    monkeypatch.setattr(builder, "byte_codes", spy)
    with_codes = fit()
    assert held and all(codes is not None and codes.dtype == np.uint8 for codes in held)
    monkeypatch.setattr(builder, "byte_codes", lambda X: None)
    assert_same_trees(with_codes, fit())
    monkeypatch.setattr(builder, "byte_codes", real)
    presorted, sampled = _fit_both(fit)
    assert_same_trees(presorted, sampled)
    assert_same_trees(with_codes, sampled)


@st.composite
def byte_coded_fits(draw):
    # X of whole numbers 0 .. 255 (held as bytes; nodes whose samples fill a feature's
    # range searched by its histogram, kernels.split.scan_codes), classes beyond the
    # histogram's CODE_CLASSES too, whole weights (zeros among them) or none
    n = draw(st.integers(4, 400))
    d = draw(st.integers(1, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    top = draw(st.sampled_from([2, 6, 40, 255]))
    X = rng.integers(0, top + 1, (n, d)).astype(draw(st.sampled_from([np.float32,
                                                                      np.float64])))
    y = rng.integers(0, draw(st.integers(1, 10)), n)
    w = {"none": None, "whole": rng.integers(0, 4, n).astype(np.float64)}[
        draw(st.sampled_from(["none", "whole"]))]
    if w is not None and not w.sum() > 0:
        w[0] = 1.0
    params = dict(
        random_state=draw(st.integers(0, 1000)), max_features=draw(st.integers(1, d)),
        criterion=draw(st.sampled_from(["gini", "entropy", "misclassification",
                                        "gain_ratio", "twoing"])),
        min_samples_leaf=draw(st.integers(1, 5)),
        min_weight_fraction_leaf=draw(st.sampled_from([0.0, 0.1])),
        max_depth=draw(st.sampled_from([None, 3])),
        max_leaf_nodes=draw(st.sampled_from([None, 6])))
    return X, y, w, params


@settings(deadline=None, max_examples=80)
@given(byte_coded_fits())
def test_byte_coded_features_grow_the_presorted_tree(case):
    # a histogram's candidates are the sorted scan's, scored on the same whole-number sums:
    # the same scores to the bit, and so the same trees
    X, y, w, params = case
    a, b = _fit_both(lambda: jitree.DecisionTreeClassifier(**params).fit(X, y,
                                                                         sample_weight=w))
    assert_same_trees(a, b)


def test_byte_codes_only_for_the_best_splitter_on_whole_numbers():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 3, (50, 40)).astype(float)
    best = SampleX.of(X, _params(random_splitter=False, max_features=2))
    np.testing.assert_array_equal(best.codes, X.astype(np.uint8))
    assert not best.codes.flags.writeable
    np.testing.assert_array_equal(best.subset(np.arange(50) % 3 == 0).codes,
                                  X[::3].astype(np.uint8))
    np.testing.assert_array_equal(SampleX.of(X, _params(random_splitter=False, max_features=2),
                                             np.arange(50) % 2 == 1).codes,
                                  X[1::2].astype(np.uint8))
    # the random splitter reads X's values where it holds them; the others hold no codes
    assert SampleX.of(X, _params(max_features=2)).codes.size == 0
    X[3, 5] = 0.5
    assert SampleX.of(X, _params(random_splitter=False, max_features=2)).codes.size == 0


@settings(deadline=None, max_examples=150)
@given(st.integers(1, 300), st.integers(0, 255), st.integers(0, 255),
       st.integers(0, 2**32 - 1))
def test_counting_argsort_is_numpys_stable_argsort(n, a, b, seed):
    low, high = min(a, b), max(a, b)
    key = np.random.default_rng(seed).integers(low, high + 1, n).astype(np.float64)
    order = np.full(n + 1, -1, dtype=np.int64)
    counts = np.full(256, 7, dtype=np.int64)
    sample_order.counting_argsort(key, n, key.min(), key.max(), order, counts)
    np.testing.assert_array_equal(order[:n], np.argsort(key, kind="stable"))


@pytest.mark.parametrize("dtype, order", [(np.float32, "C"), (np.float64, "F")])
def test_whole_numbers_grow_in_sample_order_from_a_quarter_of_the_features(dtype, order):
    # 40 features, sqrt: 6 a node, more than 1/16 of them: the presorted growth on
    # continuous X, the sample-order growth (X held as bytes) on whole numbers; the same
    # trees either way
    rng = np.random.default_rng(1)
    X = np.asarray(np.hstack([rng.random((500, 20)) < 0.3, rng.integers(0, 6, (500, 20))]),
                   dtype=dtype, order=order)
    y = (X[:, 0] + X[:, 25] / 3 + rng.random(500) > 1.5).astype(int)
    held = []
    of = SampleX.of.__func__

    def spy(cls, X, params, keep=None):
        held.append(of(cls, X, params, keep))
        return held[-1]

    def fit():
        return jitree.RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(SampleX, "of", classmethod(spy))
        sampled = fit()
        assert len(held) == 1 and held[0].codes.shape == X.shape
        fit_tree = jitree.DecisionTreeClassifier(max_features="sqrt", random_state=0)
        fit_tree.fit(X, y)
        assert len(held) == 2 and held[1].codes.size == X.size
        continuous = X + 0.5
        jitree.RandomForestClassifier(n_estimators=2, random_state=0).fit(continuous, y)
        assert len(held) == 2  # presorted
    with pytest.MonkeyPatch.context() as patch:
        _forced(patch, False)
        assert_same_trees(fit(), sampled)
