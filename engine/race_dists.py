"""The one-sided race net: each side's distribution of rolls to finish, to save the gammon
and to save the backgammon, and the race odds two such distributions give.

Why one-sided: without contact the two sides race independently, so a race is decided
by two one-sided quantities, exactly as the bear-off databases (engine.bearoff) decide a
race with both sides home. Outside the home board there are far too many positions for
a table, so a small net learns the tables' extension by our own dynamic programming
(training/race_dists.py): each side's roll counts, played to minimise their expectation.

Per side (its row of 25 counts) three distributions over 0..MAX_ROLLS-1 rolls:
- ALL_OFF: rolls to bear off every checker (who wins);
- FIRST_OFF: rolls to bear off the first one (0 once one is off: the gammons);
- ZONE_OUT: rolls until no checker is left in the opponent's home board (the backgammons).
A side with every checker home reads the first two from the bear-off databases, exactly.

Two sides' distributions give the five outputs of an afterstate (row 1 on roll, so it
rolls first and wins ties of roll counts), as engine.bearoff.home_race_probabilities
does for the home boards: row 1 wins when its ALL_OFF count is at most row 0's, wins a
gammon when it is at most row 0's FIRST_OFF count, a backgammon when at most its ZONE_OUT
count; and the same for row 0 with strict inequality.

A side's inputs (ONE_INPUTS): Tesauro's four units for each of the 24 points (1, 2, 3
checkers and (n - 3) / 2 beyond), then checkers off / 15, pips / 100, crossovers
(quadrant boundaries its checkers still have to cross) / 10, checkers outside home / 15,
the expected rolls to bear off its home-board checkers alone (engine.bearoff) / 10 and
their wastage (8.17 pips a roll times those rolls, minus their pips) / 10; then what sets
the first checker off and the backgammon apart: pips still to travel to reach home / 50,
the rearmost checker's point / 24, pips to leave the opponent's home board / 20 and
checkers still there / 5.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine import bearoff
from engine.cache import FAST_MATH, kernel
from engine.errors import CheckpointError
from engine.evaluator import N_OUTPUTS
from engine.netfile import read_weights, save_weights, weights_digest

ROLLS = bearoff.MAX_ROLLS
HEADS = 3  # ALL_OFF, FIRST_OFF, ZONE_OUT
ALL_OFF, FIRST_OFF, ZONE_OUT = range(HEADS)
ZONE = 18  # the opponent's home board: this side's points 19..24 (indices 18..23) and the bar
MEAN_SCALE = 10.0  # the MEAN outputs are expected rolls / 10
ONE_INPUTS = 24 * 4 + 10  # a side's inputs (module docstring)
PIPS_PER_ROLL = 8.17  # the mean pips of a roll (49/6): wasted pips = rolls needed x this - pips
KIND = "one-sided"
VERSION = 2


@functools.cache
def home_mean_rolls() -> np.ndarray:
    """(54264,) expected rolls to bear off each home-board position (engine.bearoff's table),
    computed once per process."""
    return bearoff.table() @ np.arange(bearoff.MAX_ROLLS, dtype=np.float64)


@kernel(nogil=True)
def is_home(row):
    """Every checker of this side in its home board (or off)."""
    for i in range(6, 25):
        if row[i] > 0:
            return False
    return True


@kernel(nogil=True)
def in_zone(row):
    """Checkers of this side in the opponent's home board or on the bar."""
    n = 0
    for i in range(ZONE, 25):
        n += row[i]
    return n


@kernel(nogil=True)
def one_sided_inputs(row, mean_rolls, binom, x):
    """Write the ONE_INPUTS inputs of one side (its row of 25 counts) into x (module docstring)."""
    on_board = pips = crossovers = outside = home_pips = 0
    to_home = rear = to_leave = left = 0
    for i in range(25):  # the bar (24) is never held in a race, but the inputs stay defined
        n = row[i]
        if i < 24:
            j = 4 * i
            x[j] = 1.0 if n >= 1 else 0.0
            x[j + 1] = 1.0 if n >= 2 else 0.0
            x[j + 2] = 1.0 if n >= 3 else 0.0
            x[j + 3] = (n - 3) / 2.0 if n > 3 else 0.0
        on_board += n
        pips += n * (i + 1)
        crossovers += n * (i // 6)
        if n > 0:
            rear = i + 1
        if i >= 6:
            outside += n
            to_home += n * (i - 5)
        else:
            home_pips += n * (i + 1)
        if i >= ZONE:
            to_leave += n * (i - ZONE + 1)
            left += n
    rolls = mean_rolls[bearoff.bearoff_index(row, binom)]
    x[96] = (15 - on_board) / 15.0
    x[97] = pips / 100.0
    x[98] = crossovers / 10.0
    x[99] = outside / 15.0
    x[100] = rolls / 10.0
    x[101] = (PIPS_PER_ROLL * rolls - home_pips) / 10.0
    x[102] = to_home / 50.0
    x[103] = rear / 24.0
    x[104] = to_leave / 20.0
    x[105] = left / 5.0


@kernel(fastmath=FAST_MATH, nogil=True)
def net_hidden(row, mean_rolls, binom, w1, b1, x, hidden):
    """The hidden layer of one side's row into `hidden`."""
    one_sided_inputs(row, mean_rolls, binom, x)
    hidden[:] = b1
    for i in range(ONE_INPUTS):
        v = x[i]
        if v != 0.0:
            for h in range(hidden.shape[0]):
                hidden[h] += v * w1[i, h]
    for h in range(hidden.shape[0]):
        hidden[h] = 1.0 / (1.0 + np.exp(-hidden[h]))


@kernel(fastmath=FAST_MATH, nogil=True)
def net_means(row, mean_rolls, binom, w1, b1, w2, b2, x, hidden, out):
    """The net's expected rolls of each count (its linear MEAN outputs, in rolls) into out (HEADS,)."""
    net_hidden(row, mean_rolls, binom, w1, b1, x, hidden)
    for head in range(HEADS):
        z = b2[HEADS * ROLLS + head]
        for h in range(hidden.shape[0]):
            z += hidden[h] * w2[h, HEADS * ROLLS + head]
        out[head] = MEAN_SCALE * z


@kernel(fastmath=FAST_MATH, nogil=True)
def net_dists(row, mean_rolls, binom, w1, b1, w2, b2, x, hidden, out):
    """The net's three distributions of one side (not all home) into out (HEADS, ROLLS)."""
    net_hidden(row, mean_rolls, binom, w1, b1, x, hidden)
    for head in range(HEADS):
        for r in range(ROLLS):
            out[head, r] = b2[head * ROLLS + r]
    for h in range(hidden.shape[0]):
        v = hidden[h]
        for head in range(HEADS):
            for r in range(ROLLS):
                out[head, r] += v * w2[h, head * ROLLS + r]
    for head in range(HEADS):
        top = -1e30
        for r in range(ROLLS):
            if out[head, r] > top:
                top = out[head, r]
        out[head, 0] = 0.0  # a side the net answers has a checker outside: never done in 0 rolls
        total = 0.0
        for r in range(1, ROLLS):
            out[head, r] = np.exp(out[head, r] - top)
            total += out[head, r]
        for r in range(ROLLS):
            out[head, r] /= total


@kernel(nogil=True)
def side_dists(row, dist, gammon, mean_rolls, binom, w1, b1, w2, b2, x, hidden, out):
    """One side's three distributions: the databases when all home, else the net; an empty
    zone or a checker already off are certainties (0 rolls)."""
    if is_home(row):
        k = bearoff.bearoff_index(row, binom)
        for r in range(ROLLS):
            out[ALL_OFF, r] = dist[k, r]
            out[FIRST_OFF, r] = gammon[k, r]
            out[ZONE_OUT, r] = 0.0
    else:
        net_dists(row, mean_rolls, binom, w1, b1, w2, b2, x, hidden, out)
    total = 0
    for i in range(25):
        total += row[i]
    if total < 15:  # a checker is off: no gammon, no backgammon
        for r in range(ROLLS):
            out[FIRST_OFF, r] = 0.0
        out[FIRST_OFF, 0] = 1.0
    if total < 15 or in_zone(row) == 0:
        for r in range(ROLLS):
            out[ZONE_OUT, r] = 0.0
        out[ZONE_OUT, 0] = 1.0


@kernel(nogil=True)
def combine(mine, theirs, out):
    """The five outputs from row 0's view, row 0's distributions `mine`, row 1 (on roll) `theirs`."""
    out[0] = 1.0 - bearoff.first_no_later(theirs[ALL_OFF], mine[ALL_OFF])
    out[1] = 1.0 - bearoff.first_no_later(theirs[FIRST_OFF], mine[ALL_OFF])
    out[2] = 1.0 - bearoff.first_no_later(theirs[ZONE_OUT], mine[ALL_OFF])
    out[3] = bearoff.first_no_later(theirs[ALL_OFF], mine[FIRST_OFF])
    out[4] = bearoff.first_no_later(theirs[ALL_OFF], mine[ZONE_OUT])
    # A side's gammon needs its win, a backgammon its gammon: hold the order against the net's slack.
    out[1] = min(max(out[1], 0.0), out[0])
    out[2] = min(max(out[2], 0.0), out[1])
    out[3] = min(max(out[3], 0.0), 1.0 - out[0])
    out[4] = min(max(out[4], 0.0), out[3])


@kernel(nogil=True)
def race_probabilities(boards, dist, gammon, mean_rolls, binom, w1, b1, w2, b2, out):
    """out (n, 5): each race afterstate's outputs from its two sides' distributions."""
    x = np.empty(ONE_INPUTS, np.float32)
    hidden = np.empty(w1.shape[1], np.float32)
    mine = np.empty((HEADS, ROLLS), np.float64)
    theirs = np.empty((HEADS, ROLLS), np.float64)
    for k in range(boards.shape[0]):
        side_dists(boards[k, 0], dist, gammon, mean_rolls, binom, w1, b1, w2, b2, x, hidden, mine)
        same = k > 0  # the side on roll is the same in every play of one roll: computed once
        if same:
            for i in range(25):
                if boards[k, 1, i] != boards[k - 1, 1, i]:
                    same = False
                    break
        if not same:
            side_dists(boards[k, 1], dist, gammon, mean_rolls, binom, w1, b1, w2, b2, x, hidden, theirs)
        combine(mine, theirs, out[k])


@dataclass(frozen=True)
class RaceDistNet:
    """ONE_INPUTS -> H sigmoid -> HEADS x ROLLS softmax, then HEADS linear expected rolls
    (the training's cheap choice of play); w1 (ONE_INPUTS, H), b1 (H,),
    w2 (H, HEADS * ROLLS + HEADS), b2 (HEADS * ROLLS + HEADS,)."""

    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray

    name = "race-dists"

    def dists(self, rows: np.ndarray) -> np.ndarray:
        """(n, 25) int8 side rows -> (n, HEADS, ROLLS) distributions (databases when home)."""
        rows = np.ascontiguousarray(rows, dtype=np.int8).reshape(-1, 25)
        out = np.empty((len(rows), HEADS, ROLLS))
        _side_rows(rows, bearoff.table(), bearoff.gammon_table(), home_mean_rolls(), bearoff.BINOM,
                   self.w1, self.b1, self.w2, self.b2, out)
        return out

    def evaluate(self, afterstates: np.ndarray) -> np.ndarray:
        """The evaluator protocol for race afterstates (no contact), from row 0's view."""
        boards = np.ascontiguousarray(afterstates, dtype=np.int8).reshape(-1, 2, 25)
        out = np.zeros((len(boards), N_OUTPUTS))
        race_probabilities(boards, bearoff.table(), bearoff.gammon_table(), home_mean_rolls(), bearoff.BINOM,
                           self.w1, self.b1, self.w2, self.b2, out)
        return bearoff.patch_small_races(boards, out)

    def weights(self) -> dict[str, np.ndarray]:
        return {"w1": self.w1, "b1": self.b1, "w2": self.w2, "b2": self.b2}

    def digest(self) -> str:
        return weights_digest(self.weights())

    def save(self, path: Path) -> None:
        """Atomically, as .npz with its kind, a version and the weights' digest (engine.netfile)."""
        save_weights(path, self.weights(), kind=KIND, version=VERSION)

    @classmethod
    def load(cls, path: Path) -> RaceDistNet:
        """The saved net; engine.errors.CheckpointError when missing, damaged or of another version."""

        def check_header(data) -> None:
            if "kind" not in data.files or str(data["kind"]) != KIND or int(data["version"]) != VERSION:
                raise CheckpointError(f"race net {path} is not a {KIND} net of version {VERSION}")

        net = cls(**read_weights(path, "race net", check_header))
        if net.w1.shape[0] != ONE_INPUTS or net.w2.shape != (net.w1.shape[1], HEADS * ROLLS + HEADS):
            raise CheckpointError(f"race net {path} is damaged")
        return net


@kernel(nogil=True)
def _side_rows(rows, dist, gammon, mean_rolls, binom, w1, b1, w2, b2, out):
    x = np.empty(ONE_INPUTS, np.float32)
    hidden = np.empty(w1.shape[1], np.float32)
    for k in range(rows.shape[0]):
        side_dists(rows[k], dist, gammon, mean_rolls, binom, w1, b1, w2, b2, x, hidden, out[k])


@kernel(nogil=True)
def _encode(rows, mean_rolls, binom, out):
    for k in range(rows.shape[0]):
        one_sided_inputs(rows[k], mean_rolls, binom, out[k])


def encode(rows: np.ndarray) -> np.ndarray:
    """(n, 25) one side's rows -> (n, ONE_INPUTS) float32 inputs of the net."""
    rows = np.ascontiguousarray(rows, dtype=np.int8).reshape(-1, 25)
    out = np.zeros((len(rows), ONE_INPUTS), dtype=np.float32)
    _encode(rows, home_mean_rolls(), bearoff.BINOM, out)
    return out
