"""Exact MED for RR and ERR (the state-expanded cascade and the compact model) against
brute-force enumeration.

Random instances compared with enumerate, per family: RR@k 350 (220 + 40 with
limits + 50 with rel=2 + 40 states model on HiGHS), RR 350, ERR@k 446 (220 + 40 + 90
explicit gains + 40 intermediate grade + 16 unreduced model + 40 states on HiGHS),
ERR 406; half on HiGHS (default strategy there: the compact model), half on CP-SAT
(the state expansion), except the intermediate-grade test (HiGHS only).
"""

import itertools
import random

import pyomo.environ as pyo
import pytest

import medopt
from medopt.errors import MedoptError
from medopt.formulations import REGISTRY
from medopt.formulations.cascade import Cascade
from medopt.core.reductions import reduce
from medopt.core.instance import RelevanceLimit, build_instance
from medopt.synthetic.random_instances import random_instances
from medopt.solvers.backends import compile_model, solve

FAMILIES = ["RR@{k}", "RR", "ERR@{k}", "ERR"]
SOLVERS = ["highs", "cpsat"]
PER_FAMILY_AND_SOLVER = 110  # with the tests below, at least 300 random instances per family


def seed_of(*parts) -> int:
    return sum(ord(c) * (i + 1) for i, c in enumerate("/".join(parts))) % 100_000


def check_against_enumeration(metric, case, solver, strategy="auto", **options):
    """Exact equals enumerate (both certified); returns the exact result."""
    exact = medopt.med(metric, **case.as_kwargs(), method="exact", solver=solver, strategy=strategy, **options)
    oracle = medopt.med(metric, **case.as_kwargs(), method="enumerate", **options)
    assert abs(exact.value - oracle.value) <= 1e-9, (metric, solver, case, options, exact, oracle)
    assert exact.certified and exact.status == "optimal", (metric, solver, case, exact)
    return exact


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("family", FAMILIES)
def test_exact_equals_enumeration(family, solver):
    grades_seen, shorter_than_k = set(), 0
    for case in random_instances(seed=seed_of(family, solver), count=PER_FAMILY_AND_SOLVER):
        check_against_enumeration(family.format(k=case.k), case, solver)
        grades_seen.add(case.max_grade)
        shorter_than_k += min(len(case.a), len(case.b)) < case.k
    assert grades_seen == {1, 2} and shorter_than_k > 0


@pytest.mark.parametrize("family", FAMILIES)
def test_state_model_on_highs(family):
    """HiGHS defaults to the compact model: the state expansion (strategy 'direct') is pinned here."""
    for case in random_instances(seed=seed_of(family, "states"), count=40):
        exact = check_against_enumeration(family.format(k=case.k), case, "highs", strategy="direct")
        assert exact.details["strategy"] == "direct"


def test_compact_model_presolve_case():
    """HiGHS 1.14's presolve answered 0.2392578125 ("optimal") on this compact model; the
    maximum is 0.25390625 (d7 at grade 0).  The compact model runs HiGHS without presolve."""
    instance = build_instance("ERR@6", ["d4", "d2", "d7", "d1"], ["d3", "d4", "d2", "d7"],
                              {"d2": 2, "d3": 0, "d4": 1}, max_grade=2)
    outcome = solve(compile_model(REGISTRY["ERR"].build_compact(reduce(instance, "a"), "a")), "highs")
    assert outcome.status == "optimal" and outcome.objective == pytest.approx(0.25390625, abs=1e-12)
    result = medopt.med("ERR@6", instance.a, instance.b, instance.judgments, max_grade=2, method="exact")
    assert result.certified and result.value == pytest.approx(0.25390625, abs=1e-12)


def test_cpsat_refuses_the_compact_model():
    with pytest.raises(MedoptError, match="continuous variables"):
        medopt.med("ERR@3", ["d1", "d2"], ["d2", "d1"], {}, method="exact", solver="cpsat", strategy="compact")


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("gains", [
    {0: 0, 1: 0.25, 2: 0.75},   # Tan & Clarke
    {0: 0, 1: 0.5, 2: 1.0},     # grade 2 stops the user for sure
    {1: 0.4, 2: 0.4},           # two grades, one stop class
])
def test_err_with_explicit_gains(gains, solver):
    for case in random_instances(seed=seed_of(str(gains), solver), count=15, max_grade=2):
        for family in ("ERR@{k}", "ERR"):
            check_against_enumeration(family.format(k=case.k), case, solver, gains=gains)


@pytest.mark.parametrize("solver", SOLVERS)
def test_rr_with_rel_parameter(solver):
    for case in random_instances(seed=seed_of("rel", solver), count=25, max_grade=2):
        check_against_enumeration(f"RR(rel=2)@{case.k}", case, solver)
        check_against_enumeration("RR(rel=2)", case, solver)


LIMITS = [
    [RelevanceLimit(grade=2, high=1)],
    [RelevanceLimit(grade=1, low=2)],
    [RelevanceLimit(grade=1, high=2)],
    [RelevanceLimit(grade=1, low=1, high=3), RelevanceLimit(grade=2, high=0)],
]


@pytest.mark.parametrize("solver", SOLVERS)
def test_relevance_limits(solver):
    checked = infeasible = 0
    cases = random_instances(seed=seed_of("limits", solver), count=80, max_grade=2)
    for j, case in enumerate(cases):
        family, limits = FAMILIES[j % 4].format(k=case.k), LIMITS[(j // 4) % len(LIMITS)]
        try:
            medopt.med(family, **case.as_kwargs(), limits=limits, method="enumerate")
        except MedoptError:
            infeasible += 1
            with pytest.raises(MedoptError, match="relevance limits"):
                medopt.med(family, **case.as_kwargs(), limits=limits, method="exact", solver=solver)
            continue
        exact = check_against_enumeration(family, case, solver, limits=limits)
        instance = build_instance(family, case.a, case.b, case.judgments, max_grade=case.max_grade, limits=limits)
        assert instance.satisfies_limits(exact.assignment), (family, case, limits, exact.assignment)
        checked += 1
    assert checked >= 40 and infeasible > 0


def best_over_grades(instance, grades):
    """Brute-force MED when unjudged documents may only take ``grades``."""
    values = (max(instance.differences(assignment).values())
              for combo in itertools.product(grades, repeat=len(instance.unjudged))
              for assignment in [dict(zip(instance.unjudged, combo))] if instance.satisfies_limits(assignment))
    return max(values, default=float("-inf"))


def test_limits_can_make_an_intermediate_grade_optimal():
    """Without limits only grades 0 and G matter for ERR (Tan & Clarke); with a limit
    on the top grade the optimum may need grade 1, and the model finds it."""
    limits = [RelevanceLimit(grade=2, high=1)]
    needs_grade_one = feasible = 0
    for case in random_instances(seed=5, count=40, max_grade=2):
        metric = f"ERR@{case.k}"
        instance = build_instance(metric, case.a, case.b, case.judgments, max_grade=2, limits=limits)
        try:
            exact = check_against_enumeration(metric, case, "highs", limits=limits)
        except MedoptError:
            continue
        feasible += 1
        if exact.value > best_over_grades(instance, (0, 2)) + 1e-9:
            needs_grade_one += 1
            assert 1 in exact.assignment.values()
    assert feasible >= 15 and needs_grade_one >= 5, (feasible, needs_grade_one)


@pytest.mark.parametrize("solver, compact", [("highs", False), ("cpsat", False), ("highs", True)])
def test_model_of_every_grade_without_the_reduction(solver, compact):
    """Cascade(extreme_grades=False) models grades 1..G-1 too; same optimum as enumerate."""
    every_grade = Cascade(extreme_grades=False)
    build = every_grade.build_compact if compact else every_grade.build
    for case in random_instances(seed=seed_of("every grade", solver), count=8, max_grade=2):
        for family in ("ERR@{k}", "ERR"):
            metric = family.format(k=case.k)
            instance = build_instance(metric, case.a, case.b, case.judgments, max_grade=2)
            outcomes = [solve(compile_model(build(instance, d)), solver) for d in "ab"]
            assert all(o.status == "optimal" for o in outcomes)
            oracle = medopt.med(metric, **case.as_kwargs(), method="enumerate")
            assert abs(max(o.objective for o in outcomes) - oracle.value) <= 1e-9, (metric, case)
            assert max(o.bound for o in outcomes) <= oracle.value + 1e-9


@pytest.mark.parametrize("compact", [False, True])
@pytest.mark.parametrize("extreme_grades", [True, False])
def test_model_equals_metric_for_every_assignment(extreme_grades, compact):
    """Fix x to a random assignment: the cascade is forced (the compact model's LP in p and v
    settles on the true cascade, the exactness argument of the docstring), the objective is
    M(X) - M(Y) in both directions."""
    formulation, rng = Cascade(extreme_grades=extreme_grades), random.Random(3)
    for case, direction in zip(random_instances(seed=17, count=40), "ab" * 20):
        for family in ("RR@{k}", "ERR"):
            instance = build_instance(family.format(k=case.k), case.a, case.b, case.judgments,
                                      max_grade=case.max_grade)
            grades = formulation.unjudged_grades(instance)
            assignment = {d: rng.choice(grades) for d in instance.unjudged}
            model = (formulation.build_compact if compact else formulation.build)(instance, direction)
            for (doc, grade), var in model.x.items():
                var.fix(1 if assignment[doc] == grade else 0)
            outcome = solve(compile_model(model), "highs")
            assert outcome.status == "optimal"
            assert abs(outcome.objective - instance.difference(assignment, direction)) <= 1e-12, (family, case)


@pytest.mark.parametrize("solver", SOLVERS)
def test_edge_cases(solver):
    def exact(metric, a, b, judgments=None, **options):
        result = medopt.med(metric, a, b, judgments, method="exact", solver=solver, **options)
        assert result.certified
        return result.value

    assert exact("RR", ["d1"], []) == 1.0                                        # one empty list
    assert exact("ERR@3", ["d1", "d2"], ["d2", "d1"], {"d1": 1, "d2": 0}) == pytest.approx(0.25)  # all judged
    assert exact("RR@5", ["d1", "d2"], ["d2", "d1"]) == pytest.approx(0.5)       # Tan & Clarke's MED(RR) = 0.5
    # a judged document that stops the user for sure: nothing below it counts
    stop_first = exact("ERR", ["j", "u1", "u2"], ["u1"], {"j": 2}, max_grade=2, gains={1: 0.5, 2: 1.0})
    assert stop_first == pytest.approx(1.0)
    padded = medopt.med("ERR@3", ["d1"], ["d2"], {}, pad="free", method="exact", solver=solver)
    assert padded.value == pytest.approx(medopt.med("ERR@3", ["d1"], ["d2"], {}, pad="free", method="enumerate").value)


def test_model_reads_like_the_math():
    instance = build_instance("ERR@3", ["d1", "d2", "d3"], ["d3", "d4"], {"d2": 1}, max_grade=1)
    model = REGISTRY["ERR"].build(instance, "a")
    names = {c.local_name for c in model.component_objects((pyo.Var, pyo.Constraint))}
    assert {"x", "s", "t", "leave_state", "class_agrees", "flow"} <= names
    # A: states before rank 1, 2, 3 are {0}, {0, 1}, {1, 2} (d2 is judged relevant); B: {0}, {0, 1}
    assert len(model.s) == (1 + 2 + 2) + (1 + 2)
    assert all(component.doc for component in model.component_objects((pyo.Var, pyo.Constraint)))
