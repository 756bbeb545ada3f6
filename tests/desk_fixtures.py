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


def daily_audits(folder: Path, days: int = DAYS) -> list[Path]:
    """The room cut into ``days`` days by its hands' order, audited cumulatively: day k's audit folder holds the audit
    of days 1..k (as a nightly job audits everything so far)."""
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
        r = run_cli("audit", str(cut), "--out", str(target), "--jobs", "1")
        assert r.exit_code in (0, 1), r.output  # 1: a pair flagged
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
