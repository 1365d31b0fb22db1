"""
Fit time against the number of rows
===================================

jitree presorts each feature once and then finds every node's best split with one pass over
the node's samples in each feature's sorted order, so a full-depth tree costs about
:math:`O(d\\, n \\log n)` for the sort plus :math:`O(d\\, n)` per level. This example times
full-depth classification trees on 1,000 to 100,000 rows of 10 features (3 classes, gini) for
jitree and scikit-learn, and plots the times on log-log axes, where a power law
:math:`t \\propto n^k` is a straight line of slope :math:`k`.

The sizes are small so that the example runs in seconds; the times are those of the machine
that built this page (the project's benchmarks use 200,000 rows and more: see
:ref:`performance`). Each figure is the best of 3 runs after a warm-up run that compiles
the kernels.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.tree import DecisionTreeClassifier as SklearnTree

import jitree
from jitree.datasets import make_classification_data

sizes = [1_000, 3_000, 10_000, 30_000, 100_000]
X_all, y_all = make_classification_data(sizes[-1], 10, n_classes=3, seed=0)


def best_time(make, X, y, repeat=3):
    make().fit(X, y)  # warm-up: compilation and caches
    times = []
    for _ in range(repeat):
        model = make()
        start = time.perf_counter()
        model.fit(X, y)
        times.append(time.perf_counter() - start)
    return min(times)


timings = {"jitree": [], "scikit-learn": []}
for n in sizes:
    X, y = X_all[:n], y_all[:n]
    timings["jitree"].append(best_time(lambda: jitree.DecisionTreeClassifier(), X, y))
    timings["scikit-learn"].append(best_time(lambda: SklearnTree(random_state=0), X, y))
    print(f"{n:>7} rows: jitree {timings['jitree'][-1] * 1e3:8.1f} ms, "
          f"scikit-learn {timings['scikit-learn'][-1] * 1e3:8.1f} ms, "
          f"ratio {timings['scikit-learn'][-1] / timings['jitree'][-1]:5.1f}")

# %%
# Log-log plot
# ------------
# The slope of each line, fitted over the sizes, is the empirical exponent :math:`k`.
fig, ax = plt.subplots(figsize=(6, 4.5))
for (name, seconds), marker in zip(timings.items(), ["o", "s"], strict=True):
    slope = np.polyfit(np.log(sizes), np.log(seconds), 1)[0]
    ax.loglog(sizes, seconds, marker=marker, label=f"{name} (slope {slope:.2f})")
ax.set_xlabel("training rows (10 features, 3 classes)")
ax.set_ylabel("fit time (s)")
ax.set_title("Full-depth tree fit time")
ax.grid(True, which="both", alpha=0.3)
ax.legend()
fig.tight_layout()
