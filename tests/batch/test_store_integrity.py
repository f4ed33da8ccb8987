"""Stores that cannot mix or go stale (issue 50, item 2): two jobs started together on one fresh store,
inputs changed before ``--resume`` (refused, or their rows computed again with ``--refresh``), run names
stable across ``--resume``, one method per (pair, topic, metric) and plots that never average methods,
store names SQLite reads as URIs, stores holding triggers or views, and read-only stores."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fault_cases import GOOD_RUNS, QRELS, cli_in, write_inputs

from medopt.batch import run_matrix
from medopt.io.store import ResultStore


cli = cli_in  # medopt ARGS run from a folder (fault_cases)


def rows_of(store: Path) -> dict:
    with ResultStore(store, write=False) as results:
        return {(r["run_a"], r["run_b"], r["topic"], r["metric"], r["method"]): r["value"] for r in results.rows()}


def error_line(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("medopt: error: "), result.stderr
    return lines[0]


# ---------------------------------------------------------------------------
# two jobs on one fresh store


def _generated_runs(folder: Path, runs: int = 4, topics: int = 60, depth: int = 8) -> list[str]:
    names = []
    for r in range(runs):
        name = folder / f"g{r}.run"
        name.write_text("".join(f"{t} Q0 d{t}-{(i * (r + 2)) % 13} {i + 1} {depth - i} g{r}\n"
                                for t in range(topics) for i in range(depth)))
        names.append(name.name)
    (folder / "g.qrels").write_text("".join(f"{t} 0 d{t}-{i} {i % 3}\n" for t in range(topics) for i in range(0, 13, 2)))
    return names


@pytest.mark.parametrize("resume", [False, True], ids=["new", "resume"])
def test_two_jobs_with_other_settings_on_a_fresh_store(tmp_path, resume):
    """Both jobs used to exit 0, the store mixing the rows of both (``clashes()`` passed while it was empty)."""
    runs = _generated_runs(tmp_path)
    env = {**os.environ, "MEDOPT_STORE_TIMEOUT": "60"}
    env.pop("MEDOPT_DEBUG", None)
    for trial in range(3):
        store = tmp_path / f"s{trial}.sqlite"
        base = [sys.executable, "-m", "medopt.cli", "matrix", *runs, "--qrels", "g.qrels", "-m", "P@5", "-m", "AP@5",
                "-j", "1", "--chunk-size", "8", "--store", store.name, "--no-progress", *(["--resume"] if resume else [])]
        jobs = [subprocess.Popen(base + extra, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 text=True) for extra in (["--max-grade", "1"], ["--max-grade", "2"])]
        ends = [(job.wait(timeout=240), job.stderr.read()) for job in jobs]
        for job in jobs:
            job.stderr.close()
        statuses = sorted(status for status, _ in ends)
        assert statuses == [0, 2], ends
        winner = 0 if ends[0][0] == 0 else 1
        lines = [line for line in ends[1 - winner][1].splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("medopt: error: "), ends
        with ResultStore(store, write=False) as results:
            assert results.settings()["max_grade"] == ("1", "2")[winner]
            assert results.count() == 6 * 60 * 2  # the winner's rows only, each once
        alone = tmp_path / f"alone{trial}.sqlite"
        run_matrix([str(tmp_path / r) for r in runs], ["P@5", "AP@5"], qrels=str(tmp_path / "g.qrels"), store=alone,
                   jobs=1, progress=False, settings=run_settings(max_grade=(1, 2)[winner]))
        assert rows_of(store) == rows_of(alone)


def run_settings(**given):
    from medopt.batch import Settings

    return Settings(**given)


# ---------------------------------------------------------------------------
# inputs changed before --resume


def test_resume_refuses_a_changed_run_and_refresh_computes_its_rows_again(tmp_path):
    write_inputs(tmp_path)
    base = ["matrix", "a.run", "b.run", "c.run", "--qrels", "q.txt", "-m", "AP@3", "-j", "1", "--store", "s.sqlite"]
    assert cli(tmp_path, *base).exit_code == 0
    before = rows_of(tmp_path / "s.sqlite")
    changed = GOOD_RUNS["a.run"].replace("1 Q0 d10 1 10 ra", "1 Q0 zz 1 10 ra")
    assert changed != GOOD_RUNS["a.run"]
    (tmp_path / "a.run").write_text(changed)
    line = error_line(cli(tmp_path, *base, "--resume"))
    assert "a.run: changed since s.sqlite's rows were computed from it (run ra)" in line and "--refresh" in line
    assert rows_of(tmp_path / "s.sqlite") == before
    refreshed = cli(tmp_path, *base, "--resume", "--refresh")
    assert refreshed.exit_code == 0, refreshed.output
    assert "a.run (run ra) changed since its rows were computed: its 6 stored rows are dropped" in refreshed.stderr
    assert "6 MED(s) computed, 3 already stored" in refreshed.stderr
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    write_inputs(fresh)
    (fresh / "a.run").write_text(changed)
    assert cli(fresh, *base).exit_code == 0
    after = rows_of(tmp_path / "s.sqlite")
    assert after == rows_of(fresh / "s.sqlite")
    assert any(after[key] != value for key, value in before.items())  # the change mattered
    again = cli(tmp_path, *base, "--resume")  # the new bytes are recorded: nothing changed since
    assert again.exit_code == 0 and "0 MED(s) computed, 9 already stored" in again.stderr


def test_resume_refuses_changed_qrels_and_refresh_computes_every_row_again(tmp_path):
    write_inputs(tmp_path)
    base = ["matrix", "a.run", "b.run", "--qrels", "q.txt", "-m", "P@5", "-j", "1", "--store", "s.sqlite"]
    assert cli(tmp_path, *base).exit_code == 0
    (tmp_path / "q.txt").write_text(QRELS + "1 0 zz 1\n")
    line = error_line(cli(tmp_path, *base, "--resume"))
    assert "q.txt: changed since s.sqlite's rows were computed from it (the qrels)" in line
    refreshed = cli(tmp_path, *base, "--resume", "--refresh")
    assert refreshed.exit_code == 0, refreshed.output
    assert "q.txt changed since the rows were computed: all 3 stored rows are dropped" in refreshed.stderr
    assert "3 MED(s) computed, 0 already stored" in refreshed.stderr


def test_refresh_and_add_method_need_resume(tmp_path):
    write_inputs(tmp_path)
    for flag in ("--refresh", "--add-method"):
        assert f"{flag} completes a job: pass --resume" in error_line(
            cli(tmp_path, "matrix", "a.run", "b.run", "-m", "P@5", "-j", "1", flag))


def test_run_names_stay_stable_across_resume(tmp_path):
    """A new run with a run id already in the store renamed every run to its file name and computed
    everything again as a second copy."""
    write_inputs(tmp_path)
    base = ["matrix", "a.run", "b.run", "--qrels", "q.txt", "-m", "P@5", "-j", "1", "--store", "s.sqlite"]
    assert cli(tmp_path, *base).exit_code == 0
    (tmp_path / "d.run").write_text(GOOD_RUNS["c.run"].replace(" rc\n", " ra\n"))  # run id ra, as a.run's
    resumed = cli(tmp_path, *base[:3], "d.run", *base[3:], "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert "6 MED(s) computed, 3 already stored" in resumed.stderr
    pairs = {key[:2] for key in rows_of(tmp_path / "s.sqlite")}
    assert pairs == {("ra", "rb"), ("ra", "d.run"), ("rb", "d.run")}
    shutil.move(tmp_path / "b.run", tmp_path / "moved.run")  # a moved run keeps its name (matched by content)
    moved = cli(tmp_path, "matrix", "a.run", "moved.run", "d.run", *base[3:], "--resume")
    assert moved.exit_code == 0 and "0 MED(s) computed, 9 already stored" in moved.stderr


def test_the_same_run_file_twice_is_refused(tmp_path):
    write_inputs(tmp_path)
    line = error_line(cli(tmp_path, "matrix", "a.run", "./a.run", "-m", "P@5", "-j", "1"))
    assert "a.run and ./a.run are the same file" in line
    assert not (tmp_path / "medopt-matrix.sqlite").exists()


# ---------------------------------------------------------------------------
# one method per (pair, topic, metric)


def test_another_method_is_refused_unless_asked_and_plots_never_average_methods(tmp_path):
    write_inputs(tmp_path)
    base = ["matrix", "a.run", "b.run", "c.run", "--qrels", "q.txt", "-m", "AP@3", "-j", "1", "--store", "s.sqlite"]
    assert cli(tmp_path, *base, "--method", "exact").exit_code == 0
    line = error_line(cli(tmp_path, *base, "--method", "greedy", "--resume"))
    assert "method: stored exact, now greedy" in line
    assert {key[4] for key in rows_of(tmp_path / "s.sqlite")} == {"exact"}
    added = cli(tmp_path, *base, "--method", "greedy", "--resume", "--add-method")
    assert added.exit_code == 0, added.output
    assert {key[4] for key in rows_of(tmp_path / "s.sqlite")} == {"exact", "greedy"}
    for kind in ("heatmap", "distribution"):
        line = error_line(cli(tmp_path, "plot", "--kind", kind, "--store", "s.sqlite", "-o", f"{kind}.png"))
        assert "rows of several methods" in line and "--method" in line
    from medopt.plots.matrix import load_values

    exact = load_values(tmp_path / "s.sqlite", "exact")
    assert len(exact) == 9
    drawn = cli(tmp_path, "plot", "--store", "s.sqlite", "--method", "exact", "-o", "h.png")
    assert drawn.exit_code == 0, drawn.output


# ---------------------------------------------------------------------------
# store names, triggers and views


@pytest.mark.parametrize("name", [":memory:", "file:x?mode=memory", "file:s.sqlite"])
def test_store_names_read_as_uris_are_refused(tmp_path, name):
    write_inputs(tmp_path)
    line = error_line(cli(tmp_path, "matrix", "a.run", "b.run", "-m", "P@5", "-j", "1", "--store", name))
    assert "not a URI nor an in-memory database" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*GOOD_RUNS, "q.txt"])


TRIGGER = ("CREATE TRIGGER planted AFTER INSERT ON results BEGIN "
           "UPDATE results SET value = 0.999, certified = 1 WHERE rowid = new.rowid; END")
VIEW = "CREATE VIEW planted AS SELECT * FROM results"


@pytest.mark.parametrize("planted", [TRIGGER, VIEW], ids=["trigger", "view"])
def test_a_store_holding_a_trigger_or_a_view_is_refused(tmp_path, planted):
    """A crafted AFTER INSERT trigger rewrote every new row to 0.999, certified."""
    write_inputs(tmp_path)
    base = ["matrix", "a.run", "b.run", "c.run", "--qrels", "q.txt", "-m", "P@5", "-j", "1", "--store", "s.sqlite"]
    assert cli(tmp_path, *base[:3], *base[4:]).exit_code == 0  # two runs: the third's pairs are still to do
    with sqlite3.connect(tmp_path / "s.sqlite") as connection:
        connection.execute(planted)
    before = rows_of_raw(tmp_path / "s.sqlite")
    for args in (base + ["--resume"], ["export-results", "--store", "s.sqlite", "-o", "x.csv"],
                 ["plot", "--store", "s.sqlite", "-o", "x.png"]):
        line = error_line(cli(tmp_path, *args))
        assert "which medopt did not make" in line and "planted" in line
    assert rows_of_raw(tmp_path / "s.sqlite") == before
    assert not (tmp_path / "x.csv").exists() and not (tmp_path / "x.png").exists()


def rows_of_raw(store: Path) -> list:
    with sqlite3.connect(store) as connection:
        return connection.execute("SELECT * FROM results ORDER BY run_a, run_b, topic").fetchall()


# ---------------------------------------------------------------------------
# read-only stores


def _read_only(folder: Path) -> bool:
    """Make ``folder`` read-only (``chattr +i`` for root, whom permissions do not stop); False if it
    cannot be."""
    if os.geteuid() == 0:
        if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(folder)], check=False,
                                                           capture_output=True).returncode:
            return False
    else:
        folder.chmod(0o555)
    try:
        (folder / "probe").touch()
    except OSError:
        return True
    (folder / "probe").unlink()
    _writable(folder)
    return False


def _writable(folder: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(folder)], check=False, capture_output=True)
    folder.chmod(0o755)


@pytest.mark.parametrize("leftover", [False, True], ids=["closed", "wal-and-shm-left"])
def test_a_store_in_a_read_only_directory_can_be_exported_and_drawn(tmp_path, leftover):
    write_inputs(tmp_path)
    folder = tmp_path / "ro"
    folder.mkdir()
    assert cli(tmp_path, "matrix", "a.run", "b.run", "c.run", "--qrels", "q.txt", "-m", "P@5", "-j", "1", "--store",
               "ro/s.sqlite").exit_code == 0
    expected = rows_of(folder / "s.sqlite")
    holder = None
    if leftover:  # a writer killed with rows in its -wal: a connection kept open while the directory is locked
        holder = sqlite3.connect(folder / "s.sqlite", isolation_level=None)
        holder.execute("PRAGMA wal_autocheckpoint=0")
        holder.execute("UPDATE results SET seconds = seconds + 1")
        assert (folder / "s.sqlite-wal").stat().st_size > 0
    if not _read_only(folder):
        holder and holder.close()
        pytest.skip("cannot make a read-only directory here")
    try:
        exported = cli(tmp_path, "export-results", "--store", "ro/s.sqlite", "-o", "x.csv")
        assert exported.exit_code == 0, exported.output
        assert f"wrote {len(expected)} rows" in exported.stderr
        drawn = cli(tmp_path, "plot", "--store", "ro/s.sqlite", "-o", "h.png")
        assert drawn.exit_code == 0, drawn.output
        assert (tmp_path / "h.png").read_bytes().startswith(b"\x89PNG")
        if leftover:  # the rows in the -wal are read (not the file's older ones)
            assert rows_of(folder / "s.sqlite") == expected
            with ResultStore(folder / "s.sqlite", write=False) as results:
                seconds = [r["seconds"] for r in results.rows()]
            with sqlite3.connect(folder / "s.sqlite") as connection:  # the holder's view, with the WAL's rows
                assert sorted(seconds) == sorted(v for (v,) in connection.execute("SELECT seconds FROM results"))
    finally:
        _writable(folder)
        if holder:
            holder.close()


def test_a_read_only_store_file_can_be_exported(tmp_path):
    write_inputs(tmp_path)
    assert cli(tmp_path, "matrix", "a.run", "b.run", "-m", "P@5", "-j", "1", "--store", "s.sqlite").exit_code == 0
    (tmp_path / "s.sqlite").chmod(0o444)
    exported = cli(tmp_path, "export-results", "--store", "s.sqlite", "-o", "x.csv")
    assert exported.exit_code == 0, exported.output
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*GOOD_RUNS, "q.txt", "s.sqlite", "x.csv"])


def test_runs_given_in_another_order_keep_each_pair_one_way_round(tmp_path):
    """``--resume`` with the runs in another order computed every pair again, the other way round."""
    write_inputs(tmp_path)
    tail = ["--qrels", "q.txt", "-m", "AP@3", "-m", "RBO(p=0.9)", "-j", "1", "--store", "s.sqlite"]
    assert cli(tmp_path, "matrix", "a.run", "b.run", *tail).exit_code == 0
    before = rows_of(tmp_path / "s.sqlite")
    resumed = cli(tmp_path, "matrix", "c.run", "b.run", "a.run", *tail, "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert "12 MED(s) computed, 6 already stored" in resumed.stderr
    after = rows_of(tmp_path / "s.sqlite")
    assert {k: v for k, v in after.items() if k in before} == before and len(after) == 18
    assert {key[:2] for key in after} == {("ra", "rb"), ("rc", "rb"), ("rc", "ra")}


def test_rows_in_a_wal_that_cannot_be_read_are_refused_in_one_line(tmp_path):
    """A -wal holding rows without its -shm, in a read-only directory: reading the file alone (immutable)
    would miss those rows, so the store is refused, saying what to do."""
    write_inputs(tmp_path)
    assert cli(tmp_path, "matrix", "a.run", "b.run", "-m", "P@5", "-j", "1", "--store", "s.sqlite").exit_code == 0
    folder = tmp_path / "ro"
    folder.mkdir()
    writer = sqlite3.connect(tmp_path / "s.sqlite", isolation_level=None)
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("UPDATE results SET seconds = 7")
    shutil.copy(tmp_path / "s.sqlite", folder / "s.sqlite")
    shutil.copy(tmp_path / "s.sqlite-wal", folder / "s.sqlite-wal")
    writer.close()
    if not _read_only(folder):
        pytest.skip("cannot make a read-only directory here")
    try:
        line = error_line(cli(tmp_path, "export-results", "--store", "ro/s.sqlite", "-o", "x.csv"))
        assert "its rows in s.sqlite-wal need a s.sqlite-shm" in line
    finally:
        _writable(folder)
