"""An audit's result read as a look: what it saw of each marked pair, group, illegal borrower and lending pair.

:func:`read_audit` reads an audit folder's audit.json (or the file) and checks the parts a look reads;
:func:`marked` and :func:`observe` turn the result into :class:`Observation` rows, one per case, in the units the
cases database keeps (docs/guide/cases.md, "What a look records").
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from analyzer.desk.db import CasesError

#: The largest audit.json read (a room of millions of hands writes far less: its pairs are bounded by its players').
MAX_AUDIT_BYTES = 2 << 30
#: Verdicts that make a case, strongest first.
MARKED = ("flagged", "review")
VERDICT_ORDER = {"flagged": 0, "review": 1, "clear": 2, "absent": 3}

_NUM = {"type": ["number", "null"]}
_PLAYERS = {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 2}
_LABELLED = {"type": "object", "required": ["key", "args"],
             "properties": {"key": {"type": "string"}, "args": {"type": "array", "items": {"type": "string"}}}}
#: What a look reads of an audit's result, checked before anything is written (more fields are allowed: a later audit
#: adds its own, such as an e-value per pair, ``log10_e``).
SHAPE: dict[str, Any] = {
    "type": "object",
    "required": ["format", "version", "hands", "pairs"],
    "properties": {
        "format": {"const": "bieqi-audit"},
        "version": {"const": 1},
        "hands": {"type": "integer", "minimum": 0},
        "alarm": {"type": "object", "properties": {"alpha": {"type": "number"}, "fdr": {"type": "number"},
                                                   "min_hands": {"type": "integer"}}},
        "pairs": {"type": "array", "items": {
            "type": "object",
            "required": ["players", "hands_together", "verdict", "score", "log10_p", "p_value", "q_value",
                         "effect_size", "main_signal"],
            "properties": {
                "players": _PLAYERS, "hands_together": {"type": "integer", "minimum": 0},
                "verdict": {"enum": ["flagged", "review", "clear"]},
                "score": _NUM, "log10_p": _NUM, "p_value": _NUM, "q_value": _NUM, "log10_q": _NUM,
                "effect_size": _NUM, "log10_e": _NUM, "main_signal": {"type": ["string", "null"]},
                "signals": {"type": "object"}, "case": {"type": "object", "properties": {"lead": _LABELLED}}}}},
        "groups": {"type": "array", "items": {
            "type": "object", "required": ["players", "verdict", "pairs"],
            "properties": {
                "players": {"type": "array", "items": {"type": "string"}, "minItems": 3},
                "verdict": {"enum": ["flagged", "review"]},
                "marked_pairs": {"type": "integer"}, "hands_two_or_more": {"type": "integer"},
                "hands_all": {"type": ["integer", "null"]},
                "pairs": {"type": "array", "items": {"type": "object", "required": ["players", "verdict", "score"],
                                                     "properties": {"players": _PLAYERS,
                                                                    "verdict": {"enum": ["flagged", "review", "clear"]},
                                                                    "score": _NUM}}}}}},
        "bieqi-borrow": {"type": "object", "properties": {"players": {"type": "array", "items": {
            "type": "object", "required": ["player", "illegal_borrows"],
            "properties": {"player": {"type": "string"}, "hands": {"type": "integer"},
                           "illegal_borrows": {"type": "integer", "minimum": 0},
                           "hands_with_illegal": {"type": "integer"}, "first_illegal": {"type": "string"}}}},
            "pairs": {"type": "array", "items": {
                "type": "object", "required": ["a", "b"],
                "properties": {"a": {"type": "string"}, "b": {"type": "string"},
                               "lends_to_partner": {"type": "integer", "minimum": 0}, "p_value": _NUM,
                               "q_value": _NUM, "score": _NUM,
                               "verdict": {"enum": ["flagged", "review", "clear"]}}}}}},
    },
}


@dataclass(frozen=True)
class Observation:
    """What one look saw of one case's members (a row of ``case_looks``)."""

    kind: str
    members: tuple[str, ...]
    verdict: str
    hands: int | None = None
    score: float | None = None
    log10_p: float | None = None
    p_value: float | None = None
    q_value: float | None = None
    log10_q: float | None = None
    log10_e: float | None = None
    count: int | None = None
    main_signal: str | None = None
    signal: Mapping[str, Any] | None = None
    lead: Mapping[str, Any] | None = None
    report_index: int | None = None

    @property
    def subject(self) -> str:
        return subject_of(self.members)

    @property
    def level(self) -> tuple[float | None, str]:
        """The evidence level and its measure: a borrower's count of illegal borrows; else log10 of the e-value when the
        audit gives one (an anytime-valid verdict), else the score, -log10 p."""
        if self.kind == "borrow":
            return (None if self.count is None else float(self.count)), "count"
        if self.log10_e is not None:
            return self.log10_e, "log10_e"
        return self.score, "score"


def subject_of(members: Sequence[str]) -> str:
    """A case's subject: its members' ids, sorted, as a JSON array (ids may hold any character but none breaks it)."""
    return orjson.dumps(sorted(members)).decode()


def members_of(subject: str) -> tuple[str, ...]:
    return tuple(orjson.loads(subject))


def digest(result: Mapping[str, Any]) -> str:
    """SHA-256 of the result as canonical JSON (keys sorted): the same result gives the same digest, read from
    audit.json or handed over by the audit itself."""
    try:
        text = orjson.dumps(result, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # an int beyond 64 bits: the standard library's writer takes it
        import json

        text = json.dumps(result, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    return hashlib.sha256(text).hexdigest()


def read_audit(path: str | os.PathLike[str]) -> tuple[dict[str, Any], Path]:
    """The result in an audit folder's audit.json (or the file named), checked (:func:`check_result`), and the folder
    its report is in."""
    p = Path(path)
    file = p / "audit.json" if p.is_dir() else p
    try:
        size = file.stat().st_size
        if size > MAX_AUDIT_BYTES:
            raise CasesError(f"{file}: larger than {MAX_AUDIT_BYTES >> 30} GB, not an audit's result")
        result = orjson.loads(file.read_bytes())
    except OSError as e:
        raise CasesError(f"{file}: cannot read: {e.strerror or e}") from None
    except orjson.JSONDecodeError as e:
        raise CasesError(f"{file}: not JSON: {e}") from None
    check_result(result, str(file))
    return result, file.resolve().parent


def check_result(result: Any, source: str) -> None:
    """:class:`CasesError` naming ``source`` and the place in it when ``result`` is not an audit's result as a look
    reads it (:data:`SHAPE`), nothing written."""
    import jsonschema

    err = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(SHAPE).iter_errors(result))
    if err is not None:
        at = "/".join(map(str, err.absolute_path)) or "the top"
        message = err.message if len(err.message) <= 200 else err.message[:197] + "..."
        raise CasesError(f"{source}: not an audit's result: at {at}: {message}")


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


def page_order(pairs: Sequence[Mapping[str, Any]]) -> list[int]:
    """Each pair's place in the audit's report.html (``report.html#pair=N``): the report ranks them by its own key."""
    from analyzer.report.audit import _rank_key

    ranked = sorted(range(len(pairs)), key=lambda i: _rank_key(pairs[i]))
    place = [0] * len(pairs)
    for n, i in enumerate(ranked):
        place[i] = n
    return place


def pair_observation(entry: Mapping[str, Any], place: int | None) -> Observation:
    main = entry.get("main_signal")
    signals = entry.get("signals") or {}
    lead = (entry.get("case") or {}).get("lead")
    return Observation(
        "pair", tuple(sorted(str(x) for x in entry["players"])), str(entry["verdict"]),
        hands=int(entry["hands_together"]), score=_num(entry.get("score")), log10_p=_num(entry.get("log10_p")),
        p_value=_num(entry.get("p_value")), q_value=_num(entry.get("q_value")), log10_q=_num(entry.get("log10_q")),
        log10_e=_num(entry.get("log10_e")), main_signal=None if main is None else str(main),
        signal=signals.get(main) if isinstance(signals.get(main), Mapping) else None,
        lead=dict(lead) if isinstance(lead, Mapping) else None, report_index=place)


def group_observation(members: Sequence[str], verdict: str | None, member_pairs: Sequence[Mapping[str, Any]],
                      place: Mapping[str, int], hands: int | None = None, in_group: Sequence[str] | None = None,
                      hands_all: int | None = None) -> Observation:
    """A group case at a look: its best pair's score and signal; ``verdict`` the audit's for this group, or (None) the
    strongest of its members' pairs when the audit did not name exactly this group (``in_group``: the group it named
    holding them all, if one)."""
    scored = [p for p in member_pairs if _num(p.get("score")) is not None]
    best = max(scored, key=lambda p: float(p["score"]), default=None)
    if verdict is None:
        if not member_pairs:
            return Observation("group", tuple(sorted(members)), "absent")
        verdict = min((str(p["verdict"]) for p in member_pairs), key=VERDICT_ORDER.__getitem__)
    marked_pairs = [sorted(str(x) for x in p["players"]) for p in member_pairs if p["verdict"] in MARKED]
    signal: dict[str, Any] = {"marked_pairs": marked_pairs, "pairs_seen": len(member_pairs),
                              "as_named": in_group is None or sorted(in_group) == sorted(members)}
    if in_group is not None and sorted(in_group) != sorted(members):
        signal["in_group"] = sorted(in_group)
    if hands_all is not None:
        signal["hands_all"] = hands_all
    if best is not None:
        signal["best_pair"] = sorted(str(x) for x in best["players"])
    key = subject_of([str(x) for x in best["players"]]) if best is not None else None
    return Observation("group", tuple(sorted(members)), verdict, hands=hands,
                       score=None if best is None else float(best["score"]),
                       main_signal=None if best is None else best.get("main_signal"), signal=signal,
                       report_index=None if key is None else place.get(key))


def borrow_observation(row: Mapping[str, Any]) -> Observation:
    n = int(row["illegal_borrows"])
    return Observation("borrow", (str(row["player"]),), "flagged" if n > 0 else "clear",
                       hands=row.get("hands") if isinstance(row.get("hands"), int) else None, count=n,
                       main_signal="illegal_borrows" if n > 0 else None,
                       signal={k: row[k] for k in ("illegal_borrows", "hands_with_illegal", "first_illegal", "borrows")
                               if k in row})


#: The signal a lending case fired on (借牌's lending favour, ``audit.borrow``).
LENDING_SIGNAL = "lending_favour"


def lending_observation(row: Mapping[str, Any]) -> Observation:
    """A 借牌 lending pair at a look: its verdict, lends to each other (``hands``), and its p, q and score; a result
    whose lending pairs have no verdict (an older audit's) marks none of them."""
    p, q = _num(row.get("p_value")), _num(row.get("q_value"))
    score = _num(row.get("score"))
    if score is None and p is not None and p > 0:
        score = -math.log10(p)
    verdict = str(row.get("verdict") or "clear")
    return Observation("lending", tuple(sorted((str(row["a"]), str(row["b"])))), verdict,
                       hands=row.get("lends_to_partner") if isinstance(row.get("lends_to_partner"), int) else None,
                       score=score, log10_p=None if p is None or p <= 0 else math.log10(p), p_value=p, q_value=q,
                       log10_q=None if q is None or q <= 0 else math.log10(q),
                       main_signal=LENDING_SIGNAL if verdict in MARKED else None,
                       signal={k: row[k] for k in ("lends_to_partner", "goodness_to_partner", "lends_to_others",
                                                   "goodness_to_others", "favour", "p_value", "q_value")
                               if k in row})


class Look:
    """An audit's result indexed for a look: every pair by its subject, the groups, the illegal borrowers, the 借牌
    lending pairs."""

    def __init__(self, result: Mapping[str, Any]) -> None:
        self.result = result
        self.pairs: list[Mapping[str, Any]] = list(result.get("pairs") or [])
        self.place = page_order(self.pairs) if self.pairs else []
        self.pair_at = {subject_of([str(x) for x in p["players"]]): i for i, p in enumerate(self.pairs)}
        self.groups = {subject_of([str(x) for x in g["players"]]): g for g in result.get("groups") or []}
        borrow = result.get("bieqi-borrow") or {}
        self.borrowers = {subject_of([str(r["player"])]): r for r in borrow.get("players") or []}
        self.lending = {subject_of([str(r["a"]), str(r["b"])]): r for r in borrow.get("pairs") or []}

    def marked(self) -> list[Observation]:
        """The pairs, groups, illegal borrowers and lending pairs this look marks: each is a case (a new one when none
        exists)."""
        out = [self.pair(i) for i, p in enumerate(self.pairs) if p["verdict"] in MARKED]
        out += [self.group(members_of(s)) for s in self.groups]
        out += [borrow_observation(r) for r in self.borrowers.values() if int(r["illegal_borrows"]) > 0]
        out += [lending_observation(r) for r in self.lending.values() if r.get("verdict") in MARKED]
        return out

    def pair(self, i: int) -> Observation:
        return pair_observation(self.pairs[i], self.place[i])

    def observe(self, kind: str, subject: str) -> Observation:
        """What this look saw of an existing case (``absent`` when it did not see the members together)."""
        members = members_of(subject)
        if kind == "pair":
            i = self.pair_at.get(subject)
            return Observation(kind, members, "absent") if i is None else self.pair(i)
        if kind == "group":
            return self.group(members)
        if kind == "borrow":
            row = self.borrowers.get(subject)
            return Observation(kind, members, "absent") if row is None else borrow_observation(row)
        if kind == "lending":
            row = self.lending.get(subject)
            return Observation(kind, members, "absent") if row is None else lending_observation(row)
        return Observation(kind, members, "absent")

    def group(self, members: Sequence[str]) -> Observation:
        subject = subject_of(members)
        keys = [k for k in map(subject_of, _pairs_of(members)) if k in self.pair_at]
        member_pairs = [self.pairs[self.pair_at[k]] for k in keys]
        place = {k: self.place[self.pair_at[k]] for k in keys}
        named = self.groups.get(subject)
        if named is not None:
            return group_observation(members, str(named["verdict"]), member_pairs, place,
                                     hands=named.get("hands_two_or_more"), hands_all=named.get("hands_all"))
        holding = next((g for g in self.groups.values() if set(members) <= {str(x) for x in g["players"]}), None)
        return group_observation(members, None, member_pairs, place,
                                 in_group=None if holding is None else [str(x) for x in holding["players"]])


def _pairs_of(members: Sequence[str]) -> list[tuple[str, str]]:
    ms = sorted(members)
    return [(a, b) for i, a in enumerate(ms) for b in ms[i + 1:]]


def sentence(labelled: Any, lang: str = "en") -> str | None:
    """A case file's labelled sentence (``{"key": ..., "args": [...]}``, audit.json's ``case.lead``) in ``lang``, as the
    report writes it; None when it is not one, or names a label this analyzer does not know."""
    import re

    from analyzer.report.case_labels import CASE_LABELS

    if not isinstance(labelled, Mapping) or not isinstance(labelled.get("key"), str):
        return None
    template = CASE_LABELS.get(lang, {}).get(labelled["key"])
    args = [str(a) for a in labelled.get("args") or []]
    if template is None:
        return None
    return re.sub(r"\{(\d+)\}", lambda m: args[int(m.group(1))] if int(m.group(1)) < len(args) else m.group(0),
                  template)
