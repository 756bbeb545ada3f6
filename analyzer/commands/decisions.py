"""``analyzer decisions``: one row per decision of every valid hand, written to (or added to) a decision store."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from analyzer.analysis.decisions import (
    DEFAULT_DD_SAMPLES,
    DEFAULT_MAX_SAMPLES,
    DEFAULT_NOISE,
    DEFAULT_POLICY,
    DEFAULT_SAMPLES,
    POLICIES,
)
from analyzer.analysis.execute import DEFAULT_BATCH_HANDS
from analyzer.commands.common import (
    dask_option,
    end_progress,
    execution_for,
    fail,
    jobs_option,
    max_line_option,
    paths_argument,
    progress,
    refuse_inputs,
    resolve_paths,
)

if TYPE_CHECKING:
    import pandas as pd

    from analyzer.analysis.execute import Execution
    from analyzer.analysis.store import Store

samples_option = click.option("--samples", type=click.IntRange(min=1), default=DEFAULT_SAMPLES, show_default=True,
                              help="Hidden-hand deals per decision at least (own-information estimate).")
max_samples_option = click.option("--max-samples", type=click.IntRange(min=1), default=DEFAULT_MAX_SAMPLES,
                                  show_default=True,
                                  help="Adaptive sampling: up to this many deals where the chosen option is close "
                                       "to the best.")
dd_samples_option = click.option("--dd-samples", type=click.IntRange(min=0), default=DEFAULT_DD_SAMPLES, show_default=True,
                                 help="Rollouts per option on the true deal (double-dummy estimate).")
seed_option = click.option("--seed", type=int, default=0, show_default=True, help="Seed: same seed, same rows.")
noise_option = click.option("--noise", type=click.FloatRange(min=0), default=DEFAULT_NOISE, show_default=True,
                            help="Randomness of the reference policy in rollouts (0: deterministic).")
policy_option = click.option("--policy", type=click.Choice(list(POLICIES)), default=DEFAULT_POLICY,
                             show_default=True,
                             help="Reference policy of the rollouts: fast heuristic, or the strategy module's player.")


def analyse_paths(paths: tuple[str, ...], *, samples: int, dd_samples: int, seed: int, noise: float, policy: str,
                  max_line_bytes: int, reasons: bool = True, max_samples: int | None = DEFAULT_MAX_SAMPLES,
                  execution: Execution | None = None, store: Store | None = None) -> tuple[pd.DataFrame, int]:
    """Decision rows of the valid hands under PATHS (from ``store`` for the hands it holds), and how
    many hands were left out as invalid. A store from other logs or settings exits 2."""
    from analyzer.analysis.execute import Settings
    from analyzer.analysis.store import StoreError, collect_rows
    from analyzer.problems import Problem
    from analyzer.validate import generate_valid

    files = resolve_paths(paths)
    problems: list[Problem] = []
    tick = progress("decisions")
    try:
        frame = collect_rows(generate_valid(files, problems, max_line_bytes=max_line_bytes),
                             Settings(samples, dd_samples, seed, noise, policy, max_samples), execution, store=store,
                             reasons=reasons, on_progress=tick)
    except StoreError as e:
        end_progress(tick)
        fail("decisions", str(e))
    end_progress(tick)
    bad = {(p.file, p.line) for p in problems}
    for p in problems[:20]:
        click.echo(p.format(), err=True)
    return frame, len(bad)


@click.command("decisions")
@paths_argument
@click.option("-o", "--out", "--output", "output", type=click.Path(), required=True, metavar="STORE",
              help="Decision store to write: a folder of Parquet parts (pandas reads it as one table). When it "
                   "exists, only the hands it does not hold are analysed and added.")
@samples_option
@max_samples_option
@dd_samples_option
@seed_option
@noise_option
@policy_option
@jobs_option
@dask_option
@click.option("--batch-hands", type=click.IntRange(min=1), default=DEFAULT_BATCH_HANDS, show_default=True,
              help="Hands per task and per Parquet part.")
@max_line_option
def command(paths: tuple[str, ...], output: str, samples: int, max_samples: int, dd_samples: int, seed: int,
            noise: float, policy: str, jobs: int | None, dask_address: str | None, batch_hands: int,
            max_line_bytes: int) -> None:
    """Evaluate every decision with a choice in the valid hands of PATHS; invalid hands are reported and skipped."""
    from dataclasses import replace

    from analyzer.analysis.execute import DaskUnavailable, Settings, analysed_batches
    from analyzer.analysis.store import StoreError, StoreWriter
    from analyzer.problems import Problem
    from analyzer.validate import Checked, generate_valid

    target = Path(output)
    files = resolve_paths(paths)
    refuse_inputs([target], files)
    settings = Settings(samples, dd_samples, seed, noise, policy, max_samples)
    execution = replace(execution_for(files, jobs, dask_address), batch_hands=batch_hands)
    problems: list[Problem] = []
    reused = [0]
    tick = progress("decisions")
    try:
        writer = StoreWriter(target, settings)
        known = writer.known

        def on_hand(item: Checked, seq: int, fp: str) -> bool:
            have = known.get(str(item.record.hand_id))
            if have is None:
                return True
            if have != fp:
                raise StoreError(f"{item.file}:{item.line}: hand {item.record.hand_id!r} differs from the hand of "
                                 f"that id already in {target}")
            reused[0] += 1
            return False

        with writer:
            for batch, frame in analysed_batches(generate_valid(files, problems, max_line_bytes=max_line_bytes),
                                                 settings, execution, reasons=True, on_hand=on_hand,
                                                 on_progress=tick):
                writer.add(frame, batch.hand_ids, batch.fingerprints)
            writer.commit()
    except (StoreError, DaskUnavailable) as e:
        end_progress(tick)
        fail("decisions", str(e))
    end_progress(tick)
    bad = {(p.file, p.line) for p in problems}
    for p in problems[:20]:
        click.echo(p.format(), err=True)
    click.echo(f"{writer.rows} decisions from {writer.hands} new hands -> {output}"
               + (f" ({reused[0]} hands already there)" if reused[0] else "")
               + (f"; {len(bad)} invalid hand(s) left out" if bad else ""), err=True)
    sys.exit(0)
