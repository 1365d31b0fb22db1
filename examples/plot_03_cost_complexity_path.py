"""
The cost-complexity pruning path
================================

Minimal cost-complexity pruning trades the tree's total leaf impurity for its number of
leaves: :math:`R_\\alpha(T) = \\sum_{t \\in \\tilde T} R(t) + \\alpha |\\tilde T|`.
``cost_complexity_pruning_path`` returns the effective alphas at which successive subtrees
are pruned, and the total leaf impurity of each pruned tree. Trees fitted with larger
``ccp_alpha`` are smaller: training accuracy falls, and test accuracy first rises as the
tree stops fitting noise.
"""

import matplotlib.pyplot as plt
import numpy as np

import jitree
from jitree.datasets import make_classification_data

X, y = make_classification_data(3000, 8, n_classes=2, seed=3)
X_train, y_train, X_test, y_test = X[:2000], y[:2000], X[2000:], y[2000:]

path = jitree.DecisionTreeClassifier().cost_complexity_pruning_path(X_train, y_train)
alphas, impurities = path.ccp_alphas[:-1], path.impurities[:-1]  # drop the root-only tree
print(f"{len(path.ccp_alphas)} subtrees on the path")

fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(alphas, impurities, marker="o", drawstyle="steps-post", markersize=3)
ax.set_xlabel("effective alpha")
ax.set_ylabel("total impurity of the leaves")
ax.set_title("Total leaf impurity against alpha (training set)")
fig.tight_layout()

# %%
# Accuracy and size along the path
# --------------------------------
trees = [jitree.DecisionTreeClassifier(ccp_alpha=alpha).fit(X_train, y_train)
         for alpha in alphas]
train_score = [tree.score(X_train, y_train) for tree in trees]
test_score = [tree.score(X_test, y_test) for tree in trees]
leaves = [tree.get_n_leaves() for tree in trees]

fig, (top, bottom) = plt.subplots(2, 1, figsize=(6, 6), sharex=True)
top.plot(alphas, train_score, marker="o", markersize=3, drawstyle="steps-post",
         label="train")
top.plot(alphas, test_score, marker="o", markersize=3, drawstyle="steps-post", label="test")
top.set_ylabel("accuracy")
top.legend()
bottom.plot(alphas, leaves, marker="o", markersize=3, drawstyle="steps-post")
bottom.set_yscale("log")
bottom.set_xscale("symlog", linthresh=1e-4)
bottom.set_xlabel("ccp_alpha")
bottom.set_ylabel("leaves")
top.set_title("Accuracy and tree size against ccp_alpha")
fig.tight_layout()

best = int(np.argmax(test_score))
print(f"best test accuracy {test_score[best]:.3f} at ccp_alpha={alphas[best]:.5f} "
      f"({leaves[best]} leaves; the full tree has {leaves[0]} and scores {test_score[0]:.3f})")
