"""TreeSHAP: exact path-dependent Shapley values and interaction values of trees and forests
(Lundberg et al. 2018, 2020), in parallel over rows.

The path-dependent expectation of a tree's output given the features S of row x follows x at
the nodes testing a feature of S and splits the weight among all children (in proportion to
their training weight) at the others. Leaf l, of value v, reached through nodes testing the
set of features P (d = |P| features, each maybe tested several times), adds to it

    g_l(S) = v * prod_{j in P - S} z_j * prod_{j in P & S} o_j

with z_j the product of the training-weight fractions of the path's branches at the nodes
testing j, and o_j = 1 when x takes all of those branches (0 otherwise). The Shapley weight
of a coalition of size s among d players is s! (d - 1 - s)! / d! = integral over u in [0, 1]
of u^s (1 - u)^(d - 1 - s), so summing over the coalitions gives, for j in P,

    phi_j   = v (o_j - z_j) integral prod_{k in P, k != j} h_k(u) du
    phi_jk  = v / 2 (o_j - z_j)(o_k - z_k) integral prod_{m in P, m != j, k} h_m(u) du  (j != k)
    phi_jj  = phi_j - sum_{k != j} phi_jk

with h_k(u) = o_k u + (1 - u) z_k
(the interaction values of Lundberg et al. 2020 and of ``shap``: half the difference between
j's Shapley values with k known and with k unknown). The integrands are polynomials of degree
at most d - 1 in u: Gauss-Legendre quadrature with ceil(d / 2) nodes integrates them exactly.
Every factor is positive, so no sum cancels (the extend / unwind recursions of the original
algorithm divide and subtract in turn). Features off the path get nothing from the leaf, and
the values of a row sum to its output minus the expected value (sum of v * prod z over leaves).

A row walks each tree depth first (:func:`explain_tree`), keeping the path's features with their
z and o; a level's change is undone on the way back up, so a row costs O(nodes) for the walk
plus O(d^2 / 2) per leaf (O(d^3 / 2) for interactions) and O(max_depth) memory. A branch of
zero training weight that x does not take is skipped: every term of its leaves is zero.

Callable from users' ``@njit`` code: ``walk, trees = jitree.shap_trees(model)`` (a
:class:`~jitree.kernels.records.TreeWalk` and a :class:`~jitree.kernels.records.ShapTrees`),
``work = new_work(trees, n_features)``, then for each row :func:`shap_row` (or
:func:`shap_interaction_row`) adds the row's values into ``phi``.
"""

from collections import namedtuple

import numpy as np
from numba import prange

from ._jit import jit, pjit
from .predict import SPLIT_MULTIWAY, TREE_LEAF, child_of

ShapWork = namedtuple("ShapWork", [
    # one thread's state of the depth-first walk of a tree (built by new_work)
    "feature",        # (max_depth + 1,) int64: the path's distinct features, in path order
    "zero",           # (max_depth + 1,) float64: their z (weight fraction along the path)
    "one",            # (max_depth + 1,) float64: their o (1.0 when x follows the path)
    "position",       # (n_features,) int64: a feature's index in ``feature``, -1 off the path
    "node",           # (max_depth + 1,) int64: the node at each level of the walk
    "child",          # (max_depth + 1,) int64: the next child to visit at that level
    "hot",            # (max_depth + 1,) int64: the child x goes to at that level
    "undo_position",  # (max_depth + 1,) int64: the path entry the level changed, -1: added
    "undo_zero",      # (max_depth + 1,) float64: its z and o before the change
    "undo_one",       # (max_depth + 1,) float64
    "undo",           # (max_depth + 1,) uint8: 1 while the level's change is in place
    "factor",         # (max_depth + 1,) float64: h_a(u) of each path feature a at one u
    "before",         # (max_depth + 1,) float64: prod_{k < a} h_k(u)
    "total",          # (max_depth + 1,) float64: sum_m w_m prod_{k != a} h_k(u_m)
    "integral",       # (n_gauss,) float64: prod_k h_k(u_m)
])


@jit
def new_work(trees, n_features):
    """A :class:`ShapWork` for rows of ``n_features`` features and the trees of ``trees``."""
    size = trees.max_depth + 1
    n_gauss = trees.gauss_u.shape[1]
    return ShapWork(np.zeros(size, dtype=np.int64),
                    np.zeros(size), np.zeros(size), np.full(n_features, -1, dtype=np.int64),
                    np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64),
                    np.zeros(size, dtype=np.int64), np.zeros(size, dtype=np.int64),
                    np.zeros(size), np.zeros(size), np.zeros(size, dtype=np.uint8),
                    np.zeros(size), np.zeros(size), np.zeros(size), np.zeros(n_gauss))


@jit
def _n_children(walk, node):
    if walk.split_kind[node] == SPLIT_MULTIWAY:
        return walk.children_right[node] - walk.children_left[node] + 1
    return 2


@jit
def _child(walk, node, k):
    """The k-th child of internal ``node`` (multiway children are numbered consecutively)."""
    if walk.split_kind[node] == SPLIT_MULTIWAY or k == 0:
        return walk.children_left[node] + k
    return walk.children_right[node]


@jit
def explain_tree(X, i, walk, trees, t, work, phi, phi_pairs, interactions):
    """Add the SHAP values of row ``i`` of X in tree ``t`` to ``phi`` (n_features,
    n_outputs), or with ``interactions`` its interaction values to ``phi_pairs``
    (n_features, n_features, n_outputs; ``phi`` is then not used).

    One function: the walk and the leaves' sums share their arrays as locals (a call per node
    or per leaf passing the records cost more than the arithmetic). The walk keeps, per
    level, the node, the next child to visit, the child x goes to, and the change it made to
    the path (undone when it moves on to the next child or back up).
    """
    children_left = walk.children_left
    children_right = walk.children_right
    split_kind = walk.split_kind
    node_feature = walk.feature
    fraction = trees.fraction
    table = trees.table
    gauss_u = trees.gauss_u
    gauss_w = trees.gauss_w
    n_outputs = table.shape[1]
    path_feature = work.feature
    zero = work.zero
    one = work.one
    position = work.position
    level_node = work.node
    level_child = work.child
    level_hot = work.hot
    undo_position = work.undo_position
    undo_zero = work.undo_zero
    undo_one = work.undo_one
    undo = work.undo
    factor = work.factor
    before = work.before
    total = work.total
    integral = work.integral

    root = trees.root[t]
    if children_left[root] == TREE_LEAF:
        return  # no feature changes the output of a tree that is one leaf
    n_path = 0
    level = 0
    level_node[0] = root
    level_child[0] = 0
    undo[0] = 0
    level_hot[0] = child_of(X[i, node_feature[root]], root, walk)
    while level >= 0:
        if undo[level]:
            undo[level] = 0
            p = undo_position[level]
            if p >= 0:
                zero[p] = undo_zero[level]
                one[p] = undo_one[level]
            else:
                n_path -= 1
                position[path_feature[n_path]] = -1
        node = level_node[level]
        k = level_child[level]
        if split_kind[node] == SPLIT_MULTIWAY:
            n_children = children_right[node] - children_left[node] + 1
            child = children_left[node] + k
        else:
            n_children = 2
            child = children_left[node] if k == 0 else children_right[node]
        if k >= n_children:
            level -= 1
            continue
        level_child[level] = k + 1
        follows = child == level_hot[level]
        share = fraction[child]
        if not follows and share == 0.0:
            continue  # every term of the leaves below is zero
        feature = node_feature[node]
        p = position[feature]
        undo_position[level] = p
        if p >= 0:  # the feature was tested above: merge into its entry
            undo_zero[level] = zero[p]
            undo_one[level] = one[p]
            zero[p] *= share
            if not follows:
                one[p] = 0.0
        else:
            path_feature[n_path] = feature
            zero[n_path] = share
            one[n_path] = 1.0 if follows else 0.0
            position[feature] = n_path
            n_path += 1
        undo[level] = 1
        if children_left[child] != TREE_LEAF:
            level += 1
            level_node[level] = child
            level_child[level] = 0
            undo[level] = 0
            level_hot[level] = child_of(X[i, node_feature[child]], child, walk)
            continue

        # a leaf: see the module docstring for phi_a and phi_ab
        n_nodes = (n_path + 1) // 2  # quadrature nodes
        if not interactions:
            # total[a] = sum_m w_m prod_{k != a} h_k(u_m), the products of the factors before
            # and after a on the path (no division)
            for a in range(n_path):
                total[a] = 0.0
            for m in range(n_nodes):
                u = gauss_u[n_nodes, m]
                running = 1.0
                for a in range(n_path):
                    h = one[a] * u + (1.0 - u) * zero[a]
                    factor[a] = h
                    before[a] = running
                    running *= h
                weight = gauss_w[n_nodes, m]
                running = weight
                for a in range(n_path - 1, -1, -1):
                    total[a] += before[a] * running
                    running *= factor[a]
            for a in range(n_path):
                value_a = (one[a] - zero[a]) * total[a]
                feature_a = path_feature[a]
                for c in range(n_outputs):
                    phi[feature_a, c] += value_a * table[child, c]
            continue
        # interactions: integral[m] = prod_k h_k(u_m), divided by the excluded factors (all
        # positive where a term is not zero)
        for m in range(n_nodes):
            u = gauss_u[n_nodes, m]
            product = 1.0
            for a in range(n_path):
                product *= one[a] * u + (1.0 - u) * zero[a]
            integral[m] = product
        for a in range(n_path):
            one_a = one[a]
            zero_a = zero[a]
            gap_a = one_a - zero_a
            if gap_a == 0.0:
                continue  # no term of a (and a factor h_a of zero makes every gap zero)
            value_a = 0.0
            for m in range(n_nodes):
                u = gauss_u[n_nodes, m]
                value_a += gauss_w[n_nodes, m] * integral[m] / (one_a * u + (1.0 - u) * zero_a)
            value_a *= gap_a  # phi_a, less its interactions below: the diagonal
            feature_a = path_feature[a]
            for b in range(n_path):
                one_b = one[b]
                zero_b = zero[b]
                gap_b = one_b - zero_b
                if b == a or gap_b == 0.0:
                    continue
                pair = 0.0
                for m in range(n_nodes):
                    u = gauss_u[n_nodes, m]
                    pair += (gauss_w[n_nodes, m] * integral[m]
                             / ((one_a * u + (1.0 - u) * zero_a)
                                * (one_b * u + (1.0 - u) * zero_b)))
                pair *= 0.5 * gap_a * gap_b
                value_a -= pair
                feature_b = path_feature[b]
                for c in range(n_outputs):
                    phi_pairs[feature_a, feature_b, c] += pair * table[child, c]
            for c in range(n_outputs):
                phi_pairs[feature_a, feature_a, c] += value_a * table[child, c]


@jit
def shap_row(X, i, walk, trees, work, phi):
    """phi[j, c] += the Shapley value of feature j for output c of row ``i`` of X, summed
    over the trees of ``trees``; ``phi`` of shape (n_features, n_outputs)."""
    no_pairs = np.zeros((0, 0, 0))
    for t in range(trees.root.shape[0]):
        explain_tree(X, i, walk, trees, t, work, phi, no_pairs, False)


@jit
def shap_interaction_row(X, i, walk, trees, work, phi):
    """phi[j, k, c] += the SHAP interaction value of features j and k for output c of row
    ``i`` of X; ``phi`` of shape (n_features, n_features, n_outputs)."""
    no_values = np.zeros((0, 0))
    for t in range(trees.root.shape[0]):
        explain_tree(X, i, walk, trees, t, work, no_values, phi, True)


@pjit
def shap_values(X, walk, trees, chunk_rows, out):
    """out[i] += the Shapley values of row i (see :func:`shap_row`), in parallel over chunks
    of ``chunk_rows`` rows; ``out`` of shape (n_rows, n_features, n_outputs)."""
    n_rows = X.shape[0]
    n_chunks = (n_rows + chunk_rows - 1) // chunk_rows
    for chunk in prange(n_chunks):
        work = new_work(trees, X.shape[1])
        no_pairs = np.zeros((0, 0, 0))
        first = chunk * chunk_rows
        last = min(n_rows, first + chunk_rows)
        for t in range(trees.root.shape[0]):  # one tree for the whole chunk: it stays cached
            for i in range(first, last):
                explain_tree(X, i, walk, trees, t, work, out[i], no_pairs, False)


@pjit
def shap_interaction_values(X, walk, trees, chunk_rows, out):
    """out[i] += the SHAP interaction values of row i (see :func:`shap_interaction_row`), in
    parallel over chunks of rows; ``out`` of shape (n_rows, n_features, n_features,
    n_outputs)."""
    n_rows = X.shape[0]
    n_chunks = (n_rows + chunk_rows - 1) // chunk_rows
    for chunk in prange(n_chunks):
        work = new_work(trees, X.shape[1])
        no_values = np.zeros((0, 0))
        first = chunk * chunk_rows
        last = min(n_rows, first + chunk_rows)
        for t in range(trees.root.shape[0]):
            for i in range(first, last):
                explain_tree(X, i, walk, trees, t, work, no_values, out[i], True)


@jit
def expected_value(walk, trees, out):
    """out[c] = the trees' expected output c: each leaf's value times the product of the
    weight fractions on its path, summed over leaves and trees (the values of a row sum to
    its output minus this)."""
    table = trees.table
    n_nodes = walk.feature.shape[0]
    expectation = np.zeros((n_nodes, table.shape[1]))
    for node in range(n_nodes - 1, -1, -1):  # children are numbered after their parent
        if walk.children_left[node] == TREE_LEAF:
            for c in range(table.shape[1]):
                expectation[node, c] = table[node, c]
            continue
        for k in range(_n_children(walk, node)):
            child = _child(walk, node, k)
            for c in range(table.shape[1]):
                expectation[node, c] += trees.fraction[child] * expectation[child, c]
    out[:] = 0.0
    for t in range(trees.root.shape[0]):
        for c in range(table.shape[1]):
            out[c] += expectation[trees.root[t], c]
