"""``analyzer validate``: replay every hand; exit 0 all valid, 1 problems found, 2 usage/I-O error."""

from __future__ import annotations

import sys

import click
import orjson

from analyzer.commands.common import (
    help_epilog,
    lang_option,
    max_line_option,
    out_option,
    paths_argument,
    refuse_inputs,
    resolve_paths,
)


@click.command("validate", short_help="Replay every hand and report every problem in the logs.",
               epilog=help_epilog("analyzer validate logs/ --format json > problems.json",
                                  "0: every hand is valid", "1: problems found", "2: usage error or no input readable"))
@paths_argument
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text for people, json for programs.")
@max_line_option
@out_option("Also write an HTML page showing each problem on its replayed hand.", required=False, aliases=("--html",))
@lang_option
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Worker processes [default: 1 for inputs under 32 MB, else up to 4 by CPU count].")
def command(paths: tuple[str, ...], fmt: str, max_line_bytes: int, out: str | None, lang: str,
            jobs: int | None) -> None:
    """Replay every hand in PATHS (files, folders, or - for stdin) and report every problem.

    Problems name the file, line, hand and move (moves count from 1; JSON's "action" is the
    0-based index into the log's actions, so move N is $.actions[N-1])."""
    from analyzer.progress import Progress
    from analyzer.validate import validate

    html = out
    files = resolve_paths(paths)
    if html:
        refuse_inputs([html], files)
    bar = Progress("validate")
    summary = validate(files, max_line_bytes=max_line_bytes, on_progress=bar.phase("reading"), jobs=jobs)
    bar.close()
    if fmt == "json":
        sys.stdout.buffer.write(orjson.dumps(summary.to_dict(), option=orjson.OPT_INDENT_2) + b"\n")
    else:
        for p in summary.problems:
            click.echo(p.format())
        click.echo(f"{summary.hands} hands, {summary.valid_hands} valid, {len(summary.problems)} problems",
                   err=fmt == "text" and bool(summary.problems) and False)
    if html:
        from analyzer.report.validation import write_validation_report

        bar.phase("writing")
        write_validation_report(html, files, summary, lang=lang, inputs=files)
        bar.close()
    io_errors = [p for p in summary.problems if p.code == "io-error"]
    if io_errors and summary.hands == 0:
        sys.exit(2)
    sys.exit(1 if summary.problems else 0)
