"""Which documents to judge next, measured: a judging campaign simulated on DL-HARD (or TREC DL 2020,
--collection dl2020) for each policy of ``medopt judge-next`` (lookahead, assignment, depth pooling,
random; with --model, expected and mtc too).

With --model (rank, uniform(p=..)) every campaign also stops a pair at the --confidence under the
model refitted after every batch on the campaign's own judgments (the start's are a pool's, biased;
--fit-start to use them too), P(sign) the mixture of --model-draws bootstrap fits
(medopt.judging.confident), and the report adds, per policy, the
error rate: the share of the pairs done at the end whose decided sign disagrees with the sign of the
mean difference under all the qrels (a tie under all the qrels counts as a disagreement).  Pairs are
counted over all 10 pairs (not only those the qrels decide), since a confident decision can be taken on
any pair.

10 seeded pairs of DL-HARD document runs (the pairs of benchmarks/exact_depth.py) are compared
together, over the first --topics topics.  The DL-HARD qrels play the assessor (a document they do
not grade counts as judged not relevant).  The campaign starts from 0% and from 25% of each topic's
qrels (seeded) and judges in batches of --batch documents of one topic, the policy choosing the
topic and the documents, re-solving that topic's ranges after each batch (medopt.judging.simulation).

Prints per metric and start: for each policy, the judgments spent (beyond the start) when 50% and
90% of the pairs that all the qrels decide are decided (the mean difference range excludes 0, SPEC 7),
the ratio to depth pooling, the batches, and the wall seconds of the first selection (every topic's
batch), the median of the others (one topic's) and the longest (every topic's again after a pair is
done).  Plots
judgments spent against decided pairs and against the mean MED, one line per policy
(--out/judging-METRIC-START.png; with --model, against the error rate of the pairs done so far).  Each campaign's records are appended to --out/campaigns.jsonl as
soon as it ends, so a rerun skips the campaigns already there.

    python benchmarks/judging.py                                   # nDCG@10 and AP@100, all 50 topics
    python benchmarks/judging.py --metrics nDCG@10 --topics 10     # a quick subset
    python benchmarks/judging.py --model rank --policies expected mtc depth --metrics nDCG@10
    python benchmarks/judging.py --collection dl2020 --model rank --policies expected mtc depth
"""

from __future__ import annotations

import json
import math
import statistics
import sys
import time
from pathlib import Path

import medopt
from medopt.io.trec import read_qrels, read_run
from medopt.judging.next import POLICIES
from medopt.judging.simulation import simulate

import harness
from harness import DL_2020, DL_HARD, Log, dl_hard_runs, select_pairs  # the seeded pairs of exact_depth.py

METRICS = ["nDCG@10", "AP@100"]
STARTS = [0.0, 0.25]
GRADE_SCALE = 3  # the DL-HARD qrels' top grade


def true_signs(metric, rankings, pairs, topics, qrels) -> dict:
    """{"a - b": the sign of the mean difference once everything is judged (qrels, the rest not relevant)}."""
    signs = {}
    for a, b in pairs:
        diff = sum(medopt.score(metric, rankings[a][t], qrels.get(t, {}), max_grade=GRADE_SCALE)
                   - medopt.score(metric, rankings[b][t], qrels.get(t, {}), max_grade=GRADE_SCALE) for t in topics)
        signs[f"{a} - {b}"] = 0 if abs(diff) <= 1e-12 else (1 if diff > 0 else -1)
    return signs


def decided_by_all(metric, rankings, pairs, topics, qrels) -> list:
    """The pairs whose means differ once everything is judged (qrels, the rest not relevant)."""
    return [pair for pair, sign in true_signs(metric, rankings, pairs, topics, qrels).items() if sign]


def error_rate(records, signs) -> tuple[float, int]:
    """(share of the pairs done at the end decided against the full qrels' sign, pairs done)."""
    decisions = records[-1].get("decisions", {})
    if not decisions:
        return math.nan, 0
    wrong = sum(sign != signs[pair] for pair, (sign, _) in decisions.items())
    return wrong / len(decisions), len(decisions)


def spent_for(records, decidable, share) -> float:
    """Judgments spent when at least ``share`` of the ``decidable`` pairs were decided (inf: never)."""
    need = math.ceil(share * len(decidable) - 1e-9)
    for record in records:
        if sum(p in decidable for p in record["done_pairs"]) >= need:
            return record["spent"]
    return math.inf


def errors_so_far(record, signs) -> float:
    """The share of the pairs done by ``record`` decided against the full qrels' sign (nan: none done)."""
    decisions = record.get("decisions", {})
    return sum(sign != signs[p] for p, (sign, _) in decisions.items()) / len(decisions) if decisions else math.nan


def start_bias(rankings, topics, qrels, start, seed, ranks=10) -> None:
    """The diagnostic of the start's bias: P(relevant | rank) of the rank model fitted on the start's
    judgments against the share of the unjudged documents at that rank that the qrels call relevant."""
    from medopt.judging.simulation import start_judgments  # only for the diagnostic
    from medopt.relevance import fit_rank_model  # only for the diagnostic

    judged = start_judgments(qrels, topics, start, seed)
    runs = [{t: run.get(t, ()) for t in topics} for run in rankings.values()]
    if not any(judged.values()):
        print(f"start {start:.0%}: nothing judged, nothing fitted")
        return
    fitted = 1.0 - fit_rank_model(runs, judged, GRADE_SCALE).table[:ranks, 0]
    relevant, seen = [0] * ranks, [0] * ranks
    for run in runs:
        for topic, ranking in run.items():
            for rank, doc in enumerate(ranking[:ranks]):
                if doc not in judged[topic]:
                    seen[rank] += 1
                    relevant[rank] += qrels.get(topic, {}).get(doc, 0) > 0
    print(f"start {start:.0%}: P(relevant | rank 1..{ranks}) fitted " + " ".join(f"{p:.2f}" for p in fitted))
    print(f"start {start:.0%}: relevant share of the unjudged     " +
          " ".join(f"{r / n:.2f}" if n else "-" for r, n in zip(relevant, seen)))


def plot(campaigns, path: Path, title: str, signs=None) -> None:
    import matplotlib  # only here: plotting is optional

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # after the backend is chosen

    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    for policy, records in campaigns.items():
        spent = [r["spent"] for r in records]
        left.step(spent, [r["done"] for r in records], where="post", label=policy)
        if signs is None:
            right.plot(spent, [r["mean_med"] for r in records], marker=".", label=policy)
        else:
            right.step(spent, [100 * errors_so_far(r, signs) for r in records], where="post", label=policy)
    left.set(xlabel="judgments spent", ylabel="pairs done", title=title)
    if signs is None:
        right.set(xlabel="judgments spent", ylabel="mean MED (mean over pairs)", title=title)
    else:
        right.set(xlabel="judgments spent", ylabel="error rate of the pairs done (%)", title=title)
    left.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main() -> None:
    parser = harness.parser(__doc__, data=DL_HARD, seed=0)
    parser.add_argument("--collection", choices=("dl-hard", "dl2020"), default="dl-hard")
    parser.add_argument("--model", default=None, help="a relevance model: stop pairs at --confidence")
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--model-draws", type=int, default=8,
                        help="bootstrap fits of the rank model whose mixture gives P(sign) (1: the point fit)")
    parser.add_argument("--diagnose", action="store_true",
                        help="print the rank model fitted on each start against the unjudged documents' rates")
    parser.add_argument("--fit-start", action="store_true",
                        help="fit the rank model on the start's judgments too (a pool's: biased)")
    parser.add_argument("--metrics", nargs="+", default=METRICS)
    parser.add_argument("--starts", nargs="+", type=float, default=STARTS)
    parser.add_argument("--policies", nargs="+", default=["lookahead", "assignment", "depth", "random"],
                        choices=(*POLICIES, "clairvoyant"),
                        help="clairvoyant: a yardstick that reads the grades (medopt.judging.simulation)")
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--batch", type=int, default=10, help="documents judged per topic and round")
    parser.add_argument("--max-batches", type=int, default=None)
    parser.add_argument("--time-limit", type=float, default=60.0, help="seconds per range solve")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/judging"))
    args = parser.parse_args()
    if args.collection == "dl2020" and args.data == DL_HARD:
        args.data = DL_2020
    if not args.data.exists():
        sys.exit(f"{args.collection} data not found at {args.data}")
    args.out.mkdir(parents=True, exist_ok=True)
    log = Log(args.out / "campaigns.jsonl")
    stored = log.done
    if args.collection == "dl2020":
        chosen = select_pairs(sorted((args.data / "runs").glob("*.run.gz")), args.pairs)
        qrels = read_qrels(args.data / "qrels.dl20-passage.txt")
    else:
        chosen = select_pairs(dl_hard_runs(args.data), args.pairs)
        qrels = read_qrels(args.data / "dl_hard-doc.qrels")
    name = {p: p.name.split(".run")[0] for pair in chosen for p in pair}
    rankings = {name[p]: read_run(p).rankings for pair in chosen for p in pair}
    pairs = [(name[a], name[b]) for a, b in chosen]
    topics = sorted(set.intersection(*(set(r) for r in rankings.values())) & set(qrels))[:args.topics]
    if args.diagnose:
        for start in args.starts:
            start_bias(rankings, topics, qrels, start, args.seed)
        return
    for metric in args.metrics:
        signs = true_signs(metric, rankings, pairs, topics, qrels)
        decidable = [p for p, s in signs.items() if s] if args.model is None else list(signs)
        for start in args.starts:
            campaigns = {}
            for policy in args.policies:
                key = json.dumps([metric, start, policy, args.pairs, args.topics, args.batch, args.max_batches,
                                  args.seed] + ([] if args.model is None and args.collection == "dl-hard" else
                                                [args.collection, args.model, args.confidence])
                                 + ([] if args.model is None else [args.model_draws, args.fit_start]))
                if key not in stored:
                    started = time.perf_counter()
                    records = simulate(metric, rankings, pairs, topics, qrels, policy=policy, start=start,
                                       batch=args.batch, seed=args.seed, max_grade=GRADE_SCALE,
                                       max_batches=args.max_batches, time_limit=args.time_limit,
                                       model=args.model, confidence=args.confidence if args.model else None,
                                       model_draws=args.model_draws, fit_start=args.fit_start)
                    log.write({"key": key, "records": records, "wall": time.perf_counter() - started})
                campaigns[policy] = stored[key]
            report(metric, start, campaigns, decidable, len(pairs), len(topics), signs)
            plot({p: c["records"] for p, c in campaigns.items()},
                 args.out / f"judging-{''.join(c if c.isalnum() else '_' for c in metric)}-{int(start * 100)}.png",
                 f"{metric}, start {start:.0%}", signs if args.model else None)


def report(metric, start, campaigns, decidable, pair_count, topic_count, signs) -> None:
    print(f"\n## {metric}, start {start:.0%} of the qrels: {pair_count} pairs x {topic_count} topics; "
          f"{sum(1 for s in signs.values() if s)} pairs decided by all the qrels; counting {len(decidable)}")
    print("| policy | judgments for 50% | for 90% | 90% / depth | batches | judged at the end | "
          "first selection s | median selection s | max selection s | wall s | error rate (done) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    depth = campaigns.get("depth")
    depth_90 = spent_for(depth["records"], decidable, 0.9) if depth else math.nan
    for policy, campaign in campaigns.items():
        records = campaign["records"]
        half, most = spent_for(records, decidable, 0.5), spent_for(records, decidable, 0.9)
        later = [r["selection_seconds"] for r in records[2:]]
        first = records[1]["selection_seconds"] if len(records) > 1 else 0.0
        rate, done = error_rate(records, signs)
        ratio = most / depth_90 if math.isfinite(most) and depth_90 and math.isfinite(depth_90) else math.nan
        print(f"| {policy} | {half:g} | {most:g} | {ratio:.2f} | {len(records) - 1} | {records[-1]['spent']} | "
              f"{first:.2f} | {statistics.median(later) if later else 0:.3f} | "
              f"{max((r['selection_seconds'] for r in records[1:]), default=0):.2f} | {campaign['wall']:.1f} | "
              f"{rate:.1%} ({done}) |")


if __name__ == "__main__":
    main()
