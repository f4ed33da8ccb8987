"""The documentation site (mkdocs.yml) builds in strict mode: any warning (a broken link or anchor,
a docstring the API reference cannot render, a missing page) fails the build. The build goes to a
temporary directory; the output must hold the API reference, every notebook and the models/
catalogue. The docs extra (a part of the test extra) installs MkDocs and its plugins: missing, the
test fails, it does not skip."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import mkdocs  # noqa: F401  (installed with the test extra; a missing one must fail, not skip)

ROOT = Path(__file__).resolve().parents[1]


def test_the_site_builds_in_strict_mode(tmp_path):
    site = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")  # mkdocs-material's notice about MkDocs 2 on every build
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                           "-d", str(site)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]

    api = (site / "api" / "index.html").read_text()
    for name in ("medopt.api", "difference_range", "score_range", "MedResult", "RangeResult", "parse_metric"):
        assert name in api, f"the API reference lacks {name}"
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
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
    assert (site / "usage" / "index.html").is_file()  # the README
    assert not (site / "hooks.py").exists()
