"""Where the wall time of ``analyzer audit --dask local`` goes: the spans around the pair signals, with the tasks' own.

Run: ``python benchmarks/dask_timeline.py LOG --jobs N [--out DIR] [--json OUT.json]`` (from the checkout to measure,
``PYTHONPATH`` set to it), e.g. on ``/tmp/bench_audit_scale/first-4000-of-room-64p-seed3-16000.jsonl`` (made by
``bench_audit_scale.py``). It runs the command in this process with marks set by wrapping the audit's steps (wall s
since the start, the client's CPU s), and reads the LocalCluster scheduler's task stream and each worker's CPU before
the cluster closes. Prints each span's wall and client CPU, when the first batch started, the longest player-table
task, the workers' CPU, how long each worker waited, and the floor the run's CPU puts on its wall on this machine's
cores (``floor_of_wall``), and what the command's process received from the network (MB, by the task whose results
it gathered, or by message kind); ``--json`` keeps the marks and the tasks (key, worker, start, stop, bytes of the
result). The machine's load is printed too: walls of runs
at different loads do not compare (run trees in turn, and more than once).
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
from collections import Counter
from typing import Any

SPANS = (("start: imports, until the map starts", "imports", "map start"),
         ("until the first batch's result", "map start", "first result"),
         ("the rest of the analysis", "first result", "map done"),
         ("DaskSignals._prepare", "prepare start", "prepare done"),
         ("the signal passes", "prepare done", "table start"),
         ("burst (its tasks)", "burst start", "burst done"),
         ("calibrate -> the player table's join", "calibrate done", "ptjoin start"),
         ("the join -> run_audit's end", "ptjoin start", "run_audit done"),
         ("report", "report start", "report done"),
         ("total", "begin", "end"))


def main() -> None:
    args = sys.argv[1:]
    dump = None
    if "--json" in args:
        i = args.index("--json")
        dump = args[i + 1]
        del args[i:i + 2]
    if "--out" not in args:
        args += ["--out", tempfile.mkdtemp(prefix="dask-timeline-")]
    t0 = time.monotonic()
    marks: list[tuple[str, float, float]] = []
    tasks: list[tuple[str, str, float, float, int]] = []
    cpu: dict[str, float] = {}
    epoch = time.time() - (time.monotonic() - t0)

    def mark(name: str) -> None:
        marks.append((name, round(time.monotonic() - t0, 3), round(time.process_time(), 3)))

    mark("begin")
    from analyzer.analysis import execute
    from analyzer.audit import core, on_dask, stream
    from analyzer.cli import cli
    from analyzer.report import audit as report

    mark("imports")

    def span(name: str, fn: Any) -> Any:
        def run(*a: Any, **k: Any) -> Any:
            mark(name + " start")
            try:
                return fn(*a, **k)
            finally:
                mark(name + " done")
        return run

    core.run_audit = span("run_audit", core.run_audit)
    core.calibrate = span("calibrate", core.calibrate)
    core.PlayerTasks.join = span("ptjoin", core.PlayerTasks.join)  # type: ignore[method-assign]
    report.write_audit_report = span("report", report.write_audit_report)
    on_dask.DaskSignals._prepare = span("prepare", on_dask.DaskSignals._prepare)  # type: ignore[method-assign]
    stream.StreamedSignals._table = span("table", stream.StreamedSignals._table)  # type: ignore[method-assign]
    on_dask.DaskSignals._burst = span("burst", on_dask.DaskSignals._burst)  # type: ignore[method-assign]
    connection_map, dask_client, close_client = execute._connection_map, execute.dask_client, execute.close_client
    received = _count_received()
    streams: list[Any] = []

    def timed_map(*a: Any, **k: Any) -> Any:
        mark("map start")
        first = True
        for r in connection_map(*a, **k):
            if first:
                mark("first result")
                first = False
            yield r
        mark("map done")

    def client_with_stream(*a: Any, **k: Any) -> Any:
        client = dask_client(*a, **k)
        cluster = getattr(client, "_analyzer_cluster", None)
        if cluster is not None:
            from distributed.diagnostics.task_stream import TaskStreamPlugin

            plugin = TaskStreamPlugin(cluster.scheduler)
            cluster.scheduler.add_plugin(plugin)
            streams.append(plugin)
        return client

    def close_reading(client: Any) -> None:
        cpu.update(client.run(time.process_time))
        for plugin in streams:
            for r in plugin.buffer:
                for ss in r.get("startstops", []):
                    if ss["action"] == "compute":
                        tasks.append((str(r["key"]), r["worker"], round(ss["start"] - epoch, 3),
                                      round(ss["stop"] - epoch, 3), int(r.get("nbytes") or 0)))
        close_client(client)

    execute._connection_map, execute.dask_client, execute.close_client = timed_map, client_with_stream, close_reading
    sys.argv = ["analyzer", "audit", *args]
    try:
        cli(standalone_mode=False)
    except SystemExit:
        pass
    mark("end")
    report_marks(marks, tasks, cpu)
    report_received(received)
    if dump:
        with open(dump, "w") as f:
            json.dump({"marks": marks, "tasks": tasks, "workers_cpu": cpu}, f)


def report_marks(marks: list[tuple[str, float, float]], tasks: list[tuple[str, str, float, float, int]],
                 cpu: dict[str, float]) -> None:
    first = {n: (w, c) for n, w, c in reversed(marks)}  # each mark's first time
    last = {n: (w, c) for n, w, c in marks}
    print(f"load {os.getloadavg()[0]:.2f}")
    print(f"{'span':42} {'wall s':>8} {'client CPU s':>13}")
    for name, a, b in SPANS:
        if a in first and b in last:
            (wa, ca), (wb, cb) = first[a], last[b]
            print(f"{name:42} {wb - wa:8.2f} {cb - ca:13.2f}")
    batches = sorted(t for t in tasks if t[0].startswith("analyse_batch"))
    if batches:
        print(f"first batch started at {min(t[2] for t in batches):.2f} s")
    players = [t[3] - t[2] for t in tasks if t[0].startswith("bieqi-players-")]
    if players:
        print(f"player-table tasks: {len(players)}, longest {max(players):.2f} s, sum {sum(players):.2f} s")
    if cpu:
        print(f"workers' CPU s: {sum(cpu.values()):.1f} ({', '.join(f'{v:.1f}' for v in cpu.values())})")
    if batches and "end" in last and "first result" in first:
        floor_of_wall(min(t[2] for t in batches), last["end"][0], last["end"][1] - first["first result"][1],
                      list(cpu.values()), tasks)


def _label(msg: Any) -> str:
    """What a message received is: the prefix of the first key whose data it carries (a gather's answer, a
    scatter), else its ``op``."""
    for m in msg if isinstance(msg, list) else [msg]:
        if isinstance(m, dict):
            data = m.get("data")
            if isinstance(data, dict) and data:
                return re.sub(r"-[0-9a-f]{8}-[0-9a-f-]+$|-[0-9a-f]{12}(-\d+)?$", "", str(next(iter(data))))
            return str(m.get("op") or m.get("status") or "other")
    return "other"


def _count_received() -> Counter[str]:
    """Bytes of every message this process decodes from the network (``distributed.protocol.loads``: what its client
    gathers, what its scheduler hears), by :func:`_label`; ``"@n:"`` keys count the messages."""
    from distributed import protocol
    from distributed.protocol import core as protocol_core

    got: Counter[str] = Counter()
    loads = protocol_core.loads

    def counted(frames: Any, *a: Any, **k: Any) -> Any:
        msg = loads(frames, *a, **k)
        label = _label(msg)
        got[label] += sum(memoryview(f).nbytes for f in frames)
        got["@n:" + label] += 1
        return msg

    protocol_core.loads = protocol.loads = counted
    return got


def report_received(got: Counter[str], top: int = 8) -> None:
    sizes = {k: v for k, v in got.items() if not k.startswith("@n:")}
    print(f"the client's process received {sum(sizes.values()) / 1e6:.1f} MB in {sum(got[f'@n:{k}'] for k in sizes)} "
          f"messages; the largest kinds:")
    for k, v in sorted(sizes.items(), key=lambda kv: -kv[1])[:top]:
        print(f"  {k:40} {v / 1e6:8.2f} MB in {got['@n:' + k]} messages")


def floor_of_wall(start: float, end: float, client_cpu: float, workers_cpu: list[float],
                  tasks: list[tuple[str, str, float, float, int]]) -> None:
    """Where the workers waited, and the least wall time the run's CPU allows on this machine's cores: nothing runs
    on the workers before the first batch starts, and after it the workers' CPU and the client's own (its analysis of
    the results, the scheduler in its event loop) share the cores, and no worker is faster than its own CPU. A 2-worker
    run cannot beat a 1-worker run by more than the 1-worker wall over this floor (the machine's own 2-process ratio
    lowers it further)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    for w in sorted({t[1] for t in tasks}):
        busy = sum(t[3] - t[2] for t in tasks if t[1] == w)
        print(f"worker {w}: in tasks {busy:.1f} s of the {end - start:.1f} s after the first batch started "
              f"(waiting {end - start - busy:.1f} s), and {start:.1f} s before it")
    shared = (sum(workers_cpu) + client_cpu) / cores
    floor = start + max(shared, max(workers_cpu, default=0.0))
    print(f"floor of this run's wall on {cores} cores: the first batch's start {start:.1f} s + the larger of (workers' "
          f"CPU {sum(workers_cpu):.1f} s + the client's CPU from its first result on {client_cpu:.1f} s) / {cores} = "
          f"{shared:.1f} s and the busiest worker's CPU {max(workers_cpu, default=0.0):.1f} s: {floor:.1f} s")


if __name__ == "__main__":
    main()
