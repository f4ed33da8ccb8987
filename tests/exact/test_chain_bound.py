"""The sums of precisions' chain bound (formulations/precision/chains.py), against enumeration on random
graded, partially judged instances: each direction's bound is never below its maximum, the difference it
reports is its assignment's, re-scored, and a direction whose bound meets that difference is at its
maximum; the exact driver's MED and both range ends, with the chains first, equal enumeration, and the
chains settle some instances alone; the allocations' bounds of the docstring hold on every pair of sets."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import medopt
from medopt.core.instance import build_instance
from medopt.formulations.precision import chains
from medopt.formulations.precision.chains import Chains, chain_bound
from medopt.metrics import parse_metric
from medopt.synthetic.random_instances import random_instance

from exact_cases import direction_maxima

METRICS = ("AP", "AP@5", "AP(rel=2)@6", "SP@6", "SSP@5")


def cases(seed: int, count: int, **options):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield random_instance(rng, max_unjudged=8, **options)


@pytest.mark.parametrize("metric", METRICS)
def test_bound_is_never_below_the_maximum(metric):
    """On 60 random instances per metric (grades up to 2, a fifth to four fifths judged, up to 8 unjudged):
    bound >= each direction's maximum, the value is the assignment's difference, and where the bound
    meets the value (within 1e-9) the value is the maximum; some directions are settled, some not."""
    parsed, settled, open_, checked = parse_metric(metric), 0, 0, 0
    for case in cases(11, 60, max_grade=int(parsed.p("rel")) if "rel" in parsed.PARAMS else None):
        instance = build_instance(parsed, case.a, case.b, case.judgments, max_grade=max(case.max_grade, 1))
        if not chains.applies(instance):
            continue
        maxima = direction_maxima(instance)
        scale = 1.0 / parsed.cutoff if parsed.family == "SSP" else 1.0
        for direction in ("a", "b"):
            bound, value, assignment = chain_bound(instance, direction, beat=-np.inf, scale=scale)
            assert bound >= maxima[direction] - 1e-12
            assert value == pytest.approx(instance.differences(assignment)[direction], abs=1e-12)
            assert value <= maxima[direction] + 1e-12
            if bound <= value + 1e-9:
                assert value == pytest.approx(maxima[direction], abs=1e-9)
                settled += 1
            else:
                open_ += 1
            checked += 1
    assert checked >= 40 and settled >= 5 and open_ >= 1


def test_linear_bounds_of_the_other_list_hold_on_every_pair_of_sets():
    """-SP(Y) <= C0 + c . t for the c, C0 of each allocation (1)-(4) at every T0 within V (the unjudged
    documents of both lists; the other unjudged documents of the points at random, lam at random), on
    every T within V, with equality at T = T0: 40 random pairs of lists."""
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(40):
        case = random_instance(rng, max_grade=1, max_unjudged=8, judged_fraction=0.3)
        instance = build_instance(parse_metric("AP"), case.a, case.b, case.judgments, max_grade=1)
        if not instance.unjudged:
            continue
        found = Chains(instance, "a")
        shared = np.flatnonzero(found.shared).tolist()
        n = len(instance.unjudged)

        def sp_y(t):  # SP of list B at T = t, summed rank by rank
            total, relevant = 0.0, 0
            for rank, d in enumerate(instance.b, start=1):
                here = instance.judgments[d] >= 1 if d in instance.judgments else \
                    bool(t[instance.unjudged.index(d)])
                relevant += here
                total += relevant / rank if here else 0.0
            return total

        for chosen in itertools.product((0, 1), repeat=len(shared)):
            b0 = rng.integers(0, 2, size=n).astype(np.float64)
            b0[shared] = chosen
            t0 = b0 * found.shared
            for which in (1, 2, 3, 4):
                c, constant = found.linear(b0, which, float(rng.random()))
                assert found.sp_y(t0) == pytest.approx(sp_y(t0), abs=1e-12)
                assert constant + c @ t0 == pytest.approx(-sp_y(t0), abs=1e-12)
                for other in itertools.product((0, 1), repeat=len(shared)):
                    t = np.zeros(n)
                    t[shared] = other
                    assert -sp_y(t) <= constant + c @ t + 1e-12
                    checked += 1
    assert checked > 1000


@pytest.mark.parametrize("metric", ("AP", "AP@6", "SP@6"))
def test_med_and_range_with_the_chains_equal_enumeration(metric):
    """medopt.med and difference_range by the exact driver (the chains first) on 40 random instances:
    the certified values equal enumeration's; the chains settle some of them alone."""
    by_chains = 0
    for case in cases(23, 40):
        args = (metric, case.a, case.b, case.judgments)
        med = medopt.med(*args, max_grade=case.max_grade, method="exact")
        ends = medopt.difference_range(*args, max_grade=case.max_grade, method="exact")
        oracle = medopt.difference_range(*args, max_grade=case.max_grade, method="enumerate")
        assert med.certified and med.value == pytest.approx(max(oracle.high, -oracle.low), abs=1e-9)
        assert ends.certified and ends.low == pytest.approx(oracle.low, abs=1e-9)
        assert ends.high == pytest.approx(oracle.high, abs=1e-9)
        by_chains += med.details.get("strategy") == "chains"
    assert by_chains >= 3
