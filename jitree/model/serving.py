"""Export for serving: jitree trees and forests as ONNX and Treelite models.

Treelite
--------
:func:`to_treelite` builds a ``treelite.Model`` (Treelite 4's model builder), which reaches
Treelite's ecosystem (TL2cgen compiled predictors, RAPIDS FIL, Triton's FIL backend). Threshold
tests keep their float64 thresholds (``x <= t``, NaN to ``missing_left``'s side); category
subset and one-vs-rest tests become Treelite category tests: the listed categories go to one
child and every other value (a category outside the fitted codes included) to the side jitree
sends missing values and unseen categories, NaN included. Multiway nodes (several children)
have no Treelite form and are refused. Treelite tests a category by its value, so the
exported tests list the fitted categories' values (``categories_``; codes 0 .. m - 1 for X
given as codes): a feature whose categories are not non-negative integers below 2**32 is
refused. Treelite reads a non-integral category value by its integer part, where jitree
treats it as unseen. Leaves hold the tree's values (class probabilities, or the
prediction), averaged over a forest's trees.

Both exports take X as the model's ``predict`` takes it, its values (not codes). An ordinal
feature's threshold, which jitree keeps on the levels' ranks, is exported as the level it
stands for (``x <= level``): rows of fitted levels, and missing values, reach jitree's
leaves; a value between two fitted levels, which jitree sends the way of missing values,
is compared by value in the export. Ordinal levels that are not numbers are refused.

ONNX
----
:func:`to_onnx` writes the ``ai.onnx.ml`` TreeEnsembleRegressor / TreeEnsembleClassifier
operators, which onnxruntime (and any ONNX runtime with the ML domain) runs. Those operators
compare in float32: the exported model takes float32 X, and each float64 threshold t becomes
the largest float32 v <= t, for which ``x <= v`` exactly when ``x <= t`` for every float32 x (the
rule of jitree's own float32 prediction layout). So the ONNX model reaches the same leaves as
jitree on float32 X; its outputs are float32 (the leaf values rounded to float32, summed).

Missing values (NaN) follow each node's ``missing_left`` (``nodes_missing_value_tracks_true``).
Category tests (subset, one-vs-rest, multiway) have no equivalent in these operators that keeps
jitree's routing of unseen categories: a tree holding one is refused with a ValueError. A
binary classifier's leaves hold the probability of the second class alone (class id 0, as
the ONNX converters of scikit-learn write them): the runtime makes the first class's one
minus it, and ``label`` the second class when its probability exceeds 0.5 (given both
classes' probabilities, onnxruntime labelled the rows by class index).
"""

import numpy as np

from .tree import FEATURE_ORDINAL, SPLIT_MULTIWAY, SPLIT_THRESHOLD, TREE_LEAF, float32_below
from .validation import fitted_trees

_ML_OPSET = 3
_ONNX_OPSET = 17


def _onnx():
    try:
        import onnx
        from onnx import helper
    except ImportError as error:
        raise ImportError("to_onnx needs the onnx package: pip install 'jitree[onnx]'") \
            from error
    return onnx, helper


def _categories(estimator):
    """The values of each feature's codes (``categories_``; None: a numeric feature, or a
    model without them, whose codes are the values)."""
    categories = getattr(estimator, "categories_", None)
    return [None] * estimator.tree_.n_features if categories is None else categories


def _value_thresholds(estimator):
    """The float64 thresholds of ``estimator``'s tree on the values of X: a numeric
    feature's as they are, an ordinal feature's (kept on the levels' ranks: codes <= floor(t)
    go left) the level floor(t) stands for. ValueError for ordinal levels that are not
    numbers."""
    tree = estimator.tree_
    out = np.array(tree.threshold, dtype=np.float64)
    categories = _categories(estimator)
    tested = (tree.children_left != TREE_LEAF) & (tree.split_kind == SPLIT_THRESHOLD)
    for f in np.flatnonzero(tree.feature_kind == FEATURE_ORDINAL):
        nodes = np.flatnonzero(tested & (tree.feature == f))
        if nodes.shape[0] == 0 or categories[f] is None:
            continue
        levels = np.asarray(categories[f])
        if levels.dtype.kind not in "iufb":
            raise ValueError(f"feature {f} is ordinal with levels of dtype {levels.dtype}: the "
                             "exported model compares numbers; fit on numeric levels (or "
                             "their ranks) to export")
        # clipped before the cast: a split parting missing values has the threshold DBL_MAX
        rank = np.clip(np.floor(out[nodes]), 0, levels.shape[0] - 1).astype(np.int64)
        out[nodes] = levels[rank].astype(np.float64)
    return out


def _node_attributes(estimators):
    """The node attributes shared by both operators, tree after tree."""
    columns = {name: [] for name in ("nodes_treeids", "nodes_nodeids", "nodes_featureids",
                                     "nodes_values", "nodes_modes", "nodes_truenodeids",
                                     "nodes_falsenodeids",
                                     "nodes_missing_value_tracks_true")}
    for t, estimator in enumerate(estimators):
        tree = estimator.tree_
        internal = tree.children_left != TREE_LEAF
        kinds = tree.split_kind[internal]
        if (kinds != SPLIT_THRESHOLD).any():
            raise ValueError(
                f"tree {t} tests categories (split_kind {int(kinds[kinds != 0][0])}): the ONNX "
                "tree operators cannot route unseen categories as jitree does; export a "
                "model fitted on numeric (or ordinal) features, or one-hot encode the "
                "categorical columns")
        n = tree.node_count
        columns["nodes_treeids"].extend([t] * n)
        columns["nodes_nodeids"].extend(range(n))
        columns["nodes_featureids"].extend(np.where(internal, tree.feature, 0).tolist())
        columns["nodes_values"].extend(
            np.where(internal, float32_below(_value_thresholds(estimator)), 0.0).tolist())
        columns["nodes_modes"].extend(["BRANCH_LEQ" if i else "LEAF" for i in internal])
        columns["nodes_truenodeids"].extend(np.where(internal, tree.children_left, 0).tolist())
        columns["nodes_falsenodeids"].extend(
            np.where(internal, tree.children_right, 0).tolist())
        columns["nodes_missing_value_tracks_true"].extend(
            np.where(internal, tree.missing_left, 0).astype(int).tolist())
    return columns


def to_onnx(model, name="jitree"):
    """The ONNX model of a fitted jitree tree or forest with threshold tests.

    Parameters
    ----------
    model : DecisionTreeClassifier, DecisionTreeRegressor or a jitree forest
        Fitted, every node a threshold test (numeric or ordinal features); missing values
        are routed as the model routes them.
    name : str, default="jitree"
        The graph's name.

    Returns
    -------
    onnx.ModelProto
        Input ``X``: float32 (n_samples, n_features). A regressor has one output
        ``variable`` (n_samples, 1): the prediction. A classifier has ``label`` (n_samples,)
        and ``probabilities`` (n_samples, n_classes), the class probabilities (a forest's
        mean over its trees), as ``predict`` and ``predict_proba`` on float32 X up to float32
        rounding. Run it with ``onnxruntime.InferenceSession(model.SerializeToString())``.

    Raises
    ------
    ImportError
        The ``onnx`` package is missing (extra ``jitree[onnx]``).
    ValueError
        A tree tests categories, a classifier was fitted on one class, or its labels are
        neither integers (of any dtype; exported as int64) nor strings.
    """
    onnx, helper = _onnx()
    estimators, classifier = fitted_trees(model, "to_onnx")
    attributes = _node_attributes(estimators)
    n_trees = len(estimators)
    n_features = estimators[0].tree_.n_features
    leaf_trees, leaf_nodes, output_ids, weights = [], [], [], []
    if classifier and len(model.classes_) < 2:
        label = np.asarray(model.classes_)[0].tolist()
        raise ValueError(f"to_onnx exports classifiers of two or more classes; this "
                         f"{type(model).__name__} was fitted on one class ({label!r}): "
                         "onnxruntime's TreeEnsembleClassifier has no form for one class "
                         "(its prediction is that class for every row)")
    binary = classifier and len(model.classes_) == 2
    for t, estimator in enumerate(estimators):
        tree = estimator.tree_
        leaves = np.flatnonzero(tree.children_left == TREE_LEAF)
        table = estimator._node_proba() if classifier else tree.value
        if binary:  # the second class's probability alone, under class id 0
            table = table[:, 1:]
        width = table.shape[1]
        leaf_trees.extend(np.repeat(t, leaves.shape[0] * width).tolist())
        leaf_nodes.extend(np.repeat(leaves, width).tolist())
        output_ids.extend(np.tile(np.arange(width), leaves.shape[0]).tolist())
        weights.extend((table[leaves] / n_trees).reshape(-1).tolist())
    X = helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [None, n_features])
    if classifier:
        classes = np.asarray(model.classes_)
        integral = classes.dtype.kind in "iub" or (
            classes.dtype.kind == "f" and bool(np.all(classes == np.round(classes))))
        if integral:
            labels = {"classlabels_int64s": classes.astype(np.int64).tolist()}
            label_type = onnx.TensorProto.INT64
        elif classes.dtype.kind in "UO" and all(isinstance(c, str) for c in classes.tolist()):
            labels = {"classlabels_strings": [str(c) for c in classes.tolist()]}
            label_type = onnx.TensorProto.STRING
        else:
            raise ValueError(f"to_onnx exports classifiers with integer or string labels, got "
                             f"labels of dtype {classes.dtype}")
        node = helper.make_node(
            "TreeEnsembleClassifier", ["X"], ["label", "probabilities"], domain="ai.onnx.ml",
            class_treeids=leaf_trees, class_nodeids=leaf_nodes, class_ids=output_ids,
            class_weights=weights, post_transform="NONE", **labels, **attributes)
        outputs = [helper.make_tensor_value_info("label", label_type, [None]),
                   helper.make_tensor_value_info("probabilities", onnx.TensorProto.FLOAT,
                                                 [None, classes.shape[0]])]
    else:
        node = helper.make_node(
            "TreeEnsembleRegressor", ["X"], ["variable"], domain="ai.onnx.ml",
            target_treeids=leaf_trees, target_nodeids=leaf_nodes, target_ids=output_ids,
            target_weights=weights, n_targets=1, aggregate_function="SUM",
            post_transform="NONE", **attributes)
        outputs = [helper.make_tensor_value_info("variable", onnx.TensorProto.FLOAT,
                                                 [None, 1])]
    graph = helper.make_graph([node], name, [X], outputs)
    exported = helper.make_model(graph, producer_name="jitree", opset_imports=[
        helper.make_opsetid("", _ONNX_OPSET), helper.make_opsetid("ai.onnx.ml", _ML_OPSET)])
    exported.ir_version = min(exported.ir_version, 8)
    onnx.checker.check_model(exported)
    return exported


def _treelite_builder():
    try:
        from treelite import model_builder
    except ImportError as error:
        raise ImportError("to_treelite needs the treelite package (4.x): pip install "
                          "'jitree[treelite]'") from error
    return model_builder


def _subset_codes(tree, node):
    """The category codes 0 .. m - 1 a subset node sends left."""
    m = int(tree.n_categories[tree.feature[node]])
    words = tree.category_bits[tree.category_offset[node]:tree.category_offset[node]
                               + (m + 63) // 64]
    bits = np.unpackbits(words.astype("<u8").view(np.uint8), bitorder="little")[:m]
    return np.flatnonzero(bits)


def _category_numbers(values, feature):
    """The values of ``feature``'s category codes as Treelite lists them (``values``: the
    feature's ``categories_`` entry, None when the codes are the values, then None too).
    ValueError for categories that are not non-negative integers below 2**32."""
    if values is None:
        return None
    values = np.asarray(values)
    numbers = values.astype(np.float64) if values.dtype.kind in "iufb" else None
    if numbers is None or not np.all((numbers >= 0) & (numbers < 2.0 ** 32)
                                     & (numbers == np.floor(numbers))):
        raise ValueError(f"feature {feature}'s categories are not all integers in [0, 2**32) "
                         f"(e.g. {values[:3].tolist()}): Treelite tests categories by such "
                         "values; encode them as such integers (or as their codes 0 .. m - 1) "
                         "before fitting to export")
    return numbers.astype(np.int64)


def to_treelite(model):
    """The Treelite model of a fitted jitree tree or forest (see the module docstring).

    Parameters
    ----------
    model : DecisionTreeClassifier, DecisionTreeRegressor or a jitree forest
        Fitted; threshold, category subset and one-vs-rest nodes (not multiway).

    Returns
    -------
    treelite.Model
        A classifier's model predicts the class probabilities (``treelite.gtil.predict``
        gives shape (n_samples, 1, n_classes)), a regressor's the prediction ((n_samples, 1,
        1)); a forest averages its trees.

    Raises
    ------
    ImportError
        treelite is missing (extra ``jitree[treelite]``).
    ValueError
        A tree has a multiway node, a categorical feature's categories are not integers in
        [0, 2**32), or an ordinal feature's levels are not numbers.
    """
    builder_module = _treelite_builder()
    estimators, classifier = fitted_trees(model, "to_treelite")
    n_trees = len(estimators)
    first = estimators[0].tree_
    n_outputs = first.value.shape[1]
    metadata = builder_module.Metadata(
        num_feature=first.n_features, task_type="kMultiClf" if classifier else "kRegressor",
        average_tree_output=n_trees > 1, num_target=1,
        num_class=[n_outputs if classifier else 1], leaf_vector_shape=(1, n_outputs))
    annotation = builder_module.TreeAnnotation(
        num_tree=n_trees, target_id=[0] * n_trees, class_id=[-1 if classifier else 0] * n_trees)
    postprocessor = builder_module.PostProcessorFunc(
        name="identity_multiclass" if classifier else "identity")
    builder = builder_module.ModelBuilder(
        threshold_type="float64", leaf_output_type="float64", metadata=metadata,
        tree_annotation=annotation, postprocessor=postprocessor, base_scores=[0.0] * n_outputs)
    for t, estimator in enumerate(estimators):
        tree = estimator.tree_
        if (tree.split_kind == SPLIT_MULTIWAY).any():
            raise ValueError(f"tree {t} has multiway nodes (one child per category): Treelite's "
                             "trees are binary; fit with categorical_split='subset' or "
                             "'one_vs_rest' to export")
        table = estimator._node_proba() if classifier else tree.value
        categories = _categories(estimator)
        numbers = {}  # each categorical feature's category values, checked once
        threshold = _value_thresholds(estimator)
        builder.start_tree()
        for node in range(tree.node_count):
            builder.start_node(node)
            left, right = int(tree.children_left[node]), int(tree.children_right[node])
            if left == TREE_LEAF:
                row = table[node]
                builder.leaf([float(v) for v in row] if classifier else float(row[0]))
            elif tree.split_kind[node] == SPLIT_THRESHOLD:
                builder.numerical_test(int(tree.feature[node]), float(threshold[node]),
                                       default_left=bool(tree.missing_left[node]), opname="<=",
                                       left_child_key=left, right_child_key=right)
            else:
                codes = _subset_codes(tree, node)
                missing_left = bool(tree.missing_left[node])
                if missing_left:  # list what goes right: every other value goes left
                    m = int(tree.n_categories[tree.feature[node]])
                    codes = np.setdiff1d(np.arange(m), codes)
                feature = int(tree.feature[node])
                if feature not in numbers:
                    numbers[feature] = _category_numbers(categories[feature], feature)
                listed = codes if numbers[feature] is None else numbers[feature][codes]
                builder.categorical_test(feature, default_left=missing_left,
                                         category_list=[int(c) for c in listed],
                                         category_list_right_child=missing_left,
                                         left_child_key=left, right_child_key=right)
            builder.end_node()
        builder.end_tree()
    return builder.commit()
