"""Flip distances (SPEC 11) against brute force over every completion of small multi-topic instances.

The oracle below shares nothing with medopt.flips but the metric evaluator (medopt.score): it
lists the documents that may change, tries every grade for all of them at once (every topic
together), scores both runs on every topic and keeps the smallest distance whose mean difference
reaches 0 or crosses it."""

from __future__ import annotations

import itertools
import math
import random
import warnings

import pytest

import medopt
from medopt.errors import MedoptError, MedoptWarning
from medopt.metrics import REGISTRY, parse_metric

TOL = 1e-9
# one metric per registered family (the character metric U is not a ranking metric)
FAMILY_METRICS = {"P": "P@3", "RR": "RR@3", "SSP": "SSP@3", "SP": "SP@3", "AP": "AP@3", "DCG": "DCG@3",
                  "SDCG": "SDCG@3", "nDCG": "nDCG@3", "ERR": "ERR@3", "Q": "Q@3", "RBP": "RBP(p=0.6)@3",
                  "R": "R@3", "Rprec": "Rprec", "SN_DCG": "SN_DCG@3", "SN_AP": "SN_AP@3", "Success": "Success@2"}


def test_every_family_is_tested():
    assert set(FAMILY_METRICS) == set(REGISTRY) - {"U"}


def random_pair(seed: int, max_grade: int, scope: str = "unjudged"):
    """2-3 topics, lists of 2-4 documents with shared ones, some judged (judged relevant documents
    outside both lists too), grades up to ``max_grade``; at most 9 (G = 1) or 7 (G = 2) documents
    that may change in ``scope`` over all topics, so that the oracle can try every completion."""
    rng = random.Random(seed)
    most = 9 if max_grade == 1 else 7
    while True:
        run_a, run_b, qrels = {}, {}, {}
        for t in range(rng.choice((2, 2, 3))):
            pool = [f"d{t}{i}" for i in range(5)]
            a = rng.sample(pool, rng.choice((2, 3, 4)))
            b = rng.sample(pool, rng.choice((2, 3, 4)))
            judged = {d: rng.randint(0, max_grade) for d in pool if rng.random() < 0.5}
            if rng.random() < 0.3:
                judged[f"out{t}"] = max_grade
            if rng.random() < 0.5:
                judged[f"top{t}"] = max_grade  # SPEC 1: G is the largest grade of the qrels
            run_a[str(t)], run_b[str(t)], qrels[str(t)] = a, b, judged
        changeable = sum(len([d for d in set(run_a[t]) | set(run_b[t]) if scope == "all" or d not in qrels[t]])
                         for t in run_a)
        if changeable <= most:
            return run_a, run_b, qrels


def random_labels(seed: int, run_a, run_b, qrels, max_grade: int):
    rng = random.Random(seed + 1000)
    labels = {}
    for t in run_a:
        labels[t] = {d: rng.randint(0, max_grade) for d in sorted(set(run_a[t]) | set(run_b[t])) if rng.random() < 0.5}
    return labels


def oracle(metric, run_a, run_b, qrels, *, labels=None, scope="unjudged", distance="documents"):
    """(F or None, D_L) by brute force over every completion of every topic at once."""
    metric = parse_metric(metric)
    top = max([1, *(g for judged in qrels.values() for g in judged.values())])
    topics = sorted(t for t in run_a if t in run_b and qrels.get(t))
    cut = lambda ranking: tuple(ranking[: metric.depth(len(ranking))])
    variables = []  # (topic, doc, reference grade)
    for t in topics:
        listed = dict.fromkeys(cut(run_a[t]) + cut(run_b[t]))
        for d in listed:
            if d in qrels[t]:
                if scope == "all":
                    variables.append((t, d, min(max(qrels[t][d], 0), top)))
            else:
                variables.append((t, d, min(max((labels or {}).get(t, {}).get(d, 0), 0), top)))

    def mean_difference(grades_of):
        values = []
        for t in topics:
            grades = dict(qrels[t])
            grades.update(grades_of[t])
            values.append(medopt.score(metric, list(run_a[t]), grades, max_grade=top)
                          - medopt.score(metric, list(run_b[t]), grades, max_grade=top))
        return math.fsum(values) / len(values)

    def grades_of(choice):
        out = {t: {} for t in topics}
        for (t, d, _), g in zip(variables, choice):
            out[t][d] = g
        return out

    reference = mean_difference(grades_of([v[2] for v in variables]))
    if abs(reference) <= TOL:
        return 0, reference
    sign = 1 if reference > 0 else -1
    best = None
    for choice in itertools.product(range(top + 1), repeat=len(variables)):
        if distance == "grades":
            cost = sum(abs(g - v[2]) for g, v in zip(choice, variables))
        else:
            cost = sum(g != v[2] for g, v in zip(choice, variables))
        if best is not None and cost >= best:
            continue
        if sign * mean_difference(grades_of(choice)) <= TOL:
            best = cost
    return best, reference


def rescored(metric, run_a, run_b, qrels, witness, scope):
    metric = parse_metric(metric)
    top = max([1, *(g for judged in qrels.values() for g in judged.values())])
    values = []
    for t, grades_t in witness.items():
        grades = dict(qrels[t])
        grades.update(grades_t)
        values.append(medopt.score(metric, list(run_a[t]), grades, max_grade=top)
                      - medopt.score(metric, list(run_b[t]), grades, max_grade=top))
    return math.fsum(values) / len(values)


def check(metric, run_a, run_b, qrels, **options):
    expected, reference = oracle(metric, run_a, run_b, qrels, **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MedoptWarning)
        result = medopt.flip_distance(metric, run_a, run_b, qrels, **options)
    assert result.reference == pytest.approx(reference, abs=1e-12)
    assert result.certified, result
    if expected is None:
        assert result.never and result.distance is None, (result, expected)
        return result
    assert not result.never
    assert result.distance == expected, (result, expected, result.curves)
    assert result.lower_bound == expected
    assert sum(result.per_topic.values()) == expected
    flipped = rescored(metric, run_a, run_b, qrels, result.witness, options.get("scope", "unjudged"))
    sign = 1 if reference > 0 else -1
    assert expected == 0 or sign * flipped <= TOL
    assert result.flipped == pytest.approx(flipped, abs=1e-12)
    # the witness's distance from the reference, counted from its changes
    changed = sum(len(c) for c in result.changes.values()) if options.get("distance", "documents") == "documents" \
        else None
    if changed is not None:
        assert changed == expected
    return result


SETTINGS = [dict(), dict(distance="grades"), dict(scope="all"), dict(scope="all", distance="grades")]


@pytest.mark.parametrize("family", sorted(FAMILY_METRICS))
@pytest.mark.parametrize("setting", range(len(SETTINGS)))
def test_flip_distance_matches_brute_force(family, setting):
    metric = FAMILY_METRICS[family]
    seen = set()
    for seed in range(6):
        max_grade = 1 + seed % 2
        run_a, run_b, qrels = random_pair(seed * 7 + setting, max_grade, SETTINGS[setting].get("scope", "unjudged"))
        options = dict(SETTINGS[setting])
        if seed % 3 == 2:
            options["labels"] = random_labels(seed, run_a, run_b, qrels, max_grade)
        result = check(metric, run_a, run_b, qrels, **options)
        seen.add("never" if result.never else ("zero" if result.distance == 0 else "some"))
    assert "some" in seen or "never" in seen


def test_shared_documents_and_labels_file(tmp_path):
    run_a = {"1": ["a", "b", "c"], "2": ["p", "q", "r"]}
    run_b = {"1": ["c", "b", "d"], "2": ["r", "s", "p"]}
    qrels = {"1": {"b": 1, "z": 2}, "2": {"q": 0, "s": 2}}
    path = tmp_path / "labels.qrels"
    path.write_text("1 0 a 2\n1 0 d 1\n1 0 b 0\n2 0 r 1\n")
    with pytest.warns(MedoptWarning, match="1 label"):
        result = medopt.flip_distance("nDCG@3", run_a, run_b, qrels, labels=str(path))
    labels = {"1": {"a": 2, "d": 1}, "2": {"r": 1}}
    expected, reference = oracle("nDCG@3", run_a, run_b, qrels, labels=labels)
    assert result.reference == pytest.approx(reference)
    assert (result.distance, result.certified) == (expected, True)


def test_zero_reference_is_distance_zero():
    run_a = {"1": ["a", "b"], "2": ["c", "d"]}
    run_b = {"1": ["b", "a"], "2": ["d", "c"]}
    qrels = {"1": {"a": 1}, "2": {"d": 1}}
    result = medopt.flip_distance("P@2", run_a, run_b, qrels)
    assert (result.reference, result.distance, result.lower_bound, result.certified) == (0.0, 0, 0, True)


def test_never_when_the_range_excludes_zero():
    # every document judged but one, and A ahead by more than that document can move
    run_a = {"1": ["a", "b", "c"]}
    run_b = {"1": ["x", "y", "u"]}
    qrels = {"1": {"a": 1, "b": 1, "c": 1, "x": 0, "y": 0}}
    result = medopt.flip_distance("P@3", run_a, run_b, qrels)
    assert result.never and result.distance is None and result.certified
    assert oracle("P@3", run_a, run_b, qrels)[0] is None
    # judged documents may change: three changes (e.g. a, b non-relevant and u relevant) tie
    result = medopt.flip_distance("P@3", run_a, run_b, qrels, scope="all")
    assert (result.distance, result.certified) == (oracle("P@3", run_a, run_b, qrels, scope="all")[0], True)
    assert result.distance == 3


def test_depth_ten_precision_exact_and_fast():
    """Dot products: the closed-form curve at a realistic size, checked against the MILP curve's
    route (the same answer through the relevance-limit model: SSP shares nothing with P's closed form,
    so here P is checked by a second route, the exact model with the limit row)."""
    rng = random.Random(5)
    run_a, run_b, qrels = {}, {}, {}
    for t in range(8):
        pool = [f"d{t}_{i}" for i in range(30)]
        run_a[str(t)], run_b[str(t)] = rng.sample(pool, 10), rng.sample(pool, 10)
        qrels[str(t)] = {d: rng.randint(0, 1) for d in pool if rng.random() < 0.5}
    closed = medopt.flip_distance("P@10", run_a, run_b, qrels)
    assert closed.certified and set(closed.curves.values()) == {"closed-form"}
    from medopt.flip import curves as flips
    original = flips.is_dot_product
    try:
        flips.is_dot_product = lambda metric: False  # every curve point by the exact model under the limit
        modelled = medopt.flip_distance("P@10", run_a, run_b, qrels)
    finally:
        flips.is_dot_product = original
    assert set(modelled.curves.values()) == {"exact"}
    assert (modelled.distance, modelled.certified) == (closed.distance, True)


@pytest.mark.parametrize("metric", ["RR@4", "RR(rel=2)@4", "RR", "Success@3", "Success(rel=2)@2"])
@pytest.mark.parametrize("setting", range(len(SETTINGS)))
def test_first_relevant_closed_form_matches_brute_force(metric, setting):
    """RR and Success: the scan over the first relevant positions (curves.first_relevant_curve) against
    every completion, graded (rel=2 with G = 2: the relevant side is one grade), labels given and not."""
    seen = set()
    for seed in range(8):
        max_grade = 2 if "rel=2" in metric else 1 + seed % 2
        run_a, run_b, qrels = random_pair(seed * 13 + setting + 100, max_grade, SETTINGS[setting].get("scope", "unjudged"))
        options = dict(SETTINGS[setting])
        if seed % 2:
            options["labels"] = random_labels(seed, run_a, run_b, qrels, max_grade)
        result = check(metric, run_a, run_b, qrels, **options)
        assert set(result.curves.values()) <= {"closed-form"}
        seen.add("never" if result.never else ("zero" if result.distance == 0 else "some"))
    assert "some" in seen


@pytest.mark.parametrize("metric", ["RR@20", "Success@5"])
def test_first_relevant_closed_form_equals_the_model_route(metric, monkeypatch):
    """At a realistic depth: the closed form gives the flip distance the exact model under the relevance
    limit gives (curves.LimitedCurve, every point a solve), both certified."""
    from medopt.flip import curves

    rng = random.Random(7)
    run_a, run_b, qrels = {}, {}, {}
    for t in range(6):
        pool = [f"d{t}_{i}" for i in range(40)]
        run_a[str(t)], run_b[str(t)] = rng.sample(pool, 20), rng.sample(pool, 20)
        qrels[str(t)] = {d: int(rng.random() < 0.2) for d in pool if rng.random() < 0.4}
    closed = medopt.flip_distance(metric, run_a, run_b, qrels)
    assert closed.certified and set(closed.curves.values()) == {"closed-form"}
    monkeypatch.setattr(curves, "FIRST_RELEVANT", {})
    modelled = medopt.flip_distance(metric, run_a, run_b, qrels)
    assert set(modelled.curves.values()) == {"exact"}
    assert (modelled.distance, modelled.never, modelled.certified) == (closed.distance, closed.never, True)
    assert closed.distance is None or closed.distance > 0


@pytest.mark.parametrize("limit", [1e-3, 0.3, 1.0])
def test_time_limit_gives_a_lower_bound(limit):
    rng = random.Random(11)
    run_a, run_b, qrels = {}, {}, {}
    for t in range(4):
        pool = [f"d{t}_{i}" for i in range(40)]
        run_a[str(t)], run_b[str(t)] = rng.sample(pool, 20), rng.sample(pool, 20)
        qrels[str(t)] = {d: rng.randint(0, 1) for d in pool[:10]}
    exact = medopt.flip_distance("AP@20", run_a, run_b, qrels)
    assert exact.certified
    limited = medopt.flip_distance("AP@20", run_a, run_b, qrels, time_limit=limit)
    assert exact.distance is not None and not exact.never
    assert limited.lower_bound is not None and limited.lower_bound <= exact.distance
    if limited.distance is not None:
        assert limited.distance >= exact.distance
        flipped = rescored("AP@20", run_a, run_b, qrels, limited.witness, "unjudged")
        assert (1 if exact.reference > 0 else -1) * flipped <= TOL
    assert limited.certified == (limited.distance == limited.lower_bound)


def test_bad_options():
    run = {"1": ["a"]}
    with pytest.raises(MedoptError, match="scope"):
        medopt.flip_distance("P@1", run, run, {"1": {"a": 1}}, scope="judged")
    with pytest.raises(MedoptError, match="distance"):
        medopt.flip_distance("P@1", run, run, {"1": {"a": 1}}, distance="edits")


# ---------------------------------------------------------------------------
# compare --flip


def _write(path, rankings, name):
    with open(path, "w") as out:
        for topic, docs in rankings.items():
            for rank, doc in enumerate(docs, start=1):
                out.write(f"{topic} Q0 {doc} {rank} {100 - rank} {name}\n")


def _write_qrels(path, qrels):
    with open(path, "w") as out:
        for topic, judged in qrels.items():
            for doc, grade in judged.items():
                out.write(f"{topic} 0 {doc} {grade}\n")


def test_compare_flip_columns(tmp_path):
    import csv
    import io

    from click.testing import CliRunner

    from medopt.cli import main

    run_a, run_b, qrels = random_pair(3, 1)
    _write(tmp_path / "a.run", run_a, "A")
    _write(tmp_path / "b.run", run_b, "B")
    _write_qrels(tmp_path / "q.qrels", qrels)
    labels = random_labels(3, run_a, run_b, qrels, 1)
    _write_qrels(tmp_path / "l.qrels", labels)
    for extra, options in (([], {}), (["--labels", tmp_path / "l.qrels", "--scope", "all"],
                                      dict(labels=labels, scope="all"))):
        result = CliRunner().invoke(main, ["compare", str(tmp_path / "a.run"), str(tmp_path / "b.run"), "--qrels",
                                           str(tmp_path / "q.qrels"), "-m", "P@3", "-m", "AP@3", "--flip",
                                           *map(str, extra)])
        assert result.exit_code == 0, result.output
        rows = list(csv.DictReader(io.StringIO(result.stdout)))
        assert [r["metric"] for r in rows] == ["P@3", "AP@3"]
        for row in rows:
            expected = oracle(row["metric"], run_a, run_b, qrels, **options)[0]
            assert row["flip_distance"] == ("" if expected is None else str(expected))
            assert row["flip_certified"] == "true"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MedoptWarning)
                api = medopt.flip_distance(row["metric"], run_a, run_b, qrels, **options)
            assert row["flip_documents"] == str(api.documents)
    result = CliRunner().invoke(main, ["compare", str(tmp_path / "a.run"), str(tmp_path / "b.run"), "--qrels",
                                       str(tmp_path / "q.qrels"), "-m", "P@3", "--scope", "all"])
    assert result.exit_code == 2 and "--flip" in result.output
    (tmp_path / "bad.qrels").write_text("1 0 a 1\n1 0 b x\n")
    result = CliRunner().invoke(main, ["compare", str(tmp_path / "a.run"), str(tmp_path / "b.run"), "--qrels",
                                       str(tmp_path / "q.qrels"), "-m", "P@3", "--flip", "--labels",
                                       str(tmp_path / "bad.qrels")])
    assert result.exit_code == 2 and "bad.qrels" in result.output and ":2" in result.output, result.output


def test_matrix_flip_summary(tmp_path):
    import csv

    from click.testing import CliRunner

    from medopt.cli import main

    runs = {}
    run_a, run_b, qrels = random_pair(4, 1)
    run_c = {t: list(reversed(r)) for t, r in run_a.items()}
    for name, rankings in (("A", run_a), ("B", run_b), ("C", run_c)):
        _write(tmp_path / f"{name}.run", rankings, name)
        runs[name] = rankings
    _write_qrels(tmp_path / "q.qrels", qrels)
    frame = medopt.matrix({n: str(tmp_path / f"{n}.run") for n in runs}, str(tmp_path / "q.qrels"), ["P@3", "RR@3"],
                          summary=True, flip=True, jobs=1)
    assert len(frame) == 6
    for row in frame.to_dict("records"):
        expected = oracle(row["metric"], runs[row["run_a"]], runs[row["run_b"]], qrels)[0]
        got = None if row["flip_distance"] is None or row["flip_distance"] != row["flip_distance"] \
            else int(row["flip_distance"])
        assert got == expected and row["flip_certified"]
    result = CliRunner().invoke(main, ["matrix", *(str(tmp_path / f"{n}.run") for n in runs), "--qrels",
                                       str(tmp_path / "q.qrels"), "-m", "P@3", "--store", str(tmp_path / "s.sqlite"),
                                       "--summary", str(tmp_path / "sum.csv"), "--flip", "-j", "1",
                                       "--no-progress"])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(open(tmp_path / "sum.csv")))
    assert len(rows) == 3
    for row in rows:
        expected = oracle("P@3", runs[row["run_a"]], runs[row["run_b"]], qrels)[0]
        assert row["flip_distance"] == ("" if expected is None else str(expected))
    result = CliRunner().invoke(main, ["matrix", *(str(tmp_path / f"{n}.run") for n in runs), "--qrels",
                                       str(tmp_path / "q.qrels"), "-m", "P@3", "--store", str(tmp_path / "t.sqlite"),
                                       "--flip"])
    assert result.exit_code == 2 and "--summary" in result.output
    # the store's pairs table holds the flips per pair; its export shows them
    from medopt.io.store import FLIP_COLUMNS, PAIR_COLUMNS, export_pairs, open_existing

    with open_existing(tmp_path / "s.sqlite") as store:
        stored = store.pairs()
    assert len(stored) == 3
    for row in stored:
        expected = oracle("P@3", runs[row["run_a"]], runs[row["run_b"]], qrels)[0]
        assert row["flip_distance"] == expected and row["flip_certified"] is True
        assert row["flip_documents"] == medopt.flip_distance("P@3", runs[row["run_a"]], runs[row["run_b"]],
                                                             qrels).documents
    export_pairs(tmp_path / "s.sqlite", tmp_path / "again.csv")
    again = list(csv.DictReader(open(tmp_path / "again.csv")))
    assert tuple(again[0]) == PAIR_COLUMNS + FLIP_COLUMNS
    assert [r["flip_distance"] for r in again] == [r["flip_distance"] for r in sorted(
        rows, key=lambda r: (r["run_a"], r["run_b"]))]
    # a job without --flip makes the summary anew: no flip columns stored, none exported
    result = CliRunner().invoke(main, ["matrix", *(str(tmp_path / f"{n}.run") for n in runs), "--qrels",
                                       str(tmp_path / "q.qrels"), "-m", "P@3", "--store", str(tmp_path / "s.sqlite"),
                                       "--resume", "--summary", str(tmp_path / "plain.csv"), "-j", "1",
                                       "--no-progress"])
    assert result.exit_code == 0, result.output
    assert tuple(next(csv.reader(open(tmp_path / "plain.csv")))) == PAIR_COLUMNS
    with open_existing(tmp_path / "s.sqlite") as store:
        assert all(row["flip_certified"] is None for row in store.pairs())


def test_pairs_table_of_an_older_store_gains_the_flip_columns(tmp_path):
    """A pairs table made before the flip columns existed reads with them None, and takes them when the
    summary is stored anew."""
    import sqlite3

    from medopt.io.store import PAIR_COLUMNS, ResultStore

    path = tmp_path / "old.sqlite"
    with ResultStore(path) as store:
        store.connection.execute("DROP TABLE pairs")
        store.connection.execute(f"CREATE TABLE pairs ({', '.join(PAIR_COLUMNS)}, "
                                 "PRIMARY KEY (run_a, run_b, metric, method))")
        row = dict(zip(PAIR_COLUMNS, ("A", "B", "P@3", "auto", 2, 0.5, 0.25, 0.25, 1.0, 1.0, 0.5, 1,
                                      None, None, None, None, None)))
        store.connection.execute(f"INSERT INTO pairs VALUES ({', '.join('?' * len(PAIR_COLUMNS))})",
                                 tuple(row.values()))
        store.connection.commit()
    with ResultStore(path) as store:
        (read,) = store.pairs()
        assert read["flip_distance"] is None and read["flip_certified"] is None and read["diff"] == 0.25
        store.replace_pairs([{**row, "flip_distance": 3, "flip_documents": 7, "flip_certified": True}], ["A", "B"])
        (read,) = store.pairs()
        assert (read["flip_distance"], read["flip_documents"], read["flip_certified"]) == (3, 7, True)
    assert "flip_distance" in {c[1] for c in sqlite3.connect(path).execute('PRAGMA table_info("pairs")')}


@pytest.mark.parametrize("family", ["AP", "nDCG", "ERR", "SN_DCG"])
def test_bound_only_curves_give_a_witness_and_a_lower_bound(family, monkeypatch):
    """Above the enumeration limit a non-linear family's curve off the model route is its far end only:
    the answer is a witness that re-scores to a flip and a proven lower bound, certified only when they
    meet."""
    from medopt.flip import curves

    monkeypatch.setattr(curves, "ENUMERATION_LIMIT", 0)
    metric = FAMILY_METRICS[family]
    for seed in range(4):
        run_a, run_b, qrels = random_pair(seed, 2, "all")
        options = {"scope": "all"} if seed % 2 else {"labels": random_labels(seed, run_a, run_b, qrels, 2)}
        expected, reference = oracle(metric, run_a, run_b, qrels, **options)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MedoptWarning)
            result = medopt.flip_distance(metric, run_a, run_b, qrels, **options)
        if expected is None:
            assert result.distance is None
            continue
        if expected == 0:
            assert result.distance == 0 and result.certified
            continue
        assert set(result.curves.values()) <= {"bound", "exact"}  # labels of 0 only: the model route
        if "bound" not in result.curves.values():
            assert (result.distance, result.certified) == (expected, True)
            continue
        assert result.lower_bound <= expected <= result.distance
        flipped = rescored(metric, run_a, run_b, qrels, result.witness, options.get("scope", "unjudged"))
        assert (1 if reference > 0 else -1) * flipped <= TOL
        assert result.certified == (result.lower_bound == result.distance)
