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
from jitree.model.tree import _ARRAYS, TREE_LEAF, TREE_UNDEFINED, Tree
from jitree.model.tree_check import check_tree

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
    for name, _ in _ARRAYS:
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
    with pytest.raises(TypeError, match="DecisionTreeClassifier or DecisionTreeRegressor"):
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
    ("future version", _meta("format_version", 2), "unsupported format version 2"),
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
     "out of range"),
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
    # sound variants that must load and predict as the original
    ("big-endian arrays", _byte_swapped, None),
    ("Fortran-ordered value", _fortran_value, None),
    ("jitree version of the future", _meta("jitree_version", "9.0"), None),
]


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


def _check_usable(loaded, n_nodes):
    """A model that loaded from a mutated file must still predict well-formed output."""
    assert loaded.tree_.node_count == n_nodes
    labels = loaded.predict(X_TEST)
    assert labels.shape == (X_TEST.shape[0],)
    assert np.isin(labels, loaded.classes_).all()
    proba = loaded.predict_proba(X_TEST.astype(np.float32))
    assert proba.shape == (X_TEST.shape[0], loaded.classes_.shape[0])
    assert np.isfinite(proba).all()
    leaves = loaded.apply(X_TEST)
    assert ((leaves >= 0) & (leaves < n_nodes)).all()
    assert (loaded.tree_.children_left[leaves] == TREE_LEAF).all()


_INTERESTING = (-(2**31), -3, -2, -1, 0, 1, 2, 5, 2**31 - 1, np.nan, np.inf, -np.inf, 0.5,
                -1e300)


def _random_array_edit(rng, n_nodes):
    names = [name for name, _ in _ARRAYS]
    name = names[rng.integers(len(names))]
    index = int(rng.integers(n_nodes))
    choice = rng.integers(3)
    if choice == 0:
        value = _INTERESTING[rng.integers(len(_INTERESTING))]
    elif choice == 1:
        value = int(rng.integers(-2, n_nodes + 2))
    else:
        value = float(rng.normal() * 10)

    def edit(arrays, metadata):
        array = arrays[name]
        position = (index, 0) if array.ndim == 2 else index
        if array.dtype.kind == "f":
            array[position] = value
        elif np.isfinite(value):
            limits = np.iinfo(array.dtype)
            array[position] = int(min(max(value, limits.min), limits.max))
    return edit


def test_fuzzed_files_load_soundly_or_are_refused(saved_classifier, tmp_path, record_property):
    """Every mutation of a saved file either loads into a model whose predictions are well
    formed, or raises ValueError/TypeError; never another exception, a crash or a hang."""
    model, original = saved_classifier
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
            _check_usable(loaded, n_nodes)
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

        n_edits = 150
        for _ in range(n_edits):
            _apply(_random_array_edit(rng, n_nodes), original, path)
            attempt()
        tried["array edits"] = n_edits

        for _, edit, _ in CRAFTED:
            _apply(edit, original, path)
            attempt()
        tried["crafted edits"] = len(CRAFTED)
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
