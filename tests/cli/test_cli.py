"""The medopt command: compare output, mean rows, formats, and one-line errors with exit status 2."""

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import medopt
from medopt.cli import main
from medopt.io.trec import read_qrels, read_run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_compare_rows_match_the_api():
    a, b, q = EXAMPLES / "run.run0.txt", EXAMPLES / "run.run1.txt", EXAMPLES / "qrels.txt"
    summary = run("compare", a, b, "--qrels", q, "-m", "P@10", "-m", "ndcg_cut.10", "-m", "SSP@5")
    assert summary.exit_code == 0, summary.output
    assert [r["topic"] for r in csv.DictReader(io.StringIO(summary.output))] == ["all"] * 3  # trec_eval's habit
    result = run("compare", a, b, "--qrels", q, "-m", "P@10", "-m", "ndcg_cut.10", "-m", "SSP@5", "-q")
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert list(rows[0]) == ["run_a", "run_b", "topic", "metric", "topics", "score_a", "score_b", "diff", "judged_a",
                             "judged_b", "med", "direction", "certified", "upper_bound", "method", "seconds"]
    run_a, run_b, qrels = read_run(a), read_run(b), read_qrels(q)
    topics = sorted(run_a.rankings, key=int)
    assert len(rows) == 3 * len(topics) + 3
    for row in rows:
        if row["topic"] == "all":
            continue
        expected = medopt.med(row["metric"], run_a.rankings[row["topic"]], run_b.rankings[row["topic"]],
                              qrels.get(row["topic"], {}), max_grade=max(g for j in qrels.values() for g in j.values()))
        assert float(row["med"]) == pytest.approx(expected.value, abs=1e-9)
        assert float(row["score_a"]) == pytest.approx(medopt.score(row["metric"], run_a.rankings[row["topic"]],
                                                                   qrels.get(row["topic"], {})), abs=1e-9)
        assert row["certified"] == "true"
    means = {r["metric"]: float(r["med"]) for r in rows if r["topic"] == "all"}
    assert set(means) == {"P@10", "nDCG@10", "SSP@5"}
    per_topic = [float(r["med"]) for r in rows if r["metric"] == "P@10" and r["topic"] != "all"]
    assert means["P@10"] == pytest.approx(sum(per_topic) / len(per_topic))


def test_compare_jsonl_to_file(tmp_path):
    out = tmp_path / "out.jsonl"
    result = run("compare", EXAMPLES / "run.run0.txt", EXAMPLES / "run.run2.txt", "-m", "RBP(p=0.95)",
                 "--format", "jsonl", "-o", out)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows[-1]["topic"] == "all" and all(r["certified"] for r in rows)


def test_topics_in_one_run_are_reported(tmp_path):
    (tmp_path / "a.run").write_text("1 Q0 x 1 2 ra\n1 Q0 y 2 1 ra\n2 Q0 x 1 1 ra\n")
    (tmp_path / "b.run").write_text("1 Q0 y 1 2 rb\n1 Q0 z 2 1 rb\n")
    result = CliRunner().invoke(main, ["compare", str(tmp_path / "a.run"), str(tmp_path / "b.run"), "-m", "P@2"])
    assert result.exit_code == 0
    assert "1 topic(s) only in RUN_A" in result.output


@pytest.mark.parametrize("args, message", [
    (["compare", "missing.run", "missing.run", "-m", "P@5"], "no such file"),
    (["compare", "{a}", "{a}", "-m", "P@"], "not a metric string"),
    (["compare", "{bad}", "{a}", "-m", "P@5"], "bad.run:2"),
    (["compare", "{a}", "{a}", "-m", "P@5", "--method", "nope"], "unknown method"),
    (["metric", "nDCG@0"], "cutoff"),
])
def test_bad_input_gives_one_line_error_and_exit_2(tmp_path, args, message):
    good = tmp_path / "a.run"
    good.write_text("1 Q0 x 1 2 ra\n")
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 x 1 2 ra\n1 Q0 y 1 notanumber ra\n")
    args = [arg.format(a=good, bad=bad) for arg in args]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert any(message in line for line in lines), result.output
    assert "Traceback" not in result.output


def test_output_file_not_left_half_written(tmp_path):
    out = tmp_path / "out.csv"
    result = run("compare", EXAMPLES / "run.run0.txt", EXAMPLES / "run.run1.txt", "-m", "P@5", "-m", "XYZ@3", "-o", out)
    assert result.exit_code == 2
    assert not out.exists() and not list(tmp_path.iterdir())


def test_metric_command_prints_canonical_names():
    result = run("metric", "ndcg_cut.10", "RBP(p=0.8)", "AP(norm=min)@100")
    assert result.exit_code == 0
    assert [line.split("\t")[0] for line in result.output.splitlines()] == ["nDCG@10", "RBP", "AP(norm=min)@100"]


def test_version_names_the_solvers():
    from importlib.metadata import version

    from click.testing import CliRunner
    from medopt.cli import main
    result = CliRunner().invoke(main, ["--version"], prog_name="medopt")
    assert result.exit_code == 0
    assert result.output.startswith(f"medopt {version('medopt')}\n")
    assert f"HiGHS (highspy) {version('highspy')}" in result.output
    assert f"OR-Tools CP-SAT {version('ortools')}" in result.output
