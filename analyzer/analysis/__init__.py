"""Per-decision evaluation (information sets, rollouts) and per-player statistics."""
