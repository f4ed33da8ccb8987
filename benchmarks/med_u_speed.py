"""MED-U speed: one topic pair at L = 12,000 through ``medopt.med`` and ``medopt.difference_range``
(the closed form, and the re-scoring by the U evaluator that certifies it), on generated passage runs
(medopt.synthetic.generate.generate_passage_runs) and on a worst case of many short passages.

    PYTHONPATH=. .venv/bin/python benchmarks/med_u_speed.py [--repeats 20]
"""

from __future__ import annotations

import medopt
from medopt.synthetic.generate import generate_passage_judgments, generate_passage_runs

import harness


def main(argv=None) -> None:
    parser = harness.parser(__doc__, log="")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args(argv)
    log = harness.Log(args.log, key=lambda r: r["case"])
    runs, documents = generate_passage_runs(2, 5, 40, seed=1)
    qrels, spans = generate_passage_judgments(runs, documents, seed=1)
    cases = [(f"generated topic {t}", runs["prun0"][t], runs["prun1"][t], qrels[t], spans[t]) for t in sorted(runs["prun0"])]
    short = [(f"s{i % 97}", 13 * (i // 97), 12) for i in range(1000)]   # 1,000 passages of 12 characters
    other = [(f"s{(i + 31) % 97}", 13 * (i // 97) + 5, 12) for i in range(1000)]
    cases.append(("1,000 short passages a side, 10,402 of the 12,000 characters bound", short, other, {}, {}))
    cases.append(("12,000 one-character passages a side (a passage per character: the worst case)",
                  [(f"d{i % 50}", i, 1) for i in range(12000)], [(f"d{i % 50}", i + 3, 1) for i in range(12000)], {}, {}))
    cases.append(("two disjoint unjudged trailtexts (Tan & Clarke's 2999.75)", [(f"a{i}", 0, 1000) for i in range(12)],
                  [(f"b{i}", 0, 1000) for i in range(12)], {}, {}))
    for name, a, b, judged, topic_spans in cases:
        med_timing, med = harness.timed(lambda: medopt.med("U(L=12000)", a, b, judged, spans=topic_spans, gains={1: 0.5}), args.repeats)
        range_timing, both = harness.timed(lambda: medopt.difference_range("U(L=12000)", a, b, judged, spans=topic_spans,
                                                                 gains={1: 0.5}), args.repeats)
        med_time, range_time = med_timing["median"], range_timing["median"]
        print(f"{name}: {len(a)} + {len(b)} passages; MED-U = {med.value:.4f} certified={med.certified} "
              f"med {1000 * med_time:.1f} ms; range [{both.low:.4f}, {both.high:.4f}] certified={both.certified} "
              f"{1000 * range_time:.1f} ms (median of {args.repeats})")
        log.write({"case": name, "med_value": med.value, "med_certified": med.certified, "low": both.low,
                   "high": both.high, "range_certified": both.certified,
                   "med": {k: v for k, v in med_timing.items() if k != "seconds"},
                   "range": {k: v for k, v in range_timing.items() if k != "seconds"}})
    log.close()


if __name__ == "__main__":
    main()
