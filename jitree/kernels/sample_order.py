"""Growth in sample order: the random splitter's (Extra-Trees), and the best splitter's on
wide X.

A random threshold needs, at each node and drawn feature, only the node's smallest and
largest non-missing value and the statistics of the samples at or below the draw: no sorted
order. This path keeps one list of the tree's samples grouped by node
(:class:`~jitree.kernels.records.SampleOrder`: each node's samples a segment, in increasing
sample index) and reads X at the node's samples: by row (X C-contiguous), or by column
(``SampleOrder.by_column``: X's transpose, C-contiguous) when the nodes draw few of the
features (:data:`FEW_FEATURES`; see :class:`jitree.model.builder.SampleX`), every read
through :func:`value_at`. A level partitions that one list (:func:`split_samples`), where
the presorted path (:func:`jitree.kernels.grow.partition`) moves every feature's sorted
segment.

The search goes node by node (:func:`find_node_splits`), in two passes over the node's
samples: every feature's range (:func:`node_ranges`, reading each sample's row once; or
only the features the draw visits, when it draws few of them), then, once the features are
drawn (the permutation walk of :func:`jitree.kernels.select.select_features`: those of
the features it visits that vary) and each one's threshold (from the same stream as the
presorted path's, :func:`jitree.kernels.split.cut_between`), every drawn feature's left
and missing statistics (:func:`node_sides`, in blocks of samples). Passes per (node,
feature) pair, each gathering the feature's column at the node's samples, took twice as
long (Extra-Trees classifier, 150k x 20, 1 thread: 470 against 245 ms a tree).

The trees are the presorted path's: the same features drawn, the same thresholds, the same
samples on each side. Only the order in which a side's statistics are added differs (here
by sample index, there by the feature's value): for class counts of integer weights the
sums are exact either way, so classifiers take this path only then
(:func:`jitree.model.builder.sample_order_growth`). Regression sums may differ in their
last bits: where two features split a node's samples alike (small nodes), their scores tie
up to those bits, and a regressor's tree may test the other feature there.

The best splitter takes this path when its nodes draw few of many features
(:func:`jitree.model.builder.sorting_pays`): the same walk draws the features, and as it
visits each one the node's values on it are read once and its samples sorted
(:func:`sorted_rows`, :func:`argsort_keys`; equal values in sample order, which is the
presorted segment's order), then searched by the presorted search's own code
(:func:`jitree.kernels.split.best_single_threshold`); the children are added up on the
winner's sorted samples as the presorted growth adds them (:func:`best_sorted`), so the
trees are the presorted growth's, for regressors and any weights too. A feature of two
values at the node (binary, one-hot, indicator columns), none missing, is not sorted: its
one candidate's sums are added up in the samples' order
(:func:`jitree.kernels.split.scan_two_valued`), the scan's sums to the bit.
"""

import math

import numpy as np
from numba import prange

from . import criteria
from ._jit import AHEAD, borrowing, jit, pjit, prefetch, retyped, serial_twin
from .categorical import (
    MISSING_LEFT,
    MISSING_RIGHT,
    NO_MISSING,
    inline_two_way_score,
    stable_argsort,
)
from .random import stream_key
from .records import Rows, SampleOrder, Side, TreeData
from .select import draw_done, undo_walk, walk_step
from .split import (
    ALL_VALUES,
    CODE_CLASSES,
    best_single_threshold,
    cut_between,
    feature_limits,
    midpoint,
    missing_only_score,
    missing_tail,
    scan_codes,
    scan_two_valued,
    with_measure,
)

# a node draws few features when it draws at most one in this many: it then reads only the
# features its walk visits (search_nodes), and X is held by column for it
# (jitree.model.builder.SampleX)
FEW_FEATURES = 4

# the best splitter's gather (gather_column) asks for the value this many samples on (a
# random forest on 20k x 300 binary features, 8 trees, 1 thread, two rounds of 3 fits:
# 0.34-0.35 and 0.40-0.43 s at 48, 0.36-0.40 and 0.42-0.43 s at AHEAD)
GATHER_AHEAD = 3 * AHEAD


@jit(inline="always")
def flat_x(X, by_column):
    """X as :class:`SampleOrder` holds it (by row, or by column: its transpose) as ``(values,
    sample_step, feature_step)``: its values in one array, sample i's value on feature f at
    ``i * sample_step + f * feature_step`` (:func:`value_at`). One multiply-add either way,
    as indexing X by row costs: a branch on the layout at each read cost the by-row growth
    15% (Extra-Trees regressors, every feature a node)."""
    values = X.reshape(-1)
    width = np.uint64(X.shape[1])
    if by_column:
        return values, np.uint64(1), width
    return values, width, np.uint64(1)


@jit(inline="always")
def index_of(flat, i, f):
    """Where sample ``i``'s value on feature ``f`` is in the :func:`flat_x` ``flat``'s
    values."""
    _, sample_step, feature_step = flat
    return np.uint64(i) * sample_step + np.uint64(f) * feature_step


@jit(inline="always")
def value_at(flat, i, f):
    """Sample ``i``'s value on feature ``f`` of the :func:`flat_x` ``flat``."""
    return flat[0][index_of(flat, i, f)]


@jit(inline="always")
def n_columns(X, by_column):
    """The number of features of X as :class:`SampleOrder` holds it."""
    return X.shape[0] if by_column else X.shape[1]


@jit(inline="always")
def column_range(flat, f, samples, start, end):
    """(smallest, largest, number) of the non-missing values of feature ``f`` at the samples
    ``samples[start:end]``; (inf, -inf, 0) when all are missing. Four samples a step, each
    into a range of its own, merged at the end (the smallest and largest are the same in
    any order): with one range, each sample's min and max waited for the previous sample's
    (Extra-Trees classifier, 150k x 20, 1 thread: this loop was 42% of the growth's
    samples in a perf profile, its time on the two chains of min and max)."""
    low_a = low_b = low_c = low_d = np.inf
    high_a = high_b = high_c = high_d = -np.inf
    count = 0
    k = np.uint64(start)  # unsigned: no wraparound fix-ups
    last = np.uint64(end)
    while k + np.uint64(4) <= last:
        a = np.float64(value_at(flat, samples[k], f))
        b = np.float64(value_at(flat, samples[k + np.uint64(1)], f))
        c = np.float64(value_at(flat, samples[k + np.uint64(2)], f))
        d = np.float64(value_at(flat, samples[k + np.uint64(3)], f))
        # NaN fails both tests and the count's
        low_a = a if a < low_a else low_a
        low_b = b if b < low_b else low_b
        low_c = c if c < low_c else low_c
        low_d = d if d < low_d else low_d
        high_a = a if a > high_a else high_a
        high_b = b if b > high_b else high_b
        high_c = c if c > high_c else high_c
        high_d = d if d > high_d else high_d
        count += (a == a) + (b == b) + (c == c) + (d == d)
        k += np.uint64(4)
    while k < last:
        a = np.float64(value_at(flat, samples[k], f))
        low_a = a if a < low_a else low_a
        high_a = a if a > high_a else high_a
        count += a == a
        k += np.uint64(1)
    return (min(min(low_a, low_b), min(low_c, low_d)),
            max(max(high_a, high_b), max(high_c, high_d)), count)


# samples per block of columns_range and node_sides: their rows stay in the first-level
# cache while every feature of the pass reads them
SIDE_BLOCK = 256


@borrowing(inline="always")
def columns_range(flat, features, n_features, samples, start, end, low, high, present):
    """:func:`column_range` of each of ``features[:n_features]`` into ``low[f]``,
    ``high[f]``, ``present[f]``, in one pass over the samples' rows: blocks of
    :data:`SIDE_BLOCK` samples, each read by every feature in turn with its running range in
    registers (as :func:`node_sides` reads them)."""
    for v in range(n_features):
        f = features[v]
        low[f] = np.inf
        high[f] = -np.inf
        present[f] = 0
    for first in range(start, end, SIDE_BLOCK):
        last = min(end, first + SIDE_BLOCK)
        for v in range(n_features):
            f = features[v]
            block_low, block_high, block_count = column_range(flat, f, samples, first, last)
            low[f] = min(low[f], block_low)
            high[f] = max(high[f], block_high)
            present[f] += block_count


@jit(inline="always")
def varies(low, high, count, n):
    """Whether a node of ``n`` samples whose feature has ``count`` non-missing values in
    ``[low, high]`` can be split on it: two distinct values, or a missing and a non-missing
    one (the test of :func:`jitree.kernels.select.select_features`)."""
    return (count >= 2 and low < high) or (count > 0 and count < n)


@pjit
def find_node_splits(data, order, settings, measure, nodes, allowed, out_feature, out_pos,
                     out_missing, out_threshold, out_children):
    """The search in sample order, node by node: for node j of the :class:`NodeBatch` ``nodes``,
    its best split's feature (-1: none), position (its start plus the non-missing samples going
    left), missing direction and threshold, into ``out_*[j]``; parallel over blocks of nodes.
    ``out_children[j]`` (an empty array for the random splitter's regressor) gets the split's
    children, left then right: their statistics, then their weight (see :func:`search_nodes`
    and :func:`best_sorted`). ``allowed``: the features each node may split on (see
    :func:`jitree.kernels.select.walk_step`). The results are those of
    :func:`jitree.kernels.select.select_features` and
    :func:`jitree.kernels.split.find_random_splits` (the best splitter:
    :func:`jitree.kernels.split.find_splits`) on the presorted arrays, followed by
    :func:`jitree.kernels.split.best_pair_per_node`. The best splitter's blocks hold the sorted
    rows of their largest node (:func:`sorted_rows`)."""
    m = nodes.id.shape[0]
    n_features = n_columns(order.X, order.by_column)
    n_stats = nodes.stats.shape[1]
    n_blocks = max(1, min(m, settings.n_blocks))
    exact = not settings.random_splitter
    # one prange loop (each is compiled as a function of its own); records and tuples are
    # made inside it: numba's parallel lowering takes only arrays and scalars into it
    for block in prange(n_blocks):
        first = block * m // n_blocks
        last = (block + 1) * m // n_blocks
        # left, right, missing (and, for the best splitter, 8 rows of scan_two_valued's)
        scratch = np.empty((11 if exact else 3, n_stats))
        out = (out_feature, out_pos, out_missing, out_threshold, out_children)
        if exact:
            walk = np.arange(n_features)  # each node's walk leaves it as it found it
            # the sorted rows (see sorted_rows), sized by the block's largest node
            size = 0
            for j in range(first, last):
                size = max(size, nodes.end[j] - nodes.start[j])
            key = np.empty(size)
            # (the positions' row one longer: see sorted_rows' partition)
            rows = ((key, key.view(np.uint64), np.empty(size, dtype=np.uint64),
                     np.empty(size + 1, dtype=np.int64), np.empty(size, dtype=np.int64),
                     np.empty((8, 256), dtype=np.int64)),
                    np.empty((2, size), dtype=np.int32), np.empty(size, dtype=order.X.dtype),
                    np.empty(size, dtype=order.X.dtype),
                    np.empty((2, size), dtype=data.label.dtype))
            search_sorted_nodes(data, order, with_measure(settings, measure), nodes, allowed,
                                first, last, (walk, scratch, rows), out)
        else:
            ints = np.empty((4, n_features), dtype=np.int64)   # walk, chosen, count, visits
            floats = np.empty((3, n_features))                 # low, high, threshold
            # left, missing; a spare slot (see node_sides)
            side_stats = np.empty((2, n_features + 1, n_stats))
            side_totals = np.empty((2, 2, n_features + 1))     # (weight, count) x side
            search_nodes(data, order, with_measure(settings, measure), nodes, allowed, first,
                         last, (ints, floats, side_stats, side_totals, scratch), out)


find_node_splits_serial = serial_twin(find_node_splits)


@borrowing
def search_nodes(data, order, settings, nodes, allowed, first, last, work, out):
    """The nodes ``first:last`` of :func:`find_node_splits` (``work``: the block's scratch).
    Per node: every feature's range in one pass over the rows (:func:`node_ranges`), or,
    when the node draws a quarter of the features or fewer, the ranges of the features the
    draw visits (trees of 150k x 20, 1 thread, 183-186 against 202-210 ms at 4 features a
    node, 195-204 against 190-193 ms at 6, 208-234 against 179-185 ms at 10, when each
    visited feature took a pass of its own). The walk's next ``max_features`` features are
    measured together in one pass (:func:`columns_range`: Extra-Trees classifier, 4 of 20
    features, 175-187 against 195-200 ms a tree): the draw's, or, while none of them
    varies, the next ones, of which it takes up to the first that does. Then, once the
    features are drawn and their thresholds, every drawn feature's left and missing
    statistics (:func:`node_sides`). Compiled without reference counting: the views and
    records made per node would be counted.

    A classifier's children come from the winning feature's sides: the left child's class
    weights are its non-missing side's plus, when missing values go left, their side's,
    and the right child's are the node's minus the left child's. Both are exact, as the
    class weights of this growth are whole numbers (see the module docstring), so they are
    the sums the partition would add (:func:`split_samples` then only moves the samples:
    that second pass over a node's samples took 6-13% of an Extra-Trees classifier's
    tree)."""
    ints, floats, side_stats, side_totals, scratch = work
    out_feature, out_pos, out_missing, out_threshold, out_children = out
    children = out_children.shape[0] > 0
    X = order.X
    by_column = order.by_column
    flat = flat_x(X, by_column)
    samples = order.samples
    n_features = n_columns(X, by_column)
    walk = ints[0]
    chosen = ints[1]
    present = ints[2]
    visit = ints[3]
    low = floats[0]
    high = floats[1]
    threshold = floats[2]
    is_regression = data.is_regression
    monotonic = settings.monotonic
    seed = settings.seed
    max_features = settings.max_features
    gain_ratio = settings.criterion.code == criteria.GAIN_RATIO
    full = settings.criterion.code >= criteria.USER_IMPURITY
    # a node that draws a quarter of the features or fewer measures the ranges of the
    # features its walk visits (:func:`columns_range`); the others measure every feature's
    # in one pass over the rows
    lazy = FEW_FEATURES * max_features <= n_features
    for j in range(first, last):
        start = nodes.start[j]
        end = nodes.end[j]
        n = end - start
        stats = nodes.stats[j]
        weight = nodes.weight[j]
        node = Side(stats, weight, n)
        parent_entropy = criteria.entropy(stats, weight) if gain_ratio else 0.0
        if not lazy:
            node_ranges(X, by_column, samples, start, end, low, high, present)
        # the features drawn: the walk of select_features (those of the features it
        # visits that vary), or every allowed one that varies
        count = 0
        if max_features < n_features:
            key = stream_key(seed, nodes.id[j], -1)
            for f in range(n_features):
                walk[f] = f
            step = 0
            visited = 0
            while not draw_done(visited, count, max_features) and step < n_features:
                # the walk's next allowed features: the max_features the node visits, then,
                # while none of them varies, as many again, of which the draw takes up to
                # the first that varies. The node measures their ranges together (one pass
                # over its rows).
                visits = 0
                while visits < max_features and step < n_features:
                    f = walk_step(key, step, walk, allowed, j)
                    step += 1
                    if f >= 0:
                        visit[visits] = f
                        visits += 1
                if lazy:
                    columns_range(flat, visit, visits, samples, start, end, low, high,
                                  present)
                for v in range(visits):
                    if draw_done(visited, count, max_features):
                        break  # measured beyond the draw's end
                    visited += 1
                    f = visit[v]
                    if not varies(low[f], high[f], present[f], n):
                        continue
                    t = count  # insertion in increasing feature order (the tie rule)
                    while t > 0 and chosen[t - 1] > f:
                        chosen[t] = chosen[t - 1]
                        t -= 1
                    chosen[t] = f
                    count += 1
        else:
            for f in range(n_features):
                if (allowed.shape[1] == 0 or allowed[j, f]) \
                        and varies(low[f], high[f], present[f], n):
                    chosen[count] = f
                    count += 1
        for t in range(count):
            f = chosen[t]
            threshold[t] = cut_between(low[f], high[f], stream_key(seed, nodes.id[j], f)) \
                if low[f] < high[f] else ALL_VALUES
        node_sides(data, flat, samples, start, end, chosen, count, threshold, present, full,
                   side_stats, side_totals)
        best_feature = -1
        best_score = -np.inf
        best_pos = 0
        best_missing = NO_MISSING
        best_cut = 0.0
        best_t = 0
        for t in range(count):
            f = chosen[t]
            n_missing = n - present[f]
            limits = feature_limits(monotonic, f, nodes.lower[j], nodes.upper[j])
            missing_side = Side(side_stats[1, t], side_totals[1, 0, t], n_missing)
            if not low[f] < high[f]:
                # every non-missing value is the same: the one split is value-or-missing
                score = missing_only_score(settings, is_regression, node, missing_side,
                                           parent_entropy, scratch[0], scratch[1], limits)
                pos = start + present[f]
                direction = MISSING_RIGHT
            else:
                n_left = np.int64(side_totals[0, 1, t])
                score, direction = inline_two_way_score(
                    settings, is_regression,
                    Side(side_stats[0, t], side_totals[0, 0, t], n_left), node, missing_side,
                    parent_entropy, scratch[0], scratch[1], limits)
                pos = start + n_left
            if score > -np.inf and (best_feature < 0 or score > best_score):
                best_feature = f
                best_score = score
                best_pos = pos
                best_missing = direction
                best_cut = threshold[t]
                best_t = t
        if children and best_feature >= 0:
            # missing values take their side's sums along (MISSING_LEFT) or not
            along = 1.0 if best_missing == MISSING_LEFT else 0.0
            n_stats = stats.shape[0]
            for s in range(n_stats):
                left = side_stats[0, best_t, s] + along * side_stats[1, best_t, s]
                out_children[j, 0, s] = left
                out_children[j, 1, s] = stats[s] - left
            left = side_totals[0, 0, best_t] + along * side_totals[1, 0, best_t]
            out_children[j, 0, n_stats] = left
            out_children[j, 1, n_stats] = weight - left
        out_feature[j] = best_feature
        out_pos[j] = best_pos
        out_missing[j] = best_missing
        out_threshold[j] = best_cut


RADIX_MIN = 256  # argsort_keys: fewer keys are merge-sorted (stable_argsort)
_SIGN = np.uint64(1) << np.uint64(63)
_MAGNITUDE = _SIGN - np.uint64(1)
_NAN_KEY = _SIGN + np.uint64(0x7FF8000000000000)  # above +inf's key, 51 zero bits
_BYTE = np.uint64(255)


@borrowing
def argsort_keys(keys, n):
    """The positions 0 .. n - 1 of ``key = keys[0]`` by increasing key, NaN last, equal
    keys (-0.0 and 0.0 too) in position order (``np.argsort(key[:n], kind="stable")``).
    ``keys``: (key, the same memory as uint64 bits, a uint64 row and two int64 rows of n
    entries or more, an (8, 256) int64 table): the positions into the first int64 row.

    From RADIX_MIN keys on, a least-significant-byte-first radix sort of order-preserving
    unsigned keys: 2**63 plus the magnitude's bits for a positive value, minus them for a
    negative one (both zeros: 2**63), above every one of them for NaN. A pass per byte that
    does not hold the same value in every key, each a stable scatter; the keys keep the
    value's trailing zero bits, so float32 values (29 zero bits as float64) take 5 passes
    whatever their signs. Fewer keys take
    :func:`jitree.kernels.categorical.stable_argsort`. 13k float32 keys: about 90 ns a key
    merge-sorted; radix-sorted, 10 ns of one sign, 15 ns of both (float64: 19 ns)."""
    key, bits, spare, order, other, counts = keys
    if n < RADIX_MIN:
        stable_argsort(key, n, order, other)
        return
    for k in range(n):
        b = bits[k]
        magnitude = b & _MAGNITUDE
        if key[k] != key[k]:
            b = _NAN_KEY
        elif b & _SIGN:
            b = _SIGN - magnitude
        else:
            b = _SIGN + magnitude
        bits[k] = b
        order[k] = k
    for d in range(8):
        for v in range(256):
            counts[d, v] = 0
    for k in range(n):
        b = bits[k]
        for d in range(8):
            counts[d, (b >> np.uint64(8 * d)) & _BYTE] += 1
    source_bits = bits
    target_bits = spare
    source = order
    target = other
    in_other = False  # whether the positions so far are in ``other``
    for d in range(8):
        shift = np.uint64(8 * d)
        if counts[d, (source_bits[0] >> shift) & _BYTE] == n:
            continue  # every key holds the same byte here
        total = 0
        for v in range(256):
            c = counts[d, v]
            counts[d, v] = total
            total += c
        for k in range(n):
            b = source_bits[k]
            slot = (b >> shift) & _BYTE
            p = counts[d, slot]
            counts[d, slot] = p + 1
            target_bits[p] = b
            target[p] = source[k]
        source_bits, target_bits = target_bits, source_bits
        source, target = target, source
        in_other = not in_other
    if in_other:
        for k in range(n):
            order[k] = other[k]


@borrowing
def search_sorted_nodes(data, order, settings, nodes, allowed, first, last, work, out):
    """The best splitter's nodes ``first:last`` of :func:`find_node_splits`, each by
    :func:`best_sorted` (``work``: the block's walk, scratch statistics and sorted rows).
    The block's scratch holds no row per feature but the walk, which every node leaves as
    it found it (the identity: :func:`jitree.kernels.select.undo_walk`), where the random
    splitter's blocks hold seven and fill the walk at each node: wide X's nodes are many and
    small. Compiled without reference counting (see :func:`search_nodes`)."""
    walk, scratch, sort_work = work
    gain_ratio = settings.criterion.code == criteria.GAIN_RATIO
    for j in range(first, last):
        stats = nodes.stats[j]
        weight = nodes.weight[j]
        parent_entropy = criteria.entropy(stats, weight) if gain_ratio else 0.0
        best_sorted(data, order, settings, nodes, j, allowed, walk,
                    Side(stats, weight, nodes.end[j] - nodes.start[j]), parent_entropy,
                    scratch, sort_work, out)


# two_valued: keys per block
TWO_VALUED_BLOCK = 32


@jit(inline="always")
def two_valued(key, n, low, high):
    """Whether every one of the ``n`` keys is ``low``, ``high`` or NaN. Blocks of
    TWO_VALUED_BLOCK keys are tested without a branch per key (a binary feature's keys
    alternate between its two values, and a test per key was mispredicted on most of them:
    18% of a random forest's time on 20k x 300 binary features); a continuous feature stops
    at its first block."""
    k = 0
    while k < n:
        stop = min(n, k + TWO_VALUED_BLOCK)
        others = 0
        for q in range(k, stop):
            v = key[q]
            others += (v == v) & (v != low) & (v != high)
        if others:
            return False
        k = stop
    return True


# sorted_rows: X's values as bytes take a counting sort while their range (largest minus
# smallest) is below this many times the node's samples. Random forests, 1 thread, the same
# trees, alternating runs, seconds, before then after: 20k x 300 features of 5 levels (8
# trees) 0.57-0.61 then 0.29-0.33 (a profile before: the merge sort of nodes below
# RADIX_MIN samples 39% of the time, the radix sort 14%); Poisson counts of means 0.5-20 (4
# trees) 0.43 then 0.21-0.22; 20k x 784 pixels, 80% zeros, the others 1-255 (4 trees)
# 0.91-0.92 then 0.59-0.64
COUNTING_RANGE = 4


@jit(inline="always")
def counting_argsort(key, n, low, high, order, counts):
    """The positions 0 .. n - 1 of ``key`` by increasing key, equal keys in position order,
    into ``order``, for keys that are whole numbers from ``low`` to ``high`` (none
    missing), by counting: ``counts`` holds at least ``high - low + 1`` entries."""
    base = np.int64(low)
    size = np.int64(high) - base + 1
    for v in range(size):
        counts[v] = 0
    for k in range(n):
        counts[np.int64(key[k]) - base] += 1
    total = 0
    for v in range(size):
        c = counts[v]
        counts[v] = total
        total += c
    for k in range(n):
        b = np.int64(key[k]) - base
        order[counts[b]] = k
        counts[b] += 1


@jit(inline="always")
def gather_column(flat, samples, start, n, f, raw, key):
    """Feature ``f``'s values at the samples ``samples[start:start + n]`` of the
    :func:`flat_x` ``flat`` into ``raw`` (in ``raw``'s type) and ``key`` (as float64); their
    (smallest, largest, number) as :func:`column_range` gives them. Each read asks for the
    value GATHER_AHEAD samples on: a node's samples lie in rows scattered through X."""
    low = np.inf
    high = -np.inf
    count = 0
    last = start + n - 1
    for k in range(n):
        prefetch(flat[0], index_of(flat, samples[min(start + k + GATHER_AHEAD, last)], f))
        x = value_at(flat, samples[start + k], f)
        raw[k] = x
        v = np.float64(x)
        key[k] = v
        # NaN fails both tests and the count's
        low = v if v < low else low
        high = v if v > high else high
        count += v == v
    return low, high, count


@borrowing(inline="always")
def sorted_rows(data, order, start, end, f, sort_work, slot):
    """Whether feature ``f`` can split the samples ``samples[start:end]``
    (:func:`varies`), and if so those samples by increasing value on it (NaN last, equal
    values in increasing sample index, as a presorted feature's segment holds them), with
    their values and classes, into the first ``end - start`` entries of ``sort_work``'s
    value row and of row ``slot`` of its index and label rows: :func:`gathered_values`,
    then :func:`sort_gathered`."""
    low, high, count = gathered_values(order, start, end, f, sort_work)
    n = end - start
    if not varies(low, high, count, n):
        return False
    sort_gathered(data, order, start, end, sort_work, slot, low, high, count,
                  two_valued(sort_work[0][0], n, low, high))
    return True


@borrowing(inline="always")
def gathered_values(order, start, end, f, sort_work):
    """Feature ``f``'s values at the samples ``samples[start:end]`` into ``sort_work``'s raw
    row (X's type) and first key row (float64), in the samples' order; their (smallest,
    largest, number not missing). X is read once, at each sample (from ``order.codes``
    when it holds X's values as bytes)."""
    keys, _, _, raw, _ = sort_work
    if order.codes.shape[0]:  # X's values as bytes: a quarter of float32 X's cache lines
        return gather_column(flat_x(order.codes, order.by_column), order.samples, start,
                             end - start, f, raw, keys[0])
    return gather_column(flat_x(order.X, order.by_column), order.samples, start,
                         end - start, f, raw, keys[0])


@borrowing(inline="always")
def sort_gathered(data, order, start, end, sort_work, slot, low, high, count, binary):
    """The samples ``samples[start:end]`` by increasing value of the feature
    :func:`gathered_values` read (its ``(low, high, count)``; ``binary``: every value
    ``low``, ``high`` or NaN, :func:`two_valued`), with their values and classes, into the
    first ``end - start`` entries of ``sort_work``'s value row and of row ``slot`` of its
    index and label rows (its first entry: the sort's keys and scratch, see
    :func:`argsort_keys`, whose positions row holds ``n + 1`` entries or more: the
    partition may write one past ``n``). The values wait in the raw row."""
    keys, index_rows, value_row, raw, label_rows = sort_work
    samples = order.samples
    key = keys[0]
    n = end - start
    by_value = keys[3]
    if binary:
        # a binary (one-hot, indicator) feature: the stable sort is a stable partition,
        # written without branches (each position is written, the next slot taken only
        # by a match: a branch per sample would be mispredicted half the time). The last
        # pass may write one slot past n (the row is one longer).
        r = 0
        for k in range(n):
            by_value[r] = k
            r += key[k] == low
        if low < high:
            for k in range(n):
                by_value[r] = k
                r += key[k] == high
        if count < n:
            for k in range(n):
                by_value[r] = k
                r += key[k] != key[k]
    elif order.codes.shape[0] and high - low < COUNTING_RANGE * n:
        # whole numbers 0 .. 255, none missing: a counting sort
        counting_argsort(key, n, low, high, by_value, keys[5][0])
    else:
        argsort_keys(keys, n)
    index_row = index_rows[slot]
    label_row = label_rows[slot]
    label = data.label
    is_regression = data.is_regression
    for r in range(n):
        k = by_value[r]
        i = samples[start + k]
        index_row[r] = i
        value_row[r] = raw[k]
        if not is_regression:
            label_row[r] = label[i]


@borrowing(inline="always")
def best_sorted(data, order, settings, nodes, j, allowed, walk, node, parent_entropy,
                scratch, sort_work, out):
    """The best splitter's search of node ``j`` in sample order. The features are drawn by
    the walk of :func:`jitree.kernels.select.select_features` (``walk``: its scratch;
    ``allowed``: see :func:`jitree.kernels.select.walk_step`), every allowed one when
    ``max_features`` reaches their number; each visited feature is sorted at the node's
    samples (:func:`sorted_rows`) and, if it can split them, is searched as a presorted
    segment
    (:func:`jitree.kernels.split.best_single_threshold`, the presorted search's own code,
    on the same samples in the same order). The best goes into ``out`` as
    :func:`search_nodes` writes it; ties go to the lowest feature, as in
    :func:`jitree.kernels.split.best_pair_per_node` (which meets the features in
    increasing order, this search in the walk's: the scans' scores are never NaN, so the
    two rules agree). Searching each feature as the walk visits it reads X once per sample
    and feature (a search of the drawn features after the draw read it three times: range,
    sort keys, values). A feature of two values at the node, none missing and
    unconstrained, is searched without sorting (:func:`jitree.kernels.split.scan_two_valued`:
    a regressor's, or a classifier's with ``order.whole_weights``), and sorted only if it
    wins (random forest classifiers of 8 trees, 20,000 x 300, 1 thread, alternating fits in
    one process, before then after: binary features 0.362 then 0.320 s, 5 levels 0.482
    then 0.423 s; the regressor, 4 trees, binary, 0.278 then 0.257 s; the same trees). So
    is a classifier's feature held as bytes (``order.codes``; whole weights, at most
    CODE_CLASSES classes, none missing, unconstrained) whose range the node's samples fill
    as for the counting sort: by a histogram of its values
    (:func:`jitree.kernels.split.scan_codes`), sorted only if it wins.

    The split's children are added up on the winner's sorted rows (kept: the sort rows hold
    two slots, the best so far and the one being searched) as the presorted growth's
    :func:`jitree.kernels.grow.mark_and_count` adds them: the left positions, the right
    ones, then the missing ones onto their side, each by
    :func:`jitree.kernels.criteria.accumulate`. They are the presorted growth's sums to the
    bit, whatever the weights and targets."""
    _, index_rows, value_row, _, label_rows = sort_work
    out_feature, out_pos, out_missing, out_threshold, out_children = out
    monotonic = settings.monotonic
    max_features = settings.max_features
    n_features = n_columns(order.X, order.by_column)
    start = nodes.start[j]
    end = nodes.end[j]
    n = end - start
    left = scratch[0]
    right = scratch[1]
    missing = scratch[2]
    draw = max_features < n_features
    key = stream_key(settings.seed, nodes.id[j], -1)
    best_feature = -1
    best_score = -np.inf
    best_pos = 0
    best_end = 0
    best_missing = NO_MISSING
    best_threshold_value = 0.0
    best_unsorted = False
    values = sort_work[0][0]  # the gathered values' keys (gathered_values)
    slot = 0  # the sort rows' slot of the feature searched; the other holds the best's
    count = 0
    visited = 0
    step = 0
    while not (draw and draw_done(visited, count, max_features)) and step < n_features:
        if draw:
            f = walk_step(key, step, walk, allowed, j)
        else:
            f = step if allowed.shape[1] == 0 or allowed[j, step] else -1
        step += 1
        if f < 0:
            continue
        visited += 1
        low, high, present = gathered_values(order, start, end, f, sort_work)
        if not varies(low, high, present, n):
            continue
        count += 1
        binary = two_valued(values, n, low, high)
        limits = feature_limits(monotonic, f, nodes.lower[j], nodes.upper[j])
        unsorted = (binary and present == n and limits.monotonic == 0
                    and (data.is_regression or order.whole_weights))
        # a classifier's feature held as bytes, of a range the node's samples fill: its
        # histogram, not its sort (scan_codes)
        by_codes = (not unsorted and order.codes.shape[0] > 0 and not data.is_regression
                    and order.whole_weights and present == n and limits.monotonic == 0
                    and node.stats.shape[0] <= CODE_CLASSES
                    and high - low < COUNTING_RANGE * n)
        if unsorted:
            # two values, none missing: the scan's one candidate, without sorting
            score, pos = scan_two_valued(settings, data, node, order.samples, start, values,
                                         low, parent_entropy, left, right, scratch[3:])
            end_nm = n
            direction = NO_MISSING
            threshold = midpoint(low, high)
        elif by_codes:
            score, pos, threshold = scan_codes(settings, data, node, order.samples, start,
                                               values, low, high, parent_entropy, left, right,
                                               sort_work[0][5])
            end_nm = n
            direction = NO_MISSING
        else:
            sort_gathered(data, order, start, end, sort_work, slot, low, high, present,
                          binary)
            index_row = index_rows[slot]
            label_row = label_rows[slot]
            end_nm, missing_weight = missing_tail(data, index_row, value_row, label_row, 0,
                                                  n, missing)
            rows = Rows(index_row, value_row, label_row, 0, end_nm, limits)
            score, pos, threshold, direction = best_single_threshold(
                settings, data, rows, node, Side(missing, missing_weight, n - end_nm),
                parent_entropy, left, right, None)
        if pos >= 0 and (best_feature < 0 or score > best_score
                         or (score == best_score and f < best_feature)):
            best_feature = f
            best_score = score
            best_pos = pos
            best_end = end_nm
            best_missing = direction
            best_threshold_value = threshold
            best_unsorted = unsorted or by_codes
            if not best_unsorted:
                slot = 1 - slot
    if draw:
        undo_walk(key, step, walk)
    if best_feature >= 0 and out_children.shape[0] > 0:
        if best_unsorted:
            # a two-valued winner, searched without sorting: its rows now
            sorted_rows(data, order, start, end, best_feature, sort_work, 1 - slot)
        # the winner's rows: the slot it was sorted into, left behind by the switch
        index_row = index_rows[1 - slot]
        label_row = label_rows[1 - slot]
        sides = scratch[:2]
        sides[:, :] = 0.0
        weight_left = criteria.accumulate(sides, 0, data, index_row, label_row, 0,
                                          best_pos)
        weight_right = criteria.accumulate(sides, 1, data, index_row, label_row, best_pos,
                                           best_end)
        if best_end < n:
            to = 0 if best_missing == MISSING_LEFT else 1
            weight_missing = criteria.accumulate(sides, to, data, index_row, label_row,
                                                 best_end, n)
            if to == 0:
                weight_left += weight_missing
            else:
                weight_right += weight_missing
        n_stats = node.stats.shape[0]
        for s in range(n_stats):
            out_children[j, 0, s] = sides[0, s]
            out_children[j, 1, s] = sides[1, s]
        out_children[j, 0, n_stats] = weight_left
        out_children[j, 1, n_stats] = weight_right
    out_feature[j] = best_feature
    out_pos[j] = start + best_pos if best_feature >= 0 else 0
    out_missing[j] = best_missing
    out_threshold[j] = best_threshold_value


@borrowing(inline="always")
def node_ranges(X, by_column, samples, start, end, low, high, present):
    """Every feature's smallest and largest non-missing value and their number at the
    samples ``samples[start:end]`` (into ``low``, ``high``, ``present``; inf, -inf and 0 for
    a feature missing everywhere): one pass reading each sample's row once (by column: a
    pass per feature). The pass asks for the first cache line of the row :data:`AHEAD`
    samples on (:func:`prefetch`; a wide row's others are not asked for): a large node's
    rows are scattered through X, and without it the pass waited on each
    (Extra-Trees regressor, 150k x 20, 1 thread: nodes of more than 256 samples 85 against
    33 cycles a sample, of 17-256 samples 157 against 80). Keeping four features' ranges
    in registers over blocks of samples was slower (38 against 31 cycles a sample with X
    in cache)."""
    n_features = n_columns(X, by_column)
    if by_column:
        flat = flat_x(X, by_column)
        for f in range(n_features):
            low[f], high[f], present[f] = column_range(flat, f, samples, start, end)
        return
    for f in range(n_features):
        low[f] = np.inf
        high[f] = -np.inf
        present[f] = 0
    values = X.reshape(-1)
    width = np.uint64(n_features)
    final = np.uint64(end - 1)
    for k in range(np.uint64(start), np.uint64(end)):  # unsigned: no wraparound fix-ups
        prefetch(values, np.uint64(samples[min(k + AHEAD, final)]) * width)
        row = X[np.uint64(samples[k])]
        for f in range(n_features):
            x = np.float64(row[f])
            # NaN fails both tests and the count's
            low[f] = x if x < low[f] else low[f]
            high[f] = x if x > high[f] else high[f]
            present[f] += x == x


PACKED_CLASSES = 4  # node_sides counts up to this many classes in one register
_LANE = np.uint64(16)  # bits of a class's count in that register (a block's samples fit)
_LANE_MASK = np.uint64(0xFFFF)


@jit(inline="always")
def packed_sides(flat, label, samples, first, last, f, cut, with_missing, t, side_stats,
                 side_totals):
    """:func:`node_sides` of an unweighted classifier of at most :data:`PACKED_CLASSES`
    classes, for the samples ``samples[first:last]`` (a block) on feature ``f``: each side's
    class counts are added up in one register, a 16-bit count per class (a block holds
    fewer samples than a count can reach), then added to the side's sums. The counts are
    whole numbers, so the sums are those of adding 1.0 per sample in sample order."""
    left = np.uint64(0)
    missing = np.uint64(0)
    for k in range(np.uint64(first), np.uint64(last)):
        i = np.uint64(samples[k])
        x = value_at(flat, i, f)
        shift = np.uint64(label[i]) * _LANE
        left += np.uint64(x <= cut) << shift
        if with_missing:
            missing += np.uint64(x != x) << shift
    n_classes = side_stats.shape[2]
    for c in range(n_classes):
        shift = np.uint64(c) * _LANE
        count_left = np.float64((left >> shift) & _LANE_MASK)
        count_missing = np.float64((missing >> shift) & _LANE_MASK)
        side_stats[0, t, c] += count_left
        side_stats[1, t, c] += count_missing
        side_totals[0, 1, t] += count_left
        side_totals[1, 1, t] += count_missing
    side_totals[0, 0, t] = side_totals[0, 1, t]
    side_totals[1, 0, t] = side_totals[1, 1, t]


@borrowing(inline="always")
def node_sides(data, flat, samples, start, end, chosen, count, threshold, present, full,
               side_stats, side_totals):
    """The statistics of the samples ``samples[start:end]`` at or below ``threshold[t]``
    on feature ``chosen[t]`` (``side_stats[0, t]``, their weight and number in
    ``side_totals[0, :, t]``) and of those missing on it (``side_stats[1, t]``,
    ``side_totals[1, :, t]``; zeros when ``present[chosen[t]]`` says none is), for
    t < ``count``. Each side's sums are added in sample order, as
    :func:`jitree.kernels.criteria.accumulate` adds them (the same numbers in the same
    order). A regressor's second statistic (sum of w y**2, or poisson's term) only when
    ``full`` (a user's criterion): the built-in scores read the first one only. The side
    arrays must hold ``count + count % 2`` slots: an odd count's last pass fills slot
    ``count`` too (callers size them ``n_features + 1``).

    Blocks of :data:`SIDE_BLOCK` samples, each read by two drawn features at a time, with
    their running sums in registers across the block (and so still in sample order): sums
    kept in memory for every feature at once cost a load and a store per sample and
    feature each, 3.7 ns a sample and feature for 20 features (against 0.7 ns for one
    feature at a time). Two features a pass make two independent chains of adds, where
    one waited on each add (Extra-Trees regressor, 150k x 20, nodes of more than 256
    samples: 77 against 59 cycles a sample for 20 features, the rows asked for ahead too).
    Branch-free: a sample adds its statistics times 1.0 or 0.0, which leaves a sum exact.
    An unweighted classifier of at most :data:`PACKED_CLASSES` classes counts a side's
    classes in one register (:func:`packed_sides`), where adding into the side's sums per
    sample chains each class's count through a store and a load: Extra-Trees classifiers,
    1 thread, 150k x 20 (``sqrt``) 243-248 against 185-208 ms, 20k x 50 (every feature)
    188-190 against 116-128 ms, 20k x 500 (``sqrt``) 316-324 against 297-305 ms."""
    is_regression = data.is_regression
    target = data.target
    target_term = data.target_term
    has_term = target_term.shape[0] > 0
    label = data.label
    sample_weight = data.sample_weight
    weighted = data.weighted
    n_stats = side_stats.shape[2]
    n = end - start
    for side in range(2):
        for t in range(count + count % 2):
            side_totals[side, 0, t] = 0.0
            side_totals[side, 1, t] = 0.0
            for s in range(n_stats):
                side_stats[side, t, s] = 0.0
    w = 1.0
    a = 0.0
    b = 0.0
    packed = not is_regression and not weighted and n_stats <= PACKED_CLASSES
    # by row, each pass asks for its feature's value AHEAD samples on, across blocks (by
    # column, asking ahead slowed the passes of column_range and packed_sides)
    by_row = flat[2] == 1
    final = np.uint64(end - 1)
    for first in range(start, end, SIDE_BLOCK):
        last = min(end, first + SIDE_BLOCK)
        if packed:
            for t in range(count):
                f = chosen[t]
                packed_sides(flat, label, samples, first, last, f, threshold[t],
                             present[f] < n, t, side_stats, side_totals)
            continue
        # two features a pass, t and u: two independent chains of adds, written out side
        # by side (a helper adding one lane's sums as a tuple took 1.83-2.19 s against
        # 1.48-1.99 s: Extra-Trees regressor, 150k x 20, 4 trees, 1 thread). An odd
        # count's last pass repeats feature t into the spare slot u = count
        for t in range(0, count, 2):
            u = t + 1
            f = chosen[t]
            g = chosen[u] if u < count else f
            cut_f = threshold[t]
            cut_g = threshold[u] if u < count else cut_f
            missing_f = present[f] < n
            missing_g = present[g] < n
            count_left = side_totals[0, 1, t]
            weight_left = side_totals[0, 0, t]
            sum_left = side_stats[0, t, 0]
            term_left = side_stats[0, t, 1] if is_regression else 0.0
            count_missing = side_totals[1, 1, t]
            weight_missing = side_totals[1, 0, t]
            sum_missing = side_stats[1, t, 0]
            term_missing = side_stats[1, t, 1] if is_regression else 0.0
            count_left_g = side_totals[0, 1, u]
            weight_left_g = side_totals[0, 0, u]
            sum_left_g = side_stats[0, u, 0]
            term_left_g = side_stats[0, u, 1] if is_regression else 0.0
            count_missing_g = side_totals[1, 1, u]
            weight_missing_g = side_totals[1, 0, u]
            sum_missing_g = side_stats[1, u, 0]
            term_missing_g = side_stats[1, u, 1] if is_regression else 0.0
            for k in range(np.uint64(first), np.uint64(last)):
                if by_row:
                    prefetch(flat[0], index_of(flat, samples[min(k + AHEAD, final)], f))
                i = np.uint64(samples[k])
                x = value_at(flat, i, f)
                z = value_at(flat, i, g)
                to_left = 1.0 if x <= cut_f else 0.0
                to_left_g = 1.0 if z <= cut_g else 0.0
                count_left += to_left
                count_left_g += to_left_g
                if weighted:
                    w = sample_weight[i]
                    weight_left += to_left * w
                    weight_left_g += to_left_g * w
                if is_regression:
                    y = target[i]
                    a = w * y
                    sum_left += to_left * a
                    sum_left_g += to_left_g * a
                    if full:
                        b = w * target_term[i] if has_term else w * y * y
                        term_left += to_left * b
                        term_left_g += to_left_g * b
                else:
                    side_stats[0, t, label[i]] += to_left * w
                    side_stats[0, u, label[i]] += to_left_g * w
                if missing_f:
                    to_missing = 1.0 if x != x else 0.0
                    count_missing += to_missing
                    if weighted:
                        weight_missing += to_missing * w
                    if is_regression:
                        sum_missing += to_missing * a
                        if full:
                            term_missing += to_missing * b
                    else:
                        side_stats[1, t, label[i]] += to_missing * w
                if missing_g:
                    to_missing_g = 1.0 if z != z else 0.0
                    count_missing_g += to_missing_g
                    if weighted:
                        weight_missing_g += to_missing_g * w
                    if is_regression:
                        sum_missing_g += to_missing_g * a
                        if full:
                            term_missing_g += to_missing_g * b
                    else:
                        side_stats[1, u, label[i]] += to_missing_g * w
            side_totals[0, 1, t] = count_left
            side_totals[1, 1, t] = count_missing
            side_totals[0, 1, u] = count_left_g
            side_totals[1, 1, u] = count_missing_g
            # unweighted, a side's weight is its number (sums of 1.0: exact)
            side_totals[0, 0, t] = weight_left if weighted else count_left
            side_totals[1, 0, t] = weight_missing if weighted else count_missing
            side_totals[0, 0, u] = weight_left_g if weighted else count_left_g
            side_totals[1, 0, u] = weight_missing_g if weighted else count_missing_g
            if is_regression:
                side_stats[0, t, 0] = sum_left
                side_stats[0, t, 1] = term_left
                side_stats[1, t, 0] = sum_missing
                side_stats[1, t, 1] = term_missing
                side_stats[0, u, 0] = sum_left_g
                side_stats[0, u, 1] = term_left_g
                side_stats[1, u, 0] = sum_missing_g
                side_stats[1, u, 1] = term_missing_g


@pjit
def split_samples(data, order, split_start, split_end, split_feature, split_threshold,
                  split_missing, child_offset, child_stats, child_weight, child_count, sums,
                  n_blocks):
    """Stable partition of each split node's segment of ``order.samples`` into its left
    child's samples then its right child's (at or below ``split_threshold[j]`` on
    ``split_feature[j]``, the missing ones on the side ``split_missing[j]``), and the
    children's counts into rows ``child_offset[j]`` and ``child_offset[j] + 1`` of the
    child arrays, with their statistics and weights when ``sums`` (the random splitter's
    regressor; the other searches give their children's, see :func:`search_nodes` and
    :func:`best_sorted`); parallel over the nodes (their segments are disjoint, and so are
    their parts of the spill), in at most ``n_blocks`` blocks."""
    k = split_start.shape[0]
    # blocks of nodes, each a call (a call per node would copy the records per node)
    n_blocks = max(1, min(k, n_blocks))
    for block in prange(n_blocks):
        split_block(data, order, split_start, split_end, split_feature, split_threshold,
                    split_missing, child_offset, child_stats, child_weight, child_count, sums,
                    block * k // n_blocks, (block + 1) * k // n_blocks)


split_samples_serial = serial_twin(split_samples)


@borrowing
def split_block(data, order, split_start, split_end, split_feature, split_threshold,
                split_missing, child_offset, child_stats, child_weight, child_count, sums,
                first, last):
    """The nodes ``first:last`` of :func:`split_samples`, compiled without reference
    counting (see :func:`search_nodes`). One pass per node partitions its samples and, with
    ``sums``, adds each to its child's statistics, in sample order (as
    :func:`jitree.kernels.criteria.accumulate` adds a segment's), asking for the value
    and target :data:`AHEAD` samples on (see :func:`node_ranges`; Extra-Trees regressor,
    150k x 20, 1 thread: 746 against 475 million cycles for 4 trees)."""
    flat = flat_x(order.X, order.by_column)
    samples = order.samples
    spill = order.spill
    target = data.target
    target_term = data.target_term
    has_term = target_term.shape[0] > 0
    sample_weight = data.sample_weight
    weighted = data.weighted
    w = 1.0
    for j in range(first, last):
        start = split_start[j]
        end = split_end[j]
        f = split_feature[j]
        threshold = split_threshold[j]
        nan_left = split_missing[j] == MISSING_LEFT
        c = child_offset[j]
        weight_left = 0.0
        weight_right = 0.0
        sum_left = 0.0
        sum_right = 0.0
        term_left = 0.0
        term_right = 0.0
        write = np.uint64(start)
        n_right = np.uint64(0)
        # branch-free (see kernels.grow.partition): left in place, right to the spill
        final = np.uint64(end - 1)
        for k in range(np.uint64(start), np.uint64(end)):
            ahead = samples[min(k + AHEAD, final)]
            prefetch(flat[0], index_of(flat, ahead, f))
            if sums:
                prefetch(target, ahead)
            i = np.uint64(samples[k])
            x = value_at(flat, i, f)
            to_left = np.uint64(x <= threshold or (nan_left and x != x))
            samples[write] = i
            spill[np.uint64(start) + n_right] = i
            write += to_left
            n_right += np.uint64(1) - to_left
            if sums:
                left = np.float64(to_left)
                right = 1.0 - left
                if weighted:
                    w = sample_weight[i]
                weight_left += left * w
                weight_right += right * w
                y = target[i]
                a = w * y
                b = w * target_term[i] if has_term else w * y * y
                sum_left += left * a
                sum_right += right * a
                term_left += left * b
                term_right += right * b
        for r in range(n_right):
            samples[write + r] = spill[np.uint64(start) + r]
        if sums:
            child_stats[c, 0] = sum_left
            child_stats[c, 1] = term_left
            child_stats[c + 1, 0] = sum_right
            child_stats[c + 1, 1] = term_right
            child_weight[c] = weight_left
            child_weight[c + 1] = weight_right
        n_left = np.int64(write) - start
        child_count[c] = n_left
        child_count[c + 1] = end - start - n_left


# renumber: the most bytes of X a renumbering copies (larger copies wait until fewer rows
# are open), and the fewest levels that must be left to grow after it (max_depth)
RENUMBER_MAX_BYTES = 1 << 28
RENUMBER_LEVELS = 6


@jit
def renumber(data, order, open_nodes):
    """``(data, order)`` with the samples of the open nodes (rows ``open_nodes[1, j]:
    open_nodes[2, j]`` of ``order.samples``) renumbered 0, 1, ... in node order, and X, the
    labels, targets and weights copied in that order (the other samples are in leaves,
    never read again). A node's samples are then neighbours in X, and so are its
    descendants' for the levels that follow: their reads share cache lines and pages where
    the samples of a deep node of a large X lie far apart. Every segment keeps its samples
    in increasing number, so every search and sum sees the same samples in the same order:
    the same trees. The new arrays take the types of the old (:func:`retyped`), so the
    growth is compiled once. X's codes (``order.codes``), when held, are copied alike."""
    samples = order.samples
    n_open = 0
    for j in range(open_nodes.shape[1]):
        n_open += open_nodes[2, j] - open_nodes[1, j]
    old = np.empty(n_open, dtype=np.int64)
    q = 0
    for j in range(open_nodes.shape[1]):
        for p in range(open_nodes[1, j], open_nodes[2, j]):
            old[q] = samples[p]
            samples[p] = q
            q += 1
    X = order.X
    if order.by_column:
        copy = np.empty((X.shape[0], n_open), dtype=X.dtype)
    else:
        copy = np.empty((n_open, X.shape[1]), dtype=X.dtype)
    copy_renumbered(X, order.by_column, old, copy)
    codes = order.codes
    if codes.shape[0]:
        codes_copy = np.empty(copy.shape, dtype=codes.dtype)
        copy_renumbered(codes, order.by_column, old, codes_copy)
        codes = retyped(codes_copy, order.codes)
    renumbered = SampleOrder(retyped(copy, X), order.by_column, samples, order.spill,
                             order.renumber, codes, order.whole_weights)
    # the outputs' arrays have no columns in this growth (one output), nothing to copy
    data = TreeData(data.sorted_index, data.sorted_value, data.sorted_label,
                    _renumbered(data.label, old), data.label_scratch,
                    _renumbered(data.target, old), _renumbered(data.target_term, old),
                    _renumbered(data.sample_weight, old), data.weighted, data.is_regression,
                    data.outputs, data.output_columns, data.xlogx)
    return data, renumbered


@pjit
def copy_renumbered(X, by_column, old, out):
    """X's rows ``old`` in that order into ``out`` (by column: X and ``out`` hold the
    transposes), in parallel over the features (by row: over blocks of rows)."""
    n = old.shape[0]
    if by_column:
        for f in prange(X.shape[0]):
            for q in range(n):
                out[f, q] = X[f, old[q]]
    else:
        n_blocks = (n + 4095) // 4096
        for block in prange(n_blocks):
            for q in range(block * 4096, min(n, (block + 1) * 4096)):
                for f in range(X.shape[1]):
                    out[q, f] = X[old[q], f]


@jit
def _renumbered(values, old):
    """``values[old]`` under the type of ``values``; an empty ``values`` (a statistic the
    tree does not keep) as it is."""
    if values.shape[0] == 0:
        return values
    out = np.empty(old.shape[0], dtype=values.dtype)
    for q in range(old.shape[0]):
        out[q] = values[old[q]]
    return retyped(out, values)


@jit
def small_codes(X, codes):
    """Whether every value of X (2-D, C-contiguous) is a whole number 0 .. 255 (not -0.0,
    not NaN); ``codes`` (uint8, X's shape) then holds them. Stops at the first other value:
    at once on continuous X."""
    values = X.reshape(-1)
    out = codes.reshape(-1)
    for k in range(values.shape[0]):
        x = values[k]
        if not (0.0 <= x <= 255.0) or x != np.floor(x) or math.copysign(1.0, x) < 0.0:
            return False
        out[k] = np.uint8(x)
    return True
