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

Card = Annotated[str, Meta(description=CARD_DESCRIPTION)]
#: A card code where the game has jokers too (the schema generator keys its pattern on "joker").
CardOrJoker = Annotated[str, Meta(description=CARD_DESCRIPTION + "; or a joker: SJ (small), BJ (big)")]
Seat = Annotated[int, Meta(ge=0, le=3)]
SeatInts = Annotated[list[int], Meta(min_length=4, max_length=4)]
Ms = Annotated[int, Meta(ge=0, description="Milliseconds since the hand started; never decreasing")]


class HandHeader(msgspec.Struct, tag_field="variant", forbid_unknown_fields=True, omit_defaults=True,
                 kw_only=True, gc=False):  # gc=False: records hold no cycles; tracking them costs ~40%
    """The fields every hand of every variant carries."""

    format: Annotated[Literal["bieqi-log"], Meta(description="Always \"bieqi-log\"")]
    version: Annotated[Literal[1], Meta(description="Log format version")]
    hand_id: Annotated[str, Meta(min_length=1, description="Unique across the files given")]
    table_id: Annotated[str, Meta(description="Hands with the same table id were played at one table, in order")] \
        | None = None
    started_at: Annotated[datetime, Meta(tz=True, description="RFC 3339 time the hand started")] | None = None
    players: Annotated[list[Annotated[str, Meta(min_length=1)]], Meta(
        min_length=4, max_length=4, description="4 distinct player ids in turn order (index = seat)")]


def player_of(rec: HandHeader, seat: int) -> str | None:
    """The id of the player in ``seat``, or None for a seat the record does not have."""
    return rec.players[seat] if 0 <= seat < len(rec.players) else None
