"""medopt bounds (score ranges beside the trec_eval score) and the plot kinds of ranges: bounds and ranges."""

import csv
import io
import json

import pytest
from click.testing import CliRunner

import medopt
from medopt.cli import main
from medopt.errors import MedoptWarning
from medopt.io.trec import read_qrels, read_run, write_qrels, write_run
from medopt.plots.ranges import load_ranges, plot_bounds

PNG = b"\x89PNG\r\n\x1a\n"

RUNS = {
    "ra": {"1": ["d1", "d2", "d3", "d4", "d5"], "2": ["e1", "e2", "e3", "e4"], "3": ["f1", "f2", "f3"]},
    "rb": {"1": ["d2", "d6", "d1", "d7", "d8"], "2": ["e3", "e5", "e1", "e6", "e7"], "3": ["f2", "f4", "f1"]},
    "rc": {"1": ["d6", "d7", "d1", "d9", "d2"], "2": ["e2", "e5", "e8", "e1"]},
}
QRELS = {"1": {"d1": 2, "d2": 0, "d6": 1, "d9": 0}, "2": {"e1": 1, "e3": 0, "e5": 2, "e8": 0}}  # topic 3: no judgments
METRICS = ["P@3", "nDCG@5", "RBP(p=0.8)", "AP@5"]


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("ranges")
    runs = {}
    for name, rankings in RUNS.items():
        runs[name] = directory / f"{name}.run"
        write_run(runs[name], rankings, name)
    qrels = directory / "qrels.txt"
    write_qrels(qrels, QRELS)
    return runs, qrels


@pytest.fixture(scope="module")
def range_store(files, tmp_path_factory):
    runs, qrels = files
    store = tmp_path_factory.mktemp("store") / "ranges.sqlite"
    result = invoke("matrix", runs["ra"], runs["rb"], runs["rc"], "--qrels", qrels, "-m", "P@3", "-m", "RBP(p=0.8)",
                    "--range", "--store", store, "-j", 1, "--no-progress")
    assert result.exit_code == 0, result.output
    return store


def rows_of(result):
    return list(csv.DictReader(io.StringIO(result.stdout)))


def test_bounds_rows_are_the_api_ranges_and_trec_eval_scores(files):
    runs, qrels = files
    result = invoke("bounds", runs["ra"], runs["rb"], "--qrels", qrels, *[a for m in METRICS for a in ("-m", m)])
    assert result.exit_code == 0, result.output
    assert "1 of 3 run topic(s) left out" in result.stderr  # topic 3 is not judged: left out, as trec_eval does
    rows = rows_of(result)
    assert list(rows[0]) == ["run", "topic", "metric", "low", "high", "trec_eval", "judged", "low_certified",
                             "high_certified", "method", "seconds"]
    assert len(rows) == 2 * (2 * 4 + 4)
    judgments = read_qrels(qrels)
    top = max(g for judged in judgments.values() for g in judged.values())  # SPEC 1: the file's top grade
    for row in rows:
        if row["topic"] == "all":
            continue
        ranking = read_run(runs[row["run"]]).rankings[row["topic"]]
        expected = medopt.score_range(row["metric"], ranking, judgments.get(row["topic"], {}), max_grade=top)
        reported = medopt.score(row["metric"], ranking, judgments.get(row["topic"], {}), max_grade=top)
        assert float(row["low"]) == pytest.approx(expected.low, abs=1e-9)
        assert float(row["high"]) == pytest.approx(expected.high, abs=1e-9)
        assert float(row["trec_eval"]) == pytest.approx(reported, abs=1e-9)
        assert float(row["low"]) - 1e-9 <= float(row["trec_eval"]) <= float(row["high"]) + 1e-9
        assert row["low_certified"] == row["high_certified"] == "true"
    for run in ("ra", "rb"):
        for metric in ("P@3", "nDCG@5", "RBP(p=0.8)", "AP@5"):
            name = str(medopt.parse_metric(metric))
            topics = [r for r in rows if r["run"] == run and r["metric"] == name and r["topic"] != "all"]
            (mean,) = [r for r in rows if r["run"] == run and r["metric"] == name and r["topic"] == "all"]
            assert [r["topic"] for r in topics] == ["1", "2"]
            for column in ("low", "high", "trec_eval", "judged"):
                assert float(mean[column]) == pytest.approx(sum(float(r[column]) for r in topics) / 2, abs=1e-9)
            assert float(mean["low"]) <= float(mean["trec_eval"]) <= float(mean["high"])


def test_bounds_judged_topics_and_jsonl(files, tmp_path):
    runs, qrels = files
    out = tmp_path / "bounds.jsonl"
    result = invoke("bounds", runs["ra"], runs["rc"], "--qrels", qrels, "-m", "P@3",
                    "--format", "jsonl", "-o", out)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["run"], r["topic"]) for r in rows] == [("ra", "1"), ("ra", "2"), ("ra", "all"),
                                                      ("rc", "1"), ("rc", "2"), ("rc", "all")]
    assert "1 of 3 run topic(s) left out" in result.stderr


def test_bounds_residual_raises_the_high_end_by_the_tail(files):
    runs, qrels = files
    plain = rows_of(invoke("bounds", runs["ra"], "--qrels", qrels, "-m", "RBP(p=0.8)"))
    result = invoke("bounds", runs["ra"], "--qrels", qrels, "-m", "RBP(p=0.8)", "--residual")
    assert result.exit_code == 0, result.output
    residual = rows_of(result)
    judgments = read_qrels(qrels)
    for before, after in zip(plain[:-1], residual[:-1]):
        ranking = RUNS["ra"][after["topic"]]
        expected = medopt.score_range("RBP(p=0.8)", ranking, judgments.get(after["topic"], {}), residual=True)
        assert float(after["high"]) == pytest.approx(expected.high, abs=1e-9)
        assert float(after["high"]) == pytest.approx(float(before["high"]) + 0.8 ** len(ranking), abs=1e-9)
        assert after["low"] == before["low"] and after["trec_eval"] == before["trec_eval"]


def test_bounds_errors_are_one_line_with_exit_status_2(files, tmp_path):
    runs, qrels = files
    bad = tmp_path / "bad.qrels"
    bad.write_text("1 0 d1 1\n1 0 d2 0\n1 0 d3 high\n")
    result = invoke("bounds", runs["ra"], "--qrels", bad, "-m", "P@3")
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and f"{bad}:3" in result.stderr and result.stdout == ""
    result = invoke("bounds", runs["ra"], "--qrels", qrels, "-m", "P@3", "--residual")
    assert result.exit_code == 2
    assert "medopt: error: ra, topic 1, P@3: residual applies to RBP only" in result.stderr
    result = invoke("bounds", tmp_path / "missing.run", "-m", "P@3")
    assert result.exit_code == 2 and "missing.run" in result.stderr


def test_plot_ranges_draws_the_chosen_pair(range_store, tmp_path):
    png = tmp_path / "ranges.png"
    result = invoke("plot", "--kind", "ranges", "--store", range_store, "-m", "P@3", "--pair", "ra", "rc", "-o", png)
    assert result.exit_code == 0, result.output
    data = png.read_bytes()
    assert data.startswith(PNG) and len(data) > 2000
    metric, pair, ranges = load_ranges(range_store, "P@3", ("ra", "rc"))
    assert pair == ("ra", "rc") and sorted(r[0] for r in ranges) == ["1", "2"]
    _, _, reverse = load_ranges(range_store, "P@3", ("rc", "ra"))
    assert sorted((t, -high, -low) for t, low, high, _ in reverse) == sorted((t, lo, hi) for t, lo, hi, _ in ranges)
    for topic, low, high, certified in ranges:
        expected = medopt.difference_range("P@3", RUNS["ra"][topic], RUNS["rc"][topic], QRELS.get(topic, {}))
        assert (low, high, certified) == (pytest.approx(expected.low), pytest.approx(expected.high), True)


def test_plot_ranges_refusals(range_store, files, tmp_path):
    runs, qrels = files
    png = tmp_path / "x.png"
    result = invoke("plot", "--kind", "ranges", "--store", range_store, "-m", "P@3", "-o", png)
    assert result.exit_code == 2 and "--pair" in result.stderr and "ra rb" in result.stderr
    result = invoke("plot", "--kind", "ranges", "--store", range_store, "--pair", "ra", "rb", "-o", png)
    assert result.exit_code == 2 and "choose one with -m" in result.stderr
    result = invoke("plot", "--kind", "ranges", "--store", range_store, "-m", "P@3", "--pair", "ra", "zz", "-o", png)
    assert result.exit_code == 2 and "no ranges for the pair ra zz" in result.stderr
    plain = tmp_path / "plain.sqlite"
    made = invoke("matrix", runs["ra"], runs["rb"], "--qrels", qrels, "-m", "P@3", "--store", plain, "-j", 1,
                  "--no-progress")
    assert made.exit_code == 0, made.output
    result = invoke("plot", "--kind", "ranges", "--store", plain, "-o", png)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "made without --range" in result.stderr and "rerun medopt matrix with --range" in result.stderr
    assert not png.exists()


def test_plot_bounds_ranks_runs_by_their_trec_eval_score(files, tmp_path):
    runs, qrels = files
    png = tmp_path / "bounds.png"
    result = invoke("plot", "--kind", "bounds", runs["ra"], runs["rb"], runs["rc"], "--qrels", qrels, "-m", "nDCG@5",
                    "-o", png)
    assert result.exit_code == 0, result.output
    data = png.read_bytes()
    assert data.startswith(PNG) and len(data) > 2000
    with pytest.warns(MedoptWarning, match="1 of 3 run topic"):
        drawn = plot_bounds([runs["ra"], runs["rb"], runs["rc"]], qrels, "nDCG@5", [tmp_path / "again.pdf"])
    table = rows_of(invoke("bounds", runs["ra"], runs["rb"], runs["rc"], "--qrels", qrels, "-m", "nDCG@5"))
    means = {r["run"]: float(r["trec_eval"]) for r in table if r["topic"] == "all"}
    assert [r["run"] for r in drawn] == sorted(means, key=lambda run: -means[run])
    assert [r["trec_eval"] for r in drawn] == pytest.approx([means[r["run"]] for r in drawn])
    result = invoke("plot", "--kind", "bounds", runs["ra"], "-m", "nDCG@5", "-o", png)
    assert result.exit_code == 2 and "--kind bounds needs" in result.stderr
