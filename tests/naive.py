"""Naive NumPy twins of jitree's kernels: slow, obvious, independent of the package."""

import numpy as np
import pytest


def class_fractions(y, w, n_classes):
    counts = np.bincount(y, weights=w, minlength=n_classes)
    return counts / counts.sum()


def gini(y, w, n_classes):
    p = class_fractions(y, w, n_classes)
    return 1.0 - np.sum(p ** 2)


def entropy(y, w, n_classes):
    p = class_fractions(y, w, n_classes)
    p = p[p > 0]
    return float(-np.sum(p * np.log2(p)))


def misclassification(y, w, n_classes):
    return 1.0 - class_fractions(y, w, n_classes).max()


def variance(y, w):
    mean = np.average(y, weights=w)
    return float(np.average((y - mean) ** 2, weights=w))


NODE_MEASURE = {"gini": gini, "cart": gini, "twoing": gini, "entropy": entropy,
                "gain_ratio": entropy, "misclassification": misclassification}


def poisson_deviance(y, w):
    """Half Poisson deviance per unit weight around the weighted mean: sum w (y log(y / m)
    - y + m) / W (y log y = 0 at y = 0); infinite for a zero mean."""
    W = w.sum()
    mean = np.dot(w, y) / W
    if mean <= 0:
        return np.inf
    ratio = np.where(y > 0, y, 1.0) / mean
    return float(np.sum(w * (np.where(y > 0, y * np.log(ratio), 0.0) - y + mean)) / W)


def pinball_loss(y, w, alpha):
    """Least weighted mean pinball loss sum w rho(y - q) / W over every q (at a sample's
    value: the loss is convex and piecewise linear between them)."""
    candidates = np.unique(y[w > 0])
    u = y[None, :] - candidates[:, None]
    rho = np.where(u >= 0, alpha * u, (alpha - 1.0) * u)
    return float((rho @ w).min() / w.sum())


def mean_absolute_deviation(y, w):
    return 2.0 * pinball_loss(y, w, 0.5)


def weighted_quantile(y, w, alpha):
    """The y of the first sample (in increasing order) whose cumulative weight exceeds
    alpha W; the midpoint with the previous positive-weight sample when a prefix weighs
    exactly alpha W."""
    order = np.argsort(y, kind="stable")
    y, w = y[order][w[order] > 0], w[order][w[order] > 0]
    cumulative = np.cumsum(w)
    target = alpha * cumulative[-1]
    k = int(np.searchsorted(cumulative, target, side="right"))
    k = min(k, y.shape[0] - 1)
    if k > 0 and cumulative[k - 1] == target:
        return y[k - 1] / 2 + y[k] / 2
    return y[k]


def split_value(criterion, y, w, goes_left, n_classes):
    """The quantity the criterion maximises for the partition ``goes_left`` (textbook form);
    ``criterion`` ``("quantile", alpha)`` for the pinball loss. y of several columns
    (regression outputs): the mean of the outputs' values."""
    if y.ndim == 2:
        return np.mean([split_value(criterion, y[:, j], w, goes_left, n_classes)
                        for j in range(y.shape[1])])
    left, right = goes_left, ~goes_left
    W, WL, WR = w.sum(), w[left].sum(), w[right].sum()
    if criterion == "absolute_error" or isinstance(criterion, tuple):
        if criterion == "absolute_error":
            def loss(y, w):
                return mean_absolute_deviation(y, w)
        else:
            def loss(y, w):
                return pinball_loss(y, w, criterion[1])
        return loss(y, w) - WL / W * loss(y[left], w[left]) - WR / W * loss(y[right], w[right])
    if criterion == "squared_error":
        return variance(y, w) - WL / W * variance(y[left], w[left]) \
            - WR / W * variance(y[right], w[right])
    if criterion == "poisson":
        if np.dot(w[left], y[left]) <= 0 or np.dot(w[right], y[right]) <= 0:
            return -np.inf  # a child of zero sum: infinite deviance
        return poisson_deviance(y, w) - WL / W * poisson_deviance(y[left], w[left]) \
            - WR / W * poisson_deviance(y[right], w[right])
    if criterion in ("cart", "twoing"):
        pl = class_fractions(y[left], w[left], n_classes)
        pr = class_fractions(y[right], w[right], n_classes)
        distance = np.abs(pl - pr).sum()
        if criterion == "cart":
            return 2 * (WL / W) * (WR / W) * distance
        return (WL / W) * (WR / W) / 4 * distance ** 2
    measure = NODE_MEASURE[criterion]
    gain = measure(y, w, n_classes) - WL / W * measure(y[left], w[left], n_classes) \
        - WR / W * measure(y[right], w[right], n_classes)
    if criterion == "gain_ratio":
        fractions = np.array([WL, WR]) / W
        return gain / -np.sum(fractions * np.log2(fractions))
    return gain


def brute_force_best(criterion, X, y, w, n_classes, min_samples_leaf=1):
    """Best value over every feature and every midpoint between distinct values."""
    best = -np.inf
    for f in range(X.shape[1]):
        values = np.unique(X[:, f])
        for low, high in zip(values[:-1], values[1:], strict=True):
            threshold = np.float64(low) / 2 + np.float64(high) / 2
            goes_left = X[:, f] <= threshold
            if goes_left.sum() < min_samples_leaf or (~goes_left).sum() < min_samples_leaf:
                continue
            if w[goes_left].sum() <= 0 or w[~goes_left].sum() <= 0:
                continue
            best = max(best, split_value(criterion, y, w, goes_left, n_classes))
    return best


def node_members(tree, X):
    """Boolean mask (n_nodes, n_samples): which rows reach each node, by walking the arrays."""
    members = np.zeros((tree.node_count, X.shape[0]), dtype=bool)
    members[0] = True
    for node in range(tree.node_count):
        left = tree.children_left[node]
        if left < 0:
            continue
        goes_left = X[:, tree.feature[node]] <= tree.threshold[node]
        members[left] = members[node] & goes_left
        members[tree.children_right[node]] = members[node] & ~goes_left
    return members


def predict_walk(tree, X):
    """Leaf of every row, one row at a time."""
    leaves = np.empty(X.shape[0], dtype=np.int64)
    for i in range(X.shape[0]):
        node = 0
        while tree.children_left[node] >= 0:
            if X[i, tree.feature[node]] <= tree.threshold[node]:
                node = tree.children_left[node]
            else:
                node = tree.children_right[node]
        leaves[i] = node
    return leaves


def walk_against(ours, theirs, X, y, w, criterion, n_classes, check_node):
    """Walk a jitree tree and a scikit-learn tree together. Each node pair holds the same
    samples and passes ``check_node(a, b)`` (which returns False to leave a pair and its
    subtrees uncompared), and has the same split (numbering aside; thresholds to float32,
    which scikit-learn stores) unless the two splits are equally good on the node's samples
    (a tie, which each library breaks its own way: the subtrees below are not compared).
    Returns the number of ties and of identical splits."""
    ties = same = 0
    stack = [(0, 0, np.ones(X.shape[0], dtype=bool))]
    while stack:
        a, b, rows = stack.pop()
        if not check_node(a, b):
            continue
        assert (ours.children_left[a] < 0) == (theirs.children_left[b] < 0), (a, b)
        assert ours.n_node_samples[a] == theirs.n_node_samples[b] == rows.sum()
        if ours.children_left[a] < 0:
            continue
        fa, ta = ours.feature[a], ours.threshold[a]
        fb, tb = theirs.feature[b], theirs.threshold[b]
        if fa != fb or ta != pytest.approx(tb, rel=1e-6):
            gain_a = split_value(criterion, y[rows], w[rows], X[rows, fa] <= ta, n_classes)
            gain_b = split_value(criterion, y[rows], w[rows], X[rows, fb] <= tb, n_classes)
            assert gain_a == pytest.approx(gain_b, rel=1e-9), (a, b, gain_a, gain_b)
            ties += 1
            continue
        same += 1
        goes_left = X[:, fa] <= ta
        stack.append((ours.children_left[a], theirs.children_left[b], rows & goes_left))
        stack.append((ours.children_right[a], theirs.children_right[b], rows & ~goes_left))
    return ties, same
