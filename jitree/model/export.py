"""Text and Graphviz (DOT) export of a fitted tree."""

import colorsys

import numpy as np

from .tree import TREE_LEAF


def _fitted_tree(model):
    tree = getattr(model, "tree_", None)
    if tree is None:
        from .validation import check_is_fitted

        check_is_fitted(model)
    return tree


def export_text(model, feature_names=None, decimals=4, show_weights=False):
    """The tree as indented text, one line per test and per leaf.

    ``feature_names`` defaults to ``model.feature_names_in_`` when the model was fitted on a
    DataFrame, else ``feature_0``, ``feature_1``, ...
    """
    tree = _fitted_tree(model)
    if feature_names is None:
        feature_names = getattr(model, "feature_names_in_", None)
    if feature_names is None:
        feature_names = [f"feature_{f}" for f in range(tree.n_features)]
    feature_names = list(feature_names)
    if len(feature_names) != tree.n_features:
        raise ValueError(f"feature_names has {len(feature_names)} names, the tree has "
                         f"{tree.n_features} features")
    classes = getattr(model, "classes_", None)
    lines = []

    def leaf_text(node):
        if tree.n_classes:
            counts = tree.value[node]
            label = classes[int(np.argmax(counts))] if classes is not None else \
                int(np.argmax(counts))
            text = f"class: {label}"
            if show_weights:
                text += f" weights: {np.round(counts, decimals).tolist()}"
            return text
        return f"value: [{tree.value[node, 0]:.{decimals}f}]"

    # (node, depth) to print, or ("else", text) for the header of a right branch
    stack = [(0, 0)]
    while stack:
        node, depth = stack.pop()
        if node == "else":
            lines.append(depth)
            continue
        indent = "|   " * depth + "|--- "
        if tree.children_left[node] == TREE_LEAF:
            lines.append(indent + leaf_text(node))
            continue
        name = feature_names[tree.feature[node]]
        threshold = tree.threshold[node]
        stack.append((int(tree.children_right[node]), depth + 1))
        stack.append(("else", indent + f"{name} >  {threshold:.{decimals}f}"))
        stack.append((int(tree.children_left[node]), depth + 1))
        lines.append(indent + f"{name} <= {threshold:.{decimals}f}")
    return "\n".join(lines) + "\n"


# -- shared by export_graphviz, jitree.model.rules and jitree.model.plot ------------------------

# Name of the impurity a node reports, by criterion (cart and twoing report the Gini index,
# gain_ratio reports entropy: see the Tree docstring).
_IMPURITY_NAMES = {
    "gini": "gini",
    "cart": "gini",
    "twoing": "gini",
    "entropy": "entropy",
    "log_loss": "entropy",
    "gain_ratio": "entropy",
    "misclassification": "misclassification",
    "squared_error": "squared_error",
}


def _feature_names(model, tree, feature_names):
    """Display names of the tree's features: the argument, else ``feature_names_in_``, else
    ``feature_0``, ``feature_1``, ... (the names export_text uses)."""
    if feature_names is None:
        feature_names = getattr(model, "feature_names_in_", None)
    if feature_names is None:
        return [f"feature_{f}" for f in range(tree.n_features)]
    if isinstance(feature_names, str):
        raise TypeError("feature_names must be a sequence of names, not one string")
    names = [str(name) for name in feature_names]
    if len(names) != tree.n_features:
        raise ValueError(f"feature_names has {len(names)} names, the tree has "
                         f"{tree.n_features} features")
    return names


def _class_labels(model, tree, class_names):
    """Labels of the tree's value columns (classifiers): the argument, else ``classes_``;
    None for a regression tree."""
    if not tree.n_classes:
        if class_names is not None:
            raise ValueError("class_names was given, but the model is a regression tree (it "
                             "has no classes)")
        return None
    if class_names is None:
        class_names = getattr(model, "classes_", None)
        if class_names is None:
            return list(range(tree.n_classes))
    elif isinstance(class_names, str):
        raise TypeError("class_names must be a sequence of names, not one string")
    # numpy scalars become plain Python values, which print and compare as users expect
    labels = [label.item() if isinstance(label, np.generic) else label
              for label in class_names]
    if len(labels) != tree.n_classes:
        raise ValueError(f"class_names has {len(labels)} names, the tree has "
                         f"{tree.n_classes} classes")
    return labels


def _impurity_name(model, tree):
    name = _IMPURITY_NAMES.get(getattr(model, "criterion", None))
    if name is None:
        return "impurity" if tree.n_classes else "squared_error"
    return name


def _check_precision(precision, name="precision"):
    if isinstance(precision, bool) or not isinstance(precision, (int, np.integer)) \
            or precision < 0:
        raise ValueError(f"{name} must be a non-negative int, got {precision!r}")
    return int(precision)


def _check_max_depth(max_depth):
    if max_depth is None:
        return None
    if isinstance(max_depth, bool) or not isinstance(max_depth, (int, np.integer)) \
            or max_depth < 0:
        raise ValueError(f"max_depth must be None or a non-negative int, got {max_depth!r}")
    return int(max_depth)


def _format_number(value, decimals):
    """``value`` with at most ``decimals`` decimals and no trailing zeros (2.45, 50, 0.1423);
    a tiny non-zero value keeps ``decimals`` significant digits instead of printing as 0."""
    value = float(value)
    if not np.isfinite(value):
        return str(value)
    text = f"{value:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if text in ("0", "-0"):
        return f"{value:.{max(decimals, 1)}g}" if value != 0.0 else "0"
    return text


def _node_lines(tree, node, names, labels, impurity_name, precision):
    """The text of one node, line by line: its test (internal nodes), impurity, number of
    samples, value and, for classifiers, the majority class."""
    lines = []
    if tree.children_left[node] != TREE_LEAF:
        threshold = _format_number(tree.threshold[node], precision)
        lines.append(f"{names[tree.feature[node]]} <= {threshold}")
    lines.append(f"{impurity_name} = {_format_number(tree.impurity[node], precision)}")
    lines.append(f"samples = {int(tree.n_node_samples[node])}")
    if labels is None:
        lines.append(f"value = {_format_number(tree.value[node, 0], precision)}")
    else:
        counts = ", ".join(_format_number(count, precision) for count in tree.value[node])
        lines.append(f"value = [{counts}]")
        majority = int(np.argmax(tree.cached("proba", tree.probability_table)[node]))
        lines.append(f"class = {labels[majority]}")
    return lines


def _walk(tree, max_depth=None):
    """Depth-first, left child first: ``(node, parent, depth, is_left, hidden)`` per drawn box.

    The root has parent -1. Below ``max_depth`` a subtree is not walked: its root is yielded
    once with ``hidden=True`` (drawn as a "(...)" placeholder).
    """
    stack = [(0, -1, 0, True)]
    while stack:
        node, parent, depth, is_left = stack.pop()
        hidden = max_depth is not None and depth > max_depth
        yield node, parent, depth, is_left, hidden
        if hidden or tree.children_left[node] == TREE_LEAF:
            continue
        stack.append((int(tree.children_right[node]), node, depth + 1, False))
        stack.append((int(tree.children_left[node]), node, depth + 1, True))


def _fill_colors(tree):
    """A fill colour per node, "#rrggbb".

    Classifiers: the hue of the majority class, stronger the purer the node (white at the
    chance level 1/n_classes, full colour when pure). Regressors: one hue, stronger the larger
    the node's value relative to the other nodes.
    """
    if tree.n_classes:
        proba = tree.cached("proba", tree.probability_table)
        majority = np.argmax(proba, axis=1)
        chance = 1.0 / tree.n_classes
        top = proba.max(axis=1)
        strength = (top - chance) / (1.0 - chance) if tree.n_classes > 1 else \
            np.ones(tree.node_count)
        hues = (0.08 + np.arange(tree.n_classes) / tree.n_classes) % 1.0
        node_hue = hues[majority]
    else:
        values = tree.value[:, 0]
        spread = values.max() - values.min()
        strength = (values - values.min()) / spread if spread > 0 else \
            np.zeros(tree.node_count)
        node_hue = np.full(tree.node_count, 0.58)
    strength = np.clip(strength, 0.0, 1.0)
    colors = []
    for hue, amount in zip(node_hue, strength, strict=True):
        # saturation and value chosen so that black text stays readable on the full colour
        rgb = np.array(colorsys.hsv_to_rgb(hue, 0.55, 0.95))
        mixed = 1.0 - amount * (1.0 - rgb)
        colors.append("#" + "".join(f"{round(255 * c):02x}" for c in mixed))
    return colors


def _dot_string(lines):
    """A double-quoted DOT string whose lines are ``lines`` (quotes and backslashes escaped,
    so that a name is shown as written)."""
    def escape(line):
        line = line.replace("\\", "\\\\").replace('"', '\\"')
        return line.replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\n")

    text = "\\n".join(escape(line) for line in lines)
    if text.endswith("\\"):
        # Several Graphviz releases read a backslash pair before the closing quote as an
        # escaped quote; a trailing space (invisible in a centred line) keeps them apart.
        text += " "
    return '"' + text + '"'


def export_graphviz(model, feature_names=None, class_names=None, filled=False, rounded=True,
                    precision=3, max_depth=None):
    """The tree as Graphviz DOT source (render with ``dot -Tpng``, pydot or graphviz).

    Every node is a box listing its test ``name <= threshold`` (internal nodes), impurity,
    number of training samples, value (weighted class counts, or the mean target) and, for
    classifiers, the majority class. The root's two edges are labelled True (the test holds:
    left) and False.

    Parameters
    ----------
    model : fitted DecisionTreeClassifier or DecisionTreeRegressor
    feature_names : sequence of str, optional
        Default ``model.feature_names_in_``, else ``feature_0``, ``feature_1``, ...
    class_names : sequence, optional
        Default ``model.classes_`` (classifiers only).
    filled : bool, default False
        Colour the boxes by majority class (strength: purity) or by value (regressors).
    rounded : bool, default True
        Rounded boxes.
    precision : int, default 3
        Decimals of thresholds, impurities and values (trailing zeros dropped).
    max_depth : int, optional
        Draw nodes down to this depth (root 0); each deeper subtree becomes a "(...)" box.
    """
    tree = _fitted_tree(model)
    names = _feature_names(model, tree, feature_names)
    labels = _class_labels(model, tree, class_names)
    precision = _check_precision(precision)
    max_depth = _check_max_depth(max_depth)
    impurity_name = _impurity_name(model, tree)
    colors = _fill_colors(tree) if filled else None

    styles = (["filled"] if filled else []) + (["rounded"] if rounded else [])
    node_defaults = ["shape=box"]
    if styles:
        node_defaults.append(f'style="{", ".join(styles)}"')
    node_defaults += ['color="black"', 'fontname="helvetica"']
    out = ["digraph Tree {",
           f"node [{', '.join(node_defaults)}] ;",
           'edge [fontname="helvetica"] ;']
    for node, parent, _, is_left, hidden in _walk(tree, max_depth):
        if hidden:
            node_id = f"hidden{node}"
            out.append(f'{node_id} [label="(...)", style="dashed"] ;')
        else:
            node_id = str(node)
            label = _dot_string(_node_lines(tree, node, names, labels, impurity_name,
                                            precision))
            fill = f', fillcolor="{colors[node]}"' if filled else ""
            out.append(f"{node_id} [label={label}{fill}] ;")
        if parent >= 0:
            edge_label = ""
            if parent == 0:
                edge_label = ' [label="True"]' if is_left else ' [label="False"]'
            out.append(f"{parent} -> {node_id}{edge_label} ;")
    out.append("}")
    return "\n".join(out) + "\n"
