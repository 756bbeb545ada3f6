"""The gate: replay every hand of some logs and report every problem as data.

Lines that decode into a record go, in batches, through their variant's ``check_batch`` (a compiled fast path for
legal hands); lines that do not decode are explained against the published JSON Schema (:mod:`analyzer.explain`).
Batches are checked in worker processes when ``jobs`` > 1 (:mod:`analyzer.running.pools`).
"""

from __future__ import annotations

from array import array
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any

import msgspec
import orjson

from analyzer.logs import (
    DEFAULT_MAX_LINE_BYTES,
    READ_BUFFER,
    SNIFF_BYTES,
    Line,
    LineReader,
    binary_data,
    decoder,
    expand_paths,
    generate_lines,
)
from analyzer.explain import _not_gzip_hint, duplicate_keys, explain_line
from analyzer.problems import IdSpellings, Problem, blank_hand_id, named_table
from analyzer.running.collector import few_collections
from analyzer.running.jobs import VALIDATE_MIN_BYTES, VALIDATE_MOST, default_jobs, usable_cores
from analyzer.variants import registry
from analyzer.variants.base import HandCheck

#: Tables whose last hand is remembered for the next hand's cross-hand check (the oldest are forgotten).
MAX_OPEN_TABLES = 100_000


@dataclass(slots=True)
class Checked:
    """One line of input after checking: the record (when it decoded) and what its replay found."""

    file: str
    line: int
    hand_id: str | None
    record: Any
    check: HandCheck
    variant: str | None = None  # set when the line decoded into a record
    table_key: str | None = None
    #: set with ``variant``: a 64-bit hash of the deal, the seated players and the moves (:func:`deal_key`), so a copy
    #: of a hand under another id is found (``duplicate-deal``)
    deal_key: int | None = None
    #: the record's player ids, for the cross-hand check of ids that look alike (``validate``'s ``lookalike-ids``);
    #: kept when the record is dropped
    players: list[str] | None = None

    @property
    def ok(self) -> bool:
        return self.variant is not None and self.check.ok


#: Problems a :class:`Summary` keeps (the first ones); the rest are counted by code and streamed out.
MAX_KEPT_PROBLEMS = 5000


@dataclass
class Summary:
    """What a run found: counts, problems by code, and the first ``MAX_KEPT_PROBLEMS`` problems
    (bounded: 10 million bad lines cost the memory of 5,000; see ``validate(on_problem=...)``)."""

    hands: int = 0
    valid_hands: int = 0
    problems: list[Problem] = field(default_factory=list)
    n_problems: int = 0
    by_code: Counter[str] = field(default_factory=Counter)

    def add(self, p: Problem) -> None:
        self.n_problems += 1
        self.by_code[p.code] += 1
        if len(self.problems) < MAX_KEPT_PROBLEMS:
            self.problems.append(p)

    @property
    def truncated(self) -> int:
        """Problems counted but not kept."""
        return self.n_problems - len(self.problems)

    def to_dict(self) -> dict[str, Any]:
        return {"hands": self.hands, "valid_hands": self.valid_hands,
                "problems": [p.to_dict() for p in self.problems]}


# --------------------------------------------------------------------------- the stream

#: :attr:`Checked.table_key` of a line that is no record and names no table (not JSON, too long, no ``table_id``):
#: every table's chain of hands ends there, as the line may have been any table's hand.
ANY_TABLE = "\x00any table"


def _raw_table_id(data: bytes | None) -> str:
    """The ``table_id`` a line that is no record names, as written (:data:`ANY_TABLE` when it names none)."""
    if data is None:
        return ANY_TABLE
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return ANY_TABLE
    tid = obj.get("table_id") if isinstance(obj, dict) else None
    return tid if isinstance(tid, str) else ANY_TABLE


def _shape_problems(line: Line, max_line_bytes: int, error: Exception) -> tuple[str | None, list[Problem]]:
    if line.data is None:
        return None, [Problem("line-too-long", f"the line is longer than {max_line_bytes} bytes; not parsed")]
    try:
        return explain_line(line.data, error)
    except RecursionError:  # nesting deeper than the schema walk can follow
        return None, [Problem("bad-type", "the line nests values too deeply")]


#: Smaller batches check repeated keys exactly in Python: cheaper than loading numba (~0.5 s of CPU), so a
#: small file never imports it.
KEY_SCAN_MIN = 64


def _maybe_repeated(datas: list[bytes]) -> list[bool]:
    """For each decoded line: True when one of its objects may repeat a key (exact for a small batch)."""
    if len(datas) < KEY_SCAN_MIN:
        return [bool(duplicate_keys(data)) for data in datas]
    import numpy as np

    from analyzer.kernels.jsonkeys import maybe_duplicate_keys

    offsets = np.zeros(len(datas) + 1, np.int64)
    np.cumsum([len(d) for d in datas], out=offsets[1:])
    return maybe_duplicate_keys(np.frombuffer(b"".join(datas), np.uint8), offsets).astype(bool).tolist()


def _check_variant(v: Any, records: list[Any], datas: list[bytes]) -> list[HandCheck | Exception]:
    """The checks of one variant's decoded lines (records of its ``line_record_type`` or ``record_type``).
    A line the variant's path over the bytes does not vouch for is decoded as a full record and checked
    the long way; an error for one that does not decode as one, or whose objects repeat a key (the decoder
    kept the last value; another reader may keep the first): not a record, it goes to the explaining
    path, which names the key."""
    found: list[Any] = v.check_raw(records, datas) or [None] * len(records)
    rest = []
    for j, c in enumerate(found):
        if c is None:
            if not isinstance(records[j], v.record_type):
                records[j] = _decode(decoder(), datas[j])
                if isinstance(records[j], Exception):
                    found[j] = records[j]
                    continue
            rest.append(j)
    maybe = _maybe_repeated([datas[j] for j in rest])
    repeats = [j for j, m in zip(rest, maybe) if m and duplicate_keys(datas[j])]
    for j in repeats:
        found[j] = ValueError("a key appears twice in one object")
    rest = [j for j in rest if found[j] is None]
    if rest:
        for j, c in zip(rest, v.check_batch([records[j] for j in rest])):
            found[j] = c
    return found


def _decode(dec: msgspec.json.Decoder, data: bytes | None) -> Any:
    """The line decoded (None when too long to read), or the full decoder's error (the one it names)."""
    if data is None:
        return None
    try:
        return dec.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        pass  # (decoded again outside the handler: the error would hold this one, and its frames, as context)
    try:
        return decoder().decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError) as e:
        return e.with_traceback(None)  # no frame -> list -> error cycle for the GC to find


def deal_key(rec: Any, data: bytes | None = None) -> int:
    """A 64-bit key of a hand's game: its deal, who sat where, and every move. Two hands with the same key are one
    hand told twice (an export run twice under new ids, a retry stored again): equal deals come by chance about once
    in 5e28 deals, and a tournament that deals a deal again on purpose seats other players at it. The deal and the
    moves are read as written: in a game with a line record type (the standard game) as the bytes of the line
    ``data`` (the fields that type leaves raw), however the line was checked; in the others as compact JSON of the
    decoded values. A copy whose times or spacing were changed is not found. Two CRC-32s (the players and the deal;
    the moves), ~6 µs a hand, where a cryptographic hash (blake2b) cost ~13; deterministic, unlike ``hash``, so worker
    processes started afresh agree. Nobody needs to forge a collision: whoever can write the log can break a hand
    anyway.

    The line's bytes, not the record's fields, for a line decoded whole: a legal standard hand in a batch of 64 or
    more is read from its bytes (``check_raw``), one in a smaller batch (a file's last lines, a worker's range's) or
    an illegal one is decoded whole. Hashed each its own way, a spaced-out log (``json.dumps``' ``", "``) copied a hand
    unseen when the copy fell in a file's last 63 lines, and ``--jobs`` changed what was found."""
    import zlib

    line_type = _line_type(type(rec))  # type: ignore[arg-type]  # a class is hashable
    if data is not None and line_type is not None and not isinstance(rec, line_type):
        try:
            rec = _line_decoder(line_type).decode(data)
        except (msgspec.ValidationError, msgspec.DecodeError):  # (a record decodes as its lighter type too)
            pass
    deal_fields, move_fields = _play_fields(type(rec))  # type: ignore[arg-type]  # a class is hashable
    head = zlib.crc32(msgspec.json.encode(rec.players))
    for name in deal_fields:
        value = getattr(rec, name)
        if value is not None:
            head = zlib.crc32(memoryview(value) if isinstance(value, msgspec.Raw) else msgspec.json.encode(value), head)
    moves = 0
    for name in move_fields:
        value = getattr(rec, name)
        if value is not None:
            moves = zlib.crc32(memoryview(value) if isinstance(value, msgspec.Raw) else msgspec.json.encode(value), moves)
    return head << 32 | moves


@cache
def _line_type(kind: type) -> type | None:
    """The lighter type lines of a record type's game are decoded as first (``Game.line_record_type``), or None."""
    tag = kind.__struct_config__.tag  # type: ignore[attr-defined]
    game = registry().get(tag)
    return None if game is None else game.line_record_type


@cache
def _line_decoder(kind: type) -> msgspec.json.Decoder:
    return msgspec.json.Decoder(kind)


@cache
def _play_fields(kind: type) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The fields of a record type that hold its deal, and those that hold its moves."""
    fields = set(kind.__struct_fields__)  # type: ignore[attr-defined]
    return tuple(n for n in _DEAL_FIELDS if n in fields), tuple(n for n in _PLAY_FIELDS if n in fields and n not in
                                                                 _DEAL_FIELDS)


#: The fields of a record that hold its deal and its moves, in every variant (the 信阳黑七 bottom, bids and tricks).
_PLAY_FIELDS = ("deal", "bottom", "actions", "bids", "buried", "tricks")
_DEAL_FIELDS = ("deal", "bottom")


def check_lines(lines: list[Line], max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
                keep_records: bool = True) -> list[Checked]:
    """Decode and replay a batch of raw lines, in order; no cross-hand checks (the unit of parallel work).
    Unless records are kept, lines are decoded as each variant's ``line_record_type`` first."""
    dec = decoder(lines=not keep_records)
    decoded = [_decode(dec, line.data) for line in lines]
    variants = registry()
    by_variant: dict[str, list[int]] = {}
    for k, rec in enumerate(decoded):
        if isinstance(rec, msgspec.Struct):
            by_variant.setdefault(rec.__struct_config__.tag, []).append(k)  # type: ignore[arg-type]
    checks: dict[int, HandCheck] = {}
    for name, ks in by_variant.items():
        recs = [decoded[k] for k in ks]
        found = _check_variant(variants[name], recs, [lines[k].data or b"" for k in ks])
        for k, rec, c in zip(ks, recs, found):
            if isinstance(c, HandCheck):
                checks[k] = c
                decoded[k] = rec
            else:
                decoded[k] = c
    out = []
    for k, (line, rec) in enumerate(zip(lines, decoded)):
        if k in checks:
            v = variants[rec.__struct_config__.tag]
            tkey = named_table(v.table_key(rec))  # a table's hand is kept: check_sequence reads the record
            item = Checked(line.file, line.line, rec.hand_id, rec if keep_records or tkey is not None else None,
                           checks[k], v.name, tkey, deal_key(rec, line.data), rec.players)
        else:
            hand_id, probs = _shape_problems(line, max_line_bytes, rec)
            # no record, so no replay: the table it names (if it names one) has no loser to check the next dealer by
            item = Checked(line.file, line.line, hand_id, None, HandCheck(probs), None, _raw_table_id(line.data))
        for p in item.check.problems:
            p.file, p.line = line.file, line.line
        out.append(item)
    return out


#: Bytes of a regular file one task checks when worker processes share the work: the worker reads them
#: itself (the parent only says where), so the parent neither reads nor sends the lines.
RANGE_BYTES = 4 << 20


@dataclass(slots=True)
class _Range:
    """The lines of a regular file that start in its bytes [start, stop) (to its end when stop is None)."""

    file: str
    start: int
    stop: int | None


def _unreadable(name: str, e: BaseException) -> str:
    """An io-error's message: why ``name`` cannot be read (a link to no file said so, not as errno's words)."""
    import os

    if isinstance(e, FileNotFoundError) and os.path.islink(name):
        return f"cannot read {name}: a link that leads to no file (broken, or a loop of links)"
    if isinstance(e, OSError) and e.errno == 40:  # ELOOP: a loop of links
        return f"cannot read {name}: a link that leads to no file (broken, or a loop of links)"
    if isinstance(e, OSError) and e.strerror and e.filename is not None:  # the name once ("[Errno 36] ...: 'NAME'")
        return f"cannot read {name}: {e.strerror}"
    if str(e).startswith("Not a gzipped file"):  # gzip's words show two bytes: say what the file holds, if known
        return f"cannot read {name}: {e}{_not_gzip_hint(name)}"
    return f"cannot read {name}: {e}"


def _batches(paths: Iterable[str], max_line_bytes: int, batch_size: int,
             ranges: bool = False) -> Iterator[list[Line] | _Range | Checked]:
    """Raw lines in batches (``ranges``: a regular file as ranges of its bytes instead, read by whoever
    checks them); an unreadable path as one ``io-error`` item in its place."""
    import os

    for path in paths:
        name = "<stdin>" if path == "-" else path
        if ranges and path != "-" and not path.endswith(".gz") and os.path.isfile(path):
            try:
                size = os.path.getsize(path)
                with open(path, "rb") as f:  # binary data is no log: said once, as a file read whole says it
                    why = binary_data(f.read(SNIFF_BYTES), stream=False)
            except OSError as e:
                yield Checked(name, 0, None, None, HandCheck([Problem("io-error", f"cannot read {name}: {e}", file=name)]))
                continue
            if why is not None:
                yield Checked(name, 0, None, None, HandCheck([Problem("io-error", f"cannot read {name}: {why}",
                                                                      file=name)]))
                continue
            # the first range is a quarter of the others: the parent checks it alone (loading the kernels)
            # before the workers start, so the other core waits the less (a quarter still holds ~300
            # hands of ~3 KB, enough for the compiled path)
            bounds = [0, *range(RANGE_BYTES // 4, size, RANGE_BYTES)]
            for k, a in enumerate(bounds):  # the last range reads to the end, as far as the file goes then
                yield _Range(path, a, bounds[k + 1] if k + 1 < len(bounds) else None)
            continue
        batch: list[Line] = []  # one file a batch, so a batch travels to a worker with one file name
        try:
            for line in generate_lines(path, max_line_bytes):
                batch.append(line)
                if len(batch) >= batch_size:
                    yield batch
                    batch = []
        except (OSError, EOFError, ValueError) as e:  # unreadable file, bad gzip stream
            if batch:
                yield batch
                batch = []
            yield Checked(name, 0, None, None, HandCheck([Problem("io-error", _unreadable(name, e), file=name)]))
        if batch:
            yield batch


def _results(checked: list[Checked]) -> tuple[Any, ...]:
    """Checked lines as plain lists, with details only for lines that have any: pickling thousands of
    small objects would cost the parent more than the checking saves."""
    extra = {k: (c.table_key, c.check.problems, c.check.outcome, c.record)
             for k, c in enumerate(checked) if c.check.problems or c.table_key is not None}
    # the players of every record, for validate's cross-hand check of lookalike ids
    return ([c.hand_id for c in checked], [c.variant for c in checked], [c.deal_key for c in checked], extra,
            [c.players for c in checked])


def _check_packed(file: str, numbers: bytes, blob: bytes, max_line_bytes: int) -> tuple[Any, ...]:
    """``check_lines`` in a worker process. Lines travel as one blob (a line too long to read as an
    empty one) and results as plain lists (``_results``)."""
    nums = array("q")
    nums.frombytes(numbers)
    lines = [Line(file, n, data or None) for n, data in zip(nums, blob.split(b"\n"))]
    with few_collections():
        checked = check_lines(lines, max_line_bytes, keep_records=False)
    return _results(checked)


def _range_lines(r: _Range, max_line_bytes: int) -> tuple[list[Line], int]:
    """The lines of a range, numbered from 1 within it, and how many lines it holds (blank ones included)."""
    with open(r.file, "rb", buffering=READ_BUFFER) as f:
        if r.start:
            f.seek(r.start - 1)
            if f.read(1) != b"\n":  # inside a line: it started in the range before, which reads it
                while (piece := f.readline(1 << 16)) and not piece.endswith(b"\n"):
                    if r.stop is not None and f.tell() >= r.stop:  # the line goes on past the range: no line
                        return [], 0  # starts in it (else each range of a hostile line of GBs read it to its end)
        reader = LineReader(f, r.file, max_line_bytes, stop=None if r.stop is None else r.stop - f.tell(),
                            first_line=r.start == 0)
        lines = list(reader)
    return lines, reader.count


def _check_range(r: _Range, max_line_bytes: int, batch_size: int) -> tuple[Any, ...]:
    """A range of a file read and checked (in a worker process, or the parent for the first): (lines in
    it, their numbers within it, ``_results``), or (None, why) when it cannot be read."""
    try:
        lines, count = _range_lines(r, max_line_bytes)
    except (OSError, ValueError) as e:
        return None, f"cannot read {r.file}: {e}"
    with few_collections():
        checked = [c for k in range(0, len(lines), batch_size)
                   for c in check_lines(lines[k:k + batch_size], max_line_bytes, keep_records=False)]
    return count, array("q", [x.line for x in lines]).tobytes(), _results(checked)


def _unpack(file: str, numbers: array, result: tuple[Any, ...], base: int = 0) -> list[Checked]:
    """Checked lines from ``_results``; ``base``: the lines of the file before their range."""
    ids, variants, keys, extra, players = result
    out = []
    for k, (n, hand_id, variant, key, seated) in enumerate(zip(numbers, ids, variants, keys, players)):
        n += base
        e = extra.get(k)
        if e is None:
            out.append(Checked(file, n, hand_id, None, HandCheck([]), variant, None, key, seated))
        else:
            table_key, problems, outcome, record = e
            for p in problems:
                p.line = n
            out.append(Checked(file, n, hand_id, record, HandCheck(problems, outcome), variant, table_key, key, seated))
    return out


def _pack(batch: list[Line]) -> tuple[array, bytes]:
    numbers = array("q", [x.line for x in batch])
    return numbers, b"\n".join([b"" if x.data is None else x.data for x in batch])


def _checked_batches(paths: Iterable[str], max_line_bytes: int, batch_size: int, jobs: int,
                     keep_records: bool) -> Iterator[list[Checked]]:
    from itertools import chain, islice

    parallel = jobs > 1 and not keep_records
    source = _batches(paths, max_line_bytes, batch_size, ranges=parallel)
    if parallel:  # never more workers than cores, nor than batches to check
        jobs = min(jobs, usable_cores())
        head = list(islice(source, jobs))
        jobs = min(jobs, sum(not isinstance(b, Checked) for b in head))
        source = chain(head, source)
    bases: dict[str, int] = {}  # per file: the lines of its ranges yielded so far
    failed: set[str] = set()  # files a range of which could not be read: the rest of them is dropped

    def ranged(r: _Range, result: tuple[Any, ...]) -> list[Checked]:
        if r.file in failed:
            return []
        if result[0] is None:
            failed.add(r.file)
            return [Checked(r.file, 0, None, None, HandCheck([Problem("io-error", result[1], file=r.file)]))]
        count, numbers, packed = result
        base = bases.get(r.file, 0)
        bases[r.file] = base + count
        nums = array("q")
        nums.frombytes(numbers)
        return _unpack(r.file, nums, packed, base)

    def here(b: list[Line] | _Range | Checked) -> list[Checked]:
        if isinstance(b, Checked):
            return [b]
        if isinstance(b, _Range):
            return ranged(b, _check_range(b, max_line_bytes, batch_size))
        return check_lines(b, max_line_bytes, keep_records)

    if jobs <= 1 or keep_records:
        for b in source:
            yield here(b)
        return
    import multiprocessing
    from concurrent.futures import Future

    from analyzer.running.pools import new_pool, shut_down, submit

    # The first batch is checked here, before any worker exists: it loads the compiled kernels its hands
    # need (importing numba and loading them costs ~0.4 s of CPU a process), and the workers, forked
    # afterwards, inherit them loaded instead of each loading them again.
    for b in source:
        yield here(b)
        if not isinstance(b, Checked):
            break
    fork = "fork" in multiprocessing.get_all_start_methods()  # not on Windows: the workers load their own
    pool = new_pool(jobs, multiprocessing.get_context("fork") if fork else None)
    Task = tuple[_Range, "Future[tuple[Any, ...]]"] | tuple[str, array, "Future[tuple[Any, ...]]"] | Checked
    try:
        pending: deque[Task] = deque()

        def done(head: Task) -> list[Checked]:
            if isinstance(head, Checked):
                return [head]
            if isinstance(head[0], _Range):
                return ranged(head[0], head[1].result())  # type: ignore[union-attr]
            file, numbers, future = head  # type: ignore[misc]
            return _unpack(file, numbers, future.result())

        for b in source:
            if isinstance(b, Checked):
                pending.append(b)
            elif isinstance(b, _Range):  # the worker reads the range itself
                pending.append((b, submit(pool, _check_range, b, max_line_bytes, batch_size)))
            else:  # lines of a stream (stdin, gzip): sent as one blob; a batch never spans two files
                numbers, blob = _pack(b)
                pending.append((b[0].file, numbers,
                                submit(pool, _check_packed, b[0].file, numbers.tobytes(), blob, max_line_bytes)))
            while len(pending) > 2 * jobs:  # bounded: memory stays flat however long the input
                yield done(pending.popleft())
        while pending:
            yield done(pending.popleft())
    finally:  # on an interrupt or an early stop: drop queued work rather than finish it
        shut_down(pool)


#: Problems that make a hand a copy of an earlier one (inserted first by :func:`generate_checked`).
_COPIES = ("duplicate-hand-id", "duplicate-deal")


def generate_checked(paths: Iterable[str], *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
                     batch_size: int = 1024, jobs: int = 1, keep_records: bool = True) -> Iterator[Checked]:
    """Every non-blank line of the logs, checked, in input order (streams: a few batches in memory).

    Adds the problems that span hands: duplicate hand ids and each variant's cross-hand checks.
    A path that cannot be read yields one ``io-error`` item and the stream goes on. ``jobs`` > 1
    checks batches in worker processes (records are then dropped unless ``keep_records``).
    """
    # Only what the cross-hand checks need, so memory per hand stays a few dozen bytes: a hash of
    # each hand id with where it was (file number, line), and per table the last hand's outcome, least
    # recently used first: bounded, so logs where every hand has its own table cost nothing per hand.
    seen: dict[int, tuple[int, int]] = {}
    deals: dict[int, tuple[int, int]] = {}  # the same for each deal (deal_key), its place shared with the id's
    files: dict[str, int] = {}
    names: list[str] = []
    # per table: the last hand's check (its outcome), its start and where it was
    tables: OrderedDict[tuple[str, str], tuple[HandCheck, datetime | None, str]] = OrderedDict()
    variants = registry()
    for batch in _checked_batches(paths, max_line_bytes, batch_size, jobs, keep_records):
        for item in batch:
            if item.hand_id is not None:
                key = hash(item.hand_id)  # 64-bit hash, not the id: memory per hand stays small
                first = seen.get(key)
                if first is not None:
                    where = f"{names[first[0]]}:{first[1]}"  # by index: many files cost no search
                    item.check.problems.insert(0, Problem(
                        "duplicate-hand-id", f"hand id {item.hand_id!r} was already used at {where}",
                        file=item.file, line=item.line, hand_id=item.hand_id))
                else:
                    if item.file not in files:
                        files[item.file] = len(names)
                        names.append(item.file)
                    place = seen[key] = (files[item.file], item.line)
                    if item.deal_key is not None:
                        first = deals.setdefault(item.deal_key, place)
                        if first is not place:
                            item.check.problems.insert(0, Problem(
                                "duplicate-deal", f"the same deal, players and moves as the hand at "
                                f"{names[first[0]]}:{first[1]}: one hand told twice under two ids",
                                file=item.file, line=item.line, hand_id=item.hand_id))
            if item.table_key is not None and item.variant is None:
                # a line that is no record ends the chain of the table it names (of every table when it names
                # none): the next hand's dealer is not checked against a hand before it
                if item.table_key == ANY_TABLE:
                    tables.clear()
                else:  # by key, not a scan of the open tables (a log of many bad lines stays linear)
                    for name in variants:
                        tables.pop((name, item.table_key), None)
            elif item.table_key is not None and item.variant is not None and not (
                    item.check.problems and item.check.problems[0].code in _COPIES):
                # a hand replayed to its end (even past an illegal borrow) says who deals next; one that
                # stopped early ends the chain, so the next hand is not compared with an older one. A copy of an
                # earlier hand (its id or its deal again) is left out of the chain: the hands around it are a
                # table's sequence without it
                replayed = item.check.ok or item.check.outcome is not None
                prev = tables.pop((item.variant, item.table_key), None)
                started = getattr(item.record, "started_at", None)
                if prev is not None and replayed:
                    before, prev_started, prev_place = prev
                    found = variants[item.variant].check_sequence(before, item.record)
                    if started is not None and prev_started is not None and started < prev_started:
                        found.append(_starts_earlier(item.record, started, prev_started, prev_place))
                    for p in found:
                        p.file, p.line = item.file, item.line
                        item.check.problems.append(p)
                if replayed:
                    tables[(item.variant, item.table_key)] = (HandCheck([], item.check.outcome), started,
                                                              f"{item.file}:{item.line}")
                    if len(tables) > MAX_OPEN_TABLES:
                        tables.popitem(last=False)
            if not keep_records and item.variant is not None:
                item.record = None  # kept this far for a table's sequence only
            if item.variant is not None:
                for p in item.check.problems:
                    p.game = item.variant
            yield item


def _starts_earlier(rec: Any, started: datetime, prev_started: datetime, prev_place: str) -> Problem:
    """``time-backwards`` for a hand of a table (in a game whose rules span a table's hands: who deals, who bids
    first) that starts before the table's previous hand did: the hands of a table are logged in the order they were
    played, and the cross-hand checks read them in that order, so either the order or a start is wrong."""
    return Problem("time-backwards", f"the hand starts at {started.isoformat()}, before the previous hand of table "
                   f"{rec.table_id!r} ({prev_place}), which started at {prev_started.isoformat()}: a table's hands are "
                   f"logged in the order they were played", hand_id=rec.hand_id)


def validate(paths: Iterable[str], *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
             on_progress: Callable[[int], None] | None = None, jobs: int | None = None,
             on_problem: Callable[[Problem], None] | None = None) -> Summary:
    """Check every hand of the given files/folders: a bounded summary; ``on_problem`` sees every
    problem as it is found (so a caller can stream them out in constant memory)."""
    files = expand_paths(paths, keep_missing=True)  # a missing path: an io-error among the problems
    summary = Summary()
    n_jobs = default_jobs(files, VALIDATE_MIN_BYTES, VALIDATE_MOST) if jobs is None else jobs
    spellings = IdSpellings()
    with few_collections():
        for item in generate_checked(files, max_line_bytes=max_line_bytes, jobs=n_jobs, keep_records=False):
            found = item.check.problems
            if item.line:
                summary.hands += 1
                summary.valid_hands += item.ok
                found = found + lookalikes(spellings, item)
            for p in found:
                summary.add(p)
                if on_problem is not None:
                    on_problem(p)
            if on_progress is not None and summary.hands % 1024 == 0:
                on_progress(summary.hands)
    return summary


def lookalikes(spellings: IdSpellings, item: Checked) -> list[Problem]:
    """The ``lookalike-ids`` problems of a checked line: its ids that look like an earlier hand's once normalised (the
    hand stays valid: it replays, and the commands analyse it with its ids as written). None for a copy of an earlier
    hand (its ids are the first's, said there); a hand's players not when they are its ``bad-players`` problem."""
    found = item.check.problems
    if found and found[0].code in _COPIES:
        return []
    players = None if any(p.code == "bad-players" for p in found) else item.players
    hand_id = None if item.hand_id is not None and blank_hand_id(item.hand_id) else item.hand_id  # its own problem
    return spellings.check(item.file, item.line, hand_id, players)


def generate_valid(paths: Iterable[str], problems: list[Problem] | None = None, **kw: Any) -> Iterator[Checked]:
    """Only the valid hands (for analysis); the others' problems are appended to ``problems``."""
    for item in generate_checked(expand_paths(paths), **kw):
        if item.ok:
            yield item
        elif problems is not None:
            problems.extend(item.check.problems)
