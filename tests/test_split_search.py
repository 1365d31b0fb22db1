"""Every split the builder chooses is the brute-force best (naive twin), for every criterion."""

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import jitree
from jitree.kernels.split import may_beat

from naive import brute_force_best, node_members, split_value

CLASSIFICATION = ["gini", "entropy", "misclassification", "gain_ratio", "cart", "twoing"]


@st.composite
def datasets(draw, regression=False):
    n = draw(st.integers(2, 40))
    d = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    # few distinct values: many ties between values and between candidate splits
    levels = draw(st.integers(2, 8))
    X = rng.integers(0, levels, (n, d)).astype(np.float64) * draw(st.sampled_from([1.0, 0.1]))
    if regression:
        y = np.round(rng.normal(size=n), 2)
    else:
        y = rng.integers(0, draw(st.integers(2, 4)), n)
    weighted = draw(st.booleans())
    w = rng.integers(1, 4, n).astype(np.float64) if weighted else np.ones(n)
    return X, y, w


def _check_every_split_is_best(model, X, y, w, criterion, n_classes, min_samples_leaf=1):
    tree = model.tree_
    members = node_members(tree, X)
    for node in range(tree.node_count):
        rows = members[node]
        assert rows.sum() == tree.n_node_samples[node]
        assert w[rows].sum() == pytest.approx(tree.weighted_n_node_samples[node])
        best = brute_force_best(criterion, X[rows], y[rows], w[rows], n_classes,
                                min_samples_leaf)
        if tree.children_left[node] < 0:
            # a leaf of a fully grown tree is pure or has no admissible split left
            pure = np.unique(y[rows]).shape[0] == 1
            assert pure or best == -np.inf or tree.impurity[node] <= 1e-12, node
            continue
        goes_left = X[rows, tree.feature[node]] <= tree.threshold[node]
        chosen = split_value(criterion, y[rows], w[rows], goes_left, n_classes)
        # tolerance: the kernel ranks by an algebraically equal proxy, rounding differs
        assert chosen == pytest.approx(best, rel=1e-9, abs=1e-12), (node, chosen, best)


@given(data=datasets(), criterion=st.sampled_from(CLASSIFICATION))
def test_classifier_splits_are_brute_force_best(data, criterion):
    X, y, w = data
    y = np.unique(y, return_inverse=True)[1].reshape(-1)
    model = jitree.DecisionTreeClassifier(criterion=criterion).fit(X, y, sample_weight=w)
    _check_every_split_is_best(model, X, y, w, criterion, int(y.max()) + 1)


@given(data=datasets(regression=True), min_samples_leaf=st.integers(1, 3))
def test_regressor_splits_are_brute_force_best(data, min_samples_leaf):
    X, y, w = data
    model = jitree.DecisionTreeRegressor(min_samples_leaf=min_samples_leaf).fit(
        X, y, sample_weight=w)
    tree = model.tree_
    members = node_members(tree, X)
    for node in np.flatnonzero(tree.children_left >= 0):
        rows = members[node]
        best = brute_force_best("squared_error", X[rows], y[rows], w[rows], 0,
                                min_samples_leaf)
        goes_left = X[rows, tree.feature[node]] <= tree.threshold[node]
        assert goes_left.sum() >= min_samples_leaf and (~goes_left).sum() >= min_samples_leaf
        chosen = split_value("squared_error", y[rows], w[rows], goes_left, 0)
        assert chosen == pytest.approx(best, rel=1e-7, abs=1e-9)


def test_tie_rule_lowest_feature_then_lowest_threshold():
    # feature 1 is a copy of feature 0: identical splits; two equally good thresholds on it
    x = np.array([0.0, 1.0, 2.0, 3.0])
    X = np.column_stack([x, x])
    y = np.array([0, 1, 1, 0])  # x<=0.5 and x<=2.5 separate one sample each
    model = jitree.DecisionTreeClassifier(max_depth=1).fit(X, y)
    assert model.tree_.feature[0] == 0
    assert model.tree_.threshold[0] == 0.5


def test_min_samples_leaf_and_split_respected():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = rng.integers(0, 2, 300)
    model = jitree.DecisionTreeClassifier(min_samples_leaf=7, min_samples_split=20).fit(X, y)
    tree = model.tree_
    leaves = tree.children_left < 0
    assert tree.n_node_samples[leaves].min() >= 7
    assert tree.n_node_samples[~leaves].min() >= 20


def _below(value, steps):
    """``value`` moved ``steps`` representable doubles down."""
    for _ in range(steps):
        value = np.nextafter(value, -np.inf)
    return value


@example(a=5e-324, b=0.0, weight_left=0.4, weight_right=0.4, steps=1)
@example(a=8.45e-315, b=3.585e-310, weight_left=0.304, weight_right=2.617, steps=1)
@example(a=0.0, b=0.0, weight_left=1.0, weight_right=0.5, steps=1)
@given(a=st.floats(0.0, 1e12), b=st.floats(0.0, 1e12), weight_left=st.floats(1e-6, 1e9),
       weight_right=st.floats(1e-6, 1e9), steps=st.integers(1, 3))
def test_a_candidate_passed_by_without_division_cannot_beat_the_best(
        a, b, weight_left, weight_right, steps):
    """The scans divide only where ``may_beat`` says a candidate may beat the best (see
    SURELY_BELOW): for a best one to three representable doubles below the score as a scan
    computes it, ``may_beat`` says True. Gini computes (a W_r + b W_l) / (W_l W_r) (a, b: the
    sides' sums of squared class weights), squared error a / W_l + b / W_r (a, b: the sides'
    squared sums of w y); subnormal values included (the explicit examples: scores whose
    products round to zero or lose their relative precision). A best of zero or less, or
    minus infinity, always computes the score."""
    numerator = a * weight_right + b * weight_left
    denominator = weight_left * weight_right
    for score in (numerator / denominator, a / weight_left + b / weight_right):
        best = _below(score, steps)
        assert score > best
        assert may_beat(numerator, denominator, best), (score, best)
    for best in (0.0, -5e-324, -1.0, -np.inf):
        assert may_beat(numerator, denominator, best)
    if 2.0 ** -800 < numerator / denominator < 1e300:
        # a candidate of half the best is passed by: the filter is on
        assert not may_beat(numerator, denominator, 2.0 * (numerator / denominator))
