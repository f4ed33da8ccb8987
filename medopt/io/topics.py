"""Which topics a mean is over (SPEC 10, trec_eval's convention), decided here for every command, plot and
API function: the topics the qrels judge and the runs retrieved; ``complete`` (trec_eval's ``-c``) every
judged topic; ``--topics`` a chosen few."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..errors import MedoptError, option
from .trec import _some, sort_topics


def mean_topics(retrieved, qrels: Mapping, qrels_path, *, complete: bool = False,
                chosen=None) -> tuple[list[str], list[str]]:
    """SPEC 10, the one place that decides which topics a mean is over: the topics the qrels judge
    (at least one judgment) and the run(s) ``retrieved``, as trec_eval averages; with ``complete``
    (trec_eval's ``-c``) every topic the qrels judge, a run that did not retrieve one ranking
    nothing there.  Without qrels (``qrels_path`` None) nothing is judged and the retrieved topics
    count.  ``chosen`` (``--topics``) keeps only those topics.  Returns the topics (sort_topics
    order) and the warnings: retrieved topics left out as not judged, chosen topics not there."""
    retrieved = set(retrieved)
    notes = []
    if qrels_path is None:
        topics = retrieved
    else:
        judged = {t for t, judgments in qrels.items() if judgments}
        if not judged:
            raise MedoptError(f"{qrels_path} holds no judgments (empty, or comments only): no topic to average "
                              "over (give no qrels to compare with nothing judged)")
        topics = judged if complete else retrieved & judged
        if not topics:
            raise MedoptError(f"{qrels_path} judges none of the {len(retrieved)} topic(s) of the runs (it judges "
                              f"{_some(sort_topics(judged), 5)}; the runs have {_some(sort_topics(retrieved), 5)})")
        left_out = sort_topics(retrieved - judged)
        if left_out:
            notes.append(f"{len(left_out)} of {len(retrieved)} run topic(s) left out, not judged in {qrels_path} "
                         f"(means are over the judged topics, as trec_eval's): {_some(left_out)}")
        missed = sort_topics(judged - retrieved)
        if missed and not complete:
            notes.append(f"{len(missed)} topic(s) judged in {qrels_path} not retrieved, left out as trec_eval "
                         f"does; {option('complete')} counts them as empty rankings: {_some(missed)}")
    if chosen is not None:
        chosen = [str(t) for t in chosen]
        absent = [t for t in chosen if t not in topics]
        topics = topics & set(chosen)
        if absent:
            notes.append(f"{len(absent)} of the {len(chosen)} chosen topic(s) are not among the topics compared "
                         f"(judged and retrieved): {_some(absent)}")
        if not topics:
            raise MedoptError("none of the chosen topics is judged and retrieved: nothing to compare")
    return sort_topics(topics), notes


def read_topic_choice(value) -> list[str] | None:
    """``--topics``: a file with one topic id per line (the first field; ``#`` comments skipped), or a
    comma- or space-separated list of ids; None stays None."""
    if value is None:
        return None
    if isinstance(value, (list, tuple, set, frozenset)):
        return [str(t) for t in value]
    text = str(value)
    if os.path.isfile(text):
        topics = []
        with open(text, encoding="utf-8", errors="replace") as lines:
            for line in lines:
                fields = line.split()
                if fields and not fields[0].startswith("#"):
                    topics.append(fields[0])
        if not topics:
            raise MedoptError(f"{text}: no topic ids (one per line)")
        return topics
    topics = [t for t in text.replace(",", " ").split() if t]
    if not topics:
        raise MedoptError(f"{option('topics', None)} {value!r} names no topic: give a file of topic ids or a list "
                          "such as 1,2,3")
    return topics


def unretrieved_topics(qrels: Mapping, complete: bool) -> list[str]:
    """The topics a runset must code although no run may have retrieved them: with ``complete``
    (trec_eval's -c) every topic the qrels judge, else none."""
    return [t for t, judged in qrels.items() if judged] if complete else []
