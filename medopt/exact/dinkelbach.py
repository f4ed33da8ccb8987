"""Strategies ``dinkelbach`` and ``capped``: a ratio N / D by Dinkelbach iteration.

lam is raised to the ratio of each new solution until the solver proves F(lam) = max N(x) -
lam D(x) <= eps.  At any iteration, for every x with D(x) > 0, N(x)/D(x) <= lam + max(F_ub, 0) /
D_min, which is the upper bound reported (x with D(x) = 0 have N(x) = 0 and a difference of 0).
"""

from __future__ import annotations

import math

from ..core.bounds import trivial_bound
from ..errors import MedoptError
from ..formulations.base import DinkelbachMatrix
from ..core.deadlines import OutOfTime
from ..modeling import ColumnValues, assignment_from, compile_model, linear_vector
from ..solvers import CUTOFF_SLACK, solve
from .common import DirectionResult


DINKELBACH_TOLERANCE = 1e-11


MAX_DINKELBACH_STEPS = 100


LAM_PLACEHOLDER = 0.6180339887498949  # any value no coefficient sum of N is likely to cancel exactly


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

    ``start`` is a difference already reached (any sign; -inf: none known): if F(start) <= eps
    the direction cannot beat it, and one solve settles the direction.  With ``cap`` the ratio
    is N / min(cap, D) (solve_capped): the piece max N - lam cap is solved once, first (faster than
    solving it last, at the settled lam: docs/explanation/precision-sums.md#apnormmin-the-capped-strategy)."""
    from pyomo.common.errors import InfeasibleConstraintException

    result = DirectionResult()
    smallest = formulation.min_denominator(instance)
    try:
        model = formulation.dinkelbach_matrix(instance, direction) or dinkelbach_matrix(formulation, instance, direction)
    except InfeasibleConstraintException:
        raise MedoptError("no assignment satisfies the relevance limits") from None
    except OutOfTime:
        return result.stopped(instance)
    matrix, numerator, numerator_constant = model.matrix, model.numerator, model.numerator_constant
    denominator, denominator_constant = model.denominator, model.denominator_constant
    # lam: a difference some assignment reaches (start), or 0 before any is known; a range's end may be
    # below 0, and then so is lam (Dinkelbach needs only D > 0; the cap's piece needs lam >= 0)
    lam, capped_bound = (start if math.isfinite(start) else 0.0), -math.inf
    lam_reached = math.isfinite(start)

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

    try:
        if cap is not None:
            # the cap's piece, once: max N - lam cap <= F_ub, so every N / cap <= lam + F_ub / cap; a
            # solution is the piece's optimum, and lam, raised to its ratio (>= N / cap), stays above it
            outcome, known, capped_bound = step(numerator.copy(), numerator_constant - lam * cap, cap)
            if outcome.status != "optimal":
                result.bound, result.proven = max(capped_bound, trivial_bound(instance)), False
                return result
            lam, lam_reached = max(lam, result.value), lam_reached or result.value >= lam
        for _ in range(MAX_DINKELBACH_STEPS):
            outcome, known, bound = step(numerator - lam * denominator,
                                         numerator_constant - lam * denominator_constant, smallest)
            result.bound = max(bound, capped_bound)
            if outcome.status != "optimal":
                result.proven = False
                return result
            # a cut-off step proves only F(lam) <= CUTOFF_SLACK: that settles lam as well (bound lam + slack)
            settled = max(DINKELBACH_TOLERANCE * smallest, CUTOFF_SLACK if known else 0.0)
            if not lam_reached and result.value < lam:
                # F(0) <= 0 with no assignment known to reach 0: every ratio is <= 0, and the best one
                # found is a reached lam from which the iteration goes on (a range's end below 0)
                lam, lam_reached = result.value, True
                continue
            if outcome.bound <= settled or result.value <= lam:
                # F(lam) ~ 0: lam is the maximum ratio up to the gap reported in the bound
                return result
            lam, lam_reached = result.value, True
    except OutOfTime:  # a step's solver input (CP-SAT's model) was still being written at the deadline
        return result.stopped(instance)
    result.proven = False
    return result


def solve_capped(formulation, instance, direction, solver, clock, start: float = -math.inf) -> DirectionResult:
    """A ratio N / min(cap, D) (``formulation.capped``: AP(norm=min)@k = SP / min(k, R)) by Dinkelbach on
    the model of N / D, the cap a piece of its own (solve_dinkelbach(cap=...)).

    For lam >= 0, lam min(cap, D) = min(lam cap, lam D), so N - lam min(cap, D) = max(N - lam cap,
    N - lam D) and F(lam) = max(max N - lam cap, max N - lam D) over the same assignments: the
    first piece needs no denominator variables at all (N's model alone), and since lam only grows,
    one solve of it at the first lam settles it for every later one."""
    piece, cap = formulation.capped(instance)
    return solve_dinkelbach(formulation, piece, direction, solver, clock, start, cap=cap)
