"""scikit-learn's metadata routing: sample weights reach jitree estimators inside Pipeline and
GridSearchCV once requested, and give what fitting and scoring with them directly gives."""

import subprocess
import sys

import numpy as np
import pytest

import jitree

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone as sklearn_clone  # noqa: E402
from sklearn.exceptions import UnsetMetadataPassedError  # noqa: E402
from sklearn.model_selection import GridSearchCV, KFold  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

ESTIMATORS = {
    "tree_classifier": lambda: jitree.DecisionTreeClassifier(max_depth=4, random_state=0),
    "tree_regressor": lambda: jitree.DecisionTreeRegressor(max_depth=4, random_state=0),
    "forest_classifier": lambda: jitree.RandomForestClassifier(n_estimators=5, max_depth=4,
                                                               random_state=0),
    "forest_regressor": lambda: jitree.ExtraTreesRegressor(n_estimators=5, max_depth=4,
                                                           random_state=0),
}


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def data(kind, n=240, seed=0):
    """Continuous X; y a class or a target; weights far from uniform (they change the tree)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    if kind.endswith("classifier"):
        y = (X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(scale=0.5, size=n) > 0.4).astype(int)
    else:
        y = X[:, 0] * 2.0 + np.sin(2.0 * X[:, 1]) + rng.normal(scale=0.3, size=n)
    weight = rng.choice([0.2, 1.0, 5.0], size=n)
    return X, y, weight


def assert_same_model(a, b):
    models_a = getattr(a, "estimators_", [a])
    models_b = getattr(b, "estimators_", [b])
    assert len(models_a) == len(models_b)
    for tree_a, tree_b in zip(models_a, models_b, strict=True):
        np.testing.assert_array_equal(tree_a.tree_.threshold, tree_b.tree_.threshold)
        np.testing.assert_array_equal(tree_a.tree_.value, tree_b.tree_.value)


@pytest.mark.parametrize("kind", list(ESTIMATORS))
def test_pipeline_routes_weights_to_fit_and_score(kind, routing):
    X, y, weight = data(kind)
    model = ESTIMATORS[kind]().set_fit_request(sample_weight=True) \
        .set_score_request(sample_weight=True)
    pipe = make_pipeline(StandardScaler().set_fit_request(sample_weight=False), model)
    pipe.fit(X, y, sample_weight=weight)
    scaled = StandardScaler().fit_transform(X)
    direct = ESTIMATORS[kind]().fit(scaled, y, sample_weight=weight)
    assert_same_model(pipe[-1], direct)
    unweighted = ESTIMATORS[kind]().fit(scaled, y)
    assert not np.array_equal(unweighted.predict(scaled), direct.predict(scaled)), \
        "the weights should change the model, or the test shows nothing"
    assert pipe.score(X, y, sample_weight=weight) == direct.score(scaled, y,
                                                                  sample_weight=weight)
    assert pipe.score(X, y, sample_weight=weight) != direct.score(scaled, y)


@pytest.mark.parametrize("kind", ["tree_classifier", "forest_regressor"])
def test_grid_search_routes_weights_to_fit_and_score(kind, routing):
    X, y, weight = data(kind)
    model = ESTIMATORS[kind]().set_fit_request(sample_weight=True) \
        .set_score_request(sample_weight=True)
    cv = KFold(3, shuffle=True, random_state=0)
    grid = {"max_depth": [2, 5]}
    search = GridSearchCV(model, grid, cv=cv).fit(X, y, sample_weight=weight)
    for i, params in enumerate(search.cv_results_["params"]):
        for split, (train, test) in enumerate(cv.split(X, y)):
            fitted = ESTIMATORS[kind]().set_params(**params).fit(
                X[train], y[train], sample_weight=weight[train])
            expected = fitted.score(X[test], y[test], sample_weight=weight[test])
            assert search.cv_results_[f"split{split}_test_score"][i] == pytest.approx(
                expected, rel=1e-12)
    direct = ESTIMATORS[kind]().set_params(**search.best_params_).fit(
        X, y, sample_weight=weight)
    assert_same_model(search.best_estimator_, direct)


def test_alias_routes_a_renamed_weight(routing):
    X, y, weight = data("tree_classifier")
    model = jitree.DecisionTreeClassifier(max_depth=4, random_state=0) \
        .set_fit_request(sample_weight="fit_weight")
    pipe = make_pipeline(model).fit(X, y, fit_weight=weight)
    assert_same_model(pipe[-1], jitree.DecisionTreeClassifier(max_depth=4, random_state=0)
                      .fit(X, y, sample_weight=weight))


def test_requests_are_reported_kept_by_clone_and_refused_when_unset(routing):
    model = jitree.DecisionTreeRegressor()
    assert model.get_metadata_routing().fit.requests == {"sample_weight": None}
    assert model.get_metadata_routing().score.requests == {"sample_weight": None}
    X, y, weight = data("tree_regressor")
    with pytest.raises(UnsetMetadataPassedError, match=r"sample_weight.*set_fit_request"):
        make_pipeline(model).fit(X, y, sample_weight=weight)
    assert model.set_fit_request(sample_weight=False) is model
    model.set_score_request(sample_weight=True)
    model.set_fit_request()  # UNCHANGED: keeps the request
    for copy in (sklearn_clone(model), jitree.clone(model)):
        assert copy.get_metadata_routing().fit.requests == {"sample_weight": False}
        assert copy.get_metadata_routing().score.requests == {"sample_weight": True}
    # False: not routed (here only the scaler takes the weights), the fit is unweighted
    pipe = make_pipeline(StandardScaler().set_fit_request(sample_weight=True), model)
    pipe.fit(X, y, sample_weight=weight)
    scaled = StandardScaler().fit(X, sample_weight=weight).transform(X)
    assert_same_model(pipe[-1], jitree.DecisionTreeRegressor().fit(scaled, y))
    # the report is a copy
    model.get_metadata_routing().fit.add_request(param="sample_weight", alias=True)
    assert model.get_metadata_routing().fit.requests == {"sample_weight": False}
    # requests do not touch the parameters
    assert jitree.clone(model).get_params() == jitree.DecisionTreeRegressor().get_params()


def test_bad_requests_are_refused(routing):
    model = jitree.RandomForestClassifier()
    with pytest.raises(ValueError, match="valid identifier or one of"):
        model.set_fit_request(sample_weight="not an identifier")
    with pytest.raises(ValueError, match="valid identifier or one of"):
        model.set_score_request(sample_weight=3)
    with pytest.raises(TypeError, match="sample_weights"):
        model.set_fit_request(sample_weights=True)
    with pytest.raises(TypeError):
        model.set_fit_request(True)


def test_requests_need_routing_enabled():
    with sklearn.config_context(enable_metadata_routing=False):
        with pytest.raises(RuntimeError, match=r"set_config\(enable_metadata_routing=True\)"):
            jitree.DecisionTreeClassifier().set_fit_request(sample_weight=True)


def test_requestable_metadata_are_the_methods_parameters():
    import inspect

    from jitree.model._routing import REQUESTABLE

    for make in ESTIMATORS.values():
        model = make()
        for method, params in REQUESTABLE.items():
            signature = inspect.signature(getattr(model, method)).parameters
            assert [name for name in signature if name not in ("X", "y")] == list(params)


def test_routing_without_scikit_learn_names_the_extra(monkeypatch):
    for name in ("sklearn", "sklearn.utils", "sklearn.utils.metadata_routing"):
        monkeypatch.setitem(sys.modules, name, None)  # None in sys.modules: import fails
    model = jitree.DecisionTreeClassifier()
    for call in (lambda: model.set_fit_request(sample_weight=True),
                 lambda: model.set_score_request(sample_weight=True),
                 model.get_metadata_routing):
        with pytest.raises(ImportError, match=r"pip install 'jitree\[sklearn\]'"):
            call()


def test_import_jitree_does_not_import_scikit_learn():
    script = ("import sys\nimport numpy as np\nimport jitree\n"
              "X = np.arange(20.0).reshape(10, 2)\n"
              "model = jitree.DecisionTreeClassifier().fit(X, np.arange(10) % 2)\n"
              "jitree.clone(model).get_params()\n"
              "assert 'sklearn' not in sys.modules, 'jitree imported scikit-learn'\n")
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
