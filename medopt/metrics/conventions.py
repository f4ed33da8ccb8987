"""trec_eval's conventions the metrics follow over a set of topics: SPEC 1's top grade G of a qrels file
(one place decides it) and ir_measures' Judged@k."""

from __future__ import annotations

from typing import Mapping, Sequence

from ..errors import MedoptError

PER_TOPIC = "per-topic"


def judged_at(metric, ranking: Sequence, judgments: Mapping) -> float:
    """ir_measures' Judged@k: the share of the ranking's top k that is judged, k the metric's cutoff
    (the whole ranking without one); 0 for an empty ranking.  A passage (docid, offset, length)
    counts as judged when its document is."""
    top = list(ranking)[: metric.depth(len(ranking))]
    if not top:
        return 0.0
    return sum((item[0] if isinstance(item, tuple) else item) in judgments for item in top) / len(top)


def resolve_max_grade(max_grade, qrels: Mapping | None) -> int | None:
    """SPEC 1, the one place G is chosen for a set of topics: ``max_grade`` when it is an integer;
    ``"per-topic"``: None, each topic taking its own largest judged grade (the old rule); None (the
    default): the largest grade of the whole qrels ``qrels`` (topic -> doc -> grade), at least 1, so
    a topic whose judged sample lacks the top grade keeps it."""
    if max_grade == PER_TOPIC:
        return None
    if max_grade is not None:
        if isinstance(max_grade, bool) or not isinstance(max_grade, int) or max_grade < 1:
            raise MedoptError(f"max_grade must be an integer >= 1 or {PER_TOPIC!r}, got {max_grade!r}")
        return max_grade
    return max([1, *(max(judged.values()) for judged in (qrels or {}).values() if judged)])
