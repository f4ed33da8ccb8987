"""SPEC 12, significance under every completion, checked against scipy and brute force:

* the p-values are scipy's (ttest_rel on the two runs' scores, binomtest on the non-zero topics),
  with SPEC 12's conventions where scipy gives nan;
* the worst case over a box equals the largest p over its 2^n vertices (random boxes);
* on small pairs (3-5 topics, every family of the registry), the worst case equals the largest
  p-value over EVERY completion of every topic (each topic's achievable differences enumerated by
  scoring both rankings under every grading of its unjudged documents), and so do ``robust`` and
  the witness;
* labels (SPEC 11) set the reference; compare --test adds the columns to the summary rows.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from scipy import stats

import medopt
from medopt.errors import MedoptError, MedoptWarning
from medopt.metrics import REGISTRY
from medopt.synthetic.random_instances import random_instances
from medopt.core.significance import (
    _largest_ratio,
    correct,
    judge,
    sign_pvalue,
    t_pvalue,
    worst_case,
)

FAMILIES = [family for family in sorted(REGISTRY)]
EXAMPLES = [REGISTRY[family].examples[0] for family in FAMILIES]


def test_t_pvalue_is_scipys():
    rng = np.random.default_rng(0)
    for n in (2, 3, 5, 20, 54):
        for _ in range(20):
            a, b = rng.random(n), rng.random(n)
            assert t_pvalue(a - b) == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-12, abs=1e-15)


def test_t_pvalue_conventions():
    assert t_pvalue([0.25, 0.25, 0.25]) == 0.0      # scipy: inf statistic or nan; SPEC 12: non-zero and equal
    assert t_pvalue([0.0, 0.0]) == 1.0              # scipy: nan
    assert t_pvalue([0.3]) == 0.0 and t_pvalue([0.0]) == 1.0
    assert np.isnan(stats.ttest_rel([0.5, 0.5], [0.5, 0.5]).pvalue)


def test_sign_pvalue_is_scipys():
    rng = np.random.default_rng(1)
    for _ in range(50):
        d = rng.choice([-0.2, 0.0, 0.1, 0.3], size=int(rng.integers(1, 30)))
        k, m = int((d > 0).sum()), int((d < 0).sum())
        expected = stats.binomtest(k, k + m, 0.5).pvalue if k + m else 1.0
        assert sign_pvalue(d) == pytest.approx(expected, rel=1e-12)


def test_unknown_test_is_refused():
    with pytest.raises(MedoptError, match="Wilcoxon"):
        worst_case("wilcoxon", [0.1], [0.2], 1)


@pytest.mark.parametrize("test", ["t", "sign"])
def test_worst_case_is_the_largest_vertex_p(test):
    rng = np.random.default_rng(2 if test == "t" else 3)
    for trial in range(400):
        n = int(rng.integers(1, 10))
        kind = trial % 3
        mid = rng.normal(0.05, 0.05 if kind == 0 else 0.3, n) if kind < 2 else rng.choice([-0.5, 0, 0.5], n)
        width = rng.uniform(0, 1, n) if kind != 1 else rng.exponential(0.1, n) * (rng.random(n) < 0.7)
        if kind == 2:
            width = rng.choice([0.0, 0.5, 1.0], n)
        low, high = mid - width / 2, mid + width / 2
        sign = int(rng.choice([-1, 1]))
        worst = worst_case(test, low, high, sign)
        vertices = [np.where(np.array(x, dtype=bool), high, low) for x in itertools.product([0, 1], repeat=n)]
        means = [v.mean() for v in vertices]
        reaches = any(m <= 1e-9 for m in means) if sign > 0 else any(m >= -1e-9 for m in means)
        assert worst.sign_kept == (not reaches)
        pick = np.where(np.array([e == "high" for e in worst.ends]), high, low)
        assert np.allclose(pick, worst.values)
        if reaches:
            assert worst.p == 1.0 and (pick.mean() <= 1e-9 if sign > 0 else pick.mean() >= -1e-9)
            continue
        brute = max((t_pvalue if test == "t" else sign_pvalue)(v) for v in vertices)
        assert worst.p == pytest.approx(brute, rel=1e-9, abs=1e-12), (trial, low, high)
        assert (t_pvalue if test == "t" else sign_pvalue)(pick) == pytest.approx(worst.p, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("warm", [True, False])
def test_branch_and_bound_finds_the_largest_ratio(warm):
    """The search itself (cold: from every topic low) against all 2^n vertices; some searches split."""
    rng = np.random.default_rng(5)
    split = 0
    for trial in range(300):
        n = int(rng.integers(2, 12))
        mid, width = rng.normal(0.05, (0.05, 0.3)[trial % 2], n), rng.uniform(0, 1, n)
        low, high = mid - width / 2, mid + width / 2
        shift = max(0.0, rng.uniform(1e-3, 0.1) - low.mean())
        low, high = low + shift, high + shift
        visits = []
        x = _largest_ratio(low, high, warm=warm, visits=visits)
        split += visits[0] > 1
        grid = np.where(np.array(list(itertools.product([False, True], repeat=n))), high, low)
        best = ((grid * grid).sum(axis=1) / grid.sum(axis=1) ** 2).max()
        d = np.where(x, high, low)
        assert (d * d).sum() / d.sum() ** 2 >= best * (1 - 1e-12), (low, high)
    assert split >= 5


def test_t_worst_case_large_n_beats_every_single_flip():
    """n = 249: no brute force; the witness is at least a local maximum of p over single flips, and
    its p is >= the p of 2000 random vertices."""
    rng = np.random.default_rng(4)
    mid, width = rng.normal(0.02, 0.2, 249), rng.exponential(0.1, 249)
    low, high = mid - width / 2, mid + width / 2
    low, high = low + (0.003 - low.mean()), high + (0.003 - low.mean())
    worst = worst_case("t", low, high, 1)
    assert worst.sign_kept
    x = np.array([e == "high" for e in worst.ends])
    for i in range(249):
        y = x.copy()
        y[i] = not y[i]
        assert t_pvalue(np.where(y, high, low)) <= worst.p * (1 + 1e-12)
    for _ in range(2000):
        assert t_pvalue(np.where(rng.random(249) < 0.5, high, low)) <= worst.p * (1 + 1e-12)


# ---------------------------------------------------------------------------
# brute force over every completion


def achievable(metric, a, b, judged, grade):
    """Every difference M(a) - M(b) over every grading of the unjudged documents of the top k of a and
    b (SPEC 7: nothing is invented outside the lists' top k)."""
    k = medopt.parse_metric(metric).cutoff
    unjudged = [d for d in dict.fromkeys([*a[:k], *b[:k]] if k else [*a, *b]) if d not in judged]
    values = set()
    for grades in itertools.product(range(grade + 1), repeat=len(unjudged)):
        full = {**judged, **dict(zip(unjudged, grades))}
        values.add(round(medopt.score(metric, a, full, max_grade=grade)
                         - medopt.score(metric, b, full, max_grade=grade), 12))
    return np.array(sorted(values))


def brute_worst(test, sets, reference_mean):
    """The largest p over every combination of the topics' achievable differences (1 when one reaches
    mean 0 or the other sign), with one combination reaching it."""
    grid = np.array(list(itertools.product(*sets)))
    means = grid.mean(axis=1)
    sign = 1 if reaches_above(reference_mean) else -1
    opposite = means <= 1e-9 if sign > 0 else means >= -1e-9
    if abs(reference_mean) <= 1e-9 or opposite.any():
        return 1.0, grid[int(np.argmax(opposite))] if opposite.any() else grid[0]
    if test == "t":
        n = grid.shape[1]
        sd = grid.std(axis=1, ddof=1)
        t = np.abs(np.sqrt(n) * means / np.where(sd > 0, sd, np.nan))
        t = np.where(np.isnan(t), np.inf, t)
        best = grid[int(np.argmin(t))]
        return t_pvalue(best), best
    counts = {(int((row > 1e-9).sum()), int((row < -1e-9).sum())): row for row in grid}
    p, best = max(((sign_pvalue(row), tuple(row)) for row in counts.values()), key=lambda c: c[0])
    return p, np.array(best)


def reaches_above(mean):
    return mean > 1e-9


def small_pairs(example, seed, count, grade=1):
    """Pairs of 3-5 topics, each a random instance with at most 3 unjudged documents (2 when graded);
    in two pairs out of three A ranks the judged relevant documents first and B last (a mean that
    keeps its sign)."""
    rng = np.random.default_rng(seed)
    metric = medopt.parse_metric(example)
    for _ in range(count):
        topics = int(rng.integers(3, 6))
        cases = list(random_instances(int(rng.integers(1 << 30)), topics, k=metric.cutoff or 5, max_grade=grade,
                                      max_unjudged=3 if grade == 1 else 2))
        if rng.random() < 2 / 3:
            for case in cases:
                case.a = sorted(case.a, key=lambda d: -(case.judgments.get(d, 0) > 0))
                case.b = sorted(case.b, key=lambda d: case.judgments.get(d, 0) > 0)
        run_a = {str(i): case.a for i, case in enumerate(cases)}
        run_b = {str(i): case.b for i, case in enumerate(cases)}
        qrels = {str(i): {**case.judgments, "anchor": 1} for i, case in enumerate(cases)}  # every topic judged
        yield run_a, run_b, qrels


@pytest.mark.parametrize("grade", [1, 2])
@pytest.mark.parametrize("test", ["t", "sign"])
@pytest.mark.parametrize("example", EXAMPLES)
def test_significance_equals_every_completion(example, test, grade):
    metric = medopt.parse_metric(example)
    checked = 0
    count = 8 if grade == 1 else 4
    for run_a, run_b, qrels in small_pairs(example, sum(map(ord, example + test)) + grade, count, grade):
        result = medopt.significance(metric, run_a, run_b, qrels, test=test, alpha=0.5, max_grade=grade)
        topics = result.topics
        sets = [achievable(metric, run_a[t], run_b[t], qrels[t], grade) for t in topics]
        observed = [medopt.score(metric, run_a[t], qrels[t], max_grade=grade)
                    - medopt.score(metric, run_b[t], qrels[t], max_grade=grade) for t in topics]
        scores_a = [medopt.score(metric, run_a[t], qrels[t], max_grade=grade) for t in topics]
        scores_b = [medopt.score(metric, run_b[t], qrels[t], max_grade=grade) for t in topics]
        if test == "t" and len(set(np.round(observed, 12))) > 1:
            assert result.p_reference == pytest.approx(stats.ttest_rel(scores_a, scores_b).pvalue, rel=1e-9)
        p, _ = brute_worst(test, sets, float(np.mean(observed)))
        context = (example, test, run_a, run_b, qrels)
        assert result.p_worst == pytest.approx(p, rel=1e-9, abs=1e-12), context
        assert result.robust == (p < 0.5), context  # brute_worst: 1 unless every completion keeps the sign
        witness = np.array([result.witness[t][1] for t in topics])
        for value, values in zip(witness, sets):  # each witness difference is achievable, and is an end
            assert np.min(np.abs(values - value)) <= 1e-9
            assert min(abs(value - values[0]), abs(value - values[-1])) <= 1e-9
        own = (t_pvalue if test == "t" else sign_pvalue)(witness)
        mean, reference = witness.mean(), np.mean(observed)
        reaches = mean <= 1e-9 if reference > 1e-9 else mean >= -1e-9 if reference < -1e-9 else True
        if p < 1.0:  # the witness reaches p_worst
            assert own == pytest.approx(p, rel=1e-9, abs=1e-12), context
        else:        # its own p is 1, or it reaches mean 0 or the other side
            assert own == pytest.approx(1.0) or reaches, context
        assert result.certified, context
        checked += 1
    assert checked == count


def decisive_pair(rng, topics=6):
    """A pair where A holds the judged relevant documents above B's: significant, a few holes."""
    run_a, run_b, qrels = {}, {}, {}
    for t in range(topics):
        rel = [f"r{t}_{i}" for i in range(3)]
        junk = [f"j{t}_{i}" for i in range(3)]
        holes = [f"u{t}_{i}" for i in range(int(rng.integers(0, 3)))]
        run_a[str(t)] = rel[: 2 + t % 2] + holes + junk
        run_b[str(t)] = junk[:2] + holes[::-1] + rel[:1] + junk[2:]
        qrels[str(t)] = {**{d: 1 for d in rel}, **{d: 0 for d in junk}}
    return run_a, run_b, qrels


@pytest.mark.parametrize("test", ["t", "sign"])
def test_robust_pairs_against_every_completion(test):
    """Pairs built to be significant: robust at 0.05 exactly when every completion keeps p < 0.05."""
    rng = np.random.default_rng(7)
    seen = set()
    for _ in range(8):
        run_a, run_b, qrels = decisive_pair(rng, topics=int(rng.integers(5, 8)) if test == "sign" else 4)
        result = medopt.significance("nDCG@5", run_a, run_b, qrels, test=test, max_grade=1)
        sets = [achievable("nDCG@5", run_a[t], run_b[t], qrels[t], 1) for t in result.topics]
        p, _ = brute_worst(test, sets, result.mean_reference)
        assert result.p_worst == pytest.approx(p, rel=1e-9, abs=1e-12)
        assert result.robust == (p < 0.05)
        assert result.certified
        seen.add(result.robust)
    assert True in seen


def test_labels_set_the_reference():
    run_a = {"1": ["a", "u1", "b"], "2": ["c", "u2", "d"], "3": ["e", "f", "u3"]}
    run_b = {"1": ["b", "a", "u1"], "2": ["d", "c"], "3": ["u3", "e", "f"]}
    qrels = {"1": {"a": 1, "b": 0}, "2": {"c": 1, "d": 0}, "3": {"e": 1, "f": 0}}
    labels = {"1": {"u1": 1, "a": 0}, "2": {"u2": 1}, "3": {"u3": 1}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = medopt.significance("P@2", run_a, run_b, qrels, labels=labels, max_grade=1)
    assert any(issubclass(w.category, MedoptWarning) and "judged" in str(w.message) for w in caught)
    grades = {t: {**qrels[t], **{d: g for d, g in labels[t].items() if d not in qrels[t]}} for t in qrels}
    a = [medopt.score("P@2", run_a[t], grades[t]) for t in sorted(qrels)]
    b = [medopt.score("P@2", run_b[t], grades[t]) for t in sorted(qrels)]
    assert [result.reference[t] for t in sorted(qrels)] == pytest.approx(np.subtract(a, b).tolist())
    assert result.p_reference == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-12)
    plain = medopt.significance("P@2", run_a, run_b, qrels, max_grade=1)
    assert plain.p_worst == result.p_worst  # the worst case does not depend on the reference's values


def test_p_bound_is_the_worst_case_over_the_bounds():
    """An end not proven (a bound beyond it): p_bound is the worst case over the box of the bounds."""
    reference, low, high = [0.3, 0.2, 0.25], [0.1, 0.05, 0.2], [0.4, 0.3, 0.3]
    low_bound, high_bound = [0.1, 0.0, 0.2], [0.45, 0.3, 0.3]
    for test in ("t", "sign"):
        verdict = judge(test, 0.05, reference, low, high, low_bound, high_bound)
        assert verdict["p_worst"] == worst_case(test, low, high, 1).p
        assert verdict["p_bound"] == worst_case(test, low_bound, high_bound, 1).p >= verdict["p_worst"]
    sign = judge("sign", 0.05, reference, low, high, low_bound, high_bound)  # a bound reaches 0: 2 of 2 left
    assert (sign["p_worst"], sign["p_bound"]) == (stats.binomtest(3, 3).pvalue, stats.binomtest(2, 2).pvalue)


def test_bad_alpha():
    run_a, run_b, qrels = decisive_pair(np.random.default_rng(0), 3)
    with pytest.raises(MedoptError, match="alpha"):
        medopt.significance("P@5", run_a, run_b, qrels, alpha=2)


def test_corrections():
    p = [0.01, 0.04, 0.03, 0.2]
    assert correct(p, "bonferroni") == pytest.approx([0.04, 0.16, 0.12, 0.8])
    assert correct(p, "holm") == pytest.approx([0.04, 0.09, 0.09, 0.2])
    assert correct(p, "none") == p


def test_compare_summary_has_the_test_columns():
    run_a, run_b, qrels = decisive_pair(np.random.default_rng(3), 5)
    frame = medopt.compare(run_a, run_b, qrels, ["nDCG@5", "P@5"], per_topic=False, test="t", max_grade=1)
    for metric in ("nDCG@5", "P@5"):
        row = frame[frame.metric == metric].iloc[0]
        direct = medopt.significance(metric, run_a, run_b, qrels, max_grade=1)
        assert row.p_reference == pytest.approx(direct.p_reference, rel=1e-12)
        assert row.p_worst == pytest.approx(direct.p_worst, rel=1e-12)
        assert bool(row.robust) == direct.robust


def test_compare_test_takes_labels_as_the_reference(tmp_path):
    """compare --test --labels (SPEC 12): p_reference under J with the labels L, as scipy on the labelled
    per-topic scores; p_worst does not depend on the reference's values; a label of a judged document is
    ignored, with a warning."""
    import csv
    import io

    from click.testing import CliRunner

    from medopt.cli import main
    from medopt.io.trec import write_qrels

    run_a = {"1": ["a", "u1", "b"], "2": ["c", "u2", "d"], "3": ["e", "f", "u3"], "4": ["g", "u4", "h"]}
    run_b = {"1": ["b", "a", "u1"], "2": ["d", "c"], "3": ["u3", "e", "f"], "4": ["h", "g", "u4"]}
    qrels = {"1": {"a": 1, "b": 0}, "2": {"c": 1, "d": 0}, "3": {"e": 1, "f": 0}, "4": {"g": 1, "h": 0}}
    labels = {"1": {"u1": 1, "a": 0}, "2": {"u2": 1}, "3": {"u3": 1}, "4": {"u4": 1}}
    grades = {t: {**qrels[t], **{d: g for d, g in labels[t].items() if d not in qrels[t]}} for t in qrels}
    for metric in ("P@2", "AP@3"):
        a = [medopt.score(metric, run_a[t], grades[t]) for t in sorted(qrels)]
        b = [medopt.score(metric, run_b[t], grades[t]) for t in sorted(qrels)]
        expected = stats.ttest_rel(a, b).pvalue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            frame = medopt.compare(run_a, run_b, qrels, [metric], per_topic=False, test="t", labels=labels,
                                   max_grade=1)
        assert any("ignored" in str(w.message) for w in caught)
        row = frame.iloc[0]
        assert row.p_reference == pytest.approx(expected, rel=1e-12)
        plain = medopt.compare(run_a, run_b, qrels, [metric], per_topic=False, test="t", max_grade=1).iloc[0]
        assert plain.p_reference != pytest.approx(expected, rel=1e-6)  # the labels do change it here
        direct = medopt.significance(metric, run_a, run_b, qrels, labels=labels, max_grade=1)
        assert row.p_worst == pytest.approx(direct.p_worst, rel=1e-12) and bool(row.robust) == direct.robust
    paths = write_pair(tmp_path, run_a, run_b, qrels)
    write_qrels(tmp_path / "labels.txt", labels)
    result = CliRunner().invoke(main, ["compare", *map(str, paths[:2]), "--qrels", str(paths[2]), "-m", "P@2",
                                       "--test", "t", "--labels", str(tmp_path / "labels.txt")])
    assert result.exit_code == 0, result.output
    (summary,) = [r for r in csv.DictReader(io.StringIO(result.stdout)) if r["topic"] == "all"]
    a = [medopt.score("P@2", run_a[t], grades[t]) for t in sorted(qrels)]
    b = [medopt.score("P@2", run_b[t], grades[t]) for t in sorted(qrels)]
    assert float(summary["p_reference"]) == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-9)
    result = CliRunner().invoke(main, ["compare", *map(str, paths[:2]), "--qrels", str(paths[2]), "-m", "P@2",
                                       "--labels", str(tmp_path / "labels.txt")])
    assert result.exit_code == 2 and "--flip" in result.output
    result = CliRunner().invoke(main, ["matrix", *map(str, paths[:2]), "--qrels", str(paths[2]), "-m", "P@2",
                                       "--test", "t", "--flip", "--labels", str(tmp_path / "labels.txt"), "--summary",
                                       str(tmp_path / "s.csv"), "--store", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 2 and "compare --test --labels" in result.output
    assert not (tmp_path / "s.sqlite").exists()


def write_pair(tmp_path, run_a, run_b, qrels):
    from medopt.io.trec import write_qrels, write_run

    write_run(tmp_path / "a.run", run_a, "A")
    write_run(tmp_path / "b.run", run_b, "B")
    write_qrels(tmp_path / "q.txt", qrels)
    return tmp_path / "a.run", tmp_path / "b.run", tmp_path / "q.txt"


@pytest.mark.parametrize("test", ["t", "sign"])
def test_cli_compare_test(tmp_path, test):
    import csv
    import io

    from click.testing import CliRunner

    from medopt.cli import main

    run_a, run_b, qrels = decisive_pair(np.random.default_rng(11), 6)
    a, b, q = write_pair(tmp_path, run_a, run_b, qrels)
    result = CliRunner().invoke(main, ["compare", str(a), str(b), "--qrels", str(q), "-m", "nDCG@5", "--test", test,
                                       "--alpha", "0.1", "-q"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.output)))
    summary = [r for r in rows if r["topic"] == "all"]
    assert len(summary) == 1 and all(r["p_worst"] == "" for r in rows if r["topic"] != "all")
    direct = medopt.significance("nDCG@5", a, b, q, test=test, alpha=0.1)
    assert float(summary[0]["p_reference"]) == pytest.approx(direct.p_reference, rel=1e-9)
    assert float(summary[0]["p_worst"]) == pytest.approx(direct.p_worst, rel=1e-9)
    assert summary[0]["robust"] == str(direct.robust).lower()


def test_cli_compare_refuses_a_bad_test_or_alpha(tmp_path):
    from click.testing import CliRunner

    from medopt.cli import main

    a, b, q = write_pair(tmp_path, *decisive_pair(np.random.default_rng(12), 3))
    for extra in (["--test", "wilcoxon"], ["--test", "t", "--alpha", "1.5"]):
        result = CliRunner().invoke(main, ["compare", str(a), str(b), "--qrels", str(q), "-m", "P@5", *extra])
        assert result.exit_code == 2, result.output


def three_runs():
    run_a, run_b, qrels = decisive_pair(np.random.default_rng(3), 6)
    run_c = {t: list(reversed(ranking)) for t, ranking in run_a.items()}
    return {"A": run_a, "B": run_b, "C": run_c}, qrels


@pytest.mark.parametrize("correction", ["none", "holm", "bonferroni"])
def test_matrix_summary_test_and_correction(correction):
    runs, qrels = three_runs()
    frame = medopt.matrix(runs, qrels, ["nDCG@5"], summary=True, test="t", correction=correction, jobs=1,
                          max_grade=1)
    direct = [medopt.significance("nDCG@5", runs[x], runs[y], qrels, max_grade=1)
              for x, y in zip(frame.run_a, frame.run_b)]
    worst = correct([d.p_worst for d in direct], correction)
    assert frame.p_worst.tolist() == pytest.approx(worst, rel=1e-12)
    assert frame.p_reference.tolist() == pytest.approx(correct([d.p_reference for d in direct], correction), rel=1e-12)
    assert frame.robust.tolist() == [p < 0.05 and d.mean_low * d.mean_high > 0 for p, d in zip(worst, direct)]
    assert frame.robust.any()


def test_cli_matrix_test_writes_the_summary(tmp_path):
    import csv

    from click.testing import CliRunner

    from medopt.cli import main
    from medopt.io.trec import write_qrels, write_run

    runs, qrels = three_runs()
    for name, run in runs.items():
        write_run(tmp_path / f"{name}.run", run, name)
    write_qrels(tmp_path / "q.txt", qrels)
    paths = [str(tmp_path / f"{name}.run") for name in runs]
    common = ["matrix", *paths, "--qrels", str(tmp_path / "q.txt"), "-m", "nDCG@5", "-j", "1"]
    result = CliRunner().invoke(main, [*common, "--store", str(tmp_path / "m.sqlite"), "--summary",
                                       str(tmp_path / "s.csv"), "--test", "sign", "--correction", "bonferroni"])
    assert result.exit_code == 0, result.output
    with open(tmp_path / "s.csv") as handle:
        rows = list(csv.DictReader(handle))
    expected = medopt.matrix(runs, qrels, ["nDCG@5"], summary=True, test="sign", correction="bonferroni", jobs=1)
    assert [float(r["p_worst"]) for r in rows] == pytest.approx(expected.p_worst.tolist(), rel=1e-12)
    assert [r["robust"] for r in rows] == [str(v).lower() for v in expected.robust.tolist()]
    result = CliRunner().invoke(main, [*common, "--store", str(tmp_path / "n.sqlite"), "--test", "t"])
    assert result.exit_code == 2 and not (tmp_path / "n.sqlite").exists()


def test_pad_and_residual_are_refused():
    run_a, run_b, qrels = decisive_pair(np.random.default_rng(1), 3)
    for option in ({"pad": "irrelevant"}, {"residual": True}):
        with pytest.raises(MedoptError, match="pad and residual"):
            medopt.significance("RBP(p=0.8)", run_a, run_b, qrels, **option)


def test_bad_options_are_refused_before_any_work():
    runs, qrels = three_runs()
    for options in ({"test": "wilcoxon"}, {"test": "t", "alpha": 0}, {"test": "t", "correction": "fdr"}):
        with pytest.raises(MedoptError, match="wilcoxon|alpha|correction"):
            medopt.matrix(runs, qrels, ["P@5"], summary=True, jobs=1, **options)
    with pytest.raises(MedoptError, match="alpha"):
        medopt.compare(runs["A"], runs["B"], qrels, ["P@5"], test="sign", alpha=True)
