"""Standard 憋七 (the computer game): rules, scoring with 通/双通/三通/独头七, log record, replay check.

Actions are ints: ``card`` (0..51) to play it, ``COVER + card`` to cover it face down.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from analyzer.cards import (
    FULL_DECK,
    NUM_CARDS,
    SEVEN,
    SEVEN_OF_SPADES,
    SEVENS,
    CardError,
    format_card,
    parse_card,
    pretty_card,
    scan,
)
from analyzer.problems import Problem
from analyzer.variants.base import HandCheck, VariantBase
from analyzer.variants.record import Card, HandHeader, Ms, Seat, SeatInts

NAME = "bieqi"
SEATS = 4
HAND_SIZE = 13
ACTIONS_PER_HAND = 52
COVER = 52  # action = COVER + card covers the card


def _next_live() -> tuple[int, ...]:
    """NEXT_LIVE[c]: the cards that become live when c is played (A low, K high, no wrap)."""
    nxt = []
    for c in range(NUM_CARDS):
        r = c % 13
        if r == SEVEN:
            m = (1 << (c - 1)) | (1 << (c + 1))
            if c == SEVEN_OF_SPADES:  # the opening 7 makes the other three 7s live
                m |= SEVENS & ~(1 << c)
        elif 0 < r < SEVEN:
            m = 1 << (c - 1)
        elif SEVEN < r < 12:
            m = 1 << (c + 1)
        else:
            m = 0
        nxt.append(m)
    return tuple(nxt)


#: Shared with the compiled kernel and the table variant: the one definition of 活牌.
NEXT_LIVE = _next_live()


# --------------------------------------------------------------------------- rule options

#: Bounds of the rule options. With them every legal combination scores within 2**53 (so the compiled
#: scorer's 64-bit ints never wrap, and JSON readers using doubles read every score exactly): points
#: <= 364 (2**9), x4 players, tong factor <= 2**10, at most 3 独头七 of <= 2**8 each, at most 8 doublings.
MAX_TONG_FACTOR = 1 << 10
MAX_DUTOU_FACTOR = 1 << 8
MAX_THRESHOLDS = 8
MAX_POINTS = 364  # every card covered


class Rules(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Rule options. A log may name any of them in its ``rules`` object; the rest keep defaults."""

    dutou: Annotated[Literal["stack", "replace"], Meta(
        description="How a 独头七 combines with the 通 factor: 'stack' multiplies both (x2 x8 = x16), "
        "'replace' uses the 独头七 factor instead of the 通 factor")] = "stack"
    tong_factors: Annotated[tuple[Annotated[int, Meta(ge=1, le=MAX_TONG_FACTOR)], ...], Meta(
        min_length=5, max_length=5,
        description="Factor on the points of players who are not 通, by the number of 通 players 0..4")] = (1, 2, 4, 8, 1)
    dutou_factor: Annotated[int, Meta(ge=1, le=MAX_DUTOU_FACTOR,
                                      description="Factor per 独头七 on every player who is not 通")] = 8
    cover_doubling: Annotated[tuple[Annotated[int, Meta(ge=0, le=MAX_POINTS)], ...], Meta(
        max_length=MAX_THRESHOLDS,
        description="House rule: each threshold a player's raw cover points exceed doubles that player's points "
        "(e.g. [30, 50, 70]); empty by default")] = ()


DEFAULT_RULES = Rules()


# --------------------------------------------------------------------------- outcome

@dataclass(frozen=True, slots=True)
class Outcome:
    """A finished hand: raw cover points, who went 通 / 独头七, the factors, final points and scores."""

    points: tuple[int, ...]
    tong: tuple[int, ...]
    dutou: tuple[int, ...]
    multipliers: tuple[int, ...]
    final_points: tuple[int, ...]
    scores: tuple[int, ...]
    ranking: tuple[int, ...]

    def explain(self) -> str:
        """The multipliers in words, for reports: '1 通 (x2), 1 独头七 (x8): x16 on the others'."""
        parts = []
        n = len(self.tong)
        if n:
            parts.append(("通", "双通", "三通", "四通")[n - 1] + f" (seats {', '.join(map(str, self.tong))})")
        if self.dutou:
            parts.append(f"{len(self.dutou)} 独头七 (seats {', '.join(map(str, self.dutou))})")
        return "; ".join(parts) if parts else "no 通"


def settle(points: Sequence[int], last_play_was_seven: Sequence[bool], finish: Sequence[int],
           rules: Rules = DEFAULT_RULES) -> Outcome:
    """Score a finished hand from raw cover points per seat.

    ``finish[s]`` is the action index of seat s's last action (ties in points go to the earlier).
    """
    tong = tuple([s for s in range(SEATS) if not points[s]])
    dutou = tuple([s for s in tong if last_play_was_seven[s]])
    factor = rules.tong_factors[len(tong)]
    if dutou:
        d = rules.dutou_factor ** len(dutou)
        factor = d if rules.dutou == "replace" else factor * d
    mult = [factor if p else 1 for p in points]
    for threshold in rules.cover_doubling:  # house rule, empty by default
        mult = [m * 2 if p > threshold else m for p, m in zip(points, mult)]
    final = tuple([p * m for p, m in zip(points, mult)])
    total = sum(final)
    scores = tuple([total - SEATS * f for f in final])
    ranking = tuple([s for _, _, s in sorted(zip(final, finish, range(SEATS)))])
    return Outcome(tuple(points), tong, dutou, tuple(mult), final, scores, ranking)


# --------------------------------------------------------------------------- the game state

def holder_of(hands: Sequence[int], card: int) -> int:
    for s, h in enumerate(hands):
        if h >> card & 1:
            return s
    return -1


class State:
    """A position in a hand of 憋七. ``push`` does not check; ask ``is_legal`` first."""

    __slots__ = ("hands", "live", "table", "covered", "turn", "n", "last_action", "last_seven", "history", "rules")

    def __init__(self, deal: Sequence[int], rules: Rules = DEFAULT_RULES):
        """``deal``: 4 bit masks of 13 cards, by seat."""
        self.hands = list(deal)
        self.live = 1 << SEVEN_OF_SPADES
        self.table = 0
        self.covered = [0] * SEATS
        self.turn = holder_of(self.hands, SEVEN_OF_SPADES)
        self.n = 0
        self.last_action = [-1] * SEATS
        self.last_seven = [False] * SEATS
        self.history: list[int] = []
        self.rules = rules

    def copy(self) -> State:
        s = State.__new__(State)
        s.hands = self.hands[:]
        s.live, s.table, s.turn, s.n, s.rules = self.live, self.table, self.turn, self.n, self.rules
        s.covered = self.covered[:]
        s.last_action = self.last_action[:]
        s.last_seven = self.last_seven[:]
        s.history = self.history[:]
        return s

    def current_player(self) -> int:
        return self.turn

    def live_in_hand(self, seat: int | None = None) -> int:
        """Mask of the live cards the seat (default: the one to act) holds."""
        return self.hands[self.turn if seat is None else seat] & self.live

    def must_cover(self) -> bool:
        return not self.hands[self.turn] & self.live

    def legal_actions(self) -> list[int]:
        if self.n >= ACTIONS_PER_HAND:
            return []
        lv = self.hands[self.turn] & self.live
        if lv:
            return list(scan(lv))
        return [COVER + c for c in scan(self.hands[self.turn])]

    def is_legal(self, action: int) -> bool:
        if self.n >= ACTIONS_PER_HAND or not 0 <= action < 2 * NUM_CARDS:
            return False
        c = action % COVER
        h = self.hands[self.turn]
        if not h >> c & 1:
            return False
        lv = h & self.live
        return bool(lv >> c & 1) if action < COVER else not lv

    def push(self, action: int) -> None:
        t = self.turn
        c = action % COVER
        b = 1 << c
        self.hands[t] &= ~b
        if action >= COVER:
            self.covered[t] |= b
            self.last_seven[t] = False
        else:
            self.table |= b
            self.live = (self.live & ~b) | NEXT_LIVE[c]
            self.last_seven[t] = c % 13 == SEVEN
        self.last_action[t] = self.n
        self.history.append(action)
        self.n += 1
        self.turn = (t + 1) % SEATS

    def is_terminal(self) -> bool:
        return self.n >= ACTIONS_PER_HAND

    def points(self) -> list[int]:
        return [sum(c % 13 + 1 for c in scan(m)) for m in self.covered]

    def outcome(self) -> Outcome:
        return settle(self.points(), self.last_seven, self.last_action, self.rules)

    def returns(self) -> list[int]:
        return list(self.outcome().scores)


def format_action(action: int) -> str:
    return ("cover " if action >= COVER else "play ") + format_card(action % COVER)


# --------------------------------------------------------------------------- log record (v1)



class Action(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, gc=False):
    seat: Annotated[Seat, Meta(description="Seat index of the actor (0..3)")]
    kind: Annotated[Literal["play", "cover"], Meta(description="play a live card, or cover (扣) a card face down")]
    card: Card
    ms: Ms | None = None


class Result(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, kw_only=True, gc=False):
    scores: Annotated[SeatInts, Meta(description="Score of each seat as the server recorded it; sums to zero")]
    points: Annotated[SeatInts, Meta(description="Raw cover points of each seat")] | None = None
    multipliers: Annotated[SeatInts, Meta(description="Factor applied to each seat's points")] | None = None
    tong: Annotated[list[Seat], Meta(description="Seats that covered nothing (通)")] | None = None
    dutou: Annotated[list[Seat], Meta(description="通 seats whose last card played was a 7 (独头七)")] | None = None
    ranking: Annotated[list[Seat], Meta(min_length=4, max_length=4, description="Seats best first")] | None = None


class Record(HandHeader, tag=NAME, kw_only=True):
    """One hand of standard 憋七 in log format v1."""

    rules: Rules | None = None
    deal: Annotated[list[list[Card]], Meta(min_length=4, max_length=4, description="13 cards for each seat")]
    actions: Annotated[list[Action], Meta(description="Every action in order: 52 in a complete hand")]
    result: Result | None = None


# --------------------------------------------------------------------------- replay check

def cards_text(mask: int) -> str:
    return " ".join(pretty_card(c) for c in scan(mask)) or "none"


def _result_problems(rec: Record, out: Outcome, hand: str) -> list[Problem]:
    res = rec.result
    if res is None:
        return []
    found: list[Problem] = []
    if sum(res.scores) != 0:
        found.append(Problem("result-not-zero-sum", f"recorded scores {res.scores} sum to {sum(res.scores)}, not 0",
                             hand_id=hand))
    checks: list[tuple[str, Any, Any]] = [
        ("scores", res.scores, list(out.scores)),
        ("points", res.points, list(out.points)),
        ("multipliers", res.multipliers, list(out.multipliers)),
        ("tong", None if res.tong is None else sorted(res.tong), list(out.tong)),
        ("dutou", None if res.dutou is None else sorted(res.dutou), list(out.dutou)),
        ("ranking", res.ranking, list(out.ranking)),
    ]
    for name, recorded, replayed in checks:
        if recorded is not None and list(recorded) != replayed:
            why = f"(points {list(out.points)}, {out.explain()}, multipliers {list(out.multipliers)})"
            found.append(Problem("result-mismatch", f"result.{name} is recorded as {list(recorded)} but the replay "
                                 f"gives {replayed} {why}", hand_id=hand))
    return found


class BieqiVariant(VariantBase):
    name = NAME
    record_type = Record
    description = "憋七, the standard computer game: 52 cards, covers scored, 通/双通/三通/独头七 multipliers"

    def deal_masks(self, rec: Record, problems: list[Problem]) -> list[int] | None:
        """The deal as 4 masks, or None after adding bad-card / bad-deal problems."""
        hand = rec.hand_id
        masks = [0] * SEATS
        seen = 0
        dup = 0
        ok = True
        for s, codes in enumerate(rec.deal):
            for j, code in enumerate(codes):
                try:
                    c = parse_card(code)
                except CardError as e:
                    problems.append(Problem("bad-card", f"deal[{s}][{j}]: {e}", hand_id=hand, seat=s,
                                            player=player_of(rec, s)))
                    ok = False
                    continue
                b = 1 << c
                dup |= seen & b
                seen |= b
                masks[s] |= b
        if not ok:
            return None
        sizes = [len(x) for x in rec.deal]
        if sizes != [HAND_SIZE] * SEATS or dup or seen != FULL_DECK:
            what = []
            if sizes != [HAND_SIZE] * SEATS:
                what.append(f"seat sizes {sizes}, expected 13 each")
            if dup:
                what.append(f"dealt twice: {cards_text(dup)}")
            if FULL_DECK & ~seen:
                what.append(f"missing: {cards_text(FULL_DECK & ~seen)}")
            problems.append(Problem("bad-deal", "the deal is not the 52 cards 13 a seat: " + "; ".join(what),
                                    hand_id=hand))
            return None
        return masks

    def check(self, rec: Record) -> HandCheck:
        hand = rec.hand_id
        problems: list[Problem] = []
        if len(set(rec.players)) != len(rec.players):
            problems.append(Problem("bad-players", f"player ids are not distinct: {rec.players}", hand_id=hand))
        masks = self.deal_masks(rec, problems)
        if masks is None:
            return HandCheck(problems)
        st = State(masks, rec.rules or DEFAULT_RULES)
        prev_ms: int | None = None
        stopped = False

        def stop(code: str, i: int, seat: int, msg: str) -> None:
            problems.append(Problem(code, msg, hand_id=hand, action=i, seat=seat, player=player_of(rec, seat)))

        for i, a in enumerate(rec.actions):
            if st.is_terminal():
                stop("extra-actions", i, a.seat, f"{len(rec.actions) - i} action(s) after all 52 cards are gone; "
                     f"a hand has exactly 52 actions")
                stopped = True
                break
            try:
                c = parse_card(a.card)
            except CardError as e:
                stop("bad-card", i, a.seat, str(e))
                stopped = True
                break
            if a.ms is not None:
                if prev_ms is not None and a.ms < prev_ms:
                    stop("time-backwards", i, a.seat, f"ms {a.ms} is earlier than the previous action's {prev_ms}")
                prev_ms = a.ms
            what = f"{a.kind} {pretty_card(c)}"
            t = st.turn
            if i == 0 and not (a.kind == "play" and c == SEVEN_OF_SPADES and a.seat == t):
                stop("first-action", i, a.seat, f"expected seat {t} ({player_of(rec, t)}), who holds 7♠, to play 7♠ "
                     f"first; found seat {a.seat} {what}")
                stopped = True
                break
            if a.seat != t:
                stop("out-of-turn", i, a.seat, f"it is seat {t}'s turn ({player_of(rec, t)}); found seat {a.seat} {what}")
                stopped = True
                break
            held = st.hands[t]
            if not held >> c & 1:
                where = "already on the table" if st.table >> c & 1 else (
                    "covered earlier" if any(m >> c & 1 for m in st.covered) else
                    f"in seat {holder_of(st.hands, c)}'s hand")
                stop("card-not-held", i, t, f"{what}: seat {t} does not hold {pretty_card(c)} ({where})")
                stopped = True
                break
            lv = held & st.live
            if a.kind == "play" and not lv >> c & 1:
                if lv:
                    msg = f"play {pretty_card(c)} is not live; live cards in hand: {cards_text(lv)}"
                else:
                    msg = f"play {pretty_card(c)} is not live, and seat {t} holds no live card: it must cover a card"
                stop("not-live", i, t, msg)
                stopped = True
                break
            if a.kind == "cover" and lv:
                stop("cover-with-live", i, t, f"covered {pretty_card(c)} while holding live card(s) {cards_text(lv)}; "
                     f"a player with a live card must play one")
                stopped = True
                break
            st.push(COVER + c if a.kind == "cover" else c)
        if stopped:
            return HandCheck(problems)
        if not st.is_terminal():
            t = st.turn
            problems.append(Problem("missing-actions", f"the hand ends after {st.n} actions; expected 52 "
                                    f"(seat {t} was to act, holding {cards_text(st.hands[t])})",
                                    hand_id=hand, action=st.n, seat=t, player=player_of(rec, t)))
            return HandCheck(problems)
        out = st.outcome()
        problems.extend(_result_problems(rec, out, hand))
        return HandCheck(problems, out)

    def check_batch(self, records: Sequence[Record]) -> list[HandCheck]:
        """Compiled fast path for legal hands in canonical 2-character codes; anything else, and
        anything the kernel rejects, goes through ``check``, which explains."""
        import numpy as np

        from analyzer.kernels.bieqi import NEXT, RANK_OF, SUIT_OF, check_hands

        checks: list[HandCheck | None] = [None] * len(records)
        fast: list[int] = []
        deal: list[str] = []
        cards: list[str] = []
        kinds: list[str] = []
        seats: list[bytes] = []
        offsets = [0]
        sizes = [HAND_SIZE] * SEATS
        for k, rec in enumerate(records):
            acts = rec.actions
            d = rec.deal
            ds = "".join(["".join(x) for x in d])
            cs = "".join([a.card for a in acts])
            n = len(acts)
            if (len(ds) != 2 * NUM_CARDS or len(cs) != 2 * n or [len(x) for x in d] != sizes
                    or not (ds.isascii() and cs.isascii()) or len(set(rec.players)) != SEATS):
                checks[k] = self.check(rec)
                continue
            t = [a.ms for a in acts]
            if None in t:
                t = [x for x in t if x is not None]
            if t != sorted(t):  # time going backwards: the engine reports where
                checks[k] = self.check(rec)
                continue
            fast.append(k)
            deal.append(ds)
            cards.append(cs)
            kinds += [a.kind for a in acts]
            seats.append(bytes([a.seat for a in acts]))
            offsets.append(offsets[-1] + n)
        if fast:
            m = len(fast)
            pts = np.zeros((m, SEATS), np.int64)
            l7 = np.zeros((m, SEATS), np.bool_)
            status = check_hands(
                np.frombuffer("".join(deal).encode(), np.uint8), np.array(offsets, np.int64),
                np.frombuffer("".join(cards).encode(), np.uint8), np.frombuffer(b"".join(seats), np.uint8),
                np.frombuffer("".join(kinds).encode(), np.uint8),
                NEXT, RANK_OF, SUIT_OF, pts, l7)
            scored = [j for j, k in enumerate(fast) if not status[j] and records[k].result is not None]
            settled = _settle_batch([records[fast[j]] for j in scored], pts[scored], l7[scored])
            agrees = {j: _result_agrees(records[fast[j]].result, settled, i) for i, j in enumerate(scored)}
            for j, k in enumerate(fast):
                if status[j] or not agrees.get(j, True):
                    checks[k] = self.check(records[k])  # the engine says what is wrong
                else:
                    checks[k] = HandCheck([])  # legal; the outcome is not kept (the engine gives it)
        return checks  # type: ignore[return-value]


def _settle_batch(records: Sequence[Record], pts: Any, l7: Any) -> tuple[list[list[int]], ...]:
    """points, last-play-was-a-7, multipliers, scores, ranking of legal hands, compiled (``settle`` is
    the reference; a test checks they agree)."""
    import numpy as np

    from analyzer.kernels.bieqi import settle_hands
    from analyzer.kernels.scoring import rule_table

    rule_sets: dict[Rules, int] = {DEFAULT_RULES: 0}
    idx = np.array([rule_sets.setdefault(r.rules or DEFAULT_RULES, len(rule_sets)) for r in records], np.int64)
    first = np.array([r.actions[0].seat for r in records], np.int64)
    mult, scores, ranking = (np.zeros_like(pts) for _ in range(3))
    settle_hands(pts, l7, first, idx, rule_table(list(rule_sets)), mult, scores, ranking)
    return pts.tolist(), l7.tolist(), mult.tolist(), scores.tolist(), ranking.tolist()


def _result_agrees(res: Result | None, settled: tuple[list[list[int]], ...], j: int) -> bool:
    points, last7, mult, scores, ranking = (x[j] for x in settled)
    return res is not None and (res.scores == scores and (res.points is None or res.points == points)
            and (res.multipliers is None or res.multipliers == mult)
            and (res.ranking is None or res.ranking == ranking)
            and (res.tong is None or sorted(res.tong) == [s for s in range(SEATS) if not points[s]])
            and (res.dutou is None or sorted(res.dutou) == [s for s in range(SEATS) if not points[s] and last7[s]]))


def player_of(rec: Record, seat: int) -> str | None:
    return rec.players[seat] if 0 <= seat < len(rec.players) else None


def deal_to_codes(deal: Sequence[int]) -> list[list[str]]:
    """4 masks -> the log's ``deal`` (sorted codes by seat)."""
    return [[format_card(c) for c in scan(m)] for m in deal]


def actions_to_log(actions: Sequence[int], first_seat: int, ms: Sequence[int] | None = None) -> list[Action]:
    """Engine actions -> log actions (seats follow strict rotation from the first actor)."""
    out = []
    for i, a in enumerate(actions):
        out.append(Action(seat=(first_seat + i) % SEATS, kind="cover" if a >= COVER else "play",
                          card=format_card(a % COVER), ms=None if ms is None else ms[i]))
    return out


def random_deal(rng: Any) -> list[int]:
    """A shuffled deal (4 masks of 13) from a ``random.Random``-like generator."""
    deck = list(range(NUM_CARDS))
    rng.shuffle(deck)
    return [sum(1 << c for c in deck[s * HAND_SIZE:(s + 1) * HAND_SIZE]) for s in range(SEATS)]


def play_random(deal: Sequence[int], rng: Any, rules: Rules = DEFAULT_RULES) -> State:
    """Play a hand to the end with uniformly random legal actions (for tests and benchmarks)."""
    st = State(deal, rules)
    while not st.is_terminal():
        la = st.legal_actions()
        st.push(la[rng.randrange(len(la))])
    return st


def make_record(state: State, deal: Sequence[int], *, hand_id: str, players: Sequence[str],
                table_id: str | None = None, ms: Sequence[int] | None = None, with_result: bool = True,
                started_at: datetime | None = None) -> Record:
    """A log record of a finished hand (its result from the replay when ``with_result``)."""
    out = state.outcome() if with_result else None
    first = holder_of(deal, SEVEN_OF_SPADES)
    return Record(
        format="bieqi-log", version=1, hand_id=hand_id, table_id=table_id, started_at=started_at,
        rules=None if state.rules == DEFAULT_RULES else state.rules, players=list(players),
        deal=deal_to_codes(deal), actions=actions_to_log(state.history, first, ms),
        result=None if out is None else Result(
            scores=list(out.scores), points=list(out.points), multipliers=list(out.multipliers),
            tong=list(out.tong), dutou=list(out.dutou), ranking=list(out.ranking)))


VARIANT = BieqiVariant()
