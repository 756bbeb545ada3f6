"""``analyzer decisions``: one row per decision of every valid hand, written to (or added to) a decision store."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from analyzer.analysis.execute import DEFAULT_BATCH_HANDS
from analyzer.commands.common import (
    NOISE,
    POLICY,
    POLICY_NAMES,
    FiniteFloatRange,
    exit_on_read_errors,
    MAX_SAMPLES,
    dask_option,
    dd_samples_option,
    execution_for,
    fail,
    help_epilog,
    jobs_option,
    max_line_option,
    max_samples_option,
    folder_out,
    one_out,
    paths_argument,
    refuse_inputs,
    resolve_paths,
    samples_option,
    seed_option,
)
from analyzer.problems import printable

if TYPE_CHECKING:
    import pandas as pd

    from analyzer.validate import Checked

    from analyzer.analysis.execute import Execution
    from analyzer.analysis.store import Store

noise_option = click.option("--noise", type=FiniteFloatRange(min=0), default=NOISE, show_default=True,
                            help="Randomness of the reference policy in rollouts (0: deterministic).")
policy_option = click.option("--policy", type=click.Choice(list(POLICY_NAMES)), default=POLICY,
                             show_default=True,
                             help="How options are valued: rollouts of the fast heuristic or of the strategy module's "
                                  "player over sampled deals, or the learned value model (model: deterministic, "
                                  "fast; true-deal values still rolled out).")


def counted_games(items: Iterable[Checked], others: Counter[str]) -> Iterator[Checked]:
    """``items``, counting in ``others`` the valid hands of games without decision rows (all but standard 憋七)."""
    from analyzer.variants.bieqi import NAME as BIEQI

    for item in items:
        if item.variant != BIEQI:
            others[str(item.variant)] += 1
        yield item


def left_out(others: Counter[str]) -> str:
    """What :func:`counted_games` counted, as the commands say it."""
    return (f"{sum(others.values())} hand(s) of {', '.join(sorted(others))} left out: only hands of standard 憋七 "
            f"have decision rows")


def analyse_paths(paths: tuple[str, ...], *, samples: int, dd_samples: int, seed: int, noise: float, policy: str,
                  max_line_bytes: int, reasons: bool = True, command: str = "decisions",
                  max_samples: int | None = MAX_SAMPLES, execution: Execution | None = None,
                  store: Store | None = None) -> tuple[pd.DataFrame, int]:
    """Decision rows of the valid hands under PATHS (from ``store`` for the hands it holds), and how
    many hands were left out as invalid. A store from other logs or settings exits 2."""
    from analyzer.analysis.execute import Settings
    from analyzer.running.dask import DaskUnavailable
    from analyzer.analysis.store import StoreError, collect_rows
    from analyzer.problems import Problem
    from analyzer.progress import Progress
    from analyzer.validate import generate_valid

    files = resolve_paths(paths)
    problems: list[Problem] = []
    others: Counter[str] = Counter()
    try:
        with Progress(command) as bar:
            total = bar.count_input(files)  # the total makes the rate an ETA; counting is cheap next to analysing
            frame = collect_rows(counted_games(generate_valid(files, problems, max_line_bytes=max_line_bytes), others),
                                 Settings(samples, dd_samples, seed, noise, policy, max_samples), execution,
                                 store=store, reasons=reasons, on_progress=bar.phase("analysing", total))
    except (StoreError, DaskUnavailable) as e:
        fail(command, str(e))
    exit_on_read_errors(problems)
    bad = {(p.file, p.line) for p in problems}
    for p in problems[:20]:
        click.echo(p.format(), err=True)
    if others and len(frame):  # (with no rows at all the command says so itself)
        click.echo(left_out(others), err=True)
    return frame, len(bad)


@click.command("decisions", short_help="One row per decision into a decision store.",
               epilog=help_epilog("analyzer decisions logs/ -o store/   (again with new logs: adds only their hands)",
                                  "0: rows written", "2: usage error (no input, bad option, output is an input, "
                                  "a store of other settings or other hands, a store another run is writing)"))
@paths_argument
@click.option("-o", "--out", "out", type=click.Path(),
              required=True, multiple=True, callback=one_out(folder_out),  # a folder, or a path to create; a file
              # (say an input) is refused below; given twice: a usage error
              help="Decision store to write: a folder of Parquet parts, one per batch of hands (pandas reads it as one "
                   "table; its `action` column is the 0-based index into the log's actions, move = action + 1). When "
                   "it exists, only the hands it does not hold are analysed and added. A store another `decisions` run is "
                   "writing (or creating) is refused at once, exit 2, nothing written: one writer at a time.")
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
def command(paths: tuple[str, ...], out: str, samples: int, max_samples: int, dd_samples: int, seed: int,
            noise: float, policy: str, jobs: int | None, dask_address: str | None, batch_hands: int,
            max_line_bytes: int) -> None:
    """Evaluate every decision with a choice in the valid hands of PATHS; invalid hands are reported and skipped."""
    from dataclasses import replace

    target = Path(out)
    files = resolve_paths(paths)
    refuse_inputs([target], files)
    # with --dask the cluster starts now, in the background, while this process imports the analysis and reads
    execution = replace(execution_for(files, jobs, dask_address, start=True), batch_hands=batch_hands)
    try:
        _decisions(files, target, out, samples, max_samples, dd_samples, seed, noise, policy, execution,
                   max_line_bytes)
    finally:
        if execution.connection is not None:
            execution.connection.close()


def _decisions(files: list[str], target: Path, out: str, samples: int, max_samples: int, dd_samples: int,
               seed: int, noise: float, policy: str, execution: Execution, max_line_bytes: int) -> None:
    import analyzer.analysis.decisions  # noqa: F401  # the analysis (numba, pandas) before the collector settles
    from analyzer.analysis.execute import Settings, analysed_batches
    from analyzer.running.dask import DaskUnavailable
    from analyzer.analysis.store import StoreError, StoreWriter
    from analyzer.running.collector import settle
    from analyzer.problems import Problem
    from analyzer.progress import Progress
    from analyzer.validate import generate_valid

    settle()  # the imports are done: out of every collection from now on

    settings = Settings(samples, dd_samples, seed, noise, policy, max_samples)
    from analyzer.logs import is_special, open_output

    if is_special(target):  # a device or pipe (/dev/null, /dev/stdout): one Parquet stream, not a store
        frame, n_bad = analyse_paths(tuple(files), samples=samples, dd_samples=dd_samples, seed=seed, noise=noise,
                                     policy=policy, max_line_bytes=max_line_bytes, max_samples=max_samples,
                                     execution=execution)
        # the Parquet bytes made here, then written: pyarrow's writer, handed a named file's path, removes the
        # file at that path when a write fails, a device (/dev/full) or a pipe included
        import io

        import pyarrow.parquet as pq

        from analyzer.analysis.options import frame_table

        data = io.BytesIO()
        pq.write_table(frame_table(frame), data)
        with open_output(target, inputs=files) as f:
            f.write(data.getbuffer())
        click.echo(f"{len(frame)} decisions from {frame['hand_id'].nunique()} hands -> {printable(str(out))}"
                   + (f"; {n_bad} invalid hand(s) left out" if n_bad else ""), err=True)
        sys.exit(0)
    problems: list[Problem] = []
    reused = [0]
    others: Counter[str] = Counter()  # valid hands of games without decision rows, by game
    from analyzer.running import stops

    quiet = None
    try:
        # the writer locks the store from here to the end of the block (a second run into it is refused at once, exit
        # 2); a new store's hidden folder is made and, on any way out but the commit, removed within the block
        with StoreWriter(target, settings) as writer, Progress("decisions") as bar:
            known = writer.known

            def on_hand(item: Checked, seq: int, fp: str) -> bool:
                have = known.get(str(item.record.hand_id))
                if have is None:
                    return True
                if have != fp:
                    raise StoreError(f"{item.file}:{item.line}: hand {item.record.hand_id!r} differs from the hand "
                                     f"of that id already in {target}")
                reused[0] += 1
                return False

            total = bar.count_input(files)
            valid = counted_games(generate_valid(files, problems, max_line_bytes=max_line_bytes), others)
            for batch, frame in analysed_batches(valid, settings, execution, reasons=True, on_hand=on_hand,
                                                 on_progress=bar.phase("analysing", total)):
                writer.add(frame, batch.hand_ids, batch.fingerprints)
            wrote = bar.done("writing", 1, "stores")
            if any(p.code == "io-error" for p in problems):  # nothing from part of the input
                writer.abort()
            else:
                # from the commit on, the run completes: a Ctrl-C (or SIGTERM, SIGHUP) during the renames or after them
                # is ignored, so an exit of 130 (143, 129) always means nothing was added (the handlers are back before
                # the command returns)
                quiet = stops.ignored()
                writer.commit()
            wrote()
    except (StoreError, DaskUnavailable) as e:
        stops.restore(quiet)
        fail("decisions", str(e))
    except BaseException:  # any other way out of the commit: the handlers back before it propagates
        stops.restore(quiet)
        raise
    try:
        exit_on_read_errors(problems)
        bad = {(p.file, p.line) for p in problems}
        for p in problems[:20]:
            click.echo(p.format(), err=True)
        click.echo(f"{writer.rows} decisions from {writer.hands} new hands -> {printable(str(out))}"
                   + (f" ({reused[0]} hands already there)" if reused[0] else "")
                   + (f"; {len(bad)} invalid hand(s) left out" if bad else "")
                   + (f"; {left_out(others)}" if others else ""), err=True)
        sys.exit(0)
    finally:  # as the command ends (this process may go on: a test's runner)
        stops.restore(quiet)
