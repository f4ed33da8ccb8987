"""MED-U (SPEC 8): the closed form against a per-character brute force over every assignment of the
unknown characters, Tan & Clarke's 2999.75, the certificate, the readers' errors and the command."""

from __future__ import annotations

import csv
import io
import itertools
import random
import subprocess
import sys
from pathlib import Path

import pytest

import medopt
from medopt.errors import InputFormatError, MedoptError
from medopt.io.passages import read_passage_judgments, read_passage_run, read_spans
from medopt.metrics.u import u_score

ORACLE_INSTANCES = 400


# ---------------------------------------------------------------------------
# the brute force: one Python step per character, written from SPEC 8 alone


def trailtext(passages, length):
    chars = [(doc, offset + j) for doc, offset, size in passages for j in range(size)]
    return chars[:length]


def u_by_character(chars, value, length):
    """sum_i c_i max(0, 1 - i / L), i 1-based."""
    return sum(value(ch) * max(0.0, 1 - i / length) for i, ch in enumerate(chars, 1))


def brute_force(a, b, judgments, spans, length, gain):
    """(min, max) of U(A) - U(B) over every 0/c value of every unknown character."""
    ta, tb = trailtext(a, length), trailtext(b, length)
    unknown = sorted({ch for ch in ta + tb if ch[0] not in judgments})

    def judged_value(ch):
        return gain if any(o <= ch[1] < o + n for o, n in spans.get(ch[0], ())) else 0.0

    low, high = float("inf"), float("-inf")
    for bits in itertools.product((0.0, gain), repeat=len(unknown)):
        chosen = dict(zip(unknown, bits))
        value = lambda ch: chosen[ch] if ch in chosen else judged_value(ch)
        difference = u_by_character(ta, value, length) - u_by_character(tb, value, length)
        low, high = min(low, difference), max(high, difference)
    return low, high, len(unknown)


def random_case(rng: random.Random):
    docs = [f"d{i}" for i in range(rng.randint(1, 4))]
    size = {d: rng.randint(3, 8) for d in docs}

    def passages():
        out = []
        for _ in range(rng.randint(0, 4)):
            doc = rng.choice(docs)
            offset = rng.randint(0, size[doc] - 1)
            out.append((doc, offset, rng.randint(1, size[doc] - offset)))
        return out

    a, b = passages(), passages()
    if rng.random() < 0.3 and a:  # shared passages: bound characters
        b.insert(rng.randint(0, len(b)), rng.choice(a))
    judged = {d: rng.randint(0, 2) for d in docs if rng.random() < 0.4}
    spans = {}
    for doc in judged:
        spans[doc] = [(o, rng.randint(1, size[doc] - o)) for o in (rng.randint(0, size[doc] - 1)
                                                                  for _ in range(rng.randint(0, 2)))]
    length = rng.randint(1, 16)
    gain = rng.choice([1.0, 0.5, 0.25])
    return a, b, judged, spans, length, gain


def test_closed_form_equals_brute_force_on_random_instances():
    rng = random.Random(20261124)
    checked = bound = overlapping = judged_spans = 0
    while checked < ORACLE_INSTANCES:
        a, b, judged, spans, length, gain = random_case(rng)
        low, high, unknown = brute_force(a, b, judged, spans, length, gain)
        if unknown > 12:
            continue
        result = medopt.difference_range(f"U(L={length})", a, b, judged, spans=spans, gains={1: gain})
        assert result.low == pytest.approx(low, abs=1e-9) and result.high == pytest.approx(high, abs=1e-9), \
            (a, b, judged, spans, length, gain, result)
        assert result.certified
        med = medopt.med(f"U(L={length})", a, b, judged, spans=spans, gains={1: gain})
        assert med.value == pytest.approx(max(high, -low), abs=1e-9) and med.certified
        low_a, high_a, _ = brute_force(a, [], judged, spans, length, gain)
        alone = medopt.score_range(f"U(L={length})", a, judged, spans=spans, gains={1: gain})
        assert (alone.low, alone.high) == pytest.approx((low_a, high_a), abs=1e-9) and alone.certified
        ta, tb = set(trailtext(a, length)), set(trailtext(b, length))
        bound += any(ch[0] not in judged for ch in ta & tb)
        overlapping += any(len(set(trailtext(p, length))) < len(trailtext(p, length)) for p in (a, b))
        judged_spans += any(ch[0] in judged for ch in ta | tb)
        checked += 1
    print(f"oracle: {checked} instances, {bound} with bound unknown characters, {overlapping} with overlapping "
          f"passages, {judged_spans} with judged characters")
    assert bound > 50 and overlapping > 50 and judged_spans > 50, (bound, overlapping, judged_spans)


def test_the_evaluator_equals_the_per_character_sum():
    rng = random.Random(7)
    for _ in range(300):
        a, _, judged, spans, length, gain = random_case(rng)
        relevant = {d: s for d, s in spans.items()}
        value = lambda ch: gain if any(o <= ch[1] < o + n for o, n in relevant.get(ch[0], ())) else 0.0
        assert u_score(a, relevant, length, gain) == pytest.approx(u_by_character(trailtext(a, length), value, length),
                                                                   abs=1e-9)


def test_tan_and_clarke_largest_value():
    a = [(f"a{i}", 0, 1000) for i in range(12)]
    b = [(f"b{i}", 500, 3000) for i in range(4)]
    result = medopt.med("U(L=12000)", a, b, {}, spans={}, gains={1: 0.5})
    assert result.value == pytest.approx(2999.75, abs=1e-9) and result.certified
    assert medopt.med("U(L=12000,gains={1:0.5})", a, b).value == pytest.approx(2999.75, abs=1e-9)
    both = medopt.difference_range("U(L=12000)", a, b, {}, gains={1: 0.5})
    assert (both.low, both.high) == pytest.approx((-2999.75, 2999.75)) and both.certified


def test_bound_and_judged_characters():
    a, b = [("x", 0, 10)], [("x", 0, 10)]
    assert medopt.med("U(L=20)", a, b, {}).value == 0  # the same characters at the same positions
    swapped = medopt.difference_range("U(L=4)", [("x", 0, 2), ("y", 0, 2)], [("y", 0, 2), ("x", 0, 2)], {})
    # positions 1,2 vs 3,4: weights 3+2 vs 1+0; x for A: 5 - 1 = 4, y for B: 5 - 1 = 4 -> 4/4
    assert (swapped.low, swapped.high) == pytest.approx((-1.0, 1.0))
    judged = medopt.difference_range("U(L=4)", [("x", 0, 2)], [], {"x": 1}, spans={"x": [(1, 1)]})
    assert (judged.low, judged.high) == pytest.approx((0.5, 0.5))
    score = medopt.score_range("U(L=4)", [("x", 0, 2), ("y", 0, 2)], {"x": 1}, spans={"x": [(0, 1)]})
    assert (score.low, score.high) == pytest.approx((0.75, 0.75 + 0.25))  # y at positions 3, 4: 1/4 + 0 and score.kind == "score"


def test_assignment_is_spans_of_unknown_characters():
    result = medopt.med("U(L=10)", [("x", 5, 3), ("j", 0, 3)], [("y", 0, 3)], {"j": 0})
    assert result.direction == "a" and result.assignment == {"x": ((5, 3),)}


def test_bad_python_inputs():
    with pytest.raises(MedoptError, match="not judged"):
        medopt.med("U(L=10)", [("x", 0, 3)], [], {}, spans={"x": [(0, 1)]})
    with pytest.raises(MedoptError, match=r"a\[0\]"):
        medopt.med("U(L=10)", [("x", -1, 3)], [], {})
    with pytest.raises(MedoptError, match="max_grade"):
        medopt.med("U(L=10)", [("x", 0, 3)], [], {}, max_grade=2)
    with pytest.raises(MedoptError, match="spans"):
        medopt.med("P@5", ["a"], ["b"], {}, spans={})
    with pytest.raises(MedoptError, match="cutoff"):
        medopt.med("U(L=10)@5", [], [], {})


def test_empty_trailtexts_and_document_paths_refuse_u():
    assert medopt.med("U(L=5)", [], [], {}).value == 0
    assert medopt.score_range("U(L=5)", [], {}).high == 0
    with pytest.raises(MedoptError, match="a passage is"):  # matrix computes U on passage runs only
        medopt.matrix({"a": {"1": ["d1"]}, "b": {"1": ["d2"]}}, None, ["U(L=10)"], jobs=1)
    with pytest.raises(MedoptError, match="trailtext"):
        medopt.score("U(L=10)", ["d1"], {})


# ---------------------------------------------------------------------------
# readers and the command


@pytest.mark.parametrize("text, message", [
    ("1 Q0 d1 1 2.0 run 0\n", "expected 8 columns"),
    ("1 Q0 d1 1 x run 0 5\n", "score 'x'"),
    ("1 Q0 d1 1 2.0 run -1 5\n", "offset -1 is negative"),
    ("1 Q0 d1 1 2.0 run 0 0\n", "length 0 is not positive"),
    ("1 Q0 d1 1 2.0 run 0 a\n", "length 'a' is not an integer"),
    ("1 Q0 d1 1 2.0 run 0 5\n1 Q0 d1 2 1.0 run 0 5\n", "duplicate passage"),
])
def test_passage_run_errors_name_file_and_line(tmp_path, text, message):
    path = tmp_path / "run.txt"
    path.write_text(text)
    with pytest.raises(InputFormatError, match=message) as error:
        read_passage_run(path)
    line = text.count("\n")
    assert str(error.value).startswith(f"{path}:{line}: ") and "\n" not in str(error.value)


def test_spans_errors_name_file_and_line(tmp_path):
    spans, qrels = tmp_path / "spans.txt", tmp_path / "qrels.txt"
    qrels.write_text("1 0 d1 1\n")
    spans.write_text("1 d1 0 5\n1 d1 0\n")
    with pytest.raises(InputFormatError, match=rf"^{spans}:2: expected 4 columns"):
        read_spans(spans)
    spans.write_text("# comment\n1 d1 0 5\n1 d2 3 4\n")
    with pytest.raises(InputFormatError, match=rf"^{spans}:3: .*'d2' has relevant spans but is not judged"):
        read_passage_judgments(qrels, spans)
    spans.write_text("1 d1 0 5\n1 d1 3 4\n")
    assert read_passage_judgments(qrels, spans)[1] == {"1": {"d1": [(0, 5), (3, 4)]}}


def test_run_order_follows_trec_eval(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("1 Q0 a 1 1.0 r 0 5\n1 Q0 b 2 1.0 r 9 5\n1 Q0 b 3 1.0 r 2 5\n1 Q0 c 4 3.0 r 0 5\n")
    assert read_passage_run(path).passages["1"] == (("c", 0, 5), ("b", 2, 5), ("b", 9, 5), ("a", 0, 5))


def medopt_command(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "medopt.cli", *map(str, args)], capture_output=True, text=True, cwd=cwd)


def passage_inputs(directory, run_a_text, run_b_text):
    """Two passage runs, qrels judging w relevant on topic 7 and its span: the four paths."""
    paths = [directory / name for name in ("a.txt", "b.txt", "qrels.txt", "spans.txt")]
    for path, text in zip(paths, (run_a_text, run_b_text, "7 0 w 1\n", "7 w 0 10\n")):
        path.write_text(text)
    return paths


def test_command_compare(tmp_path):
    run_a, run_b, qrels, spans = passage_inputs(tmp_path, "7 Q0 x 1 2.0 A 0 6000\n7 Q0 y 2 1.0 A 0 6000\n",
                                                "7 Q0 z 1 2.0 B 0 12000\n")
    done = medopt_command("compare", run_a, run_b, "--qrels", qrels, "--spans", spans, "-m", "U(L=12000)", "-q")
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert [(r["topic"], r["metric"]) for r in rows] == [("7", "U(L=12000)"), ("all", "U(L=12000)")]
    assert float(rows[0]["med"]) == pytest.approx(5999.5) and rows[0]["certified"] == "true"
    assert float(rows[0]["score_a"]) == 0 and float(rows[0]["score_b"]) == 0  # nothing judged relevant
    frame = medopt.compare(run_a, run_b, qrels, ["U(L=12000,gains={1:0.5})"], spans=spans)
    assert frame["med"].iloc[0] == pytest.approx(2999.75)
    ranged = medopt_command("compare", run_a, run_b, "--spans", spans, "--qrels", qrels, "-m", "U(L=12000)", "--range")
    assert ranged.returncode == 0 and "can flip" in ranged.stdout


def test_command_errors_are_one_line_exit_2(tmp_path):
    run_a, run_b, qrels, spans = passage_inputs(tmp_path, "7 Q0 x 1 2.0 A 0 60\n7 Q0 y 2 1.0 A 0\n",
                                                "7 Q0 z 1 2.0 B 0 120\n")
    done = medopt_command("compare", run_a, run_b, "--qrels", qrels, "--spans", spans, "-m", "U(L=100)")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert f"{run_a}:2: expected 8 columns" in done.stderr
    spans.write_text("7 w 0 10\n7 v x 10\n")
    run_a.write_text("7 Q0 x 1 2.0 A 0 60\n")
    done = medopt_command("compare", run_a, run_b, "--qrels", qrels, "--spans", spans, "-m", "U(L=100)")
    assert done.returncode == 2 and f"{spans}:2: offset 'x' is not an integer" in done.stderr
    done = medopt_command("compare", run_a, run_b, "--qrels", qrels, "--spans", spans, "-m", "P@10")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    spans.write_text("7 w 0 10\n")
    done = medopt_command("compare", run_a, run_b, "--spans", spans, "-m", "U(L=100)")
    assert done.returncode == 2 and f"{spans}:1: topic '7' docid 'w' has relevant spans but is not judged" in done.stderr


def test_generator_is_seeded_and_the_shipped_example_is_its_output(tmp_path):
    from medopt.synthetic.generate import generate_passage_runs, passage_example_paths, write_passage_example
    assert generate_passage_runs(2, 2, 5, seed=3) == generate_passage_runs(2, 2, 5, seed=3)
    assert generate_passage_runs(2, 2, 5, seed=3) != generate_passage_runs(2, 2, 5, seed=4)
    written = write_passage_example(tmp_path)
    for key, path in passage_example_paths().items():
        assert written[key].read_bytes() == path.read_bytes(), key
    run = read_passage_run(written["run_a"])
    assert len(run.passages) == 3 and all(len(p) == 12 for p in run.passages.values())


def test_shipped_example(tmp_path):
    from medopt.synthetic.generate import passage_example_paths
    paths = passage_example_paths()
    assert all(Path(p).stat().st_size < 20_000 for p in paths.values())
    frame = medopt.compare(paths["run_a"], paths["run_b"], paths["qrels"], ["U(L=12000)"], spans=paths["spans"])
    assert frame["certified"].all() and (frame["med"] > 0).all()
