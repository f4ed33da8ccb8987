"""medopt's metric evaluators against trec_eval's own reference outputs.

Reference outputs (trec_eval prints 4 decimals, so ``|ours - theirs| <= 5e-5``;
``TOL`` adds 1e-12 for printed values that sit exactly on a rounding half):

1. trec_eval's test fixtures, ``shared/data/trec_eval`` (usnistgov/trec_eval @ f425365).
   The flags that produced each file, inferred from the files and checked by
   ``test_fixture_flags`` (num_q, num_ret and num_rel per topic must agree):

   =============  ===================================================  =========================
   file           command                                              tells it apart
   =============  ===================================================  =========================
   out.test       trec_eval qrels.test results.test                    default measures, no rows
   out.test.a     trec_eval -a qrels.test results.test                 all measures, mean only
   out.test.aq    trec_eval -a -q qrels.test results.test              + per-topic rows (-q)
   out.test.aqc   trec_eval -a -q -c qrels.test results.trunc          topic 302 has num_ret 0
   out.test.aql   trec_eval -a -q -l2 qrels.rel_level results.test     num_rel = #grade >= 2
   =============  ===================================================  =========================

   ``results.trunc`` has no topic 302 and junk after the 6th column (trec_eval reads
   six fields and ignores the rest; medopt's reader rejects such lines, so the test
   feeds it the first six fields).  With ``-c`` trec_eval scores the qrels topic the
   run lacks as an empty ranking (every measure 0) and averages over all 3 qrels
   topics; without ``-c`` it averages over the topics in both files.

2. The DL-HARD document runs, ``shared/data/dl-hard/baselines/doc/*.run.eval``:
   ``trec_eval -q -a -l2 dl_hard-doc.qrels RUN`` (the per-topic num_rel is the number
   of grade >= 2 documents; trec_eval's own 'all' num_rel ignores -l).  These runs
   have many tied scores, so they also check that ``read_run`` orders a topic as
   trec_eval does (score descending, ties by docid descending).

Measure mapping, with L the relevance level (``-l``, default 1):

=================  =====================  ==================================================
trec_eval          medopt                 notes
=================  =====================  ==================================================
P_k                ``P(rel=L)@k``         divides by k even when fewer than k retrieved
recip_rank         ``RR(rel=L)``          whole retrieved list
map                ``AP(rel=L)``          whole retrieved list; R = qrels docs with grade >= L
map_cut_k          ``AP(rel=L)@k``        R as for map (not min(k, R))
ndcg               ``nDCG``               gain = grade, *not* affected by -l; ideal over all
                                          the topic's judged docs; whole retrieved list
ndcg_cut_k         ``nDCG@k``             as ndcg, cut at k
rbp                ``RBP(p=0.9)``         m_rbp.c's default p is 0.9 (ir_measures' is 0.8);
                                          gains = grade, rescaled to [0, 1] by dividing by
                                          the topic's top level when it exceeds 1: medopt's
                                          default gain(g) / gain(G), G = max(1, top grade);
                                          not affected by -l
success_k          ``Success(rel=L)@k``   1 iff a doc of grade >= L is in the top k
recall_k           ``R(rel=L)@k``         relevant in the top k / R, R as for map; 0 when
                                          R = 0
Rprec              ``Rprec(rel=L)``       relevant in the top R / R (fewer than R retrieved:
                                          still / R); 0 when R = 0
=================  =====================  ==================================================

For ``L == 1`` the trec_eval name itself (P_k, map, map_cut_k, recip_rank, ndcg,
ndcg_cut_k, success_k, recall_k, Rprec) is also parsed by ``medopt.parse_metric`` (its
trec_eval aliases) and must give the same metric.  Not ``rbp``: medopt parses it case-insensitively as the
ir_measures-style ``RBP`` with p = 0.8, not trec_eval's p = 0.9.

Not compared (no medopt counterpart): Rprec_mult, bpref, gm_*, iprec_at_recall,
11pt_avg, relative_P_k, set_*, infAP, ndcg_rel, Rndcg, binG, G, utility,
rbp_resid, unj_k, num_* (the num_* are used only to check the inferred flags).

Grades: trec_eval reads a negative grade as "in the pool but unjudged": never relevant,
gain 0, outside R and the ideal (qrels.rel_level topic 303 has grade -1).  medopt
reads it as judged non-relevant, which gives the same scores.  A topic with no
relevant document scores 0 for map and ndcg in both (AP is 0 when R = 0, nDCG 0 when
IDCG = 0).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

import medopt
from conftest import SHARED_DATA

trec = pytest.importorskip("medopt.io.trec", reason="medopt.io.trec (read_run/read_qrels) not available")

DATA = SHARED_DATA
TREC_EVAL = DATA / "trec_eval"
DL_HARD = DATA / "dl-hard"

TOL = 5e-5 + 1e-12

# out file -> (qrels, results, -l level, -c complete, -q per-topic rows)
FIXTURES = {
    "out.test": ("qrels.test", "results.test", 1, False, False),
    "out.test.a": ("qrels.test", "results.test", 1, False, False),
    "out.test.aq": ("qrels.test", "results.test", 1, False, True),
    "out.test.aqc": ("qrels.test", "results.trunc", 1, True, True),
    "out.test.aql": ("qrels.rel_level", "results.test", 2, False, True),
}

_CUT = re.compile(r"^(P|map_cut|ndcg_cut|success|recall)_(\d+)$")


def medopt_metric(name: str, level: int) -> str | None:
    """The medopt metric string for trec_eval measure ``name`` at relevance level ``level``."""
    rel = "" if level == 1 else f"(rel={level})"
    if name == "map":
        return f"AP{rel}"
    if name == "recip_rank":
        return f"RR{rel}"
    if name == "ndcg":
        return "nDCG"
    if name == "rbp":
        return "RBP(p=0.9)"
    if name == "Rprec":
        return f"Rprec{rel}"
    match = _CUT.match(name)
    if not match:
        return None
    family, k = match.groups()
    if family == "P":
        return f"P{rel}@{k}"
    if family == "map_cut":
        return f"AP{rel}@{k}"
    if family == "ndcg_cut":
        return f"nDCG@{k}"
    if family == "recall":
        return f"R{rel}@{k}"
    return f"Success{rel}@{k}"


def ours(name: str, level: int, ranking, grades) -> float:
    return medopt.score(medopt_metric(name, level), ranking, grades)


def read_trec_eval_output(path: Path) -> dict[str, dict[str, str]]:
    """measure -> topic (or 'all') -> printed value."""
    table: dict[str, dict[str, str]] = {}
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        measure, topic, value = line.split(None, 2)
        table.setdefault(measure, {})[topic] = value.strip()
    return table


def read_results(path: Path, tmp_path: Path):
    """trec_eval reads the first six fields of a results line: feed medopt the same."""
    clean = tmp_path / path.name
    clean.write_text("".join(" ".join(line.split()[:6]) + "\n" for line in path.read_text().splitlines() if line.strip()))
    return trec.read_run(clean)


def need(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"shared data absent: {path} (tests compare against ../shared/data)")


def compare(table, level, rankings, qrels, topics):
    """Compare every shared measure per topic and for the mean; returns (#comparisons, mismatches)."""
    mismatches, count = [], 0
    for name, values in sorted(table.items()):
        if medopt_metric(name, level) is None:
            continue
        if level == 1 and name != "rbp":
            assert medopt.parse_metric(name) == medopt.parse_metric(medopt_metric(name, 1)), name
        per_topic = {t: ours(name, level, rankings.get(t, ()), qrels[t]) for t in topics}
        mean = math.fsum(per_topic.values()) / len(per_topic)
        for topic, theirs in values.items():
            mine = mean if topic == "all" else per_topic[topic]
            count += 1
            if not abs(mine - float(theirs)) <= TOL:
                mismatches.append(f"{name} {topic}: medopt {mine:.6f} ({medopt_metric(name, level)}) trec_eval {theirs}")
    return count, mismatches


def evaluated_topics(rankings, qrels, complete):
    """trec_eval's topic set: qrels topics with -c, else topics in both run and qrels."""
    topics = set(qrels) if complete else set(rankings) & set(qrels)
    return sorted(topics)


# -- trec_eval's test fixtures -------------------------------------------------------


def load_fixture(out_name, tmp_path):
    """trec_eval's output table, the run, the qrels, the evaluated topics, -l level and -q flag."""
    need(TREC_EVAL / out_name)
    qrels_name, results_name, level, complete, per_topic = FIXTURES[out_name]
    table = read_trec_eval_output(TREC_EVAL / out_name)
    run = read_results(TREC_EVAL / results_name, tmp_path)
    qrels = trec.read_qrels(TREC_EVAL / qrels_name)
    return table, run, qrels, evaluated_topics(run.rankings, qrels, complete), level, per_topic


@pytest.mark.parametrize("out_name", sorted(FIXTURES))
def test_fixture_flags(out_name, tmp_path):
    """The inferred flags reproduce the counts trec_eval printed (num_q, num_ret, num_rel)."""
    table, run, qrels, topics, level, per_topic = load_fixture(out_name, tmp_path)
    assert int(table["num_q"]["all"]) == len(topics)
    assert int(table["num_ret"]["all"]) == sum(len(run.rankings.get(t, ())) for t in topics)
    assert int(table["num_rel"]["all"]) == sum(1 for t in topics for g in qrels[t].values() if g >= level)
    per_topic_rows = {t for values in table.values() for t in values} - {"all"}
    assert per_topic_rows == (set(topics) if per_topic else set())
    for topic in per_topic_rows:
        assert int(table["num_ret"][topic]) == len(run.rankings.get(topic, ()))
        assert int(table["num_rel"][topic]) == sum(1 for g in qrels[topic].values() if g >= level)


@pytest.mark.parametrize("out_name", sorted(FIXTURES))
def test_trec_eval_fixture(out_name, tmp_path):
    table, run, qrels, topics, level, per_topic = load_fixture(out_name, tmp_path)
    count, mismatches = compare(table, level, run.rankings, qrels, topics)
    shared = {m for m in table if medopt_metric(m, level)}
    rows = 1 + (len(topics) if per_topic else 0)
    assert count == len(shared) * rows
    assert {"map", "recip_rank", "P_5", "Rprec"} <= shared
    if out_name != "out.test":
        assert {"ndcg", "ndcg_cut_10", "map_cut_100", "rbp", "success_10", "recall_100"} <= shared
    assert not mismatches, f"{len(mismatches)}/{count} differ from trec_eval:\n" + "\n".join(mismatches)


def test_complete_flag_scores_missing_topic_zero(tmp_path):
    """-c: the qrels topic absent from the run scores 0 on every measure and counts in the mean."""
    need(TREC_EVAL / "out.test.aqc")
    table = read_trec_eval_output(TREC_EVAL / "out.test.aqc")
    run = read_results(TREC_EVAL / "results.trunc", tmp_path)
    qrels = trec.read_qrels(TREC_EVAL / "qrels.test")
    assert "302" not in run.rankings and "302" in qrels
    for name in ("map", "ndcg", "P_5", "recip_rank", "rbp", "ndcg_cut_10"):
        assert float(table[name]["302"]) == 0.0
        value = medopt.score(medopt_metric(name, 1), (), qrels["302"])
        assert value == 0.0 and isinstance(value, float), (name, value)


def test_relevance_level_changes_binary_measures_only(tmp_path):
    """-l2 on qrels.rel_level: binary measures follow rel=2, graded ones (ndcg, rbp) do not."""
    need(TREC_EVAL / "out.test.aql")
    run = read_results(TREC_EVAL / "results.test", tmp_path)
    qrels = trec.read_qrels(TREC_EVAL / "qrels.rel_level")
    table = read_trec_eval_output(TREC_EVAL / "out.test.aql")
    ranking, grades = run.rankings["301"], qrels["301"]
    assert abs(medopt.score("AP(rel=2)", ranking, grades) - float(table["map"]["301"])) <= TOL
    assert abs(medopt.score("AP", ranking, grades) - float(table["map"]["301"])) > 1e-3
    assert abs(medopt.score("nDCG", ranking, grades) - float(table["ndcg"]["301"])) <= TOL


# -- DL-HARD: trec_eval -q -a -l2 outputs shipped with the runs ------------------------

DL_HARD_MEASURES = ["map", "recip_rank", "ndcg", "P_5", "P_10", "P_20", "P_100", "map_cut_10", "map_cut_100",
                    "map_cut_1000", "ndcg_cut_5", "ndcg_cut_10", "ndcg_cut_20", "ndcg_cut_100", "success_1",
                    "success_5", "success_10", "Rprec", "recall_5", "recall_10", "recall_15", "recall_20",
                    "recall_30", "recall_100", "recall_200", "recall_500", "recall_1000"]
DL_HARD_RUNS = sorted(p.name for p in (DL_HARD / "baselines" / "doc").glob("*.run")) if DL_HARD.exists() else []


@pytest.fixture(scope="module")
def dl_hard_qrels():
    need(DL_HARD / "dl_hard-doc.qrels")
    return trec.read_qrels(DL_HARD / "dl_hard-doc.qrels")


@pytest.mark.parametrize("run_name", DL_HARD_RUNS or [pytest.param("none", marks=pytest.mark.skip(
    reason=f"shared data absent: {DL_HARD} (tests compare against ../shared/data)"))])
def test_dl_hard_trec_eval_outputs(run_name, dl_hard_qrels):
    run_path = DL_HARD / "baselines" / "doc" / run_name
    need(run_path.with_name(run_name + ".eval"))
    table = read_trec_eval_output(run_path.with_name(run_name + ".eval"))
    run = trec.read_run(run_path)
    topics = evaluated_topics(run.rankings, dl_hard_qrels, complete=False)
    assert int(table["num_q"]["all"]) == len(topics) == 50
    for topic in topics:  # the flags: -l2
        assert int(table["num_rel"][topic]) == sum(1 for g in dl_hard_qrels[topic].values() if g >= 2)
    subset = {m: table[m] for m in DL_HARD_MEASURES}
    count, mismatches = compare(subset, 2, run.rankings, dl_hard_qrels, topics)
    assert count == len(DL_HARD_MEASURES) * (len(topics) + 1)
    assert not mismatches, f"{len(mismatches)}/{count} differ from trec_eval:\n" + "\n".join(mismatches)
