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
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import MedoptError
from ..formulations import formulation_for
from ..formulations.base import DinkelbachMatrix
from ..formulations.common import assignment_from
from ..instance import Instance
from ..result import MedResult, certify
from .backends import CUTOFF_SLACK, SOLVERS, ColumnValues, compile_model, linear_vector, solve

DINKELBACH_TOLERANCE = 1e-11
MAX_DINKELBACH_STEPS = 100
LAM_PLACEHOLDER = 0.6180339887498949  # any value no coefficient sum of N is likely to cancel exactly


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


PRUNE_MARGIN = 1e-12  # added to a case bound that prunes a case, for the rounding in computing it


def solve_cases(formulation, instance, direction, solver, clock, start: float = -math.inf) -> DirectionResult:
    """One model per case.  A formulation with ``bounded_cases`` (its cases best bound first, each
    with a proven upper bound of its optimum computed without a solver) has a case whose bound does
    not beat the best difference reached settled by that bound alone, and with it every later one."""
    result = DirectionResult()
    feasible_cases = 0
    bounded = formulation.bounded_cases(instance, direction)
    pairs = bounded if bounded is not None else ((None, case) for case in formulation.cases(instance))
    for bound, case in pairs:
        remaining = clock.remaining()
        if remaining is not None and remaining <= 0:
            result.proven = False
            result.bound = max(result.bound, trivial_bound(instance))
            break
        if bound is not None and bound <= max(start, result.value):
            result.bound = max(result.bound, bound + PRUNE_MARGIN)
            feasible_cases += 1
            result.log.append(("the remaining cases, pruned by their bounds", math.nan, bound))
            break
        model = formulation.build(instance, direction, case=case)
        outcome = solve(model, solver, remaining, cutoff=cutoff_for(max(start, result.value)))
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
    if feasible_cases == 0 and result.proven:
        settle_without_relevance(result, instance)
    return result


def settle_without_relevance(result: DirectionResult, instance: Instance) -> None:
    """Every case (or box) infeasible: only assignments with D = 0 (no relevant document) remain,
    whose difference is 0; the all-zero assignment is one of them if it meets the limits."""
    zero = {d: 0 for d in instance.unjudged}
    if not instance.satisfies_limits(zero):
        raise MedoptError("no assignment satisfies the relevance limits")
    result.offer(0.0, zero)
    result.bound = 0.0


def dinkelbach_matrix(formulation, instance, direction) -> DinkelbachMatrix:
    """The formulation's Dinkelbach model through Pyomo: built with a placeholder lam so that every
    variable of N and of D is a column of the compiled model (a variable only in D would otherwise
    be dropped); each step sets the objective itself."""
    model = formulation.build(instance, direction, lam=LAM_PLACEHOLDER)
    matrix = compile_model(model)
    return DinkelbachMatrix(matrix, *linear_vector(model.numerator, matrix), *linear_vector(model.denominator, matrix),
                            lambda x: assignment_from(model, ColumnValues(matrix.columns, x)))


def solve_dinkelbach(formulation, instance, direction, solver, clock, start: float = -math.inf,
                     cap: float | None = None) -> DirectionResult:
    """Build and compile the model once; each step only changes the objective vector N - lam D.

    ``start`` is any lam >= 0, typically a difference already reached: if F(start) <= eps
    the direction cannot beat it, and one solve settles the direction.  With ``cap`` the ratio
    is N / min(cap, D) (solve_capped): the piece max N - lam cap is solved once, first (measured
    on five DL-HARD AP(norm=min)@100 instances, CP-SAT: faster than solving it last, at the settled lam:
    3.4 / 3.3 / 0.52 / 0.41 / 0.71 s against 4.5 / 4.0 / 0.60 / 0.61 / 0.83 s)."""
    from pyomo.common.errors import InfeasibleConstraintException

    result = DirectionResult()
    smallest = formulation.min_denominator(instance)
    try:
        model = formulation.dinkelbach_matrix(instance, direction) or dinkelbach_matrix(formulation, instance, direction)
    except InfeasibleConstraintException:
        raise MedoptError("no assignment satisfies the relevance limits") from None
    matrix, numerator, numerator_constant = model.matrix, model.numerator, model.numerator_constant
    denominator, denominator_constant = model.denominator, model.denominator_constant
    lam, capped_bound = max(0.0, start), -math.inf

    def step(c, offset, smallest):
        """Solve max c.x + offset, offer the point at its ratio; the outcome and lam + F_ub / smallest."""
        matrix.c, matrix.offset = c, offset
        # some assignment is known (start or an earlier step's): the model is feasible and the
        # step need only find out whether N - lam D > 0 anywhere (solve(cutoff=...))
        known = math.isfinite(start) or result.assignment is not None
        outcome = solve(matrix, solver, clock.remaining(), cutoff=0.0 if known else None)
        result.solves += 1
        if outcome.status == "infeasible":
            raise MedoptError("no assignment satisfies the relevance limits")
        if outcome.x is not None:
            top = float(numerator @ outcome.x + numerator_constant)
            bottom = float(denominator @ outcome.x + denominator_constant)
            bottom = bottom if cap is None else min(cap, bottom)
            result.offer(top / bottom if bottom > 0 else 0.0, model.assignment(outcome.x))
        result.log.append((lam, outcome.objective, outcome.bound))
        gap = max(outcome.bound, 0.0) / smallest if math.isfinite(outcome.bound) else math.inf
        return outcome, known, (lam + gap if math.isfinite(gap) else trivial_bound(instance))

    if cap is not None:
        # the cap's piece, once: max N - lam cap <= F_ub, so every N / cap <= lam + F_ub / cap; a
        # solution is the piece's optimum, and lam, raised to its ratio (>= N / cap), stays above it
        outcome, known, capped_bound = step(numerator.copy(), numerator_constant - lam * cap, cap)
        if outcome.status != "optimal":
            result.bound, result.proven = max(capped_bound, trivial_bound(instance)), False
            return result
        lam = max(lam, result.value)
    for _ in range(MAX_DINKELBACH_STEPS):
        outcome, known, bound = step(numerator - lam * denominator, numerator_constant - lam * denominator_constant,
                                     smallest)
        result.bound = max(bound, capped_bound)
        if outcome.status != "optimal":
            result.proven = False
            return result
        # a cut-off step proves only F(lam) <= CUTOFF_SLACK: that settles lam as well (bound lam + slack)
        settled = max(DINKELBACH_TOLERANCE * smallest, CUTOFF_SLACK if known else 0.0)
        if outcome.bound <= settled or result.value <= lam:
            # F(lam) ~ 0: lam is the maximum ratio up to the gap reported in the bound
            return result
        lam = result.value
    result.proven = False
    return result


# HiGHS dual pricing for box LPs of at most this many rows: devex (no steepest-edge weights to set up
# from each new start basis).  Measured on replayed Q(beta=1) box LPs: 18 LPs of 705 rows (k = 20)
# 2.3 -> 2.0 ms each, 38 of ~1,200 rows 2.9 -> 2.5 ms; 25 LPs at k = 100 (~20,000 rows) 420 -> 530 ms.
DEVEX_ROWS = 2000
BOX_TIME_LIMIT = 0.25  # seconds for a box's test model (CP-SAT) at first; a box not settled in that time is split


def solve_boxes(formulation, instance, direction, solver, clock, start: float = -math.inf) -> DirectionResult:
    """Exact branch and bound over boxes of cases (``formulation.root_boxes`` / ``split``, the Q-measure).

    A case (one profile) is solved with its exact model and the cutoff max(start, best difference
    found), as solve_cases does.  A box of cases is tested at lam = that cutoff: its model's optimum
    F(lam) is >= R(x) (difference(x) - lam) for every assignment x of the box (R(x) >= R_lo >= 1), so
    every difference in the box is <= lam + max(F_ub, 0) / R_lo for any proven upper bound F_ub of F
    (HiGHS: the LP relaxation's optimum, solved to the end since a child's LP is as large as its
    parent's; CP-SAT: the MILP's bound within a budget that starts at BOX_TIME_LIMIT and doubles each
    time a test ends without any bound, i.e. inside presolve on a large model).  A box whose
    bound does not beat the cutoff is closed; any other is split, its halves inheriting its bound, and
    boxes are taken best bound first.  Every solution is re-scored by the evaluator (a box's objective
    is only a bound) and offered when it meets the relevance limits (an LP point is rounded), so the
    value is a true difference.  The bound reported is the largest bound of a closed box (and of the
    open ones when time ran out): every case lies in exactly one box.  The formulation may compile one
    template per direction (``box_models``) whose ``patched(case, lam)`` is the model's matrix, and a
    second one for profiles (``box_models(cases=True)``); when that one says its LP relaxation is
    tight (``exact_lp``), a profile is solved as an LP first (HiGHS) and goes to its MILP only when the
    LP optimum beats both the cutoff and the re-scored rounding of its point."""
    import heapq

    result = DirectionResult()
    feasible_boxes, order, templates, case_templates, box_budget = 0, 0, False, False, BOX_TIME_LIMIT
    rescored = {}  # solver points already re-scored (offer_rescored)
    heap = []
    ceiling = trivial_bound(instance)  # no difference exceeds it: a box that reaches it needs no more work
    for case in formulation.root_boxes(instance):
        heap.append((-ceiling, order, case, None))
        order += 1
    heapq.heapify(heap)
    while heap:
        remaining = clock.remaining()
        if remaining is not None and remaining <= 0:
            result.proven = False
            result.bound = max([result.bound] + [-entry[0] for entry in heap])
            break
        inherited, _, case, start_basis = heapq.heappop(heap)
        inherited = -inherited  # the parent's bound (the trivial one for a root)
        cutoff = max(start, result.value)
        if inherited <= cutoff + CUTOFF_SLACK:  # the parent's bound (or the trivial one) already settles it
            result.bound = max(result.bound, inherited)
            feasible_boxes += 1  # not known infeasible: some assignment reaches the cutoff
            continue
        if hasattr(formulation, "small_box"):  # few assignments: evaluated one by one, the box's exact maximum
            settled = formulation.small_box(instance, direction, case)
            if settled is not None:
                bound, assignment = settled
                result.log.append((f"{case.label} (all assignments)", bound, bound))
                if assignment is not None:
                    feasible_boxes += 1
                    value = instance.differences(assignment)[direction]
                    result.offer(value, assignment)
                    result.bound = max(result.bound, bound, value)
                continue
        single = "box" not in case.fix
        if not single and hasattr(formulation, "too_wide") and formulation.too_wide(instance, case):
            for child in formulation.split(instance, case):  # its relaxation would not bound it: split at once
                heapq.heappush(heap, (-inherited, order, child, start_basis))
                order += 1
            continue
        if templates is False:  # a compiled template patched per box, when the formulation has one
            templates = formulation.box_models(instance, direction) if hasattr(formulation, "box_models") else None
        if single and case_templates is False:  # the formulation's template for one-profile cases
            case_templates = formulation.box_models(instance, direction, cases=True) if templates is not None \
                else None
        lam = None if single else (cutoff if math.isfinite(cutoff) else -ceiling)
        template = case_templates if single else templates
        matrix = template.patched(case, lam) if template is not None else None
        model = formulation.build(instance, direction, case=case, lam=lam) if matrix is None else matrix
        if single and solver == "highs" and matrix is not None and template.exact_lp:
            # a profile whose template makes its LP relaxation tight (the collection cuts): the LP's
            # optimum bounds the profile, so it settles the profile when it does not beat the cutoff
            # or when its rounded point, re-scored, reaches it; otherwise the MILP below
            outcome = template.session.solve(replace(matrix, highs_options={"presolve": "off"}), remaining)
            result.solves += 1
            # HiGHS can call an LP optimal with no feasible primal point (primal_solution_status 1 after
            # unscaling, seen on a DL-HARD Q(beta=1)@100 profile): no point to re-score, so the MILP settles it
            if outcome.status == "optimal" and outcome.x is not None:
                value = offer_rescored(result, instance, direction, template.assignment(outcome.x), rescored)
                if outcome.bound <= max(cutoff, value) + CUTOFF_SLACK:
                    feasible_boxes += 1
                    result.log.append((f"{case.label} (LP)", outcome.objective, min(inherited, outcome.bound)))
                    result.bound = max(result.bound, min(inherited, outcome.bound), value)
                    continue
        if single:  # one case: its exact model, solved like solve_cases does
            outcome = solve(model, solver, remaining, cutoff=cutoff_for(cutoff))
        else:  # the box's test model at lam: F(lam) <= 0 proves that no assignment of the box beats lam
            if solver == "highs" and matrix is not None:  # the LP relaxation: a weaker bound, found much faster
                # presolve off: measured on 20 Q(beta=1)@20 box LPs, 198 -> 131 ms (same optima); the
                # parent's final basis as the start: 14 Q(beta=1)@100 box LPs took 8.3 s cold, 4.7 s so;
                # one HiGHS instance for all of them (the template's HighsSession)
                options = {"presolve": "off"}
                if matrix.A.shape[0] <= DEVEX_ROWS:
                    options["simplex_dual_edge_weight_strategy"] = 1  # devex
                outcome = templates.session.solve(replace(matrix, highs_options=options, basis=start_basis), remaining)
            else:
                budget = remaining if remaining is None else min(remaining, box_budget)
                outcome = solve(model, solver, budget, cutoff=0.0 if math.isfinite(cutoff) else None)
            if not math.isfinite(outcome.bound) and outcome.status == "timeout":
                box_budget *= 2  # stopped before it had any bound: the next box gets longer
        result.solves += 1
        if outcome.status == "infeasible":
            continue
        feasible_boxes += 1
        if outcome.values is not None:
            assignment = assignment_from(model, outcome.values) if matrix is None else template.assignment(outcome.x)
            offer_rescored(result, instance, direction, assignment, rescored)
        if single:
            bound = proven_bound(outcome, instance)
        elif math.isfinite(outcome.bound):  # every x of the box: R(x) (difference - lam) <= F <= F_ub, R(x) >= R_lo
            bound = lam + max(outcome.bound, 0.0) / case.denominator
        else:
            bound = ceiling
        bound = min(inherited, bound)
        result.log.append((case.label, outcome.objective, bound))
        if outcome.status != "optimal" and (single or (clock.remaining() is not None and clock.remaining() <= 0)):
            result.proven = False
            result.bound = max(result.bound, bound)
            continue
        if single or bound <= max(start, result.value) + CUTOFF_SLACK:
            result.bound = max(result.bound, bound)
            continue
        for child in formulation.split(instance, case):
            heapq.heappush(heap, (-bound, order, child, outcome.basis))
            order += 1
    if feasible_boxes == 0 and result.proven:
        settle_without_relevance(result, instance)
    return result


def offer_rescored(result: DirectionResult, instance: Instance, direction: str, assignment: dict,
                   memo: dict) -> float:
    """Offer ``assignment`` (a solver's point, rounded) at its re-scored difference when it meets the
    limits; that difference, or -inf.  ``memo`` (assignment items -> difference) skips points already
    scored: about half of a Q-measure direction's box LP points (DL-HARD qrels, k = 20) repeat one."""
    key = tuple(assignment.items())
    if key not in memo:
        memo[key] = instance.differences(assignment)[direction] if instance.satisfies_limits(assignment) \
            else -math.inf
        if math.isfinite(memo[key]):
            result.offer(memo[key], assignment)
    return memo[key]


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


def solve_compact(formulation, instance, direction, solver, clock, start: float = -math.inf) -> DirectionResult:
    """The formulation's compact model (continuous variables), solved like a direct one."""
    return solve_direct(formulation, instance, direction, solver, clock, start, build=formulation.build_compact)


def solve_capped(formulation, instance, direction, solver, clock, start: float = -math.inf) -> DirectionResult:
    """A ratio N / min(cap, D) (``formulation.capped``: AP(norm=min)@k = SP / min(k, R)) by Dinkelbach on
    the model of N / D, the cap a piece of its own (solve_dinkelbach(cap=...)).

    For lam >= 0, lam min(cap, D) = min(lam cap, lam D), so N - lam min(cap, D) = max(N - lam cap,
    N - lam D) and F(lam) = max(max N - lam cap, max N - lam D) over the same assignments: the
    first piece needs no denominator variables at all (N's model alone), and since lam only grows,
    one solve of it at the first lam settles it for every later one."""
    piece, cap = formulation.capped(instance)
    return solve_dinkelbach(formulation, piece, direction, solver, clock, start, cap=cap)


STRATEGIES = {"direct": solve_direct, "enumerate": solve_cases, "dinkelbach": solve_dinkelbach,
              "compact": solve_compact, "capped": solve_capped}
STRATEGIES["boxes"] = solve_boxes  # branch and bound over boxes of cases (Q-measure)


def available_strategies(formulation, instance, solver: str) -> tuple[str, ...]:
    """The formulation's strategies for this instance that ``solver`` can run (CP-SAT needs integers)."""
    available = formulation.strategies_for(instance)
    if solver == "cpsat":
        available = tuple(s for s in available if s not in formulation.continuous_strategies)
    return available


def exact(instance: Instance, *, solver: str | None = None, time_limit: float | None = None,
          strategy: str = "auto", reduce: bool = True, **_ignored) -> MedResult:
    started = time.perf_counter()
    formulation = formulation_for(instance.metric)
    solver = solver or formulation.solver_for(instance)
    if solver not in SOLVERS:
        raise MedoptError(f"unknown solver {solver!r}; choose one of {', '.join(SOLVERS)}")
    available = available_strategies(formulation, instance, solver)
    if strategy == "auto":
        strategy = available[-1]
    if strategy not in available:
        needs_highs = " with CP-SAT (its model has continuous variables: use HiGHS)" \
            if strategy in formulation.continuous_strategies else ""
        raise MedoptError(f"{instance.metric}: strategy {strategy!r} not available{needs_highs} "
                          f"(choose from {', '.join(available)})")
    clock = Clock(time_limit)
    if instance.a == instance.b and not instance.residual and not instance.limits:
        # identical cut lists score identically under every assignment: the MED is 0
        return certify(instance, {d: 0 for d in instance.unjudged}, "a", upper_bound=0.0, status="optimal",
                       method="exact", solver=solver, started=started, claimed=0.0,
                       details={"strategy": "identical lists", "solves": 0})
    directions, guesses = {}, {d: rank_rule_guess(instance, d) for d in ("a", "b")}
    heuristic = formulation.warm_start.get(instance.metric.family)
    if heuristic and not instance.limits:
        from ..api import METHODS
        if heuristic in METHODS:
            seed = METHODS[heuristic](instance)
            if seed.value > guesses[seed.direction][0]:
                guesses[seed.direction] = (seed.value, seed.assignment)
    for direction in guesses:
        for assignment in formulation.seeds(instance, direction):
            if instance.satisfies_limits(assignment):
                value = instance.differences(assignment)[direction]
                if value > guesses[direction][0]:
                    guesses[direction] = (value, assignment)
    reached = max(guess[0] for guess in guesses.values())  # a difference some assignment reaches
    ceiling = trivial_bound(instance)
    for direction in sorted(guesses, key=lambda d: -guesses[d][0]):  # the likelier winner first
        if reached >= ceiling:  # no difference exceeds the trivial bound: nothing left to prove
            directions[direction] = DirectionResult(bound=ceiling)
            directions[direction].offer(*guesses[direction])
            continue
        reduced = instance.reduced(direction) if reduce else instance
        outcome = STRATEGIES[strategy](formulation, reduced, direction, solver, clock, start=reached)
        if outcome.assignment is not None:
            outcome.assignment.update(reduced.fixed)
        outcome.offer(*guesses[direction])
        reached = max(reached, outcome.value)
        directions[direction] = outcome
    best_direction = max(directions, key=lambda d: directions[d].value)
    best = directions[best_direction]
    proven = all(r.proven for r in directions.values())
    bound = max(r.bound for r in directions.values())
    assignment = best.assignment if best.assignment is not None else {d: 0 for d in instance.unjudged}
    details = {"strategy": strategy, "solves": sum(r.solves for r in directions.values()), "reduced": reduce}
    return certify(instance, assignment, best_direction, upper_bound=bound,
                   status="optimal" if proven else "timeout", method="exact", solver=solver, started=started,
                   claimed=best.value if math.isfinite(best.value) else None, details=details)
