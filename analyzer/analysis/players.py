"""Per-player table from decision rows: the fitted skill with its interval, the figures behind it, and a
"plays better than their level / than without the partner" signal with a calibrated p-value and a flag.

One function, :func:`player_table`, serves every surface (``analyzer players``, the audit's
players.csv and audit.json, the HTML player page), so a figure reads the same everywhere.

- ``skill``: the headline. The player's choices fitted by a choice model over the options' losses
  (the evaluator's values and the reference policy's preferences, each in units of the decision's
  own spread), read on a fixed reference set of decisions as the sensitivity of the one-parameter
  model that loses as much there (:func:`analyzer.analysis.skill.rate`); 0 = random, higher =
  closer to the best option. ``skill_lo``/``skill_hi``: its 95% interval.
- Behind it: ``match_rate`` (share of decisions where the chosen option is the evaluator's best,
  i.e. its loss is 0), ``mean_loss`` (normalised), ``mean_regret`` (points) with its 95% interval.
- The signal. A player who sees hidden cards picks the option that is best *on the true deal* more
  often than their own-information skill predicts. ``dd_excess``: that surplus (observed minus
  predicted matches of the true-deal best, per 100 decisions) and ``dd_z`` its z; predicted by the player's
  model fitted on each kind of decision apart (cover / play, valued by the learned model / by rollouts,
  :func:`_signal_fits`: one sharpness for all read a search player's rule-sharp covers as surplus). Honest players
  of a higher level also beat the model a little (their own judgement is better than ours), so
  ``level_z`` compares the surplus with honest players of the same fitted level: a robust regression of
  dd_excess on log skill across the room (Huber's, :mod:`analyzer.analysis.robust`, which few cheaters cannot
  pull), each residual read against its own sampling error and the honest players' spread between them (a
  random-effects reading, :func:`_level_z`), widened as a prediction interval where the curve is
  extrapolated (a lone expert above the room's levels). ``partner``/``partner_z``: the co-player with
  whom the player's surplus is largest compared with the hands without them (per-hand Welch z).
  ``signal_p``: one-sided p of the stronger of the two (Bonferroni over the parts read and over
  co-players); ``signal_q``: Benjamini-Hochberg over the players; ``flag``: q <= FLAG_Q.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable

import numpy as np
import pandas as pd

from analyzer.analysis.dist import bh_adjust, norm_isf, norm_sf, spearman_rho, t_sf
from analyzer.analysis.options import OptionArrays, option_arrays
from analyzer.analysis.skill import Choice, Fit, choice_probabilities, fit_choice, fit_weight, loss_matrices, rate_by

Z_95 = 1.959964
MIN_TIMED = 5  # decisions with think times needed before think time is set against difficulty
MIN_PEERS = 8  # players (with MIN_DECISIONS) needed to calibrate against the room's level curve; fewer: no level_z
MIN_DECISIONS = 50
MIN_TOGETHER = 15  # hands with and without a co-player before comparing the two
FLAG_Q = 0.01
#: Decisions of one kind (cover / play, valued by the learned model / by rollouts) a player needs before the signal's
#: prediction fits that kind on its own; fewer, and the player's fit over all decisions predicts them
MIN_STRATUM = 30
#: Per-seat values that sum to within this of zero are rollouts' (four seats, each rounded to 0.01 in the texts)
ZERO_SUM = 0.025
#: Weight of the reference policy's judgement in the loss the headline is measured in (its yardstick on
#: the reference set): 0 (default) = the evaluator's values alone; None = fitted on the room
#: (analysis.skill.fit_weight). Any weight lets players who copy the heuristic catch up with a search
#: expert whose choices the values prefer (docs/methods/skill.md).
REF_WEIGHT: float | None = 0.0
MEANING = ("skill: how closely a player's choices follow the options' values (Regan-style choice model, "
           "fitted by maximum likelihood, read on a fixed reference set of decisions; 0 = random, higher = better), "
           "with its 95% interval")

COLUMNS = ("player", "skill", "skill_lo", "skill_hi", "hands", "decisions", "match_rate", "mean_loss",
           "mean_regret", "regret_lo", "regret_hi", "dd_excess", "dd_z", "level_z", "partner", "partner_hands",
           "partner_z", "signal_p", "signal_q", "flag", "mean_think_ms", "think_difficulty_rho",
           "think_ms_per_difficulty")


def _think(think: np.ndarray, diff: np.ndarray) -> tuple[float, float, float]:
    ok = np.isfinite(think)
    rho = slope = math.nan
    if ok.sum() >= MIN_TIMED and np.ptp(diff[ok]) > 0 and np.ptp(think[ok]) > 0:
        rho = spearman_rho(diff[ok], think[ok])
        # on the difficulties divided by their largest: under rules of huge factors they can be as small as 1e-308,
        # whose squares polyfit's scaling takes as 0 (a NaN fit, LAPACK failing); a slope that overflows says nothing
        top = float(np.abs(diff[ok]).max())
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # RankWarning (nearly equal difficulties: a poor fit), whichever numpy names it
            fit = float(np.polyfit(diff[ok] / top, think[ok], 1)[0]) / top
        slope = fit if math.isfinite(fit) else math.nan
    return (float(np.nanmean(think)) if ok.any() else math.nan), rho, slope


def _strata(frame: pd.DataFrame, parsed: OptionArrays) -> np.ndarray:
    """Each row's kind of decision for the signal's prediction, from its options (the columns every path of the
    table reads): cover or play (the options' ``kind``), times valued by rollouts or by the learned model. Rollouts
    average final scores over deals, and every deal's four scores sum to zero, so their per-seat values do (to the
    options' rounding, ZERO_SUM); the model predicts each seat apart (under ``--policy model`` the rollouts are the
    endgame's). A row without options is a play valued by the model."""
    n = len(frame)
    cover = parsed.any_cover()
    rolled = np.zeros(n, bool)
    has = parsed.count > 0
    if has.any():
        off = np.abs(parsed.ev.sum(axis=1)) if len(parsed.ev) else np.zeros(0)
        worst = np.maximum.reduceat(off, parsed.start[has]) if len(off) else np.zeros(0)
        rolled[has] = worst <= ZERO_SUM
    return cover.astype(np.int64) * 2 + rolled.astype(np.int64)


def _signal_fits(own: np.ndarray, ref: np.ndarray, chosen: np.ndarray, strata: np.ndarray,
                 pooled: Choice) -> tuple[np.ndarray, np.ndarray]:
    """One player's choice model (a, b per row) behind the signal's prediction: fitted on each kind of decision
    (:func:`_strata`) with MIN_STRATUM or more decisions, the fit over all of them (``pooled``) elsewhere.

    One sharpness for every decision underfits a player who is sharper on some kinds than on others (a search
    player whose covers follow a fixed rule, a player the rollouts' values describe better than the model's): the
    model then spreads the sharp kind's choices over options the player never picks, and where the player's rule
    is better than our evaluator its hits of the true-deal best read as surplus. Every input is the player's own
    information (the options' values and the heuristic's preferences), so a finer fit cannot learn the hidden
    cards: what a player who sees them gains on the true deal stays surplus."""
    a = np.full(len(own), pooled.a)
    b = np.full(len(own), pooled.b)
    for s in np.unique(strata):
        m = strata == s
        if m.sum() >= MIN_STRATUM and m.sum() < len(own):
            c = fit_choice(own[m], ref[m], chosen[m], start=(pooled.a, pooled.b))
            a[m], b[m] = c.a, c.b
    return a, b


def _level_z(excess: np.ndarray, skill: np.ndarray, ok: np.ndarray, se: np.ndarray | None = None) -> np.ndarray:
    """The true-deal surplus against honest players of the same fitted level: each player's surplus (``excess``,
    per 100 decisions, with its sampling standard error ``se`` from the model's binomial variance) less a robust
    line of the room's surplus on log skill, over the spread an honest player of that level shows there.

    Honest players stray from the curve by more than their sampling error: each one's judgement beats or misses
    the model by a margin of its own, the same in every decision, so that part (``tau``, :func:`_between`) does
    not shrink with decisions. A residual is read against sqrt(tau^2 + se^2) (a random-effects reading), widened
    as a prediction interval where the curve is extrapolated (a lone expert above or below the room's levels must
    not read as a cheater). Without ``se`` (every se 1: ``excess`` is then ``dd_z``): the dd_z residual over max(1,
    its robust spread), widened alike, which scales the between-player part by each player's own se (a player with
    fewer decisions than its peers is read against their larger z)."""
    out = np.full(len(excess), math.nan)
    se = np.ones(len(excess)) if se is None else se
    x = np.log(np.clip(skill, 1e-3, None))
    if ok.sum() < MIN_PEERS:  # too few peers for a level curve: no reading (NaN), not the model's own z
        # honest players beat the model's prediction by a margin that grows with skill and differs from one to the
        # next (the curve and tau below); read against zero, the competent players of a private table of four
        # independent bots read "better than their level" at z 3-6 after 400 hands, as high as a lone all-seeing
        # cheater of such a table (benchmarks/eval_private_table.py)
        return out
    from analyzer.analysis.robust import huber_line

    intercept, slope, _ = huber_line(x[ok], excess[ok])
    r = excess - (intercept + slope * x)
    tau = _between(r[ok], se[ok])
    xs = x[ok]
    sxx = float(((xs - xs.mean()) ** 2).sum())
    lever = 1.0 / len(xs) + ((x - xs.mean()) ** 2 / sxx if sxx > 0 else np.zeros(len(x)))
    # the curve's own error at the player's level: a typical peer's spread times the leverage
    typical = tau * tau + float(np.median(se[ok] ** 2))
    out[ok] = r[ok] / np.sqrt(tau * tau + se[ok] ** 2 + typical * lever[ok])
    return out


def _between(r: np.ndarray, se: np.ndarray) -> float:
    """The between-player spread ``tau`` of residuals ``r`` with sampling errors ``se``: the smallest tau >= 0 with
    which r / sqrt(tau^2 + se^2) has a robust spread (1.4826 x median absolute deviation) of at most 1."""
    def spread(tau: float) -> float:
        u = r / np.sqrt(tau * tau + se * se)
        return 1.4826 * float(np.median(np.abs(u - np.median(u))))

    if spread(0.0) <= 1.0:
        return 0.0
    lo, hi = 0.0, 1.4826 * float(np.median(np.abs(r - np.median(r)))) + float(se.max())
    while spread(hi) > 1.0:  # the bracket: widened until the standardised spread is 1 or less
        lo, hi = hi, 2.0 * hi
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if spread(mid) > 1.0 else (lo, mid)
    return hi


def _partner_z(excess: np.ndarray, hand: np.ndarray, me: str, seats: pd.DataFrame) -> tuple[str, int, float, int]:
    """The co-player with the largest per-hand surplus together versus apart: (name, hands together, z, tested).

    Each table (the set of four at a hand) is one observation, its hands' surplus summed: who sits is the same for
    every hand of a table, so a table's hands share whatever the table does to the surplus (how hard its games are,
    how its players play), and compared hand by hand an honest player's few long sittings with someone read as a z
    of 3-4. The z is the more cautious of the hand-by-hand one (Welch's) and the tables' (``_table_diff``, read on
    a t with the fewer side's tables - 1 degrees of freedom: a few tables say little, however many hands)."""
    per_hand = pd.Series(excess).groupby(hand).sum()
    sat = seats.loc[seats.index.intersection(per_hand.index)]
    best = ("", 0, math.nan)
    tested = 0
    if sat.empty:
        return (*best, 0)
    # the seats as codes of the names in order of appearance (pd.unique's order), compared as small ints
    codes, others = pd.factorize(sat.to_numpy().ravel())
    values = per_hand.reindex(sat.index).to_numpy()
    grid = codes.reshape(sat.shape)
    table = np.unique(np.sort(grid, axis=1), axis=0, return_inverse=True)[1].ravel()
    t_sum, t_n = np.bincount(table, values), np.bincount(table).astype(np.float64)
    at = np.zeros((len(t_n), len(others)), bool)  # who sat at each table
    at[np.repeat(table, grid.shape[1]), grid.ravel()] = True
    for k, other in enumerate(others):
        if other == me:
            continue
        mask = at[:, k]
        together = float(t_n[mask].sum())
        if together < MIN_TOGETHER or float(t_n[~mask].sum()) < MIN_TOGETHER or mask.sum() < 2 or (~mask).sum() < 2:
            continue
        tested += 1
        a, b = values[mask[table]], values[~mask[table]]  # hand by hand (Welch's)
        hand_se = math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
        diff, table_var = _table_diff(t_sum[mask], t_n[mask], t_sum[~mask], t_n[~mask])
        z = diff / hand_se if hand_se > 0 else 0.0
        if table_var > 0:  # the tables' reading, on a t with as many degrees of freedom as the fewer tables allow
            dof = int(min(mask.sum(), (~mask).sum())) - 1
            z_tables = float(norm_isf(np.clip(t_sf(diff / math.sqrt(table_var), dof), 1e-300, 1 - 1e-12)))
            z = min(z, z_tables) if diff > 0 else max(z, z_tables)  # the more cautious of the two readings
        if not best[0] or z > best[2]:
            best = (str(other), int(together), float(z))
    return (*best, tested)


def _table_diff(sum_a: np.ndarray, n_a: np.ndarray, sum_b: np.ndarray, n_b: np.ndarray) -> tuple[float, float]:
    """The difference of two per-hand means whose hands come in tables (``sum_*``, ``n_*``: each table's total and
    hands), and its variance from each side's tables' scatter (cluster-robust, with the small-sample factor
    m / (m - 1) for m tables). With few tables this variance is itself noisy and can come out small by chance, so
    the caller reads it on a t with the fewer side's tables - 1 degrees of freedom and keeps the more cautious of
    that z and the hand-by-hand one."""
    var, mean = 0.0, []
    for s, n in ((sum_a, n_a), (sum_b, n_b)):
        m = s.sum() / n.sum()
        var += float(((s - n * m) ** 2).sum()) / float(n.sum()) ** 2 * len(n) / (len(n) - 1)
        mean.append(m)
    return float(mean[0] - mean[1]), var


def player_table(frame: pd.DataFrame, seating: pd.DataFrame | None = None, *,
                 ref_weight: float | None = REF_WEIGHT, room: bool = True) -> pd.DataFrame:
    """One row per player (columns ``COLUMNS``), highest skill first.

    ``seating`` (hand_id, p0..p3), when given, counts hands without decisions too and says who sat
    together; otherwise the decision rows' p0..p3 do. ``room=False``: each player's own figures only,
    before the room-wide ones (:func:`room_columns`; see :func:`player_table_by_player`).
    """
    if frame.empty:
        return pd.DataFrame({c: [] for c in COLUMNS})
    parsed = option_arrays(frame["options"], ("loss", "loss_ref", "loss_dd"))  # each row's options parsed once
    losses, chosen = loss_matrices(frame, parsed=parsed)
    own, ref, dd_losses = losses["loss"], losses["loss_ref"], losses["loss_dd"]
    n = len(frame)
    ar = np.arange(n)
    players = frame["player"].astype(str).to_numpy()
    weight = fit_weight(own, ref, chosen, players) if ref_weight is None else float(ref_weight)
    # the headline: each player's two-direction choice model, read on the common reference set
    rated = rate_by(own, ref, chosen, players, weight=weight)
    fits: dict[str, Fit] = {p: f for p, (f, _) in rated.items()}
    chosen_loss = own[ar, chosen]  # match rate and mean loss: the evaluator's own view, as the rows say
    # the true-deal view: which option was best on the real cards, and how likely the player's own
    # fitted model (the two-direction fit behind the rating: it describes heuristic players' choices,
    # which the values alone misjudge, so an honest steady player's hits are predicted, not "excess";
    # fitted on each kind of decision apart, _signal_fits) made it
    has_dd = np.isfinite(dd_losses).any(axis=1) & (np.where(np.isfinite(dd_losses), dd_losses, 0) > 0).any(axis=1)
    dd_best = np.argmin(dd_losses, axis=1)
    order = np.argsort(players, kind="stable")
    keys, starts = np.unique(players[order], return_index=True)
    groups = {str(k): order[a:b] for k, a, b in zip(keys, starts, list(starts[1:]) + [n])}
    strata = _strata(frame, parsed)
    a_row, b_row = np.zeros(n), np.zeros(n)
    for p, i in groups.items():
        a_row[i], b_row[i] = _signal_fits(own[i], ref[i], chosen[i], strata[i], rated[p][1])
    p_dd = choice_probabilities(own, ref, a_row, b_row)[ar, dd_best]
    hit = (chosen == dd_best).astype(float)
    excess = np.where(has_dd, hit - p_dd, 0.0)
    var = np.where(has_dd, p_dd * (1.0 - p_dd), 0.0)
    if seating is None:
        seats = frame.drop_duplicates("hand_id").set_index("hand_id")[[f"p{s}" for s in range(4)]].astype(str)
    else:
        seats = seating.drop_duplicates("hand_id").set_index("hand_id")[[f"p{s}" for s in range(4)]].astype(str)
    hands_all = pd.Series(seats.to_numpy().ravel()).value_counts()
    names = sorted(set(players.tolist()) | (set(hands_all.index) if seating is not None else set()))
    hand_ids = frame["hand_id"].astype(str).to_numpy()
    regret = frame["regret"].to_numpy(float)
    think = frame["think_ms"].to_numpy(float)
    diff = frame["difficulty"].to_numpy(float)
    rows = []
    for p in names:
        i = groups.get(p, np.zeros(0, np.int64))
        f = fits.get(p, Fit(math.nan, math.nan, math.nan, 0))
        k = len(i)
        reg = regret[i]
        mean = float(reg.mean()) if k else math.nan
        half = Z_95 * float(reg.std(ddof=1)) / math.sqrt(k) if k > 1 else math.nan
        sd = math.sqrt(float(var[i].sum()))
        dd_n = int(has_dd[i].sum())
        partner, together, pz, tested = _partner_z(excess[i], hand_ids[i], p, seats) if k else ("", 0, math.nan, 0)
        mt, rho, slope = _think(think[i], diff[i]) if k else (math.nan, math.nan, math.nan)
        rows.append({
            "player": p, "skill": f.skill, "skill_lo": f.lo, "skill_hi": f.hi,
            "hands": int(hands_all.get(p, len(set(hand_ids[i].tolist())))), "decisions": k,
            "match_rate": float((chosen_loss[i] <= 0).mean()) if k else math.nan,
            "mean_loss": float(chosen_loss[i].mean()) if k else math.nan,
            "mean_regret": mean, "regret_lo": max(mean - half, 0.0) if k > 1 else math.nan,
            "regret_hi": mean + half if k > 1 else math.nan,
            "dd_excess": 100.0 * float(excess[i].sum()) / dd_n if dd_n else math.nan,
            "dd_z": float(excess[i].sum()) / sd if sd > 0 else math.nan,
            "_se": 100.0 * sd / dd_n if dd_n and sd > 0 else math.nan,
            "partner": partner, "partner_hands": together, "partner_z": pz, "_tested": tested,
            "mean_think_ms": mt, "think_difficulty_rho": rho, "think_ms_per_difficulty": slope,
        })
    out = pd.DataFrame(rows)
    out.attrs["ref_weight"] = weight
    return room_columns(out) if room else out


def room_columns(out: pd.DataFrame) -> pd.DataFrame:
    """The room-wide columns (level z, signal p and q, flag) of the per-player table of
    ``player_table(..., room=False)``, and the final order."""
    weight = out.attrs["ref_weight"]
    se = out["_se"].to_numpy(float)
    ok = ((out["decisions"] >= MIN_DECISIONS).to_numpy() & np.isfinite(out["dd_z"].to_numpy(float))
          & np.isfinite(se) & np.isfinite(out["dd_excess"].to_numpy(float)))
    out["level_z"] = _level_z(out["dd_excess"].to_numpy(float), out["skill"].to_numpy(float), ok, se)
    p_level = norm_sf(out["level_z"].to_numpy(float))
    p_partner = np.minimum(1.0, out["_tested"].clip(lower=1).to_numpy() * norm_sf(out["partner_z"].to_numpy(float)))
    both = np.vstack([p_level, p_partner])
    # Bonferroni over the parts read: a player with no co-player to compare (too few hands with or without each)
    # has the level part alone, and its p is not doubled for a test that was not made; a player with neither
    # part keeps p 1 (a hypothesis among the players that BH counts, as before)
    parts = np.isfinite(both).sum(axis=0)
    least = np.nanmin(np.where(np.isnan(both), np.inf, both), axis=0)
    p = np.where(parts > 0, np.minimum(1.0, parts * np.where(parts > 0, least, 0.0)), 1.0)
    out["signal_p"] = p
    out["signal_q"] = _bh(p)
    out["flag"] = (out["signal_q"] <= FLAG_Q).fillna(False).astype(bool)
    out = out.drop(columns=["_tested", "_se"])[list(COLUMNS)]
    out.attrs["ref_weight"] = weight
    return out.sort_values(["skill", "player"], ascending=[False, True], ignore_index=True, na_position="last")


def player_rows(part: pd.DataFrame, seated: pd.DataFrame, *, whole: bool = False,
                ref_weight: float = 0.0 if REF_WEIGHT is None else REF_WEIGHT,
                sat_counts: pd.Series | None = None) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """One player's row of :func:`player_table` (``room=False``) from that player's rows (``part``) and the
    seating of the room (``seated``: one row a hand); with ``whole``, also the rows of the players who sat but made
    no decision (from the whole seating; once a room). A task of its own (e.g. on a Dask worker); the rows join
    in :func:`join_player_rows`. ``sat_counts``: the hands each name sat in ``seated`` (:func:`seat_counts`), when
    the caller made them once for every player."""
    me = str(part["player"].iloc[0])
    if whole:  # with the whole seating: the rows of the players without decisions
        t = player_table(part, seated, ref_weight=ref_weight, room=False)
        rest: pd.DataFrame | None = t[(t["player"] != me).to_numpy()]
    else:  # the seating of the player's own hands (who sat with them), not the room's every time
        t = player_table(part, seated[seated["hand_id"].isin(set(part["hand_id"].tolist()))],
                         ref_weight=ref_weight, room=False)
        rest = None
    t = t[(t["player"] == me).to_numpy()].copy()
    sat = (int(sat_counts.get(me, 0)) if sat_counts is not None  # hands the player sat
           else int((seated[[f"p{s}" for s in range(4)]].astype(str).to_numpy() == me).sum()))
    t["hands"] = sat if sat else int(t["hands"].iloc[0])
    return t, rest


def join_player_rows(own: list[pd.DataFrame], rest: pd.DataFrame | None, seating: pd.DataFrame, *,
                     ref_weight: float = 0.0 if REF_WEIGHT is None else REF_WEIGHT) -> pd.DataFrame:
    """The player table from each player's row (:func:`player_rows`; ``rest``: the players without decisions)."""
    if rest is None:
        return player_table(pd.DataFrame(), seating)
    done = {str(p) for t in own for p in t["player"]}
    rest = rest[~rest["player"].isin(done)]
    out = pd.concat([*own, rest], ignore_index=True).sort_values("player", kind="stable", ignore_index=True)
    out.attrs["ref_weight"] = float(ref_weight)
    return room_columns(out)


def seat_counts(seated: pd.DataFrame) -> pd.Series:
    """The hands each name sat in the seating (one row a hand), by name."""
    return pd.Series(seated[[f"p{s}" for s in range(4)]].astype(str).to_numpy().ravel()).value_counts()


def player_table_by_player(parts: Iterable[pd.DataFrame], seating: pd.DataFrame, *,
                           ref_weight: float = 0.0 if REF_WEIGHT is None else REF_WEIGHT) -> pd.DataFrame:
    """:func:`player_table` of all the rows with ``seating``, from each player's rows in turn (``parts``:
    every row of one player per frame, in the rows' order), so memory holds one player's rows, not the
    room's. Equal to the table of the whole frame: a player's figures are computed from its own rows and
    the seating only (:func:`player_rows`), and the room-wide columns from the players' figures
    (:func:`join_player_rows`). ``ref_weight`` is fixed here (fitting it reads everyone's rows at once)."""
    own: list[pd.DataFrame] = []
    rest: pd.DataFrame | None = None
    seated = seating.drop_duplicates("hand_id")
    counts = seat_counts(seated)
    for part in parts:
        if not len(part):
            continue
        t, r = player_rows(part, seated, whole=rest is None, ref_weight=ref_weight, sat_counts=counts)
        rest = r if rest is None else rest
        own.append(t)
    return join_player_rows(own, rest, seating, ref_weight=ref_weight)


def _bh(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg q-values (NaN stays NaN)."""
    out = np.full(len(p), math.nan)
    ok = np.isfinite(p)
    if ok.any():
        out[ok] = bh_adjust(p[ok])
    return out
