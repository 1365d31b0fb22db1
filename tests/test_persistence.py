"""save/load: exact round trips, and refusal of every file that is not a sound jitree model."""

import copy
import faulthandler
import io
import json
import pickle
import zipfile
from decimal import Decimal

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import jitree
from jitree.model.persistence import load, save
from jitree.model.tree import (
    _ARRAYS,
    _FEATURE_ARRAYS,
    _POOLS,
    FEATURE_CATEGORICAL,
    FEATURE_NUMERIC,
    FEATURE_ORDINAL,
    TREE_LEAF,
    TREE_UNDEFINED,
    Tree,
)
from jitree.model.tree_check import check_tree

L = TREE_LEAF
ALL_ARRAYS = [name for name, _ in _ARRAYS + _POOLS + _FEATURE_ARRAYS]
V1_ARRAYS = ["feature", "threshold", "children_left", "children_right", "value", "impurity",
             "n_node_samples", "weighted_n_node_samples"]

RNG = np.random.default_rng(0)
X = RNG.normal(size=(300, 5))
X_TEST = RNG.normal(size=(200, 5))
GROUP = np.digitize(X[:, 0] + 0.5 * X[:, 1] ** 2, [0.0, 1.0])  # 3 classes

LABELS = {
    "int64": np.array([-1, 3, 7]),
    "int8": np.array([-1, 3, 7], dtype=np.int8),
    "uint16": np.array([0, 3, 65535], dtype=np.uint16),
    "float64": np.array([-1.0, 2.0, 10.0]),
    "float32": np.array([-1.0, 2.0, 10.0], dtype=np.float32),
    "str": np.array(["a", "bb", "ccé"]),
    "object": np.array(["no", "maybe", "yes"], dtype=object),
    "bytes": np.array([b"x", b"yy", b"\xff"]),
    "bool": np.array([False, True, True]),
}


def _same_tree(a, b):
    for name in ALL_ARRAYS:
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        assert getattr(a, name).dtype == getattr(b, name).dtype, name
    assert (a.n_features, a.n_classes) == (b.n_features, b.n_classes)


def _assert_same_predictions(loaded, model, X_eval):
    for method in ("predict", "apply") + (("predict_proba",) if hasattr(model, "classes_")
                                          else ()):
        expected = getattr(model, method)(X_eval)
        got = getattr(loaded, method)(X_eval)
        np.testing.assert_array_equal(got, expected, err_msg=method)
        assert got.dtype == expected.dtype, method


def _round_trip(model, tmp_path, name="model.jitree"):
    path = tmp_path / name
    save(model, path)
    return load(path)


# -- round trips ---------------------------------------------------------------------------------
@pytest.mark.parametrize("labels", list(LABELS))
def test_classifier_round_trip(labels, tmp_path):
    y = LABELS[labels][GROUP]
    model = jitree.DecisionTreeClassifier(max_depth=6, random_state=3).fit(X, y)
    loaded = _round_trip(model, tmp_path)
    assert type(loaded) is jitree.DecisionTreeClassifier
    np.testing.assert_array_equal(loaded.classes_, model.classes_)
    assert loaded.classes_.dtype == model.classes_.dtype
    assert loaded.n_classes_ == model.n_classes_
    _same_tree(loaded.tree_, model.tree_)
    for X_eval in (X_TEST, X_TEST.astype(np.float32)):
        _assert_same_predictions(loaded, model, X_eval)
    assert loaded.get_params() == model.get_params()


def test_regressor_round_trip(tmp_path):
    y = X[:, 0] * 2.0 + np.sin(3 * X[:, 1])
    model = jitree.DecisionTreeRegressor(min_samples_leaf=3, max_features=0.8,
                                         random_state=1).fit(X, y)
    loaded = _round_trip(model, tmp_path)
    assert type(loaded) is jitree.DecisionTreeRegressor
    _same_tree(loaded.tree_, model.tree_)
    for X_eval in (X_TEST, X_TEST.astype(np.float32)):
        _assert_same_predictions(loaded, model, X_eval)
    assert loaded.get_params() == model.get_params()
    assert loaded.max_features_ == model.max_features_ == 4
    np.testing.assert_array_equal(loaded.feature_importances_, model.feature_importances_)


def test_params_round_trip(tmp_path):
    y = LABELS["int64"][GROUP]
    params = dict(criterion="entropy", splitter="random", max_depth=5, min_samples_split=0.05,
                  min_samples_leaf=2, max_features="sqrt", max_leaf_nodes=12,
                  min_impurity_decrease=1e-4, class_weight={-1: 2, 3: 0.5, 7: 1.0},
                  purity_threshold=0.95, random_state=42, n_jobs=1)
    model = jitree.DecisionTreeClassifier(**params).fit(X, y)
    loaded = _round_trip(model, tmp_path)
    assert loaded.get_params() == model.get_params()
    assert loaded.class_weight == {-1: 2, 3: 0.5, 7: 1.0}
    assert type(loaded.class_weight[-1]) is int
    assert loaded.max_features_ == model.max_features_ == 2
    _assert_same_predictions(loaded, model, X_TEST)
    # a refit of the loaded model grows the same tree (same parameters, same seed)
    _same_tree(loaded.fit(X, y).tree_, model.tree_)


def test_random_state_generator_is_stored_as_none(tmp_path):
    model = jitree.DecisionTreeClassifier(max_depth=3,
                                          random_state=np.random.RandomState(0)).fit(X, GROUP)
    loaded = _round_trip(model, tmp_path)
    assert loaded.random_state is None
    _assert_same_predictions(loaded, model, X_TEST)


def test_feature_names_round_trip(tmp_path):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=["alpha", "beta", "gamma", "delta", "épsilon"])
    model = jitree.DecisionTreeClassifier(max_depth=4).fit(frame, LABELS["str"][GROUP])
    loaded = _round_trip(model, tmp_path)
    np.testing.assert_array_equal(loaded.feature_names_in_, model.feature_names_in_)
    assert loaded.feature_names_in_.dtype == object
    test_frame = pd.DataFrame(X_TEST, columns=frame.columns)
    _assert_same_predictions(loaded, model, test_frame)
    # columns matched by name, as for the fitted model
    shuffled = test_frame[list(reversed(frame.columns))]
    np.testing.assert_array_equal(loaded.predict(shuffled), model.predict(test_frame))


def test_single_node_tree_round_trip(tmp_path):
    model = jitree.DecisionTreeClassifier().fit(X, np.zeros(X.shape[0], dtype=int))
    assert model.tree_.node_count == 1
    _assert_same_predictions(_round_trip(model, tmp_path), model, X_TEST)


def test_save_replaces_existing_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "model.jitree"
    path.write_text("old content")
    model = jitree.DecisionTreeRegressor(max_depth=2).fit(X, X[:, 0])
    save(model, str(path))
    assert [p.name for p in tmp_path.iterdir()] == ["model.jitree"]
    _assert_same_predictions(load(str(path)), model, X_TEST)


def test_save_refuses_what_it_cannot_store(tmp_path):
    with pytest.raises(jitree.NotFittedError):
        save(jitree.DecisionTreeClassifier(), tmp_path / "a")
    with pytest.raises(TypeError, match="ExtraTreeClassifier or ExtraTreeRegressor"):
        save(object(), tmp_path / "a")
    labels = np.array([Decimal(int(group)) for group in GROUP], dtype=object)
    model = jitree.DecisionTreeClassifier(max_depth=2).fit(X, labels)
    with pytest.raises(TypeError, match="class label"):
        save(model, tmp_path / "a")
    assert not list(tmp_path.iterdir())


def test_pickle_and_deepcopy_of_fitted_estimators():
    classifier = jitree.DecisionTreeClassifier(max_depth=5).fit(X, LABELS["str"][GROUP])
    regressor = jitree.DecisionTreeRegressor(max_depth=5).fit(X, X[:, 1])
    for model in (classifier, regressor):
        model.predict(X_TEST)  # fills the Tree's derived-table cache: must not break copies
        for twin in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model)):
            assert twin.tree_ is not model.tree_
            _same_tree(twin.tree_, model.tree_)
            _assert_same_predictions(twin, model, X_TEST)


# -- categorical and ordinal features, missing values --------------------------------------------
def _categorical_data(n, seed):
    """Object X: a string category with None, an ordinal level, a numeric column with NaN, an
    integer category and a boolean one; labels that depend on all of them."""
    rng = np.random.default_rng(seed)
    color = rng.choice(np.array(["red", "green", "blue", "black", None], dtype=object), n)
    size = rng.choice(np.array(["S", "M", "L"], dtype=object), n)
    number = rng.normal(size=n)
    number[::7] = np.nan
    code = rng.integers(0, 40, size=n) * 5
    flag = rng.choice(np.array([True, False], dtype=object), n)
    X = np.empty((n, 5), dtype=object)
    X[:, 0], X[:, 1], X[:, 2], X[:, 3], X[:, 4] = color, size, number, code, flag
    y = ((color == "red").astype(int) + (np.nan_to_num(number) > 0.3)
         + (code > 100) * flag.astype(bool))
    return X, np.array(["a", "b", "c", "d"])[y]


CATEGORICAL_PARAMS = dict(categorical_features=[0, 3, 4], ordinal_features=[1],
                          criterion="entropy", max_depth=5, random_state=0)


@pytest.mark.parametrize("split", ["subset", "one_vs_rest", "multiway"])
def test_categorical_model_round_trip(split, tmp_path):
    X, y = _categorical_data(400, 0)
    model = jitree.DecisionTreeClassifier(categorical_split=split, **CATEGORICAL_PARAMS)
    model.fit(X, y)
    assert model.tree_.split_kind.max() == (2 if split == "multiway" else 1)
    loaded = _round_trip(model, tmp_path)
    _same_tree(loaded.tree_, model.tree_)
    assert loaded.get_params() == model.get_params()
    assert len(loaded.categories_) == 5 and loaded.categories_[2] is None
    for ours, theirs in zip(loaded.categories_, model.categories_, strict=True):
        if theirs is not None:
            np.testing.assert_array_equal(ours, theirs)
            assert ours.dtype == theirs.dtype
            assert [type(v) for v in ours.tolist()] == [type(v) for v in theirs.tolist()]
    X_eval, _ = _categorical_data(300, 1)
    X_eval[:20, 0] = "purple"  # unseen categories and levels
    X_eval[20:40, 1] = "XL"
    X_eval[40:60, 3] = 7
    X_eval[60:80] = None
    _assert_same_predictions(loaded, model, X_eval)
    assert jitree.export_text(loaded) == jitree.export_text(model)
    assert jitree.rules_to_text(loaded) == jitree.rules_to_text(model)


def test_categorical_dataframe_round_trip(tmp_path):
    pd = pytest.importorskip("pandas")
    X, y = _categorical_data(400, 2)
    frame = pd.DataFrame({
        "color": pd.Categorical(X[:, 0]),
        "size": pd.Categorical(X[:, 1], categories=["S", "M", "L"], ordered=True),
        "number": X[:, 2].astype(float), "code": X[:, 3].astype(np.int64),
        "flag": X[:, 4].astype(bool)})
    mask = np.array([False, False, False, True, True])  # code and flag; pandas finds the rest
    model = jitree.DecisionTreeClassifier(categorical_features=mask, max_depth=6,
                                          random_state=0).fit(frame, y)
    loaded = _round_trip(model, tmp_path)
    assert loaded.categorical_features == mask.tolist()  # arrays are stored as lists
    np.testing.assert_array_equal(loaded.tree_.feature_kind, model.tree_.feature_kind)
    np.testing.assert_array_equal(loaded.categories_[1], ["S", "M", "L"])
    _assert_same_predictions(loaded, model, frame.iloc[::3])


def test_list_and_tuple_parameters_are_stored_as_lists(tmp_path):
    X, y = _categorical_data(200, 3)
    model = jitree.DecisionTreeClassifier(categorical_features=(0, 3, 4), ordinal_features=[1],
                                          max_subset_size=2, max_exhaustive_categories=4)
    loaded = _round_trip(model.fit(X, y), tmp_path)
    params = loaded.get_params()
    assert params["categorical_features"] == [0, 3, 4] and params["ordinal_features"] == [1]
    assert (params["max_subset_size"], params["max_exhaustive_categories"]) == (2, 4)
    model.set_params(categorical_features=[[0], [3]])
    with pytest.raises(TypeError, match="categorical_features"):
        save(model, tmp_path / "nested.jitree")


def _objects(values):
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


def _with_categories(categories):
    X, y = _categorical_data(200, 4)
    model = jitree.DecisionTreeClassifier(**{**CATEGORICAL_PARAMS, "max_depth": 3}).fit(X, y)
    model.categories_ = categories(model.categories_)
    return model


@pytest.mark.parametrize("categories, match", [
    (lambda c: c[:4], "one entry per feature"),
    (lambda c: "abc", "one entry per feature"),
    (lambda c: [None, *c[1:]], r"categories_\[0\] = None"),
    (lambda c: [*c[:2], np.array([1.0]), *c[3:]], "numeric feature 2"),
    (lambda c: [c[0][:-1], *c[1:]], "category codes"),
    (lambda c: [np.array(["2020-01-01"] * len(c[0]), dtype="datetime64[D]"), *c[1:]],
     "dtype datetime64"),
    (lambda c: [_objects([(1, 2), *c[0][1:]]), *c[1:]], "of type tuple"),
    (lambda c: [c[0], c[1], None, np.where(c[3] == c[3][0], np.nan, c[3]), c[4]],
     "not finite"),
    (lambda c: [np.array([c[0][0]] * len(c[0])), *c[1:]], "repeats a category"),
    (lambda c: [c[0].astype("S"), *c[1:]], r"dtype \|S"),
])
def test_save_refuses_categories_it_cannot_store(categories, match, tmp_path):
    model = _with_categories(categories)
    with pytest.raises(ValueError, match=match):
        save(model, tmp_path / "model.jitree")
    assert not list(tmp_path.iterdir())


def test_categories_given_as_lists_keep_their_types(tmp_path):
    model = _with_categories(lambda c: [c[0].tolist(), c[1], None, c[3], c[4]])
    loaded = _round_trip(model, tmp_path)
    assert loaded.categories_[0].dtype == object
    assert loaded.categories_[0].tolist() == model.categories_[0]


def test_missing_value_mask_round_trip(tmp_path):
    model = _with_categories(lambda c: c)
    model.missing_values_in_feature_mask_ = np.array([True, False, True, False, False])
    loaded = _round_trip(model, tmp_path)
    np.testing.assert_array_equal(loaded.missing_values_in_feature_mask_,
                                  model.missing_values_in_feature_mask_)
    assert jitree.export_text(loaded) == jitree.export_text(model)
    model.missing_values_in_feature_mask_ = np.array([1, 0, 1, 0, 0])
    with pytest.raises(ValueError, match="boolean array"):
        save(model, tmp_path / "other.jitree")


# -- version 1 files -----------------------------------------------------------------------------
def _as_version_1(arrays, metadata):
    for name in set(arrays) - set(V1_ARRAYS):
        del arrays[name]
    del metadata["categories_"], metadata["missing_values_in_feature_mask_"]
    del metadata["leaf_samples"], metadata["n_outputs"]
    metadata["format_version"] = 1


def test_version_3_files_are_read(saved_classifier, tmp_path):
    """Version 3 has no n_outputs: every tree has one output."""
    model, original = saved_classifier

    def as_version_3(arrays, metadata):
        del metadata["n_outputs"]
        metadata["format_version"] = 3

    path = tmp_path / "v3.jitree"
    _apply(as_version_3, original, path)
    loaded = load(path)
    assert loaded.n_outputs_ == 1
    _assert_same_predictions(loaded, model, X_TEST)


def test_version_1_files_are_read(saved_classifier, tmp_path):
    model, original = saved_classifier
    path = tmp_path / "v1.jitree"
    _apply(_as_version_1, original, path)
    loaded = load(path)
    _assert_same_predictions(loaded, model, X_TEST)
    for name in V1_ARRAYS:
        np.testing.assert_array_equal(getattr(loaded.tree_, name), getattr(model.tree_, name))
    assert not loaded.tree_.split_kind.any() and not loaded.tree_.feature_kind.any()
    assert not hasattr(loaded, "categories_") or loaded.categories_ is None \
        or all(entry is None for entry in loaded.categories_)
    # a version 1 file holds exactly the version 1 members and keys
    def with_v2_member(arrays, metadata):
        _as_version_1(arrays, metadata)
        arrays["split_kind"] = np.zeros(len(arrays["feature"]), dtype=np.int8)

    def with_v2_key(arrays, metadata):
        _as_version_1(arrays, metadata)
        metadata["categories_"] = None

    for edit, match in ((with_v2_member, "unexpected members 'split_kind.npy' in a version 1"),
                        (with_v2_key, "unknown keys 'categories_'")):
        _apply(edit, original, path)
        _assert_refused(path, match)


# -- files that are not jitree models ------------------------------------------------------------
def _assert_refused(path, match=None):
    with pytest.raises(ValueError) as error:
        load(path)
    message = str(error.value)
    assert str(path) in message and "\n" not in message, message
    if match is not None:
        assert match in message, message
    return message


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "nothing.jitree")


def test_foreign_files_are_refused(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    _assert_refused(text, "not a non-empty zip archive")

    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    _assert_refused(empty, "not a non-empty zip archive")

    npy = tmp_path / "array.npy"
    np.save(npy, np.arange(10))
    _assert_refused(npy, "not a non-empty zip archive")

    pickled = tmp_path / "model.pkl"
    pickled.write_bytes(pickle.dumps(jitree.DecisionTreeClassifier().fit(X, GROUP)))
    _assert_refused(pickled, "not a non-empty zip archive")

    npz = tmp_path / "random.npz"
    np.savez(npz, a=np.arange(3), b=np.ones((2, 2)))
    _assert_refused(npz, "unexpected members")

    int8_metadata = tmp_path / "int8.npz"
    np.savez(int8_metadata, metadata=np.frombuffer(b'{"format": "jitree"}', dtype=np.int8))
    _assert_refused(int8_metadata, "dtype int8, expected uint8")

    plain_zip = tmp_path / "plain.zip"
    with zipfile.ZipFile(plain_zip, "w") as archive:
        archive.writestr("readme.txt", "not a model")
    _assert_refused(plain_zip, "unexpected members")

    empty_zip = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty_zip, "w"):
        pass
    _assert_refused(empty_zip)

    only_metadata = tmp_path / "meta.npz"
    np.savez(only_metadata, metadata=np.frombuffer(b'{"format": "other"}', dtype=np.uint8))
    _assert_refused(only_metadata, "not a jitree model file")


# -- mutations -----------------------------------------------------------------------------------
def _members(path):
    with np.load(path, allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    metadata = json.loads(arrays.pop("metadata").tobytes().decode("utf-8"))
    return arrays, metadata


def _write(path, arrays, metadata=None, raw_metadata=None, writer=np.savez):
    if raw_metadata is None:
        raw_metadata = json.dumps(metadata).encode("utf-8")
    members = {"metadata": np.frombuffer(raw_metadata, dtype=np.uint8), **arrays}
    with open(path, "wb") as file:
        writer(file, **members)


@pytest.fixture(scope="module")
def saved_classifier(tmp_path_factory):
    model = jitree.DecisionTreeClassifier(max_depth=5, random_state=0).fit(
        X, LABELS["str"][GROUP])
    path = tmp_path_factory.mktemp("saved") / "classifier.jitree"
    save(model, path)
    assert model.tree_.max_depth >= 3
    return model, path


def _internal(arrays):
    return np.flatnonzero(arrays["children_left"] != TREE_LEAF)


def _leaf(arrays):
    return int(np.flatnonzero(arrays["children_left"] == TREE_LEAF)[0])


def _deep_internal(arrays):
    """(node, parent): an internal node two levels below the root, and its parent."""
    left = arrays["children_left"]
    for parent in _internal(arrays)[1:]:
        if left[left[parent]] != TREE_LEAF:
            return int(left[parent]), int(parent)
    raise AssertionError("tree too shallow")


def _set(name, index, value):
    def edit(arrays, metadata):
        array = arrays[name]
        position = index(arrays) if callable(index) else index
        array[position] = value(arrays) if callable(value) else value
    return edit


def _two_parents(arrays, metadata):
    internal = _internal(arrays)
    first, second = int(internal[0]), int(internal[-1])
    arrays["children_right"][first] = arrays["children_left"][second]


def _cycle_to_ancestor(arrays, metadata):
    node, parent = _deep_internal(arrays)
    arrays["children_left"][node] = parent


def _cycle_to_root(arrays, metadata):
    node, _ = _deep_internal(arrays)
    arrays["children_right"][node] = 0


def _leaf_with_one_child(arrays, metadata):
    arrays["children_right"][_leaf(arrays)] = len(arrays["feature"]) - 1


def _internal_with_one_child(arrays, metadata):
    arrays["children_right"][0] = TREE_LEAF


def _same_children(arrays, metadata):
    arrays["children_right"][0] = arrays["children_left"][0]


def _retype(name, dtype):
    def edit(arrays, metadata):
        arrays[name] = arrays[name].astype(dtype)
    return edit


def _reshape(name, shape_of):
    def edit(arrays, metadata):
        arrays[name] = np.resize(arrays[name], shape_of(arrays[name]))
    return edit


def _drop(name):
    def edit(arrays, metadata):
        del arrays[name]
    return edit


def _meta(key, value):
    def edit(arrays, metadata):
        if value is KeyError:
            del metadata[key]
        else:
            metadata[key] = value
    return edit


def _meta_both(*edits):
    def edit(arrays, metadata):
        metadata.update(edits)
    return edit


def _meta_nested(outer, key, value):
    def edit(arrays, metadata):
        metadata[outer][key] = value
    return edit


def _empty_tree(arrays, metadata):
    for name in arrays:
        arrays[name] = arrays[name][:0]
    metadata["n_nodes"] = 0


def _extra_member(arrays, metadata):
    arrays["payload"] = np.arange(4)


def _object_member(arrays, metadata):
    arrays["feature"] = np.array([{"x": 1}] * len(arrays["feature"]), dtype=object)


def _byte_swapped(arrays, metadata):
    for name in arrays:
        arrays[name] = arrays[name].astype(arrays[name].dtype.newbyteorder(">"))


def _fortran_value(arrays, metadata):
    arrays["value"] = np.asfortranarray(arrays["value"])


# (name, edit, expected fragment of the message; None: the file is sound and must load)
CRAFTED = [
    ("left child past the end", _set("children_left", 0, lambda a: len(a["feature"])),
     "out of range"),
    ("right child far past the end", _set("children_right", 0, 2**31 - 1), "out of range"),
    ("negative child", _set("children_left", 0, -5), "out of range"),
    ("child pointing to the root", _cycle_to_root, "out of range"),
    ("child pointing to its parent", _cycle_to_ancestor, "does not come after"),
    ("self loop", _set("children_left", lambda a: _deep_internal(a)[0],
                       lambda a: _deep_internal(a)[0]), "does not come after"),
    ("node with two parents", _two_parents, "parent"),
    ("same left and right child", _same_children, "same left and right"),
    ("leaf with a right child", _leaf_with_one_child, "is a leaf"),
    ("internal node without right child", _internal_with_one_child, "out of range"),
    ("feature index = n_features", _set("feature", 0, 5), "feature[0] = 5 is out of range"),
    ("huge feature index", _set("feature", 0, 2**31 - 1), "out of range"),
    ("negative feature at an internal node", _set("feature", 0, -1), "out of range"),
    ("undefined feature at an internal node", _set("feature", 0, TREE_UNDEFINED),
     "out of range"),
    ("feature at a leaf", _set("feature", _leaf, 0), "at a leaf"),
    ("NaN threshold", _set("threshold", 0, np.nan), "not finite"),
    ("infinite threshold", _set("threshold", 0, np.inf), "not finite"),
    ("NaN value", _set("value", (1, 0), np.nan), "value[1, 0]"),
    ("infinite impurity", _set("impurity", 2, -np.inf), "not finite"),
    ("NaN weight", _set("weighted_n_node_samples", 0, np.nan), "not finite"),
    ("negative sample count", _set("n_node_samples", 3, -1), "negative"),
    ("feature int64", _retype("feature", np.int64), "dtype"),
    ("threshold float32", _retype("threshold", np.float32), "dtype"),
    ("children int64", _retype("children_left", np.int64), "dtype"),
    ("value int", _retype("value", np.int64), "dtype"),
    ("n_node_samples float", _retype("n_node_samples", np.float64), "dtype"),
    ("object array", _object_member, "dtype"),
    ("value 1-D", _reshape("value", lambda v: v.shape[0]), "shape"),
    ("value with an extra column", _reshape("value", lambda v: (v.shape[0], v.shape[1] + 1)),
     "shape"),
    ("feature one node short", _reshape("feature", lambda v: v.shape[0] - 1), "shape"),
    ("impurity one node long", _reshape("impurity", lambda v: v.shape[0] + 1), "shape"),
    ("children 2-D", _reshape("children_right", lambda v: (v.shape[0], 1)), "shape"),
    ("no node", _empty_tree, "n_nodes"),
    ("missing array", _drop("impurity"), "missing"),
    ("extra member", _extra_member, "unexpected members"),
    ("other format", _meta("format", "sklearn"), "not a jitree model file"),
    ("future version", _meta("format_version", 5), "unsupported format version 5"),
    ("version as text", _meta("format_version", "1"), "unsupported format version"),
    ("version as boolean", _meta("format_version", True), "unsupported format version"),
    ("unknown estimator", _meta("estimator", "RandomForestClassifier"), "unknown estimator"),
    ("estimator not a string", _meta("estimator", ["DecisionTreeClassifier"]),
     "unknown estimator"),
    ("classifier read as regressor", _meta("estimator", "DecisionTreeRegressor"),
     "n_classes"),
    ("missing key", _meta("n_features_in_", KeyError), "lacks n_features_in_"),
    ("unknown key", _meta("pickle", "yes"), "unknown keys"),
    ("n_features too small", _meta_both(("n_features_in_", 1), ("max_features_", 1)),
     # refused by the first per-feature entry checked against n_features_in_
     "missing_values_in_feature_mask_' must be null or a list of 1 booleans"),
    ("n_features as text", _meta("n_features_in_", "5"), "n_features_in_"),
    ("n_features zero", _meta("n_features_in_", 0), "n_features_in_"),
    ("n_nodes wrong", _meta("n_nodes", 3), "shape"),
    ("n_nodes huge", _meta("n_nodes", 10**12), "shape"),
    ("n_classes wrong", _meta("n_classes", 2), "classes_"),
    ("max_features past n_features", _meta("max_features_", 6), "max_features_"),
    ("feature names too few", _meta("feature_names_in_", ["a"]), "feature_names_in_"),
    ("feature names not strings", _meta("feature_names_in_", [1, 2, 3, 4, 5]),
     "feature_names_in_"),
    ("classes not an object", _meta("classes_", ["a", "bb", "ccé"]), "classes_"),
    ("classes repeated", _meta_nested("classes_", "values", ["a", "a", "b"]), "repeats"),
    ("classes too long for dtype", _meta_nested("classes_", "dtype", "<U1"),
     "do not fit dtype"),
    ("classes dtype not numpy", _meta_nested("classes_", "dtype", "tree"),
     "not a NumPy dtype"),
    ("classes dtype structured", _meta_nested("classes_", "dtype", "i4,i4"),
     "not a supported label dtype"),
    ("classes dtype huge strings", _meta_nested("classes_", "dtype", "<U1000000"),
     "not a supported label dtype"),
    ("classes dtype int with strings", _meta_nested("classes_", "dtype", "<i8"),
     "do not fit dtype"),
    ("classes dtype datetime", _meta_nested("classes_", "dtype", "<M8[s]"),
     "not a supported label dtype"),
    ("params not an object", _meta("params", [1, 2]), "params"),
    ("unknown parameter", _meta_nested("params", "loss", "hinge"), "unknown parameter"),
    ("parameter of another type", _meta_nested("params", "max_depth", {"a": 1}),
     "unsupported value"),
    ("n_jobs zero", _meta_nested("params", "n_jobs", 0), "n_jobs"),
    ("n_jobs as text", _meta_nested("params", "n_jobs", "all"), "n_jobs"),
    ("class_weight malformed", _meta_nested("params", "class_weight", [["a"]]),
     "class_weight"),
    ("class_weight repeated label", _meta_nested("params", "class_weight", [["a", 1],
                                                                            ["a", 2]]),
     "repeats"),
    # the key of format version 4
    ("n_outputs missing", _meta("n_outputs", KeyError), "lacks n_outputs"),
    ("n_outputs zero", _meta("n_outputs", 0), "n_outputs"),
    ("n_outputs as text", _meta("n_outputs", "2"), "n_outputs"),
    ("n_outputs 2 on a one-output file", _meta("n_outputs", 2), "n_classes"),
    # the members and keys of format version 2
    ("split_kind missing", _drop("split_kind"), "'split_kind' is missing"),
    ("feature_kind missing", _drop("feature_kind"), "'feature_kind' is missing"),
    ("split_kind int64", _retype("split_kind", np.int64), "dtype"),
    ("missing_left bool", _retype("missing_left", np.bool_), "dtype"),
    ("category_offset int32", _retype("category_offset", np.int32), "dtype"),
    ("category_bits int64", _retype("category_bits", np.int64), "dtype"),
    ("multiway_slot 2-D", _reshape("multiway_slot", lambda v: (v.shape[0], 1)), "shape"),
    ("n_categories one short", _reshape("n_categories", lambda v: v.shape[0] - 1), "shape"),
    ("feature_kind one long", _reshape("feature_kind", lambda v: v.shape[0] + 1), "shape"),
    ("split kind out of range", _set("split_kind", 0, 3), "not a split kind"),
    ("subset test on a numeric feature", _set("split_kind", 0, 1), "not categorical"),
    ("multiway test on a numeric feature", _set("split_kind", 0, 2), "not categorical"),
    ("missing_left 2", _set("missing_left", 0, 2), "must be 0 or 1"),
    ("leaf sending missing values left", _set("missing_left", _leaf, 1), "leaf"),
    ("category offset at a threshold node", _set("category_offset", 0, 0), "must be -1"),
    ("feature kind out of range", _set("feature_kind", 0, 7), "not a feature kind"),
    ("categories of a numeric feature", _set("n_categories", 0, 3), "invalid for a feature"),
    ("no categories_ key", _meta("categories_", KeyError), "lacks categories_"),
    ("categories_ not a list", _meta("categories_", "abc"), "'categories_' must be null or"),
    ("categories_ of a numeric feature", _meta("categories_", [
        {"dtype": "<U1", "values": []}, None, None, None, None]), "numeric feature 0"),
    ("missing mask too short", _meta("missing_values_in_feature_mask_", [True]),
     "missing_values_in_feature_mask_"),
    ("missing mask of ints", _meta("missing_values_in_feature_mask_", [1, 0, 0, 0, 0]),
     "missing_values_in_feature_mask_"),
    ("list parameter holding an object", _meta_nested("params", "categorical_features",
                                                      [{"a": 1}]), "unsupported value"),
    ("list parameter holding null", _meta_nested("params", "ordinal_features", [None]),
     "unsupported value"),
    # sound variants that must load and predict as the original
    ("list parameters", _meta_both(("params", {"categorical_features": [0, "b", True],
                                               "ordinal_features": []})), None),
    ("missing mask", _meta("missing_values_in_feature_mask_", [True] * 5), None),
    ("big-endian arrays", _byte_swapped, None),
    ("Fortran-ordered value", _fortran_value, None),
    ("jitree version of the future", _meta("jitree_version", "9.0"), None),
]


CATEGORY_VALUES = [None, np.array(["a", "b", "c", "d", "e"]),
                   np.array(["low", "mid", "high", "top"], dtype=object),
                   np.arange(70, dtype=np.int64) * 10, np.array([False, True])]


def _categorical_tree(rng):
    """Every node kind on five features (numeric; categorical with 5 values; ordinal with 4
    levels; categorical with 70 values, two bitset words; boolean): a subset root, a multiway
    node of 3 children, an ordinal and a numeric threshold, a one-word subset and a multiway
    node of 2 children over 70 categories."""
    n_nodes = 14
    counts = np.zeros((n_nodes, 3))
    left = np.array([1, 3, 6, 8, 10, L, 12] + [L] * 7)
    right = np.array([2, 5, 7, 9, 11, L, 13] + [L] * 7)
    kind = np.array([1, 2, 0, 0, 1, 0, 2] + [0] * 7)
    for node in range(n_nodes - 1, -1, -1):
        below = range(left[node], right[node] + 1) if kind[node] == 2 else \
            (left[node], right[node])
        counts[node] = rng.uniform(1.0, 9.0, 3) if left[node] == L else \
            sum(counts[child] for child in below)
    words = rng.integers(0, 2**63, size=2, dtype=np.uint64)
    words[1] &= np.uint64(0b111111)  # codes 64 .. 69
    weight = counts.sum(axis=1)
    return Tree(
        n_features=5, n_classes=3,
        feature=[3, 1, 0, 2, 4, -2, 3] + [-2] * 7,
        threshold=[-2.0, -2.0, 0.25, 1.5, -2.0, -2.0, -2.0] + [-2.0] * 7,
        children_left=left, children_right=right, value=counts,
        impurity=1.0 - ((counts / weight[:, None]) ** 2).sum(axis=1),
        n_node_samples=np.ceil(weight).astype(np.int64), weighted_n_node_samples=weight,
        split_kind=kind, missing_left=[1, 0, 0, 1, 0, 0, 0] + [0] * 7,
        category_offset=[0, 0, -1, -1, 2, -1, 6] + [-1] * 7,
        category_bits=np.array([words[0], words[1], 0b10], dtype=np.uint64),
        multiway_slot=[0, 1, 2, 0, 1, 2] + rng.integers(2, size=71).tolist(),
        n_categories=[0, 5, 4, 70, 2],
        feature_kind=[FEATURE_NUMERIC, FEATURE_CATEGORICAL, FEATURE_ORDINAL,
                      FEATURE_CATEGORICAL, FEATURE_CATEGORICAL])


def _categorical_rows(rng, n):
    """Values for the model of _categorical_tree: categories, unseen ones and None."""
    X = np.empty((n, 5), dtype=object)
    number = rng.normal(size=n)
    number[rng.random(n) < 0.1] = np.nan
    X[:, 0] = number
    X[:, 1] = rng.choice(np.array(["a", "b", "c", "d", "e", None, "zz"], dtype=object), n)
    X[:, 2] = rng.choice(np.array(["low", "mid", "high", "top", None], dtype=object), n)
    X[:, 3] = rng.choice(np.array([*range(0, 700, 10), 7, None], dtype=object), n)
    X[:, 4] = rng.choice(np.array([True, False, None], dtype=object), n)
    return X


CATEGORICAL_X = _categorical_rows(np.random.default_rng(5), 300)


@pytest.fixture(scope="module")
def saved_categorical(tmp_path_factory):
    tree = _categorical_tree(np.random.default_rng(4))
    model = jitree.DecisionTreeClassifier._from_tree(
        tree, classes=np.array(["x", "y", "z"]),
        params=dict(categorical_features=[1, 3, 4], ordinal_features=[2]))
    model.categories_ = list(CATEGORY_VALUES)
    model.missing_values_in_feature_mask_ = np.array([True, False, True, False, False])
    path = tmp_path_factory.mktemp("saved") / "categorical.jitree"
    save(model, path)
    leaves = model.apply(CATEGORICAL_X)
    assert len(set(leaves.tolist())) == tree.n_leaves  # the rows reach every leaf
    return model, path


def _categories_edit(feature, change):
    def edit(arrays, metadata):
        entry = metadata["categories_"][feature]
        metadata["categories_"][feature] = change(entry)
    return edit


def _replace(key, value):
    return lambda entry: {**entry, key: value}


CRAFTED_CATEGORICAL = [
    ("subset set past the pool", _set("category_offset", 0, 2), "reads outside its pool"),
    ("subset offset near the int64 limit", _set("category_offset", 0, 2**63 - 1),
     "reads outside its pool"),
    ("multiway offset near the int64 limit", _set("category_offset", 6, 2**63 - 2),
     "reads outside its pool"),
    ("offset far below -1", _set("category_offset", 4, -7), "reads outside its pool"),
    ("no offset at a subset node", _set("category_offset", 4, -1), "reads outside its pool"),
    ("slot table past the pool", _set("category_offset", 6, 7), "reads outside its pool"),
    ("slot past the children", _set("multiway_slot", 2, 3), "outside its 3 children"),
    ("negative slot", _set("multiway_slot", 70, -1), "outside its 2 children"),
    ("huge slot", _set("multiway_slot", 76, 2**31 - 1), "outside its 2 children"),
    ("split kind out of range", _set("split_kind", 1, 4), "not a split kind"),
    ("subset test on the numeric feature", _set("feature", 4, 0), "not categorical"),
    ("multiway test on the ordinal feature", _set("feature", 1, 2), "not categorical"),
    ("threshold test on a categorical feature", _set("split_kind", 0, 0),
     "threshold test on the categorical"),
    ("categorical feature made numeric", _set("feature_kind", 3, FEATURE_NUMERIC),
     "invalid for a feature of kind 0"),
    ("more categories than the set holds", _set("n_categories", 3, 200),
     "reads outside its pool"),
    ("negative number of categories", _set("n_categories", 1, -1), "invalid for a feature"),
    ("multiway children overlapping", _set("children_right", 1, 6), "child of 2 nodes"),
    ("multiway range reversed", _set("children_right", 6, 11), "before children_left"),
    ("missing_left 3", _set("missing_left", 0, 3), "must be 0 or 1"),
    ("fewer codes than categories_", _set("n_categories", 1, 4), "5 values, 4 are expected"),
    ("categories_ one short", _categories_edit(3, lambda e: _replace("values",
                                                                     e["values"][:-1])(e)),
     "69 values, 70 are expected"),
    ("categories_ null for a categorical feature", _categories_edit(3, lambda e: None),
     "categories_[3] is null"),
    ("categories_ for the numeric feature", _categories_edit(0, lambda e: {
        "dtype": "<i8", "values": []}), "numeric feature 0"),
    ("categories_ repeated", _categories_edit(1, _replace("values", list("aacde"))),
     "repeats a category"),
    ("categories_ too long for their dtype", _categories_edit(
        1, _replace("values", ["a", "b", "c", "d", "ee"])), "do not fit dtype"),
    ("categories_ numbers as strings", _categories_edit(3, _replace("dtype", "<U3")),
     "do not fit dtype"),
    ("categories_ as bytes", _categories_edit(1, _replace("dtype", "|S1")),
     "not a supported category dtype"),
    ("categories_ as dates", _categories_edit(1, _replace("dtype", "<M8[s]")),
     "not a supported category dtype"),
    ("categories_ not finite", _categories_edit(3, lambda e: {
        "dtype": "<f8", "values": [float("nan")] + [float(v) for v in e["values"][1:]]}),
     "do not fit dtype"),
    ("categories_ holding a list", _categories_edit(2, _replace(
        "values", [["low"], "mid", "high", "top"])), "do not fit dtype"),
    ("categories_ entry malformed", _categories_edit(2, lambda e: e["values"]),
     "must be an object"),
    # sound variants
    ("big-endian arrays", _byte_swapped, None),
    ("categories_ as an object array", _categories_edit(1, _replace("dtype", "|O")), None),
]


@pytest.mark.parametrize("name, edit, match", CRAFTED_CATEGORICAL,
                         ids=[case[0] for case in CRAFTED_CATEGORICAL])
def test_crafted_categorical_file(name, edit, match, saved_categorical, tmp_path):
    model, original = saved_categorical
    path = tmp_path / "crafted.jitree"
    _apply(edit, original, path)
    if match is None:
        _assert_same_predictions(load(path), model, CATEGORICAL_X)
    else:
        _assert_refused(path, match)


def _apply(edit, original, path):
    arrays, metadata = _members(original)
    arrays = {name: array.copy() for name, array in arrays.items()}
    edit(arrays, metadata)
    _write(path, arrays, metadata)


@pytest.mark.parametrize("name, edit, match", CRAFTED, ids=[case[0] for case in CRAFTED])
def test_crafted_file(name, edit, match, saved_classifier, tmp_path):
    model, original = saved_classifier
    path = tmp_path / "crafted.jitree"
    _apply(edit, original, path)
    if match is None:
        _assert_same_predictions(load(path), model, X_TEST)
    else:
        _assert_refused(path, match)


@pytest.mark.parametrize("raw, match", [
    (b"\xff\xfe not utf-8", "UTF-8 JSON"),
    (b"{not json", "UTF-8 JSON"),
    (b"[1, 2, 3]", "JSON object"),
    (b"[" * 100_000 + b"]" * 100_000, "UTF-8 JSON"),
    (b'{"format": "jitree", "format_version": 1}', "lacks"),
])
def test_bad_metadata_bytes(raw, match, saved_classifier, tmp_path):
    _, original = saved_classifier
    arrays, _ = _members(original)
    path = tmp_path / "bad_metadata.jitree"
    _write(path, arrays, raw_metadata=raw)
    _assert_refused(path, match)


def test_compressed_members_are_refused(saved_classifier, tmp_path):
    _, original = saved_classifier
    arrays, metadata = _members(original)
    path = tmp_path / "compressed.jitree"
    _write(path, arrays, metadata, writer=np.savez_compressed)
    _assert_refused(path, "compressed")


def _check_usable(loaded, n_nodes, X_eval):
    """A model that loaded from a mutated file must still predict well-formed output."""
    assert loaded.tree_.node_count == n_nodes
    labels = loaded.predict(X_eval)
    assert labels.shape == (X_eval.shape[0],)
    assert np.isin(labels, loaded.classes_).all()
    X_proba = X_eval.astype(np.float32) if X_eval.dtype.kind == "f" else X_eval
    proba = loaded.predict_proba(X_proba)
    assert proba.shape == (X_eval.shape[0], loaded.classes_.shape[0])
    assert np.isfinite(proba).all()
    leaves = loaded.apply(X_eval)
    assert ((leaves >= 0) & (leaves < n_nodes)).all()
    assert (loaded.tree_.children_left[leaves] == TREE_LEAF).all()


_INTERESTING = (-(2**31), -3, -2, -1, 0, 1, 2, 5, 2**31 - 1, 2**62, 2**63 - 1, np.nan, np.inf,
                -np.inf, 0.5, -1e300)


def _random_array_edit(rng, n_nodes):
    name = ALL_ARRAYS[rng.integers(len(ALL_ARRAYS))]
    where = rng.random()  # the position, as a fraction of the array's length
    choice = rng.integers(3)
    if choice == 0:
        value = _INTERESTING[rng.integers(len(_INTERESTING))]
    elif choice == 1:
        value = int(rng.integers(-2, n_nodes + 2))
    else:
        value = float(rng.normal() * 10)

    def edit(arrays, metadata):
        array = arrays[name]
        if array.shape[0] == 0:
            return
        index = int(where * array.shape[0])
        position = (index, 0) if array.ndim == 2 else index
        if array.dtype.kind == "f":
            array[position] = value
        elif np.isfinite(value):
            limits = np.iinfo(array.dtype)
            array[position] = int(min(max(value, limits.min), limits.max))
    return edit


@pytest.mark.parametrize("saved", ["saved_classifier", "saved_categorical"])
def test_fuzzed_files_load_soundly_or_are_refused(saved, request, tmp_path, record_property):
    """Every mutation of a saved file either loads into a model whose predictions are well
    formed, or raises ValueError/TypeError; never another exception, a crash or a hang."""
    model, original = request.getfixturevalue(saved)
    X_eval, crafted = (X_TEST, CRAFTED) if saved == "saved_classifier" else \
        (CATEGORICAL_X, CRAFTED_CATEGORICAL)
    data = original.read_bytes()
    n_nodes = model.tree_.node_count
    rng = np.random.default_rng(2024)
    path = tmp_path / "mutated.jitree"
    outcomes = {"refused": 0, "loaded": 0}

    def attempt():
        """Load the file now at ``path``."""
        try:
            loaded = load(path)
        except (ValueError, TypeError) as error:
            assert str(path) in str(error)
            outcomes["refused"] += 1
        else:
            _check_usable(loaded, n_nodes, X_eval)
            outcomes["loaded"] += 1

    # a hang (e.g. a cycle reaching a kernel) kills the run with a traceback instead
    faulthandler.dump_traceback_later(120, exit=True)
    try:
        tried = {}
        offsets = sorted(set(np.linspace(0, len(data) - 1, 200).astype(int).tolist()))
        for offset in offsets:
            path.write_bytes(data[:offset])
            attempt()
        tried["truncations"] = len(offsets)

        n_flips = 200
        for _ in range(n_flips):
            mutated = bytearray(data)
            for _ in range(int(rng.integers(1, 4))):
                mutated[rng.integers(len(data))] ^= int(rng.integers(1, 256))
            path.write_bytes(bytes(mutated))
            attempt()
        tried["byte flips"] = n_flips

        n_edits = 200
        for _ in range(n_edits):
            _apply(_random_array_edit(rng, n_nodes), original, path)
            attempt()
        tried["array edits"] = n_edits

        for _, edit, _ in crafted:
            _apply(edit, original, path)
            attempt()
        tried["crafted edits"] = len(crafted)
    finally:
        faulthandler.cancel_dump_traceback_later()

    total = sum(tried.values())
    summary = ", ".join(f"{count} {kind}" for kind, count in tried.items())
    print(f"\nfuzzed {total} mutated files ({summary}): {outcomes['refused']} refused, "
          f"{outcomes['loaded']} loaded")
    record_property("mutations", total)
    assert total >= 300
    assert outcomes["refused"] + outcomes["loaded"] == total
    assert outcomes["refused"] > outcomes["loaded"]  # most damage must be detected


# -- check_tree against a naive twin -----------------------------------------------------------
def _naive_is_sound(left, right, feature, threshold, n_features):
    """Walk from the root, visiting each node at most once: sound when every node is met
    exactly once, children come after their parent, and tests are well formed."""
    n_nodes = len(left)
    if n_nodes == 0:
        return False
    seen = [False] * n_nodes
    stack = [0]
    while stack:
        node = stack.pop()
        if seen[node]:
            return False
        seen[node] = True
        if left[node] == TREE_LEAF:
            if right[node] != TREE_LEAF or feature[node] != TREE_UNDEFINED:
                return False
            continue
        if not 0 <= feature[node] < n_features or not np.isfinite(threshold[node]):
            return False
        for child in (left[node], right[node]):
            if not node < child < n_nodes:
                return False
            stack.append(int(child))
    return all(seen)


def _random_tree(rng, n_internal):
    """A random sound tree: nodes split in creation order, children appended at the end."""
    n_nodes = 2 * n_internal + 1
    left = np.full(n_nodes, TREE_LEAF, dtype=np.int32)
    right = np.full(n_nodes, TREE_LEAF, dtype=np.int32)
    feature = np.full(n_nodes, TREE_UNDEFINED, dtype=np.int32)
    threshold = np.full(n_nodes, float(TREE_UNDEFINED))
    leaves = [0]
    count = 1
    for _ in range(n_internal):
        node = leaves.pop(int(rng.integers(len(leaves))))
        left[node], right[node] = count, count + 1
        feature[node] = rng.integers(3)
        threshold[node] = rng.normal()
        leaves += [count, count + 1]
        count += 2
    return left, right, feature, threshold


@given(seed=st.integers(0, 2**32 - 1), n_internal=st.integers(0, 6),
       n_edits=st.integers(0, 3))
def test_check_tree_matches_naive_twin(seed, n_internal, n_edits):
    rng = np.random.default_rng(seed)
    left, right, feature, threshold = _random_tree(rng, n_internal)
    n_nodes = left.shape[0]
    for _ in range(n_edits):
        array = (left, right, feature, threshold)[rng.integers(4)]
        array[rng.integers(n_nodes)] = rng.choice([-2, -1, 0, 1, 2, n_nodes - 1, n_nodes])
    sound = _naive_is_sound(left, right, feature, threshold, 3)
    try:  # the Tree constructor runs check_tree
        Tree(3, 0, feature, threshold, left, right, np.zeros((n_nodes, 1)),
             np.zeros(n_nodes), np.ones(n_nodes, dtype=np.int64), np.ones(n_nodes))
    except ValueError:
        assert not sound
    else:
        assert sound


def test_check_tree_refuses_non_arrays_and_bad_counts():
    model = jitree.DecisionTreeRegressor(max_depth=2).fit(X, X[:, 0])
    tree = copy.deepcopy(model.tree_)
    assert check_tree(tree, n_features=5, n_classes=0) is tree
    with pytest.raises(ValueError, match="expected 4"):
        check_tree(tree, n_features=4)
    with pytest.raises(ValueError, match="expected 3"):
        check_tree(tree, n_classes=3)
    tree.impurity = list(tree.impurity)
    with pytest.raises(TypeError, match="impurity must be a numpy array"):
        check_tree(tree)
    tree = copy.deepcopy(model.tree_)
    tree.n_features = 2.5
    with pytest.raises(TypeError, match="n_features must be an int"):
        check_tree(tree)


def test_load_reads_from_any_path_type(saved_classifier):
    model, original = saved_classifier
    for path in (original, str(original)):
        _assert_same_predictions(load(path), model, X_TEST)
    with pytest.raises(TypeError):
        load(io.BytesIO(original.read_bytes()))
