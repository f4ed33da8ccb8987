#!/usr/bin/env bash
# Install medopt into .venv and run the exact-at-depth benchmark of issue 4 (benchmarks/exact_depth.py)
# on the DL-HARD runs in ../shared/data; arguments go to the benchmark (--help lists them).
#   bash scripts/benchmark.sh                                   # the full set (resumable log)
#   bash scripts/benchmark.sh --pairs 2 --topics 5 --ks 20      # a quick subset
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e .
exec .venv/bin/python benchmarks/exact_depth.py "$@"
