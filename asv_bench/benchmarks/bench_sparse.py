"""Fit of a tree and a forest on a sparse matrix (the sparse growth of jitree.kernels.sparse),
and the forest's prediction of its CSR rows."""

import numpy as np

import jitree


class FitSparse:
    params = ([(20_000, 2_000), (100_000, 20_000)],)
    param_names = ["shape"]
    timeout = 300

    def setup(self, shape):
        try:
            from scipy import sparse
        except ImportError:
            raise NotImplementedError("scipy is not installed") from None
        n_rows, n_features = shape
        self.X = sparse.random(n_rows, n_features, density=0.001, format="csc",
                               random_state=np.random.default_rng(0), dtype=np.float32)
        self.y = (self.X @ np.random.default_rng(0).normal(size=n_features) > 0).astype(int)
        self.model = jitree.DecisionTreeClassifier(max_depth=12)
        self.model.fit(self.X[:500], self.y[:500])

    def time_fit(self, shape):
        self.model.fit(self.X, self.y)

    def peakmem_fit(self, shape):
        self.model.fit(self.X, self.y)


class SparseForest:
    """10 full-depth trees on 20k x 2k at density 0.5%: fit, and predict_proba of CSR rows."""

    timeout = 300

    def setup(self):
        try:
            from scipy import sparse
        except ImportError:
            raise NotImplementedError("scipy is not installed") from None
        self.X = sparse.random(20_000, 2_000, density=0.005, format="csc",
                               random_state=np.random.default_rng(0), dtype=np.float32)
        self.y = (self.X @ np.random.default_rng(0).normal(size=2_000) > 0).astype(int)
        self.rows = self.X.tocsr()
        self.model = jitree.RandomForestClassifier(n_estimators=10, n_jobs=2, random_state=0)
        self.model.fit(self.X, self.y)
        self.model.predict_proba(self.rows)

    def time_fit(self):
        self.model.fit(self.X, self.y)

    def time_predict_proba(self):
        self.model.predict_proba(self.rows)


class TextForest:
    """10 full-depth trees on 10,000 x 20,000 text-like TF-IDF rows (CSR float64, about 83
    stored values a row, a few columns stored in most rows; jitree.bench.text_like_data):
    most of a node's features are constant there, so its draw is most of the fit."""

    params = (["RandomForestClassifier", "ExtraTreesClassifier"],)
    param_names = ["forest"]
    timeout = 300

    def setup(self, forest):
        try:
            from jitree.bench import text_like_data

            self.X, self.y = text_like_data(10_000, 20_000, 4)
        except ImportError:
            raise NotImplementedError("scipy is not installed") from None
        self.model = getattr(jitree, forest)(n_estimators=10, n_jobs=2, random_state=0)
        self.model.fit(self.X[:500], self.y[:500])

    def time_fit(self, forest):
        self.model.fit(self.X, self.y)
