"""``analyzer players``: the per-player table (skill with its interval, the figures behind it, the level/partner signal)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from analyzer.commands.common import max_line_option, paths_argument
from analyzer.commands.decisions import analyse_paths, dd_samples_option, max_samples_option, noise_option, \
    policy_option, samples_option, seed_option

if TYPE_CHECKING:
    import pandas as pd

#: Columns the per-player table reads from decision rows (see docs/design.md).
DECISION_COLUMNS = ("hand_id", "player", "seat", "chosen", "options", "regret", "think_ms", "difficulty",
                    "p0", "p1", "p2", "p3")


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

    # decision files and logs may be mixed: the rows of both are put together
    parquets = [p for p in paths if p.endswith(".parquet")]
    logs = tuple(p for p in paths if not p.endswith(".parquet"))
    frames = [_read_decisions(p) for p in parquets]
    if logs:
        frames.append(analyse_paths(logs, samples=samples, dd_samples=dd_samples, seed=seed, noise=noise,
                                    policy=policy, max_line_bytes=max_line_bytes, reasons=False,
                                    max_samples=max_samples)[0])
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    try:
        table = player_table(frame)
    except (KeyError, ValueError, TypeError, IndexError) as e:  # rows that are not decision rows
        raise click.UsageError(f"not decision rows written by `analyzer decisions`: {e}") from e
    if fmt == "csv":
        sys.stdout.write(table.to_csv(index=False))
    elif fmt == "json":
        sys.stdout.write(table.to_json(orient="records", indent=2) + "\n")
    elif table.empty:
        click.echo("no decisions to analyse (only hands of standard 憋七 are analysed decision by decision)")
    else:
        click.echo(MEANING)
        click.echo(table.to_string(index=False, float_format=lambda x: f"{x:.3g}"))


def _read_decisions(path: str) -> pd.DataFrame:
    """A decision file of `analyzer decisions`; any other file is a usage error (exit 2), not a traceback."""
    import pandas as pd

    try:
        frame = pd.read_parquet(path)
    except (OSError, ValueError) as e:
        raise click.UsageError(f"cannot read decision rows from {path}: {e}") from e
    except Exception as e:  # pyarrow's own errors (ArrowInvalid is a ValueError; others are not)
        raise click.UsageError(f"cannot read decision rows from {path}: {e}") from e
    missing = [c for c in DECISION_COLUMNS if c not in frame.columns]
    if missing:
        raise click.UsageError(f"{path} is not a decision file of `analyzer decisions`: it lacks the column(s) "
                               f"{', '.join(missing)}")
    return frame
