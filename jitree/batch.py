"""Batch prediction over inputs larger than memory: chunked, with memory bounded by the chunk.

- ``.npy`` input is memory-mapped: each chunk of rows is predicted in place (no copy) and its
  pages are released from the process once done, so the resident memory stays at about one
  chunk however large the file is.
- Parquet input (needs pyarrow) is read batch by batch; CSV input (numeric, with a header
  line) a block of lines at a time.
- Predictions are appended to a ``.npy`` (or ``.csv``) file as they are made.

Columns: when the model was fitted with feature names (a DataFrame), Parquet and CSV columns
are matched by name; ``.npy`` columns (and files without names) are taken in order.
"""

import itertools
import mmap
import os

import numpy as np

_METHODS = ("predict", "predict_proba")


def _check_method(model, method):
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    if method == "predict_proba" and not hasattr(model, "predict_proba"):
        raise ValueError(f"{type(model).__name__} has no predict_proba")


def _predict_block(model, X, method, by_position=True):
    X = model._validate_predict_X(X, by_position=by_position)
    if method == "predict_proba":
        return model._predict_proba_validated(X)
    return model._predict_validated(X)


def predict_chunks(model, chunks, method="predict"):
    """Predictions for each chunk of an iterable of 2-D arrays or DataFrames, one at a time
    (a generator: only one chunk's input and output are alive at once)."""
    _check_method(model, method)
    for chunk in chunks:
        yield _predict_block(model, chunk, method, by_position=False)


# -- readers -----------------------------------------------------------------------------------
class _NpyRows:
    """Row blocks of a 2-D .npy file, memory-mapped."""

    def __init__(self, path):
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
    """Row blocks of a numeric CSV file with a header line."""

    def __init__(self, path, names):
        self.path = path
        with open(path) as handle:
            header = handle.readline().rstrip("\r\n")
            self.n_rows = sum(1 for line in handle if line.strip())
        if not header:
            raise ValueError(f"{path}: empty file (a header line is expected)")
        self.header = [name.strip() for name in header.split(",")]
        self.columns = _columns_by_name(path, self.header, names)
        self.n_columns = len(self.columns)

    def blocks(self, chunk_rows):
        with open(self.path) as handle:
            handle.readline()
            lines = (line for line in handle if line.strip())
            line_number = 2
            while True:
                block = list(itertools.islice(lines, chunk_rows))
                if not block:
                    return
                try:
                    values = np.loadtxt(block, delimiter=",", ndmin=2, dtype=np.float64)
                except ValueError as error:
                    raise ValueError(f"{self.path}: non-numeric value near line "
                                     f"{line_number}: {error}") from None
                if values.shape[1] != len(self.header):
                    raise ValueError(f"{self.path}: a row has {values.shape[1]} fields, the "
                                     f"header {len(self.header)}")
                line_number += len(block)
                yield values[:, self.columns]

    def close(self):
        pass


class _ParquetRows:
    def __init__(self, path, names):
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

    def blocks(self, chunk_rows):
        for batch in self.file.iter_batches(batch_size=chunk_rows, columns=self.columns):
            try:
                yield np.column_stack([batch.column(i).to_numpy(zero_copy_only=False)
                                       .astype(np.float64) for i in range(batch.num_columns)])
            except (ValueError, TypeError) as error:
                raise ValueError(f"{self.path}: non-numeric column ({error})") from None

    def close(self):
        pass


def _columns_by_name(path, header, names):
    """Positions of the model's feature names in a file's header (all columns if None)."""
    if names is None:
        return list(range(len(header)))
    missing = [name for name in names if name not in header]
    if missing:
        raise ValueError(f"{path}: columns {missing} the model was fitted on are missing "
                         f"(file has {header})")
    return [header.index(name) for name in names]


def open_rows(path, names=None):
    """A reader of row blocks for a .npy, .csv or .parquet file."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    extension = os.path.splitext(path)[1].lower()
    if extension == ".npy":
        return _NpyRows(path)
    if extension == ".csv":
        return _CsvRows(path, names)
    if extension in (".parquet", ".pq"):
        return _ParquetRows(path, names)
    raise ValueError(f"{path}: unknown data format {extension!r} (use .npy, .csv or .parquet)")


# -- writers -----------------------------------------------------------------------------------
class _NpyWriter:
    def __init__(self, path, n_rows, row_shape, dtype):
        if dtype.hasobject:
            raise ValueError("predictions of dtype object cannot be stored in .npy without "
                             "pickle; fit the model with string or numeric labels")
        self.file = open(path, "wb")  # noqa: SIM115 - closed by close()
        header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False,
                  "shape": (n_rows,) + row_shape}
        np.lib.format.write_array_header_2_0(self.file, header)

    def write(self, block):
        self.file.write(np.ascontiguousarray(block).tobytes())

    def close(self):
        self.file.close()


class _CsvWriter:
    def __init__(self, path, header):
        self.file = open(path, "w")  # noqa: SIM115 - closed by close()
        self.file.write(",".join(header) + "\n")

    def write(self, block):
        block = block.reshape(block.shape[0], -1)
        for row in block:
            self.file.write(",".join(map(str, row.tolist())) + "\n")

    def close(self):
        self.file.close()


def _output_layout(model, method):
    if method == "predict_proba":
        n_classes = model.classes_.shape[0]
        return (n_classes,), np.dtype(np.float64), [f"proba_{c}" for c in model.classes_]
    if hasattr(model, "classes_"):
        return (), model.classes_.dtype, ["prediction"]
    return (), np.dtype(np.float64), ["prediction"]


def predict_file(model, path, out=None, chunk_rows=1_000_000, method="predict",
                 progress=None):
    """Predict every row of a data file in chunks of ``chunk_rows`` rows.

    ``out``: a ``.npy`` or ``.csv`` path to write the predictions to (returned), or None to
    return them as an array. ``progress(rows_done, rows_total)`` is called after each chunk.
    Memory stays bounded by one chunk of input and output (plus the returned array when
    ``out`` is None).
    """
    from .model.validation import check_is_fitted

    check_is_fitted(model)
    _check_method(model, method)
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) \
            or chunk_rows < 1:
        raise ValueError(f"chunk_rows must be a positive int, got {chunk_rows!r}")
    names = getattr(model, "feature_names_in_", None)
    reader = open_rows(path, None if names is None else list(names))
    writer = None
    try:
        if reader.n_columns != model.n_features_in_:
            raise ValueError(f"{path}: {reader.n_columns} feature columns, the model expects "
                             f"{model.n_features_in_}")
        row_shape, dtype, header = _output_layout(model, method)
        if out is None:
            result = np.empty((reader.n_rows,) + row_shape, dtype=dtype)
        else:
            out = os.fspath(out)
            if out.lower().endswith(".csv"):
                writer = _CsvWriter(out, header)
            else:
                writer = _NpyWriter(out, reader.n_rows, row_shape, dtype)
        done = 0
        for block in reader.blocks(int(chunk_rows)):
            predictions = _predict_block(model, block, method)
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
    return result if out is None else out
