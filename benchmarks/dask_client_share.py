"""The Dask client's share of the CPU at 16,000 hands, at 1 and 2 workers, with the speed-up and the Karp-Flatt serial
fraction: of the audit with logs and of the nightly look at a decision store.

    python -m benchmarks.dask_client_share [--hands 16000] [--workers 1 2] [--forms logs look] [--rounds 1] [--small]

The room is the first ``--hands`` hands of ``benchmarks/scale_room.py``'s (2,000 players, seed 51; simulated here
when its work folder lacks it). Two forms (``--forms``):

- ``logs``: ``analyzer audit LOG --out DIR --dask ...`` (the analysis and the pair signals' passes on the workers;
  the client reads and validates the logs, merges and writes).
- ``look``: ``analyzer audit --decisions STORE --out DIR --dask ...``, the nightly look at the room's store built
  ``--day-hands`` hands a day (``scale_room.build_stores``: ``analyzer decisions DAY --out STORE`` a day). Each look
  gets a fresh copy of the store: ``look all days`` without a ledger (the first look: every day's rows read once,
  its statistics made on the workers and merged and written here a day at a time), ``look last day`` with the
  ledger of every day but the last (a night's look: one day's rows read). Beside them the same look on one process
  (no ``--dask``), the base of the total CPU and of the speed-up over one process.

Each run is a fresh process, in two set-ups, every run in turn:

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
import shutil
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

    def run(self, audit: Path | list[str]) -> dict[str, float]:
        """One ``analyzer audit AUDIT --out DIR --dask ADDRESS`` (``audit``: a log, or the audit's arguments before
        ``--out``, e.g. ``["--decisions", STORE]``): wall s, the command's CPU (``client``), the scheduler's and the
        workers' CPU while it ran, the command's peak RSS MB, the load."""
        before = [str(audit)] if isinstance(audit, (str, os.PathLike)) else [str(a) for a in audit]
        before_s = _cpu(self.scheduler.pid)
        before_w = sum(_cpu(p.pid) for p in self.procs)
        load = os.getloadavg()[0]
        with tempfile.TemporaryDirectory() as tmp:
            own = Path(tmp) / "own-cpu.txt"
            t0 = time.monotonic()
            proc = subprocess.Popen([sys.executable, "-c", _OWN_CPU, str(own), "audit", *before, "--out", str(Path(tmp) / "out"),
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


def local_run(audit: Path | list[str], workers: int) -> dict[str, float]:
    """One ``analyzer audit AUDIT --dask local --jobs W`` (``bench_audit_scale.audit_once``; ``audit``: a log or the
    audit's arguments before ``--out``): the command's own CPU is the client's with the LocalCluster's scheduler
    (``client``; ``scheduler`` 0), the rest the workers'."""
    r = audit_once(audit, ["--dask", "local", "--jobs", str(workers)])
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


#: The nightly look's two forms: the first look over the whole store (no ledger yet: every day's rows read once, a
#: day's statistics at a time) and a night's look (the ledger holds every day but the last: one day's rows read).
LOOKS = {"look all days": "the first look over the store, every day's rows read once (no ledger yet)",
         "look last day": "a night's look, the last day new (the ledger holds the days before it)"}


class LookStores:
    """The room's store built a day at a time (``scale_room.build_stores``: ``analyzer decisions DAY --out STORE`` a
    day) and, for a night's look, the ledger of every day but the last (made once by a one-process look at the store
    of those days). :meth:`copy` gives each look a fresh store of its own, outside the measured run."""

    def __init__(self, work: Path, log: Path, hands: int, players: int, seed: int, day_hands: int) -> None:
        from benchmarks.scale_room import build_stores, cut_days

        if hands <= day_hands or hands % day_hands:
            raise SystemExit(f"--hands {hands}: the look needs two or more whole days of --day-hands {day_hands}")
        self.folder = work / f"room-{players}p-s{seed}-d{day_hands}"
        days = cut_days(log, self.folder / "days", day_hands, hands)
        stores, _ = build_stores(self.folder, days, [hands - day_hands, hands], day_hands, None)
        self.store, self.days = stores[hands], len(days)
        self.ledger = self.folder / f"ledger-{hands - day_hands}"
        if not self.ledger.exists():
            from benchmarks.scale_room import _copy_store

            first = self.folder / f"first-days-{hands - day_hands}"
            shutil.rmtree(first, ignore_errors=True)
            _copy_store(stores[hands - day_hands], first)
            audit_once(["--decisions", str(first)], [])
            tmp = self.ledger.with_name(self.ledger.name + ".tmp")
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.copytree(first / "_ledger", tmp)
            tmp.rename(self.ledger)
            shutil.rmtree(first)

    def copy(self, form: str, dest: Path) -> Path:
        """A store of its own for one look of ``form`` (:data:`LOOKS`): without a ledger, or with the first days'."""
        from benchmarks.scale_room import _copy_store

        shutil.rmtree(dest, ignore_errors=True)
        _copy_store(self.store, dest)
        if form == "look last day":
            shutil.copytree(self.ledger, dest / "_ledger")
        return dest


def _noop(*_: Any) -> int:
    return 0


def scheduler_bound(store: Path, workers: int, folder: Path) -> dict[str, Any]:
    """What Dask's scheduler costs a look's day, against the least it could: the last day of ``store`` made on a
    standing cluster of ``workers`` workers here (``on_dask.DaskDaySignals``, as ``day_statistics_on`` makes it),
    its tasks counted by pass and the scheduler's and this client's CPU while it ran; then a no-op graph of the same
    shape (the same passes in order, as many tasks each, each task depending on one of the pass before, each merge
    gathered here, as the client gathers them) and its CPU. The no-op's scheduler CPU a task times the tasks is
    the scheduler's share no change to the work's size removes; the rest grows with what the tasks carry."""
    from analyzer.analysis.store import open_store
    from analyzer.audit import ledger, on_dask
    from analyzer.running.dask import DaskConnection

    st = open_store(store)
    days: dict[str, list[int]] = {}
    for i, add in enumerate(st.part_additions):
        days.setdefault(add["run"] if add else "", []).append(i)
    last = list(days.values())[-1]
    cols = [c for c in ledger._row_columns() if c not in ledger.SKIP_COLUMNS]
    cluster = Standing(workers, folder)
    try:
        conn = DaskConnection(cluster.address, workers)
        client = conn.client
        s0, c0, t0 = _cpu(cluster.scheduler.pid), time.process_time(), time.monotonic()
        acc = on_dask.DaskDaySignals(conn)
        try:
            for i in last:
                acc.add_part(ledger._one_part(st, i), cols)
            acc.sums(ledger.SCORES)
            acc.together()
            names = [name for name, _ in acc.tasks]
        finally:
            acc.close()
        day = {"scheduler": _cpu(cluster.scheduler.pid) - s0, "client": time.process_time() - c0,
               "wall": time.monotonic() - t0}
        passes: list[list[Any]] = []
        for name in names:
            if passes and passes[-1][0] == name:
                passes[-1][1] += 1
            else:
                passes.append([name, 1])
        s0, c0, t0 = _cpu(cluster.scheduler.pid), time.process_time(), time.monotonic()
        before: list[Any] = []
        for g, (name, n) in enumerate(passes):
            deps = [before[i % len(before)] for i in range(n)] if before else [None] * n
            before = client.map(_noop, deps, key=[f"noop-{g}-{i}" for i in range(n)])
            if name.endswith("merge") or name == "edges":
                client.gather(before)
        client.gather(before)
        noop = {"scheduler": _cpu(cluster.scheduler.pid) - s0, "client": time.process_time() - c0,
                "wall": time.monotonic() - t0}
        conn.close()
    finally:
        cluster.close()
    return {"parts": len(last), "days": len(days), "tasks": len(names),
            "by_pass": {n: names.count(n) for n in dict.fromkeys(names)}, "day": day, "noop": noop}


def _summarise(res: Results, runs: list[dict[str, Any]], form: str, setups: list[str], workers: list[int]) -> None:
    """The figures and the medians' table of one form's runs (``logs``: the audit with logs; a look: :data:`LOOKS`,
    with the one-process look as the base of its CPU and wall)."""
    tag = "" if form == "logs" else form.replace(" ", "_") + "_"
    mine_of = [r for r in runs if r.get("form", "logs") == form]
    one = [r for r in mine_of if r["setup"] == "one process"]
    one_cpu = statistics.median(r["total"] for r in one) if one else None
    one_wall = statistics.median(r["wall"] for r in one) if one else None
    what = "" if form == "logs" else f"{form}: "
    rows = []
    if one:
        rows.append(["one process", 1, one_wall, one_cpu, 0.0, 0.0, one_cpu, None, 1.0, None, 1.0, None,
                     _median([r["rss_mb"] for r in one]), _median([r["load"] for r in one])])
    for setup in setups:
        wall = {w: statistics.median(r["wall"] for r in mine_of if r["setup"] == setup and r["workers_n"] == w)
                for w in workers if any(r["setup"] == setup and r["workers_n"] == w for r in mine_of)}
        for w in workers:
            mine = [r for r in mine_of if r["setup"] == setup and r["workers_n"] == w]
            if not mine:
                continue
            med = {k: _median([r[k] for r in mine]) for k in ("client", "scheduler", "workers", "total", "share",
                                                              "rss_mb", "load")}
            s = wall[1] / wall[w] if 1 in wall else None
            e = karp_flatt(s, w) if s is not None else None
            over_cpu = med["total"] / one_cpu if one_cpu else None
            over_wall = one_wall / wall[w] if one_wall else None
            rows.append([setup, w, wall[w], med["client"], med["scheduler"], med["workers"], med["total"],
                         med["share"], s, e, over_cpu, over_wall, med["rss_mb"], med["load"]])
            res.figure(f"{tag}{setup}_{w}_share", med["share"], "", f"{what}{setup}, {w} worker(s): the client's share "
                       "of the CPU" + (" (with the scheduler, which runs in its process)" if setup == "local" else ""),
                       goal=f"<= {SHARE_GOAL}")
            res.figure(f"{tag}{setup}_{w}_amdahl_cap", 1 / med["share"], "x", f"{what}{setup}, {w} worker(s): the "
                       "speed-up the client's share allows any cluster (Amdahl, 1 / share)")
            if over_cpu is not None:
                res.figure(f"{tag}{setup}_{w}_cpu_over_one", over_cpu, "x", f"{what}{setup}, {w} worker(s): total CPU "
                           "over the one-process look's")
            if over_wall is not None:
                res.figure(f"{tag}{setup}_{w}_speedup_over_one", over_wall, "x", f"{what}{setup}, {w} worker(s): "
                           "the one-process look's wall over this one's")
            if e is not None:
                res.figure(f"{tag}{setup}_{w}_speedup", s, "x", f"{what}{setup}: wall of 1 worker over {w}")
                res.figure(f"{tag}{setup}_{w}_karp_flatt", e, "", f"{what}{setup}, {w} workers: Karp-Flatt serial "
                           "fraction")
    title = "Runs (medians)" if form == "logs" else f"The nightly look, {LOOKS[form]} (medians)"
    res.table(f"{tag}runs_median", title, ["setup", "workers", "wall s", "client CPU s", "scheduler CPU s",
              "workers CPU s", "total CPU s", "client share", "speed-up", "Karp-Flatt e", "CPU over one process",
              "speed-up over one process", "client peak MB", "load"], rows, page=form != "logs")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hands", type=int, default=16000)
    ap.add_argument("--players", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=51)
    ap.add_argument("--day-hands", type=int, default=4000, help="hands a day of the store the look reads")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--setups", nargs="+", choices=("local", "standing"), default=["local", "standing"])
    ap.add_argument("--forms", nargs="+", choices=("logs", "look"), default=["logs", "look"],
                    help="logs: the audit with logs; look: the nightly look at the store (both of its forms)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--report-only", action="store_true", help="write the results of the runs measured so far "
                    "(in --work), running none")
    ap.add_argument("--spy", type=Path, default=None, help="a py-spy raw recording of a client (py-spy record --pid "
                    "PID --format raw), summarised by phase into the results")
    ap.add_argument("--note", action="append", default=[], help="a sentence for the results' notes")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "bieqi-scale-room")
    ap.add_argument("--small", action="store_true", help="a quick check: 1,000 hands of a 200-player room (days "
                    "of 500)")
    args = ap.parse_args(argv)
    if args.small:
        args.hands, args.players, args.day_hands = 1000, 200, 500
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if "local" in args.setups and max(args.workers) > cores:
        raise SystemExit(f"--dask local starts at most {cores} workers here: run W > {cores} with --setups standing")
    workers = sorted(set(args.workers))
    forms = [f for f in ("logs", "look") if f in args.forms]
    looks = ", ".join(f"`{k}`: {v}" for k, v in LOOKS.items())
    res = Results("dask_client_share", "Dask: the client's share of the CPU, speed-up and serial fraction", "dask",
                  command_line("benchmarks.dask_client_share", _measuring(argv)),
                  parameters={"hands": args.hands, "players": args.players, "seed": args.seed,
                              "day_hands": args.day_hands, "workers": workers, "setups": args.setups, "forms": forms,
                              "rounds": args.rounds, "small": args.small, "cores": cores},
                  about=f"{args.hands:,} hands, {args.players:,} players; `local`: the command's own LocalCluster "
                        "(scheduler in the client's process); `standing`: a cluster started before. "
                        + ("The audit with logs: `analyzer audit LOG --dask ...` (figures without a prefix). "
                           if "logs" in forms else "")
                        + (f"The nightly look: `analyzer audit --decisions STORE --dask ...` at a store built "
                           f"{args.day_hands:,} hands a day, against the same look on one process; {looks}. "
                           if "look" in forms else "")
                        + f"{cores} cores, shared: wall speed-ups here measure the load.")
    if args.report_only:
        res.note("Written from the runs measured before by this command (each run's load is in its table); the "
                 "load above is the machine's when the file was written.")
    log, stores = Path(), None
    if not args.report_only:
        src = simulate(args.work, args.hands, args.players, args.seed)
        log = first_hands(src, args.hands, args.work)
        if "look" in forms:
            stores = LookStores(args.work, src, args.hands, args.players, args.seed, args.day_hands)
        audit_once(first_hands(src, 40, args.work), ["--jobs", "1"])  # numba's cache, the OS's file cache: unmeasured
    runs_file = args.work / f"dask-share-{args.players}p-s{args.seed}-{args.hands}.json"
    runs: list[dict[str, Any]] = json.loads(runs_file.read_text()) if runs_file.exists() else []
    folder = Path(tempfile.mkdtemp(prefix="bieqi-dask-share-"))
    plan = ([("logs", s, w) for s in args.setups for w in workers] if "logs" in forms else []) + \
        ([(f, s, w) for f in LOOKS for s, w in [("one process", 1)] + [(s, w) for s in args.setups for w in workers]]
         if "look" in forms else [])
    try:
        for k in range(0 if args.report_only else args.rounds):
            for form, setup, w in plan:
                if any(r.get("form", "logs") == form and r["setup"] == setup and r["workers_n"] == w
                       and r["round"] == k for r in runs):
                    continue  # measured by a run before this one (resumed)
                audit: Path | list[str] = log
                if form != "logs":
                    assert stores is not None
                    audit = ["--decisions", str(stores.copy(form, folder / "store"))]
                r: dict[str, Any]
                if setup == "one process":
                    one = audit_once(audit, [])
                    r = {"wall": one["wall"], "client": one["cpu"], "scheduler": 0.0, "workers": 0.0,
                         "rss_mb": one["rss_mb"], "load": one["load"]}
                elif setup == "local":
                    r = local_run(audit, w)
                else:
                    cluster = Standing(w, folder)
                    try:
                        r = cluster.run(audit)
                    finally:
                        cluster.close()
                total = r["client"] + r["scheduler"] + r["workers"]
                r = {**r, "form": form, "setup": setup, "workers_n": w, "round": k, "total": total,
                     "share": r["client"] / total}
                runs.append(r)
                runs_file.write_text(json.dumps(runs))
                print(f"{form}, {setup}, {w} worker(s), round {k}: wall {r['wall']:.1f} s, client {r['client']:.1f} s, "
                      f"scheduler {r['scheduler']:.1f} s, workers {r['workers']:.1f} s, share {r['share']:.3f}, "
                      f"load {r['load']:.1f}", flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    for form in (["logs"] if "logs" in forms else []) + (list(LOOKS) if "look" in forms else []):
        _summarise(res, runs, form, args.setups, workers)
    bound_file = args.work / f"dask-share-bound-{args.players}p-s{args.seed}-{args.hands}.json"
    if not args.report_only and stores is not None and "standing" in args.setups and not bound_file.exists():
        b = scheduler_bound(stores.store, max(workers), Path(tempfile.mkdtemp(prefix="bieqi-dask-bound-")))
        bound_file.write_text(json.dumps(b))
    if "look" in forms and bound_file.exists():
        b = json.loads(bound_file.read_text())
        per, noop = b["day"]["scheduler"] / b["tasks"], b["noop"]["scheduler"] / b["tasks"]
        res.figure("look_day_tasks", b["tasks"], "", f"the look: tasks a day's statistics take ({b['parts']} parts "
                   "of the store a day)")
        res.figure("look_day_scheduler_ms_task", 1e3 * per, "ms", "the look: the scheduler's CPU a task, a day's "
                   f"statistics on a standing cluster of {max(workers)} workers")
        res.figure("look_noop_scheduler_ms_task", 1e3 * noop, "ms", "the same graph's shape of no-op tasks: the "
                   "scheduler's CPU a task")
        res.figure("look_day_client_s", b["day"]["client"], "s", "the look: the client's CPU making one day's "
                   "statistics (submitting, gathering, merging the last level)")
        res.table("look_day_tasks", "The tasks of one day of the look, by pass", ["pass", "tasks"],
                  [[k, v] for k, v in b["by_pass"].items()], page=False)
        res.note(f"Dask's scheduler on the look: a day's statistics ({b['parts']} parts) take {b['tasks']} tasks; "
                 f"the scheduler spent {b['day']['scheduler']:.2f} CPU-s on them ({1e3 * per:.1f} ms a task), a "
                 f"no-op graph of the same shape {b['noop']['scheduler']:.2f} CPU-s ({1e3 * noop:.2f} ms a task): "
                 f"the floor of the scheduler's CPU is about {b['noop']['scheduler'] * b['days']:.2f} CPU-s over "
                 f"the {b['days']} days, the rest grows with what the tasks carry. The client made the day in "
                 f"{b['day']['client']:.2f} CPU-s; the look's client CPU beyond that is its start (the interpreter, "
                 "its imports) and writing.")
    res.table("runs", "Every run", ["form", "setup", "workers", "round", "wall s", "client s", "scheduler s",
                                    "workers s", "share", "load"],
              [[r.get("form", "logs"), r["setup"], r["workers_n"], r["round"], r["wall"], r["client"], r["scheduler"],
                r["workers"], r["share"], r["load"]] for r in runs], page=False)
    if any(r.get("from_log") for r in runs):
        res.note("Runs marked from_log in the file were read back from the printed line of a run whose process was "
                 "stopped before it wrote its results (figures as printed: 0.1 s; no peak memory).")
    for text in args.note:
        res.note(text)
    if args.spy is not None:
        phases, total = spy_phases(args.spy)
        res.table("client_profile", "The client's main thread at work, by phase (py-spy samples of a 2-worker "
                  "`--dask local` client; waits for the workers left out)", ["phase", "share of its work"],
                  [[name, n / total] for name, n in phases], page=False)
    res.write()


if __name__ == "__main__":
    main()
