"""The compiled loops the benchmarks time, in a module of their own: building the command
line's parser imports the benchmarks, and must not load numba."""

from __future__ import annotations

from engine.cache import kernel
from engine.movegen import generate_into


@kernel
def generate_all(boards, dice, buf_boards, buf_steps, buf_hash, zobrist):
    """The number of afterstates of every (boards[k], dice[k])."""
    total = 0
    for k in range(boards.shape[0]):
        total += generate_into(boards[k], dice[k, 0], dice[k, 1], buf_boards, buf_steps,
                               buf_hash, zobrist)
    return total
