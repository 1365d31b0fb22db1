"""Criteria of order statistics: ``absolute_error`` and ``quantile`` (the pinball loss).

Under these criteria a node's value is a weighted quantile ``q`` of its targets (the median
for ``absolute_error``) and its impurity the weighted mean pinball loss about it::

    loss = sum_i w_i rho(y_i - q),   rho(u) = alpha u (u >= 0), (alpha - 1) u (u < 0)

``absolute_error`` is twice the loss at ``alpha = 0.5`` (``sum_i w_i |y_i - q| / W``).

**Weighted quantile.** With the samples in increasing order of y and ``F(k)`` the weight of
the first k + 1 of them: ``q`` is the y of the first sample with ``F(k) > alpha W``; when a
prefix weighs exactly ``alpha W``, ``q`` is the midpoint of its last value and the next one
(the median of an even number of unit weights is the mean of the two middle values). Any
point between those two minimises the loss, so the loss does not depend on the choice.

**Statistics.** These criteria keep four statistics per node (``N_STATS``): ``sum w y`` and
``sum w y**2`` as squared error does (:func:`jitree.kernels.criteria.accumulate`), then the
node's pinball loss (``STAT_LOSS``) and quantile (``STAT_VALUE``), which are not sums: they
are computed from the node's samples in order of y (:func:`order_statistics`).

**Split search.** A node's samples are ranked by target once per search
(:func:`rank_targets`, into a :class:`~jitree.kernels.records.Ranks`). The scan of a feature
then inserts the samples in the feature's order into a Fenwick tree over those ranks that
holds prefix sums of w and of w (y - c) (``c`` the node's mean, so that the sums do not
cancel on offset targets); after each insertion a descent of the tree finds the quantile of
the samples inserted so far and the weight and sum below it, which give their loss:

    loss = alpha (S - S_below - q (W - W_below)) + (1 - alpha) (q W_below - S_below)

A forward pass gives the loss of every left side, a backward pass of every right side
(O(n log n) per node and feature, as scikit-learn's absolute error since 1.8); missing
values add the passes with the missing samples inserted first, one per side they may take.

**Several outputs.** A multi-output tree keeps the four statistics of each output one after
another (output o's block at ``N_STATS * o``; its targets in ``TreeData.outputs``, see
:func:`output_columns`), ranks each output's targets on their own (a row of
:class:`Ranks` per output), and a scan runs the passes of each output, adding their losses
position by position: a split minimises the sum of the outputs' losses, and a node's value
is each output's quantile (scikit-learn's multi-output ``absolute_error``).
"""

import numpy as np
from numba import prange
from numba.cpython.unsafe.numbers import leading_zeros, trailing_zeros

from ._jit import jit, pjit
from .categorical import MISSING_RIGHT, NO_MISSING, child_allowed, monotone

N_STATS = 4     # sum w y, sum w y**2, pinball loss, quantile
STAT_LOSS = 2
STAT_VALUE = 3


@jit
def pinball(value, q, alpha):
    """rho(value - q): the pinball loss of one unit-weight sample."""
    if value >= q:
        return alpha * (value - q)
    return (1.0 - alpha) * (q - value)


@jit
def order_statistics(values, weights, alpha):
    """``(q, loss)`` of samples given in increasing order of value: their weighted
    ``alpha``-quantile (see the module) and the sum of their weighted pinball losses about
    it. Zero weights count nowhere."""
    n = values.shape[0]
    total = 0.0
    for k in range(n):
        total += weights[k]
    target = alpha * total
    cumulative = 0.0
    previous = -1  # the last sample of positive weight before the quantile's
    q = np.nan
    for k in range(n):
        w = weights[k]
        if w <= 0.0:
            continue
        if cumulative + w > target:
            if cumulative == target and previous >= 0:
                q = values[previous] / 2.0 + values[k] / 2.0
            else:
                q = values[k]
            break
        cumulative += w
        previous = k
    if q != q:  # rounding left every prefix at or below the target: the largest value
        q = values[previous] if previous >= 0 else 0.0
    loss = 0.0
    for k in range(n):
        if weights[k] > 0.0:
            loss += weights[k] * pinball(values[k], q, alpha)
    return q, loss


@jit(inline="always")
def target_of(data, output, i):
    """Sample ``i``'s target of output ``output``: ``data.target`` for one output, else
    column ``N_STATS * output`` of ``data.outputs`` (see :func:`output_columns`)."""
    if data.outputs.shape[1] > 0:
        return data.outputs[i, N_STATS * output]
    return data.target[i]


def output_columns(target):
    """``TreeData.outputs`` of a multi-output order criterion (target (n_samples,
    n_outputs)): each output's block of ``N_STATS`` statistics as a sample adds them, ``y_j``,
    ``y_j**2`` and zeros for the loss and the quantile, which are not sums (the kernels
    that make nodes compute them, :func:`child_order_statistics`)."""
    n_samples, n_outputs = target.shape
    rows = np.zeros((n_samples, N_STATS * n_outputs))
    rows[:, 0::N_STATS] = target
    rows[:, 1::N_STATS] = target * target
    return rows


@pjit
def rank_targets(data, ranks, node_start, node_end):
    """Rank the samples of each node (rows ``node_start[j]:node_end[j]`` of the sorted
    arrays) by each output's target into the :class:`Ranks` ``ranks``: ``ranked[o, start +
    r]`` is the node's sample of rank r in output o (equal targets in the order of feature
    0) and ``target_rank[o, i]`` the rank of sample i. Parallel over the nodes (disjoint
    segments)."""
    sorted_index = data.sorted_index
    target_rank = ranks.target_rank
    ranked = ranks.ranked
    for j in prange(node_start.shape[0]):
        start = node_start[j]
        n = node_end[j] - start
        values = np.empty(n)
        for o in range(ranked.shape[0]):
            for k in range(n):
                values[k] = target_of(data, o, sorted_index[0, start + k])
            order = np.argsort(values, kind="mergesort")
            for r in range(n):
                i = sorted_index[0, start + order[r]]
                ranked[o, start + r] = i
                target_rank[o, i] = r


@jit
def _sorted_samples(data, ranked, output, first, end, keep, slot, values, weights):
    """The targets of output ``output`` and the weights of the samples ranked ``first:end``
    (``ranked``, the output's row) whose ``keep[i] == slot``, in increasing order of
    target, into ``values``, ``weights``; returns their number."""
    m = 0
    for r in range(first, end):
        i = ranked[r]
        if keep[i] == slot:
            values[m] = target_of(data, output, i)
            weights[m] = data.sample_weight[i] if data.weighted else 1.0
            m += 1
    return m


@pjit
def child_order_statistics(data, ranks, splits, goes_left, children, alpha):
    """Quantile and loss of each output of the two children of each split of the
    :class:`SplitBatch` ``splits`` (samples marked by ``goes_left``, ranked by
    :func:`rank_targets`) into their rows of ``children.stats`` (output o's block at
    ``N_STATS * o``). Parallel over the splits."""
    split_start = splits.start
    split_end = splits.end
    child_offset = splits.child_offset
    child_stats = children.stats
    ranked = ranks.ranked
    for j in prange(split_start.shape[0]):
        start = split_start[j]
        end = split_end[j]
        values = np.empty(end - start)
        weights = np.empty(end - start)
        for o in range(ranked.shape[0]):
            for side in range(2):
                # goes_left is 1 for the left child, slot 0
                m = _sorted_samples(data, ranked[o], o, start, end, goes_left,
                                    np.uint8(1 - side), values, weights)
                q, loss = order_statistics(values[:m], weights[:m], alpha)
                row = child_offset[j] + side
                child_stats[row, N_STATS * o + STAT_VALUE] = q
                child_stats[row, N_STATS * o + STAT_LOSS] = loss


# -- the order structures of a scan ------------------------------------------------------------
# A pass inserts a node's samples one at a time, by rank of target, and after each insertion
# asks for the quantile's rank and the weight and sum of the ranks below it. Two structures
# answer:
#
# - a *walk*: a bitset of the ranks inserted, and a pointer to the quantile's rank that moves
#   to the previous or next inserted rank until the weight below it is right. With unit
#   weights an insertion moves the quantile by at most one sample, so a pass costs O(n)
#   (the bitset's scans included: the gaps between inserted ranks sum to n per word level);
#   with weights, by at most the weight inserted over the smallest weight;
# - a Fenwick tree over the ranks (O(log n) per insertion and per question, whatever the
#   weights), for nodes whose weights span more than WALK_SPAN.
#
# Measured on one feature of 100k samples (one pass, one thread): the Fenwick tree 5.6 ms,
# the walk 2.2 ms with unit weights and 2.8 ms with weights (the walk made a depth-8 fit of
# 100k x 10 1.4x faster).

# largest ratio of a node's largest to smallest positive weight that the walk takes
WALK_SPAN = 64.0
_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)


@jit
def _top_bit(n):
    top = 1
    while top * 2 <= n:
        top *= 2
    return top


@jit
def new_workspace(capacity):
    """Scratch arrays of the scans of one block of (node, feature) pairs, for nodes of up
    to ``capacity`` samples: ``(float rows (7, capacity), ranks, bits)``. A block reuses
    them from pair to pair (:func:`reserve_workspace`): small nodes are many, and
    allocating their arrays for each pair cost as much as scanning them."""
    return (np.empty((7, capacity)), np.empty(capacity, dtype=np.int32),
            np.empty((capacity + 63) // 64, dtype=np.uint64))


@jit
def reserve_workspace(work, n):
    """``work`` if it holds nodes of ``n`` samples, else a larger one."""
    if work[1].shape[0] >= n:
        return work
    return new_workspace(max(n, 2 * work[1].shape[0]))


@jit
def _new_order(n, walk, bits):
    """The structure of a pass over ``n`` ranks: ``(table, bits, n, top, walk)``. Fenwick
    (``walk`` False): ``table`` holds the weight and the sum of each range of ranks side by
    side (one cache line per level), with a row for every index a descent may visit (up to
    ``2 top - 1``, ``top`` the largest power of two up to n); the rows past n weigh +inf, so
    that a descent never steps onto them and needs no test (its steps are then selects, not
    mispredicted branches). Walk: ``bits`` (scratch, of at least n bits), one bit per
    rank."""
    top = _top_bit(n)
    table = np.empty((2 * top if not walk else 0, 2))
    return table, bits[:(n + 63) // 64], n, top, walk


@jit
def _clear(order):
    table, bits, n, top, walk = order
    if walk:
        bits[:] = 0
        return
    for k in range(n + 1):
        table[k, 0] = 0.0
        table[k, 1] = 0.0
    for k in range(n + 1, table.shape[0]):
        table[k, 0] = np.inf
        table[k, 1] = 0.0


@jit
def _fenwick_add(table, n, rank, w, s):
    """Add weight ``w`` and sum ``s`` at ``rank`` (0-based) of the Fenwick tree."""
    k = rank + 1
    while k <= n:
        table[k, 0] += w
        table[k, 1] += s
        k += k & -k


@jit
def _fenwick_below(table, n, top, target):
    """``(r, W, S)``: ``r`` the first rank whose prefix weight exceeds ``target`` (the
    quantile's rank; at most the last), ``W`` and ``S`` the weight and sum of the ranks
    before it."""
    position = 0
    weight = 0.0
    total = 0.0
    bit = top
    while bit > 0:
        k = position + bit
        w = weight + table[k, 0]
        take = w <= target
        position = k if take else position
        weight = w if take else weight
        total = total + table[k, 1] if take else total
        bit >>= 1
    return min(position, n - 1), weight, total


@jit
def _next_present(bits, rank):
    """The first rank after ``rank`` whose bit is set, or -1."""
    r = rank + 1
    word = r >> 6
    if word >= bits.shape[0]:
        return -1
    x = bits[word] & (_ONES << np.uint64(r & 63))
    while x == 0:
        word += 1
        if word >= bits.shape[0]:
            return -1
        x = bits[word]
    return (word << 6) + trailing_zeros(x)


@jit
def _previous_present(bits, rank):
    """The last rank before ``rank`` whose bit is set, or -1."""
    if rank <= 0:
        return -1
    r = rank - 1
    word = r >> 6
    x = bits[word] & (_ONES >> np.uint64(63 - (r & 63)))
    while x == 0:
        word -= 1
        if word < 0:
            return -1
        x = bits[word]
    return (word << 6) + 63 - leading_zeros(x)


@jit
def _walk(bits, by_rank, centre, cut, p, below_w, below_s):
    """Move the quantile's rank ``p`` (with the weight and sum below it) to the first
    inserted rank whose prefix weight exceeds ``cut``."""
    values, weights = by_rank
    unit = weights.shape[0] == 0
    while below_w > cut:
        q = _previous_present(bits, p)
        if q < 0:
            break
        w = 1.0 if unit else weights[q]
        below_w -= w
        below_s -= w * (values[q] - centre)
        p = q
    while True:
        w = 1.0 if unit else weights[p]
        if below_w + w > cut:
            break
        q = _next_present(bits, p)
        if q < 0:
            break
        below_w += w
        below_s += w * (values[p] - centre)
        p = q
    return p, below_w, below_s


@jit
def _pass(ranks, by_rank, value_row, positions, base, alpha, centre, order, out, add):
    """Insert the samples at positions ``first, first + step, ..`` up to ``stop`` excluded
    (``positions``: ``(first, stop, step, start, end)``, the node's non-missing rows being
    ``start:end``), after the ``base`` positions ``(begin, end)`` (the missing samples when
    they join this side). After each insertion that ends a candidate side (the next
    position holds another value, or ends the rows), write the pinball loss of the samples
    inserted so far to ``out[0][k - start]`` and, when ``out[1]`` is not empty, their
    quantile (``add``: add the loss to ``out[0][k - start]``, another output's). ``ranks[k -
    start]``: the rank of the sample at position k; ``by_rank``: the node's targets and
    weights by rank (weights empty: all 1); ``order``: see :func:`_new_order`. Returns the
    loss of the base alone (0 if empty)."""
    first, stop, step, start, end = positions
    out_loss, out_value = out
    values, weights = by_rank
    unit = weights.shape[0] == 0
    table, bits, n, top, walk = order
    _clear(order)
    with_value = out_value.shape[0] > 0
    total_w = 0.0
    total_s = 0.0
    p = -1
    below_w = 0.0
    below_s = 0.0
    base_loss = 0.0
    for phase in range(2):
        # phase 0: the base, whose loss is returned; phase 1: the positions
        if phase == 0:
            k, stop_k, step_k = base[0], base[1], 1
        else:
            k, stop_k, step_k = first, stop, step
        while k != stop_k:
            r = np.int64(ranks[k - start])
            w = 1.0 if unit else weights[r]
            s = w * (values[r] - centre)
            total_w += w
            total_s += s
            if walk:
                bits[r >> 6] |= np.uint64(1) << np.uint64(r & 63)
                if p < 0:
                    p = r
                lower = r < p
                below_w += w if lower else 0.0
                below_s += s if lower else 0.0
            else:
                _fenwick_add(table, n, r, w, s)
            following = k + step_k
            if phase == 0:
                ends = following == stop_k
            else:
                ends = not (following >= start and following < end
                            and value_row[following] == value_row[k])
            if ends:
                cut = alpha * total_w
                if walk:
                    p, below_w, below_s = _walk(bits, by_rank, centre, cut, p, below_w,
                                                below_s)
                    rank = p
                else:
                    rank, below_w, below_s = _fenwick_below(table, n, top, cut)
                q = values[rank] - centre
                loss = (alpha * (total_s - below_s - q * (total_w - below_w))
                        + (1.0 - alpha) * (q * below_w - below_s))
                if phase == 0:
                    base_loss = loss
                else:
                    if add:
                        out_loss[k - start] += loss
                    else:
                        out_loss[k - start] = loss
                    if with_value:
                        out_value[k - start] = _quantile_value(order, by_rank, rank,
                                                               below_w, cut)
            k = following
    return base_loss


@jit
def _quantile_value(order, by_rank, rank, below_w, cut):
    """The quantile of the samples inserted: the target of ``rank``, or when the ranks
    below it weigh exactly ``cut``, the midpoint with the last of them of positive weight."""
    values, weights = by_rank
    if not (below_w == cut and below_w > 0.0):
        return values[rank]
    table, bits, n, top, walk = order
    if walk:
        q = _previous_present(bits, rank)
        while q >= 0 and weights.shape[0] > 0 and weights[q] <= 0.0:
            q = _previous_present(bits, q)
    else:
        # the first rank whose prefix weight reaches cut
        q = 0
        weight = 0.0
        bit = top
        while bit > 0:
            k = q + bit
            w = weight + table[k, 0]
            take = w < cut
            q = k if take else q
            weight = w if take else weight
            bit >>= 1
    if q < 0:
        return values[rank]
    return values[q] / 2.0 + values[rank] / 2.0


@jit
def scan_pinball(settings, data, ranks, rows, node, missing, only, work):
    """Best threshold split of one node on one feature under ``absolute_error`` or
    ``quantile`` (``settings.quantile``), with its missing values: returns
    ``(score, pos, direction)`` as :func:`jitree.kernels.split.find_splits` records them
    (``pos == -1``: none; ``pos == rows.end``: the non-missing samples left, the missing
    ones right). The score is minus the children's summed pinball loss.

    ``only`` >= 0 restricts the search to the split before position ``only`` (the random
    splitter's threshold; ``only == rows.end``: value-or-missing). Candidates are visited as
    the other scans visit them: missing samples right, then left, each by increasing
    position, then the value-or-missing split; a candidate replaces the best only if
    strictly better. ``ranks``: the node's samples ranked by :func:`rank_targets`;
    ``work``: a :func:`new_workspace` for nodes of at least this one's size.
    """
    alpha = settings.quantile
    min_samples_leaf = settings.min_samples_leaf
    min_weight_leaf = settings.min_weight_leaf
    index_row = rows.index
    value_row = rows.value
    start = rows.start
    end_nm = rows.end
    limits = rows.limits
    constrained = limits.monotonic != 0
    n = node.count
    n_missing = missing.count
    n_present = end_nm - start
    best_score = -np.inf
    best_pos = -1
    best_direction = NO_MISSING
    if n_present < 1 or n < 2:
        return best_score, best_pos, best_direction
    # each output's targets and weights by rank, and the spread of the node's weights
    weighted = data.weighted
    rows_work, position_rank, bits = work
    values = rows_work[0, :n]
    weights = rows_work[1, :n if weighted else 0]
    n_sides = 2 if n_missing > 0 else 1
    left_loss = rows_work[2:2 + n_sides, :n_present]
    right_loss = rows_work[4:4 + n_sides, :n_present]
    left_value = np.empty((n_sides, n_present if constrained else 0))
    right_value = np.empty((n_sides, n_present if constrained else 0))
    prefix_weight = rows_work[6, :n_present]
    no_base = (0, 0)
    with_missing = (end_nm, end_nm + n_missing)
    missing_loss = 0.0
    for o in range(ranks.ranked.shape[0]):
        # the outputs' losses add up (output o > 0 adds its own); monotonic constraints,
        # which read the quantiles, take one output
        centre = node.stats[N_STATS * o] / node.weight
        ranked = ranks.ranked[o]
        lightest = np.inf
        heaviest = 0.0
        for r in range(n):
            i = ranked[start + r]
            values[r] = target_of(data, o, i)
            if weighted:
                w = data.sample_weight[i]
                weights[r] = w
                if w > 0.0:
                    lightest = min(lightest, w)
                    heaviest = max(heaviest, w)
        by_rank = (values, weights)
        order = _new_order(n, not weighted or heaviest <= WALK_SPAN * lightest, bits)
        for k in range(n):  # by position: the rank of each sample
            position_rank[k] = ranks.target_rank[o, index_row[start + k]]
        if o == 0:
            total = 0.0
            for k in range(n_present):
                total += weights[position_rank[k]] if weighted else 1.0
                prefix_weight[k] = total
        add = o > 0
        for side in range(n_sides):
            # side 0: missing samples right (or none); side 1: missing samples left
            _pass(position_rank, by_rank, value_row, (start, end_nm, 1, start, end_nm),
                  with_missing if side == 1 else no_base, alpha, centre, order,
                  (left_loss[side], left_value[side]), add)
            base_loss = _pass(position_rank, by_rank, value_row,
                              (end_nm - 1, start - 1, -1, start, end_nm),
                              with_missing if side == 0 else no_base, alpha, centre, order,
                              (right_loss[side], right_value[side]), add)
            if side == 0:
                missing_loss += base_loss
    first = start
    last = end_nm - 1  # candidates: left = start..k, right = k+1..end_nm-1
    if only >= 0:
        first = max(start, only - 1)
        last = min(end_nm - 1, only)
    for side in range(n_sides):
        n_left0 = n_missing if side == 1 else 0
        weight_left0 = missing.weight if side == 1 else 0.0
        for k in range(first, last):
            if value_row[k + 1] <= value_row[k]:
                continue
            count_left = k + 1 - start + n_left0
            weight_left = prefix_weight[k - start] + weight_left0
            weight_right = node.weight - weight_left
            if not (child_allowed(count_left, weight_left, min_samples_leaf, min_weight_leaf)
                    and child_allowed(n - count_left, weight_right, min_samples_leaf,
                                      min_weight_leaf)):
                continue
            if constrained and not monotone(limits, left_value[side, k - start],
                                            right_value[side, k + 1 - start]):
                continue
            score = -(left_loss[side, k - start] + right_loss[side, k + 1 - start])
            if score > best_score:
                best_score = score
                best_pos = k + 1
                best_direction = side if n_missing > 0 else NO_MISSING
    if n_missing > 0 and (only < 0 or only == end_nm):
        # every non-missing sample left, the missing ones right
        weight_left = prefix_weight[n_present - 1]
        if (child_allowed(n_present, weight_left, min_samples_leaf, min_weight_leaf)
                and child_allowed(n_missing, missing.weight, min_samples_leaf,
                                  min_weight_leaf)):
            allowed = True
            if constrained:
                missing_value = _missing_value(data, index_row, end_nm, n_missing, alpha)
                allowed = monotone(limits, left_value[0, n_present - 1], missing_value)
            score = -(left_loss[0, n_present - 1] + missing_loss)
            if allowed and score > best_score:
                best_score = score
                best_pos = end_nm
                best_direction = MISSING_RIGHT
    return best_score, best_pos, best_direction


@jit
def _missing_value(data, index_row, first, count, alpha):
    """Quantile of the samples at positions ``first:first + count`` of ``index_row``."""
    values = np.empty(count)
    weights = np.empty(count)
    for k in range(count):
        i = index_row[first + k]
        values[k] = data.target[i]
        weights[k] = data.sample_weight[i] if data.weighted else 1.0
    order = np.argsort(values, kind="mergesort")
    return order_statistics(values[order], weights[order], alpha)[0]
