"""``analyzer report``: write one HTML page: a hand's replay, a player's page or a pair's page."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import orjson

from analyzer.commands.common import (
    counted,
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

    if store is not None:
        from analyzer.analysis.store import StoreError, collect_rows

        st, settings = store
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


def _players_of(item: Checked) -> list[str]:
    return list(getattr(item.record, "players", []))


def _audit_entry(path: str | None, a: str, b: str) -> dict[str, Any] | None:
    if path is None:
        return None
    try:
        audit = orjson.loads(Path(path).read_bytes())
    except (OSError, orjson.JSONDecodeError) as e:
        raise click.BadParameter(f"cannot read {path}: {e}", param_hint="--audit") from e
    for p in audit.get("pairs", []) if isinstance(audit, dict) else []:
        if isinstance(p, dict) and sorted(map(str, p.get("players", []))) == sorted([a, b]):
            return p
    return None


def _write_hand(files: list[str], hand_id: str, out: str, lang: str, samples: int, max_samples: int,
                dd_samples: int, seed: int, max_line_bytes: int, bar: Progress,
                store: tuple[Store, Settings] | None = None) -> None:
    """The replay page of one hand of any game (its variant's hand view); an invalid hand is shown up to
    its first illegal action, with its problems marked there."""
    from analyzer.report.hand import write_hand_report
    from analyzer.validate import generate_checked

    checked = counted(generate_checked(files, max_line_bytes=max_line_bytes), bar.phase("reading"))
    found = next((it for it in checked if it.hand_id == hand_id), None)
    if found is None:
        raise click.BadParameter(f"no hand {hand_id!r} in the input", param_hint="--hand")
    if found.variant is None:
        raise click.ClickException(f"hand {hand_id!r} ({found.file}:{found.line}) is not a readable record; "
                                   f"`analyzer validate` explains why")
    decisions = analyse_if_available([found], samples, seed, dd_samples, bar, max_samples, store) if found.ok else None
    bar.phase("writing")
    try:
        write_hand_report(out, found.record, decisions=decisions, lang=lang, problems=found.check.problems)
    except ValueError as e:
        raise click.ClickException(str(e)) from e
    bar.close()
    if not found.ok:
        click.echo(f"hand {hand_id!r} has {len(found.check.problems)} problem(s), marked where they happen; "
                   f"its replay ends where the validator's does", err=True)


@click.command("report", short_help="One HTML page: a hand's replay, a player or a pair.",
               epilog=help_epilog("analyzer report logs/ --pair p12,p14 --audit reports/demo/audit.json -o pair.html",
                                  "0: page written", "2: usage error (no such hand, player or pair; bad option; a "
                                  "decision store of other logs or settings)"))
@paths_argument
@click.option("--hand", "hand_id", default=None, help="Replay this hand.")
@click.option("--player", default=None, help="A player's page (compared with everyone in PATHS).")
@click.option("--pair", default=None, metavar="A,B", help="A pair's page: who helped whom, signals, evidence.")
@click.option("--audit", "audit_file", type=click.Path(exists=True, dir_okay=False), default=None,
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
    files = resolve_paths(paths)
    refuse_inputs([out, *([audit_file] if audit_file else [])], files)
    problems: list[Any] = []
    with Progress("report") as bar:  # closed on errors too: the message then has the line to itself
        if hand_id is not None:
            _write_hand(files, hand_id, out, lang, samples, max_samples, dd_samples, seed, max_line_bytes, bar, store)
            click.echo(out)
            return
        items = counted(generate_valid(files, problems, max_line_bytes=max_line_bytes), bar.phase("reading"))
        if player is not None:
            from analyzer.report.player import write_player_report

            room = list(items)
            if not any(player in _players_of(it) for it in room):
                raise click.BadParameter(f"player {player!r} sat in no valid hand", param_hint="--player")
            decisions = analyse_if_available(room, samples, seed, dd_samples, bar, max_samples, store)
            if decisions is None:
                raise click.ClickException("the player page needs the decision analysis (analyzer.analysis.decisions)")
            bar.phase("writing")
            write_player_report(out, player, decisions, records=[it for it in room if player in _players_of(it)],
                                lang=lang)
        else:
            from analyzer.report.pair import write_pair_report

            names = [x.strip() for x in (pair or "").split(",")]
            if len(names) != 2 or not all(names) or names[0] == names[1]:
                raise click.BadParameter("expected two different player ids as A,B", param_hint="--pair")
            a, b = names
            together = [it for it in items if {a, b} <= set(_players_of(it))]
            if not together:
                raise click.BadParameter(f"{a!r} and {b!r} never sat together in a valid hand", param_hint="--pair")
            decisions = analyse_if_available(together, samples, seed, dd_samples, bar, max_samples, store)
            bar.phase("writing")
            write_pair_report(out, a, b, decisions=decisions,
                              entry=_audit_entry(audit_file, a, b), records=together, lang=lang)
    if problems:
        click.echo(f"{len({(p.file, p.line) for p in problems})} invalid hand(s) left out; "
                   f"`analyzer validate` explains them", err=True)
    click.echo(out)
