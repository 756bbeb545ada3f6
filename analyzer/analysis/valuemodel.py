"""The learned evaluator: a small network that predicts every seat's expected final score after each option.

Distilled from the rollouts (:mod:`analyzer.kernels.rollout`): trained by ``benchmarks/train_value.py``
(seeded) on positions of simulated rooms whose targets are many-sample own-information rollouts, it
reads only the actor's information set (:mod:`analyzer.kernels.value`) and answers in microseconds,
with no sampling noise: the same decision gets the same values whatever the analysis seed.

Two scikit-learn ``MLPRegressor`` networks (ReLU), evaluated here in numpy from their weights:

- ``level``: per decision, the mean over its options of each seat's expected score;
- ``option``: per option, each seat's expected score minus that mean. Its outputs are centred
  again over the decision's options, so the options' values always average to the level.

Seats are relative to the actor (0 = actor, 1 = next, ...). The weights ship as package data
(``analyzer/data/value_model.npz``, plain arrays, no pickle) and load once.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from analyzer.kernels.features import FEATURES
from analyzer.kernels.value import EXTRA, MAX_OPTIONS, N_IN, NV, network_inputs, network_rows
from analyzer.rules import SEATS

MODEL_FILE = "value_model.npz"
#: Points per unit of the networks' targets (keeps the targets near 1 while training).
TARGET_SCALE = 10.0
INPUT_NAMES = (*FEATURES, *EXTRA)


#: Rows a matrix product of the networks takes at once. BLAS picks its kernels and the order of a row's sums by the
#: matrix's shape, so a row evaluated among 7 others and among 70,000 could differ in the last bits (a decision's
#: regret would depend on how the hands are cut into batches, ~1e-14, enough to change a report's bytes with
#: ``batch_hands``); always ROW_BLOCK rows, the last block padded, each row's outputs depend on that row alone.
ROW_BLOCK = 128


@dataclass(frozen=True)
class Network:
    """A ReLU multilayer perceptron: standardised inputs, hidden layers, a linear output layer."""

    mean: np.ndarray
    std: np.ndarray
    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """The outputs of the rows of ``x``, each the same whatever rows it comes with (see ROW_BLOCK)."""
        n = len(x)
        pad = (-n) % ROW_BLOCK
        if pad:  # zero rows to a whole number of blocks (their outputs are dropped)
            x = np.concatenate([x, np.zeros((pad, x.shape[1]), x.dtype)])
        h = (x - self.mean) / self.std
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            # the blocks as one stack: numpy runs the same (ROW_BLOCK x in) @ (in x out) product on each, in C
            h = (h.reshape(-1, ROW_BLOCK, h.shape[1]) @ w).reshape(-1, w.shape[1]) + b
            if i < last:
                np.maximum(h, 0.0, out=h)
        return h[:n]


@dataclass(frozen=True)
class ValueModel:
    """The two networks, what they were trained on (``meta``: a short description) and ``loss_se``:
    the typical error of an option's normalised loss (root mean square against held-out targets,
    in units of the decision's scale), which the rows report as ``regret_se`` = loss_se x scale."""

    level: Network
    option: Network
    meta: str
    loss_se: float

    def predict_inputs(self, x: np.ndarray, nopt: np.ndarray) -> np.ndarray:
        """Expected scores (D, 13, 4) by seat relative to the actor, from option inputs (D, 13, NV)."""
        return self._predict_rows(*network_inputs(x, nopt), nopt)

    def _predict_rows(self, opt_in: np.ndarray, lvl_in: np.ndarray, rows: np.ndarray, nopt: np.ndarray) -> np.ndarray:
        """Expected scores (D, 13, 4) by relative seat from the two networks' rows (``network_inputs``)."""
        d = len(nopt)
        out = np.zeros((d, MAX_OPTIONS, SEATS))
        if d == 0:
            return out
        level = self.level(lvl_in) * TARGET_SCALE  # on one BLAS thread inside decisions.analyse
        per = self.option(opt_in) * TARGET_SCALE
        mean = np.zeros((d, SEATS))
        np.add.at(mean, rows, per)
        mean /= nopt[:, None]
        mask = np.arange(MAX_OPTIONS)[None, :] < nopt[:, None]
        out[mask] = per - mean[rows] + level[rows]
        return out

    def predict(self, hands: np.ndarray, cov: np.ndarray, live: np.ndarray, table: np.ndarray, turn: np.ndarray,
                n: np.ndarray, opts: np.ndarray, nopt: np.ndarray) -> np.ndarray:
        """Expected scores (D, 13, 4) by absolute seat for the options of D decisions (kernel arrays)."""
        # the networks' rows straight from the positions (the same floats as option_inputs + network_inputs)
        opt_in = np.zeros((int(nopt.sum()), N_IN))
        lvl_in = np.zeros((len(nopt), NV + 1))
        rows = np.zeros(len(opt_in), np.int64)
        network_rows(hands, cov, live, table, turn, n, opts, nopt, opt_in, lvl_in, rows)
        rel = self._predict_rows(opt_in, lvl_in, rows, nopt)
        # relative seat t of a decision whose actor is a is absolute seat (a + t) % 4
        idx = (np.arange(SEATS)[None, :] - turn[:, None]) % SEATS
        return np.take_along_axis(rel, idx[:, None, :], axis=2)


def _network(data: dict[str, np.ndarray], name: str) -> Network:
    layers = int(data[f"{name}_layers"])
    return Network(data[f"{name}_mean"], data[f"{name}_std"],
                   tuple(data[f"{name}_w{i}"] for i in range(layers)), tuple(data[f"{name}_b{i}"] for i in range(layers)))


def load_model(path: str | Path | None = None) -> ValueModel:
    """The value model from ``path`` (default: the one shipped in the package). ValueError naming
    the file when it does not fit these inputs (a model trained on other features)."""
    if path is None:
        return _shipped()
    with np.load(path, allow_pickle=False) as z:
        data = {k: z[k] for k in z.files}
    names = tuple(str(x) for x in data["inputs"])
    if names != INPUT_NAMES or data["option_mean"].shape != (N_IN,):
        raise ValueError(f"{path}: value model inputs {names} do not match this version's {INPUT_NAMES}")
    return ValueModel(_network(data, "level"), _network(data, "option"), str(data["meta"]), float(data["loss_se"]))


@functools.lru_cache(maxsize=1)
def _shipped() -> ValueModel:
    with resources.as_file(resources.files("analyzer") / "data" / MODEL_FILE) as p:
        return load_model(p)


def save_model(path: str | Path, model: ValueModel) -> None:
    """Write the networks as plain arrays (np.savez, no pickle), whole or not at all."""
    data: dict[str, np.ndarray] = {"inputs": np.array(INPUT_NAMES), "meta": np.array(model.meta),
                                   "loss_se": np.array(model.loss_se)}
    for name, net in (("level", model.level), ("option", model.option)):
        data[f"{name}_layers"] = np.array(len(net.weights))
        data[f"{name}_mean"] = net.mean
        data[f"{name}_std"] = net.std
        for i, (w, b) in enumerate(zip(net.weights, net.biases)):
            data[f"{name}_w{i}"] = w.astype(np.float64)
            data[f"{name}_b{i}"] = b.astype(np.float64)
    path = Path(path)
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, **data)  # type: ignore[arg-type]
    tmp.replace(path)


def from_sklearn(reg: object, mean: np.ndarray, std: np.ndarray) -> Network:
    """A :class:`Network` from a fitted ``MLPRegressor`` (ReLU) and the standardisation it was trained after."""
    return Network(np.asarray(mean, float), np.asarray(std, float), tuple(np.asarray(w) for w in reg.coefs_),  # type: ignore[attr-defined]
                   tuple(np.asarray(b) for b in reg.intercepts_))  # type: ignore[attr-defined]
