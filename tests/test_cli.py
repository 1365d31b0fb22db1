"""The command line, run as users run it."""

import subprocess
import sys


def test_demo_prints_tree_accuracy_and_times():
    result = subprocess.run([sys.executable, "-m", "jitree.cli", "demo", "--rows", "50000",
                             "--train-rows", "20000"], capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "|--- petal_length <= 2.4500" in out  # the iris root split
    assert "test accuracy:" in out
    accuracy = float(out.split("test accuracy:")[1].split()[0])
    assert accuracy > 0.9
    assert "fit" in out and "predict" in out


def test_help_and_usage_errors():
    result = subprocess.run([sys.executable, "-m", "jitree.cli", "--help"],
                            capture_output=True, text=True)
    assert result.returncode == 0 and "demo" in result.stdout
    result = subprocess.run([sys.executable, "-m", "jitree.cli", "nope"],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "invalid choice" in result.stderr
