"""Chunked prediction from files equals in-memory prediction."""

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
