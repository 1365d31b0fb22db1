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

    Q(q) = v_1 if there is none, v_m if j = m, else v_j + min(r - C_j, 1) (v_{j+1} - v_j).

With integer weights this is NumPy's default (``method="linear"``) quantile of the sample in
which v_k appears a_k times: a single tree without weights gives ``np.quantile`` of the
targets in the row's leaf (T trees that share that leaf give the quantile of those targets
repeated T times). It is also the rule of the ``quantile-forest`` package's weighted quantiles
(with ``max_samples_leaf=None``, ``weighted_leaves=True``), so that both give the same
quantiles on the same trees.
"""

import numpy as np
from numba import prange

from ._jit import jit, pjit

CHUNK_ROWS = 256  # rows per parallel task: one set of scratch buffers each
_INDEX_BITS = 32  # an entry's sort key: its target's rank above, its index in the row below


@jit
def quantile_position(cumulative, n, total, quantile):
    """Where the ``quantile`` of n distinct increasing values with cumulative weights
    ``cumulative[:n]`` (sum ``total``) lies: ``(j, step)``, the quantile being value j plus
    ``step`` times the gap to value j + 1 (step 0 when j is the first or the last value)."""
    rank = quantile * (total - 1.0) + 1.0
    j = np.searchsorted(cumulative[:n], rank, side="right") - 1
    if j < 0:
        return 0, 0.0
    if j >= n - 1:
        return n - 1, 0.0
    return j, min(rank - cumulative[j], 1.0)


@jit
def sorted_weighted_quantiles(values, weights, cumulative, quantiles, out):
    """out[k] = the ``quantiles[k]``-quantile of distinct ``values`` in increasing order with
    positive ``weights`` (observations; see the module docstring for the rule);
    ``cumulative``: scratch of the same length."""
    n = values.shape[0]
    total = 0.0
    for k in range(n):
        total += weights[k]
        cumulative[k] = total
    for k in range(quantiles.shape[0]):
        j, step = quantile_position(cumulative, n, total, quantiles[k])
        out[k] = values[j] if step == 0.0 else values[j] + step * (values[j + 1] - values[j])


@jit
def row_entries(leaves, layout):
    """Entries of the leaves ``leaves`` of one row (those of leaves without a sample
    excluded)."""
    node_table = layout.node_table
    n_entries = 0
    for t in range(leaves.shape[0]):
        node = leaves[t]
        if node_table[node, 1] > node_table[node, 0] and node_table[node, 2] > 0.0:
            n_entries += np.int64(node_table[node, 1] - node_table[node, 0])
    return n_entries


@jit
def row_quantiles(leaves, layout, quantiles, keys, weights, ranks, scratch, out):
    """The quantiles of one row, ``leaves`` its leaf in each tree (node ids of the
    :class:`~jitree.kernels.records.QuantileLayout` ``layout``), into ``out``; NaN when no
    leaf holds a sample. ``keys`` (int64), ``weights``, ``ranks`` (int64) and ``scratch``
    (float64): buffers of at least :func:`row_entries` entries. Serial: callable from users'
    ``@njit`` code."""
    node_table = layout.node_table
    entries = layout.entries
    n_trees = 0
    draws = 0.0  # S(x)
    for t in range(leaves.shape[0]):
        node = leaves[t]
        if node_table[node, 1] > node_table[node, 0] and node_table[node, 2] > 0.0:
            n_trees += 1
            draws += node_table[node, 3]
    if n_trees == 0:
        out[:] = np.nan
        return
    scale = draws / n_trees  # each tree's share of S(x)
    n_entries = 0
    for t in range(leaves.shape[0]):
        node = leaves[t]
        start = np.int64(node_table[node, 0])
        stop = np.int64(node_table[node, 1])
        if stop > start and node_table[node, 2] > 0.0:
            share = scale / node_table[node, 2]
            for e in range(start, stop):
                keys[n_entries] = (np.int64(entries[e, 0]) << _INDEX_BITS) | n_entries
                weights[n_entries] = entries[e, 1] * share
                n_entries += 1
    row_keys = keys[:n_entries]
    row_keys.sort()
    # entries of one target value (one rank) merge: the rule is on distinct values
    m = 0
    mask = (np.int64(1) << _INDEX_BITS) - 1
    for k in range(n_entries):
        rank = row_keys[k] >> _INDEX_BITS
        weight = weights[row_keys[k] & mask]
        if m > 0 and rank == ranks[m - 1]:
            scratch[m - 1] += weight
        else:
            ranks[m] = rank
            scratch[m] = weight
            m += 1
    total = 0.0
    for k in range(m):  # weights[:m] is free again: the cumulative weights
        total += scratch[k]
        weights[k] = total
    target = layout.distinct_target
    for k in range(quantiles.shape[0]):
        j, step = quantile_position(weights, m, total, quantiles[k])
        low = target[ranks[j]]
        out[k] = low if step == 0.0 else low + step * (target[ranks[j + 1]] - low)


@pjit
def predict_quantiles(leaves, layout, quantiles, out):
    """out[i, k] = the ``quantiles[k]``-quantile of row i, whose leaf in tree t is
    ``leaves[i, t]`` (a node id of ``layout``, a
    :class:`~jitree.kernels.records.QuantileLayout`), in parallel over chunks of rows, each
    with its own buffers.

    The caller checks that every leaf id is a node of ``layout`` and that the quantiles are
    in [0, 1].
    """
    n_rows = leaves.shape[0]
    n_chunks = (n_rows + CHUNK_ROWS - 1) // CHUNK_ROWS
    for chunk in prange(n_chunks):
        first = chunk * CHUNK_ROWS
        last = min(n_rows, first + CHUNK_ROWS)
        longest = 1
        for i in range(first, last):
            longest = max(longest, row_entries(leaves[i], layout))
        keys = np.empty(longest, dtype=np.int64)
        weights = np.empty(longest)
        ranks = np.empty(longest, dtype=np.int64)
        scratch = np.empty(longest)
        for i in range(first, last):
            row_quantiles(leaves[i], layout, quantiles, keys, weights, ranks, scratch,
                          out[i])
