"""Options and helpers shared by several subcommands."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from analyzer.logs import DEFAULT_MAX_LINE_BYTES, InputError, check_not_input, expand_paths

if TYPE_CHECKING:
    from analyzer.analysis.store import Store
    from analyzer.analysis.execute import Execution, Settings

paths_argument = click.argument("paths", nargs=-1, required=True)
max_line_option = click.option("--max-line-bytes", type=click.IntRange(min=1), default=DEFAULT_MAX_LINE_BYTES,
                               show_default=True, help="Lines longer than this are reported, not parsed.")


def resolve_paths(paths: tuple[str, ...]) -> list[str]:
    """Expand files/folders/-; a missing path, or a decision store given where logs are expected, is a
    usage error (exit 2)."""
    from analyzer.analysis.store import looks_like_store

    for p in paths:
        if p != "-" and looks_like_store(p):
            raise click.UsageError(f"{p} is a decision store or Parquet file, not a log: pass it as "
                                   f"--decisions {p}, with the logs it was written from")
    try:
        found = expand_paths(paths)
    except InputError as e:
        raise click.UsageError(str(e)) from e
    if not found:
        raise click.UsageError(f"no *.jsonl or *.jsonl.gz files under: {' '.join(paths)}")
    return found


def progress(label: str) -> Callable[[int], None] | None:
    """A hands-done counter on standard error, only when it is a terminal."""
    if not sys.stderr.isatty():
        return None
    last = [0.0]

    def tick(n: int) -> None:
        now = time.monotonic()
        if now - last[0] > 0.25:
            last[0] = now
            sys.stderr.write(f"\r{label}: {n:,} hands")
            sys.stderr.flush()

    return tick


def end_progress(tick: Callable[[int], None] | None) -> None:
    if tick is not None:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()


def refuse_inputs(outputs: Iterable[str | Path], inputs: list[str]) -> None:
    """A usage error (exit 2) when any output path is one of the inputs: nothing overwrites its input."""
    for out in outputs:
        try:
            check_not_input(out, inputs)
        except InputError as e:
            raise click.UsageError(str(e)) from e


jobs_option = click.option("--jobs", type=click.IntRange(min=1), default=None,
                           help="Worker processes for the decision analysis [default: every core, 1 for inputs "
                                "under 256 KB]; the rows do not depend on it.")
dask_option = click.option("--dask", "dask_address", metavar="ADDRESS|local", default=None,
                           help="Run the decision analysis on Dask: a scheduler address (tcp://host:8786) or "
                                "'local' (a LocalCluster of --jobs workers). Needs the 'dask' extra.")
decisions_store_option = click.option(
    "--decisions", "store_path", type=click.Path(exists=True), default=None, metavar="STORE",
    help="Reuse the rows of a decision store (`analyzer decisions LOGS --out STORE`) written from these logs; "
         "hands it lacks are analysed.")


def execution_for(files: list[str], jobs: int | None, dask_address: str | None) -> Execution:
    """Where the decision analysis runs, from --jobs / --dask."""
    from analyzer.analysis.execute import Execution, default_jobs

    if dask_address is not None:
        return Execution(jobs=jobs or 2, dask=dask_address)
    return Execution(jobs=default_jobs(files) if jobs is None else jobs)


def fail(command: str, message: str) -> NoReturn:
    """A clear one-line error on standard error and exit 2 (usage or input error)."""
    click.echo(f"{command}: {message}", err=True)
    sys.exit(2)


def open_decision_store(command: str, path: str) -> Store:
    from analyzer.analysis.store import StoreError, open_store

    try:
        return open_store(path)
    except StoreError as e:
        fail(command, str(e))


def store_settings(ctx: click.Context, store: Store, asked: Settings, names: dict[str, str]) -> Settings:
    """The settings of a run reading ``store``: the store's, except where an option was given on the
    command line (then it must agree, which ``Store.check_settings`` tells)."""
    from dataclasses import replace

    given = {field: getattr(asked, field) for param, field in names.items()
             if ctx.get_parameter_source(param) not in (click.core.ParameterSource.DEFAULT, None)}
    return replace(store.settings, **given)
