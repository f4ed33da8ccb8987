"""Runs and qrels given as Python objects, turned into what the TREC readers return (SPEC 6).

Wherever medopt takes a run or qrels it takes any of:

- a TREC file (a path): :func:`medopt.io.trec.read_run`, :func:`medopt.io.trec.read_qrels`;
- a pandas DataFrame with the columns of ir_measures (run ``query_id, doc_id, score``; qrels
  ``query_id, doc_id, relevance``), PyTerrier (``qid, docno, score[, rank]``; ``qid, docno, label``)
  or ranx (``q_id, doc_id, score`` for both); the topic column decides which, in that order;
- an ir_measures dict ``{query_id: {doc_id: score}}`` (qrels: ``{query_id: {doc_id: grade}}``); a run's
  inner value may also be a sequence of doc ids, best first;
- an iterable of ir_measures namedtuples, ``ScoredDoc(query_id, doc_id, score)`` or
  ``Qrel(query_id, doc_id, relevance, iteration)`` (plain ``(query_id, doc_id, value)`` tuples too);
- a ranx ``Run`` or ``Qrels`` (recognised by its attributes: ranx need not be installed).

A run is ordered as trec_eval orders it, score descending and ties by doc id descending, unless
``honour_rank``: then by a PyTerrier ``rank`` column (a frame without one is refused), ties as before.
Topic and doc ids become strings (integers as their digits). Every malformed object ends in one
:class:`InputFrameError` naming the object, the row (or topic and document) and the column.
"""

# size: one reader per accepted form of runs and qrels (the DataFrames of ir_measures, PyTerrier and ranx,
# dicts, namedtuples, ranx objects), each with the same one-line errors naming object, row and column.
from __future__ import annotations

import math
import numbers
import os
import sys
from collections.abc import Iterable, Mapping, Sequence

from ..errors import InputFrameError, MedoptError
from .trec import Run, _trec_eval_order, read_qrels, read_run

# (topic, doc, value) columns of each convention, in the order they are looked for
RUN_COLUMNS = (("query_id", "doc_id", "score"), ("qid", "docno", "score"), ("q_id", "doc_id", "score"))
QRELS_COLUMNS = (("query_id", "doc_id", "relevance"), ("qid", "docno", "label"), ("q_id", "doc_id", "score"))
_CONVENTION = {"query_id": "ir_measures", "qid": "PyTerrier", "q_id": "ranx"}


def _is_frame(value) -> bool:
    pandas = sys.modules.get("pandas")  # not imported: the value cannot be a DataFrame
    return pandas is not None and isinstance(value, pandas.DataFrame)


def _ranx(value, kind: str) -> bool:
    """A ranx Run (``kind="run"``) or Qrels: its class, or what it has (``to_dict`` and the dict attribute)."""
    cls = type(value)
    if cls.__module__.split(".")[0] == "ranx":
        return cls.__name__.lower() == kind
    return not _is_frame(value) and callable(getattr(value, "to_dict", None)) and hasattr(value, kind)


def describe(value) -> str:
    """What kind of object a run or qrels is, for messages."""
    if isinstance(value, (str, os.PathLike)):
        return "file"
    if _is_frame(value):
        return "DataFrame"
    if _ranx(value, "run") or _ranx(value, "qrels"):
        return f"ranx {type(value).__name__}"
    return "dict" if isinstance(value, Mapping) else type(value).__name__


# ---------------------------------------------------------------------------
# entry points


def as_run(value, what: str = "run", *, honour_rank: bool = False, name: str | None = None) -> Run:
    """Any accepted run form as a :class:`Run` (``what`` names it in messages; ``name``: its run name)."""
    if isinstance(value, Run):
        return value if name is None else Run(name, value.path, value.rankings, value.tied)
    if isinstance(value, (str, os.PathLike)):
        run = read_run(value, honour_rank=honour_rank)
        return run if name is None else Run(name, run.path, run.rankings, run.tied)
    source = f"{what} ({describe(value)})"
    if _is_frame(value):
        rankings = _frame_run(value, source, honour_rank)
        name = name or _frame_run_name(value, source)
    elif _ranx(value, "run"):
        name = name or getattr(value, "name", None)
        rankings = _dict_run(value.to_dict(), source, honour_rank)
    elif isinstance(value, Mapping):
        rankings = _dict_run(value, source, honour_rank)
    elif isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        rankings = _frame_run(_records(value, source, "score", run=True), source, honour_rank, item="item")
    else:
        raise MedoptError(f"{what}: a run is a TREC file, a DataFrame, a dict {{query_id: {{doc_id: score}}}}, "
                          f"ScoredDoc namedtuples or a ranx Run, not {type(value).__name__}")
    if not rankings:
        raise InputFrameError(source, None, None, "empty run (no rows)")
    return Run(name=str(name) if name else what, path=source, rankings=rankings)


def as_qrels(value, what: str = "qrels") -> dict[str, dict[str, int]]:
    """Any accepted qrels form as topic -> doc id -> grade (None: no judgments)."""
    if value is None:
        return {}
    if isinstance(value, (str, os.PathLike)):
        return read_qrels(value)
    source = f"{what} ({describe(value)})"
    if _is_frame(value):
        return _frame_qrels(value, source)
    if _ranx(value, "qrels"):
        return _dict_qrels(value.to_dict(), source)
    if isinstance(value, Mapping):
        return _dict_qrels(value, source)
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        return _frame_qrels(_records(value, source, "relevance", run=False), source, item="item")
    raise MedoptError(f"{what}: qrels are a TREC file, a DataFrame, a dict {{query_id: {{doc_id: grade}}}}, Qrel "
                      f"namedtuples or a ranx Qrels, not {type(value).__name__}")


def qrels_source(value, what: str = "qrels") -> str | None:
    """How messages name the qrels: the path of a file, ``qrels (DataFrame)`` for an object, None for none."""
    if value is None:
        return None
    return str(value) if isinstance(value, (str, os.PathLike)) else f"{what} ({describe(value)})"


def one_topic(a, b=None, judgments=None, *, honour_rank: bool = False):
    """``(a, b, judgments)`` for one topic's computation (``medopt.med`` and its kin).

    A sequence of doc ids stays as it is, and so does a ``{doc_id: grade}`` mapping of judgments; a
    run in any other form must hold one topic (a ``{doc_id: score}`` mapping is one topic's scores),
    and qrels holding several topics give that topic's judgments.  The fourth item is SPEC 1's G of
    such qrels (the largest grade of every topic, at least 1; None when one topic's judgments came)."""
    topics = set()
    rankings = []
    for what, value in (("a", a), ("b", b)):
        if value is None or (isinstance(value, Sequence) and not isinstance(value, (str, bytes))) or \
                isinstance(value, bytes):
            rankings.append(value)
            continue
        if isinstance(value, str):
            raise MedoptError(f"ranking {what} must be a sequence of document ids, or a run (a TREC file: pass a "
                              "pathlib.Path), got str")
        if isinstance(value, Mapping) and not _nested(value):  # one topic's {doc_id: score}
            rankings.append(_dict_run({"?": value}, f"ranking {what} (dict)", honour_rank).get("?", ()))
            continue
        run = as_run(value, f"ranking {what}", honour_rank=honour_rank)
        if len(run.rankings) != 1:
            raise MedoptError(f"ranking {what} holds {len(run.rankings)} topics; medopt.med compares one topic "
                              "(medopt.compare takes whole runs)")
        (topic, ranking), = run.rankings.items()
        rankings.append(ranking)
        topics.add(topic)
    if len(topics) > 1:
        raise MedoptError(f"rankings a and b are of different topics: {' and '.join(sorted(topics))}")
    if judgments is None or (isinstance(judgments, Mapping) and not _nested(judgments)):
        return rankings[0], rankings[1], judgments, None
    qrels = as_qrels(judgments, "judgments")
    top = max([1, *(max(judged.values()) for judged in qrels.values() if judged)])
    if topics:
        return rankings[0], rankings[1], qrels.get(next(iter(topics)), {}), top
    if len(qrels) > 1:
        raise MedoptError(f"judgments hold {len(qrels)} topics and the rankings name none: give one topic's "
                          "judgments, or rankings that name their topic")
    return rankings[0], rankings[1], next(iter(qrels.values()), {}), top


def _nested(mapping: Mapping) -> bool:
    """A mapping of topics (its values mappings or rankings), not one topic's doc -> value."""
    first = next(iter(mapping.values()), None)
    return isinstance(first, (Mapping, Sequence)) and not isinstance(first, (str, bytes))


# ---------------------------------------------------------------------------
# dicts


def _id(value, source, where, what) -> str:
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(int(value))
    if not isinstance(value, str) or not value:
        raise InputFrameError(source, where, None, f"{what} {value!r} is not a non-empty string")
    if "\x00" in value:  # refused as the TREC readers refuse it (NumPy would drop a trailing one)
        raise InputFrameError(source, where, None, f"{what} {value!r} holds a NUL character")
    return value


def _dict_run(run: Mapping, source: str, honour_rank: bool) -> dict[str, tuple[str, ...]]:
    rankings = {}
    for raw_topic, docs in run.items():
        topic = _id(raw_topic, source, f"topic {raw_topic!r}", "topic")
        if isinstance(docs, Sequence) and not isinstance(docs, (str, bytes)):  # a ranking, best first
            ranking = tuple(_id(d, source, f"topic {topic!r}", "document") for d in docs)
            if len(set(ranking)) != len(ranking):
                seen = set()
                dup = next(d for d in ranking if d in seen or seen.add(d))
                raise InputFrameError(source, f"topic {topic!r}", None, f"document {dup!r} appears twice")
            rankings[topic] = ranking
            continue
        if not isinstance(docs, Mapping):
            raise InputFrameError(source, f"topic {topic!r}", None, "expected {doc_id: score} or a list of doc ids, "
                                  f"got {type(docs).__name__}")
        if honour_rank:
            raise MedoptError(f"{source}: honour_rank needs ranks, and {{doc_id: score}} holds none (give each "
                              "topic as a list of doc ids, best first)")
        entries = []
        for raw_doc, score in docs.items():
            doc = _id(raw_doc, source, f"topic {topic!r}", "document")
            if isinstance(score, bool) or not isinstance(score, numbers.Real) or not math.isfinite(score):
                raise InputFrameError(source, f"topic {topic!r}, document {doc!r}", None,
                                      f"score {score!r} is not a finite number")
            entries.append((doc, float(score), 0))
        if len({e[0] for e in entries}) != len(entries):
            raise InputFrameError(source, f"topic {topic!r}", None, "a document id appears twice (as an integer "
                                  "and as a string)")
        if entries:
            rankings[topic] = _trec_eval_order(entries, False)
    return rankings


def _dict_qrels(qrels: Mapping, source: str) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for raw_topic, grades in qrels.items():
        topic = _id(raw_topic, source, f"topic {raw_topic!r}", "topic")
        if not isinstance(grades, Mapping):
            raise InputFrameError(source, f"topic {topic!r}", None,
                                  f"expected {{doc_id: grade}}, got {type(grades).__name__}")
        judged = out.setdefault(topic, {})
        for raw_doc, grade in grades.items():
            doc = _id(raw_doc, source, f"topic {topic!r}", "document")
            if isinstance(grade, bool) or not isinstance(grade, numbers.Integral):
                raise InputFrameError(source, f"topic {topic!r}, document {doc!r}", None,
                                      f"grade {grade!r} is not an integer")
            judged[doc] = int(grade)
    return out


# ---------------------------------------------------------------------------
# DataFrames (and namedtuples, read into one)


def _records(items, source: str, value_column: str, *, run: bool):
    """ScoredDoc / Qrel namedtuples (or plain ``(query_id, doc_id, value)`` tuples) as a DataFrame."""
    import pandas as pd

    rows = list(items)
    fields = getattr(rows[0], "_fields", None) if rows else ("query_id", "doc_id", value_column)
    if fields is None:
        if not isinstance(rows[0], (tuple, list)) or len(rows[0]) != 3:
            kind = "ScoredDoc(query_id, doc_id, score)" if run else "Qrel(query_id, doc_id, relevance, iteration)"
            raise InputFrameError(source, "item 0", None, f"expected {kind} namedtuples, got {rows[0]!r}")
        fields = ("query_id", "doc_id", value_column)
    for number, row in enumerate(rows):
        if not isinstance(row, (tuple, list)) or len(row) != len(fields):
            raise InputFrameError(source, f"item {number}", None, f"expected {len(fields)} fields "
                                  f"({', '.join(fields)}), got {row!r}")
    return pd.DataFrame.from_records([tuple(r) for r in rows], columns=list(fields))


def _columns(frame, conventions, source: str, kind: str) -> tuple[str, str, str]:
    for topic, doc, value in conventions:
        if topic in frame.columns:
            missing = [c for c in (doc, value) if c not in frame.columns]
            if missing:
                raise InputFrameError(source, None, missing[0], f"missing: {_CONVENTION[topic]} {kind} have "
                                      f"columns {topic}, {doc}, {value} (found: {_listed(frame.columns)})")
            return topic, doc, value
    expected = "; ".join(f"{_CONVENTION[t]}: {t}, {d}, {v}" for t, d, v in conventions)
    raise InputFrameError(source, None, None, f"no topic column: {kind} have the columns of {expected} "
                          f"(found: {_listed(frame.columns)})")


def _listed(columns) -> str:
    names = [str(c) for c in columns]
    return ", ".join(names[:12]) + (" ..." if len(names) > 12 else "") if names else "none"


def _row(frame, position: int, item: str):
    """How a row is named: its position (``item N`` for namedtuples), and its index label where that differs."""
    if item != "row":
        return f"{item} {position}"
    label = frame.index[position]
    label = label.item() if hasattr(label, "item") else label
    return position if label == position and not isinstance(label, bool) else f"row {position} (index {label!r})"


def _ids(frame, column: str, source: str, item: str):
    """A topic or doc id column as an object array of non-empty strings."""
    import numpy as np
    import pandas as pd

    series = frame[column]
    missing = series.isna().to_numpy()
    if missing.any():
        at = int(np.flatnonzero(missing)[0])
        raise InputFrameError(source, _row(frame, at, item), column, "missing value")
    if pd.api.types.is_integer_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype):
        return series.astype("int64").astype(str).to_numpy(dtype=object)
    if pd.api.types.is_float_dtype(series.dtype):
        values = series.to_numpy(dtype=float)
        bad = ~np.isfinite(values) | (values != np.round(values))
        if bad.any():
            at = int(np.flatnonzero(bad)[0])
            raise InputFrameError(source, _row(frame, at, item), column, f"{values[at]!r} is not a string or an "
                                  "integer")
        return values.astype(np.int64).astype(str).astype(object)
    values = series.to_numpy(dtype=object, copy=True)
    if not pd.api.types.is_string_dtype(series.dtype) or pd.api.types.is_object_dtype(series.dtype):
        for at, value in enumerate(values):
            if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
                values[at] = str(int(value))
            elif not isinstance(value, str):
                raise InputFrameError(source, _row(frame, at, item), column, f"{value!r} is not a string or an "
                                      "integer")
    empty = np.array([not v for v in values], dtype=bool)
    if empty.any():
        raise InputFrameError(source, _row(frame, int(np.flatnonzero(empty)[0]), item), column, "empty string")
    nul = np.array(["\x00" in v for v in values], dtype=bool)
    if nul.any():  # refused as the TREC readers refuse it (NumPy would drop a trailing one)
        at = int(np.flatnonzero(nul)[0])
        raise InputFrameError(source, _row(frame, at, item), column, f"{values[at]!r} holds a NUL character")
    return values


def _numbers(frame, column: str, source: str, item: str, *, integer: bool):
    """A score (finite float) or grade / rank (integer) column."""
    import numpy as np
    import pandas as pd

    series = frame[column]
    if pd.api.types.is_bool_dtype(series.dtype):
        raise InputFrameError(source, _row(frame, 0, item), column, "True/False is not a number")
    values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isfinite(values)
    if integer:
        bad |= values != np.round(np.nan_to_num(values))
    if bad.any():
        at = int(np.flatnonzero(bad)[0])
        what = "an integer" if integer else "a finite number"
        shown = series.iloc[at]
        shown = shown.item() if isinstance(shown, np.generic) else shown
        raise InputFrameError(source, _row(frame, at, item), column, f"{shown!r} is not {what}")
    return values.astype(np.int64) if integer else values


def _repeats(topics, docs):
    """Whether each row repeats an earlier row's (topic, doc)."""
    import pandas as pd

    return pd.DataFrame({"t": topics, "d": docs}).duplicated(keep="first").to_numpy()


def _first_of(topics, docs, at: int) -> int:
    import numpy as np

    return int(np.flatnonzero((topics == topics[at]) & (docs == docs[at]))[0])


def _frame_run(frame, source: str, honour_rank: bool, item: str = "row") -> dict[str, tuple[str, ...]]:
    import pandas as pd

    if not len(frame):
        return {}
    topic_column, doc_column, score_column = _columns(frame, RUN_COLUMNS, source, "runs")
    topics, docs = _ids(frame, topic_column, source, item), _ids(frame, doc_column, source, item)
    scores = _numbers(frame, score_column, source, item, integer=False)
    repeated = _repeats(topics, docs)
    if repeated.any():
        at = int(repeated.argmax())
        first = _first_of(topics, docs, at)
        raise InputFrameError(source, _row(frame, at, item), doc_column, f"duplicate document {docs[at]!r} in topic "
                              f"{topics[at]!r} (first in {_named(_row(frame, first, item))})")
    table = pd.DataFrame({"t": topics, "d": docs, "s": -scores})  # negated: every key sorts ascending below
    keys = ["t", "s", "d"]
    ascending = [True, True, False]
    if honour_rank:
        if "rank" not in frame.columns:
            raise InputFrameError(source, None, "rank", f"missing: honour_rank orders by a rank column (found: "
                                  f"{_listed(frame.columns)})")
        table["r"] = _numbers(frame, "rank", source, item, integer=True)
        keys, ascending = ["t", "r", "s", "d"], [True, True, True, False]
    table = table.sort_values(keys, ascending=ascending, kind="stable")
    return {topic: tuple(group.tolist()) for topic, group in table.groupby("t", sort=False)["d"]}


def _frame_run_name(frame, source: str) -> str | None:
    """The run's name from a ``run`` (or ``runid``, ``run_id``, PyTerrier's ``name``) column holding one
    value, as a TREC file's runid column names it; None without such a column; an error when it holds
    several (one frame, one run)."""
    for column in ("run", "runid", "run_id"):
        if column in frame.columns:
            names = frame[column].dropna().astype(str).unique().tolist()
            if len(names) > 1:
                raise InputFrameError(source, None, column, f"holds {len(names)} run names ({', '.join(names[:3])}"
                                      f"{', ...' if len(names) > 3 else ''}): give one run per frame")
            return names[0] if names else None
    return None


def _named(row) -> str:
    return f"row {row}" if isinstance(row, int) else str(row)


def _frame_qrels(frame, source: str, item: str = "row") -> dict[str, dict[str, int]]:
    import numpy as np

    if not len(frame):
        return {}
    topic_column, doc_column, grade_column = _columns(frame, QRELS_COLUMNS, source, "qrels")
    topics, docs = _ids(frame, topic_column, source, item), _ids(frame, doc_column, source, item)
    grades = _numbers(frame, grade_column, source, item, integer=True)
    for at in np.flatnonzero(_repeats(topics, docs)).tolist():  # judged twice: an error if the grades differ
        first = _first_of(topics, docs, at)
        if grades[first] != grades[at]:
            raise InputFrameError(source, _row(frame, at, item), grade_column,
                                  f"topic {topics[at]!r} document {docs[at]!r} has grade {grades[at]} here but "
                                  f"{grades[first]} in {_named(_row(frame, first, item))}")
    qrels: dict[str, dict[str, int]] = {}
    for topic, doc, grade in zip(topics.tolist(), docs.tolist(), grades.tolist()):
        qrels.setdefault(topic, {}).setdefault(doc, grade)
    return qrels

