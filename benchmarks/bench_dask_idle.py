"""What an idle LocalCluster of 2 workers costs: the CPU of this process (its scheduler and nannies) and of the machine.

Run: ``python benchmarks/bench_dask_idle.py [--seconds 10] [--rounds 2]``

For each round, two clusters in turn: one with distributed's defaults for its periodic checks (the event loop's tick
each 20 ms, the system monitor each 500 ms, the memory monitor each 100 ms; the workers' profiler off, as the audit's
cluster has it) and one as the audit starts it (``execute.dask_client("local", 2)``, ``execute.LOCAL_CONFIG``). Each
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
    import logging

    import dask.config
    from distributed import Client, LocalCluster

    from analyzer.analysis.execute import close_client, dask_client

    for k in range(args.rounds):
        with dask.config.set({"distributed.worker.profile.enabled": False}):
            cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                   silence_logs=logging.ERROR, config=dask.config.merge(dask.config.config))
            client = Client(cluster)
        try:
            here, machine = measure(client, args.seconds)
        finally:
            client.close()
            cluster.close()
        print(f"round {k}, distributed's defaults: this process {here:.3f} of a core, the machine {machine:.3f}",
              flush=True)
        client = dask_client("local", 2)
        try:
            here, machine = measure(client, args.seconds)
        finally:
            close_client(client)
        print(f"round {k}, execute.LOCAL_CONFIG:    this process {here:.3f} of a core, the machine {machine:.3f}",
              flush=True)


if __name__ == "__main__":
    main()
