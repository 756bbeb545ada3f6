"""The audit report's one read of each player's rows: the player's section, the room's figures' inputs, the top
pairs' hands together and the evidence hands' rows; a Dask task a group of players when the rows are a spill the
workers share.

The audit page needs, of every decision row: the room's regret and think-time figures (every row), each player's
section (the player's rows), the rows of the top pairs' hands together (their "who helped whom" tables) and the rows
of the evidence hands (the replayer). Each used to be its own read of the players' spill (five in all, two of them a
Dask task a player whose filter was pickled by value for every task). :func:`read_players` reads each player's rows
once and makes all four parts of it (:func:`player_piece`); the client then joins the pieces in the rows' order.
With a Dask connection whose workers share the spill (``PlayerSpill.connection``), the pieces are made on the workers,
one task a group of players (:func:`_pieces_task`, ``running.dask.task_groups``), in parallel (tried again when
the cluster loses work with a worker, as the audit's other tasks are: ``running.dask.lost_retried``); otherwise in
this process, one player after another. The pieces, and so the page, are the same either way. The audit command
starts these tasks as soon as the audit's pairs and players are known (:func:`start_reading`, from ``audit.core``'s
``on_entries``), so the workers make the pieces while the audit's own client reads the rows shown, fills their
reasons and writes its other outputs.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from analyzer.report.hand import ENTRY_COLUMNS
from analyzer.report.pair import TABLE_COLUMNS
from analyzer.report.player import SECTION_COLUMNS, player_facts

if TYPE_CHECKING:
    import pandas as pd

    from analyzer.audit.rows import PlayerSpill, ReportRows

#: The per-row texts: the spill's pieces leave them out; they come from the rows shown (``SpilledRows.shown``).
TEXTS = ("options", "reasons")
#: The columns a think-time figure reads (``analyzer.audit.rows.TIMED_COLUMNS``).
TIMED = ("think_ms", "difficulty")
#: Dask task keys of the report's pieces: ``bieqi-report-<player>-<run>``.
KEY_PREFIX = "bieqi-report"


@dataclass(frozen=True)
class Plan:
    """What each player's piece is made of: the players given a section, the pairs whose hands together are kept,
    the evidence hands kept, and the section's settings."""

    players: frozenset[str]
    pairs: tuple[tuple[str, str], ...]
    hands: frozenset[str]
    max_points: int
    worst: int = 10
    seed: int = 0

    def columns(self) -> list[str]:
        """The columns a piece reads (all the parts' columns, once; no texts)."""
        names = dict.fromkeys([*SECTION_COLUMNS, *TABLE_COLUMNS, *ENTRY_COLUMNS, *TIMED])
        return [c for c in names if c not in TEXTS]


@dataclass
class Piece:
    """One player's part of the page: the places of its rows (their order among all rows), their regret, the
    player's mean regret and decisions, its rows with a think time, its section's own figures (None for a player
    without a section), its rows in the top pairs' hands together and in the evidence hands."""

    player: str
    at: np.ndarray
    regret: np.ndarray
    by_player: pd.DataFrame
    timed: pd.DataFrame | None
    facts: dict[str, Any] | None
    together: pd.DataFrame
    shown: pd.DataFrame


def codes_in(column: pd.Series, values: pd.Index) -> np.ndarray:
    """Each row's position among ``values`` (-1 for none): pyarrow's ``index_in`` on pandas' pyarrow strings, else
    each distinct value looked up once."""
    import pandas as pd

    if getattr(column.dtype, "storage", None) == "pyarrow":
        import pyarrow as pa
        import pyarrow.compute as pc

        arr = pa.array(column.array)
        try:
            found = pc.index_in(arr, value_set=pa.array(values.to_numpy(object), arr.type))
            return np.asarray(found.fill_null(-1).to_numpy(), np.int64)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):  # values that are not texts: the general way
            pass
    codes, uniq = pd.factorize(column)
    return np.append(values.get_indexer(np.asarray(uniq, dtype=object)), -1)[codes]


def together_mask(pairs: tuple[tuple[str, str], ...]) -> Any:
    """Rows of the hands where one of ``pairs`` sat together (``report.pair.hands_with`` of any of them)."""
    import pandas as pd

    names = pd.Index(sorted({x for pair in pairs for x in pair}), dtype=object)

    def mask(frame: pd.DataFrame) -> np.ndarray:
        seats = [codes_in(frame[f"p{s}"], names) for s in range(4)]
        out = np.zeros(len(frame), bool)
        if len(names) < 64:  # who sat at each row's table as the bits of a 64-bit word (bit 63: anyone else)
            sat = np.zeros(len(frame), np.uint64)
            for codes in seats:
                sat |= np.left_shift(np.uint64(1), np.where(codes >= 0, codes, 63).astype(np.uint64))
            for a, b in pairs:
                both = np.uint64((1 << names.get_loc(a)) | (1 << names.get_loc(b)))
                out |= (sat & both) == both
            return out
        at = [np.logical_or.reduce([codes == k for codes in seats]) for k in range(len(names))]
        for a, b in pairs:
            out |= at[names.get_loc(a)] & at[names.get_loc(b)]
        return out
    return mask


def player_piece(part: pd.DataFrame, plan: Plan) -> Piece:
    """A player's piece from all its rows (``part``, indexed by their places)."""
    import pandas as pd

    player = str(part["player"].iloc[0])
    facts = (player_facts(part, player, max_points=plan.max_points, worst=plan.worst, seed=plan.seed)
             if player in plan.players else None)
    timed = part[list(TIMED)].dropna() if "think_ms" in part else None
    # the rows and columns kept, taken in one step each (a frame's column selection and row filter cost alike)
    columns = list(part.columns)
    table = [columns.index(c) for c in TABLE_COLUMNS if c in columns]
    entry = [columns.index(c) for c in ENTRY_COLUMNS if c in columns]
    pairs_in = np.flatnonzero(together_mask(plan.pairs)(part)) if plan.pairs else np.zeros(0, np.intp)
    together = part.iloc[pairs_in, table]
    hands = pd.Index(sorted(plan.hands), dtype=object)
    shown = part.iloc[np.flatnonzero(codes_in(part["hand_id"], hands) >= 0), entry]
    return Piece(player, part.index.to_numpy(), part["regret"].to_numpy(), part.groupby("player")["regret"].agg(["mean", "size"]),
                 timed, facts, together, shown)


def _pieces_task(view: Any, players: list[str], plan: Plan) -> list[Piece]:
    """Players' pieces from their rows in the spill (``view``: ``analyzer.audit.rows.SpillView``), a player after
    another. Runs on a Dask worker that shares the spill's folder."""
    columns = plan.columns()
    return [player_piece(view.part(p, columns=columns), plan) for p in players]


@dataclass
class Reading:
    """The pieces' tasks of a plan, started ahead on the workers (:func:`start_reading`): :func:`read_players`
    gathers them when it is given the same plan and the spill holds the same players, else reads anew."""

    plan: Plan
    players: tuple[str, ...]
    futures: list[Any]


#: Dask priority of the tasks :func:`start_reading` starts: below the default (0) of the reads the audit waits for
#: meanwhile (its rows shown), which so run first; the pieces take the workers' time the audit's client spends alone.
AHEAD_PRIORITY = -1


def _pieces_on(spill: PlayerSpill, players: list[str], plan: Plan, priority: int = 0) -> list[Any]:
    """One task a group of players on the spill's Dask workers (``running.dask.task_groups``): the futures of
    their lists of pieces, in the players' order (the plan scattered once, new keys)."""
    from analyzer.running.dask import share, task_groups

    client = spill.connection.client
    view = spill.shared_view()
    shared = share(client, plan)
    run = uuid.uuid4().hex[:12]
    groups = task_groups(client, players)
    return list(client.map(_pieces_task, [view] * len(groups), groups, [shared] * len(groups), pure=False,
                           priority=priority, key=[f"{KEY_PREFIX}-{g[0]}-{run}" for g in groups]))


def _on_workers(spill: PlayerSpill) -> bool:
    """Whether the pieces of ``spill`` are read on Dask workers (a connection whose workers share it; two players or
    more)."""
    return spill.connection is not None and len(spill.files) > 1


def start_reading(spill: PlayerSpill, plan: Plan) -> Reading | None:
    """The pieces of ``plan`` started on the spill's Dask workers now, at a low priority (:data:`AHEAD_PRIORITY`),
    to be gathered by :func:`read_players`; None when they are not read there (nothing started)."""
    if not _on_workers(spill):
        return None
    players = list(spill.files)
    return Reading(plan, tuple(players), _pieces_on(spill, players, plan, AHEAD_PRIORITY))


def read_players(rows: ReportRows, plan: Plan, ahead: Reading | None = None) -> Iterator[Piece]:
    """Every player's piece, players in the order the rows hold them (a frame's first appearances, the spill's
    players): one Dask task a group of players when the rows are a spill whose workers share it, else here. ``ahead``: the
    same pieces started earlier (:func:`start_reading`), gathered when they are of this plan and these players."""
    import pandas as pd

    from analyzer.audit.rows import FrameRows, SpilledRows

    if isinstance(rows, FrameRows):
        # a frame's players as FrameRows.parts gives them, indexed by their positions in the frame (its rows' order)
        for idx in rows.df.groupby("player", sort=False).indices.values():
            yield player_piece(rows.df.iloc[idx].set_axis(pd.Index(idx)), plan)
        return
    assert isinstance(rows, SpilledRows)
    spill = rows.spill
    players = list(spill.files)
    if ahead is not None and (ahead.plan != plan or ahead.players != tuple(players) or not _on_workers(spill)):
        if spill.connection is not None:  # of another plan: not used
            spill.connection.client.cancel(ahead.futures)
        ahead = None
    if _on_workers(spill):
        from analyzer.running.dask import lost_retried

        client = spill.connection.client

        def attempt(k: int) -> list[Piece]:  # anew on a new attempt: the plan scattered again, new keys
            futures = ahead.futures if (k == 0 and ahead is not None) else _pieces_on(spill, players, plan)
            try:
                return [piece for group in client.gather(futures) for piece in group]
            finally:
                client.cancel(futures)

        # a worker lost while the pieces are read costs a new attempt, not the audit (running.dask.lost_retried)
        yield from lost_retried(client, attempt)
        return
    columns = plan.columns()
    for player in players:
        yield player_piece(spill.part(player, columns=columns), plan)


def joined(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The pieces' frames (indexed by their rows' places) as one, in the rows' order."""
    import pandas as pd

    kept = [f for f in frames if len(f)]
    if not kept:
        return frames[0] if frames else pd.DataFrame()
    return pd.concat(kept).sort_index()
