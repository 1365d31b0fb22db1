"""Tree building: the Python driver over the presort, split and grow kernels.

Depth-wise (level by level) growth when ``max_leaf_nodes`` is None: each level makes one
parallel split search over all its (node, feature) pairs and one parallel partition.
Best-first growth otherwise: the open node with the largest impurity decrease is split next.
"""

import heapq
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numba
import numpy as np

from ..kernels import criteria
from ..kernels.categorical import MISSING_LEFT, MISSING_RIGHT, MULTIWAY
from ..kernels.grow import (
    impurity_decreases,
    mark_and_count,
    pack_bits,
    partition,
    partition_multiway,
)
from ..kernels.presort import fill_from_keys, fill_sorted, float32_keys, keep_samples
from ..kernels.select import select_features
from ..kernels.split import (
    best_pair_per_node,
    categorical_details,
    find_category_splits,
    find_splits,
)
from .tree import (
    FEATURE_CATEGORICAL,
    SPLIT_MULTIWAY,
    SPLIT_SUBSET,
    SPLIT_THRESHOLD,
    TREE_LEAF,
    TREE_UNDEFINED,
    Tree,
)

# A node whose impurity is at most this is pure (rounding of an exact 0).
EPSILON = np.finfo(np.float64).eps
# Most (node, feature) pairs searched in one kernel call: bounds the per-pair result arrays.
_PAIRS_PER_CALL = 1 << 16


@dataclass
class GrowParams:
    criterion: int
    is_regression: bool
    random_splitter: bool
    seed: int
    max_depth: int
    min_samples_split: int
    min_samples_leaf: int
    min_weight_leaf: float
    max_features: int
    max_leaf_nodes: int  # 0: unlimited, depth-wise growth
    min_impurity_decrease: float
    purity_threshold: float
    impurity_threshold: float
    # feature kinds (FEATURE_* of jitree.model.tree) and category counts; None: all numeric
    feature_kind: np.ndarray = None
    n_categories: np.ndarray = None
    categorical_mode: int = 0  # SUBSET, ONE_VS_REST or MULTIWAY of kernels.categorical
    max_exhaustive_categories: int = 10
    max_subset_size: int = 0  # 0: no bound


class _Nodes:
    """Growable node table used while building."""

    def __init__(self, n_stats, capacity=64):
        self.count = 0
        self.n_stats = n_stats
        self.feature = np.full(capacity, TREE_UNDEFINED, dtype=np.int32)
        self.threshold = np.full(capacity, float(TREE_UNDEFINED))
        self.left = np.full(capacity, TREE_LEAF, dtype=np.int32)
        self.right = np.full(capacity, TREE_LEAF, dtype=np.int32)
        self.stats = np.zeros((capacity, n_stats))
        self.weight = np.zeros(capacity)
        self.n_samples = np.zeros(capacity, dtype=np.int64)
        self.impurity = np.zeros(capacity)
        self.depth = np.zeros(capacity, dtype=np.int64)
        self.split_kind = np.zeros(capacity, dtype=np.int8)
        self.missing_left = np.zeros(capacity, dtype=np.uint8)
        self.category_offset = np.full(capacity, -1, dtype=np.int64)
        self.category_bits = []  # pieces of the pools, concatenated by to_tree
        self.multiway_slot = []
        self.bits_size = 0
        self.slots_size = 0

    def _reserve(self, extra):
        needed = self.count + extra
        capacity = self.feature.shape[0]
        if needed <= capacity:
            return
        capacity = max(needed, 2 * capacity)
        for name, fill in (("feature", TREE_UNDEFINED), ("threshold", float(TREE_UNDEFINED)),
                           ("left", TREE_LEAF), ("right", TREE_LEAF), ("stats", 0.0),
                           ("weight", 0.0), ("n_samples", 0), ("impurity", 0.0),
                           ("depth", 0), ("split_kind", 0), ("missing_left", 0),
                           ("category_offset", -1)):
            old = getattr(self, name)
            new = np.full((capacity,) + old.shape[1:], fill, dtype=old.dtype)
            new[: self.count] = old[: self.count]
            setattr(self, name, new)

    def add(self, stats, weight, n_samples, impurity, depth):
        """Append nodes (one per row of ``stats``); returns their ids."""
        k = stats.shape[0]
        self._reserve(k)
        ids = np.arange(self.count, self.count + k)
        self.stats[ids] = stats
        self.weight[ids] = weight
        self.n_samples[ids] = n_samples
        self.impurity[ids] = impurity
        self.depth[ids] = depth
        self.count += k
        return ids

    def add_category_table(self, node, kind, table):
        """Attach a subset node's bitset words or a multiway node's slots to ``node``."""
        if kind == SPLIT_SUBSET:
            self.category_offset[node] = self.bits_size
            self.category_bits.append(table)
            self.bits_size += table.shape[0]
        else:
            self.category_offset[node] = self.slots_size
            self.multiway_slot.append(table)
            self.slots_size += table.shape[0]

    def to_tree(self, n_features, n_classes, is_regression, n_categories=None,
                feature_kind=None):
        m = self.count
        if is_regression:
            value = self.stats[:m, :1] / self.weight[:m, None]
        else:
            value = self.stats[:m]
        bits = (np.concatenate(self.category_bits) if self.category_bits
                else np.zeros(0, dtype=np.uint64))
        slots = (np.concatenate(self.multiway_slot) if self.multiway_slot
                 else np.zeros(0, dtype=np.int32))
        return Tree(n_features, n_classes, self.feature[:m], self.threshold[:m],
                    self.left[:m], self.right[:m], value, self.impurity[:m],
                    self.n_samples[:m], self.weight[:m], split_kind=self.split_kind[:m],
                    missing_left=self.missing_left[:m],
                    category_offset=self.category_offset[:m], category_bits=bits,
                    multiway_slot=slots, n_categories=n_categories,
                    feature_kind=feature_kind)


def presort(X, label, sorted_index, sorted_value, sorted_label):
    """Sort every feature once, in parallel over features on numba's current thread count.

    NumPy's argsort releases the GIL, and so does :func:`fill_sorted`, so a thread pool scales.
    """
    def one(f):
        column = np.ascontiguousarray(X[:, f])
        if column.dtype == np.float32:
            keys = np.empty(column.shape[0], dtype=np.uint64)
            float32_keys(column, keys)
            keys.sort()
            fill_from_keys(keys, label, f, sorted_index, sorted_value, sorted_label)
        else:
            # stable: equal values (long runs in a categorical column) already in index order
            fill_sorted(column, np.argsort(column, kind="stable"), label, f, sorted_index,
                        sorted_value, sorted_label)

    n_features = X.shape[1]
    workers = min(numba.get_num_threads(), n_features)
    if workers <= 1:
        for f in range(n_features):
            one(f)
        return
    with ThreadPoolExecutor(workers) as pool:
        for _ in pool.map(one, range(n_features)):
            pass


class Presorted:
    """Each feature's samples in increasing order (``sorted_index``, ``sorted_value``) and,
    for classification, their classes (``sorted_label``), with ``label`` the class of every
    sample: what the builder scans and partitions."""

    def __init__(self, sorted_index, sorted_value, sorted_label, label):
        self.sorted_index = sorted_index
        self.sorted_value = sorted_value
        self.sorted_label = sorted_label
        self.label = label

    @classmethod
    def of(cls, X, target, is_regression, n_classes):
        n_samples, n_features = X.shape
        sorted_index = np.empty((n_features, n_samples), dtype=np.int32)
        sorted_value = np.empty((n_features, n_samples), dtype=X.dtype)
        # the smallest label type that holds the classes: labels move with every partition
        if is_regression:
            label = np.empty(0, dtype=np.uint8)
            sorted_label = np.empty((1, 0), dtype=np.uint8)
        else:
            if n_classes > np.iinfo(np.uint16).max:
                raise ValueError(f"y has {n_classes} classes; jitree supports at most 65535")
            label_type = np.uint8 if n_classes <= np.iinfo(np.uint8).max + 1 else np.uint16
            label = target.astype(label_type)
            sorted_label = np.empty((n_features, n_samples), dtype=label_type)
        presort(X, label, sorted_index, sorted_value, sorted_label)
        return cls(sorted_index, sorted_value, sorted_label, label)

    def subset(self, keep, carry_labels=True):
        """A copy holding only the samples with ``keep[i]`` true (still sorted), renumbered
        ``0 .. n_kept - 1`` in their order: the tree grown on it takes ``target[keep]`` and
        ``sample_weight[keep]``. Smaller per-sample arrays keep a forest tree's random reads
        (weights, sides) in cache.

        ``carry_labels=False`` leaves the sorted labels out: the kernels then read each
        sample's class from ``label`` (see :func:`jitree.kernels.categorical.class_at`)."""
        keep = np.asarray(keep, dtype=bool)
        n_features = self.sorted_index.shape[0]
        n_kept = int(np.count_nonzero(keep))
        number = np.full(keep.shape[0], -1, dtype=np.int32)
        number[keep] = np.arange(n_kept, dtype=np.int32)
        index = np.empty((n_features, n_kept), dtype=self.sorted_index.dtype)
        value = np.empty((n_features, n_kept), dtype=self.sorted_value.dtype)
        with_labels = carry_labels and self.sorted_label.shape[1] == self.sorted_index.shape[1]
        label_rows = np.empty((n_features, n_kept) if with_labels else (1, 0),
                              dtype=self.sorted_label.dtype)
        keep_samples(self.sorted_index, self.sorted_value, self.sorted_label, number, index,
                     value, label_rows)
        label = self.label[keep] if self.label.shape[0] else self.label
        return Presorted(index, value, label_rows, label)


class TreeBuilder:
    """Grows one tree on (X, target, sample_weight).

    ``target`` is float64: the class index for classification (``n_stats`` classes), the value
    for regression (``n_stats == 2``). ``sample_weight`` is float64, non-negative, positive sum.
    """

    def __init__(self, params):
        self.params = params

    def build(self, X, target, sample_weight, n_stats, n_classes, presorted=None):
        """Grow the tree. ``presorted``: a :class:`Presorted` of this tree's samples, numbered
        as the rows of ``target`` and ``sample_weight`` (it is consumed: its arrays are
        partitioned in place); X presorted here if None. X gives the number of features."""
        params = self.params
        n_features = X.shape[1]
        if presorted is None:
            presorted = Presorted.of(X, target, params.is_regression, n_classes)
        self.sorted_index = presorted.sorted_index
        self.sorted_value = presorted.sorted_value
        self.sorted_label = presorted.sorted_label
        self.label = presorted.label
        # classes left out of the sorted arrays are gathered per scan (see
        # kernels.split.label_row_of): one row per block of find_splits
        self.n_blocks = 8 * numba.get_num_threads()
        by_sample = self.label.shape[0] and not self.sorted_label.shape[1]
        self.label_scratch = np.empty(
            (self.n_blocks, self.sorted_index.shape[1] if by_sample else 0),
            dtype=self.sorted_label.dtype)
        n_samples = target.shape[0]  # all of X's, or a forest tree's bag (see subset)
        n_rows = self.sorted_index.shape[1]
        self.target = target
        self.sample_weight = sample_weight
        self.weighted = not bool(np.all(sample_weight == 1.0))
        self.goes_left = np.zeros(n_samples, dtype=np.uint8)
        self.goes_left_bits = np.zeros((n_samples + 63) // 64, dtype=np.uint64)
        self.child_slot = np.zeros(n_samples, dtype=np.int32)
        self.total_weight = float(sample_weight.sum())
        self.nodes = nodes = _Nodes(n_stats)
        if params.feature_kind is None:
            self.feature_kind = np.zeros(n_features, dtype=np.int8)
            self.n_categories = np.zeros(n_features, dtype=np.int32)
        else:
            self.feature_kind = np.asarray(params.feature_kind, dtype=np.int8)
            self.n_categories = np.asarray(params.n_categories, dtype=np.int32)
        self.feature_categorical = (self.feature_kind == FEATURE_CATEGORICAL).astype(np.uint8)
        self.multiway = params.categorical_mode == MULTIWAY

        root_stats = np.zeros((1, n_stats))
        if params.is_regression:
            root_stats[0, 0] = np.dot(sample_weight, target)
            root_stats[0, 1] = np.dot(sample_weight * target, target)
        else:
            root_stats[0] = np.bincount(presorted.label, weights=sample_weight,
                                        minlength=n_stats)
        root_weight = np.array([self.total_weight])
        nodes.add(root_stats, root_weight, n_rows, self._impurities(root_stats, root_weight), 0)
        root = (np.array([0]), np.array([0]), np.array([n_rows]))
        if params.max_leaf_nodes:
            self._grow_best_first(*root)
        else:
            self._grow_depth_wise(*root)
        del self.sorted_index, self.sorted_value, self.sorted_label, self.label
        del self.label_scratch, self.goes_left, self.goes_left_bits, self.child_slot
        return nodes.to_tree(n_features, n_classes, params.is_regression, self.n_categories,
                             self.feature_kind)

    # -- node tests --------------------------------------------------------------------------
    def _impurities(self, stats, weights):
        out = np.empty(stats.shape[0])
        criteria.node_impurities(self.params.criterion, stats, weights, out)
        return out

    def _splittable(self, ids):
        """Pre-pruning: which of the nodes ``ids`` may be split at all."""
        p = self.params
        nodes = self.nodes
        n = nodes.n_samples[ids]
        weight = nodes.weight[ids]
        impurity = nodes.impurity[ids]
        ok = ((nodes.depth[ids] < p.max_depth) & (n >= p.min_samples_split)
              & (n >= 2 * p.min_samples_leaf) & (weight >= 2.0 * p.min_weight_leaf)
              & (impurity > max(p.impurity_threshold, EPSILON)))
        if not p.is_regression:
            purity = nodes.stats[ids].max(axis=1) / weight
            ok &= purity < p.purity_threshold
        return ok

    # -- split search ------------------------------------------------------------------------
    def _best_splits(self, ids, start, end):
        """Best split of each node: (feature, pos, threshold, missing); feature -1 if none.
        ``missing``: see :func:`jitree.kernels.split.find_splits`."""
        p = self.params
        m = ids.shape[0]
        n_features = self.sorted_index.shape[0]
        if p.max_features < n_features:
            chosen = np.zeros((m, p.max_features), dtype=np.int64)
            count = np.zeros(m, dtype=np.int64)
            select_features(np.uint64(p.seed), ids, start, end, self.sorted_value,
                            p.max_features, chosen, count)
            pair_node = np.repeat(np.arange(m), count)
            pair_feature = chosen[np.arange(p.max_features)[None, :] < count[:, None]]
        else:
            pair_node = np.repeat(np.arange(m), n_features)
            pair_feature = np.tile(np.arange(n_features), m)
        n_pairs = pair_node.shape[0]
        if n_pairs == 0:
            return np.full(m, -1), np.zeros(m, np.int64), np.zeros(m), np.zeros(m, np.int64)
        score = np.empty(n_pairs)
        pos = np.empty(n_pairs, dtype=np.int64)
        threshold = np.empty(n_pairs)
        missing = np.empty(n_pairs, dtype=np.int64)
        stats = self.nodes.stats[ids]
        weight = self.nodes.weight[ids]
        n_blocks = self.n_blocks
        categorical = self.feature_categorical[pair_feature].astype(bool)
        numeric_pairs = np.flatnonzero(~categorical) if categorical.any() else None
        if numeric_pairs is None or numeric_pairs.shape[0]:
            pairs = slice(None) if numeric_pairs is None else numeric_pairs
            node_of_pair, feature_of_pair = pair_node[pairs], pair_feature[pairs]
            n_numeric = node_of_pair.shape[0]
            numeric = (np.empty(n_numeric), np.empty(n_numeric, dtype=np.int64),
                       np.empty(n_numeric), np.empty(n_numeric, dtype=np.int64))
            for first in range(0, n_numeric, _PAIRS_PER_CALL):
                chunk = slice(first, min(first + _PAIRS_PER_CALL, n_numeric))
                find_splits(p.criterion, p.random_splitter, np.uint64(p.seed),
                            self.sorted_index, self.sorted_value, self.sorted_label, self.label,
                            self.label_scratch, self.target, self.sample_weight,
                            self.weighted, p.is_regression, ids, start, end, stats, weight,
                            p.min_samples_leaf, p.min_weight_leaf, node_of_pair[chunk],
                            feature_of_pair[chunk], n_blocks,
                            *(out[chunk] for out in numeric))
            score[pairs], pos[pairs], threshold[pairs], missing[pairs] = numeric
        if numeric_pairs is not None:
            # the category search is a kernel of its own: numeric fits never compile it
            pairs = np.flatnonzero(categorical)
            n_categorical = pairs.shape[0]
            found = (np.empty(n_categorical), np.empty(n_categorical, dtype=np.int64),
                     np.empty(n_categorical, dtype=np.int64))
            find_category_splits(p.criterion, self.sorted_index, self.sorted_value,
                                 self.sorted_label, self.label, self.label_scratch, self.target,
                                 self.sample_weight, self.weighted, p.is_regression, start,
                                 end, stats, weight, p.min_samples_leaf, p.min_weight_leaf,
                                 pair_node[pairs], pair_feature[pairs], p.categorical_mode,
                                 p.max_exhaustive_categories, p.max_subset_size, n_blocks,
                                 *found)
            score[pairs], pos[pairs], missing[pairs] = found
            threshold[pairs] = 0.0
        best = np.empty(m, dtype=np.int64)
        best_pair_per_node(pair_node, score, pos, best)
        found = best >= 0
        pick = np.where(found, best, 0)
        return (np.where(found, pair_feature[pick], -1), pos[pick], threshold[pick],
                missing[pick])

    def _candidates(self, ids, start, end):
        """Find, for the open nodes ``ids``, the best split of each one that may be split and
        mark its samples; returns the accepted :class:`_Candidates` (children's statistics
        included)."""
        p = self.params
        keep = self._splittable(ids)
        ids, start, end = ids[keep], start[keep], end[keep]
        feature, pos, threshold, missing = self._best_splits(ids, start, end)
        if ids.shape[0]:
            found = feature >= 0
            ids, start, end = ids[found], start[found], end[found]
            feature, pos, threshold = feature[found], pos[found], threshold[found]
            missing = missing[found]
        k = ids.shape[0]
        categorical = self.feature_categorical[feature].astype(bool) if k else \
            np.zeros(0, dtype=bool)
        multiway = categorical & self.multiway
        # children per split: q categories for multiway (pos holds q), else 2
        n_children = np.where(multiway, pos, 2).astype(np.int64)
        child_offset = np.zeros(k + 1, dtype=np.int64)
        np.cumsum(n_children, out=child_offset[1:])
        # where the missing samples of each split go, as a child slot
        if k:
            missing_slot = np.where(missing == MISSING_LEFT, 0, 1)
            missing_slot = np.where(multiway, missing, missing_slot).astype(np.int64)
        else:
            missing_slot = np.zeros(0, dtype=np.int64)
        # categorical splits: code and child slot of each category present at the node
        detail_offset = np.zeros(k + 1, dtype=np.int64)
        detail_size = np.where(categorical, end - start, 0)
        if categorical.any():
            detail_size = np.minimum(detail_size, self.n_categories[feature])
        np.cumsum(detail_size, out=detail_offset[1:])
        detail_code = np.full(detail_offset[-1], -1, dtype=np.int64)  # -1: past the last
        detail_slot = np.zeros(detail_offset[-1], dtype=np.int64)
        n_stats = self.nodes.n_stats
        total_children = int(child_offset[-1])
        child_stats = np.empty((total_children, n_stats))
        child_weight = np.empty(total_children)
        child_count = np.empty(total_children, dtype=np.int64)
        improvement = np.empty(k)
        if k:
            if categorical.any():
                chosen = np.flatnonzero(categorical)
                offsets = np.zeros(chosen.shape[0] + 1, dtype=np.int64)
                offsets[1:] = detail_offset[chosen + 1]
                offsets[0] = detail_offset[chosen[0]]
                categorical_details(
                    p.criterion, self.sorted_index, self.sorted_value, self.sorted_label,
                    self.label, self.label_scratch, self.target, self.sample_weight,
                    self.weighted, p.is_regression, start[chosen], end[chosen],
                    self.nodes.stats[ids[chosen]],
                    self.nodes.weight[ids[chosen]], feature[chosen], p.categorical_mode,
                    p.min_samples_leaf, p.min_weight_leaf, p.max_exhaustive_categories,
                    p.max_subset_size, offsets - offsets[0], detail_code[offsets[0]:],
                    detail_slot[offsets[0]:])
            mark_and_count(self.sorted_index, self.sorted_value, self.sorted_label, self.label,
                           self.label_scratch, self.target, self.sample_weight,
                           self.weighted, p.is_regression, start, end, feature, pos,
                           categorical.astype(np.uint8),
                           missing_slot, detail_offset, detail_slot, child_offset,
                           self.child_slot, self.goes_left, child_stats, child_weight,
                           child_count)
            child_impurity = self._impurities(child_stats, child_weight)
            binary = ~multiway
            if binary.all():
                impurity_decreases(p.criterion, self.nodes.stats[ids], self.nodes.weight[ids],
                                   child_stats[0::2], child_weight[0::2], child_stats[1::2],
                                   child_weight[1::2], self.total_weight, improvement)
            else:
                node_weight = self.nodes.weight[ids]
                decrease = self.nodes.impurity[ids].copy()
                owner = np.repeat(np.arange(k), n_children)
                np.subtract.at(decrease, owner,
                               child_weight / node_weight[owner] * child_impurity)
                improvement[:] = node_weight / self.total_weight * decrease
        else:
            child_impurity = np.empty(0)
        candidates = _Candidates(
            ids=ids, start=start, end=end, feature=feature, pos=pos, threshold=threshold,
            missing=missing, categorical=categorical, multiway=multiway,
            improvement=improvement, child_offset=child_offset, child_stats=child_stats,
            child_weight=child_weight, child_count=child_count,
            child_impurity=child_impurity, detail_offset=detail_offset,
            detail_code=detail_code, detail_slot=detail_slot)
        accept = improvement + EPSILON >= p.min_impurity_decrease
        return candidates.select(np.flatnonzero(accept))

    def _split(self, c):
        """Split the candidate nodes ``c`` (already marked); returns the (ids, start, end) of
        the children that may be split further, in order of parent then slot."""
        nodes = self.nodes
        ids, start, end = c.ids, c.start, c.end
        k = ids.shape[0]
        n_children = np.diff(c.child_offset)
        owner = np.repeat(np.arange(k), n_children)
        # children's segments: consecutive, in slot order, from the parent's start
        child_end = start[owner] + _segmented_cumsum(c.child_count, c.child_offset)
        child_start = child_end - c.child_count
        child_ids = nodes.add(c.child_stats, c.child_weight, c.child_count, c.child_impurity,
                              nodes.depth[ids][owner] + 1)
        first = child_ids[c.child_offset[:-1]]
        last = child_ids[c.child_offset[1:] - 1]
        nodes.feature[ids] = c.feature
        nodes.threshold[ids] = np.where(c.categorical, float(TREE_UNDEFINED), c.threshold)
        nodes.left[ids] = first
        nodes.right[ids] = last
        self._set_missing_and_categories(c, ids)
        # Only children that may be split need their segments partitioned: a parent whose
        # children are all leaves (pure, too small, too deep) is left as it is.
        open_child = self._splittable(child_ids)
        needed = np.zeros(k, dtype=bool)
        np.logical_or.at(needed, owner, open_child)
        # a multiway node with two children is partitioned like a binary one (goes_left is
        # its slot 0); child slots are written for wider nodes only
        wide = c.multiway & (n_children > 2)
        binary = needed & ~wide
        if binary.any():
            pack_bits(self.goes_left, self.goes_left_bits)
            # the split feature's own segment is already left | right unless categorical or
            # with its missing values sent left: -1 makes the kernel partition it too
            own_order = ~c.categorical & (c.missing != MISSING_LEFT)
            partition(self.sorted_index, self.sorted_value, self.sorted_label,
                      self.goes_left_bits, start[binary], end[binary],
                      np.where(own_order, c.feature, -1)[binary])
        multi = np.flatnonzero(needed & wide)
        if multi.shape[0]:
            counts = np.diff(c.child_offset)[multi]
            offsets = np.zeros(multi.shape[0] + 1, dtype=np.int64)
            np.cumsum(counts, out=offsets[1:])
            rows = _ranges(c.child_offset[multi], counts)
            partition_multiway(self.sorted_index, self.sorted_value, self.sorted_label,
                               self.child_slot, start[multi], end[multi], offsets,
                               c.child_count[rows])
        return child_ids[open_child], child_start[open_child], child_end[open_child]

    def _set_missing_and_categories(self, c, ids):
        """missing_left, split_kind and the category tables of the nodes just split."""
        nodes = self.nodes
        left_weight = c.child_weight[c.child_offset[:-1]]
        right_weight = c.child_weight[np.minimum(c.child_offset[:-1] + 1,
                                                 c.child_offset[1:] - 1)]
        heavier_left = left_weight >= right_weight
        learned = (c.missing == MISSING_LEFT) | (c.missing == MISSING_RIGHT)
        missing_left = np.where(learned & ~c.multiway, c.missing == MISSING_LEFT,
                                heavier_left)
        nodes.missing_left[ids] = np.where(c.multiway, 0, missing_left)
        nodes.split_kind[ids] = np.where(c.multiway, SPLIT_MULTIWAY,
                                         np.where(c.categorical, SPLIT_SUBSET, SPLIT_THRESHOLD))
        for j in np.flatnonzero(c.categorical):
            f = int(c.feature[j])
            m = int(self.n_categories[f])
            detail = slice(c.detail_offset[j], c.detail_offset[j + 1])
            children = slice(c.child_offset[j], c.child_offset[j + 1])
            present = c.detail_code[detail] >= 0
            codes = c.detail_code[detail][present]
            slots = c.detail_slot[detail][present]
            # categories absent from the node's samples go to the heaviest child
            heaviest = int(np.argmax(c.child_weight[children]))
            if c.multiway[j]:
                table = np.full(m + 1, heaviest, dtype=np.int32)
                table[codes] = slots
                if c.missing[j] >= 0:
                    table[m] = c.missing[j]
                nodes.add_category_table(ids[j], SPLIT_MULTIWAY, table)
            else:
                side = np.full(m, heaviest, dtype=np.int64)
                side[codes] = slots
                nodes.add_category_table(ids[j], SPLIT_SUBSET, category_bitset(side == 0))

    # -- growth orders -----------------------------------------------------------------------
    def _grow_depth_wise(self, ids, start, end):
        while ids.shape[0]:
            candidates = self._candidates(ids, start, end)
            if not candidates.ids.shape[0]:
                break
            ids, start, end = self._split(candidates)

    def _grow_best_first(self, ids, start, end):
        """Split the open node with the largest impurity decrease next (ties: lowest node id)
        until ``max_leaf_nodes`` leaves."""
        heap = []

        def push(ids, start, end):
            candidates = self._candidates(ids, start, end)
            for j in range(candidates.ids.shape[0]):
                one = candidates.select(np.array([j]))
                heapq.heappush(heap, (-float(one.improvement[0]), int(one.ids[0]), one))

        push(ids, start, end)
        n_leaves = 1
        while heap and n_leaves < self.params.max_leaf_nodes:
            _, _, candidate = heapq.heappop(heap)
            new_leaves = int(candidate.child_offset[1]) - 1
            if n_leaves + new_leaves > self.params.max_leaf_nodes:
                continue  # a multiway split with too many children for the budget
            children = self._split(candidate)
            n_leaves += new_leaves
            push(*children)


def category_bitset(in_set):
    """uint64 words of a boolean membership array: bit c of word c // 64 set when
    ``in_set[c]``."""
    m = in_set.shape[0]
    words = (m + 63) // 64
    padded = np.zeros(words * 64, dtype=bool)
    padded[:m] = in_set
    packed = np.packbits(padded, bitorder="little")
    return packed.view("<u8").astype(np.uint64)


def _ranges(starts, sizes):
    """Concatenation of ``arange(starts[j], starts[j] + sizes[j])`` over j."""
    sizes = np.asarray(sizes, dtype=np.int64)
    total = int(sizes.sum())
    first = np.zeros(sizes.shape[0], dtype=np.int64)
    np.cumsum(sizes[:-1], out=first[1:])
    return np.repeat(np.asarray(starts, dtype=np.int64) - first, sizes) + np.arange(total)


def _segmented_cumsum(values, offsets):
    """Cumulative sums of ``values`` restarting at each segment ``offsets[j]:offsets[j+1]``."""
    total = np.cumsum(values)
    before = np.concatenate(([0], total))[offsets[:-1]]
    return total - np.repeat(before, np.diff(offsets))


class _Candidates:
    """The accepted splits of a set of open nodes: per split arrays, plus the children (rows
    ``child_offset[j]:child_offset[j + 1]``) and categorical details (``detail_offset``)."""

    _PER_SPLIT = ("ids", "start", "end", "feature", "pos", "threshold", "missing",
                  "categorical", "multiway", "improvement")
    _PER_CHILD = ("child_stats", "child_weight", "child_count", "child_impurity")

    def __init__(self, **arrays):
        self.__dict__.update(arrays)

    def select(self, rows):
        """The candidates ``rows`` (indices, increasing), children and details re-based."""
        out = {name: getattr(self, name)[rows] for name in self._PER_SPLIT}
        for offsets_name, per_item in (("child_offset", self._PER_CHILD),
                                       ("detail_offset", ("detail_code", "detail_slot"))):
            offsets = getattr(self, offsets_name)
            sizes = offsets[rows + 1] - offsets[rows]
            new_offsets = np.zeros(rows.shape[0] + 1, dtype=np.int64)
            np.cumsum(sizes, out=new_offsets[1:])
            take = _ranges(offsets[rows], sizes)
            out[offsets_name] = new_offsets
            for name in per_item:
                out[name] = getattr(self, name)[take]
        return _Candidates(**out)
