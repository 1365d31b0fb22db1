"""scipy.sparse input: a tree or forest fitted on a sparse matrix is the one fitted on its
dense copy, and predicting a sparse matrix (by dense blocks of rows, or for forests by the
rows' stored values) equals predicting its dense copy, for every format, dtype and index
dtype."""

import contextlib
from fractions import Fraction
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import jitree
from jitree.kernels import predict as kernels_predict
from jitree.model import _base as base_module
from jitree.model import builder as builder_module
from jitree.model import categories as categories_module
from jitree.model import forest as forest_module
from jitree.model import tree as tree_module
from jitree.model import validation

sparse = pytest.importorskip("scipy.sparse")

FORMATS = ["csr", "csc", "coo", "lil", "dok"]


class _Walks:
    """The spies of :func:`csr_walks`."""

    def __init__(self, spies):
        self.spies = spies

    @property
    def call_count(self):
        return sum(spy.call_count for spy in self.spies)

    @property
    def call_args(self):
        """The last call's arguments, of the walk called last."""
        return [spy for spy in self.spies if spy.call_count][-1].call_args


@contextlib.contextmanager
def csr_walks():
    """Spies on both walks of a CSR X's stored values (node by node, and by zero paths for
    trees deep for the rows' stored values): their calls counted together."""
    with mock.patch.object(kernels_predict, "predict_flat_csr",
                           wraps=kernels_predict.predict_flat_csr) as lanes, \
            mock.patch.object(kernels_predict, "predict_zero_paths_csr",
                              wraps=kernels_predict.predict_zero_paths_csr) as paths:
        yield _Walks([lanes, paths])


def random_sparse(seed, n, d, density, fmt="csr", dtype=np.float64, nan=0.0):
    """A random n x d sparse matrix of roughly ``density`` stored values (negative and
    positive; a fraction ``nan`` of them NaN), with an all-zero column and an all-zero row."""
    rng = np.random.default_rng(seed)
    dense = np.where(rng.random((n, d)) < density, rng.normal(size=(n, d)), 0.0)
    dense[rng.random((n, d)) < nan * density] = np.nan
    dense[:, d // 2] = 0.0
    dense[n // 2] = 0.0
    return sparse.csr_matrix(dense.astype(dtype)).asformat(fmt), dense.astype(dtype)


@contextlib.contextmanager
def no_dense_copy():
    """Any dense copy of a sparse X made by a fit fails the test."""
    refuse = AssertionError("a dense copy of the sparse X")
    with contextlib.ExitStack() as stack:
        for module in (base_module, builder_module, categories_module, forest_module):
            stack.enter_context(mock.patch.object(module, "sparse_to_dense",
                                                  side_effect=refuse))
        yield


def same_tree(a, b):
    ta, tb = a.tree_, b.tree_
    np.testing.assert_array_equal(ta.feature, tb.feature)
    np.testing.assert_array_equal(ta.threshold, tb.threshold)
    np.testing.assert_array_equal(ta.children_left, tb.children_left)
    np.testing.assert_array_equal(ta.value, tb.value)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(2, 120), d=st.integers(1, 12),
       density=st.sampled_from([0.0, 0.02, 0.1, 0.5, 1.0]), fmt=st.sampled_from(FORMATS),
       regression=st.booleans(), weighted=st.booleans(), random_splitter=st.booleans(),
       max_features=st.sampled_from([None, 0.5]))
def test_tree_on_sparse_equals_tree_on_dense(seed, n, d, density, fmt, regression, weighted,
                                             random_splitter, max_features):
    X, dense = random_sparse(seed, n, d, density, fmt, nan=0.1)
    rng = np.random.default_rng(seed + 1)
    y = rng.normal(size=n) if regression else rng.integers(0, 3, n)
    weight = rng.integers(1, 4, n).astype(float) if weighted else None
    cls = jitree.DecisionTreeRegressor if regression else jitree.DecisionTreeClassifier
    params = dict(splitter="random" if random_splitter else "best", max_features=max_features,
                  random_state=seed % 1000)
    a = cls(**params).fit(X, y, sample_weight=weight)
    b = cls(**params).fit(dense, y, sample_weight=weight)
    if regression:
        # squared error: a mirrored rounding tie (a row's only stored values, in two
        # features, one negative and one positive) may pick the other feature: the same
        # partition of the training rows, so b predicts the dense rows as a does below
        same_partition(a, b, dense, weight)
        b = a
    else:
        same_tree(a, b)
    rows, rows_dense = random_sparse(seed + 2, 50, d, 0.3, "csr", nan=0.1)
    method = "predict" if regression else "predict_proba"
    np.testing.assert_array_equal(getattr(a, method)(rows), getattr(b, method)(rows_dense))
    np.testing.assert_array_equal(a.apply(rows), b.apply(rows_dense))
    assert (a.decision_path(rows) != b.decision_path(rows_dense)).nnz == 0


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, bool])
def test_formats_and_dtypes(fmt, dtype):
    X, dense = random_sparse(3, 200, 8, 0.3, fmt)
    if dtype in (np.int64, bool):
        X = (X.tocsr() * 3).astype(dtype).asformat(fmt)
        dense = (dense * 3).astype(dtype)
    y = (dense[:, 0] + dense[:, 1] > 0).astype(int)
    model = jitree.DecisionTreeClassifier(random_state=0).fit(X, y)
    reference = jitree.DecisionTreeClassifier(random_state=0).fit(dense, y)
    same_tree(model, reference)
    np.testing.assert_array_equal(model.predict(X), reference.predict(dense))
    assert model.score(X, y) == reference.score(dense, y)


def test_index_dtypes_duplicates_and_explicit_zeros():
    """Duplicated entries are summed and explicit zeros are zeros, as in X.toarray()."""
    rng = np.random.default_rng(0)
    n, d = 300, 6
    row = rng.integers(0, n, 900)
    col = rng.integers(0, d, 900)
    data = rng.normal(size=900)
    data[::7] = 0.0  # explicit zeros
    X = sparse.coo_matrix((data, (row.astype(np.int64), col.astype(np.int64))), shape=(n, d))
    assert X.nnz == 900  # duplicates kept until toarray
    dense = X.toarray()
    y = (dense.sum(axis=1) > 0).astype(int)
    model = jitree.RandomForestClassifier(n_estimators=5, random_state=0).fit(X, y)
    reference = jitree.RandomForestClassifier(n_estimators=5, random_state=0).fit(dense, y)
    for a, b in zip(model.estimators_, reference.estimators_, strict=True):
        same_tree(a, b)
    csr = X.tocsr()
    csr64 = sparse.csr_matrix((csr.data, csr.indices.astype(np.int64),
                               csr.indptr.astype(np.int64)), shape=csr.shape)
    for rows in (X, csr, csr64, sparse.csr_array(csr), X.tocsc()):
        np.testing.assert_array_equal(model.predict_proba(rows), reference.predict_proba(dense))
        np.testing.assert_array_equal(model.apply(rows), reference.apply(dense))
        path, ptr = model.decision_path(rows)
        dense_path, dense_ptr = reference.decision_path(dense)
        assert (path != dense_path).nnz == 0
        np.testing.assert_array_equal(ptr, dense_ptr)


@given(rows=st.integers(1, 6), columns=st.integers(1, 6), data=st.data())
@settings(max_examples=60, deadline=None)
def test_duplicates_are_found_whatever_the_format_flag(rows, columns, data):
    """The check that lets a CSR or CSC X through without the search for duplicated entries
    (its flag unset, as a product of matrices leaves it) against the cells counted by
    NumPy; X's own arrays are left as they were, and its sums are those of X.toarray()."""
    n_entries = data.draw(st.integers(0, 12))
    row = np.array(data.draw(st.lists(st.integers(0, rows - 1), min_size=n_entries,
                                      max_size=n_entries)), dtype=np.int64)
    col = np.array(data.draw(st.lists(st.integers(0, columns - 1), min_size=n_entries,
                                      max_size=n_entries)), dtype=np.int64)
    values = np.arange(1.0, n_entries + 1.0)
    for fmt in ("csr", "csc"):
        major, minor = (row, col) if fmt == "csr" else (col, row)
        n_major = rows if fmt == "csr" else columns
        order = np.argsort(major, kind="stable")  # grouped by row (column), minor unsorted
        indptr = np.concatenate([[0], np.cumsum(np.bincount(major, minlength=n_major))])
        cls = sparse.csr_matrix if fmt == "csr" else sparse.csc_matrix
        X = cls((values[order], minor[order], indptr), shape=(rows, columns))
        X.has_canonical_format = False
        indices = X.indices.copy()
        duplicated = np.unique(row * columns + col).shape[0] < n_entries
        assert validation._no_duplicates(X) == (not duplicated)
        np.testing.assert_array_equal(X.indices, indices)
        np.testing.assert_array_equal(validation.summed_as_dense(X).toarray(), X.toarray())


@pytest.mark.parametrize("cls", [jitree.RandomForestRegressor, jitree.ExtraTreesRegressor,
                                 jitree.ExtraTreesClassifier])
def test_forests_and_blocks_of_rows(cls, monkeypatch):
    """Prediction reads a sparse X by blocks of rows; small blocks force many of them."""
    X, dense = random_sparse(7, 700, 10, 0.2, "csc", nan=0.05)
    y = np.nan_to_num(dense[:, 1] - dense[:, 2]) + 0.1 * (np.arange(700) % 3)
    if "Classifier" in cls.__name__:
        y = (y > 0).astype(int)
    model = cls(n_estimators=6, random_state=1).fit(X, y)
    reference = cls(n_estimators=6, random_state=1).fit(dense, y)
    expected = reference.predict(dense)
    np.testing.assert_array_equal(model.predict(X), expected)
    monkeypatch.setattr(validation, "SPARSE_BLOCK_VALUES", 10 * 64 + 5)  # 64-row blocks
    chunks = list(validation.sparse_row_blocks(X))
    assert len(chunks) == 11 and all(chunk.shape[0] == 64 for chunk in chunks[:-1])
    np.testing.assert_array_equal(model.predict(X), expected)
    np.testing.assert_array_equal(model.apply(X.tocsr()), reference.apply(dense))


def test_categorical_features_on_sparse_input():
    rng = np.random.default_rng(2)
    dense = np.column_stack([rng.integers(0, 6, 400), rng.normal(size=400)])
    dense[rng.random(400) < 0.5, 1] = 0.0
    y = (np.isin(dense[:, 0], [1, 4]) ^ (dense[:, 1] > 0)).astype(int)
    X = sparse.csr_matrix(dense)
    model = jitree.DecisionTreeClassifier(categorical_features=[0]).fit(X, y)
    reference = jitree.DecisionTreeClassifier(categorical_features=[0]).fit(dense, y)
    same_tree(model, reference)
    np.testing.assert_array_equal(model.predict(X), reference.predict(dense))
    # ordered categories split by thresholds on their codes: X goes through the encoder,
    # not the walk of its stored values
    shifted = dense.copy()
    shifted[:, 0] = 10.0 * shifted[:, 0] - 20.0
    for cls in (jitree.DecisionTreeClassifier, jitree.RandomForestClassifier):
        ordinal = cls(ordinal_features=[0], random_state=0).fit(shifted, y)
        np.testing.assert_array_equal(ordinal.predict_proba(sparse.csr_matrix(shifted)),
                                      ordinal.predict_proba(shifted))


def test_infinity_and_wrong_width_are_refused_clearly():
    X, dense = random_sparse(1, 50, 4, 0.5)
    y = np.arange(50) % 2
    bad = X.tolil()
    bad[3, 2] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        jitree.DecisionTreeClassifier().fit(bad, y)
    model = jitree.DecisionTreeClassifier().fit(X, y)
    with pytest.raises(ValueError, match="infinity"):
        model.predict(bad)
    with pytest.raises(ValueError, match="3 features"):
        model.predict(sparse.csr_matrix((5, 3)))
    with pytest.raises(ValueError, match="0 sample"):
        model.predict(sparse.csr_matrix((0, 4)))
    with pytest.raises(TypeError, match="unsupported dtype"):
        model.predict(_object_sparse())


def _object_sparse():
    """A sparse matrix whose dtype is not a number (scipy refuses to build most of them: an
    object stand-in with the sparse attributes)."""
    matrix = sparse.csr_matrix(np.ones((2, 4)))
    fake = type("csr_matrix", (), {"__module__": "scipy.sparse._csr", "shape": (2, 4),
                                   "dtype": np.dtype("U3"), "tocsr": lambda self: matrix})
    return fake()


def test_fit_refuses_a_dense_copy_beyond_memory(monkeypatch, sparse_growth_calls):
    """A fit the sparse growth does not cover grows on the dense copy of X: a copy that
    would take more than half the memory is refused up front, with the size and the way
    out. The sparse growth needs no dense copy."""
    monkeypatch.setattr(validation, "memory_bytes", lambda: 2**30)
    X = sparse.random(100_000, 2_000, density=1e-4, format="csc",
                      random_state=np.random.default_rng(0))
    y = np.arange(100_000) % 2
    with pytest.raises(ValueError, match="100,000 x 2,000.*GiB.*fewer features"):
        jitree.DecisionTreeClassifier(max_leaf_nodes=8).fit(X, y)
    with pytest.raises(ValueError, match="100,000 x 2,000.*GiB"):
        jitree.ExtraTreesClassifier(n_estimators=2, max_leaf_nodes=8).fit(X, y)
    model = jitree.DecisionTreeClassifier(max_depth=3, max_features=0.5).fit(X, y)
    assert len(sparse_growth_calls) == 1 and model.tree_.node_count > 1
    forest = jitree.RandomForestClassifier(n_estimators=2, max_depth=3).fit(X, y)
    assert len(sparse_growth_calls) == 3 and forest.estimators_[1].tree_.node_count > 1
    extra = jitree.ExtraTreesClassifier(n_estimators=2, max_depth=3).fit(X, y)
    assert len(sparse_growth_calls) == 5 and extra.estimators_[1].tree_.node_count > 1


def test_dask_arrays_of_sparse_blocks():
    """jitree.dask predicts a dask array whose blocks are sparse matrices block by block."""
    da = pytest.importorskip("dask.array")
    pytest.importorskip("jitree.dask")
    import jitree.dask

    X, dense = random_sparse(4, 1200, 6, 0.3)
    y = (np.nan_to_num(dense[:, 0]) > 0).astype(int)
    model = jitree.RandomForestClassifier(n_estimators=4, random_state=0).fit(X, y)
    blocks = da.from_array(dense, chunks=(300, 6)).map_blocks(sparse.csr_matrix)
    np.testing.assert_array_equal(jitree.dask.predict_proba(model, blocks).compute(),
                                  model.predict_proba(dense))
    np.testing.assert_array_equal(jitree.dask.predict(model, blocks).compute(),
                                  model.predict(dense))


# -- the sparse growth (jitree.kernels.sparse): the split search on the stored values ----------
@pytest.fixture
def sparse_growth_calls(monkeypatch):
    """Counts the fits grown by the sparse growth loop."""
    import jitree.model.builder as builder
    calls = []
    grow = builder.grow_sparse

    def counted(*args):
        calls.append(1)
        return grow(*args)

    monkeypatch.setattr(builder, "grow_sparse", counted)
    return calls


CRITERIA = {False: ["gini", "entropy", "misclassification", "gain_ratio", "cart", "twoing"],
            True: ["squared_error", "poisson"]}


# the fixture only counts calls: each example compares the count before and after its fit
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**31), n=st.integers(2, 150), d=st.integers(1, 10),
       density=st.sampled_from([0.0, 0.05, 0.2, 0.6, 1.0]), regression=st.booleans(),
       criterion=st.integers(0, 5), weighted=st.booleans(), rounded=st.booleans(),
       min_samples_leaf=st.sampled_from([1, 3]), max_depth=st.sampled_from([None, 3]),
       float32=st.booleans(), max_features=st.sampled_from([None, "sqrt", 0.5, 1]),
       splitter=st.sampled_from(["best", "random"]))
# poisson's impurities an ulp apart (the dense loop adds them in sample order)
@example(seed=3, n=15, d=2, density=0.05, regression=True, criterion=1, weighted=False,
         rounded=False, min_samples_leaf=1, max_depth=None, float32=False, max_features=None,
         splitter="random")
def test_sparse_growth_equals_the_dense_loop(sparse_growth_calls, seed, n, d, density,
                                             regression, criterion, weighted, rounded,
                                             min_samples_leaf, max_depth, float32,
                                             max_features, splitter):
    """Every tree the sparse growth can grow, against the dense loop on X.toarray(): node by
    node (classes and integer weights: sums are exact, so the scores agree to the bit), for
    both splitters (the random one draws each node's thresholds from the same streams)."""
    X, dense = random_sparse(seed, n, d, density, "csc",
                             dtype=np.float32 if float32 else np.float64)
    if rounded:  # many equal values: ties between candidates
        dense = np.round(dense)
        X = sparse.csc_matrix(dense)
    rng = np.random.default_rng(seed + 1)
    names = CRITERIA[regression]
    name = names[criterion % len(names)]
    if regression:
        # poisson scales y by a power of two: integer targets keep its sums exact; squared
        # error centres y, so its sums round (continuous targets: no exact ties)
        y = rng.integers(0, 4, n).astype(float) if name == "poisson" else rng.normal(size=n)
        cls = jitree.DecisionTreeRegressor
    else:
        y = rng.integers(0, 3, n)
        cls = jitree.DecisionTreeClassifier
    weight = rng.integers(0, 4, n).astype(float) if weighted else None
    if weighted and weight.sum() == 0:
        weight[0] = 1.0
    # max_features: each node draws its features as the dense loop does (same seed)
    params = dict(criterion=name, min_samples_leaf=min_samples_leaf, max_depth=max_depth,
                  max_features=max_features, random_state=seed % 1000, splitter=splitter)
    if name == "squared_error":  # a mirrored tie would change what the children draw
        params["max_features"] = None
    if params["criterion"] == "poisson" and np.sum(y * (weight if weighted else 1)) == 0:
        y[0] += 1.0
        if weighted:
            weight[0] = max(weight[0], 1.0)
    before = len(sparse_growth_calls)
    a = cls(**params).fit(X, y, sample_weight=weight)
    assert len(sparse_growth_calls) == before + 1
    b = cls(**params).fit(dense, y, sample_weight=weight)
    if name == "squared_error":
        same_partition(a, b, dense, weight)
        return
    same_tree(a, b)
    if regression and splitter == "random":
        # the dense loop grows a random regressor in sample order (kernels.sample_order): its
        # sums of y log y are added in another order than the sparse growth's, to rounding
        np.testing.assert_allclose(a.tree_.impurity, b.tree_.impurity, rtol=1e-12,
                                   atol=1e-15)
    else:
        np.testing.assert_array_equal(a.tree_.impurity, b.tree_.impurity)
    np.testing.assert_array_equal(a.tree_.n_node_samples, b.tree_.n_node_samples)
    np.testing.assert_array_equal(a.tree_.weighted_n_node_samples,
                                  b.tree_.weighted_n_node_samples)
    np.testing.assert_array_equal(a.tree_.missing_left, b.tree_.missing_left)


def same_partition(a, b, X, weight=None):
    """The two trees part the training rows X (those of positive weight) alike, leaf by
    leaf, with the same leaf values (to rounding). Squared error's sums round differently
    in the two searches, so two splits that part a node's rows alike (two features holding
    one row's only stored value, say) may be told apart differently by their last bits."""
    assert a.tree_.node_count == b.tree_.node_count
    counted = np.ones(X.shape[0], dtype=bool) if weight is None else weight > 0
    leaves_a, leaves_b = a.apply(X[counted]), b.apply(X[counted])
    groups_a = {frozenset(np.flatnonzero(leaves_a == leaf)): a.tree_.value[leaf, 0]
                for leaf in np.unique(leaves_a)}
    groups_b = {frozenset(np.flatnonzero(leaves_b == leaf)): b.tree_.value[leaf, 0]
                for leaf in np.unique(leaves_b)}
    assert groups_a.keys() == groups_b.keys()
    for rows, value in groups_a.items():
        np.testing.assert_allclose(value, groups_b[rows], rtol=1e-9, atol=1e-12)


def test_sparse_growth_on_continuous_targets_and_weights(sparse_growth_calls):
    """Real-valued targets and weights: the zero run's sums round differently from the dense
    scan's, which could only swap candidates whose scores agree to the last bits; on data
    without such near-ties the trees are equal and the leaf values agree to rounding."""
    X, dense = random_sparse(11, 3000, 40, 0.05, "csr")
    rng = np.random.default_rng(12)
    y = dense[:, 3] * 2 - dense[:, 7] + 0.1 * rng.normal(size=3000)
    weight = rng.uniform(0.5, 2.0, 3000)
    a = jitree.DecisionTreeRegressor(max_depth=8, min_samples_leaf=5).fit(X, y, weight)
    b = jitree.DecisionTreeRegressor(max_depth=8, min_samples_leaf=5).fit(dense, y, weight)
    assert sparse_growth_calls
    np.testing.assert_array_equal(a.tree_.feature, b.tree_.feature)
    np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)
    np.testing.assert_allclose(a.tree_.value, b.tree_.value, rtol=1e-12, atol=1e-12)
    labels = (y > np.median(y)).astype(int)
    c = jitree.DecisionTreeClassifier(max_depth=8, class_weight="balanced",
                                      min_impurity_decrease=1e-4).fit(X, labels, weight)
    e = jitree.DecisionTreeClassifier(max_depth=8, class_weight="balanced",
                                      min_impurity_decrease=1e-4).fit(dense, labels, weight)
    np.testing.assert_array_equal(c.tree_.feature, e.tree_.feature)
    np.testing.assert_array_equal(c.tree_.threshold, e.tree_.threshold)
    np.testing.assert_allclose(c.tree_.value, e.tree_.value, rtol=1e-12)


def test_fits_outside_the_sparse_growth_use_the_dense_copy(sparse_growth_calls):
    X, dense = random_sparse(5, 200, 6, 0.3, "csc")
    y = (dense[:, 0] > 0).astype(int)
    for params in (dict(max_leaf_nodes=5),
                   dict(criterion="absolute_error"), dict(monotonic_cst=[1, 0, 0, 0, 0, 0])):
        cls = jitree.DecisionTreeRegressor if "criterion" in params else \
            jitree.DecisionTreeClassifier
        model = cls(random_state=0, **params).fit(X, y)
        same_tree(model, cls(random_state=0, **params).fit(dense, y))
    with_nan = X.copy()
    with_nan.data[0] = np.nan
    dense_nan = with_nan.toarray()
    model = jitree.DecisionTreeClassifier().fit(with_nan, y)
    same_tree(model, jitree.DecisionTreeClassifier().fit(dense_nan, y))
    np.testing.assert_array_equal(model.missing_values_in_feature_mask_,
                                  np.isnan(dense_nan).any(axis=0))
    assert not sparse_growth_calls


@pytest.mark.filterwarnings("ignore:.*no out-of-bag prediction")  # 5 trees: rows in every bag
@pytest.mark.parametrize("cls", [jitree.RandomForestClassifier, jitree.RandomForestRegressor])
def test_forests_grow_on_the_stored_values(sparse_growth_calls, cls):
    """A forest on a sparse X sorts its columns once and grows each tree on its bag's rows of
    them: the same trees as the forest on the dense copy. Squared error's sums round
    differently (see same_partition), and with max_features a tie between two splits that
    part a node alike, mirrored, changes what its children draw: on these rows no node has
    such a tie (two leaves of min_samples_leaf=3 rows told apart by two features)."""
    X, dense = random_sparse(21, 600, 30, 0.1, "csr")
    rng = np.random.default_rng(22)
    y = dense[:, 2] - 2 * dense[:, 5] + 0.1 * rng.normal(size=600)
    if cls is jitree.RandomForestClassifier:
        y = np.digitize(y, [-0.3, 0.3])
    params = dict(n_estimators=5, random_state=3, min_samples_leaf=3, max_features="sqrt")
    a = cls(**params).fit(X, y)
    assert len(sparse_growth_calls) == 5
    b = cls(**params).fit(dense, y)
    if cls is jitree.RandomForestClassifier:
        for tree_a, tree_b in zip(a.estimators_, b.estimators_, strict=True):
            same_tree(tree_a, tree_b)
        np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(dense))
    else:
        for tree_a, tree_b in zip(a.estimators_, b.estimators_, strict=True):
            np.testing.assert_array_equal(tree_a.tree_.feature, tree_b.tree_.feature)
            np.testing.assert_array_equal(tree_a.tree_.threshold, tree_b.tree_.threshold)
            np.testing.assert_allclose(tree_a.tree_.value, tree_b.tree_.value, rtol=1e-12,
                                       atol=1e-12)
        counts = np.round(np.exp(y)).astype(float)  # poisson on counts: exact sums, exact trees
        poisson = dict(params, criterion="poisson", min_samples_leaf=1)
        for tree_a, tree_b in zip(cls(**poisson).fit(X, counts).estimators_,
                                  cls(**poisson).fit(dense, counts).estimators_, strict=True):
            same_tree(tree_a, tree_b)
    # out-of-bag scores grow on the stored values too, and read the out-of-bag rows' stored
    # values (predict_flat_csr, or predict_zero_paths_csr for trees deep enough), never a
    # dense copy of X
    before = len(sparse_growth_calls)
    with csr_walks() as spy, no_dense_copy():
        oob = cls(oob_score=True, **params).fit(X, y)
    assert len(sparse_growth_calls) == before + 5 and spy.call_count == 5
    dense_oob = cls(oob_score=True, **params).fit(dense, y)
    if cls is jitree.RandomForestClassifier:
        assert oob.oob_score_ == dense_oob.oob_score_
        np.testing.assert_array_equal(oob.oob_decision_function_,
                                      dense_oob.oob_decision_function_)
    else:
        assert oob.oob_score_ == pytest.approx(dense_oob.oob_score_, rel=1e-12)
        np.testing.assert_allclose(oob.oob_prediction_, dense_oob.oob_prediction_,
                                   rtol=1e-12, atol=1e-12)


def test_extra_trees_grow_on_the_stored_values(sparse_growth_calls):
    """Extra-Trees on a sparse X grow on its stored values (no bootstrap: every row), each
    node's random thresholds drawn as on the dense copy: the same forest."""
    X, dense = random_sparse(31, 500, 25, 0.1, "csc")
    y = np.digitize(dense[:, 1] - dense[:, 4], [-0.2, 0.2])
    params = dict(n_estimators=4, random_state=7, min_samples_leaf=2)
    ours = jitree.ExtraTreesClassifier(**params).fit(X, y)
    assert len(sparse_growth_calls) == 4
    theirs = jitree.ExtraTreesClassifier(**params).fit(dense, y)
    for a, b in zip(ours.estimators_, theirs.estimators_, strict=True):
        same_tree(a, b)
    np.testing.assert_array_equal(ours.predict_proba(X), theirs.predict_proba(dense))


@pytest.mark.parametrize("cls, params", [
    (jitree.ExtraTreesClassifier, {}),
    (jitree.ExtraTreesClassifier, dict(criterion="entropy", bootstrap=True)),
    (jitree.RandomForestClassifier, {}),
    (jitree.RandomForestClassifier, dict(criterion="entropy", bootstrap=False)),
    (jitree.RandomForestRegressor, dict(criterion="poisson", max_features="sqrt")),
    (jitree.ExtraTreesRegressor, dict(criterion="poisson", max_features="sqrt")),
])
def test_deep_trees_on_very_sparse_columns(sparse_growth_calls, cls, params):
    """Full-depth trees on a few stored values a row among many features: most nodes of a
    level are small, and are searched on their samples' rows (the best splitter's buckets
    sorted by value, the random splitter's thresholds from the draw's extremes) rather than
    on their drawn features' whole columns; a level's big nodes stay in the column passes.
    Whole weights (a bootstrap's counts) and integer counts keep every sum exact: the same
    trees as on the dense copy, node by node, statistics included."""
    X, dense = random_sparse(41, 1500, 400, 0.01, "csc")
    score = dense @ np.random.default_rng(42).normal(size=400)
    if cls in (jitree.RandomForestRegressor, jitree.ExtraTreesRegressor):
        y = np.round(np.exp(np.clip(score, -3, 3)))
    else:
        y = np.digitize(score, [-0.5, 0.5])
    model = cls(n_estimators=3, random_state=5, **params)
    ours = model.fit(X, y)
    assert len(sparse_growth_calls) == 3
    theirs = cls(n_estimators=3, random_state=5, **params).fit(dense, y)
    for a, b in zip(ours.estimators_, theirs.estimators_, strict=True):
        assert a.tree_.max_depth > 20
        same_tree(a, b)
        np.testing.assert_array_equal(a.tree_.n_node_samples, b.tree_.n_node_samples)
        np.testing.assert_array_equal(a.tree_.weighted_n_node_samples,
                                      b.tree_.weighted_n_node_samples)


@pytest.mark.parametrize("cls", [jitree.RandomForestClassifier, jitree.ExtraTreesClassifier])
def test_text_like_columns_draw_as_on_the_dense_copy(sparse_growth_calls, cls):
    """Text-like X: column j stored in about 1/(j + 1) of the rows, and 100 columns stored
    in every row with one value (constant). Far fewer features vary in a node than its
    stored values suggest, so draws that start on the columns go on from the node's rows,
    most after taking features on the columns (62 such switches in the two fits, printed
    by a copy of the kernel). The same trees as on the dense copy."""
    rng = np.random.default_rng(0)
    n, d = 800, 600
    stored = rng.random((n, d)) < np.minimum(0.9, 1.0 / (np.arange(d) + 1))
    dense = stored * rng.integers(1, 4, (n, d)).astype(float)
    dense[:, d - 100:] = 1.0
    y = np.digitize(dense[:, 3] + dense[:, 10] - dense[:, 40] + rng.normal(size=n), [0.5, 1.5])
    ours = cls(n_estimators=3, random_state=1).fit(sparse.csc_matrix(dense), y)
    assert len(sparse_growth_calls) == 3
    theirs = cls(n_estimators=3, random_state=1).fit(dense, y)
    for a, b in zip(ours.estimators_, theirs.estimators_, strict=True):
        same_tree(a, b)
        np.testing.assert_array_equal(a.tree_.n_node_samples, b.tree_.n_node_samples)
        np.testing.assert_array_equal(a.tree_.weighted_n_node_samples,
                                      b.tree_.weighted_n_node_samples)


@settings(max_examples=200, deadline=None)
@given(counts=st.lists(st.integers(0, 2**20), min_size=1, max_size=40),
       shift=st.integers(-1000, 1000), odd=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_weights_exact_in_any_order(counts, shift, odd, seed):
    """builder._exact_in_any_order, against exact arithmetic (fractions): when it says so,
    every order of adding up the weights gives the exact sums, and it says so whenever the
    weights are whole multiples of one power of two of a total below 2**49 of them."""
    weight = np.ldexp(np.array(counts, dtype=np.float64), shift)
    if odd:
        weight[0] += 0.1
    if not np.all(np.isfinite(weight)):
        return
    exact = [Fraction(float(w)) for w in weight]
    finest = max((x.denominator.bit_length() - 1 for x in exact if x > 0), default=0)
    total_units = sum(exact) * 2**finest
    answer = builder_module._exact_in_any_order(weight)
    if total_units < 2**49:
        assert answer
    if answer:
        order = np.random.default_rng(seed).permutation(weight.size)
        running = Fraction(0)
        partial = 0.0
        for w in weight[order]:
            running += Fraction(float(w))
            partial += w
            assert Fraction(partial) == running


@pytest.mark.parametrize("cls, params", [
    (jitree.DecisionTreeRegressor, dict(store_leaf_samples=True, max_depth=6)),
    (jitree.DecisionTreeClassifier, dict(honest=True, random_state=2)),
    (jitree.RandomForestRegressor, dict(n_estimators=4, store_leaf_samples=True,
                                        random_state=0)),
    (jitree.RandomForestClassifier, dict(n_estimators=4, honest=True, random_state=0)),
    (jitree.ExtraTreesRegressor, dict(n_estimators=3, honest=True, store_leaf_samples=True,
                                      random_state=0)),
])
def test_honest_and_leaf_samples_read_the_stored_values(sparse_growth_calls, cls, params):
    """Honest estimates and stored leaf samples read the training rows again after the
    growth: a sparse X's rows are walked by their stored values (no dense copy), giving the
    dense fit's trees, values and quantiles (regressors: poisson on counts, whose sums are
    exact; squared error's round differently, see same_partition)."""
    X, dense = random_sparse(41, 400, 12, 0.2, "csr")
    rng = np.random.default_rng(41)
    signal = dense[:, 0] - dense[:, 3] + rng.normal(size=400)
    if "Classifier" in cls.__name__:
        y = np.digitize(signal, [-0.5, 0.5])
    else:
        y = np.round(np.exp(signal))
        params = dict(params, criterion="poisson")
    with csr_walks() as spy, no_dense_copy():
        ours = cls(**params).fit(X, y)
    assert sparse_growth_calls and spy.call_count > 0
    theirs = cls(**params).fit(dense, y)
    trees = getattr(ours, "estimators_", [ours])
    for a, b in zip(trees, getattr(theirs, "estimators_", [theirs]), strict=True):
        np.testing.assert_array_equal(a.tree_.feature, b.tree_.feature)
        np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)
        np.testing.assert_allclose(a.tree_.value, b.tree_.value, rtol=1e-12, atol=1e-12)
    rows, rows_dense = random_sparse(42, 60, 12, 0.3, "csr")
    if params.get("store_leaf_samples"):
        np.testing.assert_allclose(ours.predict_quantiles(rows, [0.1, 0.5, 0.9]),
                                   theirs.predict_quantiles(rows_dense, [0.1, 0.5, 0.9]),
                                   rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(ours.predict(rows), theirs.predict(rows_dense))


@pytest.mark.filterwarnings("ignore:.*no out-of-bag prediction")
def test_out_of_bag_rows_of_a_categorical_forest():
    """Trees with category tests read the out-of-bag rows of a sparse X by dense blocks: the
    dense fit's out-of-bag results."""
    X, dense = random_sparse(5, 500, 10, 0.3, "csr")
    rng = np.random.default_rng(5)
    dense[:, 0] = rng.integers(0, 4, 500)
    y = (dense[:, 0] == 2) ^ (dense[:, 3] > 0.5)
    params = dict(n_estimators=8, oob_score=True, random_state=0, categorical_features=[0])
    ours = jitree.RandomForestClassifier(**params).fit(type(X)(dense), y)
    theirs = jitree.RandomForestClassifier(**params).fit(dense, y)
    assert not ours.estimators_[0]._walks_rows()
    assert ours.oob_score_ == theirs.oob_score_
    np.testing.assert_array_equal(ours.oob_decision_function_, theirs.oob_decision_function_)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(2, 300), d=st.integers(1, 30),
       density=st.sampled_from([0.0, 0.05, 0.3, 1.0]), nan=st.sampled_from([0.0, 0.2]),
       float32=st.booleans(), regression=st.booleans(),
       walk=st.sampled_from(["predict_flat_csr", "predict_zero_paths_csr"]),
       negative=st.booleans())
def test_models_walk_the_stored_values_of_csr_rows(seed, n, d, density, nan, float32,
                                                   regression, walk, negative):
    """predict and predict_proba of a forest or a tree walk a sparse X's rows in lanes that
    take the next row when theirs reaches its leaf (predict_flat_csr), or by zero paths
    (predict_zero_paths_csr, forced here whatever the trees' depth): the dense walk's
    predictions, bit for bit, for full-depth trees (uneven paths), stored NaN, negative
    values and thresholds (a zero then goes right), explicit zeros, and chunks of 64 rows
    (forests)."""
    X, dense = random_sparse(seed, n, d, density, "csr",
                             dtype=np.float32 if float32 else np.float64, nan=nan)
    rng = np.random.default_rng(seed)
    if negative:  # values either side of zero, and some stored zeros
        X.data = np.where(rng.random(X.data.shape) < 0.5, -X.data, X.data)
        X.data[rng.random(X.data.shape) < 0.1] = 0.0
        dense = X.toarray()
    y = np.nan_to_num(dense[:, 0]) + rng.normal(size=n) if regression else \
        rng.integers(0, 3, n)
    forest = jitree.RandomForestRegressor if regression else jitree.RandomForestClassifier
    tree = jitree.DecisionTreeRegressor if regression else jitree.DecisionTreeClassifier
    depth = 0 if walk == "predict_zero_paths_csr" else np.inf
    for model in (forest(n_estimators=3, random_state=seed % 100).fit(dense, y),
                  tree(random_state=seed % 100).fit(dense, y)):
        with mock.patch.object(tree_module, "ZERO_PATH_DEPTH", depth), \
                mock.patch.object(kernels_predict, walk,
                                  wraps=getattr(kernels_predict, walk)) as spy:
            np.testing.assert_array_equal(model.predict(X), model.predict(dense))
            if not regression:
                np.testing.assert_array_equal(model.predict_proba(X.tocsc()),
                                              model.predict_proba(dense))
        assert spy.call_count == 1 + (not regression)


def _zero_child(flat, node):
    return flat.left[node] + (flat.threshold[node] < 0)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(2, 200), d=st.integers(1, 12),
       n_trees=st.integers(1, 4))
def test_zero_paths_are_each_trees_preorder_zero_child_first(seed, n, d, n_trees):
    """zero_paths against a recursive walk of each tree: positions in preorder, the zero
    child (left, right when the threshold is negative) right after its parent, the other
    child after the zero child's subtree; each position's zero path ending at a leaf; the
    positions that test each feature."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = rng.integers(0, 3, n)
    forest = jitree.RandomForestClassifier(n_estimators=n_trees, random_state=seed % 100)
    flat, _ = forest.fit(X, y)._layout(np.float64)
    paths = kernels_predict.zero_paths(flat, d + 2)
    order = []

    def visit(node):
        order.append(node)
        if flat.left[node] != node:
            zero = _zero_child(flat, node)
            visit(zero)
            visit(flat.left[node] + flat.left[node] + 1 - zero)

    for t, root in enumerate(flat.root):
        assert paths.start[t] == len(order)
        visit(root)
    assert paths.start[-1] == len(order)
    np.testing.assert_array_equal(paths.node, order)
    position = {node: p for p, node in enumerate(order)}
    internal = flat.left[paths.node] != paths.node
    for p, node in enumerate(order):
        if internal[p]:
            other = flat.left[node] + flat.left[node] + 1 - _zero_child(flat, node)
            assert paths.other[p] == position[other]
            assert paths.node[p + 1] == _zero_child(flat, node)
        else:
            assert paths.other[p] == -1
        walk = node
        while flat.left[walk] != walk:
            walk = _zero_child(flat, walk)
        assert paths.end[p] == position[walk]
    for f in range(d + 2):
        tests = paths.tested[paths.first[f]:paths.first[f + 1]]
        np.testing.assert_array_equal(
            tests, np.flatnonzero(internal & (flat.feature[paths.node] == f)))


# -- prediction reads only the columns the trees test -----------------------------------------
@pytest.mark.parametrize("cls", [jitree.DecisionTreeClassifier, jitree.DecisionTreeRegressor,
                                 jitree.RandomForestClassifier, jitree.ExtraTreesRegressor])
def test_wide_sparse_prediction_reads_the_tested_columns(cls, monkeypatch):
    """A wide sparse X is predicted from the columns the trees test, by a copy of the model
    with renumbered features (predict, predict_proba and apply: those columns' stored values,
    row by row; decision_path: dense blocks of them): the same predictions, leaves and paths
    as the dense copy; infinity anywhere in X is refused."""
    X, dense = random_sparse(8, 600, 300, 0.02, "csr")
    y = dense[:, :20].sum(axis=1)
    forest = "Forest" in cls.__name__ or "Trees" in cls.__name__
    params = dict(n_estimators=4, max_depth=4) if forest else dict(max_depth=5)
    if "Classifier" in cls.__name__:
        y = (y > 0).astype(int)
    model = cls(random_state=0, **params).fit(dense, y)
    blocks = []
    original = validation.sparse_row_blocks

    def spy(X, name="X", columns=None):
        blocks.append(columns)
        return original(X, name, columns)

    import jitree.model._base as base
    monkeypatch.setattr(base, "sparse_row_blocks", spy)
    method = "predict_proba" if "Classifier" in cls.__name__ else "predict"
    with csr_walks() as spy:
        np.testing.assert_array_equal(getattr(model, method)(X),
                                      getattr(model, method)(dense))
    width = spy.call_args.args[0][3]  # predict walks the rows' stored values, tested columns
    np.testing.assert_array_equal(model.predict(X.tocsc()), model.predict(dense))
    np.testing.assert_array_equal(model.apply(X), model.apply(dense))
    path, dense_path = model.decision_path(X), model.decision_path(dense)
    if forest:
        path, dense_path = path[0], dense_path[0]
    assert (path != dense_path).nnz == 0
    tested = np.unique(np.concatenate([t.tree_.feature[t.tree_.feature >= 0] for t in
                                       (model.estimators_ if forest else [model])]))
    assert blocks and all(np.array_equal(columns, tested) for columns in blocks)
    assert width == len(tested) < 300
    bad = X.tolil()
    untested = np.setdiff1d(np.arange(300), tested)[0]
    bad[0, untested] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        model.predict(bad)
    with pytest.raises(ValueError, match="299 features"):
        model.predict(X[:, :299])
    # apply walks the rows' stored values too (leaf ids: the table of node ids)
    with csr_walks() as spy:
        np.testing.assert_array_equal(model.apply(X), model.apply(dense))
    assert spy.call_count == (len(model.estimators_) if forest else 1)


def test_column_copies_follow_refits_and_stay_out_of_pickles():
    import pickle

    X, dense = random_sparse(9, 400, 50, 0.1, "csr")
    y = (dense[:, 3] > 0).astype(int)
    forest = jitree.RandomForestClassifier(n_estimators=3, random_state=0).fit(dense, y)
    forest.predict_proba(dense)  # the forest's own walk layouts (made by any prediction)
    size = len(pickle.dumps(forest))
    forest.predict_proba(X)
    forest.apply(X)  # blocks of the tested columns
    assert len(pickle.dumps(forest)) <= size + 64
    forest.fit(dense, (dense[:, 7] > 0).astype(int))  # other trees, other columns
    np.testing.assert_array_equal(forest.predict_proba(X), forest.predict_proba(dense))
    forest.set_params(warm_start=True, n_estimators=5).fit(dense, (dense[:, 7] > 0).astype(int))
    np.testing.assert_array_equal(forest.predict_proba(X), forest.predict_proba(dense))
    tree = jitree.DecisionTreeRegressor(max_depth=3).fit(dense, dense[:, 1])
    tree.predict(X)
    tree.fit(dense, dense[:, 2])
    np.testing.assert_array_equal(tree.predict(X), tree.predict(dense))


def test_store_leaf_samples_quantiles_and_names_on_sparse_rows():
    pd = pytest.importorskip("pandas")
    X, dense = random_sparse(10, 300, 40, 0.1, "csr")
    y = dense[:, 0] + dense[:, 1]
    frame = pd.DataFrame(dense, columns=[f"c{j}" for j in range(40)])
    model = jitree.RandomForestRegressor(n_estimators=3, random_state=0,
                                         store_leaf_samples=True).fit(frame, y)
    with pytest.warns(UserWarning, match="valid feature names"):
        quantiles = model.predict_quantiles(X, [0.1, 0.9])
    np.testing.assert_array_equal(quantiles, model.predict_quantiles(frame, [0.1, 0.9]))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), n_columns=st.integers(1, 12), longest=st.integers(0, 400),
       float32=st.booleans(), distinct=st.sampled_from([2, 7, 1000, None]))
def test_column_sort_is_a_stable_sort_of_each_column(seed, n_columns, longest, float32,
                                                     distinct):
    """sort_columns (a radix sort on the values' bits) against NumPy's stable sort of each
    column: values of both signs and many magnitudes, ties (rows keep their order), empty
    and one-value columns, both widths."""
    from jitree.kernels.sparse import sort_columns
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, longest + 1, n_columns)
    start = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    dtype = np.float32 if float32 else np.float64
    n = int(start[-1])
    if distinct is None:
        value = rng.normal(size=n) * 10.0 ** rng.integers(-30, 30, n)
    else:
        value = rng.integers(-distinct, distinct, n).astype(float)
        value[value == 0.0] = 0.5
    value = value.astype(dtype)
    row = rng.integers(0, 2**31 - 1, n).astype(np.int32)
    expected_value, expected_row = value.copy(), row.copy()
    for f in range(n_columns):
        part = slice(start[f], start[f + 1])
        order = np.argsort(value[part], kind="stable")
        expected_value[part] = value[part][order]
        expected_row[part] = row[part][order]
    sort_columns(start, row, value.view(np.uint32 if float32 else np.uint64))
    np.testing.assert_array_equal(value, expected_value)
    np.testing.assert_array_equal(row, expected_row)
