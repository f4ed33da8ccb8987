"""The branch and bound over the relevant count with its rows in the roof dual (exact/count_boxes.py,
formulations/count_rows.py): every row holds on its box, the bound it leaves is never below the
direction's maximum (enumeration), and a direction it settles is settled at the maximum; MED and both
range ends through it equal enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import medopt
from medopt.exact.count_boxes import DEFLECTION, count_boxes
from medopt.exact.lagrangian import rows_bound
from medopt.formulations import formulation_for
from medopt.formulations.count_rows import CountRows, complete
from medopt.metrics import parse_metric
from medopt.reductions import reduce

from exact_cases import assert_med_and_ends_are, graded_instances
from test_roof_search import interleaved_cases


def test_rows_hold_on_their_box_and_complete_keeps_the_form():
    """On every b of 7 variables and every box lo..hi containing sum(b): each active row is >= 0 with
    y = b_d b_e, and zero at lo = hi for the upper and lower rows; ``complete`` leaves the form's value
    unchanged at every b."""
    rng = np.random.default_rng(5)
    n = 7
    first = rng.integers(0, n, 12)
    second = (first + rng.integers(1, n, 12)) % n
    weights = rng.normal(size=12)
    every_first, every_second, every_weight = complete(n, first, second, weights)
    assert len(every_first) == n * (n - 1) // 2 and np.all(every_first < every_second)
    rows = CountRows(n, every_first, every_second)
    for bits in itertools.product((0, 1), repeat=n):
        b = np.array(bits, dtype=float)
        assert np.isclose((weights * b[first] * b[second]).sum(),
                          (every_weight * b[every_first] * b[every_second]).sum())
        y = b[every_first] * b[every_second]
        m = int(b.sum())
        for lo in range(m + 1):
            for hi in range(m, n + 1):
                box = rows.at(lo, hi)
                values = box.constant + box.L @ b + box.coefficient * b[box.d_rel] + box.S @ y
                assert np.all(values[box.active] >= -1e-12), (bits, lo, hi)
                if lo == hi:
                    assert np.allclose(values[2:], 0.0)


def test_deflected_steps_bound_the_box_and_take_another_path():
    """rows_bound with deflected steps (exact/lagrangian.py, as the count boxes run it) on random forms of
    7 variables and every box lo..hi: its bound is at least the form's maximum over the b of the box
    (enumeration), as the plain steps' is, and the deflection changes the multipliers on some boxes."""
    rng = np.random.default_rng(11)
    n, differ, boxes = 7, 0, 0
    points = np.array(list(itertools.product((0, 1), repeat=n)), dtype=float)
    counts = points.sum(axis=1)
    for _ in range(12):
        first = rng.integers(0, n, 15)
        second = (first + rng.integers(1, n, 15)) % n
        first, second, weights = complete(n, first, second, rng.normal(size=15))
        linear, constant = rng.normal(size=n), float(rng.normal())
        form = (n, constant, linear, first, second, weights, None)
        values = constant + points @ linear + (points[:, first] * points[:, second]) @ weights
        rows = CountRows(n, first, second)
        for lo in range(n + 1):
            for hi in range(lo, n + 1):
                inside = (counts >= lo) & (counts <= hi)
                plain, _, plain_nu = rows_bound(form, rows.at(lo, hi), steps=10)
                deflected, _, deflected_nu = rows_bound(form, rows.at(lo, hi), steps=10, deflect=DEFLECTION)
                assert plain >= values[inside].max() - 1e-9 and deflected >= values[inside].max() - 1e-9
                boxes += 1
                differ += not np.allclose(plain_nu, deflected_nu)
    assert boxes == 12 * 36 and differ >= 5  # 8 with this seed


@pytest.mark.parametrize("example", ["AP", "AP@6", "AP(norm=min)@4", "AP(rel=2)@5"])
def test_bound_holds_and_a_settled_direction_is_at_its_maximum(example):
    """Random graded, partially judged instances (relevance limits left out: count_boxes does not apply
    to them), from differences reached below the maximum: the bound left in ``quick`` is at least the
    direction's maximum, and where the search settles the direction the difference reached (a
    re-scored guess) is the maximum; on the reduced instance too.  Most are settled."""
    metric = parse_metric(example)
    formulation = formulation_for(metric)
    checked = settled = 0
    for case, instance, best in graded_instances(metric, seed=71 + len(example)):
        for direction, below, reduced_too in itertools.product("ab", (0.0, 0.05, 0.3), (False, True)):
            start = max(best[direction] - below, 0.0)
            reduced = reduce(instance, direction, reaches_positive=start > 0) if reduced_too else instance
            quick, guesses, details = {direction: 1.0}, {direction: (-np.inf, None)}, {}
            done = count_boxes(formulation, instance, reduced, direction, start, quick, guesses, details, None)
            assert quick[direction] >= best[direction] - 1e-9, (example, case, direction, start)
            value, assignment = guesses[direction]
            if assignment is not None:
                assert instance.differences(assignment)[direction] == pytest.approx(value, abs=1e-12)
            if done:
                assert max(start, value) >= best[direction] - 1e-9, (example, case, direction, start)
                settled += 1
            checked += details.get("count boxes", 0) > 0
    assert checked >= 150 and settled >= checked // 2


@pytest.mark.parametrize("example", ["AP", "AP(norm=min)@8"])
def test_med_and_range_ends_through_the_count_boxes_are_the_enumerations(example, monkeypatch):
    """Interleaved rankings (the roof dual often not tight; a few documents judged), the search over the
    roof dual given no nodes (it settles such small instances before the count's boxes would run): MED
    and both range ends against enumeration on every instance where the count's boxes ran (at least 5,
    drawn from up to 300), all certified."""
    import medopt.exact.relaxation as relaxation

    monkeypatch.setattr(relaxation, "MAX_NODES", 0)
    rng = np.random.default_rng(sum(map(ord, example)) + 3)
    ran = 0
    for _, max_grade, a, b, judgments in interleaved_cases(rng, 300):
        med = medopt.med(example, a, b, judgments, max_grade=max_grade, method="exact")
        ends = medopt.difference_range(example, a, b, judgments, max_grade=max_grade, method="exact")
        if not med.details.get("count boxes", 0) + ends.details.get("count boxes", 0):
            continue
        oracle = medopt.difference_range(example, a, b, judgments, max_grade=max_grade, method="enumerate")
        assert_med_and_ends_are(med, ends, oracle)
        ran += 1
        if ran >= 6:
            break
    assert ran >= 5
