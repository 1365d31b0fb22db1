"""Growing a tree from presorted features.

Every open node owns the same range ``start:end`` in each feature's sorted arrays. After a
node is split on feature ``f`` at position ``pos``, the samples ``sorted_index[f, start:pos]``
go left; every other feature's segment is partitioned stably so that its left samples occupy
``start:start + n_left`` and its right samples the rest, both still sorted (in place, or,
:func:`partition_into`, every feature's segment into a second copy of the sorted arrays).
No node is ever re-sorted: a level costs O(n_features * n_samples_in_level).
"""

import numpy as np
from numba import prange

from ._jit import (
    COMPRESS,
    COMPRESS_LANES,
    borrowing,
    compress_store,
    jit,
    pjit,
    popcount,
    serial_twin,
)
from .criteria import accumulate
from .split import classes_by_sample, gather_classes, non_missing_end

_ONE = np.uint64(1)
_SIX = np.uint64(6)
_LOW6 = np.uint64(63)


@borrowing
def _mark_range(data, index_row, label_row, first, last, slot, marks, children, row):
    """Send samples first:last of a sorted segment to child ``slot``: ``marks`` is
    (child_slot, goes_left, write_slot); statistics into ``row`` of the :class:`ChildStats`
    ``children`` (:func:`accumulate`)."""
    child_slot, goes_left, write_slot = marks
    flag = 1 if slot == 0 else 0
    for k in range(np.uint64(first), np.uint64(last)):  # unsigned: no wraparound fix-ups
        i = np.uint64(index_row[k])
        goes_left[i] = flag
        if write_slot:
            child_slot[i] = slot
    children.weight[row] += accumulate(children.stats, row, data, index_row, label_row,
                                       first, last)
    children.count[row] += last - first


@pjit
def mark_and_count(data, splits, child_slot, goes_left, children):
    """For each node to split (the :class:`SplitBatch` ``splits``): the child of each of its
    samples and every child's statistics (class weights, or sum of w y and of w y**2), weight
    and count, into the :class:`ChildStats` ``children``. Parallel over the nodes (disjoint
    segments).

    Node j's children are rows ``child_offset[j] .. child_offset[j + 1] - 1`` of
    ``children`` (slot 0 is the left child of a binary split). On its split feature's sorted
    segment: a threshold split sends positions ``start:pos[j]`` to slot 0 and the other
    non-missing ones to slot 1; a categorical split sends the r-th run of equal codes to
    ``detail_slot[detail_offset[j] + r]``; missing values (the NaN tail) go to
    ``missing_slot[j]``. Writes ``goes_left[i] = (slot == 0)`` and, for a node of more than
    two children, ``child_slot[i]``. Classes: see
    :func:`jitree.kernels.split.classes_by_sample` (``label_scratch[0]`` serves every node:
    their segments are disjoint).
    """
    sorted_index = data.sorted_index
    sorted_value = data.sorted_value
    sorted_label = data.sorted_label
    label = data.label
    is_regression = data.is_regression
    child_offset = splits.child_offset
    detail_offset = splits.detail_offset
    detail_slot = splits.detail_slot
    child_stats = children.stats
    child_weight = children.weight
    child_count = children.count
    # fields read into locals: inside a prange loop, numba loses writes made through a
    # record's field
    split_start = splits.start
    split_end = splits.end
    split_feature = splits.feature
    split_pos = splits.pos
    split_categorical = splits.categorical
    split_missing_slot = splits.missing_slot
    by_sample = classes_by_sample(sorted_label, label)
    scratch = data.label_scratch[0]
    for j in prange(split_start.shape[0]):
        f = split_feature[j]
        index_row = sorted_index[f]
        value_row = sorted_value[f]
        start = split_start[j]
        end = split_end[j]
        if by_sample:
            gather_classes(label, index_row, start, end, scratch)
            label_row = scratch
        else:
            label_row = sorted_label[0] if is_regression else sorted_label[f]
        first_child = child_offset[j]
        write_slot = child_offset[j + 1] - first_child > 2
        marks = (child_slot, goes_left, write_slot)
        for row in range(first_child, child_offset[j + 1]):
            child_stats[row, :] = 0.0
            child_weight[row] = 0.0
            child_count[row] = 0
        end_nm = non_missing_end(value_row, start, end)
        if split_categorical[j]:
            run_start = start
            run = 0
            for k in range(start + 1, end_nm + 1):
                if k == end_nm or value_row[k] != value_row[k - 1]:
                    slot = detail_slot[detail_offset[j] + run]
                    _mark_range(data, index_row, label_row, run_start, k, slot, marks,
                                children, first_child + slot)
                    run_start = k
                    run += 1
        else:
            pos = split_pos[j]
            _mark_range(data, index_row, label_row, start, pos, 0, marks, children,
                        first_child)
            _mark_range(data, index_row, label_row, pos, end_nm, 1, marks, children,
                        first_child + 1)
        if end_nm < end:
            slot = split_missing_slot[j]
            _mark_range(data, index_row, label_row, end_nm, end, slot, marks, children,
                        first_child + slot)


mark_and_count_serial = serial_twin(mark_and_count)


@pjit
def pack_bits(flags, bits):
    """bits[w] bit b = flags[64 w + b]: the side flags as a bitset (n / 8 bytes), which stays
    in cache when :func:`partition` looks samples up in random order."""
    n = flags.shape[0]
    for w in prange(bits.shape[0]):
        word = np.uint64(0)
        first = w * 64
        for b in range(min(64, n - first)):
            word |= np.uint64(flags[first + b]) << np.uint64(b)
        bits[w] = word


pack_bits_serial = serial_twin(pack_bits)


_ALL_LANES = np.uint64((1 << COMPRESS_LANES) - 1)


@jit(inline="always")
def left_lanes(index_row, at, goes_left_bits):
    """The mask of the samples ``index_row[at + b]``, b < COMPRESS_LANES, that go left (bit
    b set: the sample's bit in ``goes_left_bits`` is)."""
    mask = np.uint64(0)
    for b in range(COMPRESS_LANES):
        i = np.uint64(index_row[at + np.uint64(b)])
        mask |= ((goes_left_bits[i >> _SIX] >> (i & _LOW6)) & _ONE) << np.uint64(b)
    return mask


@pjit
def partition(sorted_index, sorted_value, sorted_label, goes_left_bits, split_start,
              split_end, split_feature):
    """Stable partition of every feature's segment of every split node, parallel over features.

    Invariant after the call, for node j and every feature but ``split_feature[j]`` (whose
    segment is left as it is: the caller passes the split's own feature when its segment is
    already left | right, else -1): positions ``split_start[j]:split_start[j] + n_left`` hold
    its left samples (``n_left`` of them: the set bits of ``goes_left_bits`` among its
    samples) and the rest its right samples, each group in increasing feature value. Labels
    move with their samples.
    """
    n_features = sorted_index.shape[0]
    n_split = split_start.shape[0]
    with_labels = sorted_label.shape[1] == sorted_index.shape[1]
    longest = 0
    for j in range(n_split):
        longest = max(longest, split_end[j] - split_start[j])
    for f in prange(n_features):
        index_row = sorted_index[f]
        value_row = sorted_value[f]
        label_row = sorted_label[f] if with_labels else sorted_label[0]
        spill_index = np.empty(longest, dtype=sorted_index.dtype)
        spill_value = np.empty(longest, dtype=sorted_value.dtype)
        spill_label = np.empty(longest if with_labels else 0, dtype=sorted_label.dtype)
        for j in range(n_split):
            if split_feature[j] == f:
                continue  # already ordered left | right by the split itself
            # unsigned positions and sample indices: numba adds no negative-index fix-up
            # to the loads and stores (a third of this loop's time when it did)
            start = np.uint64(split_start[j])
            n = np.uint64(split_end[j]) - start
            # branch-free: every sample is written both in place at the left side's end
            # (never past the position being read) and into the spill at the right side's
            # end; only its own side's count moves on, so a right sample's place in the
            # segment is taken by the next left one, and the spill (the right side) is
            # copied after the left side in one loop. Against the whole segment written to
            # the spill and copied back in a loop per array: 1.84 against 2.11 ns a move in
            # segments of about 12 samples (the deep levels of a forest tree), 1.50 against
            # 1.59 at 32, the same for long segments.
            left = np.uint64(0)
            blocked = np.uint64(0)
            if COMPRESS:
                # COMPRESS_LANES samples at a time: each side's in one compress store, the
                # right side's first (into the spill, before the left side's store in place
                # can overwrite them). Standalone, one feature of 95,000 samples (segments
                # of 200 to 95,000): 0.49-0.54 of the time of the loop below; segments of
                # 40 0.73, of 12 (no whole block) 1.0
                while blocked + np.uint64(COMPRESS_LANES) <= n:
                    at = start + blocked
                    to_left = left_lanes(index_row, at, goes_left_bits)
                    to_right = to_left ^ _ALL_LANES
                    compress_store(spill_index, blocked - left, index_row, at, to_right)
                    compress_store(spill_value, blocked - left, value_row, at, to_right)
                    compress_store(index_row, start + left, index_row, at, to_left)
                    compress_store(value_row, start + left, value_row, at, to_left)
                    if with_labels:
                        compress_store(spill_label, blocked - left, label_row, at, to_right)
                        compress_store(label_row, start + left, label_row, at, to_left)
                    left += popcount(to_left)
                    blocked += np.uint64(COMPRESS_LANES)
            for k in range(blocked, n):
                i = np.uint64(index_row[start + k])
                value = value_row[start + k]
                to_left = (goes_left_bits[i >> _SIX] >> (i & _LOW6)) & _ONE
                index_row[start + left] = i
                value_row[start + left] = value
                spill_index[k - left] = i
                spill_value[k - left] = value
                if with_labels:
                    label = label_row[start + k]
                    label_row[start + left] = label
                    spill_label[k - left] = label
                left += to_left
            for k in range(n - left):
                index_row[start + left + k] = spill_index[k]
                value_row[start + left + k] = spill_value[k]
                if with_labels:
                    label_row[start + left + k] = spill_label[k]


partition_serial = serial_twin(partition)


@pjit
def partition_into(source, goes_left_bits, split_start, split_end, split_left, target):
    """:func:`partition` of every feature's segment of every split node from the sorted
    arrays of the :class:`TreeData` ``source`` into those of ``target``, at the same
    positions, parallel over features: node j's left samples (``split_left[j]`` of them, the
    set bits of ``goes_left_bits`` among its samples) to ``split_start[j]:split_start[j] +
    split_left[j]`` and the rest after them, each group in increasing feature value, labels
    moving with their samples. The split feature's segment too: it comes out as
    :func:`partition` leaves it (already left | right, unless its missing values go left).

    Knowing where the right side starts, each sample is written once, at its own side's next
    position, where :func:`partition` writes it on both sides and copies the right side
    back. A standalone copy of the two loops (one float32 feature of 95,000 samples, its
    side bits drawn at random, the segments of a level side by side, medians of 30, two
    runs while another process ran; :func:`partition`'s comment measures another setup):
    segments of 12 samples (a forest tree's deep levels) 2.2-2.3 against 3.9-4.1 ns a move,
    of 100 to 95,000 samples 1.3-2.1 against 1.7-2.7 ns. The depth-wise growth alternates
    between two copies of the sorted arrays (see
    :data:`jitree.kernels.grower.PING_PONG_BYTES`)."""
    sorted_index = source.sorted_index
    sorted_value = source.sorted_value
    sorted_label = source.sorted_label
    target_index = target.sorted_index
    target_value = target.sorted_value
    target_label = target.sorted_label
    with_labels = sorted_label.shape[1] == sorted_index.shape[1]
    for f in prange(sorted_index.shape[0]):
        index_row = sorted_index[f]
        value_row = sorted_value[f]
        label_row = sorted_label[f] if with_labels else sorted_label[0]
        out_index = target_index[f]
        out_value = target_value[f]
        out_label = target_label[f] if with_labels else target_label[0]
        for j in range(split_start.shape[0]):
            # unsigned positions and sample indices: no negative-index fix-ups
            start = np.uint64(split_start[j])
            end = np.uint64(split_end[j])
            left = start
            right = start + np.uint64(split_left[j])
            blocked = start
            if COMPRESS:
                # COMPRESS_LANES samples at a time, each side's in one compress store (see
                # partition)
                while blocked + np.uint64(COMPRESS_LANES) <= end:
                    to_left = left_lanes(index_row, blocked, goes_left_bits)
                    to_right = to_left ^ _ALL_LANES
                    compress_store(out_index, left, index_row, blocked, to_left)
                    compress_store(out_index, right, index_row, blocked, to_right)
                    compress_store(out_value, left, value_row, blocked, to_left)
                    compress_store(out_value, right, value_row, blocked, to_right)
                    if with_labels:
                        compress_store(out_label, left, label_row, blocked, to_left)
                        compress_store(out_label, right, label_row, blocked, to_right)
                    n_left = popcount(to_left)
                    left += n_left
                    right += np.uint64(COMPRESS_LANES) - n_left
                    blocked += np.uint64(COMPRESS_LANES)
            for k in range(blocked, end):
                i = np.uint64(index_row[k])
                to_left = (goes_left_bits[i >> _SIX] >> (i & _LOW6)) & _ONE
                at = left if to_left else right
                out_index[at] = i
                out_value[at] = value_row[k]
                if with_labels:
                    out_label[at] = label_row[k]
                left += to_left
                right += _ONE - to_left


partition_into_serial = serial_twin(partition_into)


@pjit
def partition_multiway(sorted_index, sorted_value, sorted_label, child_slot, split_start,
                       split_end, child_offset, child_count):
    """Stable partition of every feature's segment of every multiway node into its children,
    parallel over features: after the call node j's samples of slot s occupy, in every
    feature, the positions from ``split_start[j] + sum(child_count[first:first + s])`` on
    (``first = child_offset[j]``), still in increasing feature value (NaN last)."""
    n_features = sorted_index.shape[0]
    n_split = split_start.shape[0]
    with_labels = sorted_label.shape[1] == sorted_index.shape[1]
    longest = 0
    widest = 0
    for j in range(n_split):
        longest = max(longest, split_end[j] - split_start[j])
        widest = max(widest, child_offset[j + 1] - child_offset[j])
    for f in prange(n_features):
        index_row = sorted_index[f]
        value_row = sorted_value[f]
        label_row = sorted_label[f] if with_labels else sorted_label[0]
        spill_index = np.empty(longest, dtype=sorted_index.dtype)
        spill_value = np.empty(longest, dtype=sorted_value.dtype)
        spill_label = np.empty(longest if with_labels else 0, dtype=sorted_label.dtype)
        position = np.empty(widest, dtype=np.int64)
        for j in range(n_split):
            start = split_start[j]
            first = child_offset[j]
            filled = 0
            for s in range(child_offset[j + 1] - first):
                position[s] = filled
                filled += child_count[first + s]
            for k in range(start, split_end[j]):
                i = index_row[k]
                s = child_slot[i]
                to = position[s]
                position[s] = to + 1
                spill_index[to] = i
                spill_value[to] = value_row[k]
                if with_labels:
                    spill_label[to] = label_row[k]
            for k in range(split_end[j] - start):
                index_row[start + k] = spill_index[k]
                value_row[start + k] = spill_value[k]
                if with_labels:
                    label_row[start + k] = spill_label[k]
