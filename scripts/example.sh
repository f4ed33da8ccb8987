#!/usr/bin/env bash
# Install medopt into .venv and run the main job on the shipped example runs (examples/):
# MED between every pair of the four runs, every topic, five metrics -> out/example.csv and a heatmap.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e .
mkdir -p out
rm -f out/example.sqlite out/example.sqlite-wal out/example.sqlite-shm  # a fresh job (or pass --resume)
.venv/bin/medopt matrix examples/run.run*.txt --qrels examples/qrels.txt \
    -m nDCG@10 -m 'RBP(p=0.95)' -m P@10 -m AP@10 -m SSP@10 \
    --range --store out/example.sqlite -o out/example.csv --summary out/example-pairs.csv \
    --heatmap out/example-heatmap.png
.venv/bin/medopt plot --kind verdicts --store out/example.sqlite -o out/example-verdicts.png
echo "wrote out/example.csv, out/example-pairs.csv (one row per pair and metric: observed means, mean"
echo "difference range, verdict), out/example-heatmap.png and out/example-verdicts.png"
head -n 4 out/example-pairs.csv | cut -c1-150

# MED-U (SPEC 8) on the shipped passage example: two 8-column passage runs, qrels and relevant spans
P=medopt/examples/passages
.venv/bin/medopt compare $P.run_a.txt $P.run_b.txt --qrels $P.qrels.txt --spans $P.spans.txt \
    -m 'U(L=12000)' --range -o out/example-med-u.csv
echo "wrote out/example-med-u.csv"
