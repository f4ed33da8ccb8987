"""Relevance models and the distribution of differences (SPEC 13), against an enumeration oracle: every
assignment of grades to the unjudged documents, weighted by its probability, scored by the metric's own
evaluator (``metric.score`` on the collection's grades), independent of the code under test."""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

import medopt
from medopt.core.instance import build_instance
from medopt.errors import InputFormatError, MedoptError
from medopt.metrics import REGISTRY, parse_metric
from medopt.relevance import (fit_rank_model, mean_distribution, parse_model, read_probabilities, topic_terms,
                              Uniform)
from medopt.relevance.distribution import clopper_pearson, sample_differences
from medopt.relevance.scoring import SCORERS, vector_scores

TOL = 1e-9
EXAMPLES = [example for cls in REGISTRY.values() for example in cls.examples]


def random_topic(rng: random.Random, top: int, size: int = 5, unjudged_at_most: int = 5):
    """Two rankings over a small pool, some documents judged, at most ``unjudged_at_most`` unjudged in the
    lists; judged relevant documents outside the lists too (they count for recall-based metrics)."""
    pool = [f"d{i}" for i in range(9)]
    a = rng.sample(pool, rng.randint(1, size))
    b = rng.sample(pool, rng.randint(0, size))
    listed = list(dict.fromkeys(a + b))
    unjudged = set(rng.sample(listed, min(len(listed), rng.randint(0, unjudged_at_most))))
    judged = {d: rng.randint(-1, top) for d in listed if d not in unjudged}
    for extra in range(rng.randint(0, 2)):
        judged[f"x{extra}"] = rng.randint(1, top)
    return a, b, judged


def random_model(rng: random.Random, docs, top: int) -> dict:
    model = {}
    for d in docs:
        if rng.random() < 0.3:
            model[d] = round(rng.random(), 3)  # binary row: P(grade G)
        else:
            weights = [rng.random() if rng.random() < 0.8 else 0.0 for _ in range(top + 1)]
            weights[0] += 1e-3
            total = sum(weights)
            model[d] = [w / total for w in weights]
    return model


def rows(model: dict, top: int) -> dict:
    """The model's grade distributions as the oracle reads them (a binary row puts p on grade G)."""
    out = {}
    for d, value in model.items():
        if isinstance(value, float):
            row = [0.0] * (top + 1)
            row[0], row[top] = 1 - value, value
            out[d] = row
        else:
            out[d] = list(value)
    return out


def oracle(metric, a, b, judged, model, top):
    """(E[d], Var[d], P(d > 0), P(d < 0), min, max over positive-probability assignments) by enumeration."""
    metric = parse_metric(metric)
    instance = build_instance(metric, a, b, judged, max_grade=top)
    docs = instance.unjudged
    table = rows(model, top)
    grading = instance.grading
    outcomes = []
    for grades in itertools.product(range(top + 1), repeat=len(docs)):
        weight = math.prod(table[d][g] for d, g in zip(docs, grades))
        if weight == 0:
            continue
        collection = dict(instance.judgments)
        collection.update(zip(docs, grades))
        d = metric.score(instance.a, collection, grading) - metric.score(instance.b, collection, grading)
        outcomes.append((d, weight))
    expected = math.fsum(d * w for d, w in outcomes)
    variance = math.fsum(w * (d - expected) ** 2 for d, w in outcomes)
    return (expected, variance, math.fsum(w for d, w in outcomes if d > TOL),
            math.fsum(w for d, w in outcomes if d < -TOL), min(d for d, _ in outcomes), max(d for d, _ in outcomes),
            outcomes)


def instances(seed: int, count: int, top_choices=(1, 2)):
    rng = random.Random(seed)
    for _ in range(count):
        top = rng.choice(top_choices)
        a, b, judged = random_topic(rng, top)
        docs = [d for d in dict.fromkeys(a + b) if d not in judged]
        yield a, b, judged, random_model(rng, docs, top), top


def _grade_ok(metric: str, top: int) -> bool:
    """The metric takes this G (its gains map may need a larger one)."""
    try:
        build_instance(metric, ("d0",), (), {}, max_grade=top)
    except MedoptError:
        return False
    return True


@pytest.mark.parametrize("metric", EXAMPLES)
def test_exact_and_bounded_against_the_oracle(metric):
    """Every family: exact answers equal the oracle, bounded intervals contain it, the moments are exact,
    and the worst-case range (SPEC 7) contains the support."""
    checked = 0
    for a, b, judged, model, top in instances(hash(metric) % 1000, 12, (1, 2, 3)):
        if not _grade_ok(metric, top):
            continue
        expected, variance, positive, negative, low, high, outcomes = oracle(metric, a, b, judged, model, top)
        ties = math.fsum(w for d, w in outcomes if abs(d) <= 1e-9)
        result = medopt.difference_distribution(metric, a, b, judged, model=model, max_grade=top,
                                                check_range=checked < 3)
        assert result.expected == pytest.approx(expected, abs=1e-9)
        assert result.sd == pytest.approx(math.sqrt(variance), abs=1e-7)
        assert result.support[0] == pytest.approx(low, abs=1e-9) and result.support[1] == pytest.approx(high, abs=1e-9)
        if result.method == "exact":  # (a linear topic too, enumerated when its grid stays wide: a tie)
            assert result.p_positive_interval[0] == result.p_positive_interval[1]
            assert result.p_positive == pytest.approx(positive, abs=1e-9)
            assert result.p_negative == pytest.approx(negative, abs=1e-9)
        else:
            assert result.method == "bounded"
            # within 1e-3, or (a tie reached by cancelling terms stays undecided on every grid) the tie's mass
            lo, hi = result.p_positive_interval
            assert lo - 1e-12 <= positive <= hi + 1e-12 and hi - lo <= 1e-3 + ties
            lo, hi = result.p_negative_interval
            assert lo - 1e-12 <= negative <= hi + 1e-12 and hi - lo <= 1e-3 + ties
            assert result.width <= 1e-3 + ties
        checked += 1
    assert checked >= 6


@pytest.mark.parametrize("metric", ["AP@5", "nDCG@5", "RR@5", "ERR@5", "Q(beta=1)@4", "R@5", "SN_AP@5", "P@5",
                                    "DCG@4"])
def test_sampled_intervals_cover_at_about_their_level(metric):
    """Clopper-Pearson 99% intervals from seeded draws contain the enumeration's truth in about 99% of
    seeds (at least 95% of 300 here: a miss rate above 5% has probability below 1e-6 at level 99%)."""
    rng = random.Random(7)
    cases = []
    while len(cases) < 3:
        a, b, judged, model, top = next(instances(rng.randint(0, 10 ** 6), 1))
        truth = oracle(metric, a, b, judged, model, top)
        if 0.05 < truth[2] < 0.95:
            cases.append((a, b, judged, model, top, truth[2]))
    misses = total = 0
    for a, b, judged, model, top, positive in cases:
        instance = build_instance(metric, a, b, judged, max_grade=top)
        terms = topic_terms(instance, parse_model(model), "")
        for seed in range(100):
            draws = sample_differences(terms, np.random.default_rng(seed), 400)
            lo, hi = clopper_pearson(int(np.count_nonzero(draws > TOL)), 400)
            misses += not (lo <= positive <= hi)
            total += 1
    assert misses <= 0.05 * total


def test_the_same_seed_gives_the_same_draws():
    instance = build_instance("AP@5", ("a", "b", "c", "d"), ("c", "e", "a"), {"a": 1}, max_grade=2)
    terms = topic_terms(instance, Uniform(0.4), "")
    first = sample_differences(terms, np.random.default_rng(3), 500)
    again = sample_differences(terms, np.random.default_rng(3), 500)
    other = sample_differences(terms, np.random.default_rng(4), 500)
    assert np.array_equal(first, again) and not np.array_equal(first, other)
    ask = lambda seed: medopt.difference_distribution("AP@5", ("a", "b", "c", "d"), ("c", "e", "a"), {"a": 1},
                                                      model="uniform(p=0.4)", enumerate_limit=0, seed=seed)
    first, again, other = ask(11), ask(11), ask(12)
    assert first.method == "sampled"
    assert (first.expected, first.p_positive_interval) == (again.expected, again.p_positive_interval)
    assert first.expected != other.expected


@pytest.mark.parametrize("metric", sorted(SCORERS) + ["AP(norm=min)@4", "AP(rel=2)@5", "nDCG", "nDCG(dcg=exp-log2)@4",
                                                      "nDCG(gains={1:2,2:3})@4", "RR(rel=2)@4", "ERR@4"])
def test_vectorised_scores_equal_the_evaluator(metric):
    metric = metric if "@" in metric or "(" in metric or metric == "nDCG" else f"{metric}@5"
    rng = random.Random(5)
    for _ in range(20):
        a, b, judged, _, top = next(instances(rng.randint(0, 10 ** 6), 1, (2,)))
        instance = build_instance(metric, a, b, judged, max_grade=top)
        docs = instance.unjudged
        grades = np.random.default_rng(rng.randint(0, 100)).integers(0, top + 1, size=(30, len(docs)))
        fast = vector_scores(instance, docs, grades)
        for row, drawn in enumerate(grades):
            score_a, score_b = instance.scores(dict(zip(docs, map(int, drawn))))
            assert fast[row] == pytest.approx(score_a - score_b, abs=1e-12)


@pytest.mark.parametrize("metric", ["AP@5", "AP", "AP(norm=min)@4", "AP(rel=2)@5", "nDCG@5", "nDCG",
                                    "nDCG(dcg=exp-log2)@4", "nDCG(gains={1:2,2:3})@4", "nDCG@3"])
def test_compiled_samplers_equal_the_evaluator(metric):
    from medopt.relevance.distribution import grades_of
    from medopt.relevance.scoring import compiled_scores

    rng = random.Random(6)
    for _ in range(20):
        a, b, judged, model, top = next(instances(rng.randint(0, 10 ** 6), 1, (2,)))
        instance = build_instance(metric, a, b, judged, max_grade=top)
        terms = topic_terms(instance, parse_model(model), "")
        uniform = np.random.default_rng(rng.randint(0, 100)).random((30, len(terms.docs)))
        cdf = np.cumsum(terms.probs, axis=1)
        fast = compiled_scores(instance, terms.docs, uniform, cdf)
        for row, drawn in enumerate(grades_of(uniform, cdf)):
            score_a, score_b = instance.scores(dict(zip(terms.docs, map(int, drawn))))
            assert fast[row] == pytest.approx(score_a - score_b, abs=1e-12)


def _joint_oracle(metric, topics, top):
    """P(mean d > 0) over independent topics, by enumerating each topic's outcomes and combining them."""
    combined = {0.0: 1.0}
    for a, b, judged, model in topics:
        outcomes = oracle(metric, a, b, judged, model, top)[6]
        merged = {}
        for total, weight in combined.items():
            for d, w in outcomes:
                key = total + d
                merged[key] = merged.get(key, 0.0) + weight * w
        combined = merged
    count = len(topics)
    return (math.fsum(w for s, w in combined.items() if s / count > TOL),
            math.fsum(w for s, w in combined.items() if s / count < -TOL),
            math.fsum(w * s for s, w in combined.items()) / count,
            math.fsum(w for s, w in combined.items() if abs(s / count) <= TOL))


@pytest.mark.parametrize("metric", ["P@5", "DCG@5", "RBP(p=0.5)@5", "AP@5", "nDCG@5", "RR@5"])
def test_the_mean_over_topics_against_the_oracle(metric):
    rng = random.Random(hash(metric) % 97)
    top = 2
    for _ in range(4):
        topics = []
        for _ in range(3):
            a, b, judged, model, _ = next(instances(rng.randint(0, 10 ** 6), 1, (top,)))
            topics.append((a, b, judged, model))
        positive, negative, expected, ties = _joint_oracle(metric, topics, top)
        terms = [topic_terms(build_instance(metric, a, b, judged, max_grade=top), parse_model(model), "")
                 for a, b, judged, model in topics]
        result = mean_distribution(terms)
        assert result.expected == pytest.approx(expected, abs=1e-9)
        lo, hi = result.p_positive_interval
        if result.method == "sampled":  # a tie by cancelling terms kept the grid wider than the sampler's 0.02
            assert ties > 0.02 - 1e-3 and lo - 0.02 <= positive <= hi + 0.02
            continue
        assert lo - 1e-12 <= positive <= hi + 1e-12 and hi - lo <= 1e-3 + ties  # a tie: see above
        lo, hi = result.p_negative_interval
        assert lo - 1e-12 <= negative <= hi + 1e-12
        if result.method == "exact":
            assert result.p_positive == pytest.approx(positive, abs=1e-9)
        sampled = mean_distribution(terms, enumerate_limit=0, draws=4000, seed=1)
        if not terms[0].linear:
            assert sampled.method == "sampled"
            lo, hi = sampled.p_positive_interval
            assert lo - 0.02 <= positive <= hi + 0.02


def test_p_flip_follows_the_reference():
    # A ahead under trec_eval (d1 relevant at rank 1 of A only): P(flip) = P(mean d <= 0)
    result = medopt.difference_distribution("P@2", ("d1", "u1"), ("d2", "u2"), {"d1": 1, "d2": 0},
                                            model="uniform(p=0.5)")
    assert result.method == "exact" and result.reference == pytest.approx(0.5)
    assert result.p_flip == pytest.approx(0.25)  # u2 relevant and u1 not: a tie
    tie = medopt.difference_distribution("P@2", ("u1",), ("u2",), {}, model="uniform(p=0.5)")
    assert tie.p_flip == 1.0


def test_rank_model_is_isotonic_and_reported():
    rng = np.random.default_rng(0)
    runs, qrels = [{}, {}], {}
    for t in range(30):
        docs = [f"t{t}d{i}" for i in range(60)]
        for run in runs:
            run[str(t)] = tuple(rng.permutation(docs)[:40]) if run is runs[1] else tuple(docs[:40])
        qrels[str(t)] = {d: int(rng.random() < 0.8 * math.exp(-i / 10)) * int(rng.integers(1, 3))
                         for i, d in enumerate(docs) if rng.random() < 0.5}
    model = fit_rank_model(runs, qrels, 2)
    table = model.table
    assert table.shape == (40, 3)
    assert np.allclose(table.sum(axis=1), 1.0) and np.all(table >= 0)
    for g in (1, 2):
        at_least = table[:, g:].sum(axis=1)
        assert np.all(np.diff(at_least) <= 1e-12)
    assert at_least[0] > at_least[-1]
    assert model.fit["judged"] > 0 and "rank model" in model.describe()
    beyond = model.probabilities("0", ["x"], [1000], 2)
    assert np.allclose(beyond, table[-1])


def test_parse_model_forms(tmp_path):
    assert parse_model("rank") == "rank"
    assert parse_model("uniform(p=0.3)").p == 0.3 and parse_model("uniform(0.25)").p == 0.25
    for bad in ("uniform(p=2)", "uniform(p=x)", "uniform", "nothing-like-a-file"):
        with pytest.raises(MedoptError):
            parse_model(bad)
    path = tmp_path / "p.txt"
    path.write_text("# comment\n1 a 0.2\n1 b 0.9\n")
    model = parse_model(str(path))
    assert np.allclose(model.probabilities("1", ["a", "b"], [1, 2], 2), [[0.8, 0, 0.2], [0.1, 0, 0.9]])
    graded = tmp_path / "g.txt"
    graded.write_text("1 a 0.5 0.25 0.25\n")
    assert np.allclose(read_probabilities(graded).probabilities("1", ["a"], [1], 2), [[0.5, 0.25, 0.25]])
    with pytest.raises(MedoptError, match="no probability"):
        model.probabilities("1", ["c"], [1], 2)


@pytest.mark.parametrize("text, message", [
    ("1 a\n", "p.txt:1: expected"),
    ("1 a 0.2\n1 b 1.2\n", "p.txt:2: probability '1.2'"),
    ("1 a 0.2\n1 b 0.5 0.5\n", "p.txt:2: 2 probabilities here"),
    ("1 a 0.5 0.6\n", "p.txt:1: the probabilities sum"),
    ("1 a 0.2\n1 a 0.3\n", "p.txt:2: topic '1' docid 'a' again"),
    ("1 a nan\n", "p.txt:1: probability 'nan'"),
])
def test_bad_probability_files(tmp_path, text, message):
    path = tmp_path / "p.txt"
    path.write_text(text)
    with pytest.raises(InputFormatError) as error:
        read_probabilities(path)
    assert message in str(error.value)


def test_judged_rows_are_ignored_with_a_warning(tmp_path):
    path = tmp_path / "p.txt"
    path.write_text("1 a 0.9\n1 u 0.5\n")
    with pytest.warns(medopt.errors.MedoptWarning, match="1 row"):
        result = medopt.difference_distribution("P@2", ("a", "u"), ("b",), {"a": 0, "b": 1}, model=str(path))
    assert result.expected == pytest.approx(-0.5 + 0.25)


def _write_pair(tmp_path, topics):
    """Runs A and B and qrels files of ``topics`` (a, b, judged, model) under topic ids 1..n; the model's
    rows as a probabilities file (graded rows)."""
    with open(tmp_path / "a.run", "w") as fa, open(tmp_path / "b.run", "w") as fb, \
            open(tmp_path / "q.qrels", "w") as fq, open(tmp_path / "p.txt", "w") as fp:
        for t, (a, b, judged, model) in enumerate(topics, start=1):
            for out, ranking, name in ((fa, a, "A"), (fb, b, "B")):
                for rank, doc in enumerate(ranking, start=1):
                    out.write(f"{t} Q0 {doc} {rank} {100 - rank} {name}\n")
            for doc, grade in judged.items():
                fq.write(f"{t} 0 {doc} {grade}\n")
            fq.write(f"{t} 0 always-judged 0\n")
            for doc, row in rows(model, 2).items():
                fp.write(f"{t} {doc} " + " ".join(repr(float(p)) for p in row) + "\n")


def test_compare_model_columns_against_the_oracle(tmp_path):
    import csv
    import io

    from click.testing import CliRunner

    from medopt.cli import main

    rng = random.Random(3)
    topics = []
    while len(topics) < 3:
        a, b, judged, model, _ = next(instances(rng.randint(0, 10 ** 6), 1, (2,)))
        if a and b:
            judged["x-top"] = 2  # every topic judges grade 2: G = 2 throughout
            topics.append((a, b, judged, model))
    _write_pair(tmp_path, topics)
    result = CliRunner().invoke(main, ["compare", str(tmp_path / "a.run"), str(tmp_path / "b.run"), "--qrels",
                                       str(tmp_path / "q.qrels"), "-m", "P@3", "-m", "AP@5", "--range", "--model",
                                       str(tmp_path / "p.txt")])
    assert result.exit_code == 0, result.output
    out = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [r["metric"] for r in out] == ["P@3", "AP@5"]
    for row in out:
        positive, negative, expected, _ = _joint_oracle(row["metric"], topics, 2)
        assert float(row["expected"]) == pytest.approx(expected, abs=1e-9)
        assert float(row["p_low"]) - 1e-9 <= positive <= float(row["p_high"]) + 1e-9
        assert row["p_method"] in ("exact", "bounded")
        reference = float(row["diff"])
        flip = (1 - positive) if reference > 0 else (1 - negative) if reference < 0 else 1.0
        assert float(row["p_flip_low"]) - 1e-9 <= flip <= float(row["p_flip_high"]) + 1e-9
    frame = medopt.compare(str(tmp_path / "a.run"), str(tmp_path / "b.run"), str(tmp_path / "q.qrels"), "AP@5",
                           model="uniform(p=0.3)", per_topic=False)
    assert frame["p_method"].iloc[0] in ("exact", "bounded") and 0 <= frame["p_a_better"].iloc[0] <= 1
    (tmp_path / "bad.txt").write_text("1 a 0.5\n1 b 0.5 0.5\n")
    result = CliRunner().invoke(main, ["compare", str(tmp_path / "a.run"), str(tmp_path / "b.run"), "--qrels",
                                       str(tmp_path / "q.qrels"), "-m", "P@3", "--model", str(tmp_path / "bad.txt")])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    assert "bad.txt:2" in result.output, result.output
    result = CliRunner().invoke(main, ["compare", str(tmp_path / "a.run"), str(tmp_path / "b.run"), "--qrels",
                                       str(tmp_path / "q.qrels"), "-m", "P@3", "--model", "uniform(p=3)"])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    result = CliRunner().invoke(main, ["compare", str(tmp_path / "a.run"), str(tmp_path / "b.run"), "--qrels",
                                       str(tmp_path / "q.qrels"), "-m", "P@3", "--seed", "3"])
    assert result.exit_code == 2 and "--model" in result.output


def test_matrix_model_summary(tmp_path):
    import csv

    from click.testing import CliRunner

    from medopt.cli import main

    rng = random.Random(8)
    topics = []
    while len(topics) < 2:
        a, b, judged, model, _ = next(instances(rng.randint(0, 10 ** 6), 1, (1,)))
        if a and b:
            topics.append((a, b, judged, model))
    _write_pair(tmp_path, topics)
    result = CliRunner().invoke(main, ["matrix", str(tmp_path / "a.run"), str(tmp_path / "b.run"), "--qrels",
                                       str(tmp_path / "q.qrels"), "-m", "P@3", "--store", str(tmp_path / "s.sqlite"),
                                       "--summary", str(tmp_path / "sum.csv"), "--model", "rank", "-j", "1",
                                       "--no-progress"])
    assert result.exit_code == 0, result.output
    out = list(csv.DictReader(open(tmp_path / "sum.csv")))
    assert len(out) == 1 and out[0]["p_method"] == "exact" and out[0]["p_model"].startswith("rank model")
    direct = medopt.compare(str(tmp_path / "a.run"), str(tmp_path / "b.run"), str(tmp_path / "q.qrels"), "P@3",
                            model="rank", per_topic=False)
    assert float(out[0]["p_a_better"]) == pytest.approx(float(direct["p_a_better"].iloc[0]))


@pytest.mark.parametrize("metric", ["P@3", "AP@5"])
def test_plot_distribution_of_a_pair(tmp_path, metric):
    from click.testing import CliRunner

    from medopt.cli import main

    rng = random.Random(4)
    topics = []
    while len(topics) < 3:
        a, b, judged, model, _ = next(instances(rng.randint(0, 10 ** 6), 1, (1,)))
        if a and b:
            topics.append((a, b, judged, model))
    _write_pair(tmp_path, topics)
    out = tmp_path / "likely.png"
    result = CliRunner().invoke(main, ["plot", "--kind", "distribution", str(tmp_path / "a.run"),
                                       str(tmp_path / "b.run"), "--qrels", str(tmp_path / "q.qrels"), "-m", metric,
                                       "--model", "uniform(p=0.4)", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.stat().st_size > 1000
    result = CliRunner().invoke(main, ["plot", "--kind", "distribution", str(tmp_path / "a.run"), "--qrels",
                                       str(tmp_path / "q.qrels"), "-m", metric, "--model", "rank", "-o", str(out)])
    assert result.exit_code == 2 and "--model" in result.output


@pytest.mark.parametrize("metric", ["P@5", "DCG@4", "SDCG@5", "RBP(p=0.5)@5", "RBP(p=0.8)", "DCG(dcg=exp-log2)@4"])
def test_the_linear_sampler_equals_the_evaluator(metric):
    rng = random.Random(9)
    for _ in range(15):
        a, b, judged, model, top = next(instances(rng.randint(0, 10 ** 6), 1, (2,)))
        instance = build_instance(metric, a, b, judged, max_grade=top)
        terms = topic_terms(instance, parse_model(model), "")
        seed = rng.randint(0, 100)
        drawn = sample_differences(terms, np.random.default_rng(seed), 25)
        from medopt.relevance.distribution import grades_of
        if not terms.docs:
            continue
        uniform = np.random.default_rng(seed).random((25, len(terms.docs)))
        for row, grades in enumerate(grades_of(uniform, np.cumsum(terms.probs, axis=1))):
            score_a, score_b = instance.scores(dict(zip(terms.docs, map(int, grades))))
            assert drawn[row] == pytest.approx(score_a - score_b, abs=1e-12)
