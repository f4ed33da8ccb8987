"""Small things users hit (issue 49, item 6, and the depths plot of its wrong answers): ``dir(medopt)``
lists the lazy names; a misspelt metric gets a did-you-mean; a run whose every score ties in a topic
is warned about, once per run; ``matrix -o`` suggests an option matrix has; a message names an option
by its flag on the command line and by its keyword in Python; ``plot --kind depths`` works with its
own defaults."""

from __future__ import annotations

import random
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

import medopt
from medopt.batch.runset import _parse_quickly
from medopt.cli import main
from medopt.errors import MedoptError, MetricSyntaxError, command_line, option
from medopt.io.trec import read_run
from medopt.io.topics import read_topic_choice

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RUNS = [EXAMPLES / f"run.run{i}.txt" for i in range(4)]
QRELS = EXAMPLES / "qrels.txt"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_dir_lists_the_lazy_names():
    names = dir(medopt)
    for name in ("compare", "matrix", "to_trec_eval", "to_latex", "MED", "MEDRange", "judge_next", "med"):
        assert name in names, name
    assert names == sorted(names)


@pytest.mark.parametrize("text, suggested", [
    ("ndgc_cut.10", "ndcg_cut.10"),      # trec_eval's spelling kept, its cutoff too
    ("ndgc@10", "nDCG@10"),
    ("nDGC(dcg=exp-log2)@5", "nDCG(dcg=exp-log2)@5"),
    ("recip_rnk", "recip_rank"),
    ("ERRR@20", "ERR@20"),
])
def test_a_misspelt_metric_gets_a_did_you_mean(text, suggested):
    with pytest.raises(MetricSyntaxError, match=f"did you mean '{suggested.replace('(', '[(]').replace(')', '[)]')}'"):
        medopt.parse_metric(text)
    medopt.parse_metric(suggested)  # what is suggested parses


def test_no_did_you_mean_far_from_every_name():
    with pytest.raises(MetricSyntaxError) as error:
        medopt.parse_metric("zzzz@3")
    assert "did you mean" not in str(error.value)


def test_the_cli_suggests_a_metric_too():
    result = run("compare", RUNS[0], RUNS[1], "--qrels", QRELS, "-m", "ndgc_cut.10")
    assert result.exit_code == 2 and "did you mean 'ndcg_cut.10'" in result.output


def write_tied(path: Path, tied_topics: set, topics=("401", "402", "403"), depth=6, seed=0):
    rng = random.Random(seed)
    lines = []
    for topic in topics:
        for i in range(depth):
            score = 1.0 if topic in tied_topics else round(rng.uniform(0, 10), 3)
            lines.append(f"{topic} Q0 D{rng.randrange(10 ** 6)} {i + 1} {score} tied")
    rng.shuffle(lines)
    path.write_text("\n".join(lines) + "\n")


def test_a_topic_whose_scores_all_tie_is_found_alike_by_both_readers(tmp_path):
    """read_run and the matrix's quick parser agree on the tied topics (and a one-document topic, or
    one with --honour-rank, is not tied)."""
    for seed in range(20):
        rng = random.Random(seed)
        tied = {t for t in ("401", "402", "403") if rng.random() < 0.5}
        path = tmp_path / f"r{seed}.run"
        depth = rng.choice([1, 2, 6])
        write_tied(path, tied, depth=depth, seed=seed)
        expected = set() if depth == 1 else tied
        assert set(read_run(path).tied) == expected
        assert set(_parse_quickly(path, False).tied) == expected
        assert read_run(path, honour_rank=True).tied == ()


def test_one_warning_per_run_whose_scores_tie(tmp_path):
    a, b = tmp_path / "a.run", tmp_path / "b.run"
    write_tied(a, {"401", "403"})
    write_tied(b, set(), seed=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        medopt.compare(a, b, None, ["P@3"])
    ties = [str(w.message) for w in caught if "ties" in str(w.message)]
    assert len(ties) == 1 and "2 topic(s)" in ties[0] and "401 403" in ties[0], ties
    result = run("matrix", a, b, "-m", "P@3", "--store", tmp_path / "s.sqlite")
    assert result.exit_code == 0, result.output
    assert result.output.count("every score ties") == 1
    result = run("bounds", a, b, "-m", "P@3")
    assert result.exit_code == 0, result.output
    assert result.output.count("every score ties") == 1


def test_matrix_output_suggests_an_option_it_has(tmp_path):
    """``matrix -o out.txt`` said 'pass --format', an option matrix did not have; it has it now, and
    the suggestion works."""
    out = tmp_path / "out.txt"
    result = run("matrix", RUNS[0], RUNS[1], "--qrels", QRELS, "-m", "P@10", "--store", tmp_path / "s.sqlite", "-o", out)
    assert result.exit_code == 2 and "pass --format" in result.output, result.output
    result = run("matrix", RUNS[0], RUNS[1], "--qrels", QRELS, "-m", "P@10", "--store", tmp_path / "s.sqlite",
                 "-o", out, "--format", "tsv")
    assert result.exit_code == 0, result.output
    assert out.read_text().split("\n")[0].split("\t")[:3] == ["run_a", "run_b", "topic"]


def test_messages_name_the_keyword_in_python_and_the_flag_on_the_command_line(tmp_path):
    """errors.option: the same message names ``topics=...`` for the API and ``--topics`` for the
    command line; -c and the export's format likewise (``complete=True`` / ``-c``, ``fmt=`` / ``--format``)."""
    assert option("complete") == "complete=True"
    with command_line():
        assert option("complete") == "-c" and option("fmt", None) == "--format"
    with pytest.raises(MedoptError, match=r"topics=\.\.\. ' ,' names no topic") as error:
        read_topic_choice(" ,")
    assert "--" not in str(error.value)
    with command_line(), pytest.raises(MedoptError, match="--topics ' ,' names no topic"):
        read_topic_choice(" ,")
    from medopt.batch.matrix import Settings
    from medopt.batch.passageset import check_character_settings
    with pytest.raises(MedoptError, match=r"takes no solver=\.\.\., max_grade=\.\.\. "):
        check_character_settings(Settings(solver="highs", max_grade=3))
    with command_line(), pytest.raises(MedoptError, match="takes no --solver, --max-grade "):
        check_character_settings(Settings(solver="highs", max_grade=3))
    store = tmp_path / "s.sqlite"
    assert run("matrix", RUNS[0], RUNS[1], "--qrels", QRELS, "-m", "P@10", "--store", store).exit_code == 0
    from medopt.io.store import export_results
    with pytest.raises(MedoptError, match=r"pass fmt=\.\.\.") as error:
        export_results(store, tmp_path / "out.txt")
    assert "--format" not in str(error.value)


def test_api_warnings_name_the_keyword(tmp_path):
    """medopt.compare's warning about judged topics no run retrieved names complete=True; the command's
    names -c."""
    qrels = tmp_path / "q.txt"
    qrels.write_text(QRELS.read_text() + "999 0 unseen 1\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        medopt.compare(RUNS[0], RUNS[1], qrels, ["P@10"])
    texts = [str(w.message) for w in caught if "not retrieved" in str(w.message)]
    assert texts and all("complete=True" in t and " -c " not in t for t in texts), texts
    result = run("compare", RUNS[0], RUNS[1], "--qrels", qrels, "-m", "P@10")
    assert result.exit_code == 0 and "; -c counts" in result.output and "complete=" not in result.output


@pytest.mark.parametrize("metric", [(), ("-m", "P")])
def test_the_depths_plot_works_with_its_defaults(tmp_path, metric):
    """``plot --kind depths`` said 'SDCG needs a cutoff' with its own default metric (and with -m P): its
    label parsed the metric without the cutoff each depth supplies."""
    out = tmp_path / "d.png"
    result = run("plot", "--kind", "depths", *RUNS, "--qrels", QRELS, "-o", out, *metric)
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
