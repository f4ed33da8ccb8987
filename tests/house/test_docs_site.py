"""The documentation site (mkdocs.yml) builds in strict mode: any warning (a broken link or anchor,
a docstring the API reference cannot render, a missing page) fails the build. The build goes to a
temporary directory; the output must hold the API reference, every notebook and the models/
catalogue. The docs extra (a part of the test extra) installs MkDocs and its plugins: missing, the
test fails, it does not skip.

The notebooks' maths renders with no network: the built site, served on the loopback address, is
opened in headless Chromium (Debian's ``chromium``; scripts/test.sh installs it) whose every other
host fails to resolve and whose proxy for them is a closed port; MathJax, bundled into the site,
must have typeset every formula of each notebook page. Missing Chromium fails the test."""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import mkdocs  # noqa: F401  (installed with the test extra; a missing one must fail, not skip)
import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("docs")
    site = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")  # mkdocs-material's notice about MkDocs 2 on every build
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                           "-d", str(site)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    return site


def test_the_site_builds_in_strict_mode(site):
    api = (site / "reference" / "api" / "index.html").read_text()
    for name in ("medopt.api", "difference_range", "score_range", "MedResult", "RangeResult", "parse_metric"):
        assert name in api, f"the API reference lacks {name}"
    assert not re.search(r":(?:func|class|meth|mod|attr|exc):<code>", api), "a Sphinx role shown as text"
    assert '<a href="#medopt.api.med"><code>medopt.med</code></a>' in api  # the role as a link to the entry
    for notebook in NOTEBOOKS:
        page = site / "notebooks" / notebook.stem / "index.html"
        assert page.is_file(), f"no page for {notebook.name}"
        assert "jp-OutputArea" in page.read_text(), f"{notebook.name} rendered without its outputs"
    catalogue = site / "models" / "index.html"
    assert catalogue.is_file() and "formulation catalogue" in catalogue.read_text()
    for family in sorted((ROOT / "models").glob("*.md")):
        if family.name != "README.md":
            assert (site / "models" / family.stem / "index.html").is_file(), f"no page for models/{family.name}"
    for lp in sorted((ROOT / "models").glob("*.lp")):
        assert (site / "models" / lp.name).is_file(), f"models/{lp.name} is not on the site"
    assert (site / "readme" / "index.html").is_file()  # the README
    home = (site / "index.html").read_text()
    first = re.search(r"<h2\b[^>]*>(.*?)</h2>", home, flags=re.S)
    assert first and "Quickstart" in first.group(1), "the home page does not start with the quickstart"
    quickstart = re.sub(r"<[^>]+>", "", home[first.end():].split("<h2", 1)[0])
    assert "medopt compare" in quickstart, "the quickstart has no compare command"
    assert not (site / "hooks.py").exists()


def test_the_api_page_documents_every_export(site):
    # each name medopt exports (the lazy whole-run API among them) has its entry, headed by where it is defined
    import medopt

    anchors = set(re.findall(r'\bid="([\w.]+)"', (site / "reference" / "api" / "index.html").read_text()))
    missing = []
    for name in medopt.__all__:
        value = getattr(medopt, name)
        where = (f"{value.__module__}.{value.__qualname__}" if hasattr(value, "__qualname__")
                 else "medopt.methods")  # METHODS, the registry (a dict) of medopt.methods
        if where not in anchors:
            missing.append(f"{name} ({where})")
    assert not missing, f"the API reference lacks {missing}"
    for name in ("compare", "matrix", "MED", "MEDRange", "to_trec_eval", "to_latex", "judge_next"):
        assert name in medopt.__all__


# what makes a page fetch from another host: a script, a stylesheet, a font, an image, a frame
_REMOTE = re.compile(r"<(?:script|img|iframe|source)\b[^>]*\bsrc=\"(?:https?:)?//"
                     r"|<link\b(?=[^>]*\brel=\"(?:stylesheet|preload|preconnect|icon|modulepreload)\")[^>]*\bhref=\"(?:https?:)?//"
                     r"|@import\s+(?:url\()?[\"']?(?:https?:)?//")


def test_no_page_loads_anything_from_another_host(site):
    remote = [f"{page.relative_to(site)}: {match.group(0)}" for page in sorted(site.rglob("*.html"))
              for match in _REMOTE.finditer(page.read_text())]
    assert not remote, remote[:10]
    assert _REMOTE.search('<script src="https://cdn.example/mathjax.js">')  # the pattern finds what it must


def formulas(notebook: Path) -> int:
    """How many $...$ and $$...$$ formulas the notebook's markdown cells hold (code spans left out)."""
    cells = json.loads(notebook.read_text())["cells"]
    text = "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")
    text = re.sub(r"`[^`]*`", "", text)
    return len(re.findall(r"\$\$.+?\$\$|\$[^$]+\$", text, flags=re.S))


def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return shutil.which(name)
    pytest.fail("no chromium on PATH: scripts/test.sh installs Debian's package (apt-get install chromium)")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def served(site):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(_QuietHandler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def rendered_dom(url: str, profile: Path) -> str:
    """The page's DOM once its scripts have run, in headless Chromium with every host but 127.0.0.1 unreachable."""
    done = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           f"--user-data-dir={profile}", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                           "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=127.0.0.1",
                           "--virtual-time-budget=30000", "--dump-dom", url],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


WITH_MATHS = [notebook for notebook in NOTEBOOKS if formulas(notebook)]


def test_some_notebooks_hold_maths():
    assert len(WITH_MATHS) >= 3


@pytest.mark.parametrize("notebook", WITH_MATHS, ids=lambda p: p.name)
def test_the_maths_renders_without_network(notebook, served, tmp_path):
    dom = rendered_dom(f"{served}/notebooks/{notebook.stem}/", tmp_path / "profile")
    assert "jp-OutputArea" in dom, "the page did not load"
    typeset = len(re.findall(r"<mjx-container\b", dom))
    assert typeset == formulas(notebook), f"MathJax typeset {typeset} of the {formulas(notebook)} formulas"
    assert "<mjx-merror" not in dom, "MathJax reported a TeX error"
