"""Split search over presorted segments.

For feature ``f``, ``sorted_index[f, start:end]`` are the samples of a node in increasing
order of ``X[:, f]``, ``sorted_value[f, start:end]`` their values and (classification)
``sorted_label[f, start:end]`` their classes, so a scan reads memory sequentially. One
left-to-right pass accumulates the left statistics as prefix sums; a candidate split lies
between two successive distinct values: samples at positions ``start:pos`` go left, ``pos:end``
go right.

Missing values (NaN) sort after every number, so they are the tail ``end_nm:end`` of each
segment. A feature with missing values at a node is scanned twice, with the missing samples on
the right and then on the left, and the better direction is kept; one more candidate sends
every non-missing sample left and the missing ones right (threshold ``ALL_VALUES``).

Ties between equal scores: positions are visited left to right and a candidate replaces the
best only if strictly better, so the lowest threshold wins; features are compared in
increasing index order by :func:`best_pair_per_node`, so the lowest feature index wins.
"""

import numpy as np
from numba import prange

from . import criteria
from ._jit import AHEAD, borrowing, jit, one_block, pjit, prefetch, serial_twin
from .categorical import (
    MISSING_RIGHT,
    NO_MISSING,
    category_work,
    child_allowed,
    monotone,
    no_limits,
    scan_categorical,
    sides_score,
    two_way_score,
)
from .criteria import accumulate
from .pinball import new_workspace, reserve_workspace, scan_pinball
from .random import stream_key, uniform
from .records import GrowSettings, Limits, Rows, Side


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
def non_missing_end(value_row, start, end):
    """End of the non-missing part of a sorted segment: NaN sort last, so the first NaN of
    ``value_row[start:end]`` (``end`` if none), found by bisection."""
    if not np.isnan(value_row[end - 1]):
        return end
    low = start
    high = end - 1  # value_row[high] is NaN
    while low < high:
        middle = (low + high) // 2
        if np.isnan(value_row[middle]):
            high = middle
        else:
            low = middle + 1
    return low


_ONE = np.uint64(1)

# Gini's and squared error's threshold scans (dense, one output) divide only for a candidate
# that may beat the best so far. Their scores are n / d with d = W_l W_r (gini: n = sum_c
# l_c**2 W_r + sum_c r_c**2 W_l; squared error: n = S_l**2 W_r + S_r**2 W_l, the score
# computed as S_l**2 / W_l + S_r**2 / W_r). Each product, sum and division rounds by at most
# half a unit of its result's last place, relative to it while it is a normal number: when
# best * d is above NORMAL_FLOOR, a candidate whose n is at most best * d * SURELY_BELOW
# (sixteen times the doubles' relative precision below it, of which the roundings use four)
# has a rounded score below the best, which the scan, keeping only a strictly better score,
# would have passed by. Below the floor (subnormal products: their rounding is not relative),
# with a best of zero or less, or NaN, the score is computed. The scores, positions and
# trees are those of a division per candidate. (The multi-output squared-error scan bounds
# its estimates likewise: _ESTIMATE_RELATIVE, _ESTIMATE_ABSOLUTE.)
SURELY_BELOW = 1.0 - 16.0 * np.finfo(np.float64).eps
NORMAL_FLOOR = 2.0 ** -900


@jit(inline="always")
def may_beat(numerator, denominator, best):
    """Whether a score of about ``numerator / denominator`` (see :data:`SURELY_BELOW`) may
    exceed ``best`` once computed and rounded: False only where it cannot."""
    bound = best * denominator * SURELY_BELOW
    return not (bound >= NORMAL_FLOOR and numerator <= bound)


@jit
def _scan_range(start, end, min_samples_leaf, n_left0, n_right0):
    """Positions a threshold scan of ``start:end`` visits, as unsigned integers (numba then
    emits no negative-index fix-up on the loads, about a fifth of the scan's time):
    ``(first_candidate, stop)``, the first position after which a split may be made and the
    end of the loop (positions from ``stop`` on can only leave too few samples on the right).
    """
    stop = max(start, min(end - 1, end + n_right0 - min_samples_leaf))
    first_candidate = max(start, start + min_samples_leaf - 1 - n_left0)
    return np.uint64(first_candidate), np.uint64(stop)


# threshold of a split that sends every non-missing value left (the missing ones right)
ALL_VALUES = np.finfo(np.float64).max


@borrowing
def missing_only_score(settings, is_regression, node, missing, parent_entropy, left, right,
                       limits):
    """Score of the split of the non-missing samples (left) from the ``missing`` ones
    (right) of ``node`` (both :class:`Side`); -inf when it breaks a leaf constraint or the
    :class:`Limits` ``limits``."""
    weight_left = node.weight - missing.weight
    if not (child_allowed(node.count - missing.count, weight_left, settings.min_samples_leaf,
                          settings.min_weight_leaf)
            and child_allowed(missing.count, missing.weight, settings.min_samples_leaf,
                              settings.min_weight_leaf)):
        return -np.inf
    for s in range(node.stats.shape[0]):
        left[s] = node.stats[s] - missing.stats[s]
        right[s] = missing.stats[s]
    if limits.monotonic != 0 and not monotone(limits, left[0] / weight_left,
                                              right[0] / missing.weight):
        return -np.inf
    return sides_score(settings.criterion, is_regression, left, right, weight_left,
                       missing.weight, parent_entropy)


@borrowing
def range_stats(data, label_row, index_row, first, end, out):
    """Statistics of the samples at positions first:end of a sorted segment (the missing
    tail, or the left side of a random threshold) into ``out`` (:func:`accumulate`);
    returns their weight."""
    out[:] = 0.0
    return accumulate(out.reshape((1, out.shape[0])), 0, data, index_row, label_row, first,
                      end)


@jit
def classes_by_sample(sorted_label, label):
    """Whether the classes are left out of the sorted arrays (``sorted_label`` empty) and
    read from ``label``, every sample's class.

    Carried classes (a row of ``sorted_label`` per feature) make the scans sequential, but
    every partition moves them too: a forest tree, which scans a few of the features it
    partitions, leaves them out. A scan of feature f at ``start:end`` then first gathers them
    (:func:`gather_classes`) into a scratch row that stands for ``sorted_label[f]``, so the
    scans themselves are the same. (The choice is made per kernel call, not per sample: a
    test inside the scan loop cost single trees 10% of their split search.)"""
    return label.shape[0] > 0 and sorted_label.shape[1] == 0


@jit
def gather_classes(label, index_row, start, end, scratch):
    """scratch[k] = label[index_row[k]] for k in start:end (see :func:`classes_by_sample`)."""
    for k in range(np.uint64(start), np.uint64(end)):  # unsigned: no wraparound fix-ups
        scratch[k] = label[np.uint64(index_row[k])]


@jit(inline="always")
def feature_limits(monotonic, f, lower, upper):
    """The :class:`Limits` of a node's splits on feature ``f``: the feature's constraint
    (``monotonic``: settings.monotonic, empty when there are none) and the node's bounds."""
    cst = np.int64(monotonic[f]) if monotonic.shape[0] > 0 else np.int64(0)
    return Limits(cst, lower, upper)


@borrowing(inline="always")
def missing_tail(data, index_row, value_row, label_row, start, end, missing):
    """``(end_nm, weight)``: the end of the non-missing samples of the sorted segment
    ``start:end`` (NaN sort last) and the weight of the missing ones, whose statistics go
    into ``missing`` (left as it is when there are none)."""
    end_nm = non_missing_end(value_row, start, end)
    missing_weight = 0.0
    if end_nm < end:
        missing_weight = range_stats(data, label_row, index_row, end_nm, end, missing)
    return end_nm, missing_weight


@jit(inline="always")
def pair_rows(data, criterion, f, start, end, node_stats, node_weight, scratch, missing):
    """What every search of the node ``start:end`` on feature ``f`` starts from: the parent's
    entropy (gain ratio only, else 0), the feature's rows (index, value, label: see
    :func:`classes_by_sample`; ``scratch`` receives gathered classes), the end of the
    non-missing samples and the missing samples' weight (their statistics into ``missing``).
    """
    parent_entropy = 0.0
    if criterion.code == criteria.GAIN_RATIO:
        parent_entropy = criteria.entropy(node_stats, node_weight)
    index_row = data.sorted_index[f]
    value_row = data.sorted_value[f]
    if classes_by_sample(data.sorted_label, data.label):
        gather_classes(data.label, index_row, start, end, scratch)
        label_row = scratch
    else:
        label_row = data.sorted_label[0] if data.is_regression else data.sorted_label[f]
    end_nm, missing_weight = missing_tail(data, index_row, value_row, label_row, start, end,
                                          missing)
    return parent_entropy, index_row, value_row, label_row, end_nm, missing_weight


@borrowing(inline="always")
def scan_classification(settings, data, rows, node, parent_entropy, base, n_right0, right):
    """Best threshold of one node on one feature, classification. Returns (score, pos);
    pos == -1 when no split satisfies the leaf constraints.

    ``rows`` (a :class:`Rows`) are the node's non-missing samples on the feature, ``node``
    the whole node. ``base`` (a :class:`Side`) holds the samples that are on the left before
    the scan (the missing ones when they go left; zeros otherwise); its ``stats`` vector is
    the running left side of the scan. ``n_right0`` missing samples are on the right
    otherwise. Candidates keep non-missing samples on both sides.

    Gini keeps sum_c l_c**2 and sum_c r_c**2 up to date in O(1) per sample
    ((l + w)**2 - l**2 = w (2 l + w)), so its score costs one division whatever the number of
    classes, made only for a candidate that may beat the best (:func:`may_beat`); entropy
    looks up each side's m log m in ``data.xlogx`` (:func:`criteria.table_entropy_sum`: a
    tree on 100k x 20, 3 classes, 0.22-0.24 against 0.56-0.58 s with a logarithm and a
    division per class and side); the other (built-in) criteria call
    :func:`criteria.builtin_score`.

    One loop for every criterion: with that call in it, the compiled loop keeps ``left_sq``
    and ``right_sq`` on the stack around each candidate (a store and a load in both chains
    of adds). A loop of gini's own scanned a forest tree's root (95k samples, 3 classes)
    in 5.2-5.8 ns a sample against 6.0-7.4 ns, but fits of random forest classifiers moved
    within noise and a classifier's first fit compiled 54.0-60.7 s against 46.9-53.9 s.
    """
    code = settings.criterion.code
    min_samples_leaf = settings.min_samples_leaf
    min_weight_leaf = settings.min_weight_leaf
    label_row = rows.label
    value_row = rows.value
    index_row = rows.index
    start = rows.start
    end = rows.end
    sample_weight = data.sample_weight
    weighted = data.weighted
    xlogx = data.xlogx
    node_stats = node.stats
    node_weight = node.weight
    left = base.stats
    n_left0 = base.count
    limits = rows.limits
    constrained = limits.monotonic != 0
    best_score = -np.inf
    best_pos = -1
    if end - start + n_left0 + n_right0 < 2 * min_samples_leaf or end - start < 2:
        return best_score, best_pos
    right_sq = 0.0
    left_sq = 0.0
    for c in range(node_stats.shape[0]):
        right[c] = node_stats[c] - left[c]
        right_sq += right[c] * right[c]
        left_sq += left[c] * left[c]
    weight_left = base.weight
    w = 1.0
    first_candidate, stop = _scan_range(start, end, min_samples_leaf, n_left0, n_right0)
    last = np.uint64(end - 1)
    for k in range(np.uint64(start), stop):  # unsigned indices: no wraparound fix-ups
        c = label_row[k]
        if weighted:
            # the weight of the sample AHEAD positions on, asked for now (see scan_regression)
            prefetch(sample_weight, np.uint64(index_row[min(k + AHEAD, last)]))
            w = sample_weight[np.uint64(index_row[k])]
        count_left = left[c]
        count_right = right[c]
        left_sq += w * (2.0 * count_left + w)
        right_sq += w * (w - 2.0 * count_right)
        left[c] = count_left + w
        right[c] = count_right - w
        weight_left += w
        if k < first_candidate or value_row[k + _ONE] <= value_row[k]:
            continue
        weight_right = node_weight - weight_left
        if weight_left <= 0.0 or weight_right <= 0.0:
            continue
        if weight_left < min_weight_leaf or weight_right < min_weight_leaf:
            continue
        if constrained and not monotone(limits, left[0] / weight_left,
                                        right[0] / weight_right):
            continue
        if code == criteria.GINI:
            # = left_sq / weight_left + right_sq / weight_right, with one division, made
            # only when the candidate may beat the best (see SURELY_BELOW)
            numerator = left_sq * weight_right + right_sq * weight_left
            denominator = weight_left * weight_right
            if not may_beat(numerator, denominator, best_score):
                continue
            score = numerator / denominator
        elif code == criteria.ENTROPY:
            # builtin_score's, its logarithms of whole numbers looked up
            score = -(criteria.table_entropy_sum(left, weight_left, xlogx)
                      + criteria.table_entropy_sum(right, weight_right, xlogx))
        else:
            score = criteria.builtin_score(code, left, right, weight_left, weight_right,
                                           parent_entropy)
        if score > best_score:
            best_score = score
            best_pos = np.int64(k) + 1
    return best_score, best_pos


@borrowing(inline="always")
def scan_regression(settings, data, rows, node, base, n_right0):
    """Best threshold of one node on one feature for squared error (maximises
    S_l**2 / W_l + S_r**2 / W_r, S = sum of w y) or poisson (:func:`criteria.poisson_score`).
    Returns (score, pos). Missing samples as in :func:`scan_classification`
    (``base.stats[0]``: their sum of w y when they go left)."""
    poisson = settings.criterion.code == criteria.POISSON
    min_samples_leaf = settings.min_samples_leaf
    min_weight_leaf = settings.min_weight_leaf
    value_row = rows.value
    index_row = rows.index
    start = rows.start
    end = rows.end
    target = data.target
    sample_weight = data.sample_weight
    weighted = data.weighted
    node_weight = node.weight
    n_left0 = base.count
    limits = rows.limits
    constrained = limits.monotonic != 0
    best_score = -np.inf
    best_pos = -1
    if end - start + n_left0 + n_right0 < 2 * min_samples_leaf or end - start < 2:
        return best_score, best_pos
    sum_left = base.stats[0]
    sum_total = node.stats[0]
    weight_left = base.weight
    w = 1.0
    first_candidate, stop = _scan_range(start, end, min_samples_leaf, n_left0, n_right0)
    last = np.uint64(end - 1)
    for k in range(np.uint64(start), stop):  # unsigned: no wraparound fix-ups
        i = np.uint64(index_row[k])
        # the target and weight of the sample AHEAD positions on, asked for now: the
        # sorted positions read them at rows scattered through the arrays
        ahead = np.uint64(index_row[min(k + AHEAD, last)])
        prefetch(target, ahead)
        if weighted:
            prefetch(sample_weight, ahead)
            w = sample_weight[i]
        sum_left += w * target[i]
        weight_left += w
        if k < first_candidate or value_row[k + _ONE] <= value_row[k]:
            continue
        weight_right = node_weight - weight_left
        if weight_left <= 0.0 or weight_right <= 0.0:
            continue
        if weight_left < min_weight_leaf or weight_right < min_weight_leaf:
            continue
        sum_right = sum_total - sum_left
        if constrained and not monotone(limits, sum_left / weight_left,
                                        sum_right / weight_right):
            continue
        if poisson:
            score = criteria.poisson_score(sum_left, weight_left, sum_right, weight_right)
        else:
            square_left = sum_left * sum_left
            square_right = sum_right * sum_right
            # the two divisions made only when the candidate may beat the best (see
            # SURELY_BELOW): S_l**2 / W_l + S_r**2 / W_r against best * W_l W_r
            if not may_beat(square_left * weight_right + square_right * weight_left,
                            weight_left * weight_right, best_score):
                continue
            score = square_left / weight_left + square_right / weight_right
        if score > best_score:
            best_score = score
            best_pos = np.int64(k) + 1
    return best_score, best_pos


@jit(inline="always")
def _leaf_weights_allowed(weight_left, weight_right, min_weight_leaf):
    """Whether a candidate of these side weights may split: both positive and at least
    ``min_weight_leaf`` (the scans' tests, in their order)."""
    if weight_left <= 0.0 or weight_right <= 0.0:
        return False
    return not (weight_left < min_weight_leaf or weight_right < min_weight_leaf)


@jit(inline="always")
def _whole_class_score(code, left, right, left_sq, right_sq, weight_left, weight_right, xlogx,
                       parent_entropy):
    """The classification scans' score of a candidate whose class weights are whole numbers
    (:func:`scan_two_valued`, :func:`scan_codes`): gini from the sides' sums of squares
    (``left_sq``, ``right_sq``) with one division, entropy from the table of m log m
    (``xlogx``), the other built-ins by :func:`criteria.builtin_score`: the expressions of
    :func:`scan_classification`, so the same bits."""
    if code == criteria.GINI:
        return ((left_sq * weight_right + right_sq * weight_left)
                / (weight_left * weight_right))
    if code == criteria.ENTROPY:
        return -(criteria.table_entropy_sum(left, weight_left, xlogx)
                 + criteria.table_entropy_sum(right, weight_right, xlogx))
    return criteria.builtin_score(code, left, right, weight_left, weight_right,
                                  parent_entropy)


@borrowing(inline="always")
def scan_two_valued(settings, data, node, samples, start, key, low, parent_entropy, left,
                    right, lanes):
    """:func:`scan_single_side`'s ``(score, pos)`` for a feature of two values, ``low`` and
    a larger one, at the node's samples ``samples[start:start + node.count]`` (their values
    in ``key``, in the same order), none missing and the feature unconstrained, without
    sorting them: the scan's only candidate leaves the ``low`` samples on the left, and its
    tests (leaf sizes and weights) and scores are the scans' own
    (:func:`scan_classification`, :func:`scan_regression`), made once on the same sums.

    Each sample adds to its side's sums (the side an index into ``lanes``, at least (8,
    n_classes) or (4, 1): no branch to mispredict on a feature whose values alternate).

    - Regression: one pass in the samples' order, which is the order a sorted segment holds
      the ``low`` samples in (increasing sample index), adds the ``low`` samples' w y and
      weights as the scan adds them: the candidate's sums are the scan's to the bit.
    - Classification, for whole-number weights of a total below 2**26 only
      (``SampleOrder.whole_weights``): every sum of them, every sum of their squares and
      every difference the scan makes is then a whole number below 2**52, exact in any
      order. The class weights go into four pairs of rows taken in turn, so that no
      sample waits for the previous one's sum; the scan's running sums of squares are the
      sums of squares of the totals.

    ``left`` and ``right``: scratch statistics."""
    code = settings.criterion.code
    min_samples_leaf = settings.min_samples_leaf
    min_weight_leaf = settings.min_weight_leaf
    sample_weight = data.sample_weight
    weighted = data.weighted
    node_stats = node.stats
    node_weight = node.weight
    n_stats = node_stats.shape[0]
    n = node.count
    if n < 2 * min_samples_leaf or n < 2:
        return -np.inf, -1
    n_left = 0
    weight_left = 0.0
    sum_left = 0.0
    left_sq = 0.0
    right_sq = 0.0
    w = 1.0
    if data.is_regression:
        # each sample's w y onto row ``side`` of lanes (0: low), its weight onto row 2 +
        # side (a 0-or-1 factor in place of the index compiled to a branch)
        target = data.target
        lanes[:4, 0] = 0.0
        for k in range(n):
            i = np.uint64(samples[start + k])
            if weighted:
                w = sample_weight[i]
            side = np.int64(key[k] != low)
            n_left += 1 - side
            lanes[side, 0] += w * target[i]
            lanes[2 + side, 0] += w
        sum_left = lanes[0, 0]
        weight_left = lanes[2, 0]
    else:
        # each sample's weight onto its class on its side, in four pairs of rows taken in
        # turn (row 2 q + side)
        label = data.label
        lanes[:8, :n_stats] = 0.0
        for k in range(n):
            i = np.uint64(samples[start + k])
            if weighted:
                w = sample_weight[i]
            side = np.int64(key[k] != low)
            n_left += 1 - side
            lanes[2 * (k & 3) + side, label[i]] += w
        for c in range(n_stats):
            left[c] = (lanes[0, c] + lanes[2, c]) + (lanes[4, c] + lanes[6, c])
            right[c] = node_stats[c] - left[c]
            weight_left += left[c]
            left_sq += left[c] * left[c]
            right_sq += right[c] * right[c]
    # the scan's one candidate, after its n_left-th sample
    first_candidate, stop = _scan_range(0, n, min_samples_leaf, 0, 0)
    k = np.uint64(n_left - 1)
    if k < first_candidate or k >= stop:
        return -np.inf, -1
    weight_right = node_weight - weight_left
    if not _leaf_weights_allowed(weight_left, weight_right, min_weight_leaf):
        return -np.inf, -1
    if data.is_regression:
        sum_right = node_stats[0] - sum_left
        if code == criteria.POISSON:
            score = criteria.poisson_score(sum_left, weight_left, sum_right, weight_right)
        else:
            score = (sum_left * sum_left / weight_left
                     + sum_right * sum_right / weight_right)
    else:
        score = _whole_class_score(code, left, right, left_sq, right_sq, weight_left,
                                   weight_right, data.xlogx, parent_entropy)
    if score > -np.inf:
        return score, np.int64(n_left)
    return -np.inf, -1

# the most classes scan_codes counts: its table is the sample-order sort's (8, 256) counts,
# row 0 the samples of each value, row 1 + c the weight of class c
CODE_CLASSES = 7


@borrowing(inline="always")
def scan_codes(settings, data, node, samples, start, key, low, high, parent_entropy, left,
               right, table):
    """:func:`scan_classification`'s ``(score, pos, threshold)`` for a feature whose values
    at the node's samples ``samples[start:start + node.count]`` (in ``key``, in the same
    order) are whole numbers from ``low`` to ``high`` < ``low`` + 256, none missing, the
    feature unconstrained, for a classifier of at most CODE_CLASSES classes and whole-number
    weights of a total below 2**26 (``SampleOrder.whole_weights``), without sorting: one
    pass counts each value's samples and adds each class's weight per value (``table``, an
    (8, 256) int64 table: a histogram), then the candidates between successive values
    present are scored in increasing order, as the scan meets them. Every class weight,
    sum of squares and difference the scan makes is then a whole number below 2**52,
    exact in any order: the scores, and the first best, are the scan's to the bit.

    ``left`` and ``right``: scratch statistics."""
    code = settings.criterion.code
    min_samples_leaf = settings.min_samples_leaf
    min_weight_leaf = settings.min_weight_leaf
    sample_weight = data.sample_weight
    weighted = data.weighted
    label = data.label
    node_stats = node.stats
    node_weight = node.weight
    n_stats = node_stats.shape[0]
    n = node.count
    if n < 2 * min_samples_leaf or n < 2:
        return -np.inf, -1, 0.0
    base = np.int64(low)
    size = np.int64(high) - base + 1
    for r in range(n_stats + 1):
        for v in range(size):
            table[r, v] = 0
    w = np.int64(1)
    last = np.uint64(start + n - 1)
    for k in range(n):
        # the class and weight of the sample AHEAD on, asked for now (the node's samples
        # lie in rows scattered through the data)
        ahead = np.uint64(samples[min(np.uint64(start + k) + AHEAD, last)])
        prefetch(label, ahead)
        if weighted:
            prefetch(sample_weight, ahead)
        i = np.uint64(samples[start + k])
        if weighted:
            w = np.int64(sample_weight[i])
        v = np.int64(key[k]) - base
        table[0, v] += 1
        table[1 + np.int64(label[i]), v] += w
    for c in range(n_stats):
        left[c] = 0.0
        right[c] = node_stats[c]
    first_candidate, stop = _scan_range(0, n, min_samples_leaf, 0, 0)
    best_score = -np.inf
    best_pos = -1
    best_value = 0
    n_left = 0
    weight_left = 0.0
    for v in range(size - 1):  # the largest value ends no left side
        count = table[0, v]
        if count == 0:
            continue
        n_left += count
        left_sq = 0.0
        right_sq = 0.0
        for c in range(n_stats):
            h = np.float64(table[1 + c, v])
            left[c] += h
            right[c] -= h
            weight_left += h
            left_sq += left[c] * left[c]
            right_sq += right[c] * right[c]
        k = np.uint64(n_left - 1)  # the scan's position: its last left sample
        if k < first_candidate or k >= stop:
            continue
        weight_right = node_weight - weight_left
        if not _leaf_weights_allowed(weight_left, weight_right, min_weight_leaf):
            continue
        score = _whole_class_score(code, left, right, left_sq, right_sq, weight_left,
                                   weight_right, data.xlogx, parent_entropy)
        if score > best_score:
            best_score = score
            best_pos = np.int64(n_left)
            best_value = v
    if best_pos < 0:
        return -np.inf, -1, 0.0
    following = best_value + 1  # the next value present: the threshold's upper end
    while table[0, following] == 0:
        following += 1
    return best_score, best_pos, midpoint(np.float64(base + best_value),
                                          np.float64(base + following))


# threshold candidates a user criterion's scan scores per call of its batch function
USER_BATCH = 256


@borrowing
def scan_user(settings, data, rows, node, base, n_right0, batch):
    """Best threshold of one node on one feature for a user's criterion (classification or
    regression): the scan of :func:`scan_classification` that collects the candidates'
    left statistics into ``batch`` (``(lefts, left_weights, positions, scores)``, room for
    ``USER_BATCH`` candidates, candidate m's statistics in column ``lefts[:, m]``) and
    scores them with the criterion's batch function, one call per ``USER_BATCH``
    candidates (a function call per candidate through a pointer cost 5.5 ns; the batch
    function has the user's code inlined and computes several candidates at once).
    ``base.stats`` is the running left side. Returns (score, pos)."""
    criterion = settings.criterion
    min_samples_leaf = settings.min_samples_leaf
    min_weight_leaf = settings.min_weight_leaf
    label_row = rows.label
    value_row = rows.value
    index_row = rows.index
    start = rows.start
    end = rows.end
    target = data.target
    sample_weight = data.sample_weight
    weighted = data.weighted
    is_regression = data.is_regression
    outputs = data.outputs
    n_columns = outputs.shape[1]
    output_columns = data.output_columns
    n_outputs = output_columns.shape[1]
    node_stats = node.stats
    node_weight = node.weight
    left = base.stats
    n_stats = left.shape[0]
    n_left0 = base.count
    lefts, left_weights, positions, scores = batch
    limits = rows.limits
    constrained = limits.monotonic != 0
    best_score = -np.inf
    best_pos = -1
    if end - start + n_left0 + n_right0 < 2 * min_samples_leaf or end - start < 2:
        return best_score, best_pos
    weight_left = base.weight
    w = 1.0
    m = 0
    first_candidate, stop = _scan_range(start, end, min_samples_leaf, n_left0, n_right0)
    if n_outputs == 0 and n_columns == 0 and not is_regression and not constrained:
        # one output's classes, unconstrained (the common case), in a loop of its own: the
        # choice of statistics inside the loop cost 0.5 ns a sample (of 4.8 at a root)
        for k in range(np.uint64(start), stop):
            if weighted:
                w = sample_weight[np.uint64(index_row[k])]
            left[label_row[k]] += w
            weight_left += w
            if k < first_candidate or value_row[k + _ONE] <= value_row[k]:
                continue
            weight_right = node_weight - weight_left
            if weight_left <= 0.0 or weight_right <= 0.0:
                continue
            if weight_left < min_weight_leaf or weight_right < min_weight_leaf:
                continue
            _store_column(lefts, m, left, n_stats)
            left_weights[m] = weight_left
            positions[m] = np.int64(k) + 1
            m += 1
            if m == USER_BATCH:
                best_score, best_pos = _score_batch(criterion, batch, m, node_stats,
                                                    node_weight, best_score, best_pos)
                m = 0
        if m > 0:
            best_score, best_pos = _score_batch(criterion, batch, m, node_stats, node_weight,
                                                best_score, best_pos)
        return best_score, best_pos
    for k in range(np.uint64(start), stop):  # unsigned: no wraparound fix-ups
        if weighted:
            w = sample_weight[np.uint64(index_row[k])]
        if n_outputs > 0:
            i = np.uint64(index_row[k])
            for j in range(n_outputs):
                left[output_columns[i, j]] += w
        elif n_columns > 0:
            i = np.uint64(index_row[k])
            for s in range(n_columns):
                left[s] += w * outputs[i, s]
        elif is_regression:
            y = target[np.uint64(index_row[k])]
            left[0] += w * y
            left[1] += w * y * y
        else:
            left[label_row[k]] += w
        weight_left += w
        if k >= first_candidate and value_row[k + _ONE] > value_row[k]:
            weight_right = node_weight - weight_left
            if (weight_left > 0.0 and weight_right > 0.0 and weight_left >= min_weight_leaf
                    and weight_right >= min_weight_leaf
                    and (not constrained or monotone(
                        limits, left[0] / weight_left,
                        (node_stats[0] - left[0]) / weight_right))):
                # a loop, not _store_column: with both loops storing through it, the first
                # one measured 5-10% slower
                for s in range(n_stats):
                    lefts[s, m] = left[s]
                left_weights[m] = weight_left
                positions[m] = np.int64(k) + 1
                m += 1
                if m == USER_BATCH:
                    best_score, best_pos = _score_batch(criterion, batch, m, node_stats,
                                                        node_weight, best_score, best_pos)
                    m = 0
    if m > 0:
        best_score, best_pos = _score_batch(criterion, batch, m, node_stats, node_weight,
                                            best_score, best_pos)
    return best_score, best_pos


@jit(inline="always")
def _store_column(lefts, m, left, n_stats):
    """``lefts[:, m] = left``, its first statistics written one by one: a loop of a
    run-time length of 2 or 3 per candidate (a regression's sums, a few classes) cost
    0.8 ns of a user criterion's 5 ns a sample."""
    lefts[0, m] = left[0]
    if n_stats > 1:
        lefts[1, m] = left[1]
        if n_stats > 2:
            lefts[2, m] = left[2]
            if n_stats > 3:
                lefts[3, m] = left[3]
                for s in range(4, n_stats):
                    lefts[s, m] = left[s]


# The slack of the squared-error estimate (:func:`squared_error_estimate`) around the exact
# score: its relative part covers the rounding of both ((n_outputs + 4) units of 2**-53
# each, first order), four times over; its absolute part covers the divisions' underflow
# (2**-1075 a division). Both start from the same rounded squares (the kernels are compiled
# without fastmath, so no product is fused into an add), and their terms are nonnegative.
# (The one-output scans' filter bounds its roundings likewise: SURELY_BELOW, NORMAL_FLOOR.)
_ESTIMATE_RELATIVE = 2.0 ** -50
_ESTIMATE_ABSOLUTE = 2.0 ** -1060
# Fewest outputs whose squared-error trees use :func:`scan_squared_error_outputs`: below,
# the exact scores cost no more than the estimates and the copies of the waiting
# candidate's sums (50k x 20, depth 12, one thread, against the exact scan: 2 outputs 3%
# slower, 3 even, 4 2-3% faster, 5 5-8% faster)
ESTIMATE_MIN_OUTPUTS = 4


@jit(inline="always")
def squared_error_estimate(left, node_stats, n_outputs, weight_left, weight_right):
    """An estimate of the multi-output squared-error score of a candidate, and its slack:
    the exact score (:func:`squared_error_score`) lies within ``estimate +- slack``. The
    outputs' squares are summed first, in two chains a side, then divided twice: a fraction
    of the exact score's two divisions an output."""
    left_even = 0.0
    left_odd = 0.0
    right_even = 0.0
    right_odd = 0.0
    j = 0
    while j + 1 < n_outputs:
        sum_left = left[2 * j]
        sum_right = node_stats[2 * j] - sum_left
        left_even += sum_left * sum_left
        right_even += sum_right * sum_right
        sum_left = left[2 * j + 2]
        sum_right = node_stats[2 * j + 2] - sum_left
        left_odd += sum_left * sum_left
        right_odd += sum_right * sum_right
        j += 2
    if j < n_outputs:
        sum_left = left[2 * j]
        sum_right = node_stats[2 * j] - sum_left
        left_even += sum_left * sum_left
        right_even += sum_right * sum_right
    estimate = (left_even + left_odd) / weight_left + (right_even + right_odd) / weight_right
    return estimate, (estimate * ((n_outputs + 4) * _ESTIMATE_RELATIVE)
                      + (n_outputs + 1) * _ESTIMATE_ABSOLUTE)


@jit(inline="always")
def squared_error_score(left, node_stats, n_outputs, weight_left, weight_right):
    """The multi-output squared-error score of a candidate: the sum over outputs of
    S_l**2 / W_l + S_r**2 / W_r, added output by output (the scores' bits)."""
    score = 0.0
    for j in range(n_outputs):
        sum_left = left[2 * j]
        sum_right = node_stats[2 * j] - sum_left
        score += (sum_left * sum_left / weight_left
                  + sum_right * sum_right / weight_right)
    return score


@borrowing
def scan_squared_error_outputs(settings, data, rows, node, base, n_right0, right):
    """:func:`scan_multi_output` for a squared-error tree of :data:`ESTIMATE_MIN_OUTPUTS`
    outputs or more: the same (score, pos) to the bit, with few exact scores (two divisions
    an output). Each candidate is estimated (:func:`squared_error_estimate`: the exact score
    lies within the estimate plus or minus its slack), and is dropped when its estimate plus
    slack is below the best exact score so far, or below the waiting candidate's estimate
    minus slack. Otherwise it becomes the waiting candidate, its sums copied into ``right``.
    The candidate it replaces is dropped unscored if the new estimate minus slack is above
    its estimate plus slack, and is given its exact score otherwise (the two overlap); the
    last waiting candidate is scored at the end. Every drop rests on a strict inequality, so
    the first candidate of the best exact score is never dropped, and the earlier of two
    equal exact scores wins as in :func:`scan_multi_output`. Regression only
    (``data.outputs``); no missing-value logic of its own (the caller's sides, as for
    :func:`scan_multi_output`)."""
    n_outputs = settings.criterion.blocks.shape[0] - 1
    min_samples_leaf = settings.min_samples_leaf
    min_weight_leaf = settings.min_weight_leaf
    value_row = rows.value
    index_row = rows.index
    start = rows.start
    end = rows.end
    outputs = data.outputs
    sample_weight = data.sample_weight
    weighted = data.weighted
    node_stats = node.stats
    node_weight = node.weight
    left = base.stats
    n_left0 = base.count
    best_score = -np.inf
    best_pos = np.int64(-1)
    if end - start + n_left0 + n_right0 < 2 * min_samples_leaf or end - start < 2:
        return best_score, best_pos
    weight_left = base.weight
    w = 1.0
    waiting = np.int64(-1)  # the candidate waiting for its exact score (-1: none)
    waiting_weight = 0.0
    waiting_estimate = 0.0
    waiting_slack = 0.0
    first_candidate, stop = _scan_range(start, end, min_samples_leaf, n_left0, n_right0)
    for k in range(np.uint64(start), stop):  # unsigned: no wraparound fix-ups
        i = np.uint64(index_row[k])
        if weighted:
            w = sample_weight[i]
        for j in range(n_outputs):
            left[2 * j] += w * outputs[i, 2 * j]
        weight_left += w
        if k < first_candidate or value_row[k + _ONE] <= value_row[k]:
            continue
        weight_right = node_weight - weight_left
        if weight_left <= 0.0 or weight_right <= 0.0:
            continue
        if weight_left < min_weight_leaf or weight_right < min_weight_leaf:
            continue
        estimate, slack = squared_error_estimate(left, node_stats, n_outputs, weight_left,
                                                 weight_right)
        if estimate + slack < best_score:
            continue
        if waiting >= 0:
            if estimate + slack < waiting_estimate - waiting_slack:
                continue
            if not estimate - slack > waiting_estimate + waiting_slack:  # NaN: overlaps
                score = squared_error_score(right, node_stats, n_outputs, waiting_weight,
                                            node_weight - waiting_weight)
                if score > best_score:
                    best_score = score
                    best_pos = waiting
                waiting = -1
                if estimate + slack < best_score:
                    continue
        for j in range(n_outputs):
            right[2 * j] = left[2 * j]
        waiting = np.int64(k) + 1
        waiting_weight = weight_left
        waiting_estimate = estimate
        waiting_slack = slack
    if waiting >= 0:
        score = squared_error_score(right, node_stats, n_outputs, waiting_weight,
                                    node_weight - waiting_weight)
        if score > best_score:
            best_score = score
            best_pos = waiting
    return best_score, best_pos


@borrowing
def scan_multi_output(settings, data, rows, node, base, n_right0, right):
    """Best threshold of one node on one feature for a multi-output tree under a built-in
    criterion. Returns (score, pos). Missing samples as in :func:`scan_classification`; no
    monotonic constraints (refused for multi-output trees).

    Classification: each sample adds its weight to its class column in every output
    (``data.output_columns``); gini keeps the sums of squares of all the class columns up
    to date as :func:`scan_classification` does (O(n_outputs) per sample, O(1) per
    candidate), the other criteria score each candidate by
    :func:`criteria.multi_output_score`. Regression: only the outputs' sums of w y move
    (their scores read nothing else): ``base.stats[2 j]``."""
    code = settings.criterion.code
    blocks = settings.criterion.blocks
    min_samples_leaf = settings.min_samples_leaf
    min_weight_leaf = settings.min_weight_leaf
    value_row = rows.value
    index_row = rows.index
    start = rows.start
    end = rows.end
    outputs = data.outputs
    output_columns = data.output_columns
    n_outputs = blocks.shape[0] - 1
    classification = output_columns.shape[1] > 0
    gini = code == criteria.GINI
    sample_weight = data.sample_weight
    weighted = data.weighted
    node_stats = node.stats
    node_weight = node.weight
    n_stats = node_stats.shape[0]
    left = base.stats
    n_left0 = base.count
    best_score = -np.inf
    best_pos = -1
    if end - start + n_left0 + n_right0 < 2 * min_samples_leaf or end - start < 2:
        return best_score, best_pos
    left_sq = 0.0
    right_sq = 0.0
    for s in range(n_stats):
        right[s] = node_stats[s] - left[s]
        left_sq += left[s] * left[s]
        right_sq += right[s] * right[s]
    weight_left = base.weight
    w = 1.0
    first_candidate, stop = _scan_range(start, end, min_samples_leaf, n_left0, n_right0)
    for k in range(np.uint64(start), stop):  # unsigned: no wraparound fix-ups
        i = np.uint64(index_row[k])
        if weighted:
            w = sample_weight[i]
        if classification:
            for j in range(n_outputs):
                c = output_columns[i, j]
                count_left = left[c]
                count_right = right[c]
                left_sq += w * (2.0 * count_left + w)
                right_sq += w * (w - 2.0 * count_right)
                left[c] = count_left + w
                right[c] = count_right - w
        else:
            for j in range(n_outputs):
                left[2 * j] += w * outputs[i, 2 * j]
        weight_left += w
        if k < first_candidate or value_row[k + _ONE] <= value_row[k]:
            continue
        weight_right = node_weight - weight_left
        if weight_left <= 0.0 or weight_right <= 0.0:
            continue
        if weight_left < min_weight_leaf or weight_right < min_weight_leaf:
            continue
        if classification and gini:
            score = ((left_sq * weight_right + right_sq * weight_left)
                     / (weight_left * weight_right))
        elif classification:
            score = criteria.multi_output_score(code, blocks, left, right, weight_left,
                                                weight_right)
        else:
            score = 0.0
            for j in range(n_outputs):
                sum_left = left[2 * j]
                sum_right = node_stats[2 * j] - sum_left
                if code == criteria.POISSON:
                    score += criteria.poisson_score(sum_left, weight_left, sum_right,
                                                    weight_right)
                else:
                    score += (sum_left * sum_left / weight_left
                              + sum_right * sum_right / weight_right)
        if score > best_score:
            best_score = score
            best_pos = np.int64(k) + 1
    return best_score, best_pos


@borrowing(inline="always")
def _score_batch(criterion, batch, m, node_stats, node_weight, best_score, best_pos):
    """Score the first ``m`` candidates of ``batch`` (see :func:`scan_user`); returns the
    best (score, pos) of them and of the best so far. A NaN score flags the criterion.
    Inlined into the scan: called, it cost 110 ns a (node, feature) pair (a third of a user
    criterion's time on nodes of 8 samples)."""
    lefts, left_weights, positions, scores = batch
    criterion.batch(lefts, left_weights[:m], node_stats, node_weight, scores[:m])
    for i in range(m):
        score = scores[i]
        if not score <= best_score:  # one test for most candidates: better, or NaN
            if score != score:
                criterion.invalid[0] = 1
            else:
                best_score = score
                best_pos = positions[i]
    return best_score, best_pos


@jit(inline="always")
def cut_between(low, high, key):
    """The random splitter's threshold between a node's smallest value ``low`` and its
    largest ``high`` (``low < high``): uniform in [low, high), drawn from stream ``key``
    (``low`` when rounding reaches ``high``)."""
    threshold = low + uniform(key, 0) * (high - low)
    if threshold >= high:
        threshold = low
    return threshold


@borrowing
def random_cut(rows, n_missing, key):
    """The random splitter's draw on one feature (Extra-Trees): a threshold uniform between
    the node's min and max non-missing value (``rows``), as ``(pos, threshold)``: rows
    ``start:pos`` go left. ``pos == -1`` when the feature is constant in the node and has no
    missing sample; when every non-missing value is the same and some are missing, the
    value-or-missing split ``(rows.end, ALL_VALUES)``, as the best splitter's missing-only
    candidate."""
    start = rows.start
    end = rows.end
    value_row = rows.value
    if end <= start:
        return -1, 0.0
    low = np.float64(value_row[start])
    high = np.float64(value_row[end - 1])
    if not low < high:
        if n_missing == 0:
            return -1, 0.0
        return end, ALL_VALUES
    threshold = cut_between(low, high, key)
    pos = start
    while pos < end and value_row[pos] <= threshold:
        pos += 1
    return pos, threshold


@borrowing(inline="always")
def scan_random(settings, data, rows, node, parent_entropy, key, missing, left, right):
    """One random threshold (:func:`random_cut`); ``rows`` are the non-missing samples,
    ``missing`` (a :class:`Side`) the others, sent to the better side.

    Returns ``(score, pos, threshold, missing_direction)`` with ``pos == -1`` when the feature
    is constant in the node or the draw breaks a leaf constraint.
    """
    pos, threshold = random_cut(rows, missing.count, key)
    if pos < 0:
        return -np.inf, -1, 0.0, NO_MISSING
    start = rows.start
    if threshold == ALL_VALUES:
        # every non-missing value is the same: the one split left is value-or-missing
        score = missing_only_score(settings, data.is_regression, node, missing,
                                   parent_entropy, left, right, rows.limits)
        if score == -np.inf:
            return -np.inf, -1, 0.0, NO_MISSING
        return score, pos, ALL_VALUES, MISSING_RIGHT
    weight_left = range_stats(data, rows.label, rows.index, start, pos, left)
    # left is also the base of two_way_score's sides (allowed: see there)
    best_score, best_direction = two_way_score(
        settings, data.is_regression, Side(left, weight_left, pos - start), node, missing,
        parent_entropy, left, right, rows.limits)
    if best_score == -np.inf:
        return -np.inf, -1, threshold, NO_MISSING
    return best_score, pos, threshold, best_direction


@jit
def plain_settings(settings):
    """The :class:`GrowSettings` record with its criterion's code in place of its
    :class:`Measure`: what a parallel kernel takes, with the Measure beside it. Numba hands a
    ``prange`` body records field by field, and not a record nested in another; the body puts
    the Measure back with :func:`with_measure`."""
    return GrowSettings(settings.criterion.code, *settings[1:])


@jit
def with_measure(settings, measure):
    """:class:`GrowSettings` with ``measure`` as its criterion."""
    return GrowSettings(measure, *settings[1:])


@pjit
def find_category_splits(data, settings, measure, categories, nodes, pair_node, pair_feature,
                         out):
    """:func:`find_splits` for categorical features: each pair searched by
    :func:`jitree.kernels.categorical.scan_categorical` in ``categories.mode``. Writes
    ``out.score``, ``out.pos`` (-1: no split; else the number of categories present, or of a
    multiway split's children) and ``out.missing`` (binary modes: ``MISSING_*``; multiway: the
    child slot of the missing values, -1 for none).

    Called only when the fit has categorical features (``categories`` not None), so that
    fitting numeric data never compiles or loads the category search (numba compiles a
    kernel's whole call graph).
    """
    # the output arrays reach the blocks as a tuple: inside a prange loop, numba loses
    # writes made through a record's field
    label_scratch = data.label_scratch
    out_arrays = (out.score, out.pos, out.threshold, out.missing)
    n_stats = nodes.stats.shape[1]
    n_pairs = pair_node.shape[0]
    n_blocks = max(1, min(n_pairs, settings.n_blocks))
    # the most categories a pair can have present: its feature's, at most its node's samples
    max_q = 1
    for p in range(n_pairs):
        j = pair_node[p]
        max_q = max(max_q, min(categories.n_categories[pair_feature[p]],
                               nodes.end[j] - nodes.start[j]))
    for block in prange(n_blocks):
        settings_in = with_measure(settings, measure)
        work = (np.empty(n_stats), np.empty(n_stats), np.zeros(n_stats), label_scratch[block],
                category_work(max_q, n_stats))
        search_category_pairs(settings_in, categories, data, nodes, pair_node, pair_feature,
                              block * n_pairs // n_blocks, (block + 1) * n_pairs // n_blocks,
                              work, out_arrays)


@borrowing
def search_category_pairs(settings, categories, data, nodes, pair_node, pair_feature, first,
                          last, work, out):
    """The pairs ``first:last`` of :func:`find_category_splits` (``work``: the block's left,
    right and missing vectors, its row of ``data.label_scratch`` and its
    :func:`~jitree.kernels.categorical.category_work`; ``out``: the score, count, threshold
    and missing arrays), compiled without reference counting as :func:`search_pairs`."""
    left, right, missing, scratch, pair_work = work
    out_score, out_pos, out_threshold, out_missing = out
    no_output = pair_node[:0]
    for p in range(first, last):
        j = pair_node[p]
        start = nodes.start[j]
        end = nodes.end[j]
        stats = nodes.stats[j]
        weight = nodes.weight[j]
        parent_entropy, index_row, value_row, label_row, end_nm, missing_weight = \
            pair_rows(data, settings.criterion, pair_feature[p], start, end, stats, weight,
                      scratch, missing)
        score, count, direction = scan_categorical(
            settings, categories, data,
            Rows(index_row, value_row, label_row, start, end_nm, no_limits()),
            Side(stats, weight, end - start), parent_entropy,
            Side(missing, missing_weight, end - end_nm), (left, right),
            (no_output, no_output), pair_work)
        out_score[p] = score
        out_pos[p] = count
        out_threshold[p] = 0.0
        out_missing[p] = direction


@pjit
def find_splits(data, settings, measure, nodes, pair_node, pair_feature, out, ranks):
    """Best threshold split of every (node, feature) pair, in parallel over blocks of pairs
    (numeric and ordinal features; categorical ones go to :func:`find_category_splits`).

    Pair ``p`` asks for node ``pair_node[p]`` (a row of the :class:`NodeBatch` ``nodes``) on
    feature ``pair_feature[p]``; writes into the :class:`PairResults` ``out`` its score,
    position (-1: none) and threshold, and where its missing values go (``MISSING_LEFT``,
    ``MISSING_RIGHT``, or ``NO_MISSING`` when the node has none). The pairs are cut into
    ``settings.n_blocks`` blocks (a few per thread); each block allocates its scratch once and
    gathers classes into its row of ``data.label_scratch`` (see :func:`classes_by_sample`),
    then searches its pairs in :func:`search_pairs` (or :func:`search_ranked_pairs`).
    ``ranks``: the :class:`Ranks` of the order criteria (absolute_error, quantile: see
    :mod:`jitree.kernels.pinball`), None for the others, whose kernels then leave the order
    statistics out of their compiled code. The random splitter comes here with the order
    criteria only; with the others it searches in :func:`find_random_splits` (see
    :func:`search_numeric`).
    """
    # the output arrays reach the blocks as a tuple: inside a prange loop, numba loses
    # writes made through a record's field
    label_scratch = data.label_scratch
    out_arrays = (out.score, out.pos, out.threshold, out.missing)
    n_stats = nodes.stats.shape[1]
    n_pairs = pair_node.shape[0]
    n_blocks = max(1, min(n_pairs, settings.n_blocks))
    for block in prange(n_blocks):
        settings_in = with_measure(settings, measure)
        first = block * n_pairs // n_blocks
        last = (block + 1) * n_pairs // n_blocks
        missing = np.empty(n_stats)
        if ranks is None:
            room = USER_BATCH if measure.code >= criteria.USER_IMPURITY else 0
            batch = (np.empty((n_stats, room)), np.empty(room), np.empty(room, dtype=np.int64),
                     np.empty(room))
            search_pairs(settings_in, data, nodes, pair_node, pair_feature, first, last,
                         (np.empty(n_stats), np.empty(n_stats), missing, label_scratch[block],
                          batch), out_arrays)
        else:
            search_ranked_pairs(settings_in, data, ranks, nodes, pair_node, pair_feature,
                                first, last, (missing, label_scratch[block]), out_arrays)


find_splits_serial = serial_twin(find_splits)


@jit(inline="always")
def pair_search_start(data, settings, nodes, j, f, scratch, missing):
    """What the search of node ``j`` (a row of the :class:`NodeBatch` ``nodes``) on feature
    ``f`` starts from (:func:`pair_rows`): ``(parent entropy, rows, node, missing side)``,
    ``rows`` its non-missing samples with the node's monotonic :class:`Limits`, ``node`` and
    the missing side :class:`Side` records (the missing statistics into ``missing``)."""
    start = nodes.start[j]
    end = nodes.end[j]
    stats = nodes.stats[j]
    weight = nodes.weight[j]
    parent_entropy, index_row, value_row, label_row, end_nm, missing_weight = \
        pair_rows(data, settings.criterion, f, start, end, stats, weight, scratch, missing)
    rows = Rows(index_row, value_row, label_row, start, end_nm,
                feature_limits(settings.monotonic, f, nodes.lower[j], nodes.upper[j]))
    return (parent_entropy, rows, Side(stats, weight, end - start),
            Side(missing, missing_weight, end - end_nm))


def _threshold_search(scan_side):
    """The search of one (node, feature) pair for its best threshold, each side of its missing
    samples scanned by ``scan_side`` (:func:`scan_any_side`, or :func:`scan_single_side` where
    only a single-output tree's built-in criterion can come: its callers then compile no
    other scan)."""

    @borrowing(inline="always")
    def search(settings, data, rows, node, missing_side, parent_entropy, left, right, batch):
        """Best threshold of one (node, feature) pair without an order criterion, both sides
        for its missing samples: ``(score, pos, threshold, direction)``, pos -1 when no split
        satisfies the leaf constraints. ``rows``: the node's non-missing samples on the
        feature in increasing order (a :class:`Rows`), ``node`` and ``missing_side`` the
        node's and its missing samples' :class:`Side`; ``left``, ``right``: scratch
        statistics; ``batch``: a user criterion's (see :func:`scan_user`)."""
        is_regression = data.is_regression
        missing = missing_side.stats
        start = rows.start
        end_nm = rows.end
        n_missing = missing_side.count
        missing_weight = missing_side.weight
        value_row = rows.value
        threshold = 0.0
        direction = NO_MISSING
        score = -np.inf
        pos = -1
        for side in range(2 if n_missing > 0 else 1):
            # side 0: missing samples right (or none); side 1: missing samples left
            for s in range(left.shape[0]):
                left[s] = missing[s] if side == 1 else 0.0
            base = Side(left, missing_weight, n_missing) if side == 1 else Side(left, 0.0, 0)
            n_right0 = n_missing if side == 0 else 0
            side_score, side_pos = scan_side(settings, data, rows, node, parent_entropy, base,
                                             n_right0, right, batch)
            if side_pos > 0 and side_score > score:
                score = side_score
                pos = side_pos
                direction = side if n_missing > 0 else NO_MISSING
        if n_missing > 0 and end_nm > start:
            # every non-missing sample left, the missing ones right
            only_score = missing_only_score(settings, is_regression, node, missing_side,
                                            parent_entropy, left, right, rows.limits)
            if only_score > score:
                score = only_score
                pos = end_nm
                direction = MISSING_RIGHT
        if pos == end_nm and n_missing > 0:
            threshold = ALL_VALUES
        elif pos > 0:
            threshold = midpoint(value_row[pos - 1], value_row[pos])
        return score, pos, threshold, direction

    return search


@borrowing(inline="always")
def scan_any_side(settings, data, rows, node, parent_entropy, base, n_right0, right, batch):
    """One side's scan of :func:`_threshold_search`: the criterion's own."""
    if settings.criterion.code >= criteria.USER_IMPURITY:
        return scan_user(settings, data, rows, node, base, n_right0, batch)
    if (data.outputs.shape[1] >= 2 * ESTIMATE_MIN_OUTPUTS
            and settings.criterion.code == criteria.SQUARED_ERROR):
        return scan_squared_error_outputs(settings, data, rows, node, base, n_right0, right)
    if data.outputs.shape[1] > 0 or data.output_columns.shape[1] > 0:
        return scan_multi_output(settings, data, rows, node, base, n_right0, right)
    return scan_single_side(settings, data, rows, node, parent_entropy, base, n_right0, right,
                            batch)


@borrowing(inline="always")
def scan_single_side(settings, data, rows, node, parent_entropy, base, n_right0, right,
                     batch):
    """One side's scan of :func:`_threshold_search` for a single-output tree with a
    built-in criterion that needs no order statistics.

    Both built-in scans are compiled into their caller: a call passing the data and
    settings records cost about 400 cycles a (node, feature) pair, more than the scan of a
    small node (a random forest regressor on 500 x 10,000, 1 thread: 500 against 63 cycles
    a pair of 2-3 samples). Regression trees of 150k x 20 fit in 0.54 against 0.69 s (2
    threads); the first fit compiles about 1 s longer."""
    if data.is_regression:
        return scan_regression(settings, data, rows, node, base, n_right0)
    return scan_classification(settings, data, rows, node, parent_entropy, base, n_right0,
                               right)


# The presorted search's (:func:`search_pairs`), and the best splitter's sample-order search
# (:func:`jitree.kernels.sample_order.best_sorted`: single output, built-in criteria only;
# compiling the user and multi-output scans into the sample-order growth too made an
# Extra-Trees classifier's first fit compile in 64.9 s against 55.1 s)
best_threshold = _threshold_search(scan_any_side)
best_single_threshold = _threshold_search(scan_single_side)


# search_pairs asks for the first rows of the pair this many on while it searches one: a pair
# starts on rows of another feature than the last one's (the pairs come node by node, so that
# the scans of a node's features find its samples' targets in cache: by feature, a random
# forest regressor took 1.10x the time), rows the caches have not held since the level
# before. A random forest regressor (4 trees, 150k x 20, 1 thread): 1, 2, 4 and 8 pairs on
# 0.970, 0.957, 0.950 and 0.964 of the time; with the first targets of the pair 2 on asked
# for too, 0.990
PAIRS_AHEAD = 4


@jit(inline="always")
def prefetch_pair(data, nodes, j, f):
    """Ask for the first index and value of node ``j``'s segment of feature ``f`` and its
    last value (which :func:`non_missing_end` reads first)."""
    start = np.uint64(nodes.start[j])
    prefetch(data.sorted_index[f], start)
    prefetch(data.sorted_value[f], start)
    prefetch(data.sorted_value[f], np.uint64(nodes.end[j]) - _ONE)


@borrowing
def search_pairs(settings, data, nodes, pair_node, pair_feature, first, last, work, out):
    """The pairs ``first:last`` of :func:`find_splits` without an order criterion: the best
    threshold of each, both sides for its missing samples. ``work``: the block's scratch
    (left, right and missing statistics, its row of ``data.label_scratch``, a user
    criterion's batch); ``out``: the score, position, threshold and missing direction arrays.

    Compiled without reference counting: each pair's views of the sorted arrays and its
    records were otherwise counted up and down, two atomic operations each, a few dozen a
    pair (a random forest regressor searches 20 features a node: 17% of its fit in
    NRT_incref and NRT_decref)."""
    left, right, missing, scratch, batch = work
    out_score, out_pos, out_threshold, out_missing = out
    for p in range(first, last):
        if p + PAIRS_AHEAD < last:
            prefetch_pair(data, nodes, pair_node[p + PAIRS_AHEAD], pair_feature[p + PAIRS_AHEAD])
        parent_entropy, rows, node, missing_side = pair_search_start(
            data, settings, nodes, pair_node[p], pair_feature[p], scratch, missing)
        score, pos, threshold, direction = best_threshold(
            settings, data, rows, node, missing_side, parent_entropy, left, right, batch)
        out_score[p] = score
        out_pos[p] = pos
        out_threshold[p] = threshold
        out_missing[p] = direction


@jit
def search_ranked_pairs(settings, data, ranks, nodes, pair_node, pair_feature, first, last,
                        work, out):
    """The pairs ``first:last`` of :func:`find_splits` with an order criterion
    (absolute_error, quantile: :func:`jitree.kernels.pinball.scan_pinball` on the
    :class:`Ranks` ``ranks``); the random splitter's one threshold per pair, or the best.
    ``work``: the missing statistics and the block's row of ``data.label_scratch``."""
    missing, scratch = work
    out_score, out_pos, out_threshold, out_missing = out
    random_splitter = settings.random_splitter
    pinball_work = new_workspace(0)
    for p in range(first, last):
        j = pair_node[p]
        _, rows, node, missing_side = pair_search_start(data, settings, nodes, j,
                                                        pair_feature[p], scratch, missing)
        end_nm = rows.end
        n_missing = missing_side.count
        value_row = rows.value
        threshold = 0.0
        direction = NO_MISSING
        only = -1
        if random_splitter:
            only, threshold = random_cut(rows, n_missing,
                                         stream_key(settings.seed, nodes.id[j],
                                                    pair_feature[p]))
        score = -np.inf
        pos = -1
        if not random_splitter or only >= 0:
            pinball_work = reserve_workspace(pinball_work, node.count)
            score, pos, direction = scan_pinball(settings, data, ranks, rows, node,
                                                 missing_side, only, pinball_work)
        if pos == end_nm and n_missing > 0:
            threshold = ALL_VALUES
        elif pos > 0 and not random_splitter:
            threshold = midpoint(value_row[pos - 1], value_row[pos])
        out_score[p] = score
        out_pos[p] = pos
        out_threshold[p] = threshold
        out_missing[p] = direction


@pjit
def find_random_splits(data, settings, measure, nodes, pair_node, pair_feature, out):
    """:func:`find_splits` for the random splitter (Extra-Trees) of every criterion but the
    order criteria: each pair's one threshold (:func:`scan_random`, drawn from the stream of
    (seed, node id, feature)), its score and where its missing values go, into the
    :class:`PairResults` ``out`` (``out.pos`` -1: no split).

    A kernel of its own so that :func:`scan_random` is compiled into its loop: called once
    per pair, it received the records it takes (several hundred words) as copied arguments,
    which cost an Extra-Trees fit more than the draws and sums themselves. Compiled into
    :func:`find_splits` instead, the same inlining slowed the best splitter's regression
    scans five-fold.
    """
    # fields read into locals: inside a prange loop, numba loses writes made through a
    # record's field (and each local is passed to the threads once)
    label_scratch = data.label_scratch
    node_id = nodes.id
    node_start = nodes.start
    node_end = nodes.end
    node_stats = nodes.stats
    node_weight = nodes.weight
    node_lower = nodes.lower
    node_upper = nodes.upper
    monotonic = settings.monotonic
    seed = settings.seed
    out_score = out.score
    out_pos = out.pos
    out_threshold = out.threshold
    out_missing = out.missing
    n_stats = node_stats.shape[1]
    n_pairs = pair_node.shape[0]
    n_blocks = max(1, min(n_pairs, settings.n_blocks))
    for block in prange(n_blocks):
        settings_in = with_measure(settings, measure)
        left = np.empty(n_stats)
        right = np.empty(n_stats)
        missing = np.zeros(n_stats)
        scratch = label_scratch[block]
        for p in range(block * n_pairs // n_blocks, (block + 1) * n_pairs // n_blocks):
            j = pair_node[p]
            f = pair_feature[p]
            start = node_start[j]
            end = node_end[j]
            stats = node_stats[j]
            weight = node_weight[j]
            parent_entropy, index_row, value_row, label_row, end_nm, missing_weight = \
                pair_rows(data, measure, f, start, end, stats, weight, scratch, missing)
            rows = Rows(index_row, value_row, label_row, start, end_nm,
                        feature_limits(monotonic, f, node_lower[j], node_upper[j]))
            score, pos, threshold, direction = scan_random(
                settings_in, data, rows, Side(stats, weight, end - start), parent_entropy,
                stream_key(seed, node_id[j], f), Side(missing, missing_weight, end - end_nm),
                left, right)
            out_score[p] = score
            out_pos[p] = pos
            out_threshold[p] = threshold
            out_missing[p] = direction


find_random_splits_serial = serial_twin(find_random_splits)


@jit(inline="always")
def search_numeric(data, settings, nodes, pair_node, pair_feature, out, ranks,
                   random_search):
    """The threshold search of pairs on numeric and ordinal features:
    :func:`find_random_splits` for the random splitter without order criteria (``ranks``
    None), else :func:`find_splits`. ``random_search``: None where the growth never draws
    random thresholds here (the best splitter, and every order criterion), so that
    :func:`find_random_splits` is left out of the compiled growth (see
    :func:`jitree.kernels.grower.grow_tree`); True otherwise."""
    if random_search is not None and settings.random_splitter and ranks is None:
        if one_block(settings.n_blocks):
            find_random_splits_serial(data, plain_settings(settings), settings.criterion,
                                      nodes, pair_node, pair_feature, out)
        else:
            find_random_splits(data, plain_settings(settings), settings.criterion, nodes,
                               pair_node, pair_feature, out)
    elif one_block(settings.n_blocks):
        find_splits_serial(data, plain_settings(settings), settings.criterion, nodes,
                           pair_node, pair_feature, out, ranks)
    else:
        find_splits(data, plain_settings(settings), settings.criterion, nodes, pair_node,
                    pair_feature, out, ranks)


@pjit
def categorical_details(data, settings, measure, categories, splits, split_feature,
                        detail_offset, out_code, out_slot):
    """For each chosen split j of the :class:`NodeBatch` ``splits`` on a categorical feature
    (``detail_offset[j + 1] > detail_offset[j]``; the others are skipped): the code and child
    slot of every category present at the node, written at ``detail_offset[j]`` (room for
    min(n_categories, n_node) entries). Re-runs the deterministic search of
    :func:`find_category_splits` on the winning pair only."""
    # fields read into locals: inside a prange loop, numba loses writes made through a
    # record's field
    # the nodes' segments are disjoint: they share scratch row 0
    scratch = data.label_scratch[0]
    split_start = splits.start
    split_end = splits.end
    split_stats = splits.stats
    split_weight = splits.weight
    n_stats = split_stats.shape[1]
    for j in prange(split_start.shape[0]):
        settings_in = with_measure(settings, measure)
        criterion = measure
        first = detail_offset[j]
        if detail_offset[j + 1] == first:
            continue
        start = split_start[j]
        end = split_end[j]
        left = np.empty(n_stats)
        right = np.empty(n_stats)
        missing = np.zeros(n_stats)
        stats = split_stats[j]
        weight = split_weight[j]
        parent_entropy, index_row, value_row, label_row, end_nm, missing_weight = pair_rows(
            data, criterion, split_feature[j], start, end, stats, weight, scratch, missing)
        scan_categorical(settings_in, categories, data,
                         Rows(index_row, value_row, label_row, start, end_nm,
                              no_limits()),
                         Side(stats, weight, end - start), parent_entropy,
                         Side(missing, missing_weight, end - end_nm), (left, right),
                         (out_code[first:detail_offset[j + 1]],
                          out_slot[first:detail_offset[j + 1]]),
                         category_work(detail_offset[j + 1] - first, n_stats))


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
