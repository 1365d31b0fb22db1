"""Data sets shipped with jitree."""

from importlib import resources

import numpy as np


def load_iris():
    """Fisher's iris (150 flowers, 4 measurements in cm, 3 species).

    Returns ``(X, y, feature_names)`` with X float64 (150, 4) and y the species names.
    """
    text = resources.files("jitree").joinpath("data/iris.csv").read_text()
    lines = text.strip().splitlines()
    header = lines[0].split(",")
    rows = [line.split(",") for line in lines[1:]]
    X = np.array([[float(v) for v in row[:4]] for row in rows])
    y = np.array([row[4] for row in rows])
    return X, y, header[:4]


def make_classification_data(n_samples, n_features, n_classes=3, seed=0, dtype=np.float32):
    """Synthetic classification data: class = a noisy, nonlinear function of a few features."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, n_features)).astype(dtype)
    informative = min(n_features, 5)
    score = X[:, :informative] @ rng.normal(size=informative)
    score += 0.5 * np.sin(3.0 * X[:, 0]) + rng.normal(scale=0.5, size=n_samples)
    edges = np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1])
    return X, np.searchsorted(edges, score)


def make_regression_data(n_samples, n_features, seed=0, dtype=np.float32):
    """Synthetic regression data: y = a linear function of 5 features + a sine + noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, n_features)).astype(dtype)
    informative = min(n_features, 5)
    y = X[:, :informative] @ rng.normal(size=informative) + np.sin(2.0 * X[:, 0]) \
        + rng.normal(scale=0.3, size=n_samples)
    return X, y
