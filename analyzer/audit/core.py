"""The audit pipeline: logs -> valid hands -> decision rows -> pair signals -> calibrated pairs -> audit.json.

Invalid hands are reported (as ``analyzer validate`` reports them) and left out. Each variant's
contract says what it offers (:class:`analyzer.variants.base.Offers`): a decision-row source
(``analyse(items, *, samples, dd_samples, seed) -> DataFrame``, standard hands through
:mod:`analyzer.analysis.decisions`) and an audit section fed every checked hand in the same single
pass over the input (so ``-`` works as well as a path).
"""

from __future__ import annotations

import math
import sys
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from analyzer.analysis.decisions import AUDIT_POLICY, DEFAULT_DD_SAMPLES, DEFAULT_SAMPLES
from analyzer.audit.calibrate import DIRECTED, SCORE_SIGNALS, SHARED_NOISE, VERDICTS, Alarm, calibrate, rank_pairs
from analyzer.audit.case import burst_look, case_details, direction_z, evidence_of, lead, signal_rows, verdict_line
from analyzer.audit.evidence import DEFAULT_TOP, directions, evidence_rows, pair_evidence
from analyzer.audit.groups import marked_groups
from analyzer.audit.outcomes import SEATING_COLUMNS, outcome_row, pair_outcomes, room_outcomes
from analyzer.audit.signals import SignalOptions
from analyzer.audit.rows import PLAYER_COLUMNS, AuditRows, PlayerSpill, SpilledRows, SpillView
from analyzer.logs import expand_paths, read_once, record_hash
from analyzer.problems import IdSpellings, Problem
from analyzer.validate import Checked, generate_checked, lookalikes
from analyzer.variants import registry

if TYPE_CHECKING:
    from analyzer.analysis.execute import Execution, Settings
    from analyzer.analysis.store import Store

FORMAT = "bieqi-audit"
VERSION = 1
class Places:
    """Where each valid hand of the input is (file, line), noted in the one pass, so that the few hands read again
    (the shown rows' reasons, the report's evidence hands) are read from their lines alone
    (:func:`analyzer.logs.records_at`), not by validating the whole input a second and a third time.

    With each place, a 64-bit hash of the hand's record (:func:`analyzer.logs.record_hash`): a line read again must
    hold the hand analysed, else :class:`analyzer.logs.ChangedInput` (a log rewritten while the audit ran: exit 2,
    nothing written; never reasons or replays of hands that were not analysed). The hands of ``once`` (files as
    :class:`analyzer.validate.Checked` names them, that cannot be read again: standard input, named pipes,
    ``logs.read_once``) are not noted: the audit keeps what it needs of them the first time."""

    def __init__(self, max_line_bytes: int | None = None, once: Iterable[str] = ()) -> None:
        self.files: dict[str, int] = {}
        # hand id -> (file, line, record hash), or all of them
        self.at: dict[str, tuple[int, int, int | None] | list[tuple[int, int, int | None]]] = {}
        self.max_line_bytes = max_line_bytes
        self.once = frozenset(once)

    def note(self, item: Checked) -> None:
        if item.file in self.once:
            return
        place = (self.files.setdefault(item.file, len(self.files)), item.line,
                 None if item.record is None else record_hash(item.record))
        hid = str(item.hand_id)
        have = self.at.get(hid)
        if have is None:
            self.at[hid] = place
        else:  # the same id twice: every place, as a second read of the input would find them
            self.at[hid] = [*(have if isinstance(have, list) else [have]), place]

    def records(self, hand_ids: set[str]) -> Iterator[Any]:
        """The records of these hands (every line of each id), in input order; of the files that can be read again
        only. Raises :class:`analyzer.logs.ChangedInput` when a line no longer holds the hand read there."""
        from analyzer.logs import DEFAULT_MAX_LINE_BYTES, records_at

        lines: dict[int, dict[int, int | None]] = {}
        for hid in hand_ids:
            have = self.at.get(hid)
            for f, n, h in (have if isinstance(have, list) else [have] if have is not None else []):
                lines.setdefault(f, {})[n] = h
        names = {k: f for f, k in self.files.items()}
        wanted = {names[k]: lines[k] for k in sorted(lines)}
        yield from records_at({f: sorted(ns) for f, ns in wanted.items()},
                              self.max_line_bytes or DEFAULT_MAX_LINE_BYTES, expect=wanted)


@dataclass
class Audit:
    """Everything one audit produced: the audit.json dict and what the report draws from.

    ``decisions``: every row; with ``run_audit(..., slim=True)`` only the rows shown (indexed by their places
    among all the rows), and ``rows`` the report's view of every row (:class:`analyzer.audit.rows.SpilledRows`:
    the numbers from the players' spill on disk, the texts of the shown rows), valid until :meth:`close`.
    """

    result: dict[str, Any]
    decisions: pd.DataFrame
    pairs: pd.DataFrame
    players: pd.DataFrame
    problems: list[Problem] = field(default_factory=list)
    rows: SpilledRows | None = None
    _spill: AuditRows | None = field(default=None, repr=False)
    _connection: Any = field(default=None, repr=False)  # a Dask connection the audit opened, kept for the spill's reads
    places: Places | None = field(default=None, repr=False)  # where each valid hand is, to read some back

    @property
    def flagged(self) -> bool:
        return any(p["flagged"] for p in self.result["pairs"])

    @property
    def report_rows(self) -> SpilledRows | pd.DataFrame:
        """What the report reads the rows from (``write_audit_report(decisions=...)``)."""
        return self.rows if self.rows is not None else self.decisions

    def close(self) -> None:
        """Delete the players' spill of a slim audit (``rows`` is unusable after)."""
        if self._spill is not None:
            self._spill.close()
            self._spill = None
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def __enter__(self) -> Audit:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: Per-row values the audit needs only for the rows it shows: the options (most of a row's
#: memory) and the reasons.
SHOWN_ONLY = ("options", "reasons")


def keep_shown_texts(df: pd.DataFrame, shown: np.ndarray) -> None:
    """In place: empty the :data:`SHOWN_ONLY` texts of every row but those at positions ``shown``, once the
    player table (which reads every row's options) is computed; what the report reads of the other rows
    (numbers, names) stays, so its pages are the same."""
    import gc

    from analyzer.analysis.execute import release_memory

    keep = np.zeros(len(df), bool)
    keep[shown] = True
    for col in SHOWN_ONLY:
        if col == "options" and col in df:  # the typed column: the shown rows' options, none for the others
            from analyzer.analysis.options import options_at

            df[col] = pd.Series(options_at(df[col], np.where(keep, np.arange(len(df)), -1)), index=df.index)
        elif col in df:
            # a new column: the old one's strings are freed with it (an in-place write would keep the block)
            df[col] = pd.Series(np.where(keep, df[col].to_numpy(object), ""), index=df.index, dtype=object)
    gc.collect()
    release_memory()


def _variant(item: Checked) -> str:
    return str(type(item.record).__struct_config__.tag)  # type: ignore[attr-defined]


def decision_stream(items: Iterable[Checked], seating: list[tuple[Any, ...]], skipped: Counter[str], *, samples: int,
                    dd_samples: int, seed: int, policy: str | None = None,
                    on_progress: Callable[[int], None] | None = None, execution: Execution | None = None,
                    store: Store | None = None, reasons: bool = False, settings: Settings | None = None,
                    seq_of: dict[str, int] | None = None,
                    on_steps: Callable[[str, int, int | None], None] | None = None) -> Iterator[pd.DataFrame]:
    """Decision rows of every hand whose variant offers them, as frames of whole hands (never all at once);
    ``seating`` and ``skipped`` (hands skipped by variant) fill up as the items are read.

    The first source is fed as a stream; hands of variants with another source wait for it. Standard
    hands are analysed batch by batch on ``execution`` (worker processes or Dask; the rows do not
    depend on it), or read from ``store`` when it holds them (``analysis.store.iter_rows``: the store's
    rows first, then the new hands'; ``seq_of`` receives the reused hands' places in the input),
    with ``settings`` (default: ``samples``, ``dd_samples``, ``seed`` and the analysis' defaults).
    Their rows carry no reasons unless ``reasons``: ``run_audit`` fills them for the rows it shows.
    Progress: ``on_steps("store", hands, total)`` as the store's rows are passed on (a part in frames of
    ``audit.stream.CHUNK_HANDS`` hands), then ``on_progress(hands)``: the hands of the logs done, the ones the store
    held counted as they are read, the others as they are analysed.
    """
    from analyzer.analysis.execute import Settings
    from analyzer.analysis.store import iter_rows
    from analyzer.audit.stream import CHUNK_HANDS, hand_chunks

    sources = {name: game.offers.decisions for name, game in registry().items()}
    streamed = next((m for m in sources.values() if m), "analyzer.analysis.decisions")
    waiting: dict[str, list[Checked]] = {}
    reused: dict[str, int] = {} if seq_of is None else seq_of
    analysed = [0]
    logs = [False]  # the logs are being read: the store's rows are all passed on

    def tick(n: int | None = None) -> None:
        if n is not None:
            analysed[0] = n
        if on_progress is not None:
            on_progress(len(reused) + analysed[0])

    def stream() -> Iterator[Checked]:
        logs[0] = True
        for k, item in enumerate(items):
            v = _variant(item)
            src = sources.get(v)
            if src is None:
                skipped[v] += 1
            elif src == streamed:
                seating.append(outcome_row(item))
                yield item
            else:
                waiting.setdefault(src, []).append(item)
            if store is not None and k % 64 == 63:  # the hands the store held are done once read
                tick()

    main = import_module(streamed)
    if streamed == "analyzer.analysis.decisions":  # in batches over workers, or from the store
        settings = settings or Settings.of(samples, dd_samples, seed, policy=policy)
        held = sum(map(len, store.part_hands)) if store is not None else 0
        passed = 0
        for frame in iter_rows(stream(), settings, execution, store=store, reasons=reasons, seq_of=reused,
                               on_progress=tick if on_progress is not None else None):
            if logs[0] or on_steps is None:
                yield frame
                continue
            for part in hand_chunks(frame, CHUNK_HANDS):  # a store's part: counted as it is passed on
                passed += int(part["hand_id"].nunique())
                yield part
                on_steps("store", passed, held)
        tick()
    else:
        yield main.analyse(stream(), samples=samples, dd_samples=dd_samples, seed=seed, on_progress=on_progress)
    for src, its in waiting.items():
        yield import_module(src).analyse(its, samples=samples, dd_samples=dd_samples, seed=seed)
        seating.extend(outcome_row(it) for it in its)


def _renumber(df: pd.DataFrame, seq_of: dict[str, int]) -> None:
    """In place: the reused store rows' ``hand_seq`` as their hands' places in this input."""
    if seq_of:
        seq = df["hand_id"].map(seq_of)
        df["hand_seq"] = seq.fillna(df["hand_seq"]).astype("int64")


def _num(x: Any, digits: int = 4) -> float | None:
    """A JSON-safe float (None for NaN/inf)."""
    x = float(x)
    return round(x, digits) if math.isfinite(x) else None


_BIG = sys.float_info.max


def _finite(x: Any, nan: float = 0.0) -> float:
    """``np.nan_to_num`` of one number (NaN -> ``nan``, +-inf -> the largest float), as a Python float: called ~40
    times a pair, where numpy's array machinery cost more than the entry's other work."""
    x = float(x)
    if x != x:
        return nan
    if x == math.inf:
        return _BIG
    return -_BIG if x == -math.inf else x


def _p(x: Any) -> float:
    """p-values keep their magnitude however small (rounding would turn 1e-9 into 0)."""
    return float(f"{float(x):.4g}")


class _Record(dict):  # type: ignore[type-arg]
    """A pair table's row as a dict (reading a field of a dict, not of a Series: ~60 fields a pair, thousands of
    pairs), with the Series' ``index`` that :func:`analyzer.audit.case.burst_look` reads."""

    @property
    def index(self) -> Any:
        return self.keys()


def _burst_looks(pairs: pd.DataFrame) -> list[str]:
    """:func:`analyzer.audit.case.burst_look` of every pair at once (its two looks' combined p's as arrays, not one
    pair's two one-element arrays at a time: the per-pair call was most of an entry's cost)."""
    from analyzer.audit.calibrate import log_combine_directions

    if "burst_ab_z_mean" not in pairs.columns:
        return ["count"] * len(pairs)

    def z(name: str) -> np.ndarray:
        return np.nan_to_num(pairs[name].to_numpy(np.float64)) if name in pairs.columns else np.zeros(len(pairs))

    def both(look: str) -> np.ndarray:
        return log_combine_directions(z(f"burst_ab_z_{look}"), z(f"burst_ba_z_{look}"))

    return np.where(both("mean") <= both("count"), "mean", "count").tolist()


def _pair_entry(row: pd.Series | _Record, look: str | None = None) -> dict[str, Any]:
    """A pair's audit.json entry from its row of the pair table (``look``: its :func:`_burst_looks`, else made
    from the row)."""
    signals: dict[str, Any] = {}
    for name in DIRECTED:
        entry: dict[str, Any] = {"p": _p(row[f"{name}_p"]), "null_scale": _num(row[f"{name}_null_scale"])}
        if name in SHARED_NOISE:
            entry["direction_rho"] = _num(row[f"{name}_direction_rho"])
        for tag, (x, y) in (("ab", ("a", "b")), ("ba", ("b", "a"))):
            d: dict[str, Any] = {"actor": row[x], "partner": row[y], "z": _num(row[f"{name}_{tag}_z"])}
            if name == "think":
                d["hands"] = int(_finite(row[f"think_{tag}_hands"]))
                d["slower_ratio"] = _num(row[f"think_{tag}_ratio"])
            else:
                d["hands"] = int(_finite(row[f"{name}_{tag}_hands"]))
                d["decisions"] = int(_finite(row[f"{name}_{tag}_decisions"]))
                d["points_per_hand"] = _num(row[f"{name}_{tag}_raw_per_hand"])
                d["centred_per_hand"] = _num(row[f"{name}_{tag}_per_hand"])
                d["se_per_hand"] = _num(row[f"{name}_{tag}_se_per_hand"])
            entry[tag] = d
        signals[name] = entry
    signals["favour"] = {"p": _p(row["favour_p"]), "null_scale": _num(row["favour_null_scale"]),
                         "corr_factor": _num(row["favour_corr_factor"]),
                         "ab": {"actor": row["a"], "partner": row["b"], "z": _num(row["favour_ab_z"])},
                         "ba": {"actor": row["b"], "partner": row["a"], "z": _num(row["favour_ba_z"])}}
    signals["codev"] = {"p": _p(row["codev_p"]), "z": _num(row["codev_z"]), "null_scale": _num(row["codev_null_scale"]),
                        "both_deviated": int(row["codev_both_deviated"]), "observed": int(row["codev_observed"]),
                        "expected": _num(row["codev_expected"])}
    burst: dict[str, Any] = {"p": _p(row["burst_p"]), "look": burst_look(row) if look is None else look}
    for tag, (x, y) in (("ab", ("a", "b")), ("ba", ("b", "a"))):
        burst[tag] = {"actor": row[x], "partner": row[y], "z": _num(row[f"burst_{tag}_z"]),
                      "hands": int(_finite(row[f"burst_{tag}_hands"])),
                      "above": int(_finite(row[f"burst_{tag}_above"])),
                      "expected": _num(_finite(row[f"burst_{tag}_expected"])),
                      "level": _num(_finite(row[f"burst_{tag}_level"], 1.0)),
                      "z_mean": _num(_finite(row.get(f"burst_{tag}_z_mean", 0.0))),
                      "mean_percentile": _num(_finite(row.get(f"burst_{tag}_mean_percentile", 50.0), 50.0))}
    signals["burst"] = burst
    more = row["hands_to_alarm"]
    return {"players": [row["a"], row["b"]], "hands_together": int(row["hands_together"]),
            "verdict": str(row["verdict"]), "flagged": bool(row["flagged"]),
            "score": _num(row["score"]), "log10_p": _num(row["log10_p"]), "z": _num(row["z"]),
            "p_value": _p(row["p_value"]), "q_value": _p(row["q_value"]), "log10_q": _num(row["log10_q"]),
            "effect_size": _num(row["effect_size"]),
            "hands_to_alarm": int(more) if np.isfinite(more) else None, "main_signal": row["main_signal"],
            "signals": signals, "evidence": []}


class _Seated:
    """The seating's rows of the hands two players sat in, in the seating's order: what a pair's outcomes read
    (``outcomes.pair_outcomes`` with the room's figures given: the same result as on the whole seating, without
    reshaping every hand of the room once a case pair)."""

    def __init__(self, seating: pd.DataFrame) -> None:
        self.seating = seating
        seats = [c for c in (f"p{s}" for s in range(4)) if c in seating.columns]
        names = seating[seats].astype(str).to_numpy().ravel() if len(seating) and seats else np.zeros(0, str)
        self.rows = pd.Series(np.repeat(np.arange(len(seating)), len(seats))).groupby(names).unique() \
            if len(names) else pd.Series(dtype=object)

    def hands_of(self, a: str, b: str) -> pd.DataFrame:
        at = [self.rows[p] for p in (a, b) if p in self.rows.index]
        keep = np.unique(np.concatenate(at)) if at else np.zeros(0, np.int64)
        return self.seating.iloc[keep]


def player_table(parts: Iterable[pd.DataFrame], seating: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """Per player: the shared table of :func:`analyzer.analysis.players.player_table` (skill, match rate,
    regret, level/partner signal: the same figures as ``analyzer players``), pace and pairs flagged;
    from each player's rows in turn (``parts``: one frame per player, see ``audit.rows.PlayerSpill``)."""
    from analyzer.analysis.execute import release_memory
    from analyzer.analysis.players import REF_WEIGHT, player_table_by_player

    median: dict[str, float] = {}

    def noted() -> Iterator[pd.DataFrame]:
        for part in parts:
            if len(part):
                median[str(part["player"].iloc[0])] = float(part["think_ms"].median())
            yield part
            del part
            release_memory()  # the player's rows, freed in the heap's holes: hand them back

    weight = 0.0 if REF_WEIGHT is None else REF_WEIGHT
    return _with_pairs(player_table_by_player(noted(), seating, ref_weight=weight), median, pairs)


def _with_pairs(table: pd.DataFrame, median: dict[str, float], pairs: pd.DataFrame) -> pd.DataFrame:
    """The player table with each player's median think time and pairs flagged."""
    out = table.set_index("player")
    out["median_think_ms"] = pd.Series(median, dtype=float).reindex(out.index)
    flagged = pairs[pairs["flagged"]]
    names = pd.concat([flagged["a"], flagged["b"]])
    out["flagged_pairs"] = names.value_counts().reindex(out.index).fillna(0).astype(np.int64)
    best = pd.concat([pairs[["a", "score"]].rename(columns={"a": "p"}), pairs[["b", "score"]].rename(columns={"b": "p"})])
    out["max_pair_score"] = best.groupby("p")["score"].max().reindex(out.index)
    out["decisions"] = out["decisions"].fillna(0).astype(np.int64)
    return out.reset_index().sort_values("player", kind="stable").reset_index(drop=True)


def _player_task(view: Any, player: str, seated: pd.DataFrame, whole: bool, ref_weight: float, worst: int
                 ) -> tuple[pd.DataFrame, pd.DataFrame | None, float, np.ndarray]:
    """One player's row of the table, median think time and the places of its ``worst`` largest deviations, from
    its rows in the spill (``view``: :class:`analyzer.audit.rows.SpillView`). Runs on a Dask worker."""
    from analyzer.analysis.players import player_rows

    part = view.part(player, columns=PLAYER_COLUMNS, texts=["options"])
    worst_at = pd.Series(part["regret"].to_numpy(), index=part.index).nlargest(worst).index.to_numpy()
    own, rest = player_rows(part, seated, whole=whole, ref_weight=ref_weight)
    return own, rest, float(part["think_ms"].median()), worst_at


def _players_task(view: Any, players: list[str], seated: pd.DataFrame, whole: bool, ref_weight: float, worst: int
                  ) -> list[tuple[pd.DataFrame, pd.DataFrame | None, float, np.ndarray]]:
    """:func:`_player_task` of a group of players, in turn (``whole``: for the group's first). Runs on a Dask worker."""
    return [_player_task(view, p, seated, whole and k == 0, ref_weight, worst) for k, p in enumerate(players)]


#: Dask priority of the player table's tasks: below the pair signals' passes and the evidence (priority 0), so that
#: they fill the workers while the client fits the pair table between passes, and a pass waits for one task at most.
PLAYER_TASK_PRIORITY = -1
#: Groups of players a worker for the player table's tasks: more, smaller ones than the other steps over the players
#: (``running.dask.GROUPS_PER_WORKER``), as a pass's task that comes while a worker runs one waits for it (64
#: players on 2 workers: 32 tasks of 2 players, ~0.1 s each).
PLAYER_GROUPS_PER_WORKER = 16


@dataclass
class PlayerTasks:
    """The player table's tasks on Dask (one a group of players: ``running.dask.task_groups``), submitted as soon
    as the rows are all in the spill; joined by :meth:`join` once the pair table is known (it gives the table's pair
    columns only).

    The values the tasks read (the spill's view and the seating, scattered) are held here until :meth:`join` has the
    results: a worker lost meanwhile with finished results has them recomputed from those values; when the cluster
    lost a value itself (its last copy went with a worker), the tasks are submitted again with the values scattered
    anew (``running.dask.lost_retried``)."""

    futures: list[Any]
    seating: pd.DataFrame
    weight: float
    client: Any
    players: list[str] = field(default_factory=list)
    worst: int = 0
    view: Any = None  # a PlayerSpill (its shared view), a SpillView or a future of one
    seated: pd.DataFrame | None = None
    shared: tuple[Any, Any] | None = None  # the scattered (view, seated) the futures read, held until joined

    @classmethod
    def submit(cls, connection: Any, view: Any, spill_players: list[str], seating: pd.DataFrame, worst: int
               ) -> PlayerTasks:
        """``view``: the spill (:class:`analyzer.audit.rows.PlayerSpill`, read through its shared view), a
        :class:`analyzer.audit.rows.SpillView` or a future of one."""
        from analyzer.analysis.players import REF_WEIGHT

        weight = 0.0 if REF_WEIGHT is None else REF_WEIGHT
        tasks = cls([], seating, weight, connection.client, list(spill_players), worst, view,
                     seating.drop_duplicates("hand_id"))
        tasks._submit(fresh=False)
        return tasks

    def _submit(self, *, fresh: bool) -> None:
        """The tasks (``fresh``: again, the values scattered anew, after the cluster lost some)."""
        from analyzer.running.dask import share, task_groups

        client, view = self.client, self.view
        if isinstance(view, PlayerSpill):
            shared_view = view.shared_view(fresh=fresh)
        elif isinstance(view, SpillView):
            shared_view = share(client, view)
        else:  # a future given as it is
            shared_view = view
        shared_seated = share(client, self.seated)
        self.shared = (shared_view, shared_seated)
        run = uuid.uuid4().hex[:12]
        groups = task_groups(client, self.players, PLAYER_GROUPS_PER_WORKER)
        n = len(groups)
        self.futures = client.map(_players_task, [shared_view] * n, groups, [shared_seated] * n,
                                  [k == 0 for k in range(n)], [self.weight] * n, [self.worst] * n, pure=False,
                                  key=[f"bieqi-players-{g[0]}-{run}" for g in groups],
                                  priority=PLAYER_TASK_PRIORITY)

    def join(self, pairs: pd.DataFrame) -> tuple[pd.DataFrame, list[np.ndarray]]:
        """The player table (with ``pairs``' columns) and each player's largest deviations' places."""
        from analyzer.analysis.players import join_player_rows
        from analyzer.running.dask import lost_retried

        def gather(attempt: int) -> list[Any]:
            if attempt:
                self._submit(fresh=True)
            return [one for group in self.client.gather(self.futures) for one in group]

        got = lost_retried(self.client, gather)
        self.futures = []
        self.shared = None
        own = [g[0] for g in got]
        median = {str(g[0]["player"].iloc[0]): g[2] for g in got}
        table = join_player_rows(own, got[0][1] if got else None, self.seating, ref_weight=self.weight)
        return _with_pairs(table, median, pairs), [g[3] for g in got]


def player_table_on(connection: Any, view: Any, spill_players: list[str], seating: pd.DataFrame, pairs: pd.DataFrame,
                    worst: int) -> tuple[pd.DataFrame, list[np.ndarray]]:
    """:func:`player_table` as one Dask task a group of players (:func:`_players_task`, reading its rows from the spill's
    folder, which the workers share), joined here; and each player's ``worst`` largest deviations' places."""
    return PlayerTasks.submit(connection, view, spill_players, seating, worst).join(pairs)


def _player_entry(row: pd.Series, partners: dict[str, list[str]]) -> dict[str, Any]:
    return {"player": row["player"], "hands": int(row["hands"]), "decisions": int(row["decisions"]),
            "mean_regret": _num(row["mean_regret"]), "match_rate": _num(row["match_rate"]),
            "skill": _num(row["skill"]), "skill_lo": _num(row["skill_lo"]), "skill_hi": _num(row["skill_hi"]),
            "signal_p": _num(row["signal_p"], 6), "signal_flag": bool(row["flag"]),
            "median_think_ms": _num(row["median_think_ms"]), "max_pair_score": _num(row["max_pair_score"]),
            "flagged_with": partners.get(row["player"], [])}


def audit_frame(df: pd.DataFrame, seating: pd.DataFrame, *, alarm: Alarm = Alarm(),
                signal_options: SignalOptions = SignalOptions(), top: int = DEFAULT_TOP
                ) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame]:
    """From decision rows and seating to the audit.json dict (without input bookkeeping), the pair
    table and the player table (the rows of a whole frame through :func:`audit_rows`)."""
    with AuditRows(signal_options) as acc:
        acc.add(df)
        return audit_rows(acc, seating, alarm=alarm, top=top)[:3]


def _evidence_mask(a: str, b: str, who: list[str]) -> Callable[[pd.DataFrame], np.ndarray]:
    def mask(frame: pd.DataFrame) -> np.ndarray:
        out = np.zeros(len(frame), bool)
        out[evidence_rows(frame, a, b, who)] = True
        return out
    return mask


def _evidence_task(view: Any, a: str, b: str, who: list[str], texts: list[str], top: int,
                   how: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """A case pair's evidence from its actors' rows in the spill (``view``: ``audit.rows.SpillView``); on a worker.
    ``how``: :func:`analyzer.audit.case.evidence_of`'s keywords (the signal and burst's extreme hands)."""
    from analyzer.audit.rows import frame_of

    cand = frame_of(view, _evidence_mask(a, b, who), texts=texts, players=who)
    return pair_evidence(cand, a, b, actors=who, top=top, **(how or {})) if len(cand) else []


#: Called by :func:`audit_rows` with audit.json's ``pairs`` entries (final: the evidence read) and its players' names
#: (as ``{"pairs": ..., "players": [{"player": name}, ...]}``, the players audit.json's ``players`` holds, in its order)
#: and the players' spill, before the rows shown are read from it: what reads the spill after the audit (its report)
#: can start its reads on the workers then, while the audit finishes.
OnEntries = Callable[[dict[str, Any], PlayerSpill], None]


def audit_rows(acc: AuditRows, seating: pd.DataFrame, *, alarm: Alarm = Alarm(), top: int = DEFAULT_TOP,
               on_entries: OnEntries | None = None, on_steps: Callable[[str, int, int | None], None] | None = None
               ) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The audit.json dict (without input bookkeeping), the pair table, the player table and the rows shown
    (``analysis.reasons.shown_rows``: a frame indexed by the rows' places, with their texts) from rows passed
    through ``acc``: the pair signals' sums, then the players' spill, read one player or a few rows at a time
    (the evidence's candidates, each player's rows for the table, the shown rows), never all at once.
    ``on_entries``: see :data:`OnEntries` (called when there are rows). ``on_steps("cases", done, total)``: a step a
    pair's entry, then one a player of the player table."""
    from analyzer.analysis.reasons import PLAYER_WORST

    spill = acc.players
    early = None  # on Dask, the player table's tasks run while the pair table is made (they do not need it)
    if acc.connection is not None and spill.files and len(seating):
        early = PlayerTasks.submit(acc.connection, spill, list(spill.files), seating, PLAYER_WORST)
    if acc.rows and acc.signals is not None:  # batch by batch, holding sums per pair (see audit.stream)
        pairs = rank_pairs(calibrate(acc.signals.result(seating), alarm))
    else:
        pairs = pd.DataFrame(columns=["a", "b", "hands_together", "score", "flagged", "verdict"])
    acc.drop_signals()  # their per-hand numbers are not needed any more
    entries = []
    pending: list[tuple[dict[str, Any], int]] = []  # (entry, its pair's place: its evidence being read on a worker)
    texts = list(SHOWN_ONLY)
    records = pairs.to_dict("records")  # every pair's fields once, as Python values (no Series a pair)
    labels = pairs.index.tolist()

    def case_of(k: int, at: int) -> tuple[pd.Series, str, str, list[str], dict[str, Any]] | None:
        """A pair with a case (every pair not clear, and the top of the ranking): its row (a Series, as the case's
        texts read it), players, evidence actors and what their evidence is (``case.evidence_of``)."""
        if not (acc.rows and (records[at]["verdict"] != "clear" or k < top)):
            return None
        row = pairs.iloc[at]
        a, b = str(row["a"]), str(row["b"])
        who = [(a, b)[i] for i in directions(*direction_z(row, str(row["main_signal"])))]
        return row, a, b, who, evidence_of(row, who)

    cases = [case_of(k, at) for at, k in enumerate(labels)]
    # on Dask the evidence (a task a case pair, on the workers that share the spill) is submitted first, so it is read
    # while the room's outcomes and the entries of every pair are made here
    reading: dict[int, Any] = {}

    def read_evidence(fresh: bool) -> dict[int, Any]:
        """The cases' evidence tasks (``fresh``: again, with the spill's view scattered anew)."""
        client = acc.connection.client
        view = spill.shared_view(fresh=fresh) if acc.rows else None
        return {at: client.submit(_evidence_task, view, *case[1:4], texts, top, case[4], pure=False)
                for at, case in enumerate(cases) if case is not None}

    if acc.connection is not None:
        reading = read_evidence(False)
    room = room_outcomes(seating)
    sat = _Seated(seating)
    looks = _burst_looks(pairs)
    n_players = len(spill.files) if acc.rows else 0
    steps = len(records) + n_players
    for at, (record, case, look) in enumerate(zip(records, cases, looks)):
        if on_steps is not None:
            on_steps("cases", at, steps)
        e = _pair_entry(_Record(record), look)
        if case is not None:
            row, a, b, who, how = case
            # the evidence's candidates: the actors' decisions in their hands together, options read back
            if at in reading:
                pending.append((e, at))
            else:
                cand = spill.frame(_evidence_mask(a, b, who), texts=texts, players=who)
                e["evidence"] = pair_evidence(cand, a, b, actors=who, top=top, **how) if len(cand) else []
            e["case"] = {"lead": lead(row), "verdict": verdict_line(row, alarm.alpha), "evidence_actors": who,
                         "evidence_signal": how["signal"], "signals": signal_rows(row),
                         "outcomes": pair_outcomes(sat.hands_of(a, b), a, b, room), **case_details(row, who, top)}
        entries.append(e)
    if pending:
        from analyzer.running.dask import lost_retried

        def gather(attempt: int) -> list[Any]:
            nonlocal reading
            if attempt:  # a worker went with work they need that Dask cannot compute again: submitted again
                reading = read_evidence(True)
            return list(acc.connection.client.gather([reading[at] for _, at in pending]))

        for (e, _), evidence in zip(pending, lost_retried(acc.connection.client, gather)):
            e["evidence"] = evidence
        reading = {}
    partners: dict[str, list[str]] = {}
    for e in entries:
        if e["flagged"]:
            a, b = e["players"]
            partners.setdefault(a, []).append(b)
            partners.setdefault(b, []).append(a)
    worst: list[np.ndarray] = []

    def parts() -> Iterator[pd.DataFrame]:
        """Each player's rows for the table; on the way, the positions of the player's largest deviations."""
        for k, part in enumerate(spill.parts(columns=PLAYER_COLUMNS, texts=["options"])):
            worst.append(pd.Series(part["regret"].to_numpy(), index=part.index).nlargest(PLAYER_WORST).index.to_numpy())
            if on_steps is not None:
                on_steps("cases", len(records) + k, steps)
            yield part

    if not len(seating):
        players = pd.DataFrame(columns=["player"])
    elif early is not None:  # one task a group of players on the workers, which share the spill
        players, worst = early.join(pairs)
    else:
        players = player_table(parts(), seating, pairs)
    if on_steps is not None:
        on_steps("cases", steps, steps)
    player_entries = [_player_entry(r, partners) for _, r in players.iterrows()]
    if on_entries is not None and acc.rows:
        on_entries({"pairs": entries, "players": [{"player": e["player"]} for e in player_entries]}, spill)
    # the rows shown: every decision of the evidence hands (the replayer lists them) and each player's
    # largest deviations (as ``analysis.reasons.shown_rows`` picks them), with their texts
    hands = {str(e["hand_id"]) for p in entries for e in p.get("evidence", [])}
    picked = np.concatenate(worst) if worst else np.zeros(0, np.int64)
    shown = spill.frame(lambda f: f["hand_id"].isin(hands).to_numpy() | np.isin(f.index.to_numpy(), picked),
                        texts=texts)
    result = {
        "format": FORMAT, "version": VERSION, "hands": int(seating["hand_id"].nunique()) if len(seating) else 0,
        "decisions": acc.rows,
        "alarm": {"alpha": alarm.alpha, "fdr": alarm.fdr, "min_hands": alarm.min_hands,
                  "score": _num(-math.log10(alarm.alpha)),  # the score (-log10 p) a p-value of alpha gives
                  "score_signals": list(SCORE_SIGNALS)},
        "verdicts": {v: sum(e["verdict"] == v for e in entries) for v in VERDICTS},
        "room": room,
        "players": player_entries,
        "pairs": entries,
        "groups": marked_groups(entries, {str(k): v for k, v in sat.rows.items()}),
    }
    # burst's extreme hands are in the cases; the pair table (pairs.csv) keeps its numbers
    return result, pairs.drop(columns=[c for c in pairs.columns if c.endswith("_extreme")]), players, shown


#: The ``lookalike-ids`` warnings audit.json shows (all are counted).
MAX_LOOKALIKES = 100


def run_audit(paths: Iterable[str], *, samples: int = DEFAULT_SAMPLES, dd_samples: int = DEFAULT_DD_SAMPLES, seed: int = 0,
              policy: str = AUDIT_POLICY,
              alarm: Alarm = Alarm(), signal_options: SignalOptions = SignalOptions(), top: int = DEFAULT_TOP,
              max_line_bytes: int | None = None, on_progress: Callable[[int], None] | None = None,
              execution: Execution | None = None, store: Store | None = None, settings: Settings | None = None,
              on_phase: Callable[[str], None] | None = None, slim: bool = False,
              on_entries: OnEntries | None = None,
              on_steps: Callable[[str, int, int | None], None] | None = None) -> Audit:
    """Audit some logs (files, folders, ``-``): the full result with the frames behind it.

    ``execution``: where the decision analysis runs (default: this process); ``store``: an opened
    decision store whose rows are reused for the hands it holds (it must come from these logs and
    the same settings, else :class:`analyzer.analysis.store.StoreError`); ``settings``: all the
    analysis' settings (default: ``samples``, ``dd_samples``, ``seed`` and the analysis' defaults).
    ``on_phase("signals")`` is called when the decisions are analysed and the pair signals start;
    ``on_entries`` when the pairs' and players' entries are made (:data:`OnEntries`). ``on_steps(phase, done,
    total)``: the phases that count their own steps: ``store`` (a decision store's hands passed on), ``signals`` (the
    pair signals' passes over their chunks, :class:`analyzer.audit.stream.StreamedSignals`) and ``cases`` (the pairs'
    entries and evidence, then the player table).

    The rows pass once, batch by batch (:class:`analyzer.audit.rows.AuditRows`): the pair signals and a
    per-player spill on disk take what they need, so no step holds every decision's options.
    ``slim``: no frame of every row is made: ``Audit.decisions`` is the rows shown only (with their options
    and reasons) and ``Audit.rows`` the report's view of every row, read from the players' spill on disk
    (numbers; the texts of the shown rows), without the columns nothing after the pass reads
    (:data:`analyzer.audit.rows.UNREAD_COLUMNS`): what the audit's own report reads, one player or a few
    rows at a time. Call ``Audit.close()`` (or use it as a context manager) to delete the spill (and, on Dask,
    close the connection the audit opened: it is kept open while its workers share the spill, whose reads run there).
    Otherwise ``Audit.decisions`` is the whole rows, held in memory.
    """

    paths = list(paths)
    if settings is not None:
        samples, dd_samples, seed, policy = settings.samples, settings.dd_samples, settings.seed, settings.policy
    problems: list[Problem] = []
    kw: dict[str, Any] = {} if max_line_bytes is None else {"max_line_bytes": max_line_bytes}
    read = Counter[str]()
    games = registry()
    sections = {name: game.offer("audit_section").Section() for name, game in games.items()
                if game.offers.audit_section}

    files = expand_paths(paths)
    # inputs that cannot be read again (stdin, a named pipe, <(zcat ...)): the rows keep their reasons from the analysis
    once = [f for f in files if read_once(f)]
    kept = bool(once)  # the rows' reasons kept from the analysis
    places = Places(kw.get("max_line_bytes"), once=["<stdin>" if f == "-" else f for f in once])

    spellings = IdSpellings()
    looked: list[Problem] = []  # the lookalike warnings shown (all are counted)

    def counted() -> Iterator[Checked]:
        """The one pass: every checked hand feeds the sections; the valid ones go on to the decision rows."""
        for item in generate_checked(files, **kw):
            for section in sections.values():
                section.add(item)
            if item.ok:
                for p in lookalikes(spellings, item):  # as validate says them: warnings, the hand kept
                    read["lookalike-ids"] += 1
                    if len(looked) < MAX_LOOKALIKES:
                        looked.append(p)
                read["valid"] += 1
                places.note(item)
                yield item
            else:
                problems.extend(item.check.problems)

    seating_rows: list[tuple[Any, ...]] = []
    skipped: Counter[str] = Counter()
    seq_of: dict[str, int] = {}
    connection = None  # a Dask connection this audit opened (closed when the pair signals are done)
    signals = None
    if execution is not None and execution.dask is not None:
        # on Dask the pair signals' chunks stay on the workers and their passes run there (audit.on_dask)
        from analyzer.analysis.execute import dask_connection
        from analyzer.audit.on_dask import DaskSignals

        opened = dask_connection(execution)
        assert opened.connection is not None
        if opened is not execution:  # a connection the caller opened stays the caller's to close
            connection = opened.connection
        execution = opened
        signals = DaskSignals(opened.connection, signal_options)
    acc = AuditRows(signal_options, texts=not slim, reasons=kept, signals=signals)
    if signals is not None and slim and signals.write_spill(acc.players):
        # the workers write the players' spill and keep the rows; the player table runs there too
        acc.connection = acc.players.connection = signals.connection
    try:
        for frame in decision_stream(counted(), seating_rows, skipped, samples=samples, dd_samples=dd_samples,
                                     seed=seed, policy=policy, on_progress=on_progress, execution=execution,
                                     store=store, reasons=kept, settings=settings, seq_of=seq_of, on_steps=on_steps):
            acc.add(frame)
            del frame
        if on_phase is not None:
            on_phase("signals")
        if on_steps is not None and acc.signals is not None:
            acc.signals.on_step = lambda done, total: on_steps("signals", done, total)
        seating = pd.DataFrame(seating_rows, columns=list(SEATING_COLUMNS))
        del seating_rows
        acc.players.seq_of = seq_of
        result, pairs, players, shown = audit_rows(acc, seating, alarm=alarm, top=top, on_entries=on_entries,
                                                   on_steps=on_steps)
        if slim:  # the rows shown, with their texts; the report reads the others from the spill
            df = shown
            rows: SpilledRows | None = SpilledRows(acc.players, shown)
        else:
            df = acc.decisions()
            _renumber(df, seq_of)
            rows = None
            acc.close()
    except BaseException:
        acc.close()
        if connection is not None:
            connection.close()
        raise
    # a connection this audit opened stays open for the report's reads of the spill when its workers share it (closed
    # by Audit.close()); else it is done now
    handed = connection if (slim and acc.connection is not None) else None
    if connection is not None and handed is None:
        acc.players.connection = acc.connection = None
        connection.close()
    try:
        result["lookalike_ids"] = {"count": read["lookalike-ids"], "shown": [p.to_dict() for p in looked]}
        return _finish(_Computed(places, kept, shown, df, slim, result, pairs, players, problems, rows, acc, handed,
                                 read, skipped, sections, games,
                                 {"samples": samples, "dd_samples": dd_samples, "seed": seed, "policy": policy}))
    except BaseException:
        if slim:  # the players' spill (Audit.close() would have deleted it)
            acc.close()
        if handed is not None:
            handed.close()
        raise


@dataclass(frozen=True, slots=True)
class _Computed:
    """What :func:`run_audit` has when the pairs and players are known, for :func:`_finish`: the input read
    (``places``; ``kept``: the rows kept their reasons, the input cannot be read again), the rows (``shown``, of the
    whole frame ``df``; ``slim``: only those), the audit so far and its tables, the problems, the spill and the Dask
    connection handed to the :class:`Audit`, the input's counts, the variants' sections and the analysis' options."""

    places: Places
    kept: bool
    shown: pd.DataFrame
    df: pd.DataFrame
    slim: bool
    result: dict[str, Any]
    pairs: pd.DataFrame
    players: pd.DataFrame
    problems: list[Problem]
    rows: SpilledRows | None
    acc: AuditRows
    handed: Any
    read: Counter[str]
    skipped: Counter[str]
    sections: dict[str, Any]
    games: dict[str, Any]
    options: dict[str, Any]


def _finish(done: _Computed) -> Audit:
    """:func:`run_audit`'s end: the shown rows' reasons, the input's bookkeeping, the variants' sections."""
    places, kept, shown, df, slim, result = done.places, done.kept, done.shown, done.df, done.slim, done.result
    problems, read, skipped, sections, games = done.problems, done.read, done.skipped, done.sections, done.games
    from analyzer.analysis.reasons import fill_reasons
    # reasons only for the rows shown: the few hundred hands they come from are read again (the one
    # extra read of the input; with an input that cannot be read again, ``kept``: the rows kept their reasons from the
    # analysis instead). A hand's line that changed since it was analysed: ChangedInput (exit 2, nothing written)
    if len(shown) and not kept:
        where = np.arange(len(df)) if slim else shown.index.to_numpy()
        text = fill_reasons(df, where, places.records(set(df["hand_id"].iloc[where].astype(str))))
        for p in result["pairs"]:
            for e in p["evidence"]:
                e["reasons"] = text.get((str(e["hand_id"]), int(e["action"])), e.get("reasons", ""))
    invalid = len({(p.file, p.line) for p in problems if p.line})
    looks = result.pop("lookalike_ids", {"count": 0, "shown": []})
    result = {**result, "valid_hands": read["valid"], "invalid_hands": invalid,
              "skipped_hands": dict(skipped), "problems": [p.to_dict() for p in problems], "lookalike_ids": looks,
              "options": done.options}
    seen = set(skipped) | {p.code for p in problems}  # a variant's hands may all be invalid (its cheats)
    for name, section in sections.items():
        if name in seen or games[name].offer("audit_section").SECTION_CODES & seen:
            result[name] = section.result(result.get("alarm"))  # its own verdicts at the audit's alarm
    return Audit(result, df, done.pairs, done.players, problems, rows=done.rows, _spill=done.acc if slim else None,
                 _connection=done.handed, places=places)


def audit(paths: Iterable[str], **options: Any) -> dict[str, Any]:
    """The audit.json dict for some logs (options as :func:`run_audit`)."""
    return run_audit(paths, **options).result
