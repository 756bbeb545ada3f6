"""Options and helpers shared by several subcommands."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import click

from analyzer.logs import (
    DEFAULT_MAX_LINE_BYTES,
    InputError,
    check_not_input,
    expand_paths,
)
from analyzer.problems import Problem

#: The longest line anyone may ask to parse (1 GiB): a larger limit is a usage error, not an overflow.
MAX_LINE_BYTES_LIMIT = 1 << 30

paths_argument = click.argument("paths", nargs=-1, required=True)
max_line_option = click.option("--max-line-bytes", type=click.IntRange(min=1, max=MAX_LINE_BYTES_LIMIT),
                               default=DEFAULT_MAX_LINE_BYTES, show_default=True,
                               help="Lines longer than this are reported, not parsed.")


class FiniteFloatRange(click.FloatRange):
    """A float option in a range that also refuses NaN and infinities (NaN passes every comparison)."""

    name = "finite float range"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> float:
        import math

        out = super().convert(value, param, ctx)
        if not math.isfinite(out):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return out


def io_errors(problems: Iterable[Problem]) -> list[Problem]:
    return [p for p in problems if p.code == "io-error"]


def exit_on_read_errors(problems: Iterable[Problem]) -> None:
    """A path that could not be read (missing, unreadable, truncated gzip) ends the command with exit 2
    and one line each, before any output is written: results from part of the input would mislead."""
    errors = io_errors(problems)
    if errors:
        for p in errors:
            click.echo(f"analyzer: error: {p.format()}", err=True)
        raise click.exceptions.Exit(2)


def resolve_paths(paths: Iterable[str]) -> list[str]:
    """Expand files/folders/-; a missing path is a usage error (exit 2)."""
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
    """A usage error (exit 2) when any output path is one of the inputs: nothing overwrites its input.
    ``inputs`` are the expanded files (:func:`resolve_paths`), so a log found inside a folder counts."""
    for out in outputs:
        try:
            check_not_input(out, inputs)
        except InputError as e:
            raise click.UsageError(str(e)) from e
