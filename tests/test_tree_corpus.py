"""The tree corpus: every case of ``corpus_spec.py`` re-fitted gives the recorded trees.

``tests/data/tree_corpus.npz`` was recorded by ``python tests/corpus_spec.py`` on the engine of
the commit it names (``__meta__/commit``). A failure here means the engine grows different
trees: if that is intended, re-record and say why in the commit.
"""

import numpy as np
import pytest
from corpus_spec import (
    CORPUS,
    EXACT_FLOAT_ARRAYS,
    INT_ARRAYS,
    ROUNDED_ARRAYS,
    cases,
    fit_case,
    unflatten,
)

CASES = {case.name: case for case in cases()}

# Sums of weighted statistics (class counts and means in ``value``, node impurities, weight
# totals) are compared to rounding only: a rewrite may add the same numbers in another order,
# which changes their last bits. Everything that describes the tree's shape and its tests
# (features, thresholds, children, sample counts, missing-value directions, category sets) must
# be exactly equal.
RTOL = 1e-9
ATOL = 1e-12


@pytest.fixture(scope="module")
def corpus():
    with np.load(CORPUS) as data:
        return {key: data[key] for key in data.files}


def assert_same_result(expected, actual, name):
    """Raise AssertionError unless ``actual`` (a :func:`fit_case` result) matches the recorded
    ``expected``: the same number of trees, integer arrays and thresholds exactly equal, sums
    and predicted probabilities / values to rounding, predicted labels exactly equal."""
    assert len(actual["trees"]) == len(expected["trees"]), \
        f"{name}: {len(actual['trees'])} trees, recorded {len(expected['trees'])}"
    for k, (want, got) in enumerate(zip(expected["trees"], actual["trees"], strict=True)):
        where = f"{name}, tree {k}"
        for key in ("n_features", "n_classes"):
            assert int(got[key]) == int(want[key]), f"{where}: {key}"
        assert got["feature"].shape == want["feature"].shape, \
            f"{where}: {got['feature'].shape[0]} nodes, recorded {want['feature'].shape[0]}"
        for key in INT_ARRAYS + EXACT_FLOAT_ARRAYS:
            np.testing.assert_array_equal(got[key], want[key], err_msg=f"{where}: {key}")
        for key in ROUNDED_ARRAYS:
            assert got[key].shape == want[key].shape, f"{where}: {key} shape"
            np.testing.assert_allclose(got[key], want[key], rtol=RTOL, atol=ATOL,
                                       err_msg=f"{where}: {key}")
    predicted = actual["predict"]
    if predicted.dtype.kind == "f":  # regression: leaf means, to rounding
        np.testing.assert_allclose(predicted, expected["predict"], rtol=RTOL, atol=ATOL,
                                   err_msg=f"{name}: predict")
    else:
        np.testing.assert_array_equal(predicted, expected["predict"],
                                      err_msg=f"{name}: predict")
    assert ("proba" in actual) == ("proba" in expected), f"{name}: predict_proba"
    if "proba" in expected:
        np.testing.assert_allclose(actual["proba"], expected["proba"], rtol=RTOL, atol=ATOL,
                                   err_msg=f"{name}: predict_proba")


def test_corpus_lists_every_case(corpus):
    """The recording and the spec name the same cases (a case added to the spec needs a new
    recording; one removed leaves a stale recording)."""
    assert list(corpus["__meta__/cases"]) == list(CASES)


@pytest.mark.parametrize("name", list(CASES))
def test_tree_corpus(corpus, name):
    expected = unflatten(corpus, name)
    assert_same_result(expected, fit_case(CASES[name]), name)


@pytest.mark.parametrize("name", list(CASES))
def test_tree_corpus_partitioned_in_place(corpus, name, monkeypatch):
    """The recorded trees when every growth partitions its sorted arrays in place, as a growth
    whose sorted arrays hold more than ``grower.PING_PONG_BYTES`` does: the corpus's data sets
    are small enough for the second copy, so this is the case that runs that path on them."""
    from jitree.kernels import grower
    from jitree.model import builder

    monkeypatch.setattr(grower, "PING_PONG_BYTES", 0)
    bounds = []
    grow_tree = builder.grow_tree

    def spy(data, settings, *args):
        bounds.append(settings.second_copy_bytes)
        return grow_tree(data, settings, *args)

    monkeypatch.setattr(builder, "grow_tree", spy)
    expected = unflatten(corpus, name)
    assert_same_result(expected, fit_case(CASES[name]), name)
    assert bounds and set(bounds) == {0}  # every growth of the case took the bound


@pytest.mark.parametrize("one, other", [("nan_clf", "threads_1"),
                                        ("forest_rf_clf", "forest_rf_clf_n_jobs_2")])
def test_recorded_trees_independent_of_n_jobs(corpus, one, other):
    """Cases that differ only in n_jobs were recorded bitwise identical."""
    a, b = unflatten(corpus, one), unflatten(corpus, other)
    assert len(a["trees"]) == len(b["trees"])
    for x, y in zip(a["trees"], b["trees"], strict=True):
        for key in x:
            np.testing.assert_array_equal(x[key], y[key], err_msg=f"{one} vs {other}: {key}",
                                          strict=True)
