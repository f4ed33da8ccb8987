"""A bound on one direction of the sums of precisions (AP, SP, SSP) without a model or a flow: the
favoured list's part maximised exactly along its ranks (kernels/precision_chains.chain_states), the
other list's part replaced by a linear bound that is tight at a point, re-taken at the best point found.

Notation.  X the list the direction favours, Y the other (both cut), b_d in {0, 1} the relevance of
unjudged document d, N(b) = SP(X) - SP(Y) (formulations/precision/bounds.py), J the judged relevant
documents of the topic; AP's difference is N / R with R = J + sum_d b_d (0 when R = 0), SP's N,
SSP's N / k.  Only unjudged documents ranked in X or in Y have a b_d (SPEC 4).

The other list.  Y's unjudged documents outside X only raise SP(Y) when relevant (its terms are >= 0),
and for AP R too: a maximiser of SP's N has them at 0, and so has one of AP's difference that is >= 0
(WORSE_ONLY_RATIO, metrics/proofs.py).  So let T be the relevant documents of V,
the unjudged documents of both lists.  SP(Y) = c_Y + l . T + sum over the pairs {d, e} of T of W_de, W_de =
1 / (the lower rank of the two in Y) > 0, c_Y the judged relevant documents' part, l_d = (1 + judged
relevant above d) / q_d + sum of 1 / r over the judged relevant ranks r below d's rank q_d.  Let pi_d(S) =
sum_{e in S, e != d} W_de.  Claim (an allocation): for any T0 and any split W_ad = x_ad + y_ad, x, y >= 0,
of each pair with a in V - T0 and d in T0, with delta_a = sum_d x_ad and gamma_d = sum_a y_ad, every T
(A = T - T0 added, D = T0 - T removed) has

    SP(Y)(T) >= SP(Y)(T0) + sum_{a in A} (l_a + pi_a(T0) - delta_a) - sum_{d in D} (l_d + pi_d(T0) + gamma_d).

Proof.  SP(Y)(T) - SP(Y)(T0) = l(A) - l(D) + pairs(A) + W(A, T0 - D) - W(D, T0 - D) - pairs(D), and
W(A, T0 - D) = sum_A pi_a(T0) - W(A, D), W(D, T0 - D) + 2 pairs(D) = sum_D pi_d(T0); so the difference is
sum_A (l_a + pi_a(T0)) - sum_D (l_d + pi_d(T0)) + pairs(A) + pairs(D) - W(A, D), with pairs(A), pairs(D)
>= 0 and W(A, D) = sum_{A x D} (x_ad + y_ad) <= delta(A) + gamma(D).  Equality at T = T0.  The
allocations: (1) x = W (delta_a = pi_a(T0), gamma = 0), (2) x = 0 (gamma_d = pi_d(V) - pi_d(T0)), (3) x =
W / 2, and (4) each pair whole to a where adding a at the point b0 is at least as far from profitable as
removing d (its slack: the move must change N by more than the difference lam of b0 for AP, 0 for SP),
else whole to d.

So -SP(Y) <= C0 + c . b with c_a = -(l_a + pi_a(T0) - delta_a) (a in V - T0), c_d = -(l_d + pi_d(T0) +
gamma_d) (d in T0), 0 elsewhere, C0 = -SP(Y)(T0) - c . T0, and N(b) <= SP(X)(b) + c . b + C0.  Let Psi(s)
= V(s) + C0, V(s) the exact maximum of SP(X)(b) + c . b over the b with s unjudged documents of X
relevant (chain_states).  Claim: the direction's SP difference is at most max_s Psi(s) and its AP
difference at most max(0, max_{J + s >= 1} Psi(s) / (J + s)).  Proof: take a maximiser with Y's own
documents at 0 (for AP a maximum below 0 is below the bound, >= 0); with s relevant documents of X it
has N(b) <= Psi(s), and for AP, when N(b) > 0, a relevant document in X, so J + s >= 1 and N(b) / (J + s)
<= Psi(s) / (J + s).

The search.  Each bound's maximiser (its best s) is re-scored by the metric's evaluator; the best one
re-scored is the next point b0 (T0 its part of V; the four allocations there), from b0 = 0, for at most
ITERATIONS points or until the bound is at most the difference to beat.  A bound that meets the best
difference settles the direction exactly; where many shared documents are relevant (two orders of one
candidate set) the pairs of Y the bounds leave out are large, and the roof dual takes over
(exact/driver.py).
"""

from __future__ import annotations

import math

import numpy as np

from ...core.instance import judged_count
from ...modeling import direction_sign

ITERATIONS = 8  # the points b0 the bounds are taken at, at most (from 0: one bound, then four per point)
KINDS = (1, 2, 3, 4)  # the allocations taken at a point (module docstring)
THETAS = {1: 1.0, 2: 0.0, 3: 0.5}
SLACK = 1e-10  # a bound within this of the difference to beat ends the search (the solvers' cutoff slack)
# the dynamic programme keeps one byte per (unjudged rank of X, count): at most this many (n^2 <= it), so
# that a list at systematic-review depth does not hold hundreds of megabytes for a bound
MAX_STATES = 25_000_000


def applies(instance) -> bool:
    """AP (norm=R), SP and SSP without relevance limits, whose unjudged documents can be relevant, at most
    sqrt(MAX_STATES) of them."""
    metric = instance.metric
    if metric.family not in ("AP", "SP", "SSP") or instance.limits:
        return False
    if metric.family == "AP" and metric.p("norm") != "R":
        return False
    return metric.p("rel") <= instance.max_grade and 0 < len(instance.unjudged) ** 2 <= MAX_STATES


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
        in_x = np.zeros(len(unjudged), dtype=bool)
        in_x[self.index[self.index >= 0]] = True
        self.shared = self.in_y & in_x                                     # V: unjudged in both lists
        self.everything = self.pi(self.shared.astype(np.float64))
        self.y_of = np.zeros(len(unjudged))
        self.y_of[self.y_docs] = self.y_rank

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

    def linear(self, b0: np.ndarray, which: int, lam: float) -> tuple[np.ndarray, float]:
        """(c, C0) with -SP(Y)(T) <= C0 + c . T for every T within V, equality at T0 = V's part of b0:
        the allocation ``which`` (THETAS, or 4: each pair to the side whose move is the less profitable at
        b0, ``lam`` its difference)."""
        t0 = b0 * self.shared
        at_t0 = self.pi(t0)
        if which == 4:
            delta, gamma = self.allocated(b0, t0, at_t0, lam)
        else:
            delta, gamma = THETAS[which] * at_t0, (1 - THETAS[which]) * (self.everything - at_t0)
        c = np.where(t0 > 0, -(self.l + at_t0 + gamma), -(self.l + at_t0 - delta))
        c = np.where(self.shared, c, 0.0)
        return c, -self.sp_y(t0) - float(c @ t0)

    def allocated(self, b0: np.ndarray, t0: np.ndarray, at_t0: np.ndarray, lam: float) -> tuple:
        """(delta, gamma) of allocation (4): a pair {a, d} (a in V outside T0, d in T0) goes to a when adding a
        at b0 is at least as far from profitable as removing d (its slack, in N, against the difference lam
        that a move must beat), else to d."""
        relevant = (self.kind == 1) | ((self.kind == 2) & (b0[np.maximum(self.index, 0)] > 0))
        ranks = np.arange(1, len(self.kind) + 1, dtype=np.float64)
        above = np.cumsum(relevant) - relevant
        own = relevant / ranks
        below = np.cumsum(own[::-1])[::-1] - own
        gain_x = np.zeros(len(self.unjudged))
        ranked = self.kind == 2
        gain_x[self.index[ranked]] = ((above + 1) / ranks + below)[ranked]   # X's sum moved by the document
        net = gain_x - (self.l + at_t0)                                        # N moved by its move
        adds, removes = np.flatnonzero(self.shared & (t0 == 0)), np.flatnonzero(t0 > 0)
        delta, gamma = np.zeros(len(self.unjudged)), np.zeros(len(self.unjudged))
        if not len(adds) or not len(removes) or len(adds) * len(removes) > MAX_STATES // 8:
            return at_t0 * (t0 == 0), gamma  # allocation (1)
        weights = 1.0 / np.maximum.outer(self.y_of[adds], self.y_of[removes])
        to_add = (lam - net[adds])[:, None] >= (net[removes] - lam)[None, :]
        delta[adds] = (weights * to_add).sum(axis=1)
        gamma[removes] = (weights * ~to_add).sum(axis=0)
        return delta, gamma

    def bound_at(self, b0: np.ndarray, which: int, lam: float, scale: float, ratio: bool) -> tuple:
        """(The bound (module docstring) from allocation ``which`` at b0, its maximiser)."""
        from ...kernels.precision_chains import chain_states  # here: Numba (docs/limits.md#memory) only where chains run

        c, constant = self.linear(b0, which, lam)
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
    points = [(np.zeros(len(chains.unjudged)), 0.0, (1,))]
    seen = set()
    while points and len(seen) < ITERATIONS:
        b0, lam, kinds = points.pop()
        seen.add(tuple(np.flatnonzero(b0).tolist()))
        for which in kinds:
            bound, b = chains.bound_at(b0, which, lam, scale, ratio)
            lowest = min(lowest, bound)
            value, assignment = chains.difference(b)
            if value > best_value:
                best_value, best_assignment, best_b = value, assignment, b
        if lowest <= max(beat, best_value) + SLACK:
            break
        if tuple(np.flatnonzero(best_b).tolist()) not in seen:  # a move must beat AP's ratio, SP's 0
            points.append((best_b.astype(np.float64), best_value if ratio else 0.0, KINDS))
    return lowest, best_value, best_assignment
