"""Drawing a fitted tree with matplotlib (the ``plot`` extra)."""

import numpy as np

from .export import (
    MISSING_MARK,
    _BoxText,
    _check_flag,
    _check_max_depth,
    _fill_colors,
    _fitted_tree,
    _walk,
)

# Boxes may fill this much of the room between neighbours, leaving a visible gap
_WIDTH_SHARE = 0.92
_HEIGHT_SHARE = 0.72
_LARGEST_AUTO_FONTSIZE = 14.0
_BOX_PAD = 0.35  # box padding around the text, as a fraction of the font size


def _layout(boxes):
    """x, y of each box: leaves (and placeholders) at successive x = 0, 1, 2, ... in
    depth-first order, a parent midway between its children; y = -depth."""
    children = {}
    for index, (_, parent_index, _, _, _) in enumerate(boxes):
        if parent_index >= 0:
            children.setdefault(parent_index, []).append(index)
    x = np.zeros(len(boxes))
    y = np.array([-float(depth) for _, _, depth, _, _ in boxes])
    next_leaf = 0
    for index in range(len(boxes)):  # depth-first order: leaves come left to right
        if index not in children:
            x[index] = next_leaf
            next_leaf += 1
    for index in reversed(range(len(boxes))):  # children come after their parent
        if index in children:
            x[index] = np.mean(x[children[index]])
    return x, y


def _fit_fontsize(ax, texts, x, y, fontsize):
    """The largest font size (at most _LARGEST_AUTO_FONTSIZE) at which no two boxes of one
    depth overlap, no box leaves the axes and boxes of successive depths keep a gap.

    Text extents are measured at ``fontsize`` and scale linearly with it.
    """
    figure = ax.figure
    to_pixels = figure.dpi / 72.0
    pad = 2.0 * _BOX_PAD * fontsize * to_pixels
    widths = np.array([t.get_window_extent().width for t in texts]) + pad
    heights = np.array([t.get_window_extent().height for t in texts]) + pad
    axes_box = ax.get_window_extent()
    x_low, x_high = ax.get_xlim()
    y_low, y_high = ax.get_ylim()
    unit_x = axes_box.width / (x_high - x_low)  # pixels per leaf slot
    unit_y = axes_box.height / (y_high - y_low)  # pixels per depth level

    scale = _HEIGHT_SHARE * unit_y / heights.max()
    for depth in np.unique(y):
        level = np.flatnonzero(y == depth)
        level = level[np.argsort(x[level])]
        # half-widths of neighbours together within the distance of their centres
        gaps = np.diff(x[level]) * unit_x
        needed = (widths[level][:-1] + widths[level][1:]) / 2.0
        if gaps.size:
            scale = min(scale, _WIDTH_SHARE * float(np.min(gaps / needed)))
        # and every box inside the axes
        room = np.minimum(x[level] - x_low, x_high - x[level]) * unit_x
        scale = min(scale, float(np.min(2.0 * room / widths[level])))
    return min(fontsize * scale, _LARGEST_AUTO_FONTSIZE)


def plot_tree(model, ax=None, *, max_depth=None, feature_names=None, class_names=None,
              label="all", filled=False, impurity=True, node_ids=False, proportion=False,
              rounded=False, precision=3, fontsize=None):
    """Draw a fitted tree on a matplotlib Axes; returns the box Text artists.

    scikit-learn's parameters, with its meaning. Nodes are laid out by depth (root on top)
    and by the left-to-right order of the leaves, each parent centred over its children; each
    box shows what :func:`jitree.export_graphviz` shows, a binary root's edges are labelled
    True (the test holds: left) and False, and a multiway node's edges carry the test of each
    branch. Needs matplotlib (``pip install 'jitree[plot]'``).

    Parameters
    ----------
    model : fitted DecisionTreeClassifier or DecisionTreeRegressor
    ax : matplotlib Axes, optional
        Default: the current Axes (``pyplot.gca()``). What it held is cleared. Its size should
        be final: the font size is chosen for it.
    max_depth : int, optional
        Draw nodes down to this depth (root 0); each deeper subtree becomes a "(...)" box.
    feature_names, class_names, label, impurity, node_ids, proportion, precision
        As in :func:`jitree.export_graphviz`.
    filled : bool, default False
        Colour the boxes by majority class (strength: purity) or by value (regressors); a
        multi-output tree's by impurity, as :func:`jitree.export_graphviz`.
    rounded : bool, default False
        Rounded boxes (square ones otherwise).
    fontsize : float, optional
        Default: the largest size (up to 14) at which boxes neither overlap nor leave the
        axes. Large trees get small text: pass ``max_depth`` or draw on a larger figure.

    Returns
    -------
    list of matplotlib.text.Text
        One per box, depth-first with left children first ("(...)" boxes included).
    """
    tree = _fitted_tree(model)
    boxes_text = _BoxText(model, tree, feature_names, class_names, label, impurity, node_ids,
                          proportion, precision)
    max_depth = _check_max_depth(max_depth)
    filled = _check_flag(filled, "filled")
    box_style = "round" if _check_flag(rounded, "rounded") else "square"
    if fontsize is not None and (isinstance(fontsize, bool) or not isinstance(
            fontsize, (int, float, np.integer, np.floating)) or not fontsize > 0):
        raise ValueError(f"fontsize must be None or a positive number, got {fontsize!r}")
    try:
        import matplotlib  # noqa: F401  (an optional dependency: checked here, not at import)
    except ImportError:
        raise ImportError("plot_tree needs matplotlib: pip install 'jitree[plot]'") from None
    if ax is None:
        import matplotlib.pyplot as plt

        ax = plt.gca()
    ax.clear()

    colors = _fill_colors(tree) if filled else None
    # boxes[i] = (node, index of the parent box or -1, depth, rank among the siblings, hidden)
    boxes, index_of_node = [], {}
    for node, parent, depth, rank, hidden in _walk(tree, max_depth):
        index_of_node[node] = len(boxes)
        boxes.append((node, index_of_node.get(parent, -1), depth, rank, hidden))
    x, y = _layout(boxes)

    ax.set_xlim(float(x.min()) - 0.5, float(x.max()) + 0.5)
    ax.set_ylim(float(y.min()) - 0.5, 0.5)
    ax.set_axis_off()

    measure_size = 10.0 if fontsize is None else float(fontsize)
    texts = []
    for index, (node, _, _, _, hidden) in enumerate(boxes):
        if hidden:
            text, face, line_style = "(...)", "white", "--"
        else:
            text = "\n".join(boxes_text.lines(node))
            face, line_style = (colors[node] if filled else "white"), "-"
        texts.append(ax.text(
            x[index], y[index], text, ha="center", va="center", fontsize=measure_size,
            parse_math=False,  # a "$" in a name is a dollar sign, not TeX
            zorder=3, bbox={"boxstyle": f"{box_style},pad={_BOX_PAD}", "facecolor": face,
                            "edgecolor": "black", "linestyle": line_style}))
    if fontsize is None:
        best = _fit_fontsize(ax, texts, x, y, measure_size)
        for text in texts:
            text.set_fontsize(best)
    else:
        best = float(fontsize)

    # edges centre to centre, under the opaque boxes, so that they seem to join the borders
    edge_labels, sibling_labels = {}, {}
    for index, (_, parent_index, _, rank, _) in enumerate(boxes):
        if parent_index < 0:
            continue
        ax.plot([x[parent_index], x[index]], [y[parent_index], y[index]], color="black",
                linewidth=0.8, zorder=1)
        parent = boxes[parent_index][0]
        if parent not in edge_labels:
            edge_labels[parent] = boxes_text.edge_labels(parent)
        label = edge_labels[parent][rank]
        if label is not None:
            label = label.replace(MISSING_MARK, "\n" + MISSING_MARK.strip())  # narrower
            sibling_labels.setdefault(parent, []).append(ax.text(
                (x[parent_index] + x[index]) / 2.0, (y[parent_index] + y[index]) / 2.0, label,
                ha="center", va="center", fontsize=0.85 * best, zorder=2, parse_math=False,
                bbox={"boxstyle": "round,pad=0.15", "facecolor": "white",
                      "edgecolor": "none"}))
    for labels_of_node in sibling_labels.values():
        _shrink_to_fit(labels_of_node)
    return texts


def _shrink_to_fit(labels):
    """Scale the font of the edge labels of one node (left to right) down until neighbours no
    longer overlap: a multiway node's labels sit at half the spacing of its children."""
    if len(labels) < 2:
        return
    extents = [label.get_window_extent() for label in labels]
    centres = np.array([(extent.x0 + extent.x1) / 2.0 for extent in extents])
    widths = np.array([extent.width for extent in extents])
    needed = (widths[:-1] + widths[1:]) / 2.0
    scale = min(1.0, _WIDTH_SHARE * float(np.min(np.diff(centres) / needed)))
    for label in labels:
        label.set_fontsize(label.get_fontsize() * scale)
