"""Interaction constraints (interaction_cst): HistGradientBoosting's parameter and meaning,
for trees and forests: every branch splits on the features of one group only."""

import itertools

import numpy as np
import pytest

import jitree


def _data(seed, n=1200, d=5, task="regression"):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    y = X[:, 0] * X[:, 1] + np.sin(5 * X[:, 2]) * X[:, 3] + X[:, 4] + rng.normal(0, 0.1, n)
    if task == "classification":
        y = (y > np.median(y)).astype(np.int64)
    return X, y


def _paths(tree):
    """The set of features split on along every root-to-leaf path."""
    paths = []
    stack = [(0, frozenset())]
    while stack:
        node, used = stack.pop()
        if tree.children_left[node] < 0:
            paths.append(used)
            continue
        used = used | {int(tree.feature[node])}
        stack.append((tree.children_left[node], used))
        stack.append((tree.children_right[node], used))
    return paths


def _groups(constraints, n_features):
    """HistGradientBoosting's reading: listed groups, plus one group of the unlisted."""
    if constraints == "no_interactions":
        groups = [{f} for f in range(n_features)]
    elif constraints == "pairwise":
        groups = [set(pair) for pair in itertools.combinations(range(n_features), 2)]
    else:
        groups = [set(group) for group in constraints]
    rest = set(range(n_features)).difference(*groups)
    return groups + ([rest] if rest else [])


def _assert_branches_respect(model, constraints, n_features):
    groups = _groups(constraints, n_features)
    trees = [model.tree_] if hasattr(model, "tree_") else [t.tree_ for t in model.estimators_]
    for tree in trees:
        for used in _paths(tree):
            assert any(used <= group for group in groups), (sorted(used), groups)


CASES = [[{0, 1}, {1, 2}], [[0, 1], [2, 3]], [(3,)], "no_interactions", "pairwise",
         [[0, 1, 2, 3, 4]]]


@pytest.mark.parametrize("constraints", CASES, ids=str)
@pytest.mark.parametrize("model", [
    jitree.DecisionTreeRegressor(),
    jitree.DecisionTreeRegressor(max_leaf_nodes=30),
    jitree.DecisionTreeRegressor(splitter="random", random_state=0),
    jitree.DecisionTreeClassifier(max_features=2, random_state=0),
    jitree.RandomForestRegressor(n_estimators=5, random_state=0),
    jitree.ExtraTreesClassifier(n_estimators=5, random_state=0),
], ids=lambda model: type(model).__name__ + str(model.get_params().get("max_leaf_nodes")))
def test_every_branch_uses_one_group(constraints, model):
    task = "classification" if "Classifier" in type(model).__name__ else "regression"
    X, y = _data(0, task=task)
    model.set_params(interaction_cst=constraints).fit(X, y)
    _assert_branches_respect(model, constraints, X.shape[1])
    # the unconstrained model does mix the groups (the check above can fail)
    if constraints in ("no_interactions", "pairwise"):
        free = jitree.clone(model).set_params(interaction_cst=None).fit(X, y)
        with pytest.raises(AssertionError):
            _assert_branches_respect(free, constraints, X.shape[1])


def test_no_interactions_tree_is_a_function_of_its_root_feature():
    X, y = _data(1)
    tree = jitree.DecisionTreeRegressor(interaction_cst="no_interactions").fit(X, y).tree_
    used = set(tree.feature[tree.children_left >= 0].tolist())
    assert used == {tree.feature[0]}


def test_one_group_of_all_features_and_none_grow_the_same_tree():
    X, y = _data(2, task="classification")
    free = jitree.DecisionTreeClassifier(max_features=3, random_state=1).fit(X, y).tree_
    for constraints in ([[0, 1, 2, 3, 4]], [[0, 1, 2, 3, 4], [0, 1]]):
        grouped = jitree.DecisionTreeClassifier(max_features=3, random_state=1,
                                                interaction_cst=constraints).fit(X, y).tree_
        np.testing.assert_array_equal(grouped.feature, free.feature)
        np.testing.assert_array_equal(grouped.threshold, free.threshold)


def test_constraints_with_categories_missing_values_and_persistence(tmp_path):
    X, y = _data(3)
    X[np.random.default_rng(0).random(X.shape) < 0.1] = np.nan
    X[:, 4] = np.floor(np.nan_to_num(X[:, 4]) * 6)
    constraints = [[0, 4], [1, 2, 3]]
    model = jitree.DecisionTreeRegressor(interaction_cst=constraints, categorical_features=[4],
                                         categorical_split="multiway",
                                         min_samples_leaf=5).fit(X, y)
    _assert_branches_respect(model, constraints, 5)
    path = tmp_path / "interaction.jitree"
    jitree.save(model, path)
    loaded = jitree.load(path)
    assert loaded.interaction_cst == constraints
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


@pytest.mark.parametrize("constraints, error, message", [
    ("all", ValueError, "pairwise"),
    ([[0, 7]], ValueError, "feature indices"),
    ([[0, -1]], ValueError, "feature indices"),
    ([[0, 1.5]], ValueError, "feature indices"),
    ([[True, 1]], ValueError, "feature indices"),
    ([0, 1], ValueError, "sequence of groups"),
    (5, ValueError, "sequence of groups"),
])
def test_bad_constraints(constraints, error, message):
    X, y = _data(4, n=100)
    with pytest.raises(error, match=message):
        jitree.DecisionTreeRegressor(interaction_cst=constraints).fit(X, y)
    with pytest.raises(error, match=message):
        jitree.RandomForestRegressor(interaction_cst=constraints, n_estimators=2).fit(X, y)
