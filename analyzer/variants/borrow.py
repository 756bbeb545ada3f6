"""The table variant with one joker and borrowing (借牌, 憋七第二种玩法): rules, log record, replay check.

Actions are ints: ``card`` (0..51) plays it; ``BORROW`` is the borrower's request; ``LEND + card``
(card 0..53) is the lender's answer. A logged borrow is the two engine actions in a row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Annotated, Any

import msgspec
from msgspec import Meta

from analyzer.cards import (
    BIG_JOKER,
    FULL_DECK,
    NUM_CARDS,
    SEVEN,
    SEVEN_OF_SPADES,
    SMALL_JOKER,
    CardError,
    format_card,
    parse_card,
    pretty_card,
    scan,
    suit_mask,
)
from analyzer.problems import Problem
from analyzer.rules import NEXT_LIVE, SEATS
from analyzer.variants.base import (  # noqa: F401 (deal_to_codes: re-exported)
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
from analyzer.variants.record import CardOrJoker as Card
from analyzer.variants.record import HandHeader, Ms, Seat, player_of

NAME = "bieqi-borrow"
HAND_SIZE = 13
DEALER_HAND_SIZE = 14
JOKERS = (1 << SMALL_JOKER) | (1 << BIG_JOKER)
BORROW = 54
LEND = 55  # action = LEND + card hands the card to the borrower
#: Points by place (first finisher .. joker holder): zero-sum, every place counts.
PLACE_RETURNS = (3, 1, -1, -3)


# --------------------------------------------------------------------------- rule options

class BorrowRules(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Rule options. A log may name any of them in its ``rules`` object; the rest keep defaults."""

    lend_joker: Annotated[bool, Meta(
        description="The lender may hand over the joker (the seed: 可以给出王). When false, a lender holding "
        "other cards must lend one of those")] = True


DEFAULT_RULES = BorrowRules()


@dataclass(frozen=True, slots=True)
class Outcome:
    """A finished hand: who emptied their hand in which order, and the joker holder who lost."""

    finish_order: tuple[int, ...]
    loser: int
    #: Who sat where; filled in by ``check`` so the next hand's dealer can be compared by person.
    players: tuple[str, ...] = ()

    @property
    def ranking(self) -> tuple[int, ...]:
        return (*self.finish_order, self.loser)


@dataclass(frozen=True, slots=True)
class BorrowDeal:
    """A deal of this variant: 4 masks (the 52 and one joker) and the dealer, who holds 14."""

    hands: list[int]
    dealer: int


# --------------------------------------------------------------------------- the game state

def steps_to_live(table: int, c: int) -> int:
    """How many cards must still be played before ``c`` is live (0 = live now); 13 for a joker.

    The one measure of how useful a card is to whoever holds it: honest lenders hand over the
    card with the most steps, and the audit ranks lent cards by it.
    """
    if c >= NUM_CARDS:
        return 13  # the joker is never live
    s, r = divmod(c, 13)
    run = (table & suit_mask(s)) >> (13 * s)
    if not run:
        return abs(r - SEVEN)  # the suit's 7 comes first
    lo, hi = (run & -run).bit_length() - 1, run.bit_length() - 1
    return r - hi - 1 if r > hi else lo - r - 1


class State:
    """A position in a hand of the borrowing variant. ``push`` does not check; ask ``is_legal`` first."""

    __slots__ = ("hands", "live", "table", "turn", "lender", "n", "finish_order", "history", "rules")

    def __init__(self, deal: Sequence[int], rules: BorrowRules = DEFAULT_RULES):
        """``deal``: 4 bit masks (53 cards: the 52 and one joker), by seat."""
        self.hands = list(deal)
        self.live = 1 << SEVEN_OF_SPADES
        self.table = 0
        self.turn = holder_of(self.hands, SEVEN_OF_SPADES)
        self.lender = -1  # the seat that must lend, between BORROW and LEND
        self.n = 0  # logged actions so far (a borrow counts once)
        self.finish_order: list[int] = []
        self.history: list[int] = []
        self.rules = rules

    def copy(self) -> State:
        s = State.__new__(State)
        s.hands, s.finish_order, s.history = self.hands[:], self.finish_order[:], self.history[:]
        s.live, s.table, s.turn, s.lender, s.n, s.rules = (self.live, self.table, self.turn, self.lender, self.n,
                                                            self.rules)
        return s

    def current_player(self) -> int:
        return self.lender if self.lender >= 0 else self.turn

    def next_holder(self, seat: int) -> int:
        """The first seat after ``seat`` in turn order still holding cards: ``seat`` itself when it is the
        only one, -1 when none is."""
        for k in range(1, SEATS + 1):
            s = (seat + k) % SEATS
            if self.hands[s]:
                return s
        return -1

    def live_in_hand(self, seat: int | None = None) -> int:
        """Mask of the live cards the seat (default: the one whose turn it is) holds."""
        return self.hands[self.turn if seat is None else seat] & self.live

    def lendable(self, seat: int) -> int:
        """Mask of the cards ``seat`` may hand over when lending."""
        h = self.hands[seat]
        if not self.rules.lend_joker and h & ~JOKERS:
            return h & ~JOKERS
        return h

    def legal_actions(self) -> list[int]:
        if self.is_terminal():
            return []
        if self.lender >= 0:
            return [LEND + c for c in scan(self.lendable(self.lender))]
        lv = self.hands[self.turn] & self.live
        return list(scan(lv)) if lv else [BORROW]

    def is_legal(self, action: int) -> bool:
        return action in self.legal_actions()

    def push(self, action: int) -> None:
        if action == BORROW:
            self.lender = self.next_holder(self.turn)
            self.history.append(action)
            return
        t = self.turn
        if action >= LEND:
            b = 1 << (action - LEND)
            giver = self.lender
            self.hands[giver] &= ~b
            self.hands[t] |= b
            self.lender = -1
        else:
            b = 1 << action
            giver = t
            self.hands[t] &= ~b
            self.table |= b
            self.live = (self.live & ~b) | NEXT_LIVE[action]
        if not self.hands[giver]:
            self.finish_order.append(giver)
        self.history.append(action)
        self.n += 1
        # the borrower's turn ends too: play goes on with the next seat that holds cards
        self.turn = self.next_holder(t)

    def is_terminal(self) -> bool:
        return self.table == FULL_DECK

    def outcome(self) -> Outcome:
        loser = next((s for s in range(SEATS) if self.hands[s] & JOKERS), -1)
        return Outcome(tuple(self.finish_order), loser)

    def returns(self) -> list[int]:
        out = [0] * SEATS
        for place, s in enumerate(self.outcome().ranking):
            out[s] = PLACE_RETURNS[place]
        return out


# --------------------------------------------------------------------------- log record (v1)



class Play(msgspec.Struct, tag_field="kind", tag="play", forbid_unknown_fields=True, omit_defaults=True, gc=False):
    """The seat plays a live card."""

    seat: Annotated[Seat, Meta(description="Seat index of the actor (0..3)")]
    card: Card
    ms: Ms | None = None


class Borrow(msgspec.Struct, tag_field="kind", tag="borrow", forbid_unknown_fields=True, omit_defaults=True,
             gc=False):
    """The seat, holding no live card, borrows (借牌): the lender hands over one card of their choice."""

    seat: Annotated[Seat, Meta(description="Seat index of the borrower (0..3)")]
    lender: Annotated[Seat, Meta(description="Seat that hands the card over: the next seat still holding cards")] = (
        msgspec.field(name="from"))
    card: Card
    ms: Ms | None = None


class BorrowResult(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    finish_order: Annotated[list[Seat], Meta(max_length=3, description="Seats in the order their hands emptied")]
    loser: Annotated[Seat, Meta(description="Seat left holding the joker; deals the table's next hand")]


class BorrowRecord(HandHeader, tag=NAME, kw_only=True):
    """One hand of the borrowing variant (憋七第二种玩法) in log format v1. Hands with the same
    ``table_id`` are one table's hands in order: each dealer must be the previous hand's loser."""

    rules: BorrowRules | None = None
    dealer: Annotated[Seat, Meta(description="Seat of the dealer (the previous hand's loser), dealt 14 cards")]
    deal: Annotated[list[list[Card]], Meta(min_length=4, max_length=4, description="Cards of each seat: the 52 and "
                                           "one joker, 14 for the dealer and 13 for the others")]
    actions: Annotated[list[Play | Borrow], Meta(description="Every action in order, until all 52 ordinary cards "
                                                  "are on the table")]
    result: BorrowResult | None = None


# --------------------------------------------------------------------------- replay check

def deal_masks(rec: BorrowRecord, problems: list[Problem]) -> list[int] | None:
    """The deal as 4 masks, or None after adding bad-card / bad-deal problems."""
    hand = rec.hand_id
    masks = [0] * SEATS
    seen = dup = 0
    for s, codes in enumerate(rec.deal):
        for j, code in enumerate(codes):
            try:
                c = parse_card(code, jokers=True)
            except CardError as e:
                problems.append(Problem("bad-card", f"deal[{s}][{j}]: {e}", hand_id=hand, seat=s,
                                        player=player_of(rec, s)))
                continue
            dup |= seen & (1 << c)
            seen |= 1 << c
            masks[s] |= 1 << c
    if any(p.code == "bad-card" for p in problems):
        return None
    sizes = [len(x) for x in rec.deal]
    want = [DEALER_HAND_SIZE if s == rec.dealer else HAND_SIZE for s in range(SEATS)]
    what = []
    if sizes != want:
        what.append(f"seat sizes {sizes}, expected {want} (the dealer, seat {rec.dealer}, gets 14)")
    if dup:
        what.append(f"dealt twice: {cards_text(dup)}")
    if FULL_DECK & ~seen:
        what.append(f"missing: {cards_text(FULL_DECK & ~seen)}")
    if (seen & JOKERS).bit_count() != 1:
        what.append("expected exactly one joker (SJ or BJ)")
    if what:
        problems.append(Problem("bad-deal", "the deal is not the 52 cards and one joker: " + "; ".join(what),
                                hand_id=hand))
        return None
    return masks


def _result_problems(rec: BorrowRecord, out: Outcome) -> list[Problem]:
    res = rec.result
    if res is None:
        return []
    return result_problems(rec.hand_id, [("finish_order", res.finish_order, list(out.finish_order)),
                                         ("loser", res.loser, out.loser)],
                           f"(finish order {list(out.finish_order)}, joker left with seat {out.loser})")


class BorrowVariant(VariantBase):
    name = NAME
    record_type = BorrowRecord
    description = ("憋七, the table variant (第二种玩法): 52 cards and one joker, 借牌 instead of covering; "
                   "the joker holder loses and deals next")
    num_players = SEATS
    #: No bound: a borrow moves a card between hands, and lenders may hand over dead cards for ever.
    max_game_length = None
    offers = Offers(audit_section="analyzer.audit.borrow", hand_view="analyzer.report.hand_borrow",
                    simulator="analyzer.simulate.borrow")

    def new_initial_state(self, deal: BorrowDeal, rules: BorrowRules | None = None) -> State:
        return State(deal.hands, rules or DEFAULT_RULES)

    def random_deal(self, seed: int | Any) -> BorrowDeal:
        rng = rng_of(seed)
        dealer = rng.randrange(SEATS)
        return BorrowDeal(random_deal(rng, dealer, rng.choice((SMALL_JOKER, BIG_JOKER))), dealer)

    def deal_of(self, rec: BorrowRecord) -> BorrowDeal:
        return BorrowDeal([sum(1 << parse_card(code, jokers=True) for code in codes) for codes in rec.deal],
                          rec.dealer)

    def actions_of(self, rec: BorrowRecord) -> list[int]:
        out: list[int] = []
        for a in rec.actions:
            c = parse_card(a.card, jokers=True)
            out += [BORROW, LEND + c] if isinstance(a, Borrow) else [c]
        return out

    def make_record(self, state: State, deal: BorrowDeal, *, hand_id: str, players: Sequence[str],
                    **fields: Any) -> BorrowRecord:
        return make_record(state, deal.hands, hand_id=hand_id, players=players, dealer=deal.dealer, **fields)

    def check(self, rec: BorrowRecord) -> HandCheck:
        hand = rec.hand_id
        problems = players_problems(rec)
        masks = deal_masks(rec, problems)
        if masks is None:
            return HandCheck(problems)
        st = State(masks, rec.rules or DEFAULT_RULES)
        clock = Clock()

        def flag(code: str, i: int, seat: int, msg: str) -> None:
            problems.append(Problem(code, msg, hand_id=hand, action=i, seat=seat, player=player_of(rec, seat)))

        for i, a in enumerate(rec.actions):
            if st.is_terminal():
                flag("extra-actions", i, a.seat, f"{len(rec.actions) - i} action(s) after all 52 ordinary cards "
                     f"are on the table")
                return HandCheck(problems)
            try:
                c = parse_card(a.card, jokers=True)
            except CardError as e:
                flag("bad-card", i, a.seat, str(e))
                return HandCheck(problems)
            late = clock.backwards(a.ms, i)
            if late:
                flag("time-backwards", i, a.seat, late)
            what = (f"borrow {pretty_card(c)} from seat {a.lender}" if isinstance(a, Borrow) else
                    f"play {pretty_card(c)}")
            t = st.turn
            if i == 0 and not (isinstance(a, Play) and c == SEVEN_OF_SPADES and a.seat == t):
                flag("first-action", i, a.seat, f"expected seat {t} ({player_of(rec, t)}), who holds 7♠, to play 7♠ "
                     f"first; found seat {a.seat} {what}")
                return HandCheck(problems)
            if not st.hands[a.seat]:
                flag("empty-hand-acts", i, a.seat, f"seat {a.seat} has no cards left (finished) but acts: {what}")
                return HandCheck(problems)
            if a.seat != t:
                flag("out-of-turn", i, a.seat, f"it is seat {t}'s turn ({player_of(rec, t)}); found seat {a.seat} {what}")
                return HandCheck(problems)
            lv = st.live_in_hand()
            if isinstance(a, Borrow):
                if lv:  # the seed's named cheat, whatever else is wrong with the borrow: named first, counted
                    flag("borrow-with-live", i, t, f"borrowed while holding live card(s) {cards_text(lv)} "
                         f"(拿着活牌还借牌): a player with a live card must play one")
                lender = st.next_holder(t)
                if a.lender != lender or lender == t:
                    why = "a player cannot borrow from themselves" if a.lender == t else (
                        f"seat {a.lender} has no cards left" if not st.hands[a.lender] else
                        "no seat holding cards may be skipped")
                    must = "no other seat holds cards" if lender == t else (
                        f"the lender must be seat {lender} ({player_of(rec, lender)}), the next seat still holding cards")
                    flag("wrong-lender", i, t, f"{what}: {must}; {why}")
                    return HandCheck(problems)
                if not st.hands[lender] >> c & 1:
                    flag("card-not-held", i, t, f"{what}: the lender, seat {lender}, does not hold {pretty_card(c)}")
                    return HandCheck(problems)
                if not st.lendable(lender) >> c & 1:
                    flag("bad-lend", i, t, f"{what}: the rules forbid lending the joker while the lender holds "
                         f"other cards ({cards_text(st.lendable(lender))})")
                    return HandCheck(problems)
                # a borrow with a live card in hand is certain cheating, but well defined: replay on so every one
                # is counted
                st.push(BORROW)
                st.push(LEND + c)
                continue
            if not st.hands[t] >> c & 1:
                where = "already on the table" if st.table >> c & 1 else f"in seat {holder_of(st.hands, c)}'s hand"
                flag("card-not-held", i, t, f"{what}: seat {t} does not hold {pretty_card(c)} ({where})")
                return HandCheck(problems)
            if not lv >> c & 1:
                if c >= NUM_CARDS:
                    msg = f"{what}: the joker is never live (王永远是死牌)"
                elif lv:
                    msg = f"{what}: not live; live cards in hand: {cards_text(lv)}"
                else:
                    msg = f"{what}: not live, and seat {t} holds no live card: it must borrow"
                flag("not-live", i, t, msg)
                return HandCheck(problems)
            st.push(c)
        if not st.is_terminal():
            t = st.turn
            flag("missing-actions", st.n, t, f"the hand ends after {st.n} actions with "
                 f"{(FULL_DECK & ~st.table).bit_count()} ordinary card(s) not on the table (seat {t} was to act, "
                 f"holding {cards_text(st.hands[t])})")
            return HandCheck(problems)
        out = replace(st.outcome(), players=tuple(rec.players))
        problems.extend(_result_problems(rec, out))
        return HandCheck(problems, out)

    def table_key(self, rec: BorrowRecord) -> str | None:
        return rec.table_id

    def check_sequence(self, previous: HandCheck, rec: BorrowRecord) -> list[Problem]:
        prev: Outcome = previous.outcome
        loser = prev.players[prev.loser]
        # the loser deals; a loser who left the table (the table keeps its id) cannot, and whoever deals then is
        # the table's choice, not a rule the log can break
        if player_of(rec, rec.dealer) == loser or loser not in rec.players:
            return []
        return [Problem("bad-dealer", f"the dealer is seat {rec.dealer} ({player_of(rec, rec.dealer)}), but the "
                        f"previous hand of table {rec.table_id} was lost by {loser} (seat {rec.players.index(loser)}), "
                        f"who must deal",
                        hand_id=rec.hand_id, seat=rec.dealer, player=player_of(rec, rec.dealer))]


# --------------------------------------------------------------------------- engine <-> log

def actions_to_log(deal: Sequence[int], history: Sequence[int], rules: BorrowRules = DEFAULT_RULES,
                   ms: Sequence[int] | None = None) -> list[Play | Borrow]:
    """Engine actions from a deal -> log actions (a BORROW and its LEND become one borrow)."""
    st = State(deal, rules)
    out: list[Play | Borrow] = []
    for a in history:
        t, t_ms = st.turn, None if ms is None else ms[len(out)]
        if a >= LEND:
            out.append(Borrow(seat=t, lender=st.lender, card=format_card(a - LEND), ms=t_ms))
        elif a != BORROW:
            out.append(Play(seat=t, card=format_card(a), ms=t_ms))
        st.push(a)
    return out


def make_record(state: State, deal: Sequence[int], *, hand_id: str, players: Sequence[str], dealer: int,
                table_id: str | None = None, ms: Sequence[int] | None = None, with_result: bool = True,
                started_at: datetime | None = None) -> BorrowRecord:
    """A log record of a hand played from ``deal`` (its result from the replay when ``with_result``)."""
    out = state.outcome() if with_result else None
    return BorrowRecord(
        format="bieqi-log", version=1, hand_id=hand_id, table_id=table_id, started_at=started_at,
        rules=None if state.rules == DEFAULT_RULES else state.rules, players=list(players), dealer=dealer,
        deal=deal_to_codes(deal), actions=actions_to_log(deal, state.history, state.rules, ms),
        result=None if out is None else BorrowResult(finish_order=list(out.finish_order), loser=out.loser))


def random_deal(rng: Any, dealer: int, joker: int = BIG_JOKER) -> list[int]:
    """A shuffled deal of the 52 and ``joker`` (14 cards to ``dealer``) from a ``random.Random``-like generator."""
    return deal_from([*range(NUM_CARDS), joker], [DEALER_HAND_SIZE if s == dealer else HAND_SIZE
                                                   for s in range(SEATS)], rng)


def play_random(deal: Sequence[int], rng: Any, rules: BorrowRules = DEFAULT_RULES) -> State:
    """Play a hand to the end with uniformly random legal actions (for tests and benchmarks)."""
    return _play_random(State(deal, rules), rng)


VARIANT = BorrowVariant()
