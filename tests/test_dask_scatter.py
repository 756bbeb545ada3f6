"""A value scattered to every worker while a worker leaves the cluster: distributed's scheduler takes its list of
workers before it sends, and the broadcast's ``replicate`` then fails the whole scatter with a ``KeyError`` of the
gone worker's address. The audit once ended on that error (a worker lost during the report's reads, in
``tests/test_dask_lost_late.py``'s case): ``analysis.execute.broadcast`` scatters again to the workers left."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from analyzer.analysis.execute import LOST_TRIES, broadcast

distributed = pytest.importorskip("distributed")


def _leaving(monkeypatch: pytest.MonkeyPatch, client: Any, times: int) -> list[str]:
    """The scheduler's ``scatter_to_workers`` made to remove one of the workers it sent to, right after it sent, on
    its first ``times`` calls (the cluster runs in this process); the addresses removed."""
    import distributed.scheduler as sched

    sent = sched.scatter_to_workers
    gone: list[str] = []

    async def and_one_leaves(workers: Any, data: Any, rpc: Any, *a: Any, **k: Any) -> Any:
        out = await sent(workers, data, rpc, *a, **k)
        if len(gone) < times:
            scheduler = client.cluster.scheduler
            addr = sorted(workers)[0]
            gone.append(addr)
            await scheduler.remove_worker(addr, stimulus_id="test-leaves", close=True)
        return out

    monkeypatch.setattr(sched, "scatter_to_workers", and_one_leaves)
    return gone


@pytest.fixture()
def cluster() -> Any:
    with distributed.LocalCluster(n_workers=3, threads_per_worker=1, processes=False, dashboard_address=None,
                                  silence_logs=logging.CRITICAL) as cl, distributed.Client(cl) as client:
        yield client


def test_a_worker_leaving_during_the_scatter_fails_distributeds_own_scatter(cluster: Any,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The failure the helper is for (if distributed mends it, this test says so)."""
    _leaving(monkeypatch, cluster, 1)
    with pytest.raises(KeyError):
        cluster.scatter([41], broadcast=True, hash=False)


def test_a_worker_leaving_during_a_broadcast_is_scattered_again_to_those_left(cluster: Any,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    gone = _leaving(monkeypatch, cluster, LOST_TRIES - 1)
    value = {"room": [1, 2, 3]}  # one value, whatever its type (a dict is not scattered key by key)
    fut = broadcast(cluster, value)
    assert len(gone) == LOST_TRIES - 1
    assert fut.result() == value
    # on every worker left, none that left
    held = cluster.who_has([fut])[fut.key]
    assert set(held) == set(cluster.scheduler_info()["workers"]) and not set(held) & set(gone)
    assert cluster.submit(lambda v: v["room"][2], fut).result() == 3


def test_a_broadcast_gives_up_after_its_attempts(cluster: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _leaving(monkeypatch, cluster, LOST_TRIES)
    with pytest.raises(KeyError):
        broadcast(cluster, 7)
