"""Trees with every node kind, built by hand: threshold tests on numeric and ordinal features,
category subsets (one and two bitset words), multiway nodes, and missing-value routing.

Everything downstream of a Tree is checked on them against plain-Python twins: prediction
(``Tree.apply``), the exports and rules, post-pruning, save/load and ``check_tree``.
"""

import math
import re
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jitree
from jitree.kernels.predict import LEAF_RANK_BITS
from jitree.model import pruning
from jitree.model.persistence import load, save
from jitree.model.rules import Condition, format_rules, rules
from jitree.model.tree import (
    FEATURE_CATEGORICAL,
    FEATURE_NUMERIC,
    FEATURE_ORDINAL,
    SPLIT_MULTIWAY,
    SPLIT_SUBSET,
    SPLIT_THRESHOLD,
    TREE_LEAF,
    Tree,
    flat_trees,
    float32_below,
)
from jitree.model.tree_check import check_tree

L = TREE_LEAF
NAMES = ["outlook", "color", "size", "temp"]
CATEGORIES = [np.array(["sunny", "overcast", "rainy", "foggy"], dtype=object),
              np.array(["red", "green", "blue", "black"]),
              np.array(["small", "medium", "large"]),
              None]


def weather_tree():
    """outlook (multiway): sunny -> color in {red, blue} (subset, missing right)
    ? temp <= 20.5 : leaf; overcast, foggy -> leaf; rainy and missing -> size <= small
    (ordinal, missing left) ? leaf : color (multiway: red, blue and missing / green, black)."""
    counts = np.array([[30, 30], [10, 12], [9, 1], [11, 17], [6, 4], [4, 8], [1, 9], [10, 8],
                       [5, 0], [1, 4], [9, 2], [1, 6]], dtype=float)
    n = counts.sum(axis=1)
    fractions = counts / n[:, None]
    return Tree(
        n_features=4, n_classes=2,
        feature=[0, 1, -2, 2, 3, -2, -2, 1, -2, -2, -2, -2],
        threshold=[-2, -2, -2, 0.5, 20.5, -2, -2, -2, -2, -2, -2, -2],
        children_left=[1, 4, L, 6, 8, L, L, 10, L, L, L, L],
        children_right=[3, 5, L, 7, 9, L, L, 11, L, L, L, L],
        value=counts, impurity=1.0 - (fractions ** 2).sum(axis=1),
        n_node_samples=n.astype(np.int64), weighted_n_node_samples=n,
        split_kind=[2, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0],
        missing_left=[0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0],
        category_offset=[0, 0, -1, -1, -1, -1, -1, 5, -1, -1, -1, -1],
        category_bits=np.array([0b0101], dtype=np.uint64),
        # root: sunny, overcast, rainy, foggy, missing; node 7: red, green, blue, black, missing
        multiway_slot=[0, 1, 2, 1, 2, 0, 1, 0, 1, 0],
        n_categories=[4, 4, 3, 0],
        feature_kind=[FEATURE_CATEGORICAL, FEATURE_CATEGORICAL, FEATURE_ORDINAL,
                      FEATURE_NUMERIC])


def weather_model(categories=True, missing_seen=None):
    model = jitree.DecisionTreeClassifier._from_tree(
        weather_tree(), classes=np.array(["no", "yes"]), feature_names=NAMES)
    if categories:
        model.categories_ = list(CATEGORIES)
    if missing_seen is not None:
        model.missing_values_in_feature_mask_ = np.array(missing_seen)
    return model


# rows: one per path, plus missing values, unseen and malformed codes
WEATHER_ROWS = np.array([
    [0, 0, 0, 10.0], [0, 2, 2, 30.0], [0, 1, 0, 0], [1, 0, 0, 0], [3, 3, 1, 99],
    [2, 0, 0, 0], [2, 0, 2, 0], [2, 1, 1, 0], [2, 3, np.nan, 0],
    [np.nan, np.nan, np.nan, np.nan], [0, 7, 1, np.nan], [0, 0.5, 1, np.nan],
    [0, -1, 1, 5], [4, 1, 2, 0], [-0.0, 2, 5, 20.5], [2.5, 1e30, 5, 0], [1, 1, -3, 0],
])
WEATHER_LEAVES = [8, 9, 5, 2, 2, 6, 10, 11, 6, 6, 5, 5, 5, 11, 8, 10, 2]


def as_values(rows):
    """The rows an estimator with ``CATEGORIES`` takes: category values for the codes, None
    for a missing value and "unseen" for a code outside the categories (both missing to the
    tree). Only the rows whose ordinal value is a level or NaN: beyond the levels, the tree
    compares the code while the estimator sees an unseen level (missing)."""
    keep = np.isnan(rows[:, 2]) | np.isin(rows[:, 2], [0, 1, 2])
    values = np.empty((int(keep.sum()), 4), dtype=object)
    for i, row in enumerate(rows[keep]):
        for f, x in enumerate(row):
            if CATEGORIES[f] is None:
                values[i, f] = x
            elif np.isnan(x):
                values[i, f] = None
            elif x == int(x) and 0 <= x < len(CATEGORIES[f]):
                values[i, f] = CATEGORIES[f][int(x)]
            else:
                values[i, f] = "unseen"
    return values, keep


# -- a random tree of every kind, and a naive walk -------------------------------------------
N_CODES = (0, 4, 3, 70)  # n_categories: numeric, ordinal, categorical, categorical (2 words)
KINDS = (FEATURE_NUMERIC, FEATURE_ORDINAL, FEATURE_CATEGORICAL, FEATURE_CATEGORICAL)


def random_tree(rng, n_splits, n_classes=2):
    """A random sound tree mixing all node kinds: a random leaf is split at each step, its
    children appended at the end (multiway children consecutive)."""
    feature, threshold, left, right, kind = [-2], [-2.0], [L], [L], [0]
    missing, offset, bits, slots = [0], [-1], [], []
    for _ in range(n_splits):
        leaves = [node for node in range(len(feature)) if left[node] == L]
        node = leaves[rng.integers(len(leaves))]
        f = int(rng.integers(4))
        first = len(feature)
        n_children = 2
        if KINDS[f] != FEATURE_CATEGORICAL:
            kind[node] = SPLIT_THRESHOLD
            threshold[node] = float(rng.normal()) if f == 0 else \
                float(rng.choice([-0.5, 0.5, 1.5, 2.5, 1.2, 7.0]))
        elif rng.random() < 0.5:
            kind[node] = SPLIT_SUBSET
            offset[node] = len(bits)
            chosen = rng.random(N_CODES[f]) < 0.5
            words = [0] * ((N_CODES[f] + 63) // 64)
            for code in np.flatnonzero(chosen):
                words[code // 64] |= 1 << int(code % 64)
            bits += words
        else:
            kind[node] = SPLIT_MULTIWAY
            n_children = int(rng.integers(2, 5))
            offset[node] = len(slots)
            slots += rng.integers(n_children, size=N_CODES[f] + 1).tolist()
        feature[node] = f
        missing[node] = int(kind[node] != SPLIT_MULTIWAY and rng.random() < 0.5)
        left[node] = first
        right[node] = first + n_children - 1
        for _ in range(n_children):
            feature.append(-2)
            threshold.append(-2.0)
            left.append(L)
            right.append(L)
            kind.append(0)
            missing.append(0)
            offset.append(-1)
    n_nodes = len(feature)
    # continuous weights: no two effective alphas tie
    counts = np.zeros((n_nodes, n_classes))
    for node in range(n_nodes - 1, -1, -1):
        if left[node] == L:
            counts[node] = rng.uniform(0.1, 10.0, size=n_classes)
        else:
            below = range(left[node], right[node] + 1) if kind[node] == SPLIT_MULTIWAY \
                else (left[node], right[node])
            counts[node] = sum(counts[child] for child in below)
    weight = counts.sum(axis=1)
    fractions = counts / weight[:, None]
    return Tree(4, n_classes, feature, threshold, left, right, counts,
                1.0 - (fractions ** 2).sum(axis=1), np.ceil(weight).astype(np.int64), weight,
                split_kind=kind, missing_left=missing, category_offset=offset,
                category_bits=np.array(bits, dtype=np.uint64), multiway_slot=slots,
                n_categories=N_CODES, feature_kind=KINDS)


def random_rows(rng, n):
    """Rows of the random trees' features: valid codes mostly, NaN, unseen and malformed
    codes, ordinal levels and a few values beyond them."""
    numeric = rng.normal(size=n)
    numeric[rng.random(n) < 0.15] = np.nan
    ordinal = rng.choice([0.0, 1.0, 2.0, 3.0, np.nan, 1.5, 7.0, -1.0], size=n)
    small = rng.choice([0.0, 1.0, 2.0, 0.0, 1.0, 2.0, np.nan, 3.0, 0.5, -1.0], size=n)
    large = rng.integers(70, size=n).astype(float)
    odd = rng.random(n)
    large[odd < 0.1] = np.nan
    large[(odd >= 0.1) & (odd < 0.15)] = 70.0
    large[(odd >= 0.15) & (odd < 0.2)] = 64.5
    return np.column_stack([numeric, ordinal, small, large])


def naive_child(tree, node, x):
    """The child of internal ``node`` for value ``x``, from the Tree docstring alone."""
    left, right = int(tree.children_left[node]), int(tree.children_right[node])
    missing_side = left if tree.missing_left[node] else right
    kind = tree.split_kind[node]
    if kind == SPLIT_THRESHOLD:
        if math.isnan(x):
            return missing_side
        return left if x <= tree.threshold[node] else right
    m = int(tree.n_categories[tree.feature[node]])
    code = int(x) if not math.isnan(x) and x == int(x) and 0 <= x < m else None
    offset = int(tree.category_offset[node])
    if kind == SPLIT_SUBSET:
        if code is None:
            return missing_side
        word = int(tree.category_bits[offset + code // 64])
        return left if (word >> (code % 64)) & 1 else right
    return left + int(tree.multiway_slot[offset + (m if code is None else code)])


def naive_path(tree, row):
    node, path = 0, [0]
    while tree.children_left[node] != L:
        node = naive_child(tree, node, float(row[tree.feature[node]]))
        path.append(node)
    return path


def naive_leaves(tree, X):
    return np.array([naive_path(tree, row)[-1] for row in X])


# -- prediction -----------------------------------------------------------------------------
def test_hand_built_tree_routes_every_kind():
    tree = weather_tree()
    assert tree.n_children(0) == 3 and tree.children(0) == [1, 2, 3]
    assert tree.children(7) == [10, 11] and tree.children(2) == []
    np.testing.assert_array_equal(tree.depth, [0, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3])
    np.testing.assert_array_equal(naive_leaves(tree, WEATHER_ROWS), WEATHER_LEAVES)
    for X in (WEATHER_ROWS, WEATHER_ROWS.astype(np.float32),
              np.asfortranarray(WEATHER_ROWS)):
        np.testing.assert_array_equal(tree.apply(X), WEATHER_LEAVES)
    values, keep = as_values(WEATHER_ROWS)
    model = weather_model()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # fitted with names, given an array
        proba = model.predict_proba(values)
        leaves = model.apply(values)
    np.testing.assert_array_equal(leaves, np.array(WEATHER_LEAVES)[keep])
    np.testing.assert_allclose(proba, tree.probability_table()[leaves])


@given(seed=st.integers(0, 2**32 - 1), n_splits=st.integers(0, 12))
def test_apply_matches_naive_walk_on_random_trees(seed, n_splits):
    rng = np.random.default_rng(seed)
    tree = random_tree(rng, n_splits)
    X = random_rows(rng, 60)
    expected = naive_leaves(tree, X)
    np.testing.assert_array_equal(tree.apply(X), expected)
    np.testing.assert_array_equal(tree.apply(X.astype(np.float32)),
                                  naive_leaves(tree, X.astype(np.float32)))



@given(seed=st.integers(0, 2**32 - 1), n_splits=st.integers(1, 12))
def test_fewer_rows_than_nodes_copy_their_leaves_rows(seed, n_splits):
    """With fewer rows than nodes, the walk gives each row's node id and only those rows of
    the node table are copied (not the whole table into flat order): the same rows, bit for
    bit, as the rows of a batch larger than the tree, on every node kind and both dtypes."""
    rng = np.random.default_rng(seed)
    tree = random_tree(rng, n_splits)
    X = random_rows(rng, 4 * tree.node_count)
    table = rng.normal(size=(tree.node_count, 3))
    for dtype in (np.float64, np.float32):
        rows = X.astype(dtype)
        batch = tree.predict_table(rows, table)
        leaves = naive_leaves(tree, rows)
        np.testing.assert_array_equal(batch, table[leaves])
        for k in (1, 2):
            assert k < tree.node_count
            few = tree.predict_table(rows[:k], table)
            assert few.flags.c_contiguous and few.shape == (k, 3)
            np.testing.assert_array_equal(few.view(np.uint64), batch[:k].view(np.uint64))
            np.testing.assert_array_equal(tree.apply(rows[:k]), leaves[:k])
    # the node ids' table is writeable like the batches' tables: no second compiled
    # specialisation of the predict kernels for a read-only one
    assert tree._cache["flat_node_ids"].flags.writeable
    with pytest.raises(ValueError, match="2-D"):
        tree.predict_table(X[:1], table[:, 0])


def test_few_rows_of_a_fitted_tree_dense_sparse_and_infinite():
    """A served row (fewer rows than nodes) predicts as in a batch from dense and CSR X, and
    an infinity in it is refused."""
    sparse = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 4))
    X[rng.random(X.shape) < 0.5] = 0.0
    y = (X[:, 0] + X[:, 1] > 0).astype(int) + (X[:, 2] > 0.5)
    model = jitree.DecisionTreeClassifier(random_state=0).fit(X, y)
    assert model.tree_.node_count > 2
    proba, labels = model.predict_proba(X), model.predict(X)
    for rows in (X[:2], sparse.csr_matrix(X[:2])):
        np.testing.assert_array_equal(model.predict_proba(rows), proba[:2])
        np.testing.assert_array_equal(model.predict(rows), labels[:2])
    with pytest.raises(ValueError, match="infinity"):
        model.tree_.apply(np.array([[np.inf, 0.0, 0.0, 0.0]]))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_flat_walk_sends_missing_values_where_the_tree_says(dtype):
    """Trees of threshold tests predict rows with NaN on the flat layout (chunks with and
    without NaN, blocks and the tail rows) as the Tree docstring's walk does; an infinity
    is refused."""
    from jitree.datasets import make_classification_data

    rng = np.random.default_rng(0)
    X, y = make_classification_data(3000, 5, 3, seed=1)
    X = X.astype(np.float64)
    X[rng.random(X.shape) < 0.2] = np.nan
    tree = jitree.DecisionTreeClassifier(max_depth=8, random_state=0).fit(X, y).tree_
    internal = tree.children_left >= 0
    assert tree.is_binary_threshold
    assert set(tree.missing_left[internal].tolist()) == {0, 1}  # NaN sent both ways
    rows = rng.normal(size=(5003, 5)).astype(dtype)  # chunks of 2048 rows, a 3-row tail
    rows[:2048][rng.random((2048, 5)) < 0.3] = np.nan  # the second chunk has no NaN
    rows[5001, 2] = np.nan  # in the tail
    np.testing.assert_array_equal(tree.apply(rows), naive_leaves(tree, rows))
    forest = jitree.RandomForestClassifier(n_estimators=4, max_depth=6, random_state=0,
                                           n_jobs=2).fit(X, y)
    expected = np.mean([t.tree_.probability_table()[naive_leaves(t.tree_, rows)]
                        for t in forest.estimators_], axis=0)
    np.testing.assert_allclose(forest.predict_proba(rows), expected, rtol=1e-12)
    rows[3000, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        tree.apply(rows)
    with pytest.raises(ValueError, match="infinity"):
        forest.predict_proba(rows)



@pytest.mark.parametrize("params", [dict(), dict(max_leaf_nodes=300), dict(ccp_alpha=2e-3),
                                    dict(max_depth=1), dict(min_samples_split=10**6)])
def test_flat_order_is_the_depth_first_pair_numbering(params):
    """Tree._flat_order (the compiled walk, kernels.predict.write_flat) against a Python
    stack walk: children numbered in pairs, internal nodes in depth-first order, the heavier
    child's subtree first (best-first and pruned trees number their nodes out of level
    order; the sparse growth's deep chains of nodes)."""
    from jitree.datasets import make_classification_data

    def naive(tree, heavy_first=True):
        order, stack = [0], [0]
        weight = tree.weighted_n_node_samples
        while stack:
            node = stack.pop()
            first = int(tree.children_left[node])
            if first != L:
                last = int(tree.children_right[node])
                children = list(range(first, last + 1)) \
                    if tree.split_kind[node] == SPLIT_MULTIWAY else [first, last]
                order += children
                # the heaviest child's subtree first (ties: the first in slot order), then
                # the others in slot order
                heavy = max(range(len(children)), key=lambda j: (weight[children[j]], -j)) \
                    if heavy_first else 0
                visit = [children[heavy]] + [c for j, c in enumerate(children) if j != heavy]
                stack += visit[::-1]
        return np.array(order)

    def check_layout(tree):
        """The whole layout (kernels.predict.write_flat) against the naive order: first
        children, features, thresholds (+inf at leaves; float32: the float32 below), sides
        of missing values, depth; a forest's leaves hold their rank in Tree id order."""
        order = naive(tree)
        np.testing.assert_array_equal(tree._flat_order(), order)
        flat_of = np.empty_like(order)
        flat_of[order] = np.arange(order.shape[0])
        leaf = tree.children_left[order] == L
        feature, threshold, left, depth, node_of_flat = tree.flat(np.float64)
        np.testing.assert_array_equal(node_of_flat, order)
        np.testing.assert_array_equal(
            left, np.where(leaf, np.arange(order.shape[0]),
                           flat_of[np.where(leaf, 0, tree.children_left[order])]))
        np.testing.assert_array_equal(feature, np.where(leaf, 0, tree.feature[order]))
        np.testing.assert_array_equal(threshold, np.where(leaf, np.inf, tree.threshold[order]))
        np.testing.assert_array_equal(tree.flat_missing_right(),
                                      ~leaf & (tree.missing_left[order] == 0))
        assert depth == tree.depth.max()
        assert tree.flat(np.float32)[1].dtype == np.float32
        np.testing.assert_array_equal(tree.flat(np.float32)[1], float32_below(threshold))
        flat, table = flat_trees([tree, tree], np.float64, [tree.value, tree.value],
                                 vote=False)
        leaves = np.flatnonzero(tree.children_left == L)
        np.testing.assert_array_equal(table, np.concatenate([tree.value[leaves]] * 2))
        np.testing.assert_array_equal(flat.leaf_base, [0, leaves.shape[0]])
        for root in flat.root:
            bits = flat.threshold_bits[root:root + order.shape[0]][leaf]
            np.testing.assert_array_equal(leaves[bits & ((1 << LEAF_RANK_BITS) - 1)],
                                          order[leaf])

    X, y = make_classification_data(4000, 6, 3, seed=2)
    tree = jitree.DecisionTreeClassifier(random_state=0, **params).fit(X, y).tree_
    check_layout(tree)
    if not params:  # some right child is the heavier and has a subtree: the orders differ
        assert not np.array_equal(naive(tree), naive(tree, heavy_first=False))
    rng = np.random.default_rng(0)  # a chain of hundreds of levels: one value per row
    chain = np.diag(rng.uniform(1.0, 2.0, 600))
    deep = jitree.DecisionTreeClassifier(**params).fit(chain, rng.integers(0, 2, 600)).tree_
    check_layout(deep)
    X[::5, 1] = np.nan  # missing values sent either way
    check_layout(jitree.DecisionTreeRegressor(random_state=0, **params).fit(X, y).tree_)
    # multiway nodes: the heaviest of k children first, the others in slot order
    # (half the rows' category tells their class: the root's split is multiway)
    X[:, 0] = np.where(rng.random(X.shape[0]) < 0.5, 2 * y + rng.integers(0, 2, X.shape[0]),
                       rng.integers(0, 6, X.shape[0]))
    multiway = jitree.DecisionTreeClassifier(random_state=0, categorical_features=[0],
                                             categorical_split="multiway",
                                             **params).fit(X, y).tree_
    if params.get("max_depth") != 1 and "min_samples_split" not in params:
        assert (multiway.split_kind == SPLIT_MULTIWAY).any()
    if not params:  # the heaviest of the root's children is not its first
        assert not np.array_equal(naive(multiway), naive(multiway, heavy_first=False))
    np.testing.assert_array_equal(multiway._flat_order(), naive(multiway))


# -- exports ----------------------------------------------------------------------------------
WEATHER_TEXT = """\
|--- outlook = sunny
|   |--- color in {red, blue}
|   |   |--- temp <= 20.5000
|   |   |   |--- class: no
|   |   |--- temp >  20.5000
|   |   |   |--- class: yes
|   |--- color not in {red, blue} (or missing)
|   |   |--- class: yes
|--- outlook in {overcast, foggy}
|   |--- class: no
|--- outlook = rainy (or missing)
|   |--- size <= small
|   |   |--- class: yes
|   |--- size >  small
|   |   |--- color in {red, blue} (or missing)
|   |   |   |--- class: no
|   |   |--- color in {green, black}
|   |   |   |--- class: yes
"""


def test_export_text_names_categories_and_marks_missing_branches():
    # 4 decimals: the text was written before export_text took scikit-learn's default of 2
    assert jitree.export_text(weather_model(), decimals=4) == WEATHER_TEXT
    # threshold tests show their missing branch once the model saw missing values there
    marked = jitree.export_text(weather_model(missing_seen=[True, True, True, True]),
                                decimals=4)
    assert "|   |   |--- temp >  20.5000 (or missing)\n" in marked
    assert "|   |--- size <= small (or missing)\n" in marked
    assert marked.count("(or missing)") == 5
    # without categories_: the codes
    codes = jitree.export_text(weather_model(categories=False))
    assert codes.splitlines()[:2] == ["|--- outlook = 0", "|   |--- color in {0, 2}"]
    assert "|--- outlook in {1, 3}" in codes and "|   |--- size <= 0" in codes


def test_category_names_of_other_types_and_single_categories():
    model = weather_model()
    model.categories_ = [np.array([10, 20, 30, 40]), np.array([True, False, 2.5, "x"],
                                                             dtype=object),
                         np.array([0.5, 1.5, 2.5]), None]
    text = jitree.export_text(model)
    assert "|--- outlook = 10\n" in text and "|--- outlook in {20, 40}\n" in text
    assert "|   |--- color in {True, 2.5}\n" in text
    assert "|   |--- size <= 0.5\n" in text  # the level's name, not the threshold
    # a one-category subset reads as == / !=
    tree = weather_tree()
    tree.category_bits[0] = 0b0100
    single = jitree.DecisionTreeClassifier._from_tree(tree, classes=np.array(["no", "yes"]),
                                                      feature_names=NAMES)
    single.categories_ = CATEGORIES
    text = jitree.export_text(single)
    assert "|   |--- color == blue\n" in text and "|   |--- color != blue (or missing)\n" in text


def test_malformed_categories_are_refused():
    model = weather_model()
    model.categories_ = CATEGORIES[:3]
    with pytest.raises(ValueError, match="one entry per feature"):
        jitree.export_text(model)
    model.categories_ = [CATEGORIES[0][:3], *CATEGORIES[1:]]
    with pytest.raises(ValueError, match=r"categories_\[0\] must list the 4 categories"):
        rules(model)
    model = weather_model(missing_seen=[True, False])
    with pytest.raises(ValueError, match="one boolean per feature"):
        jitree.export_graphviz(model)


def parse_dot(dot):
    pydot = pytest.importorskip("pydot")
    with warnings.catch_warnings():
        # pydot's parser calls pyparsing names that recent pyparsing deprecates: not ours
        warnings.filterwarnings("ignore", category=DeprecationWarning, module="pydot")
        (graph,) = pydot.graph_from_dot_data(dot)
    nodes = {n.get_name(): n.get_label() for n in graph.get_nodes()
             if n.get_name() not in ("node", "edge", "graph")}
    edges = {(e.get_source(), e.get_destination()): e.get_label() for e in graph.get_edges()}
    return nodes, edges


def test_graphviz_boxes_and_branch_edges():
    model = weather_model(missing_seen=[False, False, True, False])
    nodes, edges = parse_dot(jitree.export_graphviz(model, filled=True))
    tree = model.tree_
    assert len(nodes) == tree.node_count and len(edges) == tree.node_count - 1
    parent, child = tree.parent_child_pairs()
    assert set(edges) == {(str(p), str(c)) for p, c in zip(parent, child, strict=True)}
    assert nodes["0"].startswith('"outlook\\ngini = 0.5\\nsamples = 60')
    assert nodes["1"].startswith('"color in {red, blue}\\ngini')
    assert nodes["3"].startswith('"size <= small (or missing)\\ngini')
    assert nodes["7"].startswith('"color\\ngini')
    assert edges[("0", "1")] == '"= sunny"'
    assert edges[("0", "2")] == '"in {overcast, foggy}"'
    assert edges[("0", "3")] == '"= rainy (or missing)"'
    assert edges[("7", "10")] == '"in {red, blue} (or missing)"'
    assert edges[("1", "4")] is None and edges[("3", "6")] is None  # binary below the root
    # max_depth: the multiway root's children are drawn, their subtrees hidden
    nodes, edges = parse_dot(jitree.export_graphviz(model, max_depth=1))
    assert len(nodes) == 4 + 4 and sum(label == '"(...)"' for label in nodes.values()) == 4
    assert edges[("0", "2")] == '"in {overcast, foggy}"'


def test_plot_tree_labels_multiway_edges():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    try:
        figure, ax = plt.subplots(figsize=(12, 7))
        texts = jitree.plot_tree(weather_model(), ax=ax)
        assert len(texts) == 12
        assert texts[0].get_text().startswith("outlook\ngini = 0.5")
        drawn = {text.get_text() for text in ax.texts} - {t.get_text() for t in texts}
        assert {"= sunny", "in {overcast, foggy}", "= rainy\n(or missing)",
                "in {red, blue}\n(or missing)", "in {green, black}"} <= drawn
        assert "True" not in drawn  # the root is multiway: no True/False edges
    finally:
        plt.close("all")


# -- rules ------------------------------------------------------------------------------------
def test_rules_text_of_every_kind():
    text = format_rules(rules(weather_model(missing_seen=[False, False, True, False])))
    assert text == (
        "IF outlook == sunny AND color in {red, blue} AND temp <= 20.5 THEN class = no "
        "(support 5 = 8.3%, confidence 1.000)\n"
        "IF outlook == sunny AND color in {red, blue} AND temp > 20.5 THEN class = yes "
        "(support 5 = 8.3%, confidence 0.800)\n"
        "IF outlook == sunny AND color not in {red, blue} (or missing) THEN class = yes "
        "(support 12 = 20.0%, confidence 0.667)\n"
        "IF outlook in {overcast, foggy} THEN class = no (support 10 = 16.7%, confidence "
        "0.900)\n"
        "IF outlook == rainy (or missing) AND size <= small (or missing) THEN class = yes "
        "(support 10 = 16.7%, confidence 0.900)\n"
        "IF outlook == rainy (or missing) AND size > small AND color in {red, blue} (or "
        "missing) THEN class = no (support 11 = 18.3%, confidence 0.818)\n"
        "IF outlook == rainy (or missing) AND size > small AND color in {green, black} THEN "
        "class = yes (support 7 = 11.7%, confidence 0.857)\n")
    found = rules(weather_model())
    assert [rule.leaf for rule in found] == [8, 9, 5, 2, 6, 10, 11]
    size = found[4].conditions[1]
    assert (size.operator, size.threshold, size.labels, size.missing) == \
        ("<=", 0.5, ("small",), True)
    color = found[2].conditions[1]
    assert (color.operator, color.codes, color.missing) == ("not in", (0, 2), True)


def test_conditions_on_categories_merge_along_the_path():
    # two category tests on one feature: the allowed categories are intersected
    tree = weather_tree()
    tree.feature[7] = 0  # node 7 tests outlook again below outlook = rainy (or missing)
    model = jitree.DecisionTreeClassifier._from_tree(
        Tree(**{**tree.arrays(), "n_features": 4, "n_classes": 2}),
        classes=np.array(["no", "yes"]), feature_names=NAMES)
    model.categories_ = CATEGORIES
    found = rules(model)
    deep = [rule for rule in found if rule.leaf in (10, 11)]
    assert [str(rule.conditions[0]) for rule in deep] == [
        "outlook == rainy (or missing)", "outlook in {}"]
    masks = np.array([rule.matches(WEATHER_ROWS) for rule in found])
    assert (masks.sum(axis=0) == 1).all()


def assert_rules_partition(model, X):
    found = rules(model)
    masks = np.array([rule.matches(X) for rule in found])
    assert (masks.sum(axis=0) == 1).all(), "a row matches no rule or several"
    leaves = np.array([rule.leaf for rule in found])[np.argmax(masks, axis=0)]
    np.testing.assert_array_equal(leaves, model.tree_.apply(np.asarray(X, dtype=np.float64)))


def test_rules_partition_rows_with_missing_and_unseen_values():
    for model in (weather_model(), weather_model(categories=False),
                  weather_model(missing_seen=[True] * 4)):
        assert_rules_partition(model, WEATHER_ROWS)
        assert_rules_partition(model, WEATHER_ROWS.astype(np.float32))


@given(seed=st.integers(0, 2**32 - 1), n_splits=st.integers(0, 12))
def test_rules_partition_random_trees(seed, n_splits):
    rng = np.random.default_rng(seed)
    tree = random_tree(rng, n_splits)
    model = jitree.DecisionTreeClassifier._from_tree(tree, classes=np.array([0, 1]))
    assert_rules_partition(model, random_rows(rng, 80))


def _encode(model, X):
    """The codes the tree sees for object rows X: k for ``categories_[f][k]``, NaN for a
    missing value or an unseen category; numeric columns as floats."""
    codes = np.empty(X.shape, dtype=np.float64)
    for f, values in enumerate(model.categories_):
        if values is None:
            codes[:, f] = X[:, f].astype(float)
            continue
        index = {value: k for k, value in enumerate(values.tolist())}
        codes[:, f] = [index.get(value, np.nan) for value in X[:, f]]
    return codes


@pytest.mark.parametrize("split", ["subset", "one_vs_rest", "multiway"])
def test_rules_of_fitted_categorical_models_partition_rows(split):
    rng = np.random.default_rng(11)
    n = 500
    X = np.empty((n, 4), dtype=object)
    X[:, 0] = rng.choice(np.array(["sunny", "overcast", "rainy", None], dtype=object), n)
    X[:, 1] = rng.choice(np.array(["red", "green", "blue", "black", "white"], dtype=object), n)
    X[:, 2] = rng.choice(np.array(["small", "medium", "large"], dtype=object), n)
    temp = rng.normal(20, 5, size=n)
    temp[::6] = np.nan
    X[:, 3] = temp
    y = (X[:, 0] == "sunny") ^ (X[:, 1] == "red") ^ (np.nan_to_num(temp) > 22)
    model = jitree.DecisionTreeClassifier(
        categorical_features=[0, 1], ordinal_features=[2], categorical_split=split,
        criterion="entropy", max_depth=6, random_state=0).fit(X, y)
    test = X.copy()
    test[:30, 1] = "purple"  # unseen at fit: routed as missing
    found = rules(model)
    masks = np.array([rule.matches(_encode(model, test)) for rule in found])
    assert (masks.sum(axis=0) == 1).all()
    leaves = np.array([rule.leaf for rule in found])[np.argmax(masks, axis=0)]
    np.testing.assert_array_equal(leaves, model.apply(test))
    predictions = np.array([rule.prediction for rule in found])[np.argmax(masks, axis=0)]
    np.testing.assert_array_equal(predictions, model.predict(test))
    assert (model.tree_.split_kind != SPLIT_THRESHOLD).any()
    text = format_rules(found) + jitree.export_text(model)
    assert "(or missing)" in text  # category tests always mark the missing branch
    # feature 0's categories by name: "feature_0 == sunny", "feature_0 in {overcast, ...", ...
    assert re.search(r"feature_0 (==|=|!=|in|not in) \{?(sunny|overcast|rainy)", text), text


def test_condition_holds_on_codes_missing_and_malformed_values():
    column = np.array([[0.0], [1.0], [2.0], [np.nan], [3.0], [0.5], [-1.0], [-0.0], [1e300]])
    inside = Condition(0, "c", "in", codes=(0, 2), n_categories=3)
    outside = Condition(0, "c", "not in", codes=(0, 2), n_categories=3, missing=True)
    np.testing.assert_array_equal(inside.holds(column),
                                  [True, False, True, False, False, False, False, True, False])
    np.testing.assert_array_equal(outside.holds(column),
                                  [False, True, False, True, True, True, True, False, True])
    bound = Condition(0, "x", "<=", 1.0, missing=True)
    np.testing.assert_array_equal(bound.holds(column)[:4], [True, True, False, True])
    assert str(bound) == "x <= 1"  # missing shown only where the model marks it
    assert str(Condition(0, "c", "in", codes=(), n_categories=3, missing=True,
                         show_missing=True)) == "c is missing"


# -- pruning ----------------------------------------------------------------------------------
def naive_ccp_path(tree):
    """Weakest-link pruning with every branch recomputed from scratch (children: all of a
    multiway node's)."""
    r = tree.weighted_n_node_samples * tree.impurity / tree.weighted_n_node_samples[0]
    is_leaf = tree.is_leaf.copy()

    def leaves_below(node):
        if is_leaf[node]:
            return [node]
        return [leaf for child in tree.children(node) for leaf in leaves_below(child)]

    def reachable():
        seen, stack = [], [0]
        while stack:
            node = stack.pop()
            seen.append(node)
            if not is_leaf[node]:
                stack += tree.children(node)
        return seen

    alphas, impurities, pruned = [0.0], [sum(r[leaf] for leaf in leaves_below(0))], []
    while not is_leaf[0]:
        g = {node: (r[node] - sum(r[leaf] for leaf in leaves_below(node)))
             / (len(leaves_below(node)) - 1) for node in reachable() if not is_leaf[node]}
        weakest = min(g, key=lambda node: (g[node], node))
        is_leaf[weakest] = True
        pruned.append(weakest)
        alphas.append(g[weakest])
        impurities.append(sum(r[leaf] for leaf in leaves_below(0)))
    return np.array(alphas), np.array(impurities), pruned


def truncated_leaves(tree, X, make_leaf):
    """Original id of the node each row stops at when ``make_leaf`` nodes are leaves."""
    stops = []
    for row in X:
        path = naive_path(tree, row)
        stops.append(next(node for node in path if make_leaf[node] or tree.is_leaf[node]))
    return np.array(stops)


def assert_pruned_as(pruned, tree, make_leaf, X):
    """``pruned`` is ``tree`` with ``make_leaf`` nodes as leaves: same node tables at the
    leaves rows reach, and as many nodes as survive."""
    stops = truncated_leaves(tree, X, make_leaf)
    reached = pruned.apply(X)
    np.testing.assert_array_equal(pruned.value[reached], tree.value[stops])
    np.testing.assert_array_equal(pruned.n_node_samples[reached], tree.n_node_samples[stops])
    kept = np.zeros(tree.node_count, dtype=bool)
    stack = [0]
    while stack:
        node = stack.pop()
        kept[node] = True
        if not make_leaf[node]:
            stack += tree.children(node)
    assert pruned.node_count == kept.sum()
    assert pruned.n_leaves == int((kept & (tree.is_leaf | (make_leaf == 1))).sum())


def test_prune_keeps_multiway_children_together_and_compacts_pools():
    tree = weather_tree()
    for cut in ([1], [3], [7], [1, 7], [0], []):
        make_leaf = np.zeros(tree.node_count, dtype=np.uint8)
        make_leaf[cut] = 1
        pruned = pruning.prune(tree, make_leaf)  # the Tree constructor checks it
        assert_pruned_as(pruned, tree, make_leaf, WEATHER_ROWS)
        internal = pruned.children_left != L
        assert (pruned.split_kind[~internal] == 0).all()
        assert (pruned.category_offset[~internal] == -1).all()
        n_subsets = int((pruned.split_kind == SPLIT_SUBSET).sum())
        n_multiway = int((pruned.split_kind == SPLIT_MULTIWAY).sum())
        assert pruned.category_bits.shape[0] == n_subsets  # one word per subset node here
        assert pruned.multiway_slot.shape[0] == 5 * n_multiway  # both on 4-category features
        np.testing.assert_array_equal(pruned.n_categories, tree.n_categories)
        np.testing.assert_array_equal(pruned.feature_kind, tree.feature_kind)
    # pruning node 1 renumbers the rest: node 7's slots still name its children in order
    make_leaf = np.zeros(tree.node_count, dtype=np.uint8)
    make_leaf[1] = 1
    pruned = pruning.prune(tree, make_leaf)
    multiway = np.flatnonzero(pruned.split_kind == SPLIT_MULTIWAY)
    assert pruned.children(int(multiway[1])) == [6, 7]


@pytest.mark.parametrize("seed", range(8))
def test_ccp_path_and_pruning_match_naive_twin_on_random_trees(seed):
    rng = np.random.default_rng(seed)
    tree = random_tree(rng, 14)
    alphas, impurities, order = naive_ccp_path(tree)
    path = pruning.cost_complexity_path(tree)
    np.testing.assert_allclose(path.ccp_alphas, alphas, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(path.impurities, impurities, rtol=1e-9, atol=1e-14)
    X = random_rows(rng, 200)
    alphas = path.ccp_alphas  # the kernel's own rounding of g decides at a path value
    for step in (1, len(order) // 2, len(order)):
        # between two path alphas: exactly the first `step` prunes happen
        alpha = alphas[step] if step == len(order) else (alphas[step] + alphas[step + 1]) / 2
        if step < len(order) and not alphas[step] < alpha < alphas[step + 1]:
            continue  # two prunes at one alpha: no alpha stops between them
        make_leaf = np.zeros(tree.node_count, dtype=np.uint8)
        make_leaf[order[:step]] = 1
        assert_pruned_as(pruning.cost_complexity(tree, alpha), tree, make_leaf, X)


def test_ccp_path_of_the_hand_built_tree():
    tree = weather_tree()
    alphas, impurities, _ = naive_ccp_path(tree)
    path = pruning.cost_complexity_path(tree)
    np.testing.assert_allclose(path.ccp_alphas, alphas, rtol=1e-12)
    np.testing.assert_allclose(path.impurities, impurities, rtol=1e-12)
    assert pruning.cost_complexity(tree, path.ccp_alphas[-1]).node_count == 1


def naive_bottom_up(tree, leaf_cost, slack):
    """make_leaf of bottom-up pruning: a node becomes a leaf when its cost as a leaf is at
    most the sum of its children's pruned costs plus slack (top-most pruned nodes only)."""
    make_leaf = np.zeros(tree.node_count, dtype=np.uint8)

    def cost(node):
        if tree.is_leaf[node]:
            return leaf_cost[node]
        below = sum(cost(child) for child in tree.children(node))
        if leaf_cost[node] <= below + slack:
            make_leaf[node] = 1
            return leaf_cost[node]
        return below

    cost(0)
    parents = tree.parents()
    for node in np.flatnonzero(make_leaf):
        ancestor = parents[node]
        while ancestor >= 0:
            if make_leaf[ancestor]:
                make_leaf[node] = 0
                break
            ancestor = parents[ancestor]
    return make_leaf


@pytest.mark.parametrize("seed", range(6))
def test_reduced_error_matches_naive_twin(seed):
    rng = np.random.default_rng(100 + seed)
    tree = random_tree(rng, 16)
    X = random_rows(rng, 300)
    y = rng.integers(2, size=300).astype(np.float64)
    weight = rng.uniform(0.5, 2.0, size=300)
    node_class = np.argmax(tree.value, axis=1).astype(np.float64)
    errors = np.zeros(tree.node_count)
    for row, label, w in zip(X, y, weight, strict=True):
        for node in naive_path(tree, row):
            errors[node] += w * (label != node_class[node])
    make_leaf = naive_bottom_up(tree, errors, 0.0)
    pruned = pruning.reduced_error(tree, X, y, weight, node_class, False)
    assert_pruned_as(pruned, tree, make_leaf, X)
    # regression: squared errors to each node's value
    target = rng.normal(size=300)
    mean = tree.value[:, 0] / tree.value.sum(axis=1)
    squared = np.zeros(tree.node_count)
    for row, value, w in zip(X, target, weight, strict=True):
        for node in naive_path(tree, row):
            difference = value - mean[node]
            squared[node] += w * difference * difference  # the kernel's rounding order
    pruned = pruning.reduced_error(tree, X, target, weight, mean, True)
    assert_pruned_as(pruned, tree, naive_bottom_up(tree, squared, 0.0), X)


@pytest.mark.parametrize("seed", range(6))
def test_pessimistic_matches_naive_twin(seed):
    rng = np.random.default_rng(200 + seed)
    tree = random_tree(rng, 16, n_classes=3)
    n = tree.value.sum(axis=1)
    e = n - tree.value.max(axis=1)
    # the counts in the root's number of samples (this tree's weights are not whole)
    scale = tree.n_node_samples[0] / n[0]
    assert scale != 1.0
    n, e = n * scale, e * scale
    estimate = np.array([errors + pruning.pessimistic_extra_errors(total, errors, 0.25)
                         for total, errors in zip(n, e, strict=True)])
    make_leaf = naive_bottom_up(tree, estimate, pruning.PESSIMISTIC_SLACK)
    pruned = pruning.pessimistic(tree, 0.25)
    assert_pruned_as(pruned, tree, make_leaf, random_rows(rng, 200))


def test_estimator_pruning_methods_on_a_multiway_tree():
    model = weather_model()
    X = np.tile(as_values(WEATHER_ROWS)[0], (3, 1))
    labels = np.where(np.arange(X.shape[0]) % 3 == 0, "yes", "no")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # fitted with names, given an array
        errors_before = np.sum(model.predict(X) != labels)
        model.prune_reduced_error(X, labels)
        assert np.sum(model.predict(X) != labels) <= errors_before
    assert model.tree_.node_count < 12
    model = weather_model().prune_pessimistic(0.25)
    check_tree(model.tree_)


# -- persistence ------------------------------------------------------------------------------
def test_save_load_round_trip_of_every_node_kind(tmp_path):
    model = weather_model(missing_seen=[False, True, True, False])
    path = tmp_path / "weather.jitree"
    save(model, path)
    loaded = load(path)
    for name, array in model.tree_.arrays().items():
        np.testing.assert_array_equal(getattr(loaded.tree_, name), array, err_msg=name)
        assert getattr(loaded.tree_, name).dtype == array.dtype, name
    for ours, theirs in zip(loaded.categories_, CATEGORIES, strict=True):
        if theirs is None:
            assert ours is None
        else:
            np.testing.assert_array_equal(ours, theirs)
            assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(loaded.missing_values_in_feature_mask_,
                                  [False, True, True, False])
    values, _ = as_values(WEATHER_ROWS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # fitted with names, given an array
        np.testing.assert_array_equal(loaded.predict_proba(values), model.predict_proba(values))
    assert jitree.export_text(loaded) == jitree.export_text(model)
    assert format_rules(rules(loaded)) == format_rules(rules(model))
    # pruned trees (compacted pools) round-trip too
    pruned = weather_model()
    pruned.tree_ = pruning.cost_complexity(pruned.tree_, 0.035)
    assert 1 < pruned.tree_.node_count < 12
    save(pruned, path)
    np.testing.assert_array_equal(load(path).tree_.apply(WEATHER_ROWS),
                                  pruned.tree_.apply(WEATHER_ROWS))


# -- check_tree -------------------------------------------------------------------------------
def _edited(**changes):
    arrays = {name: array.copy() for name, array in weather_tree().arrays().items()}
    for name, (index, value) in changes.items():
        arrays[name][index] = value
    return arrays


@pytest.mark.parametrize("changes, match", [
    (dict(split_kind=(0, 3)), "not a split kind"),
    (dict(split_kind=(1, -1)), "not a split kind"),
    (dict(split_kind=(2, 1)), "leaf 2 has a split kind"),
    (dict(category_offset=(1, 1)), "reads outside its pool"),
    (dict(category_offset=(1, -1)), "reads outside its pool"),
    (dict(category_offset=(7, 6)), "reads outside its pool"),
    (dict(category_offset=(4, 0)), "threshold node 4 has category_offset"),
    (dict(multiway_slot=(2, 3)), "slot outside its 3 children"),
    (dict(multiway_slot=(9, -1)), "slot outside its 2 children"),
    (dict(feature_kind=(1, FEATURE_ORDINAL)), "not categorical"),
    (dict(feature=(1, 3)), "not categorical"),
    (dict(split_kind=(1, SPLIT_THRESHOLD)), "threshold test on the categorical feature"),
    (dict(feature=(3, 0)), "threshold test on the categorical feature"),
    # node 7's range 9..11 overlaps node 4's children
    (dict(children_left=(7, 9)), "node 9 is the child of 2 nodes"),
    (dict(children_right=(0, 2), children_left=(0, 3)), "before children_left"),
    (dict(missing_left=(3, 2)), "must be 0 or 1"),
    (dict(missing_left=(5, 1)), "leaf 5"),
    (dict(n_categories=(3, 2)), "invalid for a feature of kind 0"),
    (dict(n_categories=(0, -4)), "invalid for a feature of kind 2"),
    (dict(feature_kind=(3, 5)), "not a feature kind"),
])
def test_check_tree_refuses_crafted_category_arrays(changes, match):
    arrays = _edited(**changes)
    with pytest.raises(ValueError, match=match):
        Tree(n_features=4, n_classes=2, **arrays)


def test_check_tree_refuses_pool_and_feature_array_shapes():
    arrays = weather_tree().arrays()
    for name, bad in (("category_bits", arrays["category_bits"].reshape(1, 1)),
                      ("multiway_slot", arrays["multiway_slot"].astype(np.int64)),
                      ("n_categories", arrays["n_categories"][:3]),
                      ("feature_kind", np.zeros(5, dtype=np.int8))):
        tree = weather_tree()
        setattr(tree, name, bad)
        with pytest.raises(ValueError, match=name):
            check_tree(tree)
    # fewer slots than the multiway nodes read
    with pytest.raises(ValueError, match="outside its pool"):
        Tree(n_features=4, n_classes=2,
             **{**arrays, "multiway_slot": arrays["multiway_slot"][:9]})
