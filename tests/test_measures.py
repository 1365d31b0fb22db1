"""Criteria against naive twins and the textbook reference values (SPEC section 8)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitree

from conftest import load_csv
from naive import NODE_MEASURE, split_value, variance

CLASSIFICATION = ["gini", "entropy", "misclassification", "gain_ratio", "cart", "twoing"]


def test_binary_tests_reference_values():
    # binary_tests.csv: H(y) = 1 bit; x > 0 gains 0.0817 bits; x <= 0.25 gains 0.4591 bits.
    _, rows = load_csv("binary_tests.csv")
    x = rows[:, 0].astype(float)
    y = rows[:, 1].astype(int)
    assert jitree.impurity(y, "entropy") == pytest.approx(1.0, abs=1e-12)
    assert jitree.split_gain(y, x > 0, "entropy") == pytest.approx(0.0817, abs=5e-5)
    assert jitree.split_gain(y, x <= 0.25, "entropy") == pytest.approx(0.4591, abs=5e-5)
    # the best threshold split found by a tree is x <= 0.25 (midpoint of 0.2 and 0.3)
    stump = jitree.DecisionTreeClassifier(criterion="entropy", max_depth=1).fit(x[:, None], y)
    assert stump.tree_.threshold[0] == pytest.approx(0.25)
    root, left, right = stump.tree_.impurity[:3]
    w = stump.tree_.weighted_n_node_samples
    assert root - (w[1] * left + w[2] * right) / w[0] == pytest.approx(0.4591, abs=5e-5)


def test_playgolf_reference_values():
    # Quinlan's PlayGolf: root entropy 0.9403; multiway gains of each attribute.
    header, rows = load_csv("playgolf.csv")
    y = rows[:, -1]
    assert jitree.impurity(y, "entropy") == pytest.approx(0.9403, abs=5e-5)
    expected = {"outlook": 0.2467, "temperature": 0.0292, "humidity": 0.1518, "windy": 0.0481}
    for column, gain in expected.items():
        groups = rows[:, header.index(column)]
        assert jitree.split_gain(y, groups, "entropy") == pytest.approx(gain, abs=5e-5)
    gains = {c: jitree.split_gain(y, rows[:, header.index(c)], "entropy") for c in expected}
    assert max(gains, key=gains.get) == "outlook"


labels = hnp.arrays(np.int64, st.integers(1, 40), elements=st.integers(0, 3))


@given(y=labels, criterion=st.sampled_from(["gini", "entropy", "misclassification"]),
       weighted=st.booleans(), seed=st.integers(0, 2**16))
def test_impurity_matches_naive(y, criterion, weighted, seed):
    w = np.random.default_rng(seed).uniform(0.1, 3.0, y.shape[0]) if weighted else None
    expected = NODE_MEASURE[criterion](y, np.ones(y.shape[0]) if w is None else w, 4)
    assert jitree.impurity(y, criterion, sample_weight=w) == pytest.approx(expected, abs=1e-12)


@given(y=labels, seed=st.integers(0, 2**16), criterion=st.sampled_from(CLASSIFICATION),
       weighted=st.booleans())
def test_two_group_split_gain_matches_naive(y, seed, criterion, weighted):
    rng = np.random.default_rng(seed)
    goes_left = rng.random(y.shape[0]) < 0.5
    if goes_left.all() or not goes_left.any():
        goes_left[0] = not goes_left[0]
    if y.shape[0] < 2:
        return
    w = rng.uniform(0.1, 3.0, y.shape[0]) if weighted else np.ones(y.shape[0])
    expected = split_value(criterion, y, w, goes_left, 4)
    got = jitree.split_gain(y, goes_left, criterion, sample_weight=w)
    assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)


@given(y=hnp.arrays(np.float64, st.integers(2, 40),
                    elements=st.floats(-100, 100, allow_nan=False)),
       seed=st.integers(0, 2**16))
def test_variance_reduction_matches_naive(y, seed):
    rng = np.random.default_rng(seed)
    groups = rng.integers(0, 3, y.shape[0])
    if np.unique(groups).shape[0] < 2:
        return
    w = np.ones(y.shape[0])
    expected = variance(y, w) - sum((groups == g).mean() * variance(y[groups == g], w[groups == g])
                                    for g in np.unique(groups))
    got = jitree.split_gain(y, groups, "squared_error")
    assert got == pytest.approx(expected, rel=1e-7, abs=1e-7)


def test_measures_reject_bad_input():
    with pytest.raises(ValueError, match="criterion"):
        jitree.impurity([0, 1], "nope")
    with pytest.raises(ValueError, match="two distinct"):
        jitree.split_gain([0, 1, 1], [1, 1, 1])
    with pytest.raises(ValueError, match="lengths"):
        jitree.split_gain([0, 1, 1], [1, 0])
    with pytest.raises(ValueError, match="two groups"):
        jitree.split_gain([0, 1, 1], [0, 1, 2], "twoing")
    with pytest.raises(ValueError, match="NaN"):
        jitree.impurity([0.5, np.nan], "squared_error")
    with pytest.raises(ValueError, match="Negative"):
        jitree.impurity([0, 1], "gini", sample_weight=[1, -1])
