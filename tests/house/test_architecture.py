"""The architecture rules (docs/architecture.md), enforced: layers that only point down (the
import-linter contracts in pyproject.toml), no import cycle among medopt's modules (function-level
imports included), modules of a readable size, and a library that imports without click."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "medopt"
MAX_LINES = 400
SIZE_REASON = "# size:"  # a module over MAX_LINES states why in a comment starting with this


def test_import_linter_contracts_are_kept():
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def strongly_connected(graph: dict) -> list:
    """Tarjan's components of more than one node (an import cycle each)."""
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_strongly_connected_finds_a_cycle():
    assert strongly_connected({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"]]
    assert strongly_connected({"a": ["b"], "b": [], "c": ["a"]}) == []


def test_no_import_cycles_counting_function_level_imports():
    graph = grimp.build_graph("medopt")  # grimp reads every import statement, at any depth
    modules = {m for m in graph.modules if m == "medopt" or m.startswith("medopt.")}
    edges = {m: [w for w in graph.find_modules_directly_imported_by(m) if w in modules] for m in modules}
    assert strongly_connected(edges) == []


def test_function_level_imports_of_medopt_say_why():
    """A medopt import inside a function is allowed only to defer loading a heavy dependency (Pyomo,
    the solvers), never to dodge a cycle: each carries a comment saying so."""
    unexplained = []
    for path in PACKAGE.rglob("*.py"):
        lines = path.read_text().splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.ImportFrom) and (inner.level > 0 or (inner.module or "").startswith("medopt")):
                        if "#" not in lines[inner.lineno - 1]:
                            unexplained.append(f"{path.relative_to(ROOT)}:{inner.lineno}")
    assert unexplained == []


def test_modules_stay_readable():
    too_long = []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        if len(text.splitlines()) > MAX_LINES and SIZE_REASON not in text:
            too_long.append(f"{path.relative_to(ROOT)}: {len(text.splitlines())} lines")
    assert too_long == []


def test_the_library_imports_without_click_or_the_solvers():
    code = ("import sys, medopt; medopt.med('P@3', ['a', 'b'], ['b', 'c'], {}); "
            "print(sorted(m for m in ('click', 'pyomo', 'highspy', 'ortools', 'numba') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_numba_is_loaded_only_where_the_ap_count_boxes_run():
    """The kernel of the AP count boxes and of the sums of precisions' chain bounds (Numba: 0.2-0.4 s and
    about 55 MB to import) is imported where they run, not by the exact driver or the formulations: an
    exact ERR solve, and an SSP solve with a relevance limit (no chain bound), in a fresh interpreter
    leave Numba unloaded (exact/count_boxes.py, exact/relaxation.settled_by_chains)."""
    code = ("import sys, medopt; medopt.med('ERR@6', list('abcdef'), list('fedcba'), {}, method='exact'); "
            "medopt.med('SSP@6', list('abcdef'), list('fedcba'), {}, method='exact', "
            "limits=[medopt.RelevanceLimit(grade=1, high=2)]); "
            "print('numba' in sys.modules, 'medopt.exact.relaxation' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]
