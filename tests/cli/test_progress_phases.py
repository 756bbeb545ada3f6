"""The audit's progress, phase by phase, read through the bar's listener: every phase has a total, its counts only
go up and end at it; the pair signals count their passes over the chunks; with a decision store the hands are
counted as they are read, not "0 of N" until a jump."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import on_a_terminal, run_cli

import analyzer.progress

Event = tuple[str, int, "int | None"]


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Event]]:
    """Every (phase, done, total) the audit's bar sees, as a terminal would show them."""
    seen: list[Event] = []
    real = analyzer.progress.Progress

    class Watched(real):  # type: ignore[misc,valid-type]
        def __init__(self, command: str, **kw: object) -> None:
            super().__init__(command, **kw, enabled=False, listener=lambda *e: seen.append(e))  # type: ignore[arg-type]

    monkeypatch.setattr(analyzer.progress, "Progress", Watched)
    yield seen


def runs(events: list[Event]) -> list[tuple[str, list[Event]]]:
    """The events cut into runs of one phase (a phase may be entered again: a run each time; a phase started without
    its total and started again at once with it is one run)."""
    out: list[tuple[str, list[Event]]] = []
    for e in events:
        if out and out[-1][0] == e[0] and (e[1] != 0 or all(n == 0 for _, n, _ in out[-1][1])):
            out[-1][1].append(e)
        else:
            out.append((e[0], [e]))
    return out


def check_runs(events: list[Event]) -> dict[str, list[list[Event]]]:
    by: dict[str, list[list[Event]]] = {}
    for name, run in runs(events):
        counts = [n for _, n, _ in run]
        assert counts == sorted(counts), (name, counts)  # only up
        totals = {t for _, _, t in run[1:]} or {run[0][2]}
        assert None not in totals, (name, run[:3])  # every phase has a total, so an ETA
        by.setdefault(name, []).append(run)
    return by


def _room(folder: Path, colluders: int) -> Path:
    log = folder / f"room-{colluders}.jsonl"
    r = run_cli("simulate", "--hands", "600", "--players", "8", "--colluders", str(colluders), "--seed", "3", "-o",
                str(log))
    assert r.exit_code == 0, r.output
    return log


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _room(tmp_path_factory.mktemp("progress"), 1)


@pytest.mark.parametrize("colluders", [1, 0])  # pairs that stand out (the signals' second fit) and none
def test_every_phase_of_the_audit_counts_towards_its_total(room: Path, tmp_path: Path, events: list[Event],
                                                           colluders: int) -> None:
    log = room if colluders else _room(tmp_path, 0)
    events.clear()
    r = run_cli("audit", str(log), "-o", str(tmp_path / "a"), "--jobs", "1", "--samples", "2", "--dd-samples", "2")
    assert r.exit_code in (0, 1), r.output
    by = check_runs(events)
    assert list(by)[:2] == ["reading", "analysing"] and {"signals", "cases", "writing"} <= set(by)
    assert set(by) <= {"reading", "analysing", "signals", "cases", "writing"}
    reading = by["reading"][-1]
    assert reading[-1][1] == reading[-1][2] == log.stat().st_size  # the bytes of the input
    analysing = [e for run in by["analysing"] for e in run]
    assert analysing[0][2] == 600 and analysing[-1][1] == 600  # the hands, towards the input's lines
    signals = [e for run in by["signals"] for e in run if e[2] is not None]
    steps = {t for _, _, t in signals}
    assert len(steps) == 1 and steps.pop() > 11  # 11 passes over 3 chunks, counted chunk by chunk
    assert len({n for _, n, _ in signals}) > 11 and signals[-1][1] == signals[-1][2]
    cases = by["cases"][-1]
    assert cases[-1][1] == cases[-1][2] > 8  # each pair's entry, then each player's rows
    writing = by["writing"][-1]
    assert [n for _, n, _ in writing] == [0, 1, 2, 3, 4] and writing[-1][2] == 4


def test_with_a_store_the_hands_are_counted_as_they_are_read(room: Path, tmp_path: Path,
                                                            events: list[Event]) -> None:
    store = tmp_path / "store"
    r = run_cli("decisions", str(room), "--out", str(store), "--samples", "2", "--dd-samples", "2", "--jobs", "1")
    assert r.exit_code == 0, r.output
    events.clear()
    r = run_cli("audit", str(room), "-o", str(tmp_path / "a"), "--decisions", str(store), "--jobs", "1")
    assert r.exit_code in (0, 1), r.output
    by = check_runs(events)
    store_runs = [e for run in by["store"] for e in run]
    assert store_runs[0][2] == 600 and store_runs[-1][1] == 600
    # counted as its rows are passed on, a chunk of hands at a time: not 0 then all
    assert len({n for _, n, _ in store_runs}) >= 3
    analysing = [e for run in by["analysing"] for e in run]
    assert analysing[-1][1] == 600 and len({n for _, n, _ in analysing}) >= 3  # every hand read, none analysed again
    # the store's parts passed on in frames of a few hands: the same audit as the logs analysed afresh
    r = run_cli("audit", str(room), "-o", str(tmp_path / "b"), "--jobs", "1", "--samples", "2", "--dd-samples", "2")
    assert r.exit_code in (0, 1), r.output
    assert (tmp_path / "a" / "audit.json").read_bytes() == (tmp_path / "b" / "audit.json").read_bytes()


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="no pseudo-terminals here")
def test_on_a_terminal_the_bars_show_their_totals(room: Path, tmp_path: Path) -> None:
    """The real command with standard error on a terminal of 120 columns: each phase's bar shows its count of a total
    (tqdm's ``n/total``), the pair signals' included."""
    code, _, shown = on_a_terminal("audit", str(room), "-o", str(tmp_path / "a"), "--jobs", "1", "--samples", "2",
                                   "--dd-samples", "2", timeout=300, columns=120)
    assert code in (0, 1)
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", shown)
    assert "Traceback" not in text
    for phase, unit in (("analysing", "hands"), ("signals", "steps"), ("cases", "steps"), ("writing", "files")):
        assert re.search(rf"audit: {phase}: +\d+%\|.*\| \d+/\d+ \[.*{unit}/s", text), (phase, text[-2000:])


def _totals_end_at_their_totals(by: dict[str, list[list[Event]]], log: Path, hands: int) -> None:
    reading = by["reading"][-1]
    assert reading[-1][1] == reading[-1][2] == log.stat().st_size  # the input's bytes, counted first
    writing = by["writing"][-1]
    assert writing[0][2] == writing[-1][1] == 1  # the page, or the store's commit


def test_validate_decisions_and_report_count_towards_their_totals(room: Path, tmp_path: Path,
                                                                   events: list[Event]) -> None:
    """The other commands' phases, as the audit's: the input's bytes, then its hands towards their total, then the
    output written, each phase with a total (so an ETA)."""
    r = run_cli("validate", str(room), "-o", str(tmp_path / "v.html"))
    assert r.exit_code == 0, r.output
    by = check_runs(events)
    assert list(by) == ["reading", "checking", "writing"]
    _totals_end_at_their_totals(by, room, 600)
    checking = by["checking"][-1]
    assert checking[0][2] == 600 and checking[-1][1] == 600

    events.clear()
    store = tmp_path / "store"
    r = run_cli("decisions", str(room), "--out", str(store), "--samples", "2", "--dd-samples", "0", "--jobs", "1")
    assert r.exit_code == 0, r.output
    by = check_runs(events)
    assert list(by) == ["reading", "analysing", "writing"]
    _totals_end_at_their_totals(by, room, 600)
    analysing = [e for run in by["analysing"] for e in run]
    assert analysing[0][2] == 600 and analysing[-1][1] == 600

    events.clear()
    r = run_cli("report", str(room), "--player", "p01", "--decisions", str(store), "-o", str(tmp_path / "p.html"))
    assert r.exit_code == 0, r.output
    by = check_runs(events)
    assert list(by) == ["reading", "replaying", "analysing", "writing"]
    _totals_end_at_their_totals(by, room, 600)
    replaying = by["replaying"][-1]
    assert replaying[0][2] == 600 and replaying[-1][1] == 600
