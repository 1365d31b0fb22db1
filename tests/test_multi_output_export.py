"""export_text, export_graphviz, plot_tree and the rules of multi-output trees.

Checked against the model itself (each leaf's printed values and classes are what ``predict``
gives the rows reaching it; each rule predicts what ``predict`` does on the rows it matches),
and against scikit-learn's exporters on the same tree (``jitree.from_sklearn``) where
scikit-learn prints something meaningful: a regressor's text and boxes, a classifier's boxes
but for the class line, which scikit-learn leaves out.
"""

import re

import numpy as np
import pytest
from test_export_options import assert_same_lines, dot_parts
from test_multi_output import _classification, _regression

import jitree
from jitree.model.export import _fill_colors

LEAF_VALUES = re.compile(r"\|--- value: \[(.*)\]$")
LEAF_CLASSES = re.compile(r"\|--- (?:weights: \[(.*)\] )?class: \[(.*)\]$")
INNER_LIST = re.compile(r"\[([^\[\]]*)\]")


@pytest.fixture(scope="module")
def sk_tree():
    return pytest.importorskip("sklearn.tree")


@pytest.fixture(scope="module")
def regressor():
    X, Y = _regression()
    return X, jitree.DecisionTreeRegressor(max_depth=4, min_samples_leaf=5).fit(X, Y)


@pytest.fixture(scope="module")
def classifier():
    """Outputs of 2, 4 and 2 classes, labels of several kinds (str, int)."""
    X, Y = _classification()
    labels = Y.astype(object)
    labels[:, 0] = np.where(Y[:, 0] == 1, "yes", "no")
    return X, jitree.DecisionTreeClassifier(max_depth=4, min_samples_leaf=5).fit(X, labels)


@pytest.fixture(scope="module")
def regressor_pair(sk_tree):
    X, Y = _regression()
    fitted = sk_tree.DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, Y)
    return X, fitted, jitree.from_sklearn(fitted)


@pytest.fixture(scope="module")
def classifier_pair(sk_tree):
    """Outputs of two classes each: scikit-learn's value has no padding columns then."""
    X, Y = _classification()
    Y = np.column_stack([Y[:, 0], Y[:, 2]])
    fitted = sk_tree.DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, Y)
    return X, fitted, jitree.from_sklearn(fitted)


def leaves_in_order(tree):
    """The leaves depth-first, children in order: the order the exports print them in."""
    order, stack = [], [0]
    while stack:
        node = stack.pop()
        if tree.children_left[node] == jitree.TREE_LEAF:
            order.append(node)
        else:
            stack += [tree.children_right[node], tree.children_left[node]]
    return order


def rows_by_leaf(model, X):
    leaf_of_row = model.apply(X)
    return [np.flatnonzero(leaf_of_row == leaf) for leaf in leaves_in_order(model.tree_)]


# -- export_text ---------------------------------------------------------------------------------

@pytest.mark.parametrize("options", [{}, {"decimals": 4, "spacing": 2},
                                     {"max_depth": 2, "feature_names": list("abcde")}])
def test_export_text_of_a_regressor_is_scikit_learns(regressor_pair, sk_tree, options):
    _, fitted, model = regressor_pair
    text = jitree.export_text(model, **options)
    assert text == sk_tree.export_text(fitted, **options)
    assert "value: [" in text


def test_export_text_values_are_the_predictions(regressor):
    X, model = regressor
    lines = [LEAF_VALUES.search(line) for line in
             jitree.export_text(model, max_depth=None, decimals=6).splitlines()]
    values = [[float(v) for v in match.group(1).split(", ")] for match in lines if match]
    rows = rows_by_leaf(model, X)
    assert len(values) == len(rows) == model.get_n_leaves()
    for printed, reaching in zip(values, rows, strict=True):
        assert reaching.size  # min_samples_leaf: every leaf holds training rows
        # 6 decimals printed: within half a unit of the last one
        np.testing.assert_allclose(model.predict(X[reaching]),
                                   np.broadcast_to(printed, (reaching.size, 3)), atol=5.1e-7)


@pytest.mark.parametrize("show_weights", [False, True])
def test_export_text_classes_are_the_predictions(classifier, show_weights):
    X, model = classifier
    text = jitree.export_text(model, max_depth=None, show_weights=show_weights)
    leaves = [match for match in map(LEAF_CLASSES.search, text.splitlines()) if match]
    rows = rows_by_leaf(model, X)
    assert len(leaves) == len(rows) == model.get_n_leaves()
    for match, reaching, leaf in zip(leaves, rows, leaves_in_order(model.tree_), strict=True):
        for predicted in model.predict(X[reaching]):
            assert match.group(2).split(", ") == [str(label) for label in predicted]
        if not show_weights:
            assert match.group(1) is None
            continue
        # each output's weighted class counts, its own classes only (no padding columns)
        weights = [[float(w) for w in inner.split(", ")]
                   for inner in INNER_LIST.findall(match.group(1))]
        assert [len(w) for w in weights] == model.n_classes_
        width = model.tree_.n_classes
        for j, counts in enumerate(weights):
            np.testing.assert_allclose(
                counts, model.tree_.value[leaf, j * width:j * width + len(counts)], atol=5e-3)
            assert sum(counts) == pytest.approx(model.tree_.weighted_n_node_samples[leaf])


def test_class_names_per_output(classifier):
    X, model = classifier
    names = [["N", "Y"], ["c0", "c1", "c2", "c3"], ["five", "nine"]]
    text = jitree.export_text(model, max_depth=None, class_names=names)
    leaves = [match.group(2) for match in map(LEAF_CLASSES.search, text.splitlines()) if match]
    rows = rows_by_leaf(model, X)
    for printed, reaching in zip(leaves, rows, strict=True):
        predicted = model.predict(X[reaching[:1]])[0]
        expected = [names[j][list(model.classes_[j]).index(label)]
                    for j, label in enumerate(predicted)]
        assert printed.split(", ") == expected
    dot = jitree.export_graphviz(model, class_names=names)
    assert "class = [" in dot and ("five" in dot or "nine" in dot)
    rule_list = jitree.rules(model, class_names=names)
    assert all(rule.prediction[2] in ("five", "nine") for rule in rule_list)


def test_bad_class_names_are_refused(classifier, regressor, pyplot):
    _, model = classifier
    for export in (jitree.export_text, jitree.export_graphviz, jitree.plot_tree, jitree.rules):
        with pytest.raises(ValueError, match="one sequence of names per output"):
            export(model, class_names=["no", "yes"])  # a single output's names
        with pytest.raises(ValueError, match="one sequence of names per output"):
            export(model, class_names=["ab", "cdef", "gh"])  # strings are not sequences here
        with pytest.raises(ValueError, match="one sequence of names per output"):
            export(model, class_names=[["N", "Y"], ["a", "b", "c", "d"]])  # two of three
        with pytest.raises(ValueError, match=r"class_names\[1\] has 3 names, output 1 has 4 "
                                             "classes"):
            export(model, class_names=[["N", "Y"], ["a", "b", "c"], ["x", "y"]])
        with pytest.raises(ValueError, match="regression tree"):
            export(regressor[1], class_names=[["a"], ["b"], ["c"]])


def test_a_bare_tree_names_classes_by_column(classifier):
    X, model = classifier
    text = jitree.export_text(model.tree_, max_depth=None)
    # a bare Tree does not know each output's classes: every output has the tree's 4 columns
    for match, reaching in zip(filter(None, map(LEAF_CLASSES.search, text.splitlines())),
                               rows_by_leaf(model, X), strict=True):
        predicted = model.predict(X[reaching[:1]])[0]
        assert match.group(2).split(", ") == [str(list(model.classes_[j]).index(label))
                                              for j, label in enumerate(predicted)]


# -- export_graphviz -----------------------------------------------------------------------------

@pytest.mark.parametrize("options", [
    # precision 4: at 2, a fraction of 0.665 is printed 0.67 by jitree (the nearest) and
    # 0.66 by scikit-learn (np.around rounds the tie 66.5 to even)
    {}, {"proportion": True, "node_ids": True, "label": "none", "precision": 4},
    {"filled": True, "special_characters": True, "label": "root", "max_depth": 1},
])
def test_graphviz_boxes_are_scikit_learns(regressor_pair, classifier_pair, sk_tree, options):
    for _, fitted, model in (regressor_pair, classifier_pair):
        # scikit-learn draws no class line for several outputs
        _, ours, our_edges = dot_parts(jitree.export_graphviz(model, class_names=False,
                                                              **options))
        _, theirs, their_edges = dot_parts(sk_tree.export_graphviz(fitted, **options))
        assert our_edges == their_edges and ours.keys() == theirs.keys()
        for node, lines in ours.items():
            assert_same_lines(lines, theirs[node], options.get("precision", 3))


def test_graphviz_values_and_classes(classifier):
    X, model = classifier
    tree = model.tree_
    boxes = dot_parts(jitree.export_graphviz(model))[1]
    leaf_of_row = model.apply(X)
    width = tree.n_classes
    for node, lines in boxes.items():
        node = int(node)
        start = next(i for i, line in enumerate(lines) if line.startswith("value = "))
        values = lines[start:start + tree.n_outputs]
        assert values[0].startswith("value = [[") and values[-1].endswith("]]")
        for j, line in enumerate(values):
            shown = [float(v) for v in INNER_LIST.findall(line)[0].split(", ")]
            np.testing.assert_allclose(
                shown, tree.value[node, j * width:j * width + model.n_classes_[j]], atol=5e-4)
        assert lines[start + tree.n_outputs:] == [lines[-1]]
        reaching = np.flatnonzero(leaf_of_row == node)
        if reaching.size:
            predicted = model.predict(X[reaching[:1]])[0]
            assert lines[-1] == "class = [" + ", ".join(map(str, predicted)) + "]"
    root = dot_parts(jitree.export_graphviz(model, class_names=True))[1]["0"]
    assert re.fullmatch(r"class = \[y\[\d\], y\[\d\], y\[\d\]\]", root[-1])


def test_filled_colours_by_impurity(regressor, classifier):
    for _, model in (regressor, classifier):
        tree = model.tree_
        colors = _fill_colors(tree)
        assert colors[int(np.argmax(tree.impurity))] == "#ffffff"  # least pure: white
        # the purer, the stronger: whiteness (sum of the channels) follows the impurity
        whiteness = [sum(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in colors]
        order = np.argsort(tree.impurity, kind="stable")
        assert all(np.diff(np.array(whiteness)[order]) >= 0)
        assert len(set(colors)) > 2  # one hue, many strengths
        dot = jitree.export_graphviz(model, filled=True)
        assert all(f'fillcolor="{color}"' in dot for color in colors)


# -- plot_tree -----------------------------------------------------------------------------------

def test_plot_tree_boxes_are_scikit_learns(regressor_pair, classifier_pair, sk_tree, pyplot):
    for _, fitted, model in (regressor_pair, classifier_pair):
        _, (left, right) = pyplot.subplots(1, 2, figsize=(16, 6))
        ours = jitree.plot_tree(model, ax=left, class_names=False)
        theirs = [t.get_text() for t in sk_tree.plot_tree(fitted, ax=right)
                  if t.get_text().strip() not in ("True", "False")]
        assert len(ours) == len(theirs)
        for box, expected in zip(ours, theirs, strict=True):
            assert_same_lines(box.get_text().split("\n"), expected.strip().split("\n"))


def test_plot_tree_draws_the_graphviz_boxes(classifier, pyplot):
    import matplotlib.colors

    _, model = classifier
    _, ax = pyplot.subplots(figsize=(16, 8))
    texts = jitree.plot_tree(model, ax=ax, filled=True)
    boxes = dot_parts(jitree.export_graphviz(model))[1]
    assert [t.get_text().split("\n") for t in texts] == list(boxes.values())
    colors = _fill_colors(model.tree_)
    assert [matplotlib.colors.to_hex(t.get_bbox_patch().get_facecolor()) for t in texts] == \
        [colors[int(node)] for node in boxes]


# -- rules ---------------------------------------------------------------------------------------

def test_rules_predict_as_predict(regressor, classifier):
    for X, model in (regressor, classifier):
        rule_list = jitree.rules(model)
        assert len(rule_list) == model.get_n_leaves()
        matched = np.zeros(X.shape[0], dtype=int)
        for rule in rule_list:
            rows = rule.matches(X)
            matched += rows
            assert isinstance(rule.prediction, tuple) and len(rule.prediction) == 3
            for predicted in model.predict(X[rows]):
                assert tuple(predicted.tolist()) == rule.prediction
        assert np.all(matched == 1)


def test_rule_confidences_and_text(regressor, classifier):
    X, model = classifier
    proba = model.predict_proba(X)
    for rule in jitree.rules(model):
        row = np.flatnonzero(rule.matches(X))[0]
        assert rule.confidence == pytest.approx(tuple(p[row].max() for p in proba))
        text = rule.to_text()
        labels = ", ".join(map(str, rule.prediction))
        confidences = ", ".join(f"{c:.3f}" for c in rule.confidence)
        assert text.endswith(f"THEN class = [{labels}] (support {rule.support} = "
                             f"{100 * rule.support_fraction:.1f}%, confidence [{confidences}])")
    X, model = regressor
    for rule, line in zip(jitree.rules(model), jitree.rules_to_text(model, decimals=6)
                          .splitlines(), strict=True):
        shown = re.search(r"THEN value = \[(.*)\] \(support \d+ = [\d.]+%, squared_error ",
                          line).group(1)
        np.testing.assert_allclose([float(v) for v in shown.split(", ")], rule.prediction,
                                   atol=5.1e-7)
        assert rule.confidence is None
