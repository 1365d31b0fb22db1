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
from ..kernels.grow import impurity_decreases, mark_and_count, pack_bits, partition
from ..kernels.presort import fill_from_keys, fill_sorted, float32_keys, keep_samples
from ..kernels.select import select_features
from ..kernels.split import best_pair_per_node, find_splits
from .tree import TREE_LEAF, TREE_UNDEFINED, Tree

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

    def _reserve(self, extra):
        needed = self.count + extra
        capacity = self.feature.shape[0]
        if needed <= capacity:
            return
        capacity = max(needed, 2 * capacity)
        for name, fill in (("feature", TREE_UNDEFINED), ("threshold", float(TREE_UNDEFINED)),
                           ("left", TREE_LEAF), ("right", TREE_LEAF), ("stats", 0.0),
                           ("weight", 0.0), ("n_samples", 0), ("impurity", 0.0),
                           ("depth", 0)):
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

    def to_tree(self, n_features, n_classes, is_regression):
        m = self.count
        if is_regression:
            value = self.stats[:m, :1] / self.weight[:m, None]
        else:
            value = self.stats[:m]
        return Tree(n_features, n_classes, self.feature[:m], self.threshold[:m],
                    self.left[:m], self.right[:m], value, self.impurity[:m],
                    self.n_samples[:m], self.weight[:m])


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
            fill_sorted(column, np.argsort(column), label, f, sorted_index, sorted_value,
                        sorted_label)

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

    def subset(self, keep):
        """A copy holding only the samples with ``keep[i]`` true (still sorted)."""
        keep = np.ascontiguousarray(keep, dtype=np.uint8)
        n_features = self.sorted_index.shape[0]
        n_kept = int(np.count_nonzero(keep))
        index = np.empty((n_features, n_kept), dtype=self.sorted_index.dtype)
        value = np.empty((n_features, n_kept), dtype=self.sorted_value.dtype)
        with_labels = self.sorted_label.shape[1] == self.sorted_index.shape[1]
        label_rows = np.empty((n_features, n_kept) if with_labels else (1, 0),
                              dtype=self.sorted_label.dtype)
        keep_samples(self.sorted_index, self.sorted_value, self.sorted_label, keep, index,
                     value, label_rows)
        return Presorted(index, value, label_rows, self.label)


class TreeBuilder:
    """Grows one tree on (X, target, sample_weight).

    ``target`` is float64: the class index for classification (``n_stats`` classes), the value
    for regression (``n_stats == 2``). ``sample_weight`` is float64, non-negative, positive sum.
    """

    def __init__(self, params):
        self.params = params

    def build(self, X, target, sample_weight, n_stats, n_classes, presorted=None):
        """Grow the tree. ``presorted``: a :class:`Presorted` of X for this tree's samples
        (it is consumed: its arrays are partitioned in place); presorted here if None."""
        params = self.params
        n_features = X.shape[1]
        if presorted is None:
            presorted = Presorted.of(X, target, params.is_regression, n_classes)
        self.sorted_index = presorted.sorted_index
        self.sorted_value = presorted.sorted_value
        self.sorted_label = presorted.sorted_label
        n_samples = X.shape[0]
        n_rows = self.sorted_index.shape[1]  # samples in this tree (all, or a forest's bag)
        self.target = target
        self.sample_weight = sample_weight
        self.weighted = not bool(np.all(sample_weight == 1.0))
        self.goes_left = np.zeros(n_samples, dtype=np.uint8)
        self.goes_left_bits = np.zeros((n_samples + 63) // 64, dtype=np.uint64)
        self.total_weight = float(sample_weight.sum())
        self.nodes = nodes = _Nodes(n_stats)

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
        del self.sorted_index, self.sorted_value, self.sorted_label, self.goes_left
        del self.goes_left_bits
        return nodes.to_tree(n_features, n_classes, params.is_regression)

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
        """Best split of each node: (feature, pos, threshold); feature -1 if none."""
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
            return np.full(m, -1), np.zeros(m, np.int64), np.zeros(m)
        score = np.empty(n_pairs)
        pos = np.empty(n_pairs, dtype=np.int64)
        threshold = np.empty(n_pairs)
        stats = self.nodes.stats[ids]
        weight = self.nodes.weight[ids]
        for first in range(0, n_pairs, _PAIRS_PER_CALL):
            chunk = slice(first, min(first + _PAIRS_PER_CALL, n_pairs))
            find_splits(p.criterion, p.random_splitter, np.uint64(p.seed), self.sorted_index,
                        self.sorted_value, self.sorted_label, self.target, self.sample_weight,
                        self.weighted, p.is_regression, ids, start, end, stats, weight,
                        p.min_samples_leaf, p.min_weight_leaf, pair_node[chunk],
                        pair_feature[chunk], 8 * numba.get_num_threads(), score[chunk],
                        pos[chunk], threshold[chunk])
        best = np.empty(m, dtype=np.int64)
        best_pair_per_node(pair_node, score, pos, best)
        found = best >= 0
        pick = np.where(found, best, 0)
        return np.where(found, pair_feature[pick], -1), pos[pick], threshold[pick]

    def _candidates(self, ids, start, end):
        """Find, for the open nodes ``ids``, the best split of each one that may be split and
        mark its samples; returns the accepted candidates as a dict of arrays (children's
        statistics included)."""
        keep = self._splittable(ids)
        ids, start, end = ids[keep], start[keep], end[keep]
        feature, pos, threshold = self._best_splits(ids, start, end)
        if ids.shape[0]:
            found = feature >= 0
            ids, start, end = ids[found], start[found], end[found]
            feature, pos, threshold = feature[found], pos[found], threshold[found]
        k = ids.shape[0]
        n_stats = self.nodes.n_stats
        left_stats = np.empty((k, n_stats))
        right_stats = np.empty((k, n_stats))
        left_weight = np.empty(k)
        right_weight = np.empty(k)
        improvement = np.empty(k)
        if k:
            mark_and_count(self.sorted_index, self.sorted_label, self.target,
                           self.sample_weight, self.weighted, self.params.is_regression, start,
                           end, feature, pos, self.goes_left, left_stats, right_stats,
                           left_weight, right_weight)
            impurity_decreases(self.params.criterion, self.nodes.stats[ids],
                               self.nodes.weight[ids], left_stats, left_weight, right_stats,
                               right_weight, self.total_weight, improvement)
        accept = improvement + EPSILON >= self.params.min_impurity_decrease
        candidates = dict(ids=ids, start=start, end=end, feature=feature, pos=pos,
                          threshold=threshold, left_stats=left_stats, right_stats=right_stats,
                          left_weight=left_weight, right_weight=right_weight,
                          improvement=improvement)
        return {name: value[accept] for name, value in candidates.items()}

    def _split(self, c):
        """Split the candidate nodes ``c`` (already marked); returns the (ids, start, end) of
        the children that may be split further, left then right per parent."""
        nodes = self.nodes
        ids, start, end, pos = c["ids"], c["start"], c["end"], c["pos"]
        k = ids.shape[0]
        child_stats = np.empty((2 * k, nodes.n_stats))
        child_stats[0::2] = c["left_stats"]
        child_stats[1::2] = c["right_stats"]
        child_weight = np.empty(2 * k)
        child_weight[0::2] = c["left_weight"]
        child_weight[1::2] = c["right_weight"]
        child_start = np.empty(2 * k, dtype=np.int64)
        child_end = np.empty(2 * k, dtype=np.int64)
        child_start[0::2] = start
        child_end[0::2] = pos
        child_start[1::2] = pos
        child_end[1::2] = end
        child_ids = nodes.add(child_stats, child_weight, child_end - child_start,
                              self._impurities(child_stats, child_weight),
                              np.repeat(nodes.depth[ids] + 1, 2))
        nodes.feature[ids] = c["feature"]
        nodes.threshold[ids] = c["threshold"]
        nodes.left[ids] = child_ids[0::2]
        nodes.right[ids] = child_ids[1::2]
        # Only children that may be split need their segments partitioned: a parent whose two
        # children are both leaves (pure, too small, too deep) is left as it is.
        open_child = self._splittable(child_ids)
        needed = open_child[0::2] | open_child[1::2]
        if needed.any():
            pack_bits(self.goes_left, self.goes_left_bits)
            partition(self.sorted_index, self.sorted_value, self.sorted_label,
                      self.goes_left_bits, start[needed], end[needed], c["feature"][needed])
        return child_ids[open_child], child_start[open_child], child_end[open_child]

    # -- growth orders -----------------------------------------------------------------------
    def _grow_depth_wise(self, ids, start, end):
        while ids.shape[0]:
            candidates = self._candidates(ids, start, end)
            if not candidates["ids"].shape[0]:
                break
            ids, start, end = self._split(candidates)

    def _grow_best_first(self, ids, start, end):
        """Split the open node with the largest impurity decrease next (ties: lowest node id)
        until ``max_leaf_nodes`` leaves."""
        heap = []

        def push(ids, start, end):
            candidates = self._candidates(ids, start, end)
            for j in range(candidates["ids"].shape[0]):
                one = {name: value[j:j + 1] for name, value in candidates.items()}
                heapq.heappush(heap, (-float(one["improvement"][0]), int(one["ids"][0]),
                                      one))

        push(ids, start, end)
        n_leaves = 1
        while heap and n_leaves < self.params.max_leaf_nodes:
            _, _, candidate = heapq.heappop(heap)
            children = self._split(candidate)
            n_leaves += 1
            push(*children)
