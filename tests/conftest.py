"""Suite-wide set-up.

The shared data (DL-HARD runs, trec_eval's fixtures, TREC DL 2020; never copied into the repository):
``SHARED_DATA``, the folder named by the environment variable ``MEDOPT_SHARED_DATA``, by default
``../shared/data`` beside the checkout.  Test modules take it from here (``from conftest import
SHARED_DATA``) and skip with a reason when the part they need is absent.

Ctrl-C: a process started in the background by a shell without job control (``cmd &`` in a script,
as a CI runner may start the suite) inherits SIGINT *ignored*, and so does every process it starts:
Python then installs no KeyboardInterrupt handler, and the interrupt tests (which send SIGINT to a
child, or to this process) saw solves run to their end.  Installing Python's own handler here puts
SIGINT back for the test processes, and a child started from them (exec resets a handled signal to
its default) gets Python's handler too, as it would from a terminal.

The tests are grouped by layer (tests/core, tests/exact, ...); a test module may import helpers from
another (test_batch's ``write_job``, test_fastpath's ``random_topics``), so every layer folder is on
the import path from the start, whichever file or folder pytest is asked to run (the module names
are unique across the folders)."""

import importlib.util
import os
import signal
import sys
from pathlib import Path

for _folder in sorted(Path(__file__).resolve().parent.iterdir()):
    if _folder.is_dir() and not _folder.name.startswith((".", "_")) and str(_folder) not in sys.path:
        sys.path.append(str(_folder))

SHARED_DATA = Path(os.environ.get("MEDOPT_SHARED_DATA") or Path(__file__).resolve().parents[1].parent / "shared" / "data")
ROOT = Path(__file__).resolve().parents[1]


def load_script(relative: str, name: str):
    """A script of the repository (benchmarks/NAME.py, docs/hooks.py) loaded as a module, its folder on
    the import path (a benchmark imports its harness, as when it runs from its folder)."""
    path = ROOT / relative
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
# Under nohup SIGHUP is ignored, and the program keeps an ignored signal ignored (medopt/cli/signals.py):
# the children the SIGHUP test signals get the default back, as from a terminal.
if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
