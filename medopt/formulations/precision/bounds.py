"""The sums of precisions (sums.py) without a model: N = sign (SP(A) - SP(B)) as arrays (its
pair weights, its linear terms, its quadratic form in the relevances of the unjudged documents),
and the bounds on a direction's difference that need no model: the closed form (``quick_bound``),
the roof dual at a difference reached (``relaxation_bound``, one step of Dinkelbach over it), and
the parametric bound over several multipliers of the relevant count (``parametric_bound``).  The
roof dual itself is solvers/roof_dual.py; the exact driver passes it in (formulations and solvers
are siblings)."""

from __future__ import annotations

import math
import time
from math import comb

import numpy as np

from ...core.instance import judged_count
from ...core.deadlines import OutOfTime, check_room, check_time
from ...modeling import direction_sign
from ...kernels import bounds_by_count
from . import chains


def pair_weights(instance, direction, scales=(1.0, 1.0)) -> dict:
    """pair_arrays as a dict {(d, e): weight} of document ids, in its order (for reading, as notebook 03
    does; the models and bounds use the arrays)."""
    unjudged = instance.unjudged
    first, second, weights = pair_arrays(instance, direction, scales)
    return {(unjudged[d], unjudged[e]): w for d, e, w in zip(first.tolist(), second.tolist(), weights.tolist())}


# bytes per pair of unjudged documents that the roof dual of the quadratic form holds at its peak (the
# pair arrays, the form and the network; docs/limits.md#at-systematic-review-depth)
ROOF_BYTES_PER_PAIR = 250


def pair_count(instance) -> int:
    """The pairs of unjudged documents of a cut list (a pair in both lists counted once): pair_arrays's
    length, the products y[d, e] of the models."""
    unjudged = set(instance.unjudged)
    in_a, in_b = (sum(1 for d in ranking if d in unjudged) for ranking in (instance.a, instance.b))
    in_both = len(unjudged.intersection(instance.a).intersection(instance.b))
    return comb(in_a, 2) + comb(in_b, 2) - comb(in_both, 2)


def pair_arrays(instance, direction, scales=(1.0, 1.0)) -> tuple:
    """Net coefficient of b_d b_e in N = sign * (SP(A) - SP(B)), per unordered pair of unjudged documents,
    as arrays (first, second, weights), the documents as indices into instance.unjudged; with
    ``scales`` (s_A, s_B), in sign * (s_A SP(A) - s_B SP(B)) (self_normalised.py: each list over its
    own denominator).  A list's document at rank i contributes side / i (side = sign s_A for A,
    -sign s_B for B) to its pair with each unjudged document above it.  The pairs come in the order a
    loop over A's ranks and then B's (each rank's earlier documents in rank order) first meets them,
    each pair (d, e) with d before e in sorted order, and a pair's weight is 0.0 + A's part + B's
    part, the sums such a loop would make."""
    sign, judgments, unjudged = direction_sign(direction), instance.judgments, instance.unjudged
    index = {d: i for i, d in enumerate(unjudged)}
    by_name = sorted(range(len(unjudged)), key=unjudged.__getitem__)  # the documents in sorted order
    place = np.empty(len(unjudged), dtype=np.int64)
    place[by_name] = np.arange(len(unjudged))
    keys, parts = [], []
    for ranking, side in ((instance.a, sign * scales[0]), (instance.b, -sign * scales[1])):
        check_time()
        ranks = [(i, index[d]) for i, d in enumerate(ranking, start=1) if d not in judgments]
        rank, doc = np.array([r for r, _ in ranks], dtype=np.int64), np.array([d for _, d in ranks], dtype=np.int64)
        later, earlier = np.tril_indices(len(ranks), -1)  # per later rank, the earlier ones in rank order
        a, b = place[doc[later]], place[doc[earlier]]
        keys.append(np.minimum(a, b) * len(unjudged) + np.maximum(a, b))
        parts.append(side / rank[later])
    check_time()  # (at depth 1000 each step below is long: the deadline between them)
    in_a, in_b = keys
    sorter = np.argsort(in_a, kind="stable")
    ordered = in_a[sorter]
    check_time()
    at = np.minimum(np.searchsorted(ordered, in_b), max(len(in_a) - 1, 0))  # B's pairs among A's
    found = ordered[at] == in_b if len(in_a) else np.zeros(len(in_b), dtype=bool)
    check_time()
    pairs = np.concatenate([in_a, in_b[~found]])
    weights = np.zeros(len(pairs))
    weights[:len(in_a)] += parts[0]
    weights[sorter[at[found]]] += parts[1][found]  # (each pair once per list: no repeated index)
    weights[len(in_a):] += parts[1][~found]
    by_name = np.asarray(by_name, dtype=np.int64)
    return by_name[pairs // max(len(unjudged), 1)], by_name[pairs % max(len(unjudged), 1)], weights


def relevance_linear(instance, direction, scales=(1.0, 1.0)) -> tuple[float, list]:
    """N = sign * (SP(A) - SP(B)) less its products of two unjudged relevances: (the constant, the
    terms (d, c): c b_d, list A's in rank order, then B's).  A list's document at rank i adds weight
    w_i = +-s / i times its relevance and the relevant ones above it; for an unjudged d that is
    w_i (1 + the judged relevant documents above), and each judged relevant document below d at rank
    j adds w_j once more (b_d counts in its precision).  ``scales`` (s_A, s_B): sign * (s_A SP(A) -
    s_B SP(B))."""
    sign, judgments, relevant = direction_sign(direction), instance.judgments, instance.metric.is_relevant
    constant, terms = 0.0, []
    for ranking, side in ((instance.a, sign * scales[0]), (instance.b, -sign * scales[1])):
        judged_above, own = 0, []  # (unjudged document, its own term) or (None, a judged relevant one's weight)
        for i, doc in enumerate(ranking, start=1):
            check_time()
            weight = side / i
            if doc not in judgments:
                own.append((doc, weight * (1 + judged_above)))
            elif relevant(judgments[doc]):
                constant += weight * (1 + judged_above)
                own.append((None, weight))
                judged_above += 1
        below, listed = 0.0, []  # the weights of the judged relevant documents ranked below
        for doc, value in reversed(own):
            if doc is None:
                below += value
            else:
                listed.append((doc, value + below))
        terms += reversed(listed)
    return constant, terms


def relevance_quadratic(instance, direction):
    """N = sign (SP(A) - SP(B)) as a quadratic function of the relevances b_d of the unjudged documents
    (instance.unjudged order): (constant, linear, first, second, weights), the pairs as index arrays;
    the terms of relevance_linear and pair_arrays, as in numerator_expression."""
    constant, terms = relevance_linear(instance, direction)
    index = {d: i for i, d in enumerate(instance.unjudged)}
    linear = np.zeros(len(index))
    for d, w in terms:
        linear[index[d]] += w
    first, second, weights = pair_arrays(instance, direction)
    return constant, linear, first, second, weights


def relevance_chains(instance, direction) -> tuple:
    """N = SP(X) - SP(Y) (X the list the direction favours: A for "a") as its two lists' chains for
    kernels.precision_chains.chain_max: per list, int64 arrays over its ranks of the kind (0 judged
    non-relevant, 1 judged relevant, 2 unjudged), the unjudged document's index into
    instance.unjudged (-1 for a judged one) and J_i, the judged relevant documents at ranks 1..i."""
    index, judgments, relevant = {d: i for i, d in enumerate(instance.unjudged)}, instance.judgments, \
        instance.metric.is_relevant
    chains = []
    for ranking in ((instance.a, instance.b) if direction_sign(direction) > 0 else (instance.b, instance.a)):
        kind = np.array([2 if d not in judgments else int(relevant(judgments[d])) for d in ranking], dtype=np.int64)
        doc = np.array([index.get(d, -1) for d in ranking], dtype=np.int64)
        chains.append((kind, doc, np.cumsum(kind == 1).astype(np.int64)))
    return tuple(chains)



GOLDEN = (math.sqrt(5) - 1) / 2  # the golden-section ratio


class PrecisionBounds:
    """The bounds without a model of PrecisionSums (its ``scale`` and ``min_cutoff`` come from it)."""

    def relevant_count_ratio(self, instance) -> bool:
        """AP and AP(norm=min): SP / R and SP / min(k, R) (Formulation.relevant_count_ratio)."""
        return instance.metric.family == "AP"

    def quick_bound(self, instance, direction) -> float:
        """A proven bound on the direction's difference, without a model: kernels/bounds_by_count's bound per R with
        beta = 0 (each term a precision, so R times it bounds SP(X) - SP(Y) for every assignment with R
        relevant documents), over the metric's normaliser: R (AP), min(k, R) (AP(norm=min)), k (SSP),
        1 (SP); the largest over R, and 0 when R = 0 is possible (no relevant document: both score 0)."""
        metric = instance.metric
        rel = metric.p("rel") if "rel" in metric.PARAMS else 1
        cap = self.min_cutoff(instance) if metric.family == "AP" else None
        if metric.family == "AP":  # the value of bound(R) as below, for bounds_by_r's refinement
            weight = (lambda r: r / np.minimum(cap, r)) if cap else None
        else:
            weight = lambda r: r.astype(float)  # noqa: E731

        per_r = bounds_by_count.bounds_by_r(instance, direction, beta=0.0, rel=rel, weight=weight, largest=True)
        if metric.family == "AP":
            values = [bound * r / min(cap, r) if cap else bound for r, bound in per_r.items()]
        else:
            values = [bound * r * self.scale(instance) for r, bound in per_r.items()]
        if not values or judged_count(instance, rel) == 0:
            values.append(0.0)
        return max(values)

    def chain_bound(self, instance, direction, beat: float):
        """(A proven bound on the direction's difference, the best difference found, its assignment) from
        the favoured list's chain and a linear bound on the other's (chains.py), or None where it does not
        apply (AP(norm=min), relevance limits, no unjudged document that can be relevant)."""
        if not chains.applies(instance):
            return None
        return chains.chain_bound(instance, direction, beat, self.scale(instance))

    def quadratic_form(self, instance, direction, lam: float | None = None, memo: dict | None = None):
        """N - lam D (lam None: N alone), D = R, as a quadratic function of the relevances b_d of the
        unjudged documents, for a bound by the roof dual (exact/relaxation.settled_by_relaxation):
        (constant, linear, first, second, weights, implications), the dominance pairs as implications
        b_e <= b_d; the relevance limits are not in it (a relaxation of the feasible set).  ``memo`` (a
        dict the caller keeps for the instance) holds what does not depend on lam between calls."""
        memo = {} if memo is None else memo
        if ("N", direction) not in memo:
            check_room(ROOF_BYTES_PER_PAIR * pair_count(instance))  # under the memory ceiling, or OutOfRoom
            constant, linear, first, second, weights = relevance_quadratic(instance, direction)
            if instance.metric.p("rel") > instance.max_grade:  # no unjudged document can be relevant: b = 0
                linear, first, second, weights = np.zeros_like(linear), first[:0], second[:0], weights[:0]
            index = {d: i for i, d in enumerate(instance.unjudged)}
            implies = (np.fromiter((index[e] for _, e in instance.dominance), np.int64, len(instance.dominance)),
                       np.fromiter((index[d] for d, _ in instance.dominance), np.int64, len(instance.dominance)))
            memo["N", direction] = constant, linear, first, second, weights, implies
        constant, linear, first, second, weights, implies = memo["N", direction]
        if lam is not None:  # D = R = the judged relevant documents + sum_d b_d
            linear = linear - lam
            constant -= lam * judged_count(instance, instance.metric.p("rel"))
        return constant, linear, first, second, weights, implies

    def relaxation_bound(self, instance, direction, start: float, roof, memo: dict | None = None):
        """(A proven bound on the direction's difference from the roof dual, a candidate assignment of
        the unjudged documents or None), at lam = ``start`` (``roof``: a quadratic form -> (a bound on
        its maximum, labels), exact/relaxation.py passes solvers.roof_dual_bound).  SSP, SP: scale x the
        bound on max N.  AP: F = the bound on max N - lam R gives N / R <= lam + max(F, 0) / D_min for
        R >= 1 (Dinkelbach's step, exact/dinkelbach.py); AP(norm=min), lam >= 0: N - lam min(k, R) =
        max(N - lam k, N - lam R), so also lam + max(F_k, 0) / k with F_k the bound on max N - lam k
        (only where the cap can bind, binding_cutoff: elsewhere min(k, R) = R and the AP step holds).
        R = 0 (possible only with no judged relevant document) gives 0.  The candidate: the cut's
        labels, relevant at grade rel, undetermined ones not relevant.  ``memo``: quadratic_form's.
        ``roof`` is told the value its form must beat to matter (``floor``: 0 for N - lam R, which
        the assignment of ratio lam reaches), so that an exact search (solvers.roof_search) may stop
        proving below it."""
        n, rel = len(instance.unjudged), instance.metric.p("rel")
        if instance.metric.family in ("SSP", "SP"):
            scale = self.scale(instance)
            bound, labels = roof(n, *self.quadratic_form(instance, direction, memo=memo), floor=start / scale)
            bound *= scale
        else:
            cap = self.binding_cutoff(instance)
            if not math.isfinite(start) or (cap is not None and start < 0):
                return math.inf, None
            excess, labels = roof(n, *self.quadratic_form(instance, direction, start, memo), floor=0.0)
            bound = start + max(excess, 0.0) / self.min_denominator(instance)
            if cap is not None:
                capped = roof(n, *self.quadratic_form(instance, direction, memo=memo), floor=start * cap)[0]
                bound = max(bound, start + max(capped - start * cap, 0.0) / cap)
            if judged_count(instance, rel) == 0:
                bound = max(bound, 0.0)
        relevant = rel if rel <= instance.max_grade else 0
        return bound, {d: relevant if label == 1 else 0 for d, label in zip(instance.unjudged, labels.tolist())}

    @staticmethod
    def relevance_chains(instance, direction) -> tuple:
        """relevance_chains (module function): the two lists of N as chains (exact/count_boxes.py)."""
        return relevance_chains(instance, direction)

    def binding_cutoff(self, instance):
        """min_cutoff, or None where min(k, R) = R for every assignment: R is at most the judged
        relevant count plus the unjudged documents, and when that is at most k the cap never binds
        (AP(norm=min)@1000 of two 1000-deep lists sharing most documents, say), so the capped roof
        dual of relaxation_bound is not needed."""
        cap = self.min_cutoff(instance)
        if cap is not None and judged_count(instance, instance.metric.p("rel")) + len(instance.unjudged) <= cap:
            return None
        return cap

    def min_denominator(self, instance) -> float:
        """The smallest D > 0 of any assignment: R >= the judged relevant count J, so D = R >= max(1, J)
        and D = min(k, R) >= max(1, min(k, J)) (D = 0 only when J = 0 and nothing is relevant)."""
        judged = judged_count(instance, instance.metric.p("rel"))
        cap = self.min_cutoff(instance)
        return float(max(1, judged if cap is None else min(judged, cap)))

    def parametric_bound(self, instance, direction, lam: float, roof, memo: dict | None = None,
                         deadline: float | None = None) -> float:
        """A bound on the direction's AP (or AP(norm=min)) difference from the roof duals of N - mu R
        (quadratic_form) at several mu (``roof``: solvers.roof_dual_bound).  Proof: F(mu), the roof
        dual, bounds N - mu R for every assignment, so one with R = J + m relevant documents (m of
        them unjudged) has N <= h(m) = min_mu (F(mu) + mu (J + m)) and its difference N / D(m) <=
        h(m) / D(m), D(m) = J + m (min(k, J + m) for norm=min); the bound is the largest over m = 0..n
        (D(m) = 0: every score 0, difference 0).  At mu = lam alone this is Dinkelbach's step
        (relaxation_bound) at its worst m; the other mu bound the small and the large m better.  The
        mu: lam times 1/8..16 (16 values, geometric), then twice a golden-section search over mu for
        the m that gives the bound, 2 + 8 roof duals each
        (docs/explanation/precision-sums.md#ap-at-depth-the-parametric-bound).  inf when lam <= 0 (a range's negative
        end: not needed there).  At ``deadline`` or the time limit, once some mu is
        tried, the envelope of the mu tried so far, which bounds as well (fewer mu, a larger minimum)."""
        if not lam > 0 or not math.isfinite(lam):
            return math.inf
        n, rel = len(instance.unjudged), instance.metric.p("rel")
        judged, cap = judged_count(instance, rel), self.min_cutoff(instance)
        totals = judged + np.arange(n + 1 if rel <= instance.max_grade else 1, dtype=float)  # R = J + m
        denominators = totals if cap is None else np.minimum(float(cap), totals)
        values = {}

        def at(mu):  # F(mu): a bound on max N - mu R
            if mu not in values:
                check_time()
                if values and deadline is not None and time.perf_counter() > deadline:
                    raise OutOfTime
                values[mu] = roof(n, *self.quadratic_form(instance, direction, mu, memo))[0]
            return values[mu]

        def envelope():
            mus = np.array(sorted(values))
            h = np.min(np.array([values[mu] for mu in mus])[:, None] + mus[:, None] * totals[None, :], axis=0)
            ratios = np.divide(h, denominators, out=np.zeros_like(h), where=denominators > 0)
            worst = int(np.argmax(ratios))
            return float(ratios[worst]), worst, mus

        try:
            for factor in np.geomspace(1 / 8, 16, 16):
                at(float(lam * factor))
            for _ in range(2):
                _, m, mus = envelope()
                best = int(np.argmin([values[mu] + mu * totals[m] for mu in mus]))
                low, high = float(mus[max(best - 1, 0)]), float(mus[min(best + 1, len(mus) - 1)])

                def h(mu, r=totals[m]):  # the bound on N at R = r from the roof dual at mu
                    return at(mu) + mu * r

                # golden-section search: the minimum over mu of the convex F(mu) + mu R lies in
                # [low, high], and each step keeps one of its two inner points (one new roof dual)
                one, two = high - GOLDEN * (high - low), low + GOLDEN * (high - low)
                at_one, at_two = h(one), h(two)
                for _ in range(8):
                    if at_one < at_two:
                        high, two, at_two = two, one, at_one
                        one = high - GOLDEN * (high - low)
                        at_one = h(one)
                    else:
                        low, one, at_one = one, two, at_two
                        two = low + GOLDEN * (high - low)
                        at_two = h(two)
        except OutOfTime:  # the caller checks the clock again before any more work
            if not values:
                raise
        return envelope()[0]
