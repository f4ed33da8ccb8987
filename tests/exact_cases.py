"""Seeded random instances, with and without side constraints, for the exact-vs-oracle tests."""

import itertools

import numpy as np
import pytest

from medopt.core.instance import RelevanceLimit, build_instance
from medopt.synthetic.random_instances import random_instance


def oracle_cases(seed: int, count: int, **options):
    """Yield (case, limits): a third of the cases carry a random relevance limit."""
    rng = np.random.default_rng(seed)
    for index in range(count):
        case = random_instance(rng, **options)
        limits = ()
        if index % 3 == 2:
            grade = int(rng.integers(1, case.max_grade + 1))
            if rng.random() < 0.5:
                limits = (RelevanceLimit(grade=grade, high=int(rng.integers(0, 3))),)
            else:
                limits = (RelevanceLimit(grade=grade, low=int(rng.integers(1, 4))),)
        yield case, limits


def graded_instances(metric, seed: int, count: int = 40):
    """(case, instance, its direction_maxima) for ``count`` oracle_cases of ``metric`` (depth its cutoff or
    6, at most 6 unjudged documents), built without their relevance limits."""
    for case, _ in oracle_cases(seed=seed, count=count, k=metric.cutoff or 6, max_unjudged=6):
        instance = build_instance(metric, case.a, case.b, case.judgments, max_grade=case.max_grade)
        yield case, instance, direction_maxima(instance)


def direction_maxima(instance) -> dict:
    """Each direction's largest difference over every assignment of grades 0..G (on instances built
    without relevance limits)."""
    return {direction: value for direction, (value, _) in looped_best(instance).items()}


def looped_best(instance) -> dict:
    """{direction: (its largest difference, the first assignment reaching it)} over every assignment of
    grades 0..G that meets the instance's relevance limits, each asked of ``Instance.differences``: a
    loop with nothing remembered, to check the enumeration oracle against."""
    best = {}
    for grades in itertools.product(range(instance.max_grade + 1), repeat=len(instance.unjudged)):
        assignment = dict(zip(instance.unjudged, grades))
        if instance.satisfies_limits(assignment):
            for direction, value in instance.differences(assignment).items():
                if direction not in best or value > best[direction][0]:
                    best[direction] = (value, assignment)
    return best


def assert_med_and_ends_are(med, ends, oracle) -> None:
    """A certified MED and difference range equal to the enumeration's range ``oracle``."""
    assert med.certified and med.value == pytest.approx(max(oracle.high, -oracle.low), abs=1e-9)
    assert ends.certified and ends.low == pytest.approx(oracle.low, abs=1e-9)
    assert ends.high == pytest.approx(oracle.high, abs=1e-9)
