"""Seeded data shared by the benchmarks (built in setup, never timed)."""

from jitree.datasets import make_classification_data as classification_data  # noqa: F401
from jitree.datasets import make_regression_data as regression_data  # noqa: F401


def warm_up(estimator, X, y):
    """Compile (or load from the cache) every kernel the timed call will use."""
    estimator.fit(X[:500], y[:500])
    estimator.predict(X[:100])
    if hasattr(estimator, "predict_proba"):
        estimator.predict_proba(X[:100])
