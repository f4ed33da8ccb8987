"""``flip_distance`` and its result (SPEC 11; the method and its proof: medopt.flip)."""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from fractions import Fraction

from ..errors import MedoptError, MedoptWarning
from ..core.instance import build_instance
from ..io.frames import as_qrels, as_run, qrels_source
from ..io.topics import mean_topics, read_topic_choice
from ..io.trec import pair_topics
from ..metrics import default_max_grade, is_character_metric, parse_metric, resolve_max_grade
from ..core.result import TOLERANCE, exact_mean, exact_value, mean_range
from .curves import Topic, cost_of, end_of, fill_curve, has_closed_form, solver_for
from .search import search

SCOPES = ("unjudged", "all")
DISTANCES = ("documents", "grades")


@dataclass
class FlipResult:
    """A flip distance (SPEC 11).  ``distance``: F, or the distance of the best witness found when not
    certified; None when no completion flips (``never``) or none was found.  ``lower_bound``: proven,
    F >= it (None for ``never``).  ``documents``: N, the documents that may change.  ``reference``: D_L.
    ``witness``: {topic: {docid: grade}}, the completion at ``distance`` (every changeable document's
    grade); ``changes`` the same restricted to the documents whose grade differs from L;
    ``per_topic``: {topic: changes}.  ``curves``: per topic, how its curve was computed
    (closed-form, exact, enumerate, bound)."""

    metric: str
    distance: int | None
    lower_bound: int | None
    documents: int
    reference: float
    witness: dict
    per_topic: dict
    certified: bool
    never: bool = False
    flipped: float | None = None    # the witness's re-scored mean difference
    changes: dict = field(default_factory=dict)
    curves: dict = field(default_factory=dict)
    topics: int = 0
    seconds: float = 0.0

    def __str__(self) -> str:
        if self.never:
            what = "never (no completion flips)"
        elif self.distance is None:
            what = f"no flip found (>= {self.lower_bound})"
        else:
            what = f"{self.distance} of {self.documents}" + ("" if self.certified else f" (>= {self.lower_bound})")
        mark = "certified" if self.certified else "not certified"
        return f"flip distance[{self.metric}] = {what}; reference {self.reference:+.6f}; {mark}; {self.seconds:.3f}s"


def flip_distance(metric, run_a, run_b, qrels, *, labels=None, scope: str = "unjudged", distance: str = "documents",
                  max_grade=None, time_limit=None, complete: bool = False, topics=None,
                  honour_rank: bool = False) -> FlipResult:
    """The flip distance of runs A and B under ``metric`` (SPEC 11): the fewest documents (``distance=
    "grades"``: grade steps) whose grade must differ from the reference labelling for the mean
    difference over the topics (SPEC 10; ``complete``, ``topics`` as for medopt.compare) to reach 0 or
    cross it.  ``labels``: the reference grades of unjudged documents (a qrels file or any qrels form;
    default 0); ``scope="all"``: judged documents of the lists may change too (reference: their
    judgment).  G follows SPEC 1 (``max_grade``).  ``time_limit`` (seconds) bounds the computation: the
    answer is then the best witness found and a proven lower bound, uncertified.  Runs and qrels in any
    form medopt.compare takes.  The method and its proof: the module docstring."""
    started = time.perf_counter()
    deadline = None if time_limit is None else started + float(time_limit)
    metric = parse_metric(metric)
    if is_character_metric(metric):
        raise MedoptError(f"flip distances are for document metrics, not {metric}")
    if scope not in SCOPES:
        raise MedoptError(f"scope must be one of {', '.join(SCOPES)}, got {scope!r}")
    if distance not in DISTANCES:
        raise MedoptError(f"distance must be one of {', '.join(DISTANCES)}, got {distance!r}")
    first, second = as_run(run_a, "run_a", honour_rank=honour_rank), as_run(run_b, "run_b", honour_rank=honour_rank)
    judgments = as_qrels(qrels)
    reference_labels = as_qrels(labels, "labels") if labels is not None else {}
    chosen, _ = mean_topics(pair_topics(first, second).common, judgments, qrels_source(qrels), complete=complete,
                            chosen=read_topic_choice(topics))
    grade = resolve_max_grade(max_grade, judgments)
    curves, ignored = [], 0
    parts = []
    for topic in chosen:
        judged = judgments.get(topic, {})
        top = default_max_grade(judged) if grade is None else grade
        part, skipped = topic_parts(metric, topic, first.rankings.get(topic, ()), second.rankings.get(topic, ()),
                                     judged, reference_labels.get(topic, {}), top, scope)
        parts.append(part)
        ignored += skipped
    if ignored:
        warnings.warn(f"{ignored} label(s) for judged documents ignored (their judgment stands)", MedoptWarning,
                      stacklevel=2)
    differences = []
    for instance, changeable, reference, topic in parts:
        score_a, score_b = instance.scores(reference)
        differences.append(score_a - score_b)
    rational = metric.rational
    mean_reference = exact_mean(differences, rational=rational) if differences else 0.0
    result = FlipResult(str(metric), None, None, sum(len(p[1]) for p in parts), mean_reference, {}, {}, False,
                        topics=len(parts))
    sign = 0 if abs(mean_reference) <= TOLERANCE else (1 if mean_reference > 0 else -1)
    if sign == 0:  # F = 0: the reference itself reaches 0
        result.distance = result.lower_bound = 0
        result.witness = {p[3]: dict(p[2]) for p in parts}
        result.per_topic = {p[3]: 0 for p in parts}
        result.changes = {p[3]: {} for p in parts}
        result.flipped, result.certified = mean_reference, True
        result.seconds = time.perf_counter() - started
        return result
    curves = [Topic(topic, instance, changeable, reference, cost_of(reference, distance), sign)
              for instance, changeable, reference, topic in parts]
    if rational:
        lead = float(sign * sum((exact_value(d) for d in differences), Fraction(0)))
    else:
        lead = sign * math.fsum(differences)
    ends, lazy = [], {}
    # under a time limit the far ends share half of it evenly, so that every topic gets a proven bound
    far_deadline = None if deadline is None else started + (deadline - started) / 2
    for index, curve in enumerate(curves):  # the far ends (SPEC 7): no completion of the topic moves it further
        solve = solver_for(metric, curve)
        if has_closed_form(metric):  # the exact curve's last point is the far end against D_L (no solve)
            fill_curve(curve, metric, distance, scope, solve, lazy)
            curve.far_bound = curve.values[-1]
            curve.far_witness = curve.witness(len(curve.values) - 1)
            far = curve.reference_difference - sign * curve.far_bound  # the other end is not used below
            ends.append((far, far, far, far))
            continue
        share = None if far_deadline is None else max(far_deadline - time.perf_counter(), 0.0) / (len(curves) - index)
        far = solve(limits=(), time_limit=None if share is None else max(share, 1e-3))
        ends.append((far.low, far.high, far.low_bound, far.high_bound))
        _, end_bound, assignment = end_of(far, sign)
        curve.far_bound = sign * (curve.reference_difference - end_bound)
        curve.far_witness = assignment
        fill_curve(curve, metric, distance, scope, solve, lazy)
    span = mean_range(ends, rational=rational)
    result.curves = {c.topic: c.kind for c in curves}
    # "never" is a proof, not a witness: the proven bounds of the topics' far ends (each range end's bound,
    # SPEC 7, however its solve ended; a closed-form curve's last point, exact) keep the mean difference on D_L's side of 0 under every completion
    proven_never = span.low_bound > TOLERANCE if sign > 0 else span.high_bound < -TOLERANCE
    if proven_never:
        result.never = result.certified = proven_never
        result.per_topic = {c.topic: 0 for c in curves}
        result.seconds = time.perf_counter() - started
        return result
    found, lower = search(curves, lazy, lead, len(curves) * TOLERANCE, deadline)
    if found is None and all(c.far_witness is not None for c in curves):
        # time ran out before the search found one: every topic at its far end (it flips unless open)
        shares = None
        witness = {c.topic: {d: c.far_witness.get(d, 0) for d in c.changeable} for c in curves}
    elif found is not None:
        shares = found[1]
        witness = {c.topic: {d: c.witness(h).get(d, 0) for d in c.changeable} for c, h in zip(curves, shares)}
    else:
        witness = None
    result.lower_bound = lower
    if witness is not None:
        flipped = exact_mean([c.difference(witness[c.topic]) for c in curves], rational=rational)
        if sign * flipped <= TOLERANCE:
            per_topic = {c.topic: c.distance(witness[c.topic]) for c in curves}
            result.distance = sum(per_topic.values())
            result.witness, result.per_topic, result.flipped = witness, per_topic, flipped
            result.changes = {c.topic: {d: g for d, g in witness[c.topic].items() if g != c.reference[d]}
                              for c in curves}
            if lower > result.distance:
                raise MedoptError(f"internal: lower bound {lower} above the witness's distance {result.distance}")
            result.certified = found is not None and lower == result.distance
        elif found is not None:
            raise MedoptError(f"internal: the witness at distance {found[0]} re-scores to a mean difference of "
                              f"{flipped!r}, which does not flip the reference {mean_reference!r}")
    result.seconds = time.perf_counter() - started
    return result


def topic_parts(metric, topic, ranking_a, ranking_b, judged, labels, top, scope):
    """(instance with the changeable documents unjudged, the changeable documents, reference L over them,
    topic) and how many labels were ignored (for judged documents)."""
    base = build_instance(metric, tuple(ranking_a), tuple(ranking_b), judged, max_grade=top)
    listed = tuple(dict.fromkeys(base.a + base.b))
    if scope == "all":
        changeable = listed
        kept = {d: g for d, g in base.judgments.items() if d not in set(listed)}
        instance = build_instance(metric, tuple(ranking_a), tuple(ranking_b), kept, max_grade=top)
    else:
        changeable, instance = base.unjudged, base
    ignored = sum(1 for d in labels if d in judged)
    reference = {}
    for doc in changeable:
        if doc in base.judgments:
            reference[doc] = min(max(base.judgments[doc], 0), top)
        else:
            reference[doc] = min(max(int(labels.get(doc, 0)), 0), top)
    return (instance, changeable, reference, topic), ignored
