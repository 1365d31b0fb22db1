"""Regression criteria beyond squared error: poisson (half Poisson deviance)."""

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitree

from naive import brute_force_best, node_members, poisson_deviance, split_value, walk_against


def _rates(seed, n, d=4, zeros=0.0):
    """Tie-free positive targets (a gamma rate per row), optionally with some zeros."""
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = rng.gamma(2.0, np.exp(X[:, 0] - X[:, 1]))
    if zeros:
        y[rng.random(n) < zeros] = 0.0
    return X, y


def _walk_same(ours, theirs, X, y, w):
    """:func:`naive.walk_against` under poisson, with the nodes' impurities equal."""
    def same_impurity(a, b):
        assert ours.impurity[a] == pytest.approx(theirs.impurity[b], rel=1e-9, abs=1e-12)
        return True

    return walk_against(ours, theirs, X, y, w, "poisson", 0, same_impurity)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("params", [dict(max_depth=4), dict(min_samples_leaf=5),
                                    dict(max_leaf_nodes=25), dict(max_depth=6,
                                                                  min_samples_split=30)])
@pytest.mark.parametrize("weighted", [False, True])
def test_poisson_tree_identical_to_sklearn(seed, params, weighted):
    sklearn_tree = pytest.importorskip("sklearn.tree")
    X, y = _rates(seed, 1500)
    X = X.astype(np.float32)  # the values scikit-learn splits
    w = np.random.default_rng(seed + 10).uniform(0.5, 2.0, y.shape[0]) if weighted else None
    ours = jitree.DecisionTreeRegressor(criterion="poisson", **params).fit(X, y, w)
    theirs = sklearn_tree.DecisionTreeRegressor(criterion="poisson", random_state=0,
                                                **params).fit(X, y, w)
    ties, same = _walk_same(ours.tree_, theirs.tree_, X, y,
                            np.ones_like(y) if w is None else w)
    # ties are rare (small nodes where two features cut the same samples)
    assert same >= 0.9 * (ours.tree_.node_count - ours.tree_.n_leaves)
    if ties == 0:
        assert ours.tree_.node_count == theirs.tree_.node_count
        np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-12)
        np.testing.assert_allclose(ours.feature_importances_, theirs.feature_importances_,
                                   rtol=1e-7, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(6, 40), st.floats(0.0, 0.6),
       st.booleans())
def test_poisson_root_split_is_the_brute_force_best(seed, n, zeros, weighted):
    X, y = _rates(seed, n, d=3, zeros=zeros)
    if y.sum() <= 0:
        y[0] = 1.0
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.2, 3.0, n) if weighted else np.ones(n)
    tree = jitree.DecisionTreeRegressor(criterion="poisson", max_depth=1).fit(X, y, w).tree_
    best = brute_force_best("poisson", X, y, w, 0)
    if tree.node_count == 1:
        assert best == -np.inf  # every split leaves a child of zero sum (or there is none)
        return
    ours = split_value("poisson", y, w, X[:, tree.feature[0]] <= tree.threshold[0], 0)
    assert ours == pytest.approx(best, rel=1e-9, abs=1e-12)
    assert tree.impurity[0] == pytest.approx(poisson_deviance(y, w), rel=1e-9, abs=1e-12)


def test_poisson_never_makes_a_child_of_zero_sum():
    X, y = _rates(3, 800, zeros=0.5)
    model = jitree.DecisionTreeRegressor(criterion="poisson").fit(X, y)
    tree = model.tree_
    members = node_members(tree, X)
    sums = members.astype(float) @ y
    assert (sums > 0).all()
    assert (tree.value[:, 0] > 0).all()
    assert np.isfinite(tree.impurity).all()
    # squared error does isolate the zeros
    assert (jitree.DecisionTreeRegressor().fit(X, y).tree_.value[:, 0] == 0).any()


def test_poisson_trees_do_not_depend_on_the_scale_of_y():
    X, y = _rates(4, 600)
    base = jitree.DecisionTreeRegressor(criterion="poisson", max_depth=6).fit(X, y).tree_
    for scale in (2.0**-30, 2.0**20, 2.0**600):  # exact scalings: the same scores bit for bit
        scaled = jitree.DecisionTreeRegressor(criterion="poisson", max_depth=6).fit(
            X, y * scale).tree_
        np.testing.assert_array_equal(scaled.feature, base.feature)
        np.testing.assert_array_equal(scaled.threshold, base.threshold)
        np.testing.assert_allclose(scaled.value, base.value * scale, rtol=1e-12)
        np.testing.assert_allclose(scaled.impurity, base.impurity * scale, rtol=1e-9,
                                   atol=1e-300)


def test_poisson_impurity_measure():
    y = np.array([0.0, 1.0, 2.0, 5.0, 0.0, 3.0])
    w = np.array([1.0, 2.0, 0.5, 1.0, 3.0, 1.0])
    assert jitree.measures.impurity(y, "poisson") == pytest.approx(
        poisson_deviance(y, np.ones(6)), rel=1e-12)
    assert jitree.measures.impurity(y, "poisson", w) == pytest.approx(
        poisson_deviance(y, w), rel=1e-12)
    groups = np.array([0, 1, 1, 1, 0, 1])
    assert jitree.measures.split_gain(y, groups, "poisson", w) == pytest.approx(
        split_value("poisson", y, w, groups == 0, 0), rel=1e-9)
    # constant targets: no deviance
    assert jitree.measures.impurity(np.full(5, 7.0), "poisson") == 0.0


@pytest.mark.parametrize("y, weight, message", [
    (np.array([1.0, -1.0, 2.0, 3.0]), None, "y are negative"),
    (np.zeros(4), None, "positive sum"),
    (np.array([0.0, 0.0, 2.0, 0.0]), np.array([1.0, 1.0, 0.0, 1.0]), "positive sum"),
])
def test_poisson_bad_targets(y, weight, message):
    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(ValueError, match=message):
        jitree.DecisionTreeRegressor(criterion="poisson").fit(X, y, weight)
    if weight is None:
        with pytest.raises(ValueError, match=message):
            jitree.RandomForestRegressor(criterion="poisson", n_estimators=2).fit(X, y)


def test_poisson_is_a_regression_criterion_only():
    X, y = _rates(5, 50)
    with pytest.raises(ValueError, match="criterion"):
        jitree.DecisionTreeClassifier(criterion="poisson").fit(X, y > 1)


def test_poisson_forest_missing_values_categories_and_persistence(tmp_path):
    X, y = _rates(6, 1200)
    X[np.random.default_rng(0).random(X.shape) < 0.1] = np.nan
    X[:, 3] = np.floor(np.nan_to_num(X[:, 3]) * 12)
    for split in ("subset", "multiway", "one_vs_rest"):
        model = jitree.DecisionTreeRegressor(criterion="poisson", categorical_features=[3],
                                             categorical_split=split,
                                             min_samples_leaf=10).fit(X, y)
        assert (model.predict(X) > 0).all()
        assert model.score(X, y) > 0.2
    forest = jitree.RandomForestRegressor(criterion="poisson", n_estimators=8,
                                          random_state=0).fit(X, y)
    extra = jitree.ExtraTreesRegressor(criterion="poisson", n_estimators=8,
                                       random_state=0).fit(X, y)
    assert forest.score(X, y) > 0.5 and extra.score(X, y) > 0.5
    assert (forest.predict(X) > 0).all()
    path = tmp_path / "poisson.jitree"
    jitree.save(model, path)
    loaded = jitree.load(path)
    assert loaded.criterion == "poisson"
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    text = io.StringIO(jitree.export_text(model, max_depth=2))
    assert "poisson" in jitree.export_graphviz(model) or "poisson" in text.getvalue()


@pytest.mark.parametrize("name", ["DecisionTreeRegressor", "ExtraTreeRegressor",
                                  "RandomForestRegressor", "ExtraTreesRegressor"])
def test_friedman_mse_is_grown_as_squared_error_with_a_future_warning(name):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 4))
    y = X[:, 0] - 2.0 * (X[:, 1] > 0.3) + 0.1 * rng.normal(size=200)
    options = dict(n_estimators=3) if name.endswith("s") or "Forest" in name else {}
    with pytest.warns(FutureWarning, match="friedman_mse") as record:
        model = getattr(jitree, name)(criterion="friedman_mse", random_state=0, **options)
        model.fit(X, y)
    assert len([w for w in record if issubclass(w.category, FutureWarning)]) == 1
    assert record[0].filename == __file__  # the warning points at the user's fit
    assert model.get_params()["criterion"] == "friedman_mse"  # clone-safe
    reference = getattr(jitree, name)(criterion="squared_error", random_state=0, **options)
    reference.fit(X, y)
    trees = getattr(model, "estimators_", [model])
    reference_trees = getattr(reference, "estimators_", [reference])
    for tree, other in zip(trees, reference_trees, strict=True):
        for field in ("feature", "threshold", "children_left", "value", "impurity"):
            np.testing.assert_array_equal(getattr(tree.tree_, field),
                                          getattr(other.tree_, field))


def test_friedman_mse_is_a_regression_criterion_only():
    X = np.arange(20.0).reshape(10, 2)
    with pytest.raises(ValueError, match="criterion"):
        jitree.DecisionTreeClassifier(criterion="friedman_mse").fit(X, np.arange(10) % 2)
