"""Judging with a relevance model (``medopt.judging.confident``): the confidence stop, the ``expected``
policy checked by enumeration, MTC's weights checked against the metric, the simulation's determinism
and the errors.

The oracle enumerates every grading of a pair's unjudged documents on every topic, each weighted by
its probability under ``uniform(p)``, and computes P(mean > 0) and P(mean < 0) exactly, before and
with a candidate fixed at each grade: the one-step values of the module docstring, exactly.
"""

from __future__ import annotations

import itertools
import math
import random
import subprocess
import sys

import pytest

import medopt
from medopt.core.result import TOLERANCE
from medopt.errors import MedoptError
from medopt.judging.confident import mtc_weight
from medopt.judging.next import Judging
from medopt.judging.simulation import simulate


def exact_sides(state, pair, fixed=None, p=0.4):
    """(P(mean > 0), P(mean < 0)) of ``pair`` under uniform(p), by enumeration; ``fixed``: (topic, doc, grade)."""
    per_topic = []
    for topic in state.topics:
        instance = state.cells[pair, topic].instance
        docs, top = instance.unjudged, instance.max_grade
        atoms = []
        for grades in itertools.product((0, top), repeat=len(docs)):
            assignment = dict(zip(docs, grades))
            weight = math.prod(p if g else 1 - p for g in grades)
            if fixed and fixed[0] == topic and fixed[1] in assignment:
                if assignment[fixed[1]] != fixed[2]:
                    continue
                weight /= p if fixed[2] else 1 - p
            score_a, score_b = instance.scores(assignment)
            atoms.append((score_a - score_b, weight))
        per_topic.append(atoms)
    positive = negative = 0.0
    for combination in itertools.product(*per_topic):
        mean = sum(d for d, _ in combination) / len(state.topics)
        weight = math.prod(w for _, w in combination)
        positive += weight * (mean > TOLERANCE)
        negative += weight * (mean < -TOLERANCE)
    return positive, negative


def exact_values(state, p=0.4):
    """{(topic, doc): (expected fall of wrong decisions, expected fall of the sign's Gini impurity)}."""
    values = {}
    for topic in state.topics:
        for doc, pairs in state.candidates(topic).items():
            fall = smooth = 0.0
            for pair in pairs:
                top = state.cells[pair, topic].instance.max_grade
                up, down = exact_sides(state, pair, p=p)
                sides = {g: exact_sides(state, pair, (topic, doc, g), p) for g in (0, top)}
                weights = {0: 1 - p, top: p}
                fall += (1 - max(up, down)) - sum(weights[g] * (1 - max(sides[g])) for g in sides)
                smooth += gini(up, down) - sum(weights[g] * gini(*sides[g]) for g in sides)
            values[topic, doc] = (fall, smooth)
    return values


def gini(up, down):
    return 1 - up ** 2 - down ** 2 - (1 - up - down) ** 2


def small_state(rng, metric, p=0.4, **options):
    pool = [f"d{i}" for i in range(6)]
    topics = ["t1", "t2"]
    rankings = {name: {t: tuple(rng.sample(pool, 3)) for t in topics} for name in ("x", "y")}
    judgments = {t: {d: rng.randint(0, 1) for d in pool if rng.random() < 0.3} for t in topics}
    return Judging(metric, rankings, topics, judgments, max_grade=1, model=f"uniform(p={p})", **options)


# the values' tolerance: exact for P@k (its grid holds every value), sampled else
@pytest.mark.parametrize("metric, tolerance", [("P@3", 1e-9), ("DCG@3", 0.02), ("nDCG@3", 0.02), ("AP@3", 0.02),
                                               ("RR@3", 0.02)])
def test_expected_picks_a_best_one_step_choice(metric, tolerance):
    rng = random.Random(f"confident {metric}")
    checked = 0
    for _ in range(12):
        state = small_state(rng, metric, policy_draws=40000)
        if not state.open_pairs():
            continue
        assert state.belief.exact_linear(state.pairs[0]) == (metric == "P@3")
        values = exact_values(state)
        rows = state.select("expected", budget=len(values))
        assert {(r["topic"], r["docid"]) for r in rows} == set(values)
        for row in rows:  # the values are (or estimate) the exact ones
            fall, smooth = values[row["topic"], row["docid"]]
            assert row["value"] == pytest.approx(smooth, abs=tolerance)
            assert row["bound"] == pytest.approx(fall, abs=tolerance)
            assert row["value"] >= 0 and row["bound"] >= 0
        best = max(smooth for _, smooth in values.values())
        # a best one-step choice (up to the values' error; exactly for P@k)
        assert values[rows[0]["topic"], rows[0]["docid"]][1] >= best - 2 * tolerance
        assert min(v for pair in values.values() for v in pair) >= -1e-12  # Jensen: never negative
        checked += 1
    assert checked >= 6


def test_exact_values_on_more_topics_and_grades():
    """P@k's exact one-step values against enumeration with three topics and graded judgments (G = 2)."""
    rng = random.Random("exact graded")
    checked = 0
    for _ in range(8):
        pool = [f"d{i}" for i in range(5)]
        topics = ["t1", "t2", "t3"]
        rankings = {name: {t: tuple(rng.sample(pool, 3)) for t in topics} for name in ("x", "y")}
        judgments = {t: {d: rng.randint(0, 2) for d in pool if rng.random() < 0.3} for t in topics}
        state = Judging("P@3", rankings, topics, judgments, max_grade=2, model="uniform(p=0.3)")
        if not state.open_pairs():
            continue
        values = exact_values(state, p=0.3)
        rows = state.select("expected", budget=len(values))
        for row in rows:
            fall, smooth = values[row["topic"], row["docid"]]
            assert (row["value"], row["bound"]) == (pytest.approx(smooth, abs=1e-9), pytest.approx(fall, abs=1e-9))
        assert values[rows[0]["topic"], rows[0]["docid"]][1] == pytest.approx(max(v[1] for v in values.values()),
                                                                             abs=1e-9)
        checked += 1
    assert checked >= 4


def test_the_stop_is_the_favoured_probability_at_the_confidence():
    rng = random.Random("stop")
    seen = set()
    for _ in range(20):
        state = small_state(rng, "P@3")
        if not state.open_pairs():
            continue
        pair = state.pairs[0]
        up, down = exact_sides(state, pair)
        if abs(up - down) < 1e-9:  # neither sign favoured more than the other
            continue
        sign, confidence, p_a_better = state.belief.favoured(pair)
        assert p_a_better == pytest.approx(up, abs=1e-12)  # P@k is computed exactly
        assert confidence == pytest.approx(max(up, down), abs=1e-12) and sign == (1 if up >= down else -1)
        for level in (0.6, 0.75, 0.9):
            if abs(max(up, down) - level) < 1e-9:
                continue
            again = Judging("P@3", state.rankings, state.topics, state.judgments, max_grade=1,
                            model="uniform(p=0.4)", confidence=level)
            assert (pair in again.open_pairs()) == (max(up, down) < level)
            seen.add(max(up, down) < level)
            if pair not in again.open_pairs():
                assert again.decisions[pair] == (sign, "confidence", pytest.approx(max(up, down)))
    assert seen == {True, False}


@pytest.mark.parametrize("metric", ["AP@4", "AP", "P@3", "DCG@4", "nDCG@4"])
def test_mtc_weight_is_the_change_of_the_difference(metric):
    """AP: w_i = c_ii + sum over judged relevant j of c_ij is the change of R * (AP_A - AP_B) when i turns
    relevant (R the relevant count), the identity MTC's weights rest on; P, DCG: the change itself."""
    rng = random.Random(f"mtc {metric}")
    for _ in range(30):
        pool = [f"d{i}" for i in range(8)]
        a, b = tuple(rng.sample(pool, 5)), tuple(rng.sample(pool, 5))
        judgments = {d: rng.randint(0, 1) for d in pool if rng.random() < 0.4}
        state = Judging(metric, {"x": {"t": a}, "y": {"t": b}}, ["t"], {"t": judgments}, max_grade=1)
        instance = state.cells[("x", "y"), "t"].instance
        relevant = sum(1 for g in judgments.values() if g > 0)
        for doc in instance.unjudged:
            before = instance.scores({})
            after = instance.scores({doc: 1})
            if metric.startswith("AP"):
                change = (relevant + 1) * (after[0] - after[1]) - relevant * (before[0] - before[1])
            elif metric.startswith("nDCG"):
                continue
            else:
                change = (after[0] - after[1]) - (before[0] - before[1])
            assert mtc_weight(instance, doc) == pytest.approx(change, abs=1e-12)


def test_mtc_ranks_by_weight_and_refuses_other_families():
    state = Judging("P@2", {"x": {"t": ("a", "b")}, "y": {"t": ("a", "c")}}, ["t"], {"t": {}})
    rows = state.select("mtc", budget=3)
    assert [r["docid"] for r in rows][:2] in (["b", "c"], ["c", "b"]) and rows[-1]["docid"] == "a"
    assert rows[-1]["value"] == 0
    with pytest.raises(MedoptError, match="mtc policy"):
        Judging("ERR@2", {"x": {"t": ("a", "b")}, "y": {"t": ("a", "c")}}, ["t"], {"t": {}}).select("mtc")
    with pytest.raises(MedoptError, match="needs a relevance model"):
        state.select("expected")


def test_simulation_with_a_model_is_deterministic_and_records_decisions():
    rng = random.Random(11)
    pool = [f"d{i}" for i in range(14)]
    topics = [f"t{i}" for i in range(3)]
    rankings = {name: {t: tuple(rng.sample(pool, 6)) for t in topics} for name in ("x", "y", "z")}
    qrels = {t: {d: rng.randint(0, 1) for d in pool if rng.random() < 0.5} for t in topics}
    pairs = [("x", "y"), ("x", "z")]
    for policy, model in (("expected", "rank"), ("mtc", "uniform(p=0.3)"), ("depth", "rank")):
        runs = [simulate("nDCG@5", rankings, pairs, topics, qrels, policy=policy, start=0.25, batch=2, seed=3,
                         model=model, confidence=0.9) for _ in range(2)]
        strip = [[{k: v for k, v in r.items() if k != "selection_seconds"} for r in run] for run in runs]
        assert strip[0] == strip[1]
        last = runs[0][-1]
        assert last["done"] == len(last["decisions"])
        assert all(how in ("worst case", "confidence") and sign in (-1, 1) for sign, how in last["decisions"].values())


def test_bad_model_inputs_fail_in_one_line(tmp_path):
    run, other = tmp_path / "x.run", tmp_path / "y.run"
    run.write_text("1 Q0 a 1 3 x\n1 Q0 b 2 2 x\n")
    other.write_text("1 Q0 b 1 3 y\n1 Q0 d 2 2 y\n")
    probabilities = tmp_path / "p.txt"
    probabilities.write_text("1 a 0.5\n1 b high\n")
    good = subprocess.run([sys.executable, "-m", "medopt.cli", "judge-next", str(run), str(other), "-m", "P@2",
                           "--model", "uniform(p=0.3)", "--confidence", "0.9"], capture_output=True, text=True)
    assert good.returncode == 0, good.stderr
    assert "confidence" in good.stderr and good.stdout.splitlines()[0].endswith("p_pair,why")
    for args, where in [(("--model", str(probabilities)), "p.txt:2"), (("--model", "uniform(p=2)"), "p"),
                        (("--policy", "expected"), "relevance model"), (("--model", "rank", "--target", "0.1"),
                                                                        "target")]:
        failed = subprocess.run([sys.executable, "-m", "medopt.cli", "judge-next", str(run), str(other), "-m", "P@2",
                                 *args], capture_output=True, text=True)
        assert failed.returncode == 2, (args, failed.stderr)
        lines = failed.stderr.strip().splitlines()
        assert len(lines) == 1 and where in lines[0], (args, failed.stderr)
    with pytest.raises(MedoptError, match="confidence"):
        medopt.judge_next([str(run), str(other)], None, "P@2", model="uniform(p=0.3)", confidence=1.5)


def rank_state(rng, **options):
    pool = [f"d{i}" for i in range(8)]
    topics = ["t1", "t2", "t3"]
    rankings = {name: {t: tuple(rng.sample(pool, 4)) for t in topics} for name in ("x", "y")}
    judgments = {t: {d: rng.randint(0, 1) for d in pool if rng.random() < 0.4} for t in topics}
    return Judging("P@4", rankings, topics, judgments, max_grade=1, model="rank", **options)


def test_the_stop_is_the_mean_over_the_bootstrap_fits():
    """P(sign) is the mean of the bootstrap fits' exact P@k probabilities; one draw is the point fit."""
    from medopt.relevance import mean_distribution, topic_terms

    rng = random.Random("mixture")
    for _ in range(6):
        state = rank_state(rng, model_draws=5)
        belief, pair = state.belief, state.pairs[0]
        assert len(belief.models) == 5
        exact = [mean_distribution([topic_terms(state.cells[pair, t].instance, m, t) for t in state.topics])
                 for m in belief.models]
        assert all(r.method == "exact" for r in exact)
        got = belief.distribution(pair)
        assert got.p_positive == pytest.approx(sum(r.p_positive for r in exact) / 5, abs=1e-12)
        assert got.p_negative_interval[0] == pytest.approx(sum(r.p_negative for r in exact) / 5, abs=1e-12)
        single = Judging("P@4", state.rankings, state.topics, state.judgments, max_grade=1, model="rank",
                         model_draws=1).belief
        point = mean_distribution([topic_terms(state.cells[pair, t].instance, single.model, t) for t in state.topics])
        assert single.distribution(pair).p_positive == pytest.approx(point.p_positive, abs=1e-12)


def test_a_topic_weight_counts_as_copies_of_the_topic():
    from medopt.relevance import fit_rank_model

    rng = random.Random("weights")
    pool = [f"d{i}" for i in range(10)]
    runs = [{t: tuple(rng.sample(pool, 6)) for t in ("a", "b")} for _ in range(2)]
    qrels = {t: {d: rng.randint(0, 2) for d in pool if rng.random() < 0.6} for t in ("a", "b")}
    copied = [dict(run, c=run["a"]) for run in runs]  # topic a twice
    weighted = fit_rank_model(runs, qrels, 2, topic_weights={"a": 2.0, "b": 1.0})
    duplicated = fit_rank_model(copied, dict(qrels, c=qrels["a"]), 2)
    assert weighted.table == pytest.approx(duplicated.table, abs=1e-12)


def test_fit_start_false_fits_on_the_judgments_made_since_the_start():
    rng = random.Random("fit start")
    state = rank_state(rng, fit_start=False, model_draws=1)
    assert state.belief.model is None and state.open_pairs()  # the start's judgments are not fitted
    topic = state.topics[0]
    doc = next(iter(state.candidates(topic)))
    state.judge(topic, {doc: 1})
    assert state.belief.model.fit["judged"] == sum(doc in state.rankings[n][topic] for n in state.rankings)
    everything = Judging("P@4", state.rankings, state.topics, state.judgments, max_grade=1, model="rank",
                         model_draws=1)
    assert everything.belief.model.fit["judged"] > state.belief.model.fit["judged"]
