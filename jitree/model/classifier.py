"""DecisionTreeClassifier."""

import numbers

import numpy as np

from .._threading import n_threads
from . import monotone
from ._base import (
    CATEGORY_SMOOTHING,
    MAX_ONE_VS_REST_CATEGORIES,
    MIN_SAMPLES_CATEGORY,
    SUBSET_PENALTY,
    BaseDecisionTree,
)
from ._params import given_parameters
from .validation import check_one_output, check_sample_weight, check_y


def _class_weight_factors(class_weight, classes, y_index, sample_weight, counts=None):
    """Per-class multipliers for ``class_weight`` (None, 'balanced' or {label: weight});
    'balanced' reads the number of rows of each class from ``y_index``, or from ``counts``
    when given (rows spread over a cluster)."""
    if class_weight is None:
        return np.ones(classes.shape[0])
    if isinstance(class_weight, str):
        if class_weight != "balanced":
            raise ValueError(f"class_weight must be None, 'balanced' or a dict, got "
                             f"{class_weight!r}")
        if counts is None:
            counts = np.bincount(y_index, minlength=classes.shape[0])
        counts = np.asarray(counts, dtype=np.float64)
        return counts.sum() / (classes.shape[0] * np.where(counts > 0, counts, 1.0))
    if not isinstance(class_weight, dict):
        raise TypeError(f"class_weight must be None, 'balanced' or a dict, got "
                        f"{type(class_weight).__name__}")
    factors = np.ones(classes.shape[0])
    known = {label: k for k, label in enumerate(classes.tolist())}
    for label, weight in class_weight.items():
        if label not in known:
            raise ValueError(f"class_weight has label {label!r}, which is not among the "
                             f"classes {classes.tolist()}")
        if isinstance(weight, bool) or not isinstance(weight, numbers.Real) or weight < 0 \
                or not np.isfinite(weight):
            raise ValueError(f"class_weight[{label!r}] must be a non-negative number, got "
                             f"{weight!r}")
        factors[known[label]] = float(weight)
    return factors


def class_weight_count_message(n_weights, n_outputs):
    """The error of a class_weight list whose length is not the number of outputs (trees and
    forests alike; scikit-learn's words first)."""
    return (f"number of elements in class_weight should match number of outputs: "
            f"class_weight has {n_weights}, y has {n_outputs} outputs (one dict per output)")


def classes_of(y):
    """(classes, index of each label among them) of a 1-D y of labels."""
    try:
        classes, y_index = np.unique(y, return_inverse=True)
    except TypeError:
        raise ValueError("Unknown label type: the labels of y cannot be compared with each "
                         "other (mixed types)") from None
    if classes.shape[0] < 1:
        raise ValueError("y has no class")
    return classes, y_index.reshape(-1)


def encode_outputs(y, class_weight, sample_weight, counts=None):
    """``(classes, y_index, sample_weight)`` of a multi-output y (n_samples, n_outputs):
    each output's classes, the class index of every label (n_samples, n_outputs) and the
    weights multiplied by each output's class weight, as scikit-learn does. ``class_weight``:
    None, 'balanced' (each output balanced) or a list of one dict per output. ``counts``:
    per output, the rows of each class (when they are spread over a cluster)."""
    n_outputs = y.shape[1]
    if class_weight is None or isinstance(class_weight, str):
        weights = [class_weight] * n_outputs
    elif isinstance(class_weight, dict):
        raise ValueError("class_weight of a multi-output y must be None, 'balanced' or a list "
                         f"of {n_outputs} dicts, one per output; got a dict")
    else:
        weights = list(class_weight)
        if len(weights) != n_outputs:
            raise ValueError(class_weight_count_message(len(weights), n_outputs))
    classes = []
    y_index = np.empty(y.shape, dtype=np.int64)
    factor = np.ones(y.shape[0])
    for j in range(n_outputs):
        output_classes, index = classes_of(y[:, j])
        classes.append(output_classes)
        y_index[:, j] = index
        if weights[j] is not None:
            factor *= _class_weight_factors(weights[j], output_classes, index, sample_weight,
                                            None if counts is None else counts[j])[index]
    if class_weight is not None:
        sample_weight = sample_weight * factor
        if not sample_weight.any():  # (non-negative weights)
            raise ValueError("class_weight leaves every sample with weight 0")
    return classes, y_index, sample_weight


def labels_dtype(classes):
    """The dtype of the labels of several outputs, ``classes`` a list of one array per
    output: theirs when every output has the same, else object."""
    dtypes = {c.dtype for c in classes}
    return classes[0].dtype if len(dtypes) == 1 else np.dtype(object)


def prediction_dtype(model):
    """The dtype of a fitted model's ``predict``: its labels' for a classifier (several
    outputs: :func:`labels_dtype`), float64 for a regressor."""
    if not hasattr(model, "classes_"):
        return np.dtype(np.float64)
    if getattr(model, "n_outputs_", 1) == 1:
        return model.classes_.dtype
    return labels_dtype(model.classes_)


def output_bounds(classes):
    """Where each output's columns start and stop (``bounds[j]:bounds[j + 1]``) among several
    outputs' class probabilities side by side (``classes``: one array per output)."""
    return np.cumsum([0] + [c.shape[0] for c in classes]).tolist()


def side_by_side(proba):
    """A multi-output classifier's probabilities (a list of one array per output) as one
    array, the outputs' columns side by side; any other prediction as it is."""
    return np.hstack(proba) if isinstance(proba, list) else proba


def output_labels(classes, proba_columns):
    """Per output ``j``: the labels of ``classes[j]`` of largest probability in
    ``proba_columns[j]`` (n_samples, n_classes_j), as one (n_samples, n_outputs) array of
    :func:`labels_dtype`."""
    labels = np.empty((proba_columns[0].shape[0], len(classes)), dtype=labels_dtype(classes))
    for j, (output_classes, proba) in enumerate(zip(classes, proba_columns, strict=True)):
        labels[:, j] = output_classes.take(np.argmax(proba, axis=1))
    return labels


def subset_accuracy(y_pred, y, sample_weight):
    """Mean (weighted) accuracy; for several outputs the fraction of rows whose every output
    is right (scikit-learn's subset accuracy)."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1 and y_pred.ndim == 1:
        y = y[:, 0]
    if y.shape != y_pred.shape:
        outputs = "one output" if y_pred.ndim == 1 else f"{y_pred.shape[1]} outputs"
        raise ValueError(f"y has shape {y.shape}; the model predicts {outputs} for "
                         f"{y_pred.shape[0]} rows")
    if y_pred.ndim == 2:
        correct = np.all(y_pred == y, axis=1).astype(np.float64)
    else:
        correct = (y_pred == y).astype(np.float64)
    if sample_weight is None:
        return float(correct.mean())
    return float(np.average(correct, weights=check_sample_weight(sample_weight,
                                                                 y_pred.shape[0])))


def _plain_label(label):
    """A NumPy scalar label as the Python scalar (for messages)."""
    return label.item() if isinstance(label, np.generic) else label


class DecisionTreeClassifier(BaseDecisionTree):
    """A decision tree classifier grown on presorted features.

    Parameters
    ----------
    criterion : {"gini", "entropy", "log_loss", "misclassification", "gain_ratio", "cart", \
"twoing"}, default="gini"
        Split quality measure (see ``jitree.kernels.criteria``). ``log_loss`` is ``entropy``.
    splitter : {"best", "random"}, default="best"
        ``best``: exact search over all thresholds; ``random``: one uniform random threshold
        per feature and node (Extra-Trees).
    max_depth : int or None, default=None
        Depth limit (root at depth 0).
    min_samples_split : int or float, default=2
        Fewest samples a node needs to be split (a float is a fraction of n_samples).
    min_samples_leaf : int or float, default=1
        Fewest samples in each child of a split (a float is a fraction of n_samples).
    min_weight_fraction_leaf : float, default=0.0
        Least fraction of the total sample weight in each child.
    max_features : int, float, "sqrt", "log2" or None, default=None
        Number of features each node visits, in a random order, constant ones
        included: it searches those of them that vary, and visits more while none does,
        as scikit-learn does (None: all).
    random_state : int, RandomState, Generator or None, default=None
        Seed of the feature draws and random thresholds. Results never depend on ``n_jobs``.
    max_leaf_nodes : int or None, default=None
        Grow best-first (largest impurity decrease first) up to this many leaves.
    min_impurity_decrease : float, default=0.0
        A split must decrease the weighted impurity ``W_node/W * (I - W_l/W_node I_l -
        W_r/W_node I_r)`` by at least this.
    class_weight : dict, "balanced" or None, default=None
        Weights multiplied into ``sample_weight`` by class.
    purity_threshold : float in (0, 1], default=1.0
        A node whose purity ``max_c p_c`` is at least this becomes a leaf.
    impurity_threshold : float, default=0.0
        A node whose impurity is at most this becomes a leaf.
    ccp_alpha : float, default=0.0
        Minimal cost-complexity pruning after growth: branches whose effective alpha is at most
        this are pruned (see ``cost_complexity_pruning_path``).
    n_jobs : int or None, default=None
        Threads for fitting and prediction (None or -1: all cores).
    categorical_features : list of int or str, bool mask or None, default=None
        Columns holding unordered categories (indices, DataFrame column names or a mask).
        A pandas ``category`` column is categorical without being declared; string columns
        must be declared. Categories are matched by value at predict; one unseen at fit is
        routed like a missing value.
    ordinal_features : list of int or str, bool mask or None, default=None
        Columns holding ordered levels, tested ``x <= level`` (a pandas ordered
        ``category`` column is ordinal without being declared).
    categorical_split : {"subset", "one_vs_rest", "multiway"}, default="subset"
        Tests on categorical features: the best subset ``x ∈ V``; ``x == c``; or one child per
        category present at the node (ID3 / C4.5, with ``entropy`` or ``gain_ratio``). See
        :mod:`jitree.kernels.categorical` for the search and its complexity.
    max_exhaustive_categories : int, default=10
        Subset search with more than two classes: every partition is tried while a node has
        at most this many categories; beyond, the best of the per-class orderings.
    max_subset_size : int or None, default=None
        Subset search: only partitions with a side of at most this many categories (the
        tested set; LightGBM's ``max_cat_threshold``). As LightGBM's, the sets tried under
        the bound are the ends of the categories' sorted order (and single categories when
        ``subset_penalty`` is positive): the best of those, not of every set that small.
    max_one_vs_rest_categories : int, default=0
        Subset search: a node where at most this many categories (after pooling) are
        present tests one category against the rest, ``x == c`` (LightGBM's
        ``max_cat_to_onehot``). 0: never.
    min_samples_category : float or "auto", default="auto"
        Categories with fewer samples at a node (with ``sample_weight``: less weight than
        this many samples of the tree's mean weight) are not searched on their own: they
        are pooled into one category, which goes to one side (one child for multiway) and
        which those categories follow at predict (LightGBM's ``min_data_per_group`` and
        ``cat_smooth`` count play this role). A float applies to every
        ``categorical_split``; "auto": 10 for "subset", 0 (no pooling) for "one_vs_rest"
        and "multiway", so that those give the one-hot and ID3 / C4.5 trees.
    category_smoothing : float, default=0
        Subset search orders the categories by their statistic (P(class 1), per class, or
        the mean target) smoothed toward the node's: (S_c + a S / W) / (W_c + a) with
        ``a = category_smoothing`` samples of the tree's mean weight, so that the order of
        a light category moves toward the middle (LightGBM's ``cat_smooth``). Split scores
        stay exact. See :mod:`jitree.kernels.categorical`.
    subset_penalty : float, default=4
        Subset search with gini, entropy or squared error: a test ``x ∈ V`` on a node's q > 2
        categories (after pooling) is chosen over the best single-category test ``x == c``
        and over other features only when its score exceeds theirs by ``subset_penalty``
        times (q - 2) times what a category that does not matter adds to a split's score on
        average (the node's variance or Gini impurity, or (k - 1) / 2 for entropy with k
        classes, per sample): ordering q categories by their statistics and cutting that
        order finds a good-looking split in noise. 0: no penalty (the exact search).
        The defaults of these four were chosen on public tables: see
        :mod:`jitree.bench_tables`.
    monotonic_cst : array-like of int of shape (n_features,), default=None
        Monotonic constraint per feature, scikit-learn's: 1 the prediction (P(classes_[1]),
        or the mean target of a regressor) never decreases as the feature grows, -1 never
        increases, 0 free. A split on a constrained feature is made only when its children
        are ordered and within the bounds its ancestors set; node values are clipped to
        those bounds. Binary classification and regression; numeric and ordinal features.
    interaction_cst : {"pairwise", "no_interactions"} or sequence of groups, default=None
        Interaction constraints, HistGradientBoosting's: groups of feature indices (features
        in no group form one more group); every branch splits only on the features of one
        group, the groups open to a node being those that hold every feature split on above
        it. "no_interactions": each feature alone (a tree then splits on one feature);
        "pairwise": every pair.
    honest : bool, default=False
        Honest tree (generalized random forests' and YDF's honesty): the structure is grown
        on a random part of the samples, ``value`` re-estimated on the others (see
        :mod:`jitree.model.honest`: the part is drawn from ``random_state``; a node that no
        estimation sample reaches takes its nearest such ancestor's value;
        ``n_node_samples``, ``weighted_n_node_samples`` and ``impurity`` stay those of the
        growth).
    honest_fraction : float in (0, 1), default=0.5
        Fraction of the samples (of positive weight) that grows the structure with
        ``honest=True`` (generalized random forests' ``honesty.fraction``); the rest, at least
        one sample, estimates the leaves.

    Missing values (NaN; None / pandas NA in categorical columns) are allowed: each split
    sends them to the side that scores best; where a node had none in training they go to the
    child with more training weight.

    Ties between equally good splits go to the lowest feature index, then the lowest threshold.

    Attributes
    ----------
    tree_ : jitree.Tree
    classes_ : ndarray of the class labels, sorted
    n_classes_ : int
    n_features_in_ : int
    n_outputs_ : int
        Number of outputs of the target: always 1 (one column of labels).
    feature_names_in_ : ndarray of str (only when fitted on a DataFrame with string columns)
    feature_importances_ : ndarray
    max_features_ : int
    """

    _task = "classification"

    def __init__(self, criterion="gini", splitter="best", max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_features=None,
                 random_state=None, max_leaf_nodes=None, min_impurity_decrease=0.0,
                 class_weight=None, purity_threshold=1.0, impurity_threshold=0.0,
                 ccp_alpha=0.0, n_jobs=None, categorical_features=None,
                 ordinal_features=None, categorical_split="subset",
                 max_exhaustive_categories=10, max_subset_size=None,
                 max_one_vs_rest_categories=MAX_ONE_VS_REST_CATEGORIES,
                 min_samples_category=MIN_SAMPLES_CATEGORY,
                 category_smoothing=CATEGORY_SMOOTHING,
                 subset_penalty=SUBSET_PENALTY, monotonic_cst=None,
                 interaction_cst=None, honest=False, honest_fraction=0.5):
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
        self.class_weight = class_weight
        self.purity_threshold = purity_threshold
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
        self.honest = honest
        self.honest_fraction = honest_fraction

    def fit(self, X, y, sample_weight=None):
        """Grow the tree on X (n_samples, n_features) and labels y (any hashable type)."""
        X = self._validate_fit_X(X, keep_sparse=True)
        n_samples = X.shape[0]
        y = check_y(y, n_samples, regression=False, multi_output=True,
                    column_warns=False)
        sample_weight = check_sample_weight(sample_weight, n_samples)
        if y.ndim == 2:
            classes, y_index, sample_weight = encode_outputs(y, self.class_weight,
                                                             sample_weight)
            self.classes_ = classes
            self.n_classes_ = [c.shape[0] for c in classes]
            most = max(self.n_classes_)
            return self._fit_tree(X, y_index.astype(np.float64), sample_weight,
                                  most * y.shape[1], most)
        classes, y_index = classes_of(y)
        factors = _class_weight_factors(self.class_weight, classes, y_index, sample_weight)
        if self.class_weight is not None:
            sample_weight = sample_weight * factors[y_index]
            if not sample_weight.any():  # (non-negative weights)
                raise ValueError("class_weight leaves every sample with weight 0")
        self.classes_ = classes
        self.n_classes_ = classes.shape[0]
        self._fit_tree(X, y_index.astype(np.float64), sample_weight, self.n_classes_,
                       self.n_classes_)
        return self

    def _pruning_targets(self, y, n_samples):
        """Class index of each pruning label and the class index each node predicts. A label
        that is not among ``classes_`` is refused: the tree cannot predict it, so every node
        would count it as an error and the pruning would mean nothing."""
        check_one_output(self, "pruning")
        y = check_y(y, n_samples, regression=False, column_warns=False)
        try:
            position = np.searchsorted(self.classes_, y)
            position = np.clip(position, 0, self.classes_.shape[0] - 1)
            known = np.asarray(self.classes_[position] == y, dtype=bool)
        except TypeError:  # labels of another type than the classes (e.g. str vs int)
            known = np.zeros(y.shape[0], dtype=bool)
        if known.shape != y.shape:  # a comparison that did not go element by element
            known = np.zeros(y.shape[0], dtype=bool)
        if not known.all():
            unseen = [_plain_label(label) for label in y[~known][:5]]
            raise ValueError(f"y_prune holds labels that are not among the classes seen at fit "
                             f"(e.g. {unseen}); classes_ = {self.classes_.tolist()}")
        target = position.astype(np.float64)
        node_class = np.argmax(self.tree_.value, axis=1).astype(np.float64)
        return target, node_class

    def prune_pessimistic(self, confidence=0.25):
        """C4.5's pessimistic pruning (subtree replacement) at confidence factor
        ``confidence``; returns self. Smaller values prune more."""
        from .pruning import pessimistic
        from .validation import check_is_fitted

        check_is_fitted(self)
        check_one_output(self, "prune_pessimistic")
        if isinstance(confidence, (bool, np.bool_)) \
                or not isinstance(confidence, numbers.Real) or not 0.0 < confidence < 1.0:
            raise ValueError(f"confidence must be a number in (0, 1), got {confidence!r}")
        self.tree_ = pessimistic(self.tree_, float(confidence))
        return self

    def _node_proba(self):
        """Every node's class probabilities (the tree's
        :meth:`~jitree.Tree.probability_table`); under ``monotonic_cst``, made to keep the
        constraints in every bit (:func:`jitree.model.monotone.exact_probabilities`)."""
        tree = self.tree_
        table = tree.cached("proba", tree.probability_table)
        constraints = self._kept_constraints()
        if constraints is None:
            return table
        return tree.cached(("proba", constraints.tobytes()), lambda: (
            monotone.exact_probabilities(tree, table, constraints)))

    def _kept_constraints(self):
        """The constraints :meth:`_node_proba` keeps in every bit: ``monotonic_cst`` as int8
        when it is -1, 0 or 1 per feature of a binary tree and constrains one, else None.
        (A tree grown without them is left as it is: see
        :func:`~jitree.model.monotone.exact_probabilities`.)"""
        if self.tree_.n_outputs != 1 or self.tree_.value.shape[1] != 2:
            return None
        try:  # the kernels' form (on the fraction of class 0), from its one validation
            kernels = self._monotonic(self.tree_.n_features, None, 2)
        except (TypeError, ValueError):
            return None
        return None if kernels is None else -kernels

    def _node_label(self):
        """Per node: the predicted label itself when the labels are int64 or float64 (the
        kernel then writes labels directly), else the index into ``classes_``."""
        index = self.tree_.cached(
            "class_index", lambda: np.argmax(self._node_proba(), axis=1).astype(np.int64))
        if self.classes_.dtype in (np.int64, np.float64):
            # keyed by the labels themselves: estimators may share one Tree (_from_tree)
            key = ("labels", self.classes_.dtype.str, self.classes_.tobytes())
            return self.tree_.cached(key, lambda: self.classes_[index]), True
        return index, False

    def predict_proba(self, X):
        """Class probabilities (n_samples, n_classes): the weighted class fractions of the
        leaf each row reaches. Several outputs: a list of one such array per output."""
        model, chunks = self._chunked(X, rows=True)
        if chunks is not None:
            return model._predict_chunks(chunks, model._predict_proba_validated)
        return self._predict_proba_validated(self._validate_walk_X(X))

    def _predict_proba_validated(self, X):
        with n_threads(self.n_jobs):
            proba = self.tree_.predict_table(X, self._node_proba())
        return self._outputs_proba(proba) if self.tree_.n_outputs > 1 else proba

    def _outputs_proba(self, proba):
        """The columns of each output in a multi-output ``proba`` (n_samples, n_outputs x
        the most classes), as a list of (n_samples, n_classes_j) arrays."""
        width = self.tree_.n_classes
        return [proba[:, j * width:j * width + n] for j, n in enumerate(self.n_classes_)]


    def predict_log_proba(self, X):
        """Natural logarithm of :meth:`predict_proba` (-inf for a probability of 0)."""
        proba = self.predict_proba(X)
        with np.errstate(divide="ignore"):
            if isinstance(proba, list):
                return [np.log(p) for p in proba]
            return np.log(proba)

    def predict(self, X):
        """Most probable class of each row (the lowest-index class on a tie)."""
        model, chunks = self._chunked(X, rows=True)
        if chunks is not None:
            return model._predict_chunks(chunks, model._predict_validated)
        return self._predict_validated(self._validate_walk_X(X))

    def _predict_validated(self, X):
        if self.tree_.n_outputs > 1:
            return output_labels(self.classes_, self._predict_proba_validated(X))
        node_label, direct = self._node_label()
        with n_threads(self.n_jobs):
            if node_label.dtype == np.float64:
                labels = self.tree_.predict_table(X, node_label[:, None])[:, 0]
            else:
                labels = self.tree_.predict_labels(X, node_label)
        return labels if direct else self.classes_.take(labels)

    def score(self, X, y, sample_weight=None):
        """Mean (weighted) accuracy; several outputs: the fraction of rows whose every output
        is predicted right (subset accuracy)."""
        return subset_accuracy(self.predict(X), y, sample_weight)

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        tags = Tags(estimator_type="classifier", target_tags=TargetTags(required=True),
                    classifier_tags=ClassifierTags(), input_tags=InputTags())
        return self._more_tags_common(tags)


class ExtraTreeClassifier(DecisionTreeClassifier):
    """An extremely randomized tree classifier (scikit-learn's ``ExtraTreeClassifier``): a
    :class:`DecisionTreeClassifier` whose defaults are ``splitter="random"`` (one uniform
    random threshold per drawn feature and node) and ``max_features="sqrt"``. Parameters,
    attributes and methods are :class:`DecisionTreeClassifier`'s; the same parameters grow the
    same tree with either class. Extra-Trees forests: :class:`ExtraTreesClassifier`.
    """

    def __init__(self, criterion="gini", splitter="random", max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_features="sqrt",
                 random_state=None, max_leaf_nodes=None, min_impurity_decrease=0.0,
                 class_weight=None, purity_threshold=1.0, impurity_threshold=0.0, ccp_alpha=0.0,
                 n_jobs=None, categorical_features=None, ordinal_features=None,
                 categorical_split="subset", max_exhaustive_categories=10, max_subset_size=None,
                 max_one_vs_rest_categories=MAX_ONE_VS_REST_CATEGORIES,
                 min_samples_category=MIN_SAMPLES_CATEGORY, category_smoothing=CATEGORY_SMOOTHING,
                 subset_penalty=SUBSET_PENALTY, monotonic_cst=None, interaction_cst=None,
                 honest=False, honest_fraction=0.5):
        super().__init__(**given_parameters(locals()))
