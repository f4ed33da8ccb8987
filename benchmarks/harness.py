"""What every benchmark script shares: where the data is, the seeded run pairs, timing, the log, the
argument parser.

- Data: ``shared_data()``, the folder named by ``MEDOPT_SHARED_DATA`` (the variable the test suite
  reads, tests/conftest.py), by default ``../shared/data`` beside the checkout; ``DL_HARD`` and
  ``DL_2020`` are its DL-HARD and TREC DL 2020 folders.
- Run pairs: ``select_pairs(runs, count, seed)``, the seeded draw of pairs of run files
  (benchmarks/exact_depth.py's, reused by the judging campaigns).
- Timing: ``timed(function, repeats)`` (median and 90th percentile seconds, peak RSS), ``summary``
  of a list of seconds, ``PeakRSS`` around a block.
- Log: ``Log(path)``, a JSON-lines file of one record per case, each stamped with the commit of the
  medopt measured, the command line and the machine; a rerun reads it back (``log.done``) so a
  script can skip the cases already there (resume); a line cut by an interruption is skipped.
- Tables: ``text_table`` (printed) and ``markdown_table`` (the docs: docs/hooks.py renders a script's
  ``tables(records)`` from its log).
- ``parser(doc, ...)``: the scripts' argument parser, with the options they share (``--data``,
  ``--log``, ``--fresh``, ``--seed``).
- ``tests_module(name)``: a helper module of ``tests/`` (the fault table, the interrupt children),
  loaded from its file, for the audits that replay what the suite runs.

Scripts run as ``python benchmarks/NAME.py`` (this folder is then first on ``sys.path``), from the
repository root so that relative ``--log`` paths land in ``benchmarks/results/``.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA_VARIABLE = "MEDOPT_SHARED_DATA"
SEED = 20261122  # the seeded run pairs of benchmarks/exact_depth.py and the judging campaigns


def shared_data(*parts: str) -> Path:
    """The shared data folder (``$MEDOPT_SHARED_DATA``, default ``../shared/data``), or a path in it."""
    root = os.environ.get(DATA_VARIABLE) or ROOT.parent / "shared" / "data"
    return Path(root).joinpath(*parts)


DL_HARD = shared_data("dl-hard")
DL_2020 = shared_data("trec-dl-2020")


def dl_hard_runs(data: Path = DL_HARD) -> list[Path]:
    """The DL-HARD document runs under ``data``, sorted; exits with one line when fewer than two are there."""
    runs = sorted((Path(data) / "baselines" / "doc").glob("*.run"))
    if len(runs) < 2:
        sys.exit(f"DL-HARD runs not found under {data} (set {DATA_VARIABLE} or pass --data)")
    return runs


def select_pairs(runs: list, count: int, seed: int = SEED) -> list[tuple]:
    """``count`` pairs of ``runs`` drawn without replacement by ``numpy.random.default_rng(seed)``."""
    pairs = list(itertools.combinations(runs, 2))
    order = np.random.default_rng(seed).permutation(len(pairs))
    return [pairs[i] for i in order[:count]]


# -- timing -----------------------------------------------------------------------------------------

def percentile(values, q) -> float:
    return float(np.percentile(values, q)) if len(values) else float("nan")


def summary(seconds) -> dict:
    """n, median, p90 and max of a list of seconds (NaN for an empty list)."""
    seconds = list(seconds)
    return {"n": len(seconds), "median": statistics.median(seconds) if seconds else float("nan"),
            "p90": percentile(seconds, 90), "max": max(seconds, default=float("nan"))}


class PeakRSS:
    """The largest resident set size of this process while the block runs (sampled every 10 ms by a
    thread; psutil), in MB."""

    def __init__(self, interval: float = 0.01):
        import psutil
        self.process, self.interval, self.peak = psutil.Process(), interval, 0
        self._stop = threading.Event()

    def _sample(self):
        while True:
            self.peak = max(self.peak, self.process.memory_info().rss)
            if self._stop.wait(self.interval):
                return

    def __enter__(self):
        self.peak = self.process.memory_info().rss
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.process.memory_info().rss)

    @property
    def mb(self) -> float:
        return self.peak / 2 ** 20


def timed(function: Callable[[], object], repeats: int = 1) -> tuple[dict, object]:
    """Call ``function`` ``repeats`` times: ({n, median, p90, max, seconds, peak_rss_mb}, the last result)."""
    times, result = [], None
    with PeakRSS() as memory:
        for _ in range(repeats):
            started = time.perf_counter()
            result = function()
            times.append(time.perf_counter() - started)
    return {**summary(times), "seconds": times, "peak_rss_mb": memory.mb}, result


# -- the log ----------------------------------------------------------------------------------------

def code_version() -> str | None:
    """The git commit of the medopt being measured (with '+' when its tree has changes).  The checkout
    is the imported package's, so an older medopt put first on PYTHONPATH (a git worktree) is measured
    and labelled as itself."""
    import medopt

    root = Path(medopt.__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+" if dirty else "")


def machine() -> dict:
    """The machine a record was measured on: host, processor, cores, Python."""
    return {"host": platform.node(), "processor": platform.machine(), "cores": os.cpu_count(),
            "python": platform.python_version()}


def command() -> str:
    """This process's command line, as a shell would take it."""
    return shlex.join([Path(sys.executable).name, *sys.argv])


def read_log(path: Path, key: Callable[[dict], object] = lambda record: record["key"]) -> dict:
    """key -> record of a JSON-lines log (a line cut by an interruption is skipped; a later record of
    the same key replaces an earlier one)."""
    done = {}
    path = Path(path)
    if not path.exists():
        return done
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        done[key(record)] = record
    return done


class Log:
    """A JSON-lines log of one record per case, stamped with the commit, command and machine, with
    resume: ``done`` holds what the file already has (empty with ``fresh`` or no path; ``path=None``
    logs nothing).  Each record is flushed and synced as it is written."""

    def __init__(self, path: Path | str | None, key: Callable[[dict], object] = lambda record: record["key"],
                 fresh: bool = False):
        self.path, self.key = (Path(path) if path is not None else None), key
        self.done = read_log(self.path, key) if self.path is not None and not fresh else {}
        self._handle, self._stamp = None, None

    def __contains__(self, key) -> bool:
        return key in self.done

    def stamp(self) -> dict:
        if self._stamp is None:
            self._stamp = {"commit": code_version(), "command": command(), "machine": machine()}
        return self._stamp

    def write(self, record: dict) -> dict:
        """Append ``record`` (its own commit, command or machine, if any, are kept) and return it."""
        record = {**self.stamp(), **record}
        if self.path is not None:
            if self._handle is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._handle = self.path.open("a")
            self._handle.write(json.dumps(record) + "\n")
            self._handle.flush()
            os.fsync(self._handle.fileno())
            try:
                self.done[self.key(record)] = record
            except (KeyError, TypeError, IndexError):
                pass  # a record without the log's key (a note): kept in the file only
        return record

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# -- tables ---------------------------------------------------------------------------------------

def _numeric(cell) -> bool:
    try:
        float(str(cell).rstrip(" *"))
    except ValueError:
        return False
    return True


def text_table(header: list, rows: list) -> str:
    """``rows`` under ``header`` in aligned columns (numbers to the right), as a script prints them."""
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]

    def line(row):
        return " ".join(c.rjust(w) if _numeric(c) else c.ljust(w) for c, w in zip(row, widths)).rstrip()
    return "\n".join([line(cells[0]), "-" * len(line(cells[0]))] + [line(row) for row in cells[1:]])


def markdown_table(header: list, rows: list) -> str:
    """``rows`` under ``header`` as a Markdown table (numbers aligned right), as the docs show a log."""
    align = ["---:" if rows and all(_numeric(row[i]) or row[i] == "" for row in rows) else "---"
             for i in range(len(header))]
    return "\n".join("| " + " | ".join(str(c) for c in row) + " |" for row in [header, align, *rows])


# -- the argument parser ----------------------------------------------------------------------------

def parser(doc: str, *, data: Path | None = None, log: Path | str | None = None, fresh: bool = False,
           seed: int | None = None) -> argparse.ArgumentParser:
    """The script's parser: its docstring as the help text, and the shared options asked for —
    ``--data`` (default ``data``), ``--log`` (default ``log``; ``log=""``: the option without a default,
    nothing logged unless given), ``--fresh`` (ignore the log's records) and ``--seed``."""
    made = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    if data is not None:
        made.add_argument("--data", type=Path, default=data,
                          help=f"the data folder (default {data}; the root is ${DATA_VARIABLE})")
    if log is not None:
        made.add_argument("--log", type=Path, default=Path(log) if log else None,
                          help="JSON lines, one record per case (commit, command, machine)"
                               + (f"; default {log}" if log else ""))
    if fresh:
        made.add_argument("--fresh", action="store_true", help="ignore the records already in the log")
    if seed is not None:
        made.add_argument("--seed", type=int, default=seed)
    return made


def tests_module(name: str):
    """The module ``NAME.py`` of ``tests/`` or one of its layer folders (a helper the suite runs: the
    fault table, the interrupt children), loaded from its file without putting ``tests/`` on ``sys.path``."""
    if name in sys.modules:
        return sys.modules[name]
    found = sorted((ROOT / "tests").rglob(f"{name}.py"))
    if len(found) != 1:
        sys.exit(f"tests/**/{name}.py: {len(found)} files found, one expected")
    spec = importlib.util.spec_from_file_location(name, found[0])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
