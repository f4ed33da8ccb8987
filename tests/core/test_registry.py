"""Tests driven by the registries: every registered metric family, formulation and method is
checked here without being listed by hand, so a new one cannot skip the checks.

* each family declares itself completely (examples, references or why none, a proof for every
  reduction it claims) and has an exact formulation;
* every example metric of every family: the exact method equals brute-force enumeration on
  seeded random instances (graded, partially judged, with side constraints), on both solvers,
  and certifies; ``auto`` does too;
* every reduction a family declares keeps the maximum of each direction that can hold the MED;
* every reference a family declares is exercised by the cross-check tests, and nothing is
  cross-checked that the family does not declare;
* every method in the method registry runs through ``medopt.med`` on what it says it computes.
"""

from __future__ import annotations

import numpy as np
import pytest

import medopt
from medopt import methods
from medopt.errors import MedoptError
from medopt.exact.enumeration import enumerate_directions
from medopt.formulations import REGISTRY as FORMULATIONS
from medopt.core.instance import build_instance
from medopt.metrics import REGISTRY, Grading, Metric, Reduction, declared_reductions, parse_metric
from medopt.metrics.proofs import Proof
from medopt.core.reductions import reduce

from exact_cases import looped_best, oracle_cases
from test_reductions import reductions_keep_the_maximum

FAMILIES = sorted(REGISTRY)
EXAMPLES = [example for family in FAMILIES for example in REGISTRY[family].examples]
ORACLE_INSTANCES = 30  # per example metric and solver
PROVIDERS = {"pytrec_eval", "msmarco", "cwl_eval", "gdeval", "trec_eval"}


def seed_of(text: str) -> int:
    return sum(ord(c) * (i + 1) for i, c in enumerate(text)) % 100_000  # stable across runs (not hash())


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_declares_itself(family):
    cls = REGISTRY[family]
    assert cls.family == family and cls.doc
    assert cls.examples, f"{family}: declare example metrics (the registry-driven tests run them)"
    for example in cls.examples:
        metric = parse_metric(example)
        assert metric.family == family and parse_metric(str(metric)) == metric
    assert cls.references, f"{family}: declare its reference implementations, or {{'none': why}}"
    if "none" in cls.references:
        assert len(cls.references) == 1 and len(cls.references["none"]) > 20
    else:
        assert set(cls.references) <= PROVIDERS
    for fact, proof in declared_reductions(metric).items():
        assert isinstance(fact, Reduction) and isinstance(proof, str) and len(proof) > 80, (family, fact)
        assert isinstance(proof, Proof), f"{family}: the proof of {fact} must say for which signs it holds (Proof)"
    assert family in FORMULATIONS, f"{family}: no exact formulation registered"


def test_reductions_are_opt_in_and_never_inherited():
    assert Metric.reductions == {}

    class Unproved(type(parse_metric("AP@5"))):  # a new family built on AP, stating nothing
        family = "Unproved"

    assert declared_reductions(Unproved(cutoff=5)) == {}
    instance = build_instance(parse_metric("AP@3"), ["a", "b", "c"], ["c", "d"], {})
    unproved = build_instance(Unproved(cutoff=3), ["a", "b", "c"], ["c", "d"], {})
    assert reduce(instance, "a") is not instance
    assert reduce(unproved, "a") is unproved  # nothing fixed, no dominance rows


@pytest.mark.parametrize("solver", ["highs", "cpsat"])
@pytest.mark.parametrize("example", EXAMPLES)
def test_exact_equals_enumeration(example, solver):
    metric = parse_metric(example)
    checked = 0
    for case, limits in oracle_cases(seed=seed_of(example + solver), count=ORACLE_INSTANCES, k=metric.cutoff,
                                     max_unjudged=6):
        kwargs = dict(max_grade=case.max_grade, limits=limits)
        try:
            oracle = medopt.med(metric, case.a, case.b, case.judgments, method="enumerate", **kwargs)
        except MedoptError:  # no assignment meets the limits: exact must say so too
            with pytest.raises(MedoptError):
                medopt.med(metric, case.a, case.b, case.judgments, method="exact", solver=solver, **kwargs)
            continue
        exact = medopt.med(metric, case.a, case.b, case.judgments, method="exact", solver=solver, **kwargs)
        assert exact.value == pytest.approx(oracle.value, abs=1e-9), (example, case, limits)
        assert exact.certified and oracle.certified, (example, case, limits, exact)
        checked += 1
    assert checked >= ORACLE_INSTANCES // 2


@pytest.mark.parametrize("example", EXAMPLES)
def test_auto_is_exact_and_certified(example):
    metric = parse_metric(example)
    for case, limits in oracle_cases(seed=seed_of(example), count=6, k=metric.cutoff, max_unjudged=6):
        kwargs = dict(max_grade=case.max_grade, limits=limits)
        try:
            oracle = medopt.med(metric, case.a, case.b, case.judgments, method="enumerate", **kwargs)
        except MedoptError:
            continue
        auto = medopt.med(metric, case.a, case.b, case.judgments, **kwargs)
        assert auto.value == pytest.approx(oracle.value, abs=1e-9) and auto.certified, (example, case, auto)


@pytest.mark.parametrize("example", [e for e in EXAMPLES if declared_reductions(parse_metric(e))])
def test_declared_reductions_keep_the_maximum(example):
    metric = parse_metric(example)
    cases = oracle_cases(seed=seed_of(example) + 1, count=40, k=metric.cutoff, max_unjudged=6)
    assert reductions_keep_the_maximum(cases, lambda case: metric) > 5


def cross_checked() -> set:
    """(family, provider) pairs the cross-check test modules compare medopt's evaluator on."""
    ir_measures_cases = pytest.importorskip("test_metrics_ir_measures").CASES
    trec_eval = pytest.importorskip("test_metrics_trec_eval")
    pairs = {(parse_metric(metric).family, provider) for _, provider, metric, _, _ in ir_measures_cases}
    fixture = trec_eval.TREC_EVAL / "out.test.aq"  # every measure of it medopt maps is compared
    if not fixture.exists():
        pytest.skip(f"shared data absent: {fixture}")
    for name in trec_eval.read_trec_eval_output(fixture):
        metric = trec_eval.medopt_metric(name, 1)
        if metric is not None:
            pairs.add((parse_metric(metric).family, "trec_eval"))
    return pairs


def test_declared_references_are_the_cross_checked_ones():
    covered = cross_checked()
    declared = {(family, provider) for family in FAMILIES for provider in REGISTRY[family].references
                if provider != "none"}
    assert declared - covered == set(), "declared references no cross-check test compares"
    assert covered - declared == set(), "cross-checked against a reference the family does not declare"


@pytest.mark.parametrize("name", methods.method_names())
def test_every_method_runs_where_it_says_it_computes(name):
    method = methods.get(name)
    computed = [e for e in EXAMPLES if method.computes(parse_metric(e))]
    assert computed, f"method {name} computes none of the registered examples"
    for example in computed:
        result = medopt.med(example, ["d1", "d2", "d3", "d4"], ["d3", "d5", "d1"], {"d2": 1}, method=name)
        assert result.method == name and result.value >= 0
        oracle = medopt.med(example, ["d1", "d2", "d3", "d4"], ["d3", "d5", "d1"], {"d2": 1}, method="enumerate")
        assert result.value <= oracle.value + 1e-9  # exact or a lower bound, never above MED
    others = [e for e in EXAMPLES if not method.computes(parse_metric(e))]
    for example in others[:3]:
        with pytest.raises(MedoptError, match=name):
            medopt.med(example, ["d1", "d2"], ["d2", "d3"], {}, method=name)


@pytest.mark.parametrize("example", EXAMPLES)
def test_a_metric_scores_each_grading_with_its_own_tables(example):
    """The scorers keep a metric's gains per grade (and weights per depth) for the grading object they
    were given (metrics.base.table_of): a metric that has scored under other gradings scores as a new
    one, a grading equal to an earlier one but a new object too, and a pickled metric leaves them out."""
    import pickle

    ranking, other = ["a", "b", "c", "d", "e"], ["e", "c", "x", "a"]
    grades = {"a": 2, "c": 3, "x": 1, "y": 2}
    gradings = [Grading(3), Grading(1), Grading(5), Grading(3, {1: 1.0, 2: 4.0, 3: 9.0}), Grading(3)]
    used = parse_metric(example)
    for grading in gradings + gradings[::-1]:
        for docs in (ranking, other):
            assert used.score(docs, grades, grading) == parse_metric(example).score(docs, grades, grading), grading
    copied = pickle.loads(pickle.dumps(used))
    assert copied == used and "_tables" in used.__dict__ and "_tables" not in copied.__dict__
    assert copied.score(ranking, grades, gradings[0]) == used.score(ranking, grades, gradings[0])


@pytest.mark.parametrize("example", [e for e in EXAMPLES if not getattr(parse_metric(e), "characters", False)])
def test_a_score_reads_its_lists_grades_and_for_recall_the_collections_counts(example):
    """What the enumeration oracle's scores may be remembered under (exact/enumeration.ListScores): a
    list's score does not change when documents outside the list are renamed, nor, for a recall-based
    metric, when their grades are permuted among them, nor, for any other metric, when they change."""
    metric = parse_metric(example)
    rng = np.random.default_rng(seed_of(example))
    changed = 0
    for trial in range(60):
        top = int(rng.integers(1, 4))
        grading = Grading(top, {g: float(g * g + 1) for g in range(1, top + 1)} if trial % 4 == 3 else None)
        if metric.grading_problem(grading):
            continue
        ranking = [f"d{i}" for i in rng.permutation(8)[:int(rng.integers(1, 7))]]
        outside = [f"d{i}" for i in range(8) if f"d{i}" not in ranking] + ["x", "y", "z"]
        grades = {d: int(rng.integers(0, top + 1)) for d in ranking + outside if rng.random() < 0.8}
        score = metric.score(ranking, grades, grading)
        renamed = {(d if d in ranking else f"renamed-{d}"): g for d, g in grades.items()}
        assert metric.score(ranking, renamed, grading) == score
        others = [d for d in outside if d in grades]
        permuted = dict(grades) | dict(zip(others, rng.permutation([grades[d] for d in others]).tolist()))
        assert metric.score(ranking, permuted, grading) == score
        regraded = dict(grades) | {d: int(rng.integers(0, top + 1)) for d in outside}
        if not metric.recall_based:
            assert metric.score(ranking, regraded, grading) == score, (grades, regraded)
        changed += metric.score(ranking, regraded, grading) != score
    assert changed > 0 or not metric.recall_based, "a recall-based metric should read the collection's grades"


@pytest.mark.parametrize("example", [e for e in EXAMPLES if not getattr(parse_metric(e), "characters", False)])
def test_enumeration_is_every_assignments_differences(example):
    """The oracle's remembered scores (exact/enumeration.ListScores) change nothing: each direction's
    maximum and the assignment reaching it equal a loop that asks ``Instance.differences`` of every
    assignment, on graded, partially judged instances with relevance limits, RBP with its residual too."""
    metric = parse_metric(example)
    compared = 0
    for case, limits in oracle_cases(seed=seed_of(example) + 1, count=20, k=metric.cutoff, max_unjudged=6):
        residual = hasattr(metric, "tail_weight") and compared % 2 == 1
        instance = build_instance(metric, case.a, case.b, case.judgments, max_grade=case.max_grade,
                                  limits=limits, residual=residual)
        expected = looped_best(instance)
        if not expected:
            continue
        best, timed_out, _ = enumerate_directions(instance)
        assert not timed_out and best == expected, (example, case, limits)
        compared += 1
    assert compared >= 10
