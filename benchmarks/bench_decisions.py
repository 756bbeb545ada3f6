"""Speed and accuracy of the decision analysis: hands/s on one core, and agreement with a 10x-sample run.

Run: ``python -m benchmarks.bench_decisions [--hands 300] [--samples 16] [--max-samples 48] [--dd-samples 1]
[--policy model|strategy|fast]`` (writes results/decisions_<policy>.json).
Speed is CPU time of this process (the machine may be shared), after a warm-up that compiles.
Accuracy: the same hands analysed with 10x the samples (another seed) is the reference; reported are
the share of decisions whose regret is within 1 point and within 5 points of it, the same for the
normalised loss the per-player model reads (within 0.1 and 0.25 of the decision's spread), quantiles
of the difference, how often both runs name the same best option, and how often |difference| <= 2 regret_se.
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np

from analyzer.analysis.decisions import DEFAULT_DD_SAMPLES, DEFAULT_MAX_SAMPLES, DEFAULT_NOISE, \
    DEFAULT_POLICY, DEFAULT_SAMPLES, POLICIES, analyse
from analyzer.validate import Checked
from analyzer.variants.base import HandCheck
from analyzer.variants.bieqi import COVER, Record, State, make_record, random_deal
from benchmarks.results import Results, command_line


def careless_records(n: int, seed: int, prefix: str = "b", timed: bool = True) -> list[Record]:
    """Hands where each seat, chosen at random, plays at random or covers its lowest card (also the
    held-out "careless players" of benchmarks/train_value.py); ``timed``: one second a move."""
    rng = random.Random(seed)
    out = []
    for h in range(n):
        deal = random_deal(rng)
        st = State(deal)
        careful = [rng.random() < 0.5 for _ in range(4)]
        while not st.is_terminal():
            legal = st.legal_actions()
            st.push(min(legal, key=lambda x: x % 13) if careful[st.turn] and legal[0] >= COVER else rng.choice(legal))
        out.append(make_record(st, deal, hand_id=f"{prefix}{h}", players=["a", "b", "c", "d"],
                               ms=list(range(1000, 53000, 1000)) if timed else None))
    return out


def _mixed_hands(n: int, seed: int) -> list[Checked]:
    return [Checked("bench", h + 1, r.hand_id, r, HandCheck()) for h, r in enumerate(careless_records(n, seed))]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=300)
    ap.add_argument("--accuracy-hands", type=int, default=60)
    ap.add_argument("--samples", type=int, default=DEFAULT_SAMPLES)
    ap.add_argument("--max-samples", type=int, default=DEFAULT_MAX_SAMPLES)
    ap.add_argument("--dd-samples", type=int, default=DEFAULT_DD_SAMPLES)
    ap.add_argument("--noise", type=float, default=DEFAULT_NOISE)
    ap.add_argument("--policy", choices=list(POLICIES), default=DEFAULT_POLICY)
    args = ap.parse_args(argv)
    res = Results(f"decisions_{args.policy}", f"The decision analysis ({args.policy} policy)", "decisions",
                  command_line("benchmarks.bench_decisions", argv), parameters=dict(vars(args)),
                  about="Hands a CPU-second of the decision analysis on one core (after a warm-up that compiles), on "
                        "hands of careless players; its accuracy against the same hands analysed with 10x the samples "
                        "(another seed).")
    hands = _mixed_hands(args.hands, 1)
    kw = {"samples": args.samples, "max_samples": args.max_samples, "dd_samples": args.dd_samples,
          "noise": args.noise, "policy": args.policy}
    analyse(hands[:2], **kw)  # compile / load the cache
    for reasons in (True, False):
        t = time.process_time()
        rows = analyse(hands, seed=1, reasons=reasons, **kw)
        dt = time.process_time() - t
        said = "with reasons" if reasons else "without reasons"
        res.figure(f"hands_a_second_{'reasons' if reasons else 'plain'}", len(hands) / dt, "hands/CPU-s",
                   f"hands a CPU-second, {said}", goal=">= 150" if args.policy == "model" else None)
    res.figure("decisions_a_hand", len(rows) / len(hands), "", "decisions a hand")
    res.figure("deals_a_decision", float(rows.samples_used.mean()), "", "deals a decision (mean)")
    sub = hands[: args.accuracy_hands]
    a = analyse(sub, seed=2, reasons=False, **kw)
    # the reference is always rollouts with 10x the samples (what the learned model is measured against too)
    ref = analyse(sub, seed=3, reasons=False, samples=10 * args.samples, max_samples=10 * args.max_samples,
                  dd_samples=10 * args.dd_samples, noise=args.noise,
                  policy="strategy" if args.policy == "model" else args.policy)
    d = np.abs(a.regret.to_numpy() - ref.regret.to_numpy())
    dd = np.abs(a.dd_regret.to_numpy() - ref.dd_regret.to_numpy())
    covered = (d <= 2 * np.maximum(a.regret_se.to_numpy(), 1e-9)) | (d <= 0.5)
    dl = np.abs(a.loss.to_numpy() - ref.loss.to_numpy())
    n = f"of {len(a):,} decisions"
    res.figure("regret_within_1", float((d <= 1).mean()), n, "regret within 1 point of the 10x-sample reference")
    res.figure("regret_within_5", float((d <= 5).mean()), n, "regret within 5 points of the reference")
    res.figure("regret_diff_p90", float(np.quantile(d, 0.9)), "points", "|regret difference|, 90% quantile")
    res.figure("same_best", float((a.best == ref.best).mean()), n, "the same best option as the reference")
    res.figure("within_2_se", float(covered.mean()), n, "|regret difference| within 2 regret_se (or 0.5)")
    res.figure("loss_within_0.1", float((dl <= 0.1).mean()), n, "normalised loss within 0.1 of the reference")
    res.figure("loss_within_0.25", float((dl <= 0.25).mean()), n, "normalised loss within 0.25 of the reference")
    res.figure("dd_regret_within_1", float((dd <= 1).mean()), n, "true-deal regret within 1 point of the reference")
    res.figure("median_regret", float(np.median(ref.regret)), "points", "the reference's median regret")
    res.write()


if __name__ == "__main__":
    main()
