"""The command's Dask connection: started in the background, its LocalCluster's workers importing the audit's modules as
they start, its failures raised where the client is first used, no claim on the dashboard's port 8787."""

from __future__ import annotations

import socket
import sys
import warnings
from pathlib import Path

import pytest

from analyzer.running import dask as running_dask
from analyzer.running.dask import DaskConnection, DaskUnavailable

pytest.importorskip("distributed")


def _imported(name: str) -> bool:
    import sys

    return name in sys.modules


def _profiling(dask_worker: object) -> bool:
    return "profile" in dask_worker.periodic_callbacks  # type: ignore[attr-defined]


def _warmed() -> int:
    from analyzer.audit import warm

    assert warm.over.wait(120)  # its thread is over
    return warm.warmed


def test_a_background_session_starts_workers_with_their_modules_and_leaves_8787_alone() -> None:
    held = socket.socket()
    try:  # another cluster's dashboard on 8787 (when the port is free here): no "Port 8787 is already in use"
        held.bind(("127.0.0.1", 8787))
        held.listen()
    except OSError:
        pass  # taken already: the point stands
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            connection = DaskConnection("local", 2, preload=("analyzer.audit.on_dask", "analyzer.audit.warm"), background=True)
            try:
                assert connection.client.submit(sum, [1, 2]).result() == 3
                assert list(connection.client.run(_imported, "analyzer.audit.on_dask").values()) == [True, True]
                # the warm-up hook ran once on every worker (in a thread started as the worker started)
                assert list(connection.client.run(_warmed).values()) == [1, 1]
                assert list(connection.client.run(_profiling).values()) == [False, False]  # no sampling profiler
                services = connection.client.scheduler_info().get("services", {})
            finally:
                connection.close()
        assert not [w for w in seen if "8787" in str(w.message)]
        assert services.get("dashboard") != 8787
    finally:
        held.close()


def test_a_session_that_fails_to_start_raises_where_the_client_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(address: str, jobs: int, preload: tuple[str, ...] = (), prefork: tuple[str, ...] = ()) -> None:
        raise DaskUnavailable(f"cannot reach the Dask scheduler at {address}: refused")

    monkeypatch.setattr(running_dask, "dask_client", refuse)
    connection = DaskConnection("tcp://127.0.0.1:9", 1, background=True)
    with pytest.raises(DaskUnavailable, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        connection.client  # noqa: B018
    connection.close()  # nothing to close: no error


def test_the_first_batches_are_read_while_the_cluster_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    """While a background start is under way the map reads (validates, cuts) the first tasks, at most READ_AHEAD of
    them; once the client is up it reads no further ahead; the tasks come out whole and in order."""
    import threading

    up = threading.Event()

    class Client:
        def close(self) -> None:
            pass

    def slow(address: str, jobs: int, preload: tuple[str, ...] = (), prefork: tuple[str, ...] = ()) -> Client:
        up.wait(30)
        return Client()

    monkeypatch.setattr(running_dask, "dask_client", slow)
    connection = DaskConnection("local", 1, background=True)
    try:
        early, rest = running_dask._read_ahead(iter(range(100)), connection)
        assert early == list(range(running_dask.READ_AHEAD)) and not connection.ready
        assert list(rest) == list(range(running_dask.READ_AHEAD, 100))
    finally:
        up.set()
        connection.close()

    up.clear()
    connection = DaskConnection("local", 1, background=True)
    pulled: list[int] = []

    def tasks() -> object:
        for i in range(10):
            pulled.append(i)
            if i == 2:  # the cluster comes up while the third task is read
                up.set()
                connection._starting.join()  # type: ignore[union-attr]
            yield i

    try:
        early, rest = running_dask._read_ahead(tasks(), connection)
        assert early == [0, 1, 2] and pulled == [0, 1, 2] and connection.ready
        assert list(rest) == list(range(3, 10))
        assert running_dask._read_ahead(iter(range(5)), connection)[0] == []  # up already: nothing read ahead
    finally:
        connection.close()


_FORKED = """
import json, os, sys
from analyzer.running.dask import DaskConnection

def facts():
    import gc
    from analyzer.running import collector
    from analyzer.audit import warm
    with open(f"/proc/{os.getppid()}/cmdline", "rb") as f:
        parent = f.read().replace(b"\\0", b" ").decode()
    settled = [collector.settled, gc.get_threshold()[0] == collector.YOUNG, gc.get_freeze_count() > 100_000]
    return [os.getppid(), warm.warmed, warm.warmed_by, warm.over.is_set(), settled, parent, faults()]

def faults():  # page faults of making and freeing a 1 MB array 50 times (glibc's malloc as the forkserver started)
    import resource
    import numpy as np
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(50):
        a = np.ones(1 << 17)
        del a
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

def intervals(dask_worker=None, dask_scheduler=None):
    server = dask_worker or dask_scheduler
    return {k: pc.callback_time for k, pc in server.periodic_callbacks.items()
            if k in ("tick", "monitor", "memory_monitor", "profile")}

if __name__ == "__main__":
    connection = DaskConnection("local", 2, preload=("analyzer.audit.on_dask", "analyzer.audit.warm"),
                          prefork=("analyzer.audit.prewarm",), background=True)
    try:
        client = connection.client
        nannies = [intervals(dask_worker=n) for n in client._analyzer_cluster.workers.values()]
        print(json.dumps({"me": os.getpid(), "workers": list(client.run(facts).values()),
                          "intervals": {"scheduler": client.run_on_scheduler(intervals),
                                        "workers": list(client.run(intervals).values()), "nannies": nannies}}))
    finally:
        connection.close()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; forkserver platforms")
def test_a_local_clusters_workers_are_forks_of_one_process_warmed_once(tmp_path: Path) -> None:
    """The LocalCluster's workers are forked from one forkserver (not spawned by the command, each importing
    everything again), which imported the preload and ran the prewarm module once: each worker's caches were made
    in its parent, before the fork, and no worker warmed itself; the collector settled there too
    (analyzer.running.collector). A fresh process: the forkserver is one a process."""
    import json
    import subprocess

    script = tmp_path / "forked.py"
    script.write_text(_FORKED)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    (p1, *first), (p2, *second) = seen["workers"]
    assert p1 == p2 != seen["me"]  # one parent, not the command
    assert "forkserver" in first[-2]
    for warmed, by, over, settled, _, faults in (first, second):
        assert (warmed, by, over) == (1, p1, True)  # warmed once, in the parent, before the fork
        assert settled == [True, True, True]  # and the collector settled there (analyzer.running.collector)
        # glibc's malloc as running_dask.WORKER_MALLOC sets it: the array reuses the heap (with distributed's setting alone,
        # a mapping each time: 256 faults each, 12,800)
        assert faults < 2_000, faults
    # the cluster's periodic checks at running_dask.LOCAL_CONFIG's intervals (ms), in this process and in the forks; no
    # profiler on the workers
    every = seen["intervals"]
    assert every["scheduler"]["tick"] == 1000 and every["scheduler"]["monitor"] == 5000
    assert [n["memory_monitor"] for n in every["nannies"]] == [1000, 1000]
    for w in every["workers"]:
        assert (w["tick"], w["monitor"], w["memory_monitor"]) == (1000, 5000, 1000) and "profile" not in w


def test_the_workers_malloc_settings_yield_to_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The forkserver's environment: distributed's nanny settings (one BLAS thread) and glibc's of
    ``running_dask.WORKER_MALLOC`` over distributed's trim threshold, each a variable set here keeps."""
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_", raising=False)
    env = running_dask._pre_spawn_environ()
    assert (env["MALLOC_MMAP_THRESHOLD_"], env["MALLOC_TRIM_THRESHOLD_"]) == (str(32 << 20), str(64 << 20))
    assert env["OMP_NUM_THREADS"] == "1"
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "131072")
    assert running_dask._pre_spawn_environ()["MALLOC_MMAP_THRESHOLD_"] == "131072"
