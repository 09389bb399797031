"""The evaluator protocol: how search, players and pit talk to any judge of positions.

An evaluator scores afterstates: int8 boards (n, 2, 25) whose row 0 is the side that
just moved and row 1 the side now on roll. It returns (n, 5) float probabilities from
row 0's view, in gnubg's order: P(win), P(win gammon), P(win backgammon),
P(lose gammon), P(lose backgammon); gammons include backgammons. Evaluators may declare
`accepts_pre_move_race` or `accepts_parents` (Parents, below): `evaluate_with_hints`
passes them those hints as keywords, and no hint to an evaluator that does not declare it.

Also here: the shared clamps on any network's outputs, and the random evaluator (the
weakest baseline).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from engine.cache import kernel
from engine.position import CHECKERS, checkers_left, is_race, rearmost

N_OUTPUTS = 5  # every evaluator's and network's outputs, in the order below
WIN, WIN_GAMMON, WIN_BACKGAMMON, LOSE_GAMMON, LOSE_BACKGAMMON = range(N_OUTPUTS)


class Evaluator(Protocol):
    name: str

    def evaluate(self, afterstates: np.ndarray) -> np.ndarray:
        """(n, 2, 25) int8 afterstates -> (n, 5) probabilities from the mover's view."""
        ...


@dataclass(frozen=True)
class Parents:
    """The positions a batch of afterstates was played from, for an evaluator that sets
    `accepts_parents` (a network: it values a board by its differences from its parent).

    boards: (p, 2, 25) int8, each with its mover in row 0 as the afterstates have it;
    index: (n,) the row of boards each afterstate was played from.
    """

    boards: np.ndarray
    index: np.ndarray

    def take(self, rows: np.ndarray) -> Parents:
        """The parents of afterstates[rows]."""
        return Parents(self.boards, self.index[rows])


def evaluate_with_hints(evaluator: Evaluator, afterstates: np.ndarray, pre_move_race: np.ndarray | None = None,
                        parents: Parents | None = None) -> np.ndarray:
    """evaluator.evaluate(afterstates), given each hint the evaluator declares it accepts."""
    hints = {}
    if pre_move_race is not None and getattr(evaluator, "accepts_pre_move_race", False):
        hints["pre_move_race"] = pre_move_race
    if parents is not None and getattr(evaluator, "accepts_parents", False):
        hints["parents"] = parents
    return evaluator.evaluate(afterstates, **hints)


def flip(probs: np.ndarray) -> np.ndarray:
    """The same outcome distribution seen by the other side."""
    p = np.asarray(probs, dtype=np.float64)
    out = np.empty_like(p)
    out[..., WIN] = 1.0 - p[..., WIN]
    out[..., WIN_GAMMON] = p[..., LOSE_GAMMON]
    out[..., WIN_BACKGAMMON] = p[..., LOSE_BACKGAMMON]
    out[..., LOSE_GAMMON] = p[..., WIN_GAMMON]
    out[..., LOSE_BACKGAMMON] = p[..., WIN_BACKGAMMON]
    return out


def equity(probs: np.ndarray) -> np.ndarray:
    """Cubeless money equity: 2 P(win) - 1 + P(wg) - P(lg) + P(wbg) - P(lbg)."""
    p = np.asarray(probs, dtype=np.float64)
    return (2.0 * p[..., WIN] - 1.0 + p[..., WIN_GAMMON] - p[..., LOSE_GAMMON]
            + p[..., WIN_BACKGAMMON] - p[..., LOSE_BACKGAMMON])


def result_probs(points: int) -> np.ndarray:
    """The exact 'probabilities' of a finished game, from the view of the side whose result is points (+-1..3)."""
    p = np.zeros(N_OUTPUTS)
    if points > 0:
        p[WIN] = 1.0
        p[WIN_GAMMON] = points >= 2
        p[WIN_BACKGAMMON] = points >= 3
    else:
        p[LOSE_GAMMON] = points <= -2
        p[LOSE_BACKGAMMON] = points <= -3
    return p


@kernel(nogil=True)
def _clamp(p):
    for k in range(p.shape[0]):
        p[k, WIN_GAMMON] = min(p[k, WIN_GAMMON], p[k, WIN])
        p[k, WIN_BACKGAMMON] = min(p[k, WIN_BACKGAMMON], p[k, WIN_GAMMON])
        p[k, LOSE_GAMMON] = min(p[k, LOSE_GAMMON], 1.0 - p[k, WIN])
        p[k, LOSE_BACKGAMMON] = min(p[k, LOSE_BACKGAMMON], p[k, LOSE_GAMMON])


def sanity_clamp(probs: np.ndarray) -> np.ndarray:
    """gnubg's consistency clamp: backgammon <= gammon <= win (and the same for losses), as a
    float64 copy. A kernel: four numpy passes cost more than a small search's network."""
    p = np.array(probs, dtype=np.float64, copy=True)
    _clamp(p.reshape(-1, N_OUTPUTS))
    return p


@kernel(nogil=True)
def can_lose_gammon(board, side):
    """False once the side has borne off a checker."""
    return checkers_left(board, side) == CHECKERS


@kernel(nogil=True)
def can_lose_backgammon(board, side, race):
    """False once the side has borne off a checker, or when, in a race (`race`: is_race of
    the board), it has no checker left in the other's home board or on the bar."""
    return can_lose_gammon(board, side) and not (race and rearmost(board, side) < 18)


@kernel(nogil=True)
def _rule_out_gammons(boards, probs):
    for k in range(boards.shape[0]):
        board = boards[k]
        race = is_race(board)
        for side in range(2):
            gammon = LOSE_GAMMON if side == 0 else WIN_GAMMON
            backgammon = LOSE_BACKGAMMON if side == 0 else WIN_BACKGAMMON
            if not can_lose_gammon(board, side):
                probs[k, gammon] = 0.0
            if not can_lose_backgammon(board, side, race):
                probs[k, backgammon] = 0.0


def rule_out_gammons(boards: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """Zero, in place, the gammons and backgammons the position makes impossible (gnubg does too).

    A side that has borne off a checker cannot lose a gammon. In a race (no contact left), a
    side with no checker in the other's home board or on the bar cannot lose a backgammon.
    A net learns these only roughly: left alone, the shipped nets gave a side that had borne
    off and been hit up to 0.96 to lose a gammon, and a 2-ply teacher taught it back.
    Self-play's kernels apply the same can_lose_gammon / can_lose_backgammon.
    """
    _rule_out_gammons(np.asarray(boards), probs)
    return probs


class RandomEvaluator:
    """P(win) ~ U(0, 1) per afterstate, gammons 0; a generator seeded once at construction.

    The best of n independent uniform scores is a uniformly random index, so a 1-ply search
    with this evaluator plays a uniformly random legal play. Seeded, so games reproduce.
    """

    def __init__(self, seed: int | None = 0) -> None:
        self.name = "random" if seed is None else f"random:{seed}"
        self.rng = np.random.default_rng(seed)

    def evaluate(self, afterstates: np.ndarray) -> np.ndarray:
        out = np.zeros((len(afterstates), N_OUTPUTS))
        out[:, 0] = self.rng.random(len(afterstates))
        return out
