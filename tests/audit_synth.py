"""Synthetic decision rows in the shape of docs/design.md, for audit tests that need no simulator."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analyzer.analysis.options import empty_options

SEATS = 4


def synthetic_room(*, players: int = 16, hands: int = 600, run: int = 10, decisions: int = 8,
                   colluders: tuple[tuple[str, str], ...] = (), favour: float = 3.0, share: float = 0.5,
                   friends: tuple[tuple[str, str], ...] = (), weak: tuple[str, ...] = (),
                   one_way: bool = False, habits: dict[str, float] | None = None, seed: int = 0) -> pd.DataFrame:
    """A room: tables re-form every ``run`` hands; colluders and friends sit together when they can.

    Honest mistakes spread their cost over the three others at random; a colluder, in ``share``
    of its decisions, moves ``favour`` points from the two others to its partner, and (pooled
    information) its choice is worth more under the true deal than its own information said.
    Immediate effects (``imm``) are honest noise, independent of who sits where, plus the same
    favour on a colluder's helping decisions.
    ``one_way``: only the first of each pair helps (feeding).
    ``habits``: honest players who treat the next seat differently from the other two, whoever sits
    there (e.g. never releasing cards to the player after them), by this many points a decision.
    """
    # one row at a time, in Python floats: the same draws in the same order as numpy arrays a row, the same values
    # (each sum and product is the same IEEE operation; checked bit for bit), twice as fast
    rng = np.random.default_rng(seed)
    ids = [f"p{i:02d}" for i in range(players)]
    skill = {p: (3.0 if p in weak else rng.uniform(0.5, 1.5)) for p in ids}
    partner = {a: b for a, b in colluders} | ({} if one_way else {b: a for a, b in colluders})
    habits = habits or {}
    ones3 = np.ones(3)
    rows: list[tuple] = []
    seq = 0
    for start in range(0, hands, run):
        order = list(rng.permutation(ids))
        for group in (*colluders, *friends):  # seat each pair at one table
            x, y = group
            order.remove(y)
            order.insert(order.index(x) + 1, y)
        for t in range(len(order) // SEATS):
            table = order[t * SEATS:(t + 1) * SEATS]
            for h in range(min(run, hands - start)):
                seats = [str(p) for p in np.roll(table, h)]
                hand_id = f"h{seq:06d}"
                for i in range(decisions * SEATS):
                    s = i % SEATS
                    actor = seats[s]
                    regret = float(rng.exponential(skill[actor])) * (rng.random() < 0.6)
                    share_out = rng.dirichlet(ones3).tolist()
                    d = [0.0] * SEATS
                    d[s] = -regret
                    for k in range(3):
                        d[(s + k + 1) % SEATS] = regret * share_out[k]
                    noise = rng.normal(0, 1.0, SEATS).tolist()
                    mean = (((noise[0] + noise[1]) + noise[2]) + noise[3]) / SEATS  # numpy's order for 4 values
                    dd = [d[k] + noise[k] - mean for k in range(SEATS)]
                    imm = rng.normal(0, 2.0, SEATS).tolist()
                    on = rng.random() < 0.5  # half the decisions move nothing
                    imm = [v * on for v in imm]
                    habit = habits.get(actor, 0.0)
                    if habit:
                        nxt = (s + 1) % SEATS
                        rest = [k for k in range(SEATS) if k not in (s, nxt)]
                        for m_ in (d, imm):
                            m_[nxt] += habit
                            for k in rest:
                                m_[k] -= habit / 2
                        dd = [d[k] + noise[k] - mean for k in range(SEATS)]
                    mate = partner.get(actor)
                    together = mate in seats
                    if together and rng.random() < share:
                        m = seats.index(mate)
                        for k in range(SEATS):
                            if k not in (s, m):
                                d[k] -= favour / 2
                        d[m] += favour
                        dd = [d[k] + noise[k] - mean for k in range(SEATS)]
                        dd[s] += favour / 2
                        dd[m] += favour / 2
                        for k in range(SEATS):
                            if k not in (s, m):
                                dd[k] -= favour / 2
                        imm[m] += favour
                    kind = "play" if rng.random() < 0.7 else "cover"
                    n_options = int(rng.integers(2, 6))
                    think = float(rng.lognormal(7, 0.5)) * (1.4 if together else 1.0)
                    difficulty = float(rng.uniform(0, 1))
                    rows.append((hand_id, f"t{t}", seq, i + 1, s, actor, *seats, kind, n_options, "8H",
                                 "6H" if regret > 0 else "8H", int(regret > 0), regret, 0.3, *d, *dd, max(0.0, -dd[s]),
                                 *imm, think, difficulty, "", None))
                seq += 1
    df = pd.DataFrame(rows, columns=list(_COLUMNS))
    df["options"] = empty_options(len(df))  # no options: the signals read the delta columns
    return df


_COLUMNS = ("hand_id", "table_id", "hand_seq", "action", "seat", "player", "p0", "p1", "p2", "p3", "kind", "n_options",
            "chosen", "best", "rank", "regret", "regret_se", *(f"delta{k}" for k in range(SEATS)),
            *(f"dd_delta{k}" for k in range(SEATS)), "dd_regret", *(f"imm{k}" for k in range(SEATS)), "think_ms",
            "difficulty", "reasons", "options")


def bystander_null_room(seed: int, actors: int = 30, hands: int = 300) -> pd.DataFrame:
    """The burst statistic's null for its reading by strata (tests/audit/test_burst_strat.py): actors who each
    favour a partner P (+2, -1 to every non-partner at those tables) and no one else:
    bystanders b0, b1 sit only beside P, b2, b3 beside P and apart, b4, b5 only apart; seats at random."""
    rng = np.random.default_rng(seed)
    rows = []
    for a in range(actors):
        by = [f"b{a}_{k}" for k in range(6)]
        for h in range(hands):
            with_p = h % 3 == 0
            table = [f"P{a}", *rng.choice(by[:4], 2, replace=False)] if with_p else list(rng.choice(by[2:], 3,
                                                                                                     replace=False))
            for o, k in zip(table, rng.permutation([1, 2, 3])):
                rows.append((f"A{a}", o, h, int(k), rng.normal() + (2.0 if o == f"P{a}" else -1.0 if with_p else 0.0)))
    return pd.DataFrame(rows, columns=["actor", "other", "hand_id", "offset", "imm_marginal"])


def as_decision_rows(df: pd.DataFrame) -> pd.DataFrame:
    """A synthetic room in the decision rows' schema (the columns ``analyse`` writes, in its order and types): the
    columns the room lacks as empty texts or zeros, every decision weighing 1, its loss its regret."""
    from analyzer.analysis.decisions import analyse

    schema = analyse([])
    df = df.copy()
    for c in schema.columns:
        if c not in df.columns:
            df[c] = "" if schema[c].dtype == object else 0
    df["scale"] = 1.0
    df["loss"] = df["regret"]
    return df[list(schema.columns)].astype(schema.dtypes.to_dict())
