"""Reading a fitted tree: IF-THEN rules, Graphviz DOT and the matplotlib drawing.

The rules are checked against the model itself: every row matches exactly one rule, the rule of
the leaf ``apply`` gives, and that rule predicts what ``predict`` does.
"""

import sys
import warnings

import numpy as np
import pytest

import jitree
from jitree import DecisionTreeClassifier, DecisionTreeRegressor, Tree
from jitree.datasets import load_iris
from jitree.model.export import export_graphviz
from jitree.model.rules import Rule, format_rules, rules, rules_to_text

IRIS_X, IRIS_Y, IRIS_NAMES = load_iris()


def fresh_rows(model, X, n_random, seed):
    """Rows unseen in training: random ones over the training range, and rows whose every
    value is one of the tree's thresholds of that feature (where <= and > part)."""
    rng = np.random.default_rng(seed)
    low, high = X.min(axis=0), X.max(axis=0)
    random_rows = rng.uniform(low - 1.0, high + 1.0, size=(n_random, X.shape[1]))
    tree = model.tree_
    internal = tree.children_left != jitree.TREE_LEAF
    at_thresholds = random_rows.copy()
    for feature in range(X.shape[1]):
        thresholds = tree.threshold[internal & (tree.feature == feature)]
        if thresholds.size:
            at_thresholds[:, feature] = rng.choice(thresholds, size=n_random)
    return np.vstack([random_rows, at_thresholds]).astype(X.dtype)


def assert_rules_reproduce(model, X):
    found = rules(model)
    masks = np.array([rule.matches(X) for rule in found])
    assert np.all(masks.sum(axis=0) == 1), "a row matches no rule or several"
    matched = np.argmax(masks, axis=0)
    leaves = np.array([rule.leaf for rule in found])
    np.testing.assert_array_equal(leaves[matched], model.apply(X))
    predictions = np.array([rule.prediction for rule in found], dtype=object)[matched]
    assert np.all(predictions == model.predict(X).astype(object))


@pytest.mark.parametrize("max_depth", [1, 2, 3, None])
def test_rules_reproduce_classifier_predictions(max_depth):
    model = DecisionTreeClassifier(max_depth=max_depth).fit(IRIS_X, IRIS_Y)
    assert_rules_reproduce(model, IRIS_X)
    assert_rules_reproduce(model, fresh_rows(model, IRIS_X, 300, seed=1))


@pytest.mark.parametrize("max_depth", [1, 3, None])
def test_rules_reproduce_regressor_predictions(max_depth):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 4))
    y = X[:, 0] * 2.0 + np.sin(3.0 * X[:, 1]) + rng.normal(scale=0.3, size=300)
    model = DecisionTreeRegressor(max_depth=max_depth, min_samples_leaf=3).fit(X, y)
    assert_rules_reproduce(model, X)
    assert_rules_reproduce(model, fresh_rows(model, X, 300, seed=3))
    assert all(rule.confidence is None for rule in rules(model))


def test_rules_on_float32_rows_compare_as_predict():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 3)).astype(np.float32)
    y = np.where(X[:, 0] + X[:, 2] ** 2 > 0.7, 1, 0)
    model = DecisionTreeClassifier(max_depth=6).fit(X, y)
    assert_rules_reproduce(model, X)
    assert_rules_reproduce(model, fresh_rows(model, X, 300, seed=5))


def test_rules_with_dataframe_names_and_string_labels():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(IRIS_X, columns=IRIS_NAMES)
    model = DecisionTreeClassifier(max_depth=3).fit(frame, IRIS_Y)
    found = rules(model)
    assert {condition.name for rule in found for condition in rule.conditions} <= \
        set(IRIS_NAMES)
    assert {rule.prediction for rule in found} <= {"setosa", "versicolor", "virginica"}
    assert str(found[0]) == ("IF petal_length <= 2.45 THEN class = setosa "
                             "(support 50 = 33.3%, confidence 1.000)")
    masks = np.array([rule.matches(frame) for rule in found])
    assert np.all(masks.sum(axis=0) == 1)
    predictions = np.array([rule.prediction for rule in found])[np.argmax(masks, axis=0)]
    np.testing.assert_array_equal(predictions, model.predict(frame))


def test_supports_add_up_to_the_training_samples():
    rng = np.random.default_rng(6)
    weight = rng.uniform(0.5, 2.0, size=IRIS_X.shape[0])
    model = DecisionTreeClassifier(max_depth=4).fit(IRIS_X, IRIS_Y, sample_weight=weight)
    found = rules(model)
    tree = model.tree_
    assert sum(rule.support for rule in found) == IRIS_X.shape[0]
    assert sum(rule.support_fraction for rule in found) == pytest.approx(1.0)
    assert sum(rule.weighted_support for rule in found) == pytest.approx(weight.sum())
    for rule in found:
        assert rule.support == tree.n_node_samples[rule.leaf]
        assert rule.weighted_support == tree.weighted_n_node_samples[rule.leaf]
        assert rule.confidence == pytest.approx(tree.value[rule.leaf].max()
                                                / tree.value[rule.leaf].sum())
    leaves = [rule.leaf for rule in found]
    assert sorted(leaves) == np.flatnonzero(tree.is_leaf).tolist()


def test_leaf_order_is_depth_first_left_first():
    model = DecisionTreeClassifier(max_depth=4).fit(IRIS_X, IRIS_Y)
    tree = model.tree_
    expected, stack = [], [0]
    while stack:
        node = stack.pop()
        if tree.is_leaf[node]:
            expected.append(node)
        else:
            stack += [int(tree.children_right[node]), int(tree.children_left[node])]
    assert [rule.leaf for rule in rules(model)] == expected


def test_merged_conditions_hold_one_bound_per_feature_and_direction():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(500, 2))  # two features, deep tree: many repeated tests
    y = (np.sin(2.0 * X[:, 0]) + X[:, 1] > 0).astype(int)
    model = DecisionTreeClassifier(min_samples_leaf=2).fit(X, y)
    assert model.get_depth() > 4
    for rule in rules(model):
        keys = [(c.feature, c.operator) for c in rule.conditions]
        assert len(keys) == len(set(keys))
        for feature in {c.feature for c in rule.conditions}:
            lower = [c.threshold for c in rule.conditions if c.feature == feature
                     and c.operator == ">"]
            upper = [c.threshold for c in rule.conditions if c.feature == feature
                     and c.operator == "<="]
            if lower and upper:
                assert lower[0] < upper[0]


def hand_built_model(feature_names=("size", "ratio")):
    """size <= 5 ? (size <= 3 ? no : yes) : (ratio <= 0.5 ? (size <= 8 ? no : yes) : yes)."""
    counts = np.array([[18, 22], [12, 6], [6, 16], [10, 0], [2, 6], [5, 5], [1, 11],
                       [5, 1], [0, 4]], dtype=float)
    fractions = counts / counts.sum(axis=1, keepdims=True)
    leaf = jitree.TREE_LEAF
    tree = Tree(
        n_features=2, n_classes=2,
        feature=[0, 0, 1, -2, -2, 0, -2, -2, -2],
        threshold=[5.0, 3.0, 0.5, -2.0, -2.0, 8.0, -2.0, -2.0, -2.0],
        children_left=[1, 3, 5, leaf, leaf, 7, leaf, leaf, leaf],
        children_right=[2, 4, 6, leaf, leaf, 8, leaf, leaf, leaf],
        value=counts,
        impurity=1.0 - (fractions ** 2).sum(axis=1),
        n_node_samples=counts.sum(axis=1).astype(np.int64),
        weighted_n_node_samples=counts.sum(axis=1),
    )
    return DecisionTreeClassifier._from_tree(tree, classes=np.array(["no", "yes"]),
                                             feature_names=feature_names)


def test_hand_built_tree_rules_exact_text():
    model = hand_built_model()
    assert rules_to_text(model) == (
        "IF size <= 3 THEN class = no (support 10 = 25.0%, confidence 1.000)\n"
        "IF size > 3 AND size <= 5 THEN class = yes (support 8 = 20.0%, confidence 0.750)\n"
        "IF size > 5 AND size <= 8 AND ratio <= 0.5 THEN class = no "
        "(support 6 = 15.0%, confidence 0.833)\n"
        "IF size > 8 AND ratio <= 0.5 THEN class = yes (support 4 = 10.0%, confidence 1.000)\n"
        "IF size > 5 AND ratio > 0.5 THEN class = yes (support 12 = 30.0%, confidence 0.917)\n")
    first = rules(model)[0]
    assert isinstance(first, Rule)
    assert first.leaf == 3 and first.prediction == "no" and first.support_fraction == 0.25
    assert len(first.conditions) == 1  # size <= 5 and size <= 3 merged
    assert (first.conditions[0].feature, first.conditions[0].operator,
            first.conditions[0].threshold) == (0, "<=", 3.0)
    with pytest.raises(AttributeError):
        first.support = 11  # rules are frozen
    rows = np.array([[2.0, 0.0], [3.0, 9.0], [4.0, 0.0], [5.0, 0.5], [6.0, 0.0], [9.0, 0.5],
                     [6.0, 1.0]])
    assert_rules_reproduce(hand_built_model(feature_names=None), rows)  # arrays: no names
    # the names given to rules() win over the fitted ones
    renamed = format_rules(rules(model, feature_names=["a", "b"], class_names=["N", "Y"]),
                           decimals=2)
    assert renamed.splitlines()[2] == ("IF a > 5 AND a <= 8 AND b <= 0.5 THEN class = N "
                                       "(support 6 = 15.0%, confidence 0.833)")


def test_regression_rule_text_and_single_leaf_tree():
    X = np.array([[1.0], [2.0], [3.0], [4.0]])
    model = DecisionTreeRegressor().fit(X, [1.0, 1.0, 3.0, 3.0])
    assert rules_to_text(model) == (
        "IF feature_0 <= 2.5 THEN value = 1 (support 2 = 50.0%, squared_error 0)\n"
        "IF feature_0 > 2.5 THEN value = 3 (support 2 = 50.0%, squared_error 0)\n")
    stump = DecisionTreeClassifier().fit(X, ["a"] * 4)
    (only,) = rules(stump)
    assert only.conditions == ()
    assert str(only) == "IF TRUE THEN class = a (support 4 = 100.0%, confidence 1.000)"
    assert only.matches(X).all()


# -- Graphviz ------------------------------------------------------------------------------------

def parse_dot(dot):
    pydot = pytest.importorskip("pydot")
    with warnings.catch_warnings():
        # pydot's parser calls pyparsing names that recent pyparsing deprecates: not ours
        warnings.filterwarnings("ignore", category=DeprecationWarning, module="pydot")
        (graph,) = pydot.graph_from_dot_data(dot)
    nodes = [n for n in graph.get_nodes() if n.get_name() not in ("node", "edge", "graph")]
    return graph, nodes, graph.get_edges()


@pytest.mark.parametrize("filled", [False, True])
def test_graphviz_has_one_box_per_node_and_one_edge_per_child(filled):
    model = DecisionTreeClassifier().fit(IRIS_X, IRIS_Y)
    dot = export_graphviz(model, feature_names=IRIS_NAMES, filled=filled)
    _, nodes, edges = parse_dot(dot)
    tree = model.tree_
    assert len(nodes) == tree.node_count
    assert len(edges) == tree.node_count - 1
    assert ("fillcolor" in dot) == filled
    root = next(n for n in nodes if n.get_name() == "0")
    assert root.get_label() == ('"petal_length <= 2.45\\ngini = 0.667\\nsamples = 150\\n'
                                'value = [50, 50, 50]\\nclass = setosa"')
    labels = sorted(e.get_label() for e in edges if e.get_label() is not None)
    assert labels == ['"False"', '"True"']
    assert all(e.get_source() == "0" for e in edges if e.get_label() is not None)


def test_graphviz_max_depth_hides_subtrees_behind_placeholders():
    model = DecisionTreeClassifier().fit(IRIS_X, IRIS_Y)
    _, nodes, edges = parse_dot(export_graphviz(model, max_depth=1))
    depth = model.tree_.depth
    shown = int(np.count_nonzero(depth <= 1))
    cut = int(np.count_nonzero(depth == 2))
    assert len(nodes) == shown + cut
    assert len(edges) == shown + cut - 1
    assert sum(n.get_label() == '"(...)"' for n in nodes) == cut


def test_graphviz_escapes_quotes_backslashes_and_keeps_unicode():
    model = hand_built_model()
    dot = export_graphviz(model, feature_names=['say "hi"', "größe (cm)"],
                          class_names=["a\\", 'b"c'], filled=True, rounded=False)
    _, nodes, _ = parse_dot(dot)
    assert len(nodes) == model.tree_.node_count
    assert '0 [label="say \\"hi\\" <= 5\\ngini = 0.495\\nsamples = 40\\nvalue = [18, 22]' \
        '\\nclass = b\\"c", fillcolor=' in dot
    assert "größe (cm) <= 0.5" in dot
    assert 'class = a\\\\ "' in dot  # backslash doubled, then kept off the closing quote
    assert 'style="filled"' in dot


def test_graphviz_regressor_shows_values():
    X = np.array([[1.0], [2.0], [3.0], [4.0]])
    model = DecisionTreeRegressor().fit(X, [1.0, 1.0, 3.0, 3.5])
    dot = export_graphviz(model, precision=2)
    _, nodes, _ = parse_dot(dot)
    assert len(nodes) == model.tree_.node_count
    assert "value = 2.12" in dot and "squared_error = " in dot and "class" not in dot


# -- matplotlib ----------------------------------------------------------------------------------

def boxes_overlap(texts):
    """True when two boxes of the drawing intersect (in pixels)."""
    figure = texts[0].figure
    figure.canvas.draw()
    extents = [t.get_bbox_patch().get_window_extent() for t in texts]
    return any(a.overlaps(b) for i, a in enumerate(extents) for b in extents[i + 1:])


def test_plot_tree_draws_one_box_per_node(pyplot):
    from jitree.model.plot import plot_tree

    model = DecisionTreeClassifier().fit(IRIS_X, IRIS_Y)
    figure, ax = pyplot.subplots(figsize=(12, 7))
    texts = plot_tree(model, ax=ax, feature_names=IRIS_NAMES)
    assert len(texts) == model.tree_.node_count
    assert all(t.get_bbox_patch() is not None for t in texts)
    assert texts[0].get_text().startswith("petal_length <= 2.45\ngini = 0.667")
    assert not boxes_overlap(texts)
    axes_box = ax.get_window_extent()
    assert all(axes_box.x0 <= t.get_bbox_patch().get_window_extent().x0 and
               t.get_bbox_patch().get_window_extent().x1 <= axes_box.x1 for t in texts)


def test_plot_tree_options(pyplot):
    from jitree.model.plot import plot_tree

    model = DecisionTreeClassifier().fit(IRIS_X, IRIS_Y)
    pyplot.figure(figsize=(10, 6))
    texts = plot_tree(model, max_depth=1, fontsize=7, filled=False)  # on the current Axes
    depth = model.tree_.depth
    assert len(texts) == np.count_nonzero(depth <= 1) + np.count_nonzero(depth == 2)
    assert sum(t.get_text() == "(...)" for t in texts) == np.count_nonzero(depth == 2)
    assert all(t.get_fontsize() == 7 for t in texts)
    assert texts[0].axes is pyplot.gca()

    rng = np.random.default_rng(8)
    X = rng.normal(size=(200, 3))
    regressor = DecisionTreeRegressor(max_depth=3).fit(X, X[:, 0])
    _, ax = pyplot.subplots(figsize=(10, 6))
    name = r"price $\q$ in $"  # not TeX: drawn as written
    texts = plot_tree(regressor, ax=ax, feature_names=[name, "größe", "c"])
    assert len(texts) == regressor.tree_.node_count
    assert texts[0].get_text().startswith(name + " <= ")
    assert "value = " in texts[-1].get_text()
    assert not boxes_overlap(texts)


def test_plot_tree_without_matplotlib_says_how_to_install(monkeypatch):
    from jitree.model.plot import plot_tree

    model = DecisionTreeClassifier(max_depth=1).fit(IRIS_X, IRIS_Y)
    for name in ("matplotlib", "matplotlib.pyplot"):
        monkeypatch.setitem(sys.modules, name, None)  # None in sys.modules: import fails
    with pytest.raises(ImportError, match=r"pip install 'jitree\[plot\]'"):
        plot_tree(model)


# -- bad input -----------------------------------------------------------------------------------

def exporters():
    from jitree.model.plot import plot_tree

    return [rules, export_graphviz, plot_tree]


@pytest.mark.parametrize("index", range(3))
def test_unfitted_model_is_refused(index):
    export = exporters()[index]
    with pytest.raises(jitree.NotFittedError):
        export(DecisionTreeClassifier())


@pytest.mark.parametrize("index", range(3))
def test_a_forest_is_refused_by_name(index):
    """A forest, fitted or not, has no single tree to draw: a TypeError that says which to
    pass."""
    export = exporters()[index]
    forest = jitree.RandomForestClassifier(n_estimators=2, random_state=0).fit(IRIS_X, IRIS_Y)
    with pytest.raises(TypeError, match=r"one tree; this RandomForestClassifier .*"
                                        r"estimators_\[0\]"):
        export(forest)
    export(forest.estimators_[0])
    with pytest.raises(TypeError, match="one tree"):
        jitree.export_text(jitree.RandomForestClassifier())


@pytest.mark.parametrize("index", range(3))
def test_wrong_names_are_refused(index):
    export = exporters()[index]
    model = DecisionTreeClassifier(max_depth=2).fit(IRIS_X, IRIS_Y)
    with pytest.raises(ValueError, match="feature_names must contain 4 elements, got 3"):
        export(model, feature_names=IRIS_NAMES[:3])
    with pytest.raises(ValueError, match="class_names has 2 names, the tree has 3 classes"):
        export(model, class_names=["a", "b"])
    with pytest.raises(TypeError, match="feature_names must be a sequence"):
        export(model, feature_names="abcd")
    regressor = DecisionTreeRegressor(max_depth=2).fit(IRIS_X, IRIS_X[:, 0])
    with pytest.raises(ValueError, match="class_names was given, but the model is a "
                                         "regression tree"):
        export(regressor, class_names=["a", "b"])


def test_bad_options_and_rows_are_refused():
    model = DecisionTreeClassifier(max_depth=2).fit(IRIS_X, IRIS_Y)
    with pytest.raises(ValueError, match="max_depth must be None or a non-negative int"):
        export_graphviz(model, max_depth=-1)
    with pytest.raises(ValueError, match="precision must be a non-negative int"):
        export_graphviz(model, precision=1.5)
    rule = rules(model)[-1]
    with pytest.raises(ValueError, match="2-D"):
        rule.matches(IRIS_X[0])
    with pytest.raises(ValueError, match="X has 1 columns"):
        rule.matches(IRIS_X[:, :1])


# -- deep trees: work and output linear in the tree's size --------------------------------------

def chain_model(depth):
    """A chain of ``depth`` tests on one feature over the samples 0 .. depth (class: value
    % 2): each test splits one sample off the values reaching it, the lowest (going left) at
    even depths, the highest (going right) at odd ones; the rest continue down the other side.
    ``depth + 1`` leaves, one sample each."""
    n_nodes = 2 * depth + 1
    leaf = jitree.TREE_LEAF
    feature = np.full(n_nodes, -2, dtype=np.int32)
    threshold = np.full(n_nodes, -2.0)
    left = np.full(n_nodes, leaf, dtype=np.int32)
    right = np.full(n_nodes, leaf, dtype=np.int32)
    counts = np.zeros((n_nodes, 2))
    low, high, node, next_id = 0, depth, 0, 1
    for level in range(depth):
        feature[node] = 0
        values = np.arange(low, high + 1)
        counts[node] = [np.sum(values % 2 == 0), np.sum(values % 2 == 1)]
        left[node], right[node] = next_id, next_id + 1
        next_id += 2
        if level % 2 == 0:
            threshold[node] = low + 0.5
            single, value, node = left[node], low, right[node]
            low += 1
        else:
            threshold[node] = high - 0.5
            single, value, node = right[node], high, left[node]
            high -= 1
        counts[single, value % 2] = 1
    counts[node, low % 2] = 1
    fractions = counts / counts.sum(axis=1, keepdims=True)
    tree = Tree(n_features=1, n_classes=2, feature=feature, threshold=threshold,
                children_left=left, children_right=right, value=counts,
                impurity=1.0 - (fractions ** 2).sum(axis=1),
                n_node_samples=counts.sum(axis=1).astype(np.int64),
                weighted_n_node_samples=counts.sum(axis=1))
    return DecisionTreeClassifier._from_tree(tree, classes=np.array([0, 1]))


def test_rules_of_a_20k_deep_chain():
    depth = 20_000
    model = chain_model(depth)
    assert model.get_depth() == depth
    found = rules(model)
    assert len(found) == depth + 1
    # one lower and one upper bound at most: the tests on the feature merged
    assert max(len(rule.conditions) for rule in found) == 2
    depths = model.tree_.depth
    assert [rule.to_text() for rule in found if depths[rule.leaf] == depth] == [
        "IF feature_0 > 9999.5 AND feature_0 <= 10000.5 THEN class = 0 (support 1 = 0.0%, "
        "confidence 1.000)",
        "IF feature_0 > 10000.5 AND feature_0 <= 10001.5 THEN class = 1 (support 1 = 0.0%, "
        "confidence 1.000)"]
    assert found[-1].to_text() == ("IF feature_0 > 19999.5 THEN class = 0 (support 1 = 0.0%, "
                                   "confidence 1.000)")
    text = format_rules(found)
    assert len(text) < 120 * (depth + 1)
    X = np.arange(depth + 1, dtype=np.float64)[:, None]
    leaves = model.apply(X)
    for rule in found[::997]:
        (row,) = np.flatnonzero(rule.matches(X))
        assert leaves[row] == rule.leaf


def test_export_text_max_depth_bounds_a_20k_deep_chain():
    depth = 20_000
    model = chain_model(depth)
    for max_depth in (0, 1, 7):
        lines = jitree.export_text(model, max_depth=max_depth).splitlines()
        # each level down to max_depth: its test, the test's negation and its one-sample
        # leaf; then the rest of the chain as one line
        assert len(lines) == 3 * (max_depth + 1) + 1
        assert [line for line in lines if "truncated" in line] == [
            "|   " * (max_depth + 1) + f"|--- truncated branch of depth {depth - max_depth}"]
        assert max(map(len, lines)) <= 4 * (max_depth + 1) + 36


def test_export_text_max_depth_keeps_the_top_of_the_tree():
    model = DecisionTreeClassifier().fit(IRIS_X, IRIS_Y)
    full = jitree.export_text(model, feature_names=IRIS_NAMES, show_weights=True)
    depth = model.get_depth()
    assert jitree.export_text(model, feature_names=IRIS_NAMES, show_weights=True,
                              max_depth=depth) == full
    tree = model.tree_

    def levels(node):  # naive twin of the truncation count: the subtree's levels
        children = tree.children(node)
        return 1 + max((levels(child) for child in children), default=0)

    for max_depth in range(depth):
        text = jitree.export_text(model, feature_names=IRIS_NAMES, show_weights=True,
                                  max_depth=max_depth)
        kept = [line for line in text.splitlines() if "truncated branch" not in line]
        # the lines kept are those of the full text down to max_depth + 1, in order
        assert kept == [line for line in full.splitlines()
                        if line.index("|---") <= 4 * (max_depth + 1) and line in kept]
        truncated = [node for node in range(tree.node_count)
                     if tree.depth[node] == max_depth + 1 and not tree.is_leaf[node]]
        counts = [int(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                  if "truncated branch" in line]
        assert counts == [levels(node) for node in truncated]
    with pytest.raises(ValueError, match="max_depth must be None or a non-negative int"):
        jitree.export_text(model, max_depth=-1)
    with pytest.raises(ValueError, match="decimals must be a non-negative int"):
        jitree.export_text(model, decimals=-1)


def test_export_text_max_depth_matches_scikit_learn():
    tree_module = pytest.importorskip("sklearn.tree")
    fitted = tree_module.DecisionTreeClassifier(random_state=0).fit(IRIS_X, IRIS_Y)
    model = jitree.from_sklearn(fitted)
    for max_depth in (0, 2, 10):
        assert jitree.export_text(model, decimals=2, max_depth=max_depth) == \
            tree_module.export_text(fitted, max_depth=max_depth)


class _OverBudget(Exception):
    pass


def _line_events(function, budget):
    """Run ``function()`` counting the lines of jitree.model.rules and jitree.model.export it
    executes (a measure of its work that does not depend on the machine); stops with
    _OverBudget past ``budget`` lines."""
    from jitree.model import export
    from jitree.model import rules as rules_module

    files = {export.__file__, rules_module.__file__}
    count = 0

    def count_lines(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
            if count > budget:
                raise _OverBudget(f"more than {budget} lines")
        return count_lines

    def on_call(frame, event, arg):
        return count_lines if frame.f_code.co_filename in files else None

    previous = sys.gettrace()
    sys.settrace(on_call)
    try:
        function()
    finally:
        sys.settrace(previous)
    return count


@pytest.mark.parametrize("export", ["rules", "export_text"])
def test_work_is_linear_in_the_depth_of_a_chain(export):
    run = {"rules": rules,
           "export_text": lambda model: jitree.export_text(model, max_depth=5)}[export]
    small, large = chain_model(500), chain_model(1000)
    work_small = _line_events(lambda: run(small), budget=10**7)
    # twice the nodes: about twice the work (four times for work quadratic in the depth)
    work_large = _line_events(lambda: run(large), budget=3 * work_small)
    assert work_large < 2.2 * work_small
