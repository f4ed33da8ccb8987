"""Time and memory limits at systematic-review depth (issue 49, item 5; docs/limits.md): a time-limited
call on a 1000-deep run against a 10,000-deep one returns within T + 10% + 1 s with its peak resident
set under MEDOPT_MEMORY_LIMIT_GB, and keeps a proven bound; and the pieces that used to ignore the
deadline and the memory guard there (q_quick's bound per R, the rank dominance, the roof dual's pairs,
the nDCG profile search) are checked against what they replace."""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from medopt.kernels import bounds_by_count as q_quick
from medopt.core.instance import build_instance
from medopt.synthetic.random_instances import random_instances
from medopt.core.reductions import dominance_keys, rank_dominance

LIMIT_GB = 1.0

DEEP_CALL = """
import json, resource, sys, time
import medopt
from medopt.synthetic.generate import generate_qrels, generate_runs
metric, time_limit, max_grade, method = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
runs = generate_runs(2, 1, 10_000, seed=7, similarity=0.6)
a, b = runs["run0"]["401"][:1000], runs["run1"]["401"]  # 1000 deep against 10,000 deep
judged = generate_qrels({"a": {"401": a}, "b": {"401": b}}, seed=3, pool_depth=100)["401"]
medopt.med(metric, a[:20], b[:20], judged)  # the models and solvers imported
started = time.perf_counter()
if method == "range":  # both ends of the difference range
    result = medopt.difference_range(metric, a, b, judged, time_limit=time_limit, max_grade=max_grade or None)
    value, bound = max(result.high, -result.low), max(result.high_bound, -result.low_bound)
else:
    result = medopt.med(metric, a, b, judged, time_limit=time_limit, max_grade=max_grade or None, method=method)
    value, bound = result.value, result.upper_bound
seconds = time.perf_counter() - started
print(json.dumps({"seconds": seconds, "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                  "value": value, "bound": bound, "certified": result.certified,
                  "status": result.status, "method": result.method}))
"""


def deep_call(metric: str, time_limit: float, max_grade: int = 0, method: str = "auto") -> dict:
    """The call in a fresh interpreter under a memory limit of LIMIT_GB, after a small call of the same
    metric has imported the models (the first call's imports count against its limit too:
    tests/limits/test_limits.py times that on its own): its seconds (counted from the call, as time_limit
    is) and the process's peak resident set."""
    env = {"MEDOPT_MEMORY_LIMIT_GB": str(LIMIT_GB), "PATH": "/usr/bin:/bin",
           "PYTHONPATH": ":".join(p for p in sys.path if p)}
    out = subprocess.run([sys.executable, "-c", DEEP_CALL, metric, str(time_limit), str(max_grade), method],
                         capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("metric, method", [("AP", "auto"), ("AP@1000", "auto"), ("AP", "range")])
def test_map_at_systematic_review_depth_keeps_the_time_and_memory_limits(metric, method):
    """trec_eval's map (AP over every rank, and AP@1000) on a generated 1000-deep against 10,000-deep
    pair, time_limit=1, MEDOPT_MEMORY_LIMIT_GB=1 (docs/limits.md#at-systematic-review-depth: q_quick's
    bound per R held a 10,000 x 10,000 matrix per direction, outside the deadline): within T + 10% + 1 s
    and under the limit, with a proven bound below the trivial one and above the value reached (the MED,
    or with ``range`` the larger end of the difference range)."""
    got = deep_call(metric, 1.0, method=method)
    assert got["seconds"] <= 1.0 * 1.1 + 1.0, got
    assert got["peak"] < LIMIT_GB * 2 ** 30, got
    assert got["value"] <= got["bound"] + 1e-12 and got["bound"] < 1.0, got
    assert got["certified"] is False or got["bound"] - got["value"] <= 1e-6, got


def test_the_greedy_keeps_the_time_limit_at_depth():
    """Moffat's greedy (a warm start, and a method) took no time limit, and its path at depth 10,000 is
    long; now each direction stops at its share of the limit."""
    got = deep_call("AP", 1.0, method="greedy")
    assert got["seconds"] <= 1.0 * 1.1 + 1.0, got
    assert got["peak"] < LIMIT_GB * 2 ** 30 and 0 < got["value"] <= got["bound"], got


def test_the_ndcg_profile_search_keeps_the_time_and_memory_limits():
    """nDCG@10 with a top grade of 300,000 (the profile search's G x (n + 1) cells fit in the limit, but
    its loops over the grades ignored the deadline): within T + 10% + 1 s, under the limit, by the
    profile search."""
    got = deep_call("nDCG@10", 2.0, max_grade=300_000)
    assert got["seconds"] <= 2.0 * 1.1 + 1.0, got
    assert got["peak"] < LIMIT_GB * 2 ** 30, got
    assert got["value"] <= got["bound"] + 1e-12 and got["method"] == "ndcg-profiles", got


def exact_bounds(instance, direction, **options):
    """bound(R) for every R, one R at a time (EXACT_ENTRIES large enough)."""
    saved = q_quick.EXACT_ENTRIES
    q_quick.EXACT_ENTRIES = 10 ** 12
    try:
        return q_quick.bounds_by_r(instance, direction, **options)
    finally:
        q_quick.EXACT_ENTRIES = saved


@pytest.mark.parametrize("metric, options", [("AP", {"beta": 0.0}), ("Q(beta=1)@8", {}), ("Q(beta=0.5,rel=2)@8", {})])
def test_q_quick_blocks_bound_each_r_from_above_and_reach_the_largest(monkeypatch, metric, options):
    """bounds_by_r in blocks of R (EXACT_ENTRIES 0, as at depth): every R's value is at least its own
    bound(R) (so still a bound on every assignment with R relevant documents), and the largest over R
    equals the largest bound(R) (the block of the largest bound is halved down to one R); with no
    room to halve (REFINE_ENTRIES 0) one block still bounds every R."""
    monkeypatch.setattr(q_quick, "EXACT_ENTRIES", 0)
    checked = 0
    for seed in range(3):
        for case in random_instances(seed=500 + seed, count=25, max_grade=1 + seed, max_unjudged=12):
            name = metric if "@" not in metric else metric.split("@")[0] + f"@{case.k}"
            for other, direction in itertools.product((case.b, ()), "ab"):  # () : a score range's empty list
                instance = build_instance(name, case.a, other, case.judgments, max_grade=case.max_grade)
                exact = exact_bounds(instance, direction, **options)
                blocked = q_quick.bounds_by_r(instance, direction, **options)
                assert blocked.keys() == exact.keys()
                if not exact:
                    continue
                assert all(blocked[r] >= exact[r] - 1e-12 for r in exact), (name, case, direction)
                assert max(blocked.values()) == pytest.approx(max(exact.values()), abs=1e-12)
                monkeypatch.setattr(q_quick, "REFINE_ENTRIES", 0)
                one = q_quick.bounds_by_r(instance, direction, **options)
                monkeypatch.setattr(q_quick, "REFINE_ENTRIES", 4_000_000)
                assert all(one[r] >= exact[r] - 1e-12 for r in exact), (name, case, direction)
                checked += 1
    assert checked > 50


def covering_pairs(docs, key):
    """The covering pairs of the dominance order by its definition: d above or level with e in the
    better list and below or level with it in the worse one, nothing else between them."""
    above = lambda d, e: d != e and key[d][0] <= key[e][0] and key[d][1] >= key[e][1]  # noqa: E731
    return {(d, e) for d, e in itertools.permutations(docs, 2)
            if above(d, e) and not any(above(d, c) and above(c, e) for c in docs)}


def test_rank_dominance_gives_the_covering_pairs():
    """The array version of the rank dominance (one pass per document, under the deadline; the Python
    double loop it replaces ignored it) gives exactly the covering pairs of the order, each once, on
    random lists of every shape."""
    rng = random.Random(5)
    total = 0
    for _ in range(400):
        pool = [f"d{i}" for i in range(rng.randint(0, 14))]
        better = rng.sample(pool, rng.randint(0, len(pool)))
        worse = rng.sample(pool, rng.randint(0, len(pool)))
        docs = [d for d in pool if d in better or d in worse]
        rng.shuffle(docs)
        docs = docs[:rng.randint(0, len(docs))]
        keys = dominance_keys(docs, better, worse)
        pairs = rank_dominance(docs, keys)
        assert len(pairs) == len(set(pairs)) and set(pairs) == covering_pairs(docs, keys), (docs, better, worse)
        total += len(pairs)
    assert total > 500


def test_the_roof_duals_pairs_are_refused_past_the_memory_ceiling():
    """quadratic_form asks limits.check_room before building its pairs: under a ceiling the process is
    already past, a form of more than SMALL_STEP bytes raises OutOfRoom (an OutOfTime, so the exact
    driver ends the direction at its quick bound), and a small one is built as before."""
    from medopt.formulations.precision.bounds import ROOF_BYTES_PER_PAIR, pair_count
    from medopt.formulations.precision.sums import PrecisionSums
    from medopt.synthetic.generate import generate_runs
    from medopt.core.deadlines import SMALL_STEP, OutOfRoom, memory_ceiling

    runs = generate_runs(2, 1, 1500, seed=2, similarity=0.6)
    a, b = runs["run0"]["401"], runs["run1"]["401"]
    large = build_instance("AP", a, b, {})
    small = build_instance("AP", a[:30], b[:30], {})
    assert ROOF_BYTES_PER_PAIR * pair_count(large) > SMALL_STEP >= ROOF_BYTES_PER_PAIR * pair_count(small)
    formulation = PrecisionSums()
    with memory_ceiling(1):  # a ceiling of 0.9 bytes beyond the process: nothing more fits
        with pytest.raises(OutOfRoom):
            formulation.quadratic_form(large, "a")
        constant, linear, first, second, weights, implies = formulation.quadratic_form(small, "a")
    assert len(first) == pair_count(small) and np.all(np.isfinite(weights))
    formulation.quadratic_form(large, "a", memo={})  # no ceiling: nothing refused


def test_matrix_sends_a_profile_search_of_many_grades_through_the_time_limit(tmp_path, monkeypatch):
    """matrix's fast path runs the profile search without a deadline: above FAST_PROFILE_GRADES grades
    each topic goes through medopt.med (under --time-limit and the memory ceiling), below it the fast
    path stays; both give the same rows (the threshold lowered to 3 here, G = 5)."""
    from click.testing import CliRunner

    from medopt import methods
    from medopt.batch import matrix
    from medopt.cli import main
    from medopt.metrics import parse_metric
    from medopt.io.store import ResultStore

    ndcg = parse_metric("nDCG@5")
    top = methods.FAST_PROFILE_GRADES  # the profile search's batch kernel covers up to it (methods.REGISTRY)
    assert matrix.resolve_method(ndcg, top, matrix.Settings(), {}) == ("ndcg-profiles", True)
    assert matrix.resolve_method(ndcg, top + 1, matrix.Settings(), {}) == ("ndcg-profiles", False)
    examples = Path(__file__).resolve().parents[2] / "examples"
    values = {}
    for label, threshold in (("fast", top), ("per topic", 3)):
        monkeypatch.setattr(methods, "FAST_PROFILE_GRADES", threshold)
        store = tmp_path / f"{threshold}.sqlite"
        result = CliRunner().invoke(main, ["matrix", str(examples / "run.run0.txt"), str(examples / "run.run1.txt"),
                                           "--qrels", str(examples / "qrels.txt"), "-m", "nDCG@5", "--max-grade", "5",
                                           "--time-limit", "30", "--store", str(store), "-j", "1"])
        assert result.exit_code == 0, result.output
        values[label] = {row["topic"]: (row["value"], row["certified"], row["solver"])
                         for row in ResultStore(store, write=False).rows()}
    assert values["fast"].keys() == values["per topic"].keys() and len(values["fast"]) == 10
    assert {solver for _, _, solver in values["fast"].values()} != {solver for _, _, solver in values["per topic"].values()}
    for topic, (value, certified, _) in values["fast"].items():
        assert certified and values["per topic"][topic][1], topic
        assert values["per topic"][topic][0] == pytest.approx(value, abs=1e-9), topic
