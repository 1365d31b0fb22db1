"""Post-pruning of fitted trees: cost complexity, reduced error and pessimistic (C4.5).

Every method decides which internal nodes become leaves (a mask over the nodes); :func:`prune`
then builds a new, compact Tree from the kept nodes, so no orphan node survives.

Trees may hold multiway nodes (more than two children): a branch's cost and leaf count are
sums over all the children of each of its nodes, and a multiway node is pruned or kept whole.
"""

import math
from statistics import NormalDist

import numpy as np

from ..kernels import prune as _prune
from .tree import (
    SPLIT_MULTIWAY,
    SPLIT_SUBSET,
    SPLIT_THRESHOLD,
    TREE_LEAF,
    TREE_UNDEFINED,
    Tree,
)


class PruningPath(dict):
    """``ccp_alphas`` and ``impurities`` of the minimal cost-complexity pruning path (also
    readable as attributes)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def _gather_pool(pool, old_offset, width):
    """The entries ``pool[old_offset[k] : old_offset[k] + width[k]]`` of every k, laid end to
    end; returns (new offset of each k, the new pool)."""
    width = width.astype(np.int64)
    first = np.cumsum(width) - width
    index = np.repeat(old_offset, width) + (np.arange(int(width.sum()))
                                            - np.repeat(first, width))
    return first, pool[index]


def prune(tree, make_leaf):
    """A new Tree in which the nodes flagged in ``make_leaf`` are leaves and their
    descendants are gone.

    Nodes are renumbered breadth-first with all the children of a node side by side, so a
    multiway node keeps its children consecutive and in slot order (its ``multiway_slot``
    entries stay valid). The pools are compacted: only the category sets and slot tables of
    the remaining category tests are kept, in node order.
    """
    make_leaf = np.asarray(make_leaf, dtype=np.uint8)
    old_of_new, new_of_old = _prune.compact_order(tree.children_left, tree.children_right,
                                                  tree.split_kind, make_leaf)
    leaf = (tree.children_left[old_of_new] == TREE_LEAF) | (make_leaf[old_of_new] == 1)
    left = np.where(leaf, TREE_LEAF, new_of_old[tree.children_left[old_of_new]])
    right = np.where(leaf, TREE_LEAF, new_of_old[tree.children_right[old_of_new]])
    feature = np.where(leaf, TREE_UNDEFINED, tree.feature[old_of_new])
    kind = np.where(leaf, SPLIT_THRESHOLD, tree.split_kind[old_of_new])
    offset = np.full(old_of_new.shape[0], -1, dtype=np.int64)
    n_categories = tree.n_categories.astype(np.int64)
    pools = {}
    for split, name, width_of in (
            (SPLIT_SUBSET, "category_bits", lambda m: (m + 63) // 64),
            (SPLIT_MULTIWAY, "multiway_slot", lambda m: m + 1)):
        nodes = np.flatnonzero(kind == split)
        first, pools[name] = _gather_pool(getattr(tree, name),
                                          tree.category_offset[old_of_new[nodes]],
                                          width_of(n_categories[feature[nodes]]))
        offset[nodes] = first
    pruned = Tree(tree.n_features, tree.n_classes, feature,
                np.where(leaf, float(TREE_UNDEFINED), tree.threshold[old_of_new]),
                left, right, tree.value[old_of_new], tree.impurity[old_of_new],
                tree.n_node_samples[old_of_new], tree.weighted_n_node_samples[old_of_new],
                split_kind=kind, missing_left=np.where(leaf, 0, tree.missing_left[old_of_new]),
                category_offset=offset, n_categories=tree.n_categories,
                feature_kind=tree.feature_kind, n_outputs=tree.n_outputs, **pools)
    return pruned._freeze()  # a tree of fitted estimators, like the one it came from


def _node_costs(tree):
    """R(t) = W_t / W_root * impurity_t."""
    return tree.weighted_n_node_samples * tree.impurity / tree.weighted_n_node_samples[0]


def cost_complexity(tree, ccp_alpha):
    """The subtree of minimal cost-complexity for ``ccp_alpha``: the weakest links (smallest
    effective alpha g(t) = (R(t) - R(T_t)) / (|leaves(T_t)| - 1)) are pruned while
    g(t) <= ccp_alpha."""
    if ccp_alpha <= 0.0:
        return tree
    n_nodes = tree.node_count
    make_leaf = np.zeros(n_nodes, dtype=np.uint8)
    path = np.empty(n_nodes + 1)
    _prune.cost_complexity_prune(tree.children_left, tree.children_right, tree.split_kind,
                                 _node_costs(tree), float(ccp_alpha), make_leaf, path,
                                 np.empty(n_nodes + 1))
    return prune(tree, make_leaf) if make_leaf.any() else tree


def cost_complexity_path(tree):
    """The whole pruning path: the effective alpha of each successive prune (first entry 0,
    the unpruned tree) and the total leaf impurity sum_leaves W_t / W impurity_t after it."""
    n_nodes = tree.node_count
    alphas = np.empty(n_nodes + 1)
    impurities = np.empty(n_nodes + 1)
    count = _prune.cost_complexity_prune(
        tree.children_left, tree.children_right, tree.split_kind, _node_costs(tree), np.inf,
        np.zeros(n_nodes, dtype=np.uint8), alphas, impurities)
    return PruningPath(ccp_alphas=alphas[:count].copy(), impurities=impurities[:count].copy())


def _parent_first_order(tree):
    """All nodes, each parent before its children (breadth-first)."""
    old_of_new, _ = _prune.compact_order(tree.children_left, tree.children_right,
                                         tree.split_kind,
                                         np.zeros(tree.node_count, dtype=np.uint8))
    return old_of_new


def reduced_error(tree, X, target, sample_weight, node_prediction, is_regression):
    """Reduced Error Pruning on a separate pruning set (X, target).

    Bottom-up, every internal node whose replacement by a leaf (predicting its own training
    prediction ``node_prediction``) makes no more errors (classification: misclassified
    weight) or no larger squared error (regression) on the pruning samples reaching it than its
    pruned subtree becomes a leaf. A node no pruning sample reaches is pruned too (0 <= 0).
    The pruning samples walk the tree as ``predict`` walks it (category tests, missing values
    and unseen categories routed as each node says).
    """
    errors = np.empty(tree.node_count)
    reached = np.empty(tree.node_count)
    _prune.node_errors(X, tree.walk_arrays(), is_regression, node_prediction, target,
                       sample_weight, errors, reached)
    make_leaf = np.zeros(tree.node_count, dtype=np.uint8)
    _prune.prune_bottom_up(tree.children_left, tree.children_right, tree.split_kind,
                           _parent_first_order(tree), errors, 0.0, make_leaf,
                           np.empty(tree.node_count))
    return prune(tree, make_leaf) if make_leaf.any() else tree


def pessimistic_extra_errors(n, errors, confidence):
    """C4.5's pessimistic correction: how many errors to add to ``errors`` observed among
    ``n`` (weighted) training samples of a leaf, from the upper limit of the binomial
    confidence interval at level ``confidence``.

    - no error: n (1 - CF**(1/n)), the exact binomial limit for 0 errors;
    - less than one error: linear between that and the value for one error;
    - otherwise the normal approximation with z = Phi^-1(1 - CF):
      upper = (e + 1/2 + z^2/2 + z sqrt((e + 1/2)(1 - (e + 1/2)/n) + z^2/4)) / (n + z^2),
      extra = n upper - e;
    - when e + 1/2 >= n (almost every sample wrong): 0.67 (n - e), C4.5's own choice.
    """
    if n <= 0.0:
        return 0.0
    if errors < 1e-6:
        return n * (1.0 - confidence ** (1.0 / n))
    if errors < 0.9999:
        none = n * (1.0 - confidence ** (1.0 / n))
        return none + errors * (pessimistic_extra_errors(n, 1.0, confidence) - none)
    if errors + 0.5 >= n:
        return 0.67 * (n - errors)
    # Phi^-1(1 - CF) = -Phi^-1(CF), the latter where 1 - CF rounds to 1
    z2 = (NormalDist().inv_cdf(1.0 - confidence) if 1.0 - confidence < 1.0
          else NormalDist().inv_cdf(confidence)) ** 2
    shifted = errors + 0.5
    upper = (shifted + z2 / 2.0 + math.sqrt(z2 * (shifted * (1.0 - shifted / n) + z2 / 4.0))) \
        / (n + z2)
    return n * upper - errors


# C4.5 prefers the smaller tree when the estimates differ by less than this many errors.
PESSIMISTIC_SLACK = 0.1


def pessimistic(tree, confidence):
    """C4.5's pessimistic pruning by subtree replacement: bottom-up, a node becomes a leaf
    when its estimated errors as a leaf, e + extra(n, e), are at most the sum of its pruned
    children's estimates plus ``PESSIMISTIC_SLACK``. Training counts come from the tree
    (``value`` holds the weighted class counts, n = their sum, e = n - the largest), scaled
    so that the root's n is its number of samples: C4.5 counts cases, and the weights'
    units must not change the tree (unit weights are not scaled)."""
    n = tree.value.sum(axis=1)
    errors = n - tree.value.max(axis=1)
    if n[0] > 0.0 and n[0] != tree.n_node_samples[0]:
        scale = tree.n_node_samples[0] / n[0]
        n, errors = n * scale, errors * scale
    estimate = np.array([e + pessimistic_extra_errors(w, e, confidence)
                         for w, e in zip(n, errors, strict=True)])
    make_leaf = np.zeros(tree.node_count, dtype=np.uint8)
    _prune.prune_bottom_up(tree.children_left, tree.children_right, tree.split_kind,
                           _parent_first_order(tree), estimate, PESSIMISTIC_SLACK, make_leaf,
                           np.empty(tree.node_count))
    return prune(tree, make_leaf) if make_leaf.any() else tree
