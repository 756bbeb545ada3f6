"""Problems found in a log, as data: a stable code, where it is, and a sentence a person can act on."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Any

#: Every problem code the validator emits, with what it means. The README's table is checked
#: against this dict by a test, so the two cannot drift.
CODES: dict[str, str] = {
    # reading
    "io-error": "a path cannot be read (missing, unreadable, bad gzip)",
    "line-too-long": "a line is longer than --max-line-bytes; it is skipped without being parsed",
    "not-utf8": "a line is not valid UTF-8",
    "not-json": "a line is not JSON",
    "not-object": "a line is JSON but not an object",
    "duplicate-key": "a key appears twice in one JSON object (readers disagree on which value counts)",
    # shape (schema)
    "missing-field": "a required field is absent",
    "extra-field": "a field the format does not define",
    "bad-type": "a field has the wrong type or an out-of-range value",
    "unknown-format": "`format` is not \"bieqi-log\"",
    "unknown-version": "`version` is not a supported version (1)",
    "unknown-variant": "`variant` names no known game",
    "bad-card": "a card code names no card",
    "bad-time": "`started_at` is not an RFC 3339 time",
    "bad-rules": "`rules` names an unknown option or an invalid value",
    # the hand itself
    "bad-players": "not 4 distinct non-empty player ids",
    "bad-deal": "the deal is not the variant's cards, dealt in the right counts",
    "duplicate-hand-id": "the hand id was already used earlier in the input",
    "first-action": "the first action is not the 7 of spades played by its holder",
    "out-of-turn": "an action by a seat whose turn it is not",
    "card-not-held": "an action with a card that is not in the actor's hand",
    "not-live": "a play of a card that is not live",
    "cover-with-live": "a cover while the actor holds a live card",
    "missing-actions": "the hand ends before every card is played or covered",
    "extra-actions": "actions after the hand is over",
    "time-backwards": "an action's `ms` is smaller than the one before",
    "result-mismatch": "the recorded result differs from the replay",
    "result-not-zero-sum": "the recorded scores do not sum to zero",
    # table variant with borrowing (bieqi-borrow)
    "borrow-with-live": "a borrow while holding a live card (the seed's named cheat)",
    "wrong-lender": "a borrow from someone other than the next player who still holds cards",
    "empty-hand-acts": "a player whose hand is empty acts",
    "bad-dealer": "the dealer is not the loser of the table's previous hand",
    "bad-lend": "a lent card the rules forbid (the joker, when rule lend_joker is false)",
    # 信阳黑七 (xinyang-heiqi)
    "bad-bidding": "a bid out of turn, not lower than the lowest so far, or after a final pass",
    "bad-dealer-choice": "the dealer is not the lowest bidder (or set when all passed)",
    "bad-bury": "buried cards the dealer did not hold after taking the bottom",
    "bad-lead": "a lead that is not a single, a pair or a tractor of one suit",
    "bad-follow": "a follow that breaks the follow-suit, pair or tractor obligation",
    "wrong-leader": "a trick led by a seat that did not win the trick before",
    "bad-first-bidder": "the first bidder is not the seat after the table's previous hand's first bidder",
}


@dataclass(slots=True)
class Problem:
    """One thing wrong with one record (or one line that is not a record)."""

    code: str
    message: str
    file: str | None = None
    line: int | None = None
    hand_id: str | None = None
    action: int | None = None
    seat: int | None = None
    player: str | None = None
    trick: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The problem for programs: ``action`` is the 0-based index into the log's ``actions``
        (the ``$.actions[i]`` of messages) and ``move`` the same action counted from 1, as people read it."""
        d = asdict(self)
        if d["trick"] is None:
            del d["trick"]
        d["move"] = None if self.action is None else self.action + 1
        return d

    def format(self) -> str:
        """One line for people: ``file:line: hand H, move 8 (seat 2, p3): [code] message`` (moves and tricks count
        from 1)."""
        where = f"{self.file or '-'}:{self.line or 0}"
        parts = []
        if self.hand_id is not None:
            parts.append(f"hand {self.hand_id}")
        if self.trick is not None:  # counted from 1 for people too (``trick`` in JSON stays the 0-based index)
            parts.append(f"trick {self.trick + 1}")
        if self.action is not None:
            parts.append(f"move {self.action + 1}")
        if self.seat is not None:
            parts.append(f"seat {self.seat}" + (f" ({self.player})" if self.player is not None else ""))
        ctx = ", ".join(parts)
        return printable(f"{where}: {ctx + ': ' if ctx else ''}[{self.code}] {self.message}")


#: Characters a terminal acts on or hides: C0/C1 controls and DEL (CR, ESC sequences, BEL, newline) and
#: the invisible format characters that reorder or hide text (bidi overrides and isolates, zero-width).
_HIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f"
                     "\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb]")


def printable(text: str) -> str:
    """``text`` with every control or invisible character escaped (``\\x1b``, ``\\u202e``): data from a
    log can then neither forge lines, move the cursor, retitle the terminal, nor reorder what follows."""
    if _HIDDEN.search(text) is None:
        return text
    return _HIDDEN.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text)
