"""Agreement with scikit-learn's trees (SPEC section 8) and its estimator protocol."""

import numpy as np
import pytest

import jitree

from naive import split_value

sklearn = pytest.importorskip("sklearn")
from sklearn.datasets import load_iris, make_classification, make_regression  # noqa: E402
from sklearn.tree import DecisionTreeClassifier as SkClassifier  # noqa: E402
from sklearn.tree import DecisionTreeRegressor as SkRegressor  # noqa: E402
from sklearn.utils.estimator_checks import check_estimator  # noqa: E402


def _canonical(feature, threshold, left, right, node=0):
    """Nested (feature, threshold, left, right) of a tree, independent of node numbering."""
    if left[node] < 0:
        return None
    return (int(feature[node]), float(threshold[node]),
            _canonical(feature, threshold, left, right, left[node]),
            _canonical(feature, threshold, left, right, right[node]))


def _structure(tree):
    return _canonical(tree.feature, tree.threshold, tree.children_left, tree.children_right)


def _assert_same_where_unique(ours, theirs, X, y, criterion, n_classes):
    """Walk both trees together. Nodes must have the same split unless the two splits are
    equally good on the node's samples (a tie, which each library breaks its own way); below
    a tie the subtrees are not compared. Returns the number of ties met."""
    w = np.ones(X.shape[0])
    ties = 0
    stack = [(0, 0, np.ones(X.shape[0], dtype=bool))]
    while stack:
        a, b, rows = stack.pop()
        a_leaf = ours.children_left[a] < 0
        b_leaf = theirs.children_left[b] < 0
        assert a_leaf == b_leaf, (a, b)
        if a_leaf:
            continue
        fa, ta = ours.feature[a], ours.threshold[a]
        fb, tb = theirs.feature[b], theirs.threshold[b]
        if (fa, ta) != (fb, tb):
            gain_a = split_value(criterion, y[rows], w[rows], X[rows, fa] <= ta, n_classes)
            gain_b = split_value(criterion, y[rows], w[rows], X[rows, fb] <= tb, n_classes)
            assert gain_a == pytest.approx(gain_b, rel=1e-9), (a, b, gain_a, gain_b)
            ties += 1
            continue
        goes_left = X[:, fa] <= ta
        stack.append((ours.children_left[a], theirs.children_left[b], rows & goes_left))
        stack.append((ours.children_right[a], theirs.children_right[b], rows & ~goes_left))
    return ties


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("criterion", ["gini", "entropy"])
@pytest.mark.parametrize("max_depth", [3, 5])
def test_depth_limited_classifier_identical_to_sklearn(seed, criterion, max_depth):
    X, y = make_classification(3000, 10, n_informative=6, n_classes=3, random_state=seed)
    X = X.astype(np.float32)
    ours = jitree.DecisionTreeClassifier(criterion=criterion, max_depth=max_depth).fit(X, y)
    theirs = SkClassifier(criterion=criterion, max_depth=max_depth, random_state=0).fit(X, y)
    ties = _assert_same_where_unique(ours.tree_, theirs.tree_, X, y, criterion, 3)
    if ties == 0:
        # the same splits, numbered in another order (scikit-learn's thresholds are
        # midpoints of float32 values, its nodes depth first)
        assert sorted(ours.tree_.n_node_samples) == sorted(theirs.tree_.n_node_samples)
        np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X))
        np.testing.assert_allclose(ours.feature_importances_, theirs.feature_importances_,
                                   rtol=1e-9, atol=1e-12)
    assert ties <= 1
    # same impurities at the root (entropy in bits on both sides)
    assert ours.tree_.impurity[0] == pytest.approx(theirs.tree_.impurity[0], rel=1e-12)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("max_depth", [3, 5])
def test_depth_limited_regressor_identical_to_sklearn(seed, max_depth):
    X, y = make_regression(3000, 10, n_informative=6, noise=5.0, random_state=seed)
    X = X.astype(np.float32)
    ours = jitree.DecisionTreeRegressor(max_depth=max_depth).fit(X, y)
    theirs = SkRegressor(max_depth=max_depth, random_state=0).fit(X, y)
    assert _structure(ours.tree_) == _structure(theirs.tree_)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-9)


@pytest.mark.parametrize("seed", [0, 1])
def test_weighted_and_best_first_identical_to_sklearn(seed):
    X, y = make_classification(2000, 8, n_informative=5, random_state=seed)
    X = X.astype(np.float32)
    w = np.random.default_rng(seed).uniform(0.5, 2.0, X.shape[0])
    params = dict(max_leaf_nodes=12, min_samples_leaf=5)
    ours = jitree.DecisionTreeClassifier(**params).fit(X, y, sample_weight=w)
    theirs = SkClassifier(random_state=0, **params).fit(X, y, sample_weight=w)
    assert _structure(ours.tree_) == _structure(theirs.tree_)


def test_full_regression_tree_same_size_as_sklearn():
    X, y = make_regression(4000, 10, noise=1.0, random_state=1)
    X = X.astype(np.float32)
    ours = jitree.DecisionTreeRegressor().fit(X, y)
    theirs = SkRegressor(random_state=0).fit(X, y)
    assert ours.tree_.node_count == theirs.tree_.node_count


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_full_classification_tree_as_close_as_sklearn_seeds(seed):
    # Deep nodes have many equally good splits; scikit-learn picks one by a random feature
    # order, jitree by the lowest feature index. Compare jitree with scikit-learn the way two
    # scikit-learn seeds compare with each other.
    X, y = make_classification(6000, 10, n_informative=6, n_classes=3, random_state=seed)
    X = X.astype(np.float32)
    X_train, y_train, X_test = X[:4000], y[:4000], X[4000:]
    ours = jitree.DecisionTreeClassifier().fit(X_train, y_train)
    seeds = [SkClassifier(random_state=s).fit(X_train, y_train) for s in range(6)]
    sizes = [m.tree_.node_count for m in seeds]
    # node counts: within the spread of scikit-learn's own seeds, widened by 2% for sampling
    low, high = min(sizes), max(sizes)
    assert low * 0.98 <= ours.tree_.node_count <= high * 1.02, (ours.tree_.node_count, sizes)
    reference = seeds[0].predict(X_test)
    between_seeds = max(np.mean(m.predict(X_test) != reference) for m in seeds[1:])
    ours_vs = np.mean(ours.predict(X_test) != reference)
    # allowance of 1.5x the worst seed-to-seed disagreement (the seeds are a small sample)
    assert ours_vs <= 1.5 * between_seeds + 0.005, (ours_vs, between_seeds)


def test_iris_full_tree_matches_sklearn_predictions():
    X, y = load_iris(return_X_y=True)
    ours = jitree.DecisionTreeClassifier().fit(X, y)
    theirs = SkClassifier(random_state=0).fit(X, y)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    assert ours.tree_.node_count == theirs.tree_.node_count


# jitree implements the protocol without inheriting from scikit-learn's BaseEstimator (no
# runtime dependency); check_estimator warns about that and then runs every check.
@pytest.mark.filterwarnings("ignore:Estimator .* does not inherit from:UserWarning")
# check_array_api_input is skipped unless SCIPY_ARRAY_API is set; the skip is a warning
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.SkipTestWarning")
@pytest.mark.parametrize("estimator", [jitree.DecisionTreeClassifier(random_state=0),
                                       jitree.DecisionTreeRegressor(random_state=0),
                                       jitree.ExtraTreeClassifier(random_state=0),
                                       jitree.ExtraTreeRegressor(random_state=0)],
                         ids=["classifier", "regressor", "extra-classifier", "extra-regressor"])
def test_check_estimator(estimator):
    check_estimator(estimator)


@pytest.mark.parametrize("regression", [False, True])
def test_extra_tree_is_a_random_decision_tree(regression, tmp_path):
    """ExtraTree*: scikit-learn's single extremely randomized trees, DecisionTree* with
    splitter="random" and scikit-learn's max_features ("sqrt"; 1.0) by default: the same trees
    as those, the same defaults as scikit-learn's, and saved and loaded as themselves."""
    from sklearn.tree import ExtraTreeClassifier as SkExtraClassifier
    from sklearn.tree import ExtraTreeRegressor as SkExtraRegressor

    if regression:
        X, y = make_regression(300, 6, noise=1.0, random_state=0)
        extra, plain, theirs = (jitree.ExtraTreeRegressor, jitree.DecisionTreeRegressor,
                                SkExtraRegressor)
    else:
        X, y = make_classification(300, 6, random_state=0)
        extra, plain, theirs = (jitree.ExtraTreeClassifier, jitree.DecisionTreeClassifier,
                                SkExtraClassifier)
    ours = theirs().get_params()
    for name in ("splitter", "max_features", "criterion", "max_depth", "min_samples_leaf"):
        assert extra().get_params()[name] == ours[name], name
    model = extra(random_state=3, max_depth=6).fit(X, y)
    same = plain(splitter="random", max_features=ours["max_features"], random_state=3,
                 max_depth=6).fit(X, y)
    for name in ("feature", "threshold", "children_left", "value"):
        np.testing.assert_array_equal(getattr(model.tree_, name), getattr(same.tree_, name))
    jitree.save(model, tmp_path / "extra.jitree")
    loaded = jitree.load(tmp_path / "extra.jitree")
    assert type(loaded) is extra
    assert loaded.get_params() == model.get_params()
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_works_in_sklearn_pipeline_and_grid_search():
    from sklearn.model_selection import GridSearchCV, cross_val_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = load_iris(return_X_y=True)
    pipe = make_pipeline(StandardScaler(), jitree.DecisionTreeClassifier(random_state=0))
    assert cross_val_score(pipe, X, y, cv=3).mean() > 0.85
    search = GridSearchCV(jitree.DecisionTreeClassifier(), {"max_depth": [1, 3, None]}, cv=3)
    search.fit(X, y)
    assert search.best_params_["max_depth"] in (3, None)


@pytest.mark.parametrize("regression", [False, True])
def test_unnormalised_importances_are_impurity_decreases(regression):
    """``tree_.compute_feature_importances(normalize=False)``: per feature, the sum over its
    nodes of (W_t I_t - W_l I_l - W_r I_r) / W, scikit-learn's unnormalised importances (the
    same values on the same regression tree)."""
    if regression:
        X, y = make_regression(2000, 5, noise=5.0, random_state=0)
        ours = jitree.DecisionTreeRegressor(max_depth=3).fit(X, y * 1e3)
        theirs = SkRegressor(max_depth=3, random_state=0).fit(X, y * 1e3)
        # the same splits, numbered in another order (scikit-learn's thresholds are
        # midpoints of float32 values, its nodes depth first)
        assert sorted(ours.tree_.n_node_samples) == sorted(theirs.tree_.n_node_samples)
        np.testing.assert_allclose(
            ours.tree_.compute_feature_importances(normalize=False),
            theirs.tree_.compute_feature_importances(normalize=False), rtol=1e-9)
    else:
        X, y = load_iris(return_X_y=True)
        ours = jitree.DecisionTreeClassifier(max_depth=3).fit(X, y)
    tree = ours.tree_
    w = tree.weighted_n_node_samples
    expected = np.zeros(X.shape[1])
    for node in range(tree.node_count):
        left, right = tree.children_left[node], tree.children_right[node]
        if left >= 0:
            expected[tree.feature[node]] += (w[node] * tree.impurity[node]
                                             - w[left] * tree.impurity[left]
                                             - w[right] * tree.impurity[right]) / w[0]
    np.testing.assert_allclose(tree.compute_feature_importances(normalize=False), expected,
                               rtol=1e-12)
    np.testing.assert_allclose(tree.compute_feature_importances(), expected / expected.sum(),
                               rtol=1e-12)


def test_tree_members_under_scikit_learns_names():
    """Code written against scikit-learn's ``tree_`` reads capacity, max_n_classes,
    missing_go_to_left, compute_node_depths() and predict(X): on trees of the same structure
    (a depth-limited regressor, NaN in one feature) they give scikit-learn's numbers."""
    X, y = make_regression(2000, 6, n_informative=4, noise=5.0, random_state=3)
    X = X.astype(np.float32)
    X[::9, 2] = np.nan
    ours = jitree.DecisionTreeRegressor(max_depth=4).fit(X, y).tree_
    theirs = SkRegressor(max_depth=4, random_state=0).fit(X, y).tree_
    assert _structure(ours) == _structure(theirs)
    # every node's (samples, depth from 1): the nodes are numbered in other orders
    assert sorted(zip(ours.n_node_samples, ours.compute_node_depths(), strict=True)) == \
        sorted(zip(theirs.n_node_samples, theirs.compute_node_depths(), strict=True))
    assert ours.compute_node_depths().dtype == np.int64
    assert ours.max_n_classes == theirs.max_n_classes == 1
    assert ours.capacity == ours.node_count
    internal = ours.children_left >= 0
    their_internal = theirs.children_left >= 0
    # each internal node's side for missing values, matched by (samples, depth)
    ours_key = sorted(zip(ours.n_node_samples[internal],
                          ours.compute_node_depths()[internal],
                          ours.missing_go_to_left[internal], strict=True))
    theirs_key = sorted(zip(theirs.n_node_samples[their_internal],
                            theirs.compute_node_depths()[their_internal],
                            theirs.missing_go_to_left[their_internal], strict=True))
    assert ours_key == theirs_key
    np.testing.assert_allclose(ours.predict(X).ravel(), theirs.predict(X).ravel(), rtol=1e-9)
    classifier = jitree.DecisionTreeClassifier(max_depth=3).fit(X, (y > 0).astype(int)).tree_
    assert classifier.max_n_classes == 2
    np.testing.assert_array_equal(classifier.predict(X[:50]),
                                  classifier.value[classifier.apply(X[:50])])
