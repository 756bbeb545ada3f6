"""The audit's one pass over the decision rows: each batch feeds the pair signals, a per-player spill and the
report's rows, so no consumer needs every decision's options at once.

Batches of whole hands (analysed, or read part by part from a decision store) go to three places as they
come, and are then dropped:

- :class:`analyzer.audit.stream.StreamedSignals` (the pair signals; compact chunks on disk, sums in memory);
- :class:`PlayerSpill`: each player's rows (the columns the player table reads, options included) appended to
  that player's file in a temporary folder; the player table then reads one player's rows at a time
  (:func:`analyzer.analysis.players.player_table_by_player`), so its memory is one player's rows;
- the rows the report and the evidence read: every column but the per-row texts (options, and reasons unless
  the analysis wrote them), pickled to a temporary file while the rows stream and read back at the end into
  columns allocated once (~0.26 KB a decision instead of ~1 KB; without the texts, the :data:`UNREAD_COLUMNS`
  are not held at all); the texts of the rows the audit shows are
  read back from the player spill.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from analyzer.audit.signals import SignalOptions
from analyzer.audit.stream import StreamedSignals

#: Columns :func:`analyzer.analysis.players.player_table` reads (and the row's place, ``_pos``).
PLAYER_COLUMNS = ("hand_id", "player", "p0", "p1", "p2", "p3", "seat", "chosen", "regret", "think_ms", "difficulty",
                  "options")
#: Columns nothing after the pass reads (the evidence, the player table, the shown rows' reasons, the report's
#: pages): with the texts dropped (``texts=False``, the command's slim audit) the report's rows leave them out,
#: 8 bytes a decision each (``tests/test_audit_slim.py`` checks the report is the same without them).
UNREAD_COLUMNS = ("table_id", "n_options", "samples_used", "scale")


class PlayerSpill:
    """Each player's rows in a file of their own (pickled frames appended batch by batch), read back one
    player at a time; ``_pos`` is each row's place in the order the rows were added."""

    def __init__(self, spill_dir: str | None = None) -> None:
        self._tmp = tempfile.TemporaryDirectory(prefix="bieqi-players-", dir=spill_dir)
        self.files: dict[str, Path] = {}
        self.rows = 0

    def add(self, df: pd.DataFrame) -> None:
        cols = [c for c in PLAYER_COLUMNS if c in df.columns]
        arrays = {c: df[c].to_numpy() for c in cols}
        arrays["_pos"] = np.arange(self.rows, self.rows + len(df), dtype=np.int64)
        self.rows += len(df)
        for name, idx in df.groupby("player", sort=False).indices.items():
            path = self.files.setdefault(str(name), Path(self._tmp.name) / f"player-{len(self.files):06d}.pickle")
            # plain arrays, not frames: a room's spill is thousands of pieces, and unpickling a frame costs ~1 ms
            with open(path, "ab") as f:  # our own temporary file, read back by this process only
                pickle.dump({c: a[idx] for c, a in arrays.items()}, f, protocol=pickle.HIGHEST_PROTOCOL)

    def parts(self, columns: list[str] | None = None) -> Iterator[pd.DataFrame]:
        """Every player's rows, one frame per player (in the order the rows were added), players in turn."""
        for path in self.files.values():
            pieces: list[dict[str, np.ndarray]] = []
            with open(path, "rb") as f:
                while True:
                    try:
                        pieces.append(pickle.load(f))
                    except EOFError:
                        break
            names = columns or list(pieces[0])
            yield pd.DataFrame({c: np.concatenate([p[c] for p in pieces]) for c in names})

    def close(self) -> None:
        self._tmp.cleanup()


class AuditRows:
    """Feed decision rows of whole hands (:meth:`add`, in input order); then the pair signals
    (``signals.result``), each player's rows (``players.parts()``) and the report's rows (:meth:`decisions`).

    ``texts``: keep the options (and reasons) of every row for :meth:`decisions` (the whole rows, as a
    library caller may want them); otherwise they are "" there until :meth:`fill_options` puts back those
    of the rows shown. ``reasons``: the rows carry reasons from the analysis (kept: they cannot be made
    again when the input was stdin). Without the texts, the :data:`UNREAD_COLUMNS` are left out of
    :meth:`decisions` too.
    """

    def __init__(self, options: SignalOptions = SignalOptions(), *, texts: bool = True, reasons: bool = False,
                 spill_dir: str | None = None, signals: StreamedSignals | None = None) -> None:
        # ``signals``: another accumulator of the pair signals (on Dask: ``audit.on_dask.DaskSignals``)
        self.signals = signals if signals is not None else StreamedSignals(options, spill_dir)
        self.players = PlayerSpill(spill_dir)
        self.drop = () if texts else ("options",) if reasons else ("options", "reasons")
        self.unread = () if texts else UNREAD_COLUMNS  # not held, not in :meth:`decisions`
        # the report's rows wait on disk (pickled pieces), so memory never holds them twice, nor while the
        # rows stream: the frame is allocated once, at its final size, and filled piece by piece
        self._tmp = tempfile.TemporaryDirectory(prefix="bieqi-rows-", dir=spill_dir)
        self._pieces = Path(self._tmp.name) / "rows.pickle"
        self.dtypes: dict[str, list[np.dtype[Any]]] = {}
        self.columns: list[str] | None = None
        self.rows = 0
        self._count = 0  # pieces added

    def __enter__(self) -> AuditRows:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.signals.close()
        self.players.close()
        self._tmp.cleanup()

    def add(self, df: pd.DataFrame) -> None:
        if not len(df):
            return
        if self.columns is None:
            self.columns = []
        # another variant's rows may carry other columns: the union, missing values as pd.concat gives them
        self.columns += [c for c in df.columns if c not in self.columns]
        self.signals.feed(df)
        self.players.add(df)
        self._count += 1
        piece = {c: df[c].to_numpy() for c in df.columns if c not in self.drop and c not in self.unread}
        for c, a in piece.items():
            self.dtypes.setdefault(c, []).append(a.dtype)
        with open(self._pieces, "ab") as f:  # our own temporary file, read back by this process only
            pickle.dump((len(df), piece), f, protocol=pickle.HIGHEST_PROTOCOL)
        self.rows += len(df)

    def decisions(self) -> pd.DataFrame:
        """The rows added, in order, with the dropped texts as "" and without the unread columns (each
        column allocated once at its size)."""
        from analyzer.analysis.decisions import analyse

        if not self.rows or self.columns is None:
            return analyse([])
        n = self.rows
        cols: dict[str, np.ndarray] = {}
        for c in self.columns:
            if c in self.unread:
                continue
            if c in self.drop:
                cols[c] = np.full(n, "", dtype=object)
            else:  # the type np.concatenate would give (a column some pieces lack gets NaN there)
                have = self.dtypes.get(c, [])
                kinds = have + ([np.dtype(float)] if sum(1 for _ in have) < self._count else [])
                cols[c] = np.empty(n, np.result_type(*kinds))
        start = 0
        with open(self._pieces, "rb") as f:
            while start < n:
                k, piece = pickle.load(f)
                for c, col in cols.items():
                    if c in piece:
                        col[start:start + k] = piece[c]
                    elif c not in self.drop:
                        col[start:start + k] = np.nan
                start += k
        self._pieces.unlink()
        # copy=False: one block a column, no consolidation (which would copy every number once more)
        return pd.DataFrame(cols, copy=False)

    def player_parts(self, df: pd.DataFrame, rows: np.ndarray | None = None) -> Iterator[pd.DataFrame]:
        """Each player's rows in turn (for the player table); on the way, the options of ``df``'s rows at
        positions ``rows`` are put back (``df`` is :meth:`decisions`' frame, in place)."""
        want = None
        if rows is not None and len(rows) and "options" in self.drop and "options" in df.columns:
            want = np.zeros(self.players.rows, bool)
            want[rows] = True
        # the column is replaced whole at the end: writing into the frame (iloc) would make pandas
        # consolidate the frame's one-column blocks, a copy of every number
        opts = df["options"].to_numpy(object).copy() if want is not None else None
        for part in self.players.parts():
            if want is not None and opts is not None:
                pos = part["_pos"].to_numpy()
                hit = want[pos]
                if hit.any():
                    opts[pos[hit]] = part["options"].to_numpy(object)[hit]
            yield part
        if opts is not None:
            df["options"] = pd.Series(opts, index=df.index, dtype=object)

    def fill_options(self, df: pd.DataFrame, rows: np.ndarray) -> None:
        """In place: the options of ``df``'s rows at positions ``rows``, read back from the spill."""
        for _ in self.player_parts(df, rows):
            pass
