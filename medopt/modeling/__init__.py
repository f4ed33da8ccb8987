"""The modelling layer: how a MED model is written, independent of any solver.

A formulation writes its model once, against the names below: the grade variables x[d, g] and
the rows every model shares (``new_model`` for a Pyomo model, ``new_matrix`` for a matrix built
directly), named families of variables, rows and expressions and the objective (``binaries``,
``rows``, ``expression``, ``objective``, ...), relevance and gain of a document as linear
expressions (``value_at``, ``gain_at``, ``relevant_at``, ``count_at_least``), exact products of
binaries (``binary_and``).  Both builders take the same expression code (Linear and Pyomo
expressions support the same + and *).  The result is compiled to a solver-neutral
:class:`MatrixModel` (``compile_model``).
"""

from . import pyomo_setup  # noqa: F401  (first: it must run before Pyomo is imported)
from .families import (InfeasibleModel, between, binaries, binary_and, continuous, equal, expression, expressions,
                       fix, index, is_matrix, new_matrix, objective, row, row_list, rows, rows_over, summation,
                       total)
from .linear import Linear, LinearModel, Row
from .matrix import ColumnValues, MatrixModel, compile_model, linear_vector
from .pyomo_model import (add_dominance, add_relevance_limits, as_constraint, assignment_from, count_at_least,
                          direction_sign, gain_at, grade_indicator, new_model, relevant_at, value_at)

__all__ = ["InfeasibleModel", "between", "binaries", "binary_and", "continuous", "equal", "expression",
           "expressions", "fix", "index", "is_matrix", "new_matrix", "objective", "row", "row_list", "rows",
           "rows_over", "summation", "total", "Linear", "LinearModel", "Row", "ColumnValues", "MatrixModel",
           "compile_model", "linear_vector", "add_dominance", "add_relevance_limits", "as_constraint",
           "assignment_from", "count_at_least", "direction_sign", "gain_at", "grade_indicator", "new_model",
           "relevant_at", "value_at"]
