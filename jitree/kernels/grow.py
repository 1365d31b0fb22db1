"""Growing a tree from presorted features.

Every open node owns the same range ``start:end`` in each feature's sorted arrays. After a
node is split on feature ``f`` at position ``pos``, the samples ``sorted_index[f, start:pos]``
go left; every other feature's segment is partitioned stably so that its left samples occupy
``start:start + n_left`` and its right samples the rest, both still sorted. No node is ever
re-sorted: a level costs O(n_features * n_samples_in_level).
"""

import numpy as np
from numba import prange

from . import criteria
from ._jit import jit, pjit


@jit
def _mark_side(index_row, label_row, target, sample_weight, weighted, is_regression, first,
               last, side_flag, goes_left, stats):
    """Flag samples first:last of a sorted segment with ``side_flag`` and add them to
    ``stats``; returns their total weight."""
    total = 0.0
    w = 1.0
    for k in range(first, last):
        i = index_row[k]
        goes_left[i] = side_flag
        if weighted:
            w = sample_weight[i]
        if is_regression:
            stats[0] += w * target[i]
            stats[1] += w * target[i] * target[i]
        else:
            stats[label_row[k]] += w
        total += w
    return total


@pjit
def mark_and_count(sorted_index, sorted_label, target, sample_weight, weighted, is_regression,
                   split_start, split_end, split_feature, split_pos, goes_left, left_stats,
                   right_stats, left_weight, right_weight):
    """For each node to split: flag its samples going left and sum both children's statistics
    (class weights, or sum of w y and of w y**2). Parallel over the nodes (disjoint segments).
    """
    for j in prange(split_start.shape[0]):
        f = split_feature[j]
        index_row = sorted_index[f]
        label_row = sorted_label[0] if is_regression else sorted_label[f]
        left_stats[j, :] = 0.0
        right_stats[j, :] = 0.0
        left_weight[j] = _mark_side(index_row, label_row, target, sample_weight, weighted,
                                    is_regression, split_start[j], split_pos[j], 1, goes_left,
                                    left_stats[j])
        right_weight[j] = _mark_side(index_row, label_row, target, sample_weight, weighted,
                                     is_regression, split_pos[j], split_end[j], 0, goes_left,
                                     right_stats[j])


@jit
def impurity_decreases(criterion, stats, weight, left_stats, left_weight, right_stats,
                       right_weight, total_weight, out):
    """out[j] = W_j / W_total * (I_j - W_l/W_j I_l - W_r/W_j I_r), the weighted impurity
    decrease of node j's split (what ``min_impurity_decrease`` bounds)."""
    for j in range(stats.shape[0]):
        out[j] = weight[j] / total_weight * criteria.impurity_decrease(
            criterion, stats[j], weight[j], left_stats[j], left_weight[j], right_stats[j],
            right_weight[j])


@pjit
def pack_bits(flags, bits):
    """bits[w] bit b = flags[64 w + b]: the side flags as a bitset (n / 8 bytes), which stays
    in cache when :func:`partition` looks samples up in random order."""
    n = flags.shape[0]
    for w in prange(bits.shape[0]):
        word = np.uint64(0)
        first = w * 64
        for b in range(min(64, n - first)):
            word |= np.uint64(flags[first + b]) << np.uint64(b)
        bits[w] = word


@pjit
def partition(sorted_index, sorted_value, sorted_label, goes_left_bits, split_start,
              split_end, split_feature):
    """Stable partition of every feature's segment of every split node, parallel over features.

    Invariant after the call, for node j and every feature: positions
    ``split_start[j]:split_start[j] + n_left`` hold its left samples and the rest its right
    samples, each group in increasing feature value. Labels move with their samples.
    """
    n_features = sorted_index.shape[0]
    n_split = split_start.shape[0]
    with_labels = sorted_label.shape[1] == sorted_index.shape[1]
    longest = 0
    for j in range(n_split):
        longest = max(longest, split_end[j] - split_start[j])
    for f in prange(n_features):
        index_row = sorted_index[f]
        value_row = sorted_value[f]
        label_row = sorted_label[f] if with_labels else sorted_label[0]
        spill_index = np.empty(longest + 1, dtype=sorted_index.dtype)
        spill_value = np.empty(longest + 1, dtype=sorted_value.dtype)
        spill_label = np.empty(longest + 1 if with_labels else 0, dtype=sorted_label.dtype)
        for j in range(n_split):
            if split_feature[j] == f:
                continue  # already ordered left | right by the split itself
            write = split_start[j]
            n_right = 0
            # branch-free: every sample is written to both destinations and only the pointer of
            # its side advances (a data-dependent branch here mispredicts half the time)
            for k in range(split_start[j], split_end[j]):
                i = index_row[k]
                value = value_row[k]
                to_left = np.intp((goes_left_bits[i >> 6] >> np.uint64(i & 63))
                                  & np.uint64(1))
                index_row[write] = i
                value_row[write] = value
                spill_index[n_right] = i
                spill_value[n_right] = value
                if with_labels:
                    label = label_row[k]
                    label_row[write] = label
                    spill_label[n_right] = label
                write += to_left
                n_right += 1 - to_left
            for r in range(n_right):
                index_row[write + r] = spill_index[r]
                value_row[write + r] = spill_value[r]
                if with_labels:
                    label_row[write + r] = spill_label[r]
