"""Conversion of fitted scikit-learn trees into jitree estimators.

:func:`from_sklearn` copies the node arrays of a fitted ``sklearn.tree.DecisionTreeClassifier``
or ``DecisionTreeRegressor`` (or a subclass such as ``ExtraTreeClassifier``) into a
:class:`jitree.Tree` with the same node numbering, so ``apply`` returns the same leaf ids and
``predict`` the same values. scikit-learn is never imported here: the estimator's module is
already loaded if the user holds one of its trees.

Thresholds
----------
scikit-learn converts X to float32 before walking a tree, then tests ``float32(x) <= t`` with a
float64 ``t``; jitree compares X in its own dtype. The converted tree therefore holds, for each
threshold ``t``, the float64 value ``v`` for which ``x <= v`` exactly when ``float32(x) <= t``,
for every float64 ``x`` (see :func:`float32_equivalent_thresholds`); float32 X gives the same
comparisons as ``t`` too. So the jitree model predicts like the scikit-learn one on float32
and on float64 input, rather than moving float64 values that round onto a float32 threshold to
the other side.

Missing values
--------------
scikit-learn (>= 1.3) sends a NaN at node ``i`` left when ``tree_.missing_go_to_left[i]`` is
1 (learned where the node's training samples had NaN, else the child with more samples); the
converted tree copies it into ``missing_left``, so rows with NaN reach the same leaves. A
scikit-learn tree without that array keeps jitree's default (the heavier child).
"""

import sys

import numpy as np

from ..exceptions import NotFittedError, compatible
from .classifier import DecisionTreeClassifier
from .regressor import DecisionTreeRegressor
from .tree import TREE_LEAF, TREE_UNDEFINED, Tree
from .tree_check import check_tree

_CLASSIFIER_CRITERIA = ("gini", "entropy", "log_loss")
# The float32 "just past the largest finite float32", as IEEE rounding treats infinity.
_FLOAT32_OVERFLOW = 2.0**128
_MAX_NODES = np.iinfo(np.int32).max


def float32_equivalent_thresholds(threshold):
    """For each float64 ``t``, the largest float64 ``v`` with ``x <= v`` iff ``float32(x) <= t``.

    Let ``a`` be the largest float32 not above ``t`` and ``b`` the next float32. As rounding to
    float32 is monotone, ``float32(x) <= t`` iff ``float32(x) <= a`` iff ``x`` lies below the
    midpoint ``m = (a + b) / 2``, or on it when the tie rounds to ``a`` (round half to even:
    ``a`` has an even significand). So ``v = m`` in that case and the float64 just below ``m``
    otherwise. ``m`` is exact in float64 (it needs 25 significant bits). Infinite ``a`` or
    ``b`` count as +-2**128, where float32 rounding overflows; ``t = +-inf`` is first clipped
    to the finite float64 range, which changes no comparison of a finite ``x``. As
    ``a <= v < b``, a float32 ``x`` compares the same with ``v`` as with ``t``.

    Parameters
    ----------
    threshold : array_like of float64

    Returns
    -------
    ndarray of float64, same shape (NaN stays NaN).
    """
    threshold = np.asarray(threshold, dtype=np.float64)
    largest = np.finfo(np.float64).max
    threshold = np.clip(threshold, -largest, largest)
    with np.errstate(over="ignore"):  # overflow to +-inf is the intended float32 rounding
        below = threshold.astype(np.float32)
        too_high = below.astype(np.float64) > threshold
        below[too_high] = np.nextafter(below[too_high], np.float32(-np.inf))
        above = np.nextafter(below, np.float32(np.inf))
    low = below.astype(np.float64)
    high = above.astype(np.float64)
    low[np.isneginf(low)] = -_FLOAT32_OVERFLOW
    high[np.isposinf(high)] = _FLOAT32_OVERFLOW
    midpoint = (low + high) / 2.0
    tie_goes_below = (below.view(np.uint32) & np.uint32(1)) == 0
    return np.where(tie_goes_below, midpoint, np.nextafter(midpoint, -np.inf))


def _as_int32(name, array):
    """``array`` as int32, refusing values the cast would wrap (check_tree checks ranges)."""
    info = np.iinfo(np.int32)
    if array.size and (array.min() < info.min or array.max() > info.max):
        raise ValueError(f"tree_.{name} holds values outside the int32 range")
    return array.astype(np.int32)


def _sklearn_tree_classes():
    module = sys.modules.get("sklearn.tree")
    if module is None:
        return None, None
    return (getattr(module, "DecisionTreeClassifier", None),
            getattr(module, "DecisionTreeRegressor", None))


def _params(estimator, cls, is_classifier):
    """jitree constructor parameters with the meaning of the scikit-learn ones."""
    sklearn_params = estimator.get_params(deep=False)
    names = set(cls._param_names()) - {"criterion", "random_state", "class_weight", "n_jobs"}
    params = {name: value for name, value in sklearn_params.items() if name in names}
    criterion = sklearn_params.get("criterion")
    if is_classifier:
        # Other criteria (none today) keep the tree as grown; the parameter only matters to refit.
        params["criterion"] = criterion if criterion in _CLASSIFIER_CRITERIA else "gini"
        class_weight = sklearn_params.get("class_weight")
        if class_weight is None or isinstance(class_weight, (str, dict)):
            params["class_weight"] = dict(class_weight) if isinstance(class_weight, dict) \
                else class_weight
    else:
        # friedman_mse: the tree is kept, a refit uses squared_error
        params["criterion"] = criterion if criterion in ("poisson", "absolute_error") \
            else "squared_error"
    random_state = sklearn_params.get("random_state")
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        params["random_state"] = int(random_state)
    return params


_SKLEARN_FORESTS = ("RandomForestClassifier", "RandomForestRegressor", "ExtraTreesClassifier",
                    "ExtraTreesRegressor")


def _sklearn_forest_name(estimator):
    """The name of the scikit-learn forest class ``estimator`` is an instance of, or None."""
    module = sys.modules.get("sklearn.ensemble")
    if module is None:
        return None
    for name in _SKLEARN_FORESTS:
        cls = getattr(module, name, None)
        if cls is not None and isinstance(estimator, cls):
            return name
    return None


def _check_convertible(estimator, fitted_attribute):
    """NotFittedError for an unfitted scikit-learn estimator."""
    name = type(estimator).__name__
    if not hasattr(estimator, fitted_attribute):
        raise compatible(NotFittedError)(
            f"This {name} instance is not fitted yet: fit it before converting it")


def _copied_classes(estimator):
    """``classes_`` of a scikit-learn classifier, copied: an array, or one per output."""
    if estimator.n_outputs_ > 1:
        return [np.array(c, copy=True) for c in estimator.classes_]
    return np.array(estimator.classes_, copy=True)


def _forest_from_sklearn(estimator, name):
    """A jitree forest of the same kind holding the converted trees of ``estimator``."""
    from . import forest as jitree_forests

    cls = getattr(jitree_forests, name)
    _check_convertible(estimator, "estimators_")
    sklearn_params = estimator.get_params(deep=False)
    names = set(cls._param_names()) - {"criterion", "random_state", "class_weight", "n_jobs",
                                       "oob_score", "warm_start", "verbose"}
    params = {key: value for key, value in sklearn_params.items() if key in names}
    params.update({key: value for key, value in
                   _params(estimator.estimators_[0], cls._tree_class,
                           cls._tree_class is DecisionTreeClassifier).items()
                   if key in ("criterion", "class_weight")})
    random_state = sklearn_params.get("random_state")
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        params["random_state"] = int(random_state)
    model = cls(**params)
    feature_names = getattr(estimator, "feature_names_in_", None)
    trees = []
    for sklearn_tree in estimator.estimators_:
        tree = from_sklearn(sklearn_tree)
        if feature_names is not None:
            tree.feature_names_in_ = np.asarray(feature_names, dtype=object)
        if cls._tree_class is DecisionTreeClassifier:
            tree.classes_ = _copied_classes(estimator)
            tree.n_classes_ = ([c.shape[0] for c in tree.classes_]
                               if isinstance(tree.classes_, list) else tree.classes_.shape[0])
        trees.append(tree)
    model.estimators_ = trees
    model.estimator_ = trees[0]
    model._seeds = np.array([tree.random_state if isinstance(tree.random_state, int) else 0
                             for tree in trees], dtype=np.int64)
    model._layouts = {}
    model.n_features_in_ = int(estimator.n_features_in_)
    model.n_outputs_ = int(estimator.n_outputs_)
    if feature_names is not None:
        model.feature_names_in_ = np.asarray(feature_names, dtype=object)
    if cls._tree_class is DecisionTreeClassifier:
        model.classes_ = trees[0].classes_
        model.n_classes_ = trees[0].n_classes_
    return model


def from_sklearn(estimator):
    """A jitree estimator predicting exactly as a fitted scikit-learn decision tree or forest.

    Parameters
    ----------
    estimator : scikit-learn decision tree or forest
        ``sklearn.tree.DecisionTreeClassifier`` or ``DecisionTreeRegressor`` (or a subclass
        such as ``ExtraTreeClassifier``), or ``sklearn.ensemble.RandomForestClassifier``,
        ``RandomForestRegressor``, ``ExtraTreesClassifier`` or ``ExtraTreesRegressor``;
        fitted, with one output or several. A forest becomes the jitree forest of the same
        name holding the converted trees (its bags are not known: ``estimators_samples_`` and the
        out-of-bag estimate are not available).

    Returns
    -------
    model : jitree.DecisionTreeClassifier, jitree.DecisionTreeRegressor or a jitree forest
        Same node numbering (``apply`` agrees), ``classes_``, ``n_features_in_`` and
        ``feature_names_in_``. ``predict`` and ``apply`` agree with scikit-learn's on float32
        and float64 X; ``predict_proba`` agrees to rounding (jitree stores weighted class counts,
        scikit-learn fractions). Parameters shared with jitree are copied; a criterion jitree
        lacks becomes ``"gini"``/``"squared_error"`` (for a refit only: the tree is kept) and a
        ``random_state`` that is not an int becomes None. Thresholds are adjusted to reproduce
        scikit-learn's float32 comparisons, and missing values (NaN) are routed as
        scikit-learn routes them (module docstring).

    Raises
    ------
    TypeError
        ``estimator`` is not a scikit-learn decision tree or forest of those kinds.
    NotFittedError
        (a ValueError) ``estimator`` is not fitted.
    ValueError
        ``estimator``'s tree is malformed.
    """
    forest_name = _sklearn_forest_name(estimator)
    if forest_name is not None:
        return _forest_from_sklearn(estimator, forest_name)
    sklearn_classifier, sklearn_regressor = _sklearn_tree_classes()
    if sklearn_classifier is not None and isinstance(estimator, sklearn_classifier):
        cls = DecisionTreeClassifier
    elif sklearn_regressor is not None and isinstance(estimator, sklearn_regressor):
        cls = DecisionTreeRegressor
    else:
        kind = type(estimator)
        raise TypeError("from_sklearn expects a scikit-learn DecisionTreeClassifier, "
                        "DecisionTreeRegressor or one of the four forests of sklearn.ensemble, "
                        f"got {kind.__module__}.{kind.__qualname__}")
    is_classifier = cls is DecisionTreeClassifier
    name = type(estimator).__name__
    _check_convertible(estimator, "tree_")

    source = estimator.tree_
    n_nodes = int(source.node_count)
    if n_nodes > _MAX_NODES:
        raise ValueError(f"{name} has {n_nodes} nodes, more than jitree's int32 node ids hold")
    left = np.asarray(source.children_left)[:n_nodes]
    right = np.asarray(source.children_right)[:n_nodes]
    leaf = left == TREE_LEAF
    feature = np.where(leaf, TREE_UNDEFINED, np.asarray(source.feature)[:n_nodes])
    threshold = np.where(leaf, float(TREE_UNDEFINED),
                         float32_equivalent_thresholds(np.asarray(source.threshold)[:n_nodes]))
    weighted_n_node_samples = np.asarray(source.weighted_n_node_samples,
                                         dtype=np.float64)[:n_nodes]
    n_features = int(estimator.n_features_in_)
    n_outputs = int(estimator.n_outputs_)
    if is_classifier:
        classes = _copied_classes(estimator)
        # scikit-learn's value is (n_nodes, n_outputs, the most classes), jitree's the same
        # outputs side by side: (n_nodes, n_outputs x the most classes)
        n_classes = int(np.max(estimator.n_classes_))
        fractions = np.asarray(source.value, dtype=np.float64)[:n_nodes, :, :n_classes]
        # jitree keeps weighted class counts; scikit-learn (>= 1.4) keeps each node's fractions
        weight = weighted_n_node_samples[:, None, None]
        value = np.where(weight > 0.0, fractions * weight, 0.0).reshape(n_nodes, -1)
    else:
        classes = None
        n_classes = 0
        value = np.asarray(source.value, dtype=np.float64)[:n_nodes, :, 0].reshape(n_nodes, -1)
    children_left = _as_int32("children_left", left)
    children_right = _as_int32("children_right", right)
    missing_go_to_left = getattr(source, "missing_go_to_left", None)
    missing_left = None  # scikit-learn < 1.3 (no NaN support): the Tree's default
    if missing_go_to_left is not None:
        # scikit-learn fills the entry of leaves too; a jitree leaf has 0
        missing_left = np.where(leaf, 0, np.asarray(missing_go_to_left)[:n_nodes] != 0)
    tree = Tree(n_features, n_classes, _as_int32("feature", feature), threshold,
                children_left, children_right, value, source.impurity[:n_nodes],
                source.n_node_samples[:n_nodes], weighted_n_node_samples,
                missing_left=missing_left, n_outputs=n_outputs)
    check_tree(tree, n_features, n_classes)
    model = cls._from_tree(tree, classes=classes,
                           feature_names=getattr(estimator, "feature_names_in_", None),
                           params=_params(estimator, cls, is_classifier))
    max_features = getattr(estimator, "max_features_", None)
    if isinstance(max_features, (int, np.integer)) and 1 <= max_features <= n_features:
        model.max_features_ = int(max_features)
    return model
