"""scikit-learn's estimator protocol, without depending on scikit-learn."""

import functools
import inspect

from ._routing import MetadataRequesterMixin


@functools.lru_cache(maxsize=None)
def _init_param_names(init):
    """The sorted parameter names of the constructor ``init``, read from its signature once
    (a forest wraps each of its trees in an estimator, whose parameters it asks for:
    ``inspect.signature`` took 0.1 ms a tree)."""
    signature = inspect.signature(init)
    return tuple(sorted(name for name, p in signature.parameters.items()
                        if name != "self" and p.kind != p.VAR_KEYWORD))


class ParamsMixin(MetadataRequesterMixin):
    """``get_params``/``set_params`` from the ``__init__`` signature, as scikit-learn does,
    and its metadata routing (:mod:`jitree.model._routing`).

    ``__init__`` stores its arguments unchanged; validation happens in ``fit``.
    """

    @classmethod
    def _param_names(cls):
        return list(_init_param_names(cls.__init__))

    def get_params(self, deep=True):
        """The constructor parameters and their values, as a dict (scikit-learn's
        protocol; ``deep`` is accepted for compatibility: jitree estimators hold no
        sub-estimators)."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set constructor parameters by name; returns self. An unknown name is a
        ValueError. The new values take effect at the next ``fit``."""
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"Invalid parameter {name!r} for estimator "
                                 f"{type(self).__name__}. Valid parameters are: {valid!r}.")
            setattr(self, name, value)
        return self

    def __repr__(self):
        defaults = {name: p.default
                    for name, p in inspect.signature(type(self).__init__).parameters.items()}
        changed = []
        for name in self._param_names():
            value = getattr(self, name)
            default = defaults.get(name, inspect.Parameter.empty)
            if value is default or (type(value) is type(default) and value == default):
                continue
            changed.append(f"{name}={value!r}")
        return f"{type(self).__name__}({', '.join(changed)})"

    def __sklearn_is_fitted__(self):
        return hasattr(self, "tree_")


def given_parameters(scope):
    """The constructor parameters in ``scope`` (its ``locals()``): what a subclass with other
    defaults hands to its parent's constructor (scikit-learn reads the parameters from each
    class's own signature)."""
    return {name: value for name, value in scope.items() if name not in ("self", "__class__")}


def clone(estimator):
    """A new, unfitted estimator with deep copies of ``estimator``'s parameters and of its
    metadata requests (``set_fit_request``, ...), as ``sklearn.base.clone`` makes."""
    import copy

    new = type(estimator)(**copy.deepcopy(estimator.get_params(deep=False)))
    requests = getattr(estimator, "_metadata_request", None)
    if requests is not None:
        new._metadata_request = copy.deepcopy(requests)
    return new
