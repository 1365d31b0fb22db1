"""jitree.dask on a real two-process local cluster: lazy graphs, exact agreement with the
in-memory estimator, errors at graph time, and scikit-learn's search over the Dask backend."""

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")

import jitree  # noqa: E402
import jitree.dask  # noqa: E402

N_ROWS, N_FEATURES = 2000, 6
ROW_CHUNK = 700  # 700, 700, 600: the last chunk is shorter
FEATURES = [f"f{j}" for j in range(N_FEATURES)]


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(N_ROWS, N_FEATURES)).astype(np.float32)
    score = X[:, 0] + X[:, 1] ** 2 - 0.5 * X[:, 2]
    labels = np.array(["low", "middle", "high"])[np.digitize(score, [0.0, 1.5])]
    target = score + 0.1 * rng.normal(size=N_ROWS)
    return X, labels, target


@pytest.fixture(scope="module")
def classifier(data):
    X, labels, _ = data
    return jitree.DecisionTreeClassifier(min_samples_leaf=3).fit(X, labels)


@pytest.fixture(scope="module")
def regressor(data):
    X, _, target = data
    return jitree.DecisionTreeRegressor(max_depth=8).fit(X, target)


@pytest.fixture(scope="module")
def named_classifier(data):
    X, labels, _ = data
    return jitree.DecisionTreeClassifier(max_depth=6).fit(pd.DataFrame(X, columns=FEATURES),
                                                          labels)


def dask_array(X):
    # three column chunks as well: jitree.dask must merge them
    return da.from_array(X, chunks=(ROW_CHUNK, 2))


def dask_frame(X, columns=FEATURES):
    frame = pd.DataFrame(X, columns=FEATURES)[columns]
    return dd.from_pandas(frame, chunksize=ROW_CHUNK)


# -- agreement with the in-memory estimator -----------------------------------------------------

@pytest.mark.parametrize("model_name", ["classifier", "regressor"])
def test_array_predict_equals_local(client, data, model_name, request):
    model = request.getfixturevalue(model_name)
    X = data[0]
    result = jitree.dask.predict(model, dask_array(X))
    assert result.chunks == ((700, 700, 600),)
    computed = result.compute()
    expected = model.predict(X)
    assert computed.dtype == expected.dtype
    np.testing.assert_array_equal(computed, expected)


def test_array_proba_and_apply_equal_local(client, data, classifier):
    X = data[0]
    proba = jitree.dask.predict_proba(classifier, dask_array(X)).compute()
    np.testing.assert_array_equal(proba, classifier.predict_proba(X))
    leaves = jitree.dask.apply(classifier, dask_array(X)).compute()
    np.testing.assert_array_equal(leaves, classifier.apply(X))


def test_array_float64_and_int_input(client, data, regressor):
    X = data[0]
    for values in (X.astype(np.float64), np.round(X * 3).astype(np.int32)):
        result = jitree.dask.predict(regressor, da.from_array(values, chunks=(ROW_CHUNK, -1)))
        np.testing.assert_array_equal(result.compute(), regressor.predict(values))


def test_dataframe_predict_equals_local(client, data, named_classifier):
    X = data[0]
    shuffled = FEATURES[::-1]  # matched by name, as the estimator does for pandas
    frame = dask_frame(X, shuffled)
    local = pd.DataFrame(X, columns=FEATURES)
    labels = jitree.dask.predict(named_classifier, frame).compute()
    np.testing.assert_array_equal(labels.to_numpy(), named_classifier.predict(local))
    assert labels.index.equals(local.index)
    proba = jitree.dask.predict_proba(named_classifier, frame).compute()
    np.testing.assert_array_equal(proba.to_numpy(), named_classifier.predict_proba(local))
    assert list(proba.columns) == list(named_classifier.classes_)
    leaves = jitree.dask.apply(named_classifier, frame).compute()
    np.testing.assert_array_equal(leaves.to_numpy(), named_classifier.apply(local))


def test_dataframe_result_assigns_as_column(client, data, named_classifier):
    frame = dask_frame(data[0])
    with_labels = frame.assign(label=jitree.dask.predict(named_classifier, frame)).compute()
    expected = named_classifier.predict(pd.DataFrame(data[0], columns=FEATURES))
    np.testing.assert_array_equal(with_labels["label"].to_numpy(), expected)


def test_regressor_on_dataframe_fitted_without_names(client, data, regressor):
    X = data[0]
    frame = dd.from_pandas(pd.DataFrame(X), chunksize=ROW_CHUNK)  # integer column names
    result = jitree.dask.predict(regressor, frame)
    np.testing.assert_array_equal(result.compute().to_numpy(), regressor.predict(X))


def test_empty_partitions(client, data, named_classifier):
    X = data[0]
    local = pd.DataFrame(X, columns=FEATURES).sort_values("f0")
    frame = dd.from_pandas(local, chunksize=ROW_CHUNK, sort=False)
    kept = frame[frame["f0"] > local["f0"].iloc[1500]]  # the first two partitions end empty
    assert kept.map_partitions(len).compute().tolist()[:2] == [0, 0]
    labels = jitree.dask.predict(named_classifier, kept).compute()
    np.testing.assert_array_equal(labels.to_numpy(),
                                  named_classifier.predict(local.iloc[1501:]))
    proba = jitree.dask.predict_proba(named_classifier, kept).compute()
    assert proba.shape == (N_ROWS - 1501, 3)


def test_empty_blocks(client, data, classifier):
    X = da.from_array(data[0], chunks=((0, 1000, 0, 1000), N_FEATURES))
    np.testing.assert_array_equal(jitree.dask.predict(classifier, X).compute(),
                                  classifier.predict(data[0]))
    assert jitree.dask.predict_proba(classifier, X).compute().shape == (N_ROWS, 3)


# -- lazy metadata ------------------------------------------------------------------------------

def test_array_metadata_before_compute(data, classifier, regressor):
    X = dask_array(data[0])
    labels = jitree.dask.predict(classifier, X)
    assert labels.dtype == classifier.classes_.dtype and labels.dtype.kind == "U"
    assert labels._meta.shape == (0,) and labels._meta.dtype == labels.dtype
    assert labels.shape == (N_ROWS,)
    proba = jitree.dask.predict_proba(classifier, X)
    assert proba.dtype == np.float64 and proba.ndim == 2
    assert proba.chunks == ((700, 700, 600), (3,))
    assert jitree.dask.predict(regressor, X).dtype == np.float64
    assert jitree.dask.apply(regressor, X).dtype == np.int64


def test_object_labels_keep_their_dtype(client, data):
    X, labels, _ = data
    model = jitree.DecisionTreeClassifier(max_depth=4).fit(X, labels.astype(object))
    result = jitree.dask.predict(model, dask_array(X))
    assert result.dtype == object
    computed = result.compute()
    assert computed.dtype == object
    np.testing.assert_array_equal(computed, model.predict(X))


def test_dataframe_metadata_before_compute(data, named_classifier, regressor):
    frame = dask_frame(data[0])
    labels = jitree.dask.predict(named_classifier, frame)
    assert isinstance(labels, dd.Series)
    assert labels.dtype == pd.Series(named_classifier.classes_).dtype
    assert labels.npartitions == frame.npartitions
    assert labels.divisions == frame.divisions
    proba = jitree.dask.predict_proba(named_classifier, frame)
    assert isinstance(proba, dd.DataFrame)
    assert list(proba.columns) == ["high", "low", "middle"]
    assert (proba.dtypes == np.float64).all()
    unnamed = dd.from_pandas(pd.DataFrame(data[0]), chunksize=ROW_CHUNK)
    assert jitree.dask.predict(regressor, unnamed).dtype == np.float64
    assert jitree.dask.apply(regressor, unnamed).dtype == np.int64


def test_model_enters_graph_once_without_prediction_cache(data, classifier):
    X = data[0]
    classifier.predict(X)  # fills the tree's cached layouts
    assert classifier.tree_.__dict__.get("_cache")
    graph = dict(jitree.dask.predict(classifier, dask_array(X)).__dask_graph__())
    shipped = [key for key in graph if str(key).startswith("DecisionTreeClassifier")]
    assert len(shipped) == 1
    size = len(pickle.dumps(graph[shipped[0]]))
    arrays = sum(array.nbytes for array in classifier.tree_.arrays().values())
    assert size < arrays + 4096  # the node arrays and the parameters, nothing cached


# -- the work runs on the cluster's workers -----------------------------------------------------

def test_blocks_run_on_both_workers(client, data, regressor):
    X = da.from_array(np.tile(data[0], (4, 1)), chunks=(500, N_FEATURES))  # 16 blocks
    with distributed.get_task_stream(client) as stream:
        jitree.dask.predict(regressor, X).sum().compute()
    workers = {task["worker"] for task in stream.data if "predict_block" in str(task["key"])}
    assert workers == set(client.scheduler_info()["workers"])
    assert os.getpid() not in client.run(os.getpid).values()


# -- errors -------------------------------------------------------------------------------------

def test_unfitted_model(data):
    with pytest.raises(jitree.NotFittedError):
        jitree.dask.predict(jitree.DecisionTreeClassifier(), dask_array(data[0]))


def test_wrong_column_count_at_graph_time(data, classifier):
    with pytest.raises(ValueError, match="X has 5 features, but DecisionTreeClassifier is "
                                         "expecting 6"):
        jitree.dask.predict(classifier, dask_array(data[0][:, :5]))
    with pytest.raises(ValueError, match="X has 5 features"):
        jitree.dask.predict_proba(classifier, dd.from_pandas(pd.DataFrame(data[0][:, :5]),
                                                             npartitions=2))
    with pytest.raises(ValueError, match="Expected a 2-D dask array"):
        jitree.dask.predict(classifier, da.from_array(data[0][:, 0], chunks=700))


def test_unknown_column_count_at_compute_time(client, data, classifier):
    X = dask_array(data[0]).rechunk((ROW_CHUNK, -1))
    first_three = X[:, da.from_array(np.arange(N_FEATURES) < 3)]
    assert np.isnan(first_three.shape[1])
    result = jitree.dask.predict(classifier, first_three)  # nothing to check yet
    with pytest.raises(ValueError, match="X has 3 features"):
        result.compute()


def test_dataframe_names_checked_at_graph_time(data, named_classifier):
    renamed = dask_frame(data[0]).rename(columns={"f5": "other"})
    with pytest.raises(ValueError, match="Feature names unseen at fit time: \\['other'\\]"):
        jitree.dask.predict(named_classifier, renamed)
    text = dask_frame(data[0]).assign(f5="text")
    with pytest.raises(TypeError, match="column 'f5' of X has dtype"):
        jitree.dask.predict(named_classifier, text)


def test_name_warnings_come_once_at_graph_time(data, classifier, named_classifier):
    with pytest.warns(UserWarning, match="X has feature names, but DecisionTreeClassifier "
                                         "was fitted without"):
        jitree.dask.predict(classifier, dask_frame(data[0]))
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        jitree.dask.predict(named_classifier, dask_array(data[0]))


def test_non_dask_input_points_to_estimator(data, classifier, regressor):
    with pytest.raises(TypeError, match=r"call model\.predict_proba\(X\)"):
        jitree.dask.predict_proba(classifier, data[0])
    with pytest.raises(TypeError, match="to_frame"):
        jitree.dask.predict(classifier, dask_frame(data[0])["f0"])
    with pytest.raises(TypeError, match="fitted jitree estimator"):
        jitree.dask.predict(object(), dask_array(data[0]))
    with pytest.raises(AttributeError, match="no predict_proba"):
        jitree.dask.predict_proba(regressor, dask_array(data[0]))


def test_import_is_optional():
    script = (
        "import sys\n"
        "import jitree\n"
        "assert 'dask' not in sys.modules, 'import jitree imported dask'\n"
        "sys.modules['dask'] = None  # as if dask were not installed\n"
        "try:\n"
        "    import jitree.dask\n"
        "except ImportError as error:\n"
        "    assert \"pip install 'jitree[dask]'\" in str(error), error\n"
        "else:\n"
        "    raise AssertionError('no ImportError')\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)


# -- scikit-learn's search on the Dask joblib backend -------------------------------------------

def test_grid_search_on_dask_backend(client, data):
    joblib = pytest.importorskip("joblib")
    model_selection = pytest.importorskip("sklearn.model_selection")
    X, labels, _ = data
    grid = {"max_depth": [2, 4, None]}

    def search():
        return model_selection.GridSearchCV(jitree.DecisionTreeClassifier(), grid,
                                            cv=3).fit(X, labels)

    local = search()
    with joblib.parallel_backend("dask"), distributed.get_task_stream(client) as stream:
        on_dask = search()
    assert any("fit_and_score" in str(task["key"]) for task in stream.data)
    assert on_dask.best_params_ == local.best_params_
    np.testing.assert_array_equal(on_dask.cv_results_["mean_test_score"],
                                  local.cv_results_["mean_test_score"])


# -- training a forest's trees on the workers ---------------------------------------------------

def _same_forest(forest, local, X):
    assert len(forest.estimators_) == len(local.estimators_)
    for tree, local_tree in zip(forest.estimators_, local.estimators_, strict=True):
        arrays, local_arrays = tree.tree_.arrays(), local_tree.tree_.arrays()
        assert arrays.keys() == local_arrays.keys()
        for name, values in arrays.items():
            np.testing.assert_array_equal(values, local_arrays[name], err_msg=name)
        assert tree.get_params() == local_tree.get_params()
    np.testing.assert_array_equal(forest.predict(X), local.predict(X))
    np.testing.assert_array_equal(forest.feature_importances_, local.feature_importances_)
    assert forest.n_features_in_ == local.n_features_in_


def _grow_tasks(stream):
    return [task for task in stream.data if "jitree-grow-trees" in str(task["key"])]


def test_fit_forest_classifier_equals_local_fit(client, data):
    X, labels, _ = data
    weight = np.random.default_rng(3).uniform(0.5, 2.0, N_ROWS)
    params = dict(n_estimators=24, max_depth=8, oob_score=True,
                  class_weight="balanced_subsample", random_state=13)
    local = jitree.RandomForestClassifier(**params).fit(X, labels, sample_weight=weight)
    forest = jitree.RandomForestClassifier(**params)
    with distributed.get_task_stream(client) as stream:
        fitted = jitree.dask.fit_forest(forest, X, labels, client, sample_weight=weight)
    assert fitted is forest
    _same_forest(forest, local, X)
    np.testing.assert_array_equal(forest.classes_, local.classes_)
    np.testing.assert_array_equal(forest.predict_proba(X), local.predict_proba(X))
    assert forest.oob_score_ == local.oob_score_
    np.testing.assert_array_equal(forest.oob_decision_function_, local.oob_decision_function_)
    # by default one task per worker thread: two single-threaded workers, two tasks
    assert len(_grow_tasks(stream)) == 2


def test_fit_forest_extra_trees_regressor_on_pandas_equals_local_fit(client, data):
    X, _, target = data
    frame, series = pd.DataFrame(X, columns=FEATURES), pd.Series(target)
    params = dict(n_estimators=10, min_samples_leaf=2, max_features=0.5, random_state=4)
    local = jitree.ExtraTreesRegressor(**params).fit(frame, series)
    # no client given: the current one; 3 uneven groups of trees (4, 3, 3)
    forest = jitree.dask.fit_forest(jitree.ExtraTreesRegressor(**params), frame, series,
                                    n_groups=3)
    _same_forest(forest, local, frame)
    assert list(forest.feature_names_in_) == FEATURES


def test_fit_forest_grows_on_the_workers(client, data):
    X, labels, _ = data
    forest = jitree.ExtraTreesClassifier(n_estimators=4, max_depth=4, random_state=0)
    with distributed.get_task_stream(client) as stream:
        jitree.dask.fit_forest(forest, X, labels, client, n_groups=9)  # at most one per tree
    grown = _grow_tasks(stream)
    assert len(grown) == 4
    assert {task["worker"] for task in grown} == set(client.scheduler_info()["workers"])
    assert len(forest.estimators_) == 4


def test_fit_forest_warm_start_grows_only_the_new_trees(client, data):
    """A warm start keeps the fitted trees (the same objects) and grows the others on the
    workers: the forest of one local fit of all the trees, weighted bootstrap included."""
    X, labels, _ = data
    weight = np.random.default_rng(5).uniform(0.0, 2.0, N_ROWS)
    params = dict(max_depth=6, random_state=21)
    local = jitree.RandomForestClassifier(n_estimators=20, **params).fit(
        X, labels, sample_weight=weight)
    forest = jitree.RandomForestClassifier(n_estimators=12, warm_start=True, **params)
    forest.fit(X, labels, sample_weight=weight)
    kept = list(forest)
    forest.set_params(n_estimators=20)
    with distributed.get_task_stream(client) as stream:
        jitree.dask.fit_forest(forest, X, labels, client, sample_weight=weight, n_groups=4)
    assert forest[:12] == kept
    assert len(_grow_tasks(stream)) == 4  # the 8 new trees in 4 groups
    _same_forest(forest, local, X)
    with pytest.warns(UserWarning, match="Warm-start"):  # nothing to grow: no task
        jitree.dask.fit_forest(forest, X, labels, client, sample_weight=weight)
    assert list(forest) == forest.estimators_ and len(forest) == 20


def test_fit_forest_tree_saves_and_loads(client, data, tmp_path):
    X, _, target = data
    forest = jitree.dask.fit_forest(jitree.RandomForestRegressor(n_estimators=4, max_depth=6,
                                                                 random_state=2),
                                    X, target, client)
    tree = forest.estimators_[1]
    jitree.save(tree, tmp_path / "tree.jitree")
    loaded = jitree.load(tmp_path / "tree.jitree")
    np.testing.assert_array_equal(loaded.predict(X), tree.predict(X))


def test_fit_forest_bad_input(client, data):
    X, labels, _ = data
    with pytest.raises(TypeError, match="single DecisionTreeClassifier: fit it in memory with "
                                        r"estimator\.fit"):
        jitree.dask.fit_forest(jitree.DecisionTreeClassifier(), X, labels, client)
    with pytest.raises(TypeError, match="expects a jitree forest"):
        jitree.dask.fit_forest(object(), X, labels, client)
    with pytest.raises(TypeError, match="got a dask collection and y in memory: give X, y"):
        jitree.dask.fit_forest(jitree.RandomForestClassifier(), dask_array(X), labels, client)
    with pytest.raises(ValueError, match="n_groups must be >= 1"):
        jitree.dask.fit_forest(jitree.RandomForestClassifier(), X, labels, client, n_groups=0)
    for share, error in ((0.0, ValueError), (1.5, ValueError), (float("nan"), ValueError),
                         ("half", TypeError)):
        with pytest.raises(error, match=r"group_share must be (in \(0.0, 1.0\]|a float)"):
            jitree.dask.fit_forest(jitree.RandomForestClassifier(), X, labels, client,
                                   group_share=share)
    with pytest.raises(ValueError, match="n_estimators"):  # checked on the client
        jitree.dask.fit_forest(jitree.RandomForestClassifier(n_estimators=0), X, labels,
                               client)


def test_nullable_columns_and_weightless_partitions(client, data):
    """A nullable integer column predicts as in memory (Dask's stand-in rows hold a missing
    value); a partition whose rows all weigh 0 is part of a fit whose total is positive,
    and weights of 0 everywhere are refused as fit refuses them."""
    frame = pd.DataFrame({"a": np.arange(100) % 4})
    model = jitree.DecisionTreeClassifier().fit(frame, np.arange(100) % 4 >= 2)
    predicted = jitree.dask.predict(model, dd.from_pandas(frame.astype("Int64"),
                                                          npartitions=2)).compute()
    np.testing.assert_array_equal(np.asarray(predicted), model.predict(frame))
    X, labels, _ = data
    weight = np.ones(X.shape[0])
    weight[:ROW_CHUNK] = 0.0
    forest = jitree.RandomForestClassifier(n_estimators=2, random_state=0)
    jitree.dask.fit_forest(forest, dask_array(X), da.from_array(labels, chunks=ROW_CHUNK),
                           client, sample_weight=da.from_array(weight, chunks=ROW_CHUNK))
    assert len(forest.estimators_) == 2 and forest.score(X, labels) > 0.7  # 3 classes
    with pytest.raises(ValueError, match="zero everywhere"):
        jitree.dask.fit_forest(jitree.RandomForestClassifier(n_estimators=2), dask_array(X),
                               da.from_array(labels, chunks=ROW_CHUNK), client,
                               sample_weight=da.zeros(X.shape[0], chunks=ROW_CHUNK))


def test_fit_forest_refuses_a_scikit_learn_forest(data):
    ensemble = pytest.importorskip("sklearn.ensemble")
    X, labels, _ = data
    with pytest.raises(TypeError, match="expects a jitree forest .* got RandomForestClassifier"):
        jitree.dask.fit_forest(ensemble.RandomForestClassifier(), X, labels)


def test_forest_prediction_on_dask_equals_local(client):
    from jitree.datasets import make_classification_data

    X, y = make_classification_data(1500, 5, 3, seed=4)
    forest = jitree.RandomForestClassifier(n_estimators=5, max_depth=6, random_state=0)
    forest.fit(X, y)
    assert forest.estimators_[0].max_features_ == 2  # sqrt(5)
    X_dask = da.from_array(X, chunks=(600, 5))
    np.testing.assert_array_equal(jitree.dask.predict(forest, X_dask).compute(),
                                  forest.predict(X))
    np.testing.assert_allclose(jitree.dask.predict_proba(forest, X_dask).compute(),
                               forest.predict_proba(X))
    with pytest.raises(TypeError, match="single tree"):
        jitree.dask.apply(forest, X_dask)


# -- categorical features and missing values ----------------------------------------------------

CATEGORICAL_COLUMNS = ["city", "street", "size", "zone", "income"]


@pytest.fixture(scope="module")
def categorical_frame():
    """A pandas frame with category, ordered category, string and numeric columns, all with
    missing values, and a label and a target fitted on it."""
    rng = np.random.default_rng(11)
    city = rng.choice(["paris", "rome", "oslo", "lima"], N_ROWS).astype(object)
    street = rng.choice(["high", "main", "mill", "park"], N_ROWS).astype(object)
    size = rng.choice(["S", "M", "L"], N_ROWS).astype(object)
    zone = rng.integers(1, 6, N_ROWS).astype(np.float64)
    income = rng.normal(size=N_ROWS)
    score = (np.isin(city, ["rome", "lima"]) + (size == "L") + (street == "mill") + (zone == 3)
             + income + rng.normal(0, 0.3, N_ROWS))
    for column in (city, street, size):
        column[rng.random(N_ROWS) < 0.08] = None
    zone[rng.random(N_ROWS) < 0.08] = np.nan
    income[rng.random(N_ROWS) < 0.08] = np.nan
    frame = pd.DataFrame({
        "city": pd.Categorical(city), "street": pd.Series(street, dtype=object),
        "size": pd.Categorical(size, categories=["S", "M", "L"], ordered=True),
        "zone": zone, "income": income})
    return frame, np.array(["no", "yes"])[(score > 1).astype(int)], score


@pytest.fixture(scope="module")
def categorical_classifier(categorical_frame):
    frame, labels, _ = categorical_frame
    return jitree.DecisionTreeClassifier(max_depth=10,
                                         categorical_features=["street", "zone"]).fit(frame,
                                                                                      labels)


def test_categorical_dataframe_predict_equals_local(client, categorical_frame,
                                                    categorical_classifier):
    frame, _, _ = categorical_frame
    model = categorical_classifier
    shuffled = dd.from_pandas(frame[CATEGORICAL_COLUMNS[::-1]], chunksize=ROW_CHUNK)
    assert (shuffled.dtypes == "category").sum() == 2  # the dtypes reach the workers
    labels = jitree.dask.predict(model, shuffled).compute()
    np.testing.assert_array_equal(labels.to_numpy(), model.predict(frame))
    assert labels.index.equals(frame.index)
    proba = jitree.dask.predict_proba(model, shuffled).compute()
    np.testing.assert_array_equal(proba.to_numpy(), model.predict_proba(frame))
    leaves = jitree.dask.apply(model, shuffled).compute()
    np.testing.assert_array_equal(leaves.to_numpy(), model.apply(frame))


def test_categorical_partitions_with_their_own_categories(client, categorical_frame,
                                                          categorical_classifier):
    frame, _, _ = categorical_frame
    model = categorical_classifier
    # unknown categories: each partition's category dtype holds only the values it has,
    # and strings instead of categories: all are matched by value, as in memory
    as_values = frame.astype({"city": object, "size": object})
    per_partition = dd.from_pandas(as_values, chunksize=ROW_CHUNK).astype(
        {"city": "category", "street": "category"})
    assert not dd.utils.has_known_categories(per_partition["city"])
    strings = dd.from_pandas(as_values.astype({"city": "str", "size": "str"}),
                             chunksize=ROW_CHUNK)
    expected = model.predict(frame)
    for X in (per_partition, strings):
        np.testing.assert_array_equal(jitree.dask.predict(model, X).compute().to_numpy(),
                                      expected)


def test_categorical_forest_and_regressor_on_dask(client, categorical_frame):
    frame, labels, target = categorical_frame
    X = dd.from_pandas(frame, chunksize=ROW_CHUNK)
    forest = jitree.RandomForestClassifier(n_estimators=6, max_depth=6, random_state=0,
                                           categorical_features=["street"]).fit(frame, labels)
    np.testing.assert_array_equal(jitree.dask.predict_proba(forest, X).compute().to_numpy(),
                                  forest.predict_proba(frame))
    regressor = jitree.DecisionTreeRegressor(max_depth=6, categorical_features=["street"],
                                             categorical_split="multiway").fit(frame, target)
    np.testing.assert_array_equal(jitree.dask.predict(regressor, X).compute().to_numpy(),
                                  regressor.predict(frame))


def test_missing_values_in_dask_array(client, data, classifier):
    X = data[0].copy()
    X[::11, 2] = np.nan
    np.testing.assert_array_equal(jitree.dask.predict(classifier, dask_array(X)).compute(),
                                  classifier.predict(X))
    X[5, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        jitree.dask.predict(classifier, dask_array(X)).compute()


def test_categorical_dtypes_checked_at_graph_time(categorical_frame, categorical_classifier):
    frame, _, _ = categorical_frame
    X = dd.from_pandas(frame, chunksize=ROW_CHUNK)
    with pytest.raises(TypeError, match="column 'income' of X has dtype category, but the "
                                        "feature was numeric at fit"):
        jitree.dask.predict(categorical_classifier, X.assign(income=X["city"]))
    numbers = frame.assign(city=frame["zone"].astype("category"))  # known categories
    with pytest.raises(TypeError, match="column 'city' of X held string categories at fit, "
                                        "but now holds number values"):
        jitree.dask.predict(categorical_classifier,
                            dd.from_pandas(numbers, chunksize=ROW_CHUNK))
    with pytest.raises(TypeError, match="column 'city' of X held string categories"):
        jitree.dask.predict(categorical_classifier, X.assign(city=X["zone"]))
    # categories Dask does not know yet: checked by the estimator when computed
    unknown = jitree.dask.predict(categorical_classifier,
                                  X.assign(city=X["zone"].astype("category")))
    with pytest.raises(TypeError, match="column 'city' of X held string categories"):
        unknown.compute(scheduler="sync")


def test_fit_forest_on_categorical_frame_equals_local_fit(client, categorical_frame):
    frame, labels, _ = categorical_frame
    params = dict(n_estimators=16, max_depth=6, random_state=3, oob_score=True,
                  categorical_features=["street"], categorical_split="one_vs_rest")
    local = jitree.RandomForestClassifier(**params).fit(frame, labels)
    forest = jitree.dask.fit_forest(jitree.RandomForestClassifier(**params), frame, labels,
                                    client)
    _same_forest(forest, local, frame)
    assert forest.oob_score_ == local.oob_score_
    assert [None if c is None else list(c) for c in forest.estimators_[0].categories_] == \
        [None if c is None else list(c) for c in local.estimators_[0].categories_]
    # from dask partitions the categories are not learnt: refused, whatever the labels
    with pytest.raises(TypeError, match="numeric features only from dask collections"):
        jitree.dask.fit_forest(jitree.RandomForestClassifier(**{**params, "oob_score": False}),
                               dd.from_pandas(frame, chunksize=ROW_CHUNK),
                               dd.from_pandas(pd.Series(labels), chunksize=ROW_CHUNK), client)


# -- training a forest on partitions that live on the workers -----------------------------------

BIG_ROWS, BIG_FEATURES, BIG_CHUNK = 20_000, 10, 2_500


def _labels_of(X, noise):
    """Three classes from a score of X plus ``noise`` (standard normal; numpy or dask): the
    held-out accuracy is about 0.66, bounded by the noise more than by the number of rows.

    The price of growing each tree on one group's rows shows on labels without noise: there,
    at 20k and at 100k rows, the forest grown in two groups is 1.4 to 2.1 points below the
    local one (4 seeds each), as a forest grown on half of the rows would be."""
    score = X[:, 0] + X[:, 1] ** 2 - 0.7 * X[:, 2] * X[:, 3] + 0.5 * X[:, 9] + noise
    return (score > 0.3).astype(np.int64) + (score > 1.8).astype(np.int64)


@pytest.fixture(scope="module")
def held_out():
    rng = np.random.default_rng(99)
    X = rng.normal(size=(5_000, BIG_FEATURES))
    return X, _labels_of(X, rng.normal(size=5_000))


class _NeverOnTheClient:
    """Inside ``with``: computing a dask Array or DataFrame on the client raises, and what the
    client gathers is recorded (none of it may be rows of X or y)."""

    def __init__(self, monkeypatch, client):
        self.gathered = []

        def refuse(*args, **kwargs):
            raise AssertionError("fit_forest computed a dask collection on the client")

        def gather(futures, *args, **kwargs):
            result = original_gather(futures, *args, **kwargs)
            self.gathered.extend(result if isinstance(result, list) else [result])
            return result

        original_gather = client.gather
        monkeypatch.setattr(da.Array, "compute", refuse)
        monkeypatch.setattr(da.Array, "__array__", refuse)
        monkeypatch.setattr(dd.DataFrame, "compute", refuse)
        monkeypatch.setattr(dd.Series, "compute", refuse)
        monkeypatch.setattr(client, "gather", gather)

    def assert_no_rows_gathered(self):
        assert self.gathered  # summaries and trees came back
        for item in self.gathered:
            assert not isinstance(item, (np.ndarray, pd.DataFrame, pd.Series)), type(item)


def _accuracy_gap(forest, params, X_local, y_local, held_out):
    X_test, y_test = held_out
    local = jitree.RandomForestClassifier(**params).fit(X_local, y_local)
    return local.score(X_test, y_test) - forest.score(X_test, y_test)


def test_fit_forest_on_dask_array_born_on_the_workers(client, held_out, monkeypatch):
    rs = da.random.RandomState(5)
    X = rs.normal(size=(BIG_ROWS, BIG_FEATURES), chunks=(BIG_CHUNK, 5))  # two column chunks
    y = _labels_of(X, rs.normal(size=BIG_ROWS, chunks=BIG_CHUNK))
    params = dict(n_estimators=30, random_state=0, n_jobs=1)
    with monkeypatch.context() as patch:
        guard = _NeverOnTheClient(patch, client)
        with distributed.get_task_stream(client) as stream:
            forest = jitree.dask.fit_forest(jitree.RandomForestClassifier(**params), X, y,
                                            client)
        guard.assert_no_rows_gathered()
    assert len(_grow_tasks(stream)) == 2  # one group per worker thread
    assert forest.n_features_in_ == BIG_FEATURES and len(forest.estimators_) == 30
    np.testing.assert_array_equal(forest.classes_, [0, 1, 2])
    assert not hasattr(forest, "feature_names_in_") and forest.n_outputs_ == 1
    with pytest.raises(AttributeError, match="grown on parts of the rows"):
        _ = forest.estimators_samples_
    # each tree grew on half of the rows: the forest is within a point of one grown on all
    gap = _accuracy_gap(forest, params, X.compute(), y.compute(), held_out)
    assert gap < 0.01, gap
    # reproducible for the same partitioning
    again = jitree.dask.fit_forest(jitree.RandomForestClassifier(**params), X, y, client)
    np.testing.assert_array_equal(again.predict_proba(held_out[0]),
                                  forest.predict_proba(held_out[0]))


def test_fit_forest_on_parquet_files(client, held_out, tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(6)
    names = [f"x{j}" for j in range(BIG_FEATURES)]
    for index in range(4):  # a dataset of four files
        X = rng.normal(size=(BIG_ROWS // 4, BIG_FEATURES))
        frame = pd.DataFrame(X, columns=names).assign(
            label=np.array(["low", "middle", "high"])[_labels_of(X, rng.normal(size=len(X)))])
        frame.to_parquet(tmp_path / f"part-{index}.parquet")
    data = dd.read_parquet(tmp_path)
    assert data.npartitions == 4
    params = dict(n_estimators=30, random_state=1, n_jobs=1)
    with monkeypatch.context() as patch:
        guard = _NeverOnTheClient(patch, client)
        forest = jitree.dask.fit_forest(jitree.RandomForestClassifier(**params), data[names],
                                        data["label"], client)
        guard.assert_no_rows_gathered()
    assert list(forest.feature_names_in_) == names
    assert sorted(forest.classes_) == ["high", "low", "middle"]
    local_frame = pd.concat(pd.read_parquet(tmp_path / f"part-{index}.parquet")
                            for index in range(4))
    X_test = pd.DataFrame(held_out[0], columns=names)
    labels_test = np.array(["low", "middle", "high"])[held_out[1]]
    gap = _accuracy_gap(forest, params, local_frame[names], local_frame["label"],
                        (X_test, labels_test))
    assert gap < 0.01, gap
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(forest)).predict(X_test),
                                  forest.predict(X_test))
    tree = forest.estimators_[0]  # jitree.save writes single trees
    jitree.save(tree, tmp_path / "tree.jitree")
    np.testing.assert_array_equal(jitree.load(tmp_path / "tree.jitree").predict(X_test),
                                  tree.predict(X_test))


def test_fit_forest_on_one_group_of_partitions_equals_local_fit(client, data):
    """One group: the partitions concatenated in order, the forest of fit on them; class
    counts ('balanced') and weights (weighted draw) come from all the partitions."""
    X, labels, target = data
    weight = np.random.default_rng(8).uniform(0.5, 2.0, N_ROWS)
    params = dict(n_estimators=6, max_depth=6, class_weight="balanced", min_samples_leaf=0.01,
                  random_state=2)
    local = jitree.RandomForestClassifier(**params).fit(X, labels, sample_weight=weight)
    forest = jitree.dask.fit_forest(jitree.RandomForestClassifier(**params), dask_array(X),
                                    da.from_array(labels, chunks=500),  # rechunked like X
                                    client, sample_weight=da.from_array(weight, chunks=ROW_CHUNK),
                                    n_groups=1)
    _same_forest(forest, local, X)
    frame = dask_frame(X)
    params = dict(n_estimators=4, max_features=0.5, bootstrap=False, random_state=3)
    local = jitree.ExtraTreesRegressor(**params).fit(pd.DataFrame(X, columns=FEATURES), target)
    forest = jitree.dask.fit_forest(jitree.ExtraTreesRegressor(**params), frame,
                                    dd.from_pandas(pd.Series(target), chunksize=ROW_CHUNK),
                                    client, n_groups=1)
    _same_forest(forest, local, pd.DataFrame(X, columns=FEATURES))
    assert list(forest.feature_names_in_) == FEATURES
    # y of one column: taken as its column, with the warning of a forest fitted in memory
    in_memory = jitree.ExtraTreesRegressor(**params).fit(X, target)
    for features, column, same, rows in (
            (dask_array(X), da.from_array(target[:, None], chunks=(ROW_CHUNK, 1)), in_memory,
             X),
            (frame, dd.from_pandas(pd.DataFrame({"y": target}), chunksize=ROW_CHUNK), local,
             pd.DataFrame(X, columns=FEATURES))):
        with pytest.warns(Warning, match="column-vector") as caught:
            forest = jitree.dask.fit_forest(jitree.ExtraTreesRegressor(**params), features,
                                            column, client, n_groups=1)
        assert [w.filename for w in caught] == [__file__]
        _same_forest(forest, same, rows)


def test_fit_forest_group_share_of_one_equals_local_fit(client, data):
    """group_share=1.0: every group holds all the partitions, concatenated in order, so each
    tree is the one fit grows on X; X in memory takes every row whatever group_share."""
    X, labels, _ = data
    params = dict(n_estimators=6, max_depth=7, random_state=12)
    local = jitree.RandomForestClassifier(**params).fit(X, labels)
    with distributed.get_task_stream(client) as stream:
        forest = jitree.dask.fit_forest(jitree.RandomForestClassifier(**params),
                                        dask_array(X), da.from_array(labels, chunks=ROW_CHUNK),
                                        client, n_groups=3, group_share=1.0)
    assert len(_grow_tasks(stream)) == 3
    _same_forest(forest, local, X)
    in_memory = jitree.dask.fit_forest(jitree.RandomForestClassifier(**params), X, labels,
                                       client, group_share=0.2)
    _same_forest(in_memory, local, X)


@pytest.mark.parametrize("share", [None, 0.01, 0.3, 0.5, 0.77, 1.0])
def test_deal_partitions_gives_each_group_its_share(share):
    """Against its definition: the disjoint deal covers every partition once; with a share,
    each group keeps its dealt partitions, holds none twice, and holds at least the share of
    the rows, and takes no more than it needs (without its largest
    partition taken, it would be short)."""
    rng = np.random.default_rng(7)
    for _ in range(40):
        n_parts = int(rng.integers(1, 30))
        indices = sorted(rng.choice(100, n_parts, replace=False).tolist())
        n_rows = rng.integers(1, 1000, n_parts).tolist()
        rows = dict(zip(indices, n_rows, strict=True))
        n_groups = int(rng.integers(1, n_parts + 1))
        seed = int(rng.integers(2**31))
        dealt = jitree.dask._deal_partitions(indices, n_rows, n_groups, seed)
        assert sorted(i for group in dealt for i in group) == indices
        groups = jitree.dask._deal_partitions(indices, n_rows, n_groups, seed, share)
        assert groups == jitree.dask._deal_partitions(indices, n_rows, n_groups, seed, share)
        if share is None:
            assert groups == dealt
            continue
        for group, own in zip(groups, dealt, strict=True):
            assert group == sorted(set(group)) and set(own) <= set(group)
            size = sum(rows[i] for i in group)
            assert size >= share * sum(n_rows)
            extra = set(group) - set(own)
            if extra:
                assert size - max(rows[i] for i in extra) < share * sum(n_rows)


def test_fit_forest_on_partitions_warm_start(client, data):
    X, labels, _ = data
    forest = jitree.RandomForestClassifier(n_estimators=3, max_depth=4, warm_start=True,
                                           random_state=0).fit(X, labels)
    kept = list(forest)
    forest.set_params(n_estimators=7)
    y = da.from_array(labels, chunks=ROW_CHUNK)
    with distributed.get_task_stream(client) as stream:
        jitree.dask.fit_forest(forest, dask_array(X), y, client, n_groups=5)
    assert forest[:3] == kept and len(forest) == 7
    assert len(_grow_tasks(stream)) == 3  # at most one group per non-empty partition
    with pytest.raises(ValueError, match="warm_start=True: y has the classes"):
        jitree.dask.fit_forest(forest.set_params(n_estimators=8), dask_array(X),
                               da.from_array(labels[::-1].copy(), chunks=ROW_CHUNK)
                               .map_blocks(lambda block: np.where(block == "low", "new",
                                                                  block)), client)


def test_fit_forest_on_partitions_refusals(client, data):
    X, labels, target = data
    X_dask, y_dask = dask_array(X), da.from_array(labels, chunks=ROW_CHUNK)
    with pytest.raises(ValueError, match="cannot compute oob_score=True from dask partitions"):
        jitree.dask.fit_forest(jitree.RandomForestClassifier(oob_score=True), X_dask, y_dask,
                               client)
    with pytest.raises(ValueError, match="cannot store_leaf_samples=True"):
        jitree.dask.fit_forest(jitree.RandomForestRegressor(store_leaf_samples=True), X_dask,
                               da.from_array(target, chunks=ROW_CHUNK), client)
    with pytest.raises(TypeError, match="numeric features only from dask collections"):
        jitree.dask.fit_forest(jitree.RandomForestClassifier(categorical_features=[0]), X_dask,
                               y_dask, client)
    with pytest.raises(TypeError, match="got a dask collection and X in memory"):
        jitree.dask.fit_forest(jitree.RandomForestClassifier(), X, y_dask, client)
    with pytest.raises(TypeError, match="sample_weight in memory"):
        jitree.dask.fit_forest(jitree.RandomForestClassifier(), X_dask, y_dask, client,
                               sample_weight=np.ones(N_ROWS))
    with pytest.raises(TypeError, match="y as a dask Series when X is a dask DataFrame"):
        jitree.dask.fit_forest(jitree.RandomForestClassifier(), dask_frame(X), y_dask, client)
    with pytest.raises(TypeError, match="y as a 1-D dask Array when X is a dask Array"):
        jitree.dask.fit_forest(jitree.RandomForestClassifier(), X_dask,
                               dd.from_pandas(pd.Series(labels), chunksize=ROW_CHUNK), client)
    with pytest.raises(ValueError, match="X has 2000, y has 1990"):
        jitree.dask.fit_forest(jitree.RandomForestClassifier(), X_dask,
                               da.from_array(labels[:-10], chunks=ROW_CHUNK), client)
    with pytest.raises(TypeError, match="2-D dask Array or a dask DataFrame, got dask.Series"):
        jitree.dask.fit_forest(jitree.RandomForestClassifier(), dask_frame(X)["f0"], y_dask,
                               client)
    # checked on the workers as fit checks them: here, y aligned with X by its index (as
    # Dask aligns columns) leaves 10 rows without a target
    with pytest.raises(ValueError, match="NaN"):
        jitree.dask.fit_forest(jitree.RandomForestRegressor(), dask_frame(X),
                               dd.from_pandas(pd.Series(target[:-10]), chunksize=ROW_CHUNK),
                               client)
