"""Encoding of X for prediction: numeric columns copied, categorical (and ordinal) columns
mapped to their fitted codes, in one parallel pass that writes row-major output (the layout the
prediction walks read a row at a time). The Python encoder
(:class:`jitree.model.categories.FeatureEncoder`) takes this path for float NumPy arrays whose
categories are numbers; it keeps the general one for everything else and for error messages.
"""

import numpy as np
from numba import prange

from ._jit import pjit

ENCODE_ROWS = 4096  # rows per parallel task


@pjit
def encode_numeric(X, coded, values, codes, offsets, out):
    """out[i, j] = X[i, j] for the columns with ``coded[j] == 0``; for the others, the code of
    X[i, j] among the column's fitted category values ``values[offsets[j]:offsets[j + 1]]``
    (float64, increasing; ``codes`` the codes in the same order), found by binary search, or
    NaN when the value is missing or not a fitted category. Returns whether X holds an
    infinity (the caller then takes the general path, which names the column)."""
    n_rows = X.shape[0]
    n_columns = X.shape[1]
    n_chunks = (n_rows + ENCODE_ROWS - 1) // ENCODE_ROWS
    infinite = np.zeros(n_chunks, dtype=np.uint8)
    for chunk in prange(n_chunks):
        found_infinite = False
        for i in range(chunk * ENCODE_ROWS, min(n_rows, (chunk + 1) * ENCODE_ROWS)):
            for j in range(n_columns):
                value = X[i, j]
                found_infinite |= value == np.inf or value == -np.inf
                if coded[j] == 0:
                    out[i, j] = value
                    continue
                x = np.float64(value)
                low = offsets[j]
                high = offsets[j + 1]
                end = high
                while low < high:
                    middle = (low + high) // 2
                    if values[middle] < x:
                        low = middle + 1
                    else:
                        high = middle
                out[i, j] = codes[low] if low < end and values[low] == x else np.nan
        infinite[chunk] = found_infinite
    return infinite.any()
