"""What a regression tree or forest keeps for ``predict_quantiles`` (quantile regression
forests), and the prediction itself.

With ``store_leaf_samples=True`` a fit keeps a :class:`~jitree.kernels.records.LeafSamples`
record (``leaf_samples_``): the training targets once (8 bytes per training row) and, per
tree, the training rows each leaf holds with their weight in that tree (12 bytes per row and
tree: an int32 row index and a float64 weight; a bootstrap tree holds its bag's distinct
rows, about 63% of them, weighted by their multiplicities), plus 24 bytes per node (about a
third of the tree's own arrays). A 100-tree forest on 150k rows stores about 9.5M rows
(114 MB) plus its nodes; the default (False) keeps nothing. At the first
``predict_quantiles`` the model derives the kernels' layout (:func:`layout`: 32 bytes per
node, twice, 16 per stored row, 8 per distinct target), kept on the model, not saved.

Which rows: those the tree's leaf values come from: its bag (bootstrap), all rows of positive
``sample_weight`` (no bootstrap; a tree), or with ``honest=True`` its estimation part. The
rows of one tree are stored in the depth-first order of their leaves, so that every node's
rows are one block ``sample[start:stop]``: a leaf that none of the rows reaches (honest trees)
takes its nearest ancestor's block, as its value is its ancestor's
(:mod:`jitree.model.honest`).

Against the ``quantile-forest`` package: it keeps, by default (``max_samples_leaf=1``), one
training sample drawn at random per leaf and takes NumPy's quantile of the trees' samples; a
jitree forest keeps every sample of every leaf (Meinshausen's estimator, quantile-forest's
``max_samples_leaf=None, weighted_leaves=True``), each tree's weight spread over its leaf
(:mod:`jitree.kernels.quantiles`). Both use each tree's bootstrap draws (multiplicities) and
no out-of-bag row.
"""

import numbers

import numba
import numpy as np

from ..kernels import quantiles as _quantiles
from ..kernels.records import LeafSamples, QuantileLayout
from .tree import (
    flat_trees,
    node_levels,
    raise_infinite,
    read_only,
    read_only_view,
    walk_input,
    walk_rows,
)


def _preorder(tree, parent, levels):
    """Depth-first (preorder) position of every node, children in their order."""
    n_nodes = tree.node_count
    size = np.ones(n_nodes, dtype=np.int64)
    for nodes in reversed(levels[1:]):
        np.add.at(size, parent[nodes], size[nodes])
    edge_parent, edge_child = tree.parent_child_pairs()
    # siblings before each child within its parent's edges (edges are grouped by parent)
    before = np.cumsum(size[edge_child]) - size[edge_child]
    first = np.searchsorted(edge_parent, edge_parent, side="left")
    offset = np.zeros(n_nodes, dtype=np.int64)
    offset[edge_child] = before - before[first]
    position = np.zeros(n_nodes, dtype=np.int64)
    for nodes in levels[1:]:
        position[nodes] = position[parent[nodes]] + 1 + offset[nodes]
    return position


def collect(tree, X, weight, count):
    """The blocks of one tree: ``(start, stop, sample, entry_weight, node_count)`` for the
    rows of X of positive ``weight`` (their weight in the tree) and ``count`` (their
    draws)."""
    rows = np.flatnonzero(weight > 0)
    leaves = walk_rows(tree, X[rows], tree.apply)
    parent, levels = node_levels(tree)
    position = _preorder(tree, parent, levels)
    order = np.argsort(position[leaves], kind="stable")
    sample = rows[order].astype(np.int32)
    entry_weight = weight[sample].astype(np.float64)
    n_nodes = tree.node_count
    # a node's block runs from the first to the last row of the leaves under it
    per_node = np.bincount(leaves, minlength=n_nodes)
    by_position = np.zeros(n_nodes, dtype=np.int64)
    by_position[position] = per_node
    ends = np.cumsum(by_position)
    stop = ends[position]
    start = stop - per_node
    for nodes in reversed(levels[1:]):
        np.minimum.at(start, parent[nodes], start[nodes])
        np.maximum.at(stop, parent[nodes], stop[nodes])
    for nodes in levels[1:]:
        empty = nodes[stop[nodes] <= start[nodes]]
        start[empty] = start[parent[empty]]
        stop[empty] = stop[parent[empty]]
    return start, stop, sample, entry_weight, _block_draws(start, stop, count[sample])


def _block_draws(start, stop, entry_count):
    """Draws in each node's block: the sum of ``entry_count`` over ``start:stop``."""
    draws = np.concatenate([[0.0], np.cumsum(entry_count, dtype=np.float64)])
    return draws[stop] - draws[start]


def assemble(blocks, target):
    """One :class:`LeafSamples` from the ``blocks`` of one or several trees (as
    :func:`collect` returns them; the trees' nodes numbered one tree after another) and the
    training ``target``. Returns the record and the first node id of each tree."""
    roots = np.zeros(len(blocks), dtype=np.int64)
    starts, stops = [], []
    entries = 0
    for t, (start, stop, sample, _, _) in enumerate(blocks):
        if t + 1 < len(blocks):
            roots[t + 1] = roots[t] + start.shape[0]
        starts.append(start + entries)
        stops.append(stop + entries)
        entries += sample.shape[0]
    record = LeafSamples(*read_only(
        np.concatenate(starts), np.concatenate(stops),
        np.concatenate([block[2] for block in blocks]),
        np.concatenate([block[3] for block in blocks]),
        np.concatenate([block[4] for block in blocks]),
        np.ascontiguousarray(target, dtype=np.float64)))
    return record, roots


def from_arrays(start, stop, sample, weight, target):
    """A single tree's :class:`LeafSamples` from its stored arrays (each row one draw),
    checked: blocks inside the entries, rows inside the targets, weights positive and
    finite. ValueError otherwise."""
    start, stop = np.asarray(start, dtype=np.int64), np.asarray(stop, dtype=np.int64)
    sample, weight = np.asarray(sample, dtype=np.int32), np.asarray(weight, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64)
    n_entries = sample.shape[0]
    if start.shape != stop.shape or weight.shape != sample.shape:
        raise ValueError("leaf samples: start/stop and sample/weight lengths differ")
    if ((start < 0) | (stop < start) | (stop > n_entries)).any():
        raise ValueError("leaf samples: a block lies outside the stored samples")
    if n_entries and (sample.min() < 0 or sample.max() >= target.shape[0]):
        raise ValueError("leaf samples: a sample index lies outside the training targets")
    if not (np.isfinite(weight).all() and (weight > 0).all()):
        raise ValueError("leaf samples: weights must be positive and finite")
    if not np.isfinite(target).all():
        raise ValueError("leaf samples: training targets must be finite")
    node_count = _block_draws(start, stop, np.ones(n_entries))
    return LeafSamples(*read_only(start, stop, sample, weight, node_count,
                                  target))


def stored(model):
    """The model's ``leaf_samples_``; a ValueError naming the parameter when it was fitted
    without them."""
    samples = getattr(model, "leaf_samples_", None)
    if samples is None:
        raise ValueError(f"{type(model).__name__} has no leaf samples (fitted without them, "
                         "or pruned since): set store_leaf_samples=True and fit again to "
                         "predict quantiles")
    return samples


def check_quantiles(quantiles):
    """``(array, scalar)``: the quantiles as a float64 array and whether a single number was
    given. TypeError for non-numbers, ValueError outside [0, 1], NaN or empty."""
    scalar = isinstance(quantiles, numbers.Real) and not isinstance(quantiles, bool)
    if isinstance(quantiles, (str, bytes, bool)) or quantiles is None:
        raise TypeError(f"quantiles must be a number or a sequence of numbers in [0, 1], got "
                        f"{quantiles!r}")
    values = np.asarray(quantiles)
    if values.dtype.kind not in "iuf":
        raise TypeError(f"quantiles must be a number or a sequence of numbers in [0, 1], got "
                        f"{quantiles!r}")
    if values.ndim > 1:
        raise ValueError(f"quantiles must be a number or a 1-D sequence, got shape "
                         f"{values.shape}")
    values = np.ascontiguousarray(values.reshape(-1), dtype=np.float64)
    if values.shape[0] == 0:
        raise ValueError("quantiles is empty: give at least one quantile in [0, 1]")
    bad = ~((values >= 0.0) & (values <= 1.0))
    if bad.any():
        raise ValueError(f"quantiles must be in [0, 1], got {values[bad][0]!r}")
    return values, scalar


def check_interpolation(interpolation):
    """The kernels' code of an ``interpolation`` name (:data:`jitree.kernels.quantiles.
    INTERPOLATIONS`); ValueError for any other."""
    if not isinstance(interpolation, str) or interpolation not in _quantiles.INTERPOLATIONS:
        raise ValueError(f"interpolation must be one of {sorted(_quantiles.INTERPOLATIONS)}, "
                         f"got {interpolation!r}")
    return _quantiles.INTERPOLATIONS[interpolation]


def layout(leaf_samples):
    """The :class:`QuantileLayout` the kernels read (derived, not stored: 32 bytes per node
    and 16 per entry while the model predicts quantiles)."""
    if leaf_samples.target.shape[0] >= 2**31:
        raise ValueError("predict_quantiles supports fewer than 2**31 training rows")
    distinct, rank = np.unique(leaf_samples.target, return_inverse=True)
    start = leaf_samples.start
    length = leaf_samples.stop - start
    entry_rank = rank[leaf_samples.sample].astype(np.float64)
    single = np.full(start.shape[0], -1.0)
    one = length == 1
    single[one] = entry_rank[start[one]]
    leaf_table = np.column_stack([start, length, leaf_samples.node_count, single])
    entries = np.column_stack([entry_rank, leaf_samples.weight])
    return QuantileLayout(*read_only(np.ascontiguousarray(leaf_table, dtype=np.float64),
                                     np.ascontiguousarray(entries, dtype=np.float64),
                                     np.ascontiguousarray(distinct, dtype=np.float64)))


def layout_of(model, samples):
    """``(layout, cache)``: :func:`layout` of ``samples`` (the model's ``leaf_samples_``) and
    a dict for the flat layouts :func:`predict` builds, made at the first prediction and
    kept on the model."""
    cached = model.__dict__.get("_quantile_layout")
    if cached is None or cached[0] is not samples:
        cached = (samples, layout(samples), {})
        model._quantile_layout = cached
    return cached[1], cached[2]


QUANTILE_CHUNK_ROWS = 1024  # most rows per parallel task of predict_quantiles_flat


def _flat_leaf_table(trees, table, dtype):
    """``table`` (rows in the trees' node order, one tree after another) in the order of
    their flat layouts concatenated."""
    rows = []
    root = 0
    for tree in trees:
        rows.append(table[root + tree._flat_order()])
        root += tree.node_count
    return read_only(np.ascontiguousarray(np.concatenate(rows)))[0]


def predict(leaf_samples, trees, X, quantiles, scalar, kernel_layout=None, cache=None,
            flat_of=None, method=_quantiles.LINEAR):
    """The quantiles of each row of X (validated) from the leaves it reaches in ``trees``
    (:class:`~jitree.Tree` objects whose nodes are those of ``leaf_samples`` one tree after
    another): (n_rows, n_quantiles), or (n_rows,) when ``scalar``. ``cache``: a dict where
    the flat leaf table is kept by dtype; ``flat_of(dtype)``: the trees' concatenated flat
    layouts when the caller keeps them (a forest's prediction layout), else built here and
    kept in ``cache`` too."""
    if kernel_layout is None:
        kernel_layout = layout(leaf_samples)
    table = kernel_layout.leaf_table
    if sum(tree.node_count for tree in trees) != table.shape[0]:
        raise ValueError("leaf_samples_ does not fit the trees (another number of nodes)")
    out = np.empty((X.shape[0], quantiles.shape[0]))
    if X.shape[0] == 0:
        return out[:, 0] if scalar else out
    quantiles = read_only_view(quantiles)  # as every array the kernels read: one type
    if all(tree.is_binary_threshold for tree in trees):
        cache = {} if cache is None else cache
        dtype = np.dtype(X.dtype)
        if ("table", dtype) not in cache:
            cache[("table", dtype)] = _flat_leaf_table(trees, table, dtype)
        flat_table = cache[("table", dtype)]
        if flat_of is not None:
            flat = flat_of(dtype)
        else:
            if ("flat", dtype) not in cache:
                cache[("flat", dtype)] = flat_trees(trees, dtype)[0]
            flat = cache[("flat", dtype)]
        threads = numba.get_num_threads()
        chunk_rows = max(16, min(QUANTILE_CHUNK_ROWS, -(-X.shape[0] // (4 * threads))))
        if _quantiles.predict_quantiles_flat(*walk_input(X), flat, flat_table,
                                             kernel_layout, quantiles, method,
                                             chunk_rows, out):
            raise_infinite(X, "X")
        return out[:, 0] if scalar else out
    # trees with category tests: each tree's walk over the Tree arrays, then the quantiles
    leaf_rows = np.empty((X.shape[0], len(trees), table.shape[1]))
    root = 0
    for t, tree in enumerate(trees):
        leaf_rows[:, t] = tree.predict_table(X, table[root:root + tree.node_count])
        root += tree.node_count
    _quantiles.predict_quantiles(leaf_rows, kernel_layout, quantiles, method, out)
    return out[:, 0] if scalar else out
