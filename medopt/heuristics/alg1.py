"""Moffat's Algorithm 1 for MED-nDCG@k.

Exact for binary relevance (G = 1): once the number m of unjudged documents made
relevant is fixed, the ideal DCG depends on m alone, so the best numerator for
that m takes the m largest positive weight differences; trying every m in both
directions covers every candidate optimum.  With G > 1 an intermediate grade can
keep the ideal DCG smaller and win, so the result is only a lower bound (status
``heuristic``), reported with the valid bound ``min(1, N / IDCG_J)``: N, the
largest numerator any assignment can reach (every positive difference at the
top grade), over the ideal DCG of the judged documents, which no assignment
can lower.
"""

from __future__ import annotations

import time

from ..core.instance import Instance
from ..metrics.base import log2_discount
from ..core.result import MedResult, certify


def dcg_weights(instance: Instance) -> tuple[dict, dict]:
    """Rank discount 1/log2(i+1) of each document in the top k of A and of B."""
    weights_a = {d: log2_discount(i) for i, d in enumerate(instance.a, start=1)}
    weights_b = {d: log2_discount(i) for i, d in enumerate(instance.b, start=1)}
    return weights_a, weights_b


def alg1(instance: Instance) -> MedResult:
    started = time.perf_counter()
    metric, grading = instance.metric, instance.grading
    gain = lambda g: metric.gain(g, grading)
    top = gain(grading.max_grade)
    judged_gains = [gain(g) for g in instance.judgments.values() if gain(g) > 0]
    weights_a, weights_b = dcg_weights(instance)
    base = sum(w * gain(instance.judgments[d]) for d, w in weights_a.items() if d in instance.judgments)
    base -= sum(w * gain(instance.judgments[d]) for d, w in weights_b.items() if d in instance.judgments)

    def ideal_dcg(extra_top_grade_docs: int) -> float:
        profile = sorted(judged_gains + [top] * extra_top_grade_docs, reverse=True)
        return sum(g * log2_discount(i) for i, g in enumerate(profile[: metric.cutoff], start=1))

    best_value, best_direction, best_docs = 0.0, "a", []
    largest_numerator, ends = 0.0, {}
    for direction, sign in (("a", 1.0), ("b", -1.0)):
        own_value, own_docs = -float("inf"), []
        differences = sorted(((sign * (weights_a.get(d, 0.0) - weights_b.get(d, 0.0)) * top, d)
                              for d in instance.unjudged), key=lambda pair: -pair[0])
        numerator, chosen = sign * base, []
        for step in range(len(differences) + 1):
            if step > 0:
                difference, doc = differences[step - 1]
                if difference <= 0:
                    break  # no more documents that raise this side
                numerator += difference
                chosen.append(doc)
            denominator = ideal_dcg(len(chosen))
            if denominator > 0 and numerator / denominator > own_value:
                own_value, own_docs = numerator / denominator, list(chosen)
        if own_value > best_value:
            best_value, best_direction, best_docs = own_value, direction, own_docs
        ends[direction] = dict.fromkeys(own_docs, grading.max_grade)  # this direction's own best (others at 0)
        largest_numerator = max(largest_numerator, numerator)
    assignment = {d: 0 for d in instance.unjudged}
    assignment.update({d: grading.max_grade for d in best_docs})
    if grading.max_grade == 1:
        bound, status = best_value, "optimal"
    else:
        judged_ideal = ideal_dcg(0)
        bound = min(1.0, largest_numerator / judged_ideal) if judged_ideal > 0 else 1.0
        status = "heuristic"
    # each direction's own best: a range's two ends start from them (exact.driver.seed_guesses)
    return certify(instance, assignment, best_direction, upper_bound=bound, status=status,
                   method="alg1", solver=None, started=started, claimed=best_value, details={"assignments": ends})
