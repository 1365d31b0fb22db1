"""Split search on categorical features: category subsets, one-vs-rest and multiway tests.

A categorical feature holds category codes 0 .. m-1 (NaN: missing) and is presorted like any
feature, so a node's segment lists its samples by increasing code: the samples of each category
present at the node form one *run*. One pass over the segment gives the statistics of the q
present categories (:func:`run_statistics`, O(n_node)); the search then works on those q runs.

Regularisation (:class:`~jitree.kernels.records.CategorySettings`), for search that fits noise
on many rare categories:

- pooling (``min_weight``): the categories of less weight than ``min_weight`` at the node are
  one run, the *pool*, searched as one category (its members go to the same child);
- smoothing (``smoothing`` = a): a run is ordered by (S_v + a S / W) / (W_v + a) instead of
  S_v / W_v (S the ordering statistic, W the weight, of the run v and of the node), so that a
  light category's order moves toward the node's own; the split scores stay exact;
- ``max_one_vs_rest``: ``SUBSET`` nodes with at most this many runs test one run against the
  rest;
- the subset penalty (``penalty`` = p): on q > 2 runs, every subset candidate scores
  p (q - 2) :func:`chance_gain` less, and the single runs against the rest are tried beside
  them unpenalised, so a subset test wins only when it beats the best single category (and
  the other features) by more than the q - 2 extra categories are expected to add by chance.

The modes, on the q runs left:

- ``SUBSET``, best ``x ∈ V``:
  - binary classification and regression: runs ordered by P(class 1 | v) or by mean y, and
    the q - 1 prefixes of that order tried — exact for gini, entropy and squared error
    (Breiman et al. 1984; Fisher 1958), O(q log q);
  - more classes, q <= ``max_exhaustive``: every partition of the runs into two non-empty
    sides, 2**(q-1) - 1 of them (the last run stays right);
  - more classes, q > ``max_exhaustive``: the heuristic — for each class c, runs ordered by
    P(c | v) and their prefixes tried; the best over the classes is kept;
  - ``max_subset_size`` l > 0: only partitions with a side of at most l categories; that side
    is the tested set V (left).
- ``ONE_VS_REST``: ``x == c`` for each present category c (for the pool: ``x ∈ pool``).
- ``MULTIWAY``: one child per present category (the pool: one child) (ID3 / C4.5); the
  score is the sum of
  :func:`criteria.child_score` over the children (gain ratio: C4.5's ratio). The missing
  samples join the best child or make one of their own. With ``max_children`` > 0, splits of
  more children are not candidates (a best-first growth short of leaves).

Missing samples (the NaN tail of the segment) are tried on each side (each child for
multiway) and the best is kept; the binary modes also try every present category against the
missing samples alone.
Ties: the first candidate in the order above wins (orders are stable, ties by code).
"""

import numpy as np

from . import criteria
from ._jit import borrowing, jit
from .criteria import inline_accumulate
from .records import Limits, Runs, Side

SUBSET = 0
ONE_VS_REST = 1
MULTIWAY = 2
CATEGORICAL_SPLITS = {"subset": SUBSET, "one_vs_rest": ONE_VS_REST, "multiway": MULTIWAY}

MISSING_RIGHT = 0
MISSING_LEFT = 1
NO_MISSING = 2


@jit
def child_allowed(count, weight, min_samples_leaf, min_weight_leaf):
    """Whether a child of ``count`` samples and total ``weight`` satisfies the leaf
    constraints (and has a positive weight, which every score divides by)."""
    return count >= min_samples_leaf and weight > 0.0 and weight >= min_weight_leaf


@jit
def monotone(limits, value_left, value_right):
    """Whether children of values ``value_left`` and ``value_right`` (stats[0] / weight)
    respect the :class:`Limits` of a constrained split: both within the node's bounds, and
    ordered by the constraint (``(value_left - value_right) * monotonic <= 0``)."""
    return (value_left >= limits.lower and value_right >= limits.lower
            and value_left <= limits.upper and value_right <= limits.upper
            and (value_left - value_right) * limits.monotonic <= 0.0)


@jit
def no_limits():
    """The :class:`Limits` of a split under no monotonic constraint."""
    return Limits(np.int64(0), -np.inf, np.inf)


@borrowing(inline="always")
def run_end(value_row, k, end):
    """The end of the run of equal values that starts at ``k`` in the sorted
    ``value_row[:end]``: the first position after ``k`` whose value differs, or ``end``.
    A galloping search (steps 1, 2, 4, ... then a bisection of the last step), so a run of
    length m costs about 2 log2(m) comparisons and a run of one sample one comparison: a
    node's few categories are found without reading all of its samples."""
    v = value_row[k]
    low = k  # the last position known to hold v
    step = 1
    high = k + 1
    while high < end and value_row[high] == v:
        low = high
        step *= 2
        high = k + step
    if high > end:
        high = end
    # value_row[low] == v; high == end or value_row[high] != v
    while high - low > 1:
        middle = (low + high) // 2
        if value_row[middle] == v:
            low = middle
        else:
            high = middle
    return high


@borrowing
def count_runs(value_row, start, end):
    """Number of distinct codes among the (non-missing, sorted) ``value_row[start:end]``."""
    q = 0
    k = start
    while k < end:
        k = run_end(value_row, k, end)
        q += 1
    return q


@borrowing
def run_statistics(data, rows, runs):
    """Per present category of ``rows`` (run r, increasing code): its code, statistics,
    weight and count, into the :class:`Runs` ``runs``."""
    value_row = rows.value
    r = 0
    run_start = rows.start
    while run_start < rows.end:
        k = run_end(value_row, run_start, rows.end)
        runs.code[r] = np.int64(value_row[run_start])
        runs.stats[r, :] = 0.0
        runs.weight[r] = inline_accumulate(runs.stats, r, data, rows.index, rows.label,
                                           run_start, k)
        runs.count[r] = k - run_start
        run_start = k
        r += 1


@borrowing(inline="always")
def sides_score(criterion, is_regression, left, right, weight_left, weight_right,
                parent_entropy):
    """Score of a split from its two sides' statistics (squared error: S_l**2 / W_l +
    S_r**2 / W_r, S = sum of w y; the others: :func:`criteria.split_score`). Compiled into
    its callers (see ``inline_two_way_score``)."""
    code = criterion.code
    if criterion.blocks.shape[0] > 0:  # multi-output
        return criteria.split_score(criterion, left, right, weight_left, weight_right,
                                    parent_entropy)
    if is_regression and code == criteria.SQUARED_ERROR:
        return left[0] * left[0] / weight_left + right[0] * right[0] / weight_right
    if code < criteria.USER_IMPURITY:
        return criteria.builtin_score(code, left, right, weight_left, weight_right,
                                      parent_entropy)
    return criteria.split_score(criterion, left, right, weight_left, weight_right,
                                parent_entropy)


@borrowing
def two_way_score(settings, is_regression, base, node, missing, parent_entropy, left, right,
                  limits):
    """Best score of the binary partition whose non-missing left side is the :class:`Side`
    ``base``, over the sides the ``missing`` samples may take (``node``: the whole node).
    Returns (score, missing direction); score -inf when no direction satisfies the leaf
    constraints and the :class:`Limits` ``limits``. ``left`` and ``right`` are scratch;
    ``left`` may be ``base.stats`` itself, as the only direction that changes it (missing
    left) comes last."""
    n_missing = missing.count
    n_stats = node.stats.shape[0]
    best_score = -np.inf
    best_direction = NO_MISSING if n_missing == 0 else MISSING_RIGHT
    for direction in range(2 if n_missing > 0 else 1):
        w_left = base.weight
        count_left = base.count
        for s in range(n_stats):
            left[s] = base.stats[s]
        if direction == MISSING_LEFT:
            for s in range(n_stats):
                left[s] += missing.stats[s]
            w_left += missing.weight
            count_left += n_missing
        w_right = node.weight - w_left
        count_right = node.count - count_left
        if not (child_allowed(count_left, w_left, settings.min_samples_leaf,
                              settings.min_weight_leaf)
                and child_allowed(count_right, w_right, settings.min_samples_leaf,
                                  settings.min_weight_leaf)):
            continue
        for s in range(n_stats):
            right[s] = node.stats[s] - left[s]
        if limits.monotonic != 0 and not monotone(limits, left[0] / w_left,
                                                  right[0] / w_right):
            continue
        score = sides_score(settings.criterion, is_regression, left, right, w_left, w_right,
                            parent_entropy)
        if score > best_score:
            best_score = score
            if n_missing > 0:
                best_direction = direction
    return best_score, best_direction


# two_way_score compiled into its caller, for the sample-order search
# (jitree.kernels.sample_order.search_nodes), which scores every (node, feature) pair: a call
# passing the settings and sides records cost more than the score. With sides_score compiled
# into it too, Extra-Trees regressor trees (150k x 20, every feature a node, 1 thread) took
# 441-455 against 524-560 ms, classifier trees (4 features a node) 141-142 against 148 ms.
# The category search's candidate loops (scan_categorical: each category alone, each prefix
# of an order, each subset) take it too, and run_statistics takes
# criteria.inline_accumulate (one call per category present): two forests of 150k x 20
# with 4 categorical columns (5-200 categories), 1 thread, Extra-Trees classifier 2.61 ->
# 1.72 s, random forest classifier 1.34 -> 0.94 s; a first categorical fit compiles 3-5 s
# longer (of 80 s). The presorted random search and the category search's value-or-missing
# candidate (once a pair) keep the call.
inline_two_way_score = borrowing(inline="always")(two_way_score.py_func)


_INSERTION_RUN = 16  # stable_argsort: runs sorted by insertion before the merges


@borrowing(inline="always")
def _before(a, b):
    """Whether key ``a`` sorts before key ``b``: smaller, NaN last (NumPy's order)."""
    return a < b or (b != b and a == a)


@borrowing
def stable_argsort(key, q, out, scratch):
    """``out[:q]`` = the indices 0 .. q - 1 by increasing ``key`` (NaN last), equal keys in
    index order: ``np.argsort(key[:q], kind="mergesort")`` without allocating (``scratch``:
    q entries). Runs of 16 by insertion, then merged bottom-up."""
    for r in range(q):
        out[r] = r
    for low in range(0, q, _INSERTION_RUN):
        high = min(q, low + _INSERTION_RUN)
        for i in range(low + 1, high):
            moved = out[i]
            t = i
            while t > low and _before(key[moved], key[out[t - 1]]):
                out[t] = out[t - 1]
                t -= 1
            out[t] = moved
    source = out
    target = scratch
    in_scratch = False  # whether source is scratch
    width = _INSERTION_RUN
    while width < q:
        for low in range(0, q, 2 * width):
            middle = min(q, low + width)
            high = min(q, low + 2 * width)
            a = low
            b = middle
            for k in range(low, high):
                # the right run's first goes first only when strictly before: stable
                if b < high and (a >= middle or _before(key[source[b]], key[source[a]])):
                    target[k] = source[b]
                    b += 1
                else:
                    target[k] = source[a]
                    a += 1
        source, target = target, source
        in_scratch = not in_scratch
        width *= 2
    if in_scratch:
        for r in range(q):
            out[r] = source[r]


@borrowing
def _order(run_stats, run_weight, q, column, prior, smoothing, out, work):
    """Runs 0..q-1 by increasing smoothed statistic (stats[:, column] + smoothing * prior) /
    (weight + smoothing), ``prior`` the node's stats[column] / weight (stable: ties by
    code), into ``out``; ``work``: the keys' and the sort's scratch (q entries each)."""
    key, scratch = work
    for r in range(q):
        weight = run_weight[r] + smoothing
        key[r] = (run_stats[r, column] + smoothing * prior) / weight if weight > 0.0 else 0.0
    stable_argsort(key, q, out, scratch)


@borrowing
def pool_runs(runs, q, min_weight, group):
    """Pool the runs of weight below ``min_weight`` into one: the runs are compacted in
    place (their increasing order kept, the pool at the place of its first member) and
    ``group[r]`` receives the new index of original run r. Returns the number of runs
    left. With fewer than two rare runs nothing changes (a pool of one is that run)."""
    n_rare = 0
    for r in range(q):
        if runs.weight[r] < min_weight:
            n_rare += 1
    if n_rare < 2:
        for r in range(q):
            group[r] = r
        return q
    n_stats = runs.stats.shape[1]
    pool = -1
    kept = 0
    for r in range(q):
        if runs.weight[r] < min_weight and pool >= 0:
            for s in range(n_stats):
                runs.stats[pool, s] += runs.stats[r, s]
            runs.weight[pool] += runs.weight[r]
            runs.count[pool] += runs.count[r]
            group[r] = pool
            continue
        if runs.weight[r] < min_weight:
            pool = kept
        if kept != r:
            runs.code[kept] = runs.code[r]
            for s in range(n_stats):
                runs.stats[kept, s] = runs.stats[r, s]
            runs.weight[kept] = runs.weight[r]
            runs.count[kept] = runs.count[r]
        group[r] = kept
        kept += 1
    return kept


@jit
def chance_gain(code, is_regression, stats, weight):
    """What one more category is expected to add to a split's score by chance at a node of
    statistics ``stats`` and ``weight`` (in samples of weight 1), for the criteria whose
    ordered subset search applies: the between-groups sum of squares of a category that does
    not matter has expectation variance x 1 degree of freedom (squared error: the targets'
    variance; gini: sum_c p_c (1 - p_c), the sum over the class indicators), and the G
    statistic of one more degree of freedom, 2 W dH, has expectation k - 1 for k classes
    (entropy, in nats). 0 for the other criteria (no penalty)."""
    if weight <= 0.0:
        return 0.0
    if is_regression:
        if code != criteria.SQUARED_ERROR:
            return 0.0
        mean = stats[0] / weight
        return max(0.0, stats[1] / weight - mean * mean)
    if code == criteria.GINI:
        total = 0.0
        for c in range(stats.shape[0]):
            p = stats[c] / weight
            total += p * (1.0 - p)
        return total
    if code == criteria.ENTROPY:
        present = 0
        for c in range(stats.shape[0]):
            if stats[c] > 0.0:
                present += 1
        return 0.5 * max(0, present - 1)
    return 0.0


@jit
def node_chance_gain(criterion, is_regression, stats, weight):
    """:func:`chance_gain` of a node under ``criterion`` (a :class:`Measure`); a multi-output
    node's is the sum of its outputs' (their scores add up)."""
    code = criterion.code
    blocks = criterion.blocks
    if blocks.shape[0] == 0:
        return chance_gain(code, is_regression, stats, weight)
    total = 0.0
    for j in range(blocks.shape[0] - 1):
        total += chance_gain(code, code == criteria.SQUARED_ERROR or code == criteria.POISSON,
                             stats[blocks[j]:blocks[j + 1]], weight)
    return total


@borrowing
def _multiway_score(settings, runs, q, missing_child, missing, node_weight, parent_entropy,
                    child):
    """Score of the multiway split into the q runs, the ``missing`` samples joining run
    ``missing_child`` (-1: none; q: a child of their own). -inf when a child breaks a leaf
    constraint."""
    criterion = settings.criterion
    min_samples_leaf = settings.min_samples_leaf
    min_weight_leaf = settings.min_weight_leaf
    n_stats = runs.stats.shape[1]
    total = 0.0
    split_information = 0.0
    if missing_child == q:  # the missing samples' own child
        if not child_allowed(missing.count, missing.weight, min_samples_leaf,
                             min_weight_leaf):
            return -np.inf
        total += criteria.child_score(criterion, missing.stats, missing.weight)
        fraction = missing.weight / node_weight
        split_information -= fraction * np.log(fraction)
    for r in range(q):
        w = runs.weight[r]
        count = runs.count[r]
        for s in range(n_stats):
            child[s] = runs.stats[r, s]
        if r == missing_child:
            for s in range(n_stats):
                child[s] += missing.stats[s]
            w += missing.weight
            count += missing.count
        if not child_allowed(count, w, min_samples_leaf, min_weight_leaf):
            return -np.inf
        total += criteria.child_score(criterion, child, w)
        fraction = w / node_weight
        split_information -= fraction * np.log(fraction)
    if criterion.code == criteria.GAIN_RATIO:
        if split_information <= 0.0:
            return -np.inf
        return criteria.gain_ratio_of(-total, split_information, node_weight, parent_entropy)
    return total


@jit
def category_work(max_q, n_stats):
    """The scratch of :func:`scan_categorical` for nodes of at most ``max_q`` present
    categories: the runs' code, statistics, weight and count, each present category's code
    and run, a side of the runs, an order of them, the order's keys and sort scratch, two
    vectors of n_stats."""
    return (Runs(np.empty(max_q, dtype=np.int64), np.empty((max_q, n_stats)),
                 np.empty(max_q), np.empty(max_q, dtype=np.int64)),
            np.empty(max_q, dtype=np.int64), np.empty(max_q, dtype=np.int64),
            np.empty(max_q, dtype=np.uint8), np.empty(max_q, dtype=np.int64),
            (np.empty(max_q), np.empty(max_q, dtype=np.int64)), np.empty(n_stats),
            np.empty(n_stats))


@borrowing
def scan_categorical(settings, categories, data, rows, node, parent_entropy, missing, scratch,
                     out, work):
    """Best category split of one node on one feature in ``categories.mode``: ``rows`` (a
    :class:`Rows`) are its non-missing samples, ``missing`` (a :class:`Side`) the others,
    ``node`` the whole node; ``scratch`` is (left, right), two vectors of n_stats.

    Returns ``(score, count, missing_to)``: count -1 when no split satisfies the constraints,
    else the number of present categories (binary modes) or of children (MULTIWAY: the q
    categories, plus one when the missing samples get a child of their own); ``missing_to``
    the missing direction (binary modes: MISSING_LEFT, MISSING_RIGHT, or NO_MISSING when there
    are none) or, for MULTIWAY, the slot of the child the missing samples go to (q: their own;
    -1 when there are none). When ``out = (out_code, out_slot)`` is not empty (at least q
    long) it receives the code of each run and its child slot (binary modes: 0 left, 1 right).
    ``work``: :func:`category_work` of at least q categories.

    Compiled without reference counting, and allocating nothing: called once per (node,
    categorical feature) pair, its records' arrays were otherwise counted up and down and
    its scratch allocated at each call.
    """
    mode = categories.mode
    max_exhaustive = categories.max_exhaustive
    max_subset_size = categories.max_subset_size
    is_regression = data.is_regression
    left, right = scratch
    out_code, out_slot = out
    node_stats = node.stats
    node_weight = node.weight
    n_missing = missing.count
    n_stats = node_stats.shape[0]
    q = count_runs(rows.value, rows.start, rows.end)
    if q < 2 and not (q == 1 and n_missing > 0):
        return -np.inf, -1, NO_MISSING
    all_runs, code_of, group, in_left, order, order_work, child, base = work
    runs = Runs(all_runs.code[:q], all_runs.stats[:q], all_runs.weight[:q],
                all_runs.count[:q])
    run_statistics(data, rows, runs)
    n_present = q
    for r in range(q):
        code_of[r] = runs.code[r]  # the code of each present category
    # group[r]: the run present category r is searched in
    q = pool_runs(runs, q, categories.min_weight, group)
    if q < 2 and n_missing == 0:
        return -np.inf, -1, NO_MISSING
    smoothing = categories.smoothing
    run_stats = runs.stats
    run_weight = runs.weight
    run_count = runs.count
    n_node = node.count
    write = out_code.shape[0] > 0
    best_score = -np.inf
    best_missing = NO_MISSING

    if mode == MULTIWAY:
        best_missing = -1
        max_children = settings.max_children
        # missing samples join child j < q, or (j == q) make a child of their own
        for missing_child in range(q + 1 if n_missing > 0 else 1):
            target_child = missing_child if n_missing > 0 else -1
            n_children = q + (target_child == q)
            if n_children < 2 or (max_children > 0 and n_children > max_children):
                continue
            score = _multiway_score(settings, runs, q, target_child, missing, node_weight,
                                    parent_entropy, child)
            if score > best_score:
                best_score = score
                best_missing = target_child
        if best_score == -np.inf:
            return best_score, -1, -1
        if write:
            for r in range(n_present):
                out_code[r] = code_of[r]
                out_slot[r] = group[r]
        return best_score, q + (best_missing == q), best_missing

    for s in range(n_stats):
        base[s] = 0.0
    for r in range(q):
        in_left[r] = 0
    # best candidate, kept in a compact form and expanded into slots at the end
    best_kind = -1  # 0: one run; 1: prefix of an order; 2: mask
    best_a = 0  # run / order column / mask
    best_b = 0  # prefix length
    best_swap = False

    one_vs_rest = mode == ONE_VS_REST or q <= categories.max_one_vs_rest
    # a subset of q > 2 categories must beat the best single category by the penalty
    penalty = 0.0
    if not one_vs_rest and q > 2 and categories.penalty > 0.0:
        penalty = categories.penalty * (q - 2) * node_chance_gain(
            settings.criterion, is_regression, node_stats, node_weight)
    if q >= 2 and (one_vs_rest or penalty > 0.0):
        for r in range(q):
            score, direction = inline_two_way_score(
                settings, is_regression, Side(run_stats[r], run_weight[r], run_count[r]),
                node, missing, parent_entropy, left, right, no_limits())
            if score > best_score:
                best_score = score
                best_missing = direction
                best_kind = 0
                best_a = r
    if q >= 2 and not one_vs_rest:
        # a multi-output node is ordered by each of its statistics in turn, as classes are
        n_classes = n_stats if (not is_regression or settings.criterion.blocks.shape[0] > 0) \
            else 0
        limit = max_subset_size if max_subset_size > 0 else q
        if n_classes > 2 and q <= max_exhaustive:
            for mask in range(1, 1 << (q - 1)):
                size = 0
                for r in range(q):
                    in_left[r] = (mask >> r) & 1
                    size += in_left[r]
                swap = False
                if size > limit:
                    if q - size > limit:
                        continue
                    swap = True  # the right side is the tested set
                base[:] = 0.0
                weight_left = 0.0
                count_left = 0
                for r in range(q):
                    if in_left[r]:
                        for s in range(n_stats):
                            base[s] += run_stats[r, s]
                        weight_left += run_weight[r]
                        count_left += run_count[r]
                score, direction = inline_two_way_score(
                    settings, is_regression, Side(base, weight_left, count_left), node,
                    missing, parent_entropy, left, right, no_limits())
                score -= penalty
                if score > best_score:
                    best_score = score
                    best_missing = direction
                    best_kind = 2
                    best_a = mask
                    best_swap = swap
        else:
            # binary classification: P(class 1); regression: mean y; more classes: each class
            n_orders = 1 if n_classes <= 2 else n_classes
            for o in range(n_orders):
                column = o if n_classes > 2 else (1 if n_classes == 2 else 0)
                _order(run_stats, run_weight, q, column, node_stats[column] / node_weight,
                       smoothing, order, order_work)
                base[:] = 0.0
                weight_left = 0.0
                count_left = 0
                for t in range(q - 1):
                    r = order[t]
                    for s in range(n_stats):
                        base[s] += run_stats[r, s]
                    weight_left += run_weight[r]
                    count_left += run_count[r]
                    swap = False
                    if t + 1 > limit:
                        if q - t - 1 > limit:
                            continue
                        swap = True
                    score, direction = inline_two_way_score(
                        settings, is_regression, Side(base, weight_left, count_left), node,
                        missing, parent_entropy, left, right, no_limits())
                    score -= penalty
                    if score > best_score:
                        best_score = score
                        best_missing = direction
                        best_kind = 1
                        best_a = column
                        best_b = t + 1
                        best_swap = swap
    if n_missing > 0:
        # every present category on the left, the missing samples right
        for s in range(n_stats):
            base[s] = node_stats[s] - missing.stats[s]
        score, direction = two_way_score(
            settings, is_regression, Side(base, node_weight - missing.weight, n_node - n_missing),
            node, Side(missing.stats, missing.weight, 0), parent_entropy, left, right,
            no_limits())
        if score > best_score:
            best_score = score
            best_missing = MISSING_RIGHT
            best_kind = 3
            best_swap = False
    if best_kind < 0:
        return -np.inf, -1, NO_MISSING
    if write:
        in_left[:] = 0
        if best_kind == 3:
            in_left[:] = 1
        elif best_kind == 0:
            in_left[best_a] = 1
        elif best_kind == 2:
            for r in range(q):
                in_left[r] = (best_a >> r) & 1
        else:
            _order(run_stats, run_weight, q, best_a, node_stats[best_a] / node_weight,
                   smoothing, order, order_work)
            for t in range(best_b):
                in_left[order[t]] = 1
        for r in range(n_present):
            out_code[r] = code_of[r]
            side_left = in_left[group[r]] == 1
            if best_swap:
                side_left = not side_left
            out_slot[r] = 0 if side_left else 1
    if best_swap and best_missing != NO_MISSING:
        best_missing = MISSING_LEFT if best_missing == MISSING_RIGHT else MISSING_RIGHT
    return best_score, n_present, best_missing
