"""Monotonic constraints on a fitted tree's values.

The growth bounds the values it computes (:func:`jitree.kernels.grower.child_bounds`): a
node's value stays within bounds that its ancestors set, and the two children of a threshold
split on a constrained feature meet at the mean of their values, the side that the
constraint puts lower bounded above by it and the other below. Every value of such a split's
left subtree is then on the constrained side of every value of its right subtree, and
predictions move along a constrained feature only as the constraint allows.

:func:`bounded` applies the same bounds to other values of a grown tree's nodes: values
re-estimated on other rows (honest trees, :mod:`jitree.model.honest`), and a classifier's
class probabilities (:func:`exact_probabilities`), which are quotients of its class weights:
two leaves whose fraction the growth bounded to the same value hold different weights, and
their quotients may differ in the last bit, against the constraint.
"""

import numpy as np

from .tree import SPLIT_THRESHOLD, TREE_LEAF, node_levels

# exact_probabilities keeps a table whose bounding would move a probability by more than
# this: the tree was not grown under those constraints (they were set after the fit)
ROUNDING = 1e-12


def bounded(tree, values, constraints, tree_levels=None):
    """``values`` (one per node) bounded as the growth bounds a node's value, top-down: a
    node's value is clipped to its bounds, its children inherit them, and the two children
    of a threshold split on a feature of constraint 1 (-1) meet at the mean of their values
    (each first clipped to the node's bounds), the left child's bounded above (below) by it
    and the right child's below (above). ``constraints``: -1, 0 or 1 per feature, on these
    values; ``tree_levels``: :func:`~jitree.model.tree.node_levels` of the tree when the
    caller has them."""
    parent, nodes_at = node_levels(tree) if tree_levels is None else tree_levels
    out = np.array(values, dtype=np.float64)
    left, right = tree.children_left, tree.children_right
    sign = np.zeros(tree.node_count, dtype=np.int8)
    split = (left != TREE_LEAF) & (tree.split_kind == SPLIT_THRESHOLD)
    sign[split] = np.asarray(constraints, dtype=np.int8)[tree.feature[split]]
    lower = np.full(tree.node_count, -np.inf)
    upper = np.full(tree.node_count, np.inf)
    middle = np.zeros(tree.node_count)
    for depth, nodes in enumerate(nodes_at):
        if depth > 0:
            above = parent[nodes]
            lower[nodes] = lower[above]
            upper[nodes] = upper[above]
            first = nodes == left[above]
            below_middle = ((sign[above] > 0) & first) | ((sign[above] < 0) & ~first)
            above_middle = ((sign[above] > 0) & ~first) | ((sign[above] < 0) & first)
            upper[nodes[below_middle]] = middle[above[below_middle]]
            lower[nodes[above_middle]] = middle[above[above_middle]]
        out[nodes] = np.clip(out[nodes], lower[nodes], upper[nodes])
        constrained = nodes[sign[nodes] != 0]
        low, high = lower[constrained], upper[constrained]
        middle[constrained] = (np.clip(out[left[constrained]], low, high) / 2.0
                               + np.clip(out[right[constrained]], low, high) / 2.0)
    return out


def exact_probabilities(tree, table, constraints):
    """A binary classifier tree's class probabilities (``table``: its
    :meth:`~jitree.Tree.probability_table`) made to keep ``constraints`` (scikit-learn's
    ``monotonic_cst``, on the probability of the second class) in every bit: that
    probability :func:`bounded`, the first class's one minus it. The tree's growth bounded
    its fractions, so this moves a probability by a rounding error at most; a table that it
    would move further (constraints set on a tree grown without them) is returned as it is.
    """
    second = bounded(tree, table[:, 1], constraints)
    if not np.all(np.abs(second - table[:, 1]) <= ROUNDING):
        return table
    out = np.empty_like(table)
    out[:, 1] = second
    out[:, 0] = 1.0 - second
    return out
