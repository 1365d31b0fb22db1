"""jitree.to_onnx and jitree.to_treelite: the exported models, run by onnxruntime and by
Treelite's GTIL, reach jitree's leaves (ONNX on float32 X: thresholds rounded down to float32)
with missing values and unseen categories routed as jitree routes them."""

import sys

import numpy as np
import pytest

import jitree


def _run(model, X):
    ort = pytest.importorskip("onnxruntime")
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


@pytest.mark.parametrize("labels", [np.array([3, 7]), np.array([-5, -2]), np.array([0, 1]),
                                    np.array([1.0, 2.0]), np.array(["no", "yes"])])
def test_binary_classifiers_label_as_predict(labels):
    """A binary classifier's leaves hold the second class's probability alone: given both
    classes', onnxruntime labelled rows 0 and 1 (a tree) or the second class everywhere (a
    forest) for integer labels."""
    X, y = _data(7)
    target = labels[(y > 0.3).astype(int)]
    for model in (jitree.DecisionTreeClassifier(max_depth=10, random_state=0),
                  jitree.RandomForestClassifier(n_estimators=10, random_state=0)):
        model.fit(X, target)
        label, probabilities = _run(model, X)
        proba = model.predict_proba(X)
        np.testing.assert_allclose(probabilities, proba, atol=1e-6)
        agree = label == model.predict(X)
        assert agree.mean() > 0.99
        assert np.all(agree | (np.abs(proba[:, 1] - 0.5) < 1e-6))  # float32 ties alone


def _ordinal_data(seed, n=2000):
    """Column 0: an ordinal feature of levels 10 .. 80 (not their ranks), with NaN;
    column 1 numeric."""
    rng = np.random.default_rng(seed)
    levels = np.array([10.0, 20.0, 35.0, 50.0, 80.0])
    X = np.column_stack([levels[rng.integers(0, 5, n)], rng.normal(size=n)])
    y = (X[:, 0] > 30) + X[:, 1]
    X[rng.random(n) < 0.05, 0] = np.nan
    return X.astype(np.float32), y


def test_ordinal_thresholds_are_exported_as_levels():
    """An ordinal feature's thresholds are kept on the levels' ranks: exported as they were,
    every row went the way of the largest levels (ONNX and Treelite predicted 1 where jitree
    predicted 0)."""
    X, y = _ordinal_data(8)
    label = (y > 0.5).astype(int)
    models = [jitree.DecisionTreeRegressor(ordinal_features=[0], max_depth=6).fit(X, y),
              jitree.RandomForestClassifier(n_estimators=5, ordinal_features=[0],
                                            random_state=0).fit(X, label)]
    for model in models:
        classifier = hasattr(model, "classes_")
        expected = model.predict_proba(X) if classifier else model.predict(X)[:, None]
        np.testing.assert_allclose(_run(model, X)[-1], expected, atol=1e-5)
        treelite = pytest.importorskip("treelite")
        out = treelite.gtil.predict(jitree.to_treelite(model), X.astype(np.float64))
        np.testing.assert_allclose(out.reshape(expected.shape), expected, rtol=1e-12)
    words = np.array(["low", "mid", "high"], dtype=object)[np.arange(300) % 3]
    named = jitree.DecisionTreeRegressor(ordinal_features=[0], max_depth=3).fit(
        np.column_stack([words, np.arange(300.0)]), np.arange(300) % 3 + np.arange(300) / 300)
    pytest.importorskip("onnx")
    with pytest.raises(ValueError, match="ordinal with levels"):
        jitree.to_onnx(named)


def test_refusals(monkeypatch):
    pytest.importorskip("onnx")
    X, y = _data(4, n=300)
    X[:, 3] = np.abs(np.round(X[:, 3] * 2)) % 4
    categorical = jitree.DecisionTreeRegressor(categorical_features=[3], random_state=0)
    with pytest.raises(ValueError, match="tests categories"):
        jitree.to_onnx(categorical.fit(X, X[:, 3] + y))
    with pytest.raises(TypeError, match="fitted jitree tree or forest"):
        jitree.to_onnx("model")
    # one class: onnxruntime's TreeEnsembleClassifier has no form for it (it predicted
    # another label, or aborted on string labels)
    for labels in (np.full(300, 7), np.full(300, "yes")):
        one_class = jitree.DecisionTreeClassifier(max_depth=2).fit(X, labels)
        with pytest.raises(ValueError, match="fitted on one class"):
            jitree.to_onnx(one_class)
    with pytest.raises(jitree.NotFittedError):
        jitree.to_onnx(jitree.DecisionTreeRegressor())
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError, match=r"jitree\[onnx\]"):
        jitree.to_onnx(jitree.DecisionTreeRegressor(max_depth=2).fit(X, y))


# -- Treelite ---------------------------------------------------------------------------------


def _categorical_data(seed, n=3000):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(size=n), rng.normal(size=n),
                         rng.integers(0, 6, size=n).astype(float)])
    y = X[:, 0] + (X[:, 2] % 3) * X[:, 1] + (X[:, 2] == 4)
    X[rng.random(n) < 0.1, 1] = np.nan
    X[rng.random(n) < 0.05, 2] = np.nan
    return X, y


@pytest.mark.parametrize("split", ["subset", "one_vs_rest"])
def test_treelite_predicts_as_jitree(split):
    treelite = pytest.importorskip("treelite")
    X, y = _categorical_data(5)
    rows = X.copy()
    rows[:100, 2] = 9.0  # a category the fit never saw: jitree's missing-value side
    label = np.digitize(y, [0.0, 1.0])
    sent_left = set()
    for model in (jitree.DecisionTreeRegressor(max_depth=8),
                  jitree.RandomForestRegressor(n_estimators=5, max_depth=8, random_state=0),
                  jitree.DecisionTreeClassifier(max_depth=8),
                  jitree.ExtraTreesClassifier(n_estimators=5, random_state=0)):
        model.set_params(categorical_features=[2], categorical_split=split)
        classifier = hasattr(model, "class_weight")
        model.fit(X, label if classifier else y)
        for estimator in getattr(model, "estimators_", [model]):
            tree = estimator.tree_
            sent_left.update(tree.missing_left[tree.split_kind == 1].tolist())
        out = treelite.gtil.predict(jitree.to_treelite(model), rows)
        expected = model.predict_proba(rows) if classifier else model.predict(rows)[:, None]
        np.testing.assert_array_equal(out.reshape(expected.shape), expected)
    assert sent_left == {0, 1}  # category tests routing missing values both ways were met


def test_treelite_lists_category_values():
    """Treelite tests a category by its value: the exported tests list the fitted categories'
    values, where they listed their codes (categories 3, 5, 9, 20 were read as 0 .. 3)."""
    treelite = pytest.importorskip("treelite")
    X, y = _categorical_data(9)
    values = np.array([3.0, 5.0, 9.0, 20.0, 21.0, 40.0])
    coded = X.copy()
    coded[:, 2] = np.where(np.isnan(X[:, 2]), np.nan,
                           values[np.nan_to_num(X[:, 2]).astype(int)])
    for split in ("subset", "one_vs_rest"):
        model = jitree.DecisionTreeRegressor(categorical_features=[2], categorical_split=split,
                                             max_depth=8).fit(coded, y)
        out = treelite.gtil.predict(jitree.to_treelite(model), coded)
        np.testing.assert_array_equal(out[:, 0, 0], model.predict(coded))
    for bad in (-1.0, 2.5):
        shifted = coded.copy()
        shifted[shifted[:, 2] == 3.0, 2] = bad
        model = jitree.DecisionTreeRegressor(categorical_features=[2], max_depth=8).fit(shifted,
                                                                                        y)
        with pytest.raises(ValueError, match=r"integers in \[0, 2\*\*32\)"):
            jitree.to_treelite(model)


def test_treelite_refusals(monkeypatch):
    pytest.importorskip("treelite")
    X, y = _categorical_data(6, n=400)
    multiway = jitree.DecisionTreeRegressor(categorical_features=[2], categorical_split="multiway",
                                            max_depth=3).fit(X, y)
    with pytest.raises(ValueError, match="multiway"):
        jitree.to_treelite(multiway)
    monkeypatch.setitem(sys.modules, "treelite", None)
    with pytest.raises(ImportError, match=r"jitree\[treelite\]"):
        jitree.to_treelite(jitree.DecisionTreeRegressor(max_depth=2).fit(X, y))
