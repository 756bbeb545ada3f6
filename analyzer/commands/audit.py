"""``analyzer audit``: rank every pair that sat together, flag collusion; exit 0 none, 1 flagged, 2 input error."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import orjson

from analyzer.commands.common import (
    AUDIT_POLICY,
    POLICY_NAMES,
    MAX_COUNT,
    FiniteFloatRange,
    exit_on_read_errors,
    dask_option,
    dd_samples_option,
    decisions_store_option,
    execution_for,
    fail,
    help_epilog,
    jobs_option,
    lang_option,
    max_line_option,
    open_decision_store,
    out_option,
    refuse_inputs,
    resolve_paths,
    samples_option,
    seed_option,
    store_settings,
)

if TYPE_CHECKING:
    from analyzer.audit.core import Audit
    from analyzer.desk.cases import LookChanges
    from analyzer.report.room_pass import Reading

OUTPUTS = ("audit.json", "pairs.csv", "players.csv", "report.html")

#: The alarm's default threshold, ``analyzer.audit.calibrate.DEFAULT_ALPHA`` (not imported: the command's options load
#: before its layers and numpy; a test holds the two equal), whose false-alarm rate docs/audit.md measured.
DEFAULT_ALPHA = 1e-5


def _paths_or_store(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    """PATHS, which may be left out only when --decisions STORE is given (the nightly look). An option given on the
    command line is processed before an argument left out, so ``store_path`` is known here when it was given."""
    if not value and ctx.params.get("store_path") is None:
        raise click.MissingParameter(ctx=ctx, param=param)
    return value


@click.command("audit", short_help="Rank the pairs that sat together; flag colluding pairs.",
               epilog=help_epilog("analyzer audit samples/demo-room.jsonl.gz -o reports/demo",
                                  "0: no pair flagged",
                                  "1: a pair flagged (or an illegal borrow found, or a 借牌 lending pair flagged)",
                                  "2: usage error, no valid hand (of a game validated only, such as 信阳黑七, the "
                                  "files are written with its problems), or a decision store of other logs or "
                                  "settings"))
@click.argument("paths", nargs=-1, callback=_paths_or_store)  # none with --decisions STORE: the nightly look
@out_option("Folder for audit.json, pairs.csv, players.csv and report.html (with --decisions STORE alone: "
            "audit.json of the e-values' verdicts, pairs.csv and report.html).", folder=True)
@click.option("--alpha", type=FiniteFloatRange(min=0, max=1, min_open=True), default=DEFAULT_ALPHA, show_default=True,
              help="Flag a pair only when its p-value is at most this (per pair).")
@click.option("--fdr", type=FiniteFloatRange(min=0, max=1, min_open=True), default=0.05, show_default=True,
              help="... and its Benjamini-Hochberg q-value over all pairs is at most this.")
@click.option("--min-hands", type=click.IntRange(min=1, max=MAX_COUNT), default=10, show_default=True,
              help="... and the two sat together at least this many hands.")
@samples_option
@dd_samples_option
@seed_option
@click.option("--policy", type=click.Choice(list(POLICY_NAMES)), default=AUDIT_POLICY, show_default=True,
              help="How options are valued (see `analyzer decisions --help`): the learned model by default, as for "
                   "every command; `strategy` rolls out every decision (about 4x the CPU; docs/methods/decisions.md).")
@click.option("--evidence", "top", type=click.IntRange(min=0, max=MAX_COUNT), default=12, show_default=True,
              help="Decisions of evidence per reported pair.")
@lang_option
@decisions_store_option
@jobs_option
@dask_option
@max_line_option
@click.option("--since", default=None, metavar="DAY|DATE",
              help="With --decisions STORE alone: read the verdicts of the days from this one on (a day's number in "
                   "the store's ledger, or a UTC date YYYY-MM-DD of its addition), the e-values started afresh there.")
@click.option("--cases", "cases_path", default=None, metavar="PATH",
              help="Record this look in the fair-play desk's cases database at PATH (a file, or a decision store's "
                   "folder: its cases file), made when missing; `analyzer cases` and `analyzer serve` read it.")
@click.pass_context
def command(ctx: click.Context, paths: tuple[str, ...], out: str, alpha: float, fdr: float, min_hands: int,
            samples: int, dd_samples: int, seed: int, policy: str, top: int, lang: str, store_path: str | None, jobs: int | None,
            dask_address: str | None, max_line_bytes: int, since: str | None, cases_path: str | None) -> None:
    """Audit the hands in PATHS (files, folders, or -) for pairs of players who help each other; with --decisions
    STORE and no PATHS, everything the store holds, day by day, with verdicts valid over every nightly look."""
    if not paths:
        if store_path is None:
            raise click.UsageError("Missing argument 'PATHS...' (or --decisions STORE alone: the nightly look at "
                                   "everything the store holds)")
        _check_cases(cases_path)
        # with --dask each new day's parts are read and its passes run on the workers; the cluster starts meanwhile
        execution = execution_for([], jobs, dask_address, preload=AUDIT_MODULES, prefork=AUDIT_PREFORK,
                                  start=True) if dask_address is not None else None
        try:
            _nightly(store_path, out, alpha, fdr, min_hands, since, cases_path,
                     connection=None if execution is None else execution.connection, lang=lang)
        finally:
            if execution is not None and execution.connection is not None:
                execution.connection.close()
        return
    if since is not None:
        raise click.UsageError("--since reads a decision store's days: give --decisions STORE without PATHS")
    files = resolve_paths(paths)
    _check_cases(cases_path)
    out_dir = Path(out)
    refuse_inputs([out_dir / n for n in OUTPUTS], [*files, *([store_path] if store_path else [])])
    # with --dask the cluster starts now, in the background, while this process imports the audit and reads the logs
    execution = execution_for(files, jobs, dask_address, preload=AUDIT_MODULES, prefork=AUDIT_PREFORK, start=True)
    try:
        _audit(ctx, AuditRun(files, out, out_dir, alpha, fdr, min_hands, samples, dd_samples, seed, policy, top, lang,
                             store_path, execution, max_line_bytes, cases_path))
    finally:  # the connection the command opened (its report reads the players' spill on the workers)
        if execution.connection is not None:
            execution.connection.close()


#: What the workers of a LocalCluster import as they start for the audit: the analysis, and the audit's tasks (the pair
#: signals' passes, the spill, the player table and the evidence); ``audit.warm`` then loads their compiled kernels and
#: caches on a few shipped hands (its ``dask_setup``), while this process reads the logs into the first batches.
AUDIT_MODULES = ("analyzer.analysis.decisions", "analyzer.audit.core", "analyzer.audit.on_dask",
                 "analyzer.analysis.players", "analyzer.audit.warm")
#: What the process the LocalCluster's workers are forked from imports once after them (where the platform forks):
#: ``audit.prewarm`` warms the caches there, so no worker warms its own.
AUDIT_PREFORK = ("analyzer.audit.prewarm",)


def group_lines(groups: list[dict[str, Any]]) -> list[str]:
    """The summary's line for each group of audit.json (players joined by marked pairs: a ring read as one group,
    not pair by pair)."""
    lines = []
    for g in groups:
        whole = f"all {len(g['players'])} at one table in {g['hands_all']} hands, " if g["hands_all"] is not None else ""
        lines.append(f"  GROUP   {' + '.join(g['players'])}: {g['marked_pairs']} of the {len(g['pairs'])} pairs among "
                     f"them marked ({g['verdict']}); {whole}two or more of them together in {g['hands_two_or_more']}")
    return lines


@dataclass(frozen=True, slots=True)
class AuditRun:
    """What one ``analyzer audit`` was asked, as the command line parsed it: the logs and where the outputs go, the
    alarm's settings, the analysis' settings, the report's, the decision store to read and where the work runs."""

    files: list[str]
    out: str
    out_dir: Path
    alpha: float
    fdr: float
    min_hands: int
    samples: int
    dd_samples: int
    seed: int
    policy: str
    top: int
    lang: str
    store_path: str | None
    execution: Any
    max_line_bytes: int
    cases_path: str | None = None


def _audit(ctx: click.Context, run: AuditRun) -> None:
    """The audit, once its layers are imported: the collector settled, and with Dask the reasons' kernel loaded in
    a thread while the workers analyse (started only now: numba's import hides scipy modules from other threads
    while it runs, ``analyzer.kernels``, and scipy is imported by now)."""
    import analyzer.audit.core  # noqa: F401  # the audit's layers (numba, scipy, pandas) before the collector settles
    import analyzer.report.audit  # noqa: F401
    from analyzer.running.collector import settle

    settle()  # the imports are done: out of every collection from now on
    warming = None
    if run.execution.connection is not None:  # the analysis runs on the Dask workers: the reasons' kernel loads meanwhile
        from analyzer.audit.warm import warm_reasons_soon

        warming = warm_reasons_soon()
    try:
        _audit_run(ctx, run)
    finally:
        if warming is not None:  # not left running into the interpreter's exit
            warming.join()


def _audit_run(ctx: click.Context, run: AuditRun) -> None:
    from analyzer.analysis.execute import Settings
    from analyzer.running.dask import DaskUnavailable
    from analyzer.analysis.store import StoreError
    from analyzer.audit.calibrate import Alarm
    from analyzer.audit.core import run_audit
    from analyzer.logs import OutputSet, atomic_write_bytes, csv_text
    from analyzer.progress import Progress, count_lines, input_bytes
    from analyzer.report.audit import read_ahead

    files, out_dir, store_path, max_line_bytes = run.files, run.out_dir, run.store_path, run.max_line_bytes
    samples, dd_samples, seed, policy = run.samples, run.dd_samples, run.seed, run.policy
    outputs = OutputSet(out_dir, OUTPUTS, inputs=files)  # checked now, written as one set at the end
    store, settings = None, None
    if store_path is not None:  # the store's settings, but for the options given on the command line
        store = open_decision_store("audit", store_path)
        settings = store_settings(ctx, store, Settings.of(samples, dd_samples, seed, policy=policy),
                                  {"samples": "samples", "dd_samples": "dd_samples", "seed": "seed",
                                   "policy": "policy"})
    bar = Progress("audit")
    total = None
    if bar.watched:  # the total makes the rate an ETA; counting lines is cheap next to analysing
        total = count_lines(files, on_progress=bar.phase("reading", input_bytes(files), unit="bytes"))
    if store is not None:  # the store's rows come first, counted as they are passed on; then the logs' hands
        bar.phase("store", sum(map(len, store.part_hands)))
    else:
        bar.phase("analysing", total)
    # with Dask workers that share the players' spill, the report's reads of it start on them as soon as the pairs
    # and players are known, while this process reads the rows shown, fills their reasons and writes the other files
    ahead: list[Reading | None] = []
    try:
        result = run_audit(files, samples=samples, dd_samples=dd_samples, seed=seed, policy=policy, top=run.top,
                           alarm=Alarm(alpha=run.alpha, fdr=run.fdr, min_hands=run.min_hands),
                           max_line_bytes=max_line_bytes,
                           on_progress=(lambda n: bar.steps("analysing", n, total, "hands")) if bar.watched else None,
                           on_phase=bar.start, on_steps=bar.steps if bar.watched else None,
                           execution=run.execution, store=store, settings=settings,
                           on_entries=lambda entries, spill: ahead.append(read_ahead(entries, spill)),
                           slim=True)  # the report needs the texts of the rows it shows only
    except (StoreError, DaskUnavailable) as e:
        bar.close()
        fail("audit", str(e))
    except Exception as e:
        from analyzer.analysis.options import OptionsError

        if isinstance(e, OptionsError) and store is not None:  # rows read from the store, not from this analysis
            bar.close()
            fail("audit", f"{store.path}: {e}: the store was changed after it was written; write it again from its "
                          "logs (`analyzer decisions LOGS --out NEW_STORE`)")
        bar.close()  # before any message: work or the scheduler Dask lost (cli: running.dask.dask_failure), or a bug
        raise
    bar.close()  # messages below must not tear the bar
    exit_on_read_errors(result.problems)
    for p in result.problems[:20]:
        click.echo(p.format(), err=True)
    if len(result.problems) > 20:
        click.echo(f"... and {len(result.problems) - 20} more problems (all in audit.json)", err=True)
    audit = result.result
    from analyzer.audit.case import p_text
    from analyzer.problems import printable  # player ids are the logs' text: no terminal control, no forged line

    looks = audit.get("lookalike_ids", {})
    for shown in looks.get("shown", [])[:5]:  # warnings: the hands stay in the audit, their ids as written
        click.echo(printable(f"warning: {shown['file']}:{shown['line']}: {shown['message']}"), err=True)
    if looks.get("count", 0) > 5:
        click.echo(f"... and {looks['count'] - 5} more ids that look like others (lookalike_ids in audit.json)", err=True)
    from analyzer.report.findings import unanalysed

    nothing_valid = audit["valid_hands"] == 0 and not _certain_cheats(audit)  # proven cheating is a finding anyway
    unread = unanalysed(audit) if nothing_valid else []
    if nothing_valid and not unread:
        why = ("the problems above; `analyzer validate` lists them all" if result.problems
               else "the input holds no hands")
        click.echo(f"analyzer: error: no valid hands to analyse ({why})", err=True)
        sys.exit(2)
    wrote = bar.phase("writing", len(OUTPUTS), unit="files")
    # with --cases the look is recorded first, in a transaction committed once the files are in place: the page and the
    # summary lead with what it changed, and a failure leaves both the files and the database as they were
    with _looking(run.cases_path, audit, run.out) as looked:
        with outputs as tmp:  # all four files new, or all four as they were (a failure or Ctrl-C changes nothing)
            atomic_write_bytes(tmp / "audit.json", orjson.dumps(audit, option=orjson.OPT_INDENT_2) + b"\n")
            _tick(wrote, 1)
            pair_cols = [c for c in result.pairs.columns if not c.endswith(("_null_scale", "_direction_rho"))]
            # ids that start like a formula get an apostrophe (csv_text): staff open these in spreadsheets
            atomic_write_bytes(tmp / "pairs.csv", csv_text(result.pairs[pair_cols], float_format="%.6g").encode())
            _tick(wrote, 2)
            atomic_write_bytes(tmp / "players.csv", csv_text(result.players, float_format="%.6g").encode())
            _tick(wrote, 3)
            _report(tmp, audit, result, files, run.lang, max_line_bytes, ahead[-1] if ahead else None,
                    None if looked is None else looked[0].to_dict())
            _tick(wrote, 4)
    bar.close()

    flagged = [p for p in audit["pairs"] if p["flagged"]]
    review = [p for p in audit["pairs"] if p.get("verdict") == "review"]
    _change_lines(looked)
    _summary_head(audit)
    for p in flagged:
        a, b = (printable(x) for x in p["players"])
        click.echo(f"  FLAGGED {a} + {b}: suspicion score {p['score']}, q {p_text(p['q_value'], p.get('log10_q'))}, "
                   f"{p['hands_together']} hands together, main signal {p['main_signal']}")
    for p in review:
        more = p.get("hands_to_alarm")
        a, b = (printable(x) for x in p["players"])
        click.echo(f"  REVIEW  {a} + {b}: score {p['score']}, q {p_text(p['q_value'], p.get('log10_q'))}, "
                   f"{p['hands_together']} hands together, main signal {p['main_signal']}"
                   + (f"; ~{more} more hands together before the alarm could fire" if more is not None else ""))
    for line in group_lines(audit.get("groups") or []):
        click.echo(printable(line))
    if flagged or review:
        alpha = audit["alarm"]["alpha"]
        # the measured false-alarm rate holds for the default threshold; another one is said as what it is
        rate = ("a false alarm well under once in 10,000 honest pairs" if alpha <= DEFAULT_ALPHA else
                f"each honest pair flagged with a chance of up to ~{alpha:.2g}, above the default's {DEFAULT_ALPHA:g}")
        click.echo(f"  (flagged: p <= {alpha:g}, {rate}; "
                   f"review: q <= {audit['alarm']['fdr']:g}, at most ~{audit['alarm']['fdr']:.0%} of the pairs marked "
                   f"for review are expected to be honest. Exit code 1 only when a pair is flagged.)")
    cheats = _certain_cheats(audit) + _flagged_elsewhere(audit)
    click.echo(printable(f"wrote {run.out}/audit.json, pairs.csv, players.csv, report.html"))
    if unread:  # every hand invalid, of a game validated only: its problems are the audit's report, exit 2 still
        click.echo(printable(f"analyzer: error: no valid hands to analyse (every hand of {', '.join(unread)} has a "
                             f"problem: listed above, in audit.json and on report.html)"), err=True)
        sys.exit(2)
    sys.exit(1 if flagged or cheats else 0)


def _tick(on_progress: Any, n: int) -> None:
    if on_progress is not None:
        on_progress(n)


def _report(out: Path, audit: dict[str, Any], result: Audit, files: list[str], lang: str,
            max_line_bytes: int, ahead: Reading | None = None, changes: dict[str, Any] | None = None) -> None:
    """report.html by the report pages; the evidence hands are read again from the inputs (their lines only; not from
    an input that cannot be read twice, ``logs.read_once``: stdin, a named pipe, ``<(zcat ...)``). A line that no
    longer holds the hand analysed there raises ``logs.ChangedInput`` (exit 2; the output set is not written).
    ``ahead``: the page's reads of the spill started during the audit (``report.audit.read_ahead``)."""
    from analyzer.logs import read_once
    from analyzer.report.audit import write_audit_report
    from analyzer.validate import generate_valid

    records = None
    wanted = {str(e["hand_id"]) for p in audit["pairs"] for e in p.get("evidence", []) if "hand_id" in e}
    if result.places is not None:  # the evidence hands alone, from their lines (the audit noted where each hand is)
        records = result.places.records(wanted)
    elif not any(read_once(f) for f in files):
        records = generate_valid(files, max_line_bytes=max_line_bytes)
    with result:  # the slim audit's players' spill, read by the report a player at a time, deleted after
        write_audit_report(out, audit, decisions=result.report_rows, records=records, lang=lang,
                           players=result.players, ahead=ahead, changes=changes)


def _summary_head(audit: dict[str, Any]) -> None:
    """The summary's first lines: the pair audit's, then each other game's findings (``report.findings``)."""
    from analyzer.problems import printable
    from analyzer.report.findings import summary_lines

    for line in summary_lines(audit):
        click.echo(printable(line))


def _certain_cheats(audit: dict[str, Any]) -> int:
    """Cheats the variants' own audit sections prove (e.g. illegal borrows), over the games in ``audit``."""
    from analyzer.variants import registry

    return sum(game.offer("audit_section").certain_cheats(audit[name]) for name, game in registry().items()
               if game.offers.audit_section and name in audit)


def _flagged_elsewhere(audit: dict[str, Any]) -> int:
    """What the variants' own audit sections flagged by their tests (e.g. 借牌's lending pairs): exit 1, as a flagged
    pair."""
    from analyzer.variants import registry

    return sum(getattr(game.offer("audit_section"), "flagged", lambda _: 0)(audit[name])
               for name, game in registry().items() if game.offers.audit_section and name in audit)


#: What the nightly look writes into --out.
NIGHTLY_OUTPUTS = ("audit.json", "pairs.csv", "report.html")


def _nightly(store_path: str, out: str, alpha: float, fdr: float, min_hands: int, since: str | None,
             cases_path: str | None = None, *, connection: Any = None, lang: str = "en") -> None:
    """The nightly look (``audit.ledger.look``): the store's ledger brought up to date from its new additions' rows,
    the verdicts of every day (or of ``since`` on) written to ``out``; exit 1 when a pair is flagged. With a Dask
    ``connection`` a new day's statistics are made on its workers (``audit.on_dask.day_statistics_on``)."""
    import functools
    import re

    from analyzer.analysis.store import StoreError
    from analyzer.audit.ledger import LedgerError, look
    from analyzer.logs import OutputSet, atomic_write_bytes, csv_text
    from analyzer.problems import printable
    from analyzer.progress import Progress
    from analyzer.report.audit import write_audit_report
    from analyzer.running.dask import DaskUnavailable

    if since is not None and not (since.isdigit() or re.fullmatch(r"\d{4}-\d{2}-\d{2}", since)):
        raise click.UsageError(f"--since {printable(since)}: a day's number (1, 2, ...) or a date YYYY-MM-DD expected")
    out_dir = Path(out)
    store = open_decision_store("audit", store_path)
    outputs = OutputSet(out_dir, NIGHTLY_OUTPUTS, inputs=[])
    bar = Progress("audit")
    try:
        phase = bar.phase("ledger", _new_hands(store) if bar.watched else None)
        statistics = None
        if connection is not None:
            from analyzer.audit.on_dask import day_statistics_on

            statistics = functools.partial(day_statistics_on, connection)
        seen = look(store, alpha=alpha, fdr=fdr, min_hands=min_hands, since=since, statistics=statistics,
                    on_day=None if phase is None else lambda day, hands: phase(hands))
    except (StoreError, LedgerError, DaskUnavailable) as e:
        bar.close()
        fail("audit", str(e))
    except OSError as e:  # the ledger's folder inside the store cannot be written (read-only, full disk)
        bar.close()
        fail("audit", f"{printable(store_path)}: cannot write its evidence ledger: {e.strerror or e}")
    bar.close()
    summary = seen.summary()
    if not seen.ledger.days:
        click.echo(f"analyzer: error: {printable(store_path)}: the store holds no day to audit", err=True)
        sys.exit(2)
    wrote = bar.phase("writing", len(NIGHTLY_OUTPUTS), unit="files")
    with _looking(cases_path, summary, out) as looked:  # recorded once the files are in place (as the logs' audit)
        with outputs as tmp:
            atomic_write_bytes(tmp / "audit.json", orjson.dumps(summary, option=orjson.OPT_INDENT_2) + b"\n")
            _tick(wrote, 1)
            atomic_write_bytes(tmp / "pairs.csv", csv_text(seen.pairs, float_format="%.6g").encode())
            _tick(wrote, 2)
            # the pairs, their verdicts and e-values and the ledger's days; no replays: no logs are read
            write_audit_report(tmp, summary, lang=lang)
            _tick(wrote, 3)
    bar.close()
    _change_lines(looked)
    w = seen.window
    click.echo(f"days {w[0].number}-{w[-1].number} of {len(seen.ledger.days)} ({seen.added} new), "
               f"{summary['hands']} hands, {len(seen.pairs)} pairs, {summary['flagged']} flagged, "
               f"{summary['review']} for review" if w else "no day in the window")
    for p in summary["pairs"]:
        if p["verdict"] == "clear":
            continue
        a, b = (printable(x) for x in p["players"])
        since_day = f", since day {p['flagged_day']}" if p["flagged_day"] else ""
        click.echo(f"  {p['verdict'].upper():7} {a} + {b}: e-value 10^{p['max_log10_e']:.2f} at most, "
                   f"10^{p['log10_e']:.2f} now, {p['hands_together']} hands together{since_day}")
    if summary["flagged"] or summary["review"]:
        click.echo(f"  (flagged: the e-value reached 1/alpha = {1 / alpha:g} on some day, for an honest pair a chance "
                   f"of at most {alpha:g} over every look; review: e-BH at {fdr:g} over the current e-values. "
                   f"Exit code 1 only when a pair is flagged.)")
    click.echo(printable(f"wrote {out}/audit.json, pairs.csv, report.html"))
    sys.exit(1 if summary["flagged"] else 0)


def _new_hands(store: Any) -> int:
    """The hands of the store's additions its evidence ledger does not cover yet: what the nightly look reads."""
    from analyzer.audit.ledger import new_additions, open_ledger

    return sum(len(store.part_hands[i]) for group in new_additions(store, open_ledger(store)) for i in group)


def _check_cases(cases_path: str | None) -> None:
    """A cases database that cannot be used (newer, foreign, damaged) stops the audit before any work."""
    if cases_path is None:
        return
    import sqlite3

    from analyzer.desk.db import CasesError, open_cases
    from analyzer.problems import printable

    try:
        with open_cases(cases_path):
            pass
    except (CasesError, sqlite3.DatabaseError) as e:
        fail("audit", printable(f"--cases: {e}"))


@contextmanager
def _looking(cases_path: str | None, audit: dict[str, Any], out: str) -> Iterator[tuple[LookChanges, str] | None]:
    """With ``--cases``: the look recorded in the cases database (as ``analyzer cases record OUT`` would: the same result
    is one look whichever way it was recorded), its transaction committed when the block (writing the audit's files)
    ends, rolled back when it fails; yields what the look changed and the database's path. None without ``--cases``."""
    if cases_path is None:
        yield None
        return
    import sqlite3

    from analyzer.desk.cases import recording
    from analyzer.desk.db import CasesError, open_cases
    from analyzer.problems import printable

    result = orjson.loads(orjson.dumps(audit))  # the result as audit.json holds it
    written = False
    try:
        with open_cases(cases_path) as db, recording(db, result, audit_dir=Path(out), label=Path(out).name,
                                                     source=f"{out}/audit.json") as looked:
            yield looked, str(db.path)
            written = True
    except (CasesError, sqlite3.DatabaseError) as e:
        if written:  # the files are in place, the commit failed
            fail("audit", printable(f"{e} (the audit's files are written: analyzer cases record {out} --db "
                                    f"{cases_path})"))
        fail("audit", printable(f"--cases: {e} (nothing written)"))


def _change_lines(looked: tuple[LookChanges, str] | None) -> None:
    """The summary's lead with ``--cases``: what the look opened, reopened and changed since the last look."""
    if looked is None:
        return
    from analyzer.desk.cases import change_lines
    from analyzer.problems import printable

    for line in change_lines(*looked):
        click.echo(printable(line))
