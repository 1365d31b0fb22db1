"""Presort: each feature's samples in increasing order, once per fit.

Canonical order: increasing value (NaN last), equal values (-0.0 and 0.0 too) by increasing
sample index, so the result does not depend on a sort's internals. The sort is
:func:`jitree.kernels.sample_order.argsort_keys`, the radix sort the sample-order growth
uses at each node (the builder runs it per feature on a thread pool).
"""

import numpy as np
from numba import prange

from ._jit import jit, pjit
from .sample_order import argsort_keys


@jit
def fill_sorted(column, keys, canonical, label, f, sorted_index, sorted_value, sorted_label):
    """Sort ``column`` (see :func:`argsort_keys`; ``keys``: its scratch for
    ``column.shape[0]`` keys) and write feature ``f``'s sorted segment arrays:
    ``sorted_index[f]`` (the samples in canonical order), ``sorted_value[f]`` (their values;
    with ``canonical``, -0.0 written as 0.0 and every NaN as NumPy's one NaN, as float32
    columns have always been stored) and, for classification (``label`` non-empty),
    ``sorted_label[f]`` (the class of each sorted sample)."""
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
        v = column[i]
        if canonical:
            if v == 0.0:
                v = 0.0
            elif v != v:
                v = np.nan
        value_row[k] = v
    if label.shape[0]:
        label_row = sorted_label[f]
        for k in range(n):
            label_row[k] = label[order[k]]


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
