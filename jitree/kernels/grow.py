"""Growing a tree from presorted features.

Every open node owns the same range ``start:end`` in each feature's sorted arrays. After a
node is split on feature ``f`` at position ``pos``, the samples ``sorted_index[f, start:pos]``
go left; every other feature's segment is partitioned stably so that its left samples occupy
``start:start + n_left`` and its right samples the rest, both still sorted. No node is ever
re-sorted: a level costs O(n_features * n_samples_in_level).
"""

import numpy as np
from numba import prange

from .split import add_sample
from ._jit import pjit


@pjit
def mark_and_count(sorted_index, target, sample_weight, is_regression, split_start,
                   split_end, split_feature, split_pos, goes_left, left_stats, right_stats,
                   left_weight, right_weight):
    """For each node to split: flag its samples going left and sum both children's statistics.

    Parallel over the nodes (their segments are disjoint).
    """
    for j in prange(split_start.shape[0]):
        index_row = sorted_index[split_feature[j]]
        pos = split_pos[j]
        left_stats[j, :] = 0.0
        right_stats[j, :] = 0.0
        weight_left = 0.0
        weight_right = 0.0
        for k in range(split_start[j], pos):
            i = index_row[k]
            goes_left[i] = 1
            add_sample(left_stats[j], is_regression, target[i], sample_weight[i])
            weight_left += sample_weight[i]
        for k in range(pos, split_end[j]):
            i = index_row[k]
            goes_left[i] = 0
            add_sample(right_stats[j], is_regression, target[i], sample_weight[i])
            weight_right += sample_weight[i]
        left_weight[j] = weight_left
        right_weight[j] = weight_right


@pjit
def partition(sorted_index, sorted_value, goes_left, split_start, split_end, split_feature,
              split_pos):
    """Stable partition of every feature's segment of every split node, parallel over features.

    Invariant after the call, for node j and every feature: positions
    ``split_start[j]:split_start[j] + n_left`` hold its left samples and the rest its right
    samples, each group in increasing feature value.
    """
    n_features = sorted_index.shape[0]
    n_split = split_start.shape[0]
    longest = 0
    for j in range(n_split):
        longest = max(longest, split_end[j] - split_start[j])
    for f in prange(n_features):
        index_row = sorted_index[f]
        value_row = sorted_value[f]
        spill_index = np.empty(longest, dtype=sorted_index.dtype)
        spill_value = np.empty(longest, dtype=sorted_value.dtype)
        for j in range(n_split):
            if split_feature[j] == f:
                continue  # already ordered left | right by the split itself
            write = split_start[j]
            n_right = 0
            for k in range(split_start[j], split_end[j]):
                i = index_row[k]
                if goes_left[i]:
                    index_row[write] = i
                    value_row[write] = value_row[k]
                    write += 1
                else:
                    spill_index[n_right] = i
                    spill_value[n_right] = value_row[k]
                    n_right += 1
            for r in range(n_right):
                index_row[write + r] = spill_index[r]
                value_row[write + r] = spill_value[r]
