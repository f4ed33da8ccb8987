"""The cost of ``--range`` against MED alone, and how many comparisons are decided, on DL-HARD.

All 91 pairs of the 14 DL-HARD document runs x 50 topics, with the DL-HARD qrels, for AP@100,
nDCG@10 and RBP(p=0.8) (the default metrics).  Two ``medopt matrix`` jobs run side by side,
one worker each, on the same machine at the same time: one computes MED alone, the other the
difference ranges (``--range``), so whatever else the machine does weighs on both alike.  Each
job goes metric by metric into its own store (one per metric and mode), timed with a wall clock.

Prints, per metric: instances and certified fraction of each mode; median seconds per instance
(the store's ``seconds`` column: for the closed form's array kernels, a block's time divided
by its topics); total wall of each job; the ratio range / MED; and from the range stores, how
many of the 91 pairs are decided (the mean difference range excludes 0, SPEC 7), and how many
pairs have a MED of the means (max(mean high, -mean low)) below the mean of the MEDs.

The stores live in --out (default benchmarks/results/ranges); a rerun resumes them (only the
missing rows are computed; the walls of earlier runs are kept in walls.json and added).

    python benchmarks/ranges.py                       # the full benchmark (about 30 min on 2 cores)
    python benchmarks/ranges.py --metrics 'RBP(p=0.8)' --out /tmp/r   # one metric
"""

from __future__ import annotations

import json
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

import harness
from harness import DL_HARD

METRICS = ["AP@100", "nDCG@10", "RBP(p=0.8)"]
MODES = ("med", "range")


def store_of(out: Path, mode: str, metric: str) -> Path:
    safe = "".join(c if c.isalnum() else "_" for c in metric)
    return out / f"{mode}-{safe}.sqlite"


def run_mode(mode: str, metrics: list[str], out: Path, jobs: int) -> None:
    """One mode's jobs, metric by metric; each wall is added to walls.json (under a lock-free file per mode)."""
    runs = sorted(str(p) for p in (DL_HARD / "baselines" / "doc").glob("*.run"))
    walls_path = out / f"walls-{mode}.json"
    walls = json.loads(walls_path.read_text()) if walls_path.exists() else {}
    for metric in metrics:
        store = store_of(out, mode, metric)
        command = [sys.executable, "-m", "medopt.cli", "matrix", *runs, "--qrels", str(DL_HARD / "dl_hard-doc.qrels"),
                   "-m", metric, "--store", str(store), "-j", str(jobs), "--no-progress"]
        if store.exists():
            command.append("--resume")
        if mode == "range":
            command.append("--range")
        started = time.perf_counter()
        subprocess.run(command, check=True)
        walls[metric] = walls.get(metric, 0.0) + time.perf_counter() - started
        walls_path.write_text(json.dumps(walls, indent=1))


def rows(store: Path) -> list[dict]:
    with sqlite3.connect(store) as connection:
        connection.row_factory = sqlite3.Row
        return [dict(r) for r in connection.execute("SELECT * FROM results")]


def report(metrics: list[str], out: Path, log: harness.Log) -> None:
    walls = {mode: json.loads((out / f"walls-{mode}.json").read_text()) if (out / f"walls-{mode}.json").exists()
             else {} for mode in MODES}
    print("| metric | instances | certified (MED / range) | median s per instance (MED / range) | "
          "total wall s (MED / range) | range / MED wall | pairs decided | pairs with MED of means < mean of MEDs |")
    print("|---|---|---|---|---|---|---|---|")
    for metric in metrics:
        stores = {mode: store_of(out, mode, metric) for mode in MODES}
        if not all(s.exists() for s in stores.values()):
            print(f"| {metric} | (not computed) |")
            continue
        data = {mode: rows(s) for mode, s in stores.items()}
        certified = {mode: sum(r["certified"] for r in data[mode]) / max(len(data[mode]), 1) for mode in MODES}
        median = {mode: statistics.median(r["seconds"] for r in data[mode]) for mode in MODES}
        pairs = {}
        for r in data["range"]:
            pairs.setdefault((r["run_a"], r["run_b"]), []).append(r)
        decided = tighter = 0
        for topic_rows in pairs.values():
            low = sum(r["low"] for r in topic_rows) / len(topic_rows)
            high = sum(r["high"] for r in topic_rows) / len(topic_rows)
            decided += low > 0 or high < 0
            tighter += max(high, -low) < sum(r["value"] for r in topic_rows) / len(topic_rows) - 1e-12
        wall = {mode: walls[mode].get(metric, float("nan")) for mode in MODES}
        print(f"| {metric} | {len(data['med'])} / {len(data['range'])} | {certified['med']:.1%} / "
              f"{certified['range']:.1%} | {median['med']:.4f} / {median['range']:.4f} | {wall['med']:.1f} / "
              f"{wall['range']:.1f} | {wall['range'] / wall['med']:.2f} | {decided} of {len(pairs)} | "
              f"{tighter} of {len(pairs)} |")
        log.write({"metric": metric, "instances": {m: len(data[m]) for m in MODES}, "certified": certified,
                   "median": median, "wall": wall, "pairs": len(pairs), "decided": decided, "tighter": tighter})


def main() -> None:
    parser = harness.parser(__doc__, log="")
    parser.add_argument("--metrics", nargs="+", default=METRICS)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results" / "ranges")
    parser.add_argument("--jobs", type=int, default=1, help="workers per mode (the two modes run side by side)")
    parser.add_argument("--mode", choices=("both",) + MODES, default="both")
    parser.add_argument("--report-only", action="store_true", help="print the table from the stores as they are")
    args = parser.parse_args()
    if not DL_HARD.exists():
        sys.exit(f"DL-HARD data absent: {DL_HARD}")
    args.out.mkdir(parents=True, exist_ok=True)
    if not args.report_only:
        if args.mode == "both":
            children = [subprocess.Popen([sys.executable, __file__, "--mode", mode, "--out", str(args.out),
                                          "--jobs", str(args.jobs), "--metrics", *args.metrics]) for mode in MODES]
            for child in children:
                if child.wait():
                    sys.exit(f"a job failed (exit {child.returncode})")
        else:
            run_mode(args.mode, args.metrics, args.out, args.jobs)
            return
    with harness.Log(args.log, key=lambda r: r["metric"]) as log:
        report(args.metrics, args.out, log)


if __name__ == "__main__":
    main()
