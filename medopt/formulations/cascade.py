"""MED for the cascade metrics RR / RR@k and ERR / ERR@k: a state-expanded cascade.

Both metrics are a user scanning list X top down and stopping at rank i with
probability c_i:  M(X) = sum_i (c_i / i) prod_{j<i} (1 - c_j), with
c_g = gain(g) for ERR and c_g = [g >= rel] for RR.  The product of unknowns is
what makes the problem nonlinear; the states below make it linear and exact.

Data.  Stop classes o: the grades 0..G grouped by equal stop probability c_o
(class indicator I[d, o] = sum_{g in o} grade_indicator(d, g), linear in x).
A class is *staying* (c_o = 0: the cascade goes on unchanged), *stopping*
(c_o = 1: the cascade ends, nothing below counts) or *partial* (otherwise).
The state before rank i is the vector n of how many documents of each partial
class were seen at ranks < i.  Its reach, prod_o (1 - c_o)^{n_o}, is a
constant.  Only states reachable from the judged documents above rank i are
built (a judged document has one class; an unjudged one any *open* class,
those holding a grade it may take: see Reduction).

Variables (besides the grade binaries x[d, g] of common.py, one set per
document, so a document in both lists has one grade seen by both cascades):
  s[X, i, n]     binary, 1 iff list X's cascade is in state n just before rank i
                 (s[X, 1, 0] fixed at 1)
  t[X, i, n, o]  binary, 1 iff s[X, i, n] = 1 and the document at rank i is in
                 class o; only at unjudged ranks (at a judged rank the one arc is s)

Constraints.
  leave_state[X, i, n]:   sum_o t[X, i, n, o] = s[X, i, n]
  class_agrees[X, i, o]:  sum_n t[X, i, n, o] <= I[x_i, o]
  flow[X, i, n']:         s[X, i, n'] = sum of the arcs of rank i - 1 into n'

Objective (direction A; B swaps the sign):
  max  sum_{arcs of A} (c_o / i) reach(n) t[A, i, n, o]  -  same over B.

Exactness.  For integral x the cascade of each list is forced: by induction, at
most one state is occupied before rank i; if s[X, i, n] = 1, leave_state sends
it along one arc and class_agrees allows only the arc of the one class whose
indicator is 1, so the next state is the true one.  Once a stopping document
is met, no state is occupied and every arc is 0 (class_agrees only caps arcs).
So each objective term is 1/i * reach * c exactly when the user is in that
state at rank i and stops there: the objective is M(A) - M(B).  An explicit
absorbing "stopped" state would give the same LP relaxation (its arcs are the
slacks of class_agrees) with more variables, so there is none.  All
constraint coefficients are integers (CP-SAT needs that); only the objective
is real.

Reduction.  Grades 0 and G suffice when there are no relevance limits
(Tan & Clarke).  Fix every other document's grade: document d is at one rank of
A (or none) and one of B, and M(X) = before + reach_d (c_d / i + (1 - c_d) after),
so M(A) - M(B) is affine in c_d and its maximum over the grades is at the
smallest or largest stop probability, c_0 = 0 or c_G (gains are non-decreasing).
Moving documents one at a time, some optimum uses grades 0 and G only.  So by
default x[d, g] = 0 is fixed for 0 < g < G and unjudged documents branch into
two classes only; limits couple documents (the argument fails), and then every
grade is modelled.  ``Cascade(extreme_grades=False)`` always models every grade.

Negligible states.  A state whose reach is below 1e-13 is treated as stopped: the
score of the rest of the list is at most that reach, so each list's score is
under-stated by less than 1e-13; the bound reported adds 2e-13 (model.bound_slack).

Compact model (strategy ``compact``, HiGHS: it has continuous variables).  The same
cascade with one continuous survival variable per rank instead of a state per count.
For list X write U_i for the reach of rank i through the judged (or fixed) documents
above it alone, prod (1 - c_j), a constant, and let the *scaled survival* p[X, i] in
[0, 1] stand for (probability of reaching rank i) / U_i.  p[X, 1] = 1; a judged rank
leaves p unchanged (its factor is in U), so it shares the variable of the rank above.
At an unjudged rank holding d, for each grade g > 0 with stop probability c_g > 0:
  v[X, i, g] in [0, 1]   the scaled probability of stopping at rank i on grade g
  p[X, i + 1] = p[X, i] - sum_g c_g v[X, i, g]
and, depending on the side of the objective list X is on,
  better list:  v[X, i, g] <= x[d, g],  sum_g v[X, i, g] <= p[X, i]
  worse list:   v[X, i, g] >= p[X, i] + x[d, g] - 1          (v >= 0 by its bound)
Objective: sum (U_i / i) (sum_g c_g v[X, i, g] at unjudged ranks, c_i p[X, i] at judged
ones) over the better list minus the same over the other.
Exactness: for integral x every row above allows v[X, i, g] = p[X, i] x[d, g], the
true cascade.  Given x, the better list's terms are maximised and the other's
minimised, and both pick exactly that value: raising v[X, i, g] by t adds
U_i c_g t / i to the list's score now and takes U_i c_g t off the scaled survival, which
is worth at most U_i c_g t / (i + 1) below rank i (the score of a tail per unit of reach
is at most 1 / (i + 1)); so the better list sets each v to its largest value, min(x, p)
= p x for binary x (one-hot: one v can be positive and the sum row caps it at p), and
the other list sets each v to its smallest, max(0, p + x - 1) = p x.  Hence the
maximum over integral x of the model is the largest difference.  The LP relaxation is a
McCormick one (weaker per node than the state expansion's) but the model has
O(k G) rows instead of O(k^2): at k = 100 branch and bound runs far faster
(docs/explanation/err-rr.md#compact-err-rr-model).  A list is
cut where U_i < 1e-13, as above (model.bound_slack).  Scaling p by U_i keeps every
matrix coefficient among 1, -1 and the c_g; the tiny reaches only reach the objective.

Size per list of depth k, p partial classes open to unjudged documents,
everything unjudged: sum_{i<=k} C(i - 1 + p, p) = C(k + p, p + 1) states, one arc
per state and open class.  RR (p = 0): k states.  ERR, G = 1, or any G reduced
(p = 1): k(k+1)/2, i.e. 55 at k = 10 and 210 at k = 20.  ERR with every grade,
default gains, G = 3 (p = 3): C(k + 3, 4), i.e. 715 at k = 10 and 8,855 at k = 20.
Judged documents cut this down: only unjudged ones branch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from math import comb

from ..core.deadlines import check_time
from .base import CompactModel, DirectModel, Formulation, ModelSize, grade_variables, register
from ..modeling import (binaries, continuous, direction_sign, expression, fix, grade_indicator, index, new_model,
                        objective, rows)

STOPPED = None  # the "state" after a stopping class: nothing below counts
NEGLIGIBLE_REACH = 1e-13  # states reached with less probability are treated as stopped (see build)


@dataclass(frozen=True)
class StopClass:
    """Grades a user stops at with the same probability ``stop`` (c)."""

    label: str
    stop: float
    grades: tuple[int, ...]


def stop_classes(instance) -> list[StopClass]:
    metric, grading = instance.metric, instance.grading

    def stop_probability(grade):
        if metric.family == "RR":
            return 1.0 if metric.is_relevant(grade) else 0.0
        return metric.gain(grade, grading)

    grades_by_stop: dict[float, list[int]] = {}
    for grade in range(instance.max_grade + 1):
        grades_by_stop.setdefault(stop_probability(grade), []).append(grade)
    return [StopClass("g" + ",".join(map(str, grades)), stop, tuple(grades))
            for stop, grades in grades_by_stop.items()]


class CascadeStates:
    """The reachable states of one list's cascade, rank by rank (pure Python, no model)."""

    def __init__(self, instance, name: str, ranking: tuple, classes: list[StopClass], open_classes: list[int]):
        self.name, self.ranking, self.classes, self.open_classes = name, ranking, classes, open_classes
        self.partial = [o for o, cls in enumerate(classes) if cls.stop not in (0.0, 1.0)]
        self.class_of_judged = {}
        for doc in ranking:
            if doc in instance.judgments:
                grade = instance.grading.cap(max(instance.judgments[doc], 0))
                self.class_of_judged[doc] = next(o for o, cls in enumerate(classes) if grade in cls.grades)
        self.before: list[list[tuple]] = []  # before[i - 1]: states reachable just before rank i
        states = [(0,) * len(self.partial)]
        for doc in ranking:
            check_time()  # up to O(k^(p+1)) states in all: checked rank by rank (limits.py)
            self.before.append(states)
            successors = (self.next_state(n, o) for n in states for o in self.classes_at(doc))
            states = [n for n in dict.fromkeys(successors) if n is not STOPPED]

    def classes_at(self, doc) -> list[int]:
        judged = self.class_of_judged.get(doc)
        return self.open_classes if judged is None else [judged]

    def next_state(self, n: tuple, o: int):
        stop = self.classes[o].stop
        if stop == 1.0:
            return STOPPED
        if stop == 0.0:
            return n
        counts = list(n)
        counts[self.partial.index(o)] += 1
        if self.reach(tuple(counts)) < NEGLIGIBLE_REACH:
            return STOPPED  # everything below is worth less than the reach (ERR of a tail <= 1)
        return tuple(counts)

    def reach(self, n: tuple) -> float:
        """Probability the user gets to a state n: prod_o (1 - c_o)^{n_o}."""
        return math.prod((1.0 - self.classes[o].stop) ** count for o, count in zip(self.partial, n))

    def ranks(self):
        """(rank i, document, its states n) for every rank that can still be reached."""
        return [(i, doc, states) for i, (doc, states) in enumerate(zip(self.ranking, self.before), start=1) if states]


def state_label(n: tuple) -> str:
    return "n(" + ",".join(map(str, n)) + ")"


@register
class Cascade(Formulation, DirectModel, CompactModel):
    families = ("RR", "ERR")
    examples = ("ERR@10", "RR@10")
    title = "state-expanded cascade (RR, ERR)"
    continuous = frozenset({"compact"})  # models with continuous variables: HiGHS only

    def __init__(self, extreme_grades: bool = True):
        self.extreme_grades = extreme_grades

    def unjudged_grades(self, instance) -> tuple[int, ...]:
        """Grades an unjudged document is given in the model (see the reduction above)."""
        if self.extreme_grades and not instance.limits:
            return (0, instance.max_grade)
        return tuple(range(instance.max_grade + 1))

    def strategies(self, instance):
        return ("direct", "compact")

    def model_size(self, instance, strategy):
        """Direct: the states, at most C(u + p, p) before a rank with u unjudged documents above it (p
        partial classes open to them), each with its s, an arc t per open class and their rows.
        Compact: a few variables and rows per rank and grade."""
        if strategy != "direct":
            ranks = len(instance.a) + len(instance.b)
            return ModelSize(12 * ranks * instance.max_grade + 3 * grade_variables(instance),
                             what=f"{ranks:,} ranks x {instance.max_grade:,} grades")
        if self.extreme_grades and not instance.limits:  # unjudged documents at grade 0 or G only
            metric, grading = instance.metric, instance.grading
            top = (1.0 if metric.is_relevant(instance.max_grade) else 0.0) if metric.family == "RR" \
                else metric.gain(instance.max_grade, grading)
            stops = {0.0, top}
        else:
            stops = {cls.stop for cls in stop_classes(instance)}
        partial = sum(1 for stop in stops if stop not in (0.0, 1.0))
        states = 0
        for ranking in (instance.a, instance.b):
            unjudged_above = 0
            for doc in ranking:
                states += comb(unjudged_above + partial, partial)
                unjudged_above += doc not in instance.judgments
        return ModelSize(states * (3 + 4 * len(stops)) + 3 * grade_variables(instance),
                         what=f"{states:,} cascade states")

    def build_direct(self, instance, direction):
        m = new_model(instance, direction, "state-expanded cascade MILP")
        classes, grades = stop_classes(instance), self.unjudged_grades(instance)
        for (doc, grade), var in m.x.items():
            if grade not in grades:
                fix(var, 0)
        open_classes = [o for o, cls in enumerate(classes) if set(cls.grades) & set(grades)]
        cascades = [CascadeStates(instance, "A", instance.a, classes, open_classes),
                    CascadeStates(instance, "B", instance.b, classes, open_classes)]

        # -- index sets ---------------------------------------------------------
        states, arcs, leaving, agreeing = [], [], [], []
        for cascade in cascades:
            X = cascade.name
            for i, doc, at_rank in cascade.ranks():
                states += [(X, i, state_label(n)) for n in at_rank]
                if doc in cascade.class_of_judged:
                    continue
                leaving += [(X, i, state_label(n)) for n in at_rank]
                agreeing += [(X, i, classes[o].label) for o in open_classes]
                arcs += [(X, i, state_label(n), classes[o].label) for n in at_rank for o in open_classes]
        STATES = index(m, "STATES", states, doc="(list X, rank i, reachable state n)", dimen=3)
        ARCS = index(m, "ARCS", arcs, doc="(X, i, n, stop class o) at ranks holding an unjudged document", dimen=4)

        # -- variables ----------------------------------------------------------
        s = binaries(m, "s", STATES, doc="s[X,i,n] = 1 iff X's cascade is in state n before rank i")
        t = binaries(m, "t", ARCS, doc="t[X,i,n,o] = s[X,i,n] * [document at rank i in class o]")
        for cascade in cascades:
            if cascade.ranking:
                fix(s[cascade.name, 1, state_label(cascade.before[0][0])], 1)

        def arc(cascade, i, doc, n, o):
            """The occupancy of the arc (i, n, o): t, or s itself at a judged rank."""
            if doc in cascade.class_of_judged:
                return s[cascade.name, i, state_label(n)]
            return t[cascade.name, i, state_label(n), classes[o].label]

        # -- constraints ----------------------------------------------------------
        def class_indicator(doc, o):
            return sum(grade_indicator(m, instance, doc, g) for g in classes[o].grades)

        by_name = {cascade.name: cascade for cascade in cascades}
        label_to_class = {cls.label: o for o, cls in enumerate(classes)}
        rows(m, "leave_state", {(X, i, n): sum(t[X, i, n, classes[o].label] for o in open_classes) == s[X, i, n]
                                for X, i, n in leaving},
             doc="an occupied state leaves rank i along exactly one arc")
        rows(m, "class_agrees", {(X, i, o): sum(t[X, i, state_label(n), o] for n in by_name[X].before[i - 1])
                                 <= class_indicator(by_name[X].ranking[i - 1], label_to_class[o])
                                 for X, i, o in agreeing},
             doc="only the arc of the class the document at rank i is in can be used")

        inflow = {}  # (X, i + 1, n') -> arcs of rank i into n'
        for cascade in cascades:
            for i, doc, at_rank in cascade.ranks():
                for n in at_rank:
                    for o in cascade.classes_at(doc):
                        successor = cascade.next_state(n, o)
                        if successor is not STOPPED and i < len(cascade.ranking):
                            key = (cascade.name, i + 1, state_label(successor))
                            inflow.setdefault(key, []).append(arc(cascade, i, doc, n, o))
        rows(m, "flow", {(X, i, n): s[X, i, n] == sum(inflow[X, i, n]) for X, i, n in inflow},
             doc="the state before rank i is where the arcs of rank i - 1 lead")

        # -- objective ----------------------------------------------------------
        def score(cascade):
            return sum(classes[o].stop / i * cascade.reach(n) * arc(cascade, i, doc, n, o)
                       for i, doc, at_rank in cascade.ranks() for n in at_rank
                       for o in cascade.classes_at(doc) if classes[o].stop != 0.0)

        score_a = expression(m, "score_a", score(cascades[0]), doc="M(A) = sum (c_o / i) reach(n) t[A,i,n,o]")
        score_b = expression(m, "score_b", score(cascades[1]), doc="M(B), the same over B's arcs")
        objective(m, direction_sign(direction) * (score_a - score_b),
                  doc="maximise ERR (or RR) of the better list minus the other")
        # A cascade cut at a state of reach r < NEGLIGIBLE_REACH loses at most r (a tail's ERR is
        # at most 1) once per list, so each score is under-stated by less than that and the
        # model's maximum is within 2 * NEGLIGIBLE_REACH of the true one: the driver adds it
        # to the bound it reports.
        m.bound_slack = 2 * NEGLIGIBLE_REACH
        return m


    def build_compact(self, instance, direction):
        """The compact model of the docstring (strategy ``compact``)."""
        m = new_model(instance, direction, "compact cascade MILP (scaled survival)")
        classes, grades = stop_classes(instance), self.unjudged_grades(instance)
        for (doc, grade), var in m.x.items():
            if grade not in grades:
                fix(var, 0)
        stop = {g: cls.stop for cls in classes for g in cls.grades}
        stopping = [g for g in grades if g > 0 and stop[g] > 0.0]
        better = "A" if direction == "a" else "B"
        survival, stops, ranks, score = [], [], [], {"A": [], "B": []}
        for X, ranking in (("A", instance.a), ("B", instance.b)):
            reach, at = 1.0, (X, 1)  # U_i, and the rank whose p variable rank i shares
            survival.append(at)
            for i, doc in enumerate(ranking, start=1):
                if reach < NEGLIGIBLE_REACH:
                    break  # the rest of the list is worth less than reach (see the docstring)
                if doc in instance.judgments:
                    c = stop[instance.grading.cap(max(instance.judgments[doc], 0))]
                    if c > 0.0:
                        score[X].append((reach * c / i, ("p", at)))
                    reach *= 1.0 - c
                    continue
                stops += [(X, i, g) for g in stopping]
                score[X] += [(reach * stop[g] / i, ("v", (X, i, g))) for g in stopping]
                ranks.append((X, i, doc, at))
                if i < len(ranking):
                    at = (X, i + 1)
                    survival.append(at)
        SURVIVAL = index(m, "SURVIVAL", survival, dimen=2,
                         doc="(X, i): ranks that start a new scaled survival (rank 1 and below each unjudged rank)")
        STOPS = index(m, "STOPS", stops, dimen=3, doc="(X, i, g): unjudged rank i, grade g with c_g > 0")
        p = continuous(m, "p", SURVIVAL, (0, 1), doc="p[X,i] = P(reach rank i of X) / U_i")
        v = continuous(m, "v", STOPS, (0, 1), doc="v[X,i,g] = p[X,i] * x[d,g]: scaled P(stop at rank i on grade g)")
        for X in ("A", "B"):
            if (X, 1) in p:
                fix(p[X, 1], 1)
        below = {(X, i): (X, i + 1) for X, i, doc, at in ranks if (X, i + 1) in p}
        by_rank = {(X, i): (doc, at) for X, i, doc, at in ranks}
        rows(m, "survive", {(X, i): p[below[X, i]] == p[by_rank[X, i][1]] - sum(stop[g] * v[X, i, g] for g in stopping)
                            for X, i in below},
             doc="p[X,i+1] = p[X,i] - sum_g c_g v[X,i,g] below an unjudged rank")
        rows(m, "stop_needs_grade", {(X, i, g): v[X, i, g] <= m.x[by_rank[X, i][0], g]
                                     for X, i, g in stops if X == better},
             doc="better list: v[X,i,g] <= x[d,g]")
        rows(m, "stop_needs_reach", {(X, i): sum(v[X, i, g] for g in stopping) <= p[by_rank[X, i][1]]
                                     for X, i, doc, at in ranks if X == better},
             doc="better list: sum_g v[X,i,g] <= p[X,i]")
        rows(m, "stop_forced", {(X, i, g): v[X, i, g] >= p[by_rank[X, i][1]] + m.x[by_rank[X, i][0], g] - 1
                                for X, i, g in stops if X != better},
             doc="other list: v[X,i,g] >= p[X,i] + x[d,g] - 1")

        def total(X):
            return sum(weight * (p[key] if kind == "p" else v[key]) for weight, (kind, key) in score[X])

        score_a = expression(m, "score_a", total("A"), doc="M(A) = sum (U_i / i) (c v or c p)")
        score_b = expression(m, "score_b", total("B"), doc="M(B), the same over B")
        objective(m, direction_sign(direction) * (score_a - score_b),
                  doc="maximise ERR (or RR) of the better list minus the other")
        m.bound_slack = 2 * NEGLIGIBLE_REACH
        # HiGHS 1.14's presolve returns a wrong "optimal" answer on some of these models (a
        # 4-column one in tests/exact/test_exact_cascade.py::test_compact_model_presolve_case);
        # without presolve every oracle test agrees
        m.highs_options = {"presolve": "off"}
        return m

