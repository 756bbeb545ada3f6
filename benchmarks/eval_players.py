"""Does the per-player skill figure measure skill, not luck? Honest rooms of players with known noise.

Run: ``python -m benchmarks.eval_players [--quick] [--models softmax,blunder,no_tong] [--players 40]
[--hands 150] [--seed 1[,2,3]] [--search N] [--eval-seeds 0,1] [--samples N --max-samples M]
[--policy model|strategy|fast] [--cheat]`` (writes results/skill.json: the table by noise model).

For each noise model (:mod:`analyzer.simulate.noise`) a room of honest players whose levels span
the model's range is analysed (:func:`analyzer.analysis.decisions.analyse`, then
:func:`analyzer.analysis.players.player_table`). Printed per model:

- Spearman between the known noise and the headline ``skill`` (sign turned so that 1 = perfect
  order; for ``no_tong``, whose level makes players stronger, 1 = the higher the level, the higher the
  skill), next to the same for the one-parameter sensitivity on the values alone (the former
  other figure), match rate, mean normalised loss, mean regret (points) and the plain mean score per
  hand (no analysis: the luck baseline); with several room seeds, each seed's figures and the
  smallest over the seeds;
- the headline's movement between two evaluation seeds (same hands): median |difference| over the
  median width of the 95% interval (goal < 0.1);
- how many of these honest players the level/partner signal flags (should be 0).

Then the per-decision precision against a run with 10x the samples (another seed), on the
normalised-loss scale the model uses, and (``--cheat``) a room with colluding pairs and experts
from :mod:`analyzer.simulate.room`: the signal's p-values by role.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from analyzer.analysis.decisions import DEFAULT_MAX_SAMPLES, DEFAULT_POLICY, DEFAULT_SAMPLES, POLICIES, analyse
from analyzer.analysis.players import player_table
from analyzer.analysis.skill import fit_by, loss_matrix
from analyzer.simulate.noise import MODELS, noisy_room
from analyzer.validate import Checked
from analyzer.variants.base import HandCheck


def _items(records: list) -> list[Checked]:
    return [Checked("room", i + 1, r.hand_id, r, HandCheck()) for i, r in enumerate(records)]


#: Models whose level makes a player stronger, not weaker: ``no_tong`` drops the greedy player's 通 features, and
#: players who drop them more often score more points a hand (Spearman of level with points a hand +0.25..+0.49 in
#: 40-player rooms, seeds 1-3, where softmax's is -0.47..-0.60), so their level is read as skill, not noise.
STRONGER_WITH_LEVEL = {"no_tong"}


def _rho(noise: np.ndarray, figure: np.ndarray, higher_is_better: bool = True) -> float:
    r = float(spearmanr(noise, figure).statistic)
    return -r if higher_is_better else r


def eval_model(model: str, seed: int, args: argparse.Namespace, kw: dict) -> dict:
    room = noisy_room(model, players=args.players, hands_per_player=args.hands, seed=seed, search=args.search)
    items = _items(room.records)
    t = time.process_time()
    df = analyse(items, seed=args.eval_seeds[0], reasons=False, **kw)
    cpu = time.process_time() - t
    t = time.process_time()
    tab = player_table(df).set_index("player")
    table_cpu = time.process_time() - t
    losses, chosen = loss_matrix(df)
    values_only = fit_by(losses, chosen, df["player"].astype(str).to_numpy())
    noise = np.array([room.level[p] for p in tab.index])
    if model in STRONGER_WITH_LEVEL:
        noise = -noise
    scores: dict[str, list[float]] = {}
    for r in room.records:
        for p, s in zip(r.players, r.result.scores):
            scores.setdefault(p, []).append(s)
    mean_score = np.array([np.mean(scores[p]) for p in tab.index])
    out = {"model": model, "room seed": seed, "players": len(tab), "hands": len(items), "decisions": len(df),
           "hands/s (CPU)": len(items) / cpu, "player table CPU s": table_cpu,
           "skill": _rho(noise, tab["skill"].to_numpy()),
           "values-only sensitivity": _rho(noise, np.array([values_only[p].skill for p in tab.index])),
           "match_rate": _rho(noise, tab["match_rate"].to_numpy()),
           "mean_loss": _rho(noise, tab["mean_loss"].to_numpy(), False),
           "mean_regret": _rho(noise, tab["mean_regret"].to_numpy(), False),
           "score/hand (baseline)": _rho(noise, mean_score),
           "honest flagged": int(tab["flag"].sum()), "min signal_p": float(tab["signal_p"].min())}
    if len(args.eval_seeds) > 1 and model in args.move_models and seed == args.seed[0]:
        other = player_table(analyse(items, seed=args.eval_seeds[1], reasons=False, **kw)).set_index("player")
        moved = (other["skill"] - tab["skill"]).abs().reindex(tab.index)
        width = (tab["skill_hi"] - tab["skill_lo"]).median()
        out["seed move / CI width"] = float(moved.median() / width)
        out["max move / CI width"] = float(moved.max() / width)
    return out


def precision(args: argparse.Namespace, kw: dict) -> None:
    """Per-decision agreement with a 10x-sample run (another seed) on the normalised-loss scale."""
    room = noisy_room("softmax", players=8, hands_per_player=args.precision_hands * 4 // 8, seed=args.seed[0] + 100)
    items = _items(room.records)
    a = analyse(items, seed=2, reasons=False, **kw)
    big = dict(kw, samples=10 * kw["samples"], max_samples=10 * (kw["max_samples"] or kw["samples"]),
               policy="strategy" if kw["policy"] == "model" else kw["policy"])
    ref = analyse(items, seed=3, reasons=False, **big)
    la, ca = loss_matrix(a)
    lr, _ = loss_matrix(ref)
    ar = np.arange(len(a))
    d = np.abs(la[ar, ca] - lr[ar, ca])
    ok = np.isfinite(la) & np.isfinite(lr)
    allopt = np.abs(np.where(ok, np.where(ok, la, 0.0) - np.where(ok, lr, 0.0), 0.0)).max(axis=1)
    print(f"\nper-decision precision vs 10x samples ({len(a)} decisions, {len(items)} hands; loss in units of "
          f"the decision's spread): chosen option's loss within 0.1: {(d <= 0.1).mean():.1%}, within 0.25: "
          f"{(d <= 0.25).mean():.1%}; quantiles 50/90/95%: {np.quantile(d, [0.5, 0.9, 0.95]).round(3)}; "
          f"every option within 0.25: {(allopt <= 0.25).mean():.1%}; same best option: "
          f"{(a.best == ref.best).mean():.1%}; samples used: mean {a.samples_used.mean():.1f}")


def cheat_room(args: argparse.Namespace, kw: dict) -> None:
    """A room with colluding pairs (sharing hands) and experts: the level/partner signal by role."""
    from analyzer.simulate.room import simulate

    sim = simulate(hands=args.cheat_hands, players=16, seed=args.seed[0], colluders=2, friends=1, style="share",
                   skill_mix="novice:0.2,casual:0.2,regular:0.3,strong:0.15,expert:0.15")
    recs = list(sim.records)
    df = analyse(_items(recs), seed=args.eval_seeds[0], reasons=False, **kw)
    tab = player_table(df)
    truth = sim.truth["players"]
    tab["role"] = tab["player"].map(lambda p: truth[p]["role"])
    tab["level"] = tab["player"].map(lambda p: truth[p]["level"])
    print(f"\ncollusion room ({len(recs)} hands, 16 players, 2 'share' pairs): signal by player")
    cols = ["player", "role", "level", "skill", "dd_z", "level_z", "partner", "partner_z", "signal_p", "flag"]
    print(tab[cols].sort_values("signal_p").to_string(index=False, float_format=lambda x: f"{x:.3g}"))
    lv = {"novice": 0, "casual": 1, "regular": 2, "strong": 3, "expert": 4}
    honest = tab[tab.role != "colluder"]
    losses, chosen = loss_matrix(df)
    values_only = fit_by(losses, chosen, df["player"].astype(str).to_numpy())
    vo = honest.player.map(lambda p: values_only[p].skill)
    print(f"Spearman(level, skill) over the other players: "
          f"{spearmanr(honest.level.map(lv), honest.skill).statistic:.3f} (values-only sensitivity "
          f"{spearmanr(honest.level.map(lv), vo).statistic:.3f}); experts' places by skill "
          f"(1 = best of {len(tab)}): {[tab['player'].tolist().index(p) + 1 for p in tab.player[tab.level == 'expert']]}")


def main(argv: list[str] | None = None) -> None:
    from benchmarks.results import Results, command_line

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="24 players x 60 hands, 20 hands of precision")
    ap.add_argument("--models", default="softmax,blunder,no_tong")
    ap.add_argument("--players", type=int, default=40)
    ap.add_argument("--hands", type=int, default=150, help="hands per player")
    ap.add_argument("--seed", default="1", help="room seed(s), comma-separated (the first also for precision, cheat)")
    ap.add_argument("--eval-seeds", default="0,1", help="analysis seeds (the second measures the movement)")
    ap.add_argument("--move-models", default="softmax",
                    help="models whose rooms are analysed again with the second seed (comma-separated, or 'all')")
    ap.add_argument("--samples", type=int, default=DEFAULT_SAMPLES)
    ap.add_argument("--max-samples", type=int, default=DEFAULT_MAX_SAMPLES)
    ap.add_argument("--policy", choices=list(POLICIES), default=DEFAULT_POLICY)
    ap.add_argument("--precision-hands", type=int, default=60)
    ap.add_argument("--search", type=int, default=0,
                    help="base players search with this many rollouts an option (blunder rooms: a base player that "
                         "is not the reference heuristic)")
    ap.add_argument("--cheat", action="store_true", help="also a room with colluders and experts")
    ap.add_argument("--cheat-hands", type=int, default=1500)
    args = ap.parse_args(argv)
    res = Results("skill", "Skill against known noise", "skill", command_line("benchmarks.eval_players", argv),
                  parameters=dict(vars(args)),
                  about="Honest rooms of the analyzer's players at a known noise level (one noise model a room, "
                        "levels across its range), analysed at the defaults: the Spearman between the known noise and "
                        "the player table's `skill` (1 = perfect order), beside simpler figures and the luck baseline "
                        "(the plain mean score a hand); the skill's movement between two analysis seeds; honest "
                        "players flagged.")
    if args.quick:
        args.players, args.hands, args.precision_hands, args.cheat_hands = 24, 60, 20, 600
    args.eval_seeds = [int(x) for x in args.eval_seeds.split(",")]
    args.seed = [int(x) for x in str(args.seed).split(",")]
    models = [m for m in args.models.split(",") if m]
    unknown = set(models) - set(MODELS)
    if unknown:
        raise SystemExit(f"unknown model(s) {sorted(unknown)}; choose from {', '.join(MODELS)}")
    kw = {"samples": args.samples, "max_samples": args.max_samples, "policy": args.policy}
    analyse(_items(noisy_room("softmax", players=4, hands_per_player=1, seed=0).records), reasons=False, **kw)
    args.move_models = models if args.move_models == "all" else args.move_models.split(",")
    pd.set_option("display.width", 200)
    rows = []
    for seed in args.seed:
        for m in models:  # each model's figures as soon as they are known
            rows.append(eval_model(m, seed, args, kw))
            print(pd.Series(rows[-1]).to_string(float_format=lambda x: f"{x:.3f}"), "\n", flush=True)
    print(f"Spearman between known noise and each figure (1 = perfect order); {args.players} players x "
          f"{args.hands} hands, room seed(s) {args.seed}, analysis seeds {args.eval_seeds}, samples {args.samples}"
          f"..{args.max_samples}, policy {args.policy}")
    table = pd.DataFrame(rows)
    table["model"] = table["model"] + (" s" + table["room seed"].astype(str) if len(args.seed) > 1 else "")
    print(table.set_index("model").T.to_string(float_format=lambda x: f"{x:.3f}"))
    if len(args.seed) > 1:
        figs = ["skill", "values-only sensitivity", "match_rate", "mean_loss", "score/hand (baseline)"]
        worst = pd.DataFrame(rows).groupby("model", sort=False)[figs].min()
        print(f"\nsmallest over room seeds {args.seed}:\n{worst.T.to_string(float_format=lambda x: f'{x:.3f}')}")
    cols = list(table.columns)
    res.table("by_model", "By noise model", cols, [[x.item() if hasattr(x, "item") else x for x in r]
                                                   for r in table[cols].itertuples(index=False)])
    res.figure("skill_min", float(table["skill"].min()), "", "the smallest Spearman of skill with the known noise, "
               "every model and room seed", goal=">= 0.9")
    precision(args, kw)
    if args.cheat:
        cheat_room(args, kw)
    res.write()


if __name__ == "__main__":
    main()
