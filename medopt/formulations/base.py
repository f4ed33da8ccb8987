"""The formulation registry and the interfaces a formulation declares.

A formulation module holds the math of one metric family's MED model and registers itself with
``@register``: which metric families it models and example metrics (the catalogue shows the
first; the registry-driven tests use them all).  What the exact driver can do with it follows
from the interfaces it implements, each the model side of one strategy (exact/):

* :class:`DirectModel` -- one model whose maximum is the direction's largest difference
  (strategy ``direct``; ``compact`` with :class:`CompactModel`);
* :class:`CaseModels` -- a ratio N / D solved case by case, each case a constant D (strategy
  ``enumerate``); or a difference of two ratios N_A / D_A - N_B / D_B whose denominators each
  depend on their own list (self-normalised metrics), each case both D constant
  (:class:`ListPairCase`);
* :class:`DinkelbachModels` -- a ratio solved by Dinkelbach steps max N - lam D
  (strategies ``dinkelbach`` and, with :class:`CappedRatio`, ``capped``);
* :class:`BoxSearch` -- cases grouped into boxes with a relaxation bound each (strategy ``boxes``).

Cases are typed: each formulation subclasses :class:`Case` with the fields that fix its
denominator.  Formulations import the modelling layer, never a solver.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable, ClassVar, Iterable

from ..errors import MedoptError


@dataclass(frozen=True)
class Case:
    """One constant denominator of a ratio metric (a subclass says what fixes it)."""

    label: str
    denominator: float


@dataclass(frozen=True)
class ListPairCase(Case):
    """A case of a difference of two ratios, M(A) - M(B) = N_A / D_A - N_B / D_B, where each list's
    score has a denominator of its own (SN_AP: the relevant documents of its top k): the case fixes
    both, ``denominator`` being D_A and ``denominator_b`` D_B.  A denominator of 0 means that list
    holds nothing counted and scores 0 in the case."""

    denominator_b: float = 0.0


@dataclass
class DinkelbachMatrix:
    """A ratio's Dinkelbach model as a matrix: the rows, N = numerator . x + numerator_constant,
    D likewise, and ``assignment(x)``: unjudged doc -> grade from solved column values."""

    matrix: object  # modeling.MatrixModel (its objective is set per step)
    numerator: object
    numerator_constant: float
    denominator: object
    denominator_constant: float
    assignment: Callable


@dataclass(frozen=True)
class ModelSize:
    """A prediction, made without building anything, of how large the models of one strategy get:
    the columns and matrix nonzeros (``entries``) of the largest model one direction holds at once,
    how it is written (``builder``: Pyomo holds far more per entry than modeling.LinearModel) and
    dense arrays beside it.  exact/driver.py turns it into bytes and refuses what would not fit
    (limits.MEMORY_LIMIT; the bytes per entry: docs/limits.md#memory)."""

    entries: int
    builder: str = "pyomo"   # "pyomo" or "matrix"
    dense: int = 0           # floats in dense arrays besides the matrix
    what: str = ""           # what makes the model this large, for a refusal message


def grade_variables(instance) -> int:
    """x[d, g]: one per unjudged document and positive grade (modeling.new_model)."""
    return len(instance.unjudged) * instance.max_grade


@dataclass
class DirectMatrix:
    """A direct model as a matrix, objective included, and ``assignment(x)``: unjudged doc -> grade
    from solved column values."""

    matrix: object  # modeling.MatrixModel
    assignment: Callable


class Formulation(ABC):
    """Builds MED models for the metric families it registers for."""

    families: ClassVar[tuple[str, ...]] = ()
    examples: ClassVar[tuple[str, ...]] = ()   # metric strings; the first is shown in the catalogue
    title: ClassVar[str] = ""
    continuous: ClassVar[frozenset] = frozenset()  # strategies whose models have continuous variables
    # its cases include the assignments whose denominator is 0 (each scored there), so the driver need
    # not cover a vanishing denominator at a range's end (exact/driver.cover_vanishing_denominator)
    covers_zero_denominators: ClassVar[bool] = False

    @abstractmethod
    def strategies(self, instance) -> tuple[str, ...]:
        """The strategies that apply to this instance, the usually fastest last (the default)."""

    def preferred_solver(self, instance) -> str | None:
        """The solver to use when none is asked for (None: the driver's default)."""
        return None

    def model_size(self, instance, strategy: str) -> ModelSize:
        """The size of ``strategy``'s models on ``instance`` (ModelSize).  This default counts the
        grade variables and their one-grade rows, which every model has; a formulation whose models
        grow faster says so."""
        n, grades = len(instance.unjudged), instance.max_grade
        return ModelSize(3 * grade_variables(instance),
                         what=f"{n:,} unjudged document{'s' * (n != 1)} x {grades:,} grades")

    def quick_bound(self, instance, direction: str) -> float:
        """Optional: a proven bound on the direction's difference found without a model, reported
        when the search stops before proving a better one (inf: none)."""
        return math.inf

    def relevant_count_ratio(self, instance) -> bool:
        """Whether the difference is a ratio N / D whose denominator depends on the relevant count R
        alone (R, or min(k, R)), N being the quadratic form of the formulation's relaxation
        (``relaxation_bound``, ``relevance_chains``, ``binding_cutoff``): then the branch and bound
        over R (exact/count_boxes.py), the bisection above a difference reached and the parametric
        bound (exact/relaxation.py) apply.  No by default."""
        return False

    def seeds(self, instance, direction: str) -> Iterable[dict]:
        """Cheap candidate assignments (unjudged doc -> grade); the driver re-scores each."""
        return ()

    def build(self, instance, direction: str, *, case: Case | None = None, lam: float | None = None):
        """The Pyomo model of one direction: a case's (``case``), a Dinkelbach step's (``lam``), or
        the direct model; the teaching entry point (notebooks, catalogue)."""
        if case is not None:
            if isinstance(self, BoxSearch) and self.is_box(case):
                return self.build_box(instance, direction, case, lam)
            return self.build_case(instance, direction, case)
        if lam is not None and isinstance(self, DinkelbachModels):
            return self.build_dinkelbach(instance, direction, lam)
        if lam is None and isinstance(self, DirectModel):
            return self.build_direct(instance, direction)
        raise MedoptError(f"{self.title}: no model for these arguments: give "
                          + ("a case" if isinstance(self, CaseModels) else "lam" if lam is None else "no lam"))


class DirectModel(ABC):
    @abstractmethod
    def build_direct(self, instance, direction: str):
        """A model whose maximum is the direction's largest score difference."""

    def direct_matrix(self, instance, direction: str) -> "DirectMatrix | None":
        """Optional: the same model in matrix form, built without Pyomo.  None: the driver compiles
        ``build_direct``."""
        return None


class CompactModel(ABC):
    @abstractmethod
    def build_compact(self, instance, direction: str):
        """A smaller model of the same maximum, with continuous variables."""


class CaseModels(ABC):
    @abstractmethod
    def cases(self, instance) -> Iterable[Case]:
        """Every possible denominator of the instance."""

    @abstractmethod
    def build_case(self, instance, direction: str, case: Case):
        """max N / case.denominator subject to D fixed at the case."""

    def bounded_cases(self, instance, direction: str):
        """Optional: (bound, case) pairs, bounds non-increasing, each a proven upper bound of the
        case's optimum in ``direction`` computed without a solver; cases admitting no assignment
        may be left out.  None: no such bounds (every case is solved)."""
        return None

    def min_denominator(self, instance) -> float:
        return 1.0


class DinkelbachModels(ABC):
    @abstractmethod
    def build_dinkelbach(self, instance, direction: str, lam: float):
        """max N - lam D, with ``numerator`` and ``denominator`` expressions on the model."""

    def dinkelbach_matrix(self, instance, direction: str) -> "DinkelbachMatrix | None":
        """Optional: the same model in matrix form, built without Pyomo.  None: the driver compiles
        ``build_dinkelbach``."""
        return None

    def min_denominator(self, instance) -> float:
        return 1.0


class CappedRatio(ABC):
    @abstractmethod
    def capped(self, instance):
        """(instance of the uncapped ratio N / D, cap): the metric is N / min(cap, D)."""


class BoxSearch(ABC):
    @abstractmethod
    def root_boxes(self, instance) -> list:
        """Boxes (and single cases) that together hold every case."""

    @abstractmethod
    def split(self, instance, box) -> list:
        """Two or more boxes (or cases) that together hold the box's cases."""

    @abstractmethod
    def is_box(self, case) -> bool:
        """Whether ``case`` is a box of several cases (else a single case)."""

    @abstractmethod
    def build_box(self, instance, direction: str, box, lam: float):
        """A model whose optimum F(lam) bounds R(x) (difference(x) - lam) over the box."""

    def small_box(self, instance, direction: str, box):
        """Optional: (exact maximum, assignment) of a box with few assignments, else None."""
        return None

    def too_wide(self, instance, box) -> bool:
        """Optional: a box whose relaxation could not bound it (split without a test)."""
        return False

    def box_bound(self, instance, direction: str, box) -> float:
        """Optional: a proven bound on every difference of the box found without a model (inf: none)."""
        return math.inf

    def box_quadratic(self, instance, direction: str):
        """Optional: the boxes' objectives as quadratic functions of binary variables (``form(box, lam)``,
        ``counts(box)``, ``assignment(labels)``: q/roof.py, BoxForm), tested by the roof dual before any model."""
        return None

    def box_models(self, instance, direction: str, cases: bool = False):
        """Optional: a compiled template whose ``patched(case, lam)`` is a box's or case's matrix."""
        return None


REGISTRY: dict[str, Formulation] = {}


def register(cls: type[Formulation]) -> type[Formulation]:
    """Class decorator: one instance of the formulation serves each family it declares."""
    formulation = cls()
    for family in cls.families:
        if family in REGISTRY:
            raise RuntimeError(f"two formulations for metric family {family!r}")
        REGISTRY[family] = formulation
    return cls


def formulation_for(metric) -> Formulation:
    formulation = REGISTRY.get(metric.family)
    if formulation is None:
        raise MedoptError(f"no exact formulation for {metric}")
    return formulation
