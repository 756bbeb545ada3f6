"""``analyzer decisions``: one row per decision of every valid hand, written as Parquet for pandas."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from analyzer.analysis.decisions import DEFAULT_NOISE, DEFAULT_POLICY, POLICIES
from analyzer.commands.common import (
    FiniteFloatRange,
    exit_on_read_errors,
    dd_samples_option,
    MAX_SAMPLES,
    help_epilog,
    max_line_option,
    max_samples_option,
    out_option,
    paths_argument,
    refuse_inputs,
    resolve_paths,
    samples_option,
    seed_option,
)

if TYPE_CHECKING:
    import pandas as pd

noise_option = click.option("--noise", type=FiniteFloatRange(min=0), default=DEFAULT_NOISE, show_default=True,
                            help="Randomness of the reference policy in rollouts (0: deterministic).")
policy_option = click.option("--policy", type=click.Choice(list(POLICIES)), default=DEFAULT_POLICY,
                             show_default=True,
                             help="Reference policy of the rollouts: fast heuristic, or the strategy module's player.")


def analyse_paths(paths: tuple[str, ...], *, samples: int, dd_samples: int, seed: int, noise: float, policy: str,
                  max_line_bytes: int, reasons: bool = True, command: str = "decisions",
                  max_samples: int | None = MAX_SAMPLES) -> tuple[pd.DataFrame, int]:
    """Decision rows of the valid hands under PATHS, and how many hands were left out as invalid."""
    from analyzer.analysis.decisions import analyse
    from analyzer.problems import Problem
    from analyzer.progress import Progress, count_lines
    from analyzer.validate import generate_valid

    files = resolve_paths(paths)
    problems: list[Problem] = []
    with Progress(command) as bar:
        total = None
        if bar.enabled:  # the total makes the rate an ETA; counting lines is cheap next to analysing
            bar.phase("reading")
            total = count_lines(files)
        frame = analyse(generate_valid(files, problems, max_line_bytes=max_line_bytes), samples=samples,
                        dd_samples=dd_samples, seed=seed, noise=noise, policy=policy, reasons=reasons,
                        max_samples=max_samples, on_progress=bar.phase("analysing", total))
    exit_on_read_errors(problems)
    bad = {(p.file, p.line) for p in problems}
    for p in problems[:20]:
        click.echo(p.format(), err=True)
    return frame, len(bad)


@click.command("decisions", short_help="One row per decision (options, values, regret) as Parquet.",
               epilog=help_epilog("analyzer decisions logs/ -o decisions.parquet",
                                  "0: rows written", "2: usage error (no input, bad option, output is an input)"))
@paths_argument
@out_option("Parquet file to write (one row per decision; its `action` column is the 0-based index into "
            "the log's actions, move = action + 1).", aliases=("--output",))
@samples_option
@max_samples_option
@dd_samples_option
@seed_option
@noise_option
@policy_option
@max_line_option
def command(paths: tuple[str, ...], out: str, samples: int, max_samples: int, dd_samples: int, seed: int,
            noise: float, policy: str, max_line_bytes: int) -> None:
    """Evaluate every decision with a choice in the valid hands of PATHS; invalid hands are reported and skipped."""
    from analyzer.logs import open_output

    output = out
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
