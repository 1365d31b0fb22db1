"""scikit-learn's metadata routing on jitree's estimators.

With ``sklearn.set_config(enable_metadata_routing=True)``, scikit-learn's meta-estimators
(``Pipeline``, ``GridSearchCV``, ``cross_validate``, ...) pass metadata such as
``sample_weight`` only to the methods that request it: ``set_fit_request(sample_weight=True)``
and ``set_score_request(sample_weight=True)`` make those requests, ``get_metadata_routing()``
reports them. scikit-learn is an optional dependency: it is imported by these methods only,
never by ``import jitree``.

The requests are kept as scikit-learn keeps them, a ``MetadataRequest`` in the
``_metadata_request`` attribute, so that ``sklearn.base.clone`` (which ``GridSearchCV`` calls)
and :func:`jitree.clone` carry them to the copies.
"""

# scikit-learn's "leave this request as it is" value, the default of set_{method}_request
UNCHANGED = "$UNCHANGED$"

# The metadata each method takes and can request (the parameters of fit and score besides X
# and y, in every jitree estimator). A request left unset is scikit-learn's default, None:
# a meta-estimator refuses to route the metadata there until the user decides.
REQUESTABLE = {"fit": ("sample_weight",), "score": ("sample_weight",)}


def _metadata_routing():
    """scikit-learn's ``sklearn.utils.metadata_routing`` module, or an ImportError naming the
    extra to install."""
    try:
        from sklearn.utils import metadata_routing
    except ImportError:
        raise ImportError("metadata routing is a scikit-learn feature: install the 'sklearn' "
                          "extra (pip install 'jitree[sklearn]')") from None
    return metadata_routing


class MetadataRequesterMixin:
    """``set_fit_request``, ``set_score_request`` and ``get_metadata_routing``, as
    scikit-learn's estimators have them."""

    def set_fit_request(self, *, sample_weight=UNCHANGED):
        """Request (or not) that meta-estimators pass ``sample_weight`` to ``fit``.

        Only with ``sklearn.set_config(enable_metadata_routing=True)``.

        Parameters
        ----------
        sample_weight : bool, None or str, default UNCHANGED
            True: passed when given to the meta-estimator; False: never passed; None: an
            error if given (scikit-learn's default); a str: passed when given to the
            meta-estimator under that name (an alias).

        Returns
        -------
        self
        """
        return self._set_requests("fit", sample_weight=sample_weight)

    def set_score_request(self, *, sample_weight=UNCHANGED):
        """Request (or not) that meta-estimators pass ``sample_weight`` to ``score``.

        As :meth:`set_fit_request`, for ``score``.
        """
        return self._set_requests("score", sample_weight=sample_weight)

    def get_metadata_routing(self):
        """The metadata this estimator requests, as a scikit-learn ``MetadataRequest``
        (a copy: changing it changes nothing here)."""
        routing = _metadata_routing()
        stored = getattr(self, "_metadata_request", None)
        if stored is not None:
            return routing.get_routing_for_object(stored)
        # the owner is named by its class, as every scikit-learn release since routing
        # came (1.3) reads it
        request = routing.MetadataRequest(owner=type(self).__name__)
        for method, params in REQUESTABLE.items():
            for param in params:
                getattr(request, method).add_request(param=param, alias=None)
        return request

    def _set_requests(self, method, **aliases):
        _metadata_routing()  # the ImportError naming the extra, without scikit-learn
        from sklearn import get_config

        if not get_config().get("enable_metadata_routing", False):
            raise RuntimeError(f"set_{method}_request is only available when metadata routing "
                               "is enabled: sklearn.set_config(enable_metadata_routing=True)")
        request = self.get_metadata_routing()
        for param, alias in aliases.items():
            if isinstance(alias, str) and alias == UNCHANGED:
                continue
            # scikit-learn checks the value (True, False, None or an identifier)
            getattr(request, method).add_request(param=param, alias=alias)
        self._metadata_request = request
        return self
