"""``analyzer players``: the per-player table (decisions, match rate, regret, accuracy, level, z-scores)."""

from __future__ import annotations

import sys

import click

from analyzer.commands.common import (
    dd_samples_option,
    help_epilog,
    max_line_option,
    out_option,
    paths_argument,
    refuse_inputs,
    samples_option,
    seed_option,
)
from analyzer.commands.decisions import analyse_paths, noise_option, policy_option


@click.command("players", short_help="Per-player match rate, regret and how unusual they are.",
               epilog=help_epilog("analyzer players logs/ --format csv -o players.csv",
                                  "0: table written", "2: usage error (no input, unreadable decisions file)"))
@paths_argument
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True,
              help="table for people, csv or json for programs.")
@out_option("Write the table to this file instead of standard output.", required=False)
@samples_option
@dd_samples_option
@seed_option
@noise_option
@policy_option
@max_line_option
def command(paths: tuple[str, ...], fmt: str, out: str | None, samples: int, dd_samples: int, seed: int, noise: float, policy: str,
            max_line_bytes: int) -> None:
    """Per-player statistics from the logs in PATHS, or from decision files (*.parquet) written by `decisions`."""
    import pandas as pd

    from analyzer.analysis.players import player_table

    if out:
        refuse_inputs([out], list(paths))
    if all(p.endswith(".parquet") for p in paths):
        try:
            frame = pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)
        except (OSError, ValueError) as e:
            raise click.UsageError(f"cannot read decision rows: {e}") from e
    else:
        frame, _ = analyse_paths(paths, samples=samples, dd_samples=dd_samples, seed=seed, noise=noise,
                                 policy=policy, max_line_bytes=max_line_bytes, reasons=False, command="players")
    table = player_table(frame)
    if fmt == "csv":
        text = table.to_csv(index=False)
    elif fmt == "json":
        text = table.to_json(orient="records", indent=2) + "\n"
    elif table.empty:
        text = "no decisions to analyse (only hands of standard 憋七 are analysed decision by decision)\n"
    else:
        text = table.to_string(index=False, float_format=lambda x: f"{x:.2f}") + "\n"
    if out:
        from analyzer.logs import atomic_write_bytes

        atomic_write_bytes(out, text.encode())
    else:
        sys.stdout.write(text)
