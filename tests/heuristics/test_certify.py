"""medopt certify: heuristics against the exact solver, counterexamples, and the peer (Tan & Clarke) check."""

import csv
import io
import json
import statistics
from pathlib import Path

import pytest
from click.testing import CliRunner

import medopt
import medopt.campaigns.certify as certify_module
from medopt.campaigns.certify import Case, Heuristic, certify_case, parse_heuristic, summarize
from medopt.campaigns.counterexamples import (check_counterexample, counterexample, format_counterexample,
                                              load_counterexample, save_counterexample)
from medopt.campaigns.peer import printed_tolerance
from medopt.cli.certify import certify_command
from medopt.errors import MedoptError
from medopt.io.trec import read_qrels, read_run
from medopt.core.result import MedResult

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RUNS = [EXAMPLES / f"run.run{i}.txt" for i in range(3)]
QRELS = EXAMPLES / "qrels.txt"


def invoke(*args):
    return CliRunner().invoke(certify_command, [str(a) for a in args])


def read_csv(path):
    return list(csv.DictReader(io.StringIO(Path(path).read_text())))


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """One certify run on generated graded instances, shared by the tests below."""
    out = tmp_path_factory.mktemp("generated")
    result = invoke("--generate", 30, "--k", 8, "--max-grade", 2, "--seed", 0,
                    "-m", "AP@8", "-m", "SSP@8", "-m", "ERR@8", "-m", "nDCG@8",
                    "--heuristic", "greedy", "--heuristic", "tabu(iterations=200)", "--heuristic", "tc-err(p=1)",
                    "--heuristic", "alg1", "--out", out, "--show", 2, "--no-progress")
    assert result.exit_code == 0, result.output
    return out, result


def test_summary_matches_the_instance_rows(generated):
    out, result = generated
    rows, summary = read_csv(out / "instances.csv"), read_csv(out / "summary.csv")
    assert {(s["heuristic"], s["metric"]) for s in summary} == {
        ("greedy", "AP@8"), ("tabu(iterations=200)", "AP@8"), ("tabu(iterations=200)", "SSP@8"),
        ("tc-err(p=1)", "ERR@8"), ("alg1", "nDCG@8")}
    for line in summary:
        group = [r for r in rows if (r["heuristic"], r["metric"]) == (line["heuristic"], line["metric"])]
        certified = [r for r in group if r["exact_certified"] == "true"]
        gaps = [float(r["exact_value"]) - float(r["heuristic_value"]) for r in certified]
        matches = sum(g <= 1e-9 for g in gaps)
        assert int(line["instances"]) == len(group) == 30
        assert int(line["certified"]) == len(certified) and int(line["uncertified"]) == 30 - len(certified)
        assert int(line["exact"]) == matches
        assert float(line["fraction_exact"]) == pytest.approx(matches / len(certified))
        assert float(line["max_gap"]) == pytest.approx(max(gaps), abs=1e-8)
        assert float(line["mean_gap"]) == pytest.approx(sum(gaps) / len(gaps), abs=1e-8)
        ratio = statistics.median(float(r["exact_seconds"]) / float(r["heuristic_seconds"]) for r in group)
        assert float(line["time_ratio"]) == pytest.approx(ratio, rel=1e-6)
        assert int(line["above_exact"]) == 0
        assert line["heuristic"] in result.stdout
    misses = {s["metric"]: int(s["certified"]) - int(s["exact"]) for s in summary}
    assert misses["ERR@8"] > 0 and misses["nDCG@8"] > 0   # tc-err with p=1 and alg1 with G=2 miss sometimes


def test_heuristics_never_above_exact(generated):
    out, _ = generated
    for row in read_csv(out / "instances.csv"):
        assert row["verdict"] in ("exact", "miss")
        assert row["exact_certified"] == "true"
        assert float(row["heuristic_value"]) <= float(row["exact_value"]) + 1e-9
        assert (row["verdict"] == "exact") == (float(row["gap"]) <= 1e-9)


def test_counterexamples_written_for_misses_and_replayed(generated):
    out, result = generated
    misses = [r for r in read_csv(out / "instances.csv") if r["verdict"] == "miss"]
    files = sorted(out.glob("*.json"))
    assert len(files) == len(misses) and {r["counterexample"] for r in misses} == {f.name for f in files}
    assert "falls short by" in result.output and "more counterexample(s)" in result.output
    for row in misses:
        data = load_counterexample(out / row["counterexample"])
        assert data["metric"] == row["metric"] and data["heuristic"]["name"] in row["heuristic"]
        assert data["values"]["heuristic"] == pytest.approx(float(row["heuristic_value"]), abs=1e-9)
        assert data["values"]["exact"] == pytest.approx(float(row["exact_value"]), abs=1e-9)
        k = medopt.metrics.parse_metric(data["metric"]).cutoff
        assert len(data["a"]) <= k and len(data["b"]) <= k
        replay = check_counterexample(data)
        assert replay.ok, (row, replay)
        assert replay.heuristic_value == pytest.approx(data["values"]["heuristic"], abs=1e-9)
        assert replay.exact_value == pytest.approx(data["values"]["exact"], abs=1e-9)
    tc_err = [load_counterexample(out / r["counterexample"]) for r in misses if r["metric"] == "ERR@8"]
    assert all(d["heuristic"]["params"] == {"p": 1} for d in tc_err)


def test_counterexamples_keep_the_gain_map(tmp_path):
    result = invoke("--generate", 12, "--k", 6, "--max-grade", 2, "--seed", 3, "-m", "ERR@6", "--heuristic",
                    "tc-err(p=0)", "--gains", "0:0,1:0.25,2:0.75", "--out", tmp_path, "--no-progress")
    assert result.exit_code == 0, result.output
    assert "(G=2, gains 0:0 1:0.25 2:0.75), tc-err(p=0) falls short by" in result.stdout
    files = sorted(tmp_path.glob("*.json"))
    assert files
    for path in files:
        data = load_counterexample(path)
        assert data["gains"] == {0: 0.0, 1: 0.25, 2: 0.75}
        assert check_counterexample(data).ok


def test_moffat_graded_ndcg_counterexample(tmp_path):
    """DESIGN.md's instance: Alg. 1 gives 0.6976, the true MED-nDCG@5 is 0.7366."""
    case = Case("x", "y", "t1", ("d2", "d3", "d7", "d1", "d0"), ("d3", "d5", "d4", "d7", "d6"), {"d4": 1},
                max_grade=2)
    rows, found = certify_case(case, "nDCG@5", [Heuristic("alg1")])
    (row,) = rows
    assert row["verdict"] == "miss" and row["exact_certified"]
    assert row["heuristic_value"] == pytest.approx(0.6976, abs=1e-4)
    assert row["exact_value"] == pytest.approx(0.7366, abs=1e-4)
    (_, data), = found
    path = save_counterexample(data, tmp_path, 1)
    assert path.name.startswith("cx0001_nDCG@5_alg1_x_y_t1")
    assert check_counterexample(load_counterexample(path)).ok
    text = format_counterexample(data)
    assert "A: A? B? C? D? E?" in text and "B: B? F? G1 C? H?" in text
    assert "exact: 0.736" in text and "certified" in text and "G=d4" in text


def test_counterexample_keeps_only_what_matters():
    judged = {"d1": 2, "d2": 2, "d3": 1, "d4": 1, "d5": 1, "d6": 1, "d7": 0, "x0": 0, "neg": -1}
    case = Case("x", "y", "t1", ("d1", "d7", "d0", "d3", "d4", "d2", "d5"), ("d4", "d5", "d6", "d0", "d7"),
                judged, max_grade=2)
    _, found = certify_case(case, "nDCG@5", [Heuristic("alg1")])
    (_, data), = found
    assert data["a"] == ["d1", "d7", "d0", "d3", "d4"]            # cut at k = 5
    in_lists = {d: g for d, g in judged.items() if d not in ("d2", "x0", "neg")}
    assert data["judgments"] == {**in_lists, "d2": 2}             # d2 (relevant, beyond the cut) counts for IDCG
    assert data["judged_relevant_outside"] == 1
    assert check_counterexample(data).ok
    assert "judged relevant outside both lists: 1 (grades 2)" in format_counterexample(data)
    # not recall-based: judged documents outside the lists do not matter and are dropped
    options = dict(max_grade=2, gains=None, residual=False)
    heuristic = parse_heuristic("tc-err(p=0)")
    results = [medopt.med("ERR@5", case.a, case.b, case.judgments, method=method, **options, **extra)
               for method, extra in (("tc-err", heuristic.options), ("exact", {}))]
    data = counterexample(case, medopt.parse_metric("ERR@5"), heuristic, *results, options)
    assert data["judgments"] == in_lists and data["heuristic"]["params"] == {"p": 0}
    assert check_counterexample(data).ok


def test_summary_counts_uncertified_apart():
    rows = [{"heuristic": "h", "metric": "m", "exact_certified": c, "gap": g, "verdict": v,
             "heuristic_seconds": 1.0, "exact_seconds": s}
            for c, g, v, s in [(True, 0.0, "exact", 2.0), (True, 0.25, "miss", 4.0), (False, 0.5, "uncertified", 9.0)]]
    (line,) = summarize(rows)
    assert (line["instances"], line["certified"], line["uncertified"], line["exact"]) == (3, 2, 1, 1)
    assert line["fraction_exact"] == 0.5 and line["max_gap"] == 0.25 and line["mean_gap"] == 0.125
    assert line["time_ratio"] == 4.0


def test_heuristic_above_exact_is_reported_loudly(tmp_path, monkeypatch):
    real = certify_module.timed_med

    def inflated(*args, **kwargs):  # a broken greedy (the exact solver, which warm-starts from it, is untouched)
        result, seconds = real(*args, **kwargs)
        if kwargs["method"] == "greedy":
            result = MedResult(**{**result.to_dict(), "value": result.value + 0.125})
        return result, seconds

    monkeypatch.setattr(certify_module, "timed_med", inflated)
    result = invoke(*RUNS[:2], "--qrels", QRELS, "-m", "AP@5", "--heuristic", "greedy", "--out", tmp_path,
                    "--no-progress")
    assert result.exit_code == 1
    assert "medopt: BUG: 10 heuristic value(s) above the exact maximum" in result.stderr
    rows = read_csv(tmp_path / "instances.csv")
    assert all(r["verdict"] == "above" for r in rows) and len(list(tmp_path.glob("*.json"))) == 10
    assert "is ABOVE the exact value" in result.stdout


def test_exact_solver_failure_is_kept_as_a_row(tmp_path, monkeypatch):
    real = certify_module.timed_med

    def failing(*args, **kwargs):  # an exact solver that refuses one topic
        if kwargs["method"] == "exact" and args[1] == read_run(RUNS[0]).rankings["401"]:
            raise MedoptError("model broken")
        return real(*args, **kwargs)

    monkeypatch.setattr(certify_module, "timed_med", failing)
    result = invoke(*RUNS[:2], "--qrels", QRELS, "-m", "AP@5", "--heuristic", "greedy", "--out", tmp_path,
                    "--no-progress")
    assert result.exit_code == 0, result.output
    assert "exact solver failed on AP@5, run0 vs run1, topic 401: model broken" in result.stderr
    (line,) = read_csv(tmp_path / "summary.csv")
    assert (line["instances"], line["certified"], line["uncertified"], line["exact_errors"]) == ("10", "9", "1", "1")
    (row,) = [r for r in read_csv(tmp_path / "instances.csv") if r["topic"] == "401"]
    assert row["verdict"] == "error" and row["exact_value"] == "nan" and row["exact_certified"] == "false"


def test_runs_mode_on_the_example_runs(tmp_path):
    result = invoke(*RUNS, "--qrels", QRELS, "-m", "AP@5", "-m", "P@5", "--heuristic", "greedy",
                    "--heuristic", "tabu(iterations=100,seed=1)", "--heuristic", "closed-form", "--out", tmp_path,
                    "--no-progress")
    assert result.exit_code == 0, result.output
    rows = read_csv(tmp_path / "instances.csv")
    pairs = {(r["run_a"], r["run_b"]) for r in rows}
    assert pairs == {("run0", "run1"), ("run0", "run2"), ("run1", "run2")}
    assert len(rows) == 3 * 10 * 3                      # pairs x topics x (greedy, tabu on AP; closed form on P)
    assert {r["metric"] for r in rows if r["heuristic"] == "closed-form"} == {"P@5"}
    summary = {(s["heuristic"], s["metric"]): s for s in read_csv(tmp_path / "summary.csv")}
    assert summary[("closed-form", "P@5")]["fraction_exact"] == "1"
    assert all(s["instances"] == "30" and s["above_exact"] == "0" for s in summary.values())
    run_a, run_b, qrels = read_run(RUNS[0]), read_run(RUNS[1]), read_qrels(QRELS)
    for row in rows[:6]:
        if row["run_b"] != "run1":
            continue
        topic = row["topic"]
        expected = medopt.med(row["metric"], run_a.rankings[topic], run_b.rankings[topic], qrels.get(topic, {}))
        assert float(row["exact_value"]) == pytest.approx(expected.value, abs=1e-9)
    assert "fraction_exact" in result.stdout and "P@5" in result.stdout


def test_default_heuristics_per_metric(tmp_path):
    result = invoke(*RUNS[:2], "--qrels", QRELS, "-m", "SSP@3", "-m", "RBP(p=0.9)@5", "--out", tmp_path,
                    "--no-progress")
    assert result.exit_code == 0, result.output
    assert {(s["heuristic"], s["metric"]) for s in read_csv(tmp_path / "summary.csv")} == {
        ("tabu", "SSP@3"), ("closed-form", "RBP(p=0.9)@5")}


# -- peer check -------------------------------------------------------------

PEER = {"MED-nDCG@20": dict(metric="SDCG@20", max_grade=2, gains={0: 0, 1: 0.25, 2: 0.75}),
        "MED-RBP": dict(metric="RBP(p=0.95)", max_grade=1, residual=True),
        "MED-ERR": dict(metric="ERR@30", max_grade=2, gains={0: 0, 1: 0.25, 2: 0.75})}


def peer_exact(column, a, b, judgments):
    options = dict(PEER[column])
    return medopt.med(options.pop("metric"), a, b, judgments, **options)


def test_peer_check_counts(tmp_path):
    runs, qrels = [read_run(p) for p in RUNS[:2]], read_qrels(QRELS)
    topics = sorted(runs[0].rankings, key=int)[:4]
    # per (topic, column): how the synthetic peer value relates to the exact one
    plan = {topics[0]: ("equal", "above", "below"), topics[1]: ("above", "equal", "equal"),
            topics[2]: ("below", "below", "above"), topics[3]: ("equal", "equal", "equal")}
    expected = {c: {"equal": 0, "above": 0, "below": 0} for c in PEER}
    lines = ["run1,run2,topic,MED-nDCG@20,MED-RBP,MED-ERR"]
    for index, topic in enumerate(topics):
        values = []
        for column, kind in zip(PEER, plan[topic]):
            exact = peer_exact(column, runs[0].rankings[topic], runs[1].rankings[topic], qrels.get(topic, {}))
            assert exact.certified
            if kind == "below" and exact.value < 0.002:
                kind = "equal"  # nothing printable lies below
            expected[column][kind] += 1
            # 4 printed decimals: tolerance 5e-5; 'equal' is the exact value rounded, others are 0.001 off
            values.append(f"{exact.value + {'equal': 0.0, 'above': 0.001, 'below': -0.001}[kind]:.4f}")
        names = ("run0", "run1") if index % 2 else ("run.run0.txt", str(RUNS[1]))  # run ids or file names
        lines.append(",".join([*names, topic, *values]))
    (tmp_path / "peer.csv").write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    result = invoke(*RUNS[:2], "--qrels", QRELS, "--peer", tmp_path / "peer.csv", "--out", out, "--no-progress")
    assert result.exit_code == 0, result.output
    summary = {s["metric"]: s for s in read_csv(out / "peer_summary.csv")}
    for column, counts in expected.items():
        line = summary[column]
        assert {k: int(line[k]) for k in counts} == counts, column
        assert line["rows"] == "4" and line["undecided"] == "0"
        if counts["above"]:
            assert float(line["max_above"]) == pytest.approx(0.001, abs=1e-4)
    rows = read_csv(out / "peer.csv")
    assert len(rows) == 12 and {r["medopt_metric"] for r in rows} == {"SDCG@20", "RBP(p=0.95)", "ERR@30"}
    for row in rows:
        assert float(row["tolerance"]) == pytest.approx(5e-5, abs=2e-9)
        assert float(row["difference"]) == pytest.approx(float(row["peer"]) - float(row["exact"]), abs=1e-9)
    assert "MED-ERR" in result.stdout and "above" in result.stdout


def test_peer_tolerance_follows_printed_precision(tmp_path):
    assert printed_tolerance("0.12") == pytest.approx(0.005, abs=2e-9)
    assert printed_tolerance("0.123456789") == 1e-6 and printed_tolerance("0") == 1e-6
    assert printed_tolerance("1.5e-3") == 1e-6
    run_a, run_b, qrels = read_run(RUNS[0]), read_run(RUNS[1]), read_qrels(QRELS)
    topic = sorted(run_a.rankings, key=int)[1]
    exact = peer_exact("MED-nDCG@20", run_a.rankings[topic], run_b.rankings[topic], qrels.get(topic, {})).value
    verdicts = []
    for offset in (-0.02, -0.004, 0.0, 0.004, 0.02):  # printed with two decimals: tolerance 0.005
        printed = f"{exact + offset:.2f}"
        (tmp_path / "p.csv").write_text(f"run1,run2,topic,MED-nDCG@20,MED-RBP,MED-ERR\nrun0,run1,{topic},{printed},"
                                        "0,0\n")
        result = invoke(*RUNS[:2], "--qrels", QRELS, "--peer", tmp_path / "p.csv", "--out", tmp_path / "o",
                        "--no-progress")
        assert result.exit_code == 0, result.output
        row = next(r for r in read_csv(tmp_path / "o" / "peer.csv") if r["metric"] == "MED-nDCG@20")
        difference = float(printed) - exact
        expected = "equal" if abs(difference) <= 0.005 else ("above" if difference > 0 else "below")
        assert row["verdict"] == expected
        verdicts.append(row["verdict"])
    assert verdicts[0] == "below" and verdicts[2] == "equal" and verdicts[-1] == "above"


# -- bad input ---------------------------------------------------------------

@pytest.mark.parametrize("args, message", [
    ([RUNS[0], "missing.run", "-m", "AP@5"], "missing.run: no such file"),
    ([RUNS[0], "-m", "AP@5"], "two or more RUNS"),
    ([*RUNS[:2], "-m", "AP@5", "--heuristic", "simplex"], "unknown heuristic 'simplex'"),
    ([*RUNS[:2], "-m", "AP@5", "--heuristic", "tc-err"], "applies to none of the metrics"),
    ([*RUNS[:2], "-m", "AP@5", "--heuristic", "tabu(depth=3)"], "bad option"),
    ([*RUNS[:2], "-m", "SN_DCG@5"], "no heuristic computes MED for SN_DCG@5"),  # RR@5 has the rr kernel
    ([*RUNS[:2], "-m", "AP@@5"], ""),
    ([*RUNS[:2]], "-m"),
    (["--generate", 3, RUNS[0], "-m", "AP@5"], "drop RUNS"),
    ([*RUNS[:2], "-m", "AP@5", "--gains", "1=2"], "--gains"),
    ([*RUNS[:2], "--peer", "nothere.csv"], "nothere.csv"),
])
def test_bad_input_one_line_error(args, message):
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("medopt: error: ") and message in lines[0]


def test_bad_peer_files(tmp_path):
    (tmp_path / "cols.csv").write_text("run1,run2,topic,MED-nDCG@20\nrun0,run1,401,0.1\n")
    (tmp_path / "name.csv").write_text("run1,run2,topic,MED-nDCG@20,MED-RBP,MED-ERR\nrun0,run9,401,0.1,0.1,0.1\n")
    (tmp_path / "num.csv").write_text("run1,run2,topic,MED-nDCG@20,MED-RBP,MED-ERR\nrun0,run1,401,x,0.1,0.1\n")
    for name, message in (("cols", "lacks column(s) MED-RBP, MED-ERR"), ("name", ":2: run 'run9' is not among"),
                          ("num", ":2: MED-nDCG@20 'x' is not a number")):
        result = invoke(*RUNS[:2], "--peer", tmp_path / f"{name}.csv")
        assert result.exit_code == 2
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], lines
    result = invoke(*RUNS[:2], "-m", "AP@5", "--peer", tmp_path / "num.csv")
    assert result.exit_code == 2 and "--peer fixes the metrics" in result.stderr


def test_load_counterexample_rejects_other_files(tmp_path):
    (tmp_path / "x.json").write_text(json.dumps({"metric": "AP@5"}))
    with pytest.raises(MedoptError, match="not a medopt counterexample"):
        load_counterexample(tmp_path / "x.json")
    with pytest.raises(MedoptError, match="cannot read"):
        load_counterexample(tmp_path / "none.json")
