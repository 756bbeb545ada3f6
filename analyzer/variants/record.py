"""What every log v1 record shares: the header fields, and the field types variants reuse.

A variant's record subclasses :class:`HandHeader` with ``tag=<variant name>``; the ``variant``
field is msgspec's tag, so one decoder dispatches every line to its variant's record type.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

CARD_DESCRIPTION = "Card code: rank A23456789TJQK (or 10) then suit SHDC (or ♠♥♦♣), e.g. 7S, TD"

#: The largest number any count, time or score of a log may hold: 2**53 - 1, the largest integer a
#: JSON reader that uses doubles (JavaScript, pandas) still reads exactly. Larger values are a problem
#: (bad-type), so no report, sum or compiled kernel ever meets a number it cannot hold.
MAX_INT = 2**53 - 1

#: The longest id (hand, table, player) a record may hold, in characters: far above real ids (a UUID is 36, a hex
#: SHA-256 64, an e-mail address at most 254), and short enough that an id repeated in every output that names it
#: (audit.json's pairs and evidence, CSVs, pages, decision rows) cannot make the outputs many times the log: 12 hands
#: of 200 KB ids made a 49 MB audit.json and a 60 MB page from a 4.4 MB log. Longer is a problem (``id-too-long``).
MAX_ID_LENGTH = 256

# A code is 2 or 3 characters ("10S"): checked while decoding (cheap), so a deal whose codes are split at
# the wrong places ("7", "S8S", ...) never reaches the compiled check, which reads the codes joined.
Card = Annotated[str, Meta(min_length=2, max_length=3, description=CARD_DESCRIPTION)]
#: A card code where the game has jokers too (the schema generator keys its pattern on "joker").
CardOrJoker = Annotated[str, Meta(min_length=2, max_length=3,
                                  description=CARD_DESCRIPTION + "; or a joker: SJ (small), BJ (big)")]
Seat = Annotated[int, Meta(ge=0, le=3)]
#: A recorded number (a score, points, a factor): bounded so sums and pages stay exact.
Int = Annotated[int, Meta(ge=-MAX_INT, le=MAX_INT)]
SeatInts = Annotated[list[Int], Meta(min_length=4, max_length=4)]
Ms = Annotated[int, Meta(ge=0, le=MAX_INT, description="Milliseconds since the hand started; never decreasing")]


class HandHeader(msgspec.Struct, tag_field="variant", forbid_unknown_fields=True, omit_defaults=True,
                 kw_only=True, gc=False):  # gc=False: records hold no cycles; tracking them costs ~40%
    """The fields every hand of every variant carries."""

    format: Annotated[Literal["bieqi-log"], Meta(description="Always \"bieqi-log\"")]
    version: Annotated[Literal[1], Meta(description="Log format version")]
    hand_id: Annotated[str, Meta(min_length=1, max_length=MAX_ID_LENGTH, description="Unique across the files given")]
    table_id: Annotated[str, Meta(max_length=MAX_ID_LENGTH, description="Hands with the same table id were played at "
                                                                        "one table, in order")] | None = None
    started_at: Annotated[datetime, Meta(tz=True, description="RFC 3339 time the hand started")] | None = None
    players: Annotated[list[Annotated[str, Meta(min_length=1, max_length=MAX_ID_LENGTH)]], Meta(
        min_length=4, max_length=4, description="4 distinct player ids in turn order (index = seat)")]


def player_of(rec: HandHeader, seat: int) -> str | None:
    """The id of the player in ``seat``, or None for a seat the record does not have."""
    return rec.players[seat] if 0 <= seat < len(rec.players) else None
