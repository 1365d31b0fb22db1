"""
Random forests: jitree against scikit-learn
===========================================

jitree's forests share one presort between all trees, grow the trees concurrently and
predict with one parallel kernel over rows and trees. This example fits
:class:`jitree.RandomForestClassifier` and scikit-learn's ``RandomForestClassifier`` with
the same parameters (``max_features="sqrt"``, bootstrap, full depth) on 20,000 rows of 20
features, for 10 to 100 trees, on every core of the machine that builds this page, and
compares fit time, ``predict_proba`` time and test accuracy. The trees differ (each library
draws its own bootstrap samples and features), so the accuracies agree only on average.
"""

import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.ensemble import RandomForestClassifier as SklearnForest

import jitree
from jitree.datasets import make_classification_data

X, y = make_classification_data(30_000, 20, n_classes=3, seed=0)
X_train, y_train, X_test, y_test = X[:20_000], y[:20_000], X[20_000:], y[20_000:]
jitree.RandomForestClassifier(n_estimators=2, random_state=0).fit(X_train[:1000],
                                                                   y_train[:1000])  # compile

makers = {"jitree": lambda n: jitree.RandomForestClassifier(n_estimators=n, n_jobs=-1,
                                                            random_state=0),
          "scikit-learn": lambda n: SklearnForest(n_estimators=n, n_jobs=-1, random_state=0)}
counts = [10, 30, 100]
fit_time = {name: [] for name in makers}
predict_time = {name: [] for name in makers}
accuracy = {name: [] for name in makers}
for n in counts:
    for name, make in makers.items():
        model = make(n)
        start = time.perf_counter()
        model.fit(X_train, y_train)
        fit_time[name].append(time.perf_counter() - start)
        start = time.perf_counter()
        proba = model.predict_proba(X_test)
        predict_time[name].append(time.perf_counter() - start)
        accuracy[name].append(np.mean(model.classes_[proba.argmax(axis=1)] == y_test))
        print(f"{n:3} trees, {name:12}: fit {fit_time[name][-1]:6.2f} s, predict_proba "
              f"{predict_time[name][-1] * 1e3:7.1f} ms, accuracy {accuracy[name][-1]:.3f}")

fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
for name, marker in zip(makers, ["o", "s"], strict=True):
    axes[0].plot(counts, fit_time[name], marker=marker, label=name)
    axes[1].plot(counts, np.array(predict_time[name]) * 1e3, marker=marker, label=name)
    axes[2].plot(counts, accuracy[name], marker=marker, label=name)
axes[0].set_ylabel("fit time (s)")
axes[1].set_ylabel("predict_proba, 10,000 rows (ms)")
axes[2].set_ylabel("test accuracy")
for ax in axes:
    ax.set_xlabel("trees")
    ax.set_xscale("log")
axes[0].legend()
fig.suptitle("Random forests, 20,000 rows x 20 features, 3 classes")
fig.tight_layout()
