"""A direct matrix builder: the little of Pyomo's modelling that a hot template needs, without
Pyomo's cost per expression.

A Q-measure box template (formulations/q/template) is built once per direction and then
patched per box; through Pyomo (expressions, then LinearStandardFormCompiler) building it took
longer than all the box LPs of a typical instance together (docs/explanation/q-measure.md#q-measure-the-box-template).
Here the same rows are written with :class:`Linear` expressions (a tree of weighted sums, O(1) per ``+``,
flattened once per row) into a :class:`LinearModel` whose ``matrix`` is the MatrixModel the
backends solve.  The expression code of the formulation is shared: CaseTerms builds its rows
from ``m.x`` / ``m.y`` and ``sum``, which work on Linear as on Pyomo variables.

Columns are labelled ("x", d, g) and ("y", key); every column is binary.  A row with no column
left is a constant: kept out of the matrix when it holds, InfeasibleConstraintException (as
Pyomo raises) when it fails.
"""

from __future__ import annotations

import math
from itertools import chain
from numbers import Real

import numpy as np
import scipy.sparse as sp

from ..core.instance import judged_count
from ..core.deadlines import Ticker
from .matrix import MatrixModel


def _number(value) -> bool:
    """A real constant (float and int first: isinstance against numbers.Real is slow on the hot path)."""
    return type(value) is float or type(value) is int or isinstance(value, Real)


class Linear:
    """A linear expression: constant + sum of coef * (column index or Linear)."""

    __slots__ = ("parts", "constant")

    def __init__(self, parts=(), constant=0.0):
        self.parts, self.constant = parts, constant

    def __add__(self, other):
        if isinstance(other, Linear):
            return Linear(((1.0, self), (1.0, other)))
        if _number(other):
            return Linear(((1.0, self),), float(other))
        return NotImplemented

    __radd__ = __add__

    def __neg__(self):
        return Linear(((-1.0, self),))

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return (-self) + other

    def __mul__(self, other):
        if _number(other):
            return Linear(((float(other), self),))
        return NotImplemented

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self * (1.0 / other)

    @staticmethod
    def total(items):
        """sum(items) as one node (Python's sum builds a chain of two-part nodes, one per +)."""
        parts, constant = [], 0.0
        for item in items:
            if type(item) is Linear:
                parts.append((1.0, item))
            else:
                constant += item
        return Linear(tuple(parts), constant)

    def __le__(self, other):
        return Row(self - other, -math.inf, 0.0)

    def __ge__(self, other):
        return Row(self - other, 0.0, math.inf)

    def flat(self) -> tuple[dict, float]:
        """({column: coefficient}, constant), walking the tree once."""
        coefficients, constant, stack = {}, 0.0, [(1.0, self)]
        while stack:
            weight, node = stack.pop()
            constant += weight * node.constant
            for coefficient, item in node.parts:
                if type(item) is Linear:
                    stack.append((weight * coefficient, item))
                else:
                    coefficients[item] = coefficients.get(item, 0.0) + weight * coefficient
        return coefficients, constant


class Row:
    """lower <= expression <= upper."""

    __slots__ = ("expression", "lower", "upper")

    def __init__(self, expression, lower, upper):
        self.expression, self.lower, self.upper = expression, lower, upper


class LinearModel:
    """Binary columns and rows, as MatrixModel.  ``x[d, g]`` are the grade variables of
    modeling.pyomo_model (the same one-grade, relevance-limit and dominance rows as new_model)."""

    def __init__(self, instance):
        self.instance = instance
        self.tick = Ticker()  # the deadline, checked as columns and rows are added (limits.py)
        self.UNJUDGED = list(instance.unjudged)
        self.GRADES = range(1, instance.max_grade + 1)
        self.labels, self.rows = [], []
        self.and_rows = []  # (column of y, index of its first row) per unsigned binary_and product: y <= u, y <= v, y >= u + v - 1
        self.x = {(d, g): self.column(("x", d, g)) for d in self.UNJUDGED for g in self.GRADES}
        self.y = {}
        if instance.max_grade > 1:
            for d in self.UNJUDGED:
                self.add(sum(self.x[d, g] for g in self.GRADES) <= 1)
        for limit in instance.limits:
            count = self.count_at_least(limit.grade)
            j = judged_count(instance, limit.grade)
            self.add(Row(count, limit.low - j, math.inf if limit.high is None else limit.high - j))
        for d, e in instance.dominance:
            for g in self.GRADES:
                self.add(self.count_at_least(g, [e]) <= self.count_at_least(g, [d]))  # Pyomo's row for >=

    def column(self, label) -> Linear:
        self.tick()
        self.labels.append(label)
        return Linear(((1.0, len(self.labels) - 1),))

    def count_at_least(self, grade, documents=None):
        """Unjudged documents (of ``documents``, by default all) assigned a grade >= ``grade``."""
        return sum((self.x[d, g] for d in (self.UNJUDGED if documents is None else documents)
                    for g in self.GRADES if g >= grade), 0.0)

    def add(self, row: Row) -> int | None:
        """Append a row; its index, or None for a constant row that holds."""
        self.tick()
        coefficients, constant = row.expression.flat() if isinstance(row.expression, Linear) else ({}, row.expression)
        coefficients = {j: a for j, a in coefficients.items() if a != 0.0}
        if not coefficients:
            if row.lower - 1e-9 <= constant <= row.upper + 1e-9:
                return None
            from pyomo.common.errors import InfeasibleConstraintException
            raise InfeasibleConstraintException(f"a constant row fails: {row.lower} <= {constant} <= {row.upper}")
        self.rows.append((coefficients, row.lower - constant, row.upper - constant))
        return len(self.rows) - 1

    def binary_and(self, name: str, pairs: dict, signs: dict | None = None) -> None:
        """y[k] = u * v for binary expressions (u, v) = pairs[k], exactly: y <= u, y <= v, y >= u + v - 1,
        the three rows of a product together (``and_rows``: BoxModels patches them).

        With ``signs`` only the side that binds in a maximised objective (pyomo_model.binary_and),
        and the rows in Pyomo's order for that function's model (every y <= u, then every y <= v, then
        every u + v - y <= 1): the same matrix row for row, so a solver meets the model it met before."""
        negated = {}  # the same factor recurs across pairs: flattened and negated once

        def minus(expression):
            if id(expression) not in negated:
                coefficients, constant = expression.flat()
                assert constant == 0.0, "binary_and factors are sums of columns"
                negated[id(expression)] = (expression, {i: -a for i, a in coefficients.items() if a != 0.0})
            return negated[id(expression)][1]

        columns, below_first, below_second, above_both = getattr(self, name), [], [], []
        for key, (u, v) in pairs.items():
            y = columns[key] = self.column((name, key))  # (checks the deadline)
            j, first, second = y.parts[0][1], minus(u), minus(v)
            both = dict(first)
            for i, a in second.items():
                both[i] = both.get(i, 0.0) + a
            both = {i: a for i, a in both.items() if a != 0.0}
            if signs is None:
                self.and_rows.append((j, len(self.rows)))
                self.rows += [({j: 1.0, **first}, -math.inf, 0.0), ({j: 1.0, **second}, -math.inf, 0.0),
                              ({j: 1.0, **both}, -1.0, math.inf)]
                continue
            if signs[key] >= 0:
                below_first.append(({j: 1.0, **first}, -math.inf, 0.0))   # y <= u
                below_second.append(({j: 1.0, **second}, -math.inf, 0.0))  # y <= v
            if signs[key] <= 0:
                above_both.append(({j: -1.0, **{i: -a for i, a in both.items()}}, -math.inf, 1.0))  # u + v - y <= 1
        self.rows += below_first + below_second + above_both

    def vector(self, expression) -> tuple[np.ndarray, float]:
        """(coefficients in column order, constant) of an expression or a number."""
        vector = np.zeros(len(self.labels))
        if not isinstance(expression, Linear):
            return vector, float(expression)
        coefficients, constant = expression.flat()
        for j, a in coefficients.items():
            vector[j] += a
        return vector, constant

    def matrix(self) -> MatrixModel:
        """The rows as a MatrixModel (objective zero), every column binary; CSR with sorted indices."""
        lengths = np.fromiter((len(r[0]) for r in self.rows), dtype=np.int64, count=len(self.rows))
        total = int(lengths.sum())
        indices = np.fromiter(chain.from_iterable(r[0].keys() for r in self.rows), dtype=np.int32, count=total)
        data = np.fromiter(chain.from_iterable(r[0].values() for r in self.rows), dtype=float, count=total)
        row_of = np.repeat(np.arange(len(self.rows)), lengths)
        order = np.lexsort((indices, row_of))  # each row's entries by column
        indptr = np.concatenate(([0], np.cumsum(lengths))).astype(np.int32)
        n = len(self.labels)
        A = sp.csr_matrix((data[order], indices[order], indptr), shape=(len(self.rows), n))
        lower = np.fromiter((r[1] for r in self.rows), dtype=float, count=len(self.rows))
        upper = np.fromiter((r[2] for r in self.rows), dtype=float, count=len(self.rows))
        return MatrixModel(np.zeros(n), 0.0, A, lower, upper, np.zeros(n), np.ones(n), np.ones(n, dtype=bool),
                           list(self.labels))

    def assignment(self, x) -> dict:
        """doc -> grade from solved column values (as common.assignment_from)."""
        if getattr(self, "_grade_columns", (None, -1))[1] != len(self.labels):  # the x columns, once
            columns = [j for j, label in enumerate(self.labels) if label[0] == "x"]
            self._grade_columns = (np.array(columns, dtype=np.int64), len(self.labels))
        columns = self._grade_columns[0]
        grades = dict.fromkeys(self.UNJUDGED, 0)
        labels = self.labels
        for j in columns[np.asarray(x)[columns] > 0.5].tolist():
            grades[labels[j][1]] = labels[j][2]
        return grades
