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

The arithmetic is the array kernel kernels/closed_forms.alg1_ends on a block of one row: the batch
path (batch/fastpath.py) runs the same kernel on a block of many topics.
"""

from __future__ import annotations

import time

import numpy as np

from ..core.instance import Instance
from ..kernels.closed_forms import alg1_ends
from ..metrics.base import log2_discount
from ..core.result import MedResult, certify
from .closed_form import one_row


def dcg_weights(instance: Instance) -> tuple[dict, dict]:
    """Rank discount 1/log2(i+1) of each document in the top k of A and of B."""
    weights_a = {d: log2_discount(i) for i, d in enumerate(instance.a, start=1)}
    weights_b = {d: log2_discount(i) for i, d in enumerate(instance.b, start=1)}
    return weights_a, weights_b


def alg1(instance: Instance) -> MedResult:
    started = time.perf_counter()
    metric, grading = instance.metric, instance.grading
    weights_a, weights_b = dcg_weights(instance)
    difference, rows, base, top_gain = one_row(instance, weights_a, weights_b, metric.gain)
    judged = sorted((g for g in (metric.gain(v, grading) for v in instance.judgments.values()) if g > 0),
                    reverse=True)
    depth = metric.cutoff if metric.cutoff is not None else len(judged) + len(difference)  # the ideal's ranks
    judged_gain = np.zeros((1, depth))
    judged_gain[0, :min(len(judged), depth)] = judged[:depth]
    discount = np.array([log2_discount(i) for i in range(1, depth + 1)])
    found = alg1_ends(difference, rows, base, top_gain, judged_gain, discount, 1)
    unjudged = instance.unjudged
    ends = {direction: dict.fromkeys((unjudged[i] for i in docs.tolist()), grading.max_grade)
            for direction, (docs, _) in zip("ab", found.own_docs)}  # each direction's own best (others at 0)
    best_value, best_direction = float(found.value[0]), "b" if found.direction_b[0] else "a"
    assignment = {d: 0 for d in unjudged}
    assignment.update(dict.fromkeys((unjudged[i] for i in found.chosen().tolist()), grading.max_grade))
    if grading.max_grade == 1:
        bound, status = best_value, "optimal"
    else:
        bound, status = float(found.graded_bound[0]), "heuristic"
    # each direction's own best: a range's two ends start from them (exact.driver.seed_guesses)
    return certify(instance, assignment, best_direction, upper_bound=bound, status=status,
                   method="alg1", solver=None, started=started, claimed=best_value, details={"assignments": ends})
