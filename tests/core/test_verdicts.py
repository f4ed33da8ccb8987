"""What a researcher reads must be right (issue 49): verdicts from proofs (SPEC 7), trec_eval's topics
(SPEC 10) and top grade (SPEC 1), and a summary that answers the question.

The tie runs: three topics, every document judged, so each topic's difference range is one point, the
observed P@10 difference: 0 - 0.1, 0 - 0 and 0.3 - 0.2 (and the mirror image).  Their exact mean is 0 (a
tie: the comparison can flip), but floats make it -9.3e-18 (or +9.3e-18), which the verdict read from
rounded values called decided (the code before this test said so in compare, and the other way round in
the ranges plot)."""

from __future__ import annotations

import csv
import io
import math
import sqlite3
import warnings
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import medopt
from medopt.cli import main
from medopt.errors import MedoptWarning
from medopt.core.result import TOLERANCE, exact_value, mean_range, open_end, verdict
from conftest import SHARED_DATA

DATA = SHARED_DATA / "trec_eval"


def _tie_files(tmp_path: Path, mirror: bool = False) -> tuple[Path, Path, Path]:
    """Runs A and B over topics 1-3, 10 documents each, all judged; P@10(A) - P@10(B) per topic is
    0 - 0.1, 0 - 0, 0.3 - 0.2 (``mirror``: the other way round)."""
    relevant = {"1": (0, 1), "2": (0, 0), "3": (3, 2)}
    if mirror:
        relevant = {t: (b, a) for t, (a, b) in relevant.items()}
    run_a, run_b, qrels = [], [], []
    for topic, (in_a, in_b) in relevant.items():
        for side, count, lines in (("a", in_a, run_a), ("b", in_b, run_b)):
            for i in range(10):
                doc = f"{side}{topic}-{i}"
                lines.append(f"{topic} Q0 {doc} {i + 1} {100 - i} run{side.upper()}")
                qrels.append(f"{topic} 0 {doc} {1 if i < count else 0}")
    paths = tmp_path / "a.run", tmp_path / "b.run", tmp_path / "q.txt"
    for path, lines in zip(paths, (run_a, run_b, qrels)):
        path.write_text("\n".join(lines) + "\n")
    return paths


def _cli(*args) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def _csv(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO("\n".join(line for line in text.splitlines()
                                                     if not line.startswith("medopt:")))))


def test_the_tie_is_float_noise_either_way():
    topics = [0 / 10 - 1 / 10, 0 / 10 - 0 / 10, 3 / 10 - 2 / 10]
    assert sum(topics) / 3 < 0 and sum(-v for v in topics) / 3 > 0  # the old verdicts: decided, both ways
    assert sum(exact_value(v) for v in topics) == 0


def test_verdict_rules():
    assert verdict(0.1, 0.3, 0.05, 0.3) == "decided"
    assert verdict(-0.3, -0.1, -0.3, -0.05) == "decided"
    assert verdict(-0.1, 0.2, -0.1, 0.2) == "can flip"
    assert verdict(0.0, 0.2, 0.0, 0.2) == "can flip"          # touches 0: a tie is possible
    assert verdict(TOLERANCE / 2, 0.2) == "can flip"          # within tol of 0
    assert verdict(0.1, 0.3, -0.01, 0.3) == "open"            # the values exclude 0, the bound does not
    assert open_end(0.1, 0.3) == "low" and open_end(-0.3, -0.1) == "high"
    assert verdict(-0.3, -0.1, -0.3, 0.02) == "open"


def test_mean_range_is_exact_for_rational_metrics():
    ends = [(v, v, v, v) for v in (0.1, 0.2, -0.3)]
    exact = mean_range(ends, rational=True)
    assert exact.low == exact.high == 0.0 and exact.verdict == "can flip"
    floats = mean_range(ends)
    assert abs(floats.high) < 1e-16 and floats.verdict == "can flip"  # within tol even without fractions
    # an uncertified end: the values exclude 0, the bounds do not
    span = mean_range([(0.1, 0.2, 0.1, 0.2), (0.05, 0.1, -0.2, 0.1)])
    assert span.verdict == "open" and span.open_end == "low"
    assert mean_range([(0.1, 0.2, 0.1, 0.2), (0.05, 0.1, 0.04, 0.1)]).verdict == "decided"


@pytest.mark.parametrize("mirror", [False, True])
def test_every_surface_says_can_flip_on_the_tie(tmp_path, mirror):
    run_a, run_b, qrels = _tie_files(tmp_path, mirror)
    # compare, the command: the summary row
    (row,) = _csv(_cli("compare", run_a, run_b, "--qrels", qrels, "-m", "P@10", "--range"))
    assert row["topic"] == "all" and row["verdict"] == "can flip"
    assert float(row["low"]) == 0.0 and float(row["high"]) == 0.0 and float(row["diff"]) == 0.0
    assert float(row["low_bound"]) == 0.0 and float(row["high_bound"]) == 0.0
    # medopt.compare, the API
    frame = medopt.compare(str(run_a), str(run_b), str(qrels), ["P@10"], ranges=True)
    assert frame[frame.topic == "all"].verdict.tolist() == ["can flip"]
    # matrix: the store's pairs table and --summary
    store, summary = tmp_path / "s.sqlite", tmp_path / "summary.csv"
    CliRunner().invoke(main, ["matrix", str(run_a), str(run_b), "--qrels", str(qrels), "-m", "P@10", "--range",
                              "--store", str(store), "--summary", str(summary), "-j", "1"], catch_exceptions=False)
    (pair,) = list(csv.DictReader(summary.open()))
    assert pair["verdict"] == "can flip" and float(pair["diff"]) == 0.0
    with sqlite3.connect(store) as connection:
        assert connection.execute("SELECT verdict FROM pairs").fetchall() == [("can flip",)]
    # medopt.matrix(summary=True)
    pairs = medopt.matrix([str(run_a), str(run_b)], str(qrels), ["P@10"], ranges=True, jobs=1, summary=True)
    assert pairs.verdict.tolist() == ["can flip"]
    # judge-next's pair summary
    rows = []
    medopt.judge_next([str(run_a), str(run_b)], str(qrels), "P@10", budget=1, summary=rows)
    assert [r["verdict"] for r in rows] == ["can flip"]


def test_an_uncertified_end_is_open_not_decided():
    result = medopt.difference_range("P@3", ["a", "b", "c"], ["d", "e", "f"], {"a": 1, "b": 1, "d": 0, "e": 0})
    assert result.verdict == "decided"  # closed form: proven ends, low = 2/3 - 1/3 > 0
    result.low_bound = -0.5  # as a solve stopped by its time limit leaves it: the end reached, not proven
    assert result.verdict == "open" and not result.decided


def test_summary_by_default_and_per_topic_with_q(tmp_path):
    run_a, run_b, qrels = _tie_files(tmp_path)
    summary = _csv(_cli("compare", run_a, run_b, "--qrels", qrels, "-m", "P@10", "-m", "nDCG@10"))
    assert [r["topic"] for r in summary] == ["all", "all"]
    assert summary[0]["score_a"] == "0.1" and summary[0]["score_b"] == "0.1"
    assert summary[0]["judged_a"] == "1" and summary[0]["topics"] == "3"
    per_topic = _csv(_cli("compare", run_a, run_b, "--qrels", qrels, "-m", "P@10", "-q"))
    assert [r["topic"] for r in per_topic] == ["1", "2", "3", "all"]
    assert [r["direction"] for r in per_topic[:3]] == ["runB", "runA", "runA"]  # run names, not a/b


def _graded_files(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Topic 1 is judged up to grade 2; topic 2's judged sample holds only grade 1, and both runs have
    unjudged documents there; topic 9 is judged but retrieved by neither run; topic 5 is retrieved but
    not judged."""
    run_a = ["1 Q0 x1 1 9 A", "1 Q0 x2 2 8 A", "2 Q0 u1 1 9 A", "2 Q0 j1 2 8 A", "5 Q0 z 1 1 A"]
    run_b = ["1 Q0 x2 1 9 B", "1 Q0 x3 2 8 B", "2 Q0 j1 1 9 B", "2 Q0 u2 2 8 B", "5 Q0 z 1 1 B"]
    qrels = ["1 0 x1 2", "1 0 x2 0", "1 0 x3 1", "2 0 j1 1", "9 0 w 1"]
    paths = tmp_path / "a.run", tmp_path / "b.run", tmp_path / "q.txt"
    for path, lines in zip(paths, (run_a, run_b, qrels)):
        path.write_text("\n".join(lines) + "\n")
    return paths


def test_top_grade_is_the_whole_qrels_file(tmp_path):
    run_a, run_b, qrels = _graded_files(tmp_path)
    rows = medopt.compare(str(run_a), str(run_b), str(qrels), ["nDCG@2"], ranges=True).set_index("topic")
    whole = medopt.difference_range("nDCG@2", ["u1", "j1"], ["j1", "u2"], {"j1": 1}, max_grade=2)
    own = medopt.difference_range("nDCG@2", ["u1", "j1"], ["j1", "u2"], {"j1": 1}, max_grade=1)
    assert whole.high != own.high
    assert rows.loc["2", "high"] == pytest.approx(whole.high, abs=1e-12)
    old = medopt.compare(str(run_a), str(run_b), str(qrels), ["nDCG@2"], ranges=True, max_grade="per-topic")
    assert old.set_index("topic").loc["2", "high"] == pytest.approx(own.high, abs=1e-12)
    # the API with qrels of several topics: the ranking's topic picks its judgments, G is the file's
    a = pd.DataFrame({"query_id": ["2", "2"], "doc_id": ["u1", "j1"], "score": [2.0, 1.0]})
    b = pd.DataFrame({"query_id": ["2", "2"], "doc_id": ["j1", "u2"], "score": [2.0, 1.0]})
    assert medopt.difference_range("nDCG@2", a, b, Path(qrels)).high == pytest.approx(whole.high)
    assert medopt.difference_range("nDCG@2", a, b, Path(qrels), max_grade="per-topic").high == \
        pytest.approx(own.high)
    # the command: --max-grade per-topic keeps the old rule
    default = _csv(_cli("compare", run_a, run_b, "--qrels", qrels, "-m", "nDCG@2", "--range", "-q"))
    per_topic = _csv(_cli("compare", run_a, run_b, "--qrels", qrels, "-m", "nDCG@2", "--range", "-q",
                          "--max-grade", "per-topic"))
    assert float(default[1]["high"]) == pytest.approx(whole.high)
    assert float(per_topic[1]["high"]) == pytest.approx(own.high)


def test_topics_are_trec_evals(tmp_path):
    run_a, run_b, qrels = _graded_files(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rows = medopt.compare(str(run_a), str(run_b), str(qrels), ["P@2"])
    assert rows.topic.tolist() == ["1", "2", "all"]  # topic 5 (not judged) left out, 9 (not retrieved) too
    assert any("left out" in str(w.message) and "5" in str(w.message) for w in caught
               if issubclass(w.category, MedoptWarning))
    complete = medopt.compare(str(run_a), str(run_b), str(qrels), ["P@2"], complete=True)
    assert complete.topic.tolist() == ["1", "2", "9", "all"]
    nine = complete.set_index("topic").loc["9"]
    assert nine.score_a == 0 and nine.score_b == 0 and nine.med == 0
    chosen = medopt.compare(str(run_a), str(run_b), str(qrels), ["P@2"], topics=["2"])
    assert chosen.topic.tolist() == ["2", "all"]
    # the CLI: -c and --topics
    assert [r["topic"] for r in _csv(_cli("compare", run_a, run_b, "--qrels", qrels, "-m", "P@2", "-q", "-c"))] \
        == ["1", "2", "9", "all"]
    assert [r["topic"] for r in _csv(_cli("compare", run_a, run_b, "--qrels", qrels, "-m", "P@2", "-q",
                                          "--topics", "1"))] == ["1", "all"]
    # matrix agrees with compare on the topics and the means
    pairs = medopt.matrix([str(run_a), str(run_b)], str(qrels), ["P@2"], jobs=1, summary=True)
    summary = rows.set_index("topic").loc["all"]
    assert pairs.topics.tolist() == [2] and pairs.med.tolist() == [pytest.approx(summary.med)]
    assert pairs.score_a.tolist() == [pytest.approx(summary.score_a)]


def test_ir_measures_measure_mean_equals_compares(tmp_path):
    ir_measures = pytest.importorskip("ir_measures")
    run_a, run_b, qrels = _graded_files(tmp_path)
    measure = medopt.MED(str(run_b), "P@2")
    value = ir_measures.calc_aggregate([measure], list(ir_measures.read_trec_qrels(str(qrels))),
                                       list(ir_measures.read_trec_run(str(run_a))))[measure]
    summary = medopt.compare(str(run_a), str(run_b), str(qrels), ["P@2"]).set_index("topic").loc["all"]
    assert value == pytest.approx(summary.med)


@pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data absent: {DATA} (trec_eval's fixtures)")
def test_trec_eval_column_equals_trec_evals_output(tmp_path):
    """bounds' trec_eval column and compare's score_a are trec_eval's means, also when the qrels judge
    only some of the run's topics (trec_eval then averages over the judged ones)."""
    reference = {}
    for line in (DATA / "out.test.aq").read_text().splitlines():
        name, topic, value = line.split()
        if name == "P_10":
            reference[name, topic] = float(value)
    out = _csv(_cli("bounds", DATA / "results.test", "--qrels", DATA / "qrels.test", "-m", "P.10",
                    "--method", "closed-form"))
    (mean,) = [r for r in out if r["topic"] == "all"]
    assert float(mean["trec_eval"]) == pytest.approx(reference["P_10", "all"], abs=5e-5)
    some = tmp_path / "two.qrels"
    some.write_text("".join(line + "\n" for line in (DATA / "qrels.test").read_text().splitlines()
                            if line.split()[0] != "303"))
    out = _csv(_cli("bounds", DATA / "results.test", "--qrels", some, "-m", "P.10", "--method", "closed-form"))
    (mean,) = [r for r in out if r["topic"] == "all"]
    expected = (reference["P_10", "301"] + reference["P_10", "302"]) / 2
    assert float(mean["trec_eval"]) == pytest.approx(expected, abs=5e-5)
    frame = medopt.compare(str(DATA / "results.test"), str(DATA / "results.test"), str(some), ["P@10"],
                           per_topic=False)
    assert frame.score_a.tolist() == [pytest.approx(expected, abs=5e-5)]
    assert math.isclose(frame.judged_a.iloc[0], frame.judged_b.iloc[0])


DL_HARD = DATA.parent / "dl-hard"


@pytest.mark.skipif(not DL_HARD.is_dir(), reason=f"shared data absent: {DL_HARD} (DL-HARD runs and trec_eval outputs)")
def test_compare_scores_are_trec_evals_on_dl_hard():
    """compare's score_a and score_b are the means trec_eval printed for each DL-HARD run (its *.run.eval
    files were made with -l 2: relevant is grade 2 and above)."""
    runs = DL_HARD / "baselines" / "doc"
    first, second = runs / "bm25+bert-mp.run", runs / "bm25+electra-mp.run"
    frame = medopt.compare(str(first), str(second), str(DL_HARD / "dl_hard-doc.qrels"),
                           ["P(rel=2)@10", "nDCG@10"], per_topic=False).set_index("metric")
    for run, column in ((first, "score_a"), (second, "score_b")):
        reference = {}
        for line in Path(f"{run}.eval").read_text().splitlines():
            name, topic, value = line.split()
            if topic == "all" and name in ("P_10", "ndcg_cut_10"):
                reference[name] = float(value)
        assert frame.loc["P(rel=2)@10", column] == pytest.approx(reference["P_10"], abs=5e-5)
        assert frame.loc["nDCG@10", column] == pytest.approx(reference["ndcg_cut_10"], abs=5e-5)


def test_plots_from_runs_take_the_topics(tmp_path):
    """plot's run-based kinds follow SPEC 10 too: --topics keeps some, -c adds judged topics no run retrieved."""
    from medopt.plots.matrix import judged_fraction_points
    from medopt.plots.rbo import depth_points

    run_a, run_b, qrels = _graded_files(tmp_path)
    one = judged_fraction_points([run_a, run_b], qrels, "P@2", percents=(100,), topics=["1"])
    both = judged_fraction_points([run_a, run_b], qrels, "P@2", percents=(100,))
    every = judged_fraction_points([run_a, run_b], qrels, "P@2", percents=(100,), complete=True)
    by_topic = medopt.compare(str(run_a), str(run_b), str(qrels), ["P@2"], complete=True).set_index("topic")
    assert one[100][1].tolist() == [pytest.approx(by_topic.loc["1", "med"])]
    assert both[100][1].tolist() == [pytest.approx((by_topic.loc["1", "med"] + by_topic.loc["2", "med"]) / 2)]
    assert every[100][1].tolist() == [pytest.approx(by_topic.loc["all", "med"])]  # topic 9 counted, as -c
    assert list(depth_points([run_a, run_b], qrels, "P", (1, 2), topics=["2"])[2].values()) == [
        pytest.approx(by_topic.loc["2", "med"])]
    result = CliRunner().invoke(main, ["plot", "--kind", "depths", str(run_a), str(run_b), "--qrels", str(qrels),
                                       "--depths", "1,2,20", "--topics", "1,2", "-o", str(tmp_path / "d.png")])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(main, ["plot", "--kind", "heatmap", "--store", str(tmp_path / "x.sqlite"), "-c",
                                       "-o", str(tmp_path / "h.png")])
    assert result.exit_code == 2 and "store's topics" in result.output


def test_plots_from_runs_take_run_names(tmp_path):
    """NAME=PATH names the runs of the plots computed from runs, as in compare and matrix."""
    from medopt.plots.rbo import depth_points

    run_a, run_b, qrels = _graded_files(tmp_path)
    named = depth_points({"first": str(run_a), "second": str(run_b)}, qrels, "P", (1, 2))
    assert list(named[2]) == [("first", "second")]
    result = CliRunner().invoke(main, ["plot", "--kind", "depths", f"first={run_a}", str(run_b), "--qrels",
                                       str(qrels), "--depths", "1,2,20", "-o", str(tmp_path / "d.png")])
    assert result.exit_code == 0, result.output


def test_the_flip_plot_draws_each_pairs_distance(tmp_path):
    """plot --kind flip: one point per pair at (observed mean difference, F / N), from medopt.matrix's
    summary with the flip columns; "never" pairs at the top."""
    from medopt.plots.flips import plot_flips

    run_a, run_b, qrels = _tie_files(tmp_path)
    drawn = plot_flips([str(run_a), str(run_b)], str(qrels), "P@10", [tmp_path / "f.png"])
    (row,) = drawn
    direct = medopt.flip_distance("P@10", str(run_a), str(run_b), str(qrels))
    assert (row["flip_distance"], row["flip_documents"]) == (direct.distance, direct.documents)
    assert (tmp_path / "f.png").read_bytes().startswith(b"\x89PNG")
    result = CliRunner().invoke(main, ["plot", "--kind", "flip", str(run_a), "--qrels", str(qrels), "-m", "P@10",
                                       "-o", str(tmp_path / "g.png")])
    assert result.exit_code == 2 and "two or more RUNS" in result.output
