"""The closed forms of Success@k and R@k (metrics/success.py, recall.py: proofs in the docstrings)
against brute-force enumeration: MED and both ends of the difference range, on seeded random graded,
partially judged instances without relevance limits (rel=2 too, lists of different lengths, some
padded), and ``auto``'s choice with and without limits."""

import numpy as np
import pytest

import medopt
from medopt import methods
from medopt.batch import Settings
from medopt.batch.matrix import resolve_method
from medopt.core.instance import RelevanceLimit, build_instance
from medopt.metrics import parse_metric
from medopt.synthetic.random_instances import random_instance

INSTANCES = 320
TOLERANCE = 1e-9


def cases(seed: int):
    """(rel, instance, keyword arguments) of INSTANCES random instances: G in 1..3, rel 1 or 2 (rel = 2
    with G = 1: nothing unjudged can be relevant), one in four padded (pad="free"), one in five mostly
    judged, one in ten with A's top k judged 0."""
    rng = np.random.default_rng(seed)
    for i in range(INSTANCES):
        max_grade = int(rng.integers(1, 4))
        pad = i % 4 == 3
        mostly_judged = i % 5 == 4  # few unjudged documents: some ranges exclude 0 (an end's optimum < 0)
        case = random_instance(rng, max_grade=max_grade, judged_fraction=0.8 if mostly_judged else None,
                               max_unjudged=i % 3 if mostly_judged else (5 if max_grade == 3 else 7) if pad else None)
        if i % 10 == 9:  # A's top k all judged non-relevant: A often cannot hit
            case.judgments.update(dict.fromkeys(case.a[:case.k], 0))
        rel = 2 if rng.random() < 0.35 else 1
        yield rel, case, {**case.as_kwargs(), "pad": "free" if pad else "none"}


@pytest.mark.parametrize("family", ["Success", "R"])
def test_closed_form_equals_enumeration(family):
    counted = {"rel=2": 0, "pad": 0, "uneven": 0, "decided": 0}
    for rel, case, kwargs in cases(seed={"Success": 101, "R": 202}[family]):
        name = f"{family}@{case.k}" if rel == 1 else f"{family}(rel=2)@{case.k}"
        closed = medopt.med(name, **kwargs, method="closed-form")
        oracle = medopt.med(name, **kwargs, method="enumerate")
        assert closed.method == "closed-form" and closed.certified and oracle.certified, (name, case, closed)
        assert abs(closed.value - oracle.value) <= TOLERANCE, (name, case, closed, oracle)
        closed_range = medopt.difference_range(name, **kwargs, method="closed-form")
        oracle_range = medopt.difference_range(name, **kwargs, method="enumerate")
        assert closed_range.certified and oracle_range.certified, (name, case, closed_range)
        assert abs(closed_range.low - oracle_range.low) <= TOLERANCE, (name, case, closed_range, oracle_range)
        assert abs(closed_range.high - oracle_range.high) <= TOLERANCE, (name, case, closed_range, oracle_range)
        assert abs(closed.value - max(closed_range.high, -closed_range.low)) <= TOLERANCE
        auto = medopt.med(name, **kwargs)
        assert auto.method == "closed-form" and abs(auto.value - oracle.value) <= TOLERANCE
        counted["rel=2"] += rel == 2
        counted["pad"] += kwargs["pad"] == "free"
        counted["uneven"] += len(case.a) != len(case.b)
        counted["decided"] += closed_range.high < 0 or closed_range.low > 0
    assert counted["rel=2"] >= 50 and counted["pad"] >= 50 and counted["uneven"] >= 100, counted
    assert counted["decided"] >= 10, counted  # ranges excluding 0


@pytest.mark.parametrize("family", ["Success", "R"])
def test_score_range_equals_enumeration(family):
    rng = np.random.default_rng(303)
    for _ in range(100):
        case = random_instance(rng, max_grade=int(rng.integers(1, 3)))
        name = f"{family}@{case.k}"
        closed = medopt.score_range(name, case.a, case.judgments, max_grade=case.max_grade, method="closed-form")
        oracle = medopt.score_range(name, case.a, case.judgments, max_grade=case.max_grade, method="enumerate")
        assert closed.certified and abs(closed.low - oracle.low) <= TOLERANCE
        assert abs(closed.high - oracle.high) <= TOLERANCE, (name, case, closed, oracle)


def test_recall_shared_documents_raise_a_negative_end():
    """B holds the judged relevant document; the shared unjudged one set relevant shrinks B's lead
    (1/1 -> 1/2), so the high end, the maximum of R(A) - R(B), is -1/2 (s relevant), the low end -1."""
    result = medopt.difference_range("R@2", ["s", "n"], ["r", "s"], {"r": 1, "n": 0}, method="closed-form")
    assert result.certified and abs(result.high + 0.5) <= TOLERANCE and result.high_assignment == {"s": 1}
    assert abs(result.low + 1.0) <= TOLERANCE and result.low_assignment == {"s": 0}


@pytest.mark.parametrize("metric", ["Success@5", "R@5", "Success(rel=2)@3", "R(rel=2)@4"])
def test_auto_picks_the_closed_form_without_limits_and_the_exact_model_with_them(metric):
    plain = build_instance(metric, ["a", "b"], ["b", "c"], {"a": 1}, max_grade=2)
    limited = build_instance(metric, ["a", "b"], ["b", "c"], {"a": 1}, max_grade=2,
                             limits=(RelevanceLimit(grade=1, high=2),))
    for ranges in (False, True):
        assert methods.auto(plain, ranges=ranges).name == "closed-form"
        assert methods.auto(limited, ranges=ranges).name == "exact"
    assert "relevance limits" in methods.get("closed-form").supports(limited)


@pytest.mark.parametrize("metric", ["Rprec", "Rprec@5", "RR@5", "AP@5"])
def test_the_closed_form_does_not_claim_other_families(metric):
    instance = build_instance(metric, ["a", "b"], ["b", "c"], {"a": 1})
    assert methods.get("closed-form").supports(instance) is not None
    assert methods.auto(instance).name != "closed-form"


@pytest.mark.parametrize("ranges", [False, True])
def test_matrix_runs_them_per_topic_not_by_the_dot_product_kernel(ranges):
    """medopt matrix: auto is the closed form, but the NumPy kernel is the dot products' only."""
    for metric in ("Success@10", "R@10", "Success(rel=2)@5"):
        assert resolve_method(parse_metric(metric), 2, Settings(ranges=ranges), {}) == ("closed-form", False)
    assert resolve_method(parse_metric("P@10"), 2, Settings(ranges=ranges), {}) == ("closed-form", True)
