"""Where the audit's memory goes: the command's own path (``analyzer audit --decisions STORE``, slim rows,
the report from the players' spill) in this process, with the resident memory sampled every 10 ms and its
peak and CPU time per phase.

Run: ``python -m benchmarks.bench_audit_memory --sizes 4000 16000`` (writes results/audit_memory.json; after
``bench_audit_scale --sizes 4000 16000 --from-store``, whose cached logs and stores it reuses: the first N hands of the simulated
64-player room, seed 3, and their decision stores written at cheap settings; ``--sizes 64000`` uses the
64,000-hand room's). Each size runs in a fresh process. Phases: ``rows`` (the store read part by part and fed
to the pair signals and the players' spill), ``pair signals`` (the streamed passes, up to the pair table),
``evidence`` (the cases' candidates read back from the spill), ``player table`` (each player's rows in
turn), ``shown rows and reasons``, ``report`` (``report.html`` from the spill: the top pairs' hands, the
room's figure columns, each player's section).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(tempfile.gettempdir()) / "bench_audit_scale"


def _paths(cache: Path, hands: int) -> tuple[Path, Path]:
    """The cached log of the first ``hands`` hands and its store (``bench_audit_scale.py --from-store``)."""
    for log in sorted(cache.glob(f"first-{hands}-of-room-64p-seed3-*.jsonl")):
        store = cache / f"store-{log.stem}"
        if store.exists():
            return log, store
    raise SystemExit(f"no cached log and store of {hands} hands in {cache}: run "
                     f"benchmarks/bench_audit_scale.py --sizes {hands} --from-store first")


def measure(hands: int, cache: Path) -> None:
    """One audit in this process; prints the peak resident memory and CPU of each phase."""
    sys.path.insert(0, str(ROOT))
    import analyzer.audit.core as core
    from analyzer.analysis.store import open_store
    from analyzer.audit.rows import AuditRows
    from analyzer.report.audit import write_audit_report
    from analyzer.validate import generate_valid

    log, store = _paths(cache, hands)
    peaks: dict[str, float] = {}
    cpu: dict[str, float] = {}
    phase = ["imports"]
    mark = [time.process_time()]

    def rss_mb() -> float:
        with open("/proc/self/statm") as f:  # Linux: resident pages
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20

    def watch() -> None:
        while True:
            peaks[phase[0]] = max(peaks.get(phase[0], 0.0), rss_mb())
            time.sleep(0.01)

    def enter(name: str) -> None:
        now = time.process_time()
        cpu[phase[0]] = cpu.get(phase[0], 0.0) + now - mark[0]
        peaks[phase[0]] = max(peaks.get(phase[0], 0.0), rss_mb())
        mark[0] = now
        phase[0] = name

    threading.Thread(target=watch, daemon=True).start()
    time.sleep(0.05)
    # phase marks on the command's own functions (wrapped, not changed)
    drop, table = AuditRows.drop_signals, core.player_table

    def dropped(self: AuditRows) -> None:
        drop(self)
        if phase[0] == "pair signals":
            enter("evidence")

    def tabled(*a, **k):  # type: ignore[no-untyped-def]
        enter("player table")
        out = table(*a, **k)
        enter("shown rows and reasons")
        return out

    AuditRows.drop_signals = dropped  # type: ignore[method-assign]
    core.player_table = tabled
    enter("rows")
    st = open_store(store)
    result = core.run_audit([str(log)], store=st, settings=st.settings, slim=True,
                            on_phase=lambda _: enter("pair signals"))
    enter("report")
    spill = result._spill.players if result._spill is not None else None  # the temporary files' size
    parts = {e[:2] for entries in spill.files.values() for e in entries} if spill else set()  # (rows, texts) files
    numbers = sum(p.stat().st_size for p in {r for r, _ in parts})
    texts = sum(p.stat().st_size for p in {t for _, t in parts})
    with tempfile.TemporaryDirectory() as out, result:
        write_audit_report(out, result.result, decisions=result.report_rows, players=result.players,
                           records=generate_valid([str(log)]))
    enter("end")
    n, d = result.result["hands"], result.result["decisions"]
    print(f"{n} hands, {d} decisions, load {os.getloadavg()[0]:.1f}; players' spill on disk "
          f"{(numbers + texts) / d:.0f} bytes a decision (numbers {numbers / d:.0f}, texts {texts / d:.0f})")
    for name in peaks:
        if name != "end":
            print(f"  {name:<24} peak {peaks[name]:7.0f} MB  CPU {cpu.get(name, 0.0):6.1f} s")
    print("RESULT " + json.dumps({"hands": n, "decisions": d, "spill_bytes_a_decision": (numbers + texts) / d,
                                  "phases": [[k, peaks[k], cpu.get(k, 0.0)] for k in peaks if k != "end"]}), flush=True)


def main(argv: list[str] | None = None) -> None:
    from benchmarks.results import Results, command_line

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[4000, 16000])
    ap.add_argument("--cache", type=Path, default=CACHE)
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a size, in this process
    args = ap.parse_args(argv)
    if args.one:
        measure(args.one, args.cache)
        return
    res = Results("audit_memory", "Audit memory by phase", "audit-memory", command_line("benchmarks.bench_audit_memory",
                  argv), parameters={"sizes": args.sizes},
                  about="`analyzer audit --decisions STORE`'s own path in a fresh process a size, its resident memory "
                        "sampled every 10 ms: the peak and CPU seconds of each phase, and the players' spill on disk.")
    rows = []
    for n in args.sizes:  # a fresh process each: the peak is that size's alone
        done = subprocess.run([sys.executable, "-m", "benchmarks.bench_audit_memory", "--one", str(n), "--cache",
                               str(args.cache)], capture_output=True, text=True, cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")})
        print(done.stdout, end="", flush=True)
        if done.returncode != 0:
            raise SystemExit(f"bench_audit_memory --one {n} failed:\n{done.stderr[-3000:]}")
        got = json.loads(done.stdout.split("RESULT ", 1)[1])
        rows += [[n, phase, peak, secs] for phase, peak, secs in got["phases"]]
        res.figure(f"spill_{n}", got["spill_bytes_a_decision"], "bytes a decision", f"players' spill on disk, {n:,} hands")
    res.table("phases", "Peak memory and CPU by phase", ["hands", "phase", "peak MB", "CPU s"], rows)
    res.write()


if __name__ == "__main__":
    main()
