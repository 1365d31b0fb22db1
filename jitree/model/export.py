"""Text and Graphviz (DOT) export of a fitted tree.

``export_text``, ``export_graphviz`` and :func:`jitree.plot_tree` take scikit-learn's
parameters with scikit-learn's meaning; on a tree of numeric threshold tests
``export_text`` prints scikit-learn's text, and the boxes of ``export_graphviz`` and
``plot_tree`` say what scikit-learn's do, with numbers without trailing zeros (``gini = 0``,
``x[0] <= 5``), names from ``feature_names_in_`` and the majority class from ``classes_``
unless told otherwise (the README lists these differences). Beyond scikit-learn, they show
category tests and where missing values go.

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

Multi-output trees (y of several columns) print one prediction per output, in the order of y's
columns: ``value: [1.25, -0.50, 3.00]`` in ``export_text`` (scikit-learn's format);
``class: [no, 2, b]``, each output's predicted label, where scikit-learn prints an argmax over
the outputs' first-class values, which names no class. Boxes show each output's values on a
line of its own, ``value = [[10, 5]`` ... ``[3, 12]]`` (scikit-learn's), and, beyond
scikit-learn, ``class = [no, 2, b]``. An output's class columns are its own classes only:
``tree.value`` pads the outputs with fewer classes than the most with zero columns, which
scikit-learn prints and jitree leaves out. ``class_names`` is then one sequence of names per
output.
"""

import colorsys
import os

import numpy as np

from .tree import (
    FEATURE_ORDINAL,
    SPLIT_MULTIWAY,
    SPLIT_SUBSET,
    SPLIT_THRESHOLD,
    TREE_LEAF,
    Tree,
)

# The fitted attribute (a boolean per feature) telling which features had missing values in
# training: threshold tests on them show their missing-value branch.
MISSING_SEEN_ATTRIBUTE = "missing_values_in_feature_mask_"
MISSING_MARK = " (or missing)"
# threshold of a split of the non-missing values (left) from the missing ones (right)
ALL_VALUES = float(np.finfo(np.float64).max)


def _fitted_tree(model):
    """``model.tree_``; a bare :class:`Tree` is exported too (no names, classes by column,
    its impurity named ``impurity``), as scikit-learn's exporters take a bare ``Tree``."""
    from .forest import BaseForest
    from .validation import check_is_fitted

    if isinstance(model, Tree):
        return model
    if isinstance(model, BaseForest):
        raise TypeError(f"the exports and rules take one tree; this {type(model).__name__} "
                        "has several: pass one of them, e.g. forest.estimators_[0]")
    tree = getattr(model, "tree_", None)
    if tree is None:
        check_is_fitted(model)
    if not isinstance(tree, Tree):
        kind = type(model)
        raise TypeError(f"the exports and rules take a fitted jitree tree (or its Tree), got "
                        f"{kind.__module__}.{kind.__qualname__}; convert scikit-learn models "
                        "with jitree.from_sklearn")
    return tree


def export_text(model, feature_names=None, *, class_names=None, max_depth=10, spacing=3,
                decimals=2, show_weights=False):
    """The tree as indented text, one line per test and per leaf (scikit-learn's format).

    A leaf prints ``class: label`` (classifiers) or ``value: [mean]`` (regressors); a
    multi-output leaf ``class: [label_0, label_1, ...]`` or ``value: [mean_0, mean_1, ...]``,
    one per output (see the module docstring).

    A binary node prints its test and its negation, a multiway node one line per child;
    categories, ordinal levels and missing values print as the module docstring describes.
    On a tree of numeric threshold tests the text is the one scikit-learn's ``export_text``
    prints for the same tree.

    Parameters
    ----------
    model : fitted DecisionTreeClassifier or DecisionTreeRegressor
    feature_names : sequence of str, optional
        Default ``model.feature_names_in_`` when the model was fitted on a DataFrame, else
        ``feature_0``, ``feature_1``, ...
    class_names : sequence, optional
        Labels printed for the classes, in the order of ``model.classes_`` (the default);
        classifiers only. A multi-output classifier takes one sequence per output,
        ``[["no", "yes"], ["a", "b", "c"]]`` (a ValueError otherwise).
    max_depth : int or None, default 10
        The tests of nodes down to this depth (the root's is 0) are printed; below them a leaf
        prints as usual while an internal node prints as one line ``truncated branch of depth
        k``, ``k`` the number of levels of its subtree (itself included). None: the whole
        tree. A line at depth ``d`` is indented by ``(spacing + 1) d`` characters, so a whole
        long chain of tests makes text quadratic in its depth; ``max_depth`` bounds each line.
    spacing : int, default 3
        Width of one level of indentation, less the ``|``.
    decimals : int, default 2
        Decimals of thresholds, leaf values and weights.
    show_weights : bool, default False
        Classifiers: print each leaf's weighted class counts before its class; a
        multi-output leaf prints each output's, ``weights: [[40.00, 2.00], [1.00, 41.00]]
        class: [no, b]``.
    """
    tree = _fitted_tree(model)
    names = _feature_names(model, tree, feature_names)
    if isinstance(class_names, (bool, np.bool_)):
        raise TypeError("export_text takes class_names as a sequence of names (True, a "
                        "symbolic name, is for export_graphviz and plot_tree)")
    labels = _class_labels(model, tree, class_names)
    decimals = _check_precision(decimals, "decimals")
    max_depth = _check_max_depth(max_depth)
    spacing = _check_spacing(spacing)
    show_weights = _check_flag(show_weights, "show_weights")
    categories = _category_labels(model, tree)
    marked = _missing_marked(model, tree)
    levels = _subtree_levels(tree) if max_depth is not None \
        and tree.max_depth > max_depth else None
    step = "|" + " " * spacing
    arrow = "|" + "-" * spacing + " "
    lines = []

    columns = _output_columns(model, tree)

    def number(value):
        return f"{value:.{decimals}f}"

    def leaf_text(node):
        row = tree.value[node]
        if labels is None:
            return "value: [" + ", ".join(number(value) for value in row) + "]"
        text = "class: " + _listed([str(label) for label in _majority_labels(
            tree, node, columns, labels)])
        if show_weights:
            weights = ["[" + ", ".join(number(count) for count in row[output]) + "]"
                       for output in columns]
            text = f"weights: {_listed(weights)} {text}"
        return text

    # (node, depth, None) to print, or (None, depth, text) for the header of a branch after
    # the first; the indentation is made as each line is printed, so that what waits on the
    # stack does not grow with the depth
    stack = [(0, 0, None)]
    while stack:
        node, depth, branch = stack.pop()
        indent = step * depth + arrow
        if branch is not None:
            lines.append(indent + branch)
            continue
        if tree.children_left[node] == TREE_LEAF:
            lines.append(indent + leaf_text(node))
            continue
        if max_depth is not None and depth > max_depth:
            lines.append(f"{indent}truncated branch of depth {levels[node]}")
            continue
        branches = _branch_texts(tree, node, names, categories, marked[node], number,
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
# gain_ratio reports entropy: see the Tree docstring); scikit-learn's criteria under their
# own names, as it reports them
_IMPURITY_NAMES = {
    "gini": "gini",
    "cart": "gini",
    "twoing": "gini",
    "entropy": "entropy",
    "log_loss": "log_loss",
    "gain_ratio": "entropy",
    "misclassification": "misclassification",
    "squared_error": "squared_error",
    "friedman_mse": "friedman_mse",
    "poisson": "poisson",
    "absolute_error": "absolute_error",
    "quantile": "pinball_loss",
}


def _feature_names(model, tree, feature_names, default="feature_{}"):
    """Display names of the tree's features: the argument, else ``feature_names_in_``, else
    ``default`` formatted with each index (``feature_0``, ``feature_1``, ... as export_text
    and the rules print them; the boxes of export_graphviz and plot_tree say ``x[0]``)."""
    if feature_names is None:
        feature_names = getattr(model, "feature_names_in_", None)
    if feature_names is None:
        return [default.format(f) for f in range(tree.n_features)]
    if isinstance(feature_names, str):
        raise TypeError("feature_names must be a sequence of names, not one string")
    names = [str(name) for name in feature_names]
    if len(names) != tree.n_features:
        raise ValueError(f"feature_names must contain {tree.n_features} elements, got "
                         f"{len(names)} (one name per feature of the tree)")
    return names


def _output_columns(model, tree):
    """Per output, the slice of a row of ``tree.value`` holding it: the whole row of a
    single-output tree; of a multi-output tree, output ``j``'s mean (regression) or its
    ``n_classes_[j]`` class columns, the first of its ``tree.n_classes`` (the most classes of
    any output; all of them for a bare Tree, which does not know each output's count)."""
    if tree.n_outputs == 1:
        return [slice(0, tree.value.shape[1])]
    if not tree.n_classes:
        return [slice(j, j + 1) for j in range(tree.n_outputs)]
    width = tree.n_classes
    counts = getattr(model, "n_classes_", None)
    if not isinstance(counts, (list, tuple)):
        counts = [width] * tree.n_outputs
    return [slice(j * width, j * width + int(count)) for j, count in enumerate(counts)]


def _class_labels(model, tree, class_names):
    """Labels of each output's classes (classifiers), ``labels[j][k]`` naming class ``k`` of
    output ``j`` (one output for a single-output tree): the argument, else ``classes_``; None
    for a regression tree. A multi-output tree takes ``class_names`` as one sequence of names
    per output."""
    if not tree.n_classes:
        if class_names is not None:
            raise ValueError("class_names was given, but the model is a regression tree (it "
                             "has no classes)")
        return None
    counts = [output.stop - output.start for output in _output_columns(model, tree)]
    if class_names is None:
        class_names = getattr(model, "classes_", None)
        if class_names is None:
            by_column = [range(count) for count in counts]
            class_names = by_column[0] if tree.n_outputs == 1 else by_column
    if tree.n_outputs == 1:
        if isinstance(class_names, str):
            raise TypeError("class_names must be a sequence of names, not one string")
        return [_names_of_classes(class_names, counts[0], "class_names", "the tree")]
    if not _one_sequence_per_output(class_names, tree.n_outputs):
        raise ValueError(f"class_names of a tree of {tree.n_outputs} outputs must hold one "
                         "sequence of names per output, e.g. [['no', 'yes'], ['a', 'b', 'c']]"
                         f"; got {class_names!r:.80}")
    return [_names_of_classes(names, count, f"class_names[{j}]", f"output {j}")
            for j, (names, count) in enumerate(zip(class_names, counts, strict=True))]


def _one_sequence_per_output(class_names, n_outputs):
    """Whether ``class_names`` is a sequence of ``n_outputs`` sequences (none a string)."""
    def is_sequence(value):
        return hasattr(value, "__len__") and not isinstance(value, (str, bytes))

    return is_sequence(class_names) and len(class_names) == n_outputs \
        and all(is_sequence(names) for names in class_names)


def _names_of_classes(names, n_classes, what, owner):
    """``names`` as a list of plain values, checked to name ``n_classes`` classes."""
    # numpy scalars become plain Python values, which print and compare as users expect
    labels = [label.item() if isinstance(label, np.generic) else label for label in names]
    if len(labels) != n_classes:
        raise ValueError(f"{what} has {len(labels)} names, {owner} has {n_classes} classes")
    return labels


def _majority_labels(tree, node, columns, labels):
    """Per output, the label of the class ``predict`` gives at ``node``: the first largest
    class fraction of the output's ``columns``."""
    proba = tree.cached("proba", tree.probability_table)[node]
    return [names[int(np.argmax(proba[output]))]
            for output, names in zip(columns, labels, strict=True)]


def _listed(texts):
    """The text of one output as it is, of several outputs as ``[a, b, c]``."""
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"


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


def _check_flag(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _check_spacing(spacing):
    if isinstance(spacing, bool) or not isinstance(spacing, (int, np.integer)) or spacing < 1:
        raise ValueError(f"spacing must be a positive int, got {spacing!r}")
    return int(spacing)


LABEL_CHOICES = ("all", "root", "none")


def _check_label(label):
    if not isinstance(label, str) or label not in LABEL_CHOICES:
        raise ValueError(f"label must be 'all', 'root' or 'none', got {label!r}")
    return label


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


class _BoxText:
    """What the box of each node and the label of each edge say, in export_graphviz and
    plot_tree, under scikit-learn's display options (checked here, once per drawing).

    A box lists, line by line: the node id (``node_ids``), its test (binary nodes; the tested
    feature for a multiway node, whose branches label its edges), impurity (``impurity``),
    number of training samples, value and, for classifiers, the majority class. ``label``
    says which boxes name their fields (``gini = 0.5`` or ``0.5``): ``"all"``, ``"root"`` or
    ``"none"``. ``proportion``: samples as a percentage of the root's, class values as
    fractions. ``html``: the lines are Graphviz HTML-like text (``&le;``, subscripts, names
    escaped), for ``special_characters``.
    """

    def __init__(self, model, tree, feature_names=None, class_names=None, label="all",
                 impurity=True, node_ids=False, proportion=False, precision=3, html=False):
        self.tree = tree
        self.label = _check_label(label)
        self.impurity = _check_flag(impurity, "impurity")
        self.node_ids = _check_flag(node_ids, "node_ids")
        self.proportion = _check_flag(proportion, "proportion")
        self.precision = _check_precision(precision)
        self.html = html
        escape = _html_escape if html else str
        subscript = "{}<SUB>{}</SUB>" if html else "{}[{}]"
        self.names = _feature_names(model, tree, feature_names, subscript.format("x", "{}"))
        if feature_names is not None or getattr(model, "feature_names_in_", None) is not None:
            self.names = [escape(name) for name in self.names]
        self.categories = [None if labels is None else [escape(label) for label in labels]
                           for labels in _category_labels(model, tree)]
        self.columns = _output_columns(model, tree)
        # the class line: classifiers, unless class_names is False; True names each output's
        # class by its column, y[k]
        if isinstance(class_names, np.bool_):
            class_names = bool(class_names)
        self.show_class = bool(tree.n_classes) and class_names is not False
        if isinstance(class_names, (bool, np.bool_)):
            if class_names and not tree.n_classes:
                raise ValueError("class_names=True was given, but the model is a regression "
                                 "tree (it has no classes)")
            self.classes = [[subscript.format("y", k) for k in range(output.stop - output.start)]
                            for output in self.columns]
        else:
            labels = _class_labels(model, tree, class_names)
            self.classes = None if labels is None else \
                [[escape(str(label)) for label in names] for names in labels]
        self.impurity_name = _impurity_name(model, tree)
        self.marked = _missing_marked(model, tree)

    def number(self, value):
        return _format_number(value, self.precision)

    def lines(self, node):
        tree = self.tree
        named = self.label == "all" or (self.label == "root" and node == 0)

        def field(name, text):
            return f"{name} = {text}" if named else text

        lines = []
        if self.node_ids:
            lines.append(("node " if named else "") + ("&#35;" if self.html else "#")
                         + str(node))
        if tree.children_left[node] != TREE_LEAF:
            if tree.split_kind[node] == SPLIT_MULTIWAY:
                lines.append(self.names[tree.feature[node]])
            else:
                lines.append(self._operators(_branch_texts(
                    tree, node, self.names, self.categories, self.marked[node],
                    self.number)[0]))
        if self.impurity:
            lines.append(field(self.impurity_name, self.number(tree.impurity[node])))
        if self.proportion:
            share = 100.0 * tree.n_node_samples[node] / max(int(tree.n_node_samples[0]), 1)
            lines.append(field("samples", f"{share:.1f}%"))
        else:
            lines.append(field("samples", str(int(tree.n_node_samples[node]))))
        values = self._value_lines(node)
        lines += [field("value", values[0]), *values[1:]]
        if self.show_class:
            lines.append(field("class", _listed(
                _majority_labels(tree, node, self.columns, self.classes))))
        return lines

    def _value_lines(self, node):
        """The value field, scikit-learn's: a regressor's mean; a classifier's weighted class
        counts (fractions with ``proportion``) as ``[a, b]``; of several outputs, each output's
        on a line of its own, ``[[a, b]`` ... ``[c, d]]`` (a regressor's as ``[v]``)."""
        tree = self.tree
        if tree.n_classes and self.proportion:
            row = tree.cached("proba", tree.probability_table)[node]
        else:
            row = tree.value[node]
        if not tree.n_classes and tree.n_outputs == 1:
            return [self.number(row[0])]
        lines = ["[" + ", ".join(self.number(v) for v in row[output]) + "]"
                 for output in self.columns]
        if tree.n_outputs > 1:
            lines[0], lines[-1] = "[" + lines[0], lines[-1] + "]"
        return lines

    def edge_labels(self, node):
        """Labels of the edges to the children of ``node``: under a multiway node its branch
        tests without the feature name, which its box shows (``= sunny``, ``in {overcast,
        foggy}``); True/False under a binary root (its test holds: left); else None."""
        tree = self.tree
        if tree.split_kind[node] == SPLIT_MULTIWAY:
            name = self.names[tree.feature[node]]
            return [text[len(name) + 1:] for text in _branch_texts(
                tree, node, self.names, self.categories, self.marked[node], self.number)]
        if node == 0:
            return ["True", "False"]
        return [None, None]

    def _operators(self, text):
        # in HTML-like text every name is escaped, so a bare " <= " is the test's operator
        return text.replace(" <= ", " &le; ") if self.html else text


def _html_escape(text):
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


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


# hue of the first class, and of every node of a multi-output tree (scikit-learn's too)
_FIRST_HUE = 0.08
_REGRESSION_HUE = 0.58


def _fill_colors(tree):
    """A fill colour per node, "#rrggbb".

    Classifiers: the hue of the majority class, stronger the purer the node (white at the
    chance level 1/n_classes, full colour when pure). Regressors: one hue, stronger the larger
    the node's value relative to the other nodes. Multi-output trees (as scikit-learn's): the
    first class's hue, stronger the purer the node: white at the tree's largest impurity, full
    colour at its smallest.
    """
    if tree.n_outputs > 1:
        hue, strength = _purity_shades(tree)
    elif tree.n_classes:
        hue, strength = _majority_shades(tree)
    else:
        hue, strength = _value_shades(tree)
    strength = np.clip(strength, 0.0, 1.0)
    colors = []
    for node_hue, amount in zip(np.broadcast_to(hue, strength.shape), strength, strict=True):
        # saturation and value chosen so that black text stays readable on the full colour
        rgb = np.array(colorsys.hsv_to_rgb(node_hue, 0.55, 0.95))
        mixed = 1.0 - amount * (1.0 - rgb)
        colors.append("#" + "".join(f"{round(255 * c):02x}" for c in mixed))
    return colors


def _majority_shades(tree):
    """(hue, strength) per node of a single-output classifier: the majority class's hue, its
    fraction scaled from the chance level (0) to 1."""
    proba = tree.cached("proba", tree.probability_table)
    majority = np.argmax(proba, axis=1)
    chance = 1.0 / tree.n_classes
    top = proba.max(axis=1)
    strength = (top - chance) / (1.0 - chance) if tree.n_classes > 1 else \
        np.ones(tree.node_count)
    hues = (_FIRST_HUE + np.arange(tree.n_classes) / tree.n_classes) % 1.0
    return hues[majority], strength


def _scaled(values):
    """``values`` scaled from their smallest (0) to their largest (1); all 0 when equal."""
    spread = values.max() - values.min()
    return (values - values.min()) / spread if spread > 0 else np.zeros(values.shape[0])


def _value_shades(tree):
    """(hue, strength) per node of a single-output regressor: the node's value, scaled."""
    return _REGRESSION_HUE, _scaled(tree.value[:, 0])


def _purity_shades(tree):
    """(hue, strength) per node of a multi-output tree: its impurity, scaled and reversed."""
    return _FIRST_HUE, _scaled(-tree.impurity)


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


def _dot_label(lines, html):
    """A DOT label of ``lines``: HTML-like text ``<a<br/>b>`` or a quoted string."""
    return "<" + "<br/>".join(lines) + ">" if html else _dot_string(lines)


def export_graphviz(model, out_file=None, *, max_depth=None, feature_names=None,
                    class_names=None, label="all", filled=False, leaves_parallel=False,
                    impurity=True, node_ids=False, proportion=False, rotate=False,
                    rounded=False, special_characters=False, precision=3,
                    fontname="helvetica"):
    """The tree as Graphviz DOT source (render with ``dot -Tpng``, pydot or graphviz).

    scikit-learn's parameters, with its meaning. Every node is a box listing its test ``name
    <= threshold`` (binary nodes; see the module docstring for category tests and missing
    values), impurity, number of training samples, value (weighted class counts, or the mean
    target) and, for classifiers, the majority class; a multi-output tree's box shows each
    output's value on a line of its own and the class of each output, ``class = [a, b]``. A
    binary root's two edges are labelled True (the test holds: left) and False; the box of a
    multiway node names its feature and its edges carry the test of each branch (``= sunny``).

    Parameters
    ----------
    model : fitted DecisionTreeClassifier or DecisionTreeRegressor
    out_file : str, path or file object, optional
        Where to write the DOT source (a path is written in UTF-8); None: return it.
    max_depth : int, optional
        Draw nodes down to this depth (root 0); each deeper subtree becomes a "(...)" box.
    feature_names : sequence of str, optional
        Default ``model.feature_names_in_``, else ``x[0]``, ``x[1]``, ...
    class_names : sequence, True or False, optional
        Names of the classes in the order of ``model.classes_``; True: ``y[0]``, ``y[1]``,
        ...; False: no class line. Default: ``model.classes_`` (classifiers only). A
        multi-output classifier takes one sequence of names per output (True: each output's
        class by its column).
    label : {"all", "root", "none"}, default "all"
        Which boxes name their fields (``gini = 0.5``; else only ``0.5``).
    filled : bool, default False
        Colour the boxes by majority class (strength: purity) or by value (regressors); a
        multi-output tree's by impurity (as scikit-learn: one hue, full at the tree's
        smallest impurity, white at its largest).
    leaves_parallel : bool, default False
        Draw every leaf (and "(...)" box) on the bottom rank.
    impurity : bool, default True
        Show each node's impurity.
    node_ids : bool, default False
        Show each node's id (its index in the ``tree_`` arrays).
    proportion : bool, default False
        Samples as a percentage of the root's and class values as fractions.
    rotate : bool, default False
        Draw the tree left to right instead of top down.
    rounded : bool, default False
        Rounded boxes.
    special_characters : bool, default False
        Write the labels as Graphviz HTML-like text (``&le;``, ``x`` with a subscript index),
        names escaped.
    precision : int, default 3
        Decimals of thresholds, impurities and values (trailing zeros dropped).
    fontname : str, default "helvetica"
        Font of the boxes and edge labels.

    Returns
    -------
    str or None
        The DOT source when ``out_file`` is None.
    """
    tree = _fitted_tree(model)
    html = _check_flag(special_characters, "special_characters")
    boxes = _BoxText(model, tree, feature_names, class_names, label, impurity, node_ids,
                     proportion, precision, html)
    max_depth = _check_max_depth(max_depth)
    filled = _check_flag(filled, "filled")
    rounded = _check_flag(rounded, "rounded")
    rotate = _check_flag(rotate, "rotate")
    leaves_parallel = _check_flag(leaves_parallel, "leaves_parallel")
    if not isinstance(fontname, str):
        raise TypeError(f"fontname must be a str, got {fontname!r}")
    write = _output_writer(out_file)
    colors = _fill_colors(tree) if filled else None
    font = _dot_string([fontname])

    styles = (["filled"] if filled else []) + (["rounded"] if rounded else [])
    node_defaults = ["shape=box"]
    if styles:
        node_defaults += [f'style="{", ".join(styles)}"', 'color="black"']
    node_defaults.append(f"fontname={font}")
    out = ["digraph Tree {", f"node [{', '.join(node_defaults)}] ;"]
    if leaves_parallel:
        out.append("graph [ranksep=equally, splines=polyline] ;")
    out.append(f"edge [fontname={font}] ;")
    if rotate:
        out.append("rankdir=LR ;")
    edge_labels = {}
    ranks = {}  # depth of internal nodes, or "leaves", -> the ids of its boxes
    for node, parent, depth, rank, hidden in _walk(tree, max_depth):
        if hidden:
            node_id = f"hidden{node}"
            out.append(f'{node_id} [label="(...)", style="dashed"] ;')
        else:
            node_id = str(node)
            fill = f', fillcolor="{colors[node]}"' if filled else ""
            out.append(f"{node_id} [label={_dot_label(boxes.lines(node), html)}{fill}] ;")
        is_leaf = hidden or tree.children_left[node] == TREE_LEAF
        ranks.setdefault("leaves" if is_leaf else depth, []).append(node_id)
        if parent >= 0:
            if parent not in edge_labels:
                edge_labels[parent] = boxes.edge_labels(parent)
            text = edge_labels[parent][rank]
            edge_label = "" if text is None else f" [label={_dot_label([text], html)}]"
            out.append(f"{parent} -> {node_id}{edge_label} ;")
    if leaves_parallel:
        depths = sorted(key for key in ranks if key != "leaves")
        for key in [*depths, "leaves"]:
            if key in ranks:
                out.append("{rank=same ; " + "; ".join(ranks[key]) + "} ;")
    out.append("}")
    text = "\n".join(out) + "\n"
    if write is None:
        return text
    write(text)
    return None


def _output_writer(out_file):
    """None for ``out_file=None`` (the text is returned), else a function writing the text
    to the path or file object ``out_file``."""
    if out_file is None:
        return None
    if isinstance(out_file, (str, os.PathLike)):
        def write(text):
            with open(out_file, "w", encoding="utf-8") as file:
                file.write(text)
        return write
    if callable(getattr(out_file, "write", None)):
        return out_file.write
    hint = " (feature names are passed as feature_names=...)" \
        if isinstance(out_file, (list, tuple, np.ndarray)) else ""
    raise TypeError("out_file must be None, a path or a file object with a write method, "
                    f"got {type(out_file).__name__}{hint}")
