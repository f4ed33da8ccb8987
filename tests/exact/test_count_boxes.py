"""The branch and bound over the relevant count (exact/count_boxes.py), its boxes tested by the
decomposition into the two lists (kernels/precision_chains.py, exact/lagrangian.decomposition_bound)
and by the roof dual with the count's rows (kernels/box_rows.py): each list's dynamic programme
is its exact maximum, the decomposition never bounds a box below its maximum, every row holds on its
box, the bound the search leaves is never below the direction's maximum (enumeration), and a direction
it settles is settled at the maximum; MED and both range ends through it equal enumeration, with either
test alone or both."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import medopt
import medopt.exact.count_boxes as count_boxes_module
from medopt.exact.count_boxes import DEFLECTION, CountSearch, count_boxes
from medopt.exact.lagrangian import rows_bound
from medopt.formulations import formulation_for
from medopt.kernels.box_rows import CountRows, complete
from medopt.formulations.precision.bounds import relevance_chains, relevance_quadratic
from medopt.kernels.precision_chains import chain_max
from medopt.metrics import parse_metric
from medopt.core.reductions import reduce

from exact_cases import assert_med_and_ends_are, graded_instances
from test_roof_search import interleaved_cases


def _sum_of_precisions(chain, b):
    """SP of one chain (kind, index, J) at the unjudged relevances b, summed rank by rank."""
    kind, index, _ = chain
    total, relevant = 0.0, 0
    for rank, (k, d) in enumerate(zip(kind.tolist(), index.tolist()), start=1):
        here = k == 1 or (k == 2 and b[d] == 1)
        relevant += here
        total += relevant / rank if here else 0.0
    return total


def test_chain_max_is_each_lists_maximum():
    """On random lists of up to 9 ranks over 8 unjudged documents (some ranked in neither list's part,
    judged documents of both kinds between them), both signs, random weights and every interval
    lo..hi: chain_max's value is the largest sign SP(b) + w . b over the b of the interval (every b
    scored), and its b reaches it; an empty interval gives -inf."""
    rng = np.random.default_rng(3)
    n, checked = 8, 0
    points = np.array(list(itertools.product((0, 1), repeat=n)), dtype=np.int64)
    for _ in range(25):
        ranks = int(rng.integers(1, 10))
        kind = rng.choice([0, 1, 2, 2, 2], size=ranks).astype(np.int64)
        index = np.full(ranks, -1, dtype=np.int64)
        index[kind == 2] = rng.permutation(n)[: int((kind == 2).sum())] if (kind == 2).sum() <= n else 0
        kind[(kind == 2) & (np.cumsum(kind == 2) > n)] = 0
        chain = (kind, index, np.cumsum(kind == 1).astype(np.int64))
        weights = rng.normal(scale=0.5, size=n)
        for sign in (1.0, -1.0):
            values = np.array([sign * _sum_of_precisions(chain, b) for b in points]) + points @ weights
            for lo in range(n + 1):
                for hi in range(lo, n + 1):
                    inside = (points.sum(axis=1) >= lo) & (points.sum(axis=1) <= hi)
                    value, b = chain_max(*chain, weights, sign, lo, hi)
                    assert value == pytest.approx(values[inside].max(), abs=1e-9)
                    assert lo <= b.sum() <= hi
                    assert sign * _sum_of_precisions(chain, b) + b @ weights == pytest.approx(value, abs=1e-9)
                    checked += 1
    assert checked == 25 * 2 * 45
    assert chain_max(*chain, weights, 1.0, 3, 2)[0] == -math.inf


@pytest.mark.parametrize("example", ["AP", "AP(norm=min)@4", "AP(rel=2)@5"])
def test_decomposition_bounds_every_box(example, monkeypatch):
    """Random graded, partially judged instances: relevance_chains' two sums of precisions are
    relevance_quadratic's N at every assignment, and CountSearch.decomposition's bound of N - lam D over
    each box lo..hi of the relevant count is at least its maximum there (every assignment scored), from
    multipliers 0 and from random ones, with 1 and 30 steps; where the two parts agree it is that
    maximum."""
    metric = parse_metric(example)
    formulation = formulation_for(metric)
    rng = np.random.default_rng(len(example))
    boxes = tight = 0
    for _, instance, best in graded_instances(metric, seed=5 + len(example), count=15):
        n = len(instance.unjudged)
        if n == 0 or metric.p("rel") > instance.max_grade:
            continue
        points = np.array(list(itertools.product((0, 1), repeat=n)), dtype=np.int64)
        for direction in "ab":
            constant, linear, first, second, weights = relevance_quadratic(instance, direction)
            numerators = constant + points @ linear + (points[:, first] * points[:, second]) @ weights
            favoured, other = relevance_chains(instance, direction)
            assert np.allclose(numerators, [_sum_of_precisions(favoured, b) - _sum_of_precisions(other, b)
                                            for b in points])
            search = CountSearch(formulation, instance, direction, 1.0)
            lam = max(best[direction], 0.0)
            counts = points.sum(axis=1)
            for lo in range(n + 1):
                for hi in range(lo, n + 1):
                    capped = search.cap is not None and search.judged + lo >= search.cap
                    if search.cap is not None and not capped and search.judged + hi > search.cap:
                        continue  # a box the search never makes (D changes inside it)
                    denominators = search.cap if capped else search.judged + counts
                    inside = (counts >= lo) & (counts <= hi)
                    top = (numerators - lam * denominators)[inside].max()
                    for start, steps in ((None, 1), (None, 30), (rng.normal(size=n), 30)):
                        monkeypatch.setattr(count_boxes_module, "DECOMPOSITION_STEPS", steps)
                        bound, points_found, _ = search.decomposition(lo, hi, lam, capped, start, None)
                        assert bound >= top - 1e-9, (example, direction, lo, hi)
                        if np.array_equal(*points_found):
                            tight += 1
                            assert bound == pytest.approx(top, abs=1e-9)
                    boxes += 1
    assert boxes >= 200 and tight >= 20


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


@pytest.mark.parametrize("tests", ["both", "decomposition", "rows always", "first slice"])
@pytest.mark.parametrize("example", ["AP", "AP(norm=min)@8"])
def test_med_and_range_ends_through_the_count_boxes_are_the_enumerations(example, tests, monkeypatch):
    """Interleaved rankings (the roof dual often not tight; a few documents judged), the search over the
    roof dual given no nodes: MED and both range ends against enumeration on every instance where the
    count's boxes ran (at least 5, drawn from up to 300), all certified; with the boxes' tests as
    chosen, with the decomposition alone (no rows: MAX_PAIRS 0), with the rows after every
    decomposition that leaves a box open (STALL -1), and with the first slice of decomposition tests
    (3 of them, then the search, then the boxes resumed) in every direction (FIRST_UNJUDGED 0)."""
    import medopt.exact.relaxation as relaxation

    monkeypatch.setattr(relaxation, "MAX_NODES", 0)
    if tests == "decomposition":
        monkeypatch.setattr(count_boxes_module, "MAX_PAIRS", 0)
    elif tests == "rows always":
        monkeypatch.setattr(count_boxes_module, "STALL", -1.0)
    elif tests == "first slice":
        monkeypatch.setattr(relaxation, "FIRST_UNJUDGED", 0)
        monkeypatch.setattr(relaxation, "FIRST_TESTS", 3)
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


FIRST_CALL = """
import numpy as np
from medopt.kernels.precision_chains import FIRST_CALL, chain_max, ready
before = (ready(None), ready(FIRST_CALL - 0.5), ready(FIRST_CALL))
chain = np.array([2], dtype=np.int64)
chain_max(chain, np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(1), 1.0, 0, 1)
print(*before, ready(0.0))
"""


def test_the_kernel_is_not_first_called_without_time_for_its_compile():
    """In a fresh interpreter the compiled loops are not loaded: ready() refuses a time left below
    FIRST_CALL (a compile no deadline can interrupt) and accepts no limit or enough time; once called,
    any time left will do."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", FIRST_CALL], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True", "False", "True", "True"]
