"""The records that travel between the growth kernels.

What goes together has one name, so that a kernel takes a handful of records instead of a
list of twenty arrays, and two swapped arrays of one record cannot compile silently (a record
is passed whole, its fields read by name).

They are named tuples: numba types each field on its own (arrays of different dtypes, scalars,
flags), passes them by value at no cost inside compiled code, builds them in ``@njit`` code,
and its on-disk cache keys them by field types only, so a fit in a new process reuses the
machine code (structrefs would need a type registration per record and a jitclass cannot be
cached). They hold plain NumPy arrays: the Python layer builds them in one line.

One rule inside ``prange`` kernels: read a record's fields into local variables before the
parallel loop. Numba (0.68) loses the writes made through a record's field inside the loop
body (``out.score[p] = ...``); through a local (``out_score = out.score``) they land.

- :class:`TreeData`: the presorted samples one tree grows on, and their targets;
- :class:`SampleOrder`: the samples the random splitter's sample-order growth partitions,
  and X (in place of TreeData's sorted arrays);
- :class:`Measure`: the split criterion: a built-in's code, or a user's compiled functions
  (first-class functions: one machine code for every user criterion, called through a
  pointer, so a new criterion compiles only itself);
- :class:`GrowSettings`: the criterion, the stopping rules, the leaf constraints and the
  splitter's choices;
- :class:`Ranks`: the order criteria's ranking of each node's samples by target (None for
  the other criteria: the order statistics are then pruned from the compiled growth loop);
- :class:`CategorySettings`: the feature kinds and the category search (None for a fit on
  numeric and ordinal features only: the category search is then pruned from the compiled
  growth loop, which neither compiles nor loads it);
- :class:`NodeBatch`: a set of open nodes (their rows in the sorted arrays and statistics);
- :class:`PairResults`: the best split of each (node, feature) pair of a search;
- :class:`SplitBatch`: the chosen splits of a set of nodes, as the marking kernel reads them;
- :class:`ChildStats`: the statistics of the children of those splits;
- :class:`Rows`, :class:`Limits`, :class:`Side`, :class:`Runs`: inside one search, a
  feature's sorted rows of a node, what its splits must respect under monotonic
  constraints, the statistics of a set of samples (the node, its missing samples, a left
  side), and the runs of equal category codes.
"""

from collections import namedtuple

import numpy as np
from numba.core import types
from numba.core.typing.typeof import typeof_impl

TreeData = namedtuple("TreeData", [
    "sorted_index",   # (n_features, n_rows) int32: each feature's samples in increasing order
    "sorted_value",   # (n_features, n_rows) X's dtype: their values (NaN last)
    "sorted_label",   # (n_features, n_rows) uint8/16 classes carried along, or (1, 0)
    "label",          # (n_samples,) class of every sample (classification), or empty
    "label_scratch",  # (n_blocks, n_rows) classes gathered per scan, or (n_blocks, 0)
    "target",         # (n_samples,) float64: regression target
    "target_term",    # (n_samples,) float64: a regression criterion's second per-sample
                      # statistic when it is not y**2 (poisson: y log y), else empty
    "sample_weight",  # (n_samples,) float64
    "weighted",       # bool: some weight differs from 1
    "is_regression",  # bool: no class labels (regression, and multi-output trees)
    "outputs",        # (n_samples, 2 n_outputs) float64: a multi-output regression tree's
                      # per-sample statistics, y_j and y_j**2 (poisson: y_j log y_j) per
                      # output, which each sample adds with its weight (see
                      # kernels.criteria); (n_samples, 0) otherwise
    "output_columns",  # (n_samples, n_outputs) int32: a multi-output classification tree's
                       # statistics column of each sample's class in each output, to which
                       # it adds its weight; (n_samples, 0) otherwise
    "xlogx",          # float64: xlogx[m] = m log m for m < len(xlogx), which entropy's
                      # threshold scans look up (kernels.criteria.table_xlogx); empty for
                      # the other criteria
])

SampleOrder = namedtuple("SampleOrder", [
    # the samples in node order of the sample-order growth (see kernels.sample_order), in
    # place of TreeData's sorted arrays
    "X",              # (n_samples, n_features) X, C-contiguous; or, by_column, its
                      # transpose (n_features, n_samples), C-contiguous
    "by_column",      # bool: X holds each feature's values in a row (see kernels.sample_order)
    "samples",        # (n_rows,) int32: the samples grouped by node, each node's segment in
                      # increasing sample index
    "spill",          # (n_rows,) int32: scratch of the partition (the right children's
                      # samples, at their node's positions)
    "renumber",       # float64: the growth renumbers the open samples in node order (X and
                      # the targets copied in that order, see kernels.sample_order.renumber)
                      # each time the open nodes' mean size has fallen this many times;
                      # 0: never
    "codes",          # X's values as uint8, laid out as X, when every one is a whole number
                      # 0 .. 255 (binary, one-hot, counts, scales; see
                      # kernels.sample_order.small_codes), read by the best splitter's
                      # search in place of X; else (0, 0)
    "whole_weights",  # bool: every sample's weight a whole number, of a total below 2**26
                      # (every sum of them and of their squares exact in any order; see
                      # kernels.split.scan_two_valued)
])

Measure = namedtuple("Measure", [
    "code",      # int64: a built-in criterion of jitree.kernels.criteria, or USER_*
    "impurity",  # compiled function (stats, weight) -> float64 (USER_IMPURITY)
    "score",     # compiled function (left, weight_left, right, weight_right) -> float64
    "batch",     # compiled function scoring a batch of threshold candidates (BATCH_TYPE)
    "invalid",   # (1,) uint8: set to 1 when a user's function returned NaN
    "blocks",    # (n_outputs + 1,) int64: output j's statistics are stats[blocks[j]:
                 # blocks[j + 1]] (multi-output trees, see kernels.criteria); empty: one
])

GrowSettings = namedtuple("GrowSettings", [
    "criterion",              # Measure: the split criterion
    "random_splitter",        # bool: one random threshold per feature (Extra-Trees)
    "seed",                   # uint64: random thresholds and feature draws
    "max_depth",              # int64
    "min_samples_split",      # int64
    "min_samples_leaf",       # int64
    "min_weight_leaf",        # float64
    "max_features",           # int64: features drawn per node
    "max_leaf_nodes",         # int64: 0 grows depth-wise, else best-first
    "min_impurity_decrease",  # float64
    "purity_threshold",       # float64
    "impurity_threshold",     # float64
    "n_blocks",               # int64: blocks of (node, feature) pairs per parallel search
    "monotonic",              # (n_features,) int8: monotonic constraint of each feature on
                              # stats[0] / weight (see Limits), or empty: none
    "interaction",            # (n_groups, n_features) uint8: interaction constraints, the
                              # features of each group (a branch uses one group's), or (0, 0)
    "quantile",               # float64: the order criteria's alpha (absolute_error: 0.5)
    "second_copy_bytes",      # int64: the depth-wise presorted growth of numeric features
                              # partitions each level into a second copy of the sorted arrays
                              # when they hold at most this many bytes, else in place (0:
                              # in place, whatever the data; kernels.grower.PING_PONG_BYTES)
    "max_children",           # int64: multiway splits of more children are not searched (0:
                              # no bound); the best-first growth bounds them by its leaf
                              # budget when it searches a node again (see kernels.grower)
])

Ranks = namedtuple("Ranks", [
    # the order criteria's ranking of each searched node's samples by target
    # (kernels.pinball.rank_targets); None for the other criteria (the order statistics are
    # then pruned from the compiled growth loop); a row per output (a multi-output tree
    # ranks each output's targets)
    "target_rank",  # (n_outputs, n_samples) int32: rank of each sample's target in its node
    "ranked",       # (n_outputs, n_rows) int32: each node's samples by increasing target
])

CategorySettings = namedtuple("CategorySettings", [
    "is_categorical",   # (n_features,) uint8
    "n_categories",     # (n_features,) int32
    "mode",             # int64: SUBSET, ONE_VS_REST or MULTIWAY of kernels.categorical
    "max_exhaustive",   # int64
    "max_subset_size",  # int64 (0: no bound)
    "smoothing",        # float64: weight of the node's statistic mixed into each category's
                        # when categories are ordered (0: none)
    "min_weight",       # float64: categories of less weight at a node are pooled into one
                        # (0: none)
    "max_one_vs_rest",  # int64: SUBSET nodes with at most this many categories (after
                        # pooling) test one category against the rest (0: never)
    "penalty",          # float64: a subset of q > 2 categories must beat the best single
                        # category by penalty * (q - 2) * categorical.chance_gain (0: none)
])

NodeBatch = namedtuple("NodeBatch", [
    "id",      # (k,) int64 node ids (the random streams are keyed by them)
    "start",   # (k,) int64: first row of each node's segment
    "end",     # (k,) int64: one past its last row
    "stats",   # (k, n_stats) float64: class weights, or (sum w y, sum w y**2)
    "weight",  # (k,) float64
    "lower",   # (k,) float64: bounds of the nodes' values under monotonic constraints
    "upper",   # (k,) float64
])

PairResults = namedtuple("PairResults", [
    "score",      # (n_pairs,) float64
    "pos",        # (n_pairs,) int64: -1 when the pair has no valid split
    "threshold",  # (n_pairs,) float64
    "missing",    # (n_pairs,) int64: where missing values go (see kernels.split)
])

SplitBatch = namedtuple("SplitBatch", [
    "start",          # (k,) int64
    "end",            # (k,) int64
    "feature",        # (k,) int64
    "pos",            # (k,) int64: threshold splits: rows start:pos go left
    "categorical",    # (k,) uint8
    "missing_slot",   # (k,) int64: child slot of the missing samples
    "detail_offset",  # (k + 1,) int64: categorical splits' rows of detail_slot
    "detail_slot",    # child slot of each category run present at the node
    "child_offset",   # (k + 1,) int64: split j's children are rows child_offset[j]:[j + 1]
])

ChildStats = namedtuple("ChildStats", [
    "stats",   # (n_children, n_stats) float64
    "weight",  # (n_children,) float64
    "count",   # (n_children,) int64
])

Limits = namedtuple("Limits", [
    # what a split of a node on a feature must respect under monotonic constraints: its
    # children's values v = stats[0] / weight (the mean target, or the weight fraction of
    # class 0) within [lower, upper], and (v_left - v_right) * monotonic <= 0
    "monotonic",  # int64: the feature's constraint: 1 increasing, -1 decreasing, 0 none
    "lower",      # float64: the node's bounds
    "upper",      # float64
])

Rows = namedtuple("Rows", [
    "index",   # one feature's sorted sample indices (a row of TreeData.sorted_index)
    "value",   # their values
    "label",   # their classes (carried or gathered), or an empty row (regression)
    "start",   # int64: the node's first row
    "end",     # int64: one past its last non-missing row
    "limits",  # Limits of the node's splits on the feature
])

Side = namedtuple("Side", [
    "stats",   # (n_stats,) float64 statistics of a set of samples (see kernels.criteria)
    "weight",  # float64: their total weight
    "count",   # int64: their number
])

Runs = namedtuple("Runs", [
    "code",    # (q,) int64: the category of each run of equal codes at a node
    "stats",   # (q, n_stats) float64
    "weight",  # (q,) float64
    "count",   # (q,) int64
])


TreeWalk = namedtuple("TreeWalk", [
    # the arrays of a jitree.Tree that a walk from the root to a leaf reads (every node kind,
    # missing values): Tree.walk_arrays(); several trees may be concatenated
    "feature", "threshold", "children_left", "children_right", "split_kind", "missing_left",
    "category_offset", "category_bits", "multiway_slot", "n_categories",
])

FlatTrees = namedtuple("FlatTrees", [
    # one or several trees in the flat layout of jitree.kernels.predict (Tree.flat)
    "feature",        # (n_flat,) int32
    "threshold",      # (n_flat,) X's dtype (at leaves: +inf or NaN, see leaf_base)
    "left",           # (n_flat,) int32: left child (right = left + 1); a leaf is its own
    "missing_right",  # (n_flat,) uint8: NaN goes right
    "root",           # (n_trees,) int64: each tree's root
    "depth",          # (n_trees,) int64: each tree's depth
    "threshold_bits",  # threshold viewed as unsigned ints (the same memory)
    "leaf_base",      # (n_trees,) int64: the table row of tree t's first leaf, its leaves'
                      # rows following in Tree id order, each leaf's threshold a NaN whose
                      # low LEAF_RANK_BITS bits hold its rank; -1: the table has a row per
                      # flat node and a leaf's threshold is +inf (predict.table_row)
    "votes",          # (n_trees,) uint8: 1 when every leaf of tree t adds 1.0 to one column
                      # of the output and 0.0 to the others (a pure leaf's probabilities):
                      # the low LEAF_RANK_BITS bits of its NaN hold that column instead of
                      # its rank, and the table has no rows for tree t (predict.add_leaf)
    "lanes",          # (n_trees,) uint8: 1 when tree t's leaves lie at depths that differ
                      # enough for its rows to walk in lanes (predict.lanes_pay)
])

ZeroPaths = namedtuple("ZeroPaths", [
    # FlatTrees renumbered for the zero-path walk of a sparse X's rows
    # (jitree.kernels.predict.predict_zero_paths_csr): each tree's nodes in preorder, the
    # child that a zero value takes first, so that a node and the nodes a zero takes from it
    # (its zero path) are consecutive positions
    "start",   # (n_trees + 1,) int64: tree t holds positions start[t]:start[t + 1]
    "node",    # (n_positions,) int32: the flat node at each position
    "other",   # (n_positions,) int32: the position of the child that a zero does not take
               # (-1 at leaves)
    "end",     # (n_positions,) int32: the position of the leaf that ends the zero path
    "first",   # (n_columns + 1,) int64: the positions that test feature f are
               # tested[first[f]:first[f + 1]], in increasing position
    "tested",  # (n_tests,) int32
])

FlatCategories = namedtuple("FlatCategories", [
    # the category tests of FlatTrees (jitree.kernels.predict.predict_flat_categories, see the
    # comment above its NARROW_CATEGORIES)
    "word",          # (n_flat,) uint64: a narrow subset node's test (bit c: code c goes
                     # right; code m of a feature of m categories: missing values), else 0;
                     # empty when some subset node is wide (its test is then in bits), or
                     # when no word is nonzero (no subset node, or only nodes that send
                     # every code left: the walks then test no bits)
    "columns",       # (k,) int64: the categorical features
    "n_categories",  # (n_features,) int32: categories of each feature (0: numeric)
    "values",        # (n_values,) float64: each categorical feature's values in X,
                     # increasing (for X already encoded: its codes 0 .. m - 1)
    "codes",         # (n_values,) int64: the category code of each value
    "offsets",       # (n_features + 1,) int64: feature f's values are values[offsets[f]:
                     # offsets[f + 1]]
    "bit_base",      # (n_flat,) uint32 (int64 for a table beyond 2**32 - 1 words): a subset
                     # node's block of bits (0 at other nodes, and at a subset node whose
                     # word is 0: the zero block); empty when no node is a wide subset node
    "bits",          # uint64: a block of m // 64 + 1 words per subset node, bits as in word;
                     # the first block, all 0, serves the other nodes; empty when no subset
                     # node is wide
    "slot_base",     # (n_flat,) uint32 (int64 beyond 2**32 - 1 entries): a multiway node's
                     # block of slots (0 at other nodes); empty when no node is multiway
    "slots",         # uint16: a block of m + 1 entries per multiway node, entry c the slot
                     # (child - left) of code c; the first block, all 0, serves the others
    "code_mask",     # uint64: 2**b - 1 for the fewest bits b that hold every code of the
                     # categorical features (at most CODE_LIMIT): a value's code is its bits
                     # & code_mask (jitree.model.tree._code_mask, which sizes the first blocks)
])

ShapTrees = namedtuple("ShapTrees", [
    # one tree or a forest as TreeSHAP reads it (jitree.kernels.shap), beside the TreeWalk
    # of the trees' nodes (numbered one tree after another, as for predict_nodes)
    "root",       # (n_trees,) int64: each tree's root
    "fraction",   # (n_nodes,) float64: a node's share of its parent's training weight
                  # (jitree.kernels.dependence.node_shares; 1 at a root)
    "table",      # (n_nodes, n_outputs) float64: what a leaf adds to the output (scaled)
    "max_depth",  # int64: the deepest tree's depth
    "gauss_u",    # (n + 1, n) float64: row m holds the m Gauss-Legendre nodes on [0, 1]
    "gauss_w",    # (n + 1, n) float64: and their weights, for m = 1 .. n = ceil(max_depth / 2)
])

LeafSamples = namedtuple("LeafSamples", [
    # the training samples behind each leaf, for quantile regression forests
    # (jitree.kernels.quantiles); one tree or several trees' nodes numbered one after another
    "start",        # (n_nodes,) int64: node's entries are sample[start:stop] (a block may
    "stop",         # (n_nodes,) int64   be shared by several nodes; empty at internal nodes)
    "sample",       # (n_entries,) int32: training row index, into ``target``
    "weight",       # (n_entries,) float64 > 0: the sample's weight in the tree
    "node_count",   # (n_nodes,) float64: draws in the block (bootstrap multiplicities)
    "target",       # (n_train,) float64: the training targets
])

QuantileLayout = namedtuple("QuantileLayout", [
    # a LeafSamples as the quantile kernels read it (built at the first prediction)
    "leaf_table",       # (n_nodes, 4) float64 per node: its block's start, length, draws and,
                        # for a block of one sample, that sample's target rank (else -1);
                        # predicted for each row and tree, so that a one-sample leaf (full
                        # depth trees) costs no further memory access
    "entries",          # (n_entries, 2) float64: the rank of the entry's target among the
                        # distinct training targets, its weight (> 0)
    "distinct_target",  # (n_distinct,) float64: the distinct training targets, increasing
])


# -- typing the records that Python passes to the kernels ---------------------------------------
# Numba types a tuple argument field by field at every call, building its type anew: 15-40 us
# per record, more than a small tree's growth. The records Python builds are typed once per
# kind of content (the Python types of the fields; dtype, dimensions, layout and flags of the
# arrays), and the type is looked up after.

def _type_key(value):
    """What numba's type of ``value`` depends on, or None when not known here (the record is
    then typed by numba itself)."""
    kind = type(value)
    if kind is np.ndarray:
        # the flags as one int (contiguity, alignment, writeability among them)
        return (kind, value.dtype, value.ndim, value.flags.num)
    if kind is int:
        return (kind, value.bit_length() >= 64, value >= 0)
    if kind in (bool, float, type(None)) or isinstance(value, np.generic):
        return kind
    if isinstance(value, tuple):
        keys = tuple(_type_key(field) for field in value)
        return None if None in keys else (kind, keys)
    numba_type = getattr(value, "_numba_type_", None)
    return None if numba_type is None else (kind, numba_type)


def _cached_typeof(record):
    cache = {}

    @typeof_impl.register(record)
    def _typeof_record(value, context):
        key = _type_key(value)
        if key is not None:
            key = (key, context.purpose)
            known = cache.get(key)
            if known is not None:
                return known
        fields = [typeof_impl(field, context) for field in value]
        if any(field is None for field in fields):
            return None
        numba_type = types.BaseTuple.from_types(fields, record)
        if key is not None:
            cache[key] = numba_type
        return numba_type


for _record in (TreeData, SampleOrder, Measure, GrowSettings, Ranks, CategorySettings, TreeWalk,
                FlatTrees, FlatCategories, ShapTrees, LeafSamples, QuantileLayout):
    _cached_typeof(_record)
