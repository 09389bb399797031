"""Rollout values of afterstates as training targets (`distill positions --teacher-rollout`).

A distillation target is the value of an afterstate from the side that just moved. Its
rollout is the opponent's rollout before its roll, seen from the other side: our own
engine plays every trial, so the targets stay self-play.
"""

from __future__ import annotations

import numpy as np

from engine.evaluator import Evaluator, flip, result_probs
from engine.position import game_results
from engine.rollout.core import RolloutSettings, estimates, run_trials


def rollout_targets(afterstates: np.ndarray, evaluator: Evaluator, trials: int, seed: int = 0,
                    truncate: int = 0) -> np.ndarray:
    """(n, 5) float32: the mean of `trials` variance-reduced 1-ply trials of each afterstate
    (row 0 = the side that just moved), from that side's view; a finished game its result.

    With the luck subtracted a mean of few trials can leave [0, 1] (the correction is
    unbiased, not bounded), so each target is clamped as a network's outputs are:
    0 <= backgammon <= gammon <= win (for either side) <= 1."""
    settings = RolloutSettings(trials=trials, seed=seed, truncate=truncate, batch=trials)
    out = np.empty((len(afterstates), 5), dtype=np.float32)
    points = game_results(afterstates)
    for i, board in enumerate(afterstates):
        if points[i]:
            out[i] = result_probs(int(points[i]))
            continue
        theirs = np.ascontiguousarray(board[::-1])
        probs = estimates(run_trials(theirs, evaluator, settings, 0, trials), settings)[0]
        out[i] = _clamp(flip(probs.mean(axis=0)))
    return out


def _clamp(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 0.0, 1.0)
    p[1] = min(p[1], p[0])
    p[2] = min(p[2], p[1])
    p[3] = min(p[3], 1.0 - p[0])
    p[4] = min(p[4], p[3])
    return p
