"""The audit pipeline: logs -> valid hands -> decision rows -> pair signals -> calibrated pairs -> audit.json.

Invalid hands are reported (as ``analyzer validate`` reports them) and left out. Standard hands
go through :mod:`analyzer.analysis.decisions`; another variant plugs in by naming a module in
``DECISION_SOURCES`` that exposes ``analyse(items, *, samples, dd_samples, seed) -> DataFrame``
in the same decision-row shape.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import stats

from analyzer.audit.calibrate import DIRECTED, SCORE_SIGNALS, Alarm, calibrate
from analyzer.audit.evidence import DEFAULT_TOP, pair_evidence
from analyzer.audit.signals import SignalOptions, pair_signals
from analyzer.problems import Problem
from analyzer.validate import Checked, generate_valid

if TYPE_CHECKING:
    from analyzer.analysis.store import Store
    from analyzer.analysis.execute import Execution

FORMAT = "bieqi-audit"
VERSION = 1
#: log ``variant`` -> module whose ``analyse`` gives that variant's decision rows.
DECISION_SOURCES: dict[str, str] = {
    "bieqi": "analyzer.analysis.decisions",
}
#: log ``variant`` -> module with ``variant_section(paths, problems, **kw) -> dict``: findings of a game
#: that the decision-row pipeline does not cover (e.g. certain cheats the validator proves).
VARIANT_SECTIONS: dict[str, str] = {
    "bieqi-borrow": "analyzer.audit.borrow",
}


@dataclass
class Audit:
    """Everything one audit produced: the audit.json dict and what the report draws from."""

    result: dict[str, Any]
    decisions: pd.DataFrame
    pairs: pd.DataFrame
    players: pd.DataFrame
    problems: list[Problem] = field(default_factory=list)

    @property
    def flagged(self) -> bool:
        return any(p["flagged"] for p in self.result["pairs"])


def _variant(item: Checked) -> str:
    return str(type(item.record).__struct_config__.tag)  # type: ignore[attr-defined]


def decision_rows(items: Iterable[Checked], *, samples: int, dd_samples: int, seed: int,
                  on_progress: Callable[[int], None] | None = None, execution: Execution | None = None,
                  store: Store | None = None, reasons: bool = False
                  ) -> tuple[pd.DataFrame, pd.DataFrame, Counter[str]]:
    """Decision rows of every hand whose variant has a source, its seating, and the hands skipped by variant.

    Standard hands are analysed batch by batch on ``execution`` (worker processes or Dask; the rows do
    not depend on it), or read from ``store`` when it holds them (see ``analysis.store.collect_rows``).
    Their rows carry no reasons unless ``reasons``: ``run_audit`` fills them for the rows it shows.
    """
    from analyzer.analysis.store import collect_rows
    from analyzer.analysis.execute import Settings

    seating: list[tuple[str, str, str, str, str]] = []
    by_variant: dict[str, list[Checked]] = {}
    skipped: Counter[str] = Counter()

    def standard() -> Iterator[Checked]:
        for item in items:
            v = _variant(item)
            rec = item.record
            if v == "bieqi":
                seating.append((rec.hand_id, *map(str, rec.players)))
                yield item
            else:
                by_variant.setdefault(v, []).append(item)

    frames = []
    main = import_module(DECISION_SOURCES["bieqi"])
    frames.append(collect_rows(standard(), Settings(samples, dd_samples, seed), execution, store=store,
                               reasons=reasons, on_progress=on_progress))
    for v, its in by_variant.items():
        try:
            mod = import_module(DECISION_SOURCES[v]) if v in DECISION_SOURCES else None
        except ModuleNotFoundError:
            mod = None
        if mod is None or not hasattr(mod, "analyse"):
            skipped[v] += len(its)
            continue
        frames.append(mod.analyse(its, samples=samples, dd_samples=dd_samples, seed=seed))
        seating.extend((it.record.hand_id, *map(str, it.record.players[:4])) for it in its)
    frames = [f for f in frames if len(f)]
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(main.COLUMNS))
    return df, pd.DataFrame(seating, columns=["hand_id", "p0", "p1", "p2", "p3"]), skipped


def _num(x: Any, digits: int = 4) -> float | None:
    """A JSON-safe float (None for NaN/inf)."""
    x = float(x)
    return round(x, digits) if math.isfinite(x) else None


def _p(x: Any) -> float:
    """p-values keep their magnitude however small (rounding would turn 1e-9 into 0)."""
    return float(f"{float(x):.4g}")


def _pair_entry(row: pd.Series) -> dict[str, Any]:
    signals: dict[str, Any] = {}
    for name in DIRECTED:
        entry: dict[str, Any] = {"p": _p(row[f"{name}_p"]), "null_scale": _num(row[f"{name}_null_scale"])}
        for tag, (x, y) in (("ab", ("a", "b")), ("ba", ("b", "a"))):
            d: dict[str, Any] = {"actor": row[x], "partner": row[y], "z": _num(row[f"{name}_{tag}_z"])}
            if name == "think":
                d["hands"] = int(np.nan_to_num(row[f"think_{tag}_hands"]))
                d["slower_ratio"] = _num(row[f"think_{tag}_ratio"])
            else:
                d["hands"] = int(np.nan_to_num(row[f"{name}_{tag}_hands"]))
                d["decisions"] = int(np.nan_to_num(row[f"{name}_{tag}_decisions"]))
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
    return {"players": [row["a"], row["b"]], "hands_together": int(row["hands_together"]),
            "score": _num(row["score"]), "z": _num(row["z"]), "p_value": _p(row["p_value"]),
            "q_value": _p(row["q_value"]), "flagged": bool(row["flagged"]), "main_signal": row["main_signal"],
            "signals": signals, "evidence": []}


def player_table(df: pd.DataFrame, seating: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """Per player: hands, decisions, mean regret, match rate with the sensible choice, pace, pairs flagged."""
    hands = pd.concat([seating[f"p{s}"] for s in range(4)]).value_counts()
    g = df.groupby("player")
    out = pd.DataFrame({"hands": hands}).join(pd.DataFrame({
        "decisions": g.size(), "mean_regret": g["regret"].mean(),
        "match_rate": g["rank"].apply(lambda r: float((r == 0).mean())),
        "median_think_ms": g["think_ms"].median()}), how="left")
    out.index.name = "player"
    flagged = pairs[pairs["flagged"]]
    names = pd.concat([flagged["a"], flagged["b"]])
    out["flagged_pairs"] = names.value_counts().reindex(out.index).fillna(0).astype(np.int64)
    best = pd.concat([pairs[["a", "score"]].rename(columns={"a": "p"}), pairs[["b", "score"]].rename(columns={"b": "p"})])
    out["max_pair_score"] = best.groupby("p")["score"].max().reindex(out.index)
    out["decisions"] = out["decisions"].fillna(0).astype(np.int64)
    return out.reset_index().sort_values("player", kind="stable").reset_index(drop=True)


def _player_entry(row: pd.Series, partners: dict[str, list[str]]) -> dict[str, Any]:
    return {"player": row["player"], "hands": int(row["hands"]), "decisions": int(row["decisions"]),
            "mean_regret": _num(row["mean_regret"]), "match_rate": _num(row["match_rate"]),
            "median_think_ms": _num(row["median_think_ms"]), "max_pair_score": _num(row["max_pair_score"]),
            "flagged_with": partners.get(row["player"], [])}


def audit_frame(df: pd.DataFrame, seating: pd.DataFrame, *, alarm: Alarm = Alarm(),
                signal_options: SignalOptions = SignalOptions(), top: int = DEFAULT_TOP
                ) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame]:
    """From decision rows and seating to the audit.json dict (without input bookkeeping), the pair
    table and the player table."""
    if len(df):
        sig = pair_signals(df, seating=seating, options=signal_options)
        pairs = calibrate(sig.pairs, alarm).sort_values(["score", "a", "b"], ascending=[False, True, True],
                                                        kind="stable").reset_index(drop=True)
    else:
        sig, pairs = None, pd.DataFrame(columns=["a", "b", "hands_together", "score", "flagged"])
    entries = []
    for k, row in pairs.iterrows():
        e = _pair_entry(row)
        if sig is not None and (row["flagged"] or k < top):  # the top of the ranking gets evidence too
            e["evidence"] = pair_evidence(sig, df, row["a"], row["b"], row["main_signal"], top)
        entries.append(e)
    partners: dict[str, list[str]] = {}
    for e in entries:
        if e["flagged"]:
            a, b = e["players"]
            partners.setdefault(a, []).append(b)
            partners.setdefault(b, []).append(a)
    players = player_table(df, seating, pairs) if len(seating) else pd.DataFrame(columns=["player"])
    result = {
        "format": FORMAT, "version": VERSION, "hands": int(seating["hand_id"].nunique()) if len(seating) else 0,
        "decisions": len(df),
        "alarm": {"alpha": alarm.alpha, "fdr": alarm.fdr, "min_hands": alarm.min_hands,
                  "score": _num(stats.norm.isf(alarm.alpha)),  # the score a p-value of alpha gives
                  "score_signals": list(SCORE_SIGNALS)},
        "players": [_player_entry(r, partners) for _, r in players.iterrows()],
        "pairs": entries,
    }
    return result, pairs, players


def run_audit(paths: Iterable[str], *, samples: int = 16, dd_samples: int = 8, seed: int = 0,
              alarm: Alarm = Alarm(), signal_options: SignalOptions = SignalOptions(), top: int = DEFAULT_TOP,
              max_line_bytes: int | None = None, on_progress: Callable[[int], None] | None = None,
              execution: Execution | None = None, store: Store | None = None) -> Audit:
    """Audit some logs (files, folders, ``-``): the full result with the frames behind it.

    ``execution``: where the decision analysis runs (default: this process); ``store``: an opened
    decision store whose rows are reused for the hands it holds (it must come from these logs and
    the same settings, else :class:`analyzer.analysis.store.StoreError`).
    """
    from analyzer.analysis.reasons import fill_reasons, shown_rows

    paths = list(paths)  # read twice when a variant adds its own section
    problems: list[Problem] = []
    kw = {} if max_line_bytes is None else {"max_line_bytes": max_line_bytes}
    read = Counter[str]()

    def counted() -> Iterator[Checked]:
        for item in generate_valid(paths, problems, **kw):
            read["valid"] += 1
            yield item

    df, seating, skipped = decision_rows(counted(), samples=samples, dd_samples=dd_samples, seed=seed,
                                         on_progress=on_progress, execution=execution, store=store,
                                         reasons="-" in paths)  # stdin cannot be read again for them
    result, pairs, players = audit_frame(df, seating, alarm=alarm, signal_options=signal_options, top=top)
    if len(df) and "-" not in paths:  # reasons for the rows shown, from their hands read again (stdin cannot be)
        text = fill_reasons(df, shown_rows(df, result), generate_valid(paths, None, **kw))
        for p in result["pairs"]:
            for e in p["evidence"]:
                e["reasons"] = text.get((str(e["hand_id"]), int(e["action"])), e.get("reasons", ""))
    invalid = len({(p.file, p.line) for p in problems if p.line})
    result = {**result, "valid_hands": read["valid"], "invalid_hands": invalid,
              "skipped_hands": dict(skipped), "problems": [p.to_dict() for p in problems],
              "options": {"samples": samples, "dd_samples": dd_samples, "seed": seed}}
    seen = set(skipped) | {p.code for p in problems}  # a variant's hands may all be invalid (its cheats)
    for variant, module in VARIANT_SECTIONS.items():
        mod = import_module(module)
        if variant in seen or mod.SECTION_CODES & seen:
            result[variant] = mod.variant_section(paths, **kw)
    return Audit(result, df, pairs, players, problems)


def audit(paths: Iterable[str], **options: Any) -> dict[str, Any]:
    """The audit.json dict for some logs (options as :func:`run_audit`)."""
    return run_audit(paths, **options).result
