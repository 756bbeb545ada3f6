"""Train the learned value model (seeded) and validate it on rooms it never saw; writes the shipped weights.

Run: ``python -m benchmarks.train_value [--seed 11] [--hands 2400] [--samples 32] [--max-iter 40]
[--out analyzer/data/value_model.npz] [--data CACHE.npz] [--val-hands 60] [--ref-samples 320] [--quick]``.
The shipped weights are this command's output with its defaults; ``--no-train`` only validates the model at
``--out`` (the shipped one by default). Writes results/value_model.json.

Training positions: every decision of simulated rooms of mixed-skill players (``noisy_room`` with
the softmax, blunder, rankcover and no_tong noise models, levels across their ranges, and the
room simulator's skill mix with a colluding and a friend pair). Targets: each seat's mean final
score over ``--samples`` sampled deals of the actor's information set, played out after every
option by the strategy policy (the rollouts' values, with far less noise than an analysis run).

Validation, on positions of rooms held out from training (other seeds, the ``other_softmax``
players whose judgement is another heuristic's, careless random/rank-cover players, a room of
another skill mix and collusion style): the actor's normalised loss of every option (the scale
the per-player model reads) against a reference of ``--ref-samples`` deals, for the model and for
the default adaptive rollouts (8..32 deals, another seed), side by side.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from analyzer.analysis.valuemodel import save_model
from analyzer.analysis.valuetrain import Dataset, dataset, fit, own_losses, positions
from analyzer.simulate.noise import noisy_room
from analyzer.simulate.room import simulate
from benchmarks.bench_decisions import careless_records  # the same hands as the speed benchmark
from analyzer.variants.bieqi import Record

TRAIN_MODELS = ("softmax", "blunder", "rankcover", "no_tong")


def careless_hands(n: int, seed: int) -> list[Record]:
    """Hands where each seat plays at random or covers its lowest card (benchmarks/bench_decisions.py's)."""
    return careless_records(n, seed, prefix=f"c{seed}-", timed=False)


def train_records(hands: int, seed: int) -> list[Record]:
    """Mixed rooms for training: ~2/3 noisy-model players, ~1/3 the room simulator's population."""
    per = [TRAIN_MODELS[i % len(TRAIN_MODELS)] for i in range(40)]
    noisy = noisy_room(per, players=40, hands_per_player=max(1, hands * 2 // 3 * 4 // 40), seed=seed).records
    room = list(simulate(hands=hands - len(noisy), players=16, seed=seed, colluders=1, friends=1).records)
    return noisy + room


def compare(name: str, records: list[Record], model_path: Path, args: argparse.Namespace) -> list[list[object]]:
    """Model and default rollouts against a many-sample reference on the positions of ``records``."""
    from analyzer.analysis.valuemodel import load_model

    batch = positions(records, args.seed + 7)
    a = batch.arrays()
    ref = batch.run(args.ref_samples, 0, 0.0, "strategy", args.ref_samples)
    batch2 = positions(records, args.seed + 8)
    roll = batch2.run(8, 0, 0.0, "strategy", 32)
    model = load_model(model_path).predict(a["hands"], a["cov"], a["live"], a["table"], a["turn"], a["n"], a["opts"],
                                           a["nopt"])
    ar = np.arange(len(batch))
    lr = own_losses(ref.ev[ar, :, a["turn"]], a["nopt"])
    ch = a["chosen"]
    rows: list[list[object]] = []
    for label, ev in (("model", model), ("rollouts 8..32", roll.ev)):
        lx = own_losses(ev[ar, :, a["turn"]], a["nopt"])
        d = np.abs(lx[ar, ch] - lr[ar, ch])
        ok = np.isfinite(lx)
        allopt = np.where(ok, np.abs(np.where(ok, lx, 0) - np.where(ok, lr, 0)), 0).max(axis=1)
        same = (lx.argmin(axis=1) == lr.argmin(axis=1)).mean()
        # every seat's delta (the audit's per-seat columns): option minus best, in points
        best = lr.argmin(axis=1)
        dx = ev[ar, ch] - ev[ar, best]
        dr = ref.ev[ar, ch] - ref.ev[ar, best]
        rows.append([name, len(batch), label, float((d <= 0.25).mean()), float((d <= 0.1).mean()),
                     float((allopt <= 0.25).mean()), float(same), float(np.median(np.abs(dx - dr))),
                     float(np.corrcoef(dx.ravel(), dr.ravel())[0, 1])])
    return rows


def _shown_path(p: Path) -> str:
    """A path as the results file shows it: relative to the repository when inside it."""
    root = Path(__file__).resolve().parents[1]
    return str(p.resolve().relative_to(root)) if p.resolve().is_relative_to(root) else str(p)


def main(argv: list[str] | None = None) -> None:
    from benchmarks.results import Results, command_line

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--hands", type=int, default=2400, help="training hands")
    ap.add_argument("--samples", type=int, default=32, help="sampled deals per training target")
    ap.add_argument("--hidden", default="64,64")
    ap.add_argument("--max-iter", type=int, default=40)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "analyzer" / "data"
                    / "value_model.npz")
    ap.add_argument("--val-hands", type=int, default=60, help="hands of each validation room")
    ap.add_argument("--ref-samples", type=int, default=320)
    ap.add_argument("--no-train", action="store_true", help="only validate the model at --out")
    ap.add_argument("--data", type=Path, help="cache of the training set (.npz): read if it exists, else written")
    ap.add_argument("--data-only", action="store_true", help="build (and cache) the training set, do not fit")
    ap.add_argument("--quick", action="store_true", help="300 training hands, 16 samples, 20 validation hands")
    args = ap.parse_args(argv)
    if args.quick:
        args.hands, args.samples, args.val_hands, args.ref_samples = 300, 16, 20, 160
    res = Results("value_model", "The learned value model", "value-model", command_line("benchmarks.train_value", argv),
                  parameters={k: (_shown_path(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
                  about="The model's agreement with a many-sample reference on positions of rooms held out from "
                        "training, beside the default adaptive rollouts (8..32 deals): the chosen option's normalised "
                        "loss within 0.25 / 0.1 of the reference, every option's within 0.25, the same best option, "
                        "and each seat's delta against the reference's.")
    if not args.no_train:
        t = time.process_time()
        if args.data is not None and args.data.exists():
            with np.load(args.data) as z:
                data = Dataset(z["x"], z["nopt"], z["y"], z["chosen"])
        else:
            data = dataset(train_records(args.hands, args.seed), samples=args.samples, seed=args.seed)
            if args.data is not None:
                np.savez(args.data, x=data.x, nopt=data.nopt, y=data.y, chosen=data.chosen)
        res.figure("training_decisions", len(data), "decisions", f"training decisions ({int(data.nopt.sum())} options) "
                   f"from {args.hands} hands, {args.samples} deals each")
        res.figure("dataset_cpu_s", time.process_time() - t, "s", "building the training set: CPU")
        if args.data_only:
            return
        t = time.process_time()
        hidden = tuple(int(x) for x in args.hidden.split(","))
        model = fit(data, seed=args.seed, hidden=hidden, max_iter=args.max_iter,
                    meta=f"seed {args.seed}, {args.hands} hands, {args.samples} deals a target, hidden {hidden}")
        print(f"fit: {time.process_time() - t:.0f} s CPU", flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        save_model(args.out, model)
        res.figure("loss_se", model.loss_se, "", "held-out loss error of the fit (loss_se)")
    s = args.seed + 1000
    rooms = {
        "held-out mixed rooms": train_records(args.val_hands, s),
        "other_softmax players": noisy_room("other_softmax", players=12, hands_per_player=args.val_hands * 4 // 12,
                                            seed=s + 1).records,
        "careless players": careless_hands(args.val_hands, s + 2),
        "room, strong mix, block pair": list(simulate(hands=args.val_hands, players=12, seed=s + 3, colluders=1,
                                                       style="block", skill_mix="strong:0.5,expert:0.5").records),
    }
    rows = [r for name, recs in rooms.items() for r in compare(name, recs, args.out, args)]
    res.table("held_out", "Held-out rooms against the reference", ["room", "decisions", "evaluator",
              "chosen within 0.25", "chosen within 0.1", "every option within 0.25", "same best", "seat delta |diff| "
              "median (points)", "seat delta corr"], rows)
    res.write()


if __name__ == "__main__":
    main()
