"""IF-THEN rules read off a fitted tree: one rule per leaf.

A leaf's rule is the conjunction of the tests on its root-to-leaf path. Tests on the same
feature are merged into the tightest ones:

- threshold tests (numeric and ordinal features), per direction: ``x <= 5`` then ``x <= 3``
  gives ``x <= 3``; ``x > 1`` then ``x > 2`` gives ``x > 2``; so a rule holds at most one lower
  bound (``>``) and one upper bound (``<=``) per feature. Both bounds of a feature stay two
  conditions, lower bound first (``x > 3 AND x <= 5``), so that every condition is one test a
  reader can check. An ordinal bound prints its level (``size <= medium``).
- category tests (subsets and multiway branches): the categories allowed by every test, as one
  condition ``color in {red, blue}`` or, when that is shorter, ``color not in {green}`` (ties:
  the form of the last test); one category as ``color == red`` / ``color != red``.

Features appear in the order the path first tests them. Missing values (NaN; for a
categorical feature also a value that is not one of its codes, an unseen category) satisfy a
condition when every test on the path sends them the rule's way; the text shows it by
`` (or missing)`` where :mod:`jitree.model.export` marks the missing branch (every category
test; threshold tests of features with missing values in training), and
:meth:`Rule.matches` always applies it, so that it agrees with ``predict``.
"""

from dataclasses import dataclass

import numpy as np

from .export import (
    ALL_VALUES,
    MISSING_MARK,
    _category_labels,
    _check_precision,
    _class_labels,
    _codes_in_set,
    _feature_names,
    _fitted_tree,
    _format_number,
    _impurity_name,
    _listed,
    _majority_labels,
    _missing_marked,
    _multiway_branches,
    _ordinal_level,
    _output_columns,
    _set_text,
    _shown_categories,
)
from .tree import FEATURE_CATEGORICAL, FEATURE_ORDINAL, SPLIT_MULTIWAY, SPLIT_SUBSET, TREE_LEAF
from .validation import _is_dataframe, frame_to_numpy

_ENCODED_X = ("Rule.matches takes X as the tree sees it, numbers in every column: a categorical "
              "or ordinal feature as its codes (k for categories_[f][k]), NaN when missing")


def _numeric_matrix(X):
    """X as float64 (float32 rows compare as predict compares them), or a TypeError naming the
    column that is not numeric."""
    if _is_dataframe(X):
        for column, dtype in zip(X.columns, X.dtypes, strict=True):
            if getattr(dtype, "kind", "O") not in "biuf":
                raise TypeError(f"column {column!r} of X has dtype {dtype}; {_ENCODED_X}")
        X = frame_to_numpy(X)
    try:
        return np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise TypeError(f"X is not numeric ({error}); {_ENCODED_X}") from None

# stack marker of rules(): leave a node, restoring its feature's merged tests
_RESTORE = object()


@dataclass(frozen=True)
class Condition:
    """One test of a rule on column ``feature`` of X.

    Operators: ``"<="`` / ``">"`` compare with ``threshold``; ``"in"`` / ``"not in"`` test the
    category code against ``codes`` (``"not in"``: a code of the feature, ``0 ..
    n_categories - 1``, that is not in ``codes``). ``missing``: whether a missing value
    satisfies the test (NaN; for a category test, any value that is not a category code).
    ``labels``: printed names of ``codes``, or the ordinal level of a bound (one name);
    ``show_missing``: whether the text marks ``missing``.
    """

    feature: int
    name: str
    operator: str  # "<=", ">", "in" or "not in"
    threshold: float | None = None
    codes: tuple = ()
    n_categories: int = 0
    missing: bool = False
    labels: tuple = ()
    show_missing: bool = False

    def holds(self, X):
        """Boolean mask of the rows of the 2-D float array X that pass the test."""
        column = X[:, self.feature]
        if self.operator in ("<=", ">"):
            passed = column <= self.threshold if self.operator == "<=" \
                else column > self.threshold
            return passed | np.isnan(column) if self.missing else passed
        # the category code rule of jitree.kernels.predict.category_code
        with np.errstate(invalid="ignore"):
            is_code = (column >= 0) & (column < self.n_categories) & (column == np.floor(column))
        listed = np.isin(column, np.asarray(self.codes, dtype=np.float64))
        passed = listed if self.operator == "in" else is_code & ~listed
        return passed | ~is_code if self.missing else passed

    def to_text(self, decimals=4):
        """The condition as text, e.g. ``petal_length <= 2.45`` or ``city in {Oslo, Tokyo}``
        (with ``(or missing)`` when missing values satisfy it); thresholds with at most
        ``decimals`` decimals."""
        mark = MISSING_MARK if self.missing and self.show_missing else ""
        if self.operator in ("in", "not in"):
            if not self.codes and self.operator == "in" and self.missing:
                return f"{self.name} is missing"
            shown = list(self.labels) if self.labels else [str(code) for code in self.codes]
            return _set_text(self.name, shown, negated=self.operator == "not in") + mark
        if self.threshold >= ALL_VALUES:  # the split of the values from the missing ones
            return f"{self.name} {'is not missing' if self.operator == '<=' else 'is missing'}"
        shown = self.labels[0] if self.labels else _format_number(self.threshold, decimals)
        return f"{self.name} {self.operator} {shown}{mark}"

    def __str__(self):
        return self.to_text()


@dataclass(frozen=True)
class Rule:
    """The rule of one leaf.

    Attributes
    ----------
    conditions : tuple of Condition
        The merged tests of the root-to-leaf path (empty when the root is the leaf).
    prediction : object
        Classifiers: the leaf's class label (the one ``predict`` returns), or its entry of
        ``class_names`` when given. Regressors: the leaf's mean target. A multi-output tree's:
        a tuple of one such prediction per output (the row ``predict`` returns).
    support : int
        Training samples reaching the leaf.
    weighted_support : float
        Their total (sample- and class-) weight.
    support_fraction : float
        ``support`` over all training samples.
    confidence : float, tuple of float or None
        Classifiers: the leaf's purity, the largest weighted class fraction (a tuple of one per
        output for a multi-output tree). Regressors: None (a mean has no confidence of that
        kind; ``impurity`` gives the spread).
    impurity : float
        The leaf's impurity under the fitting criterion (for regressors, the weighted variance
        of the target; for a multi-output tree, the mean of its outputs' impurities).
    impurity_name : str
        What ``impurity`` measures ("gini", "entropy", "squared_error", ...).
    leaf : int
        Node id of the leaf in ``model.tree_``.
    """

    conditions: tuple
    prediction: object
    support: int
    weighted_support: float
    support_fraction: float
    confidence: float | tuple | None
    impurity: float
    impurity_name: str
    leaf: int

    def matches(self, X):
        """Boolean mask of the rows of X satisfying every condition.

        X is the matrix the tree sees: 2-D, columns in the order the model was fitted on
        (a DataFrame holding a column of each tested feature's name: those columns, by
        name, as ``predict`` takes them), categorical and ordinal features as their codes (k
        for ``categories_[f][k]``), NaN for a missing value (an estimator's ``predict``
        makes a value of X that is no category or level of the feature missing before its
        tree sees it; an ordinal code is compared as a number). Each row matches exactly
        one rule of a model, the rule of the leaf its tree sends it to, missing values and
        unseen categories (a category code that is not one) included."""
        if _is_dataframe(X) and self.conditions \
                and {c.name for c in self.conditions} <= set(X.columns):
            tested = np.full((X.shape[0], max(c.feature for c in self.conditions) + 1), np.nan)
            for name, feature in {c.name: c.feature for c in self.conditions}.items():
                tested[:, feature] = _numeric_matrix(X[[name]])[:, 0]
            X = tested
        X = _numeric_matrix(X)
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D array, got shape {X.shape}")
        if self.conditions:
            needed = max(condition.feature for condition in self.conditions) + 1
            if X.shape[1] < needed:
                raise ValueError(f"X has {X.shape[1]} columns, the rule tests feature "
                                 f"{needed - 1}")
        mask = np.ones(X.shape[0], dtype=bool)
        for condition in self.conditions:
            mask &= condition.holds(X)
        return mask

    def to_text(self, decimals=4):
        """``IF a <= 1 AND b > 2 THEN class = c (support 50 = 33.3%, confidence 1.000)``;
        thresholds and regression values with at most ``decimals`` decimals. A multi-output
        rule lists the outputs' predictions and confidences: ``THEN class = [c, 5]
        (support 50 = 33.3%, confidence [1.000, 0.900])``, ``THEN value = [1.5, -2]
        (support 50 = 33.3%, squared_error 0.25)``."""
        tests = " AND ".join(c.to_text(decimals) for c in self.conditions) or "TRUE"
        support = f"support {self.support} = {100.0 * self.support_fraction:.1f}%"
        several = isinstance(self.prediction, tuple)
        predictions = self.prediction if several else (self.prediction,)
        if self.confidence is None:
            value = _listed([_format_number(v, decimals) for v in predictions])
            spread = _format_number(self.impurity, decimals)
            return f"IF {tests} THEN value = {value} ({support}, {self.impurity_name} {spread})"
        confidences = self.confidence if several else (self.confidence,)
        return (f"IF {tests} THEN class = {_listed([str(p) for p in predictions])} "
                f"({support}, confidence {_listed([f'{c:.3f}' for c in confidences])})")

    def __str__(self):
        return self.to_text()


# What the tests of a path say about one feature, merged: ``(upper, lower, allowed, missing,
# negated)``: the tightest ``<=`` and ``>`` thresholds (None: no such test), the categories
# every category test lets through (None: no category test), whether every test sends missing
# values the path's way, and whether the last category test reads ``not in``.
_NO_TEST = (None, None, None, True, False)


def _merged_test(merged, test):
    """``merged`` (a feature's merged tests) and one more test of the feature, in the form
    :func:`_path_tests` gives: ``("bound", feature, operator, threshold, missing)`` or
    ``("set", feature, codes, missing, negated)``."""
    upper, lower, allowed, missing, negated = merged
    form, _, *test = test
    if form == "bound":
        operator, threshold, goes = test
        if operator == "<=":
            upper = threshold if upper is None else min(upper, threshold)
        else:
            lower = threshold if lower is None else max(lower, threshold)
    else:
        codes, goes, negated = test
        allowed = frozenset(codes) if allowed is None else allowed & frozenset(codes)
    return upper, lower, allowed, missing and goes, negated


def _feature_conditions(tree, feature, merged, name, labels, show_missing):
    """The conditions of one feature's merged tests: one category condition, or the lower
    bound then the upper bound."""
    upper, lower, allowed, missing, negated = merged
    n_categories = int(tree.n_categories[feature])
    common = dict(n_categories=n_categories, missing=missing, show_missing=show_missing)
    if allowed is not None:
        inside = sorted(allowed)
        outside = sorted(set(range(n_categories)) - allowed)
        use_not = len(outside) < len(inside) or (len(outside) == len(inside) and negated)
        codes = outside if use_not else inside
        return (Condition(
            feature, name, "not in" if use_not else "in", codes=tuple(codes),
            labels=tuple(_shown_categories(codes, labels)) if labels is not None else (),
            **common),)
    conditions = []
    for operator, bound in ((">", lower), ("<=", upper)):
        if bound is not None:
            level = None
            if tree.feature_kind[feature] == FEATURE_ORDINAL:
                level = _ordinal_level(bound, labels, n_categories)
            conditions.append(Condition(feature, name, operator, bound,
                                        labels=() if level is None else (level,), **common))
    return tuple(conditions)


def _path_tests(tree, node):
    """The test leading to each child of internal ``node``, in the form
    :func:`_merged_test` takes."""
    feature = int(tree.feature[node])
    kind = tree.split_kind[node]
    if kind == SPLIT_MULTIWAY:
        return [("set", feature, tuple(codes), missing, False)
                for codes, missing in _multiway_branches(tree, node)]
    goes_left = bool(tree.missing_left[node])
    if kind == SPLIT_SUBSET:
        codes = _codes_in_set(tree, node)
        others = sorted(set(range(int(tree.n_categories[feature]))) - set(codes))
        return [("set", feature, tuple(codes), goes_left, False),
                ("set", feature, tuple(others), not goes_left, True)]
    threshold = float(tree.threshold[node])
    return [("bound", feature, "<=", threshold, goes_left),
            ("bound", feature, ">", threshold, not goes_left)]


def rules(model, feature_names=None, class_names=None):
    """One :class:`Rule` per leaf of a fitted tree, leaves in depth-first order, children in
    order (left first).

    Parameters
    ----------
    model : fitted DecisionTreeClassifier or DecisionTreeRegressor
    feature_names : sequence of str, optional
        Default ``model.feature_names_in_``, else ``feature_0``, ``feature_1``, ...
    class_names : sequence, optional
        Labels of the classes in the order of ``model.classes_`` (the default); for a
        multi-output classifier, one sequence of labels per output.
    """
    tree = _fitted_tree(model)
    names = _feature_names(model, tree, feature_names)
    labels = _class_labels(model, tree, class_names)
    impurity_name = _impurity_name(model, tree)
    categories = _category_labels(model, tree)
    marked = _missing_marked(model, tree)
    # whether a feature's missing branch is marked: the same for all its tests (category
    # tests always, threshold tests when the model saw missing values of the feature)
    marked_feature = np.zeros(tree.n_features, dtype=bool)
    marked_feature[tree.feature[marked]] = True
    marked_feature |= tree.feature_kind == FEATURE_CATEGORICAL
    columns = _output_columns(model, tree)
    n_samples = int(tree.n_node_samples[0])

    # Depth-first with the path's merged tests kept up to date, one test at a time: entering
    # a child merges its test into its feature's entry (and makes that feature's conditions),
    # leaving it restores the entry. A leaf then only gathers the conditions of the features
    # on its path, so the work is linear in the number of nodes plus the size of the rules
    # (never a copy of the whole path per node or per leaf).
    merged = {}  # feature -> (merged tests, their conditions) along the current path
    order = []  # the features of the current path, in the order the path first tests them
    found = []
    stack = [(0, None)]  # (node, test leading to it), or (_RESTORE, (feature, previous entry))
    while stack:
        node, test = stack.pop()
        if node is _RESTORE:
            feature, previous = test
            if previous is None:
                del merged[feature]
                order.pop()  # the feature the path tested first at the node being left
            else:
                merged[feature] = previous
            continue
        if test is not None:
            feature = test[1]
            previous = merged.get(feature)
            if previous is None:
                order.append(feature)
            tests = _merged_test(_NO_TEST if previous is None else previous[0], test)
            merged[feature] = (tests, _feature_conditions(
                tree, feature, tests, names[feature], categories[feature],
                bool(marked_feature[feature])))
            stack.append((_RESTORE, (feature, previous)))
        if tree.children_left[node] != TREE_LEAF:
            tests = _path_tests(tree, node)
            children = tree.children(node)
            for child, child_test in zip(reversed(children), reversed(tests), strict=True):
                stack.append((child, child_test))
            continue
        prediction, confidence = _leaf_prediction(tree, node, columns, labels)
        support = int(tree.n_node_samples[node])
        found.append(Rule(
            conditions=tuple(condition for feature in order
                             for condition in merged[feature][1]),
            prediction=prediction,
            support=support,
            weighted_support=float(tree.weighted_n_node_samples[node]),
            support_fraction=support / n_samples if n_samples else 0.0,
            confidence=confidence,
            impurity=float(tree.impurity[node]),
            impurity_name=impurity_name,
            leaf=node,
        ))
    return found


def _leaf_prediction(tree, node, columns, labels):
    """(prediction, confidence) of a leaf, as :class:`Rule` holds them: of a multi-output
    tree, tuples of one per output."""
    if labels is None:
        predictions = [float(tree.value[node, output.start]) for output in columns]
        confidences = None
    else:
        # argmax of the class fractions, as predict takes it (same tie order)
        predictions = _majority_labels(tree, node, columns, labels)
        proba = tree.cached("proba", tree.probability_table)[node]
        confidences = [float(proba[output].max()) for output in columns]
    if tree.n_outputs == 1:
        return predictions[0], None if confidences is None else confidences[0]
    return tuple(predictions), None if confidences is None else tuple(confidences)


def format_rules(rule_list, decimals=4):
    """The rules as text, one line each."""
    decimals = _check_precision(decimals, "decimals")
    rule_list = list(rule_list)
    for rule in rule_list:
        if not isinstance(rule, Rule):
            raise TypeError(f"format_rules takes the rules of jitree.rules(model), got an item "
                            f"of type {type(rule).__name__}")
    return "".join(rule.to_text(decimals) + "\n" for rule in rule_list)


def rules_to_text(model, feature_names=None, class_names=None, decimals=4):
    """``format_rules(rules(model, ...))``."""
    return format_rules(rules(model, feature_names, class_names), decimals)
