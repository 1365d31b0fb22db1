"""Prediction: walk each row from the root to its leaf, in parallel over rows.

Two layouts of the same tree:

- the Tree arrays themselves, walked one row at a time by :func:`leaf_of_row`: serial, for
  users' own ``@njit`` code;
- a *flat* layout built once per tree (:meth:`jitree.Tree.flat`) for batch prediction: the two
  children of a node are adjacent (right = left + 1; a multiway node's k children too, in slot
  order), a leaf is its own left child with an infinite threshold, and thresholds have X's
  dtype (for float32 X a float64 midpoint is rounded down to the float32 below it, which
  compares identically on float32 values). The child is then ``left[node] + (x >
  threshold[node])``: no branch to mispredict, and a block of rows is walked together so
  that their memory loads overlap. Rows with a missing value take the same layout, with one
  more per-node flag for the side NaN goes to.

A row's leaf then reads its row of a prediction table (class probabilities, means, labels,
node ids). A single tree's table has a row per flat node; a forest's has a row per leaf
(``FlatTrees.leaf_base``), half the memory: the leaf's threshold is a NaN, which every
comparison finds false as it does +inf, and the low bits of the NaN hold the leaf's rank in its
tree (:func:`table_row`). A tree whose leaves are all pure (each leaf's row a 1.0 among zeros:
full-depth classifier trees) has no rows: its leaves' NaNs hold their class's column, and the
walk adds 1.0 there (:func:`add_leaf`).
"""

import math

import numpy as np
from numba import prange
from numba.cpython.unsafe.numbers import trailing_zeros

from ._jit import borrowing, float_of_bits, jit, pjit, serial_twin
from .checks import nonfinite_rows
from .records import ZeroPaths

TREE_LEAF = -1
TREE_UNDEFINED = -2  # feature and threshold of a leaf
SPLIT_THRESHOLD = 0
SPLIT_SUBSET = 1
SPLIT_MULTIWAY = 2
BLOCK_ROWS = 16  # rows walked together by one thread in blocks (8: a forest 2-4% slower, a
                 # tree 8%): the flat walk of trees whose lanes would not pay (LANES_PAY,
                 # LANES_TABLE_BYTES), apply, the quantile walk
CHUNK_ROWS = 2048  # rows per parallel task
CHECK_EVERY = 4  # steps between two looks for rows at their leaves
CSR_LANES = 16  # rows walked together by one thread of predict_flat_csr (8: 1.03-1.2x slower)
LEAF_RANK_BITS = 22  # low bits of a leaf's NaN threshold that hold its rank (leaf_base)


@jit
def write_flat(tree, weight, flat, at, order, toward, nan_bits):
    """Write the flat layout of one tree (:meth:`jitree.Tree.flat`) into ``flat``'s
    ``feature``, ``threshold``, ``left`` and ``missing_right`` from flat id ``at`` on, and
    each flat node's Tree id into ``order`` at the same positions; returns the tree's depth
    and whether its rows walk in lanes (:func:`lanes_pay`, from its leaves' depths and
    training weights).
    ``tree``: the TreeWalk record of a valid tree (every node but the root is one node's
    child, numbered after it); ``weight``: its nodes' training weights
    (``weighted_n_node_samples``).

    Flat order: the root, then the children of each internal node side by side (the two of a
    binary node, the k of a multiway node in slot order), internal nodes in depth-first
    (pre-)order, from a stack of the internal nodes still to visit: O(nodes) whatever the
    depth. Of a node's children, the one of most training weight is visited first (ties,
    such as equal or zero weights: the first in slot order), then the others in slot order:
    the children of the heaviest follow their parent's, so the path most rows take reads
    consecutive nodes (the figures: docs/user_guide/performance.rst). A node's first child
    is ``left`` (absolute: ``at`` included); a leaf is its own left child, with feature 0
    and threshold +inf, or, when ``nan_bits`` (the bits of a quiet NaN of the threshold's
    type) is not 0, that NaN with the leaf's rank among the tree's leaves in Tree id order
    in its low bits (:func:`table_row`). A category node's threshold is +inf; a threshold
    node's is the largest value of the threshold's type <= its float64 threshold
    (``toward``: -inf of that type), so that ``x <= it`` exactly when ``x <= threshold`` for
    every x of that type. ``missing_right``: 1 for a threshold node that sends a missing
    value right."""
    # the arrays as locals: a helper taking the records per node paid their reference
    # counts (a 20-tree forest's layout 145 ms against 30 ms)
    children_left = tree.children_left
    children_right = tree.children_right
    split_kind = tree.split_kind
    n_nodes = children_left.shape[0]
    if n_nodes == 0:
        return 0, False
    left = flat.left
    # the flat order and each internal node's first child
    order[at] = 0
    left[at] = at
    stack = np.empty(n_nodes, dtype=np.int64)  # flat ids of internal nodes to visit
    stack_depth = np.empty(n_nodes, dtype=np.int64)
    # the training weight of the leaves a walk finds after each number of looks
    at_look = np.zeros(n_nodes // CHECK_EVERY + 2)
    top = 0
    if children_left[0] != TREE_LEAF:
        stack[0] = at
        stack_depth[0] = 0
        top = 1
    else:
        at_look[0] = weight[0]
    k = at + 1
    depth = 0
    while top > 0:
        top -= 1
        parent = stack[top]
        node = order[parent]
        first = np.int64(children_left[node])
        last = np.int64(children_right[node])
        multiway = split_kind[node] == SPLIT_MULTIWAY
        count = last - first + 1 if multiway else 2
        left[parent] = k
        child_depth = stack_depth[top] + 1
        depth = max(depth, child_depth)
        for j in range(count):
            order[k + j] = first + j if multiway else (first if j == 0 else last)
            left[k + j] = k + j  # a leaf's; an internal node's is set when it is visited
            if children_left[order[k + j]] == TREE_LEAF:
                at_look[(child_depth + CHECK_EVERY - 1) // CHECK_EVERY] += \
                    weight[order[k + j]]
        # the heaviest child's subtree is visited first (pushed last), then the others in
        # slot order
        heavy = 0
        for j in range(1, count):
            if weight[order[k + j]] > weight[order[k + heavy]]:
                heavy = j
        for j in range(count, -1, -1):
            # j = count .. 1: slot j - 1, from the last down, but the heaviest; j = 0: it
            child = heavy if j == 0 else j - 1
            if (j == 0 or child != heavy) and children_left[order[k + child]] != TREE_LEAF:
                stack[top] = k + child
                stack_depth[top] = child_depth
                top += 1
        k += count
    # the nodes' tests, read in Tree id order and written at their flat ids (read in flat
    # order, scattered through the Tree's arrays: a 20-tree forest's 1.26M nodes 37.7 ms
    # against 28.5 ms)
    feature = tree.feature
    threshold = tree.threshold
    missing_left = tree.missing_left
    flat_feature = flat.feature
    flat_threshold = flat.threshold
    flat_bits = flat.threshold_bits
    missing_right = flat.missing_right
    flat_of = stack  # reused: the flat id of each Tree node
    for p in range(at, at + n_nodes):
        flat_of[order[p]] = p
    rank = 0
    boxed = np.empty(1, dtype=flat.threshold_bits.dtype)  # the rank in the bits' type
    for node in range(n_nodes):
        p = flat_of[node]
        missing_right[p] = 0
        if children_left[node] == TREE_LEAF:
            flat_feature[p] = 0
            if nan_bits != 0:
                boxed[0] = rank
                flat_bits[p] = nan_bits | boxed[0]
                rank += 1
            else:
                flat_threshold[p] = np.inf
            continue
        flat_feature[p] = feature[node]
        if split_kind[node] != SPLIT_THRESHOLD:
            flat_threshold[p] = np.inf
            continue
        value = threshold[node]
        flat_threshold[p] = value
        if flat_threshold[p] > value:  # rounded up to a float32: the one below it
            flat_threshold[p] = np.nextafter(flat_threshold[p], toward)
        missing_right[p] = missing_left[node] == 0
    return depth, lanes_pay(at_look[:depth // CHECK_EVERY + 2])


@jit
def lanes_pay(at_look):
    """Whether a tree's rows walk in lanes (:func:`walk_tree_lanes`) rather than in blocks:
    ``at_look[k]``: the training weight of its leaves at depths (k - 1) * CHECK_EVERY + 1 ..
    k * CHECK_EVERY, which a row walking from the root is seen at after k looks (every
    CHECK_EVERY steps). A row holds its lane for its own looks; a block of BLOCK_ROWS rows
    walks until its last row is at its leaf, the most looks of BLOCK_ROWS rows. Taking a
    row's leaf as drawn by the training weights, lanes pay when blocks walk at least
    LANES_PAY times the steps (the expected most looks of BLOCK_ROWS rows against the
    expected looks of one); a tree of zero weight, and a lone leaf, walk in blocks."""
    total = at_look.sum()
    if not total > 0.0:
        return False
    own = 0.0
    most = 0.0
    below = 0.0  # the share of the weight found in fewer looks
    for k in range(at_look.shape[0]):
        share = at_look[k] / total
        own += k * share
        most += k * ((below + share) ** BLOCK_ROWS - below ** BLOCK_ROWS)
        below += share
    return own > 0.0 and most >= LANES_PAY * own  # a lone leaf: no step to save


@jit
def one_hot_rows(value, nodes, columns):
    """Whether each row ``value[nodes[i]]`` (a node's class weights) has one entry in (0,
    inf) and zeros elsewhere, its column then written to ``columns[i]``: such a row's class
    probabilities are a 1.0 among zeros, and the leaf can vote (:func:`add_leaf`). Stops at
    the first row that has not, or that holds a -0.0 (a sign the walk must add), and
    returns False; True when every row has."""
    width = value.shape[1]
    for i in range(nodes.shape[0]):
        node = nodes[i]
        column = -1
        for k in range(width):
            weight = value[node, k]
            if weight == 0.0:
                if math.copysign(1.0, weight) < 0.0:
                    return False
                continue
            if column >= 0 or not 0.0 < weight < np.inf:
                return False
            column = k
        if column < 0:
            return False
        columns[i] = column
    return True


_RANK_MASK = np.uint64((1 << LEAF_RANK_BITS) - 1)


@jit(inline="always")
def table_row(flat, base, node):
    """The row of the prediction table that leaf ``node`` reads, in a tree whose leaves' rows
    start at ``base`` (``flat.leaf_base`` of the tree: the leaf's rank in its tree is in
    the low bits of its NaN threshold; -1: the table has a row per flat node)."""
    if base < 0:
        return np.uint64(node)
    return np.uint64(base) + (np.uint64(flat.threshold_bits[np.uint64(node)]) & _RANK_MASK)


@jit(inline="always")
def add_leaf(flat, votes, base, node, table, out, i, first):
    """Add leaf ``node`` of a tree to ``out[i]``: its row of ``table`` (:func:`table_row`,
    ``base`` the tree's ``flat.leaf_base``) or, when the tree votes (``votes``:
    ``flat.votes`` of the tree), 1.0 to the column that the leaf's NaN threshold holds. The
    first tree (``first``) sets ``out[i]`` instead: its table row bit for bit, or zeros and
    the 1.0.

    A vote adds what the leaf's one-hot row would, without reading the table: 0.0 to a column
    leaves it as it is (no column holds -0.0: :func:`jitree.model.tree.flat_trees` makes a
    tree vote only when no table value is negative). A forest of full-depth classifier trees
    votes with every tree: its predict_proba of 1M rows (100 trees, 2 threads) took 1.38-1.39 s
    against 1.71-1.72 s reading the table."""
    width = out.shape[1]
    if votes:
        column = np.uint64(flat.threshold_bits[node]) & _RANK_MASK
        if first:
            for k in range(width):
                out[i, k] = 0.0
        out[i, column] += 1.0
        return
    row = table_row(flat, base, node)
    for k in range(width):
        if first:
            out[i, k] = table[row, k]
        else:
            out[i, k] += table[row, k]


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


@jit
def category_code(x, n_categories):
    """The category code of value ``x``, or -1 when it is missing: NaN, or not one of the
    codes 0 .. n_categories - 1 (an unseen category). Never an index out of range."""
    if x >= 0.0 and x < n_categories:  # False for NaN
        code = np.intp(x)
        if code == x:
            return code
    return -1


@jit(inline="always")
def child_of(x, node, tree):
    """The child of internal ``node`` that value ``x`` (of the node's feature) goes to;
    ``tree`` a :class:`~jitree.kernels.records.TreeWalk`.

    Inlined by numba itself: as a call, passing its ten arrays cost more than the walk (a
    forest with missing values predicted 2.5 times slower)."""
    kind = tree.split_kind[node]
    left = tree.children_left[node]
    if kind == SPLIT_THRESHOLD:
        if x <= tree.threshold[node]:
            return left
        if x > tree.threshold[node]:
            return tree.children_right[node]
        return left if tree.missing_left[node] else tree.children_right[node]  # NaN
    m = tree.n_categories[tree.feature[node]]
    code = category_code(x, m)
    if kind == SPLIT_SUBSET:
        if code < 0:
            return left if tree.missing_left[node] else tree.children_right[node]
        word = tree.category_bits[tree.category_offset[node] + (code >> 6)]
        if (word >> np.uint64(code & 63)) & np.uint64(1):
            return left
        return tree.children_right[node]
    if code < 0:
        code = m  # the slot of missing values and unseen categories
    return left + tree.multiway_slot[tree.category_offset[node] + code]


@jit
def leaf_of_row_any(X, i, tree):
    """Leaf reached by row ``i`` of X in a tree with any kind of node (threshold, category
    subset, multiway) and missing values; ``tree``: ``Tree.walk_arrays()`` (a
    :class:`~jitree.kernels.records.TreeWalk`)."""
    node = 0
    feature = tree.feature
    children_left = tree.children_left
    while children_left[node] != TREE_LEAF:
        node = child_of(X[i, feature[node]], node, tree)
    return node


@jit
def infinite_rows(bits, first, last, magnitude_mask, infinity):
    """Whether a value of rows first:last is +-inf (``bits``: X viewed as unsigned ints)."""
    found = False
    for i in range(first, last):
        for j in range(bits.shape[1]):
            found |= (bits[i, j] & magnitude_mask) == infinity
    return found


@pjit
def predict_nodes(X, X_bits, magnitude_mask, infinity, tree, tree_root, table, chunk_rows, out):
    """out[i, :] = sum over trees t of table[leaf of row i in tree t, :], walking the Tree
    arrays themselves (every node kind, missing values), in parallel over chunks of rows.

    ``tree``: a :class:`~jitree.kernels.records.TreeWalk`; several trees are concatenated
    arrays with tree t's root at ``tree_root[t]`` (children and category offsets already
    shifted). ``X_bits``: X viewed as unsigned ints; a value is infinite
    when ``bits & magnitude_mask == infinity`` (all but the sign bit compared). Returns whether X
    holds an infinity (the caller raises; NaN is a missing value).

    The first tree's entries are copied bit for bit (no arithmetic), so a float64 ``table``
    may carry int64 bit patterns for a single tree (labels, node ids).
    """
    feature = tree.feature
    children_left = tree.children_left
    n_rows = X.shape[0]
    width = table.shape[1]
    n_chunks = (n_rows + chunk_rows - 1) // chunk_rows
    infinite = np.zeros(n_chunks, dtype=np.uint8)
    for chunk in prange(n_chunks):
        first = chunk * chunk_rows
        last = min(n_rows, first + chunk_rows)
        infinite[chunk] = infinite_rows(X_bits, first, last, magnitude_mask, infinity)
        for t in range(tree_root.shape[0]):
            for i in range(first, last):
                node = tree_root[t]
                while children_left[node] != TREE_LEAF:
                    node = child_of(X[i, feature[node]], node, tree)
                for k in range(width):
                    if t == 0:
                        out[i, k] = table[node, k]
                    else:
                        out[i, k] += table[node, k]
    return infinite.any()


@jit(inline="always")
def _walk_block(X, first, feature, threshold, left, max_depth, nodes, root):
    """Walk rows first:first + BLOCK_ROWS from node ``root`` to their leaves (flat layout)
    into ``nodes`` (unsigned, like every index here: numba adds no negative-index fix-up;
    a forest walks about a third faster)."""
    for r in range(BLOCK_ROWS):
        nodes[r] = root
    depth = 0
    while depth < max_depth:
        for _ in range(CHECK_EVERY):
            for r in range(BLOCK_ROWS):
                node = nodes[r]
                row = X[np.uint64(first + r)]
                nodes[r] = (np.uint64(left[node])
                            + np.uint64(row[np.uint64(feature[node])] > threshold[node]))
        depth += CHECK_EVERY
        done = True
        for r in range(BLOCK_ROWS):
            if np.uint64(left[nodes[r]]) != nodes[r]:
                done = False
        if done:
            break


@jit
def _walk_row(X, i, feature, threshold, left, root):
    row = X[np.uint64(i)]
    node = np.uint64(root)
    while np.uint64(left[node]) != node:
        node = np.uint64(left[node]) + np.uint64(row[np.uint64(feature[node])] > threshold[node])
    return node


# The same two walks for rows that may hold a missing value: NaN compares false, so it goes
# left unless ``missing_right[node]`` (0 at leaves). Kept apart from the walks above, which
# run for every NaN-free chunk: there one more load and test per node would cost every user.
@jit(inline="always")
def _walk_block_missing(X, first, feature, threshold, left, missing_right, max_depth, nodes,
                        root):
    for r in range(BLOCK_ROWS):
        nodes[r] = root
    depth = 0
    while depth < max_depth:
        for _ in range(CHECK_EVERY):
            for r in range(BLOCK_ROWS):
                node = nodes[r]
                x = X[np.uint64(first + r), np.uint64(feature[node])]
                right = (x > threshold[node]) | ((x != x) & (missing_right[node] != 0))
                nodes[r] = np.uint64(left[node]) + np.uint64(right)
        depth += CHECK_EVERY
        done = True
        for r in range(BLOCK_ROWS):
            if np.uint64(left[nodes[r]]) != nodes[r]:
                done = False
        if done:
            break


@jit
def _walk_row_missing(X, i, feature, threshold, left, missing_right, root):
    row = X[np.uint64(i)]
    node = np.uint64(root)
    while np.uint64(left[node]) != node:
        x = row[np.uint64(feature[node])]
        right = (x > threshold[node]) | ((x != x) & (missing_right[node] != 0))
        node = np.uint64(left[node]) + np.uint64(right)
    return node


@jit(inline="always")
def _chunk_start(X_bits, magnitude_mask, infinity, chunk, chunk_rows, infinite):
    """``(first, last, missing)`` of task ``chunk`` of the flat walks (:func:`predict_flat`,
    :func:`apply_flat` and their category twins): its rows first:last, and whether they hold
    a value that is not finite; ``infinite[chunk]`` set when one is an infinity."""
    first = chunk * chunk_rows
    last = min(X_bits.shape[0], first + chunk_rows)
    missing = nonfinite_rows(X_bits, first, last, infinity)
    if missing:
        infinite[chunk] = infinite_rows(X_bits, first, last, magnitude_mask, infinity)
    return first, last, missing


@jit(inline="always")
def _block_leaves(X, first, flat, t, missing, nodes):
    """nodes[r] = the flat leaf that row first + r reaches in tree t of ``flat`` (a
    :class:`~jitree.kernels.records.FlatTrees`), r < BLOCK_ROWS; the missing-value walk when
    the rows may hold a NaN (``missing``)."""
    if missing:
        _walk_block_missing(X, first, flat.feature, flat.threshold, flat.left,
                            flat.missing_right, flat.depth[t], nodes, flat.root[t])
    else:
        _walk_block(X, first, flat.feature, flat.threshold, flat.left, flat.depth[t], nodes,
                    flat.root[t])


@jit(inline="always")
def _row_leaf(X, i, flat, t, missing):
    """The flat leaf that row i reaches in tree t of ``flat`` (see :func:`_block_leaves`)."""
    if missing:
        return _walk_row_missing(X, i, flat.feature, flat.threshold, flat.left,
                                 flat.missing_right, flat.root[t])
    return _walk_row(X, i, flat.feature, flat.threshold, flat.left, flat.root[t])


# trees that a row left over from a task's blocks (fewer than BLOCK_ROWS, or every row of a
# task too small for the lanes: most often a call of a row or a few) walks side by side: their
# paths are independent, so the loads of their nodes overlap, where tree after tree each
# node's load waits for the one before it
TREE_BLOCK = BLOCK_ROWS


@jit(inline="always")
def _tree_block_leaves(X, i, flat, first_tree, n_trees, missing, nodes):
    """nodes[k] = the flat leaf that row i reaches in tree first_tree + k of ``flat``,
    k < n_trees <= TREE_BLOCK, the trees walked together (see :data:`TREE_BLOCK`), NaN
    going to the side ``missing_right`` gives when the row may hold one (``missing``)."""
    feature = flat.feature
    threshold = flat.threshold
    left = flat.left
    missing_right = flat.missing_right
    row = X[np.uint64(i)]
    max_depth = 0
    for k in range(n_trees):
        nodes[k] = flat.root[first_tree + k]
        max_depth = max(max_depth, flat.depth[first_tree + k])
    depth = 0
    while depth < max_depth:
        for _ in range(CHECK_EVERY):
            for k in range(n_trees):
                node = nodes[k]
                x = row[np.uint64(feature[node])]
                right = x > threshold[node]
                if missing:
                    right |= (x != x) & (missing_right[node] != 0)
                nodes[k] = np.uint64(left[node]) + np.uint64(right)
        depth += CHECK_EVERY
        done = True
        for k in range(n_trees):
            if np.uint64(left[nodes[k]]) != nodes[k]:
                done = False
        if done:
            break


@jit
def _leftover_rows(X, first, last, flat, missing, nodes, table, out):
    """:func:`predict_flat` of rows first:last (those left over from its blocks, or a few
    rows), through TREE_BLOCK trees at a time (:func:`_tree_block_leaves`), each row adding
    its trees in order. A function of its own: in the kernel's body, the walk of 1M rows
    through 20 trees took 0.74-0.80 s against 0.71-0.76 s before (alternating processes;
    1.04x in one)."""
    n_trees = flat.root.shape[0]
    for i in range(first, last):
        for first_tree in range(0, n_trees, TREE_BLOCK):
            n_block = min(TREE_BLOCK, n_trees - first_tree)
            _tree_block_leaves(X, i, flat, first_tree, n_block, missing, nodes)
            for k in range(n_block):
                t = first_tree + k
                add_leaf(flat, flat.votes[t] != 0, flat.leaf_base[t], nodes[k], table, out,
                         i, t == 0)


# -- lanes: the flat walk of a task's rows through one tree --------------------------------------
# A thread walks LANES rows side by side, one step of each in turn, so that the loads of their
# nodes overlap. Every CHECK_EVERY steps, each lane whose row is at its leaf (a leaf is its own
# left child, and a step leaves a row there) hands the leaf on and takes the task's next row
# from the root; a lane with no row left goes idle. Rows reach their leaves at depths that
# differ widely: walking blocks of 16 rows until the deepest of each was done took 1.56 times
# the steps of the rows' own paths (20 full-depth trees of 150k x 20, 200k of their rows),
# lanes about 1.1 times. The lanes at a leaf are found as a bit mask, made without a branch,
# and visited by its set bits: a test and branch per lane cost more than the steps saved
# (1.19x the time of the blocks). A task of fewer than LANES rows in whole blocks walks trees
# side by side instead (TREE_BLOCK), as the rows left over from the blocks do.
# Which trees walk in lanes: those whose leaves lie at depths that differ enough for the
# lanes to save steps (FlatTrees.lanes: lanes_pay, from the leaves' training weights), and
# that vote (full-depth classifier trees: a leaf's column is in its threshold, just read) or
# read a table of at most LANES_TABLE_BYTES a tree. A step in lanes costs more than a step
# in a block: trees whose leaves are all at one depth (max_depth reached everywhere) took
# 1.15-1.29x the time of the blocks in lanes, which then save no step. And a tree that reads
# its leaf's row of a table larger than the caches keeps the blocks of 16 rows, whose 16 reads
# of the table overlap: in lanes, the one or two leaves found at a look each waited for their
# cache miss (20 trees, 1M rows, 2 threads, against the blocks: random forest regressor 1.08x
# the time, tables of 740 KB a tree; Extra-Trees regressor 1.14x, 1.2 MB; the leaves handed
# on 16 and 64 at a time, 1.03x and 1.00-1.01x; the classifier's voting trees 0.90-0.95x).
# apply, whose leaf ids are such a table, keeps the blocks too. The category walks take the
# lanes by the same rule (walk_category_lanes), with steps compiled for each kind of category
# node: one step for every kind took 1.06-1.32x the time of the blocks (its arrays spilled
# from the registers).
LANES = 24  # at most 64 (a lane is a bit of a uint64 mask). A forest of 20 trees, 200k rows,
            # 1 thread, against the blocks of 16 rows: 16 lanes 0.95 of the time, 24
            # 0.87-0.91, 32 0.90; 24 lanes, every 2 steps 1.15, 3 1.00, 6 0.90, 8 0.88
_ALL_LANES = np.uint64((1 << LANES) - 1)
LANES_PAY = 1.3  # lanes_pay: the blocks' steps against the lanes' that lanes need. Measured
                 # (the time in lanes against the blocks; the ratio of steps): max_depth
                 # forests 1.15-1.29x (1.00), lone regressor trees 1.00-1.17x (1.24-1.29), a
                 # random forest regressor on 20k rows 1.00x (1.30), Extra-Trees regressor on
                 # 10k rows 0.96x (1.33), lone classifier trees 0.93-0.97x (1.40-1.48),
                 # voting forests 0.80-0.92x (1.41-1.78)
LANES_TABLE_BYTES = 1 << 19  # the most table bytes a tree (on average over the forest's) for
                             # lanes: lone classifier trees' tables of 44-354 KB 0.93-0.95x
                             # the time in lanes, 720 KB-1 MB 0.97x, 2.2 MB 1.02x; regressor
                             # forests' of 740 KB 1.08x


@jit(inline="always")
def _open_lanes(first, row_step, root, nodes, at, row):
    """Lane r takes row first + r from ``root``, r < LANES (the task holds that many rows):
    ``row[r]`` the row, ``at[r]`` where it starts in the walk's flat values (a row
    ``row_step`` values after the one before). Returns (the next row, the mask of lanes
    that hold a row)."""
    for r in range(LANES):
        nodes[r] = root
        row[r] = first + r
        at[r] = np.uint64(first + r) * row_step
    return first + LANES, _ALL_LANES


@jit(inline="always")
def _lanes_at_leaves(left, nodes, live):
    """The mask of the lanes of ``live`` whose node is a leaf (its own left child)."""
    done = np.uint64(0)
    for r in range(LANES):
        node = nodes[r]
        done |= np.uint64(np.uint64(left[node]) == node) << np.uint64(r)
    return done & live


@jit(inline="always")
def _refill_lane(r, next_row, last, row_step, root, nodes, at, row, live):
    """Lane r, whose row is at its leaf, takes row ``next_row`` from ``root``, or, when the
    task's rows (up to ``last``) are all taken, leaves ``live``. Returns (the next row,
    ``live``)."""
    if next_row < last:
        nodes[r] = root
        row[r] = next_row
        at[r] = np.uint64(next_row) * row_step
        return next_row + 1, live
    return next_row, live & ~(np.uint64(1) << np.uint64(r))


@jit(inline="always")
def _hand_on_leaves(flat, t, votes, base, root, row_step, last, lanes, live, next_row, table,
                    out):
    """Each lane of ``live`` whose row is at its leaf of tree t adds the leaf to its row's
    output (:func:`add_leaf`) and takes the task's next row (:func:`_refill_lane`): the
    lanes walks' look every CHECK_EVERY steps. Returns (the next row, ``live``)."""
    nodes, at, row = lanes
    done = _lanes_at_leaves(flat.left, nodes, live)
    while done != 0:
        r = trailing_zeros(done)
        done &= done - np.uint64(1)
        add_leaf(flat, votes, base, nodes[r], table, out, row[r], t == 0)
        next_row, live = _refill_lane(r, next_row, last, row_step, root, nodes, at, row, live)
    return next_row, live


@jit(inline="always")
def _lane_steps(values, column_step, feature, threshold, left, missing_right, missing, nodes,
                at):
    """CHECK_EVERY steps of every lane: the child is ``left[node] + (x > threshold[node])``,
    NaN going right where ``missing_right`` says when the rows may hold one (``missing``);
    a leaf keeps its row. ``values``: X's flat values, a row's value on feature f at
    ``at[r] + f * column_step`` (see :func:`walk_tree_lanes`)."""
    for _ in range(CHECK_EVERY):
        for r in range(LANES):
            node = nodes[r]
            x = values[at[r] + np.uint64(feature[node]) * column_step]
            right = x > threshold[node]
            if missing:
                right |= (x != x) & (missing_right[node] != 0)
            nodes[r] = np.uint64(left[node]) + np.uint64(right)


@jit
def walk_tree_lanes(X, first, last, flat, t, missing, lanes, table, out):
    """Walk rows first:last of X (a task of at least LANES rows) through tree t of ``flat``
    in lanes (see above), each row's leaf added to ``out[i]`` as its lane finds it
    (:func:`add_leaf`: its vote, or its row of ``table``). ``lanes``: :func:`new_lanes`.

    The steps read X (C- or F-ordered) as one flat array, row i's value on feature f at
    ``i * row_step + f * column_step``: each order calls the walk with its own (a flat array
    of either order in one variable is typed as of any layout, whose reads multiply by the
    stride: the walk of 20 trees took 1.13x the time), C order with a column_step of 1,
    which the steps read without a multiply. A function of its own, compiled apart from the
    kernel: inlined into the kernel beside the block walk, a forest of 20 voting trees (200k
    rows, 1 thread) took 1.075x the time of the blocks, against 0.864x."""
    if X.flags.c_contiguous:
        _lanes_walk(X.reshape(-1), np.uint64(X.shape[1]), np.uint64(1), first, last, flat, t,
                    missing, lanes, table, out)
    else:
        _lanes_walk(X.T.reshape(-1), np.uint64(1), np.uint64(X.shape[0]), first, last, flat,
                    t, missing, lanes, table, out)


@jit(inline="always")
def _lanes_walk(values, row_step, column_step, first, last, flat, t, missing, lanes, table,
                out):
    """:func:`walk_tree_lanes` on X's flat values."""
    nodes, at, row = lanes
    left = flat.left
    root = np.uint64(flat.root[t])
    votes = flat.votes[t] != 0
    base = flat.leaf_base[t]
    next_row, live = _open_lanes(first, row_step, root, nodes, at, row)
    while live != 0:
        _lane_steps(values, column_step, flat.feature, flat.threshold, left,
                    flat.missing_right, missing, nodes, at)
        next_row, live = _hand_on_leaves(flat, t, votes, base, root, row_step, last, lanes,
                                         live, next_row, table, out)


@jit(inline="always")
def lanes_table(flat, table):
    """Whether ``table`` is small enough for trees that do not vote to take the lanes: at
    most LANES_TABLE_BYTES a tree of ``flat``, on average (see LANES_TABLE_BYTES)."""
    return (table.shape[0] * table.shape[1] * table.itemsize
            <= flat.root.shape[0] * LANES_TABLE_BYTES)


@jit(inline="always")
def new_lanes():
    """The (nodes, at, row) arrays of :func:`walk_tree_lanes` (nodes: TREE_BLOCK and
    BLOCK_ROWS at least, for the other walks of a task)."""
    return (np.empty(max(LANES, TREE_BLOCK, BLOCK_ROWS), dtype=np.uint64),
            np.empty(LANES, dtype=np.uint64), np.empty(LANES, dtype=np.int64))


@pjit
def predict_flat(X, X_bits, magnitude_mask, infinity, flat, table, chunk_rows, out):
    """out[i, :] = sum over trees t of table[leaf of row i in tree t, :], in parallel over
    chunks of ``chunk_rows`` rows: one tree (``flat.root = [0]``) or a forest.

    ``table`` holds one row per flat node: class probabilities, means, class indices or the
    node's id in the Tree (for ``apply``). ``flat``: a :class:`~jitree.kernels.records.FlatTrees`;
    the trees' flat layouts are concatenated: tree t starts at node ``flat.root[t]`` and is
    ``flat.depth[t]`` deep. Within a chunk the trees
    are the outer loop: a forest's nodes outgrow the caches, one tree's nodes and one chunk of
    rows fit together. A chunk's rows walk a tree in lanes (:func:`walk_tree_lanes`) when
    ``flat.lanes`` says they save steps and the tree votes or its table is small, otherwise
    in blocks of BLOCK_ROWS rows, whose reads of the table then overlap (see LANES and
    LANES_TABLE_BYTES). The rows left over from the blocks, and every row of a
    chunk of fewer blocked rows than LANES (a call of a few rows), go through TREE_BLOCK
    trees at a time (:func:`_leftover_rows`).

    Missing values: each chunk is first scanned for a NaN or infinity (``X_bits``: X viewed as
    unsigned ints; a value is not finite when its exponent bits, those of ``infinity``, are
    all set, infinite when ``bits & magnitude_mask == infinity``). A chunk that holds one
    walks with :func:`_walk_block_missing` (or the lanes' test of NaN), NaN going to the
    side ``missing_right`` gives; the others keep the plain walk. The scan rides along with
    the walk, which loads each row anyway, instead of costing the caller another pass over X
    (twice the reads for a memory-mapped file). Returns whether X holds an infinity (the
    caller discards ``out`` and raises).

    The first tree's entries are copied bit for bit (no arithmetic), so a float64 ``table``
    may carry int64 bit patterns for a single tree (labels, node ids).
    """
    n_rows = X.shape[0]
    n_chunks = (n_rows + chunk_rows - 1) // chunk_rows
    infinite = np.zeros(n_chunks, dtype=np.uint8)
    small_table = lanes_table(flat, table)
    for chunk in prange(n_chunks):
        lanes = new_lanes()
        nodes = lanes[0]
        first, last, missing = _chunk_start(X_bits, magnitude_mask, infinity, chunk,
                                            chunk_rows, infinite)
        # rows first:blocked walk tree by tree, the rest TREE_BLOCK trees at a time
        blocked = first + (last - first) // BLOCK_ROWS * BLOCK_ROWS
        if blocked - first < LANES:
            blocked = first
        for t in range(flat.root.shape[0] if blocked > first else 0):
            if flat.lanes[t] != 0 and (flat.votes[t] != 0 or small_table):
                walk_tree_lanes(X, first, blocked, flat, t, missing, lanes, table, out)
                continue
            # (trees that vote walk here when lanes would save no steps)
            votes = flat.votes[t] != 0
            base = flat.leaf_base[t]
            for i in range(first, blocked, BLOCK_ROWS):
                _block_leaves(X, i, flat, t, missing, nodes)
                if votes:
                    for r in range(BLOCK_ROWS):
                        add_leaf(flat, True, 0, nodes[r], table, out, i + r, t == 0)
                else:
                    for r in range(BLOCK_ROWS):
                        add_leaf(flat, False, base, nodes[r], table, out, i + r, t == 0)
        _leftover_rows(X, blocked, last, flat, missing, nodes, table, out)
    return infinite.any()


# a prediction of a few rows, which one task holds, on the calling thread: no launch through
# the threading layer, and no change of numba's thread count around it
predict_flat_serial = serial_twin(predict_flat)


@pjit
def apply_flat(X, X_bits, magnitude_mask, infinity, flat, node_of_flat, chunk_rows, out):
    """out[t, i] = node_of_flat[the flat node of the leaf that row i reaches in tree t]: a
    forest's ``apply``, walked as :func:`predict_flat` walks (chunks of ``chunk_rows`` rows
    in parallel, each through every tree in turn, BLOCK_ROWS rows at a time).
    ``node_of_flat``: each flat node's id in its Tree (int64); ``out``: (n_trees, n_rows)
    int64, one tree's leaves side by side. Returns whether X holds an infinity (the caller
    discards ``out`` and raises)."""
    n_rows = X.shape[0]
    n_chunks = (n_rows + chunk_rows - 1) // chunk_rows
    infinite = np.zeros(n_chunks, dtype=np.uint8)
    for chunk in prange(n_chunks):
        nodes = np.empty(BLOCK_ROWS, dtype=np.uint64)
        first, last, missing = _chunk_start(X_bits, magnitude_mask, infinity, chunk,
                                            chunk_rows, infinite)
        for t in range(flat.root.shape[0]):
            leaves = out[t]
            i = first
            while i + BLOCK_ROWS <= last:
                _block_leaves(X, i, flat, t, missing, nodes)
                for r in range(BLOCK_ROWS):
                    leaves[i + r] = node_of_flat[nodes[r]]
                i += BLOCK_ROWS
            while i < last:
                leaves[i] = node_of_flat[_row_leaf(X, i, flat, t, missing)]
                i += 1
    return infinite.any()


@jit(inline="always")
def _scatter_row(indptr, indices, data, i, buffer, stored, r, sign):
    """Row i of a CSR X into row r of the dense ``buffer`` (zeros elsewhere) and of the bit
    set ``stored`` (bit f: X stores a value of feature f in the row): ``sign`` 1 adds its
    stored values in their order of storage (duplicated entries summed as ``X.toarray()``
    sums them) and sets their bits, 0 puts the buffer back to zero and clears their words."""
    for p in range(indptr[i], indptr[i + 1]):
        f = indices[p]
        if sign:
            buffer[r, f] += data[p]
            stored[r, f >> 6] |= np.uint64(1) << np.uint64(f & 63)
        else:
            buffer[r, f] = 0
            stored[r, f >> 6] = 0


@pjit
def predict_flat_csr(rows, missing, flat, table, chunk_rows, out):
    """:func:`predict_flat` of a CSR X without its dense copy, in parallel over chunks of
    rows, tree after tree. ``rows``: ``(indptr, indices, data, n_columns)`` of X, its values
    finite or NaN (checked by the caller); ``missing``: whether it holds a NaN.

    ``CSR_LANES`` rows walk together, each in a lane: a row's stored values are added into
    its lane's row of a dense buffer (zeros elsewhere) and its features marked in a bit set;
    when the row reaches its leaf its entries go back to zero and the next row of the chunk
    takes the lane. Rows of deep, uneven trees (a sparse X's trees are often thousands of
    levels deep along a few paths) then cost their own paths, not the longest path of their
    block. Most steps of such a path test a feature the row does not store: the bit set
    (in L1, unlike the buffer of a wide X) tells so, and the step takes the node's side of
    zero without reading the buffer."""
    indptr, indices, data, n_columns = rows
    feature = flat.feature
    threshold = flat.threshold
    left = flat.left
    missing_right = flat.missing_right
    tree_root = flat.root
    n_rows = indptr.shape[0] - 1
    n_chunks = (n_rows + chunk_rows - 1) // chunk_rows
    for chunk in prange(n_chunks):
        nodes = np.empty(CSR_LANES, dtype=np.uint64)
        lane_row = np.empty(CSR_LANES, dtype=np.int64)
        buffer = np.zeros((CSR_LANES, n_columns), dtype=data.dtype)
        stored = np.zeros((CSR_LANES, (n_columns + 63) // 64), dtype=np.uint64)
        first = chunk * chunk_rows
        last = min(n_rows, first + chunk_rows)
        for t in range(tree_root.shape[0]):
            root = np.uint64(tree_root[t])
            base = flat.leaf_base[t]
            votes = flat.votes[t] != 0
            following = first
            busy = 0
            for r in range(CSR_LANES):
                lane_row[r] = -1
                if following < last:
                    lane_row[r] = following
                    _scatter_row(indptr, indices, data, following, buffer, stored, r, 1)
                    nodes[r] = root
                    following += 1
                    busy += 1
            while busy > 0:
                for r in range(CSR_LANES):
                    i = lane_row[r]
                    if i < 0:
                        continue
                    node = nodes[r]
                    child = np.uint64(left[node])
                    if child != node:
                        f = np.uint64(feature[node])
                        if ((stored[r, f >> np.uint64(6)] >> (f & np.uint64(63)))
                                & np.uint64(1)) == 0:  # x = 0: right when threshold < 0
                            nodes[r] = child + np.uint64(threshold[node] < 0)
                            continue
                        x = buffer[r, f]
                        if missing:
                            right = (x > threshold[node]) | ((x != x)
                                                             & (missing_right[node] != 0))
                        else:
                            right = x > threshold[node]
                        nodes[r] = child + np.uint64(right)
                        continue
                    add_leaf(flat, votes, base, node, table, out, i, t == 0)  # at its leaf
                    _scatter_row(indptr, indices, data, i, buffer, stored, r, 0)
                    if following < last:
                        lane_row[r] = following
                        _scatter_row(indptr, indices, data, following, buffer, stored, r, 1)
                        nodes[r] = root
                        following += 1
                    else:
                        lane_row[r] = -1
                        busy -= 1


@jit
def zero_paths(flat, n_columns):
    """The :class:`~jitree.kernels.records.ZeroPaths` of ``flat`` (its features below
    ``n_columns``): each tree in preorder, a node's zero child (the child that a value of 0
    takes: the left one unless the threshold is negative) right after it, then the zero
    child's subtree, then the other child's; and the positions that test each feature."""
    feature = flat.feature
    threshold = flat.threshold
    left = flat.left
    root = flat.root
    n_flat = feature.shape[0]
    n_trees = root.shape[0]
    node_at = np.empty(n_flat, dtype=np.int32)
    other = np.full(n_flat, -1, dtype=np.int32)
    end = np.empty(n_flat, dtype=np.int32)
    start = np.empty(n_trees + 1, dtype=np.int64)
    stack = np.empty(n_flat + 1, dtype=np.int64)
    parent = np.empty(n_flat + 1, dtype=np.int64)  # the position whose other child it is
    p = 0
    for t in range(n_trees):
        start[t] = p
        stack[0] = root[t]
        parent[0] = -1
        top = 1
        while top > 0:
            top -= 1
            node = stack[top]
            if parent[top] >= 0:
                other[parent[top]] = p
            node_at[p] = node
            child = left[node]
            if child != node:
                zero_right = 1 if threshold[node] < 0 else 0
                stack[top] = child + 1 - zero_right  # the other child, after the zero's
                parent[top] = p
                stack[top + 1] = child + zero_right
                parent[top + 1] = -1
                top += 2
            p += 1
    start[n_trees] = p
    for q in range(p - 1, -1, -1):
        node = node_at[q]
        end[q] = q if left[node] == node else end[q + 1]
    # (a feature outside X's columns, which the callers' checks leave to no tree, is listed
    # nowhere rather than written out of bounds)
    first = np.zeros(n_columns + 1, dtype=np.int64)
    for q in range(p):
        node = node_at[q]
        if left[node] != node and 0 <= feature[node] < n_columns:
            first[feature[node] + 1] += 1
    for f in range(n_columns):
        first[f + 1] += first[f]
    tested = np.empty(first[n_columns], dtype=np.int32)
    filled = first[:n_columns].copy()
    for q in range(p):
        node = node_at[q]
        f = feature[node]
        if left[node] != node and 0 <= f < n_columns:
            tested[filled[f]] = q
            filled[f] += 1
    return ZeroPaths(start, node_at[:p], other[:p], end[:p], first, tested)


@pjit
def predict_zero_paths_csr(rows, missing, flat, paths, table, chunk_rows, out):
    """:func:`predict_flat_csr` by zero paths (``paths``: :func:`zero_paths` of ``flat``),
    in parallel over chunks of rows, each row through every tree in turn.

    A row that does not store a node's feature takes the node's zero child, and so on down
    the node's zero path (positions ``p:paths.end[p] + 1``), until a node that tests a
    feature the row stores sends its value to the other child. So a row's walk of a tree
    jumps from its position straight to the first node of its zero path that sends one of
    its stored values the other way (found among the positions that test each of its
    stored features, read forward only: positions grow along a walk, and from one tree to
    the next), or to the path's leaf. A sparse X's trees are deep, along zero paths that a
    row leaves a few times: 100,000 x 20,000 at density 0.001 (20 stored values a row), a
    random forest's tree walked 1,369 nodes a row, of which one on average sent the row
    off its zero path."""
    indptr, indices, data, n_columns = rows
    threshold = flat.threshold
    missing_right = flat.missing_right
    start = paths.start
    node_at = paths.node
    other = paths.other
    end = paths.end
    first = paths.first
    tested = paths.tested
    n_rows = indptr.shape[0] - 1
    n_trees = flat.root.shape[0]
    n_chunks = (n_rows + chunk_rows - 1) // chunk_rows
    for chunk in prange(n_chunks):
        low = chunk * chunk_rows
        high = min(n_rows, low + chunk_rows)
        width = 1
        for i in range(low, high):
            width = max(width, indptr[i + 1] - indptr[i])
        ahead = np.empty(width, dtype=np.int64)  # per stored value: its next test
        for i in range(low, high):
            a = indptr[i]
            m = indptr[i + 1] - a
            for j in range(m):
                ahead[j] = first[indices[a + j]]
            for t in range(n_trees):
                position = start[t]
                while True:
                    last = end[position]
                    exit_at = last + 1
                    for j in range(m):
                        f = indices[a + j]
                        limit = first[f + 1]
                        k = ahead[j]
                        while k < limit and tested[k] < position:
                            k += 1
                        ahead[j] = k
                        x = data[a + j]
                        while k < limit and tested[k] < exit_at:
                            node = node_at[tested[k]]
                            if missing and x != x:
                                right = missing_right[node] != 0
                            else:
                                right = x > threshold[node]
                            if right != (threshold[node] < 0):
                                exit_at = tested[k]
                                break
                            k += 1
                    if exit_at > last:
                        break
                    position = other[exit_at]
                add_leaf(flat, flat.votes[t] != 0, flat.leaf_base[t],
                         np.uint64(node_at[last]), table, out, i, t == 0)


# -- the flat layout with category tests ----------------------------------------------------------
# Each chunk of rows is first copied, its categorical values replaced by their codes
# (chunk_values: a value's own position, else a binary search among the feature's values,
# which are the codes themselves for encoded X and the fitted category values for raw X), once
# for every tree: code c < m for the feature's c-th category, m for a missing value (NaN, or a
# category unseen in training). A code is kept in the low bits of a quiet NaN of X's type, so a
# node reads one value, x, whatever its kind: code = bits of x & mask, mask = 2**b - 1 for the
# fewest bits b that hold every code (FlatCategories.code_mask). (The codes in an array of
# their own, a second read a node: 20 trees of columns of 4 to 1,000 categories, 1M rows,
# predict_proba 6-7% slower, 4 to 60 categories 2-4%.) A subset (or one-vs-rest) node keeps
# its test as bits, bit c set when code c goes right (bit m: missing values). When every
# subset node's feature has at most NARROW_CATEGORIES categories, the bits are one 64-bit
# word beside the flat arrays (``word``, 0 at other nodes), and a node goes right when
#     (x > threshold) | (x is NaN & missing_right) | ((word >> (code % 64)) & 1)
# Trees with a wider subset node keep every subset node's bits in a table (``bits``) instead,
# a block of m // 64 + 1 words a node (one word for the narrow ones), at the node's
# ``bit_base`` (uint32: the walk reads it at every node), and ``word`` is empty: the last term
# is then ((bits[bit_base + code // 64] >> (code % 64)) & 1). Reading a word and an int64 base
# at every node was slower: predict_proba of 1M rows through 20 trees of columns of 4 to
# 1,000 categories, 1 thread, 16 rows a block, 2.0-2.1 s against 1.6-1.7 s. So was a node's
# test in its threshold's slot (a negative NaN, its payload a narrow node's word or a wide
# node's base, taken out by masks, no word or base array): 20 trees, 1M rows, 1.2x the time
# (columns of 4 to 1,000 categories) and 1.4x (4 to 60): the walks are bound by their
# instructions more than by their loads. So was a window per wide node (measured, not kept):
# a wide node's right-going bits differ from all left or all right in one word for all but
# 0.25% of the nodes of that forest (one side is one category for most: one-vs-rest in all
# but name), so a node kept that word, its index and the other codes' side, and only the
# rest read a block of the table (3.3 MB of bits -> 50 KB): 0.816 s against 0.820 s (1M
# rows, 20 trees, 2 threads), the same instructions a step; written as masks, LLVM made the
# choice of the word a branch around its load, mispredicted (1.34-1.44 s). Trees without
# wide nodes keep the word: read through the table (a dependent load), a walk of 20 trees of
# columns of 4 to 60 categories was about 1.2x slower. A category node has an infinite
# threshold and missing_right 0 (x, a NaN, then adds nothing but its bit), and a threshold
# node a word of 0 and the table's first block, all zeros, of mask // 64 + 1 words (the bits
# of a number x, taken as a code, index it): one expression for every kind, no branch on the
# kind. (A threshold node never tests a categorical feature: see tree_check.) A multiway node
# (word 0, infinite threshold) moves on by its slot instead: its children are adjacent in the
# flat layout, and the node owns a block of m + 1 entries in a table of slots (entry c: the
# child of code c, counted from the first); every other node reads the table's first block,
# mask + 1 zeros, so the child is
#     left + ((x > threshold) | ...) + slots[slot_base + code]
# for every kind. Trees without multiway nodes skip the slots table, and trees without a
# nonzero word (no subset node: ``word`` empty) the test of bits: 20 trees of multiway
# nodes (columns of 4 to 60 categories), 1M rows, predict_proba 0.80-0.82x the time of the
# walk that tested the word.
NARROW_CATEGORIES = 63
CATEGORY_BLOCK_ROWS = 8  # rows walked together by one thread in these walks (16: the walks
                         # of 20 trees of columns of 4-60 and 4-1,000 categories 1.2-1.25x
                         # slower, 1 thread)
CODE_LIMIT = np.iinfo(np.uint16).max  # features of at most this many categories take the
                                      # flat layout


@jit
def chunk_values(X, X_bits, first, last, categories, box, values):
    """values[i - first, :] = the bits of X[i, :] (``X_bits``: X viewed as unsigned ints),
    each categorical feature's of ``categories`` (a
    :class:`~jitree.kernels.records.FlatCategories`) replaced by the NaN ``box | code``, its
    category code (the value of X is looked up among the feature's values; the feature's
    number of categories when it is missing or not among them)."""
    columns = categories.columns
    values_of = categories.values
    value_code = categories.codes
    offsets = categories.offsets
    n_categories = categories.n_categories
    for i in range(first, last):
        for f in range(X.shape[1]):
            values[i - first, f] = X_bits[i, f]
        for k in range(columns.shape[0]):
            f = columns[k]
            x = np.float64(X[i, f])
            code = n_categories[f]
            if x == x:
                low = offsets[f]
                high = offsets[f + 1]
                end = high
                # first the value's own position: the values of encoded X (and raw values
                # 0 .. m - 1) are their positions, found without a search
                if 0.0 <= x < high - low and values_of[low + np.int64(x)] == x:
                    low += np.int64(x)
                else:
                    while low < high:
                        middle = (low + high) // 2
                        if values_of[middle] < x:
                            low = middle + 1
                        else:
                            high = middle
                if low < end and values_of[low] == x:
                    code = value_code[low]
            values[i - first, f] = box | code


@jit
def quiet_nan(magnitude_mask, infinity):
    """The bits of a quiet NaN of the float type whose ``magnitude_mask`` and ``infinity``
    the walks take (:func:`jitree.model.tree.walk_input`): the exponent's bits and the
    fraction's first."""
    fraction = magnitude_mask ^ infinity
    return infinity | (fraction - (fraction >> 1))


@jit(inline="always")
def _category_task(X, X_bits, magnitude_mask, infinity, chunk, chunk_rows, infinite, flat,
                   categories):
    """``(first, last, missing, values, flat_arrays)`` of task ``chunk`` of the category
    walks: :func:`_chunk_start`'s rows, their values with the categories' codes boxed in
    (:func:`chunk_values`) and the arrays the walks read at a node (``flat_arrays`` of
    :func:`_walk_block_categories`), made in the task: numba's parallel lowering takes arrays
    and scalars into a ``prange`` loop, not tuples."""
    first, last, missing = _chunk_start(X_bits, magnitude_mask, infinity, chunk, chunk_rows,
                                        infinite)
    values = np.empty((last - first, X.shape[1]), dtype=X_bits.dtype)
    chunk_values(X, X_bits, first, last, categories, quiet_nan(magnitude_mask, infinity),
                 values)
    flat_arrays = (flat.feature, flat.threshold, flat.left, flat.missing_right,
                   categories.word, categories.bit_base, categories.bits,
                   categories.slot_base, categories.slots, categories.code_mask)
    return first, last, missing, values, flat_arrays


@jit(inline="always")
def lane_kind(flat_arrays):
    """Whether the category walks' lanes take the trees of ``flat_arrays``: their category
    nodes are of one kind (narrow subsets, wide subsets or multiway), whose steps
    :func:`walk_category_lanes` has compiled. Other forests (without category nodes, or
    with subset and multiway nodes) keep the blocks."""
    wide, subset, multiway = category_kinds(flat_arrays)
    return (wide or subset) != multiway


@jit(inline="always")
def category_kinds(flat_arrays):
    """``(wide, subset, multiway)`` of the category walks' ``flat_arrays`` (see
    :func:`_category_task`): whether subset nodes keep their bits in the table (``bits``;
    then none is in ``word``), whether some node tests a word (else no test of bits), and
    whether some node is multiway (it moves on by its slot)."""
    word, bits, slots = flat_arrays[4], flat_arrays[6], flat_arrays[8]
    return bits.shape[0] > 0, word.shape[0] > 0, slots.shape[0] > 0


@jit(inline="always")
def category_child(v, node, flat_arrays, wide, subset, multiway, missing):
    """The child of flat node ``node`` for a row whose value on the node's feature is ``v``
    (bits of a task's values: :func:`chunk_values`), whatever the node's kind (see the
    comment above :data:`NARROW_CATEGORIES`); ``(wide, subset, multiway)``:
    :func:`category_kinds`; ``missing``: whether the row may hold a NaN in a numeric
    column. Every category walk steps through here."""
    _, threshold, left, missing_right, word, bit_base, bits, slot_base, slots, mask = \
        flat_arrays
    x = float_of_bits(v)
    code = np.uint64(v) & mask
    if wide:
        test = bits[np.uint64(bit_base[node]) + (code >> np.uint64(6))]
    elif subset:
        test = word[node]
    else:
        test = np.uint64(0)
    # the bit's position from the value's own low bits, which are the code's (a category's
    # value is its code boxed in a NaN; a number meets a zero word): x86's test of a bit
    # takes it without a mask, so a narrow subset step does not compute the code at all
    right = ((x > threshold[node])
             | (((test >> (np.uint64(v) & np.uint64(63))) & np.uint64(1)) != 0))
    if missing:
        right |= (x != x) & (missing_right[node] != 0)
    step = np.uint64(right)
    if multiway:
        step += np.uint64(slots[np.uint64(slot_base[node]) + code])
    return np.uint64(left[node]) + step


@jit(inline="always")
def _category_lane_steps(values, flat_arrays, wide, subset, multiway, missing, nodes, at):
    """:func:`_lane_steps` of the category walks: CHECK_EVERY steps of every lane
    (:func:`category_child`), a row's value on feature f at ``at[r] + f`` of a task's flat
    values."""
    feature = flat_arrays[0]
    for _ in range(CHECK_EVERY):
        for r in range(LANES):
            node = nodes[r]
            v = values[at[r] + np.uint64(feature[node])]
            nodes[r] = category_child(v, node, flat_arrays, wide, subset, multiway, missing)


# the lanes' steps compiled for each kind of category forest: with the kinds constants, each
# step reads only the arrays of its kind (one compiled step for every kind: the arrays of all
# of them spilled from the registers, and the lanes lost to the blocks). The category walks
# are compiled without reference counting: each step takes its arrays out of the tuple
# flat_arrays (category_child), and counted, that was two atomic operations an array a step
# (a multiway forest's blocks took 10 times as long)
@borrowing
def _word_lane_steps(values, flat_arrays, missing, nodes, at):
    _category_lane_steps(values, flat_arrays, False, True, False, missing, nodes, at)


@borrowing
def _bits_lane_steps(values, flat_arrays, missing, nodes, at):
    _category_lane_steps(values, flat_arrays, True, False, False, missing, nodes, at)


@borrowing
def _slot_lane_steps(values, flat_arrays, missing, nodes, at):
    _category_lane_steps(values, flat_arrays, False, False, True, missing, nodes, at)


@borrowing
def walk_category_lanes(values, width, last, flat, flat_arrays, t, missing, lanes, table,
                        out):
    """:func:`walk_tree_lanes` for the category walks: rows 0:last of a task (at least LANES)
    through tree t, their values a task's (:func:`chunk_values`) as one flat array of
    ``width`` values a row; ``out``: the task's rows of the output. The steps of a forest of
    one kind of category node (narrow subsets, wide subsets or multiway) are compiled for
    that kind (:func:`lane_kind`). Against the blocks (20 voting trees, 400k rows, 2
    threads, the two in turn, their order alternating): subset nodes of columns of 4 to 60
    categories 0.95 of the time, of 4 to 1,000 0.86; multiway nodes 0.89."""
    nodes, at, row = lanes
    root = np.uint64(flat.root[t])
    votes = flat.votes[t] != 0
    base = flat.leaf_base[t]
    wide, _, multiway = category_kinds(flat_arrays)
    next_row, live = _open_lanes(0, width, root, nodes, at, row)
    while live != 0:
        if multiway:
            _slot_lane_steps(values, flat_arrays, missing, nodes, at)
        elif wide:
            _bits_lane_steps(values, flat_arrays, missing, nodes, at)
        else:
            _word_lane_steps(values, flat_arrays, missing, nodes, at)
        next_row, live = _hand_on_leaves(flat, t, votes, base, root, width, last, lanes,
                                         live, next_row, table, out)


@borrowing
def _walk_block_categories(values, code_row, flat_arrays, max_depth, nodes, root, missing):
    """:func:`_walk_block_missing` where nodes may also test categories (see above), over
    rows ``code_row:code_row + CATEGORY_BLOCK_ROWS`` of a task's ``values``
    (:func:`chunk_values`); ``missing``: whether the rows may hold a NaN in a numeric
    column."""
    feature, left = flat_arrays[0], flat_arrays[2]
    wide, subset, multiway = category_kinds(flat_arrays)
    for r in range(CATEGORY_BLOCK_ROWS):
        nodes[r] = root
    depth = 0
    while depth < max_depth:
        for _ in range(CHECK_EVERY):
            for r in range(CATEGORY_BLOCK_ROWS):
                node = nodes[r]
                v = values[np.uint64(code_row + r), np.uint64(feature[node])]
                nodes[r] = category_child(v, node, flat_arrays, wide, subset, multiway, missing)
        depth += CHECK_EVERY
        done = True
        for r in range(CATEGORY_BLOCK_ROWS):
            if np.uint64(left[nodes[r]]) != nodes[r]:
                done = False
        if done:
            break


@borrowing
def _walk_row_categories(values, code_row, flat_arrays, root):
    feature, left = flat_arrays[0], flat_arrays[2]
    wide, subset, multiway = category_kinds(flat_arrays)
    node = np.uint64(root)
    while np.uint64(left[node]) != node:
        v = values[np.uint64(code_row), np.uint64(feature[node])]
        node = category_child(v, node, flat_arrays, wide, subset, multiway, True)
    return node


@borrowing
def _tree_block_categories(values, code_row, flat_arrays, tree_root, tree_depth, first_tree,
                           n_trees, nodes, missing):
    """nodes[k] = the flat leaf that row ``code_row`` of a task's ``values`` reaches in tree
    first_tree + k, k < n_trees <= TREE_BLOCK: :func:`_walk_block_categories`' step, the
    trees walked side by side as :func:`_tree_block_leaves` walks them."""
    feature, left = flat_arrays[0], flat_arrays[2]
    wide, subset, multiway = category_kinds(flat_arrays)
    row = np.uint64(code_row)
    max_depth = 0
    for k in range(n_trees):
        nodes[k] = tree_root[first_tree + k]
        max_depth = max(max_depth, tree_depth[first_tree + k])
    depth = 0
    while depth < max_depth:
        for _ in range(CHECK_EVERY):
            for k in range(n_trees):
                node = nodes[k]
                v = values[row, np.uint64(feature[node])]
                nodes[k] = category_child(v, node, flat_arrays, wide, subset, multiway, missing)
        depth += CHECK_EVERY
        done = True
        for k in range(n_trees):
            if np.uint64(left[nodes[k]]) != nodes[k]:
                done = False
        if done:
            break


@jit
def _leftover_category_rows(values, first, start, last, flat_arrays, flat, missing, nodes,
                            table, out):
    """:func:`predict_flat_categories` of rows start:last of the task whose rows begin at
    ``first`` (fewer than CATEGORY_BLOCK_ROWS: those left over from its blocks), through
    TREE_BLOCK trees at a time (:func:`_tree_block_categories`), each row adding its trees
    in order: :func:`_leftover_rows` of the category walk."""
    n_trees = flat.root.shape[0]
    for i in range(start, last):
        for first_tree in range(0, n_trees, TREE_BLOCK):
            n_block = min(TREE_BLOCK, n_trees - first_tree)
            _tree_block_categories(values, i - first, flat_arrays, flat.root, flat.depth,
                                   first_tree, n_block, nodes, missing)
            for k in range(n_block):
                t = first_tree + k
                add_leaf(flat, flat.votes[t] != 0, flat.leaf_base[t], nodes[k], table, out,
                         i, t == 0)


@pjit
def predict_flat_categories(X, X_bits, magnitude_mask, infinity, flat, categories, table,
                            chunk_rows, out):
    """:func:`predict_flat` for trees whose nodes also test categories of features of at most
    CODE_LIMIT categories (subset, one-vs-rest and multiway nodes; see the comment above
    :data:`NARROW_CATEGORIES`). ``categories``: a
    :class:`~jitree.kernels.records.FlatCategories`. Returns whether X holds an infinity."""
    tree_root = flat.root
    tree_depth = flat.depth
    n_chunks = (X.shape[0] + chunk_rows - 1) // chunk_rows
    infinite = np.zeros(n_chunks, dtype=np.uint8)
    small_table = lanes_table(flat, table)
    for chunk in prange(n_chunks):
        lanes = new_lanes()
        nodes = lanes[0]
        first, last, missing, values, flat_arrays = _category_task(
            X, X_bits, magnitude_mask, infinity, chunk, chunk_rows, infinite, flat, categories)
        # rows first:blocked walk tree by tree (in lanes or blocks, as predict_flat's), the
        # rest TREE_BLOCK trees at a time
        blocked = first + (last - first) // CATEGORY_BLOCK_ROWS * CATEGORY_BLOCK_ROWS
        in_lanes = blocked - first >= LANES and lane_kind(flat_arrays)
        flat_values = values.reshape(-1)
        width = np.uint64(values.shape[1])
        for t in range(tree_root.shape[0]):
            root = tree_root[t]
            base = flat.leaf_base[t]
            votes = flat.votes[t] != 0
            if in_lanes and flat.lanes[t] != 0 and (votes or small_table):
                walk_category_lanes(flat_values, width, blocked - first, flat, flat_arrays, t,
                                    missing, lanes, table, out[first:blocked])
                continue
            for i in range(first, blocked, CATEGORY_BLOCK_ROWS):
                _walk_block_categories(values, i - first, flat_arrays, tree_depth[t], nodes,
                                       root, missing)
                for r in range(CATEGORY_BLOCK_ROWS):
                    add_leaf(flat, votes, base, nodes[r], table, out, i + r, t == 0)
        _leftover_category_rows(values, first, blocked, last, flat_arrays, flat, missing,
                                nodes, table, out)
    return infinite.any()


# a call of a few rows (jitree.model.tree.FEW_ROWS) walks on the calling thread
predict_flat_categories_serial = serial_twin(predict_flat_categories)


@pjit
def apply_flat_categories(X, X_bits, magnitude_mask, infinity, flat, categories, node_of_flat,
                          chunk_rows, out):
    """out[t, i] = node_of_flat[the flat leaf that row i reaches in tree t]: the ``apply`` of
    a forest whose trees also test categories, walked as :func:`predict_flat_categories`
    walks (each chunk's codes made once for every tree); ``out`` as in :func:`apply_flat`.
    Returns whether X holds an infinity (the caller discards ``out`` and raises)."""
    tree_root = flat.root
    tree_depth = flat.depth
    n_chunks = (X.shape[0] + chunk_rows - 1) // chunk_rows
    infinite = np.zeros(n_chunks, dtype=np.uint8)
    for chunk in prange(n_chunks):
        nodes = np.empty(CATEGORY_BLOCK_ROWS, dtype=np.uint64)
        first, last, missing, values, flat_arrays = _category_task(
            X, X_bits, magnitude_mask, infinity, chunk, chunk_rows, infinite, flat, categories)
        for t in range(tree_root.shape[0]):
            leaves = out[t]
            root = tree_root[t]
            i = first
            while i + CATEGORY_BLOCK_ROWS <= last:
                _walk_block_categories(values, i - first, flat_arrays, tree_depth[t], nodes,
                                       root, missing)
                for r in range(CATEGORY_BLOCK_ROWS):
                    leaves[i + r] = node_of_flat[nodes[r]]
                i += CATEGORY_BLOCK_ROWS
            while i < last:
                leaves[i] = node_of_flat[_walk_row_categories(values, i - first,
                                                              flat_arrays, root)]
                i += 1
    return infinite.any()
