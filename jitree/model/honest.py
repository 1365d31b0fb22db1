"""Honest trees (Athey & Wager's honesty, as in generalized random forests and YDF): the
structure is grown on one part of a tree's samples, the leaf values are estimated on the
other part.

- :func:`split_rows` draws the parts: of the rows a tree sees (positive weight; a bootstrap
  sample's distinct rows, so that the copies of a row stay in one part),
  ``round(honest_fraction * n)`` rows (at least 1, at most n - 1) chosen uniformly at random
  grow the structure, the others estimate. The draw is a NumPy ``default_rng`` stream keyed
  by the tree's seed (the one its growth uses, from ``random_state``) and a constant of its
  own, so a fixed ``random_state`` gives the same parts and the same tree.
- the structure is grown by the usual engine on the structure part (the estimation rows
  weigh 0 there, and a row of weight 0 takes no part in a fit), pruned by ``ccp_alpha``;
- :func:`reestimate` then replaces ``value`` at every node by the estimation part's: the
  weighted mean target (regression; under ``absolute_error`` and ``quantile``, the weighted
  median or quantile as those criteria define it) or the weighted class counts
  (classification) of the estimation samples reaching the node. A node that no estimation
  sample reaches takes the value of its nearest ancestor that one reaches (every leaf gives
  a prediction; the root always has estimation samples). ``n_node_samples``,
  ``weighted_n_node_samples`` and ``impurity`` stay those of the structure part: they
  describe the growth (feature importances, pruning paths and exports' sample counts are
  the structure's). Under monotonic constraints the re-estimated values are bounded as the
  growth bounds its own (:func:`monotone_values`): estimated on other rows, they would
  otherwise break the constraints the structure was grown under.
"""

import numpy as np

from ..kernels.pinball import order_statistics
from . import monotone
from .builder import class_weights_of
from .tree import Tree, node_levels, walk_rows

# second key of the row split's random stream, so that it is not the stream a tree's growth
# draws from the same seed
_HONEST_STREAM = 0x686F6E657374


def split_rows(seed, weight, honest_fraction):
    """Boolean mask of the structure rows among the rows of positive ``weight`` (the others
    of positive weight estimate the leaves)."""
    rows = np.flatnonzero(weight > 0)
    n_rows = rows.shape[0]
    if n_rows < 2:
        raise ValueError(f"honest=True needs at least 2 samples of positive weight per tree "
                         f"(one to grow the structure, one to estimate the leaves), got "
                         f"{n_rows}")
    n_structure = min(max(int(round(honest_fraction * n_rows)), 1), n_rows - 1)
    rng = np.random.default_rng([int(seed), _HONEST_STREAM])
    structure = np.zeros(weight.shape[0], dtype=bool)
    structure[rng.permutation(rows)[:n_structure]] = True
    return structure


def _node_quantiles(tree, X, target, weight, quantile):
    """The weighted ``quantile`` of the samples (X, target, weight) reaching each node of
    ``tree`` (:func:`jitree.kernels.pinball.order_statistics`; 0 where none does)."""
    indptr, nodes = tree.decision_path_arrays(np.ascontiguousarray(X))
    sample = np.repeat(np.arange(X.shape[0]), np.diff(indptr))
    order = np.lexsort((target[sample], nodes))
    nodes, sample = nodes[order], sample[order]
    bounds = np.searchsorted(nodes, np.arange(tree.node_count + 1))
    value = np.zeros(tree.node_count)
    for node in np.flatnonzero(np.diff(bounds)):
        members = sample[bounds[node]:bounds[node + 1]]
        value[node] = order_statistics(target[members], weight[members], quantile)[0]
    return value


def reestimate(tree, X, target, weight, quantile=None, monotonic=None):
    """``tree`` with ``value`` re-estimated on the rows of X of positive ``weight`` (see the
    module docstring); ``target``: the regression targets, or the class indices (as floats)
    of a classification tree; ``quantile``: the alpha of a regression tree's order criterion
    (its nodes' values are weighted quantiles), None for means; ``monotonic``: the
    constraints the tree was grown under (``GrowParams.monotonic``), None for none. Returns a
    new frozen Tree."""
    rows = np.flatnonzero(weight > 0)
    leaves = walk_rows(tree, X[rows], tree.apply)
    w = weight[rows]
    n_nodes = tree.node_count
    if tree.n_classes == 0:
        stats = np.column_stack([np.bincount(leaves, w, n_nodes),
                                 np.bincount(leaves, w * target[rows], n_nodes)])
    else:
        index = leaves * tree.n_classes + target[rows].astype(np.int64)
        stats = np.bincount(index, w, n_nodes * tree.n_classes).reshape(n_nodes,
                                                                        tree.n_classes)
    parent, levels = node_levels(tree)
    for nodes in reversed(levels[1:]):  # children add into their parents, deepest first
        np.add.at(stats, parent[nodes], stats[nodes])
    if tree.n_classes == 0:
        reached = stats[:, 0] > 0
        value = np.zeros((n_nodes, 1))
        if quantile is None:
            value[reached, 0] = stats[reached, 1] / stats[reached, 0]
        else:
            value[:, 0] = _node_quantiles(tree, X[rows], target[rows], w, quantile)
    else:
        reached = stats.sum(axis=1) > 0
        value = stats
    if not reached[0]:
        raise ValueError("honest=True: no estimation sample reaches the root")
    for nodes in levels[1:]:  # nearest reached ancestor, filled top-down
        empty = nodes[~reached[nodes]]
        value[empty] = value[parent[empty]]
    if monotonic is not None:
        value = monotone_values(tree, value, monotonic, (parent, levels))
    arrays = tree.arrays()
    arrays["value"] = value
    return Tree._grown(tree.n_features, tree.n_classes, **arrays, n_outputs=tree.n_outputs)


def monotone_values(tree, value, constraints, tree_levels):
    """``value`` (a node's row: a regression value, or binary class weights) bounded by the
    constraints the tree was grown under, as the growth bounds its own values
    (:func:`jitree.model.monotone.bounded`): a regression tree's values, a classifier's
    fraction of class 0 (its weights kept). ``constraints``: ``GrowParams.monotonic``, on
    the kernels' node value (for classifiers, scikit-learn's constraints flipped);
    ``tree_levels``: :func:`~jitree.model.tree.node_levels` of the tree."""
    if tree.n_classes == 0:
        return monotone.bounded(tree, value[:, 0], constraints, tree_levels)[:, None]
    if value.shape[1] < 2:  # a y of one class has nothing to bound
        return value
    weight = value.sum(axis=1)
    fraction = value[:, 0] / np.where(weight > 0.0, weight, 1.0)
    return class_weights_of(monotone.bounded(tree, fraction, constraints, tree_levels),
                            weight)
