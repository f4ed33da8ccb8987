"""RR's kernel (medopt/kernels/rr.py, proof in its docstring) against brute-force enumeration: MED and both
ends of the difference range on seeded random graded, partially judged instances with shared documents
(rel=2 too, lists of different lengths, some padded, cutoffs from 1 up and none); ``auto``'s choice with and
without relevance limits; the batch path (medopt.batch.fastpath_rr) against the per-instance method on
blocks of random topics and in ``run_matrix``; and, on TREC DL 2020 runs at depth 1000, against the exact
solver."""

import gzip
import json
import random
import zlib

import numpy as np
import pytest

import medopt
from medopt import methods
from medopt.batch import Settings, run_matrix
from medopt.batch.blocks import med_rows, range_columns
from medopt.batch.matrix import resolve_method
from medopt.batch.runset import columns_from_rankings, load_runset
from medopt.core.instance import RelevanceLimit, build_instance
from medopt.io.trec import read_qrels, read_run
from medopt.kernels.rr import first_relevant_ends
from medopt.metrics import parse_metric, resolve_max_grade
from medopt.synthetic.random_instances import random_instance
from conftest import SHARED_DATA
from test_batch import stored, write_job

TOLERANCE = 1e-9
INSTANCES = 400
DL_2020 = SHARED_DATA / "trec-dl-2020"


def cases(seed: int):
    """(metric string, instance, keyword arguments): G in 1..3, rel 1 or 2 (rel = 2 with G = 1: nothing
    unjudged can be relevant), cutoffs 1..k or none, one in four padded, one in five mostly judged, one in
    ten with B holding A's top documents (many shared, bound documents)."""
    rng = np.random.default_rng(seed)
    for i in range(INSTANCES):
        max_grade = int(rng.integers(1, 4))
        pad = i % 4 == 3
        mostly_judged = i % 5 == 4
        case = random_instance(rng, max_grade=max_grade, judged_fraction=0.8 if mostly_judged else None,
                               max_unjudged=i % 3 if mostly_judged else (5 if max_grade == 3 else 7) if pad else None)
        if i % 10 == 9:
            case.b = list(dict.fromkeys(case.a[:3] + case.b))
            case.judgments = {d: g for d, g in case.judgments.items() if d not in case.a[:3]}
            top = dict.fromkeys(case.a[:case.k] + case.b[:case.k])
            unjudged = [d for d in top if d not in case.judgments]
            case.judgments.update(dict.fromkeys(unjudged[7:], 0))  # enumeration stays small
        rel = 2 if rng.random() < 0.35 else 1
        cutoff = "" if i % 3 == 0 and not pad else f"@{int(rng.integers(1, case.k + 1)) if i % 7 else 1}"
        name = ("RR" if rel == 1 else "RR(rel=2)") + cutoff  # pad="free" needs a cutoff: i % 3 == 0 has one
        yield name, case, {**case.as_kwargs(), "pad": "free" if pad else "none"}


def test_rr_equals_enumeration():
    counted = {"rel=2": 0, "pad": 0, "uneven": 0, "decided": 0, "no cutoff": 0, "@1": 0, "shared": 0,
               "positive and negative ends": 0}
    for name, case, kwargs in cases(seed=56):
        kernel = medopt.med(name, **kwargs, method="rr")
        oracle = medopt.med(name, **kwargs, method="enumerate")
        assert kernel.method == "rr" and kernel.certified and oracle.certified, (name, case, kernel)
        assert abs(kernel.value - oracle.value) <= TOLERANCE, (name, case, kernel, oracle)
        both = medopt.difference_range(name, **kwargs, method="rr")
        truth = medopt.difference_range(name, **kwargs, method="enumerate")
        assert both.certified and truth.certified, (name, case, both)
        assert abs(both.low - truth.low) <= TOLERANCE and abs(both.high - truth.high) <= TOLERANCE, \
            (name, case, both, truth)
        assert both.low_bound == both.low and both.high_bound == both.high
        assert abs(kernel.value - max(both.high, -both.low)) <= TOLERANCE
        auto = medopt.med(name, **kwargs)
        assert auto.method == "rr" and abs(auto.value - oracle.value) <= TOLERANCE
        instance = build_instance(name, case.a, case.b, case.judgments, max_grade=case.max_grade, pad=kwargs["pad"])
        metric = parse_metric(name)
        counted["rel=2"] += metric.p("rel") == 2
        counted["pad"] += kwargs["pad"] == "free"
        counted["uneven"] += len(case.a) != len(case.b)
        counted["decided"] += both.high < 0 or both.low > 0
        counted["no cutoff"] += metric.cutoff is None
        counted["@1"] += metric.cutoff == 1
        counted["shared"] += len(instance.bound_docs) >= 2
        counted["positive and negative ends"] += both.high > 0 > both.low
    assert counted["rel=2"] >= 80 and counted["pad"] >= 80 and counted["uneven"] >= 150, counted
    assert counted["decided"] >= 10 and counted["no cutoff"] >= 80 and counted["@1"] >= 20, counted
    assert counted["shared"] >= 100 and counted["positive and negative ends"] >= 100, counted


def test_score_range_equals_enumeration():
    rng = np.random.default_rng(57)
    for _ in range(100):
        case = random_instance(rng, max_grade=int(rng.integers(1, 3)))
        for name in ("RR", f"RR@{case.k}"):
            kernel = medopt.score_range(name, case.a, case.judgments, max_grade=case.max_grade, method="rr")
            oracle = medopt.score_range(name, case.a, case.judgments, max_grade=case.max_grade, method="enumerate")
            assert kernel.certified and abs(kernel.low - oracle.low) <= TOLERANCE
            assert abs(kernel.high - oracle.high) <= TOLERANCE, (name, case, kernel, oracle)


def test_tan_and_clarke_example_and_hand_cases():
    # SPEC 4: MED(RR) = 0.5 on X1, X2 of Moffat's eq. 1 (nothing judged)
    x1, x2 = ["d1", "d2", "d3", "d4", "d5"], ["d2", "d1", "d3", "d4", "d5"]
    assert medopt.med("RR", x1, x2, method="rr").value == 0.5
    # the shared document u is the better list's best candidate only through Y: making it relevant puts
    # Y's first relevant at u's rank 2 (A: 1/1 - 1/2), while A's own second document y gives 1/2 - 1/3
    result = medopt.difference_range("RR", ["u", "y", "r"], ["z", "u", "r"], {"r": 1, "z": 0}, method="rr")
    assert result.certified and result.high == 0.5 and result.high_assignment == {"u": 1, "y": 0}
    assert result.low == pytest.approx(0.0) and result.low_assignment == {"u": 0, "y": 0}
    # rel=2 with G = 2: a (A only) relevant gives 1 - 1/2; b shared at B's top gives B 1 - 1/2
    graded = medopt.difference_range("RR(rel=2)", ["a", "b"], ["b", "c"], {"c": 2, "x": 1}, max_grade=2, method="rr")
    assert graded.low == -0.5 and graded.high == 0.5 and graded.high_assignment == {"a": 2, "b": 0}
    # G < rel: nothing unjudged can be relevant, the difference is fixed
    fixed = medopt.difference_range("RR(rel=2)", ["a", "b"], ["b", "c"], {"c": 1}, max_grade=1, method="rr")
    assert fixed.low == fixed.high == 0.0


def test_relevance_limits_go_to_the_exact_models():
    limits = [RelevanceLimit(grade=1, low=2)]
    instance = build_instance("RR@3", ["a", "b", "c"], ["c", "b"], {}, limits=limits)
    assert "relevance limits" in methods.get("rr").supports(instance)
    assert methods.auto(instance).name != "rr"
    assert methods.auto(build_instance("RR@3", ["a"], ["b"], {})).name == "rr"
    assert methods.auto(build_instance("RR@3", ["a"], ["b"], {}), ranges=True).name == "rr"
    # with the limit, making one document relevant is not allowed: the exact answer is below the kernel's
    limited = medopt.med("RR@3", ["a", "b", "c"], ["c", "b"], {}, limits=limits)
    free = medopt.med("RR@3", ["a", "b", "c"], ["c", "b"], {})
    assert limited.method != "rr" and free.method == "rr" and limited.value < free.value


def test_first_relevant_ends_on_a_block_matches_one_at_a_time():
    """The array kernel over many instances at once gives each instance's own answer (rows interleaved)."""
    rng = np.random.default_rng(58)
    n = 300
    first_x, first_y = rng.integers(0, 12, n), rng.integers(0, 12, n)
    rows = rng.integers(0, n, 2000)
    ranks, ranks_in_y = rng.integers(1, 12, 2000), rng.integers(0, 12, 2000)
    value, pick = first_relevant_ends(n, first_x, first_y, rows, ranks, ranks_in_y)
    for i in range(n):
        mine = np.flatnonzero(rows == i)
        one, chosen = first_relevant_ends(1, first_x[i:i + 1], first_y[i:i + 1], np.zeros(len(mine), np.int64),
                                          ranks[mine], ranks_in_y[mine])
        assert value[i] == one[0]
        assert pick[i] == (-1 if chosen[0] < 0 else mine[chosen[0]])
        expected = max([(1 / first_x[i] if first_x[i] else 0) - (1 / first_y[i] if first_y[i] else 0)]
                       + [1 / ranks[j] - max(1 / first_y[i] if first_y[i] else 0, 1 / ranks_in_y[j] if ranks_in_y[j]
                                             else 0) for j in mine])
        assert value[i] == pytest.approx(expected, abs=1e-15)


def random_topics(rng, n_topics, shared_names, depth):
    """Topic pairs with partial graded judgments (negatives too), different lengths up to ``depth``,
    shared documents; doc names shared across topics or unique per topic."""
    a, b, qrels = {}, {}, {}
    for t in range(n_topics):
        prefix = "d" if shared_names else f"t{t}d"
        pool = [f"{prefix}{i}" for i in range(rng.randint(2, depth + 5))]
        a[str(t)] = rng.sample(pool, rng.randint(1, min(len(pool), depth)))
        b[str(t)] = rng.sample(pool, rng.randint(1, min(len(pool), depth)))
        if rng.random() < 0.15:
            b[str(t)] = list(a[str(t)][:rng.randint(1, len(a[str(t)]))])
        fraction = rng.choice([0.0, 0.05, 0.2, 0.5, 0.9])
        judged = {d: rng.choice([-1, 0, 0, 0, 1, 2, 3]) for d in pool + [f"x{i}" for i in range(rng.randint(0, 3))]
                  if rng.random() < fraction}
        if judged or rng.random() < 0.5:
            qrels[str(t)] = judged
    return a, b, qrels


@pytest.mark.parametrize("metric", ["RR", "RR@1", "RR@10", "RR(rel=2)", "RR(rel=3)@5", "RR(rel=4)"])
@pytest.mark.parametrize("max_grade", [None, 1, 2])
def test_batch_kernel_equals_the_per_instance_method(metric, max_grade):
    rng = random.Random(zlib.crc32(f"{metric} {max_grade}".encode()))
    parsed = parse_metric(metric)
    for shared_names, depth in ((False, 30), (True, 30), (False, 150)):
        a, b, qrels = random_topics(rng, 80, shared_names, depth)
        runset = load_runset(None, qrels, max_grade=max_grade,
                             columns=[columns_from_rankings("A", a), columns_from_rankings("B", b)])
        topics = runset.common_topics(0, 1)
        rows = med_rows(runset, 0, 1, parsed, "rr", topics)
        ends = list(zip(*range_columns(runset, 0, 1, parsed, topics, "rr")))
        assert len(rows) == len(ends) == len(a)
        top = resolve_max_grade(max_grade, qrels)
        for (topic, value, direction, certified, bound, status, assignment), end in zip(rows, ends):
            judged = qrels.get(topic, {})
            expected = medopt.med(parsed, a[topic], b[topic], judged, max_grade=top, method="rr")
            assert (value, direction, certified, bound, status) == (
                expected.value, expected.direction, True, expected.value, "optimal"), (topic, expected)
            both = medopt.difference_range(parsed, a[topic], b[topic], judged, max_grade=top, method="rr")
            assert end[:8] == (topic, both.low, both.high, both.low, both.high, True, True, "optimal")
            instance = build_instance(parsed, a[topic], b[topic], judged, max_grade=top)
            # the certificates: each assignment, re-scored by the metric's evaluator, gives its value
            for text, want, side in ((assignment, value, direction), (end[9], both.high, "a"), (end[8], -both.low, "b")):
                grades = json.loads(text)
                assert set(grades) <= set(instance.unjudged) and len(grades) <= 1
                assert instance.difference({d: grades.get(d, 0) for d in instance.unjudged}, side) == want


def test_matrix_uses_the_kernel_and_agrees_with_medopt_med(tmp_path):
    assert resolve_method(parse_metric("RR"), 2, Settings(), {}) == ("rr", True)
    assert resolve_method(parse_metric("RR@10"), 1, Settings(ranges=True), {}) == ("rr", True)
    assert resolve_method(parse_metric("RR"), 1, Settings(limits=(RelevanceLimit(1, 0, 1),)), {})[0] == "exact"
    paths, qrels = write_job(tmp_path / "job", n_runs=4, n_topics=40, depth=60, seed=3, max_grade=2, judged=0.3)
    for ranges in (False, True):
        tables = {}
        for fast in (True, False):
            store = tmp_path / f"{ranges}-{fast}.sqlite"
            run_matrix(paths, ["RR", "RR@5"], qrels=qrels, store=store, jobs=1,
                       settings=Settings(fast=fast, ranges=ranges), progress=False)
            tables[fast] = stored(store)
        assert tables[True].keys() == tables[False].keys() and len(tables[True]) == 6 * 40 * 2
        for key, row in tables[True].items():
            other = tables[False][key]
            assert row["method"] == other["method"] == "rr" and row["solver"] == "numpy"
            assert row["certified"] and other["certified"]
            for column in ("value", "direction", "upper_bound", "status", "low", "high"):
                assert row.get(column) == other.get(column), (key, column, row, other)


@pytest.mark.skipif(not (DL_2020 / "runs").is_dir(), reason=f"TREC DL 2020 runs not found under {DL_2020}")
def test_dl_2020_depth_1000_against_the_exact_solver():
    """Two DL 2020 runs at depth 1000 with the qrels: the batch kernel on every common topic equals the
    per-instance method, and on a few topics the exact MILP's certified answer (both ends)."""
    names = sorted(p.name for p in (DL_2020 / "runs").glob("*.run.gz"))[:2]
    qrels = read_qrels(DL_2020 / "qrels.dl20-passage.txt")
    runs = [read_run(DL_2020 / "runs" / name) for name in names]
    runset = load_runset([str(DL_2020 / "runs" / name) for name in names], qrels)
    topics = runset.common_topics(0, 1)
    topics = topics[np.isin(np.array(runset.topics)[topics], list(qrels))]
    metric = parse_metric("RR")
    ends = list(zip(*range_columns(runset, 0, 1, metric, topics, "rr")))
    assert len(ends) >= 40
    checked = 0
    for i, end in enumerate(ends):
        topic = end[0]
        a, b, judged = runs[0].rankings[topic], runs[1].rankings[topic], qrels[topic]
        top = int(runset.max_grade[runset.topics.index(topic)])
        mine = medopt.difference_range(metric, a, b, judged, max_grade=top, method="rr")
        assert (end[1], end[2]) == (mine.low, mine.high)
        if i % 10 == 0:
            exact = medopt.difference_range(metric, a, b, judged, max_grade=top, method="exact", time_limit=60)
            assert exact.certified, (topic, exact)
            assert abs(exact.low - mine.low) <= TOLERANCE and abs(exact.high - mine.high) <= TOLERANCE, (topic, exact)
            checked += 1
    assert checked >= 4
    with gzip.open(DL_2020 / "runs" / names[0]) as handle:  # the runs really are 1000 deep
        assert sum(1 for line in handle if line.split()[0] == ends[0][0].encode()) == 1000


@pytest.mark.parametrize("stage", [1, 3, 16])
def test_batch_staging_on_lists_that_agree_at_the_top(monkeypatch, stage):
    """Lists that agree on their top documents (a few swaps) leave topics open after the first stage
    (a candidate's best is deep in the other list): the second stage must give the unstaged answer."""
    from medopt.batch import fastpath_rr
    monkeypatch.setattr(fastpath_rr, "STAGE", stage)
    calls = []
    solve = fastpath_rr._candidates
    monkeypatch.setattr(fastpath_rr, "_candidates", lambda *args: calls.append(len(args[-1])) or solve(*args))
    rng = random.Random(stage)
    a, b, qrels = {}, {}, {}
    for t in range(60):
        docs = [f"t{t}d{i}" for i in range(rng.randint(5, 120))]
        other = list(docs)
        for _ in range(rng.randint(0, 6)):
            i = rng.randrange(len(other) - 1)
            other[i], other[i + 1] = other[i + 1], other[i]
        if rng.random() < 0.3:
            other = other[:rng.randint(1, len(other))]
        a[str(t)], b[str(t)] = docs, other
        if rng.random() < 0.5:
            qrels[str(t)] = {rng.choice(docs): rng.choice([0, 1]) for _ in range(rng.randint(1, 3))}
    runset = load_runset(None, qrels, columns=[columns_from_rankings("A", a), columns_from_rankings("B", b)])
    metric = parse_metric("RR")
    rows = med_rows(runset, 0, 1, metric, "rr", runset.common_topics(0, 1))
    assert len(calls) > 2  # some topics were left open by the first stage
    top = resolve_max_grade(None, qrels)
    for topic, value, direction, *_, assignment in rows:
        expected = medopt.med(metric, a[topic], b[topic], qrels.get(topic, {}), max_grade=top, method="rr")
        assert (value, direction) == (expected.value, expected.direction)
        assert json.loads(assignment) == {d: g for d, g in expected.assignment.items() if g > 0}
