"""Every wrong input gets a ValueError or TypeError that names the problem (SPEC section 7)."""

import subprocess
import sys

import numpy as np
import pytest

import jitree
from jitree import DecisionTreeClassifier, DecisionTreeRegressor

X = np.random.default_rng(0).normal(size=(30, 3))
Y = (X[:, 0] > 0).astype(int)


@pytest.mark.parametrize("bad_X, error, match", [
    (np.zeros(30), ValueError, "Expected 2D array"),
    (np.zeros((2, 3, 5)), ValueError, "Expected 2D array"),
    (np.zeros((0, 3)), ValueError, "0 sample"),
    (np.zeros((30, 0)), ValueError, "0 feature"),
    (np.where(np.eye(30, 3) > 0, np.inf, 0.0), ValueError, "infinity"),
    (np.full((30, 3), "a", dtype=object), TypeError, "non-numeric"),
    (np.full((30, 3), "a"), TypeError, "strings"),
    (np.zeros((30, 3), dtype=complex), ValueError, "Complex"),
    (None, ValueError, "X is None"),
])
def test_bad_X_at_fit(bad_X, error, match):
    with pytest.raises(error, match=match):
        DecisionTreeClassifier().fit(bad_X, np.zeros(30 if bad_X is None or bad_X.ndim < 1
                                                     else max(bad_X.shape[0], 1)))


@pytest.mark.parametrize("bad_y, match", [
    (Y[:20], "inconsistent numbers of samples"),
    (np.where(np.arange(30) == 3, np.nan, 1.0), "NaN"),
    (np.zeros((30, 2, 2)), "1d array"),
    (np.linspace(0, 1, 30), "continuous"),
    (None, "requires y"),
    (np.array([1, "a"] * 15, dtype=object), "Unknown label type"),
])
def test_bad_y_classifier(bad_y, match):
    with pytest.raises(ValueError, match=match):
        DecisionTreeClassifier().fit(X, bad_y)


def test_bad_y_regressor():
    with pytest.raises(ValueError, match="NaN"):
        DecisionTreeRegressor().fit(X, np.where(np.arange(30) == 3, np.nan, 1.0))
    with pytest.raises(ValueError, match="infinity"):
        DecisionTreeRegressor().fit(X, np.where(np.arange(30) == 3, np.inf, 1.0))
    with pytest.raises(ValueError, match="numeric"):
        DecisionTreeRegressor().fit(X, np.array(["a"] * 30))


@pytest.mark.parametrize("weights, match", [
    (-np.ones(30), "Negative"),
    (np.where(np.arange(30) == 0, np.nan, 1.0), "NaN"),
    (np.zeros(30), "zero everywhere"),
    (np.ones(29), "shape"),
    (np.where(np.arange(30) == 0, np.inf, 1.0), "infinity"),
])
def test_bad_sample_weight(weights, match):
    with pytest.raises(ValueError, match=match):
        DecisionTreeClassifier().fit(X, Y, sample_weight=weights)


def test_weights_whose_sum_overflows_are_refused():
    """Finite weights whose total is infinite would make every criterion's sums infinite (a
    silent stump): refused, for sample_weight and for class_weight's products too."""
    huge = np.full(30, 1e307)
    with pytest.raises(ValueError, match="overflows float64"):
        DecisionTreeClassifier().fit(X, Y, sample_weight=huge)
    with pytest.raises(ValueError, match="overflows float64"):
        DecisionTreeRegressor().fit(X, X[:, 0], sample_weight=huge)
    heavy = {label: 1e308 for label in np.unique(Y)}
    with pytest.raises(ValueError, match="overflows float64"):
        DecisionTreeClassifier(class_weight=heavy).fit(X, Y)
    with pytest.raises(ValueError, match="overflows float64"):
        jitree.RandomForestClassifier(n_estimators=2, class_weight=heavy).fit(X, Y)
    # the same ratios, scaled down, grow a tree
    assert DecisionTreeClassifier().fit(X, Y, sample_weight=huge / 1e300).tree_.node_count > 1


@pytest.mark.parametrize("model", [
    DecisionTreeClassifier(random_state=0), DecisionTreeRegressor(random_state=0),
    jitree.RandomForestClassifier(n_estimators=2, random_state=0),
    jitree.RandomForestRegressor(n_estimators=2, random_state=0)])
def test_score_checks_y_and_sample_weight(model):
    """score refuses what fit refuses in y and sample_weight, and a y of another length."""
    regression = not hasattr(model, "predict_proba")
    target = X[:, 0] if regression else Y
    model.fit(X, target)
    n = X.shape[0]
    for weights, match in [(np.zeros(n), "zero everywhere"), (-np.ones(n), "Negative"),
                           (np.ones(n - 1), "shape"), (np.ones((n, 2)), "shape"),
                           (np.full(n, np.nan), "NaN")]:
        with pytest.raises(ValueError, match=match):
            model.score(X, target, sample_weight=weights)
    with pytest.raises(ValueError, match="y has shape"):
        model.score(X, target[:-1])
    if regression:
        with pytest.raises(ValueError, match="NaN"):
            model.score(X, np.where(np.arange(n) == 0, np.nan, target))
        with pytest.raises(ValueError, match="infinity"):
            model.score(X, np.where(np.arange(n) == 0, np.inf, target))
    # a column vector is one output's y, and unit weights are no weights
    assert model.score(X, target[:, None]) == model.score(X, target, np.ones(n))


def test_exports_refuse_scikit_learn_models_by_name():
    sklearn_tree = pytest.importorskip("sklearn.tree")
    for theirs in (sklearn_tree.DecisionTreeClassifier(max_depth=2).fit(X, Y),
                   sklearn_tree.DecisionTreeRegressor(max_depth=2).fit(X, X[:, 0])):
        for export in (jitree.export_text, jitree.rules, jitree.export_graphviz):
            with pytest.raises(TypeError, match="jitree.from_sklearn"):
                export(theirs)
        # converted, it exports
        assert jitree.export_text(jitree.from_sklearn(theirs))


def test_format_rules_checks_its_arguments():
    found = jitree.rules(DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, Y))
    with pytest.raises(ValueError, match="decimals must be a non-negative int"):
        jitree.format_rules(found, decimals=-1)
    with pytest.raises(TypeError, match="rules of jitree.rules"):
        jitree.format_rules([1, 2])
    assert jitree.format_rules(iter(found)) == jitree.format_rules(found)


@pytest.mark.parametrize("params, error, match", [
    (dict(criterion="squared_error"), ValueError, "criterion"),
    (dict(criterion="nope"), ValueError, "criterion"),
    (dict(splitter="worst"), ValueError, "splitter"),
    (dict(max_depth=0), ValueError, "max_depth"),
    (dict(max_depth=2.5), TypeError, "max_depth"),
    (dict(min_samples_split=1), ValueError, "min_samples_split"),
    (dict(min_samples_leaf=0), ValueError, "min_samples_leaf"),
    (dict(min_samples_leaf=1.5), ValueError, "min_samples_leaf"),
    (dict(min_weight_fraction_leaf=0.7), ValueError, "min_weight_fraction_leaf"),
    (dict(max_features=10), ValueError, "max_features"),
    (dict(max_features="all"), ValueError, "max_features"),
    (dict(max_features=0.0), ValueError, "max_features"),
    (dict(max_leaf_nodes=1), ValueError, "max_leaf_nodes"),
    (dict(min_impurity_decrease=-1.0), ValueError, "min_impurity_decrease"),
    (dict(purity_threshold=0.0), ValueError, "purity_threshold"),
    (dict(purity_threshold=1.5), ValueError, "purity_threshold"),
    (dict(impurity_threshold=-0.1), ValueError, "impurity_threshold"),
    (dict(impurity_threshold=float("nan")), ValueError, "impurity_threshold"),
    (dict(random_state="seed"), TypeError, "random_state"),
    (dict(random_state=-1), ValueError, "random_state"),
    (dict(class_weight="some"), ValueError, "class_weight"),
    (dict(class_weight={7: 1.0}), ValueError, "class_weight"),
    (dict(class_weight={0: -1.0}), ValueError, "class_weight"),
    (dict(n_jobs=0), ValueError, "n_jobs"),
    (dict(n_jobs="two"), TypeError, "n_jobs"),
])
def test_bad_hyperparameters(params, error, match):
    with pytest.raises(error, match=match):
        DecisionTreeClassifier(**params).fit(X, Y)


def test_regressor_rejects_classification_criterion():
    with pytest.raises(ValueError, match="criterion"):
        DecisionTreeRegressor(criterion="gini").fit(X, X[:, 0])


@pytest.mark.parametrize("method", ["predict", "predict_proba", "predict_log_proba", "apply",
                                    "decision_path"])
def test_predict_before_fit(method):
    with pytest.raises(jitree.NotFittedError, match="not fitted"):
        getattr(DecisionTreeClassifier(), method)(X)
    with pytest.raises(ValueError):  # NotFittedError is a ValueError too
        getattr(DecisionTreeClassifier(), method)(X)


def test_get_depth_before_fit():
    with pytest.raises(jitree.NotFittedError):
        DecisionTreeRegressor().get_depth()
    with pytest.raises(jitree.NotFittedError):
        _ = DecisionTreeRegressor().feature_importances_


def test_wrong_number_of_features_at_predict():
    model = DecisionTreeClassifier().fit(X, Y)
    with pytest.raises(ValueError, match="X has 2 features, but DecisionTreeClassifier is "
                                         "expecting 3 features"):
        model.predict(X[:, :2])
    with pytest.raises(ValueError, match="Expected 2D array"):
        model.predict(X[0])
    with pytest.raises(ValueError, match="infinity"):
        model.predict(np.full((2, 3), -np.inf))
    # NaN is a missing value, not an error: rows of NaN reach a leaf
    assert model.predict(np.full((2, 3), np.nan)).shape == (2,)
    # a forest's messages name the forest, not the tree that checks X for it
    forest = jitree.RandomForestClassifier(n_estimators=2).fit(X, Y)
    with pytest.raises(ValueError, match="X has 2 features, but RandomForestClassifier is "
                                         "expecting 3 features"):
        forest.predict(X[:, :2])


@pytest.mark.parametrize("regression", [False, True])
def test_tree_methods_check_X(regression):
    """The Tree's own walks (``est.tree_.apply``, as scikit-learn users call it) check X like
    the estimator: a wrong number of columns is refused (the walks read X[row, feature]
    unchecked, so too few columns read past each row), and lists, integers and sparse
    matrices are converted."""
    scipy_sparse = pytest.importorskip("scipy.sparse")
    model = (DecisionTreeRegressor() if regression else DecisionTreeClassifier()).fit(X, Y)
    tree = model.tree_
    leaves = model.apply(X)
    for wrong in (X[:, :2], np.zeros((4, 4)), np.ascontiguousarray(X[:, :1], np.float32)):
        with pytest.raises(ValueError, match=f"X has {wrong.shape[1]} features, but the tree"):
            tree.apply(wrong)
        with pytest.raises(ValueError, match="features, but the tree"):
            tree.decision_path(wrong)
        with pytest.raises(ValueError, match="features, but the tree"):
            tree.predict_table(wrong, tree.value)
    with pytest.raises(ValueError, match="Expected 2D array"):
        tree.apply(X[0])
    with pytest.raises(ValueError, match="node table has 1 rows"):
        tree.predict_table(X, tree.value[:1])
    for same in (X.tolist(), scipy_sparse.csr_matrix(X), np.asfortranarray(X)):
        np.testing.assert_array_equal(tree.apply(same), leaves)
    path = tree.decision_path(X)
    assert (path != model.decision_path(X)).nnz == 0


def test_X_that_is_no_array_is_refused_by_name():
    """An object NumPy reads as a 0-d object array (a dict, an iterator where chunks are not
    read) is refused with a TypeError naming its type, never an error from inside jitree."""
    model = DecisionTreeRegressor().fit(X, X[:, 0])
    explain = (lambda data: jitree.shap_values(model, data),
               lambda data: jitree.partial_dependence(model, data, [0]))
    for bad, kind, calls in (({"a": 1}, "dict", (model.predict, *explain)),
                             (object(), "object", (model.predict, *explain)),
                             (iter([X]), "list_iterator", explain)):
        for call in calls:
            with pytest.raises(TypeError, match=f"2-D array-like .* of type {kind}"):
                call(bad)
    with pytest.raises(TypeError, match="chunks is read by the prediction methods only"):
        jitree.shap_values(model, iter([X[:10], X[10:]]))
    for bad, kind in (({"a": 1}, "dict"), (iter([X]), "list_iterator")):
        with pytest.raises(TypeError, match=f"of type {kind}"):
            DecisionTreeRegressor().fit(bad, X[:, 0])
    assert model.predict(iter([X[:10], X[10:]])).shape == (30,)  # chunks, where they are read


def test_sparse_y_is_refused_by_name():
    scipy_sparse = pytest.importorskip("scipy.sparse")
    for model in (DecisionTreeClassifier(), DecisionTreeRegressor(),
                  jitree.RandomForestClassifier(n_estimators=2),
                  jitree.RandomForestRegressor(n_estimators=2)):
        with pytest.raises(TypeError, match="y is a sparse matrix of type csr_matrix"):
            model.fit(X, scipy_sparse.csr_matrix(Y[:, None].astype(float)))


@pytest.mark.parametrize("name", ["max_depth", "max_leaf_nodes", "min_samples_leaf",
                                  "min_samples_split"])
def test_int_parameters_beyond_int64_are_no_limit(name):
    """A count larger than any data set (2**65) acts as the largest: the same tree as no
    limit (max_depth, max_leaf_nodes), a single leaf (min_samples_*)."""
    for huge in (2**65, np.iinfo(np.int64).max):
        model = DecisionTreeClassifier(**{name: huge}).fit(X, Y)
        if name.startswith("min_"):
            assert model.tree_.node_count == 1
        else:
            np.testing.assert_array_equal(model.tree_.feature,
                                          DecisionTreeClassifier().fit(X, Y).tree_.feature)
    with pytest.raises(ValueError, match=f"got {2**65}"):
        DecisionTreeClassifier(max_features=2**65).fit(X, Y)


def test_wrong_feature_names_at_predict_and_reordered_columns():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model = DecisionTreeClassifier().fit(frame, Y)
    assert list(model.feature_names_in_) == ["a", "b", "c"]
    with pytest.raises(ValueError, match="Feature names unseen at fit time"):
        model.predict(frame.rename(columns={"c": "z"}))
    # the same columns in another order are matched by name
    np.testing.assert_array_equal(model.predict(frame[["c", "a", "b"]]), model.predict(frame))
    with pytest.raises(TypeError, match="column 'b'"):
        model.predict(frame.assign(b="text"))
    forest = jitree.ExtraTreesRegressor(n_estimators=2).fit(frame, X[:, 0])
    with pytest.warns(UserWarning, match="valid feature names, but ExtraTreesRegressor was "
                                         "fitted"):
        forest.predict(X)


def test_columns_named_as_methods_are_columns():
    """A DataFrame's columns are also its attributes: columns named ``toarray`` and
    ``tocsr`` do not make it a sparse matrix (the methods are looked for on the type), in
    fit and predict, of a tree and a forest."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=["toarray", "tocsr", "dtypes"])
    for model in (DecisionTreeClassifier(random_state=0),
                  jitree.RandomForestClassifier(n_estimators=3, random_state=0)):
        model.fit(frame, Y)
        assert list(model.feature_names_in_) == ["toarray", "tocsr", "dtypes"]
        np.testing.assert_array_equal(model.predict_proba(frame),
                                      model.fit(X, Y).predict_proba(X))
    with pytest.raises(TypeError, match="column 'tocsr' of X has dtype"):
        DecisionTreeClassifier().fit(frame.assign(tocsr="text"), Y)


@pytest.mark.parametrize("method", ["predict", "apply", "predict_proba"])
def test_feature_name_warnings_point_at_the_users_call(method):
    """Whatever the depth of jitree's own calls (a forest's walk of X as given, a tree's
    validation), the warning names the line that called the estimator."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    models = [DecisionTreeClassifier().fit(frame, Y),
              jitree.RandomForestClassifier(n_estimators=2, random_state=0).fit(frame, Y),
              jitree.RandomForestClassifier(n_estimators=2, random_state=0,
                                            categorical_features=[0]).fit(frame, Y)]
    for model in models:
        with pytest.warns(UserWarning, match="valid feature names") as caught:
            getattr(model, method)(X)
        assert [w.filename for w in caught] == [__file__], type(model).__name__
        model.fit(X, Y)
        with pytest.warns(UserWarning, match="X has feature names") as caught:
            getattr(model, method)(frame)
        assert [w.filename for w in caught] == [__file__], type(model).__name__


def test_sparse_input_errors_name_the_problem():
    sparse = pytest.importorskip("scipy.sparse")
    with pytest.raises(ValueError, match="Complex data"):
        DecisionTreeClassifier().fit(sparse.csr_matrix(X.astype(complex)), Y)
    with pytest.raises(ValueError, match="0 sample"):
        DecisionTreeClassifier().fit(sparse.csr_matrix((0, 3)), [])
    with pytest.raises(ValueError, match="0 feature"):
        DecisionTreeClassifier().fit(sparse.csr_matrix((4, 0)), [0, 1, 0, 1])


def test_single_class_and_single_sample_fit_a_leaf():
    model = DecisionTreeClassifier().fit(X, np.zeros(30))
    assert model.tree_.node_count == 1
    np.testing.assert_array_equal(model.predict(X), np.zeros(30))
    model = DecisionTreeRegressor().fit(X[:1], [2.5])
    assert model.predict(X).tolist() == [2.5] * 30


# -- the pruning set is checked like a fit ----------------------------------------------------
def test_reduced_error_pruning_set_is_checked_like_a_fit():
    model = DecisionTreeClassifier(random_state=0).fit(X, Y)
    n_nodes = model.tree_.node_count
    bad = [
        ((X, Y + 5), ValueError, "not among the classes"),
        ((X, np.where(Y == 1, "one", "zero")), ValueError, "not among the classes"),
        ((np.where(np.eye(30, 3) > 0, np.inf, X), Y), ValueError, "infinity"),
        ((X, Y[:20]), ValueError, "inconsistent numbers of samples"),
        ((X[:, :2], Y), ValueError, "2 features"),
        ((np.full((30, 3), "a", dtype=object), Y), TypeError, "non-numeric"),
        ((X, np.where(np.arange(30) == 3, np.nan, Y)), ValueError, "NaN"),
    ]
    for (X_prune, y_prune), error, match in bad:
        with pytest.raises(error, match=match):
            model.prune_reduced_error(X_prune, y_prune)
        assert model.tree_.node_count == n_nodes  # a refused pruning set changes nothing
    with pytest.raises(ValueError, match="Negative"):
        model.prune_reduced_error(X, Y, sample_weight=-np.ones(30))
    # NaN is a missing value, as in predict
    model.prune_reduced_error(np.where(np.eye(30, 3) > 0, np.nan, X), Y)

    regressor = DecisionTreeRegressor(random_state=0).fit(X, X[:, 0])
    n_nodes = regressor.tree_.node_count
    for y_prune, match in ((np.where(np.arange(30) == 3, np.inf, 0.0), "infinity"),
                           (np.where(np.arange(30) == 3, np.nan, 0.0), "NaN")):
        with pytest.raises(ValueError, match=match):
            regressor.prune_reduced_error(X, y_prune)
    with pytest.raises(ValueError, match="infinity"):
        regressor.prune_reduced_error(np.full((30, 3), np.inf), X[:, 0])
    assert regressor.tree_.node_count == n_nodes


def test_pessimistic_pruning_confidence():
    model = DecisionTreeClassifier(random_state=0).fit(X, Y)
    for confidence in ("0.25", float("nan"), 0.0, 1.0, True):
        with pytest.raises(ValueError, match="confidence"):
            model.prune_pessimistic(confidence)
    assert model.prune_pessimistic(np.float32(0.25)) is model  # NumPy reals are numbers too


# -- pandas' nullable columns ---------------------------------------------------------------
def test_pandas_na_in_nullable_columns_is_missing():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(1)
    n = 80
    with_nan = pd.DataFrame({"i": rng.integers(0, 5, n).astype(float),
                             "f": rng.normal(size=n),
                             "b": rng.integers(0, 2, n).astype(float)})
    with_nan.iloc[3:9, 0] = np.nan
    with_nan.iloc[10:14, 1] = np.nan
    with_nan.iloc[20:30, 2] = np.nan
    y = (with_nan["f"].fillna(0) + with_nan["i"].fillna(2) > 2).astype(int)
    nullable = with_nan.astype({"i": "Int64", "f": "Float64", "b": "boolean"})
    assert nullable.isna().sum().tolist() == [6, 4, 10]  # pd.NA where NaN was
    expected = DecisionTreeClassifier(random_state=0).fit(with_nan, y)
    model = DecisionTreeClassifier(random_state=0).fit(nullable, y)
    np.testing.assert_array_equal(model.tree_.threshold, expected.tree_.threshold)
    np.testing.assert_array_equal(model.predict(nullable), expected.predict(with_nan))
    np.testing.assert_array_equal(model.predict_proba(nullable.iloc[3:9]),
                                  expected.predict_proba(with_nan.iloc[3:9]))
    assert model.missing_values_in_feature_mask_.tolist() == [True, True, True]
    # pd.NA in a categorical column is a missing category, like None or NaN
    labels = pd.Series(np.array(["u", "v", "w"])[rng.integers(0, 3, n)], dtype=object)
    labels[40:50] = None
    frame = pd.DataFrame({"c": labels, "i": nullable["i"]})
    categorical = DecisionTreeClassifier(random_state=0, categorical_features=["c", "i"])
    by_none = categorical.fit(frame.assign(i=with_nan["i"]), y).predict(frame.assign(
        i=with_nan["i"]))
    model = jitree.clone(categorical).fit(frame.assign(c=labels.astype("string")), y)
    assert [list(c) for c in model.categories_] == [["u", "v", "w"], [0.0, 1.0, 2.0, 3.0, 4.0]]
    np.testing.assert_array_equal(model.predict(frame.assign(c=labels.astype("string"))),
                                  by_none)


def test_import_jitree_does_not_import_pandas():
    script = ("import sys\nimport jitree\n"
              "assert 'pandas' not in sys.modules, 'import jitree imported pandas'\n")
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)


# -- types and sizes that used to overflow or reach compiled code ------------------------------
def test_np_matrix_is_refused():
    with pytest.warns(PendingDeprecationWarning):  # NumPy's own, on making a matrix
        matrix = np.asmatrix(X)
    with pytest.raises(TypeError, match="np.matrix"):
        DecisionTreeClassifier().fit(matrix, Y)
    with pytest.raises(TypeError, match="np.matrix"):
        DecisionTreeRegressor(categorical_features=[0]).fit(matrix, X[:, 1])
    for model in (DecisionTreeClassifier().fit(X, Y),
                  DecisionTreeClassifier(categorical_features=[0]).fit(X, Y),
                  jitree.RandomForestClassifier(n_estimators=2,
                                                categorical_features=[0]).fit(X, Y)):
        for method in ("predict", "predict_proba", "apply"):
            with pytest.raises(TypeError, match="np.matrix"):
                getattr(model, method)(matrix)


def test_number_too_large_for_float64():
    huge = X.astype(object)
    huge[4, 1] = 10**400
    with pytest.raises(ValueError, match="too large for float64"):
        DecisionTreeClassifier().fit(huge, Y)
    with pytest.raises(ValueError, match="column 1 of X holds a number too large"):
        DecisionTreeClassifier(categorical_features=[0]).fit(huge, Y)
    with pytest.raises(ValueError, match="column 1 of X holds a number too large"):
        DecisionTreeClassifier(categorical_features=[1]).fit(huge, Y)
    with pytest.raises(ValueError, match="too large for float64"):
        DecisionTreeClassifier().fit(X, Y).predict(huge)
    with pytest.raises(ValueError, match="too large for float64"):
        DecisionTreeRegressor().fit(X, np.array([10**400] + [1] * 29, dtype=object))


@pytest.mark.parametrize("indices, match", [([2**63], "out of range"),
                                            ([2**70, 1], "out of range"),
                                            ([-2**70], "negative")])
def test_categorical_feature_index_past_int64(indices, match):
    with pytest.raises(ValueError, match=match):
        DecisionTreeClassifier(categorical_features=indices).fit(X, Y)


# -- strings where numbers are expected ------------------------------------------------------
@pytest.mark.parametrize("bad_X", [
    np.array([["1.5", "2", "3"]] * 30, dtype=object),
    [["1.5", "2", "3"]] * 30,
    np.array([["1.5", "2", "3"]] * 30, dtype=bytes),
    np.array([["1.5", "2", "3"]] * 30),
    np.array([[1.5, "2", 3.0]] * 30, dtype=object),
])
def test_numeric_strings_are_not_numbers(bad_X):
    with pytest.raises(TypeError, match="strings"):
        DecisionTreeClassifier().fit(bad_X, Y)
    with pytest.raises(TypeError, match="strings"):
        DecisionTreeClassifier().fit(X, Y).predict(bad_X)


def test_numeric_strings_in_a_declared_column_are_categories():
    rows = np.array([[str(k % 3), x] for k, x in enumerate(X[:, 0])], dtype=object)
    model = DecisionTreeClassifier(categorical_features=[0]).fit(rows, Y)
    assert model.categories_[0].tolist() == ["0", "1", "2"]
    assert model.predict(rows).shape == (30,)
    # strings in a column that is not declared are refused, naming the column
    rows[:, 1] = rows[:, 1].astype(str)
    with pytest.raises(TypeError, match="column 1 of X holds strings"):
        DecisionTreeClassifier(categorical_features=[0]).fit(rows, Y)
    with pytest.raises(TypeError, match="column 1 of X holds strings"):
        model.predict(rows)


# -- names that cannot be stored -------------------------------------------------------------
def test_feature_name_with_lone_surrogate(tmp_path):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=pd.Index(["a\ud800", "b", "c"], dtype=object))
    with pytest.raises(ValueError, match="not valid Unicode"):
        DecisionTreeClassifier().fit(frame, Y)
    with pytest.raises(ValueError, match="not valid Unicode"):
        jitree.RandomForestClassifier(n_estimators=2).fit(frame, Y)
    # a class label of that kind is kept, but a file cannot hold it
    model = DecisionTreeClassifier().fit(X, np.where(Y == 1, "yes\ud800", "no"))
    with pytest.raises(ValueError, match="not valid Unicode"):
        jitree.save(model, tmp_path / "model.jitree")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("model", [DecisionTreeClassifier(),
                                   jitree.RandomForestClassifier(n_estimators=2)])
def test_repeated_column_names_are_refused_at_fit(model):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(np.column_stack([X, X[:, :1]]), columns=["a", "b", "c", "a"])
    with pytest.raises(ValueError, match="several columns named 'a'"):
        model.fit(frame, Y)


# -- rules on a DataFrame ------------------------------------------------------------------
def test_rule_matches_a_dataframe_or_says_what_it_needs():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"x": X[:, 0], "c": np.where(X[:, 1] > 0, "u", "v")})
    labels = (X[:, 1] > 0) ^ (X[:, 0] > 1)  # c and x tested
    model = DecisionTreeClassifier(max_depth=2, categorical_features=["c"],
                                   random_state=0).fit(frame, labels)
    found = jitree.rules(model)
    tests_c = next(rule for rule in found if any(c.name == "c" for c in rule.conditions))
    with pytest.raises(TypeError, match="column 'c' of X has dtype .* codes"):
        tests_c.matches(frame)
    encoded = frame.assign(c=(frame["c"] == "v").astype(float))  # the codes: u -> 0, v -> 1
    masks = np.array([rule.matches(encoded) for rule in found])
    assert (masks.sum(axis=0) == 1).all()
    leaves = model.apply(frame)
    for rule, mask in zip(found, masks, strict=True):
        np.testing.assert_array_equal(mask, leaves == rule.leaf)
    # nullable columns: pd.NA is a missing value there too
    nullable = encoded.astype("Float64")
    nullable.iloc[0, 0] = pd.NA
    with_nan = encoded.copy()
    with_nan.iloc[0, 0] = np.nan
    for rule in found:
        np.testing.assert_array_equal(rule.matches(nullable), rule.matches(with_nan))
    with pytest.raises(TypeError, match="not numeric"):
        found[0].matches(frame.to_numpy())


def test_rule_matches_takes_a_dataframes_columns_by_name():
    """A DataFrame's tested columns are taken by name, as predict takes them, whatever their
    order."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(np.random.default_rng(1).normal(size=(200, 3)), columns=["a", "b", "c"])
    labels = (frame["a"] + frame["c"] > 0).astype(int)
    model = DecisionTreeClassifier(max_depth=3, random_state=0).fit(frame, labels)
    found = jitree.rules(model)
    leaves = model.apply(frame)
    for rule in found:
        np.testing.assert_array_equal(rule.matches(frame[["c", "b", "a"]]), leaves == rule.leaf)
        np.testing.assert_array_equal(rule.matches(frame), leaves == rule.leaf)


# -- forest parameters ---------------------------------------------------------------
@pytest.mark.parametrize("forest", [jitree.RandomForestClassifier,
                                    jitree.ExtraTreesClassifier])
def test_forest_max_samples_above_n_samples_allocates_no_draws(forest):
    """More draws than rows are allowed (scikit-learn 1.9): their multiplicities are drawn at
    once, so a huge max_samples costs no memory or time for the draws themselves."""
    for max_samples in (10**10, 31, 30):
        model = forest(n_estimators=2, bootstrap=True, max_samples=max_samples,
                       random_state=0).fit(X, Y)
        assert model.estimators_[0].tree_.weighted_n_node_samples[0] == max_samples
    with pytest.raises(ValueError, match="max_samples must be >= 1"):
        forest(n_estimators=2, bootstrap=True, max_samples=0).fit(X, Y)


@pytest.mark.parametrize("oob_score", ["yes", 1, None])
def test_forest_oob_score_must_be_a_bool_or_a_metric(oob_score):
    with pytest.raises(TypeError, match="oob_score must be True or False or a metric"):
        jitree.RandomForestRegressor(n_estimators=2, oob_score=oob_score).fit(X, X[:, 0])


# -- hand-built trees: integer fields are not cast -----------------------------------
def _stump(**arrays):
    """A hand-built stump on 2 features, with ``arrays`` replacing its defaults."""
    return jitree.Tree(**{
        "n_features": 2, "n_classes": 2, "feature": [0, -2, -2], "threshold": [0.5, -2, -2],
        "children_left": [1, -1, -1], "children_right": [2, -1, -1],
        "value": [[2.0, 1.0], [2.0, 0.0], [0.0, 1.0]], "impurity": [0.44, 0.0, 0.0],
        "n_node_samples": [3, 2, 1], "weighted_n_node_samples": [3.0, 2.0, 1.0], **arrays})


@pytest.mark.parametrize("arrays, error, match", [
    (dict(feature=[2**32, -2, -2]), ValueError, "tree.feature holds 4294967296, outside"),
    (dict(feature=np.array([2**32, -2, -2])), ValueError, "outside the range of int32"),
    (dict(feature=[2**70, -2, -2]), ValueError, "outside the range of int32"),
    (dict(children_left=[1.7, -1, -1]), ValueError, "children_left must hold integers"),
    (dict(children_right=np.array([np.nan, -1, -1])), ValueError, "must hold integers"),
    (dict(n_node_samples=[3.5, 2, 1]), ValueError, "n_node_samples must hold integers"),
    (dict(feature=["0", -2, -2]), TypeError, "tree.feature must hold integers"),
    (dict(n_features=2.5), TypeError, "n_features must be an int"),
])
def test_tree_integer_fields_are_not_cast(arrays, error, match):
    with pytest.raises(error, match=match):
        _stump(**arrays)


def test_tree_integral_floats_are_integers():
    tree = _stump(children_left=np.array([1.0, -1.0, -1.0]))
    assert tree.children_left.dtype == np.int32
    assert tree.children_left.tolist() == [1, -1, -1]


# -- a fitted tree is read-only ------------------------------------------------------------
def _fitted_trees(tmp_path):
    pickle = pytest.importorskip("pickle")
    model = DecisionTreeClassifier(random_state=0).fit(X, Y)
    yield model.tree_
    yield jitree.clone(model).set_params(ccp_alpha=0.01).fit(X, Y).tree_
    yield jitree.clone(model).fit(X, Y).prune_reduced_error(X[:10], Y[:10]).tree_
    yield jitree.clone(model).fit(X, Y).prune_pessimistic().tree_
    yield jitree.RandomForestClassifier(n_estimators=2, random_state=0).fit(X, Y) \
        .estimators_[1].tree_
    jitree.save(model, tmp_path / "model.jitree")
    yield jitree.load(tmp_path / "model.jitree").tree_
    yield pickle.loads(pickle.dumps(model)).tree_


def test_fitted_tree_arrays_are_read_only(tmp_path):
    for tree in _fitted_trees(tmp_path):
        for name, array in tree.arrays().items():
            assert not array.flags.writeable, name
        with pytest.raises(ValueError, match="read-only"):
            tree.feature[0] = 10**6
        with pytest.raises(ValueError, match="read-only"):
            tree.children_left[0] = 10**6
        for layout in tree.flat(np.float64)[:3]:  # the prediction layout, cached
            assert not layout.flags.writeable
        assert tree.apply(X).shape == (30,)


def test_hand_built_tree_owns_its_arrays_and_freezes_when_adopted():
    feature = np.array([0, -2, -2], dtype=np.int32)
    tree = _stump(feature=feature)
    assert not np.shares_memory(tree.feature, feature)
    tree.feature[0] = 1  # writable until an estimator takes it
    model = DecisionTreeClassifier._from_tree(tree, classes=np.array([0, 1]))
    with pytest.raises(ValueError, match="read-only"):
        model.tree_.feature[0] = 10**6
    feature[0] = 10**6  # the caller's array is not the tree's
    assert model.predict(X[:, :2]).shape == (30,)
