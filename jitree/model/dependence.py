"""Partial dependence and individual conditional expectation (ICE) of trees and forests.

:func:`partial_dependence` follows ``sklearn.inspection.partial_dependence``: the grid of each
target feature, the output layout (a dict-like with ``grid_values``, ``average`` of shape
(n_outputs, *grid_shape) and ``individual`` of shape (n_outputs, n_rows, *grid_shape)), and
n_outputs (1 for a regressor; a classifier's class probabilities, the positive class alone
for two classes). Where jitree differs:

- ``kind="average"`` walks the trees by the recursion method
  (:mod:`jitree.kernels.dependence`) for classifiers too (scikit-learn: regressors only);
- categorical and ordinal features are taken by category: their grid is every fitted
  category (``grid_values`` the categories themselves), and a category test or a missing
  value is routed as the trees route it;
- missing values (NaN) of X are left out of a numeric feature's grid (scikit-learn's would
  take NaN as one of the unique values); a NaN in a grid you give is routed as missing.

:func:`plot_partial_dependence` draws one result with matplotlib (the ``plot`` extra).
"""

import numbers

import numpy as np

from .._threading import n_threads
from ..kernels import dependence as _dependence
from .categories import FEATURE_NUMERIC
from .tree import SPLIT_THRESHOLD, TREE_LEAF, raise_infinite, read_only
from .validation import feature_names_of, fitted_trees

_KINDS = ("average", "individual", "both")
_METHODS = ("auto", "recursion", "brute")
# values of X (rows x features) predicted per ICE batch: 32 MB of float64
_ICE_BATCH_VALUES = 1 << 22
# scipy.stats.mstats.mquantiles' defaults (alphap, betap), which scikit-learn's grid uses
_ALPHAP = _BETAP = 0.4


class PartialDependence(dict):
    """The result of :func:`partial_dependence` (also readable as attributes).

    grid_values : list of ndarray
        The grid of each target feature (its categories for a categorical or ordinal one).
    average : ndarray of shape (n_outputs, *grid_shape)
        The partial dependence (``kind`` "average" or "both").
    individual : ndarray of shape (n_outputs, n_rows, *grid_shape)
        The ICE curves, one per row of X (``kind`` "individual" or "both").
    features : tuple of int
        The target features' columns.
    feature_names : list of str
        Their names (the fitted names, else ``x<column>``).
    is_categorical : list of bool
        Whether each is taken by category (categorical or ordinal).
    output_names : list
        The label of each output: the class of each probability, or ``"prediction"``.
    """

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def _fitted_parts(model):
    """(is_forest, is_classifier) of a fitted jitree tree or forest; TypeError for anything
    else, NotFittedError when not fitted."""
    estimators, is_classifier = fitted_trees(model, "partial_dependence")
    return estimators[0] is not model, is_classifier


def _check_options(grid_resolution, percentiles, kind, method):
    if isinstance(grid_resolution, (bool, np.bool_)) \
            or not isinstance(grid_resolution, numbers.Integral):
        raise TypeError(f"grid_resolution must be an int, got {grid_resolution!r}")
    if grid_resolution < 2:
        raise ValueError(f"grid_resolution must be at least 2, got {grid_resolution}")
    if isinstance(percentiles, (str, bytes)) or not hasattr(percentiles, "__len__") \
            or len(percentiles) != 2:
        raise ValueError(f"percentiles must be a pair (low, high), got {percentiles!r}")
    low, high = percentiles
    for value in (low, high):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise TypeError(f"percentiles must be numbers in [0, 1], got {percentiles!r}")
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"percentiles must be in [0, 1], got {percentiles!r}")
    if not low < high:
        raise ValueError(f"percentiles must be increasing (low < high), got {percentiles!r}")
    if not isinstance(kind, str) or kind not in _KINDS:
        raise ValueError(f"kind must be 'average', 'individual' or 'both', got {kind!r}")
    if not isinstance(method, str) or method not in _METHODS:
        raise ValueError(f"method must be 'auto', 'recursion' or 'brute', got {method!r}")
    if method == "recursion" and kind != "average":
        raise ValueError(f"method='recursion' computes the average only; kind={kind!r} "
                         "needs method='brute' (or 'auto')")
    return int(grid_resolution), (float(low), float(high))


def _resolve_features(features, n_features, names):
    """The target features as a tuple of one or two column indices."""
    if isinstance(features, (str, numbers.Integral)):
        features = (features,)
    elif isinstance(features, (list, tuple, np.ndarray)):
        features = tuple(np.asarray(features, dtype=object).reshape(-1).tolist()) \
            if isinstance(features, np.ndarray) else tuple(features)
    else:
        raise TypeError("features must be a feature (index or name) or a pair of features, "
                        f"got {features!r}")
    if not 1 <= len(features) <= 2:
        raise ValueError("features must be one feature or a pair of features (two-way "
                         f"partial dependence), got {len(features)}: {features!r}")
    columns = []
    for feature in features:
        if isinstance(feature, (bool, np.bool_)):
            raise TypeError(f"a feature must be an int index or a name, got {feature!r}")
        if isinstance(feature, numbers.Integral):
            if not 0 <= feature < n_features:
                raise ValueError(f"feature index {feature} is out of range: the model has "
                                 f"{n_features} features (0 .. {n_features - 1})")
            columns.append(int(feature))
        elif isinstance(feature, str):
            if names is None:
                raise ValueError(f"feature {feature!r} is a name, but the model was fitted "
                                 "without feature names and X has none: pass an index")
            matches = np.flatnonzero(np.asarray(names, dtype=object) == feature)
            if not matches.shape[0]:
                raise ValueError(f"unknown feature name {feature!r}; the features are "
                                 f"{list(names)}")
            columns.append(int(matches[0]))
        else:
            raise TypeError(f"a feature must be an int index or a name, got {feature!r}")
    if len(columns) == 2 and columns[0] == columns[1]:
        raise ValueError(f"the two features of a pair must differ, got {features!r}")
    return tuple(columns)


def _order_statistics(values, k):
    """The (k - 1)-th and k-th smallest of ``values`` (0-based, 1 <= k < n), which are
    partitioned at k in place: a linear pass instead of a sort."""
    values.partition(k)
    return values[:k].max(), values[k]


def _mquantiles(values, probabilities):
    """``scipy.stats.mstats.mquantiles`` (alphap = betap = 0.4) of finite values at two
    increasing probabilities, as scikit-learn's grid takes them; ``values`` (a scratch
    copy) is reordered."""
    n = values.shape[0]
    if n == 1:
        return np.full(2, values[0], dtype=np.float64)
    ends = []
    ranks = []
    for p in probabilities:
        aleph = n * p + (_ALPHAP + p * (1.0 - _ALPHAP - _BETAP))
        k = int(np.floor(min(max(aleph, 1.0), n - 1.0)))
        ranks.append((k, min(max(aleph - k, 0.0), 1.0)))
    k_high = ranks[1][0]
    below_high, high = _order_statistics(values, k_high)
    for k, gamma in ranks:
        if k == k_high:
            below, at = below_high, high
        else:  # the k_high smallest values hold the k-th
            below, at = _order_statistics(values[:k_high], k)
        ends.append((1.0 - gamma) * below + gamma * at)
    return np.array(ends, dtype=np.float64)


def _category_grid(custom, categories, n_categories, label):
    """(codes, grid values) of a categorical or ordinal feature: every fitted category, or
    the categories in ``custom``."""
    known = np.arange(n_categories) if categories is None else np.asarray(categories)
    if custom is None:
        return np.arange(n_categories, dtype=np.float64), known
    custom = np.asarray(custom, dtype=object if known.dtype == object else None)
    if custom.ndim != 1 or custom.shape[0] == 0:
        raise ValueError(f"the grid of feature {label} must be a non-empty 1-D sequence")
    listed = known.tolist()
    codes = np.empty(custom.shape[0], dtype=np.float64)
    for i, value in enumerate(custom.tolist()):
        matches = [k for k, category in enumerate(listed) if category == value]
        if not matches:
            raise ValueError(f"grid value {value!r} is not a category of feature {label}; its "
                             f"categories are {listed}")
        codes[i] = matches[0]
    return codes, custom


def _numeric_grid(column, custom, grid_resolution, percentiles, label):
    """(grid, grid values) of a numeric feature: scikit-learn's (the unique values when
    fewer than ``grid_resolution``, else evenly spaced between the percentiles), NaN left
    out; or ``custom``."""
    if custom is not None:
        try:
            values = np.asarray(custom, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"the grid of numeric feature {label} must hold numbers") from None
        if values.ndim != 1 or values.shape[0] == 0:
            raise ValueError(f"the grid of feature {label} must be a non-empty 1-D sequence")
        if np.isinf(values).any():
            raise ValueError(f"the grid of feature {label} holds infinity")
        return values, values
    finite = np.array(column, dtype=np.float64)  # a contiguous copy, reordered below
    missing = np.isnan(finite)
    if missing.any():
        finite = finite[~missing]
    # X enters the recursion only through its grid columns, checked here (the predictions
    # of ICE check the whole of X; a categorical column's codes are finite)
    if np.isinf(finite).any():
        raise_infinite(column, "X")
    if not finite.shape[0]:
        raise ValueError(f"feature {label} has only missing values in X: no grid to build; "
                         "pass one with grid=")
    if _dependence.distinct_count(finite, grid_resolution) < grid_resolution:
        uniques = np.unique(finite)
        return uniques, uniques
    low, high = _mquantiles(finite, percentiles)
    if abs(high - low) <= 1e-8 + 1e-5 * abs(high):  # np.allclose(low, high), as scikit-learn
        raise ValueError(f"the percentiles {percentiles} of feature {label} are too close to "
                         "each other to build a grid; choose percentiles further apart")
    values = np.linspace(low, high, num=grid_resolution, endpoint=True)
    return values, values


def _custom_grids(grid, n_targets):
    """The grid given for each target feature (None: built from X)."""
    if grid is None:
        return [None] * n_targets
    if n_targets == 1:
        return [grid]
    if isinstance(grid, (str, bytes)) or not hasattr(grid, "__len__") or len(grid) != 2:
        raise ValueError("for a pair of features, grid must be a pair of 1-D sequences (None "
                         "for a grid built from X)")
    return list(grid)


# trees per parallel task of the sweep: fixed, so that the sums do not depend on n_jobs
_TREES_PER_BLOCK = 4
# models of up to 4 x 64 features keep the features tested under each node (32 bytes per
# node); those of more find the nodes above the target features' tests at each call
_MAX_FEATURE_WORDS = 4


def _breadth_first(walk, roots, table, weight, trees):
    """The nodes renumbered level by level within each tree (by depth, then by their
    number): the nodes above the target features' tests, which the walks visit, then lie
    at the start of each tree's stretch of memory instead of spread over it (a depth-first
    numbering, scikit-learn's): ~10% faster walks on a 100-tree depth-10 forest. Children
    stay after their parent and a multiway node's children consecutive."""
    depth = np.concatenate([tree.depth for tree in trees])
    tree_of = np.repeat(np.arange(len(trees)), [tree.node_count for tree in trees])
    order = np.lexsort((np.arange(depth.shape[0]), depth, tree_of))  # new number -> old
    if np.array_equal(order, np.arange(order.shape[0])):
        return walk, table, weight
    renumber = np.empty_like(order)
    renumber[order] = np.arange(order.shape[0])
    arrays = {}
    for name in ("children_left", "children_right"):
        children = getattr(walk, name)[order]
        arrays[name] = np.where(children >= 0, renumber[np.maximum(children, 0)],
                                children).astype(children.dtype)
    for name in ("feature", "threshold", "split_kind", "missing_left", "category_offset"):
        arrays[name] = getattr(walk, name)[order]
    walk = walk._replace(**{name: read_only(np.ascontiguousarray(array))[0]
                            for name, array in arrays.items()})
    return walk, table[order], weight[order]


class _Layout:
    """What the recursion reads of a model, built once per model: the trees' arrays (a
    TreeWalk, concatenated for a forest), their roots, the nodes packed for the walks
    (:class:`jitree.kernels.dependence.PackedNodes`: shares of the parent's weight and
    subtree means from :func:`~jitree.kernels.dependence.node_shares`, and for models of at
    most 256 features the features tested under each node), the largest tree's node count,
    the number of trees and the features some tree tests other than by a threshold."""

    def __init__(self, model, is_forest, is_classifier):
        walk, roots, table = model._node_layout()
        trees = ([estimator.tree_ for estimator in model.estimators_] if is_forest
                 else [model.tree_])
        table = np.array(table, dtype=np.float64, order="C")
        weight = np.concatenate([tree.weighted_n_node_samples for tree in trees])
        walk, table, weight = _breadth_first(walk, roots, table, weight, trees)
        n_nodes, width = table.shape
        fraction = np.empty(n_nodes)
        mean = np.empty((n_nodes, width))
        _dependence.node_shares(walk, weight, table, fraction, mean)
        self.walk = walk
        self.roots = np.array(roots, dtype=np.int64)  # its own: the same flags for all
        self.n_features = trees[0].n_features
        n_words = -(-self.n_features // 64)
        self.per_call = n_words > _MAX_FEATURE_WORDS
        reals = np.empty((n_nodes, _dependence.MEAN + width + (1 if self.per_call
                                                              else n_words)))
        links = reals.view(np.int64)
        for column, array in ((_dependence.LEFT, walk.children_left),
                              (_dependence.RIGHT, walk.children_right),
                              (_dependence.FEATURE, walk.feature),
                              (_dependence.KIND, walk.split_kind)):
            links[:, column] = array
        reals[:, _dependence.THRESHOLD] = walk.threshold
        reals[:, _dependence.FRACTION] = fraction
        reals[:, _dependence.MEAN:_dependence.MEAN + width] = mean
        if not self.per_call:
            features = np.arange(self.n_features)
            below = np.empty((n_nodes, n_words), dtype=np.uint64)
            _dependence.features_below(walk, self.roots, features // 64,
                                       np.left_shift(np.uint64(1),
                                                     (features % 64).astype(np.uint64)),
                                       below)
            reals.view(np.uint64)[:, _dependence.MEAN + width:] = below
        self.reals, self.width = reals, width
        self.stack_size = max(tree.node_count for tree in trees)
        self.n_trees = len(trees)
        internal = walk.children_left != TREE_LEAF
        self.category_tested = set(
            np.unique(walk.feature[internal & (walk.split_kind != SPLIT_THRESHOLD)]).tolist())

    def nodes(self, target_slot):
        """The PackedNodes of a call: the layout's own, or for a model of many features a
        copy with one bit per node, set when its subtree tests a target feature."""
        reals = self.reals
        if self.per_call:
            below = np.empty((reals.shape[0], 1), dtype=np.uint64)
            _dependence.features_below(self.walk, self.roots,
                                       np.zeros(target_slot.shape[0], dtype=np.int64),
                                       (target_slot >= 0).astype(np.uint64), below)
            reals = reals.copy()
            reals.view(np.uint64)[:, _dependence.MEAN + self.width] = below[:, 0]
        return _dependence.PackedNodes(reals, reals.view(np.int64), reals.view(np.uint64),
                                       self.width)

    def targets(self, target_slot, features):
        if self.per_call:
            return _dependence.Targets(target_slot, np.zeros_like(features),
                                       np.ones(features.shape[0], dtype=np.uint64))
        return _dependence.Targets(target_slot, features // 64,
                                   np.left_shift(np.uint64(1),
                                                 (features % 64).astype(np.uint64)))

    @classmethod
    def of(cls, model, is_forest, is_classifier):
        if is_forest:  # the forest's layouts are reset by a fit and follow its estimators_
            layouts = model._cached_layouts()
            layout = layouts.get("dependence")
            if layout is None:
                layout = layouts["dependence"] = cls(model, True, is_classifier)
            return layout
        return model.tree_.cached(("dependence", is_classifier),
                                  lambda: cls(model, False, is_classifier))


def _grid_points(axes):
    """The grid's points, one row each, in C order of ``axes[0] x axes[1] ...``."""
    return np.ascontiguousarray(
        np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, len(axes)))


def _recursion(model, is_forest, is_classifier, axes, features, n_features):
    """Partial dependence of every column of the model's node table at the grid
    ``axes[0] x axes[1] ...``, shape (n_points, width), points in the grid's C order."""
    layout = _Layout.of(model, is_forest, is_classifier)
    features = np.array(features, dtype=np.int64)
    target_slot = np.full(n_features, -1, dtype=np.int64)
    target_slot[features] = np.arange(features.shape[0])
    width = layout.width
    sweep = not any(np.isnan(axis).any() for axis in axes) and \
        not layout.category_tested.intersection(features.tolist())
    targets = layout.targets(target_slot, features)
    with n_threads(model.n_jobs):
        nodes = layout.nodes(target_slot)
        if sweep:
            # the grids built from X are increasing already; a grid given may not be
            orders = [None if (axis[1:] >= axis[:-1]).all()
                      else np.argsort(axis, kind="stable") for axis in axes]
            shape = [axis.shape[0] for axis in axes] + [1] * (2 - len(axes))
            sorted_axes = np.zeros((2, max(shape)))
            for s, (axis, order) in enumerate(zip(axes, orders, strict=True)):
                sorted_axes[s, :axis.shape[0]] = axis if order is None else axis[order]
            n_blocks = -(-layout.n_trees // _TREES_PER_BLOCK)
            blocks = np.empty((n_blocks, shape[0], shape[1], width))
            _dependence.sweep_partial_dependence(sorted_axes, targets, nodes, layout.roots,
                                                 layout.stack_size, _TREES_PER_BLOCK, blocks)
            out = blocks.sum(axis=0)
            # back to the grid's own order
            for s, order in enumerate(orders):
                if order is not None:
                    out = np.take(out, np.argsort(order), axis=s)
            out = out.reshape(-1, width)
        else:
            points = _grid_points(axes)
            out = np.empty((points.shape[0], width))
            _dependence.recursion_partial_dependence(points, targets, layout.walk,
                                                     layout.roots, nodes, layout.stack_size,
                                                     out)
    out /= layout.n_trees
    return out


def _individual(model, is_classifier, X, points, features):
    """(n_rows, n_points, width) predictions of X with the target features set to each grid
    point (brute force, the model's own prediction in batches of grid points)."""
    if is_classifier:
        predict = model._predict_proba_validated
    else:
        def predict(rows):
            return model._predict_validated(rows)[:, None]
    n_rows, n_features = X.shape
    # float64: a grid value is compared as the recursion compares it, not rounded to float32
    X = np.ascontiguousarray(X, dtype=np.float64)
    per_batch = max(1, _ICE_BATCH_VALUES // (n_rows * n_features))
    out = None
    for start in range(0, points.shape[0], per_batch):
        stop = min(points.shape[0], start + per_batch)
        rows = np.tile(X, (stop - start, 1))
        for j, feature in enumerate(features):
            rows[:, feature] = np.repeat(points[start:stop, j], n_rows)
        predicted = predict(rows)
        if out is None:
            out = np.empty((n_rows, points.shape[0], predicted.shape[1]))
        out[:, start:stop, :] = predicted.reshape(stop - start, n_rows, -1).transpose(1, 0, 2)
    return out


def partial_dependence(model, X, features, grid=None, grid_resolution=100,
                       percentiles=(0.05, 0.95), kind="average", method="auto"):
    """Partial dependence and individual conditional expectation (ICE) of one feature or a
    pair of features, for a fitted jitree tree or forest.

    Parameters
    ----------
    model : fitted DecisionTreeClassifier, DecisionTreeRegressor, RandomForestClassifier,
        RandomForestRegressor, ExtraTreesClassifier or ExtraTreesRegressor
    X : array-like or DataFrame of shape (n_rows, n_features)
        The rows whose values of the target features make the grid (numeric features), and
        whose ICE curves are computed (``kind`` "individual" or "both"). Categorical columns
        as the model takes them; NaN is a missing value.
    features : int, str or a pair of them
        The target feature (column index or fitted name), or a pair of them for the two-way
        partial dependence.
    grid : 1-D array-like, or a pair of them (None entries built from X), default=None
        The values of the target feature(s) at which to evaluate; for a categorical or
        ordinal feature, categories of ``categories_``.
    grid_resolution : int >= 2, default=100
        Points of a numeric feature's grid built from X: evenly spaced between the
        ``percentiles`` of its values in X, or its unique values when fewer.
    percentiles : (low, high) in [0, 1], low < high, default=(0.05, 0.95)
        The ends of a numeric feature's grid (scipy's ``mquantiles``, as scikit-learn).
    kind : {"average", "individual", "both"}, default="average"
        "average": the partial dependence; "individual": the ICE curve of every row of X;
        "both": both, the average then the mean of the ICE curves (as scikit-learn).
    method : {"auto", "recursion", "brute"}, default="auto"
        How ``average`` is computed: "recursion" (the weighted traversal of the trees, from
        their training weights: X serves only for the grid) or "brute" (the mean over the
        rows of X of the model's predictions with the target features set). "auto":
        "recursion" for ``kind="average"``, else "brute".

    Returns
    -------
    PartialDependence
        A dict (also readable as attributes) with ``grid_values``, ``average`` of shape
        ``(n_outputs, *grid_shape)`` and/or ``individual`` of shape ``(n_outputs, n_rows,
        *grid_shape)``, where ``grid_shape`` holds the length of each feature's grid, and the
        ``features``, ``feature_names``, ``is_categorical`` and ``output_names`` described in
        :class:`PartialDependence`. n_outputs is 1 for a regressor and for a classifier of two
        classes (the probability of ``classes_[1]``), else one per class (probabilities).

    Raises
    ------
    TypeError
        ``model`` is not a jitree tree or forest; a feature is neither an int nor a str.
    NotFittedError
        (a ValueError) ``model`` is not fitted.
    ValueError
        A feature index out of range or an unknown name, more than two features, a bad
        ``grid_resolution``, ``percentiles``, ``kind`` or ``method``, a grid value that is
        not a category, X that does not match the model.
    """
    is_forest, is_classifier = _fitted_parts(model)
    grid_resolution, percentiles = _check_options(grid_resolution, percentiles, kind, method)
    X_encoded = model._validate_predict_X(X)
    n_features = X_encoded.shape[1]
    names = getattr(model, "feature_names_in_", None)
    if names is None:
        names = feature_names_of(X)
    columns = _resolve_features(features, n_features, names)
    encoder = model._feature_encoder()
    feature_kind = np.asarray(encoder.feature_kind_)
    axes, grid_values, categorical, labels = [], [], [], []
    for feature, custom in zip(columns, _custom_grids(grid, len(columns)), strict=True):
        label = repr(names[feature]) if names is not None else str(feature)
        by_category = feature_kind[feature] != FEATURE_NUMERIC
        if by_category:
            axis, values = _category_grid(custom, encoder.categories_[feature],
                                          int(encoder.n_categories_[feature]), label)
        else:
            axis, values = _numeric_grid(X_encoded[:, feature], custom, grid_resolution,
                                         percentiles, label)
        axes.append(axis)
        grid_values.append(values)
        categorical.append(bool(by_category))
        labels.append(str(names[feature]) if names is not None else f"x{feature}")
    grid_shape = tuple(axis.shape[0] for axis in axes)

    if is_classifier:
        n_classes = len(model.classes_)
        outputs = [1] if n_classes == 2 else list(range(n_classes))
        output_names = [model.classes_[k] for k in outputs]
    else:
        outputs = [0]
        output_names = ["prediction"]
    result = PartialDependence(grid_values=grid_values, features=columns,
                               feature_names=labels, is_categorical=categorical,
                               output_names=output_names)
    brute = method == "brute" or (method == "auto" and kind != "average")
    if brute:
        individual = _individual(model, is_classifier, X_encoded, _grid_points(axes), columns)
        individual = individual[:, :, outputs]  # (n_rows, n_points, n_outputs)
        if kind != "average":
            result["individual"] = np.ascontiguousarray(
                individual.transpose(2, 0, 1)).reshape(len(outputs), -1, *grid_shape)
        if kind != "individual":
            result["average"] = np.ascontiguousarray(
                individual.mean(axis=0).T).reshape(len(outputs), *grid_shape)
    else:
        average = _recursion(model, is_forest, is_classifier, axes, columns, n_features)
        result["average"] = np.ascontiguousarray(
            average[:, outputs].T).reshape(len(outputs), *grid_shape)
    return result


def _pyplot():
    """matplotlib.pyplot, imported here only (matplotlib is an optional dependency)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ImportError("plot_partial_dependence needs matplotlib: pip install "
                          "'jitree[plot]'") from None
    import matplotlib.pyplot as plt

    return plt


def _output_index(result, target):
    names = result["output_names"]
    if target is None:
        return 0
    if isinstance(target, numbers.Integral) and not isinstance(target, (bool, np.bool_)) \
            and 0 <= target < len(names) and target not in names:
        return int(target)
    matches = [k for k, name in enumerate(names) if name == target]
    if not matches:
        raise ValueError(f"target {target!r} is not one of the outputs {names} (or an index "
                         "into them)")
    return matches[0]


def _tick_labels(values):
    return [str(value) for value in np.asarray(values).tolist()]


def plot_partial_dependence(result, X=None, features=None, *, target=None, ax=None,
                            max_ice_lines=100, **options):
    """Draw a partial dependence and its ICE curves with matplotlib (the ``plot`` extra).

    Parameters
    ----------
    result : PartialDependence or a fitted jitree tree or forest
        A result of :func:`partial_dependence`, or a model: it is then computed on ``X``
        and ``features`` with ``options`` (``kind``, ``grid``, ``grid_resolution``, ...).
    X, features : see :func:`partial_dependence`
        Only with a model.
    target : int or class label, default=None
        The output to draw: an index into ``result.output_names`` or one of them (a
        class); None: the first.
    ax : matplotlib Axes, default=None
        Where to draw (None: a new figure).
    max_ice_lines : int, default=100
        ICE curves drawn at most (the first rows of X), behind the average.
    **options
        Passed to :func:`partial_dependence` with a model.

    Returns
    -------
    ax : matplotlib Axes
        One feature: the average as a line over a numeric grid (the ICE curves in thin
        lines), as bars over categories; a pair: the average as filled contours over two
        numeric grids, as an image otherwise, with a colour bar.
    """
    if not isinstance(result, PartialDependence):
        if X is None or features is None:
            raise TypeError("plot_partial_dependence takes a partial_dependence result, or "
                            "a fitted model with X and features")
        result = partial_dependence(result, X, features, **options)
    elif X is not None or features is not None or options:
        raise TypeError("X, features and partial_dependence options go with a model, not "
                        "with a computed result")
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots()
    k = _output_index(result, target)
    average = result["average"][k] if "average" in result \
        else result["individual"][k].mean(axis=0)
    individual = result["individual"][k] if "individual" in result else None
    values = result["grid_values"]
    names = result["feature_names"]
    categorical = result["is_categorical"]
    label = "partial dependence" if len(result["output_names"]) == 1 and \
        result["output_names"][0] == "prediction" else f"P({result['output_names'][k]})"
    if len(values) == 1:
        position = np.arange(len(values[0])) if categorical[0] else values[0]
        if individual is not None:
            for curve in individual[:max_ice_lines]:
                ax.plot(position, curve, color="tab:blue", alpha=0.2, linewidth=0.5)
        if categorical[0]:
            ax.bar(position, average, color="tab:orange", alpha=0.8, label="average")
            ax.set_xticks(position)
            ax.set_xticklabels(_tick_labels(values[0]))
        else:
            ax.plot(position, average, color="tab:orange", linewidth=2.0, label="average")
        ax.set_xlabel(names[0])
        ax.set_ylabel(label)
        return ax
    if not any(categorical):
        image = ax.contourf(values[0], values[1], average.T, levels=12)
    else:
        image = ax.imshow(average.T, origin="lower", aspect="auto")
        for axis, j in ((ax.xaxis, 0), (ax.yaxis, 1)):
            positions = np.arange(len(values[j]))
            if not categorical[j] and len(positions) > 6:
                positions = np.linspace(0, len(values[j]) - 1, 6).round().astype(int)
            axis.set_ticks(positions)
            axis.set_ticklabels(_tick_labels(np.asarray(values[j])[positions]) if
                                categorical[j] else
                                [f"{value:.3g}" for value in np.asarray(values[j])[positions]])
    ax.figure.colorbar(image, ax=ax, label=label)
    ax.set_xlabel(names[0])
    ax.set_ylabel(names[1])
    return ax
