"""Split criteria: small pure kernels over sufficient statistics.

Statistics of a set of samples (``stats``, with its total weight ``weight``):

- classification: ``stats[c]`` is the weight of class ``c``;
- regression: ``stats[0] = sum(w * y)``, ``stats[1] = sum(w * y**2)`` (``poisson``:
  ``stats[1] = sum(w * y log y)``, from ``TreeData.target_term``); ``absolute_error`` and
  ``quantile`` add the node's pinball loss and quantile (:mod:`jitree.kernels.pinball`),
  which are not sums: the kernels that make nodes compute them from the samples.

Two kinds of function per criterion:

- the *node impurity* (``gini``, ``entropy``, ...) of one set of samples; it fills
  ``Tree.impurity``, drives ``impurity_threshold``, ``min_impurity_decrease`` and
  ``feature_importances_``;
- the *split score* of a candidate partition into left and right, to be maximised. For the
  impurity criteria it is a proxy that orders splits like the impurity decrease does but is
  cheaper (the parent's impurity is constant at a node).

A criterion travels to the kernels as a :class:`~jitree.kernels.records.Measure` record: a
built-in's code (:func:`builtin`), or a user's compiled ``impurity`` and/or ``score``
functions (codes ``USER_IMPURITY`` and ``USER_SCORE``; see :class:`jitree.Criterion`). The
dispatchers below (:func:`node_impurity`, :func:`split_score`, :func:`child_score`) are the
only places a criterion is evaluated; a new built-in criterion is one function here, a branch
in them and an entry in ``CRITERIA``. A user's functions are first-class function values of
one type (``IMPURITY_TYPE``, ``SCORE_TYPE``): the kernels are compiled once for all of them
and call them through a pointer, while the built-ins keep their inlined code.

Every kernel builds statistics with :func:`accumulate`.

**Multi-output** (y of shape (n, k)): a node's statistics are its outputs' statistics one
after another, each output's a *block* of the vector (``Measure.blocks``: block ``j`` is
``stats[blocks[j]:blocks[j + 1]]``):

- classification: ``stats[j * n_classes + c]``, the weight of class ``c`` of output ``j``
  (every output has ``n_classes`` slots, the most classes of any output; an output's unused
  slots stay 0, which no criterion notices); a sample adds its weight to the column of its
  class in each output (``TreeData.output_columns``);
- regression: ``stats[2 j] = sum(w * y_j)``, ``stats[2 j + 1] = sum(w * y_j**2)`` (poisson:
  ``sum(w * y_j log y_j)``); a sample adds its row of ``TreeData.outputs`` times its weight.

A node's impurity is the mean of its outputs' impurities and a split's score the sum of its
outputs' scores (the order of the mean impurity decrease), as in scikit-learn. The
multi-output criteria are :data:`MULTI_OUTPUT_CRITERIA`; a user's functions see the whole
vector.
"""

import functools
import math

import numba
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ._jit import borrowing, jit
from .records import Measure

GINI = 0
ENTROPY = 1
MISCLASSIFICATION = 2
GAIN_RATIO = 3
CART = 4
TWOING = 5
SQUARED_ERROR = 6
POISSON = 7
ABSOLUTE_ERROR = 8  # order statistics (jitree.kernels.pinball): the node's value is a
QUANTILE = 9        # weighted quantile of its targets, its impurity the pinball loss
ORDER_CRITERIA = (ABSOLUTE_ERROR, QUANTILE)
# a user's criterion: codes from USER_IMPURITY up (every built-in's code is below)
USER_IMPURITY = 64  # a user's node impurity: splits maximise -(W_l I(left) + W_r I(right))
USER_SCORE = 65     # a user's split score, maximised

# the types of a user's functions: (stats, weight) -> impurity and
# (left, weight_left, right, weight_right) -> score
IMPURITY_TYPE = types.float64(types.float64[::1], types.float64)
SCORE_TYPE = types.float64(types.float64[::1], types.float64, types.float64[::1], types.float64)
# the scores of a batch of threshold candidates of one node: (left sides' statistics, one
# column per candidate, their weights, the node's statistics, its weight, out) -> None;
# compiled per user criterion and size of statistics with the user's functions inlined (see
# jitree.model.criterion)
BATCH_TYPE = types.void(types.float64[:, ::1], types.float64[::1], types.float64[::1],
                        types.float64, types.float64[::1])
# the largest statistics vectors that a batch function keeps on the stack (stack_vector)
STACK_STATS = 64

CRITERIA = {
    "gini": GINI,
    "entropy": ENTROPY,
    "log_loss": ENTROPY,
    "misclassification": MISCLASSIFICATION,
    "gain_ratio": GAIN_RATIO,
    "cart": CART,
    "twoing": TWOING,
    "squared_error": SQUARED_ERROR,
    "poisson": POISSON,
    "absolute_error": ABSOLUTE_ERROR,
    "quantile": QUANTILE,
}
CLASSIFICATION_CRITERIA = ("gini", "entropy", "log_loss", "misclassification", "gain_ratio",
                           "cart", "twoing")
REGRESSION_CRITERIA = ("squared_error", "poisson", "absolute_error", "quantile")

_LOG2 = math.log(2.0)


def _no_impurity(stats, weight):
    return np.nan


def _no_score(left, weight_left, right, weight_right):
    return np.nan


def _no_batch(lefts, left_weights, node_stats, node_weight, out):
    out[:] = np.nan


@intrinsic
def stack_vector(typingctx, size):
    """A float64 C-contiguous vector of ``size`` entries (a compile-time constant) in the
    calling function's stack frame, uninitialised: the compiler can keep a small one in
    registers, which it cannot do with an array on the heap. It must not outlive the call
    (no kernel returns one)."""
    if not isinstance(size, types.IntegerLiteral) or size.literal_value < 0:
        return None
    n = size.literal_value
    vector = types.Array(types.float64, 1, "C")

    def codegen(context, builder, signature, args):
        data = cgutils.alloca_once(builder, context.get_value_type(types.float64), size=n)
        array = context.make_array(vector)(context, builder)
        itemsize = context.get_constant(types.intp, 8)
        context.populate_array(
            array, data=data, shape=cgutils.pack_array(builder, [
                context.get_constant(types.intp, n)]),
            strides=cgutils.pack_array(builder, [itemsize]), itemsize=itemsize,
            meminfo=None)
        return array._getvalue()

    return vector(size), codegen


class CompiledFunction:
    """A function compiled to a user type (``IMPURITY_TYPE`` or ``SCORE_TYPE``) as the
    kernels take it: its address, and its numba type made once. (A ``cfunc`` object is typed
    anew at every call of a kernel, 0.1 ms per record that holds one: several times the
    growth of a small tree.)"""

    def __init__(self, signature, function, cache=False):
        # numpy's error model, as every kernel: x / 0 is inf or nan (a NaN result then stops
        # the fit with an error naming the criterion), and loops over candidates vectorise
        self._cfunc = numba.cfunc(signature, cache=cache, error_model="numpy")(function)
        self._numba_type_ = types.FunctionType(signature)

    def __wrapper_address__(self):
        return self._cfunc.address

    def __reduce__(self):
        raise TypeError("a compiled criterion function cannot be pickled")


@functools.cache
def _placeholders():
    """Compiled functions of the user types that the built-in criteria carry (never called:
    every record then has one type, and the kernels one specialisation)."""
    return (CompiledFunction(IMPURITY_TYPE, _no_impurity, cache=True),
            CompiledFunction(SCORE_TYPE, _no_score, cache=True),
            CompiledFunction(BATCH_TYPE, _no_batch, cache=True))


_SINGLE_OUTPUT = np.zeros(0, dtype=np.int64)

# the built-in criteria of a multi-output tree (the others score one output: gain ratio,
# cart and twoing compare two sides' class distributions); the order criteria rank each
# output's targets (kernels.pinball), a node's loss the sum of its outputs'
MULTI_OUTPUT_CRITERIA = (GINI, ENTROPY, MISCLASSIFICATION, SQUARED_ERROR, POISSON,
                         ABSOLUTE_ERROR, QUANTILE)


def output_blocks(n_outputs, block_size):
    """``Measure.blocks`` of ``n_outputs`` outputs of ``block_size`` statistics each (the
    classes, or 2 for regression); empty for one output."""
    if n_outputs <= 1:
        return _SINGLE_OUTPUT
    return np.arange(n_outputs + 1, dtype=np.int64) * np.int64(block_size)


def builtin(code, blocks=_SINGLE_OUTPUT):
    """The :class:`Measure` of the built-in criterion ``code`` (``blocks``: see
    :func:`output_blocks`)."""
    impurity, score, batch = _placeholders()
    return Measure(np.int64(code), impurity, score, batch, np.zeros(1, dtype=np.uint8),
                   np.ascontiguousarray(blocks, dtype=np.int64))


def user_code(has_score):
    """The code of a user's criterion: USER_SCORE when it gives a score, else USER_IMPURITY."""
    return USER_SCORE if has_score else USER_IMPURITY


@functools.cache
def _default_impurities():
    """The node impurity of a user's score criterion that gives none: Gini index
    (classification) and variance (regression), compiled to the user type."""
    return (CompiledFunction(IMPURITY_TYPE, gini.py_func, cache=True),
            CompiledFunction(IMPURITY_TYPE, squared_error.py_func, cache=True))


def user_measure(impurity, score, batch, is_regression, blocks=_SINGLE_OUTPUT):
    """The :class:`Measure` of a user's criterion from its compiled functions
    (:class:`CompiledFunction` of ``IMPURITY_TYPE`` / ``SCORE_TYPE``, or None). A score
    scores the splits; else splits maximise -(W_l I(left) + W_r I(right)). The impurity
    fills the nodes' impurities (by default the Gini index or the variance)."""
    if impurity is None:
        impurity = _default_impurities()[1 if is_regression else 0]
    code = user_code(score is not None)
    return Measure(np.int64(code), impurity, _placeholders()[1] if score is None else score,
                   batch, np.zeros(1, dtype=np.uint8),
                   np.ascontiguousarray(blocks, dtype=np.int64))


@jit
def is_classification(criterion):
    """Whether ``criterion`` (a :class:`Measure`) is a built-in classification criterion."""
    return criterion.code <= TWOING


@jit
def _user_value(criterion, value):
    """A user's function's result, flagging NaN in ``criterion.invalid`` (the fit then
    stops with an error naming the criterion; a NaN never wins a comparison)."""
    if value != value:
        criterion.invalid[0] = 1
    return value


@jit
def weighted_total(weight, values):
    """sum_i weight[i] * values[i], added in index order: the same bits on every machine
    (a BLAS dot adds in blocks that depend on the library and the CPU, and the root's
    statistics and the regression targets' centre then differ in their last bits, enough to
    turn a near tie between two splits the other way)."""
    total = 0.0
    for i in range(np.uint64(weight.shape[0])):
        total += weight[i] * values[i]
    return total


@borrowing
def accumulate(stats, row, data, index_row, label_row, first, end):
    """Add the samples at positions ``first:end`` of a sorted segment (``index_row``, their
    classes ``label_row``) to row ``row`` of the statistics table ``stats``: the one
    accumulation of node statistics. Classification: the weight of each class; regression:
    sum of w y and sum of w y**2 (or of ``data.target_term``: w y log y for poisson). Returns
    the samples' total weight. Multi-output: each output's class column or the weighted rows
    of ``data.outputs`` (see the module's notes).

    One call per range of samples, not per sample: a call per sample (a record argument or
    arrays, inlined or not) cost more than the loop itself. Compiled without reference
    counting: the arrays it takes out of ``data`` were counted at every call (an Extra-Trees
    search calls it twice per pair)."""
    is_regression = data.is_regression
    target = data.target
    target_term = data.target_term
    has_term = target_term.shape[0] > 0
    sample_weight = data.sample_weight
    weighted = data.weighted
    outputs = data.outputs
    n_columns = outputs.shape[1]
    output_columns = data.output_columns
    n_outputs = output_columns.shape[1]
    total = 0.0
    w = 1.0
    for k in range(np.uint64(first), np.uint64(end)):  # unsigned: no wraparound fix-ups
        i = np.uint64(index_row[k])
        if weighted:
            w = sample_weight[i]
        if n_outputs > 0:
            for j in range(n_outputs):
                stats[row, output_columns[i, j]] += w
        elif n_columns > 0:
            for s in range(n_columns):
                stats[row, s] += w * outputs[i, s]
        elif is_regression:
            y = target[i]
            stats[row, 0] += w * y
            if has_term:
                stats[row, 1] += w * target_term[i]
            else:
                stats[row, 1] += w * y * y
        else:
            stats[row, label_row[k]] += w
        total += w
    return total


# accumulate compiled into its caller, for the category search's runs (one call per
# category present at a node; see jitree.kernels.categorical): a call passes the data
# record, which cost more than the loop there. The presorted random search's left side
# keeps the call (compiled in, no gain was measured).
inline_accumulate = borrowing(inline="always")(accumulate.py_func)


@jit
def gini(stats, weight):
    """G = 1 - sum_c p_c**2 with p_c = stats[c] / weight."""
    if weight <= 0.0:
        return 0.0
    total = 0.0
    for c in range(stats.shape[0]):
        total += stats[c] * stats[c]
    return 1.0 - total / (weight * weight)


@jit
def entropy(stats, weight):
    """H = -sum_c p_c log2 p_c (bits)."""
    if weight <= 0.0:
        return 0.0
    total = 0.0
    for c in range(stats.shape[0]):
        if stats[c] > 0.0:
            p = stats[c] / weight
            total -= p * math.log(p)
    return total / _LOG2


@jit
def misclassification(stats, weight):
    """M = 1 - max_c p_c."""
    if weight <= 0.0:
        return 0.0
    largest = 0.0
    for c in range(stats.shape[0]):
        if stats[c] > largest:
            largest = stats[c]
    return 1.0 - largest / weight


# Relative rounding error of a sum of squares per term summed: a variance below
# ROUNDING * n * mean_square is indistinguishable from 0 (4 eps per term: the two sums and
# the subtraction)
ROUNDING = 4.0 * np.finfo(np.float64).eps


@jit
def squared_error(stats, weight):
    """Weighted variance sum(w y**2)/W - (sum(w y)/W)**2.

    A variance within the rounding error of its two sums is 0: a node of equal targets is
    pure, however many samples it holds. The error grows with the number of terms, which
    ``weight`` stands for (the trees grow on weights whose largest is in [1, 2), see
    :class:`jitree.model.builder.Scaling`)."""
    if weight <= 0.0:
        return 0.0
    mean = stats[0] / weight
    mean_square = stats[1] / weight
    variance = mean_square - mean * mean
    if variance <= ROUNDING * max(weight, 1.0) * mean_square:
        return 0.0
    return variance


@jit
def poisson(stats, weight):
    """Half Poisson deviance per unit weight, sum(w (y log(y / m) - y + m)) / W with m the
    weighted mean: sum(w y log y) / W - m log m (the linear terms cancel). A node of positive
    weight and zero sum has an infinite deviance (no mean to predict a positive y with); a
    deviance within the rounding error of its two terms is 0."""
    if weight <= 0.0:
        return 0.0
    mean = stats[0] / weight
    if mean <= 0.0:
        return np.inf
    mean_term = mean * math.log(mean)
    deviance = stats[1] / weight - mean_term
    if deviance <= ROUNDING * max(weight, 1.0) * (abs(stats[1] / weight) + abs(mean_term)):
        return 0.0
    return deviance


@jit
def poisson_score(sum_left, weight_left, sum_right, weight_right):
    """Split score of poisson: S_l log(S_l / W_l) + S_r log(S_r / W_r) (S = sum of w y; the
    impurity decrease up to the node's constant), -inf when a side's sum is zero within
    rounding (its deviance would be infinite)."""
    limit = ROUNDING * max(weight_left + weight_right, 1.0) * abs(sum_left + sum_right)
    if sum_left <= limit or sum_right <= limit:
        return -np.inf
    return (sum_left * math.log(sum_left / weight_left)
            + sum_right * math.log(sum_right / weight_right))


@borrowing
def node_impurity(criterion, stats, weight):
    """Impurity of a node under ``criterion`` (a :class:`Measure`).

    ``cart`` and ``twoing`` score splits directly and have no node measure of their own: their
    nodes report the Gini index. ``gain_ratio`` nodes report entropy. A user's criterion
    reports its impurity function (for a score criterion without one: the Gini index or the
    variance, see :func:`user_measure`).
    """
    code = criterion.code
    blocks = criterion.blocks
    if blocks.shape[0] > 0 and code < USER_IMPURITY:
        total = 0.0
        for j in range(blocks.shape[0] - 1):
            total += output_impurity(code, stats[blocks[j]:blocks[j + 1]], weight)
        return total / (blocks.shape[0] - 1)
    return output_impurity(code, stats, weight) if code < USER_IMPURITY else \
        _user_value(criterion, criterion.impurity(stats, weight))


@jit
def output_impurity(code, stats, weight):
    """Impurity of one output's statistics under the built-in criterion ``code`` (see
    :func:`node_impurity`)."""
    if code == ENTROPY or code == GAIN_RATIO:
        return entropy(stats, weight)
    if code == MISCLASSIFICATION:
        return misclassification(stats, weight)
    if code == SQUARED_ERROR:
        return squared_error(stats, weight)
    if code == POISSON:
        return poisson(stats, weight)
    if code == ABSOLUTE_ERROR or code == QUANTILE:
        return pinball_impurity(code, stats, weight)
    return gini(stats, weight)


@jit
def pinball_impurity(code, stats, weight):
    """Mean pinball loss of a node (``stats[2]``: its summed loss); absolute error is twice
    the loss at alpha = 0.5: the mean absolute deviation from the median."""
    if weight <= 0.0:
        return 0.0
    loss = stats[2] / weight
    return 2.0 * loss if code == ABSOLUTE_ERROR else loss


@jit
def node_value(code, stats, weight):
    """The value of a regression node (what it predicts): the weighted mean target, or for
    the order criteria its quantile (``stats[3]``)."""
    if code == ABSOLUTE_ERROR or code == QUANTILE:
        return stats[3]
    return stats[0] / weight


@jit(inline="always")
def xlogx(v):
    """v log v (nats), for v > 0."""
    return v * math.log(v)


@jit(inline="always")
def table_xlogx(v, table):
    """:func:`xlogx` of ``v`` > 0, looked up in ``table`` (:func:`fill_xlogx`) when ``v``
    is a whole number below its length: the same number, without the logarithm."""
    if v < table.shape[0]:  # (converted only then: a float beyond int64 has no integer)
        m = np.int64(v)
        if np.float64(m) == v:
            return table[m]
    return xlogx(v)


@jit
def fill_xlogx(table):
    """``table[m] = m log m`` (:func:`xlogx`; 0 at m = 0), the lookups of
    :func:`table_xlogx`: a side's class weights are whole numbers unweighted, under
    whole-number weights and under a forest's bootstrap counts (see
    :class:`jitree.model.builder.Scaling`), and entropy's split score then costs a lookup
    per class, where a logarithm and a division took 5 times gini's time per candidate (a
    tree on 100k x 20, 3 classes: 0.56-0.58 s against 0.12 s for gini).

    Each entry adds 0 times the one before to m: the loop cannot run as vector code, whose
    logarithm (a vector math library's, where numba finds one) may differ in its last bit
    from the scalar one the scans call where the table has no entry."""
    table[0] = 0.0
    previous = 0.0
    for m in range(1, table.shape[0]):
        previous = xlogx(np.float64(m) + 0.0 * previous)
        table[m] = previous


@jit(inline="always")
def table_entropy_sum(stats, weight, table):
    """weight * H(stats) in nats, W log W - sum_c s_c log s_c, each term through
    :func:`table_xlogx`: bit for bit :func:`entropy_sum`, which is this without a table."""
    total = table_xlogx(weight, table)
    for c in range(stats.shape[0]):
        if stats[c] > 0.0:
            total -= table_xlogx(stats[c], table)
    return total


@jit
def entropy_sum(stats, weight):
    """weight * H(stats) in nats as entropy's split score adds it up: W log W - sum_c s_c
    log s_c, one logarithm per class and no division (:func:`table_entropy_sum` looks the
    terms up). The textbook form, :func:`_weighted_entropy_sum`, is the same number up to
    rounding; entropy's score took it until its scans looked up their terms, and trees whose
    best splits tie within rounding may differ between the two."""
    total = xlogx(weight)
    for c in range(stats.shape[0]):
        if stats[c] > 0.0:
            total -= xlogx(stats[c])
    return total


@jit
def _weighted_entropy_sum(stats, weight):
    """weight * H(stats) in nats: sum_c -s_c log(s_c / weight) (gain_ratio's children)."""
    total = 0.0
    for c in range(stats.shape[0]):
        if stats[c] > 0.0:
            total -= stats[c] * math.log(stats[c] / weight)
    return total


@jit
def _class_distance(left, right, weight_left, weight_right):
    """sum_c |P(c | left) - P(c | right)|."""
    total = 0.0
    for c in range(left.shape[0]):
        total += abs(left[c] / weight_left - right[c] / weight_right)
    return total


@jit
def split_score(criterion, left, right, weight_left, weight_right, parent_entropy):
    """Score of the partition (left, right) under ``criterion`` (a :class:`Measure`); the best
    split maximises it. A user's score: ``score(left, W_l, right, W_r)``; a user's impurity I:
    -(W_l I(left) + W_r I(right)); a built-in: :func:`builtin_score`. Both weights must be
    positive."""
    code = criterion.code
    if code == USER_SCORE:
        return _user_value(criterion, criterion.score(left, weight_left, right, weight_right))
    if code == USER_IMPURITY:
        return -(weight_left * _user_value(criterion, criterion.impurity(left, weight_left))
                 + weight_right * _user_value(criterion,
                                              criterion.impurity(right, weight_right)))
    blocks = criterion.blocks
    if blocks.shape[0] > 0:
        return multi_output_score(code, blocks, left, right, weight_left, weight_right)
    return builtin_score(code, left, right, weight_left, weight_right, parent_entropy)


@jit
def multi_output_score(code, blocks, left, right, weight_left, weight_right):
    """Score of the partition (left, right) of a multi-output node under the built-in
    criterion ``code`` (one of :data:`MULTI_OUTPUT_CRITERIA`): the sum of each output's
    :func:`builtin_score`, its terms added column by column (gini and entropy are sums over
    every class column, whatever its output; no view of a block is made: this runs per
    candidate)."""
    n_blocks = blocks.shape[0] - 1
    total = 0.0
    if code == GINI:
        left_sq = 0.0
        right_sq = 0.0
        for c in range(blocks[n_blocks]):
            left_sq += left[c] * left[c]
            right_sq += right[c] * right[c]
        return left_sq / weight_left + right_sq / weight_right
    if code == ENTROPY:
        for j in range(n_blocks):
            # -(W_l H_l + W_r H_r) in nats of each output, as builtin_score's (one output:
            # its number bit for bit)
            entropy_left = xlogx(weight_left)
            entropy_right = xlogx(weight_right)
            for c in range(blocks[j], blocks[j + 1]):
                if left[c] > 0.0:
                    entropy_left -= xlogx(left[c])
                if right[c] > 0.0:
                    entropy_right -= xlogx(right[c])
            total += -(entropy_left + entropy_right)
        return total
    for j in range(n_blocks):
        first = blocks[j]
        if code == SQUARED_ERROR:
            total += (left[first] * left[first] / weight_left
                      + right[first] * right[first] / weight_right)
        elif code == POISSON:
            total += poisson_score(left[first], weight_left, right[first], weight_right)
        else:  # MISCLASSIFICATION
            left_max = 0.0
            right_max = 0.0
            for c in range(first, blocks[j + 1]):
                left_max = max(left_max, left[c])
                right_max = max(right_max, right[c])
            total += left_max + right_max
    return total


@jit
def builtin_score(code, left, right, weight_left, weight_right, parent_entropy):
    """Score of the partition (left, right) under the built-in criterion ``code`` (an int:
    the scans call it once per candidate, and a :class:`Measure` record, which holds an
    array, would cost a reference count update per call).

    - gini: sum_c l_c**2 / W_l + sum_c r_c**2 / W_r (= W - W_l G_l - W_r G_r)
    - entropy: -(W_l H_l + W_r H_r)
    - misclassification: max_c l_c + max_c r_c (weight classified correctly)
    - gain_ratio: (H - (W_l H_l + W_r H_r) / W) / SplitInfo, SplitInfo = H(W_l/W, W_r/W)
    - cart: 2 (W_l/W)(W_r/W) sum_c |P(c|l) - P(c|r)|
    - twoing: (W_l/W)(W_r/W)/4 (sum_c |P(c|l) - P(c|r)|)**2
    - squared_error: S_l**2 / W_l + S_r**2 / W_r with S = sum(w y) (= W - W_l V_l - W_r V_r, up to
      a constant)
    - poisson: S_l log(S_l / W_l) + S_r log(S_r / W_r) (:func:`poisson_score`)

    ``parent_entropy`` (bits) is used by gain_ratio only.
    """
    if code == GINI:
        left_sq = 0.0
        right_sq = 0.0
        for c in range(left.shape[0]):
            left_sq += left[c] * left[c]
            right_sq += right[c] * right[c]
        return left_sq / weight_left + right_sq / weight_right
    if code == SQUARED_ERROR:
        return left[0] * left[0] / weight_left + right[0] * right[0] / weight_right
    if code == POISSON:
        return poisson_score(left[0], weight_left, right[0], weight_right)
    if code == ENTROPY:
        return -(entropy_sum(left, weight_left) + entropy_sum(right, weight_right))
    if code == MISCLASSIFICATION:
        left_max = 0.0
        right_max = 0.0
        for c in range(left.shape[0]):
            if left[c] > left_max:
                left_max = left[c]
            if right[c] > right_max:
                right_max = right[c]
        return left_max + right_max
    weight = weight_left + weight_right
    fraction_left = weight_left / weight
    fraction_right = weight_right / weight
    if code == GAIN_RATIO:
        children = (_weighted_entropy_sum(left, weight_left)
                    + _weighted_entropy_sum(right, weight_right)) / (weight * _LOG2)
        split_info = -(fraction_left * math.log(fraction_left)
                       + fraction_right * math.log(fraction_right)) / _LOG2
        return (parent_entropy - children) / split_info
    distance = _class_distance(left, right, weight_left, weight_right)
    if code == CART:
        return 2.0 * fraction_left * fraction_right * distance
    return fraction_left * fraction_right / 4.0 * distance * distance  # TWOING


@jit
def child_score(criterion, stats, weight):
    """One child's term of the split score for the criteria whose score is a sum over the
    children (gini, entropy, misclassification, squared_error, poisson): :func:`split_score` of a
    binary split is the sum of the two terms, and a multiway split's score is the sum over all
    its children, so both compare on one scale. ``weight`` must be positive. A user's
    impurity I: -W I."""
    code = criterion.code
    if code == USER_IMPURITY:
        return -weight * _user_value(criterion, criterion.impurity(stats, weight))
    blocks = criterion.blocks
    if blocks.shape[0] > 0:
        total = 0.0
        for j in range(blocks.shape[0] - 1):
            total += output_child_score(code, stats[blocks[j]:blocks[j + 1]], weight)
        return total
    return output_child_score(code, stats, weight)


@jit
def output_child_score(code, stats, weight):
    """One output's term of :func:`child_score` under the built-in criterion ``code``."""
    if code == GINI:
        total = 0.0
        for c in range(stats.shape[0]):
            total += stats[c] * stats[c]
        return total / weight
    if code == SQUARED_ERROR:
        return stats[0] * stats[0] / weight
    if code == POISSON:
        if stats[0] <= 0.0:
            return -np.inf
        return stats[0] * math.log(stats[0] / weight)
    if code == ENTROPY:
        return -entropy_sum(stats, weight)
    if code == GAIN_RATIO:
        return -_weighted_entropy_sum(stats, weight)
    largest = 0.0  # MISCLASSIFICATION
    for c in range(stats.shape[0]):
        if stats[c] > largest:
            largest = stats[c]
    return largest


@jit
def gain_ratio_of(children_entropy_sum, split_information, node_weight, parent_entropy):
    """C4.5's gain ratio from the children's summed ``-child_score`` (nats, weighted) and
    the split information sum_j -W_j log W_j / W ... in nats too: (H - sum_j W_j H_j / W) /
    SplitInfo, both in bits."""
    children = children_entropy_sum / (node_weight * _LOG2)
    return (parent_entropy - children) / (split_information / _LOG2)


# criteria a multiway (one child per category) split can use
MULTIWAY_CRITERIA = (GINI, ENTROPY, MISCLASSIFICATION, GAIN_RATIO, SQUARED_ERROR, POISSON,
                     USER_IMPURITY)


def criterion_code(name, task):
    """Integer code of a criterion name for ``task`` ('classification' or 'regression')."""
    allowed = CLASSIFICATION_CRITERIA if task == "classification" else REGRESSION_CRITERIA
    if not isinstance(name, str) or name not in allowed:
        raise ValueError(
            f"criterion must be one of {', '.join(map(repr, allowed))} for {task}, got {name!r}"
        )
    return np.int64(CRITERIA[name])
