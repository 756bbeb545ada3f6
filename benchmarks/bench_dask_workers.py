"""Dask at 1 and 2 workers, for this checkout and (optionally) others, runs interleaved so the load hits all alike.

Run: ``python -m benchmarks.bench_dask_workers [--sizes 4000] [--against TREE ...] [--rounds 1] [--standing]``
(writes results/dask.json)

Each run is ``analyzer audit`` of the first N hands of ``bench_audit_scale.py``'s simulated room (64 players, seed 3)
with ``--dask local --jobs W`` in a fresh process (``bench_audit_scale.audit_once``): wall seconds, CPU seconds of the
command and the workers it reaped, the command's own CPU (the client, with the LocalCluster's scheduler and nannies),
the workers' CPU, and the machine's load. Before the runs and after each round, what the machine itself gives two busy
processes against one (``bench_audit_scale.machine_speedup``, pure-Python work and the audit's own decision
analysis): the ceiling the host puts on any 2-worker speed-up
(a virtual machine's two cores may share a physical one). ``--against``: other checkouts of the repository (e.g. ``git worktree add
/tmp/old <commit>``), each run in turn with this one, round by round; the 2-worker speed-up is printed per tree.

``--standing``: each run against a cluster started beforehand (``dask scheduler`` and W ``dask worker`` processes on
127.0.0.1, one thread each, the audit's warm-up preloaded and finished; :func:`standing_once`), as a platform keeps
one running: the command's wall then has no cluster start in it (``--dask local`` starts its own cluster each time, a
fixed cost of several seconds before the first batch). CPU is the command's own plus the scheduler's and the
workers' during the command.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_audit_scale import _OWN_CPU, ROOT, _env, audit_once, cut, describe_speedup, machine_speedup, room  # noqa: E402


def _warm_over() -> bool:
    """On a worker: whether the audit's warm-up (preloaded) is over."""
    from analyzer.audit import warm

    return warm.over.is_set()


def _cpu_of(pids: list[int]) -> float:
    """User and system CPU seconds of the running processes ``pids`` (the standing cluster's) so far."""
    import psutil  # a dependency of distributed

    return sum(sum(psutil.Process(pid).cpu_times()[:2]) for pid in pids)


def start_standing(workers: int, folder: Path, env: dict[str, str]) -> tuple[list[subprocess.Popen[bytes]], str]:
    """A scheduler and ``workers`` workers on 127.0.0.1 (one thread each, the audit's warm-up preloaded), started as
    processes of their own and waited for until every worker has finished its warm-up: the processes (the scheduler
    first) and the scheduler's address. The caller shuts them down."""
    from distributed import Client

    sched_file = str(folder / f"scheduler-{workers}.json")
    quiet: dict[str, Any] = {"env": env, "cwd": str(folder), "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    procs = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", "0", "--no-dashboard", "--scheduler-file", sched_file], **quiet)]
    try:
        procs += [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file",
                                    sched_file, "--host", "127.0.0.1", "--nthreads", "1", "--no-dashboard",
                                    "--no-nanny", "--preload", "analyzer.audit.warm"], **quiet)
                  for _ in range(workers)]
        deadline = time.monotonic() + 300
        while not os.path.exists(sched_file) and time.monotonic() < deadline:
            time.sleep(0.1)
        with Client(scheduler_file=sched_file, timeout="60s") as client:
            client.wait_for_workers(workers, timeout=300)
            while not all(client.run(_warm_over).values()):
                if time.monotonic() > deadline:
                    raise SystemExit("the workers' warm-up did not finish")
                time.sleep(0.1)
            address = client.scheduler.address
    except BaseException:
        for p in procs:
            p.terminate()
        raise
    time.sleep(1.0)  # the client's goodbye settled
    return procs, address


def standing_once(log: Path, workers: int, root: Path = ROOT) -> dict[str, float]:
    """One ``analyzer audit --dask ADDRESS`` against a scheduler and ``workers`` workers started (and warmed) before
    it, then shut down: wall s of the command alone, CPU s (the command's, and the scheduler's and workers' while it
    ran), the command's own CPU s (``client``), its peak RSS MB."""
    from distributed import Client

    env = _env(root)
    with tempfile.TemporaryDirectory() as tmp:
        procs: list[subprocess.Popen[bytes]] = []
        try:
            procs, address = start_standing(workers, Path(tmp), env)
            pids = [p.pid for p in procs]
            before, load = _cpu_of(pids), os.getloadavg()[0]
            out = Path(tmp) / "out"
            own = Path(tmp) / "own-cpu.txt"
            t0 = time.monotonic()
            proc = subprocess.Popen([sys.executable, "-c", _OWN_CPU, str(own), "audit", str(log), "--out", str(out),
                                     "--dask", address, "--jobs", str(workers)], cwd=root, env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.monotonic() - t0
            cluster = _cpu_of(pids) - before
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            if os.waitstatus_to_exitcode(status) not in (0, 1):
                raise SystemExit(f"audit failed ({status}): {err[-2000:]}")
            client_cpu = float(own.read_text()) if own.exists() else usage.ru_utime + usage.ru_stime
            with Client(address, timeout="30s") as client:
                client.shutdown()
            for p in procs:
                p.wait(timeout=60)
        finally:
            for p in procs:
                if p.poll() is None:
                    p.terminate()
                    p.wait(timeout=30)
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime + cluster, "client": client_cpu,
            "rss_mb": usage.ru_maxrss / 1024, "load": (load + os.getloadavg()[0]) / 2}


def main(argv: list[str] | None = None) -> None:
    import statistics

    from benchmarks.results import Results, command_line

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[4000])
    ap.add_argument("--against", type=Path, nargs="*", default=[])
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "bench_audit_scale")
    ap.add_argument("--standing", action="store_true", help="against a cluster started and warmed beforehand, not "
                    "--dask local")
    args = ap.parse_args(argv)
    res = Results("dask", "Dask: 2 workers against 1", "dask", command_line("benchmarks.bench_dask_workers", argv),
                  parameters={"sizes": args.sizes, "rounds": args.rounds, "standing": args.standing,
                              "against": [str(t) for t in args.against]},
                  about="`analyzer audit --dask " + ("SCHEDULER` against a cluster started and warmed beforehand"
                        if args.standing else "local`") + " at 1 and 2 workers on the first N hands of a simulated "
                        "room (64 players, seed 3), in fresh processes, in turn; and what the machine itself gives two "
                        "busy processes against one (the ceiling on any 2-worker speed-up).")
    runs: list[list[object]] = []
    trees = [("this", ROOT)] + [(str(t), t.resolve()) for t in args.against]
    src = room(args.cache, 64, max(args.sizes), 3)
    warm = cut(src, 40, args.cache)
    for _, tree in trees:
        audit_once(warm, ["--jobs", "1"], tree)  # numba's cache and the OS's file cache, not measured
    machine, analysis = machine_speedup(), machine_speedup(hands=warm)
    print(f"before the runs: {describe_speedup(machine)}; {describe_speedup(analysis, hands=True)}", flush=True)
    for n in args.sizes:
        log = cut(src, n, args.cache)
        walls: dict[tuple[str, int], list[float]] = {}
        for k in range(args.rounds):
            for w in (1, 2):
                for name, tree in trees:
                    r = (standing_once(log, w, tree) if args.standing
                         else audit_once(log, ["--dask", "local", "--jobs", str(w)], tree))
                    walls.setdefault((name, w), []).append(r["wall"])
                    runs.append([n, k, name, w, r["wall"], r["cpu"], r["client"], r["cpu"] - r["client"], r["rss_mb"],
                                 r["load"]])
                    print(f"{n} hands, round {k}, {name}, {w} worker(s): wall {r['wall']:.1f} s, CPU {r['cpu']:.1f} s, "
                          f"client {r['client']:.1f} s, workers {r['cpu'] - r['client']:.1f} s, "
                          f"peak {r['rss_mb']:.0f} MB, load {r['load']:.1f}", flush=True)
            now, now_analysis = machine_speedup(), machine_speedup(hands=warm)
            machine += now
            analysis += now_analysis
            print(f"after round {k}: {describe_speedup(now)}; {describe_speedup(now_analysis, hands=True)}", flush=True)
        for name, _ in trees:
            one, two = sum(walls[(name, 1)]), sum(walls[(name, 2)])
            kind = "a standing cluster" if args.standing else "--dask local"
            res.figure(f"speedup_{n}_{name}", one / two, "x", f"{n:,} hands, {name} checkout, {kind}: wall of 1 "
                       "worker over 2", goal=">= 1.7")
    print(f"over the whole benchmark, {describe_speedup(machine)}; {describe_speedup(analysis, hands=True)}")
    res.figure("machine_two_processes", statistics.median(machine), "x", "the machine: two busy processes' work over "
               "one's (pure Python, median)")
    res.figure("machine_two_analyses", statistics.median(analysis), "x", "the machine: the same for the decision "
               "analysis")
    client = [r for r in runs if r[3] == 2]
    if client:
        res.figure("client_share", statistics.median(float(r[6]) / float(r[5]) for r in client), "",  # type: ignore[arg-type]
                   "the client's share of the 2-worker runs' CPU (median)")
    res.table("runs", "Runs", ["hands", "round", "checkout", "workers", "wall s", "CPU s", "client s", "workers s",
                               "peak MB", "load"], runs)
    res.write()


if __name__ == "__main__":
    main()
