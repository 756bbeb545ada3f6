"""``analyzer validate``: replay every hand; exit 0 all valid, 1 problems found, 2 usage/I-O error."""

from __future__ import annotations

import sys

import click
import orjson

from analyzer.commands.common import (
    end_progress,
    max_line_option,
    paths_argument,
    progress,
    refuse_inputs,
    resolve_paths,
)


@click.command("validate")
@paths_argument
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text for people, json for programs.")
@max_line_option
@click.option("--html", "html", type=click.Path(dir_okay=False), default=None,
              help="Also write an HTML page showing each problem on its replayed hand.")
@click.option("--lang", type=click.Choice(["en", "zh"]), default="en", show_default=True, help="Language of --html.")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Worker processes [default: 1 for inputs under 32 MB, else up to 4 by CPU count].")
def command(paths: tuple[str, ...], fmt: str, max_line_bytes: int, html: str | None, lang: str,
            jobs: int | None) -> None:
    """Replay every hand in PATHS (files, folders, or - for stdin) and report every problem."""
    from analyzer.validate import validate

    files = resolve_paths(paths)
    if html:
        refuse_inputs([html], files)
    tick = progress("validate")
    summary = validate(files, max_line_bytes=max_line_bytes, on_progress=tick, jobs=jobs)
    end_progress(tick)
    if fmt == "json":
        sys.stdout.buffer.write(orjson.dumps(summary.to_dict(), option=orjson.OPT_INDENT_2) + b"\n")
    else:
        for p in summary.problems:
            click.echo(p.format())
        click.echo(f"{summary.hands} hands, {summary.valid_hands} valid, {len(summary.problems)} problems",
                   err=fmt == "text" and bool(summary.problems) and False)
    if html:
        from analyzer.report.validation import write_validation_report

        write_validation_report(html, files, summary, lang=lang, inputs=files)
    io_errors = [p for p in summary.problems if p.code == "io-error"]
    if io_errors and summary.hands == 0:
        sys.exit(2)
    sys.exit(1 if summary.problems else 0)
