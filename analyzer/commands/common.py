"""Options and helpers shared by several subcommands."""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

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

if TYPE_CHECKING:
    from analyzer.analysis.execute import Execution, Settings
    from analyzer.analysis.store import Store

T = TypeVar("T")

paths_argument = click.argument("paths", nargs=-1, required=True)
#: The largest count an option takes (samples, rollouts, jobs, hands): far above any useful value, and within what the
#: compiled kernels' 64-bit integers and the JSON outputs hold (a larger one was a traceback, not a usage error).
MAX_COUNT = 1_000_000

max_line_option = click.option("--max-line-bytes", type=click.IntRange(min=1, max=MAX_LINE_BYTES_LIMIT),
                               default=DEFAULT_MAX_LINE_BYTES, show_default=True,
                               help="Lines longer than this are reported, not parsed.")

# --------------------------------------------------------------------------- one option set
# Every command spells an option the same way and, where it has a default, the same default.

#: The decision analysis' one default set, for every command that analyses decisions (decisions,
#: players, audit, report): at least 8 hidden-hand deals per decision for the own-information
#: estimate, adaptively up to 32 where the chosen option is close to the best (the library's ceiling), and 1
#: rollout per option on the true deal: the library's defaults (``decisions.DEFAULT_*``), i.e. the rows every
#: published detection figure was measured on (benchmarks/eval_audit.py analyses with them), so a command
#: computes what was evaluated. The reference policy is deterministic unless --noise is given, so one true-deal
#: rollout is exact: 8 give the same audit.json (benchmarks/check_dd_samples.py).
#: One set means a decisions file holds the rows any other command would compute.
SAMPLES, MAX_SAMPLES, DD_SAMPLES = 8, 32, 1  # literals: --help imports no numba (a test checks the library)
#: ``analysis.decisions``' policies and the audit's (``POLICIES``, ``AUDIT_POLICY``), as literals too: a command
#: that opens a Dask cluster starts it before it imports the analysis (~0.75 s), so its workers start sooner
POLICY_NAMES, AUDIT_POLICY = ("fast", "strategy", "model"), "model"
#: ``analysis.decisions``' ``DEFAULT_POLICY`` and ``DEFAULT_NOISE``, literals for the same reason (and so that
#: ``analyzer --help``, which imports every command's module, imports no numba or pandas)
POLICY, NOISE = "model", 0.0


def out_option(help: str, *, required: bool = True, default: str | None = None, folder: bool = False,
               compressed: bool = False) -> Callable[[Any], Any]:
    """``-o/--out PATH``: where a command writes its output; an empty PATH is
    a usage error (it would mean the current folder, or no page at all), and so is a compressed file's name unless
    the command compresses what it writes (``compressed``: simulate's log)."""
    return click.option("-o", "--out", "out",
                        type=click.Path(file_okay=not folder, dir_okay=folder, allow_dash=not folder), required=required,
                        default=None if default is None else (default,), show_default=default is not None,
                        help=help, multiple=True,
                        callback=one_out(folder_out if folder else file_out if compressed else plain_file_out))


def one_out(check: Callable[[click.Context, click.Parameter, str | None], str | None]) -> Callable[..., str | None]:
    """A click callback for ``-o`` read as a multiple option: its one value, checked by ``check``; given twice (``-o
    a.html -o b.html``, or ``-o`` beside ``--out``) it is a usage error, not the last value kept without a
    word while the user waits for two outputs."""
    def callback(ctx: click.Context, param: click.Parameter, value: tuple[str, ...] | str | None) -> str | None:
        if isinstance(value, tuple):
            if len(value) > 1:
                from analyzer.problems import printable

                shown = ", ".join(repr(v) for v in value[:3]) + (", ..." if len(value) > 3 else "")
                raise click.BadParameter(printable(f"given {len(value)} times ({shown}); a command writes one "
                                                   f"output: give it once (run the command again for another)"))
            value = value[0] if value else None
        return check(ctx, param, value)
    return callback


#: Where ``-o -`` writes: standard output, as a device (written directly, never through a temporary file).
STDOUT_PATH = "/dev/stdout"


def file_out(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A file output: ``-`` is standard output (a file named ``-`` would surprise: ``./-`` names one)."""
    value = not_empty(ctx, param, value)
    if value is not None and value.endswith(("/", os.sep)):  # "out/" means a folder: a file named "out" would surprise
        raise click.BadParameter(f"{value}: a folder (it ends in '/'); name the file to write")
    return STDOUT_PATH if value == "-" else value


#: How the names of compressed files end: a plain output under one (``-o players.csv.gz``) is text that no
#: decompressor and no reader of the name's format opens.
COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".zip")


def plain_file_out(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """:func:`file_out` of a command that writes plain text (a page, a table, JSON): a compressed file's name is a
    usage error (the file was written as plain text under it)."""
    value = file_out(ctx, param, value)
    suffix = os.path.splitext(value or "")[1]
    if suffix.lower() in COMPRESSED_SUFFIXES:
        raise click.BadParameter(f"{value}: a compressed file's name, and this command writes plain text; name it "
                                 f"without {suffix} (and compress it afterwards if you like)")
    return value


def folder_out(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    value = not_empty(ctx, param, value)
    if value == "-":
        raise click.BadParameter("'-' is standard output, and this command writes a folder of files: name a folder "
                                 "(./- for one called '-')")
    return value


def not_empty(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A click callback: an empty (or blank) path is a usage error."""
    if value is not None and not value.strip():
        raise click.BadParameter("an empty path; give a file or folder name")
    return value


samples_option = click.option(
    "--samples", type=click.IntRange(min=1, max=MAX_COUNT), default=SAMPLES, show_default=True,
    help="Hidden-hand deals per decision, at least (own-information estimate); one default for every command.")
max_samples_option = click.option(
    "--max-samples", type=click.IntRange(min=1, max=MAX_COUNT), default=MAX_SAMPLES, show_default=True,
    help="Adaptive sampling: up to this many deals where the chosen option is close to the best (below --samples: "
         "--samples).")
dd_samples_option = click.option(
    "--dd-samples", type=click.IntRange(min=0, max=MAX_COUNT), default=DD_SAMPLES, show_default=True,
    help="Rollouts per option on the true deal (0: none; with the deterministic default policy one is exact); "
         "one default for every command.")
seed_option = click.option("--seed", type=click.IntRange(min=-(2**63), max=2**63 - 1), default=0, show_default=True,
                           help="Seed of every random choice: the same seed gives the same output.")
lang_option = click.option("--lang", type=click.Choice(["en", "zh"]), default="en", show_default=True,
                           help="Language an HTML page opens in (its zh/en switch changes it).")


#: The exit code every command shares for a bug (analyzer.cli.main's last resort), listed last in every --help.
INTERNAL_ERROR_EXIT = "3: internal error (a bug in the analyzer, not in the input; traceback on standard error)"
#: And how every command ends when stopped (analyzer.running.stops.Terminated), listed after it.
STOPPED_EXIT = "130 / 143 / 129: stopped by Ctrl-C / SIGTERM / SIGHUP (no output file changed, no temporary file left)"


def help_epilog(example: str, *exits: str) -> str:
    """The end of a command's --help: an example and its exit codes, one a line (kept as written), then the exit code
    every command shares for a bug (:data:`INTERNAL_ERROR_EXIT`) and those of a stop (:data:`STOPPED_EXIT`)."""
    return (f"\b\nExample:\n  {example}\n\n\b\nExit codes:\n"
            + "\n".join(f"  {x}" for x in (*exits, INTERNAL_ERROR_EXIT, STOPPED_EXIT)))


def counted(items: Iterable[T], tick: Callable[[int], None] | None) -> Iterator[T]:
    """``items`` as they are, calling ``tick(n)`` with the running count (for a progress bar)."""
    if tick is None:
        yield from items
        return
    for n, item in enumerate(items, 1):
        tick(n)
        yield item


class FiniteFloatRange(click.FloatRange):
    """A float option in a range that also refuses NaN and infinities (NaN passes every comparison)."""

    name = "finite float range"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
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


def resolve_paths(paths: Iterable[str], keep_missing: bool = False) -> list[str]:
    """Expand files/folders/-; a missing path (unless ``keep_missing``: then reading it says why, see
    ``logs.expand_paths``), or a decision store given where logs are expected, is a usage error (exit 2). Paths in
    its messages are escaped (:func:`problems.printable`): a file name inside a folder from elsewhere can neither
    drive the terminal nor forge a line."""
    from analyzer.analysis.store import looks_like_store
    from analyzer.problems import printable

    paths = tuple(paths)
    for p in paths:
        if p != "-" and looks_like_store(p):
            raise click.UsageError(f"{printable(p)} is a decision store or Parquet file, not a log: pass it as "
                                   f"--decisions {printable(p)}, with the logs it was written from")
    try:
        found = expand_paths(paths, keep_missing=keep_missing)
    except InputError as e:
        raise click.UsageError(printable(str(e))) from e
    if not found:
        raise click.UsageError(f"no *.jsonl or *.jsonl.gz files under: {printable(' '.join(paths))}")
    _refuse_streams_into(found)
    return found


def _refuse_streams_into(files: list[str]) -> None:
    """A usage error when standard output or error is one of the input files (``analyzer validate log >> log``: the
    problems it writes were read back as new lines of the log, without end; nothing writes into its input)."""
    from analyzer.problems import printable

    streams: dict[tuple[int, int], str] = {}
    for fd, what in ((1, "standard output"), (2, "standard error")):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            streams[(st.st_dev, st.st_ino)] = what
    if not streams:
        return
    for f in files:
        if f == "-":
            continue
        try:
            st = os.stat(f)
        except OSError:
            continue
        name = streams.get((st.st_dev, st.st_ino))
        if name is not None:
            raise click.UsageError(f"{printable(f)} is one of the inputs and {name} is written into it; "
                                   f"send {name} elsewhere")


def progress(label: str) -> Callable[[int], None] | None:
    """A hands-done bar on standard error, only when it is a terminal (see analyzer.progress)."""
    from analyzer.progress import Progress

    bar = Progress(label)
    tick = bar.phase("analysing")
    if tick is not None:
        _BARS[id(tick)] = bar
    return tick


_BARS: dict[int, Any] = {}


def end_progress(tick: Callable[[int], None] | None) -> None:
    bar = _BARS.pop(id(tick), None)
    if bar is not None:
        bar.close()


def refuse_inputs(outputs: Iterable[str | Path], inputs: list[str]) -> None:
    """A usage error (exit 2) when any output path is one of the inputs: nothing overwrites its input.
    ``inputs`` are the expanded files (:func:`resolve_paths`), so a log found inside a folder counts."""
    for out in outputs:
        try:
            check_not_input(out, inputs)
        except InputError as e:
            raise click.UsageError(str(e)) from e


jobs_option = click.option("--jobs", type=click.IntRange(min=1, max=MAX_COUNT), default=None,
                           help="Worker processes for the decision analysis [default: every core, 1 for inputs "
                                "under 256 KB; never more than the cores]; the rows do not depend on it.")
#: A scheduler address as ``dask scheduler`` prints it: [tcp|tls|ws|wss|ucx://]HOST:PORT (HOST a name, an IPv4 address or
#: an IPv6 one in brackets).
_SCHEDULER = r"(?:(?:tcp|tls|ws|wss|ucx)://)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):[0-9]{1,5}/?"


def _dask_address(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``local`` or a scheduler address; anything else is a usage error here, before any work."""
    import re

    if value is None or value == "local":
        return value
    local = "'local' (a LocalCluster on this machine; its workers: --jobs N)"
    if re.fullmatch(r"\s*local\s*(?::[0-9]*)?/?", value, re.IGNORECASE):  # "LOCAL", "local:2": a LocalCluster meant
        raise click.BadParameter(f"{value!r}: expected {local} or a scheduler address, tcp://HOST:PORT (a scheduler "
                                 "on a host named local: tcp://local:PORT)")
    m = re.fullmatch(_SCHEDULER, value)
    if m is None or not 0 < int(value.rstrip("/").rsplit(":", 1)[1]) < 65536:
        raise click.BadParameter(f"{value!r}: expected 'local' or a scheduler address, tcp://HOST:PORT")
    return value


dask_option = click.option("--dask", "dask_address", metavar="ADDRESS|local", default=None, callback=_dask_address,
                           help="Run the decision analysis on Dask: a scheduler address (tcp://host:8786) or "
                                "'local' (a LocalCluster of --jobs workers). Needs the 'dask' extra.")
decisions_store_option = click.option(
    "--decisions", "store_path", type=click.Path(exists=True), default=None, metavar="STORE",
    help="Reuse the rows of a decision store (`analyzer decisions LOGS --out STORE`) written from these logs; "
         "hands it lacks are analysed.")


#: Modules a LocalCluster's workers import as they start: the decision analysis (every command's tasks).
ANALYSIS_MODULES = ("analyzer.analysis.decisions",)


def execution_for(files: list[str], jobs: int | None, dask_address: str | None, *,
                  preload: tuple[str, ...] = ANALYSIS_MODULES, prefork: tuple[str, ...] = (),
                  start: bool = False) -> Execution:
    """Where the decision analysis runs, from --jobs / --dask. ``start``: with --dask, the connection is opened now in
    the background (the command imports and reads meanwhile; close it with ``execution.connection.close()``)."""
    from analyzer.analysis.execute import Execution
    from analyzer.running.dask import DaskConnection
    from analyzer.running.jobs import ANALYSIS_MIN_BYTES, default_jobs, usable_cores

    if jobs is not None and dask_address in (None, "local"):  # processes on this machine: never more than its cores
        jobs = min(jobs, usable_cores())
    if dask_address is not None:
        jobs = jobs or 2
        connection = DaskConnection(dask_address, jobs, preload=preload, prefork=prefork, background=True) if start else None
        return Execution(jobs=jobs, dask=dask_address, connection=connection, preload=preload, prefork=prefork)
    return Execution(jobs=default_jobs(files, ANALYSIS_MIN_BYTES) if jobs is None else jobs)


def fail(command: str, message: str) -> NoReturn:
    """A clear one-line error on standard error, as every error is (``analyzer: error: why``), and exit 2 (usage or
    input error). ``command``: the command failing (the line does not repeat it: the user ran it)."""
    click.echo(f"analyzer: error: {message}", err=True)
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
    return settings_given(ctx, store.settings, asked, names)


def settings_given(ctx: click.Context, base: Settings, asked: Settings, names: dict[str, str]) -> Settings:
    """``base``, except the fields (``names``: option name -> field) whose option was given on the command line,
    which are ``asked``'s."""
    from dataclasses import replace

    given = {field: getattr(asked, field) for param, field in names.items()
             if ctx.get_parameter_source(param) not in (click.core.ParameterSource.DEFAULT, None)}
    return replace(base, **given)
