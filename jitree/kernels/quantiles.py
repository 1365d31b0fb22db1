"""Quantile regression forests (Meinshausen 2006): conditional quantiles from the training
samples of the leaves a row reaches, in parallel over rows.

Weights. Row x reaches leaf l_t(x) of tree t (t = 1 .. T). Training sample i, of weight
w_ti in tree t (its bootstrap multiplicity, or its sample weight), gets

    omega_i(x) = (1 / T) sum_t w_ti 1{i in l_t(x)} / W_t(x),  W_t(x) = sum_j w_tj 1{j in l_t(x)},

so each tree contributes a total weight 1, spread over its leaf in proportion to w (trees whose
leaf holds no sample are left out of T). The weights sum to 1 and define the weighted empirical
distribution F(y | x) = sum_i omega_i(x) 1{y_i <= y}.

Quantile of a weighted sample ("linear" interpolation). The weights are rescaled to sum to
S(x) = sum_t n_t(x), the number of training draws in the row's leaves (n_t: the leaf's samples
counted with their bootstrap multiplicities), so that a weight reads as a number of
observations. With the distinct values v_1 < ... < v_m, their rescaled weights a_k and the
cumulative weights C_k = a_1 + ... + a_k, the q-quantile is taken at the 1-based rank
r = q (S - 1) + 1: with j the last index such that C_j <= r,

    Q(q) = v_1 if there is none, v_m if j = m, v_{j+1} if r - C_j >= 1, else
           v_j + (r - C_j) (v_{j+1} - v_j).

The other interpolations (:func:`between`) take v_j, v_{j+1}, their middle or the nearer of
the two in place of the linear step; each is NumPy's method of that name on the repeated sample
when the rescaled weights are integers.

The weights are relative: uniformly scaled sample weights give the same quantiles, and a row of
integer sample weight k is not k repeated rows (its weight is rescaled with the others to the
number of draws). Bootstrap multiplicities are counted as draws.

With integer rescaled weights a_k this is NumPy's default (``method="linear"``) quantile of the
sample in which v_k appears a_k times: a single tree without weights gives ``np.quantile`` of the
targets in the row's leaf (T trees that share that leaf give the quantile of those targets
repeated T times). It is also the rule of the ``quantile-forest`` package's weighted quantiles
(with ``max_samples_leaf=None``, ``weighted_leaves=True``), so that both give the same
quantiles on the same trees.
"""

import numpy as np
from numba import prange

from ._jit import jit, pjit
from .checks import nonfinite_rows
from .predict import (
    BLOCK_ROWS,
    _walk_block,
    _walk_block_missing,
    _walk_row,
    _walk_row_missing,
    infinite_rows,
)

CHUNK_ROWS = 256  # rows per parallel task: one set of scratch buffers each

# where a quantile between two values v_j < v_j+1 lies (NumPy's and quantile-forest's
# ``interpolation`` names): see :func:`between`
LINEAR, LOWER, HIGHER, MIDPOINT, NEAREST = 0, 1, 2, 3, 4
INTERPOLATIONS = {"linear": LINEAR, "lower": LOWER, "higher": HIGHER, "midpoint": MIDPOINT,
                  "nearest": NEAREST}
_INDEX_BITS = 32  # an entry's sort key: its target's rank above, its index in the row below


@jit
def quantile_position(cumulative, n, total, quantile):
    """Where the ``quantile`` of n distinct increasing values with cumulative weights
    ``cumulative[:n]`` (sum ``total``) lies: ``(j, step)``, the quantile being value j plus
    ``step`` times the gap to value j + 1 (step 0 when j is the first or the last value, or
    on value j itself). The step is measured from the 0-based position q (S - 1), as NumPy
    does, so that a quantile as small as 1e-300 is still past the first value."""
    position = quantile * (total - 1.0)
    j = np.searchsorted(cumulative[:n], position + 1.0, side="right") - 1
    if j >= 0 and position < cumulative[j] - 1.0:
        j -= 1  # position + 1 rounded up onto cumulative[j]
    if j < 0:
        return 0, 0.0
    if j >= n - 1:
        return n - 1, 0.0
    step = position - (cumulative[j] - 1.0)
    if step >= 1.0:
        return j + 1, 0.0  # on value j + 1 itself: returned exactly, not as v_j + (v_j+1 - v_j)
    return j, step


@jit
def between(low, high, step, cumulative, method):
    """The quantile ``step`` (0 < step < 1) of the way from the value ``low`` (cumulative
    weight ``cumulative``: its last position in the sample) to the next value, ``high``:
    ``LINEAR`` interpolates, ``LOWER`` and ``HIGHER`` take the one or the other, ``MIDPOINT``
    their middle, ``NEAREST`` the nearer (at a tie, as NumPy: the value at the even 0-based
    position of the two, ``low`` when ``cumulative`` is odd). With integer weights each is
    NumPy's ``np.quantile(method=...)`` of the repeated sample."""
    if method == LINEAR:
        return low + step * (high - low)
    if method == LOWER:
        return low
    if method == HIGHER:
        return high
    if method == MIDPOINT:
        return low + 0.5 * (high - low)
    if step < 0.5 or (step == 0.5 and np.int64(np.floor(cumulative)) % 2 == 1):
        return low
    return high


@jit
def sorted_weighted_quantiles(values, weights, cumulative, quantiles, method, out):
    """out[k] = the ``quantiles[k]``-quantile of distinct ``values`` in increasing order with
    positive ``weights`` (observations; see the module docstring for the rule), between two
    values by ``method`` (:func:`between`); ``cumulative``: scratch of the same length."""
    n = values.shape[0]
    total = 0.0
    for k in range(n):
        total += weights[k]
        cumulative[k] = total
    for k in range(quantiles.shape[0]):
        j, step = quantile_position(cumulative, n, total, quantiles[k])
        out[k] = values[j] if step == 0.0 else between(values[j], values[j + 1], step,
                                                       cumulative[j], method)


_RADIX_BITS = 8  # bits of a digit of the radix sort (256 buckets)
_RADIX_MIN = 32  # fewer entries: an insertion sort


@jit
def _radix_pass(source, target, shift, counts):
    """target = source stably ordered by the digit at ``shift``."""
    digit_mask = (1 << _RADIX_BITS) - 1
    counts[:] = 0
    for j in range(source.shape[0]):
        counts[(source[j] >> shift) & digit_mask] += 1
    total = 0
    for d in range(counts.shape[0]):
        size = counts[d]
        counts[d] = total
        total += size
    for j in range(source.shape[0]):
        d = (source[j] >> shift) & digit_mask
        target[counts[d]] = source[j]
        counts[d] += 1


@jit
def _insertion_sort(keys):
    """``keys`` in increasing order as unsigned 64-bit integers."""
    for j in range(1, keys.shape[0]):
        key = keys[j]
        k = j - 1
        while k >= 0 and np.uint64(keys[k]) > np.uint64(key):
            keys[k + 1] = keys[k]
            k -= 1
        keys[k + 1] = key


@jit
def sort_by_rank(keys, scratch, rank_bits):
    """Sort the int64 ``keys`` (rank << 32 | index, the indices increasing; the rank of
    ``rank_bits`` bits, up to 32) by rank: a stable LSD radix sort of the rank's bits, 8 bits
    a pass, so equal ranks keep their index order. The keys end in increasing order as
    unsigned integers: ``np.sort(keys.view(np.uint64))``, which is ``np.sort(keys)`` for
    ranks below 2**31. ``scratch``: as long as ``keys``. Fewer than 32 keys take an
    insertion sort. About 8x faster than ``keys.sort()`` on the hundred entries of a row of
    a 100-tree forest."""
    if keys.shape[0] < _RADIX_MIN:
        _insertion_sort(keys)
        return
    counts = np.empty(1 << _RADIX_BITS, dtype=np.int64)
    source, target = keys, scratch
    passes = 0
    for shift in range(_INDEX_BITS, _INDEX_BITS + rank_bits, _RADIX_BITS):
        _radix_pass(source, target, shift, counts)
        source, target = target, source
        passes += 1
    if passes % 2:  # the keys ended in scratch; a loop, so that no shape check is compiled
        for j in range(keys.shape[0]):
            keys[j] = scratch[j]


@jit
def row_entries(leaf_rows):
    """Entries of one row's leaves (``leaf_rows``: their rows of the leaf table)."""
    n_entries = 0
    for t in range(leaf_rows.shape[0]):
        n_entries += np.int64(leaf_rows[t, 1])
    return n_entries


@jit
def row_quantiles(leaf_rows, entries, distinct_target, quantiles, method, buffers, out):
    """The quantiles of one row into ``out`` (between two values by ``method``: see
    :func:`between`); NaN when none of its leaves holds a sample.

    ``leaf_rows`` (n_trees, 4): the row of the :class:`~jitree.kernels.records.QuantileLayout`
    leaf table of its leaf in each tree; ``entries`` and ``distinct_target``: the layout's.
    ``buffers`` (4, n) float64 scratch with n at least :func:`row_entries`. Serial: callable
    from users' ``@njit`` code."""
    keys = buffers[0].view(np.int64)
    weights = buffers[1]
    ranks = buffers[2].view(np.int64)
    merged = buffers[3]
    n_trees = 0
    draws = 0.0  # S(x)
    for t in range(leaf_rows.shape[0]):
        if leaf_rows[t, 1] > 0.0:
            n_trees += 1
            draws += leaf_rows[t, 2]
    if n_trees == 0:
        out[:] = np.nan
        return
    scale = draws / n_trees  # each tree's share of S(x)
    n_entries = 0
    for t in range(leaf_rows.shape[0]):
        length = np.int64(leaf_rows[t, 1])
        if length == 1:  # the block's one sample, inline: weight share 1
            keys[n_entries] = (np.int64(leaf_rows[t, 3]) << _INDEX_BITS) | n_entries
            weights[n_entries] = scale
            n_entries += 1
        elif length > 1:
            start = np.int64(leaf_rows[t, 0])
            block_weight = 0.0
            for e in range(start, start + length):
                block_weight += entries[e, 1]
            share = scale / block_weight
            for e in range(start, start + length):
                keys[n_entries] = (np.int64(entries[e, 0]) << _INDEX_BITS) | n_entries
                weights[n_entries] = entries[e, 1] * share
                n_entries += 1
    row_keys = keys[:n_entries]
    rank_bits = 1
    while (np.int64(1) << rank_bits) < distinct_target.shape[0]:
        rank_bits += 1
    sort_by_rank(row_keys, ranks[:n_entries], rank_bits)
    # entries of one target value (one rank) merge: the rule is on distinct values
    m = 0
    mask = (np.int64(1) << _INDEX_BITS) - 1
    for k in range(n_entries):
        rank = row_keys[k] >> _INDEX_BITS
        weight = weights[row_keys[k] & mask]
        if m > 0 and rank == ranks[m - 1]:
            merged[m - 1] += weight
        else:
            ranks[m] = rank
            merged[m] = weight
            m += 1
    total = 0.0
    for k in range(m):  # weights[:m] is free again: the cumulative weights
        total += merged[k]
        weights[k] = total
    for k in range(quantiles.shape[0]):
        j, step = quantile_position(weights, m, total, quantiles[k])
        low = distinct_target[ranks[j]]
        out[k] = low if step == 0.0 else between(low, distinct_target[ranks[j + 1]], step,
                                                 weights[j], method)


@pjit
def predict_quantiles(leaf_rows, layout, quantiles, method, out):
    """out[i, k] = the ``quantiles[k]``-quantile of row i (``method``: see :func:`between`),
    whose leaf in tree t has the row
    ``leaf_rows[i, t]`` of the leaf table of ``layout`` (a
    :class:`~jitree.kernels.records.QuantileLayout`), in parallel over chunks of rows, each
    with its own buffers.

    The caller checks the leaf rows (blocks inside the entries, ranks inside the distinct
    targets) and that the quantiles are in [0, 1].
    """
    entries = layout.entries
    distinct_target = layout.distinct_target
    n_rows = leaf_rows.shape[0]
    n_chunks = (n_rows + CHUNK_ROWS - 1) // CHUNK_ROWS
    for chunk in prange(n_chunks):
        first = chunk * CHUNK_ROWS
        last = min(n_rows, first + CHUNK_ROWS)
        longest = 1
        for i in range(first, last):
            longest = max(longest, row_entries(leaf_rows[i]))
        buffers = np.empty((4, longest))
        for i in range(first, last):
            row_quantiles(leaf_rows[i], entries, distinct_target, quantiles, method, buffers,
                          out[i])


@jit
def _chunk_leaf_rows(X, first, last, missing, flat, leaf_table, leaf_rows):
    """leaf_rows[i - first, t] = leaf_table[leaf of row i in tree t] for rows first:last,
    walking ``flat`` (a :class:`~jitree.kernels.records.FlatTrees`) tree by tree as
    :func:`jitree.kernels.predict.predict_flat` does."""
    nodes = np.empty(BLOCK_ROWS, dtype=np.uint64)
    feature = flat.feature
    threshold = flat.threshold
    left = flat.left
    missing_right = flat.missing_right
    width = leaf_table.shape[1]
    for t in range(flat.root.shape[0]):
        root = flat.root[t]
        depth = flat.depth[t]
        i = first
        while i + BLOCK_ROWS <= last:
            if missing:
                _walk_block_missing(X, i, feature, threshold, left, missing_right, depth,
                                    nodes, root)
            else:
                _walk_block(X, i, feature, threshold, left, depth, nodes, root)
            for r in range(BLOCK_ROWS):
                for k in range(width):
                    leaf_rows[i + r - first, t, k] = leaf_table[nodes[r], k]
            i += BLOCK_ROWS
        while i < last:
            if missing:
                leaf = _walk_row_missing(X, i, feature, threshold, left, missing_right, root)
            else:
                leaf = _walk_row(X, i, feature, threshold, left, root)
            for k in range(width):
                leaf_rows[i - first, t, k] = leaf_table[leaf, k]
            i += 1


@pjit
def predict_quantiles_flat(X, X_bits, magnitude_mask, infinity, flat, leaf_table, layout,
                           quantiles, method, chunk_rows, out):
    """:func:`predict_quantiles` of the rows of X, walked down the trees of ``flat`` (their
    flat layouts concatenated; ``leaf_table``: the layout's leaf table in flat order) in the
    same parallel task, chunk by chunk: no per-tree pass, no array of every row's leaves.
    ``X_bits``, ``magnitude_mask``, ``infinity``: as for
    :func:`jitree.kernels.predict.predict_flat`; returns whether X holds an infinity (the
    caller raises)."""
    entries = layout.entries
    distinct_target = layout.distinct_target
    n_trees = flat.root.shape[0]
    width = leaf_table.shape[1]
    n_rows = X.shape[0]
    n_chunks = (n_rows + chunk_rows - 1) // chunk_rows
    infinite = np.zeros(n_chunks, dtype=np.uint8)
    for chunk in prange(n_chunks):
        first = chunk * chunk_rows
        last = min(n_rows, first + chunk_rows)
        missing = nonfinite_rows(X_bits, first, last, infinity)
        if missing:
            infinite[chunk] = infinite_rows(X_bits, first, last, magnitude_mask, infinity)
        leaf_rows = np.empty((last - first, n_trees, width))
        _chunk_leaf_rows(X, first, last, missing, flat, leaf_table, leaf_rows)
        longest = 1
        for i in range(last - first):
            longest = max(longest, row_entries(leaf_rows[i]))
        buffers = np.empty((4, longest))
        for i in range(last - first):
            row_quantiles(leaf_rows[i], entries, distinct_target, quantiles, method, buffers,
                          out[first + i])
    return infinite.any()
