"""The audit on Dask (a LocalCluster, and a real scheduler with two workers on 127.0.0.1) and on worker
processes gives exactly the single-process result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import QUIET_PORT, run_cli

from analyzer.analysis.execute import Execution
from analyzer.audit.core import run_audit

pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[2]
KW = {"samples": 2, "dd_samples": 1, "seed": 3}
LEGAL = ROOT / "samples" / "legal.jsonl"


@pytest.fixture(scope="module")
def single(sharing_room: Path) -> dict:
    return run_audit([str(sharing_room)], **KW).result


def test_worker_processes_give_the_single_process_audit(sharing_room: Path, single: dict) -> None:
    pooled = run_audit([str(sharing_room)], execution=Execution(jobs=2, batch_hands=7), **KW).result
    assert pooled == single


@pytest.mark.slow
def test_a_local_dask_cluster_gives_the_single_process_audit(sharing_room: Path, single: dict) -> None:
    on_dask = run_audit([str(sharing_room)], execution=Execution(jobs=2, dask="local", batch_hands=7), **KW).result
    assert on_dask == single
    assert single["pairs"] and single["decisions"] > 1000


@pytest.mark.slow
def test_a_real_scheduler_and_two_workers_on_loopback(sharing_room: Path, single: dict, tmp_path: Path) -> None:
    """Starts `dask scheduler` and two `dask worker`s on 127.0.0.1, audits through them, shuts them down."""
    from distributed import Client

    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    sched_file = tmp_path / "scheduler.json"
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    worker = [sys.executable, "-m", "distributed.cli.dask_worker"]
    procs = [subprocess.Popen([*dask, "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                               "--scheduler-file", str(sched_file)], env=env, cwd=tmp_path,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        for _ in range(2):
            procs.append(subprocess.Popen([*worker, "--scheduler-file", str(sched_file), "--host", "127.0.0.1",
                                           "--nthreads", "1", "--no-dashboard", "--no-nanny"], env=env,
                                          cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        with Client(scheduler_file=str(sched_file), timeout="60s") as client:
            client.wait_for_workers(2, timeout=120)
            address = client.scheduler.address
            assert address.startswith("tcp://127.0.0.1:")
            assert all(w.startswith("tcp://127.0.0.1:") for w in client.scheduler_info()["workers"])
        out = tmp_path / "out"
        res = run_cli("audit", str(sharing_room), "--out", str(out), "--dask", address, "--samples", "2",
                                       "--dd-samples", "1", "--seed", "3")
        assert res.exit_code in (0, 1), res.output
        audit = json.loads((out / "audit.json").read_text())
        assert audit["pairs"] == single["pairs"] and audit["players"] == single["players"]
        with Client(address, timeout="30s") as client:
            client.shutdown()  # the scheduler and its workers
        for p in procs:
            p.wait(timeout=60)
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                p.wait(timeout=30)


def test_an_unreachable_scheduler_is_a_clear_error(sharing_room: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing listens at the port: distributed tries until its deadline (the whole bound shortened here) and says it
    timed out; the command says the connection was refused."""
    from analyzer.running import dask as running_dask

    monkeypatch.setattr(running_dask, "CONNECT_TIMEOUT", 2.0)
    res = run_cli("audit", str(sharing_room), "--out", str(tmp_path / "o"), "--dask", "tcp://127.0.0.1:9",
                                   "--samples", "2")
    assert res.exit_code == 2, res.output
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9: nothing listens there (connection refused;" in res.output
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
@pytest.mark.parametrize("after", ["analyse_batch", "bieqi-signals-spread", "bieqi-signals-burst-links"])
def test_a_worker_lost_mid_audit_changes_nothing(sharing_room: Path, single: dict, tmp_path: Path, after: str) -> None:
    """A worker process dies (``os._exit``, as a killed one) right after it finished its first task of ``after``: a
    batch's analysis (its rows and everything made from them on that worker are lost) or a pass of the pair signals
    (the recoded chunks it held are lost, and the pass's arguments would be with them were they not on every worker),
    or of the burst statistic (a part of its actors' links, gathered on one worker from pass E's per-hand pieces, is
    lost: made again from the pieces, or, were those lost too, from pass E's pieces made anew). Dask recomputes the rest from its lineage on the other worker (and the
    one its nanny restarts), and the audit is the single-process one."""
    from distributed import Client, LocalCluster, WorkerPlugin

    marker = str(tmp_path / "died")

    class DieOnce(WorkerPlugin):  # a local class: pickled by value, the workers need not import this module
        def __init__(self, prefix: str, marker: str) -> None:
            self.prefix, self.marker = prefix, marker

        def transition(self, key: object, start: str, finish: str, **kwargs: object) -> None:
            if finish != "memory" or not str(key).strip("('").startswith(self.prefix):
                return
            try:  # exactly one death over the cluster and its restarts
                os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                return
            os._exit(1)

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, scheduler_kwargs=QUIET_PORT) as cluster, \
            Client(cluster) as client:
        client.register_plugin(DieOnce(after, marker))
        result = run_audit([str(sharing_room)], execution=Execution(jobs=2, dask=cluster.scheduler_address,
                                                                    batch_hands=7), **KW).result
    assert os.path.exists(marker), f"no worker died after a task of {after}"
    assert result == single


@pytest.mark.parametrize("command", ["audit", "players", "decisions"])
@pytest.mark.parametrize("address", ["garbage", "tcp://", "tcp://host:0", "tcp://host:70000", "inproc://x",
                                     "tcp://a b:8786"])
def test_a_malformed_scheduler_address_is_a_usage_error(sharing_room: Path, tmp_path: Path, command: str,
                                                        address: str) -> None:
    """Checked as the option is read: exit 2 naming the option, no traceback, nothing written."""
    out = tmp_path / "o"
    res = run_cli(command, str(sharing_room), "--out", str(out), "--dask", address)
    assert res.exit_code == 2, res.output
    assert "Invalid value for '--dask'" in res.output and "Traceback" not in res.output
    assert not out.exists()


@pytest.mark.parametrize("address", ["LOCAL", "local:2", " local", "Local:8786/"])
def test_local_misspelt_is_a_usage_error_that_says_how_to_write_it(tmp_path: Path, address: str) -> None:
    """``local:2`` read as a host named local (it waited for its connection, then said it timed out), ``LOCAL`` as
    any malformed address: both are said with the spelling of a LocalCluster and of its workers' number."""
    out = tmp_path / "o"
    res = run_cli("decisions", str(LEGAL), "--out", str(out), "--dask", address)
    assert res.exit_code == 2, res.output
    assert "expected 'local' (a LocalCluster on this machine; its workers: --jobs N)" in res.output, res.output
    assert "tcp://local:PORT" in res.output and not out.exists()


def test_well_formed_scheduler_addresses_pass_the_option_check() -> None:
    import click

    from analyzer.commands.common import _dask_address

    for a in ("local", "tcp://local:8786", "tcp://10.0.0.5:8786", "tls://sched.example.org:8786", "tcp://[::1]:8786", "127.0.0.1:8786",
              "ws://h-1.x:1/"):
        assert _dask_address(click.Context(click.Command("x")), None, a) == a  # type: ignore[arg-type]


def test_work_the_cluster_lost_for_good_is_a_clear_error(sharing_room: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """When Dask cannot compute something again (every worker holding it gone), the audit says so in one line, exit 2,
    and writes nothing."""
    from distributed.client import FutureCancelledError

    import analyzer.audit.core as core

    def lost(*a: object, **k: object) -> None:
        raise FutureCancelledError("bieqi-signals-spread-x-1", reason="already forgotten")

    monkeypatch.setattr(core, "run_audit", lost)
    out = tmp_path / "o"
    res = run_cli("audit", str(sharing_room), "--out", str(out), "--samples", "1")
    assert res.exit_code == 2 and "the Dask cluster lost work it could not compute again" in res.output, res.output
    assert not out.exists()


class _Cluster:
    """A client's view of a cluster of ``workers`` workers (``task_groups`` asks it nothing else)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers

    def scheduler_info(self) -> dict:
        return {"workers": {f"tcp://127.0.0.1:{9000 + k}": {} for k in range(self.workers)}}


@pytest.mark.parametrize("items,workers", [(64, 2), (5, 2), (9, 2), (1, 3), (0, 2), (100, 0), (37, 5)])
def test_task_groups_cut_the_players_evenly_in_order(items: int, workers: int) -> None:
    """The players of a step cut into GROUPS_PER_WORKER groups a worker (one without a worker), consecutive, in
    order, each player once, sizes within one of each other, none empty."""
    from analyzer.running.dask import GROUPS_PER_WORKER, task_groups

    names = [f"p{k:03d}" for k in range(items)]
    groups = task_groups(_Cluster(workers), names)
    assert [p for g in groups for p in g] == names
    assert all(groups) or not names
    assert len(groups) == max(1, min(items, GROUPS_PER_WORKER * max(1, workers))) or not names
    sizes = {len(g) for g in groups}
    assert max(sizes, default=0) - min(sizes, default=0) <= 1
    finer = task_groups(_Cluster(workers), names, per_worker=3 * GROUPS_PER_WORKER)
    assert [p for g in finer for p in g] == names and len(finer) == min(max(items, 1), 3 * len(groups)) or not names
