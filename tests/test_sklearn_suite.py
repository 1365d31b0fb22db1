"""scikit-learn's own tree and forest tests, run against jitree's estimators.

The test modules of the installed scikit-learn (``sklearn/tree/tests`` and
``sklearn/ensemble/tests/test_forest.py``) are copied to a temporary directory with their
estimator imports pointed at jitree's, and run by pytest in a child process. Every test of
theirs that fails must be one of ``EXPECTED`` below, each with the reason: a deliberate
difference (README's list of them), a private scikit-learn attribute or function the test
reaches into, or only the words of an error message. A failure of any other test is a
behaviour scikit-learn's users rely on that jitree broke.

The reasons were read against scikit-learn 1.9; another version's tests may test other
things, so the suite runs with 1.9 only.
"""

import pathlib
import re
import subprocess
import sys

import pytest

sklearn = pytest.importorskip("sklearn")

pytestmark = pytest.mark.skipif(not sklearn.__version__.startswith("1.9."),
                                reason="EXPECTED was read against scikit-learn 1.9")

_WORDING = "the same error, in other words"
_PRIVATE = "reaches into scikit-learn's private attributes or functions"
EXPECTED = {
    # test_tree.py
    "test_almost_constant_feature": "a feature of range below 1e-7 is split on (scikit-learn "
                                    "drops it): float64 thresholds tell its values apart",
    "test_arrays_persist": "Tree.n_classes is an int, not an array",
    "test_big_input": "X is not cast to float32, so 1e40 is a valid value",
    "test_build_pruned_tree_infinite_loop": _PRIVATE,
    "test_build_pruned_tree_py": _PRIVATE,
    "test_error": "its poisson case passes X of 1 row with y of 3: the shapes are reported",
    "test_friedman_mse_deprecation": "the FutureWarning comes at fit, not in the constructor",
    "test_huge_allocations": "nothing is allocated by max_leaf_nodes, so no MemoryError",
    "test_missing_value_errors": "a sparse X may hold NaN (missing values)",
    "test_missing_values_best_splitter_on_equal_nodes_no_missing":
        "missing values at a node without any in training go to the heavier child, the "
        "left one on a tie (scikit-learn: the right one)",
    "test_random_splitter_missing_values_uses_non_missing_min_max":
        "a random split that parts missing values from the others has the threshold "
        "DBL_MAX, so unseen larger values go with the non-missing side",
    "test_sample_weight_invalid": "a 0-d sample_weight is a ValueError (scikit-learn: "
                                  "TypeError)",
    # test_export.py
    "test_export_text": "ties go to the lowest feature index (the toy data split on "
                        "feature 0, scikit-learn's permutation picks 1)",
    "test_export_text_feature_class_names_array_support": "ties, as test_export_text",
    "test_export_text_errors": _WORDING,
    "test_graphviz_errors": _WORDING,
    "test_graphviz_feature_class_names_array_support": "ties, as test_export_text",
    "test_graphviz_toy": "ties, and numbers printed without trailing zeros",
    "test_plot_tree_entropy": "plot_tree returns the node boxes (scikit-learn: the root's "
                              "True and False labels too); numbers without trailing zeros",
    "test_plot_tree_gini": "as test_plot_tree_entropy",
    # test_forest.py
    "test_backend_respected": "the forest's threads are its own, not joblib's",
    "test_class_weights_forest": "class_weight multiplies the trees' weights instead of "
                                 "entering the bootstrap draw; and _sample_weight (private)",
    "test_class_weight_errors": "a warm start on y of other outputs than the fitted trees' is "
                                "an error (scikit-learn: a warning that no tree is added)",
    "test_classifier_error_oob_score_multiclass_multioutput":
        "the OOB score of several outputs is computed (subset accuracy)",
    "test_distribution": "ties and random streams of their own",
    "test_forest_multioutput_integral_regression_target": "scikit-learn's bootstrap stream "
                                                          "(private)",
    "test_forest_regressor_oob": "random streams of their own: the OOB R^2 of its 50 trees "
                                 "falls either side of the test's 0.7 (10 seeds: 0.709 mean)",
    "test_forest_y_sparse": "a sparse y is a TypeError asking for a dense one",
    "test_max_samples_bootstrap": _WORDING,
    "test_max_samples_geq_one": _PRIVATE,
    "test_mse_criterion_object_segfault_smoke_test": "passes scikit-learn's Cython "
                                                     "criterion object",
    "test_oob_not_computed_twice": _PRIVATE,
    "test_validate_y_class_weight": _PRIVATE,
}

_MODULES = ("tree/tests/test_tree.py", "tree/tests/test_monotonic_tree.py",
            "tree/tests/test_export.py", "ensemble/tests/test_forest.py")
# an import from scikit-learn's tree or ensemble module, on one line or in parentheses
_IMPORT = re.compile(r"^from (sklearn\.(?:tree|ensemble)) import (?:\(([^)]*)\)|(.*))$",
                     re.MULTILINE)
_OURS = {"DecisionTreeClassifier", "DecisionTreeRegressor", "ExtraTreeClassifier",
         "ExtraTreeRegressor", "RandomForestClassifier", "RandomForestRegressor",
         "ExtraTreesClassifier", "ExtraTreesRegressor", "export_graphviz", "export_text",
         "plot_tree"}
_CONFTEST = '''
import pytest


@pytest.fixture
def global_random_seed():
    return 42


@pytest.fixture
def pyplot():
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    yield plt
    plt.close("all")
'''


def _imported(match):
    """The names an :data:`_IMPORT` match imports."""
    return re.findall(r"\w+", match.group(2) if match.group(2) is not None
                      else match.group(3))


def _pointed_at_jitree(source):
    """``source`` with the names of jitree's estimators and exporters imported from jitree
    (the others still from scikit-learn), and a node's value unpacked from jitree's 2-D
    ``value`` where scikit-learn's tests unpack its 3-D one."""
    def split(match):
        names = _imported(match)
        ours = [name for name in names if name in _OURS]
        theirs = [name for name in names if name not in _OURS]
        lines = [f"from jitree import {', '.join(ours)}"] if ours else []
        if theirs:
            lines.append(f"from {match.group(1)} import {', '.join(theirs)}")
        return "\n".join(lines)

    source = _IMPORT.sub(split, source)
    return re.sub(r"tree_\.value\[(\w+)\]\[0\]\[0\]", r"np.ravel(tree_.value[\1])[0]", source)


@pytest.fixture(scope="module")
def failures(tmp_path_factory):
    """The test functions of scikit-learn's suite that fail on jitree: {name: node ids}."""
    root = pathlib.Path(sklearn.__file__).parent
    work = tmp_path_factory.mktemp("sklearn_suite")
    for module in _MODULES:
        source = (root / module).read_text()
        (work / pathlib.Path(module).name).write_text(_pointed_at_jitree(source))
    (work / "conftest.py").write_text(_CONFTEST)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          "-W", "ignore", "--tb=no", "-rfE", str(work)],
                         capture_output=True, text=True, cwd=work, timeout=1800)
    assert "passed" in run.stdout, run.stdout[-3000:] + run.stderr[-3000:]
    found = {}
    for line in run.stdout.splitlines():
        match = re.match(r"(?:FAILED|ERROR) \S+?::(\w+)(\S*)", line)
        if match:
            found.setdefault(match.group(1), []).append(match.group(1) + match.group(2))
    return found


def test_the_suite_imports_jitree():
    """The rewrite imports every estimator and exporter the modules use from jitree, and
    none of them from scikit-learn."""
    root = pathlib.Path(sklearn.__file__).parent
    for module in _MODULES:
        original = (root / module).read_text()
        source = _pointed_at_jitree(original)
        wanted = {name for match in _IMPORT.finditer(original) for name in _imported(match)}
        ours = set(re.findall(r"\w+", " ".join(re.findall(r"^from jitree import (.*)$",
                                                          source, re.MULTILINE))))
        assert ours == wanted & _OURS and ours, module
        left = {name for match in _IMPORT.finditer(source) for name in _imported(match)}
        assert not left & _OURS, module


def test_scikit_learns_tests_fail_only_where_expected(failures):
    unexpected = {name: ids for name, ids in failures.items() if name not in EXPECTED}
    assert not unexpected, unexpected
