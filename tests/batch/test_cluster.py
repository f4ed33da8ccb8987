"""``matrix --engine dask --scheduler ADDR`` against a real cluster: a ``dask scheduler`` and ``dask worker``
processes on 127.0.0.1 (free ports chosen by the system), a worker killed mid-job (its tasks rerun on the
other: no row lost or duplicated) and a scheduler that goes away (one line, exit 2, the store resumable)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from medopt.io.store import COLUMNS, KEY, ResultStore

ROOT = Path(__file__).resolve().parents[2]
TOPICS = 80  # 3 runs: 240 AP@8 instances, a few seconds of work on two workers
START_SECONDS = 60


def environment() -> dict:
    """This checkout first on the workers' path (they unpickle medopt's tasks)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def wait_for(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


class Cluster:
    """A scheduler and its workers, each a process of its own; everything started is ended at close."""

    def __init__(self, folder: Path):
        self.folder, self.processes, self.workers = folder, [], []
        self.folder.mkdir(parents=True, exist_ok=True)
        file = folder / "scheduler.json"
        self.scheduler = self._start("scheduler", ["scheduler", "--host", "127.0.0.1", "--port", "0",
                                                   "--no-dashboard", "--scheduler-file", str(file)])
        wait_for(lambda: file.exists() and file.stat().st_size > 0, START_SECONDS, "the scheduler's file")
        wait_for(lambda: "address" in self._read(file), START_SECONDS, "the scheduler's address")
        self.address = self._read(file)["address"]

    @staticmethod
    def _read(file: Path) -> dict:
        try:
            return json.loads(file.read_text())
        except ValueError:  # being written
            return {}

    def _start(self, name: str, arguments: list) -> subprocess.Popen:
        log = open(self.folder / f"{name}.log", "w")
        process = subprocess.Popen([sys.executable, "-m", "dask", *arguments], stdout=log, stderr=subprocess.STDOUT,
                                   env=environment(), cwd=self.folder)
        log.close()
        self.processes.append(process)
        return process

    def add_worker(self) -> subprocess.Popen:
        name = f"worker{len(self.workers)}"
        worker = self._start(name, ["worker", self.address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                                    "--host", "127.0.0.1", "--name", name])
        log = self.folder / f"{name}.log"
        wait_for(lambda: "Registered to" in log.read_text() or worker.poll() is not None, START_SECONDS,
                 f"{name} to register")
        assert worker.poll() is None, log.read_text()
        self.workers.append(worker)
        return worker

    def close(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
            process.wait(timeout=30)


@pytest.fixture
def cluster_folder(tmp_path):
    clusters = []
    yield tmp_path, lambda name: clusters.append(Cluster(tmp_path / name)) or clusters[-1]
    for cluster in clusters:
        cluster.close()


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> list:
    from medopt.io.trec import write_run
    from medopt.synthetic.generate import generate_runs

    folder = tmp_path_factory.mktemp("runs")
    paths = []
    for name, rankings in generate_runs(3, TOPICS, 8, seed=11).items():
        paths.append(str(folder / f"{name}.run"))
        write_run(paths[-1], rankings, name)
    return paths


def matrix(paths: list, store: Path, *extra: str) -> list:
    return [sys.executable, "-m", "medopt.cli", "matrix", *paths, "-m", "AP@8", "--method", "enumerate",
            "--chunk-size", "2", "--store", str(store), "--no-progress", *extra]


def rows_in(store: Path) -> int:
    try:
        with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as connection:  # closed: a reader
            return connection.execute("SELECT COUNT(*) FROM results").fetchone()[0]  # left open keeps a stale -shm
    except sqlite3.OperationalError:  # not made yet
        return 0


def stored(store: Path) -> dict:
    """key -> row without its timing; asserts no key twice."""
    with ResultStore(store) as results:
        rows = list(results.rows())
    table = {tuple(r[k] for k in KEY): {c: r[c] for c in COLUMNS if c != "seconds"} for r in rows}
    assert len(table) == len(rows), "a row stored twice"
    return table


def start_job(command: list, folder: Path) -> subprocess.Popen:
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=folder,
                            env=environment())


def mid_job(job: subprocess.Popen, store: Path) -> int:
    """Wait for the job's first rows; the rows stored then (the job still running)."""
    wait_for(lambda: rows_in(store) > 0 or job.poll() is not None, START_SECONDS, "the first rows")
    assert job.poll() is None, "the job finished before the fault: make it longer"
    return rows_in(store)


def test_a_worker_killed_mid_job_has_its_tasks_rerun(cluster_folder, job):
    folder, start = cluster_folder
    cluster = start("cluster")
    victim, _ = cluster.add_worker(), cluster.add_worker()
    store = folder / "s.sqlite"
    running = start_job(matrix(job, store, "--engine", "dask", "--scheduler", cluster.address), folder)
    before = mid_job(running, store)
    victim.send_signal(signal.SIGKILL)
    victim.wait(timeout=10)
    killed = time.monotonic()
    out, err = running.communicate(timeout=120)
    print(f"worker killed with {before} rows stored; the job completed {time.monotonic() - killed:.2f} s later")
    assert running.returncode == 0, err
    assert before < 3 * TOPICS
    assert "Remove worker" in (cluster.folder / "scheduler.log").read_text()  # the scheduler saw it go
    rows = stored(store)
    assert len(rows) == 3 * TOPICS
    local = folder / "local.sqlite"
    subprocess.run(matrix(job, local, "-j", "1"), check=True, capture_output=True, timeout=120, env=environment())
    assert rows == stored(local)  # the same values as computed on this machine alone


def test_a_scheduler_that_goes_away_is_one_line_and_the_store_resumes(cluster_folder, job):
    folder, start = cluster_folder
    first = start("first")
    first.add_worker()
    store = folder / "s.sqlite"
    command = matrix(job, store, "--engine", "dask", "--scheduler", first.address)
    running = start_job(command, folder)
    mid_job(running, store)
    first.scheduler.send_signal(signal.SIGKILL)
    lost = time.monotonic()
    out, err = running.communicate(timeout=60)
    seconds = time.monotonic() - lost
    assert running.returncode == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("medopt: error: the Dask scheduler or a worker was lost"), err
    assert "--resume" in lines[0] and seconds < 30
    print(f"scheduler lost: exit 2 after {seconds:.2f} s")
    partial = stored(store)
    assert 0 < len(partial) < 3 * TOPICS
    second = start("second")  # a new scheduler (another port) and worker: the same store completes
    second.add_worker()
    resumed = subprocess.run(matrix(job, store, "--engine", "dask", "--scheduler", second.address, "--resume"),
                             capture_output=True, text=True, timeout=120, cwd=folder, env=environment())
    assert resumed.returncode == 0, resumed.stderr
    assert f"{3 * TOPICS - len(partial)} MED(s) computed, {len(partial)} already stored" in resumed.stderr
    rows = stored(store)
    assert len(rows) == 3 * TOPICS
    assert all(rows[key] == row for key, row in partial.items())  # the stored rows kept as they were
