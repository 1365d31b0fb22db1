"""The scikit-learn surface of the forests: a fitted forest as a sequence of its trees,
``decision_path``, ``warm_start``, ``n_outputs_`` and ``verbose``, each tree's
``random_state``, and bootstrap samples drawn by ``sample_weight`` (with ``max_samples``).

Where jitree and scikit-learn mean the same thing, the test runs scikit-learn beside jitree
(skipped when it is not installed) and compares what both do: the same errors and warnings,
the same seeds, the same shape of results. Bags themselves are not compared row by row:
jitree draws them from its own random stream.
"""

import subprocess
import sys
import warnings

import numpy as np
import pytest

import jitree
from jitree.datasets import make_classification_data

FORESTS = [jitree.RandomForestClassifier, jitree.ExtraTreesClassifier,
           jitree.RandomForestRegressor, jitree.ExtraTreesRegressor]
CLASSIFIERS = (jitree.RandomForestClassifier, jitree.ExtraTreesClassifier)
TREE_ARRAYS = ("feature", "threshold", "children_left", "children_right", "value",
               "impurity", "n_node_samples", "weighted_n_node_samples")


@pytest.fixture(scope="module")
def data():
    X, y = make_classification_data(400, 5, 3, seed=8)
    return X, y, X[:, 0] * 2.0 + y


def _target(cls, data):
    return data[1] if cls in CLASSIFIERS else data[2]


def _sklearn_twin(cls):
    ensemble = pytest.importorskip("sklearn.ensemble")
    return getattr(ensemble, cls.__name__)


def _assert_same_trees(a, b):
    assert len(a) == len(b)
    for tree_a, tree_b in zip(a, b, strict=True):
        for name in TREE_ARRAYS:
            np.testing.assert_array_equal(getattr(tree_a.tree_, name),
                                          getattr(tree_b.tree_, name), err_msg=name)


# -- a fitted forest is a sequence of its trees ------------------------------------------------
@pytest.mark.parametrize("cls", FORESTS)
def test_forest_is_the_sequence_of_its_trees(data, cls):
    X, y = data[0], _target(cls, data)
    forest = cls(n_estimators=5, max_depth=3, random_state=0).fit(X, y)
    assert len(forest) == 5
    assert forest[0] is forest.estimators_[0]
    assert forest[-1] is forest.estimators_[4]
    assert forest[np.int64(2)] is forest.estimators_[2]
    assert forest[1:4] == forest.estimators_[1:4]
    assert isinstance(forest[1:4], list)  # as scikit-learn: a slice is a list of trees
    assert list(forest) == forest.estimators_
    assert [t for t in forest] == forest.estimators_
    with pytest.raises(IndexError):
        forest[5]
    with pytest.raises(TypeError, match="indices must be integers or slices, got str"):
        forest["0"]
    with pytest.raises(TypeError, match="got float"):
        forest[1.0]


def test_sequence_matches_sklearn(data):
    X, y, _ = data
    reference = _sklearn_twin(jitree.RandomForestClassifier)(n_estimators=4, random_state=0)
    reference.fit(X, y)
    forest = jitree.RandomForestClassifier(n_estimators=4, random_state=0).fit(X, y)
    assert len(forest) == len(reference)
    assert type(forest[1:3]) is type(reference[1:3])
    assert len(forest[::2]) == len(reference[::2])
    assert len(list(forest)) == len(list(reference))


def test_unfitted_forest_has_no_trees_but_is_true():
    forest = jitree.RandomForestClassifier()
    with pytest.raises(jitree.NotFittedError):
        len(forest)
    with pytest.raises(jitree.NotFittedError):
        forest[0]
    with pytest.raises(jitree.NotFittedError):
        iter(forest)
    assert forest  # an estimator is true, fitted or not


# -- decision_path -----------------------------------------------------------------------------
@pytest.mark.parametrize("cls", FORESTS)
def test_decision_path_is_the_trees_paths_side_by_side(data, cls):
    sparse = pytest.importorskip("scipy.sparse")
    X, y = data[0], _target(cls, data)
    forest = cls(n_estimators=4, max_depth=5, random_state=1).fit(X, y)
    X_test = X[::7]
    indicator, n_nodes_ptr = forest.decision_path(X_test)
    assert sparse.issparse(indicator) and indicator.format == "csr"
    assert indicator.dtype == np.int64
    counts = [tree.tree_.node_count for tree in forest]
    np.testing.assert_array_equal(n_nodes_ptr, np.concatenate([[0], np.cumsum(counts)]))
    assert n_nodes_ptr.dtype == np.int64
    assert indicator.shape == (X_test.shape[0], n_nodes_ptr[-1])
    leaves = forest.apply(X_test)
    for t, tree in enumerate(forest):
        block = indicator[:, n_nodes_ptr[t]:n_nodes_ptr[t + 1]]
        assert (block != tree.decision_path(X_test)).nnz == 0
        dense = block.toarray()
        # every path starts at the root and ends at the leaf apply gives
        assert (dense[:, 0] == 1).all()
        assert (dense[np.arange(X_test.shape[0]), leaves[:, t]] == 1).all()


def test_decision_path_shape_as_sklearn(data):
    """Same layout as scikit-learn's (one column block per tree, n_nodes_ptr of length
    n_estimators + 1), checked on forests of single-split trees, which split the same root."""
    X, y, _ = data
    ours = jitree.RandomForestClassifier(n_estimators=3, max_depth=1, bootstrap=False,
                                         max_features=None, random_state=0).fit(X, y)
    theirs = _sklearn_twin(jitree.RandomForestClassifier)(
        n_estimators=3, max_depth=1, bootstrap=False, max_features=None,
        random_state=0).fit(X, y)
    ours_indicator, ours_ptr = ours.decision_path(X)
    theirs_indicator, theirs_ptr = theirs.decision_path(X)
    np.testing.assert_array_equal(ours_ptr, theirs_ptr)
    assert ours_indicator.format == theirs_indicator.format
    assert (ours_indicator != theirs_indicator).nnz == 0


def test_decision_path_without_scipy_names_the_extra(data, monkeypatch):
    X, y, _ = data
    forest = jitree.RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    monkeypatch.setitem(sys.modules, "scipy", None)  # import scipy now fails
    with pytest.raises(ImportError, match=r"jitree\[scipy\]"):
        forest.decision_path(X)
    with pytest.raises(ImportError, match=r"jitree\[scipy\]"):
        forest[0].decision_path(X)


def test_forests_work_without_scipy():
    """scipy is optional: with it missing (numba imports it when installed, so it is blocked
    here), jitree imports, fits and indexes forests; only decision_path needs it."""
    code = ("import sys; sys.modules['scipy'] = None\n"
            "import numpy as np, jitree\n"
            "f = jitree.RandomForestClassifier(n_estimators=2).fit(np.eye(4), [0, 1, 0, 1])\n"
            "assert len(f) == 2 and f[0] is f.estimators_[0]\n"
            "try:\n"
            "    f.decision_path(np.eye(4))\n"
            "except ImportError as error:\n"
            "    assert 'jitree[scipy]' in str(error), error\n"
            "else:\n"
            "    raise AssertionError('no ImportError')\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_decision_path_checks_X(data):
    X, y, _ = data
    forest = jitree.RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        forest.decision_path(X[:, :3])
    with pytest.raises(jitree.NotFittedError):
        jitree.RandomForestClassifier().decision_path(X)


# -- warm_start --------------------------------------------------------------------------------
@pytest.mark.parametrize("cls", FORESTS)
def test_warm_start_equals_one_fit(data, cls):
    """15 trees, then 15 more with warm_start, are the 30 trees of one fit (the seeds of trees
    15..29 are those one fit draws), predictions and out-of-bag estimate included."""
    X, y = data[0], _target(cls, data)
    params = dict(random_state=5, max_depth=6)
    if cls(n_estimators=1).bootstrap:
        params["oob_score"] = True
    warm = cls(n_estimators=15, warm_start=True, **params).fit(X, y)
    first = list(warm)
    warm.set_params(n_estimators=30).fit(X, y)
    assert warm[:15] == first  # the fitted trees are kept, not refitted
    once = cls(n_estimators=30, **params).fit(X, y)
    _assert_same_trees(warm, once)
    predict = "predict_proba" if cls in CLASSIFIERS else "predict"
    np.testing.assert_array_equal(getattr(warm, predict)(X), getattr(once, predict)(X))
    if "oob_score" in params:
        assert warm.oob_score_ == once.oob_score_
    # warm_start=False grows every tree anew
    cold = warm.set_params(warm_start=False, n_estimators=3, oob_score=False).fit(X, y)
    assert len(cold) == 3 and not set(map(id, cold)) & set(map(id, first))


def test_warm_start_equals_one_fit_in_sklearn_too(data):
    """The property above is scikit-learn's (with an int random_state)."""
    X, y, _ = data
    cls = _sklearn_twin(jitree.RandomForestClassifier)
    warm = cls(n_estimators=5, warm_start=True, random_state=5).fit(X, y)
    warm.set_params(n_estimators=10).fit(X, y)
    once = cls(n_estimators=10, random_state=5).fit(X, y)
    np.testing.assert_array_equal(warm.predict_proba(X), once.predict_proba(X))


@pytest.mark.parametrize("library", ["jitree", "sklearn"])
def test_warm_start_errors_and_warnings_as_sklearn(data, library):
    X, y, _ = data
    cls = jitree.RandomForestClassifier if library == "jitree" \
        else _sklearn_twin(jitree.RandomForestClassifier)
    forest = cls(n_estimators=6, warm_start=True, random_state=0).fit(X, y)
    trees = list(forest)
    with pytest.raises(ValueError, match=r"n_estimators=4 must be larger or equal to "
                                         r"len\(estimators_\)=6 when warm_start"):
        forest.set_params(n_estimators=4).fit(X, y)
    with pytest.warns(UserWarning, match="Warm-start fitting without increasing n_estimators "
                                         "does not fit new trees"):
        forest.set_params(n_estimators=6).fit(X, y)
    assert list(forest) == trees


def test_warm_start_out_of_bag_computed_once_asked(data):
    X, y, _ = data
    forest = jitree.RandomForestClassifier(n_estimators=25, warm_start=True, random_state=0)
    forest.fit(X, y)
    assert not hasattr(forest, "oob_score_")
    with pytest.warns(UserWarning, match="Warm-start"):
        forest.set_params(oob_score=True).fit(X, y)  # no new tree, but no estimate yet
    once = jitree.RandomForestClassifier(n_estimators=25, oob_score=True, random_state=0)
    assert forest.oob_score_ == once.fit(X, y).oob_score_


def test_warm_start_refuses_other_features_or_classes(data):
    X, y, _ = data
    forest = jitree.RandomForestClassifier(n_estimators=3, warm_start=True, random_state=0)
    forest.fit(X, y)
    forest.set_params(n_estimators=6)
    with pytest.raises(ValueError, match="warm_start=True: X has 4 features"):
        forest.fit(X[:, :4], y)
    with pytest.raises(ValueError, match=r"warm_start=True: y has the classes \[0, 1\]"):
        forest.fit(X[y < 2], y[y < 2])
    codes = X.copy()
    codes[:, 1] = np.arange(X.shape[0]) % 4
    with pytest.raises(ValueError, match="categorical"):
        forest.set_params(categorical_features=[1]).fit(codes, y)
    forest.set_params(categorical_features=None)
    assert len(forest) == 3  # nothing lost
    assert len(forest.fit(X, y)) == 6


def test_warm_start_refuses_other_feature_names(data):
    pd = pytest.importorskip("pandas")
    X, y, _ = data
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    forest = jitree.RandomForestClassifier(n_estimators=2, warm_start=True, random_state=0)
    forest.fit(frame, y).set_params(n_estimators=4)
    with pytest.raises(ValueError, match="feature names"):
        forest.fit(frame.rename(columns={"f0": "other"}), y)
    with pytest.raises(ValueError, match="feature names"):
        forest.fit(X, y)
    assert len(forest.fit(frame, y)) == 4


@pytest.mark.parametrize("class_weight", ["balanced", "balanced_subsample"])
def test_warm_start_with_balanced_class_weight_warns_as_sklearn(data, class_weight):
    X, y, _ = data
    with pytest.warns(UserWarning, match="warm_start"):
        jitree.RandomForestClassifier(n_estimators=2, warm_start=True,
                                      class_weight=class_weight).fit(X, y)
    with pytest.warns(UserWarning, match="warm_start"):
        _sklearn_twin(jitree.RandomForestClassifier)(
            n_estimators=2, warm_start=True, class_weight=class_weight).fit(X, y)


def test_warm_start_and_verbose_are_checked(data):
    X, y, _ = data
    with pytest.raises(TypeError, match="warm_start must be True or False"):
        jitree.RandomForestClassifier(warm_start="yes").fit(X, y)
    with pytest.raises(TypeError, match="verbose must be an int"):
        jitree.RandomForestClassifier(verbose=1.5).fit(X, y)
    with pytest.raises(ValueError, match="verbose must be >= 0"):
        jitree.RandomForestClassifier(verbose=-1).fit(X, y)


# -- n_outputs_ and verbose --------------------------------------------------------------------
@pytest.mark.parametrize("cls", FORESTS)
def test_n_outputs_is_one_as_sklearn(data, cls, tmp_path):
    X, y = data[0], _target(cls, data)
    forest = cls(n_estimators=2, max_depth=3, random_state=0).fit(X, y)
    reference = _sklearn_twin(cls)(n_estimators=2, max_depth=3, random_state=0).fit(X, y)
    assert forest.n_outputs_ == reference.n_outputs_ == 1
    assert all(tree.n_outputs_ == 1 for tree in forest)
    single = forest.estimator_.__class__().fit(X, y)
    assert single.n_outputs_ == reference.estimators_[0].n_outputs_ == 1
    jitree.save(single, tmp_path / "tree.jitree")
    assert jitree.load(tmp_path / "tree.jitree").n_outputs_ == 1


def test_verbose_prints_progress(data, capsys):
    X, y, _ = data
    jitree.RandomForestClassifier(n_estimators=4, random_state=0).fit(X, y)
    assert capsys.readouterr().out == ""
    jitree.RandomForestClassifier(n_estimators=4, random_state=0, verbose=1).fit(X, y)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and lines[0].startswith("[RandomForestClassifier] 4 trees grown")
    forest = jitree.ExtraTreesRegressor(n_estimators=4, random_state=0, verbose=2,
                                        warm_start=True).fit(X, data[2])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 5
    assert sorted(line.split(" grown")[0] for line in lines[:4]) == \
        [f"[ExtraTreesRegressor] tree {t} of 4" for t in range(1, 5)]
    forest.set_params(n_estimators=6).fit(X, data[2])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3 and "tree 6 of 6" in "".join(lines)


# -- each tree's random_state ------------------------------------------------------------------
@pytest.mark.parametrize("cls", FORESTS)
def test_tree_random_state_is_its_seed_as_sklearn(data, cls):
    """The trees' seeds are the integers scikit-learn gives its trees for the same
    random_state (one draw per tree from RandomState(random_state))."""
    X, y = data[0], _target(cls, data)
    forest = cls(n_estimators=6, max_depth=2, random_state=42).fit(X, y)
    reference = _sklearn_twin(cls)(n_estimators=6, max_depth=2, random_state=42).fit(X, y)
    seeds = [tree.random_state for tree in forest]
    assert all(type(seed) is int for seed in seeds)
    assert seeds == [tree.random_state for tree in reference]
    assert forest.estimator_.random_state == 0  # the template is not a grown tree


@pytest.mark.parametrize("cls", FORESTS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("min_samples_leaf", [2, 0.02])
def test_clone_of_a_tree_regrows_it(data, cls, weighted, min_samples_leaf):
    """A clone of estimators_[t], fitted on the same rows with the weights the forest gave
    them (bag multiplicities with bootstrap, sample_weight without), is the same tree (a
    fraction min_samples_leaf is the count it came to in the forest: 8 of 400 rows)."""
    sklearn_base = pytest.importorskip("sklearn.base")
    X, y = data[0], _target(cls, data)
    n_samples = X.shape[0]
    sample_weight = None
    if weighted:
        sample_weight = np.random.default_rng(3).random(n_samples)
        sample_weight[::3] = 0.0
    forest = cls(n_estimators=4, min_samples_leaf=min_samples_leaf, random_state=7)
    forest.fit(X, y, sample_weight=sample_weight)
    for t, tree in enumerate(forest):
        assert tree.min_samples_leaf == (2 if min_samples_leaf == 2 else 8)
        if forest.bootstrap:
            weight = np.bincount(forest.estimators_samples_[t], minlength=n_samples)
        else:
            weight = np.ones(n_samples) if sample_weight is None else sample_weight
        for clone in (jitree.clone, sklearn_base.clone):
            regrown = clone(tree).fit(X, y, sample_weight=weight)
            _assert_same_trees([regrown], [tree])


# -- bootstrap samples drawn by sample_weight --------------------------------------------------
@pytest.mark.parametrize("cls", [jitree.RandomForestClassifier, jitree.RandomForestRegressor])
def test_mostly_zero_weights_fit(data, cls):
    """Rows of weight 0 are never drawn, so no bag is empty (this used to fail with 'a
    bootstrap sample has zero total weight')."""
    X, y = data[0], _target(cls, data)
    sample_weight = np.zeros(X.shape[0])
    sample_weight[[3, 50, 51, 200]] = [1.0, 0.5, 2.0, 1.0]
    forest = cls(n_estimators=20, random_state=0).fit(X, y, sample_weight=sample_weight)
    for tree, bag in zip(forest, forest.estimators_samples_, strict=True):
        assert set(np.unique(bag)) <= {3, 50, 51, 200}
        assert bag.shape[0] == X.shape[0]  # max_samples=None: n_samples draws
        # the tree weighs the drawn rows by their multiplicities only
        assert tree.tree_.weighted_n_node_samples[0] == X.shape[0]
        assert tree.tree_.n_node_samples[0] == np.unique(bag).shape[0]


def test_weights_enter_the_draw_not_the_trees_as_sklearn(data):
    """scikit-learn 1.9: a weighted bootstrap draws rows by weight and weighs each tree's rows
    by their multiplicities (root weight = number of draws), zero-weight rows never drawn."""
    X, y, _ = data
    sample_weight = np.random.default_rng(0).random(X.shape[0]) * 3
    sample_weight[:100] = 0.0
    for cls in (jitree.RandomForestClassifier, _sklearn_twin(jitree.RandomForestClassifier)):
        forest = cls(n_estimators=5, max_samples=150, random_state=0)
        forest.fit(X, y, sample_weight=sample_weight)
        for tree, bag in zip(forest.estimators_, forest.estimators_samples_, strict=True):
            assert tree.tree_.weighted_n_node_samples[0] == 150
            assert bag.shape[0] == 150 and bag.min() >= 100


@pytest.mark.parametrize("max_samples", [15, 100])  # fewer draws than rows, and more
def test_draw_frequencies_follow_the_weights(max_samples):
    """Over many trees, row i is drawn n_bootstrap * w_i / sum(w) times per tree on average
    (tolerance: 6 standard errors of the mean count of each row)."""
    X = np.arange(40, dtype=np.float64).reshape(20, 2)
    y = np.arange(20) % 2
    weight = np.arange(20, dtype=np.float64)  # row 0 never drawn
    forest = jitree.RandomForestClassifier(n_estimators=400, max_depth=1,
                                           max_samples=max_samples, random_state=0)
    forest.fit(X, y, sample_weight=weight)
    counts = np.array([np.bincount(bag, minlength=20) for bag in forest.estimators_samples_])
    assert (counts.sum(axis=1) == max_samples).all()
    expected = max_samples * weight / weight.sum()
    assert counts[:, 0].max() == 0
    standard_error = np.sqrt(np.maximum(expected, 1e-12) / 400)
    assert np.all(np.abs(counts.mean(axis=0) - expected) <= 6 * standard_error + 1e-12)


@pytest.mark.parametrize("cls", FORESTS)
def test_equal_weights_are_no_weights(data, cls):
    """Equal weights draw uniformly, as no weights: the same trees with ones, and with a
    constant (trees do not depend on the units of the weights)."""
    X, y = data[0], _target(cls, data)
    plain = cls(n_estimators=3, random_state=2).fit(X, y)
    ones = cls(n_estimators=3, random_state=2).fit(X, y, sample_weight=np.ones(X.shape[0]))
    _assert_same_trees(plain, ones)
    threes = cls(n_estimators=3, random_state=2).fit(X, y, sample_weight=np.full(400, 3.0))
    for a, b in zip(plain, threes, strict=True):
        np.testing.assert_array_equal(a.tree_.feature, b.tree_.feature)
        np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)


def test_weighted_out_of_bag_rows(data):
    """Rows of weight 0 are out of every bag: they have out-of-bag predictions, as in
    scikit-learn."""
    X, y, _ = data
    sample_weight = np.ones(X.shape[0])
    sample_weight[:40] = 0.0
    forest = jitree.RandomForestClassifier(n_estimators=30, oob_score=True, random_state=0)
    forest.fit(X, y, sample_weight=sample_weight)
    for bag in forest.estimators_samples_:
        assert bag.min() >= 40
    assert forest.oob_decision_function_.shape == (400, 3)
    # every tree predicts the rows of weight 0: their mean probabilities sum to 1
    np.testing.assert_allclose(forest.oob_decision_function_[:40].sum(axis=1), 1.0)
    mean = np.mean([tree.predict_proba(X[:40]) for tree in forest], axis=0)
    np.testing.assert_allclose(forest.oob_decision_function_[:40], mean)


def test_balanced_subsample_with_weights(data):
    X, y, _ = data
    sample_weight = np.random.default_rng(1).random(X.shape[0])
    sample_weight[y == 0] *= 0.01
    forest = jitree.RandomForestClassifier(n_estimators=5, class_weight="balanced_subsample",
                                           random_state=0).fit(X, y, sample_weight)
    for tree, bag in zip(forest, forest.estimators_samples_, strict=True):
        drawn = np.bincount(y[bag], minlength=3)
        root = tree.tree_.value[0]  # class weights of the root: balanced on the bag
        present = drawn > 0
        np.testing.assert_allclose(root[present], root[present][0])


# -- max_samples -------------------------------------------------------------------------------
def _n_bootstrap(forest):
    return int(forest.estimators_[0].tree_.weighted_n_node_samples[0])


@pytest.mark.parametrize("max_samples, expected", [
    (None, 400), (1, 1), (250, 250), (1000, 1000), (0.5, 200), (1.5, 600), (2.0, 800)])
def test_max_samples_as_sklearn(data, max_samples, expected):
    """None: n_samples; an int: that many draws, more than n_samples allowed (scikit-learn
    1.9); a float: that fraction of n_samples, above 1 too."""
    X, y, _ = data
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: an int, or enough rows
        forest = jitree.RandomForestClassifier(n_estimators=2, max_samples=max_samples,
                                               random_state=0).fit(X, y)
        reference = _sklearn_twin(jitree.RandomForestClassifier)(
            n_estimators=2, max_samples=max_samples, random_state=0).fit(X, y)
    assert _n_bootstrap(forest) == _n_bootstrap(reference) == expected
    assert forest.estimators_samples_[0].shape[0] == expected


@pytest.mark.parametrize("total", [16.0, 100.0, 1232.0])
def test_max_samples_fraction_of_the_total_weight_as_sklearn(data, total):
    """A float max_samples is a fraction of the total sample weight (frequency semantics:
    integer weights draw as many rows as the repeated data set would)."""
    X, y, _ = data
    sample_weight = np.zeros(X.shape[0])
    sample_weight[:8] = total / 8
    forest = jitree.RandomForestClassifier(n_estimators=2, max_samples=0.75, random_state=0)
    reference = _sklearn_twin(jitree.RandomForestClassifier)(
        n_estimators=2, max_samples=0.75, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        forest.fit(X, y, sample_weight=sample_weight)
        reference.fit(X, y, sample_weight=sample_weight)
    assert _n_bootstrap(forest) == _n_bootstrap(reference) == int(0.75 * total)


def test_few_bootstrap_rows_warn_as_sklearn(data):
    X, y, _ = data
    with pytest.warns(UserWarning, match="max_samples=0.01"):
        jitree.RandomForestClassifier(n_estimators=2, max_samples=0.01).fit(X, y)
    with pytest.warns(UserWarning, match="max_samples=0.01"):
        _sklearn_twin(jitree.RandomForestClassifier)(n_estimators=2,
                                                     max_samples=0.01).fit(X, y)


@pytest.mark.parametrize("max_samples, error, message", [
    (0, ValueError, "max_samples must be >= 1"),
    (-3, ValueError, "max_samples must be >= 1"),
    (0.0, ValueError, "max_samples must be > 0"),
    (-0.5, ValueError, "max_samples must be > 0"),
    (float("nan"), ValueError, "max_samples must be > 0 and finite"),
    (float("inf"), ValueError, "max_samples must be > 0 and finite"),
    (True, TypeError, "max_samples must be None, an int"),
    ("half", TypeError, "max_samples must be None, an int"),
])
def test_max_samples_errors(data, max_samples, error, message):
    X, y, _ = data
    with pytest.raises(error, match=message):
        jitree.RandomForestClassifier(n_estimators=2, max_samples=max_samples).fit(X, y)


def test_max_samples_needs_bootstrap(data):
    X, y, _ = data
    with pytest.raises(ValueError, match="max_samples is only used with bootstrap=True"):
        jitree.RandomForestRegressor(bootstrap=False, max_samples=10).fit(X, data[2])


def test_class_weight_zero_everywhere_is_refused(data):
    X, y, _ = data
    with pytest.raises(ValueError, match="class_weight leaves every sample with weight 0"):
        jitree.ExtraTreesClassifier(n_estimators=2, class_weight={0: 0, 1: 0, 2: 0}).fit(X, y)
    with pytest.raises(ValueError, match="holds only classes whose class_weight is 0"):
        jitree.RandomForestClassifier(n_estimators=2, max_samples=1,
                                      class_weight={0: 0, 1: 0, 2: 0}).fit(X, y)
