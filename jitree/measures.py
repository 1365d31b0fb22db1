"""Impurity and split gain of labelled samples, with the same kernels the trees use."""

from numbers import Real

import numpy as np

from .kernels import criteria, pinball
from .model.builder import Scaling, target_term
from .model.validation import check_sample_weight

_ALL = criteria.CLASSIFICATION_CRITERIA + criteria.REGRESSION_CRITERIA


def _criterion(name):
    if not isinstance(name, str) or name not in _ALL:
        raise ValueError(f"criterion must be one of {', '.join(map(repr, _ALL))}, got {name!r}")
    return int(criteria.CRITERIA[name]), name in criteria.REGRESSION_CRITERIA


def _labels(values, name):
    values = np.asarray(values)
    if values.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {values.shape}")
    if values.shape[0] == 0:
        raise ValueError(f"{name} is empty")
    if values.dtype.kind == "f" and np.isnan(values).any():
        raise ValueError(f"{name} contains NaN")
    try:
        _, index = np.unique(values, return_inverse=True)
    except TypeError:
        raise ValueError(f"{name} mixes values that cannot be compared") from None
    return index.reshape(-1)


def _scaled(y, weight, is_regression, code):
    """(y, weight) in the units the trees grow on (no overflow, no cancellation; see
    :class:`jitree.model.builder.Scaling`), and that scaling. Zero weights count nowhere."""
    positive = weight > 0.0
    if not positive.any():
        raise ValueError("sample_weight has no positive entry")
    if code == criteria.POISSON and (y < 0).any():
        raise ValueError("criterion='poisson' needs non-negative y")
    scaling = Scaling.of(y[positive], weight[positive], is_regression,
                         centred=code == criteria.SQUARED_ERROR)
    return scaling.targets(y), scaling.weights(weight), scaling


def _statistics(y, weight, code, group_index, n_groups, alpha=0.5):
    """Per-group statistics (n_groups, n_stats) and weights (n_groups,): sums, and for the
    order criteria each group's quantile and pinball loss."""
    group_weight = np.bincount(group_index, weights=weight, minlength=n_groups)
    if code in criteria.ORDER_CRITERIA:
        stats = np.zeros((n_groups, pinball.N_STATS))
        for g in range(n_groups):
            members = np.flatnonzero(group_index == g)
            members = members[np.argsort(y[members], kind="stable")]
            if members.shape[0]:
                stats[g, pinball.STAT_VALUE], stats[g, pinball.STAT_LOSS] = \
                    pinball.order_statistics(y[members], weight[members], alpha)
        return stats, group_weight
    if code in (criteria.SQUARED_ERROR, criteria.POISSON):
        term = target_term(code, y)
        stats = np.zeros((n_groups, 2))
        stats[:, 0] = np.bincount(group_index, weights=weight * y, minlength=n_groups)
        stats[:, 1] = np.bincount(group_index, minlength=n_groups,
                                  weights=weight * term if term.shape[0] else weight * y * y)
    else:
        n_classes = int(y.max()) + 1
        stats = np.zeros((n_groups, n_classes))
        np.add.at(stats, (group_index, y), weight)
    return stats, group_weight


def _target(y, is_regression):
    if is_regression:
        y = np.asarray(y)
        if y.dtype.kind not in "biuf":
            raise TypeError(f"y must be numeric for regression, got dtype {y.dtype}")
        y = y.astype(np.float64)
        if y.ndim != 1 or y.shape[0] == 0:
            raise ValueError(f"y must be a non-empty 1-D array, got shape {y.shape}")
        if not np.isfinite(y).all():
            raise ValueError("y contains NaN or infinity")
        return y
    return _labels(y, "y")


def _alpha(code, quantile):
    if code != criteria.QUANTILE:
        return 0.5
    if quantile is None or isinstance(quantile, bool) or not isinstance(quantile, Real) \
            or not 0.0 < quantile < 1.0:
        raise ValueError(f"criterion='quantile' needs quantile in (0, 1), got {quantile!r}")
    return float(quantile)


def impurity(y, criterion="entropy", sample_weight=None, quantile=None):
    """Impurity of the samples ``y`` under ``criterion``.

    Entropy in bits, Gini index, misclassification rate, or weighted variance
    (``squared_error``), half Poisson deviance (``poisson``), mean absolute deviation from
    the weighted median (``absolute_error``) or mean pinball loss about the weighted
    ``quantile`` (``quantile``). ``gain_ratio`` gives the entropy, ``cart`` and ``twoing``
    the Gini index (they score splits, not nodes).
    """
    code, is_regression = _criterion(criterion)
    alpha = _alpha(code, quantile)
    measure = criteria.builtin(code)
    y = _target(y, is_regression)
    weight = check_sample_weight(sample_weight, y.shape[0])
    y, weight, scaling = _scaled(y, weight, is_regression, code)
    stats, total = _statistics(y, weight, code, np.zeros(y.shape[0], np.intp), 1, alpha)
    return float(scaling.impurities(criteria.node_impurity(measure, stats[0], total[0])))


def split_gain(y, groups, criterion="entropy", sample_weight=None, quantile=None):
    """Decrease of impurity when the samples are partitioned by ``groups``.

    ``groups`` gives one label per sample (two or more distinct labels: a binary test or a
    multiway split). Returns ``I(D) - sum_g W_g / W I(D_g)`` for gini, entropy (information
    gain, bits), misclassification and squared_error (variance reduction); the information
    gain divided by the split information for gain_ratio; and for the two-way measures cart
    and twoing, their value on the two groups. ``quantile``: for criterion ``"quantile"``.
    """
    code, is_regression = _criterion(criterion)
    alpha = _alpha(code, quantile)
    measure = criteria.builtin(code)
    y = _target(y, is_regression)
    group_index = _labels(groups, "groups")
    if group_index.shape[0] != y.shape[0]:
        raise ValueError(f"y and groups have different lengths: {y.shape[0]} and "
                         f"{group_index.shape[0]}")
    weight = check_sample_weight(sample_weight, y.shape[0])
    y, weight, scaling = _scaled(y, weight, is_regression, code)
    n_groups = int(group_index.max()) + 1
    if n_groups < 2:
        raise ValueError("groups must hold at least two distinct values to define a split")
    stats, group_weight = _statistics(y, weight, code, group_index, n_groups, alpha)
    present = group_weight > 0
    stats, group_weight = stats[present], group_weight[present]
    if stats.shape[0] < 2:
        raise ValueError("fewer than two groups have positive weight")
    if code in criteria.ORDER_CRITERIA:
        parent = _statistics(y, weight, code, np.zeros(y.shape[0], np.intp), 1, alpha)[0][0]
    else:
        parent = stats.sum(axis=0)
    total = group_weight.sum()
    if code in (criteria.CART, criteria.TWOING):
        if stats.shape[0] != 2:
            raise ValueError(f"criterion {criterion!r} is defined for two groups, got "
                             f"{stats.shape[0]}")
        return float(criteria.split_score(measure, stats[0], stats[1], group_weight[0],
                                          group_weight[1], 0.0))
    children = sum(group_weight[g] / total * criteria.node_impurity(measure, stats[g],
                                                                     group_weight[g])
                   for g in range(stats.shape[0]))
    gain = scaling.impurities(criteria.node_impurity(measure, parent, total) - children)
    if code == criteria.GAIN_RATIO:
        fractions = group_weight / total
        split_info = -np.sum(fractions * np.log2(fractions))
        return float(gain / split_info)
    return float(gain)
