"""A random player as an Evaluator: every afterstate gets an independent uniform score.

The best of n independent uniform scores is a uniformly random index, so a 1-ply search
with this evaluator plays a uniformly random legal play. Seeded, so games reproduce.
"""

from __future__ import annotations

import numpy as np


class RandomEvaluator:
    """P(win) ~ U(0, 1) per afterstate, gammons 0; a generator seeded once at construction."""

    def __init__(self, seed: int | None = 0) -> None:
        self.name = "random" if seed is None else f"random:{seed}"
        self.rng = np.random.default_rng(seed)

    def evaluate(self, afterstates: np.ndarray) -> np.ndarray:
        out = np.zeros((len(afterstates), 5))
        out[:, 0] = self.rng.random(len(afterstates))
        return out
