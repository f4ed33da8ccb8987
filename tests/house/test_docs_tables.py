"""The tables of measured figures the docs show are generated from the logs: docs/hooks.py renders
``<!--benchmark:LOG-->`` from ``benchmarks/logs/LOG.jsonl`` by the script that wrote it, and a page
naming a log that is not there fails the build."""

from __future__ import annotations

import json
import re
import statistics

import pytest
from mkdocs.exceptions import PluginError
from test_docs_defaults import PAGES, ROOT, hooks

LOG = "exact_depth_after"  # a real log of benchmarks/exact_depth.py, kept in the repository


def records(name):
    return [json.loads(line) for line in (ROOT / "benchmarks" / "logs" / f"{name}.jsonl").read_text().splitlines()]


def test_a_marker_renders_the_logs_table():
    page = hooks.render_benchmarks(f"before\n\n<!--benchmark:{LOG}-->\n\nafter", "page.md")
    assert page.startswith("before\n\n| metric | judgments | solver | n |") and page.endswith("\n\nafter")
    lines = [line for line in page.splitlines() if line.startswith("| ")]
    rows = {tuple(cell.strip() for cell in line.strip("|").split("|")[:3]): line for line in lines[2:]}
    logged = records(LOG)
    groups = {}
    for r in logged:
        groups.setdefault((r["metric"], r["judgments"], r["solver"]), []).append(r["exact_seconds"])
    assert set(rows) == set(groups)  # one row per metric, judgments and solver of the log
    for group, seconds in groups.items():  # each with the count and the median the log holds
        cells = [cell.strip() for cell in rows[group].strip("|").split("|")]
        assert cells[3] == str(len(seconds)) and cells[5] == f"{statistics.median(seconds):.3f}"
    commit = logged[0]["commit"]
    assert f"From `benchmarks/logs/{LOG}.jsonl` (medopt {commit})" in page and "--log" not in page


def test_a_comparison_marker_pairs_the_two_logs():
    page = hooks.render_benchmarks(f"<!--benchmark:{LOG} vs exact_depth_before-->", "page.md")
    assert page.startswith("| metric | judgments | n | before |") and "against `exact_depth_before.jsonl`" in page
    rows = [line for line in page.splitlines() if line.startswith("| ")][2:]
    assert rows and all(cells[3] == cells[7] for cells in (re.split(r"\s*\|\s*", r.strip("| ")) for r in rows))


def test_a_missing_log_fails_the_build():
    with pytest.raises(PluginError, match=r"page.md: no benchmark log benchmarks/logs/no_such_log.jsonl"):
        hooks.render_benchmarks("<!--benchmark:no_such_log-->", "page.md")
    with pytest.raises(PluginError, match="no_such_log.jsonl"):
        hooks.render_benchmarks(f"<!--benchmark:{LOG} vs no_such_log-->", "page.md")


def test_every_page_marker_names_a_log_that_renders():
    used = 0
    for page in PAGES:
        text = page.read_text()
        for match in hooks._BENCHMARK.finditer(text):
            used += 1
            assert "| ---" in hooks.render_benchmarks(match.group(0), str(page.relative_to(ROOT))).replace("|---", "| ---")
    assert used, "no page shows a table generated from a log"
