"""MED-U in ``medopt matrix`` and ``medopt.matrix`` (SPEC 8): passage runs, qrels and spans."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import medopt
from medopt.cli import main
from medopt.errors import MedoptError
from medopt.synthetic.generate import generate_passage_judgments, generate_passage_runs
from medopt.io.passages import write_passage_run, write_spans
from medopt.io.trec import write_qrels
from medopt.io.store import ResultStore

METRIC = "U(L=12000)"


@pytest.fixture
def passages(tmp_path):
    runs, documents = generate_passage_runs(3, 4, 12, seed=7)
    qrels, spans = generate_passage_judgments(runs, documents, seed=8)
    paths = []
    for name, run in runs.items():
        paths.append(tmp_path / f"{name}.run")
        write_passage_run(paths[-1], run, name)
    write_qrels(tmp_path / "qrels.txt", qrels)
    write_spans(tmp_path / "spans.txt", spans)
    return {"runs": runs, "qrels": qrels, "spans": spans, "paths": paths, "dir": tmp_path}


def _matrix(data, store, *extra, spans="spans.txt"):
    args = ["matrix", *map(str, data["paths"]), "--qrels", str(data["dir"] / "qrels.txt"),
            "--spans", str(data["dir"] / spans), "-m", METRIC, "--store", str(store), "-j", "1",
            "--no-progress", *extra]
    return CliRunner().invoke(main, args)


def _rows(store):
    with ResultStore(store, write=False) as results:
        return list(results.rows())


def _expected_pairs(data):
    names = list(data["runs"])
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            for topic in sorted(set(data["runs"][a]) & set(data["runs"][b])):
                yield a, b, topic


def _ask(data, a, b, topic, ask):
    return ask(METRIC, data["runs"][a][topic], data["runs"][b][topic], data["qrels"].get(topic, {}),
               spans=data["spans"].get(topic, {}))


def test_rows_equal_med(passages):
    store = passages["dir"] / "u.sqlite"
    result = _matrix(passages, store)
    assert result.exit_code == 0, result.output
    rows = {(r["run_a"], r["run_b"], r["topic"]): r for r in _rows(store)}
    expected = list(_expected_pairs(passages))
    assert len(rows) == len(expected) > 0
    for a, b, topic in expected:
        row, med = rows[(a, b, topic)], _ask(passages, a, b, topic, medopt.med)
        assert row["metric"] == METRIC and row["method"] == "closed-form"
        assert row["value"] == pytest.approx(med.value, abs=1e-9)
        assert row["direction"] == med.direction and bool(row["certified"])
        assigned = json.loads(row["assignment"])
        assert all(isinstance(span, list) and len(span) == 2 for spans in assigned.values() for span in spans)
        assert row["low"] is None
    with ResultStore(store, write=False) as results:
        assert results.settings()["spans_sha256"] != "none"


def test_range_stores_both_ends(passages):
    store = passages["dir"] / "r.sqlite"
    result = _matrix(passages, store, "--range")
    assert result.exit_code == 0, result.output
    rows = {(r["run_a"], r["run_b"], r["topic"]): r for r in _rows(store)}
    for a, b, topic in _expected_pairs(passages):
        row, ends = rows[(a, b, topic)], _ask(passages, a, b, topic, medopt.difference_range)
        assert row["low"] == pytest.approx(ends.low, abs=1e-9)
        assert row["high"] == pytest.approx(ends.high, abs=1e-9)
        assert row["value"] == pytest.approx(max(ends.high, -ends.low), abs=1e-9)
        assert bool(row["low_certified"]) and bool(row["high_certified"])
        json.loads(row["low_assignment"]), json.loads(row["high_assignment"])


def test_resume_computes_nothing_and_other_spans_refused(passages):
    store = passages["dir"] / "s.sqlite"
    assert _matrix(passages, store).exit_code == 0
    count = len(_rows(store))
    again = _matrix(passages, store, "--resume")
    assert again.exit_code == 0, again.output
    assert "0 MED(s) computed" in again.output and f"{count} already stored" in again.output
    other = dict(passages["spans"])
    topic = next(t for t in passages["qrels"] if passages["qrels"][t])
    doc = next(iter(passages["qrels"][topic]))
    other[topic] = {**other.get(topic, {}), doc: [(0, 3)]}
    write_spans(passages["dir"] / "other.txt", other)
    refused = _matrix(passages, store, "--resume", spans="other.txt")
    assert refused.exit_code == 2
    lines = refused.output.strip().splitlines()
    assert len(lines) == 1 and "other.txt: not the bytes of" in lines[0] and "(the spans)" in lines[0]
    assert len(_rows(store)) == count


def test_malformed_passage_line_leaves_no_store(passages):
    bad = passages["paths"][1]
    lines = bad.read_text().splitlines()
    lines[2] = " ".join(lines[2].split()[:7])  # 7 columns
    bad.write_text("\n".join(lines) + "\n")
    store = passages["dir"] / "bad.sqlite"
    result = _matrix(passages, store)
    assert result.exit_code == 2
    message = result.output.strip().splitlines()
    assert len(message) == 1 and f"{bad}:3:" in message[0] and "8 columns" in message[0]
    assert not store.exists()


def test_mixed_metrics_refused(passages):
    result = CliRunner().invoke(main, ["matrix", *map(str, passages["paths"]), "--qrels",
                                       str(passages["dir"] / "qrels.txt"), "--spans", str(passages["dir"] / "spans.txt"),
                                       "-m", METRIC, "-m", "P@10", "--store", str(passages["dir"] / "m.sqlite")])
    assert result.exit_code == 2 and "alone" in result.output
    assert not (passages["dir"] / "m.sqlite").exists()


def test_api_matrix(passages):
    frame = medopt.matrix(passages["runs"], passages["qrels"], [METRIC], spans=passages["spans"], jobs=1)
    assert len(frame) == len(list(_expected_pairs(passages)))
    for row in frame.to_dict("records"):
        med = _ask(passages, row["run_a"], row["run_b"], row["topic"], medopt.med)
        assert row["value"] == pytest.approx(med.value, abs=1e-9)
    files = medopt.matrix([str(p) for p in passages["paths"]], str(passages["dir"] / "qrels.txt"), [METRIC],
                          spans=str(passages["dir"] / "spans.txt"), jobs=1)
    assert list(files["value"]) == pytest.approx(list(frame["value"]))
    with pytest.raises(MedoptError):
        medopt.matrix(passages["runs"], passages["qrels"], [METRIC], spans=passages["spans"], pad="zeros", jobs=1)
