"""Saving and loading fitted trees in a versioned, pickle-free file format.

:func:`save` writes a fitted :class:`jitree.DecisionTreeClassifier` or
:class:`jitree.DecisionTreeRegressor` to one file; :func:`load` reads it back, refusing with a
``ValueError`` any file that is not a well-formed jitree model (truncated, corrupted or
crafted), so that a loaded model can never make the prediction kernels read out of bounds or
loop. No Python object is ever unpickled.

Format ``"jitree"``, version 4
------------------------------
A zip archive as written by ``numpy.savez``: every member is a ``.npy`` array stored
uncompressed (a compressed member is refused).

===================================  ========  ==================================================
member                               dtype     shape
===================================  ========  ==================================================
``metadata.npy``                     uint8     (n_bytes,): a UTF-8 JSON object (below)
``feature.npy``                      int32     (n_nodes,)
``threshold.npy``                    float64   (n_nodes,)
``children_left.npy``                int32     (n_nodes,)
``children_right.npy``               int32     (n_nodes,)
``value.npy``                        float64   (n_nodes, n_outputs * max(n_classes)); regression:
                                               (n_nodes, n_outputs)
``impurity.npy``                     float64   (n_nodes,)
``n_node_samples.npy``               int64     (n_nodes,)
``weighted_n_node_samples.npy``      float64   (n_nodes,)
``split_kind.npy``                   int8      (n_nodes,)
``missing_left.npy``                 uint8     (n_nodes,)
``category_offset.npy``              int64     (n_nodes,)
``category_bits.npy``                uint64    (n_words,): the category-set pool
``multiway_slot.npy``                int32     (n_slots,): the multiway slot pool
``n_categories.npy``                 int32     (n_features_in_,)
``feature_kind.npy``                 int8      (n_features_in_,)
===================================  ========  ==================================================

A regressor fitted with ``store_leaf_samples=True`` adds its ``leaf_samples_`` (see
:mod:`jitree.model.leaf_samples`), as five more members:

===================================  ========  ==================================================
``leaf_start.npy``                   int64     (n_nodes,): first entry of each node's block
``leaf_stop.npy``                    int64     (n_nodes,): end of each node's block
``leaf_sample.npy``                  int32     (n_entries,): training row of each entry
``leaf_weight.npy``                  float64   (n_entries,): its weight (> 0) in the tree
``train_target.npy``                 float64   (n_train,): the training targets
===================================  ========  ==================================================

Blocks must lie inside the entries, rows inside the targets, weights be positive and finite.

The arrays are those of :class:`jitree.Tree` (see its docstring for their meaning) and must
satisfy :func:`jitree.model.tree_check.check_tree` (among others: split kinds and feature kinds
agree, every category set and slot table lies inside its pool, every slot names a child). They
are written in the machine's byte order; either byte order is read.

The metadata object has exactly these keys:

``format`` : ``"jitree"``
``format_version`` : ``4``
``jitree_version`` : str, the version that wrote the file (informative)
``estimator`` : ``"DecisionTreeClassifier"``, ``"DecisionTreeRegressor"``,
    ``"ExtraTreeClassifier"`` or ``"ExtraTreeRegressor"``
``params`` : object, the constructor parameters (``get_params()``); each value is null, a
    boolean, a number, a string or a list of booleans, numbers and strings (a tuple or a 1-D
    array parameter, e.g. ``categorical_features``, is stored and read back as a list), except
    ``class_weight`` given as a dict, stored as a list of ``[label, weight]`` pairs (labels
    need not be strings). A ``random_state`` that is not an int is stored as null. Non-finite
    floats are written as JSON ``Infinity``/``NaN``.
``n_nodes`` : int >= 1
``n_features_in_`` : int >= 1
``n_classes`` : int, the number of classes (>= 1), 0 for a regressor; for a classifier of
    several outputs, a list of each output's number of classes
``max_features_`` : int in [1, n_features_in_]
``classes_`` : null for a regressor; else ``{"dtype": str, "values": list}``: the labels in
    the order of the value columns, with the NumPy dtype string of ``classes_`` (``"<i8"``,
    ``"<f8"``, ``"|b1"``, ``"<U5"``, ``"|S3"``, ``"|O"``, ...). Bytes labels are stored as
    latin-1 decoded strings; an object array holds strings, numbers or booleans only. A
    classifier of several outputs: a list of one such object per output.
``n_outputs`` : int >= 1, the columns of y (the tree's ``n_outputs``)
``feature_names_in_`` : list of n_features_in_ strings, or null
``categories_`` : null (the model has no ``categories_``), or a list with one entry per
    feature: null for a numeric feature (``n_categories`` 0), else ``{"dtype": str, "values":
    list}`` as for ``classes_``: the ``n_categories`` distinct categories (ordinal levels) in
    code order, with their NumPy dtype (booleans, integers, finite floats, strings, or an
    object array of those), so that they are read back with their types.
``missing_values_in_feature_mask_`` : null, or a list of n_features_in_ booleans: the features
    the model saw missing values of in training (shown by the exports).

``leaf_samples`` : null, or ``{"n_entries": int >= 0, "n_train": int >= 1}`` when the leaf
    sample members are present (a regressor only).

Version 3 files (without ``n_outputs``: one output), version 2 files (without
``leaf_samples`` either) and version 1 files are still read. Version 1
files lack the members from ``split_kind.npy`` on and the metadata keys ``categories_`` and
``missing_values_in_feature_mask_``; their trees are all threshold tests on numeric features
(the :class:`jitree.Tree` defaults, missing values going to the heavier child).
"""

import json
import numbers
import os
import struct
import uuid
import zipfile
import zlib

import numpy as np

from .._threading import resolve_n_jobs
from . import leaf_samples
from .classifier import DecisionTreeClassifier, ExtraTreeClassifier
from .criterion import Criterion
from .export import MISSING_SEEN_ATTRIBUTE
from .regressor import DecisionTreeRegressor, ExtraTreeRegressor
from .tree import _ARRAYS, _FEATURE_ARRAYS, _POOLS, FEATURE_NUMERIC, Tree
from .tree_check import check_tree
from .validation import check_is_fitted

FORMAT_NAME = "jitree"
FORMAT_VERSION = 4
_READABLE_VERSIONS = (1, 2, 3, 4)

_ESTIMATORS = {cls.__name__: cls for cls in (DecisionTreeClassifier, DecisionTreeRegressor,
                                               ExtraTreeClassifier, ExtraTreeRegressor)}
_METADATA = "metadata"
_METADATA_KEYS_V1 = frozenset((
    "format", "format_version", "jitree_version", "estimator", "params", "n_nodes",
    "n_features_in_", "n_classes", "max_features_", "classes_", "feature_names_in_",
))
_METADATA_KEYS = {
    1: _METADATA_KEYS_V1,
    2: _METADATA_KEYS_V1 | {"categories_", MISSING_SEEN_ATTRIBUTE},
}
_METADATA_KEYS[3] = _METADATA_KEYS[2] | {"leaf_samples"}
_METADATA_KEYS[4] = _METADATA_KEYS[3] | {"n_outputs"}
# (name, dtype, what its length counts) of every array member, by format version
_V1_NAMES = ("feature", "threshold", "children_left", "children_right", "value", "impurity",
             "n_node_samples", "weighted_n_node_samples")
_LAYOUT = {
    2: tuple((name, dtype, "nodes") for name, dtype in _ARRAYS)
    + tuple((name, dtype, "pool") for name, dtype in _POOLS)
    + tuple((name, dtype, "features") for name, dtype in _FEATURE_ARRAYS),
}
_LAYOUT[1] = tuple(entry for entry in _LAYOUT[2] if entry[0] in _V1_NAMES)
_LAYOUT[3] = _LAYOUT[4] = _LAYOUT[2]
# (member, dtype, what its length counts) of the optional leaf samples (version 3)
_LEAF_LAYOUT = (("leaf_start", np.int64, "nodes"), ("leaf_stop", np.int64, "nodes"),
                ("leaf_sample", np.int32, "n_entries"), ("leaf_weight", np.float64, "n_entries"),
                ("train_target", np.float64, "n_train"))
_MEMBERS = {version: frozenset([f"{_METADATA}.npy"] + [f"{name}.npy" for name, _, _ in layout])
            for version, layout in _LAYOUT.items()}
_MEMBERS[3] = _MEMBERS[3] | {f"{name}.npy" for name, _, _ in _LEAF_LAYOUT}
_MEMBERS[4] = _MEMBERS[3]
_ZIP_MAGIC = b"PK\x03\x04"
_LABEL_KINDS = "biufUSO"
_CATEGORY_KINDS = "biufUO"  # str, int, float and bool categories (no bytes)
# Longest label a classes_ dtype may declare (bytes per entry): bounds what a crafted
# dtype string can make load allocate.
_MAX_LABEL_BYTES = 1 << 20

# What zipfile, zlib, numpy's .npy reader and json raise on damaged bytes.
_READ_ERRORS = (OSError, EOFError, ValueError, TypeError, LookupError, ArithmeticError,
                MemoryError, RuntimeError, SyntaxError, zipfile.BadZipFile, zlib.error,
                struct.error)


class _FormatError(ValueError):
    """A problem with the file's content (the caller adds the file name)."""


def _short(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _is_json_scalar(value):
    return value is None or isinstance(value, (bool, int, float, str))


# -- writing -----------------------------------------------------------------------------------
def _plain(value):
    """NumPy scalars as the equal Python scalar (json only knows the latter)."""
    return value.item() if isinstance(value, np.generic) else value


def _is_scalar_list(values):
    return all(_is_json_scalar(value) and value is not None for value in values)


def _encode_groups(groups):
    """interaction_cst's groups of feature indices as lists of ints (a set sorted)."""
    try:
        encoded = [sorted(_plain(f) for f in group) if isinstance(group, (set, frozenset))
                   else [_plain(f) for f in group] for group in groups]
    except TypeError:
        encoded = None
    if encoded is None or not all(_is_int(f) for group in encoded for f in group):
        raise TypeError(f"cannot save parameter interaction_cst={_short(groups)}: groups of "
                        "feature indices (ints) can be stored")
    return encoded


def _encode_params(model):
    params = {}
    for name, value in model.get_params(deep=False).items():
        value = _plain(value)
        if isinstance(value, Criterion):
            value = value.name  # its functions are code: the file records the name only
        if name == "random_state" and not _is_int(value):
            value = None  # a generator object has no portable form; its seed was used at fit
        elif name == "class_weight" and isinstance(value, dict):
            pairs = [[_plain(label), _plain(weight)] for label, weight in value.items()]
            if not all(_is_json_scalar(label) and label is not None
                       and isinstance(weight, numbers.Real) and not isinstance(weight, bool)
                       for label, weight in pairs):
                raise TypeError(f"cannot save class_weight={_short(value)}: labels must be "
                                "strings, numbers or booleans and weights numbers")
            value = [[label, weight if isinstance(weight, int) else float(weight)]
                     for label, weight in pairs]
        elif name == "interaction_cst" and not isinstance(value, str) and value is not None:
            value = _encode_groups(value)
        elif isinstance(value, (list, tuple, np.ndarray)):
            # feature lists and masks (categorical_features, ...): stored as a list
            items = value.tolist() if isinstance(value, np.ndarray) else \
                [_plain(item) for item in value]
            if (isinstance(value, np.ndarray) and value.ndim != 1) or not _is_scalar_list(items):
                raise TypeError(f"cannot save parameter {name}={_short(value)}: a list "
                                "parameter can hold only booleans, numbers and strings")
            value = items
        elif not _is_json_scalar(value):
            raise TypeError(f"cannot save parameter {name}={_short(value)}: only None, "
                            "booleans, numbers, strings and lists of them can be stored")
        params[name] = value
    return params


def _encode_values(values, what, kinds, error):
    """``{"dtype": ..., "values": [...]}`` for a 1-D array of labels or categories; ``error``
    (the exception class) when they are not of a kind in ``kinds``."""
    dtype = values.dtype
    if dtype.kind not in kinds or dtype.names is not None or values.ndim != 1:
        raise error(f"cannot save {what} of dtype {dtype} and shape {values.shape}: they "
                    "must be strings, numbers or booleans")
    if dtype.kind == "S":
        encoded = [value.decode("latin-1") for value in values.tolist()]
    elif dtype.kind == "O":
        encoded = [_plain(value) for value in values]
        for value in encoded:
            if not isinstance(value, (bool, int, float, str)):
                raise error(f"cannot save {what}: {_short(value)} is of type "
                            f"{type(value).__name__}, they must be strings, numbers or "
                            "booleans")
    else:
        encoded = values.tolist()
    return {"dtype": dtype.str, "values": encoded}


def _encode_classes(classes):
    return _encode_values(classes, "class labels", _LABEL_KINDS, TypeError)


def _encode_categories(model, tree):
    """``categories_`` as stored (module docstring); ValueError when it does not fit the tree
    or holds values other than strings, numbers and booleans."""
    categories = getattr(model, "categories_", None)
    if categories is None:
        return None
    if not isinstance(categories, (list, tuple)) or len(categories) != tree.n_features:
        raise ValueError(f"cannot save categories_={_short(categories)}: it must be a list "
                         f"with one entry per feature ({tree.n_features})")
    encoded = []
    for f, values in enumerate(categories):
        n_categories = int(tree.n_categories[f])
        # categorical and ordinal features list their categories (none when the column was
        # all missing at fit), numeric ones have None
        coded = int(tree.feature_kind[f]) != FEATURE_NUMERIC
        if values is None:
            if coded:
                raise ValueError(f"cannot save categories_[{f}] = None: feature {f} is "
                                 f"categorical or ordinal ({n_categories} categories)")
            encoded.append(None)
            continue
        if not coded:
            raise ValueError(f"cannot save categories_[{f}]: it lists categories of the numeric "
                             f"feature {f}")
        if not isinstance(values, np.ndarray):
            items = list(values)
            values = np.empty(len(items), dtype=object)  # keeps each value's own type
            values[:] = items
        entry = _encode_values(values, f"categories_[{f}]", _CATEGORY_KINDS, ValueError)
        found = entry["values"]
        if len(found) != n_categories:
            raise ValueError(f"cannot save categories_[{f}]: it has {len(found)} values, "
                             f"feature {f} has {n_categories} category codes")
        if any(isinstance(value, float) and not np.isfinite(value) for value in found):
            raise ValueError(f"cannot save categories_[{f}]: a category is not finite (NaN is "
                             "a missing value, not a category)")
        if len(set(found)) != len(found):
            raise ValueError(f"cannot save categories_[{f}]: it repeats a category")
        encoded.append(entry)
    return encoded


def _encode_missing_seen(model, tree):
    seen = getattr(model, MISSING_SEEN_ATTRIBUTE, None)
    if seen is None:
        return None
    seen = np.asarray(seen)
    if seen.dtype != bool or seen.shape != (tree.n_features,):
        raise ValueError(f"cannot save {MISSING_SEEN_ATTRIBUTE}: it must be a boolean array "
                         f"of shape ({tree.n_features},), got {seen.dtype} {seen.shape}")
    return seen.tolist()


def save(model, path):
    """Write a fitted jitree tree estimator to ``path`` (format: see the module docstring).

    Parameters
    ----------
    model : DecisionTreeClassifier or DecisionTreeRegressor
        A fitted jitree estimator.
    path : str or os.PathLike
        Destination file, replaced if it exists. The file is written under a temporary name
        and then renamed, so an interrupted save never leaves a partial model at ``path``.

    Raises
    ------
    TypeError
        ``model`` is not a jitree tree estimator, or holds a parameter or class label that
        the format cannot store.
    NotFittedError
        ``model`` is not fitted.
    ValueError
        ``model.tree_`` is malformed (see :func:`jitree.model.tree_check.check_tree`), or
        ``categories_`` does not fit it or holds values other than strings, numbers and
        booleans, or a string (class label, category, parameter) is not valid Unicode text
        (the file is not written then).
    """
    from .. import __version__

    name = type(model).__name__
    if _ESTIMATORS.get(name) is not type(model):
        *others, last = _ESTIMATORS
        raise TypeError(f"save expects a jitree {', '.join(others)} or {last}, got "
                        f"{type(model).__module__}.{name}")
    check_is_fitted(model)
    is_classifier = model._task == "classification"
    n_outputs = int(getattr(model.tree_, "n_outputs", 1))
    if n_outputs > 1 and is_classifier:
        n_classes = [len(c) for c in model.classes_]
        tree = check_tree(model.tree_, model.n_features_in_, max(n_classes))
        classes = [_encode_classes(c) for c in model.classes_]
    else:
        n_classes = len(model.classes_) if is_classifier else 0
        tree = check_tree(model.tree_, model.n_features_in_, n_classes)
        classes = _encode_classes(model.classes_) if is_classifier else None
    feature_names = getattr(model, "feature_names_in_", None)
    metadata = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "jitree_version": __version__,
        "estimator": name,
        "params": _encode_params(model),
        "n_nodes": tree.node_count,
        "n_features_in_": tree.n_features,
        "n_classes": n_classes,
        "max_features_": int(getattr(model, "max_features_", tree.n_features)),
        "classes_": classes,
        "n_outputs": n_outputs,
        "feature_names_in_": None if feature_names is None else [str(feature)
                                                                 for feature in feature_names],
        "categories_": _encode_categories(model, tree),
        MISSING_SEEN_ATTRIBUTE: _encode_missing_seen(model, tree),
        "leaf_samples": None,
    }
    leaf_arrays = {}
    samples = getattr(model, "leaf_samples_", None)
    if samples is not None and not is_classifier:
        if samples.start.shape[0] != tree.node_count:
            raise ValueError("leaf_samples_ does not fit tree_ (another number of nodes)")
        metadata["leaf_samples"] = {"n_entries": int(samples.sample.shape[0]),
                                    "n_train": int(samples.target.shape[0])}
        leaf_arrays = {"leaf_start": samples.start, "leaf_stop": samples.stop,
                       "leaf_sample": samples.sample, "leaf_weight": samples.weight,
                       "train_target": samples.target}
    text = json.dumps(metadata, ensure_ascii=False, separators=(",", ":"))
    try:
        encoded = text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(f"cannot save {name}: it holds the string "
                         f"{error.object[max(error.start - 20, 0):error.end + 20]!r}, which is "
                         "not valid Unicode text (a lone surrogate code point)") from None
    metadata_bytes = np.frombuffer(encoded, dtype=np.uint8)

    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):  # named here, not through the temporary file's name
        raise FileNotFoundError(f"cannot save to {path!r}: no directory {folder!r}")
    temporary = f"{path}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp"
    try:
        with open(temporary, "xb") as file:
            np.savez(file, **{_METADATA: metadata_bytes}, **tree.arrays(), **leaf_arrays)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


# -- reading -----------------------------------------------------------------------------------
def _read_array(archive, name, dtype, shape, file_size):
    """The member ``name`` as a C-contiguous array of ``dtype``, after checking from its header
    that it has that dtype (either byte order) and ``shape`` (None: any length), is stored
    uncompressed and has exactly the bytes its header announces."""
    try:
        info = archive.zip.getinfo(f"{name}.npy")
    except KeyError:
        raise _FormatError(f"array {name!r} is missing") from None
    if info.compress_type != zipfile.ZIP_STORED:
        raise _FormatError(f"array {name!r} is compressed (jitree files store arrays "
                           "uncompressed)")
    if info.file_size > file_size:
        raise _FormatError(f"array {name!r} claims {info.file_size} bytes, more than the "
                           f"whole file ({file_size} bytes)")
    with archive.zip.open(info) as member:
        version = np.lib.format.read_magic(member)
        if version == (1, 0):
            stored_shape, _, stored_dtype = np.lib.format.read_array_header_1_0(member)
        elif version == (2, 0):
            stored_shape, _, stored_dtype = np.lib.format.read_array_header_2_0(member)
        else:
            raise _FormatError(f"array {name!r} has unsupported .npy version {version}")
        header_size = member.tell()
    expected = np.dtype(dtype)
    if stored_dtype.names is not None or stored_dtype.subdtype is not None \
            or stored_dtype.newbyteorder("<") != expected.newbyteorder("<"):
        raise _FormatError(f"array {name!r} has dtype {stored_dtype}, expected {expected}")
    if len(stored_shape) != len(shape) or any(
            got < 0 or (wanted is not None and got != wanted)
            for got, wanted in zip(stored_shape, shape, strict=True)):
        wanted = ", ".join("n" if length is None else str(length) for length in shape)
        raise _FormatError(f"array {name!r} has shape {stored_shape}, expected "
                           f"({wanted}{',' if len(shape) == 1 else ''})")
    n_bytes = int(np.prod(stored_shape, dtype=object)) * expected.itemsize
    if header_size + n_bytes != info.file_size:
        raise _FormatError(f"array {name!r} holds {info.file_size - header_size} bytes of "
                           f"data, its header announces {n_bytes}")
    return np.ascontiguousarray(archive[name], dtype=expected)


def _field(metadata, key, is_valid, expected):
    value = metadata[key]
    if not is_valid(value):
        raise _FormatError(f"metadata {key!r} must be {expected}, got {_short(value)}")
    return value


def _read_metadata(archive, file_size):
    raw = _read_array(archive, _METADATA, np.uint8, (None,), file_size)
    try:
        metadata = json.loads(raw.tobytes().decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise _FormatError(f"metadata is not valid UTF-8 JSON ({error})") from None
    if not isinstance(metadata, dict):
        raise _FormatError(f"metadata must be a JSON object, got {type(metadata).__name__}")
    if metadata.get("format") != FORMAT_NAME:
        raise _FormatError(f"not a jitree model file (format {_short(metadata.get('format'))})")
    version = metadata.get("format_version")
    if not _is_int(version) or version not in _READABLE_VERSIONS:
        raise _FormatError(f"unsupported format version {_short(version)} (this jitree reads "
                           f"versions {', '.join(map(str, _READABLE_VERSIONS))})")
    keys = _METADATA_KEYS[version]
    missing = sorted(keys - metadata.keys())
    if missing:
        raise _FormatError(f"metadata lacks {', '.join(missing)}")
    unknown = sorted(metadata.keys() - keys)
    if unknown:
        raise _FormatError(f"metadata has unknown keys {', '.join(map(repr, unknown))}")
    return metadata


def _decode_params(params, cls):
    if not isinstance(params, dict):
        raise _FormatError(f"metadata 'params' must be an object, got {_short(params)}")
    valid = set(cls._param_names())
    decoded = {}
    for name, value in params.items():
        if name not in valid:
            raise _FormatError(f"unknown parameter {name!r} for {cls.__name__}")
        if name == "class_weight" and isinstance(value, list):
            pairs = value
            if not all(isinstance(pair, list) and len(pair) == 2 and pair[0] is not None
                       and _is_json_scalar(pair[0]) and isinstance(pair[1], (int, float))
                       and not isinstance(pair[1], bool) for pair in pairs):
                raise _FormatError("parameter class_weight must be a list of [label, weight] "
                                   f"pairs, got {_short(value)}")
            value = {label: weight for label, weight in pairs}
            if len(value) != len(pairs):
                raise _FormatError("parameter class_weight repeats a label")
        elif name == "interaction_cst" and isinstance(value, list):
            if not all(isinstance(group, list) and all(_is_int(f) for f in group)
                       for group in value):
                raise _FormatError("parameter interaction_cst must be a list of lists of "
                                   f"feature indices, got {_short(value)}")
        elif isinstance(value, list):
            if not _is_scalar_list(value):
                raise _FormatError(f"parameter {name} has unsupported value {_short(value)} "
                                   "(a list holds booleans, numbers and strings)")
        elif not _is_json_scalar(value):
            raise _FormatError(f"parameter {name} has unsupported value {_short(value)}")
        decoded[name] = value
    try:
        resolve_n_jobs(decoded.get("n_jobs"))  # the only parameter prediction uses
    except (TypeError, ValueError) as error:
        raise _FormatError(f"parameter n_jobs: {error}") from None
    return decoded


def _decode_values(entry, count, what, noun, kinds):
    """The array stored by :func:`_encode_values`: ``count`` distinct values of a dtype whose
    kind is in ``kinds``, checked to fit it exactly. ``what`` names the entry in messages,
    ``noun`` one value ("label", "category")."""
    if not (isinstance(entry, dict) and entry.keys() == {"dtype", "values"}
            and isinstance(entry["dtype"], str) and isinstance(entry["values"], list)):
        raise _FormatError(f"metadata {what!r} must be an object with a 'dtype' string and a "
                           f"'values' list, got {_short(entry)}")
    values = entry["values"]
    if len(values) != count:
        raise _FormatError(f"metadata {what!r} has {len(values)} values, {count} are "
                           "expected")
    try:
        dtype = np.dtype(entry["dtype"])
    except (TypeError, ValueError):
        raise _FormatError(f"{what} dtype {_short(entry['dtype'])} is not a NumPy dtype") \
            from None
    if dtype.kind not in kinds or dtype.names is not None or dtype.subdtype is not None \
            or dtype.itemsize > _MAX_LABEL_BYTES:
        raise _FormatError(f"{what} dtype {dtype} is not a supported {noun} dtype")
    kind = dtype.kind
    if kind == "b":
        valid = all(isinstance(value, bool) for value in values)
    elif kind in "iu":
        valid = all(_is_int(value) for value in values)
    elif kind == "f":
        valid = all(isinstance(value, float) and np.isfinite(value) for value in values)
    elif kind in "US":
        valid = all(isinstance(value, str) for value in values)
    else:
        valid = all(isinstance(value, (bool, int, float, str)) for value in values)
        valid = valid and not any(isinstance(value, float) and not np.isfinite(value)
                                  for value in values)
    if not valid:
        raise _FormatError(f"{what} values {_short(values)} do not fit dtype {dtype}")
    if len(set(values)) != len(values):
        raise _FormatError(f"{what} repeats a {noun}: {_short(values)}")
    try:
        if kind == "O":
            array = np.empty(len(values), dtype=object)
            array[:] = values
        elif kind == "S":
            array = np.array([value.encode("latin-1") for value in values], dtype=dtype)
        else:
            array = np.array(values, dtype=dtype)
    except (ValueError, OverflowError, UnicodeEncodeError) as error:
        raise _FormatError(f"{what} values do not fit dtype {dtype} ({error})") from None
    stored = array.tolist()
    if kind == "S":
        stored = [value.decode("latin-1") for value in stored]
    if stored != values:  # e.g. a string longer than the dtype's width, truncated by NumPy
        raise _FormatError(f"{what} values {_short(values)} do not fit dtype {dtype}")
    return array


def _decode_classes(entry, n_classes):
    return _decode_values(entry, n_classes, "classes_", "label", _LABEL_KINDS)


def _decode_categories(entry, tree):
    """``categories_`` (a list of None / arrays) from its stored form, checked against the
    tree's ``n_categories``; None when the model had none."""
    if entry is None:
        return None
    if not isinstance(entry, list) or len(entry) != tree.n_features:
        raise _FormatError(f"metadata 'categories_' must be null or a list of "
                           f"{tree.n_features} entries, got {_short(entry)}")
    categories = []
    for f, values in enumerate(entry):
        n_categories = int(tree.n_categories[f])
        coded = int(tree.feature_kind[f]) != FEATURE_NUMERIC
        if values is None:
            if coded:
                raise _FormatError(f"categories_[{f}] is null, but feature {f} is categorical "
                                   "or ordinal")
            categories.append(None)
            continue
        if not coded:
            raise _FormatError(f"categories_[{f}] lists categories of the numeric feature {f}")
        categories.append(_decode_values(values, n_categories, f"categories_[{f}]",
                                         "category", _CATEGORY_KINDS))
    return categories


def _check_offsets_in_pools(arrays):
    """Refuse a category offset past both pools before check_tree adds widths to it: near the
    int64 limit that sum would wrap around and pass a bounds test."""
    offset = arrays["category_offset"]
    largest = max(arrays["category_bits"].shape[0], arrays["multiway_slot"].shape[0])
    bad = (offset < -1) | (offset > largest)
    if bad.any():
        node = int(np.flatnonzero(bad)[0])
        raise _FormatError(f"invalid tree: tree.category_offset[{node}] = {offset[node]} "
                           "reads outside its pool")


def _read_model(archive, file_size):
    members = set(archive.zip.namelist())
    unexpected = sorted(members - _MEMBERS[FORMAT_VERSION])
    if unexpected:
        raise _FormatError(f"unexpected members {', '.join(map(repr, unexpected[:5]))} (not a "
                           "jitree model file?)")
    if f"{_METADATA}.npy" not in members:
        raise _FormatError("not a jitree model file (no metadata)")
    metadata = _read_metadata(archive, file_size)
    version = metadata["format_version"]
    unexpected = sorted(members - _MEMBERS[version])
    if unexpected:
        raise _FormatError(f"unexpected members {', '.join(map(repr, unexpected[:5]))} in a "
                           f"version {version} file")
    cls = _ESTIMATORS.get(metadata["estimator"]) if isinstance(metadata["estimator"], str) \
        else None
    if cls is None:
        raise _FormatError(f"unknown estimator {_short(metadata['estimator'])} (expected one "
                           f"of {', '.join(_ESTIMATORS)})")
    is_classifier = cls._task == "classification"
    n_nodes = _field(metadata, "n_nodes", lambda v: _is_int(v) and v >= 1, "an int >= 1")
    n_features = _field(metadata, "n_features_in_", lambda v: _is_int(v) and v >= 1,
                        "an int >= 1")
    n_outputs = 1
    if version >= 4:
        n_outputs = _field(metadata, "n_outputs", lambda v: _is_int(v) and v >= 1,
                           "an int >= 1")
    if is_classifier and n_outputs > 1:
        per_output = _field(metadata, "n_classes",
                            lambda v: isinstance(v, list) and len(v) == n_outputs
                            and all(_is_int(n) and n >= 1 for n in v),
                            f"a list of {n_outputs} ints >= 1 for a classifier of "
                            f"{n_outputs} outputs")
        entries = _field(metadata, "classes_",
                         lambda v: isinstance(v, list) and len(v) == n_outputs,
                         f"a list of {n_outputs} label lists")
        classes = [_decode_classes(entry, n) for entry, n in zip(entries, per_output,
                                                                 strict=True)]
        n_classes = max(per_output)
    elif is_classifier:
        n_classes = _field(metadata, "n_classes", lambda v: _is_int(v) and v >= 1,
                           "an int >= 1 for a classifier")
        classes = _decode_classes(metadata["classes_"], n_classes)
    else:
        n_classes = _field(metadata, "n_classes", lambda v: _is_int(v) and v == 0,
                           "0 for a regressor")
        _field(metadata, "classes_", lambda v: v is None, "null for a regressor")
        classes = None
    max_features = _field(metadata, "max_features_",
                          lambda v: _is_int(v) and 1 <= v <= n_features,
                          f"an int in [1, {n_features}]")
    feature_names = _field(
        metadata, "feature_names_in_",
        lambda v: v is None or (isinstance(v, list) and len(v) == n_features
                                and all(isinstance(name, str) for name in v)),
        f"null or a list of {n_features} strings")
    _field(metadata, "jitree_version", lambda v: isinstance(v, str), "a string")
    params = _decode_params(metadata["params"], cls)

    if version >= 2:
        missing_seen = _field(
            metadata, MISSING_SEEN_ATTRIBUTE,
            lambda v: v is None or (isinstance(v, list) and len(v) == n_features
                                    and all(isinstance(flag, bool) for flag in v)),
            f"null or a list of {n_features} booleans")
    else:
        missing_seen = None

    width = n_outputs * (n_classes if is_classifier else 1)
    length = {"nodes": n_nodes, "pool": None, "features": n_features}
    arrays = {}
    for name, dtype, counted in _LAYOUT[version]:
        shape = (n_nodes, width) if name == "value" else (length[counted],)
        arrays[name] = _read_array(archive, name, dtype, shape, file_size)
    if "category_offset" in arrays:
        _check_offsets_in_pools(arrays)
    try:  # the constructor checks the tree; the expected sizes are checked again here
        tree = check_tree(Tree(n_features, n_classes, **arrays, n_outputs=n_outputs),
                          n_features, n_classes)
    except (TypeError, ValueError) as error:
        raise _FormatError(f"invalid tree: {error}") from None
    categories = _decode_categories(metadata.get("categories_"), tree)
    model = cls._from_tree(tree, classes=classes, feature_names=feature_names, params=params)
    model.max_features_ = max_features
    if categories is not None:
        model.categories_ = categories
    if missing_seen is not None:
        setattr(model, MISSING_SEEN_ATTRIBUTE, np.array(missing_seen, dtype=bool))
    if version >= 3:
        _read_leaf_samples(archive, metadata, model, members, file_size)
    return model


def _read_leaf_samples(archive, metadata, model, members, file_size):
    """Set ``model.leaf_samples_`` from the optional members the metadata announces."""
    entry = metadata["leaf_samples"]
    present = {f"{name}.npy" for name, _, _ in _LEAF_LAYOUT} & members
    if entry is None:
        if present:
            raise _FormatError("leaf sample arrays are present but metadata 'leaf_samples' "
                               "is null")
        return
    if not (isinstance(entry, dict) and set(entry) == {"n_entries", "n_train"}
            and _is_int(entry["n_entries"]) and entry["n_entries"] >= 0
            and _is_int(entry["n_train"]) and entry["n_train"] >= 1):
        raise _FormatError("metadata 'leaf_samples' must be null or {\"n_entries\": int >= 0, "
                           f"\"n_train\": int >= 1}}, got {_short(entry)}")
    if model._task != "regression":
        raise _FormatError("leaf samples are stored for regressors only")
    length = {"nodes": model.tree_.node_count, **entry}
    arrays = {name: _read_array(archive, name, dtype, (length[counted],), file_size)
              for name, dtype, counted in _LEAF_LAYOUT}
    try:
        model.leaf_samples_ = leaf_samples.from_arrays(
            arrays["leaf_start"], arrays["leaf_stop"], arrays["leaf_sample"],
            arrays["leaf_weight"], arrays["train_target"])
    except ValueError as error:
        raise _FormatError(f"invalid leaf samples: {error}") from None


def load(path):
    """Read a model written by :func:`save`, validating all of it first.

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    model : DecisionTreeClassifier or DecisionTreeRegressor
        The fitted estimator, predicting exactly as the saved one.

    Raises
    ------
    FileNotFoundError
        There is no file at ``path`` (other ``OSError`` from opening it pass through too).
    ValueError
        The file is not a jitree model file of a supported version, or it is truncated,
        corrupted or inconsistent; the message names the file and the problem.
    """
    path = os.fspath(path)
    with open(path, "rb") as file:
        file_size = os.fstat(file.fileno()).st_size
        try:
            if file.read(len(_ZIP_MAGIC)) != _ZIP_MAGIC:
                raise _FormatError("not a jitree model file (not a non-empty zip archive)")
            file.seek(0)
            with np.load(file, allow_pickle=False) as archive:
                if not isinstance(archive, np.lib.npyio.NpzFile):
                    raise _FormatError("not a jitree model file (not an .npz archive)")
                return _read_model(archive, file_size)
        except _FormatError as error:
            raise ValueError(f"cannot load jitree model {path!r}: {error}") from None
        except _READ_ERRORS as error:
            detail = " ".join(str(error).split())
            raise ValueError(f"cannot load jitree model {path!r}: the file is truncated or "
                             f"corrupted ({type(error).__name__}: {detail})") from None
