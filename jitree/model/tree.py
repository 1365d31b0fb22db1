"""The fitted tree: one NumPy array per node attribute."""

import numbers
import weakref
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from ..kernels import predict as _predict
from ..kernels.records import FlatCategories, FlatTrees, TreeWalk
from .validation import CategoryValueRows, CsrRows, check_X, is_sparse, prediction_chunks

TREE_LEAF = _predict.TREE_LEAF
TREE_UNDEFINED = _predict.TREE_UNDEFINED
SPLIT_THRESHOLD = _predict.SPLIT_THRESHOLD
SPLIT_SUBSET = _predict.SPLIT_SUBSET
SPLIT_MULTIWAY = _predict.SPLIT_MULTIWAY
FEATURE_NUMERIC = 0
FEATURE_ORDINAL = 1
FEATURE_CATEGORICAL = 2
_ROOT = np.zeros(1, dtype=np.int64)  # a lone tree's root in the prediction kernels
_ROOT.flags.writeable = False  # every array of the walks' records is read-only

# one entry per node
_ARRAYS = (
    ("feature", np.int32),
    ("threshold", np.float64),
    ("children_left", np.int32),
    ("children_right", np.int32),
    ("value", np.float64),
    ("impurity", np.float64),
    ("n_node_samples", np.int64),
    ("weighted_n_node_samples", np.float64),
    ("split_kind", np.int8),
    ("missing_left", np.uint8),
    ("category_offset", np.int64),
)
# shared pools, indexed through category_offset
_POOLS = (
    ("category_bits", np.uint64),
    ("multiway_slot", np.int32),
)
# one entry per feature
_FEATURE_ARRAYS = (
    ("n_categories", np.int32),
    ("feature_kind", np.int8),
)


def _code_mask(n_categories, feature_kind):
    """2**b - 1 for the fewest bits b that hold every code 0 .. m of the categorical
    features of ``feature_kind`` (m: the most categories of one, at most CODE_LIMIT: a
    feature of more is tested by no node of a flat layout, and its codes are read by leaves
    only; 16 bits stay inside a float32 NaN's fraction, below its quiet bit). The category
    walks take a value's code by this mask (``FlatCategories.code_mask``; see the comment
    above :data:`jitree.kernels.predict.NARROW_CATEGORIES`)."""
    counts = np.asarray(n_categories)[np.asarray(feature_kind) == FEATURE_CATEGORICAL]
    largest = min(int(np.max(counts, initial=0)), _predict.CODE_LIMIT)
    return (1 << largest.bit_length()) - 1


def _zero_blocks(n_categories, feature_kind):
    """Entries of the all-zero first block of the flat layout's bits and slots tables: what
    a code of the walks indexes, up to the mask of the codes' bits (:func:`_code_mask`; a
    threshold node takes its number's low bits as a code)."""
    mask = _code_mask(n_categories, feature_kind)
    return (mask >> 6) + 1, mask + 1


def _ranks(sizes):
    """For blocks of ``sizes`` entries laid one after another, each entry's rank in its
    block (0 .. size - 1)."""
    firsts = np.cumsum(sizes) - sizes
    return np.arange(int(np.sum(sizes))) - np.repeat(firsts, sizes)


def _blocks(sizes, starts, zero):
    """(base of each block in a table, the source index of each table entry after the first
    block) for blocks of ``sizes`` entries copied from ``starts`` on, after a first all-zero
    block of ``zero`` entries."""
    return zero + np.cumsum(sizes) - sizes, np.repeat(starts, sizes) + _ranks(sizes)


def _concatenate_table(parts, n_flat, zero, dtype):
    """(base, table) of several trees' ``(base, table)`` parts in order: one first all-zero
    block of ``zero`` entries, then each tree's blocks (``n_flat``: each tree's flat nodes,
    for the trees without a table)."""
    if not any(table.shape[0] for _, table in parts):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=dtype)
    bases, tables = [], [np.zeros(zero, dtype=dtype)]
    offset = 0  # entries of the trees so far, after the first block
    for n, (base, table) in zip(n_flat, parts, strict=True):
        if not table.shape[0]:
            bases.append(np.zeros(n, dtype=np.int64))
            continue
        bases.append(np.where(base > 0, base + offset, 0))
        tables.append(table[zero:])
        offset += table.shape[0] - zero
    return np.concatenate(bases), np.concatenate(tables)


def concatenate_flat_tests(tests, n_categories, feature_kind):
    """The flat layouts' tests (:meth:`Tree.flat_tests`) of several trees with the features'
    ``n_categories`` concatenated in order, one first block of each table."""
    bits_zero, slots_zero = _zero_blocks(n_categories, feature_kind)
    n_flat = [t[0].shape[0] for t in tests]
    bit_base, bits = _concatenate_table([t[1:3] for t in tests], n_flat, bits_zero, np.uint64)
    slot_base, slots = _concatenate_table([t[3:5] for t in tests], n_flat, slots_zero,
                                          np.uint16)
    return np.concatenate([t[0] for t in tests]), bit_base, bits, slot_base, slots


TABLE_BASE_LIMIT = np.iinfo(np.uint32).max  # tables of more entries keep int64 bases


def _table_base(base, table):
    """A table's node bases as uint32 (the walk reads one per node: half the bytes of
    int64), int64 for a table beyond TABLE_BASE_LIMIT entries."""
    if table.shape[0] > TABLE_BASE_LIMIT:
        return base.astype(np.int64)
    return base.astype(np.uint32)


def _words_in_table(word, bit_base, bits):
    """``(word, bit_base, bits)`` of flat tests with wide subset nodes, the narrow nodes'
    words moved into the bits table (one-word blocks after the wide nodes' blocks) and
    ``word`` left empty: the walk then reads one base per node and one word of the table,
    not a word and a base (see the comment above
    :data:`jitree.kernels.predict.NARROW_CATEGORIES`)."""
    narrow = np.flatnonzero(word)
    bit_base = bit_base.copy()
    bit_base[narrow] = bits.shape[0] + np.arange(narrow.shape[0])
    return (np.zeros(0, dtype=np.uint64), bit_base,
            np.concatenate([bits, word[narrow]]))


def flat_categories(tests, feature_kind, n_categories, tables=None):
    """The :class:`~jitree.kernels.records.FlatCategories` of the flat nodes' tests
    (:meth:`Tree.flat_tests`) for the categorical features of
    ``feature_kind``. ``tables``: (values, codes, offsets) of the features' values in X
    (:meth:`FeatureEncoder.value_tables`), or None for X already encoded (each feature's
    values are then its codes 0 .. m - 1)."""
    columns = np.flatnonzero(np.asarray(feature_kind) == FEATURE_CATEGORICAL)
    n_categories = np.ascontiguousarray(n_categories, dtype=np.int32)
    if tables is None:
        counts = np.zeros(n_categories.shape[0], dtype=np.int64)
        counts[columns] = n_categories[columns]
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        codes = np.concatenate([np.arange(counts[f]) for f in columns]) if columns.size \
            else np.zeros(0, dtype=np.int64)
        tables = (codes.astype(np.float64), codes.astype(np.int64), offsets)
    word, bit_base, bits, slot_base, slots = tests
    if bits.shape[0]:
        word, bit_base, bits = _words_in_table(word, bit_base, bits)
    elif not word.any():
        word = np.zeros(0, dtype=np.uint64)  # no nonzero word (no subset node, or only
                                             # nodes sending every code left): no bit tests
    return FlatCategories(*read_only(word, columns.astype(np.int64), n_categories, *tables,
                                     _table_base(bit_base, bits), bits,
                                     _table_base(slot_base, slots), slots),
                          np.uint64(_code_mask(n_categories, feature_kind)))


_SERIAL_TOUCH_BYTES = 1 << 22  # numpy asks for huge pages from 4 MiB on


def kernel_output(shape, dtype=np.float64):
    """An uninitialised array of ``shape`` for a parallel prediction kernel to fill. A
    large one is first written by this thread: when the kernel's threads were the first to
    touch a fresh array, their page faults ran into each other in the operating system
    (numpy asks for huge pages; 2M x 3 probabilities on 2 threads: 88-99 ms, of which 45-80
    ms system time, against 41 ms after a serial first touch of about 3 ms). One thread
    needs no such pass. Not for the encoder's copy of X: there a serial first touch of 160
    MB cost more than it saved (1M x 20 float64: 0.23 s -> 0.33 s)."""
    out = np.empty(shape, dtype=dtype)
    if out.nbytes >= _SERIAL_TOUCH_BYTES and numba.get_num_threads() > 1:
        out.fill(0)
    return out


def float32_below(threshold):
    """The largest float32 <= each float64 threshold: ``x <= it`` exactly when ``x <=
    threshold`` for every float32 x (beyond float32's range: inf, then stepped down to the
    largest finite float32)."""
    with np.errstate(over="ignore"):
        rounded = np.asarray(threshold, dtype=np.float64).astype(np.float32)
    above = rounded.astype(np.float64) > threshold
    rounded[above] = np.nextafter(rounded[above], np.float32(-np.inf))
    return rounded


def raise_infinite(X, name):
    """The ValueError for X holding an infinity (NaN is a missing value, infinity is not)."""
    raise ValueError(f"Input {name} contains infinity or a value too large for {X.dtype}")


def walk_input(X):
    """(X, X viewed as unsigned ints, mask of all but the sign bit, bits of +inf): the first
    four arguments of the walks (:func:`jitree.kernels.predict.predict_flat`,
    :func:`~jitree.kernels.predict.predict_nodes`, ...). X goes as a read-only plain ndarray
    view (no copy): numba compiles read-only and writeable arrays apart, and a DataFrame's
    array (read-only in pandas 3), a read-only memory map and a user's own array then share
    one compiled walk per dtype and order."""
    X = read_only_view(X)
    bits, magnitude_mask, infinity = _FLOAT_BITS[X.dtype]
    return X, X.view(bits), magnitude_mask, infinity


# each float dtype's bits (the walk_input of X of that dtype), made once: a served row's
# call builds none of them
_FLOAT_BITS = {
    np.dtype(np.float32): (np.dtype(np.uint32), np.uint32(0x7FFFFFFF), np.uint32(0x7F800000)),
    np.dtype(np.float64): (np.dtype(np.uint64), np.uint64(0x7FFFFFFFFFFFFFFF),
                           np.uint64(0x7FF0000000000000))}


# the bits of a quiet NaN of each threshold type; a forest's leaf has this NaN with its rank
# in the low bits as threshold (jitree.kernels.predict.table_row)
_QUIET_NAN = {np.dtype(np.float32): np.uint32(0x7FC00000),
              np.dtype(np.float64): np.uint64(0x7FF8000000000000)}
_TABLE_BLOCK_BYTES = 1 << 20  # rows of a prediction table computed at a time
TASK_BYTES = 4 << 20  # the most of X (a category walk's copy of it) that one prediction task
                     # holds: a forest's rows stay in cache from one tree to the next (see
                     # jitree.model.forest.FOREST_CHUNK_ROWS for the figures), and a wide X's
                     # copy stays small (2,048 rows of 20,000 float64 columns: 328 MB a task)
FEW_ROWS = 64  # a task's fewest rows: a prediction of at most this many rows is one task, and
               # runs on one thread (a second one would only cost its start, about 10 us),
               # a flat walk (threshold or category tests) on the calling thread
               # (predict_flat_serial, predict_flat_categories_serial: no launch through
               # the threading layer)


def task_rows(row_bytes, most_rows, spread=None):
    """Rows per parallel task of a prediction walk of rows of ``row_bytes`` bytes each: at
    most ``most_rows`` and ``spread`` (None: no such bound), within TASK_BYTES, and at least
    FEW_ROWS."""
    rows = min(most_rows, TASK_BYTES // max(1, row_bytes))
    if spread is not None:
        rows = min(rows, spread)
    return max(FEW_ROWS, rows)


def flat_trees(trees, dtype, tables=None, vote=True, workers=1):
    """The flat layouts (:meth:`Tree.flat`) of ``trees`` concatenated, one tree after the
    other, for X of ``dtype``: ``(FlatTrees, table)``, each tree written in place into its
    own stretch of the arrays by :func:`jitree.kernels.predict.write_flat` (each tree's flat
    order is kept in its cache, a view of the concatenated one).

    ``tables``: each tree's prediction table, a row per Tree node (or a function that gives
    the rows of an array of node ids: only the rows used are then computed). The returned
    table then has a row per leaf, tree after tree, each tree's leaves in Tree id order from
    its ``leaf_base`` (its table read front to back: in flat order a 50-class tree's rows
    were read scattered, 14 ms a tree against 2 ms), and each leaf's threshold becomes a NaN
    that holds the leaf's rank among them; a tree of more than 2 ** LEAF_RANK_BITS leaves
    keeps a row per flat node for every tree (``leaf_base`` -1, +inf at leaves). A tree
    whose every leaf row is one-hot (a 1.0 and zeros: pure leaves' class probabilities)
    votes instead (``FlatTrees.votes``, see :func:`jitree.kernels.predict.add_leaf`): its
    leaves' NaNs hold their column and the table has no rows for it (with ``vote`` False no
    tree votes). Without ``tables`` the table is None and the leaves keep +inf. The trees'
    layouts, and the tests of their leaves' rows, are made in ``workers`` threads."""
    dtype = np.dtype(dtype)
    sizes = np.array([tree.node_count for tree in trees], dtype=np.int64)
    for tree, size in zip(trees, sizes, strict=True):
        # each tree writes node_count nodes from its root (the kernel walks its children)
        if (tree.children_left.shape[0] != size or tree.children_right.shape[0] != size
                or tree.split_kind.shape[0] != size
                or tree.weighted_n_node_samples.shape[0] != size):
            raise ValueError(f"the tree's node arrays have different lengths (node_count "
                             f"{size})")
    roots = np.cumsum(sizes) - sizes
    n_flat = int(sizes.sum())
    # int16 feature indices when they fit: a smaller node, fewer bytes per tree reload
    feature_type = (np.int16 if all(tree.n_features <= np.iinfo(np.int16).max for tree in trees)
                    else np.int32)
    threshold = np.empty(n_flat, dtype=dtype)
    nan_bits = _QUIET_NAN[dtype]
    bits = threshold.view(nan_bits.dtype)
    flat = FlatTrees(np.empty(n_flat, dtype=feature_type), threshold,
                     np.empty(n_flat, dtype=np.int32), np.empty(n_flat, dtype=np.uint8), roots,
                     np.zeros(len(trees), dtype=np.int64), bits,
                     np.full(len(trees), -1, dtype=np.int64),
                     np.zeros(len(trees), dtype=np.uint8), np.zeros(len(trees), dtype=np.uint8))
    by_leaf = tables is not None and all(
        tree.n_leaves <= 1 << _predict.LEAF_RANK_BITS for tree in trees)
    order = np.empty(n_flat, dtype=np.int64)
    toward = dtype.type(-np.inf)

    def write(t):
        tree = trees[t]
        flat.depth[t], flat.lanes[t] = _predict.write_flat(
            tree.walk_arrays(), read_only_view(tree.weighted_n_node_samples), flat, roots[t],
            order, toward, nan_bits if by_leaf else nan_bits.dtype.type(0))

    _each_tree(write, len(trees), workers)
    segments = [slice(root, root + size) for root, size in zip(roots, sizes, strict=True)]
    for tree, segment in zip(trees, segments, strict=True):
        tree.__dict__.setdefault("_cache", {})["flat_order"] = read_only(order[segment])[0]
    table = None
    if tables is not None:
        nodes = [np.flatnonzero(tree.is_leaf) if by_leaf else order[segment]
                 for tree, segment in zip(trees, segments, strict=True)]
        probe = _table_rows(tables[0], nodes[0][:1])  # a row's shape and type
        block = max(1, _TABLE_BLOCK_BYTES // max(1, probe[:1].nbytes))
        columns = [None] * len(trees)
        signed = False
        if by_leaf and vote:
            found = [None] * len(trees)

            def one_hot(t):
                found[t] = _one_hot_leaves(tables[t], nodes[t], block)

            _each_tree(one_hot, len(trees), workers)
            columns = [column for column, _ in found]
            signed = any(seen_signed for _, seen_signed in found)
        kept = [t for t, column in enumerate(columns) if column is None]
        table = np.empty((sum(nodes[t].shape[0] for t in kept),) + probe.shape[1:],
                         dtype=probe.dtype)
        n_rows = 0
        for t in kept:
            if by_leaf:
                flat.leaf_base[t] = n_rows
            # a block of rows at a time: no table of the tree's rows beside the forest's
            for start in range(0, nodes[t].shape[0], block):
                rows = _table_rows(tables[t], nodes[t][start:start + block])
                table[n_rows:n_rows + rows.shape[0]] = rows
                n_rows += rows.shape[0]
        # a vote skips adding 0.0, which would turn a -0.0 sum into +0.0: no tree votes then
        signed |= bool(np.signbit(table).any())
        if signed and len(kept) < len(trees):
            return flat_trees(trees, dtype, tables, vote=False, workers=workers)
        for t, column in enumerate(columns):
            if column is not None:
                # each leaf's NaN holds its column instead of its rank
                tree_bits = bits[segments[t]]
                at = np.flatnonzero(flat.left[segments[t]] == np.arange(sizes[t]) + roots[t])
                rank = (tree_bits[at] & _predict._RANK_MASK.astype(bits.dtype)).astype(np.int64)
                tree_bits[at] = nan_bits | column[rank].astype(bits.dtype)
                flat.votes[t] = 1
        table = read_only(table)[0]
    return FlatTrees(*read_only(*flat)), table


def _each_tree(work, n_trees, workers):
    """``work(t)`` for each tree t, in ``workers`` threads when more than one (the layout's
    kernels release the GIL, and each tree writes its own stretch of the arrays)."""
    if workers <= 1 or n_trees <= 1:
        for t in range(n_trees):
            work(t)
        return
    with ThreadPoolExecutor(min(workers, n_trees)) as pool:
        for _ in pool.map(work, range(n_trees)):
            pass


def _one_hot_leaves(table, nodes, block):
    """``(columns, signed)``: the column of the 1.0 of each of the rows ``nodes`` of
    ``table`` when each is a single 1.0 among zeros (else None), and whether a row read
    holds a negative value or -0.0 (for a :class:`ProbabilityRows` table, always False: a
    row with a sign bit is not one-hot there, and is tested in the forest's table). Reads
    ``block`` rows at a time and stops at the first block that is not one-hot: a 50-class
    forest's table is not made to find that its trees vote (each tree's rows, fresh memory,
    took 15 ms against 2 ms in a process that had grown a forest)."""
    if nodes.shape[0] == 0:
        return None, False
    if isinstance(table, ProbabilityRows) and table.value.shape[1] > 1 << _predict.LEAF_RANK_BITS:
        return None, False  # no NaN holds its column
    columns = np.empty(nodes.shape[0], dtype=np.int64)
    if isinstance(table, ProbabilityRows):
        # one pass over the class weights; a -0.0 makes the tree read its table, where
        # flat_trees finds it
        return (columns if _predict.one_hot_rows(table.value, nodes, columns) else None), False
    signed = False
    for start in range(0, nodes.shape[0], block):
        rows = _table_rows(table, nodes[start:start + block])
        signed |= bool(np.signbit(rows).any())
        column = _one_hot_columns(rows)
        if column is None:
            return None, signed
        columns[start:start + rows.shape[0]] = column
    return columns, signed


class ProbabilityRows:
    """A tree's class probabilities as a prediction table of :func:`flat_trees`: called
    with node ids, their rows (:meth:`Tree.probability_table`); whether the rows of leaves
    are one-hot (each a 1.0 among zeros: a pure leaf, which then votes) is read from the class
    weights themselves (:func:`jitree.kernels.predict.one_hot_rows`)."""

    def __init__(self, tree):
        self.tree = tree
        self.value = read_only_view(tree.value)

    def __call__(self, nodes):
        return self.tree.probability_table(nodes)


def _table_rows(table, nodes):
    """Rows ``nodes`` of a prediction table given as an array or as a function of the node
    ids (see :func:`flat_trees`)."""
    return table(nodes) if callable(table) else np.asarray(table)[nodes]


def _one_hot_columns(rows):
    """The column of the 1.0 of each row when every row of ``rows`` (a tree's leaf rows) is
    a single 1.0 among zeros, else None."""
    if rows.ndim != 2 or rows.shape[0] == 0 or rows.shape[1] > 1 << _predict.LEAF_RANK_BITS:
        return None
    ones = rows == 1.0
    if not ((ones | (rows == 0.0)).all() and (ones.sum(axis=1) == 1).all()):
        return None
    return np.argmax(ones, axis=1)


def read_only_view(array):
    """``array`` as a read-only plain ndarray view (no copy), as every array the walks read
    is passed: numba compiles read-only and writeable arrays apart."""
    array = array.view(np.ndarray)
    array.flags.writeable = False
    return array


def read_only(*arrays):
    """Mark ``arrays`` read-only (the prediction kernels do not bounds-check: a node array
    written after its check could send a walk out of bounds); returns them as a tuple."""
    for array in arrays:
        array.flags.writeable = False
    return arrays


def _integral_objects(values):
    """Whether every entry of an object array is an int (a Python int of any size)."""
    return all(isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
               for value in values.reshape(-1).tolist())


def _array(values, dtype, name, trusted=False):
    """``values`` as a C-contiguous array of ``dtype``. An integer field refuses values that a
    cast would change: fractions (a child index 1.7 is no index), values out of the dtype's
    range (a feature index 2**32 would wrap around to 0) and non-numbers. ``trusted``: the
    growth engine's own arrays, cast without the checks."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f" or trusted:
        return np.ascontiguousarray(values, dtype=dtype)
    if isinstance(values, np.ndarray) and values.dtype == dtype:
        return np.ascontiguousarray(values)
    array = np.asarray(values)
    if array.dtype.kind == "O":
        if not _integral_objects(array):
            raise TypeError(f"tree.{name} must hold integers, got non-integer values")
        limits = np.iinfo(dtype)
        outside = [v for v in array.reshape(-1).tolist() if not limits.min <= v <= limits.max]
        if outside:
            raise ValueError(f"tree.{name} holds {outside[0]}, outside the range of {dtype} "
                             f"[{limits.min}, {limits.max}]")
        return np.ascontiguousarray(array.astype(dtype))
    if array.dtype.kind == "f":
        if not np.isfinite(array).all() or (array != np.floor(array)).any():
            raise ValueError(f"tree.{name} must hold integers ({dtype}), got non-integral "
                             "float values")
    elif array.dtype.kind not in "biu":
        raise TypeError(f"tree.{name} must hold integers ({dtype}), got dtype {array.dtype}")
    if array.size and array.dtype.kind != "b":
        limits = np.iinfo(dtype)
        low, high = array.min(), array.max()
        if low < limits.min or high > limits.max:
            bad = low if low < limits.min else high
            raise ValueError(f"tree.{name} holds {bad}, outside the range of {dtype} "
                             f"[{limits.min}, {limits.max}]")
    return np.ascontiguousarray(array, dtype=dtype)


def node_levels(tree):
    """(parent, nodes by depth): the parent of every node of ``tree`` and, for each depth,
    its nodes (in id order)."""
    parent = tree.parents()
    depth = tree.depth
    order = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[order], np.arange(depth.max() + 2))
    return parent, [order[bounds[d]:bounds[d + 1]] for d in range(depth.max() + 1)]


def _heavier_is_left(children_left, children_right, weight):
    """missing_left of a tree fitted without missing values: the heavier child (ties left)."""
    left = children_left.astype(np.int64)
    internal = left != TREE_LEAF
    heavier = np.zeros(left.shape[0], dtype=np.uint8)
    n = left.shape[0]
    # guarded indexing: the arrays are checked only afterwards, by check_tree
    in_range = internal & (left >= 0) & (left < n) & (children_right >= 0) & (children_right < n)
    index = np.flatnonzero(in_range)
    heavier[index] = weight[left[index]] >= weight[children_right[index]]
    return heavier


class Tree:
    """A decision tree stored as parallel arrays; node 0 is the root.

    Node ``i`` is described by entry ``i`` of each array:

    feature : int32 array, shape (n_nodes,)
        Feature tested at an internal node; ``TREE_UNDEFINED`` (-2) at a leaf.
    split_kind : int8 array, shape (n_nodes,)
        The test of an internal node (0 at a leaf):

        - ``SPLIT_THRESHOLD`` (0): left when ``x <= threshold[i]`` (numeric and ordinal
          features; an ordinal feature's values are its level codes 0, 1, ...);
        - ``SPLIT_SUBSET`` (1): left when the category code ``x`` is in the node's category
          set (``x ∈ V``; a one-vs-rest test ``x == c`` is the set ``{c}``);
        - ``SPLIT_MULTIWAY`` (2): one child per category (ID3 / C4.5), see ``multiway_slot``.
    threshold : float64 array, shape (n_nodes,)
        ``SPLIT_THRESHOLD`` nodes: the threshold; ``TREE_UNDEFINED`` (-2.0) elsewhere.
    children_left, children_right : int32 arrays, shape (n_nodes,)
        Indices of the children, always greater than ``i``; ``TREE_LEAF`` (-1) at a leaf. A node
        is a leaf exactly when ``children_left[i] == TREE_LEAF``. A ``SPLIT_MULTIWAY`` node's
        children are the consecutive nodes ``children_left[i] .. children_right[i]`` (two or
        more); a binary node's children are just the two.
    missing_left : uint8 array, shape (n_nodes,)
        Binary nodes: 1 when a missing value (NaN) or a category unseen in training goes left.
        Learned where the node's training samples had missing values; otherwise the side with
        more training weight (ties: left).
    category_offset : int64 array, shape (n_nodes,)
        ``SPLIT_SUBSET``: first word of the node's set in ``category_bits``; the set takes
        ``ceil(n_categories[feature] / 64)`` words, bit ``c`` set when code ``c`` goes left.
        ``SPLIT_MULTIWAY``: first entry in ``multiway_slot``. -1 elsewhere.
    value : float64 array, shape (n_nodes, n_outputs * n_classes) or (n_nodes, n_outputs)
        Classification: the (sample- and class-) weighted count of each class among the node's
        training samples. Regression: the weighted mean target. A multi-output tree holds its
        outputs one after another: ``value.reshape(n_nodes, n_outputs, -1)[:, j]`` is output
        ``j``'s (classification: ``n_classes`` columns per output, the most classes of any
        output; an output with fewer classes leaves its last columns 0).
    impurity : float64 array, shape (n_nodes,)
        Node impurity under the fitting criterion (Gini index for ``cart``/``twoing``, entropy in
        bits for ``entropy``/``gain_ratio``, weighted variance for ``squared_error``).
    n_node_samples : int64 array, shape (n_nodes,)
        Number of training samples reaching the node.
    weighted_n_node_samples : float64 array, shape (n_nodes,)
        Their total weight.

    Two pools shared by the nodes:

    category_bits : uint64 array
        The category sets of ``SPLIT_SUBSET`` nodes. A category of the feature absent from the
        node's training samples goes to the child with more training weight.
    multiway_slot : int32 array
        For a ``SPLIT_MULTIWAY`` node, ``n_categories[feature] + 1`` entries: entry ``c`` is the
        child (``children_left[i] + slot``) of category code ``c``, the last entry the child of
        missing values and unseen categories. Categories absent from the node's training samples
        and, when it had none, missing values go to the child with the most training weight.

    And one entry per feature:

    n_categories : int32 array, shape (n_features,)
        Number of category codes (categorical) or levels (ordinal) of each feature; 0 for a
        numeric feature. At a category test (subset, multiway) a value that is not one of the
        codes ``0 .. n_categories - 1`` (NaN, a negative, fractional or too large value) is
        treated as missing. Ordinal features are compared with their thresholds like numbers
        (only NaN is missing there); the estimators encode an unseen level as NaN.
    feature_kind : int8 array, shape (n_features,)
        ``FEATURE_NUMERIC`` (0), ``FEATURE_ORDINAL`` (1) or ``FEATURE_CATEGORICAL`` (2).

    Attributes ``n_features`` (columns of X the tree was fitted on), ``n_classes`` (0 for
    regression) and ``n_outputs`` (1 unless y had several columns) complete the
    description. The node arrays after ``weighted_n_node_samples``, the pools, the feature
    arrays and ``n_outputs`` are optional in the constructor: by default every node is
    a threshold test sending missing values to its heavier child, on numeric features. The
    constructor checks the arrays (:func:`jitree.model.tree_check.check_tree`) and raises
    ValueError on any inconsistency. The arrays are plain NumPy, so a user's ``@njit`` code can
    walk the tree with :func:`jitree.kernels.predict.leaf_of_row_any` (every node kind; the
    arrays as one record, :meth:`walk_arrays`) or
    :func:`jitree.kernels.predict.leaf_of_row` (threshold tests, no missing value).
    """

    def __init__(self, n_features, n_classes, feature, threshold, children_left,
                 children_right, value, impurity, n_node_samples, weighted_n_node_samples,
                 split_kind=None, missing_left=None, category_offset=None, category_bits=None,
                 multiway_slot=None, n_categories=None, feature_kind=None, n_outputs=1):
        self._set_arrays(n_features, n_classes, feature, threshold, children_left,
                         children_right, value, impurity, n_node_samples,
                         weighted_n_node_samples, split_kind, missing_left, category_offset,
                         category_bits, multiway_slot, n_categories, feature_kind,
                         n_outputs=n_outputs)
        # The tree owns its arrays: an input kept as is (or a view of one) is copied, so that
        # once the tree is read-only (see :meth:`_freeze`) no other reference can write it.
        given = (feature, threshold, children_left, children_right, value, impurity,
                 n_node_samples, weighted_n_node_samples, split_kind, missing_left,
                 category_offset, category_bits, multiway_slot, n_categories, feature_kind)
        for (name, _), source in zip(_ARRAYS + _POOLS + _FEATURE_ARRAYS, given, strict=True):
            array = getattr(self, name)
            if array is source or array.base is not None:
                setattr(self, name, array.copy())
        # The kernels do not bounds-check and the walks assume a tree without cycles: a Tree
        # is only ever made of arrays that passed this (O(n_nodes), ~1 ms for 45k nodes), or
        # grown by jitree's own engine (:meth:`_grown`).
        from .tree_check import check_tree

        check_tree(self)

    @classmethod
    def _grown(cls, *arrays, **optional):
        """A Tree of the arrays jitree's growth engine returned (same arguments as the
        constructor), without :func:`~jitree.model.tree_check.check_tree`: the engine makes
        well-formed trees by construction (children numbered after their parent, pools read
        in bounds), which ``tests/test_tree_corpus.py`` and ``tests/test_engine.py`` verify
        with the check itself. On a small fit the check cost a third of the fit's time."""
        tree = cls.__new__(cls)
        tree._set_arrays(*arrays, **optional, trusted=True)
        return tree._freeze()

    def _freeze(self):
        """Make every array of the tree read-only; returns the tree.

        The trees of fitted estimators are frozen (grown, pruned, loaded, converted): writing
        ``tree_.feature[0] = 10**6`` raises instead of sending predict past the end of X.
        A Tree built with the constructor stays writable until an estimator takes it
        (``_from_tree``). To change a frozen tree, build a new Tree from copies of its arrays:
        the constructor checks them again.
        """
        read_only(*(getattr(self, name) for name, _ in _ARRAYS + _POOLS + _FEATURE_ARRAYS))
        return self

    @property
    def is_frozen(self):
        """Whether the arrays are read-only (see :meth:`_freeze`)."""
        return not self.feature.flags.writeable

    def _set_arrays(self, n_features, n_classes, feature, threshold, children_left,
                    children_right, value, impurity, n_node_samples, weighted_n_node_samples,
                    split_kind=None, missing_left=None, category_offset=None,
                    category_bits=None, multiway_slot=None, n_categories=None,
                    feature_kind=None, trusted=False, n_outputs=1):
        for name, count in (("n_features", n_features), ("n_classes", n_classes),
                            ("n_outputs", n_outputs)):
            if isinstance(count, (bool, np.bool_)) or not isinstance(count, numbers.Integral):
                raise TypeError(f"tree.{name} must be an int, got {count!r}")
        self.n_features = int(n_features)
        self.n_classes = int(n_classes)
        self.n_outputs = int(n_outputs)
        self.feature = _array(feature, np.int32, "feature", trusted)
        self.threshold = _array(threshold, np.float64, "threshold", trusted)
        self.children_left = _array(children_left, np.int32, "children_left", trusted)
        self.children_right = _array(children_right, np.int32, "children_right", trusted)
        self.value = _array(value, np.float64, "value", trusted)
        self.impurity = _array(impurity, np.float64, "impurity", trusted)
        self.n_node_samples = _array(n_node_samples, np.int64, "n_node_samples", trusted)
        self.weighted_n_node_samples = _array(weighted_n_node_samples, np.float64,
                                              "weighted_n_node_samples")
        n_nodes = self.feature.shape[0]
        self.split_kind = (np.zeros(n_nodes, dtype=np.int8) if split_kind is None
                           else _array(split_kind, np.int8, "split_kind", trusted))
        if missing_left is None:
            missing_left = _heavier_is_left(self.children_left, self.children_right,
                                            self.weighted_n_node_samples)
        self.missing_left = _array(missing_left, np.uint8, "missing_left", trusted)
        self.category_offset = (np.full(n_nodes, -1, dtype=np.int64) if category_offset is None
                                else _array(category_offset, np.int64, "category_offset", trusted))
        self.category_bits = (np.zeros(0, dtype=np.uint64) if category_bits is None
                              else _array(category_bits, np.uint64, "category_bits", trusted))
        self.multiway_slot = (np.zeros(0, dtype=np.int32) if multiway_slot is None
                              else _array(multiway_slot, np.int32, "multiway_slot", trusted))
        self.n_categories = (np.zeros(self.n_features, dtype=np.int32) if n_categories is None
                             else _array(n_categories, np.int32, "n_categories", trusted))
        self.feature_kind = (np.zeros(self.n_features, dtype=np.int8) if feature_kind is None
                             else _array(feature_kind, np.int8, "feature_kind", trusted))

    # -- shape -------------------------------------------------------------------------------
    @property
    def node_count(self):
        """Number of nodes (the length of the node arrays)."""
        return self.feature.shape[0]

    @property
    def n_leaves(self):
        """Number of leaves."""
        return int(np.count_nonzero(self.children_left == TREE_LEAF))

    @property
    def is_leaf(self):
        """Boolean array, shape (node_count,): which nodes are leaves."""
        return self.children_left == TREE_LEAF

    @property
    def is_binary_threshold(self):
        """Whether every internal node is a threshold test (the fast prediction layout)."""
        return self.cached("is_binary_threshold",
                           lambda: not bool(np.any(self.split_kind != SPLIT_THRESHOLD)))

    @property
    def numeric_thresholds(self):
        """Whether every internal node tests a threshold of a numeric feature: what a walk of
        a sparse X's stored values (:class:`CsrRows`) reads."""
        return self.is_binary_threshold and not np.any(self.feature_kind != 0)

    def n_children(self, node):
        """Number of children of ``node`` (0 for a leaf)."""
        left = int(self.children_left[node])
        if left == TREE_LEAF:
            return 0
        if self.split_kind[node] == SPLIT_MULTIWAY:
            return int(self.children_right[node]) - left + 1
        return 2

    def children(self, node):
        """The children of ``node`` in order (left, right for a binary node; the slots of a
        multiway node); empty for a leaf."""
        left = int(self.children_left[node])
        if left == TREE_LEAF:
            return []
        right = int(self.children_right[node])
        if self.split_kind[node] == SPLIT_MULTIWAY:
            return list(range(left, right + 1))
        return [left, right]

    def parent_child_pairs(self):
        """(parent, child) arrays listing every edge of the tree, parents in node order."""
        def compute():
            internal = np.flatnonzero(self.children_left != TREE_LEAF)
            left = self.children_left[internal].astype(np.int64)
            right = self.children_right[internal].astype(np.int64)
            multiway = self.split_kind[internal] == SPLIT_MULTIWAY
            count = np.where(multiway, right - left + 1, 2)
            parent = np.repeat(internal, count)
            rank = _ranks(count)
            child = np.where(np.repeat(multiway, count), np.repeat(left, count) + rank,
                             np.where(rank == 0, np.repeat(left, count),
                                      np.repeat(right, count)))
            return parent, child
        return self.cached("parent_child_pairs", compute)

    def parents(self):
        """Parent of every node (-1 for the root)."""
        parent, child = self.parent_child_pairs()
        out = np.full(self.node_count, -1, dtype=np.int64)
        out[child] = parent
        return out

    @property
    def depth(self):
        """Depth of every node (root 0)."""
        def compute():
            # pointer jumping: up[v] is an ancestor of v, depth(v) - depth(up[v]) = gap[v];
            # each round jumps twice as far, so log2(max_depth) rounds of whole-array steps
            up = self.parents()
            root = up < 0
            gap = np.where(root, 0, 1)
            up[root] = np.flatnonzero(root)
            while True:
                further = up[up]
                if np.array_equal(further, up):
                    return gap
                gap = gap + gap[up]
                up = further
        return self.cached("depth", compute).copy()

    @property
    def max_depth(self):
        """Depth of the deepest leaf (the root is at depth 0)."""
        return self.cached("max_depth", lambda: int(self.depth.max()) if self.node_count else 0)

    # -- scikit-learn's names ------------------------------------------------------------------
    # code written against scikit-learn's Tree (``estimator.tree_``) reads these; jitree's
    # own names are the arrays above
    @property
    def capacity(self):
        """The number of node rows the arrays hold: ``node_count`` (no spare rows)."""
        return self.node_count

    @property
    def max_n_classes(self):
        """The most classes of any output (1 for regression), the columns of each output's
        block of ``value``."""
        return self.n_classes if self.n_classes else 1

    @property
    def missing_go_to_left(self):
        """``missing_left``: 1 where a missing value goes to the left child."""
        return self.missing_left

    def compute_node_depths(self):
        """Depth of every node counted from 1 at the root, as scikit-learn's Tree counts it
        (:attr:`depth` counts from 0), int64."""
        return self.depth.astype(np.int64) + 1

    def predict(self, X):
        """The ``value`` row of the leaf each row of X reaches (raw class weights or output
        means, as scikit-learn's ``Tree.predict`` returns them, in jitree's 2-D layout)."""
        return self.predict_table(X, self.value)

    def __repr__(self):
        return (f"Tree(node_count={self.node_count}, n_leaves={self.n_leaves}, "
                f"max_depth={self.max_depth}, n_features={self.n_features}, "
                f"n_classes={self.n_classes}"
                + (f", n_outputs={self.n_outputs})" if self.n_outputs != 1 else ")"))

    # -- node tables ---------------------------------------------------------------------------
    def probability_table(self, nodes=None):
        """Class probabilities of every node (rows of ``value`` normalised to sum 1; each
        output's columns of a multi-output tree), or of the nodes ``nodes`` only (an index
        array: the same rows, computed for those nodes alone)."""
        # the rows of ``nodes`` are a copy (np.take, whatever ``nodes`` is), divided in place
        in_place = nodes is not None
        value = np.take(self.value, nodes, axis=0) if in_place else self.value
        if self.n_outputs > 1:
            value = value.reshape(value.shape[0], self.n_outputs,
                                  self.value.shape[1] // self.n_outputs)
            totals = value.sum(axis=2, keepdims=True)
        else:
            totals = value.sum(axis=1, keepdims=True)
        rows = np.divide(value, np.where(totals > 0.0, totals, 1.0),
                         out=value if in_place else None)
        return rows.reshape(rows.shape[0], self.value.shape[1])

    def compute_feature_importances(self, normalize=True):
        """Total weighted impurity decrease per feature (fractions of the root's weight times
        the impurity decrease), normalised to sum 1 (0 if no split) unless ``normalize`` is
        False."""
        importances = np.zeros(self.n_features)
        internal = np.flatnonzero(self.children_left != TREE_LEAF)
        # fractions of the root's weight times half the impurity: no product or sum of two
        # children overflows, whatever the units of the weights and the target
        w = self.weighted_n_node_samples / self.weighted_n_node_samples[0]
        weighted_impurity = w * (0.5 * self.impurity)
        children = np.zeros(self.node_count)
        parent, child = self.parent_child_pairs()
        np.add.at(children, parent, weighted_impurity[child])
        decrease = weighted_impurity[internal] - children[internal]
        np.add.at(importances, self.feature[internal], decrease)
        if not normalize:
            return 2.0 * importances
        total = importances.sum()
        if total > 0.0:
            importances /= total
        return importances

    # -- prediction: X as the estimators hand it over (2-D float32/float64, C or F order,
    # n_features columns; or CsrRows), anything else validated by _rows ---------------------
    def _rows(self, X):
        """X as the walks read it. The estimators' validated arrays (and CsrRows) pass through
        as they are; anything else given to a public method of the Tree (``est.tree_.apply(X)``)
        is validated like an estimator's X, and a wrong number of columns is refused: the walks
        read ``X[row, feature]`` unchecked."""
        if not isinstance(X, CsrRows) and not (
                isinstance(X, np.ndarray) and X.ndim == 2
                and X.dtype in (np.float32, np.float64)
                and (X.flags.c_contiguous or X.flags.f_contiguous)):
            X = check_X(X, finite=False)
        if X.shape[1] != self.n_features:
            raise ValueError(f"X has {X.shape[1]} features, but the tree was fitted on "
                             f"{self.n_features}")
        return X

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
        a breadth-first numbering on a 45k-node tree). Of a node's children (two, or a
        multiway node's k), the subtree of the one of most training weight comes first, so
        that the path most rows take reads consecutive nodes.
        """
        flat, node_of_flat = self._flat_record(dtype)
        return flat.feature, flat.threshold, flat.left, int(flat.depth[0]), node_of_flat

    def _flat_record(self, dtype):
        """``(FlatTrees, node_of_flat)`` of this tree alone for X of ``dtype`` (built once per
        dtype, by :func:`flat_trees`): its table has a row per flat node (the table depends on
        the method: labels, probabilities, node ids)."""
        dtype = np.dtype(dtype)

        def build():
            return flat_trees([self], dtype)[0], self._cache["flat_order"]

        return self.cached(("flat_trees", dtype), build)

    def _flat_order(self):
        """Tree ids in flat order: the root, then the children of each internal node side by
        side in the depth-first (pre-)order of the internal nodes, the heaviest child's
        subtree first (:func:`jitree.kernels.predict.write_flat`, which :func:`flat_trees`
        keeps here)."""
        if "flat_order" not in self.__dict__.get("_cache", {}):
            self._flat_record(np.float64)
        return self._cache["flat_order"]

    def flat_missing_right(self):
        """Per flat node (see :meth:`flat`): 1 when the node sends a missing value (NaN) to its
        right child, 0 for left and at leaves."""
        return self._flat_record(np.float64)[0].missing_right

    @property
    def has_flat_categories(self):
        """Whether the tree's category tests fit the flat layout (see
        :func:`jitree.kernels.predict.predict_flat_categories`): it has subset, one-vs-rest
        or multiway nodes, and each tested feature at most ``CODE_LIMIT`` categories."""
        def compute():
            tests = self.split_kind != SPLIT_THRESHOLD
            if not tests.any():
                return False
            return bool(self.n_categories[self.feature[tests]].max() <= _predict.CODE_LIMIT)
        return self.cached("has_flat_categories", compute)

    def flat_tests(self):
        """``(word, bit_base, bits, slot_base, slots)``: the category tests of the flat
        layout (see :meth:`flat`) of a tree with :attr:`has_flat_categories`, from which
        :func:`flat_categories` makes the fields of
        :class:`~jitree.kernels.records.FlatCategories` (moving the narrow words into the
        table when a node is wide, and the bases to uint32; see the comment above
        :data:`jitree.kernels.predict.NARROW_CATEGORIES`). Code c < m of a feature of m
        categories is its c-th category, code m a missing value or an unseen category. Per
        flat node: a narrow subset node's word (bit c set when code c goes right), a wide
        subset node's block of such words in ``bits``, a multiway node's block of m + 1
        slots in ``slots`` (entry c: the child of code c, counted from the node's first
        child). A table is empty when no node uses it; else its first block is all zeros."""
        def compute():
            node_of_flat = self._flat_order()
            n_flat = node_of_flat.shape[0]
            kind = self.split_kind[node_of_flat]
            bits_zero, slots_zero = _zero_blocks(self.n_categories, self.feature_kind)
            word = np.zeros(n_flat, dtype=np.uint64)
            bit_base = slot_base = np.zeros(0, dtype=np.int64)
            bits = np.zeros(0, dtype=np.uint64)
            slots = np.zeros(0, dtype=np.uint16)
            subset = np.flatnonzero(kind == SPLIT_SUBSET)
            if subset.size:
                m = self.n_categories[self.feature[node_of_flat[subset]]].astype(np.int64)
                n_words = (m >> 6) + 1  # the words of codes 0 .. m
                words = self._right_bits(node_of_flat[subset], m, n_words)
                first = np.cumsum(n_words) - n_words
                narrow = m <= _predict.NARROW_CATEGORIES
                word[subset[narrow]] = words[first[narrow]]
                if not narrow.all():
                    bit_base = np.zeros(n_flat, dtype=np.int64)
                    bit_base[subset[~narrow]], take = _blocks(n_words[~narrow], first[~narrow],
                                                              bits_zero)
                    bits = np.concatenate([np.zeros(bits_zero, dtype=np.uint64), words[take]])
            multiway = np.flatnonzero(kind == SPLIT_MULTIWAY)
            if multiway.size:
                nodes = node_of_flat[multiway]
                m = self.n_categories[self.feature[nodes]].astype(np.int64)
                slot_base = np.zeros(n_flat, dtype=np.int64)
                slot_base[multiway], take = _blocks(m + 1, self.category_offset[nodes],
                                                    slots_zero)
                slots = np.concatenate([np.zeros(slots_zero, dtype=np.uint16),
                                        self.multiway_slot[take].astype(np.uint16)])
            return read_only(word, bit_base, bits, slot_base, slots)
        return self.cached("flat_tests", compute)

    def _right_bits(self, nodes, m, n_words):
        """The ``n_words`` words of each subset node of ``nodes`` (features of ``m``
        categories), one after another: bit c of word w set when code 64 w + c goes right
        (code m: missing values and unseen categories)."""
        block = np.repeat(np.arange(nodes.shape[0]), n_words)
        w = _ranks(n_words)
        m = m[block]
        stored = (m + 63) >> 6  # the node's words in category_bits (bit set: goes left)
        goes_left = np.where(w < stored, self.category_bits[
            self.category_offset[nodes][block] + np.minimum(w, stored - 1)], np.uint64(0))
        count = np.clip(m - 64 * w, 0, 64)  # categories in word w
        present = np.where(count >= 64, ~np.uint64(0),
                           (np.uint64(1) << np.minimum(count, 63).astype(np.uint64))
                           - np.uint64(1))
        missing = (self.missing_left[nodes][block] == 0) & ((m >> 6) == w)
        missing_bit = np.uint64(1) << (m & 63).astype(np.uint64)
        return (~goes_left & present) | np.where(missing, missing_bit, np.uint64(0))

    def flat_categories(self):
        """The :class:`~jitree.kernels.records.FlatCategories` of this tree."""
        return self.cached("flat_categories", lambda: flat_categories(
            self.flat_tests(), self.feature_kind, self.n_categories))

    def value_categories(self, encoder):
        """The :class:`~jitree.kernels.records.FlatCategories` of this tree for X holding the
        category values themselves, looked up with the value tables of ``encoder`` (a
        :class:`~jitree.model.categories.FeatureEncoder`); None when its values cannot be
        looked up so (:meth:`FeatureEncoder.value_tables`). Kept for the last encoder asked
        (an estimator keeps its own)."""
        slot = self.cached("value_categories", lambda: [None])
        held = slot[0]  # (the encoder's weak reference, its categories): one assignment
        if held is None or held[0]() is not encoder:
            tables = encoder.value_tables()
            held = (weakref.ref(encoder), None if tables is None else flat_categories(
                self.flat_tests(), self.feature_kind, self.n_categories, tables))
            slot[0] = held
        return held[1]

    def walk_arrays(self):
        """The :class:`~jitree.kernels.records.TreeWalk` record of this tree's arrays that
        :func:`jitree.kernels.predict.leaf_of_row_any` and
        :func:`jitree.kernels.predict.predict_nodes` take (read-only, as a frozen tree's
        arrays are, for a tree built by the constructor too: one compiled walk serves both)."""
        arrays = (self.feature, self.threshold, self.children_left, self.children_right,
                  self.split_kind, self.missing_left, self.category_offset, self.category_bits,
                  self.multiway_slot, self.n_categories)
        if not self.is_frozen:
            arrays = tuple(read_only_view(array) for array in arrays)
        return TreeWalk(*arrays)

    def _predict_flat(self, X, node_table, categories=None):
        """node_table[leaf of each row]. Trees of threshold tests walk the flat layout (with
        missing values too), and so do trees with subset, one-vs-rest and multiway tests of
        features of at most 65,535 categories (:attr:`has_flat_categories`); the others walk
        the Tree arrays. A :class:`~jitree.model.validation.CsrRows` X (a tree of threshold tests)
        is walked by its rows' stored values, a
        :class:`~jitree.model.validation.CategoryValueRows` X by its category values (encoded
        first when it holds an infinity; ``categories``: its FlatCategories, given by this
        method to itself, whose walk gives None for X holding an infinity)."""
        if isinstance(X, CategoryValueRows):
            out = self._predict_flat(X.X, node_table, X.categories)
            return self._predict_flat(X.encode(), node_table) if out is None else out
        X = self._rows(X)
        node_table = np.asarray(node_table)
        if node_table.ndim != 2:
            raise ValueError(f"the node table must be 2-D (a row per node), got "
                             f"{node_table.ndim} dimension(s)")
        if node_table.shape[0] != self.node_count:
            raise ValueError(f"the node table has {node_table.shape[0]} rows, but the tree "
                             f"has {self.node_count} nodes")
        if isinstance(X, CsrRows) or self.is_binary_threshold or self.has_flat_categories:
            flat, node_of_flat = self._flat_record(X.dtype)
            if X.shape[0] < node_of_flat.shape[0]:
                # fewer rows than nodes (rows served a few at a time): the walk gives each
                # row's node id, and only those rows of the table are copied, not the whole
                # table into flat order (one row of a 45k-node classifier: predict_proba
                # 487 -> 44 us)
                node_ids = self.cached("flat_node_ids", lambda: (
                    np.array(node_of_flat, dtype=np.int64)[:, None].view(np.float64)))
                leaf = self._walk_flat(X, flat, node_ids, categories)
                return None if leaf is None else np.ascontiguousarray(
                    node_table[leaf[:, 0].view(np.int64)])
            return self._walk_flat(X, flat, np.ascontiguousarray(node_table[node_of_flat]),
                                   categories)
        table = read_only_view(np.ascontiguousarray(node_table))
        out = kernel_output((X.shape[0], table.shape[1]), table.dtype)
        if _predict.predict_nodes(*walk_input(X), self.walk_arrays(), _ROOT, table,
                                  _predict.CHUNK_ROWS, out):
            raise_infinite(X, "X")
        return out

    def _walk_flat(self, X, flat, table, categories=None):
        """table[flat leaf of each row] (``table``: a row per flat node, in flat order), by
        the flat walk of :meth:`_predict_flat`; ``categories``: the FlatCategories of a
        :class:`~jitree.model.validation.CategoryValueRows` X (None: X is encoded), whose
        infinity gives None instead of an error."""
        table = read_only_view(table)  # as a forest's: one compiled walk serves both
        out = kernel_output((X.shape[0], table.shape[1]), table.dtype)
        if isinstance(X, CsrRows):
            walk_csr(X, flat, table, _predict.CHUNK_ROWS, out, lambda: self.cached(
                ("zero_paths", flat.threshold.dtype, X.shape[1]),
                lambda: _predict.zero_paths(flat, X.shape[1])))
            return out
        if self.is_binary_threshold:
            walk = _predict.predict_flat_serial if X.shape[0] <= FEW_ROWS \
                else _predict.predict_flat
            infinite = walk(*walk_input(X), flat, table, _predict.CHUNK_ROWS, out)
        else:
            # a task copies its rows of X (the codes inside): CHUNK_ROWS of them, fewer for
            # a wide X
            chunk_rows = task_rows(X.shape[1] * X.itemsize, _predict.CHUNK_ROWS)
            walk = _predict.predict_flat_categories_serial if X.shape[0] <= FEW_ROWS \
                else _predict.predict_flat_categories
            infinite = walk(
                *walk_input(X), flat,
                self.flat_categories() if categories is None else categories, table,
                chunk_rows, out)
        if infinite:
            if categories is not None:
                return None
            raise_infinite(X, "X")
        return out

    def apply(self, X):
        """Tree id of the leaf each row reaches."""
        return self.predict_labels(X, np.arange(self.node_count, dtype=np.int64))

    def predict_table(self, X, node_table):
        """node_table[leaf of each row] (node_table: float64, one row per node)."""
        return self._predict_flat(X, np.asarray(node_table, dtype=np.float64))

    def predict_labels(self, X, node_label):
        """node_label[leaf of each row] (node_label: int64, one entry per node)."""
        # the int64 labels travel as their bit patterns in a float64 table: the kernels only
        # copy a table's entries for a single tree, so the bits arrive intact, and a predict
        # kernel compiled for float64 tables serves labels, node ids and probabilities alike
        # (one specialisation fewer to compile)
        table = np.ascontiguousarray(node_label, dtype=np.int64)[:, None].view(np.float64)
        return self._predict_flat(X, table)[:, 0].view(np.int64)

    def decision_path(self, X):
        """Sparse CSR indicator (n_samples, node_count) of the nodes each row of X passes
        through. Needs scipy (``pip install 'jitree[scipy]'``)."""
        from ._base import _scipy_sparse

        sparse = _scipy_sparse("decision_path")
        X = self._rows(X)
        indptr, indices = self.decision_path_arrays(X)
        return sparse.csr_matrix((np.ones(indices.shape[0], dtype=np.int64), indices, indptr),
                                 shape=(X.shape[0], self.node_count))

    def decision_path_arrays(self, X):
        """CSR structure (indptr, indices) of the nodes each row visits, root first."""
        X = self._rows(X)
        leaves = self.apply(X)
        depth = self.depth
        indptr = np.zeros(X.shape[0] + 1, dtype=np.int64)
        np.cumsum(depth[leaves] + 1, out=indptr[1:])
        parent = self.parents()
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

    def on_features(self, features):
        """This tree reading only the columns ``features`` (increasing; every feature it
        tests among them) of an X made of those columns alone: the same nodes, feature ids
        renumbered to positions in ``features``."""
        position = np.full(self.n_features, -1, dtype=np.int32)
        position[features] = np.arange(len(features), dtype=np.int32)
        arrays = self.arrays()
        arrays["feature"] = np.where(self.feature >= 0, position[np.maximum(self.feature, 0)],
                                     self.feature).astype(np.int32)
        arrays["n_categories"] = self.n_categories[features]
        arrays["feature_kind"] = self.feature_kind[features]
        names = [name for name, _ in _ARRAYS]
        return Tree._grown(len(features), self.n_classes, *(arrays.pop(name) for name in names),
                           **arrays, n_outputs=self.n_outputs)

    # -- persistence helpers ---------------------------------------------------------------------
    def arrays(self):
        """Every array of the tree by name (node arrays, pools, feature arrays)."""
        return {name: getattr(self, name) for name, _ in _ARRAYS + _POOLS + _FEATURE_ARRAYS}

    def __getstate__(self):
        state = self.arrays()
        state["n_features"] = self.n_features
        state["n_classes"] = self.n_classes
        if self.n_outputs != 1:
            state["n_outputs"] = self.n_outputs
        state["frozen"] = self.is_frozen
        return state

    def __setstate__(self, state):
        state = dict(state)
        frozen = state.pop("frozen", False)
        self.__init__(**state)
        if frozen:
            self._freeze()


# walk_csr takes the zero paths when the trees' mean depth is at least this many times the
# rows' mean number of stored values, plus one. Measured (10-tree forests, 2 threads, zero
# paths against lanes): 100,000 x 20,000 at density 0.001 (depth 3,685, 20 values a row)
# 233 against 1,427 ms; TF-IDF rows (depth 159-242, 77 values a row) 330-369 against
# 185-202 ms; 50,000 x 30 at density 0.3 (depth 36, 9 values a row) 250 against 35 ms
ZERO_PATH_DEPTH = 16


def walk_csr(X, flat, table, chunk_rows, out, paths):
    """``out`` = the sum over the trees of ``flat`` of ``table``'s rows of the leaves that the
    rows of the :class:`CsrRows` X reach: by zero paths
    (:func:`jitree.kernels.predict.predict_zero_paths_csr`; ``paths()`` gives the trees'
    :class:`~jitree.kernels.records.ZeroPaths`, built once by the caller's cache) when the
    trees are deep for the rows' stored values, whose number bounds what a row's walk of a
    tree costs there, else node by node (:func:`jitree.kernels.predict.predict_flat_csr`),
    which costs each row its path."""
    stored = X.data.shape[0] / max(1, X.shape[0])
    if np.mean(flat.depth) >= ZERO_PATH_DEPTH * (stored + 1):
        _predict.predict_zero_paths_csr(X.arrays, X.missing, flat, paths(), table, chunk_rows,
                                        out)
    else:
        _predict.predict_flat_csr(X.arrays, X.missing, flat, table, chunk_rows, out)


def walk_rows(tree, X, walk):
    """``walk(X)`` for a :class:`Tree` method that walks validated rows (``tree.apply``,
    ``tree.predict_table`` ...), X being training rows read again after the growth (out-of-bag
    rows, honest estimation rows, leaf samples). A sparse X is never made dense whole: a tree
    of threshold tests on numeric features walks its rows' stored values (:class:`CsrRows`),
    any other tree dense blocks of rows."""
    if not is_sparse(X):
        return walk(np.ascontiguousarray(X))
    if tree.numeric_thresholds:
        return walk(CsrRows(X))
    return np.concatenate([walk(block) for block in prediction_chunks(X)])
