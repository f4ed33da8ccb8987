"""What every exact strategy shares: a direction's result, the clock, cutoffs and the one way
a solver's point is offered (re-scored by the evaluators)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..core.bounds import trivial_bound
from ..errors import MedoptError, TooLargeError
from ..core.instance import Instance
from ..kernels.q_enumeration import best_differences
from ..core.deadlines import (MEMORY_LIMIT_VARIABLE, check_time, deadline_after, memory_crossed,
                      memory_limit as default_memory_limit)


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

    def stopped(self, instance: Instance) -> "DirectionResult":
        """Time ran out (limits.OutOfTime) before this direction was settled: what was found
        stands, unproven, under the trivial bound."""
        self.proven = False
        self.bound = max(self.bound, trivial_bound(instance))
        return self


def proven_bound(outcome, instance: Instance) -> float:
    """The solver's bound, or the trivial one when a timed-out solve proved none."""
    return outcome.bound if math.isfinite(outcome.bound) else trivial_bound(instance)


class Clock:
    """The deadline of one exact solve.  The driver runs the solve inside ``limits.until(deadline)``,
    so model building checks it too (limits.check_time), not only the solvers."""

    def __init__(self, time_limit):
        self.deadline = deadline_after(time_limit)

    def remaining(self):
        if memory_crossed():  # a solve was stopped at the memory ceiling: out of time from now on
            return 0.0
        return None if self.deadline is None else self.deadline - time.perf_counter()

    def expired(self) -> bool:
        return memory_crossed() or (self.deadline is not None and time.perf_counter() >= self.deadline)


def cutoff_for(start: float):
    """``start`` is a difference some assignment reaches (-inf when none is known): the solver
    need only look for better ones (backends.solve), which also prunes its search."""
    return start if math.isfinite(start) else None


def settle_without_relevance(result: DirectionResult, instance: Instance) -> None:
    """Every case (or box) infeasible: only assignments with D = 0 (no relevant document) remain,
    whose difference is 0.  One that meets the limits is offered (the all-zero assignment first;
    vanishing_points also tries documents at grades that do not count, which a lower limit on such a
    grade may need); when none does, no assignment meets them where vanishing_points_exhaustive says
    so; otherwise 0 stays a proven bound, unreached)."""
    point = next((p for p in vanishing_points(instance) if instance.satisfies_limits(p)), None)
    if point is None and vanishing_points_exhaustive(instance):
        raise MedoptError("no assignment satisfies the relevance limits")
    if point is not None:
        result.offer(0.0, point)
    else:
        result.proven = False
    result.bound = 0.0


def denominator_counts(instance: Instance):
    """grade -> whether a document of that grade counts towards the denominator."""
    metric, grading = instance.metric, instance.grading
    return (lambda g: metric.is_relevant(g)) if metric.binary else (lambda g: metric.gain(g, grading) > 0)


def vanishing_points(instance: Instance):
    """Assignments that leave the denominator at 0: m unjudged documents at one grade g that does not
    count, the rest at 0 (every such assignment when there is at most one relevance limit)."""
    counts, docs = denominator_counts(instance), instance.unjudged
    for grade in range(instance.max_grade + 1):
        if counts(grade):
            return
        for m in range(len(docs) + 1) if grade > 0 else (0,):
            yield {d: (grade if i < m else 0) for i, d in enumerate(docs)}


def vanishing_points_exhaustive(instance: Instance) -> bool:
    """Whether vanishing_points meets the limits whenever some assignment leaving the denominator at 0
    does: under at most one limit, or when at most one positive grade does not count (every mix of
    non-counting grades is then m documents at that grade)."""
    counts = denominator_counts(instance)
    silent = sum(1 for grade in range(1, instance.max_grade + 1) if not counts(grade))
    return len(instance.limits) <= 1 or silent <= 1


def rescored(instance: Instance, reduced: Instance, direction: str, labels: dict, guesses: dict) -> float:
    """The direction's difference at a bound's candidate (``labels`` with the reduction's fixed
    documents; -inf when it breaks a relevance limit), kept as the direction's guess when better."""
    candidate = {**reduced.fixed, **labels}
    value = instance.differences(candidate)[direction] if instance.satisfies_limits(candidate) else -math.inf
    if value > guesses[direction][0]:
        guesses[direction] = (value, candidate)
    return value


def offer_rescored(result: DirectionResult, instance: Instance, direction: str, assignment: dict,
                   memo: dict) -> float:
    """Offer ``assignment`` (a solver's point, rounded) at its re-scored difference when it meets the
    limits; that difference, or -inf.  ``memo`` (assignment items -> difference) skips points already
    scored: box LP points of one direction often repeat (docs/explanation/q-measure.md#q-measure-box-lps)."""
    key = tuple(assignment.items())
    if key not in memo:
        memo[key] = instance.differences(assignment)[direction] if instance.satisfies_limits(assignment) \
            else -math.inf
        if math.isfinite(memo[key]):
            result.offer(memo[key], assignment)
    return memo[key]


def improve_locally(result: DirectionResult, instance: Instance, direction: str, assignment: dict) -> float:
    """One-document moves from ``assignment`` (each unjudged document to each other grade), the best
    taken while it raises the re-scored difference: a primal heuristic for a metric that scores many
    collections at once (``scores_many``: the Q-measure, whose box search calls it), every point it
    offers re-scored by the evaluator and meeting the limits; its difference at the end (the start's
    alone for another metric).  Each round scores all the moves in one batch
    (kernels/q_enumeration.best_differences).  check_time at each round: at the deadline the best point
    so far is offered and OutOfTime goes on to the caller."""
    current = dict(assignment)
    value = instance.differences(current)[direction] if instance.satisfies_limits(current) else -math.inf
    documents = list(instance.unjudged)
    grades = instance.max_grade + 1
    moved_document = np.repeat(np.arange(len(documents)), grades)
    moved_grade = np.tile(np.arange(grades), len(documents))
    try:
        while math.isfinite(value) and hasattr(instance.metric, "scores_many"):
            check_time()  # here ``current`` is the point of ``value``
            rows = np.tile(np.array([current[d] for d in documents], dtype=np.int64), (len(moved_grade), 1))
            rows[np.arange(len(moved_grade)), moved_document] = moved_grade
            best, point = best_differences(instance, rows)[direction]
            rescored = instance.differences(point)[direction] if point is not None and best > value + 1e-12 \
                else -math.inf  # (the evaluator's own sums)
            if not rescored > value:
                break
            current, value = point, rescored
    finally:
        if math.isfinite(value):
            result.offer(value, dict(current))
    return value


# Peak memory of an exact solve, per entry (column or matrix nonzero) of formulations.base.ModelSize and
# beyond the process's own: the model as written (Pyomo objects, or LinearModel rows), its matrix and
# the solver's copy.  Measured on the largest models tried, with a margin (docs/limits.md#memory).
BYTES_PER_ENTRY = {("matrix", "highs"): 400, ("matrix", "cpsat"): 450, ("matrix", "scip"): 700,
                   ("pyomo", "highs"): 900, ("pyomo", "cpsat"): 600, ("pyomo", "scip"): 1200}
FIXED_BYTES = 100 * 2 ** 20  # the solver libraries' own working memory, whatever the model


def predicted_bytes(size, solver: str) -> int:
    """Memory an exact solve whose models have ``size`` (formulations.base.ModelSize) is predicted to take."""
    return FIXED_BYTES + size.entries * BYTES_PER_ENTRY[size.builder, solver] + 8 * size.dense


def check_memory(instance: Instance, formulation, strategy: str, solver: str, memory_limit: int | None,
                 share: float = 1.0) -> None:
    """TooLargeError, before anything is built, when the strategy's models are predicted to need more
    than ``share`` of ``memory_limit`` bytes (default limits.memory_limit())."""
    limit = default_memory_limit() if memory_limit is None else memory_limit
    size = formulation.model_size(instance, strategy)
    need = predicted_bytes(size, solver)
    if need > share * limit:
        error = TooLargeError(
            f"the exact model ({size.what}) would need about {need / 2 ** 30:.1f} GB, more than the "
            f"{limit / 2 ** 30:.1f} GB allowed per instance: use a smaller cutoff or max_grade, or a heuristic "
            f"method, or raise the limit (memory_limit=, or {MEMORY_LIMIT_VARIABLE})")
        error.beyond_limit = need > limit  # False: within the limit, above the share asked for
        raise error
