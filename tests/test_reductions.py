"""Each dominance reduction of Instance.reduced keeps an optimum (property tests against enumeration).

For every direction whose maximum is >= 0, the best assignment that obeys the reduction
(fixed documents at their grade, grade(d) >= grade(e) for each dominance pair) must reach
the unrestricted maximum; the reduction may only lose directions that cannot hold the MED.
"""

import itertools

import pytest

from medopt.instance import build_instance
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


@pytest.mark.parametrize("template", METRICS)
def test_reductions_keep_the_maximum(template):
    reduced_somewhere = 0
    for case, limits in oracle_cases(seed=len(template) * 7919, count=60, max_unjudged=7):
        metric = template.format(k=case.k)
        instance = build_instance(metric, case.a, case.b, case.judgments, max_grade=case.max_grade, limits=limits)
        if best(instance, "a") == -float("inf"):
            continue  # no assignment meets the limits
        for direction in ("a", "b"):
            reduced = instance.reduced(direction)
            full = best(instance, direction)
            if reduced is instance or full < 0:
                continue
            reduced_somewhere += 1
            assert best(instance, direction, obeys(reduced)) == pytest.approx(full, abs=1e-12), (metric, case, limits)
            for d, e in reduced.dominance:
                assert reduced.dominates(d, e)
    if not template.startswith("Q"):
        assert reduced_somewhere > 10


def test_ndcg_fixes_documents_whose_net_weight_is_not_positive():
    instance = build_instance("nDCG@3", ["d1", "d2", "d3"], ["d3", "d2", "d4"], {}, max_grade=2)
    # direction a: d2 has the same discount in both lists, d3 and d4 weigh more in B: all at grade 0
    assert instance.reduced("a").fixed == {"d2": 0, "d3": 0, "d4": 0}
    assert instance.reduced("b").fixed == {"d1": 0, "d2": 0}
    from medopt.instance import RelevanceLimit
    limited = build_instance("nDCG@3", ["d1", "d2", "d3"], ["d3", "d2", "d4"], {}, max_grade=2,
                             limits=[RelevanceLimit(grade=1, low=2)])
    assert limited.reduced("a").fixed == {}  # an "at least" limit may need them relevant
