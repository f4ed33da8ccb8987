"""Matrix form of a MED model, solver-neutral: what every backend in solvers/ takes.

A model is built either with Pyomo (``pyomo_model``: named sets, variables, constraints and
expressions, exported as LP files for the catalogue) and compiled here once with Pyomo's
LinearStandardFormCompiler, or straight into rows with ``linear.LinearModel`` (hot templates).
Either way the result is a :class:`MatrixModel`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import MedoptError
from ..core.deadlines import OutOfTime, check_time, remaining

# A Pyomo model's compile (LinearStandardFormCompiler) took at most this many times as long as its
# build (docs/limits.md#time-limits): a compile the time left cannot cover is not started
COMPILE_PER_BUILD = 1.5


@dataclass
class MatrixModel:
    """max c.x + offset  s.t.  row_lower <= A x <= row_upper,  lower <= x <= upper, x_j integer where marked."""

    c: np.ndarray
    offset: float
    A: "scipy.sparse.csr_matrix"  # noqa: F821 (SciPy is imported where a model is compiled)
    row_lower: np.ndarray
    row_upper: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    integer: np.ndarray
    columns: list  # Pyomo VarData, in column order
    highs_options: dict = None  # per-model HiGHS options (a model's ``highs_options`` attribute)
    basis: object = None  # HiGHS: a simplex basis of a model with the same shape to start an LP from


def linear_vector(expression, matrix: MatrixModel) -> tuple[np.ndarray, float]:
    """(coefficients in column order, constant) of a linear Pyomo expression over the model's columns."""
    from pyomo.repn import generate_standard_repn

    repn = generate_standard_repn(expression, compute_values=True, quadratic=False)
    if repn.nonlinear_expr is not None:
        raise MedoptError("expected a linear expression")
    position = {id(var): j for j, var in enumerate(matrix.columns)}
    vector = np.zeros(len(matrix.columns))
    for var, coefficient in zip(repn.linear_vars, repn.linear_coefs):
        if id(var) not in position:
            raise MedoptError(f"variable {var.name} appears in no constraint or objective of the model")
        vector[position[id(var)]] += coefficient
    return vector, float(repn.constant)


def compile_model(model) -> MatrixModel:
    """Matrix form of a Pyomo model with one maximised linear objective."""
    from pyomo.repn.plugins.standard_form import LinearStandardFormCompiler

    check_time()
    left, started = remaining(), getattr(model, "build_started", None)
    if left is not None and started is not None and COMPILE_PER_BUILD * (time.perf_counter() - started) > left:
        raise OutOfTime  # one call into Pyomo that no deadline check can interrupt: predicted too long
    form = LinearStandardFormCompiler().write(model, mixed_form=True, set_sense=-1)  # -1: maximize
    A = form.A.tocsr()
    n_rows = A.shape[0]
    row_lower = np.full(n_rows, -np.inf)
    row_upper = np.full(n_rows, np.inf)
    for i, (row, rhs) in enumerate(zip(form.rows, form.rhs)):
        if row.bound_type >= 0:
            row_upper[i] = rhs
        if row.bound_type <= 0:
            row_lower[i] = rhs
    columns = list(form.columns)
    lower = np.array([-np.inf if v.lb is None else v.lb for v in columns], dtype=float)
    upper = np.array([np.inf if v.ub is None else v.ub for v in columns], dtype=float)
    integer = np.array([v.is_integer() or v.is_binary() for v in columns], dtype=bool)
    c = np.asarray(form.c.toarray()).ravel() if form.c.shape[1] else np.zeros(len(columns))
    offset = float(form.c_offset[0]) if len(form.c_offset) else 0.0
    return MatrixModel(c, offset, A, row_lower, row_upper, lower, upper, integer, columns,
                       dict(getattr(model, "highs_options", None) or {}))


class ColumnValues(Mapping):
    """Column -> value of a solution, looked up by identity like Pyomo's ComponentMap; the lookup
    table is made on first use (callers that read ``Outcome.x`` directly never pay for it)."""

    def __init__(self, columns, x):
        self.columns, self.x, self._by_id = columns, x, None

    def get(self, column, default=None):
        if self._by_id is None:
            self._by_id = {id(c): float(v) for c, v in zip(self.columns, self.x)}
        return self._by_id.get(id(column), default)

    def __getitem__(self, column):
        value = self.get(column)
        if value is None:
            raise KeyError(column)
        return value

    def __iter__(self):
        return iter(self.columns)

    def __len__(self):
        return len(self.columns)
