#!/usr/bin/env bash
# Install medopt with its test extras into .venv, lint it (ruff, import-linter) and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
# tests/house/test_docs_site.py opens the built site in headless Chromium (Debian's package): installed here when missing
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
        || echo "scripts/test.sh: chromium could not be installed; tests/house/test_docs_site.py will fail" >&2
fi
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[test]'
# the house checks first: the linter (configured in pyproject.toml) and the layers (import-linter)
.venv/bin/ruff check medopt tests benchmarks
.venv/bin/lint-imports
.venv/bin/python -m pytest -n auto -q "$@"
