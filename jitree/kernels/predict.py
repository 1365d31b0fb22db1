"""Prediction: walk each row from the root to its leaf, in parallel over rows.

The per-row walk :func:`leaf_of_row` is serial and takes the Tree arrays, so users can call it
from their own ``@njit`` code; the ``prange`` loop lives only in the batch kernels.
"""

from numba import prange

from ._jit import jit, pjit

TREE_LEAF = -1


@jit
def leaf_of_row(X, i, feature, threshold, children_left, children_right):
    """Leaf reached by row ``i`` of X: left when ``X[i, feature] <= threshold``."""
    node = 0
    while children_left[node] != TREE_LEAF:
        if X[i, feature[node]] <= threshold[node]:
            node = children_left[node]
        else:
            node = children_right[node]
    return node


@pjit
def apply_rows(X, feature, threshold, children_left, children_right, out):
    """out[i] = leaf_of_row(X, i, ...) for every row."""
    for i in prange(X.shape[0]):
        out[i] = leaf_of_row(X, i, feature, threshold, children_left, children_right)


@pjit
def predict_rows(X, feature, threshold, children_left, children_right, node_table, out):
    """out[i, :] = node_table[leaf of row i, :] (class probabilities, means, ...)."""
    for i in prange(X.shape[0]):
        leaf = leaf_of_row(X, i, feature, threshold, children_left, children_right)
        for k in range(node_table.shape[1]):
            out[i, k] = node_table[leaf, k]


@pjit
def predict_labels(X, feature, threshold, children_left, children_right, node_label, out):
    """out[i] = node_label[leaf of row i] (e.g. the index of the majority class)."""
    for i in prange(X.shape[0]):
        out[i] = node_label[leaf_of_row(X, i, feature, threshold, children_left,
                                        children_right)]
