"""Forests on jitree's tree engine: random forests and extra trees.

- One presort of X serves every tree: each tree copies, in sorted order, only the samples of
  its bootstrap (:meth:`Presorted.subset`), renumbered 0 .. n_bag - 1 so that its per-sample
  arrays stay small, with the bootstrap multiplicities as sample weights; X itself is never
  copied. As in scikit-learn, ``sample_weight`` enters a bootstrap through the draw (row i is
  drawn with probability proportional to its weight) and the tree weighs its rows by their
  multiplicities only; without bootstrap the trees weigh the rows by ``sample_weight``.
  When a tree scans fewer than half of the features at each node (the default
  ``max_features="sqrt"``), the copy leaves the classes out and the scans read them by sample
  (:func:`_carries_labels`): every level's partition then moves less.
- Trees grow concurrently on a thread pool (``n_jobs`` threads), each with single-threaded
  kernels, which release the GIL.
- Tree ``t`` depends only on its seed, drawn from ``random_state`` up front, so a forest is
  the same whatever ``n_jobs``, and whatever groups its trees are grown in (``warm_start``
  adds trees ``len(estimators_) ..`` with the seeds a single fit would have drawn for them):
  ``fit`` is three steps, ``_prepare_fit`` (validation, seeds: a picklable :class:`_ForestPlan`),
  :func:`_grow_trees` (any subset of the trees, with its own presort) and ``_finish_fit``
  (fitted attributes from all the trees); :func:`jitree.dask.fit_forest` runs the middle
  step on a cluster's workers. For data spread over the workers, the plan comes from
  ``_fit_settings`` and ``_plan`` on summaries of the rows, and each group of trees grows
  on its own rows with :meth:`BaseForest._part_plan`.
- Prediction walks every tree for each block of rows in one parallel kernel
  (:func:`jitree.kernels.predict.predict_flat`) and averages the trees' class probabilities
  (classification) or means (regression).
"""

import dataclasses
import functools
import numbers
import sys
import threading
import time
import typing
import warnings
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._threading import n_threads, resolve_n_jobs
from ..kernels import criteria
from ..kernels import predict as _predict
from ..kernels.quantiles import LINEAR
from ..kernels.records import TreeWalk
from . import leaf_samples, pruning
from ._base import (
    CATEGORY_SMOOTHING,
    FOREST_MIN_SAMPLES_CATEGORY,
    FOREST_SUBSET_PENALTY,
    MAX_ONE_VS_REST_CATEGORIES,
    BaseDecisionTree,
    _check_float,
    _check_honest,
    _check_int,
    _check_store_leaf_samples,
    _reduced_copy,
    _scipy_sparse,
    _seed_of,
    _tested_columns,
)
from ._params import ParamsMixin
from .builder import (
    GrowParams,
    Presorted,
    SampleX,
    SortedColumns,
    TreeBuilder,
    reads_by_column,
    sample_order_growth,
    sparse_growth,
)
from .classifier import (
    DecisionTreeClassifier,
    _class_weight_factors,
    class_weight_count_message,
    classes_of,
    encode_outputs,
    output_labels,
)
from .honest import reestimate, split_rows
from .regressor import DecisionTreeRegressor, r2
from .tree import (
    FEW_ROWS,
    SPLIT_SUBSET,
    ProbabilityRows,
    concatenate_flat_tests,
    flat_categories,
    flat_trees,
    kernel_output,
    raise_infinite,
    read_only,
    task_rows,
    walk_csr,
    walk_input,
    walk_rows,
)
from .validation import (
    FIT_DENSE_COPIES,
    CsrRows,
    check_is_fitted,
    check_poisson_target,
    check_sample_weight,
    check_weight_total,
    check_y,
    is_sparse,
    match_feature_names,
    passes_unchanged,
    sparse_to_dense,
    walks_as_given,
)

# A parallel task of forest prediction walks its rows through every tree in turn, so every
# task reloads every tree's nodes: larger tasks reload less (30 trees of 50k nodes: 16k rows
# ~1.6x faster than 1k rows). But its rows must stay in cache from one tree to the next: a
# task holds at most TASK_BYTES of X (a categorical walk's copy of it; jitree.model.tree) and
# at most FOREST_CHUNK_ROWS rows. Measured with 2 threads, 1M rows, against tasks of 128k rows
# (L3 of 32 MB, L2 of 1 MB a core): 100 trees on 20 float64 columns 2.74 -> 1.90 s, on 20
# float32 columns 1.72 -> 1.70 s; 50 trees on 100 float64 columns 5.16 -> 1.43 s; 20 trees on
# 1,000 float32 columns (200k rows) 0.65 -> 0.22 s; budgets of 2 and 6 MB did about as well.
FOREST_CHUNK_ROWS = 1 << 17


def forest_chunk_rows(n_rows, row_bytes, threads):
    """Rows per parallel task of a forest's prediction of ``n_rows`` rows of ``row_bytes``
    bytes each on ``threads`` threads: at least a few tasks per thread (so that small inputs
    still use every core), each within FOREST_CHUNK_ROWS and :func:`task_rows`' bounds."""
    return task_rows(row_bytes, FOREST_CHUNK_ROWS, -(-n_rows // (4 * threads)))


_TREE_PARAMS = ("criterion", "max_depth", "min_samples_split", "min_samples_leaf",
                "min_weight_fraction_leaf", "max_features", "max_leaf_nodes",
                "min_impurity_decrease", "ccp_alpha", "categorical_features",
                "ordinal_features", "categorical_split", "max_exhaustive_categories",
                "max_subset_size", "max_one_vs_rest_categories", "min_samples_category",
                "category_smoothing", "subset_penalty", "monotonic_cst", "interaction_cst")


@dataclasses.dataclass(frozen=True)
class _ForestPlan:
    """Everything needed to grow any tree of a forest, computed once from the estimator and
    the training data by :meth:`BaseForest._prepare_fit`; small and picklable, so that trees
    can be grown elsewhere (another thread, process or machine) by :func:`_grow_trees`.

    Tree ``t`` is grown from ``seeds[t]`` alone, which is what makes a forest grown in groups
    the same as one grown in a single call. ``seeds`` holds the seeds of all ``n_estimators``
    trees; a warm start keeps the first ``n_kept`` trees and grows the others
    (:attr:`new_trees`).
    """

    seeds: np.ndarray
    n_kept: int
    bootstrap: bool
    n_bootstrap: int
    weighted_draw: bool  # bootstrap rows drawn with probability proportional to sample_weight
    n_samples: int
    n_features: int
    n_stats: int
    n_classes: int  # a multi-output classifier's: the most classes of any output
    classes: object  # None (regression), the classes, or a list of each output's

    class_factors: object  # None, per-class factors, or "balanced_subsample"
    grow_params: GrowParams
    min_weight_fraction_leaf: float
    ccp_alpha: float
    template: object  # the unfitted tree estimator: parameters and feature names of each tree
    verbose: int = 0
    estimator_name: str = "forest"
    honest: bool = False
    honest_fraction: float = 0.5
    n_outputs: int = 1

    @property
    def n_estimators(self):
        return self.seeds.shape[0]

    @property
    def new_trees(self):
        """Indices of the trees this fit grows (all but the ``n_kept`` of a warm start)."""
        return range(self.n_kept, self.n_estimators)


@dataclasses.dataclass(frozen=True)
class _Rows:
    """What a forest's plan needs to know of its training rows: their number, how many each
    bootstrap draws, their total weight, and whether the draw is weighted (the weights are
    not all equal)."""

    n_samples: int
    n_bootstrap: int
    total_weight: float
    weighted_draw: bool


def _draw_probability(sample_weight):
    """Probability of each row at each bootstrap draw: ``sample_weight`` normalised (None
    when all weights are equal: a uniform draw, as without weights)."""
    if sample_weight is None or sample_weight.min() == sample_weight.max():
        return None
    return sample_weight / sample_weight.sum()


def _bootstrap_counts(seed, n_samples, n_bootstrap, probability=None):
    """How many times each sample is drawn into the bag of the tree with ``seed``:
    ``n_bootstrap`` draws with replacement, uniform or, when given, sample i with probability
    ``probability[i]`` (a row of probability 0 is never drawn)."""
    rng = np.random.default_rng(seed)
    if n_bootstrap > n_samples:
        # max_samples above n_samples: the multiplicities drawn at once (the same
        # distribution), in O(n_samples) memory and time whatever the number of draws
        if probability is None:
            probability = np.full(n_samples, 1.0 / n_samples)
        return rng.multinomial(n_bootstrap, probability)
    if probability is None:
        drawn = rng.integers(0, n_samples, n_bootstrap)
    else:
        drawn = rng.choice(n_samples, n_bootstrap, replace=True, p=probability)
    return np.bincount(drawn, minlength=n_samples)


def _same_categories(ours, theirs):
    """Whether two ``categories_`` lists (None or the categories of each feature) are equal."""
    def listed(categories):
        return [None if c is None else list(c) for c in categories]

    return len(ours) == len(theirs) and listed(ours) == listed(theirs)


def _class_weighted(weight, target, factors, n_classes):
    if factors is None:
        return weight
    if target.ndim == 2:  # multi-output: the product of the outputs' class weights
        for j in range(target.shape[1]):
            weight = _class_weighted(weight, target[:, j],
                                     factors if isinstance(factors, str) else factors[j],
                                     n_classes)
        return weight
    index = target.astype(np.intp)
    if isinstance(factors, str):  # balanced_subsample: 'balanced' on this tree's bag
        drawn = np.bincount(index, weights=weight, minlength=n_classes)
        factors = weight.sum() / (n_classes * np.where(drawn > 0, drawn, 1.0))
    with np.errstate(over="ignore"):  # an infinite total is refused (check_weight_total)
        return weight * factors[index]


def _carries_labels(max_features, n_features):
    """Whether a forest tree's sorted arrays carry the classes (see
    :meth:`~jitree.model.builder.Presorted.subset`). A tree that scans fewer than half of the
    features it partitions at every level reads them by sample instead: a level then moves
    8 bytes per sample and feature instead of 9, in two arrays instead of three."""
    return 2 * max_features >= n_features


def _tree_weight(plan, seed, sample_weight, target, probability):
    """The sample weights the tree with ``seed`` grows on: its bootstrap multiplicities (rows
    drawn with ``probability``, see :func:`_draw_probability`), or ``sample_weight`` without
    bootstrap, times the class weights."""
    if plan.bootstrap:
        weight = _bootstrap_counts(seed, plan.n_samples, plan.n_bootstrap,
                                   probability).astype(np.float64)
    else:
        weight = sample_weight
    return _class_weighted(weight, target, plan.class_factors, plan.n_classes)


def _tree_parts(plan, seed, sample_weight, target, probability):
    """The weights tree ``seed`` grows its structure on and those its leaf values come from:
    both its :func:`_tree_weight`, or with ``plan.honest`` the structure part and the
    estimation part of them (:func:`jitree.model.honest.split_rows`)."""
    weight = _tree_weight(plan, seed, sample_weight, target, probability)
    if not plan.honest:
        return weight, weight
    structure = split_rows(seed, weight, plan.honest_fraction)
    return np.where(structure, weight, 0.0), np.where(structure, 0.0, weight)


class _Progress:
    """What a forest fit prints with ``verbose`` > 0: a line per tree grown (``verbose`` > 1)
    and one when all are grown."""

    def __init__(self, plan, n_trees):
        self.plan = plan
        self.n_trees = n_trees
        self.done = 0
        self.start = time.perf_counter()
        self.lock = threading.Lock()

    def tree_grown(self, t):
        with self.lock:
            self.done += 1
            if self.plan.verbose > 1:
                self._print(f"tree {t + 1} of {self.plan.n_estimators} grown ({self.done} of "
                            f"{self.n_trees} this fit)")
            if self.done == self.n_trees and self.plan.verbose > 0:
                self._print(f"{self.n_trees} trees grown")

    def _print(self, message):
        elapsed = time.perf_counter() - self.start
        print(f"[{self.plan.estimator_name}] {message}, {elapsed:.2f} s", file=sys.stdout,
              flush=True)


def _grow_trees(plan, X, target, sample_weight, tree_indices, n_jobs=None):
    """The trees ``tree_indices`` of the forest described by ``plan``, as pruned
    :class:`~jitree.Tree` objects in that order.

    ``X``, ``target`` and ``sample_weight`` are the arrays :meth:`BaseForest._prepare_fit`
    returned with the plan. X is presorted once here for all these trees; they then grow
    concurrently on ``n_jobs`` threads (None: all cores), each with single-threaded kernels.
    """
    tree_indices = [int(t) for t in tree_indices]
    params = plan.grow_params
    columns = None
    if is_sparse(X):
        if sparse_growth(params, params.measure(), X):
            # the columns sorted once; each tree grows on its bag's rows of them
            with n_threads(n_jobs):
                columns = SortedColumns.of(X)
        else:
            # in the order the sample-order growth reads it (F: X's transpose, which that
            # growth then holds without a copy; the presorted growth reads either order)
            X = sparse_to_dense(X, "X", FIT_DENSE_COPIES,
                                "F" if reads_by_column(params, X.shape[1]) else "C")
    # with no class weights, a tree's weights are its bootstrap counts (whole numbers) or
    # sample_weight (the best splitter's sample-order growth takes any weights)
    if columns is None and (plan.class_factors is None or not params.random_splitter) \
            and sample_order_growth(params, None if plan.bootstrap else sample_weight,
                                    X.shape[1], X=X):
        columns = SampleX.of(X, params)  # each tree takes its bag's rows in sample order
    elif columns is None:
        with n_threads(n_jobs):
            presorted = Presorted.of(X, target, not params.has_labels, plan.n_classes)

    carry_labels = _carries_labels(params.max_features, plan.n_features)
    probability = _draw_probability(sample_weight) if plan.weighted_draw else None
    progress = _Progress(plan, len(tree_indices))

    def grow(t):
        seed = plan.seeds[t]
        weight, estimation_weight = _tree_parts(plan, seed, sample_weight, target,
                                                probability)
        total = check_weight_total(weight)  # bootstrap counts and class weights scale them
        if not total > 0:  # only a class_weight of 0 can: drawn rows weigh > 0
            if not plan.bootstrap:
                raise ValueError("class_weight leaves every sample with weight 0")
            raise ValueError(f"the bootstrap sample of tree {t} holds only classes whose "
                             "class_weight is 0; give them a positive weight or use "
                             "bootstrap=False")
        tree_params = dataclasses.replace(
            params, seed=int(seed), min_weight_leaf=plan.min_weight_fraction_leaf * total)
        bag = weight > 0
        with n_threads(1):
            rows = columns.subset(bag) if columns is not None else \
                presorted.subset(bag, carry_labels)
            tree = TreeBuilder(tree_params).build(X, target[bag], weight[bag], plan.n_stats,
                                                  plan.n_classes, rows)
        tree = pruning.cost_complexity(tree, plan.ccp_alpha)
        if plan.honest:
            order = isinstance(params.criterion, int) and params.criterion in \
                criteria.ORDER_CRITERIA
            tree = reestimate(tree, X, target, estimation_weight,
                              params.quantile if order else None, params.monotonic)
        progress.tree_grown(t)
        return tree

    workers = min(resolve_n_jobs(n_jobs), len(tree_indices))
    if workers <= 1:
        return [grow(t) for t in tree_indices]
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(grow, tree_indices))


class _Served(typing.NamedTuple):
    """The layout a forest's served calls read for X of one dtype (see
    :meth:`BaseForest._served_mean`): :meth:`BaseForest._layout`'s and the trees it holds."""
    flat: object  # FlatTrees
    table: np.ndarray
    trees: list


class BaseForest(ParamsMixin):
    """Shared by the four forest estimators (not public)."""

    _tree_class = None
    _splitter = "best"

    def __getstate__(self):
        """The forest without the layouts its predictions built (rebuilt at the next one):
        a pickle of the model alone, which a later jitree, whose layouts may differ, loads."""
        state = self.__dict__.copy()
        if "_layouts" in state:
            state["_layouts"] = {}
        state.pop("_quantile_layout", None)
        state.pop("_shap_layout", None)
        return state

    @property
    def estimator(self):
        """The kind of tree the forest grows, unfitted, with the forest's tree parameters
        (scikit-learn's forests hold it under this name; after a fit, ``estimator_`` is the
        template the trees were grown from)."""
        return self._tree_template()

    # -- fitting -----------------------------------------------------------------------------
    def _tree_template(self):
        params = {name: getattr(self, name) for name in _TREE_PARAMS}
        if self._tree_class is DecisionTreeClassifier:
            params["class_weight"] = None  # applied by the forest to the sample weights
        else:
            params["quantile"] = self.quantile
        return self._tree_class(splitter=self._splitter, random_state=0, n_jobs=1, **params)

    def _n_bootstrap(self, n_samples, total_weight):
        """Rows drawn into each tree's bootstrap sample: ``max_samples`` as scikit-learn reads
        it (None: n_samples; an int: that many; a float: that fraction of the total sample
        weight, which is n_samples without weights, rounded, at least 1)."""
        max_samples = self.max_samples
        if not self.bootstrap:
            if max_samples is not None:
                raise ValueError("max_samples is only used with bootstrap=True; set it to None")
            return n_samples
        if max_samples is None:
            return n_samples
        if isinstance(max_samples, bool) or not isinstance(max_samples, numbers.Real):
            raise TypeError(f"max_samples must be None, an int >= 1 or a float > 0, got "
                            f"{max_samples!r}")
        if isinstance(max_samples, numbers.Integral):
            # draws are with replacement: more than n_samples is allowed (scikit-learn 1.9)
            return _check_int("max_samples", max_samples, 1)
        fraction = float(max_samples)
        if not (np.isfinite(fraction) and fraction > 0.0):
            raise ValueError(f"max_samples must be > 0 and finite when a float, got "
                             f"{max_samples!r}")
        count = max(1, round(fraction * total_weight))
        if count < max(10, n_samples ** (1 / 3)):
            of = "the number of samples" if total_weight == n_samples else \
                "the total sample weight"
            warnings.warn(f"max_samples={max_samples!r} of {of} ({total_weight:g}) draws only "
                          f"{count} rows into each bootstrap sample; give max_samples as an "
                          "int to choose the count", UserWarning, stacklevel=4)
        return count

    def fit(self, X, y, sample_weight=None):
        """Grow the forest's trees on (X, y).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Training samples (float32 or float64 arrays are not copied; categorical and
            ordinal columns as the trees take them; NaN is a missing value).
        y : array-like of shape (n_samples,)
            Class labels (classifiers) or real targets (regressors).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the rows (None: all 1). With ``bootstrap=True`` they set
            the probability of each row at each bootstrap draw and the trees weigh the drawn
            rows by their multiplicities (as scikit-learn does): a row of weight 0 is never
            drawn. Without bootstrap the trees weigh the rows by them.

        Returns
        -------
        self : object
            The fitted forest. With ``warm_start=True`` and a forest already fitted, its
            ``len(estimators_)`` trees are kept and ``n_estimators - len(estimators_)`` new
            trees are grown on (X, y), each with the seed a single fit of ``n_estimators``
            trees would have given it.
        """
        plan, X, target, sample_weight = self._prepare_fit(X, y, sample_weight)
        trees = _grow_trees(plan, X, target, sample_weight, plan.new_trees, self.n_jobs)
        return self._finish_fit(plan, trees, X, target, sample_weight)

    def _check_flags(self):
        for name in ("bootstrap", "oob_score", "warm_start"):
            value = getattr(self, name)
            if not isinstance(value, (bool, np.bool_)) and not (name == "oob_score"
                                                                and callable(value)):
                raise TypeError(f"{name} must be True or False"
                                f"{' or a metric(y_true, y_pred)' if name == 'oob_score' else ''}"
                                f", got {value!r}")
        verbose = self.verbose
        if not isinstance(verbose, (bool, np.bool_)):
            verbose = _check_int("verbose", verbose, 0)
        if self.oob_score and not self.bootstrap:
            raise ValueError("Out of bag estimation only available if bootstrap=True: "
                             "oob_score=True needs the samples a tree's bootstrap left out")
        return int(verbose)

    def _n_kept(self, n_estimators):
        """How many fitted trees a warm start keeps (0 without one); scikit-learn's error and
        warning when ``n_estimators`` does not grow."""
        if not self.warm_start or not hasattr(self, "estimators_"):
            return 0
        n_kept = len(self.estimators_)
        if n_estimators < n_kept:
            raise ValueError(f"n_estimators={n_estimators} must be larger or equal to "
                             f"len(estimators_)={n_kept} when warm_start=True")
        if n_estimators == n_kept:
            warnings.warn("Warm-start fitting without increasing n_estimators does not fit "
                          "new trees.", UserWarning, stacklevel=4)
        return n_kept

    def _check_warm_data(self, template, n_features, classes, n_outputs=1):
        """A warm start's new trees join the kept ones in one prediction: refuse data whose
        features or classes differ from theirs."""
        kept = self.estimators_[0]
        if n_features != self.n_features_in_:
            raise ValueError(f"warm_start=True: X has {n_features} features, but "
                             f"the {len(self.estimators_)} fitted trees have "
                             f"{self.n_features_in_}; fit on the same features or set "
                             "warm_start=False")
        names = getattr(template, "feature_names_in_", None)
        fitted_names = getattr(self, "feature_names_in_", None)
        if (names is None) != (fitted_names is None) or (
                names is not None and list(names) != list(fitted_names)):
            raise ValueError("warm_start=True: the feature names of X differ from those the "
                             "fitted trees were grown on; fit on the same columns or set "
                             "warm_start=False")
        if not (np.array_equal(template._encoder.feature_kind_, kept._encoder.feature_kind_)
                and _same_categories(template.categories_, kept.categories_)):
            raise ValueError("warm_start=True: the categorical or ordinal features of X (or "
                             "their categories) differ from those of the fitted trees; fit on "
                             "the same data or set warm_start=False")
        if n_outputs != getattr(self, "n_outputs_", 1):
            raise ValueError(f"warm_start=True: y has {n_outputs} outputs, the fitted trees "
                             f"{self.n_outputs_}; fit on the same outputs or set "
                             "warm_start=False")
        if n_outputs > 1 and classes is not None:
            if not all(np.array_equal(a, b) for a, b in zip(classes, self.classes_,
                                                               strict=True)):
                raise ValueError("warm_start=True: the classes of y's outputs differ from "
                                 "those of the fitted trees; fit on the same classes or set "
                                 "warm_start=False")
        elif classes is not None and not np.array_equal(classes, self.classes_):
            raise ValueError(f"warm_start=True: y has the classes {classes.tolist()}, the "
                             f"fitted trees {self.classes_.tolist()}; fit on the same classes "
                             "or set warm_start=False")

    def _prepare_fit(self, X, y, sample_weight):
        """Validate the parameters and data and draw the trees' seeds: the :class:`_ForestPlan`
        and the arrays the trees grow on, ``(plan, X, target, sample_weight)``. The estimator
        itself is left unchanged."""
        template = self._tree_template()
        # a sparse X stays sparse: the trees grow on its stored values (see _grow_trees), and
        # what reads the rows after them walks those too (tree.walk_rows)
        X = template._validate_fit_X(X, keep_sparse=True)
        n_samples, n_features = X.shape
        settings = self._fit_settings()
        sample_weight = check_sample_weight(sample_weight, n_samples)
        n_bootstrap = self._n_bootstrap(n_samples, float(sample_weight.sum()))
        target, n_stats, n_classes, classes = self._encode_target(y, n_samples)
        n_outputs = target.shape[1] if target.ndim == 2 else 1
        if n_outputs > 1 and (settings["honest"] or _check_store_leaf_samples(self)):
            option = "honest=True" if settings["honest"] else "store_leaf_samples=True"
            raise ValueError(f"{option} needs a single-output y; y has {n_outputs} columns")
        if settings["n_kept"]:
            self._check_warm_data(template, n_features, classes, n_outputs)
        class_factors = self._class_factors(classes, target, sample_weight)
        plan = self._plan(settings, template, _Rows(
            n_samples=n_samples, n_bootstrap=n_bootstrap, total_weight=float(sample_weight.sum()),
            weighted_draw=_draw_probability(sample_weight) is not None), dict(
            n_features=n_features, n_stats=n_stats, n_classes=n_classes, classes=classes,
            class_factors=class_factors, n_outputs=n_outputs))
        return plan, X, target, sample_weight

    def _fit_settings(self):
        """The checked parameters of a fit that do not depend on the data (the plan's fields
        ``n_kept``, ``verbose``, ``honest``, ``honest_fraction``, and ``n_estimators``)."""
        n_estimators = _check_int("n_estimators", self.n_estimators, 1)
        verbose = self._check_flags()
        honest, honest_fraction = _check_honest(self.honest, self.honest_fraction)
        _check_store_leaf_samples(self)
        return dict(n_estimators=n_estimators, verbose=verbose, honest=honest,
                    honest_fraction=honest_fraction, n_kept=self._n_kept(n_estimators))

    def _plan(self, settings, template, rows, targets):
        """The :class:`_ForestPlan` of :meth:`_fit_settings`, the tree ``template`` (its
        features validated), the training ``rows`` (:class:`_Rows`) and ``targets`` (the
        plan's fields ``n_features``, ``n_stats``, ``n_classes``, ``classes``,
        ``class_factors``); draws the trees' seeds."""
        params = template._grow_params(rows.n_samples, targets["n_features"],
                                       rows.total_weight, targets["n_classes"],
                                       n_outputs=targets.get("n_outputs", 1))
        ccp_alpha = _check_float("ccp_alpha", self.ccp_alpha, 0.0, np.inf)
        # one draw per tree from one stream: a warm start that adds trees n_kept.. gives them
        # the seeds a single fit of n_estimators trees would have
        seeds = np.random.RandomState(_seed_of(self.random_state) % 2**32).randint(
            np.iinfo(np.int32).max, size=settings["n_estimators"])
        resolve_n_jobs(self.n_jobs)  # a bad n_jobs fails here, before any tree grows
        return _ForestPlan(
            seeds=seeds, n_kept=settings["n_kept"], bootstrap=bool(self.bootstrap),
            n_bootstrap=rows.n_bootstrap,
            weighted_draw=bool(self.bootstrap) and rows.weighted_draw,
            n_samples=rows.n_samples, grow_params=params,
            min_weight_fraction_leaf=self.min_weight_fraction_leaf, ccp_alpha=ccp_alpha,
            template=template, verbose=settings["verbose"], estimator_name=type(self).__name__,
            honest=settings["honest"], honest_fraction=settings["honest_fraction"], **targets)

    def _part_plan(self, plan, sample_weight):
        """The plan of the trees grown on one part of the training rows alone (as if they were
        all of X, ``sample_weight`` theirs): ``plan`` with that part's row count, bootstrap
        size, draw and grow parameters (fractions of ``min_samples_leaf`` /
        ``min_samples_split`` are of the part's rows; ``max_samples`` of its rows or
        weight); the seeds, classes and features stay those of ``plan``."""
        n_samples, total_weight = sample_weight.shape[0], float(sample_weight.sum())
        return dataclasses.replace(
            plan, n_samples=n_samples, n_bootstrap=self._n_bootstrap(n_samples, total_weight),
            weighted_draw=plan.bootstrap and _draw_probability(sample_weight) is not None,
            grow_params=plan.template._grow_params(n_samples, plan.n_features, total_weight,
                                                   plan.n_classes, n_outputs=plan.n_outputs))

    def _finish_fit(self, plan, trees, X, target, sample_weight, part_plans=None):
        """Set the fitted attributes from the plan and the ``trees`` it grew (tree
        ``plan.new_trees[k]`` at position ``k``), after the kept trees of a warm start, then
        the out-of-bag estimate if asked for; returns the estimator.

        ``part_plans``: for trees grown on parts of the rows (:meth:`_part_plan`), the plan
        each tree was grown with; X, target and sample_weight are then None (the rows are
        not here) and the bags are not known by row of the training set
        (``estimators_samples_`` raises)."""
        new_trees = plan.new_trees
        if len(trees) != len(new_trees):
            raise ValueError(f"expected {len(new_trees)} trees, got {len(trees)}")
        if part_plans is None:
            part_plans = [plan] * len(trees)
        kept = list(self.estimators_[:plan.n_kept]) if plan.n_kept else []
        template = plan.template
        if plan.classes is not None:
            self.classes_ = plan.classes
            self.n_classes_ = ([c.shape[0] for c in plan.classes] if plan.n_outputs > 1
                               else plan.classes.shape[0])
        self._n_bootstrap_samples = plan.n_bootstrap
        self._n_samples = plan.n_samples if X is not None else None
        self._grown_on_parts = X is None
        # the draw weights, to redraw the bags (estimators_samples_, out-of-bag rows)
        self._draw_weight = sample_weight if plan.weighted_draw else None
        self.n_features_in_ = plan.n_features
        self.n_outputs_ = plan.n_outputs
        names = getattr(template, "feature_names_in_", None)
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.estimators_ = kept + [
            self._wrap(tree, part_plan, plan.seeds[t])
            for t, tree, part_plan in zip(new_trees, trees, part_plans, strict=True)]
        self._seeds = np.array([model.random_state for model in self.estimators_],
                               dtype=np.int64)
        self.estimator_ = template
        self._layouts = {}
        self._store_leaf_samples(plan, X, target, sample_weight)
        if self.oob_score and (len(new_trees) > 0 or not hasattr(self, "oob_score_")):
            self._compute_oob(X, target)
        return self

    def _wrap(self, tree, plan, seed):
        """The fitted tree estimator around ``tree``, with the forest's tree parameters and
        ``random_state`` the seed it was grown with: refitted on the same weighted rows
        (``sample_weight`` its bag multiplicities, see ``estimators_samples_``), a clone of it
        grows the same tree.

        For that, a fraction ``min_samples_leaf`` / ``min_samples_split`` becomes the count
        it came to: the forest takes it of the training set's n_samples, a tree of the rows
        of positive weight it is fitted on (its bag)."""
        template = plan.template
        params = template.get_params()
        params["random_state"] = int(seed)
        for name in ("min_samples_leaf", "min_samples_split"):
            if not isinstance(params[name], numbers.Integral):
                params[name] = getattr(plan.grow_params, name)
        names = getattr(template, "feature_names_in_", None)
        model = self._tree_class._from_tree(tree, classes=getattr(self, "classes_", None),
                                            feature_names=names, params=params)
        model.max_features_ = plan.grow_params.max_features
        model.categories_ = template.categories_
        model._encoder = template._encoder
        model.missing_values_in_feature_mask_ = template.missing_values_in_feature_mask_
        return model

    def _class_factors(self, classes, target, sample_weight, counts=None):
        return None

    def _store_leaf_samples(self, plan, X, target, sample_weight):
        """``leaf_samples_`` of every tree (regressors with ``store_leaf_samples=True``), on
        this fit's data: each tree's bag, or its estimation part, drawn again from its
        seed."""
        self.__dict__.pop("leaf_samples_", None)
        self.__dict__.pop("_leaf_roots", None)
        if not _check_store_leaf_samples(self):
            return
        probability = _draw_probability(sample_weight) if plan.weighted_draw else None
        blocks = []
        for seed, model in zip(self._seeds, self.estimators_, strict=True):
            _, weight = _tree_parts(plan, seed, sample_weight, target, probability)
            # a bootstrap tree's weights are its draws; otherwise each row is drawn once
            count = weight if plan.bootstrap else (weight > 0).astype(np.float64)
            blocks.append(leaf_samples.collect(model.tree_, X, weight, count))
        self.leaf_samples_, self._leaf_roots = leaf_samples.assemble(blocks, target)

    # -- prediction --------------------------------------------------------------------------
    def _cached_layouts(self):
        """``self._layouts``, the prediction layouts built from ``estimators_``, emptied first
        when ``estimators_`` is no longer the list of trees they were built from (a user
        sliced it or added another forest's trees): the kernels read as many trees as a
        layout holds, and numba checks no bounds."""
        trees = list(self.estimators_)
        if self._layouts.get("trees") != trees:
            self._layouts.clear()
            self._layouts["trees"] = trees
        return self._layouts

    def _prediction_jobs(self, X):
        """Threads of a prediction of X: one for FEW_ROWS rows or fewer (one task)."""
        return 1 if X.shape[0] <= FEW_ROWS else self.n_jobs

    def _layout(self, dtype):
        """The trees' flat layouts concatenated and their leaves' table (:func:`flat_trees`),
        built once per X dtype."""
        dtype = np.dtype(dtype)
        layouts = self._cached_layouts()
        if dtype not in layouts:
            with n_threads(self.n_jobs) as workers:
                layouts[dtype] = flat_trees(
                    [model.tree_ for model in self.estimators_], dtype,
                    [self._leaf_table(model) for model in self.estimators_], workers=workers)
        return layouts[dtype]

    def _zero_paths(self, flat, n_columns):
        """The zero paths of :meth:`_layout`'s ``flat`` for a sparse X of ``n_columns``
        columns (:func:`jitree.kernels.predict.zero_paths`), built once."""
        layouts = self._cached_layouts()
        key = ("zero_paths", flat.threshold.dtype, n_columns)
        if key not in layouts:
            layouts[key] = _predict.zero_paths(flat, n_columns)
        return layouts[key]

    def _leaf_table(self, model):
        """The prediction table :meth:`_layout` gives :func:`flat_trees` for ``model``: its
        :meth:`_node_table`, or a function of node ids giving those rows."""
        return self._node_table(model)

    def _walk_kind(self):
        """How the forest predicts, decided once per fit (100 trees' checks cost as much as
        predicting a row): "threshold" (every tree of threshold tests: predict_flat),
        "categories" (subset, one-vs-rest and multiway tests too, of features of at most
        65,535 categories: predict_flat_categories) or "nodes" (predict_nodes on the Tree
        arrays: larger categorical features)."""
        layouts = self._cached_layouts()
        kind = layouts.get("walk")
        if kind is None:
            trees = [model.tree_ for model in self.estimators_]
            if all(tree.is_binary_threshold for tree in trees):
                kind = "threshold"
            elif all(tree.is_binary_threshold or tree.has_flat_categories for tree in trees):
                kind = "categories"
            else:
                kind = "nodes"
            layouts["walk"] = kind
        return kind

    def _flat_categories(self, dtype, raw=False):
        """The trees' :class:`FlatCategories` concatenated in the order of :meth:`_layout`,
        for encoded X, or (``raw``) for X holding the category values themselves (None when
        the encoder cannot look them up: see :meth:`_predict_mean`). The layout of X's
        ``dtype``, which the walk reads with them, is made first: it keeps each tree's flat
        order, in which the tests are laid out (asked first, each tree made a float64
        layout of its own for it)."""
        key = ("flat_categories", raw)
        layouts = self._cached_layouts()
        if key not in layouts:
            tree = self.estimators_[0].tree_
            tables = None
            if raw:
                tables = self._feature_encoder().value_tables()
            if raw and tables is None:
                layouts[key] = None
            else:
                self._layout(dtype)
                layouts[key] = flat_categories(
                    concatenate_flat_tests([model.tree_.flat_tests()
                                            for model in self.estimators_],
                                           tree.n_categories, tree.feature_kind),
                    tree.feature_kind, tree.n_categories, tables)
        return layouts[key]

    def _node_layout(self):
        """The trees' own arrays concatenated, for :func:`predict_nodes` (forests with
        categorical tests)."""
        layouts = self._cached_layouts()
        if "nodes" not in layouts:
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
            layouts["nodes"] = (
                TreeWalk(arrays["feature"], arrays["threshold"], arrays["children_left"],
                         arrays["children_right"], arrays["split_kind"], arrays["missing_left"],
                         arrays["category_offset"], arrays["category_bits"],
                         arrays["multiway_slot"], self.estimators_[0].tree_.n_categories),
                *read_only(np.array(roots, dtype=np.int64), np.concatenate(tables)))
        return layouts["nodes"]

    def _validate_predict_X(self, X, by_position=False):
        """X checked against the fitted features, as the trees check it (the trees share the
        forest's features, names and encoder). ``by_position``: the columns are taken in order
        without a feature-name check (files without names, streamed chunks)."""
        check_is_fitted(self, "estimators_")
        return self.estimators_[0]._validate_predict_X(X, by_position=by_position, owner=self)

    def _feature_encoder(self):
        """The encoder of the fitted features (the one the trees share)."""
        check_is_fitted(self, "estimators_")
        return self.estimators_[0]._feature_encoder()

    # an iterator of chunks, predicted one chunk at a time, as the trees do
    _predict_chunks = BaseDecisionTree._predict_chunks
    _chunked = BaseDecisionTree._chunked

    def _walks_rows(self):
        """A forest of threshold tests walks a sparse X by its rows' stored values
        (:func:`jitree.kernels.predict.predict_flat_csr`): no dense block, whose columns are
        nearly all of X's when the trees are many and deep."""
        return (self._feature_encoder().is_trivial
                and not np.any(self.estimators_[0].tree_.feature_kind != 0)
                and self._walk_kind() == "threshold")

    def _on_columns(self):
        """``(forest, columns)``: a copy of this fitted forest whose trees read only the
        ``columns`` some tree tests (see :meth:`BaseDecisionTree._chunked`), or None when a
        feature is not numeric."""
        if np.any(self.estimators_[0].tree_.feature_kind != 0):  # the trees share features
            return None
        # cached on the first tree (caches of trees are not pickled), for this forest and
        # these trees (a refit or a warm start changes them)
        trees = tuple(id(model.tree_) for model in self.estimators_)
        cached = self.estimators_[0].tree_.cached(("forest_on_columns", id(self)),
                                                  lambda: [None])
        if cached[0] is None or cached[0][2]() is not self or cached[0][3] != trees:
            columns = _tested_columns([model.tree_ for model in self.estimators_])
            forest = _reduced_copy(self, len(columns))
            forest._layouts = {}
            forest.estimators_ = []
            for model in self.estimators_:
                reduced = _reduced_copy(model, len(columns))
                reduced.tree_ = model.tree_.on_features(columns)
                forest.estimators_.append(reduced)
            cached[0] = (forest, columns, weakref.ref(self), trees)
        return cached[0][:2]

    def _predict_mean(self, X):
        """Mean over the trees of each row's leaf table row (probabilities or means); X as
        :meth:`_walked_as_given` takes it (a served call as :meth:`_served_mean` does)."""
        mean = self._served_mean(X)
        if mean is not None:
            return mean
        return self._walked_as_given(X, self._predict_flat_categories,
                                     self._predict_mean_validated)

    def _served_mean(self, X):
        """:meth:`_predict_mean` of a served call, else None (X then takes the general path):
        a plain C-contiguous float32 or float64 ndarray of 1 .. FEW_ROWS rows of the trees'
        width (:func:`walks_as_given`), through trees of threshold tests on numeric features.
        The general path gives such X unchanged to the flat walk's serial twin on the
        calling thread (:meth:`_predict_threshold`); here what it decides on every call (the
        walk, the encoder, the layout) is looked up once per dtype and trees
        (:meth:`_served_layout`): ``predict_proba`` of one held-out row through 100 trees
        of 150k x 20 took 44.3-47.2 against 49.6-52.6 us (medians of 9 x 1,000 calls, three
        processes). The same kernel, arguments and result. (An F-ordered X of a few rows,
        which served rows rarely are, takes the general path: a walk of F-ordered X is
        compiled apart.)"""
        if not (type(X) is np.ndarray and X.ndim == 2 and X.shape[0] <= FEW_ROWS
                and X.flags.c_contiguous and hasattr(self, "estimators_")):
            return None
        first = self.estimators_[0]
        if not walks_as_given(X, first.n_features_in_):
            return None
        layouts = self._cached_layouts()
        key = ("served", X.dtype)
        layout = layouts.get(key)
        if layout is None:
            layout = layouts[key] = self._served_layout(X.dtype)
        if layout is False:
            return None
        match_feature_names(self, getattr(first, "feature_names_in_", None), None)
        out = self._predict_threshold(X, _predict.predict_flat_serial, FEW_ROWS, layout)
        out /= len(layout.trees)
        return out

    def _served_layout(self, dtype):
        """:meth:`_layout` of ``dtype`` for :meth:`_served_mean`, or False when X of ``dtype``
        takes the general path (category tests, an encoder that changes X)."""
        if self._walk_kind() != "threshold" or not self._feature_encoder().is_trivial:
            return False
        return _Served(*self._layout(dtype), self._cached_layouts()["trees"])

    def _walked_as_given(self, X, walk, validated):
        """``walk(X, categories)`` of a float NumPy X of a forest with flat category tests,
        walked as given, its categories looked up by value in the walk (no encoded copy of
        X); else ``validated`` of X through the validation. A lookup that cannot be made that
        way, and X holding an infinity (``walk`` returns None), go through the encoder, which
        also gives the errors. A plain C- or F-contiguous float32 / float64 ndarray of the
        trees' width, of a forest whose features are all numeric, is given to ``validated``
        as it is, its names matched (:func:`passes_unchanged`). The width and names are
        those of the trees, as :meth:`_validate_predict_X` checks them (a user may have
        replaced ``estimators_``)."""
        check_is_fitted(self, "estimators_")
        first = self.estimators_[0]
        if not walks_as_given(X, first.n_features_in_):
            return validated(self._validate_predict_X(X))
        if self._walk_kind() == "categories":
            categories = self._flat_categories(X.dtype, raw=True)
            if categories is not None:
                match_feature_names(self, getattr(first, "feature_names_in_", None), None)
                out = walk(np.ascontiguousarray(X), categories)
                if out is not None:
                    return out
                # X holds an infinity: the encoder gives the error (the names were matched)
                return validated(self._validate_predict_X(X, by_position=True))
        if passes_unchanged(X, self._feature_encoder()):
            match_feature_names(self, getattr(first, "feature_names_in_", None), None)
            return validated(X)
        return validated(self._validate_predict_X(X))

    def _predict_flat_categories(self, X, categories):
        """The flat category walk of X with ``categories`` (see :meth:`_flat_categories`);
        None when X holds an infinity. FEW_ROWS rows or fewer are one task, walked on the
        calling thread by the kernel's serial twin (no change of numba's thread count)."""
        flat, table = self._layout(X.dtype)
        out = kernel_output((X.shape[0], table.shape[1]))
        if X.shape[0] <= FEW_ROWS:
            infinite = _predict.predict_flat_categories_serial(
                *walk_input(X), flat, categories, table, FEW_ROWS, out)
        else:
            with n_threads(self.n_jobs) as threads:
                infinite = _predict.predict_flat_categories(
                    *walk_input(X), flat, categories, table,
                    forest_chunk_rows(X.shape[0], X.shape[1] * X.itemsize, threads), out)
        if infinite:
            return None
        out /= len(self.estimators_)
        return out

    def _predict_mean_validated(self, X):
        """:meth:`_predict_mean` of an X already through :meth:`_validate_predict_X`."""
        walk = self._walk_kind()
        if walk == "categories":
            out = self._predict_flat_categories(X, self._flat_categories(X.dtype))
            if out is None:
                raise_infinite(X, "X")
            return out
        if walk == "threshold" and X.shape[0] <= FEW_ROWS and not isinstance(X, CsrRows):
            # one task, on the calling thread: no change of numba's thread count
            out = self._predict_threshold(X, _predict.predict_flat_serial, FEW_ROWS)
            out /= len(self.estimators_)
            return out
        jobs = self._prediction_jobs(X)
        with n_threads(jobs) as threads:
            if isinstance(X, CsrRows):  # rows are scattered into a block's buffer
                chunk_rows = forest_chunk_rows(X.shape[0], 0, threads)
            else:
                chunk_rows = forest_chunk_rows(X.shape[0], X.shape[1] * X.itemsize, threads)
            if walk == "threshold" and isinstance(X, CsrRows):
                flat, table = self._layout(X.dtype)
                out = kernel_output((X.shape[0], table.shape[1]))
                walk_csr(X, flat, table, chunk_rows, out,
                         lambda: self._zero_paths(flat, X.shape[1]))
            elif walk == "threshold":
                out = self._predict_threshold(X, _predict.predict_flat, chunk_rows)
            else:
                walk, roots, table = self._node_layout()
                out = kernel_output((X.shape[0], table.shape[1]))
                if _predict.predict_nodes(*walk_input(X), walk, roots, table,
                                          chunk_rows, out):
                    raise_infinite(X, "X")
        out /= len(self.estimators_)
        return out

    def _predict_threshold(self, X, walk, chunk_rows, layout=None):
        """The trees' table rows summed for each row of a dense X by ``walk``
        (:func:`~jitree.kernels.predict.predict_flat` or its serial twin) in tasks of
        ``chunk_rows`` rows; an infinity in X raises. ``layout``: :meth:`_layout` of X's
        dtype when the caller has it."""
        flat, table = self._layout(X.dtype) if layout is None else layout[:2]
        out = kernel_output((X.shape[0], table.shape[1]))
        if walk(*walk_input(X), flat, table, chunk_rows, out):
            raise_infinite(X, "X")
        return out

    def apply(self, X):
        """Leaf index of each row in each tree, shape (n_samples, n_estimators)."""
        model, chunks = self._chunked(X, rows=True)
        if chunks is not None:
            return model._predict_chunks(chunks, model._apply_validated)
        return self._walked_as_given(X, self._apply_categories, self._apply_validated)

    def _apply_validated(self, X):
        """Leaf ids of dense X through every tree in one parallel walk (one pass of X
        through the trees in tasks that stay in cache, :func:`forest_chunk_rows`), returned
        as (n_samples, n_estimators) with each tree's column contiguous, as scikit-learn's.
        Forests with category tests take the category walk (:meth:`_apply_categories`); CSR
        X, and trees whose tests neither flat walk can make (features of more than 65,535
        categories), go tree by tree. The layouts it reads are those of the current
        ``estimators_`` (:meth:`_cached_layouts`)."""
        walk = self._walk_kind()
        if walk == "categories" and not isinstance(X, CsrRows):
            leaves = self._apply_categories(X, self._flat_categories(X.dtype))
            if leaves is None:
                raise_infinite(X, "X")
            return leaves
        jobs = self._prediction_jobs(X)
        with n_threads(jobs) as threads:
            if isinstance(X, CsrRows) or walk == "nodes":
                return np.stack([model.tree_.apply(X) for model in self.estimators_]).T
            flat, _ = self._layout(X.dtype)
            chunk_rows = forest_chunk_rows(X.shape[0], X.shape[1] * X.itemsize, threads)
            out = np.empty((flat.root.shape[0], X.shape[0]), dtype=np.int64)
            if _predict.apply_flat(*walk_input(X), flat, self._node_of_flat(X.dtype),
                                   chunk_rows, out):
                raise_infinite(X, "X")
        return out.T

    def _apply_categories(self, X, categories):
        """:meth:`_apply_validated` of the category walk, with ``categories`` (see
        :meth:`_flat_categories`: X encoded, or holding the category values); None when X
        holds an infinity."""
        jobs = self._prediction_jobs(X)
        with n_threads(jobs) as threads:
            chunk_rows = forest_chunk_rows(X.shape[0], X.shape[1] * X.itemsize, threads)
            flat, _ = self._layout(X.dtype)
            out = np.empty((flat.root.shape[0], X.shape[0]), dtype=np.int64)
            if _predict.apply_flat_categories(*walk_input(X), flat, categories,
                                              self._node_of_flat(X.dtype), chunk_rows, out):
                return None
        return out.T

    def _node_of_flat(self, dtype):
        """Each node of :meth:`_layout` as its id in its tree (the same for every dtype)."""
        layouts = self._cached_layouts()
        if "node_of_flat" not in layouts:
            layouts["node_of_flat"] = read_only(np.concatenate(
                [model.tree_._flat_order() for model in self.estimators_]))[0]
        return layouts["node_of_flat"]

    def decision_path(self, X):
        """The nodes each row of X passes through, in every tree.

        Needs scipy (``pip install 'jitree[scipy]'``).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Rows to walk down the trees.

        Returns
        -------
        indicator : scipy.sparse.csr_matrix of shape (n_samples, n_nodes)
            ``indicator[i, j]`` is 1 when row i passes through node j, where the trees' nodes
            are numbered one tree after the other: ``n_nodes`` is the total node count.
        n_nodes_ptr : ndarray of int64, shape (n_estimators + 1,)
            Where each tree's nodes start: the columns ``n_nodes_ptr[t]`` to
            ``n_nodes_ptr[t + 1] - 1`` of ``indicator`` are the nodes of ``estimators_[t]``,
            in the order of its ``decision_path``.
        """
        sparse = _scipy_sparse("decision_path")

        def stack(pieces):
            return sparse.vstack([indicator for indicator, _ in pieces], "csr"), pieces[0][1]

        return self._decision_path_blocks(X, stack)

    _decision_path_blocks = BaseDecisionTree._decision_path_blocks

    def _decision_path_validated(self, X):
        sparse = _scipy_sparse("decision_path")
        blocks = []
        with n_threads(self.n_jobs):
            for model in self.estimators_:
                indptr, indices = model.tree_.decision_path_arrays(X)
                blocks.append(sparse.csr_matrix(
                    (np.ones(indices.shape[0], dtype=np.int64), indices, indptr),
                    shape=(X.shape[0], model.tree_.node_count)))
        n_nodes_ptr = np.concatenate(
            [[0], np.cumsum([model.tree_.node_count for model in self.estimators_])])
        return sparse.hstack(blocks, format="csr"), n_nodes_ptr.astype(np.int64)

    # -- a fitted forest is a sequence of its trees ------------------------------------------
    def __len__(self):
        """Number of fitted trees, ``len(estimators_)``."""
        check_is_fitted(self, "estimators_")
        return len(self.estimators_)

    def __getitem__(self, index):
        """The fitted tree ``estimators_[index]``; a slice gives a list of trees."""
        check_is_fitted(self, "estimators_")
        if isinstance(index, bool) or not isinstance(index, (numbers.Integral, slice)):
            raise TypeError(f"{type(self).__name__} indices must be integers or slices, got "
                            f"{type(index).__name__}")
        return self.estimators_[index]

    def __iter__(self):
        """Iterate over the fitted trees."""
        check_is_fitted(self, "estimators_")
        return iter(self.estimators_)

    def __bool__(self):
        # an estimator is true, fitted or not: without this, ``if forest:`` would call
        # __len__ and fail on an unfitted forest
        return True

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
        """The indices of the samples drawn into each tree's bag (with repetition, sorted),
        one array per tree; all samples without bootstrap. ``np.bincount(bag,
        minlength=n_samples)`` is the sample weight the tree grew on (times the class
        weights). Redrawn from the trees' seeds at each access, on the last fit's data."""
        check_is_fitted(self, "estimators_")
        n_samples = getattr(self, "_n_samples", None)
        if n_samples is None and getattr(self, "_grown_on_parts", False):
            raise AttributeError("estimators_samples_ is not known for a forest whose trees "
                                 "were grown on parts of the rows (jitree.dask.fit_forest on "
                                 "dask collections)")
        if n_samples is None:
            raise AttributeError("estimators_samples_ is not known for a forest converted by "
                                 "from_sklearn (its bags were drawn by scikit-learn)")
        # int32 indices, as scikit-learn's, while they fit
        rows = np.arange(n_samples, dtype=np.int32 if n_samples <= 2**31 else np.int64)
        if not self.bootstrap:
            return [rows.copy() for _ in self.estimators_]
        return [np.repeat(rows, self._bag_counts(seed)) for seed in self._seeds]

    def _bag_counts(self, seed, probability=None):
        """The bootstrap multiplicities of the tree with ``seed`` (``probability``: the
        draw's, when already computed)."""
        if probability is None:
            probability = _draw_probability(getattr(self, "_draw_weight", None))
        return _bootstrap_counts(seed, self._n_samples, self._n_bootstrap_samples,
                                 probability)

    def _compute_oob(self, X, target):
        n_samples = X.shape[0]
        total = None
        seen = np.zeros(n_samples)
        probability = _draw_probability(self._draw_weight)
        if is_sparse(X):
            X = X.tocsr()  # its rows are read, tree by tree
        for t, model in enumerate(self.estimators_):
            rows = np.flatnonzero(self._bag_counts(self._seeds[t], probability) == 0)
            if not rows.shape[0]:
                continue
            # the table's rows of the leaves reached, as the prediction layout takes them
            # (a classifier's computed for those leaves alone: no table is kept)
            tree = model.tree_
            table = self._leaf_table(model)
            rows_of = table if callable(table) else functools.partial(np.take, table, axis=0)
            values = walk_rows(tree, X[rows], lambda block, tree=tree, rows_of=rows_of:
                               rows_of(tree.apply(block)))
            if total is None:
                total = np.zeros((n_samples, values.shape[1]))
            total[rows] += values
            seen[rows] += 1
        if total is None or not (seen > 0).any():
            raise ValueError("no sample is out of bag in any tree: oob_score needs more "
                             "trees or smaller bootstrap samples")
        if (seen == 0).any():
            warnings.warn(f"Some inputs do not have OOB scores: {int((seen == 0).sum())} "
                          "samples were in every bootstrap sample and have no out-of-bag "
                          "prediction; they are left out of oob_score_ (more trees give "
                          "every sample some)", UserWarning, stacklevel=4)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = total / seen[:, None]
        self._set_oob(mean, target, seen > 0)

    def __sklearn_is_fitted__(self):
        return hasattr(self, "estimators_")

    def _more_tags_common(self, tags):
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        tags.target_tags.multi_output = True
        return tags


class _ForestClassifier(BaseForest):
    _tree_class = DecisionTreeClassifier
    _task = "classification"

    def _encode_target(self, y, n_samples):
        y = check_y(y, n_samples, regression=False, multi_output=True)
        if y.ndim == 2:
            # the class weights are applied per tree (_class_factors), not here
            classes, index, _ = encode_outputs(y, None, np.ones(n_samples))
            most = max(c.shape[0] for c in classes)
            return index.astype(np.float64), most * y.shape[1], most, classes
        classes, index = classes_of(y)
        n_classes = classes.shape[0]
        return index.astype(np.float64), n_classes, n_classes, classes

    def _class_factors(self, classes, target, sample_weight, counts=None):
        """The per-class factors of ``class_weight`` (None, or "balanced_subsample": drawn
        per tree); ``counts``: the rows of each class, when ``target`` is not at hand."""
        if self.warm_start and isinstance(self.class_weight, str):
            warnings.warn(f"class_weight={self.class_weight!r} with warm_start=True weighs "
                          "the classes of each fit's data: the trees of several fits are "
                          "balanced on different data unless it is the same. Pass the "
                          "weights of the full data as a dict instead.", UserWarning,
                          stacklevel=4)
        if self.class_weight is None or (isinstance(self.class_weight, str)
                                         and self.class_weight == "balanced_subsample"):
            return self.class_weight
        if isinstance(classes, list):  # multi-output: one factor array per output
            weights = self.class_weight
            if isinstance(weights, dict):
                raise ValueError("class_weight of a multi-output y must be None, 'balanced', "
                                 f"'balanced_subsample' or a list of {len(classes)} dicts, one "
                                 "per output; got a dict")
            if not isinstance(weights, str):
                weights = list(weights)
                if len(weights) != len(classes):
                    raise ValueError(class_weight_count_message(len(weights), len(classes)))
            return [_class_weight_factors(
                weights if isinstance(weights, str) else weights[j], classes[j],
                None if target is None else target[:, j].astype(np.intp), sample_weight,
                None if counts is None else counts[j]) for j in range(len(classes))]
        return _class_weight_factors(self.class_weight, classes,
                                     None if target is None else target.astype(np.intp),
                                     sample_weight, counts)

    def _node_table(self, model):
        return model._node_proba()

    def _leaf_table(self, model):
        # the flat layout reads the leaves' rows only (pure leaves then vote): their
        # probabilities are computed for them alone, and no table of every node's
        # probabilities is kept beside ``value`` (as large as it: 470 MB for 10 trees of
        # 300k nodes and 200 classes, 0.9 s to compute). Under monotonic constraints (two
        # classes) the tree's own table, which keeps them in every bit
        if model._kept_constraints() is not None:
            return model._node_proba()
        return ProbabilityRows(model.tree_)

    def predict_proba(self, X):
        """Mean class probabilities of the trees. X may also be an iterator of chunks."""
        model, chunks = self._chunked(X, rows=True)
        if chunks is not None:
            return model._predict_chunks(chunks, model._predict_proba_validated)
        return self._predict_mean(X)

    def _predict_mean(self, X):
        mean = super()._predict_mean(X)
        return self._outputs(mean) if self.n_outputs_ > 1 else mean

    def _predict_proba_validated(self, X):
        mean = self._predict_mean_validated(X)
        return self._outputs(mean) if self.n_outputs_ > 1 else mean

    def _outputs(self, mean):
        """Each output's columns of a multi-output forest's mean table (see
        :meth:`DecisionTreeClassifier._outputs_proba`)."""
        return self.estimators_[0]._outputs_proba(mean)

    def predict_log_proba(self, X):
        """Natural logarithm of :meth:`predict_proba` (-inf for a probability of 0)."""
        proba = self.predict_proba(X)
        with np.errstate(divide="ignore"):
            if isinstance(proba, list):
                return [np.log(p) for p in proba]
            return np.log(proba)

    def predict(self, X):
        """The class with the highest mean probability. X may also be an iterator of
        chunks."""
        model, chunks = self._chunked(X, rows=True)
        if chunks is not None:
            return model._predict_chunks(chunks, model._predict_validated)
        return self._labels(self._predict_mean(X))

    def _predict_validated(self, X):
        return self._labels(self._predict_proba_validated(X))

    def _labels(self, proba):
        """The class of the highest probability in each row of ``proba`` (several outputs:
        of each output's probabilities)."""
        if self.n_outputs_ > 1:
            return output_labels(self.classes_, proba)
        return self.classes_.take(np.argmax(proba, axis=1))

    def score(self, X, y, sample_weight=None):
        """Mean (weighted) accuracy."""
        return DecisionTreeClassifier.score(self, X, y, sample_weight)

    def _set_oob(self, mean, target, has_oob):
        """``oob_score_``: the accuracy of the out-of-bag predictions, as :meth:`score`
        (several outputs: the rows whose every output is right), or ``oob_score(y_true,
        y_pred)`` on the rows' class indices when it is a metric; rows never out of bag are
        left out."""
        if self.n_outputs_ > 1:
            # scikit-learn's layout, (n_samples, n_classes, n_outputs)
            width = mean.shape[1] // self.n_outputs_
            self.oob_decision_function_ = mean.reshape(mean.shape[0], self.n_outputs_,
                                                       width).transpose(0, 2, 1)
            predicted = np.column_stack([
                np.argmax(np.where(has_oob[:, None], mean[:, j * width:j * width + n], 0.0),
                          axis=1) for j, n in enumerate(self.n_classes_)])
        else:
            self.oob_decision_function_ = mean
            predicted = np.argmax(np.where(has_oob[:, None], mean, 0.0), axis=1)[:, None]
        predicted = predicted[has_oob]
        target = target[has_oob].reshape(predicted.shape).astype(np.int64)
        if not callable(self.oob_score):
            self.oob_score_ = float(np.mean(np.all(predicted == target, axis=1)))
            return
        if self.n_outputs_ == 1:
            target, predicted = target[:, 0], predicted[:, 0]
        # the class indices, as scikit-learn hands them to the metric: a metric ported from
        # it (f1_score's pos_label=1 is the second class) scores the same
        self.oob_score_ = float(self.oob_score(target, predicted))

    def __sklearn_tags__(self):
        return DecisionTreeClassifier.__sklearn_tags__(self)


class _ForestRegressor(BaseForest):
    _tree_class = DecisionTreeRegressor
    _task = "regression"

    def _encode_target(self, y, n_samples):
        y = check_y(y, n_samples, regression=True, multi_output=True)
        if isinstance(self.criterion, str) and self.criterion == "poisson":
            for column in (y.T if y.ndim == 2 else (y,)):
                check_poisson_target(column)
        return y, (2 * y.shape[1] if y.ndim == 2 else 2), 0, None

    def _node_table(self, model):
        return model.tree_.value

    def predict(self, X):
        """Mean of the trees' predictions. X may also be an iterator of chunks."""
        model, chunks = self._chunked(X, rows=True)
        if chunks is not None:
            return model._predict_chunks(chunks, model._predict_validated)
        mean = self._predict_mean(X)
        return mean if self.n_outputs_ > 1 else mean[:, 0]

    def _predict_validated(self, X):
        mean = self._predict_mean_validated(X)
        return mean if self.n_outputs_ > 1 else mean[:, 0]

    def predict_quantiles(self, X, quantiles=0.5, interpolation="linear"):
        """Conditional quantiles of the target (quantile regression forest, Meinshausen 2006):
        weighted quantiles of the training targets in the leaves each row reaches, each tree
        spreading a weight 1 over its leaf's samples in proportion to their weight in it
        (see :mod:`jitree.kernels.quantiles` for the weights and the interpolation). Needs a
        fit with ``store_leaf_samples=True``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features), or an iterator of
            such chunks
        quantiles : float or sequence of floats in [0, 1], default=0.5
        interpolation : {"linear", "lower", "higher", "midpoint", "nearest"}, default="linear"
            A quantile between two training targets v < w: interpolated, v, w, their middle,
            or the nearer (as :meth:`DecisionTreeRegressor.predict_quantiles`).

        Returns
        -------
        ndarray of shape (n_samples,) for one number, else (n_samples, n_quantiles)
        """
        quantiles, scalar = leaf_samples.check_quantiles(quantiles)
        method = leaf_samples.check_interpolation(interpolation)
        return self._predict_quantiles_any(X, quantiles, scalar, method)

    _predict_quantiles_any = DecisionTreeRegressor._predict_quantiles_any

    def _predict_quantiles_validated(self, X, quantiles, scalar, method=LINEAR):
        samples = leaf_samples.stored(self)
        with n_threads(self.n_jobs):
            return leaf_samples.predict(samples, [model.tree_ for model in self.estimators_],
                                        X, quantiles, scalar,
                                        *leaf_samples.layout_of(self, samples),
                                        flat_of=lambda dtype: self._layout(dtype)[0],
                                        method=method)

    def score(self, X, y, sample_weight=None):
        """R^2 of the predictions (weighted)."""
        return DecisionTreeRegressor.score(self, X, y, sample_weight)

    def _set_oob(self, mean, target, has_oob):
        """``oob_score_``: the R² of the out-of-bag predictions (several outputs: the mean of
        the outputs' R²), or ``oob_score(y_true, y_pred)`` when it is a metric; rows never
        out of bag are left out."""
        if callable(self.oob_score):
            self.oob_prediction_ = mean if self.n_outputs_ > 1 else mean[:, 0]
            self.oob_score_ = float(self.oob_score(target[has_oob],
                                                   self.oob_prediction_[has_oob]))
            return
        if self.n_outputs_ > 1:
            self.oob_prediction_ = mean
            scores = []
            for j in range(self.n_outputs_):
                column = target[has_oob, j]
                varies = column.shape[0] > 0 and column.max() > column.min()
                scores.append(r2(column, mean[has_oob, j], np.ones(column.shape[0]))
                              if varies else 0.0)
            self.oob_score_ = float(np.mean(scores))
            return
        self.oob_prediction_ = mean[:, 0]
        target = target[has_oob]
        varies = target.shape[0] > 0 and target.max() > target.min()
        self.oob_score_ = r2(target, mean[has_oob, 0], np.ones(target.shape[0])) if varies \
            else 0.0

    def __sklearn_tags__(self):
        return DecisionTreeRegressor.__sklearn_tags__(self)


def _categorical_init(self, categorical_features, ordinal_features, categorical_split,
                      max_exhaustive_categories, max_subset_size, max_one_vs_rest_categories,
                      min_samples_category, category_smoothing, subset_penalty):
    self.categorical_features = categorical_features
    self.ordinal_features = ordinal_features
    self.categorical_split = categorical_split
    self.max_exhaustive_categories = max_exhaustive_categories
    self.max_subset_size = max_subset_size
    self.max_one_vs_rest_categories = max_one_vs_rest_categories
    self.min_samples_category = min_samples_category
    self.category_smoothing = category_smoothing
    self.subset_penalty = subset_penalty


def _forest_init(self, n_estimators, criterion, max_depth, min_samples_split, min_samples_leaf,
                 min_weight_fraction_leaf, max_features, max_leaf_nodes, min_impurity_decrease,
                 bootstrap, oob_score, n_jobs, random_state, ccp_alpha, max_samples, verbose,
                 warm_start, honest, honest_fraction):
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
    self.verbose = verbose
    self.warm_start = warm_start
    self.honest = honest
    self.honest_fraction = honest_fraction


class RandomForestClassifier(_ForestClassifier):
    """A random forest classifier: trees on bootstrap samples, ``max_features`` features
    drawn per node, class probabilities averaged.

    Parameters have scikit-learn's names and meanings.

    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees.
    criterion, max_depth, min_samples_split, min_samples_leaf, min_weight_fraction_leaf, \
max_leaf_nodes, min_impurity_decrease, ccp_alpha
        The trees' parameters (see :class:`jitree.DecisionTreeClassifier`); fractions of
        ``min_samples_*`` are of the training set's n_samples (the fitted trees hold the
        counts they came to).
    max_features : int, float, "sqrt", "log2" or None, default="sqrt"
        Features each node visits, constant ones included (see
        :class:`jitree.DecisionTreeClassifier`).
    bootstrap : bool, default=True
        Grow each tree on a bootstrap sample (rows drawn with replacement, their
        multiplicities as weights) rather than on all rows.
    oob_score : bool or callable, default=False
        Estimate the accuracy on the rows out of each tree's bootstrap sample
        (``oob_score_``, ``oob_decision_function_``); needs ``bootstrap=True``. Several
        outputs: the fraction of rows whose every output is right, as :meth:`score`. A
        callable ``metric(y_true, y_pred)`` (for example ``sklearn.metrics.f1_score``) is
        called on the rows that are out of bag of some tree, with their class indices
        (positions in ``classes_``, as scikit-learn passes them: ``pos_label=1`` is the
        second class), and gives ``oob_score_`` instead (regressors: on the targets and
        out-of-bag predictions).
    n_jobs : int or None, default=None
        Trees grown concurrently, and threads of prediction (None or -1: all cores). The
        forest does not depend on it.
    random_state : int, RandomState, Generator or None, default=None
        Seed of the trees' seeds: tree t is grown with the t-th integer drawn from it
        (``estimators_[t].random_state``), which sets its bootstrap sample, feature draws and
        (extra trees) thresholds.
    class_weight : dict, "balanced", "balanced_subsample" or None, default=None
        Weights multiplied into each tree's sample weights by class; "balanced_subsample"
        balances the classes of each tree's bootstrap sample.
    max_samples : int, float or None, default=None
        Rows drawn into each bootstrap sample (``bootstrap=True`` only): None, n_samples; an
        int >= 1, that many (more than n_samples is allowed: draws are with replacement); a
        float > 0, that fraction of the total sample weight (of n_samples without weights),
        rounded, at least 1 (a warning when that is fewer than 10 rows).
    categorical_features, ordinal_features, categorical_split, max_exhaustive_categories, \
max_subset_size, max_one_vs_rest_categories, min_samples_category, category_smoothing, \
subset_penalty
        Feature kinds and categorical tests, as for the trees, except two defaults: a forest
        pools no category (``min_samples_category=0``) and its subset penalty is 1, not 4.
        Averaging many trees removes much of the variance the single tree's defaults guard
        against: on the tables of :mod:`jitree.bench_tables` (random forests of 50 trees, 5
        splits) these scored above the exact search on 9 of 11 tables (by up to 0.23 R^2)
        and within 0.001 of it on the other two, where pooling lost up to 0.023.
    monotonic_cst, interaction_cst
        Monotonic and interaction constraints of every tree, as for the trees.
    honest : bool, default=False
        Honest trees (generalized random forests' honesty): each tree grows its structure on
        a random ``honest_fraction`` of its bag's distinct rows (drawn from its seed) and
        takes its leaf class counts from the other rows; a node that none of those reaches
        takes its nearest such ancestor's counts (see :mod:`jitree.model.honest`).
        ``estimators_[t]`` holds the honest tree; refitting it alone grows a plain one.
    honest_fraction : float in (0, 1), default=0.5
        The structure part's share of each tree's rows.
    verbose : int, default=0
        ``fit`` prints a line when its trees are grown (> 0) and one per tree (> 1).
    warm_start : bool, default=False
        When True and the forest is fitted, ``fit`` keeps the fitted trees and grows
        ``n_estimators - len(estimators_)`` more (a ValueError if ``n_estimators`` is smaller,
        a warning and no new tree if equal). The data must have the same features and
        classes. With an int ``random_state``, a forest grown in several warm fits on the same
        data equals the forest of all its trees grown at once.

    Attributes
    ----------
    estimators_ : list of DecisionTreeClassifier
        The fitted trees; ``forest[t]`` is ``estimators_[t]``, ``len(forest)`` their number
        and iterating over the forest iterates over them.
    estimator_ : DecisionTreeClassifier
        The unfitted template of the trees.
    estimators_samples_ : list of ndarray
        Each tree's bootstrap sample (int32 row indices, with repetition).
    classes_ : ndarray
    n_classes_ : int
    n_features_in_ : int
    n_outputs_ : int
        Always 1.
    feature_names_in_ : ndarray of str (only when fitted on a DataFrame with string columns)
    feature_importances_ : ndarray of shape (n_features,)
    oob_score_ : float (with ``oob_score=True``)
    oob_decision_function_ : ndarray of shape (n_samples, n_classes) (with ``oob_score=True``)

    Notes
    -----
    With ``sample_weight`` and ``bootstrap=True``, as in scikit-learn, each row is drawn with
    probability proportional to its weight and each tree weighs the drawn rows by their
    multiplicities (times the class weights); a row of weight 0 is never drawn.
    ``class_weight`` is not part of the draw (scikit-learn draws by sample weight times class
    weight): it multiplies the trees' weights, which gives the rows the same expected weight.
    """

    def __init__(self, n_estimators=100, criterion="gini", max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_features="sqrt",
                 max_leaf_nodes=None, min_impurity_decrease=0.0, bootstrap=True,
                 oob_score=False, n_jobs=None, random_state=None, class_weight=None,
                 ccp_alpha=0.0, max_samples=None, categorical_features=None,
                 ordinal_features=None, categorical_split="subset",
                 max_exhaustive_categories=10, max_subset_size=None,
                 max_one_vs_rest_categories=MAX_ONE_VS_REST_CATEGORIES,
                 min_samples_category=FOREST_MIN_SAMPLES_CATEGORY,
                 category_smoothing=CATEGORY_SMOOTHING,
                 subset_penalty=FOREST_SUBSET_PENALTY, verbose=0,
                 warm_start=False, monotonic_cst=None,
                 interaction_cst=None, honest=False, honest_fraction=0.5):
        _forest_init(self, n_estimators, criterion, max_depth, min_samples_split,
                     min_samples_leaf, min_weight_fraction_leaf, max_features, max_leaf_nodes,
                     min_impurity_decrease, bootstrap, oob_score, n_jobs, random_state,
                     ccp_alpha, max_samples, verbose, warm_start, honest, honest_fraction)
        _categorical_init(self, categorical_features, ordinal_features, categorical_split,
                          max_exhaustive_categories, max_subset_size,
                          max_one_vs_rest_categories, min_samples_category, category_smoothing,
                          subset_penalty)
        self.monotonic_cst = monotonic_cst
        self.interaction_cst = interaction_cst
        self.class_weight = class_weight


class ExtraTreesClassifier(_ForestClassifier):
    """Extremely randomised trees: one random threshold per drawn feature and node, all
    samples by default (``bootstrap=False``).

    Parameters and attributes are those of :class:`RandomForestClassifier` (including
    ``verbose``, ``warm_start``, ``max_samples``, the sequence of trees and
    ``decision_path``), with ``bootstrap=False`` by default.
    """

    _splitter = "random"

    def __init__(self, n_estimators=100, criterion="gini", max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_features="sqrt",
                 max_leaf_nodes=None, min_impurity_decrease=0.0, bootstrap=False,
                 oob_score=False, n_jobs=None, random_state=None, class_weight=None,
                 ccp_alpha=0.0, max_samples=None, categorical_features=None,
                 ordinal_features=None, categorical_split="subset",
                 max_exhaustive_categories=10, max_subset_size=None,
                 max_one_vs_rest_categories=MAX_ONE_VS_REST_CATEGORIES,
                 min_samples_category=FOREST_MIN_SAMPLES_CATEGORY,
                 category_smoothing=CATEGORY_SMOOTHING,
                 subset_penalty=FOREST_SUBSET_PENALTY, verbose=0,
                 warm_start=False, monotonic_cst=None,
                 interaction_cst=None, honest=False, honest_fraction=0.5):
        _forest_init(self, n_estimators, criterion, max_depth, min_samples_split,
                     min_samples_leaf, min_weight_fraction_leaf, max_features, max_leaf_nodes,
                     min_impurity_decrease, bootstrap, oob_score, n_jobs, random_state,
                     ccp_alpha, max_samples, verbose, warm_start, honest, honest_fraction)
        _categorical_init(self, categorical_features, ordinal_features, categorical_split,
                          max_exhaustive_categories, max_subset_size,
                          max_one_vs_rest_categories, min_samples_category, category_smoothing,
                          subset_penalty)
        self.monotonic_cst = monotonic_cst
        self.interaction_cst = interaction_cst
        self.class_weight = class_weight


class RandomForestRegressor(_ForestRegressor):
    """A random forest regressor: trees on bootstrap samples, predictions averaged.

    Parameters and attributes are those of :class:`RandomForestClassifier` (including
    ``verbose``, ``warm_start``, ``max_samples``, the sequence of trees and
    ``decision_path``) without ``class_weight``, ``classes_`` and ``n_classes_``;
    ``criterion="squared_error"`` and ``max_features=1.0`` (all features, scikit-learn's
    default) by default; ``oob_score_`` is the out-of-bag R² and ``oob_prediction_`` holds
    the out-of-bag predictions (with ``oob_score=True``).

    Two more parameters make it a quantile regression forest (:meth:`predict_quantiles`):

    Parameters
    ----------
    store_leaf_samples : bool, default=False
        Keep, for every tree, the training rows of each leaf with their weight in the tree
        (bootstrap multiplicities, or ``sample_weight`` without bootstrap), and the training
        targets once: ``leaf_samples_``, about 12 bytes per row and tree (8 per row and tree
        with bootstrap, whose bags hold ~63% of the rows) plus 24 per node (see
        :mod:`jitree.model.leaf_samples`). A ``warm_start`` fit stores them for every tree
        on its own data.
    honest : bool, default=False
        Honest trees: each tree grows its structure on a random ``honest_fraction`` of its
        bag's distinct rows and takes its leaf means (and, for :meth:`predict_quantiles`,
        its leaf samples) from the other rows (see :mod:`jitree.model.honest`). Also on the
        classifiers, where the leaves' class counts are re-estimated.
    honest_fraction : float in (0, 1), default=0.5
        The structure part's share of each tree's rows.
    """

    def __init__(self, n_estimators=100, criterion="squared_error", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features=1.0, max_leaf_nodes=None, min_impurity_decrease=0.0,
                 bootstrap=True, oob_score=False, n_jobs=None, random_state=None,
                 ccp_alpha=0.0, max_samples=None, categorical_features=None,
                 ordinal_features=None, categorical_split="subset",
                 max_exhaustive_categories=10, max_subset_size=None,
                 max_one_vs_rest_categories=MAX_ONE_VS_REST_CATEGORIES,
                 min_samples_category=FOREST_MIN_SAMPLES_CATEGORY,
                 category_smoothing=CATEGORY_SMOOTHING,
                 subset_penalty=FOREST_SUBSET_PENALTY, verbose=0,
                 warm_start=False, monotonic_cst=None,
                 interaction_cst=None, quantile=None, honest=False, honest_fraction=0.5,
                 store_leaf_samples=False):
        _forest_init(self, n_estimators, criterion, max_depth, min_samples_split,
                     min_samples_leaf, min_weight_fraction_leaf, max_features, max_leaf_nodes,
                     min_impurity_decrease, bootstrap, oob_score, n_jobs, random_state,
                     ccp_alpha, max_samples, verbose, warm_start, honest, honest_fraction)
        _categorical_init(self, categorical_features, ordinal_features, categorical_split,
                          max_exhaustive_categories, max_subset_size,
                          max_one_vs_rest_categories, min_samples_category, category_smoothing,
                          subset_penalty)
        self.monotonic_cst = monotonic_cst
        self.interaction_cst = interaction_cst
        self.quantile = quantile
        self.store_leaf_samples = store_leaf_samples


class ExtraTreesRegressor(_ForestRegressor):
    """Extremely randomised trees for regression.

    Parameters and attributes are those of :class:`RandomForestRegressor`, with
    ``bootstrap=False`` by default.
    """

    _splitter = "random"

    def __init__(self, n_estimators=100, criterion="squared_error", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features=1.0, max_leaf_nodes=None, min_impurity_decrease=0.0,
                 bootstrap=False, oob_score=False, n_jobs=None, random_state=None,
                 ccp_alpha=0.0, max_samples=None, categorical_features=None,
                 ordinal_features=None, categorical_split="subset",
                 max_exhaustive_categories=10, max_subset_size=None,
                 max_one_vs_rest_categories=MAX_ONE_VS_REST_CATEGORIES,
                 min_samples_category=FOREST_MIN_SAMPLES_CATEGORY,
                 category_smoothing=CATEGORY_SMOOTHING,
                 subset_penalty=FOREST_SUBSET_PENALTY, verbose=0,
                 warm_start=False, monotonic_cst=None,
                 interaction_cst=None, quantile=None, honest=False, honest_fraction=0.5,
                 store_leaf_samples=False):
        _forest_init(self, n_estimators, criterion, max_depth, min_samples_split,
                     min_samples_leaf, min_weight_fraction_leaf, max_features, max_leaf_nodes,
                     min_impurity_decrease, bootstrap, oob_score, n_jobs, random_state,
                     ccp_alpha, max_samples, verbose, warm_start, honest, honest_fraction)
        _categorical_init(self, categorical_features, ordinal_features, categorical_split,
                          max_exhaustive_categories, max_subset_size,
                          max_one_vs_rest_categories, min_samples_category, category_smoothing,
                          subset_penalty)
        self.monotonic_cst = monotonic_cst
        self.interaction_cst = interaction_cst
        self.quantile = quantile
        self.store_leaf_samples = store_leaf_samples
