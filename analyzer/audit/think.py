"""Think time with a co-player: is an actor slower, for the difficulty, in hands with this player than without?

Each actor's log think time is fitted on difficulty (its own pace); per hand the mean residual is regressed on
who else sat at the table (one indicator per co-player, each table one observation with a spread of its own);
the z of a co-player's coefficient is the signal. Everything is solved from sufficient statistics
(:class:`ThinkStats`: sums per actor, added batch by batch and merged), so the cost is linear in hands and the
memory the co-players squared per actor.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analyzer.analysis.dist import norm_isf, t_sf

P_MAX = 1 - 1e-12  # keeps one-sided z finite when nothing at all points that way
#: Think time: a co-player's coefficient is read only when this many hands' worth of its presence
#: is not explained by the other co-players' (see ``_separable``).
MIN_SEPARATE_HANDS = 4.0
#: Think times that do not move are no evidence: an actor whose hands' mean log think times stray from its pace line
#: by less than this (root mean square, log units: a millionth of the time) has times a log fixed (a placeholder such
#: as every action a second after the last, a bot's constant delay), and its residuals are float rounding, whose t
#: values are noise over noise (they would read as a certain "slower with this player" for every pair of such a room).
FLAT_THINK = 1e-6
#: The slower ratio of a co-player whose effect cannot be read (flat times, too few hands or tables, a presence the
#: other co-players' explains): no figure, where its z is 0 (no evidence either way).
UNREAD = float("nan")
#: The least residual variance, as a share of the variance around the pace line, that the fit's standard errors
#: assume: the residual sum of squares comes from the normal equations, where rounding can leave ~0 for a near
#: perfect fit and make every z infinite.
MIN_RSS_SHARE = 1e-10
#: Tables (sets of co-players) kept per actor for the tables' random effect (:func:`_between_tables`): memory stays
#: bounded by the players, however many hands. An actor past it (a room that reseats every hand: each table then
#: holds a hand or two, and the spread of tables cannot be told from the spread of hands anyway) gets the plain fit.
MAX_TABLES = 20_000
#: Tables beyond the fit's coefficients an actor needs before a co-player's effect on its think time is read: below
#: it, who sat is confounded with how slow each table was (``_between_tables``), and the think signal says nothing.
MIN_TABLE_DOF = 2



def _separable(gram: np.ndarray) -> np.ndarray:
    """Per co-player, from the Gram matrix of the co-player columns of a design (hands, co-players; the
    intercept is left out: the three co-players of a hand always sum to it): the residual sum of
    squares of the column on the other co-players' columns, in hands. Near 0 when the co-player always
    sat with the same others (early in a room): then no regression can tell whose presence made the
    actor slow, and the pseudo-inverse would hand a partner's effect to a bystander with a tiny
    standard error.

    From the Gram matrix alone (its size is the co-players', whatever the hands): a column lies in the
    span of the others exactly when some null vector of the Gram matrix has a non-zero entry there
    (residual 0); otherwise its residual is 1 / (pseudo-inverse)_jj (the row of X+ for that column is
    orthogonal to the other columns and has squared norm (G+)_jj = 1 / residual).
    """
    n = len(gram)
    if n == 0:
        return np.zeros(0)
    e, v = np.linalg.eigh(gram)
    tol = max(float(e.max()), 0.0) * n * np.finfo(np.float64).eps * 10
    keep = e > tol
    null_weight = (v[:, ~keep] ** 2).sum(axis=1)
    pinv_diag = ((v[:, keep] ** 2) / e[keep]).sum(axis=1)
    out = np.where((null_weight > 1e-9) | (pinv_diag <= 0), 0.0, 1.0 / np.where(pinv_diag > 0, pinv_diag, 1.0))
    return np.asarray(out, np.float64)




class ThinkStats:
    """The think-time model's sufficient statistics, added batch by batch (whole hands a batch): per
    actor its pace fit (sums over its timed decisions of 1, x, log time, x^2, x log time) and, over the
    hands it timed, the normal equations of the per-hand regression on who sat with it (X'X and X'a,
    X'b for the hand's mean log time a and mean difficulty b, and their sums and cross-products).
    The per-hand residual is a - slope b - c with the actor's pace line (slope, c), linear in a and b,
    so X'y and y'y follow at the end without a second pass. Memory: co-players squared per actor,
    whatever the hands."""

    def __init__(self) -> None:
        self.pace: dict[str, np.ndarray] = {}  # n, sum x, sum lt, sum x^2, sum x lt
        self.others: dict[str, dict[str, int]] = {}
        self.xtx: dict[str, np.ndarray] = {}  # co-players + intercept (last), grown as co-players appear
        self.xta: dict[str, np.ndarray] = {}
        self.xtb: dict[str, np.ndarray] = {}
        self.sums: dict[str, np.ndarray] = {}  # hands, sum a, sum b, sum a^2, sum b^2, sum ab
        #: per actor, per table (its three co-players, sorted): hands, sum a, sum b (the between-table spread)
        self.tables: dict[str, dict[tuple[str, ...], list[float]]] = {}
        self.overflow: set[str] = set()  # actors whose tables passed MAX_TABLES: no longer kept

    def add_decisions(self, df: pd.DataFrame) -> None:
        """Add decision rows (``player``, ``seat``, ``p0..p3``, ``hand_id``, ``think_ms``, ``difficulty``)."""
        t = df.dropna(subset=["think_ms"])
        if t.empty:
            return
        lt = np.log1p(t["think_ms"].clip(lower=0).to_numpy(np.float64))
        x = t["difficulty"].fillna(0.0).to_numpy(np.float64)
        actor_code, actors = pd.factorize(t["player"].astype(str).to_numpy(object))
        hand_code, _ = pd.factorize(t["hand_id"].astype(str).to_numpy(object))
        n_a = len(actors)
        # per actor its pace line's sums (timed decisions, x, log time, x^2, x log time): integer codes and
        # bincounts, not a groupby on names (this runs once per batch; a groupby costs a fifth of the pair signals)
        pace = np.stack([np.bincount(actor_code, minlength=n_a).astype(np.float64),
                         *(np.bincount(actor_code, v, n_a) for v in (x, lt, x * x, x * lt))], axis=1)
        for k, a in enumerate(actors):
            self.pace[a] = self.pace.get(a, np.zeros(5)) + pace[k]
        # per (actor, hand): mean log time and difficulty, and the table read from its first decision
        key = actor_code.astype(np.int64) * (int(hand_code.max()) + 1) + hand_code
        uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
        inv = inv.ravel()
        cnt = np.bincount(inv, minlength=len(uniq)).astype(np.float64)
        m_lt, m_x = np.bincount(inv, lt, len(uniq)) / cnt, np.bincount(inv, x, len(uniq)) / cnt
        order = np.argsort(first, kind="stable")  # the (actor, hand) pairs in order of appearance
        first, m_lt, m_x = first[order], m_lt[order], m_x[order]
        names = t[["p0", "p1", "p2", "p3"]].astype(str).to_numpy(object)[first]
        who = actor_code[first]
        by = np.argsort(who, kind="stable")
        bounds = np.searchsorted(who[by], np.arange(n_a + 1))
        for k, a in enumerate(actors):
            i = by[bounds[k]:bounds[k + 1]]
            nm = names[i]
            self._hands(str(a), nm[nm != a].reshape(len(i), 3), m_lt[i], m_x[i])

    def _hands(self, actor: str, co: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
        """Add an actor's hands: co-players (hands, 3), mean log time and mean difficulty per hand."""
        from scipy import sparse

        idx = self.others.setdefault(actor, {})
        for o in pd.unique(co.ravel()):
            if o not in idx:
                idx[o] = len(idx)
        k = len(idx) + 1
        old = self.xtx.get(actor)
        if old is None or len(old) < k:  # grow, keeping the intercept last
            m = max(k, 2 * (0 if old is None else len(old) - 1) + 1)
            xtx, xta, xtb = np.zeros((m, m)), np.zeros(m), np.zeros(m)
            if old is not None:
                n = len(old) - 1
                xtx[:n, :n], xtx[:n, -1], xtx[-1, :n], xtx[-1, -1] = old[:n, :n], old[:n, -1], old[-1, :n], old[-1, -1]
                xta[:n], xta[-1] = self.xta[actor][:n], self.xta[actor][-1]
                xtb[:n], xtb[-1] = self.xtb[actor][:n], self.xtb[actor][-1]
            self.xtx[actor], self.xta[actor], self.xtb[actor] = xtx, xta, xtb
        xtx, xta, xtb = self.xtx[actor], self.xta[actor], self.xtb[actor]
        h = len(a)
        cols = np.concatenate([np.vectorize(idx.__getitem__, otypes=[np.int64])(co).ravel(),
                               np.full(h, len(xtx) - 1)])
        rows = np.concatenate([np.repeat(np.arange(h), 3), np.arange(h)])
        d = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(h, len(xtx)))
        xtx += (d.T @ d).toarray()
        xta += d.T @ a
        xtb += d.T @ b
        self.sums[actor] = self.sums.get(actor, np.zeros(6)) + np.array(
            [h, a.sum(), b.sum(), a @ a, b @ b, a @ b], np.float64)
        if actor in self.overflow:
            return
        tables = self.tables.setdefault(actor, {})
        for key, ai, bi in zip(map(tuple, np.sort(co.astype(str), axis=1).tolist()), a.tolist(), b.tolist()):
            cell = tables.get(key)
            if cell is None:
                tables[key] = [1.0, ai, bi]
            else:
                cell[0] += 1.0
                cell[1] += ai
                cell[2] += bi
        if len(tables) > MAX_TABLES:
            self.overflow.add(actor)
            del self.tables[actor]

    def merge(self, later: ThinkStats) -> ThinkStats:
        """These sums and ``later``'s (sums of the rows that came after these) as one, as if every row had been
        added to one accumulator in that order: each actor's co-players keep their order of appearance
        (``later``'s new ones after), so the fit is the same one (to float rounding). Per-batch sums made
        apart (e.g. on Dask workers, next to each batch's rows) merge in a tree of these."""
        out = ThinkStats()
        for actor in [*self.others, *(a for a in later.others if a not in self.others)]:
            mine, theirs = self.others.get(actor, {}), later.others.get(actor, {})
            idx = dict(mine)
            for o in theirs:
                idx.setdefault(o, len(idx))
            k = len(idx) + 1
            xtx, xta, xtb = np.zeros((k, k)), np.zeros(k), np.zeros(k)
            for part, own in ((self, mine), (later, theirs)):
                if actor not in part.xtx:
                    continue
                m = len(part.xtx[actor])
                src = np.array([*own.values(), m - 1], np.int64)  # own codes, intercept last
                dst = np.array([*(idx[o] for o in own), k - 1], np.int64)
                xtx[np.ix_(dst, dst)] += part.xtx[actor][np.ix_(src, src)]
                xta[dst] += part.xta[actor][src]
                xtb[dst] += part.xtb[actor][src]
            out.others[actor], out.xtx[actor], out.xta[actor], out.xtb[actor] = idx, xtx, xta, xtb
            out.sums[actor] = self.sums.get(actor, np.zeros(6)) + later.sums.get(actor, np.zeros(6))
            if actor in self.overflow or actor in later.overflow:
                out.overflow.add(actor)
                continue
            tables = {key: list(cell) for key, cell in self.tables.get(actor, {}).items()}
            for key, cell in later.tables.get(actor, {}).items():
                mine_cell = tables.get(key)
                tables[key] = list(cell) if mine_cell is None else [x + y for x, y in zip(mine_cell, cell)]
            if len(tables) > MAX_TABLES:
                out.overflow.add(actor)
            else:
                out.tables[actor] = tables
        for actor in [*self.pace, *(a for a in later.pace if a not in self.pace)]:
            out.pace[actor] = self.pace.get(actor, np.zeros(5)) + later.pace.get(actor, np.zeros(5))
        return out

    def result(self) -> pd.DataFrame:
        """Per (actor, co-player): z of the co-player's coefficient, hands together, slower ratio."""
        cols = ["actor", "other", "z", "hands_with", "slower_ms_ratio"]
        rows: list[tuple[str, str, float, float, float]] = []
        for actor, idx in self.others.items():
            n, sx, sl, sxx_, sxl = self.pace[actor]
            mx, my = sx / n, sl / n
            sxx, sxy = sxx_ - n * mx * mx, sxl - n * mx * my
            slope = sxy / sxx if (sxx > 1e-12 and n > 2) else 0.0
            c = my - slope * mx
            p = len(idx)
            keep = list(range(p)) + [len(self.xtx[actor]) - 1]
            xtx = self.xtx[actor][np.ix_(keep, keep)]
            xta, xtb = self.xta[actor][keep], self.xtb[actor][keep]
            hands, sa, sb, saa, sbb, sab = self.sums[actor]
            xty = xta - slope * xtb - c * xtx[:, -1]
            yty = saa + slope * slope * sbb + hands * c * c - 2 * slope * sab - 2 * c * sa + 2 * slope * c * sb
            others = sorted(idx, key=idx.__getitem__)
            rows.extend(_think_fit(actor, others, xtx, xty, yty, int(hands), None if actor in self.overflow else
                                   _table_means(self.tables.get(actor, {}), idx, slope, c)))
        return pd.DataFrame(rows, columns=cols)


def _table_means(tables: dict[tuple[str, ...], list[float]], idx: dict[str, int], slope: float, c: float
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """An actor's tables (each set of three co-players it sat with): hands, the mean residual from its pace line
    (``slope``, ``c``) and the co-players' columns in the design (tables, 3); None without tables."""
    if not tables:
        return None
    cells = np.array(list(tables.values()), np.float64)
    n = cells[:, 0]
    mean = (cells[:, 1] - slope * cells[:, 2]) / n - c
    cols = np.array([[idx[o] for o in key] for key in tables], np.int64).reshape(len(tables), -1)
    return n, mean, cols


def _think_fit(actor: str, others: list[str], xtx: np.ndarray, xty: np.ndarray, yty: float, hands: int,
               tables: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
               ) -> list[tuple[str, str, float, float, float]]:
    """One actor's regression on its co-players, from its normal equations; with the actor's ``tables``
    (:func:`_table_means`), each table one observation with a spread of its own (:func:`_between_tables`), unless
    its tables hold about a hand each (then the hand-level fit is that model)."""
    counts = np.diag(xtx)[:-1]
    rank = int(np.linalg.matrix_rank(xtx, hermitian=True))
    dof = hands - rank
    if dof < 3 or not yty > hands * FLAT_THINK ** 2:  # too few hands, or times that do not move (FLAT_THINK)
        return [(actor, o, 0.0, float(c), UNREAD) for o, c in zip(others, counts)]
    xtx_inv = np.linalg.pinv(xtx, hermitian=True)
    beta = xtx_inv @ xty
    # ||y - X beta||^2 from the normal equations: y'y - 2 beta'X'y + beta'X'X beta
    rss = float(yty - 2 * beta @ xty + beta @ xtx @ beta)
    sigma2 = max(rss, MIN_RSS_SHARE * yty) / dof
    var = np.diag(xtx_inv)[:-1] * sigma2
    mixed = _between_tables(xtx_inv, beta, yty, hands, rank, tables) if tables is not None else None
    alone = False  # each co-player read on its own: its tables with and without it tell it apart
    if mixed is not None:  # each table one observation, with its own spread (a slow table, a drifting pace)
        beta, var, dof, alone = mixed
        if dof == 0:  # too few tables to tell a co-player from a slow table: no evidence either way
            return [(actor, o, 0.0, float(c), UNREAD) for o, c in zip(others, counts)]
    p = t_sf(beta[:-1] / np.sqrt(np.maximum(var, 1e-300)), dof)
    ok = (counts >= 2) & (hands - counts >= 2) & np.isfinite(var) & (
        alone | (_separable(xtx[:-1, :-1]) >= MIN_SEPARATE_HANDS))
    z = norm_isf(np.clip(p, 1e-300, P_MAX))
    return [(actor, o, float(zz) if k else 0.0, float(cnt), float(np.exp(bb)) if k else UNREAD)
            for o, zz, cnt, bb, k in zip(others, z, counts, beta[:-1], ok)]


def _between_tables(xtx_inv: np.ndarray, beta: np.ndarray, yty: float, hands: int, rank: int,
                    tables: tuple[np.ndarray, np.ndarray, np.ndarray]
                    ) -> tuple[np.ndarray, np.ndarray, int, bool] | None:
    """The co-players' coefficients, their variances and degrees of freedom with each table (set of co-players) as
    one observation that has a spread of its own; None when every table holds about one hand (the hand-level fit is
    then the same model). No degrees of freedom (0) when the actor sat at too few tables to tell a co-player's effect
    from a slow table's.

    The hand-level fit takes every hand as independent. Think times are not: a table can be slow as a whole (a
    laggy connection, a long discussion) and a player's pace drifts over an evening, and the hands of one table share
    that. A co-player's effect is only seen between tables (who sits is the same within one), so the hands of a
    table count as far fewer than their number: read as independent, honest pairs that sat at a few slow tables look
    "slower together" with z's of 4-9. Here each table's mean residual y_t over n_t hands has variance sigma^2 / n_t +
    tau^2, with sigma^2 from the spread of hands within tables and tau^2, the tables' own, from DerSimonian and
    Laird's moments (a meta-regression: Cochran's Q of the tables' means about the plain fit); the fit is weighted
    by 1 / (sigma^2 / n_t + tau^2), its variances scaled by the tables' own scatter about it when that is larger
    (Knapp and Hartung's adjustment, which holds its level with few tables) and read on a t with tables - rank
    degrees of freedom. With tau^2 = 0 the coefficients are the plain fit's. When the co-players outnumber what the
    tables can tell apart (fewer than MIN_TABLE_DOF degrees of freedom left), each co-player is read on its own
    (:func:`_one_at_a_time`)."""
    n, mean, cols = tables
    k = len(n)
    dof_w = hands - k
    if dof_w < 2:
        return None  # a hand or so a table: the tables are the hands
    dof_t = k - rank
    within = yty - float(n @ (mean * mean))
    sigma2 = max(within, MIN_RSS_SHARE * yty) / dof_w
    p = len(beta)
    if dof_t < MIN_TABLE_DOF:  # more co-players than tables can tell apart together: each one on its own
        return (*_one_at_a_time(n, mean, cols, p, sigma2, hands), True)
    x = np.zeros((k, p))
    np.put_along_axis(x, cols, 1.0, axis=1)
    x[:, -1] = 1.0
    fit, var = _random_tables(x, n, mean, sigma2, hands, dof_t, xtx_inv, beta)
    return fit, var, dof_t, False


def _random_tables(x: np.ndarray, n: np.ndarray, mean: np.ndarray, sigma2: float, hands: int, dof_t: int,
                   xtx_inv: np.ndarray | None = None, beta: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The random-effects meta-regression of the tables' mean residuals ``mean`` (over ``n`` hands each, within
    variance ``sigma2``) on the design ``x`` (tables x coefficients, the intercept last): the coefficients and their
    Knapp-Hartung variances (but the intercept's). ``xtx_inv``, ``beta``: the plain fit's, when known (weights
    n_t / sigma^2; the hand-level fit's, as a table's hands share its row)."""
    if xtx_inv is None or beta is None:
        xtx_inv = np.linalg.pinv((x * n[:, None]).T @ x, hermitian=True)
        beta = xtx_inv @ (x.T @ (n * mean))
    q = float(n @ (mean - x @ beta) ** 2) / sigma2  # Cochran's Q about the plain (weights n_t / sigma^2) fit
    g2 = (x * (n * n)[:, None]).T @ x
    denom = (hands - float(np.trace(xtx_inv @ g2))) / sigma2
    tau2 = max(q - dof_t, 0.0) / denom if denom > 0 else 0.0
    w = 1.0 / (sigma2 / n + tau2)
    m_inv = np.linalg.pinv((x * w[:, None]).T @ x, hermitian=True)
    fit = m_inv @ (x.T @ (w * mean))
    scatter = float(w @ (mean - x @ fit) ** 2) / dof_t
    return fit, np.diag(m_inv)[:-1] * max(1.0, scatter)


def _one_at_a_time(n: np.ndarray, mean: np.ndarray, cols: np.ndarray, p: int, sigma2: float, hands: int
                   ) -> tuple[np.ndarray, np.ndarray, int]:
    """Each co-player's coefficient on its own (tables with it against tables without it, the others' effects left
    in the tables' spread), read on a t with tables - 2 degrees of freedom: for an actor who sat with more co-players
    than tables (long sittings in a big room), where the joint fit has none. A co-player needs 2 tables with it and 2
    without; too few tables in all (fewer than MIN_TABLE_DOF + 2): no evidence (0 degrees of freedom).

    :func:`_random_tables` of each co-player's design (its tables' indicator and the intercept), for every co-player
    at once: with two columns the fits have closed forms (a co-player's coefficient is the weighted mean of its
    tables less that of the others), so the room's actors x co-players fits are a few array operations each actor,
    not a Python loop of small solves (the same figures to rounding, ``tests/audit/test_think_linear.py``)."""
    k = len(n)
    fit, var = np.zeros(p), np.full(p - 1, np.inf)
    dof = k - 2
    if dof < MIN_TABLE_DOF:
        return fit, var, 0
    seated = np.unique(np.arange(k)[:, None] * p + cols)  # (table, co-player) once each
    m = np.bincount(seated % p, minlength=p)[:p - 1]  # tables with each co-player
    ok = np.flatnonzero((m >= 2) & (k - m >= 2))
    step = max(1, BLOCK_CELLS // k)  # co-players a block: its arrays of co-players x tables stay a few MB
    for at in range(0, len(ok), step):
        js = ok[at:at + step]
        h = np.zeros((len(js), k))  # co-player x table: 1 where the co-player sat at the table
        where = np.full(p - 1, -1)
        where[js] = np.arange(len(js))
        t, s = np.nonzero(where[cols] >= 0)
        h[where[cols[t, s]], t] = 1.0
        fit[js], var[js] = _tables_with(h, n, mean, sigma2, hands, dof)
    return fit, var, dof


#: Cells (co-players x tables) of one block of :func:`_one_at_a_time`'s fits.
BLOCK_CELLS = 1 << 19


def _tables_with(h: np.ndarray, n: np.ndarray, mean: np.ndarray, sigma2: float, hands: int, dof: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_random_tables` of each row's design (``h``: co-players x tables, 1 where it sat; and the intercept):
    each co-player's coefficient and its Knapp-Hartung variance, by the two-column design's closed forms."""

    def line(w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per co-player, the fit of ``mean`` on (its indicator, 1) with table weights ``w`` (co-players x tables,
        or tables): its coefficient and intercept, and the inverse normal matrix' first diagonal element."""
        w = np.broadcast_to(w, h.shape)
        with_ = (w * h).sum(axis=1)
        all_ = w.sum(axis=1)
        u, v = (w * h) @ mean, w @ mean
        intercept = (v - u) / (all_ - with_)  # the tables without it
        return u / with_ - intercept, intercept, all_ / (with_ * (all_ - with_))

    b, c, _ = line(n)  # the plain fit (weights n_t / sigma^2)
    q = ((mean - b[:, None] * h - c[:, None]) ** 2) @ n / sigma2  # Cochran's Q about it
    with_, all_ = h @ n, float(n.sum())
    nn_with, nn_all = h @ (n * n), float(n @ n)
    trace = (all_ * nn_with - 2.0 * with_ * nn_with + with_ * nn_all) / (with_ * (all_ - with_))
    denom = (hands - trace) / sigma2
    tau2 = np.where(denom > 0, np.maximum(q - dof, 0.0) / np.where(denom > 0, denom, 1.0), 0.0)
    w = 1.0 / (sigma2 / n[None, :] + tau2[:, None])
    b, c, inv00 = line(w)
    scatter = (w * (mean - b[:, None] * h - c[:, None]) ** 2).sum(axis=1) / dof
    return b, inv00 * np.maximum(1.0, scatter)



def think_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per (actor, co-player) of decision rows (``player``, ``p0..p3``, ``hand_id``, ``think_ms``, ``difficulty``):
    the z of the co-player's coefficient, hands together and the slower ratio (:meth:`ThinkStats.result`)."""
    acc = ThinkStats()
    acc.add_decisions(df)
    return acc.result()
