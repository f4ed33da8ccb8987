#!/usr/bin/env bash
# Install medopt into .venv and run the main job on the shipped example runs (examples/).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e .
mkdir -p out
.venv/bin/medopt compare examples/run.run0.txt examples/run.run1.txt --qrels examples/qrels.txt \
    -m nDCG@10 -m 'RBP(p=0.95)' -m P@10 -m AP@10 -m SSP@10 -o out/example.csv
echo "wrote out/example.csv"
tail -n 5 out/example.csv
