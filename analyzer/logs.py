"""Streaming reader and atomic writer of log format v1 (JSON Lines; files, folders, .gz, stdin).

Reading is one line at a time: a file of any size needs the memory of one hand. A line longer
than the limit is skipped without being parsed and reported.
"""

from __future__ import annotations

import gzip
import io
import os
import sys
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import IO, Any

import msgspec

from analyzer.variants import registry

DEFAULT_MAX_LINE_BYTES = 1 << 20
LOG_SUFFIXES = (".jsonl", ".jsonl.gz")


@dataclass(slots=True)
class Line:
    """One raw line: where it is, and its bytes without the line ending (None when it was too long to read)."""

    file: str
    line: int
    data: bytes | None


class InputError(Exception):
    """A path that cannot be read at all (missing, not a log, unreadable)."""


def expand_paths(paths: Iterable[str]) -> list[str]:
    """Files as given, folders as every ``*.jsonl`` / ``*.jsonl.gz`` below them (sorted), ``-`` as stdin."""
    out: list[str] = []
    for p in paths:
        if p == "-":
            out.append(p)
            continue
        path = Path(p)
        if path.is_dir():
            out.extend(str(f) for f in sorted(path.rglob("*")) if f.is_file() and f.name.endswith(LOG_SUFFIXES))
        elif path.exists():
            out.append(p)
        else:
            raise InputError(f"{p}: no such file or folder")
    return out


def _open(path: str) -> IO[bytes]:
    if path == "-":
        return sys.stdin.buffer
    f = open(path, "rb")  # noqa: SIM115 - closed by the caller
    if path.endswith(".gz"):
        return gzip.GzipFile(fileobj=f, mode="rb")  # type: ignore[return-value]
    return f


def generate_lines(path: str, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Iterator[Line]:
    """Non-blank lines of one file, 1-based numbers; too-long lines come with ``data=None``."""
    name = "<stdin>" if path == "-" else path
    f = _open(path)
    try:
        buf = f if isinstance(f, io.BufferedIOBase) else io.BufferedReader(f)  # type: ignore[arg-type,type-var]
        n = 0
        while True:
            raw = buf.readline(max_line_bytes + 1)
            if not raw:
                return
            n += 1
            if len(raw) > max_line_bytes and not (len(raw) == max_line_bytes + 1 and raw.endswith(b"\n")):
                while raw and not raw.endswith(b"\n"):  # skip the rest of the line without keeping it
                    raw = buf.readline(1 << 16)
                yield Line(name, n, None)
                continue
            if raw.strip():
                yield Line(name, n, raw.rstrip(b"\r\n"))
    finally:
        if f is not sys.stdin.buffer:
            f.close()


def record_types() -> tuple[type, ...]:
    return tuple(v.record_type for v in registry().values())


@cache
def decoder() -> msgspec.json.Decoder:
    """One decoder for every variant's record (dispatch on the ``variant`` tag); made once."""
    types = record_types()
    union: Any = types[0]
    for t in types[1:]:
        union = union | t
    return msgspec.json.Decoder(union)


_encoder = msgspec.json.Encoder()


def format_record(record: Any) -> bytes:
    """A record as one canonical JSON line (no newline)."""
    return _encoder.encode(record)


def parse_record(data: bytes | str) -> Any:
    """One record from one JSON line; raises ``msgspec.ValidationError``/``DecodeError`` if it is not one."""
    return decoder().decode(data)


def _umask_mode() -> int:
    """The mode a plain ``open()`` would give a new file (mkstemp makes them 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def check_not_input(target: str | os.PathLike[str], inputs: Iterable[str]) -> None:
    """Raise :class:`InputError` when ``target`` is one of the input files (an output never overwrites one)."""
    t = Path(target)
    if not t.exists():
        return
    for i in inputs:
        if i != "-" and Path(i).exists() and os.path.samefile(i, t):
            raise InputError(f"{t}: refusing to overwrite an input file")


def write_records(path: str | os.PathLike[str], records: Iterable[Any], *, inputs: Iterable[str] = ()) -> int:
    """Write records as JSON Lines (gzip if the name ends in .gz), whole or not at all.

    Refuses to overwrite any of ``inputs``. Returns the number of records written.
    """
    target = Path(path)
    check_not_input(target, inputs)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    n = 0
    try:
        with os.fdopen(fd, "wb") as raw:
            out: IO[bytes] = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) \
                if target.name.endswith(".gz") else raw  # type: ignore[assignment]
            for rec in records:
                out.write(format_record(rec) + b"\n")
                n += 1
            if out is not raw:
                out.close()
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return n


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write a whole file or nothing (temp file + rename)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, _umask_mode())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
