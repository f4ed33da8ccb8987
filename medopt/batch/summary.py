"""The per-pair summary of a matrix job: one row per (pair of runs, metric, method) over the pair's topics.

Each row holds both runs' observed means (``score_a``, ``score_b``: unjudged documents not relevant, the
scores trec_eval reports), their difference, each run's mean Judged@k (ir_measures' name: the share of its
top k that is judged, k the metric's cutoff), the mean MED and whether every topic's is certified, and, in a
store made with ``--range``, the mean difference range with its verdict (SPEC 7, from
:func:`medopt.core.result.mean_range`: the one place a verdict is made).  The topics are those the job
computed for the pair (SPEC 10).  The summary is what ``matrix --summary FILE`` writes, the store's
``pairs`` table holds and ``plot --kind verdicts`` draws.
"""

from __future__ import annotations

from collections import defaultdict

from ..metrics.companions import COMPANION_METHOD
from ..metrics import Grading, judged_at, parse_metric
from ..core.result import exact_mean, exact_value, mean_range
from ..core.significance import correct_rows, summary_columns


class Observed:
    """Each run's observed score and Judged@k per (run, topic, metric), computed once from the runset."""

    def __init__(self, runset):
        self.runset = runset
        self.index = {name: i for i, name in enumerate(runset.names)}
        self.topic = {topic: t for t, topic in enumerate(runset.topics)}
        self.cache: dict = {}

    def of(self, run: str, topic: str, metric: str) -> tuple[float, float]:
        """(observed score, Judged@k); NaN for MED-U's passage runs, whose score is of characters."""
        key = (run, topic, metric)
        if getattr(self.runset, "characters", False):
            return float("nan"), float("nan")
        if key not in self.cache:
            i, t = self.index[run], self.topic[topic]
            parsed = parse_metric(metric)
            ranking = self.runset.ranking(i, t)
            judgments = self.runset.judgments(t)
            grading = Grading(int(self.runset.max_grade[t]))
            self.cache[key] = (parsed.score(ranking, judgments, grading), judged_at(parsed, ranking, judgments))
        return self.cache[key]


def pair_summary(rows, runset, *, test: str | None = None, alpha: float = 0.05, correction: str = "none") -> list[dict]:
    """The summary rows (PAIR_COLUMNS) of the per-topic ``rows`` (dicts with the store's columns) of the
    pairs of runs in ``runset`` (a RunSet: the observed scores are computed from its rankings and
    judgments; rows of other runs, a store's from an earlier job, are left to it).  ``test`` (SPEC 12, rows
    with ranges): also ``p_reference, p_worst, robust`` (core.significance), Holm or Bonferroni over the
    pairs of each metric with ``correction``."""
    groups: dict = defaultdict(list)
    names = set(runset.names)
    for row in rows:
        if row["method"] != COMPANION_METHOD and row["run_a"] in names and row["run_b"] in names:
            groups[row["run_a"], row["run_b"], row["metric"], row["method"]].append(row)
    observed = Observed(runset)
    summary = []
    for (run_a, run_b, metric, method), group in groups.items():
        scores_a = [observed.of(run_a, r["topic"], metric) for r in group]
        scores_b = [observed.of(run_b, r["topic"], metric) for r in group]
        rational = getattr(parse_metric(metric), "rational", False)
        row = {"run_a": run_a, "run_b": run_b, "metric": metric, "method": method, "topics": len(group),
               "score_a": exact_mean((s for s, _ in scores_a), rational=rational),
               "score_b": exact_mean((s for s, _ in scores_b), rational=rational),
               "diff": exact_mean((a - b if not rational else float(exact_value(a) - exact_value(b))
                                   for (a, _), (b, _) in zip(scores_a, scores_b)), rational=rational),
               "judged_a": exact_mean((j for _, j in scores_a), rational=True),
               "judged_b": exact_mean((j for _, j in scores_b), rational=True),
               "med": exact_mean((r["value"] for r in group), rational=rational), "certified": all(bool(r["certified"]) for r in group),
               "low": None, "high": None, "low_bound": None, "high_bound": None, "verdict": None}
        if all(r.get("low") is not None for r in group):
            span = mean_range([(r["low"], r["high"], r["low_bound"], r["high_bound"]) for r in group],
                              rational=rational)
            row.update(low=span.low, high=span.high, low_bound=span.low_bound, high_bound=span.high_bound,
                       verdict=span.verdict)
            if test is not None:  # SPEC 12: significance under every completion
                row.update(summary_columns([a - b if not rational else float(exact_value(a) - exact_value(b))
                                            for (a, _), (b, _) in zip(scores_a, scores_b)], group, test, alpha,
                                           rational=rational))
        summary.append(row)
    if test is not None:
        correct_rows(summary, correction, alpha)
    return summary
