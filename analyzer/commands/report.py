"""``analyzer report``: write one HTML page: a hand's replay, a player's page or a pair's page."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import orjson

from analyzer.commands.common import (
    decisions_store_option,
    fail,
    max_line_option,
    open_decision_store,
    paths_argument,
    refuse_inputs,
    resolve_paths,
)

if TYPE_CHECKING:
    import pandas as pd

    from analyzer.analysis.store import Store
    from analyzer.validate import Checked


def analyse_if_available(items: list[Checked], samples: int | None, seed: int, store: Store | None = None
                         ) -> pd.DataFrame | None:
    """The decision rows of ``items`` when the decision analysis is installed; None otherwise, and the
    pages render without options and regret. With ``store``: its rows for the hands it holds (they
    must be the same hands, and the store's settings are used), the others analysed."""
    if not items or find_spec("analyzer.analysis.decisions") is None:
        return None
    from analyzer.analysis.decisions import analyse

    if store is not None:
        from dataclasses import replace

        from analyzer.analysis.store import StoreError, collect_rows

        settings = store.settings if samples is None else replace(store.settings, samples=samples)
        if seed != settings.seed:
            settings = replace(settings, seed=seed)
        if not any(str(it.hand_id) in store.hands for it in items):
            fail("report", f"{store.path} holds none of the hands of this page: it was written from other logs")
        try:
            return collect_rows(items, settings, store=store, reasons=True, subset=True)
        except StoreError as e:
            fail("report", str(e))

    kw: dict[str, Any] = {"seed": seed}
    if samples is not None:
        kw["samples"] = samples
    return analyse(items, **kw)


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


def _write_hand(files: list[str], hand_id: str, out: str, lang: str, samples: int | None, seed: int,
                max_line_bytes: int, store: Store | None = None) -> None:
    """The replay page of one hand of any game (its variant's hand view); an invalid hand is shown up to
    its first illegal action, with its problems marked there."""
    from analyzer.report.hand import write_hand_report
    from analyzer.validate import generate_checked

    found = next((it for it in generate_checked(files, max_line_bytes=max_line_bytes) if it.hand_id == hand_id), None)
    if found is None:
        raise click.BadParameter(f"no hand {hand_id!r} in the input", param_hint="--hand")
    if found.variant is None:
        raise click.ClickException(f"hand {hand_id!r} ({found.file}:{found.line}) is not a readable record; "
                                   f"`analyzer validate` explains why")
    decisions = analyse_if_available([found], samples, seed, store) if found.ok else None
    try:
        write_hand_report(out, found.record, decisions=decisions, lang=lang, problems=found.check.problems)
    except ValueError as e:
        raise click.ClickException(str(e)) from e
    if not found.ok:
        click.echo(f"hand {hand_id!r} has {len(found.check.problems)} problem(s); the page replays it up to the "
                   f"first illegal action", err=True)


@click.command("report")
@paths_argument
@click.option("--hand", "hand_id", default=None, help="Replay this hand.")
@click.option("--player", default=None, help="A player's page (compared with everyone in PATHS).")
@click.option("--pair", default=None, metavar="A,B", help="A pair's page: who helped whom, signals, evidence.")
@click.option("--audit", "audit_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="audit.json whose entry for --pair supplies the signals and evidence.")
@click.option("--out", "-o", "out", type=click.Path(dir_okay=False), default="report.html", show_default=True,
              help="The HTML file to write.")
@click.option("--lang", type=click.Choice(["en", "zh"]), default="en", show_default=True, help="Page language.")
@click.option("--samples", type=click.IntRange(min=1), default=None,
              help="Rollouts per option for the decision analysis (its default when absent).")
@click.option("--seed", type=int, default=None, help="Seed of the decision analysis [default: 0, or the store's].")
@decisions_store_option
@max_line_option
def command(paths: tuple[str, ...], hand_id: str | None, player: str | None, pair: str | None,
            audit_file: str | None, out: str, lang: str, samples: int | None, seed: int | None, store_path: str | None,
            max_line_bytes: int) -> None:
    """Write one self-contained HTML page about the hands in PATHS: a hand of any game (--hand; an invalid one
    up to its first illegal action), or a player's or a pair's page (valid hands only)."""
    from analyzer.validate import generate_valid

    store = open_decision_store("report", store_path) if store_path is not None else None
    if seed is None:
        seed = store.settings.seed if store is not None else 0

    if sum(x is not None for x in (hand_id, player, pair)) != 1:
        raise click.UsageError("give exactly one of --hand, --player, --pair")
    files = resolve_paths(paths)
    refuse_inputs([out, *([audit_file] if audit_file else [])], files)
    problems: list[Any] = []
    if hand_id is not None:
        _write_hand(files, hand_id, out, lang, samples, seed, max_line_bytes, store)
        click.echo(out)
        return
    items = generate_valid(files, problems, max_line_bytes=max_line_bytes)
    if player is not None:
        from analyzer.report.player import write_player_report

        room = list(items)
        if not any(player in _players_of(it) for it in room):
            raise click.BadParameter(f"player {player!r} sat in no valid hand", param_hint="--player")
        decisions = analyse_if_available(room, samples, seed, store)
        if decisions is None:
            raise click.ClickException("the player page needs the decision analysis (analyzer.analysis.decisions)")
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
        write_pair_report(out, a, b, decisions=analyse_if_available(together, samples, seed, store),
                          entry=_audit_entry(audit_file, a, b), records=together, lang=lang)
    if problems:
        click.echo(f"{len({(p.file, p.line) for p in problems})} invalid hand(s) left out; "
                   f"`analyzer validate` explains them", err=True)
    click.echo(out)
