"""Chunked prediction from files equals in-memory prediction."""

import os
import subprocess
import sys

import numpy as np
import pytest

import jitree
from jitree.batch import predict_chunks, predict_file
from jitree.datasets import make_classification_data


@pytest.fixture(scope="module")
def fitted():
    X, y = make_classification_data(5000, 6, 3, seed=0)
    names = np.array(["alpha", "beta", "gamma", "delta", "epsilon", "zeta"])[y]
    classifier = jitree.DecisionTreeClassifier(max_depth=8).fit(X, names)
    regressor = jitree.DecisionTreeRegressor(max_depth=8).fit(X, X[:, 0] * 2 + y)
    return X, classifier, regressor


@pytest.mark.parametrize("chunk_rows", [1, 999, 1000, 4999, 5000, 10**6])
@pytest.mark.parametrize("method", ["predict", "predict_proba"])
def test_npy_chunks_equal_in_memory(tmp_path, fitted, chunk_rows, method):
    # 5000 rows: chunk sizes that divide, leave a short last chunk, or exceed the file
    X, classifier, _ = fitted
    np.save(tmp_path / "X.npy", X)
    out = predict_file(classifier, tmp_path / "X.npy", tmp_path / "p.npy",
                       chunk_rows=chunk_rows, method=method)
    expected = getattr(classifier, method)(X)
    got = np.load(out, allow_pickle=False)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(
        predict_file(classifier, tmp_path / "X.npy", chunk_rows=chunk_rows, method=method),
        expected)


def test_fortran_and_float64_npy_and_regressor(tmp_path, fitted):
    X, _, regressor = fitted
    np.save(tmp_path / "F.npy", np.asfortranarray(X.astype(np.float64)))
    got = predict_file(regressor, tmp_path / "F.npy", chunk_rows=777)
    np.testing.assert_array_equal(got, regressor.predict(X.astype(np.float64)))


def test_empty_file_gives_empty_predictions(tmp_path, fitted):
    X, classifier, _ = fitted
    np.save(tmp_path / "E.npy", X[:0])
    out = predict_file(classifier, tmp_path / "E.npy", tmp_path / "p.npy")
    got = np.load(out)
    assert got.shape == (0,) and got.dtype == classifier.classes_.dtype


def test_csv_columns_matched_by_name(tmp_path):
    pd = pytest.importorskip("pandas")
    X, y = make_classification_data(800, 3, 2, seed=2)
    frame = pd.DataFrame(X.astype(np.float64), columns=["a", "b", "c"])
    model = jitree.DecisionTreeClassifier(max_depth=5).fit(frame, y)
    shuffled = frame.assign(extra=1.0)[["c", "extra", "a", "b"]]
    shuffled.to_csv(tmp_path / "X.csv", index=False)
    got = predict_file(model, tmp_path / "X.csv", tmp_path / "p.csv", chunk_rows=300)
    written = np.loadtxt(got, skiprows=1, dtype=np.int64)
    np.testing.assert_array_equal(written, model.predict(frame))
    frame[["a", "b"]].to_csv(tmp_path / "missing.csv", index=False)
    with pytest.raises(ValueError, match=r"columns \['c'\]"):
        predict_file(model, tmp_path / "missing.csv", tmp_path / "p.csv")


def test_parquet_when_pyarrow_is_installed(tmp_path, fitted):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    X, classifier, _ = fitted
    table = pa.table({f"f{j}": X[:, j] for j in range(X.shape[1])})
    pq.write_table(table, tmp_path / "X.parquet", row_group_size=700)
    got = predict_file(classifier, tmp_path / "X.parquet", chunk_rows=1000)
    np.testing.assert_array_equal(got, classifier.predict(X))


def test_predict_chunks_streams_an_iterable(fitted):
    X, classifier, _ = fitted
    pieces = list(predict_chunks(classifier, (X[i:i + 1234] for i in range(0, 5000, 1234))))
    assert [p.shape[0] for p in pieces] == [1234, 1234, 1234, 1234, 64]
    np.testing.assert_array_equal(np.concatenate(pieces), classifier.predict(X))


def test_bad_files(tmp_path, fitted):
    X, classifier, _ = fitted
    with pytest.raises(FileNotFoundError):
        predict_file(classifier, tmp_path / "nope.npy")
    np.save(tmp_path / "1d.npy", X[:, 0])
    with pytest.raises(ValueError, match="2-D"):
        predict_file(classifier, tmp_path / "1d.npy")
    np.save(tmp_path / "narrow.npy", X[:, :3])
    with pytest.raises(ValueError, match="expects 6"):
        predict_file(classifier, tmp_path / "narrow.npy")
    (tmp_path / "junk.npy").write_bytes(b"not a numpy file at all")
    with pytest.raises(ValueError, match="not a readable .npy"):
        predict_file(classifier, tmp_path / "junk.npy")
    np.save(tmp_path / "full.npy", X)
    data = (tmp_path / "full.npy").read_bytes()
    (tmp_path / "cut.npy").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="truncated"):
        predict_file(classifier, tmp_path / "cut.npy")
    (tmp_path / "X.txt").write_text("1")
    with pytest.raises(ValueError, match="unknown data format"):
        predict_file(classifier, tmp_path / "X.txt")
    infinite = X.copy()
    infinite[17, 2] = np.inf
    np.save(tmp_path / "inf.npy", infinite)
    with pytest.raises(ValueError, match="infinity"):
        predict_file(classifier, tmp_path / "inf.npy", chunk_rows=10)
    # NaN is a missing value: the file path predicts it like the in-memory one
    missing = X.copy()
    missing[17, 2] = np.nan
    np.save(tmp_path / "nan.npy", missing)
    np.testing.assert_array_equal(
        predict_file(classifier, tmp_path / "nan.npy", chunk_rows=10),
        classifier.predict(missing))
    with pytest.raises(ValueError, match="chunk_rows"):
        predict_file(classifier, tmp_path / "full.npy", chunk_rows=0)


def test_predict_accepts_an_iterator_of_chunks_and_memmaps(tmp_path, fitted):
    X, classifier, regressor = fitted
    chunks = (X[i:i + 700] for i in range(0, X.shape[0], 700))
    np.testing.assert_array_equal(classifier.predict(chunks), classifier.predict(X))
    chunks = (X[i:i + 700] for i in range(0, X.shape[0], 700))
    np.testing.assert_array_equal(classifier.predict_proba(chunks), classifier.predict_proba(X))
    chunks = (X[i:i + 999] for i in range(0, X.shape[0], 999))
    np.testing.assert_array_equal(regressor.predict(chunks), regressor.predict(X))
    with pytest.raises(ValueError, match="empty iterator"):
        classifier.predict(iter([]))
    np.save(tmp_path / "X.npy", X)
    mapped = np.load(tmp_path / "X.npy", mmap_mode="r")
    np.testing.assert_array_equal(classifier.predict(mapped), classifier.predict(X))


# -- categorical features and missing values ----------------------------------------------------

@pytest.fixture(scope="module")
def categorical():
    """A frame with a category column, an ordered one, a string column, integer categories and
    numbers, all with missing values; a classifier and a regressor fitted on it."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(5)
    n_rows = 3000
    city = rng.choice(["paris", "rome", "oslo", "lima"], n_rows).astype(object)
    street = rng.choice(["high", "main", "mill", "park", "station"], n_rows).astype(object)
    size = rng.choice(["S", "M", "L"], n_rows).astype(object)
    zone = rng.integers(1, 6, n_rows).astype(np.float64)
    income = rng.normal(size=n_rows)
    score = (np.isin(city, ["rome", "lima"]) + (size == "L") + (street == "mill")
             + (zone == 3) + income + rng.normal(0, 0.3, n_rows))
    for column in (city, street, size):
        column[rng.random(n_rows) < 0.08] = None
    zone[rng.random(n_rows) < 0.08] = np.nan
    income[rng.random(n_rows) < 0.08] = np.nan
    frame = pd.DataFrame({
        "city": pd.Categorical(city), "street": street,
        "size": pd.Categorical(size, categories=["S", "M", "L"], ordered=True),
        "zone": zone, "income": income})
    labels = np.array(["no", "yes"])[(score > 1).astype(int)]
    classifier = jitree.DecisionTreeClassifier(
        max_depth=10, categorical_features=["street", "zone"]).fit(frame, labels)
    regressor = jitree.DecisionTreeRegressor(
        max_depth=8, categorical_features=["street"]).fit(frame, score)
    return frame, classifier, regressor


def _as_file_frame(frame):
    """The frame as a file holds it: categories as their values (strings, None missing)."""
    return frame.astype({"city": object, "size": object})


@pytest.mark.parametrize("chunk_rows", [1000, 2999, 10**6])
@pytest.mark.parametrize("method", ["predict", "predict_proba"])
def test_categorical_csv_equals_in_memory(tmp_path, categorical, chunk_rows, method):
    frame, classifier, _ = categorical
    shuffled = _as_file_frame(frame).assign(extra="x")[
        ["income", "extra", "size", "zone", "street", "city"]]
    shuffled.to_csv(tmp_path / "X.csv", index=False)  # missing values: empty fields
    expected = getattr(classifier, method)(frame)
    got = predict_file(classifier, tmp_path / "X.csv", chunk_rows=chunk_rows, method=method)
    np.testing.assert_array_equal(got, expected)
    out = predict_file(classifier, tmp_path / "X.csv", tmp_path / "p.npy",
                       chunk_rows=chunk_rows, method=method)
    np.testing.assert_array_equal(np.load(out), expected)


@pytest.mark.parametrize("as_category", [True, False])
def test_categorical_parquet_equals_in_memory(tmp_path, categorical, as_category):
    pytest.importorskip("pyarrow")
    frame, classifier, regressor = categorical
    # category columns (Parquet dictionaries) or plain strings, with nulls; other order
    stored = frame if as_category else _as_file_frame(frame)
    stored[["zone", "city", "size", "income", "street"]].to_parquet(
        tmp_path / "X.parquet", row_group_size=700)
    np.testing.assert_array_equal(
        predict_file(classifier, tmp_path / "X.parquet", chunk_rows=1000),
        classifier.predict(frame))
    np.testing.assert_array_equal(
        predict_file(classifier, tmp_path / "X.parquet", chunk_rows=512,
                     method="predict_proba"),
        classifier.predict_proba(frame))
    np.testing.assert_array_equal(predict_file(regressor, tmp_path / "X.parquet"),
                                  regressor.predict(frame))


def test_categorical_model_after_save_and_load(tmp_path, categorical):
    frame, classifier, _ = categorical
    jitree.save(classifier, tmp_path / "m.jitree")
    loaded = jitree.load(tmp_path / "m.jitree")
    _as_file_frame(frame).to_csv(tmp_path / "X.csv", index=False)
    np.testing.assert_array_equal(predict_file(loaded, tmp_path / "X.csv", chunk_rows=999),
                                  classifier.predict(frame))


def test_categorical_file_errors(tmp_path, categorical):
    pytest.importorskip("pyarrow")
    frame, classifier, _ = categorical
    # a .npy file holds values, not codes: string categories cannot be in it
    np.save(tmp_path / "X.npy", np.zeros((10, 5)))
    with pytest.raises(ValueError, match=r"'city', 'street', 'size' have string or boolean "
                                         r"categories.*not category codes"):
        predict_file(classifier, tmp_path / "X.npy")
    # a column whose type changed since fit
    _as_file_frame(frame).assign(street=1)[list(frame.columns)].to_parquet(
        tmp_path / "X.parquet")
    with pytest.raises(TypeError, match="column 'street' has type int64, but the model's "
                                        "feature holds strings"):
        predict_file(classifier, tmp_path / "X.parquet")
    _as_file_frame(frame).assign(income="rich").to_csv(tmp_path / "X.csv", index=False)
    with pytest.raises(ValueError, match="column 'income' must hold numbers .* line 2 holds "
                                         "'rich'"):
        predict_file(classifier, tmp_path / "X.csv", chunk_rows=100)
    (tmp_path / "short.csv").write_text("city,street,size,zone,income\nrome,main,S,1\n")
    with pytest.raises(ValueError, match="line 2 has 4 fields, the header 5"):
        predict_file(classifier, tmp_path / "short.csv")


def test_numeric_categories_read_from_npy(tmp_path):
    rng = np.random.default_rng(2)
    X = np.column_stack([rng.integers(0, 6, 1000), rng.normal(size=1000)])
    y = (X[:, 0] % 2) + X[:, 1]
    X[::9, 0] = np.nan
    X[::7, 1] = np.nan
    model = jitree.DecisionTreeRegressor(categorical_features=[0]).fit(X, y)
    np.save(tmp_path / "X.npy", X)
    np.testing.assert_array_equal(predict_file(model, tmp_path / "X.npy", chunk_rows=300),
                                  model.predict(X))
    # and from CSV, where the numbers are text and the missing ones empty fields
    lines = ["a,b"] + [",".join("" if np.isnan(v) else repr(float(v)) for v in row) for row in X]
    (tmp_path / "X.csv").write_text("\n".join(lines) + "\n")
    np.testing.assert_array_equal(predict_file(model, tmp_path / "X.csv", chunk_rows=300),
                                  model.predict(X))


def test_numeric_model_missing_values_in_files(tmp_path, fitted):
    X, classifier, _ = fitted
    missing = X.astype(np.float64)
    missing[::13, 1] = np.nan
    missing[::17, 4] = np.nan
    expected = classifier.predict(missing)
    np.save(tmp_path / "X.npy", missing)
    np.testing.assert_array_equal(predict_file(classifier, tmp_path / "X.npy", chunk_rows=999),
                                  expected)
    lines = ["a,b,c,d,e,f"] + [",".join("" if np.isnan(v) else repr(float(v)) for v in row)
                               for row in missing]
    (tmp_path / "X.csv").write_text("\n".join(lines) + "\n")
    np.testing.assert_array_equal(predict_file(classifier, tmp_path / "X.csv", chunk_rows=999),
                                  expected)
    infinite = missing.copy()
    infinite[40, 0] = -np.inf
    np.save(tmp_path / "inf.npy", infinite)
    with pytest.raises(ValueError, match="infinity"):
        predict_file(classifier, tmp_path / "inf.npy", chunk_rows=999)


def test_numeric_model_blocks_stay_float(tmp_path, fitted, categorical):
    from jitree.batch import feature_value_kinds, open_rows

    X, classifier, _ = fitted
    assert feature_value_kinds(classifier) is None
    np.save(tmp_path / "X.npy", X)
    reader = open_rows(tmp_path / "X.npy")
    block = next(reader.blocks(1000))
    assert block.dtype == X.dtype and np.shares_memory(block, reader.array)  # no copy
    del block
    reader.close()
    frame, categorical_model, _ = categorical
    assert feature_value_kinds(categorical_model) == ["string", "string", "string", "number",
                                                      "numeric"]
    _as_file_frame(frame).to_csv(tmp_path / "C.csv", index=False)
    reader = open_rows(tmp_path / "C.csv", ["zone", "city"], ["number", "string"])
    block = next(reader.blocks(5))
    assert block.dtype == object and block.shape == (5, 2)
    assert block[:, 1].tolist() == frame["city"].iloc[:5].astype(object).where(
        frame["city"].iloc[:5].notna(), None).tolist()
    with pytest.raises(ValueError, match="2 columns to read, but 1 value_kinds"):
        open_rows(tmp_path / "C.csv", ["zone", "city"], ["number"])
    with pytest.raises(ValueError, match="value_kinds must hold"):
        open_rows(tmp_path / "C.csv", ["zone"], ["float"])


def test_boolean_categories_from_csv_and_parquet(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(4)
    flag = pd.array(rng.random(500) < 0.4, dtype="boolean")
    flag[::10] = pd.NA
    frame = pd.DataFrame({"flag": flag, "x": rng.normal(size=500)})
    y = np.where(frame["flag"].fillna(False).to_numpy(dtype=bool), 1.0, 0.0) + frame["x"]
    model = jitree.DecisionTreeRegressor(max_depth=4, categorical_features=["flag"]).fit(
        frame, y)
    assert jitree.batch.feature_value_kinds(model) == ["bool", "numeric"]
    expected = model.predict(frame)
    text = frame.astype({"flag": object}).assign(
        flag=lambda f: f["flag"].map({True: "true", False: "False"}))
    text.to_csv(tmp_path / "X.csv", index=False)
    np.testing.assert_array_equal(predict_file(model, tmp_path / "X.csv", chunk_rows=128),
                                  expected)
    frame.to_parquet(tmp_path / "X.parquet")
    np.testing.assert_array_equal(predict_file(model, tmp_path / "X.parquet", chunk_rows=128),
                                  expected)
    (tmp_path / "bad.csv").write_text("flag,x\ntrue,1.0\nmaybe,2.0\n")
    with pytest.raises(ValueError, match="'flag' must hold booleans .* line 3 holds 'maybe'"):
        predict_file(model, tmp_path / "bad.csv")


def test_background_writer_overwrites_and_raises_its_errors(tmp_path, fitted, monkeypatch):
    """Predictions are written on a thread of their own: an existing output is replaced, and
    an error of the writer (opening or writing) is raised by predict_file."""
    import threading

    import jitree.batch as batch

    X, classifier, _ = fitted
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "p.npy", np.zeros(10 * X.shape[0]))  # a larger file to overwrite
    out = predict_file(classifier, tmp_path / "X.npy", tmp_path / "p.npy", chunk_rows=700)
    np.testing.assert_array_equal(np.load(out), classifier.predict(X))
    with pytest.raises(FileNotFoundError):
        predict_file(classifier, tmp_path / "X.npy", tmp_path / "no_such_folder" / "p.npy")
    calls = []

    def failing_write(self, block):
        calls.append(block.shape[0])
        if len(calls) == 3:
            raise OSError("disk full")
        self.file.write(memoryview(np.ascontiguousarray(block)).cast("B"))

    monkeypatch.setattr(batch._NpyWriter, "write", failing_write)
    with pytest.raises(OSError, match="disk full"):
        predict_file(classifier, tmp_path / "X.npy", tmp_path / "q.csv.npy", chunk_rows=700)
    assert len(calls) == 3  # nothing written after the failure
    assert not any(t.name.startswith("jitree-writer") for t in threading.enumerate())


# -- forests -----------------------------------------------------------------------------------

FORESTS = [jitree.RandomForestClassifier, jitree.ExtraTreesClassifier,
           jitree.RandomForestRegressor, jitree.ExtraTreesRegressor]


@pytest.fixture(scope="module")
def forests(fitted):
    X, classifier, _ = fitted
    labels = classifier.predict(X)  # string labels
    models = {}
    for cls in FORESTS:
        target = labels if cls._task == "classification" else X[:, 0] * 2 + X[:, 1]
        models[cls] = cls(n_estimators=7, max_depth=7, random_state=0).fit(X, target)
    return X, models


def _forest_methods(model):
    return ["predict", "predict_proba"] if model._task == "classification" else ["predict"]


@pytest.mark.parametrize("cls", FORESTS, ids=lambda cls: cls.__name__)
def test_forest_predict_file_equals_predict(tmp_path, forests, cls):
    X, models = forests
    model = models[cls]
    X64 = X.astype(np.float64)
    np.save(tmp_path / "X.npy", X)
    np.savetxt(tmp_path / "X.csv", X64, fmt="%.17g", delimiter=",",
               header=",".join(f"x{j}" for j in range(X.shape[1])), comments="")
    for method in _forest_methods(model):
        expected = getattr(model, method)(X)
        got = predict_file(model, tmp_path / "X.npy", chunk_rows=777, method=method)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
        out = predict_file(model, tmp_path / "X.npy", tmp_path / "p.npy", chunk_rows=1000,
                           method=method)
        np.testing.assert_array_equal(np.load(out, allow_pickle=False), expected)
        np.testing.assert_array_equal(
            predict_file(model, tmp_path / "X.csv", chunk_rows=999, method=method),
            getattr(model, method)(X64))
        # predict_chunks over a memory-mapped file, in blocks
        mapped = np.load(tmp_path / "X.npy", mmap_mode="r")
        pieces = list(predict_chunks(model, (mapped[i:i + 1300] for i in range(0, 5000, 1300)),
                                     method=method))
        assert [piece.shape[0] for piece in pieces] == [1300, 1300, 1300, 1100]
        np.testing.assert_array_equal(np.concatenate(pieces), expected)
        # the estimator's own chunk-iterator input, as the trees take it
        chunks = (X[i:i + 2000] for i in range(0, 5000, 2000))
        np.testing.assert_array_equal(getattr(model, method)(chunks), expected)
    if model._task == "regression":
        with pytest.raises(ValueError, match="has no predict_proba"):
            predict_file(model, tmp_path / "X.npy", method="predict_proba")


def test_forest_batch_errors(tmp_path, forests):
    X, models = forests
    np.save(tmp_path / "X.npy", X)
    with pytest.raises(jitree.NotFittedError):
        predict_file(jitree.RandomForestClassifier(), tmp_path / "X.npy")
    with pytest.raises(jitree.NotFittedError):
        list(predict_chunks(jitree.ExtraTreesRegressor(), [X]))
    with pytest.raises(TypeError, match="expects a fitted jitree tree or forest, got "
                                        "builtins.dict"):
        predict_file({}, tmp_path / "X.npy")
    np.save(tmp_path / "narrow.npy", X[:, :4])
    with pytest.raises(ValueError, match="4 feature columns, the model expects 6"):
        predict_file(models[jitree.RandomForestClassifier], tmp_path / "narrow.npy")
    with pytest.raises(ValueError, match="empty iterator"):
        models[jitree.RandomForestRegressor].predict(iter([]))


def test_categorical_forest_reads_csv_by_value(tmp_path, categorical):
    frame, classifier, _ = categorical
    labels = classifier.predict(frame)
    forest = jitree.RandomForestClassifier(
        n_estimators=5, max_depth=6, random_state=0,
        categorical_features=["street", "zone"]).fit(frame, labels)
    _as_file_frame(frame)[["zone", "street", "size", "income", "city"]].to_csv(
        tmp_path / "X.csv", index=False)
    for method in ("predict", "predict_proba"):
        np.testing.assert_array_equal(
            predict_file(forest, tmp_path / "X.csv", chunk_rows=700, method=method),
            getattr(forest, method)(frame))


# -- the output must not be the input ------------------------------------------------------------

# Run in a child process: before the check, writing over the memory-mapped input killed the
# process (SIGBUS), which would have ended the test session instead of failing one test.
_SAME_FILE_SCRIPT = """
import sys

import numpy as np

import jitree
from jitree.batch import predict_file

path, outs = sys.argv[1], sys.argv[2:]
X = np.load(path)
model = jitree.DecisionTreeClassifier(max_depth=6).fit(X, (X[:, 0] > 0).astype(np.int64))
for out in outs:
    try:
        predict_file(model, path, out, chunk_rows=1000)
        print("written:", out)
    except ValueError as error:
        print("refused:", error)
"""


def test_npy_output_that_is_the_input_is_refused(tmp_path):
    X = np.random.default_rng(0).normal(size=(50_000, 4))
    path = tmp_path / "X.npy"
    np.save(path, X)
    before = path.read_bytes()
    (tmp_path / "symlink.npy").symlink_to(path)
    os.link(path, tmp_path / "hardlink.npy")
    os.mkdir(tmp_path / "sub")
    outs = [path, tmp_path / "symlink.npy", tmp_path / "hardlink.npy",
            tmp_path / "sub" / ".." / "X.npy"]
    result = subprocess.run([sys.executable, "-c", _SAME_FILE_SCRIPT, str(path),
                             *map(str, outs)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, (result.returncode, result.stderr)
    lines = result.stdout.splitlines()
    assert lines == [f"refused: out {str(out)!r} is the input file {str(path)!r}: writing "
                     "the predictions there would destroy the rows being read; choose "
                     "another output path" for out in outs]
    assert path.read_bytes() == before


def test_csv_output_that_is_the_input_is_refused(tmp_path, fitted, monkeypatch):
    X, classifier, _ = fitted
    path = tmp_path / "X.csv"
    np.savetxt(path, X.astype(np.float64), fmt="%.17g", delimiter=",",
               header=",".join(f"x{j}" for j in range(X.shape[1])), comments="")
    before = path.read_bytes()
    monkeypatch.chdir(tmp_path)
    for out in (path, "X.csv", "./X.csv"):
        with pytest.raises(ValueError, match=r"is the input file .*X\.csv'"):
            predict_file(classifier, path, out, method="predict_proba")
        assert path.read_bytes() == before
    # another file next to it is written as usual
    out = predict_file(classifier, "X.csv", "P.csv")
    assert out == "P.csv" and len(path.read_bytes()) == len(before)
    assert len((tmp_path / "P.csv").read_text().splitlines()) == X.shape[0] + 1


def test_csv_output_quotes_labels_and_input_reads_exact_lines(tmp_path):
    """Labels holding commas and quotes come back from the written CSV as they are; a '#' in
    an input field is text, not a comment; a quoted field spanning lines is refused by name;
    a repeated column the model reads is refused."""
    pd = pytest.importorskip("pandas")
    X = np.random.default_rng(0).normal(size=(100, 2))
    np.save(tmp_path / "X.npy", X)
    labels = np.where(X[:, 0] > 0, "yes, sure", 'say "no"')
    model = jitree.DecisionTreeClassifier(max_depth=2).fit(X, labels)
    predict_file(model, tmp_path / "X.npy", tmp_path / "p.csv")
    np.testing.assert_array_equal(pd.read_csv(tmp_path / "p.csv").iloc[:, 0].to_numpy(),
                                  model.predict(X))
    predict_file(model, tmp_path / "X.npy", tmp_path / "q.csv", method="predict_proba")
    written = pd.read_csv(tmp_path / "q.csv")
    assert list(written.columns) == [f"proba_{c}" for c in model.classes_]
    np.testing.assert_allclose(written.to_numpy(), model.predict_proba(X))

    frame = pd.DataFrame({"x": np.arange(40.0) % 4, "note": ["#a", "b"] * 20})
    numeric = jitree.DecisionTreeClassifier().fit(frame[["x"]], np.arange(40) % 2)
    frame.to_csv(tmp_path / "notes.csv", index=False)
    np.testing.assert_array_equal(predict_file(numeric, tmp_path / "notes.csv"),
                                  numeric.predict(frame[["x"]]))
    spread = pd.DataFrame({"x": np.arange(40.0) % 4,
                           "c": pd.Categorical(["a", "b\nc"] * 20)})
    categorical = jitree.DecisionTreeClassifier().fit(spread, np.arange(40) % 2)
    spread.to_csv(tmp_path / "spread.csv", index=False)
    with pytest.raises(ValueError, match="quoted field spans several lines"):
        predict_file(categorical, tmp_path / "spread.csv")
    (tmp_path / "twice.csv").write_text("x,x\n1,2\n3,4\n")
    with pytest.raises(ValueError, match="several columns are named 'x'"):
        predict_file(numeric, tmp_path / "twice.csv")
