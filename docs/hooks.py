"""MkDocs hooks of the documentation site (mkdocs.yml; not a page: exclude_docs leaves it out).

The site is ``docs/`` plus three things that live elsewhere in the repository and are read where
they are, never copied into ``docs/``:

- the generated formulation catalogue ``models/`` (pages and LP files), at ``models/`` on the site;
- the teaching notebooks ``notebooks/*.ipynb``, at ``notebooks/`` (mkdocs-jupyter renders their
  stored outputs; they are not executed here);
- the README, as the page ``readme.md``;
- MathJax, from the installed package django-static-mathjax (a part of the docs extra), at
  ``assets/mathjax/``: the notebooks' maths is typeset in the browser with no network access
  (``docs/assets/mathjax.js`` loads it; tests/house/test_docs_site.py checks it in headless Chromium).

Pages link to each other by their repository paths (``../models/README.md`` from ``docs/``,
``docs/limits.md`` from the README), so the links also work when the files are read in the
repository; ``on_page_markdown`` turns each such link into the same file's path on the site.
A link to a repository file that is not on the site is left as it is, and ``mkdocs build
--strict`` fails on it. A default the code sets is written in a page as
``<!--default:NAME-->VALUE<!--/default-->`` (the value as read in the repository) and the page on the
site shows the code's value instead (``DEFAULTS``: the command line's time limit, the memory limit, the
default solver and the depth from which AP solves on CP-SAT; an unknown name fails the build). A
table of measured figures is ``<!--benchmark:LOG-->`` (``<!--benchmark:LOG vs BASELINE-->``: the before /
after comparison) and is generated from the JSON-lines log ``benchmarks/logs/LOG.jsonl`` by the
``tables`` function of the script whose command the log records (``benchmark_table``); a missing log
fails the build. The
docstrings' Sphinx roles (``:func:`medopt.med` ``), which mkdocstrings leaves as text, become code spans
linked to the object's entry on the page (``on_page_content``).
"""

from __future__ import annotations

import posixpath
import re
import sys
from pathlib import Path
from urllib.parse import urlsplit

from importlib.metadata import PackageNotFoundError, distribution

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]
DOCS = "docs/"
MOUNTED = {"models": ("*.md", "*.lp"), "notebooks": ("*.ipynb",)}  # repository folder -> files taken
README, README_PAGE = "README.md", "readme.md"

# MathJax 3's TeX-to-HTML component with every TeX extension in the one file (none loaded on demand), its
# fonts (found from the component's own address) and its licence; the package's other files stay out
MATHJAX_DISTRIBUTION, MATHJAX_DIR, MATHJAX_SITE = "django-static-mathjax", "mathjax/static/mathjax", "assets/mathjax"
MATHJAX_FILES = ("es5/tex-chtml-full.js", "es5/output/chtml/fonts/woff-v2/*.woff", "LICENSE")

_LINK = re.compile(r"(\]\()(<[^>]*>|[^)\s]+)")  # the target of an inline link or image: ](target
_FENCE = re.compile(r"^\s*(```|~~~)")


def repository_path(site_path: str) -> str:
    """Where a page of the site (its path in the site's sources) is in the repository."""
    if site_path == README_PAGE:
        return README
    if site_path.split("/", 1)[0] in MOUNTED:
        return site_path
    return DOCS + site_path


def site_path(repository_file: str) -> str | None:
    """Where a repository file is in the site's sources (None: not on the site)."""
    if repository_file == README:
        return README_PAGE
    if repository_file.startswith(DOCS):
        return repository_file[len(DOCS):]
    if repository_file.split("/", 1)[0] in MOUNTED:
        return repository_file
    return None


# nav sections filled from the repository (mkdocs.yml leaves them empty): a new notebook or model family
# is on the site and in the menu without an edit here
GENERATED_NAV = {"Notebooks": ("notebooks", "*.ipynb", None), "Model catalogue": ("models", "*.md", "README.md")}


def on_config(config):
    fill_generated(config.nav or [])
    return config


def fill_generated(nav: list) -> None:
    """Fill the GENERATED_NAV sections wherever they are in the nav (at the top or inside a section)."""
    for section in nav:
        if not isinstance(section, dict):
            continue
        for title, entries in section.items():
            if title in GENERATED_NAV:
                folder, pattern, first = GENERATED_NAV[title]
                names = sorted(p.name for p in (ROOT / folder).glob(pattern) if p.is_file())
                if first in names:
                    names.remove(first)
                    names.insert(0, first)
                section[title] = [f"{folder}/{name}" for name in names]
            elif isinstance(entries, list):
                fill_generated(entries)


@event_priority(100)  # before the plugins: mkdocs-jupyter turns the .ipynb files into pages in its on_files
def on_files(files, config):
    for folder, patterns in MOUNTED.items():
        found = sorted({path for pattern in patterns for path in (ROOT / folder).glob(pattern) if path.is_file()})
        for path in found:
            # a File whose source directory is the repository root (not File.generated, whose abs_src_path
            # mkdocs-jupyter's wrapper of a notebook's File does not see)
            files.append(File(path.relative_to(ROOT).as_posix(), src_dir=str(ROOT), dest_dir=config.site_dir,
                              use_directory_urls=config.use_directory_urls))
    files.append(File.generated(config, README_PAGE, abs_src_path=str(ROOT / README)))
    for path, uri in mathjax_files():
        files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


def mathjax_files() -> list[tuple[Path, str]]:
    """The bundled MathJax files: (installed file, its path on the site), ``es5/`` dropped."""
    try:
        root = Path(distribution(MATHJAX_DISTRIBUTION).locate_file(MATHJAX_DIR))
    except PackageNotFoundError:
        raise PluginError(f"{MATHJAX_DISTRIBUTION} is not installed: pip install -e '.[docs]'") from None
    found = []
    for pattern in MATHJAX_FILES:
        paths = sorted(root.glob(pattern))
        if not paths:
            raise PluginError(f"{MATHJAX_DISTRIBUTION} has no {pattern} under {root}")
        found += [(path, f"{MATHJAX_SITE}/{path.relative_to(root).as_posix().removeprefix('es5/')}") for path in paths]
    return found


def site_link(target: str, page_source: str) -> str:
    """``target``, a link in the page whose site source path is ``page_source``, as a link on the site."""
    if target.startswith("<") and target.endswith(">"):
        return "<" + site_link(target[1:-1], page_source) + ">"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not parts.path or parts.path.startswith("/"):
        return target
    here = repository_path(page_source)
    linked = posixpath.normpath(posixpath.join(posixpath.dirname(here), parts.path))
    on_site = site_path(linked)
    if on_site is None:
        return target  # not on the site: strict mode reports it
    relative = posixpath.relpath(on_site, posixpath.dirname(page_source) or ".")
    return relative + (f"#{parts.fragment}" if parts.fragment else "")


def _time_limit() -> str:
    from medopt.cli.common import DEFAULT_TIME_LIMIT
    return f"{DEFAULT_TIME_LIMIT:g}"


def _memory_limit() -> str:
    from medopt.core.deadlines import MEMORY_LIMIT
    return f"{MEMORY_LIMIT / 1024 ** 3:g}"


def _cpsat_depth() -> str:
    from medopt.formulations.precision.sums import PrecisionSums
    return str(PrecisionSums.cpsat_depth)


SOLVER_NAMES = {"highs": "HiGHS", "cpsat": "CP-SAT"}  # a solver's name in the code -> in the docs


def _default_solver() -> str:
    from medopt.methods import DEFAULT_SOLVER
    return SOLVER_NAMES[DEFAULT_SOLVER]


# the defaults a page may show, each read from the code that sets it
DEFAULTS = {"time_limit": _time_limit, "memory_limit_gb": _memory_limit, "cpsat_depth": _cpsat_depth,
            "default_solver": _default_solver}
_DEFAULT = re.compile(r"<!--default:(\w+)-->(.*?)<!--/default-->")


def render_defaults(markdown: str, where: str) -> str:
    """Each ``<!--default:NAME-->...<!--/default-->`` of a page as the code's value of NAME."""
    def value(match):
        if match.group(1) not in DEFAULTS:
            raise PluginError(f"{where}: no default named {match.group(1)!r} (docs/hooks.py DEFAULTS)")
        return DEFAULTS[match.group(1)]()
    return _DEFAULT.sub(value, markdown)


BENCHMARKS = ROOT / "benchmarks"
BENCHMARK_LOGS = BENCHMARKS / "logs"
_BENCHMARK = re.compile(r"<!--benchmark:([\w.-]+)(?: vs ([\w.-]+))?-->")
_SCRIPT = re.compile(r"benchmarks/(\w+)\.py")


def _benchmark_module(name: str):
    """benchmarks/NAME.py, loaded from its file with benchmarks/ on the path (its ``import harness``)."""
    import importlib.util  # here: only a page with a benchmark table loads a script

    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(f"medopt_benchmark_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _log_records(name: str, where: str) -> list[dict]:
    import json  # here: only a page with a benchmark table reads a log

    path = BENCHMARK_LOGS / f"{name}.jsonl"
    if not path.is_file():
        raise PluginError(f"{where}: no benchmark log {path.relative_to(ROOT)}")
    records = []
    for line in path.read_text().splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:  # a line cut by an interruption (benchmarks/harness.py read_log)
            continue
    if not records:
        raise PluginError(f"{where}: {path.relative_to(ROOT)} has no record")
    return records


def benchmark_table(name: str, baseline: str | None = None, where: str = "page") -> str:
    """The Markdown table of ``benchmarks/logs/NAME.jsonl`` (against BASELINE's records, if given), made
    by the ``tables`` function of the script that wrote the log, and the line saying where it comes from."""
    records = _log_records(name, where)
    scripts = {m.group(1) for r in records if (m := _SCRIPT.search(r.get("command", "")))}
    if len(scripts) != 1:
        raise PluginError(f"{where}: {name}.jsonl names {len(scripts)} benchmark scripts in its commands, one expected")
    script = scripts.pop()
    module = _benchmark_module(script)
    markdown_table = sys.modules["harness"].markdown_table  # the harness the script imported
    if not hasattr(module, "tables"):
        raise PluginError(f"{where}: benchmarks/{script}.py has no tables(records) for {name}.jsonl")
    before = _log_records(baseline, where) if baseline else None
    header, rows = module.tables(records, before)
    commits = ", ".join(sorted({str(r.get("commit")) for r in records}))
    source = f"`benchmarks/logs/{name}.jsonl` (medopt {commits}"
    if baseline:
        base = ", ".join(sorted({str(r.get("commit")) for r in before}))
        source += f", against `{baseline}.jsonl`, medopt {base}"
    command = records[-1]["command"].split(" --log ")[0]
    return f"{markdown_table(header, rows)}\n\nFrom {source}): `{command}`."


def render_benchmarks(markdown: str, where: str) -> str:
    """Each ``<!--benchmark:LOG-->`` (or ``<!--benchmark:LOG vs BASELINE-->``) of a page as its table."""
    return _BENCHMARK.sub(lambda m: benchmark_table(m.group(1), m.group(2), where), markdown)


def on_page_markdown(markdown, page, config, files):
    source = page.file.src_uri
    markdown = render_benchmarks(render_defaults(markdown, source), source)
    lines, fenced = [], False
    for line in markdown.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            line = _LINK.sub(lambda m: m.group(1) + site_link(m.group(2), source), line)
        lines.append(line)
    return "\n".join(lines)


# a Sphinx role in a docstring (``:func:`medopt.med` ``), as the API reference renders it: the role's name
# before the code span; mkdocstrings' Google style has no roles
_ROLE = re.compile(r":(?:func|class|meth|mod|attr|exc|data|obj):(<code>([\w.]+)</code>)")
_ANCHOR = re.compile(r'\bid="([\w.]+)"')


def defined_at(name: str) -> str | None:
    """Where the object that a dotted name gives (``medopt.med``) is defined (``medopt.api.med``); None if none."""
    import importlib

    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except (ImportError, TypeError, ValueError):  # TypeError, ValueError: a relative name (`.models`)
            continue
        try:
            for part in parts[cut:]:
                value = getattr(value, part)
        except AttributeError:
            return None
        if isinstance(value, type(importlib)):
            return value.__name__
        module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", None)
        return f"{module}.{qualname}" if module and qualname else name
    return None


def on_page_content(html, page, config, files):
    """A docstring's Sphinx role becomes its code span, linked to the object's entry when the page has one."""
    anchors = set(_ANCHOR.findall(html))

    def link(match):
        code, name = match.group(1), match.group(2)
        target = next((t for t in (name, defined_at(name)) if t in anchors), None)
        return f'<a href="#{target}">{code}</a>' if target else code

    return _ROLE.sub(link, html)
