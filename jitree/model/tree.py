"""The fitted tree: one NumPy array per node attribute."""

import numpy as np

from ..kernels import predict as _predict
from .validation import float_bits, raise_nonfinite

TREE_LEAF = _predict.TREE_LEAF
TREE_UNDEFINED = -2
_ROOT = np.zeros(1, dtype=np.int64)  # a lone tree's root in the flat-layout kernel

_ARRAYS = (
    ("feature", np.int32),
    ("threshold", np.float64),
    ("children_left", np.int32),
    ("children_right", np.int32),
    ("value", np.float64),
    ("impurity", np.float64),
    ("n_node_samples", np.int64),
    ("weighted_n_node_samples", np.float64),
)


class Tree:
    """A binary decision tree stored as parallel arrays; node 0 is the root.

    Node ``i`` is described by entry ``i`` of each array:

    feature : int32 array, shape (n_nodes,)
        Feature tested at an internal node; ``TREE_UNDEFINED`` (-2) at a leaf.
    threshold : float64 array, shape (n_nodes,)
        A row goes to the left child when ``X[row, feature[i]] <= threshold[i]``;
        ``TREE_UNDEFINED`` (-2.0) at a leaf.
    children_left, children_right : int32 arrays, shape (n_nodes,)
        Indices of the children, always greater than ``i``; ``TREE_LEAF`` (-1) at a leaf. A node
        is a leaf exactly when ``children_left[i] == TREE_LEAF``.
    value : float64 array, shape (n_nodes, n_classes) or (n_nodes, 1)
        Classification: the (sample- and class-) weighted count of each class among the node's
        training samples. Regression: the weighted mean target.
    impurity : float64 array, shape (n_nodes,)
        Node impurity under the fitting criterion (Gini index for ``cart``/``twoing``, entropy in
        bits for ``entropy``/``gain_ratio``, weighted variance for ``squared_error``).
    n_node_samples : int64 array, shape (n_nodes,)
        Number of training samples reaching the node.
    weighted_n_node_samples : float64 array, shape (n_nodes,)
        Their total weight.

    Attributes ``n_features`` (columns of X the tree was fitted on) and ``n_classes`` (0 for
    regression) complete the description. The constructor checks the arrays
    (:func:`jitree.model.tree_check.check_tree`) and raises ValueError on any inconsistency.
    The arrays are plain NumPy, so a user's ``@njit`` code can walk the tree with
    :func:`jitree.kernels.predict.leaf_of_row`.
    """

    def __init__(self, n_features, n_classes, feature, threshold, children_left,
                 children_right, value, impurity, n_node_samples, weighted_n_node_samples):
        self.n_features = int(n_features)
        self.n_classes = int(n_classes)
        self.feature = np.ascontiguousarray(feature, dtype=np.int32)
        self.threshold = np.ascontiguousarray(threshold, dtype=np.float64)
        self.children_left = np.ascontiguousarray(children_left, dtype=np.int32)
        self.children_right = np.ascontiguousarray(children_right, dtype=np.int32)
        self.value = np.ascontiguousarray(value, dtype=np.float64)
        self.impurity = np.ascontiguousarray(impurity, dtype=np.float64)
        self.n_node_samples = np.ascontiguousarray(n_node_samples, dtype=np.int64)
        self.weighted_n_node_samples = np.ascontiguousarray(weighted_n_node_samples,
                                                            dtype=np.float64)
        # The kernels do not bounds-check and the walks assume a tree without cycles: a Tree
        # is only ever made of arrays that passed this (O(n_nodes), ~1 ms for 45k nodes).
        from .tree_check import check_tree

        check_tree(self)

    # -- shape -------------------------------------------------------------------------------
    @property
    def node_count(self):
        return self.feature.shape[0]

    @property
    def n_leaves(self):
        return int(np.count_nonzero(self.children_left == TREE_LEAF))

    @property
    def is_leaf(self):
        return self.children_left == TREE_LEAF

    @property
    def depth(self):
        """Depth of every node (root 0); parents come before children."""
        depth = np.zeros(self.node_count, dtype=np.int64)
        stack = [0]
        while stack:  # a walk from the root: correct whatever the node numbering
            node = stack.pop()
            if self.children_left[node] != TREE_LEAF:
                for child in (self.children_left[node], self.children_right[node]):
                    depth[child] = depth[node] + 1
                    stack.append(int(child))
        return depth

    @property
    def max_depth(self):
        return self.cached("max_depth", lambda: int(self.depth.max()) if self.node_count else 0)

    def __repr__(self):
        return (f"Tree(node_count={self.node_count}, n_leaves={self.n_leaves}, "
                f"max_depth={self.max_depth}, n_features={self.n_features}, "
                f"n_classes={self.n_classes})")

    # -- node tables ---------------------------------------------------------------------------
    def probability_table(self):
        """Class probabilities of every node (rows of ``value`` normalised to sum 1)."""
        totals = self.value.sum(axis=1, keepdims=True)
        return self.value / np.where(totals > 0.0, totals, 1.0)

    def compute_feature_importances(self):
        """Total weighted impurity decrease per feature, normalised to sum 1 (0 if no split)."""
        importances = np.zeros(self.n_features)
        internal = np.flatnonzero(self.children_left != TREE_LEAF)
        left = self.children_left[internal]
        right = self.children_right[internal]
        w = self.weighted_n_node_samples
        decrease = (w[internal] * self.impurity[internal] - w[left] * self.impurity[left]
                    - w[right] * self.impurity[right])
        np.add.at(importances, self.feature[internal], decrease)
        total = importances.sum()
        if total > 0.0:
            importances /= total
        return importances

    # -- prediction (X already validated: 2-D float32/float64, n_features columns) -----------
    def cached(self, key, compute):
        """``compute()``, computed once per tree (node tables derived from the arrays; a Tree
        is not modified after construction: pruning builds a new one)."""
        cache = self.__dict__.setdefault("_cache", {})
        if key not in cache:
            cache[key] = compute()
        return cache[key]

    def flat(self, dtype):
        """The flat layout of :mod:`jitree.kernels.predict` for X of ``dtype``, built once.

        Returns ``(feature, threshold, left, max_depth, node_of_flat)``, ``node_of_flat``
        mapping flat ids back to Tree ids. Siblings are numbered side by side, pairs in
        depth-first order, so that each subtree occupies one contiguous stretch of memory: deep
        in the tree a row's path stays within a few cache lines (measured 2x the throughput of
        a breadth-first numbering on a 45k-node tree).
        """
        dtype = np.dtype(dtype)
        return self.cached(("flat", dtype), lambda: self._build_flat(dtype))

    def _build_flat(self, dtype):
        n_nodes = self.node_count
        node_of_flat = np.empty(n_nodes, dtype=np.int64)
        node_of_flat[0] = 0
        filled = 1
        stack = [0]
        while stack:  # depth-first, the two children of a node numbered together
            node = stack.pop()
            left = int(self.children_left[node])
            if left != TREE_LEAF:
                right = int(self.children_right[node])
                node_of_flat[filled] = left
                node_of_flat[filled + 1] = right
                filled += 2
                stack.append(right)
                stack.append(left)
        flat_of_node = np.empty(n_nodes, dtype=np.int64)
        flat_of_node[node_of_flat] = np.arange(n_nodes)
        leaf = self.children_left[node_of_flat] == TREE_LEAF
        feature = np.where(leaf, 0, self.feature[node_of_flat]).astype(np.int32)
        left = np.where(leaf, np.arange(n_nodes),
                        flat_of_node[np.where(leaf, 0, self.children_left[node_of_flat])])
        threshold = np.where(leaf, np.inf, self.threshold[node_of_flat])
        if dtype == np.float32:
            # largest float32 <= the float64 threshold: same comparisons on float32 values
            with np.errstate(over="ignore"):  # beyond float32's range: inf, then stepped down
                rounded = threshold.astype(np.float32)
            above = rounded.astype(np.float64) > threshold
            rounded[above] = np.nextafter(rounded[above], np.float32(-np.inf))
            threshold = rounded
        return (feature, threshold, left.astype(np.int32), self.max_depth, node_of_flat)

    def _predict_flat(self, X, node_table):
        feature, threshold, left, max_depth, node_of_flat = self.flat(X.dtype)
        table = np.ascontiguousarray(node_table[node_of_flat])
        out = np.empty((X.shape[0], table.shape[1]), dtype=table.dtype)
        if _predict.predict_flat(X, *float_bits(X), feature, threshold, left, _ROOT,
                                 np.array([max_depth]), table, _predict.CHUNK_ROWS, out):
            raise_nonfinite(X, "X")
        return out

    def apply(self, X):
        """Tree id of the leaf each row reaches."""
        return self._predict_flat(X, np.arange(self.node_count, dtype=np.int64)[:, None])[:, 0]

    def predict_table(self, X, node_table):
        """node_table[leaf of each row] (node_table: float64, one row per node)."""
        return self._predict_flat(X, np.asarray(node_table, dtype=np.float64))

    def predict_labels(self, X, node_label):
        """node_label[leaf of each row] (node_label: int64, one entry per node)."""
        return self._predict_flat(X, np.asarray(node_label, dtype=np.int64)[:, None])[:, 0]

    def decision_path_arrays(self, X):
        """CSR structure (indptr, indices) of the nodes each row visits, root first."""
        leaves = self.apply(X)
        depth = self.depth
        indptr = np.zeros(X.shape[0] + 1, dtype=np.int64)
        np.cumsum(depth[leaves] + 1, out=indptr[1:])
        parent = np.full(self.node_count, -1, dtype=np.int64)
        internal = np.flatnonzero(self.children_left != TREE_LEAF)
        parent[self.children_left[internal]] = internal
        parent[self.children_right[internal]] = internal
        indices = np.empty(indptr[-1], dtype=np.int64)
        node = leaves.copy()
        position = indptr[1:] - 1
        active = np.ones(X.shape[0], dtype=bool)
        while active.any():
            indices[position[active]] = node[active]
            position -= 1
            node = np.where(active, parent[node], -1)
            active = node >= 0
        return indptr, indices

    # -- persistence helpers ---------------------------------------------------------------------
    def arrays(self):
        return {name: getattr(self, name) for name, _ in _ARRAYS}

    def __getstate__(self):
        state = self.arrays()
        state["n_features"] = self.n_features
        state["n_classes"] = self.n_classes
        return state

    def __setstate__(self, state):
        self.__init__(**state)
