"""The player page: accuracy and regret over time, think time against difficulty, regret against the room."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from analyzer.report.common import clean, render_page, write_page
from analyzer.report.hand import hand_store, parse_action

if TYPE_CHECKING:
    import pandas as pd

    from analyzer.audit.rows import ReportRows

TIMELINE_BINS = 40
HIST_BINS = 30
DIFFICULTY_BINS = 10
#: The columns of a player's rows the player section reads (:func:`player_data`), and of its largest deviations.
WORST_COLUMNS = ("hand_id", "action", "chosen", "best", "kind", "regret", "reasons")
SECTION_COLUMNS = ("player", "hand_seq", "loss", "rank", "dd_regret", "think_ms", "difficulty", *WORST_COLUMNS)
#: Players with fewer decisions are left out of the room percentile (their means are noise).
MIN_ROOM_DECISIONS = 20


def _floats(values: Any) -> list[float | None]:
    return [clean(float(x)) for x in values]


def _match(df: pd.DataFrame) -> pd.Series:
    """The evaluator's best was chosen: loss 0, as in :func:`analyzer.analysis.players.player_table`."""
    return df["loss"] <= 0 if "loss" in df else df["rank"] == 0


def _timeline(mine: pd.DataFrame) -> dict[str, list[Any]]:
    """Match rate and mean regret over the player's hands, in up to TIMELINE_BINS consecutive groups."""
    import pandas as pd

    order = np.sort(mine["hand_seq"].unique())
    bins = np.array_split(np.arange(len(order)), min(TIMELINE_BINS, len(order)))
    last = np.array([b[-1] for b in bins])
    # the player's own hand count (not the room's), and its bin
    group = np.searchsorted(last, np.searchsorted(order, mine["hand_seq"].to_numpy()))
    # the two columns averaged, not a copy of every column of the player's rows
    g = pd.DataFrame({"match": _match(mine).to_numpy(), "regret": mine["regret"].to_numpy()}).groupby(group)
    return {"x": [int(i) + 1 for i in last], "match": _floats(g["match"].mean()), "regret": _floats(g["regret"].mean())}


class Room:
    """What every player of a room is compared with, computed once for all the room's players."""

    def __init__(self, decisions: pd.DataFrame, table: pd.DataFrame | None = None) -> None:
        """``table``: the room's player table when the caller has it already (the audit computed it from
        the same rows), so it is not computed again; the rows are then read only for the room's regret
        and think-time comparisons."""
        from analyzer.analysis.players import player_table

        # the figures every surface shows (analyzer players, the audit's players.csv, this page)
        self.table = (player_table(decisions) if table is None else table).set_index("player")
        self._regret(decisions["regret"], decisions.groupby("player")["regret"].agg(["mean", "size"]))
        # the two columns only: dropping rows of the whole frame copies every column when a think time is missing
        self._think(decisions[["think_ms", "difficulty"]].dropna() if "think_ms" in decisions else None)

    def _regret(self, regret: pd.Series, by_player: pd.DataFrame) -> None:
        """The room's regret figures from every row's regret (in row order: the mean adds them in that order)."""
        self.by_player = by_player
        self._peers: tuple[np.ndarray, np.ndarray] | None = None
        self.mean_regret = clean(float(regret.mean()))
        self.top = max(1.0, float(np.nanquantile(regret, 0.99)))
        self.edges = np.linspace(0.0, self.top, HIST_BINS + 1)
        self.shares = self.shares_of(regret)

    def _think(self, ok: pd.DataFrame | None) -> None:
        """The room's think time by difficulty decile from the rows with both (in any order)."""
        self.think: dict[str, list[float | None]] | None = None
        if ok is not None and len(ok):
            edges = np.unique(np.quantile(ok["difficulty"], np.linspace(0, 1, DIFFICULTY_BINS + 1)))
            groups = ok.groupby(np.digitize(ok["difficulty"], edges[1:-1]))
            self.think = {"room_x": _floats(groups["difficulty"].median()),
                          "room_median": _floats(groups["think_ms"].median() / 1000)}

    @classmethod
    def of_rows(cls, rows: ReportRows, table: pd.DataFrame | None = None) -> Room:
        """The room of :class:`analyzer.audit.rows.ReportRows` (a frame's or a spill's), its figures one column
        at a time: every row's regret in row order (8 bytes a decision, freed once its figures are made: the
        exact 99th percentile and the mean in pandas' order need every value), each player's mean regret, then
        the rows with a think time (their think time and difficulty: the exact deciles and medians need them)."""
        from analyzer.audit.rows import FrameRows

        if table is None:
            if not isinstance(rows, FrameRows):
                raise ValueError("the room of spilled rows needs the audit's player table")
            return cls(rows.df)
        return cls.of_parts(table, *rows.regret(), rows.timed())

    @classmethod
    def of_parts(cls, table: pd.DataFrame, regret: pd.Series, by_player: pd.DataFrame,
                 timed: pd.DataFrame | None) -> Room:
        """The room from its parts: the player table, every row's regret in row order, each player's mean regret
        and decisions (``mean``, ``size``, by player), and the think time and difficulty of the rows with both."""
        room = cls.__new__(cls)
        room.table = table.set_index("player")
        room._regret(regret, by_player)
        room._think(timed)
        return room

    def shares_of(self, values: pd.Series) -> list[float | None]:
        """Shares of decisions by regret on the room's bins (the tail in the last bin)."""
        v = np.clip(values.dropna().to_numpy(float), 0.0, self.top)
        counts, _ = np.histogram(v, self.edges)
        return _floats(counts / max(1, len(v)))

    def percentile(self, player: str, mean_regret: float) -> float | None:
        """Share of the other players (with enough decisions) whose mean regret is lower."""
        if self._peers is None:  # the room's players with enough decisions, once for every section
            ok = (self.by_player["size"] >= MIN_ROOM_DECISIONS).to_numpy()
            self._peers = (self.by_player.index.to_numpy(object)[ok], self.by_player["mean"].to_numpy(float)[ok])
        names, means = self._peers
        means = means[names != player]
        # the share as pandas' mean of the comparisons gives it: the count over the peers, one division
        return clean(float(np.count_nonzero(means < mean_regret) / len(means))) if len(means) else None


def _think_sample(mine: pd.DataFrame, max_points: int, seed: int) -> dict[str, list[float | None]] | None:
    """A sample of the player's (difficulty, seconds) (None without think times): the rows with both, and of more
    than ``max_points`` the ones ``DataFrame.sample(max_points, random_state=seed)`` draws (the same draw)."""
    if "think_ms" not in mine:
        return None
    think = mine["think_ms"].to_numpy(dtype=float, na_value=np.nan)
    difficulty = mine["difficulty"].to_numpy(dtype=float, na_value=np.nan)
    keep = np.flatnonzero(~(np.isnan(think) | np.isnan(difficulty)))
    if len(keep) > max_points:
        keep = keep[np.random.RandomState(seed).choice(len(keep), size=max_points, replace=False)]
    return {"difficulty": _floats(difficulty[keep]), "think_s": _floats(think[keep] / 1000)}


def largest(values: np.ndarray, n: int) -> np.ndarray:
    """Positions of the ``n`` largest values, largest first, ties in their order, NaN last: the rows
    ``DataFrame.nlargest(n, column)`` picks (its NaN rows too when fewer than ``n`` values are not NaN)."""
    nan = np.isnan(values)
    ok = np.flatnonzero(~nan)
    return np.concatenate([ok[np.argsort(-values[ok], kind="stable")], np.flatnonzero(nan)])[:n]


def player_facts(mine: pd.DataFrame, player: str, *, max_points: int = 1500, worst: int = 10,
                 seed: int = 0) -> dict[str, Any]:
    """What a player's section shows that depends on the player's rows alone (``mine``: only the player's rows);
    :func:`player_section` adds the room's figures. ``worst_at``: the index of its largest deviations."""
    if mine.empty:
        raise ValueError(f"no decisions by player {player!r}")
    n = len(mine)
    top = mine[[c for c in WORST_COLUMNS if c in mine]].iloc[largest(mine["regret"].to_numpy(float), worst)]
    return {
        "player": player, "decisions": n, "hands": int(mine["hand_id"].nunique()),
        "regret_se": clean(float(mine["regret"].std(ddof=1) / math.sqrt(n))) if n > 1 else None,
        "mean_dd_regret": clean(float(mine["dd_regret"].mean())) if "dd_regret" in mine else None,
        "timeline": _timeline(mine),
        "think": _think_sample(mine, max_points, seed),
        "worst": [{"hand_id": str(r["hand_id"]), "action": int(r["action"]),
                   "chosen": parse_action(r["chosen"], r["kind"]), "best": parse_action(r["best"], r["kind"]),
                   "regret": clean(float(r["regret"])), "reasons": str(r.get("reasons") or "")}
                  for r in top.to_dict("records")],
        "worst_at": top.index.to_numpy(),
    }


def player_section(facts: Mapping[str, Any], regret: pd.Series, room: Room) -> dict[str, Any]:
    """The player page's numbers: the player's own (:func:`player_facts`; ``regret``: the player's regret
    column) with the room's comparisons."""
    player = facts["player"]
    row = room.table.loc[player]
    mean_regret = float(row["mean_regret"])
    # neither part of the signal read (fewer than MIN_PEERS players for a level, no co-player with hands apart, as at a
    # private table of four): its p of 1 would read as "certainly not"; the page says it was not read
    read = any(math.isfinite(float(row[k])) for k in ("level_z", "partner_z") if k in row.index)
    return {
        "player": player, "decisions": facts["decisions"], "hands": facts["hands"],
        "skill": clean(float(row["skill"])), "skill_lo": clean(float(row["skill_lo"])),
        "skill_hi": clean(float(row["skill_hi"])), "signal_p": clean(float(row["signal_p"])) if read else None,
        "signal_flag": bool(row["flag"]),
        "match_rate": clean(float(row["match_rate"])), "mean_regret": clean(mean_regret),
        "regret_se": facts["regret_se"], "mean_dd_regret": facts["mean_dd_regret"],
        "room": {"mean_regret": room.mean_regret, "percentile": room.percentile(player, mean_regret)},
        "timeline": facts["timeline"],
        "think": None if room.think is None or facts["think"] is None else {**facts["think"], **room.think},
        "hist": {"edges": _floats(room.edges), "player": room.shares_of(regret), "room": room.shares},
        "worst": facts["worst"],
    }


def player_data(decisions: pd.DataFrame, player: str, *, room: Room | None = None, max_points: int = 1500,
                worst: int = 10, seed: int = 0) -> dict[str, Any]:
    """The player page's numbers; ``decisions`` holds the whole room's rows (for the comparison),
    or only the player's when ``room`` is given."""
    room = room or Room(decisions)
    is_mine = (decisions["player"] == player).to_numpy()
    mine = decisions if is_mine.all() else decisions[is_mine]  # one player's rows already: no copy
    facts = player_facts(mine, player, max_points=max_points, worst=worst, seed=seed)
    return player_section(facts, mine["regret"], room)


def write_player_report(path: str | os.PathLike[str], player: str, decisions: pd.DataFrame, *,
                        records: Iterable[Any] | None = None, lang: str = "en") -> None:
    """Write one player's page; ``records`` (optional) lets its largest deviations open in the replayer."""
    pdata = player_data(decisions, player)
    ids, hands = hand_store(records or [], decisions, {w["hand_id"] for w in pdata["worst"]})
    page = render_page("player", lang=lang, plotly=True, stores={"player": [pdata], "hand": hands},
                       data={"hand_ids": ids, "player_ids": [player], "default_view": ["player", 0], "focus": player})
    write_page(path, page)
