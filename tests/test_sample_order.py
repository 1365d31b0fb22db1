"""The random splitter's sample-order growth (``jitree.kernels.sample_order``): its passes
against NumPy twins, its trees against the presorted growth's (identical, under Hypothesis),
and when a fit takes it."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitree
import jitree.model._base as base_module
import jitree.model.builder as builder
import jitree.model.forest as forest_module
from jitree.datasets import make_classification_data
from jitree.kernels.sample_order import column_range, gather_sides
from jitree.model.builder import ByRow, GrowParams, exact_sums, sample_order_growth

_MODULES = (builder, base_module, forest_module)
TREE_ARRAYS = ("feature", "threshold", "children_left", "children_right", "missing_left",
               "n_node_samples", "value", "impurity", "weighted_n_node_samples")


def _forced(patch, sample_order):
    """Make every fit grow in sample order whenever it grows the same tree
    (``sample_order`` true, whatever ``max_features``), or never."""
    if sample_order:
        def growth(params, n_features, sample_weight):
            return builder.sample_order_exact(params, sample_weight)
    else:
        def growth(params, n_features, sample_weight):
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
    n = draw(st.integers(1, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    column = rng.integers(-3, 4, n).astype(dtype)
    column[rng.random(n) < draw(st.sampled_from([0.0, 0.3, 1.0]))] = np.nan
    samples = rng.permutation(n).astype(np.int32)
    start = draw(st.integers(0, n - 1))
    end = draw(st.integers(start + 1, n))
    return column, samples, start, end, rng


@settings(deadline=None, max_examples=60)
@given(segments())
def test_column_range_is_numpy_min_max(segment):
    column, samples, start, end, _ = segment
    values = column[samples[start:end]].astype(np.float64)
    present = values[~np.isnan(values)]
    X = np.column_stack([np.ones_like(column), column])  # feature 1
    low, high, count = column_range(X, 1, samples, start, end)
    assert count == present.size
    if present.size:
        assert (low, high) == (present.min(), present.max())
    else:
        assert (low, high) == (np.inf, -np.inf)


@settings(deadline=None, max_examples=60)
@given(segments(), st.booleans())
def test_gather_sides_is_numpy_selection(segment, with_labels):
    column, samples, start, end, rng = segment
    n = column.shape[0]
    label = rng.integers(0, 3, n).astype(np.uint8) if with_labels else np.empty(0, np.uint8)
    threshold = float(rng.integers(-3, 4)) + 0.5 * float(rng.integers(0, 2))
    node = samples[start:end]
    values = column[node]
    missing = np.isnan(values)
    left = node[values <= threshold]
    index_out = np.full(n, -1, dtype=np.int32)
    label_out = np.zeros(n if with_labels else 0, dtype=np.uint8)
    X = np.column_stack([column, np.ones_like(column)])  # feature 0
    n_left = gather_sides(X, 0, samples, label, start, end, threshold,
                          int(missing.sum()), index_out, label_out)
    assert n_left == left.size
    np.testing.assert_array_equal(index_out[start:start + n_left], left)
    np.testing.assert_array_equal(index_out[end - missing.sum():end], node[missing])
    if with_labels:
        np.testing.assert_array_equal(label_out[start:start + n_left], label[left])
        np.testing.assert_array_equal(label_out[end - missing.sum():end],
                                      label[node[missing]])


# -- the trees, against the presorted growth's ---------------------------------------------------

@st.composite
def fits(draw):
    n = draw(st.integers(2, 80))
    d = draw(st.integers(1, 5))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.integers(0, draw(st.integers(2, 8)), (n, d)).astype(
        draw(st.sampled_from([np.float32, np.float64])))
    X[rng.random((n, d)) < draw(st.sampled_from([0.0, 0.2]))] = np.nan
    n_classes = draw(st.integers(2, 4))
    y = rng.integers(0, n_classes, n)
    weight = draw(st.sampled_from(["none", "whole", "zeros", "equal"]))
    w = {"none": None, "whole": rng.integers(1, 4, n).astype(np.float64),
         "zeros": rng.integers(0, 3, n).astype(np.float64),
         "equal": np.full(n, 0.3)}[weight]
    if w is not None and not w.sum() > 0:
        w[0] = 1.0
    params = dict(
        splitter="random", random_state=draw(st.integers(0, 1000)),
        max_features=draw(st.integers(1, d)),
        criterion=draw(st.sampled_from(["gini", "entropy", "misclassification",
                                        "gain_ratio"])),
        min_samples_leaf=draw(st.integers(1, 4)),
        max_depth=draw(st.sampled_from([None, 1, 3])),
        max_leaf_nodes=draw(st.sampled_from([None, 2, 5])),
        min_impurity_decrease=draw(st.sampled_from([0.0, 0.01])))
    if n_classes == 2 and draw(st.booleans()):
        params["monotonic_cst"] = rng.integers(-1, 2, d).tolist()
    if d >= 2 and draw(st.booleans()):
        params["interaction_cst"] = [[0, 1]] + ([[1, d - 1]] if d > 2 else [])
    return X, y, w, params


@settings(deadline=None, max_examples=80)
@given(fits())
def test_sample_order_tree_is_the_presorted_tree_under_hypothesis(case):
    X, y, w, params = case
    a, b = _fit_both(lambda: jitree.DecisionTreeClassifier(**params).fit(
        X, y, sample_weight=w))
    assert_same_trees(a, b)


@pytest.mark.parametrize("bootstrap", [False, True])
def test_sample_order_forest_is_the_presorted_forest(bootstrap):
    X, y = make_classification_data(2000, 8, 3, seed=4)
    X[np.random.default_rng(0).random(X.shape) < 0.05] = np.nan
    a, b = _fit_both(lambda: jitree.ExtraTreesClassifier(
        n_estimators=4, bootstrap=bootstrap, random_state=1, n_jobs=2).fit(X, y))
    assert_same_trees(a, b)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_sample_order_tree_on_threads_is_the_one_thread_tree():
    # the search and the partition run in parallel blocks on a large input
    X, y = make_classification_data(60_000, 10, 3, seed=5)
    one = jitree.DecisionTreeClassifier(splitter="random", max_features=3, random_state=0,
                                        n_jobs=1).fit(X, y)
    two = jitree.DecisionTreeClassifier(splitter="random", max_features=3, random_state=0,
                                        n_jobs=2).fit(X, y)
    assert_same_trees(one, two)


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


def test_sample_order_growth_only_where_it_grows_the_same_tree_faster():
    ones = np.ones(10)
    assert sample_order_growth(_params(), 20, ones)
    assert sample_order_growth(_params(max_features=10), 20, ones)
    assert not sample_order_growth(_params(max_features=11), 20, ones)  # slower
    assert not sample_order_growth(_params(random_splitter=False), 20, ones)
    assert not sample_order_growth(_params(is_regression=True), 20, ones)
    assert not sample_order_growth(_params(n_outputs=2), 20, ones)
    assert not sample_order_growth(_params(feature_kind=np.array([0, 2] + [0] * 18)), 20, ones)
    assert sample_order_growth(_params(feature_kind=np.array([0, 1] + [0] * 18)), 20, ones)
    assert not sample_order_growth(_params(), 20, np.array([1.0, 0.5, 2.0]))


def test_exact_sums():
    assert exact_sums(None)
    assert exact_sums(np.full(5, 0.3))
    assert exact_sums(np.array([1.0, 3.0, 2.0]))
    assert not exact_sums(np.array([1.0, 1.5]))
    assert not exact_sums(np.array([2.0**41, 1.0]))


def test_extra_trees_classifier_grows_in_sample_order(monkeypatch):
    taken = []
    of = ByRow.of.__func__

    def spy(cls, X):
        taken.append(X.shape)
        return of(cls, X)

    monkeypatch.setattr(ByRow, "of", classmethod(spy))
    X, y = make_classification_data(300, 9, 3, seed=1)
    jitree.ExtraTreesClassifier(n_estimators=3, random_state=0).fit(X, y)
    assert taken == [(300, 9)]  # once for the forest
    jitree.ExtraTreesRegressor(n_estimators=3, random_state=0).fit(X, y.astype(float))
    jitree.ExtraTreesClassifier(n_estimators=3, random_state=0,
                                class_weight="balanced").fit(X, y)
    assert len(taken) == 1
    jitree.DecisionTreeClassifier(splitter="random", max_features="sqrt").fit(
        X, y, sample_weight=np.r_[np.zeros(10), np.ones(290)])
    assert taken[1:] == [(290, 9)]  # the zero-weight rows left out
