"""Fit and predict benchmarks of jitree's decision trees."""

import jitree
from jitree.datasets import load_iris

from .common import classification_data, regression_data, warm_up


class FitClassifier:
    params = ([10_000, 100_000, 1_000_000], [10, 50], ["gini", "entropy"], [None, 8])
    param_names = ["n_samples", "n_features", "criterion", "max_depth"]
    timeout = 300

    def setup(self, n_samples, n_features, criterion, max_depth):
        self.X, self.y = classification_data(n_samples, n_features)
        self.model = jitree.DecisionTreeClassifier(criterion=criterion, max_depth=max_depth)
        warm_up(self.model, self.X, self.y)

    def time_fit(self, *params):
        self.model.fit(self.X, self.y)

    def peakmem_fit(self, *params):
        self.model.fit(self.X, self.y)

    def track_train_accuracy(self, *params):
        return self.model.fit(self.X, self.y).score(self.X[:10_000], self.y[:10_000])


class FitRegressor:
    params = ([10_000, 100_000, 1_000_000], [10, 50], [8, None])
    param_names = ["n_samples", "n_features", "max_depth"]
    timeout = 300

    def setup(self, n_samples, n_features, max_depth):
        self.X, self.y = regression_data(n_samples, n_features)
        self.model = jitree.DecisionTreeRegressor(max_depth=max_depth)
        warm_up(self.model, self.X, self.y)

    def time_fit(self, *params):
        self.model.fit(self.X, self.y)

    def peakmem_fit(self, *params):
        self.model.fit(self.X, self.y)


class Predict:
    params = ([10_000, 100_000, 1_000_000], [10, 50], [None, 8])
    param_names = ["n_samples", "n_features", "max_depth"]
    timeout = 300

    def setup(self, n_samples, n_features, max_depth):
        X, y = classification_data(100_000 + n_samples, n_features)
        self.model = jitree.DecisionTreeClassifier(max_depth=max_depth)
        warm_up(self.model, X, y)
        self.model.fit(X[:100_000], y[:100_000])
        self.X, self.y = X[100_000:], y[100_000:]

    def time_predict(self, *params):
        self.model.predict(self.X)

    def time_predict_proba(self, *params):
        self.model.predict_proba(self.X)

    def track_test_accuracy(self, *params):
        return self.model.score(self.X, self.y)


class FitSmall:
    """Many small fits (folds, simulations, parameter grids): iris, 1k x 10, 10k x 20."""

    params = (["iris", "1k x 10", "10k x 20"],)
    param_names = ["data"]

    def setup(self, data):
        if data == "iris":
            self.X, self.y, _ = load_iris()
        else:
            n_samples, n_features = {"1k x 10": (1_000, 10), "10k x 20": (10_000, 20)}[data]
            self.X, self.y = classification_data(n_samples, n_features)
        self.model = jitree.DecisionTreeClassifier()
        warm_up(self.model, self.X, self.y)

    def time_fit(self, data):
        self.model.fit(self.X, self.y)
