"""The ranges in ``medopt compare --range`` and ``medopt matrix --range``: every stored or printed
end is ``medopt.difference_range``'s, the MED columns follow from the ends (MED = max(high, -low)),
the mean row's ends are the means of the topics' ends, the array kernels (closed form, nDCG profile
search) give the per-instance ends, and a store keeps to the choice it was made with."""

from __future__ import annotations

import csv
import io
import json
import sqlite3

import pytest

import medopt
from medopt.metrics import resolve_max_grade
from medopt.batch import Settings, run_matrix
from medopt.batch.blocks import RANGE_KERNELS
from medopt.io.trec import read_qrels, read_run

from test_batch import cli, stored, write_job


@pytest.fixture(scope="module")
def graded_job(tmp_path_factory):
    return write_job(tmp_path_factory.mktemp("graded"), n_runs=3, n_topics=8, depth=12, seed=11, max_grade=2,
                     judged=0.7)


def expected_range(metric, runs, judgments, run_a, run_b, topic):
    """The topic's range under SPEC 1's G: the largest grade of the whole qrels."""
    return medopt.difference_range(metric, runs[run_a].rankings[topic], runs[run_b].rankings[topic],
                                   judgments.get(topic, {}), max_grade=resolve_max_grade(None, judgments))


@pytest.mark.parametrize("fast", [True, False])
def test_matrix_range_rows_are_difference_ranges(graded_job, tmp_path, fast):
    paths, qrels = graded_job
    metrics = ["P@5", "RBP(p=0.8)@10", "AP@5", "nDCG@5", "RR@5"]
    store = tmp_path / "r.sqlite"
    run_matrix(paths, metrics, qrels=qrels, store=store, jobs=1, settings=Settings(ranges=True, fast=fast),
               progress=False)
    runs = {read_run(p).name: read_run(p) for p in paths}
    judgments = read_qrels(qrels)
    rows = stored(store)
    assert len(rows) == 3 * 8 * len(metrics)
    for (run_a, run_b, topic, metric, method), row in rows.items():
        expected = expected_range(metric, runs, judgments, run_a, run_b, topic)
        assert method == expected.method
        assert (row["low"], row["high"]) == (pytest.approx(expected.low, abs=1e-9),
                                             pytest.approx(expected.high, abs=1e-9))
        assert row["low_certified"] and row["high_certified"] and row["certified"]
        assert row["value"] == pytest.approx(max(row["high"], -row["low"]), abs=1e-12)
        assert row["upper_bound"] >= row["value"] - 1e-12
        assert row["solver"] == ("numpy" if fast and method in RANGE_KERNELS else expected.solver)
        for end, sign in (("low", -1), ("high", 1)):  # each end's assignment re-scores to it
            grades = {**judgments.get(topic, {}), **json.loads(row[f"{end}_assignment"])}
            score = lambda run: medopt.score(metric, runs[run].rankings[topic], grades,  # noqa: E731
                                             max_grade=resolve_max_grade(None, judgments))
            assert score(run_a) - score(run_b) == pytest.approx(row[end], abs=1e-9), (end, metric, topic)
        med = medopt.med(metric, runs[run_a].rankings[topic], runs[run_b].rankings[topic], judgments.get(topic, {}),
                         max_grade=resolve_max_grade(None, judgments))
        assert row["value"] == pytest.approx(med.value, abs=1e-9)


def test_a_store_keeps_to_its_choice(graded_job, tmp_path):
    paths, qrels = graded_job
    plain, ranged = tmp_path / "plain.sqlite", tmp_path / "ranged.sqlite"
    assert cli("matrix", *paths, "--qrels", qrels, "-m", "P@5", "--store", plain, "-j", 1).exit_code == 0
    refused = cli("matrix", *paths, "--qrels", qrels, "-m", "P@5", "--store", plain, "--resume", "--range")
    assert refused.exit_code == 2 and "range: stored False, now True" in refused.output
    assert len(refused.output.strip().splitlines()) == 1
    with sqlite3.connect(plain) as connection:  # nothing written by the refused job
        assert connection.execute("SELECT COUNT(*) FROM results WHERE low IS NOT NULL").fetchone()[0] == 0
    assert cli("matrix", *paths, "--qrels", qrels, "-m", "P@5", "--store", ranged, "--range", "-j", 1).exit_code == 0
    more = cli("matrix", *paths, "--qrels", qrels, "-m", "P@5", "-m", "AP@3", "--store", ranged, "--resume",
               "--range", "-j", 1)
    assert more.exit_code == 0 and "24 MED(s) computed, 24 already stored" in more.output
    back = cli("matrix", *paths, "--qrels", qrels, "-m", "P@5", "--store", ranged, "--resume")
    assert back.exit_code == 2 and "range: stored True, now False" in back.output
    exported = tmp_path / "ranged.csv"
    assert cli("export-results", "--store", ranged, "-o", exported).exit_code == 0
    table = list(csv.DictReader(exported.open()))
    assert len(table) == 48 and all(float(r["low"]) <= float(r["high"]) for r in table)


def test_a_store_from_before_ranges_counts_as_made_without(graded_job, tmp_path):
    """A store whose settings predate the range setting was made without ranges."""
    paths, qrels = graded_job
    store = tmp_path / "old.sqlite"
    assert cli("matrix", *paths, "--qrels", qrels, "-m", "P@5", "--store", store, "-j", 1).exit_code == 0
    with sqlite3.connect(store) as connection:
        connection.execute("DELETE FROM settings WHERE name = 'range'")
    refused = cli("matrix", *paths, "--qrels", qrels, "-m", "P@5", "--store", store, "--resume", "--range")
    assert refused.exit_code == 2 and "range" in refused.output


def test_a_heuristic_method_is_refused_before_anything_runs(graded_job, tmp_path):
    paths, qrels = graded_job
    result = cli("matrix", *paths, "--qrels", qrels, "-m", "AP@5", "--method", "greedy", "--range",
                 "--store", tmp_path / "g.sqlite")
    assert result.exit_code == 2 and "no exact range ends" in result.output
    assert not (tmp_path / "g.sqlite").exists()


def test_compare_range_rows_and_the_mean_range(graded_job):
    paths, qrels = graded_job
    result = cli("compare", paths[0], paths[1], "--qrels", qrels, "-m", "AP@5", "-m", "P@3", "--range", "-q")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.output)))
    runs = {read_run(p).name: read_run(p) for p in paths}
    judgments = read_qrels(qrels)
    for metric in ("AP@5", "P@3"):
        topics = [r for r in rows if r["metric"] == metric and r["topic"] != "all"]
        (mean_row,) = [r for r in rows if r["metric"] == metric and r["topic"] == "all"]
        assert len(topics) == 8
        for row in topics:
            expected = expected_range(metric, runs, judgments, row["run_a"], row["run_b"], row["topic"])
            assert float(row["low"]) == pytest.approx(expected.low, abs=1e-9)
            assert float(row["high"]) == pytest.approx(expected.high, abs=1e-9)
            assert float(row["med"]) == pytest.approx(expected.med, abs=1e-9)
            assert row["low_certified"] == row["high_certified"] == "true"
            assert row["verdict"] == expected.verdict
        low = sum(float(r["low"]) for r in topics) / len(topics)
        high = sum(float(r["high"]) for r in topics) / len(topics)
        assert float(mean_row["low"]) == pytest.approx(low, abs=1e-9)
        assert float(mean_row["high"]) == pytest.approx(high, abs=1e-9)
        assert mean_row["verdict"] == ("decided" if low > 1e-9 or high < -1e-9 else "can flip")  # all certified
        # the MED of the means never exceeds the mean of the MEDs
        assert max(high, -low) <= float(mean_row["med"]) + 1e-12
    plain = cli("compare", paths[0], paths[1], "--qrels", qrels, "-m", "P@3")
    assert "low" not in plain.output.splitlines()[0]


def test_compare_range_decides_when_one_run_is_ahead_whatever_is_judged(tmp_path):
    (tmp_path / "a.run").write_text("1 Q0 r1 1 2 A\n1 Q0 r2 2 1 A\n")
    (tmp_path / "b.run").write_text("1 Q0 n1 1 2 B\n1 Q0 u 2 1 B\n")
    (tmp_path / "q").write_text("1 0 r1 1\n1 0 r2 1\n1 0 n1 0\n")
    result = cli("compare", tmp_path / "a.run", tmp_path / "b.run", "--qrels", tmp_path / "q", "-m", "P@2", "--range",
                 "-q")
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert [(r["topic"], float(r["low"]), float(r["high"]), r["verdict"]) for r in rows] == [
        ("1", 0.5, 1.0, "decided"), ("all", 0.5, 1.0, "decided")]
