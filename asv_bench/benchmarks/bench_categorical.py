"""Fit benchmarks of jitree's categorical splits (subset, one-vs-rest, multiway).

The table is synthetic (NumPy only, no dataset package): a few categorical columns of
``n_categories`` levels with 1 % missing values, a few numeric columns, and a target that
depends on category groups and on the numeric columns.
"""

import numpy as np

import jitree

from .common import warm_up

N_CATEGORICAL = 4
N_NUMERIC = 4


def categorical_data(n_samples, n_categories, task="classification", seed=0):
    """X (float64: category codes, NaN missing, then numeric columns), y, and the indices of
    the categorical columns."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_categories, (n_samples, N_CATEGORICAL)).astype(np.float64)
    numeric = rng.normal(size=(n_samples, N_NUMERIC))
    # each category belongs to one of 4 hidden groups that drive the target
    group = rng.integers(0, 4, (N_CATEGORICAL, n_categories))
    signal = sum(group[j][codes[:, j].astype(np.int64)] * (j + 1) for j in range(2))
    signal = signal + numeric[:, 0] - numeric[:, 1] ** 2
    codes[rng.random(codes.shape) < 0.01] = np.nan
    X = np.hstack([codes, numeric])
    if task == "classification":
        noisy = signal + rng.normal(size=n_samples)
        y = np.digitize(noisy, np.quantile(noisy, [1 / 3, 2 / 3]))
    else:
        y = signal + rng.normal(size=n_samples)
    return X, y, list(range(N_CATEGORICAL))


class FitCategoricalClassifier:
    params = ([10_000, 100_000], [4, 32, 256], ["subset", "one_vs_rest", "multiway"])
    param_names = ["n_samples", "n_categories", "categorical_split"]
    timeout = 300

    def setup(self, n_samples, n_categories, categorical_split):
        self.X, self.y, categorical = categorical_data(n_samples, n_categories)
        # 3 classes: subset is exhaustive at 4 categories, the per-class orderings beyond 10
        self.model = jitree.DecisionTreeClassifier(
            criterion="entropy", min_samples_leaf=5, categorical_features=categorical,
            categorical_split=categorical_split)
        warm_up(self.model, self.X, self.y)

    def time_fit(self, *params):
        self.model.fit(self.X, self.y)

    def peakmem_fit(self, *params):
        self.model.fit(self.X, self.y)


class FitCategoricalRegressor:
    params = ([100_000], [4, 32, 256], ["subset", "one_vs_rest", "multiway"])
    param_names = ["n_samples", "n_categories", "categorical_split"]
    timeout = 300

    def setup(self, n_samples, n_categories, categorical_split):
        self.X, self.y, categorical = categorical_data(n_samples, n_categories, "regression")
        self.model = jitree.DecisionTreeRegressor(
            min_samples_leaf=5, categorical_features=categorical,
            categorical_split=categorical_split)
        warm_up(self.model, self.X, self.y)

    def time_fit(self, *params):
        self.model.fit(self.X, self.y)

    def peakmem_fit(self, *params):
        self.model.fit(self.X, self.y)


class PredictCategoricalForest:
    """predict_proba of a forest whose trees test categories (the flat walk: subset nodes'
    bits, multiway nodes' slots)."""
    params = ([8, 32], ["subset", "multiway"])
    param_names = ["n_categories", "categorical_split"]
    timeout = 300

    def setup(self, n_categories, categorical_split):
        X, y, categorical = categorical_data(20_000, n_categories)
        self.forest = jitree.RandomForestClassifier(
            n_estimators=20, criterion="entropy", random_state=0,
            categorical_features=categorical, categorical_split=categorical_split).fit(X, y)
        self.X_new = categorical_data(200_000, n_categories, seed=1)[0]
        self.forest.predict_proba(self.X_new[:100])

    def time_predict_proba(self, *params):
        self.forest.predict_proba(self.X_new)
