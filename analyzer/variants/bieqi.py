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
    SEVEN_OF_SPADES,
    CardError,
    format_card,
    mask_points,
    parse_card,
    pretty_card,
    scan,
)
from analyzer.problems import Problem
from analyzer.rules import (  # noqa: F401 (NEXT_LIVE, Rules: re-exported, this module's public names)
    ACTIONS_PER_HAND,
    COVER,
    DEFAULT_RULES,
    HAND_SIZE,
    NEXT_LIVE,
    SEATS,
    Rules,
    apply_action,
)
from analyzer.variants.base import (  # noqa: F401 (holder_of, cards_text, deal_to_codes: re-exported)
    Clock,
    HandCheck,
    Offers,
    VariantBase,
    cards_text,
    deal_from,
    deal_to_codes,
    holder_of,
    players_problems,
    result_problems,
    rng_of,
)
from analyzer.variants.base import play_random as _play_random
from analyzer.variants.record import Card, HandHeader, Ms, Seat, SeatInts, player_of

NAME = "bieqi"
#: Batches this small skip the compiled check (see ``BieqiVariant.check_batch``).
FAST_PATH_MIN = 64


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
        self.live, self.table = apply_action(action, NEXT_LIVE, self.hands, self.covered, self.last_seven,
                                             self.live, self.table, t)
        self.last_action[t] = self.n
        self.history.append(action)
        self.n += 1
        self.turn = (t + 1) % SEATS

    def is_terminal(self) -> bool:
        return self.n >= ACTIONS_PER_HAND

    def points(self) -> list[int]:
        return [mask_points(m) for m in self.covered]

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


class LineRecord(HandHeader, tag=NAME, kw_only=True):
    """What validation decodes of a line first: a :class:`Record` with the deal and the actions left as raw
    JSON, which the compiled check reads from the bytes (checking what the decoder would: a line it does
    not vouch for is decoded again as a Record). Decoding 52 action objects into structs costs 3 times
    the rest of the line."""

    rules: Rules | None = None
    deal: msgspec.Raw
    actions: msgspec.Raw
    result: Result | None = None


# --------------------------------------------------------------------------- replay check

def _result_problems(rec: Record, out: Outcome, hand: str) -> list[Problem]:
    res = rec.result
    if res is None:
        return []
    checks: list[tuple[str, Any, Any]] = [
        ("scores", res.scores, list(out.scores)),
        ("points", res.points, list(out.points)),
        # a 通 seat's entry is not compared: it covered nothing, so no factor applies to it (1 in this project's
        # logs; another writer may put the table's factor there)
        ("multipliers", None if res.multipliers is None else [
            out.multipliers[s] if s in out.tong else m for s, m in enumerate(res.multipliers)], list(out.multipliers)),
        ("tong", None if res.tong is None else sorted(res.tong), list(out.tong)),
        ("dutou", None if res.dutou is None else sorted(res.dutou), list(out.dutou)),
        ("ranking", res.ranking, list(out.ranking)),
    ]
    why = f"(points {list(out.points)}, {out.explain()}, multipliers {list(out.multipliers)})"
    return result_problems(hand, checks, why, zero_sum=("scores", res.scores))


class BieqiVariant(VariantBase):
    name = NAME
    record_type = Record
    line_record_type = LineRecord
    description = "憋七, the standard computer game: 52 cards, covers scored, 通/双通/三通/独头七 multipliers"
    num_players = SEATS
    max_game_length = ACTIONS_PER_HAND
    offers = Offers(decisions="analyzer.analysis.decisions", hand_view="analyzer.report.hand",
                    simulator="analyzer.simulate.room")

    def new_initial_state(self, deal: Sequence[int], rules: Rules | None = None) -> State:
        return State(deal, rules or DEFAULT_RULES)

    def random_deal(self, seed: int | Any) -> list[int]:
        return random_deal(rng_of(seed))

    def deal_of(self, rec: Record) -> list[int]:
        return [sum(1 << parse_card(code) for code in codes) for codes in rec.deal]

    def actions_of(self, rec: Record) -> list[int]:
        return [parse_card(a.card) + (COVER if a.kind == "cover" else 0) for a in rec.actions]

    def make_record(self, state: State, deal: Sequence[int], *, hand_id: str, players: Sequence[str],
                    **fields: Any) -> Record:
        return make_record(state, deal, hand_id=hand_id, players=players, **fields)

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
        problems = players_problems(rec)
        masks = self.deal_masks(rec, problems)
        if masks is None:
            return HandCheck(problems)
        st = State(masks, rec.rules or DEFAULT_RULES)
        clock = Clock()
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
            late = clock.backwards(a.ms, i)
            if late:
                stop("time-backwards", i, a.seat, late)
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
        """The compiled fast path (:func:`analyzer.kernels.bieqi.check_records`) for legal hands; it
        sends everything else through ``check``, which explains. A batch smaller than
        ``FAST_PATH_MIN`` goes through ``check`` alone: loading numba (about 1 s) costs more than
        the engine spends on a few dozen hands, so a small file never imports it."""
        if len(records) < FAST_PATH_MIN:
            return [self.check(r) for r in records]
        from analyzer.kernels.bieqi import check_records

        return check_records(records, self.check, HandCheck)

    def check_raw(self, records: Sequence[Record | LineRecord], lines: Sequence[bytes]) -> list[HandCheck | None] | None:
        """The compiled fast path reading the deal and the actions from the lines
        (:func:`analyzer.kernels.bieqi.check_lines`), which also looks for repeated keys: the empty
        HandCheck for a legal hand, None for the others. None for a batch smaller than ``FAST_PATH_MIN``
        (see ``check_batch``)."""
        if len(records) < FAST_PATH_MIN:
            return None
        from analyzer.kernels.bieqi import check_lines

        return check_lines(records, lines, HandCheck)


def actions_to_log(actions: Sequence[int], first_seat: int, ms: Sequence[int] | None = None) -> list[Action]:
    """Engine actions -> log actions (seats follow strict rotation from the first actor)."""
    out = []
    for i, a in enumerate(actions):
        out.append(Action(seat=(first_seat + i) % SEATS, kind="cover" if a >= COVER else "play",
                          card=format_card(a % COVER), ms=None if ms is None else ms[i]))
    return out


def random_deal(rng: Any) -> list[int]:
    """A shuffled deal (4 masks of 13) from a ``random.Random``-like generator."""
    return deal_from(range(NUM_CARDS), [HAND_SIZE] * SEATS, rng)


def play_random(deal: Sequence[int], rng: Any, rules: Rules = DEFAULT_RULES) -> State:
    """Play a hand to the end with uniformly random legal actions (for tests and benchmarks)."""
    return _play_random(State(deal, rules), rng)


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
