"""TreeSHAP (jitree.shap_values, jitree.shap_interaction_values): against a brute-force
twin enumerating every coalition, against the ``shap`` package on the same trees, and the
invariants (additivity, symmetry) on every node kind."""

import itertools
import math

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitree
from jitree.kernels import shap as shap_kernels
from jitree.model.tree import SPLIT_MULTIWAY, TREE_LEAF

# -- the naive twin ------------------------------------------------------------------------------


def _children(tree, node):
    if tree.split_kind[node] == SPLIT_MULTIWAY:
        return list(range(tree.children_left[node], tree.children_right[node] + 1))
    return [tree.children_left[node], tree.children_right[node]]


def _hot_child(tree, node, x):
    """The child of ``node`` that x goes to (as jitree.kernels.predict.child_of, in Python)."""
    value = x[tree.feature[node]]
    left, right = tree.children_left[node], tree.children_right[node]
    kind = tree.split_kind[node]
    if kind == 0:  # threshold
        if np.isnan(value):
            return left if tree.missing_left[node] else right
        return left if value <= tree.threshold[node] else right
    n_categories = tree.n_categories[tree.feature[node]]
    known = 0 <= value < n_categories and value == int(value)
    if kind == 1:  # category subset
        if not known:
            return left if tree.missing_left[node] else right
        code = int(value)
        word = int(tree.category_bits[tree.category_offset[node] + code // 64])
        return left if (word >> (code % 64)) & 1 else right
    code = int(value) if known else n_categories
    return left + int(tree.multiway_slot[tree.category_offset[node] + code])


def _conditional(tree, table, x, known, node=0):
    """E[f(x) | x_S], the path-dependent way: follow x at a node testing a known feature,
    else average the children by training weight."""
    if tree.children_left[node] == TREE_LEAF:
        return table[node]
    if tree.feature[node] in known:
        return _conditional(tree, table, x, known, _hot_child(tree, node, x))
    children = _children(tree, node)
    weights = np.array([tree.weighted_n_node_samples[c] for c in children])
    values = [_conditional(tree, table, x, known, c) for c in children]
    return sum(w * v for w, v in zip(weights, values, strict=True)) / weights.sum()


def brute_force_shap(model, X):
    """Shapley values by enumerating every coalition of features (2^F subsets)."""
    trees = model.estimators_ if hasattr(model, "estimators_") else [model]
    n_features = X.shape[1]
    result = []
    for x in X:
        phi = 0.0
        for estimator in trees:
            tree = estimator.tree_
            table = (estimator._node_proba() if hasattr(estimator, "classes_")
                     else tree.value) / len(trees)
            value = {}
            for size in range(n_features + 1):
                for subset in itertools.combinations(range(n_features), size):
                    value[subset] = _conditional(tree, table, x, set(subset))
            tree_phi = np.zeros((n_features,) + np.shape(table[0]))
            for i in range(n_features):
                others = [j for j in range(n_features) if j != i]
                for size in range(n_features):
                    weight = (math.factorial(size) * math.factorial(n_features - size - 1)
                              / math.factorial(n_features))
                    for subset in itertools.combinations(others, size):
                        with_i = tuple(sorted(subset + (i,)))
                        tree_phi[i] += weight * (value[with_i] - value[subset])
            phi = phi + tree_phi
        result.append(phi)
    result = np.array(result)
    return result if hasattr(trees[0], "classes_") else result[..., 0]


def brute_force_interactions(model, X):
    """SHAP interaction values from their definition (Lundberg et al. 2020): for i != j,
    sum over S of |S|! (F - |S| - 2)! / (2 (F - 1)!) times the second difference; the
    diagonal holds phi_i less the row's interactions."""
    trees = model.estimators_ if hasattr(model, "estimators_") else [model]
    n_features = X.shape[1]
    phi = brute_force_shap(model, X)
    result = []
    for row, x in enumerate(X):
        pairs = 0.0
        for estimator in trees:
            tree = estimator.tree_
            table = (estimator._node_proba() if hasattr(estimator, "classes_")
                     else estimator.tree_.value) / len(trees)

            def value(subset, tree=tree, table=table, x=x):
                return _conditional(tree, table, x, set(subset))

            tree_pairs = np.zeros((n_features, n_features) + np.shape(table[0]))
            for i, j in itertools.permutations(range(n_features), 2):
                others = [k for k in range(n_features) if k not in (i, j)]
                for size in range(n_features - 1):
                    weight = (math.factorial(size) * math.factorial(n_features - size - 2)
                              / (2 * math.factorial(n_features - 1)))
                    for subset in itertools.combinations(others, size):
                        tree_pairs[i, j] += weight * (value(subset + (i, j)) - value(subset + (i,))
                                                      - value(subset + (j,)) + value(subset))
            pairs = pairs + tree_pairs
        if not hasattr(trees[0], "classes_"):
            pairs = pairs[..., 0]
        for i in range(n_features):
            pairs[i, i] = phi[row, i] - (pairs[i].sum(axis=0) - pairs[i, i])
        result.append(pairs)
    return np.array(result)


# -- data ---------------------------------------------------------------------------------------


def _mixed_data(seed, n=120, missing=False):
    """Two numeric features and one categorical (5 levels); a target using all three."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(size=n), rng.normal(size=n),
                         rng.integers(0, 5, size=n).astype(float)])
    y = X[:, 0] + (X[:, 2] % 2) * X[:, 1] + 0.3 * rng.normal(size=n)
    if missing:
        X[rng.random(n) < 0.15, 0] = np.nan
    return X, y


@pytest.mark.parametrize("split", ["subset", "one_vs_rest", "multiway"])
@pytest.mark.parametrize("task", ["regression", "classification"])
def test_every_node_kind_matches_brute_force(split, task):
    X, y = _mixed_data(0, missing=True)
    if task == "classification":
        model = jitree.DecisionTreeClassifier(max_depth=4, categorical_features=[2],
                                              categorical_split=split, random_state=0)
        model.fit(X, np.digitize(y, [-0.5, 0.5]))
    else:
        model = jitree.DecisionTreeRegressor(max_depth=4, categorical_features=[2],
                                             categorical_split=split, random_state=0)
        model.fit(X, y)
    rows = np.vstack([X[:8], [[np.nan, 0.1, 7.0]]])  # NaN and an unseen category
    result = jitree.shap_values(model, rows)
    np.testing.assert_allclose(result.values, brute_force_shap(model, rows), atol=1e-12)
    prediction = (model.predict_proba(rows) if task == "classification"
                  else model.predict(rows))
    np.testing.assert_allclose(result.values.sum(axis=1) + result.expected_value, prediction,
                               atol=1e-12)
    pairs = jitree.shap_interaction_values(model, rows[-4:])
    np.testing.assert_allclose(pairs.values, brute_force_interactions(model, rows[-4:]),
                               atol=1e-12)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), depth=st.integers(1, 6), n_trees=st.integers(1, 3),
       missing=st.booleans())
def test_forests_match_brute_force(seed, depth, n_trees, missing):
    X, y = _mixed_data(seed, n=80, missing=missing)
    model = jitree.RandomForestRegressor(n_estimators=n_trees, max_depth=depth,
                                         categorical_features=[2], random_state=seed,
                                         max_features=None)
    model.fit(X, y)
    rows = X[:5]
    result = jitree.shap_values(model, rows)
    np.testing.assert_allclose(result.values, brute_force_shap(model, rows), atol=1e-12)
    np.testing.assert_allclose(result.values.sum(axis=1) + result.expected_value,
                               model.predict(rows), atol=1e-12)
    pairs = jitree.shap_interaction_values(model, rows[:2])
    np.testing.assert_allclose(pairs.values, brute_force_interactions(model, rows[:2]),
                               atol=1e-12)


def test_interactions_are_symmetric_and_sum_to_the_values():
    X, y = _mixed_data(3, n=300)
    model = jitree.ExtraTreesClassifier(n_estimators=5, max_depth=6, random_state=0)
    model.fit(X, np.digitize(y, [0.0]))
    pairs = jitree.shap_interaction_values(model, X[:30])
    values = jitree.shap_values(model, X[:30])
    assert pairs.values.shape == (30, 3, 3, 2)
    np.testing.assert_allclose(pairs.values, pairs.values.transpose(0, 2, 1, 3), atol=1e-15)
    np.testing.assert_allclose(pairs.values.sum(axis=2), values.values, atol=1e-12)
    np.testing.assert_allclose(pairs.expected_value, values.expected_value)


def test_a_tree_that_is_one_leaf():
    X = np.arange(10.0).reshape(5, 2)
    model = jitree.DecisionTreeRegressor().fit(X, np.ones(5))
    result = jitree.shap_values(model, X)
    assert np.array_equal(result.values, np.zeros((5, 2)))
    assert result.expected_value == 1.0


# -- against shap, on the same trees ------------------------------------------------------------


def test_equal_to_shap_tree_explainer():
    shap = pytest.importorskip("shap")
    ensemble = pytest.importorskip("sklearn.ensemble")
    tree = pytest.importorskip("sklearn.tree")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 6))
    y = X[:, 0] + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=400)
    label = np.digitize(y, [-0.5, 0.5])
    for sklearn_model in (
            tree.DecisionTreeRegressor(max_depth=7, random_state=0).fit(X, y),
            ensemble.RandomForestRegressor(n_estimators=10, max_depth=6,
                                           random_state=0).fit(X, y),
            ensemble.ExtraTreesClassifier(n_estimators=10, max_depth=6,
                                          random_state=0).fit(X, label)):
        explainer = shap.TreeExplainer(sklearn_model)
        ours = jitree.shap_values(jitree.from_sklearn(sklearn_model), X[:40])
        # shap's own path sums and unwinding round differently: 1e-9 as the issue sets it
        np.testing.assert_allclose(ours.values, explainer.shap_values(X[:40]), atol=1e-9)
        np.testing.assert_allclose(ours.expected_value, explainer.expected_value, atol=1e-9)
        pairs = jitree.shap_interaction_values(jitree.from_sklearn(sklearn_model), X[:10])
        np.testing.assert_allclose(pairs.values, explainer.shap_interaction_values(X[:10]),
                                   atol=1e-9)


# -- callable from users' @njit code -----------------------------------------------------------


def test_kernel_from_users_njit_code():
    X, y = _mixed_data(5, n=200)
    model = jitree.RandomForestRegressor(n_estimators=4, max_depth=5, random_state=1)
    model.fit(X, y)
    walk, trees = jitree.shap_trees(model)

    @numba.njit
    def explain(X, walk, trees):
        work = shap_kernels.new_work(trees, X.shape[1])
        out = np.zeros((X.shape[0], X.shape[1], 1))
        for i in range(X.shape[0]):
            shap_kernels.shap_row(X, i, walk, trees, work, out[i])
        return out

    np.testing.assert_allclose(explain(X[:20], walk, trees)[..., 0],
                               jitree.shap_values(model, X[:20]).values, atol=1e-15)


def test_one_specialisation_per_x_type(tmp_path):
    # X goes read-only (as to the prediction walks): a user's array, a DataFrame's and a
    # read-only memory map share one compiled explanation per dtype and order
    pd = pytest.importorskip("pandas")
    X, y = _mixed_data(5, n=200)
    model = jitree.RandomForestRegressor(n_estimators=2, max_depth=4, random_state=1)
    model.fit(X, y)
    np.save(tmp_path / "X.npy", X[:20])
    for rows in (X[:20], np.load(tmp_path / "X.npy", mmap_mode="r"),
                 np.asfortranarray(X[:20]), pd.DataFrame(X[:20]).to_numpy()):
        jitree.shap_values(model, rows)
        jitree.shap_interaction_values(model, rows)
    for kernel in (shap_kernels.shap_values, shap_kernels.shap_interaction_values):
        x_types = [(str(signature[0].dtype), signature[0].layout)
                   for signature in kernel.signatures]
        assert len(set(x_types)) == len(x_types), kernel.signatures
        assert all(not signature[0].mutable for signature in kernel.signatures)


# -- bad input -----------------------------------------------------------------------------------


def test_bad_input():
    X, y = _mixed_data(1)
    with pytest.raises(jitree.NotFittedError):
        jitree.shap_values(jitree.DecisionTreeRegressor(), X)
    with pytest.raises(TypeError, match="fitted jitree tree or forest"):
        jitree.shap_values(object(), X)
    model = jitree.DecisionTreeRegressor(max_depth=3).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        jitree.shap_values(model, X[:, :2])
    bad = X[:3].copy()
    bad[0, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        jitree.shap_interaction_values(model, bad)
    with pytest.raises(ValueError, match="0 sample"):  # as predict
        jitree.shap_values(model, X[:0])


def test_loaded_tree_explains_as_the_fitted_one(tmp_path):
    X, y = _mixed_data(7, n=300, missing=True)
    model = jitree.DecisionTreeClassifier(max_depth=6, categorical_features=[2],
                                          random_state=0).fit(X, np.digitize(y, [0.0]))
    jitree.save(model, tmp_path / "tree.jitree")
    loaded = jitree.load(tmp_path / "tree.jitree")
    ours, theirs = jitree.shap_values(model, X[:50]), jitree.shap_values(loaded, X[:50])
    np.testing.assert_array_equal(ours.values, theirs.values)
    np.testing.assert_array_equal(ours.expected_value, theirs.expected_value)
