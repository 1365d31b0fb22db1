"""Tree building: the Python side of the compiled growth loop.

Python validates nothing here (the estimators did), presorts X once
(:class:`Presorted`), packs the records of :mod:`jitree.kernels.records` and calls
:func:`jitree.kernels.grower.grow_tree`, which grows the whole tree in compiled code
(depth-wise, or best-first when ``max_leaf_nodes`` is set); the arrays it returns become a
:class:`jitree.Tree`.
"""

import functools
import math
import numbers
import queue
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

import numba
import numpy as np

from ..kernels import criteria, grower, pinball, sample_order
from ..kernels.grower import (
    F_IMPURITY,
    F_LOWER,
    F_THRESHOLD,
    F_UPPER,
    F_WEIGHT,
    N_CATEGORY_OFFSET,
    N_FEATURE,
    N_LEFT,
    N_MISSING_LEFT,
    N_RIGHT,
    N_SAMPLES,
    N_SPLIT_KIND,
    grow_tree,
)
from ..kernels.presort import fill_from_keys, fill_sorted, keep_samples
from ..kernels.records import CategorySettings, GrowSettings, Ranks, SampleOrder, TreeData
from ..kernels.sparse import SparseData, grow_sparse, keep_rows, sort_columns
from .criterion import Criterion
from .tree import FEATURE_CATEGORICAL, Tree, read_only_view
from .validation import FIT_DENSE_COPIES, is_sparse, memory_bytes, sparse_to_dense

_NO_CONSTRAINTS = np.zeros(0, dtype=np.int8)
_NO_INTERACTIONS = np.zeros((0, 0), dtype=np.uint8)

# Fewest samples for which the presort runs on a thread pool (below it, starting the pool
# costs more than the sorts it shares out).
_PARALLEL_PRESORT_SAMPLES = 20_000


@dataclass
class GrowParams:
    criterion: object  # a built-in's int code, or a jitree.Criterion
    is_regression: bool
    random_splitter: bool
    seed: int
    max_depth: int
    min_samples_split: int
    min_samples_leaf: int
    min_weight_leaf: float
    max_features: int
    max_leaf_nodes: int  # 0: unlimited, depth-wise growth
    min_impurity_decrease: float
    purity_threshold: float
    impurity_threshold: float
    # feature kinds (FEATURE_* of jitree.model.tree) and category counts; None: all numeric
    feature_kind: np.ndarray = None
    n_categories: np.ndarray = None
    categorical_mode: int = 0  # SUBSET, ONE_VS_REST or MULTIWAY of kernels.categorical
    max_exhaustive_categories: int = 10
    max_subset_size: int = 0  # 0: no bound
    # category search regularisation, in samples of the tree's mean weight (see
    # kernels.categorical): smoothing of the categories' order, pooling of rare categories
    category_smoothing: float = 0.0
    min_samples_category: float = 0.0
    max_one_vs_rest_categories: int = 0  # 0: never
    subset_penalty: float = 0.0
    # monotonic constraint per feature on the kernels' node value stats[0] / weight (the mean
    # target; classification: the fraction of class 0, so a constraint on P(class 1) enters
    # with its sign flipped); None: none
    monotonic: np.ndarray = None
    # interaction constraints: (n_groups, n_features) uint8 membership; None: none
    interaction: np.ndarray = None
    # the order criteria's alpha (criterion "quantile"; absolute_error: 0.5)
    quantile: float = 0.5
    # columns of y: a tree of several outputs grows on per-sample statistics rows
    # (TreeData.outputs) instead of class labels or one target
    n_outputs: int = 1

    @property
    def has_labels(self):
        """Whether the samples carry class labels through the kernels (single-output
        classification)."""
        return not self.is_regression and self.n_outputs == 1

    def measure(self, block_size=0, n_stats=0):
        """The criterion's :class:`~jitree.kernels.records.Measure` record (a new one per
        call: its flag of NaN results belongs to one fit); ``block_size``: the statistics of
        each output of a multi-output tree (classes, or 2); ``n_stats``: the size of the
        tree's statistics vectors (0: unknown; a user criterion's threshold scans are
        compiled for it)."""
        blocks = criteria.output_blocks(self.n_outputs, block_size)
        if isinstance(self.criterion, numbers.Integral):
            return criteria.builtin(self.criterion, blocks)
        return self.criterion.measure(self.is_regression, blocks, n_stats)

    def settings(self, n_blocks, measure):
        """The :class:`~jitree.kernels.records.GrowSettings` record the kernels read."""
        return GrowSettings(
            measure, bool(self.random_splitter), np.uint64(self.seed),
            np.int64(self.max_depth), np.int64(self.min_samples_split),
            np.int64(self.min_samples_leaf), np.float64(self.min_weight_leaf),
            np.int64(self.max_features), np.int64(self.max_leaf_nodes),
            np.float64(self.min_impurity_decrease), np.float64(self.purity_threshold),
            np.float64(self.impurity_threshold), np.int64(n_blocks),
            _NO_CONSTRAINTS if self.monotonic is None
            else np.ascontiguousarray(self.monotonic, dtype=np.int8),
            _NO_INTERACTIONS if self.interaction is None
            else np.ascontiguousarray(self.interaction, dtype=np.uint8),
            np.float64(self.quantile), np.int64(grower.PING_PONG_BYTES), np.int64(0))

    def categories(self, n_features, sample_unit):
        """The :class:`~jitree.kernels.records.CategorySettings` record, or None when no
        feature is categorical (the growth loop then leaves the category search out).
        ``sample_unit``: the mean weight of the tree's samples (in the kernels' units), the
        weight of one sample in the settings counted in samples."""
        if self.feature_kind is None:
            return None
        is_categorical = (np.asarray(self.feature_kind) == FEATURE_CATEGORICAL)
        if not is_categorical.any():
            return None
        return CategorySettings(
            is_categorical.astype(np.uint8),
            np.ascontiguousarray(self.n_categories, dtype=np.int32),
            np.int64(self.categorical_mode), np.int64(self.max_exhaustive_categories),
            np.int64(self.max_subset_size),
            np.float64(self.category_smoothing * sample_unit),
            np.float64(self.min_samples_category * sample_unit),
            np.int64(self.max_one_vs_rest_categories),
            np.float64(self.subset_penalty * sample_unit))


def presort(X, label, sorted_index, sorted_value, sorted_label):
    """Sort every feature once, in parallel over features on numba's current thread count
    (the kernels release the GIL, so a thread pool scales; each worker reuses one set of
    the sort's scratch arrays: 16 bytes a sample for float32 X, 32 for float64)."""
    n_samples, n_features = X.shape
    is_float32 = X.dtype == np.float32

    def scratch():
        if is_float32:
            return (np.empty(n_samples, dtype=np.uint64), np.empty(n_samples, dtype=np.uint64))
        key = np.empty(n_samples)
        return (key, key.view(np.uint64), np.empty(n_samples, dtype=np.uint64),
                np.empty(n_samples, dtype=np.int64), np.empty(n_samples, dtype=np.int64),
                np.empty((8, 256), dtype=np.int64))

    def one(f, keys):
        # read-only, as every X the kernels read: a column of Fortran-ordered X (a
        # DataFrame's) is a view, read-only in pandas 3; others are copies
        column = read_only_view(np.ascontiguousarray(X[:, f]))
        if is_float32:
            fill_from_keys(column, keys[0], keys[1], label, f, sorted_index, sorted_value,
                           sorted_label)
        else:
            fill_sorted(column, keys, label, f, sorted_index, sorted_value, sorted_label)

    workers = min(numba.get_num_threads(), n_features)
    if n_samples < _PARALLEL_PRESORT_SAMPLES:
        workers = 1
    if workers <= 1:
        keys = scratch()
        for f in range(n_features):
            one(f, keys)
        return
    free = queue.SimpleQueue()
    for _ in range(workers):
        free.put(scratch())

    def run(f):
        keys = free.get()
        try:
            one(f, keys)
        finally:
            free.put(keys)

    with ThreadPoolExecutor(workers) as pool:
        for _ in pool.map(run, range(n_features)):
            pass


@dataclass(frozen=True)
class Scaling:
    """Weights and regression targets in the units the kernels grow on, and back.

    - Weights are divided by ``weight_unit``: the weight itself when all are equal (they
      become exactly 1, the unweighted path); else, when the weights are whole multiples of
      a power of two adding up to fewer than 2**50 of it (whole-number weights, bootstrap
      counts, halves), the largest such power of two (:func:`_weight_unit`: the weights
      become whole numbers, as the counts of their rows repeated would be, whose m log m
      entropy looks up, see :func:`xlogx_table`); else the power of two that brings the
      largest into [1, 2). Each is a power of two or makes every weight 1, an exact
      scaling: every sum, score and tie as with the caller's weights for the criteria whose
      scores scale with the weights (gini, squared error, poisson, ...), and, for entropy
      (W log W - sum_c s_c log s_c, which does not), the same weights and counts of
      repeated rows reach the kernels as the same whole numbers. No sum of weights or of
      squared weights then overflows or underflows, and weights scaled by a power of two
      grow the same tree.
    - Regression targets become ``y' = (y / 2**magnitude - centre) / 2**spread``: centred on
      their weighted mean and scaled by powers of two into (-1, 1). The variance, a mean of
      squares minus a squared mean, then neither overflows (``y = +-1e200``) nor cancels
      (``y = 1e8 + {0, 1}``), so trees do not depend on an offset or a scale of y; a scale
      by a power of two changes no bit of y'. A constant target is 0 everywhere (no split
      on rounding noise). The centre is the mean rounded to the coarsest power of two that
      divides every target (:func:`_on_grid`), so that y' is exact and targets whose sums
      are exact (integers, halves, ...) keep them exact: equal partitions of the samples
      then score the same bits whatever order they are added in (the tie rule decides
      between them, as with a dense or a sparse X, weights or repeated rows), and a leaf of
      equal targets predicts them exactly.
    - Poisson targets (``centred=False``) are only scaled, ``y' = y / 2**magnitude``: the
      Poisson deviance depends on an offset of y, not on its scale (it scales with it).
      So are the targets of the order criteria (absolute_error, quantile), whose values are
      targets of the node (or midpoints of two): they come back exactly, and their scans
      centre the sums of each node themselves (:mod:`jitree.kernels.pinball`).

    Tree values, impurities and node weights are reported in the caller's units.
    """

    weight_unit: float = 1.0
    centre: float = 0.0
    magnitude: int = 0
    spread: int = 0
    is_regression: bool = False
    impurity_power: int = 2  # impurities scale as y**2 (variance) or as y (poisson)

    @classmethod
    def of(cls, target, sample_weight, is_regression, centred=True):
        """The scaling of these samples (positive weights; finite targets); ``centred=False``
        scales the targets without centring them (poisson). A 2-D target (multi-output
        regression) shares one magnitude and spread, each output centred on its own mean
        (``centre`` is then a vector): the outputs' impurities keep their common units."""
        largest = float(sample_weight.max())
        if sample_weight.min() == largest:
            weight_unit = largest
        else:
            weight_unit = _weight_unit(sample_weight, largest)
        if not is_regression:
            return cls(weight_unit)
        if target.ndim == 2:
            return cls._of_outputs(target, sample_weight / weight_unit, weight_unit, centred)
        largest = float(np.abs(target).max())
        magnitude = int(np.frexp(largest)[1]) if largest > 0.0 else 0
        if not centred:
            return cls(weight_unit, 0.0, magnitude, 0, True, 1)
        if target.min() == target.max():
            return cls(weight_unit, float(np.ldexp(target[0], -magnitude)), magnitude, 0, True)
        z = np.ldexp(target, -magnitude)  # exact: |z| < 1
        weight = sample_weight / weight_unit
        centre = _on_grid(float(criteria.weighted_total(weight, z)
                                / criteria.weighted_total(weight, np.ones_like(weight))), z)
        spread = int(np.frexp(np.abs(z - centre).max())[1])
        return cls(weight_unit, centre, magnitude, spread, True)

    @classmethod
    def _of_outputs(cls, target, weight, weight_unit, centred):
        largest = float(np.abs(target).max())
        magnitude = int(np.frexp(largest)[1]) if largest > 0.0 else 0
        if not centred:
            return cls(weight_unit, 0.0, magnitude, 0, True, 1)
        z = np.ldexp(target, -magnitude)
        total = criteria.weighted_total(weight, np.ones_like(weight))
        centre = np.array([z[0, j] if z[:, j].min() == z[:, j].max() else
                           _on_grid(criteria.weighted_total(weight, np.ascontiguousarray(z[:, j]))
                                    / total, z[:, j]) for j in range(z.shape[1])])
        deviation = float(np.abs(z - centre).max())
        spread = int(np.frexp(deviation)[1]) if deviation > 0.0 else 0
        return cls(weight_unit, centre, magnitude, spread, True)

    def weights(self, sample_weight):
        """Weights in kernel units: at most 2, a positive weight stays positive."""
        if self.weight_unit == 1.0:
            return sample_weight
        scaled = sample_weight / self.weight_unit
        return np.where(sample_weight > 0.0, np.maximum(scaled, _TINY), 0.0)

    def targets(self, target):
        if not self.is_regression:
            return target
        return np.ldexp(np.ldexp(target, -self.magnitude) - self.centre, -self.spread)

    def impurity_units(self):
        """Power of two by which the kernels' impurities multiply into the caller's."""
        return self.impurity_power * (self.magnitude + self.spread) if self.is_regression else 0

    def impurities(self, impurity):
        """Kernel impurities in the caller's units; a variance beyond float64's range (targets
        near 1e154 and beyond) is reported as the largest float64 (an infinite deviance stays
        infinite)."""
        if self.impurity_units() == 0:
            return impurity
        with np.errstate(over="ignore"):
            scaled = np.ldexp(impurity, self.impurity_units())
            return np.where(np.isinf(impurity), impurity, np.minimum(scaled, _LARGEST))

    def kernel_params(self, params):
        """``params`` (:class:`GrowParams`) with its leaf weight and impurity thresholds in
        kernel units: ``params`` itself when those are the caller's (unit weights, targets
        not rescaled), which spares a small fit the copy."""
        if self.weight_unit == 1.0 and self.impurity_units() == 0:
            return params
        return replace(params, min_weight_leaf=params.min_weight_leaf / self.weight_unit,
                       min_impurity_decrease=self.impurity_setting(params.min_impurity_decrease),
                       impurity_threshold=self.impurity_setting(params.impurity_threshold))

    def impurity_setting(self, value):
        """A threshold on impurities (impurity_threshold, min_impurity_decrease) in kernel
        units."""
        return float(np.ldexp(value, -self.impurity_units()))

    def means(self, mean):
        """Mean targets in the caller's units (regression values)."""
        return np.ldexp(self.centre + np.ldexp(mean, self.spread), self.magnitude)


# whole-number kernel weights (see _weight_unit) add up to fewer than this
_WHOLE_TOTAL = float(2 ** 50)
_FRACTION_BITS = np.uint64((1 << 52) - 1)
_IMPLICIT_BIT = np.uint64(1 << 52)


def _weight_unit(weight, largest):
    """The :class:`Scaling` unit of positive finite weights that are not all equal: the
    largest power of two of which every weight is a whole multiple, when those multiples
    add up to fewer than 2**50 (1 for whole-number weights of which one is odd, 2**-1 for
    halves); else the power of two that brings the ``largest`` weight into [1, 2)."""
    bits = np.ascontiguousarray(weight, dtype=np.float64).view(np.uint64)
    exponent = (bits >> np.uint64(52)).astype(np.int64)
    mantissa = bits & _FRACTION_BITS
    normal = exponent > 0
    mantissa[normal] |= _IMPLICIT_BIT
    # weight = mantissa * 2**(exponent - 1075) (subnormals: exponent field 0 counts as 1),
    # an odd multiple of 2**(exponent - 1075 + trailing zeros of the mantissa)
    lowest = mantissa & (~mantissa + np.uint64(1))
    zeros = np.frexp(lowest.astype(np.float64))[1] - 1
    power = int((np.maximum(exponent, 1) - 1075 + zeros).min())
    if float(np.sum(weight)) < np.ldexp(_WHOLE_TOTAL, power):
        return float(np.ldexp(1.0, power))
    return float(np.ldexp(1.0, int(np.frexp(largest)[1]) - 1))


def _on_grid(centre, z):
    """``centre`` rounded to the nearest multiple of the coarsest power of two 2**g that
    divides every value of ``z`` (|z| < 1), when every value is below 2**(g + 52): ``z -
    centre`` is then exact. Unchanged otherwise (targets of full precision, whose sums round
    anyway: the centre stays their mean)."""
    if centre == 0.0:
        return centre
    largest = np.abs(z).max()
    # the first values alone usually tell targets of full precision (a grid of theirs already
    # too fine), which spares the pass over all of them
    for values in (z[:256], z):
        nonzero = values[values != 0.0]
        if nonzero.size == 0:
            continue  # a prefix of zeros tells nothing (z itself is not all zero: centre != 0)
        mantissa, exponent = np.frexp(nonzero)
        units = np.ldexp(mantissa, 53).astype(np.int64)  # each mantissa as an exact integer
        lowest_bit = np.frexp((units & -units).astype(np.float64))[1] - 1
        grid = int((exponent - 53 + lowest_bit).min())
        if largest >= np.ldexp(1.0, grid + 52):
            return centre
    return float(np.ldexp(np.round(np.ldexp(centre, -grid)), grid))


def _bounded_class_weights(value, floats):
    """Binary class weights with each node's fraction of class 0 clipped to its bounds under
    monotonic constraints (the node's weight kept), and to [0, 1]: the class weights and the
    node's weight are sums of their own, and a pure node's class weight could exceed its
    weight in the last bit (a side of a categorical or missing-value split is the node's
    sums less the other side's), which gave the other class a negative weight. A y of one
    class has nothing to bound."""
    if value.shape[1] < 2:
        return value
    weight = floats[:, F_WEIGHT]
    fraction = np.clip(value[:, 0] / weight, floats[:, F_LOWER], floats[:, F_UPPER])
    return class_weights_of(np.clip(fraction, 0.0, 1.0), weight)


def class_weights_of(fraction, weight):
    """Binary class weights (n_nodes, 2) of nodes of ``weight`` whose fraction of class 0 is
    ``fraction``: the value of a node whose fraction monotonic constraints bound."""
    value = np.empty((fraction.shape[0], 2))
    value[:, 0] = fraction * weight
    value[:, 1] = (1.0 - fraction) * weight
    return value


def output_rows(code, target, is_regression, n_classes):
    """``(TreeData.outputs, TreeData.output_columns)`` of a multi-output target (n_samples,
    n_outputs): per sample, the statistics column of its class in each output's block of
    ``n_classes`` (classification), or ``y_j`` and ``y_j**2`` (poisson: ``y_j log y_j``) for
    each output (regression; see :mod:`jitree.kernels.criteria`; the order criteria:
    :func:`jitree.kernels.pinball.output_columns`). The other is empty."""
    n_samples, n_outputs = target.shape
    if code in criteria.ORDER_CRITERIA:
        return pinball.output_columns(target), np.empty((n_samples, 0), dtype=np.int32)
    if not is_regression:
        columns = (target.astype(np.int64) + np.arange(n_outputs) * n_classes).astype(np.int32)
        return np.empty((n_samples, 0)), np.ascontiguousarray(columns)
    rows = np.empty((n_samples, 2 * n_outputs))
    rows[:, 0::2] = target
    for j in range(n_outputs):
        term = target_term(code, target[:, j])
        rows[:, 2 * j + 1] = term if term.shape[0] else target[:, j] * target[:, j]
    return rows, np.empty((n_samples, 0), dtype=np.int32)


def target_term(code, target):
    """The second per-sample regression statistic of criterion ``code`` when it is not
    ``y**2`` (``TreeData.target_term``): ``y log y`` (0 at 0) for poisson, else empty."""
    if code != criteria.POISSON:
        return np.empty(0)
    term = np.zeros_like(target)
    positive = target > 0.0
    term[positive] = target[positive] * np.log(target[positive])
    return term


def search_blocks():
    """``GrowSettings.n_blocks`` of a dense growth: 8 blocks of parallel work a thread (for
    balance), or 1 on one thread, which the growth takes as its sign to call its kernels'
    serial twins (see :func:`jitree.kernels._jit.serial_twin`: a forest grows each tree on
    one thread)."""
    threads = numba.get_num_threads()
    return 1 if threads == 1 else 8 * threads


# the longest table of m log m (8 MiB) entropy's scans look up (TreeData.xlogx): larger
# class weights (nodes of more samples) take the logarithm
XLOGX_LENGTH = 1 << 20


def xlogx_table(code, sample_weight):
    """``TreeData.xlogx`` of criterion ``code``: for entropy, m log m of the whole numbers m
    up to the samples' total weight (a side's class weight is at most that; at most
    :data:`XLOGX_LENGTH` of them), else empty."""
    if code != criteria.ENTROPY:
        return np.empty(0)
    total = float(np.sum(sample_weight))
    needed = min(XLOGX_LENGTH, int(total) + 1) if math.isfinite(total) else XLOGX_LENGTH
    return _xlogx(max(1 << 10, 1 << (needed - 1).bit_length()))


@functools.lru_cache(maxsize=2)
def _xlogx(length):
    """The table of m log m for m < ``length``, made once per length and shared by the fits
    that need it (no kernel writes it)."""
    table = np.empty(length)
    criteria.fill_xlogx(table)
    return table


_TINY = np.nextafter(0.0, 1.0)
_LARGEST = np.finfo(np.float64).max


def class_labels(target, is_regression, n_classes):
    """Every sample's class in the smallest type that holds the classes (labels move with
    every partition), or an empty uint8 array for regression."""
    if is_regression:
        return np.empty(0, dtype=np.uint8)
    if n_classes > np.iinfo(np.uint16).max:
        raise ValueError(f"y has {n_classes} classes; jitree supports at most 65535")
    return target.astype(np.uint8 if n_classes <= np.iinfo(np.uint8).max + 1 else np.uint16)


def sample_order_growth(params, sample_weight, n_features, X=None):
    """Whether the tree grows in sample order (:mod:`jitree.kernels.sample_order`, on a
    :class:`SampleX` in place of a :class:`Presorted`) on X of ``n_features`` columns
    (``X``: dense X itself, or None).

    - The random splitter, on numeric and ordinal features, of a single-output tree whose
      criterion needs no order statistics (not absolute_error or quantile); for a
      classifier, only when it grows the presorted growth's tree (:func:`sample_order_exact`).
      It is the faster growth whatever ``max_features``: trees of 150k x 20 samples, 1
      thread, took 263 against 404 ms (3 classes, every feature per node), 270 against 495
      ms (``sqrt``), and for regression 735 against 1485 ms (every feature) and 508 against
      918 ms (``sqrt``). A regressor's trees may differ from the presorted growth's in the
      last bits of their statistics, which the search adds in sample order there and in
      each feature's order here (see :mod:`jitree.kernels.sample_order`).
    - The best splitter, where it grows the presorted growth's tree
      (:func:`sample_order_exact`), when sorting the features a node draws costs less than
      keeping every feature's sorted order up to date (:func:`sorting_pays`: wide X, few
      features a node; fewer of them when every value of X is a whole number 0 .. 255,
      :func:`whole_numbers`)."""
    if params.random_splitter and params.is_regression:
        return params.n_outputs == 1 and _numeric(params) and not (
            isinstance(params.criterion, numbers.Integral)
            and int(params.criterion) in criteria.ORDER_CRITERIA)
    if not sample_order_exact(params, sample_weight):
        return False
    if params.random_splitter or sorting_pays(params.max_features, n_features,
                                              params.is_regression):
        return True
    return X is not None and sorting_pays(params.max_features, n_features,
                                          params.is_regression, True) and whole_numbers(X)


# sorting_pays: a node sorting the features it draws is the faster growth when it draws at
# most one in this many of the features (a classifier's, a regressor's; on X of whole
# numbers 0 .. 255, either's)
SORTED_DRAW = 16
SORTED_DRAW_REGRESSION = 12
SORTED_DRAW_BYTES = 4


def sorting_pays(max_features, n_features, is_regression=False, whole_numbers=False):
    """Whether the best splitter's sample-order growth is the faster one: each level of the
    presorted growth moves every feature's sorted order (``n_features`` moves a sample), the
    sample-order growth sorts the ``max_features`` features each node draws (a radix sort:
    a gather and about 5 passes a sample and feature). Forests of 10 trees, 2 threads,
    ``sqrt`` features, n x p (sorted against presorted fit).

    - Classifiers (3 classes): 500 x 10000 0.094 against 0.464 s, 2000 x 2000 0.171 against
      0.402 s, 20000 x 500 1.42 against 1.80 s, 100000 x 400 9.0 against 9.8 s, 5000 x 500
      0.227 against 0.236 s; at a larger fraction: 1000 x 100 0.024 against 0.024 s,
      2000 x 200 0.057 against 0.046 s, 10000 x 200 0.314 against 0.235 s, 150000 x 20 1.66
      against 0.80 s.
    - Regressors, whose deeper trees make the presorted growth's levels cost more:
      500 x 10000 0.145 against 0.640 s, 5000 x 500 0.300 against 0.501 s, 10000 x 300
      0.451 against 0.662 s, 2000 x 200 0.066 against 0.079 s, 10000 x 200 0.363 against
      0.441 s, 50000 x 100 1.51 against 1.55 s, 50000 x 64 1.17 against 1.04 s, 20000 x 50
      0.355 against 0.287 s, 100000 x 20 1.34 against 1.05 s.
    - ``whole_numbers``: every value of X a whole number 0 .. 255, which the sample-order
      growth holds as bytes, sorts by counting or partition (:func:`byte_codes`) and reads
      at a quarter of the cost. Random forest classifiers of 8 trees, 1 thread, 50,000 rows,
      ``sqrt`` features, sorted against presorted fit: 10 one-hot columns of 12 levels each
      (120 features; trees 65 levels deep) 0.57-0.58 against 1.75-1.82 s (scikit-learn 0.40
      s); binary features, p = 40, 20, 10: 0.241 against 0.437 s, 0.126 against 0.185 s,
      0.082 against 0.092 s; features of 10 levels, p = 40, 20, 10: 0.288 against 0.426 s,
      0.190 against 0.235 s, 0.143 against 0.149 s; 100 levels, p = 20: 0.219 against
      0.255 s. Every feature a node (4 trees): binary p = 20 0.153 against 0.151 s, p = 40
      0.437 against 0.389 s, 10 levels p = 20 0.294 against 0.209 s; half of them (10
      levels, p = 20) 0.168 against 0.166 s. Continuous X, p = 40 (6 features a node),
      0.823 against 0.503 s. Random forest regressors, ``sqrt`` features, 4 trees, the
      same rows: one-hot 0.429 against 1.296 s (scikit-learn 0.275 s); binary p = 20 and
      10 0.135 against 0.179 s and 0.042 against 0.049 s; 10 levels p = 20 0.205 against
      0.247 s."""
    if whole_numbers:
        return max_features * SORTED_DRAW_BYTES <= n_features
    return max_features * (SORTED_DRAW_REGRESSION if is_regression else SORTED_DRAW) \
        <= n_features


# whole_numbers: rows per block of its test
_WHOLE_ROWS = 4096


def whole_numbers(X):
    """Whether every value of dense X (2-D) is a whole number 0 .. 255 (see
    :func:`byte_codes`), tested a block of rows at a time: continuous X stops at its first
    value. Fortran-ordered X is tested as its transpose (the same values), never copied."""
    if X.flags.f_contiguous and not X.flags.c_contiguous:
        X = X.T
    codes = np.empty((min(_WHOLE_ROWS, X.shape[0]), X.shape[1]), dtype=np.uint8)
    for first in range(0, X.shape[0], _WHOLE_ROWS):
        block = read_only_view(np.ascontiguousarray(X[first:first + _WHOLE_ROWS]))
        if not sample_order.small_codes(block, codes[:block.shape[0]]):
            return False
    return X.size > 0


def _numeric(params):
    """Whether every feature is numeric or ordinal."""
    return params.feature_kind is None or \
        not np.any(np.asarray(params.feature_kind) == FEATURE_CATEGORICAL)


def sample_order_exact(params, sample_weight):
    """Whether the sample-order growth grows the presorted growth's tree: on numeric and
    ordinal features, a single-output tree, and

    - the best splitter with a built-in criterion that needs no order statistics (not
      absolute_error or quantile): it sorts the node's samples on each drawn feature (ties
      in sample order: the presorted order), runs the presorted search on them and adds up
      the children on the winner's sorted samples as the presorted growth does, so every
      sum is the presorted growth's whatever the weights and targets;
    - the random splitter of a classifier whose weights add up to the same sums in any
      order (:func:`exact_sums`): its search adds a side's weights in sample order, the
      presorted one in the feature's order. With other weights, and for regression
      targets, the last bits of a node's statistics may differ, and with them a near tie or
      a node's purity."""
    if not (params.n_outputs == 1 and _numeric(params)):
        return False
    if params.random_splitter:
        return bool(params.has_labels) and exact_sums(sample_weight)
    return isinstance(params.criterion, numbers.Integral) \
        and int(params.criterion) not in criteria.ORDER_CRITERIA


def _exact_in_any_order(weight):
    """Whether the (finite, non-negative) weights are whole multiples of one power of two,
    of a total below 2**50 such units (a bootstrap's counts in the kernels' units, say):
    every sum of them, in any order, and the difference of two such sums, is exact."""
    positive = weight[weight > 0.0]
    if positive.size == 0:
        return True
    mantissa, exponent = np.frexp(positive)
    whole = (mantissa * 2.0**53).astype(np.int64)  # weight = whole * 2**(exponent - 53)
    lowest_bit = np.frexp((whole & -whole).astype(np.float64))[1] - 1
    finest = int(np.max(53 - exponent - lowest_bit))  # weight = n * 2**-finest, n whole
    total = positive.sum()
    return bool(np.isfinite(total)) and int(np.frexp(total)[1]) + finest <= 50  # < 2**50 units


def exact_sums(weight):
    """Whether every order of adding up these weights gives the same sums: all equal (the
    kernels count them as 1), or whole numbers of a total below 2**40 (the kernels divide
    them by a power of two, which keeps them exact). None: unit weights."""
    if weight is None:
        return True
    weight = np.asarray(weight)
    if weight.size == 0 or weight.min() == weight.max():
        return True
    return _whole_below(weight, 2.0**40)


def _whole_below(weight, total):
    """Whether every weight is a whole number and they add up to less than ``total``."""
    return bool(np.all(weight == np.floor(weight))) and float(np.sum(weight)) < total


# whole_weights: whole-number weights of a total below this many
WHOLE_WEIGHTS_TOTAL = 2.0**26


def whole_weights(sample_weight):
    """``SampleOrder.whole_weights`` of the kernels' weights: every one a whole number, of
    a total below :data:`WHOLE_WEIGHTS_TOTAL`. Every sum of them and of their squares, and
    every difference of two such sums, is then a whole number below 2**52: exact, whatever
    the order of the additions (see :func:`jitree.kernels.split.scan_two_valued`). Unit
    weights and bootstrap counts are."""
    return _whole_below(sample_weight, WHOLE_WEIGHTS_TOTAL)


class SampleX:
    """X as the sample-order growth reads it (see :func:`sample_order_growth`), made once for
    the trees of a forest, each of which takes its bag's rows (:meth:`subset`). ``X``:

    - by row, C-contiguous (as given, or copied once), when a node reads many of the
      features: its first pass brings each sample's row into cache for the others (an
      Extra-Trees classifier's tree of 150k x 20, every feature a node: 666 against 786 ms
      by column; 20k x 500: 2.31 against 5.88 s);
    - by column (``by_column``: ``X`` holds the transpose, C-contiguous, which is X in
      Fortran order; copied unless X is Fortran-ordered) when the random splitter's
      nodes draw few of the features (:func:`reads_by_column`): a node then reads a few
      features at its samples, and a large node's samples, in increasing index, share each
      column's cache lines where by row every value is a line of its own. Extra-Trees
      classifiers, ``sqrt`` features, 2 threads, the copy included, by row then by column:
      20k x 500 (20 trees) 1.11 then 0.74 s, 100k x 100 (10 trees) 1.57 then 1.07 s,
      150k x 20 (20 trees) 1.11 then 0.90 s, 2k x 2,000 (50 trees) 0.28 then 0.19 s. The
      best splitter's sample-order growth sorts the values it reads, which costs more than
      reading them: by column measured 0.98-1.10x the time by row (forests of 20k x 500,
      2k x 2,000, 500 x 10,000), so it reads by row."""

    def __init__(self, X, by_column=False, codes=None):
        self.X = X
        self.by_column = by_column
        self.codes = _NO_CODES if codes is None else codes

    @classmethod
    def of(cls, X, params, keep=None):
        """X held as the growth of ``params`` reads it; ``keep``: only the rows with
        ``keep[i]`` true, renumbered in their order (taken in the same one copy). The best
        splitter's search also holds X's values as bytes when they are whole numbers 0 ..
        255 (:func:`byte_codes`)."""
        by_column = reads_by_column(params, X.shape[1])
        if keep is None:
            # a read-only X (a DataFrame's in pandas 3, a memory map as joblib passes large
            # arrays to its workers) is held as it is: the growth reads X read-only
            held = np.ascontiguousarray(X.T if by_column else X)
        else:
            assert np.shape(keep) == (X.shape[0],), "one flag per row of X"
            held = _rows_of(X, np.flatnonzero(keep), by_column)
        return cls(held, by_column, None if params.random_splitter else byte_codes(held))

    @property
    def shape(self):
        """X's (samples, features)."""
        return self.X.shape[::-1] if self.by_column else self.X.shape

    def subset(self, keep):
        """The rows with ``keep[i]`` true, renumbered in their order."""
        keep = np.asarray(keep, dtype=bool)
        assert keep.shape == (self.shape[0],), "one flag per row of X"
        if keep.all():
            return self
        rows = np.flatnonzero(keep)
        axis = 1 if self.by_column else 0
        codes = np.take(self.codes, rows, axis=axis) if self.codes.size else self.codes
        return SampleX(np.take(self.X, rows, axis=axis), self.by_column, codes)


_NO_CODES = np.empty((0, 0), dtype=np.uint8)
_NO_CODES.flags.writeable = False


def byte_codes(held):
    """``held`` (X as :class:`SampleX` holds it, C-contiguous) as uint8 when every value is
    a whole number 0 .. 255 (binary and one-hot features, indicators, counts, rating
    scales; :func:`jitree.kernels.sample_order.small_codes`), else None. The best
    splitter's search gathers a node's values on each feature it visits from rows
    scattered through X; bytes take a quarter of float32 X's cache lines (an eighth of
    float64's). The codes are the values, so the trees are the same. Random forests, 1
    thread, seconds, X's values as float32 then as bytes (before the counting sort): 20k x
    300 binary features, 8 trees, 0.37-0.42 then 0.25-0.32; 20k x 300 features of 5
    levels, 4 trees, 0.33-0.35 then 0.28-0.29. The test stops at the first value that is not such a
    number: continuous X at its first value. The codes add a byte a value to what the
    growth holds (and to each forest tree's copy of its bag's rows): a quarter of float32
    X, an eighth of float64."""
    if held.size == 0:
        return None
    codes = np.empty(held.shape, dtype=np.uint8)
    if not sample_order.small_codes(read_only_view(held), codes):
        return None
    return read_only_view(codes)


def _rows_of(X, rows, by_column):
    """X's ``rows`` (C- or Fortran-contiguous X) in one C-contiguous copy, of X's transpose
    when ``by_column``. Across X's order the copy goes a block of rows at a time (an eighth
    of them, at least 1 and at most 1,024), each gathered then transposed into place:
    20,000 x 500 float32, 70% of the rows, by column from C-ordered X, 10 ms, where the
    transpose of ``X[keep]`` took 18 ms and a second copy."""
    if by_column and X.flags.f_contiguous:
        return np.take(X.T, rows, axis=1)
    if not by_column and X.flags.c_contiguous:
        return np.take(X, rows, axis=0)
    n_rows, n_features = rows.size, X.shape[1]
    out = np.empty((n_features, n_rows) if by_column else (n_rows, n_features), dtype=X.dtype)
    step = max(1, min(_COPY_ROWS, n_rows // 8))
    for first in range(0, n_rows, step):
        block = slice(first, first + step)
        if by_column:
            out[:, block] = X[rows[block]].T
        else:
            out[block] = X[rows[block]]
    return out


_COPY_ROWS = 1024  # the most rows of a block of _rows_of's copy across X's order


def reads_by_column(params, n_features):
    """Whether the sample-order growth holds X by column (see :class:`SampleX`): the random
    splitter's, when its nodes draw few of the ``n_features`` features (a node then reads
    only the features its walk visits; see :func:`jitree.kernels.sample_order.search_nodes`)."""
    return bool(params.random_splitter) and \
        sample_order.FEW_FEATURES * params.max_features <= n_features


# renumbering: the open nodes' mean size falls this many times between two renumberings,
# which start when a column of X holds at least RENUMBER_COLUMN_BYTES
RENUMBER_RATIO = 32.0
RENUMBER_COLUMN_BYTES = 1 << 19


def renumbering(params, held):
    """:attr:`SampleOrder.renumber <jitree.kernels.records.SampleOrder>` for a tree grown in
    sample order on ``held`` (a :class:`SampleX`): how many times the open nodes' mean size
    falls between two renumberings of their samples (:func:`jitree.kernels.sample_order.
    renumber`), or 0 (never). Each renumbering copies the open samples' rows of X (every
    feature), and pays where the nodes' reads of scattered samples miss the caches: X of
    many rows (a column of at least ``RENUMBER_COLUMN_BYTES``), a node reading at least one
    feature in 16, and at least ``RENUMBER_LEVELS`` levels left to grow after it (the
    growth checks ``max_depth``). Depth-wise growth of the random splitter only.
    Extra-Trees classifiers (``sqrt``), 1 thread, same trees, before then after, seconds:

    - 1,000,000 x 20, 2 trees: 2.98-3.09 then 1.93-2.13; ``max_depth=14`` 0.78-0.90 then
      0.61; ``max_depth=12`` 0.62-0.68 then 0.55-0.57; ``max_depth=10`` 0.49-0.51 then
      0.49 (not renumbered: 5 levels left after the first fall of 32 times; renumbered,
      0.51-0.57); 200,000 x 20, 4 trees: 0.68-0.76 then 0.55-0.57; 300,000 x 100: 3.79-3.96
      then 3.20-3.22; the regressor, every feature a node (X by row), 200,000 x 20:
      2.11-2.25 then 1.86-1.94.
    - Every fall of 8 times instead of 32: 1,000,000 x 20 at ``max_depth=6`` 0.37-0.38
      against 0.31 unrenumbered, at full depth about as fast as 32.
    - Not kept, a column of less (every fall of 8 times): 50,000 x 20: 0.113-0.144 then
      0.116-0.136; 100,000 x 100: 0.93-0.99 then 0.97-1.07; 20,000 x 500: 0.33 then
      0.49-0.55. Nor the best splitter's growth on wide X (one feature in 16 or fewer,
      sorted): random forests of 20,000 x 500 0.86-0.89 then 0.94-0.99, 2,000 x 2,000
      0.117-0.120 then 0.126-0.130: the best splitter never renumbers (on X of whole
      numbers it draws from a quarter of the features, :func:`sorting_pays`; not
      measured there)."""
    n_rows, n_features = held.shape
    pays = (params.random_splitter and not params.max_leaf_nodes
            and n_rows * held.X.itemsize >= RENUMBER_COLUMN_BYTES
            and n_features < 16 * params.max_features)
    return RENUMBER_RATIO if pays else 0.0


class Presorted:
    """Each feature's samples in increasing order (``sorted_index``, ``sorted_value``) and,
    for classification, their classes (``sorted_label``), with ``label`` the class of every
    sample: what the builder scans and partitions."""

    def __init__(self, sorted_index, sorted_value, sorted_label, label):
        self.sorted_index = sorted_index
        self.sorted_value = sorted_value
        self.sorted_label = sorted_label
        self.label = label

    @classmethod
    def of(cls, X, target, is_regression, n_classes):
        n_samples, n_features = X.shape
        sorted_index = np.empty((n_features, n_samples), dtype=np.int32)
        sorted_value = np.empty((n_features, n_samples), dtype=X.dtype)
        label = class_labels(target, is_regression, n_classes)
        sorted_label = np.empty((n_features, n_samples) if label.shape[0] else (1, 0),
                                dtype=label.dtype)
        presort(X, label, sorted_index, sorted_value, sorted_label)
        return cls(sorted_index, sorted_value, sorted_label, label)

    def subset(self, keep, carry_labels=True):
        """A copy holding only the samples with ``keep[i]`` true (still sorted), renumbered
        ``0 .. n_kept - 1`` in their order: the tree grown on it takes ``target[keep]`` and
        ``sample_weight[keep]``. Smaller per-sample arrays keep a forest tree's random reads
        (weights, sides) in cache.

        ``carry_labels=False`` leaves the sorted labels out: the kernels then read each
        sample's class from ``label`` (see :func:`jitree.kernels.categorical.class_at`)."""
        keep = np.asarray(keep, dtype=bool)
        n_features = self.sorted_index.shape[0]
        n_kept = int(np.count_nonzero(keep))
        number = np.full(keep.shape[0], -1, dtype=np.int32)
        number[keep] = np.arange(n_kept, dtype=np.int32)
        index = np.empty((n_features, n_kept), dtype=self.sorted_index.dtype)
        value = np.empty((n_features, n_kept), dtype=self.sorted_value.dtype)
        with_labels = carry_labels and self.sorted_label.shape[1] == self.sorted_index.shape[1]
        label_rows = np.empty((n_features, n_kept) if with_labels else (1, 0),
                              dtype=self.sorted_label.dtype)
        keep_samples(self.sorted_index, self.sorted_value, self.sorted_label, number, index,
                     value, label_rows)
        label = self.label[keep] if self.label.shape[0] else self.label
        return Presorted(index, value, label_rows, label)


def check_node_table(params, n_samples, n_stats, memory=None):
    """Refuse, before anything is allocated, a tree whose statistics table (one row of
    ``n_stats`` float64 per node, held twice: while growing and as ``Tree.value``) could
    outgrow the machine's memory: many classes and a tree allowed one leaf per sample."""
    leaves = n_samples // params.min_samples_leaf
    if params.max_leaf_nodes:
        leaves = min(leaves, params.max_leaf_nodes)
    if params.max_depth < 62:
        leaves = min(leaves, 2**params.max_depth)
    nodes = 2 * max(leaves, 1) - 1
    needed = 2 * nodes * n_stats * 8
    memory = memory_bytes() if memory is None else memory
    if memory is not None and needed > memory:
        raise ValueError(
            f"a tree of up to {nodes:,} nodes with {n_stats:,} classes needs up to "
            f"{needed / 2**30:,.1f} GiB for its per-node class weights, more than this "
            f"machine's {memory / 2**30:,.1f} GiB; bound the tree with max_leaf_nodes, "
            "max_depth or min_samples_leaf")


# The criteria the sparse growth scores (those of the dense scans' built-in scores).
_SPARSE_CRITERIA = frozenset({criteria.GINI, criteria.ENTROPY, criteria.MISCLASSIFICATION,
                              criteria.GAIN_RATIO, criteria.CART, criteria.TWOING,
                              criteria.SQUARED_ERROR, criteria.POISSON})


def sparse_growth(params, measure, X):
    """Whether the tree on the sparse X (or :class:`SortedColumns`) grows by
    :func:`jitree.kernels.sparse.grow_sparse` (the same tree as the dense loop on its dense
    copy, in memory of its stored values): one output, numeric features without missing
    values, any splitter and ``max_features``, depth-wise growth, no constraint and a
    built-in criterion of :data:`_SPARSE_CRITERIA`. Other fits grow on the dense copy."""
    numeric = params.feature_kind is None or not np.any(np.asarray(params.feature_kind))
    values = X.value if isinstance(X, SortedColumns) else X.data
    return (numeric and params.n_outputs == 1 and not params.max_leaf_nodes
            and params.monotonic is None and params.interaction is None
            and int(measure.code) in _SPARSE_CRITERIA
            and not np.isnan(values).any())


class SortedColumns:
    """A sparse X as the sparse growth reads it: each column's stored non-zero values
    (``value``, float32 or float64) and their rows (``row``, int32) sorted by value,
    column f's at ``start[f]:start[f + 1]`` (explicit zeros dropped, duplicates summed).
    Made once for the trees of a forest, each of which takes its bag's rows
    (:meth:`subset`)."""

    def __init__(self, start, row, value, n_samples):
        self.start = start
        self.row = row
        self.value = value
        self.n_samples = n_samples

    @property
    def shape(self):
        return (self.n_samples, self.start.shape[0] - 1)

    @classmethod
    def of(cls, X):
        columns = X.tocsc()
        if not columns.has_canonical_format:
            columns = columns.copy()
            columns.sum_duplicates()
        start = np.asarray(columns.indptr, dtype=np.int64)
        rows = np.array(columns.indices, dtype=np.int32)
        values = np.array(columns.data, dtype=columns.data.dtype
                          if columns.data.dtype in (np.float32, np.float64) else np.float64)
        if np.any(values == 0.0):  # explicit zeros: dropped (they join the zero run)
            kept = values != 0.0
            column_of = np.repeat(np.arange(columns.shape[1]), np.diff(start))
            start = np.concatenate([[0], np.cumsum(np.bincount(column_of[kept],
                                                               minlength=columns.shape[1]))])
            start = start.astype(np.int64)
            rows = rows[kept]
            values = values[kept]
        sort_columns(start, rows, values.view(np.uint32 if values.dtype == np.float32
                                              else np.uint64))
        return cls(start, rows, values, columns.shape[0])

    def subset(self, keep):
        """The rows with ``keep[i]`` true, renumbered in their order (columns still sorted)."""
        keep = np.asarray(keep, dtype=bool)
        number = np.full(keep.shape[0], -1, dtype=np.int32)
        number[keep] = np.arange(int(np.count_nonzero(keep)), dtype=np.int32)
        start = np.empty_like(self.start)
        row = np.empty_like(self.row)
        value = np.empty_like(self.value)
        kept = keep_rows(self.start, self.row, self.value, number, start, row, value)
        return SortedColumns(start, row[:kept].copy(), value[:kept].copy(),
                             int(number.max()) + 1 if keep.any() else 0)


def _root_order_statistics(stats, target, sample_weight, alpha):
    """The order criteria's quantile and loss of all the samples of one output (``target``)
    into its block of the root's statistics (``stats``, see :mod:`jitree.kernels.pinball`)."""
    by_target = np.argsort(target, kind="stable")
    stats[pinball.STAT_VALUE], stats[pinball.STAT_LOSS] = pinball.order_statistics(
        target[by_target], sample_weight[by_target], alpha)


class TreeBuilder:
    """Grows one tree on (X, target, sample_weight).

    ``target`` is float64: the class index for classification (``n_stats`` classes), the value
    for regression (``n_stats == 2``); for a multi-output tree (``params.n_outputs`` > 1) a
    matrix of one column per output (``n_stats``: outputs x classes, or 2 x outputs).
    ``sample_weight`` is float64, non-negative, positive sum.
    """

    def __init__(self, params):
        self.params = params

    def build(self, X, target, sample_weight, n_stats, n_classes, presorted=None):
        """Grow the tree. ``presorted``: a :class:`Presorted` of this tree's samples, numbered
        as the rows of ``target`` and ``sample_weight`` (it is consumed: the growth
        overwrites its arrays), or a :class:`SampleX` for the sample-order growth (see
        :func:`sample_order_growth`); X presorted (or taken as a :class:`SampleX`) here if
        None. X gives the number of features."""
        multi_output = self.params.n_outputs > 1
        if presorted is None and not is_sparse(X) and not isinstance(X, SortedColumns) \
                and sample_order_growth(self.params, sample_weight, X.shape[1], X=X):
            presorted = SampleX.of(X, self.params)
        measure = self.params.measure(n_stats // self.params.n_outputs if multi_output else 0,
                                      n_stats)
        order = int(measure.code) in criteria.ORDER_CRITERIA
        if order:  # N_STATS an output (pinball's block: its sums, loss and quantile)
            n_stats = pinball.N_STATS * self.params.n_outputs
            if multi_output:
                measure = self.params.measure(pinball.N_STATS, n_stats)
        check_node_table(self.params, target.shape[0], n_stats)
        user_criterion = measure.code >= criteria.USER_IMPURITY
        # a user's criterion sees the samples' own targets and weights; poisson and the
        # order criteria's targets are scaled, not centred (see Scaling)
        scaling = Scaling() if user_criterion else \
            Scaling.of(target, sample_weight, self.params.is_regression,
                       centred=measure.code == criteria.SQUARED_ERROR)
        target = scaling.targets(target)
        n_samples = sample_weight.shape[0]
        outputs = np.empty((n_samples, 0))
        output_columns = np.empty((n_samples, 0), dtype=np.int32)
        if multi_output:
            outputs, output_columns = output_rows(measure.code, target,
                                                  self.params.is_regression, n_classes)
            target = np.empty(0)
        term = target_term(measure.code, target)
        sample_weight = scaling.weights(sample_weight)
        params = scaling.kernel_params(self.params)
        n_features = X.shape[1]
        if isinstance(presorted, SortedColumns):  # a forest's tree: its bag's columns
            X, presorted = presorted, None
        if is_sparse(X) or isinstance(X, SortedColumns):
            if sparse_growth(params, measure, X):
                return self._wrap(*self._grow_sparse(X, target, term, sample_weight, n_stats,
                                                     params, measure),
                                  np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int32),
                                  params, scaling, n_features, n_classes, order, measure)
            X = sparse_to_dense(X, "X", FIT_DENSE_COPIES)
        if isinstance(presorted, SampleX):
            # the sample-order growth: TreeData's sorted arrays hold no rows
            n_blocks = search_blocks()
            label = class_labels(target, not params.has_labels, n_classes)
            n_rows = presorted.shape[0]
            # X goes read-only whatever the caller's array: one compiled growth serves
            # writeable and read-only X alike (see walk_input)
            samples = SampleOrder(read_only_view(presorted.X), presorted.by_column,
                                  np.arange(n_rows, dtype=np.int32),
                                  np.empty(n_rows, dtype=np.int32),
                                  renumbering(params, presorted),
                                  read_only_view(presorted.codes),
                                  whole_weights(sample_weight))
            presorted = Presorted(np.empty((n_features, 0), dtype=np.int32),
                                  np.empty((n_features, 0), dtype=presorted.X.dtype),
                                  np.empty((1, 0), dtype=label.dtype), label)
            label_scratch = np.empty((n_blocks, 0), dtype=label.dtype)
        else:
            samples = None
            if presorted is None:
                presorted = Presorted.of(X, target, not params.has_labels, n_classes)
            # classes left out of the sorted arrays are gathered per scan (see
            # kernels.split.classes_by_sample): one row per block of find_splits
            n_blocks = search_blocks()
            by_sample = presorted.label.shape[0] and not presorted.sorted_label.shape[1]
            label_scratch = np.empty(
                (n_blocks, presorted.sorted_index.shape[1] if by_sample else 0),
                dtype=presorted.sorted_label.dtype)
        data = TreeData(presorted.sorted_index, presorted.sorted_value,
                        presorted.sorted_label, presorted.label, label_scratch, target,
                        term, sample_weight, not bool(np.all(sample_weight == 1.0)),
                        not params.has_labels, outputs, output_columns,
                        # read by the best splitter's one-output threshold scans only
                        np.empty(0) if params.random_splitter or multi_output
                        else xlogx_table(measure.code, sample_weight))
        ranks = None
        if order:
            ranks = Ranks(np.empty((params.n_outputs, n_samples), dtype=np.int32),
                          np.empty((params.n_outputs, presorted.sorted_index.shape[1]),
                                   dtype=np.int32))
        root_stats, root_weight = self._root(target, term, sample_weight, presorted.label,
                                             n_stats, params, order, outputs, output_columns)
        categories = params.categories(
            n_features, root_weight / max(1, np.count_nonzero(sample_weight)))
        # the random splitter's threshold search is compiled into the one growth that runs
        # it: the presorted growth of the random splitter without an order criterion
        random_search = True if params.random_splitter and samples is None and not order \
            else None
        nodes, count, category_bits, multiway_slot = grow_tree(
            data, params.settings(n_blocks, measure), categories, ranks, samples, root_stats,
            root_weight, random_search)
        return self._wrap(nodes, count, category_bits, multiway_slot, params, scaling,
                          n_features, n_classes, order, measure)

    @staticmethod
    def _root(target, term, sample_weight, label, n_stats, params, order, outputs=None,
              output_columns=None):
        """The statistics and weight of all the samples: the root's."""
        root_stats = np.zeros(n_stats)
        if params.n_outputs > 1 and not params.is_regression:
            root_stats[:] = np.bincount(output_columns.reshape(-1), minlength=n_stats,
                                        weights=np.repeat(sample_weight, params.n_outputs))
        elif params.n_outputs > 1:
            for s in range(n_stats):
                root_stats[s] = criteria.weighted_total(sample_weight,
                                                        np.ascontiguousarray(outputs[:, s]))
            for o in range(params.n_outputs if order else 0):
                column = pinball.N_STATS * o
                _root_order_statistics(root_stats[column:column + pinball.N_STATS],
                                       outputs[:, column], sample_weight, params.quantile)
        elif params.is_regression:
            root_stats[0] = criteria.weighted_total(sample_weight, target)
            root_stats[1] = criteria.weighted_total(sample_weight, term) if term.shape[0] \
                else criteria.weighted_total(sample_weight * target, target)
            if order:
                _root_order_statistics(root_stats, target, sample_weight, params.quantile)
        else:
            root_stats[:] = np.bincount(label, weights=sample_weight, minlength=n_stats)
        root_weight = float(sample_weight.sum())
        if isinstance(params.criterion, Criterion):  # the user's functions, tried once
            params.criterion.check_root(root_stats, root_weight)
        return root_stats, root_weight

    def _grow_sparse(self, X, target, term, sample_weight, n_stats, params, measure):
        """:func:`jitree.kernels.sparse.grow_sparse` on a sparse X or its
        :class:`SortedColumns` (see :func:`sparse_growth`): (nodes, count)."""
        columns = X if isinstance(X, SortedColumns) else SortedColumns.of(X)
        start, rows, values = columns.start, columns.row, columns.value
        label = np.zeros(0, dtype=np.int64) if params.is_regression \
            else target.astype(np.int64)
        entry_weight = sample_weight[rows]
        if params.is_regression:
            entry_class = np.zeros(0, dtype=np.int32)
            entry_wy = entry_weight * target[rows]
        else:
            entry_class = label[rows].astype(np.int32)
            entry_wy = np.zeros(0)
        data = SparseData(start, rows, values, label,
                          target if params.is_regression else np.zeros(0), term,
                          sample_weight, bool(params.is_regression), entry_weight, entry_class,
                          entry_wy, bool(np.any(sample_weight != 1.0)),
                          not params.is_regression and _exact_in_any_order(sample_weight))
        root_stats, root_weight = self._root(target, term, sample_weight, label, n_stats,
                                             params, False)
        n_blocks = 8 * numba.get_num_threads()
        return grow_sparse(data, params.settings(n_blocks, measure), root_stats, root_weight,
                           n_blocks)

    def _wrap(self, nodes, count, category_bits, multiway_slot, params, scaling, n_features,
              n_classes, order, measure):
        """The grown node table as a :class:`Tree` in the caller's units."""
        if int(measure.code) >= criteria.USER_IMPURITY and measure.invalid[0]:
            raise ValueError(f"criterion {params.criterion.name!r} returned NaN (or raised) "
                             "during the split search; its functions must return a number "
                             "for every statistics vector with positive weight")
        # copies: the node table has room for every node the tree could have made, and a
        # view (a one-node tree's columns are contiguous views) would keep it alive
        ints = nodes.ints[:count].copy()
        floats = nodes.floats[:count].copy()
        if params.is_regression:
            if order:  # each output's quantile
                mean = nodes.stats[:count, pinball.STAT_VALUE::pinball.N_STATS].copy()
            else:  # each output's sum of w y over the weight
                mean = nodes.stats[:count, 0::2] / floats[:, F_WEIGHT, None]
            if params.monotonic is not None:
                mean = np.clip(mean, floats[:, F_LOWER, None], floats[:, F_UPPER, None])
            value = scaling.means(mean)
        else:
            value = nodes.stats[:count].copy()  # a copy, as ints and floats above
            if params.monotonic is not None:
                value = _bounded_class_weights(value, floats)
            if scaling.weight_unit != 1.0:
                value = value * scaling.weight_unit
        if params.feature_kind is None:
            feature_kind = np.zeros(n_features, dtype=np.int8)
            n_categories = np.zeros(n_features, dtype=np.int32)
        else:
            feature_kind = np.asarray(params.feature_kind, dtype=np.int8)
            n_categories = np.asarray(params.n_categories, dtype=np.int32)
        return Tree._grown(n_features, n_classes, ints[:, N_FEATURE], floats[:, F_THRESHOLD],
                           ints[:, N_LEFT], ints[:, N_RIGHT], value,
                           scaling.impurities(floats[:, F_IMPURITY]), ints[:, N_SAMPLES],
                           floats[:, F_WEIGHT] if scaling.weight_unit == 1.0
                           else floats[:, F_WEIGHT] * scaling.weight_unit,
                           split_kind=ints[:, N_SPLIT_KIND],
                           missing_left=ints[:, N_MISSING_LEFT],
                           category_offset=ints[:, N_CATEGORY_OFFSET],
                           category_bits=category_bits, multiway_slot=multiway_slot,
                           n_categories=n_categories, feature_kind=feature_kind,
                           n_outputs=params.n_outputs)
