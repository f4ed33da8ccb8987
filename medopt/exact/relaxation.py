"""The bounds of a direction before any model (exact/driver.py): the sums of precisions' roof dual,
iterated as Dinkelbach steps and then as the exact search over it, and their parametric bound; a
direction they settle is not searched, and a direction whose model would be too large ends at them."""

from __future__ import annotations

import itertools
import math
import time
from functools import partial

from ..core.instance import Instance
from ..core.deadlines import check_time
from ..core.result import TOLERANCE
from ..solvers import CUTOFF_SLACK
from ..solvers.roof_dual import reusing, roof_dual_bound
from ..solvers.roof_search import MAX_NODES, maximise
from .common import DirectionResult, rescored
from .count_boxes import applies as count_boxes_apply
from .count_boxes import count_boxes


def relaxed_below(formulation, quick: dict, instance: Instance, direction: str, ceiling: float) -> bool:
    """Whether the direction of a formulation with a relaxation (the sums of precisions) has a bound
    without a model below the trivial one (the roof dual's, the search's, the parametric bound, or
    the quick bound): a direction whose model would be too large then ends at that bound,
    uncertified, instead of refusing the instance (TooLargeError)."""
    return getattr(formulation, "relaxation_bound", None) is not None and \
        known_bound(quick, formulation, instance, direction) < ceiling


def known_bound(quick: dict, formulation, instance: Instance, direction: str) -> float:
    """The direction's bound without a model (quick_bound), computed once."""
    if direction not in quick:
        quick[direction] = formulation.quick_bound(instance, direction)
    return quick[direction]


def settled_by_chains(formulation, instance: Instance, guesses: dict, quick: dict, details: dict, signed: bool,
                      time_left: float | None) -> dict | None:
    """Both directions' results when the formulation's chain bound (the sums of precisions:
    formulations/precision/chains.py, no flow and no model) settles both, else None.  Each direction's
    bound is kept in ``quick`` (a bound without a model, for the steps that follow) and its best
    re-scored assignment in ``guesses``.  A direction is settled when its bound is at most the
    difference to beat (MED: the best either direction reached; a range end: its own) plus the
    solvers' cutoff slack.  Not under a time limit too short for a first compile of the chain kernel
    (kernels/precision_chains.ready)."""
    chain = getattr(formulation, "chain_bound", None)
    if chain is None or instance.limits:
        return None
    from ..kernels.precision_chains import ready  # here: Numba (docs/limits.md#memory) only where chains run
    if not ready(time_left):
        return None
    bounds = {}
    for direction in sorted(guesses, key=lambda d: -guesses[d][0]):  # the likelier winner first
        beat = guesses[direction][0] if signed else max(guess[0] for guess in guesses.values())
        found = chain(instance, direction, beat)
        if found is None:
            return None
        bound, value, assignment = found
        if value > guesses[direction][0]:
            guesses[direction] = (value, assignment)
        bounds[direction] = quick[direction] = min(quick.get(direction, math.inf), bound)
    details["chain bounds"] = len(bounds)
    reached = max(guess[0] for guess in guesses.values())
    if any(bounds[d] > (guesses[d][0] if signed else reached) + CUTOFF_SLACK for d in bounds):
        return None
    results = {}
    for direction, bound in bounds.items():
        results[direction] = DirectionResult(bound=bound)
        results[direction].offer(*guesses[direction])
    details["closed without a model"] = len(results)
    return results


MAX_RELAXATION_STEPS = 20  # Dinkelbach steps over the roof dual before the models take over
# An AP direction with at least FIRST_UNJUDGED unjudged documents has its count boxes tested by their
# decompositions alone before the exact search over the roof dual, at most FIRST_TESTS of them (values:
# docs/explanation/constants.md)
FIRST_TESTS = 200
FIRST_UNJUDGED = 400
# The share of an AP direction's time that the steps and the exact search over the roof dual get before
# the count boxes and the parametric bound (value: docs/explanation/constants.md)
SEARCH_SHARE = 1 / 4
# ... and the share of what is then left that the count boxes get before the parametric bound
COUNT_SHARE = 3 / 4
# A direction the exact search (solvers.roof_search) bounds within this of the difference reached is
# settled, with that bound: the search's bound carries its grid's distance from the true function
# (about 1e-10 at depth 1000), more than the solvers' cutoff slack; the certificate's tolerance
# (result.TOLERANCE, SPEC 5) still holds for the bound reported.
SEARCH_SLACK = 0.9 * TOLERANCE


def settled_by_relaxation(formulation, instance: Instance, reduced: Instance, direction: str, start: float,
                          quick: dict, guesses: dict, details: dict, roof=roof_dual_bound,
                          deadline: float | None = None) -> bool:
    """Whether the formulation's bound from the roof dual of its quadratic form (relaxation_bound, on
    the reduced instance: the reductions keep the direction's maximum) proves the direction cannot
    beat ``start``, a difference reached, by more than the solvers' cutoff slack.  Each bound's
    candidate (the cut's labels) is re-scored on the instance; one that beats ``start`` becomes the
    direction's guess and the next start (Dinkelbach: lam rises to each new ratio), so where the LP
    is tight the search ends at the maximum.  Where it is not (the labels stop improving), an AP
    direction with at least FIRST_UNJUDGED unjudged documents first gets the branch and bound over its
    relevant count (exact/count_boxes.py, without relevance limits), its boxes tested by their
    decompositions alone, for at most FIRST_TESTS tests;
    then the steps go on with the exact branch and bound over the roof dual (solvers.roof_search:
    persistency fixes the variables the cut labels, and it branches on the rest), all within one node
    budget, and without relevance limits only (the search maximises the form alone, whose maximiser
    may break them); details["searched"] counts these directions.  A ratio still unsettled gets the
    formulation's parametric bound (PrecisionSums.parametric_bound: the roof duals at several
    multipliers of the relevant count).  The lowest bound is kept in ``quick`` either way, for a
    search that stops.  Before that bound, an AP direction still unsettled goes on with its count
    boxes, the rows test included, for COUNT_SHARE of what is left of ``deadline`` (up to UNTIMED_TESTS
    box tests in all without one).

    ``deadline`` (the driver's share of a time limit for this direction, so that the other one still
    gets time for its bounds): the steps and the search end at it, the search with the bound of its
    open nodes (searching); where a parametric bound follows, the roof dual's steps end SEARCH_SHARE of
    the way to it (a ``roof`` that is already a timed search, searched_until's, runs to its own end), and the
    parametric bound at it, with the multipliers tried so far (at least one: past the deadline it
    costs one roof dual, not the whole bound in the other direction's time)."""
    relaxation = getattr(formulation, "relaxation_bound", None)
    if relaxation is None or not math.isfinite(start):
        return False
    with reusing():  # the steps and the parametric bound share their networks' arcs
        return _settled(formulation, relaxation, instance, reduced, direction, start, quick, guesses, details,
                        roof, deadline)


def _settled(formulation, relaxation, instance: Instance, reduced: Instance, direction: str, start: float,
             quick: dict, guesses: dict, details: dict, roof, deadline: float | None) -> bool:
    memo: dict = {}
    parametric = getattr(formulation, "parametric_bound", None) if formulation.relevant_count_ratio(reduced) else None
    now = time.perf_counter()
    halfway = deadline if deadline is None or parametric is None or roof is not roof_dual_bound \
        else now + SEARCH_SHARE * (deadline - now)
    for _ in range(MAX_RELAXATION_STEPS):
        check_time()  # each step is a maximum flow and a re-scoring
        if halfway is not None and time.perf_counter() > halfway:
            break
        bound, labels = relaxation(reduced, direction, start, roof, memo)
        quick[direction] = min(known_bound(quick, formulation, reduced, direction), bound)
        if bound <= start + (CUTOFF_SLACK if roof is roof_dual_bound else SEARCH_SLACK):
            return True
        if labels is None:
            break
        value = rescored(instance, reduced, direction, labels, guesses)
        if value <= start + CUTOFF_SLACK:
            if roof is not roof_dual_bound or instance.limits:
                break
            # the labels stopped improving: a large AP direction's count boxes by their decompositions alone,
            # for at most FIRST_TESTS tests (docs/explanation/precision-sums.md#ap-at-depth-the-count-boxes-by-decomposition)
            if parametric is not None and len(reduced.unjudged) >= FIRST_UNJUDGED and \
                    count_boxes(formulation, instance, reduced, direction, start, quick, guesses, details, halfway,
                                budget=FIRST_TESTS, rows=False):
                return True
            start = max(start, guesses[direction][0])
            roof = searching(halfway, MAX_NODES)
            details["searched"] = details.get("searched", 0) + 1
            continue
        start = value
    if parametric is None:
        return False
    # an AP direction the search did not settle: the branch and bound over its relevant count (resumed) for
    # COUNT_SHARE of what is left of its share of the time, then the parametric bound, which ends at the
    # share (docs/explanation/precision-sums.md#ap-at-depth-the-count-boxes-by-decomposition)
    if count_boxes(formulation, instance, reduced, direction, start, quick, guesses, details,
                   None if deadline is None else time.perf_counter() + COUNT_SHARE * (deadline - time.perf_counter())):
        return True
    bound = parametric(reduced, direction, start, roof_dual_bound, memo, deadline=deadline)
    quick[direction] = min(quick[direction], bound)
    return bound <= start + CUTOFF_SLACK


# without a time limit, the search of a direction whose model would be too large takes at most these
# nodes (the first search had MAX_NODES)
UNTIMED_NODES = 10 * MAX_NODES


def searched_until(formulation, instance: Instance, reduced: Instance, direction: str, start: float,
                   quick: dict, guesses: dict, details: dict, deadline: float | None) -> bool:
    """A direction whose model would be too large (exact/driver.py): first the branch and bound over
    the relevant count (exact/count_boxes.py, AP without relevance limits; the boxes of the first pass
    resumed) until ``deadline``; where they do not apply, or without a time limit once they have had
    their UNTIMED_TESTS box tests, the bisection above ``start`` (bisected) for half the time to
    ``deadline``, then the Dinkelbach steps again, each an
    exact search over the roof dual (solvers.roof_search) with no node budget, until ``deadline``
    (UNTIMED_NODES without one).  At the deadline the search under way returns the bound of its
    open nodes, a proven bound like every other (solvers/roof_search.py), so nothing is lost, and
    the parametric bound again (for the start reached) ends there too, leaving the time after the
    share to the other direction; True when the direction is settled (as settled_by_relaxation)."""
    if instance.limits or getattr(formulation, "relaxation_bound", None) is None:
        return False
    details["searched without a model"] = details.get("searched without a model", 0) + 1
    if count_boxes(formulation, instance, reduced, direction, start, quick, guesses, details, deadline):
        return True
    if count_boxes_apply(formulation, instance, reduced, start) and deadline is not None:
        return False  # the boxes had the share (docs/explanation/precision-sums.md#ap-at-depth-the-relevant-counts-rows)
    bisected(formulation, instance, reduced, direction, start, quick, guesses, details,
             None if deadline is None else (time.perf_counter() + deadline) / 2)
    return settled_by_relaxation(formulation, instance, reduced, direction, start, quick, guesses, details,
                                 roof=searching(deadline, math.inf if deadline is not None else UNTIMED_NODES),
                                 deadline=deadline)


BISECTION_STEPS = 12   # the bisection's steps without a time limit (each at most MAX_NODES nodes)
BISECTION_GAP = 1e-4   # ... and the gap between its bottom and top at which it stops


def bisected(formulation, instance: Instance, reduced: Instance, direction: str, start: float, quick: dict,
             guesses: dict, details: dict, deadline: float | None) -> None:
    """An AP direction's bound (``quick``) lowered by bisection between ``start``, a difference reached,
    and the bound (searched_until, before its search at ``start``).  Proof: relaxation_bound at any
    mu >= 0 with the exact search over the roof dual (MAX_NODES nodes, ending at ``deadline`` with
    the bound of its open nodes) in place of the roof dual is Dinkelbach's step, a proven bound: every
    ratio is at most mu + max(F, 0) / D_min, F the search's bound on max N - mu D.  Where the search
    proves F <= 0 the bound is mu itself and the top comes down to it, else the bottom goes up to mu
    (that search may only have lacked nodes: the bisection looks for the lowest mu it can prove, not
    for the maximum).  Nearer the bound the search proves more easily than at ``start``, where it
    must close every node (docs/explanation/precision-sums.md#ap-at-depth-bisection-above-the-difference-reached).  Each
    step's candidate is re-scored and kept when better (``guesses``); details["bisected"] counts the
    steps that lowered the bound."""
    if not formulation.relevant_count_ratio(reduced) or instance.limits or not start >= 0:
        return
    memo: dict = {}
    low, high = start, quick[direction]
    for _ in range(BISECTION_STEPS) if deadline is None else itertools.count():
        check_time()
        if high - low <= BISECTION_GAP or (deadline is not None and time.perf_counter() > deadline):
            break
        mu = (low + high) / 2
        bound, labels = formulation.relaxation_bound(reduced, direction, mu, searching(deadline, MAX_NODES), memo)
        if bound < quick[direction]:
            quick[direction] = bound
            details["bisected"] = details.get("bisected", 0) + 1
        if labels is not None:
            low = max(low, rescored(instance, reduced, direction, labels, guesses))
        low, high = (low, min(high, bound)) if bound <= mu + SEARCH_SLACK else (max(low, mu), high)


def searching(deadline: float | None, nodes: float):
    """The exact search over the roof dual (solvers.roof_search.maximise) for at most ``nodes`` nodes,
    ending after the node under way at ``deadline`` with the bound of its open nodes (a proven bound,
    solvers/roof_search.py), and at the time limit (limits.check_time) without one."""
    budget = [nodes]

    def check() -> None:
        if deadline is not None and time.perf_counter() > deadline:
            budget[0] = 0  # the search ends after this node, with its open nodes' bound
        else:
            check_time()

    return partial(maximise, check=check, budget=budget)
