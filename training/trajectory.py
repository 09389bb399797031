"""Self-play games as data: actors record trajectories, one learner replays them.

A trajectory is the sequence of chosen afterstates of one self-play game (int8 boards,
mover in row 0, the opening mover's play first). The last afterstate is terminal (the
finished board or, with the bear-off table, an exact bear-off race), so the exact result
is part of the data. `play_games` records games with frozen
weights; `learn_games` replays them with the same online TD(lambda) update as
kernels.train_games (recomputing every prediction with the learner's current weights),
so the actor/learner split changes only which weights chose the moves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from engine.cache import kernel

from engine.encoder import N_INPUTS, encode_sparse, encode_sparse_features
from engine.movegen import _ZOBRIST
from training.kernels import (N_OUTPUTS, Scratch, choose_net, fixed_view, forward_sparse,
                              is_terminal, reset_traces, roll_die, start_game, swap_sides,
                              td_step, terminal_value)

INITIAL_CAPACITY = 4096  # afterstates per call; doubled (and the call replayed) when too small


@dataclass
class TrajectoryBatch:
    """Games played with one weight version: boards[offsets[g]:offsets[g+1]] is game g."""

    boards: np.ndarray    # (total moves, 2, 25) int8, chosen afterstates
    offsets: np.ndarray   # (games + 1,) int64
    version: int          # learner games count of the weights that chose the moves
    job: int              # first game index of the job in the learning order
    cpu_seconds: float = 0.0  # CPU time the actor spent playing these games

    @property
    def games(self) -> int:
        return len(self.offsets) - 1

    def game(self, g: int) -> np.ndarray:
        return self.boards[self.offsets[g]:self.offsets[g + 1]]


# ------------------------------------------------------------------------ actor kernel
@kernel(nogil=True)
def play_games(w1, b1, w2, b2, n_games, epsilon, rng, zobrist, boards, steps, hashes, idx,
               val, hidden, y, best_hidden, best_idx, best_val, best_y, out, offsets, dist, binom):
    """Play n_games of 1-ply self-play with frozen weights, recording every chosen afterstate.

    Returns the number of afterstates written to out, or -1 when out is too small (the
    caller enlarges it and replays from a copy of the RNG state).
    """
    board = np.empty((2, 25), dtype=np.int8)
    n = 0
    offsets[0] = 0
    for g in range(n_games):
        d1, d2 = start_game(board, rng)
        while True:
            m = choose_net(w1, b1, w2, b2, board, d1, d2, epsilon, rng, boards, steps, hashes,
                           zobrist, idx, val, hidden, y, best_hidden, best_idx, best_val, best_y,
                           dist, binom)
            if n >= out.shape[0]:
                return -1
            out[n] = board
            n += 1
            if m < 0:
                break
            swap_sides(board)
            d1 = roll_die(rng)
            d2 = roll_die(rng)
        offsets[g + 1] = n
    return n


def record_games(weights: tuple[np.ndarray, ...], n_games: int, epsilon: float,
                 rng: np.ndarray, scratch: Scratch) -> tuple[np.ndarray, np.ndarray]:
    """Play and record n_games; rng (a 1-element uint64 array) advances. Returns (boards, offsets)."""
    capacity = INITIAL_CAPACITY * max(1, n_games // 16)
    start = rng.copy()
    offsets = np.zeros(n_games + 1, dtype=np.int64)
    while True:
        out = np.empty((capacity, 2, 25), dtype=np.int8)
        s = scratch
        n = play_games(*weights, n_games, epsilon, rng, _ZOBRIST, s.boards, s.steps, s.hashes,
                       s.idx, s.val, s.hidden, s.y, s.best_hidden, s.best_idx, s.best_val,
                       s.best_y, out, offsets, s.dist, s.binom)
        if n >= 0:
            return out[:n].copy(), offsets
        capacity *= 2
        rng[:] = start


# ---------------------------------------------------------------------- learner kernel
@kernel(nogil=True)
def learn_games(w1, b1, w2, b2, boards, offsets, alpha, lam, idx, val, hidden, y,
                e_w1, e_b1, e_w2, e_b2, stats, dist, binom, input_lr):
    """Online TD(lambda) over recorded games, in order, updating the weights after every move.

    Same update as kernels.train_games: predictions are fixed-view (the opening mover's),
    the TD error is the difference of consecutive predictions and, at the end, the exact
    result; traces hold the gradients of the 5 outputs. stats += games, moves, sum |TD error|.
    """
    prev = np.empty(N_OUTPUTS, dtype=np.float32)
    cur = np.empty(N_OUTPUTS, dtype=np.float32)
    features = w1.shape[0] > N_INPUTS
    for g in range(offsets.shape[0] - 1):
        reset_traces(e_w1, e_b1, e_w2, e_b2)
        start = offsets[g]
        stop = offsets[g + 1]
        for t in range(start, stop):
            board = boards[t]
            flipped = ((t - start) % 2) == 1
            if is_terminal(board, dist):
                terminal_value(board, dist, binom, y)
                m = -1
            else:
                m = encode_sparse_features(board, idx, val) if features else encode_sparse(board, idx, val)
                forward_sparse(w1, b1, w2, b2, idx, val, m, hidden, y)
            fixed_view(y, flipped, cur)
            td_step(w1, b1, w2, b2, e_w1, e_b1, e_w2, e_b2, prev, cur, t == start, idx, val, m,
                    hidden, y, flipped, alpha, lam, stats, input_lr)
            if m < 0:
                break
        stats[0] += 1
        stats[1] += stop - start


def learn(weights: tuple[np.ndarray, ...], batch: TrajectoryBatch, alpha: float, lam: float,
          scratch: Scratch) -> tuple[int, int, float]:
    """Apply one batch to the weights in place; returns (games, moves, summed |TD error|)."""
    s = scratch
    s.stats[:] = 0.0
    learn_games(*weights, batch.boards, batch.offsets, alpha, lam, s.idx, s.val, s.hidden, s.y,
                s.e_w1, s.e_b1, s.e_w2, s.e_b2, s.stats, s.dist, s.binom, s.input_lr)
    return int(s.stats[0]), int(s.stats[1]), float(s.stats[2])

