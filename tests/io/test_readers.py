"""TREC run / qrels readers and writers (SPEC.md section 6) and the run generator."""

from __future__ import annotations

import gzip
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from medopt.errors import InputFormatError, MedoptError
from medopt.synthetic.generate import generate_qrels, generate_runs, write_example
from medopt.io.trec import Run, pair_topics, read_qrels, read_run, write_qrels, write_run
from conftest import SHARED_DATA

DATA = SHARED_DATA


def shared(*parts: str) -> Path:
    path = DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data absent: {path}")
    return path


def write(tmp_path: Path, text: str | bytes, name: str = "run.txt") -> Path:
    path = tmp_path / name
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


def error_of(reader, path: Path) -> InputFormatError:
    with pytest.raises(InputFormatError) as info:
        reader(path)
    assert str(path) in str(info.value)
    return info.value


# --------------------------------------------------------------------------- runs: errors

GOOD = "1 Q0 d1 1 3.0 r\n1 Q0 d2 2 2.0 r\n"


@pytest.mark.parametrize(
    "bad_line, fragment",
    [
        ("1 Q0 d3 3 1.0", "expected 6 columns (topic Q0 docid rank score runid), found 5"),
        ("1 Q0 d3 3 1.0 r extra", "expected 6 columns (topic Q0 docid rank score runid), found 7"),
        ("1 Q0 d3 3 high r", "score 'high'"),
        ("1 Q0 d3 3 nan r", "score 'nan'"),
        ("1 Q0 d3 3 inf r", "score 'inf'"),
        ("1 Q0 d3 3 1e999 r", "score '1e999' is not a finite number"),
        ("1 Q0 d3 3.5 1.0 r", "rank '3.5' is not an integer"),
        ("1 Q0 d3 x 1.0 r", "rank 'x'"),
    ],
)
def test_run_malformed_line(tmp_path, bad_line, fragment):
    error = error_of(read_run, write(tmp_path, GOOD + "\n" + bad_line + "\n"))
    assert error.line == 4  # the blank line still counts
    assert f"run.txt:4: {fragment}" in str(error)


def test_run_duplicate_docid_names_both_lines(tmp_path):
    error = error_of(read_run, write(tmp_path, GOOD + "2 Q0 d1 1 1 r\n1 Q0 d1 3 1.0 r\n"))
    assert error.line == 4
    assert "'d1'" in str(error) and "line 1" in str(error) and ":4:" in str(error)


def test_same_docid_in_two_topics_is_fine(tmp_path):
    run = read_run(write(tmp_path, GOOD + "2 Q0 d1 1 1 r\n"))
    assert run.rankings == {"1": ("d1", "d2"), "2": ("d1",)}


@pytest.mark.parametrize("text", ["", "\n  \n\t\n"])
def test_empty_run_is_an_error(tmp_path, text):
    assert "empty" in str(error_of(read_run, write(tmp_path, text)))


def test_missing_file(tmp_path):
    for reader in (read_run, read_qrels):
        error = error_of(reader, tmp_path / "nope.txt")
        assert error.line is None and str(error).endswith("no such file")


@pytest.mark.parametrize("reader, good", [(read_run, GOOD), (read_qrels, "1 0 a 1\n1 0 b 0\n")])
def test_non_utf8_bytes(tmp_path, reader, good):
    error = error_of(reader, write(tmp_path, good.encode() + b"\n1 Q0 d\xff\xfe 3 1.0 r\n"))
    assert error.line == 4 and "UTF-8" in str(error)


def test_corrupt_gzip(tmp_path):
    data = gzip.compress(GOOD.encode() * 50)
    error = error_of(read_run, write(tmp_path, data[: len(data) // 2], "run.gz"))
    assert "gzip" in str(error)


def test_directory_is_an_error(tmp_path):
    assert "directory" in str(error_of(read_run, tmp_path))


# --------------------------------------------------------------------------- runs: ordering


def test_trec_eval_order_ties_by_docid_descending(tmp_path):
    text = "\n".join([
        "7 Q0 b 1 1.0 r", "7 Q0 a 2 2.0 r", "7 Q0 c 3 1.0 r",
        "7 Q0 d10 4 1.0 r", "7 Q0 d9 5 1.0 r", "7 Q0 z 6 0.5 r",
    ])
    run = read_run(write(tmp_path, text))
    assert run.rankings["7"] == ("a", "d9", "d10", "c", "b", "z")
    assert run.name == "r" and run.path.endswith("run.txt")


def test_scores_compared_as_numbers_and_tabs_spaces(tmp_path):
    text = "1\tQ0\tx 1   10 r\n1  Q0 y\t2 9.5 r\n1 Q0 w 3 -1e1 r\n1 Q0 v 4 +2 r\r\n"
    assert read_run(write(tmp_path, text)).rankings["1"] == ("x", "y", "v", "w")


def test_honour_rank(tmp_path):
    text = "1 Q0 a 3 9 r\n1 Q0 b 1 1 r\n1 Q0 c 2 5 r\n1 Q0 d 2 5 r\n1 Q0 e 2 6 r\n"
    path = write(tmp_path, text)
    assert read_run(path).rankings["1"] == ("a", "e", "d", "c", "b")
    assert read_run(path, honour_rank=True).rankings["1"] == ("b", "e", "d", "c", "a")


def test_name_falls_back_to_stem_when_runids_differ(tmp_path):
    path = write(tmp_path, "1 Q0 a 1 1 x\n1 Q0 b 2 0 y\n", "mine.run.gz")
    path.write_bytes(gzip.compress(path.read_bytes()))
    assert read_run(path).name == "mine"


def test_gzip_round_trip(tmp_path):
    rankings = {"2": ["b", "a"], "10": ["x"]}
    write_run(tmp_path / "r.txt.gz", rankings, "gz")
    assert gzip.decompress((tmp_path / "r.txt.gz").read_bytes()).startswith(b"2 Q0 b 1 2 gz")
    run = read_run(tmp_path / "r.txt.gz")
    assert run == Run("gz", str(tmp_path / "r.txt.gz"), {"2": ("b", "a"), "10": ("x",)})
    qrels = {"2": {"b": 1, "a": -1}, "10": {"q": 0}}
    write_qrels(tmp_path / "q.gz", qrels)
    assert read_qrels(tmp_path / "q.gz") == qrels


def test_pair_topics_reports_one_sided_topics(tmp_path):
    a = Run("a", "a", {"10": ("x",), "9": ("x",), "2": ("x",), "5": ("x",)})
    b = Run("b", "b", {"10": ("y",), "2": ("y",), "30": ("y",)})
    report = pair_topics(a, b)
    assert report.common == ["2", "10"] and report.only_a == ["5", "9"] and report.only_b == ["30"]
    mixed = pair_topics(Run("a", "a", {"b": (), "10": (), "9": ()}), Run("b", "b", {}))
    assert mixed.only_a == ["10", "9", "b"] and mixed.common == [] and mixed.only_b == []


# --------------------------------------------------------------------------- qrels


def test_qrels_comments_blank_lines_negative_grades(tmp_path):
    text = "# a comment\n\n1 0 a 2\n  # indented comment\n1 0 b -1\n2 Q0 a 0\n1 0 a 2\n"
    assert read_qrels(write(tmp_path, text)) == {"1": {"a": 2, "b": -1}, "2": {"a": 0}}


def test_qrels_conflicting_duplicate_names_both_lines(tmp_path):
    error = error_of(read_qrels, write(tmp_path, "1 0 a 2\n1 0 b 0\n1 0 a 1\n"))
    assert error.line == 3 and "line 1" in str(error) and "'a'" in str(error)


@pytest.mark.parametrize(
    "bad_line, fragment",
    [
        ("1 0 c 1.5", "grade '1.5' is not an integer"),
        ("1 0 c rel", "grade 'rel'"),
        ("1 0 c", "expected 4 columns (topic iteration docid grade), found 3"),
        ("1 0 c 1 extra", "found 5"),
    ],
)
def test_qrels_malformed_line(tmp_path, bad_line, fragment):
    error = error_of(read_qrels, write(tmp_path, "1 0 a 1\n" + bad_line + "\n"))
    assert error.line == 2 and fragment in str(error)


def test_empty_qrels_means_no_judgments(tmp_path):
    assert read_qrels(write(tmp_path, "# nothing judged\n")) == {}


# --------------------------------------------------------------------------- writing


def test_write_read_round_trip(tmp_path):
    runs = generate_runs(2, 5, 30, seed=3)
    for name, rankings in runs.items():
        write_run(tmp_path / name, rankings, name)
        run = read_run(tmp_path / name)
        assert run.name == name
        assert run.rankings == {t: tuple(r) for t, r in rankings.items()}
    qrels = generate_qrels(runs, seed=3)
    write_qrels(tmp_path / "qrels", qrels)
    assert read_qrels(tmp_path / "qrels") == qrels
    assert sorted(p.name for p in tmp_path.iterdir()) == ["qrels", "run0", "run1"]  # no temp files


def test_write_rejects_unwritable_values(tmp_path):
    with pytest.raises(MedoptError):
        write_run(tmp_path / "r", {"1": ["a b"]}, "r")
    with pytest.raises(MedoptError):
        write_run(tmp_path / "r", {"1": ["a", "a"]}, "r")
    with pytest.raises(MedoptError):
        write_run(tmp_path / "r", {"1": ["a"]}, "my run")
    with pytest.raises(MedoptError):
        write_qrels(tmp_path / "q", {"1": {"a": 1.5}})
    assert not list(tmp_path.iterdir())


# --------------------------------------------------------------------------- generator


def test_generator_is_deterministic_and_realistic():
    runs = generate_runs(3, 4, 20, seed=7)
    assert runs == generate_runs(3, 4, 20, seed=7)
    assert runs != generate_runs(3, 4, 20, seed=8)
    assert set(runs) == {"run0", "run1", "run2"}
    a, b = runs["run0"], runs["run1"]
    for topic in a:
        assert len(a[topic]) == len(set(a[topic])) == 20
        assert all(d.startswith("D") and d[1:].isdigit() for d in a[topic])
        assert len(set(a[topic]) & set(b[topic])) >= 5  # heavy overlap
    assert generate_runs(2, 2, 10, seed=1, similarity=1.0)["run0"] == \
        generate_runs(2, 2, 10, seed=1, similarity=1.0)["run1"]
    qrels = generate_qrels(runs, seed=7)
    assert qrels == generate_qrels(runs, seed=7) and qrels != generate_qrels(runs, seed=8)
    grades = [g for topic in qrels.values() for g in topic.values()]
    assert set(grades) <= {0, 1, 2, 3} and grades.count(0) > len(grades) / 3
    retrieved = {d for r in runs.values() for ranking in r.values() for d in ranking}
    assert any(d not in retrieved and g > 0 for t in qrels.values() for d, g in t.items())


def test_write_example(tmp_path):
    paths = write_example(tmp_path / "ex", seed=1, n_runs=2, n_topics=3, depth=5)
    assert [p.name for p in paths] == ["run.run0.txt", "run.run1.txt", "qrels.txt"]
    run = read_run(paths[0])
    assert run.name == "run0" and len(run.rankings) == 3
    assert set(read_qrels(paths[2])) == set(run.rankings)


# --------------------------------------------------------------------------- real files


def test_trec_eval_fixtures():
    run = read_run(shared("trec_eval", "results.test"))
    assert run.name == "STANDARD" and {t: len(r) for t, r in run.rankings.items()} == {
        "301": 500, "302": 500, "303": 500}
    qrels = read_qrels(shared("trec_eval", "qrels.test"))
    assert set(qrels) == {"301", "302", "303"}


def test_dl_hard_run_matches_trec_eval_relstring():
    """trec_eval's `relstring` (grades of the top 10) pins down its tie order."""
    folder = shared("dl-hard", "baselines", "doc")
    path = folder / "bm25+rm3+bert-mp.run"  # re-ranked: many tied scores at the top
    run = read_run(path)
    qrels = read_qrels(folder.parents[1] / "dl_hard-doc.qrels")
    assert len(run.rankings) == 50 and all(len(r) == 1000 for r in run.rankings.values())
    expected = {}
    for line in (folder / (path.name + ".eval")).read_text().splitlines():
        measure, topic, value = line.split()
        if measure == "relstring" and topic != "all":
            expected[topic] = value.strip("'")
    assert len(expected) == 50
    for topic, ranking in run.rankings.items():
        got = "".join(str(qrels[topic][d]) if d in qrels[topic] else "-" for d in ranking[:10])
        assert got == expected[topic], topic


# --------------------------------------------------------------------------- never a traceback

TOKENS = st.one_of(
    st.sampled_from(["1", "Q0", "0", "d1", "d2", "-3", "2.5", "1e5", "nan", "inf", "#", "r"]),
    st.text(min_size=1, max_size=6),
    st.integers(-5, 5).map(str),
)
LINES = st.lists(
    st.lists(TOKENS, max_size=7).flatmap(
        lambda toks: st.sampled_from([" ", "\t", "  ", " \t"]).map(lambda sep: sep.join(toks))),
    max_size=8,
)


def _only_medopt_errors(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "input.txt"
        path.write_bytes(data)
        for reader in (read_run, read_qrels):
            try:
                reader(path)
            except MedoptError:
                pass


@settings(max_examples=200, deadline=None)
@given(LINES)
def test_random_text_never_crashes(lines):
    _only_medopt_errors("\n".join(lines).encode("utf-8", "surrogatepass"))


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=200), st.booleans())
def test_random_bytes_never_crash(data, compress):
    _only_medopt_errors(gzip.compress(data) if compress else data)
