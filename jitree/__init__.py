"""jitree: Numba-JIT, array-oriented decision trees."""

from ._threading import configure_threading_layer as _configure_threading_layer

_configure_threading_layer()

from .exceptions import DataConversionWarning, NotFittedError  # noqa: E402
from .measures import impurity, split_gain  # noqa: E402
from .model._params import clone  # noqa: E402
from .model.classifier import DecisionTreeClassifier  # noqa: E402
from .model.export import export_text  # noqa: E402
from .model.regressor import DecisionTreeRegressor  # noqa: E402
from .model.tree import TREE_LEAF, TREE_UNDEFINED, Tree  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "DataConversionWarning",
    "DecisionTreeClassifier",
    "DecisionTreeRegressor",
    "NotFittedError",
    "TREE_LEAF",
    "TREE_UNDEFINED",
    "Tree",
    "clone",
    "export_text",
    "impurity",
    "split_gain",
]
