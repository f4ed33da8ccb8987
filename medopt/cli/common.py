"""What every ``medopt`` command shares: the group, one-line errors, signals, metric and method options.

Every failure of every command ends in one line on stderr, ``medopt: error: ...``, and exit status 2
(a usage error, a bad input file, an output path that cannot be written, a locked store, ...); an
interrupt (Ctrl-C, or SIGTERM: a scheduler stopping the job) in ``medopt: interrupted`` and exit status
130 (SIGINT) or 143 (SIGTERM). An unexpected exception -- a bug in medopt -- is one line too,
``medopt: error: internal error: ...``, with exit status 1; ``MEDOPT_DEBUG=1`` shows its traceback.
"""

from __future__ import annotations

import errno
import math
import os
import signal
import sys
import threading

import click

from .. import methods
from ..errors import MedoptError, command_line
from ..instance import RelevanceLimit

DEFAULT_TIME_LIMIT = 60.0  # seconds per MED on the command line (exact methods); 0 or none: no limit
_TERMINATED = []  # set by the SIGTERM handler: the interrupt came from SIGTERM (exit status 143)


def warn(message: str) -> None:
    click.echo(f"medopt: warning: {message}", err=True)


def _fail(message: str, status: int = 2):
    message = " ".join(str(message).split())  # one line, whatever the message holds
    try:
        click.echo(f"medopt: error: {message}", err=True)
    except OSError:
        pass
    sys.exit(status)


def _quiet_stdout() -> None:
    """Point file descriptor 1 at /dev/null: the interpreter's final flush of a stdout that failed
    (a full disk, /dev/full, a closed pipe) must not print a second message."""
    try:
        descriptor = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (tests capture it)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, descriptor)
    os.close(null)


def _os_error(error: OSError):
    if error.errno == errno.EPIPE:  # the reader went away (`| head`): not an error of ours
        _quiet_stdout()
        sys.exit(1)
    where = f"{error.filename}: " if error.filename else ""
    if not where and error.errno in (errno.ENOSPC, errno.EIO, errno.EFBIG, errno.EDQUOT):
        where = "cannot write the output: "
        _quiet_stdout()
    _fail(f"{where}{error.strerror or error}")


def one_line_errors(invoke, ctx):
    """Run a click invoke; every failure becomes one line on stderr and exit status 2 (1: a bug)."""
    try:
        with command_line():  # messages name options by their flags (errors.option)
            result = invoke(ctx)
        sys.stdout.flush()  # a full disk or /dev/full shows here, not at exit
        return result
    except (click.ClickException, click.exceptions.Exit, click.Abort):
        raise  # click's own: usage errors are made one line in MedoptCommand.main
    except MedoptError as error:
        _fail(error)
    except KeyboardInterrupt:
        try:
            click.echo("medopt: interrupted", err=True)
        except OSError:
            pass
        sys.exit(143 if _TERMINATED else 130)
    except OSError as error:
        if os.environ.get("MEDOPT_DEBUG"):
            raise
        _os_error(error)
    except MemoryError:
        _fail("out of memory: the job needs more memory than this machine gives it")
    except RecursionError:
        _fail("internal error: recursion too deep (please report it; MEDOPT_DEBUG=1 shows the traceback)", 1)
    except Exception as error:  # a bug: one line still, and the way to the traceback
        if os.environ.get("MEDOPT_DEBUG"):
            raise
        _fail(f"internal error: {type(error).__name__}: {error} (please report it; MEDOPT_DEBUG=1 shows "
              "the traceback)", 1)


def _on_sigterm(signum, frame):
    """SIGTERM behaves as Ctrl-C: a KeyboardInterrupt, or whatever handler SIGINT has while a solve runs."""
    _TERMINATED.append(signum)
    handler = signal.getsignal(signal.SIGINT)
    if callable(handler) and handler not in (signal.default_int_handler, _on_sigterm):
        return handler(signal.SIGINT, frame)
    raise KeyboardInterrupt


class OneLineErrors:
    """For click commands and groups: usage errors in one line too, SIGTERM as Ctrl-C while a command runs."""

    def invoke(self, ctx):
        return one_line_errors(super().invoke, ctx)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        prog_name = prog_name or "medopt"  # not "python -m medopt.cli" in messages
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        previous = None
        if threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGTERM, _on_sigterm)
        _TERMINATED.clear()
        try:
            status = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.ClickException as error:
            hint = f" (see '{error.ctx.command_path} -h')" if getattr(error, "ctx", None) else ""
            _fail(f"{error.format_message()}{hint}", error.exit_code)
        except click.Abort:
            _fail("interrupted", 130)
        except OSError as error:  # writing --help or --version output
            _os_error(error)
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
        sys.exit(status if isinstance(status, int) else 0)


class MedoptCommand(OneLineErrors, click.Command):
    """A medopt command: one-line errors also when it runs on its own (tests, scripts)."""


class MedoptGroup(OneLineErrors, click.Group):
    """The ``medopt`` group: every subcommand is a MedoptCommand."""

    command_class = MedoptCommand


def version_message() -> str:
    """``medopt --version``: medopt's version and those of the solvers and libraries it runs on
    (from the installed distributions' metadata: nothing heavy is imported)."""
    import platform
    from importlib.metadata import PackageNotFoundError, version

    def of(distribution: str) -> str:
        try:
            return version(distribution)
        except PackageNotFoundError:
            return "not installed"

    return (f"%(prog)s %(version)s\nsolvers: HiGHS (highspy) {of('highspy')}, OR-Tools CP-SAT {of('ortools')}\n"
            f"modelling: Pyomo {of('pyomo')}, NumPy {of('numpy')}\npython {platform.python_version()}")


@click.group(cls=MedoptGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="medopt", message=version_message())
def main():
    """Maximized Effectiveness Difference between search rankings, computed exactly.

    Every failure ends in one line, 'medopt: error: ...', and exit status 2 (1: an internal error);
    Ctrl-C or SIGTERM in 'medopt: interrupted' and exit status 130 or 143.
    """


class TimeLimit(click.ParamType):
    """Seconds per MED: a positive finite number; 0 or 'none': no limit."""

    name = "SECONDS"

    def convert(self, value, param, ctx):
        if value is None:
            return None
        text = str(value).strip().lower()
        if text in ("none", "off", "no"):
            return None
        try:
            seconds = float(text)
        except ValueError:
            seconds = math.nan
        if not math.isfinite(seconds) or seconds < 0:
            self.fail(f"{value!r} is not a number of seconds (> 0; 0 or none: no limit)", param, ctx)
        return seconds or None


TIME_LIMIT_HELP = (f"Seconds per MED for the exact solver (default {DEFAULT_TIME_LIMIT:g}); beyond it the row is "
                   "uncertified (status timeout). 0 or none: no limit.")


def time_limit_option(function):
    return click.option("--time-limit", type=TimeLimit(), default=DEFAULT_TIME_LIMIT, show_default=False,
                        help=TIME_LIMIT_HELP)(function)


def judged_only_option(function):
    return click.option("--judged-topics-only", "judged_only", is_flag=True,
                        help="Only the topics the qrels judge (as trec_eval does); by default a topic without "
                             "judgments counts with nothing judged, with a warning.")(function)


def metric_option(function):
    return click.option("-m", "--metric", "metrics", multiple=True, required=True,
                        help="Metric, ir_measures style (nDCG@10, RBP(p=0.95), AP(norm=min)@100) or trec_eval "
                             "(ndcg_cut.10, P.5, map_cut.100). Repeatable; a metric given twice is computed "
                             "once.")(function)


def method_options(function):
    for option in reversed([
        click.option("--method", default="auto", show_default=True,
                     help=", ".join(["auto", *methods.method_names()]) + "."),
        click.option("--solver", default=None, help="Exact solver: highs or cpsat (default: CP-SAT for AP at depth 50 and more, HiGHS otherwise)."),
        time_limit_option,
        click.option("--max-grade", type=int, default=None, help="Top grade G (default: largest grade in the topic's qrels, at least 1)."),
        click.option("--pad", type=click.Choice(["none", "free"]), default="none", show_default=True,
                     help="free: fill short rankings to k with unjudged documents (Tan & Clarke)."),
        click.option("--residual", is_flag=True, help="RBP: credit the unseen tail to the better list."),
        click.option("--strategy", default="auto", show_default=True,
                     help="Exact model: enumerate (the denominator) or dinkelbach for ratio metrics, capped for "
                          "AP(norm=min)@k; "
                          "direct (state expansion) or compact (HiGHS only) for ERR/RR."),
        click.option("--at-most", "at_most", multiple=True, metavar="GRADE:N",
                     help="Side constraint: at most N documents of grade >= GRADE in the collection. Repeatable."),
        click.option("--at-least", "at_least", multiple=True, metavar="GRADE:N",
                     help="Side constraint: at least N documents of grade >= GRADE. Repeatable."),
    ]):
        function = option(function)
    return function


def parse_limits(at_most, at_least) -> list:
    """--at-most / --at-least GRADE:N options as RelevanceLimit side constraints."""
    limits = []
    for text, side in [(t, "high") for t in at_most] + [(t, "low") for t in at_least]:
        grade, sep, count = text.partition(":")
        if not sep or not grade.strip().isdigit() or not count.strip().isdigit() or int(grade) < 1:
            raise MedoptError(f"--at-{'most' if side == 'high' else 'least'} {text!r}: expected GRADE:N, e.g. 2:1")
        limits.append(RelevanceLimit(grade=int(grade), **{side: int(count)}))
    return limits
