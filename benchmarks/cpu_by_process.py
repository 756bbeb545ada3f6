"""CPU time of every process a command starts: the command itself, a LocalCluster's forkserver and its workers.

Run: ``python benchmarks/cpu_by_process.py analyzer audit LOG --out DIR --dask local --jobs 2`` (any command line).
Polls ``/proc`` every 50 ms while the command runs (Linux only) and prints the wall time, then each process of the
command's tree: pid, parent, its CPU s (user + system, the last value seen: a process that exits between two polls
loses at most 50 ms), when it was first seen (s after the start) and its command line. ``bench_audit_scale.py``
splits a run's CPU into the command's own and the rest; this says what the rest is.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time


def _table() -> dict[int, tuple[int, float, str]]:
    """Every process: pid -> (parent, CPU s, command line)."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:  # gone meanwhile
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        out[int(name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / tick, cmd)
    return out


def main() -> None:
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    t0 = time.monotonic()
    proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen: dict[int, tuple[int, float, float, str]] = {}
    while proc.poll() is None:
        table = _table()
        tree = {proc.pid}
        grew = True
        while grew:
            more = {pid for pid, (parent, _, _) in table.items() if parent in tree} - tree
            grew = bool(more)
            tree |= more
        now = time.monotonic() - t0
        for pid in tree & table.keys():
            parent, cpu, cmd = table[pid]
            first = seen[pid][2] if pid in seen else now
            cmd = cmd or (seen[pid][3] if pid in seen else "")  # (empty between the fork and the exec, and as it exits)
            seen[pid] = (parent, max(cpu, seen[pid][1] if pid in seen else 0.0), first, cmd)
        time.sleep(0.05)
    print(f"wall {time.monotonic() - t0:.2f} s, exit {proc.returncode}")
    print(f"{'pid':>7} {'parent':>7} {'CPU s':>7} {'from s':>7}  command")
    for pid, (parent, cpu, first, cmd) in sorted(seen.items(), key=lambda x: x[1][2]):
        print(f"{pid:>7} {parent:>7} {cpu:>7.2f} {first:>7.2f}  {cmd[:100]}")


if __name__ == "__main__":
    main()
