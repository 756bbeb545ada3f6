"""Regenerate the small sample logs (seeded, so the files are byte-identical every time).

    python samples/make_samples.py

legal.jsonl: legal hands covering every multiplier case (no 通, 通, 双通, 三通, 四通, 独头七 stacked,
独头七 with ``rules: {"dutou": "replace"}``). problems.jsonl: one hand a problem kind, with
problems.expected.json saying which code each line must raise and at which action.
"""

from __future__ import annotations

import json
import random
import sys
from datetime import datetime, timezone
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analyzer.corrupt import PLANTERS  # noqa: E402
from analyzer.logs import format_record, write_records  # noqa: E402
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
        hand = {**base, "hand_id": f"planted-{code}"}
        planted = plant(hand, rng)
        assert planted is not None, code
        line, got_code, action = planted
        lines.append(line)
        expected.append({"line": len(lines), "code": got_code, "action": action})
    lines.append(format_record(records[1]))
    lines.append(format_record(records[1]))  # the same hand id twice
    expected.append({"line": len(lines), "code": "duplicate-hand-id", "action": None})
    (HERE / "problems.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    (HERE / "problems.expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
