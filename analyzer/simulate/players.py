"""Simulated players: skill levels (softmax temperature or search), personal pace, think times."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

#: level -> (temperature low, high, rollout samples). Temperatures are in the strategy's points:
#: 0 always takes the sensible option, 15 is close to random. Experts search instead.
LEVELS: dict[str, tuple[float, float, int]] = {
    "novice": (6.0, 15.0, 0),
    "casual": (2.0, 5.0, 0),
    "regular": (0.7, 1.8, 0),
    "strong": (0.1, 0.5, 0),
    "expert": (0.2, 0.6, 16),
}
DEFAULT_SKILL_MIX = "novice:0.15,casual:0.3,regular:0.3,strong:0.2,expert:0.05"


@dataclass(frozen=True)
class Player:
    """One member of the room; ``skill`` orders players from careless (0) to expert (1)."""

    id: str
    level: str
    temperature: float
    samples: int
    pace_ms: float

    @property
    def skill(self) -> float:
        if self.samples:
            return 1.0
        return round(1.0 - min(self.temperature, 15.0) / 16.0, 3)

    def to_dict(self) -> dict[str, object]:
        return {"level": self.level, "skill": self.skill, "temperature": round(self.temperature, 3),
                "search_samples": self.samples, "pace_ms": round(self.pace_ms)}


def parse_skill_mix(text: str) -> dict[str, float]:
    """``"novice:0.2,regular:0.8"`` -> shares summing to 1; ValueError naming what is wrong."""
    mix: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, share = part.partition(":")
        if name not in LEVELS:
            raise ValueError(f"unknown skill level {name!r} in {text!r}; levels: {', '.join(LEVELS)}")
        if name in mix:  # a second share of one level would replace the first silently
            raise ValueError(f"skill level {name!r} is given twice in {text!r}")
        try:
            mix[name] = float(share)
        except ValueError:
            raise ValueError(f"skill share {share!r} of {name!r} is not a number") from None
        if not math.isfinite(mix[name]) or mix[name] < 0:
            raise ValueError(f"skill share {share.strip()!r} of {name!r} is not a finite number >= 0")
    total = sum(mix.values())
    if total <= 0:
        raise ValueError(f"skill mix {text!r} has no positive share")
    if not math.isfinite(total):
        raise ValueError(f"skill mix {text!r}: the shares add up to more than a float holds")
    return {k: v / total for k, v in mix.items()}


def make_player(pid: str, level: str, rng: np.random.Generator) -> Player:
    lo, hi, samples = LEVELS[level]
    # experts take longer over the same decision; everyone has their own pace
    pace = float(rng.lognormal(np.log(900.0), 0.35)) * (1.6 if samples else 1.0)
    return Player(pid, level, float(rng.uniform(lo, hi)), samples, pace)


def draw_levels(n: int, mix: Mapping[str, float], rng: np.random.Generator) -> list[str]:
    names = list(mix)
    return [names[i] for i in rng.choice(len(names), size=n, p=[mix[k] for k in names])]


def think_times(nopts: np.ndarray, diffs: np.ndarray, pace: np.ndarray, extra: np.ndarray,
                rng: np.random.Generator) -> np.ndarray:
    """Milliseconds since the hand started for each action, (B, 52).

    pace (B, 52): the actor's pace; extra (B, 52): median extra ms of a colluder consulting its
    partner (0 when none). Forced moves are fast; time grows with options and closeness.
    """
    shape = nopts.shape
    noise = rng.lognormal(0.0, 0.35, shape)
    forced = 180.0 + 220.0 * rng.lognormal(0.0, 0.4, shape)
    thought = pace * (0.5 + 0.45 * diffs + 0.2 * np.log(np.maximum(nopts, 1))) * noise
    consult = np.where(extra > 0, extra * rng.lognormal(0.0, 0.5, shape), 0.0)
    step = np.where(nopts > 1, thought + consult, forced)
    return np.cumsum(np.rint(step).astype(np.int64), axis=1)
