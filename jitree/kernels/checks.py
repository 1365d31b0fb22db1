"""Input scans that must be fast on large X (the Python layer decides what they mean)."""

import numpy as np
from numba import prange

from ._jit import jit, pjit

_CHUNK_ROWS = 4096


@jit
def nonfinite_rows(bits, first, last, exponent_mask):
    """Whether a value of rows first:last is NaN or +-inf. ``bits``: X viewed as unsigned
    ints of its width; a value is not finite when its exponent field is all ones. No branch in
    the loop, so it vectorises (measured faster than an integer-carry or a float trick)."""
    found = False
    for i in range(first, last):
        for j in range(bits.shape[1]):
            found |= (bits[i, j] & exponent_mask) == exponent_mask
    return found


@pjit
def any_nonfinite(bits, exponent_mask):
    """Whether any value of X is NaN or +-inf: one parallel pass, no temporary array."""
    n_rows = bits.shape[0]
    n_chunks = (n_rows + _CHUNK_ROWS - 1) // _CHUNK_ROWS
    found = np.zeros(n_chunks, dtype=np.uint8)
    for chunk in prange(n_chunks):
        first = chunk * _CHUNK_ROWS
        found[chunk] = nonfinite_rows(bits, first, min(n_rows, first + _CHUNK_ROWS),
                                      exponent_mask)
    return found.any()


@jit
def count_nan(X):
    """Number of NaN entries (the slow path, once a non-finite value is known to exist)."""
    count = 0
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            if np.isnan(X[i, j]):
                count += 1
    return count
