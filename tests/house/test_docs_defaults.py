"""The defaults the docs show are the code's: docs/hooks.py renders each
``<!--default:NAME-->...<!--/default-->`` of a page from the constant that sets it, and no page
writes one of those defaults by hand."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import load_script
from mkdocs.exceptions import PluginError

from medopt.cli.common import DEFAULT_TIME_LIMIT
from medopt.core.deadlines import MEMORY_LIMIT
from medopt.methods import DEFAULT_SOLVER
from medopt.formulations.precision.sums import PrecisionSums

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]


hooks = load_script("docs/hooks.py", "medopt_docs_hooks")


def test_each_rendered_default_is_the_codes_constant():
    expected = {"time_limit": f"{DEFAULT_TIME_LIMIT:g}", "memory_limit_gb": f"{MEMORY_LIMIT / 2 ** 30:g}",
                "cpsat_depth": str(PrecisionSums.cpsat_depth),
                "default_solver": {"highs": "HiGHS", "cpsat": "CP-SAT"}[DEFAULT_SOLVER]}
    assert set(hooks.DEFAULTS) == set(expected)
    for name, value in expected.items():
        assert hooks.render_defaults(f"x <!--default:{name}-->stale<!--/default--> y", "page.md") == f"x {value} y"


def test_the_rendered_rule_is_the_one_the_code_applies():
    # the depth shown is where preferred_solver switches, probed on the rule's own input (the longer list)
    class Probe:
        def __init__(self, depth, family="AP"):
            self.a, self.b = tuple(range(depth)), ()
            self.metric = type("M", (), {"family": family})()

    depth = int(hooks.DEFAULTS["cpsat_depth"]())
    rule = PrecisionSums.preferred_solver
    assert rule(PrecisionSums, Probe(depth)) == "cpsat" and rule(PrecisionSums, Probe(depth - 1)) is None
    assert rule(PrecisionSums, Probe(depth, "SSP")) is None


def test_an_unknown_default_fails_the_build():
    with pytest.raises(PluginError, match="no default named 'nope'"):
        hooks.render_defaults("<!--default:nope-->1<!--/default-->", "page.md")


def test_every_page_names_known_defaults_and_writes_none_by_hand():
    used = set()
    # hand-written copies of the rendered defaults (outside a placeholder): the AP solver rule's depth,
    # the command line's time limit "by default", the memory limit per instance
    by_hand = [re.compile(r"AP\(norm=min\)[^.|]{0,20}\b(?:depth (?:k [<>]=? )?\d+|\d+ deep)"), re.compile(r"\b\d+ s (?:per \w+ )?by default"),
               re.compile(r"\b\d+ GB per instance")]
    for page in PAGES:
        text = page.read_text()
        used |= set(re.findall(r"<!--default:(\w+)-->", text))
        bare = hooks._DEFAULT.sub("<default>", text)
        for pattern in by_hand:
            found = pattern.search(bare)
            assert not found, f"{page.relative_to(ROOT)}: {found.group(0)!r} is written by hand (docs/hooks.py DEFAULTS)"
    assert used <= set(hooks.DEFAULTS)
    assert used == set(hooks.DEFAULTS), f"defaults no page shows: {set(hooks.DEFAULTS) - used}"


def _number(text: str) -> float:
    text = text.strip().removesuffix(" s").replace(",", "")
    if "/" in text:
        top, bottom = text.split("/")
        return float(top) / float(bottom)
    return float(text)


def test_the_tuned_constants_page_shows_the_codes_values():
    """docs/explanation/constants.md lists tuned constants with their values by hand: each value is the
    code's (the row of the dict-valued WORK_FACTOR and the prose rows are read by no rule and left out)."""
    import importlib

    row = re.compile(r"^\| ((?:`[A-Z_]+`(?:, )?)+) \(`([\w/]+)\.py`\) \| ([^|]+) \|", re.M)
    paths = list((ROOT / "medopt").rglob("*.py"))
    checked = 0
    for names, module, values in row.findall((ROOT / "docs" / "explanation" / "constants.md").read_text()):
        names = re.findall(r"`([A-Z_]+)`", names)
        if "WORK_FACTOR" in names:
            continue
        found = [p for p in paths if p.as_posix().endswith(f"/{module}.py")]  # a name, or a folder/name
        assert len(found) == 1, f"constants.md: {module}.py names {len(found)} modules"
        dotted = ".".join(found[0].relative_to(ROOT).with_suffix("").parts)
        code = importlib.import_module(dotted)
        shown = values.split(", ")
        assert len(shown) == len(names), f"constants.md: {names} shows {values!r}"
        for name, value in zip(names, shown):
            assert _number(value) == pytest.approx(float(getattr(code, name)), rel=1e-12), \
                f"constants.md shows {name} = {value}, {dotted} has {getattr(code, name)}"
            checked += 1
    assert checked >= 30
