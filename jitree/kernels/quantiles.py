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


@jit
def sorted_weighted_quantiles(values, weights, quantiles, out):
    """out[k] = the ``quantiles[k]``-quantile of distinct ``values`` in increasing order with
    positive ``weights`` (observations; see the module docstring for the rule)."""
    n = values.shape[0]
    cumulative = np.empty(n)
    total = 0.0
    for k in range(n):
        total += weights[k]
        cumulative[k] = total
    for k in range(quantiles.shape[0]):
        rank = quantiles[k] * (total - 1.0) + 1.0
        j = np.searchsorted(cumulative, rank, side="right") - 1
        if j < 0:
            out[k] = values[0]
        elif j >= n - 1:
            out[k] = values[n - 1]
        else:
            step = min(rank - cumulative[j], 1.0)
            out[k] = values[j] + step * (values[j + 1] - values[j])


@jit
def row_quantiles(leaves, samples, quantiles, out):
    """The quantiles of one row, ``leaves`` its leaf in each tree (node ids of the
    :class:`~jitree.kernels.records.LeafSamples` ``samples``), into ``out``. NaN when no leaf
    holds a sample. Serial: callable from users' ``@njit`` code."""
    start = samples.start
    stop = samples.stop
    node_weight = samples.node_weight
    n_entries = 0
    n_trees = 0
    draws = 0.0  # S(x)
    for t in range(leaves.shape[0]):
        node = leaves[t]
        if stop[node] > start[node] and node_weight[node] > 0.0:
            n_entries += stop[node] - start[node]
            n_trees += 1
            draws += samples.node_count[node]
    if n_trees == 0:
        out[:] = np.nan
        return
    scale = draws / n_trees  # each tree's share of S(x)
    values = np.empty(n_entries)
    weights = np.empty(n_entries)
    k = 0
    for t in range(leaves.shape[0]):
        node = leaves[t]
        if stop[node] > start[node] and node_weight[node] > 0.0:
            share = scale / node_weight[node]
            for e in range(start[node], stop[node]):
                values[k] = samples.target[samples.sample[e]]
                weights[k] = samples.weight[e] * share
                k += 1
    order = np.argsort(values)
    # equal targets merge into one value (the rule is on distinct values)
    m = 0
    for k in range(n_entries):
        e = order[k]
        if m > 0 and values[e] == values[order[m - 1]]:
            weights[order[m - 1]] += weights[e]
        else:
            order[m] = e
            m += 1
    distinct = np.empty(m)
    distinct_weight = np.empty(m)
    for k in range(m):
        distinct[k] = values[order[k]]
        distinct_weight[k] = weights[order[k]]
    sorted_weighted_quantiles(distinct, distinct_weight, quantiles, out)


@pjit
def predict_quantiles(leaves, samples, quantiles, out):
    """out[i, k] = the ``quantiles[k]``-quantile of row i, whose leaf in tree t is
    ``leaves[i, t]`` (a node id of ``samples``, a
    :class:`~jitree.kernels.records.LeafSamples`), in parallel over rows.

    The caller checks that every leaf id is a node of ``samples`` and that the quantiles are
    in [0, 1].
    """
    for i in prange(leaves.shape[0]):
        row_quantiles(leaves[i], samples, quantiles, out[i])
