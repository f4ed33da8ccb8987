"""Time-limited Q(beta=1)@100 on DL-HARD (issue 20): value, proven bound, certificate and seconds per
topic, for one run pair, with the DL-HARD qrels and with no judgments, one instance at a time.

    PYTHONPATH=. .venv/bin/python benchmarks/q_time_limited.py --time-limit 10 --log q100.jsonl
    PYTHONPATH=. .venv/bin/python benchmarks/q_time_limited.py --summary q100.jsonl [other.jsonl]

Each instance is appended to the JSON-lines log as it finishes; ``--summary`` prints, per log and
judgments, the instances, the certified fraction, the median / max seconds, and how many
uncertified answers carry a bound below 1 (with the median and max of bound - value)."""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import medopt
from medopt.io.trec import read_qrels, read_run

import harness


def row_key(row: dict) -> tuple:
    """The instance a log row measured (rows of older logs lack the metric and limit)."""
    return row["a"], row["b"], row["topic"], row["judged"], row.get("metric"), row.get("time_limit")


def run(args) -> None:
    doc = args.data / "baselines" / "doc"
    first, second = read_run(doc / f"{args.a}.run"), read_run(doc / f"{args.b}.run")
    qrels = read_qrels(args.data / "dl_hard-doc.qrels")
    topics = sorted(set(first.rankings) & set(second.rankings), key=int)[: args.topics]
    with harness.Log(args.log, key=row_key) as log:
        for topic in topics:
            for judged in ("qrels", "none"):
                if (args.a, args.b, topic, judged, args.metric, args.time_limit) in log:
                    continue  # measured by an earlier run with this log
                judgments = qrels.get(topic, {}) if judged == "qrels" else None
                started = time.perf_counter()
                answer = medopt.med(args.metric, first.rankings[topic], second.rankings[topic], judgments,
                                    method="exact", time_limit=args.time_limit)
                row = dict(a=args.a, b=args.b, topic=topic, judged=judged, metric=args.metric,
                           time_limit=args.time_limit, value=answer.value,
                           bound=answer.upper_bound, certified=answer.certified,
                           seconds=round(time.perf_counter() - started, 3), solves=answer.details.get("solves"))
                log.write(row)


def summary(paths) -> None:
    print(f"{'log':<28} {'judged':<6} {'n':>4} {'certified':>9} {'median s':>8} {'max s':>6} "
          f"{'bound < 1':>9} {'gap median':>10} {'gap max':>8}")
    for path in paths:
        rows = [json.loads(line) for line in open(path)]
        for judged in ("qrels", "none"):
            group = [r for r in rows if r["judged"] == judged]
            if not group:
                continue
            open_rows = [r for r in group if not r["certified"]]
            gaps = [r["bound"] - r["value"] for r in open_rows]
            print(f"{Path(path).name:<28} {judged:<6} {len(group):>4} "
                  f"{100 * (len(group) - len(open_rows)) / len(group):>8.0f}% "
                  f"{statistics.median(r['seconds'] for r in group):>8.2f} {max(r['seconds'] for r in group):>6.2f} "
                  f"{sum(r['bound'] < 1 for r in open_rows):>4}/{len(open_rows):<4} "
                  f"{statistics.median(gaps) if gaps else 0:>10.3f} {max(gaps, default=0):>8.3f}")


def main(argv=None) -> None:
    parser = harness.parser(__doc__, data=harness.DL_HARD, log="q_time_limited.jsonl")
    parser.add_argument("--a", default="bm25")
    parser.add_argument("--b", default="bm25+rm3")
    parser.add_argument("--metric", default="Q(beta=1)@100")
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--time-limit", type=float, default=10.0)
    parser.add_argument("--summary", nargs="+", metavar="LOG")
    args = parser.parse_args(argv)
    if args.summary:
        summary(args.summary)
    else:
        run(args)


if __name__ == "__main__":
    main()
