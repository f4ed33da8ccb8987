"""MED for Success@k (HIT@k): an OR over each list's top k.

b_d = [grade(d) >= rel] is linear in x (a constant for a judged document).  For the direction
X over Y (X the list whose lead is maximised):

max  hit[better] - hit[other]
s.t. hit[better] <= sum_{d in X's top k} b_d    (X can only hit through a relevant document)
     hit[other]  >= b_d  for every d in Y's top k (any relevant document makes Y hit)
     hit binary; the grade-assignment rows (and any limits, dominance rows) of every model.

For every assignment the largest objective is Success(X) - Success(Y): hit[better] can be 1
exactly when X has a relevant document, hit[other] must be 1 exactly when Y has one.  So the
optimum is the direction's largest difference, whatever its sign (a range's low end too).

Success is no dot product (it is the largest b_i of the top k, not a weighted sum), so the
closed form of the dot-product metrics does not apply to it; without limits it has a closed form of
its own (metrics/success.py, with its proof), which ``auto`` takes; this model serves limits.
"""

from __future__ import annotations

from medopt.modeling.pyomo_lazy import pyo  # pyomo.environ, loaded on first use

from ..modeling import LinearModel, binaries, expression, new_model, relevant_at, row, rows, total
from .base import DirectMatrix, DirectModel, Formulation, ModelSize, grade_variables, register


@register
class SuccessAtK(Formulation, DirectModel):
    families = ("Success",)
    examples = ("Success@10",)
    title = "Success@k (an OR over each top k)"

    def strategies(self, instance):
        return ("direct",)

    def model_size(self, instance, strategy):
        """The grade variables and their rows, and a row per rank of the two lists (the better list's
        one row holds them all), each holding a rank's relevance: one entry per grade >= rel."""
        relevance = max(0, instance.max_grade - instance.metric.p("rel") + 1)
        ranks = len(instance.a) + len(instance.b)
        return ModelSize(3 * grade_variables(instance) + ranks * (relevance + 1) + 4,
                         what=f"{ranks:,} ranks x {relevance:,} relevant grades")

    def difference(self, m, instance, direction):
        """The hits and their rows on a model of either builder; the objective hit[better] - hit[other]."""
        better, other = (instance.a, instance.b) if direction == "a" else (instance.b, instance.a)
        hit = binaries(m, "hit", ("better", "other"),
                       doc="hit[X] = 1 iff list X (better: the one whose lead is maximised) has a relevant "
                           "document in its top k")
        row(m, "better_needs_relevant", hit["better"] <= total(relevant_at(m, instance, d) for d in better),
            doc="hit[better] <= sum of b_d over its top k")
        rows(m, "other_hits", {i: hit["other"] >= relevant_at(m, instance, d) for i, d in enumerate(other)},
             doc="hit[other] >= b_d for each d of its top k")
        return expression(m, "difference", hit["better"] - hit["other"],
                          doc="Success(better) - Success(other)")

    def build_direct(self, instance, direction):
        m = new_model(instance, direction, "Success MILP")
        m.objective = pyo.Objective(expr=self.difference(m, instance, direction), sense=pyo.maximize,
                                    doc="maximise Success(better) - Success(other)")
        return m

    def direct_matrix(self, instance, direction):
        """build_direct's model from the same code, written with modeling.LinearModel."""
        m = LinearModel(instance)
        difference = self.difference(m, instance, direction)
        matrix = m.matrix()
        matrix.c, matrix.offset = m.vector(difference)
        return DirectMatrix(matrix, m.assignment)
