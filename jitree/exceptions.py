"""jitree's exception and warning classes.

When scikit-learn is already imported by the user, the classes jitree raises also derive from
scikit-learn's classes of the same name, so ``except sklearn.exceptions.NotFittedError`` and
scikit-learn's own checks recognise them. jitree never imports scikit-learn itself.
"""

import sys


class NotFittedError(ValueError, AttributeError):
    """An estimator was used before ``fit``."""


class DataConversionWarning(UserWarning):
    """Input data was converted (e.g. a column-vector y flattened)."""


_bridged = {}


def compatible(cls):
    """``cls``, or a subclass of it and of scikit-learn's class of the same name if loaded."""
    sklearn_exceptions = sys.modules.get("sklearn.exceptions")
    if sklearn_exceptions is None:
        return cls
    other = getattr(sklearn_exceptions, cls.__name__, None)
    if other is None:
        return cls
    if cls not in _bridged:
        _bridged[cls] = type(cls.__name__, (cls, other), {"__module__": cls.__module__})
    return _bridged[cls]
