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
from engine.evaluator import N_OUTPUTS
from training.kernels import (NetArrays, Schedule, Scratch, choose_net, fixed_view, forward_sparse,
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
def play_games(net, n_games, epsilon, rng, moves, end, out, offsets):
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
            m = choose_net(net, board, d1, d2, epsilon, rng, moves, end)
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
        n = play_games(NetArrays(*weights), n_games, epsilon, rng, scratch.moves, scratch.end,
                       out, offsets)
        if n >= 0:
            return out[:n].copy(), offsets
        capacity *= 2
        rng[:] = start


# ---------------------------------------------------------------------- learner kernel
@kernel(nogil=True)
def learn_games(net, boards, offsets, sched, enc, td, end):
    """Online TD(lambda) over recorded games, in order, updating the weights after every move.

    Same update as kernels.train_games: predictions are fixed-view (the opening mover's),
    the TD error is the difference of consecutive predictions and, at the end, the exact
    result; traces hold the gradients of the 5 outputs. stats += games, moves, sum |TD error|.
    """
    prev = np.empty(N_OUTPUTS, dtype=np.float32)
    cur = np.empty(N_OUTPUTS, dtype=np.float32)
    features = net.w1.shape[0] > N_INPUTS
    idx, val, _, y = enc
    for g in range(offsets.shape[0] - 1):
        reset_traces(td)
        start = offsets[g]
        stop = offsets[g + 1]
        for t in range(start, stop):
            board = boards[t]
            flipped = ((t - start) % 2) == 1
            if is_terminal(board, end.dist):
                terminal_value(board, end.dist, end.binom, y)
                m = -1
            else:
                m = encode_sparse_features(board, idx, val) if features else encode_sparse(board, idx, val)
                forward_sparse(net, enc, m)
            fixed_view(y, flipped, cur)
            td_step(net, td, sched, prev, cur, t == start, enc, m, flipped)
            if m < 0:
                break
        td.stats[0] += 1
        td.stats[1] += stop - start


def learn(weights: tuple[np.ndarray, ...], batch: TrajectoryBatch, alpha: float, lam: float,
          scratch: Scratch) -> tuple[int, int, float]:
    """Apply one batch to the weights in place; returns (games, moves, summed |TD error|)."""
    stats = scratch.td.stats
    stats[:] = 0.0
    learn_games(NetArrays(*weights), batch.boards, batch.offsets, Schedule(float(alpha), float(lam), 0.0),
                scratch.moves.cand, scratch.td, scratch.end)
    return int(stats[0]), int(stats[1]), float(stats[2])

