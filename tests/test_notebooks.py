"""Re-execute every teaching notebook in notebooks/ in a fresh kernel; any cell error fails.

The kernel is the "python3" kernelspec, which jupyter_client resolves to the interpreter
running the tests (here the project's venv, where ipykernel is installed with the test
extra); each notebook's first cell prints ``sys.executable`` and the test checks it.
Notebooks run with notebooks/ as the working directory, as they do in Jupyter.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import ipykernel  # noqa: F401  (the test extra installs all three; a missing one must fail, not skip)
import nbclient
import nbformat

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
CELL_TIMEOUT = 300  # seconds per cell


def kernel_executable(notebook) -> str | None:
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                for line in output.get("text", "").splitlines():
                    if line.startswith("kernel python:"):
                        return line.split(":", 1)[1].strip()
    return None


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_notebook_executes(path):
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(notebook, timeout=CELL_TIMEOUT, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()  # raises CellExecutionError on the first failing cell
    executable = kernel_executable(notebook)
    assert executable is not None, f"{path.name}: the first cell should print 'kernel python: <sys.executable>'"
    assert os.path.samefile(executable, sys.executable), (
        f"{path.name} ran in {executable}, not in the test interpreter {sys.executable}")


def test_there_are_notebooks():
    assert len(list(NOTEBOOKS.glob("*.ipynb"))) >= 5
