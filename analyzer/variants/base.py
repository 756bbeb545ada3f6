"""The one contract every game variant implements (OpenSpiel's ``Game``), and the checks they share.

A variant module exposes a :class:`Game` object named ``VARIANT``. It states the game's facts
(seats, utility, maximum length), makes states (from a deal, from a record, from a seeded random
deal), turns a finished state back into a log record, replays and checks records (problems as
data), and declares what it offers the layers above (:class:`Offers`: decision rows, an audit
section, a hand view, a simulator). Consumers ask the object, never the variant's name; adding a
game is adding a module, its simulator and its docs.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any, Literal, Protocol

from analyzer.cards import format_card, pretty_card, scan
from analyzer.problems import Problem, blank_hand_id, blank_id, lookalike_ids, printable, quote_ids

Utility = Literal["zero-sum", "constant-sum", "general-sum"]


class GameState(Protocol):
    """A position of one hand. ``push`` applies an action without checking it."""

    history: list[int]

    def current_player(self) -> int: ...
    def legal_actions(self) -> list[int]: ...
    def is_legal(self, action: int) -> bool: ...
    def push(self, action: int) -> None: ...
    def is_terminal(self) -> bool: ...
    def returns(self) -> list[int]: ...
    def copy(self) -> Any: ...


@dataclass(slots=True)
class HandCheck:
    """What replaying one record found: its problems, and the outcome when the replay finished."""

    problems: list[Problem] = field(default_factory=list)
    outcome: Any = None

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass(frozen=True, slots=True)
class Offers:
    """What a variant offers beyond validation: each a module path (imported only when asked for), or None.

    - ``decisions``: exposes ``analyse(items, *, samples, dd_samples, seed) -> DataFrame`` (decision rows,
      docs/design.md) for the audit's pair statistics.
    - ``audit_section``: exposes ``Section`` (``add(item)`` for every checked hand of the audit's one
      pass over its input, ``result(alarm) -> dict``: its verdicts at audit.json's ``alarm``), ``SECTION_CODES``
      (problem codes that make the section worth writing), ``SECTION_SCHEMA`` (its JSON Schema in audit.json, under
      the variant's name), ``summary(section) -> str``, ``certain_cheats(section) -> int`` and, optionally,
      ``flagged(section) -> int`` (what its own tests flagged): the audit exits 1 when either is above 0.
    - ``hand_view``: exposes ``hand_data(record, decisions, problems) -> dict | None``, the data of the
      hand page of reports (the replayer).
    - ``simulator``: exposes ``simulate(*, hands, players, seed, **options) -> Simulation``.
    """

    decisions: str | None = None
    audit_section: str | None = None
    hand_view: str | None = None
    simulator: str | None = None


class Game(Protocol):
    """What validate, analysis, audit, report and simulate need from a game."""

    name: str
    record_type: type
    #: A lighter type validation may decode a line as first, for ``check_raw`` (None: ``record_type``).
    line_record_type: type | None
    description: str
    #: Seats at the table.
    num_players: int
    #: Returns of every finished hand sum to ``utility_sum`` ("zero-sum": 0).
    utility: Utility
    utility_sum: int
    #: Most engine actions a hand can take; None when the rules set no bound.
    max_game_length: int | None
    offers: Offers

    def new_initial_state(self, deal: Any, rules: Any = None) -> GameState:
        """The state before the first action of a hand dealt ``deal`` (as :meth:`random_deal` makes it)."""
        ...

    def random_deal(self, seed: int | random.Random) -> Any:
        """A shuffled deal, reproducible from ``seed``."""
        ...

    def deal_of(self, record: Any) -> Any:
        """The deal of a record (a well-formed one: :meth:`check` says what is wrong with others)."""
        ...

    def actions_of(self, record: Any) -> list[int]:
        """The engine actions of a record, in order."""
        ...

    def make_record(self, state: Any, deal: Any, *, hand_id: str, players: Sequence[str], **fields: Any) -> Any:
        """The log record of a hand played from ``deal`` to ``state``."""
        ...

    def replay(self, record: Any) -> Iterator[tuple[GameState, int]]:
        """(state, action) before every action of a record; the state is one object, pushed after each yield."""
        ...

    def check(self, record: Any) -> HandCheck:
        """Replay one decoded record; every problem found, replay stopping at the first illegal action."""
        ...

    def check_batch(self, records: Sequence[Any]) -> list[HandCheck]:
        """``check`` for many records; variants may override with a compiled fast path."""
        ...

    def check_raw(self, records: Sequence[Any], lines: Sequence[bytes]) -> list[HandCheck | None] | None:
        """``check_batch`` given the JSON line each record was decoded from too (records of
        ``line_record_type`` when it has one), looking on the way for keys repeated inside one object.
        None for a line it does not vouch for (a key that may repeat, anything not legal): the caller
        decodes it as ``record_type`` and checks it the long way. None for the whole batch when the
        variant has no such path."""
        ...

    def table_key(self, record: Any) -> str | None:
        """Records with the same key are one table's consecutive hands (for cross-hand checks)."""
        ...

    def check_sequence(self, previous: HandCheck, record: Any) -> list[Problem]:
        """Problems between a table's previous hand and this one (e.g. who must deal)."""
        ...

    def offer(self, what: str) -> Any:
        """The module behind one of :class:`Offers`' fields, or None when the variant offers none."""
        ...


class VariantBase:
    """Defaults for the optional parts of the contract, and what every variant computes the same way."""

    name: str
    line_record_type: type | None = None
    num_players: int = 4
    utility: Utility = "zero-sum"
    utility_sum: int = 0
    max_game_length: int | None = None
    offers: Offers = Offers()

    def check(self, record: Any) -> HandCheck:
        raise NotImplementedError

    def check_batch(self, records: Sequence[Any]) -> list[HandCheck]:
        return [self.check(r) for r in records]

    def check_raw(self, records: Sequence[Any], lines: Sequence[bytes]) -> list[HandCheck | None] | None:
        return None

    def table_key(self, record: Any) -> str | None:
        return None

    def check_sequence(self, previous: HandCheck, record: Any) -> list[Problem]:
        return []

    def offer(self, what: str) -> Any:
        path = getattr(self.offers, what)
        return None if path is None else import_module(path)

    def new_initial_state(self, deal: Any, rules: Any = None) -> Any:
        raise NotImplementedError

    def deal_of(self, record: Any) -> Any:
        raise NotImplementedError

    def actions_of(self, record: Any) -> list[int]:
        raise NotImplementedError

    def replay(self, record: Any) -> Iterator[tuple[Any, int]]:
        st = self.new_initial_state(self.deal_of(record), getattr(record, "rules", None))
        for a in self.actions_of(record):
            yield st, a
            st.push(a)

    def final_state(self, record: Any) -> Any:
        """The state after every action of a record."""
        st = self.new_initial_state(self.deal_of(record), getattr(record, "rules", None))
        for a in self.actions_of(record):
            st.push(a)
        return st


# --------------------------------------------------------------------------- shared helpers

def rng_of(seed: int | random.Random) -> random.Random:
    """A ``random.Random`` from a seed (or the generator itself)."""
    return seed if isinstance(seed, random.Random) else random.Random(seed)


def deal_from(deck: Sequence[int], sizes: Sequence[int], rng: random.Random) -> list[int]:
    """Shuffle ``deck`` (distinct cards) and give each seat the next ``sizes[s]`` of it, as masks."""
    cards = list(deck)
    rng.shuffle(cards)
    masks, k = [], 0
    for n in sizes:
        masks.append(sum(1 << c for c in cards[k:k + n]))
        k += n
    return masks


def deal_to_codes(deal: Sequence[int]) -> list[list[str]]:
    """Masks by seat -> the log's ``deal`` (codes sorted by card; jokers, 52 and 53, last)."""
    return [[format_card(c) for c in scan(m)] for m in deal]


def play_random(state: Any, rng: Any) -> Any:
    """Play ``state`` to the end with uniformly random legal actions (tests, benchmarks); returns it."""
    while not state.is_terminal():
        la = state.legal_actions()
        state.push(la[rng.randrange(len(la))])
    return state


def holder_of(hands: Sequence[int], card: int) -> int:
    """The seat whose mask holds ``card``, or -1."""
    for s, h in enumerate(hands):
        if h >> card & 1:
            return s
    return -1


def cards_text(mask: int) -> str:
    """The cards of a mask for messages: ``7♠ 8♠``, or ``none``."""
    return " ".join(pretty_card(c) for c in scan(mask)) or "none"


def players_problems(rec: Any) -> list[Problem]:
    """``bad-players`` when the record's player ids repeat, or when two of them look alike (the same once
    normalised: ``alice`` and ``ALICE``, ``café`` composed and decomposed, ``bob`` and ``bob `` or ``bob`` with a
    zero-width character): a log that seats two ids a person cannot tell apart hides who played. A hand id blank once
    normalised (only spaces or zero-width characters, as a blank player id) is ``bad-type`` first."""
    found = []
    if blank_hand_id(rec.hand_id):
        found.append(Problem("bad-type", f"$.hand_id is {printable(repr(rec.hand_id))}: blank once normalised (only "
                             f"spaces or zero-width characters): it names no hand a person could ask for",
                             hand_id=rec.hand_id))
    blank = blank_id(rec.players)
    if blank is not None:
        return [*found, Problem("bad-players", f"player id {printable(repr(rec.players[blank]))} (seat {blank}) is "
                                f"blank once normalised: it names nobody", hand_id=rec.hand_id)]
    same = lookalike_ids(rec.players)
    if same is None:
        return found
    if len(set(rec.players)) < len(rec.players):
        return [*found, Problem("bad-players", f"player ids are not distinct: {rec.players}", hand_id=rec.hand_id)]
    i, j = same
    a, b = quote_ids(rec.players[i], rec.players[j])
    return [*found, Problem("bad-players", f"player ids {a} and {b} (seats {i} and {j}) look alike (the same once "
                            f"normalised)", hand_id=rec.hand_id)]


class Clock:
    """Times of a hand's actions: each must not be earlier than the last one given."""

    __slots__ = ("last", "at")

    def __init__(self) -> None:
        self.last: int | None = None
        self.at = -1  # the index of the action that gave ``last``

    def backwards(self, ms: int | None, i: int) -> str | None:
        """The ``time-backwards`` message when ``ms`` (of action ``i``) is earlier than the previous time, else None.
        The message names the move that gave the previous time when it is not the action just before (those between
        have no ``ms``)."""
        if ms is None:
            return None
        prev, at = self.last, self.at
        self.last, self.at = ms, i
        if prev is None or ms >= prev:
            return None
        if at == i - 1:
            return f"ms {ms} is earlier than the previous action's {prev}"
        return f"ms {ms} is earlier than move {at + 1}'s {prev}, the last action before it with a time"


def result_problems(hand: str, checks: Sequence[tuple[str, Any, Any]], why: str,
                    zero_sum: tuple[str, Sequence[int]] | None = None) -> list[Problem]:
    """``result-mismatch`` for each (field, recorded, replayed) that differ (recorded None: not logged);
    ``result-not-zero-sum`` when ``zero_sum`` = (field, values) does not sum to 0."""
    found: list[Problem] = []
    if zero_sum is not None and sum(zero_sum[1]) != 0:
        name, values = zero_sum
        found.append(Problem("result-not-zero-sum", f"recorded {name} {list(values)} sum to {sum(values)}, not 0",
                             hand_id=hand))
    for name, recorded, replayed in checks:
        if recorded is not None and recorded != replayed:
            found.append(Problem("result-mismatch", f"result.{name} is recorded as {recorded!r} but the replay "
                                 f"gives {replayed!r} {why}", hand_id=hand))
    return found
