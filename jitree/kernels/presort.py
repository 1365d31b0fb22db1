"""Presort: each feature's samples in increasing order, once per fit."""

import numpy as np
from numba import prange

from ._jit import pjit


@pjit
def presort(X, sorted_index, sorted_value):
    """sorted_index[f] = argsort(X[:, f]) (stable), sorted_value[f] = X[sorted_index[f], f].

    Parallel over features; each column is gathered into a contiguous buffer first, so C- and
    F-ordered X are both read without a copy of the whole matrix.
    """
    n_samples, n_features = X.shape
    for f in prange(n_features):
        column = np.empty(n_samples, dtype=X.dtype)
        for i in range(n_samples):
            column[i] = X[i, f]
        order = np.argsort(column, kind="mergesort")
        for k in range(n_samples):
            i = order[k]
            sorted_index[f, k] = i
            sorted_value[f, k] = column[i]
