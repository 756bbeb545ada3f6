"""The audit's one pass over the decision rows: each batch feeds the pair signals and a per-player spill, so no
consumer holds every decision at once; the evidence, the player table and the report read the spill.

Batches of whole hands (analysed, or read part by part from a decision store) go to two places as they come,
and are then dropped:

- :class:`analyzer.audit.stream.StreamedSignals` (the pair signals; compact chunks on disk, sums in memory);
- :class:`PlayerSpill`: each player's rows (every column but the unread ones; the per-row texts in a file of
  their own) appended to that player's files in a temporary folder. Everything after the pass reads it one
  player at a time (the player table: :func:`analyzer.analysis.players.player_table_by_player`; each player's
  report section) or as a small frame of the few rows it shows (the evidence's candidates, the shown hands, the
  top pairs' hands together: :meth:`PlayerSpill.frame`), so memory holds one player's rows or those few rows,
  not the room's. :class:`SpilledRows` is the report's view of the spill (:class:`FrameRows` the same over a
  whole frame in memory).

On Dask, when the workers share the spill's folder, a batch's rows are written there by the worker that analysed
them (:func:`write_batch`: two files a batch, each player's piece at an offset) and only a summary reaches the
client (:class:`WrittenBatch`, registered by :meth:`PlayerSpill.add_written`); a :class:`SpillView` (the files and
columns, picklable) lets tasks on the workers read players' rows (the player table, the evidence, the filtered
reads of :meth:`PlayerSpill.frame`).

``AuditRows(texts=True)`` (a library caller who wants the whole rows) also keeps them, pickled to disk while
they stream, for :meth:`AuditRows.decisions`.
"""

from __future__ import annotations

import pickle
import tempfile
from dataclasses import dataclass, field
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd

from analyzer.audit.signals import SignalOptions
from analyzer.audit.stream import StreamedSignals

#: Columns :func:`analyzer.analysis.players.player_table` reads.
PLAYER_COLUMNS = ("hand_id", "player", "p0", "p1", "p2", "p3", "seat", "chosen", "regret", "think_ms", "difficulty",
                  "options")
#: Columns nothing after the pass reads (the evidence, the player table, the shown rows' reasons, the report's
#: pages): with the texts dropped (``texts=False``, the command's slim audit) the spill leaves them out, 8 bytes
#: a decision each (``tests/audit/test_audit_slim.py`` checks the report is the same without them).
UNREAD_COLUMNS = ("table_id", "n_options", "samples_used", "scale")
#: The per-row options and reasons (most of a row's bytes): spilled to a file of their own, so the numbers are read
#: without them.
TEXT_COLUMNS = ("options", "reasons")
#: The columns the room's think-time figures read (``report.player.Room``).
TIMED_COLUMNS = ("think_ms", "difficulty")

Mask = Callable[[pd.DataFrame], np.ndarray]
#: :attr:`PlayerSpill.files`' mark of a file this process wrote (its pieces hold the rows' places).
OWN = -1
#: A player's file in the spill: rows file, texts file, place of the batch's first row (or OWN), offsets of its piece.
Entry = tuple[Path, Path, int, int, int]
#: A player's rows settled into one file (``SpillView._settle``): the file, per column where it is (kind, offset,
#: dtype, rows), and the sizes of the pieces the rows came in (the texts stay in those pieces).
Settled = tuple[Path, dict[str, tuple[str, int, str, int]], list[int]]


def _array(col: pd.Series) -> Any:
    """A column's values: a numpy array, or for a typed Arrow column (the options) its pandas Arrow array (taken
    from by position, pickled as Arrow buffers, never as a Python object a value)."""
    return col.array if isinstance(col.dtype, pd.ArrowDtype) else col.to_numpy()


def _dtype(a: Any) -> np.dtype[Any]:
    return a.dtype if isinstance(a, np.ndarray) else np.dtype(object)


def _pack(values: Any) -> tuple[Any, ...]:
    """A text column as one UTF-8 blob and the rows' end offsets (loaded back as two objects, not one a row,
    and decoded only for the rows wanted); a typed Arrow column as its Arrow array; values that are not all text
    are kept as they are."""
    if isinstance(values, pd.arrays.ArrowExtensionArray):
        return ("arrow", values.__arrow_array__().combine_chunks())
    if all(type(v) is str for v in values):
        enc = [v.encode() for v in values]
        return ("utf8", np.cumsum([len(b) for b in enc], dtype=np.int64), b"".join(enc))
    return ("raw", values)


def _unpack(packed: tuple[Any, ...], rows: np.ndarray) -> np.ndarray:
    """The values at ``rows`` (local positions) of a packed column."""
    if packed[0] == "raw":
        return np.asarray(packed[1], dtype=object)[rows]
    if packed[0] == "arrow":
        import pyarrow as pa

        return packed[1].take(pa.array(np.asarray(rows, np.int64)))
    _, ends, blob = packed
    out = np.empty(len(rows), dtype=object)
    if len(rows):
        stop = ends[rows]
        start = np.where(rows > 0, ends[np.maximum(rows - 1, 0)], 0)
        out[:] = [blob[a:b].decode() for a, b in zip(start.tolist(), stop.tolist())]
    return out


def _load(path: Path) -> list[Any]:
    pieces: list[Any] = []
    with open(path, "rb") as f:  # our own temporary file, read back by this process only
        while True:
            try:
                pieces.append(pickle.load(f))
            except EOFError:
                return pieces


def _load_at(path: Path, offset: int) -> Any:
    with open(path, "rb") as f:  # a spill's file, written by this process or a worker of this audit
        f.seek(offset)
        return pickle.load(f)


class PlayerSpill:
    """Each player's rows in files of their own (pickled arrays appended batch by batch: the numbers and names
    in one file, the texts in another), read back one player at a time; a row's place in the order the rows
    were added is its index in every frame read back. ``skip``: columns not kept."""

    def __init__(self, spill_dir: str | None = None, skip: Iterable[str] = ()) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="bieqi-players-", dir=spill_dir)
        self.folder = self._tmp.name
        # per player its files in the order of its rows: (rows file, texts file, place of the batch's first row
        # and the player's piece's offsets in the two files (a worker's batch); or OWN, 0, 0 for a file this process
        # appends the player's pieces to, which hold their places themselves)
        self.files: dict[str, list[Entry]] = {}
        self.rows = 0
        self.skip = set(skip)
        self.columns: list[str] = []  # the union of the rows' columns, in the order they came
        self._dtypes: dict[str, set[np.dtype[Any]]] = {}
        self._lacking: set[str] = set()  # columns some batches lack (NaN there, as pd.concat gives)
        #: hand id -> its place in the input, for rows reused from a store (``audit.core.decision_stream``)
        self.seq_of: dict[str, int] = {}
        #: a Dask connection whose workers share the folder (they wrote the batches): reads run there
        self.connection: Any = None
        self._shared: tuple[int, Any] | None = None
        #: each player's rows rewritten a column at a time on its first read here (``SpillView._settle``)
        self.settled: dict[str, Settled] = {}

    def add(self, df: pd.DataFrame) -> None:
        self.settled.clear()  # rows added after a read: read the pieces again (their files stay until close)
        cols = [c for c in df.columns if c not in self.skip]
        if self.rows:
            self._lacking |= {c for c in cols if c not in self.columns} | {c for c in self.columns if c not in cols}
        self.columns += [c for c in cols if c not in self.columns]
        arrays = {c: _array(df[c]) for c in cols}
        for c, a in arrays.items():
            self._dtypes.setdefault(c, set()).add(_dtype(a))
        pos = np.arange(self.rows, self.rows + len(df), dtype=np.int64)
        self.rows += len(df)
        for name, idx in df.groupby("player", sort=False).indices.items():
            key = str(name)
            entries = self.files.setdefault(key, [])
            if not entries or entries[-1][2] != OWN:  # a file of this process' own, after any batch's a worker wrote
                stem = Path(self._tmp.name) / f"player-{sum(map(len, self.files.values())):06d}"
                entries.append((stem.with_suffix(".rows"), stem.with_suffix(".texts"), OWN, 0, 0))
            rows_path, texts_path = entries[-1][:2]
            # plain arrays, not frames: a room's spill is thousands of pieces, and unpickling a frame costs ~1 ms
            with open(rows_path, "ab") as f:
                pickle.dump({"_pos": pos[idx], **{c: a[idx] for c, a in arrays.items() if c not in TEXT_COLUMNS}},
                            f, protocol=pickle.HIGHEST_PROTOCOL)
            with open(texts_path, "ab") as f:
                pickle.dump({c: _pack(a[idx]) for c, a in arrays.items() if c in TEXT_COLUMNS}, f,
                            protocol=pickle.HIGHEST_PROTOCOL)

    def add_written(self, batch: WrittenBatch) -> None:
        """Register a batch whose rows a worker wrote into this spill's folder (:func:`write_batch`): its places
        follow the rows added so far."""
        self.settled.clear()
        cols = [c for c in batch.columns if c not in self.skip]
        if self.rows:
            self._lacking |= {c for c in cols if c not in self.columns} | {c for c in self.columns if c not in cols}
        self.columns += [c for c in cols if c not in self.columns]
        for c in cols:
            self._dtypes.setdefault(c, set()).add(batch.dtypes[c])
        for player, rows_path, texts_path, at_rows, at_texts in batch.files:
            self.files.setdefault(player, []).append((Path(rows_path), Path(texts_path), self.rows, at_rows, at_texts))
        self.rows += batch.rows

    def view(self) -> SpillView:
        """What reading the spill needs, without the folder's ownership (picklable: a Dask task reads a player's
        rows on a worker that shares the folder)."""
        return SpillView(self.files, list(self.columns), {c: self.dtype(c) for c in self.columns}, self.seq_of,
                         # reads here settle each player's rows once; a view sent to workers reads the pieces
                         self.settled if self.connection is None else None)

    def dtype(self, column: str) -> np.dtype[Any]:
        """The column's type in the whole frame (np.concatenate's; NaN where a batch lacks it)."""
        kinds = list(self._dtypes.get(column, ())) + ([np.dtype(float)] if column in self._lacking else [])
        return np.result_type(*kinds) if kinds else np.dtype(float)

    def part(self, player: str, *, columns: Iterable[str] | None = None, texts: Iterable[str] = (),
             where: Mask | None = None) -> pd.DataFrame:
        """One player's rows (only ``columns``, default all but the texts; the ``texts`` columns read too; only
        the rows where ``where(frame)`` is true), indexed by their places, with the hand numbers of this input."""
        return self.view().part(player, columns=columns, texts=texts, where=where)

    def parts(self, **kw: Any) -> Iterator[pd.DataFrame]:
        """Every player's rows, one frame per player (in the order the rows were added), players in turn
        (the options of :meth:`part`)."""
        for player in self.files:
            yield self.part(player, **kw)

    def frame(self, where: Mask | None = None, *, texts: Iterable[str] = (),
              players: Iterable[str] | None = None, columns: Iterable[str] | None = None) -> pd.DataFrame:
        """The rows where ``where(frame)`` is true (of ``players``, default all; only ``columns``, which must
        hold what ``where`` reads), in order, indexed by their places. With a Dask ``connection`` whose workers share
        the spill's folder, each player's rows are read and filtered there (one task a group of players)."""
        texts = list(texts)
        columns = None if columns is None else list(columns)
        names = [p for p in (self.files if players is None else players) if p in self.files]
        if self.connection is not None and len(names) > 1:
            from analyzer.running.dask import lost_retried, share, task_groups

            client = self.connection.client

            def read(attempt: int) -> list[pd.DataFrame]:
                view = self.shared_view(fresh=attempt > 0)  # the view again when a worker went with it
                # the filter pickled once, not once a task (a closure goes by value: ~5 ms of the client's CPU each)
                shared = where if where is None else share(client, where)
                groups = task_groups(client, names)
                return [f for got in client.gather([client.submit(_parts_of, view, g, shared, texts, columns, pure=False)
                                                    for g in groups]) for f in got]

            got = lost_retried(client, read)
        else:
            got = [self.part(p, where=where, texts=texts, columns=columns) for p in names]
        return _joined(self.view(), [f for f in got if len(f)], texts, columns)

    def shared_view(self, fresh: bool = False) -> Any:
        """:meth:`view` scattered to the cluster of ``connection`` (``running.dask.share``; once, after the rows are all
        added; the future is held here, so the value stays on the cluster while the spill is read). Scattered again when
        ``fresh`` (a task that read it was lost with a worker: ``running.dask.lost_retried``) or when the cluster lost
        it (a scattered value has no lineage)."""
        from analyzer.running.dask import share

        have = self._shared
        if fresh or have is None or have[0] != self.rows or getattr(have[1], "status", "finished") != "finished":
            have = self._shared = (self.rows, share(self.connection.client, self.view()))
        return have[1]

    def close(self) -> None:
        self._shared = None  # the scattered view: released on the cluster
        self._tmp.cleanup()


def _parts_of(view: SpillView, players: list[str], where: Mask | None, texts: list[str], columns: list[str] | None
              ) -> list[pd.DataFrame]:
    """Each of ``players``' rows (:meth:`SpillView.part`), in turn; a Dask task on a worker that shares the spill."""
    return [view.part(p, where=where, texts=texts, columns=columns) for p in players]


def _joined(view: SpillView, got: list[pd.DataFrame], texts: list[str], columns: list[str] | None) -> pd.DataFrame:
    """Players' rows (non-empty frames) as one frame in the rows' order (an empty typed frame for none)."""
    if not got:
        cols = [c for c in view.columns if (c not in TEXT_COLUMNS and (columns is None or c in columns))
                or c in texts]
        return pd.DataFrame({c: np.zeros(0, view.dtype(c)) if c not in TEXT_COLUMNS else _no_text(c, 0) for c in cols})
    out = pd.concat(got).sort_index()
    return out[[c for c in view.columns if c in out.columns]]


def frame_of(view: SpillView, where: Mask | None, *, texts: Iterable[str] = (), players: Iterable[str],
             columns: Iterable[str] | None = None) -> pd.DataFrame:
    """:meth:`PlayerSpill.frame` over a view (e.g. in a task on a worker)."""
    texts = list(texts)
    columns = None if columns is None else list(columns)
    got = [view.part(p, where=where, texts=texts, columns=columns) for p in players if p in view.files]
    return _joined(view, [f for f in got if len(f)], texts, columns)


class SpillView:
    """A :class:`PlayerSpill`'s files and columns, to read players' rows (here, or in a Dask task on a worker that
    shares the spill's folder); it owns nothing (the spill deletes the folder)."""

    def __init__(self, files: dict[str, list[Entry]], columns: list[str],
                 dtypes: dict[str, np.dtype[Any]], seq_of: dict[str, int],
                 settled: dict[str, Settled] | None = None) -> None:
        self.files, self.columns, self.dtypes, self.seq_of = files, columns, dtypes, seq_of
        #: the players' rows rewritten a column at a time on their first read (:meth:`_settle`), shared with the
        #: spill that owns the folder; None: read the pieces as written, every time (a view sent to Dask workers)
        self.settled = settled

    def dtype(self, column: str) -> np.dtype[Any]:
        return self.dtypes.get(column, np.dtype(float))

    def _pieces(self, player: str) -> list[dict[str, np.ndarray]]:
        """The player's pieces as written (one a batch), with their places among all the rows."""
        pieces: list[dict[str, np.ndarray]] = []
        for rows_path, _, base, at, _ in self.files[player]:
            if base == OWN:
                pieces.extend(_load(rows_path))
                continue
            p = _load_at(rows_path, at)  # a worker's batch: its places are the batch's own
            p["_pos"] = p["_pos"] + base
            pieces.append(p)
        return pieces

    def _joined_columns(self, pieces: list[dict[str, np.ndarray]], want: list[str]) -> dict[str, np.ndarray]:
        """The pieces' columns ``want`` as one array each, in the whole frame's type (NaN where a piece lacks it)."""
        return {c: np.concatenate([p[c] if c in p else np.full(len(p["_pos"]), np.nan) for p in pieces]).astype(
            np.int64 if c == "_pos" else self.dtype(c), copy=False) for c in want}

    def _settle(self, player: str) -> Settled:
        """Write the player's rows (every column but the texts) into one file of its own, a column after another
        (numbers as raw bytes, texts as codes and their distinct values), so each later read of the player loads
        only the columns it wants, at once, instead of unpickling every batch's piece whole."""
        pieces = self._pieces(player)
        sizes = [len(p["_pos"]) for p in pieces]
        cols = self._joined_columns(pieces, ["_pos", *(c for c in self.columns if c not in TEXT_COLUMNS)])
        del pieces
        path = self.files[player][0][0].with_name(f"settled-{len(self.settled or ()):06d}.cols")
        where: dict[str, tuple[str, int, str, int]] = {}
        with open(path, "wb") as f:  # our own temporary file, in the spill's folder
            for c, a in cols.items():
                if a.dtype != object:
                    where[c] = ("num", f.tell(), a.dtype.str, len(a))
                    f.write(np.ascontiguousarray(a).tobytes())
                elif pd.api.types.infer_dtype(a, skipna=False) == "string":  # names, ids, cards: a few distinct
                    codes, uniq = pd.factorize(a)
                    where[c] = ("codes", f.tell(), "", len(a))
                    pickle.dump((codes.astype(np.int32), _distinct(np.asarray(uniq, dtype=object))), f,
                                protocol=pickle.HIGHEST_PROTOCOL)
                else:  # anything else (missing values among texts): as it is
                    where[c] = ("obj", f.tell(), "", len(a))
                    pickle.dump(a, f, protocol=pickle.HIGHEST_PROTOCOL)
        settled = (path, where, sizes)
        assert self.settled is not None
        self.settled[player] = settled
        return settled

    def _read(self, player: str, want: list[str]) -> tuple[dict[str, Any], list[int]]:
        """The player's columns ``want`` and ``_pos`` (each as one array) and the sizes of its pieces."""
        if self.settled is None:  # e.g. on a Dask worker: the pieces as they were written
            pieces = self._pieces(player)
            return self._joined_columns(pieces, ["_pos", *want]), [len(p["_pos"]) for p in pieces]
        path, where, sizes = self.settled.get(player) or self._settle(player)
        data: dict[str, Any] = {}
        with open(path, "rb") as f:
            for c in ["_pos", *want]:
                kind, at, dt, n = where[c]
                f.seek(at)
                if kind == "num":
                    data[c] = np.fromfile(f, np.dtype(dt), n)
                elif kind == "codes":
                    data[c] = _Coded(*pickle.load(f))
                else:
                    data[c] = pickle.load(f)
        return data, sizes

    def part(self, player: str, *, columns: Iterable[str] | None = None, texts: Iterable[str] = (),
             where: Mask | None = None) -> pd.DataFrame:
        """:meth:`PlayerSpill.part`."""
        entries = self.files[player]
        want = [c for c in (self.columns if columns is None else columns)
                if c in self.columns and c not in TEXT_COLUMNS]
        seq_ids = bool("hand_seq" in want and self.seq_of and "hand_id" not in want)
        data, sizes = self._read(player, want + ["hand_id"] if seq_ids else want)
        index = pd.Index(data.pop("_pos"))
        if "hand_seq" in data and self.seq_of:
            ids = data.pop("hand_id") if seq_ids else data["hand_id"]
            if isinstance(ids, _Coded):  # each distinct hand id looked up once (places are >= 0)
                got = np.array([self.seq_of.get(h, -1) for h in ids.values()], np.int64)[ids.codes]
                data["hand_seq"] = np.where(got >= 0, got, data["hand_seq"]).astype(np.int64)
            else:
                seq = pd.Series(ids).map(self.seq_of)
                data["hand_seq"] = seq.fillna(pd.Series(data["hand_seq"])).astype("int64").to_numpy()
        keep = None if where is None else np.asarray(where(_frame(data, index)), bool)
        if keep is not None:
            data = {c: a[keep] for c, a in data.items()}
            index = index[keep]
        texts = [c for c in texts if c in self.columns]
        if texts:
            local = np.arange(sum(sizes)) if keep is None else np.flatnonzero(keep)
            starts = np.concatenate([[0], np.cumsum(sizes)])
            piece_of = np.searchsorted(starts, local, side="right") - 1
            values: dict[str, list[np.ndarray]] = {c: [] for c in texts}
            k = 0
            for _, texts_path, base, _, at in entries:
                for packed in (_load(texts_path) if base == OWN else [_load_at(texts_path, at)]):
                    rows = local[piece_of == k] - starts[k]
                    k += 1
                    for c in texts:
                        values[c].append(_unpack(packed[c], rows) if c in packed else _no_text(c, len(rows)))
            for c in texts:
                data[c] = _joined_texts(c, values[c])
        return _frame(data, index)


def _no_text(column: str, rows: int) -> Any:
    """``rows`` values of a text column for rows that lack it: no options, or an empty text."""
    if column == "options":
        from analyzer.analysis.options import empty_options

        return empty_options(rows)
    return np.full(rows, "", object)


def _joined_texts(column: str, values: list[Any]) -> Any:
    """A text column's pieces as one array (the options as their typed column)."""
    if column == "options" or any(not isinstance(v, np.ndarray) for v in values):
        from analyzer.analysis.options import concat_options

        return concat_options(values) if values else _no_text(column, 0)
    return np.concatenate(values) if values else np.zeros(0, object)


class _Coded:
    """A settled text column: codes into its distinct values (``uniq``: a pyarrow array of them where pandas keeps
    texts in its pyarrow string type, else an object array). Made into the frame's text column by one take of the
    distinct values after the rows are filtered: ~6x cheaper than pandas inferring its type from every row's object."""

    def __init__(self, codes: np.ndarray, uniq: Any) -> None:
        self.codes, self.uniq = codes, uniq

    def __getitem__(self, keep: np.ndarray) -> _Coded:
        return _Coded(self.codes[keep], self.uniq)

    def __len__(self) -> int:
        return len(self.codes)

    def values(self) -> list[Any]:
        """The distinct values, as Python objects."""
        return self.uniq.tolist() if isinstance(self.uniq, np.ndarray) else self.uniq.to_pylist()

    def column(self) -> Any:
        if isinstance(self.uniq, np.ndarray):  # object (pandas 2) or Python strings: as pandas infers
            return pd.array(self.uniq[self.codes], dtype=_text_dtype())
        import pyarrow as pa

        return pd.arrays.ArrowStringArray(self.uniq.take(pa.array(self.codes)), dtype=_text_dtype())


def _distinct(uniq: np.ndarray) -> Any:
    """:class:`_Coded`'s distinct values as kept on disk: a pyarrow array when pandas' texts are its pyarrow
    strings (it unpickles ~15x faster than as many Python strings, and is taken from directly)."""
    if getattr(_text_dtype(), "storage", None) != "pyarrow":
        return uniq
    import pyarrow as pa

    return pa.array(uniq, pa.large_string())


_TEXT_DTYPE: list[Any] = []


def _text_dtype() -> Any:
    """The type pandas gives a column of texts (its string type, or object)."""
    if not _TEXT_DTYPE:
        _TEXT_DTYPE.append(pd.Series(np.array(["x"], dtype=object)).dtype)
    return _TEXT_DTYPE[0]


def _frame(data: dict[str, Any], index: pd.Index) -> pd.DataFrame:
    """The columns as a frame (settled text columns made once for the rows kept)."""
    return pd.DataFrame({c: a.column() if isinstance(a, _Coded) else a for c, a in data.items()}, index=index,
                        copy=False)


@dataclass
class WrittenBatch:
    """A batch of rows a worker wrote into a spill's folder (:func:`write_batch`), as the client registers it
    (:meth:`PlayerSpill.add_written`): its size, columns and, per player, the two files (rows, texts). The
    rows stay on the worker (the pair signals' chunk and the think-time sums are made there too)."""

    rows: int
    hands: int
    columns: list[str]
    dtypes: dict[str, np.dtype[Any]]
    files: list[tuple[str, str, str, int, int]]  # (player, rows file, texts file, the player's pieces' offsets)
    attrs: dict[str, Any] = field(default_factory=dict)
    hand_ids: list[str] = field(default_factory=list)  # in the order the batch's chunk numbers its hands

    def __len__(self) -> int:
        return self.rows


def write_batch(df: pd.DataFrame, folder: str, name: str, skip: Iterable[str] = ()) -> WrittenBatch:
    """Write a batch's rows into a spill's ``folder`` (shared with the client): two files for the batch (``name``:
    its unique stem; the numbers and names, and the texts), each player's rows one piece in each, as
    :meth:`PlayerSpill.add` pickles them, with the batch's own places (the client adds the batch's first place
    when it reads them) and each piece's offset in its file (a reader seeks to its player's). Two files a batch,
    not two a player and batch: opening and deleting thousands of small files cost more than reading them.
    Runs on a worker."""
    from analyzer.analysis.execute import shared_strings

    skip = set(skip)
    df = shared_strings(df)  # one object per repeated text: pickled once per piece, not once a row
    cols = [c for c in df.columns if c not in skip]
    arrays = {c: _array(df[c]) for c in cols}
    pos = np.arange(len(df), dtype=np.int64)
    files: list[tuple[str, str, str, int, int]] = []
    stem = Path(folder) / name
    rows_path, texts_path = stem.with_suffix(".rows"), stem.with_suffix(".texts")
    with open(rows_path, "wb") as fr, open(texts_path, "wb") as ft:
        for player, idx in df.groupby("player", sort=False).indices.items():
            files.append((str(player), str(rows_path), str(texts_path), fr.tell(), ft.tell()))
            pickle.dump({"_pos": pos[idx], **{c: a[idx] for c, a in arrays.items() if c not in TEXT_COLUMNS}},
                        fr, protocol=pickle.HIGHEST_PROTOCOL)
            pickle.dump({c: _pack(a[idx]) for c, a in arrays.items() if c in TEXT_COLUMNS}, ft,
                        protocol=pickle.HIGHEST_PROTOCOL)
    return WrittenBatch(len(df), int(df["hand_id"].nunique()), cols, {c: _dtype(a) for c, a in arrays.items()}, files,
                        hand_ids=pd.unique(df["hand_id"].astype(str)).tolist())


class ReportRows(Protocol):
    """The decision rows as the report reads them: a player at a time, a few rows at a time, or the room's
    columns for its figures (:class:`FrameRows` over a whole frame, :class:`SpilledRows` over the spill)."""

    def __len__(self) -> int: ...

    def parts(self, columns: list[str] | None = None) -> Iterator[pd.DataFrame]: ...

    def where(self, mask: Mask, columns: list[str] | None = None) -> pd.DataFrame: ...

    def regret(self) -> tuple[pd.Series, pd.DataFrame]: ...

    def timed(self) -> pd.DataFrame | None: ...


def _by_player(df: pd.DataFrame) -> pd.DataFrame:
    return df.groupby("player")["regret"].agg(["mean", "size"])


class FrameRows:
    """:class:`ReportRows` over a whole frame of rows in memory."""

    def __init__(self, df: pd.DataFrame) -> None:
        self.df = df

    def __len__(self) -> int:
        return len(self.df)

    def parts(self, columns: list[str] | None = None) -> Iterator[pd.DataFrame]:
        """Each player's rows (all the columns, of which ``columns`` are the ones read)."""
        for idx in self.df.groupby("player", sort=False).indices.values():
            yield self.df.iloc[idx]

    def where(self, mask: Mask, columns: list[str] | None = None) -> pd.DataFrame:
        """The rows where ``mask(frame)`` is true (all the columns, of which ``columns`` are the ones read)."""
        return self.df[np.asarray(mask(self.df), bool)]

    def regret(self) -> tuple[pd.Series, pd.DataFrame]:
        """Every row's regret in row order, and each player's mean regret and decisions."""
        return self.df["regret"], _by_player(self.df)

    def timed(self) -> pd.DataFrame | None:
        """Think time and difficulty of the rows with both (None without think times)."""
        return self.df[list(TIMED_COLUMNS)].dropna() if "think_ms" in self.df else None


class SpilledRows:
    """:class:`ReportRows` over a :class:`PlayerSpill`: every row's numbers, and the texts of the ``shown`` rows
    only (a frame indexed by their places; ``""`` elsewhere), as the audit's slim rows had them."""

    def __init__(self, spill: PlayerSpill, shown: pd.DataFrame | None = None) -> None:
        self.spill = spill
        self.shown = shown

    def __len__(self) -> int:
        return self.spill.rows

    def texted(self, df: pd.DataFrame, columns: list[str] | None = None) -> pd.DataFrame:
        """``df`` (rows of the spill, indexed by their places) with the text columns (``columns`` of TEXT_COLUMNS, all
        by default, set in ``df`` itself): the texts of the rows shown, empty for the others (the spill keeps none)."""
        for c in TEXT_COLUMNS:
            if c in self.spill.columns and (columns is None or c in columns):
                if c == "options":  # the typed column: the shown rows' options, none for the others
                    from analyzer.analysis.options import options_at

                    at = (self.shown.index.get_indexer(df.index) if self.shown is not None and c in self.shown.columns
                          else np.full(len(df), -1))
                    df[c] = pd.Series(options_at(self.shown[c] if self.shown is not None and c in self.shown.columns
                                                 else _no_text(c, 0), at), index=df.index)
                    continue
                col = np.full(len(df), "", dtype=object)
                if self.shown is not None and c in self.shown.columns:
                    hit = df.index.isin(self.shown.index)
                    col[hit] = self.shown[c].reindex(df.index[hit]).to_numpy(object)
                df[c] = col
        order = [c for c in self.spill.columns if c in df.columns]
        return df if list(df.columns) == order else df[order]

    def parts(self, columns: list[str] | None = None) -> Iterator[pd.DataFrame]:
        """Each player's rows in turn (only ``columns``; default all)."""
        for part in self.spill.parts(columns=columns):
            yield self.texted(part, columns)

    def where(self, mask: Mask | None, columns: list[str] | None = None) -> pd.DataFrame:
        """The rows where ``mask(frame)`` is true (only ``columns``, which must hold what ``mask`` reads;
        default all), in order, indexed by their places."""
        return self.texted(self.spill.frame(mask, columns=columns), columns)

    def regret(self) -> tuple[pd.Series, pd.DataFrame]:
        """Every row's regret in row order (8 bytes a decision, while the room's regret figures are made) and
        each player's mean regret and decisions (per player: a group's mean adds its rows in the same order
        as the room's groupby)."""
        out = np.full(self.spill.rows, np.nan, self.spill.dtype("regret"))
        by: list[pd.DataFrame] = []
        for part in self.spill.parts(columns=["player", "regret"]):
            out[part.index.to_numpy()] = part["regret"].to_numpy()
            by.append(_by_player(part))
        return (pd.Series(out, name="regret", copy=False),
                pd.concat(by).sort_index() if by else pd.DataFrame({"mean": [], "size": []}))

    def timed(self) -> pd.DataFrame | None:
        """Think time and difficulty of the rows with both, player by player (their figures do not depend
        on the order)."""
        if "think_ms" not in self.spill.columns:
            return None
        got = [p.dropna() for p in self.spill.parts(columns=list(TIMED_COLUMNS))]
        return pd.concat(got, ignore_index=True) if got else None


class AuditRows:
    """Feed decision rows of whole hands (:meth:`add`, in input order); then the pair signals
    (``signals.result``, then :meth:`drop_signals`) and each player's rows (``players``, the spill).

    ``texts``: also keep every row whole for :meth:`decisions` (a library caller who wants the rows; the audit
    command does not). ``reasons``: the rows carry reasons from the analysis (spilled with the options: they
    cannot be made again when the input was stdin). Without the texts, the :data:`UNREAD_COLUMNS` are not
    spilled.
    """

    def __init__(self, options: SignalOptions = SignalOptions(), *, texts: bool = True, reasons: bool = False,
                 spill_dir: str | None = None, signals: StreamedSignals | None = None) -> None:
        # ``signals``: another accumulator of the pair signals (on Dask: ``audit.on_dask.DaskSignals``)
        self.signals: StreamedSignals | None = signals if signals is not None else StreamedSignals(options, spill_dir)
        self.unread = () if texts else UNREAD_COLUMNS
        self.players = PlayerSpill(spill_dir, skip=self.unread)
        self.texts = texts
        self.reasons = reasons
        #: a Dask connection whose workers write and read the spill's folder (``audit.on_dask.DaskSignals.write_spill``):
        #: the player table then runs there, one task a group of players
        self.connection: Any = None
        # the whole rows wait on disk (pickled pieces), so memory never holds them twice, nor while the rows
        # stream: the frame is allocated once, at its final size, and filled piece by piece
        self._tmp = tempfile.TemporaryDirectory(prefix="bieqi-rows-", dir=spill_dir) if texts else None
        self._pieces = Path(self._tmp.name) / "rows.pickle" if self._tmp is not None else None
        self.dtypes: dict[str, list[np.dtype[Any]]] = {}
        self.columns: list[str] | None = None
        self.rows = 0
        self._count = 0  # pieces added

    def __enter__(self) -> AuditRows:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def drop_signals(self) -> None:
        """Free the pair signals' chunks and per-hand numbers (once the pair table is made)."""
        if self.signals is not None:
            self.signals.close()
            self.signals = None

    def close(self) -> None:
        self.drop_signals()
        self.players.close()
        if self._tmp is not None:
            self._tmp.cleanup()

    def add(self, df: pd.DataFrame | WrittenBatch) -> None:
        """Feed a batch of rows of whole hands (or a batch a worker wrote into the spill's folder)."""
        if not len(df):
            return
        if self.columns is None:
            self.columns = []
        if isinstance(df, WrittenBatch):  # its rows stay on the worker: the spill and the signals take its summary
            assert self._pieces is None, "whole rows are kept here: the batches must come back"
            self.columns += [c for c in df.columns if c not in self.columns]
            assert self.signals is not None, "rows added after the signals were dropped"
            self.signals.feed_written(df)  # type: ignore[attr-defined]  # only DaskSignals' connections write batches
            self.players.add_written(df)
            self._count += 1
            self.rows += len(df)
            return
        # another variant's rows may carry other columns: the union, missing values as pd.concat gives them
        self.columns += [c for c in df.columns if c not in self.columns]
        assert self.signals is not None, "rows added after the signals were dropped"
        self.signals.feed(df)
        self.players.add(df)
        self._count += 1
        self.rows += len(df)
        if self._pieces is None:
            return
        piece = {c: _array(df[c]) for c in df.columns}
        for c, a in piece.items():
            self.dtypes.setdefault(c, []).append(_dtype(a))
        with open(self._pieces, "ab") as f:  # our own temporary file, read back by this process only
            pickle.dump((len(df), piece), f, protocol=pickle.HIGHEST_PROTOCOL)

    def decisions(self) -> pd.DataFrame:
        """The rows added, in order (each column allocated once at its size); without ``texts``, from the spill
        (the texts as "", no unread columns)."""
        from analyzer.analysis.decisions import analyse

        if not self.rows or self.columns is None:
            return analyse([])
        if self._pieces is None:
            return SpilledRows(self.players).where(None).reset_index(drop=True)
        n = self.rows
        cols: dict[str, Any] = {}
        typed: dict[str, list[Any]] = {}  # the typed Arrow columns (the options): their pieces, joined at the end
        for c in self.columns:
            if c == "options":
                typed[c] = []
                continue
            have = self.dtypes.get(c, [])
            kinds = have + ([np.dtype(float)] if len(have) < self._count else [])
            cols[c] = np.empty(n, np.result_type(*kinds))
        start = 0
        with open(self._pieces, "rb") as f:
            while start < n:
                k, piece = pickle.load(f)
                for c, col in cols.items():
                    col[start:start + k] = piece[c] if c in piece else np.nan
                for c, got in typed.items():
                    got.append(piece[c] if c in piece else _no_text(c, k))
                start += k
        self._pieces.unlink()
        self._pieces = None
        for c, got in typed.items():
            cols[c] = _joined_texts(c, got)
        # copy=False: one block a column, no consolidation (which would copy every number once more)
        return pd.DataFrame({c: cols[c] for c in self.columns}, copy=False)
