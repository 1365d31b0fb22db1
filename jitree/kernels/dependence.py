"""Partial dependence by the recursion method (weighted tree traversal).

For a grid point ``v`` (values of the target features S), a tree's partial dependence is

    PD(v) = sum over leaves l of  P(l | v) * table[l]

where ``P(l | v)`` is the product, along the path from the root to ``l``, of one factor per
internal node: at a node testing a feature of S, 1 for the child ``v`` goes to (every node
kind and missing-value routing: :func:`jitree.kernels.predict.child_of`) and 0 for the
others; at a node testing another feature, the child's share of the node's training weight,
``weighted_n_node_samples[child] / weighted_n_node_samples[node]`` (scikit-learn's
``method="recursion"``, Friedman 2001). A forest's is the sum over its trees (the caller
divides by their number).

A subtree in which no node tests a feature of S contributes the same for every grid point:
``mean[node]``, its leaves' tables weighted by those shares, is computed once per call
(:func:`subtree_means`), and the walk of each grid point stops there
(:func:`recursion_partial_dependence`). The sums are those of the plain recursion, grouped
differently (equal to rounding).
"""

import numpy as np
from numba import prange

from ._jit import jit, pjit
from .predict import SPLIT_MULTIWAY, TREE_LEAF, child_of


@jit
def subtree_means(tree, node_weight, target_slot, table, fraction, has_target, mean):
    """Bottom-up over the nodes of one or several concatenated trees (children are numbered
    after their parent): ``fraction[child]`` its share of its parent's training weight
    (equal shares under a parent of weight 0), ``has_target[node]`` whether the node's
    subtree tests a feature f with ``target_slot[f] >= 0``, and ``mean[node, :]`` the
    weighted mean of the tables of its subtree's leaves (sum over leaves of the product of
    the shares on the way times ``table[leaf, :]``).

    ``tree``: a :class:`~jitree.kernels.records.TreeWalk`; ``node_weight``: the trees'
    ``weighted_n_node_samples`` concatenated like its arrays."""
    feature = tree.feature
    children_left = tree.children_left
    children_right = tree.children_right
    split_kind = tree.split_kind
    width = table.shape[1]
    for node in range(node_weight.shape[0] - 1, -1, -1):
        left = children_left[node]
        if left == TREE_LEAF:
            has_target[node] = 0
            for k in range(width):
                mean[node, k] = table[node, k]
            continue
        right = children_right[node]
        multiway = split_kind[node] == SPLIT_MULTIWAY
        n_children = right - left + 1 if multiway else 2
        total = node_weight[node]
        found = target_slot[feature[node]] >= 0
        for k in range(width):
            mean[node, k] = 0.0
        for c in range(n_children):
            child = left + c if multiway else (left if c == 0 else right)
            share = node_weight[child] / total if total > 0.0 else 1.0 / n_children
            fraction[child] = share
            found |= has_target[child] != 0
            for k in range(width):
                mean[node, k] += share * mean[child, k]
        has_target[node] = found


@pjit
def recursion_partial_dependence(grid, target_slot, tree, tree_root, fraction, has_target,
                                 mean, stack_size, out):
    """out[g, :] = sum over trees t of PD_t(grid[g]) (module docstring), in parallel over the
    grid points.

    ``grid``: (n_points, n_targets) float64, column ``target_slot[f]`` the value of feature
    f; ``tree``, ``tree_root``: concatenated trees as in
    :func:`jitree.kernels.predict.predict_nodes`; ``fraction``, ``has_target``, ``mean``:
    from :func:`subtree_means` for the same ``target_slot``; ``stack_size``: at least the
    node count of the largest tree (each node is pushed at most once per walk)."""
    feature = tree.feature
    children_left = tree.children_left
    children_right = tree.children_right
    split_kind = tree.split_kind
    width = mean.shape[1]
    for g in prange(grid.shape[0]):
        stack_node = np.empty(stack_size, dtype=np.int64)
        stack_weight = np.empty(stack_size, dtype=np.float64)
        for k in range(width):
            out[g, k] = 0.0
        for t in range(tree_root.shape[0]):
            stack_node[0] = tree_root[t]
            stack_weight[0] = 1.0
            top = 1
            while top > 0:
                top -= 1
                node = stack_node[top]
                weight = stack_weight[top]
                if has_target[node] == 0:  # a leaf, or a subtree that ignores the grid
                    for k in range(width):
                        out[g, k] += weight * mean[node, k]
                    continue
                slot = target_slot[feature[node]]
                if slot >= 0:  # the grid value's child alone, with the whole weight
                    stack_node[top] = child_of(grid[g, slot], node, tree)
                    stack_weight[top] = weight
                    top += 1
                    continue
                left = children_left[node]
                right = children_right[node]
                multiway = split_kind[node] == SPLIT_MULTIWAY
                n_children = right - left + 1 if multiway else 2
                for c in range(n_children):
                    child = left + c if multiway else (left if c == 0 else right)
                    stack_node[top] = child
                    stack_weight[top] = weight * fraction[child]
                    top += 1
