"""Post-pruning kernels. A pruned tree is described by a mask of the nodes that become leaves;
:func:`compact_order` then lists the nodes that remain, for the Python layer to gather.

Nodes may have more than two children: a ``SPLIT_MULTIWAY`` node's children are the consecutive
nodes ``children_left .. children_right`` (:class:`jitree.Tree`), a binary node's are the two.
:func:`n_children` and :func:`child` hide the difference; every sum over "the children" below
(branch costs, leaf counts) runs over all of them.
"""

import heapq

import numpy as np

from ._jit import jit
from .predict import SPLIT_MULTIWAY, child_of

_NO_PARENT = -1


@jit
def n_children(children_left, children_right, split_kind, node):
    """Number of children of ``node``: 0 for a leaf, the range's length for a multiway node,
    else 2."""
    if children_left[node] < 0:
        return 0
    if split_kind[node] == SPLIT_MULTIWAY:
        return children_right[node] - children_left[node] + 1
    return 2


@jit
def child(children_left, children_right, split_kind, node, k):
    """The ``k``-th child of internal ``node`` (0 <= k < n_children)."""
    if split_kind[node] == SPLIT_MULTIWAY or k == 0:
        return children_left[node] + k
    return children_right[node]


@jit
def parents_of(children_left, children_right, split_kind):
    """parent[node] (-1 for the root)."""
    parent = np.full(children_left.shape[0], _NO_PARENT, dtype=np.int64)
    for node in range(children_left.shape[0]):
        for k in range(n_children(children_left, children_right, split_kind, node)):
            parent[child(children_left, children_right, split_kind, node, k)] = node
    return parent


@jit
def cost_complexity_prune(children_left, children_right, split_kind, r_node, ccp_alpha,
                          make_leaf, path_alpha, path_impurity):
    """Minimal cost-complexity pruning (weakest link first).

    ``r_node[t] = W_t / W * impurity_t``; for the branch T_t rooted at t,
    ``R(T_t)`` = sum of r_node over its leaves and its effective alpha is
    ``g(t) = (r_node[t] - R(T_t)) / (leaves(T_t) - 1)`` (a multiway node's branch gathers the
    leaves of all its children). Repeatedly the internal node with the smallest g (ties: lowest
    node id) becomes a leaf, while g <= ``ccp_alpha``. A heap holds the candidates; after a
    prune the ancestors' g change and are pushed again, stale entries are skipped
    (``version``). Writes ``make_leaf`` (nodes turned into leaves) and the pruning path (alpha
    of each prune, total leaf impurity after it; entry 0 is the unpruned tree with alpha 0).
    Returns the number of path entries.
    """
    n_nodes = children_left.shape[0]
    parent = parents_of(children_left, children_right, split_kind)
    n_leaves = np.zeros(n_nodes, dtype=np.int64)
    r_branch = np.zeros(n_nodes)
    # leaves' costs summed into every ancestor (children may be numbered in any order)
    for node in range(n_nodes):
        if children_left[node] < 0:
            r_branch[node] = r_node[node]
            n_leaves[node] = 1
            ancestor = parent[node]
            while ancestor != _NO_PARENT:
                r_branch[ancestor] += r_node[node]
                n_leaves[ancestor] += 1
                ancestor = parent[ancestor]
    alive = np.ones(n_nodes, dtype=np.uint8)
    is_leaf = np.zeros(n_nodes, dtype=np.uint8)
    version = np.zeros(n_nodes, dtype=np.int64)
    heap = [(0.0, np.int64(0), np.int64(0))]
    heap.pop()
    for node in range(n_nodes):
        if children_left[node] < 0:
            is_leaf[node] = 1
        else:
            # a split of zero gain can round to a negative effective alpha: it is 0
            g = max(0.0, (r_node[node] - r_branch[node]) / (n_leaves[node] - 1))
            heap.append((g, np.int64(node), np.int64(0)))
    heapq.heapify(heap)
    make_leaf[:] = 0
    path_alpha[0] = 0.0
    path_impurity[0] = r_branch[0]
    n_path = 1
    # each node is pushed at most once per removed branch: n_nodes entries suffice
    stack = np.empty(n_nodes, dtype=np.int64)
    while len(heap) > 0 and not is_leaf[0]:
        g, node, node_version = heapq.heappop(heap)
        if not alive[node] or is_leaf[node] or node_version != version[node]:
            continue
        if g > ccp_alpha:
            break
        # the branch below node leaves the tree
        top = 0
        for k in range(n_children(children_left, children_right, split_kind, node)):
            stack[top] = child(children_left, children_right, split_kind, node, k)
            top += 1
        while top > 0:
            top -= 1
            below = stack[top]
            alive[below] = 0
            for k in range(n_children(children_left, children_right, split_kind, below)):
                stack[top] = child(children_left, children_right, split_kind, below, k)
                top += 1
        is_leaf[node] = 1
        make_leaf[node] = 1
        removed_leaves = n_leaves[node] - 1
        r_increase = r_node[node] - r_branch[node]
        n_leaves[node] = 1
        r_branch[node] = r_node[node]
        ancestor = parent[node]
        while ancestor != _NO_PARENT:
            n_leaves[ancestor] -= removed_leaves
            r_branch[ancestor] += r_increase
            version[ancestor] += 1
            heapq.heappush(heap, (max(0.0, (r_node[ancestor] - r_branch[ancestor])
                                      / (n_leaves[ancestor] - 1)), ancestor,
                                  version[ancestor]))
            ancestor = parent[ancestor]
        path_alpha[n_path] = g
        path_impurity[n_path] = r_branch[0]
        n_path += 1
    return n_path


@jit
def compact_order(children_left, children_right, split_kind, make_leaf):
    """Ids of the nodes that remain when ``make_leaf`` nodes become leaves, in the new order:
    breadth-first, all the children of a node side by side and in order (so children ids
    exceed their parent's and a multiway node's children stay a consecutive range in slot
    order). Returns (old id of each new node, new id of each old node or -1)."""
    n_nodes = children_left.shape[0]
    old_of_new = np.empty(n_nodes, dtype=np.int64)
    new_of_old = np.full(n_nodes, -1, dtype=np.int64)
    old_of_new[0] = 0
    new_of_old[0] = 0
    count = 1
    position = 0
    while position < count:
        node = old_of_new[position]
        position += 1
        if make_leaf[node]:
            continue
        for k in range(n_children(children_left, children_right, split_kind, node)):
            below = child(children_left, children_right, split_kind, node, k)
            old_of_new[count] = below
            new_of_old[below] = count
            count += 1
    return old_of_new[:count], new_of_old


@jit
def node_errors(X, tree, is_regression, node_prediction, target, sample_weight, errors,
                reached):
    """For every node: the (weighted) errors it would make as a leaf on the samples (X, target)
    reaching it, and their weight. Classification: weight of samples whose label differs from
    ``node_prediction[node]``; regression: weighted squared error to ``node_prediction``.

    Rows walk the tree as in prediction (:func:`jitree.kernels.predict.child_of`: every node
    kind, NaN and unseen categories routed as the node says); ``tree``: ``Tree.walk_arrays()``
    (a :class:`~jitree.kernels.records.TreeWalk`)."""
    feature = tree.feature
    children_left = tree.children_left
    errors[:] = 0.0
    reached[:] = 0.0
    for i in range(X.shape[0]):
        node = 0
        w = sample_weight[i]
        while True:
            reached[node] += w
            if is_regression:
                difference = target[i] - node_prediction[node]
                errors[node] += w * difference * difference
            elif target[i] != node_prediction[node]:
                errors[node] += w
            if children_left[node] < 0:
                break
            node = child_of(X[i, feature[node]], node, tree)


@jit
def prune_bottom_up(children_left, children_right, split_kind, order, leaf_cost, slack,
                    make_leaf, subtree_cost):
    """Replace a subtree by a leaf when ``leaf_cost[node] <= subtree cost + slack``.

    ``order``: all nodes, every parent before its children (visited in reverse, so children
    are decided first). The subtree cost of a kept internal node is the sum of all its
    children's (already pruned) costs. Writes ``make_leaf`` and ``subtree_cost``.
    """
    make_leaf[:] = 0
    for position in range(order.shape[0] - 1, -1, -1):
        node = order[position]
        count = n_children(children_left, children_right, split_kind, node)
        if count == 0:
            subtree_cost[node] = leaf_cost[node]
            continue
        below = 0.0
        for k in range(count):
            below += subtree_cost[child(children_left, children_right, split_kind, node, k)]
        if leaf_cost[node] <= below + slack:
            make_leaf[node] = 1
            subtree_cost[node] = leaf_cost[node]
        else:
            subtree_cost[node] = below
