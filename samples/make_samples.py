"""Regenerate the small sample logs (seeded, so the files are byte-identical every time).

    python samples/make_samples.py

legal.jsonl: legal hands covering every multiplier case (no 通, 通, 双通, 三通, 四通, 独头七 stacked,
独头七 with ``rules: {"dutou": "replace"}``). problems.jsonl: one hand a problem kind, with
problems.expected.json saying which code each line must raise and at which action.
heiqi-sample.jsonl: four hands of 信阳黑七 (one table, heuristic players). borrow-sample.jsonl: four legal
hands of the 借牌 table game at one table (each loser deals the next); borrow-cheat.jsonl: two hands where
one player borrows while holding live cards (拿着活牌还借牌): invalid by design, for the hand page and audit.
"""

from __future__ import annotations

import json
import random
import sys
from datetime import datetime, timezone
from pathlib import Path

import msgspec
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analyzer.corrupt import PLANTERS  # noqa: E402
from analyzer.logs import format_record, write_records  # noqa: E402
from analyzer.simulate import borrow as borrow_sim  # noqa: E402
from analyzer.simulate import heiqi as heiqi_sim  # noqa: E402
from analyzer.variants.bieqi import Rules, make_record, play_random, random_deal  # noqa: E402

HERE = Path(__file__).resolve().parent
PLAYERS = ["alice", "bob", "chen", "dong"]


def find_hand(rng: random.Random, want: tuple[int, int], rules: Rules = Rules()):
    """Random deals and random legal play until the outcome has (number of 通, number of 独头七)."""
    while True:
        deal = random_deal(rng)
        st = play_random(deal, rng, rules)
        o = st.outcome()
        if (len(o.tong), len(o.dutou)) == want:
            return deal, st


def main() -> None:
    rng = random.Random(7)
    cases = [("plain", (0, 0), Rules()), ("tong", (1, 0), Rules()), ("shuangtong", (2, 0), Rules()),
             ("santong", (3, 0), Rules()), ("sitong", (4, 0), Rules()), ("dutou", (1, 1), Rules()),
             ("dutou-replace", (1, 1), Rules(dutou="replace"))]
    records = []
    start = datetime(2026, 11, 1, 20, 0, tzinfo=timezone.utc)
    for k, (name, want, rules) in enumerate(cases):
        deal, st = find_hand(rng, want, rules)
        ms, t = [], 0
        for _ in range(52):
            t += 400 + rng.randrange(3000)
            ms.append(t)
        records.append(make_record(st, deal, hand_id=f"sample-{name}", players=PLAYERS, table_id="t1",
                                   ms=ms, started_at=start.replace(minute=k)))
    write_records(HERE / "legal.jsonl", records)

    base = orjson.loads(format_record(records[0]))
    lines: list[bytes] = []
    expected = []
    for code, plant in sorted(PLANTERS.items()):
        # each planted hand timed a little later than the last: the planters that change only the result would
        # otherwise leave the same play under another id, a duplicate-deal of its own
        hand = {**base, "hand_id": f"planted-{code}",
                "actions": [dict(a, ms=a["ms"] + len(lines) + 1) for a in base["actions"]]}
        planted = plant(hand, rng)
        assert planted is not None, code
        line, got_code, action = planted
        lines.append(line)
        expected.append({"line": len(lines), "code": got_code, "action": action})
    # a hand told twice: the not-live one again under another id
    copy = orjson.loads(lines[next(k for k, e in enumerate(expected) if e["code"] == "not-live")])
    lines.append(orjson.dumps({**copy, "hand_id": "planted-duplicate-deal"}))
    expected.append({"line": len(lines), "code": "duplicate-deal", "action": None})
    lines.append(format_record(records[1]))
    lines.append(format_record(records[1]))  # the same hand id twice
    expected.append({"line": len(lines), "code": "duplicate-hand-id", "action": None})
    (HERE / "problems.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    (HERE / "problems.expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    other_games()


def other_games() -> None:
    """The samples of the other two games, from their seeded simulators."""
    write_records(HERE / "heiqi-sample.jsonl", heiqi_sim.simulate(hands=4, players=4, seed=2024, run_length=4).records)
    write_records(HERE / "borrow-sample.jsonl",
                  borrow_sim.simulate(hands=4, players=["alice", "bob", "chen", "dong"], seed=11,
                                      hands_per_table=4).records)
    cheat = borrow_sim.simulate(hands=2, players=["alice", "bob", "chen", "dong"], seed=12, colluders=1,
                                style="borrow", cheat_rate=1.0, cheat_limit=1, hands_per_table=2)
    write_records(HERE / "borrow-cheat.jsonl",  # ids of their own, so both files can be checked together
                  (msgspec.structs.replace(r, hand_id=f"cheat-{r.hand_id}", table_id=f"cheat-{r.table_id}")
                   for r in cheat.records))


if __name__ == "__main__":
    main()
