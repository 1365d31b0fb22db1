"""Encoding of X for the tree kernels: categorical and ordinal features become float codes.

The kernels see one float matrix. A numeric feature keeps its values; a categorical or ordinal
feature holds codes 0 .. n_categories - 1 (code k stands for ``categories_[f][k]``); a missing
value (NaN, None, ``pd.NA``, ``pd.NaT``) is NaN, and so is, at predict, a category unseen in
training: the tree routes both like missing values.

pandas is imported lazily, only when X is a DataFrame: jitree does not depend on it.
"""

import numbers

import numpy as np

from ..kernels.encode import encode_numeric
from .validation import (
    FIT_DENSE_COPIES,
    _is_dataframe,
    check_shape,
    check_X,
    feature_names_of,
    is_sparse,
    object_to_float,
    refuse_matrix,
    refuse_non_array,
    sparse_to_dense,
)

FEATURE_NUMERIC = 0
FEATURE_ORDINAL = 1
FEATURE_CATEGORICAL = 2

VALUE_NUMBER = "number"
VALUE_STRING = "string"
VALUE_BOOL = "bool"

# float32 holds every integer up to 2**24 exactly, so codes below it survive float32
_FLOAT32_EXACT_INTEGERS = 2**24

# what pandas.api.types.infer_dtype(..., skipna=True) reports, as a category value kind;
# "empty" (all missing) has no kind
_INFERRED_VALUE_KIND = {
    "string": VALUE_STRING,
    "integer": VALUE_NUMBER,
    "floating": VALUE_NUMBER,
    "mixed-integer-float": VALUE_NUMBER,
    "decimal": VALUE_NUMBER,
    "boolean": VALUE_BOOL,
    "empty": None,
}
_INFERRED_MIXED = ("mixed", "mixed-integer")

_ELEMENT_MISSING, _ELEMENT_NUMBER, _ELEMENT_STRING, _ELEMENT_BOOL, _ELEMENT_OTHER = range(5)
_ELEMENT_VALUE_KIND = {_ELEMENT_NUMBER: VALUE_NUMBER, _ELEMENT_STRING: VALUE_STRING,
                       _ELEMENT_BOOL: VALUE_BOOL}
# pandas' missing-value singletons, recognised by type name so that pandas need not be imported
_PANDAS_MISSING_TYPES = ("NAType", "NaTType")


def _element_kind(value):
    """The kind code of one entry of a NumPy object column."""
    if isinstance(value, str):
        return _ELEMENT_STRING
    if isinstance(value, (bool, np.bool_)):  # before Real: bool is an int in Python
        return _ELEMENT_BOOL
    if isinstance(value, numbers.Real):
        return _ELEMENT_MISSING if value != value else _ELEMENT_NUMBER
    if value is None or type(value).__name__ in _PANDAS_MISSING_TYPES:
        return _ELEMENT_MISSING
    return _ELEMENT_OTHER


# a ufunc runs the per-entry test in C's loop: no Python loop over rows
_element_kinds = np.frompyfunc(_element_kind, 1, 1)


def _refuse_infinity(values, label, name):
    if values.dtype.kind == "f" and np.isinf(values).any():
        raise ValueError(f"Input {name} contains infinity or a value too large for "
                         f"{values.dtype} in column {label}; only NaN is accepted as a "
                         "missing value")


def _resolve_features(spec, parameter, n_features, names):
    """Boolean mask (n_features,) of the columns ``spec`` declares.

    ``spec``: None, a list or array of non-negative column indices, of column names (``names``
    must hold them), or a boolean mask of length n_features.
    """
    mask = np.zeros(n_features, dtype=bool)
    if spec is None:
        return mask
    if isinstance(spec, np.ndarray):
        if spec.ndim != 1:
            raise TypeError(f"{parameter} must be a 1-D list of column indices, names or a "
                            f"boolean mask, got an array of shape {spec.shape}")
        items = spec.tolist()  # NumPy scalars become Python bool / int / str
    elif isinstance(spec, (list, tuple, range)) or (
            hasattr(spec, "__array__") and not isinstance(spec, (str, bytes))):
        items = np.asarray(spec, dtype=object).ravel().tolist()
    else:
        raise TypeError(f"{parameter} must be None, a list of column indices, a list of column "
                        f"names or a boolean mask, got {spec!r}")
    if not items:
        return mask
    if all(isinstance(item, (bool, np.bool_)) for item in items):
        if len(items) != n_features:
            raise ValueError(f"{parameter} as a boolean mask must have one entry per feature: "
                             f"got {len(items)} entries for {n_features} features")
        return np.asarray(items, dtype=bool)
    if all(isinstance(item, numbers.Integral) and not isinstance(item, (bool, np.bool_))
           for item in items):
        # compared as Python ints: an index past int64 is out of range, not an OverflowError
        indices = [int(item) for item in items]
        negative = [index for index in indices if index < 0]
        if negative:
            raise ValueError(f"{parameter} holds negative column indices {negative}; "
                             "give indices in [0, n_features)")
        too_large = [index for index in indices if index >= n_features]
        if too_large:
            raise ValueError(f"{parameter} holds column indices {too_large} out of "
                             f"range for {n_features} features")
        mask[indices] = True
        return mask
    if all(isinstance(item, str) for item in items):
        if names is None:
            raise ValueError(f"{parameter} names columns {items}, which needs X to be a "
                             "DataFrame with string column names; give column indices or a "
                             "boolean mask otherwise")
        unknown = [item for item in items if item not in set(names)]
        if unknown:
            raise ValueError(f"{parameter} names columns {unknown} that X does not have")
        mask[np.isin(names, items)] = True
        return mask
    raise TypeError(f"{parameter} must hold only column indices, only column names or only "
                    f"booleans, got {items!r}")


def _comparable(values, value_kind):
    """``values`` in a dtype where equal category values compare equal: str, or float64
    (so that an int category matches the same number given as a float at predict)."""
    if value_kind == VALUE_STRING:
        return np.asarray(values, dtype=object).astype(str)
    return np.asarray(values).astype(np.float64)


def _codes_by_value(sorted_categories, category_order, values):
    """Code of each entry of ``values`` (float64, NaN when it is not a category).

    ``sorted_categories``: the comparable categories sorted; ``category_order``: their codes
    (the argsort that sorted them). One binary search per value.
    """
    codes = np.full(values.shape[0], np.nan)
    if sorted_categories.size == 0 or values.size == 0:
        return codes
    position = np.minimum(np.searchsorted(sorted_categories, values),
                          sorted_categories.size - 1)
    found = sorted_categories[position] == values
    codes[found] = category_order[position[found]]
    return codes


def _sorted_categories(categories, value_kind):
    comparable = _comparable(categories, value_kind)
    order = np.argsort(comparable, kind="stable")
    return comparable[order], order


def _categories_from_unique(unique_values, value_kind):
    """The stored categories: Python str in an object array, bools as bool, numbers as is."""
    if value_kind == VALUE_STRING:
        return np.asarray(unique_values, dtype=object).astype(str).astype(object)
    if value_kind == VALUE_BOOL:
        return np.asarray(unique_values).astype(bool)
    return np.asarray(unique_values)


def _type_changed(label, name, fitted_kind, value_kind):
    return TypeError(f"column {label} of {name} held {fitted_kind} categories at fit, but now "
                     f"holds {value_kind} values; give it the values it was fitted with")


def _mixed_types(label, name, kinds):
    return TypeError(f"column {label} of {name} mixes {' and '.join(kinds)} values; a "
                     "categorical or ordinal column must hold one type (strings, numbers or "
                     "booleans) plus missing values")


class _Column:
    """One column of X split into what encoding needs.

    ``present``: the non-missing values, comparable (str or float64) unless ``numeric_values``
    holds them; ``missing``: boolean mask or None when nothing is missing; ``value_kind``: the
    kind of the present values (None when all are missing).
    """

    __slots__ = ("n_rows", "present", "missing", "value_kind")

    def __init__(self, n_rows, present, missing, value_kind):
        self.n_rows = n_rows
        self.present = present
        self.missing = missing
        self.value_kind = value_kind

    def scatter(self, present_codes):
        """Codes of every row: ``present_codes`` where a value is, NaN where it is missing."""
        if self.missing is None:
            return np.asarray(present_codes, dtype=np.float64)
        codes = np.full(self.n_rows, np.nan)
        codes[~self.missing] = present_codes
        return codes


def _split_numeric(values, value_kind, label, name):
    """_Column of a numeric (int, float or bool) 1-D array; NaN is missing."""
    missing = None
    present = values
    if values.dtype.kind == "f":
        _refuse_infinity(values, label, name)
        is_nan = np.isnan(values)
        if is_nan.any():
            missing = is_nan
            present = values[~is_nan]
            if present.size == 0:
                value_kind = None
    return _Column(values.shape[0], present, missing, value_kind)


def _split_array_column(column, label, name):
    """_Column of one column of a NumPy array (object, str or numeric dtype)."""
    kind = column.dtype.kind
    if kind in "USTa":
        return _Column(column.shape[0], column.astype(str), None, VALUE_STRING)
    if kind == "b":
        return _Column(column.shape[0], column, None, VALUE_BOOL)
    if kind in "iuf":
        return _split_numeric(column, VALUE_NUMBER, label, name)
    if kind != "O":
        raise TypeError(f"column {label} of {name} has unsupported dtype {column.dtype}")
    with np.errstate(invalid="ignore"):  # NaN entries are classified, not computed with
        element_kinds = _element_kinds(column).astype(np.intp)
    counts = np.bincount(element_kinds, minlength=_ELEMENT_OTHER + 1)
    if counts[_ELEMENT_OTHER]:
        example = column[np.flatnonzero(element_kinds == _ELEMENT_OTHER)[0]]
        raise TypeError(f"column {label} of {name} holds a {type(example).__name__} value "
                        f"({example!r}); categories must be strings, numbers or booleans")
    kinds = [value_kind for element, value_kind in _ELEMENT_VALUE_KIND.items()
             if counts[element]]
    if len(kinds) > 1:
        raise _mixed_types(label, name, kinds)
    value_kind = kinds[0] if kinds else None
    missing = None
    present = column
    if counts[_ELEMENT_MISSING]:
        missing = element_kinds == _ELEMENT_MISSING
        present = column[~missing]
    if value_kind == VALUE_STRING:
        present = present.astype(str)
    elif value_kind == VALUE_NUMBER:
        present = object_to_float(present, name, label)
        _refuse_infinity(present, label, name)
    elif value_kind == VALUE_BOOL:
        present = present.astype(bool)
    return _Column(column.shape[0], present, missing, value_kind)


def _pandas():
    import pandas  # lazily: only a DataFrame X needs it

    return pandas


def _inferred_value_kind(values, label, name):
    """Value kind of pandas values (a Series or an Index), from pandas' C type inference."""
    inferred = _pandas().api.types.infer_dtype(values, skipna=True)
    if inferred in _INFERRED_VALUE_KIND:
        return _INFERRED_VALUE_KIND[inferred]
    if inferred in _INFERRED_MIXED:
        # the error path only: a Python pass over the values to name their types
        present = values[~_pandas().isna(values)]
        raise _mixed_types(label, name, sorted({type(value).__name__ for value in present}))
    raise TypeError(f"column {label} of {name} holds {inferred} values; categories must be "
                    "strings, numbers or booleans")


def _is_numeric_dtype(dtype):
    # NumPy dtypes and pandas' nullable Int64 / Float64 / boolean all carry a kind letter
    return getattr(dtype, "kind", "O") in "biuf"


def _is_category_dtype(dtype):
    return type(dtype).__name__ == "CategoricalDtype"


def _frame_columns(X):
    """A DataFrame's columns as a list of Series, in order (``items`` hands each out
    without the positional indexer's checks, in about half the time of ``X.iloc[:, j]``)."""
    if hasattr(X, "items"):
        return [series for _, series in X.items()]
    return [X.iloc[:, j] for j in range(X.shape[1])]


def _category_codes(series):
    """The codes of a pandas categorical column (-1: missing) as a NumPy array, read from
    its Categorical without building a Series of them."""
    return np.asarray(series.array.codes)


def _frame_numeric_values(series):
    """A numeric pandas column as a NumPy array; NA of nullable dtypes becomes NaN."""
    if isinstance(series.dtype, np.dtype):
        return series.to_numpy()
    return series.to_numpy(dtype=np.float64, na_value=np.nan)


def _split_frame_column(series, label, name):
    """_Column of a pandas column that is not of category dtype."""
    if _is_numeric_dtype(series.dtype):
        value_kind = VALUE_BOOL if series.dtype.kind == "b" else VALUE_NUMBER
        values = _frame_numeric_values(series)
        if value_kind == VALUE_BOOL and values.dtype.kind == "f":
            # a nullable boolean column with NA: the present values back to bool
            column = _split_numeric(values, value_kind, label, name)
            column.present = column.present.astype(bool)
            return column
        return _split_numeric(values, value_kind, label, name)
    value_kind = _inferred_value_kind(series, label, name)
    missing = series.isna().to_numpy()
    has_missing = bool(missing.any())
    present = series[~missing] if has_missing else series
    if value_kind == VALUE_STRING:
        present = present.to_numpy(dtype=object).astype(str)
    elif value_kind == VALUE_NUMBER:
        present = present.to_numpy(dtype=np.float64)
        _refuse_infinity(present, label, name)
    elif value_kind == VALUE_BOOL:
        present = present.to_numpy(dtype=bool)
    else:
        present = np.empty(0)
    return _Column(series.shape[0], present, missing if has_missing else None, value_kind)


def _category_dtype_value_kind(dtype, label, name):
    if len(dtype.categories) == 0:
        return None
    return _inferred_value_kind(dtype.categories, label, name)


class FeatureEncoder:
    """Turns X into the float matrix the tree kernels read, and remembers how.

    Parameters
    ----------
    categorical_features : None, list of int, list of str or array of bool, default=None
        Columns whose values are unordered categories: indices (non-negative), column names
        (X must then be a DataFrame with string column names) or a boolean mask of length
        n_features. A pandas ``category`` column is categorical without being declared.
    ordinal_features : None, list of int, list of str or array of bool, default=None
        Columns whose values are ordered levels, given like ``categorical_features``. A pandas
        ordered ``category`` column is ordinal without being declared.

    Attributes
    ----------
    feature_kind_ : ndarray of int8, shape (n_features,)
        FEATURE_NUMERIC, FEATURE_ORDINAL or FEATURE_CATEGORICAL for each feature.
    categories_ : list of length n_features
        None for a numeric feature, else a 1-D array of its categories in code order: code k
        stands for ``categories_[f][k]``. Strings are Python ``str`` in an object array.
    n_categories_ : ndarray of int32, shape (n_features,)
        ``len(categories_[f])``, 0 for a numeric feature.
    value_kind_ : list of length n_features
        "number", "string" or "bool" for a categorical or ordinal feature (None for a numeric
        feature, or one whose values were all missing at fit): a column whose values change
        type at predict is refused.
    feature_names_ : ndarray of str (object dtype) or None
        The column names when X was a DataFrame with string column names.
    n_features_in_ : int
        Number of features seen at fit.

    Notes
    -----
    Codes:

    - pandas ``category`` column (declared or not): the dtype's categories, all of them (also
      those no row uses: they are the declared domain), in the dtype's order. This order is the
      level order of an ordinal feature, also for an unordered ``category`` declared ordinal.
    - any other declared column: its distinct non-missing values, sorted (numbers by value,
      strings lexicographically, False before True). A string column declared ordinal thus
      takes its levels in sorted order; give a pandas ordered ``category`` for another order.

    Missing values (NaN, None, ``pd.NA``, ``pd.NaT``) become NaN. At transform, categories are
    matched by value, whatever their order in a predict-time ``category`` dtype, and a value
    unseen at fit becomes NaN. A column of only missing values at transform is accepted as such
    whatever its dtype.

    Non-declared columns must be numeric (bool counts as 0 / 1): NaN is kept, infinity raises
    ValueError, a string or object column raises TypeError asking to declare it.

    The output is float32 when every numeric column is float32 and every code fits float32's
    exact integers (< 2**24), else float64. When every feature is numeric the encoder is
    ``is_trivial`` and X goes through :func:`check_X` unchanged (a float32 / float64 C- or
    F-contiguous array is returned without a copy).
    """

    def __init__(self, categorical_features=None, ordinal_features=None):
        self.categorical_features = categorical_features
        self.ordinal_features = ordinal_features

    @classmethod
    def from_fitted(cls, feature_kind, categories, feature_names=None):
        """The fitted encoder of a model read back from a file (or converted): kinds and
        categories as the estimator kept them; each feature's value kind is that of its
        categories."""
        encoder = cls()
        n_features = len(feature_kind)
        encoder.feature_kind_ = np.asarray(feature_kind, dtype=np.int8)
        encoder.n_features_in_ = n_features
        encoder.feature_names_ = feature_names
        encoder.categories_ = [None] * n_features if categories is None else list(categories)
        encoder.n_categories_ = np.array(
            [0 if c is None else len(c) for c in encoder.categories_], dtype=np.int32)
        encoder.value_kind_ = [None] * n_features
        for j, values in enumerate(encoder.categories_):
            if values is not None and len(values):
                first = values[0]
                encoder.value_kind_[j] = (VALUE_BOOL if isinstance(first, (bool, np.bool_))
                                          else VALUE_STRING if isinstance(first, str)
                                          else VALUE_NUMBER)
        return encoder

    @property
    def is_trivial(self):
        """Whether every feature is numeric (X then passes through ``check_X`` unchanged).
        Asked on every prediction: kept with the kinds' bytes it was found for (np.any of
        the kinds took 5 us, a tenth of a one-row prediction)."""
        key = self.feature_kind_.tobytes()
        known = self.__dict__.get("_trivial")
        if known is None or known[0] != key:
            known = (key, not bool(np.any(self.feature_kind_ != FEATURE_NUMERIC)))
            self._trivial = known
        return known[1]

    # -- fit ---------------------------------------------------------------------------------
    def fit_transform(self, X, name="X"):
        """Learn the feature kinds and categories of X; return X encoded.

        Parameters
        ----------
        X : array-like or pandas DataFrame of shape (n_samples, n_features)
        name : str, default="X"
            How error messages call X.

        Returns
        -------
        ndarray of float32 or float64, shape (n_samples, n_features)
        """
        frame = _is_dataframe(X)
        if frame:
            check_shape(X.shape, name)
            array = None
            column_names = feature_names_of(X)
            dtypes = list(X.dtypes)
            n_features = X.shape[1]
        else:
            # a fit holds X's presorted indices and values besides X
            array = self._as_array(X, name, dense_copies=FIT_DENSE_COPIES)
            column_names = None
            n_features = array.shape[1]
        categorical = _resolve_features(self.categorical_features, "categorical_features",
                                        n_features, column_names)
        ordinal = _resolve_features(self.ordinal_features, "ordinal_features", n_features,
                                    column_names)
        labels = self._labels(X, n_features)
        both = np.flatnonzero(categorical & ordinal)
        if both.size:
            raise ValueError(f"column(s) {', '.join(labels[j] for j in both)} declared in both "
                             "categorical_features and ordinal_features; choose one")

        feature_kind = np.full(n_features, FEATURE_NUMERIC, dtype=np.int8)
        feature_kind[categorical] = FEATURE_CATEGORICAL
        feature_kind[ordinal] = FEATURE_ORDINAL
        if frame:
            for j, dtype in enumerate(dtypes):
                if feature_kind[j] != FEATURE_NUMERIC:
                    continue
                if _is_category_dtype(dtype):
                    feature_kind[j] = FEATURE_ORDINAL if dtype.ordered else FEATURE_CATEGORICAL
                elif not _is_numeric_dtype(dtype):
                    raise TypeError(
                        f"column {labels[j]} of {name} has dtype {dtype}; jitree needs numeric "
                        "columns: declare it in categorical_features or ordinal_features to "
                        "use its values as categories")

        self.feature_kind_ = feature_kind
        self.feature_names_ = column_names
        self.may_have_nan_ = True  # known exactly only on the all-numeric path
        self.n_features_in_ = n_features
        self.categories_ = [None] * n_features
        self.value_kind_ = [None] * n_features
        self.n_categories_ = np.zeros(n_features, dtype=np.int32)

        if self.is_trivial and (array is not None or all(isinstance(d, np.dtype)
                                                         for d in dtypes)):
            report = {"nan": False}
            checked = check_X(X if array is None else array, name=name, allow_nan=True,
                              report=report)
            self.may_have_nan_ = report["nan"]
            return checked

        columns = []
        series_of = _frame_columns(X) if frame else None
        for j in range(n_features):
            if frame:
                series = series_of[j]
                if feature_kind[j] == FEATURE_NUMERIC:
                    columns.append(self._numeric_frame_column(series, labels[j], name))
                else:
                    columns.append(self._fit_frame_categories(j, series, labels[j], name))
            elif feature_kind[j] == FEATURE_NUMERIC:
                columns.append(self._numeric_array_column(array[:, j], labels[j], name))
            else:
                columns.append(self._fit_array_categories(j, array[:, j], labels[j], name))
        return self._assemble(columns, order="F")  # the fit presorts column by column

    def _fit_frame_categories(self, j, series, label, name):
        dtype = series.dtype
        if _is_category_dtype(dtype):
            value_kind = _category_dtype_value_kind(dtype, label, name)
            self.value_kind_[j] = value_kind
            categories = dtype.categories.to_numpy()
            self.categories_[j] = _categories_from_unique(categories, value_kind)
            self.n_categories_[j] = len(categories)
            codes = _category_codes(series)
            return np.where(codes < 0, np.nan, codes)  # -1: missing
        if not (_is_numeric_dtype(dtype) or dtype.kind == "O"):
            raise TypeError(f"column {label} of {name} has dtype {dtype}; categories must be "
                            "strings, numbers or booleans")
        if dtype.kind == "O" and _inferred_value_kind(series, label, name) == VALUE_STRING:
            # pandas' hash table is several times faster than sorting the strings
            codes, uniques = _pandas().factorize(series, sort=True)
            self.value_kind_[j] = VALUE_STRING
            self.categories_[j] = _categories_from_unique(np.asarray(uniques, dtype=object),
                                                          VALUE_STRING)
            self.n_categories_[j] = len(uniques)
            return np.where(codes < 0, np.nan, codes)
        return self._fit_column(j, _split_frame_column(series, label, name))

    def _fit_array_categories(self, j, column, label, name):
        return self._fit_column(j, _split_array_column(column, label, name))

    def _fit_column(self, j, column):
        """Categories of a split column: its sorted distinct values; codes: ranks."""
        unique, inverse = np.unique(column.present, return_inverse=True)
        self.value_kind_[j] = column.value_kind
        self.categories_[j] = _categories_from_unique(unique, column.value_kind)
        self.n_categories_[j] = unique.size
        return column.scatter(inverse.reshape(-1))

    # -- transform ---------------------------------------------------------------------------
    def transform(self, X, name="X"):
        """Encode X (for predict) with the kinds and categories learnt at fit.

        Columns are taken in order (an estimator matches DataFrame columns by name first).
        Categories map by value to their fitted codes; unseen categories and missing values
        become NaN.

        Parameters
        ----------
        X : array-like or pandas DataFrame of shape (n_samples, n_features)
        name : str, default="X"
            How error messages call X.

        Returns
        -------
        ndarray of float32 or float64, shape (n_samples, n_features)
        """
        if not hasattr(self, "feature_kind_"):
            raise AttributeError("this FeatureEncoder is not fitted yet; call fit_transform")
        frame = _is_dataframe(X)
        if frame:
            check_shape(X.shape, name)
            array = None
            n_features = X.shape[1]
        else:
            array = self._as_array(X, name)
            n_features = array.shape[1]
        if n_features != self.n_features_in_:
            raise ValueError(f"{name} has {n_features} features, but the model was fitted with "
                             f"{self.n_features_in_} features")
        labels = self._labels(X, n_features)
        if not frame and not self.is_trivial and array.dtype in (np.float32, np.float64):
            encoded = self._transform_float_array(array)
            if encoded is not None:
                return encoded
        if self.is_trivial and (not frame or all(isinstance(d, np.dtype) for d in X.dtypes)):
            if frame:
                for j, dtype in enumerate(X.dtypes):
                    self._check_numeric_frame_dtype(dtype, labels[j], name)
            return check_X(X if array is None else array, name=name, allow_nan=True)

        columns = []
        series_of = _frame_columns(X) if frame else None
        for j in range(n_features):
            numeric = self.feature_kind_[j] == FEATURE_NUMERIC
            if frame:
                series = series_of[j]
                if numeric:
                    columns.append(self._numeric_frame_column(series, labels[j], name))
                else:
                    columns.append(self._transform_frame_column(j, series, labels[j], name))
            elif numeric:
                columns.append(self._numeric_array_column(array[:, j], labels[j], name))
            else:
                columns.append(self._transform_column(
                    j, _split_array_column(array[:, j], labels[j], name), labels[j], name))
        return self._assemble(columns, order="C")  # prediction reads a row at a time

    def _transform_float_array(self, array):
        """:meth:`transform` of a float32 / float64 array in one compiled pass
        (:func:`jitree.kernels.encode.encode_numeric`), row-major; None when a column's
        categories are not numbers, or X holds an infinity (the general path then encodes, or
        raises its error)."""
        coded = self.feature_kind_ != FEATURE_NUMERIC
        tables = self._number_tables(coded)
        if tables is None:
            return None
        values, codes, offsets = tables
        out = np.empty(array.shape, dtype=self._encoded_dtype(array.dtype == np.float32))
        if encode_numeric(array, coded.astype(np.uint8), values, codes.astype(np.float64),
                          offsets, out):
            return None
        return out

    def _number_tables(self, columns):
        """(values, codes, offsets) of the fitted categories of the ``columns`` (a mask):
        column j's category values increasing in values[offsets[j]:offsets[j + 1]]
        (float64) and their codes (int64); the other columns have none. None when one of
        those columns' categories are not numbers."""
        if any(self.value_kind_[j] not in (VALUE_NUMBER, None) for j in np.flatnonzero(columns)):
            return None
        values, codes, offsets = [np.zeros(0)], [np.zeros(0, dtype=np.int64)], [0]
        for j in range(self.n_features_in_):
            if columns[j] and self.value_kind_[j] is not None:
                sorted_values, order = _sorted_categories(self.categories_[j], VALUE_NUMBER)
                values.append(sorted_values)
                codes.append(order.astype(np.int64))
                offsets.append(offsets[-1] + sorted_values.shape[0])
            else:
                offsets.append(offsets[-1])
        return (np.concatenate(values), np.concatenate(codes),
                np.asarray(offsets, dtype=np.int64))

    def value_tables(self):
        """(values, codes, offsets) to read the categorical features of an unencoded float
        X by value (:func:`jitree.kernels.predict.chunk_values`), or None when X must be
        encoded first: an ordinal feature (tested on its level codes), or categories that
        are not numbers."""
        if np.any(self.feature_kind_ == FEATURE_ORDINAL):
            return None
        return self._number_tables(self.feature_kind_ == FEATURE_CATEGORICAL)

    def _check_value_kind(self, j, value_kind, label, name):
        fitted_kind = self.value_kind_[j]
        if value_kind is not None and fitted_kind is not None and value_kind != fitted_kind:
            raise _type_changed(label, name, fitted_kind, value_kind)

    def _transform_frame_column(self, j, series, label, name):
        dtype = series.dtype
        if _is_category_dtype(dtype):
            value_kind = _category_dtype_value_kind(dtype, label, name)
            codes = _category_codes(series)
            if value_kind is None or self.value_kind_[j] is None:
                return np.full(codes.shape[0], np.nan)
            self._check_value_kind(j, value_kind, label, name)
            # a lookup table from this dtype's codes to the fitted codes, by value; its extra
            # last entry (NaN) is where code -1 (missing) lands
            table = np.empty(len(dtype.categories) + 1)
            table[:-1] = _codes_by_value(
                *_sorted_categories(self.categories_[j], value_kind),
                _comparable(dtype.categories.to_numpy(), value_kind))
            table[-1] = np.nan
            return table[codes]
        if not (_is_numeric_dtype(dtype) or dtype.kind == "O"):
            raise TypeError(f"column {label} of {name} has dtype {dtype}; categories must be "
                            "strings, numbers or booleans")
        if (dtype.kind == "O" and self.value_kind_[j] == VALUE_STRING
                and _inferred_value_kind(series, label, name) == VALUE_STRING):
            # pandas' hash lookup beats sorting the strings; -1: missing or unseen
            codes = _pandas().Index(self.categories_[j]).get_indexer(series)
            return np.where(codes < 0, np.nan, codes)
        return self._transform_column(j, _split_frame_column(series, label, name), label,
                                      name)

    def _transform_column(self, j, column, label, name):
        if column.value_kind is None or self.value_kind_[j] is None:
            return np.full(column.n_rows, np.nan)
        self._check_value_kind(j, column.value_kind, label, name)
        sorted_categories, order = _sorted_categories(self.categories_[j], column.value_kind)
        return column.scatter(_codes_by_value(sorted_categories, order,
                                              _comparable(column.present, column.value_kind)))

    # -- shared ------------------------------------------------------------------------------
    @staticmethod
    def _as_array(X, name, dense_copies=1):
        """A non-DataFrame X as a 2-D NumPy array, with check_X's errors for bad shapes. A
        sparse X becomes its dense copy (``dense_copies``: see :func:`sparse_to_dense`)."""
        if is_sparse(X):
            return sparse_to_dense(X, name, dense_copies)
        if X is None or hasattr(type(X), "toarray") or hasattr(type(X), "tocsr"):
            check_X(X, name=name)  # raises its error for None and other sparse types
        refuse_matrix(X, name)
        array = X if isinstance(X, np.ndarray) else np.asarray(X)
        if not isinstance(X, np.ndarray) and array.dtype.kind in "US":
            # a list mixing strings and numbers: NumPy would turn the numbers into strings
            array = np.asarray(X, dtype=object)
        refuse_non_array(X, array, name)
        if array.dtype.kind == "c":
            raise ValueError(f"Complex data not supported in {name}")
        check_shape(array.shape, name)
        return array

    @staticmethod
    def _labels(X, n_features):
        """How messages name each column: repr of its name for a DataFrame, else its index."""
        if _is_dataframe(X):
            return [repr(column) for column in X.columns]
        return [str(j) for j in range(n_features)]

    @staticmethod
    def _check_numeric_frame_dtype(dtype, label, name):
        if not _is_numeric_dtype(dtype):
            raise TypeError(f"column {label} of {name} has dtype {dtype}, but the feature was "
                            "numeric at fit")

    def _numeric_frame_column(self, series, label, name):
        self._check_numeric_frame_dtype(series.dtype, label, name)
        values = _frame_numeric_values(series)
        if values.dtype not in (np.float32, np.float64):
            values = values.astype(np.float64)
        _refuse_infinity(values, label, name)
        return values

    @staticmethod
    def _numeric_array_column(column, label, name):
        if column.dtype.kind in "USa":
            raise TypeError(
                f"column {label} of {name} holds strings (dtype {column.dtype}): non-numeric "
                "data for a numeric feature; declare it in categorical_features or "
                "ordinal_features to use its values as categories")
        if column.dtype.kind == "O":
            column = object_to_float(column, name, label)
        elif column.dtype not in (np.float32, np.float64):
            column = column.astype(np.float64)
        _refuse_infinity(column, label, name)
        return column

    def _encoded_dtype(self, numeric_float32):
        """float32 when the numeric columns are float32 and every code is a float32
        integer, else float64."""
        codes_fit_float32 = int(self.n_categories_.max(initial=0)) <= _FLOAT32_EXACT_INTEGERS
        return np.float32 if numeric_float32 and codes_fit_float32 else np.float64

    def _assemble(self, columns, order):
        """The output matrix in ``order``: "F" for a fit, "C" for prediction."""
        numeric_float32 = all(column.dtype == np.float32
                              for j, column in enumerate(columns)
                              if self.feature_kind_[j] == FEATURE_NUMERIC)
        encoded = np.empty((columns[0].shape[0], len(columns)),
                           dtype=self._encoded_dtype(numeric_float32), order=order)
        for j, column in enumerate(columns):
            encoded[:, j] = column
        return encoded
