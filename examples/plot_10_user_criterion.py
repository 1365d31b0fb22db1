r"""
A user-defined criterion: the Hellinger distance
================================================

:class:`jitree.Criterion` compiles your own ``@numba.njit`` function into the split search.
For two classes, the Hellinger distance criterion of Cieslak and Chawla (2008) scores a
split by how differently the two classes spread over its sides,

.. math::

   d_H = \sqrt{\sum_{s \in \{Y, N\}}
         \left(\sqrt{\frac{W_{s,+}}{W_+}} - \sqrt{\frac{W_{s,-}}{W_-}}\right)^2},

where :math:`W_{s,+}` is the weight of the positive class on side :math:`s` and :math:`W_+`
its total. It compares :math:`P(\text{side} \mid \text{class})`, which does not depend on the
classes' proportions, so it is a candidate for imbalanced data. Here 5% of the samples are
positive; trees of several depths are grown with Gini (plain, and with
``class_weight="balanced"``) and with the Hellinger distance, and compared by the area
under the ROC curve of their ``predict_proba`` on held-out data (a ranking measure: with 5%
positives, most leaves' majority is negative whatever the splits) and by fit time (the
user's function runs inside the compiled scan).
"""

import time

import matplotlib.pyplot as plt
import numba
import numpy as np
from sklearn.metrics import roc_auc_score

import jitree
from jitree.datasets import make_classification_data


@numba.njit
def hellinger(left, left_weight, right, right_weight):
    negative = left[0] + right[0]
    positive = left[1] + right[1]
    if negative <= 0.0 or positive <= 0.0:
        return 0.0
    return np.sqrt((np.sqrt(left[1] / positive) - np.sqrt(left[0] / negative)) ** 2
                   + (np.sqrt(right[1] / positive) - np.sqrt(right[0] / negative)) ** 2)


X, score = make_classification_data(20_000, 10, n_classes=20, seed=1)
y = (score == 19).astype(int)  # the top 5% of a noisy score
print(f"{y.mean():.1%} positive")
X_train, y_train, X_test, y_test = X[:10_000], y[:10_000], X[10_000:], y[10_000:]


def auc(model):
    return roc_auc_score(y_test, model.predict_proba(X_test)[:, 1])


criteria = {"gini": ("gini", None), "gini, balanced": ("gini", "balanced"),
            "hellinger": (jitree.Criterion(score=hellinger), None)}
depths = [2, 3, 4, 5, 6, 8]
scores = {name: [] for name in criteria}
seconds = {name: [] for name in criteria}
for name, (criterion, class_weight) in criteria.items():
    jitree.DecisionTreeClassifier(criterion=criterion, max_depth=2).fit(X_train, y_train)
    for depth in depths:
        start = time.perf_counter()
        model = jitree.DecisionTreeClassifier(criterion=criterion, max_depth=depth,
                                              class_weight=class_weight)
        model.fit(X_train, y_train)
        seconds[name].append(time.perf_counter() - start)
        scores[name].append(auc(model))
    print(f"{name:15} test ROC AUC by depth: "
          + ", ".join(f"{s:.3f}" for s in scores[name]))

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
for name in criteria:
    left.plot(depths, scores[name], marker="o", label=name)
    right.plot(depths, np.array(seconds[name]) * 1e3, marker="o", label=name)
left.set_xlabel("max_depth")
left.set_ylabel("ROC AUC (test)")
left.set_title("5% positives")
right.set_xlabel("max_depth")
right.set_ylabel("fit time (ms)")
right.set_title("Fit time: user criterion against built-in")
left.legend()
fig.tight_layout()

# %%
# The tree of the user's criterion is a normal jitree tree: it predicts, exports and saves
# without the criterion (a saved file records its name).
model = jitree.DecisionTreeClassifier(criterion=criteria["hellinger"][0], max_depth=2)
print(jitree.export_text(model.fit(X_train, y_train)))
