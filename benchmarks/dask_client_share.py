"""The Dask client's share of an audit's CPU at 16,000 hands, at 1 and 2 workers, with the speed-up and the Karp-Flatt
serial fraction.

    python -m benchmarks.dask_client_share [--hands 16000] [--workers 1 2] [--rounds 1] [--small]

The room is the first ``--hands`` hands of ``benchmarks/scale_room.py``'s (2,000 players, seed 51; simulated here
when its work folder lacks it). Each run is ``analyzer audit LOG --out DIR --dask ...`` in a fresh process (the
analysis and the pair signals' passes on the workers; the client reads and validates the logs, merges and writes),
in two set-ups, every run in turn:

- ``local``: ``--dask local --jobs W``, the LocalCluster the command starts itself; its scheduler runs inside the
  command's process, so the command's CPU is the client's and the scheduler's together.
- ``standing``: a ``dask scheduler`` and W ``dask worker`` processes started (and warmed) before the command, as a
  platform keeps them; the command's CPU is the client's alone, the scheduler's is counted apart.

The client's share is its CPU over the run's total (client, scheduler and workers while the command ran). The
speed-up S of W workers is the wall of 1 worker over W's, in the same set-up; the Karp-Flatt serial fraction is
e = (1/S - 1/W) / (1 - 1/W). This machine has 2 cores shared with other work: W > 2 measures contention, not scaling
(``--workers`` above the cores is refused with ``local``, which never starts more workers than cores).
``--spy RAW``: a py-spy recording of a client (``py-spy record --pid PID --rate 20 --nonblocking --format raw -o RAW``
attached to a 2-worker ``local`` run's command), its main thread's work cut into the audit's phases.
A run stopped part-way is resumed: the runs measured are kept in ``--work``.
Writes benchmarks/results/dask_client_share.json.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_audit_scale import _OWN_CPU, audit_once  # noqa: E402
from benchmarks.results import Results, command_line  # noqa: E402
from benchmarks.scale_room import simulate  # noqa: E402

#: The issue's goal: the client's CPU at most this share of the total.
SHARE_GOAL = 0.05

def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def first_hands(src: Path, hands: int, dest: Path) -> Path:
    """The room's first ``hands`` hands as a log of their own (written once)."""
    out = dest / f"first-{hands}-of-{src.name.split('.')[0]}.jsonl"
    if not out.exists():
        tmp = out.with_name(out.name + ".tmp")
        with gzip.open(src, "rb") as f, open(tmp, "wb") as g:
            for n, line in enumerate(f):
                if n >= hands:
                    break
                g.write(line)
        tmp.rename(out)
    return out


def _cpu(pid: int) -> float:
    import psutil

    t = psutil.Process(pid).cpu_times()
    return t.user + t.system + t.children_user + t.children_system


class Standing:
    """A scheduler and ``workers`` workers on 127.0.0.1 (one thread each, the audit's warm-up preloaded and finished),
    started before the runs and shut down after them."""

    def __init__(self, workers: int, folder: Path) -> None:
        from benchmarks.bench_dask_workers import start_standing

        self.workers = workers
        procs, self.address = start_standing(workers, folder, _env())
        self.scheduler, self.procs = procs[0], procs[1:]

    def run(self, log: Path) -> dict[str, float]:
        """One ``analyzer audit LOG --dask ADDRESS``: wall s, the command's CPU (``client``), the scheduler's and the
        workers' CPU while it ran, the command's peak RSS MB, the load."""
        before_s = _cpu(self.scheduler.pid)
        before_w = sum(_cpu(p.pid) for p in self.procs)
        load = os.getloadavg()[0]
        with tempfile.TemporaryDirectory() as tmp:
            own = Path(tmp) / "own-cpu.txt"
            t0 = time.monotonic()
            proc = subprocess.Popen([sys.executable, "-c", _OWN_CPU, str(own), "audit", str(log), "--out", str(Path(tmp) / "out"),
                                     "--dask", self.address, "--jobs", str(self.workers)], cwd=ROOT, env=_env(),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.monotonic() - t0
            if os.waitstatus_to_exitcode(status) not in (0, 1):
                raise SystemExit(f"audit failed ({status}): {err[-2000:]}")
            client = usage.ru_utime + usage.ru_stime
        return {"wall": wall, "client": client, "scheduler": _cpu(self.scheduler.pid) - before_s,
                "workers": sum(_cpu(p.pid) for p in self.procs) - before_w, "rss_mb": usage.ru_maxrss / 1024,
                "load": (load + os.getloadavg()[0]) / 2}

    def close(self) -> None:
        from distributed import Client

        try:
            with Client(self.address, timeout="30s") as client:
                client.shutdown()
        except OSError:
            pass
        for p in [self.scheduler, *self.procs]:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.terminate()
                p.wait(timeout=30)


def local_run(log: Path, workers: int) -> dict[str, float]:
    """One ``analyzer audit LOG --dask local --jobs W`` (``bench_audit_scale.audit_once``): the command's own CPU is
    the client's with the LocalCluster's scheduler (``client``; ``scheduler`` 0), the rest the workers'."""
    r = audit_once(log, ["--dask", "local", "--jobs", str(workers)])
    return {"wall": r["wall"], "client": r["client"], "scheduler": 0.0, "workers": r["cpu"] - r["client"],
            "rss_mb": r["rss_mb"], "load": r["load"]}


def karp_flatt(speedup: float, workers: int) -> float | None:
    """The experimentally determined serial fraction e = (1/S - 1/p) / (1 - 1/p) (None for one worker)."""
    if workers < 2 or speedup <= 0:
        return None
    return (1 / speedup - 1 / workers) / (1 - 1 / workers)


#: Where the client's main thread is, by the outermost of these frames (file:line as py-spy names them): the
#: phases of ``analyzer audit`` (``commands/audit.py`` and ``audit/core.py``'s ``run_audit``).
PHASES = (("reading and validating the logs, sending the batches", "run_audit (analyzer/audit/core.py:721)"),
          ("the pair table, the player table and the cases (audit_rows)", "run_audit (analyzer/audit/core.py:731)"),
          ("the shown rows' reasons (_finish)", "run_audit (analyzer/audit/core.py:753)"),
          ("pairs.csv and players.csv", "_audit_run (analyzer/commands/audit.py:253)"),
          ("report.html", "_audit_run (analyzer/commands/audit.py:255)"))
#: Leaf frames of a thread waiting (for the workers, a lock, the event loop): not the client's work.
WAITS = ("select (selectors", "Condition.wait", "acquire", "_worker (concurrent", "wait (threading")


def spy_phases(raw: Path) -> tuple[list[tuple[str, int]], int]:
    """A py-spy raw recording of the client (``py-spy record --pid PID --format raw``) cut into :data:`PHASES`: the
    main thread's samples not waiting, by the first phase frame on its stack (``other``: imports, start-up, the
    rest); and their total."""
    counts: dict[str, int] = {}
    total = 0
    for line in raw.read_text(encoding="utf-8").splitlines():
        stack, _, n = line.rpartition(" ")
        frames = stack.split(";")
        if not stack or not frames[0].startswith("<module> (<string>") or any(w in frames[-1] for w in WAITS):
            continue
        total += int(n)
        name = next((ph for ph, frame in PHASES if frame in frames), "other")
        counts[name] = counts.get(name, 0) + int(n)
    order = [ph for ph, _ in PHASES] + ["other"]
    return [(ph, counts[ph]) for ph in order if ph in counts], max(total, 1)


def _median(xs: list[Any]) -> Any:
    known = [x for x in xs if x is not None]
    return statistics.median(known) if known else None


def _measuring(argv: list[str] | None) -> list[str]:
    """The command line that measures what a ``--report-only`` run writes (the same, without that flag)."""
    return [a for a in (sys.argv[1:] if argv is None else argv) if a != "--report-only"]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hands", type=int, default=16000)
    ap.add_argument("--players", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=51)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--setups", nargs="+", choices=("local", "standing"), default=["local", "standing"])
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--report-only", action="store_true", help="write the results of the runs measured so far "
                    "(in --work), running none")
    ap.add_argument("--spy", type=Path, default=None, help="a py-spy raw recording of a client (py-spy record --pid "
                    "PID --format raw), summarised by phase into the results")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "bieqi-scale-room")
    ap.add_argument("--small", action="store_true", help="a quick check: 1,000 hands of a 200-player room")
    args = ap.parse_args(argv)
    if args.small:
        args.hands, args.players = 1000, 200
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if "local" in args.setups and max(args.workers) > cores:
        raise SystemExit(f"--dask local starts at most {cores} workers here: run W > {cores} with --setups standing")
    workers = sorted(set(args.workers))
    res = Results("dask_client_share", "Dask: the client's share of the CPU, speed-up and serial fraction", "dask",
                  command_line("benchmarks.dask_client_share", _measuring(argv)),
                  parameters={"hands": args.hands, "players": args.players, "seed": args.seed, "workers": workers,
                              "setups": args.setups, "rounds": args.rounds, "small": args.small, "cores": cores},
                  about=f"`analyzer audit LOG --dask ...`, {args.hands:,} hands, {args.players:,} players; `local`: its "
                        "own LocalCluster (scheduler in the client's process); `standing`: a cluster started before. "
                        f"{cores} cores, shared: wall speed-ups here measure the load. Tables: the results file.")
    if args.report_only:
        res.note("Written from the runs measured before by this command (each run's load is in its table); the "
                 "load above is the machine's when the file was written.")
    if not args.report_only:
        src = simulate(args.work, args.hands, args.players, args.seed)
        log = first_hands(src, args.hands, args.work)
        audit_once(first_hands(src, 40, args.work), ["--jobs", "1"])  # numba's cache, the OS's file cache: unmeasured
    runs_file = args.work / f"dask-share-{args.players}p-s{args.seed}-{args.hands}.json"
    runs: list[dict[str, Any]] = json.loads(runs_file.read_text()) if runs_file.exists() else []
    folder = Path(tempfile.mkdtemp(prefix="bieqi-dask-share-"))
    try:
        for k in range(0 if args.report_only else args.rounds):
            for setup in args.setups:
                for w in workers:
                    if any(r["setup"] == setup and r["workers_n"] == w and r["round"] == k for r in runs):
                        continue  # measured by a run before this one (resumed)
                    if setup == "local":
                        r = local_run(log, w)
                    else:
                        cluster = Standing(w, folder)
                        try:
                            r = cluster.run(log)
                        finally:
                            cluster.close()
                    total = r["client"] + r["scheduler"] + r["workers"]
                    r.update(setup=setup, workers_n=w, round=k, total=total, share=r["client"] / total)
                    runs.append(r)
                    runs_file.write_text(json.dumps(runs))
                    print(f"{setup}, {w} worker(s), round {k}: wall {r['wall']:.1f} s, client {r['client']:.1f} s, "
                          f"scheduler {r['scheduler']:.1f} s, workers {r['workers']:.1f} s, share {r['share']:.3f}, "
                          f"load {r['load']:.1f}", flush=True)
    finally:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
    rows = []
    for setup in args.setups:
        wall = {w: statistics.median(r["wall"] for r in runs if r["setup"] == setup and r["workers_n"] == w)
                for w in workers if any(r["setup"] == setup and r["workers_n"] == w for r in runs)}
        for w in workers:
            mine = [r for r in runs if r["setup"] == setup and r["workers_n"] == w]
            if not mine:
                continue
            med = {k: _median([r[k] for r in mine]) for k in ("client", "scheduler", "workers", "total", "share",
                                                              "rss_mb", "load")}
            s = wall[1] / wall[w] if 1 in wall else None
            e = karp_flatt(s, w) if s is not None else None
            rows.append([setup, w, wall[w], med["client"], med["scheduler"], med["workers"], med["total"],
                         med["share"], s, e, med["rss_mb"], med["load"]])
            res.figure(f"{setup}_{w}_share", med["share"], "", f"{setup}, {w} worker(s): the client's share of the CPU"
                       + (" (with the scheduler, which runs in its process)" if setup == "local" else ""),
                       goal=f"<= {SHARE_GOAL}")
            res.figure(f"{setup}_{w}_amdahl_cap", 1 / med["share"], "x", f"{setup}, {w} worker(s): the speed-up "
                       "the client's share allows any cluster (Amdahl, 1 / share)")
            if e is not None:
                res.figure(f"{setup}_{w}_speedup", s, "x", f"{setup}: wall of 1 worker over {w}")
                res.figure(f"{setup}_{w}_karp_flatt", e, "", f"{setup}, {w} workers: Karp-Flatt serial fraction")
    res.table("runs_median", "Runs (medians)", ["setup", "workers", "wall s", "client CPU s", "scheduler CPU s",
              "workers CPU s", "total CPU s", "client share", "speed-up", "Karp-Flatt e", "client peak MB", "load"],
              rows, page=False)
    res.table("runs", "Every run", ["setup", "workers", "round", "wall s", "client s", "scheduler s", "workers s",
                                    "share", "load"],
              [[r["setup"], r["workers_n"], r["round"], r["wall"], r["client"], r["scheduler"], r["workers"],
                r["share"], r["load"]] for r in runs], page=False)
    if any(r.get("from_log") for r in runs):
        res.note("Runs marked from_log in the file were read back from the printed line of a run whose process was "
                 "stopped before it wrote its results (figures as printed: 0.1 s; no peak memory).")
    if args.spy is not None:
        phases, total = spy_phases(args.spy)
        res.table("client_profile", "The client's main thread at work, by phase (py-spy samples of a 2-worker "
                  "`--dask local` client; waits for the workers left out)", ["phase", "share of its work"],
                  [[name, n / total] for name, n in phases], page=False)
    res.write()


if __name__ == "__main__":
    main()
