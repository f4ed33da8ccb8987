"""A judging campaign simulated on real qrels: how many judgments each policy of ``medopt.judging``
spends before the comparisons are decided.

The qrels play the assessor: a document they grade gets that grade, any other one counts as judged
not relevant.  The campaign starts from a seeded share of each topic's qrels (0: nothing judged) and
judges in rounds: each round, every topic gets up to ``batch`` documents chosen by the policy, then the
ranges are re-solved.  It stops when every pair is done (decided, or at the target), when no unjudged
document is left in the pairs' lists, or after ``max_rounds``.

``simulate`` returns one record per round (round 0 is the start): judgments spent so far (beyond the
start), pairs done, the mean over pairs of the mean MED and of the mean range's width, and the wall
seconds of the round's selection (choosing the documents, not re-solving after judging them).
``decided_at`` reads, from those records, the judgments each pair needed.
"""

from __future__ import annotations

import math
import random
import time
from typing import Mapping, Sequence

from .judging import Judging


def start_judgments(qrels: Mapping[str, Mapping[str, int]], topics: Sequence[str], share: float,
                    seed: int) -> dict[str, dict[str, int]]:
    """A seeded ``share`` of each topic's qrels (the documents in sorted order, each kept with
    probability ``share``)."""
    rng = random.Random(seed)
    return {t: {d: g for d, g in sorted(qrels.get(t, {}).items()) if rng.random() < share} for t in topics}


def simulate(metric, rankings: Mapping[str, Mapping[str, Sequence[str]]], pairs, topics: Sequence[str],
             qrels: Mapping[str, Mapping[str, int]], *, policy: str, start: float = 0.0, batch: int = 10,
             seed: int = 0, max_grade: int | None = None, max_rounds: int | None = None,
             target: float | None = None, method: str = "auto", solver: str | None = None,
             time_limit: float | None = None) -> list[dict]:
    """The campaign's records, round by round (module docstring)."""
    if max_grade is None:
        max_grade = max([1, *(g for t in topics for g in qrels.get(t, {}).values())])
    state = Judging(metric, rankings, topics, start_judgments(qrels, topics, start, seed), pairs=pairs,
                    target=target, max_grade=max_grade, method=method, solver=solver, time_limit=time_limit)
    records = [_record(state, 0, 0, 0.0)]
    spent, round_number = 0, 0
    while state.open_pairs() and (max_rounds is None or round_number < max_rounds):
        round_number += 1
        started = time.perf_counter()
        chosen = state.select(policy, budget=batch * len(topics), per_topic=batch, seed=seed + round_number)
        seconds = time.perf_counter() - started
        if not chosen:
            break
        by_topic: dict[str, dict[str, int]] = {}
        for row in chosen:
            by_topic.setdefault(row["topic"], {})[row["docid"]] = qrels.get(row["topic"], {}).get(row["docid"], 0)
        for topic, grades in by_topic.items():
            state.judge(topic, grades)
        spent += len(chosen)
        records.append(_record(state, round_number, spent, seconds))
    return records


def _record(state: Judging, round_number: int, spent: int, seconds: float) -> dict:
    summary = state.summary()
    return {"round": round_number, "spent": spent, "done": sum(row["done"] for row in summary),
            "pairs": len(summary), "decided": sum(row["verdict"] == "decided" for row in summary),
            "mean_med": sum(row["mean_med"] for row in summary) / len(summary),
            "mean_width": sum(row["high"] - row["low"] for row in summary) / len(summary),
            "selection_seconds": seconds,
            "done_pairs": [f"{row['run_a']} - {row['run_b']}" for row in summary if row["done"]]}


def decided_at(records: Sequence[dict]) -> float:
    """Judgments spent when the campaign's pairs were all done (inf: never, within its rounds)."""
    for record in records:
        if record["done"] == record["pairs"]:
            return record["spent"]
    return math.inf


def judgments_for_share(needed: Sequence[float], share: float) -> float:
    """The fewest judgments per campaign with which at least ``share`` of the campaigns are done
    (each campaign one pair; ``needed`` from decided_at; inf when fewer are ever done)."""
    ordered = sorted(needed)
    count = math.ceil(share * len(ordered) - 1e-9)
    return ordered[count - 1] if count >= 1 else 0.0
