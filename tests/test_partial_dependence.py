"""jitree.partial_dependence: the recursion kernels against a naive twin (a plain-Python
weighted walk), against scikit-learn's ``method="recursion"`` on the same trees, ICE
invariants, shapes, categorical grids, bad inputs and the plot helper."""

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitree
from jitree.model.dependence import _mquantiles

# -- the naive twin ------------------------------------------------------------------------


def _child(tree, node, x):
    """The child of ``node`` that value ``x`` goes to (jitree.Tree's docstring, in Python)."""
    kind = tree.split_kind[node]
    left, right = int(tree.children_left[node]), int(tree.children_right[node])
    missing = left if tree.missing_left[node] else right
    if kind == jitree.model.tree.SPLIT_THRESHOLD:
        if np.isnan(x):
            return missing
        return left if x <= tree.threshold[node] else right
    m = int(tree.n_categories[tree.feature[node]])
    code = int(x) if (not np.isnan(x) and 0 <= x < m and int(x) == x) else -1
    offset = int(tree.category_offset[node])
    if kind == jitree.model.tree.SPLIT_SUBSET:
        if code < 0:
            return missing
        word = int(tree.category_bits[offset + code // 64])
        return left if (word >> (code % 64)) & 1 else right
    return left + int(tree.multiway_slot[offset + (m if code < 0 else code)])


def naive_partial_dependence(tree, table, point):
    """Recursion-method partial dependence of one tree at ``point`` ({feature: value}):
    a grid feature's node follows the value's child, another node all its children
    weighted by their share of its training weight."""
    weight = tree.weighted_n_node_samples

    def walk(node):
        if tree.children_left[node] == jitree.TREE_LEAF:
            return table[node]
        feature = int(tree.feature[node])
        if feature in point:
            return walk(_child(tree, node, point[feature]))
        children = tree.children(node)
        total = weight[node]
        return sum((weight[c] / total if total > 0 else 1.0 / len(children)) * walk(c)
                   for c in children)

    return walk(0)


def _tables(model):
    """(tree, node table) of each tree of a model, and the output columns."""
    estimators = model.estimators_ if hasattr(model, "estimators_") else [model]
    classifier = hasattr(model, "classes_")
    pairs = [(e.tree_, e.tree_.probability_table() if classifier else e.tree_.value)
             for e in estimators]
    if not classifier:
        return pairs, [0]
    return pairs, [1] if len(model.classes_) == 2 else list(range(len(model.classes_)))


def naive_average(model, result):
    """The naive twin's partial dependence at every point of ``result``'s grid."""
    pairs, outputs = _tables(model)
    axes = [np.arange(len(values)) if categorical else np.asarray(values, dtype=float)
            for values, categorical in zip(result.grid_values, result.is_categorical,
                                           strict=True)]
    shape = tuple(len(axis) for axis in axes)
    out = np.empty((len(outputs),) + shape)
    for index in np.ndindex(*shape):
        point = {f: float(axis[i]) for f, axis, i in zip(result.features, axes, index,
                                                           strict=True)}
        value = np.mean([naive_partial_dependence(tree, table, point)
                         for tree, table in pairs], axis=0)
        out[(slice(None),) + index] = value[outputs]
    return out


def _data(seed, n_rows, missing, n_categories=4):
    """Two numeric columns and a categorical one (codes), some values missing."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(size=n_rows), rng.integers(0, 6, n_rows) * 0.5,
                         rng.integers(0, n_categories, n_rows)]).astype(np.float64)
    y = X[:, 0] + (X[:, 2] == 1) - 0.5 * X[:, 1] + 0.3 * rng.normal(size=n_rows)
    if missing:
        X[rng.random(X.shape) < missing] = np.nan
    return X, y


_MODELS = {
    "tree_reg": lambda split: jitree.DecisionTreeRegressor(
        max_depth=5, categorical_features=[2], categorical_split=split),
    "tree_clf": lambda split: jitree.DecisionTreeClassifier(
        max_depth=5, categorical_features=[2], categorical_split=split),
    "forest_reg": lambda split: jitree.ExtraTreesRegressor(
        n_estimators=3, max_depth=4, categorical_features=[2], categorical_split=split,
        random_state=0),
    "forest_clf": lambda split: jitree.RandomForestClassifier(
        n_estimators=3, max_depth=4, categorical_features=[2], categorical_split=split,
        random_state=0),
}


def _labels(y, kind, n_classes):
    if kind.endswith("reg"):
        return y
    return np.digitize(y, np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1]))


@settings(max_examples=30)
@given(seed=st.integers(0, 10_000), n_rows=st.integers(12, 60),
       missing=st.sampled_from([0.0, 0.15]),
       split=st.sampled_from(["subset", "one_vs_rest", "multiway"]),
       kind=st.sampled_from(sorted(_MODELS)), n_classes=st.sampled_from([2, 3]),
       features=st.sampled_from([0, 1, 2, (0, 2), (2, 1), (0, 1)]),
       nan_in_grid=st.booleans())
def test_recursion_equals_naive_twin(seed, n_rows, missing, split, kind, n_classes, features,
                                     nan_in_grid):
    X, y = _data(seed, n_rows, missing)
    y = _labels(y, kind, n_classes)
    model = _MODELS[kind](split).fit(X, y)
    grid = None
    if nan_in_grid and features in (0, 1):  # a missing grid value: the general walk
        grid = [-1.0, 0.0, np.nan, 0.75, 2.0]
    result = jitree.partial_dependence(model, X, features, grid=grid, grid_resolution=6)
    expected = naive_average(model, result)
    assert result.average.shape == expected.shape
    # the kernels group the same sums differently: equal to rounding
    np.testing.assert_allclose(result.average, expected, rtol=1e-12, atol=1e-12)


def test_both_walks_agree_on_threshold_trees():
    """The interval sweep (threshold tests, no NaN in the grid) and the per-point walk (any
    grid) give the same partial dependence: a NaN appended to the grid switches walks."""
    X, y = _data(3, 300, 0.1)
    model = jitree.RandomForestRegressor(n_estimators=8, max_depth=6, random_state=0)
    model.fit(X[:, :2], y)
    grid = np.linspace(-2.0, 2.0, 23)
    swept = jitree.partial_dependence(model, X[:, :2], 0, grid=grid).average
    walked = jitree.partial_dependence(model, X[:, :2], 0,
                                       grid=np.append(grid, np.nan)).average
    np.testing.assert_allclose(walked[:, :-1], swept, rtol=1e-13, atol=1e-13)
    pair = jitree.partial_dependence(model, X[:, :2], (0, 1), grid=(grid[::-1], [1.0, 0.0]))
    pair_walked = jitree.partial_dependence(model, X[:, :2], (0, 1),
                                            grid=(grid[::-1], [1.0, 0.0, np.nan]))
    np.testing.assert_allclose(pair_walked.average[:, :, :2], pair.average, rtol=1e-13,
                               atol=1e-13)
    # the missing value goes where the trees send NaN
    assert np.isfinite(walked[:, -1]).all()
    expected_nan = naive_average(model, jitree.partial_dependence(
        model, X[:, :2], 0, grid=[np.nan]))
    np.testing.assert_allclose(walked[:, -1:], expected_nan, rtol=1e-12, atol=1e-12)


def test_naive_twin_on_converted_sklearn_classifier_forest():
    ensemble = pytest.importorskip("sklearn.ensemble")
    X, y = _data(5, 200, 0.0)
    labels = _labels(y, "clf", 3)
    fitted = ensemble.RandomForestClassifier(n_estimators=5, max_depth=5, random_state=0)
    model = jitree.from_sklearn(fitted.fit(X, labels))
    result = jitree.partial_dependence(model, X, (0, 1), grid_resolution=7)
    assert result.average.shape == (3, 7, len(np.unique(X[:, 1])))
    np.testing.assert_allclose(result.average, naive_average(model, result), rtol=1e-12,
                               atol=1e-12)


# -- against scikit-learn -------------------------------------------------------------------


def _regression_data(n_rows=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 4))
    X[:, 3] = np.round(X[:, 3] * 2) / 2  # few distinct values: the grid is its unique values
    y = X[:, 0] + np.sin(2 * X[:, 1]) + X[:, 0] * X[:, 2] + 0.5 * X[:, 3] \
        + 0.2 * rng.normal(size=n_rows)
    return X, y


@pytest.mark.parametrize("estimator", ["tree", "forest"])
@pytest.mark.parametrize("features, resolution, percentiles", [
    (0, 100, (0.05, 0.95)), (1, 17, (0.1, 0.8)), (3, 50, (0.05, 0.95)),
    ((0, 2), 12, (0.05, 0.95)), ((3, 1), 9, (0.2, 0.9))])
def test_equals_sklearn_recursion(estimator, features, resolution, percentiles):
    inspection = pytest.importorskip("sklearn.inspection")
    ensemble = pytest.importorskip("sklearn.ensemble")
    tree = pytest.importorskip("sklearn.tree")
    X, y = _regression_data()
    fitted = (tree.DecisionTreeRegressor(max_depth=8, random_state=0) if estimator == "tree"
              else ensemble.RandomForestRegressor(n_estimators=15, max_depth=7,
                                                  random_state=0)).fit(X, y)
    model = jitree.from_sklearn(fitted)
    ours = jitree.partial_dependence(model, X, features, grid_resolution=resolution,
                                     percentiles=percentiles)
    theirs = inspection.partial_dependence(
        fitted, X, [features], method="recursion", grid_resolution=resolution,
        percentiles=percentiles)
    assert len(ours.grid_values) == len(theirs["grid_values"])
    for mine, reference in zip(ours.grid_values, theirs["grid_values"], strict=True):
        np.testing.assert_allclose(mine, reference, rtol=0, atol=1e-12)
    assert ours.average.shape == theirs["average"].shape
    # same trees (thresholds converted to compare float64 values as scikit-learn compares
    # their float32 roundings) and the same weighted sums, grouped differently: 1e-12
    np.testing.assert_allclose(ours.average, theirs["average"], rtol=0, atol=1e-12)


def test_ice_equals_sklearn_brute():
    inspection = pytest.importorskip("sklearn.inspection")
    ensemble = pytest.importorskip("sklearn.ensemble")
    X, y = _regression_data(200)
    fitted = ensemble.RandomForestRegressor(n_estimators=5, max_depth=6, random_state=0)
    model = jitree.from_sklearn(fitted.fit(X, y))
    ours = jitree.partial_dependence(model, X, (0, 3), grid_resolution=8, kind="both")
    theirs = inspection.partial_dependence(fitted, X, [(0, 3)], grid_resolution=8,
                                           kind="both", method="brute")
    assert ours.individual.shape == theirs["individual"].shape
    assert ours.individual.shape[:3] == (1, 200, 8)
    # the same trees on the same rows: the same leaves, then means in another order
    np.testing.assert_allclose(ours.individual, theirs["individual"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.average, theirs["average"], rtol=0, atol=1e-12)


def test_grid_percentiles_are_scipy_mquantiles():
    mstats = pytest.importorskip("scipy.stats.mstats")
    rng = np.random.default_rng(1)
    for n in (1, 2, 3, 10, 101):
        values = rng.normal(size=n)
        for probabilities in ((0.05, 0.95), (0.0, 1.0), (0.3, 0.31)):
            np.testing.assert_allclose(_mquantiles(values, probabilities),
                                       mstats.mquantiles(values, prob=probabilities),
                                       rtol=1e-15, atol=0)


# -- ICE and invariants ----------------------------------------------------------------------


def _layered_tree(X, thresholds, values):
    """A regression Tree splitting first on feature 1 (not a grid feature), then only on
    feature 0, with node weights counted on the rows of X."""
    t1, a, b, c = thresholds
    feature = [1, 0, 0, -2, -2, 0, -2, -2, -2]
    threshold = [t1, a, b, -2.0, -2.0, c, -2.0, -2.0, -2.0]
    left = [1, 3, 5, -1, -1, 7, -1, -1, -1]
    right = [2, 4, 6, -1, -1, 8, -1, -1, -1]
    counts = np.zeros(9)
    for row in X:
        node = 0
        counts[node] += 1
        while left[node] != -1:
            node = left[node] if row[feature[node]] <= threshold[node] else right[node]
            counts[node] += 1
    return jitree.Tree(2, 0, feature, threshold, left, right,
                       np.asarray(values, dtype=float)[:, None], np.zeros(9),
                       counts.astype(np.int64), counts)


@settings(max_examples=25)
@given(seed=st.integers(0, 10_000), n_rows=st.integers(4, 40),
       thresholds=st.tuples(*[st.floats(-1.5, 1.5) for _ in range(3)]),
       values=st.lists(st.floats(-10, 10), min_size=9, max_size=9))
def test_ice_mean_equals_recursion_when_grid_splits_come_last(seed, n_rows, thresholds,
                                                              values):
    """When no node on another feature lies below a node on the grid feature, every row of
    the training data reaches the grid feature's tests in the proportions of the node
    weights, whatever the grid value: the mean of the ICE curves over those rows is the
    recursion's partial dependence."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 2))
    X[: n_rows // 2, 1] -= 3.0  # rows on both sides of feature 1's test at 0
    model = jitree.DecisionTreeRegressor._from_tree(
        _layered_tree(X, (0.0,) + thresholds, values))
    grid = np.linspace(-2, 2, 9)
    recursion = jitree.partial_dependence(model, X, 0, grid=grid).average
    ice = jitree.partial_dependence(model, X, 0, grid=grid, kind="individual").individual
    np.testing.assert_allclose(ice.mean(axis=1), recursion, rtol=1e-12, atol=1e-12)


def test_single_feature_tree_ice_curves_are_the_prediction():
    """A tree that splits only on the grid feature predicts the same for every row with it
    set: each ICE curve, their mean and the recursion are the prediction at the grid."""
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(size=100), np.full(100, 2.0), rng.normal(size=100)])
    model = jitree.DecisionTreeRegressor(max_depth=4).fit(X[:, :2], X[:, 0] ** 2)
    result = jitree.partial_dependence(model, X[:, :2], 0, grid_resolution=15, kind="both")
    expected = model.predict(np.column_stack([result.grid_values[0], np.full(15, 2.0)]))
    np.testing.assert_array_equal(result.individual[0], np.tile(expected, (100, 1)))
    recursion = jitree.partial_dependence(model, X[:, :2], 0, grid_resolution=15).average
    np.testing.assert_allclose(recursion[0], expected, rtol=1e-14)


@pytest.mark.parametrize("n_classes, n_outputs", [(0, 1), (2, 1), (4, 4)])
def test_shapes_and_both(n_classes, n_outputs):
    X, y = _data(2, 120, 0.1)
    if n_classes:
        model = jitree.ExtraTreesClassifier(n_estimators=4, random_state=0,
                                            categorical_features=[2])
        model.fit(X, _labels(y, "clf", n_classes))
    else:
        model = jitree.RandomForestRegressor(n_estimators=4, random_state=0,
                                             categorical_features=[2]).fit(X, y)
    one = jitree.partial_dependence(model, X, 0, grid_resolution=11, kind="both")
    assert one.average.shape == (n_outputs, 11)
    assert one.individual.shape == (n_outputs, 120, 11)
    # "both": the average is the ICE curves' mean (as scikit-learn), the brute-force one
    np.testing.assert_allclose(one.average, one.individual.mean(axis=1), rtol=1e-14)
    brute = jitree.partial_dependence(model, X, 0, grid_resolution=11, method="brute")
    np.testing.assert_allclose(brute.average, one.average, rtol=1e-14)
    pair = jitree.partial_dependence(model, X, (2, 0), grid_resolution=5, kind="individual")
    assert "average" not in pair
    assert pair.individual.shape == (n_outputs, 120, 4, 5)
    assert pair.is_categorical == [True, False]
    assert pair.features == (2, 0)
    if n_classes:
        # ICE of every class sums to 1 across the classes of a multiclass model
        if n_classes > 2:
            np.testing.assert_allclose(pair.individual.sum(axis=0), 1.0, rtol=1e-12)
        assert list(pair.output_names) == list(model.classes_[-n_outputs:])
    # the ICE curves are the model's own predictions with the features set
    rows = X.copy()
    rows[:, 2] = 3.0
    rows[:, 0] = pair.grid_values[1][4]
    predicted = model.predict_proba(rows)[:, -n_outputs:] if n_classes \
        else model.predict(rows)[:, None]
    np.testing.assert_array_equal(pair.individual[:, :, 3, 4], predicted.T)


def test_categorical_dataframe_by_name():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    n = 150
    frame = pd.DataFrame({
        "size": rng.normal(size=n),
        "color": pd.Categorical(rng.choice(["red", "green", "blue"], n)),
        "weight": rng.normal(size=n)})
    frame.loc[rng.random(n) < 0.1, "size"] = np.nan
    y = np.where(frame["color"] == "red", "a", np.where(frame["size"] > 0, "b", "c"))
    model = jitree.RandomForestClassifier(n_estimators=5, random_state=0).fit(frame, y)
    by_name = jitree.partial_dependence(model, frame, ("color", "size"), grid_resolution=6,
                                        kind="both")
    by_index = jitree.partial_dependence(model, frame, (1, 0), grid_resolution=6,
                                         kind="both")
    np.testing.assert_array_equal(by_name.average, by_index.average)
    assert by_name.feature_names == ["color", "size"]
    categories = list(model.estimators_[0].categories_[1])
    assert list(by_name.grid_values[0]) == categories
    assert by_name.average.shape == (3, 3, 6)
    # ICE by category: the model's prediction on the DataFrame with the column replaced
    for c, category in enumerate(categories):
        changed = frame.copy()
        changed["color"] = pd.Categorical([category] * n, categories=frame["color"].cat
                                          .categories)
        changed["size"] = by_name.grid_values[1][2]
        np.testing.assert_array_equal(by_name.individual[:, :, c, 2],
                                      model.predict_proba(changed).T)
    # a grid of chosen categories, recursion with the category tests
    chosen = jitree.partial_dependence(model, frame, "color", grid=["blue", "red"])
    full = jitree.partial_dependence(model, frame, "color")
    np.testing.assert_allclose(chosen.average,
                               full.average[:, [categories.index("blue"),
                                                categories.index("red")]], rtol=1e-14)
    np.testing.assert_allclose(full.average, naive_average(model, full), rtol=1e-12)


def test_float32_X_and_nan_in_X():
    X, y = _data(4, 200, 0.2)
    model = jitree.DecisionTreeRegressor(max_depth=6).fit(X[:, :2], y)
    result64 = jitree.partial_dependence(model, X[:, :2], 0, kind="both", grid_resolution=9)
    result32 = jitree.partial_dependence(model, X[:, :2].astype(np.float32), 0,
                                         kind="both", grid_resolution=9)
    finite = X[:, 0][~np.isnan(X[:, 0])]
    assert result64.grid_values[0].min() >= finite.min()
    assert not np.isnan(result64.average).any()
    # float32 X: the grid from float32 values, ICE predicted in float64 at the grid
    np.testing.assert_allclose(result32.grid_values[0], result64.grid_values[0], rtol=1e-6)
    assert result32.individual.shape == result64.individual.shape


# -- bad input -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fitted():
    X, y = _data(0, 60, 0.0)
    return jitree.DecisionTreeRegressor(max_depth=3, categorical_features=[2]).fit(X, y), X


@pytest.mark.parametrize("options, error, message", [
    (dict(features=3), ValueError, "out of range"),
    (dict(features=-1), ValueError, "out of range"),
    (dict(features="nope"), ValueError, "without feature names"),
    (dict(features=(0, 1, 2)), ValueError, "one feature or a pair"),
    (dict(features=()), ValueError, "one feature or a pair"),
    (dict(features=(1, 1)), ValueError, "must differ"),
    (dict(features=1.5), TypeError, "index or name"),
    (dict(features=(0, True)), TypeError, "index or a name"),
    (dict(features=0, grid_resolution=1), ValueError, "at least 2"),
    (dict(features=0, grid_resolution=2.5), TypeError, "must be an int"),
    (dict(features=0, kind="mean"), ValueError, "kind"),
    (dict(features=0, method="fast"), ValueError, "method"),
    (dict(features=0, kind="both", method="recursion"), ValueError, "average only"),
    (dict(features=0, percentiles=(0.9, 0.1)), ValueError, "increasing"),
    (dict(features=0, percentiles=(0.0, 1.5)), ValueError, r"\[0, 1\]"),
    (dict(features=0, percentiles=(0.5,)), ValueError, "pair"),
    (dict(features=2, grid=[0, 7]), ValueError, "not a category"),
    (dict(features=0, grid=[[0.0, 1.0]]), ValueError, "1-D"),
    (dict(features=0, grid=[0.0, np.inf]), ValueError, "infinity"),
    (dict(features=(0, 1), grid=[0.0, 1.0, 2.0]), ValueError, "pair of 1-D"),
])
def test_bad_input(fitted, options, error, message):
    model, X = fitted
    with pytest.raises(error, match=message):
        jitree.partial_dependence(model, X, **options)


def test_bad_model_and_X(fitted):
    model, X = fitted
    with pytest.raises(jitree.NotFittedError):
        jitree.partial_dependence(jitree.RandomForestRegressor(), X, 0)
    with pytest.raises(jitree.NotFittedError):
        jitree.partial_dependence(jitree.DecisionTreeClassifier(), X, 0)
    with pytest.raises(TypeError, match="jitree"):
        jitree.partial_dependence(object(), X, 0)
    with pytest.raises(ValueError, match="features"):
        jitree.partial_dependence(model, X[:, :2], 0)
    infinite = X.copy()
    infinite[3, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        jitree.partial_dependence(model, infinite, 0)
    only_missing = X.copy()
    only_missing[:, 0] = np.nan
    with pytest.raises(ValueError, match="only missing"):
        jitree.partial_dependence(model, only_missing, 0)
    constant = X.copy()
    constant[:, 0] = 1.0
    constant[0, 0] = 2.0
    constant[1, 0] = 3.0
    with pytest.raises(ValueError, match="too close"):
        jitree.partial_dependence(model, constant, 0, grid_resolution=3)


# -- plot ------------------------------------------------------------------------------------


def test_plot_partial_dependence(fitted):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    model, X = fitted
    try:
        result = jitree.partial_dependence(model, X, 0, kind="both", grid_resolution=7)
        ax = jitree.plot_partial_dependence(result, max_ice_lines=10)
        assert len(ax.lines) == 11  # ten ICE curves and the average
        np.testing.assert_array_equal(ax.lines[-1].get_ydata(), result.average[0])
        assert ax.get_xlabel() == "x0"
        ax = jitree.plot_partial_dependence(model, X, 2)
        assert len(ax.patches) == len(model.categories_[2])  # one bar per category
        ax = jitree.plot_partial_dependence(model, X, (0, 1), grid_resolution=5)
        assert len(ax.figure.axes) == 2  # the map and its colour bar
        ax = jitree.plot_partial_dependence(model, X, (2, 0), grid_resolution=5)
        assert [t.get_text() for t in ax.get_xticklabels()] == \
            [str(c) for c in model.categories_[2]]
        with pytest.raises(TypeError, match="with a model"):
            jitree.plot_partial_dependence(result, X, 0)
        with pytest.raises(ValueError, match="not one of the outputs"):
            jitree.plot_partial_dependence(result, target="nope")
    finally:
        plt.close("all")


def test_plot_without_matplotlib(fitted, monkeypatch):
    model, X = fitted
    result = jitree.partial_dependence(model, X, 0)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"jitree\[plot\]"):
        jitree.plot_partial_dependence(result)


def test_import_jitree_does_not_import_matplotlib():
    code = ("import sys, jitree; jitree.partial_dependence; "
            "sys.exit(int('matplotlib' in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_one_specialisation_per_kernel():
    """Trees and forests, classifiers and regressors, one feature or two, categorical
    features, float32 or float64 X: each dependence kernel compiles once (the layout's own
    copies fix the arrays' types and flags)."""
    from jitree.kernels import dependence as kernels

    X, y = _data(6, 80, 0.1)
    for model in (jitree.DecisionTreeRegressor(max_depth=4, categorical_features=[2]),
                  jitree.RandomForestClassifier(n_estimators=2, max_depth=3,
                                                categorical_features=[2], random_state=0)):
        model.fit(X, y if not hasattr(model, "n_estimators") else _labels(y, "clf", 3))
        for features in (0, (1, 0), 2, (2, 0)):
            for rows in (X, X.astype(np.float32)):
                jitree.partial_dependence(model, rows, features, grid_resolution=4)
    for kernel in (kernels.node_shares, kernels.features_below, kernels.sweep_partial_dependence,
                   kernels.recursion_partial_dependence, kernels.distinct_count):
        assert len(kernel.signatures) == 1, (kernel.__name__, kernel.signatures)


def test_many_features():
    """Models of more than 256 features find the nodes above the target features' tests at
    each call (instead of keeping every node's tested features): same results."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(120, 300))
    y = X[:, 3] - 2 * (X[:, 290] > 0) + X[:, 150] * X[:, 3]
    X[rng.random(X.shape) < 0.05] = np.nan
    model = jitree.ExtraTreesRegressor(n_estimators=3, max_depth=6, random_state=0,
                                       max_features=0.5).fit(X, y)
    for features in (3, (290, 3), 150):
        result = jitree.partial_dependence(model, X, features, grid_resolution=6)
        np.testing.assert_allclose(result.average, naive_average(model, result), rtol=1e-12,
                                   atol=1e-12)
    assert model._layouts["dependence"].per_call  # the path under test
    # a missing grid value: the per-point walk
    walked = jitree.partial_dependence(model, X, 290, grid=[-1.0, np.nan, 1.0])
    np.testing.assert_allclose(walked.average, naive_average(model, walked), rtol=1e-12,
                               atol=1e-12)
