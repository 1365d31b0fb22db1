"""The tree corpus: a fixed set of fitted trees that guards the engine against changing them.

Each :class:`Case` is an estimator factory, training data (with fit keyword arguments such as
``sample_weight``) and held-out rows. :func:`fit_case` fits it and returns every tree's arrays
(:func:`tree_arrays`; one tree, or each tree of a forest) and the predictions on the held-out
rows. ``tests/data/tree_corpus.npz`` holds those results as recorded on one engine; the test
``test_tree_corpus.py`` re-fits every case and compares.

Record (only when a change of the trees is intended, and say so in the commit)::

    python tests/corpus_spec.py [path]        # default: tests/data/tree_corpus.npz

It records the jitree that Python imports, fits each case twice and refuses to record a case
whose two fits differ; the npz names the commit (``__meta__/commit``, with ``+modified`` when
the imported jitree is not exactly jitree/ at HEAD).

The data are small (60-600 rows, 3-8 features; the 14-row PlayGolf table apart) and made by
NumPy generators with fixed seeds. No case uses a zero sample weight (that behaviour is meant
to change).
"""

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np

import jitree
from jitree.model.tree_check import check_tree

DATA = Path(__file__).resolve().parent / "data"
CORPUS = DATA / "tree_corpus.npz"
N_TEST = 120  # held-out rows per generated data set

# node arrays, pools and feature arrays of jitree.Tree compared by the test
INT_ARRAYS = ("feature", "children_left", "children_right", "n_node_samples", "split_kind",
              "missing_left", "category_offset", "category_bits", "multiway_slot",
              "n_categories", "feature_kind")
EXACT_FLOAT_ARRAYS = ("threshold",)
# sums of (weighted) statistics: their last bits depend on the summation order
ROUNDED_ARRAYS = ("value", "impurity", "weighted_n_node_samples")
TREE_ARRAYS = INT_ARRAYS + EXACT_FLOAT_ARRAYS + ROUNDED_ARRAYS


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    make: object  # () -> unfitted estimator
    X: object  # ndarray or DataFrame
    y: np.ndarray
    X_test: object
    fit_kwargs: dict = dataclasses.field(default_factory=dict)


# -- data ------------------------------------------------------------------------------------
def _split(X, y, n):
    return X[:n], y[:n], X[n:]


def clf_data(seed, n=300, d=5, n_classes=3, noise=0.1, dtype=np.float64):
    """Gaussian features, classes from quantiles of a nonlinear score, ``noise`` relabelled."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n + N_TEST, d))
    score = X[:, 0] + 0.8 * X[:, 1] * X[:, 2 % d] - 0.5 * X[:, (3 % d)] ** 2
    edges = np.quantile(score, np.linspace(0.0, 1.0, n_classes + 1)[1:-1])
    y = np.searchsorted(edges, score)
    flip = rng.random(n + N_TEST) < noise
    y[flip] = rng.integers(0, n_classes, int(flip.sum()))
    return _split(X.astype(dtype), y, n)


def reg_data(seed, n=300, d=5, noise=0.3, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n + N_TEST, d))
    y = 2.0 * np.sin(X[:, 0]) + X[:, 1] * X[:, 2 % d] + noise * rng.normal(size=n + N_TEST)
    return _split(X.astype(dtype), y, n)


def tie_data(seed, n=300, d=4, levels=5, regression=False):
    """Integer-valued features: many equal values, so ties between thresholds and splits."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n + N_TEST, d)).astype(np.float64)
    y = X[:, 0] + X[:, 1] * (X[:, 2] > 2) + rng.normal(scale=0.5, size=n + N_TEST)
    if not regression:
        y = np.digitize(y, [2.0, 4.5])
    return _split(X, y, n)


def multi_output_data(seed, n=300, d=5, n_outputs=3, levels=0, positive=False):
    """Several regression outputs of the same features: continuous, or with ``levels`` > 0
    integer features and integer outputs (equal sums at many candidates, so ties between
    thresholds and features); the last output repeats the first. ``positive``: counts for
    poisson."""
    rng = np.random.default_rng(seed)
    if levels:
        X = rng.integers(0, levels, size=(n + N_TEST, d)).astype(np.float64)
    else:
        X = rng.normal(size=(n + N_TEST, d))
    columns = [X[:, j % d] + (j + 1) * X[:, (j + 1) % d] for j in range(n_outputs - 1)]
    Y = np.column_stack(columns + [columns[0]])
    if levels:
        Y = np.round(Y + rng.integers(-1, 2, size=Y.shape))
    else:
        Y = Y + 0.3 * rng.normal(size=Y.shape)
    if positive:
        Y = rng.poisson(np.exp(0.3 * (Y - Y.mean(axis=0)) / Y.std(axis=0))).astype(np.float64)
    return _split(X, Y, n)


def with_nan(data, seed, fraction=0.12, columns=None):
    """``data`` with a ``fraction`` of the entries of ``columns`` (default all) set to NaN."""
    X, y, X_test = data
    rng = np.random.default_rng(seed)
    X, X_test = X.copy(), X_test.copy()
    for A in (X, X_test):
        mask = rng.random(A.shape) < fraction
        if columns is not None:
            keep = np.ones(A.shape[1], dtype=bool)
            keep[columns] = False
            mask[:, keep] = False
        A[mask] = np.nan
    return X, y, X_test


def weights(seed, n):
    """Positive, non-integer sample weights (never zero)."""
    return np.random.default_rng(seed).uniform(0.2, 3.0, n)


def cat_data(seed, n=400, n_categories=8, n_classes=2, n_numeric=2, regression=False,
             nan_fraction=0.0):
    """Column 0: category codes 0 .. n_categories - 1 (float); then numeric columns. The
    target depends on an arbitrary grouping of the categories and on the numeric columns.
    Every code appears in the training rows (held-out rows use no unseen code)."""
    rng = np.random.default_rng(seed)
    m = n + N_TEST
    codes = np.concatenate([np.arange(n_categories), rng.integers(0, n_categories,
                                                                  m - n_categories)])
    group = rng.permutation(n_categories) % max(n_classes, 3)
    numeric = rng.normal(size=(m, n_numeric))
    signal = group[codes] + 0.8 * numeric[:, 0] + 0.3 * rng.normal(size=m)
    if regression:
        y = signal + 0.5 * np.where(numeric[:, 1] > 0, 1.0, -1.0)
    else:
        edges = np.quantile(signal, np.linspace(0.0, 1.0, n_classes + 1)[1:-1])
        y = np.searchsorted(edges, signal)
    X = np.column_stack([codes.astype(np.float64), numeric])
    if nan_fraction:
        missing = rng.random(m) < nan_fraction
        missing[:n_categories] = False
        X[missing, 0] = np.nan
    return _split(X, y, n)


def two_cat_data(seed, n=500):
    """Two categorical columns (codes 0..5 and 0..11), one ordinal (0..4), one numeric, with
    missing values in the first categorical and the numeric column."""
    rng = np.random.default_rng(seed)
    m = n + N_TEST
    a = np.concatenate([np.arange(6), rng.integers(0, 6, m - 6)])
    b = np.concatenate([np.arange(12), rng.integers(0, 12, m - 12)])
    c = np.concatenate([np.arange(5), rng.integers(0, 5, m - 5)])
    x = rng.normal(size=m)
    y = ((np.isin(a, [0, 3]) ^ np.isin(b, [1, 4, 7, 8])) ^ (c + x > 2.5)).astype(np.int64)
    flip = rng.random(m) < 0.05
    y[flip] = 1 - y[flip]
    X = np.column_stack([a, b, c, x]).astype(np.float64)
    X[20:][rng.random(m - 20) < 0.08, 0] = np.nan
    X[rng.random(m) < 0.08, 3] = np.nan
    return _split(X, y, n)


def mixed_frame(seed, n=400):
    """A DataFrame: a numeric column with NaN, a string category column with None, a pandas
    ordered category column."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    m = n + N_TEST
    number = rng.normal(size=m)
    number[rng.random(m) < 0.1] = np.nan
    cities = np.array([f"city{k:02d}" for k in range(12)], dtype=object)
    city = cities[np.concatenate([np.arange(12), rng.integers(0, 12, m - 12)])]
    grade = np.concatenate([np.arange(5), rng.integers(0, 5, m - 5)])
    y = ((np.nan_to_num(number) > 0) ^ np.isin(city, ["city01", "city03", "city07"])
         ^ (grade > 2)).astype(np.int64)
    city = np.where(np.arange(m) >= 12, np.where(rng.random(m) < 0.05, None, city), city)
    frame = pd.DataFrame({
        "number": number,
        "city": city,
        "grade": pd.Categorical(grade, categories=range(5), ordered=True)})
    return frame.iloc[:n].reset_index(drop=True), y[:n], frame.iloc[n:].reset_index(drop=True)


def playgolf():
    import pandas as pd

    frame = pd.read_csv(DATA / "playgolf.csv")
    X = frame.drop(columns="play")
    return X, frame["play"].to_numpy().astype(str), X


# -- cases -----------------------------------------------------------------------------------
CLASSIFICATION_CRITERIA = ("gini", "entropy", "misclassification", "gain_ratio", "cart",
                           "twoing")


def _clf(**params):
    return lambda: jitree.DecisionTreeClassifier(**params)


def _reg(**params):
    return lambda: jitree.DecisionTreeRegressor(**params)


def cases():
    """Every case of the corpus, in a fixed order (names are unique)."""
    out = []

    def add(name, make, data, **fit_kwargs):
        X, y, X_test = data
        out.append(Case(name, make, X, y, X_test, fit_kwargs))

    clf3 = clf_data(1)
    clf2 = clf_data(2, n=240, d=4, n_classes=2)
    reg = reg_data(3, n=200)

    # criteria: 3-class full depth, binary depth 3
    for criterion in CLASSIFICATION_CRITERIA:
        add(f"crit_{criterion}_3class_full", _clf(criterion=criterion), clf3)
        add(f"crit_{criterion}_binary_depth3", _clf(criterion=criterion, max_depth=3), clf2)
    add("crit_gini_3class_depth4", _clf(max_depth=4), clf3)
    add("crit_log_loss_binary_full", _clf(criterion="log_loss"), clf2)
    add("crit_squared_error_full", _reg(), reg)
    add("crit_squared_error_depth5", _reg(max_depth=5), reg)
    add("crit_gini_string_labels",
        _clf(max_depth=5), (clf3[0], np.array(["ant", "bee", "cat"])[clf3[1]], clf3[2]))

    # stopping rules
    add("stop_min_samples_split_int", _clf(min_samples_split=12), clf3)
    add("stop_min_samples_split_float", _clf(min_samples_split=0.07), clf3)
    add("stop_min_samples_leaf_int", _clf(min_samples_leaf=6), clf3)
    add("stop_min_samples_leaf_float_reg", _reg(min_samples_leaf=0.03), reg)
    add("stop_min_weight_fraction_leaf", _clf(min_weight_fraction_leaf=0.02), clf3,
        sample_weight=weights(10, 300))
    add("stop_min_impurity_decrease", _clf(min_impurity_decrease=0.005), clf3)
    add("stop_min_impurity_decrease_reg", _reg(min_impurity_decrease=0.02), reg)
    for leaves in (2, 17):
        add(f"stop_max_leaf_nodes_{leaves}", _clf(max_leaf_nodes=leaves), clf3)
    add("stop_max_leaf_nodes_9_entropy_depth4",
        _clf(criterion="entropy", max_leaf_nodes=9, max_depth=4), clf3)
    for leaves in (4, 25):
        add(f"stop_max_leaf_nodes_{leaves}_reg", _reg(max_leaf_nodes=leaves), reg)
    add("stop_purity_threshold", _clf(purity_threshold=0.85), clf3)
    add("stop_impurity_threshold", _clf(criterion="entropy", impurity_threshold=0.4), clf3)
    add("stop_impurity_threshold_reg", _reg(impurity_threshold=0.3), reg)

    # sample and class weights (positive, non-integer; never zero)
    add("weight_gini", _clf(), clf3, sample_weight=weights(11, 300))
    add("weight_reg", _reg(), reg, sample_weight=weights(13, 200))
    add("class_weight_balanced", _clf(class_weight="balanced", max_depth=6),
        clf_data(14, n=300, n_classes=3, noise=0.05))
    add("class_weight_balanced_weighted", _clf(class_weight="balanced", criterion="twoing"),
        clf2, sample_weight=weights(15, 240))
    add("class_weight_dict", _clf(class_weight={0: 1.0, 1: 2.5, 2: 0.7}, max_depth=6), clf3)

    # missing values
    clf3_nan = with_nan(clf3, 20)
    reg_nan = with_nan(reg, 21)
    add("nan_clf", _clf(), clf3_nan)
    add("nan_binary_one_column", _clf(), with_nan(clf2, 22, fraction=0.3, columns=[0]))
    add("nan_reg", _reg(), reg_nan)
    add("nan_clf_weighted", _clf(), clf3_nan, sample_weight=weights(23, 300))
    add("nan_reg_weighted", _reg(max_depth=6), reg_nan, sample_weight=weights(24, 200))
    add("nan_clf_random", _clf(splitter="random", random_state=5), clf3_nan)
    add("nan_reg_random", _reg(splitter="random", min_samples_leaf=3, random_state=6), reg_nan)
    add("nan_clf_max_leaf_nodes", _clf(max_leaf_nodes=12), clf3_nan)
    add("nan_reg_max_leaf_nodes", _reg(max_leaf_nodes=10), reg_nan)
    add("nan_float32", _clf(max_depth=6), with_nan(clf_data(25, dtype=np.float32), 26))

    # categorical features given as numeric codes
    add("cat_subset_binary", _clf(categorical_features=[0]), cat_data(30))
    add("cat_subset_multiclass_exhaustive",
        _clf(categorical_features=[0]), cat_data(31, n_categories=6, n_classes=3))
    add("cat_subset_multiclass_heuristic",
        _clf(categorical_features=[0]), cat_data(32, n_categories=14, n_classes=3))
    add("cat_subset_reg", _reg(categorical_features=[0], min_samples_leaf=4),
        cat_data(34, n_categories=12, regression=True))
    add("cat_subset_70_categories", _clf(categorical_features=[0], max_depth=6),
        cat_data(35, n=500, n_categories=70))
    add("cat_max_subset_size_2",
        _clf(categorical_features=[0], max_subset_size=2), cat_data(37, n_categories=9))
    # the category search's regularisation: off (the exact search), and every part of it set
    add("cat_subset_exact_70_categories",
        _clf(categorical_features=[0], max_depth=6, min_samples_category=0,
             subset_penalty=0.0), cat_data(35, n=500, n_categories=70))
    add("cat_regularised_reg_nan",
        _reg(categorical_features=[0], min_samples_leaf=3, min_samples_category=6,
             category_smoothing=5.0, max_one_vs_rest_categories=3, subset_penalty=2.0),
        cat_data(41, n=500, n_categories=40, regression=True, nan_fraction=0.1))
    add("cat_regularised_multiclass",
        _clf(categorical_features=[0], min_samples_category=12, category_smoothing=3.0,
             subset_penalty=1.0), cat_data(42, n=500, n_categories=30, n_classes=3))
    add("cat_multiway_pooled", _clf(criterion="entropy", categorical_features=[0],
                                    categorical_split="multiway", min_samples_category=15),
        cat_data(43, n=400, n_categories=25, n_classes=3))
    add("cat_one_vs_rest", _clf(categorical_features=[0], categorical_split="one_vs_rest"),
        cat_data(38, n_categories=8, n_classes=3))
    add("cat_one_vs_rest_reg", _reg(categorical_features=[0], categorical_split="one_vs_rest",
                                    max_depth=7), cat_data(39, n_categories=8, regression=True))
    add("cat_multiway_entropy", _clf(criterion="entropy", categorical_features=[0],
                                     categorical_split="multiway"),
        cat_data(40, n_categories=6, n_classes=3))
    X, y, X_test = two_cat_data(41)  # without the numeric column, which gain ratio prefers
    add("cat_multiway_gain_ratio", _clf(criterion="gain_ratio", categorical_features=[0, 1],
                                        categorical_split="multiway", max_depth=4),
        (X[:, :3], y, X_test[:, :3]))
    add("cat_multiway_reg", _reg(categorical_features=[0], categorical_split="multiway",
                                 max_depth=6), cat_data(42, n_categories=7, regression=True))
    add("cat_nan_subset", _clf(categorical_features=[0]),
        cat_data(43, n_categories=8, nan_fraction=0.15))
    add("cat_nan_multiway_entropy", _clf(criterion="entropy", categorical_features=[0],
                                         categorical_split="multiway"),
        cat_data(45, n_categories=6, nan_fraction=0.15))
    add("cat_nan_reg", _reg(categorical_features=[0], max_depth=7),
        cat_data(46, n_categories=10, regression=True, nan_fraction=0.15))
    add("cat_two_columns_ordinal_weighted",
        _clf(categorical_features=[0, 1], ordinal_features=[2]), two_cat_data(47),
        sample_weight=weights(48, 500))
    add("cat_two_columns_max_leaf_nodes",
        _clf(categorical_features=[0, 1], ordinal_features=[2], max_leaf_nodes=8),
        two_cat_data(49))
    add("cat_random_splitter", _clf(categorical_features=[0, 1], splitter="random",
                                    random_state=3), two_cat_data(50))
    add("ordinal_reg", _reg(ordinal_features=[0], min_samples_leaf=5),
        cat_data(51, n_categories=9, regression=True))
    add("frame_mixed", _clf(categorical_features=["city"]), mixed_frame(52))
    add("frame_mixed_multiway_gini", _clf(categorical_features=["city"],
                                          categorical_split="multiway"), mixed_frame(53))
    golf = playgolf()
    add("playgolf_id3", _clf(criterion="entropy", categorical_split="multiway",
                             categorical_features=list(golf[0].columns)), golf)

    # random splitter, max_features
    add("random_clf", _clf(splitter="random", random_state=0), clf3)
    add("random_reg", _reg(splitter="random", random_state=2), reg)
    add("random_reg_max_features",
        _reg(splitter="random", max_features=2, max_depth=8, random_state=3), reg)
    add("max_features_int", _clf(max_features=2, random_state=4), clf3)
    add("max_features_sqrt", _clf(max_features="sqrt", random_state=5), clf3)
    add("max_features_log2_reg", _reg(max_features="log2", max_depth=8, random_state=6),
        reg_data(7, n=200, d=8))
    add("max_features_float_max_leaf_nodes",
        _clf(max_features=0.5, max_leaf_nodes=15, random_state=9), clf3)

    # dtypes and ties
    add("float32_clf", _clf(), clf_data(60, dtype=np.float32))
    add("float32_reg", _reg(max_depth=8), reg_data(61, dtype=np.float32))
    add("ties_clf", _clf(), tie_data(62))
    add("ties_clf_entropy_weighted", _clf(criterion="entropy"), tie_data(63),
        sample_weight=weights(64, 300))
    add("ties_reg", _reg(), tie_data(65, regression=True))
    add("small_60_rows", _clf(), clf_data(68, n=60, d=3))
    add("threads_1", _clf(n_jobs=1), clf3_nan)

    # multi-output regression (a scan of its own: every output's sums move per sample)
    add("multi_output_reg", _reg(), multi_output_data(80))
    add("multi_output_reg_12_outputs_depth6", _reg(max_depth=6),
        multi_output_data(81, n=400, d=6, n_outputs=12))
    add("multi_output_reg_ties_weighted", _reg(min_samples_leaf=2),
        multi_output_data(82, levels=4), sample_weight=weights(83, 300))
    add("multi_output_reg_ties_integer_weights", _reg(max_depth=7),
        multi_output_data(84, d=4, n_outputs=5, levels=3),
        sample_weight=np.random.default_rng(85).integers(1, 4, 300).astype(np.float64))
    add("multi_output_reg_nan", _reg(max_depth=8, min_samples_leaf=3),
        with_nan(multi_output_data(89, n_outputs=6), 90))
    add("multi_output_reg_poisson", _reg(criterion="poisson", max_depth=6),
        multi_output_data(86, positive=True))
    add("multi_output_clf", _clf(criterion="entropy", max_depth=6),
        (lambda X, Y, X_test: (X, (Y > np.median(Y, axis=0)).astype(np.int64), X_test))(
            *multi_output_data(87, n_outputs=4)))

    # post-pruning
    add("ccp_alpha_clf", _clf(ccp_alpha=0.01), clf3)
    add("ccp_alpha_reg", _reg(ccp_alpha=0.02), reg)
    add("ccp_alpha_nan_weighted", _clf(criterion="entropy", ccp_alpha=0.02), clf3_nan,
        sample_weight=weights(69, 300))

    # forests (every tree recorded)
    def forest(cls, **params):
        params = {"n_estimators": 4, "random_state": 0, "n_jobs": 1, **params}
        return lambda: cls(**params)

    RFC, RFR = jitree.RandomForestClassifier, jitree.RandomForestRegressor
    ETC, ETR = jitree.ExtraTreesClassifier, jitree.ExtraTreesRegressor
    add("forest_rf_clf", forest(RFC), clf3)
    add("forest_rf_clf_n_jobs_2", forest(RFC, n_jobs=2), clf3)
    add("forest_rf_reg", forest(RFR, max_depth=8), reg)
    add("forest_et_clf", forest(ETC, max_depth=8, random_state=1), clf3)
    add("forest_et_reg", forest(ETR, random_state=2, min_samples_leaf=4), reg)
    add("forest_rf_clf_nan", forest(RFC, n_estimators=3, random_state=3), clf3_nan)
    add("forest_et_reg_nan",
        forest(ETR, n_estimators=3, min_samples_leaf=5, random_state=4), reg_nan)
    add("forest_rf_clf_max_samples", forest(RFC, max_samples=0.5, random_state=5), clf3)
    add("forest_rf_reg_max_samples_int",
        forest(RFR, max_samples=120, max_depth=6, random_state=6), reg)
    add("forest_et_clf_bootstrap", forest(ETC, bootstrap=True, max_depth=6, random_state=8),
        clf2)
    add("forest_rf_clf_balanced_subsample_weighted",
        forest(RFC, class_weight="balanced_subsample", criterion="entropy", random_state=9),
        clf_data(70, noise=0.05), sample_weight=weights(71, 300))
    add("forest_rf_clf_categorical", forest(RFC, categorical_features=[0, 1],
                                            ordinal_features=[2], min_samples_leaf=3,
                                            random_state=10),
        two_cat_data(72))
    add("forest_rf_reg_multi_output", forest(RFR, max_features=0.6, random_state=12),
        multi_output_data(88, n_outputs=6))
    add("forest_rf_reg_max_leaf_nodes_ccp", forest(RFR, max_leaf_nodes=20, ccp_alpha=0.05,
                                                   random_state=11), reg)
    return out


# -- fitting and extraction ------------------------------------------------------------------
def estimator_trees(model):
    """The fitted jitree.Tree objects of an estimator: its tree, or each tree of a forest."""
    if hasattr(model, "estimators_"):
        return [m.tree_ for m in model.estimators_]
    return [model.tree_]


def tree_arrays(tree):
    """The arrays of one tree compared by the corpus (copies), by name."""
    out = {name: np.array(getattr(tree, name)) for name in TREE_ARRAYS}
    out["n_features"] = np.array(tree.n_features)
    out["n_classes"] = np.array(tree.n_classes)
    return out


def _labels(values):
    values = np.asarray(values)
    return values.astype(str) if values.dtype == object else values


def fit_case(case):
    """Fit ``case``: {"trees": [tree_arrays, ...], "predict": ..., "proba": ... (classifiers)}."""
    model = case.make().fit(case.X, case.y, **case.fit_kwargs)
    for tree in estimator_trees(model):
        # the engine's trees skip the constructor's check (Tree._grown): they must pass it
        check_tree(tree)
    result = {"trees": [tree_arrays(t) for t in estimator_trees(model)],
              "predict": _labels(model.predict(case.X_test))}
    if hasattr(model, "predict_proba"):
        proba = model.predict_proba(case.X_test)
        # a multi-output classifier's list of (n, n_classes of output j): side by side
        result["proba"] = np.hstack(proba) if isinstance(proba, list) else proba
    return result


# The npz packs each case into a few arrays (one zip entry per tree array would make the file
# mostly zip headers): per-tree sizes, the node arrays stacked as columns, the pools and the
# feature arrays concatenated over the trees, and the predictions.
NODE_INT_COLUMNS = ("feature", "children_left", "children_right", "n_node_samples",
                    "split_kind", "missing_left", "category_offset")
NODE_FLOAT_COLUMNS = ("threshold", "impurity", "weighted_n_node_samples")
FEATURE_COLUMNS = ("n_categories", "feature_kind")
SIZE_COLUMNS = ("n_nodes", "n_category_bits", "n_multiway_slot", "n_features", "n_classes")
assert set(NODE_INT_COLUMNS + NODE_FLOAT_COLUMNS + FEATURE_COLUMNS
           + ("value", "category_bits", "multiway_slot")) == set(TREE_ARRAYS)


def flatten(name, result):
    """npz entries ``<case>/<part>`` of one case's :func:`fit_case` result."""
    trees = result["trees"]
    sizes = np.array([[t["feature"].shape[0], t["category_bits"].shape[0],
                       t["multiway_slot"].shape[0], int(t["n_features"]), int(t["n_classes"])]
                      for t in trees], dtype=np.int64)

    def stacked(columns, dtype):
        return np.concatenate([np.column_stack([t[c].astype(dtype) for c in columns])
                               for t in trees])

    entries = {
        f"{name}/sizes": sizes,
        f"{name}/nodes_int": stacked(NODE_INT_COLUMNS, np.int64),
        f"{name}/nodes_float": stacked(NODE_FLOAT_COLUMNS, np.float64),
        f"{name}/value": np.concatenate([t["value"] for t in trees]),
        f"{name}/category_bits": np.concatenate([t["category_bits"] for t in trees]),
        f"{name}/multiway_slot": np.concatenate([t["multiway_slot"] for t in trees]),
        f"{name}/features": stacked(FEATURE_COLUMNS, np.int64),
    }
    for key in ("predict", "proba"):
        if key in result:
            entries[f"{name}/{key}"] = result[key]
    return entries


def unflatten(corpus, name):
    """The recorded result of case ``name`` (as :func:`fit_case` returns it) from the loaded
    npz or a dict of its entries: the inverse of :func:`flatten`, integer arrays as int64."""
    sizes = corpus[f"{name}/sizes"]
    parts = {part: corpus[f"{name}/{part}"]
             for part in ("nodes_int", "nodes_float", "value", "category_bits",
                          "multiway_slot", "features")}
    ends = {column: np.cumsum(sizes[:, k]) for k, column in enumerate(SIZE_COLUMNS)}
    trees = []
    for t in range(sizes.shape[0]):
        def rows(size_column, array, t=t):
            end = ends[size_column][t]
            return array[end - sizes[t, SIZE_COLUMNS.index(size_column)]:end]

        tree = {"n_features": np.array(sizes[t, 3]), "n_classes": np.array(sizes[t, 4])}
        for k, column in enumerate(NODE_INT_COLUMNS):
            tree[column] = rows("n_nodes", parts["nodes_int"][:, k])
        for k, column in enumerate(NODE_FLOAT_COLUMNS):
            tree[column] = rows("n_nodes", parts["nodes_float"][:, k])
        tree["value"] = rows("n_nodes", parts["value"])
        tree["category_bits"] = rows("n_category_bits", parts["category_bits"])
        tree["multiway_slot"] = rows("n_multiway_slot", parts["multiway_slot"])
        for k, column in enumerate(FEATURE_COLUMNS):
            tree[column] = rows("n_features", parts["features"][:, k])
        trees.append(tree)
    result = {"trees": trees, "predict": corpus[f"{name}/predict"]}
    if f"{name}/proba" in corpus:
        result["proba"] = corpus[f"{name}/proba"]
    return result


def _identical(a, b):
    """Equality by value of two fit results (all arrays, exactly)."""
    if len(a["trees"]) != len(b["trees"]) or a.keys() != b.keys():
        return False
    pairs = [(x[key], y[key]) for x, y in zip(a["trees"], b["trees"], strict=True) for key in x]
    pairs += [(a[key], b[key]) for key in a if key != "trees"]
    return all(x.shape == y.shape and np.array_equal(x, y) for x, y in pairs)


def _engine_version():
    """(commit, path) of the jitree being recorded: HEAD of this repository, with ``+modified``
    unless the imported package's .py files are exactly those of HEAD's jitree/ (the package
    may be imported from elsewhere, e.g. an export of HEAD on PYTHONPATH)."""
    repo = Path(__file__).resolve().parents[1]

    def git(*args):
        return subprocess.run(["git", *args], capture_output=True, text=True, check=True,
                              cwd=repo).stdout.split()

    commit = git("rev-parse", "HEAD")[0]
    listed = git("ls-tree", "-r", "HEAD", "--", "jitree")  # mode, type, blob, path per file
    at_head = {path: blob for blob, path in zip(listed[2::4], listed[3::4], strict=True)
               if path.endswith(".py")}
    engine = Path(jitree.__file__).resolve().parent
    files = sorted(engine.rglob("*.py"))
    blobs = git("hash-object", "--", *map(str, files))
    imported = {"jitree/" + f.relative_to(engine).as_posix(): blob
                for f, blob in zip(files, blobs, strict=True)}
    return (commit if imported == at_head else commit + "+modified"), str(engine)


def record(path=CORPUS):
    """Fit every case twice (refusing any case whose two fits differ) and write the corpus."""
    commit, engine = _engine_version()
    entries = {}
    all_cases = cases()
    names = [case.name for case in all_cases]
    if len(set(names)) != len(names):
        raise ValueError("case names are not unique")
    n_trees = n_nodes = 0
    for case in all_cases:
        result = fit_case(case)
        if not _identical(result, fit_case(case)):
            raise RuntimeError(f"case {case.name}: two fits differ; not recording")
        packed = flatten(case.name, result)
        if not _identical(result, unflatten(packed, case.name)):
            raise RuntimeError(f"case {case.name}: flatten / unflatten do not round-trip")
        entries.update(packed)
        n_trees += len(result["trees"])
        n_nodes += sum(int(t["feature"].shape[0]) for t in result["trees"])
    entries["__meta__/cases"] = np.array(names)
    entries["__meta__/commit"] = np.array(commit)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **entries)
    print(f"{len(names)} cases, {n_trees} trees, {n_nodes} nodes, engine {engine} at "
          f"{commit}: {path} ({path.stat().st_size / 1024:.0f} KiB)")
    if commit.endswith("+modified"):
        print("warning: the imported jitree differs from jitree/ at HEAD; the recording is "
              "not of a commit", file=sys.stderr)


if __name__ == "__main__":
    record(Path(sys.argv[1]) if len(sys.argv) > 1 else CORPUS)
