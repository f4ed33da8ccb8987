"""The models/ catalogue: every formulation's program exactly as the code builds it.

Per formulation module, a Markdown page (its math, strategies, the Pyomo model built
for Moffat's X3/X4 example, the certified MED) and LP exports of the example's models.
``python -m medopt.workflows.catalogue models`` regenerates everything; tests/workflows/test_catalogue.py
regenerates into a temporary directory and fails on drift, so nothing generated may
depend on time, paths or solver timings.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections import namedtuple
from pathlib import Path

from ..api import med
from ..errors import MedoptError
from ..exact.common import Clock
from ..exact.driver import STRATEGIES, available_strategies
from ..methods import exact_settings
from ..formulations import REGISTRY as FORMULATIONS
from ..formulations import formulation_for
from ..core.instance import build_instance
from ..io.output import output_name
from ..modeling import pyomo_model

EXAMPLES = {
    # Moffat, eq. 6: only A (relevant) and E (non-relevant) judged; his Tables 2 and 3
    "moffat-x3x4": (tuple("ABCDEFGHJK"), tuple("ADBECGFJLH"), {"A": 1, "E": 0}),
    # Tan & Clarke's P@5 / RR example (Moffat's eq. 1): MED(P@5) = 0.2, MED(RR) = 0.5
    "tan-clarke-x1x2": (tuple("ABCDE"), tuple("BCFDA"), {"A": 0, "C": 1, "F": 0}),
}
CATALOGUE_EXAMPLE = "moffat-x3x4"
STRATEGY_TEXT = {
    "direct": "one model per direction; its maximum is that direction's largest difference.",
    "enumerate": "one model per case of the denominator (`cases()`, a constant in each); the answer is the "
                 "largest case optimum. The LP file is the case holding the optimum.",
    "boxes": "branch and bound over boxes of cases: a box's model bounds every case it holds (tested at the "
             "difference reached), a box that cannot beat it is closed, any other is halved; a box of one case "
             "is that case's model. The LP file is the case holding the optimum.",
    "dinkelbach": "maximise N - lam D, raising lam to the ratio of each solution until the optimum is 0. "
                  "The LP file is the last step: lam = the direction's MED, so its optimum is 0.",
    "capped": "AP(norm=min)@k = SP / min(k, R): Dinkelbach on the AP@k model (D = R) with the cap k a piece of "
              "its own (max N - lam k, solved once first; no denominator variables). The LP file is the last step "
              "of N - lam R: lam = the direction's MED, so its optimum is 0.",
    "compact": "one compact model per direction with continuous variables (HiGHS only; CP-SAT runs `direct`); "
               "its maximum is that direction's largest difference.",
}
SOLVERS = ("highs", "cpsat")


# what export_model built: lam is the Dinkelbach parameter, case the enumerated case's label
Export = namedtuple("Export", "metric direction strategy lam case model")


def _solve_direction(formulation, instance, direction, strategy):
    solved = STRATEGIES[strategy].solve(formulation, instance, direction, "highs", Clock(None))
    if not solved.proven or solved.assignment is None or not (solved.log or strategy != "enumerate"):
        raise MedoptError(f"{instance.metric}: the {strategy} solve of direction {direction} found no optimum")
    return solved


def export_model(metric, example_name: str, *, direction: str = "a", strategy: str | None = None,
                 lam: float | None = None, case: str | None = None, path=None) -> Export:
    """Build one direction's model of a worked example; write it as an LP file when ``path`` is given.

    Ratio metrics: by default the last Dinkelbach step (lam = the direction's exact MED,
    optimum 0); with strategy 'enumerate', the case holding the optimum (or ``case``, a label).
    """
    if example_name not in EXAMPLES:
        raise MedoptError(f"unknown example {example_name!r}; choose one of {', '.join(EXAMPLES)}")
    a, b, judgments = EXAMPLES[example_name]
    if direction not in ("a", "b"):
        raise MedoptError(f"direction must be 'a' or 'b', got {direction!r}")
    instance = build_instance(metric, a, b, judgments)
    formulation = formulation_for(instance.metric)
    _, strategy = exact_settings(instance, "highs", strategy)  # the exact method's default, or the one asked checked
    if lam is not None and strategy not in ("dinkelbach", "capped"):
        raise MedoptError("lam applies to strategies 'dinkelbach' and 'capped' only")
    if case is not None and strategy not in ("enumerate", "boxes"):
        raise MedoptError("case applies to strategies 'enumerate' and 'boxes' only")
    if strategy == "direct":
        model = formulation.build_direct(instance, direction)
    elif strategy == "compact":
        model = formulation.build_compact(instance, direction)
    elif strategy in ("dinkelbach", "capped"):
        if lam is None:  # the evaluator's value of the optimal assignment, not the solver's float
            lam = instance.difference(_solve_direction(formulation, instance, direction, strategy).assignment, direction)
        stepped = formulation.capped(instance)[0] if strategy == "capped" else instance  # capped: the N / R model
        model = formulation.build_dinkelbach(stepped, direction, lam)
    else:
        cases = {c.label: c for c in formulation.cases(instance)}
        if case is None:  # the first case whose optimum is the direction's maximum
            log = _solve_direction(formulation, instance, direction, "enumerate").log  # boxes: the same cases
            best = max(objective for _, objective, _ in log)
            case = next(label for label, objective, _ in log if objective >= best - 1e-9)
        if case not in cases:
            raise MedoptError(f"{instance.metric}: no case {case!r}; cases: {'; '.join(cases)}")
        model = formulation.build(instance, direction, case=cases[case])
    if path is not None:
        write_lp(model, path)
    return Export(str(instance.metric), direction, strategy, lam, case, model)


def _write_atomically(path, write) -> None:
    """write(temporary name) beside the target, then renamed over it (:func:`medopt.io.output.output_name`)."""
    with output_name(path, "-o") as temporary:
        write(temporary)


def write_lp(model, path) -> None:
    """CPLEX LP file with Pyomo's symbolic names (x[B,1] is written x(B_1))."""
    from pyomo.opt import ProblemFormat  # cpxlp is what "lp" means; Pyomo warns on "lp" with a .lp name

    _write_atomically(path, lambda name: model.write(name, format=ProblemFormat.cpxlp,
                                                     io_options={"symbolic_solver_labels": True}))


def _write_text(path, lines) -> None:
    _write_atomically(path, lambda name: Path(name).write_text("\n".join(lines), encoding="utf-8"))


def _abridged(text: str, limit: int = 400) -> str:
    return text if len(text) <= limit else text[:limit] + f" ... ({len(text)} characters; full form in the LP file)"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _index_text(component) -> str:
    if not component.is_indexed():
        return ""
    sets = list(component.index_set().subsets())
    if all(component.model().component(s.local_name) is s for s in sets):  # declared sets, not inline ones
        return "[" + ", ".join(s.name for s in sets) + "]"
    return f"[{_plural(len(component.index_set()), 'key')} given inline]"


def describe_model(model) -> str:
    """Markdown list of every component of a built Pyomo model, in declaration order."""
    import pyomo.environ as pyo

    lines = [f"Model name: `{model.name.strip(chr(39))}`", ""]  # Pyomo quotes names holding spaces
    for c in model.component_objects(descend_into=False):
        doc, head = f": {c.doc}" if c.doc else "", f"- **{c.ctype.__name__}** `{c.name}{_index_text(c)}`"
        first = next(iter(c.values()), None) if hasattr(c, "values") else None
        if c.ctype in (pyo.Set, pyo.RangeSet):
            members = " (" + ", ".join(map(str, c.data())) + ")" if len(c) <= 12 else ""
            lines.append(f"{head}, {_plural(len(c), 'member')}{members}{doc}")
        elif c.ctype is pyo.Var:
            fixed = sum(1 for v in c.values() if v.fixed)
            lines.append(f"{head}, {_plural(len(c), 'variable')}, domain {'-' if first is None else first.domain.name}"
                         f"{f', {fixed} fixed' if fixed else ''}{doc}")
        elif c.ctype in (pyo.Constraint, pyo.Expression, pyo.Objective):
            size = ""
            if c.ctype is pyo.Objective:
                size = ", maximize" if first.sense == pyo.maximize else ", minimize"
            elif c.ctype is pyo.Constraint or c.is_indexed():
                size = ", " + _plural(len(c), "row" if c.ctype is pyo.Constraint else "expression")
            lines.append(head + size + doc)
            if first is not None:
                lines.append(f"  - {f'e.g. `{first.name}`: ' if c.is_indexed() else ''}`{_abridged(str(first.expr))}`")
        else:
            lines.append(head + doc)
    return "\n".join(lines) + "\n"


def slug(metric: str, strategy: str | None = None) -> str:
    """File-name form of a metric string: SDCG@10 -> sdcg_at_10, AP(norm=min)@10 -> ap_normmin_at_10."""
    text = re.sub(r"[()=,]", lambda m: "_" if m[0] in "(," else "", metric.lower().replace("@", "_at_"))
    return text.strip("_") + (f"_{strategy}" if strategy else "")


def write_page(directory: Path, formulation) -> dict:
    """One formulation module's page and LP files; returns its row of the README index."""
    module = sys.modules[type(formulation).__module__]
    path = module.__name__.removeprefix("medopt.formulations.").split(".")  # a family package's module: q/measure
    module_name = "_".join(path)
    families = list(formulation.families)
    a, b, judgments = EXAMPLES[CATALOGUE_EXAMPLE]
    lp_rows, lp_files, med_rows, strategies_of, defaults, shown = [], [], [], {}, {}, None
    for metric in formulation.examples or tuple(f"{f}@10" for f in families):
        instance = build_instance(metric, a, b, judgments)
        available = strategies_of[str(instance.metric)] = available_strategies(formulation, instance, "highs")
        default = defaults[available] = exact_settings(instance, "highs")[1]
        continuous = formulation.continuous
        for strategy in available:
            results = [None if strategy in continuous and s == "cpsat" else
                       med(metric, a, b, judgments, method="exact", solver=s, strategy=strategy) for s in SOLVERS]
            solved = [r for r in results if r is not None]
            higher, certified = solved[0].direction, all(r.certified for r in solved)
            med_rows.append(f"| {instance.metric} | {strategy} | " + " | ".join(
                "—" if r is None else f"{round(r.value, 6) + 0.0:.6f}" for r in results)
                + f" | {higher.upper()} | {'yes' if certified else 'NO'} |")
            file_name = slug(str(instance.metric), None if strategy == default else strategy) + ".lp"
            exported = export_model(metric, CATALOGUE_EXAMPLE, direction=higher, strategy=strategy,
                                    path=directory / file_name)
            detail = f"lam = {exported.lam!r}" if exported.lam is not None else (
                f"case `{exported.case}`" if exported.case else "")
            lp_rows.append(f"| {instance.metric} | {strategy} | {higher.upper()} | {detail} | [{file_name}]({file_name}) |")
            lp_files.append(file_name)
            if shown is None and strategy == default:
                shown = exported
    by_strategies = {}
    for metric, available in strategies_of.items():
        by_strategies.setdefault(available, []).append(metric)
    strategy_lines = [f"- {', '.join(ms)}: {', '.join(f'`{s}`' for s in av)} (default `{defaults[av]}`)"
                      for av, ms in by_strategies.items()]
    strategies = list(dict.fromkeys(s for av in by_strategies for s in av))
    what = {"direct": "", "compact": "", "dinkelbach": f", the last Dinkelbach step (lam = {shown.lam!r}, optimum 0)",
            "capped": f", the last Dinkelbach step of N - lam R (lam = {shown.lam!r}, optimum 0)",
            "enumerate": f", the case `{shown.case}` holding the optimum",
            "boxes": f", the case `{shown.case}` holding the optimum"}[shown.strategy]
    _write_text(directory / f"{module_name}.md", [
        f"# {formulation.title}", "",
        f"Formulation module `medopt/formulations/{'/'.join(path)}.py`. Generated by "
        "`python -m medopt.workflows.catalogue models` from the code: do not edit.", "",
        f"Metric families: {', '.join(families)}. Exported here: {', '.join(strategies_of)}.", "",
        "## The program", "",
        "The module's own description (sets, variables, constraints, objective, linearisation, fractional "
        "handling); the grade variables `x[d,g]` and `one_grade` are shared by every model, see the "
        "[README](README.md).", "",
        "```text", inspect.cleandoc(module.__doc__ or ""), "```", "",
        "## Strategies", "", *strategy_lines, *[f"- `{s}`: {STRATEGY_TEXT[s]}" for s in strategies], "",
        "## Model for Moffat's X3/X4 at k = 10", "",
        f"X3 = {' '.join(a)}; X4 = {' '.join(b)}; judged {', '.join(f'{d} = {g}' for d, g in judgments.items())}; "
        f"every other document is unjudged. Metric {shown.metric}, direction "
        f"{'A over B' if shown.direction == 'a' else 'B over A'} (the list the MED favours), strategy "
        f"`{shown.strategy}`{what}. Every component, in the order the code declares it:", "",
        describe_model(shown.model),
        "## LP files", "",
        "Written by `medopt export -m METRIC --example moffat-x3x4 --direction D --strategy S -o FILE`.", "",
        "| metric | strategy | direction | model | file |", "|---|---|---|---|---|", *lp_rows, "",
        "## MED of the example", "",
        "Solved with `medopt.med(..., method=\"exact\", solver=..., strategy=...)`; certified = re-scored by "
        "the metric evaluator, bound met, solver optimal (SPEC 5).", "",
        "| metric | strategy | HiGHS | CP-SAT | higher list | certified by both |", "|---|---|---|---|---|---|",
        *med_rows, "",
    ])
    return {"row": f"| {formulation.title} | {', '.join(families)} | {', '.join(strategies)} | "
                   f"[{module_name}.md]({module_name}.md) | {', '.join(f'[{f}]({f})' for f in lp_files)} |",
            "files": [f"{module_name}.md", *lp_files]}


def write_catalogue(directory) -> list[str]:
    """Regenerate models/ (pages, LP files, README.md); returns the file names written."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    formulations = list({id(f): f for f in FORMULATIONS.values()}.values())  # registration order
    pages = [write_page(directory, formulation) for formulation in formulations]
    a, b, _ = EXAMPLES[CATALOGUE_EXAMPLE]
    _write_text(directory / "README.md", [
        "# The MED formulation catalogue", "",
        "Generated by `python -m medopt.workflows.catalogue models` from the code in `medopt/formulations/`; "
        "`tests/workflows/test_catalogue.py` regenerates it and fails when these files drift. Do not edit by hand.", "",
        "Each page gives a formulation's program (from its module docstring), its strategies, every Pyomo "
        f"component of the model the code builds for Moffat's example (X3 = {' '.join(a)}, X4 = {' '.join(b)}, "
        "A judged relevant, E judged non-relevant, k = 10), and the example's MED "
        "certified with HiGHS and CP-SAT. The `.lp` files are those models for the direction the MED "
        "favours (CPLEX LP format, Pyomo's symbolic names: `x[B,1]` is `x(B_1)`); any solver reads them.", "",
        "| family | metrics | strategies | page | LP files |", "|---|---|---|---|---|",
        *[page["row"] for page in pages], "",
        "## Shared by every model", "",
        "```text", inspect.cleandoc(pyomo_model.__doc__ or ""), "```", "",
        "## Other examples", "",
        "`medopt export --example NAME` also knows: "
        + ", ".join(f"`{n}`" for n in EXAMPLES if n != CATALOGUE_EXAMPLE) + ".", "",
    ])
    return ["README.md"] + [name for page in pages for name in page["files"]]


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "models")
    written = write_catalogue(target)
    print("\n".join(str(target / name) for name in written))
    for stale in sorted(p.name for p in target.glob("*") if p.suffix in (".md", ".lp") and p.name not in written):
        print(f"stale (not generated any more; delete it): {target / stale}", file=sys.stderr)
