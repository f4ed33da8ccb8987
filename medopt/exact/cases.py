"""Strategy ``enumerate``: a ratio metric solved case by case, each case a constant denominator."""

from __future__ import annotations

import math

from ..core.deadlines import OutOfTime
from ..modeling import assignment_from
from ..solvers import solve
from .common import DirectionResult, cutoff_for, proven_bound, settle_without_relevance


PRUNE_MARGIN = 1e-12  # added to a case bound that prunes a case, for the rounding in computing it


def solve_cases(formulation, instance, direction, solver, clock, start: float = -math.inf) -> DirectionResult:
    """One model per case.  A formulation with ``bounded_cases`` (its cases best bound first, each
    with a proven upper bound of its optimum computed without a solver) has a case whose bound does
    not beat the best difference reached settled by that bound alone, and with it every later one."""
    result = DirectionResult()
    feasible_cases = 0
    try:
        bounded = formulation.bounded_cases(instance, direction)
        pairs = bounded if bounded is not None else ((None, case) for case in formulation.cases(instance))
        for bound, case in pairs:
            remaining = clock.remaining()
            if remaining is not None and remaining <= 0:
                result.stopped(instance)
                break
            if bound is not None and bound <= max(start, result.value):
                result.bound = max(result.bound, bound + PRUNE_MARGIN)
                feasible_cases += 1
                result.log.append(("the remaining cases, pruned by their bounds", math.nan, bound))
                break
            model = formulation.build(instance, direction, case=case)
            outcome = solve(model, solver, clock.remaining(), cutoff=cutoff_for(max(start, result.value)))
            result.solves += 1
            if outcome.status == "infeasible":
                continue
            feasible_cases += 1
            if outcome.values is not None:
                result.offer(outcome.objective, assignment_from(model, outcome.values))
            if outcome.status != "optimal":
                result.proven = False
            result.bound = max(result.bound, proven_bound(outcome, instance))
            result.log.append((case.label, outcome.objective, outcome.bound))
    except OutOfTime:  # building a case's model (or its bounds) ran past the deadline
        return result.stopped(instance)
    if feasible_cases == 0 and result.proven:
        settle_without_relevance(result, instance)
    return result
