"""Structural validation of a :class:`jitree.Tree` built from outside data.

The prediction kernels do not bounds-check: a child index past the end of the arrays, a feature
index past the columns of X or a cycle between nodes would read foreign memory or loop forever.
:func:`check_tree` proves, in O(n_nodes) vectorised NumPy, everything those kernels and the
Tree's own helpers (``depth``, ``flat``) rely on, so that a tree that passes it can be walked
safely whatever bytes it came from (a file, another library's model).
"""

import numbers

import numpy as np

from .tree import _ARRAYS, TREE_LEAF, TREE_UNDEFINED

_ONE_DIMENSIONAL = tuple(name for name, _ in _ARRAYS if name != "value")


def _first(mask):
    """Index of the first True entry of a boolean array."""
    return int(np.flatnonzero(mask)[0])


def _check_count(name, count, low):
    if isinstance(count, bool) or not isinstance(count, numbers.Integral):
        raise TypeError(f"tree.{name} must be an int, got {type(count).__name__}")
    if count < low:
        raise ValueError(f"tree.{name} must be >= {low}, got {count}")
    return int(count)


def _check_arrays(tree, n_classes):
    """dtype, number of dimensions and length of every array; returns n_nodes."""
    for name, dtype in _ARRAYS:
        array = getattr(tree, name, None)
        if not isinstance(array, np.ndarray):
            raise TypeError(f"tree.{name} must be a numpy array, got {type(array).__name__}")
        if array.dtype != dtype:
            raise ValueError(f"tree.{name} must have dtype {np.dtype(dtype)}, got "
                             f"{array.dtype}")
    for name in _ONE_DIMENSIONAL:
        array = getattr(tree, name)
        if array.ndim != 1:
            raise ValueError(f"tree.{name} must be 1-D, got shape {array.shape}")
    n_nodes = tree.feature.shape[0]
    for name in _ONE_DIMENSIONAL:
        array = getattr(tree, name)
        if array.shape[0] != n_nodes:
            raise ValueError(f"tree.{name} has {array.shape[0]} nodes, tree.feature has "
                             f"{n_nodes}: every array needs one entry per node")
    if n_nodes < 1:
        raise ValueError("the tree has no node: every array is empty (the root is needed)")
    width = n_classes if n_classes > 0 else 1
    if tree.value.shape != (n_nodes, width):
        kind = f"{n_classes} classes" if n_classes > 0 else "regression"
        raise ValueError(f"tree.value must have shape ({n_nodes}, {width}) ({kind}), got "
                         f"{tree.value.shape}")
    return n_nodes


def _check_children(left, right, n_nodes):
    """Leaf marks, index ranges, order, and one parent per node: together they make a tree."""
    leaf = left == TREE_LEAF
    bad = leaf & (right != TREE_LEAF)
    if bad.any():
        node = _first(bad)
        raise ValueError(f"node {node} is a leaf (children_left = {TREE_LEAF}) but "
                         f"children_right[{node}] = {right[node]} (must be {TREE_LEAF})")
    internal = np.flatnonzero(~leaf)
    for name, children in (("children_left", left), ("children_right", right)):
        child = children[internal]
        bad = (child < 1) | (child >= n_nodes)
        if bad.any():
            node = int(internal[_first(bad)])
            raise ValueError(f"tree.{name}[{node}] = {children[node]} is out of range: an "
                             f"internal node's children must be in [1, {n_nodes})")
        # Children numbered after their parent: Tree.depth (and so the walk length of the
        # batch predictor) is computed in one pass in node order, which this makes correct.
        bad = child <= internal
        if bad.any():
            node = int(internal[_first(bad)])
            raise ValueError(f"tree.{name}[{node}] = {children[node]} does not come after "
                             f"its parent {node} (a cycle or an out-of-order node)")
    bad = left[internal] == right[internal]
    if bad.any():
        node = int(internal[_first(bad)])
        raise ValueError(f"node {node} has the same left and right child {left[node]}")
    n_parents = np.bincount(np.concatenate((left[internal], right[internal])),
                            minlength=n_nodes)
    if n_parents[0] != 0:  # unreachable after the range check, kept as a guard
        raise ValueError("the root (node 0) is the child of another node")
    bad = n_parents[1:] != 1
    if bad.any():
        node = _first(bad) + 1
        if n_parents[node] == 0:
            raise ValueError(f"node {node} has no parent: it cannot be reached from the root")
        raise ValueError(f"node {node} is the child of {n_parents[node]} nodes (must be 1)")
    # Reachability: every node but the root has exactly one parent, numbered before it, so
    # following parents from any node strictly decreases the index and must end at the only
    # parentless node, the root. Hence the nodes form one tree rooted at 0 and no walk loops.
    return leaf, internal


def _check_finite(tree, name, where=None):
    array = getattr(tree, name)
    values = array if where is None else array[where]
    finite = np.isfinite(values)
    if not finite.all():
        flat_index = _first(~finite.reshape(-1))
        if values.ndim == 2:
            row, column = divmod(flat_index, values.shape[1])
            node = row if where is None else int(where[row])
            raise ValueError(f"tree.{name}[{node}, {column}] = {values[row, column]} is not "
                             "finite")
        node = flat_index if where is None else int(where[flat_index])
        raise ValueError(f"tree.{name}[{node}] = {array[node]} is not finite")


def check_tree(tree, n_features=None, n_classes=None):
    """Check that ``tree`` is a well-formed :class:`jitree.Tree`; raise otherwise.

    Parameters
    ----------
    tree : jitree.Tree
        The tree to check (typically read from a file or converted from another library).
    n_features : int, optional
        Expected ``tree.n_features`` (e.g. the estimator's ``n_features_in_``).
    n_classes : int, optional
        Expected ``tree.n_classes`` (the number of labels; 0 for regression).

    Returns
    -------
    tree : jitree.Tree
        The same object, unchanged.

    Raises
    ------
    TypeError
        An attribute is missing or of the wrong type.
    ValueError
        The arrays do not describe a binary tree that the kernels can walk. Checked: the
        documented dtype and shape of every array and one entry per node (at least the root);
        a node is a leaf exactly when ``children_left`` is ``TREE_LEAF``, and then
        ``children_right`` is too; an internal node has two different children in
        ``[1, n_nodes)`` numbered after it; every node but the root has exactly one parent
        (so all are reachable from the root, with no cycle and no shared child); internal
        nodes test a feature in ``[0, n_features)`` against a finite threshold; leaves have
        feature ``TREE_UNDEFINED``; ``value``, ``impurity`` and ``weighted_n_node_samples``
        are finite and ``n_node_samples`` is non-negative.
    """
    tree_n_features = _check_count("n_features", getattr(tree, "n_features", None), 1)
    tree_n_classes = _check_count("n_classes", getattr(tree, "n_classes", None), 0)
    if n_features is not None and tree_n_features != n_features:
        raise ValueError(f"the tree was fitted on {tree_n_features} features, expected "
                         f"{n_features}")
    if n_classes is not None and tree_n_classes != n_classes:
        raise ValueError(f"the tree has {tree_n_classes} classes, expected {n_classes}")
    n_nodes = _check_arrays(tree, tree_n_classes)
    leaf, internal = _check_children(tree.children_left, tree.children_right, n_nodes)

    feature = tree.feature
    bad = (feature[internal] < 0) | (feature[internal] >= tree_n_features)
    if bad.any():
        node = int(internal[_first(bad)])
        raise ValueError(f"tree.feature[{node}] = {feature[node]} is out of range: an "
                         f"internal node's feature must be in [0, {tree_n_features})")
    bad = leaf & (feature != TREE_UNDEFINED)
    if bad.any():
        node = _first(bad)
        raise ValueError(f"tree.feature[{node}] = {feature[node]} at a leaf (must be "
                         f"{TREE_UNDEFINED})")
    _check_finite(tree, "threshold", internal)
    for name in ("value", "impurity", "weighted_n_node_samples"):
        _check_finite(tree, name)
    bad = tree.n_node_samples < 0
    if bad.any():
        node = _first(bad)
        raise ValueError(f"tree.n_node_samples[{node}] = {tree.n_node_samples[node]} is "
                         "negative")
    return tree
