"""Explicit mathematical programs for MED, one module per metric family.

Every module in this package and its family packages (``precision/``, ``q/``: a family whose
formulation spans several modules) is imported here and registers its formulation
(``base.register``) for the metric families it models: a new family needs only its module or
package, and no family imports another family's modules (what two families share is a kernel).  A formulation builds,
for one direction (A over B, or B over A), models whose maximum is that direction's largest
score difference; the interfaces it implements (``base``) say which exact strategies apply.
See models/ for the math.
"""

from __future__ import annotations

import importlib
import pkgutil

from .base import REGISTRY, Case, Formulation, formulation_for

for _module in pkgutil.walk_packages(__path__, prefix=f"{__name__}."):
    if _module.name != f"{__name__}.base":
        importlib.import_module(_module.name)

__all__ = ["REGISTRY", "Case", "Formulation", "formulation_for"]
