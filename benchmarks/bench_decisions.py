"""Speed and accuracy of the decision analysis: hands/s on one core, and agreement with a 10x-sample run.

Run: ``python3 benchmarks/bench_decisions.py [--hands 300] [--samples 16] [--max-samples 48] [--dd-samples 1]
[--policy strategy|fast]``.
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hands", type=int, default=300)
    ap.add_argument("--accuracy-hands", type=int, default=60)
    ap.add_argument("--samples", type=int, default=DEFAULT_SAMPLES)
    ap.add_argument("--max-samples", type=int, default=DEFAULT_MAX_SAMPLES)
    ap.add_argument("--dd-samples", type=int, default=DEFAULT_DD_SAMPLES)
    ap.add_argument("--noise", type=float, default=DEFAULT_NOISE)
    ap.add_argument("--policy", choices=list(POLICIES), default=DEFAULT_POLICY)
    args = ap.parse_args()
    hands = _mixed_hands(args.hands, 1)
    kw = {"samples": args.samples, "max_samples": args.max_samples, "dd_samples": args.dd_samples,
          "noise": args.noise, "policy": args.policy}
    analyse(hands[:2], **kw)  # compile / load the cache
    for reasons in (True, False):
        t = time.process_time()
        rows = analyse(hands, seed=1, reasons=reasons, **kw)
        dt = time.process_time() - t
        print(f"policy={args.policy} noise={args.noise} samples={args.samples}..{args.max_samples} "
              f"dd_samples={args.dd_samples} reasons={reasons}: {len(hands)} hands, "
              f"{len(rows)} decisions ({len(rows) / len(hands):.1f}/hand, {rows.samples_used.mean():.1f} deals each) "
              f"in {dt:.2f} s CPU = {len(hands) / dt:.0f} hands/s")
    sub = hands[: args.accuracy_hands]
    a = analyse(sub, seed=2, reasons=False, **kw)
    # the reference is always rollouts with 10x the samples (what the learned model is measured against too)
    ref = analyse(sub, seed=3, reasons=False, samples=10 * args.samples, max_samples=10 * args.max_samples,
                  dd_samples=10 * args.dd_samples, noise=args.noise,
                  policy="strategy" if args.policy == "model" else args.policy)
    d = np.abs(a.regret.to_numpy() - ref.regret.to_numpy())
    dd = np.abs(a.dd_regret.to_numpy() - ref.dd_regret.to_numpy())
    covered = (d <= 2 * np.maximum(a.regret_se.to_numpy(), 1e-9)) | (d <= 0.5)
    print(f"accuracy vs 10x samples on {len(a)} decisions: |regret diff| <= 1 pt: {(d <= 1).mean():.1%}, "
          f"<= 5 pt: {(d <= 5).mean():.1%}; quantiles 50/90/95%: {np.quantile(d, [0.5, 0.9, 0.95]).round(1)}; "
          f"same best option: {(a.best == ref.best).mean():.1%}; within 2 regret_se: {covered.mean():.1%}")
    dl = np.abs(a.loss.to_numpy() - ref.loss.to_numpy())
    print(f"normalised loss (the players model's scale): |diff| <= 0.1: {(dl <= 0.1).mean():.1%}, <= 0.25: "
          f"{(dl <= 0.25).mean():.1%}; quantiles 50/90/95%: {np.quantile(dl, [0.5, 0.9, 0.95]).round(3)}; "
          f"mean loss {ref.loss.mean():.3f}")
    print(f"double dummy: |dd_regret diff| <= 1 pt: {(dd <= 1).mean():.1%}, quantiles 50/90/95%: "
          f"{np.quantile(dd, [0.5, 0.9, 0.95]).round(1)}; median |regret| {np.median(ref.regret):.1f}, "
          f"mean {ref.regret.mean():.1f}")


if __name__ == "__main__":
    main()
