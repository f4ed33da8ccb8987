"""Reference values from the papers (SPEC 4): Moffat Tables 2 and 3, Tan & Clarke's examples."""

import pytest

import medopt

X3 = "A B C D E F G H J K".split()
X4 = "A D B E C G F J L H".split()
X34_JUDGED = {"A": 1, "E": 0}
X1 = "A B C D E".split()
X2 = "B C F D A".split()
X12_JUDGED = {"A": 0, "C": 1, "F": 0}


def test_moffat_table2_alg1():
    result = medopt.med("nDCG@10", X3, X4, X34_JUDGED, method="alg1")
    assert round(result.value, 3) == 0.235
    assert result.direction == "b"
    assert {d for d, g in result.assignment.items() if g} == {"L", "D"}
    assert result.certified


def test_moffat_table2_positive_pass_maximum():
    # the best ratio while X3 is the better list (the positive differences) is 0.208 (B, C, K relevant)
    best_for_x3 = medopt.score("nDCG@10", X3, {**X34_JUDGED, "B": 1, "C": 1, "K": 1}) - medopt.score(
        "nDCG@10", X4, {**X34_JUDGED, "B": 1, "C": 1, "K": 1})
    assert round(best_for_x3, 3) == 0.208
    enumerated = max(
        medopt.score("nDCG@10", X3, {**X34_JUDGED, **dict(zip("BCDFGHJKL", bits))})
        - medopt.score("nDCG@10", X4, {**X34_JUDGED, **dict(zip("BCDFGHJKL", bits))})
        for bits in __import__("itertools").product((0, 1), repeat=9))
    assert round(enumerated, 3) == 0.208


@pytest.mark.parametrize("metric, expected, relevant", [
    ("SDCG@10", 0.128, "BCFHK"),
    ("nDCG@10", 0.235, "DL"),
    ("SSP@10", 0.161, "BCFGHJK"),
    ("AP@10", 0.283, "BCK"),
])
@pytest.mark.parametrize("method", ["auto", "enumerate"])
def test_moffat_table3(metric, expected, relevant, method):
    result = medopt.med(metric, X3, X4, X34_JUDGED, method=method)
    assert round(result.value, 3) == expected
    assert {d for d, g in result.assignment.items() if g} == set(relevant)
    assert result.certified


def test_tan_clarke_precision_and_rr():
    assert medopt.med("P@5", X1, X2, X12_JUDGED).value == pytest.approx(0.2, abs=1e-12)
    rr = medopt.med("RR", X1, X2, X12_JUDGED, method="enumerate")
    assert rr.value == pytest.approx(0.5, abs=1e-12)
    assert rr.assignment["B"] == 1
