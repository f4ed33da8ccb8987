"""The modelling layer: how a MED model is written, independent of any solver.

A formulation writes its model once, against the names below: the grade variables x[d, g] and
the rows every model shares (``new_model`` for a Pyomo model, ``LinearModel`` for a matrix built
directly), relevance and gain of a document as linear expressions (``value_at``, ``gain_at``,
``relevant_at``, ``count_at_least``), exact products of binaries (``binary_and``).  Both builders
take the same expression code (Linear and Pyomo expressions support the same + and *).  The
result is compiled to a solver-neutral :class:`MatrixModel` (``compile_model``).
"""

from . import pyomo_setup  # noqa: F401  (first: it must run before Pyomo is imported)
from .families import binaries, equal, expression, row, rows, total
from .linear import Linear, LinearModel, Row
from .matrix import ColumnValues, MatrixModel, compile_model, linear_vector
from .pyomo_model import (add_dominance, add_relevance_limits, as_constraint, assignment_from, binary_and,
                          count_at_least, direction_sign, gain_at, grade_indicator, new_model, relevant_at, value_at)

__all__ = ["binaries", "equal", "expression", "row", "rows", "total", "Linear", "LinearModel", "Row", "ColumnValues", "MatrixModel", "compile_model", "linear_vector",
           "add_dominance", "add_relevance_limits", "as_constraint", "assignment_from", "binary_and",
           "count_at_least", "direction_sign", "gain_at", "grade_indicator", "new_model", "relevant_at", "value_at"]
