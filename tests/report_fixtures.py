"""Report test data from a real, small, seeded audit: a simulated room with one planted pair and hostile ids.

:func:`audit_run` simulates a room, gives its players, one hand and one table ids built to attack a page,
and runs the real audit on it (:func:`analyzer.audit.core.run_audit`), so the pages are tested on the
records, decision rows and audit.json the product writes (``tests/report/test_report_fixtures.py`` checks the
audit against its schema). The ``audit_run`` fixture in conftest.py caches it for the test session.
:func:`big_room` scales it up for the page-speed benchmark: numpy decision rows of 10,000 hands and an
audit whose entries are copies of the real run's, renamed.
"""

from __future__ import annotations

import copy
import random
from statistics import NormalDist
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from analyzer.analysis.options import empty_options
from analyzer.variants.bieqi import Record, make_record, play_random, random_deal

#: Ids a log could carry to attack a page: each must show as text and never run.
EVIL_PLAYER = "<img src=x onerror=alert(1)>"
EVIL_HAND = "</script><script>alert(2)</script>"
EVIL_TABLE = "\"'><svg onload=alert(3)>&amp;"
#: The room's players: the first two are the planted (colluding) pair.
PLAYERS = [EVIL_PLAYER, "北风", "p2</script>", "p3", "p4", "p5"]

#: The audited room: small enough for a few seconds, large enough that the planted pair is flagged.
ROOM_HANDS = 60
ROOM_SEED = 4
AUDIT_SAMPLES = 4
AUDIT_DD_SAMPLES = 2


@dataclass(frozen=True)
class AuditRun:
    """One real audit: its input log and records, the decision rows behind it and audit.json."""

    log: Path
    records: list[Record]
    decisions: pd.DataFrame
    audit: dict[str, Any]
    planted: tuple[str, str]


def audit_run(folder: Path) -> AuditRun:
    """Simulate the room (one pair sharing hands), rename its players to :data:`PLAYERS` (the planted pair
    first), its first hand to :data:`EVIL_HAND` at table :data:`EVIL_TABLE`, write it to ``folder`` and audit it."""
    from analyzer.audit.core import run_audit
    from analyzer.logs import write_records
    from analyzer.simulate.room import simulate

    sim = simulate(hands=ROOM_HANDS, players=len(PLAYERS), seed=ROOM_SEED, colluders=1, style="share")
    records = list(sim.records)
    pair = sim.truth["colluding_pairs"][0]["players"]
    ids = sorted({p for r in records for p in r.players})
    order = pair + [p for p in ids if p not in pair]
    name = dict(zip(order, PLAYERS, strict=True))
    records = [msgspec.structs.replace(r, players=[name[p] for p in r.players]) for r in records]
    records[0] = msgspec.structs.replace(records[0], hand_id=EVIL_HAND, table_id=EVIL_TABLE)
    log = folder / "room.jsonl"
    write_records(log, records)
    result = run_audit([str(log)], samples=AUDIT_SAMPLES, dd_samples=AUDIT_DD_SAMPLES, seed=0)
    return AuditRun(log, records, result.decisions, result.result, (PLAYERS[0], PLAYERS[1]))


def room(hands: int = 6, seed: int = 1) -> list[Record]:
    """Seeded legal hands of random play; seats rotate so every player sits everywhere; hostile ids on hand 0."""
    rng = random.Random(seed)
    out = []
    for h in range(hands):
        deal = random_deal(rng)
        st = play_random(deal, rng)
        ms = [1500 * (i + 1) + rng.randrange(1200) for i in range(52)]
        players = PLAYERS[h % 4:4] + PLAYERS[: h % 4]
        out.append(make_record(st, deal, hand_id=EVIL_HAND if h == 0 else f"h{h}", players=players,
                               table_id=EVIL_TABLE, ms=ms))
    return out


def _renamed(obj: Any, names: dict[str, str]) -> Any:
    """A deep copy of a JSON value with every string that is a key of ``names`` replaced (keys kept)."""
    if isinstance(obj, str):
        return names.get(obj, obj)
    if isinstance(obj, list):
        return [_renamed(x, names) for x in obj]
    if isinstance(obj, dict):
        return {k: _renamed(v, names) for k, v in obj.items()}
    return copy.copy(obj)


def big_room(run: AuditRun, hands: int = 10_000, players: int = 40, per_hand: int = 30,
             seed: int = 3) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Decision rows of a large room (built with numpy, no replay) and an audit.json of it whose pair and
    player entries are the real run's, renamed and rescored: the shapes of a real audit at volume."""
    rng = np.random.default_rng(seed)
    ids = [f"q{i:02d}" for i in range(players)]
    seats = np.argsort(rng.random((hands, players)), axis=1)[:, :4]
    n = hands * per_hand
    hand = np.repeat(np.arange(hands), per_hand)
    seat = np.tile(np.arange(per_hand) % 4, hands)
    names = np.array(ids, dtype=object)
    regret = rng.exponential(1.0, n) * (rng.random(n) < 0.6)
    frame = pd.DataFrame({
        "hand_id": np.char.add("b", hand.astype(str)).astype(object), "hand_seq": hand,
        "action": np.tile(np.arange(per_hand), hands) + 1, "seat": seat, "player": names[seats[hand, seat]],
        **{f"p{k}": names[seats[hand, k]] for k in range(4)}, "kind": "play",
        "chosen": np.where(regret > 0, "8H", "6H").astype(object), "best": "6H", "rank": (regret > 0).astype(int),
        "regret": regret, "regret_se": 0.3, **{f"delta{k}": rng.normal(0, 1, n) for k in range(4)},
        "dd_regret": regret, "think_ms": rng.lognormal(7, 0.5, n), "difficulty": rng.random(n),
        "reasons": "", "options": empty_options(n)})
    real = run.audit
    flagged_t = next(p for p in real["pairs"] if p["verdict"] == "flagged")
    clear_t = [p for p in real["pairs"] if p["verdict"] == "clear"]
    hand_ids = sorted({e["hand_id"] for p in real["pairs"] for e in p["evidence"]})
    pairs: list[dict[str, Any]] = []
    npairs = players * (players - 1) // 2
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            flagged = (a, b) in (("q00", "q01"), ("q02", "q03"))
            t = flagged_t if flagged else clear_t[len(pairs) % len(clear_t)]
            names_map = {t["players"][0]: a, t["players"][1]: b}
            e = _renamed(t, {**names_map, **{h: f"b{rng.integers(hands)}" for h in hand_ids}})
            score = float(abs(rng.normal(8 if flagged else 0.5, 1)))
            p = 10 ** -score
            e.update(hands_together=int(rng.integers(50, 400)), score=round(score, 4), log10_p=round(-score, 4),
                     z=round(NormalDist().inv_cdf(1 - p), 4) if p < 1 else 0.0, p_value=float(f"{p:.4g}"),
                     q_value=min(1.0, float(f"{p * npairs:.4g}")))
            pairs.append(e)
    pairs.sort(key=lambda p: -p["score"])
    player_t = real["players"][0]
    audit = {**{k: copy.deepcopy(v) for k, v in real.items() if k not in ("pairs", "players")},
             "hands": hands, "decisions": n, "valid_hands": hands,
             "verdicts": {v: sum(p["verdict"] == v for p in pairs) for v in ("flagged", "review", "clear")},
             "players": [{**player_t, "player": q, "flagged_with": []} for q in ids], "pairs": pairs}
    return frame, audit
