"""Text and Graphviz (DOT) export of a fitted tree.

How tests are written (shared with :mod:`jitree.model.rules` and :mod:`jitree.model.plot`):

- threshold on a numeric feature: ``x <= 2.5`` / ``x > 2.5``;
- threshold on an ordinal feature: the level, ``size <= medium`` / ``size > medium``
  (threshold ``t`` sends codes ``<= floor(t)`` left, so the level printed is
  ``categories_[f][floor(t)]``);
- category subset: ``color in {red, blue}`` / ``color not in {red, blue}``, a single category
  as ``color == red`` / ``color != red``;
- multiway: one branch per child, ``outlook = sunny``, or ``outlook in {overcast, foggy}`` for a
  child several categories lead to (``outlook is missing`` for a child only missing values
  reach).

Categories are named by the model's ``categories_`` (their code when the model has none).
Missing-value routing is shown by `` (or missing)`` after the branch a missing value takes (NaN,
and for a categorical feature any value that is not one of its category codes, i.e. an unseen
category). It is shown at every category test, and at threshold tests of the features the
model saw missing values of in training (``missing_values_in_feature_mask_``); elsewhere a
threshold test sends a missing value, never seen in training, to its heavier child unmarked.
A graphviz box or plotted box shows the test of a binary node (it holds: left, the root's edge
labelled True), and the feature of a multiway node, whose edges carry the branch tests
(``= sunny``, ``in {overcast, foggy}``).
"""

import colorsys

import numpy as np

from .tree import (
    FEATURE_ORDINAL,
    SPLIT_MULTIWAY,
    SPLIT_SUBSET,
    SPLIT_THRESHOLD,
    TREE_LEAF,
)

# The fitted attribute (a boolean per feature) telling which features had missing values in
# training: threshold tests on them show their missing-value branch.
MISSING_SEEN_ATTRIBUTE = "missing_values_in_feature_mask_"
MISSING_MARK = " (or missing)"
# threshold of a split of the non-missing values (left) from the missing ones (right)
ALL_VALUES = float(np.finfo(np.float64).max)


def _fitted_tree(model):
    tree = getattr(model, "tree_", None)
    if tree is None:
        from .validation import check_is_fitted

        check_is_fitted(model)
    return tree


def export_text(model, feature_names=None, decimals=4, show_weights=False, max_depth=None):
    """The tree as indented text, one line per test and per leaf.

    ``feature_names`` defaults to ``model.feature_names_in_`` when the model was fitted on a
    DataFrame, else ``feature_0``, ``feature_1``, ... A binary node prints its test and its
    negation, a multiway node one line per child; categories, ordinal levels and missing
    values print as the module docstring describes.

    ``max_depth`` (None: the whole tree) bounds the text: the tests of nodes down to that
    depth (the root's is 0) are printed, and below them a leaf prints as usual while an
    internal node prints as one line ``truncated branch of depth k``, ``k`` the number of
    levels of its subtree (itself included). A line at depth ``d`` is indented by ``4 d``
    characters, so a whole tree's text grows with the square of its depth when the tree is a
    long chain (tens of thousands of levels make gigabytes); ``max_depth`` keeps it to
    about ``4 max_depth`` characters per line.
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
    decimals = _check_precision(decimals, "decimals")
    max_depth = _check_max_depth(max_depth)
    classes = getattr(model, "classes_", None)
    categories = _category_labels(model, tree)
    marked = _missing_marked(model, tree)
    levels = _subtree_levels(tree) if max_depth is not None \
        and tree.max_depth > max_depth else None
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

    def number(value):
        return f"{value:.{decimals}f}"

    # (node, depth, None) to print, or (None, depth, text) for the header of a branch after
    # the first; the indentation is made as each line is printed, so that what waits on the
    # stack does not grow with the depth
    stack = [(0, 0, None)]
    while stack:
        node, depth, branch = stack.pop()
        indent = "|   " * depth + "|--- "
        if branch is not None:
            lines.append(indent + branch)
            continue
        if tree.children_left[node] == TREE_LEAF:
            lines.append(indent + leaf_text(node))
            continue
        if max_depth is not None and depth > max_depth:
            lines.append(f"{indent}truncated branch of depth {levels[node]}")
            continue
        branches = _branch_texts(tree, node, feature_names, categories, marked[node], number,
                                 greater=">  ")
        children = tree.children(node)
        for child, text in zip(reversed(children[1:]), reversed(branches[1:]), strict=True):
            stack.append((child, depth + 1, None))
            stack.append((None, depth, text))
        stack.append((children[0], depth + 1, None))
        lines.append(indent + branches[0])
    return "\n".join(lines) + "\n"


def _subtree_levels(tree):
    """The number of levels of each node's subtree, the node included (1 for a leaf)."""
    parent, child = tree.parent_child_pairs()
    deepest_first = np.argsort(-tree.depth[child], kind="stable")
    levels = [1] * tree.node_count
    # a child's count is final before it is folded into its parent's
    for up, down in zip(parent[deepest_first].tolist(), child[deepest_first].tolist(),
                        strict=True):
        if levels[down] >= levels[up]:
            levels[up] = levels[down] + 1
    return np.array(levels, dtype=np.int64)


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
    "poisson": "poisson",
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


def _plain_label(value):
    """A category as printed: NumPy scalars as the equal Python value."""
    return str(value.item() if isinstance(value, np.generic) else value)


def _category_labels(model, tree):
    """Per feature, the printed name of each category code (list of str), or None for a numeric
    feature and when the model has no ``categories_`` (codes are printed then)."""
    categories = getattr(model, "categories_", None)
    labels = [None] * tree.n_features
    if categories is None:
        return labels
    if isinstance(categories, (str, bytes)) or not hasattr(categories, "__len__") \
            or len(categories) != tree.n_features:
        raise ValueError("categories_ must hold one entry per feature "
                         f"({tree.n_features}), got {categories!r:.80}")
    for f, values in enumerate(categories):
        n_categories = int(tree.n_categories[f])
        if n_categories == 0 or values is None:
            continue
        values = np.asarray(values, dtype=object)
        if values.ndim != 1 or values.shape[0] != n_categories:
            raise ValueError(f"categories_[{f}] must list the {n_categories} categories of "
                             f"feature {f} in code order, got shape {values.shape}")
        labels[f] = [_plain_label(value) for value in values]
    return labels


def _missing_marked(model, tree):
    """Per node, whether its missing-value branch is marked: every category test, and the
    threshold tests on features the model saw missing values of in training."""
    seen = getattr(model, MISSING_SEEN_ATTRIBUTE, None)
    seen = np.zeros(tree.n_features, dtype=bool) if seen is None else \
        np.asarray(seen, dtype=bool).reshape(-1)
    if seen.shape[0] != tree.n_features:
        raise ValueError(f"{MISSING_SEEN_ATTRIBUTE} must hold one boolean per feature "
                         f"({tree.n_features}), got {seen.shape[0]}")
    internal = tree.children_left != TREE_LEAF
    feature = np.where(internal, tree.feature, 0)
    return internal & ((tree.split_kind != SPLIT_THRESHOLD) | seen[feature])


def _codes_in_set(tree, node):
    """Category codes of a subset node's set (bit c of its words set: code c goes left)."""
    n_categories = int(tree.n_categories[tree.feature[node]])
    offset = int(tree.category_offset[node])
    words = tree.category_bits[offset:offset + (n_categories + 63) // 64]
    bits = np.unpackbits(words.astype("<u8").view(np.uint8), bitorder="little")
    return np.flatnonzero(bits[:n_categories]).tolist()


def _multiway_branches(tree, node):
    """Per child of a multiway node (in order): (category codes sending there, whether missing
    values go there)."""
    n_categories = int(tree.n_categories[tree.feature[node]])
    offset = int(tree.category_offset[node])
    slot = tree.multiway_slot[offset:offset + n_categories + 1]
    return [(np.flatnonzero(slot[:n_categories] == k).tolist(), bool(slot[n_categories] == k))
            for k in range(tree.n_children(node))]


def _shown_categories(codes, labels):
    """The printed names of category ``codes`` (the codes themselves without labels)."""
    return [labels[code] if labels is not None else str(code) for code in codes]


def _set_text(name, shown, negated=False, single=("==", "!=")):
    """``name in {a, b}`` (``not in`` when negated) for the printed categories ``shown``; one
    category as ``name == a``."""
    if len(shown) == 1:
        return f"{name} {single[negated]} {shown[0]}"
    return f"{name} {'not in' if negated else 'in'} {{{', '.join(shown)}}}"


def _ordinal_level(threshold, labels, n_categories):
    """The level printed for an ordinal threshold: codes <= floor(t) go left; None when
    floor(t) is not a level (the threshold is printed as a number then)."""
    level = int(np.floor(threshold))
    if 0 <= level < n_categories:
        return labels[level] if labels is not None else str(level)
    return None


def _branch_texts(tree, node, names, categories, marked, number, greater="> "):
    """The test leading to each child of internal ``node``, children in order (left, right
    for a binary node). ``number`` formats a threshold; ``marked``: append the missing mark to
    the branch missing values take."""
    feature = int(tree.feature[node])
    name = names[feature]
    labels = categories[feature]
    kind = tree.split_kind[node]
    if kind == SPLIT_MULTIWAY:
        texts = []
        for codes, missing in _multiway_branches(tree, node):
            if not codes and missing:
                texts.append(f"{name} is missing")
                continue
            text = _set_text(name, _shown_categories(codes, labels), single=("=", "!="))
            texts.append(text + (MISSING_MARK if marked and missing else ""))
        return texts
    if kind == SPLIT_SUBSET:
        shown = _shown_categories(_codes_in_set(tree, node), labels)
        texts = [_set_text(name, shown), _set_text(name, shown, negated=True)]
    else:
        threshold = float(tree.threshold[node])
        if threshold >= ALL_VALUES:  # every value left, the missing ones right
            return [f"{name} is not missing", f"{name} is missing"]
        shown = None
        if tree.feature_kind[feature] == FEATURE_ORDINAL:
            shown = _ordinal_level(threshold, labels, int(tree.n_categories[feature]))
        if shown is None:
            shown = number(threshold)
        texts = [f"{name} <= {shown}", f"{name} {greater}{shown}"]
    if marked:
        side = 0 if tree.missing_left[node] else 1
        texts[side] += MISSING_MARK
    return texts


def _node_lines(tree, node, names, labels, impurity_name, precision, categories=None,
                marked=None):
    """The text of one node, line by line: its test (binary nodes; the tested feature for a
    multiway node, whose branches label its edges), impurity, number of samples, value and,
    for classifiers, the majority class."""
    lines = []
    if tree.children_left[node] != TREE_LEAF:
        if tree.split_kind[node] == SPLIT_MULTIWAY:
            lines.append(names[tree.feature[node]])
        else:
            categories = categories or [None] * tree.n_features
            lines.append(_branch_texts(tree, node, names, categories,
                                       marked is not None and marked[node],
                                       lambda value: _format_number(value, precision))[0])
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


def _edge_labels(tree, node, names, categories, marked, precision):
    """Labels of the edges to the children of ``node``: under a multiway node its branch tests
    without the feature name, which its box shows (``= sunny``, ``in {overcast, foggy}``);
    True/False under a binary root (its test holds: left); else None."""
    if tree.split_kind[node] == SPLIT_MULTIWAY:
        name = names[tree.feature[node]]
        return [text[len(name) + 1:] for text in _branch_texts(
            tree, node, names, categories, marked[node],
            lambda value: _format_number(value, precision))]
    if node == 0:
        return ["True", "False"]
    return [None, None]


def _walk(tree, max_depth=None):
    """Depth-first, children in order: ``(node, parent, depth, rank, hidden)`` per drawn box,
    ``rank`` the node's position among its parent's children (0: the left child).

    The root has parent -1. Below ``max_depth`` a subtree is not walked: its root is yielded
    once with ``hidden=True`` (drawn as a "(...)" placeholder).
    """
    stack = [(0, -1, 0, 0)]
    while stack:
        node, parent, depth, rank = stack.pop()
        hidden = max_depth is not None and depth > max_depth
        yield node, parent, depth, rank, hidden
        if hidden or tree.children_left[node] == TREE_LEAF:
            continue
        children = tree.children(node)
        for rank_below in range(len(children) - 1, -1, -1):
            stack.append((children[rank_below], node, depth + 1, rank_below))


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

    Every node is a box listing its test ``name <= threshold`` (binary nodes; see the module
    docstring for category tests and missing values), impurity, number of training samples,
    value (weighted class counts, or the mean target) and, for classifiers, the majority class.
    A binary root's two edges are labelled True (the test holds: left) and False; the box of a
    multiway node names its feature and its edges carry the test of each branch (``= sunny``).

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
    categories = _category_labels(model, tree)
    marked = _missing_marked(model, tree)
    colors = _fill_colors(tree) if filled else None

    styles = (["filled"] if filled else []) + (["rounded"] if rounded else [])
    node_defaults = ["shape=box"]
    if styles:
        node_defaults.append(f'style="{", ".join(styles)}"')
    node_defaults += ['color="black"', 'fontname="helvetica"']
    out = ["digraph Tree {",
           f"node [{', '.join(node_defaults)}] ;",
           'edge [fontname="helvetica"] ;']
    edge_labels = {}
    for node, parent, _, rank, hidden in _walk(tree, max_depth):
        if hidden:
            node_id = f"hidden{node}"
            out.append(f'{node_id} [label="(...)", style="dashed"] ;')
        else:
            node_id = str(node)
            label = _dot_string(_node_lines(tree, node, names, labels, impurity_name,
                                            precision, categories, marked))
            fill = f', fillcolor="{colors[node]}"' if filled else ""
            out.append(f"{node_id} [label={label}{fill}] ;")
        if parent >= 0:
            if parent not in edge_labels:
                edge_labels[parent] = _edge_labels(tree, parent, names, categories, marked,
                                                   precision)
            text = edge_labels[parent][rank]
            edge_label = "" if text is None else f" [label={_dot_string([text])}]"
            out.append(f"{parent} -> {node_id}{edge_label} ;")
    out.append("}")
    return "\n".join(out) + "\n"
