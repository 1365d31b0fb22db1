"""The compiled growth engine: its kernels against naive NumPy twins, its specialisations,
zero-weight samples and the random splitter's value-or-missing split."""

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitree
from jitree._threading import n_threads
from jitree.kernels.categorical import NO_MISSING
from jitree.kernels.grow import (
    mark_and_count,
    pack_bits,
    partition,
    partition_into,
    partition_into_serial,
    partition_multiway,
)
from jitree.kernels.grower import grow_tree, new_node_table, reserve_nodes
from jitree.kernels.presort import fill_from_keys, fill_sorted
from jitree.kernels.random import stream_key, uniform
from jitree.kernels.records import ChildStats, NodeBatch, PairResults, SplitBatch, TreeData
from jitree.kernels.split import search_numeric
from jitree.model.builder import GrowParams, Presorted


def _tree_data(X, y, w, regression):
    n_classes = 0 if regression else int(y.max()) + 1
    presorted = Presorted.of(X, y.astype(np.float64), regression, n_classes)
    scratch = np.empty((4, 0), dtype=presorted.sorted_label.dtype)
    return presorted, TreeData(presorted.sorted_index, presorted.sorted_value,
                               presorted.sorted_label, presorted.label, scratch,
                               y.astype(np.float64), np.empty(0), w,
                               not bool(np.all(w == 1.0)),
                               regression, np.empty((y.shape[0], 0)),
                               np.empty((y.shape[0], 0), dtype=np.int32), np.empty(0))


@st.composite
def samples(draw):
    n = draw(st.integers(2, 30))
    d = draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.integers(0, draw(st.integers(2, 6)), (n, d)).astype(np.float64)
    regression = draw(st.booleans())
    y = np.round(rng.normal(size=n), 2) if regression else rng.integers(0, 3, n)
    w = rng.integers(1, 4, n).astype(np.float64) if draw(st.booleans()) else np.ones(n)
    return X, y, w, regression, draw(st.integers(1, 3))


def _proxy_score(y, w, left, regression):
    """The textbook proxy the kernels maximise for the partition ``left`` / ``~left``:
    classification sum_c l_c**2 / W_l + sum_c r_c**2 / W_r (gini), regression
    S_l**2 / W_l + S_r**2 / W_r."""
    if regression:
        return (np.sum(w[left] * y[left]) ** 2 / w[left].sum()
                + np.sum(w[~left] * y[~left]) ** 2 / w[~left].sum())
    lc = np.bincount(y[left], weights=w[left], minlength=3)
    rc = np.bincount(y[~left], weights=w[~left], minlength=3)
    return np.sum(lc ** 2) / w[left].sum() + np.sum(rc ** 2) / w[~left].sum()


def _search_root(X, y, w, regression, params):
    """The threshold search of the root (all samples) over every feature (find_splits, or
    find_random_splits for the random splitter): its PairResults."""
    _, tree_data = _tree_data(X, y, w, regression)
    n, d = X.shape
    stats = (np.array([np.dot(w, y), np.dot(w * y, y)]) if regression
             else np.bincount(y, weights=w, minlength=3).astype(np.float64))
    nodes = NodeBatch(np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64),
                      np.full(1, n, dtype=np.int64), stats[None, :], np.array([w.sum()]),
                      np.full(1, -np.inf), np.full(1, np.inf))
    out = PairResults(np.empty(d), np.empty(d, dtype=np.int64), np.empty(d),
                      np.empty(d, dtype=np.int64))
    measure = params.measure()
    search_numeric(tree_data, params.settings(4, measure), nodes, np.zeros(d, dtype=np.int64),
                   np.arange(d, dtype=np.int64), out, None,
                   True if params.random_splitter else None)
    return out


def _naive_thresholds(x, y, w, regression, min_samples_leaf):
    """{n_left: (score, threshold)} of every admissible threshold on one feature of one node,
    scored by :func:`_proxy_score` over every midpoint."""
    candidates = {}
    values = np.unique(x)
    for low, high in zip(values[:-1], values[1:], strict=True):
        left = x <= low
        if left.sum() < min_samples_leaf or (~left).sum() < min_samples_leaf:
            continue
        score = _proxy_score(y, w, left, regression)
        candidates[int(left.sum())] = (score, low / 2.0 + high / 2.0)
    return candidates


@settings(deadline=None, max_examples=60)
@given(data=samples())
def test_find_splits_is_the_naive_best_threshold(data):
    X, y, w, regression, min_samples_leaf = data
    d = X.shape[1]
    criterion = 6 if regression else 0  # squared_error, gini
    out = _search_root(X, y, w, regression,
                       GrowParams(criterion, False, False, 0, 1000, 2, min_samples_leaf, 0.0,
                                  d, 0, 0.0, 1.0, 0.0))
    for f in range(d):
        candidates = _naive_thresholds(X[:, f], y, w, regression, min_samples_leaf)
        if not candidates:
            assert out.pos[f] == -1
            continue
        # the chosen threshold is one of the best (ties: the kernel takes the lowest, but
        # its running sums round differently from these direct ones)
        best = max(score for score, _ in candidates.values())
        assert int(out.pos[f]) in candidates
        score, threshold = candidates[int(out.pos[f])]
        assert score == pytest.approx(best, rel=1e-9)
        assert out.score[f] == pytest.approx(score, rel=1e-9)
        assert out.threshold[f] == threshold
        assert out.missing[f] == NO_MISSING


@settings(deadline=None, max_examples=60)
@given(data=samples(), cut=st.floats(0.0, 1.0))
def test_mark_and_count_and_partition_are_the_naive_split(data, cut):
    X, y, w, regression, _ = data
    presorted, tree_data = _tree_data(X, y, w, regression)
    n, d = X.shape
    f = 0
    pos = int(round(cut * n))
    order = presorted.sorted_index[f].copy()
    goes_left = np.zeros(n, dtype=np.uint8)
    child_slot = np.zeros(n, dtype=np.int32)
    n_stats = 2 if regression else 3
    children = ChildStats(np.empty((2, n_stats)), np.empty(2), np.empty(2, dtype=np.int64))
    splits = SplitBatch(np.zeros(1, dtype=np.int64), np.full(1, n, dtype=np.int64),
                        np.zeros(1, dtype=np.int64), np.full(1, pos, dtype=np.int64),
                        np.zeros(1, dtype=np.uint8), np.ones(1, dtype=np.int64),
                        np.zeros(2, dtype=np.int64), np.zeros(0, dtype=np.int64),
                        np.array([0, 2], dtype=np.int64))
    mark_and_count(tree_data, splits, child_slot, goes_left, children)
    left = np.zeros(n, dtype=bool)
    left[order[:pos]] = True
    np.testing.assert_array_equal(goes_left.astype(bool), left)
    for slot, side in enumerate((left, ~left)):
        assert children.count[slot] == side.sum()
        assert children.weight[slot] == pytest.approx(w[side].sum())
        if regression:
            want = [np.sum(w[side] * y[side]), np.sum(w[side] * y[side] ** 2)]
        else:
            want = np.bincount(y[side], weights=w[side], minlength=3)
        np.testing.assert_allclose(children.stats[slot], want, rtol=1e-12, atol=1e-12)
    # partition: every feature's segment becomes its left samples then its right ones, each
    # still in increasing value (a stable partition of the sorted order)
    before = presorted.sorted_index.copy()
    bits = np.zeros((n + 63) // 64, dtype=np.uint64)
    pack_bits(goes_left, bits)
    partition(presorted.sorted_index, presorted.sorted_value, presorted.sorted_label, bits,
              np.zeros(1, dtype=np.int64), np.full(1, n, dtype=np.int64),
              np.full(1, -1, dtype=np.int64))
    for g in range(d):
        row = before[g]
        want = np.concatenate([row[left[row]], row[~left[row]]])
        np.testing.assert_array_equal(presorted.sorted_index[g], want)
        np.testing.assert_array_equal(presorted.sorted_value[g], X[want, g])
        if not regression:
            np.testing.assert_array_equal(presorted.sorted_label[g], y[want])


def _side_by_side(presorted, n_nodes, rng):
    """Regroup ``presorted`` (in place) into up to ``n_nodes`` nodes side by side, each owning
    a contiguous segment of every feature's sorted order (the same samples in each, still in
    increasing value): node j owns the samples at positions ``bounds[j]:bounds[j + 1]`` of
    feature 0. Returns ``bounds``."""
    n = presorted.sorted_index.shape[1]
    cuts = np.sort(rng.choice(np.arange(1, n), size=min(n_nodes - 1, n - 1), replace=False))
    bounds = np.concatenate([[0], cuts, [n]]).astype(np.int64)
    owner = np.empty(n, dtype=np.int64)
    for j in range(len(bounds) - 1):
        owner[presorted.sorted_index[0, bounds[j]:bounds[j + 1]]] = j
    for g in range(presorted.sorted_index.shape[0]):
        order = np.argsort(owner[presorted.sorted_index[g]], kind="stable")
        presorted.sorted_index[g] = presorted.sorted_index[g][order]
        presorted.sorted_value[g] = presorted.sorted_value[g][order]
        if presorted.sorted_label.shape[1]:
            presorted.sorted_label[g] = presorted.sorted_label[g][order]
    return bounds


def _sorted_copy(data, index, value, label):
    """``data`` (a TreeData) with the sorted arrays ``index``, ``value``, ``label``."""
    return TreeData(index, value, label, *data[3:])


def _check_partition_into(presorted, X, y, w, regression, goes_left, bits, bounds):
    """partition_into and its serial twin, from ``presorted``'s arrays (left as they are)
    into new ones, with the classes carried and (as a forest tree's) left out: every
    feature's segment of every node is its left samples then its right ones, in the order
    they had, at the same positions."""
    _, data = _tree_data(X, y, w, regression)
    data = _sorted_copy(data, presorted.sorted_index, presorted.sorted_value,
                        presorted.sorted_label)
    n_split = len(bounds) - 1
    n_left = np.array([goes_left[presorted.sorted_index[0, bounds[j]:bounds[j + 1]]].sum()
                       for j in range(n_split)], dtype=np.int64)
    carried = presorted.sorted_label.shape[1] > 0
    before = (presorted.sorted_index.copy(), presorted.sorted_value.copy(),
              presorted.sorted_label.copy())
    for kernel in (partition_into, partition_into_serial):
        for labels in ((True, False) if carried else (False,)):
            source = data if labels else _sorted_copy(
                data, data.sorted_index, data.sorted_value,
                np.empty((1, 0), dtype=data.sorted_label.dtype))
            target = _sorted_copy(source, np.full_like(source.sorted_index, -1),
                                  np.full_like(source.sorted_value, np.nan),
                                  np.zeros_like(source.sorted_label))
            kernel(source, bits, bounds[:-1].copy(), bounds[1:].copy(), n_left, target)
            for g in range(X.shape[1]):
                want = np.concatenate([
                    np.concatenate([row[goes_left[row] == 1], row[goes_left[row] == 0]])
                    for row in (presorted.sorted_index[g, bounds[j]:bounds[j + 1]]
                                for j in range(n_split))])
                np.testing.assert_array_equal(target.sorted_index[g], want)
                np.testing.assert_array_equal(target.sorted_value[g], X[want, g])
                if labels:
                    np.testing.assert_array_equal(target.sorted_label[g], y[want])
    for kept, array in zip(before, (presorted.sorted_index, presorted.sorted_value,
                                    presorted.sorted_label), strict=True):
        np.testing.assert_array_equal(array, kept)  # the source is left as it was


def _check_binary_partition(X, y, w, regression, n_nodes, rng):
    """Several binary nodes side by side, each sample sent left or right at random, one
    node naming a feature as its own (its segment is left as it is: the split's own order),
    partitioned by the kernel and by NumPy; partition_into too (see
    :func:`_check_partition_into`)."""
    presorted, _ = _tree_data(X, y, w, regression)
    n, d = X.shape
    bounds = _side_by_side(presorted, n_nodes, rng)
    n_split = len(bounds) - 1
    goes_left = rng.integers(0, 2, n).astype(np.uint8)
    bits = np.zeros((n + 63) // 64, dtype=np.uint64)
    pack_bits(goes_left, bits)
    own = np.full(n_split, -1, dtype=np.int64)
    if d > 1 or n_split > 1:  # else the only segment would be skipped
        own[rng.integers(n_split)] = rng.integers(d)
    before_index = presorted.sorted_index.copy()
    before_value = presorted.sorted_value.copy()
    _check_partition_into(presorted, X, y, w, regression, goes_left, bits, bounds)
    partition(presorted.sorted_index, presorted.sorted_value, presorted.sorted_label, bits,
              bounds[:-1].copy(), bounds[1:].copy(), own)
    for g in range(d):
        for j in range(n_split):
            segment = slice(bounds[j], bounds[j + 1])
            row = before_index[g, segment]
            if own[j] == g:
                want = row
                np.testing.assert_array_equal(presorted.sorted_value[g, segment],
                                              before_value[g, segment])
            else:
                want = np.concatenate([row[goes_left[row] == 1], row[goes_left[row] == 0]])
                np.testing.assert_array_equal(presorted.sorted_value[g, segment], X[want, g])
            np.testing.assert_array_equal(presorted.sorted_index[g, segment], want)
            if not regression:
                np.testing.assert_array_equal(presorted.sorted_label[g, segment], y[want])


@settings(deadline=None, max_examples=60)
@given(data=samples(), n_nodes=st.integers(1, 5), seed=st.integers(0, 2**32 - 1))
def test_partition_of_nodes_side_by_side_is_the_naive_stable_partition(data, n_nodes, seed):
    X, y, w, regression, _ = data
    _check_binary_partition(X, y, w, regression, n_nodes, np.random.default_rng(seed))


@pytest.mark.parametrize("regression", [False, True])
def test_partition_of_many_samples_is_the_naive_stable_partition(regression):
    # samples past the first word of the side bits, nodes of a few to a few hundred samples
    rng = np.random.default_rng(11)
    n = 1500
    X = rng.integers(0, 40, (n, 4)).astype(np.float64)
    y = np.round(rng.normal(size=n), 2) if regression else rng.integers(0, 3, n)
    w = rng.integers(1, 4, n).astype(np.float64)
    _check_binary_partition(X, y, w, regression, 12, rng)


@settings(deadline=None, max_examples=60)
@given(data=samples(), n_nodes=st.integers(1, 4), n_slots=st.integers(2, 5),
       seed=st.integers(0, 2**32 - 1))
def test_partition_multiway_is_the_naive_stable_partition(data, n_nodes, n_slots, seed):
    # several multiway nodes side by side, each owning a contiguous segment of every
    # feature's sorted order; each sample goes to one of the node's child slots
    X, y, w, regression, _ = data
    presorted, _ = _tree_data(X, y, w, regression)
    n, d = X.shape
    rng = np.random.default_rng(seed)
    bounds = _side_by_side(presorted, n_nodes, rng)
    child_slot = rng.integers(0, n_slots, n).astype(np.int32)
    n_split = len(bounds) - 1
    child_offset = (np.arange(n_split + 1) * n_slots).astype(np.int64)
    child_count = np.zeros(n_split * n_slots, dtype=np.int64)
    for j in range(n_split):
        members = presorted.sorted_index[0, bounds[j]:bounds[j + 1]]
        child_count[j * n_slots:(j + 1) * n_slots] = np.bincount(child_slot[members],
                                                                 minlength=n_slots)
    before = presorted.sorted_index.copy()
    partition_multiway(presorted.sorted_index, presorted.sorted_value,
                       presorted.sorted_label, child_slot, bounds[:-1].copy(),
                       bounds[1:].copy(), child_offset, child_count)
    for g in range(d):
        want = np.concatenate([
            before[g, bounds[j]:bounds[j + 1]][
                np.argsort(child_slot[before[g, bounds[j]:bounds[j + 1]]], kind="stable")]
            for j in range(n_split)])
        np.testing.assert_array_equal(presorted.sorted_index[g], want)
        np.testing.assert_array_equal(presorted.sorted_value[g], X[want, g])
        if not regression:
            np.testing.assert_array_equal(presorted.sorted_label[g], y[want])


def read_only_f(array):
    """``array`` in Fortran order, read-only (as a DataFrame's array in pandas 3)."""
    array = np.asfortranarray(array)
    array.flags.writeable = False
    return array


# The specialisations of the compiled growth loop (see jitree.kernels.grower): one per
# (X's float type, class label type, whether some feature is categorical), one more per such
# triple for the random splitter's presorted growth (not fitted here), and one per (X's
# float type, class label type) for the random splitter's sample-order growth. The other
# record fields have one type each.
_SPECIALISATIONS = 12


def test_growth_loop_specialisations_stay_within_budget():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    codes = np.column_stack([rng.integers(0, 4, 300).astype(float), X[:, 1]])
    for dtype in (np.float32, np.float64):
        jitree.DecisionTreeClassifier(max_depth=3).fit(X.astype(dtype), y)
        jitree.DecisionTreeClassifier(max_depth=3).fit(X.astype(dtype), np.arange(300))
        jitree.DecisionTreeRegressor(max_depth=3).fit(X.astype(dtype), X[:, 0])
        jitree.DecisionTreeRegressor(max_leaf_nodes=4, splitter="random",
                                     random_state=0).fit(X.astype(dtype), X[:, 0])
        jitree.DecisionTreeClassifier(max_depth=3, categorical_features=[0]).fit(
            codes.astype(dtype), y)
        jitree.ExtraTreesClassifier(n_estimators=2, random_state=0).fit(X.astype(dtype), y)
        # read-only X (a DataFrame's in pandas 3, a memory map): the same specialisations,
        # the same trees
        read_only = np.asfortranarray(rng.normal(size=(300, 8)).astype(dtype))
        read_only.flags.writeable = False
        for model in (jitree.ExtraTreesClassifier(n_estimators=2, random_state=0,
                                                  max_features=2),  # held by column
                      jitree.ExtraTreesClassifier(n_estimators=2, random_state=0,
                                                  max_features=None)):  # by row
            given = model.fit(read_only, y).estimators_
            again = model.fit(np.array(read_only), y).estimators_
            for a, b in zip(given, again, strict=True):
                np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)
    signatures = grow_tree.signatures
    assert len(signatures) <= _SPECIALISATIONS, signatures
    # the presort: one specialisation per X dtype, whether a column is a copy or a view of
    # read-only X (Fortran order, as a DataFrame's in pandas 3)
    for dtype in (np.float32, np.float64):
        for data in (X.astype(dtype), read_only_f(X.astype(dtype))):
            jitree.DecisionTreeRegressor(max_depth=2).fit(data, X[:, 0])
    for kernel in (fill_from_keys, fill_sorted):
        assert len({signature[0] for signature in kernel.signatures}) == 1, kernel.signatures
        assert all(not signature[0].mutable for signature in kernel.signatures)
    for signature in signatures:
        data = signature[0]
        assert str(data[1].dtype) in ("float32", "float64")
        assert str(data[2].dtype) in ("uint8", "uint16")
        assert all(getattr(field, "layout", "C") == "C" for field in data)


def test_predict_kernels_compile_once_per_x_type(tmp_path, monkeypatch):
    # labels, node ids, probabilities and means share one table type, and every array a
    # walk reads goes read-only (walk_input, read_only_view): one specialisation per X dtype
    # and order (C or Fortran) serves predict, predict_proba and apply of trees and forests,
    # whether X is the user's writeable array, a DataFrame's (read-only in pandas 3) or a
    # read-only memory map
    from jitree.kernels.predict import (
        apply_flat,
        apply_flat_categories,
        predict_flat,
        predict_flat_categories,
        predict_flat_categories_serial,
        predict_flat_serial,
        predict_nodes,
    )
    from jitree.kernels.quantiles import predict_quantiles_flat
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    codes = np.column_stack([rng.integers(0, 4, 200).astype(float), X[:, 1]])
    np.save(tmp_path / "X.npy", X)
    mapped = np.load(tmp_path / "X.npy", mmap_mode="r")
    for dtype in (np.float32, np.float64):
        for model, data in ((jitree.DecisionTreeClassifier(max_depth=3), X),
                            (jitree.DecisionTreeRegressor(max_depth=3), X),
                            (jitree.DecisionTreeClassifier(max_depth=3,
                                                           categorical_features=[0]), codes),
                            (jitree.DecisionTreeClassifier(max_depth=3, categorical_features=[0],
                                                           categorical_split="multiway"),
                             codes),
                            (jitree.RandomForestClassifier(n_estimators=2, max_depth=3,
                                                           random_state=0), X),
                            (jitree.RandomForestClassifier(n_estimators=2, max_depth=3,
                                                           categorical_features=[0],
                                                           random_state=0), codes)):
            model.fit(data.astype(dtype), (X[:, 0] > 0).astype(int))
            for rows in (data.astype(dtype), data.astype(dtype)[:1],
                         pd.DataFrame(data.astype(dtype)).to_numpy()):
                model.predict(rows)
                model.apply(rows)
        # the Tree arrays' walk (features of more than CODE_LIMIT categories)
        forest = jitree.RandomForestClassifier(n_estimators=2, max_depth=3, random_state=0,
                                               categorical_features=[0])
        forest.fit(codes.astype(dtype), (X[:, 0] > 0).astype(int))
        forest._cached_layouts()["walk"] = "nodes"
        forest.predict_proba(codes.astype(dtype))
        forest.apply(codes.astype(dtype))
        with monkeypatch.context() as patch:  # and a lone tree's (features of more
            patch.setattr(jitree.Tree, "has_flat_categories", False)  # categories)
            forest.estimators_[0].predict_proba(codes.astype(dtype))
            built = forest.estimators_[0].tree_  # and a Tree built by the constructor
            built = jitree.Tree(built.n_features, built.n_classes, **built.arrays())
            assert not built.is_frozen
            built.apply(codes.astype(dtype))
        numeric = jitree.RandomForestRegressor(n_estimators=2, max_depth=3, random_state=0)
        numeric.fit(X.astype(dtype), X[:, 0])
        numeric.apply(X.astype(dtype))
        numeric.apply(np.asfortranarray(X.astype(dtype)[::2]))
    tree = jitree.DecisionTreeRegressor(max_depth=3).fit(X, X[:, 0])
    tree.predict(mapped)
    numeric.predict(mapped)
    quantile = jitree.RandomForestRegressor(n_estimators=2, max_depth=3, random_state=0,
                                            store_leaf_samples=True).fit(X, X[:, 0])
    levels = np.array([0.1, 0.9])
    for asked in (levels, [0.5], 0.5, mapped[:1, 0]):
        quantile.predict_quantiles(X, asked)
    levels.flags.writeable = False
    quantile.predict_quantiles(mapped, levels)
    for kernel in (predict_flat, predict_flat_serial, predict_flat_categories,
                   predict_flat_categories_serial, predict_nodes, apply_flat,
                   apply_flat_categories, predict_quantiles_flat):
        assert kernel.signatures, kernel
        x_types = [(str(signature[0].dtype), signature[0].layout)
                   for signature in kernel.signatures]
        assert len(set(x_types)) == len(x_types), kernel.signatures
        for signature in kernel.signatures:
            assert not signature[0].mutable, signature
            if kernel not in (apply_flat, apply_flat_categories):
                table = signature[5 if kernel in (predict_flat, predict_flat_serial,
                                                  predict_quantiles_flat) else 6]
                assert str(table.dtype) == "float64", signature


@pytest.mark.parametrize("task", ["classification", "regression"])
def test_zero_weight_is_removing_the_row(task):
    """A zero-weight sample places no threshold and counts in no node: the tree equals the
    one fitted without it (scikit-learn's check_sample_weight_equivalence)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(int) if task == "classification" else X[:, 0] * 2
    w = rng.uniform(0.5, 2.0, 200)
    w[rng.random(200) < 0.3] = 0.0
    cls = (jitree.DecisionTreeClassifier if task == "classification"
           else jitree.DecisionTreeRegressor)
    with_zeros = cls(min_samples_leaf=3, random_state=0).fit(X, y, sample_weight=w)
    kept = w > 0
    without = cls(min_samples_leaf=3, random_state=0).fit(X[kept], y[kept],
                                                          sample_weight=w[kept])
    a, b = with_zeros.tree_, without.tree_
    for name in ("feature", "threshold", "children_left", "children_right", "n_node_samples"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_allclose(a.value, b.value, rtol=1e-12)
    np.testing.assert_array_equal(with_zeros.predict(X), without.predict(X))


def test_random_splitter_splits_value_or_missing():
    """A feature whose non-missing values are all equal, with some missing: the random
    splitter separates the missing samples (scikit-learn's random splitter does too)."""
    X = np.ones((40, 1))
    X[::2, 0] = np.nan
    y = np.isnan(X[:, 0]).astype(int)
    model = jitree.DecisionTreeClassifier(splitter="random", random_state=0).fit(X, y)
    assert model.tree_.node_count == 3
    assert model.score(X, y) == 1.0
    reg = jitree.ExtraTreesRegressor(n_estimators=3, random_state=0, bootstrap=False)
    assert reg.fit(X, y * 2.0).score(X, y * 2.0) == 1.0


@numba.njit
def _first_draw(seed, node, feature):
    """The first uniform draw of the stream of (seed, node, feature), computed in compiled
    code as the kernels do (a key returned to Python and passed back may change its integer
    type, and so its bits)."""
    return uniform(stream_key(seed, node, feature), 0)


@settings(deadline=None, max_examples=60)
@given(data=samples(), seed=st.integers(0, 2**32 - 1))
def test_random_threshold_is_the_naive_draw(data, seed):
    """The random splitter (scan_random through find_random_splits) against its naive twin: the
    threshold drawn uniformly between the node's min and max from the stream of (seed, node,
    feature), the samples at or below it on the left, scored by the textbook proxy."""
    X, y, w, regression, min_samples_leaf = data
    d = X.shape[1]
    criterion = 6 if regression else 0
    out = _search_root(X, y, w, regression,
                       GrowParams(criterion, False, True, seed, 1000, 2, min_samples_leaf, 0.0,
                                  d, 0, 0.0, 1.0, 0.0))
    for f in range(d):
        low, high = X[:, f].min(), X[:, f].max()
        if not low < high:
            assert out.pos[f] == -1
            continue
        threshold = low + _first_draw(np.uint64(seed), np.int64(0), np.int64(f)) * (high - low)
        if threshold >= high:
            threshold = low
        left = X[:, f] <= threshold
        if left.sum() < min_samples_leaf or (~left).sum() < min_samples_leaf:
            assert out.pos[f] == -1
            continue
        assert out.pos[f] == left.sum()
        assert out.threshold[f] == threshold
        score = _proxy_score(y, w, left, regression)
        assert out.score[f] == pytest.approx(score, rel=1e-9)


def test_many_class_tree_refused_before_allocating(monkeypatch):
    # 65,535 classes, one sample each: a full tree's class-weight table is 131,069 x 65,535
    # float64 (64 GiB, twice); refused up front with the way out, on any machine size
    import jitree.model.builder as builder
    X = np.arange(65_535, dtype=np.float64)[:, None]
    y = np.arange(65_535)
    monkeypatch.setattr(builder, "memory_bytes", lambda: 16 * 2**30)
    with pytest.raises(ValueError, match="131,069 nodes with 65,535 classes.*max_leaf_nodes"):
        jitree.DecisionTreeClassifier().fit(X, y)
    with pytest.raises(ValueError, match="65,535 classes"):
        jitree.RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    # bounded trees of as many classes fit, in memory of their size
    model = jitree.DecisionTreeClassifier(max_leaf_nodes=40).fit(X, y)
    assert model.tree_.node_count == 79
    assert model.tree_.value.shape == (79, 65_535)
    model = jitree.DecisionTreeClassifier(max_depth=5).fit(X, y)
    assert model.tree_.max_depth == 5


def test_node_table_makes_rows_only_as_nodes_are_made():
    # a node table starts with room for the tree's nodes, its rows left as allocated; a row
    # becomes a leaf without statistics when the growth makes it (reserve_nodes), and the
    # table doubles, keeping the rows made, when a tree outgrows it
    from jitree.kernels.grower import F_LOWER, F_THRESHOLD, F_UPPER, N_CATEGORY_OFFSET, N_INTS
    from jitree.kernels.predict import TREE_LEAF, TREE_UNDEFINED

    def leaves(k, n_stats, n_words):
        ints = np.zeros((k, N_INTS), dtype=np.int64)
        ints[:, :3] = [TREE_UNDEFINED, TREE_LEAF, TREE_LEAF]  # feature, left, right
        ints[:, N_CATEGORY_OFFSET] = -1
        floats = np.zeros((k, 5))
        floats[:, F_THRESHOLD] = TREE_UNDEFINED
        floats[:, F_LOWER] = -np.inf
        floats[:, F_UPPER] = np.inf
        return ints, floats, np.zeros((k, n_stats)), np.zeros((k, n_words), dtype=np.uint64)

    rng = np.random.default_rng(3)
    nodes = new_node_table(3, 2, 1)
    for field in nodes:
        field[...] = rng.integers(1, 100, field.shape)  # what an allocation may hold
    nodes = reserve_nodes(nodes, 0, 2)
    for got, expected in zip(nodes, leaves(2, 2, 1), strict=True):
        np.testing.assert_array_equal(got[:2], expected)
        got[:2] = rng.integers(1, 100, got[:2].shape)  # the growth fills the rows it made
    made = [field[:2].copy() for field in nodes]
    same = reserve_nodes(nodes, 2, 3)  # room left: the same table, its third row made
    assert same.ints is nodes.ints
    grown = reserve_nodes(same, 3, 7)  # no room: doubled, or as large as needed
    assert grown.ints.shape[0] == 7 and grown.stats.shape == (7, 2)
    for got, kept, expected in zip(grown, made, leaves(5, 2, 1), strict=True):
        np.testing.assert_array_equal(got[:2], kept)
        np.testing.assert_array_equal(got[2:7], expected)


def test_grown_tree_holds_no_node_table():
    # the node table has room for every node a tree could make: the fitted tree's arrays
    # keep at most its own nodes' rows alive, not views into the whole table
    from jitree.kernels.grower import N_FLOATS, N_INTS
    from jitree.model.tree import _ARRAYS

    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] + rng.normal(size=300) > 0).astype(int) + (X[:, 1] > 1)
    for model in (jitree.DecisionTreeClassifier(random_state=0).fit(X, y),
                  jitree.DecisionTreeRegressor(random_state=0).fit(X, y.astype(float)),
                  jitree.ExtraTreesClassifier(n_estimators=2, random_state=0).fit(X, y),
                  # one node: its columns of the table are contiguous views
                  jitree.DecisionTreeClassifier().fit(X, np.zeros(300, dtype=int)),
                  jitree.DecisionTreeRegressor().fit(X, np.ones(300))):
        for tree in [e.tree_ for e in getattr(model, "estimators_", [model])]:
            row = 8 * max(N_INTS, N_FLOATS, tree.value.shape[1])  # a node's widest row
            for name, _ in _ARRAYS:
                array = getattr(tree, name)
                owner = array if array.base is None else array.base
                assert owner.nbytes <= tree.node_count * row, name


def test_cached_record_types_equal_numba_typing():
    # records passed from Python are typed once per kind of content: each variant must get
    # the type numba itself gives (a stale type would unbox arrays wrongly)
    from numba import typeof
    from numba.core import types

    from jitree.kernels import criteria
    from jitree.kernels.records import GrowSettings

    def variants():
        base = np.arange(12.0).reshape(3, 4)
        frozen = base.copy()
        frozen.flags.writeable = False
        for array in (base, base.astype(np.float32), np.asfortranarray(base), base[:, ::2],
                      frozen, base[0], np.zeros((2, 0))):
            yield TreeData(array, array, array, array, array, array, array, array, True, False,
                           array, array, array)
        for code, big in ((np.int64(3), 2**63 - 1), (5, 2**63), (True, -1)):
            yield GrowSettings(criteria.builtin(0), code, big, 1.5, np.float32(2), None,
                               np.uint8(1), 0, 0, 0.0, 0.0, 0.0, 4, np.zeros(0, np.int8),
                               np.zeros((0, 0), np.uint8), 0.5, 1 << 23, 0)

    seen = set()
    for _ in range(2):  # the second pass reads the cache
        for record in variants():
            expected = types.BaseTuple.from_types([typeof(field) for field in record],
                                                  type(record))
            assert typeof(record) == expected
            seen.add(expected)
    # distinct: C, F, strided ('A'), read-only, float32 and 1-D arrays; int64 and uint64
    # (2**63) and bool scalars
    assert len(seen) == 9


def test_fits_free_every_array_their_kernels_make():
    # kernels compiled without reference counting (_jit.borrowing) must not leak arrays
    # that other kernels make, nor free them twice: NRT's counts of allocations and frees
    # balance over fits of every kind once the fitted models are gone
    import gc

    from numba.core.runtime import _nrt_python, rtsys

    rng = np.random.default_rng(14)
    X = rng.normal(size=(400, 4))
    X[rng.random(X.shape) < 0.1] = np.nan
    X[:, 3] = rng.integers(0, 6, 400)
    y = (np.nan_to_num(X[:, 0]) + (X[:, 3] % 2) > 0.3).astype(int)
    target = np.nan_to_num(X[:, 0]) * 2.0 + X[:, 3]

    @numba.njit
    def user_gini(stats, weight):
        total = 0.0
        for c in range(stats.shape[0]):
            total += stats[c] * stats[c]
        return 1.0 - total / (weight * weight)

    fits = [
        lambda: jitree.DecisionTreeClassifier().fit(X, y),
        lambda: jitree.DecisionTreeClassifier(criterion="entropy", max_leaf_nodes=9).fit(X, y),
        lambda: jitree.DecisionTreeClassifier(splitter="random", random_state=0).fit(X, y),
        lambda: jitree.DecisionTreeClassifier(categorical_features=[3]).fit(X, y),
        lambda: jitree.DecisionTreeClassifier(categorical_features=[3],
                                              categorical_split="multiway").fit(X, y),
        lambda: jitree.DecisionTreeClassifier(
            criterion=jitree.Criterion(impurity=user_gini)).fit(X, y),
        lambda: jitree.DecisionTreeRegressor().fit(X, target),
        lambda: jitree.DecisionTreeRegressor(criterion="absolute_error").fit(X, target),
        lambda: jitree.DecisionTreeRegressor(monotonic_cst=[1, 0, 0, 0]).fit(X, target),
        lambda: jitree.DecisionTreeRegressor().fit(X, np.column_stack([target, -target])),
        lambda: jitree.RandomForestClassifier(n_estimators=3, random_state=0).fit(X, y),
    ]
    for fit in fits:
        fit()  # compiled and warmed outside the count
    gc.collect()
    _nrt_python.memsys_enable_stats()
    try:
        before = rtsys.get_allocation_stats()
        for fit in fits:
            fit()
        gc.collect()
        after = rtsys.get_allocation_stats()
    finally:
        _nrt_python.memsys_disable_stats()
    assert after.alloc - before.alloc > 0
    assert after.alloc - before.alloc == after.free - before.free
    assert after.mi_alloc - before.mi_alloc == after.mi_free - before.mi_free


def _tree_arrays(model):
    trees = getattr(model, "estimators_", [model])
    return [(t.tree_.feature, t.tree_.threshold, t.tree_.children_left, t.tree_.value)
            for t in trees]


@pytest.mark.parametrize("make", [
    lambda jobs: jitree.DecisionTreeClassifier(n_jobs=jobs),                  # presorted
    lambda jobs: jitree.DecisionTreeRegressor(n_jobs=jobs, max_features=2,
                                              random_state=0),
    lambda jobs: jitree.DecisionTreeClassifier(n_jobs=jobs, splitter="random",
                                               random_state=0),               # sample order
    lambda jobs: jitree.DecisionTreeRegressor(n_jobs=jobs, splitter="random",
                                              random_state=0),
    lambda jobs: jitree.DecisionTreeClassifier(n_jobs=jobs, max_features=3,
                                               random_state=0),  # best, in sample order
])
def test_one_thread_grows_with_the_serial_twins_the_same_trees(make):
    """On one thread the growth calls the serial twins of its parallel kernels
    (GrowSettings.n_blocks 1); they grow the trees the parallel kernels grow."""
    from jitree.kernels import grow as grow_kernels
    from jitree.kernels import sample_order, split
    from jitree.model import builder

    rng = np.random.default_rng(5)
    X = rng.normal(size=(3000, 60))  # wide: the best splitter draws 3 of 60 in sample order
    X[rng.random(X.shape) < 0.05] = np.nan
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)
    if "Regressor" in type(make(1)).__name__:
        y = np.nan_to_num(X[:, 2]) * 2.0 + rng.normal(size=3000)
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread: no parallel growth to compare with")
    with n_threads(2):
        assert builder.search_blocks() == 16
    with n_threads(1):
        assert builder.search_blocks() == 1
    one = make(1).fit(X, y)
    many = make(2).fit(X, y)
    for a, b in zip(_tree_arrays(one), _tree_arrays(many), strict=True):
        for x, z in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, z)
    # the twins are compiled on their own (their own cache files), without parallel
    twins = [sample_order.find_node_splits_serial, sample_order.split_samples_serial,
             split.find_splits_serial, split.find_random_splits_serial,
             grow_kernels.mark_and_count_serial, grow_kernels.pack_bits_serial,
             grow_kernels.partition_serial]
    for twin in twins:
        assert twin.py_func.__qualname__.endswith("_serial")
        assert not twin.targetoptions.get("parallel")


def test_forest_trees_of_the_twins_are_those_of_the_parallel_kernels(monkeypatch):
    """A forest's trees (one thread each) grown by the serial twins, and by the parallel
    kernels on one thread (8 blocks of work, as before the twins): the same trees."""
    from jitree.model import builder

    rng = np.random.default_rng(6)
    X = rng.normal(size=(2000, 12))
    X[rng.random(X.shape) < 0.05] = np.nan
    forests = [jitree.RandomForestClassifier(n_estimators=3, random_state=0, n_jobs=2),
               jitree.ExtraTreesRegressor(n_estimators=3, random_state=0, n_jobs=2,
                                          max_features=0.3)]
    for forest in forests:
        target = np.nan_to_num(X[:, 2]) if "Regressor" in type(forest).__name__ \
            else (X[:, 0] > 0)
        twinned = forest.fit(X, target)
        ours = _tree_arrays(twinned)
        with monkeypatch.context() as patch:
            patch.setattr(builder, "search_blocks", lambda: 8)
            parallel = _tree_arrays(forest.fit(X, target))
        for a, b in zip(ours, parallel, strict=True):
            for x, z in zip(a, b, strict=True):
                np.testing.assert_array_equal(x, z)


def test_random_search_is_compiled_only_where_a_growth_runs_it(monkeypatch):
    # the random splitter's threshold search (find_random_splits) is compiled into the
    # presorted growth of the random splitter without an order criterion alone: every other
    # growth is called with random_search None, which leaves it out of the compiled code
    from jitree.model import builder

    seen = []
    grow = builder.grow_tree

    def spy(*args):
        seen.append(args[-1])
        return grow(*args)

    monkeypatch.setattr(builder, "grow_tree", spy)
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    codes = np.column_stack([rng.integers(0, 4, 200).astype(float), X[:, 1]])
    cases = [
        (jitree.DecisionTreeClassifier(max_depth=3), X, y, None),
        (jitree.DecisionTreeRegressor(max_depth=3, criterion="absolute_error"), X, X[:, 0],
         None),
        # the random splitter on numeric features grows in sample order
        (jitree.DecisionTreeClassifier(splitter="random", random_state=0), X, y, None),
        (jitree.DecisionTreeRegressor(splitter="random", random_state=0,
                                      criterion="absolute_error"), X, X[:, 0], None),
        (jitree.DecisionTreeClassifier(splitter="random", random_state=0,
                                       categorical_features=[0]), codes, y, True),
        (jitree.DecisionTreeRegressor(splitter="random", random_state=0),
         X, np.column_stack([X[:, 0], X[:, 1]]), True),  # two outputs: presorted
    ]
    for model, data, target, expected in cases:
        seen.clear()
        model.fit(data, target)
        assert seen == [expected], (model, seen)
    for signature in grow.signatures:
        if isinstance(signature[-1], numba.types.Boolean):
            assert isinstance(signature[4], numba.types.NoneType), signature  # presorted
