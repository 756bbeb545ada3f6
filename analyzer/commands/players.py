"""``analyzer players``: the per-player table (skill with its interval, the figures behind it, the level/partner signal)."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from analyzer.commands.common import (
    dask_option,
    dd_samples_option,
    decisions_store_option,
    execution_for,
    fail,
    help_epilog,
    settings_given,
    jobs_option,
    max_line_option,
    max_samples_option,
    open_decision_store,
    out_option,
    refuse_inputs,
    resolve_paths,
    samples_option,
    seed_option,
    store_settings,
)
from analyzer.commands.decisions import analyse_paths, noise_option, policy_option

if TYPE_CHECKING:
    import pandas as pd

#: The analysis settings' options of this command, each named as its Settings field.
SETTINGS_OPTIONS = {p: p for p in ("samples", "dd_samples", "seed", "noise", "policy", "max_samples")}
#: The output formats; the first is the default of an output whose name does not say.
FORMATS = ("table", "csv", "json")
#: An output name's ending (lower case) -> the format a file of that name holds.
FORMAT_OF_SUFFIX = {".csv": "csv", ".json": "json"}
#: The short table (the table format's default; ``--columns all``: every column of the player table) and what each
#: of its columns shows: the help lists these.
SHORT_COLUMNS: dict[str, str] = {
    "player": "the player's id",
    "skill": "how closely the player's choices follow the options' values (0 = random, higher = better)",
    "95% interval": "of skill",
    "hands": "hands played (valid hands of standard 憋七)",
    "flag": "yes: plays better than their level, or than without one partner, past chance (signal q <= 0.01)",
    "signal q": "that signal's Benjamini-Hochberg q over the table's players (small: strong)",
    "flagged partner": "for a flagged player, the co-player they play best with against their hands without them "
                       "(the partner part of the signal; '-' otherwise)",
    "z": "that difference as a z",
    "together": "hands with that partner",
}
COLUMN_SETS = ("short", "all")


def _number(x: float) -> str:
    """A figure of the table: three significant digits, large ones whole (1470, not 1.47e+03)."""
    return f"{x:.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def short_table(table: pd.DataFrame) -> pd.DataFrame:
    """The player table's short form (:data:`SHORT_COLUMNS`), its figures as text, in the table's order."""
    import math
    import numbers

    import pandas as pd

    def fig(x: object) -> str:
        ok = isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(float(x))
        return _number(float(x)) if ok else "-"  # type: ignore[arg-type]

    flagged = table["flag"].astype(bool)
    partner = [str(p) if f and isinstance(p, str) and p else "-" for p, f in zip(table["partner"], flagged)]
    shown = [p != "-" for p in partner]
    return pd.DataFrame({
        "player": table["player"].astype(object),
        "skill": [fig(x) for x in table["skill"]],
        "95% interval": [f"{fig(lo)}..{fig(hi)}" if fig(lo) != "-" else "-"
                         for lo, hi in zip(table["skill_lo"], table["skill_hi"])],
        "hands": [str(int(h)) for h in table["hands"]],
        "flag": ["yes" if f else "no" for f in flagged],
        "signal q": [f"{float(q):.1e}" if fig(q) != "-" and 0 < float(q) < 1e-3 else fig(q) for q in table["signal_q"]],
        "flagged partner": partner,
        "z": [fig(z) if s else "-" for z, s in zip(table["partner_z"], shown)],
        "together": [str(int(n)) if s else "-" for n, s in zip(table["partner_hands"], shown)],
    }, columns=list(SHORT_COLUMNS))


def _row_of(frame: pd.DataFrame, e: Exception) -> str:
    """"hand H, move M: " of the row whose options an OptionsError names (its first such row), else ""."""
    import numpy as np
    import pandas as pd

    from analyzer.analysis.options import OptionsError
    from analyzer.problems import printable

    if not isinstance(e, OptionsError) or "options" not in frame or "hand_id" not in frame:
        return ""
    if e.row is not None:
        hit = np.array([e.row]) if 0 <= e.row < len(frame) else np.zeros(0, np.int64)
    elif e.text is not None:
        hit = np.flatnonzero(frame["options"].to_numpy(object) == e.text)
    else:
        return ""
    if not len(hit):
        return ""
    row = frame.iloc[int(hit[0])]
    move = f", move {int(row['action']) + 1}" if "action" in frame and pd.notna(row["action"]) else ""
    return printable(f"hand {row['hand_id']}{move}: ")

def output_format(fmt: str | None, out: str | None) -> str:
    """The format to write: ``fmt`` (--format) when given, else the one ``out``'s name says (``.csv``, ``.json``),
    else the table. A --format other than the one a ``.csv`` / ``.json`` name says is a usage error: a file named
    ``.csv`` holds CSV (a spreadsheet or ``pandas.read_csv`` opens it as such), written by ``logs.csv_text``."""
    suffix = Path(out).suffix if out else ""
    named = FORMAT_OF_SUFFIX.get(suffix.lower())
    if fmt is None:
        return named or FORMATS[0]
    if named is not None and fmt != named:
        raise click.UsageError(f"--format {fmt} with -o {out}: a {suffix} file holds {named.upper()}; give "
                               f"--format {named} (or no --format), or another name")
    return fmt


PLAYERS_HELP = "\n".join([
    "Per-player table from the logs in PATHS (with --decisions STORE: its rows, checked against the logs), from a "
    "decision store alone (--decisions STORE, no PATHS), or from decision files/stores given as PATHS.", "",
    "The table (the default) shows, highest skill first:", "", "\b",
    *(textwrap.fill(f"{name}: {meaning}", 76, initial_indent="  ", subsequent_indent="      ")
      for name, meaning in SHORT_COLUMNS.items()), "",
    "--columns all shows every column of the player table (dd_excess, level_z, partner_z, think times, ...: "
    "docs/reference/player-table.md), as csv and json write them. How skill and the signal are "
    "measured: docs/methods/skill.md."])


@click.command("players", short_help="Per-player skill (95% interval), plays-above-level signal.", help=PLAYERS_HELP,
               epilog=help_epilog("analyzer players logs/ -o players.csv   (CSV: the format follows a .csv or .json "
                                  "name)", "0: table written", "2: usage error (no input, unreadable decisions file, a "
                                  "decision store of other logs or settings, a --format other than the -o name's)"))
@click.argument("paths", nargs=-1)
@click.option("--format", "fmt", type=click.Choice(list(FORMATS)), default=None,
              help="table for people, csv or json for programs. Default: the -o FILE's name says (.csv: csv, .json: "
                   "json), else table. A --format other than a .csv or .json name's is refused (exit 2): a file named "
                   ".csv holds CSV.")
@click.option("--columns", type=click.Choice(list(COLUMN_SETS)), default="short", show_default=True,
              help="The table's columns: short, the columns above; all, every column of the player table (csv and "
                   "json always hold every column).")
@out_option("Write the table to this file instead of standard output.", required=False)
@samples_option
@max_samples_option
@dd_samples_option
@seed_option
@noise_option
@policy_option
@click.option("--ref-weight", default="0", show_default=True,
              help="Weight of the reference policy's judgement in the loss skill is measured in: a number in [0, 1], "
                   "or 'auto' (fitted on the room). 0 measures on the evaluator's values alone.")
@decisions_store_option
@jobs_option
@dask_option
@max_line_option
@click.pass_context
def command(ctx: click.Context, paths: tuple[str, ...], fmt: str | None, columns: str, out: str | None,
            samples: int, max_samples: int, dd_samples: int, seed: int, noise: float, policy: str, ref_weight: str,
            store_path: str | None, jobs: int | None, dask_address: str | None, max_line_bytes: int) -> None:
    import pandas as pd

    from analyzer.analysis.execute import Settings
    from analyzer.analysis.players import MEANING, player_table
    from analyzer.analysis.sources import DecisionSources
    from analyzer.analysis.store import COMMON, looks_like_store, open_store
    from analyzer.running.collector import settle
    from analyzer.problems import printable

    settle()  # the imports are done: out of every collection from now on

    if not paths and store_path is None:
        raise click.UsageError("give the logs (PATHS), a decision store (--decisions STORE), or both")
    fmt = output_format(fmt, out)  # before any work: a contradiction is refused at once
    # decision files or stores (a *.parquet that is not Parquet is refused by _read_decisions), read as they are
    parquets = [p for p in paths if p.endswith(".parquet") or looks_like_store(p)]
    for p in parquets:  # the store's schema, a Parquet file of no rows: read as one, it gave an empty table, exit 0
        if Path(p).name == COMMON and not Path(p).is_dir():
            raise click.UsageError(f"{printable(p)} is a decision store's metadata file and holds no rows: name the "
                                   f"store's folder, {printable(str(Path(p).parent))}")
    logs = tuple(p for p in paths if p not in parquets)
    if out:  # the expanded inputs: a log found inside a folder counts too
        # a part given alone belongs to its store's folder: the folder's files are inputs too (a folder is a store by
        # its metadata file: one that merely holds a decision file, the current folder say, takes outputs)
        stores = [str(Path(p).parent) for p in parquets if p.endswith(".parquet") and (Path(p).parent / COMMON).is_file()]
        refuse_inputs([out], [*parquets, *stores, *(resolve_paths(logs) if logs else []),
                              *([store_path] if store_path else [])])
    try:
        weight = None if ref_weight == "auto" else float(ref_weight)
    except ValueError:
        raise click.UsageError(f"--ref-weight {ref_weight!r}: expected a number in [0, 1] or 'auto'") from None
    if weight is not None and not 0.0 <= weight <= 1.0:
        raise click.UsageError(f"--ref-weight {ref_weight!r}: expected a number in [0, 1] or 'auto'")
    # decision stores, their parts and decision files given as PATHS, and the logs: each file read once, one set of
    # settings, each hand from one input only (docs/analysis.md, "players")
    sources = DecisionSources()
    with _inputs():
        if store_path is not None and not logs:  # the store alone (or with other stores): one source among them
            sources.add_store(store_path, open_store(store_path))
        for p in parquets:
            sources.add(p)
    if logs:
        store = None
        if store_path is not None:  # the store's settings, but for the options given on the command line
            store = open_decision_store("players", store_path)
            asked = store_settings(ctx, store, Settings(samples, dd_samples, seed, noise, policy, max_samples),
                                   SETTINGS_OPTIONS)
        elif sources.settings is not None:  # the stores' settings, but for the options given on the command line
            asked = settings_given(ctx, sources.settings, Settings(samples, dd_samples, seed, noise, policy, max_samples),
                                   SETTINGS_OPTIONS)
        else:
            asked = Settings(samples, dd_samples, seed, noise, policy, max_samples)
        with _inputs():
            sources.check_settings(f"the logs ({' '.join(logs)})", asked)
        rows = analyse_paths(logs, samples=asked.samples, dd_samples=asked.dd_samples, seed=asked.seed,
                             noise=asked.noise, policy=asked.policy, max_line_bytes=max_line_bytes, reasons=False,
                             command="players", max_samples=asked.max_samples,
                             execution=execution_for(resolve_paths(logs), jobs, dask_address), store=store)[0]
        with _inputs():
            sources.add_frame(f"the logs ({' '.join(logs)})", rows)
    frames = sources.frames
    if not frames:  # only stores without a part (a day of no standard hand): their empty table, as for such logs
        from analyzer.analysis.decisions import analyse

        frames = [analyse([])]
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    try:
        table = player_table(frame, ref_weight=weight)
    except (KeyError, ValueError, TypeError, IndexError) as e:  # rows that are not decision rows
        if not parquets and store_path is None:  # every row computed here from the logs: a bug (exit 3), not input
            raise
        raise click.UsageError(f"not decision rows written by `analyzer decisions`: {_row_of(frame, e)}{e}") from e
    if len(table) and "level_z" in table and table["level_z"].isna().all():  # said once, for every format
        from analyzer.analysis.players import MIN_PEERS

        click.echo(f"note: fewer than {MIN_PEERS} players with enough decisions: no 'better than their level' "
                   "reading (level_z empty; signal_p rests on the partner part, 1 when that is not read either)",
                   err=True)
    if fmt == "csv":
        from analyzer.logs import csv_text  # ids that start like a formula get an apostrophe

        text = csv_text(table)
    elif fmt == "json":
        text = table.to_json(orient="records", indent=2) + "\n"
    elif table.empty:
        text = "no decisions to analyse (only hands of standard 憋七 are analysed decision by decision)\n"
    else:
        from pandas.api.types import is_bool_dtype, is_numeric_dtype

        from analyzer.problems import printable  # player ids are the logs' text: no terminal control in the table

        shown = short_table(table) if columns == "short" else table.copy()
        for c in shown.columns:
            if not (is_numeric_dtype(shown[c]) or is_bool_dtype(shown[c])):  # names: object or string dtype
                shown[c] = shown[c].astype(object).map(lambda v: printable(v) if isinstance(v, str) else v)
        text = MEANING + "\n" + shown.to_string(index=False, float_format=_number) + "\n"
    if out:
        from analyzer.logs import atomic_write_bytes

        atomic_write_bytes(out, text.encode())
    else:
        sys.stdout.write(text)



@contextmanager
def _inputs() -> Iterator[None]:
    """The errors of putting the inputs together as the command says them: a path that is not a decision file is a
    usage error; a store that cannot be read, or inputs that cannot go together, an error line (both exit 2)."""
    from analyzer.analysis.sources import NotDecisionFile, SourceError
    from analyzer.analysis.store import StoreError

    try:
        yield
    except NotDecisionFile as e:
        raise click.UsageError(str(e)) from e
    except (SourceError, StoreError) as e:
        fail("players", str(e))
