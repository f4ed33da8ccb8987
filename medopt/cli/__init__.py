"""The ``medopt`` command (trec_eval habits: runs and qrels in, one row per topic and metric out).

One module per command, each registering itself on the group in ``common``; every module of this
package is imported here.  Nothing in medopt imports this package: the library works without click.
"""

from __future__ import annotations

from . import signals

if signals.is_program():  # first of all: an interrupt while the rest loads is one line too
    signals.install_exit_handlers()

import importlib  # noqa: E402
import pkgutil  # noqa: E402

from .common import main  # noqa: E402

for _module in pkgutil.iter_modules(__path__):
    if _module.name not in ("common", "signals", "__main__"):
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["main"]
