"""The bounds of an AP direction the driver keeps when nothing settles it: the smallest denominator
(R >= the judged relevant count), the parametric bound over several multipliers of the relevant
count (PrecisionSums.parametric_bound), and a direction whose model would be too large ending at
that bound, uncertified, instead of refusing the instance."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import medopt
from medopt.formulations import formulation_for
from medopt.core.instance import build_instance, judged_count
from medopt.metrics import parse_metric
from medopt.solvers.roof_dual import roof_dual_bound

from exact_cases import graded_instances, oracle_cases
from test_roof_search import interleaved, without_count_boxes


def assignments(instance):
    for grades in itertools.product(range(instance.max_grade + 1), repeat=len(instance.unjudged)):
        yield dict(zip(instance.unjudged, grades))


@pytest.mark.parametrize("example", ["AP", "AP@6", "AP(norm=min)@4", "AP(rel=2)@5"])
def test_parametric_bound_and_smallest_denominator_hold_against_enumeration(example):
    """Random graded, partially judged instances (the relevance limits left out: a relaxation): the
    parametric bound at several lam is at least each direction's largest difference, and the
    smallest denominator is at most every positive R (min(k, R)) of an assignment; the bound is
    below Dinkelbach's step at lam on some instances, so the test can tell them apart.  Cut short by
    its deadline after one multiplier it still bounds, more loosely."""
    metric = parse_metric(example)
    formulation = formulation_for(metric)
    checked = below = looser = 0
    for case, _ in oracle_cases(seed=31 + len(example), count=40, k=metric.cutoff or 6, max_unjudged=6):
        instance = build_instance(metric, case.a, case.b, case.judgments, max_grade=case.max_grade)
        rel = metric.p("rel")
        judged = judged_count(instance, rel)
        best = {"a": -np.inf, "b": -np.inf}
        smallest = np.inf
        for assignment in assignments(instance):
            for direction, value in instance.differences(assignment).items():
                best[direction] = max(best[direction], value)
            relevant = judged + sum(g >= rel for g in assignment.values())
            denominator = relevant if metric.cutoff is None or metric.p("norm") != "min" else min(metric.cutoff, relevant)
            if denominator > 0:
                smallest = min(smallest, denominator)
        assert formulation.min_denominator(instance) <= smallest
        for direction in ("a", "b"):
            for lam in (0.05, 0.3, max(best[direction], 0.01)):
                bound = formulation.parametric_bound(instance, direction, lam, roof_dual_bound)
                assert bound >= best[direction] - 1e-9, (example, case, direction, lam)
                # at a deadline already past: the envelope of the first multiplier alone, a bound as well
                cut = formulation.parametric_bound(instance, direction, lam, roof_dual_bound, deadline=0.0)
                assert cut >= bound - 1e-12 and cut >= best[direction] - 1e-9, (example, case, direction, lam)
                looser += cut > bound + 1e-6
                step, _ = formulation.relaxation_bound(instance, direction, lam, roof_dual_bound)
                below += bound < step - 1e-6
                checked += 1
    assert checked >= 200 and below >= 10 and looser >= 10


def test_a_model_too_large_ends_at_the_relaxations_bound(monkeypatch):
    """Interleaved rankings (no search nodes, a memory limit of 1 kB): where the roof dual does not
    settle a direction, the answer is the best difference found with the relaxation's bound,
    uncertified, details["stopped"] = "model too large", and the bound holds against enumeration;
    with the relaxation off the instance is refused (TooLargeError) as before."""
    import medopt.exact.relaxation as relaxation
    from medopt.errors import TooLargeError
    from medopt.formulations.precision.sums import PrecisionSums

    monkeypatch.setattr(relaxation, "MAX_NODES", 0)
    monkeypatch.setattr(relaxation, "UNTIMED_NODES", 0)  # nor any search after the model is refused
    without_count_boxes(monkeypatch)
    rng = np.random.default_rng(8)
    stopped = 0
    for trial in range(400):
        a, b = interleaved(rng, 10, int(rng.integers(5, 9)))
        judgments = {d: int(rng.integers(0, 2)) for d in a + b if rng.random() < 0.05}
        result = medopt.med("AP", a, b, judgments, memory_limit=1000)
        if result.certified:
            continue
        oracle = medopt.med("AP", a, b, judgments, method="enumerate")
        assert result.details["stopped"] == "model too large"
        assert result.value <= oracle.value + 1e-9 <= result.upper_bound + 2e-9
        assert result.upper_bound < 1
        stopped += 1
        if stopped == 5:
            break
    assert stopped >= 3
    monkeypatch.setattr(PrecisionSums, "relaxation_bound", None)
    with pytest.raises(TooLargeError):
        medopt.med("AP", a, b, judgments, memory_limit=1000)


def searched_on(monkeypatch, solve, seed: int, share: float, wanted: int):
    """The interleaved instances of the test above, with the first search over the roof dual given
    no nodes and a memory limit of 1 kB: (a, b, judgments, answer) for the first ``wanted`` of them
    whose refused direction was searched on (``solve(a, b, judgments)``: the answer), ``share`` of
    the documents judged."""
    import medopt.exact.relaxation as relaxation

    monkeypatch.setattr(relaxation, "MAX_NODES", 0)
    without_count_boxes(monkeypatch)
    rng = np.random.default_rng(seed)
    found = []
    for _ in range(400):
        a, b = interleaved(rng, 10, int(rng.integers(5, 9)))
        judgments = {d: int(rng.integers(0, 2)) for d in a + b if rng.random() < share}
        answer = solve(a, b, judgments)
        if answer.details.get("searched without a model"):
            found.append((a, b, judgments, answer))
            if len(found) == wanted:
                break
    assert len(found) == wanted
    return found


@pytest.mark.parametrize("metric, time_limit, wanted", [("AP", None, 6), ("AP", 30.0, 6), ("SSP@10", 30.0, 1),
                                                        ("AP(norm=min)@10", 30.0, 2)])
def test_a_model_too_large_is_searched_to_the_end(monkeypatch, metric, time_limit, wanted):
    """For AP, SSP and AP(norm=min): the direction whose model is refused is searched again with no
    node budget until its share of the time limit (UNTIMED_NODES without one), and the answers equal
    enumeration, certified (``wanted``: how many such searches each case checks)."""
    def solve(a, b, judgments):  # every answer certified, searched on or not
        result = medopt.med(metric, a, b, judgments, memory_limit=1000, time_limit=time_limit)
        assert result.certified and "stopped" not in result.details, result.details
        return result

    for a, b, judgments, result in searched_on(monkeypatch, solve, 8, 0.05, wanted):
        assert result.value == pytest.approx(medopt.med(metric, a, b, judgments, method="enumerate").value, abs=1e-9)


def test_both_ends_of_a_range_are_searched_to_the_end(monkeypatch):
    """The same for a difference range (each direction to its own optimum, below 0 too): both ends
    equal enumeration, certified, where a refused model's direction was searched on."""
    def solve(a, b, judgments):
        return medopt.difference_range("AP", a, b, judgments, memory_limit=1000, time_limit=30)

    for a, b, judgments, result in searched_on(monkeypatch, solve, 9, 0.1, 4):
        oracle = medopt.difference_range("AP", a, b, judgments, method="enumerate")
        assert result.certified, result.details
        assert (result.low, result.high) == pytest.approx((oracle.low, oracle.high), abs=1e-9)


def test_the_cap_of_ap_norm_min_is_dropped_only_where_it_cannot_bind():
    """AP(norm=min)@k with the judged relevant count plus the unjudged documents at most k: min(k, R)
    = R for every assignment, so relaxation_bound does without its capped roof dual
    (binding_cutoff None).  On random graded instances, the cap binding or not, the bound at several
    lam (below 0 too) is at least each direction's largest difference by enumeration, and the exact
    answer equals enumeration."""
    formulation = formulation_for(parse_metric("AP(norm=min)@6"))
    dropped = kept = 0
    for case, _ in oracle_cases(seed=77, count=60, k=6, max_unjudged=6):
        for k in (4, 6, 9):
            metric = parse_metric(f"AP(norm=min)@{k}")
            instance = build_instance(metric, case.a, case.b, case.judgments, max_grade=case.max_grade)
            reachable = judged_count(instance, 1) + len(instance.unjudged)
            cap = formulation.binding_cutoff(instance)
            assert (cap is None) == (reachable <= k)
            dropped, kept = dropped + (cap is None), kept + (cap is not None)
            best = {"a": -np.inf, "b": -np.inf}
            for assignment in assignments(instance):
                for direction, value in instance.differences(assignment).items():
                    best[direction] = max(best[direction], value)
            for direction in ("a", "b"):
                for lam in (-0.2, 0.0, 0.3, best[direction]):
                    bound, _ = formulation.relaxation_bound(instance, direction, lam, roof_dual_bound)
                    assert bound >= best[direction] - 1e-9, (case, k, direction, lam)
            result = medopt.med(str(metric), case.a, case.b, case.judgments, max_grade=case.max_grade)
            assert result.certified and result.value == pytest.approx(max(best.values()), abs=1e-9)
    assert dropped >= 30 and kept >= 30


def test_under_a_time_limit_a_large_model_is_searched_on_instead(monkeypatch):
    """A model predicted to need more than SEARCH_INSTEAD of the memory limit but within it: under a
    time limit the direction is searched on over the roof dual instead of built (no solve), the answer
    equal to enumeration, certified; without a time limit the same model is built and solved."""
    from medopt.exact.common import FIXED_BYTES
    from medopt.exact.driver import SEARCH_INSTEAD

    limit = int(FIXED_BYTES / (SEARCH_INSTEAD + 0.25))  # a small instance needs a little over FIXED_BYTES

    def solve(a, b, judgments):
        result = medopt.med("AP", a, b, judgments, memory_limit=limit, time_limit=30)
        assert result.certified and "stopped" not in result.details, result.details
        return result

    for a, b, judgments, result in searched_on(monkeypatch, solve, 9, 0.05, 4):
        assert result.details["solves"] == 0
        assert result.value == pytest.approx(medopt.med("AP", a, b, judgments, method="enumerate").value, abs=1e-9)
        untimed = medopt.med("AP", a, b, judgments, memory_limit=limit)
        assert untimed.certified and untimed.details["solves"] > 0, untimed.details
        assert "searched without a model" not in untimed.details
        assert untimed.value == pytest.approx(result.value, abs=1e-9)


@pytest.mark.parametrize("example", ["AP", "AP@6", "AP(norm=min)@4"])
def test_the_bisection_above_the_difference_reached_keeps_a_proven_bound(example):
    """exact/relaxation.bisected on random graded, partially judged instances, from differences
    reached below the maximum and the trivial bound: the bound it leaves is at least the direction's
    maximum (enumeration), never above where it started, and lower on many instances; every guess it
    keeps is re-scored (its value is the assignment's difference)."""
    from medopt.exact.relaxation import bisected

    metric = parse_metric(example)
    formulation = formulation_for(metric)
    lowered = checked = 0
    for case, instance, best in graded_instances(metric, seed=57 + len(example)):
        for direction in ("a", "b"):
            for below in (0.0, 0.05, 0.3):
                start = max(best[direction] - below, 0.0)
                quick, guesses, details = {direction: 1.0}, {direction: (-np.inf, None)}, {}
                bisected(formulation, instance, instance, direction, start, quick, guesses, details, None)
                assert best[direction] - 1e-9 <= quick[direction] <= 1.0, (example, case, direction, start)
                value, assignment = guesses[direction]
                if assignment is not None:
                    assert instance.differences(assignment)[direction] == pytest.approx(value, abs=1e-12)
                    assert value <= best[direction] + 1e-12
                lowered += quick[direction] < 1.0 - 1e-6
                checked += 1
    assert checked >= 200 and lowered >= checked // 2
