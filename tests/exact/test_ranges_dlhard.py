"""Ranges (SPEC 7) on real runs: the 14 DL-HARD document runs and ``dl_hard-doc.qrels``.

Data: ``shared/data/dl-hard/baselines/doc/*.run`` (14 runs, 50 topics, exactly 1000 documents
per topic) and ``dl_hard-doc.qrels`` (grades 0-3; 8 topics top out below 3).  The tests skip when
the shared data is absent, as ``test_metrics_ir_measures.py`` does.

1. RBP's score range against cwl_eval's residual
------------------------------------------------

How cwl_eval (1.0.12, package ``cwl``) computes RBP and its residual (``cwl/ruler``):

- ``RankingMaker.add`` looks each document up in the qrels; the qrels value *is the gain*,
  used verbatim (no scaling by a maximum grade); an unjudged document gets NaN.
- ``Ranking.get_gain_vector(worse_case)`` pads or truncates the gain vector to ``max_n`` ranks
  (default 1000) and fills both the NaNs and the padding with ``min_gain`` (0) in the worst
  case and ``max_gain`` (default 1.0) in the best case.  So the unjudged documents *and* the
  ranks after the ranking's end, up to rank ``max_n``, count as the maximum gain.
- ``RBPCWLMetric`` has continuation probability ``p`` at every rank; ``CWLMetric.w_vector``
  normalises the weights over the ``n = max_n`` ranks: w_i = (1-p) p^(i-1) / (1 - p^n).
- ``CWLMetric.measure`` with ``residuals = True`` scores the worst case (EU, the reported
  score) and the best case; the residual is best EU - worst EU.  The interval is
  [EU, EU + residual].
- ``validate_gains`` rejects a gain above ``max_gain``: the CLI on the raw grades 0-3 needs
  ``--max_gain 3``, and then reports (1-p) sum g_i p^(i-1) without dividing by 3.  (ir_measures'
  ``max_rel`` belongs to its SDCG, not to RBP; its RBP through cwl_eval is binary, ``rel=``.)

The mapping used here: cwl_eval is given the gains g / G (negative grades -> 0) with its default
``max_gain = 1``, where G is the same maximum grade medopt uses: either a fixed G = 3 for every
topic (medopt ``max_grade=3``) or each topic's top grade, at least 1 (medopt's default
``max_grade=None``, SPEC 1).  Then cwl_eval's worst case is medopt's low end (every unjudged
document grade 0) and its best case is medopt's high end with ``residual=True`` (every unjudged
document grade G, gain(G)/gain(G) = 1, plus the tail weight p^L after a ranking of L documents):
both are SPEC 2's RBP, (1-p) sum_i (g_i / G) p^(i-1).  (Equivalently: cwl_eval on the raw grades
with ``max_gain=G``, divided by G.)  cwl_eval is called through its Python API
(``TrecQrelHandler`` / ``RankingMaker`` / ``RBPCWLMetric``), not ``cwl_eval.main``, which
re-reads the run file in file order (it does not sort by score) and writes ``cwl.log`` into the
working directory; both tools get the ranking in ``read_run`` (trec_eval) order.

The one documented difference is cwl_eval's horizon: it stops at rank n = 1000 and renormalises
over those ranks, where medopt's residual runs to infinity.  Exactly,
cwl_low = low / (1 - p^n) and cwl_high = (high - p^n) / (1 - p^n), so the ends differ by at most
p^n / (1 - p^n) <= 5.3e-23 (p = 0.95, n = 1000): the comparison at 1e-9 needs no widening.
Checked at p = 0.8 (G = 3) and p = 0.95 (per-topic G), on every run x topic at the runs' full
depth (1000: no rank after the end inside cwl_eval's horizon, the residual is the unjudged
documents) and with every ranking cut to 10 documents (ranks 11-1000 padded by cwl_eval at the
maximum gain, credited by medopt's ``residual=True`` as p^10).

2. The mean difference range is exact
-------------------------------------

For a pair of runs and a few topics whose top-5s hold few unjudged documents, every joint
assignment (the Cartesian product over the topics of every grade 0..G_t, G_t the topic's top
grade, for every unjudged document of either top 5, a shared document taking one grade) is
enumerated, and the mean over the topics of M(A) - M(B) is computed for each; its minimum and
maximum must equal the mean of the per-topic ``difference_range`` ends (to 1e-9), every end
certified.  Scores come from ``medopt.score`` on the judgments completed by the assignment (the
metric evaluators, none of the models).  A topic's score depends on its own documents only, so
each topic's differences are scored once per topic assignment and the joint enumeration combines
them (it still visits every joint assignment).  Also, on all 50 topics of bm25 vs bm25+rm3,
max(mean high, -mean low) <= mean of per-topic MED (``medopt.med``), strictly exactly when one
topic's ``high`` and another's ``-low`` fall short of their MEDs (SPEC 7: the best directions
differ); it is strict for all four metrics there.
"""

from __future__ import annotations

import itertools
import math

import pytest

import medopt
from conftest import SHARED_DATA

trec = pytest.importorskip("medopt.io.trec", reason="medopt.io.trec (read_run/read_qrels) not available")

DATA = SHARED_DATA
DL_HARD = DATA / "dl-hard"
RUNS_DIR = DL_HARD / "baselines" / "doc"
QRELS = DL_HARD / "dl_hard-doc.qrels"
TOPICS = 50
CWL_DEPTH = 1000  # cwl_eval's max_n (its default), the runs' depth
EXACT = 1e-9


@pytest.fixture(scope="module")
def dl_hard():
    """qrels and every run: {name: rankings in read_run (trec_eval) order}."""
    if not QRELS.exists() or not RUNS_DIR.exists():
        pytest.skip(f"shared data absent: {DL_HARD} (tests compare against ../shared/data)")
    qrels = trec.read_qrels(QRELS)
    runs = {path.name: trec.read_run(path).rankings for path in sorted(RUNS_DIR.glob("*.run"))}
    assert len(runs) == 14 and len(qrels) == TOPICS
    assert all(set(rankings) == set(qrels) for rankings in runs.values())
    return qrels, runs


def top_grade(judgments) -> int:
    """SPEC 1's default G: the topic's largest grade, at least 1."""
    return max(1, max(judgments.values(), default=0))


# -- 1. RBP score range = cwl_eval's [score, score + residual] ---------------------------------


def cwl_handler(qrels, fixed_g: int | None):
    """A cwl_eval qrels handler holding the gains g / G (G fixed, or the topic's top grade)."""
    from cwl.seeker.trec_qrel_handler import TrecQrelHandler

    handler = TrecQrelHandler()
    for topic, judgments in qrels.items():
        g_top = fixed_g if fixed_g is not None else top_grade(judgments)
        for doc, grade in judgments.items():
            handler.put_value(topic, doc, max(grade, 0) / g_top)
    handler.validate_gains(min_gain=0.0, max_gain=1.0)
    return handler


def cwl_rbp_interval(handler, topic: str, ranking, p: float) -> tuple[float, float]:
    """cwl_eval's RBP for one topic: (EU, EU + residual EU), max_gain 1, max_n 1000."""
    from cwl.ruler.measures.cwl_rbp import RBPCWLMetric
    from cwl.ruler.ranking import RankingMaker

    maker = RankingMaker(topic, handler, None, max_gain=1.0, min_gain=0.0, max_n=CWL_DEPTH)
    for doc in ranking:
        maker.add(doc, "Q0")
    metric = RBPCWLMetric(p)
    metric.residuals = True
    metric.measure(maker.get_ranking())
    return metric.expected_utility, metric.expected_utility + metric.residual_expected_utility


# (p, fixed G for both tools or None for the topic's top grade, ranking depth fed to both tools)
RBP_CASES = [(0.8, 3, None), (0.8, 3, 10), (0.95, None, None), (0.95, None, 10)]


@pytest.mark.parametrize("p, fixed_g, depth", RBP_CASES,
                         ids=[f"p={p}-G={g or 'topic'}-depth={d or 'full'}" for p, g, d in RBP_CASES])
def test_rbp_score_range_is_cwl_eval_residual(p, fixed_g, depth, dl_hard):
    pytest.importorskip("cwl.ruler.measures.cwl_rbp", reason="cwl_eval not installed (pip install cwl-eval)")
    qrels, runs = dl_hard
    # cwl_eval's horizon: its ends differ from medopt's by at most p^n / (1 - p^n) (docstring)
    assert p ** CWL_DEPTH / (1 - p ** CWL_DEPTH) < 1e-20
    handler = cwl_handler(qrels, fixed_g)
    metric = f"RBP(p={p})"
    mismatches, count, widths = [], 0, []
    for run_name, rankings in runs.items():
        for topic, ranking in rankings.items():
            ranking = ranking[:depth] if depth is not None else ranking
            assert len(ranking) <= CWL_DEPTH
            cwl_low, cwl_high = cwl_rbp_interval(handler, topic, ranking, p)
            result = medopt.score_range(metric, ranking, qrels[topic], max_grade=fixed_g, residual=True)
            count += 1
            assert result.certified, f"{run_name} {topic}: {result}"
            assert result.low_bound <= result.low + EXACT and result.high <= result.high_bound + EXACT
            widths.append(result.high - result.low)
            if not (abs(result.low - cwl_low) <= EXACT and abs(result.high - cwl_high) <= EXACT):
                mismatches.append(f"{run_name} {topic}: medopt [{result.low!r}, {result.high!r}], "
                                  f"cwl_eval [{cwl_low!r}, {cwl_high!r}]")
    assert count == len(runs) * TOPICS == 700
    assert not mismatches, f"{len(mismatches)}/{count} differ:\n" + "\n".join(mismatches[:20])
    # the residual is never empty here: unjudged documents in every full ranking, a tail when cut
    assert min(widths) > 0
    if depth is not None:
        assert min(widths) >= p ** depth - EXACT


def test_rbp_residual_covers_the_tail(dl_hard):
    """Without ``residual`` the high end misses exactly the tail weight p^L that cwl_eval's
    padding (ranks L+1..1000 at the maximum gain) adds: the tail is part of what is compared."""
    pytest.importorskip("cwl.ruler.measures.cwl_rbp", reason="cwl_eval not installed (pip install cwl-eval)")
    qrels, runs = dl_hard
    p, depth, topic = 0.8, 10, "166046"
    ranking = runs["bm25.run"][topic][:depth]
    handler = cwl_handler(qrels, 3)
    _, cwl_high = cwl_rbp_interval(handler, topic, ranking, p)
    with_tail = medopt.score_range(f"RBP(p={p})", ranking, qrels[topic], max_grade=3, residual=True)
    without = medopt.score_range(f"RBP(p={p})", ranking, qrels[topic], max_grade=3)
    assert abs(with_tail.high - cwl_high) <= EXACT
    assert abs((with_tail.high - without.high) - p ** depth) <= EXACT
    assert with_tail.low == without.low


# -- 2. the mean difference range: exact, and no wider than the mean of MEDs ------------------

METRICS = ("P@5", "nDCG@5", "AP@5", "RR@5")
K = 5

# (run A, run B, topics, unjudged documents of the top-5s per topic, joint assignments)
BRUTE_CASES = [
    # mixed directions (A ahead on 1106007 for nDCG and RR, B on 1112341); 2 bound docs in 177604
    ("bm25.run", "bm25+rm3.run", ("1106007", "1112341", "177604"), (1, 2, 4), 4 * 16 * 256),
    # 166046 tops out at grade 1 (G_t = 1, the per-topic default) and has 2 bound documents
    ("bm25+rm3+t5-mp(zs).run", "bm25.run", ("166046", "443396", "489204"), (5, 3, 1), 32 * 64 * 4),
]


def unjudged_top(a, b, judgments) -> list[str]:
    """The unjudged documents of the two top-k lists (a shared one once)."""
    return sorted({doc for doc in (*a[:K], *b[:K]) if doc not in judgments})


def topic_differences(metric, a, b, judgments, docs, g_top) -> dict[tuple, float]:
    """assignment (grades of ``docs``) -> M(a) - M(b), scored by medopt.score on the completed
    judgments (every other unjudged document grade 0)."""
    out = {}
    for grades in itertools.product(range(g_top + 1), repeat=len(docs)):
        full = dict(judgments)
        full.update(zip(docs, grades))
        out[grades] = (medopt.score(metric, a, full, max_grade=g_top)
                       - medopt.score(metric, b, full, max_grade=g_top))
    return out


@pytest.mark.parametrize("run_a, run_b, topics, sizes, joint", BRUTE_CASES, ids=["bm25-rm3", "rm3t5-bm25"])
def test_mean_difference_range_is_exact(run_a, run_b, topics, sizes, joint, dl_hard):
    qrels, runs = dl_hard
    docs = {t: unjudged_top(runs[run_a][t], runs[run_b][t], qrels[t]) for t in topics}
    assert tuple(len(docs[t]) for t in topics) == sizes
    assert math.prod((top_grade(qrels[t]) + 1) ** len(docs[t]) for t in topics) == joint <= 2 ** 14
    for metric in METRICS:
        tables, ranges = [], []
        for t in topics:
            a, b, judgments = runs[run_a][t], runs[run_b][t], qrels[t]
            table = topic_differences(metric, a, b, judgments, docs[t], top_grade(judgments))
            result = medopt.difference_range(metric, a, b, judgments)  # G: the topic's top grade
            assert result.low_certified and result.high_certified, f"{metric} {t}: {result}"
            # each end's own assignment, looked up in the brute-force table, gives that end
            for value, assignment in ((result.low, result.low_assignment), (result.high, result.high_assignment)):
                key = tuple(assignment.get(doc, 0) for doc in docs[t])
                assert abs(table[key] - value) <= EXACT, (metric, t, assignment, table[key], value)
            tables.append(list(table.values()))
            ranges.append(result)
        visited, low, high = 0, math.inf, -math.inf
        for combo in itertools.product(*tables):  # every joint assignment of all the topics
            mean = sum(combo) / len(topics)
            low, high = min(low, mean), max(high, mean)
            visited += 1
        assert visited == joint
        mean_low = sum(r.low for r in ranges) / len(topics)
        mean_high = sum(r.high for r in ranges) / len(topics)
        assert abs(low - mean_low) <= EXACT, (metric, low, mean_low)
        assert abs(high - mean_high) <= EXACT, (metric, high, mean_high)
        assert low < high  # every metric's joint range is a proper interval here


MED_PAIR = ("bm25.run", "bm25+rm3.run")


def test_mean_range_within_mean_of_meds(dl_hard):
    qrels, runs = dl_hard
    run_a, run_b = MED_PAIR
    figures = {}
    for metric in METRICS:
        lows, highs, meds = [], [], []
        high_short = low_short = False  # some topic's high (-low) below its MED
        for topic in sorted(qrels):
            a, b, judgments = runs[run_a][topic], runs[run_b][topic], qrels[topic]
            result = medopt.difference_range(metric, a, b, judgments)
            med = medopt.med(metric, a, b, judgments)
            assert result.certified and med.certified, f"{metric} {topic}: {result}; {med}"
            assert abs(med.value - max(result.high, -result.low)) <= EXACT, (metric, topic, med.value, result)
            lows.append(result.low)
            highs.append(result.high)
            meds.append(med.value)
            high_short |= result.high < med.value - EXACT
            low_short |= -result.low < med.value - EXACT
        mean_low, mean_high, mean_med = sum(lows) / TOPICS, sum(highs) / TOPICS, sum(meds) / TOPICS
        of_mean = max(mean_high, -mean_low)
        figures[metric] = (mean_low, mean_high, of_mean, mean_med)
        assert of_mean <= mean_med + EXACT, (metric, of_mean, mean_med)
        # strict exactly when both directions fall short somewhere (SPEC 7)
        assert (of_mean < mean_med - EXACT) == (high_short and low_short), (metric, figures[metric])
        assert of_mean < mean_med - EXACT, f"{metric}: expected strictly tighter on {MED_PAIR}: {figures[metric]}"
    for metric, (mean_low, mean_high, of_mean, mean_med) in figures.items():
        print(f"{metric}: mean range [{mean_low:.6f}, {mean_high:.6f}], max(high, -low) {of_mean:.6f}, "
              f"mean MED {mean_med:.6f}")
