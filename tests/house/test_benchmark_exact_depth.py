"""benchmarks/exact_depth.py's own pieces: the log, the before / after comparison, an instance row
(the benchmark itself needs the DL-HARD data and hours; these need neither)."""

import json

import pytest
from conftest import load_script


@pytest.fixture(scope="module")
def bench():
    return load_script("benchmarks/exact_depth.py", "exact_depth")


def row(key, seconds, certified=True, commit="abc1234"):
    metric, judged, solver = key.split("|")[3], key.rsplit("|", 3)[1], key.rsplit("|", 2)[1]
    return dict(key=key, metric=metric, k=int(metric.split("@")[1]), judgments=judged, solver=solver,
                exact_seconds=seconds, certified=certified, commit=commit)


def test_read_log_skips_a_line_cut_by_an_interruption(bench, tmp_path):
    log = tmp_path / "log.jsonl"
    first = row("r1|r2|7|AP@20|none|highs|60", 0.5)
    log.write_text(json.dumps(first) + "\n" + '{"key": "r1|r2|8|AP@20|no')
    assert bench.read_log(log) == {first["key"]: first}


def test_instance_id_drops_only_the_solver(bench):
    assert bench.instance_id("r1|r2|7|nDCG@20|G3|dl-hard|cpsat|60") == "r1|r2|7|nDCG@20|G3|dl-hard|60"
    assert bench.instance_id("r1|r2|7|AP@20|none|default|60") == bench.instance_id("r1|r2|7|AP@20|none|highs|60")
    assert bench.instance_id("r1|r2|7|AP@20|none|highs|60") != bench.instance_id("r1|r2|7|AP@20|none|highs|10")


def test_comparison_pairs_the_same_instances(bench, capsys):
    old = {r["key"]: r for r in (row("r1|r2|1|AP@20|none|highs|60", 4.0, commit="old1"),
                                 row("r1|r2|2|AP@20|none|highs|60", 8.0, certified=False, commit="old1"),
                                 row("r1|r2|3|AP@20|none|highs|60", 99.0, commit="old1"))}  # not in the new set
    new = [row("r1|r2|1|AP@20|none|default|60", 1.0), row("r1|r2|2|AP@20|none|default|60", 2.0),
           row("r1|r2|4|AP@20|none|default|60", 5.0)]  # not in the old log
    bench.print_comparison(new, old)
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if l.startswith("AP@20"))
    assert "(old1)" in out
    assert line.split() == ["AP@20", "none", "2", "highs", "50.0", "6.000", "8.000",
                            "default", "100.0", "1.500", "2.000", "0.25"]
    bench.print_comparison(new, {})
    assert "no instance" in capsys.readouterr().out


def test_comparison_pairs_each_solver_with_itself(bench):
    """Two solvers on both sides: two rows, highs with highs and cpsat with cpsat (not four crossed)."""
    keys = ["r1|r2|1|AP@20|none|{}|60", "r1|r2|2|AP@20|none|{}|60"]
    old = {r["key"]: r for r in [row(k.format("highs"), 1.0) for k in keys] + [row(k.format("cpsat"), 4.0) for k in keys]}
    new = [row(k.format("highs"), 1.05) for k in keys] + [row(k.format("cpsat"), 5.0) for k in keys]
    header, table = bench.comparison_table(new, old)
    assert [(r[3], r[7], r[-1]) for r in table] == [("cpsat", "cpsat", "1.25 *"), ("highs", "highs", "1.05")]
    assert len(header) == len(table[0])


def test_instance_row_names_the_solver_used_and_logs_errors(bench):
    good = bench.run_instance("AP@3", ["d1", "d2", "d3"], ["d3", "d4"], {"d1": 1}, "default", 10)
    assert good["certified"] and good["used_solver"] == "highs" and good["heuristic"] == "greedy"
    assert len(good["exact_repeats"]) == 1 and good["exact_seconds"] == good["exact_repeats"][0]
    three = bench.run_instance("AP@3", ["d1", "d2", "d3"], ["d3", "d4"], {"d1": 1}, "highs", 10, repeats=3)
    assert len(three["exact_repeats"]) == 3 and three["exact_seconds"] == sorted(three["exact_repeats"])[1]
    assert three["exact_value"] == good["exact_value"]
    bad = bench.run_instance("AP@3", ["d1", "d1"], ["d3"], {}, "highs", 10)  # a ranking with a duplicate
    assert bad["status"] == "error" and not bad["certified"] and bad["error"]


def test_peak_rss_sees_memory_freed_before_the_block_ends(bench):
    with bench.harness.PeakRSS() as quiet:
        pass
    with bench.harness.PeakRSS() as busy:
        block = bytearray(200 * 2 ** 20)  # touched: resident
        block[:: 4096] = b"x" * len(block[:: 4096])
        import time
        time.sleep(0.05)
        del block
    assert busy.mb >= quiet.mb + 150


def test_the_depth_1000_preset(bench):
    assert [t.format(k=1000) for t in bench.DEPTH_1000] == [
        "AP", "AP(norm=min)@1000", "SSP@1000", "nDCG@1000", "ERR@1000", "RR", "Q(beta=1)@100"]
