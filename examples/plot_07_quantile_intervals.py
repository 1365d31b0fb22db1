"""
Prediction intervals from a quantile regression forest
======================================================

A regression forest fitted with ``store_leaf_samples=True`` keeps the training targets of
its leaves; ``predict_quantiles`` then returns conditional quantiles (Meinshausen's quantile
regression forests): the weighted quantiles of the training targets that share a leaf with
the row, over all trees. Here the noise grows with :math:`x`, so a good 90% interval must
widen too. An honest forest (``honest=True``) estimates its leaves on rows that did not
choose its splits.
"""

import matplotlib.pyplot as plt
import numpy as np

import jitree

rng = np.random.default_rng(0)


def sample(n):
    x = rng.uniform(0, 10, n)
    y = np.sin(x) * 3 + x + rng.normal(scale=0.2 + 0.25 * x, size=n)
    return x.reshape(-1, 1), y


X_train, y_train = sample(3000)
X_test, y_test = sample(2000)
grid = np.linspace(0, 10, 400).reshape(-1, 1)

models = {
    "quantile forest": jitree.RandomForestRegressor(
        n_estimators=100, min_samples_leaf=10, store_leaf_samples=True, random_state=0),
    "honest quantile forest": jitree.RandomForestRegressor(
        n_estimators=100, min_samples_leaf=10, store_leaf_samples=True, honest=True,
        random_state=0),
}

fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
for ax, (name, model) in zip(axes, models.items(), strict=True):
    model.fit(X_train, y_train)
    low, median, high = model.predict_quantiles(grid, quantiles=[0.05, 0.5, 0.95]).T
    bounds = model.predict_quantiles(X_test, quantiles=[0.05, 0.95])
    coverage = np.mean((y_test >= bounds[:, 0]) & (y_test <= bounds[:, 1]))
    ax.scatter(X_train[:600, 0], y_train[:600], s=4, color="0.6", label="training rows")
    ax.fill_between(grid[:, 0], low, high, alpha=0.3, label="5% to 95%")
    ax.plot(grid[:, 0], median, color="tab:red", label="median")
    ax.set_title(f"{name}: {coverage:.1%} of test rows inside")
    ax.set_xlabel("x")
    print(f"{name}: coverage of the 90% interval on new rows {coverage:.3f}")
axes[0].set_ylabel("y")
axes[0].legend(loc="upper left")
fig.tight_layout()

# %%
# Width of the interval
# ---------------------
# The interval's width follows the noise's standard deviation (the dotted line is the true
# 90% width, :math:`2 \cdot 1.645 \sigma(x)`).
fig, ax = plt.subplots(figsize=(6, 4))
for name, model in models.items():
    low, high = model.predict_quantiles(grid, quantiles=[0.05, 0.95]).T
    ax.plot(grid[:, 0], high - low, label=name)
ax.plot(grid[:, 0], 2 * 1.645 * (0.2 + 0.25 * grid[:, 0]), "k:", label="true")
ax.set_xlabel("x")
ax.set_ylabel("width of the 90% interval")
ax.legend()
fig.tight_layout()
