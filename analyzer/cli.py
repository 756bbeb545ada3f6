"""The ``analyzer`` command: thin click wrappers that parse options and call the layers below.

Each subcommand lives in ``analyzer/commands/<name>.py`` and is imported only when it runs, so
``analyzer validate`` does not pay for pandas or plotly.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any

import click

#: name -> module under analyzer.commands defining a click command called ``command``.
COMMANDS: dict[str, str] = {
    "validate": "validate",
    "simulate": "simulate",
    "decisions": "decisions",
    "players": "players",
    "audit": "audit",
    "report": "report",
}


class LazyGroup(click.Group):
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
      --samples 16          hidden-hand deals per decision (at least), own information
      --max-samples 32      adaptive sampling's ceiling per decision
      --dd-samples 1        rollouts per option on the true deal (exact at --noise 0)
      --seed 0              every random choice; the same seed gives the same output
      --lang en|zh          the language HTML pages open in (each page has a switch)
    Moves count from 1 wherever people read them ("move 10"); machine outputs
    (JSON, Parquet, audit.json) also carry "action", the 0-based index into the
    log's actions: move 10 is action 9, $.actions[9].
    Progress goes to standard error, only on a terminal."""


def main(argv: list[str] | None = None) -> Any:
    try:
        return cli.main(args=argv, prog_name="analyzer", standalone_mode=True)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
