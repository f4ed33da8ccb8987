"""medopt.MED and medopt.MEDRange as ir_measures measures, computed by ir_measures itself (calc_aggregate,
iter_calc, evaluator) and by PyTerrier's pt.Experiment where PyTerrier is installed."""

from pathlib import Path

import ir_measures
import pandas as pd
import math

import pytest

import medopt
from medopt.io.trec import read_qrels, read_run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RUN, OTHER, QRELS = (EXAMPLES / name for name in ("run.run0.txt", "run.run3.txt", "qrels.txt"))


@pytest.fixture(scope="module")
def inputs():
    return list(ir_measures.read_trec_qrels(str(QRELS))), list(ir_measures.read_trec_run(str(RUN)))


@pytest.fixture(scope="module")
def compared():
    frame = medopt.compare(RUN, OTHER, QRELS, ["AP@5", "nDCG@10"], ranges=True)
    return frame.set_index(["metric", "topic"])


def test_calc_aggregate_gives_the_mean_med(inputs, compared):
    qrels, run = inputs
    med_ap, med_ndcg = medopt.MED(OTHER, "AP@5"), medopt.MED(OTHER, "ndcg_cut.10")
    result = ir_measures.calc_aggregate([med_ap, med_ndcg, ir_measures.P @ 5], qrels, run)
    assert str(med_ap) == "MED(AP@5,vs=run3)" and str(med_ndcg) == "MED(nDCG@10,vs=run3)"
    assert result[med_ap] == pytest.approx(compared.loc[("AP@5", "all"), "med"], abs=1e-12)
    assert result[med_ndcg] == pytest.approx(compared.loc[("nDCG@10", "all"), "med"], abs=1e-12)
    assert result[ir_measures.P @ 5] > 0  # beside ir_measures' own measures


def test_iter_calc_gives_each_query(inputs, compared):
    qrels, run = inputs
    measure = medopt.MED(OTHER, "AP@5")
    values = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}
    assert set(values) == set(read_qrels(QRELS))
    for topic, value in values.items():
        assert value == pytest.approx(compared.loc[("AP@5", topic), "med"], abs=1e-12)
    # the measure's own helpers, the run as a DataFrame (ir_measures takes its own columns), the other as a dict
    frame = pd.DataFrame(run)
    other = {t: {d: float(-i) for i, d in enumerate(docs)} for t, docs in read_run(OTHER).rankings.items()}
    again = medopt.MED(other, "AP@5", name="other")
    assert str(again) == "MED(AP@5,vs=other)"
    assert again.calc_aggregate(qrels, frame) == pytest.approx(compared.loc[("AP@5", "all"), "med"], abs=1e-12)


def test_med_range_gives_both_ends_and_the_mean_range(inputs, compared):
    qrels, run = inputs
    low, high = medopt.MEDRange(OTHER, "AP@5")
    assert (str(low), str(high)) == ("MEDlow(AP@5,vs=run3)", "MEDhigh(AP@5,vs=run3)")
    evaluator = ir_measures.evaluator([low, high], qrels)
    result = evaluator.calc_aggregate(run)
    assert result[low] == pytest.approx(compared.loc[("AP@5", "all"), "low"], abs=1e-12)
    assert result[high] == pytest.approx(compared.loc[("AP@5", "all"), "high"], abs=1e-12)
    for metric in ir_measures.iter_calc([low, high], qrels, run):
        column = "low" if metric.measure == low else "high"
        assert metric.value == pytest.approx(compared.loc[("AP@5", metric.query_id), column], abs=1e-12)


def test_queries_are_compares_and_complete_counts_every_judged_one():
    """SPEC 10: a value for the judged queries both runs retrieved (q1); the others are NaN and left out
    of the mean, as compare leaves them out; complete=True (-c) counts every judged query."""
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}, "q3": {"e": 1}}
    run = {"q1": {"a": 2.0, "x": 1.0}, "q2": {"c": 1.0, "d": 0.5}, "q9": {"a": 1.0}}
    other = {"q1": {"x": 2.0, "a": 1.0}}
    measure = medopt.MED(other, "P@2")
    values = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}
    q1 = medopt.med("P@2", ["a", "x"], ["x", "a"], qrels["q1"]).value
    assert values["q1"] == q1 and set(values) == {"q1", "q2", "q3"}
    assert math.isnan(values["q2"]) and math.isnan(values["q3"])  # one run or neither retrieved them
    assert ir_measures.calc_aggregate([measure], qrels, run)[measure] == q1
    complete = medopt.MED(other, "P@2", complete=True)
    values = {m.query_id: m.value for m in ir_measures.iter_calc([complete], qrels, run)}
    assert values == {"q1": q1, "q2": medopt.med("P@2", ["c", "d"], [], qrels["q2"]).value, "q3": 0.0}
    assert values["q2"] == 1.0  # q9 is not judged: never counted


def test_measures_against_different_runs_are_different_measures():
    first, second = medopt.MED({"q": {"a": 1.0}}, "P@5"), medopt.MED({"q": {"b": 1.0}}, "P@5")
    assert first != second and len({first, second, medopt.MED({"q": {"a": 1.0}}, "P@5")}) == 2


def test_pyterrier_experiment():
    pt = pytest.importorskip("pyterrier")
    results = [pt.io.read_results(str(path)) for path in (RUN, OTHER)]
    qrels = pt.io.read_qrels(str(QRELS))
    topics = pd.DataFrame({"qid": sorted(results[0]["qid"].unique()), "query": "unused"})
    measure = medopt.MED(results[1], "AP@5", name="run3")
    table = pt.Experiment([pt.Transformer.from_df(r) for r in results], topics, qrels,
                          eval_metrics=[measure, "P.5"], names=["run0", "run3"])
    expected = medopt.compare(RUN, OTHER, QRELS, ["AP@5"]).set_index("topic").loc["all", "med"]
    assert list(table[str(measure)]) == pytest.approx([expected, 0.0], abs=1e-12)
