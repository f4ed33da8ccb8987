"""Each reduction of reductions.reduce keeps an optimum (property tests against enumeration).

For every direction whose maximum is >= 0, the best assignment that obeys the reduction
(fixed documents at their grade, grade(d) >= grade(e) for each dominance pair) must reach
the unrestricted maximum; the reduction may only lose directions that cannot hold the MED
(a maximum of 0 when the other direction's is positive).
"""

import itertools

import numpy as np
import pytest

from medopt.core.instance import build_instance
from medopt.core.reductions import reduce
from exact_cases import oracle_cases

METRICS = ["P@{k}", "DCG@{k}", "SDCG@{k}", "RBP(p=0.8)", "nDCG@{k}", "nDCG", "SSP@{k}", "AP@{k}",
           "AP(norm=min)@{k}", "RR@{k}", "ERR@{k}", "ERR", "Q@{k}"]


def best(instance, direction, keep=lambda assignment: True):
    docs = instance.unjudged
    top = -float("inf")
    for grades in itertools.product(range(instance.max_grade + 1), repeat=len(docs)):
        assignment = dict(zip(docs, grades))
        if instance.satisfies_limits(assignment) and keep(assignment):
            top = max(top, instance.differences(assignment)[direction])
    return top


def obeys(reduced):
    def keep(assignment):
        if any(assignment[d] != g for d, g in reduced.fixed.items()):
            return False
        return all(assignment[d] >= assignment[e] for d, e in reduced.dominance)
    return keep


def reductions_keep_the_maximum(cases, metric_of) -> int:
    """For every case and direction: the reduced instance's best equals the full one's, or the
    direction cannot hold the MED (its maximum is 0 and the other's positive: shared_ends may lose a
    maximum of 0, a stopping document in the prefix).  Returns how many directions were reduced."""
    reduced_somewhere = 0
    for case, limits in cases:
        metric = metric_of(case)
        instance = build_instance(metric, case.a, case.b, case.judgments, max_grade=case.max_grade, limits=limits)
        if best(instance, "a") == -float("inf"):
            continue  # no assignment meets the limits
        for direction in ("a", "b"):
            reduced = reduce(instance, direction)
            full = best(instance, direction)
            if reduced is instance or full < 0:
                continue
            reduced_somewhere += 1
            kept = best(instance, direction, obeys(reduced))
            assert kept == pytest.approx(full, abs=1e-12) or (
                full == 0 and best(instance, "b" if direction == "a" else "a") > 0), (metric, case, limits)
            for d, e in reduced.dominance:
                assert reduced.dominates(d, e)
    return reduced_somewhere


@pytest.mark.parametrize("template", METRICS)
def test_reductions_keep_the_maximum(template):
    cases = oracle_cases(seed=len(template) * 7919, count=60, max_unjudged=7)
    reduced_somewhere = reductions_keep_the_maximum(cases, lambda case: template.format(k=case.k))
    if not template.startswith("Q"):
        assert reduced_somewhere > 10


def test_ndcg_fixes_documents_whose_net_weight_is_not_positive():
    instance = build_instance("nDCG@3", ["d1", "d2", "d3"], ["d3", "d2", "d4"], {}, max_grade=2)
    # direction a: d2 has the same discount in both lists, d3 and d4 weigh more in B: all at grade 0
    assert reduce(instance, "a").fixed == {"d2": 0, "d3": 0, "d4": 0}
    assert reduce(instance, "b").fixed == {"d1": 0, "d2": 0}
    from medopt.core.instance import RelevanceLimit
    limited = build_instance("nDCG@3", ["d1", "d2", "d3"], ["d3", "d2", "d4"], {}, max_grade=2,
                             limits=[RelevanceLimit(grade=1, low=2)])
    assert reduce(limited, "a").fixed == {}  # an "at least" limit may need them relevant


def shared_ends_cases(seed, count):
    """Pairs of lists with a common prefix, a middle part (the same set or not) and a common suffix."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        docs = [f"d{i}" for i in range(9)]
        rng.shuffle(docs)
        head, middle, tail = (int(n) for n in (rng.integers(0, 3), rng.integers(2, 4), rng.integers(0, 3)))
        prefix, rest = docs[:head], docs[head:]
        middle_a = rest[:middle]
        if rng.random() < 0.5:
            middle_b = list(rng.permutation(middle_a))  # the same set: the suffix cancels
        else:
            middle_b = rest[middle:2 * middle]
        suffix = rest[2 * middle:2 * middle + tail]
        max_grade = int(rng.integers(1, 3))
        judged = [d for d in docs if rng.random() < 0.25]
        judgments = {d: int(rng.integers(0, max_grade + 1)) for d in judged}
        yield prefix + middle_a + suffix, prefix + list(middle_b) + suffix, judgments, max_grade


@pytest.mark.parametrize("metric", ["ERR", "RR", "ERR@{k}"])
def test_shared_ends_keep_the_maximum(metric):
    """The common prefix and suffix fixed at 0 keep every direction that can hold the MED, and the
    exact driver (which applies it) returns the enumerated MED; the cases are built to have them."""
    from medopt.core.reductions import shared_ends
    from medopt.exact.driver import exact
    from medopt.methods import exact_settings
    fixed_somewhere = 0
    for a, b, judgments, max_grade in shared_ends_cases(seed=len(metric) * 131, count=80):
        instance = build_instance(metric.format(k=len(a) - 1), a, b, judgments, max_grade=max_grade)
        full = {d: best(instance, d) for d in ("a", "b")}
        for direction, other in (("a", "b"), ("b", "a")):
            reduced = reduce(instance, direction)
            ends = set(shared_ends(instance.a, instance.b)) & set(instance.unjudged)
            assert ends <= set(reduced.fixed) and all(reduced.fixed[d] == 0 for d in ends)
            fixed_somewhere += bool(ends)
            kept = best(instance, direction, obeys(reduced))
            # equal, or this direction cannot hold the MED (the other one is strictly larger)
            assert kept == pytest.approx(full[direction], abs=1e-12) or full[other] > full[direction] + 1e-12
        if instance.a != instance.b:
            result = exact(instance, solver="highs", strategy=exact_settings(instance, "highs")[1])
            assert result.certified and result.value == pytest.approx(max(full.values()), abs=1e-9)
    assert fixed_somewhere > 40


def test_shared_ends_finds_prefix_and_suffix():
    from medopt.core.reductions import shared_ends
    assert shared_ends(("p", "q", "x", "y", "s"), ("p", "q", "y", "x", "s")) == ("p", "q", "s")
    assert shared_ends(("p", "x", "y", "s"), ("p", "y", "z", "s")) == ("p",)  # {x, y} != {y, z}: no suffix
    assert shared_ends(("p", "x", "s"), ("p", "x", "s")) == ("p", "x", "s")
    assert shared_ends(("x", "s"), ("y", "s", "t")) == ()
