"""honest=True: the structure comes from the structure part only, the values from the
estimation part (means / class counts, the nearest reached ancestor's where no estimation
sample arrives), for trees and forests, classification and regression."""

import numpy as np
import pytest

import jitree
from jitree.model.forest import _draw_probability, _tree_parts
from jitree.model.honest import split_rows


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = X[:, 0] - X[:, 2] + rng.normal(size=n)
    return X, y


def _structure_arrays(tree):
    return (tree.feature, tree.threshold, tree.children_left, tree.children_right)


def naive_values(tree, X, target, weight, n_classes):
    """Per node, by brute force over the rows reaching it: the weighted mean (regression) or
    class counts of the rows of positive weight, else the nearest such ancestor's."""
    parent = tree.parents()
    indptr, indices = tree.decision_path_arrays(X)
    reach = [[] for _ in range(tree.node_count)]
    for i in range(X.shape[0]):
        if weight[i] > 0:
            for node in indices[indptr[i]:indptr[i + 1]]:
                reach[node].append(i)
    values = np.zeros(tree.value.shape)
    for node in range(tree.node_count):  # parents come before their children
        rows = np.array(reach[node], dtype=np.int64)
        if rows.size == 0:
            values[node] = values[parent[node]]
        elif n_classes == 0:
            values[node, 0] = np.average(target[rows], weights=weight[rows])
        else:
            values[node] = np.bincount(target[rows].astype(int), weights=weight[rows],
                                       minlength=n_classes)
    return values


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_tree_values_come_from_the_estimation_part(task):
    X, y = _data()
    weight = np.random.default_rng(1).uniform(0.5, 2.0, X.shape[0])
    if task == "regression":
        model = jitree.DecisionTreeRegressor(honest=True, random_state=7, min_samples_leaf=3)
        target = y
    else:
        model = jitree.DecisionTreeClassifier(honest=True, random_state=7, max_depth=6)
        y = (y > 0).astype(int) + (y > 1)
        target = y.astype(float)
    model.fit(X, y, sample_weight=weight)
    # the structure part: the tree's seed is random_state itself for an int
    structure = split_rows(7, weight, 0.5)
    assert structure.sum() == X.shape[0] // 2
    estimation = np.where(structure, 0.0, weight)
    n_classes = 0 if task == "regression" else 3
    np.testing.assert_allclose(model.tree_.value,
                               naive_values(model.tree_, X, target, estimation, n_classes),
                               rtol=1e-12, atol=1e-12)
    # the same structure as a fit on the structure part alone
    params = {k: v for k, v in model.get_params().items() if k != "honest"}
    alone = type(model)(**params).fit(X, y, sample_weight=np.where(structure, weight, 0.0))
    for ours, theirs in zip(_structure_arrays(model.tree_), _structure_arrays(alone.tree_),
                            strict=True):
        np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(model.tree_.n_node_samples, alone.tree_.n_node_samples)
    np.testing.assert_array_equal(model.tree_.impurity, alone.tree_.impurity)


def test_estimation_targets_do_not_move_the_splits():
    X, y = _data()
    model = jitree.DecisionTreeRegressor(honest=True, random_state=3, max_depth=5).fit(X, y)
    estimation = ~split_rows(3, np.ones(X.shape[0]), 0.5)
    changed = y.copy()
    changed[estimation] = np.random.default_rng(9).normal(size=estimation.sum()) * 100
    other = jitree.DecisionTreeRegressor(honest=True, random_state=3, max_depth=5).fit(
        X, changed)
    for ours, theirs in zip(_structure_arrays(model.tree_), _structure_arrays(other.tree_),
                            strict=True):
        np.testing.assert_array_equal(ours, theirs)
    assert not np.allclose(model.tree_.value, other.tree_.value)
    # while the structure part's targets do
    changed = y.copy()
    changed[~estimation] = 5 * X[~estimation, 3]
    moved = jitree.DecisionTreeRegressor(honest=True, random_state=3, max_depth=5).fit(
        X, changed)
    assert not np.array_equal(moved.tree_.threshold, model.tree_.threshold)


def test_empty_leaves_take_the_nearest_reached_ancestor():
    X, y = _data(120)
    # full depth on half of the rows: many leaves see no estimation row
    model = jitree.DecisionTreeRegressor(honest=True, random_state=0).fit(X, y)
    estimation = ~split_rows(0, np.ones(X.shape[0]), 0.5)
    leaves = model.apply(X[estimation])
    reached = np.zeros(model.tree_.node_count, dtype=bool)
    reached[leaves] = True
    empty = np.flatnonzero(model.tree_.is_leaf & ~reached)
    assert empty.size > 0
    parent = model.tree_.parents()
    for leaf in empty:
        node = parent[leaf]
        while not np.isin(leaves, _subtree(model.tree_, node)).any():
            node = parent[node]
        rows = np.isin(leaves, _subtree(model.tree_, node))
        assert model.tree_.value[leaf, 0] == pytest.approx(y[estimation][rows].mean())


def _subtree(tree, node):
    nodes, stack = [], [node]
    while stack:
        current = stack.pop()
        nodes.append(current)
        stack.extend(tree.children(current))
    return nodes


@pytest.mark.parametrize("cls", [jitree.RandomForestRegressor, jitree.ExtraTreesRegressor,
                                 jitree.RandomForestClassifier])
def test_forests(cls):
    X, y = _data()
    if cls is jitree.RandomForestClassifier:
        y = (y > 0).astype(int)
    params = dict(n_estimators=6, honest=True, random_state=11, min_samples_leaf=2)
    model = cls(**params).fit(X, y)
    again = cls(**params).fit(X, y)
    for ours, theirs in zip(model.estimators_, again.estimators_, strict=True):
        np.testing.assert_array_equal(ours.tree_.value, theirs.tree_.value)
        np.testing.assert_array_equal(ours.tree_.threshold, theirs.tree_.threshold)
    plain = cls(**{**params, "honest": False}).fit(X, y)
    assert not np.allclose(model.predict(X), plain.predict(X))
    # each tree's values are its estimation part's (a bag's distinct rows split in two)
    plan, X_checked, target, weight = model._prepare_fit(X, y, None)
    probability = _draw_probability(weight) if plan.weighted_draw else None
    n_classes = 0 if cls is not jitree.RandomForestClassifier else 2
    for seed, estimator in zip(plan.seeds, model.estimators_, strict=True):
        grow, estimation = _tree_parts(plan, seed, weight, target, probability)
        assert not ((grow > 0) & (estimation > 0)).any()
        expected = naive_values(estimator.tree_, X, target, estimation, n_classes)
        np.testing.assert_allclose(estimator.tree_.value, expected, rtol=1e-12, atol=1e-12)
    if n_classes:
        np.testing.assert_allclose(model.predict_proba(X).sum(axis=1), 1.0)


def test_honest_quantile_forest_keeps_the_estimation_rows():
    X, y = _data()
    model = jitree.RandomForestRegressor(n_estimators=3, honest=True, random_state=5,
                                         min_samples_leaf=5, store_leaf_samples=True)
    model.fit(X, y)
    plan, _, target, weight = model._prepare_fit(X, y, None)
    samples = model.leaf_samples_
    roots = np.append(model._leaf_roots, samples.start.shape[0])
    for t, seed in enumerate(plan.seeds):
        _, estimation = _tree_parts(plan, seed, weight, target, None)
        nodes = slice(roots[t], roots[t + 1])
        entries = np.arange(samples.start[nodes].min(), samples.stop[nodes].max())
        np.testing.assert_array_equal(np.sort(samples.sample[entries]),
                                      np.flatnonzero(estimation > 0))
        np.testing.assert_array_equal(samples.weight[entries],
                                      estimation[samples.sample[entries]])
    out = model.predict_quantiles(X, [0.1, 0.5, 0.9])
    assert np.isfinite(out).all() and (np.diff(out, axis=1) >= 0).all()


def test_fraction_and_bad_parameters():
    X, y = _data(40)
    model = jitree.DecisionTreeRegressor(honest=True, honest_fraction=0.25,
                                         random_state=0).fit(X, y)
    assert model.tree_.n_node_samples[0] == 10
    for fraction in (0.0, 1.0, 1.5, float("nan")):
        with pytest.raises(ValueError, match="honest_fraction"):
            jitree.DecisionTreeRegressor(honest=True, honest_fraction=fraction).fit(X, y)
    with pytest.raises(TypeError, match="honest"):
        jitree.RandomForestRegressor(honest="yes").fit(X, y)
    with pytest.raises(ValueError, match="at least 2 samples"):
        jitree.DecisionTreeClassifier(honest=True).fit(X[:1], y[:1] > 0)


@pytest.mark.parametrize("criterion,alpha", [("absolute_error", 0.5), ("quantile", 0.8)])
def test_order_criteria_reestimate_quantiles(criterion, alpha):
    """Under absolute_error and quantile, the honest values are the estimation part's
    weighted medians / quantiles (the criterion's own node value), by brute force."""
    from naive import weighted_quantile

    X, y = _data()
    weight = np.random.default_rng(2).uniform(0.5, 2.0, X.shape[0])
    model = jitree.DecisionTreeRegressor(criterion=criterion, quantile=alpha, honest=True,
                                         random_state=7, max_depth=5).fit(X, y, weight)
    estimation = np.where(split_rows(7, weight, 0.5), 0.0, weight)
    tree = model.tree_
    parent = tree.parents()
    indptr, indices = tree.decision_path_arrays(X)
    for node in range(tree.node_count):  # parents before children
        rows = [i for i in range(X.shape[0]) if estimation[i] > 0
                and node in indices[indptr[i]:indptr[i + 1]]]
        expected = tree.value[parent[node], 0] if not rows else \
            weighted_quantile(y[rows], estimation[rows], alpha)
        assert tree.value[node, 0] == expected
