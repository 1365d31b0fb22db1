"""Split search over presorted segments.

For feature ``f``, ``sorted_index[f, start:end]`` are the samples of a node in increasing
order of ``X[:, f]`` and ``sorted_value[f, start:end]`` their values. One left-to-right pass
accumulates the left statistics as prefix sums; a candidate split lies between two successive
distinct values, samples at positions ``start:pos`` go left and ``pos:end`` go right.

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
def add_sample(stats, is_regression, target, weight):
    """Add one sample of ``target`` (class index, or value) and ``weight`` to ``stats``."""
    if is_regression:
        weighted = weight * target
        stats[0] += weighted
        stats[1] += weighted * target
    else:
        stats[np.intp(target)] += weight


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
def scan_best(criterion, index_row, value_row, start, end, target, sample_weight,
              is_regression, node_stats, node_weight, parent_entropy,
              min_samples_leaf, min_weight_leaf, left, right, best_left):
    """Best threshold split of one node on one feature (exact search).

    Returns ``(score, pos, weight_left)``; ``pos == -1`` when no split satisfies the leaf
    constraints. On return ``best_left`` holds the left statistics of the best split;
    ``left``/``right`` are scratch.
    """
    best_score = -np.inf
    best_pos = -1
    best_weight_left = 0.0
    if end - start < 2 * min_samples_leaf:
        return best_score, best_pos, best_weight_left
    left[:] = 0.0
    right[:] = node_stats
    weight_left = 0.0
    last = end - min_samples_leaf  # the left side may not take more than this
    for k in range(start, last):
        i = index_row[k]
        w = sample_weight[i]
        t = target[i]
        if is_regression:
            weighted = w * t
            left[0] += weighted
            left[1] += weighted * t
            right[0] -= weighted
            right[1] -= weighted * t
        else:
            c = np.intp(t)
            left[c] += w
            right[c] -= w
        weight_left += w
        if value_row[k + 1] <= value_row[k]:
            continue
        if k + 1 - start < min_samples_leaf:
            continue
        weight_right = node_weight - weight_left
        if weight_left <= 0.0 or weight_right <= 0.0:
            continue
        if weight_left < min_weight_leaf or weight_right < min_weight_leaf:
            continue
        score = criteria.split_score(criterion, left, right, weight_left, weight_right,
                                     parent_entropy)
        if score > best_score:
            best_score = score
            best_pos = k + 1
            best_weight_left = weight_left
            best_left[:] = left
    return best_score, best_pos, best_weight_left


@jit
def scan_random(criterion, index_row, value_row, start, end, target, sample_weight,
                is_regression, node_stats, node_weight, parent_entropy,
                min_samples_leaf, min_weight_leaf, left, right, best_left, key):
    """One random threshold, uniform between the node's min and max value (Extra-Trees).

    Returns ``(score, pos, threshold, weight_left)`` with ``pos == -1`` when the feature is constant in the
    node or the draw breaks a leaf constraint.
    """
    low = np.float64(value_row[start])
    high = np.float64(value_row[end - 1])
    if not low < high:
        return -np.inf, -1, 0.0, 0.0
    threshold = low + uniform(key, 0) * (high - low)
    if threshold >= high:
        threshold = low
    best_left[:] = 0.0
    weight_left = 0.0
    pos = start
    while pos < end and value_row[pos] <= threshold:
        i = index_row[pos]
        w = sample_weight[i]
        add_sample(best_left, is_regression, target[i], w)
        weight_left += w
        pos += 1
    weight_right = node_weight - weight_left
    if (pos - start < min_samples_leaf or end - pos < min_samples_leaf
            or weight_left <= 0.0 or weight_right <= 0.0
            or weight_left < min_weight_leaf or weight_right < min_weight_leaf):
        return -np.inf, -1, threshold, weight_left
    for s in range(node_stats.shape[0]):
        right[s] = node_stats[s] - best_left[s]
    score = criteria.split_score(criterion, best_left, right, weight_left, weight_right,
                                 parent_entropy)
    return score, pos, threshold, weight_left


@pjit
def find_splits(criterion, random_splitter, seed, sorted_index, sorted_value, target,
                sample_weight, is_regression, node_id, node_start, node_end, node_stats,
                node_weight, total_weight, min_samples_leaf, min_weight_leaf,
                pair_node, pair_feature, out_score, out_pos, out_threshold, out_improvement):
    """Best split of every (node, feature) pair, in parallel over the pairs.

    Pair ``p`` asks for node ``pair_node[p]`` (a row of the ``node_*`` arrays) on feature
    ``pair_feature[p]``. Writes its score, position (-1: none), threshold and weighted impurity
    decrease ``W_node / W_total * (I - W_l/W_node I_l - W_r/W_node I_r)``.
    """
    n_stats = node_stats.shape[1]
    for p in prange(pair_node.shape[0]):
        j = pair_node[p]
        f = pair_feature[p]
        start = node_start[j]
        end = node_end[j]
        stats = node_stats[j]
        weight = node_weight[j]
        left = np.empty(n_stats)
        right = np.empty(n_stats)
        best_left = np.empty(n_stats)
        parent_entropy = 0.0
        if criterion == criteria.GAIN_RATIO:
            parent_entropy = criteria.entropy(stats, weight)
        index_row = sorted_index[f]
        value_row = sorted_value[f]
        if random_splitter:
            score, pos, threshold, weight_left = scan_random(
                criterion, index_row, value_row, start, end, target, sample_weight,
                is_regression, stats, weight, parent_entropy, min_samples_leaf,
                min_weight_leaf, left, right, best_left, stream_key(seed, node_id[j], f))
        else:
            score, pos, weight_left = scan_best(
                criterion, index_row, value_row, start, end, target, sample_weight,
                is_regression, stats, weight, parent_entropy, min_samples_leaf,
                min_weight_leaf, left, right, best_left)
            threshold = 0.0
            if pos > 0:
                threshold = midpoint(value_row[pos - 1], value_row[pos])
        out_score[p] = score
        out_pos[p] = pos
        out_threshold[p] = threshold
        out_improvement[p] = 0.0
        if pos > 0:
            weight_right = weight - weight_left
            for s in range(n_stats):
                right[s] = stats[s] - best_left[s]
            out_improvement[p] = weight / total_weight * criteria.impurity_decrease(
                criterion, stats, weight, best_left, weight_left, right, weight_right)


@jit
def best_pair_per_node(n_nodes, pair_node, pair_feature, pair_score, pair_pos, out_pair):
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
