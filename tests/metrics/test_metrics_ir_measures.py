"""medopt's metric evaluators against ir_measures (and pytrec_eval) on DL-HARD.

Data: the 14 DL-HARD document runs (``shared/data/dl-hard/baselines/doc/*.run``,
50 topics, depth 1000) and ``dl_hard-doc.qrels`` (grades 0-3), taken as full
judgments: a document absent from the qrels has grade 0 for every library.  Every
metric is compared per topic with tolerance 1e-6 (both sides are exact floats)
except ERR, whose reference prints 5 decimals.  The pytrec_eval and msmarco metrics
are compared on all 14 runs x 50 topics; the slow providers (gdeval runs a perl
script per run, cwl_eval is pure Python) on 5 runs x 50 topics chosen to cover
untied, lightly and heavily tied runs, or on all 14 with ``MEDOPT_FULL_CROSSCHECK=1``
(about 25 s instead of 15 s).

Ranking order.  medopt ranks a topic as trec_eval does (``read_run``: score
descending, ties by docid descending).  ir_measures' providers do not agree on ties
(checked on ``bm25+parade-electra.run``, which has many):

- pytrec_eval (trec_eval inside): score descending, ties by docid descending;
- msmarco (its ``RR@k``): score descending, ties by docid *ascending*;
- cwl_eval: a stable sort on score alone, so ties keep the input order;
- gdeval: score descending, ties by docid descending.

So every library is fed the same order: the run as ``read_run`` orders it, with its
scores rewritten to ``n - i`` (no ties).  ``test_tied_scores_follow_trec_eval``
feeds pytrec_eval the original tied scores instead, which checks ``read_run``'s tie
order against trec_eval's, and ``test_tie_order_matters`` shows that this check can fail.

Metrics and how the definitions map (ir_measures measure -> provider -> medopt call):

======================  ===========  =============================================================
ir_measures             provider     medopt
======================  ===========  =============================================================
P@5, P@10, P@20         pytrec_eval  ``P@k`` (same: relevant iff grade >= 1, divided by k)
RR                      pytrec_eval  ``RR`` (whole ranking)
RR@10                   msmarco      ``RR@10``
nDCG@10/@20/@100, nDCG  pytrec_eval  ``nDCG@k`` / ``nDCG``: same definition (gain = grade, ideal
                                     over all the topic's judged docs, whole ranking when no @k)
AP@100, AP              pytrec_eval  ``AP@100`` / ``AP`` (R = all relevant judged docs, not min(k, R))
R@10/@100/@1000         pytrec_eval  ``R@k`` (relevant in the top k / R, R = all relevant judged docs;
                                     0 when R = 0); the provider takes no ``rel``
Rprec, Rprec(rel=2)     pytrec_eval  ``Rprec`` / ``Rprec(rel=2)``: relevant in the top R / R (whole
                                     ranking; fewer than R retrieved: still / R)
Success@1/@10,          pytrec_eval  ``Success@k`` / ``Success(rel=2)@5``: 1 iff a document of grade
Success(rel=2)@5                     >= rel is in the top k
ERR@20                  gdeval       ``ERR@20`` with ``max_grade=4``.  gdeval.pl (TREC Web 2010)
                                     uses gain (2^g - 1) / 2^4 with a fixed MAX_JUDGMENT = 4,
                                     whatever the collection; medopt's default is
                                     (2^g - 1) / 2^G with G the topic's top grade (3 or less here),
                                     so its default ERR is larger.  Grades here are <= 3, so
                                     ``max_grade=4`` caps nothing.  gdeval prints 5 decimals:
                                     tolerance 5e-6 (+1e-9).  gdeval skips topics with no
                                     positive grade (none here).
RBP(p=.., rel=r)        cwl_eval     ``RBP(p=..)`` with ``max_grade=3`` and
                                     ``gains={g: 1 if g >= r else 0}``.  ir_measures' RBP is binary
                                     when ``rel`` is given (gain 1 iff grade >= rel) and graded when
                                     it is not; only trectools computes graded RBP (not a test
                                     dependency; it also averages over tied scores), and cwl_eval,
                                     the provider used here, requires ``rel``.  medopt's default is
                                     graded, gain(g) / gain(G) = g / G; the binary gain map with
                                     top gain 1 reproduces ir_measures' binary RBP.  cwl_eval scores
                                     the first 1000 ranks with weights renormalised over them,
                                     (1-p) p^(i-1) / (1 - p^1000): a relative change below 1e-22
                                     for p <= 0.95.  medopt's graded RBP is checked against
                                     trec_eval's rbp in test_metrics_trec_eval.py.
SDCG(max_rel=3)@10/@20  cwl_eval     ``SDCG@k`` with ``max_grade=3``: both are DCG@k with gains
                                     g / max_rel over the DCG of k top-grade documents.  medopt's
                                     default G is the topic's top grade, which is below 3 for
                                     some topics, so G must be given.
nDCG(gains={..})@k      pytrec_eval  ``nDCG(gains={..})@k``: ir_measures maps each judged grade
                                     through ``gains.get(grade, grade)`` before trec_eval's ndcg;
                                     medopt's map keeps an unnamed grade's value too.  The map
                                     {1:1,2:3,3:7} also checks ``nDCG(dcg=exp-log2)@100`` (2^g - 1)
                                     exactly.
nDCG(dcg='exp-log2')@k  gdeval       ``nDCG(dcg=exp-log2)@k``: gain 2^g - 1, ideal over the
                                     topic's judged documents (5 decimals: tolerance 5e-6).
AP(rel=r)               cwl_eval     ``SN_AP(rel=r)@k`` on the run cut at k: C/W/L's AP has
                                     C_i = T_{i+1} / T_i, T_i = sum_{j>=i} r_j / j, so
                                     W_i = T_i / sum_j T_j and its value is SP / (the relevant
                                     documents of the ranking it is given): Moffat's SN-AP.
                                     ir_measures pads each ranking to cwl_eval's default depth,
                                     ``max_n=1000``, and C/W/L's AP sums T_i in O(n^2); the run is
                                     cut at k, so the reference runs with ``max_n=k`` (cwl_eval's
                                     ``-n``; 30 s -> 0.4 s a case, values equal to 4.4e-16 on
                                     these 250 rankings).
nDCG@k, nDCG(gains=..)  pytrec_eval  ``SN_DCG@k`` / ``SN_DCG(gains={..})@k`` on the run cut at k with
                                     qrels restricted to the judged documents of its top k
                                     (per run): trec_eval's ideal is then the run's own top-k
                                     gains sorted decreasing, Moffat's self-normalisation (a topic
                                     with none keeps a placeholder judged 0, scoring 0).
======================  ===========  =============================================================

Not compared: Judged@k and the other measures that depend on which documents are
judged; DCG, SSP, SP, AP(norm=min), Rprec@k and Q, which no provider computes; judged_only=True,
which medopt rejects (under a completed assignment every document is judged).

cwl_eval is not a dependency of ir_measures: without it (``pip install cwl-eval``)
the RBP and SDCG comparisons skip; without perl the ERR comparison skips.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest

import medopt
from conftest import SHARED_DATA

ir_measures = pytest.importorskip("ir_measures")
pytrec_eval = pytest.importorskip("pytrec_eval")
trec = pytest.importorskip("medopt.io.trec", reason="medopt.io.trec (read_run/read_qrels) not available")

from ir_measures import AP, ERR, P, R, RBP, RR, SDCG, Rprec, Success, nDCG  # noqa: E402

DATA = SHARED_DATA
DL_HARD = DATA / "dl-hard"
RUNS_DIR = DL_HARD / "baselines" / "doc"
QRELS = DL_HARD / "dl_hard-doc.qrels"

SLOW_PROVIDERS = {"gdeval", "cwl_eval"}
SLOW_PROVIDER_RUNS = ["bm25.run", "bm25+rm3.run", "bm25+bert-mp(zs).run", "bm25+parade-electra.run",
                      "bm25+rm3+t5-mp(zs).run"]
FULL = os.environ.get("MEDOPT_FULL_CROSSCHECK", "") not in ("", "0")

EXACT = 1e-6
GDEVAL = 5e-6 + 1e-9
TOPICS = 50


def binary_gains(rel: int, top: int = 3) -> dict[int, float]:
    return {g: (1.0 if g >= rel else 0.0) for g in range(top + 1)}


# (ir_measures measure, provider, medopt metric, medopt keyword arguments, tolerance)
CASES = [
    (P @ 5, "pytrec_eval", "P@5", {}, EXACT),
    (P @ 10, "pytrec_eval", "P@10", {}, EXACT),
    (P @ 20, "pytrec_eval", "P@20", {}, EXACT),
    (RR, "pytrec_eval", "RR", {}, EXACT),
    (RR @ 10, "msmarco", "RR@10", {}, EXACT),
    (nDCG @ 10, "pytrec_eval", "nDCG@10", {}, EXACT),
    (nDCG @ 20, "pytrec_eval", "nDCG@20", {}, EXACT),
    (nDCG @ 100, "pytrec_eval", "nDCG@100", {}, EXACT),
    (nDCG, "pytrec_eval", "nDCG", {}, EXACT),
    (AP @ 100, "pytrec_eval", "AP@100", {}, EXACT),
    (AP, "pytrec_eval", "AP", {}, EXACT),
    (R @ 10, "pytrec_eval", "R@10", {}, EXACT),
    (R @ 100, "pytrec_eval", "R@100", {}, EXACT),
    (R @ 1000, "pytrec_eval", "R@1000", {}, EXACT),
    (Rprec, "pytrec_eval", "Rprec", {}, EXACT),
    (Rprec(rel=2), "pytrec_eval", "Rprec(rel=2)", {}, EXACT),
    (Success @ 1, "pytrec_eval", "Success@1", {}, EXACT),
    (Success @ 10, "pytrec_eval", "Success@10", {}, EXACT),
    (Success(rel=2) @ 5, "pytrec_eval", "Success(rel=2)@5", {}, EXACT),
    (ERR @ 20, "gdeval", "ERR@20", {"max_grade": 4}, GDEVAL),
    (RBP(p=0.8, rel=1), "cwl_eval", "RBP(p=0.8)", {"max_grade": 3, "gains": binary_gains(1)}, EXACT),
    (RBP(p=0.95, rel=1), "cwl_eval", "RBP(p=0.95)", {"max_grade": 3, "gains": binary_gains(1)}, EXACT),
    (RBP(p=0.8, rel=2), "cwl_eval", "RBP(p=0.8)", {"max_grade": 3, "gains": binary_gains(2)}, EXACT),
    (RBP(p=0.95, rel=3), "cwl_eval", "RBP(p=0.95)", {"max_grade": 3, "gains": binary_gains(3)}, EXACT),
    (SDCG(max_rel=3) @ 10, "cwl_eval", "SDCG@10", {"max_grade": 3}, EXACT),
    (SDCG(max_rel=3) @ 20, "cwl_eval", "SDCG@20", {"max_grade": 3}, EXACT),
    (nDCG(gains={0: 0, 1: 1, 2: 3, 3: 7}) @ 10, "pytrec_eval", "nDCG(gains={2:3,3:7})@10", {}, EXACT),
    (nDCG(gains={0: 0, 1: 0, 2: 1, 3: 5}) @ 20, "pytrec_eval", "nDCG(gains={1:0,2:1,3:5})@20", {}, EXACT),
    (nDCG(gains={0: 0, 1: 1, 2: 3, 3: 7}) @ 100, "pytrec_eval", "nDCG(dcg=exp-log2)@100", {}, EXACT),
    (nDCG(dcg="exp-log2") @ 10, "gdeval", "nDCG(dcg=exp-log2)@10", {}, GDEVAL),
    (nDCG(dcg="exp-log2") @ 20, "gdeval", "nDCG(dcg=exp-log2)@20", {}, GDEVAL),
    (AP(rel=1), "cwl_eval", "SN_AP@10", {}, EXACT),
    (AP(rel=2), "cwl_eval", "SN_AP(rel=2)@20", {}, EXACT),
    (nDCG @ 10, "pytrec_eval", "SN_DCG@10", {}, EXACT),
    (nDCG(gains={0: 0, 1: 1, 2: 3, 3: 7}) @ 20, "pytrec_eval", "SN_DCG(gains={2:3,3:7})@20", {}, EXACT),
]

# the self-normalised metrics: their reference sees each run cut at k and, where True, qrels holding only
# the judged documents of the run's top k (see the table above)
SELF_NORMALISED = {"SN_AP@10": (10, False), "SN_AP(rel=2)@20": (20, False), "SN_DCG@10": (10, True),
                   "SN_DCG(gains={2:3,3:7})@20": (20, True)}
PLACEHOLDER = "\u27e8judged-none\u27e9"  # a judged non-relevant document in no run


def provider(name: str):
    prov = ir_measures.providers.registry[name]
    # the test extra installs every provider used here (gdeval also needs perl): a missing one fails
    assert prov.is_available(), f"ir_measures provider {name} not available: {prov.install_instructions()}"
    return prov


@pytest.fixture(scope="module")
def dl_hard():
    """qrels and every run: {name: rankings in read_run (trec_eval) order}."""
    if not QRELS.exists() or not RUNS_DIR.exists():
        pytest.skip(f"shared data absent: {DL_HARD} (tests compare against ../shared/data)")
    qrels = trec.read_qrels(QRELS)
    runs = {path.name: trec.read_run(path).rankings for path in sorted(RUNS_DIR.glob("*.run"))}
    assert len(runs) == 14 and len(qrels) == TOPICS
    return qrels, runs


def runs_for(provider_name: str, runs: dict) -> dict:
    """The runs a provider is compared on: all of them, or the fixed subset for slow providers."""
    if FULL or provider_name not in SLOW_PROVIDERS:
        return runs
    return {name: runs[name] for name in SLOW_PROVIDER_RUNS}


def untied(rankings, depth: int | None = None) -> dict[str, dict[str, float]]:
    """The rankings (cut at ``depth``) as an ir_measures run whose scores (n - i) have no ties."""
    return {topic: {doc: float(len(docs) - i) for i, doc in enumerate(docs[:depth])} for topic, docs in rankings.items()}


def restricted(qrels, rankings, depth: int) -> dict[str, dict[str, int]]:
    """Each topic's qrels cut to the judged documents of the run's top ``depth`` (a placeholder judged 0
    where there is none: trec_eval scores only topics with qrels)."""
    return {topic: {d: grades[d] for d in rankings.get(topic, ())[:depth] if d in grades} or {PLACEHOLDER: 0}
            for topic, grades in qrels.items()}


@contextlib.contextmanager
def cwl_depth(depth: int):
    """cwl_eval scores rankings to ``depth`` (its ``-n``) instead of the 1000 that ir_measures passes: the
    runs given to it are cut at ``depth``, so the ranks below add nothing but time."""
    try:
        from cwl import cwl_eval
    except ImportError:  # the case does not use cwl_eval, or provider() fails on it
        yield
        return
    maker = cwl_eval.RankingMaker
    cwl_eval.RankingMaker = lambda *args, **kwargs: maker(*args, **{**kwargs, "max_n": depth})
    try:
        yield
    finally:
        cwl_eval.RankingMaker = maker


class Reference:
    """(measure, medopt metric or None, run name, topic) -> ir_measures value, evaluated on first use
    and kept: one evaluation per provider and run for all its cases; one per self-normalised case and
    run, on that case's cut run (and restricted qrels).  Lazy, so that each test worker evaluates only
    the cases of its own tests (cwl_eval's AP is slow)."""

    def __init__(self, qrels, runs):
        self.qrels, self.runs, self.values, self.done = qrels, runs, {}, set()

    def __getitem__(self, key):
        measure, metric, _, _ = key
        group = metric if metric in SELF_NORMALISED else next(
            name for m, name, case, *_ in CASES if str(m) == measure and case not in SELF_NORMALISED)
        if group not in self.done:
            self.evaluate(group)
            self.done.add(group)
        return self.values[key]

    def evaluate(self, group) -> None:
        qrels = self.qrels
        if group in SELF_NORMALISED:
            measure, name = next((m, name) for m, name, metric, *_ in CASES if metric == group)
            depth, restrict = SELF_NORMALISED[group]
            with cwl_depth(depth):
                for run_name, rankings in runs_for(name, self.runs).items():
                    judged = restricted(qrels, rankings, depth) if restrict else qrels
                    evaluator = ir_measures.providers.registry[name].evaluator([measure], judged)
                    for result in evaluator.iter_calc(untied(rankings, depth)):
                        self.values[str(result.measure), group, run_name, result.query_id] = result.value
            return
        measures = [m for m, name, metric, *_ in CASES if name == group and metric not in SELF_NORMALISED]
        evaluator = ir_measures.providers.registry[group].evaluator(measures, qrels)
        for run_name, rankings in runs_for(group, self.runs).items():
            for result in evaluator.iter_calc(untied(rankings)):
                self.values[str(result.measure), None, run_name, result.query_id] = result.value


@pytest.fixture(scope="module")
def reference(dl_hard):
    return Reference(*dl_hard)


@pytest.mark.parametrize("measure, provider_name, metric, kwargs, tol", CASES, ids=[str(c[0]) for c in CASES])
def test_per_topic_against_ir_measures(measure, provider_name, metric, kwargs, tol, dl_hard, reference):
    provider(provider_name)
    assert provider_name in ir_measures.providers.registry and ir_measures.providers.registry[provider_name].supports(measure)
    qrels, runs = dl_hard
    runs = runs_for(provider_name, runs)
    mismatches, count = [], 0
    for run_name, rankings in runs.items():
        for topic, ranking in rankings.items():
            theirs = reference[str(measure), metric if metric in SELF_NORMALISED else None, run_name, topic]
            ours = medopt.score(metric, ranking, qrels[topic], **kwargs)
            count += 1
            if not abs(ours - theirs) <= tol:
                mismatches.append(f"{run_name} {topic}: medopt {metric} {kwargs} = {ours!r}, {measure} = {theirs!r}")
    assert count == len(runs) * TOPICS and len(runs) >= 5
    assert not mismatches, f"{len(mismatches)}/{count} differ:\n" + "\n".join(mismatches[:20])


# -- tied scores ---------------------------------------------------------------------

TIE_MEASURES = {"P_10": "P@10", "ndcg_cut_10": "nDCG@10", "ndcg_cut_20": "nDCG@20", "map": "AP",
                "map_cut_100": "AP@100", "recip_rank": "RR", "recall_100": "R@100", "Rprec": "Rprec",
                "success_5": "Success@5"}


def original_scores(path: Path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            topic, _q0, doc, _rank, score, _tag = line.split()
            run.setdefault(topic, {})[doc] = float(score)
    return run


def docid_ascending(scores: dict[str, float]) -> tuple[str, ...]:
    return tuple(sorted(scores, key=lambda doc: (-scores[doc], doc)))


TIED_RUNS = ["bm25+parade-electra.run", "bm25+electra-mp.run", "bm25+rm3+bert-mp.run", "bm25+t5-mp(zs).run"]


@pytest.mark.parametrize("run_name", TIED_RUNS)
def test_tied_scores_follow_trec_eval(run_name, dl_hard):
    """pytrec_eval on the original (tied) scores equals medopt on read_run's order."""
    qrels, runs = dl_hard
    scores = original_scores(RUNS_DIR / run_name)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(TIE_MEASURES))
    results = evaluator.evaluate(scores)
    mismatches, count = [], 0
    for topic, values in results.items():
        for te_name, metric in TIE_MEASURES.items():
            ours = medopt.score(metric, runs[run_name][topic], qrels[topic])
            count += 1
            if not abs(ours - values[te_name]) <= EXACT:
                mismatches.append(f"{topic} {metric}: medopt {ours!r} pytrec_eval {values[te_name]!r}")
    assert count == TOPICS * len(TIE_MEASURES)
    assert not mismatches, "\n".join(mismatches)


def test_tie_order_matters(dl_hard):
    """The tied-score check can fail: breaking ties by ascending docid changes some scores."""
    qrels, runs = dl_hard
    scores = original_scores(RUNS_DIR / "bm25+parade-electra.run")
    ranking = runs["bm25+parade-electra.run"]
    changed = [topic for topic in ranking
               if any(medopt.score(m, ranking[topic], qrels[topic]) != medopt.score(m, docid_ascending(scores[topic]), qrels[topic])
                      for m in ("nDCG@10", "RR", "AP@100"))]
    assert changed


def test_err_needs_gdeval_max_grade(dl_hard):
    """medopt's default ERR (G = the topic's top grade) differs from gdeval's fixed G = 4."""
    qrels, runs = dl_hard
    rankings = runs["bm25.run"]
    default = [medopt.score("ERR@20", rankings[t], qrels[t]) for t in sorted(rankings)]
    mapped = [medopt.score("ERR@20", rankings[t], qrels[t], max_grade=4) for t in sorted(rankings)]
    assert all(d >= m for d, m in zip(default, mapped))
    assert any(d - m > 1e-3 for d, m in zip(default, mapped))
