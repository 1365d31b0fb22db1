"""Kernels against naive NumPy twins."""

import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import jitree
from jitree.kernels import _jit
from jitree.kernels._jit import compress_store, popcount
from jitree.kernels.categorical import count_runs
from jitree.kernels.checks import any_nonfinite
from jitree.kernels.grow import pack_bits
from jitree.kernels.random import stream_key, uniform
from jitree.kernels.select import select_features
from jitree.model.builder import presort
from jitree.model.validation import float_bits, has_nonfinite

from naive import predict_walk


@given(column=hnp.arrays(st.sampled_from([np.float32, np.float64]), st.integers(1, 700),
                         elements=st.sampled_from([-2.5, -1.0, -0.0, 0.0, 0.25, 1.0, 3e38,
                                                   -3e38, 1e-40, 7.0, np.nan, -np.nan,
                                                   np.inf, -np.inf])),
       n_features=st.integers(1, 3))
def test_presort_matches_lexsort(column, n_features):
    # canonical order: by value (NaN last), equal values (including -0.0 == 0.0, every NaN)
    # by sample index; float64 columns: the radix sort from 256 samples, a merge sort below;
    # float32 columns: the radix sort from 32, an insertion sort below
    X = np.column_stack([np.roll(column, f) for f in range(n_features)])
    n = X.shape[0]
    label = (np.arange(n) % 3).astype(np.uint16)
    index = np.empty((n_features, n), np.int32)
    value = np.empty((n_features, n), X.dtype)
    labels = np.empty((n_features, n), np.uint16)
    presort(X, label, index, value, labels)
    bits = np.uint32 if X.dtype == np.float32 else np.uint64
    for f in range(n_features):
        values = X[:, f].astype(np.float64) + 0.0  # -0.0 -> 0.0
        values[np.isnan(values)] = np.nan  # one NaN, sorted last
        expected = np.lexsort((np.arange(n), values))
        np.testing.assert_array_equal(index[f], expected)
        stored = X[expected, f].copy()
        if X.dtype == np.float32:  # float32 values are stored as 0.0 for -0.0, one NaN
            stored[stored == 0] = 0.0
            stored[np.isnan(stored)] = np.nan
        np.testing.assert_array_equal(value[f].view(bits), stored.view(bits))
        np.testing.assert_array_equal(labels[f], label[expected])


@given(codes=hnp.arrays(np.int64, st.integers(0, 300), elements=st.integers(0, 40)),
       bounds=st.tuples(st.floats(0, 1), st.floats(0, 1)),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_count_runs_matches_unique(codes, bounds, dtype):
    # the galloping run search (run_end) over a sorted segment against NumPy's distinct count
    values = np.sort(codes).astype(dtype)
    start, end = sorted(int(b * values.shape[0]) for b in bounds)
    assert count_runs(values, start, end) == np.unique(values[start:end]).shape[0]


@given(dtype=st.sampled_from([np.float32, np.float64]), rows=st.integers(1, 20_000),
       special=st.sampled_from([None, np.nan, np.inf, -np.inf]), where=st.floats(0, 1),
       order=st.sampled_from(["C", "F"]))
def test_nonfinite_scan_matches_numpy(dtype, rows, special, where, order):
    # both paths of has_nonfinite: the NumPy pass (small X) and the parallel bit scan (large X)
    X = np.asarray(np.linspace(-3e38, 3e38, rows * 7).reshape(rows, 7), dtype=dtype, order=order)
    if special is not None:
        X.flat[int(where * (X.size - 1))] = special
    expected = not np.isfinite(X).all()
    assert has_nonfinite(X) == expected
    assert bool(any_nonfinite(*float_bits(X))) == expected


@given(flags=hnp.arrays(np.uint8, st.integers(1, 300), elements=st.integers(0, 1)))
def test_pack_bits_matches_numpy(flags):
    bits = np.zeros((flags.shape[0] + 63) // 64, dtype=np.uint64)
    pack_bits(flags, bits)
    expected = np.packbits(flags, bitorder="little")
    expected = np.concatenate([expected, np.zeros(8 * bits.shape[0] - expected.shape[0],
                                                  np.uint8)])
    np.testing.assert_array_equal(bits.view(np.uint8), expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_flat_predict_equals_naive_walk_on_adjacent_floats(dtype):
    # consecutive representable values: every midpoint threshold falls between two neighbours,
    # where rounding a float64 threshold to float32 the wrong way would flip a comparison
    rng = np.random.default_rng(0)
    base = np.array([1.0, -3.5, 1e-3, 12345.678], dtype=dtype)
    steps = rng.integers(0, 40, size=(3000, 4))
    X = np.empty((3000, 4), dtype=dtype)
    for j in range(4):  # walk up from base[j] by a random number of ulps
        column = np.full(3000, base[j], dtype)
        for _ in range(40):
            bump = steps[:, j] > 0
            column[bump] = np.nextafter(column[bump], dtype(np.inf))
            steps[bump, j] -= 1
        X[:, j] = column
    y = rng.integers(0, 3, 3000)
    model = jitree.DecisionTreeClassifier().fit(X, y)
    leaves = model.apply(X)
    np.testing.assert_array_equal(leaves, predict_walk(model.tree_, X))
    X_test = X[rng.permutation(3000)[:500]]
    np.testing.assert_array_equal(model.apply(X_test), predict_walk(model.tree_, X_test))


def test_flat_layout_of_a_tree_with_non_adjacent_children():
    # a Tree numbered depth-first (children not side by side) predicts like its naive walk
    tree = jitree.Tree(
        n_features=1, n_classes=2,
        feature=[0, 0, -2, -2, -2], threshold=[0.5, -1.0, -2, -2, -2],
        children_left=[1, 2, -1, -1, -1], children_right=[4, 3, -1, -1, -1],
        value=[[2, 2], [1, 2], [0, 1], [1, 1], [1, 0]], impurity=[0.5] * 5,
        n_node_samples=[4, 3, 1, 2, 1], weighted_n_node_samples=[4, 3, 1, 2, 1])
    X = np.array([[-3.0], [-1.0], [0.0], [0.5], [0.6], [9.0]])
    np.testing.assert_array_equal(tree.apply(X), predict_walk(tree, X))
    np.testing.assert_array_equal(tree.apply(X), [2, 2, 3, 3, 4, 4])


def test_hand_built_tree_with_a_cycle_or_bad_feature_is_refused():
    arrays = dict(n_features=1, n_classes=2, feature=[0, 0, -2], threshold=[0.5, 0.2, -2.0],
                  children_left=[1, 0, -1], children_right=[2, 2, -1],
                  value=[[1, 1], [1, 0], [0, 1]], impurity=[0.5, 0.0, 0.0],
                  n_node_samples=[2, 1, 1], weighted_n_node_samples=[2, 1, 1])
    with pytest.raises(ValueError):
        jitree.Tree(**arrays)  # node 1 points back to the root
    arrays.update(children_left=[1, -1, -1], children_right=[2, -1, -1],
                  feature=[3, -2, -2])
    with pytest.raises(ValueError, match="feature"):
        jitree.Tree(**arrays)  # feature 3 of a 1-feature tree


def _naive_draw(seed, node, values, start, end, max_features, allowed_row):
    """Twin of select_features for one node: the Fisher-Yates walk of the node's stream,
    step by step, visiting ``max_features`` allowed features, then more while none of them
    varies, and keeping those whose segment varies (two distinct non-missing values, or a
    missing and a non-missing one), in increasing order."""
    n_features = values.shape[0]
    order = list(range(n_features))
    key = np.uint64(stream_key(seed, node, -1))
    kept = []
    visited = 0
    for step in range(n_features):
        pick = min(step + int(uniform(key, step) * (n_features - step)), n_features - 1)
        order[step], order[pick] = order[pick], order[step]
        f = order[step]
        if allowed_row is not None and not allowed_row[f]:
            continue
        visited += 1
        segment = values[f, start:end]
        present = segment[~np.isnan(segment)]
        if np.unique(present).shape[0] > 1 or 0 < present.shape[0] < segment.shape[0]:
            kept.append(f)
        if visited >= max_features and kept:
            break
    return sorted(kept)


@given(seed=st.integers(0, 2**31), n_features=st.integers(1, 9),
       max_features=st.integers(1, 9), data=st.data(), constrained=st.booleans())
def test_feature_draw_matches_the_naive_walk(seed, n_features, max_features, data,
                                             constrained):
    n_nodes = data.draw(st.integers(1, 4))
    sizes = data.draw(st.lists(st.integers(1, 6), min_size=n_nodes, max_size=n_nodes))
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    values = np.empty((n_features, bounds[-1]))
    for f in range(n_features):
        for j in range(n_nodes):
            segment = data.draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, np.nan]),
                                         min_size=sizes[j], max_size=sizes[j]))
            values[f, bounds[j]:bounds[j + 1]] = np.sort(segment)  # NaN last
    allowed = (np.array(data.draw(st.lists(st.booleans(), min_size=n_nodes * n_features,
                                           max_size=n_nodes * n_features)),
                        dtype=np.uint8).reshape(n_nodes, n_features)
               if constrained else np.zeros((n_nodes, 0), dtype=np.uint8))
    node_id = np.arange(n_nodes, dtype=np.int64) * 7 + 3
    out = np.full((n_nodes, n_features), -1, dtype=np.int64)
    count = np.zeros(n_nodes, dtype=np.int64)
    select_features(seed, node_id, bounds[:-1].copy(), bounds[1:].copy(), values,
                    max_features, allowed, out, count)
    for j in range(n_nodes):
        expected = _naive_draw(seed, node_id[j], values, bounds[j], bounds[j + 1],
                               max_features, allowed[j] if constrained else None)
        assert list(out[j, :count[j]]) == expected


@numba.njit
def _compress_store_and_count(target, at, source, start, mask):
    compress_store(target, at, source, start, mask)
    return popcount(mask)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.uint16, np.float32,
                                   np.float64])
@given(data=st.data())
def test_compress_store_keeps_the_masked_values_in_order(dtype, data):
    """kernels._jit.compress_store (the partitions' blocks) against NumPy's boolean index:
    the values of a block of COMPRESS_LANES whose mask bit is set, in their order, from
    ``at`` on, nothing else written; in place too (``at`` at most the block's start), as the
    partition stores its left side. popcount counts them."""
    lanes = _jit.COMPRESS_LANES
    source = data.draw(hnp.arrays(dtype, 48, elements=st.integers(0, 200)))
    start = data.draw(st.integers(0, 48 - lanes))
    mask = data.draw(st.integers(0, (1 << lanes) - 1))
    kept = source[start:start + lanes][(mask >> np.arange(lanes)) & 1 == 1]
    at = data.draw(st.integers(0, 48 - lanes))
    target = np.full(48, 7, dtype=dtype)
    expected = target.copy()
    expected[at:at + kept.shape[0]] = kept
    assert _compress_store_and_count(target, at, source, start, np.uint64(mask)) == kept.shape[0]
    np.testing.assert_array_equal(target, expected)
    at = data.draw(st.integers(0, start))
    expected = source.copy()
    expected[at:at + kept.shape[0]] = kept
    _compress_store_and_count(source, at, source, start, np.uint64(mask))
    np.testing.assert_array_equal(source, expected)


@pytest.mark.parametrize("register", [True, False])
def test_compress_store_both_forms(register, monkeypatch):
    """Both ways compress_store is compiled give NumPy's boolean index: packed in registers
    and stored under a mask (REGISTER_COMPRESS, LLVM 19 on; 64-bit values in two halves),
    or packed by the store (llvm.masked.compressstore, older LLVM)."""
    if register and not _jit.REGISTER_COMPRESS:
        pytest.skip("this LLVM has no llvm.experimental.vector.compress")
    monkeypatch.setattr(_jit, "REGISTER_COMPRESS", register)

    @numba.njit  # compiled here, under the form asked for
    def store(target, at, source, start, mask):
        compress_store(target, at, source, start, mask)

    lanes, rng = _jit.COMPRESS_LANES, np.random.default_rng(3)
    for dtype in (np.int32, np.int64, np.uint8, np.uint16, np.float32, np.float64):
        for _ in range(50):
            source = rng.integers(0, 200, 48).astype(dtype)
            start, at = (int(value) for value in rng.integers(0, 48 - lanes + 1, 2))
            mask = int(rng.integers(0, 1 << lanes))
            kept = source[start:start + lanes][(mask >> np.arange(lanes)) & 1 == 1]
            target = np.full(48, 7, dtype=dtype)
            expected = target.copy()
            expected[at:at + kept.shape[0]] = kept
            store(target, at, source, start, np.uint64(mask))
            np.testing.assert_array_equal(target, expected)


def test_compress_stores_only_for_code_of_this_processor(monkeypatch):
    """The partitions' compress stores (kernels._jit.COMPRESS) only where numba compiles for
    the host: code asked for another processor (NUMBA_CPU_NAME, NUMBA_CPU_FEATURES: a
    portable cache) keeps the loop, which needs no AVX-512."""
    monkeypatch.setattr(numba.config, "CPU_NAME", "generic")
    assert not _jit._has_compress()
    monkeypatch.setattr(numba.config, "CPU_NAME", None)
    monkeypatch.setattr(numba.config, "CPU_FEATURES", "+sse2")
    assert not _jit._has_compress()
    monkeypatch.setattr(numba.config, "CPU_FEATURES", None)
    features = _jit.llvm_binding.get_host_cpu_features()
    assert _jit._has_compress() == (bool(features.get("avx512f"))
                                    and bool(features.get("avx512vl")))
