"""Split search over presorted segments.

For feature ``f``, ``sorted_index[f, start:end]`` are the samples of a node in increasing
order of ``X[:, f]``, ``sorted_value[f, start:end]`` their values and (classification)
``sorted_label[f, start:end]`` their classes, so a scan reads memory sequentially. One
left-to-right pass accumulates the left statistics as prefix sums; a candidate split lies
between two successive distinct values: samples at positions ``start:pos`` go left, ``pos:end``
go right.

Ties between equal scores: positions are visited left to right and a candidate replaces the
best only if strictly better, so the lowest threshold wins; features are compared in
increasing index order by :func:`best_pair_per_node`, so the lowest feature index wins.
"""

import numpy as np
from numba import prange

from . import criteria
from ._jit import jit, pjit
from .random import stream_key, uniform


@jit
def midpoint(low, high):
    """Threshold between two successive distinct values: ``low <= t < high``."""
    low = np.float64(low)
    high = np.float64(high)
    threshold = low / 2.0 + high / 2.0
    if threshold >= high or not np.isfinite(threshold):
        threshold = low
    return threshold


@jit
def scan_classification(criterion, label_row, value_row, index_row, start, end,
                        sample_weight, weighted, node_stats, node_weight, parent_entropy,
                        min_samples_leaf, min_weight_leaf, left, right):
    """Best threshold of one node on one feature, classification. Returns (score, pos);
    pos == -1 when no split satisfies the leaf constraints.

    Gini keeps sum_c l_c**2 and sum_c r_c**2 up to date in O(1) per sample
    ((l + w)**2 - l**2 = w (2 l + w)), so its score costs two divisions whatever the number of
    classes; the other criteria call :func:`criteria.split_score`.
    """
    best_score = -np.inf
    best_pos = -1
    if end - start < 2 * min_samples_leaf:
        return best_score, best_pos
    left[:] = 0.0
    right_sq = 0.0
    for c in range(node_stats.shape[0]):
        right[c] = node_stats[c]
        right_sq += node_stats[c] * node_stats[c]
    left_sq = 0.0
    weight_left = 0.0
    w = 1.0
    first_candidate = start + min_samples_leaf - 1
    for k in range(start, end - min_samples_leaf):
        c = label_row[k]
        if weighted:
            w = sample_weight[index_row[k]]
        count_left = left[c]
        count_right = right[c]
        left_sq += w * (2.0 * count_left + w)
        right_sq += w * (w - 2.0 * count_right)
        left[c] = count_left + w
        right[c] = count_right - w
        weight_left += w
        if k < first_candidate or value_row[k + 1] <= value_row[k]:
            continue
        weight_right = node_weight - weight_left
        if weight_left <= 0.0 or weight_right <= 0.0:
            continue
        if weight_left < min_weight_leaf or weight_right < min_weight_leaf:
            continue
        if criterion == criteria.GINI:
            # = left_sq / weight_left + right_sq / weight_right, with one division
            score = ((left_sq * weight_right + right_sq * weight_left)
                     / (weight_left * weight_right))
        else:
            score = criteria.split_score(criterion, left, right, weight_left, weight_right,
                                         parent_entropy)
        if score > best_score:
            best_score = score
            best_pos = k + 1
    return best_score, best_pos


@jit
def scan_regression(value_row, index_row, start, end, target, sample_weight, weighted,
                    node_stats, node_weight, min_samples_leaf, min_weight_leaf):
    """Best threshold of one node on one feature for squared error (maximises
    S_l**2 / W_l + S_r**2 / W_r, S = sum of w y). Returns (score, pos)."""
    best_score = -np.inf
    best_pos = -1
    if end - start < 2 * min_samples_leaf:
        return best_score, best_pos
    sum_left = 0.0
    sum_total = node_stats[0]
    weight_left = 0.0
    w = 1.0
    first_candidate = start + min_samples_leaf - 1
    for k in range(start, end - min_samples_leaf):
        i = index_row[k]
        if weighted:
            w = sample_weight[i]
        sum_left += w * target[i]
        weight_left += w
        if k < first_candidate or value_row[k + 1] <= value_row[k]:
            continue
        weight_right = node_weight - weight_left
        if weight_left <= 0.0 or weight_right <= 0.0:
            continue
        if weight_left < min_weight_leaf or weight_right < min_weight_leaf:
            continue
        sum_right = sum_total - sum_left
        score = sum_left * sum_left / weight_left + sum_right * sum_right / weight_right
        if score > best_score:
            best_score = score
            best_pos = k + 1
    return best_score, best_pos


@jit
def scan_random(criterion, is_regression, label_row, value_row, index_row, start, end,
                target, sample_weight, weighted, node_stats, node_weight, parent_entropy,
                min_samples_leaf, min_weight_leaf, left, right, key):
    """One random threshold, uniform between the node's min and max value (Extra-Trees).

    Returns ``(score, pos, threshold)`` with ``pos == -1`` when the feature is constant in the
    node or the draw breaks a leaf constraint.
    """
    low = np.float64(value_row[start])
    high = np.float64(value_row[end - 1])
    if not low < high:
        return -np.inf, -1, 0.0
    threshold = low + uniform(key, 0) * (high - low)
    if threshold >= high:
        threshold = low
    left[:] = 0.0
    weight_left = 0.0
    w = 1.0
    pos = start
    while pos < end and value_row[pos] <= threshold:
        i = index_row[pos]
        if weighted:
            w = sample_weight[i]
        if is_regression:
            left[0] += w * target[i]
        else:
            left[label_row[pos]] += w
        weight_left += w
        pos += 1
    weight_right = node_weight - weight_left
    if (pos - start < min_samples_leaf or end - pos < min_samples_leaf
            or weight_left <= 0.0 or weight_right <= 0.0
            or weight_left < min_weight_leaf or weight_right < min_weight_leaf):
        return -np.inf, -1, threshold
    for s in range(node_stats.shape[0]):
        right[s] = node_stats[s] - left[s]
    if is_regression:
        score = left[0] * left[0] / weight_left + right[0] * right[0] / weight_right
    else:
        score = criteria.split_score(criterion, left, right, weight_left, weight_right,
                                     parent_entropy)
    return score, pos, threshold


@pjit
def find_splits(criterion, random_splitter, seed, sorted_index, sorted_value, sorted_label,
                target, sample_weight, weighted, is_regression, node_id, node_start, node_end,
                node_stats, node_weight, min_samples_leaf, min_weight_leaf, pair_node,
                pair_feature, n_blocks, out_score, out_pos, out_threshold):
    """Best split of every (node, feature) pair, in parallel over blocks of pairs.

    Pair ``p`` asks for node ``pair_node[p]`` (a row of the ``node_*`` arrays) on feature
    ``pair_feature[p]``; writes its score, position (-1: none) and threshold. The pairs are
    cut into ``n_blocks`` blocks (a few per thread); each block allocates its scratch once.
    """
    n_stats = node_stats.shape[1]
    n_pairs = pair_node.shape[0]
    n_blocks = max(1, min(n_pairs, n_blocks))
    for block in prange(n_blocks):
        left = np.empty(n_stats)
        right = np.empty(n_stats)
        for p in range(block * n_pairs // n_blocks, (block + 1) * n_pairs // n_blocks):
            j = pair_node[p]
            f = pair_feature[p]
            start = node_start[j]
            end = node_end[j]
            stats = node_stats[j]
            weight = node_weight[j]
            parent_entropy = 0.0
            if criterion == criteria.GAIN_RATIO:
                parent_entropy = criteria.entropy(stats, weight)
            index_row = sorted_index[f]
            value_row = sorted_value[f]
            label_row = sorted_label[f] if not is_regression else sorted_label[0]
            threshold = 0.0
            if random_splitter:
                score, pos, threshold = scan_random(
                    criterion, is_regression, label_row, value_row, index_row, start, end,
                    target, sample_weight, weighted, stats, weight, parent_entropy,
                    min_samples_leaf, min_weight_leaf, left, right,
                    stream_key(seed, node_id[j], f))
            elif is_regression:
                score, pos = scan_regression(value_row, index_row, start, end, target,
                                             sample_weight, weighted, stats, weight,
                                             min_samples_leaf, min_weight_leaf)
            else:
                score, pos = scan_classification(
                    criterion, label_row, value_row, index_row, start, end, sample_weight,
                    weighted, stats, weight, parent_entropy, min_samples_leaf,
                    min_weight_leaf, left, right)
            if pos > 0 and not random_splitter:
                threshold = midpoint(value_row[pos - 1], value_row[pos])
            out_score[p] = score
            out_pos[p] = pos
            out_threshold[p] = threshold


@jit
def best_pair_per_node(pair_node, pair_score, pair_pos, out_pair):
    """out_pair[j]: the pair with the highest score of node j (-1: no valid split).

    Pairs come grouped by node in increasing feature order; a later pair replaces the best only
    if strictly better, so the lowest feature index wins a tie.
    """
    out_pair[:] = -1
    for p in range(pair_node.shape[0]):
        if pair_pos[p] < 0:
            continue
        j = pair_node[p]
        best = out_pair[j]
        if best < 0 or pair_score[p] > pair_score[best]:
            out_pair[j] = p
    return out_pair
