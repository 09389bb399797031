"""An exact one-sided bear-off database, built by our own code, and the race odds it gives.

For every way to hold 0..15 checkers on the six home points (C(21, 6) = 54,264
positions) it stores the distribution of the number of rolls needed to bear them all off
when each roll is played to minimise the expected number of rolls (as gnubg's one-sided
database). Two such distributions give the exact winning chance of a bear-off race:
the side on roll needing n rolls wins when the other side needs at least n.

Used where it is exact: both sides have every checker in their home board and have
borne off at least one (so no gammon is possible), which is when P(win) is all there is.
The table takes a few seconds to build and is cached under ~/.cache/tdgammon.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from engine.cache import cache_root, kernel, kernels_compiled
from engine.movegen import _ZOBRIST, MAX_PLAYS, generate_into

N_POSITIONS = 54_264
MAX_ROLLS = 32          # rolls beyond this are lumped into the last bucket (probability < 1e-9)
VERSION = 1

def _binomials() -> np.ndarray:
    from math import comb
    return np.array([[comb(n, k) if k <= n else 0 for k in range(7)] for n in range(22)], dtype=np.int64)


BINOM = _binomials()


@kernel(nogil=True)
def bearoff_index(row, binom):
    """Rank of the home-board counts row[0..5] among all 54,264 (combinatorial number system)."""
    rank = 0
    used = 0
    for i in range(6):
        used += row[i]
        rank += binom[used + i, i + 1]
    return rank


@kernel
def _build(binom, zobrist):
    counts = np.zeros((N_POSITIONS, 6), dtype=np.int8)
    pips = np.zeros(N_POSITIONS, dtype=np.int64)
    row = np.zeros(25, dtype=np.int8)
    c = np.zeros(6, dtype=np.int64)
    # Enumerate every count vector with sum <= 15.
    for a in range(16):
        for b in range(16 - a):
            for d in range(16 - a - b):
                for e in range(16 - a - b - d):
                    for f in range(16 - a - b - d - e):
                        for g in range(16 - a - b - d - e - f):
                            c[0], c[1], c[2], c[3], c[4], c[5] = a, b, d, e, f, g
                            for i in range(6):
                                row[i] = c[i]
                            k = bearoff_index(row, binom)
                            for i in range(6):
                                counts[k, i] = c[i]
                            pips[k] = a + 2 * b + 3 * d + 4 * e + 5 * f + 6 * g
    order = np.argsort(pips, kind="mergesort")
    dist = np.zeros((N_POSITIONS, MAX_ROLLS), dtype=np.float64)
    mean = np.zeros(N_POSITIONS, dtype=np.float64)
    boards = np.empty((MAX_PLAYS, 2, 25), dtype=np.int8)
    steps = np.empty((MAX_PLAYS, 4, 2), dtype=np.int8)
    hashes = np.empty(MAX_PLAYS, dtype=np.int64)
    board = np.zeros((2, 25), dtype=np.int8)
    dist[0, 0] = 1.0  # nothing left: done in zero rolls
    for t in range(1, N_POSITIONS):
        k = order[t]
        board[:, :] = 0
        for i in range(6):
            board[0, i] = counts[k, i]
        for d1 in range(1, 7):
            for d2 in range(1, d1 + 1):
                w = (1.0 if d1 == d2 else 2.0) / 36.0
                n = generate_into(board, d1, d2, boards, steps, hashes, zobrist)
                best = -1
                best_mean = 1e9
                for m in range(n):
                    j = bearoff_index(boards[m, 0], binom)
                    if mean[j] < best_mean:
                        best_mean = mean[j]
                        best = j
                mean[k] += w * (1.0 + best_mean)
                for r in range(MAX_ROLLS - 1):
                    dist[k, r + 1] += w * dist[best, r]
                dist[k, MAX_ROLLS - 1] += w * dist[best, MAX_ROLLS - 1]
    return dist, mean


def _cache_path() -> Path:
    return cache_root() / f"bearoff-v{VERSION}.npy"


_TABLE: np.ndarray | None = None


def _load(path: Path) -> np.ndarray | None:
    try:
        loaded = np.load(path)
    except (OSError, ValueError):
        return None
    return loaded if loaded.shape == (N_POSITIONS, MAX_ROLLS) else None


def table() -> np.ndarray:
    """(54264, MAX_ROLLS) float64: P(all off in exactly n rolls), built once and cached on disk."""
    global _TABLE
    if _TABLE is None:
        path = _cache_path()
        _TABLE = _load(path)
        if _TABLE is None and not kernels_compiled():
            # Interpreted, the build would take minutes: a compiled process builds and saves it.
            subprocess.run([sys.executable, "-c", "from engine.bearoff import table; table()"],
                           cwd=Path(__file__).resolve().parents[1], check=False)
            _TABLE = _load(path)
        if _TABLE is None:
            _TABLE, _ = _build(BINOM, _ZOBRIST)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
                with open(tmp, "wb") as fh:  # a file object: np.save would append ".npy" to a name
                    np.save(fh, _TABLE)
                os.replace(tmp, path)
            except OSError:
                pass  # a read-only home only costs the rebuild next time
    return _TABLE


@kernel(nogil=True)
def exact_race(board):
    """True when the database's answer is exact: all checkers home, both sides have borne off one."""
    for side in range(2):
        total = 0
        for i in range(25):
            if i >= 6 and board[side, i] > 0:
                return False
            total += board[side, i]
        if total == 0 or total == 15:
            return False
    return True


@kernel(nogil=True)
def race_win_probability(board, dist, binom):
    """P(row 0 wins) for an afterstate (row 1 on roll) where exact_race(board) holds."""
    mine = dist[bearoff_index(board[0], binom)]
    theirs = dist[bearoff_index(board[1], binom)]
    # Row 1 rolls first and wins when it needs no more rolls than row 0.
    p_they_win = 0.0
    tail = 1.0  # P(row 0 needs >= n rolls)
    for n in range(MAX_ROLLS):
        p_they_win += theirs[n] * tail
        tail -= mine[n]
    return 1.0 - p_they_win


@kernel
def patch_exact_races(afterstates, probs, dist, binom):
    """Overwrite probs rows of exact bear-off races with the database's answer (gammons 0)."""
    for k in range(afterstates.shape[0]):
        if exact_race(afterstates[k]):
            probs[k, 0] = race_win_probability(afterstates[k], dist, binom)
            for j in range(1, 5):
                probs[k, j] = 0.0


def apply(afterstates: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """probs with every exact bear-off race replaced by its database value (in place, returned)."""
    patch_exact_races(np.ascontiguousarray(afterstates, dtype=np.int8), probs, table(), BINOM)
    return probs
