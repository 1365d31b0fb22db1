"""Forests: equal to a single tree when reduced to one, deterministic, OOB against a naive
twin, prediction against the mean of the trees, scikit-learn's protocol."""

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jitree
from jitree.datasets import make_classification_data
from jitree.kernels import predict as predict_kernels
from jitree.kernels.predict import one_hot_rows
from jitree.model import forest as forest_module
from jitree.model import tree as tree_module
from jitree.model.tree import (
    ProbabilityRows,
    Tree,
    _one_hot_columns,
    flat_trees,
    float32_below,
)

from naive import predict_walk

FORESTS = [jitree.RandomForestClassifier, jitree.ExtraTreesClassifier,
           jitree.RandomForestRegressor, jitree.ExtraTreesRegressor]


@pytest.fixture(scope="module")
def data():
    X, y = make_classification_data(1500, 6, 3, seed=3)
    return X, y, X[:, 0] * 2.0 + y


def _target(cls, data):
    X, y, y_reg = data
    return y if cls in (jitree.RandomForestClassifier, jitree.ExtraTreesClassifier) else y_reg


def _same_tree(a, b):
    for name in ("feature", "threshold", "children_left", "children_right", "value"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@pytest.mark.parametrize("cls, single", [
    (jitree.RandomForestClassifier, jitree.DecisionTreeClassifier),
    (jitree.RandomForestRegressor, jitree.DecisionTreeRegressor)])
def test_one_tree_without_bootstrap_is_the_single_tree(data, cls, single):
    X = data[0]
    y = _target(cls, data)
    forest = cls(n_estimators=1, bootstrap=False, max_features=None, random_state=0).fit(X, y)
    tree = single().fit(X, y)
    _same_tree(forest.estimators_[0].tree_, tree.tree_)
    if hasattr(forest, "predict_proba"):
        np.testing.assert_allclose(forest.predict_proba(X), tree.predict_proba(X))
    np.testing.assert_array_equal(forest.predict(X), tree.predict(X))


def test_extra_trees_one_tree_is_a_random_splitter_tree(data):
    X, y, _ = data
    forest = jitree.ExtraTreesClassifier(n_estimators=1, max_features=None,
                                         random_state=7).fit(X, y)
    seed = int(np.random.RandomState(7).randint(np.iinfo(np.int32).max, size=1)[0])
    tree = jitree.DecisionTreeClassifier(splitter="random", random_state=seed).fit(X, y)
    _same_tree(forest.estimators_[0].tree_, tree.tree_)


@pytest.mark.parametrize("cls", FORESTS)
def test_deterministic_whatever_n_jobs(data, cls):
    X = data[0]
    y = _target(cls, data)
    a = cls(n_estimators=6, random_state=1, n_jobs=1).fit(X, y)
    b = cls(n_estimators=6, random_state=1, n_jobs=2).fit(X, y)
    for tree_a, tree_b in zip(a.estimators_, b.estimators_, strict=True):
        _same_tree(tree_a.tree_, tree_b.tree_)
    c = cls(n_estimators=6, random_state=2).fit(X, y)
    assert any(ta.tree_.node_count != tc.tree_.node_count
               or not np.array_equal(ta.tree_.threshold, tc.tree_.threshold)
               for ta, tc in zip(a.estimators_, c.estimators_, strict=True))


@pytest.mark.parametrize("cls", FORESTS)
def test_prediction_is_the_mean_of_the_trees(data, cls):
    X = data[0]
    y = _target(cls, data)
    forest = cls(n_estimators=7, random_state=0, max_depth=6).fit(X, y)
    X_test = np.ascontiguousarray(X[::-3])
    if hasattr(forest, "predict_proba"):
        mean = np.mean([t.predict_proba(X_test) for t in forest.estimators_], axis=0)
        np.testing.assert_allclose(forest.predict_proba(X_test), mean, rtol=1e-12)
        np.testing.assert_array_equal(forest.predict(X_test),
                                      forest.classes_[np.argmax(mean, axis=1)])
    else:
        mean = np.mean([t.predict(X_test) for t in forest.estimators_], axis=0)
        np.testing.assert_allclose(forest.predict(X_test), mean, rtol=1e-12)
    assert forest.apply(X_test).shape == (X_test.shape[0], 7)
    importances = forest.feature_importances_
    expected = np.mean([t.feature_importances_ for t in forest.estimators_], axis=0)
    np.testing.assert_allclose(importances, expected / expected.sum())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_leaf_rows_predict_as_node_rows(monkeypatch, data, dtype):
    """A forest's table has a row per leaf, found through the rank in the leaf's NaN
    threshold; a forest whose trees outgrow the rank's bits keeps a row per flat node. Both
    give the same predictions bit for bit: dense X with and without NaN, CSR X."""
    sparse = pytest.importorskip("scipy.sparse")
    X = data[0].astype(dtype)
    X[::7, 2] = np.nan
    forest = jitree.RandomForestClassifier(n_estimators=5, max_depth=7,
                                           random_state=1).fit(X, data[1])
    X_test = np.where(np.arange(X.shape[0])[:, None] % 5 == 0, 0.0, X).astype(dtype)
    inputs = [X_test, np.nan_to_num(X_test), sparse.csr_matrix(np.nan_to_num(X_test))]
    by_leaf = [forest.predict_proba(x) for x in inputs]
    flat, table = forest._layout(dtype)
    leaves = flat.left == np.arange(flat.left.shape[0])
    assert not flat.votes.any()  # trees of 7 levels: impure leaves
    assert table.shape[0] == leaves.sum() == sum(t.tree_.n_leaves for t in forest.estimators_)
    assert np.isnan(flat.threshold[leaves]).all() and not np.isnan(flat.threshold[~leaves]).any()
    monkeypatch.setattr(jitree.kernels.predict, "LEAF_RANK_BITS", 2)  # 4 leaves at most
    forest._layouts = {}
    flat, table = forest._layout(dtype)
    assert (flat.leaf_base == -1).all() and table.shape[0] == flat.left.shape[0]
    assert np.isposinf(flat.threshold[leaves]).all()
    for x, expected in zip(inputs, by_leaf, strict=True):
        np.testing.assert_array_equal(forest.predict_proba(x), expected)


def _mean_of_leaf_rows(forest, X):
    """Twin of the forest kernels' sum: each tree's table row at the leaf its own walk
    (``apply``) reaches, the first tree's taken, the others added in turn, then divided."""
    leaves = np.column_stack([model.tree_.apply(X) for model in forest.estimators_])
    total = None
    for t, model in enumerate(forest.estimators_):
        rows = forest._node_table(model)[leaves[:, t]]
        total = rows.copy() if total is None else total + rows
    return total / len(forest.estimators_)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("first", ["votes", "table"])
def test_voting_trees_predict_as_their_table_rows(data, dtype, first):
    """Trees whose leaves are all pure vote (1.0 to their class's column, no table row); the
    others read their table. A forest of both predicts bit for bit what its trees' table rows
    add up to: dense X with and without NaN, CSR X, whichever kind of tree comes first."""
    sparse = pytest.importorskip("scipy.sparse")
    X = data[0].astype(dtype)
    X[::7, 2] = np.nan
    pure = jitree.RandomForestClassifier(n_estimators=4, random_state=1).fit(X, data[1])
    shallow = jitree.RandomForestClassifier(n_estimators=3, max_depth=3,
                                            random_state=2).fit(X, data[1])
    full = list(pure.estimators_)
    pairs = [full, shallow.estimators_]
    if first == "table":
        pairs.reverse()
    forest = pure
    forest.estimators_ = [tree for pair in zip(pairs[0][:3], pairs[1][:3], strict=True)
                          for tree in pair] + full[3:]
    forest._layouts = {}
    flat, table = forest._layout(dtype)
    # full depth: pure leaves; 3 levels: impure ones
    votes = [any(tree is model for model in full) for tree in forest.estimators_]
    np.testing.assert_array_equal(flat.votes, votes)
    assert table.shape[0] == sum(tree.tree_.n_leaves for tree, vote
                                 in zip(forest.estimators_, votes, strict=True) if not vote)
    X_test = np.where(np.arange(X.shape[0])[:, None] % 5 == 0, 0.0, X).astype(dtype)
    for x in [X_test, np.nan_to_num(X_test)]:
        np.testing.assert_array_equal(forest.predict_proba(x), _mean_of_leaf_rows(forest, x))
    x = np.nan_to_num(X_test)
    np.testing.assert_array_equal(forest.predict_proba(sparse.csr_matrix(x)),
                                  _mean_of_leaf_rows(forest, x))


def test_voting_categorical_forest_predicts_as_its_table_rows():
    """The category walk votes too (full-depth trees with category tests)."""
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.integers(0, 9, 2000), rng.normal(size=(2000, 3))])
    y = (X[:, 0] % 3 == 0).astype(int) + (X[:, 1] > 0)
    X[rng.random(X.shape) < 0.05] = np.nan
    forest = jitree.RandomForestClassifier(n_estimators=5, random_state=0,
                                           categorical_features=[0]).fit(X, y)
    assert forest._walk_kind() == "categories" and forest._layout(X.dtype)[0].votes.all()
    np.testing.assert_array_equal(forest.predict_proba(X), _mean_of_leaf_rows(forest, X))


def test_tasks_hold_a_bounded_part_of_x():
    """A prediction task's rows stay within TASK_BYTES of X (more rows for narrow
    X), within FOREST_CHUNK_ROWS, at 64 rows or more, and at least 4 tasks a thread on
    small inputs."""
    rows_of = forest_module.forest_chunk_rows
    budget = tree_module.TASK_BYTES
    assert rows_of(10**7, 8 * 20, 2) == budget // 160
    assert rows_of(10**7, 4 * 20, 2) == budget // 80 > rows_of(10**7, 8 * 20, 2)
    assert rows_of(10**7, 8, 2) == forest_module.FOREST_CHUNK_ROWS
    assert rows_of(10**7, 8 * 10**6, 2) == 64  # a row larger than the budget: 64 rows
    assert rows_of(10**7, 0, 2) == forest_module.FOREST_CHUNK_ROWS  # sparse rows
    assert rows_of(8000, 8, 2) == 1000 and rows_of(8000, 8, 1) == 2000
    assert rows_of(100, 8, 2) == 64


@pytest.mark.parametrize("cls", [jitree.RandomForestClassifier, jitree.RandomForestRegressor])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_prediction_in_tasks_of_64_rows(monkeypatch, data, cls, dtype):
    """A budget of 3 bytes cuts 1,000 rows into tasks of 64 rows, the last one shorter: the
    same bits as the default tasks (at least 4 a thread), numeric and category walks."""
    X = data[0].astype(dtype)
    X[:, 0] = np.floor(np.abs(X[:, 0]) * 3) % 7  # a categorical column
    X[::9, 1] = np.nan
    y = _target(cls, data)
    forests = [cls(n_estimators=4, random_state=0).fit(X, y),
               cls(n_estimators=4, random_state=0, categorical_features=[0]).fit(X, y)]
    assert [f._walk_kind() for f in forests] == ["threshold", "categories"]
    X_test = X[:1000]
    method = "predict_proba" if hasattr(forests[0], "predict_proba") else "predict"
    whole = [getattr(forest, method)(X_test) for forest in forests]
    monkeypatch.setattr(tree_module, "TASK_BYTES", 3)
    assert forest_module.forest_chunk_rows(1000, X.shape[1] * X.itemsize, 2) == 64
    for forest, expected, name in zip(forests, whole,
                                      ["predict_flat", "predict_flat_categories"], strict=True):
        kernel = getattr(predict_kernels, name)
        with mock.patch.object(predict_kernels, name, wraps=kernel) as walk:
            np.testing.assert_array_equal(getattr(forest, method)(X_test), expected)
        assert walk.call_count == 1 and walk.call_args.args[-2] == 64
        if method == "predict_proba":
            np.testing.assert_array_equal(expected, _mean_of_leaf_rows(forest, X_test))


def _leaves_by_arrays(tree, X):
    """Each row's leaf by the Tree arrays, one row and one node at a time (a missing value
    goes to the side ``missing_left`` gives)."""
    leaves = np.empty(X.shape[0], dtype=np.int64)
    for i, row in enumerate(X):
        node = 0
        while tree.children_left[node] >= 0:
            x = row[tree.feature[node]]
            go_left = tree.missing_left[node] if np.isnan(x) else x <= tree.threshold[node]
            node = tree.children_left[node] if go_left else tree.children_right[node]
        leaves[i] = node
    return leaves


@pytest.mark.parametrize("cls", [jitree.RandomForestClassifier, jitree.RandomForestRegressor])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_few_rows_walk_blocks_of_trees_on_the_calling_thread(data, cls, dtype):
    """A prediction of at most FEW_ROWS dense rows runs predict_flat's serial twin, and the
    rows of a task of fewer than LANES rows in whole blocks, or left over from its blocks, walk
    TREE_BLOCK trees side by side: 37 trees (two blocks and five), voting and table trees
    mixed, rows with and without NaN, 1 to FEW_ROWS rows and one more: each tree's table row at
    the leaf the Tree arrays give, added in tree order, to the bit. An infinity is refused as
    in a larger call. A single tree takes the serial twin up to FEW_ROWS rows too."""
    X = data[0].astype(dtype)
    X[::7, 2] = np.nan
    y = _target(cls, data)
    forest = cls(n_estimators=37, random_state=3).fit(X, y)
    shallow = cls(n_estimators=37, max_depth=4, random_state=4).fit(X, y)
    forest.estimators_ = [tree for pair in zip(forest.estimators_, shallow.estimators_,
                                               strict=True) for tree in pair][:37]
    forest._layouts = {}
    flat, _ = forest._layout(X.dtype)
    if cls is jitree.RandomForestClassifier:
        assert 0 < flat.votes.sum() < 37  # full-depth trees vote, four-level ones do not
    assert flat.root.shape[0] > 2 * predict_kernels.TREE_BLOCK
    method = "predict_proba" if hasattr(forest, "predict_proba") else "predict"

    def twin(rows):
        total = None
        for model in forest.estimators_:
            leaf_rows = forest._node_table(model)[_leaves_by_arrays(model.tree_, rows)]
            total = leaf_rows.copy() if total is None else total + leaf_rows
        mean = total / len(forest.estimators_)
        return mean if method == "predict_proba" else mean[:, 0]

    serial = predict_kernels.predict_flat_serial
    few = tree_module.FEW_ROWS
    assert 17 < predict_kernels.LANES < few
    for n_rows in (1, 5, 17, few, few + 1):
        for rows in (X[:n_rows], X[7:7 + n_rows], np.nan_to_num(X[1:1 + n_rows])):
            expected = twin(rows)
            with mock.patch.object(predict_kernels, "predict_flat_serial",
                                   wraps=serial) as walk:
                np.testing.assert_array_equal(getattr(forest, method)(rows), expected)
            assert walk.call_count == (1 if n_rows <= few else 0)
    rows = X[:3].copy()
    rows[1, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        getattr(forest, method)(rows)
    tree = forest.estimators_[0]
    for n_rows in (few, few + 1):
        with mock.patch.object(predict_kernels, "predict_flat_serial", wraps=serial) as walk:
            np.testing.assert_array_equal(tree.predict(X[:n_rows]),
                                          tree.predict(X[:2 * few])[:n_rows])
        assert walk.call_count == (1 if n_rows <= few else 0)


def _general_path(forest, method, X):
    """``method`` of ``forest`` on X with the served calls' shortcut turned off."""
    with mock.patch.object(type(forest), "_served_mean", lambda self, X: None):
        return getattr(forest, method)(X)


@pytest.mark.parametrize("cls", [jitree.RandomForestClassifier, jitree.RandomForestRegressor])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_served_rows_give_the_general_paths_bits(data, cls, dtype):
    """A served call (a plain C-contiguous float ndarray of 1 .. FEW_ROWS rows through
    threshold trees) takes the shortcut of _served_mean and gives the general path's bits,
    NaN included, for predict and predict_proba, one and two outputs; an infinity is
    refused alike. Any other X (more rows, F order, a strided view, ints, a list, the wrong
    width, no rows) takes the general path. The shortcut follows a change of
    ``estimators_``."""
    X = data[0].astype(dtype)
    X[::5, 1] = np.nan
    y = _target(cls, data)
    few = tree_module.FEW_ROWS
    for target in (y, np.column_stack([y, y[::-1]])):
        forest = cls(n_estimators=12, random_state=1).fit(X, target)
        methods = ["predict", "predict_proba"] if hasattr(forest, "predict_proba") \
            else ["predict"]
        for rows in (X[:1], X[3:8], X[:few], np.ascontiguousarray(X[5:5 + few][::-1])):
            for method in methods:
                with mock.patch.object(type(forest), "_walked_as_given",
                                       side_effect=AssertionError("the general path")):
                    got = getattr(forest, method)(rows)
                expected = _general_path(forest, method, rows)
                if isinstance(expected, list):
                    for a, b in zip(got, expected, strict=True):
                        np.testing.assert_array_equal(a, b)
                else:
                    np.testing.assert_array_equal(got, expected)
    inf_rows = X[:3].copy()
    inf_rows[1, 4] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        forest.predict(inf_rows)
    others = [X[:few + 1], np.asfortranarray(X[:6]), X[:12:2],
              np.nan_to_num(X[:4]).astype(np.int64), X[:2].tolist(),
              np.ascontiguousarray(X[:3, :5]), X[:0]]
    for rows in others:
        assert forest._served_mean(rows) is None
    with pytest.raises(ValueError, match="features"):
        forest.predict(others[-2])
    method = methods[-1]  # probabilities or means
    before = getattr(forest, method)(X[:4])
    forest.estimators_ = forest.estimators_[:3]
    after = getattr(forest, method)(X[:4])
    np.testing.assert_array_equal(after, _general_path(forest, method, X[:4]))
    assert not np.array_equal(after, before)  # the three trees' mean, not the twelve's


def test_served_rows_of_named_or_categorical_forests():
    """A forest fitted on named columns warns of a served ndarray as the general path does;
    a forest with category tests never takes the shortcut (its walk reads categories)."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(2)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] > 0).astype(int)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    forest = jitree.RandomForestClassifier(n_estimators=5, random_state=0).fit(frame, y)
    with pytest.warns(UserWarning, match="valid feature names"):
        served = forest.predict_proba(X[:2])
    with mock.patch.object(type(forest), "_walked_as_given",
                           side_effect=AssertionError("the general path")), \
            pytest.warns(UserWarning, match="valid feature names"):
        assert forest._served_mean(X[:2]) is not None
    np.testing.assert_array_equal(served, forest.predict_proba(frame.iloc[:2]))
    codes = np.column_stack([rng.integers(0, 6, 400), X[:, 1:]])
    categorical = jitree.RandomForestClassifier(n_estimators=5, random_state=0,
                                                categorical_features=[0]).fit(codes, y)
    assert categorical._walk_kind() == "categories"
    assert categorical._served_mean(codes[:2]) is None
    assert categorical.predict_proba(codes[:2]).shape == (2, 2)


@pytest.mark.parametrize("split", ["subset", "multiway"])
def test_few_rows_of_a_categorical_forest_walk_blocks_of_trees(split):
    """The category walk's rows left over from its blocks of CATEGORY_BLOCK_ROWS rows walk
    TREE_BLOCK trees side by side too: 37 trees, 1 to 9 rows and a task's leftover, with
    missing and unseen categories and NaN in numeric columns: the bits of the same rows
    walked in blocks (each row repeated CATEGORY_BLOCK_ROWS times, in tasks of a multiple
    of that many rows) and of the trees' table rows added in tree order. Up to FEW_ROWS
    rows, the forest and a lone tree take the kernel's serial twin (on the calling
    thread), beyond it the parallel kernel."""
    rng = np.random.default_rng(5)
    X = np.column_stack([rng.integers(0, 90, 3000), rng.integers(0, 5, 3000),
                         rng.normal(size=(3000, 3))])
    y = (X[:, 0] % 3 == 0).astype(int) + (X[:, 2] > 0)
    X[rng.random(X.shape) < 0.05] = np.nan
    forest = jitree.RandomForestClassifier(n_estimators=37, max_depth=8, random_state=0,
                                           categorical_features=[0, 1], n_jobs=2,
                                           categorical_split=split).fit(X, y)
    assert forest._walk_kind() == "categories"
    block = predict_kernels.CATEGORY_BLOCK_ROWS
    X_test = X[:60].copy()
    X_test[8, 0] = 1000.0  # a category unseen in training
    serial = predict_kernels.predict_flat_categories_serial
    few = tree_module.FEW_ROWS
    tree = forest.estimators_[0]
    for n_rows in (1, 5, 9, 35):
        rows = X_test[8:8 + n_rows]
        repeated = np.repeat(rows, block, axis=0)
        assert forest_module.forest_chunk_rows(len(repeated), 40, 2) % block == 0
        expected = forest.predict_proba(repeated)[::block]
        expected_tree = tree.predict_proba(repeated)[::block]
        for model, want in ((forest, expected), (tree, expected_tree)):
            for n in (n_rows, len(repeated)):
                with mock.patch.object(predict_kernels, "predict_flat_categories_serial",
                                       wraps=serial) as walk:
                    got = model.predict_proba(rows if n == n_rows else repeated)
                np.testing.assert_array_equal(got if n == n_rows else got[::block], want)
                assert walk.call_count == (1 if n <= few else 0)
        np.testing.assert_array_equal(expected, _mean_of_leaf_rows(
            forest, forest._validate_predict_X(rows)))


@pytest.mark.parametrize("method", ["predict", "predict_proba", "apply"])
def test_a_contiguous_float_array_of_numeric_features_skips_the_validation(data, method):
    """A C- or F-ordered float32 / float64 ndarray of a forest or tree of numeric features
    is walked as given (check_X, which would return it unchanged, is not called); a strided
    view, a list, a wrong width go through the validation: the same predictions, and its
    errors. A model with an ordinal feature encodes the same X; a forest whose
    ``estimators_`` were replaced by trees of another width checks X against them."""
    from jitree.model import _base
    from jitree.model.categories import FeatureEncoder

    X, y = data[0][:400], data[1][:400]
    forest = jitree.RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    tree = jitree.DecisionTreeClassifier(random_state=0).fit(X, y)
    for model in (forest, tree):
        expected = getattr(model, method)(X[:50])
        rounded = X[:50].astype(np.float32)
        as_given = [X[:50], np.asfortranarray(X[:50]), X[:1], rounded]
        validated = [np.repeat(X[:50], 2, axis=0)[::2], X[:50].tolist()]
        for rows in as_given + validated:
            with mock.patch.object(_base, "check_X", wraps=_base.check_X) as check:
                got = getattr(model, method)(rows)
            assert check.call_count == (0 if any(rows is r for r in as_given) else 1)
            if rows is not rounded:
                np.testing.assert_array_equal(got, expected[:len(got)])
        np.testing.assert_array_equal(getattr(model, method)(rounded),
                                      getattr(model, method)(rounded.astype(np.float64)))
        with pytest.raises(ValueError, match="features, but"):
            getattr(model, method)(X[:5, :-1])
        with pytest.raises(ValueError, match="infinity"):
            getattr(model, method)(np.where(np.arange(X.shape[1]) == 2, np.inf, X[:5]))
    ordinal = jitree.RandomForestClassifier(n_estimators=5, random_state=0,
                                            ordinal_features=[0]).fit(X, y)
    with mock.patch.object(FeatureEncoder, "transform",
                           autospec=True, side_effect=FeatureEncoder.transform) as encode:
        got = getattr(ordinal, method)(X[:50])
    assert encode.call_count == 1
    np.testing.assert_array_equal(got, getattr(ordinal, method)(X[:50].tolist()))
    wide = jitree.RandomForestClassifier(n_estimators=2, random_state=0).fit(
        np.column_stack([X, X[:, :2]]), y)
    forest.estimators_ = wide.estimators_
    forest._layouts = {}
    with pytest.raises(ValueError, match="features, but"):
        getattr(forest, method)(X[:5])


@pytest.fixture(scope="module")
def lane_forests(data):
    """A classifier forest of full-depth trees (which vote) and a regressor forest of
    shallow and deep trees (table rows), grown on ``data`` with NaN in a column."""
    X = data[0].copy()
    X[::7, 2] = np.nan
    classifier = jitree.RandomForestClassifier(n_estimators=6, random_state=2).fit(X, data[1])
    regressor = jitree.RandomForestRegressor(n_estimators=5, max_depth=9, random_state=3).fit(
        X, _target(jitree.RandomForestRegressor, data))
    return X, (classifier, regressor)


@settings(max_examples=60, deadline=None)
@given(which=st.integers(0, 1), walk=st.sampled_from(["layout", "lanes", "blocks"]),
       n_rows=st.integers(1, 300), chunk_rows=st.integers(1, 320), start=st.integers(0, 500),
       order=st.sampled_from("CF"), dtype=st.sampled_from([np.float32, np.float64]),
       nan=st.booleans())
def test_lanes_walk_every_row_to_the_leaf_of_the_tree_arrays(lane_forests, which, walk, n_rows,
                                                            chunk_rows, start, order, dtype,
                                                            nan):
    """predict_flat, whose tasks of at least LANES rows in whole blocks walk each tree in
    lanes (each lane taking the task's next row when its row is at a leaf) or in blocks, the
    other rows trees side by side, and apply_flat, against a row-by-row walk of the Tree
    arrays: any number of rows and rows per task (tasks ending mid-way through the lanes,
    lanes left idle), C- and F-ordered X, float32 and float64, with and without NaN, each
    tree in the walk its layout gives it, or every tree in lanes or in blocks
    (``FlatTrees.lanes`` set). Each row's sum of its trees' votes (the classifier) or table
    rows (the regressor, whose table is small enough for the lanes) is the naive walk's,
    added in tree order, to the bit; apply's leaves are the Tree arrays' leaves."""
    X_all, forests = lane_forests
    forest = forests[which]
    assert forest._layout(np.float64)[0].votes.all() == (which == 0)
    X = X_all[start:start + n_rows].astype(dtype)
    if not nan:
        X = np.nan_to_num(X)
    X = np.asfortranarray(X) if order == "F" else np.ascontiguousarray(X)
    flat, table = forest._layout(X.dtype)
    assert table.nbytes <= len(forest.estimators_) * predict_kernels.LANES_TABLE_BYTES
    if walk != "layout":
        flat = flat._replace(lanes=np.full_like(flat.lanes, walk == "lanes"))
    out = np.empty((X.shape[0], table.shape[1]))
    assert not predict_kernels.predict_flat(*tree_module.walk_input(X), flat, table,
                                            chunk_rows, out)
    expected = None
    for model in forest.estimators_:
        rows = forest._node_table(model)[_leaves_by_arrays(model.tree_, X)]
        expected = rows.copy() if expected is None else expected + rows
    np.testing.assert_array_equal(out, expected)
    leaves = np.empty((len(forest.estimators_), X.shape[0]), dtype=np.int64)
    assert not predict_kernels.apply_flat(*tree_module.walk_input(X), flat,
                                          forest._node_of_flat(X.dtype), chunk_rows, leaves)
    np.testing.assert_array_equal(
        leaves, [_leaves_by_arrays(model.tree_, X) for model in forest.estimators_])


def _blocks_against_lanes(tree):
    """The steps a block of BLOCK_ROWS rows walks against a row's own (each rounded up to a
    look, every CHECK_EVERY steps), rows drawn by the training weights of the leaves: the
    expected most looks of BLOCK_ROWS rows, as the sum over k >= 1 of the chance that one of
    them needs k looks or more, against the expected looks of one."""
    every = predict_kernels.CHECK_EVERY
    depth = np.zeros(tree.node_count, dtype=np.int64)
    for node in range(tree.node_count):  # children are numbered after their parent
        if tree.children_left[node] >= 0:
            depth[tree.children_left[node]:tree.children_right[node] + 1] = depth[node] + 1
    leaf = tree.children_left < 0
    looks = -(-depth[leaf] // every)
    share = tree.weighted_n_node_samples[leaf] / tree.weighted_n_node_samples[leaf].sum()
    below = np.array([share[looks < k].sum() for k in range(1, looks.max() + 1)])
    return (1.0 - below ** predict_kernels.BLOCK_ROWS).sum() / (share * looks).sum()


def test_layout_walks_in_lanes_the_trees_whose_leaf_depths_differ(data):
    """FlatTrees.lanes (kernels.predict.lanes_pay, in write_flat) against a NumPy twin of its
    rule on trees of many shapes: lanes when blocks of BLOCK_ROWS rows would walk at least
    LANES_PAY times the steps. Trees of max_depth reached by every leaf and a lone leaf walk
    in blocks, full-depth classifier trees in lanes."""
    X, y, _ = data
    X_bits = np.column_stack([X[:, 0] > 0, X[:, 1] > 0]).astype(np.float64)
    models = [jitree.DecisionTreeClassifier(random_state=0).fit(X, y),
              jitree.DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y),
              jitree.DecisionTreeClassifier(max_depth=1, random_state=0).fit(X, y),
              jitree.DecisionTreeClassifier(max_depth=2, random_state=0).fit(X_bits, y),
              jitree.DecisionTreeRegressor(random_state=0).fit(X, X[:, 0] + X[:, 1] ** 2),
              jitree.DecisionTreeRegressor(min_samples_leaf=20, random_state=0).fit(X, y),
              jitree.DecisionTreeClassifier(random_state=0).fit(X, np.zeros(len(y))),
              jitree.DecisionTreeClassifier(random_state=0).fit(
                  X, y, sample_weight=np.where(X[:, 0] > 0, 10.0, 0.5))]
    forest = jitree.RandomForestClassifier(n_estimators=4, random_state=0).fit(X, y)
    trees = [model.tree_ for model in models] + [e.tree_ for e in forest.estimators_]
    flat, _ = tree_module.flat_trees(trees, np.float64)
    expected = [bool(tree.node_count > 1
                     and _blocks_against_lanes(tree) >= predict_kernels.LANES_PAY)
                for tree in trees]
    np.testing.assert_array_equal(flat.lanes, expected)
    assert expected[0] and not any(expected[1:4]) and not expected[6]
    assert all(expected[8:])
    assert models[0].tree_._flat_record(np.float32)[0].lanes.all()


@pytest.mark.parametrize("cls", FORESTS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_apply_walks_every_tree_at_once(monkeypatch, data, cls, dtype):
    """A threshold forest's apply walks every tree in one parallel pass: each tree's leaf
    ids as the tree's own apply gives them and as a row-by-row walk of the Tree arrays
    finds them (rows without NaN), with NaN, in tasks of 64 rows (the last one shorter), in
    one task of fewer rows than a block, and for multi-output y; infinity is refused as
    predict refuses it."""
    X = data[0].astype(dtype)
    X[::11, 3] = np.nan
    y = _target(cls, data)
    forests = [cls(n_estimators=5, random_state=0).fit(X, y),
               cls(n_estimators=3, max_depth=4, random_state=1).fit(
                   X, np.column_stack([y, y[::-1]]))]
    X_test = X[:1003]
    for forest in forests:
        assert forest._walk_kind() == "threshold"
        expected = np.column_stack([t.tree_.apply(X_test) for t in forest.estimators_])
        finite = ~np.isnan(X_test).any(axis=1)
        for t, tree in enumerate(forest.estimators_):
            np.testing.assert_array_equal(expected[finite, t],
                                          predict_walk(tree.tree_, X_test[finite]))
        walks = mock.patch.object(predict_kernels, "apply_flat", wraps=predict_kernels.apply_flat)
        with walks as kernel:
            leaves = forest.apply(X_test)
            assert kernel.call_count == 1
            assert leaves.dtype == np.int64 and leaves.shape == expected.shape
            assert leaves.flags.f_contiguous  # each tree's column contiguous
            np.testing.assert_array_equal(leaves, expected)
            np.testing.assert_array_equal(forest.apply(X_test[:9]), expected[:9])
            plain = np.nan_to_num(X_test)  # the walk without missing values
            np.testing.assert_array_equal(
                forest.apply(plain),
                np.column_stack([t.tree_.apply(plain) for t in forest.estimators_]))
            with monkeypatch.context() as patch:
                patch.setattr(tree_module, "TASK_BYTES", 3)  # tasks of 64 rows
                np.testing.assert_array_equal(forest.apply(X_test), expected)
            assert kernel.call_count == 4 and kernel.call_args.args[-2] == 64
        bad = X_test.copy()
        bad[500, 2] = np.inf
        with pytest.raises(ValueError, match="infinity") as raised:
            forest.apply(bad)
        with pytest.raises(ValueError) as predicted:
            forest.predict(bad)
        assert str(raised.value) == str(predicted.value)


def test_layouts_follow_a_changed_list_of_trees(data):
    """A user who slices estimators_ or adds another forest's trees to it (after a first
    prediction built the layouts) gets the predictions and leaves of the trees it now holds:
    the layouts are rebuilt, not read past their end or short of it."""
    X, y, _ = data
    forest = jitree.RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    other = jitree.RandomForestClassifier(n_estimators=3, random_state=1).fit(X, y)
    forest.predict_proba(X)
    forest.apply(X)
    for trees in (forest.estimators_[:2], forest.estimators_ + other.estimators_):
        forest.estimators_ = trees
        np.testing.assert_array_equal(forest.predict_proba(X), _mean_of_leaf_rows(forest, X))
        np.testing.assert_array_equal(
            forest.apply(X), np.column_stack([t.tree_.apply(X) for t in trees]))


@pytest.mark.parametrize("n_outputs", [1, 3])
def test_layout_computes_the_leaves_probabilities_alone(data, n_outputs):
    """The flat layout asks each tree for its leaves' probability rows only: the same bits as
    those rows of the whole table (single- and multi-output), and no table of every node's
    probabilities is left cached on the trees (for many classes it is as large as
    ``value``)."""
    X, y = data[0], data[1]
    Y = y if n_outputs == 1 else np.column_stack([y, (X[:, 0] > 0).astype(int), y % 2])
    forest = jitree.RandomForestClassifier(n_estimators=3, min_samples_leaf=3,
                                           random_state=0).fit(X, Y)
    for model in forest.estimators_:
        tree = model.tree_
        nodes = np.flatnonzero(tree.children_left == -1)[::-1]  # any order, a subset
        rows = tree.probability_table(nodes)
        assert rows.shape == (nodes.shape[0], tree.value.shape[1])
        np.testing.assert_array_equal(rows.view(np.uint64),
                                      tree.probability_table()[nodes].view(np.uint64))
    forest._layouts = {}
    for model in forest.estimators_:
        model.tree_.__dict__.pop("_cache", None)
    proba = forest.predict_proba(X)
    assert not any("proba" in model.tree_.__dict__.get("_cache", {})
                   for model in forest.estimators_)
    mean = _mean_of_leaf_rows(forest, X)
    if n_outputs == 1:
        np.testing.assert_array_equal(proba, mean)
    else:  # the table's rows: each output's columns, as many as the most classes
        mean = mean.reshape(X.shape[0], n_outputs, -1)
        for j, classes in enumerate(forest.classes_):
            np.testing.assert_array_equal(proba[j], mean[:, j, :len(classes)])


@pytest.mark.parametrize("n_outputs", [1, 2])
def test_oob_reads_the_leaves_probabilities_alone(data, n_outputs):
    """The out-of-bag estimate takes each tree's probability rows of the leaves its
    out-of-bag rows reach, and leaves no table of every node's probabilities cached on the
    trees (for many classes as large as ``value``, on every tree of the forest): the same
    bits as the mean of those rows of the whole table."""
    X, y = data[0], data[1]
    Y = y if n_outputs == 1 else np.column_stack([y, (X[:, 0] > 0).astype(int)])
    forest = jitree.RandomForestClassifier(n_estimators=25, min_samples_leaf=2, oob_score=True,
                                           random_state=0).fit(X, Y)
    assert not any("proba" in model.tree_.__dict__.get("_cache", {})
                   for model in forest.estimators_)
    total = np.zeros((X.shape[0], forest.estimators_[0].tree_.value.shape[1]))
    seen = np.zeros(X.shape[0])
    for model, bag in zip(forest.estimators_, forest.estimators_samples_, strict=True):
        out_of_bag = np.setdiff1d(np.arange(X.shape[0]), bag)
        tree = model.tree_
        total[out_of_bag] += tree.probability_table()[tree.apply(X[out_of_bag])]
        seen[out_of_bag] += 1
    has = seen > 0
    mean = total[has] / seen[has, None]
    got = forest.oob_decision_function_[has]
    if n_outputs == 2:  # scikit-learn's (n_samples, n_classes, n_outputs)
        got = got.transpose(0, 2, 1).reshape(got.shape[0], -1)
    np.testing.assert_array_equal(got.view(np.uint64), mean.view(np.uint64))


def test_only_one_hot_rows_vote():
    """A tree votes when each of its leaf rows is a 1.0 among zeros, and no tree of the forest
    has a negative (or -0.0) value: a skipped 0.0 would leave a -0.0 sum where adding gives
    +0.0."""
    rows = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    np.testing.assert_array_equal(_one_hot_columns(rows), [1, 0])
    assert _one_hot_columns(np.array([[0.0, 1.0, 1.0]])) is None  # two ones
    assert _one_hot_columns(np.array([[0.5, 0.5, 0.0]])) is None
    assert _one_hot_columns(np.array([[0.0, 0.0, 0.0]])) is None
    assert _one_hot_columns(np.array([[np.nan, 1.0, 0.0]])) is None
    tree = jitree.DecisionTreeClassifier().fit(np.arange(8.0)[:, None], np.arange(8) % 2).tree_
    table = tree.value / tree.value.sum(axis=1, keepdims=True)  # pure leaves: one-hot rows
    flat, kept = flat_trees([tree], np.float64, [table])
    assert flat.votes.all() and kept.shape == (0, 2)
    for changed in (np.where(table == 0.0, -0.0, table), table * 0.5):
        flat, kept = flat_trees([tree], np.float64, [changed])
        assert not flat.votes.any() and kept.shape == (tree.n_leaves, 2)
    # a classifier's trees: one-hotness read from the class weights (one_hot_rows)
    assert flat_trees([tree], np.float64, [ProbabilityRows(tree)])[0].votes.all()
    value = tree.value.copy()
    for changed in (np.where(value == 0.0, -0.0, value), value * 0.0, value + 1.0):
        other = Tree(*_arrays_with_value(tree, changed))
        flat, kept = flat_trees([tree, other], np.float64,
                                [ProbabilityRows(tree), ProbabilityRows(other)])
        signed = np.signbit(changed).any()
        np.testing.assert_array_equal(flat.votes, [not signed, False])
        assert kept.shape == ((1 + signed) * tree.n_leaves, 2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layout_in_threads_is_the_serial_one(data, dtype):
    """flat_trees in several threads (each tree's layout and its leaves' test in its own
    task) gives the serial layout and table, voting and table-reading trees mixed."""
    pure = jitree.RandomForestClassifier(n_estimators=3, random_state=1).fit(*data[:2])
    shallow = jitree.RandomForestClassifier(n_estimators=3, max_depth=4,
                                            random_state=2).fit(*data[:2])
    trees = [model.tree_ for pair in zip(pure.estimators_, shallow.estimators_, strict=True)
             for model in pair]
    tables = [ProbabilityRows(tree) for tree in trees]
    serial, serial_table = flat_trees(trees, dtype, tables)
    for workers in (2, 5):
        flat, table = flat_trees(trees, dtype, tables, workers=workers)
        for field, expected in zip(flat, serial, strict=True):
            np.testing.assert_array_equal(field, expected)
        np.testing.assert_array_equal(table, serial_table)
    np.testing.assert_array_equal(serial.votes, [1, 0] * 3)


def _arrays_with_value(tree, value):
    """The constructor's arguments for a copy of ``tree`` with class weights ``value``."""
    return (tree.n_features, tree.n_classes, tree.feature, tree.threshold, tree.children_left,
            tree.children_right, value, tree.impurity, tree.n_node_samples,
            tree.weighted_n_node_samples)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5), st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_one_hot_rows_is_the_probability_rows_test(width, n_rows, seed):
    """kernels.predict.one_hot_rows (a leaf votes when its class weights are one value in
    (0, inf) among zeros) against the NumPy test of its probability rows, row by row and
    for all rows: a yes is theirs, with the same columns; a row refused where they accept
    it holds a -0.0 (for which no tree of a forest votes) or two nonzero weights, one of
    whose probabilities rounds to 0.0 (the leaf then reads its table row, which adds the
    same). Weights with zeros, -0.0, negative values, several nonzeros, inf, NaN."""
    rng = np.random.default_rng(seed)
    value = rng.choice([0.0, 0.0, 0.0, -0.0, -1.0, 1.0, 2.5, 1e-300, 1e300, np.inf, np.nan],
                       size=(n_rows, width))
    one = rng.random(n_rows) < 0.7  # mostly one weight among zeros
    value[one] = 0.0
    value[one, rng.integers(0, width, n_rows)[one]] = rng.uniform(0.1, 9.0, one.sum())
    totals = value.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        probabilities = value / np.where(totals > 0.0, totals, 1.0)
    for row in range(n_rows):
        column = np.full(1, -1, dtype=np.int64)
        got = one_hot_rows(value, np.array([row]), column)
        expected = _one_hot_columns(probabilities[row:row + 1])
        if got:
            np.testing.assert_array_equal(column, expected)
        elif expected is not None:
            assert np.signbit(value[row]).any() or (value[row] != 0.0).sum() > 1
    nodes = rng.permutation(n_rows)
    columns = np.full(n_rows, -1, dtype=np.int64)
    expected = _one_hot_columns(probabilities[nodes])
    if one_hot_rows(value, nodes, columns):
        np.testing.assert_array_equal(columns, expected)
    elif expected is not None:
        assert (np.signbit(value[nodes]).any()
                or ((value[nodes] != 0.0).sum(axis=1) > 1).any())


def test_float32_layout_thresholds_are_the_float32_below():
    """The float32 layout's thresholds (kernels.predict.write_flat) are the largest float32
    at or below each float64 threshold, beyond float32's range too (a tree built by the
    constructor: +-1e39, a tiny negative, a value rounded up by the cast)."""
    thresholds = [1e39, -1e39, -1e-50, 0.1, 16777217.0]
    n = 2 * len(thresholds) + 1  # a chain: node 2i tests, its left child 2i+1 is a leaf
    left = np.full(n, -1)
    right = np.full(n, -1)
    internal = np.arange(0, n - 1, 2)
    left[internal], right[internal] = internal + 1, internal + 2
    threshold = np.full(n, -2.0)
    threshold[internal] = thresholds
    tree = Tree(1, 2, np.where(left >= 0, 0, -2), threshold, left, right,
                np.ones((n, 2)), np.zeros(n), np.ones(n, dtype=np.int64), np.ones(n))
    _, flat_threshold, _, depth, node_of_flat = tree.flat(np.float32)
    assert depth == len(thresholds)
    at = np.isfinite(flat_threshold) | (np.abs(tree.threshold[node_of_flat]) > 1e38)
    tested = tree.threshold[node_of_flat][at]
    np.testing.assert_array_equal(flat_threshold[at], float32_below(tested))
    assert flat_threshold[at].max() == np.finfo(np.float32).max  # 1e39: the largest float32
    assert (flat_threshold[at].astype(np.float64) <= tested).all()


def test_pickle_leaves_the_prediction_layouts_behind(data):
    """A pickled forest carries no layout its predictions built (another jitree's layouts
    may differ), and predicts the same after loading."""
    import pickle

    forest = jitree.RandomForestClassifier(n_estimators=3, max_depth=5,
                                           random_state=0).fit(data[0], data[1])
    expected = forest.predict_proba(data[0])
    assert forest._layouts
    loaded = pickle.loads(pickle.dumps(forest))
    assert loaded._layouts == {} and forest._layouts
    np.testing.assert_array_equal(loaded.predict_proba(data[0]), expected)


def test_bootstrap_bags_are_sample_weights(data):
    X, y, _ = data
    forest = jitree.RandomForestClassifier(n_estimators=4, random_state=0,
                                           max_samples=0.5).fit(X, y)
    for tree, bag in zip(forest.estimators_, forest.estimators_samples_, strict=True):
        assert bag.shape[0] == 750
        assert tree.tree_.weighted_n_node_samples[0] == 750  # multiplicities as weights
        assert tree.tree_.n_node_samples[0] == np.unique(bag).shape[0]
    assert jitree.RandomForestClassifier(n_estimators=2, max_samples=100, random_state=0) \
        .fit(X, y).estimators_[0].tree_.weighted_n_node_samples[0] == 100


@pytest.mark.parametrize("cls", [jitree.RandomForestClassifier, jitree.RandomForestRegressor])
def test_oob_score_matches_naive_twin(data, cls):
    X = data[0]
    y = _target(cls, data)
    forest = cls(n_estimators=25, oob_score=True, random_state=0).fit(X, y)
    total = 0.0
    seen = np.zeros(X.shape[0])
    for tree, bag in zip(forest.estimators_, forest.estimators_samples_, strict=True):
        out_of_bag = np.setdiff1d(np.arange(X.shape[0]), bag)
        values = tree.predict_proba(X[out_of_bag]) if hasattr(tree, "predict_proba") \
            else tree.predict(X[out_of_bag])[:, None]
        if not isinstance(total, np.ndarray):
            total = np.zeros((X.shape[0], values.shape[1]))
        total[out_of_bag] += values
        seen[out_of_bag] += 1
    has = seen > 0
    mean = total[has] / seen[has, None]
    if hasattr(forest, "oob_decision_function_"):
        expected = np.mean(forest.classes_[np.argmax(mean, axis=1)] == y[has])
        np.testing.assert_allclose(forest.oob_decision_function_[has], mean)
    else:
        residual = np.sum((y[has] - mean[:, 0]) ** 2)
        expected = 1 - residual / np.sum((y[has] - y[has].mean()) ** 2)
    assert forest.oob_score_ == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("cls", [jitree.RandomForestClassifier, jitree.RandomForestRegressor])
def test_oob_score_takes_a_metric(data, cls):
    """oob_score=metric(y_true, y_pred): called on the rows out of bag of some tree, with
    their class indices (positions in classes_, as scikit-learn passes them) or targets, and
    their out-of-bag predictions."""
    X = data[0]
    y = _target(cls, data)
    classifier = hasattr(cls, "predict_proba")
    if classifier:
        y = np.array(["c", "a", "b"])[y]  # the metric sees indices into classes_ (a, b, c)
    calls = []

    def metric(y_true, y_pred):
        calls.append((y_true, y_pred))
        return float(np.mean(y_true == y_pred)) if classifier else float(
            np.mean(np.abs(y_true - y_pred)))

    plain = cls(n_estimators=25, oob_score=True, random_state=0).fit(X, y)
    forest = cls(n_estimators=25, oob_score=metric, random_state=0).fit(X, y)
    (y_true, y_pred), = calls
    if classifier:
        has = ~np.isnan(plain.oob_decision_function_).any(axis=1)
        np.testing.assert_array_equal(y_pred, np.argmax(plain.oob_decision_function_[has],
                                                         axis=1))
        np.testing.assert_array_equal(y_true, np.searchsorted(plain.classes_, y[has]))
        assert forest.oob_score_ == pytest.approx(plain.oob_score_)  # accuracy both ways
    else:
        has = ~np.isnan(plain.oob_prediction_)
        np.testing.assert_array_equal(y_pred, plain.oob_prediction_[has])
        np.testing.assert_array_equal(y_true, y[has])
        assert forest.oob_score_ == pytest.approx(np.mean(np.abs(y[has] - y_pred)))


def test_class_weights_and_accuracy(data):
    X, y, _ = data
    for class_weight in (None, "balanced", "balanced_subsample", {0: 1.0, 1: 2.0, 2: 1.0}):
        forest = jitree.RandomForestClassifier(n_estimators=10, class_weight=class_weight,
                                               random_state=0).fit(X[:1000], y[:1000])
        assert forest.score(X[1000:], y[1000:]) > 0.6


def test_forest_bad_input(data):
    X, y, _ = data
    with pytest.raises(ValueError, match="n_estimators"):
        jitree.RandomForestClassifier(n_estimators=0).fit(X, y)
    with pytest.raises(ValueError, match="oob_score"):
        jitree.ExtraTreesClassifier(oob_score=True).fit(X, y)
    with pytest.raises(ValueError, match="max_samples"):
        jitree.ExtraTreesClassifier(max_samples=0.5).fit(X, y)
    with pytest.raises(ValueError, match="max_samples"):
        jitree.RandomForestClassifier(max_samples=0.0).fit(X, y)
    with pytest.raises(ValueError, match="criterion"):
        jitree.RandomForestRegressor(criterion="gini").fit(X, y)
    with pytest.raises(jitree.NotFittedError):
        jitree.RandomForestClassifier().predict(X)
    forest = jitree.RandomForestClassifier(n_estimators=3).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        forest.predict(X[:, :2])
    bad = X.copy()
    bad[3, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        forest.predict_proba(bad)


def test_forest_save_rules_export_per_tree(tmp_path, data):
    X, y, _ = data
    forest = jitree.RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0)
    forest.fit(X, y)
    for k, tree in enumerate(forest.estimators_):
        jitree.save(tree, tmp_path / f"tree{k}.jitree")
        loaded = jitree.load(tmp_path / f"tree{k}.jitree")
        np.testing.assert_array_equal(loaded.predict_proba(X), tree.predict_proba(X))
        assert len(jitree.rules(tree)) == tree.get_n_leaves()
        assert "digraph" in jitree.export_graphviz(tree)


@pytest.mark.filterwarnings("ignore:Estimator .* does not inherit from:UserWarning")
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.SkipTestWarning")
@pytest.mark.parametrize("cls", FORESTS)
def test_check_estimator(cls):
    estimator_checks = pytest.importorskip("sklearn.utils.estimator_checks")
    # A bootstrap draws rows at random: a row of weight 2 and two copies of it are drawn
    # alike only in distribution, so the bags differ (scikit-learn's forests list the same
    # expected failure). The forests without bootstrap (extra trees) pass: a zero-weight row
    # places no threshold.
    expected = {}
    if cls(n_estimators=5).bootstrap:
        for data in ("dense", "sparse"):
            expected[f"check_sample_weight_equivalence_on_{data}_data"] = \
                "a weighted bootstrap equals the repeated rows' only in distribution"
    estimator_checks.check_estimator(cls(n_estimators=5, random_state=0),
                                     expected_failed_checks=expected)


def test_bag_presort_is_the_presort_of_the_bag():
    """Presorted.subset (the bag copy of one shared presort, renumbered) against presorting
    the bag's rows directly, with the classes carried and not."""
    from jitree.model.builder import Presorted

    rng = np.random.default_rng(5)
    X = rng.integers(0, 7, (300, 4)).astype(np.float64)  # many ties: order within runs
    X[rng.random(X.shape) < 0.1] = np.nan
    y = rng.integers(0, 3, 300).astype(np.float64)
    keep = rng.random(300) < 0.6
    shared = Presorted.of(X, y, False, 3)
    direct = Presorted.of(X[keep], y[keep], False, 3)
    carried = shared.subset(keep)
    for name in ("sorted_index", "sorted_value", "sorted_label", "label"):
        np.testing.assert_array_equal(getattr(carried, name), getattr(direct, name), name)
    by_sample = shared.subset(keep, carry_labels=False)
    np.testing.assert_array_equal(by_sample.sorted_index, direct.sorted_index)
    np.testing.assert_array_equal(by_sample.sorted_value, direct.sorted_value)
    np.testing.assert_array_equal(by_sample.label, direct.label)
    assert by_sample.sorted_label.shape == (1, 0)


@pytest.mark.parametrize("params", [
    dict(criterion="gini"),
    dict(criterion="entropy", class_weight="balanced_subsample"),
    dict(criterion="gain_ratio", categorical_split="multiway", min_samples_leaf=3),
    dict(criterion="misclassification", categorical_split="one_vs_rest"),
    dict(criterion="gini", extra=True)])
def test_classes_read_by_sample_grow_the_same_trees(monkeypatch, params):
    """Forest trees whose sorted arrays leave the classes out (read by sample) equal the
    trees grown with the classes carried, with categorical features, missing values and
    weights."""
    import jitree.model.forest as forest_module

    params = dict(params)
    cls = jitree.ExtraTreesClassifier if params.pop("extra", False) \
        else jitree.RandomForestClassifier
    rng = np.random.default_rng(11)
    X, y = make_classification_data(900, 8, 4, seed=4)
    X = X.astype(np.float64)
    X[:, 2] = rng.integers(0, 9, 900)
    X[:, 5] = rng.integers(0, 30, 900)
    X[rng.random(X.shape) < 0.05] = np.nan
    forests = []
    for carry in (True, False):
        monkeypatch.setattr(forest_module, "_carries_labels", lambda m, n, c=carry: c)
        forests.append(cls(n_estimators=3, max_features=2, random_state=3,
                           categorical_features=[2, 5], **params).fit(X, y))
    for a, b in zip(*(f.estimators_ for f in forests), strict=True):
        _same_tree(a.tree_, b.tree_)
        for name in ("split_kind", "category_bits", "multiway_slot", "missing_left"):
            np.testing.assert_array_equal(getattr(a.tree_, name), getattr(b.tree_, name))
    assert any(t.tree_.split_kind.max() > 0 for t in forests[0].estimators_)


def test_layout_refuses_node_arrays_of_different_lengths():
    """Each tree writes node_count nodes into the forest's arrays, which numba does not
    bounds-check: a tree whose child arrays were replaced by longer ones, or its weights
    (which order the children) by shorter ones, is refused."""
    tree = jitree.DecisionTreeClassifier().fit(np.arange(8.0)[:, None], np.arange(8) % 2).tree_
    copy = Tree(*_arrays_with_value(tree, tree.value))
    copy.children_left = np.concatenate([copy.children_left, [-1]])
    with pytest.raises(ValueError, match="node arrays have different lengths"):
        flat_trees([tree, copy], np.float64)
    # the weights, which order each node's children
    copy = Tree(*_arrays_with_value(tree, tree.value))
    copy.weighted_n_node_samples = copy.weighted_n_node_samples[:1]
    with pytest.raises(ValueError, match="node arrays have different lengths"):
        flat_trees([tree, copy], np.float64)
