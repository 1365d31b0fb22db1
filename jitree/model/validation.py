"""Input validation: everything a kernel relies on is checked here, before it runs."""

import functools
import numbers
import os
import sys
import warnings

import numpy as np

from ..exceptions import DataConversionWarning, NotFittedError, compatible
from ..kernels.checks import any_nonfinite, count_nan


def _is_dataframe(X):
    """Whether X is a table (pandas, polars, ...): it has columns, dtypes and to_numpy.
    Each is looked for on X's type first: ``hasattr(frame, "dtypes")`` builds pandas'
    Series of dtypes (about 80 us, most of a one-row prediction)."""
    return all(hasattr(type(X), name) or hasattr(X, name)
               for name in ("columns", "dtypes", "to_numpy"))


def is_chunk_iterator(X):
    """An iterator (e.g. a generator) of chunks, as opposed to an array-like X."""
    return hasattr(type(X), "__next__") and not hasattr(X, "shape")


def feature_names_of(X):
    """Column names of a DataFrame when all are strings, else None."""
    if not _is_dataframe(X):
        return None
    names = np.asarray(X.columns, dtype=object)
    if all(isinstance(name, str) for name in names):
        return names
    return None


def repeated_names(names):
    """The names given to several columns of ``names``, in order of first appearance: such
    columns cannot be matched by name (X's at fit and at predict, a file's header)."""
    seen, repeated = set(), []
    for name in names:
        if name in seen and name not in repeated:
            repeated.append(name)
        seen.add(name)
    return repeated


def check_encodable_names(names):
    """ValueError for a column name that is not valid Unicode text (a lone surrogate such as
    "\\ud800"): it could be neither saved nor matched reliably; or for a name given to
    several columns: a DataFrame at predict could not be matched to them by name."""
    repeated = repeated_names(names)
    if repeated:
        raise ValueError(f"X has several columns named {', '.join(map(repr, repeated))}: "
                         "feature names must be unique (predict matches columns by name)")
    for name in names:
        try:
            name.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"feature name {name!r} is not valid Unicode text (it holds a lone "
                             "surrogate code point); rename the column") from None


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


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def user_stacklevel():
    """The ``stacklevel`` of a warning raised by the caller that points at the first frame
    outside jitree: the user's call, at whatever depth jitree's own calls put it."""
    frame = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE + os.sep):
        frame = frame.f_back
        level += 1
    return level


def match_feature_names(estimator, fitted_names, names, has_shape=True):
    """Check a table's column ``names`` against the ``fitted_names`` of ``estimator``.

    Returns the fitted names when the table holds the same columns in another order (select
    them to match by name), else None. Raises ValueError when columns are missing or unknown;
    warns when only one side has names (``has_shape``: X is an array, not a plain list),
    the warning pointing at the user's call.
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
                      "feature names", UserWarning, stacklevel=user_stacklevel())
    elif fitted_names is None and names is not None:
        warnings.warn(f"X has feature names, but {name} was fitted without feature names",
                      UserWarning, stacklevel=user_stacklevel())
    return None


def frame_to_numpy(frame, dtypes=None):
    """A DataFrame of numeric columns as a NumPy array; the missing values (``pd.NA``) of
    pandas' nullable Int64 / Float64 / boolean columns become NaN. Bool columns become 0.0 and
    1.0 beside the others (pandas alone would make an object array of every entry, each
    then converted in Python: 4 s for 500k x 32). ``dtypes``: the frame's column dtypes
    when the caller has them (each ``frame.dtypes`` builds a Series)."""
    dtypes = list(frame.dtypes) if dtypes is None else dtypes
    if all(isinstance(dtype, np.dtype) for dtype in dtypes):
        if any(dtype.kind == "b" for dtype in dtypes):
            return frame.to_numpy(dtype=np.float64)
        return frame.to_numpy()
    return frame.to_numpy(dtype=np.float64, na_value=np.nan)


@functools.cache
def memory_bytes():
    """This machine's physical memory in bytes, or None where it cannot be read."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, OSError, ValueError):
        return None


# -- scipy.sparse input ------------------------------------------------------------------------
# Prediction reads a sparse X by blocks of rows made dense, of at most this many values
# (32 MiB of float64): the memory of a prediction grows with a block, not with X.
SPARSE_BLOCK_VALUES = 1 << 22
# Arrays of X's dense size a fit holds: X, and its presorted values and indices.
FIT_DENSE_COPIES = 3


def is_sparse(X):
    """A ``scipy.sparse`` matrix or array (recognised without importing scipy)."""
    return type(X).__module__.startswith("scipy.sparse") and hasattr(X, "tocsr")


def _sparse_dtype(X, name):
    """The float dtype a sparse X becomes (float32 stays float32, as for dense X)."""
    kind = X.dtype.kind
    if kind == "c":
        raise ValueError(f"Complex data not supported in {name}")
    if kind not in "biuf":
        raise TypeError(f"{name} is a sparse matrix of unsupported dtype {X.dtype}")
    return X.dtype if X.dtype in (np.float32, np.float64) else np.dtype(np.float64)


def check_shape(shape, name):
    """Raise check_X's error for a shape that is not 2-D or is empty; a no-op otherwise."""
    if len(shape) != 2 or 0 in shape:
        # a zero-stride stand-in of that shape: the same message, without allocating X
        check_X(np.broadcast_to(np.float64(0.0), shape), name=name)


def sparse_to_dense(X, name="X", copies=1, order="C"):
    """A sparse X as a dense array in ``order`` ("C" or "F"): stored values as they are (a
    stored NaN is a missing value, duplicated entries are summed, as ``X.toarray()`` does),
    every other entry 0. ``copies``: how many arrays of X's dense size the caller goes on to
    hold (a fit: the presorted indices and values besides X); a ValueError when they would
    not fit in this machine's memory."""
    check_shape(X.shape, name)
    dtype = _sparse_dtype(X, name)
    n_samples, n_features = X.shape
    needed = copies * n_samples * n_features * dtype.itemsize
    memory = memory_bytes()
    if memory is not None and needed > memory // 2:
        raise ValueError(
            f"{name} is a sparse {n_samples:,} x {n_features:,} matrix; this use of it needs "
            f"its dense copy, about {needed / 2**30:,.1f} GiB here, more than half of this "
            f"machine's {memory / 2**30:,.1f} GiB: select or hash fewer features, or use a "
            "sample of the rows (trees and random forests with the best splitter, numeric "
            "features and no missing value grow on the stored values alone)")
    return X.toarray(order=order).astype(dtype, order=order, copy=False)


def _no_duplicates(X):
    """Whether a CSR or CSC X certainly holds no duplicated entry, whatever its flag says
    (set False by hand, or unsorted indices, as TF-IDF rows made by a product of matrices
    hold them): scipy's own check of the canonical format, on a copy of X's pattern with
    its indices sorted within each row (column). 10,000 x 20,000 TF-IDF rows, 83 stored
    values a row and unsorted: 3.4 ms, where the search for duplicates that sorts every
    entry took 74 ms."""
    if X.format not in ("csr", "csc"):
        return False
    pattern = type(X)((np.zeros(X.indices.shape[0], dtype=np.int8), X.indices.copy(),
                       X.indptr), shape=X.shape)
    pattern.sort_indices()
    return bool(pattern.has_canonical_format)


def summed_as_dense(X):
    """X with its duplicated entries summed in the order ``X.toarray()`` sums them (their
    order of storage): scipy's own conversions may add them in another order, which can
    change a sum's last bit and so a threshold. X itself when it has no duplicate."""
    if getattr(X, "format", None) not in ("coo", "csr", "csc") or \
            getattr(X, "has_canonical_format", True) or _no_duplicates(X):
        return X
    entries = X.tocoo()  # the entries in their order of storage
    n_samples = X.shape[0]
    cells, inverse = np.unique(entries.col.astype(np.int64) * n_samples + entries.row,
                               return_inverse=True)
    if cells.shape[0] == entries.nnz:
        return X
    summed = np.zeros(cells.shape[0], dtype=entries.data.dtype)
    np.add.at(summed, inverse.ravel(), entries.data)  # one by one, in order
    return type(entries)((summed, (cells % n_samples, cells // n_samples)), shape=X.shape)


def check_sparse_X(X, name="X"):
    """A sparse X checked for a fit that keeps it sparse: CSC, float32 or float64,
    no infinity among its stored values (NaN: a missing value)."""
    check_shape(X.shape, name)
    dtype = _sparse_dtype(X, name)
    columns = summed_as_dense(X).tocsc().astype(dtype, copy=False)  # the fit copies it
    if np.isinf(columns.data).any():
        raise ValueError(f"Input {name} contains infinity or a value too large for {dtype}; "
                         "only NaN is accepted as a missing value")
    return columns


class CsrRows:
    """A sparse X checked for the walks that read its stored values row by row
    (:func:`jitree.kernels.predict.predict_flat_csr`): CSR arrays (int64 ``indptr``, int32
    ``indices``) and float32 or float64 values (NaN: missing), no infinity; ``columns``:
    only these columns of X, in this order (None: all). ``missing``: whether a NaN is
    stored (in X: the walk of NaN is then taken)."""

    def __init__(self, X, name="X", columns=None):
        check_shape(X.shape, name)
        dtype = _sparse_dtype(X, name)
        rows = summed_as_dense(X).tocsr()
        data = np.asarray(rows.data, dtype=dtype)
        self.missing = False
        if not np.isfinite(data).all():  # one pass in the common case
            if np.isinf(data).any():  # also in columns not read
                raise ValueError(f"Input {name} contains infinity or a value too large for "
                                 f"{dtype}")
            self.missing = True
        if columns is not None:  # only these columns, in this order
            rows = rows[:, columns]
            data = np.asarray(rows.data, dtype=dtype)
        self.data = data
        self.indptr = np.asarray(rows.indptr, dtype=np.int64)
        # scipy's usual column indices, uncopied (int64 past 2**31 - 1 columns)
        self.indices = np.asarray(rows.indices, dtype=np.int32 if X.shape[1] < 2**31
                                  else np.int64)
        self.shape = rows.shape
        self.dtype = dtype

    @property
    def arrays(self):
        """``(indptr, indices, data, n_columns)``: the rows as the CSR walk takes them."""
        return self.indptr, self.indices, self.data, self.shape[1]


def walks_as_given(X, n_features):
    """Whether X is a plain float32 or float64 NumPy array of rows of ``n_features`` columns,
    which the category walks of trees and forests read as given (an ndarray subclass such as
    np.matrix goes through the validation, which refuses it)."""
    return (type(X) is np.ndarray and X.dtype in (np.float32, np.float64) and X.ndim == 2
            and X.shape[0] > 0 and X.shape[1] == n_features)


def passes_unchanged(X, encoder):
    """Whether X, for which :func:`walks_as_given` holds, is its own validation with
    ``encoder``: every feature numeric and X C- or F-contiguous (``check_X`` then returns it
    as it is; the feature names are still to be matched). Served rows skip the checks'
    10-15 us."""
    return (X.flags.c_contiguous or X.flags.f_contiguous) and encoder.is_trivial


class CategoryValueRows:
    """A float X of categorical columns that hold the category values themselves, for the
    flat category walk of one tree (:func:`jitree.kernels.predict.predict_flat_categories`
    looks each value up among the fitted ones: no encoded copy of X). ``categories``: the
    tree's :class:`~jitree.kernels.records.FlatCategories` with the value tables of the
    estimator's encoder; ``encode()``: X through the estimator's validation, which the walk
    takes instead when X holds an infinity (it also gives the error)."""

    def __init__(self, X, categories, encode):
        self.X = X
        self.categories = categories
        self.encode = encode
        self.shape = X.shape
        self.dtype = X.dtype


def sparse_row_blocks(X, name="X", columns=None):
    """The rows of a sparse X as dense blocks of at most :data:`SPARSE_BLOCK_VALUES` values
    (at least 64 rows), in order: an iterator of chunks for prediction. ``columns``: only
    these columns, in this order (None: all). X is checked first (its errors are raised
    here, not when the first block is read)."""
    check_shape(X.shape, name)
    dtype = _sparse_dtype(X, name)
    rows = summed_as_dense(X).tocsr()
    if rows.dtype.kind == "f" and np.isinf(rows.data).any():  # also in columns not read
        raise ValueError(f"Input {name} contains infinity or a value too large for {dtype}")
    n_samples = rows.shape[0]
    width = rows.shape[1] if columns is None else len(columns)
    step = max(64, SPARSE_BLOCK_VALUES // max(1, width))

    def block(first):
        part = rows[first:first + step]
        if columns is not None:
            part = part[:, columns]
        return part.toarray().astype(dtype, copy=False)

    return (block(first) for first in range(0, n_samples, step))


def prediction_chunks(X):
    """X as an iterator of chunks predicted one at a time, or None for an X predicted whole:
    an iterator of chunks as given, a sparse X as dense blocks of rows."""
    if is_chunk_iterator(X):
        return X
    if is_sparse(X):
        return sparse_row_blocks(X)
    return None


def refuse_matrix(X, name):
    """TypeError for ``np.matrix``, whose rows stay 2-D and break the array code."""
    if isinstance(X, np.matrix):
        raise TypeError(f"{name} is a np.matrix, which jitree does not support; convert it to "
                        "a numpy array with np.asarray")


def _is_text(value):
    return isinstance(value, (str, bytes, np.str_, np.bytes_))


_is_text_entry = np.frompyfunc(_is_text, 1, 1)


def object_to_float(array, name, label=None):
    """A NumPy object array of numbers (and None / NaN) as float64.

    Strings are refused even when they spell numbers ("1.5"): a column of text is a categorical
    feature to declare, not numbers to guess. ``label``: the column, for messages.
    """
    where = f"column {label} of {name}" if label is not None else name
    text = _is_text_entry(array).astype(bool) if array.size else np.zeros(0, dtype=bool)
    if text.any():
        example = array.reshape(-1)[np.flatnonzero(text.reshape(-1))[0]]
        raise TypeError(
            f"{where} holds strings (e.g. {example!r}): non-numeric data for a numeric "
            "feature; convert the values to numbers, or declare the column in "
            "categorical_features or ordinal_features to use them as categories")
    try:
        return array.astype(np.float64)
    except OverflowError:
        raise ValueError(f"{where} holds a number too large for float64") from None
    except (TypeError, ValueError) as error:
        raise TypeError(
            f"{where} holds non-numeric objects ({error}); every entry of a numeric feature "
            "must be a real number (or None / NaN for a missing value)") from None


def refuse_non_array(X, array, name):
    """TypeError naming the type of an X that NumPy read as a 0-d object ``array`` (an
    iterator, a dict, ...): no array of numbers."""
    if array.ndim == 0 and array.dtype.kind == "O":
        raise TypeError(f"{name} must be a 2-D array-like of shape (n_samples, n_features), "
                        f"got an object of type {type(X).__name__}"
                        + (" (an iterator of chunks is read by the prediction methods only)"
                           if is_chunk_iterator(X) else ""))


def check_X(X, name="X", finite=True, allow_nan=False, report=None, dense_copies=1):
    """Validate X and return a 2-D float32 or float64 array (C or F order, copied only if the
    dtype must change). ``finite=False`` leaves the NaN/infinity check to the caller (the
    prediction kernel does it during its own pass). ``report``: a dict that gets ``"nan":
    True`` when X holds a NaN (with ``allow_nan``). ``allow_nan=True`` accepts NaN (a missing
    value) but still refuses infinity. A sparse X becomes its dense copy
    (:func:`sparse_to_dense`, ``dense_copies`` of its size to be held)."""
    if is_sparse(X):
        X = sparse_to_dense(X, name, dense_copies)
    elif hasattr(type(X), "toarray") or hasattr(type(X), "tocsr"):
        # methods, looked for on the type: a DataFrame's attributes are its columns too (a
        # column "toarray" is not a sparse matrix), and each miss costs pandas a lookup
        raise TypeError(f"{name} is a sparse matrix of type {type(X).__name__}; jitree reads "
                        "scipy.sparse matrices and arrays, or dense data (call X.toarray())")
    if _is_dataframe(X):
        dtypes = list(X.dtypes)
        numeric = [getattr(dtype, "kind", "O") in "biuf" for dtype in dtypes]
        if not all(numeric):  # the columns named only then (pandas' string columns iterate
            # slowly: a third of a one-row DataFrame's check)
            j = numeric.index(False)
            raise TypeError(
                f"column {X.columns[j]!r} of {name} has dtype {dtypes[j]}; jitree needs "
                "numeric columns: declare it in categorical_features or ordinal_features to "
                "use its values as categories")
        X = frame_to_numpy(X, dtypes)
    if X is None:
        raise ValueError(f"{name} is None; expected a 2-D array of shape "
                         "(n_samples, n_features)")
    refuse_matrix(X, name)
    array = np.asarray(X) if not isinstance(X, np.ndarray) else X
    refuse_non_array(X, array, name)
    if array.dtype.kind == "c":
        raise ValueError(f"Complex data not supported in {name}")
    if array.dtype.kind == "O":
        array = object_to_float(array, name)
    elif array.dtype.kind in "US":
        raise TypeError(f"{name} holds strings (dtype {array.dtype}): non-numeric data for a "
                        "numeric feature; convert the values to numbers, or declare the column "
                        "in categorical_features or ordinal_features to use them as categories")
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
        array = array.copy(order="K")  # a strided view of Fortran-ordered X stays so
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


def check_poisson_target(y, sample_weight=None):
    """Targets a poisson criterion can fit: none negative and a positive (weighted) sum (the
    mean a leaf predicts must be positive for the deviance to exist)."""
    if (y < 0).any():
        raise ValueError("Some value(s) of y are negative which is not allowed for Poisson "
                         "regression: criterion='poisson' needs counts or rates; y has "
                         f"{int(np.count_nonzero(y < 0))} negative value(s)")
    total = y.sum() if sample_weight is None else np.dot(sample_weight, y)
    if not total > 0:
        raise ValueError("Sum of y is not strictly positive which is necessary for Poisson "
                         "regression: criterion='poisson' needs a positive sum of y"
                         + (" (weighted by sample_weight)" if sample_weight is not None else "")
                         + f", got {total}")


def warn_column_vector():
    """The warning for a forest's y of one column, taken as a 1-D y (scikit-learn's, at the
    user's call)."""
    warnings.warn("A column-vector y was passed when a 1d array was expected. Please change "
                  "the shape of y to (n_samples,), for example using ravel().",
                  compatible(DataConversionWarning), stacklevel=user_stacklevel())


def check_y(y, n_samples, regression, multi_output=False, column_warns=True):
    """Validate y: 1-D (a column vector is flattened, with a warning if ``column_warns``),
    finite, n_samples long. ``multi_output``: a 2-D y of several columns (one per output) is
    accepted too, each column checked as a 1-D y; returned 2-D (float64 for regression). A
    single tree takes a column vector as its one output without a warning, as scikit-learn's
    trees do (its forests warn)."""
    if y is None:
        raise ValueError("requires y to be passed, but the target y is None")
    if is_sparse(y) or hasattr(type(y), "toarray"):
        raise TypeError(f"y is a sparse matrix of type {type(y).__name__}; jitree needs a "
                        "dense y (call y.toarray())")
    if _is_dataframe(y):
        y = y.to_numpy()
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        if column_warns:
            warn_column_vector()
        y = y[:, 0]
    if multi_output and y.ndim == 2:
        if y.shape[1] == 0:
            raise ValueError(f"y has {y.shape[0]} rows and no column: a multi-output y needs "
                             "one column per output")
        if y.shape[0] != n_samples:
            raise ValueError(f"X and y have inconsistent numbers of samples: X has "
                             f"{n_samples}, y has {y.shape[0]}")
        columns = [check_y(y[:, j], n_samples, regression) for j in range(y.shape[1])]
        return np.stack(columns, axis=1)
    if y.ndim != 1:
        raise ValueError(f"y should be a 1d array or, for several outputs, a 2d array, got "
                         f"an array of shape {y.shape} instead" if multi_output else
                         f"y should be a 1d array, got an array of shape {y.shape} instead; "
                         "multi-output targets are not supported here")
    if y.shape[0] != n_samples:
        raise ValueError(f"X and y have inconsistent numbers of samples: X has {n_samples}, "
                         f"y has {y.shape[0]}")
    if y.dtype.kind == "c":
        raise ValueError("Complex data not supported in y")
    if regression:
        if y.dtype.kind not in "biuf":
            try:
                y = y.astype(np.float64)
            except OverflowError:
                raise ValueError("y holds a number too large for float64") from None
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


# the refusal of weights that are all 0 (of a fit in memory, or of all the partitions of a
# cluster's)
NO_WEIGHT = ("sample_weight is zero everywhere: at least one weight must be positive "
             "(their sum is 0)")


def check_sample_weight(sample_weight, n_samples, part=False):
    """Validate sample_weight: None (all ones) or n_samples finite, non-negative numbers with
    a positive sum (``part``: of some of the rows, which may all weigh 0; the caller checks
    the whole). Returns a float64 array."""
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
    if not part and not weight.any():
        raise ValueError(NO_WEIGHT)
    check_weight_total(weight)
    return weight


def check_weight_total(weight):
    """The sum of the (finite) weights, as a float; ValueError when it overflows float64: the
    criteria's sums would be infinite, and only the weights' ratios matter."""
    with np.errstate(over="ignore"):
        total = float(weight.sum())
    if not np.isfinite(total):
        raise ValueError("the sum of the weights overflows float64 (inf): scale sample_weight "
                         "(and class_weight) down; a tree depends on their ratios only")
    return total


def check_one_output(model, purpose):
    """Refuse ``purpose`` on a fitted model or :class:`~jitree.Tree` of several outputs (y of
    several columns), which it does not handle."""
    n_outputs = getattr(model, "n_outputs_", getattr(model, "n_outputs", 1))
    if n_outputs != 1:
        raise ValueError(f"{purpose} handles single-output models; this "
                         f"{type(model).__name__} predicts {n_outputs} outputs (y had "
                         f"{n_outputs} columns)")


def fitted_trees(model, purpose):
    """``(estimators, is_classifier)`` of a fitted jitree tree (``[model]``) or forest (its
    trees): what the explanations and exports read. TypeError naming ``purpose`` for
    anything else, NotFittedError when not fitted."""
    from ._base import BaseDecisionTree
    from .forest import BaseForest

    if isinstance(model, BaseForest):
        check_is_fitted(model, "estimators_")
        check_one_output(model, purpose)
        return list(model.estimators_), model._task == "classification"
    if isinstance(model, BaseDecisionTree):
        check_is_fitted(model)
        check_one_output(model, purpose)
        return [model], model._task == "classification"
    kind = type(model)
    raise TypeError(f"{purpose} needs a fitted jitree tree or forest (DecisionTreeClassifier, "
                    "DecisionTreeRegressor, RandomForest*, ExtraTrees*), got "
                    f"{kind.__module__}.{kind.__qualname__}; convert scikit-learn models with "
                    "jitree.from_sklearn")


def check_is_fitted(estimator, attribute="tree_"):
    if not hasattr(estimator, attribute):
        raise compatible(NotFittedError)(
            f"This {type(estimator).__name__} instance is not fitted yet. Call 'fit' with "
            "appropriate arguments before using this estimator.")
