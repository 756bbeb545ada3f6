"""``analyzer players``: the per-player table (skill with its interval, the figures behind it, the level/partner signal)."""

from __future__ import annotations

import sys

import click

from analyzer.commands.common import max_line_option, paths_argument
from analyzer.commands.decisions import analyse_paths, dd_samples_option, max_samples_option, noise_option, \
    policy_option, samples_option, seed_option


@click.command("players")
@paths_argument
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
@samples_option
@max_samples_option
@dd_samples_option
@seed_option
@noise_option
@policy_option
@max_line_option
def command(paths: tuple[str, ...], fmt: str, samples: int, max_samples: int, dd_samples: int, seed: int, noise: float,
            policy: str, max_line_bytes: int) -> None:
    """Per-player table from the logs in PATHS, or from decision files (*.parquet) written by `decisions`.

    \b
    skill: how closely a player's choices follow the options' values (Regan-style choice model fitted
    by maximum likelihood; 0 = random, higher = better), with its 95% interval skill_lo..skill_hi.
    Behind it: hands, decisions, match_rate, mean_loss, mean_regret. Separately, "plays better than
    their level / than without the partner": dd_z, level_z, partner_z, signal_p, signal_q and flag
    (see docs/analysis.md).
    """
    import pandas as pd

    from analyzer.analysis.players import MEANING, player_table

    if all(p.endswith(".parquet") for p in paths):
        try:
            frame = pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)
        except (OSError, ValueError) as e:
            raise click.UsageError(f"cannot read decision rows: {e}") from e
    else:
        frame, _ = analyse_paths(paths, samples=samples, dd_samples=dd_samples, seed=seed, noise=noise,
                                 policy=policy, max_line_bytes=max_line_bytes, reasons=False,
                                 max_samples=max_samples)
    table = player_table(frame)
    if fmt == "csv":
        sys.stdout.write(table.to_csv(index=False))
    elif fmt == "json":
        sys.stdout.write(table.to_json(orient="records", indent=2) + "\n")
    elif table.empty:
        click.echo("no decisions to analyse (only hands of standard 憋七 are analysed decision by decision)")
    else:
        click.echo(MEANING)
        click.echo(table.to_string(index=False, float_format=lambda x: f"{x:.3g}"))
