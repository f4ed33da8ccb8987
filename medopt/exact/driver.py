"""``method="exact"``: both directions of an instance, each solved on the instance reduced by the
facts its metric declares (reductions.py), by one strategy on the metric's formulation, then
certified: the MED (``exact``, result.certify) or the two ends of the difference range
(``exact_range``, result.certify_range; SPEC 7).

A strategy solves one direction on the models of one formulation interface (formulations/base.py):
``direct`` and ``compact`` (direct.py), ``enumerate`` over the cases of a ratio (cases.py),
``dinkelbach`` and ``capped`` (dinkelbach.py), and the branch and bound over ``boxes`` of cases
(boxes.py).  For MED every direction starts from the best difference already reached (the rank
rule, the warm-start heuristics, the formulation's seeds, then the other direction) and only
looks for assignments that beat it.  For a range each direction starts from its own best guess
and is solved to its own optimum, with the facts that hold for its sign (solve_directions).  The
box searches of both directions run side by side under one clock (solve_jointly), so that a time
limit leaves each direction with the proven bound of the boxes it has tested.

Before any model, both directions get the bounds that need none: the formulation's quick bound and,
where it has a quadratic form (the sums of precisions), the roof dual at the difference reached,
iterated while its cut's labels beat it, then the exact search over it, then the parametric bound
(relaxation.py, settled_by_relaxation).  A direction these bounds settle is not searched; otherwise
they are its bound when its search stops (settle), or when its model would be too large.  Under a
time limit each direction's bounds without a model end at its share of the time left (share_of), so
that the first direction's search does not leave the other without its bounds.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable, Iterable

from ..core.bounds import trivial_bound
from ..errors import MedoptError, TooLargeError
from ..formulations import formulation_for
from ..formulations.base import BoxSearch, CappedRatio, CaseModels, CompactModel, DinkelbachModels, DirectModel
from ..core.instance import Instance
from ..core.deadlines import OutOfTime, check_time, memory_ceiling, memory_crossed, until
from ..core.reductions import reduce as reduce_instance
from ..core.result import End, MedResult, RangeResult, certify, certify_range
from ..solvers import SOLVERS
from .boxes import BoxRun, solve_boxes
from .cases import solve_cases
from .common import Clock, DirectionResult, check_memory, denominator_counts, vanishing_points, vanishing_points_exhaustive
from .dinkelbach import solve_capped, solve_dinkelbach
from .direct import solve_compact, solve_direct
from .relaxation import known_bound, relaxed_below, searched_until, settled_by_chains, settled_by_relaxation


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


def seed_guesses(instance: Instance, formulation, warm_starts: Iterable[Callable], guesses: dict,
                 closed: Callable | None = None) -> None:
    """Raise each direction's guess (difference, assignment) to the best of the warm-start
    heuristics' answers and the formulation's seeds, re-scored.  ``closed(direction, value)`` (MED
    only: a direction that cannot beat a difference reached is not searched) is handed to the
    warm starts, which skip such a direction's work (greedy's path)."""
    for heuristic in warm_starts:
        seed = heuristic(instance) if closed is None else heuristic(instance, closed=closed)
        # the answer's assignment, and each direction's own when the heuristic reports them: every one is
        # re-scored in both directions (a range needs a good start for its losing end too)
        for assignment in (seed.assignment, *seed.details.get("assignments", {}).values()):
            if not instance.satisfies_limits(assignment):
                continue
            for direction, value in instance.differences(assignment).items():
                if value > guesses[direction][0]:
                    guesses[direction] = (value, assignment)
    for direction in guesses:
        for assignment in formulation.seeds(instance, direction):
            check_time()  # each seed is a whole re-scoring, and the Q-measure's number in the thousands at depth
            if instance.satisfies_limits(assignment):
                value = instance.differences(assignment)[direction]
                if value > guesses[direction][0]:
                    guesses[direction] = (value, assignment)


@dataclass(frozen=True)
class Strategy:
    """An exact strategy: how it solves one direction, and the formulation interface it needs."""

    solve: Callable[..., DirectionResult]
    needs: type
    any_sign: bool = True     # finds a direction's maximum below 0 too (capped needs lam >= 0)


STRATEGIES = {
    "direct": Strategy(solve_direct, DirectModel),
    "compact": Strategy(solve_compact, CompactModel),
    "enumerate": Strategy(solve_cases, CaseModels),
    "dinkelbach": Strategy(solve_dinkelbach, DinkelbachModels),
    "capped": Strategy(solve_capped, CappedRatio, any_sign=False),
    "boxes": Strategy(solve_boxes, BoxSearch),
}
# Under a time limit, a direction of the sums of precisions whose model would need more than this share
# of the memory limit is searched on over the roof dual instead of built, where its relaxation bounds
# it (docs/explanation/precision-sums.md#ap-at-depth-searching-instead-of-a-large-model)
SEARCH_INSTEAD = 0.5


def available_strategies(formulation, instance, solver: str) -> tuple[str, ...]:
    """The formulation's strategies for this instance that ``solver`` can run (an integer-only
    solver cannot take a model with continuous variables)."""
    available = tuple(s for s in formulation.strategies(instance) if isinstance(formulation, STRATEGIES[s].needs))
    if SOLVERS[solver].integer_only:
        available = tuple(s for s in available if s not in formulation.continuous)
    return available


def exact(instance: Instance, *, solver: str, strategy: str, time_limit: float | None = None, reduce: bool = True,
          warm_starts: Iterable[Callable] = (), memory_limit: int | None = None) -> MedResult:
    """Both directions' maxima, each solved by ``strategy`` on ``solver`` (as methods.exact_settings
    chose them) on the instance reduced by the metric's proved facts, and certified.  ``warm_starts``
    are heuristics (instance -> MedResult) whose answers seed the search as differences already
    reached (methods.py picks them).  A direction whose models are predicted to need more than
    ``memory_limit`` bytes (default limits.memory_limit()) is refused with TooLargeError before
    anything is built (check_memory)."""
    started = time.perf_counter()
    solved = solve_directions(instance, solver=solver, time_limit=time_limit, strategy=strategy, reduce=reduce,
                              warm_starts=warm_starts, memory_limit=memory_limit, signed=False)
    directions = solved.directions
    best_direction = max(directions, key=lambda d: directions[d].value)
    best = directions[best_direction]
    proven = all(r.proven for r in directions.values())
    # no difference exceeds the trivial bound (a Dinkelbach step's bound can: lam + F_ub / D_min)
    bound = min(max(r.bound for r in directions.values()), trivial_bound(instance))
    assignment = best.assignment if best.assignment is not None else {d: 0 for d in instance.unjudged}
    return certify(instance, assignment, best_direction, upper_bound=bound,
                   status="optimal" if proven else "timeout", method="exact", solver=solved.solver, started=started,
                   claimed=best.value if math.isfinite(best.value) else None, details=solved.details)


def exact_range(instance: Instance, *, solver: str, strategy: str, time_limit: float | None = None, reduce: bool = True,
                warm_starts: Iterable[Callable] = (), memory_limit: int | None = None,
                strategy_given: bool = False) -> RangeResult:
    """The difference range (SPEC 7): each direction solved to its own optimum (no cutoff from the
    other), on the instance reduced by the facts that hold for that direction's sign, and each end
    certified on its own (result.certify_range).  ``strategy_given``: the strategy was asked for, not
    the default (a range end it cannot solve is then refused, not given to another strategy)."""
    started = time.perf_counter()
    solved = solve_directions(instance, solver=solver, time_limit=time_limit, strategy=strategy, reduce=reduce,
                              warm_starts=warm_starts, memory_limit=memory_limit, signed=True,
                              strategy_given=strategy_given)
    ends = {}
    for direction, outcome in solved.directions.items():
        ends[direction] = End(outcome.assignment if outcome.assignment is not None else {d: 0 for d in instance.unjudged},
                              min(outcome.bound, trivial_bound(instance)),
                              "optimal" if outcome.proven else "timeout",
                              outcome.value if math.isfinite(outcome.value) else None)
    return certify_range(instance, ends, method="exact", solver=solved.solver, started=started, details=solved.details)


@dataclass
class Solved:
    directions: dict          # direction -> DirectionResult
    solver: str
    details: dict


def solve_directions(instance: Instance, *, solver: str, time_limit: float | None, strategy: str,
                     reduce: bool, warm_starts: Iterable[Callable], memory_limit: int | None,
                     signed: bool, strategy_given: bool = False) -> Solved:
    """Each direction's maximum of its difference.  For MED (``signed=False``) every direction starts
    from the best difference either reached and stops at it: a direction that cannot beat the other
    need not be solved to its own optimum.  For a range (``signed=True``) each direction starts from
    its own best guess and is solved to its own optimum, whatever its sign; a direction not known
    to reach a difference > 0 gets only the reductions proved for any sign (reductions.py), and a
    strategy that needs lam >= 0 (``capped``) gives way to the formulation's next one, unless it was
    asked for (``strategy_given``: then the range is refused)."""
    if memory_limit is not None and (isinstance(memory_limit, bool) or not isinstance(memory_limit, (int, float))
                                     or not memory_limit > 0):
        raise MedoptError(f"memory_limit must be a positive number of bytes, got {memory_limit!r}")
    formulation = formulation_for(instance.metric)
    available = available_strategies(formulation, instance, solver)
    clock = Clock(time_limit)
    details = {"strategy": strategy, "solves": 0, "reduced": reduce}
    if instance.a == instance.b and not instance.residual and not instance.limits:
        # identical cut lists score identically under every assignment: both differences are 0
        zero = {d: 0 for d in instance.unjudged}
        directions = {d: DirectionResult(value=0.0, assignment=zero, bound=0.0) for d in ("a", "b")}
        return Solved(directions, solver, dict(details, strategy="identical lists"))
    # model building checks the deadline too (limits.check_time); a solve past the memory ceiling is
    # stopped, and the computation then ends as at its deadline (limits.memory_ceiling)
    with until(clock.deadline), memory_ceiling(memory_limit):
        directions, guesses = {}, {d: rank_rule_guess(instance, d) for d in ("a", "b")}
        quick = {}
        # first the sums of precisions' chain bounds (no flow, no model): where they settle both directions
        # nothing else runs (relaxation.settled_by_chains)
        chained = settled_by_chains(formulation, instance, guesses, quick, details, signed, clock.remaining())
        if chained is not None:
            return Solved(chained, solver, dict(details, strategy="chains"))
        # a search under a time limit may stop: its bound without a model is computed first, inside
        # the limit (a cheap bound, computed first); without a limit only when a search stops
        if clock.deadline is not None:
            quick.update({d: min(quick.get(d, math.inf), formulation.quick_bound(instance, d)) for d in ("a", "b")})
        def closed(direction: str, value: float) -> bool:  # MED: its bound without a model is at most a reached one
            reached = max(value, *(guess[0] for guess in guesses.values()))
            return known_bound(quick, formulation, instance, direction) <= reached

        try:
            # for MED, after the chain bounds, their re-scored maximisers are the starts: the warm starts are left
            # out (relaxation.settled_by_chains; docs/explanation/fast-paths.md#ap-at-depth-the-chain-bound); a
            # range end below 0 still gets them (the chains look for differences >= 0)
            chained = "chain bounds" in details and not signed
            seed_guesses(instance, formulation, () if chained else warm_starts, guesses, None if signed else closed)
        except OutOfTime:  # the seeds found so far stand
            pass
        reached = max(guess[0] for guess in guesses.values())  # a difference some assignment reaches
        ceiling = trivial_bound(instance)
        joint = {}  # direction -> (reduced instance, start): the box searches run side by side (solve_jointly)
        order = sorted(guesses, key=lambda d: -guesses[d][0])  # the likelier winner first
        # First the bounds that need no model, for both directions, so that a direction whose search
        # never gets the time still has them; a direction they settle is not searched.
        reduced_for = {}

        def close_without_model(direction: str, bound: float) -> None:
            directions[direction] = DirectionResult(bound=bound)
            directions[direction].offer(*guesses[direction])
            details["closed without a model"] = details.get("closed without a model", 0) + 1

        for direction in order:
            reached = max(guess[0] for guess in guesses.values())  # a relaxation's candidate may raise it
            start = guesses[direction][0] if signed else reached
            if start >= ceiling:  # no difference exceeds the trivial bound: nothing left to prove
                directions[direction] = DirectionResult(bound=ceiling)
                directions[direction].offer(*guesses[direction])
            elif not signed and known_bound(quick, formulation, instance, direction) <= start:
                close_without_model(direction, quick[direction])  # MED: it cannot beat the difference reached
            else:
                try:
                    if clock.expired():
                        raise OutOfTime
                    reduced_for[direction] = reduce_instance(instance, direction, reaches_positive=not signed or start > 0) \
                        if reduce else instance
                    if settled_by_relaxation(formulation, instance, reduced_for[direction], direction, start, quick,
                                             guesses, details, deadline=share_of(clock, order, direction, directions)):
                        close_without_model(direction, quick[direction])
                except OutOfTime:
                    pass
        reached = max(guess[0] for guess in guesses.values())
        for direction in (d for d in order if d not in directions):
            start = guesses[direction][0] if signed else reached
            if not signed and quick.get(direction, math.inf) <= start:  # the first direction's search raised it
                close_without_model(direction, quick[direction])
                continue
            chosen = strategy
            if signed and not start >= 0 and not STRATEGIES[strategy].any_sign:
                if strategy_given:
                    raise MedoptError(f"{instance.metric}: strategy {strategy!r} needs a difference >= 0; "
                                      f"a range end below 0 needs another ({', '.join(available)})")
                chosen = next(s for s in reversed(available) if STRATEGIES[s].any_sign)
            reduced = reduced_for.get(direction)
            try:
                if clock.expired() or reduced is None:
                    raise OutOfTime
                try:
                    # under a time limit a model above SEARCH_INSTEAD of the memory limit is not built where
                    # the relaxation bounds the direction: it is searched on instead (below)
                    search_instead = clock.deadline is not None and relaxed_below(formulation, quick, instance,
                                                                                  direction, ceiling)
                    check_memory(reduced, formulation, chosen, solver, memory_limit,
                                 share=SEARCH_INSTEAD if search_instead else 1.0)
                except TooLargeError as refused:
                    if not relaxed_below(formulation, quick, instance, direction, ceiling):
                        raise
                    # the search over the roof dual goes on, with no node budget, for this direction's
                    # share of the time left; unsettled, its bound is the direction's
                    try:
                        if searched_until(formulation, instance, reduced, direction, start, quick, guesses, details,
                                          share_of(clock, order, direction, directions)):
                            close_without_model(direction, quick[direction])
                            continue
                    finally:  # unsettled, whether at its share of the time or at the deadline
                        if direction not in directions:
                            details["stopped"] = "model too large" if getattr(refused, "beyond_limit", True) else \
                                "model too large for the time limit"
                    raise OutOfTime from None
                if chosen == "boxes":
                    joint[direction] = (reduced, start)
                    continue
                outcome = STRATEGIES[chosen].solve(formulation, reduced, direction, solver, clock, start=start)
            except OutOfTime:  # (the strategies catch it themselves once they are under way)
                outcome = DirectionResult().stopped(instance)
            directions[direction] = settle(outcome, instance, direction, reduced, guesses, formulation, signed, quick)
            reached = max(reached, outcome.value)
            details["solves"] += outcome.solves
        if joint:
            for direction, outcome in solve_jointly(formulation, joint, solver, clock, signed).items():
                directions[direction] = settle(outcome, instance, direction, joint[direction][0], guesses,
                                               formulation, signed, quick)
                details["solves"] += outcome.solves
        if memory_crossed():
            details["stopped"] = "memory limit"
    return Solved(directions, solver, details)


def share_of(clock: Clock, order: list, direction: str, directions: dict) -> float | None:
    """The moment a direction's work without a model should end under a time limit (None without
    one): its share of the time left, all of it for the last direction still open, else half."""
    if clock.deadline is None:
        return None
    later = sum(1 for d in order[order.index(direction) + 1:] if d not in directions)
    now = time.perf_counter()
    return now + max(0.0, clock.deadline - now) / (1 + later)


def settle(outcome: DirectionResult, instance: Instance, direction: str, reduced, guesses: dict, formulation,
           signed: bool, quick: dict) -> DirectionResult:
    """A direction's outcome completed: the documents its reduction fixed, its guess offered, for a
    range end the assignments whose ratio denominator vanishes (cover_vanishing_denominator), and for
    a search stopped early the formulation's bound without a model (quick_bound) when lower."""
    if outcome.assignment is not None and reduced is not None:
        outcome.assignment.update(reduced.fixed)
    outcome.offer(*guesses[direction])
    if signed and is_ratio(formulation) and not formulation.covers_zero_denominators and denominator_vanishes(instance):
        cover_vanishing_denominator(outcome, instance, direction)
    if not outcome.proven:  # stopped early: the formulation's bound without a model, when lower
        outcome.bound = min(outcome.bound, known_bound(quick, formulation, instance, direction))
    return outcome


def solve_jointly(formulation, searches: dict, solver: str, clock: Clock, signed: bool) -> dict:
    """The branch and bound over boxes of both directions side by side, one box at a time (boxes.BoxRun),
    under one clock: ``searches`` maps each direction to (its reduced instance, its start).

    For MED (``signed=False``) the boxes of both directions form one best-first search: the next box
    is the open one of largest bound in either direction (ties: the likelier winner's first), and
    each direction's cutoff is the best difference reached in either (a difference some assignment
    reaches, as the start of the second direction was when they ran one after the other).  So the
    roots of both directions are tested before boxes of lower bound are split further, and when time
    runs out each direction's bound is the largest of its open boxes' proven bounds (BoxRun), not
    the trivial bound of a direction that never got the time.  For a range each end keeps its own
    cutoff and the next box is taken from the end whose open bound is furthest above its cutoff.
    Either way every box is closed by its own proof (a bound at most the cutoff) and every case
    lies in one box, so each direction's result is as exact as solve_boxes's, reached in another
    order."""
    runs = {}

    def reached():
        return max(run.result.value for run in runs.values())

    for direction, (reduced, start) in searches.items():
        runs[direction] = BoxRun(formulation, reduced, direction, solver, clock, start,
                                 floor=None if signed else reached)
    active = dict(runs)
    while active:
        direction = max(active, key=lambda d: active[d].open_bound() - (active[d].cutoff() if signed else 0.0))
        if not active[direction].step():
            del active[direction]
    return {direction: run.finish() for direction, run in runs.items()}


def is_ratio(formulation) -> bool:
    return isinstance(formulation, (CaseModels, DinkelbachModels, BoxSearch))


def denominator_vanishes(instance: Instance) -> bool:
    """Whether some assignment may leave a ratio metric's denominator (R, the ideal DCG) at 0: no
    judged document counts towards it.  Such assignments score 0 in both lists (SPEC 3)."""
    counts = denominator_counts(instance)
    return not any(counts(grade) for grade in instance.judged_grades if grade > 0)


def cover_vanishing_denominator(outcome: DirectionResult, instance: Instance, direction: str) -> None:
    """A ratio's strategies search the assignments whose denominator is positive (their cases start
    at R = 1; a Dinkelbach bound holds for D > 0), and for MED that is enough: the difference 0 of
    the others never beats a direction that holds the MED.  A range end may be below 0, so the
    others count: their difference is 0.  One that meets the limits is offered and 0 joins the
    bound; when none is found, 0 joins the bound only if vanishing_points may have missed one
    (vanishing_points_exhaustive: honest, uncertified)."""
    point = next((p for p in vanishing_points(instance) if instance.satisfies_limits(p)), None)
    if point is not None:
        outcome.offer(instance.differences(point)[direction], point)
    if point is not None or not vanishing_points_exhaustive(instance):
        outcome.bound = max(outcome.bound, 0.0)
