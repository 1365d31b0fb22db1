"""Explanation benchmarks: TreeSHAP values and interaction values of a forest's rows."""

import jitree

from .common import regression_data


class Shap:
    params = ([6, 10], [200])
    param_names = ["max_depth", "n_rows"]
    timeout = 300

    def setup(self, max_depth, n_rows):
        X, y = regression_data(20_000, 10)
        self.model = jitree.RandomForestRegressor(n_estimators=20, max_depth=max_depth,
                                                  n_jobs=2, random_state=0).fit(X, y)
        self.rows = X[:n_rows]
        jitree.shap_values(self.model, self.rows[:5])  # compile or load the kernels
        jitree.shap_interaction_values(self.model, self.rows[:5])

    def time_shap_values(self, *params):
        jitree.shap_values(self.model, self.rows)

    def time_shap_interaction_values(self, *params):
        jitree.shap_interaction_values(self.model, self.rows[:50])
