"""Streaming reader and atomic writer of log format v1 (JSON Lines; files, folders, .gz, stdin).

Reading is one line at a time: a file of any size needs the memory of one hand. A line longer
than the limit is skipped without being parsed and reported.
"""

from __future__ import annotations

import errno
import gzip
import io
import os
import re
import stat
import sys
import tempfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import msgspec

from analyzer.running import stops
from analyzer.variants import registry

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_MAX_LINE_BYTES = 1 << 20
LOG_SUFFIXES = (".jsonl", ".jsonl.gz")
BOM = b"\xef\xbb\xbf"
#: Bytes a file is read by: lines of a few KB each cost a read call apiece with the default 8 KB
#: (reading a line took 2.7 µs of CPU instead of 1.1).
READ_BUFFER = 1 << 16


@dataclass(slots=True)
class Line:
    """One raw line: where it is, and its bytes without the line ending (None when it was too long to read)."""

    file: str
    line: int
    data: bytes | None


class InputError(Exception):
    """A path that cannot be read at all (missing, not a log, unreadable)."""


def expand_paths(paths: Iterable[str], keep_missing: bool = False) -> list[str]:
    """Files as given, folders as every ``*.jsonl`` / ``*.jsonl.gz`` below them (sorted), ``-`` as stdin.

    A missing path or a link to no file is an :class:`InputError`, or with ``keep_missing`` kept in the list, where
    reading it says why (``validate``: an io-error among the other problems, the other paths read).

    A file named twice (directly, through a folder, by a link, or as ``-`` with standard input
    redirected from it) is read once: its hands are not duplicates of themselves. Links to folders are
    not followed (no loops), each said in a warning line on standard error. Inside a folder, an entry named
    like a log that is not a regular file (a FIFO, socket or device) is skipped with a warning line on standard
    error; given directly, it is read."""
    out: list[str] = []
    seen: set[tuple[int, int]] = set()

    def add(name: str) -> None:
        try:
            st = os.stat(name)
        except OSError:
            out.append(name)  # reading it will say why it cannot be read
            return
        key = (st.st_dev, st.st_ino)
        if key not in seen:
            seen.add(key)
            out.append(name)

    for p in paths:
        if p == "-":
            if p in out:
                continue
            key = _stdin_file()
            if key is None:  # a pipe, a terminal or none: nothing else can be the same file
                out.append(p)
            elif key not in seen:
                seen.add(key)
                out.append(p)
            continue
        path = Path(p)
        try:
            os.stat(p)
        except OSError as e:
            if e.errno not in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):  # too long a name, no permission on the way
                if keep_missing:
                    out.append(p)  # reading it says why, the other paths read (validate: an io-error)
                    continue
                raise InputError(f"{p}: {e.strerror or e}") from None
        if path.is_dir():
            for f in _logs_below(path):
                if f.is_file():
                    add(str(f))
                elif f.is_symlink() and not f.exists():
                    if keep_missing:
                        out.append(str(f))
                        continue
                    raise InputError(f"{f}: a link that leads to no file (broken, or a loop of links)")
                else:  # a FIFO, socket or device named like a log: not read (a FIFO could wait forever), but said
                    _warn(f"{f}: not a regular file (a FIFO, socket or device); skipped (name it directly to read it)")
        elif path.exists():
            add(p)
        elif keep_missing:
            out.append(p)
        elif path.is_symlink():
            raise InputError(f"{p}: a link that leads to no file (broken, or a loop of links)")
        else:
            raise InputError(f"{p}: no such file or folder")
    return out


def _warn(message: str) -> None:
    """One warning line on standard error (the data's characters escaped: a file name cannot forge lines), once a
    process however often the paths are expanded."""
    from analyzer.problems import printable

    if message in _warned:
        return
    _warned.add(message)
    try:
        sys.stderr.write(f"analyzer: warning: {printable(message)}\n")
    except (OSError, ValueError, AttributeError):  # no standard error to say it on
        pass


_warned: set[str] = set()


def _stdin_file() -> tuple[int, int] | None:
    """(device, inode) of standard input when it is a regular file (``< log.jsonl``), else None."""
    try:
        st = os.fstat(sys.stdin.fileno())
    except (OSError, ValueError, AttributeError):  # no standard input, or one that is not a file descriptor
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def _logs_below(folder: Path) -> list[Path]:
    """Every entry below ``folder`` named as a log, sorted (links to folders are not followed). A folder that cannot
    be listed raises :class:`InputError` (``Path.rglob`` skips it without a word, and the command would run on part
    of the input)."""
    def fail(e: OSError) -> None:
        raise InputError(f"{e.filename}: cannot list the folder: {e.strerror}")

    found = []
    for root, dirs, names in os.walk(folder, onerror=fail):
        found += [Path(root) / n for n in names if n.endswith(LOG_SUFFIXES)]
        for d in sorted(dirs):  # not followed, but said: the logs below it are not read
            if os.path.islink(os.path.join(root, d)):
                _warn(f"{Path(root) / d}: a link to a folder; not followed (name it directly to read its logs)")
    return sorted(found, key=natural_order)


def natural_order(path: Path) -> tuple[tuple[tuple[int, str], ...], ...]:
    """A path's sort key with its numbers read as numbers, part by part: ``day-9`` before ``day-10`` (a table's
    hands split over numbered files are read in their order); the text itself breaks ties (``01`` and ``1``)."""
    def part(name: str) -> tuple[tuple[int, str], ...]:
        tokens = re.split(r"(\d+)", name)
        return tuple((int(t), t) if k % 2 else (-1, t) for k, t in enumerate(tokens))
    return (*(part(p) for p in path.parts), ((0, str(path)),))


def _open(path: str) -> IO[bytes]:
    if path == "-":
        return sys.stdin.buffer
    f = open(path, "rb", buffering=READ_BUFFER)  # noqa: SIM115 - closed by the caller
    if path.endswith(".gz"):
        return gzip.GzipFile(fileobj=f, mode="rb")  # type: ignore[return-value]
    return f


def generate_lines(path: str, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Iterator[Line]:
    """Non-blank lines of one file, 1-based numbers; too-long lines come with ``data=None``. An input whose first
    block is binary data (:func:`binary_data`) raises :class:`NotText` before any line is given."""
    f = _open(path)
    try:
        peek = getattr(f, "peek", None)
        if peek is not None:
            why = binary_data(peek(SNIFF_BYTES)[:SNIFF_BYTES], stream=not _regular(f))
            if why is not None:
                raise NotText(why)
        yield from LineReader(f, "<stdin>" if path == "-" else path, max_line_bytes)
    except zlib.error as e:  # a gzip stream whose compressed data is broken: a read error like any other
        raise gzip.BadGzipFile(f"broken compressed data ({e})") from None
    finally:
        if f is not sys.stdin.buffer:
            f.close()


#: Bytes at the start of an input looked at to tell a log (text) from binary data: the first block read.
SNIFF_BYTES = 1 << 16


class NotText(ValueError):
    """An input whose first block is binary data, not lines of text (``/dev/urandom``, an image, an executable):
    nothing of it is read (an io-error, the other files read), so a device of endless random bytes is not read for
    ever, a not-utf8 problem a line."""


def _regular(f: IO[bytes]) -> bool:
    """Whether ``f`` (or the file under a gzip stream) is a regular file: its end will come."""
    raw = getattr(f, "fileobj", None) or f  # a GzipFile reads the file it was given
    try:
        return stat.S_ISREG(os.fstat(raw.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):
        return False


#: Compressed data by its first bytes: the format, and the command that writes it out decompressed.
_COMPRESSED = ((b"\x1f\x8b", "gzip", "zcat"), (b"BZh", "bzip2", "bzcat"), (b"\xfd7zXZ\x00", "xz", "xzcat"),
               (b"\x28\xb5\x2f\xfd", "zstd", "zstdcat"), (b"PK\x03\x04", "zip", "unzip -p"))


def _compressed_as(data: bytes) -> tuple[str, str] | None:
    """(format, command to decompress) of data that starts as a compressed file does; None otherwise."""
    return next(((name, tool) for magic, name, tool in _COMPRESSED if data.startswith(magic)), None)


def _encoding_hint(data: bytes) -> str:
    """What a line that is not UTF-8 JSON looks like instead, when it is a text encoding a server may write: UTF-16 or
    UTF-32 (a byte order mark, or NUL bytes between the characters: each line of such a file but the first reads as
    UTF-8 that is no JSON) or GB18030/GBK (Chinese text); "" otherwise."""
    convert = "; logs are UTF-8: convert the file first (iconv -f {} -t UTF-8 LOG > LOG.utf8.jsonl)"
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "; it starts with a UTF-32 byte order mark" + convert.format("UTF-32")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "; it starts with a UTF-16 byte order mark" + convert.format("UTF-16")
    nuls = data.count(0)
    if nuls == len(data) > 0:  # what a little-endian file's last line ending leaves
        return "; only NUL bytes, as the end of UTF-16 or UTF-32 text" + convert.format("UTF-16 (or UTF-32)")
    if nuls * 4 >= len(data) > 0:  # ASCII as UTF-16 is half NULs, as UTF-32 three quarters
        name = "UTF-32" if nuls * 8 >= len(data) * 5 else "UTF-16"
        return f"; NUL bytes part its characters, as in {name} text" + convert.format(name)
    if not data.isascii() and data.lstrip().startswith(b"{"):  # a record's start: not any binary line that decodes
        try:
            text = data.decode("gb18030")
        except UnicodeDecodeError:
            return ""
        if text.isprintable():
            return "; it reads as GB18030 (GBK) text" + convert.format("GB18030")
    return ""


#: A regular file whose first block is shorter is never called binary: read a line at a time, it has few problems
#: (each said as the line's own: not-utf8, not-json), and what it is stays visible line by line.
SMALL_FILE = 4096
#: Bytes that never stand in a log's text: the C0 controls but tab, LF and CR (JSON escapes every control in its
#: strings), which binary data holds one byte in nine of (random bytes), and text next to none of.
_CONTROL_BYTES = bytes(b for b in range(32) if b not in b"\t\n\r")


def binary_data(head: bytes, *, stream: bool) -> str | None:
    """Why ``head``, the first block of an input, is binary data and no log; None when it may be text.

    Binary is a block of which more than one byte in 32 is a control character (NUL included; random bytes hold one
    in nine, a log with a corrupt line next to none: its lines are each a problem, as before), or on a stream
    (standard input, a named pipe, a device: it may never end, and ``/dev/urandom`` gave a problem a line for ever)
    that or bytes that are not UTF-8. Text in another encoding (UTF-16, UTF-32: half their bytes NUL) is not binary:
    each line says how to convert it. Compressed data is binary on a stream (said with how to decompress it); in a
    regular file each line says what it holds, as before (the file ends). A regular file under :data:`SMALL_FILE` bytes
    is never binary."""
    if len(head) < (1 if stream else SMALL_FILE):  # a small file: a problem a line is few problems
        return None
    controls = len(head) - len(head.translate(None, _CONTROL_BYTES))
    bad = 0
    if stream and controls * 32 <= len(head):
        text = head.decode("utf-8", "replace")
        bad = text.count("\ufffd") - head.count("\ufffd".encode())
        if bad and head[-3:].decode("utf-8", "replace").endswith("\ufffd"):  # a character cut by the block's end
            bad -= 1
    if (controls + bad) * 32 <= len(head):
        return None
    nuls = head.count(0)
    if nuls < len(head) and (_encoding_hint(head) or _encoding_hint(head.split(b"\n", 1)[0])):
        return None  # text in UTF-16 or UTF-32 (not only NULs, as /dev/zero): each line says how to convert it
    packed = _compressed_as(head)
    if packed is not None:
        if not stream:
            return None  # each line says what it holds (a regular file ends)
        name, tool = packed
        how = "zcat LOG.gz | analyzer ..." if name == "gzip" else f"{tool} LOG | analyzer ..."
        return (f"it holds {name} data, not a text log: only a file whose name ends in .gz is decompressed (on a "
                f"stream, decompress it first: {how}); nothing of it is read")
    why = ("only NUL bytes" if nuls == len(head) else f"{controls:,} control bytes ({nuls:,} of them NUL)"
           if controls * 32 > len(head) else f"{bad:,} byte sequences that are not UTF-8")
    return (f"binary data, not a text log ({why} in its first {len(head):,} bytes; a log is lines of JSON in UTF-8); "
            f"nothing of it is read")


#: Bytes of one too-long line the reader skips, looking for its end, before it gives the file up (:class:`NoLineEnd`;
#: at least 4x the line limit), so a line that never ends (``/dev/zero``) is not read for ever.
SKIP_CAP = 1 << 30


class NoLineEnd(ValueError):
    """A line that runs on past :data:`SKIP_CAP` bytes: the rest of its file is not read (an io-error, the other
    files read)."""


class LineReader:
    """The non-blank lines of an open binary stream from where it stands, numbered from 1 (too-long ones
    with ``data=None``). ``stop``: only the lines that start within that many bytes of the start (a range
    of a file, read by a worker process); ``count`` is then the number of lines read, blank ones
    included, from which the next range's numbers go on. ``first_line``: whether the stream stands at
    the start of its file (where a byte order mark may come first)."""

    def __init__(self, f: IO[bytes], name: str, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, *,
                 stop: int | None = None, first_line: bool = True) -> None:
        self.f, self.name, self.max_line_bytes, self.stop, self.first_line = f, name, max_line_bytes, stop, first_line
        self.count = 0

    def __iter__(self) -> Iterator[Line]:
        f, name, max_line_bytes, stop = self.f, self.name, self.max_line_bytes, self.stop
        buf = f if isinstance(f, io.BufferedIOBase) else io.BufferedReader(f)  # type: ignore[arg-type,type-var]
        peek = getattr(buf, "peek", None)
        n = 0
        pos = 0
        # the limit counts the line without its ending (LF or CRLF); the first read also takes room for a byte
        # order mark some editors put first, which is not part of the line
        room = max_line_bytes + 2 + (len(BOM) if self.first_line else 0)
        while stop is None or pos < stop:
            raw = buf.readline(room)
            if not raw:
                break
            n += 1
            pos += len(raw)
            if n == 1:
                room = max_line_bytes + 2
                if self.first_line and raw.startswith(BOM):
                    raw = raw[len(BOM):]
            size = len(raw) - (2 if raw.endswith(b"\r\n") else 1 if raw.endswith(b"\n") else 0)
            if size > max_line_bytes:
                skipped, cap = len(raw), max(SKIP_CAP, 4 * max_line_bytes)
                while raw and not raw.endswith(b"\n"):  # skip the rest of the line without keeping it
                    raw = buf.readline(1 << 16)
                    pos += len(raw)
                    skipped += len(raw)
                    if skipped > cap:  # a line that never ends (/dev/zero, a file of no line ends): give up the file
                        raise NoLineEnd(f"line {n} runs on past {cap:,} bytes without a line end (a device such as "
                                        f"/dev/zero, or a file that is not lines of JSON); the rest of it is not read")
                self.count = n
                yield Line(name, n, None)
                continue
            self.count = n
            if raw and not raw.isspace():  # (what strip() would leave empty, without copying the line to see)
                yield Line(name, n, raw.rstrip(b"\r\n"))
            elif raw == b"\n" and peek is not None:  # a run of empty lines (a hostile gzip of them): passed in C
                while True:
                    ahead = peek(1 << 16)
                    k = len(ahead) - len(ahead.lstrip(b"\n"))
                    if stop is not None:
                        k = min(k, stop - pos)  # lines that start past ``stop`` are the next range's
                    if k <= 0:
                        break
                    buf.read(k)
                    n += k
                    pos += k
                    self.count = n
                    if k < len(ahead):
                        break
        self.count = n


def record_types(lines: bool = False) -> tuple[type, ...]:
    """Every variant's record type (``lines``: its ``line_record_type`` where it has one)."""
    return tuple((lines and v.line_record_type) or v.record_type for v in registry().values())


@cache
def decoder(lines: bool = False) -> msgspec.json.Decoder:
    """One decoder for every variant's record (dispatch on the ``variant`` tag); made once. ``lines``: the
    lighter types validation decodes first (see ``Game.line_record_type``)."""
    types = record_types(lines)
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


def read_once(path: str) -> bool:
    """Whether an input can be read only once: standard input (``-``) or a path that is not a regular file (a named
    pipe, ``<(zcat ...)``'s ``/dev/fd/N``, ``/dev/stdin`` on a pipe, a character device). Opened again, such an input
    waits for a writer that is gone or stands at its end: what a command needs of it twice is kept the first time."""
    return path == "-" or is_special(path)


def record_hash(record: Any) -> int:
    """A 64-bit hash of a record's canonical line (:func:`format_record`): a line read again holds the record read
    first when the hashes agree (within one process: Python's hash)."""
    return hash(format_record(record))


class ChangedInput(InputError):
    """An input read again (:func:`records_at` with ``expect``) no longer holds what was read there first."""

    def __init__(self, path: str, why: str = "") -> None:
        from analyzer.problems import printable

        super().__init__(printable(f"{path}: changed while the audit read it{why}"))
        self.path = path


def records_at(places: dict[str, list[int]], max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, *,
               expect: dict[str, dict[int, int | None]] | None = None) -> Iterator[Any]:
    """The records on some lines of some files (``places``: file -> line numbers, 1-based as :class:`Line`'s), in
    the files' order then the lines', each file read up to its last wanted line. For hands a first pass found
    valid and wants again (a report's evidence hands): they are decoded, not validated again, so reading a few
    hands back costs the reading of the lines, not a second validation of the whole input. Without ``expect``, a
    line that no longer decodes (the file changed meanwhile) is left out. With ``expect`` (file -> line -> the
    :func:`record_hash` of the record the first pass read there), each wanted line must hold that record again: a
    line that changed, no longer decodes or is gone (the file cut, replaced or removed) raises
    :class:`ChangedInput`, before any record of a later line is given."""
    for path, lines in places.items():
        want = set(lines)
        if not want:
            continue
        last = max(want)
        hashes = None if expect is None else expect.get(path, {})
        seen = 0
        try:
            for ln in generate_lines(path, max_line_bytes):
                if ln.line in want:
                    seen += 1
                    try:
                        rec = None if ln.data is None else parse_record(ln.data)
                    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
                        rec = None
                    if hashes is not None:
                        first = hashes.get(ln.line)  # None: a record the first pass did not keep, not compared
                        if rec is None or (first is not None and record_hash(rec) != first):
                            raise ChangedInput(path)
                    if rec is not None:
                        yield rec
                if ln.line >= last:
                    break
        except (OSError, EOFError, zlib.error, NotText, NoLineEnd) as e:  # gone, unreadable, a gzip stream cut short
            # or broken, binary data or a line without end
            if expect is None:
                raise
            raise ChangedInput(path, f" (cannot read it again: {getattr(e, 'strerror', None) or e})") from None
        if hashes is not None and seen < len(want):  # the file is shorter now (blank lines are not yielded either)
            raise ChangedInput(path)


#: Bytes of an output's name kept in the hidden temporary name beside it (``.NAME.XXXXXXXX.tmp``): a name near the
#: file system's limit (255 bytes) leaves room for the rest, so any name that can be written can be written whole.
HIDDEN_STEM_BYTES = 200


def hidden_stem(name: str) -> str:
    """``name`` as the stem of a hidden temporary name beside it: at most :data:`HIDDEN_STEM_BYTES` bytes of it (whole
    characters), so ``.STEM.`` plus a random part and a suffix stay under the file system's 255."""
    data = os.fsencode(name)
    if len(data) <= HIDDEN_STEM_BYTES:
        return name
    return os.fsdecode(data[:HIDDEN_STEM_BYTES].decode("utf-8", "ignore").encode("utf-8"))


def _umask_mode() -> int:
    """The mode a plain ``open()`` would give a new file (mkstemp makes them 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


class OutputError(InputError):
    """An output that must not or cannot be written (it is an input, or not a file or folder)."""


def is_special(path: str | os.PathLike[str]) -> bool:
    """True for an existing path that is not a regular file or folder: a device (/dev/null), a FIFO, a socket, or
    a name of one of this process' open files (``/dev/stdout``, ``/dev/fd/N``, ``/proc/self/fd/N``, whatever the
    descriptor leads to: a redirect to a regular file too). Those are written to directly; replacing them with a
    regular file would break them (and renaming over ``/dev/stdout`` would replace the system's link)."""
    if descriptor_of(path) is not None:
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


_FD_NAME = re.compile(r"^/(?:dev/fd|proc/(?:self|thread-self|\d+)/fd)/(\d+)$")
_STD_NAME = {"/dev/stdin": 0, "/dev/stdout": 1, "/dev/stderr": 2}


def descriptor_of(path: str | os.PathLike[str]) -> int | None:
    """The descriptor a path names when it is one of this process' open files (``/dev/stdout`` is 1, ``/dev/fd/3``
    is 3, also through links to those names), else None. Read from the names alone: following the link would give
    the file the descriptor leads to, e.g. the regular file standard output is redirected to."""
    name = os.path.abspath(os.fspath(path))
    for _ in range(40):  # a chain of links, as the system follows them (a loop: not a descriptor)
        if name in _STD_NAME:
            return _STD_NAME[name]
        m = _FD_NAME.match(name)
        if m is not None:
            pid = name.split("/")[2] if name.startswith("/proc/") else "self"
            return int(m.group(1)) if pid in ("self", "thread-self", str(os.getpid())) else None
        try:
            link = os.readlink(name)
        except OSError:  # not a link (or gone): the name is all there is
            return None
        name = os.path.normpath(os.path.join(os.path.dirname(name), link))
    return None


def check_not_input(target: str | os.PathLike[str], inputs: Iterable[str]) -> None:
    """Raise :class:`OutputError` when ``target`` is one of the input files or holds one (an output
    never overwrites an input). ``inputs`` must be the expanded files (see :func:`expand_paths`); a folder among them
    (a decision store read as a whole) may hold no output at all: its files are its own."""
    t = Path(target)
    if is_special(t):
        return
    folders = [i for i in inputs if i != "-" and os.path.isdir(i)]
    if folders:
        real = Path(os.path.realpath(t))
        for d in folders:
            folder = Path(os.path.realpath(d))
            if real == folder or folder in real.parents:
                raise OutputError(f"{target}: refusing to write inside {d}, an input (a decision store's folder "
                                  f"holds its own files only)")
    if not t.exists():
        return
    for i in inputs:
        if i == "-":  # standard input redirected from a file (``< log.jsonl``) is that file
            if _stdin_is(t):
                raise OutputError(f"{target}: refusing to overwrite an input file (it is standard input)")
            continue
        if not Path(i).exists():
            continue
        if os.path.samefile(i, t):
            raise OutputError(f"{target}: refusing to overwrite an input file")


def _stdin_is(target: Path) -> bool:
    """Whether standard input is the file ``target`` (redirected from it)."""
    try:
        st, ts = os.fstat(sys.stdin.fileno()), os.stat(target)
    except (OSError, ValueError, AttributeError):  # no standard input, or one that is not a file descriptor
        return False
    return (st.st_dev, st.st_ino) == (ts.st_dev, ts.st_ino)


def through_links(path: str | os.PathLike[str]) -> Path:
    """Where writing ``path`` lands: when it is a link (or a chain of them), the file it leads to, so that the link
    stays a link, as a shell's ``>`` and editors write through one (a temporary file renamed over the link replaced
    it with a regular file, and the file it led to kept its old content); else ``path`` itself. A link to a file not
    made yet leads to where that file is made; a loop of links is an :class:`OutputError`."""
    target = Path(path)
    if not target.is_symlink():
        return target
    try:
        return Path(os.path.realpath(target, strict=True))
    except FileNotFoundError:  # a link to no file yet: the file is made where the link leads
        return Path(os.path.realpath(target))
    except OSError as e:
        raise OutputError(f"{path}: a link that leads to no file (a loop of links); nothing written") from e


@contextmanager
def open_output(path: str | os.PathLike[str], *, inputs: Iterable[str] = ()) -> Iterator[IO[bytes]]:
    """A binary file to write ``path`` through, whole or not at all.

    A regular file is written to a temporary file beside it and renamed over it only when the block
    ends without an error (the old file stays untouched otherwise; the temporary file never survives,
    Ctrl-C included). A device or a pipe is written to directly. A link is written where it leads
    (:func:`through_links`: the link stays). Refuses to overwrite any of ``inputs``.
    """
    target = Path(path)
    check_not_input(target, inputs)
    try:
        fd = descriptor_of(target)
        if fd is not None:  # one of our open files (-o - is /dev/stdout): written through it, where it stands
            for stream in (sys.stdout, sys.stderr):
                if stream is not None:
                    stream.flush()
            with os.fdopen(os.dup(fd), "wb") as f:
                yield f
            return
        if is_special(target):
            with open(target, "wb") as f:
                yield f
            return
        target = through_links(target)
        if target.is_dir():
            raise OutputError(f"{target}: is a folder, expected a file")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError) as e:  # a file where a folder of the path should be
            raise OutputError(f"{target}: cannot make its folder {target.parent}: a file is in the way") from e
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{hidden_stem(target.name)}.", suffix=".tmp", dir=target.parent)
        except OSError as e:  # named as the output asked for, not as the hidden temporary file beside it
            raise OSError(e.errno, e.strerror or str(e), str(target)) from e
        try:
            with os.fdopen(fd, "wb") as f:
                yield f
            os.chmod(tmp, _umask_mode())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as e:
        if e.filename is None:  # a failed write names no file: name the output
            raise OSError(e.errno, e.strerror or str(e), str(target)) from e
        raise


def write_records(path: str | os.PathLike[str], records: Iterable[Any], *, inputs: Iterable[str] = (),
                  then: Callable[[], None] | None = None) -> int:
    """Write records as JSON Lines (gzip if the name ends in .gz), whole or not at all; streams.

    Refuses to overwrite any of ``inputs``. ``then``, when given, is called once every record is written and
    before the file is put in place (e.g. a companion file written whole): an error in it leaves no file either.
    Returns the number of records written.
    """
    n = 0
    with open_output(path, inputs=inputs) as raw:
        out: IO[bytes] = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) \
            if Path(path).name.endswith(".gz") else raw  # type: ignore[assignment]
        for rec in records:
            out.write(format_record(rec) + b"\n")
            n += 1
        if out is not raw:
            out.close()
        if then is not None:
            then()
    return n


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes, *, inputs: Iterable[str] = ()) -> None:
    """Write a whole file or nothing (temp file + rename; a device or pipe directly)."""
    with open_output(path, inputs=inputs) as f:
        f.write(data)


#: How a spreadsheet cell starts when it is read as a formula (OWASP's list: = + - @ tab and carriage return), and
#: the apostrophe itself, so that one leading apostrophe can always be taken off again to get the text back.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "'")


def csv_text(frame: pd.DataFrame, **options: Any) -> str:
    """``frame.to_csv(index=False, **options)``, the one way this tool writes a CSV: a text cell that starts
    like a formula (:data:`FORMULA_STARTS`; a player id is the logs' text) gets an apostrophe in front, as OWASP
    recommends, so a spreadsheet shows it instead of running it. Numeric and bool columns are left alone (a negative
    score stays a number); the frame itself is not changed. A text holding a carriage return makes the file's lines
    end in CR LF (as RFC 4180 has them): Python's csv module quotes a field with a CR only when the line ending has
    one, and an unquoted CR splits the row for most readers."""
    out = frame
    for name in frame.columns:
        col = frame[name]
        if col.dtype.kind in "biufcmM":  # numbers, bools, times: written as numbers
            continue
        try:
            starts = col.str.startswith(FORMULA_STARTS, na=False)
        except AttributeError:  # an object column without a string in it
            continue
        if "lineterminator" not in options and col.str.contains("\r", regex=False, na=False).any():
            options["lineterminator"] = "\r\n"
        if starts.any():
            if out is frame:
                out = frame.copy(deep=False)
            values = col.astype(object)
            out[name] = values.where(~starts, "'" + values[starts].astype(str))
    return out.to_csv(index=False, **options)


class OutputSet:
    """Several outputs in one folder written as a set: all new or all old, never a mix.

    Files are written into a hidden temporary folder inside ``folder`` and moved in only when every one
    is written (signals held while they move). A lock on the folder keeps two runs from mixing their sets.
    A folder this run made is removed again when the set is not written (a failure or Ctrl-C leaves no empty
    folder).
    """

    def __init__(self, folder: str | os.PathLike[str], names: Iterable[str], *, inputs: Iterable[str] = ()):
        self.folder = through_links(folder)  # a link to a folder: the folder (a link to none: made where it leads)
        self.names = list(names)
        inputs = list(inputs)
        if self.folder.exists() and not self.folder.is_dir():
            raise OutputError(f"{folder}: not a folder")
        for n in self.names:
            check_not_input(self.folder / n, inputs)
            if is_special(self.folder / n) or (self.folder / n).is_dir():
                raise OutputError(f"{self.folder / n}: not a regular file")
            through_links(self.folder / n)  # a loop of links: refused now, before any work

    def __enter__(self) -> Path:
        import fcntl

        self.made = not self.folder.exists()  # made by this run: removed again if the set is not written
        self.folder.mkdir(parents=True, exist_ok=True)
        self._lock = os.open(self.folder, os.O_RDONLY)
        fcntl.flock(self._lock, fcntl.LOCK_EX)  # a second run into this folder waits for the first
        try:
            self.tmp = Path(tempfile.mkdtemp(prefix=".analyzer-", suffix=".tmp", dir=self.folder))
        except OSError as e:  # named as the folder asked for, not as the hidden one it could not make in it
            os.close(self._lock)
            if self.made:
                try:
                    self.folder.rmdir()
                except OSError:
                    pass
            raise OSError(e.errno, e.strerror or str(e), str(self.folder)) from e
        return self.tmp

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        import shutil
        import signal

        if isinstance(exc, OSError) and exc.filename is not None:  # a write into the hidden folder (a full disk):
            try:  # named as the output it was for
                inside = Path(os.fsdecode(exc.filename)).relative_to(self.tmp)
            except (ValueError, TypeError):
                pass
            else:
                exc.filename = str(self.folder / inside)
        stopped = kind is None and stops.received() is not None  # a stop whose exception was swallowed
        beside: list[Path] = []  # copies of outputs whose names are links, beside the files they lead to
        try:
            if kind is None and not stopped:
                mode = _umask_mode()
                moves = []
                for n in self.names:
                    if not (self.tmp / n).exists():
                        continue
                    dest = through_links(self.folder / n)
                    src = self.tmp / n
                    if dest != self.folder / n:  # a link: written where it leads, maybe another file system, so
                        fd, name = tempfile.mkstemp(prefix=f".{hidden_stem(dest.name)}.", suffix=".tmp",
                                                    dir=dest.parent)  # copied beside that file first
                        beside.append(Path(name))
                        with os.fdopen(fd, "wb") as f, open(src, "rb") as g:
                            shutil.copyfileobj(g, f)
                        src = Path(name)
                    os.chmod(src, mode)
                    moves.append((src, dest))
                held = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
                old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
                try:
                    for src, dest in moves:
                        os.replace(src, dest)
                finally:
                    signal.pthread_sigmask(signal.SIG_SETMASK, old)
        finally:
            for copy in beside:
                copy.unlink(missing_ok=True)
            shutil.rmtree(self.tmp, ignore_errors=True)
            os.close(self._lock)
            if (kind is not None or stopped) and self.made:  # no empty output folder left behind by a failed run
                try:
                    self.folder.rmdir()  # only if empty: another run may have written into it meanwhile
                except OSError:
                    pass
        if stopped:  # nothing published: the stop unwinds from here, as it would have where it arrived
            stops.raise_if_received()
