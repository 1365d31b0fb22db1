"""Presort: each feature's samples in increasing order, once per fit.

Canonical order: increasing value (NaN last), equal values (-0.0 and 0.0 too) by increasing
sample index, so the result does not depend on a sort's internals. Both sorts are radix
sorts the package already has (the builder runs them per feature on a thread pool):

- float32 columns: each sample becomes one uint64 key, (order-preserving bits of the value)
  << 32 | sample index (:func:`float32_keys`), sorted by the value's 32 bits with
  :func:`jitree.kernels.quantiles.sort_by_rank`; the sorted values and indices are read back
  from the keys (:func:`fill_from_keys`). 16 bytes of scratch a sample.
- float64 columns: :func:`jitree.kernels.sample_order.argsort_keys`, the sample-order
  growth's sort (:func:`fill_sorted`). 32 bytes of scratch a sample.
"""

import numpy as np
from numba import prange

from ._jit import jit, pjit
from .quantiles import sort_by_rank
from .sample_order import argsort_keys


@jit
def fill_sorted(column, keys, label, f, sorted_index, sorted_value, sorted_label):
    """Sort the float64 ``column`` (see :func:`argsort_keys`; ``keys``: its scratch for
    ``column.shape[0]`` keys) and write feature ``f``'s sorted segment arrays:
    ``sorted_index[f]`` (the samples in canonical order), ``sorted_value[f]`` (their values)
    and, for classification (``label`` non-empty), ``sorted_label[f]`` (the class of each
    sorted sample)."""
    n = column.shape[0]
    key = keys[0]
    for k in range(n):
        key[k] = column[k]
    argsort_keys(keys, n)
    order = keys[3]
    index_row = sorted_index[f]
    value_row = sorted_value[f]
    for k in range(n):
        i = order[k]
        index_row[k] = i
        value_row[k] = column[i]
    if label.shape[0]:
        label_row = sorted_label[f]
        for k in range(n):
            label_row[k] = label[order[k]]


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
def fill_from_keys(column, keys, spare, label, f, sorted_index, sorted_value, sorted_label):
    """Sort the float32 ``column`` by its keys (:func:`float32_keys`, radix-sorted on the
    value's bits; ``keys`` and ``spare``: uint64 scratch of ``column.shape[0]`` entries) and
    write feature ``f``'s sorted arrays, the values read back from the keys."""
    float32_keys(column, keys)
    sort_by_rank(keys.view(np.int64), spare.view(np.int64), 32)
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
