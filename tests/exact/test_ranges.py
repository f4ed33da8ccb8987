"""The ranges of SPEC 7, checked against brute force: both ends of ``difference_range`` and of
``score_range``, for every example metric of every registered family, on seeded random instances
(graded, partially judged, with side constraints, lists of different lengths), on both solvers.

* each end equals the enumeration's, is certified on its own, and its bound is proven;
* MED = max(high, -low) on every instance;
* the enumeration itself equals a direct min / max over every assignment written here;
* the reductions a range may use keep each direction's own maximum, whatever its sign.
"""

from __future__ import annotations

import itertools
import time

import pytest

import medopt
from medopt.errors import MedoptError
from medopt.core.instance import build_instance
from medopt.metrics import declared_reductions, parse_metric
from medopt.core.reductions import reduce

from exact_cases import oracle_cases
from test_registry import EXAMPLES, seed_of
from test_reductions import best, obeys

ORACLE_INSTANCES = 30  # per example metric, solver and kind of range


def ends_agree(result, oracle, context):
    assert result.low == pytest.approx(oracle.low, abs=1e-9), context
    assert result.high == pytest.approx(oracle.high, abs=1e-9), context
    assert result.low_certified and result.high_certified and oracle.certified, (context, result)
    assert result.low_bound <= result.low + 1e-9 and result.high_bound >= result.high - 1e-9, context
    assert result.low <= result.high + 1e-12


def check_ranges(example, solver, kind):
    metric = parse_metric(example)
    checked = 0
    for case, limits in oracle_cases(seed=seed_of(example + solver + kind), count=ORACLE_INSTANCES, k=metric.cutoff,
                                     max_unjudged=6):
        kwargs = dict(max_grade=case.max_grade, limits=limits)
        if kind == "score":
            ask = lambda **more: medopt.score_range(metric, case.a, case.judgments, **kwargs, **more)
        else:
            ask = lambda **more: medopt.difference_range(metric, case.a, case.b, case.judgments, **kwargs, **more)
        try:
            oracle = ask(method="enumerate")
        except MedoptError:  # no assignment meets the limits: exact must say so too
            with pytest.raises(MedoptError):
                ask(method="exact", solver=solver)
            continue
        result = ask(method="exact", solver=solver)
        ends_agree(result, oracle, (example, kind, case, limits))
        if kind == "difference":
            med = medopt.med(metric, case.a, case.b, case.judgments, method="exact", solver=solver, **kwargs)
            assert med.value == pytest.approx(max(result.high, -result.low), abs=1e-9), (example, case, limits)
            assert result.med == pytest.approx(med.value, abs=1e-9)
        checked += 1
    assert checked >= ORACLE_INSTANCES // 2
    return checked


@pytest.mark.parametrize("solver", ["highs", "cpsat"])
@pytest.mark.parametrize("example", EXAMPLES)
def test_difference_range_equals_enumeration(example, solver):
    check_ranges(example, solver, "difference")


@pytest.mark.parametrize("solver", ["highs", "cpsat"])
@pytest.mark.parametrize("example", EXAMPLES)
def test_score_range_equals_enumeration(example, solver):
    check_ranges(example, solver, "score")


@pytest.mark.parametrize("example", EXAMPLES)
def test_auto_ranges_are_exact(example):
    """``auto`` picks a method with exact ends (the closed form for dot products, never Alg. 1)."""
    metric = parse_metric(example)
    for case, limits in oracle_cases(seed=seed_of(example) + 7, count=8, k=metric.cutoff, max_unjudged=6):
        kwargs = dict(max_grade=case.max_grade, limits=limits)
        try:
            oracle = medopt.difference_range(metric, case.a, case.b, case.judgments, method="enumerate", **kwargs)
        except MedoptError:
            continue
        ends_agree(medopt.difference_range(metric, case.a, case.b, case.judgments, **kwargs), oracle, (example, case))
        try:  # B alone may not meet a limit both lists could (its own unjudged documents too few)
            medopt.score_range(metric, case.b, case.judgments, method="enumerate", **kwargs)
        except MedoptError:
            with pytest.raises(MedoptError):
                medopt.score_range(metric, case.b, case.judgments, **kwargs)
            continue
        score = medopt.score_range(metric, case.b, case.judgments, **kwargs)
        assert score.kind == "score" and score.certified


def brute_force_range(metric, a, b, judgments, max_grade):
    """min and max of M(a) - M(b) over every assignment, scored by medopt.score alone."""
    unjudged = list(dict.fromkeys(d for d in list(a)[: metric.depth(len(a))] + list(b)[: metric.depth(len(b))]
                                  if d not in judgments))
    values = []
    for grades in itertools.product(range(max_grade + 1), repeat=len(unjudged)):
        full = dict(judgments, **dict(zip(unjudged, grades)))
        values.append(medopt.score(metric, a, full, max_grade=max_grade)
                      - (medopt.score(metric, b, full, max_grade=max_grade) if b else 0.0))
    return min(values), max(values)


@pytest.mark.parametrize("example", ["AP@5", "nDCG@5", "ERR@4", "RR@4", "Q(beta=1)@4", "P@3", "RBP(p=0.5)@5"])
def test_the_enumeration_is_a_plain_min_and_max(example):
    metric = parse_metric(example)
    for case, _ in oracle_cases(seed=seed_of(example) + 3, count=12, k=metric.cutoff, max_unjudged=5):
        low, high = brute_force_range(metric, case.a, case.b, case.judgments, case.max_grade)
        found = medopt.difference_range(metric, case.a, case.b, case.judgments, max_grade=case.max_grade,
                                        method="enumerate")
        assert (found.low, found.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
        low, high = brute_force_range(metric, case.a, (), case.judgments, case.max_grade)
        found = medopt.score_range(metric, case.a, case.judgments, max_grade=case.max_grade, method="enumerate")
        assert (found.low, found.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


def test_the_minimum_of_a_ratio_metric_is_not_all_unjudged_non_relevant():
    """AP: one judged relevant document at rank 1 scores 1; an unjudged relevant one deep in the
    list raises R and lowers AP below that: the low end has its own assignment."""
    ranking = [f"d{i}" for i in range(1, 11)]
    result = medopt.score_range("AP@10", ranking, {"d1": 1})
    assert result.high == 1.0 and result.certified
    assert result.low < 1.0 and result.low_assignment["d10"] == 1
    assert result.low == pytest.approx(medopt.score("AP@10", ranking, result.low_assignment | {"d1": 1}))


def test_dot_product_ranges_are_the_closed_form():
    a, b, judged = ["d1", "d2", "d3", "d4"], ["d3", "d5", "d1"], {"d2": 1, "d5": 0}
    closed = medopt.difference_range("RBP(p=0.8)", a, b, judged)
    assert closed.method == "closed-form" and closed.certified
    ends_agree(closed, medopt.difference_range("RBP(p=0.8)", a, b, judged, method="enumerate"), "RBP")
    weights = [0.2 * 0.8 ** i for i in range(4)]
    assert medopt.score_range("RBP(p=0.8)", a, judged).low == pytest.approx(weights[1])
    assert medopt.score_range("RBP(p=0.8)", a, judged).high == pytest.approx(sum(weights) - 0.0)


def test_rbp_residual_adds_the_tail_to_the_high_end():
    ranking, judged = ["d1", "d2", "d3"], {"d1": 1, "d2": 0}
    plain = medopt.score_range("RBP(p=0.5)", ranking, judged)
    residual = medopt.score_range("RBP(p=0.5)", ranking, judged, residual=True)
    assert (plain.low, plain.high) == (pytest.approx(0.5), pytest.approx(0.625))
    assert (residual.low, residual.high) == (pytest.approx(0.5), pytest.approx(0.75))  # + 0.5^3
    assert residual.high_bound == pytest.approx(0.75) and residual.certified


def test_a_heuristic_gives_no_range():
    with pytest.raises(MedoptError, match="no exact range ends"):
        medopt.difference_range("AP@3", ["a", "b"], ["b", "c"], {}, method="greedy")


def test_a_decided_comparison():
    """A ahead whatever the unjudged document is: the range excludes 0."""
    result = medopt.difference_range("P@2", ["r1", "r2"], ["n1", "u"], {"r1": 1, "r2": 1, "n1": 0})
    assert (result.low, result.high) == (pytest.approx(0.5), pytest.approx(1.0)) and result.decided
    flips = medopt.difference_range("P@2", ["r1", "u1"], ["u2", "r2"], {"r1": 1, "r2": 1})
    assert flips.low < 0 < flips.high and not flips.decided


@pytest.mark.parametrize("example", [e for e in EXAMPLES if declared_reductions(parse_metric(e))])
def test_reductions_of_a_range_keep_each_directions_maximum(example):
    """A direction not known to reach a difference > 0 gets only the facts proved for any sign:
    those keep its maximum whatever the sign (a range's low end is often below 0)."""
    metric = parse_metric(example)
    reduced_somewhere = 0
    for case, limits in oracle_cases(seed=seed_of(example) + 11, count=40, k=metric.cutoff, max_unjudged=6):
        for b in (case.b, ()):
            instance = build_instance(metric, case.a, b, case.judgments, max_grade=case.max_grade, limits=limits)
            if best(instance, "a") == -float("inf"):
                continue
            for direction in ("a", "b"):
                reduced = reduce(instance, direction, reaches_positive=False)
                if reduced is instance:
                    continue
                reduced_somewhere += 1
                assert best(instance, direction, obeys(reduced)) == pytest.approx(best(instance, direction),
                                                                                 abs=1e-12), (example, case, limits)
    assert reduced_somewhere > 5


@pytest.mark.parametrize("metric", ["AP", "ERR@1000", "SSP@1000"])
def test_a_time_limited_range_is_honest(metric):
    """Both ends share one clock: the answer comes within the limit + 10% + 1 s, each end a true
    difference inside its proven bound, uncertified unless proven."""
    from test_limits import deep_pair, within
    a, b = deep_pair(1000, similarity=0.6)
    medopt.difference_range("AP@3", ["a", "b", "c"], ["c", "d"], {}, method="exact")  # imports paid before timing
    started = time.perf_counter()
    result = medopt.difference_range(metric, a, b, {}, time_limit=1.5)
    assert within(1.5, time.perf_counter() - started)
    instance = build_instance(metric, a, b, {})
    for end, sign, bound, certified in (("high", 1, result.high_bound, result.high_certified),
                                        ("low", -1, result.low_bound, result.low_certified)):
        value = getattr(result, end)
        assignment = getattr(result, f"{end}_assignment")
        assert instance.difference(assignment, "a") == pytest.approx(value, abs=1e-12)
        assert sign * bound >= sign * value - 1e-12
        assert -1.0 - 1e-12 <= bound <= 1.0 + 1e-12
        if not certified:
            assert result.status == "timeout"
