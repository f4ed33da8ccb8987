"""The protocol every formulation module follows (one ``FORMULATION`` object each)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable


@dataclass
class DinkelbachMatrix:
    """A ratio's Dinkelbach model as a matrix: the rows, N = numerator . x + numerator_constant,
    D likewise, and ``assignment(x)``: unjudged doc -> grade from solved column values."""

    matrix: object  # solvers.backends.MatrixModel (its objective is set per step)
    numerator: object
    numerator_constant: float
    denominator: object
    denominator_constant: float
    assignment: Callable


@dataclass(frozen=True)
class Case:
    """One fixed denominator of a ratio metric: constraints that fix it, and its value."""

    label: str
    denominator: float
    fix: dict  # formulation-specific description of what is fixed


class Formulation:
    """Builds MED models for one metric family.

    ratio = False: ``build(instance, direction)`` is the whole story, its objective
    is the direction's score difference.
    ratio = True: the difference is N(x) / D(x).  ``cases(instance)`` lists the
    possible denominators, and ``build(instance, direction, case=c)`` maximises
    N / c.denominator subject to D fixed at c; ``build(..., lam=l)`` maximises
    N - l * D (Dinkelbach), and ``min_denominator`` is the smallest positive D.
    """

    family_name: str = ""
    ratio: bool = False
    strategies: tuple[str, ...] = ("direct",)
    continuous_strategies: tuple[str, ...] = ()  # strategies whose models have continuous variables (HiGHS only)
    warm_start: dict = {}  # metric family -> heuristic method whose answer seeds the exact search
    default_solver: dict = {}  # metric family -> (solver, from depth): used when none is asked for (else HiGHS)

    def build(self, instance, direction: str, *, case: Case | None = None, lam: float | None = None):
        raise TypeError(f"{type(self).__name__} must define build()")

    def solver_for(self, instance) -> str:
        """The solver when none is asked for: the family's from its depth on (the longer cut list), else HiGHS."""
        solver, from_depth = self.default_solver.get(instance.metric.family, ("highs", 0))
        return solver if max(len(instance.a), len(instance.b)) >= from_depth else "highs"

    def strategies_for(self, instance) -> tuple[str, ...]:
        """Strategies that apply to this instance, the usually fastest last."""
        return self.strategies

    def cases(self, instance) -> Iterable[Case]:
        return ()

    def bounded_cases(self, instance, direction: str):
        """Optional: (bound, case) pairs, bounds non-increasing, each a proven upper bound of the
        case's optimum in ``direction`` computed without a solver; cases admitting no assignment
        may be left out.  None: no such bounds (every case is solved)."""
        return None

    def min_denominator(self, instance) -> float:
        return 1.0

    def dinkelbach_matrix(self, instance, direction: str) -> "DinkelbachMatrix | None":
        """Optional: the Dinkelbach model of ``build(..., lam=...)`` in matrix form, built without
        Pyomo.  None: the driver compiles the Pyomo model."""
        return None

    def seeds(self, instance, direction: str) -> Iterable[dict]:
        """Optional: cheap candidate assignments (unjudged doc -> grade) for ``direction``; the driver
        re-scores each with the evaluators and starts from the best as a reached difference."""
        return ()
