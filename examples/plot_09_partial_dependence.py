"""
Partial dependence and ICE curves
=================================

The partial dependence of a model on a feature is its average prediction when that feature
is set to each value of a grid, the other features keeping their values in the data;
individual conditional expectation (ICE) curves are the same per row. jitree computes the
average by the recursion method (one weighted traversal of each tree per grid point), and
the ICE curves from the model's predictions.

The data: :func:`jitree.datasets.make_regression_data` with 6 features, whose target is a
linear function of the first 5 plus :math:`\\sin(2 x_0)` and noise: feature 0 enters through
its slope and the sine, feature 1 through its slope alone, and feature 5 not at all, so its
curves are flat.
"""

import matplotlib.pyplot as plt

import jitree
from jitree.datasets import make_regression_data

X, y = make_regression_data(5000, 6, seed=0)
forest = jitree.RandomForestRegressor(n_estimators=50, min_samples_leaf=5, random_state=0)
forest.fit(X, y)

fig, axes = plt.subplots(1, 3, figsize=(12, 3.8))
for feature, ax in zip([0, 1, 5], axes, strict=True):
    jitree.plot_partial_dependence(forest, X[:300], [feature], kind="both", ax=ax,
                                   grid_resolution=40, max_ice_lines=60)
    ax.set_title(f"feature {feature}")
fig.suptitle("Partial dependence (average) and ICE curves (one per row)")
fig.tight_layout()

# %%
# Two features at once
# --------------------
# The partial dependence on a pair is a surface; with an additive target it is the sum of
# the two curves.
fig, ax = plt.subplots(figsize=(5.5, 4.5))
jitree.plot_partial_dependence(forest, X, [0, 3], grid_resolution=30, ax=ax)
ax.set_title("Partial dependence on features 0 and 3")
fig.tight_layout()

# %%
# The numbers behind the curves
# -----------------------------
result = jitree.partial_dependence(forest, X, [0], grid_resolution=7)
for x, value in zip(result.grid_values[0], result.average[0], strict=True):
    print(f"x0 = {x:6.2f}: average prediction {value:6.2f}")
