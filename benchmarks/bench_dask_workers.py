"""Dask at 1 and 2 workers, for this checkout and (optionally) others, runs interleaved so the load hits all alike.

Run: ``python benchmarks/bench_dask_workers.py [--sizes 4000] [--against TREE ...] [--rounds 1]``

Each run is ``analyzer audit`` of the first N hands of ``bench_audit_scale.py``'s simulated room (64 players, seed 3)
with ``--dask local --jobs W`` in a fresh process (``bench_audit_scale.audit_once``): wall seconds, CPU seconds of the
command and the workers it reaped, the command's own CPU (the client, with the LocalCluster's scheduler and nannies),
the workers' CPU, and the machine's load. Before the runs and after each round, what the machine itself gives two busy
processes against one (``bench_audit_scale.machine_speedup``): the ceiling the host puts on any 2-worker speed-up
(a virtual machine's two cores may share a physical one). ``--against``: other checkouts of the repository (e.g. ``git worktree add
/tmp/old <commit>``), each run in turn with this one, round by round; the 2-worker speed-up is printed per tree.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_audit_scale import ROOT, audit_once, cut, describe_speedup, machine_speedup, room  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[4000])
    ap.add_argument("--against", type=Path, nargs="*", default=[])
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "bench_audit_scale")
    args = ap.parse_args()
    trees = [("this", ROOT)] + [(str(t), t.resolve()) for t in args.against]
    src = room(args.cache, 64, max(args.sizes), 3)
    warm = cut(src, 40, args.cache)
    for _, tree in trees:
        audit_once(warm, ["--jobs", "1"], tree)  # numba's cache and the OS's file cache, not measured
    machine = machine_speedup()
    print(f"before the runs: {describe_speedup(machine)}", flush=True)
    for n in args.sizes:
        log = cut(src, n, args.cache)
        walls: dict[tuple[str, int], list[float]] = {}
        for k in range(args.rounds):
            for w in (1, 2):
                for name, tree in trees:
                    r = audit_once(log, ["--dask", "local", "--jobs", str(w)], tree)
                    walls.setdefault((name, w), []).append(r["wall"])
                    print(f"{n} hands, round {k}, {name}, {w} worker(s): wall {r['wall']:.1f} s, CPU {r['cpu']:.1f} s, "
                          f"client {r['client']:.1f} s, workers {r['cpu'] - r['client']:.1f} s, "
                          f"peak {r['rss_mb']:.0f} MB, load {r['load']:.1f}", flush=True)
            now = machine_speedup()
            machine += now
            print(f"after round {k}: {describe_speedup(now)}", flush=True)
        for name, _ in trees:
            one, two = sum(walls[(name, 1)]), sum(walls[(name, 2)])
            print(f"{n} hands, {name}: 2 workers / 1 worker: wall x{one / two:.2f} faster (goal 1.7)")
    print(f"over the whole benchmark, {describe_speedup(machine)}")


if __name__ == "__main__":
    main()
