"""Strategy ``direct`` (and ``compact``): one model per direction, solved once."""

from __future__ import annotations

import math

from ..errors import MedoptError
from ..modeling import assignment_from
from ..solvers import solve
from .common import DirectionResult, cutoff_for, proven_bound


def solve_direct(formulation, instance, direction, solver, clock, start: float = -math.inf,
                 build=None) -> DirectionResult:
    result = DirectionResult()
    model = (build or formulation.build)(instance, direction)
    outcome = solve(model, solver, clock.remaining(), cutoff=cutoff_for(start))
    result.solves = 1
    if outcome.status == "infeasible":
        raise MedoptError("no assignment satisfies the relevance limits")
    if outcome.values is not None:
        result.offer(outcome.objective, assignment_from(model, outcome.values))
    result.bound = proven_bound(outcome, instance) + getattr(model, "bound_slack", 0.0)  # a model that drops provably negligible terms
    result.proven = outcome.status == "optimal"
    return result


def solve_compact(formulation, instance, direction, solver, clock, start: float = -math.inf) -> DirectionResult:
    """The formulation's compact model (continuous variables), solved like a direct one."""
    return solve_direct(formulation, instance, direction, solver, clock, start, build=formulation.build_compact)
