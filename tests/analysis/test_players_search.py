"""The player table's true-deal signal on honest players whose play is sharper on some kinds of decision than on
others (a search player whose covers follow a fixed rule) and on players who see hidden cards.

Synthetic decisions: every option has an own-information value V (what an honest player can know), the evaluator's
estimate of it (``loss``), the heuristic's (``loss_ref``) and its value on the true deal (``loss_dd``: V plus the
deal's own part). Honest players choose on V; a peeker picks the true-deal best on some of its decisions."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from analyzer.analysis.dist import norm_sf
from analyzer.analysis.options import OPTIONS_DTYPE, option_arrays
from analyzer.analysis.players import (
    _signal_fits,
    _strata,
    player_table,
    player_table_by_player,
)
from analyzer.analysis.skill import choice_probabilities, fit_choice, loss_matrices

KEYS = ("loss", "loss_ref", "loss_dd")
CARDS = [r + s for s in "SHDC" for r in "A23456789TJQK"]
ZERO = [0.0] * 4  # rollouts' per-seat values sum to zero (every deal's scores do); the learned model's need not
MODEL = [1.5, -0.25, 0.5, 0.0]


def _room(seed: int, players: dict[str, tuple[float, float, float]], hands: int = 240, per_hand: int = 10
          ) -> pd.DataFrame:
    """Decision rows of ``players`` (name -> sharpness on V for covers, for plays (inf: always the best), share of
    decisions where the true-deal best is picked), four at a hand, ``per_hand`` decisions a hand; the last three of a
    hand valued by rollouts (their per-seat values sum to zero)."""
    rng = np.random.default_rng(seed)
    names = list(players)
    rows = []
    for h in range(hands):
        seated = [str(x) for x in rng.choice(names, 4, replace=False)]
        for j in range(per_hand):
            seat = j % 4
            cover_sharp, play_sharp, peek = players[seated[seat]]
            cover = bool(rng.random() < 0.4)
            k = int(rng.integers(2, 6))
            v = rng.normal(0.0, 1.0, k)
            own, true, ref = (v + rng.normal(0.0, sd, k) for sd in (0.6, 0.8, 0.6))
            sharp = cover_sharp if cover else play_sharp
            if rng.random() < peek:
                c = int(np.argmax(true))
            elif math.isinf(sharp):
                c = int(np.argmax(v))
            else:
                w = np.exp(sharp * (v - v.max()))
                c = int(rng.choice(k, p=w / w.sum()))
            cards = rng.choice(52, k, replace=False)
            kind = "cover" if cover else "play"
            ev = ZERO if j >= per_hand - 3 else MODEL
            opts = [{"card": CARDS[cards[i]], "kind": kind, "ev": ev, "ev_dd": ZERO, "loss": float(own.max() - own[i]),
                     "loss_dd": float(true.max() - true[i]), "loss_ref": float(ref.max() - ref[i])} for i in range(k)]
            rows.append({"hand_id": f"h{h:04d}", "action": j, "seat": seat, "player": seated[seat],
                         **{f"p{q}": seated[q] for q in range(4)}, "kind": kind, "chosen": CARDS[cards[c]],
                         "options": opts, "regret": float(own.max() - own[c]),
                         "think_ms": math.nan, "difficulty": 0.0})
    frame = pd.DataFrame(rows)
    frame["options"] = pd.array(frame["options"].tolist(), dtype=OPTIONS_DTYPE)
    return frame


HONEST = {f"h{i}": (s, s, 0.0) for i, s in enumerate([0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 1.0, 2.0, 3.0])}


def _kind_z(frame: pd.DataFrame, player: str, stratified: bool) -> tuple[float, float]:
    """The player's true-deal surplus z on covers and on plays, predicted by the per-kind fits or by one fit."""
    rows = frame[frame["player"] == player].reset_index(drop=True)
    parsed = option_arrays(rows["options"], KEYS)
    losses, chosen = loss_matrices(rows, parsed=parsed)
    own, ref, dd = losses["loss"], losses["loss_ref"], losses["loss_dd"]
    pooled = fit_choice(own, ref, chosen)
    if stratified:
        a, b = _signal_fits(own, ref, chosen, _strata(rows, parsed), pooled)
    else:
        a, b = np.full(len(rows), pooled.a), np.full(len(rows), pooled.b)
    best = np.argmin(dd, axis=1)
    p = choice_probabilities(own, ref, a, b)[np.arange(len(rows)), best]
    excess, var = (chosen == best) - p, p * (1 - p)
    cover = (rows["kind"] == "cover").to_numpy()
    return tuple(float(excess[m].sum() / math.sqrt(var[m].sum())) for m in (cover, ~cover))  # type: ignore[return-value]


def test_a_player_sharp_on_covers_and_loose_on_plays_is_predicted_kind_by_kind() -> None:
    """One sharpness for both kinds is too soft for the covers (always the best) and too sharp for the plays: the
    covers' hits of the true-deal best read as a large surplus, the plays' as a deficit. Fitted kind by kind, each is
    predicted within the noise."""
    frame = _room(1, {**HONEST, "split": (math.inf, 0.3, 0.0)})
    cover_z, play_z = _kind_z(frame, "split", stratified=False)
    assert cover_z > 3 and play_z < -1, (cover_z, play_z)  # what one fit over all decisions reads
    cover_z, play_z = _kind_z(frame, "split", stratified=True)
    assert abs(cover_z) < 2.5 and abs(play_z) < 2.5, (cover_z, play_z)


def test_strata_are_cover_or_play_times_model_or_rollouts() -> None:
    """From the options alone (what every path of the table reads): their kind, and rollouts' zero-sum values."""
    def row(kind: str, ev: list[float]) -> list[dict]:
        return [{"card": c, "kind": kind, "ev": ev, "ev_dd": ZERO, "loss": 0.0, "loss_dd": 0.0, "loss_ref": 0.0}
                for c in ("2S", "3S")]
    texts = pd.Series(pd.array([row("play", MODEL), row("cover", MODEL), row("play", [3.01, -1.0, -1.0, -1.0]),
                                row("cover", ZERO), [], row("play", [1.0, 0.0, -1.0, 0.03])], dtype=OPTIONS_DTYPE))
    frame = pd.DataFrame({"options": texts})
    assert _strata(frame, option_arrays(texts, KEYS)).tolist() == [0, 2, 1, 3, 0, 0]


def test_a_kind_with_few_decisions_keeps_the_players_fit_over_all() -> None:
    frame = _room(2, HONEST, hands=60)
    rows = frame[frame["player"] == "h3"].reset_index(drop=True)
    parsed = option_arrays(rows["options"], KEYS)
    losses, chosen = loss_matrices(rows, parsed=parsed)
    own, ref = losses["loss"], losses["loss_ref"]
    pooled = fit_choice(own, ref, chosen)
    strata = _strata(rows, parsed)
    assert len(np.unique(strata)) == 4
    a, b = _signal_fits(own, ref, chosen, strata, pooled)
    for s in np.unique(strata):
        m = strata == s
        if m.sum() < 30:
            assert np.all(a[m] == pooled.a) and np.all(b[m] == pooled.b)
        else:
            # its own fit (started from the pooled one: the same optimum as from the default start, to 1e-5)
            assert np.allclose(a[m], fit_choice(own[m], ref[m], chosen[m]).a, rtol=0, atol=1e-5)
            assert not np.allclose(a[m], pooled.a, rtol=0, atol=1e-5)  # and not the pooled fit


@pytest.mark.parametrize("seed", [3, 4])
def test_honest_players_of_every_kind_are_not_flagged_and_a_peeker_is(seed: int) -> None:
    """Honest players of many levels, two split players (a fixed cover rule, loose plays) and a peeker that picks the
    true-deal best on 60% of its decisions: only the peeker is flagged, by its level (its p is the level's)."""
    players = {**HONEST, "split": (math.inf, 0.3, 0.0), "split2": (math.inf, 1.0, 0.0), "peeker": (2.0, 2.0, 0.6)}
    table = player_table(_room(seed, players)).set_index("player")
    honest = table.drop(index="peeker")
    assert not honest["flag"].any(), honest[["level_z", "signal_q"]]
    assert table.loc["peeker", "flag"] and table.loc["peeker", "level_z"] > 3, table.loc["peeker"]
    assert table.loc["peeker", "signal_p"] == pytest.approx(2.0 * float(norm_sf(table.loc["peeker", "level_z"])))


def test_the_table_player_by_player_is_the_whole_tables() -> None:
    frame = _room(5, {**HONEST, "split": (math.inf, 0.3, 0.0), "peeker": (2.0, 2.0, 0.6)}, hands=120)
    seating = frame.drop_duplicates("hand_id")[["hand_id", "p0", "p1", "p2", "p3"]]
    whole = player_table(frame, seating)
    parts = (frame[frame["player"] == p] for p in sorted(frame["player"].unique()))
    pd.testing.assert_frame_equal(player_table_by_player(parts, seating), whole)
