"""jitree.to_onnx: the exported model, run by onnxruntime, reaches jitree's leaves on float32
X (thresholds rounded down to float32, missing values routed as jitree routes them)."""

import sys

import numpy as np
import pytest

import jitree

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _run(model, X):
    session = ort.InferenceSession(jitree.to_onnx(model).SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    return session.run(None, {"X": X})


def _data(seed, n=2000):
    rng = np.random.default_rng(seed)
    # values on a coarse grid: many rows sit exactly on a threshold's float32 neighbours
    X = np.round(rng.normal(size=(n, 5)), 2).astype(np.float32)
    y = X[:, 0] + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=n)
    X[rng.random(n) < 0.1, 1] = np.nan
    return X, y


@pytest.mark.parametrize("seed", [0, 1])
def test_regressors(seed):
    X, y = _data(seed)
    for model in (jitree.DecisionTreeRegressor(max_depth=12, random_state=seed),
                  jitree.ExtraTreesRegressor(n_estimators=8, max_depth=10, random_state=seed)):
        model.fit(X, y)
        (prediction,) = _run(model, X)
        assert prediction.shape == (X.shape[0], 1)
        # float32 leaf values summed in float32: relative rounding only
        np.testing.assert_allclose(prediction[:, 0], model.predict(X), rtol=1e-5, atol=1e-5)


def test_a_tree_reaches_the_same_leaves():
    """Leaf ids as the regression target: any other leaf would give another integer."""
    X, y = _data(2)
    model = jitree.DecisionTreeRegressor(max_depth=14, random_state=0).fit(X, y)
    tree = model.tree_
    node_ids = np.arange(tree.node_count, dtype=np.float64)[:, None]
    probe = jitree.DecisionTreeRegressor._from_tree(jitree.Tree(
        tree.n_features, tree.n_classes, tree.feature, tree.threshold, tree.children_left,
        tree.children_right, node_ids, tree.impurity, tree.n_node_samples,
        tree.weighted_n_node_samples, missing_left=tree.missing_left))
    (prediction,) = _run(probe, X)
    np.testing.assert_array_equal(prediction[:, 0].astype(np.int64), model.apply(X))


@pytest.mark.parametrize("labels", [np.array([3, 7, 9]), np.array([1.0, 2.0, 4.0]),
                                    np.array(["low", "mid", "high"])])
def test_classifiers(labels):
    X, y = _data(3)
    target = labels[np.digitize(y, [-0.5, 0.5])]
    for model in (jitree.DecisionTreeClassifier(max_depth=10, random_state=0),
                  jitree.RandomForestClassifier(n_estimators=10, random_state=0)):
        model.fit(X, target)
        label, probabilities = _run(model, X)
        np.testing.assert_allclose(probabilities, model.predict_proba(X), atol=1e-6)
        agree = label == model.predict(X)
        # a label can differ only where two classes tie to float32 rounding
        top = np.sort(model.predict_proba(X), axis=1)
        assert np.all(agree | (top[:, -1] - top[:, -2] < 1e-6))


def test_refusals(monkeypatch):
    X, y = _data(4, n=300)
    X[:, 3] = np.abs(np.round(X[:, 3] * 2)) % 4
    categorical = jitree.DecisionTreeRegressor(categorical_features=[3], random_state=0)
    with pytest.raises(ValueError, match="tests categories"):
        jitree.to_onnx(categorical.fit(X, X[:, 3] + y))
    with pytest.raises(TypeError, match="fitted jitree tree or forest"):
        jitree.to_onnx("model")
    with pytest.raises(jitree.NotFittedError):
        jitree.to_onnx(jitree.DecisionTreeRegressor())
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError, match=r"jitree\[onnx\]"):
        jitree.to_onnx(jitree.DecisionTreeRegressor(max_depth=2).fit(X, y))
