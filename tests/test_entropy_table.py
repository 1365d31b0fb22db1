"""Entropy's split score through the table of m log m (TreeData.xlogx): the same numbers as
the logarithms, so the same trees, whether a fit has the table or not, dense (the table) or
sparse (the logarithms), weighted or with its rows repeated."""

import math

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

import jitree
from jitree.kernels import criteria
from jitree.model import builder


def _naive_weighted_entropy(stats, weight):
    """weight * H in nats, the textbook form sum_c -s_c log(s_c / W)."""
    p = stats[stats > 0] / weight
    return float(-(stats[stats > 0] * np.log(p)).sum())


def test_the_table_holds_the_logarithms_numbers():
    table = builder.xlogx_table(criteria.ENTROPY, np.ones(5000))
    assert table.shape[0] >= 5001
    assert table[0] == 0.0
    # exactly m * log(m) as the C library's log gives it (Python's math.log), which the
    # scans' scalar path calls: every entry below 5,000, then every 997th
    for m in list(range(1, 5000)) + list(range(5000, table.shape[0], 997)):
        assert table[m] == m * math.log(m), m
    # bootstrap counts sum to the rows drawn; other criteria take no table
    assert builder.xlogx_table(criteria.ENTROPY, np.full(3, 1e9)).shape[0] \
        == builder.XLOGX_LENGTH
    assert builder.xlogx_table(criteria.GINI, np.ones(5000)).shape[0] == 0


@st.composite
def class_weights(draw):
    n_classes = draw(st.integers(1, 6))
    whole = draw(st.booleans())
    if whole:
        values = draw(st.lists(st.integers(0, 3000), min_size=n_classes, max_size=n_classes))
    else:
        # the fits' weights: the largest scaled into [1, 2) (see builder.Scaling)
        values = draw(st.lists(st.one_of(st.just(0.0), st.floats(1e-6, 3000.0)),
                               min_size=n_classes, max_size=n_classes))
    stats = np.array(values, dtype=np.float64)
    if not stats.sum() > 0:
        stats[0] = 1.0
    return stats


@settings(max_examples=200, deadline=None)
@given(class_weights())
def test_looked_up_entropy_is_the_computed_one_bit_for_bit(stats):
    table = builder.xlogx_table(criteria.ENTROPY, np.ones(2000))
    weight = float(stats.sum())
    computed = criteria.entropy_sum(stats, weight)
    assert criteria.table_entropy_sum(stats, weight, table) == computed
    # and both are weight * H, up to rounding of the W log W - sum s log s form
    naive = _naive_weighted_entropy(stats, weight)
    assert computed == pytest.approx(naive, rel=1e-12, abs=1e-12 * weight * math.log(weight + 2))


def test_split_scores_of_every_path_agree():
    left = np.array([3.0, 0.0, 5.0])
    right = np.array([1.0, 7.0, 2.0])
    builtin = criteria.builtin_score(criteria.ENTROPY, left, right, 8.0, 10.0, 0.0)
    expected = -(_naive_weighted_entropy(left, 8.0) + _naive_weighted_entropy(right, 10.0))
    assert builtin == pytest.approx(expected, rel=1e-14)
    # a multi-output measure of one output adds its terms in its own loop
    measure = criteria.builtin(criteria.ENTROPY, np.array([0, 3]))
    assert criteria.split_score(measure, left, right, 8.0, 10.0, 0.0) == builtin
    assert criteria.child_score(measure, left, 8.0) + criteria.child_score(measure, right,
                                                                            10.0) == builtin


def _tied_data(n=600, seed=3):
    """Few distinct values a feature: many candidates of equal counts, ties between
    features."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(n, 5)).astype(np.float64)
    X[:, 4] = rng.normal(size=n)
    y = (X[:, 0] + rng.integers(0, 3, n)) % 4
    return X, y


def _same_trees(a, b):
    for name in ("feature", "threshold", "children_left", "children_right"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_allclose(a.value, b.value, rtol=1e-12)


def _grown_without_table(monkeypatch, make, X, y, **fit):
    with monkeypatch.context() as patch:
        patch.setattr(builder, "xlogx_table", lambda code, weight: np.empty(0))
        return make().fit(X, y, **fit)


@pytest.mark.parametrize("weights", ["none", "whole", "fractions"])
def test_entropy_trees_are_the_same_with_or_without_the_table(monkeypatch, weights):
    X, y = _tied_data()
    rng = np.random.default_rng(4)
    fit = {}
    if weights == "whole":
        fit["sample_weight"] = rng.integers(1, 4, 600).astype(np.float64)
    elif weights == "fractions":
        fit["sample_weight"] = rng.uniform(0.5, 2.0, 600)

    def make():
        return jitree.DecisionTreeClassifier(criterion="entropy", random_state=0)

    _same_trees(make().fit(X, y, **fit).tree_,
                _grown_without_table(monkeypatch, make, X, y, **fit).tree_)

    def forest():
        return jitree.RandomForestClassifier(n_estimators=3, criterion="entropy",
                                             random_state=0, n_jobs=1)

    ours = forest().fit(X, y, **fit)
    plain = _grown_without_table(monkeypatch, forest, X, y, **fit)
    for a, b in zip(ours.estimators_, plain.estimators_, strict=True):
        _same_trees(a.tree_, b.tree_)


def test_bootstrap_counts_reach_the_kernels_as_whole_numbers():
    """A bag's counts (and whole-number weights) are the kernels' weights unscaled, so
    entropy's scans look their sides up in the table."""
    counts = np.array([1.0, 3.0, 2.0, 7.0, 1.0])
    assert builder.Scaling.of(None, counts, False).weight_unit == 1.0
    assert builder.Scaling.of(None, 4 * counts, False).weight_unit == 4.0
    assert builder.Scaling.of(None, counts / 2, False).weight_unit == 0.5
    # weights that are not whole multiples of a power of two: the largest into [1, 2)
    assert builder.Scaling.of(None, np.array([0.3, 0.7, 3.5]), False).weight_unit == 2.0
    # whole numbers too many for exact sums: the largest into [1, 2)
    assert builder.Scaling.of(None, np.array([1.0, 2.0 ** 60]), False).weight_unit == 2.0 ** 60


def test_entropy_whole_weights_grow_the_tree_of_the_repeated_rows():
    X, y = _tied_data(n=300, seed=8)
    weight = np.random.default_rng(9).integers(1, 4, X.shape[0])
    for make in (lambda: jitree.DecisionTreeClassifier(criterion="entropy"),
                 lambda: jitree.DecisionTreeClassifier(criterion="entropy",
                                                       max_features=3, random_state=0)):
        weighted = make().fit(X, y, sample_weight=weight.astype(np.float64))
        repeated = make().fit(np.repeat(X, weight, axis=0), np.repeat(y, weight))
        for name in ("feature", "threshold", "children_left"):
            np.testing.assert_array_equal(getattr(weighted.tree_, name),
                                          getattr(repeated.tree_, name), err_msg=name)


def test_sparse_entropy_trees_are_the_dense_ones():
    """The sparse growth scores through the logarithms (criteria.builtin_score), the dense
    scans through the table: the same trees, ties and all."""
    X, y = _tied_data(n=500, seed=11)
    X[X < 2] = 0.0  # stored values: the others
    for make in (lambda: jitree.DecisionTreeClassifier(criterion="entropy"),
                 lambda: jitree.RandomForestClassifier(n_estimators=3, criterion="entropy",
                                                       random_state=0, n_jobs=1)):
        dense = make().fit(X, y)
        sparse = make().fit(scipy.sparse.csc_matrix(X), y)
        for a, b in zip(getattr(dense, "estimators_", [dense]),
                        getattr(sparse, "estimators_", [sparse]), strict=True):
            _same_trees(a.tree_, b.tree_)
