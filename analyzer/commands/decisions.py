"""``analyzer decisions``: one row per decision of every valid hand, written as Parquet for pandas."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from analyzer.analysis.decisions import DEFAULT_DD_SAMPLES, DEFAULT_MAX_SAMPLES, DEFAULT_NOISE, DEFAULT_POLICY, \
    DEFAULT_SAMPLES, POLICIES

from analyzer.commands.common import (
    FiniteFloatRange,
    end_progress,
    exit_on_read_errors,
    max_line_option,
    paths_argument,
    progress,
    refuse_inputs,
    resolve_paths,
)

if TYPE_CHECKING:
    import pandas as pd

samples_option = click.option("--samples", type=click.IntRange(min=1), default=DEFAULT_SAMPLES, show_default=True,
                              help="Hidden-hand deals per decision at least (own-information estimate).")
max_samples_option = click.option("--max-samples", type=click.IntRange(min=1), default=DEFAULT_MAX_SAMPLES,
                                  show_default=True,
                                  help="Adaptive sampling: up to this many deals where the chosen option is close "
                                       "to the best.")
dd_samples_option = click.option("--dd-samples", type=click.IntRange(min=0), default=DEFAULT_DD_SAMPLES, show_default=True,
                                 help="Rollouts per option on the true deal (double-dummy estimate).")
seed_option = click.option("--seed", type=int, default=0, show_default=True, help="Seed: same seed, same rows.")
noise_option = click.option("--noise", type=FiniteFloatRange(min=0), default=DEFAULT_NOISE, show_default=True,
                            help="Randomness of the reference policy in rollouts (0: deterministic).")
policy_option = click.option("--policy", type=click.Choice(list(POLICIES)), default=DEFAULT_POLICY,
                             show_default=True,
                             help="Reference policy of the rollouts: fast heuristic, or the strategy module's player.")


def analyse_paths(paths: tuple[str, ...], *, samples: int, dd_samples: int, seed: int, noise: float, policy: str,
                  max_line_bytes: int, reasons: bool = True,
                  max_samples: int | None = DEFAULT_MAX_SAMPLES) -> tuple[pd.DataFrame, int]:
    """Decision rows of the valid hands under PATHS, and how many hands were left out as invalid."""
    from analyzer.analysis.decisions import analyse
    from analyzer.problems import Problem
    from analyzer.validate import generate_valid

    files = resolve_paths(paths)
    problems: list[Problem] = []
    tick = progress("decisions")
    frame = analyse(generate_valid(files, problems, max_line_bytes=max_line_bytes), samples=samples,
                    dd_samples=dd_samples, seed=seed, noise=noise, policy=policy, reasons=reasons,
                    max_samples=max_samples, on_progress=tick)
    end_progress(tick)
    exit_on_read_errors(problems)
    bad = {(p.file, p.line) for p in problems}
    for p in problems[:20]:
        click.echo(p.format(), err=True)
    return frame, len(bad)


@click.command("decisions")
@paths_argument
@click.option("-o", "--output", type=click.Path(dir_okay=False), required=True, help="Parquet file to write.")
@samples_option
@max_samples_option
@dd_samples_option
@seed_option
@noise_option
@policy_option
@max_line_option
def command(paths: tuple[str, ...], output: str, samples: int, max_samples: int, dd_samples: int, seed: int,
            noise: float, policy: str, max_line_bytes: int) -> None:
    """Evaluate every decision with a choice in the valid hands of PATHS; invalid hands are reported and skipped."""
    from analyzer.logs import open_output

    files = resolve_paths(paths)
    refuse_inputs([output], files)  # the expanded files: a log found inside a folder counts too
    frame, bad = analyse_paths(tuple(files), samples=samples, dd_samples=dd_samples, seed=seed, noise=noise,
                               policy=policy, max_line_bytes=max_line_bytes, max_samples=max_samples)
    with open_output(output, inputs=files) as f:  # whole or nothing; a device or pipe written directly
        frame.to_parquet(f, index=False)
    hands = frame["hand_id"].nunique()
    click.echo(f"{len(frame)} decisions from {hands} hands -> {output}" +
               (f"; {bad} invalid hand(s) left out" if bad else ""), err=True)
    sys.exit(0)
