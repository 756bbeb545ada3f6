"""Audits that feed the cases database: a seeded room audited day by day, and small results made by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import run_cli

#: The room the daily looks audit: 400 hands, 8 players, one pair sharing information (p07 + p08 at seed 3).
ROOM = {"hands": 400, "players": 8, "colluders": 1, "seed": 3}
DAYS = 4
#: The pair the room's colluders make.
COLLUDERS = ("p07", "p08")


#: The cases database the daily audits record their looks in (``--cases``), in their folder.
CASES_FILE = "cases.sqlite"


def summary_of(folder: Path, day: int) -> str:
    """What day ``day``'s audit printed (its standard output)."""
    return (folder / f"summary-day{day}.txt").read_text(encoding="utf-8")


def daily_audits(folder: Path, days: int = DAYS) -> list[Path]:
    """The room cut into ``days`` days by its hands' order, audited cumulatively: day k's audit folder holds the audit
    of days 1..k (as a nightly job audits everything so far), each look recorded in ``folder``/:data:`CASES_FILE`
    and its summary kept (:func:`summary_of`)."""
    room = folder / "room.jsonl"
    r = run_cli("simulate", "--hands", str(ROOM["hands"]), "--players", str(ROOM["players"]), "--colluders",
                str(ROOM["colluders"]), "--seed", str(ROOM["seed"]), "-o", str(room))
    assert r.exit_code == 0, r.output
    lines = room.read_bytes().splitlines(keepends=True)
    per_day = len(lines) // days
    out = []
    for k in range(1, days + 1):
        cut = folder / f"days-1-{k}.jsonl"
        cut.write_bytes(b"".join(lines[: per_day * k]))
        target = folder / f"audit-day{k}"
        r = run_cli("audit", str(cut), "--out", str(target), "--jobs", "1", "--cases", str(folder / CASES_FILE))
        assert r.exit_code in (0, 1), r.output  # 1: a pair flagged
        (folder / f"summary-day{k}.txt").write_text(r.stdout, encoding="utf-8")
        assert (target / "audit.json").is_file() and (target / "report.html").is_file()
        out.append(target)
    return out


def pair(a: str, b: str, verdict: str = "flagged", score: float | None = 8.0, hands: int = 50,
         signal: str | None = "burst", **extra: Any) -> dict[str, Any]:
    """A pair's entry of audit.json with the fields a look reads."""
    p = None if score is None else 10.0 ** -score
    return {"players": [a, b], "hands_together": hands, "verdict": verdict, "score": score,
            "log10_p": None if score is None else -score, "p_value": p, "q_value": p, "effect_size": 1.0,
            "main_signal": signal, "signals": {} if signal is None else {signal: {"p": p, "hands": hands}},
            **extra}


def result(*pairs: dict[str, Any], hands: int = 200, **extra: Any) -> dict[str, Any]:
    """An audit's result (audit.json's content) holding ``pairs``."""
    return {"format": "bieqi-audit", "version": 1, "hands": hands,
            "alarm": {"alpha": 1e-5, "fdr": 0.05, "min_hands": 10}, "pairs": list(pairs), **extra}
