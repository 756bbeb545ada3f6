"""Audit cost at platform volume: wall and CPU time, hands per CPU-second and peak memory as a room grows.

Run: ``python benchmarks/bench_audit_scale.py [--sizes 4000 16000] [--big] [--jobs 1] [--dask [--against TREE]] [--players 64]``
(``--settings``: only the decision analysis' CPU at several evaluation settings; ``--phases``: only the
split of the smallest size's CPU time into analysis, pair signals, player table and evidence, and the HTML
report, on a whole frame read into memory (``audit_frame``), so its memory is not the command's, which never
holds every row's texts: the ordinary runs measure that; ``--from-store``: audit decision stores written
beforehand with cheap analysis settings, so the figures are the audit's own work and memory, which do not depend on the samples)

One simulated room (``--players`` players, seed ``--seed``, the simulator's defaults otherwise: one
colluding pair and friends) is written once (cached in ``--cache``); its first N hands are audited by
``analyzer audit`` in a fresh process for each N, so each figure is that run's alone: wall time, CPU
time of the process and every worker it started (``os.wait4``), hands per CPU-second, and the peak
resident memory of the largest process (the one that holds the rows; ``ru_maxrss``).
``--from-store`` writes, once per size (cached), a decision store with ``analyzer decisions --samples 1
--max-samples 1 --dd-samples 1 --policy fast`` and audits with ``--decisions STORE``: the rows' values differ
from the defaults' but not their number or shape, so memory and the aggregation's time are the audit's at any
settings. ``--big`` adds 64,000 hands (long). ``--dask`` also runs the smallest size with ``--dask local`` at 1
and 2 workers and prints the speed-up in wall time and each run's CPU split into the client's own (the command's
process, with the LocalCluster's scheduler) and the workers'. The machine's load average is printed with
each run: CPU time and wall time both suffer when other jobs share the cores.
"""

from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def room(cache: Path, players: int, hands: int, seed: int) -> Path:
    """The whole room's log (simulated once, then reused; a longer one of the same room serves too)."""
    for have in sorted(cache.glob(f"room-{players}p-seed{seed}-*.jsonl.gz")):
        if int(have.name.rsplit("-", 1)[1].split(".")[0]) >= hands:
            return have
    path = cache / f"room-{players}p-seed{seed}-{hands}.jsonl.gz"
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "analyzer.cli", "simulate", "--hands", str(hands), "--players",
                        str(players), "--seed", str(seed), "--out", str(path)], check=True, cwd=ROOT, env=_env())
    return path


def cut(src: Path, hands: int, dest: Path) -> Path:
    """The first ``hands`` hands of the room as their own log."""
    out = dest / f"first-{hands}-of-{src.name.split('.')[0]}.jsonl"
    if not out.exists():
        with gzip.open(src, "rb") as f, open(out, "wb") as g:
            for n, line in enumerate(f):
                if n >= hands:
                    break
                g.write(line)
    return out


def _env(root: Path = ROOT) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}


#: Runs the CLI (argv after the file name) and writes the process' own CPU seconds (its threads, not its
#: children: with ``--dask local`` the client and the LocalCluster's scheduler) to the file at exit.
_OWN_CPU = ("import atexit, resource, sys\n"
            "out = sys.argv[1]\n"
            "def note():\n"
            "    r = resource.getrusage(resource.RUSAGE_SELF)\n"
            "    open(out, 'w').write(str(r.ru_utime + r.ru_stime))\n"
            "atexit.register(note)\n"
            "sys.argv = ['analyzer'] + sys.argv[2:]\n"
            "from analyzer.cli import cli\n"
            "cli()\n")


def audit_once(log: Path, extra: list[str], root: Path = ROOT) -> dict[str, float]:
    """One ``analyzer audit`` in a fresh process: wall s, CPU s (with its workers), the command's own CPU s
    (``client``: without its worker processes), peak RSS MB. ``root``: the checkout whose code runs."""
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as out:
        own = Path(out) / "own-cpu.txt"
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-c", _OWN_CPU, str(own), "audit", str(log), "--out", out, *extra],
                                cwd=root, env=_env(root), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - t0
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        if os.waitstatus_to_exitcode(status) not in (0, 1):
            raise SystemExit(f"audit failed ({status}): {err[-2000:]}")
        client = float(own.read_text()) if own.exists() else float("nan")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "client": client, "rss_mb": usage.ru_maxrss / 1024,
            "load": (load + os.getloadavg()[0]) / 2}


CHEAP = ["--samples", "1", "--max-samples", "1", "--dd-samples", "1", "--policy", "fast"]


def store_of(log: Path, cache: Path) -> Path:
    """A decision store of the log at cheap settings (written once, then reused)."""
    out = cache / f"store-{log.stem}"
    if not out.exists():
        subprocess.run([sys.executable, "-m", "analyzer.cli", "decisions", str(log), "--out", str(out), *CHEAP],
                       check=True, cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL)
    return out


#: Evaluation settings whose cost ``--settings`` prints (the first is the audit's defaults: ``decisions`` and the
#: audit share one default set and the learned model, AUDIT_POLICY); ``analyzer decisions`` options of each.
SETTINGS = [("audit defaults (learned model; endgame 8..32 deals; 1 true-deal rollout)", []),
            ("--samples 16 (the commands' minimum before issue 13)", ["--samples", "16"]),
            ("--dd-samples 0 (no true-deal rollouts)", ["--dd-samples", "0"]),
            ("--policy strategy (rollouts everywhere)", ["--policy", "strategy"]),
            ("--policy fast", ["--policy", "fast"])]


def settings_cost(log: Path, hands: int) -> None:
    """CPU of the decision analysis (``analyzer decisions``, one process) at each of SETTINGS."""
    print(f"decision analysis of {hands} hands, one process (CPU includes ~2 s of start-up):")
    for name, opts in SETTINGS:
        with tempfile.TemporaryDirectory() as tmp:
            load = os.getloadavg()[0]
            proc = subprocess.Popen([sys.executable, "-m", "analyzer.cli", "decisions", str(log), "--out",
                                     str(Path(tmp) / "store"), "--jobs", "1", *opts], cwd=ROOT, env=_env(),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, status, usage = os.wait4(proc.pid, 0)
            if os.waitstatus_to_exitcode(status) != 0:
                raise SystemExit(f"decisions failed at {name}")
        cpu = usage.ru_utime + usage.ru_stime
        print(f"  {name:<62} {cpu:7.1f} CPU-s {1000 * cpu / hands:6.1f} ms a hand "
              f"{hands / cpu:6.1f} hands/CPU-s  load {(load + os.getloadavg()[0]) / 2:.1f}", flush=True)


def phases(log: Path, store: Path | None) -> None:
    """In this process: CPU time of the decision analysis (parallel on workers; or the store's read) against
    the aggregation on the client, split into pair signals, player table and evidence, and the HTML report."""
    sys.path.insert(0, str(ROOT))
    from analyzer.analysis.decisions import AUDIT_POLICY
    from analyzer.analysis.execute import Settings, analyse_items
    from analyzer.analysis.store import open_store, read_rows
    from analyzer.audit.calibrate import calibrate, rank_pairs
    from analyzer.analysis.reasons import shown_rows
    from analyzer.audit.core import audit_frame, keep_shown_texts
    from analyzer.audit.signals import pair_signals
    from analyzer.audit.stream import streamed_pair_signals
    from analyzer.commands.common import DD_SAMPLES, SAMPLES
    from analyzer.report.audit import write_audit_report
    from analyzer.validate import generate_valid

    peaks: dict[str, float] = {}
    phase = ["start"]

    def rss_mb() -> float:
        with open("/proc/self/statm") as f:  # Linux: resident pages
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20

    def watch() -> None:  # the resident memory's peak within each phase, sampled every 10 ms
        while True:
            peaks[phase[0]] = max(peaks.get(phase[0], 0.0), rss_mb())
            time.sleep(0.01)

    import threading

    if os.path.exists("/proc/self/statm"):
        threading.Thread(target=watch, daemon=True).start()
    phase[0] = "rows"
    t0 = time.process_time()
    if store is None:
        settings = Settings.of(SAMPLES, DD_SAMPLES, 0, policy=AUDIT_POLICY)  # the audit's defaults
        df = analyse_items(generate_valid([str(log)]), settings)
    else:
        df = read_rows(open_store(store))
    t1 = time.process_time()
    phase[0] = "pair signals"
    seating = df.drop_duplicates("hand_id")[["hand_id", "p0", "p1", "p2", "p3"]]
    rank_pairs(calibrate(streamed_pair_signals(df, seating)))
    t2 = time.process_time()
    phase[0] = "+ player table, evidence"
    result, _, players = audit_frame(df, seating)  # the signals again, the player table, the evidence
    keep_shown_texts(df, shown_rows(df, result))  # as the command does (run_audit's slim)
    t3 = time.process_time()
    phase[0] = "report"
    with tempfile.TemporaryDirectory() as out:
        write_audit_report(out, result, decisions=df, players=players)
    t4 = time.process_time()
    phase[0] = "in-memory signals (reference)"
    pair_signals(df, seating=seating)  # the in-memory reference, for comparison (not part of the audit)
    t5 = time.process_time()
    time.sleep(0.05)
    n = seating.shape[0]
    rest = (t3 - t2) - (t2 - t1)
    print(f"phases at {n} hands ({'read from a store' if store else 'analysed at the audit defaults'}): "
          f"analysis {t1 - t0:.1f} CPU-s, pair signals {t2 - t1:.1f}, player table + evidence {rest:.1f}, "
          f"report {t4 - t3:.1f}; aggregation {1000 * (t4 - t3 + t2 - t1 + rest) / n:.2f} ms a hand "
          f"(signals {1000 * (t2 - t1) / n:.2f}, players + evidence {1000 * rest / n:.2f}, "
          f"report {1000 * (t4 - t3) / n:.2f}); the in-memory pair signals (reference) "
          f"{1000 * (t5 - t4) / n:.2f} ms a hand; load {os.getloadavg()[0]:.1f}")
    if peaks:
        print("peak resident memory by phase (this process): "
              + ", ".join(f"{k} {v:.0f} MB" for k, v in peaks.items() if k != "start"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[4000, 16000])
    ap.add_argument("--big", action="store_true", help="also 64,000 hands (long)")
    ap.add_argument("--players", type=int, default=64)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=1, help="worker processes of the ordinary runs")
    ap.add_argument("--dask", action="store_true", help="also --dask local at 1 and 2 workers (smallest size)")
    ap.add_argument("--dask-only", action="store_true", help="only the --dask runs")
    ap.add_argument("--phases", action="store_true", help="only: split the smallest size's CPU into analysis "
                                                          "and aggregation (in this process)")
    ap.add_argument("--settings", action="store_true", help="only: the decision analysis' CPU at several "
                                                             "evaluation settings (smallest size)")
    ap.add_argument("--from-store", action="store_true", help="audit decision stores written with cheap settings "
                                                                "(memory and aggregation time, not the analysis')")
    ap.add_argument("--against", type=Path, default=None,
                    help="with --dask: another checkout of the repository (e.g. `git worktree add /tmp/old main`); its "
                         "audit at 2 Dask workers runs interleaved with this one's, --rounds times (an A/B on a shared machine)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "bench_audit_scale")
    ap.add_argument("--policy", choices=["strategy", "model", "fast"], default=None,
                    help="the audit's evaluator (--policy of the audit; default: the audit's own, AUDIT_POLICY)")
    args = ap.parse_args()
    sizes = sorted(set(args.sizes + ([64000] if args.big else [])))
    src = room(args.cache, args.players, max(sizes), args.seed)
    if args.settings:
        settings_cost(cut(src, sizes[0], args.cache), sizes[0])
        return
    if args.phases:
        log = cut(src, sizes[0], args.cache)
        phases(log, store_of(log, args.cache) if args.from_store else None)
        return
    warm = cut(src, 40, args.cache)
    audit_once(warm, ["--jobs", "1"])  # numba's cache and the OS's file cache, not measured

    def extra(log: Path, more: list[str]) -> list[str]:
        if args.policy and not args.from_store:
            more = ["--policy", args.policy, *more]
        return ["--decisions", str(store_of(log, args.cache)), *more] if args.from_store else more

    how = "from stores at " + " ".join(CHEAP) if args.from_store else (
        f"audit defaults, --policy {args.policy}" if args.policy else "audit defaults")
    print(f"room: {args.players} players, seed {args.seed}; {how}; cores: {os.cpu_count()}")
    print(f"{'run':<28} {'hands':>7} {'wall s':>8} {'CPU s':>8} {'client s':>8} {'hands/s':>8} {'hands/CPU-s':>11} "
          f"{'peak MB':>8} {'load':>5}")
    rows: dict[tuple[str, int], dict[str, float]] = {}

    def show(name: str, n: int, r: dict[str, float]) -> None:
        rows[(name, n)] = r
        print(f"{name:<28} {n:>7} {r['wall']:>8.1f} {r['cpu']:>8.1f} {r['client']:>8.1f} {n / r['wall']:>8.1f} "
              f"{n / r['cpu']:>11.1f} "
              f"{r['rss_mb']:>8.0f} {r['load']:>5.1f}", flush=True)

    name = f"--jobs {args.jobs}"
    if not args.dask_only:
        for n in sizes:
            log = cut(src, n, args.cache)
            show(name, n, audit_once(log, extra(log, ["--jobs", str(args.jobs)])))
        if len(sizes) > 1:
            a, b = sizes[0], sizes[1]
            ra, rb = rows[(name, a)], rows[(name, b)]
            print(f"{b}/{a}: CPU x{rb['cpu'] / ra['cpu']:.2f} (linear: x{b / a:.2f}), "
                  f"peak memory x{rb['rss_mb'] / ra['rss_mb']:.2f}")
        # issue 13's goals on these runs (CPU seconds: the figure that compares across machines' loads best)
        rates = [n / rows[(name, n)]["cpu"] for n in sizes]
        print("goals: >= 150 hands per CPU-second at every size: "
              + ("met" if min(rates) >= 150 else "not met") + f" ({', '.join(f'{r:.1f}' for r in rates)}); "
              + ("" if len(sizes) < 2 else
                 f"CPU {sizes[1]}/{sizes[0]} <= x{4.6 * sizes[1] / sizes[0] / 4:.2f}: "
                 + ("met" if rb['cpu'] / ra['cpu'] <= 4.6 * b / a / 4 else "not met")
                 + "; peak memory <= x1.5: " + ("met" if rb['rss_mb'] / ra['rss_mb'] <= 1.5 else "not met")),
              flush=True)
    if args.dask or args.dask_only:
        n = sizes[0]
        log = cut(src, n, args.cache)
        for w in (1, 2):
            show(f"--dask local, {w} worker(s)", n, audit_once(log, extra(log, ["--dask", "local", "--jobs", str(w)])))
        one, two = rows[("--dask local, 1 worker(s)", n)], rows[("--dask local, 2 worker(s)", n)]
        print(f"2 workers / 1 worker: wall x{one['wall'] / two['wall']:.2f} faster")
        for w, r in ((1, one), (2, two)):
            # the client's own CPU (reading, gathering, spill, evidence, player table, report; the LocalCluster's
            # scheduler runs in it too): the part more workers do not shrink; the CPU total counts only the worker
            # processes the client reaped, so the share is of the client's CPU plus the workers' as reaped
            print(f"--dask local, {w} worker(s): client's own CPU {r['client']:.1f} s of {r['cpu']:.1f} s "
                  f"({100 * r['client'] / r['cpu']:.0f}%), workers {r['cpu'] - r['client']:.1f} s")
        if args.against is not None:  # the same run of two checkouts in turn: the load hits both alike
            audit_once(warm, ["--jobs", "1"], args.against.resolve())
            for k in range(args.rounds):
                for tree in (args.against.resolve(), ROOT):
                    r = audit_once(log, extra(log, ["--dask", "local", "--jobs", "2"]), tree)
                    print(f"A/B round {k}, {tree}: 2 workers, wall {r['wall']:.1f} s, CPU {r['cpu']:.1f} s, "
                          f"client {r['client']:.1f} s, peak {r['rss_mb']:.0f} MB, load {r['load']:.1f}", flush=True)


if __name__ == "__main__":
    main()
