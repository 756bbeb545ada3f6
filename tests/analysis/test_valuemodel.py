"""The learned value model: its inputs read only the actor's information, the shipped weights load and predict
deterministically as a plain-Python reference network does, and training is reproducible from its seed."""

from __future__ import annotations

import numpy as np
import pytest

from analyzer.analysis.decisions import MODEL_UNTIL, analyse
from analyzer.analysis.valuemodel import INPUT_NAMES, Network, load_model, save_model
from analyzer.analysis.valuetrain import dataset, fit, positions
from analyzer.cards import FULL_DECK
from analyzer.kernels.value import EXTRA, MAX_OPTIONS, NF, NV, option_inputs
from analyzer.simulate.noise import noisy_room
from analyzer.strategy import features
from analyzer.validate import Checked
from analyzer.variants.base import HandCheck
from analyzer.variants.bieqi import State


def _records(hands: int = 8, seed: int = 3) -> list:
    return noisy_room(["softmax", "blunder", "rankcover", "no_tong"], players=4, hands_per_player=hands,
                      seed=seed).records


def _inputs(records: list) -> tuple[dict[str, np.ndarray], np.ndarray]:
    a = positions(records, 0).arrays()
    x = np.zeros((len(a["nopt"]), MAX_OPTIONS, NV))
    option_inputs(a["hands"], a["cov"], a["live"], a["table"], a["turn"], a["n"], a["opts"], a["nopt"], x)
    return a, x


def _reference_forward(net: Network, x: np.ndarray) -> np.ndarray:
    """The network written out one multiply-add at a time."""
    out = []
    for row in x.tolist():
        h = [(v - m) / s for v, m, s in zip(row, net.mean.tolist(), net.std.tolist())]
        for i, (w, b) in enumerate(zip(net.weights, net.biases)):
            nxt = [sum(h[r] * float(w[r, c]) for r in range(len(h))) + float(b[c]) for c in range(w.shape[1])]
            h = [max(v, 0.0) for v in nxt] if i < len(net.weights) - 1 else nxt
        out.append(h)
    return np.array(out)


def test_inputs_are_the_strategy_features_and_public_counts() -> None:
    recs = _records(2)
    a, x = _inputs(recs)
    # rebuild the first hand's decisions in Python and compare the strategy features and a few facts
    rec = recs[0]
    from analyzer.analysis.decisions import _Batch  # noqa: F401 (positions uses it; same order here)
    from analyzer.cards import parse_card
    from analyzer.variants.bieqi import COVER, VARIANT

    deal = VARIANT.deal_masks(rec, [])
    st = State(deal)
    d = 0
    for act in rec.actions:
        c = parse_card(act.card)
        action = COVER + c if act.kind == "cover" else c
        legal = st.legal_actions()
        if len(legal) > 1:
            acts, feats = features(st)
            assert acts == legal
            k = len(legal)
            assert np.allclose(x[d, :k, :NF], feats)
            actor = st.turn
            for j, opt in enumerate(legal):
                after = st.hands[actor] & ~(1 << (opt % COVER))
                assert x[d, j, NF + EXTRA.index("own_cards")] == pytest.approx(after.bit_count() / 13)
                assert x[d, j, NF + EXTRA.index("is_cover")] == float(opt >= COVER)
                for t in (1, 2, 3):
                    s = (actor + t) % 4
                    assert x[d, j, NF + EXTRA.index(f"cards{t}")] == pytest.approx(st.hands[s].bit_count() / 13)
                    assert x[d, j, NF + EXTRA.index(f"can_tong{t}")] == float(st.covered[s] == 0)
            assert not x[d, k:].any()
            d += 1
        st.push(action)


def test_inputs_do_not_read_hidden_cards() -> None:
    a, x = _inputs(_records(2))
    # move the other seats' cards around (same counts): the actor's inputs must not change
    rng = np.random.default_rng(0)
    hands, cov = a["hands"].copy(), a["cov"].copy()
    for d in range(len(hands)):
        me = a["turn"][d]
        others = [s for s in range(4) if s != me]
        pool = 0
        for s in others:
            pool |= int(hands[d, s]) | int(cov[d, s])
        cards = [c for c in range(52) if pool >> c & 1]
        rng.shuffle(cards)
        i = 0
        for s in others:
            for arr in (hands, cov):
                m = 0
                for _ in range(int(arr[d, s]).bit_count()):
                    m |= 1 << cards[i]
                    i += 1
                arr[d, s] = m
        assert pool & FULL_DECK == pool
    y = np.zeros_like(x)
    option_inputs(hands, cov, a["live"], a["table"], a["turn"], a["n"], a["opts"], a["nopt"], y)
    assert np.array_equal(x, y)


def test_shipped_model_loads_and_predicts_like_the_reference_network() -> None:
    model = load_model()
    assert model is load_model()  # loaded once
    rng = np.random.default_rng(1)
    for net in (model.level, model.option):
        xs = rng.normal(size=(5, len(net.mean))) * net.std + net.mean
        assert np.allclose(net(xs), _reference_forward(net, xs), atol=1e-9)
    a, _ = _inputs(_records(2))
    args = [a[k] for k in ("hands", "cov", "live", "table", "turn", "n", "opts", "nopt")]
    p1, p2 = model.predict(*args), model.predict(*args)
    assert np.array_equal(p1, p2)
    pad = np.arange(MAX_OPTIONS)[None, :] >= a["nopt"][:, None]
    assert not p1[pad].any() and np.isfinite(p1).all()


def test_model_rows_do_not_move_with_the_seed_before_the_endgame() -> None:
    items = [Checked("t", i + 1, r.hand_id, r, HandCheck()) for i, r in enumerate(_records(3))]
    f0 = analyse(items, seed=0, policy="model", reasons=False)
    f1 = analyse(items, seed=1, policy="model", reasons=False)
    early = (f0.action < MODEL_UNTIL).to_numpy()
    assert early.sum() > 20 and (~early).sum() > 5
    for col in ("regret", "loss", "scale", "delta0", "delta1", "delta2", "delta3", "dd_regret", "options"):
        assert f0[col][early].equals(f1[col][early]), col
    assert (f0.samples_used[early] == 0).all() and (f0.samples_used[~early] >= 8).all()
    # the model's own error stands in for the sampling error: regret_se > 0 off the best option
    off = early & (f0.regret > 0).to_numpy()
    assert (f0.regret_se[off] > 0).all() and (f0.regret >= 0).all()


def test_a_saved_model_with_other_inputs_is_refused(tmp_path) -> None:
    model = load_model()
    p = tmp_path / "m.npz"
    save_model(p, model)
    assert load_model(p).meta == model.meta
    with np.load(p) as z:
        data = {k: z[k] for k in z.files}
    data["inputs"] = np.array(INPUT_NAMES[:-1] + ("something else",))
    np.savez(p, **data)
    with pytest.raises(ValueError, match="m.npz"):
        load_model(p)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # 5 iterations: a tiny run
def test_training_is_reproducible_from_its_seed() -> None:
    data = dataset(_records(2), samples=4, seed=5)
    again = dataset(_records(2), samples=4, seed=5)
    assert np.array_equal(data.y, again.y) and np.array_equal(data.x, again.x)
    m1 = fit(data, seed=2, hidden=(8,), max_iter=5)
    m2 = fit(data, seed=2, hidden=(8,), max_iter=5)
    m3 = fit(data, seed=3, hidden=(8,), max_iter=5)
    for a, b in zip(m1.option.weights + m1.level.weights, m2.option.weights + m2.level.weights):
        assert np.array_equal(a, b)
    assert not np.array_equal(m1.option.weights[0], m3.option.weights[0])


def test_fused_network_rows_equal_the_two_steps() -> None:
    """predict's compiled path (network_rows) gives the networks the very floats option_inputs + network_inputs
    give, so the predictions are bit for bit those of predict_inputs."""
    from analyzer.kernels.value import N_IN, network_inputs, network_rows

    a, x = _inputs(_records(3, 5))
    want = network_inputs(x, a["nopt"])
    rows = int(a["nopt"].sum())
    got = (np.zeros((rows, N_IN)), np.zeros((len(a["nopt"]), NV + 1)), np.zeros(rows, np.int64))
    network_rows(a["hands"], a["cov"], a["live"], a["table"], a["turn"], a["n"], a["opts"], a["nopt"], *got)
    for w, g in zip(want, got):
        assert w.shape == g.shape and w.tobytes() == g.tobytes()
    model = load_model()
    rel = model.predict_inputs(x, a["nopt"])
    idx = (np.arange(4)[None, :] - a["turn"][:, None]) % 4
    pred = model.predict(a["hands"], a["cov"], a["live"], a["table"], a["turn"], a["n"], a["opts"], a["nopt"])
    assert pred.tobytes() == np.take_along_axis(rel, idx[:, None, :], axis=2).tobytes()
    assert np.abs(pred).sum() > 0


def test_a_rows_outputs_do_not_depend_on_the_rows_it_comes_with() -> None:
    """Each row's outputs are bit for bit the same evaluated alone, among a few, or among thousands (the networks
    multiply whole blocks of ROW_BLOCK rows): a decision's values do not depend on how the hands were batched."""
    net = load_model().option
    x = np.random.default_rng(4).normal(size=(3000, len(net.mean))) * net.std + net.mean
    whole = net(x)
    assert whole.shape[0] == 3000 and np.isfinite(whole).all()
    for lo, hi in ((0, 1), (5, 12), (100, 1000), (2990, 3000), (0, 2999)):
        assert np.array_equal(net(x[lo:hi]), whole[lo:hi])
    assert net(x[:0]).shape[0] == 0
