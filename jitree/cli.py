"""The ``jitree`` command line: fit, predict (streamed), rules, show, demo.

Exit codes: 0 success, 1 an error in the data, the model file or the options' values (one
line on stderr, no traceback), 2 a usage error (unknown command or option).
"""

import argparse
import csv
import os
import sys
import time
from typing import NamedTuple

import numpy as np

from .batch import (
    _blank_fields,
    _is_arrow_string,
    _numbers_as_values,
    _text_as_numbers,
    _text_as_values,
)


# -- reading a whole table for fit -------------------------------------------------------------
class _Table(NamedTuple):
    """A training table: X float64 (object when a feature holds strings), y, the feature
    names (None for .npy) and the indices of the categorical and ordinal features."""

    X: np.ndarray
    y: np.ndarray
    names: list | None
    categorical: list
    ordinal: list


def _csv_feature(values, name, path):
    """(values, holds strings, is a category by type) of a CSV column: numbers when every
    non-blank field is one, else the text (blank fields None) as categories."""
    numbers = _text_as_numbers(values)
    if numbers is not None:
        return numbers, False, False
    return _text_as_values(values), True, True


def _arrow_feature(column, name, path):
    """(values, holds strings, is a category by type) of a pyarrow column: numbers and
    booleans as float64 (null: NaN), strings as an object array (null: None); a dictionary
    column is a category by type."""
    import pyarrow as pa
    import pyarrow.types as types

    category = types.is_dictionary(column.type)
    if category:
        column = column.cast(column.type.value_type)
    kind = column.type
    if (types.is_integer(kind) or types.is_floating(kind) or types.is_boolean(kind)
            or types.is_decimal(kind) or types.is_null(kind)):
        return column.cast(pa.float64()).to_numpy(), False, category
    if _is_arrow_string(kind):
        return column.to_numpy(), True, True
    raise ValueError(f"{path}: column {name!r} has type {column.type}; jitree reads numbers, "
                     "booleans and strings")


def _csv_target(values, name, path):
    blank = int(_blank_fields(np.asarray(values, dtype=str)).sum())
    if blank:
        raise ValueError(f"{path}: the target column {name!r} has {blank} empty fields; drop "
                         "those rows")
    numbers = _text_as_numbers(values)
    if numbers is not None and np.abs(numbers).max(initial=0.0) >= 2.0 ** 53:
        # integers that float64 cannot all tell apart: kept exact (class labels)
        try:
            return np.array([int(v) for v in values])
        except ValueError:  # not all integer literals (1e20, 2.5): numbers
            pass
    return numbers if numbers is not None else np.array([str(v) for v in values])


def _arrow_target(column, name, path):
    if column.null_count:
        raise ValueError(f"{path}: the target column {name!r} has {column.null_count} nulls; "
                         "drop those rows")
    values, text, _ = _arrow_feature(column, name, path)
    return np.array([str(v) for v in values]) if text else values


def _declared_columns(path, header, target, categorical, ordinal):
    """Check the --categorical / --ordinal columns against the file's header."""
    for option, columns in (("--categorical", categorical), ("--ordinal", ordinal)):
        for column in columns:
            if column not in header:
                raise ValueError(f"{option}: no column {column!r} in {path} (columns: "
                                 f"{header})")
            if column == target:
                raise ValueError(f"{option}: {column!r} is the target column")
    both = sorted(set(categorical) & set(ordinal))
    if both:
        raise ValueError(f"columns {both} are in both --categorical and --ordinal; choose one")


def _read_npy(path, target, categorical, ordinal):
    try:
        data = np.load(path, allow_pickle=False)
    except ValueError as error:
        raise ValueError(f"{path}: not a readable .npy file ({error})") from None
    if data.ndim != 2:
        raise ValueError(f"{path}: expected a 2-D array, got shape {data.shape}")
    n_columns = data.shape[1]

    def index(option, text):
        try:
            column = int(text)
        except ValueError:
            raise ValueError(f"{option} must be column indices for .npy data, got "
                             f"{text!r}") from None
        if not -n_columns <= column < n_columns:
            raise ValueError(f"{option} {column} is out of range for {n_columns} columns")
        return column % n_columns

    column = index("--target", target)
    categorical = [index("--categorical", text) for text in categorical]
    ordinal = [index("--ordinal", text) for text in ordinal]
    _declared_columns(path, list(range(n_columns)), column, categorical, ordinal)
    features = [j for j in range(n_columns) if j != column]
    return _Table(data[:, features].astype(np.float64), data[:, column], None,
                  [features.index(j) for j in categorical],
                  [features.index(j) for j in ordinal])


def _read_table(path, target, categorical=(), ordinal=()):
    """The training :class:`_Table` of a .csv, .parquet or .npy file.

    CSV and Parquet columns that are not numeric (and dictionary-encoded Parquet columns) are
    categorical features, as are the ``categorical`` names; the ``ordinal`` names are ordinal
    features (levels in sorted order). Empty CSV fields and Parquet nulls are missing values.
    Numeric-only files give a float64 X.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such file")
    extension = os.path.splitext(path)[1].lower()
    if extension == ".npy":
        return _read_npy(path, target, categorical, ordinal)
    if extension == ".csv":
        with open(path, newline="", encoding="utf-8-sig") as handle:  # (a byte-order mark)
            rows = [row for row in csv.reader(handle) if row]
        if not rows:
            raise ValueError(f"{path}: empty file")
        header, body = [name.strip() for name in rows[0]], rows[1:]
        if any(len(row) != len(header) for row in body):
            raise ValueError(f"{path}: rows do not all have {len(header)} fields")
        columns = {name: [row[j] for row in body] for j, name in enumerate(header)}
        read_feature, read_target = _csv_feature, _csv_target
    elif extension in (".parquet", ".pq"):
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise ImportError("reading Parquet needs pyarrow: pip install 'jitree[parquet]'") \
                from None
        table = pq.read_table(path)
        header = list(table.column_names)
        columns = {name: table.column(name) for name in header}
        read_feature, read_target = _arrow_feature, _arrow_target
    else:
        raise ValueError(f"{path}: unknown data format {extension!r} (use .npy, .csv or "
                         ".parquet)")
    from .model.validation import repeated_names

    repeated = repeated_names(header)
    if repeated:
        raise ValueError(f"{path}: several columns are named {repeated[0]!r}; column names "
                         "must be unique (features are matched by name)")
    if target not in columns:
        raise ValueError(f"{path}: no column {target!r} (columns: {header})")
    _declared_columns(path, header, target, categorical, ordinal)
    names = [name for name in header if name != target]
    features = [read_feature(columns[name], name, path) for name in names]
    y = read_target(columns[target], target, path)
    categorical_indices = [j for j, (name, (_, _, category)) in enumerate(zip(names, features,
                                                                              strict=True))
                           if name in categorical or (category and name not in ordinal)]
    ordinal_indices = [j for j, name in enumerate(names) if name in ordinal]
    # strings need an object X (where a categorical column of numbers has None for missing);
    # numbers alone, also those of categorical columns, stay float64
    text = any(text for _, text, _ in features)
    X = np.empty((y.shape[0], len(names)), dtype=object if text else np.float64)
    declared = set(categorical_indices) | set(ordinal_indices)
    for j, (values, _, _) in enumerate(features):
        numbers = values.dtype.kind == "f"
        X[:, j] = _numbers_as_values(values) if text and numbers and j in declared else values
    return _Table(X, y, names, categorical_indices, ordinal_indices)


def _is_regression(y, task):
    if task != "auto":
        return task == "regression"
    return y.dtype.kind == "f" and not np.all(np.isfinite(y) & (y == np.round(y)))


# -- commands ----------------------------------------------------------------------------------
def _fit(args):
    import jitree
    from jitree.model.persistence import save

    table = _read_table(args.data, args.target, args.categorical or [], args.ordinal or [])
    X, y, names = table.X, table.y, table.names
    regression = _is_regression(y, args.task)
    if not regression and y.dtype.kind == "f":
        y = y.astype(np.int64)
    params = dict(max_depth=args.max_depth, min_samples_leaf=args.min_samples_leaf,
                  max_leaf_nodes=args.max_leaf_nodes, ccp_alpha=args.ccp_alpha,
                  n_jobs=args.n_jobs, categorical_split=args.categorical_split)
    if args.criterion:
        params["criterion"] = args.criterion
    if args.honest:
        params["honest"] = True
    if args.random_state is not None:
        params["random_state"] = args.random_state
    if args.store_leaf_samples:
        if not regression:
            raise ValueError("--store-leaf-samples is for regression targets (quantiles)")
        params["store_leaf_samples"] = True
    if table.categorical:
        params["categorical_features"] = table.categorical
    if table.ordinal:
        params["ordinal_features"] = table.ordinal
    cls = jitree.DecisionTreeRegressor if regression else jitree.DecisionTreeClassifier
    start = time.perf_counter()
    model = cls(**params).fit(X, y)
    seconds = time.perf_counter() - start
    score = model.score(X, y)  # before the names are set: X is an array
    if names is not None:
        model.feature_names_in_ = np.array(names, dtype=object)
    save(model, args.output)
    kinds = ""
    if table.categorical or table.ordinal:
        kinds = (f" ({len(table.categorical)} categorical, {len(table.ordinal)} "
                 "ordinal)")
    print(f"{type(model).__name__}: {X.shape[0]} rows x {X.shape[1]} features{kinds}, "
          f"{model.tree_.node_count} nodes, depth {model.get_depth()}, fitted in "
          f"{seconds:.3f} s; training score {score:.4f}; saved to {args.output}")
    return 0


def _progress_bar(total, enabled):
    """A tqdm bar on stderr when tqdm is installed and wanted, else a silent callback."""
    if not enabled:
        return None, None
    try:
        from tqdm import tqdm
    except ImportError:
        return None, None
    bar = tqdm(total=total, unit="rows", unit_scale=True, file=sys.stderr, leave=False)
    seen = [0]

    def update(done, _total):
        bar.update(done - seen[0])
        seen[0] = done

    return update, bar


def _predict(args):
    from jitree.batch import _check_not_the_input, open_rows, predict_file
    from jitree.model.persistence import load

    _check_not_the_input(args.data, args.output)  # before the progress bar (predict_file too)
    if args.proba and args.quantiles is not None:
        raise ValueError("--proba and --quantiles are exclusive: choose one")
    model = load(args.model)
    names = getattr(model, "feature_names_in_", None)
    reader = open_rows(args.data, None if names is None else list(names))
    total = reader.n_rows
    reader.close()
    update, bar = _progress_bar(total, not args.quiet)
    start = time.perf_counter()
    try:
        method = "predict_proba" if args.proba else "predict"
        if args.quantiles is not None:
            method = "predict_quantiles"
        predict_file(model, args.data, args.output, chunk_rows=args.chunk_rows,
                     method=method, progress=update, quantiles=args.quantiles)
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - start
    rate = total / seconds if seconds > 0 else float("inf")
    print(f"{total} rows predicted in {seconds:.3f} s ({rate / 1e6:.2f} M rows/s); "
          f"written to {args.output}")
    return 0


def _rules(args):
    from jitree.model.persistence import load
    from jitree.model.rules import format_rules, rules

    print(format_rules(rules(load(args.model))), end="")
    return 0


def _show(args):
    import jitree
    from jitree.model.persistence import load

    model = load(args.model)
    tree = model.tree_
    print(f"{type(model).__name__}: {tree.node_count} nodes, {tree.n_leaves} leaves, "
          f"depth {tree.max_depth}, {tree.n_features} features")
    if hasattr(model, "classes_"):
        classes = model.classes_  # an array, or one per output
        shown = classes.tolist() if isinstance(classes, np.ndarray) \
            else [np.asarray(c).tolist() for c in classes]
        print(f"classes: {shown}")
    changed = {k: v for k, v in model.get_params().items()
               if v != type(model)().get_params()[k]}
    print(f"parameters: {changed or 'defaults'}")
    # the whole tree, thresholds to 4 decimals (export_text's defaults are scikit-learn's: 10
    # levels, 2 decimals)
    print(jitree.export_text(model, max_depth=None, decimals=4), end="")
    return 0


def _demo(args):
    import jitree
    from jitree.datasets import load_iris, make_classification_data

    X, y, names = load_iris()
    rng = np.random.default_rng(0)
    order = rng.permutation(X.shape[0])
    train, test = order[:100], order[100:]
    # the first fit and predict of a process compile the kernels (or load them from numba's
    # cache): timed apart from the fit itself
    start = time.perf_counter()
    jitree.DecisionTreeClassifier(max_depth=args.max_depth).fit(X[train], y[train]).score(
        X[test], y[test])
    compile_seconds = time.perf_counter() - start
    start = time.perf_counter()
    model = jitree.DecisionTreeClassifier(max_depth=args.max_depth).fit(X[train], y[train])
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    accuracy = model.score(X[test], y[test])
    predict_seconds = time.perf_counter() - start
    print("jitree demo: iris, 100 training flowers, 50 held out\n")
    print(jitree.export_text(model, feature_names=names, max_depth=None, decimals=4))
    print(f"test accuracy: {accuracy:.3f}")
    print(f"fit {fit_seconds * 1e3:.2f} ms, predict {predict_seconds * 1e3:.2f} ms; "
          f"compiling or loading the float64 kernels first: {compile_seconds:.2f} s "
          f"(compiled once, then loaded from numba's cache)\n")

    n_train, n_predict = args.train_rows, args.rows
    X, y = make_classification_data(n_train + n_predict, 20, n_classes=3, seed=1)
    X, y, X_new, y_new = X[:n_train], y[:n_train], X[n_train:], y[n_train:]
    start = time.perf_counter()
    jitree.DecisionTreeClassifier(min_samples_leaf=5).fit(X[:1000], y[:1000])
    compile_seconds = time.perf_counter() - start
    start = time.perf_counter()
    model = jitree.DecisionTreeClassifier(min_samples_leaf=5).fit(X, y)
    fit_seconds = time.perf_counter() - start
    print(f"synthetic: {n_train} x 20 float32 rows, 3 classes, min_samples_leaf=5: "
          f"{model.tree_.node_count} nodes, fitted in {fit_seconds:.3f} s "
          f"(compiling or loading the float32 kernels first: {compile_seconds:.2f} s)")
    model.predict(X_new[:1000])  # load the predict kernels before timing
    start = time.perf_counter()
    predicted = model.predict(X_new)
    predict_seconds = time.perf_counter() - start
    print(f"batch prediction: {n_predict} rows in {predict_seconds:.3f} s "
          f"({n_predict / predict_seconds / 1e6:.1f} M rows/s), accuracy "
          f"{np.mean(predicted == y_new):.3f}")
    return 0


def _positive_int(text):
    value = int(text)
    if not 1 <= value <= np.iinfo(np.int64).max:
        raise argparse.ArgumentTypeError(f"expected a positive integer (below 2**63), got "
                                         f"{text}")
    return value


def _column_list(text):
    columns = [column.strip() for column in text.split(",")]
    if not all(columns):
        raise argparse.ArgumentTypeError(f"expected COL[,COL...], got {text!r}")
    return columns


def _quantile_list(text):
    try:
        values = [float(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected Q[,Q...] numbers in [0, 1], got "
                                         f"{text!r}") from None
    if not all(0.0 <= value <= 1.0 for value in values):
        raise argparse.ArgumentTypeError(f"quantiles must be in [0, 1], got {text!r}")
    return values


def build_parser():
    parser = argparse.ArgumentParser(prog="jitree", description="Numba-JIT decision trees.")
    commands = parser.add_subparsers(dest="command", required=True)

    fit = commands.add_parser("fit", help="fit a tree on a data file and save it")
    fit.add_argument("data", help="training data: .csv (with header), .parquet or .npy; "
                                  "empty CSV fields and Parquet nulls are missing values")
    fit.add_argument("--target", required=True,
                     help="target column: a name (.csv/.parquet) or an index (.npy)")
    fit.add_argument("-o", "--output", required=True, help="model file to write")
    fit.add_argument("--task", choices=["auto", "classification", "regression"],
                     default="auto", help="auto: regression for non-integer numeric targets")
    fit.add_argument("--criterion", help="split criterion (default: gini / squared_error)")
    fit.add_argument("--max-depth", type=_positive_int)
    fit.add_argument("--min-samples-leaf", type=_positive_int, default=1)
    fit.add_argument("--max-leaf-nodes", type=_positive_int)
    fit.add_argument("--ccp-alpha", type=float, default=0.0)
    fit.add_argument("--n-jobs", type=int)
    fit.add_argument("--categorical", type=_column_list, action="extend", metavar="COL[,COL...]",
                     help="columns to treat as unordered categories (names; indices for "
                          ".npy). Non-numeric CSV/Parquet columns and dictionary-encoded "
                          "Parquet columns are categorical without being listed")
    fit.add_argument("--ordinal", type=_column_list, action="extend", metavar="COL[,COL...]",
                     help="columns of ordered levels, tested 'x <= level'; the levels take "
                          "their sorted order: numbers by value, strings alphabetically "
                          "(e.g. 'high' < 'low' < 'medium'; a Parquet dictionary's own "
                          "order is not used)")
    fit.add_argument("--categorical-split", choices=["subset", "one_vs_rest", "multiway"],
                     default="subset",
                     help="test on a categorical feature: x in a set of categories (subset), "
                          "x == one category (one_vs_rest), or one child per category "
                          "(multiway)")
    fit.add_argument("--store-leaf-samples", action="store_true",
                     help="regression: keep each leaf's training targets, for 'jitree "
                          "predict --quantiles'")
    fit.add_argument("--honest", action="store_true",
                     help="honest tree: grow on half of the rows, estimate the leaves on the "
                          "other half")
    fit.add_argument("--random-state", type=int, help="seed (honest split, feature draws)")
    fit.set_defaults(run=_fit)

    predict = commands.add_parser("predict", help="predict a data file in chunks")
    predict.add_argument("model", help="model file written by 'jitree fit' or jitree.save")
    predict.add_argument("data", help="rows to predict: .npy, .csv or .parquet; empty CSV "
                                      "fields and Parquet nulls are missing values. For a "
                                      "model with string categories use .csv or .parquet")
    predict.add_argument("-o", "--output", required=True, help="predictions: .npy or .csv")
    predict.add_argument("--proba", action="store_true", help="class probabilities")
    predict.add_argument("--quantiles", type=_quantile_list, metavar="Q[,Q...]",
                         help="conditional quantiles in [0, 1], one column each (a regressor "
                              "fitted with --store-leaf-samples)")
    predict.add_argument("--chunk-rows", type=_positive_int, default=1_000_000)
    predict.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    predict.set_defaults(run=_predict)

    rules = commands.add_parser("rules", help="print the IF-THEN rules of a model")
    rules.add_argument("model")
    rules.set_defaults(run=_rules)

    show = commands.add_parser("show", help="print a model's summary and tree")
    show.add_argument("model")
    show.set_defaults(run=_show)

    demo = commands.add_parser("demo", help="fit and print a tree on the embedded iris data, "
                                            "then time a batch prediction")
    demo.add_argument("--max-depth", type=_positive_int, default=3, help="iris tree depth")
    demo.add_argument("--train-rows", type=_positive_int, default=200_000)
    demo.add_argument("--rows", type=_positive_int, default=2_000_000,
                      help="rows of the batch prediction")
    demo.set_defaults(run=_demo)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, TypeError, OSError, ImportError) as error:
        print(f"jitree: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
