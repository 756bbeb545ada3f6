"""The validation report: every problem, each shown on its hand replayed up to the failing action."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from typing import Any

import msgspec

from analyzer.logs import decoder, generate_lines, read_once
from analyzer.problems import CODES, Problem, path_text, shown_id
from analyzer.report.common import render_page, write_page
from analyzer.report.views import hand_data
from analyzer.validate import Summary

#: Problem rows listed on the page, and hands embedded for replay; the counts cover everything.
MAX_PROBLEM_ROWS = 5000
MAX_REPLAYED_HANDS = 300
#: The longest problem message a row shows whole.
MAX_MESSAGE = 2000


def _replayable(files: Sequence[str], problems: Sequence[Problem],
                steps: dict[int, int | None]) -> dict[tuple[str, int], dict[str, Any]]:
    """Re-read only the lines with problems (up to MAX_REPLAYED_HANDS) and replay them to the failure,
    each through its game's hand view; ``steps`` gets, by ``id(problem)``, the step its link opens.

    An input that cannot be read twice (standard input, a named pipe, ``<(zcat ...)``, a device: ``logs.read_once``)
    has its hands listed without a replay: opening a named pipe again waited for ever for a writer that was gone.
    Each file is read up to its last line with a problem. A line that holds another hand than the one checked there
    (the file was replaced or rewritten during the run) is not replayed: its problems would be drawn on a hand they
    are not about.
    """
    by_line: dict[tuple[str, int], list[Problem]] = {}
    for p in problems:
        if p.file is None or not p.line or p.file == "<stdin>":
            continue
        key = (p.file, p.line)
        if key in by_line or len(by_line) < MAX_REPLAYED_HANDS:
            by_line.setdefault(key, []).append(p)
    dec = decoder()
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for path in {f for f, _ in by_line}:
        if path not in files or read_once(path):
            continue
        last = max(n for f, n in by_line if f == path)
        try:
            for line in generate_lines(path):
                if line.line > last:
                    break
                key = (line.file, line.line)
                if key not in by_line or line.data is None:
                    continue
                try:
                    record = dec.decode(line.data)
                except (msgspec.ValidationError, msgspec.DecodeError):
                    continue  # a line that is not a record has nothing to replay
                if record.hand_id != by_line[key][0].hand_id:
                    continue  # the file changed since it was checked: this line holds another hand now
                hd = hand_data(record, problems=by_line[key])
                if hd is not None:
                    out[key] = hd
                    for p, shown in zip(by_line[key], hd["problems"]):
                        steps[id(p)] = shown.get("step", p.action)
        except (OSError, EOFError, ValueError):
            continue  # the summary already reports the unreadable file
    return out


def write_validation_report(path: str | os.PathLike[str], files: Sequence[str], summary: Summary, *,
                            lang: str = "en", inputs: Sequence[str] = ()) -> None:
    """Write the HTML validation report for ``summary`` (from ``validate(files)``); ``inputs`` names
    the paths as the user gave them."""
    steps: dict[int, int | None] = {}
    hands = _replayable(files, summary.problems, steps)
    keys = list(hands)
    index = {k: i for i, k in enumerate(keys)}
    shown = summary.problems[:MAX_PROBLEM_ROWS]
    # ids and messages cut to a readable size (problems.shown_id): a hostile log's long ids, repeated in every
    # problem of their hand, would make the page hundreds of times the log
    rows = [{"file": None if p.file is None else path_text(p.file), "line": p.line,
             "hand_id": None if p.hand_id is None else shown_id(p.hand_id),
             "action": p.action, "trick": p.trick,
             "step": steps.get(id(p), p.action), "seat": p.seat,
             "player": None if p.player is None else shown_id(p.player), "code": p.code,
             "message": shown_id(path_text(p.message), MAX_MESSAGE), "h": index.get((p.file or "", p.line or 0))}
            for p in shown]
    counts = summary.by_code or Counter(p.code for p in summary.problems)  # the summary keeps only the first
    total = max(summary.n_problems, len(summary.problems))
    data = {
        "validation": {"hands": summary.hands, "valid_hands": summary.valid_hands, "n_problems": total,
                       "by_code": [[c, n, CODES.get(c, "")] for c, n in counts.most_common()],
                       "problems": rows, "truncated": total - len(shown)},
        "hand_ids": [hands[k]["id"] for k in keys],
    }
    page = render_page("validation", lang=lang, data=data, stores={"hand": [hands[k] for k in keys]},
                       subtitle=" ".join(inputs))
    write_page(path, page)
