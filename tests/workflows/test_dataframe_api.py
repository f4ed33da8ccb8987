"""medopt.compare and medopt.matrix return DataFrames: the command's rows (one implementation), and the rows
of a matrix job."""

import csv
import io
import warnings
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import medopt
from medopt.batch import Settings, run_matrix
from medopt.cli import main
from medopt.errors import MedoptError, MedoptWarning
from medopt.io.trec import read_qrels, read_run
from medopt.io.store import ResultStore

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RUNS = [EXAMPLES / f"run.run{i}.txt" for i in range(3)]
QRELS = EXAMPLES / "qrels.txt"


def cli_rows(*args):
    result = CliRunner().invoke(main, ["compare", *map(str, args)])
    assert result.exit_code == 0, result.output
    return list(csv.DictReader(io.StringIO(result.output)))


@pytest.mark.parametrize("ranges", [False, True])
def test_compare_frame_is_the_command_rows(ranges):
    metrics = ["P@5", "AP@5"]
    frame = medopt.compare(RUNS[0], RUNS[1], QRELS, metrics, ranges=ranges)
    rows = cli_rows(RUNS[0], RUNS[1], "--qrels", QRELS, *[x for m in metrics for x in ("-m", m)],
                    *(["--range"] if ranges else []), "-q")
    assert list(frame.columns) == list(rows[0])
    summary = medopt.compare(RUNS[0], RUNS[1], QRELS, metrics, ranges=ranges, per_topic=False)
    assert summary.to_dict("records") == frame[frame.topic == "all"].to_dict("records") or \
        summary.drop(columns="seconds").equals(frame[frame.topic == "all"].drop(columns="seconds").reset_index(drop=True))
    assert len(frame) == len(rows) == 2 * 10 + 2
    for (_, mine), theirs in zip(frame.iterrows(), rows):
        for column in frame.columns:
            if column == "seconds":
                continue
            value = mine[column]
            if isinstance(value, float):
                assert value == pytest.approx(float(theirs[column]), abs=1e-9)
            elif isinstance(value, (bool, type(frame["certified"].iloc[0]))):
                assert ("true" if value else "false") == theirs[column]
            else:
                assert str(value) == theirs[column]
    means = frame[frame.topic == "all"].set_index("metric")["med"]
    topics = frame[frame.topic != "all"]
    assert means["AP@5"] == pytest.approx(topics[topics.metric == "AP@5"]["med"].mean())
    assert frame["certified"].dtype == bool and frame["med"].dtype == float
    if ranges:
        assert set(frame["verdict"]) <= {"decided", "can flip"}


def test_compare_warns_of_topics_in_one_run_and_takes_one_metric():
    a = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["x", "y", "x"], "score": [2.0, 1.0, 1.0]})
    b = {"1": {"y": 1.0, "z": 0.5}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = medopt.compare(a, b, None, "P@2")
    assert any("1 topic(s) only in run_a, skipped: 2" in str(w.message) and w.category is MedoptWarning
               for w in caught)
    assert list(frame["topic"]) == ["1", "all"] and list(frame["run_a"]) == ["run_a", "run_a"]
    assert frame["med"].iloc[0] == medopt.med("P@2", ["x", "y"], ["y", "z"]).value
    with pytest.raises(MedoptError, match="give at least one metric"):
        medopt.compare(a, b, None, [])
    with pytest.raises(MedoptError, match="no topic in common"):
        medopt.compare(a, {"9": {"q": 1.0}}, None, "P@2")


def stored_rows(path):
    with ResultStore(path) as store:
        return {(r["run_a"], r["run_b"], r["topic"], r["metric"]): r for r in store.rows()}


@pytest.mark.parametrize("ranges", [False, True])
def test_matrix_frame_holds_the_rows_of_a_matrix_job(ranges, tmp_path):
    metrics = ["P@5", "nDCG@5", "AP@3"]
    run_matrix([str(p) for p in RUNS], metrics, qrels=str(QRELS), store=tmp_path / "s.sqlite", jobs=1,
               progress=False, settings=Settings(ranges=ranges))
    job = stored_rows(tmp_path / "s.sqlite")
    frame = medopt.matrix(RUNS, QRELS, metrics, ranges=ranges, jobs=1)
    assert len(frame) == len(job) == 3 * 10 * 3
    assert ("low" in frame.columns) is ranges and "assignment" in frame.columns
    assert list(frame[["run_a", "run_b"]].drop_duplicates().itertuples(index=False, name=None)) == [
        ("run0", "run1"), ("run0", "run2"), ("run1", "run2")]
    for row in frame.itertuples(index=False):
        other = job[row.run_a, row.run_b, row.topic, row.metric]
        assert (row.value, row.certified, row.method, row.assignment) == pytest.approx(
            (other["value"], other["certified"], other["method"], other["assignment"]))
        if ranges:
            assert (row.low, row.high) == pytest.approx((other["low"], other["high"]))


def test_matrix_takes_a_dict_of_runs_in_any_form():
    frames = {name: pd.DataFrame([(t, d, float(-i)) for t, docs in read_run(p).rankings.items()
                                  for i, d in enumerate(docs)], columns=["query_id", "doc_id", "score"])
              for name, p in zip(("A", "B", "C"), RUNS)}
    runs = {"A": frames["A"], "B": RUNS[1], "C": read_run(RUNS[2]).rankings}  # a frame, a file, a dict of lists
    qrels = pd.DataFrame([(t, d, g) for t, judged in read_qrels(QRELS).items() for d, g in judged.items()],
                         columns=["qid", "docno", "label"])
    frame = medopt.matrix(runs, qrels, ["P@5", "AP@3"], jobs=1)
    files = medopt.matrix(RUNS, QRELS, ["P@5", "AP@3"], jobs=1)
    assert set(frame["run_a"]) | set(frame["run_b"]) == {"A", "B", "C"}
    pd.testing.assert_series_equal(frame["value"], files["value"])
    pd.testing.assert_series_equal(frame["topic"], files["topic"])
    with pytest.raises(MedoptError, match="at least two runs"):
        medopt.matrix({"A": frames["A"]}, None, "P@5", jobs=1)


def test_matrix_judged_topics_and_one_sided_topics():
    a = {"1": ["x", "y"], "2": ["x"], "3": ["z"]}
    b = {"1": ["y", "x"], "2": ["y"]}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = medopt.matrix({"a": a, "b": b}, {"1": {"x": 1}}, ["P@2"], jobs=1)
    assert list(frame["topic"]) == ["1"]  # SPEC 10: topic 2 is not judged, topic 3 in one run only
    messages = " | ".join(str(w.message) for w in caught)
    assert "1 (pair, topic) combination(s) skipped" in messages and "1 of 2 run topic(s) left out" in messages
