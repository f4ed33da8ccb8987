"""Every benchmark script runs through benchmarks/harness.py (issue 51 item 6): its options from
``harness.parser`` (no argument parser of its own), the data root from the harness (``$MEDOPT_SHARED_DATA``,
never a path written in the script), and no ``sys.path`` reaching into tests/ (``harness.tests_module``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
SCRIPTS = sorted(path for path in BENCHMARKS.glob("*.py") if path.name != "harness.py")


def _docstrings(tree) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def test_there_are_scripts():
    assert len(SCRIPTS) >= 10


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_the_script_runs_through_the_harness(script):
    tree = ast.parse(script.read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert "harness" in imported, f"{script.name} does not use benchmarks/harness.py"
    assert "argparse" not in imported, f"{script.name} builds its own argument parser (harness.parser)"
    docstrings = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "path" and isinstance(node.value, ast.Name) \
                and node.value.id == "sys":
            raise AssertionError(f"{script.name}:{node.lineno}: sys.path (a tests/ helper: harness.tests_module)")
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "add_argument" and node.args \
                and isinstance(node.args[0], ast.Constant) and node.args[0].value == "--data":
            raise AssertionError(f"{script.name}:{node.lineno}: its own --data (harness.parser(data=...))")
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            assert "shared/data" not in node.value and "shared\\data" not in node.value, \
                f"{script.name}:{node.lineno}: a data path written in the script (harness.shared_data)"
