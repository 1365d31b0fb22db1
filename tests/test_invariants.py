"""Invariants of fitted trees and of prediction."""

import threading
from unittest import mock

import numba
import numpy as np
import pytest

import jitree
from jitree._threading import n_threads
from jitree.kernels.predict import leaf_of_row

from naive import predict_walk


def _data(n=600, d=5, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(scale=0.5, size=n) > 0.3).astype(int)
    if classes == 3:
        y += (X[:, 2] > 0.8).astype(int)
    return X, y


def _same_tree(a, b):
    for name in ("feature", "threshold", "children_left", "children_right", "value",
                 "impurity", "n_node_samples", "weighted_n_node_samples"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@pytest.mark.parametrize("criterion", ["gini", "entropy", "misclassification", "gain_ratio",
                                       "cart", "twoing"])
def test_tree_structure_invariants(criterion):
    X, y = _data()
    model = jitree.DecisionTreeClassifier(criterion=criterion, max_depth=8).fit(X, y)
    tree = model.tree_
    internal = tree.children_left >= 0
    assert (tree.children_left[internal] > np.flatnonzero(internal)).all()
    assert (tree.children_right[internal] > np.flatnonzero(internal)).all()
    leaves = ~internal
    assert tree.n_node_samples[leaves].sum() == X.shape[0]
    assert (tree.feature[leaves] == jitree.TREE_UNDEFINED).all()
    # each internal node's samples are the sum of its children's
    left, right = tree.children_left[internal], tree.children_right[internal]
    np.testing.assert_array_equal(tree.n_node_samples[internal],
                                  tree.n_node_samples[left] + tree.n_node_samples[right])
    np.testing.assert_allclose(tree.value[internal], tree.value[left] + tree.value[right])
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert model.get_depth() <= 8


def test_apply_agrees_with_predict_and_naive_walk():
    X, y = _data()
    model = jitree.DecisionTreeClassifier(max_depth=10).fit(X, y)
    leaves = model.apply(X)
    np.testing.assert_array_equal(leaves, predict_walk(model.tree_, X))
    value = model.tree_.value[leaves]
    np.testing.assert_array_equal(model.predict(X), model.classes_[np.argmax(value, axis=1)])
    np.testing.assert_allclose(model.predict_proba(X), value / value.sum(axis=1, keepdims=True))
    path = model.decision_path(X)
    assert path.shape == (X.shape[0], model.tree_.node_count)
    np.testing.assert_array_equal(path.indices[path.indptr[1:] - 1], leaves)
    np.testing.assert_array_equal(np.diff(path.indptr), model.tree_.depth[leaves] + 1)


def test_sample_order_does_not_change_the_tree():
    X, y = _data()
    order = np.random.default_rng(1).permutation(X.shape[0])
    a = jitree.DecisionTreeClassifier().fit(X, y).tree_
    b = jitree.DecisionTreeClassifier().fit(X[order], y[order]).tree_
    _same_tree(a, b)


@pytest.mark.parametrize("params", [dict(), dict(max_features=2, random_state=3),
                                    dict(splitter="random", random_state=5),
                                    dict(max_leaf_nodes=20)])
@pytest.mark.parametrize("in_place", [False, True])
def test_results_do_not_depend_on_n_jobs(params, in_place, monkeypatch):
    from jitree.kernels import grower
    from jitree.model import _base, builder

    if numba.config.NUMBA_NUM_THREADS == 1:
        pytest.skip("one thread: n_jobs=2 would run the serial kernels too")
    if in_place:  # the partition in place of sorted arrays too large for a second copy
        monkeypatch.setattr(grower, "PING_PONG_BYTES", 0)
    # a fit this small runs on one thread whatever n_jobs (_PARALLEL_FIT_VALUES): lifted, so
    # that n_jobs=2 runs the parallel kernels (blocks of the search a thread)
    monkeypatch.setattr(_base, "_PARALLEL_FIT_VALUES", 0)
    blocks = []
    search_blocks = builder.search_blocks

    def spy():
        blocks.append(search_blocks())
        return blocks[-1]

    monkeypatch.setattr(builder, "search_blocks", spy)
    X, y = _data(n=2000)
    a = jitree.DecisionTreeClassifier(n_jobs=1, **params).fit(X, y)
    one_thread = list(blocks)
    b = jitree.DecisionTreeClassifier(n_jobs=2, **params).fit(X, y)
    assert set(one_thread) == {1}
    assert min(blocks[len(one_thread):]) > 1
    _same_tree(a.tree_, b.tree_)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_n_jobs_restores_thread_count():
    before = numba.get_num_threads()
    X, y = _data(n=100)
    jitree.DecisionTreeClassifier(n_jobs=1).fit(X, y).predict(X)
    assert numba.get_num_threads() == before


def test_n_threads_sets_a_changed_count_only_and_restores_it():
    """n_threads leaves numba's count alone when it is already the one asked for (a served
    row's call is not charged two set_num_threads) and restores a changed one, after an
    error too."""
    before = numba.get_num_threads()
    if before < 2:
        pytest.skip("needs two threads to change the count")
    with mock.patch.object(numba, "set_num_threads", wraps=numba.set_num_threads) as set_:
        with n_threads(before) as wanted:
            assert wanted == before and numba.get_num_threads() == before
        assert set_.call_count == 0
        with pytest.raises(RuntimeError), n_threads(1):
            assert numba.get_num_threads() == 1
            raise RuntimeError
        assert [call.args for call in set_.call_args_list] == [(1,), (before,)]
    assert numba.get_num_threads() == before


def test_random_state_reproducible_and_effective():
    X, y = _data()
    a = jitree.DecisionTreeClassifier(splitter="random", random_state=0).fit(X, y).tree_
    b = jitree.DecisionTreeClassifier(splitter="random", random_state=0).fit(X, y).tree_
    c = jitree.DecisionTreeClassifier(splitter="random", random_state=1).fit(X, y).tree_
    _same_tree(a, b)
    assert a.node_count != c.node_count or not np.array_equal(a.threshold, c.threshold)


def test_max_features_draws_only_that_many_features_per_node():
    X, y = _data(d=8)
    model = jitree.DecisionTreeClassifier(max_features=1, random_state=0, max_depth=1)
    roots = {model.set_params(random_state=s).fit(X, y).tree_.feature[0] for s in range(30)}
    assert len(roots) > 1  # a single drawn feature per node: the root varies with the seed


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("order", ["C", "F"])
def test_dtype_and_memory_order(dtype, order):
    X, y = _data()
    reference = jitree.DecisionTreeClassifier().fit(X.astype(dtype), y)
    Xo = np.asarray(X.astype(dtype), order=order)
    model = jitree.DecisionTreeClassifier().fit(Xo, y)
    _same_tree(reference.tree_, model.tree_)
    np.testing.assert_array_equal(model.predict(Xo), reference.predict(X.astype(dtype)))


def test_any_label_type():
    X, y = _data()
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    model = jitree.DecisionTreeClassifier(max_depth=4).fit(X, names)
    assert list(model.classes_) == ["setosa", "versicolor", "virginica"]
    numeric = jitree.DecisionTreeClassifier(max_depth=4).fit(X, y + 10)
    np.testing.assert_array_equal(model.predict(X), np.array(["setosa", "versicolor",
                                                              "virginica"])[
        numeric.predict(X) - 10])
    # int64 and float64 labels are written by the kernel directly, other types via classes_
    for labels in (y + 10, (y + 10).astype(np.float64), (y + 10).astype(np.int32),
                   (y + 10).astype(np.uint8)):
        other = jitree.DecisionTreeClassifier(max_depth=4).fit(X, labels)
        predicted = other.predict(X)
        assert predicted.dtype == labels.dtype
        np.testing.assert_array_equal(predicted, numeric.predict(X))


@pytest.mark.parametrize("categorical", [False, True])
def test_int64_labels_predicted_bit_exact(categorical):
    # int64 labels travel through the predict kernels as float64 bit patterns: labels whose
    # patterns are NaNs, -0.0 or beyond 2**53 must come back unchanged (flat and Tree walks)
    X, y = _data()
    special = np.array([np.iinfo(np.int64).min, 0x7FF0000000000001, 2**62 + 1], dtype=np.int64)
    labels = special[y]
    model = jitree.DecisionTreeClassifier(
        max_depth=4, categorical_features=[0] if categorical else None).fit(
            np.round(X) if categorical else X, labels)
    assert model.tree_.is_binary_threshold != categorical
    predicted = model.predict(np.round(X) if categorical else X)
    assert predicted.dtype == np.int64
    index = np.argmax(model.predict_proba(np.round(X) if categorical else X), axis=1)
    np.testing.assert_array_equal(predicted, model.classes_[index])
    leaves = model.apply(np.round(X) if categorical else X)
    assert leaves.dtype == np.int64
    assert (model.tree_.children_left[leaves] == -1).all()


def test_sample_weight_integer_equals_repetition():
    X, y = _data(n=200)
    w = np.random.default_rng(0).integers(1, 4, X.shape[0])
    weighted = jitree.DecisionTreeClassifier().fit(X, y, sample_weight=w)
    repeated = jitree.DecisionTreeClassifier().fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    np.testing.assert_array_equal(weighted.tree_.feature, repeated.tree_.feature)
    np.testing.assert_array_equal(weighted.tree_.threshold, repeated.tree_.threshold)
    np.testing.assert_array_equal(weighted.predict(X), repeated.predict(X))


def test_class_weight_balanced_equals_explicit_weights():
    X, y = _data()
    counts = np.bincount(y)
    explicit = (X.shape[0] / (3 * counts))[y]
    a = jitree.DecisionTreeClassifier(class_weight="balanced").fit(X, y)
    b = jitree.DecisionTreeClassifier().fit(X, y, sample_weight=explicit)
    _same_tree(a.tree_, b.tree_)
    c = jitree.DecisionTreeClassifier(class_weight={0: 1.0, 1: 5.0, 2: 1.0}).fit(X, y)
    d = jitree.DecisionTreeClassifier().fit(X, y, sample_weight=np.where(y == 1, 5.0, 1.0))
    _same_tree(c.tree_, d.tree_)


def test_stopping_rules():
    X, y = _data(n=1000)
    full = jitree.DecisionTreeClassifier().fit(X, y)
    for params in (dict(max_depth=3), dict(min_samples_leaf=20), dict(min_samples_split=50),
                   dict(min_weight_fraction_leaf=0.05), dict(min_impurity_decrease=0.01),
                   dict(max_leaf_nodes=10), dict(purity_threshold=0.8),
                   dict(impurity_threshold=0.3)):
        model = jitree.DecisionTreeClassifier(**params).fit(X, y)
        assert model.tree_.node_count < full.tree_.node_count, params
    tree = jitree.DecisionTreeClassifier(max_leaf_nodes=10).fit(X, y).tree_
    assert tree.n_leaves == 10
    tree = jitree.DecisionTreeClassifier(purity_threshold=0.8).fit(X, y).tree_
    internal = tree.children_left >= 0
    purity = tree.value.max(axis=1) / tree.value.sum(axis=1)
    assert (purity[internal] < 0.8).all()
    tree = jitree.DecisionTreeClassifier(impurity_threshold=0.3).fit(X, y).tree_
    assert (tree.impurity[tree.children_left >= 0] > 0.3).all()
    tree = jitree.DecisionTreeClassifier(min_weight_fraction_leaf=0.05).fit(X, y).tree_
    assert tree.weighted_n_node_samples[tree.children_left < 0].min() >= 0.05 * X.shape[0]


def test_best_first_grows_largest_decrease_first():
    # max_leaf_nodes=k+1 is the k-split tree; each one is a prefix of the next one's splits
    X, y = _data(n=1000)
    previous = None
    for k in range(2, 8):
        tree = jitree.DecisionTreeClassifier(max_leaf_nodes=k).fit(X, y).tree_
        splits = {(int(f), float(t))
                  for f, t in zip(tree.feature, tree.threshold, strict=True) if f >= 0}
        assert len(splits) == k - 1
        if previous is not None:
            assert previous <= splits
        previous = splits


def test_feature_importances():
    X, y = _data()
    model = jitree.DecisionTreeClassifier().fit(X, y)
    importances = model.feature_importances_
    assert importances.shape == (X.shape[1],)
    assert importances.sum() == pytest.approx(1.0)
    # features 0, 1, 2 carry the signal, 3 and 4 are noise
    assert set(np.argsort(importances)[-3:]) == {0, 1, 2}
    tree = model.tree_
    naive = np.zeros(X.shape[1])
    for node in np.flatnonzero(tree.children_left >= 0):
        left, right = tree.children_left[node], tree.children_right[node]
        w = tree.weighted_n_node_samples
        naive[tree.feature[node]] += (w[node] * tree.impurity[node] - w[left] * tree.impurity[left]
                                      - w[right] * tree.impurity[right])
    np.testing.assert_allclose(importances, naive / naive.sum())


def test_regressor_basic_invariants():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 4))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=500)
    model = jitree.DecisionTreeRegressor(max_depth=6).fit(X, y)
    leaves = model.apply(X)
    np.testing.assert_allclose(model.predict(X), model.tree_.value[leaves, 0])
    for leaf in np.unique(leaves):
        np.testing.assert_allclose(model.tree_.value[leaf, 0], y[leaves == leaf].mean())
    full = jitree.DecisionTreeRegressor().fit(X, y)
    assert full.score(X, y) == pytest.approx(1.0)


def test_predict_kernel_callable_from_user_njit():
    X, y = _data()
    tree = jitree.DecisionTreeClassifier(max_depth=6).fit(X, y).tree_

    @numba.njit
    def count_rows_in_leaf(X, feature, threshold, left, right, wanted):
        count = 0
        for i in range(X.shape[0]):
            if leaf_of_row(X, i, feature, threshold, left, right) == wanted:
                count += 1
        return count

    leaves = tree.apply(X)
    wanted = leaves[0]
    got = count_rows_in_leaf(X, tree.feature, tree.threshold, tree.children_left,
                             tree.children_right, wanted)
    assert got == np.count_nonzero(leaves == wanted)


def test_concurrent_predict_from_eight_threads():
    X, y = _data(n=20000)
    model = jitree.DecisionTreeClassifier().fit(X, y)
    expected = model.predict_proba(X)
    results = [None] * 8
    errors = []

    def work(k):
        try:
            for _ in range(3):
                results[k] = model.predict_proba(X)
        except Exception as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for result in results:
        np.testing.assert_array_equal(result, expected)


def test_pickle_round_trip():
    import pickle

    X, y = _data()
    model = jitree.DecisionTreeClassifier(max_depth=5).fit(X, y)
    clone = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(clone.predict_proba(X), model.predict_proba(X))


def test_params_protocol():
    model = jitree.DecisionTreeClassifier(max_depth=3)
    assert model.get_params()["max_depth"] == 3
    assert model.set_params(max_depth=4) is model and model.max_depth == 4
    copy = jitree.clone(model)
    assert copy.get_params() == model.get_params() and copy is not model
    assert repr(model) == "DecisionTreeClassifier(max_depth=4)"
    with pytest.raises(ValueError, match="Invalid parameter 'depth'"):
        model.set_params(depth=2)


def test_export_text_shows_the_splits():
    X, y = _data()
    model = jitree.DecisionTreeClassifier(max_depth=2).fit(X, y)
    text = jitree.export_text(model, feature_names=list("abcde"), decimals=4)
    tree = model.tree_
    assert text.splitlines()[0] == f"|--- {'abcde'[tree.feature[0]]} <= {tree.threshold[0]:.4f}"
    assert text.count("class:") == tree.n_leaves


def test_more_than_256_classes_use_wide_labels():
    # 300 classes do not fit the compact 8-bit label type: the 16-bit path must agree with a
    # naive check (a full tree on distinct rows reproduces its training labels)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1200, 3))
    y = np.arange(1200) % 300
    model = jitree.DecisionTreeClassifier().fit(X, y)
    assert model.n_classes_ == 300
    np.testing.assert_array_equal(model.predict(X), y)
    shallow = jitree.DecisionTreeClassifier(max_depth=3).fit(X, y)
    leaves = shallow.apply(X)
    for leaf in np.unique(leaves):
        np.testing.assert_array_equal(shallow.tree_.value[leaf],
                                      np.bincount(y[leaves == leaf], minlength=300))


def test_estimators_sharing_a_tree_keep_their_own_labels():
    X, y = _data(n=300, classes=2)
    first = jitree.DecisionTreeClassifier(max_depth=3).fit(X, y)
    first.predict(X)
    other = jitree.DecisionTreeClassifier._from_tree(first.tree_, classes=np.array([10, 20]))
    np.testing.assert_array_equal(other.predict(X), np.where(first.predict(X) == 1, 20, 10))
