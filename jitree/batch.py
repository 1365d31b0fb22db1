"""Batch prediction over inputs larger than memory: chunked, with memory bounded by the chunk.

- ``.npy`` input is memory-mapped: each chunk of rows is predicted in place (no copy) and its
  pages are released from the process once done, so the resident memory stays at about one
  chunk however large the file is.
- Parquet input (needs pyarrow) is read batch by batch; CSV input (with a header line, one
  row per line) a block of lines at a time.
- Predictions are appended to a ``.npy`` (or ``.csv``) file as they are made, by a thread of
  their own: a chunk is written while the next one is predicted (opening an existing output,
  which truncates it, happens there too). At most one chunk of predictions waits to be written.
  The output must not be the input file (also not through a symbolic or hard link): that is
  refused before anything is opened for writing.

Columns: when the model was fitted with feature names (a DataFrame), Parquet and CSV columns
are matched by name; ``.npy`` columns (and files without names) are taken in order.

Multi-output models (fitted on y of several columns) write one column per output, and for
``predict_proba`` each output's class columns side by side (:func:`predict_file`).

Missing values: an empty CSV field and a Parquet null are missing (NaN in a numeric column),
as is NaN in a ``.npy`` file; infinity is refused, as by the estimators.

Categorical models: for a model with categorical or ordinal features, each block is read as
an object array that the estimator encodes by value: numeric features as floats, categorical
ones as their values (CSV: the field's text, or its number when the model's categories are
numbers; Parquet: the column's values), missing ones as NaN / None. A category unseen in
training is routed like a missing value. A ``.npy`` file holds raw feature values, never
category codes: it is read for such a model only when its categories are numbers (matched by
value), and refused when some are strings or booleans, which a numeric ``.npy`` cannot hold
(write those rows to CSV or Parquet). Models whose features are all numeric keep the float
fast path (memory-mapped ``.npy``, ``np.loadtxt`` for CSV).
"""

import csv
import itertools
import mmap
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

_METHODS = ("predict", "predict_proba", "predict_quantiles")


def _check_fitted(model, caller):
    """A fitted jitree tree or forest (TypeError for anything else, NotFittedError before
    fit)."""
    from .model._base import BaseDecisionTree
    from .model.forest import BaseForest
    from .model.validation import check_is_fitted

    if isinstance(model, BaseForest):
        check_is_fitted(model, "estimators_")
    elif isinstance(model, BaseDecisionTree):
        check_is_fitted(model, "tree_")
    else:
        raise TypeError(f"jitree.batch.{caller} expects a fitted jitree tree or forest, got "
                        f"{type(model).__module__}.{type(model).__qualname__}")


def _check_method(model, method, quantiles=None):
    """The method's extra argument: ``(quantiles array, scalar)`` for predict_quantiles (see
    :func:`jitree.model.leaf_samples.check_quantiles`), else None."""
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    if method != "predict" and not hasattr(model, method):
        raise ValueError(f"{type(model).__name__} has no {method}")
    if method != "predict_quantiles":
        return None
    from .model.leaf_samples import check_quantiles, stored

    if quantiles is None:
        raise ValueError("method='predict_quantiles' needs quantiles")
    stored(model)
    return check_quantiles(quantiles)


def _predict_block(model, X, method, by_position=True, quantiles=None):
    X = model._validate_predict_X(X, by_position=by_position)
    if method == "predict_proba":
        return model._predict_proba_validated(X)  # a list of arrays for several outputs
    if method == "predict_quantiles":
        return model._predict_quantiles_validated(X, *quantiles)
    return model._predict_validated(X)


def predict_chunks(model, chunks, method="predict", quantiles=None):
    """Predictions for each chunk of an iterable of 2-D arrays or DataFrames, one at a time
    (a generator: only one chunk's input and output are alive at once); ``quantiles`` for
    ``method="predict_quantiles"`` (as :func:`predict_file`)."""
    _check_fitted(model, "predict_chunks")
    quantiles = _check_method(model, method, quantiles)
    for chunk in chunks:
        yield _predict_block(model, chunk, method, by_position=False, quantiles=quantiles)


# -- how each feature is read ------------------------------------------------------------------
# "numeric": a numeric feature (float64, missing NaN); the others are the value kinds of a
# categorical or ordinal feature's categories (jitree.model.categories), read as values with
# None for missing, plus "any" for one whose values were all missing at fit (read as they come:
# all predict as missing)
KIND_NUMERIC, KIND_NUMBER, KIND_STRING, KIND_BOOL, KIND_ANY = (
    "numeric", "number", "string", "bool", "any")
_VALUE_KINDS = (KIND_NUMERIC, KIND_NUMBER, KIND_STRING, KIND_BOOL, KIND_ANY)


def feature_value_kinds(model):
    """How the files' columns are read for ``model``: None when every feature is numeric
    (float64 blocks), else one entry per feature: "numeric" (float64, missing NaN) for a
    numeric feature, and for a categorical or ordinal one the kind of its categories,
    "number", "string" or "bool" ("any" when it has none), read as values (missing None)."""
    from .model.categories import FEATURE_NUMERIC

    encoder = model._feature_encoder()
    if encoder.is_trivial:
        return None
    return [KIND_NUMERIC if kind == FEATURE_NUMERIC else (value_kind or KIND_ANY)
            for kind, value_kind in zip(encoder.feature_kind_, encoder.value_kind_,
                                        strict=True)]


def _check_value_kinds(value_kinds):
    if value_kinds is None:
        return None
    value_kinds = list(value_kinds)
    unknown = [kind for kind in value_kinds if kind not in _VALUE_KINDS]
    if unknown:
        raise ValueError(f"value_kinds must hold {_VALUE_KINDS}, got {unknown}")
    return value_kinds


def _blank_fields(text):
    """Mask of the empty (or blank) fields of a 1-D str array: the missing values of a CSV."""
    return np.char.strip(text) == ""


def _text_as_numbers(values):
    """float64 of CSV fields (blank fields NaN), or None when a field is not a number."""
    text = np.asarray(values, dtype=str)
    try:
        return text.astype(np.float64)  # NumPy parses in C: no Python loop over the rows
    except ValueError:
        pass
    blank = _blank_fields(text)
    if not blank.any():
        return None
    try:
        return np.where(blank, "nan", text).astype(np.float64)
    except ValueError:
        return None


def _numbers_as_values(numbers):
    """float64 numbers as an object array, NaN as None: the missing values of a categorical
    column (never a float NaN, which the encoder would have to test)."""
    values = numbers.astype(object)
    values[np.isnan(numbers)] = None
    return values


def _text_as_values(values):
    """CSV fields as an object array of str, blank fields None."""
    text = np.asarray(values, dtype=object)
    text[_blank_fields(np.asarray(values, dtype=str))] = None
    return text


_TRUE_TEXT = ("true", "1")
_FALSE_TEXT = ("false", "0")


def _text_as_booleans(values):
    """CSV fields as an object array of bool (true/false or 1/0, any case), blank None;
    None when a field is neither."""
    text = np.char.lower(np.char.strip(np.asarray(values, dtype=str)))
    is_true, is_false = np.isin(text, _TRUE_TEXT), np.isin(text, _FALSE_TEXT)
    blank = text == ""
    if not np.all(is_true | is_false | blank):
        return None
    booleans = np.where(is_true, True, False).astype(object)
    booleans[blank] = None
    return booleans


def _first_bad_field(fields, kind):
    """(position, text) of the first field that is not of ``kind`` (the error path only)."""
    parse = _text_as_numbers if kind in (KIND_NUMERIC, KIND_NUMBER) else _text_as_booleans
    for position, text in enumerate(fields):
        if parse([text]) is None:
            return position, text
    return 0, fields[0]


# -- readers -----------------------------------------------------------------------------------
class _NpyRows:
    """Row blocks of a 2-D .npy file, memory-mapped."""

    def __init__(self, path, names=None, value_kinds=None):
        self.path = path
        self.file = open(path, "rb")  # noqa: SIM115 - closed by close()
        try:
            version = np.lib.format.read_magic(self.file)
            if version == (1, 0):
                shape, fortran_order, dtype = np.lib.format.read_array_header_1_0(self.file)
            elif version in ((2, 0), (3, 0)):
                shape, fortran_order, dtype = np.lib.format.read_array_header_2_0(self.file)
            else:
                raise ValueError(f"unsupported .npy version {version}")
        except ValueError as error:
            self.file.close()
            raise ValueError(f"{path}: not a readable .npy file ({error})") from None
        if len(shape) != 2:
            self.file.close()
            raise ValueError(f"{path}: expected a 2-D array (rows, features), got shape {shape}")
        if dtype.kind not in "biuf" or dtype.hasobject:
            self.file.close()
            raise ValueError(f"{path}: expected numeric data, got dtype {dtype}")
        not_numbers = [] if value_kinds is None else [
            j for j, kind in enumerate(value_kinds)
            if kind == KIND_STRING or (kind == KIND_BOOL and dtype.kind != "b")]
        if not_numbers:
            self.file.close()
            labels = [repr(names[j]) if names is not None and j < len(names) else str(j)
                      for j in not_numbers]
            raise ValueError(f"{path}: the model's categorical feature(s) {', '.join(labels)} "
                             "have string or boolean categories, which a numeric .npy file "
                             "cannot hold (it holds feature values, not category codes); "
                             "write the rows to a .csv or .parquet file")
        self.n_rows, self.n_columns = shape
        self.offset = self.file.tell()
        expected = self.offset + self.n_rows * self.n_columns * dtype.itemsize
        if os.fstat(self.file.fileno()).st_size < expected:
            self.file.close()
            raise ValueError(f"{path}: file is truncated ({shape} {dtype} announced)")
        self.map = None
        if self.n_rows * self.n_columns:
            self.map = mmap.mmap(self.file.fileno(), 0, access=mmap.ACCESS_READ)
            flat = np.frombuffer(self.map, dtype=dtype, count=self.n_rows * self.n_columns,
                                 offset=self.offset)
            self.array = flat.reshape((self.n_columns, self.n_rows)).T if fortran_order \
                else flat.reshape((self.n_rows, self.n_columns))
        else:
            self.array = np.empty(shape, dtype=dtype)
        self.c_order = not fortran_order
        self.row_bytes = self.n_columns * dtype.itemsize

    def _advise(self, advice, first_row, last_row):
        if self.map is None or not self.c_order or not hasattr(self.map, "madvise"):
            return
        start = self.offset + first_row * self.row_bytes
        stop = self.offset + last_row * self.row_bytes
        page = mmap.PAGESIZE
        aligned = start // page * page
        if stop > aligned:
            self.map.madvise(advice, aligned, stop - aligned)

    def blocks(self, chunk_rows):
        for first in range(0, self.n_rows, chunk_rows):
            last = min(self.n_rows, first + chunk_rows)
            if hasattr(mmap, "MADV_WILLNEED"):  # read ahead of the kernel
                self._advise(mmap.MADV_WILLNEED, last, min(self.n_rows, last + chunk_rows))
            yield self.array[first:last]
            if hasattr(mmap, "MADV_DONTNEED"):
                # the file stays in the page cache; only this process lets go of the pages
                self._advise(mmap.MADV_DONTNEED, first, last)

    def close(self):
        self.array = None
        if self.map is not None:
            try:
                self.map.close()
            except BufferError:  # a chunk is still referenced by the caller
                pass
        self.file.close()


class _CsvRows:
    """Row blocks of a CSV file with a header line (one row per line)."""

    def __init__(self, path, names, value_kinds=None):
        self.path = path
        with open(path, encoding="utf-8-sig") as handle:  # a byte-order mark is no name
            header = handle.readline().rstrip("\r\n")
            self.n_rows = sum(1 for line in handle if line.strip())
        if not header:
            raise ValueError(f"{path}: empty file (a header line is expected)")
        self.header = [name.strip() for name in next(csv.reader([header]))]
        self.columns = _columns_by_name(path, self.header, names)
        self.n_columns = len(self.columns)
        self.names = [self.header[j] for j in self.columns]
        self.value_kinds = value_kinds

    def blocks(self, chunk_rows):
        with open(self.path, encoding="utf-8-sig") as handle:
            handle.readline()
            lines = (line for line in handle if line.strip())
            line_number = 2
            while True:
                block = list(itertools.islice(lines, chunk_rows))
                if not block:
                    return
                if self.value_kinds is None:
                    yield self._numbers(block, line_number)
                else:
                    yield self._values(block, line_number)
                line_number += len(block)

    def _numbers(self, block, line_number):
        """The block as float64 (the numeric models' path)."""
        try:
            values = np.loadtxt(block, delimiter=",", ndmin=2, dtype=np.float64,
                                comments=None)
        except ValueError as error:
            # empty fields (missing values) or quoted ones: parse the fields, slower
            fields = self._fields(block, line_number)
            values = np.empty((len(block), self.n_columns))
            for j, column in enumerate(self.columns):
                numbers = _text_as_numbers(fields[column])
                if numbers is None:
                    raise ValueError(f"{self.path}: non-numeric value near line "
                                     f"{line_number}: {error}") from None
                values[:, j] = numbers
            return values
        if values.shape[1] != len(self.header):
            raise ValueError(f"{self.path}: a row has {values.shape[1]} fields, the "
                             f"header {len(self.header)}")
        return values[:, self.columns]

    def _values(self, block, line_number):
        """The block as an object array, each column read as its feature's value kind."""
        fields = self._fields(block, line_number)
        values = np.empty((len(block), self.n_columns), dtype=object)
        for j, (column, kind) in enumerate(zip(self.columns, self.value_kinds, strict=True)):
            if kind in (KIND_NUMERIC, KIND_NUMBER):
                parsed = _text_as_numbers(fields[column])
                if parsed is not None and kind == KIND_NUMBER:
                    parsed = _numbers_as_values(parsed)
                expected = "numbers"
            elif kind == KIND_BOOL:
                parsed = _text_as_booleans(fields[column])
                expected = "booleans (true/false or 1/0)"
            else:
                parsed = _text_as_values(fields[column])
            if parsed is None:
                offset, text = _first_bad_field(fields[column], kind)
                raise ValueError(f"{self.path}: column {self.names[j]!r} must hold {expected} "
                                 f"(or be empty), but line {line_number + offset} holds "
                                 f"{text!r}")
            values[:, j] = parsed
        return values

    def _fields(self, block, line_number):
        """The fields of a block of lines, column by column (tuples of str)."""
        rows = list(csv.reader(block))
        if len(rows) != len(block):
            raise ValueError(f"{self.path}: a quoted field spans several lines near line "
                             f"{line_number}; batch prediction reads one row per line (write "
                             "the file with line breaks in fields replaced, or use .parquet)")
        for offset, row in enumerate(rows):
            if len(row) != len(self.header):
                raise ValueError(f"{self.path}: line {line_number + offset} has {len(row)} "
                                 f"fields, the header {len(self.header)}")
        return list(zip(*rows, strict=True))

    def close(self):
        pass


class _ParquetRows:
    def __init__(self, path, names, value_kinds=None):
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise ImportError("reading Parquet needs pyarrow: pip install 'jitree[parquet]'") \
                from None
        try:
            self.file = pq.ParquetFile(path)
        except Exception as error:  # pyarrow raises its own error types on bad files
            raise ValueError(f"{path}: not a readable Parquet file ({error})") from None
        header = list(self.file.schema_arrow.names)
        self.columns = [header[i] for i in _columns_by_name(path, header, names)]
        self.n_rows = self.file.metadata.num_rows
        self.n_columns = len(self.columns)
        self.path = path
        self.value_kinds = value_kinds

    def blocks(self, chunk_rows):
        for batch in self.file.iter_batches(batch_size=chunk_rows, columns=self.columns):
            if self.value_kinds is not None:
                yield self._values(batch)
                continue
            try:
                yield np.column_stack([batch.column(i).to_numpy(zero_copy_only=False)
                                       .astype(np.float64) for i in range(batch.num_columns)])
            except (ValueError, TypeError) as error:
                raise ValueError(f"{self.path}: non-numeric column ({error})") from None

    def _values(self, batch):
        """The batch as an object array, each column read as its feature's value kind."""
        import pyarrow as pa
        import pyarrow.types as types

        values = np.empty((batch.num_rows, self.n_columns), dtype=object)
        for j, kind in enumerate(self.value_kinds):
            column = batch.column(j)
            if types.is_dictionary(column.type):  # a category column: its values
                column = column.cast(column.type.value_type)
            arrow_type = column.type
            is_number = (types.is_integer(arrow_type) or types.is_floating(arrow_type)
                         or types.is_decimal(arrow_type) or types.is_boolean(arrow_type))
            is_string = _is_arrow_string(arrow_type)
            fits = types.is_null(arrow_type) or kind == KIND_ANY or (
                is_number if kind in (KIND_NUMERIC, KIND_NUMBER)
                else is_string if kind == KIND_STRING else types.is_boolean(arrow_type))
            if not fits:
                held = {KIND_NUMERIC: "numbers", KIND_NUMBER: "numbers",
                        KIND_STRING: "strings", KIND_BOOL: "booleans"}[kind]
                error = ValueError if kind == KIND_NUMERIC else TypeError
                raise error(f"{self.path}: column {self.columns[j]!r} has type {arrow_type}, "
                            f"but the model's feature holds {held}; a column must keep its "
                            "type between fit and predict")
            if types.is_null(arrow_type):
                values[:, j] = np.nan if kind == KIND_NUMERIC else None
            elif kind == KIND_NUMERIC:
                values[:, j] = column.cast(pa.float64()).to_numpy(zero_copy_only=False)
            elif is_number and kind != KIND_BOOL:
                values[:, j] = _numbers_as_values(
                    column.cast(pa.float64()).to_numpy(zero_copy_only=False))
            else:  # strings and booleans, None where null
                values[:, j] = column.to_numpy(zero_copy_only=False)
        return values

    def close(self):
        pass


def _is_arrow_string(arrow_type):
    import pyarrow.types as types

    is_view = getattr(types, "is_string_view", None)  # pyarrow >= 16
    return (types.is_string(arrow_type) or types.is_large_string(arrow_type)
            or (is_view is not None and is_view(arrow_type)))


def _columns_by_name(path, header, names):
    """Positions of the model's feature names in a file's header (all columns if None)."""
    if names is None:
        return list(range(len(header)))
    missing = [name for name in names if name not in header]
    if missing:
        raise ValueError(f"{path}: columns {missing} the model was fitted on are missing "
                         f"(file has {header})")
    from .model.validation import repeated_names

    repeated = [name for name in repeated_names(header) if name in names]
    if repeated:
        raise ValueError(f"{path}: several columns are named {repeated[0]!r}; the model's "
                         "features are matched by name")
    return [header.index(name) for name in names]


def _open_rows(path, names, value_kinds):
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    value_kinds = _check_value_kinds(value_kinds)
    extension = os.path.splitext(path)[1].lower()
    if extension == ".npy":
        return _NpyRows(path, names, value_kinds)
    if extension == ".csv":
        return _CsvRows(path, names, value_kinds)
    if extension in (".parquet", ".pq"):
        return _ParquetRows(path, names, value_kinds)
    raise ValueError(f"{path}: unknown data format {extension!r} (use .npy, .csv or .parquet)")


def open_rows(path, names=None, value_kinds=None):
    """A reader of row blocks for a .npy, .csv or .parquet file.

    ``names``: the columns to read, in this order (None: all, in the file's order; a .npy
    file's columns are always all taken in order). ``value_kinds``: None to read float64
    blocks, or how to read each selected column (:func:`feature_value_kinds` of a model with
    categorical features): its blocks are then object arrays.
    """
    reader = _open_rows(path, names, value_kinds)
    if value_kinds is not None and len(value_kinds) != reader.n_columns:
        reader.close()
        raise ValueError(f"{os.fspath(path)}: {reader.n_columns} columns to read, but "
                         f"{len(value_kinds)} value_kinds")
    return reader


# -- writers -----------------------------------------------------------------------------------
class _NpyWriter:
    @staticmethod
    def check(dtype):
        if dtype.hasobject:
            raise ValueError("predictions of dtype object cannot be stored in .npy without "
                             "pickle; fit the model with string or numeric labels")

    def __init__(self, path, n_rows, row_shape, dtype):
        self.check(dtype)
        self.file = open(path, "wb")  # noqa: SIM115 - closed by close()
        header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False,
                  "shape": (n_rows,) + row_shape}
        np.lib.format.write_array_header_2_0(self.file, header)

    def write(self, block):
        self.file.write(memoryview(np.ascontiguousarray(block)).cast("B"))

    def close(self):
        self.file.close()


class _BackgroundWriter:
    """A writer (made by ``open_writer()``) driven from one thread of its own: ``write``
    returns once the previous block is written (so at most one waits, and its error is raised
    here) and the given one is queued."""

    def __init__(self, open_writer):
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="jitree-writer")
        self.writer = None
        self.pending = self.pool.submit(self._open, open_writer)

    def _open(self, open_writer):
        self.writer = open_writer()

    def write(self, block):
        self.pending.result()
        self.pending = self.pool.submit(self.writer.write, block)

    def close(self):
        """Wait for the last block, then close the file (also after an error)."""
        try:
            self.pending.result()
        finally:
            self.pool.shutdown()
            if self.writer is not None:
                self.writer.close()


class _CsvWriter:
    """Predictions as CSV, fields quoted where they hold a comma, a quote or a line break
    (labels are any text)."""

    def __init__(self, path, header):
        self.file = open(path, "w", newline="")  # noqa: SIM115 - closed by close()
        self.writer = csv.writer(self.file, lineterminator="\n")
        self.writer.writerow(header)

    def write(self, block):
        block = block.reshape(block.shape[0], -1)
        self.writer.writerows(row.tolist() for row in block)

    def close(self):
        self.file.close()


def _output_layout(model, method, quantiles=None):
    """``(row_shape, dtype, header)`` of the predictions of ``method``: the shape and dtype of
    one row's predictions and the names of their columns in a CSV.

    A multi-output model (y of k columns) predicts k columns (``prediction_0`` ...); its
    class probabilities are the outputs' columns side by side (``proba_0_<class>`` ...),
    which :func:`predict_file` returns as a list of one array per output."""
    if method == "predict_quantiles":
        values, scalar = quantiles
        if scalar:
            return (), np.dtype(np.float64), [f"quantile_{float(values[0])!r}"]
        # each quantile's shortest repr: distinct quantiles get distinct names
        return ((values.shape[0],), np.dtype(np.float64),
                [f"quantile_{float(value)!r}" for value in values])
    from .model.classifier import prediction_dtype

    n_outputs = getattr(model, "n_outputs_", 1)
    if method == "predict_proba":
        if n_outputs == 1:
            return ((model.classes_.shape[0],), np.dtype(np.float64),
                    [f"proba_{c}" for c in model.classes_])
        header = [f"proba_{j}_{c}" for j, classes in enumerate(model.classes_)
                  for c in classes]
        return (len(header),), np.dtype(np.float64), header
    if n_outputs == 1:
        return (), prediction_dtype(model), ["prediction"]
    return (n_outputs,), prediction_dtype(model), [f"prediction_{j}" for j in range(n_outputs)]


def _per_output(model, method, result):
    """``result`` as ``method`` returns it: several outputs' probabilities as a list."""
    from .model.classifier import output_bounds

    if method != "predict_proba" or getattr(model, "n_outputs_", 1) == 1:
        return result
    bounds = output_bounds(model.classes_)
    return [result[:, start:stop] for start, stop in zip(bounds[:-1], bounds[1:], strict=True)]


def _check_not_the_input(path, out):
    """Refuse an output file that is the input file, also through a symbolic or hard link:
    opening it for writing would truncate the rows still to be read (and, for a
    memory-mapped ``.npy``, pull the pages from under the reader)."""
    path = os.fspath(path)
    try:
        same = os.path.samefile(path, out)
    except OSError:  # either does not exist (yet): they cannot be one file
        return
    if same:
        raise ValueError(f"out {out!r} is the input file {path!r}: writing the predictions "
                         "there would destroy the rows being read; choose another output "
                         "path")


def predict_file(model, path, out=None, chunk_rows=1_000_000, method="predict",
                 progress=None, quantiles=None):
    """Predict every row of a data file in chunks of ``chunk_rows`` rows.

    ``model``: a fitted jitree tree or forest. ``out``: a ``.npy`` or ``.csv`` path to write
    the predictions to (returned; not the input file), or None to return them as an array. A
    model with categorical features reads each column as its feature needs (module
    docstring). ``progress(rows_done, rows_total)`` is called after each chunk. Memory stays
    bounded by one chunk of input and output (plus the returned array when ``out`` is None).
    ``method``: "predict", "predict_proba" or "predict_quantiles" (with ``quantiles``, a
    number or a sequence: one column per quantile, named ``quantile_0.05`` ... in a CSV).

    A multi-output model (fitted on y of k columns) writes k prediction columns
    (``prediction_0`` ... in a CSV); its ``predict_proba`` writes each output's class columns
    side by side (``proba_<output>_<class>``), and returns them as ``predict_proba`` does, a
    list of one array per output (views of one array), when ``out`` is None.
    """
    from .model.classifier import side_by_side

    _check_fitted(model, "predict_file")
    quantiles = _check_method(model, method, quantiles)
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) \
            or chunk_rows < 1:
        raise ValueError(f"chunk_rows must be a positive int, got {chunk_rows!r}")
    if out is not None:
        out = os.fspath(out)
        if not out.lower().endswith((".npy", ".csv")):
            raise ValueError(f"out must be a .npy or .csv path (the format follows the "
                             f"extension), got {out!r}")
        _check_not_the_input(path, out)
    names = getattr(model, "feature_names_in_", None)
    reader = _open_rows(path, None if names is None else list(names),
                        feature_value_kinds(model))
    writer = None
    try:
        if reader.n_columns != model.n_features_in_:
            raise ValueError(f"{path}: {reader.n_columns} feature columns, the model expects "
                             f"{model.n_features_in_}")
        row_shape, dtype, header = _output_layout(model, method, quantiles)
        if out is None:
            result = np.empty((reader.n_rows,) + row_shape, dtype=dtype)
        else:
            if out.lower().endswith(".csv"):
                writer = _BackgroundWriter(lambda: _CsvWriter(out, header))
            else:
                _NpyWriter.check(dtype)  # before any work, not at the first write
                writer = _BackgroundWriter(
                    lambda: _NpyWriter(out, reader.n_rows, row_shape, dtype))
        done = 0
        for block in reader.blocks(int(chunk_rows)):
            predictions = side_by_side(_predict_block(model, block, method,
                                                      quantiles=quantiles))
            if writer is None:
                result[done:done + predictions.shape[0]] = predictions
            else:
                writer.write(predictions.astype(dtype, copy=False))
            done += predictions.shape[0]
            del block
            if progress is not None:
                progress(done, reader.n_rows)
        if done != reader.n_rows:
            raise ValueError(f"{path}: read {done} rows, expected {reader.n_rows}")
    finally:
        reader.close()
        if writer is not None:
            writer.close()
    return _per_output(model, method, result) if out is None else out
