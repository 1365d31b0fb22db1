"""Forests on jitree's tree engine: random forests and extra trees.

- One presort of X serves every tree: each tree copies, in sorted order, only the samples of
  its bootstrap (:meth:`Presorted.subset`), renumbered 0 .. n_bag - 1 so that its per-sample
  arrays stay small, with the bootstrap multiplicities as sample weights; X itself is never
  copied. When a tree scans fewer than half of the features at each node (the default
  ``max_features="sqrt"``), the copy leaves the classes out and the scans read them by sample
  (:func:`_carries_labels`): every level's partition then moves less.
- Trees grow concurrently on a thread pool (``n_jobs`` threads), each with single-threaded
  kernels, which release the GIL.
- Tree ``t`` depends only on its seed, drawn from ``random_state`` up front, so a forest is
  the same whatever ``n_jobs``, and whatever groups its trees are grown in: ``fit`` is three
  steps, ``_prepare_fit`` (validation, seeds: a picklable :class:`_ForestPlan`),
  :func:`_grow_trees` (any subset of the trees, with its own presort) and ``_finish_fit``
  (fitted attributes from all the trees); :func:`jitree.dask.fit_forest` runs the middle
  step on a cluster's workers.
- Prediction walks every tree for each block of rows in one parallel kernel
  (:func:`jitree.kernels.predict.predict_flat`) and averages the trees' class probabilities
  (classification) or means (regression).
"""

import dataclasses
import numbers
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._threading import n_threads, resolve_n_jobs
from ..kernels import predict as _predict
from ..kernels.records import FlatTrees, TreeWalk
from . import pruning
from ._base import BaseDecisionTree, _check_float, _check_int, _seed_of
from ._params import ParamsMixin
from .builder import GrowParams, Presorted, TreeBuilder
from .classifier import DecisionTreeClassifier, _class_weight_factors
from .regressor import DecisionTreeRegressor, r2
from .tree import SPLIT_SUBSET, infinity_bits, raise_infinite, read_only
from .validation import (
    check_is_fitted,
    check_poisson_target,
    check_sample_weight,
    check_y,
    is_chunk_iterator,
)

# Most rows per parallel task of forest prediction; each task walks its rows through every
# tree in turn, so every task reloads every tree: fewer, larger tasks reload less (measured
# on 30 trees of 50k nodes: 16k rows ~1.6x faster than 1k rows; on 100 trees, 1M rows, 2
# threads: 128k-row tasks (capped at 4 per thread, 125k) 12% faster than 16k-row ones).
FOREST_CHUNK_ROWS = 1 << 17

_TREE_PARAMS = ("criterion", "max_depth", "min_samples_split", "min_samples_leaf",
                "min_weight_fraction_leaf", "max_features", "max_leaf_nodes",
                "min_impurity_decrease", "ccp_alpha", "categorical_features",
                "ordinal_features", "categorical_split", "max_exhaustive_categories",
                "max_subset_size")


@dataclasses.dataclass(frozen=True)
class _ForestPlan:
    """Everything needed to grow any tree of a forest, computed once from the estimator and
    the training data by :meth:`BaseForest._prepare_fit`; small and picklable, so that trees
    can be grown elsewhere (another thread, process or machine) by :func:`_grow_trees`.

    Tree ``t`` is grown from ``seeds[t]`` alone, which is what makes a forest grown in groups
    the same as one grown in a single call.
    """

    seeds: np.ndarray
    bootstrap: bool
    n_bootstrap: int
    n_samples: int
    n_features: int
    n_stats: int
    n_classes: int
    classes: np.ndarray | None
    class_factors: object  # None, per-class factors, or "balanced_subsample"
    grow_params: GrowParams
    min_weight_fraction_leaf: float
    ccp_alpha: float
    template: object  # the unfitted tree estimator: parameters and feature names of each tree

    @property
    def n_estimators(self):
        return self.seeds.shape[0]


def _bootstrap_counts(seed, n_samples, n_bootstrap):
    """How many times each sample is drawn into the bag of the tree with ``seed``."""
    rng = np.random.default_rng(seed)
    return np.bincount(rng.integers(0, n_samples, n_bootstrap), minlength=n_samples)


def _class_weighted(weight, target, factors, n_classes):
    if factors is None:
        return weight
    index = target.astype(np.intp)
    if isinstance(factors, str):  # balanced_subsample: 'balanced' on this tree's bag
        drawn = np.bincount(index, weights=weight, minlength=n_classes)
        factors = weight.sum() / (n_classes * np.where(drawn > 0, drawn, 1.0))
    return weight * factors[index]


def _carries_labels(max_features, n_features):
    """Whether a forest tree's sorted arrays carry the classes (see
    :meth:`~jitree.model.builder.Presorted.subset`). A tree that scans fewer than half of the
    features it partitions at every level reads them by sample instead: a level then moves
    8 bytes per sample and feature instead of 9, in two arrays instead of three."""
    return 2 * max_features >= n_features


def _grow_trees(plan, X, target, sample_weight, tree_indices, n_jobs=None):
    """The trees ``tree_indices`` of the forest described by ``plan``, as pruned
    :class:`~jitree.Tree` objects in that order.

    ``X``, ``target`` and ``sample_weight`` are the arrays :meth:`BaseForest._prepare_fit`
    returned with the plan. X is presorted once here for all these trees; they then grow
    concurrently on ``n_jobs`` threads (None: all cores), each with single-threaded kernels.
    """
    tree_indices = [int(t) for t in tree_indices]
    params = plan.grow_params
    with n_threads(n_jobs):
        presorted = Presorted.of(X, target, params.is_regression, plan.n_classes)

    carry_labels = _carries_labels(params.max_features, plan.n_features)

    def grow(t):
        seed = plan.seeds[t]
        weight = sample_weight
        if plan.bootstrap:
            weight = weight * _bootstrap_counts(seed, plan.n_samples, plan.n_bootstrap)
        weight = _class_weighted(weight, target, plan.class_factors, plan.n_classes)
        total = float(weight.sum())
        if not total > 0:
            raise ValueError("a bootstrap sample has zero total weight; use more "
                             "samples or bootstrap=False")
        tree_params = dataclasses.replace(
            params, seed=int(seed), min_weight_leaf=plan.min_weight_fraction_leaf * total)
        bag = weight > 0
        with n_threads(1):
            tree = TreeBuilder(tree_params).build(X, target[bag], weight[bag], plan.n_stats,
                                                  plan.n_classes,
                                                  presorted.subset(bag, carry_labels))
        return pruning.cost_complexity(tree, plan.ccp_alpha)

    workers = min(resolve_n_jobs(n_jobs), len(tree_indices))
    if workers <= 1:
        return [grow(t) for t in tree_indices]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(grow, tree_indices))


class BaseForest(ParamsMixin):
    """Shared by the four forest estimators (not public)."""

    _tree_class = None
    _splitter = "best"

    # -- fitting -----------------------------------------------------------------------------
    def _tree_template(self):
        params = {name: getattr(self, name) for name in _TREE_PARAMS}
        if self._tree_class is DecisionTreeClassifier:
            params["class_weight"] = None  # applied by the forest to the sample weights
        return self._tree_class(splitter=self._splitter, random_state=0, n_jobs=1, **params)

    def _n_bootstrap(self, n_samples):
        if not self.bootstrap:
            if self.max_samples is not None:
                raise ValueError("max_samples is only used with bootstrap=True; set it to None")
            return n_samples
        max_samples = self.max_samples
        if max_samples is None:
            return n_samples
        if isinstance(max_samples, numbers.Integral) and not isinstance(max_samples, bool):
            count = _check_int("max_samples", max_samples, 1)
            # checked before the bootstrap indices are allocated
            if count > n_samples:
                raise ValueError(f"max_samples must be <= n_samples = {n_samples} when an "
                                 f"int, got {count}; give a float in (0, 1] for a fraction")
            return count
        fraction = _check_float("max_samples", max_samples, 0.0, 1.0, low_open=True)
        return max(1, round(fraction * n_samples))

    def fit(self, X, y, sample_weight=None):
        """Grow ``n_estimators`` trees on bootstrap samples (or on all samples) of (X, y)."""
        plan, X, target, sample_weight = self._prepare_fit(X, y, sample_weight)
        trees = _grow_trees(plan, X, target, sample_weight, range(plan.n_estimators),
                            self.n_jobs)
        return self._finish_fit(plan, trees, X, target)

    def _prepare_fit(self, X, y, sample_weight):
        """Validate the parameters and data and draw the trees' seeds: the :class:`_ForestPlan`
        and the arrays the trees grow on, ``(plan, X, target, sample_weight)``. The estimator
        itself is left unchanged."""
        template = self._tree_template()
        X = template._validate_fit_X(X)
        n_samples, n_features = X.shape
        n_estimators = _check_int("n_estimators", self.n_estimators, 1)
        if not isinstance(self.bootstrap, (bool, np.bool_)):
            raise TypeError(f"bootstrap must be True or False, got {self.bootstrap!r}")
        if not isinstance(self.oob_score, (bool, np.bool_)):
            raise TypeError(f"oob_score must be True or False, got {self.oob_score!r}")
        if self.oob_score and not self.bootstrap:
            raise ValueError("oob_score=True needs bootstrap=True (out-of-bag samples)")
        n_bootstrap = self._n_bootstrap(n_samples)
        sample_weight = check_sample_weight(sample_weight, n_samples)
        target, n_stats, n_classes, classes = self._encode_target(y, n_samples)
        class_factors = self._class_factors(classes, target, sample_weight)
        params = template._grow_params(n_samples, n_features, float(sample_weight.sum()))
        ccp_alpha = _check_float("ccp_alpha", self.ccp_alpha, 0.0, np.inf)
        seeds = np.random.RandomState(_seed_of(self.random_state) % 2**32).randint(
            np.iinfo(np.int32).max, size=n_estimators)
        resolve_n_jobs(self.n_jobs)  # a bad n_jobs fails here, before any tree grows
        plan = _ForestPlan(
            seeds=seeds, bootstrap=bool(self.bootstrap), n_bootstrap=n_bootstrap,
            n_samples=n_samples, n_features=n_features, n_stats=n_stats, n_classes=n_classes,
            classes=classes, class_factors=class_factors, grow_params=params,
            min_weight_fraction_leaf=self.min_weight_fraction_leaf, ccp_alpha=ccp_alpha,
            template=template)
        return plan, X, target, sample_weight

    def _finish_fit(self, plan, trees, X, target):
        """Set the fitted attributes from the plan and its grown ``trees`` (tree ``t`` at
        position ``t``), then the out-of-bag estimate if asked for; returns the estimator."""
        if len(trees) != plan.n_estimators:
            raise ValueError(f"expected {plan.n_estimators} trees, got {len(trees)}")
        template = plan.template
        if plan.classes is not None:
            self.classes_ = plan.classes
            self.n_classes_ = plan.classes.shape[0]
        self._seeds = plan.seeds
        self._n_bootstrap_samples = plan.n_bootstrap
        self._n_samples = plan.n_samples
        self.n_features_in_ = plan.n_features
        names = getattr(template, "feature_names_in_", None)
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.estimators_ = [self._wrap(tree, template, plan.grow_params.max_features)
                            for tree in trees]
        self.estimator_ = template
        self._layouts = {}
        if self.oob_score:
            self._compute_oob(X, target)
        return self

    def _wrap(self, tree, template, max_features):
        params = template.get_params()
        names = getattr(template, "feature_names_in_", None)
        model = self._tree_class._from_tree(tree, classes=getattr(self, "classes_", None),
                                            feature_names=names, params=params)
        model.max_features_ = max_features
        model.categories_ = template.categories_
        model._encoder = template._encoder
        model.missing_values_in_feature_mask_ = template.missing_values_in_feature_mask_
        return model

    def _class_factors(self, classes, target, sample_weight):
        return None

    # -- prediction --------------------------------------------------------------------------
    def _layout(self, dtype):
        """The trees' flat layouts concatenated (built once per X dtype)."""
        dtype = np.dtype(dtype)
        if dtype not in self._layouts:
            features, thresholds, lefts, roots, depths, tables = [], [], [], [], [], []
            missing_right = []
            offset = 0
            for model in self.estimators_:
                tree = model.tree_
                feature, threshold, left, max_depth, node_of_flat = tree.flat(dtype)
                missing_right.append(tree.flat_missing_right())
                features.append(feature)
                thresholds.append(threshold)
                lefts.append(left + offset)
                roots.append(offset)
                depths.append(max_depth)
                tables.append(self._node_table(model)[node_of_flat])
                offset += feature.shape[0]
            self._layouts[dtype] = (
                FlatTrees(*read_only(np.concatenate(features), np.concatenate(thresholds),
                                     np.concatenate(lefts).astype(np.int32),
                                     np.concatenate(missing_right)),
                          np.array(roots, dtype=np.int64), np.array(depths, dtype=np.int64)),
                np.ascontiguousarray(np.concatenate(tables)))
        return self._layouts[dtype]

    def _node_layout(self):
        """The trees' own arrays concatenated, for :func:`predict_nodes` (forests with
        categorical tests)."""
        if "nodes" not in self._layouts:
            parts = {name: [] for name in ("feature", "threshold", "children_left",
                                           "children_right", "split_kind", "missing_left",
                                           "category_offset", "category_bits",
                                           "multiway_slot")}
            roots, tables = [], []
            node_offset = bits_offset = slots_offset = 0
            for model in self.estimators_:
                tree = model.tree_
                for name in ("feature", "threshold", "split_kind", "missing_left",
                             "category_bits", "multiway_slot"):
                    parts[name].append(getattr(tree, name))
                for name in ("children_left", "children_right"):
                    children = getattr(tree, name)
                    parts[name].append(np.where(children >= 0, children + node_offset,
                                                children).astype(np.int32))
                offset = np.where(tree.split_kind == SPLIT_SUBSET, bits_offset, slots_offset)
                parts["category_offset"].append(
                    np.where(tree.category_offset >= 0, tree.category_offset + offset, -1))
                roots.append(node_offset)
                tables.append(self._node_table(model))
                node_offset += tree.node_count
                bits_offset += tree.category_bits.shape[0]
                slots_offset += tree.multiway_slot.shape[0]
            arrays = {name: read_only(np.ascontiguousarray(np.concatenate(values)))[0]
                      for name, values in parts.items()}
            arrays["category_offset"] = read_only(
                arrays["category_offset"].astype(np.int64))[0]
            self._layouts["nodes"] = (
                TreeWalk(arrays["feature"], arrays["threshold"], arrays["children_left"],
                         arrays["children_right"], arrays["split_kind"], arrays["missing_left"],
                         arrays["category_offset"], arrays["category_bits"],
                         arrays["multiway_slot"], self.estimators_[0].tree_.n_categories),
                np.array(roots, dtype=np.int64), np.ascontiguousarray(np.concatenate(tables)))
        return self._layouts["nodes"]

    def _validate_predict_X(self, X, by_position=False):
        """X checked against the fitted features, as the trees check it (the trees share the
        forest's features, names and encoder). ``by_position``: the columns are taken in order
        without a feature-name check (files without names, streamed chunks)."""
        check_is_fitted(self, "estimators_")
        return self.estimators_[0]._validate_predict_X(X, by_position=by_position)

    def _feature_encoder(self):
        """The encoder of the fitted features (the one the trees share)."""
        check_is_fitted(self, "estimators_")
        return self.estimators_[0]._feature_encoder()

    # an iterator of chunks, predicted one chunk at a time, as the trees do
    _predict_chunks = BaseDecisionTree._predict_chunks

    def _predict_mean(self, X):
        """Mean over the trees of each row's leaf table row (probabilities or means)."""
        return self._predict_mean_validated(self._validate_predict_X(X))

    def _predict_mean_validated(self, X):
        """:meth:`_predict_mean` of an X already through :meth:`_validate_predict_X`."""
        threshold_trees = all(model.tree_.is_binary_threshold for model in self.estimators_)
        with n_threads(self.n_jobs) as threads:
            # at least a few tasks per thread, so that small inputs still use every core
            chunk_rows = max(64, min(FOREST_CHUNK_ROWS, -(-X.shape[0] // (4 * threads))))
            if threshold_trees:
                flat, table = self._layout(X.dtype)
                out = np.empty((X.shape[0], table.shape[1]))
                if _predict.predict_flat(X, *infinity_bits(X), flat, table, chunk_rows, out):
                    raise_infinite(X, "X")
            else:
                walk, roots, table = self._node_layout()
                out = np.empty((X.shape[0], table.shape[1]))
                if _predict.predict_nodes(X, *infinity_bits(X), walk, roots, table,
                                          chunk_rows, out):
                    raise_infinite(X, "X")
        out /= len(self.estimators_)
        return out

    def apply(self, X):
        """Leaf index of each row in each tree, shape (n_samples, n_estimators)."""
        check_is_fitted(self, "estimators_")
        return np.column_stack([model.apply(X) for model in self.estimators_])

    @property
    def feature_importances_(self):
        """Mean of the trees' impurity-based importances, normalised to sum 1."""
        check_is_fitted(self, "estimators_")
        importances = np.mean([model.tree_.compute_feature_importances()
                               for model in self.estimators_], axis=0)
        total = importances.sum()
        return importances / total if total > 0 else importances

    @property
    def estimators_samples_(self):
        """The indices of the samples drawn into each tree's bag (with repetition), one array
        per tree; all samples without bootstrap."""
        check_is_fitted(self, "estimators_")
        n_samples = self._n_samples
        if not self.bootstrap:
            return [np.arange(n_samples) for _ in self.estimators_]
        return [np.repeat(np.arange(n_samples),
                          _bootstrap_counts(seed, n_samples, self._n_bootstrap_samples))
                for seed in self._seeds]

    def _oob_rows(self, t, n_samples):
        counts = _bootstrap_counts(self._seeds[t], n_samples, self._n_bootstrap_samples)
        return np.flatnonzero(counts == 0)

    def _compute_oob(self, X, target):
        n_samples = X.shape[0]
        total = None
        seen = np.zeros(n_samples)
        for t, model in enumerate(self.estimators_):
            rows = self._oob_rows(t, n_samples)
            if not rows.shape[0]:
                continue
            values = model.tree_.predict_table(np.ascontiguousarray(X[rows]),
                                               self._node_table(model))
            if total is None:
                total = np.zeros((n_samples, values.shape[1]))
            total[rows] += values
            seen[rows] += 1
        if total is None or not (seen > 0).any():
            raise ValueError("no sample is out of bag in any tree: oob_score needs more "
                             "trees or smaller bootstrap samples")
        if (seen == 0).any():
            warnings.warn(f"{int((seen == 0).sum())} samples were in every bootstrap sample "
                          "and have no out-of-bag prediction; they are left out of "
                          "oob_score_", UserWarning, stacklevel=4)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = total / seen[:, None]
        self._set_oob(mean, target, seen > 0)

    def __sklearn_is_fitted__(self):
        return hasattr(self, "estimators_")

    def _more_tags_common(self, tags):
        tags.input_tags.allow_nan = True
        tags.target_tags.multi_output = False
        return tags


class _ForestClassifier(BaseForest):
    _tree_class = DecisionTreeClassifier
    _task = "classification"

    def _encode_target(self, y, n_samples):
        y = check_y(y, n_samples, regression=False)
        try:
            classes, index = np.unique(y, return_inverse=True)
        except TypeError:
            raise ValueError("Unknown label type: the labels of y cannot be compared with "
                             "each other (mixed types)") from None
        n_classes = classes.shape[0]
        return index.reshape(-1).astype(np.float64), n_classes, n_classes, classes

    def _class_factors(self, classes, target, sample_weight):
        if self.class_weight is None or self.class_weight == "balanced_subsample":
            return self.class_weight
        return _class_weight_factors(self.class_weight, classes, target.astype(np.intp),
                                     sample_weight)

    def _node_table(self, model):
        return model._node_proba()

    def predict_proba(self, X):
        """Mean class probabilities of the trees. X may also be an iterator of chunks."""
        if is_chunk_iterator(X):
            return self._predict_chunks(X, self._predict_proba_validated)
        return self._predict_mean(X)

    def _predict_proba_validated(self, X):
        return self._predict_mean_validated(X)

    def predict_log_proba(self, X):
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def predict(self, X):
        """The class with the highest mean probability. X may also be an iterator of
        chunks."""
        if is_chunk_iterator(X):
            return self._predict_chunks(X, self._predict_validated)
        return self._predict_validated(self._validate_predict_X(X))

    def _predict_validated(self, X):
        proba = self._predict_mean_validated(X)
        return self.classes_.take(np.argmax(proba, axis=1))

    def score(self, X, y, sample_weight=None):
        return DecisionTreeClassifier.score(self, X, y, sample_weight)

    def _set_oob(self, mean, target, has_oob):
        self.oob_decision_function_ = mean
        predicted = np.argmax(np.where(has_oob[:, None], mean, 0.0), axis=1)
        self.oob_score_ = float(np.mean(predicted[has_oob] == target[has_oob]))

    def __sklearn_tags__(self):
        return DecisionTreeClassifier.__sklearn_tags__(self)


class _ForestRegressor(BaseForest):
    _tree_class = DecisionTreeRegressor
    _task = "regression"

    def _encode_target(self, y, n_samples):
        y = check_y(y, n_samples, regression=True)
        if isinstance(self.criterion, str) and self.criterion == "poisson":
            check_poisson_target(y)
        return y, 2, 0, None

    def _node_table(self, model):
        return model.tree_.value

    def predict(self, X):
        """Mean of the trees' predictions. X may also be an iterator of chunks."""
        if is_chunk_iterator(X):
            return self._predict_chunks(X, self._predict_validated)
        return self._predict_mean(X)[:, 0]

    def _predict_validated(self, X):
        return self._predict_mean_validated(X)[:, 0]

    def score(self, X, y, sample_weight=None):
        return DecisionTreeRegressor.score(self, X, y, sample_weight)

    def _set_oob(self, mean, target, has_oob):
        self.oob_prediction_ = mean[:, 0]
        target = target[has_oob]
        varies = target.shape[0] > 0 and target.max() > target.min()
        self.oob_score_ = r2(target, mean[has_oob, 0], np.ones(target.shape[0])) if varies \
            else 0.0

    def __sklearn_tags__(self):
        return DecisionTreeRegressor.__sklearn_tags__(self)


def _categorical_init(self, categorical_features, ordinal_features, categorical_split,
                      max_exhaustive_categories, max_subset_size):
    self.categorical_features = categorical_features
    self.ordinal_features = ordinal_features
    self.categorical_split = categorical_split
    self.max_exhaustive_categories = max_exhaustive_categories
    self.max_subset_size = max_subset_size


def _forest_init(self, n_estimators, criterion, max_depth, min_samples_split, min_samples_leaf,
                 min_weight_fraction_leaf, max_features, max_leaf_nodes, min_impurity_decrease,
                 bootstrap, oob_score, n_jobs, random_state, ccp_alpha, max_samples):
    self.n_estimators = n_estimators
    self.criterion = criterion
    self.max_depth = max_depth
    self.min_samples_split = min_samples_split
    self.min_samples_leaf = min_samples_leaf
    self.min_weight_fraction_leaf = min_weight_fraction_leaf
    self.max_features = max_features
    self.max_leaf_nodes = max_leaf_nodes
    self.min_impurity_decrease = min_impurity_decrease
    self.bootstrap = bootstrap
    self.oob_score = oob_score
    self.n_jobs = n_jobs
    self.random_state = random_state
    self.ccp_alpha = ccp_alpha
    self.max_samples = max_samples


class RandomForestClassifier(_ForestClassifier):
    """A random forest classifier: trees on bootstrap samples, ``max_features`` features
    drawn per node, class probabilities averaged.

    Parameters have scikit-learn's names and meanings: ``n_estimators``, the tree parameters
    (``criterion``, ``max_depth``, ``min_samples_split``, ``min_samples_leaf``,
    ``min_weight_fraction_leaf``, ``max_features``, ``max_leaf_nodes``,
    ``min_impurity_decrease``, ``ccp_alpha`` and the categorical ones: ``categorical_features``,
    ``ordinal_features``, ``categorical_split``, ``max_exhaustive_categories``,
    ``max_subset_size``), ``bootstrap``, ``oob_score``, ``n_jobs`` (trees
    grown concurrently; threads of prediction), ``random_state``, ``class_weight`` (dict,
    "balanced" or "balanced_subsample") and ``max_samples`` (bootstrap size: int or fraction).

    Attributes: ``estimators_`` (fitted DecisionTreeClassifier), ``classes_``, ``n_classes_``,
    ``n_features_in_``, ``feature_names_in_``, ``feature_importances_``, ``oob_score_`` and
    ``oob_decision_function_`` (with ``oob_score=True``).
    """

    def __init__(self, n_estimators=100, criterion="gini", max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_features="sqrt",
                 max_leaf_nodes=None, min_impurity_decrease=0.0, bootstrap=True,
                 oob_score=False, n_jobs=None, random_state=None, class_weight=None,
                 ccp_alpha=0.0, max_samples=None, categorical_features=None,
                 ordinal_features=None, categorical_split="subset",
                 max_exhaustive_categories=10, max_subset_size=None):
        _forest_init(self, n_estimators, criterion, max_depth, min_samples_split,
                     min_samples_leaf, min_weight_fraction_leaf, max_features, max_leaf_nodes,
                     min_impurity_decrease, bootstrap, oob_score, n_jobs, random_state,
                     ccp_alpha, max_samples)
        _categorical_init(self, categorical_features, ordinal_features, categorical_split,
                          max_exhaustive_categories, max_subset_size)
        self.class_weight = class_weight


class ExtraTreesClassifier(_ForestClassifier):
    """Extremely randomised trees: one random threshold per drawn feature and node, all
    samples by default (``bootstrap=False``). Parameters as RandomForestClassifier."""

    _splitter = "random"

    def __init__(self, n_estimators=100, criterion="gini", max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_features="sqrt",
                 max_leaf_nodes=None, min_impurity_decrease=0.0, bootstrap=False,
                 oob_score=False, n_jobs=None, random_state=None, class_weight=None,
                 ccp_alpha=0.0, max_samples=None, categorical_features=None,
                 ordinal_features=None, categorical_split="subset",
                 max_exhaustive_categories=10, max_subset_size=None):
        _forest_init(self, n_estimators, criterion, max_depth, min_samples_split,
                     min_samples_leaf, min_weight_fraction_leaf, max_features, max_leaf_nodes,
                     min_impurity_decrease, bootstrap, oob_score, n_jobs, random_state,
                     ccp_alpha, max_samples)
        _categorical_init(self, categorical_features, ordinal_features, categorical_split,
                          max_exhaustive_categories, max_subset_size)
        self.class_weight = class_weight


class RandomForestRegressor(_ForestRegressor):
    """A random forest regressor: trees on bootstrap samples, predictions averaged
    (``max_features=1.0``: all features, as scikit-learn's default). Parameters as
    RandomForestClassifier without ``class_weight``; ``oob_prediction_`` with
    ``oob_score=True``."""

    def __init__(self, n_estimators=100, criterion="squared_error", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features=1.0, max_leaf_nodes=None, min_impurity_decrease=0.0,
                 bootstrap=True, oob_score=False, n_jobs=None, random_state=None,
                 ccp_alpha=0.0, max_samples=None, categorical_features=None,
                 ordinal_features=None, categorical_split="subset",
                 max_exhaustive_categories=10, max_subset_size=None):
        _forest_init(self, n_estimators, criterion, max_depth, min_samples_split,
                     min_samples_leaf, min_weight_fraction_leaf, max_features, max_leaf_nodes,
                     min_impurity_decrease, bootstrap, oob_score, n_jobs, random_state,
                     ccp_alpha, max_samples)
        _categorical_init(self, categorical_features, ordinal_features, categorical_split,
                          max_exhaustive_categories, max_subset_size)


class ExtraTreesRegressor(_ForestRegressor):
    """Extremely randomised trees for regression (``bootstrap=False``, ``max_features=1.0``).
    Parameters as RandomForestRegressor."""

    _splitter = "random"

    def __init__(self, n_estimators=100, criterion="squared_error", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features=1.0, max_leaf_nodes=None, min_impurity_decrease=0.0,
                 bootstrap=False, oob_score=False, n_jobs=None, random_state=None,
                 ccp_alpha=0.0, max_samples=None, categorical_features=None,
                 ordinal_features=None, categorical_split="subset",
                 max_exhaustive_categories=10, max_subset_size=None):
        _forest_init(self, n_estimators, criterion, max_depth, min_samples_split,
                     min_samples_leaf, min_weight_fraction_leaf, max_features, max_leaf_nodes,
                     min_impurity_decrease, bootstrap, oob_score, n_jobs, random_state,
                     ccp_alpha, max_samples)
        _categorical_init(self, categorical_features, ordinal_features, categorical_split,
                          max_exhaustive_categories, max_subset_size)
