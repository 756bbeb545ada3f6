"""Make the reference set of decisions the headline skill is read on (writes the shipped ``analyzer/data/skill_reference.npz``).

Run: ``python3 benchmarks/make_skill_reference.py [--seed 21] [--hands 600] [--decisions 4000] [--out PATH]``.
The shipped file is this command's output with its defaults.

The set: a seeded sample of the decisions of a mixed room (the training rooms of
``benchmarks/train_value.py`` with another seed: noisy players of every model and level, and the room
simulator's novices to experts with a colluding and a friend pair), analysed with the library's
defaults; for each decision every option's normalised loss (``loss``) and the reference policy's
(``loss_ref``). A player's rating is their fitted choice model's expected loss on these decisions,
read back as a sensitivity (:func:`analyzer.analysis.skill.rate`): a common set of positions, so two
players' figures do not depend on which decisions each met, and figures are comparable across rooms.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from analyzer.analysis.decisions import analyse
from analyzer.analysis.skill import Reference, loss_matrix, save_reference
from analyzer.validate import Checked
from analyzer.variants.base import HandCheck
from train_value import train_records  # benchmarks/ is on the path when run as a script


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--hands", type=int, default=600)
    ap.add_argument("--decisions", type=int, default=4000)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "analyzer" / "data"
                    / "skill_reference.npz")
    args = ap.parse_args()
    recs = train_records(args.hands, args.seed)
    df = analyse([Checked("reference", i + 1, r.hand_id, r, HandCheck()) for i, r in enumerate(recs)],
                 seed=args.seed, reasons=False)
    loss, _ = loss_matrix(df)
    ref, _ = loss_matrix(df, key="loss_ref")
    pick = np.sort(np.random.default_rng(args.seed).choice(len(df), min(args.decisions, len(df)), replace=False))
    meta = (f"benchmarks/make_skill_reference.py --seed {args.seed} --hands {args.hands} --decisions "
            f"{len(pick)}: decisions of {len(recs)} hands of mixed rooms, library defaults")
    save_reference(args.out, Reference(loss[pick], ref[pick], meta))
    print(f"wrote {args.out}: {len(pick)} of {len(df)} decisions; mean options "
          f"{np.isfinite(loss[pick]).sum(1).mean():.2f}")


if __name__ == "__main__":
    main()
