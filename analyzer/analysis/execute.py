"""Where the per-batch decision analysis runs: in this process, in worker processes, or on Dask; results in input order.

The unit of work is a batch of whole hands (:class:`HandBatch`). Each decision's random stream comes
from the run's seed, the hand id and the action (``decisions.decision_seed``), never from the worker
or the batch, so the rows are the same however many workers run them and however the hands are cut.
Batches travel as canonical JSON lines (small, and nothing but msgspec is needed to read them back);
at most a few batches per worker are in flight, so memory does not grow with the input.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import cache, partial
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    import pandas as pd

    from analyzer.validate import Checked

T = TypeVar("T")
R = TypeVar("R")

#: Hands per task: ~3-5 s of work on one core at the audit's settings, so a task's overhead (pickling,
#: scheduling: milliseconds) is lost in it, while 1,000 hands still make enough tasks for 2-4 workers.
DEFAULT_BATCH_HANDS = 256
#: Below this many bytes of input an ordinary run stays in one process: starting workers (each loads
#: numba's compiled kernels, ~1 s) costs more than it saves on a few hundred hands.
PARALLEL_MIN_BYTES = 256 << 10


#: The largest count a setting of the analysis takes (the command line's ``--samples`` / ``--max-samples`` /
#: ``--dd-samples`` bound, ``commands.common.MAX_COUNT``): a store's metadata asking for more was not written here.
MAX_SETTING_COUNT = 1_000_000


def _shown(v: Any, width: int = 60) -> str:
    """``repr(v)`` for a message, cut to about ``width`` characters (a value read from a file may be huge)."""
    r = repr(v)
    return r if len(r) <= width else f"{r[:width - 3]}..."


def _json_kind(v: Any) -> str:
    """What a JSON value is, for a message (``a list``, ``the string 'x'``)."""
    if isinstance(v, str):
        return f"the string {_shown(v)}"
    return {list: "a list", dict: "an object", bool: "a boolean", type(None): "null"}.get(type(v),
                                                                                         f"the number {_shown(v)}")


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the decision rows depend on besides the hands themselves (``decisions.analyse``'s options)."""

    samples: int
    dd_samples: int
    seed: int
    noise: float
    policy: str
    max_samples: int | None  # adaptive sampling's ceiling; None: exactly ``samples``

    @classmethod
    def of(cls, samples: int, dd_samples: int, seed: int = 0, *, noise: float | None = None,
           policy: str | None = None, max_samples: int | None | str = "default") -> Settings:
        """Settings with ``decisions.analyse``'s defaults for what is not given."""
        from analyzer.analysis.decisions import DEFAULT_MAX_SAMPLES, DEFAULT_NOISE, DEFAULT_POLICY

        return cls(samples, dd_samples, seed, DEFAULT_NOISE if noise is None else noise,
                   DEFAULT_POLICY if policy is None else policy,
                   DEFAULT_MAX_SAMPLES if max_samples == "default" else max_samples)  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Any) -> Settings:
        """Settings as :meth:`to_dict` wrote them (a decision store's metadata); :class:`ValueError` saying what is
        wrong when ``d`` is not such a mapping (a missing key, a value of another type or out of the options' range)."""
        import math

        from analyzer.analysis.decisions import POLICIES

        if not isinstance(d, dict):
            raise ValueError(f"settings: expected an object, not {_json_kind(d)}")
        missing = [k for k in ("samples", "dd_samples", "seed", "noise", "policy") if k not in d]
        if missing:
            raise ValueError(f"settings: missing {', '.join(repr(k) for k in missing)}")

        def count(key: str, low: int, high: int = MAX_SETTING_COUNT) -> int:
            v = d[key]
            if type(v) is not int or not low <= v <= high:  # bool is not a count
                raise ValueError(f"settings: {key!r} must be an integer from {low} to {high}, not {_shown(v)}")
            return v

        noise = d["noise"]
        if type(noise) not in (int, float) or not math.isfinite(noise) or noise < 0:
            raise ValueError(f"settings: 'noise' must be a finite number >= 0, not {_shown(noise)}")
        policy = d["policy"]
        if not isinstance(policy, str) or policy not in POLICIES:
            raise ValueError(f"settings: 'policy' must be one of {', '.join(POLICIES)}, not {_shown(policy)}")
        ms = d.get("max_samples")
        return cls(count("samples", 1), count("dd_samples", 0), count("seed", -(2**63), 2**63 - 1), float(noise),
                   policy, None if ms is None else count("max_samples", 1))

    def describe(self) -> str:
        """The options that give these settings, as a user would type them."""
        return (f"--samples {self.samples} --max-samples {self.max_samples or self.samples} "
                f"--dd-samples {self.dd_samples} --seed {self.seed} --noise {self.noise:g} --policy {self.policy}")


@dataclass(slots=True)
class HandBatch:
    """Hands of one task: each one's place in the input (``hand_seq``) and its record as a canonical JSON line."""

    seqs: list[int] = field(default_factory=list)
    lines: list[bytes] = field(default_factory=list)
    hand_ids: list[str] = field(default_factory=list)
    fingerprints: list[str] = field(default_factory=list)
    #: the decoded records, for a batch analysed in this process (never pickled: a worker decodes the lines)
    records: list[Any] | None = None

    def __len__(self) -> int:
        return len(self.seqs)

    def __getstate__(self) -> tuple[Any, ...]:
        return self.seqs, self.lines, self.hand_ids, self.fingerprints

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.seqs, self.lines, self.hand_ids, self.fingerprints = state
        self.records = None


def fingerprint_line(line: bytes) -> str:
    """A hand's fingerprint: 64 bits of BLAKE2b of its canonical JSON line (``logs.format_record``), so the
    same hand written with other spacing or key order has the same one."""
    return hashlib.blake2b(line, digest_size=8).hexdigest()


def analyse_batch(batch: HandBatch, settings: Settings, reasons: bool = False) -> pd.DataFrame:
    """The decision rows of one batch (runs in a worker); ``hand_seq`` is the hand's place in the whole input."""
    import numpy as np

    from analyzer.analysis.decisions import analyse
    from analyzer.logs import parse_record
    from analyzer.validate import Checked
    from analyzer.variants.base import HandCheck

    # in this process the records read are reused (the line is their canonical form: decoding it gives them back)
    recs = batch.records if batch.records is not None else [parse_record(line) for line in batch.lines]
    batch.records = None  # held no longer than the analysis (the caller keeps the batch for its ids)
    items = [Checked("", 0, rec.hand_id, rec, HandCheck()) for rec in recs]
    frame = analyse(items, samples=settings.samples, dd_samples=settings.dd_samples, seed=settings.seed,
                    noise=settings.noise, policy=settings.policy, max_samples=settings.max_samples, reasons=reasons)
    frame["hand_seq"] = np.asarray(batch.seqs, np.int64)[frame["hand_seq"].to_numpy()]
    return frame


def default_jobs(paths: Iterable[str]) -> int:
    """Worker processes for an ordinary run: every core, unless the input is too small to pay for them."""
    size = sum(os.path.getsize(p) for p in paths if p != "-" and os.path.exists(p))
    return 1 if size < PARALLEL_MIN_BYTES else max(1, os.cpu_count() or 1)


@dataclass(frozen=True, slots=True)
class Execution:
    """How to run the batches: ``jobs`` worker processes (1: this process), or Dask when ``dask`` is set
    (``"local"`` for a LocalCluster of ``jobs`` workers, else a scheduler address such as ``tcp://host:8786``)."""

    jobs: int = 1
    dask: str | None = None
    batch_hands: int = DEFAULT_BATCH_HANDS
    #: an open Dask client shared by the whole command (:func:`dask_session`), else each map opens its own
    session: DaskSession | None = field(default=None, compare=False, repr=False)
    #: modules a LocalCluster's workers import as they start (the code their tasks run), not on the first task
    preload: tuple[str, ...] = ()
    #: modules imported, after ``preload``, once by the process a LocalCluster's workers are forked from (e.g. one
    #: that warms their caches at import: ``analyzer.audit.prewarm``), not by each worker
    prefork: tuple[str, ...] = ()

    def map(self, fn: Callable[[T], R], tasks: Iterable[T]) -> Iterator[R]:
        """``fn`` over ``tasks``, results in task order, a bounded number in flight."""
        if self.session is not None:
            return _session_map(fn, tasks, self.session, self.jobs)
        if self.dask is not None:
            return _dask_map(fn, tasks, self.dask, self.jobs, self.preload, self.prefork)
        if self.jobs <= 1:
            return map(fn, tasks)
        return _pool_map(fn, tasks, self.jobs)


def _pool_map(fn: Callable[[T], R], tasks: Iterable[T], jobs: int) -> Iterator[R]:
    from concurrent.futures import Future, ProcessPoolExecutor

    from analyzer.validate import ignore_sigint

    pool = ProcessPoolExecutor(max_workers=jobs, initializer=ignore_sigint)  # Ctrl-C is the parent's to handle
    try:
        pending: deque[Future[R]] = deque()
        for t in tasks:
            pending.append(pool.submit(fn, t))
            while len(pending) > 2 * jobs:  # bounded: a few batches a worker, however long the input
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:  # on an error (or a consumer that stops early) the batches not started are dropped
        pool.shutdown(wait=True, cancel_futures=True)


class DaskUnavailable(RuntimeError):
    """``--dask`` was asked for but dask[distributed] is not installed, or the scheduler cannot be reached."""


#: Dask settings of a LocalCluster (its scheduler and nannies, in this process) and of its workers: no statistical
#: profiler (a sample of every task thread each 10 ms, ~1% of a worker's CPU, for a dashboard this cluster does not
#: serve), and the periodic checks less often: the event loop's tick (a blocked-loop warning, each 20 ms in every
#: server), the system monitor (500 ms) and the memory monitor (100 ms, in every nanny and worker). At their defaults
#: an idle cluster of 2 workers took 0.05-0.08 of a core in this process and 0.07-0.22 on the machine, at these 0.01
#: and 0.02-0.03 (``benchmarks/bench_dask_idle.py``), which on a machine whose cores all work is taken from the workers.
LOCAL_CONFIG = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "1s",
                "distributed.admin.system-monitor.interval": "5s", "distributed.worker.memory.monitor-interval": "1s"}


def _has_distributed() -> bool:
    import importlib.util

    return importlib.util.find_spec("distributed") is not None


def _pre_spawn_environ() -> dict[str, str]:
    """What distributed's nanny puts in the environment before it starts a worker process
    (``distributed.nanny.pre-spawn-environ``: one BLAS thread, glibc's trim threshold), read as the nanny reads it
    (the environment over the Dask config over distributed's defaults) but without importing distributed (~0.5 s):
    its defaults file is added to the config as distributed's own import adds it."""
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
    return {k: os.environ.get(k, str(v)) for k, v in (dask.config.get(key, None) or {}).items() if v is not None}


def start_forkserver(preload: Sequence[str]) -> bool:
    """Start this process' forkserver now (where the platform has one), importing distributed, numpy, pandas and
    ``preload`` once, so a LocalCluster's workers are forks of it (:func:`_forkserver`): each ready in a tenth of a
    second with ~0.1 CPU-s, where a spawned worker imports everything again (~4 CPU-s a worker, while the command
    imports and reads). Started before this process imports distributed and its scheduler (~1.5 s with the command's
    own imports), with the environment the nanny gives its workers (:func:`_pre_spawn_environ`: set here as the nanny
    sets it, before its first worker). No effect once the forkserver runs (a second cluster): its modules are
    imported already. False where there is no forkserver (Windows): the workers are spawned, as before."""
    global _forkserver_started
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return False
    from multiprocessing import forkserver

    if not _forkserver_started:  # the environment once (setenv is not thread-safe: call it before starting threads)
        os.environ.update(_pre_spawn_environ())
        multiprocessing.get_context("forkserver").set_forkserver_preload(
            ["analyzer.relaxed_gc", "distributed", "numpy", "pandas", *preload])  # the collector relaxed first
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
    try:
        return Client(address, timeout="10s")
    except (OSError, TimeoutError, ValueError) as e:  # ValueError: an address distributed cannot parse
        raise DaskUnavailable(f"cannot reach the Dask scheduler at {address}: {e}") from e


def dask_lost(e: BaseException) -> bool:
    """Whether ``e`` is Dask's way of saying work went with a worker and cannot be had again (a task cancelled as
    forgotten, a scattered value lost, a task that killed its workers too often)."""
    return type(e).__name__ in ("FutureCancelledError", "CancelledError", "KilledWorker")


def close_client(client: Any) -> None:
    cluster = getattr(client, "_analyzer_cluster", None)
    client.close()
    if cluster is not None:
        cluster.close()


def _dask_map(fn: Callable[[T], R], tasks: Iterable[T], address: str, jobs: int,
              preload: Sequence[str] = (), prefork: Sequence[str] = ()) -> Iterator[R]:
    session = DaskSession(address, jobs, preload=preload, prefork=prefork)
    try:
        yield from _session_map(fn, tasks, session, jobs)
    finally:
        session.close()


#: ``DataFrame.attrs`` key under which a result of :func:`_session_map` carries the index of its follower task.
FOLLOWER = "bieqi.follower"


class DaskSession:
    """A Dask client for a whole command. ``follow``, when set, is called with each task's future as it is
    submitted and returns a task that stays on the cluster (e.g. the audit's chunk of pair-signal links, built
    on the worker that holds the batch's rows: :class:`analyzer.audit.on_dask.DaskSignals`); the results the
    map gives back carry its index in ``attrs[FOLLOWER]`` (:meth:`take` hands it over).

    ``background``: the client (and a LocalCluster's worker processes, importing ``preload``) starts in a thread,
    so a command goes on with its own imports and reading meanwhile; the first use of :attr:`client` waits for it
    (and raises what starting raised, e.g. :class:`DaskUnavailable`)."""

    def __init__(self, address: str, jobs: int, *, preload: Sequence[str] = (), prefork: Sequence[str] = (),
                 background: bool = False) -> None:
        self.local = address == "local"  # a LocalCluster: its workers run on this machine, with its file system
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

        self._starting = threading.Thread(target=start, name="dask-session-start", daemon=True)
        self._starting.start()

    @property
    def ready(self) -> bool:
        """Whether :attr:`client` would answer without waiting (the background start is over, well or not)."""
        return self._starting is None or not self._starting.is_alive()

    @property
    def client(self) -> Any:
        """The distributed Client (waiting for a background start to finish)."""
        if self._starting is not None:
            self._starting.join()
            self._starting = None
        if self._failed is not None:
            raise self._failed
        return self._client

    def take(self, index: int) -> Any:
        """The follower task of the map's ``index``-th result (the session forgets it)."""
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


def dask_session(execution: Execution) -> Execution:
    """``execution`` with an open :class:`DaskSession` (when it runs on Dask; close it with ``.session.close()``)."""
    from dataclasses import replace

    if execution.dask is None or execution.session is not None:
        return execution
    return replace(execution, session=DaskSession(execution.dask, execution.jobs, preload=execution.preload,
                                                  prefork=execution.prefork))


#: Tasks (batches) read ahead while a background Dask start is still under way: at most this many wait for the
#: cluster (a fixed bound: memory does not grow with the input).
READ_AHEAD = 16


def _read_ahead(tasks: Iterable[T], session: DaskSession) -> tuple[list[T], Iterator[T]]:
    """The first tasks, pulled from ``tasks`` while ``session`` is still starting (at most :data:`READ_AHEAD`): the
    logs are read, validated and cut into batches while the workers start, not after; and the rest."""
    it = iter(tasks)
    early: list[T] = []
    while not session.ready and len(early) < READ_AHEAD:
        for t in it:
            early.append(t)
            break
        else:
            break
    return early, it


def _session_map(fn: Callable[[T], R], tasks: Iterable[T], session: DaskSession, jobs: int) -> Iterator[R]:
    early, rest = _read_ahead(tasks, session)
    tasks = itertools.chain(early, rest)
    client = session.client
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
        if session.follow is not None:
            session.followers.append(session.follow(fut))
            follower = len(session.followers) - 1
        if session.settle is not None:  # the settled summary comes back; the task's result stays on the worker
            fut = session.settle(fut)
        pending.append((fut, follower))
        while len(pending) > 2 * workers + 1:
            yield result(*pending.popleft())
    while pending:
        yield result(*pending.popleft())


def hand_batches(items: Iterable[Checked], size: int, *, on_hand: Callable[[Checked, int, str], bool] | None = None
                 ) -> Iterator[HandBatch]:
    """Valid standard-game hands (other variants are left out) in batches of ``size``; ``on_hand(item,
    seq, fingerprint)`` may return False to leave a hand out (e.g. already in a decision store). ``seq`` counts every item, as
    ``decisions.analyse`` does."""
    from analyzer.logs import format_record
    from analyzer.variants.bieqi import NAME

    batch = HandBatch(records=[])
    for seq, item in enumerate(items):
        if type(item.record).__struct_config__.tag != NAME:  # other variants have no decision rows here
            continue
        line = format_record(item.record)
        fp = fingerprint_line(line)
        if on_hand is not None and not on_hand(item, seq, fp):
            continue
        batch.seqs.append(seq)
        batch.lines.append(line)
        batch.hand_ids.append(str(item.record.hand_id))
        batch.fingerprints.append(fp)
        batch.records.append(item.record)  # type: ignore[union-attr]
        if len(batch) >= size:
            yield batch
            batch = HandBatch(records=[])
    if batch:
        yield batch


def analysed_batches(items: Iterable[Checked], settings: Settings, execution: Execution = Execution(), *,
                     reasons: bool = False, on_hand: Callable[[Checked, int, str], bool] | None = None,
                     on_progress: Callable[[int], None] | None = None) -> Iterator[tuple[HandBatch, pd.DataFrame]]:
    """Each batch of hands with its decision rows, in input order, computed on ``execution``."""
    sent: deque[HandBatch] = deque()

    def remembered() -> Iterator[HandBatch]:
        for b in hand_batches(items, execution.batch_hands, on_hand=on_hand):
            sent.append(b)
            yield b

    done = 0
    for frame in execution.map(partial(analyse_batch, settings=settings, reasons=reasons), remembered()):
        batch = sent.popleft()
        done += len(batch)
        if on_progress is not None:
            on_progress(done)
        yield batch, frame


def release_memory() -> None:
    """Hand freed heap pages back to the system (glibc's ``malloc_trim``; nothing elsewhere). Millions of
    freed strings of a few hundred bytes leave holes glibc keeps for reuse: the memory is free for this
    process but still counted as resident, and the next phase's peak adds to it."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@cache
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, looked up once a process (``find_library`` may run ``ldconfig``), or None."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        return getattr(libc, "malloc_trim", None)
    except OSError:  # no C library to load: nothing to trim
        return None


def shared_strings(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with each text column's repeated values as one object each (in place; returned).

    Read from Parquet (or unpickled), every row gets its own copy of a player's name, the hand id and the
    cards: about half a row's memory. The values are the same; only the copies go."""
    import numpy as np
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):  # e.g. a batch settled on a Dask worker (only its summary is here)
        return frame
    for c in frame.columns:
        if frame[c].dtype == object and c != "options":  # options differ row by row: nothing to share
            codes, uniq = pd.factorize(frame[c], use_na_sentinel=False)
            if len(uniq) < len(frame) // 2:
                frame[c] = pd.Series(np.asarray(uniq, dtype=object)[codes], index=frame.index, dtype=object)
    return frame


def analyse_items(items: Iterable[Checked], settings: Settings, execution: Execution = Execution(), *,
                  reasons: bool = False, on_hand: Callable[[Checked, int, str], bool] | None = None,
                  on_progress: Callable[[int], None] | None = None) -> pd.DataFrame:
    """Decision rows of standard-game hands, batch by batch on ``execution``; equal to
    ``decisions.analyse`` on the same hands whatever the workers."""
    import pandas as pd

    from analyzer.analysis.decisions import analyse

    # each batch's repeated texts (names, ids, cards) as one object each: the rows are held to the end
    frames = [shared_strings(f) for _, f in analysed_batches(items, settings, execution, reasons=reasons,
                                                             on_hand=on_hand, on_progress=on_progress) if len(f)]
    if not frames:
        return analyse([])  # the typed empty frame
    return pd.concat(frames, ignore_index=True)
