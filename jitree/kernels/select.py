"""Per-node feature subsampling (``max_features``)."""

import numpy as np

from ._jit import jit
from .random import stream_key, uniform
from .split import non_missing_end


@jit(inline="always")
def walk_pick(key, step, n):
    """The entry (``step`` or later, below ``n``) that step ``step`` of the Fisher-Yates
    walk of the stream ``key`` swaps with entry ``step``."""
    pick = step + np.int64(uniform(key, step) * (n - step))
    return n - 1 if pick >= n else pick


WALK_BATCH = 64  # steps whose picks :func:`walk_picks` computes at once


@jit(inline="always")
def walk_picks(key, start, n, picks):
    """``picks[step] = walk_pick(key, step, n)`` for the ``WALK_BATCH`` steps from ``start``
    (fewer at the end of the walk): a loop of independent hashes, computed ahead of a walk
    that takes its picks from ``picks`` (the sparse growth's draw: about 12 ns a step
    against 16 ns with each hash between two swaps)."""
    for step in range(start, min(start + WALK_BATCH, n)):
        picks[step] = walk_pick(key, step, n)


@jit(inline="always")
def permutation_step(key, step, order):
    """Step ``step`` of the Fisher-Yates walk of the stream ``key``: swaps ``order[step]``
    with a later (or the same) entry of ``order``, in place, and returns that entry's
    position. Every draw of features takes its picks from :func:`walk_pick` (this step, or
    :func:`walk_picks` in :func:`jitree.kernels.sparse.draw_features`), so that the sparse
    growth meets the features in the same order."""
    pick = walk_pick(key, step, order.shape[0])
    order[step], order[pick] = order[pick], order[step]
    return pick


@jit(inline="always")
def undo_walk(key, steps, order):
    """Undo the first ``steps`` steps of the walk of :func:`permutation_step` on ``order``
    (the same swaps, last first): ``order`` is again as it was before step 0."""
    for step in range(steps - 1, -1, -1):
        pick = walk_pick(key, step, order.shape[0])
        order[step], order[pick] = order[pick], order[step]


@jit(inline="always")
def walk_step(key, step, order, allowed, j):
    """Step ``step`` of node j's walk over the features (``order`` holds 0 .. n - 1 before
    step 0): the feature :func:`permutation_step` visits, or -1 when the node's interaction
    constraints exclude it (``allowed[j, f]`` 0; ``allowed`` without columns: none). The
    dense feature draws (:func:`select_features`,
    :func:`jitree.kernels.sample_order.search_nodes`,
    :func:`jitree.kernels.sample_order.best_sorted`) take their steps here."""
    permutation_step(key, step, order)
    f = order[step]
    if allowed.shape[1] > 0 and not allowed[j, f]:
        return -1
    return f


# The draw of each node's features (``max_features`` below the number of features), as
# scikit-learn counts it (LightGBM's and XGBoost's per-node sampling counts constant
# features too, and does not go on past them): the node visits ``max_features`` features of
# a random permutation, constant ones included, and searches those of them that vary in it;
# when none of them does, it visits more until one does (or none is left), so that a node
# stays a leaf only when no feature can split it. Every draw (:func:`select_features`, the
# sample-order growth's, the sparse growth's) stops by this rule.


@jit(inline="always")
def draw_done(visited, count, max_features):
    """Whether a node's walk stops: ``visited`` features visited (those its interaction
    constraints allow), ``count`` of them varying in the node."""
    return visited >= max_features and count > 0


@jit
def select_features(seed, node_id, node_start, node_end, sorted_value, max_features, allowed,
                    out_features, out_count):
    """Draw, for each node, the features it searches: the walk visits allowed features
    (``allowed[j, f]``; every feature when ``allowed`` has no columns) in a random
    permutation (Fisher-Yates on the stream of (seed, node)) until :func:`draw_done`, and
    keeps those not constant in the node (two distinct non-missing values, or a missing and
    a non-missing one): at most ``max_features``, at least one when any feature varies.

    The chosen ones are written in increasing index order to
    ``out_features[j, :out_count[j]]`` so that the lowest-index tie rule still holds.
    """
    n_features = sorted_value.shape[0]
    order = np.empty(n_features, dtype=np.int64)
    for j in range(node_id.shape[0]):
        key = stream_key(seed, node_id[j], -1)
        for f in range(n_features):
            order[f] = f
        count = 0
        visited = 0
        for step in range(n_features):
            f = walk_step(key, step, order, allowed, j)
            if f < 0:
                continue
            visited += 1
            value_row = sorted_value[f]
            end_nm = non_missing_end(value_row, node_start[j], node_end[j])
            last = end_nm - 1
            varies = last > node_start[j] and value_row[node_start[j]] < value_row[last]
            # a missing and a non-missing value can be split apart too
            if varies or (end_nm > node_start[j] and end_nm < node_end[j]):
                # insertion in increasing order (a sort call per node showed as 1% of a random
                # forest's fit)
                t = count
                while t > 0 and out_features[j, t - 1] > f:
                    out_features[j, t] = out_features[j, t - 1]
                    t -= 1
                out_features[j, t] = f
                count += 1
            if draw_done(visited, count, max_features):
                break
        out_count[j] = count
