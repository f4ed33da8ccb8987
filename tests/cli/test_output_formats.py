"""The outputs of medopt compare: trec_eval -q text (parsed back equal to the CSV), a booktabs LaTeX table,
parquet and JSON lines; the same text from medopt.compare's and medopt.matrix's DataFrames."""

import csv
import io
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import medopt
from medopt.cli import main
from medopt.errors import MedoptError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
A, B, QRELS = (str(EXAMPLES / name) for name in ("run.run0.txt", "run.run1.txt", "qrels.txt"))
ARGS = ["compare", A, B, "--qrels", QRELS, "-m", "P@5", "-m", "AP@5"]


def cli(*args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def parse_trec_eval(text):
    """What a script reading trec_eval -q output does: measure, topic, value per line."""
    values = {}
    for line in text.splitlines():
        measure, topic, value = line.split()
        if measure != "runid":
            values[measure, topic] = float(value)
    return values


@pytest.mark.parametrize("ranges", [False, True])
def test_trec_eval_output_parses_back_to_the_csv_values(ranges):
    extra = ["--range"] if ranges else []
    text = cli(*ARGS, *extra, "--format", "trec_eval")
    rows = list(csv.DictReader(io.StringIO(cli(*ARGS, *extra))))
    lines = text.splitlines()
    assert all(re.fullmatch(r"\S+ *\t\S+\t\S+", line) for line in lines)
    assert all(len(line.split("\t")[0]) >= 22 for line in lines)  # trec_eval's %-22s measure column
    assert "runid                 \tall\trun0_vs_run1" in lines and "num_q                 \tall\t10" in lines
    assert lines.index("runid                 \tall\trun0_vs_run1") == len(lines) - (3 if ranges else 1) * 2 - 2
    values = parse_trec_eval(text)
    expected = {(f"MED_{r['metric']}", r["topic"]): float(r["med"]) for r in rows}
    if ranges:
        for end in ("low", "high"):
            expected.update({(f"MED{end}_{r['metric']}", r["topic"]): float(r[end]) for r in rows})
    expected[("num_q", "all")] = 10.0
    assert values == expected


def test_trec_eval_and_latex_from_the_dataframes():
    frame = medopt.compare(A, B, QRELS, ["P@5", "AP@5"])
    assert medopt.to_trec_eval(frame) == cli(*ARGS, "--format", "trec_eval", "-q")  # trec_eval -q: every topic
    summary = medopt.compare(A, B, QRELS, ["P@5", "AP@5"], per_topic=False)
    assert medopt.to_trec_eval(summary) == cli(*ARGS, "--format", "trec_eval")  # trec_eval: the means only
    assert medopt.to_latex(frame) == cli(*ARGS, "--format", "latex")
    three = medopt.matrix([A, B, str(EXAMPLES / "run.run2.txt")], QRELS, ["P@5"], jobs=1)
    with pytest.raises(MedoptError, match="holds one pair of runs; these rows hold 3"):
        medopt.to_trec_eval(three)
    one_pair = three[(three.run_a == "run0") & (three.run_b == "run1")]
    assert parse_trec_eval(medopt.to_trec_eval(one_pair))["MED_P@5", "all"] == pytest.approx(
        frame.set_index(["metric", "topic"]).loc[("P@5", "all"), "med"])
    table = medopt.to_latex(three)
    assert table.count(" \\\\\n") == 3 and "run1 &\nrun2 &" in table


def latex_body(text):
    body = text[text.index("\\midrule\n") + len("\\midrule\n"):text.index("\\bottomrule")]
    return [row.split(" &\n") for row in body.split(" \\\\\n") if row.strip()]


def test_latex_table_structure():
    text = cli(*ARGS, "--format", "latex")
    for part in ("\\usepackage{booktabs}", "\\begin{table*}[ht]", "\\caption{", "\\begin{tabular}{c|ll|c|c}",
                 "\\toprule", "\\textbf{Run A}", "\\textbf{P@5}", "\\textbf{AP@5}", "\\midrule", "\\bottomrule",
                 "\\end{tabular}", "\\label{tab:med}", "\\end{table*}"):
        assert part in text
    assert text.index("\\toprule") < text.index("\\midrule") < text.index("\\bottomrule")
    means = medopt.compare(A, B, QRELS, ["P@5", "AP@5"]).set_index(["metric", "topic"])["med"]
    (row,) = latex_body(text)
    assert row[:3] == ["a", "run0", "run1"]
    assert row[3:] == [f"{means['P@5', 'all']:.4f}", f"{means['AP@5', 'all']:.4f}"]


def test_latex_ranges_bold_when_decided_and_dagger_when_uncertified(tmp_path):
    (tmp_path / "a.run").write_text("1 Q0 x 1 2 my_run\n1 Q0 y 2 1 my_run\n")
    (tmp_path / "b.run").write_text("1 Q0 z 1 2 rb\n1 Q0 w 2 1 rb\n")
    (tmp_path / "q").write_text("1 0 x 1\n1 0 y 1\n1 0 z 0\n1 0 w 0\n")
    text = cli("compare", tmp_path / "a.run", tmp_path / "b.run", "--qrels", tmp_path / "q", "-m", "P@2",
               "--range", "--format", "latex")
    (row,) = latex_body(text)
    assert row[1] == "my\\_run"  # escaped
    assert row[3] == "1.0000 {\\scriptsize \\textbf{$[1.0000, 1.0000]$}}"  # decided: bold
    frame = medopt.compare(A, B, QRELS, "AP@5", method="greedy")  # a heuristic: never certified
    (row,) = latex_body(medopt.to_latex(frame))
    assert row[3].endswith("$^\\dagger$")
    ranged = latex_body(medopt.to_latex(medopt.compare(A, B, QRELS, "P@5", ranges=True)))[0][3]
    assert re.fullmatch(r"\d\.\d{4} \{\\scriptsize \$\[-?\d\.\d{4}, -?\d\.\d{4}\]\$\}", ranged)


def test_parquet_and_jsonl_hold_the_csv_rows(tmp_path):
    rows = list(csv.DictReader(io.StringIO(cli(*ARGS, "--range"))))
    cli(*ARGS, "--range", "--format", "parquet", "-o", tmp_path / "out.parquet")
    cli(*ARGS, "--range", "--format", "jsonl", "-o", tmp_path / "out.jsonl")
    table = pd.read_parquet(tmp_path / "out.parquet")
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert list(table.columns) == list(rows[0]) == list(lines[0])
    assert list(table["med"]) == pytest.approx([float(r["med"]) for r in rows], abs=1e-9)
    assert [r["low"] for r in lines] == pytest.approx([float(r["low"]) for r in rows], abs=1e-9)
    assert table["certified"].dtype == bool and list(table["verdict"]) == [r["verdict"] for r in rows]
    result = CliRunner().invoke(main, [*ARGS, "--format", "parquet"])
    assert result.exit_code == 2 and "--format parquet writes a file: give -o FILE" in result.output
    assert not list(tmp_path.glob(".*"))  # no temporary file left behind
