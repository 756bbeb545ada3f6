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
    """Replay, validate and audit 憋七 (Bie Qi) game logs."""


def main(argv: list[str] | None = None) -> Any:
    try:
        return cli.main(args=argv, prog_name="analyzer", standalone_mode=True)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
