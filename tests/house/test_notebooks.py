"""Re-execute every teaching notebook in notebooks/ in a fresh kernel; any cell error fails.

The kernel is the "python3" kernelspec, which jupyter_client resolves to the interpreter
running the tests (here the project's venv, where ipykernel is installed with the test
extra); a cell the test appends to its in-memory copy prints ``sys.executable`` and the test
checks it (the notebook files never show it). Notebooks run with notebooks/ as the working
directory, as they do in Jupyter.

The outputs stored in the notebooks (rendered on the documentation site) and the outputs of the
re-execution show no path of the machine that ran them: no absolute path, no site-packages.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

import ipykernel  # noqa: F401  (the test extra installs all three; a missing one must fail, not skip)
import nbclient
import nbformat

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
CELL_TIMEOUT = 300  # seconds per cell
KERNEL_MARK = "kernel python: "

# an absolute path under a directory that holds checkouts, environments or temporary files, on POSIX
# or Windows, or an installed package's folder
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|tmp|home|root|usr|opt|var|mnt|srv|Users|private|nix)/"
                          r"|\b[A-Za-z]:\\|site-packages|dist-packages")


def output_texts(cell) -> list[str]:
    """Every text of a cell's outputs: streams, tracebacks and each text-like data item (no images)."""
    texts = []
    for output in cell.get("outputs", []):
        texts.append(output.get("text", ""))
        texts.extend(output.get("traceback", []))
        for kind, value in output.get("data", {}).items():
            if kind.startswith("text/") or kind.endswith(("json", "javascript", "svg+xml")):
                texts.append(value if isinstance(value, str) else str(value))
    return [text if isinstance(text, str) else "".join(text) for text in texts]


def machine_paths(notebook) -> list[str]:
    """Where a notebook's outputs show a machine path: 'cell N: <the line>' for each."""
    found = []
    for number, cell in enumerate(notebook.cells):
        for text in output_texts(cell):
            found += [f"cell {number}: {line.strip()[:200]}" for line in text.splitlines()
                      if MACHINE_PATH.search(line) or str(ROOT) in line or sys.prefix in line]
    return found


NOTEBOOK_FILES = sorted(NOTEBOOKS.glob("*.ipynb"))


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOK_FILES, ids=lambda p: p.name)
def test_notebook_executes(path):
    notebook = nbformat.read(path, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(f"import sys\nprint({KERNEL_MARK!r} + sys.executable)"))
    client = nbclient.NotebookClient(notebook, timeout=CELL_TIMEOUT, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()  # raises CellExecutionError on the first failing cell
    kernel_cell = notebook.cells.pop()
    executable = "".join(output_texts(kernel_cell)).strip()
    assert executable.startswith(KERNEL_MARK), f"{path.name}: the kernel did not print its executable"
    assert os.path.samefile(executable[len(KERNEL_MARK):], sys.executable), (
        f"{path.name} ran in {executable}, not in the test interpreter {sys.executable}")
    assert not machine_paths(notebook), f"{path.name}, re-executed, shows machine paths: {machine_paths(notebook)}"


@pytest.mark.parametrize("path", NOTEBOOK_FILES, ids=lambda p: p.name)
def test_stored_outputs_show_no_machine_path(path):
    notebook = nbformat.read(path, as_version=4)
    assert any(cell.get("outputs") for cell in notebook.cells), f"{path.name} has no stored outputs"
    assert not machine_paths(notebook), f"{path.name}'s stored outputs show machine paths: {machine_paths(notebook)}"


def test_the_machine_path_check_finds_paths():
    # the check of the two tests above, on outputs that show paths and on outputs that do not
    shown = ["kernel python: /work/main/.venv/bin/python", "see /tmp/tmpab12/run.txt", "C:\\Users\\me\\run.txt",
             "File ~/.venv/lib/python3.11/site-packages/pandas/core/frame.py:12", f"{ROOT}/examples/qrels.txt"]
    clean = ["medopt 0.1.0 | numpy 2.4.6", "examples/qrels.txt", "AP@10 = 1/3", "</div>", "high / low: 0.5"]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(outputs=[
        nbformat.v4.new_output("stream", name="stdout", text=line + "\n")]) for line in shown + clean])
    assert machine_paths(notebook) == [f"cell {number}: {line}" for number, line in enumerate(shown)]


def test_there_are_notebooks():
    assert len(NOTEBOOK_FILES) >= 5
