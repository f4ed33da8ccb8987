"""The Q-measure boxes' roof dual test (formulations/q_roof.py, exact/lagrangian.py, exact/boxes.py
``BoxRun.roof_test``) against enumeration: the quadratic form is R (difference - lam) on every
assignment of a one-profile box and at least that on a wider one, the Lagrangian bound is at least
every R (difference - lam) in the box, and MED with the test on equals enumeration."""

from __future__ import annotations

import itertools

import numpy as np

import medopt
from medopt.errors import MedoptError
from medopt.exact.lagrangian import lagrangian_bound
from medopt.formulations import formulation_for
from medopt.instance import build_instance
from test_exact_q import (graded_instances, in_box, profile_of, random_box, roots_and_assignments,
                          shared_rank_instances, small_boxes)


def form_value(form, z):
    n, constant, linear, first, second, weights, _ = form
    return constant + float(linear @ z) + float(weights @ (z[first] * z[second]))


def z_of(quadratic, assignment):
    """z[d,g] = [grade(d) >= g] in BoxForm's order."""
    return np.array([float(assignment[d] >= g) for d in quadratic.unjudged for g in range(1, quadratic.grades + 1)])


def instances():
    yield from graded_instances(seed=301, count=40)
    yield from shared_rank_instances(seed=302, count=10)
    yield build_instance("Q(beta=1)@4", ["d1", "d2", "d3", "d4"], ["d3", "d5", "d1", "x"], {"x": 3, "d4": 1},
                         max_grade=3)


def test_form_is_the_box_objective_and_the_lagrangian_bounds_it():
    rng = np.random.default_rng(303)
    exact_profiles = boxes = strict = 0
    for instance in instances():
        formulation = formulation_for(instance.metric)
        rel = instance.metric.p("rel")
        roots, everything = roots_and_assignments(formulation, instance)
        if not roots:
            continue
        for direction in ("a", "b"):
            quadratic = formulation.box_quadratic(instance, direction)
            if quadratic is None:  # nothing can be relevant: no box to test
                continue
            for attempt in range(5):
                box = roots[0].box if attempt == 0 else random_box(rng, instance, roots[0])
                if box is None:
                    continue
                if attempt == 4:  # one profile: the box's own
                    inside = [a for a in everything if in_box(profile_of(instance, a), box)]
                    profile = profile_of(instance, inside[int(rng.integers(len(inside)))])
                    box = tuple((g, profile[g], profile[g]) for g, _, _ in box)
                lam = float(rng.uniform(-0.3, 0.8))
                form = quadratic.form(box, lam)
                inside = [a for a in everything if in_box(profile_of(instance, a), box)]
                assert inside
                one = all(lo == hi for _, lo, hi in box)
                needed = -np.inf
                for a in inside:
                    target = profile_of(instance, a)[rel] * (instance.differences(a)[direction] - lam)
                    value = form_value(form, z_of(quadratic, a))
                    if one:
                        assert abs(value - target) <= 1e-9, (instance.metric, box, direction, a)
                    else:
                        assert value >= target - 1e-9, (instance.metric, box, direction, a)
                    needed = max(needed, target)
                    assert quadratic.assignment(z_of(quadratic, a).astype(np.int8)) == a
                bound, labels, _ = lagrangian_bound(form, quadratic.counts(box))
                assert bound >= needed - 1e-9, (instance.metric, box, direction, lam)
                # without the intervals the plain roof dual is a bound too, never below the Lagrangian's
                free, *_ = lagrangian_bound(form, [])
                assert free >= bound - 1e-9
                strict += free > bound + 1e-6
                exact_profiles += one
                boxes += 1
    assert boxes >= 250 and exact_profiles >= 50
    assert strict >= 10, "the multipliers never lowered a bound: the intervals are not used"


def test_med_with_roof_tests_is_enumeration():
    """The box search with the roof dual tests (the default) against enumeration, ranges included, and
    the tests do run (the log holds their entries)."""
    from medopt.exact import boxes

    seen = []
    original = boxes.BoxRun.roof_test

    def counting(self, case, inherited, cutoff):
        outcome = original(self, case, inherited, cutoff)
        seen.append(outcome is None)
        return outcome

    boxes.BoxRun.roof_test = counting
    try:
        checked = 0
        for instance in itertools.chain(graded_instances(seed=304, count=24), shared_rank_instances(seed=305, count=6)):
            kwargs = dict(a=instance.a, b=instance.b, judgments=instance.judgments, max_grade=instance.max_grade,
                          limits=instance.limits)
            metric = str(instance.metric)
            try:
                oracle = medopt.med(metric, **kwargs, method="enumerate")
            except MedoptError:  # no assignment meets the limits
                continue
            ends = medopt.difference_range(metric, **kwargs, method="enumerate")
            with small_boxes(0):
                exact = medopt.med(metric, **kwargs, method="exact", solver="highs")
                found = medopt.difference_range(metric, **kwargs, method="exact", solver="highs")
            assert abs(exact.value - oracle.value) <= 1e-9 and exact.certified, (metric, exact, oracle)
            assert abs(found.low - ends.low) <= 1e-9 and abs(found.high - ends.high) <= 1e-9, (metric, found, ends)
            assert found.low_certified and found.high_certified, (metric, found)
            checked += 1
    finally:
        boxes.BoxRun.roof_test = original
    assert checked >= 25
    assert sum(seen) >= 20, "the roof dual closed or split too few boxes to be tested"


def test_improve_locally_ends_at_a_one_move_optimum():
    """improve_locally: the difference it returns is the evaluator's for the assignment it offers, never
    below the start's, and no single document's other grade beats it (limits kept)."""
    from medopt.exact.common import DirectionResult, improve_locally

    rng = np.random.default_rng(306)
    checked = raised = 0
    for instance in graded_instances(seed=307, count=30):
        if not instance.unjudged:
            continue
        for direction in ("a", "b"):
            start = {d: int(rng.integers(0, instance.max_grade + 1)) for d in instance.unjudged}
            result = DirectionResult()
            value = improve_locally(result, instance, direction, start)
            if not instance.satisfies_limits(start):
                assert value == -np.inf and result.assignment is None
                continue
            assert value >= instance.differences(start)[direction] - 1e-12
            assert result.value == value == instance.differences(result.assignment)[direction]
            assert instance.satisfies_limits(result.assignment)
            for d in instance.unjudged:
                for g in range(instance.max_grade + 1):
                    moved = {**result.assignment, d: g}
                    if instance.satisfies_limits(moved):
                        assert instance.differences(moved)[direction] <= value + 1e-12
            raised += value > instance.differences(start)[direction] + 1e-12
            checked += 1
    assert checked >= 40 and raised >= 10


def test_improve_locally_at_the_deadline_offers_its_best_point(monkeypatch):
    """Stopped by the deadline in mid-pass, improve_locally offers the best point it reached (its value
    the evaluator's) and lets OutOfTime through."""
    import pytest

    from medopt.exact import common
    from medopt.limits import OutOfTime

    instance = build_instance("Q(beta=1)@6", ["d1", "d2", "d3", "d4", "d5", "d6"], ["d6", "d5", "x", "d1", "d2", "y"],
                              {"x": 2}, max_grade=2)
    calls = []

    def deadline():
        calls.append(1)
        if len(calls) > 4:
            raise OutOfTime

    monkeypatch.setattr(common, "check_time", deadline)
    result = common.DirectionResult()
    start = dict.fromkeys(instance.unjudged, 0)
    with pytest.raises(OutOfTime):
        common.improve_locally(result, instance, "a", start)
    assert result.assignment is not None
    assert result.value == instance.differences(result.assignment)["a"] > instance.differences(start)["a"]
