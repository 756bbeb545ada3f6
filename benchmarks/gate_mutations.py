"""A mutation hunt against the log gate (``analyzer validate``): legal hands of every game, each changed at one
point as a corrupted or forged log could be, checked by the gate and by a small reference written here from the
seed rules and the docs (not from the engine), and counted.

    python -m benchmarks.gate_mutations [--hands 40] [--seed 1] [--show 8] [--codes] [--write FILE]

The legal hands: the standard game's simulated room (the hands with a 通 or 独头七 first) and the independent engine's
hands in shared/peer, the borrowing game's room (with its borrows), 信阳黑七's hands with and without rule ``throws``.
The mutations: a move's card (held, another seat's, already played, no card), kind, seat, order (two moves, or their
cards, swapped), a move dropped, doubled, appended, the moves cut short; recorded scores, points, factors, 通 and 独头七
seats, ranking, finish order, loser, settlement and its parts; rule options; the deal (cards swapped, doubled,
moved, two hands swapped); ids and header fields; times backwards, negative, fractions, strings; any value replaced by
one of another type; the same hand spelled otherwise (spaces, key order, lenient and escaped codes, escaped keys) and
odd spellings of a wrong card; one byte of the line changed; a lender, a lent card, a borrow for a play; bids, the
dealer, the buried cards, the trump, a trick's leader and plays (cards changed, added, dropped, swapped, a play
replaced by other cards held), tricks swapped, dropped, doubled; and two hands of one table (who deals next, who bids
first after a hand and after a pass-out, when each started).

For every variant and mutation kind it prints how many mutants were made, how many the gate rejected, how many it
accepted, and of those how many the reference judges legal (a mutant that happens to be another legal hand: two
cards swapped between seats, a time left unchanged, a 通 seat's factor, which is not compared); any other accepted
mutant is a gate bug, listed. A rejected mutant the reference judges legal is a false alarm, listed too; a rejection
whose first problem is on another line or hand, or names another move or trick than the reference's first fault, or
none where the reference has one, is listed as misplaced. Each mutant is checked twice: in one batch of a file (the
standard game's compiled path) and one line at a time (the explaining path), which must agree. Exit status 1 when
anything is listed.
"""
from __future__ import annotations

import argparse
import copy
import random
import sys
import tempfile
from datetime import datetime
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analyzer.logs import format_record  # noqa: E402
from analyzer.validate import generate_checked  # noqa: E402

RANKS = "A23456789TJQK"
#: 200 hands of the standard game from an independent engine (they must stay valid).
PEER = Path(__file__).resolve().parents[2] / "shared" / "peer" / "foxzero-random-200.jsonl"

# --------------------------------------------------------------------------- reference: cards


def ref_card(code: Any, jokers: bool = False) -> int | None:
    """A card code as an int (suit * 13 + rank; jokers 52 SJ, 53 BJ) read leniently as docs/log-format.md says, or
    None when it names no card."""
    if not isinstance(code, str):
        return None
    if jokers and code in ("SJ", "BJ", "sj", "bj"):
        return 52 if code.upper() == "SJ" else 53
    u = code.upper()
    if len(u) < 2:
        return None
    suit = "SHDC♠♥♦♣".find(u[-1])
    rank = u[:-1]
    if suit < 0:
        return None
    rank = "T" if rank == "10" else rank
    if len(rank) != 1 or rank not in RANKS:
        return None
    return suit % 4 * 13 + RANKS.index(rank)


class Bad(Exception):
    """The reference's verdict on an illegal record: what is wrong and where (the action or trick index)."""

    def __init__(self, why: str, where: int | None = None):
        super().__init__(why)
        self.why, self.where = why, where


def _int(v: Any, lo: int = -(2**53 - 1), hi: int = 2**53 - 1) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def ref_header(r: dict[str, Any], variant: str, fields: set[str]) -> None:
    if r.get("format") != "bieqi-log" or r.get("version") != 1 or type(r.get("version")) is not int:
        raise Bad("format/version")
    if r.get("variant") != variant:
        raise Bad("variant")
    if set(r) - fields - {"format", "version", "variant", "hand_id", "table_id", "started_at", "players", "rules"}:
        raise Bad("extra field")
    hid = r.get("hand_id")
    if not isinstance(hid, str) or not hid.strip():
        raise Bad("hand_id")
    if "table_id" in r and r["table_id"] is not None and not isinstance(r["table_id"], str):
        raise Bad("table_id")
    p = r.get("players")
    if (not isinstance(p, list) or len(p) != 4 or not all(isinstance(x, str) and x.strip() for x in p)
            or len({x.strip().casefold() for x in p}) != 4):
        raise Bad("players")
    if "started_at" in r and r["started_at"] is not None:
        try:
            when = datetime.fromisoformat(r["started_at"])
        except (TypeError, ValueError):
            raise Bad("started_at") from None
        if when.tzinfo is None:
            raise Bad("started_at without an offset")


def ref_ms(actions: list[dict[str, Any]]) -> None:
    last = None
    for i, a in enumerate(actions):
        if "ms" in a and a["ms"] is not None:
            if not _int(a["ms"], 0):
                raise Bad("ms type", i)
            if last is not None and a["ms"] < last:
                raise Bad("time backwards", i)
            last = a["ms"]


# --------------------------------------------------------------------------- reference: standard 憋七


def _live(table: list[set[int]], c: int) -> bool:
    """活牌: a card next in rank to its suit's run on the table, or a 7 (any 7 once 7♠ is out; 7♠ opens)."""
    s, r = divmod(c, 13)
    run = table[s]
    if r == 6:
        return not run
    if not run:
        return False
    return r == min(run) - 1 or r == max(run) + 1


def ref_bieqi(r: dict[str, Any]) -> None:
    """Raise Bad unless ``r`` is a legal, rightly scored hand of standard 憋七 (default rules or the log's own)."""
    ref_header(r, "bieqi", {"deal", "actions", "result"})
    rules = {} if r.get("rules") is None else r["rules"]
    if not isinstance(rules, dict):
        raise Bad("rules")
    if set(rules) - {"dutou", "tong_factors", "dutou_factor", "cover_doubling"}:
        raise Bad("rules")
    tong_f = rules.get("tong_factors", [1, 2, 4, 8, 1])
    if len(tong_f) != 5:
        raise Bad("rules.tong_factors")
    dutou_f = rules.get("dutou_factor", 8)
    mode = rules.get("dutou", "stack")
    doubling = rules.get("cover_doubling", [])
    deal = r.get("deal")
    if not isinstance(deal, list) or len(deal) != 4 or not all(isinstance(h, list) and len(h) == 13 for h in deal):
        raise Bad("deal shape")
    hands: list[set[int]] = [set() for _ in range(4)]
    for s, h in enumerate(deal):
        for x in h:
            c = ref_card(x)
            if c is None:
                raise Bad("deal card")
            hands[s].add(c)
    if set().union(*hands) != set(range(52)) or sum(map(len, hands)) != 52:
        raise Bad("deal")
    acts = r.get("actions")
    if not isinstance(acts, list):
        raise Bad("actions")
    for i, a in enumerate(acts):
        if not isinstance(a, dict) or set(a) - {"seat", "kind", "card", "ms"} or not {"seat", "kind", "card"} <= set(a):
            raise Bad("action shape", i)
        if not _int(a["seat"], 0, 3) or a["kind"] not in ("play", "cover") or ref_card(a["card"]) is None:
            raise Bad("action field", i)
    table: list[set[int]] = [set() for _ in range(4)]
    covered = [0] * 4
    last_card: list[int | None] = [None] * 4
    last_turn = [-1] * 4
    turn = next(s for s in range(4) if 6 in hands[s])
    for i, a in enumerate(acts):
        if i >= 52:
            raise Bad("extra actions", i)
        c = ref_card(a["card"])
        assert c is not None
        if i == 0 and (c != 6 or a["kind"] != "play"):
            raise Bad("first action must be 7S", i)
        if a["seat"] != turn:
            raise Bad("out of turn", i)
        if c not in hands[turn]:
            raise Bad("not held", i)
        live = [x for x in hands[turn] if _live(table, x)] if i else [6]
        if a["kind"] == "play":
            if c not in live:
                raise Bad("not live", i)
            table[c // 13].add(c % 13)
            last_card[turn] = c
        else:
            if live:
                raise Bad("cover with live", i)
            covered[turn] += c % 13 + 1
            last_card[turn] = None  # a cover is not a card played (no 独头七 for a seat that covered: not 通 anyway)
        hands[turn].discard(c)
        last_turn[turn] = i
        turn = (turn + 1) % 4
    if len(acts) < 52:
        raise Bad("missing actions", len(acts))
    ref_ms(acts)
    res = r.get("result")
    if res is None:
        return
    if not isinstance(res, dict) or set(res) - {"scores", "points", "multipliers", "tong", "dutou", "ranking"}:
        raise Bad("result shape")
    tong = [s for s in range(4) if covered[s] == 0]
    dutou = [s for s in tong if (last_card[s] or 0) % 13 == 6]
    if mode == "replace" and dutou:
        f = dutou_f ** len(dutou)
    else:
        f = tong_f[len(tong)] * dutou_f ** len(dutou)
    mult = [1 if s in tong else f for s in range(4)]
    for th in doubling:
        mult = [m * 2 if covered[s] > th else m for s, m in enumerate(mult)]
    final = [covered[s] * mult[s] for s in range(4)]
    scores = [sum(final[o] - final[s] for o in range(4) if o != s) for s in range(4)]
    ranking = sorted(range(4), key=lambda s: (final[s], last_turn[s]))
    res = {k: v for k, v in res.items() if v is not None or k == "scores"}  # null: not recorded
    for fld in ("scores", "points", "multipliers", "tong", "dutou", "ranking"):
        if fld in res and not (isinstance(res[fld], list) and all(_int(x) for x in res[fld])):
            raise Bad(f"result.{fld} type")
    if res.get("scores") != scores:
        raise Bad(f"scores {res.get('scores')} != {scores}")
    if "points" in res and res["points"] != covered:
        raise Bad("points")
    if "multipliers" in res:
        m = res["multipliers"]
        if not isinstance(m, list) or len(m) != 4 or any(m[s] != mult[s] for s in range(4) if s not in tong):
            raise Bad("multipliers")
        if not all(_int(x) for x in m):
            raise Bad("multipliers type")
    if "tong" in res and sorted(res["tong"]) != tong:
        raise Bad("tong")
    if "dutou" in res and sorted(res["dutou"]) != dutou:
        raise Bad("dutou")
    if "ranking" in res and res["ranking"] != ranking:
        raise Bad("ranking")


# --------------------------------------------------------------------------- reference: the borrowing game


def ref_borrow(r: dict[str, Any]) -> None:
    """Raise Bad unless ``r`` is a legal hand of the table game with a joker and 借牌 (docs/borrow.md, seed 000)."""
    ref_header(r, "bieqi-borrow", {"dealer", "deal", "actions", "result"})
    rules = {} if r.get("rules") is None else r["rules"]
    if not isinstance(rules, dict):
        raise Bad("rules")
    if set(rules) - {"lend_joker"}:
        raise Bad("rules")
    lend_joker = rules.get("lend_joker", True)
    if not isinstance(lend_joker, bool):
        raise Bad("rules.lend_joker")
    dealer = r.get("dealer")
    if not _int(dealer, 0, 3):
        raise Bad("dealer")
    deal = r.get("deal")
    if not isinstance(deal, list) or len(deal) != 4:
        raise Bad("deal shape")
    hands: list[set[int]] = [set() for _ in range(4)]
    n = 0
    for s, h in enumerate(deal):
        if not isinstance(h, list) or len(h) != (14 if s == dealer else 13):
            raise Bad("deal sizes")
        for x in h:
            c = ref_card(x, jokers=True)
            if c is None:
                raise Bad("deal card")
            hands[s].add(c)
            n += 1
    allc = set().union(*hands)
    if n != 53 or len(allc) != 53 or not set(range(52)) <= allc:
        raise Bad("deal")
    acts = r.get("actions")
    if not isinstance(acts, list):
        raise Bad("actions")
    for i, a in enumerate(acts):
        if not isinstance(a, dict):
            raise Bad("action shape", i)
        if a.get("kind") == "play":
            keys = {"kind", "seat", "card"}
        elif a.get("kind") == "borrow":
            keys = {"kind", "seat", "from", "card"}
        else:
            raise Bad("action kind", i)
        if not keys <= set(a) or set(a) - keys - {"ms"}:
            raise Bad("action fields", i)
        if not _int(a["seat"], 0, 3) or (a["kind"] == "borrow" and not _int(a["from"], 0, 3)):
            raise Bad("action seat", i)
        if ref_card(a["card"], jokers=True) is None:
            raise Bad("action card", i)
    table: list[set[int]] = [set() for _ in range(4)]
    finished: list[int] = []
    turn = next(s for s in range(4) if 6 in hands[s])
    on_table = 0

    def next_with_cards(s: int, others: bool = False) -> int:
        """The next seat after ``s`` holding cards (``s`` itself when it is the only one, unless ``others``)."""
        for k in range(1, 4 if others else 5):
            if hands[(s + k) % 4]:
                return (s + k) % 4
        return -1

    for i, a in enumerate(acts):
        if on_table == 52:
            raise Bad("extra actions", i)
        c = ref_card(a["card"], jokers=True)
        assert c is not None
        if i == 0 and (a["kind"] != "play" or c != 6):
            raise Bad("first action", i)
        if a["seat"] != turn:
            raise Bad("out of turn / empty hand", i)
        live = [x for x in hands[turn] if x < 52 and _live(table, x)] if i else [6]
        if a["kind"] == "play":
            if c not in hands[turn] or c not in live:
                raise Bad("play not held or not live", i)
            hands[turn].discard(c)
            table[c // 13].add(c % 13)
            on_table += 1
            if not hands[turn]:
                finished.append(turn)
        else:
            if live:
                raise Bad("borrow with live", i)
            lender = next_with_cards(turn, others=True)
            if a["from"] != lender or lender < 0:
                raise Bad("wrong lender", i)
            if c not in hands[lender]:
                raise Bad("lent card not held", i)
            if c >= 52 and not lend_joker and len(hands[lender]) > 1:
                raise Bad("joker lent", i)
            hands[lender].discard(c)
            hands[turn].add(c)
            if not hands[lender]:
                finished.append(lender)
        turn = next_with_cards(turn)
    if on_table < 52:
        raise Bad("missing actions", len(acts))
    ref_ms(acts)
    res = r.get("result")
    if res is None:
        return
    loser = next(s for s in range(4) if hands[s])
    if not isinstance(res, dict) or set(res) != {"finish_order", "loser"}:
        raise Bad("result shape")
    if res["finish_order"] != finished or res["loser"] != loser:
        raise Bad("result")


# --------------------------------------------------------------------------- reference: 信阳黑七

# Written from docs/heiqi.md and seed 002 (not from analyzer/variants/heiqi.py): a card's effective suit and its place in
# a tractor group; a play split greedily (longest tractors first, then pairs, singles); the five duties of a follow;
# the winner among plays of the lead's exact shape, all of the led suit or all trumps.


def _hq_key(c: int, trump: int) -> tuple[int, int, int]:
    """(effective suit 0..3 or 4 for trumps, tractor group, place in the group): jokers group 3, 7s group 2 (the trump
    suit's above the others, which are equal), 2s group 1 likewise, the rest group 0 in the order 3 4 5 6 8 9 10 J Q K A."""
    if c >= 52:
        return 4, 3, c - 52
    s, r = divmod(c, 13)
    if r == 6:
        return 4, 2, int(s == trump)
    if r == 1:
        return 4, 1, int(s == trump)
    return (4 if s == trump else s), 0, "345689TJQKA".index(RANKS[r])


def _hq_strength(c: int, trump: int) -> int:
    _, g, i = _hq_key(c, trump)
    return g * 100 + i


def _hq_split(cards: list[int], trump: int) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """(tractors as (pairs, top strength), pair strengths, single strengths), split greedily."""
    cnt = Counter(cards)
    pairs: Counter[tuple[int, int]] = Counter()  # (group, place) -> pairs there
    for c, k in cnt.items():
        if k >= 2:
            _, g, i = _hq_key(c, trump)
            pairs[(g, i)] += k // 2
    tractors = []
    while True:
        best = (0, -1, -1)
        for (g, i), k in pairs.items():
            if k <= 0:
                continue
            n = 1
            while pairs.get((g, i - n), 0) > 0:
                n += 1
            best = max(best, (n, g, i))
        n, g, i = best
        if n < 2:
            break
        tractors.append((n, g * 100 + i))
        for j in range(i - n + 1, i + 1):
            pairs[(g, j)] -= 1
    tractors.sort(reverse=True)
    pair_list = sorted((g * 100 + i for (g, i), k in pairs.items() for _ in range(k)), reverse=True)
    singles = sorted((_hq_strength(c, trump) for c, k in cnt.items() if k % 2), reverse=True)
    return tractors, pair_list, singles


def _hq_pairs(cards: list[int], trump: int) -> int:
    t, p, _ = _hq_split(cards, trump)
    return sum(n for n, _ in t) + len(p)


def _hq_longest(cards: list[int], trump: int) -> int:
    t = _hq_split(cards, trump)[0]
    return t[0][0] if t else 0


def _hq_follow_fault(hand: Counter[int], lead: list[int], play: list[int], trump: int) -> str | None:
    n = len(lead)
    if len(play) != n:
        return "count"
    ls = _hq_key(lead[0], trump)[0]
    held = [c for c, k in hand.items() for _ in range(k) if _hq_key(c, trump)[0] == ls]
    played = [c for c in play if _hq_key(c, trump)[0] == ls]
    if len(played) < min(n, len(held)):
        return "follow suit"
    if _hq_longest(lead, trump) and _hq_longest(held, trump) >= 2:
        if _hq_longest(played, trump) < min(_hq_longest(lead, trump), _hq_longest(held, trump)):
            return "tractor follow"
    if _hq_pairs(played, trump) < min(_hq_pairs(lead, trump), _hq_pairs(held, trump)):
        return "pair follow"
    return None


def _hq_points(cards: list[int]) -> int:
    return sum(5 if c < 52 and c % 13 == 4 else 10 if c < 52 and c % 13 in (9, 12) else 0 for c in cards)


def _hq_winner(plays: list[list[int]], trump: int) -> int:
    """Index of the winning play: only plays of the lead's exact shape, all of the led suit or all trumps, compete; a
    trump play beats a plain one, then the higher deciding part; equal: the earlier. A throw (more than one part) is
    beaten only by trumps of its shape when it is not of trumps."""
    lead = plays[0]
    ls = _hq_key(lead[0], trump)[0]

    def sig(cards: list[int]) -> tuple[Any, ...]:
        t, p, s = _hq_split(cards, trump)
        return tuple(n for n, _ in t), len(p), len(s)

    def top(cards: list[int]) -> int:
        t, p, s = _hq_split(cards, trump)
        return t[0][1] if t else p[0] if p else s[0]

    parts = len(sig(lead)[0]) + sig(lead)[1] + sig(lead)[2]
    best, key = 0, (ls == 4, top(lead))
    for i in range(1, 4):
        p = plays[i]
        suits = {_hq_key(c, trump)[0] for c in p}
        if len(suits) != 1:
            continue
        s = suits.pop()
        if not ((s == ls and parts == 1) or (s == 4 and ls != 4)):
            continue
        if sig(p) != sig(lead):
            continue
        k = (s == 4, top(p))
        if k > key:
            best, key = i, k
    return best


def ref_heiqi(r: dict[str, Any]) -> None:
    ref_header(r, "xinyang-heiqi", {"deal", "bottom", "first_bidder", "bids", "dealer", "buried", "trump",
                                    "tricks", "result"})
    rules = {} if r.get("rules") is None else r["rules"]
    if not isinstance(rules, dict):
        raise Bad("rules")

    def ints(v: Any, n: int, lo: int) -> bool:
        return isinstance(v, list) and len(v) == n and all(_int(x, lo, 1024) for x in v)

    if (set(rules) - {"throws", "redeal_first_bidder", "units", "bottom_factors", "bald_factor"}
            or not isinstance(rules.get("throws", False), bool)
            or rules.get("redeal_first_bidder", "same") not in ("same", "next")
            or not ints(rules.get("units", [3, 2, 2, 1]), 4, 0) or not ints(rules.get("bottom_factors", [1, 2, 4]), 3, 0)
            or not _int(rules.get("bald_factor", 2), 1, 1024)):
        raise Bad("rules")
    deal, bottom = r.get("deal"), r.get("bottom")
    if (not isinstance(deal, list) or len(deal) != 4 or not all(isinstance(h, list) and len(h) == 25 for h in deal)
            or not isinstance(bottom, list) or len(bottom) != 8):
        raise Bad("deal shape")
    hands: list[Counter[int]] = [Counter() for _ in range(4)]
    for s, h in enumerate(deal):
        for x in h:
            c = ref_card(x, jokers=True)
            if c is None:
                raise Bad("deal card")
            hands[s][c] += 1
    bot = [ref_card(x, jokers=True) for x in bottom]
    if None in bot:
        raise Bad("bottom card")
    if sum(hands, Counter()) + Counter(bot) != Counter({c: 2 for c in range(54)}):
        raise Bad("deal")
    fb = r.get("first_bidder")
    if not _int(fb, 0, 3):
        raise Bad("first_bidder")
    bids = r.get("bids")
    if not isinstance(bids, list):
        raise Bad("bids")
    passed = [False] * 4
    turn, low, bidder, over = fb, None, None, False
    for b in bids:
        if over or not isinstance(b, dict) or set(b) != {"seat", "bid"} or b["seat"] != turn:
            raise Bad("bidding")
        v = b["bid"]
        if v is None:
            passed[turn] = True
        elif v in (80, 90, 100, 110) and type(v) is int and (low is None or v < low):
            low, bidder = v, turn
        else:
            raise Bad("bid value")
        if v == 80 or all(passed[s] for s in range(4) if s != bidder):
            over = True
            continue
        turn = (turn + 1) % 4
        while passed[turn]:
            turn = (turn + 1) % 4
    if not over:
        raise Bad("bidding unfinished")
    if r.get("dealer", "absent") != bidder:
        raise Bad("dealer choice")
    res = r.get("result")
    if bidder is None:
        if r.get("buried") or r.get("trump") is not None or r.get("tricks"):
            raise Bad("play after a pass-out")
        if res is not None and (not isinstance(res, dict) or not isinstance(res.get("settlement"), list)
                                or any(res["settlement"]) or any(res.get(k) for k in set(res) - {"settlement"})):
            raise Bad("result of a pass-out")
        return
    if r.get("trump") not in ("S", "H", "D", "C") or not isinstance(r.get("buried"), list) \
            or not isinstance(r.get("tricks"), list):
        raise Bad("missing play fields")
    trump = "SHDC".index(r["trump"])
    dealer = bidder
    hands[dealer] += Counter(bot)
    buried = [ref_card(x, jokers=True) for x in r["buried"]]
    if None in buried or len(buried) != 8 or Counter(buried) - hands[dealer]:
        raise Bad("bury")
    hands[dealer] -= Counter(buried)
    leader = dealer
    defenders = 0
    last_lead: list[int] = []
    last_winner = -1
    for t, tr in enumerate(r["tricks"]):
        if not any(hands[dealer].values()):
            raise Bad("extra tricks", t)
        if not isinstance(tr, dict) or set(tr) != {"leader", "plays"} or tr["leader"] != leader:
            raise Bad("leader", t)
        plays = tr["plays"]
        if not isinstance(plays, list) or len(plays) != 4:
            raise Bad("plays shape", t)
        cards: list[list[int]] = []
        for k, p in enumerate(plays):
            seat = (leader + k) % 4
            read = [ref_card(x, jokers=True) for x in p] if isinstance(p, list) else [None]
            cs = [c for c in read if c is not None]
            if len(cs) != len(read) or not cs or Counter(cs) - hands[seat]:
                raise Bad("card not held", t)
            if k and len(cs) != len(cards[0]):
                raise Bad("count", t)
            if k:
                why = _hq_follow_fault(hands[seat], cards[0], cs, trump)
                if why:
                    raise Bad(why, t)
            else:
                suits = {_hq_key(c, trump)[0] for c in cs}
                if len(suits) != 1:
                    raise Bad("lead mixes suits", t)
                t_, p_, s_ = _hq_split(cs, trump)
                if not (r.get("rules") or {}).get("throws") and len(t_) + len(p_) + len(s_) != 1:
                    raise Bad("a lead of more than one part", t)
            hands[seat] -= Counter(cs)
            cards.append(cs)
        w = (leader + _hq_winner(cards, trump)) % 4
        if w != dealer:
            defenders += sum(_hq_points(c) for c in cards)
        last_lead, last_winner, leader = cards[0], w, w
    if any(hands[dealer].values()):
        raise Bad("missing tricks", len(r["tricks"]))
    if res is None:
        return
    factor = 0
    if last_winner != dealer:
        t_, p_, _ = _hq_split(last_lead, trump)
        shape = 2 if t_ else 1 if p_ else 0
        factor = rules.get("bottom_factors", [1, 2, 4])[shape]
    bp = _hq_points(buried)  # type: ignore[arg-type]
    pts = defenders + bp * factor
    unit = rules.get("units", [3, 2, 2, 1])[(80, 90, 100, 110).index(low)]  # type: ignore[arg-type]
    if pts == 0:
        name, each = "dealer_double", low // 10 * unit * rules.get("bald_factor", 2)  # type: ignore[operator]
    elif pts < low:  # type: ignore[operator]
        name, each = "dealer", (low - pts) // 10 * unit  # type: ignore[operator]
    elif pts == low:
        name, each = "draw", 0
    else:
        name, each = "defenders", -((pts - low) // 10 * unit)  # type: ignore[operator]
    settlement = [3 * each if s == dealer else -each for s in range(4)]
    if not isinstance(res, dict) or set(res) - {"settlement", "defender_points", "bottom_points", "bottom_factor",
                                                "outcome"} or not isinstance(res.get("settlement"), list):
        raise Bad("result shape")
    want = {"settlement": settlement, "defender_points": pts, "bottom_points": bp, "bottom_factor": factor,
            "outcome": name}
    for k, v in res.items():
        if v is None and k != "settlement":  # null: not recorded
            continue
        if v != want[k] or (isinstance(v, list) and not all(_int(x) for x in v)):
            raise Bad(f"result.{k} {v} != {want[k]}")


# --------------------------------------------------------------------------- legal hands


def legal_hands(variant: str, n: int, seed: int, tables: bool = False) -> list[dict[str, Any]]:
    """``n`` legal hands of a game from its simulator (``tables``: in the order played, tables' hands together)."""
    if variant == "bieqi":
        from analyzer.simulate.room import simulate

        # many hands, the ones with a 通 / 独头七 first (random deals rarely have them, and the multipliers are
        # what a forged score would change)
        pool = list(simulate(hands=20 * n, players=6, seed=seed).records)
        if not tables:
            pool.sort(key=lambda r: (-len(r.result.dutou), -len(r.result.tong)))
        recs = pool[:n] if tables else pool[: n // 2] + pool[-(n - n // 2):]
    elif variant == "bieqi-borrow":
        from analyzer.simulate.borrow import simulate as borrow_sim

        recs = list(borrow_sim(hands=n, players=6, seed=seed).records)
    else:
        from analyzer.simulate.heiqi import simulate as heiqi_sim

        # half of them under rule ``throws`` (a lead of several parts), the other half under the defaults
        recs = list(heiqi_sim(hands=n - n // 2, players=6, seed=seed, run_length=4).records)
        if not tables:
            recs += list(heiqi_sim(hands=n // 2, players=6, seed=seed + 1, run_length=4, throws=1).records)
    out = [orjson.loads(format_record(r)) for r in recs]
    if variant == "bieqi" and not tables and PEER.exists():  # hands of an independent engine too
        with PEER.open("rb") as f:
            out += [orjson.loads(line) for line in list(f)[: n // 2]]
    return out


# --------------------------------------------------------------------------- mutations

#: (kind, record, index of the action or trick changed[, a change of the line's bytes that keeps its meaning])
Mutant = tuple[Any, ...]


def _cards_of_deal(r: dict[str, Any]) -> list[str]:
    return [c for h in r["deal"] for c in h]


def mutate_common(r: dict[str, Any], rng: random.Random) -> Iterator[Mutant]:
    """Mutations of the fields every game has."""
    m = copy.deepcopy(r)
    m["players"][1] = m["players"][0]
    yield "players: an id twice", m, None
    m = copy.deepcopy(r)
    m["players"][2] = m["players"][3].upper() if m["players"][3] != m["players"][3].upper() else m["players"][3].lower()
    yield "players: lookalike ids", m, None
    m = copy.deepcopy(r)
    m["players"] = m["players"][:3]
    yield "players: three", m, None
    m = copy.deepcopy(r)
    m["players"][rng.randrange(4)] = ""
    yield "players: empty id", m, None
    m = copy.deepcopy(r)
    m["players"][rng.randrange(4)] = 7
    yield "players: an int id", m, None
    for kind, field, value in (("version 2", "version", 2), ("version as a string", "version", "1"),
                               ("format", "format", "bieqi-log2"), ("hand_id an int", "hand_id", 17),
                               ("started_at not a time", "started_at", "2026-13-01T00:00:00Z"),
                               ("an extra field", "surprise", 1)):
        m = copy.deepcopy(r)
        m[field] = value
        yield kind, m, None
    m = copy.deepcopy(r)
    d = m["deal"]
    s1, s2 = rng.sample(range(4), 2)
    i, j = rng.randrange(len(d[s1])), rng.randrange(len(d[s2]))
    d[s1][i], d[s2][j] = d[s2][j], d[s1][i]
    yield "deal: two cards swapped between seats", m, None
    m = copy.deepcopy(r)
    d = m["deal"]
    s1, s2 = rng.sample(range(4), 2)
    d[s1][rng.randrange(len(d[s1]))] = d[s2][rng.randrange(len(d[s2]))]
    yield "deal: a card duplicated", m, None
    m = copy.deepcopy(r)
    d = m["deal"]
    s1, s2 = rng.sample(range(4), 2)
    d[s2].append(d[s1].pop(rng.randrange(len(d[s1]))))
    yield "deal: a card moved to another seat", m, None
    m = copy.deepcopy(r)
    m["deal"][rng.randrange(4)][0] = "1S"
    yield "deal: a bad code", m, None
    m = copy.deepcopy(r)
    m["deal"][0], m["deal"][1] = m["deal"][1], m["deal"][0]
    yield "deal: two seats' hands swapped", m, None


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*path, k))
    elif isinstance(value, list):
        for k, v in enumerate(value):
            yield from _paths(v, (*path, k))


WRONG_VALUES: tuple[Any, ...] = (None, True, 1.5, "x", [], {}, -1, 2**64 - 1, 4, 0)


def mutate_types(r: dict[str, Any], rng: random.Random) -> Iterator[Mutant]:
    """One value anywhere in the record (a field, an entry of a list, a whole object) replaced by a value of another
    type or out of range: the gate must say so (or take it, where the value is allowed), never crash."""
    paths = [p for p in _paths(r) if p]
    for path in rng.sample(paths, min(25, len(paths))):
        m = copy.deepcopy(r)
        holder = m
        for k in path[:-1]:
            holder = holder[k]
        holder[path[-1]] = rng.choice([v for v in WRONG_VALUES if v != holder[path[-1]]])
        where = path[1] if path[0] in ("actions", "tricks") and len(path) > 1 else None
        yield f"type: a value replaced ({path[0]})", m, where


def _ms_mutants(r: dict[str, Any], rng: random.Random, variant: str) -> Iterator[Mutant]:
    acts = r["actions"]
    idx = [i for i in range(1, len(acts)) if "ms" in acts[i] and acts[i]["ms"] > 0]
    if not idx:
        return
    i = rng.choice(idx)
    m = copy.deepcopy(r)
    m["actions"][i]["ms"] = m["actions"][i - 1]["ms"] - 1
    yield "ms: backwards by 1", m, i
    m = copy.deepcopy(r)
    m["actions"][i]["ms"] = -m["actions"][i]["ms"]
    yield "ms: negative", m, i
    m = copy.deepcopy(r)
    m["actions"][i]["ms"] = float(m["actions"][i]["ms"]) + 0.5
    yield "ms: a fraction", m, i
    m = copy.deepcopy(r)
    m["actions"][i]["ms"] = str(m["actions"][i]["ms"])
    yield "ms: a string", m, i
    m = copy.deepcopy(r)
    m["actions"][i]["ms"] = m["actions"][i - 1]["ms"]
    yield "ms: equal to the one before (legal)", m, i
    m = copy.deepcopy(r)
    del m["actions"][i]["ms"]
    yield "ms: one left out (legal)", m, i


def mutate_actions(r: dict[str, Any], rng: random.Random, variant: str) -> Iterator[Mutant]:
    """Mutations of a move list (the standard game and the borrowing game)."""
    acts = r["actions"]
    n = len(acts)
    all_cards = _cards_of_deal(r)
    for _ in range(3):
        i = rng.randrange(n)
        a = acts[i]
        # replay the logged cards to know who holds what before action i
        held = {s: set(h) for s, h in enumerate(r["deal"])}
        on_table: set[str] = set()
        for b in acts[:i]:
            if b["kind"] == "borrow":
                held[b["from"]].discard(b["card"])
                held[b["seat"]].add(b["card"])
            else:
                held[b["seat"]].discard(b["card"])
                if b["kind"] == "play":
                    on_table.add(b["card"])
        own = sorted(held[a["seat"]] - {a["card"]})
        if own:
            m = copy.deepcopy(r)
            m["actions"][i]["card"] = rng.choice(own)
            yield "card: another card the seat holds", m, i
        others = sorted(set().union(*(held[s] for s in range(4) if s != a["seat"])))
        if others:
            m = copy.deepcopy(r)
            m["actions"][i]["card"] = rng.choice(others)
            yield "card: a card another seat holds", m, i
        if on_table:
            m = copy.deepcopy(r)
            m["actions"][i]["card"] = rng.choice(sorted(on_table))
            yield "card: a card already played", m, i
        m = copy.deepcopy(r)
        m["actions"][i]["card"] = rng.choice(["XS", "7X", "", "77S", "SJ" if variant == "bieqi" else "JJ"])
        yield "card: no card", m, i
        m = copy.deepcopy(r)
        m["actions"][i]["card"] = [a["card"]]
        yield "card: a list", m, i
        kinds = ["play", "cover", "borrow", "pass"] if variant == "bieqi" else ["play", "borrow", "cover", "pass"]
        m = copy.deepcopy(r)
        new = rng.choice([k for k in kinds if k != a["kind"]])
        m["actions"][i]["kind"] = new
        if new == "borrow" and variant == "bieqi-borrow":
            m["actions"][i]["from"] = (a["seat"] + 1) % 4
        if a["kind"] == "borrow" and new != "borrow":
            del m["actions"][i]["from"]
        yield "kind: changed", m, i
        m = copy.deepcopy(r)
        m["actions"][i]["seat"] = (a["seat"] + rng.randrange(1, 4)) % 4
        yield "seat: another seat", m, i
        m = copy.deepcopy(r)
        m["actions"][i]["seat"] = rng.choice([4, -1, "1", None])
        yield "seat: out of range or not an int", m, i
        if i + 1 < n:
            m = copy.deepcopy(r)
            x, y = m["actions"][i], m["actions"][i + 1]
            m["actions"][i], m["actions"][i + 1] = y, x
            if "ms" in x and "ms" in y:
                x["ms"], y["ms"] = y["ms"], x["ms"]
            yield "order: two adjacent actions swapped", m, i
            m = copy.deepcopy(r)
            x, y = m["actions"][i], m["actions"][i + 1]
            x["card"], y["card"] = y["card"], x["card"]
            yield "order: two adjacent actions' cards swapped", m, i
        m = copy.deepcopy(r)
        del m["actions"][i]
        yield "drop one action", m, i
        m = copy.deepcopy(r)
        m["actions"].insert(i, copy.deepcopy(a))
        yield "duplicate one action", m, i + 1
        m = copy.deepcopy(r)
        m["actions"] = m["actions"][:i]
        yield "truncate the actions", m, i
        m = copy.deepcopy(r)
        m["actions"][i]["extra"] = True
        yield "action: an extra field", m, i
        m = copy.deepcopy(r)
        del m["actions"][i]["seat"]
        yield "action: no seat", m, i
    m = copy.deepcopy(r)
    m["actions"].append(copy.deepcopy(acts[-1]))
    yield "one action appended", m, n
    m = copy.deepcopy(r)
    m["actions"].append({"seat": acts[-1]["seat"], "kind": "play", "card": rng.choice(all_cards)})
    yield "one action appended", m, n
    yield from _ms_mutants(r, rng, variant)


def _int_mutations(value: int, rng: random.Random) -> list[int]:
    out = [value + 1, value - 1, -value if value else 1]
    return out


def mutate_bieqi(r: dict[str, Any], rng: random.Random) -> Iterator[Mutant]:
    yield from mutate_common(r, rng)
    yield from mutate_types(r, rng)
    yield from spell_actions(r, rng, "bieqi")
    yield from mutate_actions(r, rng, "bieqi")
    if "result" not in r:
        return
    res = r["result"]
    for fld in ("scores", "points", "multipliers"):
        s = rng.randrange(4)
        for v in _int_mutations(res[fld][s], rng):
            m = copy.deepcopy(r)
            m["result"][fld][s] = v
            yield f"result.{fld}: one entry +-1 / sign", m, None
        m = copy.deepcopy(r)
        m["result"][fld][s] = float(res[fld][s])
        yield f"result.{fld}: a float", m, None
    m = copy.deepcopy(r)
    m["result"]["scores"] = [-x for x in res["scores"]]
    yield "result.scores: every sign", m, None
    m = copy.deepcopy(r)
    m["result"]["scores"] = [res["scores"][(k + 1) % 4] for k in range(4)]
    yield "result.scores: rotated", m, None
    for fld in ("tong", "dutou"):
        m = copy.deepcopy(r)
        m["result"][fld] = res[fld] + [rng.choice([s for s in range(4) if s not in res[fld]] or [0])]
        yield f"result.{fld}: a seat added", m, None
        if res[fld]:
            m = copy.deepcopy(r)
            m["result"][fld] = res[fld][1:]
            yield f"result.{fld}: a seat left out", m, None
            m = copy.deepcopy(r)
            m["result"][fld] = res[fld] + res[fld][:1]
            yield f"result.{fld}: a seat twice", m, None
    m = copy.deepcopy(r)
    k = rng.randrange(3)
    m["result"]["ranking"][k], m["result"]["ranking"][k + 1] = res["ranking"][k + 1], res["ranking"][k]
    yield "result.ranking: two neighbours swapped", m, None
    m = copy.deepcopy(r)
    m["result"]["ranking"] = [res["ranking"][0]] * 4
    yield "result.ranking: one seat four times", m, None
    m = copy.deepcopy(r)
    for fld in ("points", "multipliers", "tong", "dutou", "ranking"):
        del m["result"][fld]
    yield "result: scores only (legal)", m, None
    m = copy.deepcopy(r)
    del m["result"]
    yield "result: none (legal)", m, None
    m = copy.deepcopy(r)
    m["rules"] = {"tong_factors": [1, 3, 4, 8, 1]}
    yield "rules: another tong factor", m, None
    m = copy.deepcopy(r)
    m["rules"] = {"dutou": "replace"}
    yield "rules: dutou replace", m, None
    m = copy.deepcopy(r)
    m["rules"] = {"cover_doubling": [10]}
    yield "rules: cover doubling", m, None
    m = copy.deepcopy(r)
    m["rules"] = {"tong_factors": [1, 2, 4, 8]}
    yield "rules: a bad value", m, None


def mutate_borrow(r: dict[str, Any], rng: random.Random) -> Iterator[Mutant]:
    yield from mutate_common(r, rng)
    yield from mutate_types(r, rng)
    yield from spell_actions(r, rng, "bieqi-borrow")
    yield from mutate_actions(r, rng, "bieqi-borrow")
    acts = r["actions"]
    borrows = [i for i, a in enumerate(acts) if a["kind"] == "borrow"]
    for i in rng.sample(borrows, min(3, len(borrows))):
        a = acts[i]
        m = copy.deepcopy(r)
        m["actions"][i]["from"] = (a["from"] + rng.randrange(1, 4)) % 4
        yield "borrow: another lender", m, i
        m = copy.deepcopy(r)
        m["actions"][i]["from"] = a["seat"]
        yield "borrow: from oneself", m, i
        m = copy.deepcopy(r)
        del m["actions"][i]["from"]
        yield "borrow: no lender", m, i
        # the lender hands over another of its cards (legal when that card is lendable: the gate must accept)
        held = {s: set(h) for s, h in enumerate(r["deal"])}
        for b in acts[:i]:
            if b["kind"] == "borrow":
                held[b["from"]].discard(b["card"])
                held[b["seat"]].add(b["card"])
            else:
                held[b["seat"]].discard(b["card"])
        other = sorted(held[a["from"]] - {a["card"]})
        if other:
            m = copy.deepcopy(r)
            m["actions"][i]["card"] = rng.choice(other)
            yield "borrow: the lender hands over another card", m, i
        m = copy.deepcopy(r)
        m["actions"][i] = {"kind": "play", "seat": a["seat"], "card": a["card"], **({"ms": a["ms"]} if "ms" in a else {})}
        yield "borrow -> play of the lent card", m, i
    plays = [i for i, a in enumerate(acts) if a["kind"] == "play" and i]
    for i in rng.sample(plays, min(3, len(plays))):
        a = acts[i]
        lender = next(((a["seat"] + k) % 4 for k in (1, 2, 3)), 0)
        m = copy.deepcopy(r)
        m["actions"][i] = {"kind": "borrow", "seat": a["seat"], "from": lender, "card": rng.choice(r["deal"][lender])}
        yield "play -> borrow (with live)", m, i
    res = r["result"]
    m = copy.deepcopy(r)
    m["result"]["loser"] = (res["loser"] + 1) % 4
    yield "result.loser: another seat", m, None
    m = copy.deepcopy(r)
    m["result"]["finish_order"] = res["finish_order"][::-1]
    yield "result.finish_order: reversed", m, None
    m = copy.deepcopy(r)
    m["result"]["finish_order"] = res["finish_order"][:2]
    yield "result.finish_order: one left out", m, None
    m = copy.deepcopy(r)
    m["dealer"] = (r["dealer"] + 1) % 4
    yield "dealer: another seat", m, None
    m = copy.deepcopy(r)
    m["rules"] = {"lend_joker": False}
    yield "rules: lend_joker false", m, None
    m = copy.deepcopy(r)
    m["rules"] = {"lend_joker": 0}
    yield "rules: lend_joker 0", m, None


def mutate_heiqi(r: dict[str, Any], rng: random.Random) -> Iterator[Mutant]:
    yield from mutate_common(r, rng)
    yield from mutate_types(r, rng)
    m = copy.deepcopy(r)
    m["first_bidder"] = (r["first_bidder"] + 1) % 4
    yield "first_bidder: another seat", m, None
    bids = r["bids"]
    for i in range(len(bids)):
        m = copy.deepcopy(r)
        b = m["bids"][i]
        b["bid"] = rng.choice([v for v in (None, 80, 90, 100, 110, 85, 120, 0) if v != b["bid"]])
        yield "bids: a value changed", m, None
        m = copy.deepcopy(r)
        m["bids"][i]["seat"] = (bids[i]["seat"] + 1) % 4
        yield "bids: another seat", m, None
    m = copy.deepcopy(r)
    m["bids"] = bids[:-1]
    yield "bids: the last one dropped", m, None
    m = copy.deepcopy(r)
    m["bids"].append({"seat": bids[-1]["seat"], "bid": None})
    yield "bids: a pass appended", m, None
    m = copy.deepcopy(r)
    m["dealer"] = None if r["dealer"] is not None else 0
    yield "dealer: null / a seat", m, None
    # the same deal passed out by all four: legal with no play (a result, if any, of zeros), not with play left in
    p = copy.deepcopy(r)
    p["bids"] = [{"seat": (r["first_bidder"] + j) % 4, "bid": None} for j in range(4)]
    p["dealer"] = None
    for f in ("buried", "trump", "tricks", "result"):
        p.pop(f, None)
    yield "pass-out: no play (legal)", copy.deepcopy(p), None
    yield "pass-out: a result of zeros (legal)", {**copy.deepcopy(p), "result": {
        "settlement": [0, 0, 0, 0], "defender_points": 0, "bottom_points": None}}, None
    yield "pass-out: a result with an outcome", {**copy.deepcopy(p), "result": {
        "settlement": [0, 0, 0, 0], "outcome": "draw"}}, None
    yield "pass-out: a result that is not zero", {**copy.deepcopy(p), "result": {"settlement": [3, -1, -1, -1]}}, None
    if r.get("tricks"):
        yield "pass-out: the tricks left in", {**copy.deepcopy(p), "tricks": r["tricks"]}, None
    if r["dealer"] is None:
        return
    m = copy.deepcopy(r)
    m["dealer"] = (r["dealer"] + 1) % 4
    yield "dealer: another seat", m, None
    m = copy.deepcopy(r)
    m["trump"] = rng.choice([t for t in "SHDC" if t != r["trump"]])
    yield "trump: another suit", m, None
    m = copy.deepcopy(r)
    m["buried"][rng.randrange(8)] = rng.choice(r["deal"][(r["dealer"] + 1) % 4])
    yield "buried: a card the dealer lacks (maybe)", m, None
    m = copy.deepcopy(r)
    m["buried"] = r["buried"][:7]
    yield "buried: seven", m, None
    m = copy.deepcopy(r)
    m["bottom"][0], m["deal"][0][0] = r["deal"][0][0], r["bottom"][0]
    yield "bottom: a card swapped with seat 0", m, None
    tricks = r["tricks"]
    nt = len(tricks)
    for _ in range(4):
        t = rng.randrange(nt)
        tr = tricks[t]
        m = copy.deepcopy(r)
        m["tricks"][t]["leader"] = (tr["leader"] + rng.randrange(1, 4)) % 4
        yield "trick: another leader", m, t
        k = rng.randrange(4)
        m = copy.deepcopy(r)
        p = m["tricks"][t]["plays"][k]
        seat = (tr["leader"] + k) % 4
        p[rng.randrange(len(p))] = rng.choice(r["deal"][seat])
        yield "trick: a card of a play changed", m, t
        m = copy.deepcopy(r)
        p = m["tricks"][t]["plays"][k]
        p.append(p[0])
        yield "trick: a card added to a play", m, t
        if len(tr["plays"][k]) > 1:
            m = copy.deepcopy(r)
            m["tricks"][t]["plays"][k].pop()
            yield "trick: a card dropped from a play", m, t
        m = copy.deepcopy(r)
        k2 = (k + 1) % 4
        pk, pk2 = m["tricks"][t]["plays"][k], m["tricks"][t]["plays"][k2]
        if len(pk) == len(pk2):
            m["tricks"][t]["plays"][k], m["tricks"][t]["plays"][k2] = pk2, pk
            yield "trick: two plays swapped", m, t
        if t + 1 < nt:
            m = copy.deepcopy(r)
            m["tricks"][t], m["tricks"][t + 1] = m["tricks"][t + 1], m["tricks"][t]
            yield "tricks: two adjacent swapped", m, t
            # same seat's play in two consecutive tricks exchanged: cards held both times, order of play changed
            m = copy.deepcopy(r)
            s = rng.randrange(4)
            k1, k2 = (s - tr["leader"]) % 4, (s - tricks[t + 1]["leader"]) % 4
            a1, a2 = m["tricks"][t]["plays"][k1], m["tricks"][t + 1]["plays"][k2]
            if len(a1) == len(a2) and a1 != a2:
                m["tricks"][t]["plays"][k1], m["tricks"][t + 1]["plays"][k2] = a2, a1
                yield "tricks: one seat's plays in two tricks exchanged", m, t
        m = copy.deepcopy(r)
        del m["tricks"][t]
        yield "tricks: one dropped", m, t
        m = copy.deepcopy(r)
        m["tricks"] = tricks[:t]
        yield "tricks: truncated", m, t
        m = copy.deepcopy(r)
        m["tricks"].insert(t, copy.deepcopy(tr))
        yield "tricks: one duplicated", m, t + 1
    m = copy.deepcopy(r)
    m["tricks"].append(copy.deepcopy(tricks[-1]))
    yield "tricks: one appended", m, nt
    # a play replaced by other cards of the seat (as many; often of the led suit): the follow duties and the winner
    hands = [Counter(h) for h in r["deal"]]
    hands[r["dealer"]] += Counter(r["bottom"])
    hands[r["dealer"]] -= Counter(r["buried"])
    picks = set(rng.sample(range(nt), min(8, nt)))
    for t, tr in enumerate(tricks):
        for k, p in enumerate(tr["plays"]):
            seat = (tr["leader"] + k) % 4
            if t in picks:
                pool = [c for c, v in hands[seat].items() for _ in range(v)]
                lead = tr["plays"][0]
                same = [c for c in pool if c[-1] == lead[0][-1] and c[0] not in "27"]
                for _ in range(2):
                    src = same if same and len(same) >= len(p) and rng.random() < 0.6 else pool
                    alt = sorted(rng.sample(src, len(p)))
                    if alt != sorted(p):
                        m = copy.deepcopy(r)
                        m["tricks"][t]["plays"][k] = alt
                        yield "trick: a play replaced by other cards held", m, t
            hands[seat] -= Counter(p)
    res = r.get("result")
    if res:
        for fld in ("defender_points", "bottom_points", "bottom_factor"):
            for v in _int_mutations(res[fld], rng):
                m = copy.deepcopy(r)
                m["result"][fld] = v
                yield f"result.{fld}: +-1 / sign", m, None
        s = rng.randrange(4)
        for v in _int_mutations(res["settlement"][s], rng):
            m = copy.deepcopy(r)
            m["result"]["settlement"][s] = v
            yield "result.settlement: one entry +-1 / sign", m, None
        m = copy.deepcopy(r)
        m["result"]["settlement"] = [-x for x in res["settlement"]]
        yield "result.settlement: every sign", m, None
        m = copy.deepcopy(r)
        m["result"]["outcome"] = rng.choice([o for o in ("dealer_double", "dealer", "draw", "defenders")
                                             if o != res["outcome"]])
        yield "result.outcome: another", m, None
        m = copy.deepcopy(r)
        m["rules"] = {"units": [3, 3, 2, 1]}
        yield "rules: other units", m, None
        m = copy.deepcopy(r)
        m["rules"] = {"bottom_factors": [1, 2, 8]}
        yield "rules: other bottom factors", m, None


def _sub_once(old: bytes, new: bytes, nth: int = 0) -> Callable[[bytes], bytes]:
    """A change of a line's bytes: its ``nth`` ``old`` (counted from the actions on) replaced by ``new``."""

    def change(line: bytes) -> bytes:
        start = line.index(b'"actions"')
        k = start
        for _ in range(nth + 1):
            k = line.index(old, k + 1)
        return line[:k] + new + line[k + len(old):]

    return change


def _escape(text: str) -> bytes:
    return "".join(f"\\u{ord(ch):04x}" for ch in text).encode()


def spell_actions(r: dict[str, Any], rng: random.Random, variant: str) -> Iterator[Mutant]:
    """The same hand (or one card changed) spelled as other writers could: spaced, keys reordered, lenient or escaped
    card codes, escaped keys and kinds, -0 for a seat. The compiled path must read these as the decoder does, or give
    the line back."""
    acts = r["actions"]
    n = len(acts)
    m = copy.deepcopy(r)
    yield "spelling: spaced JSON (legal)", m, None, lambda b: orjson.dumps(orjson.loads(b), option=orjson.OPT_INDENT_2
                                                                               ).replace(b"\n", b"")
    m = copy.deepcopy(r)
    m["actions"] = [dict(reversed(list(a.items()))) for a in m["actions"]]
    yield "spelling: action keys reversed (legal)", m, None
    m = copy.deepcopy(r)
    m = {k: m[k] for k in reversed(list(m))}
    yield "spelling: record keys reversed (legal)", m, None
    i = rng.choice([k for k in range(1, n) if acts[k]["card"] not in ("SJ", "BJ")])
    c = acts[i]["card"]
    m = copy.deepcopy(r)
    m["actions"][i]["card"] = c.lower()
    yield "spelling: a card in lower case (legal)", m, i
    m = copy.deepcopy(r)
    m["actions"][i]["card"] = c[0] + "♠♥♦♣"["SHDC".index(c[1])]
    yield "spelling: a suit symbol (legal)", m, i
    tens = [k for k in range(1, n) if acts[k]["card"][0] == "T"]
    if tens:
        k = rng.choice(tens)
        m = copy.deepcopy(r)
        m["actions"][k]["card"] = "10" + acts[k]["card"][1]
        yield "spelling: 10 for T in an action (legal)", m, k
    m = copy.deepcopy(r)
    s0 = rng.randrange(4)
    j = rng.randrange(len(m["deal"][s0]))
    m["deal"][s0][j] = m["deal"][s0][j].lower()
    yield "spelling: a dealt card in lower case (legal)", m, None
    m = copy.deepcopy(r)
    yield "spelling: a card escaped (legal)", m, i, _sub_once(f'"{c}"'.encode(), b'"' + _escape(c) + b'"')
    m = copy.deepcopy(r)
    yield "spelling: a key escaped (legal)", m, i, _sub_once(b'"card"', b'"c\\u0061rd"', i)
    m = copy.deepcopy(r)
    kind = acts[i]["kind"].encode()
    yield "spelling: a kind escaped (legal)", m, i, _sub_once(b'"' + kind + b'"', b'"' + kind[:-1] + _escape(
        chr(kind[-1])) + b'"', [a["kind"] for a in acts[:i]].count(acts[i]["kind"]))
    seat0 = [k for k in range(1, n) if acts[k]["seat"] == 0]
    if seat0:
        k = rng.choice(seat0)
        m = copy.deepcopy(r)
        yield "spelling: seat -0 (legal)", m, k, _sub_once(b'"seat":0', b'"seat":-0', seat0.index(k) + (
            1 if acts[0]["seat"] == 0 else 0))
    # one card changed to one the seat does not hold, spelled oddly: the compiled path must not read it as the old one
    held = {s_: set(h) for s_, h in enumerate(r["deal"])}
    for b in acts[:i]:
        if b["kind"] == "borrow":
            held[b["from"]].discard(b["card"])
            held[b["seat"]].add(b["card"])
        else:
            held[b["seat"]].discard(b["card"])
    others = sorted(set().union(*(held[x] for x in range(4) if x != acts[i]["seat"])) - {"SJ", "BJ"})
    if others:
        bad = rng.choice(others)
        m = copy.deepcopy(r)
        m["actions"][i]["card"] = bad
        yield "spelling: another seat's card, escaped", m, i, _sub_once(f'"{bad}"'.encode(), b'"' + _escape(bad) + b'"')
        m = copy.deepcopy(r)
        m["actions"][i]["card"] = bad.lower()
        yield "spelling: another seat's card, lower case", m, i
        if bad[0] == "T":
            m = copy.deepcopy(r)
            m["actions"][i]["card"] = "10" + bad[1]
            yield "spelling: another seat's card, 10 for T", m, i
    m = copy.deepcopy(r)
    m["actions"][i]["card"] = " " + c
    yield "spelling: a card with a space", m, i
    m = copy.deepcopy(r)
    m["actions"][i]["kind"] = acts[i]["kind"].capitalize()
    yield "spelling: a kind capitalised", m, i
    m = copy.deepcopy(r)
    yield "spelling: seat 1.0", m, i, _sub_once(f'"seat":{acts[i]["seat"]}'.encode(), f'"seat":{acts[i]["seat"]}.0'.encode(),
                                                [a["seat"] for a in acts[:i]].count(acts[i]["seat"]))
    # a dealt card twice, spelled two ways
    m = copy.deepcopy(r)
    s1, s2 = rng.sample(range(4), 2)
    ts = [x for x in m["deal"][s1] if x[0] == "T"]
    if ts:
        m["deal"][s2][rng.randrange(len(m["deal"][s2]))] = "10" + ts[0][1]
        yield "spelling: a dealt card twice, as T and as 10", m, None


MUTATORS: dict[str, Callable[[dict[str, Any], random.Random], Iterator[Mutant]]] = {
    "bieqi": mutate_bieqi, "bieqi-borrow": mutate_borrow, "xinyang-heiqi": mutate_heiqi}
REFERENCES: dict[str, Callable[[dict[str, Any]], None]] = {
    "bieqi": ref_bieqi, "bieqi-borrow": ref_borrow, "xinyang-heiqi": ref_heiqi}


# --------------------------------------------------------------------------- running

#: Mutations the reference cannot see in the decoded record (it reads the decoded values): their documented verdict.
#: A file every mutant line is added to (``--write``), to run the command itself on them.
WRITE: str | None = None
BAD_SPELLINGS = {"spelling: seat 1.0": "an integer written with a fraction (docs/log-format.md: bad-type)"}



#: Lines of each legal hand with one byte changed.
BYTE_MUTANTS = 12


def _byte_change(rng: random.Random) -> Callable[[bytes], bytes]:
    """A change of one byte of a line: a bit flipped, or another printable character, anywhere in it."""
    pick, bit, char = rng.random(), rng.randrange(7), rng.randrange(32, 127)

    def change(line: bytes) -> bytes:
        k = int(pick * len(line))
        new = line[k] ^ (1 << bit) if bit < 6 else char
        return line[:k] + bytes([new]) + line[k + 1:]

    return change


def _decoded(line: bytes) -> dict[str, Any]:
    """A line as the reference reads it: strict JSON (one value, no key twice in an object, no lone surrogate)."""
    import json

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in items]
        if len(set(keys)) != len(keys):
            raise Bad("a key twice")
        return dict(items)

    try:
        text = line.decode("utf-8")
        obj = json.loads(text, object_pairs_hook=pairs, parse_constant=lambda c: (_ for _ in ()).throw(Bad(c)))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise Bad("not JSON") from None
    if not isinstance(obj, dict):
        raise Bad("not an object")
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in orjson.dumps(obj, option=orjson.OPT_PASSTHROUGH_DATACLASS
                                                                      ).decode("utf-8", "replace")):
        raise Bad("a lone surrogate")
    return obj


def gate(lines: list[bytes], batch: int) -> list[Any]:
    """The gate's verdict on each line (its Checked item), every line checked in batches of ``batch``."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mutants.jsonl"
        path.write_bytes(b"".join(x + b"\n" for x in lines))
        return list(generate_checked([str(path)], batch_size=batch, keep_records=False))


def place_of(item: Any, variant: str) -> int | None:
    p = item.check.problems[0]
    return p.trick if variant == "xinyang-heiqi" else p.action


def run(variant: str, hands: int, seed: int) -> tuple[dict[str, Counter[str]], list[str]]:
    rng = random.Random(seed)
    base = legal_hands(variant, hands, seed)
    ref = REFERENCES[variant]
    mutants: list[tuple[str, dict[str, Any], int | None, Callable[[bytes], bytes] | None]] = []
    findings: list[str] = []
    for r in base:
        try:
            ref(r)
        except Bad as e:
            findings.append(f"{variant}: the reference rejects legal hand {r['hand_id']}: {e.why} at {e.where}")
        for kind, m, where, *spell in MUTATORS[variant](r, rng):
            k = len(mutants)
            m.pop("table_id", None)  # no cross-hand chain between mutants
            if isinstance(m.get("hand_id"), str):
                m["hand_id"] = f"{m['hand_id']}~m{k}"
            if isinstance(m.get("players"), list):  # no two mutants one deal (duplicate-deal)
                m["players"] = [f"{p}~{k}" if isinstance(p, str) and p else p for p in m["players"]]
            mutants.append((kind, m, where, spell[0] if spell else None))
        for _ in range(BYTE_MUTANTS):  # bit rot: one byte of the line changed (judged as the line then decodes)
            k = len(mutants)
            m = copy.deepcopy(r)
            m.pop("table_id", None)
            m["hand_id"] = f"{m['hand_id']}~m{k}"
            m["players"] = [f"{p}~{k}" for p in m["players"]]
            mutants.append(("bytes: one byte changed", m, None, _byte_change(rng)))
    lines = [orjson.dumps(m) if f is None else f(orjson.dumps(m)) for _, m, _, f in mutants]
    if WRITE:
        with open(WRITE, "ab") as out:
            out.write(b"".join(x + b"\n" for x in lines))
    fast, slow = gate(lines, 1024), gate(lines, 1)
    ids = [m.get("hand_id") for _, m, _, _ in mutants]
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for (kind, m, where, _), line_no, a, b in zip(mutants, range(1, len(lines) + 1), fast, slow):
        t = table[kind]
        t["mutants"] += 1
        codes_a = [p.code for p in a.check.problems]
        codes_b = [p.code for p in b.check.problems]
        if codes_a != codes_b or a.ok != b.ok:
            findings.append(f"{variant} [{kind}] line {line_no}: compiled and explaining paths differ: {codes_a} / "
                            f"{codes_b}")
        try:
            if kind in BAD_SPELLINGS:
                raise Bad(BAD_SPELLINGS[kind], where)
            if kind.startswith("bytes:"):
                m = _decoded(lines[line_no - 1])
                if m.get("hand_id") in ids[: line_no - 1]:
                    raise Bad("the changed byte made the hand id of an earlier line")
            ref(m)
            legal, why, at = True, "", None
        except Bad as e:
            legal, why, at = False, e.why, e.where
        if a.ok:
            t["accepted"] += 1
            if legal:
                t["accepted, legal"] += 1
            else:
                t["ACCEPTED, WRONG"] += 1
                findings.append(f"{variant} [{kind}] line {line_no} hand {m.get('hand_id')}: accepted, but the "
                                f"reference says: {why} (at {at})")
        else:
            t["rejected"] += 1
            first = a.check.problems[0]
            if legal:
                t["REJECTED, LEGAL"] += 1
                findings.append(f"{variant} [{kind}] line {line_no}: rejected but legal: {first.code} {first.message}")
            if first.line != line_no or (first.hand_id is None and isinstance(m.get("hand_id"), str)
                                         and a.variant is not None):
                t["misplaced"] += 1
                findings.append(f"{variant} [{kind}] line {line_no}: problem at line {first.line}, hand "
                                f"{first.hand_id}")
            got = place_of(a, variant)
            if at is not None and got is not None and got != at and not legal:
                t["other place"] += 1
                findings.append(f"{variant} [{kind}] line {line_no}: the gate names "
                                f"{'trick' if variant == 'xinyang-heiqi' else 'action'} {got} ({first.code}: "
                                f"{first.message[:120]}), the reference {at} ({why})")
            elif at is not None and got is None and not legal:
                t["no place"] += 1
                findings.append(f"{variant} [{kind}] line {line_no}: {first.code} names no action/trick; the reference "
                                f"{at} ({why}): {first.message[:160]}")
            t["code " + first.code] += 1
    return table, findings


# --------------------------------------------------------------------------- a table's hands (the cross-hand checks)


def _rotate_heiqi(r: dict[str, Any], k: int) -> dict[str, Any]:
    """The same hand with every seat number moved on by ``k`` (who holds what and who speaks when unchanged)."""
    m = copy.deepcopy(r)
    m["deal"] = [r["deal"][(s - k) % 4] for s in range(4)]
    m["players"] = [r["players"][(s - k) % 4] for s in range(4)]
    m["first_bidder"] = (r["first_bidder"] + k) % 4
    for b in m["bids"]:
        b["seat"] = (b["seat"] + k) % 4
    if m["dealer"] is not None:
        m["dealer"] = (m["dealer"] + k) % 4
    for tr in m.get("tricks") or ():
        tr["leader"] = (tr["leader"] + k) % 4
    if m.get("result"):
        m["result"]["settlement"] = [r["result"]["settlement"][(s - k) % 4] for s in range(4)]
    return m


def ref_sequence(variant: str, prev: dict[str, Any], cur: dict[str, Any]) -> None:
    """Raise Bad when ``cur`` may not follow ``prev`` at one table (docs/borrow.md, docs/heiqi.md)."""
    if prev.get("started_at") and cur.get("started_at") and \
            datetime.fromisoformat(cur["started_at"]) < datetime.fromisoformat(prev["started_at"]):
        raise Bad("starts before the table's previous hand")
    if variant == "bieqi-borrow":
        # the previous hand's loser: the seat left with the joker (replayed here from the record's moves)
        hands = [set(h) for h in prev["deal"]]
        for a in prev["actions"]:
            if a["kind"] == "borrow":
                hands[a["from"]].discard(a["card"])
                hands[a["seat"]].add(a["card"])
            else:
                hands[a["seat"]].discard(a["card"])
        loser = prev["players"][next(s for s in range(4) if hands[s])]
        if loser in cur["players"] and cur["players"][cur["dealer"]] != loser:
            raise Bad("the dealer is not the previous hand's loser")
    elif variant == "xinyang-heiqi":
        passed = prev["dealer"] is None
        same = ((cur.get("rules") or {}).get("redeal_first_bidder", "same") == "same")
        if cur["first_bidder"] != (prev["first_bidder"] + (0 if passed and same else 1)) % 4:
            raise Bad("the first bidder is not the seat after the previous hand's")


def sequence_mutants(variant: str, base: list[dict[str, Any]], rng: random.Random
                     ) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Two consecutive hands of one table, the second (or what lies between) changed."""
    for h1, h2 in zip(base, base[1:]):
        if not h1.get("table_id") or h1["table_id"] != h2.get("table_id"):
            continue
        a, b = copy.deepcopy(h1), copy.deepcopy(h2)
        a["started_at"], b["started_at"] = "2026-11-01T20:00:00Z", "2026-11-01T20:05:00Z"
        yield "sequence: unchanged (legal)", [a, b]
        m = copy.deepcopy(b)
        m["started_at"] = "2026-11-01T19:59:59Z"
        yield "sequence: the next hand starts earlier", [a, m]
        m = copy.deepcopy(b)
        m["started_at"] = a["started_at"]
        yield "sequence: both start at once (legal)", [a, m]
        yield "sequence: a line that is no record between (legal)", [a, {"not": "a record", "table_id": a["table_id"]}, b]
        if variant == "bieqi-borrow":
            m = copy.deepcopy(b)
            x = rng.choice([s for s in range(4) if s != m["dealer"]])
            m["players"][x], m["players"][m["dealer"]] = m["players"][m["dealer"]], m["players"][x]
            yield "sequence: two players of the next hand change seats", [a, m]
            m = copy.deepcopy(b)
            m["players"] = m["players"][1:] + m["players"][:1]
            yield "sequence: the next hand's players rotated", [a, m]
            m = copy.deepcopy(b)
            m["players"][m["dealer"]] = "newcomer"
            yield "sequence: the dealer is new at the table", [a, m]
            m = copy.deepcopy(a)
            m["result"]["loser"] = (m["result"]["loser"] + 1) % 4
            yield "sequence: the previous hand's loser forged", [m, b]
        else:
            for k in (1, 3):
                yield f"sequence: the next hand's seats moved on by {k}", [a, _rotate_heiqi(b, k)]
            m = copy.deepcopy(b)
            m["rules"] = {"redeal_first_bidder": "next"}
            yield "sequence: the next hand names redeal_first_bidder next", [a, m]
            # the previous hand passed out: the redeal's first bidder is the same seat (rule "same", the default)
            p = copy.deepcopy(a)
            p["bids"] = [{"seat": (a["first_bidder"] + j) % 4, "bid": None} for j in range(4)]
            p["dealer"] = None
            for f in ("buried", "trump", "tricks", "result"):
                p.pop(f, None)
            yield "sequence: after a pass-out, the next seat bids first", [p, b]
            yield "sequence: after a pass-out, the same seat bids first (legal)", [p, _rotate_heiqi(b, 3)]
            m = copy.deepcopy(b)
            m["rules"] = {"redeal_first_bidder": "next"}
            yield "sequence: after a pass-out, the next seat bids first, rule next (legal)", [p, m]
            p2 = copy.deepcopy(p)
            p2["result"] = {"settlement": [0, 0, 0, 0]}
            yield "sequence: a pass-out with a result of zeros, then the same seat (legal)", [p2, _rotate_heiqi(b, 3)]


def run_sequences(variant: str, hands: int, seed: int) -> tuple[dict[str, Counter[str]], list[str]]:
    rng = random.Random(seed)
    base = legal_hands(variant, hands, seed, tables=True)
    groups = list(sequence_mutants(variant, base, rng))
    lines: list[bytes] = []
    last: list[int] = []
    for k, (_, recs) in enumerate(groups):
        for j, rec in enumerate(recs):
            rec = copy.deepcopy(rec)
            if "hand_id" in rec:
                rec["hand_id"] = f"{rec['hand_id']}~s{k}.{j}"
            rec["table_id"] = f"{rec['table_id']}~s{k}"
            if isinstance(rec.get("players"), list):  # no hand a copy of another group's (duplicate-deal)
                rec["players"] = [f"{p}~s{k}" for p in rec["players"]]
            lines.append(orjson.dumps(rec))
        last.append(len(lines))
    table: dict[str, Counter[str]] = defaultdict(Counter)
    findings: list[str] = []
    items = gate(lines, 1024)
    for (kind, recs), line_no in zip(groups, last):
        t = table[kind]
        t["mutants"] += 1
        item = items[line_no - 1]
        try:
            REFERENCES[variant](recs[-1])
            if "hand_id" in recs[-2]:  # (after a line that is no record the chain starts again)
                ref_sequence(variant, recs[0], recs[-1])
            legal, why = True, ""
        except Bad as e:
            legal, why = False, e.why
        if item.ok:
            t["accepted"] += 1
            t["accepted, legal" if legal else "ACCEPTED, WRONG"] += 1
            if not legal:
                findings.append(f"{variant} [{kind}] line {line_no}: accepted, but the reference says: {why}")
        else:
            t["rejected"] += 1
            first = item.check.problems[0]
            t["code " + first.code] += 1
            if legal:
                t["REJECTED, LEGAL"] += 1
                findings.append(f"{variant} [{kind}] line {line_no}: rejected but legal: {first.code} {first.message}")
            if first.line != line_no or not str(first.hand_id).startswith(recs[-1]["hand_id"] + "~s"):
                t["misplaced"] += 1
                findings.append(f"{variant} [{kind}] line {line_no}: problem at line {first.line}, hand {first.hand_id}")
    return table, findings


def main(argv: list[str] | None = None) -> int:
    from benchmarks.results import Results, command_line

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hands", type=int, default=40, help="legal hands per game to mutate (default 40)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--variants", default="bieqi,bieqi-borrow,xinyang-heiqi")
    ap.add_argument("--show", type=int, default=8, help="findings shown per variant (default 8)")
    ap.add_argument("--codes", action="store_true", help="also show the first problem codes per kind")
    ap.add_argument("--write", help="add every mutant line to this file (to run `analyzer validate` on them)")
    args = ap.parse_args(argv)
    global WRITE
    WRITE = args.write
    res = Results("gate_mutations", "The gate under mutation", "gate", command_line("benchmarks.gate_mutations", argv),
                  parameters={"hands": args.hands, "seed": args.seed, "variants": args.variants.split(",")},
                  about="Legal hands of every game changed at one point, judged by the gate (its compiled path and "
                        "its explaining path, which must agree) and by a reference written from the seed rules. "
                        "Accepted, wrong: a mutant the gate took that the reference refuses (a gate bug); rejected, "
                        "legal: a false alarm; other place / no place: a rejection naming another line, hand, move "
                        "or trick than the reference's first fault, or none.")
    summary: list[list[Any]] = []
    bad = 0
    for variant in args.variants.split(","):
        table, findings = run(variant, args.hands, args.seed)
        if variant != "bieqi":
            more, found = run_sequences(variant, args.hands, args.seed)
            table.update(more)
            findings += found
        peer = f" and {args.hands // 2} of the independent engine's" if variant == "bieqi" and PEER.exists() else ""
        print(f"\n== {variant}: {args.hands} simulated legal hands{peer}, seed {args.seed}")
        cols = ["mutants", "rejected", "accepted", "accepted, legal", "ACCEPTED, WRONG", "REJECTED, LEGAL", "other place",
                "no place"]
        print(f"{'mutation':55s} " + " ".join(f"{c[:9]:>9s}" for c in cols))
        total: Counter[str] = Counter()
        for kind in sorted(table):
            t = table[kind]
            total.update(t)
            print(f"{kind[:55]:55s} " + " ".join(f"{t[c]:9d}" for c in cols))
            if args.codes:
                print("    " + ", ".join(f"{k[5:]} {v}" for k, v in t.most_common() if k.startswith("code ")))
        print(f"{'total':55s} " + " ".join(f"{total[c]:9d}" for c in cols))
        for f in findings[: args.show]:
            print("  " + f)
        if len(findings) > args.show:
            print(f"  ... and {len(findings) - args.show} more findings")
        bad += len(findings)
        summary.append([variant, *(total[c] for c in cols), len(findings)])
    res.table("by_game", "Mutants by game", ["game", "mutants", "rejected", "accepted", "accepted, legal",
                                              "accepted, wrong", "rejected, legal", "other place", "no place",
                                              "findings"], summary)
    res.figure("mutants", sum(r[1] for r in summary), "mutants", "mutants judged, every game")
    res.figure("findings", bad, "findings", "findings (gate bugs, false alarms, misplaced, paths that disagree)",
               goal="0")
    res.write()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
