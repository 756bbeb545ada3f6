"""Run the benchmarks behind the published figures, one after another, then write the evaluation pages from their files.

    python -m benchmarks.run_all                          # every benchmark at its published parameters
    python -m benchmarks.run_all --only detection         # one group (speed, scale, detection, skill, gate)
    python -m benchmarks.run_all --only detection --small # the groups' smaller mode (the parameters are recorded)
    python -m benchmarks.run_all --list                   # what would run

Each benchmark runs in a process of its own (``python -m benchmarks.NAME ARGS``) from the repository's root and
writes benchmarks/results/<name>.json; a failed one is reported and the others still run (exit 1 at the end).
The evaluations record their own wall minutes in their parameters; benchmarks/README.md gives each group's cost.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

from benchmarks.results import ROOT

#: group -> (module, published arguments, the smaller mode's arguments or None for the same).
BENCHMARKS: dict[str, list[tuple[str, list[str], list[str] | None]]] = {
    "speed": [
        ("bench_demo", [], None),
        ("bench_validate", ["--small-runs", "5", "--runs", "7"], ["--small-runs", "5", "--runs", "3"]),
        ("bench_validate_memory", [], None),
        ("bench_hostile", [], ["--lines", "1000000"]),
        ("bench_hostile", ["--wide", "3"], None),
        ("bench_simulate", [], None),
        ("bench_simulate", ["--crowd", "10000", "100000"], ["--crowd", "10000"]),
        ("bench_simulate", ["--strength", "--seed", "7"], None),
        ("bench_decisions", ["--hands", "600", "--accuracy-hands", "10", "--policy", "model"], None),
        ("bench_decisions", ["--hands", "600", "--accuracy-hands", "10", "--policy", "strategy"],
         ["--hands", "200", "--accuracy-hands", "10", "--policy", "strategy"]),
        ("bench_options", [], ["--hands", "500", "--rounds", "5"]),
        ("train_value", ["--no-train"], ["--no-train", "--quick"]),
        ("bench_report", [], None),
    ],
    "scale": [
        ("bench_audit_scale", ["--sizes", "4000", "16000"], ["--sizes", "1000", "4000"]),
        ("bench_audit_scale", ["--sizes", "4000", "16000", "--from-store"], ["--sizes", "1000", "4000", "--from-store"]),
        ("bench_audit_memory", ["--sizes", "4000", "16000"], ["--sizes", "1000", "4000"]),
        ("bench_dask_workers", ["--sizes", "4000"], ["--sizes", "1000"]),
    ],
    "detection": [
        ("eval_simulators", ["--hands", "1000", "--seeds", "1,2"], ["--hands", "500", "--seeds", "1"]),
        ("eval_private_table", [], ["--honest-seeds", "2", "--seeds", "1"]),
        ("eval_audit", ["--workers", "2"], ["--quick", "--sets", "extra,honest", "--levels", "50,150", "--workers", "1"]),
        ("burst_null", ["--sets", "extra,honest"], ["--sets", "extra,honest", "--hands", "700"]),
    ],
    "skill": [
        ("eval_players", ["--models", "softmax,blunder,other_softmax,no_tong,rankcover", "--precision-hands", "24",
                          "--cheat", "--seed", "1,2,3"], ["--quick", "--models", "softmax,blunder,no_tong"]),
    ],
    "gate": [
        ("gate_mutations", [], None),
    ],
}


def plan(only: list[str] | None, small: bool) -> list[list[str]]:
    groups = only or list(BENCHMARKS)
    unknown = set(groups) - set(BENCHMARKS)
    if unknown:
        raise SystemExit(f"run_all: no group {', '.join(sorted(unknown))} (groups: {', '.join(BENCHMARKS)})")
    return [[module, *(smaller if small and smaller is not None else args)]
            for g in groups for module, args, smaller in BENCHMARKS[g]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated groups: " + ", ".join(BENCHMARKS))
    ap.add_argument("--small", action="store_true", help="each group's smaller mode")
    ap.add_argument("--list", action="store_true", help="print the commands and stop")
    a = ap.parse_args(argv)
    runs = plan(a.only.split(",") if a.only else None, a.small)
    failed = []
    for module, *args in runs:
        line = " ".join(["python", "-m", f"benchmarks.{module}", *args])
        if a.list:
            print(line)
            continue
        print(f"== {line}", flush=True)
        t = time.monotonic()
        if subprocess.run([sys.executable, "-m", f"benchmarks.{module}", *args], cwd=ROOT).returncode not in (0, 1):
            failed.append(line)
        print(f"== {time.monotonic() - t:.0f} s", flush=True)
    if a.list:
        return 0
    subprocess.run([sys.executable, "-m", "benchmarks.evaluation_page"], cwd=ROOT, check=True)
    for line in failed:
        print(f"failed: {line}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
