"""The nDCG profile search (method ``ndcg-profiles``): both ends of the difference range and the MED
equal brute force on random graded, partially judged instances (G = 1..4, with and without a
cutoff, explicit gains, padding), each certified; its proven bound holds when the search is cut
short; auto picks it where it applies; and the batch kernel gives its values, row by row."""

from __future__ import annotations

import json
import random
import zlib

import numpy as np
import pytest

import medopt
from medopt import methods
from medopt.batch import Settings
from medopt.batch.fastpath import med_rows, range_columns
from medopt.batch.matrix import resolve_method
from medopt.batch.runset import columns_from_rankings, load_runset
from medopt.errors import MedoptError
from medopt.core.instance import RelevanceLimit, build_instance
from medopt.kernels import ndcg_profiles as kernel
from medopt.metrics import parse_metric
from medopt.synthetic.random_instances import random_instance

from test_fastpath import random_topics

PER_GRADE = 300
UNJUDGED = {1: 10, 2: 7, 3: 6, 4: 5}  # at most this many unjudged documents: (G + 1)^n assignments to enumerate
PADDED_ASSIGNMENTS = 5_000            # padding adds unjudged documents: only while enumeration stays this small


def random_gains(rng: np.random.Generator, top: int) -> dict:
    """A non-decreasing gain map with gain(0) = 0 and a positive top gain; equal neighbours and zero
    gains for low grades included."""
    values = np.sort(rng.choice([0.0, 0.0, 0.25, 0.5, 1.0, 1.5, 3.0, 7.0], size=top))
    values[-1] = max(values[-1], 0.5)
    return {0: 0.0, **{g: float(v) for g, v in enumerate(values, start=1)}}


def cases(top: int, count: int):
    """(case, metric, options): a third without cutoff, a quarter with explicit gains, some padded."""
    rng = np.random.default_rng(1000 + top)
    for index in range(count):
        case = random_instance(rng, max_grade=top, max_unjudged=UNJUDGED[top])
        metric = "nDCG" if index % 3 == 0 else f"nDCG@{case.k}"
        if metric == "nDCG":  # the whole lists count: judge the unjudged documents below the first few
            unjudged = [d for d in dict.fromkeys(case.a + case.b) if d not in case.judgments]
            case.judgments.update({d: int(rng.integers(0, top + 1)) for d in unjudged[UNJUDGED[top]:]})
        options = {"max_grade": top, "gains": random_gains(rng, top) if index % 4 == 1 else None}
        if metric != "nDCG" and index % 5 == 2:
            padded = build_instance(metric, case.a, case.b, case.judgments, pad="free", **options)
            if (top + 1) ** len(padded.unjudged) <= PADDED_ASSIGNMENTS:
                options["pad"] = "free"
        yield case, metric, options


@pytest.mark.parametrize("top", [1, 2, 3, 4])
def test_equals_enumeration_on_both_ends_and_the_med(top):
    checked, padded, no_cutoff, gains, graded_wins, alg1_misses = 0, 0, 0, 0, 0, 0
    for case, metric, options in cases(top, PER_GRADE):
        args = (metric, case.a, case.b, case.judgments)
        oracle = medopt.difference_range(*args, method="enumerate", **options)
        got = medopt.difference_range(*args, method="ndcg-profiles", **options)
        med = medopt.med(*args, method="ndcg-profiles", **options)
        note = (metric, case, options, got, oracle)
        assert oracle.certified and got.certified, note
        assert got.low == pytest.approx(oracle.low, abs=1e-9) and got.high == pytest.approx(oracle.high, abs=1e-9), note
        assert got.low_bound == pytest.approx(got.low, abs=1e-9) and got.high_bound == pytest.approx(got.high, abs=1e-9)
        assert med.certified and med.method == "ndcg-profiles", (note, med)
        assert med.value == pytest.approx(oracle.med, abs=1e-9), (note, med)
        assert med.upper_bound - med.value <= 1e-9
        checked += 1
        padded += options.get("pad") == "free"
        no_cutoff += metric == "nDCG"
        gains += options["gains"] is not None
        graded_wins += any(0 < g < top for g in med.assignment.values())
        alg1_misses += medopt.med(*args, method="alg1", **options).value < med.value - 1e-9
    assert checked == PER_GRADE and padded >= 10 and no_cutoff >= PER_GRADE // 3 and gains >= PER_GRADE // 4
    if top > 1:  # the instances reach what Algorithm 1 cannot: optima with intermediate grades
        assert graded_wins > 0 and alg1_misses > 0


def test_moffat_graded_counterexample():
    """docs/findings.md: MED-nDCG@5 = 0.7366 where Algorithm 1 gives 0.6976 (d3, d5, d6 at grade 1)."""
    a, b = "d2 d3 d7 d1 d0".split(), "d3 d5 d4 d7 d6".split()
    result = medopt.med("nDCG@5", a, b, {"d4": 1}, max_grade=2)
    assert result.method == "ndcg-profiles" and result.certified
    assert result.value == pytest.approx(0.7366, abs=1e-4)
    assert {d for d, g in result.assignment.items() if g} == {"d3", "d5", "d6"}
    assert set(result.assignment.values()) == {0, 1}
    assert medopt.med("nDCG@5", a, b, {"d4": 1}, max_grade=2, method="alg1").value == pytest.approx(0.6976, abs=1e-4)


@pytest.mark.parametrize("a,b,judged,top", [
    ([], [], {}, 1),                                   # nothing at all: 0
    (["x", "y"], ["y", "x"], {"x": 0, "y": 0}, 2),     # nothing unjudged, nothing relevant: 0
    (["x", "y", "z"], [], {"x": 1}, 3),                # a score range's form: B empty
    (["p", "q", "r"], ["r", "s"], {"z": 5}, 12),       # many grades, a relevant document in neither list
    (["p", "q", "r", "s"], ["s", "r", "q", "p"], {}, 2),  # the same documents reversed
])
def test_small_and_degenerate_instances(a, b, judged, top):
    for metric in ("nDCG@3", "nDCG"):
        oracle = medopt.difference_range(metric, a, b, judged, max_grade=top, method="enumerate")
        got = medopt.difference_range(metric, a, b, judged, max_grade=top, method="ndcg-profiles")
        assert got.certified and (got.low, got.high) == (pytest.approx(oracle.low, abs=1e-12),
                                                         pytest.approx(oracle.high, abs=1e-12))
    score = medopt.score_range("nDCG@3", a, judged, max_grade=top, method="ndcg-profiles")
    assert score.certified and score.low == pytest.approx(
        medopt.score_range("nDCG@3", a, judged, max_grade=top, method="enumerate").low, abs=1e-12)


def test_a_search_cut_short_keeps_a_proven_bound(monkeypatch):
    """With no Dinkelbach step allowed, each end is the best equal-count chain, marked feasible, and
    its bound (step 5 of the proof) is still at least the true maximum."""
    monkeypatch.setattr(kernel, "MAX_STEPS", 0)
    rng = np.random.default_rng(7)
    short = 0
    for _ in range(60):
        case = random_instance(rng, max_grade=3, max_unjudged=5)
        args = (f"nDCG@{case.k}", case.a, case.b, case.judgments)
        oracle = medopt.difference_range(*args, max_grade=3, method="enumerate")
        got = medopt.difference_range(*args, max_grade=3, method="ndcg-profiles")
        assert got.high_bound >= oracle.high - 1e-12 and got.low_bound <= oracle.low + 1e-12
        assert got.high <= oracle.high + 1e-12 and got.low >= oracle.low - 1e-12
        assert got.status == "feasible" and not got.certified
        short += got.high < oracle.high - 1e-9 or got.low > oracle.low + 1e-9
    assert short > 0  # the equal-count start alone misses some graded optima


def test_auto_picks_it_where_it_applies():
    a, b, judged = ["d1", "d2", "d3"], ["d3", "d4"], {"d2": 2}
    assert medopt.med("nDCG@3", a, b, judged).method == "ndcg-profiles"
    assert medopt.med("nDCG", a, b, judged).method == "ndcg-profiles"
    assert medopt.med("nDCG@3", a, b, {"d2": 1}).method == "alg1"              # binary: Algorithm 1 is exact
    assert medopt.difference_range("nDCG@3", a, b, {"d2": 1}).method == "ndcg-profiles"  # alg1 gives no ends
    limited = medopt.med("nDCG@3", a, b, judged, limits=[RelevanceLimit(grade=2, high=1)])
    assert limited.method == "exact" and limited.certified
    with pytest.raises(MedoptError, match="ndcg-profiles.*limits"):
        medopt.med("nDCG@3", a, b, judged, limits=[RelevanceLimit(grade=2, high=1)], method="ndcg-profiles")
    assert not methods.get("ndcg-profiles").computes(parse_metric("AP@3"))
    for top in (1, 2, 5):
        assert resolve_method(parse_metric("nDCG@10"), top, Settings(ranges=True), {}) == ("ndcg-profiles", True)
        assert resolve_method(parse_metric("nDCG"), top, Settings(ranges=True), {}) == ("ndcg-profiles", True)
    assert resolve_method(parse_metric("nDCG@10"), 3, Settings(), {}) == ("ndcg-profiles", True)
    assert resolve_method(parse_metric("nDCG@10"), 1, Settings(), {}) == ("alg1", True)


def test_refused_above_the_memory_limit(monkeypatch):
    instance = build_instance("nDCG@3", ["d1", "d2", "d3"], ["d4"], {}, max_grade=3)
    assert methods.get("ndcg-profiles").supports(instance) is None
    monkeypatch.setenv("MEDOPT_MEMORY_LIMIT_GB", "0.000001")  # about 1 kB: less than 2 x 3 x 5 cells
    assert "memory limit" in methods.get("ndcg-profiles").supports(instance)


@pytest.mark.parametrize("metric", ["nDCG@5", "nDCG@20", "nDCG"])
@pytest.mark.parametrize("max_grade", [None, 1, 4])
def test_kernel_equals_the_per_instance_method(metric, max_grade):
    """Random runsets (partial graded judgments, different lengths, shared documents, doc names shared
    across topics or not): each row of the batch kernel is the per-instance method's MED and range."""
    rng = random.Random(zlib.crc32(f"{metric} {max_grade}".encode()))
    parsed = parse_metric(metric)
    for shared_names in (False, True):
        a, b, qrels = random_topics(rng, 60, True, shared_names)
        runset = load_runset(None, qrels, max_grade=max_grade,
                             columns=[columns_from_rankings("A", a), columns_from_rankings("B", b)])
        topics = runset.common_topics(0, 1)
        rows = med_rows(runset, 0, 1, parsed, "ndcg-profiles", topics)
        ranges = list(zip(*range_columns(runset, 0, 1, parsed, topics, "ndcg-profiles")))
        assert len(rows) == len(ranges) == len(a)
        for (topic, value, direction, certified, bound, status, assignment), end in zip(rows, ranges):
            top = int(runset.max_grade[runset.topics.index(topic)])
            args = (parsed, a[topic], b[topic], qrels.get(topic, {}))
            expected = medopt.med(*args, max_grade=top, method="ndcg-profiles")
            assert value == pytest.approx(expected.value, abs=1e-9)
            assert bound == pytest.approx(expected.upper_bound, abs=1e-9)
            assert (certified, status) == (expected.certified, expected.status) == (True, "optimal")
            instance = build_instance(*args, max_grade=top)
            full = lambda text: {d: json.loads(text).get(d, 0) for d in instance.unjudged}  # noqa: E731
            assert set(json.loads(assignment)) <= set(instance.unjudged)
            for text in (assignment, end[8], end[9]):  # grades within the topic's own scale
                assert all(1 <= g <= top for g in json.loads(text).values()), (topic, text, top)
            assert instance.difference(full(assignment), direction) == pytest.approx(value, abs=1e-9)
            _, low, high, low_bound, high_bound, low_certified, high_certified, range_status, low_json, high_json = end
            span = medopt.difference_range(*args, max_grade=top, method="ndcg-profiles")
            assert (low, high) == (pytest.approx(span.low, abs=1e-9), pytest.approx(span.high, abs=1e-9))
            assert (low_bound, high_bound) == (pytest.approx(span.low_bound, abs=1e-9),
                                               pytest.approx(span.high_bound, abs=1e-9))
            assert low_certified and high_certified and range_status == "optimal"
            assert instance.difference(full(high_json), "a") == pytest.approx(high, abs=1e-9)
            assert -instance.difference(full(low_json), "b") == pytest.approx(low, abs=1e-9)
