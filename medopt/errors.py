"""Errors users see. Every bad input ends in one of these, never a traceback.

Errors cross process boundaries (the reader pool and the workers of ``medopt matrix``, Dask
tasks): each pickles with its message and attributes whatever its constructor takes
(:meth:`MedoptError.__reduce__`), so that the user reads the worker's message, not a broken pool.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

# How a message names an option (``option``): the command line's flag for the Python keyword.  Library
# code words its warnings and errors with option(keyword); the command line runs each command inside
# ``command_line()``, and everywhere else (the Python API) the keyword is named.
FLAGS = {"complete": "-c", "fmt": "--format", "limits": "--at-most/--at-least"}
_COMMAND_LINE: ContextVar[bool] = ContextVar("medopt_command_line", default=False)


def option(keyword: str, value=True) -> str:
    """The option ``keyword`` as the caller gave it: its flag on the command line (FLAGS, else the
    keyword with dashes: ``max_grade`` is ``--max-grade``; with ``value`` when that is neither True nor
    None), ``keyword=value`` in Python (``keyword=...`` for None)."""
    if _COMMAND_LINE.get():
        flag = FLAGS.get(keyword, "--" + keyword.replace("_", "-"))
        return flag if value is True or value is None else f"{flag} {value}"
    return f"{keyword}=..." if value is None else f"{keyword}={value!r}"


@contextmanager
def command_line():
    """Messages made in the body name options by their command-line flags (option)."""
    token = _COMMAND_LINE.set(True)
    try:
        yield
    finally:
        _COMMAND_LINE.reset(token)


def _rebuild(kind, args, state):
    error = Exception.__new__(kind)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class MedoptError(ValueError):
    """Base class: a clear, one-line message about bad input or an impossible request."""

    def __reduce__(self):
        # Not the default (type, args): a subclass whose __init__ takes other arguments than its
        # message (InputFormatError) would fail to unpickle, and a process pool reports that as
        # BrokenProcessPool instead of the message.
        return _rebuild, (type(self), self.args, dict(self.__dict__))


class MetricSyntaxError(MedoptError):
    """A metric string that does not follow `Name(param=value,...)@k` or names no metric."""


class InputFormatError(MedoptError):
    """A malformed input file; the message names the file and, where known, the line."""

    def __init__(self, path: str, line: int | None, message: str):
        self.path = str(path)
        self.line = line
        self.reason = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


class InputFrameError(InputFormatError):
    """A malformed run or qrels given as a Python object (a DataFrame, a dict, namedtuples); the message
    names the object, the row (or the topic and document) and the column."""

    def __init__(self, source: str, row, column: str | None, message: str):
        self.path, self.line, self.column, self.reason = str(source), row, column, message
        where = ", ".join(part for part in (row if isinstance(row, str) else None if row is None else f"row {row}",
                                            None if column is None else f"column {column!r}") if part)
        MedoptError.__init__(self, f"{self.path}: {where}: {message}" if where else f"{self.path}: {message}")


class TooLargeError(MedoptError):
    """A method refused an instance that exceeds its documented size limit."""


class MedoptWarning(UserWarning):
    """Something the user would want to know that does not stop the job (the command prints it as
    ``medopt: warning: ...``): qrels that judge none of the topics, metrics given twice, ..."""


@contextmanager
def interruptible_import():
    """Around the first import of a compiled solver module (highspy, OR-Tools): Ctrl-C while its
    extension initialises comes out of the import as ``ImportError: initialization failed`` with the
    KeyboardInterrupt as its context, and the caller (the CLI's one-line errors, a user's ``except
    KeyboardInterrupt``) would report an internal error instead of an interrupt.  The
    KeyboardInterrupt is raised in its place."""
    try:
        yield
    except ImportError as error:
        if isinstance(error.__context__, KeyboardInterrupt):
            raise KeyboardInterrupt from error
        raise
