"""The one writer of every output file of medopt (results, exports, plots, LP models, runs and qrels).

Rules, checked by :func:`check_output` before any work and again when the file is written:

- the target is a regular file or does not exist yet; a directory, a block device, a socket, or a
  name ending in ``/`` is refused.  A character device or a FIFO (``/dev/stdout``, ``/dev/null``, a
  shell's ``>(...)``) is written in place, and only for text: binary formats (parquet, PNG, PDF) are
  written to regular files only, so that nothing special is ever replaced by a file;
- a target that is one of the command's inputs or its store (its ``-wal``, ``-shm`` and ``-journal``
  files too), compared by resolved path and by inode, is refused: an output never destroys an input;
- a regular target is written to a temporary made by :func:`tempfile.mkstemp` in the target's own
  directory (``O_EXCL``, an unpredictable name, no link followed), then renamed over the target with
  :func:`os.replace`: a reader sees the old file or the new one, never half of one, and a planted
  symbolic link is never written through.  A target given as a symbolic link is resolved first: the
  file it names is replaced (as a shell's ``>`` would write it), the link itself is kept.

Every refusal is one :class:`MedoptError` naming the option and the path.
"""

from __future__ import annotations

import csv
import errno
import fcntl
import gzip
import io
import os
import stat
import tempfile
from collections.abc import Iterable
from contextlib import contextmanager
from pathlib import Path

from ..errors import MedoptError

STORE_SIDE_FILES = ("-wal", "-shm", "-journal")


def store_files(store) -> list[str]:
    """A SQLite store and the files SQLite keeps beside it: all of them inputs of a command."""
    if store is None:
        return []
    return [str(store)] + [f"{store}{suffix}" for suffix in STORE_SIDE_FILES]


def _flat(inputs) -> list[str]:
    found = []
    for item in inputs or ():
        if item is None:
            continue
        if isinstance(item, (str, os.PathLike)):
            found.append(os.fspath(item))
        elif isinstance(item, (list, tuple)):
            found.extend(_flat(item))  # (runs given as objects, not files, are no files to protect)
    return found


def file_kind(mode: int) -> str:
    """What a file that is not a regular one is, for a one-line refusal (outputs and inputs alike)."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _identity(path: str):
    """(resolved path, (device, inode) or None) of a path."""
    try:
        info = os.stat(path)
        inode = (info.st_dev, info.st_ino)
    except OSError:
        inode = None
    return os.path.realpath(path), inode


def _shown(path, what: str) -> str:
    return f"{what} {os.fspath(path)}".strip()


def check_output(path, what: str = "-o", *, inputs=(), binary: bool = False) -> str:
    """Refuse, before any work, an output ``path`` this module would not write (see the module
    docstring); returns how it is written: ``"file"`` (temporary then rename) or ``"stream"`` (in place).

    ``inputs``: paths (or nested lists of paths, None ignored) the command reads, its store included
    (:func:`store_files`); ``binary``: the format is not text (parquet, PNG, PDF)."""
    text = os.fspath(path)
    shown = _shown(text, what)
    if not text:
        raise MedoptError(f"{what}: an empty file name")
    if text.endswith(("/", os.sep)) or os.path.basename(text) in (".", ".."):
        raise MedoptError(f"{shown}: names a directory, not a file")
    target, inode = _identity(text)
    for other in _flat(inputs):
        other_path, other_inode = _identity(other)
        if target == other_path or (inode is not None and inode == other_inode):
            same = f"the same file as {other}" if other != text else "also"
            raise MedoptError(f"{shown}: is {same}, an input or another output of the command; refusing to "
                              "overwrite it")
    if os.path.lexists(text) and not os.path.exists(text):
        raise MedoptError(f"{shown}: is a symbolic link to nothing ({os.readlink(text)}); refusing to follow it")
    try:
        info = os.stat(text)
    except FileNotFoundError:
        info = None
    except OSError as error:
        raise MedoptError(f"{shown}: {error.strerror or error}") from None
    if info is not None and not stat.S_ISREG(info.st_mode):
        kind = file_kind(info.st_mode)
        if stat.S_ISDIR(info.st_mode):
            raise MedoptError(f"{shown}: is a directory")
        if binary or not (stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode)):
            raise MedoptError(f"{shown}: is {kind}, not a regular file; refusing to replace it")
        if not os.access(text, os.W_OK):
            raise MedoptError(f"{shown}: not writable")
        return "stream"
    _check_directory(Path(os.path.dirname(target)), shown)
    return "file"


def _check_directory(parent: Path, shown: str) -> None:
    """The directory a new file would be made in: it exists, is one, and a file can be made in it (the
    one test that holds on every file system: permissions, read-only mounts, /proc, root)."""
    if not parent.exists():
        raise MedoptError(f"{shown}: no such directory: {parent}")
    if not parent.is_dir():
        raise MedoptError(f"{shown}: {parent} is not a directory")
    probe_directory(parent, shown)


def probe_directory(directory, shown: str) -> None:
    """Create and remove a file in ``directory``: the one test that holds for every file system
    (permissions, read-only mounts, /proc, and root, whom permission bits do not stop)."""
    try:
        handle, name = tempfile.mkstemp(dir=directory, prefix=".medopt-", suffix=".probe")
    except OSError as error:
        raise MedoptError(f"{shown}: cannot write in {directory}: {error.strerror or error}") from None
    os.close(handle)
    os.unlink(name)


def _open_stream(path: str, shown: str):
    """A character device or FIFO opened in place; a FIFO nobody reads is refused, not waited on."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        if error.errno == errno.ENXIO:
            raise MedoptError(f"{shown}: a FIFO that nobody reads") from None
        raise MedoptError(f"{shown}: cannot open: {error.strerror or error}") from None
    flags = fcntl.fcntl(descriptor, fcntl.F_GETFL)
    fcntl.fcntl(descriptor, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
    return os.fdopen(descriptor, "wb")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def output_file(path, what: str = "-o", *, inputs=(), binary: bool = False, compress: bool | None = None):
    """A binary file object for ``path``: written in place for a text stream, else a temporary renamed
    over the target when the block ends without an exception (removed when it does not).

    ``compress``: gzip the bytes (default: when the name ends in ``.gz``)."""
    text = os.fspath(path)
    shown = _shown(text, what)
    how = check_output(text, what, inputs=inputs, binary=binary)
    gz = text.endswith(".gz") if compress is None else compress
    if how == "stream":
        with _open_stream(text, shown) as raw:
            if gz:
                with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed:
                    yield packed
            else:
                yield raw
        return
    with _replacing(text, shown) as (descriptor, _):
        with os.fdopen(descriptor, "wb") as raw:
            if gz:
                with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed:
                    yield packed
            else:
                yield raw


@contextmanager
def _replacing(text: str, shown: str, suffix: str = ".tmp"):
    """(descriptor, name) of a fresh temporary (``mkstemp``: O_EXCL, no predictable name, never a link)
    beside the file ``text`` names, renamed over it with an ordinary file's permissions when the block
    ends without an exception, removed when it does not."""
    target = os.path.realpath(text)
    directory, name = os.path.split(target)
    try:
        descriptor, temporary = tempfile.mkstemp(dir=directory, prefix=f".{name}.", suffix=suffix)
    except OSError as error:
        raise MedoptError(f"{shown}: cannot write in {directory}: {error.strerror or error}") from None
    try:
        yield descriptor, temporary
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp makes 0600: an ordinary file's permissions
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


@contextmanager
def output_name(path, what: str = "-o", *, inputs=(), binary: bool = True):
    """For libraries that write by file name (Pyomo, pyarrow): the name of a fresh empty temporary
    (``mkstemp``) beside the target, renamed over it when the block ends without an exception."""
    text = os.fspath(path)
    shown = _shown(text, what)
    if check_output(text, what, inputs=inputs, binary=True) == "stream":  # (binary: never reached)
        raise MedoptError(f"{shown}: not a regular file")
    suffix = os.path.splitext(os.path.realpath(text))[1]  # the libraries tell the format by it
    with _replacing(text, shown, f".tmp{suffix}") as (descriptor, temporary):
        os.close(descriptor)
        yield temporary


def write_output(path, data, what: str = "-o", *, inputs=(), binary: bool | None = None) -> None:
    """Write ``data`` (bytes, a str, or an iterable of str pieces) to ``path`` by the rules above."""
    if binary is None:
        binary = isinstance(data, (bytes, bytearray, memoryview))
    with output_file(path, what, inputs=inputs, binary=binary) as handle:
        if isinstance(data, (bytes, bytearray, memoryview)):
            handle.write(data)
            return
        text = io.TextIOWrapper(handle, encoding="utf-8", newline="\n", write_through=True)
        text.writelines([data] if isinstance(data, str) else data)
        text.flush()
        text.detach()  # the handle is closed by output_file, after the rename is decided


def csv_lines(rows: Iterable[Iterable], delimiter: str = ",") -> Iterable[str]:
    """Each row as one CSV (or TSV) line ending in ``\\n``; a field holding a delimiter, a quote, a
    ``\\n`` or a ``\\r`` is quoted (the csv module quotes only the characters of its line terminator:
    with ``\\n`` alone, a ``\\r`` in a file name would be written bare and end the row early)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator="\r\n")
    for row in rows:
        writer.writerow(row)
        line = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
        yield line[:-2] + "\n"


@contextmanager
def output_directory(path, what: str = "--out"):
    """A directory for several output files (``certify --out``), made now if it does not exist; when
    the block fails, the files written into it through :meth:`OutputDirectory.write` are removed and the
    directory too if this made it and it is empty."""
    directory = OutputDirectory(Path(path), what)
    try:
        yield directory
    except BaseException:
        directory.undo()
        raise


class OutputDirectory:
    def __init__(self, path: Path, what: str):
        self.path, self.what, self.made, self.written = path, what, False, []

    def make(self) -> Path:
        if not self.path.is_dir():
            try:
                self.path.mkdir()
            except FileExistsError:
                raise MedoptError(f"{self.what} {self.path}: exists and is not a directory") from None
            self.made = True
        return self.path

    def file(self, name: str) -> Path:
        """The path of a file to be written in the directory (made now if needed), to be removed on failure."""
        path = self.make() / name
        self.written.append(path)
        return path

    def undo(self) -> None:
        for path in self.written:
            try:
                path.unlink()
            except OSError:
                pass
        if self.made:
            try:
                self.path.rmdir()
            except OSError:
                pass
