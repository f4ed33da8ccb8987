"""A bound on one direction of the sums of precisions (AP, SP, SSP) without a model or a flow: the
favoured list's part maximised exactly along its ranks (kernels/precision_chains.chain_states), the
other list's part replaced by a linear bound that is tight at a point, re-taken at the best point found.

Notation.  X the list the direction favours, Y the other (both cut), b_d in {0, 1} the relevance of
unjudged document d, N(b) = SP(X) - SP(Y) (formulations/precision/bounds.py), J the judged relevant
documents of the topic; AP's difference is N / R with R = J + sum_d b_d (0 when R = 0), SP's N,
SSP's N / k.  Only unjudged documents ranked in X or in Y have a b_d (SPEC 4).

The other list.  With T the unjudged documents of Y that are relevant, SP(Y) = c_Y + l . T + sum over
the pairs {d, e} of T of W_de, W_de = 1 / (the lower rank of the two in Y) > 0, c_Y the judged
relevant documents' part, l_d = (1 + judged relevant above d) / q_d + sum of 1 / r over the judged
relevant ranks r below d's rank q_d.  Let pi_d(S) = sum_{e in S, e != d} W_de and V_Y Y's unjudged
documents.  For any T0 and every T (D = T0 \\ T removed, A = T \\ T0 added):

  (1)  SP(Y)(T) >= SP(Y)(T0) - sum_{d in D} (l_d + pi_d(T0)) + sum_{d in A} l_d
  (2)  SP(Y)(T) >= SP(Y)(T0) - sum_{d in D} (l_d + pi_d(V_Y)) + sum_{d in A} (l_d + pi_d(T0))

Proof.  (1): dropping the pairs that touch A (all >= 0) leaves SP(Y)(T cap T0) + sum_A l_d, and
SP(Y)(T cap T0) = SP(Y)(T0) - sum_D l_d - (the pairs of T0 that touch D), those pairs at most
sum_D pi_d(T0).  (2): SP(Y)(T) = SP(Y)(T cap T0) + sum_A (l_d + pi_d(T0) - sum_{e in D} W_de) + (pairs
within A, >= 0); and the pairs of T0 touching D plus the pairs between A and D are at most
sum_D pi_d(V_Y), since T0 and A are disjoint parts of V_Y.  Both are equalities at T = T0, and so is
(3), their average (theta = 1/2 of each right-hand side: an average of two lower bounds is one).

So -SP(Y) <= C0 + c . b for the c of each (theta = 1 for (1), 0 for (2), 1/2 for (3): c_d = -(l_d +
pi_d(T0) + (1 - theta) (pi_d(V_Y) - pi_d(T0))) for d in T0, -(l_d + (1 - theta) pi_d(T0)) for the rest of
Y, 0 outside Y; C0 = -SP(Y)(T0) - c . T0), and N(b) <= SP(X)(b) + c . b + C0.  Let Psi(s) = V(s) + C0, V(s) the exact maximum of SP(X)(b) + c . b over the b with s unjudged
documents of X relevant (chain_states), the documents of Y alone left at 0: their c_d <= 0.  Claim:
every b has SP difference N(b) <= max_s Psi(s), and AP difference N(b) / R <= max(0, max_{J + s >= 1}
Psi(s) / (J + s)).  Proof: with s of X's documents and t >= 0 of Y's alone relevant, N(b) <= Psi(s)
(those t add c_d <= 0); for AP a b with N(b) <= 0 has difference <= 0, and one with N(b) > 0 has a
relevant document in X, so J + s >= 1 and N(b) / (J + s + t) <= N(b) / (J + s) <= Psi(s) / (J + s).

The search.  Each bound's maximiser (its best s) is re-scored by the metric's evaluator; the best one
re-scored is the next T0 (bounds (1), (2) and (3) there), from T0 = {} (where they coincide), for at most
ITERATIONS points or until the bound is at most the difference to beat.  Where no unjudged document
of Y is relevant in the maximiser, or one alone, the bound at its own T0 equals its difference (the
pairs of Y vanish): the direction is then settled exactly; where many shared documents are relevant
the pairs of Y are what the bound leaves out, and the roof dual takes over (exact/driver.py).
"""

from __future__ import annotations

import math

import numpy as np

from ...core.instance import judged_count
from ...kernels.precision_chains import chain_states
from ...modeling import direction_sign

ITERATIONS = 4  # the points T0 the bounds are taken at, at most (from {}: one bound, then three per point)
KINDS = (1, 2, 3)  # the bounds taken at a point: (1), (2), (3) of the module docstring
THETAS = {1: 1.0, 2: 0.0, 3: 0.5}
SLACK = 1e-10   # a bound within this of the difference to beat ends the search (the solvers' cutoff slack)


def applies(instance) -> bool:
    """AP (norm=R), SP and SSP without relevance limits, whose unjudged documents can be relevant."""
    metric = instance.metric
    if metric.family not in ("AP", "SP", "SSP") or instance.limits:
        return False
    if metric.family == "AP" and metric.p("norm") != "R":
        return False
    return metric.p("rel") <= instance.max_grade and bool(instance.unjudged)


class Chains:
    """One direction's two lists as arrays: X's chain for chain_states, Y's linear terms and ranks."""

    def __init__(self, instance, direction: str):
        self.instance, self.direction = instance, direction
        metric, judgments = instance.metric, instance.judgments
        self.rel, relevant = metric.p("rel"), metric.is_relevant
        self.unjudged = unjudged = instance.unjudged
        index = {d: i for i, d in enumerate(unjudged)}
        x, y = (instance.a, instance.b) if direction_sign(direction) > 0 else (instance.b, instance.a)
        self.kind = np.array([2 if d not in judgments else int(relevant(judgments[d])) for d in x], dtype=np.int64)
        self.index = np.array([index.get(d, -1) for d in x], dtype=np.int64)
        self.judged = np.cumsum(self.kind == 1).astype(np.int64)
        kind_y = np.array([2 if d not in judgments else int(relevant(judgments[d])) for d in y], dtype=np.int64)
        ranks = np.arange(1, len(y) + 1, dtype=np.float64)
        judged_rel = (kind_y == 1).astype(np.float64)
        above = np.cumsum(judged_rel) - judged_rel                       # judged relevant above each rank
        own = judged_rel / ranks
        below = np.cumsum(own[::-1])[::-1] - own                          # sum of 1 / r, judged relevant below
        self.c_y = float(np.sum(judged_rel * (above + 1) / ranks))
        at = np.flatnonzero(kind_y == 2)                                  # Y's unjudged ranks, in rank order
        self.y_docs = np.array([index[y[i]] for i in at.tolist()], dtype=np.int64)
        self.y_rank = ranks[at]
        self.l = np.zeros(len(unjudged))
        self.l[self.y_docs] = (1 + above[at]) / ranks[at] + below[at]
        self.in_y = np.zeros(len(unjudged), dtype=bool)
        self.in_y[self.y_docs] = True
        self.count = judged_count(instance, self.rel)
        self.everything = self.pi(self.in_y.astype(np.float64))

    def pi(self, t: np.ndarray) -> np.ndarray:
        """pi_d(T) for every unjudged document (0 outside Y), T given by its 0/1 vector t."""
        chosen = t[self.y_docs].astype(np.float64)
        above = np.cumsum(chosen) - chosen
        inverse = chosen / self.y_rank
        below = np.cumsum(inverse[::-1])[::-1] - inverse
        out = np.zeros(len(self.unjudged))
        out[self.y_docs] = above / self.y_rank + below
        return out

    def sp_y(self, t: np.ndarray) -> float:
        """SP(Y) at T = t: c_Y + l . t + the pairs of T (each pair twice in pi(T) . t)."""
        return float(self.c_y + self.l @ t + 0.5 * (self.pi(t) @ t))

    def linear(self, t0: np.ndarray, which: int) -> tuple[np.ndarray, float]:
        """(c, C0) with -SP(Y)(T) <= C0 + c . T for every T, equality at T0 = t0: bound (1), (2) or (3)."""
        t0 = t0 * self.in_y
        at_t0 = self.pi(t0)
        theta = THETAS[which]
        c = np.where(t0 > 0, -(self.l + at_t0 + (1 - theta) * (self.everything - at_t0)),
                     -(self.l + (1 - theta) * at_t0))
        c = np.where(self.in_y, c, 0.0)
        return c, -self.sp_y(t0) - float(c @ t0)

    def bound_at(self, t0: np.ndarray, which: int, scale: float, ratio: bool) -> tuple[float, np.ndarray]:
        """(The bound (module docstring) from (1) or (2) at T0 = t0 (on Y's documents), its maximiser)."""
        c, constant = self.linear(t0, which)
        values, top, point = chain_states(self.kind, self.index, self.judged, c)
        psi = values + constant
        if ratio:
            totals = self.count + np.arange(top + 1)
            scores = np.where(totals > 0, psi / np.maximum(totals, 1), -math.inf)
            best = int(np.argmax(scores))
            return max(0.0, float(scores[best])), point(best)
        best = int(np.argmax(psi))
        return scale * float(psi[best]), point(best)

    def difference(self, b: np.ndarray) -> tuple[float, dict]:
        assignment = {d: self.rel if flag else 0 for d, flag in zip(self.unjudged, b.tolist())}
        return self.instance.differences(assignment)[self.direction], assignment


def chain_bound(instance, direction: str, beat: float, scale: float = 1.0) -> tuple[float, float, dict]:
    """(A proven bound on the direction's difference, the best difference re-scored, its assignment):
    the module docstring's search, ended once the bound is at most max(``beat``, the best difference) +
    SLACK.  ``scale``: SSP's 1 / k (1 for SP and AP)."""
    chains = Chains(instance, direction)
    ratio = instance.metric.family == "AP"
    lowest, best_value, best_assignment, best_b = math.inf, -math.inf, None, None
    points = [(np.zeros(len(chains.unjudged)), (1,))]
    seen = set()
    while points and len(seen) < ITERATIONS:
        t0, kinds = points.pop()
        seen.add(tuple(np.flatnonzero(t0 * chains.in_y).tolist()))
        for which in kinds:
            bound, b = chains.bound_at(t0, which, scale, ratio)
            lowest = min(lowest, bound)
            value, assignment = chains.difference(b)
            if value > best_value:
                best_value, best_assignment, best_b = value, assignment, b
        if lowest <= max(beat, best_value) + SLACK:
            break
        key = tuple(np.flatnonzero(best_b * chains.in_y).tolist())
        if key not in seen:
            points.append((best_b.astype(np.float64), KINDS))
    return lowest, best_value, best_assignment
