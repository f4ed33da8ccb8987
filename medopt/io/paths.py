"""Output paths checked before any work: a job must not compute for an hour and then find that it
cannot write its result, nor leave a store or a directory behind when its output path is wrong."""

from __future__ import annotations

from pathlib import Path

from ..errors import MedoptError
from .output import check_output, probe_directory


def check_output_file(path, what: str = "", *, inputs=(), binary: bool = False) -> None:
    """Refuse an output file that cannot or must not be written (the rules of :mod:`medopt.io.output`:
    a directory, a missing or unwritable parent directory, a special file for a binary format, one of
    the command's ``inputs``). ``what`` (an option name, e.g. ``-o``) starts the message."""
    check_output(path, what, inputs=inputs, binary=binary)


def check_output_directory(path, what: str = "") -> None:
    """Refuse an output directory that cannot be made or written (it is made only when written to, as
    ``mkdir`` would: its parent must exist): a file in its place, a missing or unwritable parent."""
    path = Path(path)
    shown = f"{what} {path}".strip()
    if path.exists():
        if not path.is_dir():
            raise MedoptError(f"{shown}: exists and is not a directory")
        probe_directory(path, shown)
        return
    _check_parent(path.parent, shown)


def _check_parent(parent: Path, shown: str) -> None:
    """The directory a new file or directory would be made in: it exists, is one, and is writable."""
    if not parent.exists():
        raise MedoptError(f"{shown}: no such directory: {parent}")
    if not parent.is_dir():
        raise MedoptError(f"{shown}: {parent} is not a directory")
    probe_directory(parent, shown)
