"""``analyzer report``: write one HTML page: a hand's replay, a player's page or a pair's page."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from analyzer.commands.common import (
    counted,
    exit_on_read_errors,
    dd_samples_option,
    decisions_store_option,
    fail,
    help_epilog,
    lang_option,
    max_line_option,
    max_samples_option,
    open_decision_store,
    out_option,
    paths_argument,
    refuse_inputs,
    resolve_paths,
    samples_option,
    seed_option,
    store_settings,
)
from analyzer.problems import printable

if TYPE_CHECKING:
    import pandas as pd

    from analyzer.analysis.execute import Settings
    from analyzer.analysis.store import Store
    from analyzer.progress import Progress
    from analyzer.validate import Checked


def analyse_if_available(items: list[Checked], samples: int, seed: int, dd_samples: int | None = None,
                         bar: Progress | None = None, max_samples: int | None = None,
                         store: tuple[Store, Settings] | None = None) -> pd.DataFrame | None:
    """The decision rows of ``items`` when the decision analysis is installed; None otherwise, and the
    pages render without options and regret. ``bar`` shows the analysis (a known total: ``items``).
    ``store`` (a decision store and the settings to read it with): its rows for the hands it holds
    (they must be the same hands), the others analysed."""
    if not items or find_spec("analyzer.analysis.decisions") is None:
        return None
    from analyzer.analysis.decisions import analyse

    if store is not None and not any(_has_decisions(it) for it in items):
        store = None  # a page of hands that have no decision rows (信阳黑七, 借牌): no store holds any, none is read
    if store is not None:
        from analyzer.analysis.store import StoreError, collect_rows

        st, settings = store
        if not st.hands:  # what `decisions` writes for logs of no standard hand: "other logs" would mislead
            fail("report", f"{st.path} is an empty decision store: it holds no hand (the logs it was written from had "
                           f"no hand of standard 憋七); leave out --decisions to analyse this page's hands, or write "
                           f"the store from these logs (analyzer decisions LOGS -o STORE)")
        if not any(str(it.hand_id) in st.hands for it in items):
            fail("report", f"{st.path} holds none of the hands of this page: it was written from other logs")
        try:
            return collect_rows(items, settings, store=st, reasons=True, subset=True,
                                on_progress=bar.phase("analysing", len(items)) if bar is not None else None)
        except StoreError as e:
            if bar is not None:
                bar.close()
            fail("report", str(e))

    kw: dict[str, Any] = {"seed": seed, "samples": samples}
    if dd_samples is not None:
        kw["dd_samples"] = dd_samples
    if max_samples is not None:
        kw["max_samples"] = max_samples
    tick = bar.phase("analysing", len(items)) if bar is not None else None
    return analyse(items, on_progress=tick, **kw)


def _has_decisions(item: Checked) -> bool:
    """Whether the hand's game has a decision analysis (a store can hold its rows)."""
    from analyzer.variants import registry

    game = registry().get(item.variant or "")
    return game is not None and game.offers.decisions is not None


def _players_of(item: Checked) -> list[str]:
    return list(getattr(item.record, "players", []))


def _audit_entry(path: str | None, a: str, b: str, together: list[Checked]) -> dict[str, Any] | None:
    """The pair's entry of the --audit file (:func:`analyzer.audit.read.pair_entry`), None without one; a file that
    is not the pair's audit is a usage error of --audit, and the reader's warnings go to standard error."""
    if path is None:
        return None
    from analyzer.audit.read import AuditFileError, pair_entry

    try:
        return pair_entry(path, a, b, together, warn=lambda said: click.echo(f"report: {said}", err=True))
    except AuditFileError as e:
        raise click.BadParameter(str(e), param_hint="--audit") from e


def _pair_hands(value: str, items: Iterable[Checked]) -> tuple[str, str, list[Checked]]:
    """``A,B`` as two ids and the valid hands where both sat. Ids may hold commas or spaces: every comma
    is tried as the separator (and the plain split with spaces trimmed), and the one whose two ids sat
    together in the logs wins. Only those hands are kept."""
    cuts = [(value[:i], value[i + 1:]) for i, ch in enumerate(value) if ch == ","]
    names = [x.strip() for x in value.split(",")]
    if len(names) == 2:
        cuts.append((names[0], names[1]))
    cuts = [c for c in dict.fromkeys(cuts) if c[0] and c[1] and c[0] != c[1]]
    if not cuts:
        raise click.BadParameter("expected two different player ids as A,B", param_hint="--pair")
    together: dict[tuple[str, str], list[Checked]] = {c: [] for c in cuts}
    for it in items:
        seated = set(_players_of(it))
        for c in cuts:
            if c[0] in seated and c[1] in seated:
                together[c].append(it)
    best = max(cuts, key=lambda c: len(together[c]))
    return best[0], best[1], together[best]


def _write_hand(files: list[str], hand_id: str, out: str, lang: str, samples: int, max_samples: int,
                dd_samples: int, seed: int, max_line_bytes: int, bar: Progress,
                store: tuple[Store, Settings] | None = None) -> None:
    """The replay page of one hand of any game (its variant's hand view); an invalid hand is shown up to
    its first illegal action, with its problems marked there."""
    from analyzer.report.hand import write_hand_report
    from analyzer.validate import generate_checked

    found = None
    again: list[str] = []  # where else the id is used (the validator calls those duplicate-hand-id)
    unreadable: list[Any] = []
    total = bar.count_input(files)  # every hand is read (a second use of the id is an error too)
    for it in counted(generate_checked(files, max_line_bytes=max_line_bytes), bar.phase("replaying", total)):
        if it.hand_id == hand_id:  # read on: a bad path later is an error too
            if found is None:
                found = it
            else:
                again.append(f"{it.file}:{it.line}")
        unreadable.extend(p for p in it.check.problems if p.code == "io-error")
    exit_on_read_errors(unreadable)
    if found is None:
        raise click.BadParameter(f"no hand {hand_id!r} in the input", param_hint="--hand")
    if found.variant is None:
        why = "; ".join(f"[{p.code}] {p.message}" for p in found.check.problems[:3])
        more = f" (and {len(found.check.problems) - 3} more)" if len(found.check.problems) > 3 else ""
        raise click.UsageError(printable(f"hand {hand_id!r} ({found.file}:{found.line}) is not a record a page can "
                                         f"replay: {why or 'its shape is not a log record'}{more}"))
    decisions = analyse_if_available([found], samples, seed, dd_samples, bar, max_samples, store) if found.ok else None
    wrote = bar.done("writing", 1, "files")
    try:
        write_hand_report(out, found.record, decisions=decisions, lang=lang, problems=found.check.problems)
        wrote()
    except ValueError as e:  # a hand no page can show: a usage error, with where it is and what the validator says
        said = "; ".join(f"[{p.code}] {p.message}" for p in found.check.problems[:3])
        raise click.UsageError(printable(f"{e} ({found.file}:{found.line}{': ' + said if said else ''})")) from e
    bar.close()
    if again:
        click.echo(printable(f"hand id {hand_id!r} is used {1 + len(again)} times; the page shows the first, "
                             f"{found.file}:{found.line} (also at {', '.join(again[:3])}{', ...' if len(again) > 3 else ''})"),
                   err=True)
    if not found.ok:
        click.echo(printable(f"hand {hand_id!r} has {len(found.check.problems)} problem(s), marked where they "
                             f"happen; its replay ends where the validator's does"), err=True)


def _once(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> str | None:
    """A click callback: the option's one value (None when not given); given twice it is a usage error, not the last
    value kept without a word (a page shows one hand, one player or one pair)."""
    if len(value) > 1:
        shown = ", ".join(repr(v) for v in value[:3]) + (", ..." if len(value) > 3 else "")
        what = {"hand_id": "hand", "audit_file": "audit file"}.get(param.name or "", param.name)
        raise click.BadParameter(printable(f"given {len(value)} times ({shown}); give it once: a page shows one "
                                           f"{what}; run the command once per page"))
    return value[0] if value else None


@click.command("report", short_help="One HTML page: a hand's replay, a player or a pair.",
               epilog=help_epilog("analyzer report logs/ --pair p12,p14 --audit reports/demo/audit.json -o pair.html",
                                  "0: page written", "2: usage error (no such hand, player or pair; bad option; a "
                                  "decision store of other logs or settings)"))
@paths_argument
@click.option("--hand", "hand_id", multiple=True, callback=_once, help="Replay this hand.")
@click.option("--player", multiple=True, callback=_once, help="A player's page (compared with everyone in PATHS).")
@click.option("--pair", multiple=True, callback=_once, metavar="A,B",
              help="A pair's page: who helped whom, signals, evidence.")
@click.option("--audit", "audit_file", type=click.Path(exists=True, dir_okay=False), multiple=True, callback=_once,
              help="audit.json whose entry for --pair supplies the signals and evidence.")
@out_option("The HTML file to write.", required=False, default="report.html")
@lang_option
@samples_option
@max_samples_option
@dd_samples_option
@seed_option
@decisions_store_option
@max_line_option
@click.pass_context
def command(ctx: click.Context, paths: tuple[str, ...], hand_id: str | None, player: str | None, pair: str | None,
            audit_file: str | None, out: str, lang: str, samples: int, max_samples: int, dd_samples: int, seed: int,
            store_path: str | None, max_line_bytes: int) -> None:
    """Write one self-contained HTML page about the hands in PATHS: a hand of any game (--hand; an invalid one
    up to its first illegal action), or a player's or a pair's page (valid hands only)."""
    from analyzer.analysis.execute import Settings
    from analyzer.progress import Progress
    from analyzer.validate import generate_valid

    store = None
    if store_path is not None:  # the store's settings, but for the options given on the command line
        st = open_decision_store("report", store_path)
        asked = Settings.of(samples, dd_samples, seed, max_samples=max_samples)
        store = (st, store_settings(ctx, st, asked, {p: p for p in ("samples", "dd_samples", "seed", "max_samples")}))
    if sum(x is not None for x in (hand_id, player, pair)) != 1:
        raise click.UsageError("give exactly one of --hand, --player, --pair")
    if audit_file is not None and pair is None:  # a hand's or player's page has no use for it: not ignored unsaid
        raise click.UsageError("--audit goes with --pair (the audit's entry for the pair: its signals and evidence); "
                               f"a {'hand' if hand_id is not None else 'player'}'s page does not read it")
    files = resolve_paths(paths)
    refuse_inputs([out], [*files, *([store_path] if store_path else [])])
    if audit_file and Path(audit_file).exists() and any(f != "-" and os.path.samefile(f, audit_file) for f in files):
        raise click.BadParameter(f"{audit_file} is one of the logs; give the audit.json that `analyzer audit` wrote",
                                 param_hint="--audit")
    if audit_file and Path(out).exists() and Path(audit_file).exists() and os.path.samefile(out, audit_file):
        raise click.UsageError(f"{out}: refusing to overwrite the --audit file")
    problems: list[Any] = []
    with Progress("report") as bar:  # closed on errors too: the message then has the line to itself
        if hand_id is not None:
            _write_hand(files, hand_id, out, lang, samples, max_samples, dd_samples, seed, max_line_bytes, bar, store)
            _announce(out)
            return
        total = bar.count_input(files)
        items = counted(generate_valid(files, problems, max_line_bytes=max_line_bytes), bar.phase("replaying", total))
        if player is not None:
            from analyzer.report.player import write_player_report

            room = list(items)
            exit_on_read_errors(problems)
            if not any(player in _players_of(it) for it in room):
                raise click.BadParameter(f"player {player!r} sat in no valid hand", param_hint="--player")
            try:
                decisions = analyse_if_available(room, samples, seed, dd_samples, bar, max_samples, store)
            except ValueError as e:  # e.g. a room of a variant without a decision analysis
                raise click.UsageError(f"no player page for this room: {e}") from e
            if decisions is None or decisions.empty or player not in set(decisions["player"]):
                raise click.UsageError(f"no decisions of {player!r} to show: the player page needs hands of "
                                       f"standard 憋七 (other variants have no decision analysis)")
            wrote = bar.done("writing", 1, "files")
            write_player_report(out, player, decisions, records=[it for it in room if player in _players_of(it)],
                                lang=lang)
            wrote()
        else:
            import pandas as pd

            from analyzer.audit.outcomes import SEATING_COLUMNS, outcome_row, pair_outcomes
            from analyzer.report.pair import write_pair_report

            seating: list[tuple[Any, ...]] = []  # every hand the audit would read: the pair's results against the room's

            def seated(its: Iterable[Checked]) -> Iterator[Checked]:
                for it in its:
                    if audit_file is None and _has_decisions(it):
                        seating.append(outcome_row(it))
                    yield it

            a, b, together = _pair_hands(pair or "", seated(items))
            exit_on_read_errors(problems)
            if not together:
                raise click.BadParameter(f"{a!r} and {b!r} never sat together in a valid hand", param_hint="--pair")
            entry = _audit_entry(audit_file, a, b, together)
            try:
                decisions = analyse_if_available(together, samples, seed, dd_samples, bar, max_samples, store)
            except ValueError as e:
                raise click.UsageError(f"no pair page for these hands: {e}") from e
            # without --audit the results together and apart come from these logs, as the audit's case file has them
            outcomes = pair_outcomes(pd.DataFrame(seating, columns=list(SEATING_COLUMNS)), a, b) if seating else None
            wrote = bar.done("writing", 1, "files")
            write_pair_report(out, a, b, decisions=decisions, entry=entry, records=together, lang=lang,
                              outcomes=outcomes)
            wrote()
    if problems:
        click.echo(f"{len({(p.file, p.line) for p in problems})} invalid hand(s) left out; "
                   f"`analyzer validate` explains them", err=True)
    _announce(out)


def _announce(out: str) -> None:
    """The page's path on standard output, unless the page itself went there (``-o -``)."""
    from analyzer.logs import descriptor_of

    if descriptor_of(out) != 1:
        click.echo(printable(out))  # a path given with control characters does not drive the terminal
