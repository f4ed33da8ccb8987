"""A time-limited Q-measure answer carries the proven bound of the work done (exact.boxes.BoxRun,
exact.driver.solve_jointly): never below the true maximum, and below the trivial bound 1 once
both directions' boxes have been tested, though the search stopped before certifying.

The time limit is simulated by a clock that runs out after a fixed number of reads (StepClock),
so that the tests do not depend on the machine's speed: each count stops the search at another
point, and every such stop must still report a bound >= the enumeration oracle's value.
"""

import itertools

import pytest

import medopt
from medopt.exact import driver
from medopt.formulations.q import boxes as q_boxes
from medopt.kernels import bounds_by_count as q_quick
from medopt.core.instance import build_instance
from medopt.synthetic.random_instances import random_instances
from conftest import SHARED_DATA

DATA = SHARED_DATA / "dl-hard"


class StepClock:
    """A Clock (exact.common) whose time runs out after ``reads`` calls of remaining() or expired()."""

    def __init__(self, reads: int):
        self.deadline, self.reads = None, reads  # no deadline for model building (limits.until)

    def remaining(self):
        self.reads -= 1
        return 100.0 if self.reads > 0 else 0.0

    def expired(self) -> bool:
        return self.remaining() <= 0


@pytest.fixture
def step_clock(monkeypatch):
    """driver.Clock replaced by StepClock(reads) for the next solve: a function of reads."""
    def use(reads):
        monkeypatch.setattr(driver, "Clock", lambda time_limit: StepClock(reads))
    return use


def instances():
    """Binary and graded Q instances with enough unjudged documents that the boxes need models."""
    for n, case in enumerate(random_instances(seed=301, count=8, max_grade=1, k=7, max_unjudged=10)):
        yield ("Q@7", "Q(beta=0.5)@7")[n % 2], case.as_kwargs()
    for case in random_instances(seed=302, count=4, max_grade=2, k=6, max_unjudged=6):
        yield "Q@6", case.as_kwargs()


def test_time_limited_answers_bound_the_true_maximum(step_clock, monkeypatch):
    """At every stopping point the MED's bound is >= the true MED and each range end's bound holds
    (high_bound >= high, low_bound <= low); with enough reads the bound drops below 1 before the
    search is certified on some instances."""
    monkeypatch.setattr(q_boxes, "SMALL_BOX", 0)  # every box goes to its model: more steps to stop at
    below_one = 0
    for metric, kwargs in instances():
        oracle = medopt.difference_range(metric, **kwargs, method="enumerate")
        true_med = max(oracle.high, -oracle.low)
        for reads in (1, 3, 6, 10, 16, 25, 40, 60, 90):
            step_clock(reads)
            answer = medopt.med(metric, **kwargs, method="exact", solver="highs", time_limit=60)
            assert answer.upper_bound >= true_med - 1e-9, (metric, kwargs, reads, answer, true_med)
            assert answer.value <= true_med + 1e-9
            if not answer.certified and answer.upper_bound < 1 - 1e-9:
                below_one += 1
            step_clock(reads)
            ends = medopt.difference_range(metric, **kwargs, method="exact", solver="highs", time_limit=60)
            assert ends.high_bound >= oracle.high - 1e-9, (metric, kwargs, reads, ends, oracle)
            assert ends.low_bound <= oracle.low + 1e-9, (metric, kwargs, reads, ends, oracle)
    assert below_one > 0


def test_unlimited_search_is_still_exact(monkeypatch):
    """The joint search (both directions side by side) certifies the oracle's MED and range."""
    monkeypatch.setattr(q_boxes, "SMALL_BOX", 0)
    for metric, kwargs in instances():
        oracle = medopt.difference_range(metric, **kwargs, method="enumerate")
        answer = medopt.med(metric, **kwargs, method="exact", solver="highs")
        assert answer.certified and abs(answer.value - max(oracle.high, -oracle.low)) <= 1e-9
        ends = medopt.difference_range(metric, **kwargs, method="exact", solver="highs")
        assert ends.certified and abs(ends.high - oracle.high) <= 1e-9 and abs(ends.low - oracle.low) <= 1e-9


def test_closed_form_bounds_every_assignment():
    """q_quick.bounds_by_r: every assignment with R relevant documents has a difference <= bound(R),
    in both directions, by enumeration (G = 1..3, gain maps, rel = 2, several beta)."""
    checked = 0
    for seed, top in ((401, 1), (402, 2), (403, 3)):
        for n, case in enumerate(random_instances(seed=seed, count=30, max_grade=top, max_unjudged=8 if top == 1 else 5)):
            metric = ("Q@{}", "Q(beta=0.5)@{}", "Q(rel=2)@{}", "Q(beta=2.0)@{}")[n % (4 if top > 1 else 2)].format(case.k)
            gains = {0: 0.0, 1: 0.25, 2: 0.75} if top == 2 and n % 3 == 2 else None
            instance = build_instance(metric, case.a, case.b, case.judgments, max_grade=case.max_grade, gains=gains)
            rel = instance.metric.p("rel")
            judged = [instance.grading.cap(g) for g in instance.judgments.values()]
            for direction in "ab":
                bounds = q_quick.bounds_by_r(instance, direction)
                for grades in itertools.product(range(instance.max_grade + 1), repeat=len(instance.unjudged)):
                    relevant = sum(1 for g in list(grades) + judged if g >= rel)
                    if relevant == 0:
                        continue
                    difference = instance.differences(dict(zip(instance.unjudged, grades)))[direction]
                    assert difference <= bounds[relevant] + 1e-9, (metric, case, direction, grades, bounds)
                    checked += 1
    assert checked > 10_000


@pytest.mark.skipif(not DATA.exists(), reason="the DL-HARD runs are not under /work/shared/data")
@pytest.mark.parametrize("topic, judged", [("19335", False), ("86606", True)])
def test_dl_hard_time_limited_bound_is_below_one(topic, judged):
    """DL-HARD bm25 against bm25+rm3, Q(beta=1)@100 with 5 s, no judgments (G = 1) and the qrels (G = 3):
    not certified in that time, and the bound used to be the trivial 1 (the second direction got no
    time; on 86606 a root box LP alone takes ~7 s)."""
    from medopt.io.trec import read_qrels, read_run

    a = read_run(DATA / "baselines" / "doc" / "bm25.run").rankings[topic]
    b = read_run(DATA / "baselines" / "doc" / "bm25+rm3.run").rankings[topic]
    qrels = read_qrels(DATA / "dl_hard-doc.qrels")[topic] if judged else None
    answer = medopt.med("Q(beta=1)@100", a, b, qrels, method="exact", time_limit=5)
    assert answer.value <= answer.upper_bound < 1.0
