import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

DATA = Path(__file__).parent / "data"

# Kernels compile on first use: no per-example deadline. CI runs the "ci" profile.
settings.register_profile("dev", deadline=None, max_examples=40,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", deadline=None, max_examples=60, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture(scope="session")
def data_dir():
    return DATA


def load_csv(name):
    """Read one of the reference CSV files as (header, rows of strings)."""
    lines = (DATA / name).read_text().strip().splitlines()
    header = lines[0].split(",")
    rows = [line.split(",") for line in lines[1:]]
    return header, np.array(rows, dtype=object)


@pytest.fixture
def pyplot():
    """matplotlib's pyplot on the Agg backend (the test skips without matplotlib); the
    figures are closed afterwards."""
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    yield plt
    plt.close("all")
