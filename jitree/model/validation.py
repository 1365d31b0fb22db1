"""Input validation: everything a kernel relies on is checked here, before it runs."""

import numbers
import warnings

import numpy as np

from ..exceptions import DataConversionWarning, NotFittedError, compatible
from ..kernels.checks import any_nonfinite, count_nan


def _is_dataframe(X):
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "to_numpy")


def is_chunk_iterator(X):
    """An iterator (e.g. a generator) of chunks, as opposed to an array-like X."""
    return hasattr(X, "__next__") and not hasattr(X, "shape")


def feature_names_of(X):
    """Column names of a DataFrame when all are strings, else None."""
    if not _is_dataframe(X):
        return None
    names = np.asarray(X.columns, dtype=object)
    if all(isinstance(name, str) for name in names):
        return names
    return None


def float_bits(X):
    """(X viewed as unsigned ints, exponent mask) for the kernels' NaN/infinity scans."""
    if X.dtype == np.float32:
        return X.view(np.uint32), np.uint32(0x7F800000)
    return X.view(np.uint64), np.uint64(0x7FF0000000000000)


# below this many values a NumPy pass beats the parallel kernel's launch and keeps small fits
# off the thread pool (and off that kernel's compilation)
_SMALL_SCAN = 1 << 16


def has_nonfinite(X):
    """Whether a float X holds a NaN or an infinity: one pass, no copy for large X."""
    if X.size <= _SMALL_SCAN:
        return not bool(np.isfinite(X).all())
    return bool(any_nonfinite(*float_bits(X)))


def raise_nonfinite(X, name):
    """Raise the ValueError for a float X known to hold NaN or infinity."""
    n_nan = count_nan(X)
    if n_nan:
        raise ValueError(f"Input {name} contains NaN ({n_nan} entries); {name} must not hold "
                         "missing values")
    raise ValueError(f"Input {name} contains infinity or a value too large for {X.dtype}")


def match_feature_names(estimator, fitted_names, names, has_shape=True, stacklevel=4):
    """Check a table's column ``names`` against the ``fitted_names`` of ``estimator``.

    Returns the fitted names when the table holds the same columns in another order (select
    them to match by name), else None. Raises ValueError when columns are missing or unknown;
    warns when only one side has names (``has_shape``: X is an array, not a plain list).
    """
    if fitted_names is not None and names is not None:
        if np.array_equal(names, fitted_names):
            return None
        missing = [c for c in fitted_names if c not in set(names)]
        unexpected = [c for c in names if c not in set(fitted_names)]
        if missing or unexpected or len(names) != len(fitted_names):
            raise ValueError(
                "The feature names should match those that were passed during fit.\n"
                f"Feature names unseen at fit time: {unexpected}\n"
                f"Feature names seen at fit time, yet now missing: {missing}")
        return list(fitted_names)
    name = type(estimator).__name__
    if fitted_names is not None and has_shape:
        warnings.warn(f"X does not have valid feature names, but {name} was fitted with "
                      "feature names", UserWarning, stacklevel=stacklevel)
    elif fitted_names is None and names is not None:
        warnings.warn(f"X has feature names, but {name} was fitted without feature names",
                      UserWarning, stacklevel=stacklevel)
    return None


def check_X(X, name="X", finite=True, allow_nan=False, report=None):
    """Validate X and return a 2-D float32 or float64 array (C or F order, copied only if the
    dtype must change). ``finite=False`` leaves the NaN/infinity check to the caller (the
    prediction kernel does it during its own pass). ``report``: a dict that gets ``"nan":
    True`` when X holds a NaN (with ``allow_nan``). ``allow_nan=True`` accepts NaN (a missing
    value) but still refuses infinity."""
    if hasattr(X, "toarray") or hasattr(X, "tocsr"):
        raise TypeError(
            f"{name} is a sparse matrix; jitree needs dense data (call X.toarray())")
    if _is_dataframe(X):
        for column, dtype in zip(X.columns, X.dtypes, strict=True):
            kind = getattr(dtype, "kind", "O")
            if kind not in "biuf":
                raise TypeError(
                    f"column {column!r} of {name} has dtype {dtype}; jitree needs numeric "
                    "columns: declare it in categorical_features or ordinal_features to use "
                    "its values as categories")
        X = X.to_numpy()
    if X is None:
        raise ValueError(f"{name} is None; expected a 2-D array of shape "
                         "(n_samples, n_features)")
    array = np.asarray(X) if not isinstance(X, np.ndarray) else X
    if array.dtype.kind == "c":
        raise ValueError(f"Complex data not supported in {name}")
    if array.dtype.kind == "O":
        try:
            array = array.astype(np.float64)
        except (TypeError, ValueError) as error:
            raise TypeError(
                f"{name} holds non-numeric objects ({error}); the argument must be a string "
                "or a real number for every entry of a numeric feature") from None
    elif array.dtype.kind in "US":
        raise TypeError(f"{name} holds strings (dtype {array.dtype}); the argument must be "
                        "a string or a number, and jitree needs numeric features")
    elif array.dtype.kind not in "biuf":
        raise TypeError(f"{name} has unsupported dtype {array.dtype}")
    if array.ndim != 2:
        raise ValueError(
            f"Expected 2D array for {name}, got {array.ndim}D array instead with shape "
            f"{array.shape}. Reshape your data with X.reshape(-1, 1) for a single feature or "
            "X.reshape(1, -1) for a single sample.")
    if array.dtype not in (np.float32, np.float64):
        array = array.astype(np.float64)
    n_samples, n_features = array.shape
    if n_samples == 0:
        raise ValueError(f"Found array with 0 sample(s) (shape={array.shape}) while a "
                         "minimum of 1 is required.")
    if n_features == 0:
        raise ValueError(f"Found array with 0 feature(s) (shape={array.shape}) while a "
                         "minimum of 1 is required.")
    if not (array.flags.c_contiguous or array.flags.f_contiguous):
        array = np.ascontiguousarray(array)
    # the one-pass bit scan stays the fast path; telling NaN from infinity costs a second
    # pass, paid only when the scan found something
    if finite and has_nonfinite(array):
        if not allow_nan:
            raise_nonfinite(array, name)
        if np.isinf(array).any():
            raise ValueError(f"Input {name} contains infinity or a value too large for "
                             f"{array.dtype}; only NaN is accepted as a missing value")
        if report is not None:
            report["nan"] = True
    return array


def check_y(y, n_samples, regression):
    """Validate y: 1-D (a column vector is flattened with a warning), finite, n_samples long."""
    if y is None:
        raise ValueError("requires y to be passed, but the target y is None")
    if _is_dataframe(y):
        y = y.to_numpy()
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn("A column-vector y was passed when a 1d array was expected. Please "
                      "change the shape of y to (n_samples,), for example using ravel().",
                      compatible(DataConversionWarning), stacklevel=3)
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"y should be a 1d array, got an array of shape {y.shape} instead; "
                         "multi-output targets are not supported")
    if y.shape[0] != n_samples:
        raise ValueError(f"X and y have inconsistent numbers of samples: X has {n_samples}, "
                         f"y has {y.shape[0]}")
    if y.dtype.kind == "c":
        raise ValueError("Complex data not supported in y")
    if regression:
        if y.dtype.kind not in "biuf":
            try:
                y = y.astype(np.float64)
            except (TypeError, ValueError):
                raise ValueError(f"y must be numeric for regression, got dtype {y.dtype}") \
                    from None
        y = y.astype(np.float64)
        if np.isnan(y).any():
            raise ValueError("Input y contains NaN.")
        if not np.isfinite(y).all():
            raise ValueError("Input y contains infinity or a value too large for "
                             "dtype('float64').")
    else:
        if y.dtype.kind == "f":
            if np.isnan(y).any():
                raise ValueError("Input y contains NaN.")
            if not np.isfinite(y).all():
                raise ValueError("Input y contains infinity or a value too large for "
                                 "dtype('float64').")
            if np.any(y != np.round(y)):
                raise ValueError("Unknown label type: continuous. y of a classifier must hold "
                                 "class labels (ints, strings, ...), not continuous values")
        elif y.dtype.kind == "O":
            if any(v is None or (isinstance(v, float) and np.isnan(v)) for v in y):
                raise ValueError("Input y contains NaN or None.")
            kinds = {type(v) for v in y}
            if len(kinds) > 1 and not all(issubclass(k, numbers.Number) for k in kinds):
                names = sorted(k.__name__ for k in kinds)
                raise ValueError(f"Unknown label type: y mixes {names}")
    return y


def check_sample_weight(sample_weight, n_samples):
    """Validate sample_weight: None (all ones) or n_samples finite, non-negative numbers with
    a positive sum. Returns a float64 array."""
    if sample_weight is None:
        return np.ones(n_samples)
    if isinstance(sample_weight, numbers.Number):
        sample_weight = np.full(n_samples, sample_weight, dtype=np.float64)
    weight = np.asarray(sample_weight)
    if weight.dtype.kind not in "biuf":
        raise TypeError(f"sample_weight must be numeric, got dtype {weight.dtype}")
    weight = weight.astype(np.float64)
    if weight.ndim != 1 or weight.shape[0] != n_samples:
        raise ValueError(f"sample_weight.shape == {weight.shape}, expected ({n_samples},)")
    if np.isnan(weight).any():
        raise ValueError("sample_weight contains NaN")
    if not np.isfinite(weight).all():
        raise ValueError("sample_weight contains infinity")
    if (weight < 0).any():
        raise ValueError("Negative values in sample_weight are not allowed")
    if not weight.sum() > 0:
        raise ValueError("sample_weight is zero everywhere: at least one weight must be positive "
                         "(their sum is 0)")
    return weight


def check_is_fitted(estimator, attribute="tree_"):
    if not hasattr(estimator, attribute):
        raise compatible(NotFittedError)(
            f"This {type(estimator).__name__} instance is not fitted yet. Call 'fit' with "
            "appropriate arguments before using this estimator.")
