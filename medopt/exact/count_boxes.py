"""An AP direction bounded by a branch and bound over the number of unjudged relevant documents, each
box tested first by a Lagrangian decomposition into its two lists (exact/lagrangian.decomposition_bound),
each list's part maximised exactly along its own ranks (kernels/precision_chains.py), and, when that
does not close it, by the roof dual with the relevant count's rows moved into it
(kernels/box_rows.py, exact/lagrangian.rows_bound; while the pairs of unjudged documents
number at most box_rows.MAX_PAIRS).  Neither bound is below the other on every box: the
decomposition closes most boxes in a few milliseconds, the rows close some the decomposition
leaves above lam (docs/explanation/precision-sums.md#ap-at-depth-the-count-boxes-by-decomposition).

Claim.  For AP (and AP(norm=min)) with R = J + m relevant documents (J judged, m = sum_d b_d unjudged),
the direction's difference is N / D with D = R (min(k, R)), N = SP(X) - SP(Y) the sums of precisions
of the list the direction favours and of the other (the formulation's relevance_chains).  Let a box be
lo <= m <= hi with D = R on all of it (J + hi <= k, or no cap) or D = k on all of it (J + lo >= k),
and F_ub a bound on max N - lam D over the b of the box.  Then every assignment of the box has
difference <= lam + max(F_ub, 0) / D_lo, D_lo = max(1, J + lo) (k for a capped box); an assignment
with D = 0 (nothing relevant) scores 0 in both lists, at most lam >= 0.

Proof.  N - lam D <= F_ub <= max(F_ub, 0) and D >= D_lo > 0 give N / D <= lam + max(F_ub, 0) / D.
F_ub is the lower of two bounds.  The first is decomposition_bound's with f(b) = SP(X) - lam m and
g(b) = -SP(Y) (f = SP(X), and the constant -lam k, for a capped box), the constant -lam J, and B the
box: chain_max maximises each of f + u . b and g - u . b exactly over B (its proof), so it bounds
N - lam D there.  The second is rows_bound's: the roof dual of N - lam D plus the box's rows times
multipliers >= 0, every row >= 0 on the box (kernels/box_rows.py), so it bounds N - lam D there too
(exact/lagrangian.py).  The relevance limits are in neither, and the decomposition leaves out the
reductions' implications too (relaxations: the reductions keep the direction's maximum, reductions.py).

The search.  The root boxes cover m = 0..n (split where the cap starts to bind).  The box of largest
bound is tested at lam = the best difference reached (it only rises, so a box closed at an older lam is
closed at the new one too): closed when its bound is at most lam, else split in halves, and around the
best assignment's count when that lies inside (a box of that one count, where the maximum is reached
and the bound must be tight, closes in a few steps; the halves around it are looser).  A box is tested
by its decomposition, and by its rows too when the decomposition stalls there: its bound - lam is more
than STALL of its parent's decomposition's (a root is split first).  Each test goes on from the
multipliers its kind of test ended with on the parent (the decomposition's from 0 at a root; a box
whose parent had no rows test starts its rows where the direction's last rows test ended, the first
one from the roof dual's best multiplier of the relevant count, a few roof duals).  Each test's
two maximisers and the cut's labels (undetermined ones read as 0, then as 1) are re-scored as
candidates.  A box of one count that its tests did not close is tested again, its descents continued.
The direction's bound is the largest bound of the closed and the open boxes: every count lies in one.
"""

from __future__ import annotations

import heapq
import math
import time

import numpy as np

from ..core.instance import Instance, judged_count
from ..core.deadlines import check_time, remaining
from ..kernels.box_rows import MAX_PAIRS, CountRows, complete
from ..solvers import CUTOFF_SLACK
from ..solvers.roof_dual import reusing, roof_dual_bound
from .common import rescored
from .lagrangian import decomposition_bound, rows_bound

# pairs of maximisations of a box's decomposition, roof duals of its rows test, and the tests without a
# time limit (values: docs/explanation/constants.md)
DECOMPOSITION_STEPS = 30
STEPS = 5
UNTIMED_TESTS = 400
# the deflection of the subgradient steps of a one-count box's rows tests (exact/lagrangian.py; value:
# docs/explanation/constants.md)
DEFLECTION = 1.5
# a box's rows test runs when its decomposition leaves more than this share of its parent's
# decomposition gap (bound - lam) (value: docs/explanation/constants.md)
STALL = 0.5


class _Deadline(Exception):
    """The direction's share of the time is over (the search ends with its open boxes' bound)."""


def count_boxes(formulation, instance: Instance, reduced: Instance, direction: str, start: float, quick: dict,
                guesses: dict, details: dict, deadline: float | None, budget: int | None = None,
                rows: bool = True) -> bool:
    """Whether the branch and bound over the relevant count (module docstring) settles the direction
    at ``start``, a difference reached, or at a better one it finds (kept in ``guesses``, re-scored on
    ``instance``); either way its bound, when lower, is kept in ``quick``.  It runs until ``deadline``
    (UNTIMED_TESTS box tests in all without one) or for ``budget`` more tests, its boxes tested by their
    decompositions alone when ``rows`` is False, and applies to AP and AP(norm=min) without relevance
    limits (``applies``); details["count boxes"] counts its tests.  A later call of the same solve for
    the same reduced instance and direction (after the search over the roof dual, or the driver's
    search without a model) resumes the boxes left open: the search is kept in ``quick`` (the solve's
    bounds without a model) under ("count boxes", direction).  Its boxes stay valid when the
    difference reached rises (a box closed at lam is closed at any larger lam)."""
    if not applies(formulation, instance, reduced, start):
        return False
    left = remaining()
    if deadline is not None:
        left = deadline - time.perf_counter() if left is None else min(left, deadline - time.perf_counter())
    from ..kernels.precision_chains import ready  # here: Numba (docs/limits.md#memory) only where boxes run
    if not ready(left):  # a first call may compile the kernel
        return False
    kept = quick.get(("count boxes", direction))  # the search of an earlier call of this solve
    if kept is None or kept[0] is not reduced:
        kept = quick["count boxes", direction] = (reduced, CountSearch(formulation, reduced, direction,
                                                                        quick.get(direction, math.inf)))
    search = kept[1]
    tests = search.tests
    try:
        search.run(lambda: max(start, guesses[direction][0]), instance, guesses, deadline, budget, rows)
    finally:
        details["count boxes"] = details.get("count boxes", 0) + search.tests - tests
        if search.tests:
            quick[direction] = min(quick.get(direction, math.inf), search.bound())
    return search.settled(max(start, guesses[direction][0]))


class CountSearch:
    """The boxes of one direction (module docstring): ``run`` tests them, best bound first, until a
    deadline; ``bound`` is the largest bound of the closed and the open ones."""

    def __init__(self, formulation, reduced: Instance, direction: str, inherited: float):
        n, rel = len(reduced.unjudged), reduced.metric.p("rel")
        self.formulation, self.reduced, self.direction, self.n, self.rel = formulation, reduced, direction, n, rel
        self.favoured, self.other = formulation.relevance_chains(reduced, direction)
        # the rows test's form and rows, built when a box first needs them, and its last multipliers
        self.terms, self.rows, self.last_nu = None, None, None
        self.judged, self.cap = judged_count(reduced, rel), formulation.binding_cutoff(reduced)
        self.heap, self.order, self.closed, self.tests = [], 0, -math.inf, 0
        # the roots: the counts where D = R, and those where D = k (the cap)
        edge = n if self.cap is None else min(max(self.cap - self.judged, -1), n)
        for lo, hi in ((0, edge), (edge + 1, n)):
            if lo <= hi:
                self.push(inherited, lo, hi, (None, None, None))

    def push(self, bound: float, lo: int, hi: int, multipliers) -> None:
        heapq.heappush(self.heap, (-bound, self.order, lo, hi, multipliers))
        self.order += 1

    def decomposition(self, lo: int, hi: int, lam: float, capped: bool, start, check) -> tuple:
        """(the decomposition's F_ub for the box lo <= m <= hi at lam, the two parts' maximisers, the
        multipliers): the module docstring, N - lam D with D = k for a capped box, else R = J + m."""
        per_document = 0.0 if capped else lam

        from ..kernels.precision_chains import chain_max  # (loaded by count_boxes already)

        return decomposition_bound(lambda u: chain_max(*self.favoured, u - per_document, 1.0, lo, hi),
                                   lambda u: chain_max(*self.other, -u, -1.0, lo, hi), self.n,
                                   -lam * (self.cap if capped else self.judged), check=check, floor=0.0,
                                   start=start, steps=DECOMPOSITION_STEPS)

    def denominator(self, lo: int, capped: bool) -> float:
        """D_lo of the box from lo: k when capped, else max(1, J + lo) (module docstring)."""
        return self.cap if capped else max(1, self.judged + lo)

    def with_rows(self) -> bool:
        """Whether the rows test applies (at most MAX_PAIRS pairs); its form and rows built on first use."""
        if self.rows is None and self.n * (self.n - 1) // 2 <= MAX_PAIRS:
            constant, linear, first, second, weights, implications = \
                self.formulation.quadratic_form(self.reduced, self.direction)
            first, second, weights = complete(self.n, first, second, weights)
            self.terms = (constant, linear, first, second, weights, implications)
            self.rows = CountRows(self.n, first, second)
        return self.rows is not None

    def form(self, lam: float, capped: bool) -> tuple:
        """N - lam D as the roof dual's quadratic form (D = k for a capped box, else R = J + m)."""
        constant, linear, first, second, weights, implications = self.terms
        if capped:
            return self.n, constant - lam * self.cap, linear, first, second, weights, implications
        return self.n, constant - lam * self.judged, linear - lam, first, second, weights, implications

    def bound(self) -> float:
        return max([self.closed] + [-entry[0] for entry in self.heap])

    def settled(self, cutoff: float) -> bool:
        return not self.heap and self.closed <= cutoff + CUTOFF_SLACK

    def run(self, cutoff, instance: Instance, guesses: dict, deadline: float | None, budget: int | None = None,
            rows: bool = True) -> None:
        """Test the open boxes, best bound first, at lam = ``cutoff()`` (the best difference reached, which
        the tests' re-scored candidates may raise in ``guesses``), until none is left, ``deadline``
        (UNTIMED_TESTS tests in all without one) or ``budget`` more tests; without the rows test when
        ``rows`` is False."""
        direction, reduced, rel = self.direction, self.reduced, self.rel
        last = math.inf if budget is None else self.tests + budget

        def check() -> None:
            if deadline is not None and time.perf_counter() > deadline:
                raise _Deadline
            check_time()

        def offer(relevant) -> None:
            rescored(instance, reduced, direction,
                     {d: rel if is_relevant else 0 for d, is_relevant in zip(reduced.unjudged, relevant)}, guesses)

        try:
            with reusing():  # a box's roof duals share their network's arcs while the pairs' signs stay
                while self.heap and (deadline is not None or self.tests < UNTIMED_TESTS) and self.tests < last:
                    check()
                    inherited, _, lo, hi, (u, nu, parent_gap) = self.heap[0]
                    lam = cutoff()
                    if -inherited <= lam + CUTOFF_SLACK:
                        heapq.heappop(self.heap)
                        self.closed = max(self.closed, -inherited)
                        continue
                    capped = self.cap is not None and self.judged + lo >= self.cap
                    excess, points, u = self.decomposition(lo, hi, lam, capped, u, check)
                    for point in points:
                        offer(point.tolist())
                    gap = max(excess, 0.0) / self.denominator(lo, capped)  # the decomposition's bound - lam
                    # the rows when the decomposition stalls: its gap more than STALL of its parent's (none
                    # at a root: the halves first)
                    if excess > 0 and rows and parent_gap is not None and gap > STALL * parent_gap and \
                            self.with_rows():
                        if nu is None and not capped:  # no parent's rows: the direction's last rows test's
                            if self.last_nu is None:  # ... or, for its first, the count's best multiplier
                                best = _count(guesses[direction][1], reduced, rel)
                                count = best if best is not None and lo <= best <= hi else (lo + hi) // 2
                                self.last_nu = self.rows.interval(_best_mu(self.form(0.0, False), count, lam), lam)
                            nu = self.last_nu
                        found, labels, nu = rows_bound(self.form(lam, capped), self.rows.at(lo, hi), check=check,
                                                       floor=0.0, start=nu, steps=STEPS,
                                                       deflect=DEFLECTION if lo == hi else 0.0)
                        excess = min(excess, found)
                        self.last_nu = nu
                        for undetermined in (0, 1):
                            offer((labels == 1) | ((labels < 0) & bool(undetermined)))
                    heapq.heappop(self.heap)
                    self.tests += 1
                    bound = min(-inherited, lam + max(excess, 0.0) / self.denominator(lo, capped))
                    if bound <= cutoff() + CUTOFF_SLACK:
                        self.closed = max(self.closed, bound)
                        continue
                    for part in _parts(lo, hi, _count(guesses[direction][1], reduced, rel)):
                        self.push(bound, *part, (u, nu, gap))
        except _Deadline:
            pass


def applies(formulation, instance: Instance, reduced: Instance, start: float) -> bool:
    """Whether count_boxes applies: a ratio of the relevant count (the formulation's
    ``relevant_count_ratio``: AP, AP(norm=min)) without relevance limits, a difference reached
    ``start`` >= 0, and unjudged documents that can be relevant."""
    metric = reduced.metric
    return formulation.relevant_count_ratio(reduced) and not instance.limits and math.isfinite(start) and start >= 0 \
        and metric.p("rel") <= reduced.max_grade and len(reduced.unjudged) >= 1


def _count(assignment, reduced: Instance, rel: int) -> int | None:
    """The number of unjudged documents of ``reduced`` relevant in ``assignment`` (None: no assignment)."""
    if assignment is None:
        return None
    return sum(assignment.get(d, 0) >= rel for d in reduced.unjudged)


def _parts(lo: int, hi: int, best: int | None) -> list:
    """A box's parts: halves, or the best assignment's count alone and the parts around it when it lies
    inside; a box of one count again (its test goes on from its multipliers)."""
    if lo == hi:
        return [(lo, hi)]
    if best is not None and lo <= best <= hi:
        return [part for part in ((lo, best - 1), (best, best), (best + 1, hi)) if part[0] <= part[1]]
    middle = (lo + hi) // 2
    return [(lo, middle), (middle + 1, hi)]


def _best_mu(form: tuple, count: int, lam: float) -> float:
    """The multiplier mu, of a few around lam, whose roof dual of N - mu m bounds N lowest at m = ``count``
    unjudged relevant documents (``form``: N alone; N <= RD(N - mu m) + mu m): where a box's rows test
    starts (box_rows.CountRows.interval)."""
    n, constant, linear, first, second, weights, implications = form
    values = []
    for mu in lam * np.geomspace(0.6, 1.25, 5):
        bound, _ = roof_dual_bound(n, constant, linear - mu, first, second, weights, implications)
        values.append((bound + mu * count, float(mu)))
    return min(values)[1]
