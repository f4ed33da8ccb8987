"""What a results store's rows were computed from, and the rules that keep a store from mixing or going
stale (:mod:`medopt.io.store` applies them under its write lock).

An :class:`Input` is the identity of one input file: its resolved path, size, mtime and BLAKE2b digest
(a run under its name in the store).  :func:`match_inputs` finds, for a job's inputs, the stored ones
they are (a run by its path, or by its bytes when the file was moved) and those whose bytes changed;
:func:`refuse_review` turns what a job must not do into one line.  :func:`one_method` keeps what
averages rows (the plots) from mixing methods.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..errors import MedoptError


@dataclass(frozen=True)
class Input:
    """The identity of one input file: its resolved path, size, mtime and BLAKE2b digest (``name``: a
    run's name in the store)."""

    kind: str
    path: str
    size: int
    mtime_ns: int
    blake2b: str
    name: str = ""
    given: str = field(default="", compare=False)  # the path as the user gave it (for messages; not stored)

    @property
    def shown(self) -> str:
        return self.given or self.path

    def named(self, name: str) -> Input:
        return Input(self.kind, self.path, self.size, self.mtime_ns, self.blake2b, name, self.given)


def identify(kind: str, path) -> Input:
    """The identity of an input file (its bytes as stored: a .gz file is hashed compressed)."""
    resolved = os.path.realpath(path)
    digest = hashlib.blake2b()
    try:
        with open(resolved, "rb") as handle:
            status = os.fstat(handle.fileno())
            if not stat.S_ISREG(status.st_mode):
                raise MedoptError(f"{path}: not a regular file")
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as error:
        raise MedoptError(f"{path}: cannot read: {error.strerror or error}") from None
    return Input(kind, resolved, status.st_size, status.st_mtime_ns, digest.hexdigest(), given=os.fspath(path))


@dataclass
class Review:
    """What a job finds in a store before it writes to it (:meth:`medopt.io.store.ResultStore.review`)."""

    rows: int = 0                                       # rows stored (0: none that count, after --refresh)
    changed: list = field(default_factory=list)         # (given, stored) Input of the inputs whose bytes changed
    names: dict = field(default_factory=dict)           # a given run's path -> its name in the store
    clashes: list = field(default_factory=list)         # settings that differ from the stored rows'
    recorded: bool = True                               # the store records its inputs (an older medopt's does not)


def match_inputs(stored: list, inputs: list, rows: int) -> Review:
    """The stored input each of a job's inputs is (runs unnamed: matched by path, else by content for a
    moved file; a new run has none) and those whose bytes changed, for a store holding ``rows`` rows."""
    review = Review(rows, recorded=bool(stored) or not rows)
    if not rows:
        return review
    runs = [i for i in stored if i.kind == "run"]
    by_path = {i.path: i for i in runs}
    given = {i.path for i in inputs if i.kind == "run"}
    moved = [i for i in runs if i.path not in given]  # stored runs not given under their path
    for item in inputs:
        if item.kind == "run":
            match = by_path.get(item.path) or next((i for i in moved if i.blake2b == item.blake2b), None)
            if match in moved:
                moved.remove(match)
            if match is not None:
                review.names[item.path] = match.name
        else:
            match = next((i for i in stored if i.kind == item.kind), None)
        if match is not None and match.blake2b != item.blake2b:
            review.changed.append((item, match))
    return review


def refuse_review(path, review: Review, *, resume: bool, refresh: bool) -> None:
    """The one-line refusals of a store's review: rows (unless ``resume``), changed inputs (unless
    ``refresh``), other settings."""
    if review.rows and not resume:
        raise MedoptError(f"{path} already holds {review.rows} results: pass --resume to complete that job, or "
                          "choose a new --store")
    if review.changed and not refresh:
        item, stored = review.changed[0]
        what = f"run {review.names[item.path]}" if item.kind == "run" else f"the {item.kind}"
        how = (f"changed since {path}'s rows were computed from it" if item.path == stored.path else
               f"not the bytes of {stored.path}, which {path}'s rows were computed from")
        raise MedoptError(f"{item.shown}: {how} ({what}); pass --refresh with --resume to compute its rows again, "
                          "or choose a new --store")
    if review.clashes:
        raise MedoptError(f"{path} holds results computed with other settings ({'; '.join(review.clashes)}); "
                          "use a new --store")


def one_method(rows: Iterable[dict], path, method: str | None = None) -> list[dict]:
    """The rows of one method per (pair, topic, metric), for what averages them (plots): with ``method``, the
    rows of that method; without, every row, refused when a (pair, topic, metric) has rows of several
    methods (a store completed with ``--add-method``)."""
    rows = [row for row in rows if method is None or row["method"] == method]
    seen: dict = {}
    for row in rows:
        key = (row["run_a"], row["run_b"], row["topic"], row["metric"])
        first = seen.setdefault(key, row["method"])
        if first != row["method"]:
            raise MedoptError(f"{path} holds {row['metric']} rows of several methods for the same pairs and topics "
                              f"({first}, {row['method']}): choose one with --method")
    if method is not None and not rows:
        raise MedoptError(f"{path} holds no rows of method {method}")
    return rows
