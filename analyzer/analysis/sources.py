"""Decision rows from several inputs (decision stores, their parts, decision files, the logs' analysis) put
together as one room's rows: each file read once, one set of settings, each hand from one input only."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from analyzer.analysis.execute import Settings
    from analyzer.analysis.store import Store

#: Columns the per-player table reads from decision rows (see docs/design.md).
DECISION_COLUMNS = ("hand_id", "player", "seat", "chosen", "options", "regret", "think_ms", "difficulty",
                    "p0", "p1", "p2", "p3")
#: Those of them that hold text (the others hold numbers).
TEXT_COLUMNS = ("hand_id", "player", "chosen", "p0", "p1", "p2", "p3")


class NotDecisionFile(Exception):
    """A path that is not a decision file of `analyzer decisions` (a usage error in the CLI), naming the file."""


class SourceError(Exception):
    """Inputs that cannot be put together: rows of other settings, a hand in two inputs, a store whose rows are not
    decision rows (exit 2 in the CLI). A store that cannot be opened or read is an ``analysis.store.StoreError``."""


class DecisionSources:
    """The decision rows of several inputs (stores, their parts, decision files, and rows analysed from the logs), put
    together without counting anything twice: a file given twice (directly, as a part of a store also given, by a
    link) is read once, as a log is; the rows must share one set of settings (those a store or part records; a
    Parquet file without a store's metadata has none to compare), and a hand found in two inputs is refused,
    naming the hand and both inputs (a store and the logs it was written from, two stores of one room).

    Errors: :class:`NotDecisionFile`, :class:`SourceError` and ``StoreError``."""

    def __init__(self) -> None:
        self.frames: list[pd.DataFrame] = []
        self.settings: Settings | None = None
        self.settings_of = ""
        self.seen: set[tuple[int, int]] = set()  # (device, inode) of every file read
        self.file_hands: dict[tuple[int, int], set[str]] = {}  # a decision file read by itself -> its hands
        self.hands: dict[str, int] = {}  # hand id -> the input it came from (its index in ``names``)
        self.names: list[str] = []

    def add(self, path: str) -> None:
        """A store folder, a part of a store, a folder of decision files or one decision file."""
        from analyzer.analysis.store import COMMON, open_store

        p = Path(path)
        if p.is_dir():
            if (p / COMMON).exists():
                self.add_store(path, open_store(path))
                return
            files = [f for f in sorted(p.rglob("*.parquet")) if not f.is_dir()]
            if not files:  # as a folder of no logs is: nothing there to read
                from analyzer.problems import printable

                raise NotDecisionFile(f"no *.parquet files (and no decision store) under: {printable(path)}")
            for f in files:  # a folder of decision files (no store's metadata)
                self.add(str(f))
            return
        if (p.parent / COMMON).exists() and p.name.startswith("part-") and _regular(path):  # a part of a store
            store = open_store(str(p.parent))
            self._settings(path, store.settings)
        else:
            self._settings(path, _file_settings(path))
        if self._once(path):
            frame = read_decisions(path)
            key = _key(path)
            if key is not None:
                self.file_hands[key] = set(frame["hand_id"].astype(str))
            self.add_frame(path, frame)

    def add_store(self, path: str, store: Store) -> None:
        """A store's rows (through its own opening and reading: its checks apply), but for the rows of any of its parts
        already read as a file of their own (a part given before its store)."""
        from analyzer.analysis.store import read_rows

        self._settings(path, store.settings)
        read_before: set[str] = set()
        fresh = 0
        for part in store.parts:
            key = _key(str(part))
            if key is not None and key in self.seen:
                read_before |= self.file_hands.get(key, set())
            else:
                fresh += 1
                if key is not None:
                    self.seen.add(key)
        if not fresh:
            return
        try:
            frame = read_rows(store) if not read_before else read_rows(store, [h for h in store.hands
                                                                                 if h not in read_before])
        except (KeyError, ValueError, TypeError, IndexError) as e:  # rows that are not this analyzer's decision rows
            raise SourceError(f"{path}: not decision rows written by `analyzer decisions`: "
                              f"{type(e).__name__}: {e}") from e
        self.add_frame(path, frame)

    def _once(self, path: str) -> bool:
        """Whether the file ``path`` is new; the same file again (by another name, a link) is skipped."""
        key = _key(path)
        if key is None:
            return True  # reading it says why it cannot be read
        if key in self.seen:
            return False
        self.seen.add(key)
        return True

    def _settings(self, path: str, settings: Settings | None) -> None:
        if settings is None:
            return
        if self.settings is None:
            self.settings, self.settings_of = settings, path
        else:
            self.check_settings(path, settings)

    def check_settings(self, what: str, settings: Settings) -> None:
        """Refuse rows of other settings than the ones already taken (they measure something else)."""
        if self.settings is not None and settings != self.settings:
            raise SourceError(f"{what} was written with {settings.describe()}, but {self.settings_of} with "
                              f"{self.settings.describe()}: rows of different settings cannot be put together; give "
                              f"inputs of one set of settings")

    def add_frame(self, what: str, frame: pd.DataFrame) -> None:
        """Rows of one input; a hand another input already gave is refused (it would count twice)."""
        me = len(self.names)
        self.names.append(what)
        for h in frame["hand_id"].unique() if "hand_id" in frame.columns else []:
            first = self.hands.setdefault(str(h), me)
            if first != me:
                from analyzer.problems import printable

                raise SourceError(printable(f"hand {str(h)!r} is in both {self.names[first]} and {what}: it would be "
                                            f"counted twice; give each hand once (a store, or the logs it was written "
                                            f"from with --decisions STORE, not both)"))
        self.frames.append(frame)


def _key(path: str) -> tuple[int, int] | None:
    """(device, inode) of a file: the same file by any name; None when it cannot be looked at."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _file_settings(path: str) -> Settings | None:
    """The settings a decision file records (a store's part carries them in its Parquet metadata), or None for a
    file without them; metadata that cannot be read is a :class:`NotDecisionFile` naming the file."""
    if not _regular(path):
        return None  # read_decisions says what it is
    from analyzer.analysis.store import StoreError, recorded_settings

    try:
        return recorded_settings(path)
    except StoreError as e:
        raise NotDecisionFile(str(e)) from e


def read_decisions(path: str) -> pd.DataFrame:
    """A decision file of `analyzer decisions`; any other file is a :class:`NotDecisionFile` naming the file and, for
    rows of another kind, the column."""
    import pyarrow.parquet as pq

    from analyzer.analysis.options import table_frame

    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise NotDecisionFile(f"cannot read decision rows from {path}: {e.strerror or e}") from e
    if not stat.S_ISREG(mode):
        raise NotDecisionFile(f"cannot read decision rows from {path}: not a regular file (a FIFO, socket or "
                              f"device); a decision file is a Parquet file or a store folder")
    try:
        frame = table_frame(pq.read_table(path))  # the options as their typed column
    except Exception as e:  # noqa: BLE001 - pyarrow's errors are of many kinds; any is "not a decision file"
        why = str(e) if str(e) and str(e) != path else type(e).__name__
        raise NotDecisionFile(f"cannot read decision rows from {path}: {why}") from e
    missing = [c for c in DECISION_COLUMNS if c not in frame.columns]
    if missing:
        raise NotDecisionFile(f"{path} is not a decision file of `analyzer decisions`: it lacks the column(s) "
                              f"{', '.join(missing)}")
    _check_kinds(path, frame)
    return frame


def _check_kinds(path: str, frame: pd.DataFrame) -> None:
    """Each column the player table reads holds what `analyzer decisions` writes there (text, or numbers); the first
    that does not is named with the file."""
    from pandas.api.types import infer_dtype, is_bool_dtype, is_numeric_dtype

    from analyzer.analysis.options import OPTIONS_DTYPE
    from analyzer.analysis.store import ID_COLUMNS
    from analyzer.variants.record import MAX_ID_LENGTH

    for c in DECISION_COLUMNS:
        col = frame[c]
        if c == "options":
            if col.dtype != OPTIONS_DTYPE:
                raise NotDecisionFile(f"{path} is not a decision file of `analyzer decisions`: its column 'options' "
                                      f"holds {infer_dtype(col, skipna=False)} values of type {col.dtype}, expected "
                                      f"a list of options a row (rows of another version of the analyzer?)")
            continue
        if c in TEXT_COLUMNS:
            kind = infer_dtype(col, skipna=False)
            ok = kind in ("string", "empty")
        else:
            ok = is_numeric_dtype(col) and not is_bool_dtype(col)
            kind = str(col.dtype)
        if not ok:
            raise NotDecisionFile(f"{path} is not a decision file of `analyzer decisions`: its column {c!r} holds "
                                  f"{kind} values, expected {'text' if c in TEXT_COLUMNS else 'numbers'}")
        if c in ID_COLUMNS and len(col):  # the ids: at most MAX_ID_LENGTH characters each, as in a log and a store
            longest = int(col.str.len().max())
            if longest > MAX_ID_LENGTH:  # a log's ids are bounded (id-too-long): so are a decision file's
                raise NotDecisionFile(f"{path} is not a decision file of `analyzer decisions`: its column {c!r} "
                                      f"holds an id of {longest:,} characters (a log's ids hold at most "
                                      f"{MAX_ID_LENGTH})")
