"""The bounds without a model of the sums of precisions (PrecisionSums.quick_bound, from q_quick with
beta = 0) and of the Q-measure (ProfileBoxes.quick_bound, q_quick over every R): on seeded random
instances (graded, partially judged, uneven lists, with relevance limits), each direction's bound is
at least that direction's maximum by enumeration; and an answer stopped by its time limit reports it
instead of the trivial bound.
"""

from __future__ import annotations


import pytest

import medopt
from medopt.errors import MedoptError
from medopt.formulations import formulation_for
from medopt.core.instance import build_instance
from medopt.metrics import parse_metric

from exact_cases import oracle_cases
from conftest import SHARED_DATA

METRICS = ["AP@5", "AP", "AP(norm=min)@4", "SSP@5", "SP@5", "AP(rel=2)@5", "Q(beta=1)@5", "Q(beta=0.5,rel=2)@4"]
DATA = SHARED_DATA / "dl-hard"


@pytest.mark.parametrize("example", METRICS)
def test_quick_bound_is_at_least_each_direction_maximum(example):
    metric = parse_metric(example)
    formulation = formulation_for(metric)
    checked = tight = 0
    for case, limits in oracle_cases(seed=sum(map(ord, example)), count=60, k=metric.cutoff, max_unjudged=6):
        try:
            oracle = medopt.difference_range(metric, case.a, case.b, case.judgments, max_grade=case.max_grade,
                                             limits=limits, method="enumerate")
        except MedoptError:  # no assignment meets the limits
            continue
        instance = build_instance(metric, case.a, case.b, case.judgments, max_grade=case.max_grade, limits=limits)
        high, low = formulation.quick_bound(instance, "a"), formulation.quick_bound(instance, "b")
        assert high >= oracle.high - 1e-9, (example, case, limits, high, oracle.high)
        assert low >= -oracle.low - 1e-9, (example, case, limits, low, oracle.low)
        checked += 1
        tight += abs(high - oracle.high) < 1e-9
    assert checked >= 40
    assert tight >= 1  # the bound can fail, so the test can


@pytest.mark.skipif(not DATA.exists(), reason="DL-HARD data (../shared/data) absent")
def test_depth_1000_sums_of_precisions_are_settled_by_the_roof_dual_or_report_its_bound(monkeypatch):
    """AP over 1000 ranks (trec_eval's map) and SSP@1000 on a DL-HARD topic with the qrels: the roof
    dual closes both directions without a model (each had returned after 60 s, uncertified, bounds
    0.74 and 0.76).  SSP@1000 without judgments: the exact search over the roof dual closes both
    (2.6 s on an idle machine; the roof dual alone left 0.344 against 0.343 reached, and the models
    had not closed it in 60 s); stopped by a time limit of 1 s, a proven bound below the trivial 1 (the
    quick bound, 0.72), with the chain bounds (formulations/precision/chains.py) first or without them."""
    from medopt.formulations.precision.sums import PrecisionSums

    from medopt.io.trec import read_qrels, read_run

    a = read_run(DATA / "baselines" / "doc" / "bm25+rm3+bert-mp(zs).run").rankings["67316"]
    b = read_run(DATA / "baselines" / "doc" / "bm25.run").rankings["67316"]
    judgments = read_qrels(DATA / "dl_hard-doc.qrels")["67316"]
    for metric, given in (("AP", judgments), ("SSP@1000", judgments), ("SSP@1000", {})):
        result = medopt.med(metric, a, b, given, time_limit=30)
        assert result.certified and result.details["closed without a model"] == 2
    chained = medopt.med("SSP@1000", a, b, {}, time_limit=1)
    assert chained.value <= chained.upper_bound < 0.75 and chained.details["chain bounds"] == 2
    monkeypatch.setattr(PrecisionSums, "chain_bound", None)
    stopped = medopt.med("SSP@1000", a, b, {}, time_limit=1)
    assert not stopped.certified and stopped.value <= stopped.upper_bound < 0.75

@pytest.mark.parametrize("example", ["AP@5", "SSP@5", "AP(norm=min)@4"])
def test_a_direction_closed_by_its_bound_without_a_model_leaves_the_exact_med(example):
    """For MED the driver settles a direction whose quick bound is at most the difference already
    reached, without a model: the answer stays the enumeration's, certified, on random instances where
    that happens (and the bound is used on some of them, so the test can fail)."""
    metric = parse_metric(example)
    closed = 0
    for case, limits in oracle_cases(seed=7 + sum(map(ord, example)), count=60, k=metric.cutoff, max_unjudged=6):
        try:
            oracle = medopt.med(metric, case.a, case.b, case.judgments, max_grade=case.max_grade, limits=limits,
                                method="enumerate")
        except MedoptError:  # no assignment meets the limits
            continue
        exact = medopt.med(metric, case.a, case.b, case.judgments, max_grade=case.max_grade, limits=limits,
                           method="exact")
        assert exact.certified and abs(exact.value - oracle.value) < 1e-9, (example, case, limits)
        closed += exact.details.get("closed without a model", 0)
    assert closed >= 5


@pytest.mark.parametrize("example", ["AP", "AP@50", "AP(norm=min)@30", "SSP@40", "AP(rel=2)"])
def test_the_largest_bound_alone_equals_the_largest_of_every_r(example):
    """quick_bound asks kernels/bounds_by_count.bounds_by_r for the largest bound(R) only (``largest``: halving blocks of R
    from one block, no sort per R): it is the largest of the bounds computed one R at a time, to the
    last bit, on random lists of 60 ranks with many unjudged documents (hundreds of R), and on the
    oracle's small cases; there it is at least each direction's maximum (the test above)."""
    import numpy as np

    from medopt.kernels import bounds_by_count as q_quick

    metric = parse_metric(example)
    rel = metric.p("rel")
    rng = np.random.default_rng(sum(map(ord, example)))
    compared = 0
    for index in range(40):
        depth = 60 if index % 2 else 8
        pool = [f"d{i}" for i in range(int(depth * 1.6))]
        a = list(rng.permutation(pool)[:depth])
        b = list(rng.permutation(pool)[:depth - int(rng.integers(0, 4))])
        judged = rng.choice(pool, size=int(rng.integers(0, len(pool) // 3)), replace=False)
        judgments = {str(d): int(rng.integers(0, 3)) for d in judged}
        instance = build_instance(metric, a, b, judgments, max_grade=2)
        cap = metric.cutoff if metric.family == "AP" and metric.p("norm") == "min" else None
        weight = (lambda r: r / np.minimum(cap, r)) if cap else None if metric.family == "AP" else (lambda r: r * 1.0)
        weigh = (lambda r: weight(np.array([r]))[0]) if weight else (lambda r: 1)
        for direction in ("a", "b"):
            every = q_quick.bounds_by_r(instance, direction, beta=0.0, rel=rel, weight=weight)
            alone = q_quick.bounds_by_r(instance, direction, beta=0.0, rel=rel, weight=weight, largest=True)
            if not every:
                assert not alone
                continue
            assert max(v * weigh(r) for r, v in alone.items()) == max(v * weigh(r) for r, v in every.items())
            assert all(alone[r] >= every[r] - 1e-12 for r in every)  # each R: at least its own bound
            compared += 1
    assert compared >= 60


@pytest.mark.parametrize("example", ["AP@6", "AP", "AP(norm=min)@4", "AP(rel=2)@5"])
def test_greedy_skips_a_direction_its_bound_closes_and_the_med_stays_exact(example, monkeypatch):
    """For MED the driver hands the greedy warm start ``closed`` (the quick bound at most the difference
    reached): a direction it closes has no greedy path.  The MED stays the enumeration's, certified, and
    paths are skipped on some instances (so the test can fail).  The chain bounds are off: after them the
    MED has no warm start (exact/driver.py)."""
    from medopt.formulations.precision.sums import PrecisionSums
    from medopt.heuristics import greedy as greedy_module
    from medopt import methods

    monkeypatch.setattr(PrecisionSums, "chain_bound", None)

    metric = parse_metric(example)
    skipped = []
    original = greedy_module.greedy

    def counting(instance, **options):
        result = original(instance, **options)
        skipped.append(sum(1 for length in result.details["greedy_path_length"].values() if length == 0
                           and options.get("closed") is not None))
        return result

    greedy_method = methods.REGISTRY["greedy"]
    monkeypatch.setitem(methods.REGISTRY, "greedy", type(greedy_method)(**{
        **greedy_method.__dict__, "run": lambda instance, **kw: counting(instance, **kw)}))
    checked = 0
    for case, limits in oracle_cases(seed=11 + sum(map(ord, example)), count=60, k=metric.cutoff or 6,
                                     max_unjudged=6):
        if limits:
            continue  # the greedy takes no relevance limits (it is no warm start there)
        oracle = medopt.med(metric, case.a, case.b, case.judgments, max_grade=case.max_grade, method="enumerate")
        exact = medopt.med(metric, case.a, case.b, case.judgments, max_grade=case.max_grade, method="exact")
        assert exact.certified and abs(exact.value - oracle.value) < 1e-9, (example, case)
        checked += 1
    assert checked >= 30 and sum(skipped) >= 3
    alone = original(build_instance(metric, ["x", "y", "z"], ["z", "w"], {"w": 1}, max_grade=1),
                     closed=lambda direction, value: True)
    assert alone.details["greedy_path_length"]["b"] == 0  # the first direction is walked, the second skipped
