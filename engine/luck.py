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

from engine.cache import kernel
from engine.evaluator import Evaluator, equity
from engine.movegen import _ZOBRIST, MAX_PLAYS, PlayBuffers, generate_into
from engine.position import race_flags
from engine.search import (ROLL_WEIGHTS, ROLLS, MoveFilter, afterstate_values, check_ply,
                           evaluate_afterstates)

N_ROLLS = len(ROLLS)
ROLLS_K = np.ascontiguousarray(ROLLS, dtype=np.int64)
_INDEX = {(int(a), int(b)): k for k, (a, b) in enumerate(ROLLS)}


def roll_index(d1: int, d2: int) -> int:
    """The row of roll (d1, d2), in either order, in engine.search.ROLLS."""
    return _INDEX[(max(d1, d2), min(d1, d2))]


@kernel
def expand_rolls(boards, roll_rows, out, group_start, buf_boards, buf_steps, buf_hash, zobrist):
    """Every play of every (board k, roll roll_rows[k, j]) into out; no legal play writes the board.

    Group g = k * roll_rows.shape[1] + j is out[group_start[g]:group_start[g + 1]]. Returns
    the rows needed; when that exceeds len(out) the caller retries with a bigger buffer.
    """
    n_cols = roll_rows.shape[1]
    total = 0
    cap = out.shape[0]
    for k in range(boards.shape[0]):
        for j in range(n_cols):
            g = k * n_cols + j
            group_start[g] = total
            r = roll_rows[k, j]
            n = generate_into(boards[k], ROLLS_K[r, 0], ROLLS_K[r, 1], buf_boards, buf_steps, buf_hash, zobrist)
            if n == 0:
                if total < cap:
                    out[total] = boards[k]
                total += 1
            else:
                for i in range(n):
                    if total + i < cap:
                        out[total + i] = buf_boards[i]
                total += n
    group_start[boards.shape[0] * n_cols] = total
    return total


@kernel
def best_in_groups(values, group_start):
    """Index of the largest value in each group (the first on ties)."""
    n_groups = group_start.shape[0] - 1
    best = np.empty(n_groups, dtype=np.int64)
    for g in range(n_groups):
        b = group_start[g]
        for i in range(group_start[g] + 1, group_start[g + 1]):
            if values[i] > values[b]:
                b = i
        best[g] = b
    return best


class _Scratch:
    def __init__(self) -> None:
        self.plays = PlayBuffers(MAX_PLAYS)
        self.out = np.empty((1 << 15, 2, 25), dtype=np.int8)


_SCRATCH = _Scratch()


def expand(boards: np.ndarray, roll_rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(afterstates, group_start) of expand_rolls; afterstates is a copy safe to keep."""
    boards = np.ascontiguousarray(boards, dtype=np.int8).reshape(-1, 2, 25)
    roll_rows = np.ascontiguousarray(roll_rows, dtype=np.int64).reshape(len(boards), -1)
    group_start = np.empty(roll_rows.size + 1, dtype=np.int64)
    s = _SCRATCH
    while True:
        total = expand_rolls(boards, roll_rows, s.out, group_start, s.plays.boards, s.plays.steps,
                             s.plays.hashes, _ZOBRIST)
        if total <= len(s.out):
            return s.out[:total].copy(), group_start
        s.out = np.empty((max(total, 2 * len(s.out)), 2, 25), dtype=np.int8)


def best_afterstates(boards: np.ndarray, evaluator: Evaluator, ply: int = 1,
                     roll_rows: np.ndarray | None = None,
                     filter: MoveFilter = MoveFilter()) -> tuple[np.ndarray, np.ndarray]:
    """The roller's best afterstate (n, R, 2, 25) and its probabilities (n, R, 5), roller's view.

    boards (n, 2, 25) have the roller in row 0; roll_rows (n, R) picks rows of ROLLS per board
    (default: all 21). 1-ply: one evaluator call for everything. Deeper: the filter's 1-ply
    candidates of every group are re-valued together at `ply`.
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
    race = None
    if getattr(evaluator, "accepts_pre_move_race", False):
        race = np.repeat(np.repeat(race_flags(boards), n_cols), np.diff(group_start))
    probs = evaluate_afterstates(evaluator, after, race)
    eqs = equity(probs)
    if ply > 1:
        cand = _candidates(eqs, group_start, filter)
        deep = afterstate_values(after[cand], evaluator, ply, None if race is None else race[cand], filter)
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
