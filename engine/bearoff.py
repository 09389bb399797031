"""Exact bear-off databases, built by our own code, and the race odds and cube values they give.

For every way to hold 0..15 checkers on the six home points (C(21, 6) = 54,264
positions) the first table stores the distribution of the number of rolls needed to bear them all off
when each roll is played to minimise the expected number of rolls (as gnubg's one-sided
database). Two such distributions give the exact winning chance of a bear-off race:
the side on roll needing n rolls wins when the other side needs at least n.

A second table holds, for the positions of all 15 checkers, the distribution of the
number of rolls needed to bear off the FIRST checker (played to minimise its expectation),
which gives the gammon chances when a side has not yet borne off, as gnubg's does.

A third, two-sided table holds exact cubeful money equities of the small bear-offs (at
most six checkers a side), as gnubg's two-sided database: engine.cube reads it.

The first two are used whenever both sides have every checker in their home board
(`both_home`): then P(win) and both gammons follow from the two sides' distributions, and no backgammon is
possible. The win table is exact for play-to-finish-fastest; races where a side would
rather play for or against the gammon differ from it by a few hundredths at most.
The tables take seconds to build (the two-sided one under a minute) and are cached
under ~/.cache/tdgammon.
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
def _positions(most, binom):
    """(counts, pips) of every way to hold 0..most checkers on the six home points, in
    bearoff_index order (it ranks the positions of fewer checkers first: C(most + 6, 6) of them)."""
    n = binom[most + 6, 6]
    counts = np.zeros((n, 6), dtype=np.int8)
    pips = np.zeros(n, dtype=np.int64)
    row = np.zeros(25, dtype=np.int8)
    for a in range(most + 1):
        for b in range(most + 1 - a):
            for d in range(most + 1 - a - b):
                for e in range(most + 1 - a - b - d):
                    for f in range(most + 1 - a - b - d - e):
                        for g in range(most + 1 - a - b - d - e - f):
                            row[0], row[1], row[2], row[3], row[4], row[5] = a, b, d, e, f, g
                            k = bearoff_index(row, binom)
                            for i in range(6):
                                counts[k, i] = row[i]
                            pips[k] = a + 2 * b + 3 * d + 4 * e + 5 * f + 6 * g
    return counts, pips


@kernel
def _build(binom, zobrist, first_off):
    """(dist, mean) of the rolls needed to bear off every checker or, with first_off, the
    first one (a position below 15 checkers needs none), each roll played to minimise the
    expected rolls."""
    counts, pips = _positions(15, binom)
    # Every play lowers the pips, so in this order a position's successors come before it.
    order = np.argsort(pips, kind="mergesort")
    dist = np.zeros((N_POSITIONS, MAX_ROLLS), dtype=np.float64)
    mean = np.zeros(N_POSITIONS, dtype=np.float64)
    boards = np.empty((MAX_PLAYS, 2, 25), dtype=np.int8)
    steps = np.empty((MAX_PLAYS, 4, 2), dtype=np.int8)
    hashes = np.empty(MAX_PLAYS, dtype=np.int64)
    board = np.zeros((2, 25), dtype=np.int8)
    for t in range(N_POSITIONS):
        k = order[t]
        total = 0
        for i in range(6):
            total += counts[k, i]
        if total == 0 or (first_off and total < 15):
            dist[k, 0] = 1.0  # done in zero rolls
            continue
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


_TABLES: dict[str, np.ndarray] = {}


def _load(path: Path, shape: tuple[int, ...]) -> np.ndarray | None:
    try:
        loaded = np.load(path)
    except (OSError, ValueError):
        return None
    return loaded if loaded.shape == shape else None


def _cached(name: str, builder, shape: tuple[int, ...] = (N_POSITIONS, MAX_ROLLS),
            build: str = "b.table(); b.gammon_table()") -> np.ndarray:
    """A table from the disk cache, or built and saved there."""
    if name not in _TABLES:
        path = cache_root() / f"{name}-v{VERSION}.npy"
        loaded = _load(path, shape)
        if loaded is None and not kernels_compiled():
            # Interpreted, the build would take minutes: a compiled process builds and saves the table.
            subprocess.run([sys.executable, "-c", f"import engine.bearoff as b; {build}"],
                           cwd=Path(__file__).resolve().parents[1], check=False)
            loaded = _load(path, shape)
        if loaded is not None:
            _TABLES[name] = loaded
        else:
            _TABLES[name] = builder()
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
                with open(tmp, "wb") as fh:  # a file object: np.save would append ".npy" to a name
                    np.save(fh, _TABLES[name])
                os.replace(tmp, path)
            except OSError:
                pass  # a read-only home only costs the rebuild next time
    return _TABLES[name]


def table() -> np.ndarray:
    """(54264, MAX_ROLLS) float64: P(all off in exactly n rolls), built once and cached on disk."""
    return _cached("bearoff", lambda: _build(BINOM, _ZOBRIST, False)[0])


def gammon_table() -> np.ndarray:
    """(54264, MAX_ROLLS) float64: P(first checker off in exactly n rolls) (n = 0 below 15 checkers)."""
    return _cached("bearoff-first-off", lambda: _build(BINOM, _ZOBRIST, True)[0])


@kernel(nogil=True)
def exact_race(board):
    """True when no gammon is left and the win table alone answers: all checkers home, both
    sides have borne off one (the stop rule of self-play and rollouts)."""
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
def both_home(board):
    """True when every checker of both sides is in its home board and neither has finished."""
    for side in range(2):
        total = 0
        for i in range(25):
            if i >= 6 and board[side, i] > 0:
                return False
            total += board[side, i]
        if total == 0:
            return False
    return True


@kernel(nogil=True)
def first_no_later(first, second):
    """P(a count drawn from `first` is at most one drawn from `second`), independent: the side
    rolling first, needing `first` rolls, is done no later; sum over n of first[n] * P(second >= n)."""
    p = 0.0
    tail = 1.0  # P(second >= n)
    for n in range(MAX_ROLLS):
        p += first[n] * tail
        tail -= second[n]
    return p


@kernel(nogil=True)
def race_win_probability(board, dist, binom):
    """P(row 0 wins) for an afterstate (row 1 on roll) where both_home(board) holds."""
    mine = dist[bearoff_index(board[0], binom)]
    theirs = dist[bearoff_index(board[1], binom)]
    # Row 1 rolls first and wins when it needs no more rolls than row 0.
    return 1.0 - first_no_later(theirs, mine)


@kernel(nogil=True)
def home_race_probabilities(board, dist, gammon, binom, out):
    """The five outputs, from row 0's view, of an afterstate (row 1 on roll) where both_home holds.

    Row 1 wins a gammon when it finishes on its n-th roll before row 0's first checker is
    off (row 0 needs >= n rolls for it); row 0 wins one when it finishes on its m-th roll
    and row 1 needs more than m rolls for its first checker. No backgammon: all are home.
    """
    i0, i1 = bearoff_index(board[0], binom), bearoff_index(board[1], binom)
    out[:] = 0.0
    out[0] = 1.0 - first_no_later(dist[i1], dist[i0])
    if gammon[i1, 0] < 1.0:  # row 1 still has all 15
        tail = 1.0  # P(row 1's first off needs > m rolls)
        for m in range(MAX_ROLLS):
            tail -= gammon[i1, m]
            out[1] += dist[i0, m] * tail
    if gammon[i0, 0] < 1.0:
        out[3] = first_no_later(dist[i1], gammon[i0])


@kernel
def patch_home_races(afterstates, probs, dist, gammon, binom):
    """Overwrite the probs rows of afterstates with both sides home by the databases' answer."""
    for k in range(afterstates.shape[0]):
        if both_home(afterstates[k]):
            home_race_probabilities(afterstates[k], dist, gammon, binom, probs[k])


def apply(afterstates: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """probs with every position of both sides home replaced by its database value (in place,
    returned): exact (the two-sided table) when both sides are small, else the one-sided tables'."""
    boards = np.ascontiguousarray(afterstates, dtype=np.int8)
    patch_home_races(boards, probs, table(), gammon_table(), BINOM)
    return patch_small_races(boards, probs)


def patch_small_races(afterstates: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """probs (row 0's view, row 1 on roll) with every small bear-off's P(win) the two-sided
    table's, exact, in place. Why: two one-sided distributions, each played to finish soonest
    on average, miss plays that win more often (gnubg's two-sided database does the same)."""
    boards = np.ascontiguousarray(afterstates, dtype=np.int8).reshape(-1, 2, 25)
    if len(boards) and _any_small(boards, BINOM):  # the table is loaded only when needed
        _patch_small(boards, probs, cubeful_table(), BINOM)
    return probs


# ---------------------------------------------------------------------------------------
# The two-sided cubeful table of small bear-offs (money play)

SMALL_CHECKERS = 6  # a side's checkers at most, as in gnubg's two-sided database
N_SMALL = 924  # ways to hold 0..6 checkers on six points, C(12, 6): bearoff_index ranks them 0..923
CENTRED, ROLLER_OWNS, OPPONENT_OWNS, CUBELESS = range(4)  # cube states, seen by the side on roll
"""CUBELESS: the cube dead, the cubeless equity 2 P(win) - 1 (no gammons are left)."""


@kernel
def _build_cubeful(binom, zobrist):
    """(4, N_SMALL, N_SMALL): the side on roll's no-double equity per unit of the cube, for
    each cube state, indexed by its small position and then the opponent's; every roll and
    every later cube action of both sides chosen to maximise cubeful equity, no gammons
    (both sides have borne off). Money play with no cube limit: the taker passes when
    taking would cost more than the point the pass gives away. The CUBELESS plane plays
    every roll for P(win) alone."""
    counts, pips = _positions(SMALL_CHECKERS, binom)
    # Each position's successors for each of the 21 rolls, flat: start[s, r]..start[s, r + 1].
    boards = np.empty((MAX_PLAYS, 2, 25), dtype=np.int8)
    steps = np.empty((MAX_PLAYS, 4, 2), dtype=np.int8)
    hashes = np.empty(MAX_PLAYS, dtype=np.int64)
    board = np.zeros((2, 25), dtype=np.int8)
    start = np.zeros((N_SMALL, 22), dtype=np.int64)
    succ = np.empty(N_SMALL * 21 * 64, dtype=np.int64)  # a roll of a small position has at most 35 plays
    weight = np.empty(21)
    used = 0
    for s in range(1, N_SMALL):
        board[:, :] = 0
        for i in range(6):
            board[0, i] = counts[s, i]
        r = 0
        for d1 in range(1, 7):
            for d2 in range(1, d1 + 1):
                weight[r] = (1.0 if d1 == d2 else 2.0) / 36.0
                start[s, r] = used
                for m in range(generate_into(board, d1, d2, boards, steps, hashes, zobrist)):
                    succ[used] = bearoff_index(boards[m, 0], binom)
                    used += 1
                r += 1
        start[s, 21] = used
    # A pair's values need only pairs of fewer pips in all: fill them in that order.
    total = (pips.reshape(-1, 1) + pips.reshape(1, -1)).ravel()
    nd = np.zeros((4, N_SMALL, N_SMALL))
    best = np.empty(4)
    for pair in np.argsort(total, kind="mergesort"):
        s, t = pair // N_SMALL, pair % N_SMALL
        if s == 0 or t == 0:
            continue  # a side with nothing left has won
        for r in range(21):
            best[:] = -np.inf
            for j in range(start[s, r], start[s, r + 1]):
                s2 = succ[j]
                if s2 == 0:
                    best[:] = 1.0  # borne off: a single win, whatever the cube
                    break
                # The opponent on roll at (t, s2), after its own best cube action.
                double_take = min(2.0 * nd[OPPONENT_OWNS, t, s2], 1.0)
                best[CENTRED] = max(best[CENTRED], -max(nd[CENTRED, t, s2], double_take))
                best[ROLLER_OWNS] = max(best[ROLLER_OWNS], -nd[OPPONENT_OWNS, t, s2])
                best[OPPONENT_OWNS] = max(best[OPPONENT_OWNS], -max(nd[ROLLER_OWNS, t, s2], double_take))
                best[CUBELESS] = max(best[CUBELESS], -nd[CUBELESS, t, s2])
            for c in range(4):
                nd[c, s, t] += weight[r] * best[c]
    return nd


def cubeful_table() -> np.ndarray:
    """(4, N_SMALL, N_SMALL) float64 no-double equities of small bear-offs (_build_cubeful)."""
    return _cached("bearoff-two-sided-cubeful", lambda: _build_cubeful(BINOM, _ZOBRIST),
                   (4, N_SMALL, N_SMALL), "b.cubeful_table()")


@kernel(nogil=True)
def small_index(side_row, binom):
    """A side's index in cubeful_table, or -1 unless its checkers are all home and at most SMALL_CHECKERS."""
    total = 0
    for i in range(25):
        if i >= 6 and side_row[i] > 0:
            return -1
        total += side_row[i]
    if total == 0 or total > SMALL_CHECKERS:
        return -1
    return bearoff_index(side_row, binom)


@kernel(nogil=True)
def _any_small(boards, binom):
    for k in range(boards.shape[0]):
        if small_index(boards[k, 0], binom) >= 0 and small_index(boards[k, 1], binom) >= 0:
            return True
    return False


@kernel(nogil=True)
def _patch_small(boards, probs, small, binom):
    for k in range(boards.shape[0]):
        mine = small_index(boards[k, 0], binom)
        theirs = small_index(boards[k, 1], binom)
        if mine >= 0 and theirs >= 0:
            probs[k, :] = 0.0
            probs[k, 0] = 0.5 * (1.0 - small[CUBELESS, theirs, mine])  # row 1 on roll
