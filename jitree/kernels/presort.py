"""Presort: each feature's samples in increasing order, once per fit.

The argsort itself is NumPy's (vectorised quicksort, GIL released, run per feature on a thread
pool by the builder); :func:`fill_sorted` then makes the order canonical and gathers what the
split search scans sequentially.
"""

import numpy as np

from ._jit import jit


@jit
def fill_sorted(column, order, label, f, sorted_index, sorted_value, sorted_label):
    """Write feature ``f``'s sorted segment arrays from ``order = argsort(column)``.

    Equal values are put in increasing sample index (a quicksort leaves them in any order), so
    the result is the stable order and does not depend on the sort's internals. Fills
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
        if k < n and value_row[k] == value_row[run_start]:
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
