"""Depth-wise growth on a sparse X: each level's split search reads the stored values only.

Each column holds its stored non-zero values sorted increasingly (:class:`SparseData`,
:func:`sort_columns`); the implicit zeros of a node on a feature are one run, the node's
statistics minus those of its stored values there, placed between the negative and the
positive values. A level's search groups each column's stored values by open node (two
sequential passes over the column: :func:`group_column`), then scans each node's group on
its own with its sides' sums in registers (:func:`scan_group`): the candidates of a node lie
between two of its successive distinct values (zero included), as in the dense scan
(:mod:`jitree.kernels.split`), so the level costs O(stored values + touched nodes) per
feature instead of O(samples).

What it grows equals the dense growth loop on ``X.toarray()``: the same candidates, scores,
tie rules (lowest threshold, then lowest feature index), node numbering, children's
statistics (summed in the dense sorted order: negative values, zeros by sample index,
positive values) and stopping rules. Sums of non-integer weights or targets may round
differently in the scan (the zero run's statistics come from a subtraction, and gini's sums
of squares are kept up to date per value, as the dense scan keeps them), which can only
swap two candidates whose scores agree to the last bits.

``max_features`` below the number of features draws each node's features as the dense
loop's :func:`jitree.kernels.select.select_features` does (the same permutation of the
same random stream, the same features visited and kept: :func:`draw_features`),
and the column passes skip the stored values of the nodes that did not draw their feature.
The stored values of samples in no open node are dropped as the levels go
(:func:`open_entries`), so that a deep tree's levels cost their open samples' stored values.
A forest's trees grow on the rows of their bags (:func:`keep_rows`: the columns sorted once
for all the trees).

It covers numeric features without missing values, the best and the random splitters and
the built-in criteria of :func:`criteria.builtin_score`, gini and squared error; the Python layer
(:mod:`jitree.model.builder`) sends every other fit to the dense loop.
"""

from collections import namedtuple

import numpy as np
from numba import prange

from . import criteria
from ._jit import borrowing, jit, pjit
from .categorical import child_allowed, sides_score
from .grower import (
    EPSILON,
    F_IMPURITY,
    F_LOWER,
    F_THRESHOLD,
    F_UPPER,
    F_WEIGHT,
    N_DEPTH,
    N_FEATURE,
    N_LEFT,
    N_MISSING_LEFT,
    N_RIGHT,
    N_SAMPLES,
    N_SPLIT_KIND,
    new_node_table,
    node_capacity,
    reserve_nodes,
    splittable,
)
from .predict import SPLIT_THRESHOLD
from .random import stream_key
from .select import WALK_BATCH, draw_done, walk_picks
from .split import cut_between, midpoint, plain_settings, with_measure

SparseData = namedtuple("SparseData", [
    "column_start",   # (n_features + 1,) int64: column f's values are at column_start[f]:
                      # column_start[f + 1]
    "row",            # (n_stored,) int32: the sample of each stored value
    "value",          # (n_stored,) X's dtype: the stored values, non-zero, increasing within
                      # each column
    "label",          # (n_samples,) int64 class of every sample (classification), or empty
    "target",         # (n_samples,) float64 regression target (kernel units), or empty
    "target_term",    # (n_samples,) float64: poisson's y log y, else empty (y**2 is used)
    "sample_weight",  # (n_samples,) float64
    "is_regression",  # bool
    # what the split search reads of each stored value's sample, in the order of ``row``
    # (sequential reads in the column passes)
    "entry_weight",   # (n_stored,) float64: its weight
    "entry_class",    # (n_stored,) int32: its class (classification), or empty
    "entry_wy",       # (n_stored,) float64: its weight times its target (regression), or empty
    "weighted",       # bool: some sample weight is not 1
    "whole",          # bool: classes whose weights are whole multiples of a power of two,
                      # few enough that every sum of them is exact in any order
])


@pjit
def sort_columns(column_start, row, bits):
    """Sort each column's stored values increasingly, in place, rows along (equal values
    keep their order), in parallel over blocks of columns. ``bits``: the values seen as
    unsigned integers of their width (``value.view(np.uint32)`` for float32, ``np.uint64``
    for float64; no NaN).

    An LSD radix sort, 8 bits a pass, on the order-preserving image of the IEEE bits (the
    sign bit set for a positive value, every bit flipped for a negative one); a pass whose
    digit is the same for the whole column is skipped (most columns' top byte). On 100k x
    20k float32 at density 0.001 (100 values a column) it takes 13 ms where a merge sort of
    each column took 33 ms (2 threads)."""
    n_columns = column_start.shape[0] - 1
    longest = longest_column(column_start)
    n_bytes = bits.itemsize
    sign = np.uint64(1) << np.uint64(8 * n_bytes - 1)
    full = sign | (sign - np.uint64(1))
    n_blocks = min(n_columns, 64)
    for b in prange(n_blocks):
        keys = np.empty(longest, dtype=np.uint64)
        other_keys = np.empty(longest, dtype=np.uint64)
        rows = np.empty(longest, dtype=row.dtype)
        other_rows = np.empty(longest, dtype=row.dtype)
        count = np.empty(256, dtype=np.int64)
        for f in range(b * n_columns // n_blocks, (b + 1) * n_columns // n_blocks):
            first = column_start[f]
            n = column_start[f + 1] - first
            if n < 2:
                continue
            for k in range(n):
                u = np.uint64(bits[first + k])
                keys[k] = (u ^ full) if u & sign else (u | sign)
                rows[k] = row[first + k]
            source_keys, source_rows, target_keys, target_rows = (keys, rows, other_keys,
                                                                  other_rows)
            for d in range(n_bytes):
                shift = np.uint64(8 * d)
                count[:] = 0
                for k in range(n):
                    count[(source_keys[k] >> shift) & np.uint64(255)] += 1
                if count[(source_keys[0] >> shift) & np.uint64(255)] == n:
                    continue  # one digit for the whole column: the order stays
                total = 0
                for c in range(256):
                    here = count[c]
                    count[c] = total
                    total += here
                for k in range(n):
                    digit = (source_keys[k] >> shift) & np.uint64(255)
                    q = count[digit]
                    count[digit] = q + 1
                    target_keys[q] = source_keys[k]
                    target_rows[q] = source_rows[k]
                source_keys, source_rows, target_keys, target_rows = (
                    target_keys, target_rows, source_keys, source_rows)
            for k in range(n):
                u = source_keys[k]
                bits[first + k] = (u ^ sign) if u & sign else (u ^ full)
                row[first + k] = source_rows[k]


@pjit
def keep_rows(column_start, row, value, number, out_start, out_row, out_value):
    """The stored values of the rows ``i`` with ``number[i] >= 0``, renumbered
    ``number[i]``, each column's kept in their order (still sorted), into ``out_row``,
    ``out_value`` (``out_start``: the columns' starts); returns the number kept."""
    n_features = column_start.shape[0] - 1
    kept = np.zeros(n_features + 1, dtype=np.int64)
    for f in prange(n_features):
        count = 0
        for p in range(column_start[f], column_start[f + 1]):
            if number[row[p]] >= 0:
                count += 1
        kept[f + 1] = count
    for f in range(n_features):
        kept[f + 1] += kept[f]
    out_start[:] = kept
    for f in prange(n_features):
        q = kept[f]
        for p in range(column_start[f], column_start[f + 1]):
            i = number[row[p]]
            if i >= 0:
                out_row[q] = i
                out_value[q] = value[p]
                q += 1
    return kept[n_features]


@jit
def open_entries(data, local):
    """``data`` with the stored values of the closed samples (``local[i] < 0``: in no open
    node) left out, each column's kept in order; samples keep their numbers. A deep tree's
    levels then cost the stored values of their open samples, not all of X's."""
    column_start = data.column_start
    row_of = data.row
    n_features = column_start.shape[0] - 1
    start = np.zeros(n_features + 1, dtype=np.int64)
    for f in range(n_features):
        count = 0
        for p in range(column_start[f], column_start[f + 1]):
            if local[row_of[p]] >= 0:
                count += 1
        start[f + 1] = start[f] + count
    n_kept = start[n_features]
    row = np.empty(n_kept, dtype=row_of.dtype)
    value = np.empty(n_kept, dtype=data.value.dtype)
    classified = data.entry_class.shape[0] > 0
    weight = np.empty(n_kept)
    entry_class = np.empty(n_kept if classified else 0, dtype=data.entry_class.dtype)
    entry_wy = np.empty(0 if classified else n_kept)
    q = 0
    for p in range(column_start[n_features]):
        if local[row_of[p]] >= 0:
            row[q] = row_of[p]
            value[q] = data.value[p]
            weight[q] = data.entry_weight[p]
            if classified:
                entry_class[q] = data.entry_class[p]
            else:
                entry_wy[q] = data.entry_wy[p]
            q += 1
    return SparseData(start, row, value, data.label, data.target, data.target_term,
                      data.sample_weight, data.is_regression, weight, entry_class, entry_wy,
                      data.weighted, data.whole)


@jit
def by_rows(data, n_samples):
    """The stored values of ``data`` row by row: ``(start, feature, value)``, row i's at
    ``start[i]:start[i + 1]`` (features increasing); empty arrays for ``n_samples`` 0."""
    column_start = data.column_start
    row_of = data.row
    n_features = column_start.shape[0] - 1
    if n_samples == 0:
        return (np.zeros(1, dtype=np.int64), np.empty(0, dtype=np.int32), np.empty(0))
    start = np.zeros(n_samples + 1, dtype=np.int64)
    for p in range(column_start[n_features]):
        start[row_of[p] + 1] += 1
    for i in range(n_samples):
        start[i + 1] += start[i]
    feature = np.empty(column_start[n_features], dtype=np.int32)
    value = np.empty(column_start[n_features])
    fill = start[:n_samples].copy()
    for f in range(n_features):
        for p in range(column_start[f], column_start[f + 1]):
            i = row_of[p]
            feature[fill[i]] = f
            value[fill[i]] = data.value[p]
            fill[i] += 1
    return start, feature, value


@jit(inline="always")
def column_extremes(data, f, k, local):
    """The number of stored values of the open node k (``local``) on feature f, and their
    smallest and largest (0.0 when none); reads column f."""
    row_of = data.row
    value_of = data.value
    count = 0
    low = 0.0
    high = 0.0
    for p in range(data.column_start[f], data.column_start[f + 1]):
        if local[row_of[p]] == k:
            v = np.float64(value_of[p])
            if count == 0:
                low = v
            high = v  # values increase along the column
            count += 1
    return count, low, high


NodeDraws = namedtuple("NodeDraws", [
    # the features each open node of a level drew (:func:`draw_features`), node k's:
    "count",    # (m,) int64: how many
    "feature",  # (m, max_features) int64: which, increasing (the first count[k])
    # what the searches need of them (the random splitter's thresholds, the sizes of the
    # best splitter's groups):
    "low",      # (m, max_features) float64: the node's smallest stored value on each
    "high",     # (m, max_features) float64: its largest
    "stored",   # (m, max_features) int64: its number of stored values on each
    "on_rows",  # (r,) int64: the nodes searched on their samples' rows (in no column pass:
                # :func:`random_rows`, :func:`best_rows`), increasing
])


@jit
def no_draws():
    """The :class:`NodeDraws` of a level whose nodes search every feature."""
    return NodeDraws(np.empty(0, dtype=np.int64), np.empty((0, 0), dtype=np.int64),
                     np.empty((0, 0)), np.empty((0, 0)), np.empty((0, 0), dtype=np.int64),
                     np.empty(0, dtype=np.int64))


_COLUMN_STEP = 8.0  # a step of the draw on columns costs about as much as this many
#                    stored values of a node's rows, besides its column's length


@jit(inline="always")
def _node_features(rows, members, member_start, k, n_node, scratch):
    """Node k's stored values on each feature, read from its samples' rows: for every
    feature with some (``touched[:n_touched]``), their count (``stored``), smallest and
    largest (``low``, ``high``) and whether the feature varies in the node (``varies``).
    Returns ``(n_touched, n_varying, n_entries)``, the last the node's stored values."""
    row_start, row_feature, row_value = rows
    stored, low, high, varies, touched, _, _, _ = scratch
    n_touched = 0
    n_varying = 0
    n_entries = 0
    for r in range(member_start[k], member_start[k + 1]):
        i = members[r]
        n_entries += row_start[i + 1] - row_start[i]
        for q in range(row_start[i], row_start[i + 1]):
            f = row_feature[q]
            v = row_value[q]
            if stored[f] == 0:
                touched[n_touched] = f
                n_touched += 1
                low[f] = v
                high[f] = v
            else:
                low[f] = min(low[f], v)
                high[f] = max(high[f], v)
            stored[f] += 1
    for t in range(n_touched):
        f = touched[t]
        if stored[f] < n_node or low[f] < high[f]:
            varies[f] = 1
            n_varying += 1
    return n_touched, n_varying, n_entries


@jit
def draw_features(data, n_data_rows, rows, local, seed, ids, node_count, members,
                  member_start, max_features, scratch):
    """The features each open node (id ``ids[k]``, samples ``members[member_start[k]:
    member_start[k + 1]]``; ``data`` holds the stored values of ``n_data_rows`` samples)
    searches, as :func:`~jitree.kernels.select.select_features` draws them: those that vary
    in it of the features the Fisher-Yates permutation of the stream of (seed, node) visits
    until :func:`~jitree.kernels.select.draw_done`. Returns ``((feature, start, node,
    slot), draws)``: the features searched on their columns, increasing, and the nodes
    that search them there, ``node[start[q]:start[q + 1]]``, increasing (``slot``: the
    feature's place among the node's), and every node's :class:`NodeDraws`. ``scratch``:
    the arrays of :func:`draw_scratch`, made once per tree and left as they were found (a
    wide X's levels would otherwise each cost n_features, deep trees thousands of levels).

    Per node, the cheaper of two ways that draw the same features, the permutation's
    features checked either on the stored values of the node's samples (``rows``:
    :func:`by_rows`; the features that vary in it marked once, none a walk: the node stays
    a leaf), or (a node of many samples) each on its column (:func:`column_extremes`): the
    draw then reads about ``max_features`` columns, not the node's every stored value. The
    choice is made on an estimate of the features that vary; a walk on columns whose reads
    outgrow the node's stored values goes on from its rows (text-like X, where most
    features are rare, varies in far fewer features than the node has stored values).

    Either way the node's smallest and largest stored value and their count on each
    feature it draws are at hand, and kept: all the random splitter's thresholds need (its
    column search then reads each column once), and the sizes of the node's groups. A node
    drawn from its rows is then searched on them (:func:`random_rows`, :func:`best_rows`)
    when its stored values are fewer than those of its drawn features' columns, which a
    column pass reads whole: the small nodes of a deep tree's levels."""
    n_features = data.column_start.shape[0] - 1
    m = ids.shape[0]
    column_mean = data.column_start[n_features] / max(1, n_features)
    draws = NodeDraws(np.zeros(m, dtype=np.int64), np.empty((m, max_features), dtype=np.int64),
                      np.empty((m, max_features)), np.empty((m, max_features)),
                      np.empty((m, max_features), dtype=np.int64), np.empty(m, dtype=np.int64))
    chosen = draws.feature
    in_columns = np.ones(m, dtype=np.uint8)
    n_on_rows = 0
    # stored: per feature, its stored values in the current node (0 between nodes); varies:
    # 0 between nodes; order: the identity between nodes (each walk undoes its swaps,
    # ``picks``, so that a node costs the steps it takes, not n_features)
    stored, low, high, varies, touched, order, picks, _ = scratch
    # the stored values per sample of ``data`` (each of its columns holds the samples of
    # the open nodes and some closed ones): a node's stored values are estimated from its
    # sample count (counting them costs a pass over its samples at every level)
    row_mean = data.column_start[n_features] / max(1, n_data_rows)
    for k in range(m):
        n_node = node_count[k]
        entries = n_node * row_mean
        # the varying features are at most the node's stored values; the walk visits
        # max_features features, more while none of them varies (about n_features / V steps
        # to meet one of V varying features), each reading a column
        bound = max(1, min(n_features, entries))
        steps = max(max_features, n_features / bound)
        by_rows_now = entries <= steps * (_COLUMN_STEP + column_mean)
        count = 0
        n_touched = 0
        n_varying = 0
        n_entries = 0
        if by_rows_now:
            n_touched, n_varying, n_entries = _node_features(rows, members, member_start, k,
                                                             n_node, scratch)
        if not (by_rows_now and n_varying == 0):  # else the walk would take no feature
            key = stream_key(seed, ids[k], -1)
            steps = 0
            visited = 0
            column_reads = 0.0
            for step in range(n_features):
                if step % WALK_BATCH == 0:
                    walk_picks(key, step, n_features, picks)
                pick = picks[step]  # as permutation_step
                order[step], order[pick] = order[pick], order[step]
                steps = step + 1
                f = order[step]
                if not by_rows_now:
                    column_reads += _COLUMN_STEP + (data.column_start[f + 1]
                                                    - data.column_start[f])
                    if column_reads > entries:
                        # the estimate was low (fewer features vary than it assumed): the
                        # rest of the walk reads the node's rows. The features taken so far
                        # vary there too, with the same extremes and counts.
                        for t in range(n_touched):
                            stored[touched[t]] = 0
                        by_rows_now = True
                        n_touched, n_varying, n_entries = _node_features(
                            rows, members, member_start, k, n_node, scratch)
                        if n_varying == 0:
                            break
                if by_rows_now:
                    taken = varies[f] == 1
                else:
                    n_stored, low[f], high[f] = column_extremes(data, f, k, local)
                    taken = n_stored > 0 and (n_stored < n_node or low[f] < high[f])
                    if taken:
                        stored[f] = n_stored
                        touched[n_touched] = f
                        n_touched += 1
                visited += 1
                if taken:
                    chosen[k, count] = f
                    count += 1
                if draw_done(visited, count, max_features):
                    break
            for step in range(steps - 1, -1, -1):
                order[step], order[picks[step]] = order[picks[step]], order[step]
        chosen[k, :count].sort()
        draws.count[k] = count
        in_column_passes = 0
        for t in range(count):
            f = chosen[k, t]
            draws.low[k, t] = low[f]
            draws.high[k, t] = high[f]
            draws.stored[k, t] = stored[f]
            in_column_passes += data.column_start[f + 1] - data.column_start[f]
        if by_rows_now and n_entries <= in_column_passes:
            draws.on_rows[n_on_rows] = k
            n_on_rows += 1
            in_columns[k] = 0
        for t in range(n_touched):
            stored[touched[t]] = 0
            varies[touched[t]] = 0
    # (feature, node) pairs ordered by feature, nodes increasing within each (stable sort)
    n_pairs = 0
    for k in range(m):
        if in_columns[k]:
            n_pairs += draws.count[k]
    pair_feature = np.empty(n_pairs, dtype=np.int64)
    pair_node = np.empty(n_pairs, dtype=np.int64)
    pair_slot = np.empty(n_pairs, dtype=np.int64)
    q = 0
    for k in range(m):
        if not in_columns[k]:
            continue
        for t in range(draws.count[k]):
            pair_feature[q] = chosen[k, t]
            pair_node[q] = k
            pair_slot[q] = t
            q += 1
    by_feature = np.argsort(pair_feature, kind="mergesort")
    feature = np.empty(n_pairs, dtype=np.int64)
    start = np.zeros(n_pairs + 1, dtype=np.int64)
    node = np.empty(n_pairs, dtype=np.int64)
    slot = np.empty(n_pairs, dtype=np.int64)
    n_drawn = 0
    for q in range(n_pairs):
        f = pair_feature[by_feature[q]]
        if n_drawn == 0 or feature[n_drawn - 1] != f:
            feature[n_drawn] = f
            start[n_drawn] = q
            n_drawn += 1
        node[q] = pair_node[by_feature[q]]
        slot[q] = pair_slot[by_feature[q]]
    start[n_drawn] = n_pairs
    draws = NodeDraws(draws.count, chosen, draws.low, draws.high, draws.stored,
                      draws.on_rows[:n_on_rows])
    return (feature[:n_drawn], start[:n_drawn + 1], node, slot), draws


@jit
def draw_scratch(n_features):
    """The work arrays of :func:`draw_features` (and :func:`random_rows`: the last, each
    feature's slot, -1 between nodes) in the state they leave them."""
    return (np.zeros(n_features, dtype=np.int64), np.zeros(n_features), np.zeros(n_features),
            np.zeros(n_features, dtype=np.uint8), np.empty(n_features, dtype=np.int64),
            np.arange(n_features), np.empty(n_features, dtype=np.int64),
            np.full(n_features, -1, dtype=np.int64))


@jit(inline="always")
def add_sample(data, i, stats, k, side):
    """Add sample i's statistics to ``stats[k, side]``; returns its weight. (The row is
    indexed here: a view ``stats[k]`` made per sample cost 25 times the loop around it.)"""
    w = data.sample_weight[i]
    if data.is_regression:
        y = data.target[i]
        stats[k, side, 0] += w * y
        if data.target_term.shape[0]:
            stats[k, side, 1] += w * data.target_term[i]
        else:
            stats[k, side, 1] += w * y * y
    else:
        stats[k, side, data.label[i]] += w
    return w


@jit(inline="always")
def add_sample_stats(data, i, stats, row):
    """Add sample i to the search statistics ``stats[row]`` as :func:`add_entry` adds a
    stored value of it; returns its weight."""
    w = data.sample_weight[i]
    if data.is_regression:
        stats[row, 0] += w * data.target[i]
    else:
        stats[row, data.label[i]] += w
    return w


@jit(inline="always")
def add_entry(data, p, stats, row):
    """Add the stored value p's sample to the search statistics ``stats[row]`` (class
    weights, or the sum of w y: all the scans read); returns its weight."""
    w = data.entry_weight[p]
    if data.is_regression:
        stats[row, 0] += data.entry_wy[p]
    else:
        stats[row, data.entry_class[p]] += w
    return w


@jit(inline="always")
def split_score(settings, is_regression, left, node_stats, weight_left, weight_right, right,
                parent_entropy):
    """The dense scans' score of the split with left statistics ``left`` (``right`` is
    filled with the node's minus them)."""
    code = settings.criterion.code
    if is_regression:
        sum_left = left[0]
        sum_right = node_stats[0] - sum_left
        if code == criteria.POISSON:
            return criteria.poisson_score(sum_left, weight_left, sum_right, weight_right)
        return sum_left * sum_left / weight_left + sum_right * sum_right / weight_right
    for c in range(left.shape[0]):
        right[c] = node_stats[c] - left[c]
    if code == criteria.GINI:
        left_sq = 0.0
        right_sq = 0.0
        for c in range(left.shape[0]):
            left_sq += left[c] * left[c]
            right_sq += right[c] * right[c]
        return (left_sq * weight_right + right_sq * weight_left) / (weight_left * weight_right)
    return criteria.builtin_score(code, left, right, weight_left, weight_right, parent_entropy)


LevelNodes = namedtuple("LevelNodes", [
    "stats",    # (m, n_stats) float64: the statistics of each open node of the level
    "weight",   # (m,) float64
    "count",    # (m,) int64: its samples
    "entropy",  # (m,) float64: its entropy in bits (gain_ratio), else zeros
])

LevelBest = namedtuple("LevelBest", [
    # per block b of features and open node k, the best threshold found there
    "score",      # (blocks, m) float64, -inf: none
    "feature",    # (blocks, m) int64
    "threshold",  # (blocks, m) float64
])

ColumnGroups = namedtuple("ColumnGroups", [
    # a column's stored values grouped by open node (:func:`group_column`)
    "node_of",   # (longest column,) int64: the node of each stored value (-1: none)
    "value",     # (longest column,) float64: the groups' values, each group increasing
    "weight",    # (longest column,) float64: their samples' weights (weighted fits), or empty
    "label",     # (longest column,) int64: their classes (classification), or empty
    "amount",    # (longest column,) float64: their w y (regression), or empty
    "size",      # (m,) int64: node k's group is start[k]:start[k] + size[k]
    "start",     # (m,) int64
    "negative",  # (m,) int64: of which the first negative[k] are negative
    "fill",      # (m,) int64: work
])


@jit
def longest_column(column_start):
    """The number of stored values of the longest column."""
    longest = 0
    for f in range(column_start.shape[0] - 1):
        longest = max(longest, column_start[f + 1] - column_start[f])
    return longest


@jit
def group_scratch(data, longest, m):
    """The work arrays of :func:`group_column` for ``m`` open nodes on columns of at most
    ``longest`` stored values."""
    classified = not data.is_regression
    return ColumnGroups(np.empty(longest, dtype=np.int64), np.empty(longest),
                        np.empty(longest if data.weighted else 0),
                        np.empty(longest if classified else 0, dtype=np.int64),
                        np.empty(0 if classified else longest),
                        np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64),
                        np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64))


@pjit
def search_level(data, settings, measure, nodes, local, ids, n_blocks, drawn, draws, best):
    """The best threshold of each open node of a level (:class:`LevelNodes`; ``local[i]``:
    the open node of sample i, -1 for none) over every feature, in parallel over blocks of
    features; block b writes its best per node into row b of ``best`` (a
    :class:`LevelBest`). ``settings``: the :func:`~jitree.kernels.split.plain_settings` of
    the criterion ``measure``. ``drawn``: ``(feature, start, node, slot)`` of
    :func:`draw_features` (feature ``feature[q]`` is searched at the nodes
    ``node[start[q]:start[q + 1]]``; the blocks are ranges of ``feature``), or four empty
    arrays: every node searches every feature; ``draws``: the level's :class:`NodeDraws`.

    Each column's stored values are first grouped by node (:func:`group_column`: two
    sequential passes), then each node's group is scanned on its own (:func:`scan_group`),
    its sides' sums in registers: the positive values from the largest down, adding up the
    right side (a candidate's left side is the node minus it), then the negative values
    from the smallest up, adding up the left side; the candidates on either side of the zero
    run come last. Candidates are met out of threshold order, so a tie goes to the lower
    threshold explicitly (:func:`consider`).

    The random splitter (``settings.random_splitter``) draws one threshold per node and
    feature instead, from the node's smallest and largest value (zero included when the
    node has zeros there) and the stream of (seed, node id ``ids[k]``, feature), as the dense
    :func:`~jitree.kernels.split.random_cut` does (:func:`random_columns`)."""
    column_start = data.column_start
    n_features = column_start.shape[0] - 1
    m = nodes.weight.shape[0]
    n_stats = nodes.stats.shape[1]
    drawn_feature, drawn_start, drawn_node, _ = drawn
    restricted = drawn_start.shape[0] > 0
    n_searched = drawn_feature.shape[0] if restricted else n_features
    random_splitter = settings.random_splitter
    longest = 0 if random_splitter else longest_column(column_start)
    fast_gini = measure.code == criteria.GINI and not data.is_regression
    for b in prange(n_blocks):
        settings_in = with_measure(settings, measure)
        limits = (settings.min_samples_leaf, settings.min_weight_leaf)
        seen = np.full(m, -1, dtype=np.int64)
        touched = np.empty(m, dtype=np.int64)
        searched = np.full(m if restricted else 0, -1, dtype=np.int64)
        # the sides of the node and feature at hand: (left, right, a side's complement,
        # work)
        work = (np.empty(n_stats), np.empty(n_stats), np.empty(n_stats), np.empty(n_stats))
        group = group_scratch(data, longest, m)
        # the random splitter, per node: the side away from the zero run (statistics,
        # weight, count), the smallest and largest values (then the drawn threshold)
        sides = (np.zeros((m if random_splitter else 0, n_stats)), np.zeros(m),
                 np.zeros(m, dtype=np.int64), np.zeros(m), np.zeros(m))
        first = b * n_searched // n_blocks
        end = (b + 1) * n_searched // n_blocks
        if random_splitter:
            random_columns(data, settings, measure, nodes, local, ids, drawn, draws, first, end,
                           b, searched, seen, touched, sides, work[2], work[3], best)
            continue
        for j in range(first, end):
            f = drawn_feature[j] if restricted else j
            if restricted:
                for q in range(drawn_start[j], drawn_start[j + 1]):
                    searched[drawn_node[q]] = f
            n_touched = group_column(data, f, local, restricted, searched, seen, touched,
                                     group)
            for t in range(n_touched):
                scan_group(data, settings_in, limits, nodes, touched[t], f, b, group, work,
                           best, fast_gini)


@jit
def random_columns(data, settings, measure, nodes, local, ids, drawn, draws, first_searched,
                   end_searched, b, searched, seen, touched, sides, side, scratch, best):
    """The random splitter's threshold of each open node on each feature it searches among
    ``first_searched:end_searched`` of those of :func:`search_level` (``drawn``, ``draws``),
    into row b of ``best`` when it beats the node's best there: drawn from the node's
    smallest and largest value (zero included when the node has zeros there) and the stream
    of (seed, node id ``ids[k]``, f), as the dense :func:`~jitree.kernels.split.random_cut`
    does; one pass over the column adds up the side away from the zero run. The extremes
    are the draw's (:class:`NodeDraws`), or, when every node searches every feature, a
    first pass finds them. ``sides``: per node work arrays (the side's statistics, weight
    and count, the smallest and largest value)."""
    drawn_feature, drawn_start, drawn_node, drawn_slot = drawn
    restricted = drawn_start.shape[0] > 0
    away, away_weight, away_count, cut, largest = sides
    row_of = data.row
    value_of = data.value
    node_count = nodes.count
    for j in range(first_searched, end_searched):
        f = drawn_feature[j] if restricted else j
        first = data.column_start[f]
        end = data.column_start[f + 1]
        n_touched = 0
        if restricted:
            for q in range(drawn_start[j], drawn_start[j + 1]):
                k = drawn_node[q]
                t = drawn_slot[q]
                searched[k] = f
                touched[n_touched] = k
                n_touched += 1
                cut[k] = random_threshold(draws.low[k, t], draws.high[k, t],
                                          node_count[k] > draws.stored[k, t],
                                          stream_key(settings.seed, ids[k], f))
                away[k, :] = 0.0
                away_weight[k] = 0.0
                away_count[k] = 0
        else:
            # the node's first and last stored values are its smallest and largest
            for p in range(first, end):
                k = local[row_of[p]]
                if k < 0:
                    continue
                v = np.float64(value_of[p])
                if seen[k] != f:
                    seen[k] = f
                    touched[n_touched] = k
                    n_touched += 1
                    away[k, :] = 0.0
                    away_weight[k] = 0.0
                    away_count[k] = 0
                    cut[k] = v
                largest[k] = v
                away_count[k] += 1
            for t in range(n_touched):
                k = touched[t]
                # NaN: the feature is constant in the node
                cut[k] = random_threshold(cut[k], largest[k], node_count[k] > away_count[k],
                                          stream_key(settings.seed, ids[k], f))
                away_count[k] = 0
        for p in range(first, end):
            k = local[row_of[p]]
            if k < 0 or (restricted and searched[k] != f):
                continue
            c = cut[k]
            v = value_of[p]
            # the side away from the zero run: the stored values above a cut at or above
            # zero (right), below one under zero (left)
            if (c >= 0.0 and v > c) or (c < 0.0 and v <= c):
                away_weight[k] += add_entry(data, p, away, k)
                away_count[k] += 1
        for t in range(n_touched):
            k = touched[t]
            judge_cut(data, settings, measure, nodes, k, f, b, cut[k], away[k], away_weight[k],
                      away_count[k], side, scratch, best)


@jit(inline="always")
def judge_cut(data, settings, measure, nodes, k, f, b, cut, away, away_weight, away_count,
              side, scratch, best):
    """Node k's random threshold ``cut`` on feature f (NaN: none), whose side away from the
    zero run holds ``away`` (statistics), ``away_weight`` and ``away_count``: scored as the
    dense random scan scores it (:func:`~jitree.kernels.categorical.sides_score`) and kept
    in row b of ``best`` when it beats the node's best there (a tie keeps the earlier
    feature). ``side``, ``scratch``: vectors of the statistics' size."""
    if cut != cut:
        return
    count = nodes.count[k]
    if cut >= 0.0:
        complement(nodes.stats[k], away, side)
        weight_left = nodes.weight[k] - away_weight
        count_left = count - away_count
    else:
        side[:] = away
        weight_left = away_weight
        count_left = away_count
    weight_right = nodes.weight[k] - weight_left
    if not (child_allowed(count_left, weight_left, settings.min_samples_leaf,
                          settings.min_weight_leaf)
            and child_allowed(count - count_left, weight_right, settings.min_samples_leaf,
                              settings.min_weight_leaf)):
        return
    for c in range(side.shape[0]):
        scratch[c] = nodes.stats[k, c] - side[c]
    score = sides_score(measure, data.is_regression, side, scratch, weight_left, weight_right,
                        nodes.entropy[k])
    if score > best.score[b, k]:
        keep(best, b, k, f, score, cut)


Buckets = namedtuple("Buckets", [
    # a node's stored values on each feature it drew, feature by feature (the t-th drawn
    # feature's at start[t]:start[t + 1]): :func:`fill_buckets`
    "start",   # (max_features + 1,) int64
    "fill",    # (max_features,) int64: work
    "value",   # (the most a node of the level holds,) float64
    "sample",  # int64: the sample of each
])


@jit
def bucket_scratch(draws):
    """:class:`Buckets` large enough for every node of ``draws.on_rows``, and the most
    stored values a node has on one feature."""
    longest = 0
    most = 0
    for k in draws.on_rows:
        total = 0
        for t in range(draws.count[k]):
            longest = max(longest, draws.stored[k, t])
            total += draws.stored[k, t]
        most = max(most, total)
    width = draws.feature.shape[1]
    return Buckets(np.empty(width + 1, dtype=np.int64), np.empty(width, dtype=np.int64),
                   np.empty(most), np.empty(most, dtype=np.int64)), longest


@jit(inline="always")
def fill_buckets(draws, k, rows, members, member_start, slot, buckets):
    """Put node k's stored values on each feature it drew (``draws``, a
    :class:`NodeDraws`) in that feature's bucket, in increasing sample order, in one pass
    over its samples' rows (``rows``: :func:`by_rows`; its samples are
    ``members[member_start[k]:member_start[k + 1]]``). ``slot``: -1 per feature, left so."""
    row_start, row_feature, row_value = rows
    start = buckets.start
    fill = buckets.fill
    count = draws.count[k]
    start[0] = 0
    for t in range(count):
        slot[draws.feature[k, t]] = t
        fill[t] = start[t]
        start[t + 1] = start[t] + draws.stored[k, t]
    for r in range(member_start[k], member_start[k + 1]):
        i = members[r]
        for q in range(row_start[i], row_start[i + 1]):
            t = slot[row_feature[q]]
            if t < 0:
                continue
            e = fill[t]
            fill[t] = e + 1
            buckets.value[e] = row_value[q]
            buckets.sample[e] = i
    for t in range(count):
        slot[draws.feature[k, t]] = -1


@jit
def random_rows(data, settings, measure, nodes, ids, rows, members, member_start, draws, slot,
                best):
    """The random splitter's threshold of each node of ``draws.on_rows`` (a
    :class:`NodeDraws`) on each feature it drew, into row 0 of ``best`` (these nodes are in
    no column pass): what :func:`random_columns` finds, read from the node's samples' rows
    (:func:`fill_buckets`). The thresholds come from the draw's smallest and largest values
    and counts. The side away from the zero run is added up in the column's order: each
    bucket sorted by value (:func:`sort_bucket`), unless the sums are exact in any order
    (``data.whole``). ``slot``: -1 per feature, left so."""
    n_stats = nodes.stats.shape[1]
    buckets, _ = bucket_scratch(draws)
    away = np.empty((1, n_stats))
    side = np.empty(n_stats)
    scratch = np.empty(n_stats)
    for k in draws.on_rows:
        fill_buckets(draws, k, rows, members, member_start, slot, buckets)
        for t in range(draws.count[k]):
            f = draws.feature[k, t]
            cut = random_threshold(draws.low[k, t], draws.high[k, t],
                                   nodes.count[k] > draws.stored[k, t],
                                   stream_key(settings.seed, ids[k], f))
            first = buckets.start[t]
            end = buckets.start[t + 1]
            if not data.whole:
                sort_bucket(buckets.value, buckets.sample, first, end)
            away[0, :] = 0.0
            away_weight = 0.0
            away_count = 0
            for e in range(first, end):
                v = buckets.value[e]
                # the side away from the zero run (see random_columns)
                if (cut >= 0.0 and v > cut) or (cut < 0.0 and v <= cut):
                    away_weight += add_sample_stats(data, buckets.sample[e], away, 0)
                    away_count += 1
            judge_cut(data, settings, measure, nodes, k, f, 0, cut, away[0], away_weight,
                      away_count, side, scratch, best)


@jit
def best_rows(data, settings, measure, nodes, rows, members, member_start, draws, slot, best):
    """The best splitter's candidates of each node of ``draws.on_rows`` (a
    :class:`NodeDraws`) on each feature it drew, into row 0 of ``best`` (these nodes are in
    no column pass): what :func:`group_column` and :func:`scan_group` find, read from the
    node's samples' rows (:func:`fill_buckets`): each bucket, sorted by value
    (:func:`sort_bucket`, stable, of samples met in increasing order: the column's order), is
    the node's group on the feature, scanned as a column pass scans it. ``slot``: -1 per
    feature, left so."""
    n_stats = nodes.stats.shape[1]
    settings_in = with_measure(settings, measure)
    limits = (settings.min_samples_leaf, settings.min_weight_leaf)
    fast_gini = measure.code == criteria.GINI and not data.is_regression
    work = (np.empty(n_stats), np.empty(n_stats), np.empty(n_stats), np.empty(n_stats))
    buckets, longest = bucket_scratch(draws)
    group = group_scratch(data, longest, nodes.count.shape[0])
    for k in draws.on_rows:
        fill_buckets(draws, k, rows, members, member_start, slot, buckets)
        for t in range(draws.count[k]):
            f = draws.feature[k, t]
            first = buckets.start[t]
            n_values = buckets.start[t + 1] - first
            sort_bucket(buckets.value, buckets.sample, first, first + n_values)
            n_negative = 0
            for u in range(n_values):
                v = buckets.value[first + u]
                i = buckets.sample[first + u]
                group.value[u] = v
                if v < 0:
                    n_negative += 1
                if data.weighted:
                    group.weight[u] = data.sample_weight[i]
                if data.is_regression:
                    group.amount[u] = data.sample_weight[i] * data.target[i]
                else:
                    group.label[u] = data.label[i]
            group.start[k] = 0
            group.size[k] = n_values
            group.negative[k] = n_negative
            scan_group(data, settings_in, limits, nodes, k, f, 0, group, work, best, fast_gini)


@jit(inline="always")
def sort_bucket(value, sample, first, end):
    """Sort ``value[first:end]`` increasingly in place, ``sample`` along, equal values kept
    in their order: by insertion (a small node's bucket holds a few values), or a stable
    argsort for a long one."""
    if end - first > 32:
        order = np.argsort(value[first:end], kind="mergesort")
        sorted_value = value[first:end][order]
        sorted_sample = sample[first:end][order]
        value[first:end] = sorted_value
        sample[first:end] = sorted_sample
        return
    for u in range(first + 1, end):
        v = value[u]
        i = sample[u]
        w = u
        while w > first and value[w - 1] > v:
            value[w] = value[w - 1]
            sample[w] = sample[w - 1]
            w -= 1
        value[w] = v
        sample[w] = i


@borrowing
def group_column(data, f, local, restricted, searched, seen, touched, group):
    """Group column f's stored values by open node, for the nodes that search f: returns the
    number n of nodes met (``touched[:n]``, in order of first value; ``seen[k] == f`` marks
    them), and fills the :class:`ColumnGroups` ``group``: node k's stored values, their
    weights and classes (or w y) at ``start[k]:start[k] + size[k]``, increasing, the
    ``negative[k]`` negative ones first. Two passes over the column, both in its order: each
    value's node and the groups' sizes, then the copies."""
    node_of = group.node_of
    size = group.size
    fill = group.fill
    first = data.column_start[f]
    end = data.column_start[f + 1]
    row_of = data.row
    value_of = data.value
    # the first positive value (values increase; no stored zero)
    low = first
    high = end
    while low < high:
        middle = (low + high) // 2
        if value_of[middle] > 0:
            high = middle
        else:
            low = middle + 1
    positive = low
    n_touched = 0
    for p in range(first, end):
        k = local[row_of[p]]
        if k >= 0 and restricted and searched[k] != f:
            k = -1
        node_of[p - first] = k
        if k < 0:
            continue
        if seen[k] != f:
            seen[k] = f
            touched[n_touched] = k
            n_touched += 1
            size[k] = 0
        size[k] += 1
    offset = 0
    for t in range(n_touched):
        k = touched[t]
        group.start[k] = offset
        fill[k] = offset
        offset += size[k]
    weighted = data.weighted
    classified = not data.is_regression
    # the negative values, then the positive ones
    for side in range(2):
        for p in range(first, positive) if side == 0 else range(positive, end):
            k = node_of[p - first]
            if k < 0:
                continue
            q = fill[k]
            fill[k] = q + 1
            group.value[q] = value_of[p]
            if weighted:
                group.weight[q] = data.entry_weight[p]
            if classified:
                group.label[q] = data.entry_class[p]
            else:
                group.amount[q] = data.entry_wy[p]
        if side == 0:
            for t in range(n_touched):
                k = touched[t]
                group.negative[k] = fill[k] - group.start[k]
    return n_touched


@borrowing
def scan_group(data, settings, limits, nodes, k, f, b, group, work, best, fast_gini):
    """Every candidate of open node k on feature f (its stored values: ``group``, a
    :class:`ColumnGroups`) into row b of ``best``: those between its stored values
    (:func:`gini_group` for gini, else :func:`plain_group`), then those beside the zero run
    (or between the negative and the positive values of a node without zeros). ``work``:
    four vectors of the statistics' size."""
    left, right, side, scratch = work
    first = group.start[k]
    positive = first + group.negative[k]
    end = first + group.size[k]
    count = nodes.count[k]
    weight = nodes.weight[k]
    if fast_gini:
        weight_left, weight_right = gini_group(data, limits, nodes, k, f, b, group, first,
                                               positive, end, work, best)
    else:
        weight_left, weight_right = plain_group(data, settings, limits, nodes, k, f, b,
                                                group, first, positive, end, work, best)
    count_left = positive - first
    count_right = end - positive
    last_negative = group.value[positive - 1] if count_left > 0 else 0.0
    last_positive = group.value[positive] if count_right > 0 else 0.0
    n_zero = count - count_left - count_right
    is_regression = data.is_regression
    stats = nodes.stats[k]
    if count_left > 0 and n_zero > 0:
        consider(settings, is_regression, b, k, f, last_negative, 0.0, stats, weight, count,
                 left, weight_left, count_left, scratch, nodes.entropy[k], limits, best)
    if count_right > 0 and (n_zero > 0 or count_left > 0):
        below = 0.0 if n_zero > 0 else last_negative
        complement(stats, right, side)
        consider(settings, is_regression, b, k, f, below, last_positive, stats, weight, count,
                 side, weight - weight_right, count - count_right, scratch, nodes.entropy[k],
                 limits, best)


@borrowing(inline="always")
def plain_group(data, settings, limits, nodes, k, f, b, group, first, positive, end, work,
                best):
    """The candidates of node k on feature f between its stored values (``group[first:
    end]``, the negative ones before ``positive``), each scored by :func:`consider`. Leaves
    the positive values' statistics in ``work[1]`` (right), the negative values' in
    ``work[0]`` (left); returns their two weights."""
    left, right, side, scratch = work
    is_regression = data.is_regression
    weighted = data.weighted
    stats = nodes.stats[k]
    weight = nodes.weight[k]
    count = nodes.count[k]
    entropy = nodes.entropy[k]
    # positive values from the largest down: the right side adds up
    right[:] = 0.0
    weight_right = 0.0
    last = 0.0
    for q in range(end - 1, positive - 1, -1):
        v = group.value[q]
        if q < end - 1 and v < last:
            complement(stats, right, side)
            consider(settings, is_regression, b, k, f, v, last, stats, weight, count, side,
                     weight - weight_right, count - (end - 1 - q), scratch, entropy, limits,
                     best)
        w = group.weight[q] if weighted else 1.0
        if is_regression:
            right[0] += group.amount[q]
        else:
            right[group.label[q]] += w
        weight_right += w
        last = v
    # negative values from the smallest up: the left side adds up
    left[:] = 0.0
    weight_left = 0.0
    for q in range(first, positive):
        v = group.value[q]
        if q > first and v > last:
            consider(settings, is_regression, b, k, f, last, v, stats, weight, count, left,
                     weight_left, q - first, scratch, entropy, limits, best)
        w = group.weight[q] if weighted else 1.0
        if is_regression:
            left[0] += group.amount[q]
        else:
            left[group.label[q]] += w
        weight_left += w
        last = v
    return weight_left, weight_right


@borrowing(inline="always")
def gini_group(data, limits, nodes, k, f, b, group, first, positive, end, work, best):
    """Gini's candidates of node k on feature f between its stored values, as
    :func:`plain_group` finds them, with the sums of squares of the two sides kept up to date
    per value (as the dense :func:`~jitree.kernels.split.scan_classification` does: with
    integer weights every sum is exact, so the scores are :func:`split_score`'s): the
    positive values from the largest down, then the negative ones from the smallest up
    (:func:`gini_run`). Leaves their statistics in ``work[1]`` and ``work[0]``; returns
    their two weights."""
    left, right, _, _ = work
    stats = nodes.stats[k]
    node_sq = 0.0
    for c in range(stats.shape[0]):
        node_sq += stats[c] * stats[c]
    weight_right = gini_run(data, limits, nodes, k, f, b, group, end - 1, positive - 1, -1,
                            right, node_sq, best)
    weight_left = gini_run(data, limits, nodes, k, f, b, group, first, positive, 1, left,
                           node_sq, best)
    return weight_left, weight_right


@borrowing(inline="always")
def gini_run(data, limits, nodes, k, f, b, group, start, stop, step, near, node_sq, best):
    """The candidates between node k's stored values ``group[start:stop:step]`` (one sign,
    moving away from zero): the near side (the values passed, from ``start``) adds up into
    ``near``, the far side is the node minus it. Returns the near side's weight. The score
    is symmetric in the two sides, so either direction gives the same bits."""
    min_samples_leaf, min_weight_leaf = limits
    weighted = data.weighted
    stats = nodes.stats[k]
    node_weight = nodes.weight[k]
    node_count = nodes.count[k]
    top = best.score[b, k]
    near[:] = 0.0
    near_sq = 0.0
    far_sq = node_sq
    weight_near = 0.0
    last = 0.0
    count_near = 0
    for q in range(start, stop, step):
        v = group.value[q]
        if count_near > 0 and v != last:  # values move away from zero: a new value
            weight_far = node_weight - weight_near
            count_far = node_count - count_near
            if (count_near >= min_samples_leaf and count_far >= min_samples_leaf
                    and weight_near > 0.0 and weight_far > 0.0
                    and weight_near >= min_weight_leaf and weight_far >= min_weight_leaf):
                score = ((far_sq * weight_near + near_sq * weight_far)
                         / (weight_far * weight_near))
                if score >= top:
                    threshold = midpoint(v, last) if step < 0 else midpoint(last, v)
                    if score > top or (best.feature[b, k] == f
                                       and threshold < best.threshold[b, k]):
                        keep(best, b, k, f, score, threshold)
                        top = score
        c = group.label[q]
        w = group.weight[q] if weighted else 1.0
        held = near[c]
        near_sq += w * (2.0 * held + w)
        far_sq += w * (w - 2.0 * (stats[c] - held))
        near[c] = held + w
        weight_near += w
        count_near += 1
        last = v
    return weight_near


@jit(inline="always")
def complement(node_stats, right, out):
    """out = the node's statistics minus the right side's: the left side."""
    for s in range(out.shape[0]):
        out[s] = node_stats[s] - right[s]


@jit(inline="always")
def consider(settings, is_regression, b, k, f, low, high, node_stats, node_weight, node_count,
             left, weight_left, count_left, right, parent_entropy, limits, best):
    """Score the candidate of node k on feature f between its values ``low`` and ``high``
    (left side: ``left``) and keep it in row b of ``best`` when better: a higher score, or an
    equal one of f at a lower threshold (the dense scan's tie rule; an equal score of an
    earlier feature stays)."""
    min_samples_leaf, min_weight_leaf = limits
    if count_left < min_samples_leaf or node_count - count_left < min_samples_leaf:
        return
    weight_right = node_weight - weight_left
    if weight_left <= 0.0 or weight_right <= 0.0:
        return
    if weight_left < min_weight_leaf or weight_right < min_weight_leaf:
        return
    score = split_score(settings, is_regression, left, node_stats, weight_left, weight_right,
                        right, parent_entropy)
    if not score >= best.score[b, k]:  # (NaN too)
        return
    threshold = midpoint(low, high)
    if score > best.score[b, k] or (best.feature[b, k] == f
                                    and threshold < best.threshold[b, k]):
        keep(best, b, k, f, score, threshold)


@jit(inline="always")
def keep(best, b, k, f, score, threshold):
    """Node k's best split in block b becomes this one."""
    best.score[b, k] = score
    best.feature[b, k] = f
    best.threshold[b, k] = threshold


@jit(inline="always")
def random_threshold(smallest, largest, has_zeros, key):
    """The random splitter's threshold of a node on a feature whose stored values there
    range from ``smallest`` to ``largest`` (and which has zeros there when ``has_zeros``):
    :func:`~jitree.kernels.split.random_cut`'s draw between the node's smallest and largest
    value; NaN when they are equal (a constant feature: no split)."""
    low = min(smallest, 0.0) if has_zeros else smallest
    high = max(largest, 0.0) if has_zeros else largest
    if not low < high:
        return np.nan
    return cut_between(low, high, key)


@jit
def grow_sparse(data, settings, root_stats, root_weight, n_blocks):
    """Grow one tree depth-wise on the :class:`SparseData` ``data`` (see the module
    docstring). Returns ``(nodes, count)``: the grower's :class:`NodeTable` (rows
    ``:count``)."""
    n_samples = data.sample_weight.shape[0]
    n_stats = root_stats.shape[0]
    n_features = data.column_start.shape[0] - 1
    is_regression = data.is_regression
    column_start = data.column_start
    row_of = data.row
    value_of = data.value
    nodes = reserve_nodes(new_node_table(node_capacity(n_samples, settings, n_stats, 0), n_stats,
                                         0), 0, 1)
    for s in range(n_stats):
        nodes.stats[0, s] = root_stats[s]
    nodes.floats[0, F_WEIGHT] = root_weight
    nodes.floats[0, F_IMPURITY] = criteria.node_impurity(settings.criterion, root_stats,
                                                         root_weight)
    nodes.ints[0, N_SAMPLES] = n_samples
    count = 1
    local = np.zeros(n_samples, dtype=np.int32)
    open_ids = np.zeros(1, dtype=np.int64)
    if not splittable(nodes, 0, settings, is_regression):
        return nodes, count
    stored_flag = np.zeros(n_samples, dtype=np.uint8)
    # the samples of the open nodes, increasing, how many each open node has (at k + 1),
    # and how many samples the stored values in ``data`` belong to
    open_rows = np.arange(n_samples)
    member_count = np.zeros(2, dtype=np.int64)
    member_count[1] = n_samples
    rows_in_data = n_samples
    drawing = settings.max_features < n_features
    rows = by_rows(data, n_samples if drawing else 0)
    scratch = draw_scratch(n_features if drawing else 0)
    while open_ids.shape[0] > 0:
        m = open_ids.shape[0]
        n_open_rows = open_rows.shape[0]
        if 2 * n_open_rows < rows_in_data:
            data = open_entries(data, local)
            column_start = data.column_start
            row_of = data.row
            value_of = data.value
            rows_in_data = n_open_rows
        node_stats = np.empty((m, n_stats))
        node_weight = np.empty(m)
        node_count = np.empty(m, dtype=np.int64)
        entropy = np.zeros(m)
        for k in range(m):
            node_stats[k, :] = nodes.stats[open_ids[k]]
            node_weight[k] = nodes.floats[open_ids[k], F_WEIGHT]
            node_count[k] = nodes.ints[open_ids[k], N_SAMPLES]
            if settings.criterion.code == criteria.GAIN_RATIO:
                entropy[k] = criteria.entropy(node_stats[k], node_weight[k])
        # the samples of each open node, in increasing index (children's statistics are
        # summed in the dense loop's order)
        for k in range(m):
            member_count[k + 1] += member_count[k]
        members = np.empty(member_count[m], dtype=np.int64)
        fill = member_count[:m].copy()
        for i in open_rows:  # increasing
            k = local[i]
            members[fill[k]] = i
            fill[k] += 1
        drawn = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64),
                 np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
        draws = no_draws()
        if drawing:
            drawn, draws = draw_features(data, rows_in_data, rows, local, settings.seed,
                                         open_ids, node_count, members, member_count,
                                         settings.max_features, scratch)
        # the features searched on their columns (none when every node is searched on its
        # rows), at least 8 a block (each block makes its own work arrays)
        n_searched = drawn[0].shape[0] if drawing else n_features
        blocks = max(1, min(n_blocks, n_searched // 8))
        best = LevelBest(np.full((blocks, m), -np.inf),
                         np.full((blocks, m), -1, dtype=np.int64), np.zeros((blocks, m)))
        level_nodes = LevelNodes(node_stats, node_weight, node_count, entropy)
        if n_searched > 0:
            search_level(data, plain_settings(settings), settings.criterion, level_nodes,
                         local, open_ids, blocks, drawn, draws, best)
        if draws.on_rows.shape[0] > 0 and settings.random_splitter:
            random_rows(data, plain_settings(settings), settings.criterion, level_nodes,
                        open_ids, rows, members, member_count, draws, scratch[7], best)
        elif draws.on_rows.shape[0] > 0:
            best_rows(data, plain_settings(settings), settings.criterion, level_nodes, rows,
                      members, member_count, draws, scratch[7], best)
        # the best over blocks (increasing feature ranges: a strictly better score replaces,
        # so the lowest feature index wins a tie)
        chosen = np.full(m, -1, dtype=np.int64)
        threshold = np.zeros(m)
        for k in range(m):
            top = -np.inf
            for b in range(blocks):
                if best.feature[b, k] >= 0 and best.score[b, k] > top:
                    top = best.score[b, k]
                    chosen[k] = b
        # accepted splits, their children's statistics and impurity decrease
        split_feature = np.full(m, -1, dtype=np.int64)
        child_stats = np.zeros((m, 2, n_stats))
        child_weight = np.zeros((m, 2))
        child_count = np.zeros((m, 2), dtype=np.int64)
        for k in range(m):
            b = chosen[k]
            if b < 0:
                continue
            f = best.feature[b, k]
            t = best.threshold[b, k]
            threshold[k] = t
            if data.whole:
                # every sum is exact: the side of the zero run is the node minus the other
                # side, whose stored values are all this reads
                zero_side = 0 if 0.0 <= t else 1
                other = 1 - zero_side
                for p in range(column_start[f], column_start[f + 1]):
                    i = row_of[p]
                    if local[i] == k and (value_of[p] <= t) == (other == 0):
                        child_weight[k, other] += add_sample(data, i, child_stats, k, other)
                        child_count[k, other] += 1
                for s in range(n_stats):
                    child_stats[k, zero_side, s] = node_stats[k, s] - child_stats[k, other, s]
                child_weight[k, zero_side] = node_weight[k] - child_weight[k, other]
                child_count[k, zero_side] = node_count[k] - child_count[k, other]
            else:
                # negative stored values of the node, in increasing order
                for p in range(column_start[f], column_start[f + 1]):
                    i = row_of[p]
                    if local[i] != k:
                        continue
                    stored_flag[i] = 1
                    if value_of[p] < 0:
                        side = 0 if value_of[p] <= t else 1
                        child_weight[k, side] += add_sample(data, i, child_stats, k, side)
                        child_count[k, side] += 1
                side = 0 if 0.0 <= t else 1
                for r in range(member_count[k], member_count[k + 1]):
                    i = members[r]
                    if stored_flag[i] == 0:
                        child_weight[k, side] += add_sample(data, i, child_stats, k, side)
                        child_count[k, side] += 1
                for p in range(column_start[f], column_start[f + 1]):
                    i = row_of[p]
                    if local[i] != k:
                        continue
                    stored_flag[i] = 0
                    if value_of[p] > 0:
                        side = 0 if value_of[p] <= t else 1
                        child_weight[k, side] += add_sample(data, i, child_stats, k, side)
                        child_count[k, side] += 1
            node = open_ids[k]
            decrease = nodes.floats[node, F_IMPURITY]
            for c in range(2):
                impurity = criteria.node_impurity(settings.criterion, child_stats[k, c],
                                                  child_weight[k, c])
                decrease -= child_weight[k, c] / node_weight[k] * impurity
            improvement = node_weight[k] / root_weight * decrease
            if improvement + EPSILON >= settings.min_impurity_decrease:
                split_feature[k] = f
        # the children join the node table; the open ones get local numbers
        n_new = 0
        for k in range(m):
            if split_feature[k] >= 0:
                n_new += 2
        nodes = reserve_nodes(nodes, count, count + n_new)
        child_local = np.full((m, 2), -1, dtype=np.int64)
        next_open = np.empty(n_new, dtype=np.int64)
        n_open = 0
        for k in range(m):
            f = split_feature[k]
            if f < 0:
                continue
            parent = open_ids[k]
            for c in range(2):
                child = count + c
                for s in range(n_stats):
                    nodes.stats[child, s] = child_stats[k, c, s]
                nodes.floats[child, F_WEIGHT] = child_weight[k, c]
                nodes.floats[child, F_IMPURITY] = criteria.node_impurity(
                    settings.criterion, child_stats[k, c], child_weight[k, c])
                nodes.floats[child, F_LOWER] = nodes.floats[parent, F_LOWER]
                nodes.floats[child, F_UPPER] = nodes.floats[parent, F_UPPER]
                nodes.ints[child, N_SAMPLES] = child_count[k, c]
                nodes.ints[child, N_DEPTH] = nodes.ints[parent, N_DEPTH] + 1
            nodes.ints[parent, N_FEATURE] = f
            nodes.ints[parent, N_LEFT] = count
            nodes.ints[parent, N_RIGHT] = count + 1
            nodes.floats[parent, F_THRESHOLD] = threshold[k]
            nodes.ints[parent, N_SPLIT_KIND] = SPLIT_THRESHOLD
            # no missing value in training: they go to the heavier child
            nodes.ints[parent, N_MISSING_LEFT] = 1 if child_weight[k, 0] >= child_weight[k, 1] \
                else 0
            for c in range(2):
                if splittable(nodes, count + c, settings, is_regression):
                    child_local[k, c] = n_open
                    next_open[n_open] = count + c
                    n_open += 1
            count += 2
        # every sample moves to its child's local number (-1: a leaf): the stored values of
        # the split feature to their side (marked first, side + 1), the others to the child
        # of value 0; the open ones stay in open_rows, counted by node
        for k in range(m):
            f = split_feature[k]
            if f < 0:
                continue
            for p in range(column_start[f], column_start[f + 1]):
                i = row_of[p]
                if local[i] == k:
                    stored_flag[i] = 1 if value_of[p] <= threshold[k] else 2
        member_count = np.zeros(n_open + 1, dtype=np.int64)
        n_open_rows = 0
        for i in open_rows:  # increasing
            k = local[i]
            if split_feature[k] < 0:
                local[i] = -1
                continue
            side = stored_flag[i]
            if side == 0:
                child = child_local[k, 0 if 0.0 <= threshold[k] else 1]
            else:
                child = child_local[k, side - 1]
                stored_flag[i] = 0
            local[i] = child
            if child >= 0:
                open_rows[n_open_rows] = i
                n_open_rows += 1
                member_count[child + 1] += 1
        open_rows = open_rows[:n_open_rows]
        open_ids = next_open[:n_open].copy()
    return nodes, count
