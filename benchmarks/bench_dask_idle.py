"""What an idle LocalCluster of 2 workers costs: the CPU of this process (its scheduler and nannies) and of the machine.

Run: ``python benchmarks/bench_dask_idle.py [--seconds 10] [--rounds 2]``

For each round, two clusters in turn, both started by the audit's ``running.dask.dask_client("local", 2)``: one with
distributed's defaults for its periodic checks (the event loop's tick each 20 ms, the system monitor each 500 ms, the
memory monitor each 100 ms; only the workers' profiler off, as ``LOCAL_CONFIG`` has it) and one as the audit starts
it (``running.dask.LOCAL_CONFIG``). Each
runs a few tasks, settles for 2 s, and then idles for ``--seconds``: printed are this process' CPU seconds over that
time (the scheduler, the nannies and the client live here) and the machine's (``/proc/stat``, every process; Linux),
each as a share of one core. On a machine whose cores all work for the audit, what the checks take is taken from the
workers.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _busy_seconds() -> float:
    """CPU seconds the whole machine has spent not idle since boot (``/proc/stat``'s first line)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def _inc(x: int) -> int:
    return x + 1


def measure(client: object, seconds: float) -> tuple[float, float]:
    client.gather(client.map(_inc, range(20), pure=False))  # type: ignore[attr-defined]
    time.sleep(2.0)
    here, machine = time.process_time(), _busy_seconds()
    time.sleep(seconds)
    return (time.process_time() - here) / seconds, (_busy_seconds() - machine) / seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    from analyzer.running import dask as running_dask

    # both clusters started by the audit's own dask_client, the first with only the profiler setting of LOCAL_CONFIG
    settings = (("distributed's defaults", {"distributed.worker.profile.enabled": False}),
                ("running.dask.LOCAL_CONFIG", running_dask.LOCAL_CONFIG))
    for k in range(args.rounds):
        for name, config in settings:
            client = running_dask.dask_client("local", 2, local_config=config)
            try:
                here, machine = measure(client, args.seconds)
            finally:
                running_dask.close_client(client)
            print(f"round {k}, {name + ':':<24} this process {here:.3f} of a core, the machine {machine:.3f}",
                  flush=True)

if __name__ == "__main__":
    main()
