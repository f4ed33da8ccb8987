"""R-Precision's kernel (medopt/kernels/rprec.py, proof in its docstring) against brute-force enumeration:
MED and both ends of the difference range on seeded random graded, partially judged instances with shared
documents and judged relevant documents outside both lists (rel=2 too, lists of different lengths, some
padded, Rprec and Rprec@k), the score range, ``auto``'s choice with and without relevance limits; the batch
path (medopt.batch.fastpath_rprec) against the per-instance method on blocks of random topics, in
``run_matrix`` and on TREC DL 2020 runs at depth 1000."""

import json
import random
import zlib

import numpy as np
import pytest

import medopt
from medopt import methods
from medopt.batch.blocks import med_rows, range_columns
from medopt.batch.runset import columns_from_rankings, load_runset
from medopt.metrics import resolve_max_grade
from medopt.core.instance import RelevanceLimit, build_instance
from medopt.metrics import parse_metric
from medopt.synthetic.random_instances import random_instance
from conftest import SHARED_DATA

TOLERANCE = 1e-9
INSTANCES = 400


def cases(seed: int):
    """(metric string, instance, keyword arguments): G in 1..3, rel 1 or 2, Rprec or Rprec@k (k from 1),
    one in four padded (with a cutoff), one in five mostly judged, one in ten with many shared documents."""
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
            unjudged = [d for d in dict.fromkeys(case.a + case.b) if d not in case.judgments]
            case.judgments.update(dict.fromkeys(unjudged[7:], 0))  # enumeration stays small
        rel = 2 if rng.random() < 0.35 else 1
        cutoff = "" if i % 2 == 0 and not pad else f"@{int(rng.integers(1, case.k + 1))}"
        name = ("Rprec" if rel == 1 else "Rprec(rel=2)") + cutoff
        yield name, case, {**case.as_kwargs(), "pad": "free" if pad else "none"}


def test_rprec_equals_enumeration():
    counted = {"rel=2": 0, "pad": 0, "no cutoff": 0, "decided": 0, "shared": 0, "both signs": 0, "outside": 0}
    for name, case, kwargs in cases(seed=5601):
        kernel = medopt.med(name, **kwargs, method="rprec")
        oracle = medopt.med(name, **kwargs, method="enumerate")
        assert kernel.method == "rprec" and kernel.certified and oracle.certified, (name, case, kernel)
        assert abs(kernel.value - oracle.value) <= TOLERANCE, (name, case, kernel, oracle)
        both = medopt.difference_range(name, **kwargs, method="rprec")
        truth = medopt.difference_range(name, **kwargs, method="enumerate")
        assert both.certified and truth.certified, (name, case, both)
        assert abs(both.low - truth.low) <= TOLERANCE and abs(both.high - truth.high) <= TOLERANCE, \
            (name, case, both, truth)
        assert abs(kernel.value - max(both.high, -both.low)) <= TOLERANCE
        auto = medopt.med(name, **kwargs)
        assert auto.method == "rprec" and abs(auto.value - oracle.value) <= TOLERANCE
        instance = build_instance(name, case.a, case.b, case.judgments, max_grade=case.max_grade, pad=kwargs["pad"])
        metric = parse_metric(name)
        counted["rel=2"] += metric.p("rel") == 2
        counted["pad"] += kwargs["pad"] == "free"
        counted["no cutoff"] += metric.cutoff is None
        counted["decided"] += both.high < 0 or both.low > 0
        counted["shared"] += len(instance.bound_docs) >= 2
        counted["both signs"] += both.high > 0 > both.low
        counted["outside"] += any(d not in instance.a and d not in instance.b and metric.is_relevant(g)
                                  for d, g in instance.judgments.items())
    assert counted["rel=2"] >= 80 and counted["pad"] >= 80 and counted["no cutoff"] >= 120, counted
    assert counted["decided"] >= 10 and counted["shared"] >= 100 and counted["both signs"] >= 100, counted
    assert counted["outside"] >= 40, counted


def test_score_range_equals_enumeration():
    rng = np.random.default_rng(5602)
    for _ in range(100):
        case = random_instance(rng, max_grade=int(rng.integers(1, 3)))
        for name in ("Rprec", f"Rprec@{case.k}"):
            kernel = medopt.score_range(name, case.a, case.judgments, max_grade=case.max_grade, method="rprec")
            oracle = medopt.score_range(name, case.a, case.judgments, max_grade=case.max_grade, method="enumerate")
            assert kernel.certified and abs(kernel.low - oracle.low) <= TOLERANCE
            assert abs(kernel.high - oracle.high) <= TOLERANCE, (name, case, kernel, oracle)


def test_a_worse_only_document_can_help_the_better_list():
    """recall.py's example: X = n r, Y = n' n'' y, r judged relevant, y unjudged: y relevant gives R = 2 and
    Rprec(X) - Rprec(Y) = 1/2 (y at 0: 0), so the best is not 'Y's only documents at 0'."""
    judged = {"r": 1, "n": 0, "n1": 0, "n2": 0}
    result = medopt.difference_range("Rprec", ["n", "r"], ["n1", "n2", "y"], judged, method="rprec")
    assert result.certified and result.high == 0.5 and result.high_assignment == {"y": 1}


def test_relevance_limits_go_to_the_exact_models():
    limits = [RelevanceLimit(grade=1, high=1)]
    instance = build_instance("Rprec", ["a", "b"], ["b", "c"], {}, limits=limits)
    assert "relevance limits" in methods.get("rprec").supports(instance)
    assert methods.auto(instance).name != "rprec"
    assert methods.auto(build_instance("Rprec@3", ["a"], ["b"], {}), ranges=True).name == "rprec"


def test_matrix_uses_the_kernel_and_agrees_with_medopt_med(tmp_path):
    from medopt.batch import Settings, run_matrix
    from medopt.batch.matrix import resolve_method
    from test_batch import stored, write_job
    assert resolve_method(parse_metric("Rprec"), 1, Settings(), {}) == ("rprec", True)
    assert resolve_method(parse_metric("Rprec@5"), 2, Settings(ranges=True), {}) == ("rprec", True)
    paths, qrels = write_job(tmp_path / "job", n_runs=3, n_topics=30, depth=40, seed=4, max_grade=2, judged=0.3)
    for ranges in (False, True):
        tables = {}
        for fast in (True, False):
            store = tmp_path / f"{ranges}-{fast}.sqlite"
            run_matrix(paths, ["Rprec", "Rprec@5"], qrels=qrels, store=store, jobs=1,
                       settings=Settings(fast=fast, ranges=ranges), progress=False)
            tables[fast] = stored(store)
        assert tables[True].keys() == tables[False].keys() and len(tables[True]) == 3 * 30 * 2
        for key, row in tables[True].items():
            other = tables[False][key]
            assert row["method"] == other["method"] == "rprec" and row["solver"] == "numpy"
            assert row["certified"] and other["certified"] and row["direction"] == other["direction"]
            for column in ("value", "upper_bound", "low", "high"):
                if other.get(column) is not None:
                    assert row[column] == pytest.approx(other[column], abs=1e-12), (key, column, row, other)


@pytest.mark.parametrize("metric", ["Rprec", "Rprec@1", "Rprec@10", "Rprec(rel=2)", "Rprec(rel=3)@5", "Rprec(rel=4)"])
@pytest.mark.parametrize("max_grade", [None, 1, 2])
def test_batch_kernel_equals_the_per_instance_method(metric, max_grade):
    """medopt.batch.fastpath_rprec on blocks of random topics (graded, negatives, shared documents, judged
    relevant documents outside both lists, different lengths) against the per-instance method."""
    from test_rr_kernel import random_topics
    rng = random.Random(zlib.crc32(f"{metric} {max_grade} rprec".encode()))
    parsed = parse_metric(metric)
    for shared_names, depth in ((False, 30), (True, 30), (False, 150)):
        a, b, qrels = random_topics(rng, 80, shared_names, depth)
        runset = load_runset(None, qrels, max_grade=max_grade,
                             columns=[columns_from_rankings("A", a), columns_from_rankings("B", b)])
        topics = runset.common_topics(0, 1)
        rows = med_rows(runset, 0, 1, parsed, "rprec", topics)
        ends = list(zip(*range_columns(runset, 0, 1, parsed, topics, "rprec")))
        assert len(rows) == len(ends) == len(a)
        top = resolve_max_grade(max_grade, qrels)
        for (topic, value, direction, certified, bound, status, assignment), end in zip(rows, ends):
            judged = qrels.get(topic, {})
            expected = medopt.med(parsed, a[topic], b[topic], judged, max_grade=top, method="rprec")
            assert value == pytest.approx(expected.value, abs=1e-12) and bound == value
            assert (certified, status) == (True, "optimal")
            both = medopt.difference_range(parsed, a[topic], b[topic], judged, max_grade=top, method="rprec")
            assert end[1] == pytest.approx(both.low, abs=1e-12) and end[2] == pytest.approx(both.high, abs=1e-12)
            instance = build_instance(parsed, a[topic], b[topic], judged, max_grade=top)
            # the certificates: each assignment, re-scored by the metric's evaluator, gives its value
            for text, want, side in ((assignment, value, direction), (end[9], end[2], "a"), (end[8], -end[1], "b")):
                grades = json.loads(text)
                assert set(grades) <= set(instance.unjudged)
                got = instance.difference({d: grades.get(d, 0) for d in instance.unjudged}, side)
                assert got == pytest.approx(want, abs=1e-12), (topic, side)


DL_2020 = SHARED_DATA / "trec-dl-2020"


@pytest.mark.skipif(not (DL_2020 / "runs").is_dir(), reason=f"TREC DL 2020 runs not found under {DL_2020}")
def test_dl_2020_depth_1000_batch_equals_the_per_instance_method():
    from medopt.io.trec import read_qrels, read_run
    names = sorted(p.name for p in (DL_2020 / "runs").glob("*.run.gz"))[:2]
    qrels = read_qrels(DL_2020 / "qrels.dl20-passage.txt")
    runs = [read_run(DL_2020 / "runs" / name) for name in names]
    runset = load_runset([str(DL_2020 / "runs" / name) for name in names], qrels)
    topics = runset.common_topics(0, 1)
    topics = topics[np.isin(np.array(runset.topics)[topics], list(qrels))][::4]
    metric = parse_metric("Rprec")
    ends = list(zip(*range_columns(runset, 0, 1, metric, topics, "rprec")))
    assert len(ends) >= 10
    for end in ends:
        topic = end[0]
        mine = medopt.difference_range(metric, runs[0].rankings[topic], runs[1].rankings[topic], qrels[topic],
                                       max_grade=int(runset.max_grade[runset.topics.index(topic)]), method="rprec")
        assert mine.certified
        assert end[1] == pytest.approx(mine.low, abs=1e-12) and end[2] == pytest.approx(mine.high, abs=1e-12)
