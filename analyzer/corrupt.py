"""Plant one known problem in a legal standard hand: for samples, property tests and pipeline checks.

Each planter takes a legal hand as a JSON object (``dict``), a seeded ``random.Random`` and returns
``(line bytes, code, action index or None)`` — what ``validate`` must report, and where.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

import orjson

from analyzer.cards import format_card, parse_card, scan
from analyzer.variants.bieqi import COVER, State

Planted = tuple[bytes, str, int | None]


def _replay_to(hand: dict[str, Any], i: int) -> State:
    deal = [sum(1 << parse_card(c) for c in seat) for seat in hand["deal"]]
    st = State(deal)
    for a in hand["actions"][:i]:
        c = parse_card(a["card"])
        st.push(c + COVER if a["kind"] == "cover" else c)
    return st


def _dump(obj: Any) -> bytes:
    return orjson.dumps(obj)


def _pick(rng: random.Random, hand: dict[str, Any], ok: Callable[[State, dict[str, Any]], bool],
          lo: int = 1) -> tuple[int, State] | None:
    """A random action index >= lo whose position satisfies ``ok``."""
    idx = list(range(lo, len(hand["actions"])))
    rng.shuffle(idx)
    for i in idx:
        st = _replay_to(hand, i)
        if ok(st, hand["actions"][i]):
            return i, st
    return None


def first_action(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    h = copy.deepcopy(hand)
    h["actions"][0], h["actions"][1] = h["actions"][1], h["actions"][0]
    return _dump(h), "first-action", 0


def out_of_turn(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    h = copy.deepcopy(hand)
    i = rng.randrange(1, len(h["actions"]))
    a = h["actions"][i]
    a["seat"] = (a["seat"] + rng.randrange(1, 4)) % 4
    return _dump(h), "out-of-turn", i


def card_not_held(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    got = _pick(rng, hand, lambda st, a: any(st.hands[s] for s in range(4) if s != st.turn))
    if got is None:
        return None
    i, st = got
    others = [c for s in range(4) if s != st.turn for c in scan(st.hands[s])]
    h = copy.deepcopy(hand)
    h["actions"][i]["card"] = format_card(rng.choice(others))
    return _dump(h), "card-not-held", i


def not_live(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    got = _pick(rng, hand, lambda st, a: a["kind"] == "play" and bool(st.hands[st.turn] & ~st.live))
    if got is None:
        return None
    i, st = got
    h = copy.deepcopy(hand)
    h["actions"][i]["card"] = format_card(rng.choice(list(scan(st.hands[st.turn] & ~st.live))))
    return _dump(h), "not-live", i


def cover_with_live(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    got = _pick(rng, hand, lambda st, a: a["kind"] == "play")
    if got is None:
        return None
    i, _ = got
    h = copy.deepcopy(hand)
    h["actions"][i]["kind"] = "cover"
    return _dump(h), "cover-with-live", i


def missing_actions(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    h = copy.deepcopy(hand)
    cut = rng.randrange(1, len(h["actions"]))
    del h["actions"][cut:]
    h.pop("result", None)
    return _dump(h), "missing-actions", cut


def extra_actions(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    h = copy.deepcopy(hand)
    h["actions"].append(dict(h["actions"][-1]))
    return _dump(h), "extra-actions", len(hand["actions"])


def time_backwards(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    h = copy.deepcopy(hand)
    for j, a in enumerate(h["actions"]):  # a clean clock first, so exactly one step goes back
        a["ms"] = 1000 * (j + 1)
    i = rng.randrange(1, len(h["actions"]))
    h["actions"][i]["ms"] = 1000 * i - 1 - rng.randrange(999)
    return _dump(h), "time-backwards", i


def result_mismatch(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    h = copy.deepcopy(hand)
    scores = h.setdefault("result", {"scores": [0, 0, 0, 0]})["scores"]
    if len(set(scores)) > 1:
        a, b = rng.sample([s for s in range(4)], 2)
        while scores[a] == scores[b]:
            a, b = rng.sample([s for s in range(4)], 2)
        scores[a], scores[b] = scores[b], scores[a]
    else:
        scores[0] += 4
        scores[1] -= 4
    return _dump(h), "result-mismatch", None


def result_not_zero_sum(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    h = copy.deepcopy(hand)
    h.setdefault("result", {"scores": [0, 0, 0, 0]})["scores"][rng.randrange(4)] += 1 + rng.randrange(9)
    return _dump(h), "result-not-zero-sum", None


def bad_card(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    h = copy.deepcopy(hand)
    i = rng.randrange(len(h["actions"]))
    h["actions"][i]["card"] = rng.choice(["1S", "7X", "ZZ", "", "77", "KK"])
    return _dump(h), "bad-card", i


def bad_deal(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    h = copy.deepcopy(hand)
    s, t = rng.sample(range(4), 2)
    h["deal"][t].append(h["deal"][s].pop())
    return _dump(h), "bad-deal", None


def bad_players(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    h = copy.deepcopy(hand)
    s, t = rng.sample(range(4), 2)
    h["players"][t] = h["players"][s]
    return _dump(h), "bad-players", None


def missing_field(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    h = copy.deepcopy(hand)
    del h[rng.choice(["deal", "players", "actions", "hand_id"])]
    return _dump(h), "missing-field", None


def extra_field(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    h = copy.deepcopy(hand)
    h["comment"] = "not part of v1"
    return _dump(h), "extra-field", None


def bad_type(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    h = copy.deepcopy(hand)
    i = rng.randrange(len(h["actions"]))
    h["actions"][i]["seat"] = str(h["actions"][i]["seat"])
    return _dump(h), "bad-type", i


def unknown_format(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    return _dump({**hand, "format": "sevens-log"}), "unknown-format", None


def unknown_version(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    return _dump({**hand, "version": 2}), "unknown-version", None


def unknown_variant(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    return _dump({**hand, "variant": "fan-tan"}), "unknown-variant", None


def bad_time(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    return _dump({**hand, "started_at": "yesterday at noon"}), "bad-time", None


def bad_rules(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    return _dump({**hand, "rules": {"dutou": "sometimes"}}), "bad-rules", None


def not_json(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    line = _dump(hand)
    return line[: rng.randrange(1, len(line) - 1)], "not-json", None


def not_object(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    return _dump([hand]), "not-object", None


def not_utf8(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    line = _dump(hand)
    k = rng.randrange(1, len(line) - 1)
    return line[:k] + b"\xff\xfe" + line[k:], "not-utf8", None


#: problem code -> planter, for every per-hand problem kind of the standard game
PLANTERS: dict[str, Callable[[dict[str, Any], random.Random], Planted | None]] = {
    f.__name__.replace("_", "-"): f
    for f in (first_action, out_of_turn, card_not_held, not_live, cover_with_live, missing_actions,
              extra_actions, time_backwards, result_mismatch, result_not_zero_sum, bad_card, bad_deal,
              bad_players, missing_field, extra_field, bad_type, unknown_format, unknown_version,
              unknown_variant, bad_time, bad_rules, not_json, not_object, not_utf8)
}



# --------------------------------------------------------------------------- hostile corruptions
# What a hostile log does beyond honest mistakes: codes that only look right joined, numbers out of
# every range, repeated keys. Kept apart from PLANTERS, which makes samples/problems.jsonl.

def split_codes(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    """Two neighbouring codes split at the wrong place ("7S", "8S" -> "7", "S8S"): the joined text is unchanged."""
    h = copy.deepcopy(hand)
    if rng.random() < 0.5:
        s, j = rng.randrange(4), rng.randrange(12)
        a, b = h["deal"][s][j], h["deal"][s][j + 1]
        h["deal"][s][j], h["deal"][s][j + 1] = a[0], a[1:] + b
        return _dump(h), "bad-card", None
    i = rng.randrange(len(h["actions"]) - 1)
    a, b = h["actions"][i]["card"], h["actions"][i + 1]["card"]
    h["actions"][i]["card"], h["actions"][i + 1]["card"] = a + b[0], b[1:]
    return _dump(h), "bad-card", i


def out_of_range(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    """A number outside its range: a seat, a time or a recorded score, up to beyond 64 bits."""
    h = copy.deepcopy(hand)
    i = rng.randrange(len(h["actions"]))
    field = rng.choice(["seat", "ms", "scores"])
    if field == "scores" and "result" in h:
        h["result"]["scores"][rng.randrange(4)] = rng.choice([2**53, -(2**63), 2**64 - 1])
        return _dump(h), "bad-type", None
    if field == "ms":
        h["actions"][i]["ms"] = rng.choice([-1, 2**53, 2**63, 2**64 - 1])
        return _dump(h), "bad-type", i
    big = rng.choice([4, -1, 2**63, 10**30])
    if big > 2**64:  # beyond what orjson writes: put the digits in the text
        line = _dump({**h, "actions": [*h["actions"][:i], {**h["actions"][i], "seat": 0}, *h["actions"][i + 1:]]})
        marker = _dump(h["actions"][i] | {"seat": 0})
        return line.replace(marker, marker.replace(b'"seat":0', b'"seat":' + str(big).encode(), 1), 1), "bad-type", i
    h["actions"][i]["seat"] = big
    return _dump(h), "bad-type", i


def rules_out_of_range(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    """Rule options past their bounds, which would make the 64-bit scorer wrap."""
    rules = rng.choice([{"cover_doubling": [0] * rng.randrange(9, 100)}, {"cover_doubling": [10**6]},
                        {"dutou_factor": 2**63}, {"dutou_factor": 0}, {"tong_factors": [1, 2, 4, 8, 2**40]}])
    return _dump({**hand, "rules": rules}), "bad-rules", None


def duplicate_key(hand: dict[str, Any], rng: random.Random) -> Planted | None:
    """A key twice in one object: the last value would win silently in a fast parser."""
    line = _dump(hand)
    key = rng.choice([b'"hand_id":', b'"card":', b'"seat":'])
    k = line.index(key)
    # a standard hand's first "card" and "seat" keys are its first action's
    return line[:k] + key + b'"x",' + line[k:], "duplicate-key", None if key == b'"hand_id":' else 0


#: problem code -> planter for hostile corruptions (the property tests use these and PLANTERS)
HOSTILE_PLANTERS: dict[str, Callable[[dict[str, Any], random.Random], Planted | None]] = {
    f.__name__.replace("_", "-"): f for f in (split_codes, out_of_range, rules_out_of_range, duplicate_key)
}
