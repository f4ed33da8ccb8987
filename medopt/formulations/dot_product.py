"""MED for static weighted-precision metrics P@k, DCG@k, SDCG@k, RBP: a linear program.

max  sign * ( sum_i W(i) u(grade(a_i)) - sum_i W(i) u(grade(b_i)) )  [+ RBP residual tail]
s.t. the grade-assignment constraints (common.py) and any relevance limits.

W(i) is the metric's rank weight and u its (scaled) gain, so u(grade(d)) is
linear in x: sum_g u(g) x[d, g].  Without side constraints the LP relaxation
is integral and this is Tan & Clarke's closed form; with limits it is a MILP.
"""

from __future__ import annotations

from medopt.modeling.pyomo_lazy import pyo  # pyomo.environ, loaded on first use

from .base import DirectModel, Formulation, register
from ..modeling import direction_sign, new_model, value_at


def weighted_gain_sum(m, instance, ranking):
    metric, grading = instance.metric, instance.grading
    weights = metric.rank_weights(len(ranking))
    return sum(w * value_at(m, instance, d, lambda g: metric.unit_gain(g, grading)) for w, d in zip(weights, ranking))


@register
class DotProduct(Formulation, DirectModel):
    families = ("P", "DCG", "SDCG", "RBP")
    examples = ("SDCG@10", "P@10", "DCG@10", "RBP(p=0.95)")
    title = "dot-product (P, DCG, SDCG, RBP)"

    def strategies(self, instance):
        return ("direct",)

    def build_direct(self, instance, direction):
        m = new_model(instance, direction, "dot-product LP")
        sign = direction_sign(direction)
        m.score_a = pyo.Expression(expr=weighted_gain_sum(m, instance, instance.a), doc="M(A), linear in x")
        m.score_b = pyo.Expression(expr=weighted_gain_sum(m, instance, instance.b), doc="M(B), linear in x")
        difference = sign * (m.score_a - m.score_b)
        if instance.residual:
            difference += instance.metric.tail_weight(len(instance.full_a if direction == "a" else instance.full_b))
        m.objective = pyo.Objective(expr=difference, sense=pyo.maximize,
                                    doc="maximise the better list's score minus the other's")
        return m

