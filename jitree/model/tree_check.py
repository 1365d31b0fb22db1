"""Structural validation of a :class:`jitree.Tree` built from outside data.

The prediction kernels do not bounds-check: a child index past the end of the arrays, a feature
index past the columns of X or a cycle between nodes would read foreign memory or loop forever.
:func:`check_tree` proves, in O(n_nodes) vectorised NumPy, everything those kernels and the
Tree's own helpers (``depth``, ``flat``) rely on, so that a tree that passes it can be walked
safely whatever bytes it came from (a file, another library's model).
"""

import numbers

import numpy as np

from .tree import (
    _ARRAYS,
    _FEATURE_ARRAYS,
    _POOLS,
    FEATURE_CATEGORICAL,
    FEATURE_NUMERIC,
    SPLIT_MULTIWAY,
    SPLIT_SUBSET,
    SPLIT_THRESHOLD,
    TREE_LEAF,
    TREE_UNDEFINED,
)

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
    for name, dtype in _POOLS + _FEATURE_ARRAYS:
        array = getattr(tree, name, None)
        if not isinstance(array, np.ndarray):
            raise TypeError(f"tree.{name} must be a numpy array, got {type(array).__name__}")
        if array.dtype != dtype or array.ndim != 1:
            raise ValueError(f"tree.{name} must be a 1-D array of dtype {np.dtype(dtype)}, got "
                             f"{array.dtype} with shape {array.shape}")
    for name, _ in _FEATURE_ARRAYS:
        if getattr(tree, name).shape[0] != tree.n_features:
            raise ValueError(f"tree.{name} has {getattr(tree, name).shape[0]} entries, one "
                             f"per feature is needed ({tree.n_features})")
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
    n_outputs = _check_count("n_outputs", getattr(tree, "n_outputs", 1), 1)
    width = n_outputs * (n_classes if n_classes > 0 else 1)
    if tree.value.shape != (n_nodes, width):
        kind = f"{n_classes} classes" if n_classes > 0 else "regression"
        if n_outputs > 1:
            kind += f", {n_outputs} outputs"
        raise ValueError(f"tree.value must have shape ({n_nodes}, {width}) ({kind}), got "
                         f"{tree.value.shape}")
    return n_nodes


def _check_children(left, right, multiway, n_nodes):
    """Leaf marks, index ranges, order, and one parent per node: together they make a tree.
    ``multiway``: nodes whose children are the range ``left .. right``."""
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
    ranged = multiway[internal]
    bad = ranged & (right[internal] < left[internal])
    if bad.any():
        node = int(internal[_first(bad)])
        raise ValueError(f"multiway node {node} has children_right {right[node]} before "
                         f"children_left {left[node]}: its children are a range")
    binary = internal[~ranged]
    span = internal[ranged]
    count = (right[span].astype(np.int64) - left[span] + 1)
    if count.sum() > n_nodes:  # more children than nodes: some node has two parents
        raise ValueError("the multiway nodes' children ranges overlap: some node would have "
                         "several parents")
    first = np.repeat(np.cumsum(count) - count, count)
    range_children = np.repeat(left[span].astype(np.int64), count) + (
        np.arange(int(count.sum())) - first)
    n_parents = np.bincount(np.concatenate((left[binary], right[binary], range_children)),
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


def _check_categories(tree, leaf, internal):
    """Split kinds against feature kinds, and every pool read in bounds."""
    kind = tree.split_kind
    feature_kind = tree.feature_kind
    n_categories = tree.n_categories.astype(np.int64)
    bad = (feature_kind < FEATURE_NUMERIC) | (feature_kind > FEATURE_CATEGORICAL)
    if bad.any():
        f = _first(bad)
        raise ValueError(f"tree.feature_kind[{f}] = {feature_kind[f]} is not a feature kind")
    bad = (n_categories < 0) | ((feature_kind == FEATURE_NUMERIC) & (n_categories != 0))
    if bad.any():
        f = _first(bad)
        raise ValueError(f"tree.n_categories[{f}] = {n_categories[f]} is invalid for a "
                         f"feature of kind {feature_kind[f]}")
    bad = leaf & ((kind != SPLIT_THRESHOLD) | (tree.missing_left != 0)
                  | (tree.category_offset != -1))
    if bad.any():
        node = _first(bad)
        raise ValueError(f"leaf {node} has a split kind, missing_left or category_offset "
                         "(must be 0, 0 and -1)")
    bad = tree.missing_left > 1
    if bad.any():
        node = _first(bad)
        raise ValueError(f"tree.missing_left[{node}] = {tree.missing_left[node]} (must be 0 "
                         "or 1)")
    # feature is in range here (checked before)
    node_feature = np.where(leaf, 0, tree.feature).astype(np.int64)
    categorical = internal[kind[internal] != SPLIT_THRESHOLD]
    bad = feature_kind[node_feature[categorical]] != FEATURE_CATEGORICAL
    if bad.any():
        node = int(categorical[_first(bad)])
        raise ValueError(f"node {node} makes a category test on feature "
                         f"{tree.feature[node]}, which is not categorical")
    threshold_nodes = internal[kind[internal] == SPLIT_THRESHOLD]
    bad = feature_kind[node_feature[threshold_nodes]] == FEATURE_CATEGORICAL
    if bad.any():
        node = int(threshold_nodes[_first(bad)])
        raise ValueError(f"node {node} makes a threshold test on the categorical feature "
                         f"{tree.feature[node]}")
    bad = tree.category_offset[threshold_nodes] != -1
    if bad.any():
        node = int(threshold_nodes[_first(bad)])
        raise ValueError(f"threshold node {node} has category_offset "
                         f"{tree.category_offset[node]} (must be -1)")
    offset = tree.category_offset
    for split, pool, width in (
            (SPLIT_SUBSET, tree.category_bits, (n_categories + 63) // 64),
            (SPLIT_MULTIWAY, tree.multiway_slot, n_categories + 1)):
        nodes = internal[kind[internal] == split]
        size = width[node_feature[nodes]]
        # compared as offset > length - size: offset + size could wrap around int64
        bad = (offset[nodes] < 0) | (size < 1) | (offset[nodes] > pool.shape[0] - size)
        if bad.any():
            node = int(nodes[_first(bad)])
            raise ValueError(f"tree.category_offset[{node}] = {offset[node]} reads outside "
                             f"its pool of {pool.shape[0]} entries")
        if split == SPLIT_MULTIWAY and nodes.shape[0]:
            n_children = (tree.children_right[nodes].astype(np.int64)
                          - tree.children_left[nodes] + 1)
            first = np.repeat(np.cumsum(size) - size, size)
            entry = np.repeat(offset[nodes], size) + (np.arange(int(size.sum())) - first)
            slot = pool[entry]
            bad = (slot < 0) | (slot >= np.repeat(n_children, size))
            if bad.any():
                node = int(np.repeat(nodes, size)[_first(bad)])
                raise ValueError(f"multiway node {node} sends a category to a slot outside "
                                 f"its {n_children[list(nodes).index(node)]} children")


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
    kind = tree.split_kind
    bad = (kind != SPLIT_THRESHOLD) & (kind != SPLIT_SUBSET) & (kind != SPLIT_MULTIWAY)
    if bad.any():
        node = _first(bad)
        raise ValueError(f"tree.split_kind[{node}] = {kind[node]} is not a split kind "
                         f"({SPLIT_THRESHOLD}, {SPLIT_SUBSET} or {SPLIT_MULTIWAY})")
    leaf, internal = _check_children(tree.children_left, tree.children_right,
                                     kind == SPLIT_MULTIWAY, n_nodes)

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
    _check_categories(tree, leaf, internal)
    threshold_nodes = internal[kind[internal] == SPLIT_THRESHOLD]
    _check_finite(tree, "threshold", threshold_nodes)
    for name in ("value", "impurity", "weighted_n_node_samples"):
        _check_finite(tree, name)
    bad = tree.n_node_samples < 0
    if bad.any():
        node = _first(bad)
        raise ValueError(f"tree.n_node_samples[{node}] = {tree.n_node_samples[node]} is "
                         "negative")
    return tree
