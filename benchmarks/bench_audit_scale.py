"""Audit cost at platform volume: wall and CPU time, hands per CPU-second and peak memory as a room grows.

Run: ``python -m benchmarks.bench_audit_scale [--sizes 4000 16000] [--big] [--jobs 1] [--players 64]
[--dask [--dask-sizes 4000 16000] [--dask-pairs 3] [--against TREE]]``
(``--settings``: only the decision analysis' CPU at several evaluation settings; ``--dask-phases``: only the
1-worker and 2-worker ``--dask local`` runs' wall time cut into start-up, analysis, aggregation and the client's end,
from the scheduler's task stream, with each kind of task's compute seconds, or with ``--against TREE`` those of
2-worker runs of both checkouts in turn; ``--phases``: only the
split of each size's CPU time, inside one ``analyzer audit --jobs 1`` (the command's own path: its spill, slim rows
and report), into start-up, analysis, pair signals, player table, evidence and shown rows, their reasons, the
report and the other outputs; ``--from-store``: audit decision stores written beforehand with cheap analysis
settings, so the figures are the audit's own work and memory, which do not depend on the samples)

One simulated room (``--players`` players, seed ``--seed``, the simulator's defaults otherwise: one
colluding pair and friends) is written once (cached in ``--cache``); its first N hands are audited by
``analyzer audit`` in a fresh process for each N, so each figure is that run's alone: wall time, CPU
time of the process and every worker it started (``os.wait4``), hands per CPU-second, and the peak
resident memory of the largest process (the one that holds the rows; ``ru_maxrss``), and with ``--dask local`` that
of the largest worker ("workers MB").
``--from-store`` writes, once per size (cached), a decision store with ``analyzer decisions --samples 1
--max-samples 1 --dd-samples 1 --policy fast`` and audits with ``--decisions STORE``: the rows' values differ
from the defaults' but not their number or shape, so memory and the aggregation's time are the audit's at any
settings. ``--big`` adds 64,000 hands (long). ``--dask`` also runs the smallest size (or each of ``--dask-sizes``) with
``--dask local`` at 1 and 2 workers and prints the speed-up in wall time, each run's CPU split into the client's own
(the command's process, with the LocalCluster's scheduler) and the workers', and the ceiling the machine's cores put
on the speed-up (cores x the 1-worker wall time / the 2-worker CPU time), and what the machine itself gives two busy
processes against one (``machine_speedup``: one-second bursts of pure-Python work, and of the audit's own decision
analysis, one process and two in turn; on a virtual machine whose two cores share a physical core or a busy host this
is well under 2, and no program's 2-worker run can beat it by much). The machine's load average is printed with each
run: CPU time and wall time both suffer when other jobs share the cores. ``--dask-pairs N`` runs each size's
1-worker and 2-worker audits N times in turn, the order turned every other pair (1-2, 2-1, ...), and prints each
pair's speed-up, their median and their geometric mean: on a shared virtual machine the same run's wall time drifts
by 20-40% over minutes, so one pair can land on either side of the goal, and a drift that lasts over a pair favoured
the same side in every pair while the 1-worker run always came first (an even N cancels a steady drift).
The ordinary runs are framed by a machine-speed reference (``reference_speed``: the decision analysis alone, one
process), printed before and after them with each size's hands per CPU-second over it.
"""

from __future__ import annotations

import argparse
import gzip
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
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


def _adopt_orphans() -> bool:
    """Make this process the reaper of its descendants' orphans (Linux ``PR_SET_CHILD_SUBREAPER``): a LocalCluster's
    forkserver outlives the command by a moment, and the workers forked from it are its children, not the
    command's; adopted, the forkserver is reaped here, and ``wait4`` gives its CPU with its workers'."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER


def _reap_adopted(timeout: float = 60.0) -> tuple[float, float, float, int]:
    """CPU s, peak RSS MB, system CPU s and minor page faults of the adopted orphans (:func:`_adopt_orphans`), each
    reaped as it exits (a forkserver's figures count the workers it reaped)."""
    cpu = rss = system = 0.0
    faults = 0
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            pid, _, usage = os.wait4(-1, os.WNOHANG)
        except ChildProcessError:  # none left
            break
        if pid == 0:  # one still running (a forkserver notices the command's exit at once)
            time.sleep(0.02)
            continue
        cpu += usage.ru_utime + usage.ru_stime
        rss = max(rss, usage.ru_maxrss / 1024)
        system += usage.ru_stime
        faults += usage.ru_minflt
    return cpu, rss, system, faults


def audit_once(log: Path | Sequence[str], extra: list[str], root: Path = ROOT) -> dict[str, float]:
    """One ``analyzer audit LOG --out DIR EXTRA`` in a fresh process (``log``: a log, or the audit's arguments
    before ``--out``, e.g. ``["--decisions", STORE]``): wall s, CPU s (with its workers, also those a forkserver of
    its started: :func:`_adopt_orphans`), the command's own CPU s (``client``: without its worker processes), peak
    RSS MB of the largest process, and ``workers_mb``: that of the largest adopted one (with ``--dask local``, the
    LocalCluster's workers and the forkserver they are forked from; 0 without). ``root``: the checkout whose code
    runs."""
    before = [str(log)] if isinstance(log, (str, os.PathLike)) else [str(a) for a in log]
    load = os.getloadavg()[0]
    adopted = _adopt_orphans()
    with tempfile.TemporaryDirectory() as out:
        own = Path(out) / "own-cpu.txt"
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-c", _OWN_CPU, str(own), "audit", *before, "--out", out, *extra],
                                cwd=root, env=_env(root), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - t0
        more_cpu, more_rss, more_sys, more_faults = _reap_adopted() if adopted else (0.0, 0.0, 0.0, 0)
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        if os.waitstatus_to_exitcode(status) not in (0, 1):
            raise SystemExit(f"audit failed ({status}): {err[-2000:]}")
        client = float(own.read_text()) if own.exists() else float("nan")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime + more_cpu, "client": client,
            "rss_mb": max(usage.ru_maxrss / 1024, more_rss), "workers_mb": more_rss, "workers_sys": more_sys,
            "workers_faults": more_faults,
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


#: Runs ``analyzer audit`` (argv after the file name) in this process with clocks around its steps, and writes each
#: step's CPU seconds (this process': ``--jobs 1`` keeps the analysis in it) to the file at exit as JSON. The steps
#: are the command's own functions, wrapped where the command finds them (module attributes), so the path measured
#: is the command's: its spill, its slim rows, its report.
_PHASES = ("import atexit, json, sys, time\n"
           "out = sys.argv[1]\n"
           "marks = {'start-up': time.process_time()}\n"
           "spans = {}\n"
           "from analyzer.cli import cli\n"
           "from analyzer.audit import core\n"
           "from analyzer.report import audit as report\n"
           "marks['imports'] = time.process_time()\n"
           "def span(name, fn):\n"
           "    def run(*a, **k):\n"
           "        t = time.process_time()\n"
           "        try:\n"
           "            return fn(*a, **k)\n"
           "        finally:\n"
           "            spans[name] = spans.get(name, 0.0) + time.process_time() - t\n"
           "            marks[name + ' done'] = time.process_time()\n"
           "    return run\n"
           "def audit(*a, on_phase=None, **k):\n"
           "    def phase(name):\n"
           "        marks.setdefault('analysis done', time.process_time())\n"
           "        if on_phase is not None:\n"
           "            on_phase(name)\n"
           "    return run_audit(*a, on_phase=phase, **k)\n"
           "run_audit = span('run_audit', core.run_audit)\n"
           "core.run_audit = audit\n"
           "for name in ('rank_pairs', 'player_table', 'player_table_on', 'audit_rows'):\n"
           "    setattr(core, name, span(name, getattr(core, name)))\n"
           "report.write_audit_report = span('report', report.write_audit_report)\n"
           "from analyzer.audit import rows\n"
           "rows.AuditRows.add = span('feed', rows.AuditRows.add)\n"
           "def note():\n"
           "    marks['end'] = time.process_time()\n"
           "    open(out, 'w').write(json.dumps({'marks': marks, 'spans': spans}))\n"
           "atexit.register(note)\n"
           "sys.argv = ['analyzer'] + sys.argv[2:]\n"
           "cli()\n")


def phases(log: Path, store: Path | None, n: int, policy: str | None) -> None:
    """The command's CPU time split into its steps: start-up (imports), the decision analysis (or the store's
    read) with the reading and validation of the logs, the pair signals with their calibration, the player
    table, the evidence and shown rows, the shown rows' reasons, the HTML report and the other outputs; each
    step as measured inside one ``analyzer audit --jobs 1`` (``_PHASES``)."""
    import json

    extra = ["--decisions", str(store)] if store is not None else (["--policy", policy] if policy else [])
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as out:
        clock = Path(out) / "phases.json"
        proc = subprocess.run([sys.executable, "-c", _PHASES, str(clock), "audit", str(log), "--out", out,
                               "--jobs", "1", *extra], cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"audit failed: {proc.stderr.decode(errors='replace')[-2000:]}")
        got = json.loads(clock.read_text())
    m, sp = got["marks"], got["spans"]
    players = sp.get("player_table", 0.0) + sp.get("player_table_on", 0.0)
    signals_end = m["rank_pairs done"]
    steps = [("start-up (imports)", m["imports"]),
             ("reading, validation, decision analysis" if store is None else "reading, validation, store's rows",
              m["analysis done"] - m["imports"] - sp.get("feed", 0.0)),
             ("rows to the signals' chunks and the spill", sp.get("feed", 0.0)),
             ("pair signals and calibration", signals_end - m["analysis done"]),
             ("player table", players),
             ("cases' evidence, shown rows", m["audit_rows done"] - signals_end - players),
             ("shown rows' reasons", m["run_audit done"] - m["audit_rows done"]),
             ("report.html", sp["report"]),
             ("audit.json, csv, the rest", m["end"] - m["run_audit done"] - sp["report"])]
    total = m["end"]
    print(f"phases of `analyzer audit --jobs 1` on {n} hands "
          f"({'rows read from a store' if store else 'analysed at the audit defaults'}), CPU s of the process, "
          f"load {(load + os.getloadavg()[0]) / 2:.1f}:")
    for name, cpu in steps:
        print(f"  {name:<42} {cpu:7.2f} CPU-s {1000 * cpu / n:6.2f} ms a hand {100 * cpu / total:5.1f}%")
    after = total - m["analysis done"] + sp.get("feed", 0.0)
    print(f"  {'total':<42} {total:7.2f} CPU-s ({n / total:.1f} hands per CPU-s); the aggregation and outputs "
          f"(all but start-up and analysis) {after:.2f} CPU-s ({1000 * after / n:.2f} ms a hand)", flush=True)


#: Runs ``analyzer audit`` (argv after the file name) on ``--dask local`` in this process with the scheduler's task
#: stream on (its plugin added as the client starts), and writes at exit the run's start and end and every task's
#: key, worker and compute span (epoch seconds) as JSON: where the run's wall time went (:func:`dask_phases`).
_TASKS = ("import atexit, json, sys, time\n"
          "out = sys.argv[1]\n"
          "t0 = time.time()\n"
          "got = {'tasks': []}\n"
          "from analyzer.running import dask as running_dask\n"
          "make, close = running_dask.dask_client, running_dask.close_client\n"
          "def client(*a, **k):\n"
          "    c = make(*a, **k)\n"
          "    c.get_task_stream(count=1)  # adds the scheduler's task-stream plugin: every task from now on\n"
          "    return c\n"
          "def closing(c):\n"
          "    for t in c.get_task_stream(start=t0 - 1):\n"
          "        for s in t['startstops']:\n"
          "            if s['action'] == 'compute':\n"
          "                got['tasks'].append((str(t['key']), t['worker'], s['start'], s['stop']))\n"
          "    return close(c)\n"
          "running_dask.dask_client, running_dask.close_client = client, closing\n"
          "def note():\n"
          "    open(out, 'w').write(json.dumps({'start': t0, 'end': time.time(), **got}))\n"
          "atexit.register(note)\n"
          "sys.argv = ['analyzer'] + sys.argv[2:]\n"
          "from analyzer.cli import cli\n"
          "cli()\n")

#: The kinds of task :func:`dask_phases` sums (by the start of the task's key), in the order they run.
TASK_KINDS = (("the decision analysis", ("analyse_batch",)),
              ("its chunks, spill and think sums", ("bieqi-signals-chunk", "bieqi-signals-spill", "bieqi-signals-think",
                                                   "bieqi-signals-names")),
              ("player table", ("bieqi-players",)),
              ("pair-signal passes", ("bieqi-signals",)),  # the rest of bieqi-signals-*, the burst statistic's too
              ("cases' evidence", ("_evidence_task",)),
              ("report's pieces", ("bieqi-report", "_parts_of")))


def _kind(key: str) -> str:
    for name, starts in TASK_KINDS:
        if key.startswith(starts):
            return name
    return "other"


def dask_phases(log: Path, workers: int, root: Path = ROOT) -> dict[str, float]:
    """One ``analyzer audit --dask local --jobs workers`` (:data:`_TASKS`): its wall time cut into the start-up (to
    the first batch's analysis), the analysis (to the last task of a batch), the aggregation on the workers (to the
    last task) and the client's end (the report written), and each kind of task's compute seconds
    (:data:`TASK_KINDS`) summed over the workers."""
    import json

    with tempfile.TemporaryDirectory() as out:
        clock = Path(out) / "tasks.json"
        proc = subprocess.run([sys.executable, "-c", _TASKS, str(clock), "audit", str(log), "--out", out,
                               "--dask", "local", "--jobs", str(workers)], cwd=root, env=_env(root),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"audit failed: {proc.stderr.decode(errors='replace')[-2000:]}")
        got = json.loads(clock.read_text())
    t0, tasks = got["start"], got["tasks"]
    batch = [t for t in tasks if _kind(t[0]) in (TASK_KINDS[0][0], TASK_KINDS[1][0])]
    first = min(t[2] for t in tasks if t[0].startswith("analyse_batch"))
    analysed = max(t[3] for t in batch)
    last = max(t[3] for t in tasks)
    out_: dict[str, float] = {"start-up": first - t0, "analysis": analysed - first, "aggregation": last - analysed,
                              "client's end": got["end"] - last, "wall": got["end"] - t0}
    for name, _ in (*TASK_KINDS, ("other", ())):
        out_[f"compute: {name}"] = sum(t[3] - t[2] for t in tasks if _kind(t[0]) == name)
    return out_


#: The issue's goal for 2 workers against 1 (wall time).
GOAL = 1.7


def needed_speedup(one: dict[str, float], two: dict[str, float], goal: float = GOAL) -> float | None:
    """What the phases between the start-up and the client's end (the analysis and the aggregation) would have to
    gain on 2 workers for the run to reach ``goal``, the 2-worker start-up and end kept as measured: the 1-worker
    run's wall over ``goal``, less those fixed spans, against the 1-worker run's own span of those phases. None when
    the goal cannot be reached at all (the fixed spans alone exceed it)."""
    fixed = two["start-up"] + two["client's end"]
    budget = one["wall"] / goal - fixed
    middle = one["analysis"] + one["aggregation"]
    return middle / budget if budget > 0 else None


def show_dask_phases(log: Path, n: int, pairs: int) -> None:
    """:func:`dask_phases` at 1 and 2 workers, ``pairs`` times in turn: each phase's wall seconds and its speed-up."""
    for _ in range(max(1, pairs)):
        one, two = dask_phases(log, 1), dask_phases(log, 2)
        print(f"{n} hands, `--dask local`, where the wall time goes (s; 1 worker / 2 workers / speed-up), load "
              f"{os.getloadavg()[0]:.1f}:")
        for k in one:
            if k.startswith("compute: "):
                continue
            print(f"  {k:<36} {one[k]:7.1f} {two[k]:7.1f}   x{one[k] / max(two[k], 1e-9):.2f}")
        need = needed_speedup(one, two)
        print(f"  to reach x{GOAL:.1f} with the 2-worker start-up and end as they are, the analysis and aggregation "
              + (f"would have to run x{need:.2f} faster on 2 workers than on 1" if need is not None
                 else "could not: the start-up and end alone take longer"))
        print("  compute seconds of the workers' tasks, by kind (1 worker / 2 workers: CPU the second worker adds):")
        for k in one:
            if k.startswith("compute: ") and (one[k] or two[k]):
                print(f"  {k[9:]:<36} {one[k]:7.1f} {two[k]:7.1f}   x{two[k] / max(one[k], 1e-9):.2f}", flush=True)


def against_phases(log: Path, n: int, against: Path, rounds: int) -> None:
    """:func:`dask_phases` at 2 workers of ``against`` (another checkout) and of this one, ``rounds`` times, the order
    turned every other round: each run's wall, aggregation phase and the workers' compute seconds (the pair-signal
    passes' and all tasks'), and the means of both. An A/B of a change's cost where the wall of one run drifts too much
    to show it."""
    runs: dict[Path, list[dict[str, float]]] = {against: [], ROOT: []}
    print(f"{n} hands, 2 workers, {against} (A) against {ROOT} (B), the order turned every other round:")
    for k in range(rounds):
        for tree in ((against, ROOT) if k % 2 == 0 else (ROOT, against)):
            got = dask_phases(log, 2, tree)
            got["tasks"] = sum(v for key, v in got.items() if key.startswith("compute: "))
            runs[tree].append(got)
            print(f"  round {k} {'A' if tree == against else 'B'}: wall {got['wall']:5.1f} s, aggregation "
                  f"{got['aggregation']:5.1f} s, compute of the pair-signal passes {got['compute: pair-signal passes']:5.2f}"
                  f" s, of all tasks {got['tasks']:5.1f} s", flush=True)
    for key in ("wall", "aggregation", "compute: pair-signal passes", "tasks"):
        a, b = (statistics.mean(r[key] for r in runs[t]) for t in (against, ROOT))
        print(f"  mean {key:<30} A {a:6.2f}  B {b:6.2f}  B - A {b - a:+6.2f}", flush=True)


def _burn(seconds: float) -> int:
    """Units of pure-Python work (a loop of integer arithmetic) one process does in ``seconds`` of wall time."""
    end, units = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        x = 0
        for i in range(20_000):
            x += i * i
        units += 1
    return units


#: The hands :func:`_analyse_for` analyses, loaded once in each process of :func:`machine_speedup`'s pool.
_HANDS: list[object] = []


#: Why :func:`_load_hands` failed in this pool process (raised by :func:`_analyse_for`, so the parent sees it: a pool
#: whose initializer raises starts a new process in its place for ever, printing a traceback each time).
_LOAD_FAILED: list[BaseException] = []


def _load_hands(path: str) -> None:
    """A pool process' hands for :func:`_analyse_for`: the first valid ones of ``path``, the kernels loaded."""
    try:
        from analyzer.analysis.decisions import analyse
        from analyzer.validate import generate_checked

        _HANDS[:] = [it for it in generate_checked([path]) if it.ok][:40]
        if not _HANDS:
            raise ValueError(f"{path}: no valid hand to analyse")
        analyse(_HANDS[:2])
    except Exception as e:  # noqa: BLE001  # raised by the first task instead
        _LOAD_FAILED[:] = [e]


def _analyse_for(seconds: float) -> int:
    """Hands of :data:`_HANDS` (in turn, five a call) the audit's decision analysis gets through in ``seconds``."""
    if _LOAD_FAILED:
        raise RuntimeError(f"the machine-speed probe could not load its hands: {_LOAD_FAILED[0]!r}")
    from analyzer.analysis.decisions import analyse

    end, done = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        k = done % len(_HANDS)
        analyse(_HANDS[k:k + 5])
        done += len(_HANDS[k:k + 5])
    return done


def _analyse_cpu(seconds: float) -> float:
    """Hands of :data:`_HANDS` the decision analysis gets through per CPU-second of this process, over ``seconds``."""
    t = time.process_time()
    done = _analyse_for(seconds)
    return done / max(time.process_time() - t, 1e-9)


def reference_speed(hands: Path, bursts: int = 3, seconds: float = 1.0) -> float:
    """This machine's speed now, for comparing runs made at other times: the hands per CPU-second of the decision
    analysis alone on the first hands of ``hands`` (:func:`_load_hands`), in one process with the other core idle,
    the median of ``bursts`` bursts. A shared host's speed drifts (the same audit ran at 108 and 187 hands per
    CPU-second an hour apart on 2026-12-03), and so does this reference, even within one run: it says which hour a
    figure came from, it does not correct the figure."""
    fork = "fork" in multiprocessing.get_all_start_methods()
    with multiprocessing.get_context("fork" if fork else "spawn").Pool(1, _load_hands, (str(hands),)) as pool:
        pool.apply(_analyse_for, (0.2,))
        return statistics.median(pool.apply(_analyse_cpu, (seconds,)) for _ in range(bursts))


def machine_speedup(bursts: int = 10, seconds: float = 1.0, hands: Path | None = None) -> list[float]:
    """What this machine gives two busy processes against one: ``bursts`` times, the work one process does in
    ``seconds`` and then the work two do side by side in as long, as a ratio (2.0 on two idle, independent cores).
    The work is pure-Python arithmetic (a small working set: the cores' own speed), or with ``hands`` (a log) the
    audit's own decision analysis of its first hands (compiled kernels and numpy: what the audit's workers do, with
    their memory traffic). A burst each way in turn, so a host's load that comes and goes hits both alike; the median
    is the figure. Forked where the platform can: a spawned pool leaves multiprocessing's resource tracker running as
    a child of this process, which :func:`_reap_adopted` would then wait for."""
    fork = "fork" in multiprocessing.get_all_start_methods()
    work = _burn if hands is None else _analyse_for
    init, initargs = (None, ()) if hands is None else (_load_hands, (str(hands),))
    with multiprocessing.get_context("fork" if fork else "spawn").Pool(2, init, initargs) as pool:
        pool.map(work, [0.2, 0.2], chunksize=1)  # both started
        ratios = []
        for _ in range(bursts):
            one = pool.apply(work, (seconds,))
            ratios.append(sum(pool.map(work, [seconds, seconds], chunksize=1)) / max(one, 1))
    return ratios


def describe_speedup(ratios: list[float], hands: bool = False) -> str:
    work = "the audit's decision analysis" if hands else "pure-Python work"
    return (f"this machine gives 2 busy processes x{statistics.median(ratios):.2f} the work of one ({work}; median of "
            f"{len(ratios)} one-second bursts, {min(ratios):.2f}-{max(ratios):.2f})")


def describe_machine(hands: Path) -> str:
    """Both of :func:`machine_speedup`'s figures (pure Python, then the audit's analysis of ``hands``), one a line."""
    return (f"{describe_speedup(machine_speedup())}\n  "
            f"{describe_speedup(machine_speedup(hands=hands), hands=True)}")


def dask_split(n: int, one: dict[str, float], two: dict[str, float]) -> None:
    """The speed-up of 2 Dask workers over 1 at ``n`` hands, each run's CPU split into the client's and the workers',
    and the ceiling this machine puts on the speed-up: on C cores a run cannot take less wall time than its CPU
    over C, so 2 workers can be at most ``C * wall(1) / CPU(2)`` times faster than 1 (the client's CPU in the
    1-worker run overlaps its worker's on the second core: the more it does, the lower the ceiling)."""
    cores = os.cpu_count() or 1
    print(f"{n} hands, 2 workers / 1 worker: wall x{one['wall'] / two['wall']:.2f} faster (goal x{GOAL:.1f}); ceiling on "
          f"{cores} cores given the 2-worker run's CPU: x{cores * one['wall'] / two['cpu']:.2f}")
    for w, r in ((1, one), (2, two)):
        # the client's own CPU (reading, gathering, spill, evidence, player table, report; the LocalCluster's
        # scheduler runs in it too): the part more workers do not shrink; the CPU total counts only the worker
        # processes the client reaped, so the share is of the client's CPU plus the workers' as reaped; of the
        # workers' (and their forkserver's), the system's part and the page faults (running.dask.WORKER_MALLOC)
        print(f"  {w} worker(s): client's own CPU {r['client']:.1f} s of {r['cpu']:.1f} s "
              f"({100 * r['client'] / r['cpu']:.0f}%), workers {r['cpu'] - r['client']:.1f} s (system "
              f"{r['workers_sys']:.1f} s, {r['workers_faults'] / 1000:.0f}k page faults)", flush=True)


def main(argv: list[str] | None = None) -> None:
    from benchmarks.results import Results, command_line

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[4000, 16000])
    ap.add_argument("--big", action="store_true", help="also 64,000 hands (long)")
    ap.add_argument("--players", type=int, default=64)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=1, help="worker processes of the ordinary runs")
    ap.add_argument("--dask", action="store_true", help="also --dask local at 1 and 2 workers (smallest size)")
    ap.add_argument("--dask-only", action="store_true", help="only the --dask runs")
    ap.add_argument("--dask-sizes", type=int, nargs="+", default=None,
                    help="the sizes of the --dask runs (default: the smallest of --sizes)")
    ap.add_argument("--phases", action="store_true", help="only: split each size's CPU in `analyzer audit --jobs 1` "
                                                          "into analysis, aggregation steps and report")
    ap.add_argument("--dask-phases", action="store_true",
                    help="only: each --dask-sizes' 1-worker and 2-worker runs cut into start-up, analysis, aggregation "
                         "and the client's end (the scheduler's task stream), --dask-pairs times")
    ap.add_argument("--settings", action="store_true", help="only: the decision analysis' CPU at several "
                                                             "evaluation settings (smallest size)")
    ap.add_argument("--from-store", action="store_true", help="audit decision stores written with cheap settings "
                                                                "(memory and aggregation time, not the analysis')")
    ap.add_argument("--against", type=Path, default=None,
                    help="with --dask: another checkout of the repository (e.g. `git worktree add /tmp/old main`); its "
                         "audit at 2 Dask workers runs interleaved with this one's, --rounds times (an A/B on a shared "
                         "machine); with --dask-phases, each run's phases and its tasks' compute seconds, the order "
                         "turned every other round")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--dask-pairs", type=int, default=1,
                    help="with --dask: the 1-worker and 2-worker runs of each size this many times in turn, the order "
                         "turned every other pair; the speed-up of each pair, their median and geometric mean (a "
                         "shared machine's speed drifts between runs)")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "bench_audit_scale")
    ap.add_argument("--policy", choices=["strategy", "model", "fast"], default=None,
                    help="the audit's evaluator (--policy of the audit; default: the audit's own, AUDIT_POLICY)")
    args = ap.parse_args(argv)
    sizes = sorted(set(args.sizes + ([64000] if args.big else [])))
    src = room(args.cache, args.players, max(sizes), args.seed)
    if args.settings:
        settings_cost(cut(src, sizes[0], args.cache), sizes[0])
        return
    if args.dask_phases:
        warm = cut(src, 40, args.cache)
        audit_once(warm, ["--jobs", "1"])  # numba's cache and the OS's file cache, not measured
        if args.against is not None:  # the other checkout's own numba cache too
            audit_once(warm, ["--jobs", "1"], args.against.resolve())
        for n in (args.dask_sizes or sizes[:1]):
            if args.against is not None:
                against_phases(cut(src, n, args.cache), n, args.against.resolve(), args.rounds)
            else:
                show_dask_phases(cut(src, n, args.cache), n, args.dask_pairs)
        return
    if args.phases:
        warm = cut(src, 40, args.cache)
        audit_once(warm, ["--jobs", "1"])  # numba's cache and the OS's file cache, not measured
        for n in sizes:
            log = cut(src, n, args.cache)
            phases(log, store_of(log, args.cache) if args.from_store else None, n, args.policy)
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
          f"{'peak MB':>8} {'workers MB':>10} {'load':>5}")
    rows: dict[tuple[str, int], dict[str, float]] = {}
    dask_only = args.dask_only
    res = Results("audit_scale_dask" if dask_only else "audit_scale_store" if args.from_store else "audit_scale",
                  "Dask: 2 workers against 1" if dask_only else "Audit at volume", "dask" if dask_only else "scale",
                  command_line("benchmarks.bench_audit_scale", argv),
                  parameters={k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items() if k != "cache"},
                  about=f"The first N hands of one simulated room ({args.players} players, seed {args.seed}) audited "
                        f"by `analyzer audit` in a fresh process ({how}): wall and CPU seconds of the command and "
                        "every worker it started, the command's own CPU (client), hands per CPU-second, peak memory "
                        "of the largest process (and of the largest Dask worker).")

    def show(name: str, n: int, r: dict[str, float]) -> None:
        rows[(name, n)] = r
        print(f"{name:<28} {n:>7} {r['wall']:>8.1f} {r['cpu']:>8.1f} {r['client']:>8.1f} {n / r['wall']:>8.1f} "
              f"{n / r['cpu']:>11.1f} "
              f"{r['rss_mb']:>8.0f} {r['workers_mb'] or float('nan'):>10.0f} {r['load']:>5.1f}", flush=True)

    name = f"--jobs {args.jobs}"
    if not args.dask_only:
        ref = [reference_speed(warm)]
        for n in sizes:
            log = cut(src, n, args.cache)
            show(name, n, audit_once(log, extra(log, ["--jobs", str(args.jobs)])))
        ref.append(reference_speed(warm))
        res.figure("machine_reference", statistics.mean(ref), "hands/CPU-s", "machine speed: the decision analysis "
                   "alone in one process (mean of before and after)")
        for n in sizes:
            res.figure(f"hands_cpu_{n}", n / rows[(name, n)]["cpu"], "hands/CPU-s", f"{n:,} hands, {name}",
                       goal=">= 150")
        print(f"machine speed (the decision analysis alone, 1 process, {warm.name}): {ref[0]:.1f} hands per CPU-s "
              f"before these runs, {ref[1]:.1f} after; each size's hands per CPU-s over the mean of the two: "
              + ", ".join(f"{n / rows[(name, n)]['cpu'] / statistics.mean(ref):.3f}" for n in sizes), flush=True)
        if len(sizes) > 1:
            a, b = sizes[0], sizes[1]
            ra, rb = rows[(name, a)], rows[(name, b)]
            res.figure("cpu_ratio", rb["cpu"] / ra["cpu"], "", f"CPU {b:,} hands over {a:,} (linear: x{b / a:.2f})",
                       goal=f"<= {4.6 * b / a / 4:.2f}")
            res.figure("memory_ratio", rb["rss_mb"] / ra["rss_mb"], "", f"peak memory {b:,} hands over {a:,}",
                       goal="<= 1.5")
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
        for n in (args.dask_sizes or sizes[:1]):
            log = cut(src if n <= max(sizes) else room(args.cache, args.players, n, args.seed), n, args.cache)
            speedups = []
            for k in range(max(1, args.dask_pairs)):
                # each pair back to back, the order turned every other pair (1-2, 2-1, ...): the host's drift within
                # a pair (it often speeds up or slows down for minutes) no longer favours the same side every time
                for w in ((1, 2) if k % 2 == 0 else (2, 1)):
                    show(f"--dask local, {w} worker(s)", n,
                         audit_once(log, extra(log, ["--dask", "local", "--jobs", str(w)])))
                one, two = rows[("--dask local, 1 worker(s)", n)], rows[("--dask local, 2 worker(s)", n)]
                dask_split(n, one, two)
                speedups.append(one["wall"] / two["wall"])
            res.figure(f"dask_speedup_{n}", statistics.median(speedups), "x", f"{n:,} hands: wall of 1 worker over 2 "
                       f"(median of {len(speedups)} pairs)", goal=f">= {GOAL}")
            if len(speedups) > 1:
                print(f"{n} hands, 2 workers / 1 worker over {len(speedups)} pairs (orders turned): median x"
                      f"{statistics.median(speedups):.2f}, geometric mean x{statistics.geometric_mean(speedups):.2f} "
                      f"(goal x{GOAL:.1f}; each: {', '.join(f'x{x:.2f}' for x in speedups)})", flush=True)
            print(f"  {describe_machine(warm)}", flush=True)
        if args.against is not None:  # the same run of two checkouts in turn: the load hits both alike
            n = sizes[0]
            log = cut(src, n, args.cache)
            audit_once(warm, ["--jobs", "1"], args.against.resolve())
            for k in range(args.rounds):
                for tree in (args.against.resolve(), ROOT):
                    r = audit_once(log, extra(log, ["--dask", "local", "--jobs", "2"]), tree)
                    print(f"A/B round {k}, {tree}: 2 workers, wall {r['wall']:.1f} s, CPU {r['cpu']:.1f} s, "
                          f"client {r['client']:.1f} s, peak {r['rss_mb']:.0f} MB (largest worker {r['workers_mb']:.0f} MB), "
                          f"load {r['load']:.1f}", flush=True)
    if rows:
        res.table("runs", "Runs", ["run", "hands", "wall s", "CPU s", "client s", "hands/CPU-s", "peak MB", "workers MB",
                                   "load"],
                  [[k[0], k[1], r["wall"], r["cpu"], r["client"], k[1] / r["cpu"], r["rss_mb"], r["workers_mb"],
                    r["load"]] for k, r in rows.items()])
        res.write()


if __name__ == "__main__":
    main()
