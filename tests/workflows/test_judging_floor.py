"""medopt.judging.floor: the floor is at most the true fewest judgments (brute force on small seeded
instances: every set of documents judged, in the lists or outside them, the exact ranges by
enumeration), the per-topic inequality of its proof holds, and it is not trivially 0."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

import medopt
from medopt.errors import MedoptError
from medopt.judging.floor import deviations, floor, pair_deviations

G = 2


def make_instance(seed: int):
    rng = random.Random(seed)
    metric = rng.choice(["nDCG@3", "AP@3", "nDCG@3", "AP@3", "P@3", "R@3"])
    topics = [f"t{i}" for i in range(rng.choice([2, 2, 3]))]
    runs = [f"r{i}" for i in range(rng.choice([2, 2, 3]))]
    rankings = {r: {} for r in runs}
    qrels, start = {}, {}
    share = rng.choice([0.0, 0.3])
    for t in topics:
        pool = [f"{t}d{i}" for i in range(4 if len(topics) == 3 else 5)]
        for r in runs:
            rankings[r][t] = rng.sample(pool, 3)
        outside = [f"{t}x{i}" for i in range(rng.choice([1, 2]))]  # relevant, in no list: only R / IDCG
        qrels[t] = {d: rng.choice([0, 1, 1, 2]) for d in pool if rng.random() < 0.6}
        qrels[t].update({d: rng.choice([1, 2]) for d in outside})
        start[t] = {d: g for d, g in sorted(qrels[t].items()) if rng.random() < share}
    pairs = list(itertools.combinations(runs, 2))
    return metric, rankings, pairs, topics, qrels, start


def brute_force(metric, rankings, pairs, topics, qrels, start, table):
    """{k: the fewest judgments beyond start with which k pairs are decided}, checking on the way
    the per-topic inequality s * low_t <= P_t - max_{d unjudged} delta_t(d)."""
    cache, levels = {}, [0, 0]

    def cell(pair, t, judged):
        a, b = rankings[pair[0]][t], rankings[pair[1]][t]
        key = (pair, t, frozenset(judged.items()))
        if key not in cache:
            result = medopt.difference_range(metric, a, b, judged, max_grade=G, method="enumerate")
            assert result.certified
            cache[key] = (result.low, result.high)
        return cache[key]

    per_topic = []
    for t in topics:
        in_lists = {d for r in rankings for d in rankings[r][t][:3]}
        candidates = sorted((in_lists | set(qrels[t])) - set(start[t]))
        options = []
        for size in range(len(candidates) + 1):
            for chosen in itertools.combinations(candidates, size):
                judged = dict(start[t], **{d: qrels[t].get(d, 0) for d in chosen})
                ranges, relaxed = [], []
                for pair in pairs:
                    low, high = cell(pair, t, judged)
                    ranges.append((low, high))
                    lists = set(rankings[pair[0]][t][:3]) | set(rankings[pair[1]][t][:3])
                    for s, end in ((1, low), (-1, -high)):
                        dev = table[pair, t][s]
                        unjudged = [dev.deltas.get(d, 0.0) for d in lists if d not in judged]
                        assert s * (low if s == 1 else high) <= dev.top - max(unjudged, default=0.0) + 1e-9
                        if dev.linear:  # step 2b: every unjudged document at its worst grade
                            assert s * (low if s == 1 else high) <= dev.linear.bound(
                                [d for d in lists if d not in judged]) + 1e-9
                            levels[1] += 1
                        if dev.outside and all(d in judged for d in dev.outside):  # step 1b
                            unjudged = [dev.deltas1.get(d, 0.0) for d in lists if d not in judged]
                            assert s * (low if s == 1 else high) <= dev.top1 - max(unjudged, default=0.0) + 1e-9
                            levels[0] += 1
                    relaxed.append([relaxed_bound(table[pair, t][s], lists, judged) for s in (1, -1)])
                options.append((size, ranges, relaxed))
        per_topic.append(options)
    return fewest_over_combinations(per_topic, len(pairs)), levels


def fewest_over_combinations(per_topic, pairs: int) -> dict:
    """Over every combination of one option per topic (its judged set): {k: the fewest judgments with
    which k pairs are decided (SPEC 7's verdict of the summed range)} and {("relaxed", k): the same for
    the relaxation's bounds}.  NumPy over the combinations, topic by topic: the sums are added in topic
    order, as Python's ``sum`` over a combination would, so every total is the same float."""
    sizes, lows, highs, relaxed = np.zeros(1, dtype=int), np.zeros((1, pairs)), np.zeros((1, pairs)), np.zeros((1, pairs, 2))
    for options in per_topic:
        size = np.array([option[0] for option in options])
        low = np.array([[end[0] for end in option[1]] for option in options]).reshape(len(options), pairs)
        high = np.array([[end[1] for end in option[1]] for option in options]).reshape(len(options), pairs)
        bound = np.array([option[2] for option in options]).reshape(len(options), pairs, 2)
        sizes = (sizes[:, None] + size[None, :]).reshape(-1)
        lows = (lows[:, None] + low[None, :]).reshape(-1, pairs)
        highs = (highs[:, None] + high[None, :]).reshape(-1, pairs)
        relaxed = (relaxed[:, None] + bound[None, :]).reshape(-1, pairs, 2)
    decided = ((lows > 0) | (highs < 0)).sum(axis=1)  # medopt.core.result.verdict(low, high) == "decided"
    held = (relaxed.max(axis=2) >= -1e-9).sum(axis=1)
    fewest = {}
    for k in range(1, pairs + 1):
        if (decided >= k).any():
            fewest[k] = int(sizes[decided >= k].min())
        if (held >= k).any():
            fewest["relaxed", k] = int(sizes[held >= k].min())
    return fewest


def relaxed_bound(dev, lists, judged):
    """The per-topic bounds u of side +1 and -1 (steps 2 and 2b): the relaxation the MILP solves."""
    values = [dev.linear.bound([d for d in lists if d not in judged])] if dev.linear else []
    for top, deltas in ((dev.top, dev.deltas), (dev.top1, dev.deltas1)):
        if deltas is not None and (deltas is dev.deltas or all(d in judged for d in dev.outside)):
            values.append(top - max([deltas.get(d, 0.0) for d in lists if d not in judged], default=0.0))
    return min(values)


def test_floor_is_at_most_the_true_fewest_judgments():
    nontrivial, compared, tight, second, linear = 0, 0, 0, 0, 0
    for seed in range(80):
        metric, rankings, pairs, topics, qrels, start = make_instance(seed)
        table = pair_deviations(metric, rankings, pairs, topics, qrels, start, max_grade=G)
        fewest, (checked, lines) = brute_force(metric, rankings, pairs, topics, qrels, start, table)
        second, linear = second + checked, linear + lines
        for k in range(1, len(pairs) + 1):
            bound = floor(metric, rankings, pairs, topics, qrels, start, k=k, max_grade=G, table=table)
            assert bound.optimal
            truth = fewest.get(k, math.inf)
            assert bound.judgments <= truth, (seed, metric, k, bound, truth)
            assert bound.judgments == fewest.get(("relaxed", k), math.inf)  # the MILP solves the relaxation
            compared += 1
            nontrivial += 0 < bound.judgments < math.inf
            tight += bound.judgments == truth
    print(f"\n{compared} floors: {nontrivial} above 0, {tight} equal to the true fewest; "
          f"{second} checks of step 1b's inequality, {linear} of step 2b's")
    assert nontrivial >= compared // 4 and second > 100 and linear > 1000


def test_pairs_required_by_name():
    """``decided``: requiring every pair when k is all of them changes nothing; requiring one pair,
    on either side, can only raise the floor for k = 1 (fewer judged sets qualify), and requiring it
    on a side it cannot be decided on makes the MILP infeasible or raises it too."""
    raised = 0
    for seed in range(12):
        metric, rankings, pairs, topics, qrels, start = make_instance(seed)
        table = pair_deviations(metric, rankings, pairs, topics, qrels, start, max_grade=G)
        common = dict(max_grade=G, table=table)
        every = floor(metric, rankings, pairs, topics, qrels, start, k=len(pairs), **common)
        named = floor(metric, rankings, pairs, topics, qrels, start, k=len(pairs),
                      decided={p: (1, -1) for p in pairs}, **common)
        assert (named.judgments, named.optimal) == (every.judgments, every.optimal)
        one = floor(metric, rankings, pairs, topics, qrels, start, k=1, **common)
        for sides in ((1, -1), (1,), (-1,)):
            forced = floor(metric, rankings, pairs, topics, qrels, start, k=1, decided={pairs[-1]: sides}, **common)
            assert forced.judgments >= one.judgments
            if forced.incumbent is not None:  # the required pair is among those decided, on a side allowed
                assert forced.sides.get(pairs[-1]) in sides
            raised += forced.judgments > one.judgments
    assert raised >= 3


def test_both_extremes_of_the_judgments_outside_matter():
    """Step 1 needs both ends: judging no relevant document outside the lists keeps IDCG small (the
    difference large), judging them all makes it large; a floor from one end alone can overshoot."""
    a, b = ["x", "y", "z"], ["y", "x", "w"]
    truth = {"x": 2, "y": 1, "out1": 2, "out2": 2}
    dev = deviations("nDCG@3", a, b, truth, {}, max_grade=2)
    alone = medopt.score("nDCG@3", a, {"x": 2, "y": 1}, max_grade=2) - medopt.score("nDCG@3", b, {"x": 2, "y": 1},
                                                                                   max_grade=2)
    assert dev[1].top == pytest.approx(alone)  # the larger difference: nothing judged outside
    assert dev[1].top > medopt.score("nDCG@3", a, truth, max_grade=2) - medopt.score("nDCG@3", b, truth, max_grade=2)


def test_other_metric_families_are_refused():
    with pytest.raises(MedoptError, match="judging floor"):
        deviations("Q@3", ["a"], ["b"], {}, max_grade=1)
    with pytest.raises(MedoptError, match="judging floor"):
        deviations("Rprec", ["a"], ["b"], {}, max_grade=1)
    with pytest.raises(MedoptError, match="assessor's grades"):
        deviations("nDCG@3", ["a"], ["b"], {"a": 1}, {"a": 2}, max_grade=2)


def test_a_pair_can_be_decided_against_the_sign_of_the_full_qrels():
    """Why the floor keeps both sides: AP@1, topic 1 has nine relevant documents outside the lists
    that nobody judges, topic 2 one judged at the start.  All the qrels give A - B = (0.1 - 0.5) / 2 < 0,
    yet judging the four documents of the lists decides the pair the other way (1 - 0.5 > 0)."""
    rankings = {"A": {"t1": ["a1"], "t2": ["a2"]}, "B": {"t1": ["b1"], "t2": ["b2"]}}
    qrels = {"t1": {"a1": 1, **{f"o{i}": 1 for i in range(9)}}, "t2": {"b2": 1, "o": 1}}
    start = {"t1": {}, "t2": {"o": 1}}
    full = sum(medopt.score("AP@1", rankings["A"][t], qrels[t], max_grade=1)
               - medopt.score("AP@1", rankings["B"][t], qrels[t], max_grade=1) for t in qrels)
    assert full == pytest.approx(-0.4)
    judged = {"t1": {"a1": 1, "b1": 0}, "t2": {"a2": 0, "b2": 1, "o": 1}}
    low = sum(medopt.difference_range("AP@1", rankings["A"][t], rankings["B"][t], judged[t], max_grade=1).low
              for t in qrels)
    assert low == pytest.approx(0.5)  # decided, A ahead
    result = floor("AP@1", rankings, [("A", "B")], ["t1", "t2"], qrels, start, k=1, max_grade=1)
    assert result.judgments <= 4
    table = pair_deviations("AP@1", rankings, [("A", "B")], ["t1", "t2"], qrels, start, max_grade=1)
    assert sum(table[("A", "B"), t][1].top for t in ("t1", "t2")) > 0  # the side + is kept
