"""Heuristics (greedy AP, tabu SSP/AP, Tan & Clarke ERR) against brute-force enumeration.

A heuristic answer is a lower bound: never above the exact maximum, status
"heuristic", never certified, with an upper bound that holds.  How often each
heuristic falls short of the optimum is printed (not asserted).
"""

import itertools
import random

import pytest

import medopt
from medopt.errors import MedoptError
from medopt.heuristics import greedy as greedy_module
from medopt.core.instance import RelevanceLimit
from medopt.synthetic.random_instances import random_instances

X3 = "A B C D E F G H J K".split()
X4 = "A D B E C G F J L H".split()
X34_JUDGED = {"A": 1, "E": 0}

MISSES: dict = {}


def rotate(templates, index, case):
    return templates[index % len(templates)].format(k=case.k)


def oracle_cases(seed, count, templates, **options):
    """(metric, case, enumerate result) for seeded random instances."""
    for index, case in enumerate(random_instances(seed, count, **options)):
        metric = rotate(templates, index, case)
        yield metric, case, medopt.med(metric, **case.as_kwargs(), method="enumerate")


AP_TEMPLATES = ["AP@{k}", "AP(norm=min)@{k}", "AP", "AP(rel=2)@{k}"]


@pytest.fixture(scope="module")
def ap_oracle():
    """AP instances, binary and graded, partially judged, with their exact maxima (shared by greedy and tabu)."""
    cases = list(oracle_cases(101, 170, AP_TEMPLATES[:3], max_grade=1, max_unjudged=9))
    cases += list(oracle_cases(102, 150, AP_TEMPLATES, max_grade=2, max_unjudged=5))
    return cases


def check_lower_bound(result, oracle, label):
    assert result.value <= oracle.value + 1e-12, (label, result, oracle)
    assert result.status == "heuristic" and not result.certified, (label, result)
    assert result.upper_bound >= oracle.value - 1e-9, (label, result, oracle)
    assert "claimed_value" not in result.details, (label, result)   # the fast evaluator agreed with the re-score
    assert set(result.assignment) == set(oracle.assignment)


def count_misses(name, pairs, capsys):
    misses = sum(1 for result, oracle in pairs if result.value < oracle.value - 1e-9)
    worst = max((oracle.value - result.value for result, oracle in pairs), default=0.0)
    MISSES[name] = (misses, len(pairs))
    with capsys.disabled():
        print(f"\n[heuristics] {name}: below the optimum on {misses} of {len(pairs)} instances "
              f"(largest gap {worst:.3g})")
    return misses


# -- greedy (Moffat eq. 13) -------------------------------------------------------

def test_greedy_is_a_lower_bound_on_random_instances(ap_oracle, capsys):
    pairs = []
    for metric, case, oracle in ap_oracle:
        result = medopt.med(metric, **case.as_kwargs(), method="greedy")
        check_lower_bound(result, oracle, (metric, case))
        pairs.append((result, oracle))
    assert len(pairs) >= 300
    count_misses("greedy (AP@k, AP(norm=min)@k, AP, AP(rel=2)@k)", pairs, capsys)


def test_greedy_reproduces_moffat_table_3():
    # By construction (X3 the better list; A relevant at rank 1 of both): eq. 13 gains start at
    # B +1/3, C +4/15, K +1/5, ...; the greedy takes B (ratio (1/3)/2 = 1/6), then C (gain 2/5:
    # (11/15)/3 = 11/45), then K (gain 2/5: (17/15)/4 = 17/60 = 0.2833), then H (gain 1/5:
    # (4/3)/5 = 0.2667) and further steps only lower the ratio.  17/60 is Table 3's MED-AP 0.283.
    result = medopt.med("AP@10", X3, X4, X34_JUDGED, method="greedy")
    assert abs(result.value - 17 / 60) <= 1e-12
    assert round(result.value, 3) == 0.283
    assert {d for d, g in result.assignment.items() if g} == {"B", "C", "K"}
    assert result.direction == "a" and result.status == "heuristic" and not result.certified
    exact = medopt.med("AP@10", X3, X4, X34_JUDGED, method="enumerate")
    assert abs(exact.value - result.value) <= 1e-12


def test_greedy_assigns_the_relevance_threshold_grade():
    result = medopt.med("AP(rel=2)@5", ["u1", "j1", "u2"], ["j1", "u3"], {"j1": 2, "x": 1}, max_grade=3,
                        method="greedy")
    assert set(result.assignment.values()) <= {0, 2}
    assert result.value == medopt.med("AP(rel=2)@5", ["u1", "j1", "u2"], ["j1", "u3"], {"j1": 2, "x": 1},
                                      max_grade=3, method="enumerate").value


def test_heuristics_when_rel_exceeds_the_top_grade():
    for metric, method in (("SSP(rel=3)@3", "tabu"), ("AP(rel=3)@3", "tabu"), ("AP(rel=3)@3", "greedy")):
        result = medopt.med(metric, ["a", "b"], ["b", "c"], {"c": 1}, max_grade=2, method=method)
        assert result.value == 0.0 and set(result.assignment.values()) == {0}
        assert "claimed_value" not in result.details


def test_greedy_rejects_other_metrics_and_limits():
    with pytest.raises(MedoptError, match="greedy"):
        medopt.med("SSP@10", X3, X4, X34_JUDGED, method="greedy")
    with pytest.raises(MedoptError, match="greedy"):
        medopt.med("nDCG@10", X3, X4, X34_JUDGED, method="greedy")
    with pytest.raises(MedoptError, match="greedy.*does not support relevance limits"):
        medopt.med("AP@10", X3, X4, X34_JUDGED, method="greedy", limits=[RelevanceLimit(high=3)])


def test_greedy_is_deterministic_and_refuses_options_it_does_not_take():
    first = medopt.med("AP@10", X3, X4, X34_JUDGED, method="greedy")
    second = medopt.med("AP@10", X3, X4, X34_JUDGED, method="greedy", time_limit=5)
    assert (first.value, first.direction, first.assignment) == (second.value, second.direction, second.assignment)
    with pytest.raises(MedoptError, match="method 'greedy' does not take solver"):
        medopt.med("AP@10", X3, X4, X34_JUDGED, method="greedy", solver="highs")
    with pytest.raises(MedoptError, match="method 'tabu' does not take p "):
        medopt.med("AP@10", X3, X4, X34_JUDGED, method="tabu", p=3)


def test_auto_drops_the_options_its_choice_does_not_take():
    """A solver asked for with method='auto' applies where auto picks an exact model, not to the closed form."""
    result = medopt.med("P@10", X3, X4, X34_JUDGED, solver="cpsat")
    assert result.method == "closed-form" and result.certified


# -- tabu ---------------------------------------------------------------------------

def tabu_pairs(cases, **options):
    pairs = []
    for metric, case, oracle in cases:
        result = medopt.med(metric, **case.as_kwargs(), method="tabu", **options)
        check_lower_bound(result, oracle, (metric, case, options))
        pairs.append((result, oracle))
    return pairs


def test_tabu_is_a_lower_bound_on_random_ssp_instances(capsys):
    cases = list(oracle_cases(201, 100, ["SSP@{k}", "SSP(rel=2)@{k}"], max_grade=2, max_unjudged=5))
    cases += list(oracle_cases(202, 100, ["SSP@{k}"], max_grade=1, max_unjudged=9))
    pairs = tabu_pairs(cases[::2])                                         # defaults
    pairs += tabu_pairs(cases[1::2], iterations=100, restarts=0, seed=7)   # a short search
    count_misses("tabu SSP@k", pairs, capsys)


def test_tabu_is_a_lower_bound_on_random_ap_instances(ap_oracle, capsys):
    cut = [item for item in ap_oracle if "@" in item[0]]
    pairs = tabu_pairs(cut[:60])
    pairs += tabu_pairs(cut[60:], iterations=150, restarts=1, seed=3)
    uncut = [item for item in ap_oracle if "@" not in item[0]]
    pairs += tabu_pairs(uncut, iterations=150)
    assert len(pairs) >= 300
    count_misses("tabu AP@k / AP(norm=min)@k / AP", pairs, capsys)


def test_tabu_reaches_moffat_table_3_ssp_and_ap():
    ssp = medopt.med("SSP@10", X3, X4, X34_JUDGED, method="tabu")
    assert round(ssp.value, 3) == 0.161
    assert abs(ssp.value - medopt.med("SSP@10", X3, X4, X34_JUDGED, method="enumerate").value) <= 1e-12
    assert {d for d, g in ssp.assignment.items() if g} == {"B", "C", "F", "G", "H", "J", "K"}
    ap = medopt.med("AP@10", X3, X4, X34_JUDGED, method="tabu")
    assert abs(ap.value - 17 / 60) <= 1e-12
    assert ssp.status == ap.status == "heuristic" and not (ssp.certified or ap.certified)


def test_tabu_is_deterministic_for_a_seed_and_valid_for_every_seed():
    cases = list(random_instances(303, 15, max_grade=1, max_unjudged=10))
    for case in cases:
        metric = f"SSP@{case.k}"
        oracle = medopt.med(metric, **case.as_kwargs(), method="enumerate")
        runs = {}
        for seed in (0, 1, 2):
            first = medopt.med(metric, **case.as_kwargs(), method="tabu", seed=seed, iterations=60, restarts=2)
            again = medopt.med(metric, **case.as_kwargs(), method="tabu", seed=seed, iterations=60, restarts=2)
            assert (first.value, first.direction, first.assignment) == (again.value, again.direction, again.assignment)
            check_lower_bound(first, oracle, (case, seed))
            runs[seed] = first
        assert runs[0].details["seed"] == 0 and runs[2].details["seed"] == 2


def test_tabu_passes_options_through_med():
    result = medopt.med("AP@10", X3, X4, X34_JUDGED, method="tabu", seed=5, iterations=20, tenure=2, restarts=3,
                        time_limit=3)
    assert result.details["seed"] == 5 and result.details["iterations"] == 20 and result.details["restarts"] == 3
    assert result.details["a"]["tenure"] == 2 and result.details["a"]["starts"] == 4


@pytest.mark.parametrize("option", [
    {"iterations": 0}, {"iterations": -5}, {"iterations": 2.5}, {"iterations": True}, {"iterations": "10"},
    {"tenure": 0}, {"tenure": 1.5}, {"restarts": -1}, {"restarts": 1.0}, {"seed": "x"}, {"seed": 1.5},
])
def test_tabu_rejects_bad_parameters(option):
    with pytest.raises(MedoptError, match="tabu"):
        medopt.med("SSP@10", X3, X4, X34_JUDGED, method="tabu", **option)


def test_tabu_rejects_other_metrics_and_limits():
    with pytest.raises(MedoptError, match="tabu"):
        medopt.med("ERR@10", X3, X4, X34_JUDGED, method="tabu")
    with pytest.raises(MedoptError, match="relevance limits"):
        medopt.med("SSP@10", X3, X4, X34_JUDGED, method="tabu", limits=[RelevanceLimit(low=2)])


# -- Tan & Clarke ERR ---------------------------------------------------------------

ERR_TEMPLATES = ["ERR@{k}", "ERR"]


def test_tc_err_on_random_instances(capsys):
    cases = list(oracle_cases(401, 130, ERR_TEMPLATES, max_grade=1, max_unjudged=10))
    cases += list(oracle_cases(402, 110, ERR_TEMPLATES, max_grade=2, max_unjudged=6))
    cases += list(oracle_cases(403, 80, ERR_TEMPLATES, max_grade=3, max_unjudged=5))
    pairs, exhaustive = [], 0
    for metric, case, oracle in cases:
        result = medopt.med(metric, **case.as_kwargs(), method="tc-err")
        check_lower_bound(result, oracle, (metric, case))
        instance = medopt.build_instance(metric, case.a, case.b, case.judgments, max_grade=case.max_grade)
        if len(instance.bound_docs) <= 5:   # every bound document tried (k <= 10 < depth 30): exact
            assert abs(result.value - oracle.value) <= 1e-12, (metric, case, result, oracle)
            assert result.details["exhaustive"] and abs(result.upper_bound - oracle.value) <= 1e-9
            exhaustive += 1
        pairs.append((result, oracle))
    assert len(pairs) >= 300 and exhaustive >= 200
    with capsys.disabled():
        print(f"\n[heuristics] tc-err: {exhaustive} of {len(pairs)} instances have at most p = 5 bound documents")
    count_misses("tc-err (ERR@k, ERR; G = 1..3)", pairs, capsys)
    short = [(medopt.med(metric, **case.as_kwargs(), method="tc-err", p=2), oracle) for metric, case, oracle in cases]
    for (result, oracle), (metric, case, _) in zip(short, cases):
        check_lower_bound(result, oracle, (metric, case, "p=2"))
    count_misses("tc-err with p = 2", short, capsys)


def test_tc_err_small_p_and_depth_stay_lower_bounds():
    for metric, case, oracle in oracle_cases(404, 40, ERR_TEMPLATES, max_grade=2, max_unjudged=6):
        for p, depth in itertools.product((0, 1, 2), (1, 3)):
            result = medopt.med(metric, **case.as_kwargs(), method="tc-err", p=p, depth=depth)
            check_lower_bound(result, oracle, (metric, case, p, depth))
            assert result.details["p"] == p and result.details["depth"] == depth


def test_tc_err_with_tan_clarke_gains():
    gains = {0: 0.0, 1: 0.25, 2: 0.75}
    for metric, case, _ in oracle_cases(405, 30, ["ERR@{k}"], max_grade=2, max_unjudged=5):
        oracle = medopt.med(metric, **case.as_kwargs(), gains=gains, method="enumerate")
        result = medopt.med(metric, **case.as_kwargs(), gains=gains, method="tc-err")
        check_lower_bound(result, oracle, (metric, case))
        assert abs(result.value - oracle.value) <= 1e-12   # at most 5 unjudged: exhaustive


def test_tc_err_is_deterministic():
    a, b = [f"d{i}" for i in range(12)], [f"d{i}" for i in (3, 1, 0, 7, 5, 11, 2, 4, 9, 6, 8, 10)]
    first = medopt.med("ERR@12", a, b, {"d4": 1}, max_grade=2, method="tc-err", p=3)
    second = medopt.med("ERR@12", a, b, {"d4": 1}, max_grade=2, method="tc-err", p=3)
    assert (first.value, first.direction, first.assignment) == (second.value, second.direction, second.assignment)
    assert not first.details["exhaustive"]  # 11 bound documents, p = 3


@pytest.mark.parametrize("option", [{"p": -1}, {"p": 2.5}, {"p": True}, {"depth": 0}, {"depth": "30"}])
def test_tc_err_rejects_bad_parameters(option):
    with pytest.raises(MedoptError, match="tc-err"):
        medopt.med("ERR@10", X3, X4, X34_JUDGED, method="tc-err", **option)


def test_tc_err_rejects_other_metrics_and_limits():
    with pytest.raises(MedoptError, match="tc-err"):
        medopt.med("RR@10", X3, X4, X34_JUDGED, method="tc-err")
    with pytest.raises(MedoptError, match="relevance limits"):
        medopt.med("ERR@10", X3, X4, X34_JUDGED, method="tc-err", limits=[RelevanceLimit(high=1)])


def _plain_greedy_path(problem):
    """The eq. 13 greedy as first written (lists, problem.gain, the loop's weights): (best, its documents)."""
    remaining = list(problem.docs)
    weights_better, weights_worse, best = problem.scored_weights()
    best_docs = problem.relevant_docs()
    while remaining:
        gains = [problem.gain(d, weights_better, weights_worse) for d in remaining]
        if max(gains) <= greedy_module.IMPROVEMENT:
            break
        problem.flip(remaining.pop(gains.index(max(gains))))
        weights_better, weights_worse, value = problem.scored_weights()
        if value > best:
            best, best_docs = value, problem.relevant_docs()
    return best, best_docs


def test_eq13_weights_from_numpy_are_the_loops_to_the_last_bit(monkeypatch):
    """The eq. 13 weights from NumPy (greedy.weight_arrays, the path of long lists) are the plain loop's
    bit for bit, and the greedy's path on arrays is the plain one's, on lists of 5-150 ranks."""
    rng = random.Random(7)
    for length in (0, 1, 2, 63, 200, 1000):
        for p in (0.0, 0.1, 0.5, 1.0):
            relevant = [rng.random() < p for _ in range(length)]
            weights, total = greedy_module.weight_arrays(relevant)
            assert (weights.tolist(), total) == greedy_module.flip_weights(relevant)
    monkeypatch.setattr(greedy_module, "ARRAY_RANKS", 1)  # the path on arrays however short the lists
    paths = 0
    for k in (5, 20, 60, 100, 150):
        for _ in range(6):
            a = [f"d{i}" for i in rng.sample(range(k + 30), k)]
            b = [f"d{i}" for i in rng.sample(range(k + 30), k)]
            judged = {f"d{i}": rng.randint(0, 1) for i in rng.sample(range(k + 30), k // 3)}
            for metric in (f"AP@{k}", f"SSP@{k}", f"AP(norm=min)@{k}"):
                instance = medopt.build_instance(metric, a, b, judged, max_grade=1)
                for direction in "ab":
                    expected = _plain_greedy_path(greedy_module.SumOfPrecisions(instance, direction))
                    assert greedy_module.greedy_path(greedy_module.SumOfPrecisions(instance, direction)) == expected
                    paths += 1
    assert paths == 180
