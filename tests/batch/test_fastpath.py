"""The array fast path: its reader orders runs exactly as read_run, its kernels give medopt.med's values."""

import gzip
import json
import random
import zlib

import numpy as np
import pytest

import medopt
from medopt.metrics import resolve_max_grade
from medopt.errors import MedoptError
from medopt.batch.fastpath import med_rows, range_columns
from medopt.batch.runset import columns_from_rankings, load_runset, read_run_columns
from medopt.synthetic.generate import generate_runs
from medopt.core.instance import build_instance
from medopt.io.trec import read_run, write_run
from medopt.metrics import parse_metric
from conftest import SHARED_DATA

DL_HARD = SHARED_DATA / "dl-hard" / "baselines" / "doc"


def rankings_of(columns):
    runset = load_runset(None, {}, columns=[columns])
    return {topic: runset.ranking(0, t) for t, topic in enumerate(runset.topics)}


# ---------------------------------------------------------------------------
# reading


@pytest.mark.parametrize("honour_rank", [False, True])
def test_reader_orders_like_read_run_with_ties(tmp_path, honour_rank):
    rng = random.Random(5)
    lines = []
    for topic in ("3", "10", "1"):
        docs = [f"d{rng.randint(0, 10**6)}x{i}" for i in range(40)]
        for i, doc in enumerate(docs):
            score = rng.choice(["1", "2", "2.0", "-0.5", "1e1", "+.5", "3."])  # many ties, odd spellings
            lines.append(f"{topic}\tQ0  {doc} {rng.randint(1, 5)} {score} myrun\n")
    rng.shuffle(lines)
    path = tmp_path / "ties.run"
    path.write_text("".join(lines) + "\n\n")
    expected = read_run(path, honour_rank=honour_rank)
    columns = read_run_columns(path, honour_rank=honour_rank)
    assert columns.name == expected.name == "myrun"
    assert rankings_of(columns) == {t: tuple(r) for t, r in expected.rankings.items()}


@pytest.mark.parametrize("lines", [
    ["3 Q0 b 1 2 r", "3 Q0 a 2 1 r", "10 Q0 c 1 5 r", "10 Q0 z 2 4 r", "10 Q0 y 3 4 r", "1 Q0 a 1 1 r"],  # in order
    ["3 Q0 b 1 2 r", "10 Q0 c 1 5 r", "3 Q0 a 2 1 r", "10 Q0 y 3 4 r", "10 Q0 z 2 4 r"],  # a topic in two blocks
    ["1 Q0 a 1 1 r", "1 Q0 b 2 1 r", "1 Q0 c 3 2 r"],  # ties in ascending docid order, then a higher score
])
def test_reader_files_already_in_order_or_not(tmp_path, lines):
    path = tmp_path / "r.run"
    path.write_text("\n".join(lines) + "\n")
    assert rankings_of(read_run_columns(path)) == read_run(path).rankings


def test_reader_gzip_and_generated_runs(tmp_path):
    runs = generate_runs(2, 30, 25, seed=2)
    for name, rankings in runs.items():
        write_run(tmp_path / f"{name}.run.gz", rankings, name)
        columns = read_run_columns(tmp_path / f"{name}.run.gz")
        assert columns.name == name
        assert rankings_of(columns) == {t: tuple(r) for t, r in read_run(tmp_path / f"{name}.run.gz").rankings.items()}
    with gzip.open(tmp_path / "run0.run.gz") as handle:
        assert handle.read(4) == b"401 "


@pytest.mark.parametrize("text", [
    "1 Q0 a 1 1.5 r\n1 Q0 b 2 x r\n",          # bad score
    "1 Q0 a 1 1.5 r\n1 Q0 b 2 1.0\n",           # five columns
    "1 Q0 a 1 1.5 r\n1 Q0 a 2 1.0 r\n",         # duplicate docid
    "1 Q0 a 1.5 1.5 r\n",                        # rank not an integer
    "1 Q0 a 1 1e999 r\n",                        # infinite score
    "",                                          # empty
])
def test_reader_errors_are_read_runs(tmp_path, text):
    path = tmp_path / "bad.run"
    path.write_text(text)
    with pytest.raises(MedoptError) as expected:
        read_run(path)
    with pytest.raises(MedoptError) as got:
        read_run_columns(path)
    assert str(got.value) == str(expected.value)


def test_reader_falls_back_on_non_ascii(tmp_path):
    path = tmp_path / "u.run"
    path.write_text("1 Q0 caf\u00e9 1 2 r\n1 Q0 d\u00e9j\u00e0 2 2 r\n1 Q0 zzz 3 1 r\n", encoding="utf-8")
    assert rankings_of(read_run_columns(path)) == read_run(path).rankings


@pytest.mark.skipif(not DL_HARD.is_dir(), reason="shared DL-HARD data absent")
def test_reader_matches_read_run_on_dl_hard():
    for path in sorted(DL_HARD.glob("*.run"))[:3]:
        expected = read_run(path)
        columns = read_run_columns(path)
        assert columns.name == expected.name
        assert rankings_of(columns) == expected.rankings


# ---------------------------------------------------------------------------
# kernels


def random_topics(rng, n_topics, graded, shared_names):
    """Topic pairs with partial judgments, different lengths, shared documents; doc names shared
    across topics (exercising the collision path of the matcher) or unique per topic."""
    a, b, qrels = {}, {}, {}
    for t in range(n_topics):
        prefix = "d" if shared_names else f"t{t}d"
        pool = [f"{prefix}{i}" for i in range(rng.randint(2, 30))]
        a[str(t)] = rng.sample(pool, rng.randint(1, min(len(pool), 25)))
        b[str(t)] = rng.sample(pool, rng.randint(1, min(len(pool), 25)))
        if rng.random() < 0.15:
            b[str(t)] = list(a[str(t)][:rng.randint(1, len(a[str(t)]))])
        fraction = rng.choice([0.0, 0.2, 0.5, 0.9])
        grades = [-1, 0, 0, 1, 2, 3] if graded else [0, 1]
        judged = {d: rng.choice(grades) for d in pool + [f"x{i}" for i in range(rng.randint(0, 3))]
                  if rng.random() < fraction}
        if judged or rng.random() < 0.5:
            qrels[str(t)] = judged
    return a, b, qrels


CASES = [(metric, "closed-form") for metric in
         ("P@10", "P(rel=2)@5", "DCG@10", "DCG", "SDCG@20", "RBP(p=0.95)", "RBP(p=0.5)@5")] + \
        [(metric, "alg1") for metric in ("nDCG@5", "nDCG@10", "nDCG@20")] + \
        [(metric, "ndcg-profiles") for metric in ("nDCG@5", "nDCG@20", "nDCG")]


@pytest.mark.parametrize("metric,method", CASES)
@pytest.mark.parametrize("graded,max_grade", [(False, None), (True, None), (True, 1), (True, 2)])
def test_kernels_equal_the_per_instance_methods(metric, method, graded, max_grade):
    rng = random.Random(zlib.crc32(f"{metric} {graded} {max_grade}".encode()))
    parsed = parse_metric(metric)
    for shared_names in (False, True):
        a, b, qrels = random_topics(rng, 120, graded, shared_names)
        runset = load_runset(None, qrels, max_grade=max_grade,
                             columns=[columns_from_rankings("A", a), columns_from_rankings("B", b)])
        rows = med_rows(runset, 0, 1, parsed, method, runset.common_topics(0, 1))
        assert len(rows) == len(a)
        top = resolve_max_grade(max_grade, qrels)  # SPEC 1: the whole qrels' top grade, as the runset's
        for topic, value, direction, certified, bound, status, assignment in rows:
            judged = qrels.get(topic, {})
            expected = medopt.med(parsed, a[topic], b[topic], judged, max_grade=top, method=method)
            assert value == pytest.approx(expected.value, abs=1e-9)
            assert bound == pytest.approx(expected.upper_bound, abs=1e-9)
            assert (certified, status) == (expected.certified, expected.status)
            # the certificate: the assignment, re-scored by the metric evaluators, gives the value
            instance = build_instance(parsed, a[topic], b[topic], judged, max_grade=top)
            grades = json.loads(assignment)
            assert set(grades) <= set(instance.unjudged)
            full = {d: grades.get(d, 0) for d in instance.unjudged}
            assert instance.difference(full, direction) == pytest.approx(value, abs=1e-9)


def test_kernel_block_of_many_topics_and_escaped_docids():
    rng = random.Random(11)
    a, b, qrels = random_topics(rng, 400, True, False)
    a["0"] = ['quo"te', "back\\slash", "tab\u00e9"]
    b["0"] = ["back\\slash", "other"]
    qrels.pop("0", None)
    runset = load_runset(None, qrels, columns=[columns_from_rankings("A", a), columns_from_rankings("B", b)])
    assert not runset.plain_docs
    rows = {r[0]: r for r in med_rows(runset, 0, 1, parse_metric("SDCG@3"), "closed-form", np.arange(400))}
    top = resolve_max_grade(None, qrels)  # SPEC 1: topic 0, judged nowhere, keeps the file's top grade
    assert top > 1 and json.loads(rows["0"][6]) == {'quo"te': top, "tab\u00e9": top}
    expected = medopt.med("SDCG@3", a["0"], b["0"], {}, method="closed-form",
                          max_grade=resolve_max_grade(None, qrels))
    assert rows["0"][1] == pytest.approx(expected.value, abs=1e-12)


def small_topics(rng, n_topics):
    """Topic pairs small enough to enumerate: at most 6 documents per topic, some judged, some shared."""
    a, b, qrels = {}, {}, {}
    for t in range(n_topics):
        pool = [f"t{t}d{i}" for i in range(rng.randint(1, 6))]
        a[str(t)] = rng.sample(pool, rng.randint(1, len(pool)))
        b[str(t)] = rng.sample(pool, rng.randint(1, len(pool)))
        qrels[str(t)] = {d: rng.choice([0, 1, 2]) for d in pool + [f"t{t}x"] if rng.random() < 0.4}
    return a, b, qrels


@pytest.mark.parametrize("metric,method", [("P@3", "closed-form"), ("DCG@4", "closed-form"),
                                           ("RBP(p=0.7)", "closed-form"), ("nDCG@3", "alg1"),
                                           ("nDCG@4", "ndcg-profiles"), ("nDCG", "ndcg-profiles")])
@pytest.mark.parametrize("max_grade", [1, 2])
def test_batch_kernels_equal_enumeration(metric, method, max_grade):
    """The oracle for the batch path itself (the per-instance methods run the same kernels): each
    row's value against brute force over every assignment; a heuristic row (Alg. 1, G > 1) at most
    the MED, its bound at least it; and the range ends of the kernels that give them."""
    rng = random.Random(zlib.crc32(f"oracle {metric} {max_grade}".encode()))
    parsed = parse_metric(metric)
    a, b, qrels = small_topics(rng, 40)
    runset = load_runset(None, qrels, max_grade=max_grade,
                         columns=[columns_from_rankings("A", a), columns_from_rankings("B", b)])
    topics = runset.common_topics(0, 1)
    for topic, value, direction, certified, bound, status, assignment in med_rows(runset, 0, 1, parsed, method,
                                                                                 topics):
        truth = medopt.med(parsed, a[topic], b[topic], qrels[topic], max_grade=max_grade, method="enumerate")
        if certified:
            assert value == pytest.approx(truth.value, abs=1e-9)
        else:
            assert method == "alg1" and max_grade > 1
            assert value <= truth.value + 1e-9 and bound >= truth.value - 1e-9
    if method == "alg1":
        return
    ends = range_columns(runset, 0, 1, parsed, topics, method)
    for topic, low, high, *_ in zip(*ends):
        truth = medopt.difference_range(parsed, a[topic], b[topic], qrels[topic], max_grade=max_grade,
                                        method="enumerate")
        assert (low, high) == (pytest.approx(truth.low, abs=1e-9), pytest.approx(truth.high, abs=1e-9))
