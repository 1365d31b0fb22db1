"""Users' own @njit criteria (jitree.Criterion) inside the compiled split search."""

import numba
import numpy as np
import pytest

import jitree
from jitree.kernels.grower import grow_tree


@numba.njit
def my_gini(stats, weight):
    total = 0.0
    for c in range(stats.shape[0]):
        total += stats[c] * stats[c]
    return 1.0 - total / (weight * weight)


@numba.njit
def my_variance(stats, weight):
    mean = stats[0] / weight
    return max(stats[1] / weight - mean * mean, 0.0)


@numba.njit
def my_twoing(left, left_weight, right, right_weight):
    total = left_weight + right_weight
    distance = 0.0
    for c in range(left.shape[0]):
        distance += abs(left[c] / left_weight - right[c] / right_weight)
    return left_weight / total * right_weight / total / 4.0 * distance * distance


@numba.njit
def tsallis(stats, weight):  # q = 2 ... the Gini index; q = 3 here
    total = 0.0
    for c in range(stats.shape[0]):
        p = stats[c] / weight
        total += p * p * p
    return (1.0 - total) / 2.0


def _data(n=400, seed=0, classes=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    y = (X[:, 0] + 0.6 * X[:, 1] ** 2 + rng.normal(scale=0.4, size=n) > 0.3).astype(int)
    if classes == 3:
        y += (X[:, 2] > 0.7).astype(int)
    return X, y


def _same_tree(a, b):
    for name in ("feature", "threshold", "children_left", "children_right",
                 "n_node_samples", "missing_left", "split_kind", "category_bits"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_allclose(a.value, b.value, rtol=1e-12)
    np.testing.assert_allclose(a.impurity, b.impurity, rtol=1e-9, atol=1e-12)


GINI = jitree.Criterion(impurity=my_gini)


@pytest.mark.parametrize("case", ["plain", "weights", "nan", "depth", "random", "best_first"])
def test_user_gini_grows_the_builtin_tree(case):
    X, y = _data()
    kwargs, fit = {}, {}
    if case == "weights":
        fit["sample_weight"] = np.random.default_rng(1).uniform(0.2, 3.0, len(y))
        # weighted scores are not sums of integers: in small nodes, features that make the
        # same partition tie to the last bit and the two formulas' rounding decides
        kwargs = {"min_samples_leaf": 5}
    if case == "nan":
        X = X.copy()
        X[np.random.default_rng(2).random(X.shape) < 0.1] = np.nan
    if case == "depth":
        kwargs = {"max_depth": 4, "min_samples_leaf": 5}
    if case == "random":
        kwargs = {"splitter": "random", "random_state": 3}
    if case == "best_first":
        kwargs = {"max_leaf_nodes": 12, "min_impurity_decrease": 0.001}
    builtin = jitree.DecisionTreeClassifier(**kwargs).fit(X, y, **fit)
    user = jitree.DecisionTreeClassifier(criterion=GINI, **kwargs).fit(X, y, **fit)
    _same_tree(builtin.tree_, user.tree_)


@pytest.mark.parametrize("mode", ["subset", "one_vs_rest", "multiway"])
def test_user_gini_on_categories(mode):
    rng = np.random.default_rng(4)
    codes = rng.integers(0, 6, 500).astype(np.float64)
    codes[rng.random(500) < 0.1] = np.nan
    X = np.column_stack([codes, rng.normal(size=500)])
    y = ((np.nan_to_num(codes, nan=2) % 3 == 0) ^ (X[:, 1] > 0.8)).astype(int)
    params = dict(categorical_features=[0], categorical_split=mode, max_depth=4)
    builtin = jitree.DecisionTreeClassifier(**params).fit(X, y)
    user = jitree.DecisionTreeClassifier(criterion=GINI, **params).fit(X, y)
    _same_tree(builtin.tree_, user.tree_)
    np.testing.assert_array_equal(builtin.predict(X), user.predict(X))


def test_user_twoing_score_grows_the_builtin_tree():
    X, y = _data(seed=5)
    builtin = jitree.DecisionTreeClassifier(criterion="twoing", max_depth=5).fit(X, y)
    user = jitree.DecisionTreeClassifier(
        criterion=jitree.Criterion(score=my_twoing), max_depth=5).fit(X, y)
    _same_tree(builtin.tree_, user.tree_)  # a score criterion's nodes report the Gini index


def test_user_variance_grows_the_builtin_regression_tree():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(500, 4))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.normal(size=500)
    X[rng.random(X.shape) < 0.05] = np.nan
    params = dict(max_depth=6, min_samples_leaf=8)  # no near ties (see test_numerics)
    builtin = jitree.DecisionTreeRegressor(**params).fit(X, y)
    user = jitree.DecisionTreeRegressor(criterion=jitree.Criterion(impurity=my_variance),
                                        **params).fit(X, y)
    for name in ("feature", "threshold", "children_left", "n_node_samples", "missing_left"):
        np.testing.assert_array_equal(getattr(builtin.tree_, name), getattr(user.tree_, name))
    np.testing.assert_allclose(user.tree_.impurity, builtin.tree_.impurity, rtol=1e-8,
                               atol=1e-12)
    np.testing.assert_allclose(user.predict(X), builtin.predict(X), rtol=1e-12)


def test_user_criterion_splits_are_the_brute_force_best():
    # a criterion of its own (Tsallis entropy, q = 3): the root split maximises the
    # weighted impurity decrease over every threshold of every feature
    X, y = _data(n=120, seed=7)
    model = jitree.DecisionTreeClassifier(criterion=jitree.Criterion(impurity=tsallis),
                                          max_depth=1).fit(X, y)

    def impurity(labels):
        p = np.bincount(labels, minlength=3) / len(labels)
        return (1.0 - np.sum(p ** 3)) / 2.0

    best = -np.inf
    for f in range(X.shape[1]):
        values = np.unique(X[:, f])
        for low, high in zip(values[:-1], values[1:], strict=True):
            left = X[:, f] <= (low + high) / 2
            best = max(best, -(left.sum() * impurity(y[left])
                               + (~left).sum() * impurity(y[~left])))
    left = X[:, model.tree_.feature[0]] <= model.tree_.threshold[0]
    got = -(left.sum() * impurity(y[left]) + (~left).sum() * impurity(y[~left]))
    assert got == pytest.approx(best, rel=1e-12)
    assert model.tree_.impurity[0] == pytest.approx(impurity(y), rel=1e-12)


def test_user_criteria_share_one_compiled_engine():
    # a new criterion compiles only itself: the growth loop keeps its specialisations
    X, y = _data(n=200, seed=8)
    jitree.DecisionTreeClassifier(criterion=GINI, max_depth=3).fit(X, y)
    before = len(grow_tree.signatures)
    jitree.DecisionTreeClassifier(criterion=jitree.Criterion(impurity=tsallis),
                                  max_depth=3).fit(X, y)
    jitree.DecisionTreeClassifier(criterion=jitree.Criterion(score=my_twoing),
                                  max_depth=3).fit(X, y)
    assert len(grow_tree.signatures) == before


def test_user_criterion_in_forests_pruning_and_importances():
    X, y = _data(seed=9)
    forest = jitree.RandomForestClassifier(n_estimators=4, random_state=0, criterion=GINI)
    builtin = jitree.RandomForestClassifier(n_estimators=4, random_state=0)
    np.testing.assert_array_equal(forest.fit(X, y).predict_proba(X),
                                  builtin.fit(X, y).predict_proba(X))
    pruned = jitree.DecisionTreeClassifier(criterion=GINI, ccp_alpha=0.01).fit(X, y)
    reference = jitree.DecisionTreeClassifier(ccp_alpha=0.01).fit(X, y)
    _same_tree(reference.tree_, pruned.tree_)
    np.testing.assert_allclose(pruned.feature_importances_, reference.feature_importances_)


def test_saved_model_records_the_criterion_name(tmp_path):
    X, y = _data(n=200, seed=10)
    model = jitree.DecisionTreeClassifier(criterion=jitree.Criterion(impurity=tsallis),
                                          max_depth=4).fit(X, y)
    path = tmp_path / "model.jitree"
    jitree.save(model, path)
    loaded = jitree.load(path)
    assert loaded.get_params()["criterion"] == "tsallis"
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    with pytest.raises(ValueError, match="criterion"):
        loaded.fit(X, y)  # refitting needs the Criterion itself
    clone = jitree.clone(model).fit(X, y)  # clones share the Criterion
    np.testing.assert_array_equal(clone.predict(X), model.predict(X))


def test_bad_criteria_are_refused_clearly():
    X, y = _data(n=100, seed=11)

    def plain(stats, weight):
        return 0.0

    with pytest.raises(TypeError, match="@njit"):
        jitree.Criterion(impurity=plain)
    with pytest.raises(ValueError, match="impurity function, a score function"):
        jitree.Criterion()

    @numba.njit
    def wrong_arity(stats):
        return stats[0]

    with pytest.raises(TypeError, match="'wrong_arity'.*must take"):
        jitree.DecisionTreeClassifier(criterion=jitree.Criterion(impurity=wrong_arity)).fit(
            X, y)

    @numba.njit
    def sometimes_nan(stats, weight):
        return np.nan if weight < 20 else 1.0 - stats[0] / weight

    with pytest.raises(ValueError, match="'sometimes_nan' returned NaN"):
        jitree.DecisionTreeClassifier(criterion=jitree.Criterion(impurity=sometimes_nan)).fit(
            X, y)

    @numba.njit
    def score_only(left, left_weight, right, right_weight):
        return left[0] / left_weight - right[0] / right_weight

    with pytest.raises(ValueError, match="multiway"):
        jitree.DecisionTreeClassifier(criterion=jitree.Criterion(score=score_only),
                                      categorical_features=[0],
                                      categorical_split="multiway").fit(np.round(X), y)


@numba.njit
def _drive_batch(batch, lefts, left_weights, node_stats, node_weight, out):
    batch(lefts, left_weights, node_stats, node_weight, out)


def _naive_batch_scores(lefts, left_weights, node_stats, node_weight, impurity=None,
                        score=None):
    """The scores of threshold candidates as the batch function defines them, one by one
    in plain NumPy and Python calls of the user's functions."""
    out = []
    for i in range(left_weights.shape[0]):
        left = lefts[:, i].copy()
        right = node_stats - left
        weight_left = left_weights[i]
        weight_right = node_weight - weight_left
        if score is not None:
            out.append(score.py_func(left, weight_left, right, weight_right))
        else:
            out.append(-(weight_left * impurity.py_func(left, weight_left)
                         + weight_right * impurity.py_func(right, weight_right)))
    return np.array(out)


@pytest.mark.parametrize("n_stats", [2, 3, 7, 64, 65])
@pytest.mark.parametrize("count", [1, 7, 8, 13, 256])
@pytest.mark.parametrize("kind", ["impurity", "score"])
def test_batch_scores_are_the_naive_scores(n_stats, count, kind):
    # the candidates' scores compiled for statistics of n_stats entries (kept on the stack
    # up to STACK_STATS = 64, on the heap above) and for any number of candidates (the
    # compiler's vector loop and its remainder)
    from jitree.kernels.criteria import STACK_STATS
    assert STACK_STATS == 64
    functions = {"impurity": tsallis} if kind == "impurity" else {"score": my_twoing}
    criterion = jitree.Criterion(**functions)
    rng = np.random.default_rng(n_stats * 1000 + count)
    room = 256  # the scan's batch: candidates are the first columns
    node_stats = rng.uniform(10.0, 20.0, n_stats)
    lefts = np.ascontiguousarray(rng.uniform(0.0, 1.0, (n_stats, room)) * node_stats[:, None])
    left_weights = lefts.sum(axis=0)
    node_weight = node_stats.sum()
    out = np.full(count, -1.0)
    _drive_batch(criterion._batch(n_stats), lefts, left_weights[:count], node_stats,
                 node_weight, out)
    naive = _naive_batch_scores(lefts, left_weights[:count], node_stats, node_weight,
                                **functions)
    np.testing.assert_allclose(out, naive, rtol=1e-13)
    # a node of another size than the batch was compiled for scores NaN (never read)
    if n_stats <= STACK_STATS:
        _drive_batch(criterion._batch(n_stats), lefts[:n_stats - 1],
                     left_weights[:count], node_stats[:n_stats - 1], node_weight, out)
        assert np.isnan(out).all()


def test_user_gini_with_more_classes_than_the_stack_takes():
    # 70 classes: statistics vectors of 70 entries, scored through vectors on the heap
    rng = np.random.default_rng(12)
    X = rng.normal(size=(1400, 3))
    y = (np.floor((X[:, 0] + 3.0) * 12) + (X[:, 1] > 0)).clip(0, 69).astype(int)
    y[:70] = np.arange(70)
    params = dict(max_depth=6, min_samples_leaf=3)
    builtin = jitree.DecisionTreeClassifier(**params).fit(X, y)
    user = jitree.DecisionTreeClassifier(criterion=GINI, **params).fit(X, y)
    assert builtin.n_classes_ == 70
    _same_tree(builtin.tree_, user.tree_)


def test_division_by_zero_in_a_criterion_is_a_nan_not_an_exception():
    # the user's functions follow NumPy's division rules (as jitree's kernels): 0 / 0 is a
    # NaN, which stops the fit with an error naming the criterion
    X, y = _data(n=100, seed=13)

    @numba.njit
    def divides_by_zero(stats, weight):
        return stats[0] * 0.0 / (weight - weight)

    with pytest.raises(ValueError, match="'divides_by_zero' returned NaN"):
        jitree.DecisionTreeClassifier(
            criterion=jitree.Criterion(impurity=divides_by_zero)).fit(X, y)


@numba.njit
def _raises_on_small_sets(stats, weight):
    if weight < 5.0:
        raise ValueError("too few samples")
    total = 0.0
    for c in range(stats.shape[0]):
        total += (stats[c] / weight) ** 2
    return 1.0 - total


@numba.njit
def _raises_always(stats, weight):
    if weight > 0.0:
        raise ValueError("not implemented yet")
    return 0.0


@numba.njit
def _score_raising_on_small_sides(left, weight_left, right, weight_right):
    if min(weight_left, weight_right) < 5.0:
        raise ValueError("too few samples")
    return abs(left[0] / weight_left - right[0] / weight_right)


# numba reports each raise inside the compiled search as an unraisable exception
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_criterion_that_raises_stops_the_fit():
    """numba cannot pass an exception out of the compiled search: a raise there (in the
    batch of candidates or at a node) counts as NaN and stops the fit, where the tree grew
    on meaningless numbers (a 67-node tree for a Gini that raised on small sets); a raise on
    the root's statistics stops it before growth, with the function's own message."""
    X, y = _data(n=300, seed=14)
    for criterion in (jitree.Criterion(impurity=_raises_on_small_sets),
                      jitree.Criterion(score=_score_raising_on_small_sides)):
        for model in (jitree.DecisionTreeClassifier(criterion=criterion),
                      jitree.RandomForestClassifier(criterion=criterion, n_estimators=2,
                                                    random_state=0)):
            with pytest.raises(ValueError, match=r"returned NaN \(or raised\)"):
                model.fit(X, y)
    with pytest.raises(ValueError, match="raised ValueError: not implemented yet on the root"):
        jitree.DecisionTreeClassifier(criterion=jitree.Criterion(impurity=_raises_always)).fit(
            X, y)


@numba.njit
def _gini_minus_one(stats, weight):
    total = 0.0
    for c in range(stats.shape[0]):
        total += (stats[c] / weight) ** 2
    return -total


@numba.njit
def _infinite(stats, weight):
    return np.inf


@pytest.mark.parametrize("impurity, shown", [(_gini_minus_one, "-0."), (_infinite, "inf")])
def test_an_impurity_below_zero_or_infinite_is_refused(impurity, shown):
    """A node of impurity 0 or less is a leaf: a measure below 0 grew a lone leaf (Gini
    minus 1: accuracy 1/3 on three classes), and an infinite one too, without a word."""
    X, y = _data(n=300, seed=15)
    with pytest.raises(ValueError, match=f"impurity is {shown}.* at the root"):
        jitree.DecisionTreeClassifier(criterion=jitree.Criterion(impurity=impurity)).fit(X, y)
    shifted = jitree.DecisionTreeClassifier(criterion=GINI).fit(X, y)  # 1 - sum p**2
    assert shifted.tree_.node_count > 1
