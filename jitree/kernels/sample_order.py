"""The random splitter's growth in sample order (Extra-Trees).

A random threshold needs, at each node and drawn feature, only the node's smallest and
largest non-missing value and the statistics of the samples at or below the draw: no sorted
order. This path keeps one list of the tree's samples grouped by node
(:class:`~jitree.kernels.records.SampleOrder`: each node's samples a segment, in increasing
sample index) and reads X (C-contiguous, as given) at the node's samples. A level
partitions that one list, where the presorted path (:func:`jitree.kernels.grow.partition`)
moves every feature's sorted segment. A sample's values share its cache lines, so the
features a node draws after the first are read from rows that are already in cache.

Per searched (node, feature) pair: one pass for the node's range on the feature
(:func:`column_range`; the feature draw of :func:`select_by_range` makes it and the search
reuses it), the threshold drawn from the same stream as the presorted path's
(:func:`jitree.kernels.split.cut_between`), one pass that gathers the samples at or below it
and the missing ones (:func:`gather_sides`), and their statistics
(:func:`jitree.kernels.criteria.accumulate`).

The trees are the presorted path's: the same features drawn (the same permutation walk, a
feature "varies" on the same test), the same thresholds, the same samples on each side. Only
the order in which a side's statistics are added differs (here by sample index, there by the
feature's value): for class counts of integer weights the sums are exact either way;
regression sums and non-integer weights may differ in their last bits.
"""

import numpy as np
from numba import prange

from . import criteria
from ._jit import borrowing, jit, pjit
from .categorical import MISSING_LEFT, MISSING_RIGHT, NO_MISSING, two_way_score
from .random import stream_key
from .records import Limits, Side
from .select import walk_step
from .split import ALL_VALUES, cut_between, missing_only_score, range_stats, with_measure


@jit(inline="always")
def column_range(X, f, samples, start, end):
    """(smallest, largest, number) of the non-missing values of ``X[:, f]`` at the samples
    ``samples[start:end]``; (inf, -inf, 0) when all are missing."""
    low = np.inf
    high = -np.inf
    count = 0
    for k in range(np.uint64(start), np.uint64(end)):  # unsigned: no wraparound fix-ups
        x = np.float64(X[np.uint64(samples[k]), f])
        # NaN fails both tests and the count's
        low = x if x < low else low
        high = x if x > high else high
        count += x == x
    return low, high, count


@jit(inline="always")
def varies(low, high, count, n):
    """Whether a node of ``n`` samples whose feature has ``count`` non-missing values in
    ``[low, high]`` can be split on it: two distinct values, or a missing and a non-missing
    one (the test of :func:`jitree.kernels.select.select_features`)."""
    return (count >= 2 and low < high) or (count > 0 and count < n)


@pjit
def select_by_range(seed, node_id, node_start, node_end, X, samples, max_features,
                    allowed, n_blocks, out_features, out_count, out_low, out_high,
                    out_present):
    """:func:`jitree.kernels.select.select_features` in sample order: the same walk over the
    features, each visited feature's range measured (:func:`column_range`) to tell whether it
    varies. Writes the chosen features of node j in increasing order to
    ``out_features[j, :out_count[j]]`` with their ranges (``out_low``, ``out_high``: smallest
    and largest non-missing value; ``out_present``: their number), parallel over blocks of
    nodes."""
    m = node_id.shape[0]
    n_blocks = max(1, min(m, n_blocks))
    for block in prange(n_blocks):
        order = np.empty(X.shape[1], dtype=np.int64)
        select_block(seed, node_id, node_start, node_end, X, samples, max_features,
                     allowed, block * m // n_blocks, (block + 1) * m // n_blocks, order,
                     out_features, out_count, out_low, out_high, out_present)


@borrowing
def select_block(seed, node_id, node_start, node_end, X, samples, max_features, allowed,
                 first, last, order, out_features, out_count, out_low, out_high, out_present):
    """The nodes ``first:last`` of :func:`select_by_range` (``order``: scratch of one entry
    per feature). Compiled without reference counting (see :func:`search_block`)."""
    n_features = X.shape[1]
    for j in range(first, last):
        key = stream_key(seed, node_id[j], -1)
        for f in range(n_features):
            order[f] = f
        start = node_start[j]
        end = node_end[j]
        count = 0
        for step in range(n_features):
            f = walk_step(key, step, order, allowed, j)
            if f < 0:
                continue
            low, high, present = column_range(X, f, samples, start, end)
            if varies(low, high, present, end - start):
                # insertion in increasing feature order (the lowest-index tie rule)
                t = count
                while t > 0 and out_features[j, t - 1] > f:
                    out_features[j, t] = out_features[j, t - 1]
                    out_low[j, t] = out_low[j, t - 1]
                    out_high[j, t] = out_high[j, t - 1]
                    out_present[j, t] = out_present[j, t - 1]
                    t -= 1
                out_features[j, t] = f
                out_low[j, t] = low
                out_high[j, t] = high
                out_present[j, t] = present
                count += 1
                if count == max_features:
                    break
        out_count[j] = count


@jit(inline="always")
def gather_sides(X, f, samples, label, start, end, threshold, n_missing, index_out,
                 label_out):
    """The samples of ``samples[start:end]`` at or below ``threshold`` on ``X[:, f]``, in
    order, into ``index_out[start:start + n_left]`` (their classes, when ``label`` has any,
    into ``label_out``), and the ``n_missing`` missing ones into the last ``n_missing``
    positions of ``start:end``. Returns ``n_left``."""
    with_labels = label.shape[0] > 0
    write = np.uint64(start)
    if n_missing == 0:
        # branch-free: every sample is written, and the pointer advances for the left ones
        for k in range(np.uint64(start), np.uint64(end)):
            i = np.uint64(samples[k])
            index_out[write] = i
            if with_labels:
                label_out[write] = label[i]
            write += np.uint64(X[i, f] <= threshold)
        return np.int64(write) - start
    gap = np.uint64(end - n_missing)
    for k in range(np.uint64(start), np.uint64(end)):
        i = np.uint64(samples[k])
        x = X[i, f]
        if x <= threshold:
            index_out[write] = i
            if with_labels:
                label_out[write] = label[i]
            write += np.uint64(1)
        elif x != x:
            index_out[gap] = i
            if with_labels:
                label_out[gap] = label[i]
            gap += np.uint64(1)
    return np.int64(write) - start


@pjit
def find_sample_splits(data, order, settings, measure, nodes, pair_node, pair_feature,
                       pair_low, pair_high, pair_present, out):
    """The random splitter's search in sample order: each pair's one threshold, drawn from
    the stream of (seed, node id, feature) between the node's smallest and largest value on
    the feature (``pair_present[p]`` -1: measured here, else the range given), scored with
    its missing samples on the better side, into the :class:`PairResults` ``out`` (``pos``:
    the node's start plus its non-missing samples going left, -1: no split). The results
    are those of :func:`jitree.kernels.split.find_random_splits` on the presorted
    arrays."""
    index_scratch = order.index_scratch
    label_scratch = order.label_scratch
    n_stats = nodes.stats.shape[1]
    n_pairs = pair_node.shape[0]
    n_blocks = max(1, min(n_pairs, index_scratch.shape[0]))
    for block in prange(n_blocks):
        left = np.empty(n_stats)
        right = np.empty(n_stats)
        missing = np.zeros(n_stats)
        search_block(data, order, with_measure(settings, measure), nodes, pair_node,
                     pair_feature, pair_low, pair_high, pair_present, out,
                     block * n_pairs // n_blocks, (block + 1) * n_pairs // n_blocks,
                     (left, right, missing), index_scratch[block], label_scratch[block])


@borrowing
def search_block(data, order, settings, nodes, pair_node, pair_feature, pair_low, pair_high,
                 pair_present, out, first, last, sides, index_out, label_out):
    """The pairs ``first:last`` of :func:`find_sample_splits` (``sides``: left, right and
    missing statistics scratch; ``index_out``, ``label_out``: a scratch row). Compiled
    without reference counting: the views and records it makes per pair cost, counted, a
    sixth of an Extra-Trees fit."""
    left, right, missing = sides
    X = order.X
    samples = order.samples
    label = data.label
    is_regression = data.is_regression
    monotonic = settings.monotonic
    constraints = monotonic.shape[0] > 0
    seed = settings.seed
    gain_ratio = settings.criterion.code == criteria.GAIN_RATIO
    for p in range(first, last):
        j = pair_node[p]
        f = pair_feature[p]
        start = nodes.start[j]
        end = nodes.end[j]
        if pair_present[p] < 0:
            low, high, present = column_range(X, f, samples, start, end)
        else:
            low = pair_low[p]
            high = pair_high[p]
            present = pair_present[p]
        n_missing = end - start - present
        out.pos[p] = -1
        out.score[p] = -np.inf
        out.threshold[p] = 0.0
        out.missing[p] = NO_MISSING
        if present == 0 or not (low < high or n_missing > 0):
            continue  # constant in the node, nothing missing
        stats = nodes.stats[j]
        weight = nodes.weight[j]
        parent_entropy = criteria.entropy(stats, weight) if gain_ratio else 0.0
        cst = np.int64(monotonic[f]) if constraints else np.int64(0)
        limits = Limits(cst, nodes.lower[j], nodes.upper[j])
        node = Side(stats, weight, end - start)
        threshold = cut_between(low, high, stream_key(seed, nodes.id[j], f)) \
            if low < high else ALL_VALUES
        n_left = gather_sides(X, f, samples, label, start, end, threshold, n_missing,
                              index_out, label_out)
        missing_weight = 0.0
        if n_missing > 0:
            missing_weight = range_stats(data, label_out, index_out, end - n_missing, end,
                                         missing)
        missing_side = Side(missing, missing_weight, n_missing)
        if not low < high:
            # every non-missing value is the same: the one split left is value-or-missing
            score = missing_only_score(settings, is_regression, node, missing_side,
                                       parent_entropy, left, right, limits)
            if score > -np.inf:
                out.score[p] = score
                out.pos[p] = start + present
                out.threshold[p] = ALL_VALUES
                out.missing[p] = MISSING_RIGHT
            continue
        weight_left = range_stats(data, label_out, index_out, start, start + n_left, left)
        score, direction = two_way_score(settings, is_regression,
                                         Side(left, weight_left, n_left), node, missing_side,
                                         parent_entropy, left, right, limits)
        out.threshold[p] = threshold
        if score > -np.inf:
            out.score[p] = score
            out.pos[p] = start + n_left
            out.missing[p] = direction


@pjit
def split_samples(data, order, split_start, split_end, split_feature, split_threshold,
                  split_missing, child_offset, child_stats, child_weight, child_count):
    """Stable partition of each split node's segment of ``order.samples`` into its left
    child's samples then its right child's (at or below ``split_threshold[j]`` on
    ``split_feature[j]``, the missing ones on the side ``split_missing[j]``), and the
    children's statistics, weights and counts into rows ``child_offset[j]`` and
    ``child_offset[j] + 1`` of the child arrays; parallel over the nodes (their segments are
    disjoint, so they share scratch row 0)."""
    k = split_start.shape[0]
    # blocks of nodes, each a call (a call per node would copy the records per node)
    n_blocks = max(1, min(k, 4 * order.index_scratch.shape[0]))
    for block in prange(n_blocks):
        split_block(data, order, split_start, split_end, split_feature, split_threshold,
                    split_missing, child_offset, child_stats, child_weight, child_count,
                    block * k // n_blocks, (block + 1) * k // n_blocks)


@borrowing
def split_block(data, order, split_start, split_end, split_feature, split_threshold,
                split_missing, child_offset, child_stats, child_weight, child_count, first,
                last):
    """The nodes ``first:last`` of :func:`split_samples`, compiled without reference
    counting (see :func:`search_block`)."""
    X = order.X
    samples = order.samples
    spill = order.index_scratch[0]
    label_out = order.label_scratch[0]
    label = data.label
    with_labels = label_out.shape[0] > 0
    for j in range(first, last):
        start = split_start[j]
        end = split_end[j]
        f = split_feature[j]
        threshold = split_threshold[j]
        nan_left = split_missing[j] == MISSING_LEFT
        write = np.uint64(start)
        n_right = np.uint64(0)
        # branch-free (see kernels.grow.partition): left in place, right to the spill
        for k in range(np.uint64(start), np.uint64(end)):
            i = np.uint64(samples[k])
            x = X[i, f]
            to_left = np.uint64(x <= threshold or (nan_left and x != x))
            samples[write] = i
            spill[np.uint64(start) + n_right] = i
            write += to_left
            n_right += np.uint64(1) - to_left
        for r in range(n_right):
            samples[write + r] = spill[np.uint64(start) + r]
        if with_labels:
            for k in range(np.uint64(start), np.uint64(end)):
                label_out[k] = label[np.uint64(samples[k])]
        n_left = np.int64(write) - start
        c = child_offset[j]
        child_weight[c] = range_stats(data, label_out, samples, start, start + n_left,
                                      child_stats[c])
        child_weight[c + 1] = range_stats(data, label_out, samples, start + n_left, end,
                                          child_stats[c + 1])
        child_count[c] = n_left
        child_count[c + 1] = end - start - n_left
