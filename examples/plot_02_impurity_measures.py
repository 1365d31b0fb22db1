"""
Impurity measures of two classes
================================

The node impurities of the classification criteria as functions of the fraction :math:`p`
of class 1 in a node, computed with :func:`jitree.impurity` on a node of 1,000 weighted
samples: entropy :math:`H(p) = -p \\log_2 p - (1 - p) \\log_2 (1 - p)`, Gini
:math:`G(p) = 2 p (1 - p)` and misclassification :math:`M(p) = 1 - \\max(p, 1 - p)`. All
three are 0 for a pure node and largest at :math:`p = 1/2`; entropy and Gini are strictly
concave, which is why they prefer splits that purify one child even when the
misclassification rate does not change.
"""

import matplotlib.pyplot as plt
import numpy as np

import jitree

fractions = np.linspace(0.0, 1.0, 101)
labels = np.array([0, 1])
measures = {name: [] for name in ("entropy", "gini", "misclassification")}
for p in fractions:
    weights = np.array([1.0 - p, p]) * 1000.0
    for name, values in measures.items():
        values.append(jitree.impurity(labels, name, sample_weight=weights)
                      if 0.0 < p < 1.0 else 0.0)

fig, ax = plt.subplots(figsize=(6, 4))
for name, values in measures.items():
    ax.plot(fractions, values, label=name)
ax.plot(fractions, 2 * fractions * (1 - fractions), "k:", lw=1, label="2p(1-p)")
ax.set_xlabel("fraction p of class 1 in the node")
ax.set_ylabel("impurity")
ax.legend()
ax.set_title("Node impurity of two classes")
fig.tight_layout()

# %%
# A split that only the concave measures see
# ------------------------------------------
# A node of 400 + 400 samples split into (300, 100) and (100, 300), or into (200, 400) and
# (200, 0): both leave 200 samples misclassified, but the second makes a pure child.
y = np.repeat([0, 1, 0, 1], [300, 100, 100, 300])
first = np.repeat([0, 0, 1, 1], [300, 100, 100, 300])
y2 = np.repeat([0, 1, 0], [200, 400, 200])
second = np.repeat([0, 0, 1], [200, 400, 200])
for name in ("misclassification", "gini", "entropy"):
    print(f"{name:18} gain of split 1 {jitree.split_gain(y, first, name):.4f}, "
          f"of split 2 {jitree.split_gain(y2, second, name):.4f}")
