"""How a bad line is explained: which problems a line that does not decode into a record has, each named with its
file, line, hand and action, found against the published JSON Schema (and the reader's own error where the schema
says nothing). The gate (:mod:`analyzer.validate`) calls :func:`explain_line` for every line its fast path rejects."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable
from datetime import datetime
from functools import cache
from typing import Any

import orjson

from analyzer.logs import _compressed_as, _encoding_hint
from analyzer.problems import Problem
from analyzer.variants import registry
from analyzer.variants.record import MAX_ID_LENGTH


#: Problems said of one bad line, at most (the rest are counted).
MAX_SHAPE_PROBLEMS = 20


@cache
def _validator(variant: str) -> Any:
    from jsonschema import Draft202012Validator

    from analyzer.schema import variant_schema

    return Draft202012Validator(variant_schema(variant))


#: The record's fields that hold ids (``id-too-long`` past ``MAX_ID_LENGTH`` characters).
_ID_FIELDS = ("hand_id", "table_id", "players")


def cut_id(text: str) -> str:
    """An id of a line that is refused for its length (``id-too-long``), as the line's problems carry it: whole up to
    ``MAX_ID_LENGTH`` characters, else its start, its length and a digest of it (two long ids that start alike stay
    apart), so its problems do not repeat it whole (20 problems of a 1 MB id were 20 MB of JSON)."""
    if len(text) <= MAX_ID_LENGTH:
        return text
    import hashlib

    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{text[:64]}... ({len(text):,} characters) sha256:{digest}"


def _schema_code(err: Any) -> str:
    path = list(err.absolute_path)
    top = path[0] if path else None
    if err.validator == "required":
        return "missing-field"
    if top == "rules":
        return "bad-rules"
    if err.validator == "additionalProperties":
        return "extra-field"
    if err.validator == "pattern" or (err.validator in ("minLength", "maxLength") and isinstance(err.schema, dict)
                                      and str(err.schema.get("description", "")).startswith("Card code")):
        return "bad-card"
    if top in _ID_FIELDS and err.validator == "maxLength":
        return "id-too-long"
    if top == "players" and err.validator in ("minItems", "maxItems", "minLength"):
        return "bad-players"
    if top == "deal" and err.validator in ("minItems", "maxItems"):
        return "bad-deal"
    if top == "started_at":
        return "bad-time"
    return "bad-type"


def _where(path: list[Any]) -> str:
    out = "$"
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def _short(value: Any, limit: int = 60) -> str:
    """A value shown in a message, cut to ``limit`` characters (any value: deep, huge ints, anything)."""
    if isinstance(value, str):
        text = repr(value)
    elif isinstance(value, float):  # inf from 1e400 as "inf", not orjson's null
        text = repr(value)
    else:
        try:
            text = orjson.dumps(value).decode()
        except (TypeError, RecursionError):  # nested too deep, or an int beyond 64 bits: a bounded view
            text = _bounded_repr(value, limit + 3)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _bounded_repr(value: Any, budget: int, depth: int = 0) -> str:
    """Like repr, but stops after ``budget`` characters and 20 levels, without recursing further."""
    if depth > 20:
        return "..."
    if isinstance(value, list):
        parts: list[str] = []
        for v in value:
            parts.append(_bounded_repr(v, budget, depth + 1))
            if sum(map(len, parts)) > budget:
                break
        return "[" + ",".join(parts) + "]"
    if isinstance(value, dict):
        parts = []
        for k, v in value.items():
            parts.append(f"{_short(str(k), 30)}:{_bounded_repr(v, budget, depth + 1)}")
            if sum(map(len, parts)) > budget:
                break
        return "{" + ",".join(parts) + "}"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        if value.bit_length() <= 200:  # up to ~60 digits: as written
            return str(value)
        return f"<an integer of {len(str(abs(value))) if value.bit_length() < 13000 else 'thousands of'} digits>"
    return repr(value)[:budget]


def _message(text: str, limit: int = 300) -> str:
    """A schema message cut short (it quotes whole values, which a hostile line makes huge)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


#: Digits of an integer read as written; a longer one (beyond what Python converts) is read cut to this many: out of
#: any range all the same, so the schema calls it so (bad-type), and messages show it as "an integer of thousands of
#: digits", not Python's advice to raise its limit.
MAX_INT_DIGITS = 4000


def _any_int(text: str) -> int:
    return int(text) if len(text) <= MAX_INT_DIGITS else int(text[:MAX_INT_DIGITS])


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def load_strict(data: bytes | str, holders: list[dict[str, Any]] | None = None) -> tuple[Any, list[str]]:
    """The line parsed by the standard library (slow, exact): numbers of any size up to Python's
    4300 digits, and the keys repeated inside one object (which a fast parser lets the last one win);
    ``holders``, when given, receives the object each of those keys was first found repeated in.

    Raises ``ValueError`` for anything that is not JSON (NaN and Infinity included), ``RecursionError``
    when it nests too deeply."""
    import json

    dups: list[str] = []
    return json.loads(data, **strict_hooks(dups, holders)), dups


def strict_hooks(dups: list[str], holders: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The keyword arguments of the standard library's JSON reader for :func:`load_strict`'s exact reading: each key
    repeated inside one object appended to ``dups`` (once), and the object it was first found repeated in to
    ``holders`` when given; NaN and Infinity refused, integers of any size."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(items)
        if len(out) != len(items):
            seen: set[str] = set()
            for k, _ in items:
                if k in seen and k not in dups:
                    dups.append(k)
                    if holders is not None:
                        holders.append(out)
                seen.add(k)
        return out

    return {"object_pairs_hook": pairs, "parse_constant": _no_constant, "parse_int": _any_int}


def _paths_to(obj: Any, wanted: list[dict[str, Any]]) -> list[list[Any]]:
    """Where in ``obj`` each of the ``wanted`` objects (found by identity) is: its JSON path."""
    found: dict[int, list[Any]] = {}
    ids = {id(w) for w in wanted}
    stack: list[tuple[Any, list[Any]]] = [(obj, [])]
    while stack and len(found) < len(ids):
        node, path = stack.pop()
        if id(node) in ids:
            found.setdefault(id(node), path)
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        stack.extend((v, [*path, k]) for k, v in items if isinstance(v, (dict, list)))
    return [found.get(id(w), []) for w in wanted]


def duplicate_keys(data: bytes) -> list[str]:
    """The keys repeated inside one JSON object of the line (none when it does not parse)."""
    try:
        return load_strict(data)[1]
    except (ValueError, RecursionError):
        return []


def _not_gzip_hint(path: str) -> str:
    """What a file named ``.gz`` that is not gzip holds, when that can be told from its first bytes: another
    compression (bzip2, xz, zstd, zip) or plain text; "" otherwise. Only a regular file is opened again to look (a
    named pipe's writer is gone once it was read: opening it again would wait for ever)."""
    import os
    import stat

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return ""
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError:
        return ""
    found = _compressed_as(head)
    if found is not None:
        name, tool = found
        return (f": it holds {name} data, and only gzip is read (a name ending in .gz); decompress it first "
                f"({tool} LOG > LOG.jsonl) or compress it with gzip")
    if head.lstrip()[:1] == b"{":
        return ": it holds plain text (a record), not gzip: name it without .gz"
    return ""


#: A line that holds a key and its value and nothing around them (``  "format": "bieqi-log",``), or only brackets.
_PIECE = re.compile(rb'^\s*(?:"(?:[^"\\]|\\.)*"\s*:.*|[\[\]{},\s]+)$', re.S)


def _lines_hint(data: bytes, error: Exception) -> str:
    """Why a line that is not JSON may be so, when it looks like records written otherwise than one per line: a
    piece of a pretty-printed record (one hand over many lines), two records on one line, or a record followed by
    a comma (the lines of a JSON array); "" otherwise."""
    if _PIECE.match(data) is not None or (not data.lstrip().startswith(b"{") and _is_json(data.rstrip().rstrip(b","))):
        return ("; it looks like a piece of a record spread over several lines (pretty-printed JSON): a log holds "
                "each hand on one line (jq -c . FILE > FILE.jsonl)")
    doc, pos = getattr(error, "doc", None), getattr(error, "pos", None)
    if "after document" not in str(error) or not isinstance(doc, str) or not isinstance(pos, int):
        return ""
    rest = doc[pos:].lstrip()
    if rest.startswith("{"):
        return f"; another value follows the first at character {pos + 1}: a log holds one hand per line"
    if rest.startswith(",") or rest.startswith("]"):
        return ("; a comma or bracket follows the record, as in the lines of a JSON array: a log holds one hand per "
                "line, without commas or brackets (jq -c '.[]' FILE > FILE.jsonl)")
    return ""


def _is_json(data: bytes) -> bool:
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError:
        return False
    return True


def _not_object_hint(obj: Any) -> str:
    """What a line that is JSON but no object looks like it holds: an array of records, or a record encoded twice."""
    if isinstance(obj, list) and obj and isinstance(obj[0], dict):
        return (f" (an array of {len(obj):,}); a log holds one hand per line, not an array of hands "
                f"(jq -c '.[]' FILE > FILE.jsonl)")
    if isinstance(obj, str) and obj.lstrip().startswith("{"):
        return " holding JSON text: the record was encoded twice (a string of JSON, not an object)"
    return ""


def _seat(v: Any) -> int | None:
    """``v`` when it is a seat (an int 0-3, not a bool), else None."""
    return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 4 else None


def explain_line(data: bytes, error: Exception | None = None) -> tuple[str | None, list[Problem]]:
    """Why a line is not a valid record: its hand id (when readable) and its shape problems."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        packed = _compressed_as(data)
        if packed is None:
            hint = _encoding_hint(data)
        elif packed[0] == "gzip":
            hint = ("; it starts as gzip data does: a compressed log is read when its name ends in .gz (on standard "
                    "input, decompress it first: zcat LOG.gz | analyzer ...)")
        else:
            hint = (f"; it starts as {packed[0]} data does, and only gzip is read (a name ending in .gz): decompress "
                    f"it first ({packed[1]} LOG > LOG.jsonl)")
        return None, [Problem("not-utf8", f"the line is not UTF-8 ({e.reason} at byte {e.start}){hint}")]
    if data.startswith(b"\xef\xbb\xbf"):
        return None, [Problem("not-json", "the line is not JSON: it starts with a byte order mark (U+FEFF)")]
    holders: list[dict[str, Any]] = []  # the objects holding a repeated key, to say where they are
    try:
        obj = orjson.loads(data)
        try:  # a line on the slow path already: exactness over speed (ints beyond 64 bits as written, repeated keys)
            obj, dups = load_strict(data, holders)
        except (ValueError, RecursionError):
            dups = []
    except (orjson.JSONDecodeError, RecursionError) as e:
        # orjson refuses numbers beyond 64 bits; the standard library reads them, so a seat of 10**400 is
        # called out of range (bad-type), not "not JSON". Only then: it costs more than all the rest.
        if "number" not in str(e):
            why = "it nests values too deeply" if "depth" in str(e) or isinstance(e, RecursionError) else str(e)
            if b"}\r{" in data:  # records one after another on a single line: a file whose lines end in CR alone
                why += "; its records are parted by CR alone (old Mac line ends): each must end in LF or CR LF"
            else:
                why += _lines_hint(data, e)
            why += _encoding_hint(data)
            return None, [Problem("not-json", f"the line is not JSON: {_message(why)}")]
        try:
            obj, dups = load_strict(data, holders)
        except RecursionError:
            return None, [Problem("not-json", "the line is not JSON: it nests values too deeply")]
        except ValueError as e2:
            why = str(e2) if "JSON number" in str(e2) or "digits" in str(e2) else str(e)
            if "depth" in str(e):
                why = "it nests values too deeply"
            return None, [Problem("not-json", f"the line is not JSON: {_message(why)}")]
    if not isinstance(obj, dict):
        return None, [Problem("not-object", f"expected a JSON object (one hand), found {type(obj).__name__}"
                              f"{_not_object_hint(obj)}")]
    hand_id = cut_id(obj["hand_id"]) if isinstance(obj.get("hand_id"), str) else None

    def problem(code: str, msg: str, path: list[Any] | None = None) -> Problem:
        p = Problem(code, msg, hand_id=hand_id)
        if not path or len(path) < 2 or not isinstance(path[1], int) or path[0] not in ("actions", "tricks", "bids"):
            return p
        items = obj.get(path[0])
        item = items[path[1]] if isinstance(items, list) and path[1] < len(items) else None
        item = item if isinstance(item, dict) else {}
        if path[0] == "tricks":  # (信阳黑七) the trick, and the seat of a play in it: the leader's, then clockwise
            p.trick = path[1]
            leader = _seat(item.get("leader"))
            on = path[3] if len(path) > 3 and path[2] == "plays" and isinstance(path[3], int) else -1
            seat = (leader + on) % 4 if leader is not None and 0 <= on < 4 else None
        else:
            if path[0] == "actions":
                p.action = path[1]
            seat = _seat(item.get("seat"))
        players = obj.get("players")
        if seat is not None:
            p.seat = seat
            if isinstance(players, list) and seat < len(players) and isinstance(players[seat], str):
                p.player = cut_id(players[seat])
        return p

    if obj.get("format") != "bieqi-log":
        return hand_id, [problem("unknown-format", f"format is {_short(obj.get('format'))}, expected \"bieqi-log\"")]
    if obj.get("version") != 1 or isinstance(obj.get("version"), bool):
        return hand_id, [problem("unknown-version", f"version is {_short(obj.get('version'))}, expected 1")]
    variant = obj.get("variant")
    if not isinstance(variant, str) or variant not in registry():
        known = ", ".join(sorted(registry()))
        return hand_id, [problem("unknown-variant", f"variant is {_short(variant)}, expected one of: {known}")]
    problems: list[Problem] = [problem("duplicate-key", f"the key {_short(k)} appears twice in one object "
                                       f"({_where(where)}); readers disagree on which value counts", where)
                               for k, where in zip(dups, _paths_to(obj, holders))]
    # the schema's errors, at most MAX_SCHEMA_ERRORS of them (a line of 500,000 bad items would otherwise cost seconds
    # and gigabytes before the first 20 are said), in the line's order (array places as numbers: move 2 before 10)
    found = list(itertools.islice(_validator(variant).iter_errors(obj), MAX_SCHEMA_ERRORS + 1))
    more = len(found) > MAX_SCHEMA_ERRORS
    errors = sorted(found[:MAX_SCHEMA_ERRORS], key=lambda e: _path_key(e.absolute_path))
    said: set[tuple[str, tuple[Any, ...]]] = set()
    for n, err in enumerate(errors, 1):
        err = _chosen(err)
        if isinstance(err, tuple):  # the discriminator names no branch: the value that picks it is wrong
            problems.append(problem(*err))
        else:
            path = list(err.absolute_path)
            code = _schema_code(err)
            if code == "bad-card" and (code, tuple(path)) in said:  # a code too short and of no card: say it once
                continue
            said.add((code, tuple(path)))
            if code == "missing-field":
                missing = err.message.split("'")[1] if "'" in err.message else err.message
                msg = f"{_where(path)} lacks the required field {missing!r}"
            elif code == "id-too-long":
                msg = (f"{_where(path)} is an id of {len(err.instance):,} characters; an id may hold at most "
                       f"{MAX_ID_LENGTH} (it would be repeated in every output that names it)")
            elif code in ("extra-field", "bad-rules") and err.validator == "additionalProperties":
                msg = f"{_where(path)}: {_message(err.message)}"
            else:
                msg = f"{_where(path)} is {_short(err.instance)}: {_message(err.message)}"
            problems.append(problem(code, msg, path))
        if len(problems) >= MAX_SHAPE_PROBLEMS:
            rest = len(errors) - n
            if rest or more:
                problems.append(problem("bad-type", f"... and {'at least ' if more else ''}{rest} more shape problems"))
            break
    started = obj.get("started_at")
    if isinstance(started, str) and not any(p.code == "bad-time" for p in problems):
        try:
            t = datetime.fromisoformat(started.replace("Z", "+00:00"))
            if t.tzinfo is None:
                raise ValueError("no UTC offset")
        except ValueError as e:
            why = str(e)
            if why.startswith("offset must be"):  # Python's words are about its timedelta type, not the log's text
                why = "its UTC offset must be from -23:59 to +23:59, minutes 00 to 59"
            if _LEAP_SECOND.match(started):  # RFC 3339 writes one; "not an RFC 3339 time" would be wrong
                problems.append(problem("bad-time", f"$.started_at is {_short(started)}: a leap second (second 60), "
                                        f"which this reader does not take (leap seconds are not supported: Python's "
                                        f"times have none); write the second before it, :59"))
            else:
                problems.append(problem("bad-time", f"$.started_at is {_short(started)}: not an RFC 3339 time ({why})"))
    if not problems:  # the schema accepts what the reader refused (1.0 for an int...): say what the reader said
        problems.append(_reader_problem(problem, obj, error))
    return hand_id, problems


#: A time whose seconds are 60 (``23:59:60Z``): a leap second, as RFC 3339 may write one.
_LEAP_SECOND = re.compile(r"^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:60(?:[.,]\d+)?(?:[Zz]|[+-]\d\d:?\d\d)$")


#: Schema errors a bad line is explained from, at most (the first MAX_SHAPE_PROBLEMS are said, the rest counted). Each
#: costs ~0.1 ms of jsonschema: 200 made a log of lines with every field wrong read at ~45 lines/s; 50 still orders
#: the said ones by their place among more than twice as many.
MAX_SCHEMA_ERRORS = 50

#: Where the record reader (msgspec) says it stopped: "... - at `$.actions[1].seat`".
_READER_AT = re.compile(r"^(?P<why>.*?)(?: - at `(?P<at>\$[^`]*)`)?$", re.S)
_READER_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def _path_key(path: Iterable[Any]) -> list[tuple[int, int, str]]:
    """A schema error's place as a sort key: array places as numbers (2 before 10), names as text."""
    return [(0, x, "") if isinstance(x, int) else (1, 0, str(x)) for x in path]


def _chosen(err: Any) -> Any:
    """The error that says what a value broke, for an error of a choice (``anyOf``/``oneOf``: an optional field, an
    action of one of several kinds): the branch the object's discriminator names (``kind`` of a borrow action), else
    the best match among the branches that are not "null"; repeated down nested choices. When the discriminator's
    value names no branch: that problem's code, message and path."""
    from jsonschema.exceptions import best_match

    while err.validator in ("anyOf", "oneOf") and err.context:
        context = list(err.context)
        picked = _by_discriminator(err, context)
        if isinstance(picked, tuple):
            return picked
        if picked is None:
            picked = [e for e in context if e.validator != "type" or e.validator_value != "null"] or context
        err = best_match(picked)
    return err


def _by_discriminator(err: Any, context: list[Any]) -> list[Any] | tuple[str, str, list[Any]] | None:
    """The choice's errors in the branch its discriminator picks (OpenAPI's ``discriminator``: ``propertyName`` and
    a ``mapping`` of values to branches), None when it has none or the object is not one; a problem's code, message
    and path when the object lacks the discriminator or its value names no branch."""
    disc = err.schema.get("discriminator") if isinstance(err.schema, dict) else None
    if not isinstance(disc, dict) or not isinstance(err.instance, dict):
        return None
    name, mapping = disc.get("propertyName"), disc.get("mapping") or {}
    path = list(err.absolute_path)
    if name not in err.instance:
        return "missing-field", f"{_where(path)} lacks the required field {name!r}", path
    value = err.instance[name]
    target = mapping.get(value) if isinstance(value, str) else None
    if target is None:
        known = ", ".join(repr(k) for k in sorted(mapping))
        return "bad-type", f"{_where([*path, name])} is {_short(value)}: expected one of {known}", [*path, name]
    branches = [i for i, sub in enumerate(err.validator_value) if isinstance(sub, dict) and sub.get("$ref") == target]
    return [e for e in context if e.relative_schema_path and e.relative_schema_path[0] in branches] or None


def _reader_path(at: str) -> list[Any]:
    """``$.actions[1].seat`` as ``["actions", 1, "seat"]``."""
    return [int(i) if i else name for name, i in _READER_STEP.findall(at)]


def _reader_problem(problem: Callable[..., Problem], obj: dict[str, Any], error: Exception | None) -> Problem:
    """The record reader's refusal of a line the schema accepts, placed where the reader stopped (a float where an
    int belongs, which JSON Schema counts as an integer; a time the reader does not take)."""
    m = _READER_AT.match(str(error))
    if m is None or not m["at"]:
        return problem("bad-type", f"the record does not decode: {error}")
    path = _reader_path(m["at"])
    value: Any = obj
    for step in path:
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            value = None
            break
    code = "bad-time" if path[:1] == ["started_at"] else "bad-type"
    return problem(code, f"{_where(path)} is {_short(value)}: {_message(m['why'])}", path)


