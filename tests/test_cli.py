"""The command line, run as users run it."""

import subprocess
import sys


def test_demo_prints_tree_accuracy_and_times():
    result = subprocess.run([sys.executable, "-m", "jitree.cli", "demo", "--rows", "50000",
                             "--train-rows", "20000"], capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "|--- petal_length <= 2.4500" in out  # the iris root split
    assert "test accuracy:" in out
    accuracy = float(out.split("test accuracy:")[1].split()[0])
    assert accuracy > 0.9
    assert "fit" in out and "predict" in out


def test_help_and_usage_errors():
    result = subprocess.run([sys.executable, "-m", "jitree.cli", "--help"],
                            capture_output=True, text=True)
    assert result.returncode == 0 and "demo" in result.stdout
    result = subprocess.run([sys.executable, "-m", "jitree.cli", "nope"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "invalid choice" in result.stderr


def _run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "jitree.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=600, cwd=cwd)


def test_fit_predict_rules_show_on_csv(tmp_path):
    import numpy as np

    from jitree.datasets import load_iris

    X, y, names = load_iris()
    lines = [",".join(names + ["species"])]
    lines += [",".join([*(f"{v:g}" for v in row), label]) for row, label in zip(X, y,
                                                                                  strict=True)]
    (tmp_path / "iris.csv").write_text("\n".join(lines) + "\n")
    # the features of the prediction file in another order, plus a column the model ignores
    order = [3, 0, 2, 1]
    body = [",".join(f"{v:g}" for v in row[order]) + ",1" for row in X]
    (tmp_path / "new.csv").write_text(",".join([names[j] for j in order] + ["extra"]) + "\n"
                                      + "\n".join(body) + "\n")

    fit = _run("fit", tmp_path / "iris.csv", "--target", "species", "-o",
               tmp_path / "iris.jitree", "--max-depth", "3")
    assert fit.returncode == 0, fit.stderr
    assert "DecisionTreeClassifier: 150 rows x 4 features" in fit.stdout

    predict = _run("predict", tmp_path / "iris.jitree", tmp_path / "new.csv", "-o",
                   tmp_path / "pred.npy", "--chunk-rows", "40")
    assert predict.returncode == 0, predict.stderr
    assert "150 rows predicted" in predict.stdout
    predicted = np.load(tmp_path / "pred.npy")
    import jitree

    model = jitree.DecisionTreeClassifier(max_depth=3).fit(X, y)
    np.testing.assert_array_equal(predicted, model.predict(X))

    proba = _run("predict", tmp_path / "iris.jitree", tmp_path / "new.csv", "-o",
                 tmp_path / "proba.csv", "--proba", "-q")
    assert proba.returncode == 0, proba.stderr
    header = (tmp_path / "proba.csv").read_text().splitlines()[0]
    assert header == "proba_setosa,proba_versicolor,proba_virginica"

    rules = _run("rules", tmp_path / "iris.jitree")
    assert rules.returncode == 0, rules.stderr
    assert rules.stdout.count("IF ") == model.get_n_leaves()
    assert "petal_length <= 2.45" in rules.stdout

    show = _run("show", tmp_path / "iris.jitree")
    assert show.returncode == 0, show.stderr
    assert "DecisionTreeClassifier" in show.stdout and "|--- petal_length <= 2.4500" in \
        show.stdout
    # the labels as they read, not NumPy's repr of each (np.str_('setosa'))
    assert "classes: ['setosa', 'versicolor', 'virginica']" in show.stdout

    # an output that is neither .npy nor .csv: refused (npy bytes went into p.txt), and a
    # model file in a missing directory named as such (not by its temporary file)
    text = _run("predict", tmp_path / "iris.jitree", tmp_path / "new.csv", "-o",
                tmp_path / "p.txt", "-q")
    assert text.returncode != 0 and "must be a .npy or .csv path" in text.stderr
    assert not (tmp_path / "p.txt").exists()
    missing = _run("fit", tmp_path / "iris.csv", "--target", "species", "-o",
                   tmp_path / "nowhere" / "m.jitree")
    assert missing.returncode != 0
    assert f"no directory {str(tmp_path / 'nowhere')!r}" in missing.stderr, missing.stderr


def test_fit_regression_on_npy_and_predict(tmp_path):
    import numpy as np

    rng = np.random.default_rng(0)
    data = rng.normal(size=(500, 4))
    data[:, 3] = data[:, 0] * 2.5 + 0.1 * rng.normal(size=500)
    np.save(tmp_path / "train.npy", data)
    np.save(tmp_path / "X.npy", data[:, :3].astype(np.float32))
    fit = _run("fit", tmp_path / "train.npy", "--target", "-1", "-o", tmp_path / "r.jitree")
    assert fit.returncode == 0, fit.stderr
    assert fit.stdout.startswith("DecisionTreeRegressor")
    predict = _run("predict", tmp_path / "r.jitree", tmp_path / "X.npy", "-o",
                   tmp_path / "p.npy")
    assert predict.returncode == 0, predict.stderr
    assert np.load(tmp_path / "p.npy").shape == (500,)


def test_cli_errors_are_one_line(tmp_path):
    missing = _run("predict", tmp_path / "none.jitree", tmp_path / "none.npy", "-o",
                   tmp_path / "p.npy")
    assert missing.returncode == 1
    assert missing.stderr.startswith("jitree: error:") and "Traceback" not in missing.stderr
    (tmp_path / "other.jitree").write_bytes(b"PK\x03\x04 not really a jitree model")
    (tmp_path / "X.npy").write_bytes(b"")
    foreign = _run("show", tmp_path / "other.jitree")
    assert foreign.returncode == 1 and "Traceback" not in foreign.stderr
    assert len(foreign.stderr.strip().splitlines()) == 1
    (tmp_path / "t.csv").write_text("a,b\n1,2\n3,4\n")
    wrong_column = _run("fit", tmp_path / "t.csv", "--target", "c", "-o", tmp_path / "m")
    assert wrong_column.returncode == 1 and "no column 'c'" in wrong_column.stderr
    usage = _run("fit", tmp_path / "t.csv")
    assert usage.returncode == 2


# -- categorical features and missing values ----------------------------------------------------

def _mixed_frame(n_rows=400, seed=0):
    """A table with a string column, an ordinal string column, an integer code column, numbers
    with missing values and a string label; missing strings as None."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    city = rng.choice(["paris", "rome", "oslo", "lima", "kyiv"], n_rows).astype(object)
    size = rng.choice(["S", "M", "L"], n_rows).astype(object)
    zone = rng.integers(1, 5, n_rows)
    income = rng.normal(size=n_rows).round(3)
    score = (np.isin(city, ["rome", "lima"]) + (size == "L") + (zone == 3) + income
             + rng.normal(0, 0.3, n_rows))
    label = np.where(score > 1, "yes", "no")
    city[rng.random(n_rows) < 0.1] = None
    size[rng.random(n_rows) < 0.05] = None
    income[rng.random(n_rows) < 0.1] = np.nan
    return pd.DataFrame({"city": city, "income": income, "size": size, "zone": zone,
                         "label": label})


def test_fit_predict_categorical_csv_equals_pandas(tmp_path):
    import numpy as np
    import pytest

    pd = pytest.importorskip("pandas")
    import jitree

    frame = _mixed_frame()
    frame.to_csv(tmp_path / "train.csv", index=False)  # missing values: empty fields
    assert ",," in (tmp_path / "train.csv").read_text()
    # the prediction file: other rows, columns in another order, plus one the model ignores
    new = _mixed_frame(300, seed=1).drop(columns="label")
    new[["zone", "size", "income", "city"]].assign(extra="x").to_csv(tmp_path / "new.csv",
                                                                     index=False)
    fit = _run("fit", tmp_path / "train.csv", "--target", "label", "--ordinal", "size",
               "-o", tmp_path / "m.jitree")
    assert fit.returncode == 0, fit.stderr
    assert "400 rows x 4 features (1 categorical, 1 ordinal)" in fit.stdout
    assert fit.stderr == ""  # no warning either

    # the same data fitted in Python: pandas reads the empty fields as missing values
    train = pd.read_csv(tmp_path / "train.csv")
    X, y = train.drop(columns="label"), train["label"]
    model = jitree.DecisionTreeClassifier(categorical_features=["city"],
                                          ordinal_features=["size"]).fit(X, y)
    loaded = jitree.load(tmp_path / "m.jitree")
    assert list(loaded.categories_[0]) == ["kyiv", "lima", "oslo", "paris", "rome"]
    assert list(loaded.categories_[2]) == ["L", "M", "S"]  # ordinal strings: sorted order
    assert list(loaded.tree_.feature_kind) == [2, 0, 1, 0]
    for name, values in model.tree_.arrays().items():
        np.testing.assert_array_equal(loaded.tree_.arrays()[name], values, err_msg=name)

    expected = model.predict(pd.read_csv(tmp_path / "new.csv").drop(columns="extra"))
    predict = _run("predict", tmp_path / "m.jitree", tmp_path / "new.csv", "-o",
                   tmp_path / "p.npy", "--chunk-rows", "70", "-q")
    assert predict.returncode == 0, predict.stderr
    assert "300 rows predicted" in predict.stdout
    np.testing.assert_array_equal(np.load(tmp_path / "p.npy"), expected)

    # Parquet rows with nulls and a category (dictionary) column predict the same
    pytest.importorskip("pyarrow")
    new.assign(city=new["city"].astype("category")).to_parquet(tmp_path / "new.parquet")
    proba = _run("predict", tmp_path / "m.jitree", tmp_path / "new.parquet", "-o",
                 tmp_path / "proba.csv", "--proba", "-q")
    assert proba.returncode == 0, proba.stderr
    np.testing.assert_allclose(np.loadtxt(tmp_path / "proba.csv", skiprows=1, delimiter=","),
                               model.predict_proba(new), rtol=0, atol=1e-15)


def test_fit_forced_kinds_and_multiway_split(tmp_path):
    import numpy as np
    import pytest

    pd = pytest.importorskip("pandas")
    import jitree

    _mixed_frame().to_csv(tmp_path / "train.csv", index=False)
    fit = _run("fit", tmp_path / "train.csv", "--target", "label", "--categorical", "zone",
               "--ordinal", "size", "--categorical-split", "multiway", "--criterion",
               "entropy", "--max-depth", "4", "-o", tmp_path / "m.jitree")
    assert fit.returncode == 0, fit.stderr
    assert "(2 categorical, 1 ordinal)" in fit.stdout
    train = pd.read_csv(tmp_path / "train.csv")
    X, y = train.drop(columns="label"), train["label"]
    model = jitree.DecisionTreeClassifier(
        categorical_features=["city", "zone"], ordinal_features=["size"],
        categorical_split="multiway", criterion="entropy", max_depth=4).fit(X, y)
    loaded = jitree.load(tmp_path / "m.jitree")
    assert loaded.categorical_split == "multiway"
    np.testing.assert_array_equal(loaded.categories_[3], [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    # its integer categories are read back as numbers from CSV and from Parquet
    predict = _run("predict", tmp_path / "m.jitree", tmp_path / "train.csv", "-o",
                   tmp_path / "p.npy", "-q")
    assert predict.returncode == 0, predict.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "p.npy"), model.predict(X))


def test_fit_parquet_with_nulls_and_dictionary_column(tmp_path):
    import numpy as np
    import pytest

    pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    import jitree

    frame = _mixed_frame()
    frame = frame.assign(city=frame["city"].astype("category"))  # a dictionary column
    frame.to_parquet(tmp_path / "train.parquet")
    fit = _run("fit", tmp_path / "train.parquet", "--target", "label", "-o",
               tmp_path / "m.jitree")
    assert fit.returncode == 0, fit.stderr
    assert "(2 categorical, 0 ordinal)" in fit.stdout  # city by type, size by its strings
    X, y = frame.drop(columns="label"), frame["label"]
    model = jitree.DecisionTreeClassifier(categorical_features=["size"]).fit(X, y)
    loaded = jitree.load(tmp_path / "m.jitree")
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    predict = _run("predict", tmp_path / "m.jitree", tmp_path / "train.parquet", "-o",
                   tmp_path / "p.npy", "-q")
    assert predict.returncode == 0, predict.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "p.npy"), model.predict(X))


def test_read_table_numeric_files_stay_float(tmp_path):
    import numpy as np

    from jitree.cli import _read_table

    (tmp_path / "t.csv").write_text("a,b,y\n1,,0\n2.5,3,1\n,4,1\n")
    table = _read_table(tmp_path / "t.csv", "y")
    assert table.X.dtype == np.float64 and table.categorical == [] and table.ordinal == []
    np.testing.assert_array_equal(table.X, [[1, np.nan], [2.5, 3], [np.nan, 4]])
    # numbers declared categorical stay float64 too; strings make an object X with None
    assert _read_table(tmp_path / "t.csv", "y", ["a"]).X.dtype == np.float64
    (tmp_path / "s.csv").write_text("a,b,y\nx,,0\n,3,1\nz,4,1\n")
    table = _read_table(tmp_path / "s.csv", "y")
    assert table.X.dtype == object and table.categorical == [0]
    assert table.X[:, 0].tolist() == ["x", None, "z"]
    np.save(tmp_path / "d.npy", np.array([[1.0, 0.0, 5.0], [2.0, 1.0, 6.0]]))
    table = _read_table(tmp_path / "d.npy", "1", ["0"], ["2"])
    assert table.categorical == [0] and table.ordinal == [1] and table.names is None


def test_categorical_options_help_and_errors(tmp_path):
    help_text = _run("fit", "--help").stdout
    assert "--categorical-split {subset,one_vs_rest,multiway}" in help_text
    assert "sorted order" in help_text and "--ordinal COL[,COL...]" in help_text
    (tmp_path / "t.csv").write_text("a,b,y\nx,1,0\ny,2,\n")
    for options, message in (
            (["--ordinal", "nope"], "--ordinal: no column 'nope'"),
            (["--categorical", "a,b", "--ordinal", "b"], "in both --categorical and --ordinal"),
            (["--categorical", "y"], "is the target column"),
            ([], "the target column 'y' has 1 empty fields")):
        result = _run("fit", tmp_path / "t.csv", "--target", "y", "-o", tmp_path / "m",
                      *options)
        assert result.returncode == 1, result.stdout
        assert message in result.stderr and "Traceback" not in result.stderr
    bad_split = _run("fit", tmp_path / "t.csv", "--target", "y", "-o", tmp_path / "m",
                     "--categorical-split", "pairs")
    assert bad_split.returncode == 2


def test_predict_refuses_to_write_over_its_input(tmp_path):
    """-o naming the data file (itself or through a link) used to kill the process (SIGBUS
    on .npy) or empty the file (CSV): now one error line, exit code 1, the data intact."""
    import os

    import numpy as np

    import jitree

    rng = np.random.default_rng(1)
    X = rng.normal(size=(20_000, 3))
    model = jitree.DecisionTreeRegressor(max_depth=5).fit(X, X[:, 0] - X[:, 2])
    jitree.save(model, tmp_path / "m.jitree")
    np.save(tmp_path / "X.npy", X)
    np.savetxt(tmp_path / "X.csv", X, fmt="%.17g", delimiter=",", header="a,b,c",
               comments="")
    (tmp_path / "link.npy").symlink_to(tmp_path / "X.npy")
    saved = {name: (tmp_path / name).read_bytes() for name in ("X.npy", "X.csv")}
    for data, out in (("X.npy", "X.npy"), ("X.npy", "link.npy"), ("X.csv", "X.csv")):
        result = _run("predict", "m.jitree", data, "-o", out, "--chunk-rows", "1000",
                      cwd=tmp_path)
        assert result.returncode == 1, (data, out, result.returncode, result.stderr)
        assert result.stderr == (f"jitree: error: out {out!r} is the input file {data!r}: "
                                 "writing the predictions there would destroy the rows "
                                 "being read; choose another output path\n")
        assert result.stdout == ""
    for name, content in saved.items():
        assert (tmp_path / name).read_bytes() == content
    assert os.path.islink(tmp_path / "link.npy")
    ok = _run("predict", "m.jitree", "X.npy", "-o", "p.npy", "-q", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "p.npy"), model.predict(X))


def test_predict_command_predicts_forests(tmp_path, monkeypatch, capsys):
    """'jitree predict' streams a forest like a tree. The model file format holds single
    trees, so the forest is handed to the command by a stand-in for load."""
    import numpy as np

    import jitree
    import jitree.model.persistence as persistence
    from jitree.cli import main

    rng = np.random.default_rng(2)
    X = rng.normal(size=(3000, 4))
    labels = np.array(["low", "high"])[(X[:, 0] + X[:, 1] > 0).astype(int)]
    np.save(tmp_path / "X.npy", X)
    classifier = jitree.RandomForestClassifier(n_estimators=5, max_depth=6,
                                               random_state=0).fit(X, labels)
    regressor = jitree.ExtraTreesRegressor(n_estimators=5, max_depth=6,
                                           random_state=0).fit(X, X[:, 0] - X[:, 3])
    for forest in (classifier, regressor):
        monkeypatch.setattr(persistence, "load", lambda path, forest=forest: forest)
        code = main(["predict", "forest.jitree", str(tmp_path / "X.npy"), "-o",
                     str(tmp_path / "p.npy"), "--chunk-rows", "700", "-q"])
        assert code == 0, capsys.readouterr().err
        assert "3000 rows predicted" in capsys.readouterr().out
        np.testing.assert_array_equal(np.load(tmp_path / "p.npy"), forest.predict(X))
    monkeypatch.setattr(persistence, "load", lambda path: classifier)
    assert main(["predict", "forest.jitree", str(tmp_path / "X.npy"), "-o",
                 str(tmp_path / "proba.csv"), "--proba", "-q"]) == 0
    written = (tmp_path / "proba.csv").read_text().splitlines()
    assert written[0] == "proba_high,proba_low"
    np.testing.assert_array_equal(np.array([line.split(",") for line in written[1:]],
                                           dtype=float), classifier.predict_proba(X))


def test_csv_headers_and_labels_are_read_exactly(tmp_path):
    """A repeated column name is refused (fit would train on one column and predict read the
    other); a byte-order mark is not part of the first name; integer labels that float64
    cannot tell apart stay distinct classes."""
    import jitree

    (tmp_path / "twice.csv").write_text("a,a,y\n1,10,0\n2,20,0\n3,5,1\n4,6,1\n")
    twice = _run("fit", tmp_path / "twice.csv", "--target", "y", "-o", tmp_path / "m.jitree")
    assert twice.returncode == 1 and "several columns are named 'a'" in twice.stderr
    (tmp_path / "bom.csv").write_bytes("\ufeffa,b,y\n1,2,0\n2,3,1\n3,1,0\n4,0,1\n"
                                       .encode("utf-8"))
    big = ("x,y\n" + "".join(f"{i},{label}\n" for i, label in enumerate(
        ["10000000000000000000"] * 2 + ["20000000000000000000"] * 2
        + ["12345678901234567", "12345678901234568"])))
    (tmp_path / "big.csv").write_text(big)
    for name in ("bom", "big"):
        fitted = _run("fit", tmp_path / f"{name}.csv", "--target", "y", "-o",
                      tmp_path / f"{name}.jitree")
        assert fitted.returncode == 0, fitted.stderr
    assert list(jitree.load(tmp_path / "bom.jitree").feature_names_in_) == ["a", "b"]
    classes = jitree.load(tmp_path / "big.jitree").classes_
    assert [int(c) for c in classes] == [12345678901234567, 12345678901234568,
                                         10000000000000000000, 20000000000000000000]
