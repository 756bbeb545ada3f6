"""``analyzer players``: the per-player table (skill with its interval, the figures behind it, the level/partner signal)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from analyzer.commands.common import (
    dask_option,
    dd_samples_option,
    decisions_store_option,
    execution_for,
    help_epilog,
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

#: Columns the per-player table reads from decision rows (see docs/design.md).
DECISION_COLUMNS = ("hand_id", "player", "seat", "chosen", "options", "regret", "think_ms", "difficulty",
                    "p0", "p1", "p2", "p3")


@click.command("players", short_help="Per-player skill (95% interval), plays-above-level signal.",
               epilog=help_epilog("analyzer players logs/ --format csv -o players.csv",
                                  "0: table written", "2: usage error (no input, unreadable decisions file, a "
                                  "decision store of other logs or settings)"))
@click.argument("paths", nargs=-1)
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True,
              help="table for people, csv or json for programs.")
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
def command(ctx: click.Context, paths: tuple[str, ...], fmt: str, out: str | None, samples: int, max_samples: int,
            dd_samples: int, seed: int, noise: float, policy: str, ref_weight: str, store_path: str | None,
            jobs: int | None, dask_address: str | None, max_line_bytes: int) -> None:
    """Per-player table from the logs in PATHS (with --decisions STORE: its rows, checked against the logs),
    from a decision store alone (--decisions STORE, no PATHS), or from decision files/stores given as PATHS.

    \b
    skill: how closely a player's choices follow the options' values (Regan-style choice model fitted
    by maximum likelihood, read on a fixed reference set of decisions; 0 = random, higher = better),
    with its 95% interval skill_lo..skill_hi.
    Behind it: hands, decisions, match_rate, mean_loss, mean_regret. Separately, "plays better than
    their level / than without the partner": dd_z, level_z, partner_z, signal_p, signal_q and flag
    (see docs/analysis.md).
    """
    import pandas as pd

    from analyzer.analysis.execute import Settings
    from analyzer.analysis.players import MEANING, player_table
    from analyzer.analysis.store import looks_like_store, read_rows
    from analyzer.collector import settle

    settle()  # the imports are done: out of every collection from now on

    if not paths and store_path is None:
        raise click.UsageError("give the logs (PATHS), a decision store (--decisions STORE), or both")
    # decision files or stores (a *.parquet that is not Parquet is refused by _read_decisions), read as they are
    parquets = [p for p in paths if p.endswith(".parquet") or looks_like_store(p)]
    logs = tuple(p for p in paths if p not in parquets)
    if out:  # the expanded inputs: a log found inside a folder counts too
        refuse_inputs([out], [*parquets, *(resolve_paths(logs) if logs else [])])
    try:
        weight = None if ref_weight == "auto" else float(ref_weight)
    except ValueError:
        raise click.UsageError(f"--ref-weight {ref_weight!r}: expected a number in [0, 1] or 'auto'") from None
    if weight is not None and not 0.0 <= weight <= 1.0:
        raise click.UsageError(f"--ref-weight {ref_weight!r}: expected a number in [0, 1] or 'auto'")
    # decision files and logs may be mixed: the rows of both are put together
    frames = [_read_decisions(p) for p in parquets]
    if logs:
        store = None
        if store_path is not None:  # the store's settings, but for the options given on the command line
            store = open_decision_store("players", store_path)
            asked = store_settings(ctx, store, Settings(samples, dd_samples, seed, noise, policy, max_samples),
                                   {p: p for p in ("samples", "dd_samples", "seed", "noise", "policy", "max_samples")})
            samples, dd_samples, seed, noise, policy = (asked.samples, asked.dd_samples, asked.seed, asked.noise,
                                                        asked.policy)
            max_samples = asked.max_samples  # type: ignore[assignment]
        frames.append(analyse_paths(logs, samples=samples, dd_samples=dd_samples, seed=seed, noise=noise,
                                    policy=policy, max_line_bytes=max_line_bytes, reasons=False, command="players",
                                    max_samples=max_samples,
                                    execution=execution_for(resolve_paths(logs), jobs, dask_address),
                                    store=store)[0])
    elif store_path is not None:
        frames.append(read_rows(open_decision_store("players", store_path)))
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    try:
        table = player_table(frame, ref_weight=weight)
    except (KeyError, ValueError, TypeError, IndexError) as e:  # rows that are not decision rows
        raise click.UsageError(f"not decision rows written by `analyzer decisions`: {e}") from e
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

        shown = table.copy()
        for c in shown.columns:
            if not (is_numeric_dtype(shown[c]) or is_bool_dtype(shown[c])):  # names: object or string dtype
                shown[c] = shown[c].astype(object).map(lambda v: printable(v) if isinstance(v, str) else v)
        text = MEANING + "\n" + shown.to_string(index=False, float_format=lambda x: f"{x:.3g}") + "\n"
    if out:
        from analyzer.logs import atomic_write_bytes

        atomic_write_bytes(out, text.encode())
    else:
        sys.stdout.write(text)


def _read_decisions(path: str) -> pd.DataFrame:
    """A decision file of `analyzer decisions`; any other file is a usage error (exit 2), not a traceback."""
    import pandas as pd

    try:
        frame = pd.read_parquet(path)
    except Exception as e:  # noqa: BLE001 - pyarrow's errors are of many kinds; any is "not a decision file"
        raise click.UsageError(f"cannot read decision rows from {path}: {e}") from e
    missing = [c for c in DECISION_COLUMNS if c not in frame.columns]
    if missing:
        raise click.UsageError(f"{path} is not a decision file of `analyzer decisions`: it lacks the column(s) "
                               f"{', '.join(missing)}")
    return frame
