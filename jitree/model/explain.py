"""SHAP values of trees and forests: exact path-dependent TreeSHAP (see
:mod:`jitree.kernels.shap` for the formulas and the algorithm).

The values explain what the model predicts: class probabilities for a classifier (one set of
values per class, as ``shap`` lays them out for scikit-learn classifiers), the prediction for a
regressor; a forest's are the mean of its trees'. Every node kind (threshold, category subset,
one-vs-rest, multiway), missing values and unseen categories are followed as ``predict``
follows them. A node's children share its weight in proportion to their training weight
(``weighted_n_node_samples``, the "cover"), as in ``shap``'s path-dependent explainer.
"""

from collections import namedtuple

import numpy as np

from .._threading import n_threads
from ..kernels import shap as _shap
from ..kernels.records import ShapTrees
from .tree import raise_infinite, read_only

SHAP_CHUNK_ROWS = 64  # rows per parallel task (blocks of BLOCK_ROWS walk each tree together)

ShapValues = namedtuple("ShapValues", ["values", "expected_value"])
ShapValues.__doc__ = """SHAP values and the expected value they are relative to.

values : ndarray
    :func:`shap_values`: shape (n_samples, n_features) for a regressor, (n_samples,
    n_features, n_classes) for a classifier; :func:`shap_interaction_values`: (n_samples,
    n_features, n_features) and (n_samples, n_features, n_features, n_classes). ``shap``'s
    layout: ``shap.summary_plot(result.values, X)``, or for class c of a classifier
    ``shap.Explanation(result.values[..., c], result.expected_value[c], data=X)``.
expected_value : float or ndarray of shape (n_classes,)
    The model's expected output under the path-dependent expectation (the training-weight
    average of the leaves): a row's values sum to its prediction minus this.
"""

_Layout = namedtuple("_Layout", ["walk", "trees", "classifier"])


def _fitted_trees(model):
    """The estimators whose trees ``model`` averages ([model] for a tree) and whether they
    are classifiers."""
    from .classifier import DecisionTreeClassifier
    from .forest import BaseForest
    from .regressor import DecisionTreeRegressor
    from .validation import check_is_fitted

    if isinstance(model, BaseForest):
        check_is_fitted(model, "estimators_")
        return list(model.estimators_), isinstance(model.estimators_[0], DecisionTreeClassifier)
    if isinstance(model, (DecisionTreeClassifier, DecisionTreeRegressor)):
        check_is_fitted(model)
        return [model], isinstance(model, DecisionTreeClassifier)
    raise TypeError("SHAP values need a fitted jitree tree or forest (DecisionTreeClassifier, "
                    "DecisionTreeRegressor or one of the four forests), got "
                    f"{type(model).__name__}; convert scikit-learn models with "
                    "jitree.from_sklearn")


def _child_fractions(tree):
    """Per node: its weighted_n_node_samples over the sum of its siblings' (1 at the root;
    the children share equally when they have no weight at all)."""
    cover = tree.weighted_n_node_samples
    parent, child = tree.parent_child_pairs()
    siblings = np.zeros(tree.node_count)
    np.add.at(siblings, parent, cover[child])
    n_children = np.zeros(tree.node_count)
    np.add.at(n_children, parent, 1.0)
    fraction = np.ones(tree.node_count)
    total = siblings[parent]
    fraction[child] = np.where(total > 0.0, cover[child] / np.where(total > 0.0, total, 1.0),
                               1.0 / np.maximum(n_children[parent], 1.0))
    return fraction


def _gauss_legendre(n):
    """Rows m = 1 .. n: the m-point Gauss-Legendre nodes and weights on [0, 1]."""
    nodes = np.zeros((n + 1, max(n, 1)))
    weights = np.zeros((n + 1, max(n, 1)))
    for m in range(1, n + 1):
        x, w = np.polynomial.legendre.leggauss(m)
        nodes[m, :m] = (x + 1.0) / 2.0
        weights[m, :m] = w / 2.0
    return nodes, weights


def _layout(model):
    """The trees' arrays as the TreeSHAP kernels read them, built once per model."""
    estimators, classifier = _fitted_trees(model)
    key = tuple(id(estimator.tree_) for estimator in estimators)
    cached = model.__dict__.get("_shap_layout")
    if cached is not None and cached[0] == key:
        return cached[1]
    if len(estimators) > 1 or model is not estimators[0]:
        walk, roots, table = model._node_layout()
    else:
        tree = model.tree_
        walk = tree.walk_arrays()
        roots = np.zeros(1, dtype=np.int64)
        table = model._node_proba() if classifier else tree.value
    table = table / len(estimators)  # a forest predicts the mean of its trees
    fraction = np.concatenate([_child_fractions(e.tree_) for e in estimators])
    max_depth = max(e.tree_.max_depth for e in estimators)
    trees = ShapTrees(np.asarray(roots, dtype=np.int64),
                      *read_only(fraction, np.ascontiguousarray(table)), np.int64(max_depth),
                      *read_only(*_gauss_legendre((max_depth + 1) // 2)))
    layout = _Layout(walk, trees, classifier)
    model.__dict__["_shap_layout"] = (key, layout)
    return layout


def shap_trees(model):
    """``(walk, trees)``: the :class:`~jitree.kernels.records.TreeWalk` and
    :class:`~jitree.kernels.records.ShapTrees` records of a fitted tree or forest, for
    :func:`jitree.kernels.shap.shap_row` in users' own ``@njit`` code (built once per
    model)."""
    layout = _layout(model)
    return layout.walk, layout.trees


def _explain(model, X, interactions):
    layout = _layout(model)
    X = model._validate_predict_X(X)
    if np.isinf(X).any():
        raise_infinite(X, "X")
    n_rows, n_features = X.shape
    n_outputs = layout.trees.table.shape[1]
    expected = np.zeros(n_outputs)
    shape = ((n_rows, n_features, n_features, n_outputs) if interactions
             else (n_rows, n_features, n_outputs))
    values = np.zeros(shape)
    kernel = _shap.shap_interaction_values if interactions else _shap.shap_values
    _shap.expected_value(layout.walk, layout.trees, expected)
    if n_rows:
        with n_threads(model.n_jobs) as threads:
            chunk_rows = max(1, min(SHAP_CHUNK_ROWS, -(-n_rows // (4 * threads))))
            kernel(X, layout.walk, layout.trees, chunk_rows, values)
    if layout.classifier:
        return ShapValues(values, expected)
    return ShapValues(values[..., 0], float(expected[0]))


def shap_values(model, X):
    """Exact path-dependent TreeSHAP values of a fitted jitree tree or forest.

    Parameters
    ----------
    model : DecisionTreeClassifier, DecisionTreeRegressor or a jitree forest
        Fitted (or converted with :func:`jitree.from_sklearn`, or loaded).
    X : array-like of shape (n_samples, n_features)
        As ``predict`` takes it (categories, missing values, a DataFrame with the fitted
        feature names).

    Returns
    -------
    ShapValues
        ``(values, expected_value)``: ``values`` of shape (n_samples, n_features) for a
        regressor, (n_samples, n_features, n_classes) for a classifier (per class
        probability); each row's values sum to its prediction minus ``expected_value``.
        Computed in parallel over rows on the model's ``n_jobs`` threads.
    """
    return _explain(model, X, interactions=False)


def shap_interaction_values(model, X):
    """Exact path-dependent SHAP interaction values (Lundberg et al. 2020) of a fitted jitree
    tree or forest.

    ``values[i, j, k]`` (j != k) is half the difference between feature j's Shapley value with
    feature k known and with it unknown (the same for (k, j)); ``values[i, j, j]`` is j's own
    effect: its SHAP value less its interactions. ``values[i, j].sum()`` is feature j's SHAP
    value, so a row's values sum to its prediction minus ``expected_value``.

    Returns
    -------
    ShapValues
        ``values`` of shape (n_samples, n_features, n_features) for a regressor,
        (n_samples, n_features, n_features, n_classes) for a classifier.
    """
    return _explain(model, X, interactions=True)
