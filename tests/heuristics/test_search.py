"""Adversarial certification (medopt.campaigns.search) and the greedy counterexamples it exists for.

The 8-document instance below is where Moffat's eq. 13 greedy misses MED-AP: each of the two
unjudged documents lowers SP(a) - SP(b) on its own, together they raise it.  The second one, found
by the search, has judged parts that tie exactly: the greedy returns 0 while MED > 0, so its
relative gap reaches 1.  Both are checked against an independent brute force in exact fractions.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest

import medopt
from medopt.campaigns.certify import Case, Heuristic, certify_case
from medopt.campaigns.counterexamples import check_counterexample, load_counterexample
from medopt.campaigns.search import search
from medopt.campaigns.starts import Generator

ISSUE_A = ["d1", "d4", "d7", "d5", "d8", "d6", "d2"]
ISSUE_B = ["d4", "d1", "d5", "d7", "d2", "d6", "d8", "d3"]
ISSUE_JUDGED = {"d1": 1, "d2": 1, "d3": 1, "d4": 0, "d5": 0, "d6": 0}  # d7, d8 unjudged

TIED_A = ["A", "B", "C", "D", "E", "F", "G"]
TIED_B = ["D", "A", "G", "C", "H", "E", "B", "F"]
TIED_JUDGED = {"A": 1, "B": 0, "D": 0, "E": 1, "G": 0, "H": 1, "out0": 1, "out1": 1, "out2": 1}  # C, F unjudged


def ap_fraction(ranking, relevant: set, k: int) -> Fraction:
    """AP@k in exact fractions (trec_eval's normalisation by R), written from SPEC 3 alone."""
    found, total = 0, Fraction(0)
    for rank, doc in enumerate(ranking[:k], start=1):
        if doc in relevant:
            found += 1
            total += Fraction(found, rank)
    return total / len(relevant) if relevant else Fraction(0)


def brute_force_med(a, b, judged: dict, k: int) -> Fraction:
    unjudged = [d for d in dict.fromkeys(a[:k] + b[:k]) if d not in judged]
    best = Fraction(0)
    for grades in itertools.product((0, 1), repeat=len(unjudged)):
        relevant = {d for d, g in judged.items() if g >= 1} | {d for d, g in zip(unjudged, grades) if g}
        best = max(best, abs(ap_fraction(a, relevant, k) - ap_fraction(b, relevant, k)))
    return best


@pytest.mark.parametrize("a, b, judged, heuristic_value, med", [
    (ISSUE_A, ISSUE_B, ISSUE_JUDGED, Fraction(1, 280), Fraction(1, 120)),
    (TIED_A, TIED_B, TIED_JUDGED, Fraction(0), Fraction(1, 192)),
])
def test_greedy_misses_and_certify_flags_it(a, b, judged, heuristic_value, med):
    assert brute_force_med(a, b, judged, 8) == med
    greedy = medopt.med("AP@8", a, b, judged, method="greedy")
    assert greedy.value == pytest.approx(float(heuristic_value), abs=1e-12) and not greedy.certified
    for solver in ("highs", "cpsat"):
        exact = medopt.med("AP@8", a, b, judged, method="exact", solver=solver)
        assert exact.certified and exact.value == pytest.approx(float(med), abs=1e-12)
    assert medopt.med("AP@8", a, b, judged, method="enumerate").value == pytest.approx(float(med), abs=1e-12)
    rows, found = certify_case(Case("a", "b", "t", tuple(a), tuple(b), dict(judged), 1), "AP@8", [Heuristic("greedy")])
    assert rows[0]["verdict"] == "miss" and rows[0]["gap"] == pytest.approx(float(med - heuristic_value), abs=1e-12)
    assert found and check_counterexample(found[0][1]).ok
    # the pair look-ahead sees the interaction the greedy cannot
    assert medopt.med("AP@8", a, b, judged, method="greedy-pairs").value == pytest.approx(float(med), abs=1e-12)


def test_norm_min_is_missed_the_same_way():
    greedy = medopt.med("AP(norm=min)@8", ISSUE_A, ISSUE_B, ISSUE_JUDGED, method="greedy")
    exact = medopt.med("AP(norm=min)@8", ISSUE_A, ISSUE_B, ISSUE_JUDGED, method="exact")
    assert exact.certified and exact.value > greedy.value + 1e-4


def test_search_reproduces_a_greedy_miss_from_a_fixed_seed():
    """Seed 0 finds greedy misses within 5,000 points (11 at this seed), each certified by the exact solver."""
    first = search("AP@6", Heuristic("greedy"), k=6, seed=0, budget=5_000, keep=3)
    assert first.evaluated == 5_000 and first.misses
    for miss in first.misses:
        assert miss.row["verdict"] == "miss" and miss.row["exact_certified"]
        assert miss.exact_value - miss.heuristic_value > 1e-9
        assert check_counterexample(miss.counterexample).ok
    again = search("AP@6", Heuristic("greedy"), k=6, seed=0, budget=5_000, keep=3)
    assert [m.point for m in again.misses] == [m.point for m in first.misses]  # the seed reproduces the search


def test_search_finds_tc_err_and_alg1_misses_and_nothing_for_an_exact_method():
    for heuristic, metric in ((Heuristic("tc-err", (("p", 1),)), "ERR@5"), (Heuristic("alg1"), "nDCG@5")):
        report = search(metric, heuristic, k=5, seed=1, budget=1500, keep=2)
        assert report.misses, (heuristic, metric)
        assert all(m.row["exact_certified"] and m.exact_value > m.heuristic_value for m in report.misses)
    closed = search("P@5", Heuristic("closed-form"), k=5, seed=1, budget=300)
    assert closed.found == 0 and not closed.misses  # the closed form is exact: nothing to find


def test_search_needs_a_budget_and_a_matching_heuristic():
    with pytest.raises(medopt.MedoptError, match="budget"):
        search("AP@5", Heuristic("greedy"), k=5, budget=None, seconds=None)
    with pytest.raises(medopt.MedoptError, match="does not compute"):
        search("ERR@5", Heuristic("greedy"), k=5, budget=10)


def test_generator_points_stay_within_bounds():
    import random
    generator = Generator(random.Random(3), 7, 1, 6)
    for name in ("permuted-pair", "shared-pair", "shared-triple", "near-permutation", "short-lists", "random"):
        for _ in range(30):
            point = generator.start(name)
            for _ in range(10):
                point = generator.mutate(point)
                assert len(point.unjudged()) <= 6  # small enough for the enumeration oracle
                assert len(set(point.a)) == len(point.a) and len(set(point.b)) == len(point.b)
                assert {d for d, _ in point.judged} <= set(point.a) | set(point.b)


def test_certify_search_command_reproduces_a_greedy_miss(tmp_path):
    """``medopt certify --search`` from a fixed seed: a certified greedy miss within 60 s, saved."""
    import csv
    import time

    from click.testing import CliRunner

    from medopt.cli import main
    from medopt.campaigns.counterexamples import load_counterexample

    started = time.perf_counter()
    result = CliRunner().invoke(main, ["certify", "--search", "-m", "AP@6", "--heuristic", "greedy", "--k", "6",
                                       "--seed", "0", "--budget", "5000", "--show", "1", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert time.perf_counter() - started < 60
    rows = list(csv.DictReader((tmp_path / "search.csv").open()))
    assert rows[0]["heuristic"] == "greedy" and int(rows[0]["certified_misses"]) >= 1
    saved = sorted(tmp_path.glob("cx*.json"))
    assert saved and check_counterexample(load_counterexample(saved[0])).ok
    assert "greedy falls short" in result.output


@pytest.mark.parametrize("arguments, message", [
    (["--search", "-m", "AP@5", "--heuristic", "greedy", "runA", "runB"], "--search makes its own instances"),
    (["-m", "AP@5", "--budget", "10", "--generate", "3"], "--budget and --seconds apply to --search"),
    (["--search", "--heuristic", "greedy"], "say which metric"),
    (["--search", "-m", "ERR@5", "--heuristic", "greedy"], "applies to none of the metrics"),
])
def test_certify_search_refuses_what_it_cannot_do(arguments, message):
    from click.testing import CliRunner

    from medopt.cli import main

    result = CliRunner().invoke(main, ["certify", *arguments])
    assert result.exit_code == 2 and message in result.output


def test_the_lists_follow_the_metrics_cutoff():
    from medopt.campaigns.search import format_lengths, search_lengths

    assert search_lengths("AP@8") == (8,) and search_lengths("nDCG@20") == (20,)
    assert search_lengths("AP@3") == (5,)            # the shortest lists every start can make
    assert search_lengths("RBP(p=0.8)") == (10,)     # no cutoff
    assert search_lengths("AP@8", 6) == (6,) and search_lengths("AP@8", [5, 6, 6, 8]) == (5, 6, 8)
    assert format_lengths((8,)) == "8" and format_lengths((5, 6, 7, 8)) == "5-8" and format_lengths((6, 8)) == "6,8"
    with pytest.raises(medopt.MedoptError, match="at least 5"):
        search_lengths("AP@8", [4, 8])


def test_a_sweep_of_lengths_takes_each_length_in_turn(monkeypatch):
    import medopt.campaigns.search as search_module

    seen = []
    start = search_module.Generator.start
    monkeypatch.setattr(search_module.Generator, "start", lambda self, name: seen.append(self.k) or start(self, name))
    report = search("AP@8", Heuristic("greedy"), k=(5, 8), seed=2, budget=400, keep=1)
    assert report.lengths == (5, 8) and set(seen) == {5, 8}
    # every kind of start at one length, then at the next: runs of len(FAVOURED["greedy"]) starts
    runs = len(search_module.FAVOURED["greedy"])
    assert seen[:2 * runs] == [5] * runs + [8] * runs


def test_certify_search_follows_the_metric_with_the_default_budget(tmp_path):
    """The issue's command: lists of 10 for AP@8 found no miss in 20,000 points; lists of the cutoff's
    length find the greedy's misses (13 at this seed), and the table says the length searched."""
    import csv

    from click.testing import CliRunner

    from medopt.cli import main

    result = CliRunner().invoke(main, ["certify", "--search", "--heuristic", "greedy", "-m", "AP@8", "--seed", "1",
                                       "--show", "0", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    (row,) = list(csv.DictReader((tmp_path / "search.csv").open()))
    assert row["lengths"] == "8" and row["points"] == "20000" and int(row["certified_misses"]) >= 1
    assert "lengths" in result.output.splitlines()[-2]
    saved = sorted(tmp_path.glob("cx*.json"))
    assert len(saved) == int(row["certified_misses"]) and check_counterexample(load_counterexample(saved[0])).ok


@pytest.mark.parametrize("lengths, message", [("3", "at least 5"), ("8-6", "LOW <= HIGH"), ("x", "expected a length")])
def test_certify_search_refuses_bad_lengths(lengths, message):
    from click.testing import CliRunner

    from medopt.cli import main

    result = CliRunner().invoke(main, ["certify", "--search", "-m", "AP@8", "--heuristic", "greedy", "--k", lengths,
                                       "--budget", "10"])
    assert result.exit_code == 2 and message in result.output
