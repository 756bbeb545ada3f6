"""A Dask worker lost late in the command's audit (after the player table's tasks: during the burst statistic or the
cases' evidence) costs time, not the result, while another worker is alive: the work
is computed again (the values the client scattered are scattered anew when the cluster lost them) and the audit is
the ``--jobs 1`` one. It once ended with exit 2 ("the Dask cluster lost work it could not compute again ...
already forgotten / lost dependencies")."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import QUIET_PORT, clean_exit, run_cli

distributed = pytest.importorskip("distributed")

FAST = ("--samples", "2", "--dd-samples", "1", "--seed", "3")


@pytest.fixture()
def cluster() -> Iterator[Any]:
    """A LocalCluster of two single-threaded worker processes, each under a nanny that restarts it when it dies; one a
    case (a module's cluster waited for the worker an earlier case ended, and under a full suite's load a nanny once
    gave up restarting it: "Only 1/2 workers arrived after 120")."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, scheduler_kwargs=QUIET_PORT,
                                  silence_logs=logging.CRITICAL) as cl:
        yield cl


@pytest.fixture(scope="module")
def single(sharing_room: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("single") / "out"
    r = run_cli("audit", str(sharing_room), "-o", str(out), "--jobs", "1", *FAST)
    clean_exit(r, 1)  # the room's sharing pair is flagged
    return out


def _die_once(prefix: str, marker: str) -> Any:
    """A worker plugin that ends its worker (``os._exit``, as a killed process) right after the first task whose key
    starts with ``prefix`` finished, once over the cluster and its restarts (``marker``: made by the one that dies).
    A class made here: pickled by value, the workers need not import this module."""

    class DieOnce(distributed.WorkerPlugin):
        name = f"die-once-{prefix}"

        def __init__(self) -> None:
            self.prefix, self.marker = prefix, marker

        def transition(self, key: object, start: str, finish: str, **kwargs: object) -> None:
            if finish != "memory" or not str(key).strip("('").startswith(self.prefix):
                return
            try:
                os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                return
            os._exit(1)

    return DieOnce()


@contextmanager
def _one_worker_dies(cluster: Any, after: str, marker: str) -> Iterator[None]:
    """The body run with :func:`_die_once` on ``cluster`` (both workers there first); a worker must have died in it."""
    plugin = _die_once(after, marker)
    with distributed.Client(cluster.scheduler_address, timeout="60s") as client:
        client.wait_for_workers(2, timeout=120)
        client.register_plugin(plugin)
        try:
            yield
            assert os.path.exists(marker), f"no worker died after a task of {after}"
        finally:
            client.unregister_worker_plugin(plugin.name)


@pytest.mark.slow
@pytest.mark.parametrize("after", ["bieqi-signals-burst", "_evidence_task", "bieqi-report"])
def test_a_worker_lost_late_in_the_audit_changes_nothing(sharing_room: Path, single: Path, cluster: Any,
                                                         tmp_path: Path, after: str) -> None:
    """The command's audit (its rows written to the spill by the workers, the player table, the evidence and the rows
    shown read there) with a worker dying right after its first task of ``after``: the burst statistic (the first of
    pass E's pieces it reads, which stay on the workers: made again) or a case's
    evidence (the player table's tasks are done by then: their results on that worker must be computed again, from
    the spill's view and the seating the client scattered), or one of the report's pieces (started ahead while the
    rows shown are read: gathered by the page, read anew when a worker went with some). The same audit.json, pairs.csv and players.csv as with
    ``--jobs 1``, and a report."""
    out = tmp_path / "out"
    with _one_worker_dies(cluster, after, str(tmp_path / "died")):
        r = run_cli("audit", str(sharing_room), "-o", str(out), "--dask", cluster.scheduler_address, *FAST)
    clean_exit(r, 1)
    assert (out / "report.html").stat().st_size > 0  # the report's per-player reads are tasks too, retried alike
    assert json.loads((out / "audit.json").read_text()) == json.loads((single / "audit.json").read_text())
    for name in ("pairs.csv", "players.csv"):  # the pair table's sums: a tree on Dask, a loop here (float rounding)
        pd.testing.assert_frame_equal(pd.read_csv(out / name), pd.read_csv(single / name), rtol=1e-9)


@pytest.fixture(scope="module")
def whole() -> dict[str, pd.DataFrame]:
    """The pair table of the grouped passes' run that lost no worker, made by the first case that needs it."""
    return {}


@pytest.mark.slow
@pytest.mark.parametrize("after", ["bieqi-signals-means", "bieqi-signals-pairs-sums", "bieqi-signals-burst-links"])
def test_a_worker_lost_in_a_pass_over_groups_of_chunks_changes_nothing(cluster: Any, tmp_path: Path, whole: dict,
                                                                       after: str) -> None:
    """The pair signals' passes as a task a group of chunk files (``on_dask._apply_group``, ``_kept_pieces``) with a
    worker dying right after its first task of ``after``: a pass of the first fit, pass E's sums of the last (its
    group's burst pieces went with the worker and are made again) or the burst statistic reading them. The same pair
    table, to the last bit, as the run that lost no worker."""
    from audit_synth import synthetic_room

    from analyzer.analysis.execute import Execution, dask_connection
    from analyzer.audit.on_dask import FANIN, DaskSignals
    from analyzer.audit.stream import hand_chunks

    df = synthetic_room(players=30, hands=100, colluders=(("p00", "p01"),), habits={"p05": 1.5}, decisions=6,
                        favour=2.0, share=0.4, seed=11)
    seating = df.drop_duplicates("hand_id")[["hand_id", "p0", "p1", "p2", "p3"]]

    def table(name: str) -> tuple[pd.DataFrame, int]:
        execution = dask_connection(Execution(dask=cluster.scheduler_address))
        assert execution.connection is not None
        try:
            with DaskSignals(execution.connection, chunk_hands=48) as acc:
                folder = tmp_path / name
                folder.mkdir()
                acc._spill = (str(folder), ())  # as write_spill sets it when every worker sees the folder
                for part in hand_chunks(df, 100):
                    acc.feed(part)
                got = acc.result(seating)
                return got, sum(n == "means" for n, _ in acc.tasks)
        finally:
            execution.connection.close()

    if not whole:  # the run that lost none: once a module (a process), whichever case comes first
        whole["table"], means = table("whole")
        assert means == 2 * -(-15 // FANIN)  # 15 chunks: two fits of a task a group
    want = whole["table"]
    with _one_worker_dies(cluster, after, str(tmp_path / "died")):
        got, _ = table("lost")
    pd.testing.assert_frame_equal(got, want, check_exact=True)
