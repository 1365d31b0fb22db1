"""What the classifier and the regressor share: parameters, fit driver, prediction plumbing."""

import copy
import itertools
import numbers
import weakref

import numpy as np

from .._threading import n_threads, resolve_n_jobs
from ..kernels import criteria
from ..kernels.categorical import CATEGORICAL_SPLITS, MULTIWAY, SUBSET
from . import leaf_samples, pruning
from ._params import ParamsMixin
from .builder import GrowParams, Presorted, SampleX, TreeBuilder, sample_order_growth
from .categories import FeatureEncoder
from .criterion import criterion_of
from .honest import reestimate, split_rows
from .tree import FEATURE_CATEGORICAL
from .validation import (
    FIT_DENSE_COPIES,
    CategoryValueRows,
    CsrRows,
    check_encodable_names,
    check_is_fitted,
    check_sample_weight,
    check_sparse_X,
    check_weight_total,
    check_X,
    feature_names_of,
    has_nonfinite,
    is_sparse,
    match_feature_names,
    passes_unchanged,
    prediction_chunks,
    sparse_row_blocks,
    sparse_to_dense,
    walks_as_given,
)

_MAX_DEPTH_UNLIMITED = np.iinfo(np.int32).max
# fits of fewer values (samples x features) run on one thread: measured 4-6% faster for 150 x 4
# and 1k x 10 on 2 cores, while 3k x 10 breaks even and 5k x 20 gains 10% from a second thread
_PARALLEL_FIT_VALUES = 20_000
# 2**(m-1) - 1 partitions are scored per node and categorical feature: 2**19 at most
_MAX_EXHAUSTIVE_LIMIT = 20
_SEED_RANGE = 2**63
# defaults of the category search's regularisation (kernels.categorical), chosen on eleven
# public tables (jitree.bench_tables; python -m jitree.bench --only categorical-tables):
# pooling below 10 samples and a subset penalty of 4 keep the default tree within 0.001 of
# scikit-learn's on one-hot columns on every table; smoothing and one-vs-rest below a
# number of categories changed no score by more than 0.001 there, and stay off
CATEGORY_SMOOTHING = 0.0
MIN_SAMPLES_CATEGORY = "auto"  # 10 for the subset search, 0 (no pooling) for the others
AUTO_MIN_SAMPLES_CATEGORY = 10
MAX_ONE_VS_REST_CATEGORIES = 0
SUBSET_PENALTY = 4.0
# forests average many trees, which removes much of the variance a single tree's defaults
# guard against: on the same tables (random forests of 50 trees, 5 splits) no pooling and a
# penalty of 1 scored above the exact search on 9 of 11 tables and within 0.001 of it on the
# other two; pooling below 10 samples lost up to 0.023 (attrition) against the exact search
FOREST_MIN_SAMPLES_CATEGORY = 0
FOREST_SUBSET_PENALTY = 1.0


_LARGEST_INT = 2**61  # larger int parameters act as this one


def _check_int(name, value, low, allow_none=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int{' or None' if allow_none else ''}, got "
                        f"{value!r}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    # beyond any count of samples, nodes or depth: the kernels' int64 arithmetic (2 n - 1
    # nodes for n leaves, ...) stays exact
    return min(int(value), _LARGEST_INT)


def _check_float(name, value, low, high, low_open=False, high_open=False):
    if type(value) is not float and (isinstance(value, bool)
                                     or not isinstance(value, numbers.Real)):
        raise TypeError(f"{name} must be a float, got {value!r}")
    value = float(value)
    # NaN fails both comparisons
    ok = (value > low if low_open else value >= low) and (value < high if high_open
                                                          else value <= high)
    if not ok:
        lo = "(" if low_open else "["
        hi = ")" if high_open else "]"
        raise ValueError(f"{name} must be in {lo}{low}, {high}{hi}, got {value}")
    return value


def _check_count_or_fraction(name, value, low, n_samples, whole=True):
    """A count of samples given as an int of at least ``low`` or as a fraction of
    ``n_samples`` (a float in (0, 1], or (0, 1) when ``whole`` is False), rounded up to at
    least ``low``. Errors in scikit-learn's words, which name both forms."""
    ranges = (f"an int in the range [{low}, inf) or a float in the range "
              f"(0.0, 1.0{']' if whole else ')'}")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"The {name!r} parameter must be {ranges}, got {value!r}")
    if isinstance(value, numbers.Integral):
        if value < low:
            raise ValueError(f"The {name!r} parameter must be {ranges}, got {value}")
        return min(int(value), _LARGEST_INT)
    fraction = float(value)
    if not (0.0 < fraction < 1.0 or (whole and fraction == 1.0)):
        raise ValueError(f"The {name!r} parameter must be {ranges}, got {value}")
    return max(low, int(np.ceil(fraction * n_samples)))


def _check_honest(honest, honest_fraction):
    """The validated ``(honest, honest_fraction)`` parameters (see :mod:`.honest`)."""
    if not isinstance(honest, (bool, np.bool_)):
        raise TypeError(f"honest must be True or False, got {honest!r}")
    fraction = _check_float("honest_fraction", honest_fraction, 0.0, 1.0, low_open=True,
                            high_open=True)
    return bool(honest), fraction


def _check_store_leaf_samples(model):
    """``store_leaf_samples`` (regressors; False for estimators without it)."""
    store = getattr(model, "store_leaf_samples", False)
    if not isinstance(store, (bool, np.bool_)):
        raise TypeError(f"store_leaf_samples must be True or False, got {store!r}")
    return bool(store)


def _columns_with_nan(X):
    """Boolean per column: whether it holds a NaN (X is finite or NaN here)."""
    if not has_nonfinite(X):  # the common case: one pass, no copy
        return np.zeros(X.shape[1], dtype=bool)
    return np.array([bool(np.isnan(X[:, j]).any()) for j in range(X.shape[1])])


def _tested_columns(trees):
    """The features the ``trees`` test, increasing (feature 0 when none: a lone leaf still
    reads a column)."""
    tested = np.unique(np.concatenate([tree.feature[tree.feature >= 0] for tree in trees]))
    return tested if tested.shape[0] else np.zeros(1, dtype=tested.dtype)


def _reduced_copy(model, n_columns):
    """A shallow copy of a fitted ``model`` that takes X of ``n_columns`` numeric columns,
    by position (the caller sets its trees)."""
    reduced = copy.copy(model)
    reduced.n_features_in_ = n_columns
    reduced._encoder = None
    for attribute in ("feature_names_in_", "categories_"):
        reduced.__dict__.pop(attribute, None)
    return reduced


def _scipy_sparse(method):
    """The ``scipy.sparse`` module, imported when ``method`` needs it (scipy is an optional
    dependency, never imported by ``import jitree``); an ImportError naming the extra to
    install when scipy is missing."""
    try:
        from scipy import sparse
    except ImportError:
        raise ImportError(f"{method} returns a scipy sparse matrix: install the 'scipy' "
                          "extra (pip install 'jitree[scipy]')") from None
    return sparse


def _check_multi_output(model, criterion):
    """Refuse what a multi-output fit (y of several columns) cannot do: criteria of one
    output, and monotonic constraints (scikit-learn refuses them too)."""
    if criterion < criteria.USER_IMPURITY and criterion not in criteria.MULTI_OUTPUT_CRITERIA:
        allowed = ("'gini', 'entropy', 'log_loss', 'misclassification'"
                   if model._task == "classification"
                   else "'squared_error', 'poisson', 'absolute_error', 'quantile'")
        raise ValueError(f"criterion={model.criterion!r} scores one output; a multi-output y "
                         f"(several columns) needs {allowed} or a jitree.Criterion")
    if getattr(model, "monotonic_cst", None) is not None:
        raise ValueError("Monotonicity constraints are not supported with multiple outputs.")


def _seed_of(random_state):
    """An integer seed from None / int / numpy RandomState or Generator (scikit-learn's
    meaning: None draws a fresh seed, so that fits differ)."""
    if random_state is None:
        # NumPy's global state, as scikit-learn does, so that np.random.seed() applies
        return int(np.random.randint(np.iinfo(np.int32).max))  # noqa: NPY002
    if isinstance(random_state, bool):
        raise TypeError(f"random_state must be None, an int or a numpy random generator, got "
                        f"{random_state!r}")
    if isinstance(random_state, numbers.Integral):
        if random_state < 0:
            raise ValueError(f"random_state must be non-negative, got {random_state}")
        return int(random_state) % _SEED_RANGE
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(np.iinfo(np.int32).max))
    raise TypeError(f"random_state must be None, an int or a numpy random generator, got "
                    f"{random_state!r}")


class BaseDecisionTree(ParamsMixin):
    """Shared by DecisionTreeClassifier and DecisionTreeRegressor (not public)."""

    _task = None  # "classification" or "regression"

    # -- parameters --------------------------------------------------------------------------
    def _monotonic(self, n_features, encoder, n_classes):
        """``monotonic_cst`` as the kernels take it (see ``GrowParams.monotonic``), or None
        when no feature is constrained."""
        constraints = getattr(self, "monotonic_cst", None)
        if constraints is None:
            return None
        if isinstance(constraints, str):
            raise TypeError("monotonic_cst must be None or an array-like of -1, 0 or 1 per "
                            f"feature, got {constraints!r}")
        constraints = np.asarray(constraints)
        if constraints.ndim != 1 or constraints.shape[0] != n_features:
            # scikit-learn's words (a 1-D array's shape as its length)
            shape = constraints.shape[0] if constraints.ndim == 1 else constraints.shape
            raise ValueError(f"monotonic_cst has shape {shape} but the input data X has "
                             f"{n_features} features.")
        if constraints.dtype.kind not in "biuf" or not np.isin(constraints, (-1, 0, 1)).all():
            raise ValueError("monotonic_cst must be None or an array-like of -1, 0 or 1, but "
                             f"got {np.unique(constraints)}")
        constraints = constraints.astype(np.int8)
        if not constraints.any():
            return None
        if encoder is not None:
            categorical = (np.asarray(encoder.feature_kind_) == FEATURE_CATEGORICAL) \
                & (constraints != 0)
            if categorical.any():
                raise ValueError("monotonic_cst constrains the categorical feature(s) "
                                 f"{np.flatnonzero(categorical).tolist()}, whose categories "
                                 "have no order; constrain numeric or ordinal features only")
        if self._task == "classification":
            if n_classes > 2:
                raise ValueError("Monotonicity constraints are not supported with multiclass "
                                 "classification")
            # the kernels bound the fraction of class 0: a constraint on P(class 1) flips
            constraints = -constraints
        return constraints

    def _interactions(self, n_features):
        """``interaction_cst`` as the kernels take it: a (n_groups, n_features) uint8
        membership matrix (features in no listed group form one more group), or None."""
        constraints = getattr(self, "interaction_cst", None)
        if constraints is None:
            return None
        if isinstance(constraints, str):
            if constraints == "no_interactions":
                groups = [{f} for f in range(n_features)]
            elif constraints == "pairwise":
                groups = [set(pair) for pair in itertools.combinations(range(n_features), 2)]
            else:
                raise ValueError("interaction_cst must be 'pairwise', 'no_interactions' or a "
                                 f"sequence of groups of feature indices, got {constraints!r}")
        else:
            try:
                groups = [set(group) for group in constraints]
            except TypeError:
                raise ValueError("interaction_cst must be a sequence of groups (lists, tuples "
                                 f"or sets) of feature indices, got {constraints!r}") from None
        for group in groups:
            for f in group:
                if isinstance(f, bool) or not isinstance(f, numbers.Integral) \
                        or not 0 <= f < n_features:
                    raise ValueError("interaction_cst groups hold feature indices in "
                                     f"[0, {n_features - 1}], got the group "
                                     f"{sorted(group, key=str)!r}")
        rest = set(range(n_features)).difference(*groups)
        if rest:
            groups.append(rest)
        member = np.zeros((len(groups), n_features), dtype=np.uint8)
        for g, group in enumerate(groups):
            member[g, sorted(group)] = 1
        return member

    def _grow_params(self, n_samples, n_features, total_weight, n_classes=0, seed=None,
                     n_outputs=1):
        grown_criterion, criterion = criterion_of(self.criterion, self._task)
        if n_outputs > 1:
            _check_multi_output(self, criterion)
        if self.splitter not in ("best", "random"):
            raise ValueError(f"splitter must be 'best' or 'random', got {self.splitter!r}")
        max_depth = _check_int("max_depth", self.max_depth, 1, allow_none=True)

        min_samples_leaf = _check_count_or_fraction("min_samples_leaf", self.min_samples_leaf,
                                                    1, n_samples, whole=False)
        min_samples_split = _check_count_or_fraction("min_samples_split",
                                                     self.min_samples_split, 2, n_samples)
        min_samples_split = max(min_samples_split, 2 * min_samples_leaf)

        fraction = _check_float("min_weight_fraction_leaf", self.min_weight_fraction_leaf,
                                0.0, 0.5)
        min_weight_leaf = fraction * total_weight

        max_features = self.max_features
        if max_features is None:
            n_draw = n_features
        elif isinstance(max_features, str):
            if max_features == "sqrt":
                n_draw = max(1, int(np.sqrt(n_features)))
            elif max_features == "log2":
                n_draw = max(1, int(np.log2(n_features)))
            else:
                raise ValueError("max_features must be None, 'sqrt', 'log2', an int or a "
                                 f"float in (0, 1], got {max_features!r}")
        elif isinstance(max_features, numbers.Integral) and not isinstance(max_features, bool):
            n_draw = _check_int("max_features", max_features, 1)
            if n_draw > n_features:
                raise ValueError(f"max_features must be <= n_features = {n_features}, got "
                                 f"{max_features}")
        else:
            fraction = _check_float("max_features", max_features, 0.0, 1.0, low_open=True)
            n_draw = max(1, int(fraction * n_features))

        max_leaf_nodes = _check_int("max_leaf_nodes", self.max_leaf_nodes, 2, allow_none=True)
        min_impurity_decrease = _check_float("min_impurity_decrease",
                                             self.min_impurity_decrease, 0.0, np.inf)
        impurity_threshold = _check_float("impurity_threshold", self.impurity_threshold,
                                          0.0, np.inf)
        purity_threshold = 1.0
        if self._task == "classification":
            purity_threshold = _check_float("purity_threshold", self.purity_threshold, 0.0,
                                            1.0, low_open=True)
        categorical_split = getattr(self, "categorical_split", "subset")
        if not isinstance(categorical_split, str) or categorical_split not in \
                CATEGORICAL_SPLITS:
            raise ValueError("categorical_split must be 'subset', 'one_vs_rest' or "
                             f"'multiway', got {categorical_split!r}")
        mode = CATEGORICAL_SPLITS[categorical_split]
        if mode == MULTIWAY and criterion not in criteria.MULTIWAY_CRITERIA:
            raise ValueError(f"criterion={self.criterion!r} scores binary splits only; "
                             "categorical_split='multiway' needs 'entropy', 'gain_ratio', "
                             "'gini', 'misclassification', 'squared_error' or a Criterion "
                             "with an impurity function")
        given = getattr(self, "max_exhaustive_categories", 10)
        max_exhaustive = _check_int("max_exhaustive_categories", given, 1)
        if max_exhaustive > _MAX_EXHAUSTIVE_LIMIT:
            raise ValueError(f"max_exhaustive_categories must be <= {_MAX_EXHAUSTIVE_LIMIT} "
                             f"(2**(m-1) partitions per node), got {given}")
        max_subset_size = _check_int("max_subset_size", getattr(self, "max_subset_size", None),
                                     1, allow_none=True)
        category_smoothing = _check_float(
            "category_smoothing", getattr(self, "category_smoothing", CATEGORY_SMOOTHING),
            0.0, np.inf)
        min_samples_category = getattr(self, "min_samples_category", MIN_SAMPLES_CATEGORY)
        if isinstance(min_samples_category, str) and min_samples_category == "auto":
            min_samples_category = AUTO_MIN_SAMPLES_CATEGORY if mode == SUBSET else 0
        min_samples_category = _check_float("min_samples_category", min_samples_category,
                                            0.0, np.inf)
        max_one_vs_rest = _check_int(
            "max_one_vs_rest_categories",
            getattr(self, "max_one_vs_rest_categories", MAX_ONE_VS_REST_CATEGORIES), 0)
        subset_penalty = _check_float(
            "subset_penalty", getattr(self, "subset_penalty", SUBSET_PENALTY), 0.0, np.inf)
        encoder = getattr(self, "_encoder", None)
        quantile = 0.5
        if criterion == criteria.QUANTILE:
            quantile = getattr(self, "quantile", None)
            if quantile is None:
                raise ValueError("criterion='quantile' needs the quantile to estimate: pass "
                                 "quantile=, a float in (0, 1) (0.5: the median)")
            quantile = _check_float("quantile", quantile, 0.0, 1.0, low_open=True,
                                    high_open=True)
        categorical = [] if encoder is None else \
            np.flatnonzero(np.asarray(encoder.feature_kind_) == FEATURE_CATEGORICAL).tolist()
        if criterion in criteria.ORDER_CRITERIA and categorical:
            raise ValueError(f"criterion={self.criterion!r} splits numeric and ordinal "
                             f"features only; the categorical features {categorical} need "
                             "another criterion, or an ordinal or one-hot encoding")
        return GrowParams(
            criterion=grown_criterion,
            is_regression=self._task == "regression",
            random_splitter=self.splitter == "random",
            seed=_seed_of(self.random_state) if seed is None else seed,
            max_depth=_MAX_DEPTH_UNLIMITED if max_depth is None else max_depth,
            min_samples_split=min_samples_split,
            min_samples_leaf=min_samples_leaf,
            min_weight_leaf=min_weight_leaf,
            max_features=n_draw,
            max_leaf_nodes=max_leaf_nodes or 0,
            min_impurity_decrease=min_impurity_decrease,
            purity_threshold=purity_threshold,
            impurity_threshold=impurity_threshold,
            feature_kind=None if encoder is None else encoder.feature_kind_,
            n_categories=None if encoder is None else encoder.n_categories_,
            categorical_mode=mode,
            max_exhaustive_categories=max_exhaustive,
            max_subset_size=max_subset_size or 0,
            category_smoothing=category_smoothing,
            min_samples_category=min_samples_category,
            max_one_vs_rest_categories=max_one_vs_rest,
            subset_penalty=subset_penalty,
            monotonic=self._monotonic(n_features, encoder, n_classes),
            interaction=self._interactions(n_features),
            quantile=quantile,
            n_outputs=n_outputs,
        )

    def _order_quantile(self):
        """The alpha of an order criterion (absolute_error: 0.5; quantile: ``quantile``),
        None for the others (their nodes' values are means or class weights)."""
        if isinstance(self.criterion, str) and self.criterion == "absolute_error":
            return 0.5
        if isinstance(self.criterion, str) and self.criterion == "quantile":
            return float(self.quantile)
        return None

    # -- fitting -----------------------------------------------------------------------------
    def _fit_tree(self, X, target, sample_weight, n_stats, n_classes):
        check_weight_total(sample_weight)  # class weights may have scaled them
        honest, honest_fraction = _check_honest(getattr(self, "honest", False),
                                                getattr(self, "honest_fraction", 0.5))
        store = _check_store_leaf_samples(self)
        if target.ndim == 2 and (honest or store):
            raise ValueError(f"{'honest=True' if honest else 'store_leaf_samples=True'} "
                             "needs a single-output y; y has "
                             f"{target.shape[1]} columns")
        if is_sparse(X) and honest and self._order_quantile() is not None:
            # an order criterion's honest values are quantiles of the rows along each path
            # (honest._node_quantiles): dense rows; the others walk the stored values
            X = sparse_to_dense(X, "X", FIT_DENSE_COPIES)
        seed = None
        estimation_weight = sample_weight
        if honest:
            seed = _seed_of(self.random_state)
            structure = split_rows(seed, sample_weight, honest_fraction)
            estimation_weight = np.where(structure, 0.0, sample_weight)
            sample_weight = np.where(structure, sample_weight, 0.0)
        self._grow_tree(X, target, sample_weight, n_stats, n_classes, seed)
        if honest:
            self.tree_ = reestimate(self.tree_, X, target, estimation_weight,
                                    self._order_quantile(),
                                    self._monotonic(X.shape[1], getattr(self, "_encoder", None),
                                                    n_classes))
        if store:
            blocks = leaf_samples.collect(self.tree_, X, estimation_weight,
                                          (estimation_weight > 0).astype(np.float64))
            self.leaf_samples_ = leaf_samples.assemble([blocks], target)[0]
        elif hasattr(self, "leaf_samples_"):
            del self.leaf_samples_
        return self

    def _grow_tree(self, X, target, sample_weight, n_stats, n_classes, seed=None):
        n_features = X.shape[1]
        # Samples of weight 0 are left out of the growth (the presort keeps the others,
        # renumbered): they place no threshold and count in no node, so fitting with a zero
        # weight is fitting without the row, and the fractions of min_samples_* are of the
        # rows that count.
        keep = sample_weight > 0.0
        dropped = not keep.all()
        all_targets = target
        if dropped:
            target = target[keep]
            sample_weight = sample_weight[keep]
        n_samples = sample_weight.shape[0]
        n_outputs = target.shape[1] if target.ndim == 2 else 1
        params = self._grow_params(n_samples, n_features, float(sample_weight.sum()),
                                   n_classes, seed, n_outputs)
        ccp_alpha = _check_float("ccp_alpha", self.ccp_alpha, 0.0, np.inf)
        presorted = None
        # a small input's levels are searched faster than threads start on them
        jobs = resolve_n_jobs(self.n_jobs)  # validated whatever the input's size
        if n_samples * n_features < _PARALLEL_FIT_VALUES:
            jobs = 1
        with n_threads(jobs):
            if dropped and is_sparse(X):
                X = X[keep]
            elif dropped and sample_order_growth(params, sample_weight, n_features, X=X):
                presorted = SampleX.of(X, params, keep)
            elif dropped:
                presorted = Presorted.of(X, all_targets, not params.has_labels,
                                         n_classes).subset(keep)
            tree = TreeBuilder(params).build(X, target, sample_weight, n_stats, n_classes,
                                             presorted)
        self.tree_ = pruning.cost_complexity(tree, ccp_alpha)
        self.n_features_in_ = n_features
        self.n_outputs_ = n_outputs
        self.max_features_ = params.max_features

    def _validate_fit_X(self, X, keep_sparse=False):
        """X encoded for the kernels (categories to codes, missing values to NaN); learns
        the feature kinds and categories (``categories_``). ``keep_sparse``: a sparse X of
        numeric features stays sparse (checked, float), for the sparse growth of
        :mod:`jitree.model.builder`; otherwise it becomes its dense copy."""
        names = feature_names_of(X)
        if names is not None:
            check_encodable_names(names)
        encoder = FeatureEncoder(getattr(self, "categorical_features", None),
                                 getattr(self, "ordinal_features", None))
        if (keep_sparse and is_sparse(X) and getattr(self, "categorical_features", None) is None
                and getattr(self, "ordinal_features", None) is None):
            X = check_sparse_X(X)
            encoder.fit_transform(np.zeros((1, X.shape[1]), dtype=X.dtype))
            nan_columns = np.zeros(X.shape[1], dtype=bool)
            nan_columns[np.repeat(np.arange(X.shape[1]), np.diff(X.indptr))[
                np.isnan(X.data)]] = True  # X is CSC: its stored values column by column
            encoder.may_have_nan_ = bool(nan_columns.any())
            self._encoder = encoder
            self.categories_ = encoder.categories_
            if hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
            self.missing_values_in_feature_mask_ = nan_columns
            return X
        X = encoder.fit_transform(X)
        for attribute in ("feature_names_in_",):
            if hasattr(self, attribute):
                delattr(self, attribute)
        if names is not None:
            self.feature_names_in_ = names
        self._encoder = encoder
        self.categories_ = encoder.categories_
        # which features had missing values in training (export marks where they go)
        self.missing_values_in_feature_mask_ = (
            _columns_with_nan(X) if encoder.may_have_nan_
            else np.zeros(X.shape[1], dtype=bool))
        return X

    def _feature_encoder(self):
        """The encoder of the fitted features (rebuilt from the tree and ``categories_`` for a
        model that was loaded or converted)."""
        encoder = getattr(self, "_encoder", None)
        if encoder is None or encoder.n_features_in_ != self.tree_.n_features:
            encoder = FeatureEncoder.from_fitted(self.tree_.feature_kind,
                                                 getattr(self, "categories_", None),
                                                 getattr(self, "feature_names_in_", None))
            self._encoder = encoder
        return encoder

    # -- post-pruning ------------------------------------------------------------------------
    def cost_complexity_pruning_path(self, X, y, sample_weight=None):
        """Minimal cost-complexity pruning path of the tree these parameters grow on (X, y).

        Returns a dict (also readable as attributes) with ``ccp_alphas``, the effective alpha
        of each successive prune (starting at 0, the full tree), and ``impurities``, the total
        leaf impurity sum_leaves W_t / W impurity_t of each pruned tree.
        """
        grown = type(self)(**{**self.get_params(), "ccp_alpha": 0.0})
        grown.fit(X, y, sample_weight=sample_weight)
        return pruning.cost_complexity_path(grown.tree_)

    def prune_reduced_error(self, X_prune, y_prune, sample_weight=None):
        """Reduced Error Pruning on a separate pruning set; returns self.

        Bottom-up, every internal node whose replacement by a leaf (predicting its own training
        prediction) makes no more errors (classification: misclassified weight) or no larger
        squared error (regression) on the pruning samples reaching it becomes a leaf. A
        regressor's ``leaf_samples_`` are dropped (its leaves change): fit again for
        quantiles.
        """
        X_prune = self._validate_predict_X(X_prune)
        # checked as a fit checks X: NaN is a missing value, infinity an error (the pruning
        # walk, unlike the prediction kernels, does not look for it)
        if has_nonfinite(X_prune) and np.isinf(X_prune).any():
            raise ValueError(f"Input X_prune contains infinity or a value too large for "
                             f"{X_prune.dtype}; only NaN is accepted as a missing value")
        target, node_prediction = self._pruning_targets(y_prune, X_prune.shape[0])
        sample_weight = check_sample_weight(sample_weight, X_prune.shape[0])
        if X_prune.dtype == np.float32:  # the walk compares in float64 like the Tree arrays
            X_prune = X_prune.astype(np.float64)
        self.tree_ = pruning.reduced_error(self.tree_, X_prune, target, sample_weight,
                                           node_prediction, self._task == "regression")
        # the pruned leaves are not those the leaf samples were gathered in
        self.__dict__.pop("leaf_samples_", None)
        return self

    @classmethod
    def _from_tree(cls, tree, classes=None, feature_names=None, params=None):
        """A fitted estimator around an existing ``tree`` (loading, conversion, pruning).

        ``classes``: the labels of the tree's value columns (classifiers); ``feature_names``:
        the fitted column names or None; ``params``: constructor parameters. The tree must have
        been checked by the caller; the estimator takes it over, read-only.
        """
        model = cls(**(params or {}))
        model.tree_ = tree._freeze()
        model.n_features_in_ = tree.n_features
        model.n_outputs_ = tree.n_outputs
        model.max_features_ = tree.n_features
        if feature_names is not None:
            model.feature_names_in_ = np.asarray(feature_names, dtype=object)
        if cls._task == "classification" and tree.n_outputs > 1:
            model.classes_ = [np.asarray(c) for c in classes]
            model.n_classes_ = [c.shape[0] for c in model.classes_]
        elif cls._task == "classification":
            model.classes_ = np.asarray(classes)
            model.n_classes_ = model.classes_.shape[0]
        return model

    # -- prediction --------------------------------------------------------------------------
    def _node_layout(self):
        """``(walk, roots, table)`` as a forest's :meth:`_node_layout` gives them: this tree's
        :class:`~jitree.kernels.records.TreeWalk`, its root, and what each node predicts
        (class probabilities or the mean)."""
        table = (self._node_proba() if self._task == "classification"
                 else self.tree_.value)
        return self.tree_.walk_arrays(), np.zeros(1, dtype=np.int64), table

    def _predict_chunks(self, chunks, validated_method):
        """Predictions of an iterator of chunks (2-D arrays or DataFrames), one chunk at a
        time, concatenated: input memory is bounded by a chunk."""
        pieces = [validated_method(self._validate_predict_X(chunk)) for chunk in chunks]
        if not pieces:
            raise ValueError("X is an empty iterator of chunks")
        if isinstance(pieces[0], list):  # a multi-output classifier's probabilities
            return [np.concatenate(output) for output in zip(*pieces, strict=True)]
        return np.concatenate(pieces)

    def _validate_predict_X(self, X, by_position=False, owner=None):
        """X checked against the fitted features. ``by_position``: the columns are taken in
        order without a feature-name check (files without names, streamed chunks).
        ``owner``: the estimator the messages name (a forest checking X for its trees)."""
        check_is_fitted(self)
        owner = self if owner is None else owner
        if isinstance(X, CsrRows):  # checked when made (_chunked)
            return X
        if not by_position:
            reordered = match_feature_names(owner, getattr(self, "feature_names_in_", None),
                                            feature_names_of(X), hasattr(X, "shape"))
            if reordered is not None:
                X = X[reordered]  # same columns, another order: match by name
        encoder = self._feature_encoder()
        if encoder.is_trivial:
            X = check_X(X, finite=False)  # the prediction kernels check finiteness
        else:
            if not hasattr(X, "shape"):
                X = np.asarray(X, dtype=object)
            if len(X.shape) == 2 and X.shape[1] != self.n_features_in_:
                raise ValueError(f"X has {X.shape[1]} features, but {type(owner).__name__} "
                                 f"is expecting {self.n_features_in_} features as input.")
            X = encoder.transform(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(owner).__name__} is "
                             f"expecting {self.n_features_in_} features as input.")
        return X

    def _validate_walk_X(self, X):
        """X for the walks of predict, predict_proba and apply: a float NumPy X of a tree
        with flat category tests is walked as given, its categories looked up by value in
        the walk (:class:`CategoryValueRows`: no encoded copy of X, as for a forest; 1M rows
        x 20 columns, 5 categorical: the encoding took longer than the walk); anything else
        is validated (:meth:`_validate_predict_X`): an ndarray subclass (np.matrix is
        refused there) too. The names were matched here: X's encoding, taken when it holds an
        infinity, goes by position. A plain C- or F-contiguous float32 / float64 ndarray of
        ``n_features_in_`` columns, of a tree whose features are all numeric, is returned as
        it is, its names matched (:func:`passes_unchanged`)."""
        check_is_fitted(self)
        tree = self.tree_
        if not walks_as_given(X, self.n_features_in_):
            return self._validate_predict_X(X)
        if not tree.is_binary_threshold and tree.has_flat_categories:
            categories = tree.value_categories(self._feature_encoder())
            if categories is not None:
                match_feature_names(self, getattr(self, "feature_names_in_", None), None)
                return CategoryValueRows(np.ascontiguousarray(X), categories,
                                         lambda: self._validate_predict_X(X, by_position=True))
        if passes_unchanged(X, self._feature_encoder()):
            match_feature_names(self, getattr(self, "feature_names_in_", None), None)
            return X
        return self._validate_predict_X(X)

    def _chunked(self, X, rows=False):
        """``(model, chunks)``: X's chunks to predict one at a time with ``model``'s
        validated methods (``chunks`` None: X is predicted whole, by this model).

        A sparse X is one :class:`~jitree.model.validation.CsrRows` chunk when ``rows`` (the
        caller's validated method reads it) and the model walks it (:meth:`_walks_rows`);
        otherwise it goes by dense blocks of rows. When every feature is numeric, the blocks
        hold only the columns the trees test, and ``model`` is a copy of this one whose trees
        read those columns (:meth:`_on_columns`): a block of a wide X then costs its stored
        values, not its rows times its columns."""
        if not is_sparse(X):
            return self, prediction_chunks(X)
        check_is_fitted(self, "estimators_" if hasattr(self, "n_estimators") else "tree_")
        if len(X.shape) == 2 and X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is "
                             f"expecting {self.n_features_in_} features as input.")
        if rows and self._walks_rows():
            match_feature_names(self, getattr(self, "feature_names_in_", None), None)
            reduced = self._on_columns()
            if reduced is not None and 2 * len(reduced[1]) <= X.shape[1]:
                # the dense rows of the walk then hold the tested columns only (a
                # shallow tree of a wide X: a few, in the first level of cache)
                model, columns = reduced
                return model, [CsrRows(X, columns=columns)]
            return self, [CsrRows(X)]
        reduced = self._on_columns()
        if reduced is None:
            return self, prediction_chunks(X)
        # a sparse X has no column names: the warning a named fit gives for any array
        match_feature_names(self, getattr(self, "feature_names_in_", None), None)
        model, columns = reduced
        return model, sparse_row_blocks(X, columns=columns)

    def _walks_rows(self):
        """Whether the validated predictions walk a :class:`CsrRows` X (see
        :meth:`_chunked`): a tree of threshold tests on numeric features (X as given)."""
        return self._feature_encoder().is_trivial and self.tree_.numeric_thresholds

    def _on_columns(self):
        """``(model, columns)``: a copy of this fitted model whose tree reads only the
        ``columns`` it tests (see :meth:`_chunked`), or None when a feature is not numeric."""
        tree = self.tree_
        if np.any(tree.feature_kind != 0):
            return None

        # cached on the tree (a refit grows a new one), for this estimator (several may
        # share one tree: _from_tree)
        cached = tree.cached(("on_columns", id(self)), lambda: [None])
        if cached[0] is None or cached[0][2]() is not self:
            columns = _tested_columns([tree])
            model = _reduced_copy(self, len(columns))
            model.tree_ = tree.on_features(columns)
            cached[0] = (model, columns, weakref.ref(self))
        return cached[0][:2]

    def apply(self, X):
        """Index of the leaf each row of X ends in."""
        model, chunks = self._chunked(X, rows=True)
        if chunks is not None:
            return model._predict_chunks(chunks, model._apply_validated)
        return self._apply_validated(self._validate_walk_X(X))

    def _apply_validated(self, X):
        with n_threads(self.n_jobs):
            return self.tree_.apply(X)

    def decision_path(self, X):
        """Sparse CSR indicator (n_samples, n_nodes) of the nodes each row passes through.

        Needs scipy (``pip install 'jitree[scipy]'``).
        """
        sparse = _scipy_sparse("decision_path")
        return self._decision_path_blocks(X, lambda pieces: sparse.vstack(pieces, "csr"))

    def _decision_path_blocks(self, X, stack):
        """:meth:`decision_path` of X, of each of its chunks stacked by ``stack`` (see
        :func:`~jitree.model.validation.prediction_chunks`)."""
        model, chunks = self._chunked(X)
        if chunks is None:
            return self._decision_path_validated(self._validate_predict_X(X))
        pieces = [model._decision_path_validated(model._validate_predict_X(chunk))
                  for chunk in chunks]
        if not pieces:
            raise ValueError("X is an empty iterator of chunks")
        return stack(pieces)

    def _decision_path_validated(self, X):
        with n_threads(self.n_jobs):
            return self.tree_.decision_path(X)

    def get_depth(self):
        """Depth of the fitted tree (the root alone: 0)."""
        check_is_fitted(self)
        return self.tree_.max_depth

    def get_n_leaves(self):
        """Number of leaves of the fitted tree."""
        check_is_fitted(self)
        return self.tree_.n_leaves

    @property
    def feature_importances_(self):
        """Impurity-based importance of each feature, normalised to sum 1."""
        check_is_fitted(self)
        return self.tree_.compute_feature_importances()

    def _more_tags_common(self, tags):
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        tags.target_tags.multi_output = True
        tags.non_deterministic = False
        return tags
