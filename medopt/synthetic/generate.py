"""Seeded generator of realistic run pairs and qrels, for tests, examples and benchmarks.

Model: each topic has a pool of candidate documents with a latent base score
``-log(j + 1)`` at pool position j -- large gaps at the top, tiny gaps lower down.
Every run adds Gaussian noise of spread ``(1 - similarity) / 2 * (1 + 2 j / depth)``
to the base scores and keeps its ``depth`` best documents.  So runs agree at the
top and differ more and more below (the overlap measured at similarity 0.6:
docs/explanation/benchmarks.md#generated-runs), and the documents near the cut-off differ from
run to run.  ``similarity=1`` gives identical runs.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from medopt.errors import MedoptError
from medopt.io.passages import write_passage_run, write_spans
from medopt.io.trec import write_qrels, write_run

_DOCID_LOW, _DOCID_HIGH = 100_000, 1_000_000  # docids look like "D123456"


def _topics(n_topics: int) -> list[str]:
    return [str(401 + i) for i in range(n_topics)]


def generate_runs(
    n_runs: int,
    n_topics: int,
    depth: int,
    *,
    seed: int,
    pool_size: int | None = None,
    similarity: float = 0.6,
) -> dict[str, dict[str, list[str]]]:
    """Run name -> topic -> ranking (docids best first), deterministic for ``seed``.

    ``pool_size`` (default ``2 * depth``) is the number of candidate documents per
    topic shared by all runs; ``similarity`` in [0, 1] controls how alike runs are.
    """
    pool_size = 2 * depth if pool_size is None else pool_size
    if n_runs < 1 or n_topics < 1 or depth < 1:
        raise MedoptError("n_runs, n_topics and depth must be at least 1")
    if not depth <= pool_size <= (_DOCID_HIGH - _DOCID_LOW) // 2:
        raise MedoptError(f"pool_size must be between depth ({depth}) and 450000, got {pool_size}")
    if not 0.0 <= similarity <= 1.0:
        raise MedoptError(f"similarity must be in [0, 1], got {similarity}")

    rng = np.random.default_rng(seed)
    width = len(str(n_runs - 1))
    names = [f"run{i:0{width}d}" for i in range(n_runs)]
    runs: dict[str, dict[str, list[str]]] = {name: {} for name in names}
    base = -np.log1p(np.arange(pool_size))
    sigma = (1.0 - similarity) / 2 * (1 + 2 * np.arange(pool_size) / depth)
    for topic in _topics(n_topics):
        numbers = rng.choice(_DOCID_HIGH - _DOCID_LOW, size=pool_size, replace=False)
        pool = np.array([f"D{n + _DOCID_LOW}" for n in numbers.tolist()], dtype=object)
        scores = base + sigma * rng.standard_normal((n_runs, pool_size))
        top = np.argpartition(-scores, depth - 1, axis=1)[:, :depth] if depth < pool_size \
            else np.broadcast_to(np.arange(pool_size), (n_runs, pool_size))
        order = np.argsort(-np.take_along_axis(scores, top, axis=1), axis=1, kind="stable")
        ranked = pool[np.take_along_axis(top, order, axis=1)]
        for name, row in zip(names, ranked.tolist()):
            runs[name][topic] = row
    return runs


def generate_qrels(
    runs: dict[str, dict[str, list[str]]],
    *,
    seed: int,
    judged_fraction: float = 0.5,
    max_grade: int = 3,
    relevant_fraction: float = 0.3,
    pool_depth: int = 20,
) -> dict[str, dict[str, int]]:
    """Graded qrels for the documents of ``runs``, deterministic for ``seed``.

    Each document in the top ``pool_depth`` of some run is judged with probability
    ``judged_fraction``; a judged document is relevant with probability about
    ``relevant_fraction`` (higher for documents ranked higher), and relevant grades
    1..max_grade are skewed towards 1.  Each topic also gets one to three judged
    relevant documents that no run retrieved.
    """
    if max_grade < 1:
        raise MedoptError(f"max_grade must be at least 1, got {max_grade}")
    rng = np.random.default_rng(seed)
    grade_p = 0.5 ** np.arange(max_grade)
    grade_p /= grade_p.sum()
    topics = sorted({t for rankings in runs.values() for t in rankings}, key=lambda t: (len(t), t))
    qrels: dict[str, dict[str, int]] = {}
    for topic in topics:
        best: dict[str, int] = {}  # docid -> best rank (0-based) in any run's top pool_depth
        retrieved: set[str] = set()
        for name in sorted(runs):
            ranking = runs[name].get(topic, [])
            retrieved.update(ranking)
            for i, docid in enumerate(ranking[:pool_depth]):
                best[docid] = min(best.get(docid, i), i)
        docids = sorted(best)
        position = np.array([best[d] for d in docids], dtype=float)
        judged = rng.random(len(docids)) < judged_fraction
        p_rel = np.clip(2 * relevant_fraction * (1 - position / max(pool_depth, 1)), 0, 1)
        relevant = rng.random(len(docids)) < p_rel
        grades = 1 + rng.choice(max_grade, size=len(docids), p=grade_p)
        labels = {
            d: int(g) if r else 0 for d, j, r, g in zip(docids, judged, relevant, grades) if j
        }
        for _ in range(int(rng.integers(1, 4))):  # relevant documents no run retrieved
            docid = f"D{int(rng.integers(_DOCID_LOW, _DOCID_HIGH))}"
            if docid not in retrieved and docid not in labels:
                labels[docid] = 1 + int(rng.choice(max_grade, p=grade_p))
        qrels[topic] = labels
    return qrels


def write_example(
    directory: str | os.PathLike,
    *,
    seed: int = 0,
    n_runs: int = 4,
    n_topics: int = 10,
    depth: int = 50,
) -> list[Path]:
    """Write ``run.<name>.txt`` files and ``qrels.txt`` into ``directory``; return their paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    runs = generate_runs(n_runs, n_topics, depth, seed=seed)
    paths = []
    for name, rankings in runs.items():
        paths.append(directory / f"run.{name}.txt")
        write_run(paths[-1], rankings, name)
    paths.append(directory / "qrels.txt")
    write_qrels(paths[-1], generate_qrels(runs, seed=seed))
    return paths


# ---------------------------------------------------------------------------
# passage runs (MED-U, SPEC 8)

EXAMPLES = Path(__file__).parents[1] / "examples"  # medopt/examples (package data)


def generate_passage_runs(n_runs: int, n_topics: int, n_passages: int, *, seed: int, pool_size: int = 20,
                          doc_length: int = 4000, similarity: float = 0.6) -> tuple[dict, dict]:
    """(runs, documents): run name -> topic -> passages ``(docid, offset, length)`` in trailtext order,
    and topic -> docid -> (length, hot spots), deterministic for ``seed``.

    Each topic has a pool of documents of about ``doc_length`` bytes, each with one to three "hot
    spots" (where a run likes to cut a passage and where its relevant text lies).  As in
    :func:`generate_runs`, every run ranks the pool by a latent score plus noise (less noise for
    larger ``similarity``); it then cuts ``n_passages`` passages of 100 to 1,500 bytes from its best
    documents, each starting near a hot spot, so runs share documents and overlap in characters."""
    if n_runs < 1 or n_topics < 1 or n_passages < 1 or pool_size < 1 or doc_length < 200:
        raise MedoptError("n_runs, n_topics, n_passages, pool_size >= 1 and doc_length >= 200")
    if not 0.0 <= similarity <= 1.0:
        raise MedoptError(f"similarity must be in [0, 1], got {similarity}")
    rng = np.random.default_rng(seed)
    names = [f"prun{i}" for i in range(n_runs)]
    runs: dict = {name: {} for name in names}
    documents: dict = {}
    sigma = (1.0 - similarity) / 2 * (1 + 2 * np.arange(pool_size) / pool_size)
    for topic in _topics(n_topics):
        numbers = rng.choice(_DOCID_HIGH - _DOCID_LOW, size=pool_size, replace=False)
        pool = [f"P{n + _DOCID_LOW}" for n in numbers.tolist()]
        lengths = rng.integers(doc_length // 2, doc_length * 3 // 2, size=pool_size)
        documents[topic] = {doc: (int(size), sorted(int(h) for h in rng.integers(0, size - 100, size=rng.integers(1, 4))))
                            for doc, size in zip(pool, lengths)}
        base = -np.log1p(np.arange(pool_size))
        for name in names:
            order = np.argsort(-(base + sigma * rng.standard_normal(pool_size)), kind="stable")
            passages, seen = [], set()
            for step in range(n_passages * 4):
                if len(passages) == n_passages:
                    break
                doc = pool[int(order[min(step // 2, pool_size - 1)])]
                size, hot = documents[topic][doc]
                start = max(0, int(rng.choice(hot)) + int(rng.integers(-200, 200)))
                length = int(min(rng.integers(100, 1500), size - start))
                if length >= 1 and (doc, start, length) not in seen:
                    seen.add((doc, start, length))
                    passages.append((doc, start, length))
            runs[name][topic] = passages
    return runs, documents


def generate_passage_judgments(runs: dict, documents: dict, *, seed: int, judged_fraction: float = 0.6,
                               relevant_fraction: float = 0.5) -> tuple[dict, dict]:
    """(qrels, spans) for passage runs: each retrieved document is judged with probability
    ``judged_fraction``; a judged document is relevant with probability ``relevant_fraction``, its
    relevant spans then 50 to 600 bytes around its hot spots (grade 1), else grade 0 and no span."""
    rng = np.random.default_rng(seed)
    qrels: dict = {}
    spans: dict = {}
    for topic in sorted(documents, key=lambda t: (len(t), t)):
        retrieved = sorted({doc for run in runs.values() for doc, _, _ in run.get(topic, ())})
        qrels[topic], spans[topic] = {}, {}
        for doc in retrieved:
            if rng.random() >= judged_fraction:
                continue
            relevant = rng.random() < relevant_fraction
            qrels[topic][doc] = int(relevant)
            if relevant:
                size, hot = documents[topic][doc]
                spans[topic][doc] = [(int(h), int(min(rng.integers(50, 600), size - h))) for h in hot]
    return qrels, spans


def write_passage_example(directory: str | os.PathLike, *, seed: int = 0, n_topics: int = 3,
                          n_passages: int = 12) -> dict[str, Path]:
    """Write two passage runs, their qrels and spans into ``directory``: {run_a, run_b, qrels, spans}."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    runs, documents = generate_passage_runs(2, n_topics, n_passages, seed=seed)
    qrels, spans = generate_passage_judgments(runs, documents, seed=seed)
    paths = passage_example_paths(directory)
    for key, name in zip(("run_a", "run_b"), sorted(runs)):
        write_passage_run(paths[key], runs[name], name)
    write_qrels(paths["qrels"], qrels)
    write_spans(paths["spans"], spans)
    return paths


def passage_example_paths(directory: str | os.PathLike | None = None) -> dict[str, Path]:
    """The passage example's files (default: the one shipped in medopt/examples/, seed 0)."""
    directory = EXAMPLES if directory is None else Path(directory)
    return {key: directory / f"passages.{key}.txt" for key in ("run_a", "run_b", "qrels", "spans")}
