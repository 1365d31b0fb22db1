"""IF-THEN rules read off a fitted tree: one rule per leaf.

A leaf's rule is the conjunction of the tests on its root-to-leaf path. Tests on the same
feature and in the same direction are merged into the tightest one (``x <= 5`` then ``x <= 3``
gives ``x <= 3``; ``x > 1`` then ``x > 2`` gives ``x > 2``), so a rule holds at most one lower
bound (``>``) and one upper bound (``<=``) per feature. Both bounds of a feature stay two
conditions, lower bound first (``x > 3 AND x <= 5``), so that every condition is one test a
reader can check; features appear in the order the path first tests them.
"""

from dataclasses import dataclass

import numpy as np

from .export import _class_labels, _feature_names, _fitted_tree, _format_number, _impurity_name
from .tree import TREE_LEAF


@dataclass(frozen=True)
class Condition:
    """One test of a rule: ``X[:, feature] <= threshold`` or ``X[:, feature] > threshold``."""

    feature: int
    name: str
    operator: str  # "<=" or ">"
    threshold: float

    def holds(self, X):
        """Boolean mask of the rows of the 2-D float array X that pass the test."""
        column = X[:, self.feature]
        return column <= self.threshold if self.operator == "<=" else column > self.threshold

    def to_text(self, decimals=4):
        return f"{self.name} {self.operator} {_format_number(self.threshold, decimals)}"

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
        ``class_names`` when given. Regressors: the leaf's mean target.
    support : int
        Training samples reaching the leaf.
    weighted_support : float
        Their total (sample- and class-) weight.
    support_fraction : float
        ``support`` over all training samples.
    confidence : float or None
        Classifiers: the leaf's purity, the largest weighted class fraction. Regressors: None
        (a mean has no confidence of that kind; ``impurity`` gives the spread).
    impurity : float
        The leaf's impurity under the fitting criterion (for regressors, the weighted variance
        of the target).
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
    confidence: float | None
    impurity: float
    impurity_name: str
    leaf: int

    def matches(self, X):
        """Boolean mask of the rows of X (2-D, columns in the order the model was fitted on)
        satisfying every condition. Each row of a fitted model's input matches exactly one of
        its rules, the rule of the leaf ``predict`` sends it to (a NaN matches no condition)."""
        X = np.asarray(X, dtype=np.float64)  # float32 rows compare as predict compares them
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
        thresholds and regression values with at most ``decimals`` decimals."""
        tests = " AND ".join(c.to_text(decimals) for c in self.conditions) or "TRUE"
        support = f"support {self.support} = {100.0 * self.support_fraction:.1f}%"
        if self.confidence is None:
            value = _format_number(self.prediction, decimals)
            spread = _format_number(self.impurity, decimals)
            return f"IF {tests} THEN value = {value} ({support}, {self.impurity_name} {spread})"
        return (f"IF {tests} THEN class = {self.prediction} ({support}, "
                f"confidence {self.confidence:.3f})")

    def __str__(self):
        return self.to_text()


def _merged_conditions(path, names):
    """The tightest bound per (feature, direction) of ``path``, a list of (feature, operator,
    threshold) tests from the root down."""
    upper, lower, order = {}, {}, []
    for feature, operator, threshold in path:
        if feature not in upper and feature not in lower:
            order.append(feature)
        if operator == "<=":
            upper[feature] = min(upper.get(feature, np.inf), threshold)
        else:
            lower[feature] = max(lower.get(feature, -np.inf), threshold)
    conditions = []
    for feature in order:
        if feature in lower:
            conditions.append(Condition(feature, names[feature], ">", lower[feature]))
        if feature in upper:
            conditions.append(Condition(feature, names[feature], "<=", upper[feature]))
    return tuple(conditions)


def rules(model, feature_names=None, class_names=None):
    """One :class:`Rule` per leaf of a fitted tree, leaves in depth-first, left-first order.

    Parameters
    ----------
    model : fitted DecisionTreeClassifier or DecisionTreeRegressor
    feature_names : sequence of str, optional
        Default ``model.feature_names_in_``, else ``feature_0``, ``feature_1``, ...
    class_names : sequence, optional
        Labels of the classes in the order of ``model.classes_`` (the default).
    """
    tree = _fitted_tree(model)
    names = _feature_names(model, tree, feature_names)
    labels = _class_labels(model, tree, class_names)
    impurity_name = _impurity_name(model, tree)
    proba = tree.cached("proba", tree.probability_table) if labels is not None else None
    n_samples = int(tree.n_node_samples[0])

    found = []
    stack = [(0, [])]
    while stack:
        node, path = stack.pop()
        if tree.children_left[node] != TREE_LEAF:
            feature = int(tree.feature[node])
            threshold = float(tree.threshold[node])
            stack.append((int(tree.children_right[node]), path + [(feature, ">", threshold)]))
            stack.append((int(tree.children_left[node]), path + [(feature, "<=", threshold)]))
            continue
        if labels is None:
            prediction, confidence = float(tree.value[node, 0]), None
        else:
            # argmax of the class fractions, as predict takes it (same tie order)
            majority = int(np.argmax(proba[node]))
            prediction, confidence = labels[majority], float(proba[node, majority])
        support = int(tree.n_node_samples[node])
        found.append(Rule(
            conditions=_merged_conditions(path, names),
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


def format_rules(rule_list, decimals=4):
    """The rules as text, one line each."""
    return "".join(rule.to_text(decimals) + "\n" for rule in rule_list)


def rules_to_text(model, feature_names=None, class_names=None, decimals=4):
    """``format_rules(rules(model, ...))``."""
    return format_rules(rules(model, feature_names, class_names), decimals)
