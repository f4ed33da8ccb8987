"""The worst case of each heuristic, searched adversarially (medopt.campaigns.search).

For every heuristic x metric below and every k from 5 to 12, run the search for ``--seconds`` from
a fixed seed and print, per row: points evaluated, misses found (certified by the exact solver),
the worst relative gap 1 - heuristic / MED, and the smallest counterexample (fewest documents).
"found" counts the distinct points where the heuristic fell short of enumeration; the worst 50 and
the smallest are certified with the exact solver and saved.
For Moffat's greedy it also replays eq. 13's greedy with pair look-ahead (``greedy-pairs``) on
every miss found and counts where it is exact.  Counterexamples go to ``--out`` (JSON, replayable
with ``medopt.campaigns.counterexamples.check_counterexample``); the rows to ``--log`` (JSON lines,
one per row, so a rerun with the same log skips what is there).

    .venv/bin/python benchmarks/adversarial.py --seconds 20 --jobs 2
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import medopt
from medopt.campaigns.certify import parse_heuristic
from medopt.campaigns.counterexamples import save_counterexample
from medopt.campaigns.search import search

import harness

PAIRS = [("greedy", "AP@{k}"), ("greedy", "AP(norm=min)@{k}"), ("greedy-pairs", "AP@{k}"), ("tabu", "SSP@{k}"),
         ("tabu", "AP@{k}"),
         ("tc-err(p=1)", "ERR@{k}"), ("tc-err(p=2)", "ERR@{k}"), ("alg1", "nDCG@{k}")]
KS = range(5, 13)


def row(job) -> dict:
    heuristic_text, template, k, seconds, seed, out = job
    heuristic, metric = parse_heuristic(heuristic_text), template.format(k=k)
    report = search(metric, heuristic, k=k, seed=seed, budget=None, seconds=seconds)
    worst, smallest = report.worst(), report.smallest()
    result = {"heuristic": heuristic_text, "metric": metric, "k": k, "seed": seed, "seconds": round(report.seconds, 1),
              "evaluated": report.evaluated, "found": report.found, "misses": len(report.misses),
              "worst_relative_gap": worst.relative_gap if worst else 0.0,
              "worst": worst.counterexample if worst else None,
              "smallest": smallest.counterexample if smallest else None,
              "smallest_size": list(smallest.point.size()) if smallest else None}
    if heuristic.name == "greedy":
        exact = 0
        for miss in report.misses:
            data = miss.counterexample
            pairs = medopt.med(data["metric"], data["a"], data["b"], data["judgments"], max_grade=data["max_grade"],
                               method="greedy-pairs")
            exact += abs(pairs.value - data["values"]["exact"]) <= 1e-9
        result["greedy_pairs_exact"] = exact
    if out is not None:
        folder = Path(out) / f"{heuristic_text}-{metric}".replace("(", "_").replace(")", "").replace("=", "")
        folder.mkdir(parents=True, exist_ok=True)
        for number, miss in enumerate(report.misses[:5], start=1):
            save_counterexample(miss.counterexample, folder, number)
    return result


def main() -> None:
    parser = harness.parser(__doc__, log="benchmarks/results/adversarial.jsonl", seed=2026)
    parser.add_argument("--seconds", type=float, default=20.0, help="search time per heuristic, metric and k")
    parser.add_argument("--ks", type=int, nargs="+", default=list(KS))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/adversarial"))
    args = parser.parse_args()
    log = harness.Log(args.log, key=lambda item: (item["heuristic"], item["metric"], item["seed"]))
    done = log.done
    jobs = [(h, t, k, args.seconds, args.seed, args.out) for h, t in PAIRS for k in args.ks
            if (h, t.format(k=k), args.seed) not in done]
    with ProcessPoolExecutor(args.jobs) as pool, log:
        for result in pool.map(row, jobs):
            log.write(result)
    print(f"{'heuristic':13} {'metric':18} {'points':>7} {'found':>6} {'worst gap':>9}  smallest (docs, unjudged, "
          "outside)  greedy-pairs exact on the certified misses")
    for h, t in PAIRS:
        for k in args.ks:
            item = done.get((h, t.format(k=k), args.seed))
            if item is None:
                continue
            smallest = item["smallest_size"] or "-"
            pairs = "" if item.get("greedy_pairs_exact") is None else f"{item['greedy_pairs_exact']}/{item['misses']}"
            print(f"{h:13} {item['metric']:18} {item['evaluated']:7d} {item['found']:6d} "
                  f"{item['worst_relative_gap']:9.4f}  {str(smallest):30}{pairs}")


if __name__ == "__main__":
    main()
