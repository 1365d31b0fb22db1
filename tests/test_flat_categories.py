"""Category tests in the flat prediction layout (predict_flat_categories) against the walk
of the Tree arrays, and the compiled encoder of float arrays against the general one.

The twin of the flat walk is ``leaf_of_row_any``, the row-at-a-time walk of the Tree arrays
that routes every node kind, missing values and unseen categories.
"""

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitree
from jitree.kernels.predict import (
    CODE_LIMIT,
    LANES,
    NARROW_CATEGORIES,
    child_of,
    chunk_values,
    leaf_of_row_any,
    predict_flat_categories,
    quiet_nan,
)
from jitree.model import tree as tree_module
from jitree.model.tree import _QUIET_NAN, SPLIT_MULTIWAY, SPLIT_SUBSET, SPLIT_THRESHOLD, walk_input


def categorical_data(seed, n, sizes, n_numeric=3, missing=0.1):
    """Columns of category codes (one per entry of ``sizes``) then numeric columns; labels
    from per-category effects and the numeric columns; NaN in every column."""
    rng = np.random.default_rng(seed)
    columns = [rng.integers(0, m, n).astype(np.float64) for m in sizes]
    numeric = rng.normal(size=(n, n_numeric))
    X = np.column_stack(columns + [numeric])
    score = sum(rng.normal(size=m)[c.astype(int)] for m, c in zip(sizes, columns, strict=True))
    y = (score + numeric[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    y += (score > 1.0)
    X[rng.random(X.shape) < missing] = np.nan
    return X, y


def unseen_rows(X, sizes, seed):
    """Rows with missing values, categories unseen in training (m, a negative value, a
    non-integral one) in every categorical column."""
    rng = np.random.default_rng(seed)
    rows = X[rng.integers(0, X.shape[0], 40)].copy()
    for j, m in enumerate(sizes):
        rows[rng.random(40) < 0.3, j] = rng.choice([float(m), -1.0, 0.5, np.nan])
    return rows


def tree_leaves(model, X):
    """The general walk of every row (the twin)."""
    encoded = model._validate_predict_X(X)
    walk = model.tree_.walk_arrays()
    return np.array([leaf_of_row_any(encoded, i, walk) for i in range(encoded.shape[0])])


@settings(deadline=None, max_examples=25)
@given(seed=st.integers(0, 2**32 - 1),
       mode=st.sampled_from(["subset", "one_vs_rest", "multiway"]),
       sizes=st.lists(st.sampled_from([2, 3, 7, 30, NARROW_CATEGORIES, NARROW_CATEGORIES + 1,
                                        127, 128, 200]), min_size=1, max_size=3),
       dtype=st.sampled_from([np.float32, np.float64]), missing=st.sampled_from([0.0, 0.15]))
def test_flat_walk_reaches_the_tree_walks_leaves(seed, mode, sizes, dtype, missing):
    X, y = categorical_data(seed, 600, sizes, missing=missing)
    model = jitree.DecisionTreeClassifier(categorical_features=list(range(len(sizes))),
                                          categorical_split=mode, random_state=0)
    model.fit(X.astype(dtype), y)
    tree = model.tree_
    if not np.any(tree.split_kind != SPLIT_THRESHOLD):
        return
    assert tree.has_flat_categories
    rows = np.vstack([X, unseen_rows(X, sizes, seed)]).astype(dtype)
    np.testing.assert_array_equal(model.apply(rows), tree_leaves(model, rows))


@pytest.mark.parametrize("mode", ["subset", "one_vs_rest", "multiway"])
def test_flat_and_node_walks_of_a_forest_agree(mode):
    sizes = [3, 12, NARROW_CATEGORIES, 150]
    X, y = categorical_data(1, 3000, sizes)
    forest = jitree.RandomForestClassifier(n_estimators=8, random_state=0,
                                           categorical_features=[0, 1, 2, 3],
                                           categorical_split=mode)
    forest.fit(X, y)
    rows = np.vstack([X, unseen_rows(X, sizes, 1)])
    assert forest._walk_kind() == "categories"
    proba = forest.predict_proba(rows)
    leaves = forest.apply(rows)
    forest._cached_layouts()["walk"] = "nodes"
    np.testing.assert_array_equal(forest.predict_proba(rows), proba)
    np.testing.assert_array_equal(forest.apply(rows), leaves)
    for t, model in enumerate(forest.estimators_):
        np.testing.assert_array_equal(leaves[:, t], tree_leaves(model, rows))


@pytest.fixture(scope="module")
def category_lane_forests():
    """Forests of each kind of category node the lanes step through (narrow subsets, wide
    subsets, multiway nodes: full-depth classifier trees, which vote), and a regressor forest
    of wide subsets (table rows), each with rows to walk: its training rows and rows of
    unseen categories, NaN in every column."""
    forests = []
    for kind, sizes, mode in [(jitree.RandomForestClassifier, [3, 12, 40], "subset"),
                              (jitree.RandomForestClassifier, [3, 150], "subset"),
                              (jitree.RandomForestClassifier, [3, 12, 40], "multiway"),
                              (jitree.RandomForestRegressor, [5, 150], "subset")]:
        X, y = categorical_data(2, 1500, sizes)
        forest = kind(n_estimators=4, random_state=0, categorical_split=mode,
                      categorical_features=list(range(len(sizes))),
                      **({} if kind is jitree.RandomForestClassifier else {"min_samples_leaf": 3}))
        forest.fit(X, y)
        rows = np.vstack([X, unseen_rows(X, sizes, 2)])
        forests.append((forest, rows[np.random.default_rng(0).permutation(rows.shape[0])]))
    return forests


@settings(max_examples=60, deadline=None)
@given(which=st.integers(0, 3), walk=st.sampled_from(["layout", "lanes", "blocks"]),
       n_rows=st.integers(1, 300), chunk_rows=st.integers(1, 320), start=st.integers(0, 1300),
       dtype=st.sampled_from([np.float32, np.float64]), nan=st.booleans())
def test_category_lanes_walk_every_row_to_the_leaf_of_the_tree_arrays(
        category_lane_forests, which, walk, n_rows, chunk_rows, start, dtype, nan):
    """predict_flat_categories, whose tasks of at least LANES rows in whole blocks walk each
    tree in lanes (each lane taking the task's next row when its row is at a leaf; the steps
    compiled for the forest's kind of category node) or in blocks, the other rows trees side
    by side, against the row-by-row walk of the Tree arrays (leaf_of_row_any): any number of
    rows and rows per task, float32 and float64, with and without NaN, each tree in the walk
    its layout gives it, or every tree in lanes or in blocks (``FlatTrees.lanes`` set). Each
    row's sum of its trees' votes or table rows is the twin's, added in tree order, to the
    bit."""
    forest, rows = category_lane_forests[which]
    X = rows[start:start + n_rows].astype(dtype)
    if not nan:
        X = np.nan_to_num(X)
    flat, table = forest._layout(X.dtype)
    assert flat.votes.all() == (which < 3)
    if walk != "layout":
        flat = flat._replace(lanes=np.full_like(flat.lanes, walk == "lanes"))
    out = np.empty((X.shape[0], table.shape[1]))
    assert not predict_flat_categories(*walk_input(X), flat,
                                       forest._flat_categories(X.dtype, raw=True), table,
                                       chunk_rows, out)
    expected = None
    for model in forest.estimators_:
        leaves = forest._node_table(model)[tree_leaves(model, X)]
        expected = leaves.copy() if expected is None else expected + leaves
    np.testing.assert_array_equal(out, expected)


def test_category_lanes_take_forests_of_one_kind_of_category_node(category_lane_forests):
    """The forests of the lanes test walk in lanes where their layout says so: each kind of
    category node has its compiled steps (predict.lane_kind), and the classifiers' trees pay
    (FlatTrees.lanes), so the test above exercises every kind's lanes."""
    for forest, rows in category_lane_forests:
        flat, _ = forest._layout(rows.dtype)
        categories = forest._flat_categories(rows.dtype, raw=True)
        kinds = (categories.bits.shape[0] > 0, categories.word.shape[0] > 0,
                 categories.slots.shape[0] > 0)
        assert (kinds[0] or kinds[1]) != kinds[2]
        assert flat.lanes.any() and rows.shape[0] >= LANES


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("as_given", [True, False])
def test_forest_category_tests_are_laid_out_in_the_forests_flat_order(dtype, as_given):
    """A categorical forest's first prediction lays its trees' tests out in the flat order
    its own layout keeps: no tree makes a layout of its own for it (each tree did, in
    float64, before the forest's layout existed), and the walk agrees with the trees'."""
    sizes = [4, 9, 90]
    X, y = categorical_data(3, 2000, sizes)
    forest = jitree.RandomForestClassifier(n_estimators=5, random_state=0,
                                           categorical_features=[0, 1, 2]).fit(X, y)
    rows = np.vstack([X[:300], unseen_rows(X, sizes, 3)]).astype(dtype)
    assert forest._walk_kind() == "categories"
    proba = (forest.predict_proba(rows) if as_given
             else forest._predict_mean_validated(forest._validate_predict_X(rows)))
    for model in forest.estimators_:
        cache = model.tree_.__dict__.get("_cache", {})
        assert "flat_tests" in cache
        assert not [key for key in cache if isinstance(key, tuple) and key[0] == "flat_trees"]
    np.testing.assert_allclose(
        proba, np.mean([model.predict_proba(rows) for model in forest.estimators_], axis=0),
        rtol=1e-12)


@pytest.mark.parametrize("mode", ["subset", "one_vs_rest", "multiway"])
def test_forest_apply_with_category_tests_walks_every_tree_at_once(monkeypatch, mode):
    """A forest whose trees test categories gives its leaves in one parallel pass
    (apply_flat_categories: each chunk's codes made once for every tree): the twin's leaves
    (missing values, unseen categories, narrow and wide subset nodes), in tasks of 64 rows
    and in one task shorter than a block; infinity refused as predict refuses it."""
    from jitree.kernels import predict as predict_kernels

    sizes = [4, NARROW_CATEGORIES + 1, 200]
    X, y = categorical_data(2, 2500, sizes)
    forest = jitree.RandomForestClassifier(n_estimators=4, random_state=0,
                                           categorical_features=[0, 1, 2],
                                           categorical_split=mode).fit(X, y)
    rows = np.vstack([X[:1000], unseen_rows(X, sizes, 2)])
    assert forest._walk_kind() == "categories"
    expected = np.column_stack([tree_leaves(model, rows) for model in forest.estimators_])
    walk = mock.patch.object(predict_kernels, "apply_flat_categories",
                             wraps=predict_kernels.apply_flat_categories)
    with walk as kernel:
        leaves = forest.apply(rows)
        assert kernel.call_count == 1
        assert leaves.dtype == np.int64 and leaves.flags.f_contiguous
        np.testing.assert_array_equal(leaves, expected)
        np.testing.assert_array_equal(forest.apply(rows[:5]), expected[:5])
        with monkeypatch.context() as patch:
            patch.setattr(tree_module, "TASK_BYTES", 3)  # tasks of 64 rows
            np.testing.assert_array_equal(forest.apply(rows), expected)
        assert kernel.call_count == 3 and kernel.call_args.args[-2] == 64
    bad = rows.copy()
    bad[7, 4] = np.inf
    with pytest.raises(ValueError, match="infinity") as raised:
        forest.apply(bad)
    with pytest.raises(ValueError) as predicted:
        forest.predict(bad)
    assert str(raised.value) == str(predicted.value)


def test_wide_subset_nodes_take_their_words_from_the_table():
    """Subset nodes of features of more than NARROW_CATEGORIES categories keep their tests
    in the bits table (the other nodes read its all-zero first block)."""
    X, y = categorical_data(2, 3000, [NARROW_CATEGORIES + 7, 5])
    model = jitree.DecisionTreeClassifier(categorical_features=[0, 1], subset_penalty=0.0,
                                          min_samples_category=0, random_state=0).fit(X, y)
    tree = model.tree_
    node_of_flat = tree.flat(np.float64)[4]
    subset = tree.split_kind[node_of_flat] == SPLIT_SUBSET
    wide = subset & (tree.feature[node_of_flat] == 0)
    assert wide.any() and (subset & ~wide).any() and tree.has_flat_categories
    word, bit_base, bits = tree.flat_tests()[:3]
    assert not word[wide].any() and (bit_base[wide] > 0).all()
    assert not bit_base[~wide].any() and not bits[:bit_base[wide].min()].any()
    rows = np.vstack([X, unseen_rows(X, [NARROW_CATEGORIES + 7, 5], 2)])
    np.testing.assert_array_equal(model.apply(rows), tree_leaves(model, rows))


def test_trees_with_wide_nodes_read_every_subset_test_from_the_table(monkeypatch):
    """When a subset node is wide, the FlatCategories hold no words: every subset node's bits
    are a block of the table (a narrow node's a one-word block after the wide ones), the
    bases uint32, and the walk reaches the same leaves; a table beyond TABLE_BASE_LIMIT
    entries has int64 bases."""
    sizes = [NARROW_CATEGORIES + 7, 5, 40]
    X, y = categorical_data(4, 3000, sizes)
    model = jitree.DecisionTreeClassifier(categorical_features=[0, 1, 2], subset_penalty=0.0,
                                          min_samples_category=0, random_state=0).fit(X, y)
    tree = model.tree_
    node_of_flat = tree.flat(np.float64)[4]
    subset = tree.split_kind[node_of_flat] == SPLIT_SUBSET
    wide = subset & (tree.feature[node_of_flat] == 0)
    assert wide.any() and (subset & ~wide).any()
    word, bit_base, bits = tree.flat_tests()[:3]
    categories = tree.flat_categories()
    assert categories.word.shape == (0,) and categories.bit_base.dtype == np.uint32
    assert categories.slot_base.dtype == np.uint32
    assert (categories.bit_base[subset] > 0).all() and not categories.bit_base[~subset].any()
    np.testing.assert_array_equal(categories.bit_base[wide], bit_base[wide])
    np.testing.assert_array_equal(categories.bits[:bits.shape[0]], bits)
    np.testing.assert_array_equal(categories.bits[categories.bit_base[subset & ~wide]],
                                  word[subset & ~wide])
    rows = np.vstack([X, unseen_rows(X, sizes, 4)])
    leaves = tree_leaves(model, rows)
    np.testing.assert_array_equal(model.apply(rows), leaves)

    # a table beyond the limit keeps int64 bases (the same kernel code, compiled for them
    # only when a model needs it: not walked here)
    monkeypatch.setattr(tree_module, "TABLE_BASE_LIMIT", bits.shape[0] - 1)
    large = tree_module.flat_categories(tree.flat_tests(), tree.feature_kind,
                                        tree.n_categories)
    assert large.bit_base.dtype == np.int64 and large.slot_base.dtype == np.uint32
    np.testing.assert_array_equal(large.bit_base, categories.bit_base)


def test_trees_without_wide_nodes_keep_the_words():
    X, y = categorical_data(5, 2000, [9, 30])
    model = jitree.DecisionTreeClassifier(categorical_features=[0, 1], subset_penalty=0.0,
                                          min_samples_category=0, random_state=0).fit(X, y)
    categories = model.tree_.flat_categories()
    assert categories.bits.shape == (0,) and categories.bit_base.shape == (0,)
    np.testing.assert_array_equal(categories.word, model.tree_.flat_tests()[0])
    assert categories.word.any()


def test_walks_without_subset_nodes_test_no_bits():
    """A tree of multiway and threshold nodes only keeps no words (the walk then skips the
    test of bits) and walks as the Tree arrays do: missing values, unseen categories, rows
    in blocks and rows left over (the single-row walk)."""
    sizes = [3, 12, 70]
    X, y = categorical_data(4, 2000, sizes)
    model = jitree.DecisionTreeClassifier(categorical_features=[0, 1, 2],
                                          categorical_split="multiway",
                                          random_state=0).fit(X, y)
    tree = model.tree_
    assert (tree.split_kind == SPLIT_MULTIWAY).any()
    assert not (tree.split_kind == SPLIT_SUBSET).any()
    categories = tree.flat_categories()
    assert categories.word.shape == (0,) and categories.bits.shape == (0,)
    rows = np.vstack([X, unseen_rows(X, sizes, 4)])
    np.testing.assert_array_equal(model.apply(rows), tree_leaves(model, rows))
    np.testing.assert_array_equal(model.apply(rows[:5]), tree_leaves(model, rows[:5]))


def test_features_beyond_the_code_limit_keep_the_node_walk():
    m = CODE_LIMIT + 1
    codes = np.arange(m, dtype=np.float64)
    y = (codes % 3 == 0).astype(int)
    X = np.column_stack([codes, codes % 7])
    model = jitree.DecisionTreeClassifier(max_depth=2, categorical_features=[0],
                                          subset_penalty=0.0, min_samples_category=0)
    model.fit(X, y)
    assert np.any(model.tree_.split_kind == SPLIT_SUBSET)
    assert not model.tree_.has_flat_categories
    rows = X[::97]
    np.testing.assert_array_equal(model.apply(rows), tree_leaves(model, rows))


@pytest.mark.parametrize("seed", range(3))
def test_multiway_slots_of_the_flat_layout(seed):
    """Each multiway node's block of slots sends every category code, and missing values
    (code m, the node's last slot), to the child ``child_of`` gives; every other node reads
    the first block, all zeros."""
    sizes = [2, 9, NARROW_CATEGORIES, 90]
    X, y = categorical_data(seed, 2500, sizes)
    model = jitree.DecisionTreeRegressor(categorical_features=[0, 1, 2, 3],
                                         categorical_split="multiway", max_depth=6,
                                         random_state=0).fit(X, y.astype(float))
    tree = model.tree_
    assert tree.has_flat_categories
    _, _, left, _, node_of_flat = tree.flat(np.float64)
    word, _, _, slot_base, slots = tree.flat_tests()
    multiway = tree.split_kind[node_of_flat] == SPLIT_MULTIWAY
    assert multiway.any()
    assert not slots[:slot_base[multiway].min()].any()
    assert not slot_base[~multiway].any() and not word[multiway].any()
    walk = tree.walk_arrays()
    for flat_node in np.flatnonzero(multiway):
        node = node_of_flat[flat_node]
        m = tree.n_categories[tree.feature[node]]
        for code in range(m + 1):
            x = float(code) if code < m else np.nan
            child = node_of_flat[left[flat_node] + slots[slot_base[flat_node] + code]]
            assert child == child_of(x, node, walk)
    rows = np.vstack([X, unseen_rows(X, sizes, seed)])
    np.testing.assert_array_equal(model.apply(rows), tree_leaves(model, rows))


@pytest.mark.parametrize("m", [NARROW_CATEGORIES, NARROW_CATEGORIES + 1, 128])
def test_category_at_the_last_code_and_missing_word_bit(m):
    """A feature of m categories: its last code and missing values both route by their
    bits (bits m - 1 and m: in the node's word, or across two words of the bits table)."""
    codes = np.tile(np.arange(m, dtype=np.float64), 20)
    y = (codes == m - 1).astype(int)
    X = np.column_stack([codes, np.zeros_like(codes)])
    X[:5, 0] = np.nan
    y[:5] = 1
    model = jitree.DecisionTreeClassifier(max_depth=1, categorical_features=[0],
                                          categorical_split="one_vs_rest").fit(X, y)
    rows = np.array([[m - 1.0, 0.0], [np.nan, 0.0], [0.0, 0.0], [float(m), 0.0]])
    np.testing.assert_array_equal(model.apply(rows), tree_leaves(model, rows))
    assert model.apply(rows)[0] != model.apply(rows)[2]


@pytest.mark.parametrize("mode", ["subset", "multiway"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numbers_taken_as_codes_read_only_the_zero_blocks(mode, dtype):
    """The category walks read one value a node and take its low bits as a code, a
    threshold node's too: a number's low bits reach the code mask (255 for a feature of 130
    categories, past its 131 codes). The tables' first blocks, which threshold nodes read,
    are zeros up to the mask, so numbers with every low-bit pattern go where the Tree
    arrays send them (wide subset nodes' bits, multiway slots)."""
    sizes = [130, 5]
    X, y = categorical_data(7, 3000, sizes)
    forest = jitree.RandomForestClassifier(n_estimators=4, random_state=0,
                                           categorical_features=[0, 1],
                                           categorical_split=mode).fit(X, y)
    rows = np.vstack([X[:1024], unseen_rows(X, sizes, 7)]).astype(dtype)
    unsigned = np.uint32 if dtype == np.float32 else np.uint64
    numbers = rows[:, 2:].copy()
    bits = numbers.view(unsigned)
    bits &= ~unsigned(255)
    bits |= (np.arange(rows.shape[0]) % 256).astype(unsigned)[:, None]
    rows[:, 2:] = numbers
    assert forest._walk_kind() == "categories"
    leaves = forest.apply(rows)
    for t, model in enumerate(forest.estimators_):
        np.testing.assert_array_equal(leaves[:, t], tree_leaves(model, rows))
        np.testing.assert_array_equal(model.apply(rows), leaves[:, t])


@pytest.mark.parametrize("counts, kinds, expected", [
    ([130, 0, 5], [2, 0, 2], 255),
    ([5_000_000, 0, 60], [1, 0, 2], 63),  # an ordinal feature's levels are no codes
    ([5_000_000, 60], [2, 2], CODE_LIMIT),  # a feature past CODE_LIMIT is tested by no node
    ([0, 0], [0, 0], 0),
])
def test_code_mask_and_zero_blocks_agree_within_sixteen_bits(counts, kinds, expected):
    """The walks' code mask (from the categorical features' counts, at most CODE_LIMIT),
    which FlatCategories carries, and the tables' zero blocks agree; the mask stays below a
    float32 NaN's quiet bit, which a feature of 2**22 categories or more would reach."""
    n_categories = np.array(counts, dtype=np.int32)
    feature_kind = np.array(kinds)
    tests = (np.zeros(1, dtype=np.uint64), np.zeros(0, dtype=np.int64),
             np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64),
             np.zeros(0, dtype=np.uint16))
    tables = (np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(len(counts) + 1, dtype=np.int64))
    categories = tree_module.flat_categories(tests, feature_kind, n_categories, tables)
    assert isinstance(categories.code_mask, np.uint64)
    mask = int(categories.code_mask)
    assert mask == expected
    assert tree_module._zero_blocks(n_categories, feature_kind) == ((mask >> 6) + 1, mask + 1)
    assert mask < 0x400000


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("as_given", [True, False])
def test_chunk_values_box_each_code_in_a_quiet_nan(dtype, as_given):
    """chunk_values, the category walks' copy of a task's rows, against NumPy: a numeric
    value's bits as they are (NaN included), a categorical value (as given, or encoded) a
    quiet NaN of X's type whose low bits hold its code, m for a missing or unseen one."""
    X, y, rows = value_data(6, 90, dtype, "C")
    forest = jitree.RandomForestClassifier(n_estimators=2, random_state=0,
                                           categorical_features=[0, 1]).fit(X, y)
    encoded = forest._validate_predict_X(rows)
    walked = rows if as_given else encoded
    categories = forest._flat_categories(walked.dtype, raw=as_given)
    X_walked, X_bits, magnitude_mask, infinity = walk_input(walked)
    box = quiet_nan(magnitude_mask, infinity)
    assert box == _QUIET_NAN[np.dtype(dtype)]
    values = np.empty(X_bits.shape, dtype=X_bits.dtype)
    chunk_values(X_walked, X_bits, 0, walked.shape[0], categories, box, values)
    expected = X_bits.copy()
    n_categories = forest.estimators_[0].tree_.n_categories
    for j in (0, 1):
        codes = np.where(np.isnan(encoded[:, j]), n_categories[j],
                         np.nan_to_num(encoded[:, j]))
        expected[:, j] = box | codes.astype(X_bits.dtype)
    np.testing.assert_array_equal(values, expected)
    assert np.isnan(values[:, :2].view(dtype)).all()
    assert (~np.isnan(encoded[:, :2])).sum() > 100 and np.isnan(encoded[:, :2]).sum() > 10


def test_infinity_is_refused_on_the_flat_category_walk():
    X, y = categorical_data(3, 500, [5])
    model = jitree.DecisionTreeClassifier(categorical_features=[0], random_state=0).fit(X, y)
    assert model.tree_.has_flat_categories
    bad = X[:10].copy()
    bad[3, 2] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        model.predict(bad)


# -- the compiled encoder -----------------------------------------------------------------------
@settings(deadline=None, max_examples=30)
@given(seed=st.integers(0, 2**32 - 1), dtype=st.sampled_from([np.float32, np.float64]))
def test_compiled_encoder_equals_the_general_one(seed, dtype):
    rng = np.random.default_rng(seed)
    n = 300
    X = np.column_stack([rng.choice([-2.5, 0.0, 1.0, 7.0, 1e6], n), rng.normal(size=n),
                         rng.integers(0, 4, n).astype(np.float64)])
    X[rng.random(X.shape) < 0.1] = np.nan
    y = rng.integers(0, 2, n)
    model = jitree.DecisionTreeClassifier(categorical_features=[0], ordinal_features=[2],
                                          max_depth=3).fit(X.astype(dtype), y)
    encoder = model._feature_encoder()
    rows = X.astype(dtype)
    rows[rng.random(n) < 0.2, 0] = rng.choice([3.0, -0.0, 0.5])  # unseen, -0.0, unseen
    fast = encoder.transform(rows)
    encoder._transform_float_array = lambda array: None  # the per-column path, same array
    try:
        general = encoder.transform(rows)
    finally:
        del encoder._transform_float_array
    assert fast.flags.c_contiguous and general.flags.c_contiguous
    assert fast.dtype == general.dtype == dtype
    np.testing.assert_array_equal(fast, general)


def test_compiled_encoder_refuses_infinity_with_the_general_message():
    X, y = categorical_data(4, 200, [4])
    model = jitree.DecisionTreeClassifier(categorical_features=[0]).fit(X, y)
    for column in (0, 1):
        bad = X[:5].copy()
        bad[2, column] = -np.inf
        with pytest.raises(ValueError, match=f"infinity.*column {column}"):
            model.predict(bad)


# -- trees and forests walking raw float X (categories looked up by value in the walk) ----------
def value_data(seed, m, dtype, order):
    """``(X, y, rows)``: column 0 of five category values (0.0 among them), column 1 of
    ``m`` integral ones, three numeric columns, NaN in every column; ``rows`` to predict
    (``dtype``, ``order``) also hold unseen values and -0.0 (category 0.0)."""
    rng = np.random.default_rng(seed)
    n = 3000
    values = np.array([-2.5, 0.0, 7.0, 1e6, 3.25])
    X = np.column_stack([rng.choice(values, n), rng.integers(0, m, n).astype(float),
                         rng.normal(size=(n, 3))])
    y = ((X[:, 0] > 1) ^ (X[:, 1] % 3 == 0) ^ (X[:, 2] > 0)).astype(int)
    X[rng.random(X.shape) < 0.05] = np.nan
    rows = np.vstack([X, unseen_rows(X, [5, m], seed)])
    rows[:30, 0] = rng.choice([1.0, -0.0, 1e7, np.nan], 30)
    return X, y, np.asarray(rows, dtype=dtype, order=order)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("order", ["C", "F"])
def test_forest_on_raw_x_equals_the_encoded_walk(dtype, order):
    X, y, rows = value_data(5, 40, dtype, order)
    forest = jitree.RandomForestClassifier(n_estimators=6, random_state=0,
                                           categorical_features=[0, 1]).fit(X, y)
    assert forest._walk_kind() == "categories"
    assert forest._flat_categories(rows.dtype, raw=True) is not None
    raw = forest.predict_proba(rows)
    encoded = forest._predict_mean_validated(forest._validate_predict_X(rows))
    np.testing.assert_array_equal(raw, encoded)
    # apply walks X as given too: no encoded copy, the encoded walk's leaves
    walks = mock.patch.object(forest, "_validate_predict_X", wraps=forest._validate_predict_X)
    with walks as validation:
        leaves = forest.apply(rows)
        assert validation.call_count == 0
    encoded_leaves = forest._apply_validated(forest._validate_predict_X(rows))
    np.testing.assert_array_equal(leaves, encoded_leaves)
    np.testing.assert_array_equal(
        leaves, np.column_stack([tree_leaves(model, rows) for model in forest.estimators_]))
    bad = rows[:20].copy()
    bad[7, 3] = np.inf
    with pytest.raises(ValueError, match="infinity.*column 3"):
        forest.predict_proba(bad)
    with pytest.raises(ValueError, match="infinity.*column 3"):
        forest.apply(bad)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("order", ["C", "F"])
def test_tree_on_raw_x_equals_the_encoded_walk(dtype, order, monkeypatch):
    """A single tree walks a float X as given too (CategoryValueRows): predict,
    predict_proba and apply of classifiers and regressors equal the walk of the encoded X,
    without encoding it; an infinity gives the encoder's error."""
    X, y, rows = value_data(7, 90, dtype, order)
    for model in (jitree.DecisionTreeClassifier(categorical_features=[0, 1], random_state=0),
                  jitree.DecisionTreeRegressor(categorical_features=[0, 1], random_state=0)):
        model.fit(X.astype(dtype), y)
        assert not model.tree_.is_binary_threshold and model.tree_.has_flat_categories
        encoded = model._validate_predict_X(rows)
        expected = {"apply": model._apply_validated(encoded),
                    "predict": model._predict_validated(encoded)}
        if hasattr(model, "predict_proba"):
            expected["predict_proba"] = model._predict_proba_validated(encoded)
        np.testing.assert_array_equal(expected["apply"], tree_leaves(model, rows))
        with monkeypatch.context() as patch:  # the walk reads X as given
            patch.setattr(type(model._feature_encoder()), "transform", None)
            for method, values in expected.items():
                np.testing.assert_array_equal(getattr(model, method)(rows), values)
            np.testing.assert_array_equal(model.apply(rows[:3]), expected["apply"][:3])
        bad = rows[:20].copy()
        for column in (0, 3):
            bad[7, column] = np.inf
            with pytest.raises(ValueError, match=f"infinity.*column {column}"):
                model.predict(bad)
            bad[7, column] = 0.0


def test_infinity_in_x_as_given_warns_once_then_raises():
    """A model fitted with names, given an array holding an infinity: one warning about the
    names (the walk of X as given matched them), then the encoder's error."""
    pd = pytest.importorskip("pandas")
    X, y = categorical_data(8, 800, [6])
    frame = pd.DataFrame(X, columns=["c", "a", "b", "d"])
    bad = X[:10].copy()
    bad[3, 1] = np.inf
    for model in (jitree.DecisionTreeClassifier(categorical_features=["c"], random_state=0),
                  jitree.RandomForestClassifier(n_estimators=2, random_state=0,
                                                categorical_features=["c"])):
        model.fit(frame, y)
        for method in ("predict_proba", "apply"):
            with pytest.warns(UserWarning, match="feature names") as caught:
                with pytest.raises(ValueError, match="infinity.*column 1"):
                    getattr(model, method)(bad)
            assert len(caught) == 1, [str(w.message) for w in caught]
            assert caught[0].filename == __file__  # the warning points at the call


def test_forest_with_an_ordinal_feature_reads_encoded_x():
    """Ordinal features are tested on their level codes: such a forest encodes X first."""
    X, y = categorical_data(6, 1500, [6, 5])
    forest = jitree.RandomForestClassifier(n_estimators=4, random_state=0,
                                           categorical_features=[0],
                                           ordinal_features=[1]).fit(X, y)
    assert forest._flat_categories(X.dtype, raw=True) is None
    assert X.dtype not in forest._cached_layouts()  # no layout made for a walk not taken
    rows = np.vstack([X, unseen_rows(X, [6, 5], 6)])
    leaves = forest.apply(rows)
    for t, model in enumerate(forest.estimators_):
        np.testing.assert_array_equal(leaves[:, t], tree_leaves(model, rows))
    np.testing.assert_allclose(
        forest.predict_proba(rows),
        np.mean([model.predict_proba(rows) for model in forest.estimators_], axis=0),
        rtol=1e-12)
