"""A judging campaign simulated on real qrels: how many judgments each policy of ``medopt.judging.next``
spends before the comparisons are decided.

The qrels play the assessor: a document they grade gets that grade, any other one counts as judged
not relevant.  The campaign starts from a seeded share of each topic's qrels (0: nothing judged) and
judges in batches of ``batch`` documents of one topic, re-solving that topic's ranges after each (and,
with a relevance ``model``, refitting it; a pair is then also done at the ``confidence``).  The
policy chooses the documents of each topic's next batch (``Judging.select`` on that topic) and the
topic: ``lookahead``, ``assignment``, ``expected`` and ``mtc`` the topic whose batch has the largest total value, ``depth``
the topics in turn (pooling), ``random`` a seeded choice.  A topic's next batch is kept until its
judgments change or a pair is done (values count the open pairs only).  The campaign stops when every
pair is done (decided, or at the target), when no unjudged document is left in the open pairs'
lists, or after ``max_batches``.

``simulate`` returns one record per batch (record 0 is the start): judgments spent so far (beyond the
start), the topic judged, pairs done, the mean over pairs of the mean MED and of the mean range's
width, and the wall seconds of the batch's selection (choosing the documents, not re-solving after
judging them).
``decided_at`` reads, from those records, the judgments each pair needed.
"""

from __future__ import annotations

import math
import random
import time
from typing import Mapping, Sequence

from .next import Judging


def start_judgments(qrels: Mapping[str, Mapping[str, int]], topics: Sequence[str], share: float,
                    seed: int) -> dict[str, dict[str, int]]:
    """A seeded ``share`` of each topic's qrels (the documents in sorted order, each kept with
    probability ``share``)."""
    rng = random.Random(seed)
    return {t: {d: g for d, g in sorted(qrels.get(t, {}).items()) if rng.random() < share} for t in topics}


def simulate(metric, rankings: Mapping[str, Mapping[str, Sequence[str]]], pairs, topics: Sequence[str],
             qrels: Mapping[str, Mapping[str, int]], *, policy: str, start: float = 0.0, batch: int = 10,
             seed: int = 0, max_grade: int | None = None, max_batches: int | None = None,
             target: float | None = None, method: str = "auto", solver: str | None = None,
             time_limit: float | None = None, model=None, confidence: float | None = None,
             fit_start: bool = False, model_draws: int | None = None) -> list[dict]:
    """The campaign's records, batch by batch (module docstring)."""
    if max_grade is None:
        max_grade = max([1, *(g for t in topics for g in qrels.get(t, {}).values())])
    extra = {} if model is None else {"model": model, "seed": seed, "fit_start": fit_start,
                                      **({} if model_draws is None else {"model_draws": model_draws}),
                                      **({} if confidence is None else {"confidence": confidence})}
    state = Judging(metric, rankings, topics, start_judgments(qrels, topics, start, seed), pairs=pairs,
                    target=target, max_grade=max_grade, method=method, solver=solver, time_limit=time_limit,
                    **extra)
    records = [_record(state, 0, 0, 0.0, None)]
    rng = random.Random(seed)
    signs = final_signs(state, qrels) if policy == "clairvoyant" else None
    lists: dict[str, list] = {}  # topic -> its next batch, valid while its judgments and the open pairs stay
    open_pairs, turn, spent = state.open_pairs(), 0, 0
    while open_pairs and (max_batches is None or len(records) <= max_batches):
        started = time.perf_counter()
        for topic in topics:
            if topic not in lists:
                lists[topic] = clairvoyant_batch(state, topic, qrels, batch, signs) if policy == "clairvoyant" \
                    else state.select(policy, budget=batch, topics=[topic], seed=rng.randrange(2 ** 32))
        ready = [t for t in topics if lists[t]]
        if not ready:
            break
        if policy == "depth":  # pooling: the topics in turn
            topic = min(ready, key=lambda t: ((topics.index(t) - turn) % len(topics)))
            turn = topics.index(topic) + 1
        elif policy == "random":
            topic = rng.choice(ready)
        else:  # the topic whose batch is worth most
            topic = max(ready, key=lambda t: (sum(row["value"] for row in lists[t]), -topics.index(t)))
        seconds = time.perf_counter() - started
        chosen = lists.pop(topic)
        state.judge(topic, {row["docid"]: qrels.get(topic, {}).get(row["docid"], 0) for row in chosen})
        spent += len(chosen)
        records.append(_record(state, len(records), spent, seconds, topic))
        if state.open_pairs() != open_pairs:  # a pair is done: every value changes
            open_pairs = state.open_pairs()
            lists.clear()
    return records


def final_signs(state: Judging, qrels) -> dict:
    """Each pair's sign of the mean difference once everything is judged (qrels, the rest 0)."""
    signs = {}
    for pair in state.pairs:
        total = 0.0
        for topic in state.topics:
            full = {d: qrels.get(topic, {}).get(d, 0) for d in state.cells[pair, topic].instance.unjudged}
            total += state.cells[pair, topic].instance.differences(full)["a"]
        signs[pair] = (total > 0) - (total < 0)
    return signs


def clairvoyant_batch(state: Judging, topic: str, qrels, batch: int, signs: dict) -> list[dict]:
    """A yardstick, not a policy anyone can run (it reads the assessor's grades): the ``batch``
    documents of ``topic`` whose true grade brings the open pairs' mean ranges closest to their final
    verdict (the end that must cross 0 moves most), each judged alone."""
    scored = []
    candidates = state.candidates(topic)
    means = {pair: state.mean_range(pair) for pairs in candidates.values() for pair in pairs}
    for doc, pairs in candidates.items():
        grade = qrels.get(topic, {}).get(doc, 0)
        gain = 0.0
        for pair in pairs:
            cell = state.cells[pair, topic]
            new = state.solve(pair, topic, dict(state.judgments[topic], **{doc: grade}))
            low, high = means[pair]
            if signs[pair] > 0:   # the low end must rise above 0
                gain += min(max(0.0, -low), max(0.0, new.low - cell.low) / len(state.topics))
            elif signs[pair] < 0:  # the high end must fall below 0
                gain += min(max(0.0, high), max(0.0, cell.high - new.high) / len(state.topics))
        scored.append((-gain, state.depth(topic, doc, pairs), doc, gain))
    scored.sort()
    return [{"topic": topic, "docid": doc, "value": gain} for _, _, doc, gain in scored[:batch]]


def _record(state: Judging, number: int, spent: int, seconds: float, topic) -> dict:
    summary = state.summary()
    return {"batch": number, "topic": topic, "spent": spent, "done": sum(row["done"] for row in summary),
            "pairs": len(summary), "decided": sum(row["verdict"] == "decided" for row in summary),
            "mean_med": sum(row["mean_med"] for row in summary) / len(summary),
            "mean_width": sum(row["high"] - row["low"] for row in summary) / len(summary),
            "selection_seconds": seconds,
            "done_pairs": [f"{row['run_a']} - {row['run_b']}" for row in summary if row["done"]],
            # the sign each done pair was decided with, and how (worst case or confidence)
            "decisions": {f"{row['run_a']} - {row['run_b']}": [row["sign"], row["decided_by"]]
                          for row in summary if row["done"] and row.get("decided_by")}}


def decided_at(records: Sequence[dict]) -> float:
    """Judgments spent when the campaign's pairs were all done (inf: never, within its batches)."""
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
