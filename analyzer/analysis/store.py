"""The decision store: decision rows as a partitioned Parquet dataset that knows its settings and its hands.

A store is a folder of ``part-NNNNNN.parquet`` files, one per batch of hands, readable as one table by
pandas/pyarrow (``pd.read_parquet(STORE)``). Each part's Parquet metadata (key ``bieqi.store``) holds the
settings the rows were computed with and, for every hand of the part, its id and fingerprint (a hash
of the hand's canonical JSON line, so re-serialising a log does not change it); ``_common_metadata``
holds the settings and the schema for the whole dataset. A later run checks a store against its logs
and settings from this metadata alone (footers, no row is read), reuses the rows of the hands it
already holds and analyses only the others.

Writing is whole or nothing: a new store is written in a hidden temporary folder next to it and
renamed into place; an append writes hidden temporary parts inside the store and renames each into
place only when every new part is written (a part appears whole or not at all, and every part carries
its own fingerprints, so even a crash between two renames leaves a consistent store).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    import pandas as pd

    from analyzer.analysis.execute import Execution, Settings
    from analyzer.validate import Checked

FORMAT = "bieqi-decision-store"
VERSION = 1
META_KEY = b"bieqi.store"
COMMON = "_common_metadata"
PART_PREFIX = "part-"


class StoreError(Exception):
    """A store that cannot be used here: not a store, other settings, or other logs (exit 2 in the CLI)."""


def fingerprint(record: Any) -> str:
    """A hand's fingerprint (see ``execute.fingerprint_line``)."""
    from analyzer.analysis.execute import fingerprint_line
    from analyzer.logs import format_record

    return fingerprint_line(format_record(record))


def _umask_mode(dirs: bool = False) -> int:
    mask = os.umask(0)
    os.umask(mask)
    return (0o777 if dirs else 0o666) & ~mask


def looks_like_store(path: str | os.PathLike[str]) -> bool:
    """A folder with our metadata file or Parquet parts, or a Parquet file (magic bytes ``PAR1``). Only a regular
    file is opened to look: a pipe or FIFO (``<(cat log)``, ``/dev/stdin``) is not, since reading its first bytes
    would take them from the log (and opening a FIFO nobody writes to any more would wait forever)."""
    p = Path(path)
    if p.is_dir():
        return (p / COMMON).is_file() or any(p.glob("*.parquet"))
    if not p.is_file():
        return False
    try:
        with open(p, "rb") as f:
            return f.read(4) == b"PAR1"
    except OSError:
        return False


@dataclass
class Store:
    """An opened store: where it is, its settings, and every hand it holds (id -> fingerprint)."""

    path: Path
    settings: Settings
    hands: dict[str, str] = field(default_factory=dict)
    parts: list[Path] = field(default_factory=list)

    def check_settings(self, settings: Settings) -> None:
        if settings != self.settings:
            raise StoreError(f"{self.path}: the store was written with {self.settings.describe()}, "
                             f"but this run asks for {settings.describe()}; use the same settings or another store")


def _meta(settings: Settings, hand_ids: list[str] | None = None, fps: list[str] | None = None) -> dict[bytes, bytes]:
    doc: dict[str, Any] = {"format": FORMAT, "version": VERSION, "settings": settings.to_dict()}
    if hand_ids is not None:
        doc["hands"] = [hand_ids, fps]
    return {META_KEY: orjson.dumps(doc)}


def _read_meta(path: Path) -> dict[str, Any]:
    import pyarrow.parquet as pq

    try:
        meta = pq.read_schema(path).metadata or {}
    except (OSError, ValueError) as e:  # pyarrow raises ArrowInvalid (a ValueError) on a non-Parquet file
        raise StoreError(f"{path}: not readable as Parquet: {e}") from e
    raw = meta.get(META_KEY)
    if raw is None:
        raise StoreError(f"{path}: not part of a decision store (no {META_KEY.decode()} metadata); "
                         f"write one with `analyzer decisions LOGS --out STORE`")
    doc = orjson.loads(raw)
    if doc.get("format") != FORMAT or doc.get("version") != VERSION:
        raise StoreError(f"{path}: a decision store of format {doc.get('format')!r} version {doc.get('version')!r}; "
                         f"this analyzer reads {FORMAT!r} version {VERSION}")
    return dict(doc)


def open_store(path: str | os.PathLike[str]) -> Store:
    """Read a store's settings and hands from its metadata (no rows are read)."""
    from analyzer.analysis.execute import Settings

    root = Path(path)
    if not root.is_dir():
        raise StoreError(f"{root}: not a decision store (a folder written by `analyzer decisions LOGS --out STORE`)")
    if not (root / COMMON).is_file():
        raise StoreError(f"{root}: not a decision store (no {COMMON}); write one with "
                         f"`analyzer decisions LOGS --out STORE`")
    settings = Settings.from_dict(_read_meta(root / COMMON)["settings"])
    store = Store(root, settings)
    for part in sorted(root.glob(f"{PART_PREFIX}*.parquet")):
        doc = _read_meta(part)
        if Settings.from_dict(doc["settings"]) != settings:
            raise StoreError(f"{part}: written with other settings than the store ({settings.describe()})")
        ids, fps = doc.get("hands", [[], []])
        for h, f in zip(ids, fps):
            store.hands.setdefault(h, f)
        store.parts.append(part)
    return store


def read_rows(store: Store, hand_ids: Iterable[str] | None = None, columns: list[str] | None = None) -> pd.DataFrame:
    """The rows of the store (only ``hand_ids`` when given; only ``columns`` when given), part by part,
    so a subset never needs the whole store in memory."""
    import pandas as pd

    from analyzer.analysis.decisions import analyse
    from analyzer.analysis.execute import shared_strings

    want = None if hand_ids is None else set(hand_ids)
    # the dtypes ``analyse`` gives (pandas may read Parquet strings as its string dtype instead)
    dtypes = {c: t for c, t in analyse([]).dtypes.items() if columns is None or c in columns}
    frames = []
    for part in store.parts:
        frame = shared_strings(_read_part(part, columns).to_pandas().astype(dtypes))
        if want is not None:
            frame = frame[frame["hand_id"].isin(want)]
        if len(frame):
            frames.append(frame)
    if not frames:
        empty = analyse([])
        return empty if columns is None else empty[columns]
    out = pd.concat(frames, ignore_index=True)
    del frames, frame
    import pyarrow as pa

    pa.default_memory_pool().release_unused()  # the parts' Arrow buffers, else kept by the pool for reuse
    return out


def _read_part(part: Path, columns: list[str] | None = None) -> Any:
    """A part's table; one that cannot be read (a corrupt page, a truncated file) is a :class:`StoreError` naming it
    (Arrow's own errors name no file: "Corrupt snappy compressed data.")."""
    import pyarrow.parquet as pq

    try:
        return pq.read_table(part, columns=columns)
    except (OSError, ValueError) as e:  # ArrowIOError, ArrowInvalid
        raise StoreError(f"{part}: a part of the decision store that cannot be read ({e}); write the store again from "
                         f"its logs (`analyzer decisions LOGS --out NEW_STORE`)") from e


def _write_part(directory: Path, name: str, frame: pd.DataFrame, settings: Settings, hand_ids: list[str],
                fps: list[str]) -> Path:
    """One part, written under a hidden name and left there (the caller renames it into place)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, preserve_index=False)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), **_meta(settings, hand_ids, fps)})
    tmp = directory / f".{name}.tmp"
    pq.write_table(table, tmp)
    os.chmod(tmp, _umask_mode())
    return tmp


class StoreWriter:
    """Adds parts to a store (a new one, or one that exists); ``commit`` makes them appear, ``abort`` drops them.

    Use as a context manager: leaving the block by an exception aborts.
    """

    def __init__(self, path: str | os.PathLike[str], settings: Settings) -> None:
        self.target = Path(path)
        self.settings = settings
        self.existing: Store | None = None
        if self.target.exists():
            self.existing = open_store(self.target)
            self.existing.check_settings(settings)
            self.dir = self.target
            names = [p.name for p in self.existing.parts]
            self.next = 1 + max((int(n[len(PART_PREFIX):-len(".parquet")]) for n in names
                                 if n[len(PART_PREFIX):-len(".parquet")].isdigit()), default=-1)
        else:
            with self._named():
                self.target.parent.mkdir(parents=True, exist_ok=True)
                self.dir = Path(tempfile.mkdtemp(prefix=f".{self.target.name}.", dir=self.target.parent))
            self.next = 0
        self.pending: list[tuple[Path, Path]] = []
        self.hands = 0
        self.rows = 0

    @contextmanager
    def _named(self) -> Iterator[None]:
        """An OS error (a full disk, a folder that cannot be made) named as the store asked for: not as its hidden
        temporary folder or part, nor as nothing (Arrow's write errors name no file)."""
        try:
            yield
        except OSError as e:
            raise OSError(e.errno, e.strerror or str(e), str(self.target)) from e

    @property
    def known(self) -> dict[str, str]:
        return {} if self.existing is None else self.existing.hands

    def add(self, frame: pd.DataFrame, hand_ids: list[str], fps: list[str]) -> None:
        """One part: the rows of these hands (hands without a decision still count as analysed)."""
        name = f"{PART_PREFIX}{self.next:06d}.parquet"
        self.next += 1
        with self._named():
            tmp = _write_part(self.dir, name, frame, self.settings, hand_ids, fps)
        self.pending.append((tmp, self.dir / name))
        self.hands += len(hand_ids)
        self.rows += len(frame)

    def commit(self, schema_frame: pd.DataFrame | None = None) -> None:
        """Make the new parts appear: rename the new store into place, or each new part into the store."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self.existing is None:
            if schema_frame is None:
                from analyzer.analysis.decisions import analyse

                schema_frame = analyse([])
            schema = pa.Schema.from_pandas(schema_frame.iloc[:0], preserve_index=False)
            with self._named():
                pq.write_metadata(schema.with_metadata({**(schema.metadata or {}), **_meta(self.settings)}),
                                  self.dir / COMMON)
            os.chmod(self.dir / COMMON, _umask_mode())
            for tmp, final in self.pending:
                os.replace(tmp, final)
            os.chmod(self.dir, _umask_mode(dirs=True))  # mkdtemp made it 0700
            if self.target.exists():  # appeared meanwhile: keep it, do not merge blindly
                raise StoreError(f"{self.target}: created by someone else during this run; nothing written")
            os.rename(self.dir, self.target)
        else:
            for tmp, final in self.pending:
                os.replace(tmp, final)
        self.pending = []

    def abort(self) -> None:
        for tmp, _ in self.pending:
            tmp.unlink(missing_ok=True)
        self.pending = []
        if self.existing is None:
            shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> StoreWriter:  # noqa: PYI034 - a final class in all but name
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is not None:
            self.abort()


def check_columns(store: Store) -> None:
    """The store's columns must be the rows this analyzer writes (another version's rows are refused)."""
    import pyarrow.parquet as pq

    from analyzer.analysis.decisions import analyse

    have = list(pq.read_schema(store.path / COMMON).names)
    want = list(analyse([]).columns)
    if have != want:
        missing, extra = sorted(set(want) - set(have)), sorted(set(have) - set(want))
        raise StoreError(f"{store.path}: written by another version of the analyzer (columns missing: {missing}, "
                         f"unknown: {extra}); write it again with `analyzer decisions LOGS --out STORE`")


def collect_rows(items: Iterable[Checked], settings: Settings, execution: Execution | None = None, *,
                 store: Store | None = None, reasons: bool = False, subset: bool = False,
                 on_progress: Callable[[int], None] | None = None) -> pd.DataFrame:
    """Decision rows of the valid standard-game hands of ``items``: from ``store`` for the hands it holds,
    analysed on ``execution`` for the others, in input order (the same frame as analysing them all).

    Raises :class:`StoreError` when the store was written with other settings, holds a hand whose
    content differs from the log's, or holds hands the logs do not have (it came from other logs).
    Rows read from the store carry no reasons unless ``reasons`` (reasons are for rows that are shown).
    ``subset``: ``items`` are some of the store's logs' hands (a report page), so the store may hold others.
    """
    import pandas as pd

    from analyzer.analysis.decisions import analyse
    from analyzer.analysis.execute import Execution, analyse_items

    if store is not None:
        store.check_settings(settings)
        check_columns(store)
    seq_of: dict[str, int] = {}
    fresh = analyse_items(items, settings, execution or Execution(), reasons=reasons,
                          on_hand=_reuse(store, seq_of), on_progress=on_progress)
    if store is None:
        return fresh
    if not subset:
        _check_all_reused(store, seq_of)
    reused = list(seq_of)
    if not reused:
        return fresh
    old = read_rows(store, reused)
    old["hand_seq"] = old["hand_id"].map(seq_of).astype("int64")
    if not reasons:
        old["reasons"] = ""
    frames = [f for f in (old, fresh) if len(f)]
    out = pd.concat(frames, ignore_index=True) if frames else analyse([])
    return out.sort_values(["hand_seq", "action"], kind="stable").reset_index(drop=True)


def iter_rows(items: Iterable[Checked], settings: Settings, execution: Execution | None = None, *,
              store: Store | None = None, reasons: bool = False, seq_of: dict[str, int] | None = None,
              on_progress: Callable[[int], None] | None = None) -> Iterator[pd.DataFrame]:
    """The rows of :func:`collect_rows` as a stream of frames of whole hands, never all at once: first the
    store's parts (when given), each part's rows in the store's order, then the hands the store lacks as
    their batches are analysed, in input order. (The store of earlier days followed by today's hands is
    then input order, the order :func:`collect_rows` sorts into; a store written from the logs in
    another order gives the same rows in another order.)

    The store's rows keep the ``hand_seq`` they were written with; ``seq_of``, when given, receives every
    reused hand's place in this input (hand id -> seq) so a caller holding rows can renumber them. The
    checks are :func:`collect_rows`' (a store with hands the logs lack raises :class:`StoreError` once
    the input is read)."""
    from analyzer.analysis.execute import Execution, analysed_batches, shared_strings

    if store is not None:
        import pyarrow as pa

        from analyzer.analysis.decisions import analyse

        store.check_settings(settings)
        check_columns(store)
        dtypes = dict(analyse([]).dtypes.items())
        for part in store.parts:
            frame = shared_strings(_read_part(part).to_pandas().astype(dtypes))
            pa.default_memory_pool().release_unused()  # the part's Arrow buffers, else kept for reuse
            if not reasons:
                frame["reasons"] = ""
            if len(frame):
                yield frame
    seen: dict[str, int] = {} if seq_of is None else seq_of
    for _, frame in analysed_batches(items, settings, execution or Execution(), reasons=reasons,
                                     on_hand=_reuse(store, seen), on_progress=on_progress):
        if len(frame):
            yield shared_strings(frame)
    if store is not None:
        _check_all_reused(store, seen)


def _reuse(store: Store | None, seq_of: dict[str, int]) -> Callable[[Checked, int, str], bool]:
    """``hand_batches``' ``on_hand``: False (reuse, noting the hand's place in ``seq_of``) for a hand the store
    holds; :class:`StoreError` when the store's hand of that id has another fingerprint."""
    known = {} if store is None else store.hands

    def on_hand(item: Checked, seq: int, fp: str) -> bool:
        hid = str(item.record.hand_id)
        have = known.get(hid)
        if have is None:
            return True
        if have != fp:
            raise StoreError(f"{item.file}:{item.line}: hand {hid!r} differs from the hand of that id in "
                             f"{store.path if store else ''}: the store was written from other logs")
        seq_of[hid] = seq
        return False

    return on_hand


def _check_all_reused(store: Store, seq_of: dict[str, int]) -> None:
    """Every hand of the store must be among the logs' (else it came from other logs)."""
    if len(seq_of) < len(store.hands):
        extra = next(h for h in store.hands if h not in seq_of)
        raise StoreError(f"{store.path} holds {len(store.hands) - len(seq_of)} hand(s) that are not among the valid "
                         f"hands of these logs (e.g. {extra!r}): it was written from other logs; pass the logs it "
                         f"was written from (with any new ones)")
