"""The growth loop: one compiled call grows a whole tree from its presorted data.

:func:`grow_tree` runs every level (depth-wise growth) or every split (best-first growth,
``max_leaf_nodes``) inside compiled code; Python validates the input, presorts it, calls it
once and wraps the arrays it returns in a :class:`jitree.Tree`.

One round of growth, for a batch of open nodes that may be split (:func:`splittable`):

1. :func:`find_candidates`: the best split of each node (a parallel search over its (node,
   feature) pairs, :func:`jitree.kernels.split.find_splits`, or
   :func:`~jitree.kernels.split.find_random_splits` for the random splitter, and, for
   categorical features, :func:`~jitree.kernels.split.find_category_splits`), the child of
   each of its samples and the children's statistics
   (:func:`jitree.kernels.grow.mark_and_count`), and the weighted impurity decrease
   ``W_j / W (I_j - sum_c W_c / W_j I_c)`` that ``min_impurity_decrease`` bounds. The
   candidates go to a :class:`CandidateTable`.
2. :func:`split_candidates`: the accepted splits become internal nodes with their children
   appended to the :class:`NodeTable` (node ids in order of parent, then child slot), and the
   sorted segments of the parents with a child still open are partitioned (in place, or
   into a second copy of the sorted arrays that the next level reads:
   :data:`PING_PONG_BYTES`).

The random splitter grows in sample order instead (single-output trees on numeric features,
:func:`jitree.model.builder.sample_order_growth`), and so does the best splitter of a
classifier whose nodes draw few of many features: one list of samples grouped by node in
place of the sorted arrays, searched node by node by
:func:`jitree.kernels.sample_order.find_node_splits` and partitioned as soon as a node's
split is found (:func:`~jitree.kernels.sample_order.split_samples`). The loop is the same.

Depth-wise growth runs one round per level over all the level's open nodes. Best-first
growth keeps the candidates in a heap and splits the one of largest impurity decrease first
(ties: lowest node id), then searches its children.

Parallelism lives in the search, marking and partition kernels (over pairs, nodes and
features); the loop itself is serial. On one thread (``GrowSettings.n_blocks`` 1, see
:func:`jitree.model.builder.search_blocks`) it calls their serial twins instead
(:func:`jitree.kernels._jit.serial_twin`) of the numeric search, marking and partition
kernels, which launch nothing (the category, order-criterion and renumbering kernels still
launch, on one thread).

Specialisations (each one compiles the whole loop with its kernels, about a minute from an
empty cache, then loads from numba's cache): one per

- X's float type: float32 or float64 (``TreeData.sorted_value``);
- class label type: uint8 (up to 256 classes, and every regression) or uint16
  (``TreeData.sorted_label``, ``label``, ``label_scratch``);
- categories: None (numeric and ordinal features only; the category search is pruned) or a
  :class:`~jitree.kernels.records.CategorySettings`;
- growth: presorted (``order`` None) or, for the random splitter of a single-output tree on
  numeric features only (and the best splitter of such a classifier on wide X), in sample
  order (a :class:`~jitree.kernels.records.SampleOrder`; see
  :mod:`jitree.kernels.sample_order`);
- the random splitter's threshold search: compiled into the presorted growth of the random
  splitter without an order criterion only (``random_search`` True; categorical features,
  multi-output trees, constraints), left out of every other (None);

at most 20 in all (16 presorted, 4 in sample order); a fit compiles one. Every other field
of the records has one type (int32 sorted indices, float64 targets and weights, C-contiguous
arrays, int64 and float64 settings), which ``tests/test_engine.py`` holds. The loop is
written with explicit loops over a few two-dimensional tables rather than fancy indexing and
slice assignments, which numba compiles into much larger code (compile time is start-up time
for a new user).
"""

from collections import namedtuple

import numpy as np

from . import criteria
from ._jit import borrowing, jit, one_block, retyped
from .categorical import MISSING_LEFT, MISSING_RIGHT, MULTIWAY
from .grow import (
    mark_and_count,
    mark_and_count_serial,
    pack_bits,
    pack_bits_serial,
    partition,
    partition_into,
    partition_into_serial,
    partition_multiway,
    partition_serial,
)
from .pinball import child_order_statistics, rank_targets
from .predict import SPLIT_MULTIWAY, SPLIT_SUBSET, SPLIT_THRESHOLD, TREE_LEAF, TREE_UNDEFINED
from .records import ChildStats, GrowSettings, NodeBatch, PairResults, SplitBatch, TreeData
from .sample_order import (
    RENUMBER_LEVELS,
    RENUMBER_MAX_BYTES,
    find_node_splits,
    find_node_splits_serial,
    renumber,
    split_samples,
    split_samples_serial,
)
from .select import select_features
from .split import (
    best_pair_per_node,
    categorical_details,
    find_category_splits,
    plain_settings,
    search_numeric,
)

# A node whose impurity is at most this is pure (rounding of an exact 0).
EPSILON = np.finfo(np.float64).eps
# Most (node, feature) pairs searched in one kernel call: bounds the per-pair result arrays.
PAIRS_PER_CALL = 1 << 16

# -- the node table: one row per node ----------------------------------------------------------
NodeTable = namedtuple("NodeTable", [
    "ints",    # (capacity, N_INTS) int64, columns N_*
    "floats",  # (capacity, N_FLOATS) float64, columns F_*
    "stats",   # (capacity, n_stats) float64: class weights, or (sum w y, sum w y**2)
    "groups",  # (capacity, n_words) uint64: bitset of the interaction groups still open to
               # the node's branch (those holding every feature split on above it)
])
N_FEATURE = 0
N_LEFT = 1
N_RIGHT = 2
N_SAMPLES = 3
N_DEPTH = 4
N_SPLIT_KIND = 5
N_MISSING_LEFT = 6
N_CATEGORY_OFFSET = 7
N_INTS = 8
F_THRESHOLD = 0
F_WEIGHT = 1
F_IMPURITY = 2
F_LOWER = 3  # bounds of the node's value stats[0] / weight under monotonic constraints
F_UPPER = 4
N_FLOATS = 5

# -- the candidate table: the best split of each searched node, and its children ---------------
CandidateTable = namedtuple("CandidateTable", [
    "ints",         # (C_INTS, capacity) int64: a row per field, a column per candidate
    "floats",       # (C_FLOATS, capacity) float64
    "child_stats",  # (child capacity, n_stats) float64
    "child_floats",  # (2, child capacity): weight, impurity
    "child_count",  # (child capacity,) int64
    "detail",       # (2, detail capacity) int64: code and child slot of each category run
])
C_NODE = 0
C_START = 1
C_END = 2
C_FEATURE = 3
C_POS = 4          # threshold split: rows start:pos go left; multiway: number of children
C_MISSING = 5      # MISSING_* or, multiway, the missing samples' slot (-1: none)
C_CATEGORICAL = 6
C_MULTIWAY = 7
C_MISSING_SLOT = 8
C_CHILD_FIRST = 9  # children: rows C_CHILD_FIRST:C_CHILD_END of the child arrays
C_CHILD_END = 10
C_DETAIL_FIRST = 11
C_DETAIL_END = 12
C_INTS = 13
C_THRESHOLD = 0
C_IMPROVEMENT = 1
C_FLOATS = 2


# bytes of node table a tree reserves at its start (see node_capacity)
NODE_TABLE_BYTES = 1 << 28


@jit
def new_node_table(capacity, n_stats, n_words):
    """A node table with room for ``capacity`` nodes and none made yet: its rows stay as
    allocated, never written, until :func:`open_rows` makes them nodes (memory the process
    never writes costs it no page), so a table sized for the largest tree costs a small
    tree nothing."""
    return NodeTable(np.empty((capacity, N_INTS), dtype=np.int64),
                     np.empty((capacity, N_FLOATS)), np.empty((capacity, n_stats)),
                     np.empty((capacity, n_words), dtype=np.uint64))


@jit
def node_capacity(n_rows, settings, n_stats, n_words):
    """The node table a tree of ``n_rows`` samples starts with: room for every node it can
    make (2 n_rows - 1 with a sample in each leaf and two children or more in each split;
    2 max_leaf_nodes - 1 best-first), at most NODE_TABLE_BYTES of it; the table doubles
    past that (:func:`reserve_nodes`). Doubling from 64 nodes instead zeroed and copied
    up to twice the table a tree ended with: Extra-Trees regressor trees (150k x 20, 300k
    nodes each, 1 thread) took 413-420 ms against 346-352 ms now."""
    bound = 2 * max(n_rows, 1) - 1
    if settings.max_leaf_nodes > 0:
        bound = min(bound, 2 * settings.max_leaf_nodes - 1)
    largest = NODE_TABLE_BYTES // (8 * (N_INTS + N_FLOATS + n_stats + n_words))
    return max(64, min(bound, largest))


@jit(inline="always")
def open_rows(nodes, first, last):
    """Make rows ``first:last`` of the node table leaves without statistics: no feature,
    no children, no category pool, unbounded values, zeros elsewhere."""
    for node in range(first, last):
        for c in range(N_INTS):
            nodes.ints[node, c] = 0
        nodes.ints[node, N_FEATURE] = TREE_UNDEFINED
        nodes.ints[node, N_LEFT] = TREE_LEAF
        nodes.ints[node, N_RIGHT] = TREE_LEAF
        nodes.ints[node, N_CATEGORY_OFFSET] = -1
        for c in range(N_FLOATS):
            nodes.floats[node, c] = 0.0
        nodes.floats[node, F_THRESHOLD] = TREE_UNDEFINED
        nodes.floats[node, F_LOWER] = -np.inf
        nodes.floats[node, F_UPPER] = np.inf
        for s in range(nodes.stats.shape[1]):
            nodes.stats[node, s] = 0.0
        for w in range(nodes.groups.shape[1]):
            nodes.groups[node, w] = 0


@jit(inline="always")
def reserve_nodes(nodes, count, needed):
    """``nodes`` (``count`` nodes made) with rows ``count:needed`` made leaves by
    :func:`open_rows`, the table doubled first when it has no room for them."""
    capacity = nodes.ints.shape[0]
    if needed > capacity:
        grown = new_node_table(max(needed, 2 * capacity), nodes.stats.shape[1],
                               nodes.groups.shape[1])
        copy_rows(nodes.ints, grown.ints, count)
        copy_rows(nodes.floats, grown.floats, count)
        copy_rows(nodes.stats, grown.stats, count)
        copy_rows(nodes.groups, grown.groups, count)
        nodes = grown
    open_rows(nodes, count, needed)
    return nodes


@jit
def copy_rows(source, destination, count):
    for r in range(count):
        for c in range(source.shape[1]):
            destination[r, c] = source[r, c]


@jit
def grow_rows(table, needed):
    """A 2-D table with at least ``needed`` columns (the old ones kept), doubling."""
    if needed <= table.shape[1]:
        return table
    grown = np.zeros((table.shape[0], max(needed, 2 * table.shape[1])), dtype=table.dtype)
    for r in range(table.shape[0]):
        for c in range(table.shape[1]):
            grown[r, c] = table[r, c]
    return grown


@jit
def reserve(array, size, needed):
    """A 1-D array with room for ``needed`` entries (its first ``size`` kept), doubling."""
    if needed <= array.shape[0]:
        return array
    grown = np.zeros(max(needed, 2 * array.shape[0]), dtype=array.dtype)
    for r in range(size):
        grown[r] = array[r]
    return grown


@jit(inline="always")
def reserve_candidates(table, n_candidates, n_children, n_details):
    """``table`` with room for that many candidates, children and category runs."""
    ints = grow_rows(table.ints, n_candidates)
    floats = grow_rows(table.floats, n_candidates)
    child_floats = grow_rows(table.child_floats, n_children)
    detail = grow_rows(table.detail, n_details)
    child_stats = table.child_stats
    child_count = reserve(table.child_count, table.child_count.shape[0], n_children)
    if child_count.shape[0] > child_stats.shape[0]:
        child_stats = np.zeros((child_count.shape[0], table.child_stats.shape[1]))
        copy_rows(table.child_stats, child_stats, table.child_stats.shape[0])
    return CandidateTable(ints, floats, child_stats, child_floats, child_count, detail)


@jit(inline="always")
def new_candidate_table(capacity, n_stats):
    return CandidateTable(np.zeros((C_INTS, capacity), dtype=np.int64),
                          np.zeros((C_FLOATS, capacity)), np.zeros((2 * capacity, n_stats)),
                          np.zeros((2, 2 * capacity)), np.zeros(2 * capacity, dtype=np.int64),
                          np.zeros((2, capacity), dtype=np.int64))


@jit
def node_batch(nodes, ids, start, end):
    """The nodes ``ids`` (rows ``start:end`` of the sorted arrays) as a :class:`NodeBatch`,
    their statistics and weights gathered from the node table."""
    k = ids.shape[0]
    stats = np.empty((k, nodes.stats.shape[1]))
    weight = np.empty(k)
    lower = np.empty(k)
    upper = np.empty(k)
    for j in range(k):
        for s in range(stats.shape[1]):
            stats[j, s] = nodes.stats[ids[j], s]
        weight[j] = nodes.floats[ids[j], F_WEIGHT]
        lower[j] = nodes.floats[ids[j], F_LOWER]
        upper[j] = nodes.floats[ids[j], F_UPPER]
    return NodeBatch(ids, start, end, stats, weight, lower, upper)


@borrowing
def splittable(nodes, node, settings, is_regression):
    """Pre-pruning: whether ``node`` may be split at all (depth, sample counts, weight,
    impurity and purity thresholds)."""
    n = nodes.ints[node, N_SAMPLES]
    weight = nodes.floats[node, F_WEIGHT]
    if not (nodes.ints[node, N_DEPTH] < settings.max_depth
            and n >= settings.min_samples_split
            and n >= 2 * settings.min_samples_leaf
            and weight >= 2.0 * settings.min_weight_leaf
            and nodes.floats[node, F_IMPURITY] > max(settings.impurity_threshold, EPSILON)):
        return False
    if not is_regression:
        largest = nodes.stats[node, 0]
        for c in range(1, nodes.stats.shape[1]):
            largest = max(largest, nodes.stats[node, c])
        if not largest / weight < settings.purity_threshold:
            return False
    elif settings.purity_threshold < 1.0 and criteria.is_classification(settings.criterion):
        # a multi-output classification node (no labels: see TreeData): split while some
        # output's largest class is below the threshold
        blocks = settings.criterion.blocks
        for j in range(blocks.shape[0] - 1):
            largest = 0.0
            for c in range(blocks[j], blocks[j + 1]):
                largest = max(largest, nodes.stats[node, c])
            if largest / weight < settings.purity_threshold:
                return True
        return False
    return True


@jit(inline="always")
def search_group(data, settings, categories, ranks, order, random_search, nodes, open_nodes,
                 first, last, out_best, out_children):
    """Best split of each open node ``first:last`` (rows of ``open_nodes``: id, start, end):
    ``out_best[:, j]`` = (feature or -1, pos, missing) and threshold via the returned array;
    ``out_children[j]`` (unless empty: the sample-order growth's classifiers and best splitter)
    its split's children, statistics then weight of the left child, then of the right (see
    :func:`jitree.kernels.sample_order.find_node_splits`). Ties: lowest feature index (see
    :func:`best_pair_per_node`). ``order``: a :class:`~jitree.kernels.records.SampleOrder` for
    the sample-order growth (:mod:`jitree.kernels.sample_order`), else None."""
    n_features = data.sorted_index.shape[0]
    m = last - first
    batch = node_batch(nodes, open_nodes[0, first:last].copy(),
                       open_nodes[1, first:last].copy(), open_nodes[2, first:last].copy())
    ids = batch.id
    start = batch.start
    end = batch.end
    max_features = settings.max_features
    allowed = allowed_features(nodes, ids, settings.interaction)
    restricted = allowed.shape[1] > 0
    if order is not None:
        # node by node in sample order (numeric features only, no order criterion: see
        # grow_tree), the random or the best splitter
        feature = np.empty(m, dtype=np.int64)
        pos = np.empty(m, dtype=np.int64)
        missing = np.empty(m, dtype=np.int64)
        threshold = np.empty(m)
        if one_block(settings.n_blocks):
            find_node_splits_serial(data, order, plain_settings(settings),
                                    settings.criterion, batch, allowed, feature, pos,
                                    missing, threshold, out_children[first:last])
        else:
            find_node_splits(data, order, plain_settings(settings), settings.criterion,
                             batch, allowed, feature, pos, missing, threshold,
                             out_children[first:last])
        for j in range(m):
            out_best[0, first + j] = feature[j]
            out_best[1, first + j] = pos[j]
            out_best[2, first + j] = missing[j]
        return threshold
    if max_features < n_features:
        chosen = np.zeros((m, max_features), dtype=np.int64)
        count = np.zeros(m, dtype=np.int64)
        select_features(settings.seed, ids, start, end, data.sorted_value, max_features,
                        allowed, chosen, count)
    else:
        chosen = np.zeros((m, n_features if restricted else 0), dtype=np.int64)
        count = np.full(m, n_features, dtype=np.int64)
        if restricted:
            for j in range(m):
                t = 0
                for f in range(n_features):
                    if allowed[j, f]:
                        chosen[j, t] = f
                        t += 1
                count[j] = t
    n_pairs = 0
    for j in range(m):
        n_pairs += count[j]
    pair_node = np.empty(n_pairs, dtype=np.int64)
    pair_feature = np.empty(n_pairs, dtype=np.int64)
    n_categorical = 0
    p = 0
    for j in range(m):
        for t in range(count[j]):
            f = chosen[j, t] if max_features < n_features or restricted else t
            pair_node[p] = j
            pair_feature[p] = f
            if categories is not None:
                n_categorical += categories.is_categorical[f]
            p += 1
    out = PairResults(np.empty(n_pairs), np.full(n_pairs, -1, dtype=np.int64),
                      np.empty(n_pairs), np.empty(n_pairs, dtype=np.int64))
    if ranks is not None:
        rank_targets(data, ranks, start, end)
    if categories is None:
        search_numeric(data, settings, batch, pair_node, pair_feature, out, ranks,
                       random_search)
    elif n_categorical == 0:
        search_numeric(data, settings, batch, pair_node, pair_feature, out, ranks,
                       random_search)
    else:
        if n_pairs > n_categorical:
            search_kind(data, settings, categories, batch, pair_node, pair_feature, out, 0,
                        random_search)
        search_kind(data, settings, categories, batch, pair_node, pair_feature, out, 1,
                    random_search)
    best = np.empty(m, dtype=np.int64)
    best_pair_per_node(pair_node, out.score, out.pos, best)
    threshold = np.zeros(m)
    for j in range(m):
        b = best[j]
        out_best[0, first + j] = pair_feature[b] if b >= 0 else -1
        out_best[1, first + j] = out.pos[b] if b >= 0 else 0
        out_best[2, first + j] = out.missing[b] if b >= 0 else 0
        threshold[j] = out.threshold[b] if b >= 0 else 0.0
    return threshold


@jit
def search_kind(data, settings, categories, batch, pair_node, pair_feature, out, categorical,
                random_search):
    """The pairs on numeric features (``categorical`` 0: :func:`search_numeric`) or on
    categorical ones (1: :func:`find_category_splits`) of a mixed search, results into
    ``out``; ``random_search``: see :func:`grow_tree`."""
    n_pairs = pair_node.shape[0]
    m = 0
    for p in range(n_pairs):
        m += categories.is_categorical[pair_feature[p]] == categorical
    index = np.empty(m, dtype=np.int64)
    nodes_of = np.empty(m, dtype=np.int64)
    features_of = np.empty(m, dtype=np.int64)
    t = 0
    for p in range(n_pairs):
        if categories.is_categorical[pair_feature[p]] == categorical:
            index[t] = p
            nodes_of[t] = pair_node[p]
            features_of[t] = pair_feature[p]
            t += 1
    part = PairResults(np.empty(m), np.empty(m, dtype=np.int64), np.empty(m),
                       np.empty(m, dtype=np.int64))
    if categorical:
        find_category_splits(data, plain_settings(settings), settings.criterion, categories,
                             batch, nodes_of, features_of, part)
    else:
        # the order criteria have no category splits: no ranks here
        search_numeric(data, settings, batch, nodes_of, features_of, part, None,
                       random_search)
    for t in range(m):
        p = index[t]
        out.score[p] = part.score[t]
        out.pos[p] = part.pos[t]
        out.threshold[p] = part.threshold[t]
        out.missing[p] = part.missing[t]


@jit(inline="always")
def find_candidates(data, settings, categories, ranks, order, random_search, nodes,
                    open_nodes, total_weight, table, n_candidates, work):
    """Search the open nodes (columns of ``open_nodes``: id, start, end; all splittable) and
    append the ones with a split to the candidate ``table`` (which holds ``n_candidates``),
    their samples marked in ``work`` (goes_left, its bits, child slot) and their children
    counted. The sample-order growth (``order`` not None) partitions each found split's
    samples into its children at once instead. Returns (table, new number of candidates)."""
    n_features = data.sorted_index.shape[0]
    m = open_nodes.shape[1]
    best = np.empty((3, m), dtype=np.int64)
    threshold = np.empty(m)
    # the sample-order growth's children, from the search: a classifier's, and the best
    # splitter's (a regressor's random splitter leaves them to the partition)
    searched_children = order is not None and not (data.is_regression
                                                   and settings.random_splitter)
    n_stats = nodes.stats.shape[1]
    children_of = np.empty((m if searched_children else 0, 2, n_stats + 1))
    group = max(1, PAIRS_PER_CALL // n_features)  # nodes per search: bounds the pair arrays
    for first in range(0, m, group):
        last = min(m, first + group)
        found = search_group(data, settings, categories, ranks, order, random_search, nodes,
                             open_nodes, first, last, best, children_of)
        for j in range(last - first):
            threshold[first + j] = found[j]
    # each found split's children (multiway: pos holds their number) and category runs
    n_children_of = np.full(m, 2, dtype=np.int64)
    n_details_of = np.zeros(m, dtype=np.int64)
    categorical_of = np.zeros(m, dtype=np.int64)
    multiway_of = np.zeros(m, dtype=np.int64)
    k = 0
    for j in range(m):
        f = best[0, j]
        if f < 0:
            continue
        k += 1
        if categories is not None and categories.is_categorical[f]:
            categorical_of[j] = 1
            n_details_of[j] = min(open_nodes[2, j] - open_nodes[1, j],
                                  categories.n_categories[f])
            if categories.mode == MULTIWAY:
                multiway_of[j] = 1
                n_children_of[j] = best[1, j]
    n_children = 0
    n_details = 0
    for j in range(m):
        if best[0, j] >= 0:
            n_children += n_children_of[j]
            n_details += n_details_of[j]
    first_candidate = n_candidates
    if n_candidates == 0:
        first_child = 0
        first_detail = 0
    else:
        first_child = table.ints[C_CHILD_END, n_candidates - 1]
        first_detail = table.ints[C_DETAIL_END, n_candidates - 1]
    table = reserve_candidates(table, n_candidates + k, first_child + n_children,
                               first_detail + n_details)
    ints = table.ints
    child = first_child
    detail = first_detail
    c = first_candidate
    for j in range(m):
        if best[0, j] < 0:
            continue
        f = best[0, j]
        ints[C_NODE, c] = open_nodes[0, j]
        ints[C_START, c] = open_nodes[1, j]
        ints[C_END, c] = open_nodes[2, j]
        ints[C_FEATURE, c] = f
        ints[C_POS, c] = best[1, j]
        ints[C_MISSING, c] = best[2, j]
        table.floats[C_THRESHOLD, c] = threshold[j]
        size = n_children_of[j]
        detail_size = n_details_of[j]
        ints[C_CATEGORICAL, c] = categorical_of[j]
        ints[C_MULTIWAY, c] = multiway_of[j]
        if multiway_of[j]:
            ints[C_MISSING_SLOT, c] = best[2, j]
        else:
            ints[C_MISSING_SLOT, c] = 0 if best[2, j] == MISSING_LEFT else 1
        ints[C_CHILD_FIRST, c] = child
        ints[C_CHILD_END, c] = child + size
        if searched_children:
            for side in range(2):
                for s in range(n_stats):
                    table.child_stats[child + side, s] = children_of[j, side, s]
                table.child_floats[0, child + side] = children_of[j, side, n_stats]
        ints[C_DETAIL_FIRST, c] = detail
        ints[C_DETAIL_END, c] = detail + detail_size
        for r in range(detail, detail + detail_size):
            table.detail[0, r] = -1  # -1: past the last run present
            table.detail[1, r] = 0
        child += size
        detail += detail_size
        c += 1
    n_candidates += k
    if k == 0:
        return table, n_candidates
    last = first_candidate + k
    child_offset = np.empty(k + 1, dtype=np.int64)
    detail_offset = np.empty(k + 1, dtype=np.int64)
    for t in range(k):
        child_offset[t] = ints[C_CHILD_FIRST, first_candidate + t]
        detail_offset[t] = ints[C_DETAIL_FIRST, first_candidate + t]
    child_offset[k] = ints[C_CHILD_END, last - 1]
    detail_offset[k] = ints[C_DETAIL_END, last - 1]
    starts = ints[C_START, first_candidate:last]
    ends = ints[C_END, first_candidate:last]
    features = ints[C_FEATURE, first_candidate:last]
    if categories is not None and n_details > 0:
        split_nodes = node_batch(nodes, ints[C_NODE, first_candidate:last], starts, ends)
        categorical_details(data, plain_settings(settings), settings.criterion, categories,
                            split_nodes, features, detail_offset,
                            table.detail[0], table.detail[1])
    splits = SplitBatch(starts, ends, features, ints[C_POS, first_candidate:last],
                        ints[C_CATEGORICAL, first_candidate:last],
                        ints[C_MISSING_SLOT, first_candidate:last], detail_offset,
                        table.detail[1], child_offset)
    children = ChildStats(table.child_stats, table.child_floats[0], table.child_count)
    if order is None:
        goes_left, _, child_slot = work
        if one_block(settings.n_blocks):
            mark_and_count_serial(data, splits, child_slot, goes_left, children)
        else:
            mark_and_count(data, splits, child_slot, goes_left, children)
    elif one_block(settings.n_blocks):
        split_samples_serial(data, order, starts, ends, features,
                             table.floats[C_THRESHOLD, first_candidate:last],
                             ints[C_MISSING, first_candidate:last], child_offset,
                             table.child_stats, table.child_floats[0], table.child_count,
                             not searched_children, settings.n_blocks)
    else:
        split_samples(data, order, starts, ends, features,
                      table.floats[C_THRESHOLD, first_candidate:last],
                      ints[C_MISSING, first_candidate:last], child_offset, table.child_stats,
                      table.child_floats[0], table.child_count, not searched_children,
                      settings.n_blocks)
    criterion = settings.criterion
    if ranks is not None:
        # ranked by the search (the order criteria have no category splits: two children)
        child_order_statistics(data, ranks, splits, goes_left, children, settings.quantile)
    child_impurity = table.child_floats[1]
    for t in range(first_candidate, last):
        node = ints[C_NODE, t]
        node_weight = nodes.floats[node, F_WEIGHT]
        decrease = nodes.floats[node, F_IMPURITY]
        for r in range(ints[C_CHILD_FIRST, t], ints[C_CHILD_END, t]):
            child_impurity[r] = criteria.node_impurity(criterion, table.child_stats[r],
                                                       table.child_floats[0, r])
            # subtracted child by child: W_j / W * (I_j - sum_c W_c / W_j I_c)
            decrease -= table.child_floats[0, r] / node_weight * child_impurity[r]
        table.floats[C_IMPROVEMENT, t] = node_weight / total_weight * decrease
    return table, n_candidates


@jit(inline="always")
def category_table(table, c, m, pools, nodes, node):
    """The category table of the categorical candidate ``c``, now ``node``: a subset node's
    bitset of the categories going left (into ``pools[0]``), or a multiway node's child slot
    per code, missing values at code m (into ``pools[1]``). Categories absent from the node's
    samples go to the heaviest child. Returns the pools (grown) and their new sizes."""
    bits, bits_size, slots, slots_size = pools
    ints = table.ints
    first_child = ints[C_CHILD_FIRST, c]
    heaviest = 0
    for r in range(first_child, ints[C_CHILD_END, c]):
        if table.child_floats[0, r] > table.child_floats[0, first_child + heaviest]:
            heaviest = r - first_child
    multiway = ints[C_MULTIWAY, c]
    slot = np.full(m + 1 if multiway else m, heaviest, dtype=np.int64)
    for r in range(ints[C_DETAIL_FIRST, c], ints[C_DETAIL_END, c]):
        code = table.detail[0, r]
        if code >= 0:
            slot[code] = table.detail[1, r]
    if multiway:
        if ints[C_MISSING, c] >= 0:
            slot[m] = ints[C_MISSING, c]
        nodes.ints[node, N_CATEGORY_OFFSET] = slots_size
        slots = reserve(slots, slots_size, slots_size + m + 1)
        for code in range(m + 1):
            slots[slots_size + code] = slot[code]
        return bits, bits_size, slots, slots_size + m + 1
    words = (m + 63) // 64
    nodes.ints[node, N_CATEGORY_OFFSET] = bits_size
    bits = reserve(bits, bits_size, bits_size + words)
    for w in range(words):
        bits[bits_size + w] = 0
    for code in range(m):
        if slot[code] == 0:
            bits[bits_size + (code >> 6)] |= np.uint64(1) << np.uint64(code & 63)
    return bits, bits_size + words, slots, slots_size


@jit
def allowed_features(nodes, ids, interaction):
    """Which features each node ``ids[j]`` may split on under the interaction constraints:
    ``(k, n_features)`` uint8, the union of the groups still open to its branch; ``(k, 0)``
    without constraints (every feature)."""
    n_groups = interaction.shape[0]
    n_features = interaction.shape[1] if n_groups > 0 else 0
    allowed = np.zeros((ids.shape[0], n_features), dtype=np.uint8)
    for j in range(ids.shape[0]):
        for g in range(n_groups):
            if (nodes.groups[ids[j], g >> 6] >> np.uint64(g & 63)) & np.uint64(1):
                for f in range(n_features):
                    allowed[j, f] |= interaction[g, f]
    return allowed


@jit
def child_groups(nodes, parent, count, n_children, interaction, feature):
    """The interaction groups open to ``parent``'s children (rows ``count ..`` of the node
    table): the parent's that hold the split ``feature``."""
    for g in range(interaction.shape[0]):
        word = g >> 6
        bit = np.uint64(1) << np.uint64(g & 63)
        if (nodes.groups[parent, word] & bit) and interaction[g, feature]:
            for r in range(n_children):
                nodes.groups[count + r, word] |= bit


@borrowing
def child_bounds(nodes, parent, count, table, first, last, settings, feature):
    """Bounds of the values of ``parent``'s children (rows ``count ..`` of the node table,
    ``first:last + 1`` of the candidate table's children). A split on a feature without
    constraint passes the parent's bounds down; on a constrained one, the children's bounds
    meet at the mean of their two values: increasing, the left child's values stay at most
    that middle and the right child's at least; decreasing, the other way round. With the
    children's own values kept within their bounds by the split search, every value of the
    left subtree is then on the constrained side of every value of the right subtree."""
    lower = nodes.floats[parent, F_LOWER]
    upper = nodes.floats[parent, F_UPPER]
    monotonic = settings.monotonic
    cst = monotonic[feature] if monotonic.shape[0] > 0 else 0
    for r in range(first, last + 1):
        nodes.floats[count + r - first, F_LOWER] = lower
        nodes.floats[count + r - first, F_UPPER] = upper
    if cst == 0 or last != first + 1:
        return
    code = settings.criterion.code
    middle = (criteria.node_value(code, table.child_stats[first], table.child_floats[0, first])
              / 2.0
              + criteria.node_value(code, table.child_stats[last], table.child_floats[0, last])
              / 2.0)
    if cst > 0:
        nodes.floats[count, F_UPPER] = middle
        nodes.floats[count + 1, F_LOWER] = middle
    else:
        nodes.floats[count, F_LOWER] = middle
        nodes.floats[count + 1, F_UPPER] = middle


@jit(inline="always")
def split_candidates(data, settings, categories, order, nodes, count, table, rows, pools, work,
                     spare):
    """Split the candidates ``rows`` of ``table`` (already marked): their children join the
    node table, and the parents whose children may be split further have their segments
    partitioned (the sample-order growth, ``order`` not None, partitioned them when it found
    the split): from ``data``'s sorted arrays into ``spare``'s (:func:`partition_into`) when
    ``spare`` holds the second copy (:func:`with_spare_sorted`), else in place. Returns
    (nodes, count, pools, open children: rows id, start, end)."""
    ints = table.ints
    n_new = 0
    for c in rows:
        n_new += ints[C_CHILD_END, c] - ints[C_CHILD_FIRST, c]
    nodes = reserve_nodes(nodes, count, count + n_new)
    is_regression = data.is_regression
    open_nodes = np.empty((3, n_new), dtype=np.int64)
    n_open = 0
    binary = np.empty(rows.shape[0], dtype=np.int64)
    multi = np.empty(rows.shape[0], dtype=np.int64)
    n_binary = 0
    n_multi = 0
    for c in rows:
        parent = ints[C_NODE, c]
        first = ints[C_CHILD_FIRST, c]
        last = ints[C_CHILD_END, c] - 1
        for r in range(first, last + 1):
            for s in range(nodes.stats.shape[1]):
                nodes.stats[count + r - first, s] = table.child_stats[r, s]
            nodes.floats[count + r - first, F_WEIGHT] = table.child_floats[0, r]
            nodes.floats[count + r - first, F_IMPURITY] = table.child_floats[1, r]
            nodes.ints[count + r - first, N_SAMPLES] = table.child_count[r]
            nodes.ints[count + r - first, N_DEPTH] = nodes.ints[parent, N_DEPTH] + 1
        child_bounds(nodes, parent, count, table, first, last, settings, ints[C_FEATURE, c])
        if settings.interaction.shape[0] > 0:
            child_groups(nodes, parent, count, last - first + 1, settings.interaction,
                         ints[C_FEATURE, c])
        categorical = ints[C_CATEGORICAL, c]
        multiway = ints[C_MULTIWAY, c]
        missing = ints[C_MISSING, c]
        nodes.ints[parent, N_FEATURE] = ints[C_FEATURE, c]
        nodes.ints[parent, N_LEFT] = count
        nodes.ints[parent, N_RIGHT] = count + last - first
        nodes.floats[parent, F_THRESHOLD] = (TREE_UNDEFINED if categorical
                                             else table.floats[C_THRESHOLD, c])
        if multiway:
            nodes.ints[parent, N_SPLIT_KIND] = SPLIT_MULTIWAY
        else:
            nodes.ints[parent, N_SPLIT_KIND] = SPLIT_SUBSET if categorical else SPLIT_THRESHOLD
            # missing values: the learned side, else the heavier child
            if missing == MISSING_LEFT or missing == MISSING_RIGHT:
                nodes.ints[parent, N_MISSING_LEFT] = 1 if missing == MISSING_LEFT else 0
            else:
                second = min(first + 1, last)
                heavier_left = table.child_floats[0, first] >= table.child_floats[0, second]
                nodes.ints[parent, N_MISSING_LEFT] = 1 if heavier_left else 0
        if categories is not None and categorical:
            pools = category_table(table, c, categories.n_categories[ints[C_FEATURE, c]],
                                   pools, nodes, parent)
        # Only children that may be split need their segments partitioned.
        needed = False
        child_end = ints[C_START, c]
        for r in range(first, last + 1):
            child_start = child_end
            child_end = child_start + table.child_count[r]
            if splittable(nodes, count + r - first, settings, is_regression):
                needed = True
                open_nodes[0, n_open] = count + r - first
                open_nodes[1, n_open] = child_start
                open_nodes[2, n_open] = child_end
                n_open += 1
        count += last - first + 1
        if needed and order is None:
            # a multiway node with two children is partitioned like a binary one (goes_left
            # is its slot 0)
            if multiway and last - first + 1 > 2:
                multi[n_multi] = c
                n_multi += 1
            else:
                binary[n_binary] = c
                n_binary += 1
    goes_left, goes_left_bits, child_slot = work
    ping_pong = holds_copy(spare)
    if n_binary and order is None:
        serial = one_block(settings.n_blocks)
        if serial:
            pack_bits_serial(goes_left, goes_left_bits)
        else:
            pack_bits(goes_left, goes_left_bits)
        start = np.empty(n_binary, dtype=np.int64)
        end = np.empty(n_binary, dtype=np.int64)
        # into a second copy, each node's left count (where its right side starts); in
        # place, the feature whose segment the kernel leaves as it is
        left_or_own = np.empty(n_binary, dtype=np.int64)
        for t in range(n_binary):
            c = binary[t]
            start[t] = ints[C_START, c]
            end[t] = ints[C_END, c]
            if ping_pong:
                left_or_own[t] = table.child_count[ints[C_CHILD_FIRST, c]]
            else:
                # the split feature's own segment is already left | right unless categorical
                # or with its missing values sent left: -1 makes the kernel partition it too
                keep_own = ints[C_CATEGORICAL, c] == 0 and ints[C_MISSING, c] != MISSING_LEFT
                left_or_own[t] = ints[C_FEATURE, c] if keep_own else -1
        if ping_pong and serial:
            partition_into_serial(data, goes_left_bits, start, end, left_or_own, spare)
        elif ping_pong:
            partition_into(data, goes_left_bits, start, end, left_or_own, spare)
        elif serial:
            partition_serial(data.sorted_index, data.sorted_value, data.sorted_label,
                             goes_left_bits, start, end, left_or_own)
        else:
            partition(data.sorted_index, data.sorted_value, data.sorted_label, goes_left_bits,
                      start, end, left_or_own)
    # only category splits are multiway
    if categories is not None and n_multi and order is None:
        start = np.empty(n_multi, dtype=np.int64)
        end = np.empty(n_multi, dtype=np.int64)
        offsets = np.zeros(n_multi + 1, dtype=np.int64)
        for t in range(n_multi):
            c = multi[t]
            start[t] = ints[C_START, c]
            end[t] = ints[C_END, c]
            offsets[t + 1] = offsets[t] + ints[C_CHILD_END, c] - ints[C_CHILD_FIRST, c]
        counts = np.empty(offsets[n_multi], dtype=np.int64)
        for t in range(n_multi):
            c = multi[t]
            for r in range(ints[C_CHILD_FIRST, c], ints[C_CHILD_END, c]):
                counts[offsets[t] + r - ints[C_CHILD_FIRST, c]] = table.child_count[r]
        partition_multiway(data.sorted_index, data.sorted_value, data.sorted_label,
                           child_slot, start, end, offsets, counts)
    return nodes, count, pools, open_nodes[:, :n_open]


@jit(inline="always")
def accepted(table, first, last, settings):
    """Candidates ``first:last`` whose impurity decrease reaches ``min_impurity_decrease``."""
    rows = np.empty(last - first, dtype=np.int64)
    n = 0
    for c in range(first, last):
        if table.floats[C_IMPROVEMENT, c] + EPSILON >= settings.min_impurity_decrease:
            rows[n] = c
            n += 1
    return rows[:n]


@jit
def heap_before(key, node, a, b):
    """Heap order: larger impurity decrease first, then lower node id."""
    return key[a] > key[b] or (key[a] == key[b] and node[a] < node[b])


@jit
def heap_push(heap, size, key, node, c):
    """Push candidate ``c`` on the binary heap ``heap[:size]`` of candidate rows."""
    heap[size] = c
    i = size
    while i > 0:
        parent = (i - 1) // 2
        if not heap_before(key, node, heap[i], heap[parent]):
            break
        heap[i], heap[parent] = heap[parent], heap[i]
        i = parent
    return size + 1


@jit(inline="always")
def heap_pop(heap, size, key, node):
    """Remove and return the first candidate of ``heap[:size]``."""
    top = heap[0]
    size -= 1
    heap[0] = heap[size]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and heap_before(key, node, heap[child + 1], heap[child]):
            child += 1
        if not heap_before(key, node, heap[child], heap[i]):
            break
        heap[i], heap[child] = heap[child], heap[i]
        i = child
    return top


@jit(inline="always")
def heap_push_all(heap, size, table, rows):
    """Push the candidates ``rows`` on the heap ``heap[:size]`` (grown if full)."""
    heap = reserve(heap, size, size + rows.shape[0])
    for c in rows:
        size = heap_push(heap, size, table.floats[C_IMPROVEMENT], table.ints[C_NODE], c)
    return heap


@jit(inline="always")
def open_root(nodes, n_rows, settings, is_regression):
    open_nodes = np.zeros((3, 1), dtype=np.int64)
    open_nodes[2, 0] = n_rows
    if splittable(nodes, 0, settings, is_regression):
        return open_nodes
    return open_nodes[:, :0]


@jit
def bounded(settings, max_children):
    """``settings`` whose multiway splits have at most ``max_children`` children (0: no
    bound)."""
    return GrowSettings(*settings[:-1], max_children)


# The depth-wise presorted growth of numeric features (no order criterion) partitions each
# level's segments from one copy of the sorted arrays into a second one at the same positions
# (kernels.grow.partition_into), and the next level reads that copy: each sample is written
# once where the partition in place writes it twice and copies the right side back. Single
# trees on 20k x 20 (1 thread) fit in 0.83 of the time, 0.75 with max_features="sqrt"; a
# random forest of 20 trees on those rows in 0.95. Where the sorted arrays outgrow the
# caches the gain fades (150k x 20: 0.93 for a tree, 0.92-0.97 for a forest's trees), each
# level then streaming through two copies instead of one, while the second copy doubles the
# sorted arrays' memory (each tree of a forest holds its own as it grows; a tree's fit on
# 200k x 20 float32 held 4.3 times X's bytes above it at its peak, against the 3 times the
# memory target allows). So it is made only while they hold at most this many bytes, which
# the caches can hold (about 46k samples of 20 float32 features with their classes carried,
# a forest tree's bag of about 52k distinct samples): a second copy of at most 8 MiB.
# Larger ones, the best-first growth (whose waiting nodes' segments stay where they are),
# trees with categorical features (their category and multiway partitions) and the order
# criteria (their order statistics, kernels.pinball, are kept with the sorted arrays)
# partition in place. The trees are the same.
# The builder passes it to the growth as ``GrowSettings.second_copy_bytes`` (the tests lower
# it to grow the same trees in place).
PING_PONG_BYTES = 1 << 23


@jit
def sorted_bytes(data):
    """Bytes of ``data``'s sorted arrays (index, value, carried labels)."""
    return data.sorted_index.nbytes + data.sorted_value.nbytes + data.sorted_label.nbytes


@jit
def with_spare_sorted(data, second_copy):
    """``data`` with new sorted arrays of the same types, every other field shared: of the
    same shapes (their contents undefined) when ``second_copy`` (the copy that
    :data:`PING_PONG_BYTES` bounds), else of no samples (:func:`holds_copy` False)."""
    n_rows = data.sorted_index.shape[1] if second_copy else 0
    n_label_rows = data.sorted_label.shape[1] if second_copy else 0
    return TreeData(retyped(np.empty((data.sorted_index.shape[0], n_rows),
                                     dtype=data.sorted_index.dtype), data.sorted_index),
                    retyped(np.empty((data.sorted_value.shape[0], n_rows),
                                     dtype=data.sorted_value.dtype), data.sorted_value),
                    retyped(np.empty((data.sorted_label.shape[0], n_label_rows),
                                     dtype=data.sorted_label.dtype), data.sorted_label),
                    data.label, data.label_scratch, data.target, data.target_term,
                    data.sample_weight, data.weighted, data.is_regression, data.outputs,
                    data.output_columns, data.xlogx)


@jit(inline="always")
def holds_copy(spare):
    """Whether ``spare`` (:func:`with_spare_sorted`) holds a second copy of the sorted
    arrays (a growth with samples to partition has rows in them)."""
    return spare.sorted_index.shape[1] > 0


@jit
def n_rows_of(data, order):
    """The number of samples the tree grows on (rows of the sorted arrays, or of the
    sample-order list)."""
    if order is None:
        return data.sorted_index.shape[1]
    return order.samples.shape[0]


@jit
def grow_tree(data, settings, categories, ranks, order, root_stats, root_weight,
              random_search):
    """Grow one tree on ``data`` (a :class:`TreeData` whose sorted arrays it overwrites: it
    partitions them in place, or partitions each level from them into a second copy and
    back when they hold at most ``settings.second_copy_bytes``, see
    :data:`PING_PONG_BYTES`). ``categories``: a :class:`CategorySettings`, or None
    when every feature is numeric or ordinal (the category search is then left out of the
    compiled code).
    ``ranks``: the :class:`Ranks` scratch of the order criteria (absolute_error, quantile),
    else None (the order statistics are then left out of the compiled code).
    ``order``: a :class:`~jitree.kernels.records.SampleOrder` for the sample-order growth
    (numeric features, no order criterion; ``data``'s sorted arrays
    then hold no rows), else None (the presorted growth).
    ``root_stats``, ``root_weight``: the statistics and total weight of all the samples (the
    weight is also the denominator of every weighted impurity decrease).
    ``random_search``: True for the random splitter's presorted growth without an order
    criterion (the one growth that draws thresholds with
    :func:`~jitree.kernels.split.find_random_splits`), else None: that search is then left
    out of the compiled code (iris's classifier and regressor, a first fit and prediction
    from an empty cache: 67.2 s, where compiling it in took 76.0 s).

    Returns ``(nodes, count, category_bits, multiway_slot)``: the :class:`NodeTable` (rows
    ``:count``) and the category pools.
    """
    n_samples = data.sample_weight.shape[0]
    n_rows = n_rows_of(data, order)
    n_stats = root_stats.shape[0]
    work = (np.zeros(n_samples, dtype=np.uint8),
            np.zeros((n_samples + 63) // 64, dtype=np.uint64),
            np.zeros(n_samples, dtype=np.int32))
    n_groups = settings.interaction.shape[0]
    n_words = (n_groups + 63) // 64
    nodes = reserve_nodes(new_node_table(node_capacity(n_rows, settings, n_stats, n_words),
                                         n_stats, n_words), 0, 1)
    for g in range(n_groups):  # every group is open at the root
        nodes.groups[0, g >> 6] |= np.uint64(1) << np.uint64(g & 63)
    for s in range(n_stats):
        nodes.stats[0, s] = root_stats[s]
    nodes.floats[0, F_WEIGHT] = root_weight
    nodes.floats[0, F_IMPURITY] = criteria.node_impurity(settings.criterion, root_stats,
                                                         root_weight)
    nodes.ints[0, N_SAMPLES] = n_rows
    count = 1
    pools = (np.zeros(16, dtype=np.uint64), 0, np.zeros(16, dtype=np.int32), 0)
    is_regression = data.is_regression
    open_nodes = open_root(nodes, n_rows, settings, is_regression)
    table = new_candidate_table(64, n_stats)
    # One loop for both growth orders, so that the search and the split are each called
    # from one place. Depth-wise: every accepted candidate of a level is split. Best-first:
    # the candidates wait in a heap (largest impurity decrease first, then lowest node id)
    # and one is split per round.
    best_first = settings.max_leaf_nodes > 0
    n_candidates = 0
    heap = np.empty(0, dtype=np.int64)
    size = 0
    n_leaves = 1
    rows = np.empty(0, dtype=np.int64)
    max_children = 0  # no bound on a multiway split's children (see bounded)
    # the sample-order growth renumbers its open samples as the nodes get smaller (see
    # kernels.sample_order.renumber): data and order then hold the copies
    tree_data = data
    tree_order = order
    # (depth-wise growth only: a best-first growth's waiting candidates are not open nodes)
    renumbered_size = float(n_rows)  # the open nodes' mean size at the last renumbering
    # the depth-wise presorted growth of numeric features partitions each level from one
    # copy of the sorted arrays into the other (see PING_PONG_BYTES)
    spare = with_spare_sorted(data, order is None and categories is None and ranks is None
                              and not best_first
                              and sorted_bytes(data) <= settings.second_copy_bytes)
    while True:
        if order is not None and order.renumber > 0 and not best_first \
                and open_nodes.shape[1]:
            n_open = 0
            for j in range(open_nodes.shape[1]):
                n_open += open_nodes[2, j] - open_nodes[1, j]
            mean_size = n_open / open_nodes.shape[1]
            row_bytes = order.X.size // max(1, n_rows) * order.X.itemsize
            levels = settings.max_depth - nodes.ints[open_nodes[0, 0], N_DEPTH]
            if mean_size * order.renumber <= renumbered_size and \
                    n_open * row_bytes <= RENUMBER_MAX_BYTES and levels >= RENUMBER_LEVELS:
                tree_data, tree_order = renumber(tree_data, tree_order, open_nodes)
                renumbered_size = mean_size
        if open_nodes.shape[1]:
            first = n_candidates if best_first else 0
            table, n_candidates = find_candidates(tree_data, bounded(settings, max_children),
                                                  categories, ranks, tree_order,
                                                  random_search, nodes, open_nodes,
                                                  root_weight, table, first, work)
            rows = accepted(table, first, n_candidates, settings)
            if max_children > 0 and rows.shape[0] == 1 and (
                    table.ints[C_CHILD_END, rows[0]] - table.ints[C_CHILD_FIRST, rows[0]]
                    > max_children):
                rows = rows[:0]  # the search honours the bound; never searched again
            max_children = 0
            if best_first:
                heap = heap_push_all(heap, size, table, rows)
                size += rows.shape[0]
        elif not best_first:
            break
        if best_first:
            if size == 0 or n_leaves >= settings.max_leaf_nodes:
                break
            c = heap_pop(heap, size, table.floats[C_IMPROVEMENT], table.ints[C_NODE])
            size -= 1
            new_leaves = table.ints[C_CHILD_END, c] - table.ints[C_CHILD_FIRST, c] - 1
            if n_leaves + new_leaves > settings.max_leaf_nodes:
                # a multiway split of more children than the leaf budget has room for: the
                # node is searched again for its best split that fits
                max_children = settings.max_leaf_nodes - n_leaves + 1
                open_nodes = np.empty((3, 1), dtype=np.int64)
                open_nodes[0, 0] = table.ints[C_NODE, c]
                open_nodes[1, 0] = table.ints[C_START, c]
                open_nodes[2, 0] = table.ints[C_END, c]
                continue
            n_leaves += new_leaves
            rows = np.full(1, c, dtype=np.int64)
        elif rows.shape[0] == 0:
            break
        nodes, count, pools, open_nodes = split_candidates(
            tree_data, settings, categories, tree_order, nodes, count, table, rows, pools, work,
            spare)
        if holds_copy(spare):
            # the open children's segments are in the other copy now
            tree_data, spare = spare, tree_data
    bits, bits_size, slots, slots_size = pools
    return nodes, count, bits[:bits_size], slots[:slots_size]
