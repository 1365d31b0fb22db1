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
