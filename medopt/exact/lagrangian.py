"""A bound on the maximum of a quadratic function of binary variables under interval constraints on
sums of them, by Lagrangian relaxation over the roof dual (solvers/roof_dual.py); exact/boxes.py tests
Q-measure boxes with it (formulations/q/roof.py writes a box in that form).

Problem.  max f(z) over z in {0,1}^n with the implications of f and, for each constraint p,
lo_p <= sum_{i in I_p} z_i <= hi_p (hi_p may be absent).

Claim.  For any multipliers nu, with
    f_nu(z) = f(z) + sum_p nu_p sum_{i in I_p} z_i - sum_p (nu_p lo_p if nu_p > 0 else nu_p hi_p)
(nu_p < 0 only where hi_p exists), f_nu(z) >= f(z) at every z meeting the constraints: each added
term is nu_p (sum - lo_p) >= 0 or |nu_p| (hi_p - sum) >= 0.  So the roof dual of f_nu, an upper bound
on max f_nu over all z with the implications, bounds the constrained maximum of f.  Every nu tried
gives such a bound and the smallest is returned.

The multipliers: from 0, a descent step on each constraint the current labels break (their sum,
undetermined labels counted as 1/2, below lo_p: nu_p rises; above hi_p: it falls), the step growing
by 1.5 after a success and halving after a failure, at most ``MAX_STEPS`` roof duals (or the caller's
``steps``); ``nu`` and the step size need no proof (any nu gives a valid bound), only the number of
maximum flows matters.  A descent may go on from where another stopped (``Descent``: a parent box's
multipliers and its last step size); from scratch the first step is the largest linear coefficient.
The labels of the best bound's cut are returned as a candidate (re-scored by the caller).  The roof
duals of one descent share their pairs and differ only in their linear terms, so they run on one
network whose maximum flow goes on from the one before (solvers/roof_dual.DescentNetwork; OR-Tools'
roof_dual_bound where its compiled loops cannot be loaded in the time left: the same bounds).

With rows (``rows_bound``): constraints constant_r + L_r z + S_r (z_f z_s) >= 0 that hold at every
feasible z, quadratic ones included (formulations/q/rows.py: a Q-measure box's intervals and the
collection cuts of its profiles' LP); f_nu(z) = f(z) + sum_r nu_r (constant_r + L_r z + S_r (z_f z_s))
with every nu_r >= 0 is again >= f(z) at every feasible z and again a quadratic function of binaries
(the rows shift the linear terms and the pairs' weights), so its roof dual bounds the constrained
maximum.  The roof dual is the LP relaxation of the products' standard linearisation, so at the
multipliers of an LP with these rows (its duals) it gives that LP's optimum.  The multipliers: a
projected subgradient step (Polyak's, towards a target ``TARGET`` below the first bound under
``floor``) at the row values of the roof dual's LP point (the cut's half-integral labels, each
product at its optimum given them: min(z_f, z_s) for a positive weight, max(0, z_f + z_s - 1)
otherwise), at most ``MAX_STEPS`` roof duals; any nu >= 0 gives a bound, so the steps need no
proof.  With ``deflect`` = gamma > 0 the steps are deflected (Camerini, Fratta & Maffioli 1975): a
subgradient g that points against the last step's direction d (g . d < 0) is replaced by
g - gamma (g . d / d . d) d, which damps the zig-zag of plain subgradient steps near the optimum (the
count boxes of AP: docs/explanation/precision-sums.md#the-count-boxes-deflected-steps).

By decomposition (``decomposition_bound``): max f(b) + g(b) + constant over a set B of b in {0,1}^n,
when f and g can each be maximised exactly over B plus any linear term (exact/count_boxes.py: the
two lists' sums of precisions, each along its own ranks, kernels/precision_chains.py).  Claim: for
every u in R^n, max_B (f + g) <= max_B (f + u . b) + max_B (g - u . b).  Proof: at a maximiser b* of
f + g, f(b*) + g(b*) = (f(b*) + u . b*) + (g(b*) - u . b*), and each part is at most its maximum.
The right side L(u) is convex in u (each part a maximum of functions affine in u), and b_f - b_g (the
two parts' maximisers) is a subgradient of it, so the multipliers take Polyak's steps towards
TARGET below the first bound (or the floor), as for the rows; any u gives a bound, so the steps
need no proof.  When the two parts agree (b_f = b_g), L(u) = f(b_f) + g(b_f) is reached by a point
of B: it is the maximum, and the steps stop."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..solvers.roof_dual import DescentNetwork, reusing, roof_dual_bound

# roof duals (maximum flows) per bound at most (measured: docs/explanation/q-measure.md#q-measure-roof-dual-box-tests)
MAX_STEPS = 30
# lagrangian_bound's step size below which its descent has run out of steps to try
SPENT_STEP = 1e-12


class Descent(NamedTuple):
    """Where a descent of ``lagrangian_bound`` stopped: the best bound's multipliers and the step size it
    would have tried next; the start of another descent (a box's halves go on from their parent's)."""
    nu: np.ndarray
    step: float


def lagrangian_bound(form: tuple, constraints: list, check=None, floor: float = -math.inf,
                     start: Descent | None = None, steps: int = MAX_STEPS) -> tuple[float, np.ndarray, Descent]:
    """(an upper bound on the constrained maximum of ``form`` = (n, constant, linear, first, second,
    weights, implications), the best bound's labels, where the descent stopped): module docstring; the
    search goes on from ``start`` (a parent box's descent: its multipliers and step size) when given.
    ``constraints``: (indices, lo, hi or None) per constraint.  The search stops once a bound is at
    most ``floor`` (a value the caller needs no better than), or after ``steps`` roof duals.  ``check``
    is called before each roof dual (limits.check_time)."""
    n, constant, linear, first, second, weights, implications = form
    tried: dict = {}
    network = DescentNetwork.when_ready(n, first, second, weights, implications)  # only the unary costs change
    member = np.zeros((n, len(constraints)))  # member[i, p] = 1 when z_i is in constraint p's sum
    for p, (indices, _, _) in enumerate(constraints):
        member[indices, p] = 1.0

    def bound_at(nu):
        key = tuple(nu.tolist())
        if key not in tried:
            if check is not None:
                check()
            shifted, shift = np.array(linear, dtype=float), float(constant)
            for value, (indices, lo, hi) in zip(nu, constraints):
                if value:
                    shifted[indices] += value
                    shift -= value * (lo if value > 0 else hi)
            if network is not None:
                bound, labels = network.bound(shift, shifted)
            else:  # (the compiled flow not loaded yet, and too little time left to load it)
                bound, labels = roof_dual_bound(n, shift, shifted, first, second, weights, implications)
            tried[key] = (bound, labels, (np.where(labels < 0, 0.5, labels) @ member).tolist())  # the sums
        return tried[key]

    def allowed(nu):  # nu_p < 0 only where hi_p exists
        return np.array([value if value >= 0 or hi is not None else 0.0 for value, (_, _, hi) in zip(nu, constraints)])

    nu = np.zeros(len(constraints)) if start is None else allowed(start.nu)
    step = float(np.abs(linear).max(initial=0.0)) or 1.0
    if start is not None and start.step > SPENT_STEP:  # (a start whose steps ran out begins afresh)
        step = start.step
    with reusing():  # (roof_dual_bound's networks, when used: the unary capacities alone change)
        best = bound_at(nu)
        while len(tried) < steps and best[0] > floor:
            _, _, sums = bound_at(nu)
            direction = np.array([1.0 if total < lo else (-1.0 if hi is not None and total > hi else 0.0)
                                  for total, (_, lo, hi) in zip(sums, constraints)])
            if not direction.any():
                break
            while len(tried) < steps and step > SPENT_STEP:
                candidate = allowed(nu + step * direction)
                outcome = bound_at(candidate)
                if outcome[0] < best[0]:
                    nu, best, step = candidate, outcome, step * 1.5
                    break
                step /= 2
            else:
                break
    return best[0], best[1], Descent(nu, step)


# rows_bound's Polyak target: this fraction of the first bound's size below the floor (measured:
# docs/explanation/q-measure.md#q-measure-the-box-lps-rows-in-the-roof-dual)
TARGET = 0.05


def rows_bound(form: tuple, rows, check=None, floor: float = -math.inf,
               start: np.ndarray | None = None, steps: int = MAX_STEPS,
               deflect: float = 0.0) -> tuple[float, np.ndarray, np.ndarray]:
    """(an upper bound on the maximum of ``form`` over the z meeting ``rows`` (kernels.box_rows.Rows:
    constant + L z + coefficient z[d_rel] + S (z_f z_s) >= 0 where active), the best bound's labels,
    its multipliers): the module docstring, from the multipliers ``start`` (a parent box's) when
    given; the search stops once a bound is at most ``floor``, or after ``steps`` roof duals."""
    n, constant, linear, first, second, weights, implications = form
    nu = np.zeros(len(rows.active)) if start is None else np.where(rows.active, start, 0.0)
    with reusing():  # the pairs' signs seldom change from one step to the next: the arcs are kept
        return _descend(n, constant, linear, first, second, weights, implications, rows, check, floor, nu, steps,
                        deflect)


def _descend(n, constant, linear, first, second, weights, implications, rows, check, floor, nu, steps, deflect):
    active, transposed_l, transposed_s = rows.active, rows.L.T, rows.S.T  # (once, not per step)
    best, best_labels, best_nu, target, previous = math.inf, None, nu, None, None
    for _ in range(steps):
        if check is not None:
            check()
        shifted = linear + transposed_l @ nu + np.bincount(rows.d_rel, rows.coefficient * nu, minlength=n)
        pair_weights = weights + transposed_s @ nu
        bound, labels = roof_dual_bound(n, constant + float(rows.constant @ nu), shifted, first, second,
                                        pair_weights, implications)
        if bound < best or best_labels is None:
            best, best_labels, best_nu = bound, labels, nu
        if bound <= floor:
            break
        z = np.where(labels < 0, 0.5, labels).astype(float)
        products = np.where(pair_weights > 0, np.minimum(z[first], z[second]),
                            np.maximum(0.0, z[first] + z[second] - 1.0))
        values = rows.constant + rows.L @ z + rows.coefficient * z[rows.d_rel] + rows.S @ products
        if deflect and previous is not None and float(values @ previous) < 0:  # against the last direction
            values = values - deflect * float(values @ previous) / float(previous @ previous) * previous
        slope = np.where(active & ((values < 0) | (nu > 0)), values, 0.0)  # the projected subgradient
        norm = float(slope @ slope)
        if norm == 0 or not math.isfinite(bound):
            break
        previous = slope
        if target is None:  # TARGET of the first bound's size below the floor (below the bound without one)
            target = (min(floor, bound) if math.isfinite(floor) else bound) - TARGET * abs(bound)
        nu = np.maximum(0.0, nu - (bound - target) / norm * slope)
    return best, best_labels, best_nu


def decomposition_bound(first, second, n: int, constant: float = 0.0, check=None, floor: float = -math.inf,
                        start: np.ndarray | None = None, steps: int = MAX_STEPS) -> tuple[float, tuple, np.ndarray]:
    """(an upper bound on max f(b) + g(b) + ``constant`` over a set B of b in {0,1}^n, the two parts'
    maximisers at the best bound, its multipliers u): the module docstring's decomposition.
    ``first(u)`` is (max_B f(b) + u . b, a maximiser) and ``second(u)`` is (max_B g(b) - u . b, a
    maximiser); a value of -inf (B empty) ends the search with that bound.  From ``start`` (a parent
    box's multipliers) when given; the search stops once a bound is at most ``floor``, when the parts
    agree, or after ``steps`` pairs of maximisations; ``check`` is called before each pair."""
    u = np.zeros(n) if start is None else np.array(start, dtype=float)
    best, best_points, best_u, target = math.inf, None, u, None
    for _ in range(steps):
        if check is not None:
            check()
        value_f, point_f = first(u)
        value_g, point_g = second(u)
        bound = value_f + value_g + constant
        if bound < best or best_points is None:
            best, best_points, best_u = bound, (point_f, point_g), u
        if bound <= floor or not math.isfinite(bound):
            break
        slope = (point_f - point_g).astype(float)
        norm = float(slope @ slope)
        if norm == 0:  # both parts at one point of B: the bound is reached, the maximum
            break
        if target is None:  # TARGET of the first bound's size below the floor (below the bound without one)
            target = (min(floor, bound) if math.isfinite(floor) else bound) - TARGET * abs(bound)
        u = u - (bound - target) / norm * slope
    return best, best_points, best_u
