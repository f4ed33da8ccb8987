"""The solver cutoff (backends.solve(cutoff=...)): a model proved unable to beat the cutoff
reports the cutoff (+ CUTOFF_SLACK) as its bound, never less than its true maximum; a model
that can beat it still returns its true maximum.  Pinned on random instances of every
directly solved family, with relevance limits, on both solvers."""

import math

import pytest

from medopt.formulations import formulation_for
from medopt.core.instance import build_instance
from medopt.solvers.backends import CUTOFF_SLACK, compile_model, solve
from exact_cases import oracle_cases

METRICS = ["DCG@{k}", "RBP(p=0.8)", "SSP@{k}", "RR@{k}", "ERR@{k}"]


@pytest.mark.parametrize("solver", ["highs", "cpsat"])
@pytest.mark.parametrize("template", METRICS)
def test_cutoff_keeps_the_maximum(template, solver):
    checked = 0
    for case, limits in oracle_cases(seed=len(template) * 31 + len(solver), count=30, max_unjudged=8):
        instance = build_instance(template.format(k=case.k), case.a, case.b, case.judgments,
                                  max_grade=case.max_grade, limits=limits)
        formulation = formulation_for(instance.metric)
        for direction in ("a", "b"):
            matrix = compile_model(formulation.build(instance, direction)) if instance.unjudged else None
            if matrix is None or not matrix.columns:
                continue
            plain = solve(matrix, solver)
            if plain.status == "infeasible":
                continue  # the limits admit no assignment: a cutoff must not be used then
            assert plain.status == "optimal"
            optimum = plain.objective
            for cutoff in (optimum + 0.5, optimum + 1e-3, optimum, optimum - 1e-3):
                outcome = solve(matrix, solver, cutoff=cutoff)
                assert outcome.status == "optimal"
                assert optimum - 1e-9 <= outcome.bound <= max(optimum, cutoff + CUTOFF_SLACK) + 1e-12
                if outcome.values is not None:
                    assert outcome.objective <= optimum + 1e-9
                    if cutoff < optimum - 1e-9:  # a solution beats the cutoff: the optimum is found
                        assert outcome.objective == pytest.approx(optimum, abs=1e-9)
            checked += 1
    assert checked >= 20


def test_cutoff_on_a_timed_out_solve_keeps_a_valid_bound():
    case, limits = next(oracle_cases(seed=5, count=1, max_unjudged=8))
    instance = build_instance(f"ERR@{case.k}", case.a, case.b, case.judgments, max_grade=case.max_grade)
    matrix = compile_model(formulation_for(instance.metric).build(instance, "a"))
    outcome = solve(matrix, "highs", time_limit=0.0, cutoff=0.25)
    assert outcome.status == "timeout" and math.isinf(outcome.bound)


def test_cpsat_stops_once_its_bound_proves_the_cutoff(monkeypatch):
    """The CP-SAT cutoff is a stop from the best-bound callback: it must fire on models whose
    bound falls below a cutoff before they are solved, and what it reports stays a valid bound."""
    from ortools.sat.python import cp_model
    stops = []
    original = cp_model.CpSolver.stop_search
    monkeypatch.setattr(cp_model.CpSolver, "stop_search", lambda self: (stops.append(1), original(self)))
    checked = 0
    for case, limits in oracle_cases(seed=77, count=40, k=12, max_grade=1, judged_fraction=0.2, max_unjudged=12):
        instance = build_instance(f"SSP@{case.k}", case.a, case.b, case.judgments, max_grade=case.max_grade)
        if len(instance.unjudged) < 6:
            continue
        matrix = compile_model(formulation_for(instance.metric).build(instance, "a"))
        optimum = solve(matrix, "highs").objective
        outcome = solve(matrix, "cpsat", cutoff=optimum + 0.05)
        assert outcome.status == "optimal"
        assert optimum - 1e-9 <= outcome.bound <= optimum + 0.05 + CUTOFF_SLACK
        checked += 1
    assert checked >= 10 and len(stops) >= 5
