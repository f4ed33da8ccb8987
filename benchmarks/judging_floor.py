"""The floor under benchmarks/judging.py: the fewest judgments with which ANY policy, even one that
knows every grade, can have 50% and 90% of the DL-HARD pairs decided (medopt.judging.floor, a
proven lower bound), next to the pool and depth pooling's measured judgments (docs/guide/judging.md).

Same data as benchmarks/judging.py: the 10 seeded pairs, the first --topics topics, the qrels as the
assessor (the rest grade 0), a seeded start share of the qrels (seed 0, as the campaigns), G = 3.
k = ceil(share x the pairs that all the qrels decide), counted among those pairs.  The floor is proven
(the MILP's dual bound when it stops at --time-limit); the MILP's incumbent is the most this
relaxation could ever prove (its optimum lies between the two).  Each (metric, start, share) is one
record of the JSON-lines --log; a rerun prints the ones there and computes only the rest (--fresh: all).

    python benchmarks/judging_floor.py                                   # nDCG@10 and AP@20, 0% and 25%
    python benchmarks/judging_floor.py --metrics nDCG@10 --starts 0
"""

from __future__ import annotations

import math
import time

from medopt.io.trec import read_qrels, read_run
from medopt.judging.floor import floor, pair_deviations
from medopt.judging.simulation import start_judgments

import harness
from harness import DL_HARD, dl_hard_runs, select_pairs  # the seeded pairs of benchmarks/exact_depth.py
from judging import GRADE_SCALE, decided_by_all

# docs/guide/judging.md's campaigns (benchmarks/judging.py): pool, depth pooling's judgments for 50% / 90%
MEASURED = {("nDCG@10", 0.0): (2064, 1879, 1970), ("nDCG@10", 0.25): (1870, 1688, 1779),
            ("AP@20", 0.0): (3975, 3343, 3553), ("AP@20", 0.25): (3663, 3295, 3411)}


def main() -> None:
    parser = harness.parser(__doc__, data=DL_HARD, log="benchmarks/results/judging_floor.jsonl", fresh=True, seed=0)
    parser.add_argument("--metrics", nargs="+", default=["nDCG@10", "AP@20"])
    parser.add_argument("--starts", nargs="+", type=float, default=[0.0, 0.25])
    parser.add_argument("--shares", nargs="+", type=float, default=[0.5, 0.9])
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--time-limit", type=float, default=300.0, help="seconds per MILP")
    args = parser.parse_args()
    log = harness.Log(args.log, key=lambda record: tuple(record["key"]), fresh=args.fresh)
    chosen = select_pairs(dl_hard_runs(args.data), args.pairs)
    rankings = {p.stem: read_run(p).rankings for pair in chosen for p in pair}
    pairs = [(a.stem, b.stem) for a, b in chosen]
    qrels = read_qrels(args.data / "dl_hard-doc.qrels")
    topics = sorted(set.intersection(*(set(r) for r in rankings.values())) & set(qrels))[:args.topics]
    print("| metric, start | pool | pairs decided by all | share | k | floor | proven optimal | "
          "MILP incumbent | depth (measured) | floor ÷ depth | half of depth | deviations s | MILP s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    with log:
        for metric in args.metrics:
            counted = None
            for start in args.starts:
                keys = {share: (metric, start, share, args.pairs, args.topics, args.seed, args.time_limit)
                        for share in args.shares}
                if any(key not in log for key in keys.values()):
                    if counted is None:
                        decidable = decided_by_all(metric, rankings, pairs, topics, qrels)
                        counted = [p for p in pairs if f"{p[0]} - {p[1]}" in decidable]
                    given = start_judgments(qrels, topics, start, args.seed)
                    started = time.perf_counter()
                    table = pair_deviations(metric, rankings, counted, topics, qrels, given, max_grade=GRADE_SCALE)
                    table_seconds = time.perf_counter() - started
                for share, key in keys.items():
                    if key not in log:
                        k = math.ceil(share * len(counted) - 1e-9)
                        result = floor(metric, rankings, counted, topics, qrels, given, k=k, max_grade=GRADE_SCALE,
                                       time_limit=args.time_limit, table=table)
                        log.write({"key": list(key), "decidable": len(counted), "k": k, "floor": result.judgments,
                                   "optimal": result.optimal, "incumbent": result.incumbent,
                                   "deviations_seconds": table_seconds, "milp_seconds": result.seconds})
                    print_row(log.done[key], args, flush=True)


def print_row(row: dict, args, flush: bool = False) -> None:
    """One table row of a logged floor, beside the docs' campaigns (MEASURED) when it is their setting."""
    metric, start, share = row["key"][:3]
    known = args.topics == 50 and args.pairs == 10 and args.seed == 0 and share in (0.5, 0.9)
    pool, *depth = MEASURED.get((metric, start), (math.nan,) * 3) if known else (math.nan,) * 3
    measured = depth[(0.5, 0.9).index(share)] if known and depth else math.nan
    ratio = math.nan if math.isnan(measured) else row["floor"] / measured
    incumbent = row["incumbent"] if row["incumbent"] is not None else "-"
    print(f"| {metric}, {start:.0%} | {pool:,} | {row['decidable']} | {share:.0%} | {row['k']} | "
          f"{row['floor']:,} | {'yes' if row['optimal'] else 'no (dual bound)'} | {incumbent} | {measured:,} | "
          f"{ratio:.2f} | {measured / 2:,.0f} | {row['deviations_seconds']:.1f} | {row['milp_seconds']:.1f} |",
          flush=flush)


if __name__ == "__main__":
    main()
