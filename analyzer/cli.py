"""The ``analyzer`` command: thin click wrappers that parse options and call the layers below.

Each subcommand lives in ``analyzer/commands/<name>.py`` and is imported only when it runs, so
``analyzer validate`` does not pay for pandas or plotly.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import sys
from typing import Any

import click

from analyzer.logs import InputError
from analyzer.running import stops

#: Exit codes of every command: 0 all well, 1 problems found (or pairs flagged), 2 a usage, read or
#: write error, 3 an internal error (a bug in the analyzer: one line and the traceback on standard error),
#: 130 interrupted (Ctrl-C); 143 / 129 stopped by SIGTERM / SIGHUP (128 + the signal, as a shell says it).
EXIT_OK, EXIT_FOUND, EXIT_ERROR, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def _interrupted(e: KeyboardInterrupt) -> int:
    return getattr(e, "exit_code", EXIT_INTERRUPTED)


def _silence_stdout() -> None:
    """Point standard output at /dev/null, so the interpreter's last flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


#: name -> module under analyzer.commands defining a click command called ``command``.
COMMANDS: dict[str, str] = {
    "validate": "validate",
    "simulate": "simulate",
    "decisions": "decisions",
    "players": "players",
    "audit": "audit",
    "report": "report",
    "cases": "cases",
    "serve": "serve",
}


#: click's "no arguments: show the help" (an error since click 8.2), shown by click as help, not as an error.
_HELP_ERRORS: tuple[type[Exception], ...] = tuple(
    e for e in (getattr(click.exceptions, "NoArgsIsHelpError", None),) if e is not None)


class OneLineError(click.ClickException):
    """A click error (a bad option or argument, a path that is not there, an unknown command) shown as every other
    error is: one line, ``analyzer: error: why (analyzer COMMAND --help)``, with the error's own exit code (click
    keeps it on the class: :func:`one_line` makes the subclass of each code)."""

    def __init__(self, error: click.ClickException) -> None:
        super().__init__(error.format_message())
        ctx = getattr(error, "ctx", None)
        self.hint = f" ({ctx.command_path} --help)" if isinstance(error, click.UsageError) and ctx is not None else ""

    def show(self, file: Any = None) -> None:
        message = " ".join(self.format_message().split())  # one line, whatever the message held
        click.echo(f"analyzer: error: {message}{self.hint}", err=True)


@functools.cache
def _one_line_class(exit_code: int) -> type[OneLineError]:
    return type(f"OneLineError{exit_code}", (OneLineError,), {"exit_code": exit_code})


def one_line(error: click.ClickException) -> OneLineError:
    """``error`` as a :class:`OneLineError` with its exit code."""
    return _one_line_class(error.exit_code)(error)


class LazyGroup(click.Group):
    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        """The group's own options parsed; an error in them is one line (:class:`OneLineError`)."""
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except OneLineError:
            raise
        except click.ClickException as e:
            if isinstance(e, _HELP_ERRORS):  # bare ``analyzer``: click prints the help (click >= 8.2 by raising)
                raise
            raise one_line(e) from None

    def invoke(self, ctx: click.Context) -> Any:
        """Run a subcommand; the ways it can fail outside its own checks end with one line and a
        documented exit code, never a traceback: Ctrl-C 130 (quietly), a read or write error 2, a usage error
        (click's) 2."""
        try:
            return super().invoke(ctx)
        except OneLineError:
            raise
        except click.ClickException as e:  # the subcommand's options or arguments, or an unknown subcommand
            if isinstance(e, _HELP_ERRORS):
                raise
            raise one_line(e) from None
        except KeyboardInterrupt as e:  # Ctrl-C, or SIGTERM / SIGHUP (Terminated)
            raise click.exceptions.Exit(_interrupted(e)) from None
        except BrokenPipeError:  # the reader went away (`| head`): nothing more to say to it
            _silence_stdout()
            raise click.exceptions.Exit(EXIT_ERROR) from None
        except InputError as e:  # an output that is an input, a folder that is a file, ...
            click.echo(f"analyzer: error: {e}", err=True)
            raise click.exceptions.Exit(EXIT_ERROR) from None
        except Exception as e:
            from analyzer.running.dask import dask_failure  # imports no Dask

            said = dask_failure(e)  # first: distributed's CommClosedError is an OSError
            if said is not None:  # the Dask scheduler lost, unreachable or without workers: run again
                click.echo(f"analyzer: error: {said}", err=True)
                raise click.exceptions.Exit(EXIT_ERROR) from None
            if isinstance(e, MemoryError):
                click.echo("analyzer: error: out of memory", err=True)
                raise click.exceptions.Exit(EXIT_ERROR) from None
            if isinstance(e, OSError):  # a missing folder, a read-only or full disk, a truncated file
                where = f"{e.filename}: " if e.filename else ""
                click.echo(f"analyzer: error: {where}{e.strerror or e}", err=True)
                raise click.exceptions.Exit(EXIT_ERROR) from None
            raise  # a bug: main's last resort says so (exit 3)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [n for n in COMMANDS if importlib.util.find_spec(f"analyzer.commands.{COMMANDS[n]}") is not None]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        try:
            mod = importlib.import_module(f"analyzer.commands.{COMMANDS[name]}")
        except ModuleNotFoundError as e:
            if e.name == f"analyzer.commands.{COMMANDS[name]}":
                return None
            raise
        cmd: click.Command = mod.command
        return cmd


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="bieqi-analyzer")
def cli() -> None:
    """Replay, validate and audit 憋七 (Bie Qi) game logs.

    \b
    One vocabulary in every command:
      -o/--out PATH         where the command writes (a file; a folder for audit)
      --samples 8           hidden-hand deals per decision (at least), own information
      --max-samples 32      adaptive sampling's ceiling per decision
      --dd-samples 1        rollouts per option on the true deal (exact at --noise 0)
      --seed 0              every random choice; the same seed gives the same output
      --lang en|zh          the language HTML pages open in (each page has a switch)
    Moves count from 1 wherever people read them ("move 10"); machine outputs
    (JSON, Parquet, audit.json) also carry "action", the 0-based index into the
    log's actions: move 10 is action 9, $.actions[9].
    Progress goes to standard error, only on a terminal."""


def _closed_streams_to_devnull() -> None:
    """A standard stream the caller closed (``<&-``, ``>&-``) is None here: read as empty and written to nowhere, so the
    command still runs and exits with its own code, not an AttributeError."""
    import os

    for name, mode in (("stdin", "r"), ("stdout", "w"), ("stderr", "w")):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, mode))  # noqa: SIM115  # the process' stream, to its end


def _tolerant_streams() -> None:
    """Standard output and error whose encoding cannot hold a character (``PYTHONIOENCODING=ascii``, a Latin-1
    locale) write it as an escape (``\\u2663``) instead of ending the command with a UnicodeEncodeError. Only a
    stream with the strict handler is changed: UTF-8 output is unchanged (every character fits), and a
    handler Python chose (surrogateescape in its UTF-8 mode, backslashreplace on standard error) stays."""
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="backslashreplace")
            except (OSError, ValueError):  # a closed or foreign stream: left as it is
                pass


def _internal_error(e: Exception) -> None:
    """The last resort: an exception no check expected is a bug in the analyzer. One line says so (a script reading
    the exit code sees 3, never the 1 of "problems found" / "a pair flagged"), then the traceback for the bug report."""
    import traceback

    try:
        sys.stderr.write(f"analyzer: internal error (a bug in the analyzer, not in your input): "
                         f"{type(e).__name__}: {e}\n")
        sys.stderr.write("".join(traceback.format_exception(e)))
        sys.stderr.flush()
    except (OSError, ValueError):  # standard error gone too: the exit code still tells
        pass


def main(argv: list[str] | None = None) -> Any:
    from analyzer.running.collector import relax

    relax()  # before any command imports its layers (analyzer.running.collector: ~0.5 CPU-s of collections at the defaults)
    _closed_streams_to_devnull()
    _tolerant_streams()
    replaced = stops.unwinding()
    try:
        return cli.main(args=argv, prog_name="analyzer", standalone_mode=True)
    except SystemExit as e:  # a stop whose exception CPython swallowed still ends as a stop (analyzer.running.stops)
        stopped = stops.received()
        if stopped is not None and e.code in (None, 0, 1):
            sys.exit(128 + stopped)
        raise
    except KeyboardInterrupt as e:  # between the parsing and the command (click's own handler says "Aborted!")
        sys.exit(_interrupted(e))
    except OSError as e:  # the last resort for output click writes itself (--help, --version) to a full disk
        try:
            sys.stderr.write(f"analyzer: error: cannot write: {e.strerror or e}\n")
        except OSError:
            pass
        sys.exit(2)
    except Exception as e:  # noqa: BLE001 - the last resort: a bug, told apart from every finding by its exit code
        _internal_error(e)
        sys.exit(EXIT_INTERNAL)
    finally:
        stops.unwinding_back(replaced)


if __name__ == "__main__":
    main()
