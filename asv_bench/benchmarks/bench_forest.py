"""Forest benchmarks: fit (bagging, a few features scanned per node), and prediction of every
tree over the rows, with and without missing values."""

import numpy as np

import jitree

from .common import classification_data, regression_data, warm_up


class Forest:
    params = ([jitree.RandomForestClassifier, jitree.ExtraTreesClassifier], [10_000, 50_000])
    param_names = ["forest", "n_samples"]
    timeout = 300

    def setup(self, forest, n_samples):
        self.X, self.y = classification_data(n_samples, 20)
        self.model = forest(n_estimators=20, n_jobs=2, random_state=0)
        warm_up(self.model, self.X, self.y)
        self.model.fit(self.X, self.y)
        self.rows = np.ascontiguousarray(np.tile(self.X, (4, 1)))
        self.rows_missing = self.rows.copy()
        self.rows_missing[np.random.default_rng(0).random(self.rows.shape) < 0.02] = np.nan

    def time_fit(self, *params):
        self.model.fit(self.X, self.y)

    def peakmem_fit(self, *params):
        self.model.fit(self.X, self.y)

    def time_predict_proba(self, *params):
        self.model.predict_proba(self.rows)

    def time_predict_proba_missing(self, *params):
        self.model.predict_proba(self.rows_missing)


class SmallForest:
    """100 trees on 2,000 x 10 (3 classes), n_jobs=2: the fits of grid searches and
    cross-validation on small data, where each tree's growth calls the serial twins of its
    kernels (jitree.kernels._jit.serial_twin)."""

    params = ([jitree.RandomForestClassifier, jitree.ExtraTreesClassifier],)
    param_names = ["forest"]
    timeout = 300

    def setup(self, forest):
        self.X, self.y = classification_data(2_000, 10)
        self.model = forest(n_estimators=100, n_jobs=2, random_state=0)
        self.model.fit(self.X, self.y)

    def time_fit(self, forest):
        self.model.fit(self.X, self.y)


class DiscreteForest:
    """Random forests on 20,000 x 300 float32 features of whole numbers (binary, 5 levels;
    jitree.bench._discrete_data): the best splitter grows in sample order on X's values held
    as bytes (jitree.model.builder.byte_codes)."""

    params = ([2, 5],)
    param_names = ["levels"]
    timeout = 300

    def setup(self, levels):
        from jitree.bench import _discrete_data

        self.X, self.y = _discrete_data(20_000, 300, levels)
        self.model = jitree.RandomForestClassifier(n_estimators=10, n_jobs=2, random_state=0)
        self.model.fit(self.X[:500], self.y[:500])

    def time_fit(self, levels):
        self.model.fit(self.X, self.y)


class FirstPrediction:
    """A fitted forest's first prediction (20 full-depth trees grown on 50,000 x 20
    float32), which builds its prediction layout (each tree's flat layout written in place,
    the leaves' table; a classifier's pure leaves vote) and then walks 50,000 rows. Each
    timing starts from the forest as fitted: no layout, no tree's flat order."""

    params = (["classifier-3", "classifier-50", "regressor"],)
    param_names = ["forest"]
    timeout = 300

    def setup(self, forest):
        if forest == "regressor":
            X, y = regression_data(100_000, 20, seed=0)
            self.model = jitree.RandomForestRegressor(n_estimators=20, n_jobs=2,
                                                      random_state=0)
        else:
            X, y = classification_data(100_000, 20, int(forest.split("-")[1]))
            self.model = jitree.RandomForestClassifier(n_estimators=20, n_jobs=2,
                                                       random_state=0)
        self.model.fit(X[:50_000], y[:50_000])
        self.rows = X[50_000:]
        self.model.predict(self.rows)

    def time_first_predict(self, forest):
        self.model._layouts.clear()
        for model in self.model.estimators_:
            model.tree_.__dict__.pop("_cache", None)
        self.model.predict(self.rows)
