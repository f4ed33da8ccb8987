"""Runs and qrels as Python objects (DataFrames in ir_measures, PyTerrier and ranx columns, ir_measures dicts
and namedtuples, ranx objects) give what the TREC files give, through medopt.compare and medopt.med; malformed
objects end in one-line errors naming the row and the column."""

from pathlib import Path

import ir_measures
import pandas as pd
import pytest

import medopt
from medopt.errors import InputFrameError, MedoptError
from medopt.io.frames import as_qrels, as_run
from medopt.io.trec import read_qrels, read_run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RUN_A, RUN_B, QRELS = (EXAMPLES / name for name in ("run.run0.txt", "run.run2.txt", "qrels.txt"))
METRICS = ["P@5", "nDCG@10", "AP@5"]
VALUES = ["topic", "metric", "med", "direction", "certified", "upper_bound", "method"]


def ir_measures_run(path):
    return pd.DataFrame(list(ir_measures.read_trec_run(str(path))))


def ir_measures_qrels(path):
    return pd.DataFrame(list(ir_measures.read_trec_qrels(str(path))))


def as_dict(path, qrels=False):
    read = ir_measures.read_trec_qrels if qrels else ir_measures.read_trec_run
    return ir_measures.util.QrelsConverter(list(read(str(path)))).as_dict_of_dict() if qrels else \
        ir_measures.util.RunConverter(list(read(str(path)))).as_dict_of_dict()


def shuffled(frame):
    return frame.sample(frac=1.0, random_state=7)  # row order must not matter


FORMS = {
    "ir_measures frame": (lambda p: shuffled(ir_measures_run(p)), ir_measures_qrels),
    "PyTerrier frame": (lambda p: shuffled(ir_measures_run(p).rename(columns={"query_id": "qid", "doc_id": "docno"})
                                           .assign(rank=lambda f: f.groupby("qid").cumcount())),
                        lambda p: ir_measures_qrels(p).rename(columns={"query_id": "qid", "doc_id": "docno",
                                                                       "relevance": "label"})),
    "ranx frame": (lambda p: shuffled(ir_measures_run(p).rename(columns={"query_id": "q_id"})),
                   lambda p: ir_measures_qrels(p).rename(columns={"query_id": "q_id", "relevance": "score"})
                   .drop(columns="iteration")),
    "ir_measures dict": (as_dict, lambda p: as_dict(p, qrels=True)),
    "namedtuples": (lambda p: ir_measures.read_trec_run(str(p)), lambda p: ir_measures.read_trec_qrels(str(p))),
    "medopt Run and qrels dict": (read_run, read_qrels),
}


@pytest.fixture(scope="module")
def reference():
    return medopt.compare(RUN_A, RUN_B, QRELS, METRICS)


@pytest.mark.parametrize("form", FORMS)
def test_each_form_compares_as_the_trec_files(form, reference):
    make_run, make_qrels = FORMS[form]
    frame = medopt.compare(make_run(RUN_A), make_run(RUN_B), make_qrels(QRELS), METRICS, names=("run0", "run2"))
    pd.testing.assert_frame_equal(frame[VALUES], reference[VALUES])
    assert set(frame["run_a"]) == {"run0"}


def test_ranx_objects_compare_as_the_trec_files(reference):
    ranx = pytest.importorskip("ranx")
    runs = [ranx.Run(as_dict(p), name=n) for p, n in ((RUN_A, "run0"), (RUN_B, "run2"))]
    qrels = ranx.Qrels(as_dict(QRELS, qrels=True))
    frame = medopt.compare(*runs, qrels, METRICS)
    pd.testing.assert_frame_equal(frame[VALUES], reference[VALUES])
    assert frame["run_a"].iloc[0] == "run0"  # the ranx run's name
    assert as_run(runs[0]).rankings == read_run(RUN_A).rankings
    assert as_qrels(qrels) == read_qrels(QRELS)


@pytest.mark.parametrize("form", ["ir_measures frame", "PyTerrier frame", "ir_measures dict"])
def test_med_takes_one_topic_in_each_form(form):
    make_run, make_qrels = FORMS[form]
    a, b, qrels = make_run(RUN_A), make_run(RUN_B), make_qrels(QRELS)
    files_a, files_b, judged = read_run(RUN_A), read_run(RUN_B), read_qrels(QRELS)
    for topic in ("401", "405"):
        if isinstance(a, dict):
            one_a, one_b = a[topic], {topic: b[topic]}  # {doc: score}, and a run of one topic
        else:
            column = "qid" if "qid" in a else "query_id"
            one_a, one_b = a[a[column] == topic], b[b[column] == topic]
        for metric in ("AP@5", "nDCG@10"):
            expected = medopt.med(metric, files_a.rankings[topic], files_b.rankings[topic], judged[topic])
            # multi-topic qrels: the rankings' topic picks the judgments (a {doc: score} names none: b does)
            got = medopt.med(metric, one_a, one_b, qrels)
            assert (got.value, got.direction, got.assignment) == (expected.value, expected.direction,
                                                                  expected.assignment)
        lows = medopt.difference_range("P@5", one_a, one_b, qrels), medopt.difference_range(
            "P@5", files_a.rankings[topic], files_b.rankings[topic], judged[topic])
        assert (lows[0].low, lows[0].high) == (lows[1].low, lows[1].high)


def test_med_refuses_several_topics_and_a_bare_string():
    with pytest.raises(MedoptError, match="holds 10 topics; medopt.med compares one topic"):
        medopt.med("P@5", ir_measures_run(RUN_A), ["x"])
    with pytest.raises(MedoptError, match="pathlib.Path"):
        medopt.med("P@5", "run.txt", ["x"])
    with pytest.raises(MedoptError, match="judgments hold 10 topics and the rankings name none"):
        medopt.med("P@5", ["a"], ["b"], read_qrels(QRELS))


TIES = "1 Q0 d1 1 5 r\n1 Q0 d3 2 5 r\n1 Q0 d2 3 7 r\n2 Q0 b 1 1 r\n2 Q0 a 2 1 r\n2 Q0 c 3 0 r\n"


def test_trec_eval_order_and_honour_rank_from_frames(tmp_path):
    path = tmp_path / "ties.run"
    path.write_text(TIES)
    rows = [line.split() for line in TIES.splitlines()]
    frame = pd.DataFrame({"qid": [r[0] for r in rows], "docno": [r[2] for r in rows],
                          "rank": [int(r[3]) for r in rows], "score": [float(r[4]) for r in rows]})
    assert as_run(frame).rankings == read_run(path).rankings == {"1": ("d2", "d3", "d1"), "2": ("b", "a", "c")}
    assert as_run(frame, honour_rank=True).rankings == read_run(path, honour_rank=True).rankings == {
        "1": ("d1", "d3", "d2"), "2": ("b", "a", "c")}
    scores = {"1": {"d1": 5, "d3": 5, "d2": 7}}
    assert as_run(scores).rankings == {"1": ("d2", "d3", "d1")}
    assert as_run({"1": ["d1", "d3"]}).rankings == {"1": ("d1", "d3")}  # a list is a ranking, best first
    with pytest.raises(InputFrameError, match="column 'rank': missing"):
        as_run(frame.drop(columns="rank"), honour_rank=True)


BAD_RUNS = [
    (pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, "high"]}),
     "run_a (DataFrame): row 1, column 'score': 'high' is not a finite number"),
    (pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, float("inf")]}),
     "row 1, column 'score': inf is not a finite number"),
    (pd.DataFrame({"query_id": ["1", None], "doc_id": ["a", "b"], "score": [1.0, 2.0]}),
     "row 1, column 'query_id': missing value"),
    (pd.DataFrame({"q_id": ["1", "1", "1"], "doc_id": ["a", "b", "a"], "score": [3.0, 2.0, 1.0]}),
     "row 2, column 'doc_id': duplicate document 'a' in topic '1' (first in row 0)"),
    (pd.DataFrame({"qid": ["1"], "doc": ["a"], "score": [1.0]}), "column 'docno': missing: PyTerrier runs have"),
    (pd.DataFrame({"topic": ["1"], "doc": ["a"]}), "no topic column: runs have the columns of ir_measures"),
    (pd.DataFrame({"qid": ["1", "1"], "docno": ["a", ""], "score": [1.0, 2.0]}, index=[10, 11]),
     "row 1 (index 11), column 'docno': empty string"),
    (pd.DataFrame({"qid": [], "docno": [], "score": []}), "run_a (DataFrame): empty run"),
    ({"1": {"a": 1.0, "b": "x"}}, "run_a (dict): topic '1', document 'b': score 'x' is not a finite number"),
    ([ir_measures.ScoredDoc("1", "a", 1.0), ("1", "b")], "run_a (list): item 1: expected 3 fields"),
    ([ir_measures.ScoredDoc("1", "a", 1.0), ir_measures.ScoredDoc("1", "b", float("nan"))],
     "run_a (list): item 1, column 'score': nan is not a finite number"),
]


@pytest.mark.parametrize("bad, message", BAD_RUNS)
def test_malformed_runs_end_in_one_line_naming_row_and_column(bad, message):
    with pytest.raises(MedoptError) as caught:
        medopt.compare(bad, read_run(RUN_B), None, ["P@5"])
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


BAD_QRELS = [
    (pd.DataFrame({"qid": ["401", "401"], "docno": ["a", "a"], "label": [1, 2]}),
     "qrels (DataFrame): row 1, column 'label': topic '401' document 'a' has grade 2 here but 1 in row 0"),
    (pd.DataFrame({"query_id": ["401"], "doc_id": ["a"], "relevance": [1.5]}),
     "row 0, column 'relevance': 1.5 is not an integer"),
    (pd.DataFrame({"query_id": ["401"], "doc_id": ["a"], "score": [1]}), "column 'relevance': missing"),
    ({"401": {"a": 1.5}}, "qrels (dict): topic '401', document 'a': grade 1.5 is not an integer"),
    ({"401": [1, 2]}, "qrels (dict): topic '401': expected {doc_id: grade}, got list"),
]


@pytest.mark.parametrize("bad, message", BAD_QRELS)
def test_malformed_qrels_end_in_one_line(bad, message):
    with pytest.raises(InputFrameError) as caught:
        medopt.compare(RUN_A, RUN_B, bad, ["P@5"])
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_frame_errors_pickle_with_their_fields():
    import pickle

    with pytest.raises(InputFrameError) as caught:
        as_run(BAD_RUNS[0][0], "run_a")
    again = pickle.loads(pickle.dumps(caught.value))
    assert (str(again), again.line, again.column) == (str(caught.value), 1, "score")


def test_integer_ids_and_equal_duplicate_judgments():
    frame = pd.DataFrame({"query_id": [1, 1, 2], "doc_id": [10, 11, 10], "score": [2, 1, 1]})
    assert as_run(frame).rankings == {"1": ("10", "11"), "2": ("10",)}
    qrels = pd.DataFrame({"qid": [1.0, 1.0], "docno": ["10", "10"], "label": [2, 2]})  # judged twice, same grade
    assert as_qrels(qrels) == {"1": {"10": 2}}
    assert as_qrels(None) == {} and as_qrels(pd.DataFrame({"qid": [], "docno": [], "label": []})) == {}
