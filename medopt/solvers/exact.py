"""``method="exact"``: build each direction's model, solve it, certify the answer.

Ratio metrics are solved either by enumerating the denominator (every case is a
MILP with a constant denominator; the maximum over cases is the answer) or by
Dinkelbach iteration on F(lam) = max N(x) - lam D(x): lam is raised to the ratio
of each new solution until the solver proves F(lam) <= eps.  At any iteration,
for every x with D(x) > 0, N(x)/D(x) <= lam + max(F_ub, 0) / D_min, which is the
upper bound reported (x with D(x) = 0 have N(x) = 0 and a difference of 0).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import pyomo.environ as pyo

from ..errors import MedoptError
from ..formulations import formulation_for
from ..formulations.common import assignment_from
from ..instance import Instance
from ..result import MedResult, certify
from .backends import SOLVERS, solve

DINKELBACH_TOLERANCE = 1e-11
MAX_DINKELBACH_STEPS = 100


@dataclass
class DirectionResult:
    value: float = -math.inf          # the model's claim for the best assignment found
    assignment: dict | None = None
    bound: float = -math.inf          # proven upper bound for this direction
    proven: bool = True               # every sub-problem solved to optimality
    solves: int = 0
    log: list = field(default_factory=list)

    def offer(self, value, assignment):
        if assignment is not None and value > self.value:
            self.value, self.assignment = value, assignment


def trivial_bound(instance: Instance) -> float:
    """A difference no assignment can exceed: 1 for every bounded metric, the full weight for DCG."""
    metric = instance.metric
    if metric.family == "DCG":
        length = max(len(instance.a), len(instance.b))
        return sum(metric.rank_weights(length)) * metric.unit_gain(instance.max_grade, instance.grading)
    return 1.0 + (1.0 if instance.residual else 0.0)


class Clock:
    def __init__(self, time_limit):
        self.deadline = None if time_limit is None else time.perf_counter() + time_limit

    def remaining(self):
        return None if self.deadline is None else self.deadline - time.perf_counter()


def _load(model, values) -> None:
    """Put solved values into the model's variables; a variable the objective and
    constraints never mention is free to be anything, and is set to 0."""
    for var in model.component_data_objects(pyo.Var, descend_into=True):
        if not var.fixed:
            var.set_value(0, skip_validation=True)
    for var, value in values.items():
        var.set_value(value, skip_validation=True)


def solve_direct(formulation, instance, direction, solver, clock) -> DirectionResult:
    result = DirectionResult()
    model = formulation.build(instance, direction)
    outcome = solve(model, solver, clock.remaining())
    result.solves = 1
    if outcome.status == "infeasible":
        raise MedoptError("no assignment satisfies the relevance limits")
    if outcome.values is not None:
        result.offer(outcome.objective, assignment_from(model, outcome.values))
    result.bound = outcome.bound if outcome.status != "timeout" or math.isfinite(outcome.bound) else trivial_bound(instance)
    result.proven = outcome.status == "optimal"
    return result


def solve_cases(formulation, instance, direction, solver, clock) -> DirectionResult:
    result = DirectionResult()
    feasible_cases = 0
    for case in formulation.cases(instance):
        remaining = clock.remaining()
        if remaining is not None and remaining <= 0:
            result.proven = False
            result.bound = max(result.bound, trivial_bound(instance))
            break
        model = formulation.build(instance, direction, case=case)
        outcome = solve(model, solver, remaining)
        result.solves += 1
        if outcome.status == "infeasible":
            continue
        feasible_cases += 1
        if outcome.values is not None:
            result.offer(outcome.objective, assignment_from(model, outcome.values))
        if outcome.status != "optimal":
            result.proven = False
        result.bound = max(result.bound, outcome.bound if math.isfinite(outcome.bound) else trivial_bound(instance))
        result.log.append((case.label, outcome.objective, outcome.bound))
    if feasible_cases == 0 and result.proven:
        # every case infeasible: only assignments with D = 0 (no relevant document) remain,
        # whose difference is 0; the all-zero assignment is one of them if it meets the limits
        zero = {d: 0 for d in instance.unjudged}
        if not instance.satisfies_limits(zero):
            raise MedoptError("no assignment satisfies the relevance limits")
        result.offer(0.0, zero)
        result.bound = 0.0
    return result


def solve_dinkelbach(formulation, instance, direction, solver, clock) -> DirectionResult:
    result = DirectionResult()
    lam, smallest = 0.0, formulation.min_denominator(instance)
    for _ in range(MAX_DINKELBACH_STEPS):
        model = formulation.build(instance, direction, lam=lam)
        outcome = solve(model, solver, clock.remaining())
        result.solves += 1
        if outcome.status == "infeasible":
            raise MedoptError("no assignment satisfies the relevance limits")
        if outcome.values is not None:
            _load(model, outcome.values)
            numerator, denominator = pyo.value(model.numerator), pyo.value(model.denominator)
            ratio = numerator / denominator if denominator > 0 else 0.0
            result.offer(ratio, assignment_from(model, outcome.values))
        gap = max(outcome.bound, 0.0) / smallest if math.isfinite(outcome.bound) else math.inf
        result.bound = lam + gap if math.isfinite(gap) else trivial_bound(instance)
        result.log.append((lam, outcome.objective, outcome.bound))
        if outcome.status != "optimal":
            result.proven = False
            return result
        if outcome.bound <= DINKELBACH_TOLERANCE * smallest or result.value <= lam:
            # F(lam) ~ 0: lam is the maximum ratio up to the gap reported in the bound
            return result
        lam = result.value
    result.proven = False
    return result


STRATEGIES = {"direct": solve_direct, "enumerate": solve_cases, "dinkelbach": solve_dinkelbach}


def exact(instance: Instance, *, solver: str | None = None, time_limit: float | None = None,
          strategy: str = "auto", **_ignored) -> MedResult:
    started = time.perf_counter()
    solver = solver or "highs"
    if solver not in SOLVERS:
        raise MedoptError(f"unknown solver {solver!r}; choose one of {', '.join(SOLVERS)}")
    formulation = formulation_for(instance.metric)
    available = formulation.strategies_for(instance)
    if strategy == "auto":
        strategy = available[-1]
    if strategy not in available:
        raise MedoptError(f"{instance.metric}: strategy {strategy!r} not available (choose from {', '.join(available)})")
    clock = Clock(time_limit)
    directions = {d: STRATEGIES[strategy](formulation, instance, d, solver, clock) for d in ("a", "b")}
    best_direction = max(directions, key=lambda d: directions[d].value)
    best = directions[best_direction]
    proven = all(r.proven for r in directions.values())
    bound = max(r.bound for r in directions.values())
    assignment = best.assignment if best.assignment is not None else {d: 0 for d in instance.unjudged}
    details = {"strategy": strategy, "solves": sum(r.solves for r in directions.values())}
    return certify(instance, assignment, best_direction, upper_bound=bound,
                   status="optimal" if proven else "timeout", method="exact", solver=solver, started=started,
                   claimed=best.value if math.isfinite(best.value) else None, details=details)
