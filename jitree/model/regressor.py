"""DecisionTreeRegressor."""

import numpy as np

from .._threading import n_threads
from ..kernels.quantiles import LINEAR
from . import leaf_samples
from ._base import (
    CATEGORY_SMOOTHING,
    MAX_ONE_VS_REST_CATEGORIES,
    MIN_SAMPLES_CATEGORY,
    SUBSET_PENALTY,
    BaseDecisionTree,
)
from ._params import given_parameters
from .validation import check_one_output, check_poisson_target, check_sample_weight, check_y


def r2_score_of(y_pred, y, sample_weight):
    """:meth:`score` of a regressor's predictions ``y_pred``: R^2, or the mean of each
    output's R^2 for a 2-D ``y_pred`` (scikit-learn's ``uniform_average``)."""
    weight = check_sample_weight(sample_weight, y_pred.shape[0])
    if y_pred.ndim == 2:
        y = np.asarray(y, dtype=np.float64)
        if y.shape != y_pred.shape:
            raise ValueError(f"y has shape {y.shape}; the model predicts {y_pred.shape[1]} "
                             f"outputs for {y_pred.shape[0]} rows")
        y = check_y(y, y_pred.shape[0], regression=True, multi_output=True)
        return float(np.mean([r2(y[:, j], y_pred[:, j], weight)
                              for j in range(y.shape[1])]))
    y = np.asarray(y, dtype=np.float64)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.shape != y_pred.shape:
        raise ValueError(f"y has shape {y.shape}; the model predicts one output for "
                         f"{y_pred.shape[0]} rows")
    return r2(check_y(y, y_pred.shape[0], regression=True), y_pred, weight)


def r2(y, y_pred, weight):
    """Coefficient of determination 1 - sum w (y - y_pred)**2 / sum w (y - mean)**2, computed
    on y, y_pred scaled by a power of two into (-1, 1) and weights by their largest, so that
    neither squares nor sums overflow (targets near 1e200, weights near 1e300)."""
    largest = max(float(np.abs(y).max()), float(np.abs(y_pred).max()))
    exponent = int(np.frexp(largest)[1]) if np.isfinite(largest) and largest > 0 else 0
    y, y_pred = np.ldexp(y, -exponent), np.ldexp(y_pred, -exponent)
    weight = weight / weight.max()
    mean = np.average(y, weights=weight)
    residual = np.sum(weight * (y - y_pred) ** 2)
    total = np.sum(weight * (y - mean) ** 2)
    if total == 0.0:
        return 1.0 if residual == 0.0 else 0.0
    return float(1.0 - residual / total)


class DecisionTreeRegressor(BaseDecisionTree):
    """A decision tree regressor grown on presorted features.

    Parameters are those of :class:`jitree.DecisionTreeClassifier` except ``class_weight`` and
    ``purity_threshold``; ``criterion`` is ``"squared_error"`` (variance reduction; the
    impurity is the node's weighted variance), ``"poisson"`` (half Poisson deviance
    ``sum w (y log(y / m) - y + m) / W`` of the node's mean m: for counts and rates, y >= 0
    with a positive sum; a split that leaves a child of zero sum is not made),
    ``"absolute_error"`` (each node predicts the weighted median of its targets; its impurity
    is the mean absolute deviation from it, ``sum w |y - median| / W``), ``"quantile"`` (each
    node predicts the weighted ``quantile`` of its targets; the impurity is the mean pinball
    loss ``sum w rho(y - q) / W``, ``rho(u) = quantile * u`` for ``u >= 0``,
    ``(quantile - 1) * u`` below) or a :class:`jitree.Criterion`. ``impurity_threshold``
    applies to the node's impurity. ``"friedman_mse"`` is grown as ``"squared_error"``, with
    a ``FutureWarning`` (for one output, the same splits: Friedman's improvement is the
    decrease of the squared error).

    The weighted quantile of a node is the target of its first sample, in increasing order
    of y, at which the cumulative weight exceeds ``quantile`` times the node's weight; when a
    prefix weighs exactly that, the midpoint of its last target and the next (so an even
    number of unit-weight samples has the mean of its two middle values as median, as
    scikit-learn's). ``absolute_error`` and ``quantile`` search numeric and ordinal features
    (categorical ones are refused) and, unlike scikit-learn's ``absolute_error``, accept
    missing values, which go to the side of lower loss.

    ``quantile``: float in (0, 1), the quantile ``criterion="quantile"`` estimates (the
    other criteria ignore it).

    ``honest`` and ``honest_fraction``: an honest tree, whose leaf values are those of the
    samples it did not grow on (see :class:`jitree.DecisionTreeClassifier`). One more:

    Parameters
    ----------
    store_leaf_samples : bool, default=False
        Keep the training rows of each leaf and the training targets (``leaf_samples_``)
        so that :meth:`predict_quantiles` works: 8 bytes per training row for the targets,
        12 for the row's index and weight in its leaf, 24 per node (see
        :mod:`jitree.model.leaf_samples`). Saved and loaded with the model.

    Attributes
    ----------
    tree_ : jitree.Tree (``value`` holds each node's weighted mean target; under
        ``absolute_error`` and ``quantile``, its weighted median or quantile)
    n_features_in_, feature_names_in_, feature_importances_, max_features_
    n_outputs_ : int
        Number of outputs of the target: always 1 (one column of real values).
    leaf_samples_ : jitree.kernels.records.LeafSamples (with ``store_leaf_samples=True``)
        The training rows behind each leaf (the estimation rows of an honest tree), their
        weights and the training targets.
    """

    _task = "regression"

    def __init__(self, criterion="squared_error", splitter="best", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features=None, random_state=None, max_leaf_nodes=None,
                 min_impurity_decrease=0.0, impurity_threshold=0.0, ccp_alpha=0.0,
                 n_jobs=None, categorical_features=None, ordinal_features=None,
                 categorical_split="subset", max_exhaustive_categories=10,
                 max_subset_size=None,
                 max_one_vs_rest_categories=MAX_ONE_VS_REST_CATEGORIES,
                 min_samples_category=MIN_SAMPLES_CATEGORY,
                 category_smoothing=CATEGORY_SMOOTHING,
                 subset_penalty=SUBSET_PENALTY, monotonic_cst=None, interaction_cst=None,
                 quantile=None, honest=False, honest_fraction=0.5,
                 store_leaf_samples=False):
        self.criterion = criterion
        self.splitter = splitter
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.random_state = random_state
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.impurity_threshold = impurity_threshold
        self.ccp_alpha = ccp_alpha
        self.n_jobs = n_jobs
        self.categorical_features = categorical_features
        self.ordinal_features = ordinal_features
        self.categorical_split = categorical_split
        self.max_exhaustive_categories = max_exhaustive_categories
        self.max_subset_size = max_subset_size
        self.max_one_vs_rest_categories = max_one_vs_rest_categories
        self.min_samples_category = min_samples_category
        self.category_smoothing = category_smoothing
        self.subset_penalty = subset_penalty
        self.monotonic_cst = monotonic_cst
        self.interaction_cst = interaction_cst
        self.quantile = quantile
        self.honest = honest
        self.honest_fraction = honest_fraction
        self.store_leaf_samples = store_leaf_samples

    def fit(self, X, y, sample_weight=None):
        """Grow the tree on X (n_samples, n_features) and real targets y, of shape
        (n_samples,) or (n_samples, n_outputs) for one tree predicting several outputs (its
        criterion the mean of the outputs' impurities, as scikit-learn's)."""
        X = self._validate_fit_X(X, keep_sparse=True)
        n_samples = X.shape[0]
        y = check_y(y, n_samples, regression=True, multi_output=True,
                    column_warns=False)
        sample_weight = check_sample_weight(sample_weight, n_samples)
        if isinstance(self.criterion, str) and self.criterion == "poisson":
            for column in (y.T if y.ndim == 2 else (y,)):
                check_poisson_target(column, sample_weight)
        n_stats = 2 * y.shape[1] if y.ndim == 2 else 2
        return self._fit_tree(X, y, sample_weight, n_stats, 0)

    def _pruning_targets(self, y, n_samples):
        check_one_output(self, "prune_reduced_error")
        targets = check_y(y, n_samples, regression=True, column_warns=False)
        return targets, self.tree_.value[:, 0].copy()

    def predict(self, X):
        """Weighted mean target of the leaf each row reaches."""
        model, chunks = self._chunked(X, rows=True)
        if chunks is not None:
            return model._predict_chunks(chunks, model._predict_validated)
        return self._predict_validated(self._validate_walk_X(X))

    def _predict_validated(self, X):
        with n_threads(self.n_jobs):
            prediction = self.tree_.predict_table(X, self.tree_.value)
        return prediction if self.tree_.n_outputs > 1 else prediction[:, 0]

    def predict_quantiles(self, X, quantiles=0.5, interpolation="linear"):
        """Conditional quantiles of the target: the weighted quantiles of the training targets
        in the leaf each row reaches (a quantile regression tree; see
        :mod:`jitree.kernels.quantiles` for the rule). Needs a fit with
        ``store_leaf_samples=True``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features), or an iterator of
            such chunks
        quantiles : float or sequence of floats in [0, 1], default=0.5
        interpolation : {"linear", "lower", "higher", "midpoint", "nearest"}, default="linear"
            A quantile between two training targets v < w: interpolated, v, w, their middle,
            or the nearer (NumPy's and quantile-forest's names; with integer weights, NumPy's
            ``np.quantile(method=...)`` of the repeated targets).

        Returns
        -------
        ndarray of shape (n_samples,) for one number, else (n_samples, n_quantiles)
        """
        quantiles, scalar = leaf_samples.check_quantiles(quantiles)
        method = leaf_samples.check_interpolation(interpolation)
        return self._predict_quantiles_any(X, quantiles, scalar, method)

    def _predict_quantiles_any(self, X, quantiles, scalar, method):
        model, chunks = self._chunked(X)

        def predict(validated):
            return model._predict_quantiles_validated(validated, quantiles, scalar, method)

        if chunks is not None:
            return model._predict_chunks(chunks, predict)
        return predict(self._validate_predict_X(X))

    def _predict_quantiles_validated(self, X, quantiles, scalar, method=LINEAR):
        samples = leaf_samples.stored(self)
        with n_threads(self.n_jobs):
            return leaf_samples.predict(samples, [self.tree_], X, quantiles, scalar,
                                        *leaf_samples.layout_of(self, samples),
                                        method=method)

    def score(self, X, y, sample_weight=None):
        """Coefficient of determination R^2 (several outputs: the mean of their R^2)."""
        return r2_score_of(self.predict(X), y, sample_weight)

    def __sklearn_tags__(self):
        from sklearn.utils import InputTags, RegressorTags, Tags, TargetTags

        tags = Tags(estimator_type="regressor", target_tags=TargetTags(required=True),
                    regressor_tags=RegressorTags(), input_tags=InputTags())
        return self._more_tags_common(tags)


class ExtraTreeRegressor(DecisionTreeRegressor):
    """An extremely randomized tree regressor (scikit-learn's ``ExtraTreeRegressor``): a
    :class:`DecisionTreeRegressor` whose defaults are ``splitter="random"`` (one uniform random
    threshold per drawn feature and node) and ``max_features=1.0`` (every feature). Parameters,
    attributes and methods are :class:`DecisionTreeRegressor`'s; the same parameters grow the
    same tree with either class. Extra-Trees forests: :class:`ExtraTreesRegressor`.
    """

    def __init__(self, criterion="squared_error", splitter="random", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features=1.0, random_state=None, max_leaf_nodes=None,
                 min_impurity_decrease=0.0, impurity_threshold=0.0, ccp_alpha=0.0, n_jobs=None,
                 categorical_features=None, ordinal_features=None, categorical_split="subset",
                 max_exhaustive_categories=10, max_subset_size=None,
                 max_one_vs_rest_categories=MAX_ONE_VS_REST_CATEGORIES,
                 min_samples_category=MIN_SAMPLES_CATEGORY, category_smoothing=CATEGORY_SMOOTHING,
                 subset_penalty=SUBSET_PENALTY, monotonic_cst=None, interaction_cst=None,
                 quantile=None, honest=False, honest_fraction=0.5, store_leaf_samples=False):
        super().__init__(**given_parameters(locals()))
