"""The decision store: decision rows as a partitioned Parquet dataset that knows its settings and its hands.

A store is a folder of ``part-NNNNNN.parquet`` files, one per batch of hands, readable as one table by
pandas/pyarrow (``pd.read_parquet(STORE)``). Each part's Parquet metadata (key ``bieqi.store``) holds the
settings the rows were computed with and, for every hand of the part, its id and fingerprint (a hash
of the hand's canonical JSON line, so re-serialising a log does not change it); ``_common_metadata``
holds the settings and the schema for the whole dataset. A later run checks a store against its logs
and settings from this metadata alone (footers, no row is read), reuses the rows of the hands it
already holds and analyses only the others.

Writing is whole or nothing: a new store is written in a hidden temporary folder next to it and
renamed into place; an append writes hidden temporary parts inside the store and renames them into
place only when every new part is written, all or none (a Ctrl-C or a failed rename during the commit
renames back those done: :func:`_renamed_together`; a part appears whole or not at all, and every part
carries its own fingerprints, so even a crash between two renames leaves a consistent store). A writer holds an
exclusive lock on the store from before it reads the store's parts to its end (:class:`StoreWriter`): a second
writer of the same store is refused at once ("is being written by another run"), and no rename ever replaces a
part or a store that exists. Readers take no lock.

Reading trusts nothing it reads: metadata that is not ours and whole, a hand held by two parts, and a part
whose rows are not what the analysis writes (columns, types, values, hands, players: :func:`_load_part`)
are each a :class:`StoreError` naming the file (docs/methods/store.md).
"""

from __future__ import annotations

import errno
import os
import shutil
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
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
#: The layout of the parts' rows (a store of another version is refused, not read).
VERSION = 2
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
    try:
        if p.is_dir():
            return (p / COMMON).is_file() or any(p.glob("*.parquet"))
        if not p.is_file():
            return False
    except OSError:  # a name too long, a folder that cannot be listed: no store; reading it will say why
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
    #: each part's hands as its metadata lists them (the ids of ``hands``, part by part)
    part_hands: list[list[str]] = field(default_factory=list)
    #: each part's addition (the ``decisions`` run that wrote it: ``{"run": token, "at": UTC time}``), None for a part
    #: whose metadata names none; the evidence ledger counts one addition as one day (``audit.ledger``)
    part_additions: list[dict[str, str] | None] = field(default_factory=list)

    def check_settings(self, settings: Settings) -> None:
        if settings != self.settings:
            raise StoreError(f"{self.path}: the store was written with {self.settings.describe()}, "
                             f"but this run asks for {settings.describe()}; use the same settings or another store")


def _meta(settings: Settings, hand_ids: list[str] | None = None, fps: list[str] | None = None,
          addition: dict[str, str] | None = None) -> dict[bytes, bytes]:
    doc: dict[str, Any] = {"format": FORMAT, "version": VERSION, "settings": settings.to_dict()}
    if hand_ids is not None:
        doc["hands"] = [hand_ids, fps]
    if addition is not None:
        doc["addition"] = addition
    return {META_KEY: orjson.dumps(doc)}


def _addition(doc: dict[str, Any]) -> dict[str, str] | None:
    """A part's addition as its metadata records it (optional: None when absent or not two texts)."""
    a = doc.get("addition")
    if isinstance(a, dict) and isinstance(a.get("run"), str) and isinstance(a.get("at"), str):
        return {"run": a["run"], "at": a["at"]}
    return None


def _regular(path: str | os.PathLike[str]) -> None:
    """A :class:`StoreError` unless ``path`` is a regular file: a named pipe opened by Arrow waits for a writer for
    ever, Ctrl-C and SIGTERM unheard (retried in C++); a folder gets Arrow's error text."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError as e:
        raise StoreError(f"{path}: cannot read it: {e.strerror or e}") from e
    if not stat.S_ISREG(mode):
        what = "a folder" if stat.S_ISDIR(mode) else "a FIFO, socket or device"
        raise StoreError(f"{path}: not a regular file ({what}); a store's parts and {COMMON} are Parquet files")


def _read_meta(path: Path) -> dict[str, Any]:
    """A part's or ``_common_metadata``'s ``bieqi.store`` document: a JSON object of our format and version;
    anything else is a :class:`StoreError` naming the file and what is wrong."""
    import pyarrow.parquet as pq

    _regular(path)
    try:
        meta = pq.read_schema(path).metadata or {}
    except (OSError, ValueError) as e:  # pyarrow raises ArrowInvalid (a ValueError) on a non-Parquet file
        raise StoreError(f"{path}: not readable as Parquet: {e}") from e
    raw = meta.get(META_KEY)
    if raw is None:
        raise StoreError(f"{path}: not part of a decision store (no {META_KEY.decode()} metadata); "
                         f"write one with `analyzer decisions LOGS --out STORE`")
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as e:  # not JSON, or not UTF-8
        raise _bad_meta(path, f"is not JSON ({e})") from e
    if not isinstance(doc, dict):
        raise _bad_meta(path, f"is {_json_kind(doc)}, not an object")
    if doc.get("format") != FORMAT or doc.get("version") != VERSION:
        raise StoreError(f"{path}: a decision store of format {_shown(doc.get('format'))} version "
                         f"{_shown(doc.get('version'))}; this analyzer reads {FORMAT!r} version {VERSION}")
    return doc


def _bad_meta(path: Path, what: str) -> StoreError:
    return StoreError(f"{path}: its {META_KEY.decode()} metadata {what}: the store was changed after it was "
                      f"written; write it again from its logs (`analyzer decisions LOGS --out NEW_STORE`)")


def _json_kind(v: Any) -> str:
    from analyzer.analysis.execute import _json_kind as kind

    return kind(v)


def _shown(v: Any) -> str:
    from analyzer.analysis.execute import _shown as shown

    return shown(v)


def _settings(path: Path, doc: dict[str, Any]) -> Settings:
    from analyzer.analysis.execute import Settings

    if "settings" not in doc:
        raise _bad_meta(path, "has no 'settings'")
    try:
        return Settings.from_dict(doc["settings"])
    except ValueError as e:
        raise _bad_meta(path, f"has unusable {e}") from e


def recorded_settings(path: str | os.PathLike[str]) -> Settings | None:
    """The settings a decision file's own metadata records (a store's part carries them), None for a file without
    that metadata or not Parquet (its reader says why); metadata that does not read is a :class:`StoreError`."""
    import pyarrow.parquet as pq

    _regular(path)
    try:
        meta = pq.read_schema(path).metadata or {}
    except (OSError, ValueError):
        return None
    if META_KEY not in meta:
        return None
    return _settings(Path(path), _read_meta(Path(path)))


def _hands(path: Path, doc: dict[str, Any]) -> tuple[list[str], list[str]]:
    """A part's hands as its metadata lists them: their ids and fingerprints (two lists of texts, as long)."""
    if "hands" not in doc:
        raise _bad_meta(path, "has no 'hands' (the ids and fingerprints of the part's hands)")
    hands = doc["hands"]
    if not (isinstance(hands, list) and len(hands) == 2 and all(isinstance(x, list) for x in hands)):
        got = (_json_kind(hands) if not isinstance(hands, list) else
               f"a list of {len(hands)} item(s)" + (" that are not both lists" if len(hands) == 2 else ""))
        raise _bad_meta(path, f"has unusable 'hands': two lists (the hands' ids and fingerprints) expected, not {got}")
    ids, fps = hands
    if len(ids) != len(fps):
        raise _bad_meta(path, f"has unusable 'hands': {len(ids)} ids but {len(fps)} fingerprints")
    if not (all(type(x) is str for x in ids) and all(type(x) is str for x in fps)):
        bad = next(x for x in (*ids, *fps) if type(x) is not str)
        raise _bad_meta(path, f"has unusable 'hands': {_json_kind(bad)} where a text is expected")
    if len(set(ids)) != len(ids):
        counts: Counter[str] = Counter(ids)
        dup = next(h for h, n in counts.items() if n > 1)
        raise _bad_meta(path, f"has unusable 'hands': hand {_shown(dup)} listed twice")
    return ids, fps


def open_store(path: str | os.PathLike[str]) -> Store:
    """Read a store's settings and hands from its metadata (no rows are read).

    Every metadata document must be ours and whole (:class:`StoreError` naming the file otherwise), every part
    written with the store's settings, and no hand held by two parts (a part copied in, or two stores' folders
    merged: their rows would count twice)."""
    root = Path(path)
    if not root.is_dir():
        raise StoreError(f"{root}: not a decision store (a folder written by `analyzer decisions LOGS --out STORE`)")
    if not (root / COMMON).is_file():
        try:
            empty = not any(root.iterdir())
        except OSError:  # not listable: the message below
            empty = False
        if empty:  # (`mkdir store` first: the message below sent the user round in a circle)
            raise StoreError(f"{root}: an empty folder, not a decision store; `analyzer decisions LOGS --out STORE` "
                             f"makes the store's folder itself: name one that does not exist yet, or remove this one")
        raise StoreError(f"{root}: not a decision store (no {COMMON}); write one with "
                         f"`analyzer decisions LOGS --out STORE`")
    settings = _settings(root / COMMON, _read_meta(root / COMMON))
    store = Store(root, settings)
    for part in sorted(root.glob(f"{PART_PREFIX}*.parquet")):
        doc = _read_meta(part)
        if _settings(part, doc) != settings:
            raise StoreError(f"{part}: written with other settings than the store ({settings.describe()})")
        ids, fps = _hands(part, doc)
        before = len(store.hands)
        store.hands.update(zip(ids, fps))
        if len(store.hands) != before + len(ids):  # a hand another part holds too
            held = {h: p for p, hs in zip(store.parts, store.part_hands) for h in hs}
            dup = next(h for h in ids if h in held)
            n = sum(h in held for h in ids)
            raise StoreError(f"{root}: the parts {held[dup].name} and {part.name} both hold hand {_shown(dup)} "
                             f"({n} hand(s) in common): a part copied in, or two stores merged; its rows would count "
                             f"twice. Remove the copy, or write the store again from its logs")
        store.parts.append(part)
        store.part_hands.append(ids)
        store.part_additions.append(_addition(doc))
    return store


def read_rows(store: Store, hand_ids: Iterable[str] | None = None, columns: list[str] | None = None, *,
              players: Mapping[str, int] | None = None) -> pd.DataFrame:
    """The rows of the store (only ``hand_ids`` when given; only ``columns`` when given), part by part,
    so a subset never needs the whole store in memory. Each part's rows are checked as they are read
    (:func:`_load_part`); ``players`` (hand id -> :func:`players_key` of the log's players), when given,
    are the logs' players of the hands read: a hand whose rows name others is a :class:`StoreError`."""
    import pandas as pd

    from analyzer.analysis.decisions import analyse

    want = None if hand_ids is None else set(hand_ids)
    dtypes = _row_dtypes()
    frames = []
    for part, listed in zip(store.parts, store.part_hands):
        if want is not None and want.isdisjoint(listed):
            continue  # none of its hands asked for: not read
        seen: dict[str, int] | None = None if players is None else {}
        frame = _load_part(part, listed, columns, players=seen, dtypes=dtypes)
        if seen:
            _check_players(store, seen, players)
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


def players_key(players: Iterable[str]) -> int:
    """A hand's four players as one number (a hash: compared within this process only)."""
    return hash(tuple(players))


#: The columns every part's rows are checked on, whatever columns are asked for.
_CHECKED = ["hand_id", "action", "seat", "player", "p0", "p1", "p2", "p3"]
#: Values a decision row cannot hold (``decisions._frame``): each column's least value (None: any finite number) and
#: whether it may be missing (think_ms: NaN when a time is absent); the others must be finite.
_BOUNDS: dict[str, tuple[float | None, bool]] = {
    "hand_seq": (0, False), "action": (0, False), "seat": (0, False), "n_options": (1, False), "rank": (0, False),
    "samples_used": (0, False), "regret": (0, False), "regret_se": (0, False), "dd_regret": (0, False),
    "difficulty": (0, False), "loss": (0, False), "think_ms": (0, True),
}


def _row_dtypes() -> dict[str, Any]:
    """Each column's type as ``decisions.analyse`` gives it (pandas may read Parquet strings as its string type)."""
    from analyzer.analysis.decisions import analyse

    return dict(analyse([]).dtypes.items())


def _load_part(part: Path, listed: list[str], columns: list[str] | None = None, *,
               players: dict[str, int] | None = None, dtypes: dict[str, Any] | None = None) -> pd.DataFrame:
    """A part's rows (``columns`` only, when given) as the analysis gives them, checked against what a store needs
    (else a :class:`StoreError` naming the part and, where it applies, the column and row): every column there and
    of a type that casts to the analysis' (a text that is not a number, or a fraction for an integer, does not);
    no value missing but think_ms (NaN when a time is absent); numbers finite and in their range (``_BOUNDS``);
    rows only of the hands the part's metadata ``listed``, each action of a hand once, and some rows when it lists
    hands; each row's player the one at its seat, a hand's four players the same on each of its rows.
    ``players``, when given, receives each hand's :func:`players_key`. The checks are Arrow and numpy operations on
    whole columns of the part (a few per cent of reading it), never Python a row at a time."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from analyzer.analysis.execute import shared_strings
    from analyzer.analysis.options import OPTIONS_TYPE, cast_options, table_frame

    dtypes = dtypes if dtypes is not None else _row_dtypes()
    asked = list(dtypes) if columns is None else list(columns)
    names = asked + [c for c in _CHECKED if c not in asked]
    unknown = [c for c in names if c not in dtypes]
    if unknown:
        raise ValueError(f"not a decision row column: {unknown}")
    try:
        table = _read_part(part, names)
    except StoreError:  # a column missing, or the part unreadable
        try:
            have = pq.read_schema(part).names
        except (OSError, ValueError):
            have = names
        missing = [c for c in names if c not in have]
        if missing:
            raise _bad_part(part, missing[0], "is missing" + (f" (and {len(missing) - 1} more)" if len(missing) > 1
                                                              else "")) from None
        raise
    for i, name in enumerate(table.column_names):
        kind = "O" if name == "options" else np.dtype(dtypes[name]).kind
        target = (OPTIONS_TYPE if name == "options" else pa.int64() if kind == "i" else pa.float64() if kind == "f"
                  else pa.string())
        col = table.column(i)
        if name == "options" and col.type == target:  # the same type, its list items named as Parquet names them
            table = table.set_column(i, name, col.cast(target))
        elif col.type != target:
            try:  # safe: a text that is not a number, or a fraction for an integer, fails (never truncated)
                col = pc.cast(col, target, safe=True)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
                col = cast_options(col) if name == "options" else None
                if col is None:
                    raise _bad_part(part, name, f"is of type {table.column(i).type}, which does not read as {target} "
                                                f"({e})") from e
            table = table.set_column(i, name, col)
        if col.null_count and not (kind == "f" and _BOUNDS.get(name, (None, False))[1]):
            at = pc.index(pc.is_null(col), True).as_py()
            raise _bad_part(part, name, f"has no value (null{', NaN' if kind == 'f' else ''}) on row {at}")
    _check_values(part, table)
    _check_hands(part, table, listed, players)
    try:
        frame = table_frame(table).astype({c: dtypes[c] for c in names})
    except (ValueError, TypeError, OverflowError) as e:  # the columns were cast above: not expected
        raise StoreError(f"{part}: does not read as decision rows ({e})") from e
    del table
    frame = shared_strings(frame)
    return frame if columns is None and len(names) == len(dtypes) else frame[asked]


def _bad_part(part: Path, column: str, what: str) -> StoreError:
    return StoreError(f"{part}: column {column!r} {what}: the part was changed after it was written; write the store "
                      f"again from its logs (`analyzer decisions LOGS --out NEW_STORE`)")


def _changed(part: Path, what: str) -> StoreError:
    return StoreError(f"{part}: {what}: the part was changed after it was written; write the store again from its logs "
                      f"(`analyzer decisions LOGS --out NEW_STORE`)")


#: The columns of a decision row that hold ids: at most ``MAX_ID_LENGTH`` characters, as in a log (``id-too-long``), so
#: a part made elsewhere cannot put a 200 KB id into every output that names it.
ID_COLUMNS = ("hand_id", "player", "p0", "p1", "p2", "p3")


def _check_id_lengths(part: Path, name: str, col: Any) -> None:
    import pyarrow.compute as pc

    from analyzer.variants.record import MAX_ID_LENGTH

    if not len(col):
        return
    lengths = pc.utf8_length(col)
    longest = pc.max(lengths).as_py()
    if longest is not None and longest > MAX_ID_LENGTH:
        at = pc.index(lengths, longest).as_py()
        raise StoreError(f"{part}: column {name!r} holds an id of {longest:,} characters on row {at}; a log's ids "
                         f"hold at most {MAX_ID_LENGTH} (longer ones are refused, id-too-long), so these rows are of no "
                         f"hand a log can hold: write the store again from its logs")


def _check_values(part: Path, table: Any) -> None:
    """Every number finite (think_ms may be NaN) and at least its ``_BOUNDS``; seats 0-3, n_options at most
    ``MAX_OPTIONS``, ranks below n_options, scales above 0. A column's least and greatest values first (two
    vectorised passes); the offending row is looked for only when they are out of range."""
    import numpy as np
    import pyarrow as pa

    from analyzer.cards import NUM_CARDS
    from analyzer.rules import MAX_OPTIONS

    # a hand's actions are its 52 cards, each played or covered once (action 0 the forced 7 of spades)
    highs = {"seat": 3, "n_options": MAX_OPTIONS, "action": NUM_CARDS - 1}
    cols: dict[str, Any] = {}
    for name in table.column_names:
        if table.schema.field(name).type not in (pa.int64(), pa.float64()):  # texts (numbers were cast to these)
            if name in ID_COLUMNS:
                _check_id_lengths(part, name, table.column(name))
            elif name == "kind":
                _check_kinds(part, table.column(name))
            continue
        x = table.column(name).to_numpy()
        cols[name] = x
        if not len(x):
            continue
        low, may_miss = _BOUNDS.get(name, (None, False))
        lo, hi = (np.fmin.reduce(x), np.fmax.reduce(x)) if may_miss else (x.min(), x.max())  # fmin/fmax skip NaN
        high = highs.get(name)
        ok = ((x.dtype.kind == "i" or (np.isfinite(lo) and np.isfinite(hi)) or (may_miss and np.isnan(lo)))
              and (low is None or not lo < low) and (high is None or not hi > high))
        if ok:
            continue
        bad = ~np.isfinite(x) if x.dtype.kind == "f" else np.zeros(len(x), bool)
        if may_miss:
            bad &= ~np.isnan(x)
        if low is not None:
            bad |= x < low
        if high is not None:
            bad |= x > high
        at = int(np.flatnonzero(bad)[0])
        need = ("a number >= 0 or missing" if may_miss else
                f"from {low:g} to {high}" if high is not None else f">= {low:g}" if x.dtype.kind == "i" else
                f"finite and >= {low:g}" if low is not None else "finite")
        raise _bad_part(part, name, f"holds {_shown(x[at].item())} on row {at} (must be {need})")
    if "rank" in cols and "n_options" in cols:
        over = cols["rank"] >= cols["n_options"]
        if over.any():
            at = int(np.flatnonzero(over)[0])
            raise _bad_part(part, "rank", f"holds {int(cols['rank'][at])} on row {at}, not below its n_options "
                                          f"{int(cols['n_options'][at])}")
    if "scale" in cols and len(cols["scale"]) and not cols["scale"].min() > 0:
        at = int(np.flatnonzero(~(cols["scale"] > 0))[0])
        raise _bad_part(part, "scale", f"holds {float(cols['scale'][at])!r} on row {at} (must be > 0)")


#: The decisions a row can be (``analysis.decisions``): a play or a cover.
ROW_KINDS = ("play", "cover")


def _check_kinds(part: Path, col: Any) -> None:
    """Every row's ``kind`` a play or a cover: another word was read as a cover by the signals (a score moved)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    other = ~pc.is_in(col, value_set=pa.array(ROW_KINDS)).to_numpy(zero_copy_only=False)
    if other.any():
        at = int(np.flatnonzero(other)[0])
        raise _bad_part(part, "kind", f"holds {_shown(col[at].as_py())} on row {at} (must be one of "
                                      f"{', '.join(ROW_KINDS)})")


def _check_hands(part: Path, table: Any, listed: list[str], players: dict[str, int] | None) -> None:
    """The rows' hands against the part's metadata, and their players against their seats and one another. Rows
    of a hand together, its actions rising (as the analysis writes them) are checked by comparing each row with
    the one before it; rows in another order by taking each hand's first row."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    n = table.num_rows
    if not n:
        if listed:
            raise _changed(part, f"its metadata lists {len(listed)} hand(s) but it holds no row")
        return
    enc = pc.dictionary_encode(table.column("hand_id").combine_chunks())  # hands numbered as they first appear
    hands = enc.dictionary.to_pylist()
    code = enc.indices.to_numpy().astype(np.int64)
    known = set(listed)
    stray = [h for h in hands if h not in known]
    if stray:
        raise _changed(part, f"it holds rows of {len(stray)} hand(s) its metadata does not list (e.g. {_shown(stray[0])})")
    action = table.column("action").to_numpy()
    same = code[1:] == code[:-1]
    ordered = bool(np.all((code[1:] > code[:-1]) | (same & (action[1:] > action[:-1]))))
    if not ordered:  # each (hand, action) once, found by sorting
        order = np.lexsort((action, code))
        twice = (code[order][1:] == code[order][:-1]) & (action[order][1:] == action[order][:-1])
        if twice.any():
            at = int(order[1:][np.flatnonzero(twice)[0]])
            raise _changed(part, f"it holds the row of hand {_shown(hands[code[at]])}, action {int(action[at])}, twice "
                                 f"(row {at})")
    together = ordered or int((~same).sum()) + 1 == len(hands)
    first = np.flatnonzero(np.concatenate(([True], code[1:] > np.maximum.accumulate(code[:-1]))))
    seat_of = [table.column(f"p{k}").combine_chunks() for k in range(4)]
    for k, p in enumerate(seat_of):
        if together:  # the same as the row before within a hand
            differs = same & ~pc.equal(p.slice(1), p.slice(0, n - 1)).to_numpy(zero_copy_only=False)
            bad = np.flatnonzero(differs) + 1
        else:  # the same as the hand's first row
            idx = pa.array(first[code])
            bad = np.flatnonzero(~pc.equal(pc.take(p, idx), p).to_numpy(zero_copy_only=False))
        if len(bad):
            at = int(bad[0])
            was = p[int(first[code[at]])].as_py()
            raise _bad_part(part, f"p{k}", f"names {_shown(p[at].as_py())} on row {at} but {_shown(was)} "
                                           f"on another row of hand {_shown(hands[code[at]])}")
    seat = table.column("seat").to_numpy()
    player = table.column("player").combine_chunks()
    at_seat = pc.choose(pa.array(seat.astype(np.int8)), *seat_of)
    other = ~pc.equal(at_seat, player).to_numpy(zero_copy_only=False)
    if other.any():
        at = int(np.flatnonzero(other)[0])
        raise _bad_part(part, "player", f"names {_shown(player[at].as_py())} on row {at}, but the player at its seat "
                                        f"{int(seat[at])} of hand {_shown(hands[code[at]])} is {_shown(at_seat[at].as_py())}")
    if players is not None:
        idx = pa.array(first)
        four = zip(*(pc.take(p, idx).to_pylist() for p in seat_of))
        players.update(zip(hands, map(players_key, four)))


def _check_players(store: Store, seen: Mapping[str, int], logs: Mapping[str, int] | None) -> None:
    """The players of the hands' rows (``seen``) against the logs' (``logs``), a hand at a time."""
    if logs is None:
        return
    for hid, key in seen.items():
        want = logs.get(hid)
        if want is not None and want != key:
            raise _players_differ(store, hid)


def _players_differ(store: Store, hid: str, where: str = "") -> StoreError:
    part = next((p for p, hs in zip(store.parts, store.part_hands) if hid in hs), store.path)
    return StoreError(f"{where}{part}: the rows of hand {_shown(hid)} name other players than the log's hand of that id: "
                      f"the store's rows were changed after it was written; write the store again from its logs "
                      f"(`analyzer decisions LOGS --out NEW_STORE`)")



def _read_part(part: Path, columns: list[str] | None = None) -> Any:
    """A part's table; one that cannot be read (a corrupt page, a truncated file) is a :class:`StoreError` naming it
    (Arrow's own errors name no file: "Corrupt snappy compressed data.")."""
    import pyarrow.parquet as pq

    try:
        return pq.read_table(part, columns=columns)
    except (OSError, ValueError) as e:  # ArrowIOError, ArrowInvalid
        raise StoreError(f"{part}: a part of the decision store that cannot be read ({e}); write the store again from "
                         f"its logs (`analyzer decisions LOGS --out NEW_STORE`)") from e


def _write_part(tmp: Path, frame: pd.DataFrame, settings: Settings, hand_ids: list[str], fps: list[str],
                addition: dict[str, str] | None = None) -> None:
    """One part, written under its hidden temporary name ``tmp`` and left there (the caller renames it into place)."""
    import pyarrow.parquet as pq

    from analyzer.analysis.options import frame_table

    table = frame_table(frame)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}),
                                           **_meta(settings, hand_ids, fps, addition)})
    pq.write_table(table, tmp)
    os.chmod(tmp, _umask_mode())


@contextmanager
def _interrupts_noted() -> Iterator[list[Any]]:
    """Ctrl-C (SIGINT) held back for the block: its Python handler is replaced by one that only notes it, so no
    KeyboardInterrupt lands between two renames of a commit. Yields a list that holds the handler replaced once a
    SIGINT came (empty otherwise); the handler is back when the block ends. (A Python-level handler, not a blocked
    signal: SIGINT may be delivered to any thread, e.g. Arrow's, and Python then raises in the main thread. Outside
    the main thread no KeyboardInterrupt can land: nothing is replaced.)"""
    import signal
    import threading

    noted: list[Any] = []
    if threading.current_thread() is not threading.main_thread():
        yield noted
        return
    previous = signal.getsignal(signal.SIGINT)

    def note(signum: int, frame: Any) -> None:
        if not noted:
            noted.append(previous)

    signal.signal(signal.SIGINT, note)
    try:
        yield noted
    finally:
        signal.signal(signal.SIGINT, previous)


def _renamed_together(moves: list[tuple[Path, Path]]) -> None:
    """Rename each ``(src, dst)`` of ``moves``, all or none: a Ctrl-C during the renames, or a rename that fails,
    undoes those done (in reverse order) and then raises its KeyboardInterrupt or OSError, so an interrupted commit
    has added nothing. A ``dst`` that exists is never replaced: :class:`FileExistsError` naming it, after the undo
    (the writer's lock keeps other runs of the analyzer out, so only a part put there by another hand, or a run on a
    file system without locks, meets this). (With a handler of SIGINT other than Python's default, the renames are
    kept and that handler is called afterwards, as it would have been.)"""
    import signal

    with _interrupts_noted() as noted:
        done: list[tuple[Path, Path]] = []
        try:
            for src, dst in moves:
                if os.path.lexists(dst):
                    raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(dst))
                os.replace(src, dst)
                done.append((src, dst))
            if noted and noted[0] is signal.default_int_handler:
                raise KeyboardInterrupt
        except BaseException:
            for src, dst in reversed(done):
                try:
                    os.replace(dst, src)
                except OSError:  # pragma: no cover - the rename back failed too: left where it is
                    pass
            raise
    if noted and callable(noted[0]) and noted[0] is not signal.default_int_handler:
        noted[0](signal.SIGINT, None)
    elif noted and noted[0] == signal.SIG_DFL:  # pragma: no cover - the default action: the process ends
        signal.raise_signal(signal.SIGINT)


#: Length of the random part of a writer's hidden names (a new store's folder ``.STORE.XXXXXXXX``, mkdtemp's length).
_TOKEN = 8


def _busy(target: Path) -> StoreError:
    return StoreError(f"{target} is being written by another run (`analyzer decisions`); nothing written: run again "
                      f"once it has ended")


def _lock(folder: Path, target: Path, *, wait: bool = False) -> int | None:
    """An exclusive lock (``flock``) on ``folder``, for a writer of the store ``target``: the open descriptor holding
    it, for :func:`_unlock`. Held by another run: :class:`StoreError` "is being written by another run" at once (not
    waited for, unless ``wait``: a folder only a look of :func:`_being_created` may hold for an instant). None where
    the file system has no locks (some network ones): the commit still never replaces a part (``_renamed_together``).
    The lock goes with the process: a run killed outright leaves none behind."""
    import fcntl

    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise _busy(target) from None
    except OSError:  # no locks here (ENOLCK, EOPNOTSUPP ...)
        os.close(fd)
        return None
    except BaseException:
        os.close(fd)
        raise
    return fd


def _unlock(fd: int | None) -> None:
    """Release :func:`_lock`'s lock. Explicitly (LOCK_UN), not only by closing: worker processes forked meanwhile hold
    the same open file, and with it the lock, until they end."""
    if fd is None:
        return
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    except OSError:  # pragma: no cover - closing releases it anyway
        pass
    os.close(fd)


def _being_created(target: Path) -> bool:
    """Whether another run is creating the store ``target`` now: one of the hidden folders beside it that a new store
    is written in (``.NAME.XXXXXXXX``) is locked. (A folder left by a run killed outright is not locked: ignored.)"""
    import fcntl

    from analyzer.logs import hidden_stem

    prefix = f".{hidden_stem(target.name)}."
    try:
        names = [n for n in os.listdir(target.parent) if n.startswith(prefix) and len(n) == len(prefix) + _TOKEN]
    except OSError:
        return False
    for name in names:
        try:
            fd = os.open(target.parent / name, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        except OSError:  # gone meanwhile, or not a folder
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            pass
        finally:
            os.close(fd)  # releases the lock taken to look
    return False


class StoreWriter:
    """Adds parts to a store (a new one, or one that exists); ``commit`` makes them appear, ``abort`` drops them.

    Use as a context manager: leaving the block aborts what was not committed. From its start to the end of the
    block the writer holds an exclusive lock on the store (a new store's: on its hidden folder, which becomes the
    store), so a second writer of the same store is refused at once with a :class:`StoreError` ("... is being written
    by another run"), before it reads the store's parts; readers take no lock (a part appears whole or not at all).
    """

    def __init__(self, path: str | os.PathLike[str], settings: Settings) -> None:
        from analyzer.logs import through_links

        self.target = through_links(path)  # a link to a store, or to where a new one goes: written there (it stays)
        self.settings = settings
        self.existing: Store | None = None
        self.pending: list[tuple[Path, Path]] = []
        self.hands = 0
        self.rows = 0
        self.next = 0
        self.made: Path | None = None  # a new store's hidden folder, until it is renamed into place
        self.lock: int | None = None
        import secrets

        self.token = secrets.token_hex(_TOKEN // 2)  # this run's temporary names: never another run's
        from datetime import datetime, timezone

        # every part of this run names the run: one addition, one day of the evidence ledger
        self.addition = {"run": secrets.token_hex(8), "at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        try:
            if self.target.exists():
                self.dir = self.target
                if self.target.is_dir():  # else open_store says what it is
                    with self._named():
                        self.lock = _lock(self.target, self.target)  # before its parts are read
                self.existing = open_store(self.target)
                self.existing.check_settings(settings)
                names = [p.name for p in self.existing.parts]
                self.next = 1 + max((int(n[len(PART_PREFIX):-len(".parquet")]) for n in names
                                     if n[len(PART_PREFIX):-len(".parquet")].isdigit()), default=-1)
            else:
                with self._named():
                    parent = self.target.parent
                    if parent.exists() and not parent.is_dir():  # mkdir would say "File exists"
                        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(parent))
                    parent.mkdir(parents=True, exist_ok=True)
                    if _being_created(self.target):
                        raise _busy(self.target)
                    self.dir = self._new_folder(parent)
                    self.lock = _lock(self.dir, self.target, wait=True)
        except BaseException:  # a SIGTERM or Ctrl-C as well: no hidden folder, no lock left
            self._release()
            raise

    def _new_folder(self, parent: Path) -> Path:
        """The hidden folder a new store is written in (mode 0700 until the commit, as mkdtemp's). Known to the
        clean-up (``made``) before it exists, so an interrupt just after it is made still removes it."""
        import secrets

        from analyzer.logs import hidden_stem

        while True:
            folder = parent / f".{hidden_stem(self.target.name)}.{secrets.token_hex(_TOKEN // 2)}"
            self.made = folder
            try:
                os.mkdir(folder, 0o700)
            except FileExistsError:  # pragma: no cover - 32 random bits taken: not ours to remove
                self.made = None
                continue
            return folder

    def _release(self) -> None:
        """Drop a new store's hidden folder not renamed into place, then the lock."""
        if self.made is not None:
            shutil.rmtree(self.made, ignore_errors=True)
            self.made = None
        lock, self.lock = self.lock, None
        _unlock(lock)

    @contextmanager
    def _named(self) -> Iterator[None]:
        """An OS error (a full disk, a folder that cannot be made) named as the store asked for: not as its hidden
        temporary folder or part, nor as nothing (Arrow's write errors name no file)."""
        try:
            yield
        except OSError as e:
            code, why = e.errno, e.strerror
            if code is None:  # Arrow's: "Failed to open local file '<the hidden part>'. Detail: [errno 30] ..."
                import re

                found = re.search(r"\[errno (\d+)\]", str(e))
                code = int(found.group(1)) if found else None
                why = os.strerror(code) if code is not None else "cannot write a part of it"
            raise OSError(code, why or "cannot write", str(self.target)) from e

    @property
    def known(self) -> dict[str, str]:
        return {} if self.existing is None else self.existing.hands

    def add(self, frame: pd.DataFrame, hand_ids: list[str], fps: list[str]) -> None:
        """One part: the rows of these hands (hands without a decision still count as analysed)."""
        name = f"{PART_PREFIX}{self.next:06d}.parquet"
        self.next += 1
        tmp = self.dir / f".{name}.{self.token}.tmp"
        self.pending.append((tmp, self.dir / name))  # known to abort() before a byte of it is written
        with self._named():
            _write_part(tmp, frame, self.settings, hand_ids, fps, self.addition)
        self.hands += len(hand_ids)
        self.rows += len(frame)

    def commit(self, schema_frame: pd.DataFrame | None = None) -> None:
        """Make the new parts appear: rename the new store into place, or each new part into the store; all or
        nothing (:func:`_renamed_together`: a Ctrl-C or a failed rename during the commit undoes its renames, and
        the exception then leaves the writer's block, which drops the temporary parts). Nothing is ever renamed over
        a store or a part that exists: :class:`StoreError` "nothing written"."""
        import pyarrow.parquet as pq

        if self.existing is None:
            if schema_frame is None:
                from analyzer.analysis.decisions import analyse

                schema_frame = analyse([])
            from analyzer.analysis.options import frame_table

            schema = frame_table(schema_frame.iloc[:0]).schema
            with self._named():
                pq.write_metadata(schema.with_metadata({**(schema.metadata or {}), **_meta(self.settings)}),
                                  self.dir / COMMON)
            os.chmod(self.dir / COMMON, _umask_mode())
            for tmp, final in self.pending:
                os.replace(tmp, final)
            os.chmod(self.dir, _umask_mode(dirs=True))  # made 0700
            try:
                _renamed_together([(self.dir, self.target)])
            except OSError as e:  # appeared meanwhile (a folder, a file): keep it, do not merge blindly
                if e.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR):
                    raise
                raise StoreError(f"{self.target}: created by someone else during this run; nothing written") from e
            self.made = None  # it is the store now (still locked, by the same open folder, until the block ends)
        else:
            try:
                _renamed_together(self.pending)
            except FileExistsError as e:
                raise StoreError(f"{self.target}: {Path(e.filename).name} was added by another run during this one; "
                                 f"nothing written: run again") from e
        self.pending = []

    def abort(self) -> None:
        for tmp, _ in self.pending:
            tmp.unlink(missing_ok=True)
        self.pending = []
        if self.made is not None:
            shutil.rmtree(self.made, ignore_errors=True)
            self.made = None

    def __enter__(self) -> StoreWriter:  # noqa: PYI034 - a final class in all but name
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        try:
            self.abort()  # what was not committed (an exception, a commit refused and caught in the block): dropped
        finally:
            self._release()


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
    players: dict[str, int] = {}  # the logs' players of the hands reused, for their rows' check
    fresh = analyse_items(items, settings, execution or Execution(), reasons=reasons,
                          on_hand=_reuse(store, seq_of, logs_players=players), on_progress=on_progress)
    if store is None:
        return fresh
    if not subset:
        _check_all_reused(store, seq_of)
    reused = list(seq_of)
    if not reused:
        return fresh
    old = read_rows(store, reused, players=players)
    del players
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
    the input is read; so does a hand whose rows name other players than the log's, when it is read) and
    each part's (:func:`_load_part`, before its rows are yielded)."""
    from analyzer.analysis.execute import Execution, analysed_batches, shared_strings

    players: dict[str, int] = {}  # each store hand's players as its rows name them, checked as the logs come
    if store is not None:
        import pyarrow as pa

        store.check_settings(settings)
        check_columns(store)
        dtypes = _row_dtypes()
        for part, listed in zip(store.parts, store.part_hands):
            frame = _load_part(part, listed, players=players, dtypes=dtypes)
            pa.default_memory_pool().release_unused()  # the part's Arrow buffers, else kept for reuse
            if not reasons:
                frame["reasons"] = ""
            if len(frame):
                yield frame
    seen: dict[str, int] = {} if seq_of is None else seq_of
    for _, frame in analysed_batches(items, settings, execution or Execution(), reasons=reasons,
                                     on_hand=_reuse(store, seen, store_players=players), on_progress=on_progress):
        if len(frame):
            yield shared_strings(frame)
    if store is not None:
        _check_all_reused(store, seen)


def _reuse(store: Store | None, seq_of: dict[str, int], *, store_players: dict[str, int] | None = None,
           logs_players: dict[str, int] | None = None) -> Callable[[Checked, int, str], bool]:
    """``hand_batches``' ``on_hand``: False (reuse, noting the hand's place in ``seq_of``) for a hand the store
    holds; :class:`StoreError` when the store's hand of that id has another fingerprint. The players of a hand
    reused: checked against ``store_players`` (its rows' players, by :func:`_load_part`; each taken out once
    checked), or noted in ``logs_players`` for the rows read later (:func:`read_rows`)."""
    known = {} if store is None else store.hands

    def on_hand(item: Checked, seq: int, fp: str) -> bool:
        hid = str(item.record.hand_id)
        have = known.get(hid)
        if have is None:
            return True
        if have != fp:
            raise StoreError(f"{item.file}:{item.line}: hand {_shown(hid)} differs from the hand of that id in "
                             f"{store.path if store else ''}: the store was written from other logs")
        if store_players is not None:
            key = store_players.pop(hid, None)
            if key is not None and key != players_key(item.record.players):  # type: ignore[union-attr]
                assert store is not None
                raise _players_differ(store, hid, f"{item.file}:{item.line}: ")
        if logs_players is not None:
            logs_players[hid] = players_key(item.record.players)  # type: ignore[union-attr]
        seq_of[hid] = seq
        return False

    return on_hand


def _check_all_reused(store: Store, seq_of: dict[str, int]) -> None:
    """Every hand of the store must be among the logs' (else it came from other logs)."""
    if len(seq_of) < len(store.hands):
        extra = next(h for h in store.hands if h not in seq_of)
        raise StoreError(f"{store.path} holds {len(store.hands) - len(seq_of)} hand(s) that are not among the valid "
                         f"hands of these logs (e.g. {_shown(extra)}): it was written from other logs; pass the logs it "
                         f"was written from (with any new ones)")
