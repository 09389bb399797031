"""Legal plays exactly as GNU Backgammon generates them, as a numba kernel.

The search mirrors gnubg's GenerateMoves: dice are played in both orders (once for
doubles, where each step starts at or below the previous source so permutations are
not revisited); a checker on the bar must enter first; only plays that use the most
dice, and then the most pips (so the larger die when only one can be played), are
kept; results are de-duplicated by the resulting board.

Boards follow engine.position: int8 (2, 25), row 0 the side on roll. A step is
(source index, destination index): source 24 is the bar, destination -1 is off.
"""

from __future__ import annotations

import threading

import numpy as np

from engine.cache import kernel
from engine.position import BAR, OFF

MAX_PLAYS = 4096

_ZOBRIST = np.random.default_rng(20261129).integers(
    1, 2**63 - 1, size=(2, 25, 16), dtype=np.int64
)


@kernel(inline="always")
def _legal_step(board, src, die):
    """gnubg's LegalMove: may a checker at index src move die pips?"""
    dest = src - die
    if dest >= 0:
        return board[1, 23 - dest] < 2
    back = 0
    for i in range(1, 25):
        if board[0, i] > 0:
            back = i
    return back <= 5 and (src == back or dest == OFF)


@kernel
def _board_hash(board, zobrist):
    h = 0
    for side in range(2):
        for i in range(25):
            h ^= zobrist[side, i, board[side, i]]
    return h


@kernel
def _save(stack, depth, pips, steps_now, out_boards, out_steps, out_hash, meta, zobrist):
    """Keep a finished play if it uses the most dice and pips so far; de-duplicate."""
    n, best_depth, best_pips = meta[0], meta[1], meta[2]
    if depth < best_depth or pips < best_pips:
        return
    if depth > best_depth or pips > best_pips:
        n = 0
        meta[1] = depth
        meta[2] = pips
    board = stack[depth]
    h = _board_hash(board, zobrist)
    for k in range(n):
        if out_hash[k] == h:
            same = True
            for side in range(2):
                for i in range(25):
                    if out_boards[k, side, i] != board[side, i]:
                        same = False
            if same:
                meta[0] = n
                return
    if n >= out_boards.shape[0]:
        raise ValueError("more distinct plays than the output buffer holds")
    out_boards[n] = board
    out_hash[n] = h
    for s in range(4):
        out_steps[n, s, 0] = steps_now[s, 0] if s < depth else -1
        out_steps[n, s, 1] = steps_now[s, 1] if s < depth else -1
    meta[0] = n + 1


@kernel
def _search_order(board, dice, ndice, double, stack, steps_now, out_boards, out_steps,
                  out_hash, meta, zobrist):
    """Depth-first search of one dice order, without recursion (depth <= 4)."""
    next_src = np.empty(5, dtype=np.int64)
    moved = np.zeros(5, dtype=np.bool_)
    stack[0] = board
    next_src[0] = BAR
    depth = 0
    pips = 0
    while depth >= 0:
        if depth == ndice:
            _save(stack, depth, pips, steps_now, out_boards, out_steps, out_hash, meta, zobrist)
            depth -= 1
            if depth >= 0:
                pips -= dice[depth]
            continue
        cur = stack[depth]
        die = dice[depth]
        src = -1
        if cur[0, BAR] > 0:
            if next_src[depth] == BAR and cur[1, die - 1] < 2:
                src = BAR
            next_src[depth] = -1
        else:
            s = min(next_src[depth], 23)
            while s >= 0:
                if cur[0, s] > 0 and _legal_step(cur, s, die):
                    break
                s -= 1
            src = s
            next_src[depth] = s - 1
        if src >= 0:
            moved[depth] = True
            nxt = stack[depth + 1]
            nxt[:, :] = cur
            dest = src - die
            nxt[0, src] -= 1
            if dest >= 0:
                if nxt[1, 23 - dest] == 1:
                    nxt[1, 23 - dest] = 0
                    nxt[1, BAR] += 1
                nxt[0, dest] += 1
            steps_now[depth, 0] = src
            steps_now[depth, 1] = dest if dest >= 0 else OFF
            pips += die
            depth += 1
            next_src[depth] = src if double else BAR
            moved[depth] = False
        else:
            if not moved[depth]:
                _save(stack, depth, pips, steps_now, out_boards, out_steps, out_hash, meta, zobrist)
            depth -= 1
            if depth >= 0:
                pips -= dice[depth]


@kernel
def generate_into(board, d1, d2, out_boards, out_steps, out_hash, zobrist):
    """Write every distinct legal afterstate of (board, d1-d2) into the buffers; return the count.

    Afterstates keep the mover in row 0 (sides not swapped). Zero means no legal play.
    """
    stack = np.empty((5, 2, 25), dtype=np.int8)
    steps_now = np.empty((4, 2), dtype=np.int8)
    meta = np.zeros(3, dtype=np.int64)  # count, most dice used, most pips used
    dice = np.empty(4, dtype=np.int64)
    if d1 == d2:
        for k in range(4):
            dice[k] = d1
        _search_order(board, dice, 4, True, stack, steps_now, out_boards, out_steps,
                      out_hash, meta, zobrist)
    else:
        dice[0], dice[1] = d1, d2
        _search_order(board, dice, 2, False, stack, steps_now, out_boards, out_steps,
                      out_hash, meta, zobrist)
        dice[0], dice[1] = d2, d1
        _search_order(board, dice, 2, False, stack, steps_now, out_boards, out_steps,
                      out_hash, meta, zobrist)
    if meta[1] == 0:
        return 0
    return meta[0]


class PlayBuffers:
    """Reusable output buffers for generate_into (one per thread)."""

    def __init__(self, capacity: int = MAX_PLAYS) -> None:
        self.boards = np.empty((capacity, 2, 25), dtype=np.int8)
        self.steps = np.empty((capacity, 4, 2), dtype=np.int8)
        self.hashes = np.empty(capacity, dtype=np.int64)


_THREAD_BUFFERS = threading.local()


def thread_play_buffers() -> PlayBuffers:
    """This thread's own PlayBuffers, made on first use: searches run in thread pools (the
    web server), and one thread's plays must never land in another's buffers."""
    buffers = getattr(_THREAD_BUFFERS, "plays", None)
    if buffers is None:
        buffers = _THREAD_BUFFERS.plays = PlayBuffers()
    return buffers


def generate(board: np.ndarray, d1: int, d2: int,
             buffers: PlayBuffers | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(afterstates (n, 2, 25), steps (n, 4, 2)) for a board and roll, copies safe to keep."""
    if buffers is None:
        buffers = thread_play_buffers()
    n = generate_into(np.ascontiguousarray(board, dtype=np.int8), d1, d2,
                      buffers.boards, buffers.steps, buffers.hashes, _ZOBRIST)
    return buffers.boards[:n].copy(), buffers.steps[:n].copy()
