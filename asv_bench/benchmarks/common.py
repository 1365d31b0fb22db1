"""Seeded data shared by the benchmarks (built in setup, never timed)."""

import numpy as np


def classification_data(n_samples, n_features, n_classes=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, n_features)).astype(np.float32)
    informative = min(n_features, 5)
    score = X[:, :informative] @ rng.normal(size=informative)
    score += 0.5 * np.sin(3.0 * X[:, 0]) + rng.normal(scale=0.5, size=n_samples)
    edges = np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1])
    return X, np.searchsorted(edges, score)


def regression_data(n_samples, n_features, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, n_features)).astype(np.float32)
    y = X[:, :5] @ rng.normal(size=5) + np.sin(2.0 * X[:, 0]) + rng.normal(scale=0.3,
                                                                           size=n_samples)
    return X, y


def warm_up(estimator, X, y):
    """Compile (or load from the cache) every kernel the timed call will use."""
    estimator.fit(X[:500], y[:500])
    estimator.predict(X[:100])
    if hasattr(estimator, "predict_proba"):
        estimator.predict_proba(X[:100])
