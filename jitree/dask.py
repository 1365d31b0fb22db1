"""Lazy prediction of a fitted jitree estimator on Dask arrays and DataFrames, and training
of a forest's trees on the workers of a ``dask.distributed`` cluster.

``import jitree.dask`` (not done by ``import jitree``), then::

    labels = jitree.dask.predict(model, X)          # X: dask Array or dask DataFrame
    proba = jitree.dask.predict_proba(model, X)
    bounds = jitree.dask.predict_quantiles(model, X, [0.05, 0.95])  # store_leaf_samples=True
    leaves = jitree.dask.apply(model, X)
    forest = jitree.dask.fit_forest(jitree.RandomForestClassifier(random_state=0), X, y,
                                    client)         # X, y: in memory, or dask collections
                                                    # whose partitions stay on the workers

Nothing is computed until the result is; each block or partition is predicted by
``model.predict`` (``predict_proba``, ``apply``) wherever Dask runs it, a local thread pool or
the workers of a ``dask.distributed`` cluster. The fitted model enters the task graph once, as
a single key: a fitted estimator pickles to its parameters and the tree's node arrays (44
bytes per node, plus 8 per class), never to the prediction layouts a Tree caches once it has
predicted.

Input and output:

* ``dask.array.Array`` (2-D, float or integer): chunked along rows; column chunks are merged
  into one. ``predict`` returns a 1-D array (``model.classes_.dtype`` for a classifier, float64
  for a regressor), ``predict_proba`` a 2-D float64 array ``(n, n_classes)``,
  ``predict_quantiles`` a float64 array ``(n, n_quantiles)`` (``(n,)`` for one number),
  ``apply`` a 1-D int64 array, all chunked along rows like ``X``.
* ``dask.dataframe.DataFrame``: columns are matched by name, like the estimators do for pandas.
  For a model with categorical or ordinal features, each partition is passed to the model as a
  DataFrame, so that ``category`` (known or unknown categories), string and numeric columns are
  encoded by value by the estimator, as in memory; other models get ``partition.to_numpy()``.
  The results keep the DataFrame's index and partitions, so they can be assigned as columns
  (``df["label"] = jitree.dask.predict(model, df[features])``): ``predict`` and ``apply``
  return a dask Series (dtype: pandas' own for ``model.classes_``, so ``str`` for string labels
  under pandas 3), ``predict_proba`` a dask DataFrame with one float64 column per class, named
  by the class, ``predict_quantiles`` one float64 column per quantile, named by the quantile
  (a Series for one number). ``.to_dask_array(lengths=True)`` turns them into arrays.
* A multi-output model (fitted on y of k columns) predicts as in memory: ``predict`` gives a
  2-D array ``(n, k)`` (a DataFrame with columns ``0 ... k-1``, each of its output's dtype),
  ``predict_proba`` a list of k arrays (DataFrames, columns named by the output's classes).
  The k results of ``predict_proba`` come from one task per block: computing them together
  (``dask.compute(*proba)``) predicts each block once.

Errors come as early as the information allows: an unfitted model raises the estimator's
``NotFittedError`` and a column count or set of column names that does not fit the model a
``ValueError`` when the graph is built, as do column dtypes that do not fit the features
(a ``TypeError``); a column count Dask does not know yet (NaN chunks), and the values of
columns whose categories Dask does not know, are checked by the estimator when the block is
computed.

Each block is predicted with the model's ``n_jobs`` threads (None: all cores of the machine).
On a cluster running several worker processes or threads per machine, ``n_jobs=1`` avoids
running more threads than cores.
"""

import copy
import dataclasses
import sys
import uuid
import warnings

try:
    import dask
    import dask.array as da
except ImportError:
    raise ImportError("jitree.dask needs dask: install the 'dask' extra "
                      "(pip install 'jitree[dask]')") from None

import numpy as np

from .model._base import BaseDecisionTree, _check_float, _check_int
from .model._params import clone
from .model.classifier import output_bounds, prediction_dtype, side_by_side
from .model.forest import BaseForest, _grow_trees, _Rows
from .model.validation import (
    NO_WEIGHT,
    check_is_fitted,
    check_sample_weight,
    check_X,
    feature_names_of,
    match_feature_names,
    user_stacklevel,
    warn_column_vector,
)

__all__ = ["apply", "fit_forest", "predict", "predict_proba", "predict_quantiles"]


def predict(model, X):
    """Lazy ``model.predict(X)`` for a dask Array or DataFrame ``X`` (see the module doc)."""
    return _map(model, X, "predict")


def predict_proba(model, X):
    """Lazy ``model.predict_proba(X)`` for a dask Array or DataFrame ``X`` (classifiers)."""
    if getattr(model, "_task", None) == "regression":
        raise AttributeError(f"{type(model).__name__} has no predict_proba: it is a regressor")
    return _map(model, X, "predict_proba")


def predict_quantiles(model, X, quantiles=0.5):
    """Lazy ``model.predict_quantiles(X, quantiles)`` for a dask Array or DataFrame ``X``
    (regressors fitted with ``store_leaf_samples=True``; their leaf samples travel with the
    model to the workers)."""
    from .model.leaf_samples import check_quantiles, stored

    if not hasattr(model, "predict_quantiles"):
        raise AttributeError(f"{type(model).__name__} has no predict_quantiles: it is not a "
                             "regressor")
    values, scalar = check_quantiles(quantiles)
    check_is_fitted(model, "estimators_" if isinstance(model, BaseForest) else "tree_")
    stored(model)
    return _map(model, X, "predict_quantiles", (values.tolist(), scalar))


def apply(model, X):
    """Lazy ``model.apply(X)``: the tree id of the leaf each row of ``X`` reaches."""
    return _map(model, X, "apply")


def fit_forest(estimator, X, y, client=None, sample_weight=None, n_groups=None,
               group_share=None):
    """Grow the trees of a jitree forest on the workers of a ``dask.distributed`` cluster,
    one task per group of trees, from X and y in memory on the client or spread over the
    workers as dask collections. Returns ``estimator``, fitted.

    ``estimator``: a RandomForestClassifier, RandomForestRegressor, ExtraTreesClassifier or
    ExtraTreesRegressor (fitted or not; refitted like ``fit`` does, ``warm_start`` included:
    a warm start grows only the new trees on the cluster). ``client``: the
    ``distributed.Client`` to use (None: the current one). ``n_groups``: number of tasks
    (None: one per worker thread of the cluster; at most ``n_estimators``, and for dask
    collections at most the number of non-empty partitions); each task presorts its rows
    once and grows a contiguous range of the trees, with ``n_jobs`` threads of the estimator
    (None: all the cores numba sees in the worker's process). On a machine running several
    worker processes or threads, set ``n_jobs`` to its cores divided by them to avoid running
    more threads than cores. ``group_share``: for dask collections, the least share of the
    rows each group holds (see below). The trees come back to the client (a tree pickles to
    its node arrays only), where the fitted attributes are set as ``fit`` sets them.

    **X in memory** (NumPy arrays or pandas, as for ``fit``, with categorical / ordinal
    features and missing values as ``fit`` takes them; ``y`` and ``sample_weight`` in memory
    too). X is validated and encoded on the client, then sent once to every worker
    (``client.scatter(..., broadcast=True)``), so each worker holds one copy of X, whatever
    its number of tasks; every tree draws its bag from all the rows (whatever
    ``group_share``). With an int
    ``random_state`` the forest is identical to ``estimator.fit(X, y, sample_weight)``: same
    trees, same predictions, same ``oob_score_``, whatever the grouping. Each tree is grown
    from its own seed, and all seeds are drawn once on the client before any tree grows, so
    with ``random_state=None`` (or a numpy generator) the forest is just as consistent, but a
    second call draws other seeds.

    **X a dask collection**: a 2-D ``dask.array.Array`` (rows in chunks; column chunks are
    merged) or a ``dask.dataframe.DataFrame`` of numeric columns; ``y`` (and
    ``sample_weight``, if given) a 1-D dask Array or a dask Series cut into as many
    partitions, of the same lengths (arrays of known chunk sizes are rechunked like X). The
    partitions are computed on the workers and stay there; the client only receives a small
    summary of each (row count, which features hold NaN, labels and their counts) and the
    grown trees. How the trees are grown:

    * The forest's classes, features (``n_features_in_``, ``feature_names_in_`` from the
      DataFrame's columns), missing-value mask and ``class_weight="balanced"`` factors are
      those of all of X and y, from the summaries.
    * The non-empty partitions are shuffled (a generator seeded by the first tree's seed)
      and dealt to ``n_groups`` groups, each to the group with the fewest rows so far; a
      group keeps its partitions in their order. The trees are split into ``n_groups``
      contiguous ranges, as evenly as possible, one per group.
    * ``group_share`` (a float in (0, 1]; None: each partition in one group): each group is
      then given more partitions, drawn at random from the other groups' (by the same
      generator), until it holds at least that share of all the rows. Groups overlap, and
      each tree sees more of the rows, at the price of memory and of the partitions' moves:
      ``group_share=1.0`` gives every group all the partitions.
    * Each group's task concatenates its partitions on a worker (partitions held by others
      are sent to it, worker to worker) and grows its trees exactly as ``fit`` would on those
      rows alone, with the forest's seeds, classes and features: each tree's bootstrap bag is
      drawn from the group's rows (``max_samples``: of the group's rows or weight), and
      fractions of ``min_samples_leaf`` / ``min_samples_split`` are of the group's rows.

    So the forest is not the one ``fit`` grows on all of X: each tree sees one group's share
    of the rows (with one group or ``group_share=1.0``, it is ``fit`` on the partitions
    concatenated in order). A tree grown on fewer rows is less accurate where the data has
    more to learn than its share shows: on the three classes without label noise of
    ``python -m jitree.bench --only dask-fit`` (200k x 20, 8 partitions, a random forest of
    40 trees), held-out accuracy was 1.31 points below the forest grown on all the rows in 2
    groups (0.74 with ``group_share=0.75``; 1.0 grows the same forest) and 3.31 points in 4
    groups (1.30 with ``group_share=0.5``). With an int
    ``random_state`` it is reproducible for the same partitioning, ``n_groups`` and
    ``group_share``. All of X is held in the workers' memory during the fit (each partition
    once, plus each group's concatenation while its task runs: about ``n_groups`` times
    ``group_share`` times X's bytes when the groups run at once) and released after it.

    Refused with dask collections, as they need every row in one place: ``oob_score=True``
    and ``store_leaf_samples=True`` (``ValueError``), categorical and ordinal features
    (``categorical_features``, ``ordinal_features``, or non-numeric columns: ``TypeError``).
    A forest grown this way has no ``estimators_samples_`` (its bags are not rows of X).
    """
    _check_forest(estimator)
    if n_groups is not None:
        n_groups = _check_int("n_groups", n_groups, 1)
    if group_share is not None:
        group_share = _check_float("group_share", group_share, 0.0, 1.0, low_open=True)
    if any(dask.is_dask_collection(value) for value in (X, y, sample_weight)):
        return _fit_forest_on_partitions(estimator, X, y, client, sample_weight, n_groups,
                                         group_share)
    client = _current_client(client)
    plan, X, target, sample_weight = estimator._prepare_fit(X, y, sample_weight)
    if n_groups is None:
        n_groups = max(1, sum(client.nthreads().values()))
    new_trees = np.arange(plan.n_kept, plan.n_estimators)  # all but a warm start's kept trees
    groups = np.array_split(new_trees, min(n_groups, new_trees.shape[0])) \
        if new_trees.shape[0] else []
    # Keys of their own (hash=False): under content keys, a second call on the same data would
    # reuse keys the first call's futures are still releasing, and lose them.
    shared = client.scatter([X, target, sample_weight], broadcast=True, hash=False)
    # One random name per call: tasks of two calls never share results, and the dashboard
    # shows them as "jitree-grow-trees".
    call = uuid.uuid4().hex
    futures = [client.submit(_grow_trees, plan, *shared, group.tolist(), estimator.n_jobs,
                             key=f"jitree-grow-trees-{call}-{index}")
               for index, group in enumerate(groups)]
    trees = [tree for group_trees in client.gather(futures) for tree in group_trees]
    return estimator._finish_fit(plan, trees, X, target, sample_weight)


def _check_forest(estimator):
    if not isinstance(estimator, BaseForest):
        name = type(estimator).__name__
        if isinstance(estimator, BaseDecisionTree):
            raise TypeError(f"jitree.dask.fit_forest trains forests, got a single {name}: "
                            "fit it in memory with estimator.fit(X, y)")
        raise TypeError("jitree.dask.fit_forest expects a jitree forest (RandomForestClassifier,"
                        " RandomForestRegressor, ExtraTreesClassifier or ExtraTreesRegressor), "
                        f"got {name}")


def _current_client(client):
    try:
        import distributed
    except ImportError:
        raise ImportError("jitree.dask.fit_forest needs distributed: install the 'dask' "
                          "extra (pip install 'jitree[dask]')") from None
    if client is not None:
        return client
    try:
        return distributed.get_client()
    except ValueError:
        raise ValueError("jitree.dask.fit_forest needs a dask.distributed cluster: pass "
                         "client=, or create a distributed.Client first") from None


# -- training on partitions ---------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class _Partitions:
    """The training data as the delayed objects of its partitions (``X``, ``y`` and
    ``sample_weight`` lists of equal length; ``sample_weight`` None without weights) and
    ``meta``, a one-row in-memory stand-in of X with its columns and dtypes."""

    X: list
    y: list
    sample_weight: list | None
    meta: object


@dataclasses.dataclass(frozen=True)
class _PartSummary:
    """What the client learns of one partition: its row count, which features hold NaN,
    its labels (sorted) and their row counts (classifiers), and its weights' range and sum."""

    n_rows: int
    nan_features: np.ndarray | None
    classes: np.ndarray | None
    class_counts: np.ndarray | None
    min_weight: float
    max_weight: float
    total_weight: float


def _fit_forest_on_partitions(estimator, X, y, client, sample_weight, n_groups, group_share):
    """:func:`fit_forest` for dask collections (see its docstring): summaries of the
    partitions, the plan on the client, each group's trees grown where its rows are."""
    if estimator.oob_score:
        raise ValueError("jitree.dask.fit_forest cannot compute oob_score=True from dask "
                         "partitions (every row's out-of-bag prediction needs all the trees "
                         "and all of X in one place): set oob_score=False, or pass X and y in "
                         "memory")
    if getattr(estimator, "store_leaf_samples", False):
        raise ValueError("jitree.dask.fit_forest cannot store_leaf_samples=True from dask "
                         "partitions (the leaf samples index all of X): set "
                         "store_leaf_samples=False, or pass X and y in memory")
    if len(getattr(y, "shape", ())) == 2 and y.shape[1] == 1:
        warn_column_vector()  # as a forest fitted in memory does
        y = y[y.columns[0]] if hasattr(y, "columns") else y[:, 0]
    if len(getattr(y, "shape", ())) == 2:
        raise ValueError("jitree.dask.fit_forest takes a multi-output y (several columns) in "
                         "memory only: pass X and y as arrays, or one output as a dask Series "
                         "or 1-D array")
    parts = _partitions(X, y, sample_weight)
    client = _current_client(client)
    template = estimator._tree_template()
    template._validate_fit_X(parts.meta)
    if not template._encoder.is_trivial:
        raise TypeError("jitree.dask.fit_forest takes numeric features only from dask "
                        "collections (categorical or ordinal features need their categories "
                        "learnt from all of X): set categorical_features=None, "
                        "ordinal_features=None and give numeric columns, or pass X in memory")
    settings = estimator._fit_settings()
    worker_estimator = clone(estimator)
    call = uuid.uuid4().hex
    n_parts = len(parts.X)
    weights = parts.sample_weight or [None] * n_parts
    # computed once, kept on the workers for the summaries and the growth, released after
    futures = client.compute(parts.X + parts.y + (parts.sample_weight or []))
    X_parts, y_parts = futures[:n_parts], futures[n_parts:2 * n_parts]
    weight_parts = futures[2 * n_parts:] or weights
    try:
        summaries = client.gather(client.map(
            _summarise_part, X_parts, y_parts, weight_parts, template=template,
            estimator=worker_estimator,
            key=[f"jitree-summarise-{call}-{index}" for index in range(n_parts)]))
        plan = _partitioned_plan(estimator, settings, template, summaries)
        new_trees = np.arange(plan.n_kept, plan.n_estimators)
        filled = [index for index, summary in enumerate(summaries) if summary.n_rows]
        if n_groups is None:
            n_groups = max(1, sum(client.nthreads().values()))
        n_groups = min(n_groups, new_trees.shape[0], len(filled))
        groups = _deal_partitions(filled, [summaries[i].n_rows for i in filled], n_groups,
                                  plan.seeds[0], group_share) if n_groups else []
        futures_of_groups = [
            client.submit(_grow_part, plan, worker_estimator, trees.tolist(), estimator.n_jobs,
                          [X_parts[i] for i in group], [y_parts[i] for i in group],
                          [weight_parts[i] for i in group],
                          key=f"jitree-grow-trees-{call}-{index}")
            for index, (group, trees) in enumerate(zip(
                groups, np.array_split(new_trees, n_groups) if n_groups else [],
                strict=True))]
        grown = client.gather(futures_of_groups)
    finally:
        for future in futures:  # the partitions leave the workers' memory
            future.release()
    trees = [tree for group_trees, _ in grown for tree in group_trees]
    part_plans = [part_plan for group_trees, part_plan in grown for _ in group_trees]
    return estimator._finish_fit(plan, trees, None, None, None, part_plans)


def _partitions(X, y, sample_weight):
    """The :class:`_Partitions` of dask collections X, y and sample_weight, checked to be
    cut alike (their lengths are checked on the workers)."""
    dataframe_type = _dask_dataframe_type()
    for name, value in (("X", X), ("y", y)):
        if not dask.is_dask_collection(value):
            raise TypeError(f"jitree.dask.fit_forest got a dask collection and {name} in "
                            f"memory: give X, y (and sample_weight) all as dask collections, "
                            "partitioned alike, or all in memory")
    if sample_weight is not None and not dask.is_dask_collection(sample_weight):
        raise TypeError("jitree.dask.fit_forest got X as a dask collection and sample_weight "
                        "in memory: give sample_weight as a dask Array or Series partitioned "
                        "like X")
    if isinstance(X, da.Array):
        if X.ndim != 2:
            raise ValueError(f"Expected a 2-D dask array for X, got {X.ndim}-D with shape "
                             f"{X.shape}")
        if np.isnan(X.shape[1]):
            raise ValueError("X has an unknown number of columns; call "
                             "X.compute_chunk_sizes() first")
        X = X.rechunk({1: -1})
        meta = np.zeros((1, X.shape[1]), dtype=X.dtype)
        X_parts = list(X.to_delayed()[:, 0])
        y_parts, weight_parts = (
            None if value is None else _array_parts(name, value, X.chunks[0])
            for name, value in (("y", y), ("sample_weight", sample_weight)))
        return _Partitions(X=X_parts, y=y_parts, sample_weight=weight_parts, meta=meta)
    if dataframe_type is not None and isinstance(X, dataframe_type):
        return _frame_partitions(X, y, sample_weight)
    kind = type(X).__module__.split(".")[0] + "." + type(X).__qualname__
    raise TypeError("jitree.dask.fit_forest expects X as a 2-D dask Array or a dask "
                    f"DataFrame, got {kind}")


def _array_parts(name, values, row_chunks):
    """The delayed blocks of the 1-D dask Array ``values`` (y or sample_weight), rechunked
    to X's ``row_chunks`` when both are known."""
    if not isinstance(values, da.Array):
        raise TypeError(f"jitree.dask.fit_forest expects {name} as a 1-D dask Array when X is "
                        f"a dask Array, got {type(values).__name__}")
    if values.ndim != 1:
        raise ValueError(f"{name} should be a 1-D dask array, got shape {values.shape}")
    if values.chunks[0] != row_chunks:
        if any(np.isnan(row_chunks)) or any(np.isnan(values.chunks[0])):
            raise ValueError(f"X and {name} have row chunks of unknown sizes that may differ; "
                             "call compute_chunk_sizes() on both first")
        if sum(values.chunks[0]) != sum(row_chunks):
            raise ValueError(f"X and {name} have inconsistent numbers of samples: X has "
                             f"{sum(row_chunks)}, {name} has {sum(values.chunks[0])}")
        values = values.rechunk((row_chunks,))
    return list(values.to_delayed())


def _frame_partitions(X, y, sample_weight):
    """The partitions of a dask DataFrame X with y (and sample_weight) as columns, joined
    by ``X.assign`` (aligned as Dask aligns columns): one read of the data gives the three
    parts of each partition, however Dask's optimiser merges partitions."""
    import operator

    series_type = sys.modules["dask.dataframe"].Series
    extra = {}
    for name, value in (("y", y), ("sample_weight", sample_weight)):
        if value is None:
            continue
        if not isinstance(value, series_type):
            raise TypeError(f"jitree.dask.fit_forest expects {name} as a dask Series when X "
                            f"is a dask DataFrame, got {type(value).__name__}")
        extra[f"_jitree_{name}_{uuid.uuid4().hex}"] = value
    frame = X.assign(**extra)
    columns = list(X.columns)
    parts = frame.to_delayed()
    pick = dask.delayed(operator.getitem, pure=True)
    y_name, weight_name = (list(extra) + [None])[:2]
    return _Partitions(
        X=[pick(part, columns) for part in parts], y=[pick(part, y_name) for part in parts],
        sample_weight=None if weight_name is None else [pick(part, weight_name)
                                                        for part in parts],
        meta=X._meta_nonempty)


def _partitioned_plan(estimator, settings, template, summaries):
    """The forest's plan from the partitions' summaries: the classes, class counts,
    missing-value mask and weights of all the rows (the grow parameters and bootstrap size
    of each group are set by :meth:`~jitree.model.forest.BaseForest._part_plan`)."""
    n_samples = sum(summary.n_rows for summary in summaries)
    if n_samples == 0:
        raise ValueError("Found array with 0 sample(s) (X's partitions are all empty) while a "
                         "minimum of 1 is required.")
    filled = [summary for summary in summaries if summary.n_rows]
    n_features = template.missing_values_in_feature_mask_.shape[0]
    template.missing_values_in_feature_mask_ = np.logical_or.reduce(
        [summary.nan_features for summary in filled])
    if estimator._task == "classification":
        classes = np.unique(np.concatenate([summary.classes for summary in filled]))
        counts = np.zeros(classes.shape[0], dtype=np.int64)
        for summary in filled:
            counts[np.searchsorted(classes, summary.classes)] += summary.class_counts
        # as _encode_target: one statistic per class
        n_stats, n_classes = classes.shape[0], classes.shape[0]
    else:
        classes, counts, n_stats, n_classes = None, None, 2, 0
    if settings["n_kept"]:
        estimator._check_warm_data(template, n_features, classes)
    total_weight = sum(summary.total_weight for summary in filled)
    if not total_weight > 0:
        raise ValueError(NO_WEIGHT)
    rows = _Rows(n_samples=n_samples, n_bootstrap=estimator._n_bootstrap(n_samples, total_weight),
                 total_weight=total_weight,
                 weighted_draw=min(s.min_weight for s in filled) < max(s.max_weight
                                                                        for s in filled))
    class_factors = estimator._class_factors(classes, None, None, counts)
    return estimator._plan(settings, template, rows, dict(
        n_features=n_features, n_stats=n_stats, n_classes=n_classes, classes=classes,
        class_factors=class_factors))


def _deal_partitions(indices, n_rows, n_groups, seed, share=None):
    """Partitions ``indices`` (of ``n_rows`` rows each) in ``n_groups`` groups: shuffled with
    ``seed``, each dealt to the group with the fewest rows so far; then, with a ``share``,
    each group given more of the others' partitions (each group in its own random order,
    from the same generator) until it holds at least ``share`` of all the rows; each group
    sorted."""
    rng = np.random.default_rng(int(seed))
    order = rng.permutation(len(indices))
    groups, sizes = [[] for _ in range(n_groups)], np.zeros(n_groups, dtype=np.int64)
    for position in order:
        smallest = int(np.argmin(sizes))
        groups[smallest].append(position)
        sizes[smallest] += n_rows[position]
    if share is not None:
        wanted = share * float(np.sum(n_rows))
        for group, size in zip(groups, sizes.tolist(), strict=True):
            held = set(group)
            for position in rng.permutation(len(indices)).tolist():
                if size >= wanted:
                    break
                if position not in held:
                    group.append(position)
                    size += n_rows[position]
    return [sorted(indices[position] for position in group) for group in groups]


# -- graph construction ------------------------------------------------------------------------

def _dask_dataframe_type():
    # A dask DataFrame can only exist once dask.dataframe is imported, so an array user never
    # pays for importing pandas and pyarrow here.
    module = sys.modules.get("dask.dataframe")
    return None if module is None else module.DataFrame


def _map(model, X, method, quantiles=None):
    is_forest = isinstance(model, BaseForest)
    if not isinstance(model, BaseDecisionTree) and not is_forest:
        raise TypeError(f"jitree.dask.{method} expects a fitted jitree estimator, got "
                        f"{type(model).__name__}")
    if is_forest and method == "apply":
        raise TypeError("jitree.dask.apply takes a single tree; apply it to each of the "
                        "forest's estimators_")
    check_is_fitted(model, "estimators_" if is_forest else "tree_")
    dataframe_type = _dask_dataframe_type()
    if isinstance(X, da.Array):
        X = _prepare_array(model, X)
    elif dataframe_type is not None and isinstance(X, dataframe_type):
        X = _prepare_dataframe(model, X)
    else:
        kind = type(X).__module__.split(".")[0] + "." + type(X).__qualname__
        hint = (" (a dask Series is 1-D: use series.to_frame())" if kind.startswith("dask.")
                else f"; for data in memory call model.{method}(X)")
        raise TypeError(f"jitree.dask.{method} expects a 2-D dask Array or a dask DataFrame, "
                        f"got {kind}{hint}")
    # The column names were matched above and the blocks are passed without names, so the
    # shipped copy must not check (or warn about) names again on every block. (A model with
    # categorical features gets DataFrame partitions with its own names: it keeps them, so
    # that its messages name the columns.)
    keep_names = not isinstance(X, da.Array) and _has_categories(model)
    shipped = copy.copy(model)
    shipped.__dict__.pop("_quantile_layout", None)  # derived: rebuilt where it predicts
    if not keep_names:
        shipped.__dict__.pop("feature_names_in_", None)
    if is_forest:
        # the concatenated layout is rebuilt on each worker: it is larger than the trees
        shipped._layouts = {}
        shipped.estimators_ = [copy.copy(tree) for tree in model.estimators_]
        for tree in shipped.estimators_:
            if not keep_names:
                tree.__dict__.pop("feature_names_in_", None)
    model_key = dask.delayed(shipped, pure=True)
    if isinstance(X, da.Array):
        return _map_array(model, X, model_key, method, quantiles)
    return _map_dataframe(model, X, model_key, method, quantiles)


def _first_tree(model):
    return model.estimators_[0] if isinstance(model, BaseForest) else model


def _has_categories(model):
    """Whether the model has categorical or ordinal features (its input is then encoded by
    value, not converted to float)."""
    return not _first_tree(model)._feature_encoder().is_trivial


def _features_mismatch(model, n_columns):
    return ValueError(f"X has {n_columns} features, but {type(model).__name__} is expecting "
                      f"{model.n_features_in_} features as input.")


def _prepare_array(model, X):
    if X.ndim != 2:
        raise ValueError(f"Expected a 2-D dask array for X, got {X.ndim}-D with shape "
                         f"{X.shape}")
    # The estimator's dtype rules (and messages), applied to one row of X's dtype; strings
    # and objects may hold the categories of a categorical model.
    if not (X.dtype.kind in "OUS" and _has_categories(model)):
        check_X(np.zeros((1, 1), dtype=X.dtype))
    n_columns = X.shape[1]
    if not np.isnan(n_columns) and n_columns != model.n_features_in_:
        raise _features_mismatch(model, n_columns)
    if X.numblocks[1] > 1:
        if np.isnan(n_columns):
            raise ValueError("X has several column chunks of unknown size; call "
                             "X.compute_chunk_sizes() first")
        X = X.rechunk({1: -1})
    if getattr(model, "feature_names_in_", None) is not None:
        warnings.warn(f"X does not have valid feature names, but {type(model).__name__} was "
                      "fitted with feature names", UserWarning, stacklevel=user_stacklevel())
    return X


def _prepare_dataframe(model, X):
    reordered = match_feature_names(model, getattr(model, "feature_names_in_", None),
                                    feature_names_of(X._meta))
    if reordered is not None:
        X = X[reordered]
    if len(X.columns) != model.n_features_in_:
        raise _features_mismatch(model, len(X.columns))
    if _has_categories(model):
        _check_categorical_meta(model, X)
    else:
        # The estimator's column dtype rules (and messages), on Dask's stand-in rows, whose
        # values stand for nothing (a nullable column's stand-in holds a missing value, which
        # predict accepts)
        check_X(X._meta_nonempty, allow_nan=True)
    return X


def _check_categorical_meta(model, X):
    """The estimator's encoding rules (and messages) on Dask's one-row stand-in of X, where
    it stands for the data: object columns (any values) and ``category`` columns of unknown
    categories become missing values, which every feature accepts."""
    from dask.dataframe.utils import has_known_categories

    meta = X._meta_nonempty
    unknown = [name for name, dtype in meta.dtypes.items()
               if (getattr(dtype, "name", None) == "category"
                   and not has_known_categories(X._meta[name]))
               or (isinstance(dtype, np.dtype) and dtype.kind == "O")]
    if unknown:
        meta = meta.astype(dict.fromkeys(unknown, object))
        meta[unknown] = None
    _first_tree(model)._validate_predict_X(meta, by_position=True)


def _partition_columns(model):
    """None: partitions are predicted as ``to_numpy()``; else (a model with categorical
    features) the column names a partition is given for the model: its own, or positions."""
    if not _has_categories(model):
        return None
    names = getattr(model, "feature_names_in_", None)
    return list(range(model.n_features_in_)) if names is None else list(names)


def _output_dtype(model, method):
    if method in ("predict_proba", "predict_quantiles"):
        return np.dtype(np.float64)
    if method == "apply":
        return np.dtype(np.int64)
    return prediction_dtype(model)


def _n_outputs(model, method):
    """How many outputs ``method`` of ``model`` predicts: more than 1 for ``predict`` and
    ``predict_proba`` of a model fitted on y of several columns."""
    return 1 if method in ("apply", "predict_quantiles") else getattr(model, "n_outputs_", 1)


def _map_array(model, X, model_key, method, quantiles=None):
    dtype = _output_dtype(model, method)
    if method == "predict_quantiles":
        values, scalar = quantiles
        argument = values[0] if scalar else values
        if scalar:
            return da.map_blocks(_predict_block, X, model_key, method, dtype, None, argument,
                                 drop_axis=1, chunks=(X.chunks[0],), dtype=dtype,
                                 meta=np.empty((0,), dtype=dtype))
        return da.map_blocks(_predict_block, X, model_key, method, dtype, len(values),
                             argument, chunks=(X.chunks[0], (len(values),)), dtype=dtype,
                             meta=np.empty((0, 0), dtype=dtype))
    n_outputs = _n_outputs(model, method)
    if method == "predict_proba":
        if n_outputs == 1:
            n_classes = model.classes_.shape[0]
            return da.map_blocks(_predict_block, X, model_key, method, dtype, n_classes,
                                 chunks=(X.chunks[0], (n_classes,)), dtype=dtype,
                                 meta=np.empty((0, 0), dtype=dtype))
        # the outputs' columns side by side, one task per block, then a view per output
        bounds = output_bounds(model.classes_)
        side_by_side = da.map_blocks(_predict_block, X, model_key, method, dtype, bounds[-1],
                                     chunks=(X.chunks[0], (bounds[-1],)), dtype=dtype,
                                     meta=np.empty((0, 0), dtype=dtype))
        return [side_by_side[:, start:stop]
                for start, stop in zip(bounds[:-1], bounds[1:], strict=True)]
    if n_outputs > 1:
        return da.map_blocks(_predict_block, X, model_key, method, dtype, n_outputs,
                             chunks=(X.chunks[0], (n_outputs,)), dtype=dtype,
                             meta=np.empty((0, 0), dtype=dtype))
    return da.map_blocks(_predict_block, X, model_key, method, dtype, None, drop_axis=1,
                         chunks=(X.chunks[0],), dtype=dtype, meta=np.empty((0,), dtype=dtype))


def _map_dataframe(model, X, model_key, method, quantiles=None):
    import pandas as pd

    dtype = _output_dtype(model, method)
    if method == "predict_quantiles" and not quantiles[1]:
        columns = pd.Index(quantiles[0])
        meta = pd.DataFrame(np.empty((0, columns.shape[0])), columns=columns,
                            index=X._meta.index)
        return X.map_partitions(_predict_partition_quantiles, model_key, columns,
                                _partition_columns(model), meta=meta)
    n_outputs = _n_outputs(model, method)
    if method == "predict_proba":
        if n_outputs > 1:
            return _map_dataframe_outputs_proba(model, X, model_key)
        # Built once here and used for the meta and every partition, so that they agree.
        columns = pd.Index(model.classes_)
        meta = pd.DataFrame(np.empty((0, columns.shape[0])), columns=columns,
                            index=X._meta.index)
        return X.map_partitions(_predict_partition_proba, model_key, columns,
                                _partition_columns(model), meta=meta)
    if n_outputs > 1:
        # one column per output (named 0, 1, ...), each of its labels' pandas dtype
        labels = model.classes_ if model._task == "classification" \
            else [np.empty(0)] * n_outputs
        series_dtypes = [pd.Series(output_labels).dtype for output_labels in labels]
        meta = pd.DataFrame({j: pd.Series(dtype=series_dtype)
                             for j, series_dtype in enumerate(series_dtypes)},
                            index=X._meta.index)
        return X.map_partitions(_predict_partition_outputs, model_key, dtype, series_dtypes,
                                _partition_columns(model), meta=meta)
    # pandas' dtype for these labels (pandas 3: "str" for strings), stated explicitly so that
    # an empty partition and a full one agree with each other and with the meta.
    labels = model.classes_ if method == "predict" and model._task == "classification" \
        else np.empty(0, dtype=dtype)
    series_dtype = pd.Series(labels).dtype
    meta = pd.Series(np.empty(0, dtype=dtype), index=X._meta.index, dtype=series_dtype)
    argument = () if quantiles is None else (quantiles[0][0],)
    return X.map_partitions(_predict_partition, model_key, method, dtype, series_dtype,
                            _partition_columns(model), argument, meta=meta)


def _map_dataframe_outputs_proba(model, X, model_key):
    """A multi-output classifier's probabilities: a list of one dask DataFrame per output,
    columns named by its classes, all read from one DataFrame of the outputs' columns side by
    side (columns 0, 1, ...: one task per partition)."""
    import pandas as pd

    bounds = output_bounds(model.classes_)
    positions = pd.RangeIndex(bounds[-1])
    meta = pd.DataFrame(np.empty((0, bounds[-1])), columns=positions, index=X._meta.index)
    side_by_side = X.map_partitions(_predict_partition_proba, model_key, positions,
                                    _partition_columns(model), meta=meta)
    return [side_by_side[list(range(start, stop))].rename(
                columns=dict(zip(range(start, stop), classes.tolist(), strict=True)))
            for start, stop, classes in zip(bounds[:-1], bounds[1:], model.classes_,
                                            strict=True)]


# -- on the workers ----------------------------------------------------------------------------

def _predict_block(block, model, method, dtype, n_columns, *args):
    """``method``'s predictions of one block; ``n_columns``: None for 1-D predictions, else
    their columns (a multi-output classifier's probabilities: every output's, side by
    side)."""
    # Filtering leaves empty blocks behind, which the estimator refuses (no samples).
    if block.shape[0] == 0:
        shape = (0,) if n_columns is None else (0, n_columns)
        return np.empty(shape, dtype=dtype)
    return side_by_side(getattr(model, method)(block, *args))


def _partition_block(partition, columns):
    """What the model predicts of a partition: its values, or for a model with categorical
    features the DataFrame itself (the estimator encodes categories by value), its columns
    renamed to ``columns``, since they were matched by name when the graph was built."""
    if columns is None:
        return partition.to_numpy()
    return partition.set_axis(columns, axis=1)


def _predict_partition(partition, model, method, dtype, series_dtype, columns=None,
                       args=()):
    import pandas as pd

    values = _predict_block(_partition_block(partition, columns), model, method, dtype, None,
                            *args)
    return pd.Series(values, index=partition.index, dtype=series_dtype)


def _predict_partition_outputs(partition, model, dtype, series_dtypes, columns=None):
    import pandas as pd

    values = _predict_block(_partition_block(partition, columns), model, "predict", dtype,
                            len(series_dtypes))
    return pd.DataFrame({j: pd.Series(values[:, j], index=partition.index, dtype=series_dtype)
                         for j, series_dtype in enumerate(series_dtypes)},
                        index=partition.index)


def _predict_partition_proba(partition, model, class_columns, columns=None):
    import pandas as pd

    values = _predict_block(_partition_block(partition, columns), model, "predict_proba",
                            np.float64, class_columns.shape[0])
    return pd.DataFrame(values, index=partition.index, columns=class_columns)


def _concatenated(parts):
    if len(parts) == 1:
        return parts[0]
    if hasattr(parts[0], "iloc"):
        import pandas as pd

        return pd.concat(parts)
    return np.concatenate(parts)


def _read_part(template, estimator, X_parts, y_parts, weight_parts):
    """The rows of some partitions concatenated and validated as ``fit`` validates X, y and
    sample_weight: ``(X, target, sample_weight, classes)``, target indexing ``classes`` (the
    partitions' own labels, sorted) for a classifier, the values for a regressor. Their
    weights may all be 0 (others' are not: :func:`_partitioned_plan` checks the total)."""
    X = copy.copy(template)._validate_fit_X(_concatenated(X_parts))
    n_rows = X.shape[0]
    target, _, _, classes = estimator._encode_target(_concatenated(y_parts), n_rows)
    weight = None if weight_parts[0] is None else _concatenated(weight_parts)
    return X, target, check_sample_weight(weight, n_rows, part=True), classes


def _summarise_part(X, y, weight, template, estimator):
    """The :class:`_PartSummary` of one partition (checked as ``fit`` checks its data)."""
    if len(X) == 0:
        if len(y) != 0 or (weight is not None and len(weight) != 0):
            raise ValueError(f"X and y have inconsistent numbers of samples in a partition: "
                             f"X has 0, y has {len(y)}")
        return _PartSummary(0, None, None, None, np.inf, -np.inf, 0.0)
    X, target, weight, classes = _read_part(template, estimator, [X], [y], [weight])
    counts = None if classes is None else np.bincount(target.astype(np.intp),
                                                      minlength=classes.shape[0])
    return _PartSummary(n_rows=X.shape[0], nan_features=np.isnan(X).any(axis=0),
                        classes=classes, class_counts=counts,
                        min_weight=float(weight.min()), max_weight=float(weight.max()),
                        total_weight=float(weight.sum()))


def _grow_part(plan, estimator, tree_indices, n_jobs, X_parts, y_parts, weight_parts):
    """Trees ``tree_indices`` of ``plan`` grown on these partitions' rows alone, and the plan
    they were grown with (:meth:`~jitree.model.forest.BaseForest._part_plan`)."""
    X, target, weight, classes = _read_part(plan.template, estimator, X_parts, y_parts,
                                            weight_parts)
    if classes is not None:  # the partitions' classes as indices into the forest's
        target = np.searchsorted(plan.classes, classes)[target.astype(np.intp)].astype(
            np.float64)
    part_plan = estimator._part_plan(plan, weight)
    return _grow_trees(part_plan, X, target, weight, tree_indices, n_jobs), part_plan


def _predict_partition_quantiles(partition, model, quantile_columns, columns=None):
    import pandas as pd

    values = _predict_block(_partition_block(partition, columns), model, "predict_quantiles",
                            np.float64, quantile_columns.shape[0],
                            quantile_columns.to_numpy().tolist())
    return pd.DataFrame(values, index=partition.index, columns=quantile_columns)
