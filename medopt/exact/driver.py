"""``method="exact"``: both directions of an instance, each solved on the instance reduced by the
facts its metric declares (reductions.py), by one strategy on the metric's formulation, then
certified (result.certify).

A strategy solves one direction on the models of one formulation interface (formulations/base.py):
``direct`` and ``compact`` (direct.py), ``enumerate`` over the cases of a ratio (cases.py),
``dinkelbach`` and ``capped`` (dinkelbach.py), and the branch and bound over ``boxes`` of cases
(boxes.py).  Every direction starts from the best difference already reached (the rank rule, the
warm-start heuristics, the formulation's seeds, then the other direction) and only looks for
assignments that beat it.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable, Iterable

from ..bounds import trivial_bound
from ..errors import MedoptError
from ..formulations import formulation_for
from ..formulations.base import BoxSearch, CappedRatio, CaseModels, CompactModel, DinkelbachModels, DirectModel
from ..instance import Instance
from ..limits import OutOfTime, until
from ..reductions import reduce as reduce_instance
from ..result import MedResult, certify
from ..solvers import SOLVERS
from .boxes import solve_boxes
from .cases import solve_cases
from .common import Clock, DirectionResult, check_memory
from .dinkelbach import solve_capped, solve_dinkelbach
from .direct import solve_compact, solve_direct


def rank_rule_guess(instance: Instance, direction: str) -> tuple[float, dict]:
    """A cheap feasible-looking start: Tan & Clarke's rule (top grade where the document ranks
    higher in the better list, else 0), its difference re-scored by the evaluators.
    Returns (difference, assignment); (-inf, None) when it breaks a relevance limit."""
    better, worse = (instance.rank_a, instance.rank_b) if direction == "a" else (instance.rank_b, instance.rank_a)
    far = len(instance.a) + len(instance.b) + 1
    assignment = {d: instance.max_grade if better.get(d, far) < worse.get(d, far) else 0 for d in instance.unjudged}
    if not instance.satisfies_limits(assignment):
        return -math.inf, None
    return instance.differences(assignment)[direction], assignment


def seed_guesses(instance: Instance, formulation, warm_starts: Iterable[Callable], guesses: dict) -> None:
    """Raise each direction's guess (difference, assignment) to the best of the warm-start
    heuristics' answers and the formulation's seeds, re-scored."""
    for heuristic in warm_starts:
        seed = heuristic(instance)
        if seed.value > guesses[seed.direction][0]:
            guesses[seed.direction] = (seed.value, seed.assignment)
    for direction in guesses:
        for assignment in formulation.seeds(instance, direction):
            if instance.satisfies_limits(assignment):
                value = instance.differences(assignment)[direction]
                if value > guesses[direction][0]:
                    guesses[direction] = (value, assignment)


@dataclass(frozen=True)
class Strategy:
    """An exact strategy: how it solves one direction, and the formulation interface it needs."""

    solve: Callable[..., DirectionResult]
    needs: type


STRATEGIES = {
    "direct": Strategy(solve_direct, DirectModel),
    "compact": Strategy(solve_compact, CompactModel),
    "enumerate": Strategy(solve_cases, CaseModels),
    "dinkelbach": Strategy(solve_dinkelbach, DinkelbachModels),
    "capped": Strategy(solve_capped, CappedRatio),
    "boxes": Strategy(solve_boxes, BoxSearch),
}
DEFAULT_SOLVER = "highs"


def available_strategies(formulation, instance, solver: str) -> tuple[str, ...]:
    """The formulation's strategies for this instance that ``solver`` can run (an integer-only
    solver cannot take a model with continuous variables)."""
    available = tuple(s for s in formulation.strategies(instance) if isinstance(formulation, STRATEGIES[s].needs))
    if SOLVERS[solver].integer_only:
        available = tuple(s for s in available if s not in formulation.continuous)
    return available


def exact(instance: Instance, *, solver: str | None = None, time_limit: float | None = None,
          strategy: str = "auto", reduce: bool = True, warm_starts: Iterable[Callable] = (),
          memory_limit: int | None = None) -> MedResult:
    """Both directions' maxima, each solved by ``strategy`` on the instance reduced by the metric's
    proved facts, and certified.  ``warm_starts`` are heuristics (instance -> MedResult) whose
    answers seed the search as differences already reached (methods.py picks them).  A direction
    whose models are predicted to need more than ``memory_limit`` bytes (default
    limits.memory_limit()) is refused with TooLargeError before anything is built (check_memory)."""
    started = time.perf_counter()
    if memory_limit is not None and (isinstance(memory_limit, bool) or not isinstance(memory_limit, (int, float))
                                     or not memory_limit > 0):
        raise MedoptError(f"memory_limit must be a positive number of bytes, got {memory_limit!r}")
    formulation = formulation_for(instance.metric)
    solver = solver or formulation.preferred_solver(instance) or DEFAULT_SOLVER
    if solver not in SOLVERS:
        raise MedoptError(f"unknown solver {solver!r}; choose one of {', '.join(SOLVERS)}")
    available = available_strategies(formulation, instance, solver)
    if strategy == "auto":
        strategy = available[-1]
    if strategy not in available:
        needs_highs = f" with {solver} (its model has continuous variables: use highs)" \
            if strategy in formulation.continuous else ""
        raise MedoptError(f"{instance.metric}: strategy {strategy!r} not available{needs_highs} "
                          f"(choose from {', '.join(available)})")
    clock = Clock(time_limit)
    if instance.a == instance.b and not instance.residual and not instance.limits:
        # identical cut lists score identically under every assignment: the MED is 0
        return certify(instance, {d: 0 for d in instance.unjudged}, "a", upper_bound=0.0, status="optimal",
                       method="exact", solver=solver, started=started, claimed=0.0,
                       details={"strategy": "identical lists", "solves": 0})
    with until(clock.deadline):  # model building checks the deadline too (limits.check_time)
        directions, guesses = {}, {d: rank_rule_guess(instance, d) for d in ("a", "b")}
        try:
            seed_guesses(instance, formulation, warm_starts, guesses)
        except OutOfTime:  # the seeds found so far stand
            pass
        reached = max(guess[0] for guess in guesses.values())  # a difference some assignment reaches
        ceiling = trivial_bound(instance)
        for direction in sorted(guesses, key=lambda d: -guesses[d][0]):  # the likelier winner first
            if reached >= ceiling:  # no difference exceeds the trivial bound: nothing left to prove
                directions[direction] = DirectionResult(bound=ceiling)
                directions[direction].offer(*guesses[direction])
                continue
            try:
                if clock.expired():
                    raise OutOfTime
                reduced = reduce_instance(instance, direction) if reduce else instance
                check_memory(reduced, formulation, strategy, solver, memory_limit)
                outcome = STRATEGIES[strategy].solve(formulation, reduced, direction, solver, clock, start=reached)
                if outcome.assignment is not None:
                    outcome.assignment.update(reduced.fixed)
            except OutOfTime:  # (the strategies catch it themselves once they are under way)
                outcome = DirectionResult().stopped(instance)
            outcome.offer(*guesses[direction])
            reached = max(reached, outcome.value)
            directions[direction] = outcome
    best_direction = max(directions, key=lambda d: directions[d].value)
    best = directions[best_direction]
    proven = all(r.proven for r in directions.values())
    # no difference exceeds the trivial bound (a Dinkelbach step's bound can: lam + F_ub / D_min)
    bound = min(max(r.bound for r in directions.values()), trivial_bound(instance))
    assignment = best.assignment if best.assignment is not None else {d: 0 for d in instance.unjudged}
    details = {"strategy": strategy, "solves": sum(r.solves for r in directions.values()), "reduced": reduce}
    return certify(instance, assignment, best_direction, upper_bound=bound,
                   status="optimal" if proven else "timeout", method="exact", solver=solver, started=started,
                   claimed=best.value if math.isfinite(best.value) else None, details=details)
