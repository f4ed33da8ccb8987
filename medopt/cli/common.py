"""What every ``medopt`` command shares: the group, one-line errors, signals, metric and method options.

Every failure of every command ends in one line on stderr, ``medopt: error: ...``, and exit status 2
(a usage error, a bad input file, an output path that cannot be written, a locked store, ...); an
interrupt (Ctrl-C, SIGTERM: a scheduler stopping the job, SIGHUP: the terminal gone) in ``medopt: interrupted``
and exit status 130 (SIGINT), 143 (SIGTERM) or 129 (SIGHUP), at any moment (:mod:`medopt.cli.signals`). An unexpected exception -- a bug in medopt -- is one line too,
``medopt: error: internal error: ...``, with exit status 1; ``MEDOPT_DEBUG=1`` shows its traceback.
"""

from __future__ import annotations

import errno
import io
import math
import os
import sys

import click

from .. import methods
from ..errors import MedoptError, command_line
from ..core.instance import RelevanceLimit
from ..metrics import PER_TOPIC
from . import signals

DEFAULT_TIME_LIMIT = 60.0  # seconds per MED on the command line (exact methods); 0 or none: no limit


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


class _ClosedStdout(io.TextIOBase):
    """In place of a closed standard output (``>&-``: Python sets sys.stdout to None, and click would
    drop what a command prints without a word): writing to it is the error, in one line."""

    def write(self, text):
        raise OSError(errno.EBADF, "standard output is closed: nowhere to write the results")


def one_line_errors(invoke, ctx):
    """Run a click invoke; every failure becomes one line on stderr and exit status 2 (1: a bug)."""
    if sys.stdout is None:
        sys.stdout = _ClosedStdout()
    try:
        with command_line():  # messages name options by their flags (errors.option)
            result = invoke(ctx)
        sys.stdout.flush()  # a full disk or /dev/full shows here, not at exit
        return result
    except (click.ClickException, click.exceptions.Exit, click.Abort):
        raise  # click's own: usage errors are made one line in MedoptCommand.main
    except MedoptError as error:
        if signals.RECEIVED:  # a signal came first: the error is its consequence (a wait it broke off)
            _interrupted()
        _fail(error)
    except KeyboardInterrupt:
        _interrupted()
    except OSError as error:
        if signals.RECEIVED:
            _interrupted()
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


def _interrupted():
    try:
        click.echo("medopt: interrupted", err=True)
    except OSError:
        pass
    sys.exit(signals.exit_status())


class OneLineErrors:
    """For click commands and groups: usage errors in one line too, SIGTERM and SIGHUP as Ctrl-C while a
    command runs."""

    def invoke(self, ctx):
        return one_line_errors(super().invoke, ctx)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        prog_name = prog_name or "medopt"  # not "python -m medopt.cli" in messages
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        previous = {}
        try:
            previous = signals.command_handlers()
            status = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.ClickException as error:
            hint = f" (see '{error.ctx.command_path} -h')" if getattr(error, "ctx", None) else ""
            _fail(f"{error.format_message()}{hint}", error.exit_code)
        except (click.Abort, KeyboardInterrupt):  # an interrupt while click parses the command line
            _interrupted()
        except OSError as error:  # writing --help or --version output
            _os_error(error)
        finally:
            signals.restore(previous)
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

    return (f"%(prog)s %(version)s\nsolvers: HiGHS (highspy) {of('highspy')}, OR-Tools CP-SAT {of('ortools')}, "
            f"SCIP (PySCIPOpt) {of('pyscipopt')}\n"
            f"modelling: Pyomo {of('pyomo')}, NumPy {of('numpy')}\npython {platform.python_version()}")


@click.group(cls=MedoptGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="medopt", message=version_message())
def main():
    """Maximized Effectiveness Difference between search rankings, computed exactly.

    Every failure ends in one line, 'medopt: error: ...', and exit status 2 (1: an internal error);
    Ctrl-C, SIGTERM or SIGHUP in 'medopt: interrupted' and exit status 130, 143 or 129.
    """


class TimeLimit(click.ParamType):
    """Seconds per MED: a finite number, positive by methods.checked_options (the check every entry
    point makes); 0, 'none', 'off' or 'no' on the command line: no limit."""

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
        if seconds == 0:
            return None
        if not math.isfinite(seconds):  # on the command line a limit is written as a number, or none
            self.fail(f"{value!r} is not a number of seconds (> 0; 0 or none: no limit)", param, ctx)
        try:
            return methods.checked_options({"time_limit": seconds}).get("time_limit")
        except MedoptError:
            self.fail(f"{value!r} is not a number of seconds (> 0; 0 or none: no limit)", param, ctx)


TIME_LIMIT_HELP = (f"Seconds per MED for the exact solver (default {DEFAULT_TIME_LIMIT:g}); beyond it the row is "
                   "uncertified (status timeout). 0 or none: no limit.")


def time_limit_option(function):
    return click.option("--time-limit", type=TimeLimit(), default=DEFAULT_TIME_LIMIT, show_default=False,
                        help=TIME_LIMIT_HELP)(function)


def named_runs(arguments) -> tuple[list[str], list]:
    """RUN arguments as (paths, names): ``NAME=PATH`` names the run NAME (when the argument itself is no
    file and PATH is one); a plain PATH keeps its runid (None here)."""
    paths, names = [], []
    for argument in arguments:
        name, sep, path = str(argument).partition("=")
        if sep and name and not os.path.exists(argument) and os.path.exists(path):
            paths.append(path)
            names.append(name)
        else:
            paths.append(str(argument))
            names.append(None)
    given = [n for n in names if n is not None]
    if len(set(given)) < len(given):
        raise MedoptError(f"two runs are named alike: {' '.join(given)}")
    return paths, names


def topic_options(function):
    """SPEC 10's topics: those the qrels judge and the runs retrieved (trec_eval's default); -c as in
    trec_eval; --topics to choose some."""
    function = click.option("--topics", "topics", default=None, metavar="FILE|LIST",
                            help="Only these topics: a file of topic ids (one per line) or a list such as "
                                 "301,302.")(function)
    return click.option("-c", "--complete", "complete", is_flag=True,
                        help="As trec_eval -c: average over every topic the qrels judge, a topic a run did not "
                             "retrieve counting as an empty ranking (default: the judged topics the runs "
                             "retrieved; run topics the qrels do not judge are left out).")(function)


class MaxGrade(click.ParamType):
    """--max-grade: an integer G >= 1, or per-topic."""

    name = "G|per-topic"

    def convert(self, value, param, ctx):
        if value is None or isinstance(value, int) and not isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text == PER_TOPIC:
            return PER_TOPIC
        try:
            grade = int(text)
        except ValueError:
            grade = 0
        if grade < 1:
            self.fail(f"{value!r} is not a grade (an integer >= 1, or {PER_TOPIC})", param, ctx)
        return grade


def metric_option(function):
    return click.option("-m", "--metric", "metrics", multiple=True, required=True,
                        help="Metric, ir_measures style (nDCG@10, RBP(p=0.95), AP(norm=min)@100) or trec_eval "
                             "(ndcg_cut.10, P.5, map_cut.100). Repeatable; a metric given twice is computed "
                             "once.")(function)


def method_options(function):
    for option in reversed([
        click.option("--method", default="auto", show_default=True,
                     help=", ".join(["auto", *methods.method_names()]) + "."),
        click.option("--solver", default=None, help="Exact solver: highs, cpsat or scip (default: CP-SAT for AP at depth 50 and more, HiGHS otherwise)."),
        time_limit_option,
        click.option("--max-grade", type=MaxGrade(), default=None,
                     help="Top grade G (default: the largest grade in the whole qrels file, at least 1); "
                          "per-topic: each topic's largest judged grade."),
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


def distinct_files(paths, what: str = "RUNS") -> None:
    """Refuse a file given twice (``a.run`` and ``./a.run``, or two names of one file): each run is
    compared once, and a run paired with itself is no comparison."""
    seen = {}
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            continue  # missing or unreadable: the reader names it
        key = (info.st_dev, info.st_ino)
        if key in seen:
            raise MedoptError(f"{what}: {seen[key]} and {path} are the same file; give each run once")
        seen[key] = path


def parse_limits(at_most, at_least) -> list:
    """--at-most / --at-least GRADE:N options as RelevanceLimit side constraints."""
    limits = []
    for text, side in [(t, "high") for t in at_most] + [(t, "low") for t in at_least]:
        grade, sep, count = text.partition(":")
        if not sep or not grade.strip().isdigit() or not count.strip().isdigit() or int(grade) < 1:
            raise MedoptError(f"--at-{'most' if side == 'high' else 'least'} {text!r}: expected GRADE:N, e.g. 2:1")
        limits.append(RelevanceLimit(grade=int(grade), **{side: int(count)}))
    return limits


def flip_options(function):
    """SPEC 11's flip distance in the summary rows (compare, matrix --summary): --flip, --labels, --scope."""
    function = click.option("--scope", type=click.Choice(("unjudged", "all")), default="unjudged", show_default=True,
                            help="With --flip: which documents may change (all: judged ones too, against their "
                                 "judgment).")(function)
    function = click.option("--labels", type=click.Path(dir_okay=False), default=None,
                            help="With --flip (compare: or --test): reference grades of unjudged documents, in "
                                 "qrels format (default 0; "
                                 "a label for a judged document is ignored, with a warning).")(function)
    return click.option("--flip", is_flag=True,
                        help="Also the flip distance (SPEC 11) in the summary rows: the fewest judgments of the "
                             "unjudged documents (reference: not relevant, or --labels) that must go the other way "
                             "for the mean difference to reach 0 (flip_distance; empty when no completion flips), "
                             "of how many may change (flip_documents), and whether it is proven "
                             "(flip_certified).  --time-limit bounds each flip distance as a whole: past it, "
                             "the best witness found, uncertified.")(function)


def check_flip_options(flip: bool, labels, scope: str) -> None:
    if (labels is not None or scope != "unjudged") and not flip:
        raise click.UsageError("--labels and --scope go with --flip")
