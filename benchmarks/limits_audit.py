"""Interrupts, time limits and resource guards (issue 18), measured: the figures docs/limits.md records.

    .venv/bin/python benchmarks/limits_audit.py [--repeat N] [--limits 1,4] [--quick] [--cold] [--calibrate]
        [--log FILE]

Part 1, interrupts: the child processes of tests/limits/test_interrupts.py (a HiGHS MIP, HiGHS's MIP set-up,
CP-SAT, the Q-measure's box LPs, enumeration, ``medopt compare``), each interrupted ``--repeat``
times once its solve is under way; prints the largest latency (SIGINT sent -> process exited) per
case and any ending other than exit status 130.

Part 2, time limits: ``medopt.med`` with ``time_limit=T`` for each T of ``--limits`` over several
families at k = 100 and 1000 (generated pairs sharing most documents, nothing judged; and three
DL-HARD topics, bm25 against bm25+rm3 with the qrels, when ../shared/data is present), one child
process per family and depth; prints the overruns beyond T + 10% + 1 s (target 0), the largest
seconds / T, and the instances the memory guard refused instead.  ``--cold``: the children do not
warm up first, so each one's first solve imports the models and solvers inside its limit.

Part 3, resource guards: ``medopt compare`` cases that must end in one error line and exit status 2
(or finish within their limit), with their seconds and peak memory.

Part 4 (``--calibrate``): the memory model's bytes per entry (peak RSS of a child solving one
instance, per builder and solver, against formulations' ModelSize) and Pyomo's compile time against
its build time (COMPILE_PER_BUILD).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness
from harness import ROOT

DLHARD = harness.DL_HARD
MEDOPT = Path(sys.executable).with_name("medopt")
CHILD = harness.tests_module("test_interrupts").CHILD  # the interrupt children of tests/limits/test_interrupts.py


def run_child(command, *, marker=None, wait=None, timeout=600):
    """Run ``command``; with ``wait``, SIGINT it ``wait`` s after ``marker`` appears on stdout.
    (exit status, stdout, stderr, seconds from the start or from the signal)."""
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONUNBUFFERED": "1"})
    started = time.monotonic()
    head = ""
    if wait is not None:
        if marker is not None:
            for line in child.stdout:
                head += line
                if line.startswith(marker):
                    break
        time.sleep(wait)
        started = time.monotonic()
        child.send_signal(signal.SIGINT)
    try:
        out, err = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
    return child.returncode, head + out, err, time.monotonic() - started


def peak_command(command):
    """``command`` wrapped so that its peak RSS is printed last on stderr (MB)."""
    code = ("import resource, subprocess, sys; done = subprocess.run(sys.argv[1:]); "
            "print('PEAK_MB', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss >> 10, file=sys.stderr); "
            "sys.exit(done.returncode)")
    return [sys.executable, "-c", code, *command]


def split_peak(err: str) -> tuple[str, int | None]:
    lines = err.rstrip("\n").splitlines()
    if lines and lines[-1].startswith("PEAK_MB"):
        return "\n".join(lines[:-1]), int(lines[-1].split()[1])
    return err, None


# -- part 1 ---------------------------------------------------------------------------------------

INTERRUPT_CASES = [("highs", 1.0), ("highs-setup", 1.5), ("cpsat", 1.0), ("boxes", 1.0), ("enumerate", 0.5)]


def interrupts(repeat: int, folder: Path, log) -> dict:
    from medopt.synthetic.generate import generate_runs
    from medopt.io.trec import write_run

    paths = []
    for name, rankings in generate_runs(2, 1, 100, seed=1, similarity=0.6).items():
        paths.append(str(folder / f"{name}.txt"))
        write_run(paths[-1], rankings, name)
    # as tests/limits/test_interrupts.py: the Q-measure's box search with grades up to 3 (over 40 s); AP@100, once
    # a minute of HiGHS, is settled by the roof dual's search in under a second and ended before the SIGINT
    compare = [str(MEDOPT), "compare", *paths, "-m", "Q(beta=1)@100", "--max-grade", "3", "--solver", "highs",
               "--time-limit", "none"]
    worst, wrong = {}, 0
    for case, wait in INTERRUPT_CASES + [("compare (CLI)", 4.0)]:
        for _ in range(repeat):
            if case == "compare (CLI)":
                status, out, err, latency = run_child(compare, wait=wait)
                ok = status == 130 and err.strip().splitlines() == ["medopt: interrupted"]
            else:
                status, out, err, latency = run_child([sys.executable, "-c", CHILD, case], marker="SOLVING", wait=wait)
                ok = status == 130 and "INTERRUPTED" in out and "terminate called" not in err
            wrong += not ok
            worst[case] = max(worst.get(case, 0.0), latency)
            log({"part": "interrupt", "case": case, "latency": latency, "status": status, "ok": ok})
            if not ok:
                print(f"  WRONG ENDING {case}: status {status}: {err.strip()[-300:]}", file=sys.stderr)
    print("Interrupts: SIGINT -> exit, largest latency per case (s)")
    for case, latency in worst.items():
        print(f"  {case:16} {latency:6.2f}   ({repeat} runs)")
    print(f"  wrong endings: {wrong}; max latency: {max(worst.values()):.2f} s")
    return {"max_latency": max(worst.values()), "wrong": wrong}


# -- part 2 ---------------------------------------------------------------------------------------

LIMIT_CHILD = r"""
import json, sys, time
import medopt
from medopt.errors import TooLargeError
from medopt.synthetic.generate import generate_runs
spec = json.loads(sys.argv[1])
if not spec.get("cold"):  # warm: the imports before the clock; cold: the first solve imports them
    medopt.med("SSP@3", ["a", "b", "c"], ["c", "a", "d"], {}, solver="highs")
    medopt.med("AP@3", ["a", "b", "c"], ["c", "a", "d"], {}, solver="cpsat")
if spec["source"] == "generated":
    runs = generate_runs(2, 1, spec["depth"], seed=1, similarity=0.8)
    a, b = (list(next(iter(run.values()))) for run in runs.values())
    pairs = [("401", a, b, {})]
else:
    from medopt.io.trec import read_qrels, read_run
    folder = spec["folder"]
    A, B = read_run(folder + "/baselines/doc/bm25.run"), read_run(folder + "/baselines/doc/bm25+rm3.run")
    qrels = read_qrels(folder + "/dl_hard-doc.qrels")
    topics = sorted(set(A.rankings) & set(B.rankings) & set(qrels))[: spec["topics"]]
    pairs = [(t, A.rankings[t], B.rankings[t], qrels[t]) for t in topics]
seen = False
for limit in spec["limits"]:
    for topic, a, b, judged in pairs:
        started = time.perf_counter()
        row = {"metric": spec["metric"], "depth": spec["depth"], "source": spec["source"], "topic": topic,
               "cold": bool(spec.get("cold")),
               "method": spec.get("method", "auto"), "limit": limit, "first": not seen}
        seen = True
        try:
            result = medopt.med(spec["metric"], a, b, judged, time_limit=limit, **spec.get("options", {}))
            row.update(status=result.status, certified=result.certified, value=result.value,
                       bound=result.upper_bound)
        except TooLargeError as error:
            row.update(status="refused", error=str(error))
        row["seconds"] = time.perf_counter() - started
        print(json.dumps(row), flush=True)
"""

FAMILIES = [
    ("SSP@{k}", {}), ("AP@{k}", {}), ("AP@{k}", {"solver": "highs"}), ("AP", {}), ("AP(norm=min)@{k}", {}),
    ("nDCG@{k}", {"max_grade": 2}), ("ERR@{k}", {}), ("RR@{k}", {}), ("Q(beta=1)@{k}", {}), ("DCG@{k}", {}),
    ("AP@{k}", {"method": "tabu"}), ("AP@{k}", {"method": "greedy-pairs"}),
]
DLHARD_METRICS = [("AP", {}), ("AP@1000", {}), ("SSP@1000", {}), ("nDCG@1000", {}), ("ERR@1000", {}),
                  ("Q(beta=1)@100", {})]


def time_limits(limits: list[float], quick: bool, log, cold: bool = False) -> dict:
    """Part 2; ``cold``: no warm-up in the children, so each child's first solve (``first`` in its rows)
    also imports the models and solvers, as the first call of a fresh interpreter (a command) does."""
    specs = []
    for depth in (100, 1000):
        for metric, options in FAMILIES if not quick else FAMILIES[:4]:
            if metric == "AP" and depth == 100:
                continue  # no cutoff: the whole generated run, the same as depth 1000
            specs.append({"source": "generated", "depth": depth, "metric": metric.format(k=depth),
                          "options": options, "method": options.get("method", "auto"), "limits": limits,
                          "cold": cold})
    if DLHARD.exists():
        for metric, options in DLHARD_METRICS if not quick else DLHARD_METRICS[:2]:
            specs.append({"source": "dl-hard", "folder": str(DLHARD), "topics": 3 if not quick else 1,
                          "depth": 1000, "metric": metric, "options": options, "limits": limits, "cold": cold})
    rows = []
    for spec in specs:
        status, out, err, _ = run_child([sys.executable, "-c", LIMIT_CHILD, json.dumps(spec)], timeout=3600)
        got = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        if status != 0:
            print(f"  CHILD FAILED {spec['metric']} ({spec['source']}, {spec['depth']}): {err.strip()[-400:]}",
                  file=sys.stderr)
        for row in got:
            log({"part": "time limit", **row})
        rows += got
    solved = [r for r in rows if r["status"] != "refused"]
    over = [r for r in solved if r["seconds"] > r["limit"] * 1.1 + 1.0]
    print(f"Time limits: {len(rows)} time-limited solves (limits {', '.join(f'{t:g}' for t in limits)} s; "
          f"{len(rows) - len(solved)} refused by the memory guard)")
    for r in over:
        print(f"  OVERRUN {r['metric']} {r['source']} k={r['depth']} {r['method']} T={r['limit']:g}: "
              f"{r['seconds']:.2f} s" + (" (a cold first call)" if r.get("first") and r.get("cold") else ""))
    worst = max(solved, key=lambda r: r["seconds"] - r["limit"], default=None)
    if worst:
        excess = worst["seconds"] - worst["limit"]
        print(f"  overruns beyond T + 10% + 1 s: {len(over)}; largest excess: {excess:+.2f} s "
              f"({worst['metric']}, {worst['source']}, k={worst['depth']}, T={worst['limit']:g})")
    for r in rows:
        if r["status"] == "refused":
            print(f"  refused: {r['metric']} {r['source']} topic {r['topic']}: {r['error'][:110]}")
    return {"solves": len(solved), "overruns": len(over), "refused": len(rows) - len(solved)}


# -- part 3 ---------------------------------------------------------------------------------------

def guards(folder: Path, log) -> dict:
    from medopt.synthetic.generate import generate_runs
    from medopt.io.trec import write_run

    runs = []
    for name, rankings in generate_runs(2, 2, 1000, seed=1, similarity=0.8).items():
        runs.append(str(folder / f"deep-{name}.txt"))
        write_run(runs[-1], rankings, name)
    cases = [
        ("ERR@10, --max-grade 1100", [*runs, "-m", "ERR@10", "--max-grade", "1100"]),
        ("nDCG@5, --max-grade 10^6", [*runs, "-m", "nDCG@5", "--max-grade", "1000000"]),
        ("Q(beta=1)@1000, --time-limit 5", [*runs, "-m", "Q(beta=1)@1000", "--time-limit", "5"]),
        ("AP (map), --time-limit 10", [*runs, "-m", "map", "--time-limit", "10"]),
    ]
    if DLHARD.exists():
        doc = DLHARD / "baselines" / "doc"
        dl = [str(doc / "bm25.run"), str(doc / "bm25+rm3.run"), "--qrels", str(DLHARD / "dl_hard-doc.qrels")]
        cases += [
            ("DL-HARD map, --time-limit 10", [*dl, "-m", "map", "--time-limit", "10"]),
            ("DL-HARD nDCG@5, --max-grade 1000", [*dl, "-m", "nDCG@5", "--max-grade", "1000", "--time-limit", "10"]),
            ("DL-HARD Q(beta=1)@1000, --time-limit 5", [*dl, "-m", "Q(beta=1)@1000", "--time-limit", "5"]),
        ]
    print("Resource guards (medopt compare): exit status, seconds, peak memory, stderr")
    counts = {"cases": 0, "not clean": 0}
    for name, arguments in cases:
        started = time.monotonic()
        status, out, err, _ = run_child(peak_command([str(MEDOPT), "compare", *arguments]), timeout=3600)
        seconds = time.monotonic() - started
        err, peak = split_peak(err)
        lines = [line for line in err.splitlines() if line.strip() and not line.startswith("medopt: warning")]
        clean = (status == 2 and len(lines) == 1 and lines[0].startswith("medopt: error: ")) or \
            (status == 0 and not lines)
        counts["cases"] += 1
        counts["not clean"] += not clean
        log({"part": "guard", "case": name, "status": status, "seconds": seconds, "peak_mb": peak,
             "stderr": err, "clean": clean})
        print(f"  {name:40} exit {status}  {seconds:6.1f} s  {peak} MB  {'ok' if clean else 'NOT CLEAN'}")
        print(f"    {(lines[0] if lines else 'rows: ' + str(max(0, len(out.splitlines()) - 1)))[:150]}")
    return counts


# -- part 4 ---------------------------------------------------------------------------------------

CALIBRATE_CHILD = r"""
import json, resource, sys, time
spec = json.loads(sys.argv[1])
import medopt, medopt.formulations, medopt.exact.driver, highspy
from ortools.sat.python import cp_model
from medopt.exact.driver import available_strategies
from medopt.formulations import formulation_for
from medopt.synthetic.generate import generate_runs
from medopt.core.instance import build_instance
runs = generate_runs(2, 1, spec["depth"], seed=1, similarity=0.6)
a, b = (list(next(iter(run.values()))) for run in runs.values())
instance = build_instance(spec["metric"], a, b, {}, max_grade=spec.get("max_grade"))
formulation = formulation_for(instance.metric)
solver = spec.get("solver") or formulation.preferred_solver(instance) or "highs"
strategy = spec.get("strategy") or available_strategies(formulation, instance, solver)[-1]
size = formulation.model_size(instance, strategy)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
options = {"strategy": strategy} if spec.get("strategy") else {}
started = time.perf_counter()
result = medopt.med(spec["metric"], a, b, {}, max_grade=spec.get("max_grade"), method="exact", solver=solver,
                    time_limit=spec["limit"], memory_limit=2 ** 40, **options)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
from medopt.exact.common import predicted_bytes
print(json.dumps({**spec, "solver": solver, "strategy": strategy, "builder": size.builder, "entries": size.entries,
                  "dense": size.dense, "extra_mb": (peak - base) >> 20,
                  "predicted_mb": predicted_bytes(size, solver) >> 20,
                  "bytes_per_entry": (peak - base - 8 * size.dense) / max(size.entries, 1),
                  "seconds": time.perf_counter() - started, "status": result.status}))
"""

CALIBRATION = [
    {"metric": "SSP@600", "depth": 600}, {"metric": "SSP@1000", "depth": 1000},
    {"metric": "AP@600", "depth": 600}, {"metric": "AP@1000", "depth": 1000},
    {"metric": "AP@300", "depth": 300, "strategy": "enumerate", "solver": "highs"},
    {"metric": "nDCG@10", "depth": 10, "max_grade": 300},
    {"metric": "ERR@200", "depth": 200, "solver": "cpsat"}, {"metric": "ERR@200", "depth": 200, "strategy": "direct"},
    {"metric": "Q(beta=1)@100", "depth": 100}, {"metric": "Q(beta=1)@150", "depth": 150},
]

COMPILE_CHILD = r"""
import json, time
from medopt.formulations import formulation_for
from medopt.synthetic.generate import generate_runs
from medopt.core.instance import build_instance
from medopt.modeling import compile_model
MODELS = [("SSP@{k}", 300, 1, "direct"), ("AP@{k}", 200, 1, "case"), ("ERR@{k}", 150, 2, "direct"),
          ("ERR@{k}", 300, 2, "compact"), ("nDCG@{k}", 10, 200, "lam"), ("Q(beta=1)@{k}", 40, 2, "case"),
          ("DCG@{k}", 1000, 3, "direct")]
for metric, depth, grade, build in MODELS:
    runs = generate_runs(2, 1, depth, seed=1, similarity=0.6)
    a, b = (list(next(iter(run.values()))) for run in runs.values())
    instance = build_instance(metric.format(k=depth), a, b, {}, max_grade=grade)
    formulation = formulation_for(instance.metric)
    started = time.perf_counter()
    if build == "direct":
        model = formulation.build(instance, "a")
    elif build == "compact":
        model = formulation.build_compact(instance, "a")
    elif build == "lam":
        model = formulation.build(instance, "a", lam=0.5)
    else:
        model = formulation.build(instance, "a", case=next(iter(formulation.cases(instance))))
    built = time.perf_counter() - started
    started = time.perf_counter()
    matrix = compile_model(model)
    compiled = time.perf_counter() - started
    print(json.dumps({"model": f"{metric.format(k=depth)} {build}", "nonzeros": int(matrix.A.nnz), "build": built,
                      "compile": compiled, "ratio": compiled / built}))
"""


def calibrate(log) -> None:
    print("Memory model: bytes per ModelSize entry (peak RSS of the solve beyond the process's own, "
          "dense arrays off)")
    for spec in CALIBRATION:
        status, out, err, _ = run_child([sys.executable, "-c", CALIBRATE_CHILD, json.dumps({**spec, "limit": 20})],
                                        timeout=1200)
        rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        if not rows:
            print(f"  {spec['metric']}: failed: {err.strip()[-300:]}")
            continue
        r = rows[0]
        log({"part": "calibrate", **r})
        print(f"  {r['metric']:14} {r['strategy']:10} {r['builder']:6} {r['solver']:5} entries {r['entries']:>10,} "
              f"extra {r['extra_mb']:>5} MB  {r['bytes_per_entry']:6.0f} B/entry  predicted {r['predicted_mb']:>5} MB  "
              f"({r['status']}, {r['seconds']:.1f} s)")
    print("Pyomo: compile time against build time (COMPILE_PER_BUILD)")
    status, out, err, _ = run_child([sys.executable, "-c", COMPILE_CHILD], timeout=1200)
    for line in out.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            log({"part": "compile", **r})
            print(f"  {r['model']:22} {r['nonzeros']:>9,} nonzeros  build {r['build']:6.2f} s  "
                  f"compile {r['compile']:6.2f} s  ratio {r['ratio']:.2f}")
    if status:
        print(f"  failed: {err.strip()[-300:]}")


def main() -> int:
    parser = harness.parser(__doc__, log="")
    parser.add_argument("--repeat", type=int, default=2, help="interrupts per case (default 2)")
    parser.add_argument("--limits", default="1,4", help="time limits to test, seconds (default 1,4)")
    parser.add_argument("--quick", action="store_true", help="fewer families and topics")
    parser.add_argument("--cold", action="store_true", help="part 2 without warm-up: first calls import")
    parser.add_argument("--calibrate", action="store_true", help="also measure the memory model and compile ratio")
    parser.add_argument("--only", choices=("interrupts", "limits", "guards", "calibrate"), help="one part only")
    args = parser.parse_args()
    log = harness.Log(args.log, key=lambda row: row.get("part")).write

    print(f"medopt {harness.code_version()}, {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores")
    failed = False
    with tempfile.TemporaryDirectory() as folder:
        if args.only in (None, "interrupts"):
            found = interrupts(args.repeat, Path(folder), log)
            failed |= found["wrong"] > 0 or found["max_latency"] >= 2.0
        if args.only in (None, "limits"):
            found = time_limits([float(t) for t in args.limits.split(",")], args.quick, log, args.cold)
            failed |= found["overruns"] > 0
        if args.only in (None, "guards"):
            found = guards(Path(folder), log)
            failed |= found["not clean"] > 0
        if args.calibrate or args.only == "calibrate":
            calibrate(log)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
