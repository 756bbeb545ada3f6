"""``analyzer validate``: replay every hand; exit 0 all valid, 1 problems found, 2 usage/I-O error."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import click
import orjson

from analyzer.commands.common import (
    MAX_COUNT,
    help_epilog,
    lang_option,
    max_line_option,
    out_option,
    paths_argument,
    refuse_inputs,
    resolve_paths,
)

if TYPE_CHECKING:
    from analyzer.problems import Problem
    from analyzer.validate import Summary


@click.command("validate", short_help="Replay every hand and report every problem in the logs.",
               epilog=help_epilog("analyzer validate logs/ --format json > problems.json",
                                  "0: every hand is valid", "1: problems found", "2: usage error or no input readable"))
@paths_argument
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text for people, json for programs.")
@max_line_option
@out_option("Also write an HTML page showing each problem on its replayed hand.", required=False)
@lang_option
@click.option("--jobs", type=click.IntRange(min=1, max=MAX_COUNT), default=None,
              help="Worker processes [default: 1 for inputs under 32 MB, else up to 4 by CPU count].")
def command(paths: tuple[str, ...], fmt: str, max_line_bytes: int, out: str | None, lang: str,
            jobs: int | None) -> None:
    """Replay every hand in PATHS (files, folders, or - for stdin) and report every problem.

    Problems name the file, line, hand and move (moves count from 1; JSON's "action" is the
    0-based index into the log's actions, so move N is $.actions[N-1])."""
    from analyzer.progress import Progress
    from analyzer.running.collector import freeze_at_exit
    from analyzer.validate import validate

    freeze_at_exit()
    if "numpy" not in sys.modules:
        # validation does no linear algebra: numpy's OpenBLAS would start a thread per core as it loads
        # (~0.04 s of CPU and wall) for nothing; a user's own setting stands
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    html = out
    if html is not None:
        from analyzer.logs import descriptor_of

        if descriptor_of(html) == 1:
            raise click.BadParameter("standard output carries the problems; name a file for the page (-o page.html)",
                                     param_hint="-o")
    files = resolve_paths(paths, keep_missing=True)  # a missing path or broken link: an io-error, the rest read
    if html:
        refuse_inputs([html], files)
    bar = Progress("validate")
    emit, finish = problem_stream(fmt)
    total = bar.count_input(files)  # the hands' total makes the rate an ETA
    tick = bar.phase("checking", total)
    summary = validate(files, max_line_bytes=max_line_bytes, on_progress=tick, jobs=jobs, on_problem=emit)
    if tick is not None:  # validate reports every 1,024 hands: the last count is the whole input's
        tick(summary.hands)
    bar.close()
    finish(summary)
    if html:
        from analyzer.report.validation import write_validation_report

        wrote = bar.done("writing", 1, "files")
        write_validation_report(html, files, summary, lang=lang, inputs=files)
        wrote()
        bar.close()
    if summary.by_code["io-error"] and summary.hands == 0:
        sys.exit(2)
    sys.exit(1 if summary.n_problems else 0)


def problem_stream(fmt: str) -> tuple[Callable[[Problem], None], Callable[[Summary], None]]:
    """Write each problem as it is found (constant memory however many): a line of text, or one element of
    the JSON document's ``problems`` array, which ``finish`` closes with the counts (still one document)."""
    out = sys.stdout
    if fmt == "json":
        sep = ["\n  "]
        out.write('{"problems": [')

        def emit_json(p: Problem) -> None:
            out.write(sep[0] + orjson.dumps(p.to_dict()).decode())
            sep[0] = ",\n  "

        def finish_json(s: Summary) -> None:
            tail = {"hands": s.hands, "valid_hands": s.valid_hands, "n_problems": s.n_problems,
                    "problem_counts": dict(s.by_code.most_common())}
            out.write(("\n" if s.n_problems else "") + "], " + orjson.dumps(tail).decode()[1:] + "\n")
            out.flush()

        return emit_json, finish_json

    def emit_text(p: Problem) -> None:
        out.write(p.format() + "\n")  # format() escapes control characters

    def finish_text(s: Summary) -> None:
        out.write(f"{s.hands} hands, {s.valid_hands} valid, {s.n_problems} problems\n")
        out.flush()

    return emit_text, finish_text
