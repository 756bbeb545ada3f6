"""Reading an audit.json back: one pair's entry, checked against the audit's contract and against the logs.

The pair page (``analyzer report --pair --audit``) reads a file a person names, which may be another tool's, broken
or hostile: every shape is checked before a value is used, the memory stays that of one pair however big the file,
and a device or pipe is read no further than a bound."""

from __future__ import annotations

import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from analyzer.problems import printable

if TYPE_CHECKING:
    from analyzer.validate import Checked


class AuditFileError(Exception):
    """A file that is not an audit of this analyzer's, or not one of the pair's logs (a usage error in the CLI)."""


#: The largest audit file read whole for --audit. audit.json holds every pair that sat together (~5.6 KB a pair: 3.6 MB
#: for a 64-player room's 639 pairs), so a room of thousands of players writes tens of MB. Reading whole is exact
#: (repeated keys are refused), ~55 ms and ~6 MB of memory per MB of file; a larger regular file is read a pair at a
#: time (:func:`_stream_audit`: the memory of one pair), so no audit is too big. A device or pipe, which has no size
#: to look at first, is read no further than this (/dev/zero: 23 GB before the kernel killed the command).
MAX_AUDIT_BYTES = 256 << 20
#: The largest single value of an audit file read a pair at a time (a pair's entry, or another top-level field).
MAX_AUDIT_ITEM_BYTES = 64 << 20


#: Evidence rows a pair page shows from an audit entry, at most (the strongest first, as the audit ranks them; the audit
#: writes ``--evidence``, 12 by default, per pair): a page of 100,000 rows took 12.5 s and 739 MB and weighed 61 MB.
MAX_EVIDENCE_SHOWN = 1000

_NUMBER = {"type": ["number", "null"], "minimum": -1e300, "maximum": 1e300}
#: What the pair page reads of one pair's entry in an audit file, with bounds (the page keeps any other keys as they
#: are; analyzer.audit.schema is the full contract of the files `analyzer audit` writes).
_PAIR_SHAPE: dict[str, Any] = {
    "type": "object", "required": ["players"], "properties": {
        "players": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2},
        "hands_together": {"type": "integer", "minimum": 1, "maximum": 2**53 - 1},
        "score": _NUMBER, "z": _NUMBER, "p_value": _NUMBER, "q_value": _NUMBER, "log10_p": _NUMBER, "log10_q": _NUMBER,
        "flagged": {"type": "boolean"},
        "signals": {"type": "object"},
        "evidence": {"type": "array", "maxItems": 100_000, "items": {"type": "object", "properties": {
            "hand_id": {"type": "string"}, "action": {"type": "integer", "minimum": 0, "maximum": 100_000}}}},
    }}
#: What is read of the whole file: its ``pairs``, each naming its two players (every pair is looked at to
#: find the one asked for; only that one is then checked whole, against :data:`_PAIR_SHAPE`).
_AUDIT_SHAPE: dict[str, Any] = {"type": "object", "required": ["pairs"], "properties": {"pairs": {
    "type": "array", "items": {"type": "object", "required": ["players"], "properties": {
        "players": _PAIR_SHAPE["properties"]["players"]}}}}}


def _audit_shape() -> dict[str, Any]:
    """:data:`_AUDIT_SHAPE` with the file's ``format`` and ``version`` as the audit's contract has them, when the file
    gives them (another tool's file, or a later version of this one's, is not read as this one's)."""
    from analyzer.audit.schema import audit_schema

    contract = audit_schema()["properties"]
    return {**_AUDIT_SHAPE, "properties": {**_AUDIT_SHAPE["properties"], "format": contract["format"],
                                           "version": contract["version"]}}


def _shape_error(path: str, doc: Any, schema: dict[str, Any], where: str = "") -> None:
    """:class:`AuditFileError` when ``doc`` does not have ``schema``'s shape, naming where."""
    import jsonschema

    from analyzer.explain import _short

    try:
        err = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(doc))
    except RecursionError:
        raise AuditFileError(f"{path}: nests values too deeply") from None
    if err is not None:
        at = "/".join(map(str, [*([where] if where else []), *err.absolute_path])) or "the top"
        raise AuditFileError(f"{path} is not an audit file: at {at}: {_short(err.message, 200)}")


def pair_entry(path: str, a: str, b: str, together: Sequence[Checked],
               warn: Callable[[str], None] = lambda _: None) -> dict[str, Any] | None:
    """The pair's entry of an audit.json, checked against the logs (``together``: the hands where both sat): a hostile
    or broken file is an :class:`AuditFileError` naming where, never a crash or a huge page. The file must hold
    ``pairs`` (each naming two players); the pair's entry is then checked whole and may not claim more hands together
    than the logs hold. Its evidence rows are kept only for hands of the pair in the logs with the pair as actor and
    partner (other rows are data the logs do not back: left out, with a warning to ``warn`` saying how many), at most
    :data:`MAX_EVIDENCE_SHOWN` of them. No entry for the pair: a warning, and None (the page is then drawn from the
    decisions, as without --audit, and says that its measures are not evidence of collusion)."""
    from analyzer.explain import _short, load_strict

    try:
        st = Path(path).stat()
        if stat.S_ISREG(st.st_mode) and st.st_size > MAX_AUDIT_BYTES:  # a pair at a time: the memory of one pair
            top, found, dups = _stream_audit(path, a, b)
        else:
            with open(path, "rb") as f:  # bounded: a device or pipe has no size to look at first
                data = f.read(MAX_AUDIT_BYTES + 1)
            if len(data) > MAX_AUDIT_BYTES:
                raise AuditFileError(f"{path} is larger than {MAX_AUDIT_BYTES >> 20} MB and not a regular file "
                                     f"(a device or pipe is read no further); save it as a file")
            top, dups = load_strict(data)
            del data
            found = None
    except (OSError, ValueError, RecursionError) as e:
        raise AuditFileError(f"cannot read {path}: {_short(str(e), 200)}") from e
    if dups:
        raise AuditFileError(f"{path}: key {dups[0]!r} appears twice in one object")
    _shape_error(path, top, _audit_shape())
    if found is None:
        found = next(((i, p) for i, p in enumerate(top["pairs"]) if sorted(p["players"]) == sorted([a, b])), None)
    del top  # only the pair's entry is kept (a big audit's other pairs are freed now)
    if found is None:
        warn(printable(f"warning: {path} has no entry for {a} and {b}; the page shows their decisions without the "
                       f"audit's signals and evidence"))
        return None
    i, entry = found
    evidence = entry.get("evidence")
    if isinstance(evidence, list) and len(evidence) > MAX_EVIDENCE_SHOWN:  # the strongest first: the rest not shown
        warn(f"showing the first {MAX_EVIDENCE_SHOWN} of the {len(evidence)} evidence rows of {printable(path)}")
        entry["evidence"] = evidence = evidence[:MAX_EVIDENCE_SHOWN]
    _shape_error(path, entry, _PAIR_SHAPE, f"pairs/{i}")
    if "case" in entry:  # the page draws the case file as `analyzer audit` writes it: that shape or nothing
        from analyzer.audit.schema import CASE

        _shape_error(path, entry["case"], CASE, f"pairs/{i}/case")
    if entry.get("hands_together", 0) > len(together):
        raise AuditFileError(
            printable(f"{path} says {a} and {b} sat together {entry['hands_together']} hands; the logs hold "
                      f"{len(together)}"))
    if evidence:
        hands = {str(it.hand_id) for it in together}
        kept = [e for e in evidence if e.get("hand_id") in hands and e.get("actor", a) in (a, b)
                and e.get("partner", b) in (a, b)]
        if len(kept) < len(evidence):
            warn(printable(f"warning: {len(evidence) - len(kept)} of the {len(evidence)} evidence rows of {path} name "
                           f"no hand of {a} and {b} in the logs (or another actor or partner); left out of the page"))
            entry["evidence"] = kept
    return entry  # type: ignore[no-any-return]


def _stream_audit(path: str, a: str, b: str) -> tuple[dict[str, Any], tuple[int, Any] | None, list[str]]:
    """An audit file read a value at a time: its top-level fields but ``pairs`` (``pairs`` itself as an empty list),
    the pair of ``a`` and ``b`` (its place and entry) or None, and the keys repeated inside one object. Memory holds
    one value at a time (a pair's entry, ~6 KB), not the file (~6x its size as Python objects: a 1 GB audit of a
    room of thousands of players took 6 GB). Each entry of ``pairs`` must name two players (else an :class:`AuditFileError`
    naming it); a value over :data:`MAX_AUDIT_ITEM_BYTES`, or text that is not JSON, is a ``ValueError``."""
    import codecs
    import json

    from analyzer.explain import strict_hooks

    dups: list[str] = []
    dec = json.JSONDecoder(**strict_hooks(dups))
    text = codecs.getincrementaldecoder("utf-8")()
    buf, pos, eof = "", 0, False
    with open(path, "rb") as f:
        def more(size: int = 1 << 20) -> bool:
            nonlocal buf, pos, eof
            if eof:
                return False
            chunk = f.read(size)
            eof = not chunk
            buf = buf[pos:] + text.decode(chunk, final=eof)
            pos = 0
            return not eof

        def skip() -> str:
            """The next character past white space ("" at the end)."""
            nonlocal pos
            while True:
                while pos < len(buf) and buf[pos] in " \t\r\n":
                    pos += 1
                if pos < len(buf) or not more():
                    return buf[pos:pos + 1]

        def take(expected: str) -> str:
            nonlocal pos
            ch = skip()
            if ch not in expected:
                where = f"{ch!r}" if ch else "the end of the file"
                raise ValueError(f"not JSON: expected {' or '.join(map(repr, expected))}, found {where}")
            pos += 1
            return ch

        def value() -> Any:
            nonlocal pos
            skip()
            while True:
                try:
                    obj, end = dec.raw_decode(buf, pos)
                except json.JSONDecodeError as e:
                    if len(buf) - pos > MAX_AUDIT_ITEM_BYTES:
                        raise ValueError(f"a value of more than {MAX_AUDIT_ITEM_BYTES >> 20} MB") from None
                    if more(max(1 << 20, len(buf) - pos)):
                        continue
                    raise ValueError(f"not JSON: {e.msg}") from None
                if end == len(buf) and not eof and more():  # a number cut by the chunk's end: read on
                    continue
                pos = end
                return obj

        top: dict[str, Any] = {}
        found: tuple[int, Any] | None = None
        take("{")
        if skip() == "}":
            pos += 1
        else:
            while True:
                key = value()
                if not isinstance(key, str):
                    raise ValueError("not JSON: a key that is not a string")
                if key in top and key not in dups:
                    dups.append(key)
                take(":")
                if key == "pairs" and skip() == "[":
                    pos += 1
                    top[key] = []
                    i = 0
                    if skip() == "]":
                        pos += 1
                    else:
                        while True:
                            entry = value()
                            players = entry.get("players") if isinstance(entry, dict) else None
                            if not (isinstance(players, list) and len(players) == 2
                                    and all(isinstance(x, str) for x in players)):
                                raise AuditFileError(f"{path} is not an audit file: at pairs/{i}: an entry that "
                                                         f"does not name two players")
                            if found is None and sorted(players) == sorted([a, b]):
                                found = (i, entry)
                            i += 1
                            if take(",]") == "]":
                                break
                else:
                    top[key] = value()
                if take(",}") == "}":
                    break
        if skip():
            raise ValueError("not JSON: another value follows the audit's object")
    return top, found, dups
