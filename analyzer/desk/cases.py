"""Cases across looks: record an audit's look, list and show cases, record a reviewer's decisions.

Every pair, group, illegal borrower or 借牌 lending pair a look marks (flagged or review) is a case from then on; every
later look adds one row of its verdict and evidence to each case (``absent`` when it did not see the members together).
A reviewer dismisses a case with a reason, confirms it, reopens it or adds a note, each with who and when. A dismissed
case reopens by itself at the first look whose evidence passes the level it was dismissed at plus a margin
(:data:`REOPEN_MARGIN`; docs/guide/cases.md). What a look opened, reopened and changed (:func:`look_changes`) is what
the audit's summary and page lead with; :func:`recording` keeps the look's transaction open while they are written.
Every function takes an open database (:func:`analyzer.desk.db.open_cases`); each write is one transaction.

From a notebook::

    from analyzer.desk import cases, db
    with db.open_cases("STORE") as d:
        cases.record_look(d, json.load(open("out/audit.json")), audit_dir="out")
        for c in cases.list_cases(d, changed=True): print(c.case_id, c.members, c.verdict, c.level)
        cases.decide(d, 3, "dismiss", "ana", "friends who always sit together")
"""

from __future__ import annotations

import math
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from analyzer.desk.db import Cases, CasesError, now, parse_time
from analyzer.desk.looks import VERDICT_ORDER, Look, Observation, check_result, digest, members_of, subject_of

#: How far past its level at dismissal a dismissed case's evidence must go for a look to reopen it, per measure: a
#: score or log10 e-value one more (the p-value ten times smaller, the e-value ten times larger); any further illegal
#: borrow.
REOPEN_MARGIN: dict[str, float] = {"score": 1.0, "log10_e": 1.0, "count": 0.0}
#: A level moving this much between two looks makes the case "changed" (as a new verdict does).
CHANGE_LEVEL = 1.0
STATUSES = ("open", "dismissed", "confirmed")
KINDS = ("pair", "group", "borrow", "lending")
#: A reviewer's decisions, and the statuses each may be made from.
ACTIONS: dict[str, tuple[str, ...]] = {"note": STATUSES, "dismiss": ("open", "confirmed"),
                                       "confirm": ("open", "dismissed"), "reopen": ("dismissed", "confirmed")}
#: The status each decision leaves.
LEAVES = {"dismiss": "dismissed", "confirm": "confirmed", "reopen": "open"}
#: ``who`` of what a look does itself (opening a case, reopening a dismissed one).
ANALYZER = "analyzer"
MAX_NAME = 200
MAX_TEXT = 20_000
_STATUS_ORDER = {s: i for i, s in enumerate(("open", "confirmed", "dismissed"))}


@dataclass(frozen=True)
class Recorded:
    """What recording a look did: its number and the cases it opened, reopened and changed."""

    look_id: int
    at: str
    already: bool  # the same result was recorded before, as this look: nothing written
    cases_seen: int = 0
    new: tuple[int, ...] = ()
    reopened: tuple[int, ...] = ()
    changed: tuple[int, ...] = ()


@dataclass(frozen=True)
class CaseSummary:
    """A case as the queue lists it: its status and its latest look's verdict and evidence."""

    case_id: int
    kind: str
    members: tuple[str, ...]
    status: str
    opened_look: int
    version: int
    reopen_kind: str | None
    reopen_above: float | None
    look_id: int | None  # its latest row's look
    verdict: str | None
    hands: int | None
    score: float | None
    q_value: float | None
    log10_e: float | None
    level: float | None
    level_kind: str | None
    main_signal: str | None
    looks: int
    notes: int
    new: bool
    changed: bool
    last_action: str | None
    last_who: str | None
    last_at: str | None


@dataclass(frozen=True)
class HistoryRow:
    """A case at one look."""

    look_id: int
    at: str
    label: str | None
    audit_dir: str | None
    verdict: str
    hands: int | None
    score: float | None
    log10_p: float | None
    p_value: float | None
    q_value: float | None
    log10_q: float | None
    log10_e: float | None
    level: float | None
    level_kind: str | None
    main_signal: str | None
    signal: Any
    lead: Any
    report_index: int | None


@dataclass(frozen=True)
class Event:
    event_id: int
    case_id: int
    at: str
    who: str
    action: str
    text: str | None
    look_id: int | None
    level: float | None


@dataclass(frozen=True)
class CaseFile:
    """One case whole: its summary, its verdict and evidence at every look (oldest first), what happened to it, and the
    other cases that share a member."""

    summary: CaseSummary
    history: list[HistoryRow]
    events: list[Event]
    related: list[CaseSummary]


def _json(value: Any) -> str | None:
    if value is None:
        return None
    try:
        return orjson.dumps(value).decode()
    except TypeError:  # an int beyond 64 bits
        import json

        return json.dumps(value, ensure_ascii=False)


def _value(obs: Observation, kind: str | None) -> float | None:
    """``obs``'s evidence on the measure ``kind`` (the one a dismissal's level is on)."""
    v = {"score": obs.score, "log10_e": obs.log10_e, "count": obs.count}.get(kind or "")
    return None if v is None else float(v)


def _is_changed(prev: tuple[str, float | None, str | None] | None, verdict: str, level: float | None,
                level_kind: str | None) -> bool:
    """A case's row differs from its previous look's: another verdict, or the level moved :data:`CHANGE_LEVEL` or more
    on the same measure."""
    if prev is None:
        return True
    pv, pl, pk = prev
    if pv != verdict:
        return True
    return pl is not None and level is not None and pk == level_kind and abs(level - pl) >= CHANGE_LEVEL


def _insert_row(c: sqlite3.Connection, case_id: int, look_id: int, obs: Observation) -> None:
    level, kind = obs.level
    c.execute("INSERT INTO case_looks (case_id, look_id, verdict, hands, score, log10_p, p_value, q_value, log10_q, "
              "log10_e, level, level_kind, main_signal, signal, lead, report_index) "
              "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
              (case_id, look_id, obs.verdict, obs.hands, obs.score, obs.log10_p, obs.p_value, obs.q_value,
               obs.log10_q, obs.log10_e, level, None if level is None else kind, obs.main_signal, _json(obs.signal),
               _json(obs.lead), obs.report_index))


def _describe(obs: Observation) -> str:
    """A look's view of a case in a few words (an event's text)."""
    level, kind = obs.level
    shown = "" if level is None else f", {kind} {level_number(level, kind, 4)}"
    hands = "" if obs.hands is None else f", {obs.hands} hands"
    return f"{obs.verdict}{shown}{hands}" + ("" if obs.main_signal is None else f", main signal {obs.main_signal}")


def record_look(db: Cases, result: Mapping[str, Any], *, audit_dir: str | os.PathLike[str] | None = None,
                at: str | None = None, label: str | None = None, source: str = "the audit's result") -> Recorded:
    """Record one look: an audit's result (audit.json's content, or the dict the audit writes it from). ``audit_dir``:
    the folder holding its audit.json and report.html (the review page links to them); ``at``: the look's time (ISO
    8601; default now); ``label``: a name for it. One transaction: a failure or a killed process leaves the database as
    it was. The same result twice is one look (``Recorded.already``)."""
    ready = _Prepared.of(result, audit_dir, at, label, source)
    with db.writing() as c:
        return _record(c, ready)


@contextmanager
def recording(db: Cases, result: Mapping[str, Any], *, audit_dir: str | os.PathLike[str] | None = None,
              at: str | None = None, label: str | None = None,
              source: str = "the audit's result") -> Iterator[LookChanges]:
    """Record one look (as :func:`record_look`) and keep its transaction open while the block writes what shows the
    look (the audit's files, which lead with what it changed): the look is committed when the block ends and rolled
    back when the block fails, so a look is never recorded without its files, and the files show exactly what was
    recorded. Yields the look's changes (:func:`look_changes`). Other writers wait meanwhile (up to their busy
    timeout); readers do not."""
    ready = _Prepared.of(result, audit_dir, at, label, source)
    with db.writing() as c:
        done = _record(c, ready)
        yield look_changes(c, done.look_id, already=done.already, cases_seen=done.cases_seen)


@dataclass(frozen=True)
class _Prepared:
    """A result checked and indexed before the write transaction begins (no lock is held while it is read)."""

    result: Mapping[str, Any]
    key: str
    when: str
    look: Look
    label: str | None
    folder: str | None

    @classmethod
    def of(cls, result: Mapping[str, Any], audit_dir: str | os.PathLike[str] | None, at: str | None,
           label: str | None, source: str) -> _Prepared:
        check_result(result, source)
        return cls(result, digest(result), now() if at is None else parse_time(at), Look(result), label,
                   None if audit_dir is None else str(Path(audit_dir).resolve()))


def look_hands(result: Mapping[str, Any]) -> int:
    """The hands a look read in every game: the pair audit's, each other game's audit section's (借牌's, its invalid
    hands with illegal borrows included), and the hands of a game validated only. A 借牌 or 信阳黑七 room's look is
    not "0 hands"."""
    from analyzer.variants import registry

    games = registry()
    skipped = result.get("skipped_hands") or {}
    total = int(result.get("hands") or 0)
    for game in sorted({*skipped, *(g for g in games if isinstance(result.get(g), Mapping))}):
        section = result.get(game)
        if game in games and games[game].offers.audit_section and isinstance(section, Mapping):
            total += int(section.get("hands") or 0)  # every hand of its room, an invalid one too
        else:
            total += int(skipped.get(game) or 0)
    return total


def _record(c: sqlite3.Connection, ready: _Prepared) -> Recorded:
    """:func:`record_look`'s writes, inside the caller's transaction."""
    result, key, when, look, label, folder = ready.result, ready.key, ready.when, ready.look, ready.label, ready.folder
    marked = {(o.kind, o.subject): o for o in look.marked()}
    pairs = look.pairs
    alarm = result.get("alarm") or {}
    found = c.execute("SELECT look_id, at FROM looks WHERE digest = ?", (key,)).fetchone()
    if found is not None:
        seen = c.execute("SELECT count(*) FROM case_looks WHERE look_id = ?", (found[0],)).fetchone()[0]
        return Recorded(found[0], found[1], True, seen)
    look_id = c.execute(
        "INSERT INTO looks (at, recorded_at, label, digest, audit_dir, hands, pairs, flagged, review, alpha, fdr, "
        "min_hands) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (when, now(), label, key, folder, look_hands(result), len(pairs),
         sum(o.verdict == "flagged" for o in marked.values() if o.kind != "group"),
         sum(o.verdict == "review" for o in marked.values() if o.kind != "group"),
         alarm.get("alpha"), alarm.get("fdr"), alarm.get("min_hands"))).lastrowid
    assert look_id is not None
    existing = {(k, s): (cid, st, rk, ra) for cid, k, s, st, rk, ra in c.execute(
        "SELECT case_id, kind, subject, status, reopen_kind, reopen_above FROM cases")}
    previous = {cid: (v, lv, lk) for cid, v, lv, lk in c.execute(
        "SELECT case_id, verdict, level, level_kind FROM (SELECT case_id, verdict, level, level_kind, "
        "ROW_NUMBER() OVER (PARTITION BY case_id ORDER BY look_id DESC) AS rn FROM case_looks) WHERE rn = 1")}
    new, reopened, changed = [], [], []
    for (kind, subject), obs in marked.items():
        if (kind, subject) in existing:
            continue
        case_id = c.execute("INSERT INTO cases (kind, subject, opened_look) VALUES (?, ?, ?)",
                            (kind, subject, look_id)).lastrowid
        assert case_id is not None
        c.executemany("INSERT INTO case_members (case_id, player) VALUES (?, ?)",
                      [(case_id, m) for m in sorted(set(obs.members))])
        c.execute("INSERT INTO events (case_id, at, who, action, text, look_id, level) VALUES (?, ?, ?, ?, ?, ?, ?)",
                  (case_id, when, ANALYZER, "opened", _describe(obs), look_id, obs.level[0]))
        _insert_row(c, case_id, look_id, obs)
        new.append(case_id)
    for (kind, subject), (case_id, status, reopen_kind, reopen_above) in existing.items():
        obs = marked.get((kind, subject)) or look.observe(kind, subject)
        _insert_row(c, case_id, look_id, obs)
        level, level_kind = obs.level
        if status == "dismissed" and reopen_above is not None:
            v = _value(obs, reopen_kind)
            if v is not None and v > reopen_above:
                c.execute("UPDATE cases SET status = 'open', reopen_kind = NULL, reopen_above = NULL, "
                          "version = version + 1 WHERE case_id = ?", (case_id,))
                c.execute("INSERT INTO events (case_id, at, who, action, text, look_id, level) "
                          "VALUES (?, ?, ?, ?, ?, ?, ?)",
                          (case_id, when, ANALYZER, "auto-reopen",
                           f"{reopen_kind} {v:.4g} passed {reopen_above:.4g} (the level at dismissal plus the "
                           f"margin): {_describe(obs)}", look_id, v))
                reopened.append(case_id)
        if case_id in reopened or _is_changed(previous.get(case_id), obs.verdict, level,
                                              None if level is None else level_kind):
            changed.append(case_id)
    seen = len(existing) + len(new)
    return Recorded(look_id, when, False, seen, tuple(new), tuple(reopened), tuple(sorted(new + changed)))


@dataclass(frozen=True)
class Change:
    """A case a look opened (``new``), reopened by itself (``reopened``) or changed (``changed``: another verdict, or
    the level moved by :data:`CHANGE_LEVEL`), with its verdict and level at that look and at its look before."""

    case_id: int
    kind: str
    members: tuple[str, ...]
    status: str  # the case's status now
    what: str
    verdict: str
    level: float | None
    level_kind: str | None
    hands: int | None
    main_signal: str | None
    report_index: int | None
    before_verdict: str | None = None
    before_level: float | None = None
    before_kind: str | None = None


@dataclass(frozen=True)
class LookChanges:
    """What one look opened, reopened and changed, against the look before it (``previous``: its number, time and
    label; None for the first look of the database)."""

    look_id: int
    at: str
    label: str | None
    already: bool  # the same result was recorded before, as this look
    previous: dict[str, Any] | None
    changes: tuple[Change, ...]
    cases_seen: int = 0

    def count(self, what: str) -> int:
        return sum(ch.what == what for ch in self.changes)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe, for the report's block (``analyzer.report.changes``)."""
        from dataclasses import asdict

        return {"look_id": self.look_id, "at": self.at, "label": self.label, "already": self.already,
                "previous": self.previous, "cases_seen": self.cases_seen,
                "counts": {w: self.count(w) for w in CHANGE_KINDS},
                "changes": [{**asdict(ch), "members": list(ch.members)} for ch in self.changes]}


#: What a look did to a case, in the order the summary and the page list them.
CHANGE_KINDS = ("new", "reopened", "changed")

_CHANGES_SQL = """
SELECT c.case_id, c.kind, c.subject, c.status, c.opened_look, r.verdict, r.level, r.level_kind, r.hands,
       r.main_signal, r.report_index, p.verdict, p.level, p.level_kind,
       EXISTS (SELECT 1 FROM events x WHERE x.case_id = c.case_id AND x.action = 'auto-reopen' AND x.look_id = ?1)
FROM case_looks r
JOIN cases c ON c.case_id = r.case_id
LEFT JOIN case_looks p ON p.case_id = r.case_id
    AND p.look_id = (SELECT max(q.look_id) FROM case_looks q WHERE q.case_id = r.case_id AND q.look_id < ?1)
WHERE r.look_id = ?1
"""


def look_changes(c: sqlite3.Connection, look_id: int, *, already: bool = False, cases_seen: int | None = None) -> LookChanges:
    """What look ``look_id`` opened, reopened and changed (read in the caller's transaction): the new cases first, then
    the reopened, then the changed; within each the strongest verdict and level first."""
    at, label = c.execute("SELECT at, label FROM looks WHERE look_id = ?", (look_id,)).fetchone()
    prev = c.execute("SELECT look_id, at, label FROM looks WHERE look_id < ? ORDER BY look_id DESC LIMIT 1",
                     (look_id,)).fetchone()
    out = []
    rows = list(c.execute(_CHANGES_SQL, (look_id,)))
    for (case_id, kind, subject, status, opened, verdict, level, level_kind, hands, main, place, pv, pl, pk,
         auto) in rows:
        what = ("new" if opened == look_id else "reopened" if auto else
                "changed" if _is_changed(None if pv is None else (pv, pl, pk), verdict, level, level_kind) else None)
        if what is not None:
            out.append(Change(case_id, kind, members_of(subject), status, what, verdict, level, level_kind, hands,
                              main, place, pv, pl, pk))
    out.sort(key=lambda ch: (CHANGE_KINDS.index(ch.what), VERDICT_ORDER.get(ch.verdict, 9),
                             -(ch.level if ch.level is not None else -math.inf), ch.case_id))
    return LookChanges(look_id, at, label, already,
                       None if prev is None else {"look_id": prev[0], "at": prev[1], "label": prev[2]},
                       tuple(out), len(rows) if cases_seen is None else cases_seen)


#: Changes the summary lists one a line (the rest: ``analyzer cases list --changed``).
CHANGE_LINES = 20


def change_lines(looked: LookChanges, where: str, limit: int = CHANGE_LINES) -> list[str]:
    """The audit summary's lead with a cases database: what this look opened, reopened and changed since the last look,
    one case a line (ids are the logs' text: the caller makes them printable)."""
    counts = ", ".join(f"{looked.count(w)} {w}" for w in CHANGE_KINDS)
    prev = looked.previous
    against = ("the first look in this database" if prev is None else
               f"since look {prev['look_id']}, " + (f"{prev['label']}, " if prev.get("label") else "") + f"{prev['at']}")
    again = ", recorded before: nothing written" if looked.already else ""
    lines = [f"cases: look {looked.look_id}, {counts} ({against}{again}) -> {where}"]
    if not looked.changes and prev is not None:
        lines.append("  nothing new or changed since the last look")
    for ch in looked.changes[:limit]:
        lines.append(f"  {ch.what.upper():8} case #{ch.case_id} {ch.kind} {' + '.join(ch.members)}: {_transition(ch)}"
                     + (f" ({ch.status})" if ch.status != "open" else "")
                     + ("" if ch.main_signal is None else f", main signal {ch.main_signal}"))
    if len(looked.changes) > limit:
        lines.append(f"  ... and {len(looked.changes) - limit} more (analyzer cases list --changed --db {where})")
    return lines


def level_number(level: float, kind: str | None, digits: int = 3) -> str:
    """A level as people read it: a count (illegal borrows) whole, a score or log10 e-value to ``digits`` figures."""
    return str(round(level)) if kind == "count" else f"{level:.{digits}g}"


def _level_text(level: float | None, kind: str | None) -> str:
    return "" if level is None else f"{kind} {level_number(level, kind)}"


def _transition(ch: Change) -> str:
    """A case's verdict and level now, with the look before's when they differ (``review -> flagged, score 4.1 ->
    6.3``)."""
    now_level = _level_text(ch.level, ch.level_kind)
    hands = "" if ch.hands is None else f", {ch.hands} " + ("lends to each other" if ch.kind == "lending" else "hands")
    if ch.what == "new" or ch.before_verdict is None:
        return ch.verdict + (f", {now_level}" if now_level else "") + hands
    verdict = ch.verdict if ch.before_verdict == ch.verdict else f"{ch.before_verdict} -> {ch.verdict}"
    before = _level_text(ch.before_level, ch.before_kind)
    level = now_level if not before or before == now_level else (
        f"{before} -> {level_number(ch.level, ch.level_kind)}" if ch.before_kind == ch.level_kind and ch.level is not None
        else f"{before} -> {now_level or '-'}")
    return verdict + (f", {level}" if level else "") + hands


_SUMMARY_SQL = """
WITH r AS (
    SELECT case_id, look_id, verdict, hands, score, q_value, log10_e, level, level_kind, main_signal,
           ROW_NUMBER() OVER (PARTITION BY case_id ORDER BY look_id DESC) AS rn,
           COUNT(*) OVER (PARTITION BY case_id) AS n
    FROM case_looks),
e AS (
    SELECT case_id, action, who, at, ROW_NUMBER() OVER (PARTITION BY case_id ORDER BY event_id DESC) AS rn
    FROM events)
SELECT c.case_id, c.kind, c.subject, c.status, c.opened_look, c.version, c.reopen_kind, c.reopen_above,
       a.look_id, a.verdict, a.hands, a.score, a.q_value, a.log10_e, a.level, a.level_kind, a.main_signal,
       coalesce(a.n, 0), b.verdict, b.level, b.level_kind,
       (SELECT count(*) FROM events n WHERE n.case_id = c.case_id AND n.action = 'note'),
       EXISTS (SELECT 1 FROM events x WHERE x.case_id = c.case_id AND x.action = 'auto-reopen'
               AND x.look_id = a.look_id),
       last.action, last.who, last.at
FROM cases c
LEFT JOIN r a ON a.case_id = c.case_id AND a.rn = 1
LEFT JOIN r b ON b.case_id = c.case_id AND b.rn = 2
LEFT JOIN e last ON last.case_id = c.case_id AND last.rn = 1
"""


def _summaries(c: sqlite3.Connection, where: str = "", args: Sequence[Any] = ()) -> list[CaseSummary]:
    latest = c.execute("SELECT max(look_id) FROM looks").fetchone()[0]
    out = []
    for row in c.execute(_SUMMARY_SQL + where, tuple(args)):
        (case_id, kind, subject, status, opened, version, rk, ra, look_id, verdict, hands, score, q, log10_e, level,
         level_kind, main, n, pv, pl, pk, notes, auto, la, lw, lt) = row
        new = opened == latest
        changed = look_id == latest and (new or bool(auto) or _is_changed(
            None if pv is None else (pv, pl, pk), verdict, level, level_kind))
        out.append(CaseSummary(case_id, kind, members_of(subject), status, opened, version, rk, ra, look_id, verdict,
                               hands, score, q, log10_e, level, level_kind, main_signal=main, looks=n, notes=notes,
                               new=new, changed=changed, last_action=la, last_who=lw, last_at=lt))
    return out


def _queue_key(s: CaseSummary) -> tuple[int, int, float, int]:
    return (_STATUS_ORDER[s.status], VERDICT_ORDER.get(s.verdict or "absent", 9),
            -(s.level if s.level is not None else -math.inf), s.case_id)


def list_cases(db: Cases, *, status: str | Iterable[str] | None = None, new: bool = False, changed: bool = False,
               kind: str | None = None, player: str | None = None) -> list[CaseSummary]:
    """The cases, open first, then confirmed, then dismissed; within each the strongest latest verdict and level first.
    ``status``: only these; ``new``: only those the last look opened; ``changed``: only those whose last look's row
    differs from the one before (a new verdict, the level moved by :data:`CHANGE_LEVEL`, reopened, or new);
    ``kind``: only pairs, groups, ...; ``player``: only cases with this member."""
    wanted = None if status is None else ({status} if isinstance(status, str) else set(status))
    for s in wanted or ():
        if s not in STATUSES:
            raise CasesError(f"unknown status {s!r}: one of {', '.join(STATUSES)}")
    if kind is not None and kind not in KINDS:
        raise CasesError(f"unknown kind {kind!r}: one of {', '.join(KINDS)}")
    clauses, args = [], []
    if kind is not None:
        clauses.append("c.kind = ?")
        args.append(kind)
    if player is not None:
        clauses.append("c.case_id IN (SELECT case_id FROM case_members WHERE player = ?)")
        args.append(player)
    with db.reading() as c:
        rows = _summaries(c, (" WHERE " + " AND ".join(clauses)) if clauses else "", args)
    rows = [r for r in rows if (wanted is None or r.status in wanted) and (not new or r.new)
            and (not changed or r.changed)]
    return sorted(rows, key=_queue_key)


def looks(db: Cases) -> list[dict[str, Any]]:
    """Every look, the first first: its number, time, label, folder and counts."""
    with db.reading() as c:
        cur = c.execute("SELECT look_id, at, recorded_at, label, audit_dir, hands, pairs, flagged, review FROM looks "
                        "ORDER BY look_id")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row)) for row in cur]


def resolve(c: sqlite3.Connection, ref: int | str) -> int:
    """A case's number from ``ref``: its number (``3``), or its members (``p02,p12``; any order; a JSON array too)."""
    text = str(ref).strip()
    if text.isdigit():
        found = c.execute("SELECT case_id FROM cases WHERE case_id = ?", (int(text),)).fetchone()
        if found is None:
            raise CasesError(f"no case {text}")
        return int(found[0])
    members: list[str]
    if text.startswith("["):
        try:
            members = [str(x) for x in orjson.loads(text)]
        except (orjson.JSONDecodeError, TypeError):
            raise CasesError(f"{text!r} is neither a case number nor its members") from None
    else:
        members = [m.strip() for m in text.split(",") if m.strip()]
    if not members:
        raise CasesError(f"{text!r} is neither a case number nor its members (A,B)")
    ids = [r[0] for r in c.execute("SELECT case_id FROM cases WHERE subject = ? ORDER BY case_id",
                                   (subject_of(members),))]
    if not ids:
        raise CasesError(f"no case of {', '.join(sorted(members))}")
    if len(ids) > 1:
        raise CasesError(f"{len(ids)} cases of {', '.join(sorted(members))} (numbers {', '.join(map(str, ids))}): "
                         f"name one by its number")
    return int(ids[0])


def _loads(text: str | None) -> Any:
    return None if text is None else orjson.loads(text)


def _history_row(row: Sequence[Any]) -> HistoryRow:
    fields = list(row)
    fields[15], fields[16] = _loads(fields[15]), _loads(fields[16])  # the signal's and the lead's JSON
    return HistoryRow(*fields)


def show_case(db: Cases, ref: int | str) -> CaseFile:
    """One case with its history at every look, its events and the cases sharing a member."""
    with db.reading() as c:
        case_id = resolve(c, ref)
        summary = _summaries(c, " WHERE c.case_id = ?", (case_id,))[0]
        history = [_history_row(row) for row in c.execute(
            "SELECT l.look_id, l.at, l.label, l.audit_dir, r.verdict, r.hands, r.score, r.log10_p, r.p_value, "
            "r.q_value, r.log10_q, r.log10_e, r.level, r.level_kind, r.main_signal, r.signal, r.lead, "
            "r.report_index FROM case_looks r JOIN looks l USING (look_id) WHERE r.case_id = ? ORDER BY l.look_id",
            (case_id,))]
        events = [Event(*row) for row in c.execute(
            "SELECT event_id, case_id, at, who, action, text, look_id, level FROM events WHERE case_id = ? "
            "ORDER BY event_id", (case_id,))]
        related = _summaries(c, " WHERE c.case_id != ? AND c.case_id IN (SELECT case_id FROM case_members WHERE "
                                "player IN (SELECT player FROM case_members WHERE case_id = ?))", (case_id, case_id))
    return CaseFile(summary, history, events, sorted(related, key=_queue_key))


def _name(who: str) -> str:
    name = " ".join(str(who).split())
    if not name:
        raise CasesError("a decision needs the reviewer's name (--by NAME)")
    if len(name) > MAX_NAME:
        raise CasesError(f"a reviewer's name is at most {MAX_NAME} characters")
    if name == ANALYZER:
        raise CasesError(f"{ANALYZER!r} is the name of what a look does itself: sign with your own")
    return name


def decide(db: Cases, ref: int | str, action: str, who: str, text: str | None = None, *, margin: float | None = None,
           expect_version: int | None = None, at: str | None = None) -> Event:
    """Record a reviewer's decision on a case: ``note`` (``text`` required), ``dismiss`` (``text`` is the reason,
    required; the case reopens by itself when a later look's evidence passes its level now plus ``margin``, default
    :data:`REOPEN_MARGIN` of its measure), ``confirm`` or ``reopen``. ``expect_version``: the case's version the
    decision was made on (the review page's); another is refused (someone decided meanwhile)."""
    if action not in ACTIONS:
        raise CasesError(f"unknown decision {action!r}: one of {', '.join(ACTIONS)}")
    name = _name(who)
    body = None if text is None else str(text).strip() or None
    if action in ("note", "dismiss") and body is None:
        raise CasesError("a dismissal needs its reason (--reason)" if action == "dismiss" else "a note needs its text")
    if body is not None and len(body) > MAX_TEXT:
        raise CasesError(f"a note or reason is at most {MAX_TEXT} characters")
    if margin is not None and (action != "dismiss" or not math.isfinite(margin) or margin < 0):
        raise CasesError("a margin is a finite number >= 0, given with a dismissal only")
    when = now() if at is None else parse_time(at)
    with db.writing() as c:
        case_id = resolve(c, ref)
        status, version = c.execute("SELECT status, version FROM cases WHERE case_id = ?", (case_id,)).fetchone()
        if expect_version is not None and expect_version != version and action != "note":
            last = c.execute("SELECT action, who, at FROM events WHERE case_id = ? AND action != 'note' "
                             "ORDER BY event_id DESC LIMIT 1", (case_id,)).fetchone()
            raise CasesError(f"case {case_id} changed since the page was opened (now {status}: {last[0]} by {last[1]} "
                             f"at {last[2]}): reload it and decide again")
        if status not in ACTIONS[action]:  # the decision would leave it as it is
            raise CasesError(f"case {case_id} is {status} already")
        look_id = c.execute("SELECT max(look_id) FROM looks").fetchone()[0]
        level = None
        if action == "dismiss":
            found = c.execute("SELECT level, level_kind FROM case_looks WHERE case_id = ? AND level IS NOT NULL "
                              "ORDER BY look_id DESC LIMIT 1", (case_id,)).fetchone()
            kind = None if found is None else found[1]
            level = None if found is None else float(found[0])
            above = None if level is None or kind is None else level + (REOPEN_MARGIN[kind] if margin is None
                                                                        else margin)
            c.execute("UPDATE cases SET status = 'dismissed', reopen_kind = ?, reopen_above = ?, version = version + 1 "
                      "WHERE case_id = ?", (kind if above is not None else None, above, case_id))
        elif action in LEAVES:
            c.execute("UPDATE cases SET status = ?, reopen_kind = NULL, reopen_above = NULL, version = version + 1 "
                      "WHERE case_id = ?", (LEAVES[action], case_id))
        event_id = c.execute("INSERT INTO events (case_id, at, who, action, text, look_id, level) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?)", (case_id, when, name, action, body, look_id, level)).lastrowid
        assert event_id is not None
    return Event(event_id, case_id, when, name, action, body, look_id, level)
