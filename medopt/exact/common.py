"""What every exact strategy shares: a direction's result, the clock, cutoffs and the one way
a solver's point is offered (re-scored by the evaluators)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from ..bounds import trivial_bound
from ..errors import MedoptError
from ..instance import Instance


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


def proven_bound(outcome, instance: Instance) -> float:
    """The solver's bound, or the trivial one when a timed-out solve proved none."""
    return outcome.bound if math.isfinite(outcome.bound) else trivial_bound(instance)


class Clock:
    def __init__(self, time_limit):
        self.deadline = None if time_limit is None else time.perf_counter() + time_limit

    def remaining(self):
        return None if self.deadline is None else self.deadline - time.perf_counter()


def cutoff_for(start: float):
    """``start`` is a difference some assignment reaches (-inf when none is known): the solver
    need only look for better ones (backends.solve), which also prunes its search."""
    return start if math.isfinite(start) else None


def settle_without_relevance(result: DirectionResult, instance: Instance) -> None:
    """Every case (or box) infeasible: only assignments with D = 0 (no relevant document) remain,
    whose difference is 0; the all-zero assignment is one of them if it meets the limits."""
    zero = {d: 0 for d in instance.unjudged}
    if not instance.satisfies_limits(zero):
        raise MedoptError("no assignment satisfies the relevance limits")
    result.offer(0.0, zero)
    result.bound = 0.0


def offer_rescored(result: DirectionResult, instance: Instance, direction: str, assignment: dict,
                   memo: dict) -> float:
    """Offer ``assignment`` (a solver's point, rounded) at its re-scored difference when it meets the
    limits; that difference, or -inf.  ``memo`` (assignment items -> difference) skips points already
    scored: box LP points of one direction often repeat (docs/speed.md#q-measure-box-lps)."""
    key = tuple(assignment.items())
    if key not in memo:
        memo[key] = instance.differences(assignment)[direction] if instance.satisfies_limits(assignment) \
            else -math.inf
        if math.isfinite(memo[key]):
            result.offer(memo[key], assignment)
    return memo[key]
