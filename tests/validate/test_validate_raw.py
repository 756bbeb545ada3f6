"""The compiled check that reads hands straight from their JSON lines (``kernels.bieqi.scan_hands``).

It reads the deal and the actions from the bytes and looks for repeated keys on the way, so it must
find what the Python path finds on every line a hostile or foreign writer can produce: other key
orders, spaces, escapes, other card spellings, times missing or backwards, repeated keys, and every
planted problem. Each test checks a batch big enough for the compiled path against each line
checked alone (the Python path: exact key check, then the engine), problem for problem, and the
kernel's own verdict against the engine's. Two meta-tests break the kernel both ways.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import orjson
import pytest
from conftest import legal_obj

import analyzer.kernels.bieqi as kernel
from analyzer.corrupt import HOSTILE_PLANTERS, PLANTERS
from analyzer.logs import Line, decoder
from analyzer.validate import check_lines
from analyzer.variants.base import HandCheck
from analyzer.variants.bieqi import FAST_PATH_MIN, VARIANT

RESULT_CODES = {"result-mismatch", "result-not-zero-sum"}


def _dump(obj: Any) -> bytes:
    return orjson.dumps(obj)


def foreign_spellings(hand: dict[str, Any], rng: random.Random) -> list[tuple[str, bytes]]:
    """A legal hand as other writers may spell it: (name, line). Every one is a legal record."""
    out = []
    keys = list(hand)
    rng.shuffle(keys)
    shuffled = {k: hand[k] for k in keys}
    shuffled["actions"] = [dict(sorted(a.items(), reverse=True)) for a in hand["actions"]]
    out.append(("key order", _dump(shuffled)))
    import json

    out.append(("spaces", json.dumps(hand, separators=(" , ", " : "), ensure_ascii=False).encode()))
    out.append(("tabs", json.dumps(hand, indent="\t").replace("\n", " ").encode()))
    no_ms = {**hand, "actions": [{k: v for k, v in a.items() if k != "ms"} for a in hand["actions"]]}
    out.append(("no times", _dump(no_ms)))
    some_null = {**hand, "actions": [{**a, "ms": None} if i % 3 == 0 else a for i, a in enumerate(hand["actions"])]}
    out.append(("null times", _dump(some_null)))
    no_result = {k: v for k, v in hand.items() if k != "result"}
    out.append(("no result", _dump(no_result)))
    return out


def odd_spellings(hand: dict[str, Any], rng: random.Random) -> list[tuple[str, bytes]]:
    """Lines that decode but that the scan does not read itself (or reads and finds wrong)."""
    line = _dump(hand)
    i = rng.randrange(52)
    card = hand["actions"][i]["card"]
    out = [
        ("escaped card", line.replace(f'"card":"{card}"'.encode(), f'"card":"{card[0]}\\u00{ord(card[1]):02x}"'.encode())),
        ("lower-case card", line.replace(f'"card":"{card}"'.encode(), f'"card":"{card.lower()}"'.encode())),
        ("suit symbol", line.replace(f'"card":"{card}"'.encode(), f'"card":"{card[0]}{"♠♥♦♣"["SHDC".index(card[1])]}"'.encode())),
        ("escaped kind", line.replace(b'"kind":"play"', b'"kind":"pl\\u0061y"', 1)),
        ("escaped key", line.replace(b'"deal":', b'"d\\u0065al":', 1)),
        ("seat -0", line.replace(b'"seat":0', b'"seat":-0', 1)),
        ("dealt twice", line.replace(hand["deal"][0][0].encode(), hand["deal"][1][0].encode(), 1)),
    ]
    if card[0] == "T":
        out.append(("10 for T", line.replace(f'"card":"{card}"'.encode(), f'"card":"10{card[1]}"'.encode())))
    times = {**hand, "actions": [dict(a) for a in hand["actions"]]}
    times["actions"][i]["ms"], times["actions"][i - 1]["ms"] = times["actions"][i - 1]["ms"], times["actions"][i]["ms"] + 1
    out.append(("times backwards", _dump(times)))
    players = {**hand, "players": [hand["players"][0]] * 4}
    out.append(("players repeat", _dump(players)))
    if "result" in hand:
        tong = {**hand, "result": {**hand["result"], "tong": list(reversed(hand["result"]["tong"])) + [0]}}
        out.append(("tong listed twice", _dump(tong)))
        ranking = {**hand, "result": {**hand["result"], "ranking": hand["result"]["ranking"][::-1]}}
        out.append(("ranking reversed", _dump(ranking)))
    for key in (b'"ms":', b'"kind":', b'"hand_id":', b'"scores":'):
        if key in line:
            k = line.index(key)
            out.append((f"repeated {key.decode()}", line[:k] + key + b'"x",' + line[k:]))
    out.append(("repeated action key", line.replace(b'"kind":"play"', b'"kind":"play","kind":"play"', 1)))
    k = line.index(b'"deal":')  # a repeated key in the rules
    out.append(("repeated key late", line[:k] + b'"rules":{"dutou":"stack","dutou":"stack"},' + line[k:]))
    return out


def wrong_types(hand: dict[str, Any], rng: random.Random) -> list[tuple[str, bytes]]:
    """Lines whose deal or actions (which the first decoding leaves as raw JSON) are not what a record
    holds there, each in an otherwise legal hand: the scan must not vouch for any of them."""
    line = _dump(hand)
    i = rng.randrange(1, 52)
    act = hand["actions"][i]
    old = _dump(act)
    swaps = {
        "extra key": {**act, "x": 1}, "no seat": {k: v for k, v in act.items() if k != "seat"},
        "no kind": {k: v for k, v in act.items() if k != "kind"}, "no card": {k: v for k, v in act.items() if k != "card"},
        "seat string": {**act, "seat": str(act["seat"])}, "seat 4": {**act, "seat": 4}, "seat true": {**act, "seat": True},
        "seat float": {**act, "seat": float(act["seat"])}, "kind upper": {**act, "kind": act["kind"].upper()},
        "kind null": {**act, "kind": None}, "card number": {**act, "card": 7}, "card 3 chars": {**act, "card": act["card"] + "S"},
        "card list": {**act, "card": [act["card"]]}, "ms string": {**act, "ms": "700"}, "ms negative": {**act, "ms": -1},
        "ms float": {**act, "ms": 700.5}, "ms 2**53": {**act, "ms": 2**53}, "ms true": {**act, "ms": True},
        "ms object": {**act, "ms": {}},
    }
    out = [(name, line.replace(old, _dump(new), 1)) for name, new in swaps.items()]
    out += [
        ("ms exponent", line.replace(old, old.replace(b'"ms":' + str(act.get("ms")).encode(), b'"ms":7e2'), 1)),
        ("ms spaced null", line.replace(old, old.replace(b'"ms":' + str(act.get("ms")).encode(), b'"ms" :  null'), 1)),
        ("action null", line.replace(old, b"null", 1)),
        ("action array", line.replace(old, b"[" + old + b"]", 1)),
        ("actions object", line.replace(b'"actions":[', b'"actions":{"a":[', 1).replace(b'}]', b'}]}', 1)),
    ]
    deal = hand["deal"]
    variants = {
        "five seats": [*deal, []], "seat as string": [*deal[:3], "".join(deal[3])], "deal number": [*deal[:3], 5],
        "deal nested": [*deal[:3], [deal[3]]], "code 3 chars": [[deal[0][0] + "S", *deal[0][1:]], *deal[1:]],
        "code number": [[7, *deal[0][1:]], *deal[1:]], "fourteen cards": [[*deal[0], deal[1][0]], deal[1][1:], *deal[2:]],
    }
    out += [(name, _dump({**hand, "deal": d})) for name, d in variants.items()]
    out.append(("deal object", _dump({**hand, "deal": {"a": deal}})))
    return out


def corpus(seeds: range) -> list[tuple[str, bytes]]:
    out: list[tuple[str, bytes]] = []
    for seed in seeds:
        hand = legal_obj(seed)
        rng = random.Random(seed)
        out.append(("legal", _dump(hand)))
        out += foreign_spellings(hand, rng)
        out += odd_spellings(hand, rng)
        out += wrong_types(hand, rng)
        for name, plant in {**PLANTERS, **HOSTILE_PLANTERS}.items():
            planted = plant(hand, random.Random(seed))
            if planted is not None:
                out.append((name, planted[0]))
    return out


def _problems(checked: list[Any]) -> list[list[dict[str, Any]]]:
    return [[p.to_dict() for p in c.check.problems] for c in checked]


def _lines(cases: list[tuple[str, bytes]]) -> list[Line]:
    return [Line("t.jsonl", k + 1, data) for k, (_, data) in enumerate(cases)]


def test_the_line_scan_finds_what_the_python_path_finds():
    cases = corpus(range(6))
    assert len(cases) >= FAST_PATH_MIN
    before = kernel.STATS.kernel
    batch = check_lines(_lines(cases), keep_records=False)
    assert kernel.STATS.kernel > before, "the batch did not take the compiled path"
    alone = [check_lines([line], keep_records=False)[0] for line in _lines(cases)]  # the Python path
    for (name, _), b, a in zip(cases, _problems(batch), _problems(alone)):
        assert b == a, name
    assert {c.ok for c in batch} == {True, False}


def test_foreign_spellings_of_legal_hands_are_read_by_the_kernel_and_never_fall_back():
    cases = [(n, d) for seed in range(12) for n, d in
             [("legal", _dump(legal_obj(seed)))] + foreign_spellings(legal_obj(seed), random.Random(seed))]
    records = [decoder(lines=True).decode(d) for _, d in cases]
    before = (kernel.STATS.kernel, kernel.STATS.legal, kernel.STATS.fallbacks)
    checks = kernel.check_lines(records, [d for _, d in cases], HandCheck)
    assert all(c is not None and c.ok for c in checks)
    assert kernel.STATS.kernel - before[0] == len(cases)
    assert kernel.STATS.legal - before[1] == len(cases)
    assert kernel.STATS.fallbacks == before[2], "a legal hand fell back to the engine"


def scan_verdicts(cases: list[tuple[str, bytes]]) -> list[int]:
    n = len(cases)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum([len(d) for _, d in cases], out=offsets[1:])
    pts, l7 = np.zeros((n, 4), np.int64), np.zeros((n, 4), np.bool_)
    first = np.zeros(n, np.int64)
    from analyzer.kernels.tables import NEXT, RANK_OF, SUIT_OF

    blob = np.frombuffer(b"".join(d for _, d in cases), np.uint8)
    return kernel.scan_hands(blob, offsets, NEXT, RANK_OF, SUIT_OF, pts, l7, first).tolist()


def test_the_scan_verdict_is_the_engine_verdict():
    dec = decoder()
    cases = []
    for name, data in corpus(range(6)):
        try:
            cases.append((name, data, dec.decode(data)))
        except Exception:  # a shape problem: no replay happens
            continue
    verdicts = scan_verdicts([(n, d) for n, d, _ in cases])
    judged = set()
    for (name, _data, rec), v in zip(cases, verdicts):
        if name.startswith("repeated") or name == "duplicate-key":
            assert v == kernel.REPEATS, name
            continue
        if name in ("legal", "key order", "spaces", "tabs", "no times", "null times", "no result"):
            assert v == kernel.LEGAL, name
        if v in (kernel.LEGAL, kernel.ILLEGAL):
            moves_ok = not any(p.code not in RESULT_CODES | {"bad-players"} for p in VARIANT.check(rec).problems)
            assert v == (kernel.LEGAL if moves_ok else kernel.ILLEGAL), name
            judged.add(name)
    assert judged >= {"out-of-turn", "card-not-held", "not-live", "cover-with-live", "missing-actions",
                      "extra-actions", "dealt twice"}


def _reject_all(blob, offsets, *args):
    return np.full(len(offsets) - 1, kernel.ILLEGAL, np.int8)


def _accept_all(blob, offsets, *args):
    return np.full(len(offsets) - 1, kernel.LEGAL, np.int8)


def test_a_scan_that_rejects_everything_fails_these_tests(monkeypatch):
    monkeypatch.setattr(kernel, "scan_hands", _reject_all)
    with pytest.raises(AssertionError):
        test_foreign_spellings_of_legal_hands_are_read_by_the_kernel_and_never_fall_back()


def test_a_scan_that_accepts_everything_fails_these_tests(monkeypatch):
    monkeypatch.setattr(kernel, "scan_hands", _accept_all)
    with pytest.raises(AssertionError):
        test_the_scan_verdict_is_the_engine_verdict()


def test_the_scan_bounds_times_as_the_record_does():
    from analyzer.variants.record import MAX_INT

    assert kernel.MAX_INT == MAX_INT


def test_loading_the_kernels_leaves_cffi_unloaded():
    """numba's cffi support is loaded with cffi hidden (no kernel calls cffi): its C parser costs start-up."""
    import subprocess
    import sys

    code = ("import sys, analyzer.kernels, numba.core.typing.cffi_utils as c; "
            "print('cffi' in sys.modules, c.SUPPORTED)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_the_validator_loads_its_kernels_from_the_cache_without_numbas_whole_set_up(tmp_path):
    """A fresh process validating a batch big enough for the compiled path: each kernel it runs holds one
    compiled version, of the declared signature (the calls pass exactly those types, so none is typed and
    loaded a second time), loaded from the cache (warmed here first), and numba's whole set-up, which
    imports every implementation module (the random generators' among them), never ran; nor did the
    kernels' load import numba's array module (a kernel that allocates carries its code)."""
    import subprocess
    import sys
    from pathlib import Path

    logs = tmp_path / "v.jsonl"
    logs.write_bytes(b"".join(_dump(legal_obj(k, f"h{k}")) + b"\n" for k in range(2 * FAST_PATH_MIN)))
    code = ("import sys; from analyzer.validate import validate; import analyzer.kernels.bieqi as k; "
            "s = validate([sys.argv[1]], jobs=1); assert s.valid_hands == s.hands > 0, s.to_dict(); "
            "print([(list(d.overloads) == [k.SIGNATURES[n]], sum(d.stats.cache_hits.values())) "
            "for n in ('_scan', 'settle_hands') for d in [getattr(k, n)]], "
            "'numba.np.random.generator_core' in sys.modules, 'numba.np.arrayobj' in sys.modules)")
    root = Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", code, str(logs)], capture_output=True, text=True, check=True, cwd=root)
    out = subprocess.run([sys.executable, "-c", code, str(logs)], capture_output=True, text=True, check=True,
                         cwd=root).stdout.strip()
    assert out == "[(True, 1), (True, 1)] False False"


def test_random_byte_edits_find_the_same_problems_in_a_batch_and_alone():
    """Random edits of legal lines (a byte changed, inserted or dropped, drawn from JSON's own
    characters) checked as one compiled batch and one by one: the same problems, line for line."""
    rng = random.Random(7)
    alphabet = b'0123456789-.eE"\\{}[],: \tnulltrueSHDC7ATJQKplaycover'
    cases = []
    for k in range(160):
        line = bytearray(_dump(legal_obj(k % 8)))
        for _ in range(rng.choice((0, 1, 1, 2))):  # some left legal, so the batch mixes both
            i = rng.randrange(len(line))
            op = rng.randrange(3)
            if op == 0:
                line[i] = rng.choice(alphabet)
            elif op == 1:
                line.insert(i, rng.choice(alphabet))
            else:
                del line[i]
        cases.append(("edit", bytes(line)))
    batch = check_lines(_lines(cases), keep_records=False)
    alone = [check_lines([line], keep_records=False)[0] for line in _lines(cases)]
    assert _problems(batch) == _problems(alone)
    assert sum(c.ok for c in batch) > 0 and sum(not c.ok for c in batch) > 0


def test_the_suit_tables_hold_every_patterns_count_and_points():
    """The kernels' 13-bit tables (built as arrays) against the rules' own definition, pattern by pattern."""
    from analyzer.kernels.tables import SUIT_COUNT, SUIT_POINTS
    from analyzer.rules import suit_points

    assert SUIT_COUNT.tolist() == [m.bit_count() for m in range(1 << 13)]
    assert SUIT_POINTS.tolist() == [suit_points(m) for m in range(1 << 13)]
