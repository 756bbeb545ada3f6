"""Platform scale: one simulated room of ~2,000 players, its decision store built a day at a time as a nightly job
builds it, audited from the store at 16,000 hands and at 250,000 (and sizes between): peak memory and time a hand
against hands.

    python -m benchmarks.scale_room [--sizes 16000 64000 250000] [--players 2000] [--day-hands 4000] [--small]

The room is simulated once (``analyzer simulate``, seeded, the largest size; no search experts, whose simulation is
slow and whose hands cost the audit what any other hands cost) and cut into day files of ``--day-hands`` hands in
the log's order; the room of N hands is its first N / day-hands days, so every size holds the same players and the
pairs seated together grow with the hands only as the tables re-form. Each day is added to a store by its own
``analyzer decisions DAY --out STORE`` (the nightly way); the store of each size is kept (its parts hard-linked from
the largest's, which are never rewritten). Then, per size, in fresh processes and in turn (every size once a round,
so the load hits them alike):

- ``look``: ``analyzer audit --decisions STORE --out DIR`` with no ledger yet (every day is summed: the whole store
  audited from its rows, one day's rows in memory at a time);
- ``with logs``: ``analyzer audit DAY1 ... DAYn --decisions STORE --out DIR`` (the full, fixed-sample audit of the
  logs with the store's rows; ``--with-logs no`` leaves it out, ``--with-logs-max N`` runs it up to N hands).

Each run's wall and CPU seconds (the process and every child it reaped, ``os.wait4``), peak resident memory of its
largest process (``ru_maxrss``) and of the whole process tree (psutil, sampled every 0.2 s). Intermediate files live
in ``--work`` (not in git); a run stopped part-way is resumed (the days already added and the sizes already audited
are kept there). Writes benchmarks/results/scale_room.json.
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
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.results import Results, command_line  # noqa: E402

#: The room's skill mix: the analyzer simulator's default without its search experts (their simulation is ~10x
#: slower and adds nothing to what the audit's memory or time depends on).
SKILL_MIX = "novice:0.15,casual:0.3,regular:0.35,strong:0.2"
#: Goals for the largest room against the smallest (the same players).
MEMORY_GOAL = 1.5
TIME_GOAL = 1.2


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def measured(args: list[str], cwd: Path = ROOT, ok: tuple[int, ...] = (0, 1)) -> dict[str, Any]:
    """``analyzer ARGS`` in a fresh process: wall s, CPU s (its own and its reaped children's), peak RSS MB of its
    largest process (``ru_maxrss``) and of its process tree (psutil, sampled every 0.2 s), the 1-minute load, and
    what it printed (``said``: its standard output and error)."""
    import psutil

    load = os.getloadavg()[0]
    t0 = time.monotonic()
    said = tempfile.TemporaryFile()
    proc = subprocess.Popen([sys.executable, "-m", "analyzer.cli", *args], cwd=cwd, env=_env(),
                            stdout=said, stderr=subprocess.PIPE)
    tree_peak = [0.0]
    done = threading.Event()

    def watch() -> None:
        try:
            top = psutil.Process(proc.pid)
        except psutil.Error:
            return
        while not done.wait(0.2):
            try:
                procs = [top, *top.children(recursive=True)]
            except psutil.Error:
                return
            total = 0
            for p in procs:
                try:
                    total += p.memory_info().rss
                except psutil.Error:
                    pass
            tree_peak[0] = max(tree_peak[0], total / 2**20)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""  # drained while it runs
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    done.set()
    watcher.join()
    code = os.waitstatus_to_exitcode(status)
    if code not in ok:
        raise SystemExit(f"analyzer {' '.join(args[:3])} ...: exit {code}\n{err[-3000:]}")
    said.seek(0)
    stdout = said.read().decode(errors="replace")
    said.close()
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_mb": usage.ru_maxrss / 1024,
            "said": stdout + err,
            "tree_peak_mb": max(tree_peak[0], usage.ru_maxrss / 1024), "load": (load + os.getloadavg()[0]) / 2}


def simulate(work: Path, hands: int, players: int, seed: int) -> Path:
    """The room's log (simulated once; a longer room of the same players and seed serves too)."""
    for have in sorted(work.glob(f"room-{players}p-s{seed}-*.jsonl.gz")):
        if int(have.name.rsplit("-", 1)[1].split(".")[0]) >= hands:
            return have
    path = work / f"room-{players}p-s{seed}-{hands}.jsonl.gz"
    tmp = path.with_name(path.name + ".tmp.jsonl.gz")
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "analyzer.cli", "simulate", "--hands", str(hands), "--players", str(players),
                    "--seed", str(seed), "--skill-mix", SKILL_MIX, "--colluders", str(max(1, players // 500)),
                    "--friends", str(max(1, players // 100)), "--out", str(tmp),
                    "--truth", str(path.with_suffix("").with_suffix(".truth.json"))],
                   check=True, cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL)
    tmp.rename(path)
    print(f"simulated {hands:,} hands of {players:,} players in {time.monotonic() - t0:.0f} s", flush=True)
    return path


def cut_days(log: Path, folder: Path, day_hands: int, hands: int) -> list[Path]:
    """The room's first ``hands`` hands as day files of ``day_hands`` (written once; the last may be shorter)."""
    folder.mkdir(parents=True, exist_ok=True)
    days = -(-hands // day_hands)
    paths = [folder / f"day{d + 1:04d}.jsonl" for d in range(days)]
    if all(p.exists() for p in paths):
        return paths
    with gzip.open(log, "rb") as f:
        for d, path in enumerate(paths):
            lines = [line for _, line in zip(range(min(day_hands, hands - d * day_hands)), f)]
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_bytes(b"".join(lines))
            tmp.rename(path)
    return paths


def build_stores(work: Path, days: list[Path], sizes: list[int], day_hands: int, jobs: int | None
                 ) -> tuple[dict[int, Path], list[dict[str, Any]]]:
    """The store of each size (its first days): the days added one by one with ``analyzer decisions DAY --out STORE``
    to one store (``work/store``), and each size's store a copy of it as it stood after that size's last day (parts
    hard-linked: a store never rewrites a part). Resumed from ``store.progress.json``, which keeps each day's build
    figures (a day the store held already, added by a run stopped before it noted it, adds nothing: ``resumed``)."""
    building = work / "store"
    progress_file = work / "store.progress.json"
    built: list[dict[str, Any]] = json.loads(progress_file.read_text()) if progress_file.exists() else []
    stores = {n: work / f"store-{n}" for n in sizes}
    for i, day in enumerate(days):
        if i >= len(built):
            extra = ["--jobs", str(jobs)] if jobs else []
            r = measured(["decisions", str(day), "--out", str(building), *extra], ok=(0,))
            r["day"], r["hands"] = i + 1, min(day_hands, max(sizes) - i * day_hands)
            r["resumed"] = "from 0 new hands" in r.pop("said", "")
            built.append(r)
            print(f"day {i + 1}/{len(days)}: {r['hands']:,} hands in {r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} s "
                  f"CPU, peak {r['peak_mb']:.0f} MB, load {r['load']:.1f}", flush=True)
            progress_file.write_text(json.dumps(built))
        held = min((i + 1) * day_hands, max(sizes))
        for n in sizes:
            if n == held and not stores[n].exists():
                _copy_store(building, stores[n])
    return stores, built


def _copy_store(src: Path, dst: Path) -> None:
    tmp = dst.with_name(dst.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(src, tmp, copy_function=lambda a, b: os.link(a, b) if a.endswith(".parquet") else shutil.copy2(a, b),
                    ignore=shutil.ignore_patterns("_ledger"))
    tmp.rename(dst)


def one_day_store(work: Path, n: int, days: list[Path]) -> Path:
    """The store of the first ``n`` hands added in one run (``analyzer decisions DAY1 ... DAYk``: one day of the
    ledger), written once."""
    store = work / f"oneday-{n}"
    if not store.exists():
        tmp = work / f"oneday-{n}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        measured(["decisions", *map(str, days), "--out", str(tmp)], ok=(0,))
        tmp.rename(store)
    return store


def audit_run(form: str, n: int, store: Path, days: list[Path], scratch: Path) -> dict[str, Any]:
    """One audit of the store of ``n`` hands in a fresh process: ``look`` (no ledger yet: every day summed; ``look,
    one day``: of the store of the same hands added in one run) or ``with logs`` (the full audit of its days' logs
    with the store)."""
    out = Path(tempfile.mkdtemp(prefix=f"out-{n}-", dir=scratch))
    copy = None
    try:
        if form.startswith("look"):  # a store of its own without a ledger: the look sums every day
            copy = scratch / f"look-{n}"
            shutil.rmtree(copy, ignore_errors=True)
            _copy_store(store, copy)
            r = measured(["audit", "--decisions", str(copy), "--out", str(out / "r")])
        else:
            r = measured(["audit", *map(str, days), "--decisions", str(store), "--out", str(out / "r")])
        r.pop("said")
        pairs = _pairs_in(out / "r" / "pairs.csv")
    finally:
        shutil.rmtree(out, ignore_errors=True)
        if copy is not None:
            shutil.rmtree(copy, ignore_errors=True)
    return {"form": form, "hands": n, **r, "pairs": pairs}


def _pairs_in(csv: Path) -> int:
    with open(csv, "rb") as f:
        return sum(1 for _ in f) - 1


def _measuring(argv: list[str] | None) -> list[str]:
    """The command line that measures what a ``--report-only`` run writes (the same, without that flag)."""
    return [a for a in (sys.argv[1:] if argv is None else argv) if a != "--report-only"]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[16000, 250000], help="room sizes in hands (multiples of "
                    "--day-hands but the largest)")
    ap.add_argument("--players", type=int, default=2000)
    ap.add_argument("--day-hands", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=51)
    ap.add_argument("--rounds", type=int, default=1, help="audits of every size, in turn")
    ap.add_argument("--with-logs", choices=("yes", "no"), default="yes")
    ap.add_argument("--with-logs-max", type=int, default=None, help="the with-logs audit only up to this many hands")
    ap.add_argument("--one-day-max", type=int, default=None, help="also the look of each size up to this one "
                    "built in one run (one day): what a day's size costs the look")
    ap.add_argument("--jobs", type=int, default=None, help="--jobs of the decisions runs (default: theirs)")
    ap.add_argument("--build-only", action="store_true", help="simulate, cut and build the stores, then stop")
    ap.add_argument("--report-only", action="store_true", help="write the results of the audits measured so far "
                    "(in --work), running none")
    ap.add_argument("--note", action="append", default=[], help="a sentence for the results' notes (e.g. what "
                    "stopped a larger size)")
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "bieqi-scale-room")
    ap.add_argument("--small", action="store_true", help="a quick check: 200 players, 1,000 and 4,000 hands, days "
                    "of 1,000")
    args = ap.parse_args(argv)
    if args.small:
        args.sizes, args.players, args.day_hands = [1000, 4000], 200, 1000
    sizes = sorted(set(args.sizes))
    bad = [n for n in sizes[:-1] if n % args.day_hands]
    if bad:
        raise SystemExit(f"--sizes {bad}: not whole days of {args.day_hands} hands")
    work = args.work / f"room-{args.players}p-s{args.seed}-d{args.day_hands}"
    work.mkdir(parents=True, exist_ok=True)
    res = Results("scale_room", "Platform scale: a room of 2,000 players at 16,000 hands and more", "platform-scale",
                  command_line("benchmarks.scale_room", _measuring(argv)),
                  parameters={"sizes": sizes, "players": args.players, "day_hands": args.day_hands, "seed": args.seed,
                              "rounds": args.rounds, "with_logs": args.with_logs,
                              "with_logs_max": args.with_logs_max, "one_day_max": args.one_day_max,
                              "small": args.small, "skill_mix": SKILL_MIX},
                  about="One room cut into days, each added by `analyzer decisions DAY --out STORE`; audited from the "
                        "store (the look; the audit with the logs) in fresh processes. Tables: results/scale_room.json.")
    log = simulate(work.parent, sizes[-1], args.players, args.seed)
    days = cut_days(log, work / "days", args.day_hands, sizes[-1])
    if args.report_only:
        res.note("Written from the runs measured before by this command (each run's load is in its table); the "
                 "load above is the machine's when the file was written.")
    if args.report_only:  # the days built so far (the figures of those the sizes hold)
        progress = work / "store.progress.json"
        stores, built = {}, json.loads(progress.read_text()) if progress.exists() else []
    else:
        stores, built = build_stores(work, days, sizes, args.day_hands, args.jobs)
    if args.build_only:
        return
    runs_file = work / "audits.json"
    runs: list[dict[str, Any]] = json.loads(runs_file.read_text()) if runs_file.exists() else []
    forms = ["look"] + (["with logs"] if args.with_logs == "yes" else []) + (["look, one day"] if args.one_day_max
                                                                               else [])
    scratch = work / "scratch"
    scratch.mkdir(exist_ok=True)
    for k in range(0 if args.report_only else args.rounds):
        for form in forms:
            for n in sizes:
                if form == "with logs" and args.with_logs_max is not None and n > args.with_logs_max:
                    continue
                if form == "look, one day" and n > args.one_day_max:
                    continue
                if sum(1 for r in runs if r["form"] == form and r["hands"] == n) > k:
                    continue  # measured in a run before this one (resumed)
                held = days[:-(-n // args.day_hands)]
                store = stores[n] if form != "look, one day" else one_day_store(work, n, held)
                r = audit_run(form, n, store, held, scratch)
                r["round"] = k
                runs.append(r)
                runs_file.write_text(json.dumps(runs))
                print(f"{form}, {n:,} hands: {r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} s CPU, peak {r['peak_mb']:.0f} "
                      f"MB (tree {r['tree_peak_mb']:.0f} MB), {r['pairs']:,} pairs, load {r['load']:.1f}", flush=True)
    for text in args.note:
        res.note(text)
    report(res, runs, built[:-(-sizes[-1] // args.day_hands)], sizes, forms)
    res.write()


def report(res: Results, runs: list[dict[str, Any]], built: list[dict[str, Any]], sizes: list[int],
           forms: list[str]) -> None:
    """The figures: per form and size the medians, and the largest size against the smallest."""
    rows = []
    by: dict[tuple[str, int], dict[str, float]] = {}
    for form in forms:
        before: tuple[int, dict[str, float]] | None = None
        for n in sizes:
            got = [r for r in runs if r["form"] == form and r["hands"] == n]
            if not got:
                continue
            med = {k: statistics.median(r[k] for r in got) for k in ("wall_s", "cpu_s", "peak_mb", "tree_peak_mb",
                                                                      "load")}
            med["pairs"] = got[0]["pairs"]
            by[(form, n)] = med
            # the cost of the hands added since the smaller size (its fixed start-up and imports cancel out)
            added = (1e3 * (med["cpu_s"] - before[1]["cpu_s"]) / (n - before[0])) if before else None
            rows.append([form, n, med["pairs"], med["wall_s"], med["cpu_s"], 1e3 * med["wall_s"] / n,
                         1e3 * med["cpu_s"] / n, added, med["peak_mb"], med["tree_peak_mb"], len(got), med["load"]])
            before = (n, med)
    res.table("audits", "Audits from the store, by size (medians)", ["form", "hands", "pairs", "wall s", "CPU s",
              "wall ms/hand", "CPU ms/hand", "CPU ms/added hand", "peak MB", "tree peak MB", "runs", "load"], rows,
              about="CPU ms/added hand: the CPU of the hands added since the size above, a hand (the fixed "
                    "start-up cancels out).", page=False)
    small = sizes[0]
    for form in forms:
        have = [n for n in sizes if (form, n) in by]
        if len(have) < 2 or have[0] != small:
            continue
        big = have[-1]
        a, b = by[(form, small)], by[(form, big)]
        tag = form.replace(", ", "_").replace(" ", "_")
        what = f"{form}: {big:,} hands over {small:,}"
        res.figure(f"{tag}_memory_ratio", b["peak_mb"] / a["peak_mb"], "x", f"{what}, peak memory (largest process)",
                   goal=f"<= {MEMORY_GOAL}")
        res.figure(f"{tag}_tree_memory_ratio", b["tree_peak_mb"] / a["tree_peak_mb"], "x",
                   f"{what}, peak memory (process tree)")
        res.figure(f"{tag}_time_ratio", (b["wall_s"] / big) / (a["wall_s"] / small), "x",
                   f"{what}, wall time a hand", goal=f"<= {TIME_GOAL}")
        res.figure(f"{tag}_cpu_ratio", (b["cpu_s"] / big) / (a["cpu_s"] / small), "x", f"{what}, CPU time a hand")
        res.figure(f"{tag}_pairs_ratio", b["pairs"] / max(a["pairs"], 1), "x", f"{what}, pairs seen together")
    built = [d for d in built if not d.get("resumed")]  # a day added by a stopped run: its figures are not a day's
    if built:
        hands = sum(d["hands"] for d in built)
        res.figure("build_cpu_ms_hand", 1e3 * sum(d["cpu_s"] for d in built) / hands, "ms",
                   f"building the store, `analyzer decisions DAY` a day ({len(built)} days measured, {hands:,} "
                   "hands): CPU a hand")
        res.figure("build_wall_s_day", statistics.median(d["wall_s"] for d in built), "s",
                   "building the store: wall a day (median)")
        res.figure("build_peak_mb", max(d["peak_mb"] for d in built), "MB",
                   "building the store: peak memory of a day's run (largest process, the most over the days)")
        res.table("build", "The store built a day at a time", ["day", "hands", "wall s", "CPU s", "peak MB", "load"],
                  [[d["day"], d["hands"], d["wall_s"], d["cpu_s"], d["peak_mb"], d["load"]] for d in built],
                  page=False)


if __name__ == "__main__":
    main()
