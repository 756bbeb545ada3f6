"""The small contract every game variant implements, so adding a game is adding a module.

A variant module exposes a :class:`Variant` object named ``VARIANT``. It owns: the shape of its log
record (a ``msgspec.Struct`` tagged with the variant name, which is also the JSON Schema source),
its rule options, a game state (OpenSpiel-style: current player, legal actions, push, terminal,
returns), and ``check`` which replays one record and reports problems as data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from analyzer.problems import Problem


class GameState(Protocol):
    """A position of one hand. ``push`` applies an action without checking it."""

    def current_player(self) -> int: ...
    def legal_actions(self) -> list[int]: ...
    def is_legal(self, action: int) -> bool: ...
    def push(self, action: int) -> None: ...
    def is_terminal(self) -> bool: ...
    def returns(self) -> list[int]: ...


@dataclass(slots=True)
class HandCheck:
    """What replaying one record found: its problems, and the outcome when the replay finished."""

    problems: list[Problem] = field(default_factory=list)
    outcome: Any = None

    @property
    def ok(self) -> bool:
        return not self.problems


class Variant(Protocol):
    """What the validator, simulator and reports need from a game."""

    name: str
    record_type: ClassVar[type] | type
    description: str
    #: The module of the report's view of one hand (its ``VIEW``), or None; a string so the rules never
    #: import report code (see analyzer.report.views).
    hand_view: str | None

    def check(self, record: Any) -> HandCheck:
        """Replay one decoded record; every problem found, replay stopping at the first illegal action."""
        ...

    def check_batch(self, records: Sequence[Any]) -> list[HandCheck]:
        """``check`` for many records; variants may override with a compiled fast path."""
        ...

    def table_key(self, record: Any) -> str | None:
        """Records with the same key are one table's consecutive hands (for cross-hand checks)."""
        ...

    def check_sequence(self, previous: HandCheck, record: Any) -> list[Problem]:
        """Problems between a table's previous hand and this one (e.g. who must deal)."""
        ...


class VariantBase:
    """Defaults for the optional parts of the contract."""

    hand_view: str | None = None

    def check_batch(self, records: Sequence[Any]) -> list[HandCheck]:
        return [self.check(r) for r in records]  # type: ignore[attr-defined]

    def table_key(self, record: Any) -> str | None:
        return None

    def check_sequence(self, previous: HandCheck, record: Any) -> list[Problem]:
        return []
