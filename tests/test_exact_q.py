"""Exact MED for the Q-measure (profile enumeration) against brute-force enumeration.

Every instance is solved with both backends; instances are kept small (few
unjudged documents) because each profile case is one MILP per direction.
"""

import pytest

import medopt
from medopt.errors import MedoptError
from medopt.formulations import formulation_for
from medopt.instance import RelevanceLimit, build_instance
from medopt.random_instances import random_instances

SOLVERS = ("highs", "cpsat")
GAINS = {0: 0.0, 1: 0.25, 2: 0.75}


def check(metric, checked, **kwargs):
    """Exact equals enumeration (or both find no assignment) for both solvers."""
    try:
        oracle = medopt.med(metric, **kwargs, method="enumerate")
    except MedoptError:
        oracle = None
    for solver in SOLVERS:
        if oracle is None:
            with pytest.raises(MedoptError):
                medopt.med(metric, **kwargs, method="exact", solver=solver)
            continue
        exact = medopt.med(metric, **kwargs, method="exact", solver=solver)
        assert abs(exact.value - oracle.value) <= 1e-9, (metric, solver, kwargs, exact, oracle)
        assert exact.certified, (metric, solver, kwargs, exact)
    checked.append(metric)


def test_binary_judgments():
    checked = []
    for n, case in enumerate(random_instances(seed=101, count=146, max_grade=1, max_unjudged=4)):
        metric = (f"Q@{case.k}", f"Q(beta=0.5)@{case.k}")[n % 2]
        check(metric, checked, **case.as_kwargs())
    assert len(checked) == 146


def test_graded_judgments():
    checked = []
    for n, case in enumerate(random_instances(seed=102, count=64, max_grade=2, max_unjudged=3)):
        metric = (f"Q@{case.k}", f"Q(rel=2)@{case.k}", f"Q(beta=0.5)@{case.k}", f"Q(beta=2.0,rel=2)@{case.k}")[n % 4]
        gains = GAINS if n % 3 == 2 else None
        check(metric, checked, **case.as_kwargs(), gains=gains)
    assert len(checked) == 64


def test_without_cutoff():
    checked = []
    for n, case in enumerate(random_instances(seed=103, count=50, max_unjudged=3)):
        kwargs = case.as_kwargs() | {"a": case.a[: case.k], "b": case.b[: case.k]}  # bound the unjudged docs
        check(("Q", "Q(beta=0.5)")[n % 2], checked, **kwargs)
    assert len(checked) == 50


def limits_for(n, judgments):
    """Side constraints relative to the judged counts J_g, so that most bind and few are infeasible."""
    j1, j2 = (sum(1 for g in judgments.values() if g >= grade) for grade in (1, 2))
    return [
        [RelevanceLimit(grade=1, high=j1 + 1)],
        [RelevanceLimit(grade=1, high=j1 + 2)],
        [RelevanceLimit(grade=1, low=j1 + 2)],
        [RelevanceLimit(grade=2, high=j2)],  # no unjudged document of grade 2 (a constant when G = 1)
        [RelevanceLimit(grade=1, low=j1 + 1, high=j1 + 3), RelevanceLimit(grade=2, low=j2 + 1)],
        [RelevanceLimit(grade=3, high=0)],  # above G: a constant count
    ][n % 6]


def test_relevance_limits():
    checked = []
    cases = list(random_instances(seed=104, count=25, max_grade=1, max_unjudged=4)) + list(
        random_instances(seed=105, count=25, max_grade=2, max_unjudged=3))
    for n, case in enumerate(cases):
        metric = (f"Q@{case.k}", f"Q(rel=2)@{case.k}" if case.max_grade == 2 else "Q")[n % 2]
        check(metric, checked, **case.as_kwargs(), limits=limits_for(n, case.judgments))
    assert len(checked) == 50
    a, b = ["d1", "d2", "d3"], ["d3", "d4", "d1"]
    with pytest.raises(MedoptError):  # infeasible limits: every case is skipped or infeasible
        medopt.med("Q@3", a, b, {"x": 1}, limits=[RelevanceLimit(grade=1, high=0)], method="exact")
    check("Q@3", checked, a=a, b=b, judgments={"x": 1}, limits=[RelevanceLimit(grade=1, high=1)])  # R = 1 only


def test_edge_cases():
    checked = []
    a, b = ["d1", "d2", "d3"], ["d3", "d4", "d1"]
    check("Q@3", checked, a=a, b=b, judgments={"d1": 1, "d2": 0, "d3": 1, "d4": 0})       # nothing unjudged
    check("Q@3", checked, a=a, b=b, judgments={})                                          # nothing judged
    check("Q(rel=3)@3", checked, a=a, b=b, judgments={"d1": 2}, max_grade=2)               # R = 0 always
    check("Q@3", checked, a=a, b=b, judgments={"d1": 0, "x": 0})                          # R = 0 reachable
    check("Q@5", checked, a=a, b=[], judgments={"d2": 1})                                  # one empty list
    check("Q@4", checked, a=a, b=b, judgments={"d4": 2, "x": 2}, max_grade=2, pad="free")  # padded to k
    check("Q@3", checked, a=a, b=b, judgments={"d2": -1, "x": 1})                          # negative grade
    check("Q@3", checked, a=a, b=b, judgments=dict.fromkeys(a + b, 0))                     # R = 0, nothing unjudged
    assert len(checked) == 8


def test_cases_and_model_structure():
    instance = build_instance("Q@3", ["d1", "d2", "d3"], ["d3", "d2", "d1"], {}, max_grade=1)
    formulation = formulation_for(instance.metric)
    assert formulation.ratio and formulation.strategies == ("enumerate",)
    cases = list(formulation.cases(instance))
    assert [c.fix["R"] for c in cases] == [0, 1, 2, 3]  # G = 1: one case per R
    model = formulation.build(instance, "a", case=cases[2])
    assert len(model.y) == 3  # G = 1: the reversed list reuses A's three pair products
    graded = build_instance("Q@3", ["d1", "d2", "d3"], ["d3", "d2", "d1"], {"x": 2}, max_grade=2)
    profiles = [c.fix["counts"] for c in formulation_for(graded.metric).cases(graded)]
    # C_1 in 1..4 (R, exact), C_2 in 1..3 capped at L = 3, U_2 <= U_1: 4 + 3 + 2 = 9 reachable profiles
    assert len(profiles) == 9 and len(set(profiles)) == 9
