"""SHAP values of trees and forests: exact path-dependent TreeSHAP (see
:mod:`jitree.kernels.shap` for the formulas and the algorithm).

The values explain what the model predicts: class probabilities for a classifier (one set of
values per class, as ``shap`` lays them out for scikit-learn classifiers), the prediction for a
regressor; a forest's are the mean of its trees'. Every node kind (threshold, category subset,
one-vs-rest, multiway), missing values and unseen categories are followed as ``predict``
follows them. A node's children share its weight in proportion to their training weight
(``weighted_n_node_samples``, the "cover", over the parent's), as in ``shap``'s
path-dependent explainer.
"""

from collections import namedtuple

import numpy as np

from .._threading import n_threads
from ..kernels import dependence as _dependence
from ..kernels import shap as _shap
from ..kernels.records import ShapTrees
from .tree import raise_infinite, read_only, read_only_view
from .validation import fitted_trees

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

_Layout = namedtuple("_Layout", ["walk", "trees", "classifier", "expected"])


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
    """The trees' arrays as the TreeSHAP kernels read them, built once per model: each
    node's share of its parent's training weight and the expected output come from
    :func:`jitree.kernels.dependence.node_shares` (the path-dependent expectation is the
    partial dependence recursion's subtree mean)."""
    estimators, classifier = fitted_trees(model, "SHAP values")
    key = tuple(id(estimator.tree_) for estimator in estimators)
    cached = model.__dict__.get("_shap_layout")
    if cached is not None and cached[0] == key:
        return cached[1]
    walk, roots, table = model._node_layout()
    table = np.ascontiguousarray(table / len(estimators))  # a forest's mean of its trees
    weight = np.concatenate([e.tree_.weighted_n_node_samples for e in estimators])
    fraction = np.empty(weight.shape[0])
    mean = np.empty(table.shape)
    _dependence.node_shares(walk, weight, table, fraction, mean)
    max_depth = max(e.tree_.max_depth for e in estimators)
    trees = ShapTrees(np.array(roots, dtype=np.int64), *read_only(fraction, table),
                      np.int64(max_depth), *read_only(*_gauss_legendre((max_depth + 1) // 2)))
    layout = _Layout(walk, trees, classifier, mean[roots].sum(axis=0))
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
    expected = layout.expected.copy()
    shape = ((n_rows, n_features, n_features, n_outputs) if interactions
             else (n_rows, n_features, n_outputs))
    values = np.zeros(shape)
    kernel = _shap.shap_interaction_values if interactions else _shap.shap_values
    if n_rows:
        with n_threads(model.n_jobs) as threads:
            chunk_rows = max(1, min(SHAP_CHUNK_ROWS, -(-n_rows // (4 * threads))))
            kernel(read_only_view(X), layout.walk, layout.trees, chunk_rows, values)
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
        feature names), in one piece: an iterator of chunks is refused.

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
