"""Presort: each feature's samples in increasing order, once per fit.

The sort itself is NumPy's (vectorised, GIL released, run per feature on a thread pool by the
builder). Canonical order: increasing value, equal values by increasing sample index, so the
result does not depend on the sort's internals.

- float32 columns: each sample becomes one uint64 key, (order-preserving bits of the value)
  << 32 | sample index; sorting the keys sorts by value then index, and the sorted values and
  indices are read back from the keys without a gather (:func:`float32_keys`,
  :func:`fill_from_keys`).
- float64 columns: argsort, then :func:`fill_sorted` puts equal values in index order.
"""

import numpy as np
from numba import prange

from ._jit import jit, pjit


@jit
def fill_sorted(column, order, label, f, sorted_index, sorted_value, sorted_label):
    """Write feature ``f``'s sorted segment arrays from ``order = argsort(column)``.

    Equal values are put in increasing sample index (a quicksort leaves them in any order), so
    the result is the stable order and does not depend on the sort's internals. NaN (sorted
    last by NumPy) count as equal to each other. Fills
    ``sorted_index[f]``, ``sorted_value[f]`` and, for classification (``label`` non-empty),
    ``sorted_label[f]`` (the class of each sorted sample).
    """
    n = order.shape[0]
    index_row = sorted_index[f]
    value_row = sorted_value[f]
    for k in range(n):
        index_row[k] = order[k]
        value_row[k] = column[order[k]]
    # insertion sort of the sample indices inside each run of equal values (runs are short)
    run_start = 0
    for k in range(1, n + 1):
        if k < n and (value_row[k] == value_row[run_start]
                      or (np.isnan(value_row[k]) and np.isnan(value_row[run_start]))):
            continue
        for a in range(run_start + 1, k):
            i = index_row[a]
            b = a - 1
            while b >= run_start and index_row[b] > i:
                index_row[b + 1] = index_row[b]
                b -= 1
            index_row[b + 1] = i
        run_start = k
    if label.shape[0]:
        label_row = sorted_label[f]
        for k in range(n):
            label_row[k] = label[index_row[k]]


_SIGN = np.uint32(0x80000000)
_INFINITY = np.uint32(0x7F800000)
_NAN = np.uint32(0x7FC00000)
_LOW32 = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)


@jit
def float32_keys(column, keys):
    """keys[i] = monotone uint32 image of column[i] (with -0.0 as +0.0, every NaN as one
    positive NaN, which sorts after +inf) << 32 | i."""
    bits = column.view(np.uint32)
    for i in range(column.shape[0]):
        u = bits[i]
        if u == _SIGN:
            u = np.uint32(0)
        if (u & ~_SIGN) > _INFINITY:
            u = _NAN
        u = ~u if u & _SIGN else u | _SIGN
        keys[i] = (np.uint64(u) << _SHIFT) | np.uint64(i)


@jit
def fill_from_keys(keys, label, f, sorted_index, sorted_value, sorted_label):
    """Write feature ``f``'s sorted arrays from its sorted keys (see :func:`float32_keys`)."""
    index_row = sorted_index[f]
    value_bits = sorted_value[f].view(np.uint32)
    for k in range(keys.shape[0]):
        key = keys[k]
        index_row[k] = np.int32(key & _LOW32)
        u = np.uint32(key >> _SHIFT)
        value_bits[k] = u & ~_SIGN if u & _SIGN else ~u
    if label.shape[0]:
        label_row = sorted_label[f]
        for k in range(keys.shape[0]):
            label_row[k] = label[index_row[k]]


@pjit
def keep_samples(sorted_index, sorted_value, sorted_label, number, out_index, out_value,
                 out_label):
    """Copy the sorted arrays without the samples whose ``number`` is -1, sample ``i``
    becoming sample ``number[i]`` (the order is unchanged, so the copies are sorted too).
    Parallel over features. Used to grow each tree of a forest on its own samples from one
    shared presort."""
    with_labels = (sorted_label.shape[1] == sorted_index.shape[1]
                   and out_label.shape[1] == out_index.shape[1])  # labels carried over
    n_kept = np.uint64(out_index.shape[1])
    for f in prange(sorted_index.shape[0]):
        # branch-free (a bootstrap keeps ~63% of the samples: a branch would mispredict): every
        # sample is written at the next free position, which only a kept one advances; the loop
        # ends once all kept samples are written. Unsigned: no wraparound fix-ups.
        write = np.uint64(0)
        for k in range(np.uint64(sorted_index.shape[1])):
            if write == n_kept:
                break
            i = number[np.uint64(sorted_index[f, k])]
            out_index[f, write] = i
            out_value[f, write] = sorted_value[f, k]
            if with_labels:
                out_label[f, write] = sorted_label[f, k]
            write += np.uint64(i >= 0)
