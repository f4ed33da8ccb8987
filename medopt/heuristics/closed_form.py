"""Tan & Clarke's closed form for static weighted-precision metrics (P, DCG, SDCG, RBP), and the
dispatch to the closed forms metric families give of their own (Success@k, R@k).

For a metric ``M(X) = sum_i W(i) u(grade(x_i))`` with ``u`` non-decreasing and
``u(0) = 0``, the difference ``M(A) - M(B)`` is a constant (the judged
documents) plus, for each unjudged document ``d``, ``(W_A(d) - W_B(d)) u(g_d)``,
where ``W_X(d)`` is the weight of d's rank in X (0 when d is not in the top k).
The terms are independent, so each is maximised on its own: the top grade G when
``W_A(d) > W_B(d)``, grade 0 otherwise.  Doing the same for ``M(B) - M(A)`` and
taking the larger is the exact maximum; the value is therefore its own upper
bound.  Each direction's maximum is exact on its own, so the two are the ends of the difference
range (SPEC 7).  With the RBP residual the tail adds a constant to each direction.

Other metric families may give closed forms of their own: a metric with a ``closed_form_ends(instance)``
method (Success@k, R@k; the proof is in its docstring, beside the metric) is answered by it, and the
closed-form method computes MED and both range ends for those metrics too (``has_closed_form``).
Both kinds hold without relevance limits only.

The arithmetic is the array kernel kernels/closed_forms.dot_product_ends, on a block of one row: the
batch path (batch/fastpath.py) runs the same kernel on a block of many topics.
"""

from __future__ import annotations

import time

import numpy as np

from ..core.instance import Instance
from ..kernels.closed_forms import dot_product_ends as dot_product_kernel, judged_base
from ..core.result import End, MedResult, RangeResult, certify, certify_range


def document_weights(instance: Instance) -> tuple[dict, dict]:
    metric = instance.metric
    weights_a = dict(zip(instance.a, metric.rank_weights(len(instance.a))))
    weights_b = dict(zip(instance.b, metric.rank_weights(len(instance.b))))
    return weights_a, weights_b


def has_closed_form(metric) -> bool:
    """Whether the metric family gives a closed form of its own (``closed_form_ends(instance)``)."""
    return callable(getattr(metric, "closed_form_ends", None))


def closed_form_ends(instance: Instance) -> dict[str, tuple[float, dict]]:
    """Each direction's maximum and a maximising assignment: {"a": max M(A) - M(B), "b": max
    M(B) - M(A)}: the metric's own closed form when it has one, else the dot product's below."""
    if has_closed_form(instance.metric):
        return instance.metric.closed_form_ends(instance)
    return dot_product_ends(instance)


def dot_product_ends(instance: Instance) -> dict[str, tuple[float, dict]]:
    """The dot product's ends.  The terms are independent whatever the sign of the total, so each
    direction's maximum is exact on its own (it is minus the other direction's minimum: the two ends
    of the difference range)."""
    metric, grading = instance.metric, instance.grading
    weights_a, weights_b = document_weights(instance)
    difference, rows, base, top_gain = one_row(instance, weights_a, weights_b, metric.unit_gain)
    values = dict(zip("ab", (float(v[0]) for v in dot_product_kernel(difference, rows, base, top_gain, 1))))
    ends = {}
    for direction, helps in (("a", difference > 0), ("b", difference < 0)):
        assignment = {doc: grading.max_grade if up else 0 for doc, up in zip(instance.unjudged, helps.tolist())}
        value = values[direction]
        if instance.residual:
            value += metric.tail_weight(len(instance.full_a if direction == "a" else instance.full_b))
        ends[direction] = (value, assignment)
    return ends


def one_row(instance: Instance, weights_a: dict, weights_b: dict, gain) -> tuple:
    """The kernels' inputs for one instance, a block of one row: the unjudged documents' weight
    differences (in ``instance.unjudged`` order), their rows (0), the judged base and the top grade's
    ``gain``."""
    grading, judgments = instance.grading, instance.judgments
    difference = np.array([weights_a.get(d, 0.0) - weights_b.get(d, 0.0) for d in instance.unjudged],
                          dtype=np.float64)
    terms = [np.array([w * gain(judgments[d], grading) for d, w in weights.items() if d in judgments],
                      dtype=np.float64) for weights in (weights_a, weights_b)]
    zeros = [np.zeros(len(t), dtype=np.int64) for t in terms]
    base = judged_base(zeros[0], terms[0], zeros[1], terms[1], 1)
    return difference, np.zeros(len(difference), dtype=np.int64), base, np.array([gain(grading.max_grade, grading)])


def closed_form(instance: Instance) -> MedResult:
    started = time.perf_counter()
    return med_of_ends(instance, closed_form_ends(instance), started)


def closed_form_range(instance: Instance) -> RangeResult:
    started = time.perf_counter()
    return range_of_ends(instance, closed_form_ends(instance), started)


def med_of_ends(instance, ends: dict, started: float) -> MedResult:
    """The MED from each direction's proved maximum {direction: (value, assignment)}: the larger one,
    certified (each value is its own bound); MED-U's closed form uses it too."""
    direction = max(ends, key=lambda d: ends[d][0])
    value, assignment = ends[direction]
    return certify(instance, assignment, direction, upper_bound=value, status="optimal",
                   method="closed-form", solver=None, started=started, claimed=value)


def range_of_ends(instance, ends: dict, started: float) -> RangeResult:
    """The difference range from each direction's proved maximum, each end certified on its own."""
    ends = {direction: End(assignment, value, "optimal", value) for direction, (value, assignment) in ends.items()}
    return certify_range(instance, ends, method="closed-form", solver=None, started=started)
