"""TREC run and qrels files (SPEC.md section 6).

Runs:  ``topic Q0 docid rank score runid``  -- ordered as trec_eval orders them:
score descending, ties by docid descending (strcmp); the rank column is checked
but ignored unless ``honour_rank=True``.
Qrels: ``topic iteration docid grade``  -- ``#`` comment lines are skipped.

Every malformed input raises :class:`InputFormatError` naming the file and line.
Files whose first bytes are the gzip magic number are decompressed transparently.
"""

from __future__ import annotations

import gzip
import hashlib
import math
import numbers
import os
import re
import stat
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from medopt.errors import InputFormatError, MedoptError

from .output import file_kind, write_output

_INT = re.compile(r"[+-]?[0-9]+")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_RUN_COLUMNS = "expected 6 columns (topic Q0 docid rank score runid), found {}"
_QRELS_COLUMNS = "expected 4 columns (topic iteration docid grade), found {}"


@dataclass(frozen=True)
class Run:
    """One TREC run: ``rankings`` maps topic -> docids, best first."""

    name: str
    path: str
    rankings: dict[str, tuple[str, ...]]
    tied: tuple[str, ...] = ()  # topics of two documents or more whose scores all tie (read by score)


def tie_note(name: str, tied) -> str | None:
    """The warning for a run whose every score ties in some topics (their order is then trec_eval's
    tie-break alone, docid descending), or None: one line per run, naming how many topics."""
    tied = sort_topics(tied)
    if not tied:
        return None
    return (f"run {name}: every score ties in {len(tied)} topic(s) ({_some(tied, 5)}): trec_eval's tie-break "
            "(docid descending) alone orders them")


@dataclass
class TopicReport:
    """Topics of two runs: in both, only in the first, only in the second."""

    common: list[str]
    only_a: list[str]
    only_b: list[str]


# ---------------------------------------------------------------------------
# reading


INFLATE_RATIO = 64            # a compressed input may decompress to this many times its size ...
INFLATE_FLOOR = 64 << 20      # ... or to this many bytes, whichever is more; beyond: refused (a gzip bomb)
LINE_LIMIT = 1 << 20          # bytes of one line; beyond: refused (no TREC line is that long)
_CHUNK = 1 << 20


def open_input(path: str | os.PathLike):
    """A binary file object of an input file; a missing, unopenable or non-regular path (a directory, a
    FIFO, a device: reading one could block for ever or never end) is an InputFormatError naming it."""
    try:  # O_NONBLOCK: opening a FIFO nobody writes to must not wait; cleared once the file is known regular
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise InputFormatError(path, None, "no such file") from None
    except IsADirectoryError:
        raise InputFormatError(path, None, "is a directory, not a file") from None
    except OSError as exc:
        raise InputFormatError(path, None, f"cannot open: {exc.strerror or exc}") from None
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        what = "is a directory, not a file" if stat.S_ISDIR(mode) else f"is {file_kind(mode)}, not a regular file"
        raise InputFormatError(path, None, what)
    os.set_blocking(descriptor, True)
    return os.fdopen(descriptor, "rb")


def input_chunks(path: str | os.PathLike) -> Iterator[bytes]:
    """The bytes of an input file in pieces of about a MiB, decompressed when it starts with the gzip
    magic number; a file that decompresses to more than :data:`INFLATE_RATIO` times its size (and more
    than :data:`INFLATE_FLOOR`) is refused as soon as it does, after reading no more than that."""
    with open_input(path) as raw:
        if raw.peek(2)[:2] != b"\x1f\x8b":
            while True:
                try:
                    chunk = raw.read(_CHUNK)
                except OSError as exc:
                    raise InputFormatError(path, None, f"cannot read: {exc.strerror or exc}") from None
                if not chunk:
                    return
                yield chunk
        size = os.fstat(raw.fileno()).st_size
        cap = max(INFLATE_FLOOR, INFLATE_RATIO * size)
        total = 0
        try:
            with gzip.GzipFile(fileobj=raw) as stream:
                while chunk := stream.read(_CHUNK):
                    total += len(chunk)
                    if total > cap:
                        raise InputFormatError(
                            path, None, f"decompresses to more than {cap >> 20} MiB ({INFLATE_RATIO} times its "
                            f"{size} bytes): refused (a damaged file, or a gzip bomb)")
                    yield chunk
        except (OSError, EOFError, zlib.error) as exc:
            raise _Corrupt(exc) from None


class _Corrupt(Exception):
    """Damaged gzip data (the reader that meets it names the line)."""


def _lines(path: str | os.PathLike) -> Iterator[tuple[int, bytes]]:
    """``(line_number, bytes without the newline)`` of every line; runs of blank lines are skipped in
    bulk (a file of nothing but newlines is read at the speed of the disk, not line by line)."""
    number, pending = 0, b""
    try:
        for chunk in input_chunks(path):
            if not chunk.strip():  # whitespace only: the end of the pending line, then blank lines
                newline = chunk.find(b"\n")
                if newline < 0:
                    pending += chunk
                else:
                    number += 1
                    yield number, pending + chunk[:newline]
                    number += chunk.count(b"\n") - 1
                    pending = chunk[chunk.rfind(b"\n") + 1:]
            else:
                *complete, rest = (pending + chunk).split(b"\n")
                for line in complete:
                    number += 1
                    yield number, line
                pending = rest
            if len(pending) > LINE_LIMIT:
                raise InputFormatError(path, number + 1, f"line longer than {LINE_LIMIT >> 20} MiB")
    except _Corrupt as exc:
        raise InputFormatError(path, number + 1, f"corrupt gzip data ({exc.args[0]})") from None
    if pending:
        yield number + 1, pending


def _fields(path: str | os.PathLike) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line_number, whitespace-separated fields)`` for each non-blank line.

    The one tokenisation of every reader (the array reader of :mod:`medopt.batch.runset` agrees with it,
    and defers to it for any byte it is not sure of): UTF-8 (a BOM on the first line ignored), fields
    split at whitespace as :meth:`str.split` splits, a NUL byte refused (NumPy's byte strings would drop
    a trailing one, and a document id with it would match another)."""
    for number, data in _lines(path):
        try:
            text = data.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise InputFormatError(path, number, f"not valid UTF-8 (bad byte at column {exc.start + 1})") from None
        if "\x00" in text:
            raise InputFormatError(path, number, f"NUL byte at column {text.index(chr(0)) + 1}")
        fields = text.split()
        if fields:
            yield number, fields


def four_column_rows(path: str | os.PathLike, message: str) -> Iterator[tuple[int, list[str]]]:
    """``(line_number, fields)`` of each line of a four-column file (qrels, spans) that is not a
    comment; a line with another count is an InputFormatError naming it (``message`` formats the count)."""
    for line, fields in _fields(path):
        if fields[0].startswith("#"):
            continue
        if len(fields) != 4:
            raise InputFormatError(path, line, message.format(len(fields)))
        yield line, fields


def _score(path, line: int, text: str) -> float:
    value = float(text) if _NUMBER.fullmatch(text) else math.nan
    if not math.isfinite(value):
        raise InputFormatError(path, line, f"score {text!r} is not a finite number")
    return value


def _integer(path, line: int, text: str, what: str) -> int:
    if not _INT.fullmatch(text):
        raise InputFormatError(path, line, f"{what} {text!r} is not an integer")
    return int(text)


def _trec_eval_order(entries: list[tuple[str, float, int]], honour_rank: bool) -> tuple[str, ...]:
    """Sort ``(docid, score, rank)`` entries: score desc, docid desc (or rank first)."""
    entries = sorted(entries, key=lambda e: e[0], reverse=True)  # docid descending
    if honour_rank:
        entries.sort(key=lambda e: (e[2], -e[1]))  # stable: keeps docid order on ties
    else:
        entries.sort(key=lambda e: -e[1])
    return tuple(e[0] for e in entries)


def _stem(path) -> str:
    name = Path(path).name
    if name.endswith(".gz"):
        name = name[:-3]
    return Path(name).stem or name


def read_run(path: str | os.PathLike, *, honour_rank: bool = False) -> Run:
    """Read a TREC run file; see the module docstring for the ordering rule."""
    seen: dict[str, dict[str, tuple[int, float, int]]] = {}  # topic -> docid -> (line, score, rank)
    runids: set[str] = set()
    for line, fields in _fields(path):
        if len(fields) != 6:
            raise InputFormatError(path, line, _RUN_COLUMNS.format(len(fields)))
        topic, _q0, docid, rank_text, score_text, runid = fields
        rank = _integer(path, line, rank_text, "rank")
        score = _score(path, line, score_text)
        docs = seen.setdefault(topic, {})
        if docid in docs:
            raise InputFormatError(
                path, line,
                f"duplicate docid {docid!r} in topic {topic!r} (first on line {docs[docid][0]})",
            )
        docs[docid] = (line, score, rank)
        runids.add(runid)
    if not seen:
        raise InputFormatError(path, None, "empty run file (no lines)")
    rankings = {
        topic: _trec_eval_order([(d, s, r) for d, (_, s, r) in docs.items()], honour_rank)
        for topic, docs in seen.items()
    }
    name = next(iter(runids)) if len(runids) == 1 else _stem(path)
    tied = () if honour_rank else tuple(
        topic for topic, docs in seen.items() if len(docs) > 1 and len({s for _, s, _ in docs.values()}) == 1)
    return Run(name=name, path=str(path), rankings=rankings, tied=tied)


def read_qrels(path: str | os.PathLike) -> dict[str, dict[str, int]]:
    """Read TREC qrels: topic -> docid -> grade (negative grades kept as they are).

    An empty qrels file (or one with only comments) gives ``{}``: no judgments.
    """
    qrels: dict[str, dict[str, int]] = {}
    first_line: dict[tuple[str, str], int] = {}
    for line, fields in four_column_rows(path, _QRELS_COLUMNS):
        topic, _iteration, docid, grade_text = fields
        grade = _integer(path, line, grade_text, "grade")
        grades = qrels.setdefault(topic, {})
        if docid in grades:
            if grades[docid] != grade:
                raise InputFormatError(
                    path, line,
                    f"topic {topic!r} docid {docid!r} has grade {grade} here but grade "
                    f"{grades[docid]} on line {first_line[topic, docid]}",
                )
            continue
        grades[docid] = grade
        first_line[topic, docid] = line
    return qrels


def file_sha256(path: str | os.PathLike) -> str:
    """SHA-256 of a file's bytes; a missing or unreadable file is an InputFormatError naming it."""
    digest = hashlib.sha256()
    with open_input(path) as handle:
        try:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
        except OSError as exc:
            raise InputFormatError(path, None, f"cannot read: {exc.strerror or exc}") from None
    return digest.hexdigest()


# ---------------------------------------------------------------------------
# topics


def sort_topics(topics) -> list[str]:
    """Topics sorted numerically if all are integers, else in string order."""
    topics = list(topics)
    if all(_INT.fullmatch(t) for t in topics):
        return sorted(topics, key=lambda t: (int(t), t))
    return sorted(topics)


def pair_topics(run_a: Run, run_b: Run) -> TopicReport:
    """Which topics the two runs share and which appear in only one of them."""
    a, b = set(run_a.rankings), set(run_b.rankings)
    return TopicReport(
        common=sort_topics(a & b),
        only_a=sort_topics(a - b),
        only_b=sort_topics(b - a),
    )


def _some(topics: list[str], count: int = 10) -> str:
    return " ".join(topics[:count]) + (" ..." if len(topics) > count else "")


# ---------------------------------------------------------------------------
# writing


def _check_token(value: str, what: str) -> str:
    if not isinstance(value, str) or not value or len(value.split()) != 1 or value != value.strip():
        raise MedoptError(f"{what} {value!r} must be a non-empty string without whitespace")
    return value


def write_atomic(path: str | os.PathLike, lines: Iterator[str], *, what: str = "", inputs=()) -> None:
    """Write text lines to ``path`` by the rules of :mod:`medopt.io.output` (a temporary beside it,
    then renamed; ``/dev/stdout`` and the like written in place; gzip when the name ends in ``.gz``)."""
    write_output(path, lines, what, inputs=inputs, binary=False)


def write_run(path: str | os.PathLike, rankings: Mapping[str, Sequence[str]], name: str) -> None:
    """Write a TREC run that :func:`read_run` reads back exactly.

    Ranks are 1.., scores are distinct integers decreasing down the ranking.
    Topics with an empty ranking cannot be expressed in the format and are omitted.
    """
    _check_token(name, "run name")
    for topic, docs in rankings.items():
        _check_token(topic, "topic")
        for docid in docs:
            _check_token(docid, "docid")
        if len(set(docs)) != len(docs):
            raise MedoptError(f"topic {topic!r}: ranking has duplicate docids")

    def lines() -> Iterator[str]:
        for topic in sort_topics(rankings):
            docs = rankings[topic]
            for i, docid in enumerate(docs):
                yield f"{topic} Q0 {docid} {i + 1} {len(docs) - i} {name}\n"

    write_atomic(path, lines())


def write_qrels(path: str | os.PathLike, qrels: Mapping[str, Mapping[str, int]]) -> None:
    """Write TREC qrels (``topic 0 docid grade``) atomically; ``.gz`` if the path says so."""
    for topic, grades in qrels.items():
        if _check_token(topic, "topic").startswith("#"):
            raise MedoptError(f"topic {topic!r} would be read back as a comment line")
        for docid, grade in grades.items():
            _check_token(docid, "docid")
            if not isinstance(grade, numbers.Integral) or isinstance(grade, bool):
                raise MedoptError(f"topic {topic!r} docid {docid!r}: grade {grade!r} is not an int")

    def lines() -> Iterator[str]:
        for topic in sort_topics(qrels):
            for docid, grade in qrels[topic].items():
                yield f"{topic} 0 {docid} {int(grade)}\n"

    write_atomic(path, lines())


def run_names(*runs) -> list[str]:
    """Run ids, or file names where run ids collide (many tools write the same run id)."""
    names = [run.name for run in runs]
    if len(set(names)) == len(names):
        return names
    stems = [Path(run.path).name for run in runs]
    return stems if len(set(stems)) == len(stems) else [run.path for run in runs]
