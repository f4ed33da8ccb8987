"""medopt matrix: rows equal medopt.med's, resume after SIGKILL / SIGINT, both engines, store and export."""

import csv
import json
import signal
import sqlite3
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import medopt
from medopt.batch import Settings, run_matrix
from medopt.cli import main
from medopt.synthetic.generate import generate_qrels, generate_runs
from medopt.io.trec import read_qrels, read_run, write_qrels, write_run
from medopt.io.store import COLUMNS, KEY, ResultStore, export_results


def write_job(directory, *, n_runs, n_topics, depth, seed, qrels=True, max_grade=1, judged=0.4):
    directory.mkdir(parents=True, exist_ok=True)
    runs = generate_runs(n_runs, n_topics, depth, seed=seed)
    paths = []
    for name, rankings in runs.items():
        paths.append(str(directory / f"{name}.run"))
        write_run(paths[-1], rankings, name)
    qrels_path = None
    if qrels:
        qrels_path = str(directory / "qrels.txt")
        write_qrels(qrels_path, generate_qrels(runs, seed=seed, max_grade=max_grade, judged_fraction=judged))
    return paths, qrels_path


def stored(path) -> dict:
    """key -> row (without the timing column) of every row of a store; asserts keys are unique."""
    with ResultStore(path) as store:
        rows = list(store.rows())
    table = {tuple(r[k] for k in KEY): {c: r[c] for c in COLUMNS if c != "seconds"} for r in rows}
    assert len(table) == len(rows)
    return table


def count(path) -> int:
    try:
        with sqlite3.connect(str(path)) as connection:
            return connection.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


# ---------------------------------------------------------------------------
# what the rows hold


@pytest.fixture(scope="module")
def small_job(tmp_path_factory):
    """3 runs x 12 topics, binary qrels (nDCG by Algorithm 1 is exact there)."""
    return write_job(tmp_path_factory.mktemp("small"), n_runs=3, n_topics=12, depth=15, seed=4)


@pytest.fixture(scope="module")
def graded_job(tmp_path_factory):
    return write_job(tmp_path_factory.mktemp("graded"), n_runs=3, n_topics=12, depth=15, seed=5, max_grade=3)


def test_rows_equal_medopt_med(small_job, tmp_path):
    paths, qrels = small_job
    metrics = ["P@5", "SDCG@10", "RBP(p=0.8)", "DCG@4", "nDCG@5"]
    report = run_matrix(paths, metrics, qrels=qrels, store=tmp_path / "s.sqlite", jobs=2, progress=False)
    runs = {read_run(p).name: read_run(p) for p in paths}
    judgments = read_qrels(qrels)
    rows = stored(tmp_path / "s.sqlite")
    assert report.computed == len(rows) == 3 * 12 * len(metrics)
    assert {(k[0], k[1]) for k in rows} == {("run0", "run1"), ("run0", "run2"), ("run1", "run2")}
    for (run_a, run_b, topic, metric, method), row in rows.items():
        expected = medopt.med(metric, runs[run_a].rankings[topic], runs[run_b].rankings[topic],
                              judgments.get(topic, {}))
        assert method == expected.method == ("alg1" if metric == "nDCG@5" else "closed-form")
        assert row["value"] == pytest.approx(expected.value, abs=1e-9)
        assert (row["certified"], row["status"], row["solver"]) == (True, "optimal", "numpy")
        grades = json.loads(row["assignment"])
        assert grades == {d: g for d, g in expected.assignment.items() if g > 0} or row["value"] == pytest.approx(
            medopt.score(metric, runs[run_a].rankings[topic], {**judgments.get(topic, {}), **grades})
            - medopt.score(metric, runs[run_b].rankings[topic], {**judgments.get(topic, {}), **grades}), abs=1e-9)


def test_fast_path_equals_per_topic_path(graded_job, tmp_path):
    paths, qrels = graded_job
    metrics = ["P@5", "DCG@10", "RBP(p=0.9)", "SDCG@5", "nDCG@5", "nDCG"]  # graded nDCG: the profile search
    for fast in (True, False):
        run_matrix(paths, metrics, qrels=qrels, store=tmp_path / f"{fast}.sqlite", jobs=1,
                   settings=Settings(fast=fast), progress=False)
    fast_rows, slow_rows = stored(tmp_path / "True.sqlite"), stored(tmp_path / "False.sqlite")
    assert fast_rows.keys() == slow_rows.keys()
    for key, row in fast_rows.items():
        other = slow_rows[key]
        assert row["value"] == pytest.approx(other["value"], abs=1e-9)
        assert (row["certified"], row["status"], row["method"]) == (other["certified"], other["status"],
                                                                     other["method"])
        kernel = not (row["method"] == "alg1" and key[3] == "nDCG")  # Alg. 1's kernel needs a cutoff
        assert (row["solver"], other["solver"]) == ("numpy" if kernel else None, None), key


def test_alg1_on_graded_nDCG_is_marked_heuristic(graded_job, tmp_path):
    paths, qrels = graded_job
    run_matrix(paths, ["nDCG@5"], qrels=qrels, store=tmp_path / "h.sqlite", jobs=1,
               settings=Settings(method="alg1"), progress=False)
    rows = list(stored(tmp_path / "h.sqlite").values())
    assert all(r["status"] == "heuristic" and not r["certified"] for r in rows if r["status"] != "optimal")
    assert sum(r["status"] == "heuristic" for r in rows) > len(rows) / 2


# ---------------------------------------------------------------------------
# store and export


def test_export_round_trip(small_job, tmp_path):
    paths, qrels = small_job
    store = tmp_path / "e.sqlite"
    run_matrix(paths, ["P@5", "nDCG@5", "RR@3"], qrels=qrels, store=store, jobs=1, progress=False,
               settings=Settings(method="enumerate"))
    with ResultStore(store) as results:
        rows = list(results.rows())
    for fmt in ("csv", "tsv"):
        assert export_results(store, tmp_path / f"out.{fmt}") == len(rows)
        with open(tmp_path / f"out.{fmt}", newline="") as handle:
            read = list(csv.DictReader(handle, delimiter="," if fmt == "csv" else "\t"))
        assert list(read[0]) == list(COLUMNS)
        for got, row in zip(read, rows):
            assert float(got["value"]) == row["value"] and float(got["upper_bound"]) == row["upper_bound"]
            assert got["certified"] == ("true" if row["certified"] else "false")
            assert json.loads(got["assignment"]) == json.loads(row["assignment"])
            assert [got[c] for c in KEY] == [row[c] for c in KEY]
    export_results(store, tmp_path / "out.jsonl")
    assert [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()] == rows
    result = cli("export-results", "--store", store, "-o", tmp_path / "out.parquet")
    assert result.exit_code == 0, result.output
    assert pq.read_table(tmp_path / "out.parquet").to_pylist() == rows


def test_existing_store_needs_resume_and_same_settings(small_job, tmp_path):
    paths, qrels = small_job
    store = tmp_path / "r.sqlite"
    assert cli("matrix", *paths, "--qrels", qrels, "-m", "P@5", "--store", store, "-j", 1).exit_code == 0
    again = cli("matrix", *paths, "--qrels", qrels, "-m", "P@5", "--store", store)
    assert again.exit_code == 2 and "--resume" in again.output
    resumed = cli("matrix", *paths, "--qrels", qrels, "-m", "P@5", "-m", "P@3", "--store", store, "--resume",
                  "--progress", "-j", 1)
    assert resumed.exit_code == 0
    assert "36 MED(s) computed, 36 already stored" in resumed.output
    assert "med/s" in resumed.output and "72/72" in resumed.output  # the progress bar: rate and counts
    clash = cli("matrix", *paths, "-m", "P@5", "--store", store, "--resume")
    assert clash.exit_code == 2 and "other settings" in clash.output


# ---------------------------------------------------------------------------
# interruption: kill the job at some moment, resume it, get the uninterrupted job's rows


def interrupt_and_resume(tmp_path, paths, args, interruption):
    import psutil

    reference = tmp_path / "reference.sqlite"
    store = tmp_path / "killed.sqlite"
    command = [sys.executable, "-m", "medopt.cli", "matrix", *paths, *args, "--store", str(store),
               "-j", "2", "--no-progress"]
    job = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while count(store) == 0 and job.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    workers = psutil.Process(job.pid).children(recursive=True)
    job.send_signal(interruption)  # as soon as some rows are committed: mid-job on fast machines too
    job.wait(timeout=30)
    partial = count(store)
    if job.returncode == 0:  # the whole job committed before the signal landed (a busy machine): no test
        return None
    assert partial > 0, "the interruption should fall in the middle of the job"
    if interruption == signal.SIGINT:
        assert job.returncode == 130 and "interrupted" in job.stderr.read()
    else:
        assert job.returncode == -signal.SIGKILL
    gone, alive = psutil.wait_procs(workers, timeout=10)
    assert not alive, "workers outlived the killed job"
    resumed = subprocess.run(command + ["--resume"], capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    subprocess.run(command[:-5] + ["--store", str(reference), "-j", "1", "--no-progress"], check=True,
                   capture_output=True, timeout=120)
    expected = stored(reference)
    assert partial < len(expected), "the interruption should fall in the middle of the job"
    assert stored(store) == expected
    return partial, len(expected)


def test_resume_after_sigkill_per_topic_rows(tmp_path):
    paths, _ = write_job(tmp_path / "runs", n_runs=4, n_topics=60, depth=10, seed=7, qrels=False)
    assert interrupt_and_resume(tmp_path, paths, ["-m", "AP@6", "-m", "RR@6", "--method", "enumerate"],
                                signal.SIGKILL) is not None


def test_resume_after_sigint_fast_rows(tmp_path):
    """The fast path commits thousands of rows a second: when the whole job beat the signal, the job
    is made longer (more runs: more pairs) until the signal lands in its middle."""
    for attempt, runs in enumerate((4, 6, 8)):
        folder = tmp_path / f"attempt{attempt}"
        paths, qrels = write_job(folder / "runs", n_runs=runs, n_topics=1500, depth=20, seed=8)
        done = interrupt_and_resume(folder, paths, ["--qrels", qrels, "-m", "P@10", "-m", "nDCG@10",
                                                    "-m", "RBP(p=0.8)", "--chunk-size", "4"], signal.SIGINT)
        if done is not None:
            return
    pytest.fail("the job finished before SIGINT landed, three times")


# ---------------------------------------------------------------------------
# engines


def test_dask_engine_gives_the_local_rows(small_job, tmp_path):
    paths, qrels = small_job
    for method, metrics in (("auto", ["P@5", "RBP(p=0.8)@10", "nDCG@5"]), ("enumerate", ["RR@4", "SSP@3"])):
        for engine in ("local", "dask"):
            run_matrix(paths, metrics, qrels=qrels, store=tmp_path / f"{engine}-{method}.sqlite", engine=engine,
                       jobs=2, settings=Settings(method=method), progress=False,
                       cluster_options={"processes": False})
        assert stored(tmp_path / f"dask-{method}.sqlite") == stored(tmp_path / f"local-{method}.sqlite")


def test_dask_engine_with_a_scheduler_address(small_job, tmp_path):
    from dask.distributed import LocalCluster

    paths, qrels = small_job
    with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
        run_matrix(paths, ["P@5", "RR@3"], qrels=qrels, store=tmp_path / "remote.sqlite", engine="dask",
                   scheduler=cluster.scheduler_address, settings=Settings(method="enumerate"), progress=False)
    run_matrix(paths, ["P@5", "RR@3"], qrels=qrels, store=tmp_path / "local.sqlite", jobs=1,
               settings=Settings(method="enumerate"), progress=False)
    assert stored(tmp_path / "remote.sqlite") == stored(tmp_path / "local.sqlite")


def test_dask_engine_from_the_command_line(small_job, tmp_path):
    paths, qrels = small_job
    for engine in ("local", "dask"):
        result = subprocess.run([sys.executable, "-m", "medopt.cli", "matrix", *paths, "--qrels", qrels,
                                 "-m", "SDCG@5", "-m", "RR@3", "--method", "enumerate", "--engine", engine, "-j", "2",
                                 "--store", str(tmp_path / f"{engine}.sqlite"), "-o", str(tmp_path / f"{engine}.csv")],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
    assert stored(tmp_path / "dask.sqlite") == stored(tmp_path / "local.sqlite")
    assert len((tmp_path / "dask.csv").read_text().splitlines()) == 1 + 3 * 12 * 2
