"""The think-time model from its normal equations equals the dense per-column least squares it replaced."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from audit_synth import synthetic_room
from scipy import stats

from signals_reference import links

from analyzer.audit.think import MIN_SEPARATE_HANDS, P_MAX, _separable, think_table


def _dense_separable(x: np.ndarray) -> np.ndarray:
    """The former definition: per co-player column, least squares on the other co-player columns."""
    co = x[:, :-1]
    out = np.zeros(co.shape[1])
    for j in range(len(out)):
        rest = np.delete(co, j, axis=1)
        coef = np.linalg.lstsq(rest, co[:, j], rcond=None)[0]
        out[j] = float(((co[:, j] - rest @ coef) ** 2).sum())
    return out


def _dense_think(lk: pd.DataFrame) -> pd.DataFrame:
    """The former think-time model: a dense hands-by-co-players design per actor."""
    t = lk[lk["offset"] == 1].dropna(subset=["think_ms"])
    lt = np.log1p(t["think_ms"].clip(lower=0).to_numpy(np.float64))
    x = t["difficulty"].fillna(0.0).to_numpy(np.float64)
    by = t["actor"]
    n = by.map(by.value_counts()).to_numpy(np.float64)
    mx = pd.Series(x, t.index).groupby(by).transform("mean").to_numpy()
    my = pd.Series(lt, t.index).groupby(by).transform("mean").to_numpy()
    sxy = pd.Series((x - mx) * (lt - my), t.index).groupby(by).transform("sum").to_numpy()
    sxx = pd.Series((x - mx) ** 2, t.index).groupby(by).transform("sum").to_numpy()
    slope = np.where((sxx > 1e-12) & (n > 2), sxy / np.where(sxx > 1e-12, sxx, 1.0), 0.0)
    hand_r = pd.DataFrame({"actor": by, "hand_id": t["hand_id"], "r": lt - my - slope * (x - mx)}).groupby(
        ["actor", "hand_id"])["r"].mean().reset_index()
    seats = lk[["actor", "other", "hand_id"]].drop_duplicates().merge(hand_r, on=["actor", "hand_id"])
    rows = []
    for actor, g in seats.groupby("actor"):
        hands, hi = np.unique(g["hand_id"].to_numpy(object), return_inverse=True)
        others, oi = np.unique(g["other"].to_numpy(object), return_inverse=True)
        d = np.zeros((len(hands), len(others) + 1))
        d[:, -1] = 1.0
        d[hi, oi] = 1.0
        y = np.zeros(len(hands))
        y[hi] = g["r"].to_numpy()
        counts = d[:, :-1].sum(axis=0)
        dof = len(hands) - np.linalg.matrix_rank(d)
        inv = np.linalg.pinv(d.T @ d)
        beta = inv @ d.T @ y
        se = np.sqrt(np.maximum(np.diag(inv)[:-1] * float(((y - d @ beta) ** 2).sum() / dof), 1e-300))
        ok = (counts >= 2) & (len(hands) - counts >= 2) & (_dense_separable(d) >= MIN_SEPARATE_HANDS)
        z = stats.norm.isf(np.clip(stats.t.sf(beta[:-1] / se, dof), 1e-300, P_MAX))
        rows.extend((actor, o, float(zz) if k else 0.0, c) for o, zz, c, k in zip(others, z, counts, ok))
    return pd.DataFrame(rows, columns=["actor", "other", "z", "hands_with"])


def test_separable_from_the_gram_matrix_equals_least_squares() -> None:
    rng = np.random.default_rng(3)
    for hands, cols in ((40, 6), (200, 15), (12, 9)):  # the last: more columns than the data can separate
        x = np.zeros((hands, cols + 1))
        x[:, -1] = 1.0
        for h in range(hands):
            x[h, rng.choice(cols, 3, replace=False)] = 1.0
        x[:, 1] = x[:, 0]  # two co-players who always sat together: neither is separable
        dense = _dense_separable(x)
        fast = _separable(x[:, :-1].T @ x[:, :-1])
        assert np.allclose(fast, dense, atol=1e-6)
        assert fast[0] == 0 and fast[1] == 0 and fast.max() > 0


def test_think_from_normal_equations_equals_the_dense_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hand-level fit (the tables' random effect off: it is checked against a dense model of its own below)."""
    from analyzer.audit import think as signals

    monkeypatch.setattr(signals, "_between_tables", lambda *a, **k: None)
    df = synthetic_room(players=10, hands=300, run=5, colluders=(("p00", "p01"),), seed=7)
    lk = links(df)
    fast = think_table(df).set_index(["actor", "other"]).sort_index()
    dense = _dense_think(lk).set_index(["actor", "other"]).sort_index()
    assert fast.index.equals(dense.index)
    assert (dense["z"] != 0).sum() > len(dense) // 2  # the comparison is not between zeros
    assert np.allclose(fast["z"], dense["z"], atol=1e-6)
    assert np.array_equal(fast["hands_with"], dense["hands_with"])


def test_think_statistics_added_batch_by_batch_equal_one_pass() -> None:
    from analyzer.audit.think import ThinkStats

    df = synthetic_room(players=10, hands=300, run=5, colluders=(("p00", "p01"),), seed=7)
    once = think_table(df).set_index(["actor", "other"]).sort_index()
    acc = ThinkStats()
    hands = df["hand_id"].unique()
    for part in (hands[:70], hands[70:71], hands[71:]):  # whole hands a batch, one batch of a single hand
        acc.add_decisions(df[df["hand_id"].isin(part)])
    batched = acc.result().set_index(["actor", "other"]).sort_index()
    assert batched.index.equals(once.index) and (once["z"] != 0).any()
    assert np.allclose(batched["z"], once["z"], atol=1e-8)
    assert np.allclose(batched["slower_ms_ratio"], once["slower_ms_ratio"], atol=1e-10, equal_nan=True)


def test_think_times_that_do_not_move_are_no_evidence() -> None:
    """A log whose times are placeholders (every action a second after the last) or a bot's fixed delay: the
    residuals are float rounding, and their t values once made every pair of such a room "slower together" with
    z ~ 37 (42 of 106 pairs flagged in a 3,000-hand room, benchmarks/eval_timing.py). Those actors give z = 0 and
    no ratio; the others' fits (which read only their own times) are unchanged."""
    from analyzer.audit.think import ThinkStats

    df = synthetic_room(players=10, hands=300, run=5, colluders=(("p00", "p01"),), seed=7)
    real = think_table(df).set_index(["actor", "other"]).sort_index()
    assert (real["z"].abs() > 1).any()  # the room's times carry signal
    flat = df.assign(think_ms=1000.0)
    for t in (think_table(flat), ThinkStats().merge(_stats(flat)).result()):
        assert (t["z"] == 0).all() and t["slower_ms_ratio"].isna().all(), t.sort_values("z").tail()
    bots = {"p02", "p03", "p04"}  # a fixed delay for some players, real times for the rest
    mixed = df.assign(think_ms=np.where(df["player"].isin(bots), 800.0, df["think_ms"]))
    got = think_table(mixed).set_index(["actor", "other"]).sort_index()
    is_bot = got.index.get_level_values("actor").isin(bots)
    assert (got.loc[is_bot, "z"] == 0).all()
    assert np.allclose(got.loc[~is_bot, "z"], real.loc[~is_bot, "z"], atol=1e-9)


def _stats(df: pd.DataFrame) -> object:
    from analyzer.audit.think import ThinkStats

    acc = ThinkStats()
    acc.add_decisions(df)
    return acc


def _dense_tables_think(df: pd.DataFrame) -> dict[tuple[str, str], tuple[float, float]]:
    """Per (actor, co-player), (z, slower ratio) of the random-effects meta-regression written out on dense arrays:
    hands' residuals from the pace line, grouped by the set of co-players; DerSimonian-Laird tau^2; weighted fit;
    Knapp-Hartung variances on a t with tables - rank degrees of freedom. Actors whose tables hold a hand each keep
    the hand-level fit (left out here)."""
    out: dict[tuple[str, str], tuple[float, float]] = {}
    t = df.dropna(subset=["think_ms"])
    for actor, g in t.groupby("player"):
        lt = np.log1p(g["think_ms"].clip(lower=0).to_numpy(float))
        x = g["difficulty"].fillna(0.0).to_numpy(float)
        sxx = ((x - x.mean()) ** 2).sum()
        slope = ((x - x.mean()) * (lt - lt.mean())).sum() / sxx if sxx > 1e-12 and len(x) > 2 else 0.0
        c = lt.mean() - slope * x.mean()
        h = pd.DataFrame({"hand": g["hand_id"].to_numpy(), "r": lt - slope * x - c,
                          "co": [tuple(sorted(p for p in row if p != actor))
                                 for row in g[["p0", "p1", "p2", "p3"]].astype(str).to_numpy()]})
        per_hand = h.groupby("hand", sort=False).agg(r=("r", "mean"), co=("co", "first"))
        others = sorted({o for co in per_hand["co"] for o in co})
        cells = per_hand.groupby("co")["r"].agg(["mean", "size"])
        y_h = per_hand["r"].to_numpy()
        xh = np.array([[o in co for o in others] + [True] for co in per_hand["co"]], float)
        rank = np.linalg.matrix_rank(xh)
        beta = np.linalg.lstsq(xh, y_h, rcond=None)[0]
        k, hands = len(cells), len(y_h)
        within = float(((y_h - per_hand["co"].map(cells["mean"]).to_numpy()) ** 2).sum())
        if hands - k < 2:
            continue
        if k - rank < 2:  # too few tables: no evidence
            out.update({(str(actor), o): (0.0, 1.0) for o in others})
            continue
        s2 = within / (hands - k)
        xc = np.array([[o in co for o in others] + [True] for co in cells.index], float)
        n, m = cells["size"].to_numpy(float), cells["mean"].to_numpy()
        w = n / s2
        q = float((w * (m - xc @ beta) ** 2).sum())
        a = np.linalg.pinv(xc.T @ (w[:, None] * xc))
        denom = w.sum() - np.trace(a @ (xc.T @ ((w * w)[:, None] * xc)))
        tau2 = max(q - (k - rank), 0.0) / denom
        ws = 1.0 / (s2 / n + tau2)
        cov = np.linalg.pinv(xc.T @ (ws[:, None] * xc))
        b = cov @ (xc.T @ (ws * m))
        scale = max(1.0, float((ws * (m - xc @ b) ** 2).sum()) / (k - rank))  # Knapp-Hartung
        t = b[:-1] / np.sqrt(np.diag(cov)[:-1] * scale)
        z = stats.norm.isf(np.clip(stats.t.sf(t, k - rank), 1e-300, P_MAX))
        for o, zz, bb in zip(others, z, b[:-1]):
            out[(str(actor), o)] = (float(zz), float(np.exp(bb)))
    return out


def test_tables_that_spread_more_than_their_hands_are_a_random_effect() -> None:
    """Slow tables (a lag shared by the hands of a sitting) and a pace that drifts make the hands of one table
    alike: the fit then takes each table as one observation with its own spread (tau^2 > 0), and equals the
    meta-regression written out densely. Honest pairs of a room with slow tables lose the z the hand-level fit gave
    them; the colluders' own slowness (in the hands they collude) stays visible."""
    from analyzer.audit import think as signals

    df = synthetic_room(players=10, hands=400, run=8, colluders=(("p00", "p01"),), seed=11)
    hands = df["hand_id"].drop_duplicates().to_numpy()
    rng = np.random.default_rng(2)
    lag = pd.Series(np.exp(rng.normal(0.0, 0.7, len(hands) // 8 + 1)).repeat(8)[:len(hands)], index=hands)
    slow = df.assign(think_ms=df["think_ms"] * df["hand_id"].map(lag).to_numpy())  # a lag per sitting of 8 hands
    got = think_table(slow).set_index(["actor", "other"])
    dense = _dense_tables_think(slow)
    assert len(dense) >= 5  # actors whose tables spread: the comparison is not empty
    for key, (z, ratio) in dense.items():
        row = got.loc[key]
        if row["z"] != 0:  # 0: a co-player the fit cannot separate (MIN_SEPARATE_HANDS), as before
            assert np.isclose(row["z"], z, atol=1e-6), (key, row["z"], z)
            assert np.isclose(row["slower_ms_ratio"], ratio, rtol=1e-6)
    honest = ~(got.index.get_level_values("actor").isin(["p00", "p01"])
               & got.index.get_level_values("other").isin(["p00", "p01"]))
    assert got.loc[honest, "z"].max() < 4.0, got[honest].sort_values("z").tail()
    with pytest.MonkeyPatch.context() as mp:  # the hand-level fit of the same rows: honest pairs "slower together"
        mp.setattr(signals, "_between_tables", lambda *a, **k: None)
        plain = think_table(slow).set_index(["actor", "other"])
    assert plain.loc[honest, "z"].max() > 6.0 and (plain.loc[honest, "z"] > 3).sum() >= 5
    clean = think_table(df).set_index(["actor", "other"])  # without the lag the colluders' slowness shows
    assert clean.loc[~honest, "z"].min() > 5.0 and clean.loc[honest, "z"].max() < 3.0


def test_past_max_tables_an_actor_gets_the_plain_fit_and_keeps_no_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory stays bounded by the players: an actor with more tables than ``MAX_TABLES`` keeps none (one pass or
    merged batches alike) and gets the hand-level fit."""
    from analyzer.audit import think as signals
    from analyzer.audit.think import ThinkStats

    df = synthetic_room(players=10, hands=400, run=8, colluders=(("p00", "p01"),), seed=11)
    hands = df["hand_id"].drop_duplicates().to_numpy()
    lag = pd.Series(np.exp(np.random.default_rng(2).normal(0.0, 0.7, len(hands))), index=hands)
    slow = df.assign(think_ms=df["think_ms"] * df["hand_id"].map(lag).to_numpy())
    monkeypatch.setattr(signals, "MAX_TABLES", 3)
    one = ThinkStats()
    one.add_decisions(slow)
    parts = [ThinkStats() for _ in range(2)]
    parts[0].add_decisions(slow[slow["hand_id"].isin(hands[:200])])
    parts[1].add_decisions(slow[slow["hand_id"].isin(hands[200:])])
    merged = parts[0].merge(parts[1])
    for acc in (one, merged):
        assert acc.overflow == set(acc.others) and not acc.tables
    monkeypatch.setattr(signals, "_between_tables", lambda *a, **k: None)
    plain = ThinkStats()
    plain.add_decisions(slow)
    want = plain.result().set_index(["actor", "other"]).sort_index()
    monkeypatch.undo()
    for acc in (one, merged):
        got = acc.result().set_index(["actor", "other"]).sort_index()
        assert np.allclose(got["z"], want["z"], atol=1e-8)


def test_an_actor_with_more_co_players_than_tables_reads_each_on_its_own() -> None:
    """Long sittings in a big room: each actor sits at 12 tables with 15 co-players, so the joint fit has no
    degrees of freedom left (it gave every pair z = 0). Each co-player is then read on its own (its tables against
    the others): the colluders' slowness together shows, honest pairs stay quiet."""
    from analyzer.audit import think as signals

    for seed, together in ((0, 5),):  # seed 0: 5 sittings of the two together
        df = synthetic_room(players=16, hands=480, run=40, seed=seed)
        seated = df.groupby("hand_id")[["p0", "p1", "p2", "p3"]].first()
        both = seated.apply(lambda r: {"p00", "p01"} <= set(r), axis=1)
        assert int(both.sum()) // 40 == together  # sittings of the two together
        slow = df["hand_id"].map(both).to_numpy() & df["player"].isin(["p00", "p01"]).to_numpy()
        room = df.assign(think_ms=df["think_ms"] * np.where(slow, 1.6, 1.0))
        got = think_table(room).set_index(["actor", "other"])
        pair = got.index.isin([("p00", "p01"), ("p01", "p00")])
        assert got.loc[pair, "z"].min() > 5.0 and got.loc[~pair, "z"].max() < 3.5, got.sort_values("z").tail()
        assert (got["z"] != 0).mean() > 0.6  # most pairs are read (2 tables with and 2 without)
        with pytest.MonkeyPatch.context() as mp:  # the joint fit alone: no evidence for anyone
            mp.setattr(signals, "_one_at_a_time",
                       lambda n, mean, cols, p, s2, hands: (np.zeros(p), np.full(p - 1, np.inf), 0))
            joint = think_table(room)
        assert (joint["z"] == 0).all()


def test_the_think_directions_correlation_is_taken_out_of_both_sides() -> None:
    """Both players of a pair carry the pace of the tables they shared, so an honest pair's two think z's go
    together; 'both sides' divides their sum by sqrt(2 (1 + rho)), rho read from the room's pairs."""
    from analyzer.audit.calibrate import MIN_PAIRS_EMPIRICAL, direction_correlation, log_combine_directions

    rng = np.random.default_rng(5)
    shared = rng.normal(size=400)
    ab = np.sqrt(0.75) * shared + np.sqrt(0.25) * rng.normal(size=400)
    ba = np.sqrt(0.75) * shared + np.sqrt(0.25) * rng.normal(size=400)
    rho = direction_correlation(ab, ba)
    assert 0.65 < rho < 0.85
    assert direction_correlation(ab, rng.normal(size=400)) < 0.15
    assert direction_correlation(ab[:MIN_PAIRS_EMPIRICAL - 1], ba[:MIN_PAIRS_EMPIRICAL - 1]) == 1.0
    assert direction_correlation(np.zeros(400), ba) == 1.0  # no evidence either way: the directions as one
    honest = log_combine_directions(ab, ba, rho=rho)
    naive = log_combine_directions(ab, ba)
    assert (honest >= naive - 1e-12).all()
    # under the null the corrected p's are about uniform: few below 1%, where the naive 'both sides' gave many
    assert (np.exp(honest) < 0.01).sum() <= 10 < (np.exp(naive) < 0.01).sum()
    # a pair slower together both ways still reads strongly
    assert log_combine_directions(np.array([6.0]), np.array([6.0]), rho=rho)[0] < np.log(1e-8)


def test_each_co_player_on_its_own_is_its_own_random_effects_fit() -> None:
    """``_one_at_a_time`` fits every co-player at once by the two-column design's closed forms: the same coefficients
    and variances as ``_random_tables`` of each co-player's design (its tables' indicator and the intercept), and no
    evidence for a co-player with fewer than 2 tables with it or without it."""
    from analyzer.audit.think import MIN_TABLE_DOF, _one_at_a_time, _random_tables

    rng = np.random.default_rng(3)
    read = skipped = 0
    for _ in range(120):
        k, p = int(rng.integers(2, 40)), int(rng.integers(4, 30))
        cols = np.array([rng.choice(p - 1, 3, replace=False) for _ in range(k)])
        n = rng.integers(1, 60, k).astype(float)
        # a slow co-player 0, and tables of their own spread (tau^2 > 0 in some draws, 0 in others)
        mean = rng.normal(size=k) * rng.uniform(0.01, 2.0) + (cols == 0).any(axis=1) * rng.uniform(0.0, 1.0)
        sigma2, hands = float(rng.uniform(0.05, 3.0)), int(n.sum())
        fit, var, dof = _one_at_a_time(n, mean, cols, p, sigma2, hands)
        assert dof == (k - 2 if k - 2 >= MIN_TABLE_DOF else 0)
        for j in range(p - 1):
            has = (cols == j).any(axis=1).astype(np.float64)
            if dof == 0 or min(has.sum(), k - has.sum()) < 2:
                assert fit[j] == 0.0 and var[j] == np.inf
                skipped += 1
                continue
            b, v = _random_tables(np.column_stack([has, np.ones(k)]), n, mean, sigma2, hands, dof)
            assert fit[j] == pytest.approx(b[0], rel=1e-9, abs=1e-12)
            assert var[j] == pytest.approx(v[0], rel=1e-9)
            read += 1
    assert read > 500 and skipped > 100  # both kinds of co-player met


def test_each_co_player_on_its_own_in_blocks_is_the_same() -> None:
    """Co-players fitted a block at a time (a big room's actor: the co-players x tables arrays bounded) give the
    figures of one block."""
    from analyzer.audit import think as signals

    rng = np.random.default_rng(8)
    k, p = 60, 40
    cols = np.array([rng.choice(p - 1, 3, replace=False) for _ in range(k)])
    n = rng.integers(1, 30, k).astype(float)
    mean = rng.normal(size=k)
    whole = signals._one_at_a_time(n, mean, cols, p, 0.7, int(n.sum()))
    assert signals.BLOCK_CELLS // k >= p
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(signals, "BLOCK_CELLS", 5 * k)  # 5 co-players a block
        blocks = signals._one_at_a_time(n, mean, cols, p, 0.7, int(n.sum()))
    assert np.isfinite(whole[1]).sum() > 20
    np.testing.assert_allclose(blocks[0], whole[0], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(blocks[1], whole[1], rtol=1e-12)
    assert blocks[2] == whole[2]
