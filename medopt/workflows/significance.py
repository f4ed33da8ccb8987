"""``medopt.significance`` (SPEC 12) for two runs: the topics (SPEC 10), G (SPEC 1), each topic's exact
difference range (medopt.difference_range), the reference (unjudged at 0, or SPEC 11's labels), the
worst case and robustness from :mod:`medopt.workflows.significance_tests` (where the method and its proof
are), and the witness re-scored topic by topic with medopt.score."""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from .. import api
from ..errors import MedoptError, MedoptWarning
from ..io.frames import as_qrels, as_run, qrels_source
from ..io.topics import mean_topics, read_topic_choice
from ..io.trec import pair_topics, run_names
from ..metrics import PER_TOPIC, is_character_metric, parse_metric, resolve_max_grade
from ..core.result import TOLERANCE, mean_range
from ..core.significance import check_test, judge, pvalue


@dataclass
class SignificanceResult:
    """SPEC 12 for one pair and metric: the reference p-value (``p_reference``, unjudged at 0 or
    the labels), the worst-case p-value over every completion (``p_worst``), ``robust`` (under
    every completion the mean keeps the reference's sign and p < alpha), the ``witness`` (per topic
    the end used, "low" or "high", and its difference; ``witness_assignment``: its grades),
    ``certified`` (every range end used is certified and the witness re-scores to p_worst) and
    ``p_bound`` (the worst case over the box of the ends' proven bounds: >= the true worst case
    even when an end is not certified).  ``ranges``: the per-topic difference ranges used."""

    metric: str
    test: str
    alpha: float
    topics: list
    reference: dict                # topic -> reference difference
    p_reference: float
    p_worst: float
    p_bound: float
    robust: bool
    witness: dict                  # topic -> (end, difference)
    witness_assignment: dict       # topic -> {doc: grade}
    certified: bool
    mean_reference: float
    mean_low: float
    mean_high: float
    ranges: dict = field(default_factory=dict, repr=False)
    seconds: float = 0.0
    details: dict = field(default_factory=dict)

    @property
    def significant(self) -> bool:
        """Significant at alpha under the reference labelling."""
        return self.p_reference < self.alpha

    def __str__(self) -> str:
        mark = "certified" if self.certified else "uncertified"
        return (f"{self.test}-test[{self.metric}] over {len(self.topics)} topics: p_reference = "
                f"{self.p_reference:.4g}, p_worst = {self.p_worst:.4g} ({'robust' if self.robust else 'not robust'}"
                f" at {self.alpha}; {mark})")


def significance(metric, run_a, run_b, qrels, *, test: str = "t", alpha: float = 0.05, labels=None,
                 max_grade=None, gains=None, method: str = "auto", solver=None, time_limit=None,
                 complete: bool = False, topics=None, honour_rank: bool = False, **options) -> SignificanceResult:
    """SPEC 12: is the difference between ``run_a`` and ``run_b`` under ``metric`` significant under
    every completion of the judgments?  ``test`` "t" (paired t-test, as scipy.stats.ttest_rel) or
    "sign" (scipy.stats.binomtest on the topics with d != 0); the worst case is exact (the proof is
    medopt.workflows.significance_tests's).  Runs and qrels in any form medopt.compare takes; topics (SPEC
    10: ``complete``, ``topics``) and G (SPEC 1: ``max_grade``) as there.  ``labels`` (qrels in any form): the
    reference labelling of SPEC 11 (unjudged documents take their label, others 0; a label for a
    judged document is ignored, with one warning).  ``method``, ``solver``, ``time_limit`` (per
    topic) and further keywords go to medopt.difference_range."""
    started = time.perf_counter()
    test = check_test(test)
    if options.get("residual") or options.get("pad", "none") != "none":
        raise MedoptError("significance re-scores its witness with medopt.score: pad and residual are not taken")
    metric = parse_metric(metric)
    if is_character_metric(metric):
        raise MedoptError(f"significance takes document metrics, not {metric}")
    first, second = as_run(run_a, "run_a", honour_rank=honour_rank), as_run(run_b, "run_b", honour_rank=honour_rank)
    judgments = as_qrels(qrels)
    pair = pair_topics(first, second)
    if not pair.common and not complete:
        raise MedoptError(f"{first.path} and {second.path} have no topic in common")
    chosen, notes = mean_topics(pair.common, judgments, qrels_source(qrels), complete=complete,
                                chosen=read_topic_choice(topics))
    for note in notes:
        warnings.warn(note, MedoptWarning, stacklevel=2)
    grade = resolve_max_grade(max_grade, judgments)
    top = PER_TOPIC if grade is None else grade
    given = as_qrels(labels, "labels") if labels is not None else {}
    ignored = 0
    ranges, reference, rescored, assignments, ends_certified = {}, [], [], {}, True
    for topic in chosen:
        a, b = first.rankings.get(topic, ()), second.rankings.get(topic, ())
        judged = judgments.get(topic, {})
        try:
            result = api.difference_range(metric, a, b, judged, max_grade=top, gains=gains, method=method,
                                          solver=solver, time_limit=time_limit, **options)
        except MedoptError as error:
            raise MedoptError(f"topic {topic}, {metric}: {error}") from None
        ranges[topic] = result
        ends_certified = ends_certified and result.low_certified and result.high_certified
        difference, skipped = reference_difference(metric, a, b, judged, given.get(topic, {}), top, gains,
                                                   result.observed[0] - result.observed[1])
        reference.append(difference)
        ignored += skipped
    if ignored:
        warnings.warn(f"{ignored} label(s) for judged documents ignored (SPEC 11: the judgments stand)",
                      MedoptWarning, stacklevel=2)
    low = [ranges[t].low for t in chosen]
    high = [ranges[t].high for t in chosen]
    verdict = judge(test, alpha, reference, low, high, [ranges[t].low_bound for t in chosen],
                    [ranges[t].high_bound for t in chosen], rational=getattr(metric, "rational", False))
    worst = verdict["worst"]
    witness = {t: (end, value) for t, end, value in zip(chosen, worst.ends, worst.values)}
    for topic, end in zip(chosen, worst.ends):  # re-score the witness: a real completion, topic by topic
        result = ranges[topic]
        assignment = result.low_assignment if end == "low" else result.high_assignment
        assignments[topic] = dict(assignment)
        a, b = first.rankings.get(topic, ()), second.rankings.get(topic, ())
        rescored.append(_difference(metric, a, b, {**judgments.get(topic, {}), **assignment}, top, gains))
    again = pvalue(test, rescored) if worst.sign_kept else (1.0 if _mean_reaches(rescored, verdict, rational=getattr(
        metric, "rational", False)) else math.nan)
    rescores = (all(abs(x - v) <= TOLERANCE for x, v in zip(rescored, worst.values))
                and abs(again - worst.p) <= 1e-9 * max(1.0, worst.p))
    certified = rescores and (ends_certified or not worst.sign_kept)
    return SignificanceResult(
        metric=str(metric), test=test, alpha=float(alpha), topics=list(chosen),
        reference=dict(zip(chosen, reference)), p_reference=verdict["p_reference"], p_worst=worst.p,
        p_bound=verdict["p_bound"], robust=verdict["robust"], witness=witness, witness_assignment=assignments,
        certified=bool(certified), mean_reference=verdict["mean_reference"],
        mean_low=float(np.mean(low)), mean_high=float(np.mean(high)), ranges=ranges,
        seconds=time.perf_counter() - started,
        details={"names": tuple(run_names(first, second)), "rescored": rescores})


def reference_difference(metric, a, b, judged: dict, labels: dict, max_grade, gains, observed: float):
    """One topic's reference difference M(A) - M(B) under J with the labels L (SPEC 11: an unjudged
    document of the lists takes its label, others 0; ``observed``: the difference with L = 0), and how
    many labels were ignored (for judged documents)."""
    ignored = sum(1 for d in labels if d in judged)
    listed = {d: g for d, g in labels.items() if d not in judged and (d in a or d in b)}
    if not listed:
        return observed, ignored
    return _difference(metric, a, b, {**judged, **listed}, max_grade, gains), ignored


def _difference(metric, a, b, grades: dict, max_grade, gains) -> float:
    return api.score(metric, a, grades, max_grade=max_grade, gains=gains) - api.score(
        metric, b, grades, max_grade=max_grade, gains=gains)


def _mean_reaches(values, verdict: dict, *, rational: bool) -> bool:
    """The re-scored witness of a p = 1 case does reach mean 0 or the side opposite the reference."""
    mean = mean_range([(v, v, None, None) for v in values], rational=rational).low
    return mean <= TOLERANCE if verdict["mean_reference"] >= -TOLERANCE else mean >= -TOLERANCE


__all__ = ["SignificanceResult", "reference_difference", "significance"]
