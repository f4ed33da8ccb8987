"""Which documents to judge next (``medopt.judging.next``): lookahead checked by enumeration.

On small seeded instances (three runs, two topics, graded and binary metrics, partial judgments), every
candidate's one-step value is computed here by brute force: each pair's range by enumerating every
grading of its unjudged documents, then with the candidate judged at each grade.  ``lookahead``'s
documents must be best one-step choices with exactly those values; the pruning bound must never be
below a value.  Then: policies' orders, the simulation's determinism, and the command's errors.
"""

from __future__ import annotations

import itertools
import math
import random
import subprocess
import sys

import pytest

import medopt
from medopt.errors import MedoptError
from medopt.judging.next import Judging, judge_next
from medopt.judging.simulation import decided_at, judgments_for_share, simulate
from medopt.metrics import parse_metric

METRICS = ["AP@3", "nDCG@3", "P@3", "RR", "ERR@4", "AP"]


def brute_range(metric, a, b, judgments, max_grade):
    metric = parse_metric(metric)
    depth_a, depth_b = metric.depth(len(a)), metric.depth(len(b))
    unjudged = sorted({d for d in (*a[:depth_a], *b[:depth_b]) if d not in judgments})
    low, high = math.inf, -math.inf
    for grades in itertools.product(range(max_grade + 1), repeat=len(unjudged)):
        full = dict(judgments, **dict(zip(unjudged, grades)))
        diff = medopt.score(metric, a, full, max_grade=max_grade) - medopt.score(metric, b, full, max_grade=max_grade)
        low, high = min(low, diff), max(high, diff)
    return low, high, unjudged


def brute_values(metric, rankings, topics, judgments, max_grade, target=None):
    """{(topic, doc): one-step value} by enumeration, over the pairs not yet done."""
    objective = (lambda lo, hi: max(hi, -lo)) if target is not None else (lambda lo, hi: hi - lo)
    pairs = list(itertools.combinations(rankings, 2))
    ranges = {(p, t): brute_range(metric, rankings[p[0]][t], rankings[p[1]][t], judgments[t], max_grade)
              for p in pairs for t in topics}

    def done(p):
        lows = [ranges[p, t][0] for t in topics]
        highs = [ranges[p, t][1] for t in topics]
        if target is not None:
            return sum(max(h, -lo) for lo, h in zip(lows, highs)) / len(topics) <= target
        return sum(lows) / len(topics) > 0 or sum(highs) / len(topics) < 0

    open_pairs = [p for p in pairs if not done(p)]
    values = {}
    for t in topics:
        docs = {d for p in open_pairs for d in ranges[p, t][2]}
        for doc in docs:
            worst = math.inf
            for grade in range(max_grade + 1):
                total = 0.0
                for p in open_pairs:
                    if doc not in ranges[p, t][2]:
                        continue
                    lo, hi, _ = ranges[p, t]
                    lo_g, hi_g, _ = brute_range(metric, rankings[p[0]][t], rankings[p[1]][t],
                                                dict(judgments[t], **{doc: grade}), max_grade)
                    total += objective(lo, hi) - objective(lo_g, hi_g)
                worst = min(worst, total)
            values[t, doc] = worst / len(topics)
    return values


def small_case(rng):
    pool = [f"d{i}" for i in range(7)]
    topics = ["t1", "t2"]
    rankings = {name: {t: tuple(rng.sample(pool, rng.randint(2, 4))) for t in topics} for name in ("x", "y", "z")}
    max_grade = rng.choice([1, 2])
    judgments = {t: {d: rng.randint(0, max_grade) for d in pool if rng.random() < 0.3} for t in topics}
    return rankings, topics, judgments, max_grade


@pytest.mark.parametrize("metric", METRICS)
def test_lookahead_is_a_best_one_step_choice(metric):
    rng = random.Random(f"judging {metric}")
    checked = 0
    for _ in range(6):
        rankings, topics, judgments, max_grade = small_case(rng)
        target = 0.05 if rng.random() < 0.3 else None
        values = brute_values(metric, rankings, topics, judgments, max_grade, target)
        state = Judging(metric, rankings, topics, judgments, max_grade=max_grade, target=target, method="exact")
        rows = state.select("lookahead", budget=3)
        assert len(rows) == min(3, len(values))
        for row in rows:  # each value is the enumeration's, and nothing left out beats it
            assert row["value"] == pytest.approx(values[row["topic"], row["docid"]], abs=1e-9)
        chosen = {(r["topic"], r["docid"]) for r in rows}
        if rows:
            assert rows[0]["value"] == pytest.approx(max(values.values()), abs=1e-9)
            assert min(r["value"] for r in rows) >= max([v for k, v in values.items() if k not in chosen],
                                                         default=-1) - 1e-9
        for (topic, doc), value in values.items():  # the pruning bound is an upper bound
            affected = state.candidates(topic)[doc]
            assert state.bound(topic, doc, affected) >= value - 1e-9
            assert state.value(topic, doc, affected) == pytest.approx(value, abs=1e-9)
        checked += bool(values)
    assert checked >= 3


def test_depth_and_random_orders():
    rankings = {"x": {"t": ("a", "b", "c")}, "y": {"t": ("c", "d", "e")}}
    state = Judging("P@3", rankings, ["t"], {"t": {}})
    assert [r["docid"] for r in state.select("depth", budget=5)] == ["a", "c", "b", "d", "e"]
    first = [r["docid"] for r in state.select("random", budget=5, seed=3)]
    assert first == [r["docid"] for r in state.select("random", budget=5, seed=3)]
    assert sorted(first) == ["a", "b", "c", "d", "e"]
    assert len(state.select("depth", budget=5, per_topic=2)) == 2


def test_a_decided_pair_asks_for_nothing():
    rankings = {"x": {"t": ("r1", "r2", "u")}, "y": {"t": ("n1", "n2", "u")}}
    judgments = {"t": {"r1": 1, "r2": 1, "n1": 0, "n2": 0}}
    state = Judging("P@3", rankings, ["t"], judgments)
    assert state.summary()[0]["verdict"] == "decided" and state.open_pairs() == []
    assert state.select("lookahead", budget=3) == []


def test_simulation_is_deterministic_and_decides():
    rng = random.Random(7)
    pool = [f"d{i}" for i in range(12)]
    topics = [f"t{i}" for i in range(3)]
    rankings = {name: {t: tuple(rng.sample(pool, 6)) for t in topics} for name in ("x", "y", "z")}
    qrels = {t: {d: rng.randint(0, 2) for d in pool if rng.random() < 0.5} for t in topics}
    pairs = [("x", "y"), ("x", "z")]
    for policy in ("lookahead", "assignment", "depth", "random", "clairvoyant"):
        runs = [simulate("nDCG@5", rankings, pairs, topics, qrels, policy=policy, start=0.25, batch=2, seed=1)
                for _ in range(2)]
        assert runs[0] == [dict(r, selection_seconds=r2["selection_seconds"]) for r, r2 in zip(runs[1], runs[0])]
        assert [r["spent"] for r in runs[0]] == sorted(r["spent"] for r in runs[0])
        assert runs[0][-1]["done"] == 2  # judging everything decides pairs whose scores differ
        assert decided_at(runs[0]) == runs[0][-1]["spent"]
    assert judgments_for_share([10, 20, math.inf, 40], 0.5) == 20
    assert judgments_for_share([10, 20, math.inf, 40], 0.9) == math.inf


def two_runs(directory):
    """Runs x and y (topic 1: a b / b d; topic 2: c / e) and qrels judging a and e."""
    files = {"x.run": "1 Q0 a 1 3 x\n1 Q0 b 2 2 x\n2 Q0 c 1 3 x\n", "y.run": "1 Q0 b 1 3 y\n1 Q0 d 2 2 y\n2 Q0 e 1 3 y\n",
             "q": "1 0 a 1\n2 0 e 0\n"}
    for name, text in files.items():
        (directory / name).write_text(text)
    return (directory / name for name in files)


def test_api_returns_a_frame(tmp_path):
    run, other, qrels = two_runs(tmp_path)
    summary = []
    frame = medopt.judge_next([str(run), str(other)], str(qrels), "P@2", budget=2, summary=summary)
    assert list(frame.columns)[:3] == ["rank", "topic", "docid"] and len(frame) == 2
    assert summary and summary[0]["run_a"] == "x"
    with pytest.raises(MedoptError, match="at least two runs"):
        judge_next([str(run)], str(qrels), "P@2")
    with pytest.raises(MedoptError, match="policy"):
        judge_next([str(run), str(other)], str(qrels), "P@2", policy="best")


def cli(*args):
    return subprocess.run([sys.executable, "-m", "medopt.cli", "judge-next", *args], capture_output=True, text=True)


def test_command_lists_and_fails_in_one_line(tmp_path):
    run, other, _ = two_runs(tmp_path)
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 a 1 3 x\n1 Q0 b two 2 x\n")
    out = tmp_path / "next.csv"
    done = cli(str(run), str(other), "-m", "P@2", "--budget", "2", "--policy", "depth", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert out.read_text().splitlines()[0].startswith("rank,topic,docid") and len(out.read_text().splitlines()) == 3
    assert "mean difference range" in done.stderr
    for args, where in [((str(run), str(bad), "-m", "P@2"), "bad.run:2"), ((str(run), "-m", "P@2"), "two runs"),
                        ((str(run), str(other), "-m", "P@@2"), "P@@2"),
                        ((str(run), str(other), "-m", "P@2", "--budget", "0"), "budget")]:
        failed = cli(*args)
        assert failed.returncode == 2, (args, failed.stderr)
        lines = failed.stderr.strip().splitlines()
        assert len(lines) == 1 and where in lines[0], (args, failed.stderr)
