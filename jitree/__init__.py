"""jitree: Numba-JIT, array-oriented decision trees."""

from ._threading import configure_threading_layer as _configure_threading_layer

_configure_threading_layer()

from .exceptions import DataConversionWarning, NotFittedError  # noqa: E402
from .measures import impurity, split_gain  # noqa: E402
from .model._params import clone  # noqa: E402
from .model.classifier import DecisionTreeClassifier, ExtraTreeClassifier  # noqa: E402
from .model.criterion import Criterion  # noqa: E402
from .model.dependence import partial_dependence, plot_partial_dependence  # noqa: E402
from .model.explain import ShapValues, shap_interaction_values, shap_trees, shap_values  # noqa: E402
from .model.export import export_graphviz, export_text  # noqa: E402
from .model.forest import (  # noqa: E402
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from .model.interop import from_sklearn  # noqa: E402
from .model.persistence import load, save  # noqa: E402
from .model.plot import plot_tree  # noqa: E402
from .model.regressor import DecisionTreeRegressor, ExtraTreeRegressor  # noqa: E402
from .model.rules import Condition, Rule, format_rules, rules, rules_to_text  # noqa: E402
from .model.serving import to_onnx, to_treelite  # noqa: E402
from .model.tree import TREE_LEAF, TREE_UNDEFINED, Tree  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "Condition",
    "Criterion",
    "DataConversionWarning",
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "ExtraTreeClassifier",
    "ExtraTreeRegressor",
    "ExtraTreesClassifier",
    "ExtraTreesRegressor",
    "NotFittedError",
    "RandomForestClassifier",
    "RandomForestRegressor",
    "Rule",
    "ShapValues",
    "TREE_LEAF",
    "TREE_UNDEFINED",
    "Tree",
    "clone",
    "export_graphviz",
    "export_text",
    "format_rules",
    "from_sklearn",
    "impurity",
    "load",
    "partial_dependence",
    "plot_partial_dependence",
    "plot_tree",
    "rules",
    "rules_to_text",
    "save",
    "shap_interaction_values",
    "shap_trees",
    "shap_values",
    "split_gain",
    "to_onnx",
    "to_treelite",
]
