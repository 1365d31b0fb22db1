"""Categorical, ordinal and missing-value splits against brute-force twins and references.

The twins enumerate every allowed split of a small node (every partition of the categories
into two sides, every category against the rest, every side or child for the missing values)
and score each with the textbook formulas of ``naive.py``; jitree's chosen root split must
score as high as the best of them (up to rounding: 1e-9 relative).
"""

import itertools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import jitree
from jitree.kernels.categorical import stable_argsort
from jitree.model.tree import SPLIT_MULTIWAY, SPLIT_SUBSET, SPLIT_THRESHOLD

from naive import NODE_MEASURE, split_value, variance

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
DATA = SHARED_DATA if SHARED_DATA.is_dir() else Path(__file__).resolve().parent / "data"


# -- naive twins ------------------------------------------------------------------------------
def groups_value(criterion, y, w, groups, n_classes):
    """Impurity decrease (gain ratio for gain_ratio) of the partition into ``groups``
    (a list of boolean masks covering every sample)."""
    W = w.sum()
    if criterion == "squared_error":
        return variance(y, w) - sum(w[g].sum() / W * variance(y[g], w[g]) for g in groups)
    measure = NODE_MEASURE[criterion]
    gain = measure(y, w, n_classes) - sum(
        w[g].sum() / W * measure(y[g], w[g], n_classes) for g in groups)
    if criterion == "gain_ratio":
        fractions = np.array([w[g].sum() for g in groups]) / W
        return gain / -np.sum(fractions * np.log2(fractions))
    return gain


def binary_candidates(codes, mode, max_subset_size=None):
    """Every left set V (tuple of codes) the mode allows among the present ``codes``."""
    present = np.unique(codes[~np.isnan(codes)])
    if mode == "one_vs_rest":
        return [(c,) for c in present]
    sets = []
    for size in range(1, len(present)):
        if max_subset_size is not None and size > max_subset_size:
            continue
        sets.extend(itertools.combinations(present, size))
    return sets


def brute_force_categorical(criterion, x, y, w, n_classes, mode, max_subset_size=None,
                            max_children=None):
    """Best score over every split of the categorical column ``x`` (codes, NaN missing);
    multiway splits of more than ``max_children`` children are left out."""
    missing = np.isnan(x)
    best = -np.inf
    if mode == "multiway":
        present = np.unique(x[~missing])
        groups = [x == c for c in present]
        fits = max_children is None or len(groups) <= max_children
        targets = range(len(present)) if missing.any() else [None]
        for j in targets:
            if len(groups) < 2 or not fits:
                continue
            with_missing = [g | missing if k == j else g for k, g in enumerate(groups)]
            best = max(best, groups_value(criterion, y, w, with_missing, n_classes))
        if missing.any() and (max_children is None or len(groups) + 1 <= max_children):
            # the missing samples as a child of their own
            best = max(best, groups_value(criterion, y, w, groups + [missing], n_classes))
        return best
    for left_set in binary_candidates(x, mode, max_subset_size):
        in_set = np.isin(x, left_set)
        for missing_left in ((False, True) if missing.any() else (False,)):
            goes_left = in_set | (missing & missing_left)
            if goes_left.all():  # one present category and the missing samples: no split
                continue
            best = max(best, split_value(criterion, y, w, goes_left, n_classes))
    if missing.any() and not missing.all():  # the present categories against the missing
        best = max(best, split_value(criterion, y, w, ~missing, n_classes))
    return best


def brute_force_threshold(criterion, x, y, w, n_classes):
    """Best score over every midpoint of the numeric column ``x`` with NaN on either side,
    and the split of the non-missing values from the missing ones."""
    missing = np.isnan(x)
    values = np.unique(x[~missing])
    best = -np.inf
    for low, high in zip(values[:-1], values[1:], strict=True):
        below = x <= np.float64(low) / 2 + np.float64(high) / 2
        for missing_left in ((False, True) if missing.any() else (False,)):
            goes_left = below | (missing & missing_left)
            best = max(best, split_value(criterion, y, w, goes_left, n_classes))
    if missing.any() and not missing.all():  # every value against the missing ones
        best = max(best, split_value(criterion, y, w, ~missing, n_classes))
    return best


def root_partition_value(model, X, y, w, criterion, n_classes):
    """Score of the split jitree chose at the root, recomputed from where ``apply`` sends the
    training rows; also checks that those rows match the children's sample counts."""
    tree = model.tree_
    leaves = model.apply(X)
    children = tree.children(0)
    groups = [leaves == child for child in children]
    for child, group in zip(children, groups, strict=True):
        assert group.sum() == tree.n_node_samples[child]
    assert sum(g.sum() for g in groups) == X.shape[0]
    if len(groups) == 2 and criterion != "gain_ratio":
        return split_value(criterion, y, w, groups[0], n_classes)
    return groups_value(criterion, y, w, groups, n_classes)


def random_categorical(seed, n, m, n_classes, missing_rate, regression=False):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, m, n).astype(np.float64)
    # class depends on the category, with noise, so that splits differ in quality
    effect = rng.normal(size=m)
    if regression:
        y = effect[x.astype(int)] + rng.normal(scale=0.5, size=n)
    else:
        scores = effect[x.astype(int)][:, None] * rng.normal(size=n_classes) \
            + rng.normal(scale=1.0, size=(n, n_classes))
        y = np.argmax(scores, axis=1)
    x[rng.random(n) < missing_rate] = np.nan
    w = rng.uniform(0.5, 2.0, n) if seed % 2 else np.ones(n)
    return x, y, w


# the exact search: the category search's regularisation off
EXACT = dict(min_samples_category=0, category_smoothing=0.0, max_one_vs_rest_categories=0,
             subset_penalty=0.0)


def fit_root(x, y, w, criterion, mode, regression=False, **params):
    cls = jitree.DecisionTreeRegressor if regression else jitree.DecisionTreeClassifier
    model = cls(criterion=criterion, max_depth=1, categorical_features=[0],
                categorical_split=mode, **{**EXACT, **params})
    return model.fit(x[:, None], y, sample_weight=w)


# -- split search against the twins -------------------------------------------------------------
# twoing scores binary splits only (refused with multiway); the two-class subset ordering is
# exact for the concave impurities (gini, entropy) and squared error only
SEARCH_CASES = [(mode, criterion, n_classes)
                for mode in ("subset", "one_vs_rest", "multiway")
                for criterion, n_classes in (
                    ("gini", 2), ("entropy", 2), ("gini", 3), ("entropy", 4),
                    ("misclassification", 3), ("gain_ratio", 3), ("twoing", 3),
                    ("squared_error", 0))
                if not (mode == "multiway" and criterion == "twoing")]


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("mode, criterion, n_classes", SEARCH_CASES)
def test_categorical_root_split_is_the_best(seed, mode, criterion, n_classes):
    regression = criterion == "squared_error"
    x, y, w = random_categorical(seed, 120, 6, max(n_classes, 2), 0.15 if seed % 3 else 0.0,
                                 regression)
    model = fit_root(x, y, w, criterion, mode, regression)
    want = brute_force_categorical(criterion, x, y, w, n_classes, mode)
    got = root_partition_value(model, x[:, None], y, w, criterion, n_classes)
    assert got == pytest.approx(want, rel=1e-9, abs=1e-12)
    kind = SPLIT_MULTIWAY if mode == "multiway" else SPLIT_SUBSET
    assert model.tree_.split_kind[0] == kind


@settings(deadline=None, max_examples=80)
@given(seed=st.integers(0, 2**32 - 1), case=st.sampled_from(SEARCH_CASES),
       n=st.integers(8, 80), m=st.integers(2, 7), missing=st.sampled_from([0.0, 0.1, 0.4]))
@example(seed=358095, case=("subset", "misclassification", 3), n=8, m=2, missing=0.0)
def test_categorical_search_is_the_naive_best_under_hypothesis(seed, case, n, m, missing):
    # the scan over category runs (scan_categorical) against the enumeration of every
    # allowed split, on drawn sizes, category counts, missing rates and weights
    mode, criterion, n_classes = case
    regression = criterion == "squared_error"
    x, y, w = random_categorical(seed, n, m, max(n_classes, 2), missing, regression)
    model = fit_root(x, y, w, criterion, mode, regression)
    if model.tree_.node_count == 1:
        # no split: every allowed split leaves a side empty (a single category and no
        # missing value, or one class / constant target), or none decreases the impurity
        # (a node splits when its decrease plus machine epsilon reaches
        # min_impurity_decrease, 0 here, as in scikit-learn: an exact 0 may round either
        # way; misclassification often ties the parent, e.g. seed 358095, n 8, m 2)
        single = len(np.unique(x[~np.isnan(x)])) + bool(np.isnan(x).any()) <= 1
        if not (single or len(np.unique(y)) == 1):
            assert brute_force_categorical(criterion, x, y, w, n_classes, mode) <= 1e-12
        return
    want = brute_force_categorical(criterion, x, y, w, n_classes, mode)
    got = root_partition_value(model, x[:, None], y, w, criterion, n_classes)
    assert got == pytest.approx(want, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("max_subset_size", [1, 2])
def test_subset_size_bound(seed, max_subset_size):
    """|V| <= l: the tested set has at most l of the node's categories, and it is the best
    such split (exhaustive search, 3 classes)."""
    x, y, w = random_categorical(seed, 150, 7, 3, 0.1)
    model = fit_root(x, y, w, "gini", "subset", max_subset_size=max_subset_size)
    tree = model.tree_
    bits = tree.category_bits[tree.category_offset[0]]
    in_set = [(int(bits) >> c) & 1 for c in range(7)]
    assert 1 <= sum(in_set) <= max_subset_size
    want = brute_force_categorical("gini", x, y, w, 3, "subset", max_subset_size)
    got = root_partition_value(model, x[:, None], y, w, "gini", 3)
    assert got == pytest.approx(want, rel=1e-9)


def test_many_categories_heuristic_is_valid_and_no_worse_than_one_vs_rest():
    """Beyond max_exhaustive_categories (multiclass) the per-class orderings are searched: the
    split is a valid partition, at least as good as the best single category against the rest
    (each single category is a prefix of some ordering only in special cases, so compare with
    the best prefix of the class-0 ordering instead, which the heuristic includes)."""
    x, y, w = random_categorical(3, 600, 14, 3, 0.0)
    model = fit_root(x, y, w, "gini", "subset")
    got = root_partition_value(model, x[:, None], y, w, "gini", 3)
    codes = np.arange(14)
    fractions = np.array([np.average(y[x == c] == 0, weights=w[x == c]) for c in codes])
    order = codes[np.argsort(fractions, kind="stable")]
    best_prefix = max(split_value("gini", y, w, np.isin(x, order[:t]), 3) for t in range(1, 14))
    assert got >= best_prefix - 1e-12
    assert got <= brute_force_categorical("gini", x, y, w, 3, "one_vs_rest") + 1.0  # sanity


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("criterion", ["gini", "entropy", "squared_error"])
def test_numeric_missing_values_root_split_is_the_best(seed, criterion):
    rng = np.random.default_rng(seed)
    n = 90
    x = np.round(rng.normal(size=n), 1)
    regression = criterion == "squared_error"
    y = (x + rng.normal(scale=0.7, size=n) > 0).astype(int)
    if regression:
        y = x + rng.normal(size=n)
    x[rng.random(n) < 0.2] = np.nan
    if seed % 2:  # missingness that tells the class
        y = np.where(np.isnan(x), 1, y)
    w = rng.uniform(0.5, 2.0, n) if seed % 3 == 0 else np.ones(n)
    cls = jitree.DecisionTreeRegressor if regression else jitree.DecisionTreeClassifier
    model = cls(criterion=criterion, max_depth=1).fit(x[:, None], y, sample_weight=w)
    want = brute_force_threshold(criterion, x, y, w, 2)
    got = root_partition_value(model, x[:, None], y, w, criterion, 2)
    assert got == pytest.approx(want, rel=1e-9, abs=1e-12)
    assert model.tree_.split_kind[0] == SPLIT_THRESHOLD


# -- missing values and unseen categories at predict --------------------------------------------
def test_missing_values_learned_direction():
    """Rows with a missing value are all of class 1 in training: the split learns to send
    missing values to the class-1 side."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=400)
    y = (x > 0.5).astype(int)
    x[rng.random(400) < 0.2] = np.nan
    y[np.isnan(x)] = 1
    model = jitree.DecisionTreeClassifier(max_depth=1).fit(x[:, None], y)
    tree = model.tree_
    heavier_left = (tree.weighted_n_node_samples[tree.children_left[0]]
                    >= tree.weighted_n_node_samples[tree.children_right[0]])
    assert heavier_left  # x <= 0.5 is the bigger side...
    assert tree.missing_left[0] == 0  # ...but missing values were learned to go right
    assert model.predict(np.array([[np.nan]]))[0] == 1


def test_missing_at_predict_without_missing_in_training_goes_to_heavier_child():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(500, 2))
    y = (x[:, 0] > 0.8).astype(int)  # the left side (x <= 0.8) holds most samples
    model = jitree.DecisionTreeClassifier(max_depth=1).fit(x, y)
    tree = model.tree_
    assert tree.missing_left[0] == 1
    assert model.apply(np.array([[np.nan, 0.0]]))[0] == tree.children_left[0]
    y = (x[:, 0] < -0.8).astype(int)  # now the right side is heavier
    model = jitree.DecisionTreeClassifier(max_depth=1).fit(x, y)
    assert model.tree_.missing_left[0] == 0
    assert model.apply(np.array([[np.nan, 0.0]]))[0] == model.tree_.children_right[0]


def test_unseen_and_missing_categories_follow_the_missing_rule():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(2)
    color = rng.choice(["red", "green", "blue", "black"], 400, p=[0.4, 0.3, 0.2, 0.1])
    y = np.isin(color, ["red", "black"]).astype(int)
    frame = pd.DataFrame({"color": pd.Categorical(color)})
    model = jitree.DecisionTreeClassifier(max_depth=1).fit(frame, y)
    tree = model.tree_
    assert tree.split_kind[0] == SPLIT_SUBSET
    assert model.score(frame, y) == 1.0
    heavier = (tree.children_left[0] if tree.missing_left[0] else tree.children_right[0])
    left_weight = tree.weighted_n_node_samples[tree.children_left[0]]
    right_weight = tree.weighted_n_node_samples[tree.children_right[0]]
    assert tree.missing_left[0] == (left_weight >= right_weight)
    unseen = pd.DataFrame({"color": ["purple", None]})
    np.testing.assert_array_equal(model.apply(unseen), [heavier, heavier])


def test_category_absent_from_a_node_goes_to_heavier_child():
    """A category seen in training but absent at a deeper node is routed to that node's
    heavier child, never an error."""
    rng = np.random.default_rng(3)
    n = 600
    a = rng.integers(0, 2, n)
    c = np.where(a == 0, rng.integers(0, 3, n), rng.integers(3, 6, n)).astype(float)
    y = ((c == 1) | (c == 4)).astype(int) ^ (rng.random(n) < 0.05)
    X = np.column_stack([a, c])
    model = jitree.DecisionTreeClassifier(max_depth=3, categorical_features=[1]).fit(X, y)
    rows = np.array([[0.0, 4.0], [1.0, 1.0]])  # category of the other branch
    assert model.predict(rows).shape == (2,)
    assert np.isfinite(model.predict_proba(rows)).all()


# -- ordinal -------------------------------------------------------------------------------------
def test_ordinal_features_use_threshold_tests_on_level_codes():
    pd = pytest.importorskip("pandas")
    levels = ["low", "medium", "high", "very high"]
    rng = np.random.default_rng(4)
    size = rng.choice(levels, 300)
    y = np.isin(size, ["high", "very high"]).astype(int)
    frame = pd.DataFrame({"size": pd.Categorical(size, categories=levels, ordered=True)})
    model = jitree.DecisionTreeClassifier(max_depth=1).fit(frame, y)
    tree = model.tree_
    assert tree.feature_kind[0] == jitree.model.tree.FEATURE_ORDINAL
    assert tree.split_kind[0] == SPLIT_THRESHOLD
    assert tree.threshold[0] == 1.5  # levels 0, 1 (low, medium) | 2, 3
    assert model.score(frame, y) == 1.0
    # declared on a NumPy array of numbers: levels are the sorted values
    X = np.select([size == v for v in levels], [10, 20, 30, 40])[:, None]
    model = jitree.DecisionTreeClassifier(max_depth=1, ordinal_features=[0]).fit(X, y)
    assert list(model.categories_[0]) == [10, 20, 30, 40]
    assert model.score(X, y) == 1.0


# -- reference: PlayGolf ID3 ---------------------------------------------------------------------
def test_playgolf_id3_tree():
    pd = pytest.importorskip("pandas")
    frame = pd.read_csv(DATA / "playgolf.csv")
    X = frame.drop(columns="play")
    model = jitree.DecisionTreeClassifier(
        criterion="entropy", categorical_split="multiway",
        categorical_features=list(X.columns)).fit(X, frame["play"])
    tree = model.tree_
    assert list(model.feature_names_in_[tree.feature[[0]]]) == ["outlook"]
    assert tree.split_kind[0] == SPLIT_MULTIWAY
    assert tree.impurity[0] == pytest.approx(0.9403, abs=5e-5)
    outlook = list(model.categories_[0])
    overcast = tree.children_left[0] + tree.multiway_slot[tree.category_offset[0]
                                                          + outlook.index("Overcast")]
    assert tree.children_left[overcast] == -1  # a leaf...
    assert tree.value[overcast, list(model.classes_).index("Yes")] == 4  # ...of 4 pure Yes
    assert tree.impurity[overcast] == 0.0
    assert model.score(X, frame["play"]) == 1.0
    # the root's information gain is the reference 0.2467 bits
    children = tree.children(0)
    w = tree.weighted_n_node_samples
    gain = tree.impurity[0] - sum(w[c] / w[0] * tree.impurity[c] for c in children)
    assert gain == pytest.approx(0.2467, abs=5e-5)


# -- whole trees: invariants with categories and missing values ----------------------------------
def mixed_frame(seed, n=800):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(seed)
    number = rng.normal(size=n)
    number[rng.random(n) < 0.1] = np.nan
    city = rng.choice([f"city{k}" for k in range(12)], n)
    grade = rng.integers(0, 5, n)
    y = ((np.nan_to_num(number) > 0) ^ np.isin(city, ["city1", "city3", "city7"])
         ^ (grade > 2)).astype(int)
    city = np.where(rng.random(n) < 0.05, None, city)
    frame = pd.DataFrame({
        "number": number,
        "city": pd.Categorical(city),
        "grade": pd.Categorical(grade, categories=range(5), ordered=True)})
    return frame, y


@pytest.mark.parametrize("mode", ["subset", "one_vs_rest", "multiway"])
def test_full_trees_partition_the_samples(mode):
    frame, y = mixed_frame(5)
    criterion = "entropy" if mode == "multiway" else "gini"
    model = jitree.DecisionTreeClassifier(criterion=criterion, categorical_split=mode,
                                          random_state=0).fit(frame, y)
    tree = model.tree_
    leaves = model.apply(frame)
    assert model.score(frame, y) == 1.0  # no duplicate rows with different labels
    # every node's training count equals the rows that reach it at predict
    counts = np.bincount(leaves, minlength=tree.node_count)
    leaf = tree.children_left == -1
    np.testing.assert_array_equal(counts[leaf], tree.n_node_samples[leaf])
    for node in np.flatnonzero(~leaf):
        assert sum(tree.n_node_samples[c] for c in tree.children(node)) \
            == tree.n_node_samples[node]
    proba = model.predict_proba(frame)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # decision_path ends at the leaf apply gives
    path = model.decision_path(frame)
    assert path.shape == (len(frame), tree.node_count)
    last = [path.indices[path.indptr[i + 1] - 1] for i in range(len(frame))]
    np.testing.assert_array_equal(last, leaves)


def test_results_do_not_depend_on_n_jobs_or_column_order():
    frame, y = mixed_frame(6)
    one = jitree.DecisionTreeClassifier(n_jobs=1, max_features=2, random_state=3).fit(frame, y)
    two = jitree.DecisionTreeClassifier(n_jobs=2, max_features=2, random_state=3).fit(frame, y)
    for name, values in one.tree_.arrays().items():
        np.testing.assert_array_equal(values, two.tree_.arrays()[name], err_msg=name)
    reordered = frame[["grade", "number", "city"]]
    np.testing.assert_array_equal(one.predict(reordered), one.predict(frame))


def test_regression_with_categories_and_missing_values():
    frame, y = mixed_frame(7)
    target = y + frame["number"].fillna(0).to_numpy()
    model = jitree.DecisionTreeRegressor(max_depth=6).fit(frame, target)
    assert model.score(frame, target) > 0.5
    assert np.isfinite(model.predict(frame)).all()


def test_forest_with_categories_and_missing_values():
    frame, y = mixed_frame(8)
    # noise-free XOR labels: the exact search (the default one's penalty gives up a little
    # training accuracy here: 0.89)
    forest = jitree.RandomForestClassifier(n_estimators=5, random_state=0, n_jobs=2, **EXACT)
    forest.fit(frame, y)
    proba = forest.predict_proba(frame)
    mean = np.mean([tree.predict_proba(frame) for tree in forest.estimators_], axis=0)
    np.testing.assert_allclose(proba, mean, rtol=1e-12)
    assert forest.score(frame, y) > 0.9


def test_numeric_forest_with_missing_values_at_predict():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(300, 4)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    forest = jitree.RandomForestClassifier(n_estimators=4, random_state=0).fit(X, y)
    X[::5, 0] = np.nan
    proba = forest.predict_proba(X)
    mean = np.mean([tree.predict_proba(X) for tree in forest.estimators_], axis=0)
    np.testing.assert_allclose(proba, mean, rtol=1e-12)


# -- bad input -----------------------------------------------------------------------------------
def test_bad_categorical_parameters():
    X = np.array([[0.0], [1.0], [2.0], [1.0]])
    y = [0, 1, 0, 1]
    with pytest.raises(ValueError, match="categorical_split"):
        jitree.DecisionTreeClassifier(categorical_split="binary",
                                      categorical_features=[0]).fit(X, y)
    with pytest.raises(ValueError, match="multiway"):
        jitree.DecisionTreeClassifier(criterion="twoing", categorical_split="multiway",
                                      categorical_features=[0]).fit(X, y)
    with pytest.raises(ValueError, match="max_exhaustive_categories"):
        jitree.DecisionTreeClassifier(max_exhaustive_categories=40,
                                      categorical_features=[0]).fit(X, y)
    with pytest.raises(ValueError, match="max_subset_size"):
        jitree.DecisionTreeClassifier(max_subset_size=0, categorical_features=[0]).fit(X, y)
    with pytest.raises(ValueError, match="both"):
        jitree.DecisionTreeClassifier(categorical_features=[0],
                                      ordinal_features=[0]).fit(X, y)
    with pytest.raises(ValueError, match="infinity"):
        jitree.DecisionTreeClassifier().fit(np.array([[np.inf], [0.0]]), [0, 1])


def test_category_column_type_change_at_predict_is_refused():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"color": pd.Categorical(["a", "b", "a", "c"]), "n": [1., 2, 3, 4]})
    model = jitree.DecisionTreeClassifier().fit(frame, [0, 1, 0, 1])
    with pytest.raises(TypeError, match="color"):
        model.predict(pd.DataFrame({"color": [1.0, 2.0], "n": [1.0, 2.0]}))


def test_users_njit_code_walks_every_node_kind():
    """leaf_of_row_any, called from a user's own @njit function on the Tree arrays, reaches
    the leaves apply reports (categories, ordinal levels, missing values)."""
    from numba import njit

    from jitree.kernels.predict import leaf_of_row_any

    @njit
    def leaves_of(X, arrays):
        out = np.empty(X.shape[0], dtype=np.int64)
        for i in range(X.shape[0]):
            out[i] = leaf_of_row_any(X, i, arrays)
        return out

    frame, y = mixed_frame(10, n=300)
    for mode in ("subset", "multiway"):
        model = jitree.DecisionTreeClassifier(categorical_split=mode, criterion="entropy",
                                              max_depth=6).fit(frame, y)
        X = model._feature_encoder().transform(frame)
        np.testing.assert_array_equal(leaves_of(X, model.tree_.walk_arrays()),
                                      model.apply(frame))


def test_missing_against_values_split_is_printed_readably():
    """A node that separates the missing values from all others prints as such."""
    x = np.array([0.1, 0.2, 0.3, 0.4, np.nan, np.nan, np.nan, 0.5])
    y = np.array([0, 0, 0, 0, 1, 1, 1, 0])
    model = jitree.DecisionTreeClassifier().fit(x[:, None], y)
    text = jitree.export_text(model, feature_names=["x"])
    assert "x is not missing" in text and "x is missing" in text
    assert "1797" not in text
    conditions = [str(c) for rule in jitree.rules(model) for c in rule.conditions]
    assert {"feature_0 is missing", "feature_0 is not missing"} <= set(conditions)
    np.testing.assert_array_equal(model.predict(np.array([[np.nan], [7.0]])), [1, 0])


def test_object_array_with_nan_in_a_categorical_column():
    X = np.array([["a", 1.0], [np.nan, 2.0], ["b", 3.0], ["a", np.nan]], dtype=object)
    model = jitree.DecisionTreeClassifier(categorical_features=[0]).fit(X, [0, 1, 1, 0])
    assert model.predict(X).shape == (4,)


@pytest.mark.parametrize("regression", [False, True])
def test_multiway_nodes_of_two_children_deep_in_the_tree(regression):
    """Multiway nodes where only two categories are present are partitioned like binary
    ones; the tree still partitions the samples exactly."""
    rng = np.random.default_rng(0)
    n = 2000
    a = rng.integers(0, 5, n)
    b = (a + rng.integers(0, 2, n)) % 3
    c = rng.integers(0, 9, n)
    X = np.column_stack([a, b, c]).astype(float)
    target = a + rng.normal(size=n) + (c == 3) * 2
    if regression:
        model = jitree.DecisionTreeRegressor(max_depth=6, min_samples_leaf=5,
                                             categorical_split="multiway",
                                             categorical_features=[0, 1, 2])
    else:
        target = (target > 2.5).astype(int)
        model = jitree.DecisionTreeClassifier(criterion="entropy", max_depth=6,
                                              min_samples_leaf=5, categorical_split="multiway",
                                              categorical_features=[0, 1, 2])
    model.fit(X, target)
    tree = model.tree_
    two_children = [node for node in range(tree.node_count)
                    if tree.split_kind[node] == SPLIT_MULTIWAY and tree.n_children(node) == 2
                    and min(tree.n_node_samples[tree.children(node)]) >= 10]
    assert two_children  # the case: children open to splitting, so partitioned
    counts = np.bincount(model.apply(X), minlength=tree.node_count)
    leaf = tree.children_left == -1
    np.testing.assert_array_equal(counts[leaf], tree.n_node_samples[leaf])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("max_leaf_nodes", [2, 3, 4, 5, 7])
def test_best_first_multiway_split_fits_the_leaf_budget(seed, max_leaf_nodes):
    """Best-first growth: a multiway split of more children than the leaf budget has room
    for is not made; the node takes its best split that fits (over every feature: a
    multiway split of few enough children, or a threshold), by the enumeration twins."""
    rng = np.random.default_rng(seed)
    n = 150
    wide = rng.integers(0, 6, n).astype(float)    # 6 children: the best split when it fits
    narrow = rng.integers(0, 3, n).astype(float)  # 3 children
    numeric = rng.normal(size=n)                  # 2 children
    score = 1.5 * (wide % 3) + 0.8 * narrow + 0.6 * numeric + rng.normal(scale=1.0, size=n)
    y = np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))
    narrow[rng.random(n) < 0.1] = np.nan
    w = np.ones(n)
    X = np.column_stack([wide, narrow, numeric])
    model = jitree.DecisionTreeClassifier(
        criterion="entropy", max_leaf_nodes=max_leaf_nodes, max_depth=1,
        categorical_features=[0, 1], categorical_split="multiway", **EXACT).fit(X, y)
    tree = model.tree_
    assert (tree.children_left == -1).sum() <= max_leaf_nodes
    assert brute_force_categorical("entropy", wide, y, w, 3, "multiway") > max(
        brute_force_categorical("entropy", narrow, y, w, 3, "multiway"),
        brute_force_threshold("entropy", numeric, y, w, 3))  # the case: wide wins unbounded
    want = max(brute_force_categorical("entropy", wide, y, w, 3, "multiway",
                                       max_children=max_leaf_nodes),
               brute_force_categorical("entropy", narrow, y, w, 3, "multiway",
                                       max_children=max_leaf_nodes),
               brute_force_threshold("entropy", numeric, y, w, 3))
    got = root_partition_value(model, X, y, w, "entropy", 3)
    assert got == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_best_first_multiway_tree_uses_its_leaf_budget():
    """Nodes whose best split is a 40-way one still split when the budget is short of
    leaves: the tree grows to its max_leaf_nodes (it stopped at 2 leaves when such a node
    stayed a leaf)."""
    rng = np.random.default_rng(1)
    n = 8000
    code = rng.integers(0, 40, n)
    x1 = rng.normal(size=n)
    X = np.column_stack([code, x1, rng.normal(size=n)]).astype(float)
    y = (rng.random(n) < 1 / (1 + np.exp(-(rng.normal(size=40)[code] + 2 * x1)))).astype(int)
    train = slice(0, 6000)
    params = dict(criterion="entropy", categorical_features=[0], categorical_split="multiway")
    model = jitree.DecisionTreeClassifier(max_leaf_nodes=16, **params).fit(X[train], y[train])
    assert (model.tree_.children_left == -1).sum() == 16
    stump = jitree.DecisionTreeClassifier(max_depth=2, **params).fit(X[train], y[train])
    # the case: the root is a threshold, and a child's best split is 40-way
    assert stump.tree_.feature[0] == 1
    assert 40 in [stump.tree_.n_children(c) for c in stump.tree_.children(0)]


def test_categorical_column_all_missing_at_fit_saves_and_loads(tmp_path):
    X = np.column_stack([np.full(6, np.nan), np.arange(6.0)])
    model = jitree.DecisionTreeClassifier(categorical_features=[0]).fit(X, [0, 0, 0, 1, 1, 1])
    assert len(model.categories_[0]) == 0
    jitree.save(model, tmp_path / "m.jitree")
    loaded = jitree.load(tmp_path / "m.jitree")
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_pruning_path_alphas_are_never_negative():
    """A split of zero gain (weighted misclassification) rounds to an effective alpha of
    -7e-17; the path reports 0 and every path alpha is a valid ccp_alpha."""
    X = np.array([[1.0], [3.0], [1.0]])
    y = [1, 1, 0]
    w = [0.7, 0.1, 0.1]
    model = jitree.DecisionTreeClassifier(criterion="misclassification")
    alphas = model.cost_complexity_pruning_path(X, y, sample_weight=w).ccp_alphas
    assert (alphas >= 0).all()
    for alpha in alphas:
        jitree.DecisionTreeClassifier(criterion="misclassification", ccp_alpha=alpha).fit(
            X, y, sample_weight=w)


@settings(deadline=None, max_examples=150)
@given(keys=st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, -1.0, np.inf, np.nan]), max_size=90),
       extra=st.integers(0, 3))
def test_category_order_is_numpys_stable_argsort(keys, extra):
    # the subset search orders its runs without allocating: the order of NumPy's stable
    # argsort (ties in index order, NaN last), also with room to spare in the arrays
    q = len(keys)
    key = np.array(keys + [7.0] * extra)
    out = np.full(q + extra, -1, dtype=np.int64)
    stable_argsort(key, q, out, np.empty(q + extra, dtype=np.int64))
    np.testing.assert_array_equal(out[:q], np.argsort(np.array(keys), kind="mergesort"))
