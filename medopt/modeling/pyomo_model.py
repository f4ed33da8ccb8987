"""Building blocks shared by every MED model: the grade-assignment variables,
gains and relevance of a rank as linear expressions, and side constraints.

Variables.  For each unjudged document d of either list and each positive grade
g in 1..G there is one binary ``x[d, g]`` (1: d has grade g).  With G = 1 that is
one binary per document; with G > 1 the family is one-hot over grades with
grade 0 implicit: ``sum_g x[d, g] <= 1`` (constraint ``one_grade``).  A document
in both lists has *one* set of variables, indexed by its id, so the two lists
can never disagree about it, with no equality constraints and half the variables.
Judged documents are constants (their capped grade), never variables.
"""

from __future__ import annotations

import time

from .pyomo_lazy import pyo  # pyomo.environ, loaded on first use

from ..core.instance import Instance, judged_count
from ..core.deadlines import Ticker


def direction_sign(direction: str) -> int:
    return 1 if direction == "a" else -1


def new_model(instance: Instance, direction: str, name: str) -> pyo.ConcreteModel:
    """Model with the sets and grade variables every formulation starts from."""
    m = pyo.ConcreteModel(name=f"MED[{instance.metric}] {name}, {'A over B' if direction == 'a' else 'B over A'}")
    m.build_started = time.perf_counter()  # compile_model predicts its own time from the build's
    m.UNJUDGED = pyo.Set(initialize=list(instance.unjudged), ordered=True, doc="unjudged documents of either top k")
    m.GRADES = pyo.RangeSet(1, instance.max_grade, doc="positive grades")
    m.x = pyo.Var(m.UNJUDGED, m.GRADES, domain=pyo.Binary, doc="x[d,g] = 1 iff document d gets grade g")
    if instance.max_grade > 1:
        m.one_grade = pyo.Constraint(m.UNJUDGED, rule=lambda m, d: sum(m.x[d, g] for g in m.GRADES) <= 1,
                                     doc="at most one positive grade per document (none: grade 0)")
    add_relevance_limits(m, instance)
    add_dominance(m, instance)
    return m


def add_dominance(m, instance: Instance) -> None:
    """Rank dominance (reductions.reduce): grade(d) >= grade(e) for each pair, written per
    threshold as  [grade(d) >= g] >= [grade(e) >= g]  for every g."""
    links = [(d, e, g) for d, e in instance.dominance for g in m.GRADES]
    if not links:
        return
    m.DOMINANCE = pyo.Set(initialize=links, dimen=3, ordered=True)
    m.dominance = pyo.Constraint(
        m.DOMINANCE, rule=lambda m, d, e, g: sum(m.x[d, h] for h in m.GRADES if h >= g)
        >= sum(m.x[e, h] for h in m.GRADES if h >= g),
        doc="rank dominance: d ranks higher in the better list and lower in the other, so grade(d) >= grade(e)")


def grade_indicator(m, instance: Instance, doc: str, grade: int):
    """1 if ``doc`` has exactly ``grade`` (a constant for judged documents)."""
    if doc in instance.judgments:
        return 1 if instance.grading.cap(max(instance.judgments[doc], 0)) == grade else 0
    if grade == 0:
        return 1 - sum(m.x[doc, g] for g in m.GRADES)
    return m.x[doc, grade]


def value_at(m, instance: Instance, doc: str, value_of_grade) -> object:
    """Linear expression for value_of_grade(grade(doc)), given value_of_grade(0) == 0."""
    if doc in instance.judgments:
        return value_of_grade(instance.judgments[doc])
    return sum(value_of_grade(g) * m.x[doc, g] for g in m.GRADES)


def gain_at(m, instance: Instance, doc: str):
    metric, grading = instance.metric, instance.grading
    return value_at(m, instance, doc, lambda g: metric.gain(g, grading))


def relevant_at(m, instance: Instance, doc: str):
    """Binary relevance b_d (grade >= rel) as a linear expression or constant."""
    return value_at(m, instance, doc, lambda g: 1 if instance.metric.is_relevant(g) else 0)


def count_at_least(m, instance: Instance, grade: int):
    """Documents of the collection with grade >= ``grade`` (judged ones anywhere + assigned ones)."""
    return judged_count(instance, grade) + sum(m.x[d, g] for d in m.UNJUDGED for g in m.GRADES if g >= grade)


def as_constraint(relation):
    """A relation that may have collapsed to a bool (all its terms constant) as a constraint rule value."""
    if relation is True:
        return pyo.Constraint.Feasible
    if relation is False:
        return pyo.Constraint.Infeasible
    return relation


def add_relevance_limits(m, instance: Instance) -> None:
    """Side constraints: low <= #documents with grade >= limit.grade <= high."""
    if not instance.limits:
        return
    m.LIMITS = pyo.Set(initialize=range(len(instance.limits)))

    def rule(m, i):
        limit = instance.limits[i]
        count = count_at_least(m, instance, limit.grade)
        if isinstance(count, int):  # every document judged
            return as_constraint(limit.low <= count and (limit.high is None or count <= limit.high))
        if limit.high is None:
            return count >= limit.low
        return pyo.inequality(limit.low, count, limit.high)

    m.relevance_limit = pyo.Constraint(m.LIMITS, rule=rule, doc="user limits on relevant documents per grade")


def binary_and(m, name: str, pairs: dict, doc: str, signs: dict | None = None) -> None:
    """y[p] = u[p] * v[p] for binary expressions u, v, linearised exactly:
    y <= u, y <= v, y >= u + v - 1 (exact because every factor is 0 or 1).

    With ``signs`` (the sign of y's coefficient in a maximised objective, y appearing
    nowhere else) only the side that binds is kept: a maximiser pushes a y with a
    positive coefficient up to min(u, v) = u v, so y <= u, y <= v suffice; one with a
    negative coefficient down to max(0, u + v - 1) = u v, so y >= u + v - 1 suffices.
    Every x keeps its true objective value at the best y and no y can exceed it."""
    keys = list(pairs)
    tick = Ticker()  # the rules below run once per product and row: the deadline is checked as they go

    def sign(k):
        tick()
        return signs[k] if signs is not None else 0

    y = pyo.Var(keys, domain=pyo.Binary, doc=doc)
    m.add_component(name, y)
    m.add_component(f"{name}_le_first", pyo.Constraint(
        keys, rule=lambda m, *k: y[k] <= pairs[k][0] if sign(k) >= 0 else pyo.Constraint.Skip,
        doc="product <= first factor"))
    m.add_component(f"{name}_le_second", pyo.Constraint(
        keys, rule=lambda m, *k: y[k] <= pairs[k][1] if sign(k) >= 0 else pyo.Constraint.Skip,
        doc="product <= second factor"))
    m.add_component(f"{name}_ge_both", pyo.Constraint(
        keys, rule=lambda m, *k: y[k] >= pairs[k][0] + pairs[k][1] - 1 if sign(k) <= 0 else pyo.Constraint.Skip,
        doc="product >= first + second - 1"))


def assignment_from(m, values: dict) -> dict:
    """doc -> grade from solved x values (VarData -> value)."""
    grades = {d: 0 for d in m.UNJUDGED}
    for (d, g), var in m.x.items():
        if values.get(var, 0) > 0.5:
            grades[d] = g
    return grades
