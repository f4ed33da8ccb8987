"""The terms of a Q-measure model under one profile or over a box of profiles: the products y, the
valid inequalities and the per-rank score terms (the math: q_measure.py's Variables, Constraints,
Valid inequalities and Objective, and its Boxes of profiles).  The same code writes a Pyomo model
(q_measure, q_boxes) and the matrix template (q_template, modeling.LinearModel)."""

from __future__ import annotations

from itertools import combinations

from medopt.modeling.pyomo_lazy import pyo  # pyomo.environ, loaded on first use

from ..core.instance import judged_count
from ..modeling import Linear, LinearModel, binary_and
from .q_profiles import ideal_gains


class CaseTerms:
    """The pieces of Q under one profile, or over a box of profiles: weights, ideal gains,
    the products y and their inequalities.

    ``low`` and ``high`` map each profile grade to the smallest and largest min(C_g, L) of
    the box (equal for a profile); ``ideal_low`` / ``ideal_high`` are cg*(1..L) at those counts."""

    def __init__(self, m, instance, low, high=None, collection: bool = False):
        high = low if high is None else high
        metric, grading, top = instance.metric, instance.grading, instance.max_grade
        self.m, self.instance = m, instance
        self.rel, self.beta = metric.p("rel"), metric.p("beta")
        gain = {g: metric.gain(g, grading) for g in range(0, top + 1)}
        self.weight = {g: self.beta * gain[g] + (g >= self.rel) for g in range(1, top + 1)}  # w(g)
        self.low, self.high = dict(low), dict(high)  # min(C_g, L) at the box's smallest and largest counts
        # cg*(i), smallest and largest over the box
        self.ideal_low, self.ideal_high = (ideal_gains(instance, gain, size) for size in (self.low, self.high))
        self.sum = Linear.total if isinstance(m, LinearModel) else sum  # one node per sum for a template
        self.relevance = {d: self.sum(m.x[d, g] for g in m.GRADES if g >= self.rel) for d in instance.unjudged}
        self.product_grades = [g for g in m.GRADES if self.weight[g] != 0]
        # ordered pairs (d, e) of unjudged documents with e above d in A or B, each once; with the
        # collection cuts every pair (BoxModels(collection=True))
        self.pairs = list(dict.fromkeys((d, e) for ranking in (instance.a, instance.b)
                                        for i, d in enumerate(ranking) if d in self.relevance
                                        for e in ranking[:i] if e in self.relevance))
        self.collection = collection
        if self.collection:
            ordered = set(self.pairs)
            if top == 1:  # y[d,e] = rel(d) rel(e): one product per unordered pair
                self.pairs += [(d, e) for d, e in combinations(instance.unjudged, 2)
                               if (d, e) not in ordered and (e, d) not in ordered]
            else:
                self.pairs += [(d, e) for d in instance.unjudged for e in instance.unjudged
                               if d != e and (d, e) not in ordered]

    def judged(self, doc) -> bool:
        return doc in self.instance.judgments

    def key(self, d, e, g):
        """Index of rel(d) * x[e,g]: symmetric in d, e when rel(.) is x[., G] and g = G."""
        if g == self.rel == self.instance.max_grade:
            return (d, e, g) if d <= e else (e, d, g)
        return d, e, g

    def add_products(self):
        m = self.m
        products = {self.key(d, e, g): (self.relevance[d], m.x[e, g]) for d, e in self.pairs for g in self.product_grades}
        if products and isinstance(m, LinearModel):  # a box template, built without Pyomo
            m.binary_and("y", products)
        elif products:
            binary_and(m, "y", products, doc="y[d,e,g] = rel(d) * x[e,g]: d relevant and e (above d) of grade g")

    def at_least_above(self, d, above, g):
        """rel(d) * #(documents of `above` with grade >= g), linear in y (g is a profile grade, so w > 0 from g on)."""
        return self.sum(self.m.y[self.key(d, e, h)] for e in above for h in self.m.GRADES if h >= g)

    def judged_at_least_above(self, ranking, i, g) -> int:
        """Judged documents of grade >= g above rank i of ``ranking`` (a constant)."""
        grading, judgments = self.instance.grading, self.instance.judgments
        return sum(1 for e in ranking[: i - 1] if self.judged(e) and grading.cap(judgments[e]) >= g)

    def add_one_hot_pairs(self, constraints) -> None:
        """sum_g y[d,e,g] <= rel(d) (G > 1: x[e,.] is one-hot), added to a ConstraintList."""
        if self.instance.max_grade > 1:
            for d, e in self.pairs:
                constraints.add(self.sum(self.m.y[self.key(d, e, g)] for g in self.product_grades) <= self.relevance[d])

    def self_at_least(self, d, g):
        """rel(d) * [grade(d) >= g] = sum_{h >= max(g, rel)} x[d,h]."""
        return self.sum(self.m.x[d, h] for h in self.m.GRADES if h >= max(g, self.rel))

    def collection_cuts(self):
        """(kind, d, g, others, judged) of the collection cuts (none unless asked for): the prefix cuts
        with every other unjudged document above d and every judged one (J_g of grade >= g); only the
        template (BoxModels) has them."""
        if not self.collection:
            return []
        instance = self.instance
        judged = {g: judged_count(instance, g) for g in self.low}  # a pass over every judgment: once per grade
        cuts = []
        for d in instance.unjudged:
            others = [e for e in instance.unjudged if e != d]
            for g in self.low:
                cuts.append(("upper", d, g, others, judged[g]))
                if others:
                    cuts.append(("lower", d, g, others, judged[g]))
        return cuts

    def add_valid_inequalities(self):
        """Integral cuts that tighten the LP relaxation (see the module docstring); none changes the
        integer optima.  Over a box the upper counts use the largest c_g, the lower ones the smallest."""
        m, instance, n = self.m, self.instance, len(self.instance.unjudged)
        m.cuts = pyo.ConstraintList(doc="valid inequalities: one-hot pairs, prefix upper and lower counts")
        self.add_one_hot_pairs(m.cuts)
        for ranking in (instance.a, instance.b):
            for i, d in enumerate(ranking, start=1):
                if self.judged(d):
                    continue
                above = [e for e in ranking[: i - 1] if not self.judged(e)]
                for g in self.low:
                    high, low = self.high[g], self.low[g]
                    if high < i:  # at most min(i, C_g) <= high documents of grade >= g in the top i
                        judged_above = self.judged_at_least_above(ranking, i, g)
                        m.cuts.add(self.at_least_above(d, above, g) + judged_above * self.relevance[d]
                                   + self.self_at_least(d, g) <= high * self.relevance[d])
                    least = low - judged_count(instance, g) - (n - len(above) - 1)
                    if least > 0 and above:  # U_g >= least + (unjudged docs neither above d nor d)
                        m.cuts.add(self.at_least_above(d, above, g) + self.self_at_least(d, g)
                                   >= least * self.relevance[d])

    def terms(self, ranking):
        """[(i, b_i (beta cg(i) + count(i)))] for the ranks i whose term can be non-zero, linear in x, y."""
        m, instance, weight = self.m, self.instance, self.weight
        metric, grading = instance.metric, instance.grading
        terms, judged_above, above = [], 0.0, []
        for i, d in enumerate(ranking, start=1):
            if self.judged(d):
                grade = instance.judgments[d]
                relevant = metric.is_relevant(grade)
                judged_above += self.beta * metric.gain(grade, grading) + relevant
                if relevant:
                    terms.append((i, judged_above + self.sum(weight[g] * m.x[e, g] for e in above for g in m.GRADES)))
            else:
                term = self.sum(weight[g] * m.x[d, g] for g in m.GRADES if g >= self.rel) + judged_above * self.relevance[d]
                term += self.sum(weight[g] * m.y[self.key(d, e, g)] for e in above for g in self.product_grades)
                terms.append((i, term))
                above.append(d)
        return terms

    def score(self, ranking, ideal=None, skip=frozenset()):
        """R * Q(ranking): sum_i b_i (beta cg(i) + count(i)) / (beta cg*(i) + i), linear in x, y
        (cg* = ``ideal``, by default the smallest of the box: the profile's own for a profile),
        without the ranks in ``skip``."""
        ideal = self.ideal_low if ideal is None else ideal
        total = 0
        for i, term in self.terms(ranking):
            if i not in skip:
                total += term / (self.beta * ideal[i - 1] + i)
        return total
