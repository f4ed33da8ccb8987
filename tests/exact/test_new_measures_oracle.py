"""R@k, Rprec, Rprec@k, Success@k and SP@k (SPEC 3) against brute force, on many instances.

For each measure, on at least INSTANCES seeded random instances (graded, G = 1 or 2, partially
judged, judged relevant documents outside both lists, lists of different lengths, a third with a
relevance limit; tests/exact_cases.oracle_cases) and on both solvers: the exact MED and both ends
of the exact difference range equal the enumeration's, and each is certified (SPEC 5); on every
other instance so do both ends of the score range of list A.  The
cutoff and ``rel`` vary with the instance.  R@k is also solved by its second strategy (Dinkelbach),
so both of its models are checked.  Instances whose limit no assignment meets must be refused by
both.  At most 5 unjudged documents per instance keep the file fast (see --durations).
"""

from __future__ import annotations

import pytest

import medopt
from medopt.errors import MedoptError

from exact_cases import oracle_cases
from test_ranges import ends_agree

INSTANCES = 300  # checked per measure and solver (instances no assignment fits are not counted)
SOLVERS = ("highs", "cpsat")


MEASURES = {  # measure -> strategies checked besides the default
    "R@k": ("dinkelbach",),
    "Rprec": (),
    "Rprec@k": (),
    "Success@k": (),
    "SP@k": (),
}


def metric_for(measure: str, case, index: int) -> str:
    """The measure at the instance's cutoff; ``rel`` = 2 on every third graded instance."""
    family, _, cutoff = measure.partition("@")
    rel = "(rel=2)" if case.max_grade > 1 and index % 3 == 1 else ""
    return f"{family}{rel}" + (f"@{case.k}" if cutoff else "")


def check(measure: str, seed: int) -> dict:
    """Counts of instances checked per solver (and strategy)."""
    counts = {}
    for index, (case, limits) in enumerate(oracle_cases(seed=seed, count=3 * INSTANCES, max_unjudged=5)):
        if counts and min(counts.get(s, 0) for s in SOLVERS) >= INSTANCES:
            break
        name = metric_for(measure, case, index)
        # lists cut at the instance's k, so that every unjudged document is among the (at most 5) counted
        a, b = case.a[: case.k], case.b[: case.k]
        kwargs = dict(max_grade=case.max_grade, limits=limits)
        try:
            oracle = medopt.med(name, a, b, case.judgments, method="enumerate", **kwargs)
            oracle_range = medopt.difference_range(name, a, b, case.judgments, method="enumerate", **kwargs)
        except MedoptError:  # no assignment meets the limit: exact must say so too
            for solver in SOLVERS:
                with pytest.raises(MedoptError):
                    medopt.med(name, a, b, case.judgments, method="exact", solver=solver, **kwargs)
            continue
        assert oracle.certified and oracle_range.certified
        scored = index % 2 == 0
        if scored:
            try:
                oracle_score = medopt.score_range(name, a, case.judgments, method="enumerate", **kwargs)
            except MedoptError:  # the limit needs documents of B: A's range must be refused too
                with pytest.raises(MedoptError):
                    medopt.score_range(name, a, case.judgments, method="exact", **kwargs)
                scored = False
        assert oracle.value == pytest.approx(max(oracle_range.high, -oracle_range.low), abs=1e-12)
        for solver in SOLVERS:
            for strategy in ("auto", *MEASURES[measure]):
                context = (name, solver, strategy, case, limits)
                exact = medopt.med(name, a, b, case.judgments, method="exact", solver=solver, strategy=strategy,
                                   **kwargs)
                assert exact.value == pytest.approx(oracle.value, abs=1e-9), context
                assert exact.certified, (context, exact)
                ranged = medopt.difference_range(name, a, b, case.judgments, method="exact", solver=solver,
                                                 strategy=strategy, **kwargs)
                ends_agree(ranged, oracle_range, context)
                if scored:
                    ends_agree(medopt.score_range(name, a, case.judgments, method="exact", solver=solver,
                                                  strategy=strategy, **kwargs), oracle_score, context)
                key = solver if strategy == "auto" else f"{solver}/{strategy}"
                counts[key] = counts.get(key, 0) + 1
        kinds = (("graded", case.max_grade > 1), ("rel=2", "rel=2" in name), ("limit", bool(limits)),
                 ("score range", scored))
        for kind, holds in kinds:
            counts[kind] = counts.get(kind, 0) + holds
    return counts


@pytest.mark.parametrize("measure", list(MEASURES))
def test_exact_equals_enumeration_on_many_instances(measure):
    counts = check(measure, seed=2100 + list(MEASURES).index(measure))
    print(f"\n{measure}: instances checked {counts}")
    kinds = {kind: counts.pop(kind) for kind in ("graded", "rel=2", "limit", "score range")}
    assert min(kinds.values()) >= INSTANCES // 10, kinds
    assert set(counts) == {s if t == "auto" else f"{s}/{t}" for s in SOLVERS for t in ("auto", *MEASURES[measure])}
    assert all(count >= INSTANCES for count in counts.values()), counts


@pytest.mark.parametrize("measure", ["Success@k", "SP@k", "R@k"])
def test_the_pyomo_model_has_the_optimum_of_the_matrix_model(measure):
    """The solver runs the models written with modeling.LinearModel (direct_matrix, dinkelbach_matrix);
    the catalogue's LP files come from the Pyomo build of the same code.  Both have the same optimum,
    per direction, on reduced instances with limits (R@k: N - lam R at two values of lam)."""
    from medopt.exact.common import Clock
    from medopt.exact.dinkelbach import dinkelbach_matrix
    from medopt.exact.direct import solve_direct
    from medopt.formulations import formulation_for
    from medopt.core.instance import build_instance
    from medopt.core.reductions import reduce
    from medopt.solvers import solve
    from pyomo.common.errors import InfeasibleConstraintException

    compared = 0
    for index, (case, limits) in enumerate(oracle_cases(seed=77, count=40, max_unjudged=6)):
        instance = build_instance(metric_for(measure, case, index), case.a, case.b, case.judgments,
                                  max_grade=case.max_grade, limits=limits)
        formulation = formulation_for(instance.metric)
        for direction in "ab":
            reduced = reduce(instance, direction)
            if measure != "R@k":
                try:
                    matrix = solve_direct(formulation, reduced, direction, "highs", Clock(None))
                except MedoptError:  # no assignment meets the limit: the Pyomo model must say so too
                    with pytest.raises(MedoptError):
                        solve_direct(formulation, reduced, direction, "highs", Clock(None), build=formulation.build)
                    continue
                pyomo = solve_direct(formulation, reduced, direction, "highs", Clock(None), build=formulation.build)
                assert matrix.proven and pyomo.proven
                assert pyomo.value == pytest.approx(matrix.value, abs=1e-9), (instance, direction)
                compared += 1
                continue
            try:
                models = (formulation.dinkelbach_matrix(reduced, direction),)
            except InfeasibleConstraintException:  # a limit no assignment meets, on constants only
                with pytest.raises(InfeasibleConstraintException):
                    dinkelbach_matrix(formulation, reduced, direction)
                continue
            models += (dinkelbach_matrix(formulation, reduced, direction),)
            for lam in (0.0, 0.37):
                optima = []
                for model in models:
                    model.matrix.c = model.numerator - lam * model.denominator
                    model.matrix.offset = model.numerator_constant - lam * model.denominator_constant
                    outcome = solve(model.matrix, "highs")
                    optima.append(None if outcome.status == "infeasible" else outcome.objective)
                assert (optima[0] is None) == (optima[1] is None), (instance, direction, lam)
                if optima[0] is not None:
                    assert optima[0] == pytest.approx(optima[1], abs=1e-9), (instance, direction, lam)
                    compared += 1
    assert compared >= 60
