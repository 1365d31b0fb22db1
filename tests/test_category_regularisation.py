"""The regularised category search (pooling of rare categories, smoothed orders, one-vs-rest
below a number of categories) against a brute-force twin, and its parameters.

The twin pools the categories lighter than ``min_samples_category`` samples of the mean weight
(two or more of them: a pool of one is that category), then lists every split the search may
make on the pooled groups: every partition of the groups (every group against the rest for
one-vs-rest and for nodes of at most ``max_one_vs_rest_categories`` groups; with smoothing, the
prefixes of the groups ordered by their smoothed statistic), each with the missing samples on
either side, and the present groups against the missing ones; multiway: one child per group.
jitree's root split must score the twin's best (1e-9 relative), and the pooled categories
must share a child.
"""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_categorical import EXACT, groups_value, random_categorical, root_partition_value

import jitree
from jitree.model.tree import SPLIT_MULTIWAY, SPLIT_SUBSET

from naive import class_fractions, split_value, variance


def pooled_groups(x, w, min_samples):
    """The searched groups of the present codes of ``x``: a tuple of codes each, the rare
    codes (weight below min_samples mean weights) in one group if there are two or more."""
    present = np.unique(x[~np.isnan(x)])
    unit = w[w > 0].mean()
    rare = [c for c in present if w[x == c].sum() < min_samples * unit]
    if len(rare) < 2:
        return [(c,) for c in present], []
    groups = []
    for c in present:
        if c == rare[0]:
            groups.append(tuple(rare))
        elif c not in rare:
            groups.append((c,))
    return groups, rare


def smoothed_prefixes(groups, x, y, w, n_classes, regression, smoothing):
    """The left sets the ordered search tries: prefixes of the groups by increasing smoothed
    mean target (regression) or P(class 1), ties by code."""
    unit = w[w > 0].mean()
    a = smoothing * unit
    value = y if regression else (y == 1).astype(float)
    prior = np.dot(w, value) / w.sum()
    keys = []
    for group in groups:
        member = np.isin(x, group)
        keys.append((np.dot(w[member], value[member]) + a * prior) / (w[member].sum() + a))
    order = np.argsort(keys, kind="stable")
    return [[groups[g] for g in order[:t]] for t in range(1, len(groups))]


def chance_gain(criterion, y, w, n_classes):
    """What a category that does not matter adds to the score of ``split_value`` (a
    decrease of the node's impurity per unit of weight) by chance, per sample: the variance
    (squared error) or the Gini impurity over the number of samples, (k - 1) / 2 nats over
    the number of samples for entropy with k classes present; 0 for other criteria."""
    n = np.count_nonzero(w)
    if criterion == "squared_error":
        return variance(y, w) / n
    if criterion == "gini":
        p = class_fractions(y, w, n_classes)
        return float(np.sum(p * (1 - p))) / n
    if criterion == "entropy":
        present = np.count_nonzero(np.bincount(y, weights=w, minlength=n_classes) > 0)
        return (present - 1) / 2 / n / np.log(2)  # nats -> bits of naive.entropy
    return 0.0


def brute_force_regularised(criterion, x, y, w, n_classes, mode, regression, min_samples,
                            smoothing, max_one_vs_rest, penalty=0.0, max_subset_size=None):
    """Best score over every split the regularised search may make, and the pooled codes.
    Subset tests of q > 2 groups score ``penalty * (q - 2) * chance_gain`` less; with a
    penalty the single groups against the rest are candidates too."""
    groups, rare = pooled_groups(x, w, min_samples)
    missing = np.isnan(x)
    best = -np.inf
    if mode == "multiway":
        masks = [np.isin(x, g) for g in groups]
        if len(masks) >= 2:
            for j in range(len(masks)) if missing.any() else [None]:
                joined = [m | missing if k == j else m for k, m in enumerate(masks)]
                best = max(best, groups_value(criterion, y, w, joined, n_classes))
        if missing.any() and len(masks) >= 1:
            best = max(best, groups_value(criterion, y, w, masks + [missing], n_classes))
        return best, rare
    one_vs_rest = mode == "one_vs_rest" or len(groups) <= max_one_vs_rest
    cost = 0.0 if one_vs_rest or len(groups) <= 2 else \
        penalty * (len(groups) - 2) * chance_gain(criterion, y, w, n_classes)
    candidates = []  # (left set, cost)
    if one_vs_rest or cost > 0:
        candidates += [([g], 0.0) for g in groups]
    if not one_vs_rest:
        if smoothing > 0 and (regression or n_classes == 2):
            left_sets = smoothed_prefixes(groups, x, y, w, n_classes, regression, smoothing)
        else:
            left_sets = [list(c) for size in range(1, len(groups))
                         for c in itertools.combinations(groups, size)]
        limit = max_subset_size or len(groups)
        candidates += [(left, cost) for left in left_sets
                       if len(left) <= limit or len(groups) - len(left) <= limit]
    for left, left_cost in candidates:
        in_set = np.isin(x, [c for g in left for c in g])
        for missing_left in ((False, True) if missing.any() else (False,)):
            goes_left = in_set | (missing & missing_left)
            if goes_left.all():
                continue
            best = max(best, split_value(criterion, y, w, goes_left, n_classes) - left_cost)
    if missing.any() and not missing.all():
        best = max(best, split_value(criterion, y, w, ~missing, n_classes))
    return best, rare


def fit_root(x, y, w, criterion, mode, regression, **params):
    cls = jitree.DecisionTreeRegressor if regression else jitree.DecisionTreeClassifier
    model = cls(criterion=criterion, max_depth=1, categorical_features=[0],
                categorical_split=mode, **params)
    return model.fit(x[:, None], y, sample_weight=w)


CASES = [("subset", "gini", 2), ("subset", "entropy", 2), ("subset", "squared_error", 0),
         ("subset", "gini", 3), ("one_vs_rest", "gini", 3), ("one_vs_rest", "squared_error", 0),
         ("multiway", "entropy", 3), ("multiway", "squared_error", 0)]


@settings(deadline=None, max_examples=120)
@given(seed=st.integers(0, 2**32 - 1), case=st.sampled_from(CASES), n=st.integers(10, 120),
       m=st.integers(2, 9), missing=st.sampled_from([0.0, 0.15]),
       min_samples=st.sampled_from([0, 4, 9, 25]), smoothing=st.sampled_from([0.0, 3.0, 40.0]),
       max_one_vs_rest=st.sampled_from([0, 3]), penalty=st.sampled_from([0.0, 1.0, 4.0]))
def test_regularised_search_is_the_twins_best(seed, case, n, m, missing, min_samples,
                                              smoothing, max_one_vs_rest, penalty):
    mode, criterion, n_classes = case
    regression = n_classes == 0
    x, y, w = random_categorical(seed, n, m, max(n_classes, 2), missing, regression)
    model = fit_root(x, y, w, criterion, mode, regression, min_samples_category=min_samples,
                     category_smoothing=smoothing, max_one_vs_rest_categories=max_one_vs_rest,
                     subset_penalty=penalty, max_exhaustive_categories=10)
    want, rare = brute_force_regularised(criterion, x, y, w, n_classes, mode, regression,
                                         min_samples, smoothing, max_one_vs_rest, penalty)
    if model.tree_.node_count == 1:
        assert want == -np.inf or len(np.unique(y)) == 1
        return
    got = root_partition_value(model, x[:, None], y, w, criterion, n_classes)
    groups = len(pooled_groups(x, w, min_samples)[0])
    if penalty > 0 and mode == "subset" and groups > 2 and groups > max_one_vs_rest:
        # the chosen split scores the best penalised candidate: its own cost, when it
        # is a subset test of several groups, is the twin's
        present = np.unique(x[~np.isnan(x)])
        left_child = model.tree_.children_left[0]
        goes_left = model.apply(present[:, None]) == left_child
        left, right = set(present[goes_left]), set(present[~goes_left])
        single = any(set(g) in (left, right) for g in pooled_groups(x, w, min_samples)[0])
        if left and right and not single:
            got -= penalty * (groups - 2) * chance_gain(criterion, y, w, n_classes)
    assert got == pytest.approx(want, rel=1e-9, abs=1e-12)
    # the pooled categories share a child
    leaves = {int(model.apply(np.array([[c]]))[0]) for c in rare}
    assert len(leaves) <= 1
    assert model.tree_.split_kind[0] in (SPLIT_SUBSET, SPLIT_MULTIWAY)


def test_pooling_sends_rare_categories_together_and_unpooled_search_does_not():
    """Ten frequent categories carry the signal; forty rare ones are noise that, searched one
    by one, the exact subset search puts on both sides."""
    rng = np.random.default_rng(0)
    frequent = rng.integers(0, 10, 2000)
    rare = rng.integers(10, 50, 200)
    x = np.concatenate([frequent, rare]).astype(float)
    y = np.concatenate([(frequent % 2 == 0), rng.random(200) < 0.5]).astype(int)
    exact = fit_root(x, y, np.ones_like(x), "gini", "subset", False, **EXACT)
    pooled = fit_root(x, y, np.ones_like(x), "gini", "subset", False, min_samples_category=20,
                      category_smoothing=0.0, max_one_vs_rest_categories=0)
    rare_codes = np.arange(10, 50, dtype=float)[:, None]
    assert len(set(pooled.apply(rare_codes))) == 1
    assert len(set(exact.apply(rare_codes))) == 2
    # the frequent categories are split by parity either way
    even = exact.apply(np.arange(0, 10, 2, dtype=float)[:, None])
    assert len(set(even)) == 1
    assert len(set(pooled.apply(np.arange(0, 10, 2, dtype=float)[:, None]))) == 1


def test_one_vs_rest_below_a_number_of_categories():
    x, y, w = random_categorical(7, 300, 4, 2, 0.0)
    model = fit_root(x, y, w, "gini", "subset", False, min_samples_category=0,
                     category_smoothing=0.0, max_one_vs_rest_categories=4)
    tree = model.tree_
    bits = int(tree.category_bits[tree.category_offset[0]])
    in_set = sum((bits >> c) & 1 for c in range(4))
    assert in_set in (1, 3)  # one category against the three others, either side tested


def test_forests_and_persistence_keep_the_parameters(tmp_path):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"c": pd.Categorical(rng.integers(0, 40, 600)),
                          "v": rng.normal(size=600)})
    y = (frame["c"].cat.codes % 3 == 0).to_numpy().astype(int)
    params = dict(min_samples_category=7, category_smoothing=2.5, max_one_vs_rest_categories=2)
    forest = jitree.RandomForestClassifier(n_estimators=5, random_state=0, **params)
    forest.fit(frame, y)
    for tree in forest.estimators_:
        assert {k: tree.get_params()[k] for k in params} == params
    model = jitree.DecisionTreeClassifier(random_state=0, **params).fit(frame, y)
    path = tmp_path / "model.jitree"
    jitree.save(model, path)
    loaded = jitree.load(path)
    assert {k: loaded.get_params()[k] for k in params} == params
    np.testing.assert_array_equal(loaded.predict(frame), model.predict(frame))


@pytest.mark.parametrize("name, value", [("min_samples_category", -1),
                                         ("category_smoothing", -0.5),
                                         ("category_smoothing", np.nan),
                                         ("max_one_vs_rest_categories", -1),
                                         ("max_one_vs_rest_categories", 2.5),
                                         ("min_samples_category", "many")])
def test_bad_regularisation_parameters(name, value):
    x, y, w = random_categorical(0, 50, 4, 2, 0.0)
    model = jitree.DecisionTreeClassifier(categorical_features=[0], **{name: value})
    with pytest.raises((ValueError, TypeError), match=name):
        model.fit(x[:, None], y)
