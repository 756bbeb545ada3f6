"""`--dask ADDRESS` when the address is not a working scheduler: a listener that stays silent or answers something
else (a web server's HTTP 400), a tls:// address without Dask's TLS settings, a scheduler without workers, and the
scheduler lost during the run. Each is exit 2 with one line, in bounded time; never a hang, "out of memory" or an
internal error (exit 3)."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import clean_exit, run_cli

from analyzer.running import dask as running_dask
from analyzer.running.dask import DaskUnavailable

pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[2]
LEGAL = ROOT / "samples" / "legal.jsonl"
FAST = ["--samples", "1", "--max-samples", "1", "--dd-samples", "0"]
AUDIT_FAST = ["--samples", "1", "--dd-samples", "0"]  # the audit has no --max-samples


def _bounded(*args: str, limit: float = 180.0) -> tuple[Any, float]:
    """The command line in this process (``run_cli``), in a thread: its result and its wall time; fails, instead of
    hanging the test run, when it is still going after ``limit`` seconds (the code before waited for ever)."""
    done: list[Any] = []
    start = time.monotonic()
    runner = threading.Thread(target=lambda: done.append(run_cli(*args)), daemon=True)
    runner.start()
    runner.join(limit)
    assert done, f"still running after {limit:g} s: {args}"
    return done[0], time.monotonic() - start


class _Listener:
    """A TCP listener on 127.0.0.1 that is no Dask scheduler: it accepts and says nothing (``answer`` None) or
    answers ``answer`` and says nothing more; the connections stay open until :meth:`close`."""

    def __init__(self, answer: bytes | None) -> None:
        self.answer = answer
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.address = f"127.0.0.1:{self.sock.getsockname()[1]}"
        self.conns: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:  # closed: the test is over
                return
            self.conns.append(conn)
            if self.answer is not None:
                try:
                    conn.sendall(self.answer)
                except OSError:
                    pass

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accept (closing alone does not, on Linux)
        except OSError:
            pass
        self.sock.close()
        for c in self.conns:
            c.close()
        self.thread.join(10)


@pytest.fixture()
def silent() -> Iterator[_Listener]:
    listener = _Listener(None)
    yield listener
    listener.close()


@pytest.fixture()
def garbage() -> Iterator[_Listener]:
    listener = _Listener(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    yield listener
    listener.close()


def _nothing_written(out: Path) -> None:
    assert not out.exists()
    assert not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}")]  # no hidden temporary folder


# --------------------------------------------------------------------------- not a Dask scheduler (item 6)

def test_a_silent_listener_is_exit_2_within_the_connect_bound(silent: _Listener, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(running_dask, "CONNECT_TIMEOUT", 3.0)  # the bound shortened (10 s: the constants' test below)
    out = tmp_path / "store"
    r, took = _bounded("decisions", str(LEGAL), "-o", str(out), *FAST, "--dask", f"tcp://{silent.address}")
    clean_exit(r, 2)
    assert f"cannot reach the Dask scheduler at tcp://{silent.address}: no answer within 3 s" in r.output
    assert took < 23, took  # CONNECT_TIMEOUT and the command's own work
    _nothing_written(out)


@pytest.mark.parametrize("scheme", ["tcp://", ""])
def test_a_listener_answering_http_is_not_a_scheduler_not_out_of_memory(garbage: _Listener, tmp_path: Path,
                                                                        scheme: str) -> None:
    out = tmp_path / "store"
    r, took = _bounded("decisions", str(LEGAL), "-o", str(out), *FAST, "--dask", f"{scheme}{garbage.address}")
    clean_exit(r, 2)
    assert f"cannot reach the Dask scheduler at {scheme}{garbage.address}: not a Dask scheduler" in r.output
    assert "out of memory" not in r.output
    assert len(r.output.strip().splitlines()) == 1, r.output
    assert took < 30, took
    _nothing_written(out)


@pytest.mark.parametrize(("answer", "said"), [({"type": "Worker", "id": "w"}, "a Dask worker answered"),
                                               ([1, 2], "something else answered")])
def test_a_peer_that_is_not_a_scheduler_is_said(answer: Any, said: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe's ``identity`` call answered by a Dask worker (its port given for the scheduler's), or by something
    that speaks Dask's protocol but is no server of it."""
    import distributed.comm

    class Comm:
        async def write(self, msg: Any) -> None:
            assert msg["op"] == "identity"

        async def read(self) -> Any:
            return answer

        def abort(self) -> None:
            pass

    async def connect(address: str, timeout: float | None = None, **kw: Any) -> Comm:
        return Comm()

    monkeypatch.setattr(distributed.comm, "connect", connect)
    with pytest.raises(DaskUnavailable, match=f"at tcp://127.0.0.1:9: not a Dask scheduler \\({said}\\)"):
        running_dask._probe_scheduler("tcp://127.0.0.1:9", running_dask._client_security("tcp://127.0.0.1:9"))


def test_an_unknown_host_name_is_said_not_taken_for_silence(monkeypatch: pytest.MonkeyPatch) -> None:
    """distributed tries a name it cannot resolve again until its deadline, then raises "Timed out trying to
    connect" from the lookup's error: the line says the name is not known (it said "no answer within 10 s")."""
    import distributed.comm

    async def connect(address: str, timeout: float | None = None, **kw: Any) -> Any:
        assert timeout is not None and timeout < running_dask.CONNECT_TIMEOUT  # its own error comes before the deadline
        try:
            raise socket.gaierror(-2, "Name or service not known")
        except OSError as e:
            raise OSError(f"Timed out trying to connect to {address} after {timeout} s") from e

    monkeypatch.setattr(distributed.comm, "connect", connect)
    addr = "tcp://no-such-host.invalid:8786"
    with pytest.raises(DaskUnavailable, match=rf"at {addr}: its host name is not known \(gaierror: .*not known\)$"):
        running_dask._probe_scheduler(addr, running_dask._client_security(addr))


def _squeezed_last_try(monkeypatch: pytest.MonkeyPatch) -> None:
    """distributed's connect as it ends when its last try had only the deadline's last milliseconds: "Timed out
    trying to connect" from that try's TimeoutError, which says nothing of the refusals before it (CI, stop 47)."""
    import asyncio

    import distributed.comm

    async def connect(address: str, timeout: float | None = None, **kw: Any) -> Any:
        try:
            raise asyncio.TimeoutError()
        except asyncio.TimeoutError as e:
            raise OSError(f"Timed out trying to connect to {address} after {timeout} s") from e

    monkeypatch.setattr(distributed.comm, "connect", connect)


def _closed_port() -> int:
    with socket.socket() as s:  # bound, never listening: a connection to it is refused
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_refusal_is_said_when_distributeds_last_try_timed_out(monkeypatch: pytest.MonkeyPatch) -> None:
    _squeezed_last_try(monkeypatch)
    addr = f"tcp://127.0.0.1:{_closed_port()}"
    with pytest.raises(DaskUnavailable, match=rf"at {addr}: nothing listens there \(connection refused;"):
        running_dask._probe_scheduler(addr, running_dask._client_security(addr))


def test_an_unknown_name_is_said_when_distributeds_last_try_timed_out(monkeypatch: pytest.MonkeyPatch) -> None:
    _squeezed_last_try(monkeypatch)

    def getaddrinfo(host: str, *a: Any, **kw: Any) -> Any:
        raise socket.gaierror(-2, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)  # no resolver asked: the answer is the same offline
    addr = "tcp://no-such-host.invalid:8786"
    with pytest.raises(DaskUnavailable, match=rf"at {addr}: its host name is not known \(gaierror: .*not known\)$"):
        running_dask._probe_scheduler(addr, running_dask._client_security(addr))


def test_a_listener_found_on_the_plain_try_leaves_distributeds_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plain try connects (a scheduler started meanwhile, a firewall that accepts): nothing plainer is known, so
    the line is distributed's own."""
    _squeezed_last_try(monkeypatch)
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        addr = f"tcp://127.0.0.1:{listening.getsockname()[1]}"
        with pytest.raises(DaskUnavailable, match=rf"at {addr}: OSError: Timed out trying to connect to {addr}"):
            running_dask._probe_scheduler(addr, running_dask._client_security(addr))


# --------------------------------------------------------------------------- an address Dask's settings refuse (item 7)

def test_a_tls_address_without_dask_tls_settings_is_exit_2(silent: _Listener, tmp_path: Path) -> None:
    import dask.config

    out = tmp_path / "out"
    none = {"distributed.comm.tls.ca-file": None, "distributed.comm.tls.client.cert": None,
            "distributed.comm.tls.client.key": None}
    with dask.config.set(none):
        r, took = _bounded("audit", str(LEGAL), "-o", str(out), *AUDIT_FAST, "--dask", f"tls://{silent.address}")
    clean_exit(r, 2)
    assert "needs Dask's TLS settings (distributed.comm.tls." in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1, r.output
    assert took < 30, took
    assert not out.exists()


# --------------------------------------------------------------------------- a scheduler without workers (item 3)

@pytest.fixture(scope="module")
def lone_scheduler(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real `dask scheduler` on 127.0.0.1 with no worker; its address."""
    where = tmp_path_factory.mktemp("lone-scheduler")
    sched_file = where / "scheduler.json"
    proc = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
                             "0", "--no-dashboard", "--scheduler-file", str(sched_file)], cwd=where,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        address = None
        while address is None:
            assert proc.poll() is None, "the scheduler ended"
            assert time.monotonic() < deadline, "the scheduler did not start within 120 s"
            try:
                address = json.loads(sched_file.read_text())["address"]
            except (OSError, ValueError, KeyError):  # not written yet, or half written
                time.sleep(0.1)
        yield address
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


def test_a_scheduler_without_workers_is_a_bounded_wait_then_exit_2(lone_scheduler: str, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(running_dask, "WORKER_WAIT", 2.0, raising=False)
    out = tmp_path / "store"
    r, took = _bounded("decisions", str(LEGAL), "-o", str(out), *FAST, "--dask", lone_scheduler)
    clean_exit(r, 2)
    lines = r.output.strip().splitlines()
    assert lines[0].startswith(f"analyzer: waiting for a worker at {lone_scheduler}"), r.output
    assert f"no worker joined the Dask scheduler at {lone_scheduler} within 2 s" in lines[-1], r.output
    assert took < 60, took
    _nothing_written(out)


def test_a_scheduler_without_workers_in_the_audit(lone_scheduler: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(running_dask, "WORKER_WAIT", 1.0, raising=False)
    out = tmp_path / "out"
    r, _ = _bounded("audit", str(LEGAL), "-o", str(out), *AUDIT_FAST, "--dask", lone_scheduler)
    clean_exit(r, 2)
    assert "waiting for a worker" in r.output and "no worker joined the Dask scheduler" in r.output, r.output
    assert not out.exists()


# --------------------------------------------------------------------------- the scheduler lost mid-run (item 2)

def _distributed_errors() -> dict[str, BaseException]:
    from distributed.client import ClosedClientError, FutureCancelledError
    from distributed.comm.core import CommClosedError

    return {"closed-client": ClosedClientError("Client is closed. Can't send update-graph message."),
            "comm-closed": CommClosedError("in <TCP (closed) ConnectionPool.gather local=tcp://127.0.0.1:1>: Stream "
                                           "is closed"),
            "cancelled": FutureCancelledError("analyse_batch-1", "scheduler-connection-lost",
                                              "Client lost the connection to the scheduler.\nPlease re-run.")}


@pytest.mark.parametrize("kind", ["closed-client", "comm-closed", "cancelled"])
def test_dask_failure_knows_a_lost_scheduler(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(running_dask, "_scheduler_address", "tcp://10.0.0.1:8786")
    e = _distributed_errors()[kind]
    said = running_dask.dask_failure(e)
    assert said is not None and said.startswith("lost the Dask scheduler at tcp://10.0.0.1:8786 (")
    assert said.endswith("; run again") and "\n" not in said
    assert not running_dask.dask_lost(e)  # the scheduler, not work a worker took with it


def test_dask_failure_leaves_bugs_alone() -> None:
    from distributed import KilledWorker
    from distributed.client import FutureCancelledError

    class ClosedClientError(Exception):  # the name, but not distributed's
        pass

    for e in (ValueError("x"), KeyError("k"), OSError(5, "io"), MemoryError(), RuntimeError("r"), ClosedClientError()):
        assert running_dask.dask_failure(e) is None, e
    assert running_dask.dask_failure(DaskUnavailable("cannot reach the Dask scheduler at x: y")) == \
        "cannot reach the Dask scheduler at x: y"
    lost = FutureCancelledError("k", "lost dependencies")
    assert running_dask.dask_lost(lost) and "the Dask cluster lost work" in (running_dask.dask_failure(lost) or "")
    killed = KilledWorker("k", SimpleNamespace(address="tcp://127.0.0.1:2"), 3)
    assert "the Dask cluster lost work" in (running_dask.dask_failure(killed) or "")
    assert "KilledWorker: ('k'" in (running_dask.dask_failure(KilledWorker("k", "w", 3)) or "")  # its message fails: its args


def test_dask_failure_does_not_import_distributed() -> None:
    code = ("import sys; from analyzer.running.dask import dask_failure; "
            "assert dask_failure(ValueError()) is None and dask_failure(OSError()) is None; "
            "assert 'distributed' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120, cwd=ROOT)


class _ClosedClient:
    """A client whose scheduler is gone: it has a worker on record, and every other call raises ``error``."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def scheduler_info(self, *args: Any, **kw: Any) -> dict[str, Any]:
        return {"workers": {"tcp://127.0.0.1:1": {"status": "running"}}}

    def close(self, *args: Any, **kw: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)

        def call(*args: Any, **kw: Any) -> Any:
            raise self.error

        return call


@pytest.mark.parametrize("command", ["decisions", "players", "audit"])
@pytest.mark.parametrize("kind", ["closed-client", "comm-closed"])
def test_a_lost_scheduler_is_exit_2_in_every_command(command: str, kind: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A Dask call raising what distributed raises once the scheduler is gone is exit 2, one line; a ValueError from
    the same call is still a bug (the exception reaches main's last resort: exit 3)."""
    error: list[BaseException] = [_distributed_errors()[kind]]

    def lost(address: str, jobs: int, preload: tuple[str, ...] = (), prefork: tuple[str, ...] = ()) -> Any:
        return _ClosedClient(error[0])

    monkeypatch.setattr(running_dask, "dask_client", lost)
    monkeypatch.setattr(running_dask, "_scheduler_address", "tcp://127.0.0.1:9", raising=False)
    out = tmp_path / ("out.csv" if command == "players" else "out")
    args = [command, str(LEGAL), "-o", str(out), *(AUDIT_FAST if command == "audit" else FAST), "--dask",
            "tcp://127.0.0.1:9"]
    r = run_cli(*args)
    clean_exit(r, 2)
    assert "analyzer: error: lost the Dask scheduler at tcp://127.0.0.1:9 (" in r.output, r.output
    assert r.output.strip().endswith("; run again") and len(r.output.strip().splitlines()) == 1, r.output
    assert not out.exists()
    error[0] = ValueError("a bug")
    r = run_cli(*args)
    assert isinstance(r.exception, ValueError), r.output


def test_distributed_lines_about_a_lost_scheduler_are_left_out() -> None:
    import asyncio

    logger = logging.getLogger("distributed.client")

    def record(msg: Any, exc: BaseException | None = None) -> logging.LogRecord:
        info = (type(exc), exc, None) if exc is not None else None
        return logger.makeRecord(logger.name, logging.ERROR, __file__, 1, msg, (), info)  # type: ignore[arg-type]

    assert not running_dask._quiet_loss_filter(record("Failed to reconnect to scheduler after %.2f seconds, closing client"))
    cancelled = asyncio.CancelledError()
    assert not running_dask._quiet_loss_filter(record(cancelled, cancelled))
    assert running_dask._quiet_loss_filter(record("something else"))
    assert running_dask._quiet_loss_filter(record(ValueError("x"), ValueError("x")))
    before = list(logger.filters)
    running_dask._quiet_loss(+1)
    running_dask._quiet_loss(+1)
    assert logger.filters.count(running_dask._quiet_loss_filter) == 1
    running_dask._quiet_loss(-1)
    assert running_dask._quiet_loss_filter in logger.filters  # another client still open
    running_dask._quiet_loss(-1)
    assert logger.filters == before


def test_close_client_takes_the_filter_off(lone_scheduler: str) -> None:
    """A real client of a real scheduler: the filter is on while it is open, off once it is closed."""
    logger = logging.getLogger("distributed.client")
    client = running_dask.dask_client(lone_scheduler, 1)
    try:
        assert running_dask._quiet_loss_filter in logger.filters
        assert client.scheduler_info()["type"] == "Scheduler"
    finally:
        running_dask.close_client(client)
    assert running_dask._quiet_loss_filter not in logger.filters


def test_the_module_constants_are_the_documented_bounds() -> None:
    assert running_dask.CONNECT_TIMEOUT == 10 and running_dask.WORKER_WAIT == 60
