"""The luck of a roll: the value of the roll (after the roller's best play) minus the mean
over all 21 rolls, at a given ply, from the roller's view, before the roll.

Public API (shared by rollouts' variance reduction and match analysis):

- `best_afterstates(boards, evaluator, ply)`: for every board and each of the 21 rolls, the
  roller's best afterstate at `ply` and its 5 probabilities (roller's view); batched, one
  evaluator call at 1-ply.
- `roll_values(board, evaluator, ply)`: the (21,) cubeless equities of the rolls
  (engine.search.ROLLS order), and `roll_outcomes` the (21, 5) probabilities.
- `roll_luck(board, dice, evaluator, ply)`: the luck of one roll, in cubeless equity.
- `roll_index(d1, d2)`: a roll's row in ROLLS.

Plays are chosen by cubeless equity as engine.search does (a roll with no legal play keeps
the board; a play that ends the game gets its exact result). At 2-ply and deeper the
candidates are the filter's 1-ply best, re-valued by engine.search.afterstate_values.
"""

from __future__ import annotations

import numpy as np

from engine.evaluator import Evaluator, Parents, equity
from engine.position import race_flags
from engine.search import (ROLL_WEIGHTS, ROLLS, MoveFilter, afterstate_values, best_in_groups, check_ply,
                           expand, screened_values)

N_ROLLS = len(ROLLS)
_INDEX = {(int(a), int(b)): k for k, (a, b) in enumerate(ROLLS)}


def roll_index(d1: int, d2: int) -> int:
    """The row of roll (d1, d2), in either order, in engine.search.ROLLS."""
    return _INDEX[(max(d1, d2), min(d1, d2))]


def best_afterstates(boards: np.ndarray, evaluator: Evaluator, ply: int = 1,
                     roll_rows: np.ndarray | None = None,
                     filter: MoveFilter = MoveFilter(), screen: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """The roller's best afterstate (n, R, 2, 25) and its probabilities (n, R, 5), roller's view.

    boards (n, 2, 25) have the roller in row 0; roll_rows (n, R) picks rows of ROLLS per board
    (default: all 21). 1-ply: one evaluator call for everything. Deeper: the filter's 1-ply
    candidates of every group are re-valued together at `ply`. With `screen` the evaluator's
    screen (engine.search.screened_values) picks the plays each roll's best is chosen from;
    without, every play is valued, as rank_plays does for the play actually made.
    """
    check_ply(ply)
    boards = np.ascontiguousarray(boards, dtype=np.int8).reshape(-1, 2, 25)
    n = len(boards)
    if roll_rows is None:
        roll_rows = np.broadcast_to(np.arange(N_ROLLS), (n, N_ROLLS))
    roll_rows = np.asarray(roll_rows).reshape(n, -1)
    n_cols = roll_rows.shape[1]
    if n == 0:
        return np.zeros((0, n_cols, 2, 25), dtype=np.int8), np.zeros((0, n_cols, 5))
    after, group_start = expand(boards, roll_rows)
    board_of = np.repeat(np.repeat(np.arange(n), n_cols), np.diff(group_start))
    probs, eqs = screened_values(evaluator, after, group_start, race_flags(boards)[board_of], screen,
                                 Parents(boards, board_of))
    if ply > 1:
        cand = _candidates(eqs, group_start, filter)
        deep = afterstate_values(after[cand], evaluator, ply, filter=filter)
        # Only the candidates compete at the deeper ply.
        eqs = np.full(len(after), -np.inf)
        probs[cand] = deep
        eqs[cand] = equity(deep)
    best = best_in_groups(eqs, group_start)
    return after[best].reshape(n, n_cols, 2, 25), probs[best].reshape(n, n_cols, 5)


def _candidates(eqs: np.ndarray, group_start: np.ndarray, filter: MoveFilter) -> np.ndarray:
    """Row indices of each group's 1-ply candidates (at most max_moves, within threshold of the best)."""
    out = []
    for g in range(len(group_start) - 1):
        a, b = int(group_start[g]), int(group_start[g + 1])
        if b - a == 1:
            out.append(a)
            continue
        order = a + np.argsort(-eqs[a:b], kind="stable")[:filter.max_moves]
        out.extend(int(i) for i in order if eqs[i] >= eqs[order[0]] - filter.threshold)
    return np.array(out, dtype=np.int64)


def roll_outcomes(board: np.ndarray, evaluator: Evaluator, ply: int = 1) -> np.ndarray:
    """(21, 5): the roller's probabilities after its best play of each roll (ROLLS order)."""
    return best_afterstates(np.asarray(board)[None], evaluator, ply)[1][0]


def roll_values(board: np.ndarray, evaluator: Evaluator, ply: int = 1) -> np.ndarray:
    """(21,) cubeless equities of the rolls from the roller's view (ROLLS order)."""
    return equity(roll_outcomes(board, evaluator, ply))


def roll_luck(board: np.ndarray, dice: tuple[int, int], evaluator: Evaluator, ply: int = 1) -> float:
    """The luck of `dice` for the side on roll: its value minus the mean over the 21 rolls."""
    values = roll_values(board, evaluator, ply)
    return float(values[roll_index(*dice)] - values @ ROLL_WEIGHTS)
