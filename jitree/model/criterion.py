"""Users' own split criteria, compiled into the split search."""

import warnings

import numpy as np
from numba.core.registry import CPUDispatcher

from ..kernels import criteria
from .validation import user_stacklevel


class Criterion:
    """A split criterion made of your own ``@numba.njit`` functions.

    Pass it as ``criterion=`` to any jitree tree or forest. The functions run inside the
    compiled split search (no Python call per candidate or per node): they are compiled to
    first-class functions of a fixed type, so jitree's kernels are compiled once for every
    criterion and a new criterion costs only its own compilation.

    Parameters
    ----------
    impurity : @njit function ``(stats, weight) -> float``, optional
        The impurity of a set of samples, lower is purer (like Gini). Splits then maximise
        the weighted impurity decrease, ``-(W_l impurity(left) + W_r impurity(right))``; it
        also fills ``Tree.impurity`` and drives ``min_impurity_decrease``,
        ``impurity_threshold``, cost-complexity pruning and feature importances.
    score : @njit function ``(left, left_weight, right, right_weight) -> float``, optional
        The score of a split directly, higher is better (like twoing). Nodes then report
        ``impurity`` when given, else the Gini index (classification) or the variance
        (regression).
    name : str, optional
        The criterion's name in ``repr``, messages and saved files (default: the
        function's name).

    Notes
    -----
    **Statistics.** ``stats`` is a contiguous float64 vector and ``weight`` the set's total
    sample weight:

    - classification: ``stats[c]`` is the weight of class ``c`` (classes in the order of
      ``classes_``);
    - regression: ``stats[0]`` is the sum of ``w * y`` and ``stats[1]`` the sum of
      ``w * y**2`` (the weight sum is ``weight``);
    - multi-output (y of k columns): the outputs' statistics one after another. A
      classifier's ``stats[j * n_classes + c]`` is the weight of class ``c`` of output ``j``
      (``n_classes``: the most classes of any output; unused slots are 0); a regressor's
      ``stats[2 * j]`` and ``stats[2 * j + 1]`` are output ``j``'s sums of ``w * y_j`` and
      ``w * y_j**2``. A multi-output tree needs the ``impurity`` function (its nodes'
      impurities).

    The functions see the samples' own targets and weights (no rescaling). Both ``weight``
    arguments of a split are positive. A function must return a float; it follows NumPy's
    division rules (``x / 0`` is inf or NaN, not an exception), and a NaN impurity or score
    stops the fit with a ValueError naming the criterion. An impurity is >= 0, and 0 means
    pure: a node of impurity 0 or less (``impurity_threshold`` or less) is a leaf, so shift
    a measure that takes negative values (Gini's ``-sum p**2`` as ``1 - sum p**2``).

    Numba cannot pass an exception out of the compiled split search: a function that raises
    there is taken as returning NaN (numba prints the exception), which stops the fit with a
    ValueError naming the criterion. Before each tree is grown, jitree also calls the
    functions once on the root's statistics (the score on two halves of them), where an
    exception (with its message), or an impurity below 0, infinite or NaN, stops the fit
    with a ValueError.

    A fitted model predicts, saves and loads without the criterion: the saved file records
    its name only, and a loaded model refits only with the criterion passed again.
    ``categorical_split="multiway"`` needs an ``impurity`` (a multiway split is scored as
    the sum of its children's weighted impurities).
    """

    def __init__(self, impurity=None, score=None, name=None):
        if impurity is None and score is None:
            raise ValueError("Criterion needs an impurity function, a score function or both")
        for role, function in (("impurity", impurity), ("score", score)):
            if function is not None and not isinstance(function, CPUDispatcher):
                raise TypeError(f"Criterion {role} must be a numba @njit function, got "
                                f"{function!r}")
        self.impurity = impurity
        self.score = score
        if name is None:
            name = (impurity if impurity is not None else score).py_func.__name__
        if not isinstance(name, str) or not name:
            raise TypeError(f"Criterion name must be a non-empty string, got {name!r}")
        self.name = name
        self._compiled = None

    def __repr__(self):
        return f"Criterion({self.name!r})"

    def __deepcopy__(self, memo):
        return self  # immutable once made: clones of an estimator share it

    def __getstate__(self):
        return {**self.__dict__, "_compiled": None}  # machine code is rebuilt on use

    def _functions(self):
        """The impurity and the score compiled to the kernels' first-class function types
        (once)."""
        if self._compiled is None:
            self._compiled = (
                _compile(self, _guarded(self.impurity), criteria.IMPURITY_TYPE, "impurity",
                         "(stats, weight)"),
                _compile(self, _guarded(self.score, score=True), criteria.SCORE_TYPE, "score",
                         "(left, left_weight, right, right_weight)"),
                {})
        return self._compiled

    def _batch(self, n_stats):
        """The scoring of a batch of threshold candidates (``criteria.BATCH_TYPE``) with the
        user's functions inlined, for statistics vectors of ``n_stats`` entries (compiled
        once per size: the threshold scans call it once per batch, not a function per
        candidate)."""
        batches = self._functions()[2]
        size = n_stats if 0 < n_stats <= criteria.STACK_STATS else 0
        if size not in batches:
            batches[size] = _compile(
                self, _batch_scorer(self.impurity, self.score, size), criteria.BATCH_TYPE,
                "score" if self.score is not None else "impurity",
                "(left, left_weight, right, right_weight)" if self.score is not None
                else "(stats, weight)")
        return batches[size]

    def check_root(self, stats, weight):
        """Call the functions once on the root's statistics ``stats`` and ``weight`` (the
        score on two halves of them), before a tree is grown: an exception, or an impurity
        that is not a number >= 0, raises a ValueError naming the criterion (see the Notes).
        A division by zero counts as NumPy's inf or NaN, as in the compiled search."""
        stats = np.ascontiguousarray(stats, dtype=np.float64)
        half = stats / 2.0
        for role, function, arguments in (
                ("impurity", self.impurity, (stats, float(weight))),
                ("score", self.score, (half, weight / 2.0, half.copy(), weight / 2.0))):
            if function is None:
                continue
            try:
                value = float(function(*arguments))
            except ZeroDivisionError:
                continue  # inf or NaN in the compiled search (NumPy's rules)
            except Exception as error:
                raise ValueError(
                    f"criterion {self.name!r}: its {role} function raised "
                    f"{type(error).__name__}: {error} on the root's statistics; numba cannot "
                    "pass an exception out of the compiled split search, so it must return "
                    "a number") from error
            if role == "impurity" and not 0.0 <= value < np.inf:
                raise ValueError(
                    f"criterion {self.name!r}: its impurity is {value} at the root; an "
                    "impurity must be a number >= 0, 0 for a pure set (a node of impurity 0 "
                    "or less is a leaf): shift or rescale the measure")

    def measure(self, is_regression, blocks=None, n_stats=0):
        """The :class:`~jitree.kernels.records.Measure` record the kernels take (``blocks``:
        a multi-output tree's, see :func:`jitree.kernels.criteria.output_blocks`;
        ``n_stats``: the size of the tree's statistics vectors, 0 when unknown)."""
        impurity, score, _ = self._functions()
        batch = self._batch(n_stats)
        if blocks is None:
            return criteria.user_measure(impurity, score, batch, is_regression)
        if blocks.shape[0] and self.impurity is None:
            raise ValueError(f"criterion {self.name!r} gives a score but no impurity; a "
                             "multi-output tree needs the impurity function too (its nodes' "
                             "impurities)")
        return criteria.user_measure(impurity, score, batch, is_regression, blocks)


def _guarded(function, score=False):
    """``function`` (the user's impurity, or with ``score`` its score; or None) as the
    kernels call it: NaN where it raises. Numba cannot pass an exception out of the
    compiled search; a NaN stops the fit with a ValueError naming the criterion."""
    if function is None:
        return None
    import numba

    # called, not inlined at numba's IR level: an exception raised by inlined code is not
    # caught; NumPy's division rules, as the compiled search's
    inner = numba.njit(error_model="numpy")(function.py_func)
    if score:
        def guarded(left, left_weight, right, right_weight):
            try:
                return inner(left, left_weight, right, right_weight)
            except Exception:
                return np.nan
    else:
        def guarded(stats, weight):
            try:
                return inner(stats, weight)
            except Exception:
                return np.nan
    return guarded


def _batch_scorer(impurity, score, n_stats):
    """A function of ``criteria.BATCH_TYPE`` that scores threshold candidates with the user's
    functions: ``out[i]`` is the score of the split whose left side has the statistics
    ``lefts[:, i]`` and weight ``left_weights[i]``, the right side the rest of the node
    (same arithmetic as :func:`jitree.kernels.criteria.split_score`).

    The user's functions are inlined into it at numba's IR level (``inline="always"``), so
    that the compiler sees one loop over the candidates (a call per candidate and side cost
    as much as the scan). With ``n_stats`` > 0 the two sides' vectors are that size, fixed
    at compile time, on the stack: the compiler then keeps them in registers and computes
    several candidates at once in vector instructions (a Gini index over 3 classes: 6.3 ns
    a candidate with vectors on the heap, 0.8 ns so). ``n_stats`` = 0: vectors of the
    node's size, made once per batch. A node of another size than ``n_stats`` scores NaN
    (never happens: the tree builder asks for its own size)."""
    import numba

    stack_vector = criteria.stack_vector
    if score is not None:
        pair_score = numba.njit(inline="always")(score.py_func)
    else:
        side_impurity = numba.njit(inline="always")(impurity.py_func)

        def pair_score(left, weight_left, right, weight_right):
            return -(weight_left * side_impurity(left, weight_left)
                     + weight_right * side_impurity(right, weight_right))

        pair_score = numba.njit(inline="always")(pair_score)

    if n_stats > 0:
        def sides(node_stats):
            return stack_vector(n_stats), stack_vector(n_stats)
    else:
        def sides(node_stats):
            return np.empty(node_stats.shape[0]), np.empty(node_stats.shape[0])

    sides = numba.njit(inline="always")(sides)

    def batch(lefts, left_weights, node_stats, node_weight, out):
        left, right = sides(node_stats)
        if (left.shape[0] != node_stats.shape[0] or lefts.shape[0] != left.shape[0]
                or lefts.shape[1] < out.shape[0] or left_weights.shape[0] < out.shape[0]):
            out[:] = np.nan
            return
        # NaN first: where the user's code raises (inlined, numba cannot catch it), the
        # batch stops and its candidates from there on score NaN, which stops the fit
        out[:] = np.nan
        for i in range(out.shape[0]):
            weight_left = left_weights[i]
            for s in range(left.shape[0]):
                left[s] = lefts[s, i]
                right[s] = node_stats[s] - lefts[s, i]
            out[i] = pair_score(left, weight_left, right, node_weight - weight_left)

    return batch


def _compile(criterion, function, signature, role, arguments):
    if function is None:
        return None
    try:
        return criteria.CompiledFunction(signature, getattr(function, "py_func", function))
    except Exception as error:  # typing errors of the user's code, of any numba class
        raise TypeError(f"criterion {criterion.name!r}: its {role} function must take "
                        f"{arguments} (float64 vectors and floats) and return a float; "
                        f"compiling it failed: {str(error).splitlines()[0]}") from None


def criterion_of(criterion, task):
    """(what the growth parameters keep, integer code) of an estimator's ``criterion``
    parameter: a built-in name becomes its code, a :class:`Criterion` stays itself."""
    if isinstance(criterion, Criterion):
        criterion._functions()  # compiled now: errors in the user's code surface here
        return criterion, criteria.user_code(criterion.score is not None)
    if task == "regression" and isinstance(criterion, str) and criterion == "friedman_mse":
        # Friedman's improvement, W_l W_r / (W_l + W_r) (mean_l - mean_r)^2, is the decrease
        # of the squared error: for one output, the same splits. Accepted for code written
        # for scikit-learn, whose trees take it (deprecated there since 1.9) as
        # squared_error for any number of outputs.
        warnings.warn('criterion="friedman_mse" is grown as "squared_error" (for one output '
                      'Friedman\'s improvement is the decrease of the squared error, so the '
                      'splits are the same) and may be refused in a later version; pass '
                      'criterion="squared_error"', FutureWarning, stacklevel=user_stacklevel())
        criterion = "squared_error"
    code = int(criteria.criterion_code(criterion, task))
    return code, code
