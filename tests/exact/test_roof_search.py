"""The exact search over the roof dual (solvers/roof_search.py) and its use by the exact driver: the
integer roof dual's labels are persistent, the search's maximum is the enumeration's (with
implications, floors and coefficients off the grid), a budget-limited search still bounds the
maximum, and every MED and range end settled through it stays the enumeration's."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import medopt
from medopt.metrics import parse_metric
from medopt.solvers.roof_dual import integer_roof_dual
from medopt.solvers.roof_search import maximise

from exact_cases import assert_med_and_ends_are


def random_form(rng, n_max=9):
    n = int(rng.integers(1, n_max + 1))
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.5]
    implications = [(i, j) for i in range(n) for j in range(n) if i != j and rng.random() < 0.08]
    first = np.array([p[0] for p in pairs], dtype=np.int64)
    second = np.array([p[1] for p in pairs], dtype=np.int64)
    scale = float(rng.choice([0.01, 1.0, 100.0]))
    return (n, float(rng.normal()), rng.normal(size=n), first, second, rng.normal(size=len(pairs)) * scale,
            (np.array([i for i, _ in implications], dtype=np.int64), np.array([j for _, j in implications], dtype=np.int64)))


def feasible_points(n, implications):
    low, high = implications
    for bits in itertools.product((0, 1), repeat=n):
        b = np.array(bits)
        if np.all(b[low] <= b[high]):
            yield b


def value(b, constant, linear, first, second, weights):
    return constant + float(linear @ b) + float(weights @ (b[first] * b[second]))


def test_integer_roof_dual_bounds_the_maximum_and_its_labels_keep_one():
    """Weak persistency, checked: some maximiser agrees with every labelled variable (and the bound
    holds), on 600 random integer forms with implications; on many the labels fix variables."""
    rng = np.random.default_rng(11)
    labelled = 0
    for _ in range(600):
        n, _, linear, first, second, weights, implications = random_form(rng)
        linear, weights = 2 * np.rint(linear * 50).astype(np.int64), 2 * np.rint(weights * 50).astype(np.int64)
        bound, labels = integer_roof_dual(n, linear, first, second, weights, implications)
        points = list(feasible_points(n, implications))
        best = max(value(b, 0, linear, first, second, weights) for b in points)
        agreeing = max(value(b, 0, linear, first, second, weights) for b in points
                       if np.all((labels < 0) | (labels == b)))
        assert bound >= best and agreeing == best
        labelled += int((labels >= 0).sum())
    assert labelled >= 1000


def test_search_is_the_enumerations_maximum():
    """maximise against enumeration on 1,500 random forms (coefficients off the grid, three scales,
    implications): the maximiser is feasible and attains the maximum, and the bound exceeds it by
    at most the grid's distance; with a floor below the maximum the bound still holds and the
    point found reaches the floor or the maximum; with a budget of 1 node the bound still holds."""
    rng = np.random.default_rng(5)
    for trial in range(1500):
        n, constant, linear, first, second, weights, implications = random_form(rng)
        best = max(value(b, constant, linear, first, second, weights) for b in feasible_points(n, implications))
        tolerance = 1e-9 * max(1.0, abs(best), float(np.abs(weights).sum()))
        bound, b = maximise(n, constant, linear, first, second, weights, implications, budget=[10 ** 6])
        assert np.all(b[implications[0]] <= b[implications[1]])
        assert value(b, constant, linear, first, second, weights) == pytest.approx(best, abs=tolerance)
        assert best <= bound <= best + tolerance
        floor = best - abs(float(rng.normal()))
        bound, b = maximise(n, constant, linear, first, second, weights, implications, floor=floor, budget=[10 ** 6])
        assert best <= bound <= max(best, floor) + tolerance
        bound, _ = maximise(n, constant, linear, first, second, weights, implications, budget=[1])
        assert bound >= best


def test_search_nodes_come_out_of_the_shared_budget():
    rng = np.random.default_rng(3)
    budget = [7]
    for _ in range(20):
        n, constant, linear, first, second, weights, implications = random_form(rng)
        bound, _ = maximise(n, constant, linear, first, second, weights, implications, budget=budget)
        assert bound >= max(value(b, constant, linear, first, second, weights)
                            for b in feasible_points(n, implications))
    assert budget == [0]


def without_count_boxes(monkeypatch) -> None:
    """The AP directions that the roof dual does not settle go to the exact search over it, as they did
    before the branch and bound over the relevant count (exact/count_boxes.py, tested in
    tests/exact/test_count_boxes.py), so that these tests still reach the search."""
    import medopt.exact.relaxation as relaxation

    monkeypatch.setattr(relaxation, "count_boxes_apply", lambda *args: False)
    monkeypatch.setattr(relaxation, "count_boxes", lambda *args, **options: False)


def interleaved_cases(rng, trials: int):
    """(trial, G, A, B, judgments) for ``trials`` interleaved pairs: depth 10 with G = 1, or depth 7 with
    G = 2 for every third, a few documents judged."""
    for trial in range(trials):
        max_grade = 1 if trial % 3 else 2
        k = 10 if max_grade == 1 else 7
        a, b = interleaved(rng, k, int(rng.integers(k // 2, k - 1)))
        judgments = {d: int(rng.integers(0, max_grade + 1)) for d in a + b if rng.random() < 0.05}
        yield trial, max_grade, a, b, judgments


def interleaved(rng, k: int, shared: int):
    """Two rankings of depth k that hold ``shared`` documents in the same order, each with its own
    documents at random ranks: one re-ranker over two first stages, where the roof dual's LP is
    often not tight (DL-HARD's bm25+t5 against bm25+rm3+t5)."""
    def ranking(tag):
        own = iter(f"{tag}{i}" for i in range(k - shared))
        common = iter(f"s{i}" for i in range(shared))
        slots = set(rng.choice(k, size=k - shared, replace=False).tolist())
        return [next(own) if rank in slots else next(common) for rank in range(k)]
    return ranking("a"), ranking("b")


@pytest.mark.parametrize("example", ["AP", "AP(norm=min)@8", "SSP@10"])
def test_med_and_range_ends_settled_through_the_search_are_the_enumerations(example, monkeypatch):
    """Interleaved rankings of depth 10 (up to 14 unjudged documents) or, graded, 7, a few documents
    judged: MED and both range ends against enumeration, on every instance where the search ran (at
    least 3, drawn from up to 300, or 600 for SSP, whose search runs more rarely) and on every
    tenth of the others (the count's boxes off: ``without_count_boxes``)."""
    without_count_boxes(monkeypatch)
    metric = parse_metric(example)
    rng = np.random.default_rng(sum(map(ord, example)))
    searched = 0
    for trial, max_grade, a, b, judgments in interleaved_cases(rng, 600 if metric.family == "SSP" else 300):
        med = medopt.med(metric, a, b, judgments, max_grade=max_grade, method="exact")
        ends = medopt.difference_range(metric, a, b, judgments, max_grade=max_grade, method="exact")
        ran = med.details.get("searched", 0) + ends.details.get("searched", 0)
        if not ran and trial % 10:
            continue
        oracle = medopt.difference_range(metric, a, b, judgments, max_grade=max_grade, method="enumerate")
        assert_med_and_ends_are(med, ends, oracle)
        searched += bool(ran)
        if searched >= 5 and trial >= 60:
            break
    assert searched >= 3


@pytest.mark.parametrize("example", ["AP", "AP(norm=min)@40"])
def test_search_agrees_with_the_models_at_depth_40(example, monkeypatch):
    """Interleaved rankings of depth 40, too many unjudged documents to enumerate: on instances where
    the search ran (at least 3, drawn from up to 150), the MED and range ends equal the models'
    (the relaxation switched off), all certified (the count's boxes off: ``without_count_boxes``)."""
    from medopt.formulations.precision.sums import PrecisionSums

    without_count_boxes(monkeypatch)
    rng = np.random.default_rng(40 + len(example))
    cases = []
    for _ in range(150):
        a, b = interleaved(rng, 40, int(rng.integers(20, 39)))
        judgments = {d: int(rng.integers(0, 2)) for d in a + b if rng.random() < 0.05}
        med = medopt.med(example, a, b, judgments, method="exact")
        ends = medopt.difference_range(example, a, b, judgments, method="exact")
        if med.details.get("searched", 0) + ends.details.get("searched", 0):
            cases.append((a, b, judgments, med, ends))
            if len(cases) == 4:
                break
    assert len(cases) >= 3
    monkeypatch.setattr(PrecisionSums, "relaxation_bound", None)
    for a, b, judgments, med, ends in cases:
        models = medopt.difference_range(example, a, b, judgments, method="exact")
        assert med.certified and ends.certified and models.certified
        assert med.value == pytest.approx(max(models.high, -models.low), abs=1e-9)
        assert (ends.low, ends.high) == pytest.approx((models.low, models.high), abs=1e-9)
