"""``analyzer cases``: the fair-play desk's cases across looks: list, show, record a look, decide."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from analyzer.commands.common import fail, help_epilog

if TYPE_CHECKING:
    from analyzer.desk.cases import CaseFile, CaseSummary
    from analyzer.desk.db import Cases

#: The environment variable a --db may come from (a nightly job sets it once).
DB_ENV = "ANALYZER_CASES"

db_option = click.option(
    "--db", "db_path", required=True, envvar=DB_ENV, show_envvar=True, type=click.Path(dir_okay=True),
    help="The cases database: a file, or a decision store's folder (its _cases.sqlite).")
case_argument = click.argument("case")
by_option = click.option("--by", "who", required=True, help="Your name, kept with the decision.")
format_option = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
                             help="text for people, json for programs.")


@contextmanager
def opened(path: str, *, create: bool = False) -> Iterator[Cases]:
    """The database, every way it (or a decision in the block) can fail a clear line and exit 2."""
    from analyzer.desk.db import CasesError, open_cases
    from analyzer.problems import printable

    try:
        with open_cases(path, create=create) as db:
            yield db
    except CasesError as e:
        fail("cases", printable(str(e)))
    except sqlite3.DatabaseError as e:  # a damaged file, a full disk
        fail("cases", printable(f"{path}: {e}"))


def _num(x: float | None, digits: int = 4) -> str:
    if x is None:
        return "-"
    return f"{x:.2e}" if x != 0 and abs(x) < 1e-3 else f"{x:.{digits}g}"


def _members(members: tuple[str, ...]) -> str:
    from analyzer.problems import printable

    return " + ".join(printable(m) for m in members)


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def _since(s: CaseSummary) -> str:
    return "new" if s.new else "changed" if s.changed else "-"


def _json(value: Any) -> None:
    import orjson

    click.echo(orjson.dumps(value, option=orjson.OPT_INDENT_2).decode())


@click.group(name="cases", short_help="Cases across looks: list, show, decide, record a look.",
             epilog=help_epilog(
    "analyzer cases record reports/day4 --db STORE && analyzer cases list --changed --db STORE",
    "0: done", "2: usage error, an unknown case, a decision that cannot be made, or a database that cannot be used "
    "(not a cases database, newer than this analyzer, busy with another writer past the timeout)"))
def command() -> None:
    """The fair-play desk's cases: every pair, group, illegal borrower or 借牌 lending pair an audit marked, with its
    status (open, dismissed, confirmed), notes, and its verdict and evidence at every look.

    \b
    A look is an audit's result recorded (record AUDIT_DIR). A dismissed case
    reopens by itself when a later look's evidence passes its level at
    dismissal plus a margin (docs/guide/cases.md). CASE is a case's number
    or its members (p02,p12)."""


@command.command(name="record")
@click.argument("audit", type=click.Path(exists=True, dir_okay=True))
@db_option
@click.option("--at", default=None, help="The look's time (ISO 8601, UTC unless a zone is given); default now.")
@click.option("--label", default=None, help="A name for the look (a day, a batch).")
def record(audit: str, db_path: str, at: str | None, label: str | None) -> None:
    """Record an audit's look: AUDIT is its --out folder (or its audit.json). The database is made when missing."""
    from analyzer.desk.cases import change_lines, look_changes, record_look
    from analyzer.desk.db import CasesError
    from analyzer.desk.looks import read_audit
    from analyzer.problems import printable

    try:
        result, folder = read_audit(audit)
    except CasesError as e:
        fail("cases", printable(str(e)))
    with opened(db_path, create=True) as db:
        done = record_look(db, result, audit_dir=folder, at=at, label=label, source=audit)
        where = printable(str(db.path))
        with db.reading() as c:  # the cases it opened, reopened and changed, as the audit's summary lists them
            lead = change_lines(look_changes(c, done.look_id), where)[1:]
    if done.already:
        click.echo(f"already recorded as look {done.look_id} ({done.at}): nothing changed in {where}")
        return

    def ids(xs: tuple[int, ...]) -> str:
        return f" ({', '.join(f'#{x}' for x in xs)})" if xs else ""

    click.echo(f"look {done.look_id} ({done.at}, {result['hands']} hands): {done.cases_seen} case(s), "
               f"{len(done.new)} new{ids(done.new)}, {len(done.reopened)} reopened{ids(done.reopened)}, "
               f"{len(done.changed)} changed{ids(done.changed)} -> {where}")
    for line in lead:
        click.echo(printable(line))


@command.command(name="list")
@db_option
@click.option("--status", multiple=True, type=click.Choice(["open", "dismissed", "confirmed"]),
              help="Only cases of this status (repeat for several).")
@click.option("--new", is_flag=True, help="Only the cases the last look opened.")
@click.option("--changed", is_flag=True,
              help="Only the cases the last look changed: new, reopened, another verdict, or the level moved by 1.")
@click.option("--kind", type=click.Choice(["pair", "group", "borrow", "lending"]), default=None,
              help="Only cases of this kind.")
@click.option("--player", default=None, help="Only cases with this player among the members.")
@format_option
def list_command(db_path: str, status: tuple[str, ...], new: bool, changed: bool, kind: str | None,
                 player: str | None, fmt: str) -> None:
    """The cases queue: open first, then confirmed, then dismissed; the strongest latest evidence first."""
    from analyzer.desk.cases import list_cases

    with opened(db_path) as db:
        rows = list_cases(db, status=status or None, new=new, changed=changed, kind=kind, player=player)
    if fmt == "json":
        _json([dataclasses.asdict(r) for r in rows])
        return
    if not rows:
        click.echo("no cases" + (" match" if status or new or changed or kind or player else ""))
        return
    head = ["CASE", "KIND", "STATUS", "VERDICT", "LEVEL", "HANDS", "SIGNAL", "LOOKS", "NOTES", "SINCE LAST", "MEMBERS"]
    body = [[f"#{r.case_id}", r.kind, r.status, r.verdict or "-",
             "-" if r.level is None else f"{_num(r.level)} {r.level_kind}", _num(r.hands), r.main_signal or "-",
             str(r.looks), str(r.notes), _since(r), _members(r.members)] for r in rows]
    click.echo(_table([head, *body]))


def _show_text(f: CaseFile) -> str:
    from analyzer.desk.looks import sentence
    from analyzer.problems import printable

    s = f.summary
    out = [f"case #{s.case_id}: {s.kind} {_members(s.members)}, {s.status} (opened at look {s.opened_look})"]
    if s.status == "dismissed":
        out.append(f"reopens by itself when a look's {s.reopen_kind} passes {_num(s.reopen_above)}"
                   if s.reopen_above is not None else "no level was measured at dismissal: it stays dismissed")
    lead = next((sentence(h.lead) for h in reversed(f.history) if h.lead is not None), None)
    if lead:
        out.append(f"lead (look {next(h.look_id for h in reversed(f.history) if h.lead is not None)}): "
                   f"{printable(lead)}")
    rows = [["LOOK", "AT", "LABEL", "VERDICT", "HANDS", "SCORE", "Q", "LOG10 E", "LEVEL", "SIGNAL", "CASE FILE"]]
    for h in f.history:
        page = "-" if h.audit_dir is None else printable(h.audit_dir) + "/report.html" + (
            "" if h.report_index is None else f"#pair={h.report_index}")
        rows.append([str(h.look_id), h.at, printable(h.label or "-"), h.verdict, _num(h.hands), _num(h.score),
                     _num(h.q_value, 2), _num(h.log10_e), "-" if h.level is None else f"{_num(h.level)} {h.level_kind}",
                     _signal(h.main_signal, h.signal), page])
    out += ["", "history:", _table(rows), "", "events:"]
    out += [f"  {e.at}  {printable(e.who)}  {e.action}" + ("" if e.text is None else f": {printable(e.text)}")
            for e in f.events]
    if f.related:
        out += ["", "cases sharing a member:"]
        out += [f"  #{r.case_id} {r.kind} {_members(r.members)}: {r.status}, {r.verdict or '-'}" for r in f.related]
    return "\n".join(out)


def _signal(name: str | None, numbers: Any) -> str:
    """The signal that fired and its p (a pair's) or its own figures (a group's best pair, a borrower's count)."""
    if name is None:
        return "-"
    if isinstance(numbers, dict) and isinstance(numbers.get("p"), (int, float)):
        return f"{name} (p {_num(numbers['p'], 2)})"
    if isinstance(numbers, dict) and isinstance(numbers.get("illegal_borrows"), int):
        return f"{name} ({numbers['illegal_borrows']})"
    return name


@command.command(name="show")
@case_argument
@db_option
@format_option
def show(case: str, db_path: str, fmt: str) -> None:
    """One case: its verdict and evidence at every look, its notes and decisions, the cases sharing a member."""
    from analyzer.desk.cases import show_case

    with opened(db_path) as db:
        found = show_case(db, case)
    if fmt == "json":
        _json(dataclasses.asdict(found))
    else:
        click.echo(_show_text(found))


@command.command(name="looks")
@db_option
@format_option
def looks_command(db_path: str, fmt: str) -> None:
    """Every look recorded, the first first."""
    from analyzer.desk.cases import looks
    from analyzer.problems import printable

    with opened(db_path) as db:
        rows = looks(db)
    if fmt == "json":
        _json(rows)
        return
    if not rows:
        click.echo("no looks")
        return
    head = ["LOOK", "AT", "LABEL", "HANDS", "PAIRS", "FLAGGED", "REVIEW", "AUDIT"]
    click.echo(_table([head, *([str(r["look_id"]), r["at"], printable(r["label"] or "-"), str(r["hands"]),
                                str(r["pairs"]), str(r["flagged"]), str(r["review"]),
                                printable(r["audit_dir"] or "-")] for r in rows)]))


def _decision(action: str, help: str, text_option: Callable[[Any], Any] | None) -> None:
    """A subcommand recording one decision ``action`` on a case."""

    def run(case: str, db_path: str, who: str, text: str | None = None, margin: float | None = None) -> None:
        from analyzer.desk.cases import decide
        from analyzer.problems import printable

        with opened(db_path) as db:
            event = decide(db, case, action, who, text, margin=margin)
        click.echo(f"case #{event.case_id}: {action} by {printable(event.who)} at {event.at}"
                   + ("" if event.level is None else f" (level {_num(event.level)})"))

    cmd: Callable[..., None] = run
    if action == "dismiss":
        cmd = click.option("--margin", type=click.FloatRange(min=0), default=None,
                           help="How far past its level now a look's evidence must go to reopen it "
                                "(default: 1 on a score or log10 e-value, 0 on a count).")(cmd)
    if text_option is not None:
        cmd = text_option(cmd)
    cmd = by_option(db_option(case_argument(cmd)))
    command.command(name=action, help=help)(cmd)


_decision("dismiss", "Dismiss a case with a reason; it reopens by itself when a look's evidence passes its level now "
                     "plus the margin.",
          click.option("--reason", "text", required=True, help="Why (kept with the decision)."))
_decision("confirm", "Confirm a case (collusion or cheating established).",
          click.option("--reason", "text", default=None, help="Why (optional)."))
_decision("reopen", "Reopen a dismissed or confirmed case.",
          click.option("--reason", "text", default=None, help="Why (optional)."))
_decision("note", "Add a note to a case.", click.option("--text", "text", required=True, help="The note."))
