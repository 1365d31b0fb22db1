"""export_text, export_graphviz and plot_tree with scikit-learn's parameters.

Against scikit-learn's own exporters on the same tree (``jitree.from_sklearn`` keeps its
nodes and numbering): ``export_text`` prints the same text; the boxes of ``export_graphviz``
and ``plot_tree`` hold the same lines, numbers compared as numbers (jitree drops trailing
zeros: ``gini = 0`` where scikit-learn prints ``gini = 0.0``). Then each option on jitree's
own kinds of test (categories, multiway, missing values), and bad values.
"""

import io
import re
import warnings

import numpy as np
import pytest

import jitree
from jitree.datasets import load_iris

IRIS_X, IRIS_Y, IRIS_NAMES = load_iris()
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?")


@pytest.fixture(scope="module")
def sk_tree():
    return pytest.importorskip("sklearn.tree")


@pytest.fixture(scope="module")
def pair(sk_tree):
    """A weighted scikit-learn classifier (fractional weighted counts) and its jitree twin."""
    weight = np.random.default_rng(0).uniform(0.5, 2.0, size=IRIS_X.shape[0])
    fitted = sk_tree.DecisionTreeClassifier(max_depth=4, random_state=0).fit(
        IRIS_X, IRIS_Y, sample_weight=weight)
    return fitted, jitree.from_sklearn(fitted)


@pytest.fixture(scope="module")
def regressor_pair(sk_tree):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    y = 3.0 * X[:, 0] + np.sin(2.0 * X[:, 1]) + rng.normal(scale=0.2, size=300)
    fitted = sk_tree.DecisionTreeRegressor(max_depth=5, random_state=0).fit(X, y)
    return fitted, jitree.from_sklearn(fitted)


def numbers_as_floats(text):
    return NUMBER.sub(lambda match: repr(float(match.group())), text)


def assert_same_lines(ours, theirs, precision=3):
    """Lines equal but for the printing of their numbers, which agree to ``precision``
    decimals (jitree prints a rounding residue such as an impurity of -2e-16 with its
    significant digits, scikit-learn as -0.0)."""
    assert len(ours) == len(theirs), (ours, theirs)
    for line, expected in zip(ours, theirs, strict=True):
        assert NUMBER.sub("#", line) == NUMBER.sub("#", expected), (line, expected)
        for a, b in zip(NUMBER.findall(line), NUMBER.findall(expected), strict=True):
            assert float(a) == pytest.approx(float(b), abs=0.51 * 10.0 ** -precision), \
                (line, expected)


def dot_parts(dot):
    """(header lines, {node id: label lines}, set of edges) of DOT source; numbers as floats,
    "(...)" boxes under their node's id."""
    header, nodes, edges = [], {}, set()
    for line in dot.strip().splitlines()[1:-1]:
        node = re.fullmatch(r"(?:hidden)?(\d+) \[label=(\".*?(?<!\\)\"|<.*>)(?:, .*)?\] ;", line)
        edge = re.fullmatch(r"(\d+) -> (?:hidden)?(\d+)(?: \[.*\])? ;", line)
        if node:
            label = node.group(2)[1:-1]
            parts = label.split("<br/>") if node.group(2).startswith("<") else \
                label.split("\\n")
            nodes[node.group(1)] = parts
        elif edge:
            edges.add(edge.groups())
        else:
            header.append(line)
    return header, nodes, edges


# -- export_text ---------------------------------------------------------------------------------

@pytest.mark.parametrize("options", [
    {},
    {"max_depth": 0}, {"max_depth": 2}, {"max_depth": 1, "spacing": 1},
    {"spacing": 5, "decimals": 0}, {"decimals": 4, "show_weights": True},
    {"show_weights": True, "class_names": ["set", "ver", "vir"]},
    {"feature_names": IRIS_NAMES, "spacing": 2},
])
def test_export_text_is_scikit_learns(pair, sk_tree, options):
    fitted, model = pair
    assert jitree.export_text(model, **options) == sk_tree.export_text(fitted, **options)


@pytest.mark.parametrize("options", [{}, {"decimals": 3, "spacing": 4, "max_depth": 3}])
def test_export_text_of_a_regressor_is_scikit_learns(regressor_pair, sk_tree, options):
    fitted, model = regressor_pair
    assert jitree.export_text(model, **options) == sk_tree.export_text(fitted, **options)


def test_export_text_of_trees_grown_by_each_is_the_same(sk_tree):
    # continuous data, depth 3: every best split is unique, so jitree grows scikit-learn's tree
    from jitree.datasets import make_classification_data

    X, y = make_classification_data(2000, 6, 3, seed=3)
    ours = jitree.DecisionTreeClassifier(max_depth=3).fit(X, y)
    theirs = sk_tree.DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    assert jitree.export_text(ours, show_weights=True) == \
        sk_tree.export_text(theirs, show_weights=True)


def test_export_text_defaults_are_scikit_learns():
    model = jitree.DecisionTreeClassifier().fit(IRIS_X, IRIS_Y)
    lines = jitree.export_text(model).splitlines()
    assert lines[0] == "|--- feature_2 <= 2.45"  # 2 decimals
    # 10 levels, then truncated branches (a depth-12 chain)
    chain = jitree.DecisionTreeRegressor().fit(np.arange(4096.0)[:, None],
                                               np.arange(4096.0) ** 3)
    assert chain.get_depth() > 11
    text = jitree.export_text(chain)
    assert "truncated branch of depth" in text
    assert text == jitree.export_text(chain, max_depth=10)
    assert "truncated" not in jitree.export_text(chain, max_depth=None)


def test_export_text_spacing_and_weights_on_category_tests():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(4)
    color = rng.choice(["red", "green", "blue", "black"], size=400)
    size = rng.normal(size=400)
    size[rng.random(400) < 0.1] = np.nan
    y = np.where(np.isin(color, ["red", "blue"]) & (np.nan_to_num(size, nan=1.0) > -0.5),
                 "yes", "no")
    frame = pd.DataFrame({"color": pd.Categorical(color), "size": size})
    model = jitree.DecisionTreeClassifier(max_depth=2).fit(frame, y)
    text = jitree.export_text(model, spacing=1, show_weights=True, class_names=["N", "Y"])
    lines = text.splitlines()
    assert lines[0].startswith(("|- color in {blue, red}", "|- color in {black, green}"))
    assert lines[-1].startswith("| | |- weights: [")
    assert "(or missing)" in text and "size <= " in text
    for line in lines:
        if "weights" in line:
            counts = line.split("[")[1].split("]")[0].split(", ")
            assert all(re.fullmatch(r"\d+\.\d\d", count) for count in counts)
            assert line.endswith(("class: N", "class: Y"))


# -- export_graphviz -----------------------------------------------------------------------------

GRAPHVIZ_OPTIONS = [
    {"class_names": True},
    {"class_names": ["setosa", "versicolor", "virginica"], "feature_names": IRIS_NAMES},
    {"label": "root", "node_ids": True, "class_names": True},
    {"label": "none", "impurity": False, "proportion": True, "class_names": True},
    {"proportion": True, "precision": 1, "max_depth": 1},
    {"filled": True, "rounded": True, "rotate": True, "leaves_parallel": True},
    {"special_characters": True, "node_ids": True, "class_names": True, "fontname": "times"},
]


@pytest.mark.parametrize("options", GRAPHVIZ_OPTIONS)
def test_graphviz_boxes_are_scikit_learns(pair, sk_tree, options):
    fitted, model = pair
    # scikit-learn draws no class line without class_names; jitree draws classes_ then
    ours = dot_parts(jitree.export_graphviz(model, **{"class_names": False, **options}))
    theirs = dot_parts(sk_tree.export_graphviz(fitted, **options))
    assert ours[0] == theirs[0]  # node, graph and edge defaults, rankdir, ranks
    assert ours[1].keys() == theirs[1].keys()
    for node, lines in ours[1].items():
        assert_same_lines(lines, theirs[1][node], options.get("precision", 3))
    assert ours[2] == theirs[2]


def test_graphviz_regressor_boxes_are_scikit_learns(regressor_pair, sk_tree):
    fitted, model = regressor_pair
    for options in ({}, {"proportion": True, "node_ids": True, "label": "none"}):
        _, ours, our_edges = dot_parts(jitree.export_graphviz(model, **options))
        _, theirs, their_edges = dot_parts(sk_tree.export_graphviz(fitted, **options))
        assert our_edges == their_edges and ours.keys() == theirs.keys()
        for node, lines in ours.items():
            assert_same_lines(lines, theirs[node])


def test_graphviz_class_line_defaults_to_the_classes(pair):
    _, model = pair
    boxes = dot_parts(jitree.export_graphviz(model))[1]
    assert boxes["0"][-1] == "class = versicolor"  # the majority of model.classes_
    assert all(not line.startswith("class") for line in
               dot_parts(jitree.export_graphviz(model, class_names=False))[1]["0"])


def test_graphviz_out_file(pair, tmp_path):
    _, model = pair
    text = jitree.export_graphviz(model, filled=True)
    buffer = io.StringIO()
    assert jitree.export_graphviz(model, buffer, filled=True) is None
    assert buffer.getvalue() == text
    path = tmp_path / "tree.dot"
    assert jitree.export_graphviz(model, out_file=str(path), filled=True) is None
    assert path.read_text(encoding="utf-8") == text
    named = jitree.export_graphviz(model, feature_names=["größe", "b", "c", "d"])
    jitree.export_graphviz(model, tmp_path / "named.dot", feature_names=["größe", "b", "c", "d"])
    assert (tmp_path / "named.dot").read_text(encoding="utf-8") == named


def test_graphviz_options_on_category_tests_and_missing_values():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(5)
    outlook = rng.choice(["sun<ny", "rain & wind", "fog"], size=300)
    size = rng.normal(size=300)
    size[rng.random(300) < 0.2] = np.nan
    y = np.where((outlook == "fog") | ((outlook == "sun<ny") & (np.nan_to_num(size, nan=2.0)
                                                                 > 0.5)), "yes", "no")
    frame = pd.DataFrame({"out<look": pd.Categorical(outlook), "size": size})
    model = jitree.DecisionTreeClassifier(criterion="entropy", categorical_split="multiway",
                                          max_depth=2).fit(frame, y)
    assert model.tree_.n_children(0) == 3
    dot = jitree.export_graphviz(model, special_characters=True, node_ids=True,
                                 label="root", proportion=True, impurity=False)
    graph = parse_dot(dot)
    labels = {node.get_name(): node.get_label() for node in graph.get_nodes()
              if node.get_name() not in ("node", "edge", "graph")}
    assert labels["0"] == "<node &#35;0<br/>out&lt;look<br/>samples = 100.0%<br/>value = [" \
        + ", ".join(jitree.model.export._format_number(p, 3)
                    for p in model.tree_.probability_table()[0]) + "]<br/>class = " \
        + model.classes_[np.argmax(model.tree_.value[0])] + ">"
    edges = {(e.get_source(), e.get_destination()): e.get_label() for e in graph.get_edges()}
    assert {label.replace(" (or missing)", "") for label in edges.values() if label} == \
        {"<= fog>", "<= sun&lt;ny>", "<= rain &amp; wind>"}
    child = next(node for node in labels if node != "0" and "size &le;" in labels[node])
    assert "gini" not in labels[child]  # impurity=False
    assert labels[child].startswith(f"<&#35;{child}<br/>size &le; ")
    assert "&amp;" not in jitree.export_graphviz(model)  # plain labels are not escaped
    assert '"= rain & wind"' in jitree.export_graphviz(model)


def parse_dot(dot):
    pydot = pytest.importorskip("pydot")
    with warnings.catch_warnings():
        # pydot's parser calls pyparsing names that recent pyparsing deprecates: not ours
        warnings.filterwarnings("ignore", category=DeprecationWarning, module="pydot")
        (graph,) = pydot.graph_from_dot_data(dot)
    return graph


@pytest.mark.parametrize("options", GRAPHVIZ_OPTIONS[:6])
def test_graphviz_output_parses(pair, options):
    _, model = pair
    graph = parse_dot(jitree.export_graphviz(model, **options))
    assert graph.get_edges()


# -- plot_tree -----------------------------------------------------------------------------------

PLOT_OPTIONS = [
    {"class_names": True},
    {"label": "root", "node_ids": True, "impurity": False, "class_names": ["a", "b", "c"]},
    {"label": "none", "proportion": True, "precision": 2, "max_depth": 2,
     "feature_names": IRIS_NAMES, "class_names": True},
]


@pytest.mark.parametrize("options", PLOT_OPTIONS)
def test_plot_tree_boxes_are_scikit_learns(pair, sk_tree, pyplot, options):
    fitted, model = pair
    _, (left, right) = pyplot.subplots(1, 2, figsize=(16, 6))
    ours = jitree.plot_tree(model, ax=left, **{"class_names": False, **options})
    theirs = sk_tree.plot_tree(fitted, ax=right, **options)
    theirs = [t.get_text() for t in theirs if t.get_text().strip() not in ("True", "False")]
    # scikit-learn pads its "(...)" boxes with spaces and newlines
    assert len(ours) == len(theirs)
    for box, expected in zip(ours, theirs, strict=True):
        assert_same_lines(box.get_text().split("\n"), expected.strip().split("\n"),
                          options.get("precision", 3))


def test_plot_tree_filled_rounded_and_cleared_axes(pair, pyplot):
    _, model = pair
    figure, ax = pyplot.subplots(figsize=(12, 6))
    ax.text(0.5, 0.5, "left over")
    texts = jitree.plot_tree(model, ax=ax)
    assert "left over" not in [t.get_text() for t in ax.texts]  # the axes were cleared
    assert all(t.get_bbox_patch().get_facecolor()[:3] == (1.0, 1.0, 1.0) for t in texts)
    assert all(type(t.get_bbox_patch().get_boxstyle()).__name__ == "Square" for t in texts)
    texts = jitree.plot_tree(model, ax=ax, filled=True, rounded=True)
    assert len(ax.texts) < 2 * len(texts) + 4  # one drawing only
    colors = jitree.model.export._fill_colors(model.tree_)
    import matplotlib.colors

    assert [matplotlib.colors.to_hex(t.get_bbox_patch().get_facecolor()) for t in texts] == \
        colors
    assert all(type(t.get_bbox_patch().get_boxstyle()).__name__ == "Round" for t in texts)


# -- bad values ----------------------------------------------------------------------------------

def test_bad_values_are_refused(pyplot):
    model = jitree.DecisionTreeClassifier(max_depth=2).fit(IRIS_X, IRIS_Y)
    regressor = jitree.DecisionTreeRegressor(max_depth=2).fit(IRIS_X, IRIS_X[:, 0])
    for export in (jitree.export_graphviz, jitree.plot_tree):
        with pytest.raises(ValueError, match="label must be 'all', 'root' or 'none', got 'al'"):
            export(model, label="al")
        with pytest.raises(TypeError, match="filled must be True or False, got 'yes'"):
            export(model, filled="yes")
        for flag in ("impurity", "node_ids", "proportion", "rounded"):
            with pytest.raises(TypeError, match=f"{flag} must be True or False"):
                export(model, **{flag: 1})
        with pytest.raises(ValueError, match="precision must be a non-negative int"):
            export(model, precision=-1)
        with pytest.raises(ValueError, match="class_names=True was given, but the model is a "
                                             "regression tree"):
            export(regressor, class_names=True)
        export(regressor, class_names=False)  # nothing to hide: accepted
    for flag in ("rotate", "leaves_parallel", "special_characters"):
        with pytest.raises(TypeError, match=f"{flag} must be True or False"):
            jitree.export_graphviz(model, **{flag: "no"})
    with pytest.raises(TypeError, match="fontname must be a str"):
        jitree.export_graphviz(model, fontname=None)
    with pytest.raises(TypeError, match=r"out_file must be None, a path or a file object.*"
                                        r"feature_names="):
        jitree.export_graphviz(model, IRIS_NAMES)
    with pytest.raises(ValueError, match="fontsize must be None or a positive number"):
        jitree.plot_tree(model, fontsize=0)
    with pytest.raises(ValueError, match="spacing must be a positive int, got 0"):
        jitree.export_text(model, spacing=0)
    with pytest.raises(ValueError, match="decimals must be a non-negative int"):
        jitree.export_text(model, decimals=None)
    with pytest.raises(TypeError, match="show_weights must be True or False"):
        jitree.export_text(model, show_weights="yes")
    with pytest.raises(TypeError, match="export_text takes class_names as a sequence"):
        jitree.export_text(model, class_names=True)
    with pytest.raises(ValueError, match="class_names has 2 names, the tree has 3 classes"):
        jitree.export_text(model, class_names=["a", "b"])
    with pytest.raises(ValueError, match="class_names was given, but the model is a "
                                         "regression tree"):
        jitree.export_text(regressor, class_names=["a"])
    with pytest.raises(TypeError):
        jitree.export_text(model, None, 4)  # decimals is keyword-only, as in scikit-learn


def test_special_characters_escape_names():
    model = jitree.DecisionTreeClassifier(max_depth=1).fit(IRIS_X, IRIS_Y)
    dot = jitree.export_graphviz(model, special_characters=True,
                                 feature_names=["a<b", "c&d", "e>f", "g<=h"], max_depth=0,
                                 class_names=["<i>", "j", "k"])
    assert "0 [label=<e&gt;f &le; 2.45<br/>gini = 0.667<br/>" in dot
    assert "class = &lt;i&gt;>" in dot
    parse_dot(dot)


def test_a_bare_tree_is_exported():
    model = jitree.DecisionTreeClassifier(max_depth=2).fit(IRIS_X, IRIS_Y)
    dot = jitree.export_graphviz(model.tree_)
    assert '0 [label="x[2] <= 2.45\\nimpurity = 0.667\\nsamples = 150\\nvalue = [50, 50, 50]' \
        '\\nclass = 0"] ;' in dot
    assert jitree.export_text(model.tree_).splitlines()[1] == "|   |--- class: 0"
