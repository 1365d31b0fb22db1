"""The ``jitree`` command line."""

import argparse
import sys
import time


def _demo(args):
    import numpy as np

    import jitree
    from jitree.datasets import load_iris, make_classification_data

    X, y, names = load_iris()
    rng = np.random.default_rng(0)
    order = rng.permutation(X.shape[0])
    train, test = order[:100], order[100:]
    start = time.perf_counter()
    model = jitree.DecisionTreeClassifier(max_depth=args.max_depth).fit(X[train], y[train])
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    accuracy = model.score(X[test], y[test])
    predict_seconds = time.perf_counter() - start
    print("jitree demo: iris, 100 training flowers, 50 held out\n")
    print(jitree.export_text(model, feature_names=names))
    print(f"test accuracy: {accuracy:.3f}")
    print(f"fit {fit_seconds * 1e3:.2f} ms, predict {predict_seconds * 1e3:.2f} ms "
          f"(the first run compiles the kernels; later runs load them from the cache)\n")

    n_rows = args.rows
    X, y = make_classification_data(n_rows, 20, n_classes=3, seed=1)
    split = n_rows * 4 // 5
    start = time.perf_counter()
    model = jitree.DecisionTreeClassifier(max_depth=12).fit(X[:split], y[:split])
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    accuracy = model.score(X[split:], y[split:])
    predict_seconds = time.perf_counter() - start
    print(f"synthetic: {split} x 20 float32 rows, 3 classes, max_depth=12")
    print(f"  tree: {model.tree_.node_count} nodes, test accuracy {accuracy:.3f}")
    print(f"  fit {fit_seconds:.3f} s, predict {n_rows - split} rows in "
          f"{predict_seconds * 1e3:.1f} ms")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(prog="jitree", description="Numba-JIT decision trees.")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="fit and print a tree on the embedded iris data")
    demo.add_argument("--max-depth", type=int, default=3, help="depth of the iris tree")
    demo.add_argument("--rows", type=int, default=200_000,
                      help="rows of the synthetic timing problem")
    demo.set_defaults(run=_demo)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, TypeError, OSError) as error:
        print(f"jitree: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
