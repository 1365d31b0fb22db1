"""Text export of a fitted tree."""

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
