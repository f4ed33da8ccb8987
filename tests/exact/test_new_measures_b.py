"""Issue 21 (b): Moffat's self-normalised SN_DCG@k and SN_AP@k, and nDCG's ir_measures gain
parameters dcg=exp-log2 and gains={..}.

* exact = enumeration on seeded random instances (graded, partially judged, lists of different
  lengths, a third with a relevance limit; tests/exact_cases.py), on both solvers: MED and both
  ends of the difference range, every answer certified (SPEC 5, each range end on its own);
* every case model of the self-normalised formulation solved (no case settled by its bound);
* Moffat's worked examples; the metric strings and their errors; gains on the array fast path.

The evaluators are cross-checked against their references (ir_measures' providers) in
tests/metrics/test_metrics_ir_measures.py.
"""

from __future__ import annotations

import json
import math
import random

import pytest

import medopt
from medopt.metrics import resolve_max_grade
from medopt.batch.fastpath import med_rows
from medopt.batch.runset import columns_from_rankings, load_runset
from medopt.errors import MedoptError, MetricSyntaxError
from medopt.formulations import formulation_for
from medopt.core.instance import RelevanceLimit, build_instance
from medopt.metrics import parse_metric
from medopt.solvers import solve

from exact_cases import oracle_cases

MEASURES = ["SN_DCG@5", "SN_AP@5", "nDCG(dcg=exp-log2)@5", "nDCG(gains={1:2,2:5})@4"]
INSTANCES = 300  # checked per measure and solver (instances whose limits no assignment meets are extra)
SOLVERS = ("highs", "cpsat")


@pytest.mark.parametrize("text", MEASURES)
def test_exact_equals_enumeration_med_and_range_ends(text):
    metric = parse_metric(text)
    checked, refused = dict.fromkeys(SOLVERS, 0), 0
    cases = oracle_cases(seed=2100 + MEASURES.index(text), count=2 * INSTANCES, k=metric.cutoff, max_unjudged=5)
    for case, limits in cases:
        if min(checked.values()) >= INSTANCES:
            break
        kwargs = dict(max_grade=case.max_grade, limits=limits)
        try:
            oracle = medopt.difference_range(metric, case.a, case.b, case.judgments, method="enumerate", **kwargs)
        except MedoptError:  # no assignment meets the limits: exact must say so too
            with pytest.raises(MedoptError):
                medopt.med(metric, case.a, case.b, case.judgments, method="exact", **kwargs)
            refused += 1
            continue
        assert oracle.certified
        for solver in SOLVERS:
            context = (text, solver, case, limits)
            ends = medopt.difference_range(metric, case.a, case.b, case.judgments, method="exact", solver=solver,
                                           **kwargs)
            assert ends.low == pytest.approx(oracle.low, abs=1e-9), context
            assert ends.high == pytest.approx(oracle.high, abs=1e-9), context
            assert ends.low_certified and ends.high_certified, (context, ends)
            assert ends.low_bound <= ends.low + 1e-9 and ends.high_bound >= ends.high - 1e-9, context
            med = medopt.med(metric, case.a, case.b, case.judgments, method="exact", solver=solver, **kwargs)
            assert med.value == pytest.approx(max(oracle.high, -oracle.low), abs=1e-9), context
            assert med.certified and med.status == "optimal", (context, med)
            checked[solver] += 1
    assert min(checked.values()) >= INSTANCES, (checked, refused)


@pytest.mark.parametrize("text", ["SN_DCG@4", "SN_AP@4", "SN_DCG(dcg=exp-log2)@3"])
def test_every_case_model_is_exact(text):
    """Every case solved (no bound settles one): the case models alone give each direction's maximum,
    whatever its sign, on both solvers; and the case bounds are never below a case's optimum."""
    metric = parse_metric(text)
    formulation = formulation_for(metric)
    checked = 0
    for case, limits in oracle_cases(seed=77, count=12, k=None, max_unjudged=4):
        instance = build_instance(metric, case.a, case.b, case.judgments, max_grade=case.max_grade, limits=limits)
        try:
            oracle = medopt.difference_range(metric, case.a, case.b, case.judgments, method="enumerate",
                                             max_grade=case.max_grade, limits=limits)
        except MedoptError:
            continue
        for solver in SOLVERS:
            for direction, best in (("a", oracle.high), ("b", -oracle.low)):
                found = -float("inf")
                for bound, one in formulation.bounded_cases(instance, direction):
                    outcome = solve(formulation.build(instance, direction, case=one), solver)
                    if outcome.status == "infeasible":
                        continue
                    assert outcome.status == "optimal" and outcome.objective <= bound + 1e-9, (text, one, bound)
                    found = max(found, outcome.objective)
                assert found == pytest.approx(best, abs=1e-9), (text, solver, direction, case, limits)
        checked += 1
    assert checked >= 6


def test_a_list_with_nothing_relevant_is_a_case_of_its_own():
    """A list with nothing relevant in its top k scores 0 (a denominator of 0): the cases cover it,
    at either end of a range and with no judged relevant document at all."""
    for metric in ("SN_AP@2", "SN_DCG@2"):
        result = medopt.difference_range(metric, ["d1", "d2"], ["e1", "e2"], {"e1": 1})
        assert (result.low, result.high) == (-1.0, 0.0) and result.certified
        assert result.low_assignment["d1"] == result.low_assignment["d2"] == 0
        result = medopt.difference_range(metric, ["d1", "d2"], ["e1", "e2"], {})
        assert (result.low, result.high) == (-1.0, 1.0) and result.certified
        score = medopt.score_range(metric, ["d1", "d2"], {}, max_grade=2)
        assert (score.low, score.high) == (0.0, 1.0) and score.certified
        formulation = formulation_for(parse_metric(metric))
        assert formulation.covers_zero_denominators


# -- the evaluators ------------------------------------------------------------------


def bits(pattern: str):
    ranking = [f"d{i}" for i in range(len(pattern))]
    return ranking, {d: int(b) for d, b in zip(ranking, pattern)}


def test_moffats_examples():
    """Moffat (seed 003, section 3): SN-DCG@5 of 10100 is 0.92, of 10101 0.88; SN-AP@5 of 10000 is 1.0,
    of 10001 0.7."""
    assert medopt.score("SN_DCG@5", *bits("10100")) == pytest.approx((1 + 0.5) / (1 + 1 / math.log2(3)))
    assert round(medopt.score("SN_DCG@5", *bits("10100")), 2) == 0.92
    assert round(medopt.score("SN_DCG@5", *bits("10101")), 2) == 0.89  # Moffat's 1.89 / 2.13 = 0.887
    assert medopt.score("SN_AP@5", *bits("10000")) == 1.0
    assert medopt.score("SN_AP@5", *bits("10001")) == pytest.approx(0.7)
    assert medopt.score("SN_AP@5", *bits("00000")) == medopt.score("SN_DCG@5", *bits("00000")) == 0.0
    assert medopt.score("SN_DCG@5", *bits("11100")) == medopt.score("SN_AP@5", *bits("11100")) == 1.0  # sorted: 1


def test_self_normalised_scores_see_only_the_top_k():
    ranking, grades = ["a", "b", "c", "d"], {"a": 0, "b": 2, "c": 1, "d": 3, "elsewhere": 3}
    ideal = 2 + 1 / math.log2(3)
    assert medopt.score("SN_DCG@3", ranking, grades) == pytest.approx((2 / math.log2(3) + 0.5) / ideal)
    assert medopt.score("SN_AP(rel=2)@3", ranking, grades) == pytest.approx(0.5)
    assert medopt.score("SN_DCG(dcg=exp-log2)@2", ranking, grades) == pytest.approx(3 / math.log2(3) / 3)
    assert str(parse_metric("sndcg@3")) == "SN_DCG@3" and str(parse_metric("SNAP(rel=2)@3")) == "SN_AP(rel=2)@3"
    with pytest.raises(MetricSyntaxError, match="needs a cutoff"):
        parse_metric("SN_AP")


def test_gain_parameters():
    ranking, grades = ["a", "b", "c"], {"a": 1, "b": 3, "c": 0, "x": 2}
    exp = medopt.score("nDCG(dcg=exp-log2)@3", ranking, grades)
    assert exp == pytest.approx(medopt.score("nDCG(gains={2:3,3:7})@3", ranking, grades))
    assert exp == pytest.approx(medopt.score("nDCG@3", ranking, grades, gains={1: 1, 2: 3, 3: 7}))
    assert medopt.score("DCG(dcg=exp-log2)@2", ranking, grades) == pytest.approx(1 + 7 / math.log2(3))
    # a grade the map does not name keeps its own value (ir_measures' gains.get(grade, grade))
    assert medopt.score("DCG(gains={1:0.5})@2", ranking, grades) == pytest.approx(0.5 + 3 / math.log2(3))
    with pytest.raises(MedoptError, match="non-decreasing"):
        medopt.score("nDCG(gains={1:5})@3", ranking, grades)  # 0, 5, 2, 3
    with pytest.raises(MedoptError, match="pass no gains= besides"):
        medopt.score("nDCG(dcg=exp-log2)@3", ranking, grades, gains={1: 1, 2: 2, 3: 3})


@pytest.mark.parametrize("text, canonical", [
    ("nDCG(gains={0:0,1:1,2:3})@10", "nDCG(gains={2:3})@10"),  # ir_measures prints it so, too
    ("nDCG(gains={0: 0, 1: 0.5, 2: 3.0})@10", "nDCG(gains={1:0.5,2:3})@10"),
    ("nDCG(gains={1:1,2:2})@10", "nDCG@10"),                   # identities only: no map
    ("nDCG(dcg='exp-log2')@10", "nDCG(dcg=exp-log2)@10"),       # ir_measures' quoted spelling
    ("nDCG(dcg=log2,judged_only=False)@10", "nDCG@10"),
    ("DCG(dcg=exp-log2)", "DCG(dcg=exp-log2)"),
    ("SDCG(dcg=log2)@5", "SDCG@5"),
    ("SN_DCG(gains={2:4})@5", "SN_DCG(gains={2:4})@5"),
])
def test_metric_strings_round_trip(text, canonical):
    metric = parse_metric(text)
    assert str(metric) == canonical and parse_metric(str(metric)) == metric


def test_metric_strings_match_ir_measures():
    ir_measures = pytest.importorskip("ir_measures")
    for text in ("nDCG(gains={0:0,1:1,2:3})@10", "nDCG(gains={1:0.5,2:3})@5", "nDCG@10"):
        assert str(parse_metric(text)) == str(ir_measures.parse_measure(text))
    assert ir_measures.parse_measure("nDCG(dcg='exp-log2')@10") == ir_measures.nDCG(dcg="exp-log2") @ 10


@pytest.mark.parametrize("text, message", [
    ("nDCG(judged_only=True)@10", "judged_only"),
    ("DCG(judged_only=True)@10", "judged_only"),
    ("nDCG(dcg=exp-log2,gains={2:3})@10", "not both"),
    ("nDCG(dcg=exp)@10", "exp-log2"),
    ("SDCG(dcg=exp-log2)@10", "log2 only"),
    ("nDCG(gains={0:1})@10", "grade 0 must map to 0"),
    ("nDCG(gains={1:x})@10", "must be a number"),
    ("nDCG(gains={1:1,1:2})@10", "twice"),
    ("nDCG(gains=3)@10", "gain map"),
    ("nDCG(gains={-1:0})@10", "integer grade >= 0"),
    ("SN_AP(gains={2:3})@10", "no parameter"),
])
def test_metric_string_errors(text, message):
    with pytest.raises(MetricSyntaxError, match=message):
        parse_metric(text)


def test_a_limit_met_only_by_documents_of_gain_zero():
    """gains={1:0}: grade 1 scores nothing (a top gain of 0 is allowed: ir_measures scores 0).  A limit
    asking for a document of grade >= 1 is met by one at grade 1, where every score is 0: the exact
    search finds it beyond the all-zero assignment (exact.common.settle_without_relevance)."""
    limit = RelevanceLimit(grade=1, low=1, high=1)
    for metric in ("nDCG(gains={1:0})@3", "SN_DCG(gains={1:0})@3", "nDCG(gains={1:0})"):
        for solver in SOLVERS:
            result = medopt.med(metric, ["a", "b"], ["b", "c"], {}, max_grade=1, limits=(limit,), solver=solver)
            assert result.value == 0.0 and result.certified and sum(result.assignment.values()) == 1
            ends = medopt.difference_range(metric, ["a", "b"], ["b", "c"], {}, max_grade=1, limits=(limit,),
                                           solver=solver)
            assert (ends.low, ends.high) == (0.0, 0.0) and ends.certified


def test_exp_gains_need_a_float_top_grade():
    with pytest.raises(MedoptError, match="G <= 1023"):
        medopt.score("nDCG(dcg=exp-log2)@3", ["a"], {"a": 1}, max_grade=2000)


@pytest.mark.parametrize("text, method", [("DCG(dcg=exp-log2)@10", "closed-form"), ("DCG(gains={1:2,3:9})@5", "closed-form"),
                                          ("nDCG(dcg=exp-log2)@10", "alg1"), ("nDCG(gains={2:4,3:9})@5", "alg1")])
def test_fast_path_honours_the_gain_parameters(text, method):
    rng = random.Random(text)
    metric = parse_metric(text)
    a, b, qrels = {}, {}, {}
    for t in range(60):
        pool = [f"t{t}d{i}" for i in range(rng.randint(2, 20))]
        a[str(t)], b[str(t)] = rng.sample(pool, rng.randint(1, len(pool))), rng.sample(pool, rng.randint(1, len(pool)))
        qrels[str(t)] = {d: rng.choice([0, 0, 1, 2, 3]) for d in pool if rng.random() < 0.6}
    runset = load_runset(None, qrels, columns=[columns_from_rankings("A", a), columns_from_rankings("B", b)])
    for topic, value, direction, certified, bound, status, assignment in \
            med_rows(runset, 0, 1, metric, method, runset.common_topics(0, 1)):
        top = resolve_max_grade(None, qrels)  # SPEC 1: the whole qrels' top grade, as the runset's
        expected = medopt.med(metric, a[topic], b[topic], qrels[topic], method=method, max_grade=top)
        assert value == pytest.approx(expected.value, abs=1e-9) and status == expected.status
        instance = build_instance(metric, a[topic], b[topic], qrels[topic], max_grade=top)
        full = {d: json.loads(assignment).get(d, 0) for d in instance.unjudged}
        assert instance.difference(full, direction) == pytest.approx(value, abs=1e-9)
