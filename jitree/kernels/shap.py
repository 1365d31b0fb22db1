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

A block of rows walks each tree depth first (:func:`explain_block`), keeping the path's
features with their z (the same for every row) and o (per row); a level's change is undone on
the way back up. A row costs O(nodes / BLOCK_ROWS) for the walk plus O(d^2 / 2) per leaf
(O(d^3 / 2) for interactions), with the block's rows side by side in the inner loops, and
O(max_depth) memory. A branch of zero training weight that no row takes is skipped: every term
of its leaves is zero.

Callable from users' ``@njit`` code: ``walk, trees = jitree.shap_trees(model)`` (a
:class:`~jitree.kernels.records.TreeWalk` and a :class:`~jitree.kernels.records.ShapTrees`),
``work = new_work(trees, n_features)``, then for each row :func:`shap_row` (or
:func:`shap_interaction_row`) adds the row's values into ``phi``.
"""

from collections import namedtuple

import numpy as np
from numba import prange

from ._jit import jit, pjit
from .predict import SPLIT_MULTIWAY, SPLIT_THRESHOLD, TREE_LEAF, child_of

BLOCK_ROWS = 16  # rows walking a tree together

ShapWork = namedtuple("ShapWork", [
    # one thread's state of the depth-first walk of a tree by a block of rows (new_work);
    # per-row entries of path entry (or level) a and row r at a * BLOCK_ROWS + r
    "feature",        # (max_depth + 1,) int64: the path's distinct features, in path order
    "zero",           # (max_depth + 1,) float64: their z (weight fraction along the path)
    "one",            # (rows x (max_depth + 1),) float64: their o per row (1.0: x follows)
    "position",       # (n_features,) int64: a feature's index in ``feature``, -1 off the path
    "node",           # (max_depth + 1,) int64: the node at each level of the walk
    "child",          # (max_depth + 1,) int64: the next child to visit at that level
    "hot",            # (rows x (max_depth + 1),) int64: the child each row goes to there
    "undo_position",  # (max_depth + 1,) int64: the path entry the level changed, -1: added
    "undo_zero",      # (max_depth + 1,) float64: its z and o before the change
    "undo_one",       # (rows x (max_depth + 1),) float64
    "undo",           # (max_depth + 1,) uint8: 1 while the level's change is in place
    "factor",         # (rows x (max_depth + 1),) float64: h_a(u) of path entry a at one u
    "total",          # (rows x (max_depth + 1),) float64: sum_m w_m prod_{k != a} h_k(u_m)
    "run",            # (rows,) float64: a running product per row
    "integral",       # (n_gauss,) float64: prod_k h_k(u_m)
])


@jit
def new_work(trees, n_features):
    """A :class:`ShapWork` for rows of ``n_features`` features and the trees of ``trees``."""
    size = trees.max_depth + 1
    rows = BLOCK_ROWS * size
    return ShapWork(np.zeros(size, dtype=np.int64), np.zeros(size), np.zeros(rows),
                    np.full(n_features, -1, dtype=np.int64), np.zeros(size, dtype=np.int64),
                    np.zeros(size, dtype=np.int64), np.zeros(rows, dtype=np.int64),
                    np.zeros(size, dtype=np.int64), np.zeros(size), np.zeros(rows),
                    np.zeros(size, dtype=np.uint8), np.zeros(rows), np.zeros(rows),
                    np.zeros(BLOCK_ROWS), np.zeros(trees.gauss_u.shape[1]))


@jit
def _hot_children(X, first, n_block, walk, node, hot, offset):
    """hot[offset + r] = the child of ``node`` that row first + r goes to; a threshold test
    without a branch per row (whether x goes right is as good as random)."""
    feature = walk.feature[node]
    if walk.split_kind[node] != SPLIT_THRESHOLD:
        for r in range(n_block):
            hot[offset + r] = child_of(X[first + r, feature], node, walk)
        return
    threshold = walk.threshold[node]
    left = walk.children_left[node]
    right = walk.children_right[node]
    missing_right = walk.missing_left[node] == 0
    for r in range(n_block):
        x = X[first + r, feature]
        goes_right = (x > threshold) | ((x != x) & missing_right)
        hot[offset + r] = right if goes_right else left


@jit
def _leaf_totals(one, zero, n_path, n_block, gauss_u, gauss_w, n_nodes, factor, run, total):
    """total[a * BLOCK_ROWS + r] = sum_m w_m prod_{k != a} h_k(u_m) for row r of a block at a
    leaf, as the whole product over the path divided by h_a(u_m) (positive factors: nothing
    cancels; a zero factor h_a has o_a = z_a = 0, so its own term is zero and every other
    total zero too). The rows side by side in the inner loops: independent products that
    vectorise (inside :func:`explain_block` they did not; one call per leaf and block).
    Measured faster than prefix and suffix products (fewer stores)."""
    stride = BLOCK_ROWS
    for a in range(n_path):
        for r in range(n_block):
            total[a * stride + r] = 0.0
    for m in range(n_nodes):
        u = gauss_u[m]
        weight = gauss_w[m]
        for r in range(n_block):
            run[r] = weight
        for a in range(n_path):
            z = zero[a]
            base = a * stride
            for r in range(n_block):
                h = z + u * (one[base + r] - z)
                factor[base + r] = h
                run[r] *= h
        for a in range(n_path):
            base = a * stride
            for r in range(n_block):
                h = factor[base + r]
                total[base + r] += run[r] / h if h != 0.0 else 0.0


@jit
def explain_block(X, first, n_block, walk, trees, t, work, values, pairs, interactions):
    """Add the SHAP values of rows first .. first + n_block - 1 of X (n_block <= BLOCK_ROWS)
    in tree ``t`` to ``values[row]`` (n_features, n_outputs), or with ``interactions`` their
    interaction values to ``pairs[row]`` (n_features, n_features, n_outputs; ``values`` is
    then not used).

    The rows walk the tree together: the walk (every node, whatever the row) and z are the
    same for all of them, only o and the leaf sums are per row. The walk keeps its arrays as
    locals: a call per node and row passing the records cost more than the arithmetic (the
    helpers here are called once per node or leaf for the whole block)."""
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
    total = work.total
    run = work.run
    integral = work.integral
    stride = BLOCK_ROWS

    root = trees.root[t]
    if children_left[root] == TREE_LEAF:
        return  # no feature changes the output of a tree that is one leaf
    n_path = 0
    level = 0
    level_node[0] = root
    level_child[0] = 0
    undo[0] = 0
    _hot_children(X, first, n_block, walk, root, level_hot, 0)
    while level >= 0:
        if undo[level]:
            undo[level] = 0
            p = undo_position[level]
            if p >= 0:
                zero[p] = undo_zero[level]
                for r in range(n_block):
                    one[p * stride + r] = undo_one[level * stride + r]
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
        share = fraction[child]
        if share == 0.0:
            followed = False
            for r in range(n_block):
                followed |= level_hot[level * stride + r] == child
            if not followed:
                continue  # every term of the leaves below is zero
        feature = node_feature[node]
        p = position[feature]
        undo_position[level] = p
        if p >= 0:  # the feature was tested above: merge into its entry
            undo_zero[level] = zero[p]
            zero[p] *= share
            for r in range(n_block):
                old = one[p * stride + r]
                undo_one[level * stride + r] = old
                one[p * stride + r] = old if level_hot[level * stride + r] == child else 0.0
        else:
            p = n_path
            path_feature[p] = feature
            zero[p] = share
            position[feature] = p
            n_path += 1
            for r in range(n_block):
                one[p * stride + r] = 1.0 if level_hot[level * stride + r] == child else 0.0
        undo[level] = 1
        if children_left[child] != TREE_LEAF:
            level += 1
            level_node[level] = child
            level_child[level] = 0
            undo[level] = 0
            _hot_children(X, first, n_block, walk, child, level_hot, level * stride)
            continue

        # a leaf: see the module docstring for phi_a and phi_ab
        n_nodes = (n_path + 1) // 2  # quadrature nodes
        if not interactions:
            _leaf_totals(one, zero, n_path, n_block, gauss_u[n_nodes], gauss_w[n_nodes],
                         n_nodes, factor, run, total)
            for r in range(n_block):
                phi = values[first + r]
                for a in range(n_path):
                    value_a = (one[a * stride + r] - zero[a]) * total[a * stride + r]
                    feature_a = path_feature[a]
                    for c in range(n_outputs):
                        phi[feature_a, c] += value_a * table[child, c]
            continue
        # interactions: integral[m] = prod_k h_k(u_m), divided by the excluded factors (each
        # positive where its term is not zero)
        for r in range(n_block):
            phi_pairs = pairs[first + r]
            for m in range(n_nodes):
                u = gauss_u[n_nodes, m]
                product = 1.0
                for a in range(n_path):
                    product *= zero[a] + u * (one[a * stride + r] - zero[a])
                integral[m] = product
            for a in range(n_path):
                zero_a = zero[a]
                gap_a = one[a * stride + r] - zero_a
                if gap_a == 0.0:
                    continue  # no term of a (a zero factor h_a makes every term zero)
                value_a = 0.0
                for m in range(n_nodes):
                    value_a += (gauss_w[n_nodes, m] * integral[m]
                                / (zero_a + gauss_u[n_nodes, m] * gap_a))
                value_a *= gap_a  # phi_a, less its interactions below: the diagonal
                feature_a = path_feature[a]
                for b in range(n_path):
                    zero_b = zero[b]
                    gap_b = one[b * stride + r] - zero_b
                    if b == a or gap_b == 0.0:
                        continue
                    pair = 0.0
                    for m in range(n_nodes):
                        u = gauss_u[n_nodes, m]
                        pair += (gauss_w[n_nodes, m] * integral[m]
                                 / ((zero_a + u * gap_a) * (zero_b + u * gap_b)))
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
    values = phi.reshape((1,) + phi.shape)
    no_pairs = np.zeros((0, 0, 0, 0))
    rows = X[i:i + 1]
    for t in range(trees.root.shape[0]):
        explain_block(rows, 0, 1, walk, trees, t, work, values, no_pairs, False)


@jit
def shap_interaction_row(X, i, walk, trees, work, phi):
    """phi[j, k, c] += the SHAP interaction value of features j and k for output c of row
    ``i`` of X; ``phi`` of shape (n_features, n_features, n_outputs)."""
    pairs = phi.reshape((1,) + phi.shape)
    no_values = np.zeros((0, 0, 0))
    rows = X[i:i + 1]
    for t in range(trees.root.shape[0]):
        explain_block(rows, 0, 1, walk, trees, t, work, no_values, pairs, True)


@pjit
def shap_values(X, walk, trees, chunk_rows, out):
    """out[i] += the Shapley values of row i (see :func:`shap_row`), in parallel over chunks
    of ``chunk_rows`` rows; ``out`` of shape (n_rows, n_features, n_outputs)."""
    n_rows = X.shape[0]
    n_chunks = (n_rows + chunk_rows - 1) // chunk_rows
    for chunk in prange(n_chunks):
        work = new_work(trees, X.shape[1])
        no_pairs = np.zeros((0, 0, 0, 0))
        last = min(n_rows, (chunk + 1) * chunk_rows)
        for t in range(trees.root.shape[0]):  # one tree for the whole chunk: it stays cached
            for first in range(chunk * chunk_rows, last, BLOCK_ROWS):
                explain_block(X, first, min(BLOCK_ROWS, last - first), walk, trees, t, work,
                              out, no_pairs, False)


@pjit
def shap_interaction_values(X, walk, trees, chunk_rows, out):
    """out[i] += the SHAP interaction values of row i (see :func:`shap_interaction_row`), in
    parallel over chunks of rows; ``out`` of shape (n_rows, n_features, n_features,
    n_outputs)."""
    n_rows = X.shape[0]
    n_chunks = (n_rows + chunk_rows - 1) // chunk_rows
    for chunk in prange(n_chunks):
        work = new_work(trees, X.shape[1])
        no_values = np.zeros((0, 0, 0))
        last = min(n_rows, (chunk + 1) * chunk_rows)
        for t in range(trees.root.shape[0]):
            for first in range(chunk * chunk_rows, last, BLOCK_ROWS):
                explain_block(X, first, min(BLOCK_ROWS, last - first), walk, trees, t, work,
                              no_values, out, True)
