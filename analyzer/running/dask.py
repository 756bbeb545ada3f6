"""The Dask connection: a client of a LocalCluster or of a scheduler's address, its failures said in one line, and
work mapped over it in order with a bounded number in flight.

distributed and dask are imported inside the functions that need them (the optional extra ``dask``): importing this
module costs the standard library only, so the command line can ask :func:`dask_failure` about any error."""

from __future__ import annotations

import itertools
import os
import socket
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class DaskUnavailable(RuntimeError):
    """``--dask`` was asked for but dask[distributed] is not installed, or the scheduler cannot be reached."""


#: Dask settings of a LocalCluster (its scheduler and nannies, in this process) and of its workers: no statistical
#: profiler (a sample of every task thread each 10 ms, ~1% of a worker's CPU, for a dashboard this cluster does not
#: serve), and the periodic checks less often: the event loop's tick (a blocked-loop warning, each 20 ms in every
#: server), the system monitor (500 ms) and the memory monitor (100 ms, in every nanny and worker). At their defaults
#: an idle cluster of 2 workers took 0.05-0.08 of a core in this process and 0.07-0.22 on the machine, at these 0.01
#: and 0.02-0.03 (``benchmarks/bench_dask_idle.py``), which on a machine whose cores all work is taken from the workers.
#: Also the length of distributed's developer logs (``distributed.admin.low-level-log-length``, 1000 by default): every
#: batched stream keeps its last that many messages under 1 MB, a task's arguments among them, so the client's stream
#: to the scheduler and the scheduler's to each worker (in this process for a LocalCluster) held every batch's hands
#: sent (~2.7 KB a hand, twice: ~90 MB of a 16,000-hand audit's client) and a worker its tasks'.
LOW_LEVEL_LOG = {"distributed.admin.low-level-log-length": 16}
LOCAL_CONFIG = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "1s",
                "distributed.admin.system-monitor.interval": "5s", "distributed.worker.memory.monitor-interval": "1s",
                **LOW_LEVEL_LOG}


def _has_distributed() -> bool:
    import importlib.util

    return importlib.util.find_spec("distributed") is not None


#: glibc's malloc settings of a LocalCluster's workers (the environment their forkserver starts with; this process'
#: environment wins). distributed's nanny sets ``MALLOC_TRIM_THRESHOLD_=65536`` (freed memory goes back to the system
#: at once), and a threshold set so also stops glibc from raising its mmap threshold from 128 KB as it otherwise
#: does: every array over 128 KB a task made was a mapping of its own, unmapped when freed, so each of its pages was
#: faulted in and zeroed again (~450,000 page faults and 1.3-1.6 s of system CPU a worker in a 4,000-hand audit,
#: more than a worker's share of the work in each of two). Arrays under 32 MB (glibc's most) now come from the heap
#: and reuse what was freed, and the heap keeps up to 64 MB free at its top: a batch's analysis frees more than 32 MB
#: there, which a lower threshold gave back and the next batch faulted in again (a worker's peak grew by ~20-45 MB
#: in that audit).
WORKER_MALLOC = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(64 << 20)}


def _pre_spawn_environ() -> dict[str, str]:
    """What distributed's nanny puts in the environment before it starts a worker process
    (``distributed.nanny.pre-spawn-environ``: one BLAS thread, glibc's trim threshold), read as the nanny reads it
    (the environment over the Dask config over distributed's defaults) but without importing distributed (~0.5 s):
    its defaults file is added to the config as distributed's own import adds it. glibc's settings are
    :data:`WORKER_MALLOC`'s unless this process' environment has its own."""
    import dask.config

    key = "distributed.nanny.pre-spawn-environ"
    if dask.config.get(key, None) is None:
        import importlib.util

        import yaml  # type: ignore[import-untyped]  # comes with dask

        spec = importlib.util.find_spec("distributed")
        if spec is None or not spec.submodule_search_locations:
            return {}
        with open(os.path.join(list(spec.submodule_search_locations)[0], "distributed.yaml")) as f:
            dask.config.update_defaults(yaml.safe_load(f))
    nanny = {k: str(v) for k, v in (dask.config.get(key, None) or {}).items() if v is not None}
    return {k: os.environ.get(k, v) for k, v in {**nanny, **WORKER_MALLOC}.items()}


def start_forkserver(preload: Sequence[str]) -> bool:
    """Start this process' forkserver now (where the platform has one), importing distributed, numpy, pandas and
    ``preload`` once, so a LocalCluster's workers are forks of it (:func:`_forkserver`): each ready in a tenth of a
    second with ~0.1 CPU-s, where a spawned worker imports everything again (~4 CPU-s a worker, while the command
    imports and reads). Started before this process imports distributed and its scheduler (~1.5 s with the command's
    own imports), with the environment the nanny gives its workers (:func:`_pre_spawn_environ`: set here as the nanny
    sets it, before its first worker). No effect once the forkserver runs (a second cluster): its modules are
    imported already. False where there is no forkserver (Windows): the workers are spawned."""
    global _forkserver_started
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return False
    from multiprocessing import forkserver

    if not _forkserver_started:  # the environment once (setenv is not thread-safe: call it before starting threads)
        os.environ.update(_pre_spawn_environ())
        multiprocessing.get_context("forkserver").set_forkserver_preload(
            ["analyzer.running.relaxed_gc", "distributed", "numpy", "pandas", *preload])  # the collector relaxed first
        _forkserver_started = True
    forkserver.ensure_running()
    return True


#: Whether :func:`start_forkserver` set this process' forkserver up.
_forkserver_started = False


def _forkserver(preload: Sequence[str]) -> dict[str, Any]:
    """The Dask settings under which a LocalCluster's nannies fork their workers from this process' forkserver
    (started by :func:`start_forkserver`); empty where there is none."""
    if not start_forkserver(preload):
        return {}
    import dask.config
    from distributed.utils import get_mp_context

    method = {"distributed.worker.multiprocessing-method": "forkserver"}
    with dask.config.set(method):
        get_mp_context()  # distributed sets its own preload list once: too late to change the running forkserver's
    return method


#: Seconds a scheduler has to answer before ``--dask ADDRESS`` gives up (exit 2, "cannot reach the Dask scheduler"):
#: the connection, Dask's handshake and a first call, all within it (:func:`_probe_scheduler`).
CONNECT_TIMEOUT = 10.0
#: Seconds a scheduler without workers is given for one to join (a message says the command waits) before the
#: command gives up (exit 2): work sent to a scheduler with no worker would wait for ever, silently.
WORKER_WAIT = 60.0

#: The scheduler address of the last remote client opened (for the message when it is lost).
_scheduler_address: str | None = None


def dask_client(address: str, jobs: int, preload: Sequence[str] = (), prefork: Sequence[str] = (), *,
                local_config: Mapping[str, Any] | None = None) -> Any:
    """A distributed Client: a LocalCluster of ``jobs`` single-threaded worker processes for ``local`` (each
    importing the modules ``preload`` as it starts, so the first task does not wait for them; forked from a
    process that imported ``preload`` and then ``prefork`` once, where the platform can: :func:`_forkserver`), with
    the Dask settings ``local_config`` (default :data:`LOCAL_CONFIG`)."""
    if address == "local" and _has_distributed():
        start_forkserver([*preload, *prefork])  # first: it imports while this process imports distributed
    try:
        from distributed import Client, LocalCluster
    except ImportError as e:  # the core install stays light: Dask is the optional extra "dask"
        raise DaskUnavailable("--dask needs dask[distributed]: pip install 'bieqi-analyzer[dask]'") from e
    if address == "local":
        # one thread a worker: the kernel holds the GIL between its compiled calls
        import logging

        import dask.config

        # no dashboard; the scheduler's own HTTP routes (health, metrics) on a free port of this machine, not on
        # 8787 (a warning when another cluster holds it)
        # the nannies read it as they start the workers; the scheduler, nannies and client their intervals as they start
        settings = LOCAL_CONFIG if local_config is None else local_config
        with dask.config.set({**settings, **_forkserver([*preload, *prefork])}):
            cluster = LocalCluster(n_workers=max(1, jobs), threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.ERROR,
                                   scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
                                   preload=list(preload),
                                   config=dask.config.merge(dask.config.config))  # a copy: the nanny's merge is shallow
            client = Client(cluster)
        client._analyzer_cluster = cluster  # type: ignore[attr-defined]  # closed with the client
        return client
    security = _client_security(address)
    _probe_scheduler(address, security)
    try:
        import dask.config

        with dask.config.set(LOW_LEVEL_LOG):  # the client's stream to the scheduler keeps no hands it sent
            client = Client(address, timeout=f"{CONNECT_TIMEOUT:g}s", security=security)
    # what the probe did not meet (a scheduler gone meanwhile): OSError (CommClosedError is one), TimeoutError; a
    # configuration distributed refuses (TypeError, ValueError, RuntimeError); a garbled answer (MemoryError)
    except (OSError, TimeoutError, ValueError, TypeError, RuntimeError, MemoryError) as e:
        raise DaskUnavailable(f"cannot reach the Dask scheduler at {address}: {_one_line(e)}") from e
    global _scheduler_address
    _scheduler_address = address
    _quiet_loss(+1)
    client._analyzer_quiet = True  # type: ignore[attr-defined]  # close_client takes the filter off again
    return client


def _one_line(e: BaseException, width: int = 300) -> str:
    """``Type: message`` of ``e`` on one line (distributed's messages span lines), cut to about ``width`` characters."""
    try:
        said = str(e)
    except Exception:  # noqa: BLE001  # a message that fails to format (distributed's KilledWorker can) says its args
        said = repr(e.args)
        said = said if len(said) <= width else f"{said[:width - 3]}..."
    text = " ".join(f"{type(e).__name__}: {said}".split())
    return text if len(text) <= width else f"{text[:width - 3]}..."


def _client_security(address: str) -> Any:
    """Dask's security settings (``distributed.comm.tls.*``) for a client of ``address``; :class:`DaskUnavailable`
    when they cannot serve it: a ``tls://`` (or ``wss://``) address without them, settings naming unreadable files."""
    from distributed.comm.addressing import parse_address
    from distributed.security import Security

    try:
        scheme = parse_address(address)[0]
        security = Security()
        tls = security.get_connection_args("client").get("ssl_context")
    except (OSError, ValueError, TypeError) as e:  # ssl.SSLError is an OSError: a certificate file missing or unreadable
        raise DaskUnavailable(f"cannot reach the Dask scheduler at {address}: Dask's TLS settings "
                              f"(distributed.comm.tls.*) cannot be used: {_one_line(e)}") from e
    if scheme in ("tls", "wss") and tls is None:
        raise DaskUnavailable(f"cannot reach the Dask scheduler at {address}: a {scheme}:// address needs Dask's TLS "
                              "settings (distributed.comm.tls.ca-file, distributed.comm.tls.client.cert and .key, e.g. "
                              "DASK_DISTRIBUTED__COMM__TLS__CA_FILE=...), and none are set")
    return security


def _probe_scheduler(address: str, security: Any) -> None:
    """Whether a Dask scheduler answers at ``address`` (connect, Dask's handshake, an ``identity`` call), all within
    :data:`CONNECT_TIMEOUT`; :class:`DaskUnavailable` saying why not. The client's own start bounds the connection
    only: a peer that accepts and stays silent held it for ever, and one that answers something else (a web server's
    ``HTTP/1.1 400``) had its first bytes read as a frame's length (a MemoryError for exabytes)."""
    import asyncio
    import threading

    from distributed.comm import connect

    async def ask() -> Any:
        # a second less than the whole: distributed's own "timed out" (with the last try's error: refused, a name
        # unknown) comes before the deadline below, which would say no more than "no answer"
        comm = await connect(address, timeout=CONNECT_TIMEOUT - 1, **security.get_connection_args("client"))
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    answer: list[Any] = []
    failed: list[BaseException] = []

    def run() -> None:
        try:
            answer.append(asyncio.run(asyncio.wait_for(ask(), CONNECT_TIMEOUT)))
        except Exception as e:  # noqa: BLE001  # whatever a peer's bytes make of distributed's reading: the peer's
            failed.append(e)

    # in a thread of its own: an event loop of its own, whatever the caller runs (asyncio.run refuses to nest)
    probing = threading.Thread(target=run, name="dask-scheduler-probe", daemon=True)
    probing.start()
    probing.join(CONNECT_TIMEOUT + 5)  # wait_for ends it; this only in case the loop cannot even be cancelled
    if probing.is_alive() or (failed and isinstance(failed[0], (TimeoutError, asyncio.TimeoutError))):
        raise DaskUnavailable(f"cannot reach the Dask scheduler at {address}: no answer within {CONNECT_TIMEOUT:g} s "
                              "(is it a Dask scheduler's address?)")
    if failed:
        e = failed[0]
        # distributed tries a refused connection or an unknown name again until its deadline, then says it timed out
        # (from the last try's error): the cause is plainer
        why = e
        if isinstance(e, OSError) and _cause(e, ConnectionRefusedError) is None and _cause(e, socket.gaierror) is None:
            # its last try may have had only the deadline's last milliseconds and timed out: one plain try says why
            why = _connect_once(address) or e
        if _cause(why, ConnectionRefusedError) is not None:
            raise DaskUnavailable(f"cannot reach the Dask scheduler at {address}: nothing listens there (connection "
                                  "refused; is the scheduler started, and is this the address it printed?)") from e
        unknown = _cause(why, socket.gaierror)
        if unknown is not None:
            raise DaskUnavailable(f"cannot reach the Dask scheduler at {address}: its host name is not known "
                                  f"({_one_line(unknown)})") from e
        if isinstance(e, OSError):  # no route, a connection closed: as distributed says it
            raise DaskUnavailable(f"cannot reach the Dask scheduler at {address}: {_one_line(e)}") from e
        if isinstance(e, (RuntimeError, TypeError)):  # the connection's settings, e.g. encryption required, no TLS
            raise DaskUnavailable(f"cannot reach the Dask scheduler at {address}: Dask's settings here refuse it "
                                  f"({_one_line(e)})") from e
        # what it answered, read as Dask's frames: a length of exabytes (MemoryError), bytes msgpack refuses, ...
        raise DaskUnavailable(f"cannot reach the Dask scheduler at {address}: not a Dask scheduler (its answer is not "
                              f"Dask's protocol: {_one_line(e, 120)})") from e
    info = answer[0]
    kind = info.get("type") if isinstance(info, dict) else None
    if not isinstance(kind, str) or kind in ("Worker", "Nanny"):
        what = f"a Dask {kind.lower()}" if isinstance(kind, str) else "something else"
        raise DaskUnavailable(f"cannot reach the Dask scheduler at {address}: not a Dask scheduler ({what} answered)")


def _connect_once(address: str, timeout: float = 1.0) -> OSError | None:
    """The error of one plain TCP connection to a ``tcp://`` or ``tls://`` address's host and port (refused, a name
    not known, ...), or None when it connects, times out or the address is of another kind. ``timeout``: the second
    of :data:`CONNECT_TIMEOUT` distributed's connect does not get, so the whole stays within about that bound."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        if scheme not in ("tcp", "tls"):
            return None
        host, port = parse_host_port(location)
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except TimeoutError:
        return None
    except OSError as e:
        return e
    except ValueError:  # an address distributed's connect took and this reading does not: nothing plainer to say
        return None


def _cause(e: BaseException, kind: type[BaseException]) -> BaseException | None:
    """``e`` or the first error of class ``kind`` it was raised from (or while handling), or None."""
    seen: set[int] = set()
    at: BaseException | None = e
    while at is not None and id(at) not in seen:
        if isinstance(at, kind):
            return at
        seen.add(id(at))
        at = at.__cause__ or at.__context__
    return None


def _quiet_loss_filter(record: Any) -> bool:
    """A filter on distributed's client logger while an analyzer's remote client is open: the lines distributed logs
    when the scheduler goes (``Failed to reconnect to scheduler ...``, and the traceback of the reconnection that
    closing the client cuts short) are left out; the command says it in one line of its own ("lost the Dask
    scheduler ...")."""
    import asyncio

    if str(record.msg).startswith("Failed to reconnect to scheduler"):
        return False
    exc = record.exc_info[1] if record.exc_info else record.msg
    return not isinstance(exc, asyncio.CancelledError)


#: Remote clients open with :func:`_quiet_loss_filter` on.
_quiet_clients = 0


def _quiet_loss(step: int) -> None:
    """Put :func:`_quiet_loss_filter` on (``+1``) or take it off (``-1``, once no remote client is left open)."""
    import logging

    global _quiet_clients
    logger = logging.getLogger("distributed.client")
    _quiet_clients = max(0, _quiet_clients + step)
    if _quiet_clients:
        logger.addFilter(_quiet_loss_filter)  # once: addFilter adds only what is not there yet
    else:
        logger.removeFilter(_quiet_loss_filter)


def _distributed_names(e: BaseException) -> set[str]:
    """The names of the classes of ``e`` that are distributed's own (none when distributed is not installed: it is
    never imported here)."""
    return {c.__name__ for c in type(e).__mro__ if c.__module__.split(".")[0] == "distributed"}


def _scheduler_lost(e: BaseException) -> bool:
    """Whether ``e`` is distributed's way of saying the connection to the scheduler is gone: a closed client (it
    failed to reconnect), a closed comm, or a task cancelled because the client lost the scheduler."""
    names = _distributed_names(e)
    if names & {"ClosedClientError", "CommClosedError"}:
        return True
    return "FutureCancelledError" in names and getattr(e, "reason", None) == "scheduler-connection-lost"


def dask_lost(e: BaseException) -> bool:
    """Whether ``e`` is Dask's way of saying work went with a worker and cannot be had again (a task cancelled as
    forgotten, a scattered value lost, a task that killed its workers too often); not the scheduler itself lost
    (:func:`dask_failure` says that)."""
    return type(e).__name__ in ("FutureCancelledError", "CancelledError", "KilledWorker") and not _scheduler_lost(e)


#: Attempts :func:`lost_retried` makes of work whose tasks read values the client scattered.
LOST_TRIES = 3
#: Seconds :func:`lost_retried` waits for a worker when none is left (a nanny restarting the one that died) before
#: it gives up.
LOST_WAIT = 30.0


def _lost_for_now(e: BaseException) -> bool:
    """Whether ``e`` says a task was cancelled because work it needs went with a worker (a scattered value, or a result
    whose scattered inputs are gone: "lost dependencies", "already forgotten"), which a new attempt scattering the
    values anew recomputes; not a task that killed its workers too often (``KilledWorker``: it would kill more)."""
    return dask_lost(e) and type(e).__name__ != "KilledWorker"


def _workers_left(client: Any) -> bool:
    """Whether the cluster has a worker (waiting up to :data:`LOST_WAIT` s for one, e.g. a nanny's restart)."""
    try:
        client.wait_for_workers(1, timeout=LOST_WAIT)
    except Exception:  # noqa: BLE001  # none came (or the scheduler is gone): the loss is final
        return False
    return True


def lost_retried(client: Any, run: Callable[[int], T]) -> T:
    """``run(0)``, and when Dask lost work it needs with a worker, ``run(1)``, ... (at most :data:`LOST_TRIES`
    attempts, while the cluster has a worker left); the error of the last attempt otherwise (the audit's exit 2).

    ``run(attempt)`` submits tasks (on the first attempt they may be submitted already) and gathers their results; on
    a later attempt it scatters the values they read anew (``hash=False``: new keys) and submits them again under new
    keys. Values the client scatters have no lineage: the scheduler's active memory manager keeps one copy of a value
    no waiting task needs, ``broadcast=True`` or not, and a worker that goes with it takes the value, and every
    finished result made from it that it held, beyond recomputing. The tasks are pure functions of their inputs, so
    an attempt gives what the first would have."""
    for attempt in range(LOST_TRIES):
        try:
            return run(attempt)
        except Exception as e:
            if attempt + 1 >= LOST_TRIES or not _lost_for_now(e) or not _workers_left(client):
                raise
    raise AssertionError("unreachable")


def share(client: Any, value: Any) -> Any:
    """``value`` (one value, whatever its type) scattered to one worker of ``client``'s cluster under a new key
    (``hash=False``), for tasks on any worker to read (a worker fetches it once, from its holder, when a task there
    needs it): its future. Scattered again when a worker left the cluster during it (at most :data:`LOST_TRIES`
    attempts, while a worker is left): the scheduler takes its list of workers before it sends, so a worker that dies
    meanwhile fails the scatter with a ``KeyError`` of its address or a closed comm (an ``OSError``).

    Never ``broadcast=True``: distributed's broadcast copies the value with ``Scheduler.replicate``, which loops until
    every worker of the list it took holds a copy, so a worker that dies during it makes the scatter wait for ever
    (seen in ``tests/dask/test_dask_lost_late.py``: the command's audit stuck in the scatter of the rows shown's filter). The
    broadcast bought little: the active memory manager drops the copies no waiting task needs within seconds anyway.
    A copy a failed attempt left on a worker stays there, unreferenced, until the client closes."""
    for attempt in range(LOST_TRIES):
        try:
            return client.scatter([value], hash=False)[0]
        except (KeyError, OSError):
            if attempt + 1 >= LOST_TRIES or not _workers_left(client):
                raise
    raise AssertionError("unreachable")


#: Groups a Dask worker gets when a step runs over the room's players (the player table, the rows shown, the report's
#: pieces): enough to spread them over the workers and even out players of unequal rows, few enough that the tasks'
#: own cost stays small (~2 ms of the client's CPU a task with its scheduler, ~1 ms of a worker's; one task a player
#: made ~190 of a 4,000-hand audit's ~560 tasks with 64 players, ``benchmarks/bench_audit_scale.py``).
GROUPS_PER_WORKER = 4


def task_groups(client: Any, items: Sequence[T], per_worker: int | None = None) -> list[list[T]]:
    """``items`` cut into consecutive groups, one Dask task each: ``per_worker`` (default :data:`GROUPS_PER_WORKER`)
    a worker of ``client``'s cluster (as it is now; one worker's worth without a worker), sizes differing by one at
    most, none empty."""
    info: dict[str, Any] = client.scheduler_info() or {}
    workers = len(info.get("workers") or {})
    per = GROUPS_PER_WORKER if per_worker is None else per_worker
    n = max(1, min(len(items), per * max(1, workers)))
    size, extra = divmod(len(items), n)
    out: list[list[T]] = []
    at = 0
    for k in range(n):
        step = size + (k < extra)
        if step:
            out.append(list(items[at:at + step]))
        at += step
    return out


def dask_failure(e: BaseException) -> str | None:
    """One line for an exception that is Dask failing, not the analyzer (exit 2: run again, or fix the address), else
    None (a bug stays a bug): the scheduler lost during the run, work lost with workers that cannot be had again, or
    :class:`DaskUnavailable` (a scheduler that cannot be reached, or without workers). Known by the exception's class
    names, without importing distributed."""
    if isinstance(e, DaskUnavailable):
        return str(e)
    if _scheduler_lost(e):
        at = f" at {_scheduler_address}" if _scheduler_address else ""
        why = ("the connection to it closed, its tasks were cancelled" if "FutureCancelledError" in _distributed_names(e)
               else _one_line(e))
        return f"lost the Dask scheduler{at} ({why}); run again"
    if dask_lost(e) and _distributed_names(e):
        return f"the Dask cluster lost work it could not compute again ({_one_line(e)}); run again"
    return None


def close_client(client: Any) -> None:
    cluster = getattr(client, "_analyzer_cluster", None)
    try:
        client.close()
        if cluster is not None:
            cluster.close()
    finally:
        if getattr(client, "_analyzer_quiet", False):
            client._analyzer_quiet = False
            _quiet_loss(-1)


def dask_map(fn: Callable[[T], R], tasks: Iterable[T], address: str, jobs: int,
             preload: Sequence[str] = (), prefork: Sequence[str] = ()) -> Iterator[R]:
    """``fn`` over ``tasks`` on a connection of their own to ``address`` (:class:`DaskConnection`), closed at the end."""
    connection = DaskConnection(address, jobs, preload=preload, prefork=prefork)
    try:
        yield from connection_map(fn, tasks, connection, jobs)
    finally:
        connection.close()


#: ``DataFrame.attrs`` key under which a result of :func:`connection_map` carries the index of its follower task.
FOLLOWER = "bieqi.follower"


class DaskConnection:
    """A Dask client for a whole command. ``follow``, when set, is called with each task's future as it is
    submitted and returns a task that stays on the cluster (e.g. the audit's chunk of pair-signal links, built
    on the worker that holds the batch's rows: :class:`analyzer.audit.on_dask.DaskSignals`); the results the
    map gives back carry its index in ``attrs[FOLLOWER]`` (:meth:`take` hands it over).

    ``background``: the client (and a LocalCluster's worker processes, importing ``preload``) starts in a thread,
    so a command goes on with its own imports and reading meanwhile; the first use of :attr:`client` waits for it
    (and raises what starting raised, e.g. :class:`DaskUnavailable`)."""

    def __init__(self, address: str, jobs: int, *, preload: Sequence[str] = (), prefork: Sequence[str] = (),
                 background: bool = False) -> None:
        self.address = address
        self.local = address == "local"  # a LocalCluster: its workers run on this machine, with its file system
        self._workers_seen = self.local  # a LocalCluster starts with its workers; a scheduler may have none yet
        self.follow: Callable[[Any], Any] | None = None
        self.followers: list[Any] = []
        #: when set, called with each task's future: a task whose (small) result the map gives back instead of the
        #: task's own (e.g. the audit's batch written to the spill on the worker: the rows never travel)
        self.settle: Callable[[Any], Any] | None = None
        self._client: Any = None
        self._failed: BaseException | None = None
        self._starting: Any = None
        if not background:
            self._client = dask_client(address, jobs, preload, prefork)
            return
        if self.local and _has_distributed():  # here, before the start's thread: it imports while this process goes on
            start_forkserver([*preload, *prefork])
        import threading

        def start() -> None:
            try:
                self._client = dask_client(address, jobs, preload, prefork)
            except BaseException as e:  # noqa: BLE001  # raised again where the client is first used
                self._failed = e

        self._starting = threading.Thread(target=start, name="dask-connection-start", daemon=True)
        self._starting.start()

    @property
    def ready(self) -> bool:
        """Whether :attr:`client` would answer without waiting (the background start is over, well or not)."""
        return self._starting is None or not self._starting.is_alive()

    @property
    def client(self) -> Any:
        """The distributed Client (waiting for a background start to finish, then, the first time, for a worker:
        :meth:`_wait_for_a_worker`)."""
        if self._starting is not None:
            self._starting.join()
            self._starting = None
        if self._failed is not None:
            raise self._failed
        if not self._workers_seen and self._client is not None:
            self._wait_for_a_worker(self._client)
            self._workers_seen = True
        return self._client

    def _wait_for_a_worker(self, client: Any) -> None:
        """Return once the scheduler has a worker; when it has none, say so on standard error and wait at most
        :data:`WORKER_WAIT` seconds for one, then :class:`DaskUnavailable` (work sent to a scheduler with no worker
        waits for ever, silently). The wait is this thread's own sleep between short questions to the scheduler, not
        distributed's ``wait_for_workers``: a Ctrl-C that came as that call began hit a bug of distributed's
        ``sync`` (a NameError traceback logged on the way out)."""
        import sys
        import time

        if client.scheduler_info().get("workers"):
            return
        print(f"analyzer: waiting for a worker at {self.address} (the Dask scheduler has none; at most "
              f"{WORKER_WAIT:g} s)...", file=sys.stderr, flush=True)
        deadline = time.monotonic() + WORKER_WAIT
        while True:
            time.sleep(max(0.0, min(0.25, deadline - time.monotonic())))
            if client.scheduler_info().get("workers"):
                return
            if time.monotonic() >= deadline:
                raise DaskUnavailable(f"no worker joined the Dask scheduler at {self.address} within "
                                      f"{WORKER_WAIT:g} s; start some (`dask worker {self.address}`) and run again")

    def take(self, index: int) -> Any:
        """The follower task of the map's ``index``-th result (the connection forgets it)."""
        fut, self.followers[index] = self.followers[index], None
        return fut

    def close(self) -> None:
        self.followers.clear()
        if self._starting is not None:
            self._starting.join()
            self._starting = None
        if self._client is not None:
            client, self._client = self._client, None
            close_client(client)



#: Tasks (batches) read ahead while a background Dask start is still under way: at most this many wait for the
#: cluster (a fixed bound: memory does not grow with the input).
READ_AHEAD = 16


def _read_ahead(tasks: Iterable[T], connection: DaskConnection) -> tuple[list[T], Iterator[T]]:
    """The first tasks, pulled from ``tasks`` while ``connection`` is still starting (at most :data:`READ_AHEAD`): the
    logs are read, validated and cut into batches while the workers start, not after; and the rest."""
    it = iter(tasks)
    early: list[T] = []
    while not connection.ready and len(early) < READ_AHEAD:
        for t in it:
            early.append(t)
            break
        else:
            break
    return early, it


def connection_map(fn: Callable[[T], R], tasks: Iterable[T], connection: DaskConnection, jobs: int) -> Iterator[R]:
    """``fn`` over ``tasks`` on ``connection``'s cluster, results in task order, at most about two a worker in flight;
    each task's follower (``connection.follow``) noted in its result's ``attrs[FOLLOWER]``."""
    early, rest = _read_ahead(tasks, connection)
    tasks = itertools.chain(early, rest)
    client = connection.client
    # the scheduler's workers now (a remote cluster may still be growing), at least what was asked for
    workers = max(1, jobs, len(client.scheduler_info().get("workers", {})))
    pending: deque[tuple[Any, int | None]] = deque()

    def result(fut: Any, follower: int | None) -> R:
        out = fut.result()
        if follower is not None and isinstance(getattr(out, "attrs", None), dict):
            out.attrs[FOLLOWER] = follower  # type: ignore[attr-defined]
        return out  # type: ignore[no-any-return]

    for t in tasks:
        fut = client.submit(fn, t, pure=False)
        follower = None
        if connection.follow is not None:
            connection.followers.append(connection.follow(fut))
            follower = len(connection.followers) - 1
        if connection.settle is not None:  # the settled summary comes back; the task's result stays on the worker
            fut = connection.settle(fut)
        pending.append((fut, follower))
        while len(pending) > 2 * workers + 1:
            yield result(*pending.popleft())
    while pending:
        yield result(*pending.popleft())
