"""Per-decision evaluation: every decision with a choice, its options' expected scores for every seat, regret.

``analyse`` replays valid hands, asks each actor's information set (:mod:`analyzer.analysis.infoset`),
and lets the compiled kernel (:mod:`analyzer.kernels.rollout`) estimate, for each option, every seat's
expected final score twice: from the actor's own information (sampled hidden hands) and from the true
deal (double dummy). The exact immediate effect of the choice on each seat (no rollouts;
``immediate_effects``, batched in the kernel) is added. The rows are the table "Decision rows" of docs/design.md.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable
from itertools import chain
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from analyzer.analysis.infoset import InfoSet
from analyzer.analysis.options import OPTIONS_DTYPE, empty_options, options_column
from analyzer.analysis.valuemodel import load_model
from analyzer.cards import CARD_CODES, format_card
from analyzer.kernels.decide import CRC_TABLE, NO_MS, scan_decisions
from analyzer.kernels.rollout import MAX_OPTIONS, evaluate, immediate, new_cache, new_outputs, rule_table
from analyzer.kernels.tables import BEYOND_MASK, NEXT
from analyzer.rules import dead_cards, touched_cards  # covering c leaves BEYOND[c] unplayable for the hand
from analyzer.strategy import HONEST
from analyzer.validate import Checked
from analyzer.variants.bieqi import (
    COVER,
    DEFAULT_RULES,
    NAME,
    SEATS,
    VARIANT,
    Rules,
    State,
)

COLUMNS = ("hand_id", "table_id", "hand_seq", "action", "seat", "player", "p0", "p1", "p2", "p3", "kind",
           "n_options", "chosen", "best", "rank", "regret", "regret_se", "delta0", "delta1", "delta2", "delta3",
           "dd_delta0", "dd_delta1", "dd_delta2", "dd_delta3", "dd_regret", "imm0", "imm1", "imm2", "imm3", "think_ms",
           "difficulty", "samples_used", "scale", "loss", "reasons", "options")
#: Points: a decision is hard when the options' values differ by about this much (see ``difficulty``).
DIFFICULTY_SCALE = 5.0
# Defaults measured by benchmarks/bench_decisions.py and benchmarks/eval_players.py: a noiseless
# reference policy makes the double-dummy line exact in one rollout and spends the time on sampling
# what the actor cannot see; sampling is adaptive (at least DEFAULT_SAMPLES deals, more where the
# chosen option is close to the best, up to DEFAULT_MAX_SAMPLES).
DEFAULT_SAMPLES = 8
DEFAULT_MAX_SAMPLES = 32
DEFAULT_DD_SAMPLES = 1
DEFAULT_NOISE = 0.0
#: Stop sampling when the s.e. of best-minus-chosen is below max(TOL_POINTS, TOL_SPREAD x the
#: options' spread): precision where it changes the normalised loss, not on the rare 通 tails.
TOL_POINTS = 1.0
TOL_SPREAD = 0.25
#: Points: floor of a decision's scale (``scale``), so options that differ only by noise stay close.
SCALE_FLOOR = 2.0
_PAD = [0] * MAX_OPTIONS
#: How options are valued (the rollouts' reference policy): ``fast``, the kernel's cheap heuristic
#: (empty weights); ``strategy``, the strategy module's honest player (what the simulator's bots
#: weigh), over sampled deals; ``model``, the learned value model (:mod:`analyzer.analysis.valuemodel`,
#: distilled from ``strategy`` rollouts; the default) for the own-information values before the
#: endgame: deterministic (no seed movement) and fast. Under ``model`` the true-deal values are still
#: ``strategy`` rollouts, and the endgame (``MODEL_UNTIL``) and hands under other rules than the default
#: (which the model was not trained on) are rolled out.
POLICIES = {"fast": np.zeros(0), "strategy": HONEST, "model": HONEST}
#: Under ``model``, decisions from this action index on are rolled out (strategy policy): the endgame,
#: where one cover decides a 通 worth hundreds of points by exact counting the model does not do,
#: and where rollouts are short and few cards are hidden (benchmarks/eval_players.py, bench_decisions.py).
MODEL_UNTIL = 36
DEFAULT_POLICY = "model"
#: The audit's policy: the learned model, as for every command (about 4x cheaper a hand than rollouts
#: everywhere). The model's per-seat own-information values follow a 256-deal reference less closely than
#: rollouts (correlation 0.30-0.64 against 0.63-0.87), so the pair score leaves out the one signal built on them
#: alone (``marginal``, calibrate.SCORE_SIGNALS; docs/methods/signals.md); with that, the audit's detection on
#: model rows is that on rollout rows. ``analyzer audit --policy strategy`` rolls out everywhere.
AUDIT_POLICY = "model"


def immediate_effects(state: State, options: list[int], chosen: int) -> list[float]:
    """Per seat: the chosen option's immediate, exact effect on the true deal minus the mean over
    the options (0 for every seat when the choice is an average one, whatever the deal).

    A play feeds: the number of cards it makes live in each hand. A cover costs: minus the number
    of cards it makes unplayable in each hand (they will have to be covered), and for the actor
    also the covered card. No rollouts, so none of the deal's later luck. Cards, not points: a
    count has lighter tails, and the audit finds favour with it sooner (docs/methods/decisions.md).
    """
    dead = dead_cards(state.covered)
    hands, actor = state.hands, state.turn
    per = []
    for a in options:
        touched = touched_cards(a, dead)
        if a < COVER:
            per.append([(touched & h).bit_count() for h in hands])
        else:
            row = [-(touched & h).bit_count() for h in hands]
            row[actor] -= 1
            per.append(row)
    k = len(options)
    mean = [sum(r[s] for r in per) / k for s in range(SEATS)]
    return [per[chosen][s] - mean[s] for s in range(SEATS)]


@dataclass(frozen=True, slots=True)
class Values:
    """Estimates for the options of one decision; arrays are (options, 4 seats) and (options,)."""

    options: list[int]
    ev: np.ndarray
    ev_dd: np.ndarray
    se: np.ndarray  # standard error of (best minus option) for the actor, own information
    dd_se: np.ndarray
    relaxed: int  # samples that could not honour every cover proof

    def best(self, seat: int, *, dd: bool = False) -> int:
        """Index of the option best for ``seat`` (the first of equals)."""
        return int(np.argmax((self.ev_dd if dd else self.ev)[:, seat]))


@dataclass
class _Batch:
    """Decisions gathered for one kernel call, as flat lists (few allocations: this is the hot path)."""

    hands: list[int] = field(default_factory=list)  # 4 a decision
    cov: list[int] = field(default_factory=list)  # 4 a decision
    last7: list[bool] = field(default_factory=list)  # 4 a decision
    live: list[int] = field(default_factory=list)
    table: list[int] = field(default_factory=list)
    turn: list[int] = field(default_factory=list)
    n: list[int] = field(default_factory=list)
    opts: list[int] = field(default_factory=list)  # MAX_OPTIONS a decision, zero-padded
    nopt: list[int] = field(default_factory=list)
    hidden: list[int] = field(default_factory=list)
    slots: list[int] = field(default_factory=list)  # seat, cover, allowed, size per slot
    slot_off: list[int] = field(default_factory=lambda: [0])
    rule_idx: list[int] = field(default_factory=list)
    rules: dict[Rules, int] = field(default_factory=dict)
    seeds: list[int] = field(default_factory=list)
    chosen: list[int] = field(default_factory=list)  # index of the chosen option, -1 unknown

    def __len__(self) -> int:
        return len(self.turn)

    def add(self, state: State, info: InfoSet, options: list[int], seed: int, chosen: int = -1) -> None:
        self.hands.extend(state.hands)
        self.cov.extend(state.covered)
        self.last7.extend(state.last_seven)
        self.live.append(state.live)
        self.table.append(state.table)
        self.turn.append(state.turn)
        self.n.append(state.n)
        self.opts.extend(options)
        self.opts.extend(_PAD[len(options):])
        self.nopt.append(len(options))
        self.hidden.append(info.hidden)
        for x in info.slots:
            self.slots.extend(x)
        self.slot_off.append(len(self.slots) // 4)
        self.rule_idx.append(self.rules.setdefault(state.rules, len(self.rules)))
        self.seeds.append(seed)
        self.chosen.append(chosen)

    def arrays(self) -> dict[str, np.ndarray]:
        """The batch as the kernels' arrays: hands, cov (D, 4), last7, live, table, turn, n, opts (D, 13), nopt, chosen."""
        d = len(self)
        return {"hands": np.array(self.hands, np.int64).reshape(d, SEATS),
                "cov": np.array(self.cov, np.int64).reshape(d, SEATS),
                "last7": np.array(self.last7, np.bool_).reshape(d, SEATS), "live": np.array(self.live, np.int64),
                "table": np.array(self.table, np.int64), "turn": np.array(self.turn, np.int64),
                "n": np.array(self.n, np.int64), "opts": np.array(self.opts, np.int64).reshape(d, MAX_OPTIONS),
                "nopt": np.array(self.nopt, np.int64), "chosen": np.array(self.chosen, np.int64)}

    def run(self, samples: int, dd_samples: int, noise: float, policy: str = DEFAULT_POLICY,
            max_samples: int | None = None) -> Estimates:
        sl = np.array(self.slots, np.int64).reshape(-1, 4)
        a = self.arrays()
        a.update(hidden=np.array(self.hidden, np.int64), slot_off=np.array(self.slot_off, np.int64),
                 slot_seat=sl[:, 0].copy(), slot_cover=sl[:, 1].astype(np.bool_), slot_allowed=sl[:, 2].copy(),
                 slot_size=sl[:, 3].copy(), rule_idx=np.array(self.rule_idx, np.int64),
                 seeds=np.array(self.seeds, np.uint64))
        return _estimate(a, list(self.rules), samples, dd_samples, noise, policy, max_samples)


def _estimate(a: dict[str, np.ndarray], rule_sets: list[Rules], samples: int, dd_samples: int, noise: float,
              policy: str, max_samples: int | None) -> Estimates:
    """The kernels' estimates for D decisions given as arrays (:meth:`_Batch.arrays`' and the information sets'
    slots, rule indices into ``rule_sets`` and seeds; :func:`_scan` makes them all at once)."""
    d = len(a["turn"])
    ev, ev_dd, se, dd_se, relaxed, used, ref = new_outputs(d)
    rules = rule_table(rule_sets)
    rule_idx = a["rule_idx"]
    learned = np.zeros(d, np.bool_)
    if policy == "model":  # the learned values where the model knows the rules, before the endgame
        default = rule_sets.index(DEFAULT_RULES) if DEFAULT_RULES in rule_sets else -1
        learned = (rule_idx == default) & (a["n"] < MODEL_UNTIL)
    # the kernel skips own-information sampling where samples_of is 0 (the model answers there)
    samples_of = np.where(learned, 0, samples).astype(np.int64)
    evaluate(a["hands"], a["cov"], a["last7"], a["live"], a["table"], a["turn"], a["n"], a["opts"], a["nopt"],
             a["chosen"], a["hidden"], a["slot_off"], a["slot_seat"], a["slot_cover"], a["slot_allowed"],
             a["slot_size"], rule_idx, rules,
             a["seeds"], samples_of, samples if max_samples is None else max_samples,
             TOL_POINTS, TOL_SPREAD, dd_samples, float(noise), POLICIES[policy], HONEST, ev, ev_dd, se, dd_se,
             relaxed, used, ref, *new_cache())
    if learned.any():
        idx = np.flatnonzero(learned)
        model = load_model()
        ev[idx] = model.predict(a["hands"][idx], a["cov"][idx], a["live"][idx], a["table"][idx], a["turn"][idx],
                                a["n"][idx], a["opts"][idx], a["nopt"][idx])
        # no sampling error, but the model's own: its typical error in units of the decision's scale
        own = ev[idx, :, a["turn"][idx]]
        own = np.where(np.arange(MAX_OPTIONS)[None, :] < a["nopt"][idx, None], own, -np.inf)
        err = model.loss_se * decision_scale(own)[:, None]
        se[idx] = np.where(np.isfinite(own) & (own < own.max(axis=1, keepdims=True)), err, 0.0)
    imm = np.zeros((d, SEATS))
    immediate(a["hands"], a["cov"], a["turn"], a["opts"], a["nopt"], np.maximum(a["chosen"], 0),
              BEYOND_MASK, NEXT, imm)
    return Estimates(a["opts"], a["nopt"], a["turn"], ev, ev_dd, se, dd_se, relaxed, used, ref, imm)


@dataclass(frozen=True, slots=True)
class Estimates:
    """The kernel's answer for a batch: options (D, 13) padded, their count, the actor, and the estimates."""

    opts: np.ndarray
    nopt: np.ndarray
    actor: np.ndarray
    ev: np.ndarray
    ev_dd: np.ndarray
    se: np.ndarray
    dd_se: np.ndarray
    relaxed: np.ndarray
    used: np.ndarray
    ref: np.ndarray  # (D, 13) each option's value under the reference policy (strategy features, HONEST)
    imm: np.ndarray  # (D, 4) immediate effects of the chosen option (kernels.rollout.immediate)

    def values(self, i: int) -> Values:
        k = int(self.nopt[i])
        return Values([int(x) for x in self.opts[i, :k]], self.ev[i, :k], self.ev_dd[i, :k], self.se[i, :k],
                      self.dd_se[i, :k], int(self.relaxed[i]))

    def actor_values(self, *, dd: bool = False) -> np.ndarray:
        """(D, 13) the actor's expected score per option, -inf in the padding."""
        ev = self.ev_dd if dd else self.ev
        out = ev[np.arange(len(self.actor)), :, self.actor]
        out[np.arange(MAX_OPTIONS)[None, :] >= self.nopt[:, None]] = -np.inf
        return out


def decision_seed(seed: int, hand_id: str, action: int) -> int:
    """A decision's random stream: the run's seed and the decision itself, not its place in the batch."""
    return (seed & 0xFFFFFFFF) << 32 | zlib.crc32(f"{hand_id}\x00{action}".encode())


def evaluate_position(state: State, info: InfoSet | None = None, *, samples: int = DEFAULT_SAMPLES,
                      dd_samples: int = DEFAULT_DD_SAMPLES, seed: int = 0, noise: float = DEFAULT_NOISE,
                      policy: str = DEFAULT_POLICY, max_samples: int | None = None) -> Values:
    """Estimates for the options of the seat to act at ``state``; ``info`` defaults to a view that
    knows no cover proofs (what a position built by hand, without its history, can offer)."""
    if info is None:
        info = InfoSet.observe(state, state.turn, [[] for _ in range(SEATS)])
    batch = _Batch()
    batch.add(state, info, state.legal_actions(), decision_seed(seed, "", state.n))
    return batch.run(samples, dd_samples, noise, policy, max_samples).values(0)


def difficulty(values: np.ndarray) -> np.ndarray:
    """Per row of option values (-inf padding): the points a player choosing by a soft preference
    (temperature ``DIFFICULTY_SCALE``) loses. 0 when one option is far best or all are equal; largest
    when options are close but differ."""
    gaps = values.max(axis=1, keepdims=True) - values
    w = np.where(np.isfinite(values), np.exp(-np.where(np.isfinite(gaps), gaps, 0.0) / DIFFICULTY_SCALE), 0.0)
    return (w * np.where(np.isfinite(gaps), gaps, 0.0)).sum(axis=1) / w.sum(axis=1)


def decision_scale(values: np.ndarray) -> np.ndarray:
    """Per row of option values (-inf padding): the decision's own scale in points, the standard
    deviation of its options' values with a floor (SCALE_FLOOR). Losses divided by it are comparable
    across decisions: a rare 通 worth hundreds of points does not outweigh a hundred ordinary choices."""
    ok = np.isfinite(values)
    v = np.where(ok, values, 0.0)
    k = ok.sum(axis=1)
    mean = v.sum(axis=1) / k
    var = (np.where(ok, v - mean[:, None], 0.0) ** 2).sum(axis=1) / k
    return np.sqrt(var + SCALE_FLOOR ** 2)


def _reasons(state: State, action: int, best: int, regret: float, se: float) -> str:
    """Readable reasons, led by what the rollouts say the choice cost; the strategy features explain
    the choices that clearly cost something (explaining sampling noise would mislead)."""
    from analyzer.strategy import explain

    verb = "covered" if action >= COVER else "played"
    if action == best:
        return f"{verb} {format_card(action % COVER)}: the sensible choice"
    head = (f"{verb} {format_card(action % COVER)} rather than {format_card(best % COVER)} "
            f"(rollouts: {regret:.1f} ± {se:.1f} points worse)")
    if regret < max(1.0, 2.0 * se):
        return head
    return "; ".join([head] + [r for r in explain(state, action, top=2) if " rather than " not in r])


_CODES = [format_card(c) for c in range(52)]


@dataclass(slots=True)
class _Rows:
    """What a batch's rows need besides the estimates: its hands (records, places in the input) and, per
    decision, the index of its hand among them, the action index, the chosen option's index and the think time."""

    records: list[Any]
    seqs: np.ndarray
    hand: np.ndarray
    action: np.ndarray
    chosen: np.ndarray
    think: np.ndarray


def _frame(rows: _Rows, est: Estimates, reasons: bool) -> pd.DataFrame:
    """The rows of one batch, computed a column at a time (the hands' texts taken by index, never row by row)."""
    d = len(rows.hand)
    ar = np.arange(d)
    seat = est.actor
    ch = rows.chosen
    own, own_dd = est.actor_values(), est.actor_values(dd=True)
    best, best_dd = own.argmax(axis=1), own_dd.argmax(axis=1)
    regret = own[ar, best] - own[ar, ch]
    scale = decision_scale(own)
    chosen_act, best_act = est.opts[ar, ch], est.opts[ar, best]
    kinds = _KIND_OBJECTS[(chosen_act >= COVER).astype(np.intp)]
    recs = rows.records
    hand = rows.hand
    ids = np.array([r.hand_id for r in recs] + [None], dtype=object)[:-1]  # (the None keeps the array 1-D)
    tables = np.array([r.table_id or "" for r in recs] + [None], dtype=object)[:-1]
    players = np.empty((len(recs), SEATS), dtype=object)
    for k in range(SEATS):
        players[:, k] = [r.players[k] for r in recs]
    cols: dict[str, Any] = {
        "hand_id": ids[hand], "table_id": tables[hand], "hand_seq": rows.seqs[hand], "action": rows.action,
        "seat": seat, "player": players[hand, seat], **{f"p{k}": players[hand, k] for k in range(SEATS)},
        "kind": kinds, "n_options": est.nopt,
        "chosen": _CODE_OBJECTS[chosen_act % COVER], "best": _CODE_OBJECTS[best_act % COVER],
        "rank": (own > own[ar, ch][:, None]).sum(axis=1), "regret": regret, "regret_se": est.se[ar, ch],
        **{f"delta{k}": est.ev[ar, ch, k] - est.ev[ar, best, k] for k in range(SEATS)},
        **{f"dd_delta{k}": est.ev_dd[ar, ch, k] - est.ev_dd[ar, best_dd, k] for k in range(SEATS)},
        "dd_regret": own_dd[ar, best_dd] - own_dd[ar, ch],
        **{f"imm{k}": est.imm[:, k] for k in range(SEATS)}, "think_ms": rows.think,
        "difficulty": difficulty(own), "samples_used": est.used, "scale": scale,
        "loss": regret / scale, "reasons": [""] * d,
    }
    # only the real options go to the column (a decision has ~4 of its 13 padded slots)
    real = np.arange(MAX_OPTIONS)[None, :] < est.nopt[:, None]
    # both losses on the own-information scale, so the double-dummy view is in the same units
    loss_r = ((own[ar, best][:, None] - own) / scale[:, None])[real]
    loss_d = ((own_dd[ar, best_dd][:, None] - own_dd) / scale[:, None])[real]
    # the reference policy's view, normalised the same way by its own spread
    ref = np.where(np.isfinite(own), est.ref, -np.inf)
    loss_f = ((ref.max(axis=1, keepdims=True) - ref) / decision_scale(ref)[:, None])[real]
    cols["options"] = options_column(chosen_act >= COVER, est.nopt, est.opts[real] % COVER, est.ev[real],
                                     est.ev_dd[real], loss_r, loss_d, loss_f)
    if reasons:
        cols["reasons"] = _all_reasons([recs[x] for x in hand.tolist()], rows.action.tolist(), chosen_act.tolist(),
                                       best_act.tolist(), regret.tolist(), est.se[ar, ch].tolist())
    # the texts as object columns from the start (the frame's final types, ``_analyse``): pandas would infer its
    # string type for them and the final ``astype`` convert them back, copying every text twice
    for c in _TEXT_COLUMNS:
        cols[c] = pd.Series(np.asarray(cols[c], dtype=object) if isinstance(cols[c], np.ndarray) else cols[c],
                            dtype=object)
    return pd.DataFrame(cols, columns=list(COLUMNS))


_TEXT_COLUMNS = ("hand_id", "table_id", "player", "p0", "p1", "p2", "p3", "kind", "chosen", "best", "reasons")
#: The 52 canonical codes as an object array, indexed by card (one string object each, shared by every row).
_CODE_OBJECTS = np.array(_CODES, dtype=object)
_KIND_OBJECTS = np.array(["play", "cover"], dtype=object)


def _all_reasons(records: list[Any], actions: list[int], chosen: list[int], best: list[int], regret: list[float],
                 se: list[float]) -> list[str]:
    """Reasons for each row (its hand's record and action index); the positions are rebuilt by replaying
    each hand once, in order."""
    out = []
    state: State | None = None
    rec: Any = None
    for r, i, c, b, g, e in zip(records, actions, chosen, best, regret, se):
        if r is not rec or state is None or state.n > i:
            rec = r
            deal = VARIANT.deal_masks(rec, [])
            assert deal is not None
            state = State(deal, rec.rules or DEFAULT_RULES)
        while state.n < i:
            a = rec.actions[state.n]
            state.push(_ACTION_OF[a.kind][a.card])
        out.append(_reasons(state, c, b, g, e))
    return out


def analyse(items: Iterable[Checked], *, samples: int = DEFAULT_SAMPLES, dd_samples: int = DEFAULT_DD_SAMPLES,
            seed: int = 0, noise: float = DEFAULT_NOISE, policy: str = DEFAULT_POLICY, reasons: bool = True,
            max_samples: int | None = DEFAULT_MAX_SAMPLES, batch_decisions: int = 4096,
            on_progress: Callable[[int], None] | None = None) -> pd.DataFrame:
    """One row per decision with two or more legal options, over valid standard-game hands (see :func:`_analyse`).

    numpy's BLAS runs on one thread meanwhile: the analysis already uses a process per core, and idle BLAS
    threads spinning beside it cost ~25% more CPU a hand on a quiet machine (benchmarks/bench_decisions.py).
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        return _analyse(items, samples=samples, dd_samples=dd_samples, seed=seed, noise=noise, policy=policy,
                        reasons=reasons, max_samples=max_samples, batch_decisions=batch_decisions,
                        on_progress=on_progress)


def _analyse(items: Iterable[Checked], *, samples: int, dd_samples: int, seed: int, noise: float, policy: str,
             reasons: bool, max_samples: int | None, batch_decisions: int,
             on_progress: Callable[[int], None] | None) -> pd.DataFrame:
    """One row per decision with two or more legal options, over valid standard-game hands.

    ``items``: from :func:`analyzer.validate.generate_valid`; hands of other variants are skipped.
    At least ``samples`` hidden-hand deals per decision (own information), more where the chosen
    option is close to the best, up to ``max_samples`` (None: exactly ``samples``); ``dd_samples``
    rollouts on the true deal; ``policy`` plays the rollouts (see ``POLICIES``). The same ``seed`` gives the same frame
    whatever the batching.
    """
    frames: list[pd.DataFrame] = []
    waiting: list[_Hand] = []  # hands read, not yet analysed (a batch closes after the hand that fills it)
    counted = 0  # of them, the first ``counted`` have their number of decisions
    gone = 0

    def run(final: bool) -> None:
        """Analyse the batches of ``batch_decisions`` decisions or more closed so far (with ``final``, the rest too)."""
        nonlocal waiting, counted, gone
        _count(waiting[counted:], seed, policy)
        counted = len(waiting)
        ends, acc = [], 0
        for x, h in enumerate(waiting):
            acc += h.decisions
            if acc >= batch_decisions:  # the batch closes after this hand (as it always has: whole hands)
                ends.append(x + 1)
                acc = 0
        if final and (not ends or ends[-1] < len(waiting)):
            ends.append(len(waiting))
        start = 0
        for end in ends:
            group = waiting[start:end]
            if sum(h.decisions for h in group):
                a, rule_sets, rows = _scan(group, seed, policy)
                frames.append(_frame(rows, _estimate(a, rule_sets, samples, dd_samples, noise, policy, max_samples),
                                     reasons))
            gone += len(group)
            if on_progress is not None and group:
                on_progress(gone)
            start = end
        waiting = waiting[start:]
        counted -= start

    for seq, item in enumerate(items):
        rec = item.record
        if type(rec).__struct_config__.tag != NAME:
            continue
        waiting.append(_hand(rec, seq))
        if len(waiting) - counted >= _GATHER:
            run(False)
    run(True)
    frame = (pd.concat(frames, ignore_index=True) if frames
             else pd.DataFrame({c: empty_options() if c == "options" else [] for c in COLUMNS}))
    ints = ["hand_seq", "action", "seat", "n_options", "rank", "samples_used"]
    floats = [c for c in COLUMNS if c.startswith(("delta", "dd_", "regret", "imm"))
              or c in ("think_ms", "difficulty", "scale", "loss")]
    strs = [c for c in COLUMNS if c not in ints and c not in floats and c != "options"]
    return frame.astype({**{c: np.int64 for c in ints}, **{c: np.float64 for c in floats},
                         **{c: object for c in strs}, "options": OPTIONS_DTYPE})


#: Hands read before the compiled scan counts their decisions (batches still close exactly where they always did).
_GATHER = 128
#: Valid hands' card codes -> card and engine action (what ``parse_card`` reads, without a call per code).
_CARD_OF = {k: v for k, v in CARD_CODES.items() if v < COVER}
_ACTION_OF = {"play": _CARD_OF, "cover": {k: COVER + v for k, v in _CARD_OF.items()}}


@dataclass(slots=True)
class _Hand:
    """A valid hand read once for :func:`scan_decisions`: its record, place, deal, actions and times as ints."""

    record: Any
    seq: int
    cards: list[int]  # 52: 13 by seat
    actions: list[int]
    ms: list[int]
    decisions: int = -1


def _hand(rec: Any, seq: int) -> _Hand:
    acts = rec.actions
    return _Hand(rec, seq, [_CARD_OF[c] for codes in rec.deal for c in codes],
                 [_ACTION_OF[a.kind][a.card] for a in acts], [NO_MS if a.ms is None else a.ms for a in acts])


def _inputs(group: list[_Hand], seed: int, policy: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                                  np.ndarray, np.int64, np.ndarray, np.uint64,
                                                                  np.ndarray]:
    """The arguments of :func:`scan_decisions` that describe the hands (deal .. seed_hi)."""
    n = len(group)
    deal = (np.int64(1) << np.array([h.cards for h in group], np.int64).reshape(n, SEATS, -1)).sum(axis=2)
    off = np.zeros(n + 1, np.int64)
    np.cumsum([len(h.actions) for h in group], out=off[1:])
    acts = np.fromiter(chain.from_iterable(h.actions for h in group), np.int64, int(off[-1]))
    ms = np.fromiter(chain.from_iterable(h.ms for h in group), np.int64, int(off[-1]))
    # the learned model reads no sampling slots: the information sets' proofs only where rollouts need them
    sampled = np.array([policy != "model" or (h.record.rules or DEFAULT_RULES) != DEFAULT_RULES for h in group],
                       np.bool_)
    prefix = np.array([zlib.crc32(f"{h.record.hand_id}\x00".encode()) for h in group], np.int64)
    return deal, acts, off, ms, sampled, np.int64(MODEL_UNTIL), prefix, np.uint64((seed & 0xFFFFFFFF) << 32), CRC_TABLE


def _count(group: list[_Hand], seed: int, policy: str) -> None:
    """Each hand's number of decisions (the compiled scan's counting pass)."""
    if not group:
        return
    per = np.zeros(len(group), np.int64)
    _, _, bad = scan_decisions(*_inputs(group, seed, policy), per, False, *_NO_ROWS)
    if bad >= 0:
        h = group[bad]
        raise ValueError(f"hand {h.record.hand_id!r}: an action is not legal (decisions.analyse reads valid hands only)")
    for h, k in zip(group, per.tolist()):
        h.decisions = k


def _scan(group: list[_Hand], seed: int, policy: str) -> tuple[dict[str, np.ndarray], list[Rules], _Rows]:
    """The batch's decisions as :func:`_estimate`'s arrays, the rule sets they index, and what the rows need."""
    d = sum(h.decisions for h in group)
    per = np.zeros(len(group), np.int64)
    a: dict[str, np.ndarray] = {
        "hand": np.zeros(d, np.int64), "action": np.zeros(d, np.int64), "hands": np.zeros((d, SEATS), np.int64),
        "cov": np.zeros((d, SEATS), np.int64), "last7": np.zeros((d, SEATS), np.bool_), "live": np.zeros(d, np.int64),
        "table": np.zeros(d, np.int64), "turn": np.zeros(d, np.int64), "opts": np.zeros((d, MAX_OPTIONS), np.int64),
        "nopt": np.zeros(d, np.int64), "chosen": np.zeros(d, np.int64), "think": np.zeros(d),
        "seeds": np.zeros(d, np.uint64), "hidden": np.zeros(d, np.int64), "slot_off": np.zeros(d + 1, np.int64)}
    inputs = _inputs(group, seed, policy)
    _, ns, _ = scan_decisions(*inputs, per, False, *_NO_ROWS)  # the slots' count, to size them
    slots = {"slot_seat": np.zeros(ns, np.int64), "slot_cover": np.zeros(ns, np.bool_),
             "slot_allowed": np.zeros(ns, np.int64), "slot_size": np.zeros(ns, np.int64)}
    scan_decisions(*inputs, per, True, a["hand"], a["action"], a["hands"], a["cov"], a["last7"], a["live"], a["table"],
                   a["turn"], a["opts"], a["nopt"], a["chosen"], a["think"], a["seeds"], a["hidden"], a["slot_off"],
                   slots["slot_seat"], slots["slot_cover"], slots["slot_allowed"], slots["slot_size"])
    a.update(slots)
    a["n"] = a["action"]  # a decision's action index is the number of actions before it
    # rule sets numbered in order of first appearance among the hands with decisions (as _Batch.add does)
    index: dict[Rules, int] = {}
    hand_rule = np.array([index.setdefault(h.record.rules or DEFAULT_RULES, len(index)) if h.decisions else -1
                          for h in group], np.int64)
    a["rule_idx"] = hand_rule[a["hand"]]
    rows = _Rows([h.record for h in group], np.array([h.seq for h in group], np.int64), a["hand"], a["action"],
                 a["chosen"], a["think"])
    return a, list(index), rows


#: Empty outputs for :func:`scan_decisions`' counting pass (``fill`` False writes none of them).
_NO_ROWS = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, SEATS), np.int64),
            np.zeros((0, SEATS), np.int64), np.zeros((0, SEATS), np.bool_), np.zeros(0, np.int64),
            np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, MAX_OPTIONS), np.int64), np.zeros(0, np.int64),
            np.zeros(0, np.int64), np.zeros(0), np.zeros(0, np.uint64), np.zeros(0, np.int64), np.zeros(1, np.int64),
            np.zeros(0, np.int64), np.zeros(0, np.bool_), np.zeros(0, np.int64), np.zeros(0, np.int64))
