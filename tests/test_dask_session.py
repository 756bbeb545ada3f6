"""The command's Dask session: started in the background, its LocalCluster's workers importing the audit's modules as
they start, its failures raised where the client is first used, no claim on the dashboard's port 8787."""

from __future__ import annotations

import socket
import warnings

import pytest

from analyzer.analysis import execute
from analyzer.analysis.execute import DaskSession, DaskUnavailable

pytest.importorskip("distributed")


def _imported(name: str) -> bool:
    import sys

    return name in sys.modules


def _profiling(dask_worker: object) -> bool:
    return "profile" in dask_worker.periodic_callbacks  # type: ignore[attr-defined]


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
            session = DaskSession("local", 1, preload=("analyzer.audit.on_dask",), background=True)
            try:
                assert session.client.submit(sum, [1, 2]).result() == 3
                assert list(session.client.run(_imported, "analyzer.audit.on_dask").values()) == [True]
                assert list(session.client.run(_profiling).values()) == [False]  # no sampling profiler
                services = session.client.scheduler_info().get("services", {})
            finally:
                session.close()
        assert not [w for w in seen if "8787" in str(w.message)]
        assert services.get("dashboard") != 8787
    finally:
        held.close()


def test_a_session_that_fails_to_start_raises_where_the_client_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(address: str, jobs: int, preload: tuple[str, ...] = ()) -> None:
        raise DaskUnavailable(f"cannot reach the Dask scheduler at {address}: refused")

    monkeypatch.setattr(execute, "dask_client", refuse)
    session = DaskSession("tcp://127.0.0.1:9", 1, background=True)
    with pytest.raises(DaskUnavailable, match="cannot reach the Dask scheduler at tcp://127.0.0.1:9"):
        session.client  # noqa: B018
    session.close()  # nothing to close: no error
