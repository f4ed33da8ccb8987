"""Errors users see. Every bad input ends in one of these, never a traceback."""

from __future__ import annotations


class MedoptError(ValueError):
    """Base class: a clear, one-line message about bad input or an impossible request."""


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


class TooLargeError(MedoptError):
    """A method refused an instance that exceeds its documented size limit."""
