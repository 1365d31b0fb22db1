"""predict_quantiles (quantile regression forests): against a naive twin that gathers each
row's co-leaf training targets by brute force, against NumPy's quantile where the weights are
counts, against quantile-forest on the same trees, and through persistence, Dask, the CLI
and bad inputs."""

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import jitree
from jitree.kernels.quantiles import (
    INTERPOLATIONS,
    LINEAR,
    sort_by_rank,
    sorted_weighted_quantiles,
)

QUANTILES = np.array([0.0, 0.05, 0.25, 0.5, 0.9, 0.95, 1.0])


def _data(n=240, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(size=n)
    return X, y


# -- naive twin -------------------------------------------------------------------------------
def naive_quantiles(values, weights, quantiles):
    """The documented rule, step by step: distinct values, weights as observations, 1-based
    rank q (S - 1) + 1, a linear step of one observation after each value's last copy."""
    distinct = np.unique(values)
    a = np.array([weights[values == v].sum() for v in distinct])
    cumulative = np.cumsum(a)
    total = cumulative[-1]
    out = []
    for q in quantiles:
        rank = q * (total - 1) + 1
        below = [k for k in range(len(distinct)) if cumulative[k] <= rank]
        if not below:
            out.append(distinct[0])
        elif below[-1] == len(distinct) - 1:
            out.append(distinct[-1])
        else:
            j = below[-1]
            out.append(distinct[j] + min(rank - cumulative[j], 1) * (distinct[j + 1]
                                                                     - distinct[j]))
    return np.array(out)


def naive_forest_quantiles(trees, tree_weights, bootstrap, X_train, y, X, quantiles):
    """Meinshausen's weights by brute force: for each row and tree, the training rows in the
    row's leaf with their weight in the tree, each tree's share summing to 1; rescaled to the
    number of draws in the row's leaves (``bootstrap``: the weights are the draws)."""
    out = np.empty((X.shape[0], len(quantiles)))
    train_leaves = [tree.apply(X_train) for tree in trees]
    row_leaves = [tree.apply(X) for tree in trees]
    for i in range(X.shape[0]):
        omega = np.zeros(y.shape[0])
        draws = 0.0
        for t, weight in enumerate(tree_weights):
            members = (train_leaves[t] == row_leaves[t][i]) & (weight > 0)
            omega[members] += weight[members] / weight[members].sum()
            draws += weight[members].sum() if bootstrap else members.sum()
        omega *= draws / len(trees)
        keep = omega > 0
        out[i] = naive_quantiles(y[keep], omega[keep], quantiles)
    return out


@given(values=st.lists(st.floats(-1e308, 1e308), min_size=1, max_size=12, unique=True),
       counts=st.lists(st.integers(1, 4), min_size=12, max_size=12),
       levels=st.sampled_from([2, 4, 8]))
def test_a_quantile_on_a_sample_is_that_sample_exactly(values, counts, levels):
    """A quantile whose rank falls on a sample returns that sample's value itself, as NumPy
    does (not v_j + 1 (v_j+1 - v_j), which rounds, or overflows between -1e308 and 1e308)."""
    values = np.sort(np.array(values))
    counts = np.array(counts[:values.shape[0]])
    total = int(counts.sum())
    # ranks q (total - 1) + 1 that are whole numbers: total - 1 a multiple of the levels
    counts[-1] += (-(total - 1)) % levels
    total = int(counts.sum())
    quantiles = np.arange(levels + 1) / levels
    out = np.empty(quantiles.shape[0])
    sorted_weighted_quantiles(values, counts.astype(np.float64), np.empty(values.shape[0]),
                              quantiles, LINEAR, out)
    np.testing.assert_array_equal(out, np.repeat(values, counts)[
        (quantiles * (total - 1)).astype(np.int64)])


@given(values=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=10, unique=True),
       counts=st.lists(st.integers(1, 4), min_size=10, max_size=10),
       quantiles=st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6),
       interpolation=st.sampled_from(sorted(INTERPOLATIONS)))
# "nearest" halfway between two samples: the even 0-based position, as NumPy rounds
@example(values=[1.0, 2.0, 3.0, 4.0], counts=[1] * 10, quantiles=[0.5, 1 / 6, 5 / 6],
         interpolation="nearest")
@example(values=[1.0, 2.0, 3.0], counts=[2, 1, 1] + [1] * 7, quantiles=[0.5, 1 / 6],
         interpolation="nearest")
# a quantile too small to move 1 + q (S - 1): still past the first sample
@example(values=[0.0, 1.0], counts=[1] * 10, quantiles=[2.225073858507e-311, 1e-20],
         interpolation="higher")
# ... and a quantile just below 1 whose 1 + q (S - 1) rounds up to S: before the last sample
@example(values=[-3.0, -2.0, 1.0], counts=[1] * 10, quantiles=[1 - 2**-53],
         interpolation="lower")
def test_interpolations_are_numpys_on_the_repeated_sample(values, counts, quantiles,
                                                          interpolation):
    """Every ``interpolation`` with integer weights: NumPy's np.quantile(method=...) of the
    sample with each value repeated its weight's times (lower, higher and nearest exactly;
    linear and midpoint up to rounding)."""
    values = np.sort(np.array(values))
    counts = np.array(counts[:values.shape[0]])
    quantiles = np.array(quantiles)
    out = np.empty(quantiles.shape[0])
    sorted_weighted_quantiles(values, counts.astype(np.float64), np.empty(values.shape[0]),
                              quantiles, INTERPOLATIONS[interpolation], out)
    expected = np.quantile(np.repeat(values, counts), quantiles, method=interpolation)
    if interpolation in ("linear", "midpoint"):
        np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-9)
    else:
        np.testing.assert_array_equal(out, expected)


def test_interpolation_of_trees_and_forests():
    """predict_quantiles(interpolation=...): a tree without weights gives NumPy's quantile of
    its leaf's targets; a forest's lower and higher quantiles are training targets that
    bracket its linear ones; other names are refused."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 3))
    y = np.round(X[:, 0] * 3 + rng.normal(size=300), 1)
    tree = jitree.DecisionTreeRegressor(max_depth=3, store_leaf_samples=True).fit(X, y)
    leaves = tree.apply(X)
    q = [0.1, 0.25, 0.5, 0.9]
    for name in INTERPOLATIONS:
        got = tree.predict_quantiles(X[:20], q, interpolation=name)
        for i in range(20):
            expected = np.quantile(y[leaves == leaves[i]], q, method=name)
            np.testing.assert_allclose(got[i], expected, rtol=1e-12, atol=1e-12)
    forest = jitree.RandomForestRegressor(n_estimators=10, max_depth=4, random_state=0,
                                          store_leaf_samples=True).fit(X, y)
    low, linear, high = (forest.predict_quantiles(X[:50], q, interpolation=name)
                         for name in ("lower", "linear", "higher"))
    assert np.isin(low, y).all() and np.isin(high, y).all()
    assert (low <= linear).all() and (linear <= high).all()
    with pytest.raises(ValueError, match="interpolation must be one of"):
        forest.predict_quantiles(X[:5], 0.5, interpolation="cubic")


def test_integer_weights_are_numpy_quantiles_of_the_repeated_sample():
    rng = np.random.default_rng(1)
    for _ in range(50):
        n = int(rng.integers(1, 12))
        values = np.sort(rng.choice(rng.normal(size=20), n, replace=False))
        counts = rng.integers(1, 5, n)
        out = np.empty(QUANTILES.shape[0])
        sorted_weighted_quantiles(values, counts.astype(np.float64), np.empty(n), QUANTILES,
                                  LINEAR, out)
        # same rank arithmetic as NumPy's linear method, up to rounding
        np.testing.assert_allclose(out, np.quantile(np.repeat(values, counts), QUANTILES),
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(out, naive_quantiles(values, counts.astype(float),
                                                        QUANTILES), rtol=1e-12, atol=1e-12)


def test_tree_quantiles_are_numpy_quantiles_of_the_leaf():
    X, y = _data()
    model = jitree.DecisionTreeRegressor(max_depth=3, store_leaf_samples=True).fit(X, y)
    out = model.predict_quantiles(X, QUANTILES)
    leaves = model.apply(X)
    for i in range(0, X.shape[0], 7):
        np.testing.assert_allclose(out[i], np.quantile(y[leaves == leaves[i]], QUANTILES),
                                   rtol=1e-12, atol=1e-12)
    # a single number gives a 1-D result
    np.testing.assert_array_equal(model.predict_quantiles(X, 0.5), out[:, 3])


@pytest.mark.parametrize("kind", ["random_forest", "extra_trees_weighted"])
def test_forest_against_naive_twin(kind):
    X, y = _data()
    X_new, _ = _data(60, seed=5)
    if kind == "random_forest":
        model = jitree.RandomForestRegressor(n_estimators=8, min_samples_leaf=4,
                                             random_state=3, store_leaf_samples=True)
        model.fit(X, y)
        weights = [np.bincount(bag, minlength=X.shape[0]).astype(float)
                   for bag in model.estimators_samples_]
    else:
        sample_weight = np.random.default_rng(2).uniform(0.2, 3.0, X.shape[0])
        sample_weight[:10] = 0.0
        model = jitree.ExtraTreesRegressor(n_estimators=6, min_samples_leaf=5, random_state=4,
                                           store_leaf_samples=True)
        model.fit(X, y, sample_weight=sample_weight)
        weights = [sample_weight] * 6
    trees = [estimator.tree_ for estimator in model.estimators_]
    expected = naive_forest_quantiles(trees, weights, kind == "random_forest", X, y, X_new,
                                      QUANTILES)
    np.testing.assert_allclose(model.predict_quantiles(X_new, QUANTILES), expected,
                               rtol=1e-9, atol=1e-9)


def test_equal_to_quantile_forest_on_the_same_trees():
    qf = pytest.importorskip("quantile_forest")
    X, y = _data(300)
    X_new, _ = _data(80, seed=9)
    # without bootstrap and with every feature, each tree is the best-split tree of depth 3,
    # the same in jitree and scikit-learn on continuous data (SPEC section 8)
    params = dict(n_estimators=3, max_depth=3, bootstrap=False, max_features=1.0,
                  random_state=0)
    ours = jitree.RandomForestRegressor(store_leaf_samples=True, **params).fit(X, y)
    theirs = qf.RandomForestQuantileRegressor(max_samples_leaf=None, **params).fit(X, y)
    for mine, sklearns in zip(ours.estimators_, theirs.estimators_, strict=True):
        np.testing.assert_allclose(mine.predict(X), sklearns.predict(X), rtol=1e-12)
    quantiles = [0.05, 0.25, 0.5, 0.75, 0.95]
    expected = theirs.predict(X_new, quantiles=quantiles, weighted_leaves=True)
    np.testing.assert_allclose(ours.predict_quantiles(X_new, quantiles), expected,
                               rtol=1e-9, atol=1e-9)


def test_chunks_and_dataframes():
    pd = pytest.importorskip("pandas")
    X, y = _data()
    frame = pd.DataFrame(X, columns=list("abcd"))
    model = jitree.RandomForestRegressor(n_estimators=4, max_depth=4, random_state=0,
                                         store_leaf_samples=True).fit(frame, y)
    whole = model.predict_quantiles(frame, [0.1, 0.9])
    chunks = model.predict_quantiles(iter([frame[:100], frame[100:]]), [0.1, 0.9])
    np.testing.assert_array_equal(whole, chunks)
    assert np.all(whole[:, 0] <= whole[:, 1])


def test_persistence_round_trip(tmp_path):
    X, y = _data()
    for honest in (False, True):
        model = jitree.DecisionTreeRegressor(max_depth=4, store_leaf_samples=True,
                                             honest=honest, random_state=0).fit(X, y)
        jitree.save(model, tmp_path / "model.jitree")
        loaded = jitree.load(tmp_path / "model.jitree")
        np.testing.assert_array_equal(loaded.predict_quantiles(X, QUANTILES),
                                      model.predict_quantiles(X, QUANTILES))
        for name in ("start", "stop", "sample", "weight", "target"):
            np.testing.assert_array_equal(getattr(loaded.leaf_samples_, name),
                                          getattr(model.leaf_samples_, name))
    plain = jitree.DecisionTreeRegressor(max_depth=2).fit(X, y)
    jitree.save(plain, tmp_path / "plain.jitree")
    assert not hasattr(jitree.load(tmp_path / "plain.jitree"), "leaf_samples_")


def test_load_refuses_crafted_leaf_samples(tmp_path):
    import json
    import zipfile

    X, y = _data()
    model = jitree.DecisionTreeRegressor(max_depth=3, store_leaf_samples=True).fit(X, y)
    path = tmp_path / "model.jitree"
    jitree.save(model, path)
    with np.load(path) as archive:
        arrays = {name: archive[name] for name in archive.files}

    def write(changed, name):
        target = tmp_path / name
        with open(target, "wb") as file:
            np.savez(file, **{**arrays, **changed})
        return target

    bad_sample = arrays["leaf_sample"].copy()
    bad_sample[0] = 10**6
    with pytest.raises(ValueError, match="sample index"):
        jitree.load(write({"leaf_sample": bad_sample}, "sample.jitree"))
    bad_stop = arrays["leaf_stop"].copy()
    bad_stop[-1] = 10**9
    with pytest.raises(ValueError, match="block"):
        jitree.load(write({"leaf_stop": bad_stop}, "stop.jitree"))
    metadata = json.loads(arrays["metadata"].tobytes())
    metadata["leaf_samples"] = None
    text = np.frombuffer(json.dumps(metadata).encode(), dtype=np.uint8)
    with pytest.raises(ValueError, match="leaf sample arrays are present"):
        jitree.load(write({"metadata": text}, "meta.jitree"))
    assert zipfile.is_zipfile(path)


def test_dask_arrays_and_dataframes():
    pytest.importorskip("dask")
    import dask.array as da
    import dask.dataframe as dd
    import pandas as pd

    import jitree.dask

    X, y = _data()
    model = jitree.RandomForestRegressor(n_estimators=4, max_depth=4, random_state=0,
                                         store_leaf_samples=True).fit(X, y)
    expected = model.predict_quantiles(X, [0.1, 0.5, 0.9])
    lazy = jitree.dask.predict_quantiles(model, da.from_array(X, chunks=(70, 4)),
                                         [0.1, 0.5, 0.9])
    np.testing.assert_array_equal(lazy.compute(), expected)
    frame = dd.from_pandas(pd.DataFrame(X), npartitions=3)
    result = jitree.dask.predict_quantiles(model, frame, [0.1, 0.5, 0.9]).compute()
    assert list(result.columns) == [0.1, 0.5, 0.9]
    np.testing.assert_array_equal(result.to_numpy(), expected)
    series = jitree.dask.predict_quantiles(model, frame, 0.5).compute()
    np.testing.assert_array_equal(series.to_numpy(), expected[:, 1])
    with pytest.raises(AttributeError, match="predict_quantiles"):
        jitree.dask.predict_quantiles(jitree.DecisionTreeClassifier().fit(X, y > 0),
                                      da.from_array(X), 0.5)


def test_cli_predict_quantiles(tmp_path, capsys):
    from jitree.cli import main

    X, y = _data()
    np.save(tmp_path / "train.npy", np.column_stack([X, y]))
    np.save(tmp_path / "rows.npy", X[:30])
    assert main(["fit", str(tmp_path / "train.npy"), "--target", "4", "-o",
                 str(tmp_path / "model.jitree"), "--max-depth", "3",
                 "--store-leaf-samples"]) == 0
    assert main(["predict", str(tmp_path / "model.jitree"), str(tmp_path / "rows.npy"),
                 "-o", str(tmp_path / "out.csv"), "--quantiles", "0.05,0.5,0.95", "-q"]) == 0
    lines = (tmp_path / "out.csv").read_text().splitlines()
    assert lines[0] == "quantile_0.05,quantile_0.5,quantile_0.95"
    written = np.loadtxt(tmp_path / "out.csv", delimiter=",", skiprows=1)
    model = jitree.load(tmp_path / "model.jitree")
    np.testing.assert_allclose(written, model.predict_quantiles(X[:30], [0.05, 0.5, 0.95]))
    # a model without leaf samples: a clear error, exit status 1
    assert main(["fit", str(tmp_path / "train.npy"), "--target", "4", "-o",
                 str(tmp_path / "plain.jitree"), "--max-depth", "3"]) == 0
    capsys.readouterr()
    assert main(["predict", str(tmp_path / "plain.jitree"), str(tmp_path / "rows.npy"),
                 "-o", str(tmp_path / "o.csv"), "--quantiles", "0.5", "-q"]) == 1
    assert "store_leaf_samples=True" in capsys.readouterr().err


@pytest.mark.parametrize("quantiles, error, match", [
    (1.5, ValueError, r"in \[0, 1\]"),
    ([0.1, -0.2], ValueError, r"in \[0, 1\]"),
    (float("nan"), ValueError, r"in \[0, 1\]"),
    ([], ValueError, "empty"),
    ([[0.1, 0.2]], ValueError, "1-D"),
    ("0.5", TypeError, "number"),
    (["a"], TypeError, "number"),
    (None, TypeError, "number"),
    (True, TypeError, "number"),
])
def test_bad_quantiles(quantiles, error, match):
    X, y = _data(60)
    model = jitree.DecisionTreeRegressor(max_depth=2, store_leaf_samples=True).fit(X, y)
    with pytest.raises(error, match=match):
        model.predict_quantiles(X, quantiles)


def test_bad_models():
    X, y = _data(60)
    for cls in (jitree.DecisionTreeClassifier, jitree.RandomForestClassifier,
                jitree.ExtraTreesClassifier):
        with pytest.raises(AttributeError):
            cls().fit(X, y > 0).predict_quantiles(X, 0.5)
    for cls in (jitree.DecisionTreeRegressor, jitree.RandomForestRegressor):
        with pytest.raises(jitree.NotFittedError):
            cls(store_leaf_samples=True).predict_quantiles(X, 0.5)
        with pytest.raises(ValueError, match="store_leaf_samples=True"):
            cls(n_jobs=1).fit(X, y).predict_quantiles(X, 0.5)
        with pytest.raises(TypeError, match="store_leaf_samples"):
            cls(store_leaf_samples="yes").fit(X, y)
    model = jitree.DecisionTreeRegressor(max_depth=2, store_leaf_samples=True).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        model.predict_quantiles(X[:, :3], 0.5)
    # refitting without them drops them
    model.set_params(store_leaf_samples=False).fit(X, y)
    assert not hasattr(model, "leaf_samples_")


def test_category_tests_and_missing_values():
    X, y = _data()
    rng = np.random.default_rng(4)
    X[:, 3] = rng.integers(0, 6, X.shape[0])
    y = y + X[:, 3]
    X[rng.random(X.shape) < 0.05] = np.nan
    X[:, 3] = np.where(np.isnan(X[:, 3]), 0, X[:, 3])
    X_new, _ = _data(50, seed=8)
    X_new[:, 3] = rng.integers(0, 6, 50)
    X_new[::7, 0] = np.nan
    model = jitree.RandomForestRegressor(n_estimators=5, min_samples_leaf=3, random_state=1,
                                         categorical_features=[3], store_leaf_samples=True)
    model.fit(X, y)
    assert not all(e.tree_.is_binary_threshold for e in model.estimators_)
    weights = [np.bincount(bag, minlength=X.shape[0]).astype(float)
               for bag in model.estimators_samples_]
    trees = [estimator.tree_ for estimator in model.estimators_]
    expected = naive_forest_quantiles(trees, weights, True, X, y, X_new, QUANTILES)
    np.testing.assert_allclose(model.predict_quantiles(X_new, QUANTILES), expected,
                               rtol=1e-9, atol=1e-9)
    numeric = jitree.RandomForestRegressor(n_estimators=5, random_state=1,
                                           store_leaf_samples=True).fit(X, y)
    weights = [np.bincount(bag, minlength=X.shape[0]).astype(float)
               for bag in numeric.estimators_samples_]
    expected = naive_forest_quantiles([e.tree_ for e in numeric.estimators_], weights, True,
                                      X, y, X_new, QUANTILES)
    np.testing.assert_allclose(numeric.predict_quantiles(X_new, QUANTILES), expected,
                               rtol=1e-9, atol=1e-9)
    X_new[3, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        numeric.predict_quantiles(X_new, 0.5)


def test_reduced_error_pruning_drops_the_leaf_samples():
    X, y = _data()
    model = jitree.DecisionTreeRegressor(store_leaf_samples=True, random_state=0).fit(X, y)
    model.prune_reduced_error(X[:100], y[:100])
    with pytest.raises(ValueError, match="pruned since"):
        model.predict_quantiles(X, 0.5)


def test_quantile_kernel_specialisations():
    # one per type of X (as for predict_flat): the flat trees, leaf table, layout and
    # quantiles always come with one type each
    from jitree.kernels.quantiles import predict_quantiles_flat

    X, y = _data()
    for model in (jitree.DecisionTreeRegressor(max_depth=3, store_leaf_samples=True),
                  jitree.RandomForestRegressor(n_estimators=2, max_depth=3,
                                               store_leaf_samples=True)):
        for dtype in (np.float32, np.float64):
            model.fit(X.astype(dtype), y).predict_quantiles(X.astype(dtype), [0.1, 0.9])
            model.predict_quantiles(X.astype(dtype), 0.5)
    signatures = predict_quantiles_flat.signatures
    assert {str(signature[0].dtype) for signature in signatures} <= {"float32", "float64"}
    assert len({signature[4:] for signature in signatures}) <= 2, signatures


@given(st.integers(1, 32),
       st.lists(st.one_of(st.integers(0, 20), st.integers(0, 2**32 - 1)), max_size=300))
def test_sort_by_rank_is_numpy_sort(rank_bits, draws):
    """The radix sort of a row's entries (rank << 32 | index) against np.sort of the keys as
    unsigned integers: short rows (the insertion sort) and long ones (one to four 8-bit
    passes), equal ranks included, and 32-bit ranks (the presort's float32 keys) whose top
    bit makes the int64 key negative."""
    ranks = np.array(draws, dtype=np.int64) % (1 << rank_bits)
    keys = (ranks << 32) | np.arange(ranks.shape[0], dtype=np.int64)
    expected = np.sort(keys.view(np.uint64))
    sort_by_rank(keys, np.empty_like(keys), rank_bits)
    np.testing.assert_array_equal(keys.view(np.uint64), expected)


def test_chunks_and_files_of_close_quantiles(tmp_path):
    """predict_chunks takes quantiles as predict_file does, and quantiles that print alike
    with few digits get columns of their own names."""
    from jitree.batch import predict_chunks, predict_file

    X, y = _data()
    model = jitree.DecisionTreeRegressor(max_depth=3, store_leaf_samples=True).fit(X, y)
    close = [0.1, 0.1000001, 0.9]
    chunks = list(predict_chunks(model, [X[:20], X[20:50]], "predict_quantiles", close))
    np.testing.assert_array_equal(np.vstack(chunks), model.predict_quantiles(X[:50], close))
    with pytest.raises(ValueError, match="needs quantiles"):
        next(predict_chunks(model, [X[:20]], "predict_quantiles"))
    np.save(tmp_path / "rows.npy", X[:50])
    predict_file(model, tmp_path / "rows.npy", tmp_path / "q.csv",
                 method="predict_quantiles", quantiles=close)
    header = (tmp_path / "q.csv").read_text().splitlines()[0].split(",")
    assert header == ["quantile_0.1", "quantile_0.1000001", "quantile_0.9"]
