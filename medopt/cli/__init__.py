"""The ``medopt`` command (trec_eval habits: runs and qrels in, one row per topic and metric out).

One module per command, each registering itself on the group in ``common``; every module of this
package is imported here.  Nothing in medopt imports this package: the library works without click.
"""

from __future__ import annotations

import importlib
import pkgutil

from .common import main

for _module in pkgutil.iter_modules(__path__):
    if _module.name not in ("common", "__main__"):
        importlib.import_module(f"{__name__}.{_module.name}")

__all__ = ["main"]
