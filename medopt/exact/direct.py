"""Strategy ``direct`` (and ``compact``): one model per direction, solved once."""

from __future__ import annotations

import math

from pyomo.common.errors import InfeasibleConstraintException

from ..errors import MedoptError
from ..core.deadlines import OutOfTime
from ..modeling import assignment_from
from ..solvers import solve
from .common import DirectionResult, cutoff_for, proven_bound


def solve_direct(formulation, instance, direction, solver, clock, start: float = -math.inf,
                 build=None) -> DirectionResult:
    """The direct model (the formulation's matrix form when it has one), solved once."""
    result = DirectionResult()
    try:
        direct = formulation.direct_matrix(instance, direction) if build is None else None
        model = direct.matrix if direct is not None else (build or formulation.build)(instance, direction)
        outcome = solve(model, solver, clock.remaining(), cutoff=cutoff_for(start))
    except OutOfTime:
        return result.stopped(instance)
    except InfeasibleConstraintException:  # a row on constants only that fails (LinearModel.add)
        raise MedoptError("no assignment satisfies the relevance limits") from None
    result.solves = 1
    if outcome.status == "infeasible":
        raise MedoptError("no assignment satisfies the relevance limits")
    if outcome.values is not None:
        result.offer(outcome.objective, direct.assignment(outcome.x) if direct is not None
                     else assignment_from(model, outcome.values))
    result.bound = proven_bound(outcome, instance) + getattr(model, "bound_slack", 0.0)  # a model that drops provably negligible terms
    result.proven = outcome.status == "optimal"
    return result


def solve_compact(formulation, instance, direction, solver, clock, start: float = -math.inf) -> DirectionResult:
    """The formulation's compact model (continuous variables), solved like a direct one."""
    return solve_direct(formulation, instance, direction, solver, clock, start, build=formulation.build_compact)
