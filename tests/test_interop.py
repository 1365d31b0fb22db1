"""from_sklearn: a converted scikit-learn tree predicts exactly as the original."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jitree
from jitree.model.interop import float32_equivalent_thresholds, from_sklearn
from jitree.model.persistence import load, save
from jitree.model.tree import TREE_LEAF, Tree
from jitree.model.tree_check import check_tree

sklearn = pytest.importorskip("sklearn")
from sklearn import ensemble  # noqa: E402
from sklearn.datasets import make_classification, make_regression  # noqa: E402
from sklearn.tree import DecisionTreeClassifier as SkClassifier  # noqa: E402
from sklearn.tree import DecisionTreeRegressor as SkRegressor  # noqa: E402
from sklearn.tree import ExtraTreeClassifier as SkExtraClassifier  # noqa: E402

X_CLASS, Y_CLASS = make_classification(n_samples=1500, n_features=8, n_informative=5,
                                       n_classes=3, random_state=0)
X_REG, Y_REG = make_regression(n_samples=1500, n_features=8, noise=5.0, random_state=0)
FLOAT32_MAX = float(np.finfo(np.float32).max)


def _straddling_rows(estimator, X, rng):
    """Rows that put, for every internal node, its feature on and around the float32 rounding
    boundaries next to its threshold: where a float64 x and float32(x) fall on different
    sides of a threshold."""
    tree = estimator.tree_
    rows = []
    for node in np.flatnonzero(tree.children_left != TREE_LEAF):
        t = tree.threshold[node]
        below = np.float32(t)
        if below > t:
            below = np.nextafter(below, np.float32(-np.inf))
        above = np.nextafter(below, np.float32(np.inf))
        middle = (float(below) + float(above)) / 2.0
        candidates = [t, np.nextafter(t, -np.inf), np.nextafter(t, np.inf), float(below),
                      float(above), middle, np.nextafter(middle, -np.inf),
                      np.nextafter(middle, np.inf), (float(below) + middle) / 2.0,
                      (middle + float(above)) / 2.0]
        for value in candidates:
            row = X[rng.integers(X.shape[0])].copy()
            row[tree.feature[node]] = value
            rows.append(row)
    return np.array(rows)


def _raw_threshold_model(estimator):
    """The naive conversion that copies thresholds unchanged (compares float64 x, not
    float32(x), with them)."""
    model = from_sklearn(estimator)
    tree = model.tree_
    internal = tree.children_left != TREE_LEAF
    threshold = np.where(internal, estimator.tree_.threshold, tree.threshold)
    raw = Tree(tree.n_features, tree.n_classes, tree.feature, threshold, tree.children_left,
               tree.children_right, tree.value, tree.impurity, tree.n_node_samples,
               tree.weighted_n_node_samples)
    return type(model)._from_tree(raw, classes=getattr(model, "classes_", None))


def _assert_same_as_sklearn(model, estimator, X):
    for X_eval in (X, X.astype(np.float32)):
        np.testing.assert_array_equal(model.apply(X_eval), estimator.apply(X_eval))
        np.testing.assert_array_equal(model.predict(X_eval), estimator.predict(X_eval))
        if hasattr(estimator, "predict_proba"):
            # jitree divides weighted counts (fraction * weight) by their sum: a few ulps
            np.testing.assert_allclose(model.predict_proba(X_eval),
                                       estimator.predict_proba(X_eval), rtol=1e-12,
                                       atol=1e-15)


@pytest.mark.parametrize("params", [
    dict(max_depth=4),
    dict(),
    dict(criterion="entropy", min_samples_leaf=3),
    dict(criterion="log_loss", max_leaf_nodes=20, class_weight="balanced"),
    dict(class_weight={0: 1.0, 1: 3.0, 2: 0.5}, max_features="sqrt", random_state=1),
])
def test_classifier_predictions_identical(params):
    estimator = SkClassifier(**{"random_state": 0, **params}).fit(X_CLASS, Y_CLASS)
    model = from_sklearn(estimator)
    assert type(model) is jitree.DecisionTreeClassifier
    check_tree(model.tree_, 8, 3)
    np.testing.assert_array_equal(model.classes_, estimator.classes_)
    assert model.n_features_in_ == 8
    assert model.get_depth() == estimator.get_depth()
    assert model.get_n_leaves() == estimator.get_n_leaves()
    rng = np.random.default_rng(0)
    X_test = np.concatenate([X_CLASS, rng.normal(size=(500, 8)) * 2,
                             _straddling_rows(estimator, X_CLASS, rng)])
    _assert_same_as_sklearn(model, estimator, X_test)
    # the weighted class counts sum to the node weights, as in a jitree-grown tree
    np.testing.assert_allclose(model.tree_.value.sum(axis=1),
                               model.tree_.weighted_n_node_samples, rtol=1e-12)


@pytest.mark.parametrize("params", [
    dict(max_depth=5),
    dict(),
    dict(criterion="absolute_error", max_depth=6),
    dict(min_samples_leaf=5, max_features=0.5, random_state=2),
])
def test_regressor_predictions_identical(params):
    estimator = SkRegressor(**{"random_state": 0, **params}).fit(X_REG, Y_REG)
    model = from_sklearn(estimator)
    assert type(model) is jitree.DecisionTreeRegressor
    assert model.criterion == params.get("criterion", "squared_error")  # refits the same
    check_tree(model.tree_, 8, 0)
    rng = np.random.default_rng(1)
    X_test = np.concatenate([X_REG, rng.normal(size=(500, 8)) * 2,
                             _straddling_rows(estimator, X_REG, rng)])
    _assert_same_as_sklearn(model, estimator, X_test)


@pytest.mark.parametrize("make", ["classifier", "regressor"])
def test_thresholds_reproduce_float32_comparisons(make):
    """On float64 values around float32 rounding boundaries, copying the thresholds unchanged
    would route rows differently from scikit-learn; the converted thresholds do not."""
    if make == "classifier":
        estimator = SkClassifier(random_state=0).fit(X_CLASS, Y_CLASS)
        X = X_CLASS
    else:
        estimator = SkRegressor(random_state=0).fit(X_REG, Y_REG)
        X = X_REG
    X_test = _straddling_rows(estimator, X, np.random.default_rng(2))
    expected = estimator.apply(X_test)
    np.testing.assert_array_equal(from_sklearn(estimator).apply(X_test), expected)
    naive = _raw_threshold_model(estimator).apply(X_test)
    assert (naive != expected).sum() > 10  # the data does straddle the boundaries


def test_float32_training_values_and_exact_threshold_hits():
    """Data held exactly in float32, and float64 test values equal to the thresholds."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 3)).astype(np.float32).astype(np.float64)
    y = (X[:, 0] + X[:, 1] > 0.2).astype(int)
    estimator = SkClassifier(random_state=0).fit(X, y)
    model = from_sklearn(estimator)
    internal = estimator.tree_.children_left != TREE_LEAF
    X_test = np.repeat(X[:1], internal.sum(), axis=0)
    X_test[np.arange(X_test.shape[0]), estimator.tree_.feature[internal]] = \
        estimator.tree_.threshold[internal]
    _assert_same_as_sklearn(model, estimator, np.concatenate([X, X_test]))


def test_missing_value_split_threshold():
    """A tree grown with NaN in X holds an infinite threshold (non-missing left, missing
    right): finite rows go left and NaN rows right, as in scikit-learn."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 3))
    X[::5, 1] = np.nan
    y = np.isnan(X[:, 1]).astype(int)
    estimator = SkClassifier(random_state=0).fit(X, y)
    assert np.isinf(estimator.tree_.threshold).any()
    model = from_sklearn(estimator)
    X_finite = np.concatenate([np.nan_to_num(X), [[0.0, 3e38, 0.0], [0.0, -3e38, 0.0]]])
    _assert_same_as_sklearn(model, estimator, X_finite)
    _assert_same_as_sklearn(model, estimator, X)
    np.testing.assert_array_equal(model.predict(X), y)


def _with_nan(X, fraction, rng):
    X = X.copy()
    X[rng.random(X.shape) < fraction] = np.nan
    return X


@pytest.mark.parametrize("make", [SkClassifier, SkRegressor])
@pytest.mark.parametrize("train_fraction", [0.0, 0.1, 0.3])
def test_missing_values_routed_as_in_sklearn(make, train_fraction):
    """Trained with or without NaN, rows with NaN reach scikit-learn's leaves: the learned
    side where a node saw missing values, the child with more samples elsewhere."""
    rng = np.random.default_rng(5)
    X, y = (X_CLASS, Y_CLASS) if make is SkClassifier else (X_REG, Y_REG)
    estimator = make(random_state=0, max_depth=8).fit(_with_nan(X, train_fraction, rng), y)
    model = from_sklearn(estimator)
    missing_go_to_left = estimator.tree_.missing_go_to_left.astype(bool)
    internal = estimator.tree_.children_left != TREE_LEAF
    np.testing.assert_array_equal(model.tree_.missing_left.astype(bool),
                                  missing_go_to_left & internal)
    if train_fraction:  # the learned sides differ from jitree's heavier-child default
        assert (model.tree_.missing_left != Tree(**{
            **model.tree_.arrays(), "missing_left": None, "n_features": 8,
            "n_classes": model.tree_.n_classes}).missing_left).any()
    X_test = np.concatenate([_with_nan(X[:500], 0.2, rng), _with_nan(X[500:700], 0.9, rng),
                             np.full((3, 8), np.nan)])
    _assert_same_as_sklearn(model, estimator, X_test)


def test_missing_values_survive_save_and_load(tmp_path):
    rng = np.random.default_rng(6)
    estimator = SkClassifier(random_state=0).fit(_with_nan(X_CLASS, 0.2, rng), Y_CLASS)
    path = tmp_path / "with_nan.jitree"
    save(from_sklearn(estimator), path)
    _assert_same_as_sklearn(load(path), estimator, _with_nan(X_CLASS, 0.2, rng))


def test_string_labels_feature_names_and_params():
    pd = pytest.importorskip("pandas")
    columns = [f"column {k}" for k in range(8)]
    frame = pd.DataFrame(X_CLASS, columns=columns)
    labels = np.array(["ant", "bee", "cat"])[Y_CLASS]
    estimator = SkClassifier(criterion="entropy", max_depth=6, min_samples_split=4,
                             min_impurity_decrease=1e-3, random_state=7).fit(frame, labels)
    model = from_sklearn(estimator)
    np.testing.assert_array_equal(model.feature_names_in_, columns)
    np.testing.assert_array_equal(model.classes_, ["ant", "bee", "cat"])
    params = model.get_params()
    assert (params["criterion"], params["max_depth"], params["min_samples_split"],
            params["min_impurity_decrease"], params["random_state"]) == \
        ("entropy", 6, 4, 1e-3, 7)
    np.testing.assert_array_equal(model.predict(frame), estimator.predict(frame))
    np.testing.assert_array_equal(model.predict(frame[columns[::-1]]),
                                  estimator.predict(frame))


def test_extra_tree_and_random_state_object():
    estimator = SkExtraClassifier(random_state=np.random.RandomState(0)).fit(X_CLASS, Y_CLASS)
    model = from_sklearn(estimator)
    assert model.splitter == "random"
    assert model.random_state is None
    assert model.max_features_ == estimator.max_features_
    _assert_same_as_sklearn(model, estimator, X_CLASS[:300])


def test_converted_model_survives_save_and_load(tmp_path):
    estimator = SkClassifier(max_depth=6, random_state=0).fit(X_CLASS, Y_CLASS)
    path = tmp_path / "converted.jitree"
    save(from_sklearn(estimator), path)
    _assert_same_as_sklearn(load(path), estimator, X_CLASS)


def test_refusals():
    with pytest.raises(ValueError, match="not fitted") as error:
        from_sklearn(SkClassifier())
    assert isinstance(error.value, jitree.NotFittedError)
    assert isinstance(error.value, sklearn.exceptions.NotFittedError)
    boosting = ensemble.GradientBoostingClassifier(n_estimators=2).fit(X_CLASS, Y_CLASS)
    native = jitree.DecisionTreeClassifier(max_depth=2).fit(X_CLASS, Y_CLASS)
    for other in (boosting, native, "tree", None, np.zeros(3)):
        with pytest.raises(TypeError, match="scikit-learn DecisionTreeClassifier"):
            from_sklearn(other)


@pytest.mark.parametrize("name", ["RandomForestClassifier", "RandomForestRegressor",
                                  "ExtraTreesClassifier", "ExtraTreesRegressor"])
def test_forests(name):
    sklearn_forest = getattr(ensemble, name)(n_estimators=5, max_depth=6, random_state=0)
    classifier = name.endswith("Classifier")
    X, y = (X_CLASS, Y_CLASS) if classifier else (X_REG, Y_REG)
    sklearn_forest.fit(X, y)
    model = from_sklearn(sklearn_forest)
    assert type(model).__name__ == name and len(model) == 5
    assert model.n_features_in_ == sklearn_forest.n_features_in_
    np.testing.assert_array_equal(model.predict(X), sklearn_forest.predict(X))
    np.testing.assert_array_equal(model.apply(X), sklearn_forest.apply(X))
    if classifier:
        np.testing.assert_allclose(model.predict_proba(X), sklearn_forest.predict_proba(X),
                                   atol=1e-12)
        np.testing.assert_array_equal(model.classes_, sklearn_forest.classes_)
    with pytest.raises(AttributeError, match="from_sklearn"):
        getattr(model, "estimators_samples_")  # noqa: B009
    with pytest.raises(ValueError, match="not fitted") as error:
        from_sklearn(getattr(ensemble, name)())
    assert isinstance(error.value, jitree.NotFittedError)
    # two outputs convert too
    two = getattr(ensemble, name)(n_estimators=2, random_state=0).fit(
        X, np.column_stack([y, y[::-1]]))
    np.testing.assert_array_equal(from_sklearn(two).predict(X), two.predict(X))


# -- the threshold transform itself --------------------------------------------------------------
float32_range = st.floats(-FLOAT32_MAX, FLOAT32_MAX, allow_nan=False)


@given(threshold=st.floats(allow_nan=False), x=float32_range)
def test_float32_equivalent_threshold_property(threshold, x):
    v = float32_equivalent_thresholds(np.array([threshold]))[0]
    for value in (x, v, np.nextafter(v, -np.inf), np.nextafter(v, np.inf)):
        if abs(value) <= FLOAT32_MAX:
            assert (value <= v) == (float(np.float32(value)) <= threshold)
    x32 = float(np.float32(x))
    assert (x32 <= v) == (x32 <= threshold)
    # v is the largest such value: the next float64 rounds to the float32 above
    assert np.isfinite(v)


def test_float32_equivalent_threshold_edges():
    tiny = float(np.finfo(np.float32).smallest_subnormal)
    for t in (0.0, -0.0, tiny, -tiny, tiny / 2, 1.0, -1.0, FLOAT32_MAX, -FLOAT32_MAX, 1e300,
              -1e300, np.inf, -np.inf, 0.1, 1 + 2.0**-24, 1 + 3 * 2.0**-24):
        v = float32_equivalent_thresholds(np.array([t]))[0]
        after = np.nextafter(v, np.inf)
        assert abs(v) > FLOAT32_MAX or float(np.float32(v)) <= t, t
        if abs(after) < FLOAT32_MAX:
            assert not float(np.float32(after)) <= t, t
    np.testing.assert_array_equal(float32_equivalent_thresholds(np.array([np.nan])), [np.nan])
