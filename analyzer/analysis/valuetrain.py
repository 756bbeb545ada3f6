"""Training the learned value model: positions from records, many-sample rollout targets, two seeded MLP fits.

Used by ``benchmarks/train_value.py`` (which writes the shipped weights) and by the tests (a tiny,
reproducible run). Every random choice takes the seed: the rollouts' deals (through each decision's
seed), scikit-learn's initialisation and shuffling.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from analyzer.analysis.decisions import _Batch, decision_scale, decision_seed
from analyzer.analysis.infoset import Observer
from analyzer.analysis.valuemodel import TARGET_SCALE, Network, ValueModel, from_sklearn
from analyzer.cards import parse_card
from analyzer.kernels.value import MAX_OPTIONS, NV, network_inputs, option_inputs
from analyzer.rules import SEATS
from analyzer.variants.bieqi import COVER, DEFAULT_RULES, NAME, VARIANT, Record


@dataclass(frozen=True)
class Dataset:
    """Option inputs (D, 13, NV), option counts (D,), targets (D, 13, 4) by seat relative to the actor."""

    x: np.ndarray
    nopt: np.ndarray
    y: np.ndarray
    chosen: np.ndarray

    def __len__(self) -> int:
        return len(self.nopt)

    def take(self, idx: np.ndarray) -> Dataset:
        return Dataset(self.x[idx], self.nopt[idx], self.y[idx], self.chosen[idx])

    @staticmethod
    def concat(parts: list[Dataset]) -> Dataset:
        return Dataset(*(np.concatenate([getattr(p, f) for p in parts]) for f in ("x", "nopt", "y", "chosen")))


def positions(records: Iterable[Record], seed: int) -> _Batch:
    """Every decision with a choice in standard-rule hands of ``records``, as one kernel batch."""
    batch = _Batch()
    for rec in records:
        if type(rec).__struct_config__.tag != NAME or (rec.rules or DEFAULT_RULES) != DEFAULT_RULES:
            continue
        deal = VARIANT.deal_masks(rec, [])
        if deal is None:
            continue
        obs = Observer(deal, DEFAULT_RULES)
        for i, a in enumerate(rec.actions):
            c = parse_card(a.card)
            act = COVER + c if a.kind == "cover" else c
            legal = obs.state.legal_actions()
            if len(legal) > 1:
                batch.add(obs.state, obs.info(), legal, decision_seed(seed, rec.hand_id, i), legal.index(act))
            obs.push(act)
    return batch


def dataset(records: Iterable[Record], *, samples: int, seed: int, policy: str = "strategy") -> Dataset:
    """Positions of ``records`` with targets: each seat's mean final score over ``samples`` sampled
    deals of the actor's information set, each played out after every option (the rollouts' values)."""
    batch = positions(records, seed)
    a = batch.arrays()
    est = batch.run(samples, 0, 0.0, policy, samples)
    x = np.zeros((len(batch), MAX_OPTIONS, NV))
    option_inputs(a["hands"], a["cov"], a["live"], a["table"], a["turn"], a["n"], a["opts"], a["nopt"], x)
    idx = (np.arange(SEATS)[None, :] + a["turn"][:, None]) % SEATS  # relative seat t -> absolute seat
    y = np.take_along_axis(est.ev, idx[:, None, :], axis=2)
    return Dataset(x, a["nopt"], y, a["chosen"])


def _fit_net(x: np.ndarray, y: np.ndarray, hidden: tuple[int, ...], seed: int, max_iter: int,
             alpha: float) -> Network:
    from sklearn.neural_network import MLPRegressor

    mean = x.mean(axis=0)
    std = x.std(axis=0)
    std = np.where(std > 1e-9, std, 1.0)  # constant inputs (features no decision here uses) pass as 0
    reg = MLPRegressor(hidden_layer_sizes=hidden, activation="relu", alpha=alpha, batch_size=min(512, max(1, int(len(x) * 0.9))),
                       learning_rate_init=1e-3, max_iter=max_iter, early_stopping=True, validation_fraction=0.1,
                       n_iter_no_change=6, random_state=seed)
    reg.fit((x - mean) / std, y / TARGET_SCALE)
    return from_sklearn(reg, mean, std)


def own_losses(ev_actor: np.ndarray, nopt: np.ndarray) -> np.ndarray:
    """(D, 13) the actor's normalised loss of each option (inf padding), as the decision rows' ``loss``."""
    v = np.where(np.arange(MAX_OPTIONS)[None, :] < nopt[:, None], ev_actor, -np.inf)
    return (v.max(axis=1, keepdims=True) - v) / decision_scale(v)[:, None]


def fit(data: Dataset, *, seed: int, hidden: tuple[int, ...] = (64, 64), max_iter: int = 60,
        alpha: float = 1e-4, meta: str = "", holdout: float = 0.1) -> ValueModel:
    """The level network (per decision: mean over options) and the option network (per option:
    minus that mean), each a seeded ``MLPRegressor`` fit on all but a ``holdout`` share of the
    decisions, on which the model's loss error (``loss_se``) is then measured."""
    perm = np.random.default_rng(seed).permutation(len(data))
    cut = int(round(len(data) * holdout))
    test, train = data.take(np.sort(perm[:cut])), data.take(np.sort(perm[cut:]))
    opt_in, lvl_in, rows = network_inputs(train.x, train.nopt)
    mask = np.arange(MAX_OPTIONS)[None, :] < train.nopt[:, None]
    level_y = (train.y * mask[:, :, None]).sum(axis=1) / train.nopt[:, None]
    opt_y = train.y[mask] - level_y[rows]
    level = _fit_net(lvl_in, level_y, hidden, seed, max_iter, alpha)
    option = _fit_net(opt_in, opt_y, hidden, seed + 1, max_iter, alpha)
    model = ValueModel(level, option, meta, 0.0)
    if len(test) == 0:
        return model
    pred = model.predict_inputs(test.x, test.nopt)
    lp, lt = own_losses(pred[:, :, 0], test.nopt), own_losses(test.y[:, :, 0], test.nopt)
    ok = np.isfinite(lt)
    return ValueModel(level, option, meta, float(np.sqrt(np.mean((lp[ok] - lt[ok]) ** 2))))
