"""The race network: a small net for positions without contact, and the evaluator that routes to it.

Why a net of its own: once contact is broken the game is a pure running race, decided by
pips, wasted pips in the bear-off, crossovers and checkers off. A contact-trained net
spends its capacity on hitting and priming and plays races loosely; a small net on race
inputs, fitted to our own search over races that ends in the exact bear-off database,
learns them far better for little cost.

Inputs (RACE_INPUTS = 2 x SIDE_INPUTS, row 0 = the side that just moved, then row 1):
per side, Tesauro's four units for each of the 24 points (1, 2, 3 checkers and (n - 3) / 2
beyond), then checkers off / 15, pips / 100, crossovers (quadrant boundaries its checkers
still have to cross) / 10, checkers outside home / 15, the expected rolls to bear off
its home-board checkers alone (engine.bearoff) / 10, and their wastage (8.17 pips a
roll times those rolls, minus their pips) / 10.

The net is a plain one-hidden-layer sigmoid net stored as four float32 arrays (.npz);
`WithRaceNet` sends race afterstates to it, every position with both sides home to the
bear-off databases (engine.bearoff.apply), and the rest to the contact evaluator.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine import bearoff
from engine.cache import kernel
from engine.errors import CheckpointError
from engine.evaluator import N_OUTPUTS, Evaluator, rule_out_gammons, sanity_clamp
from engine.netfile import read_weights, save_weights, weights_digest
from engine.position import is_race

SIDE_INPUTS = 24 * 4 + 6
RACE_INPUTS = 2 * SIDE_INPUTS
PIPS_PER_ROLL = 8.17  # the mean pips of a roll (49/6): wasted pips = rolls needed x this - pips
RACE_NET_VERSION = 1  # bump when the inputs or the .npz layout change


def home_mean_rolls() -> np.ndarray:
    """(54264,) expected rolls to bear off each home-board position (engine.bearoff's table)."""
    return bearoff.table() @ np.arange(bearoff.MAX_ROLLS, dtype=np.float64)


@kernel(nogil=True)
def side_inputs(row, means, binom, x, base):
    """Write one side's SIDE_INPUTS race inputs (its row of 25 counts) into x[base:]."""
    on_board = 0
    pips = 0
    crossovers = 0
    outside = 0
    home_pips = 0
    for i in range(24):
        n = row[i]
        j = base + 4 * i
        x[j] = 1.0 if n >= 1 else 0.0
        x[j + 1] = 1.0 if n >= 2 else 0.0
        x[j + 2] = 1.0 if n >= 3 else 0.0
        x[j + 3] = (n - 3) / 2.0 if n > 3 else 0.0
        on_board += n
        pips += n * (i + 1)
        crossovers += n * (i // 6)
        if i >= 6:
            outside += n
        else:
            home_pips += n * (i + 1)
    n = row[24]  # never in a race, but the inputs stay defined
    on_board += n
    pips += 25 * n
    crossovers += 4 * n
    outside += n
    rolls = means[bearoff.bearoff_index(row, binom)]
    j = base + 96
    x[j] = (15 - on_board) / 15.0
    x[j + 1] = pips / 100.0
    x[j + 2] = crossovers / 10.0
    x[j + 3] = outside / 15.0
    x[j + 4] = rolls / 10.0
    x[j + 5] = (PIPS_PER_ROLL * rolls - home_pips) / 10.0


@kernel(nogil=True)
def race_inputs(board, means, binom, x):
    """Write the race inputs of one afterstate into x (all RACE_INPUTS entries)."""
    for side in range(2):
        side_inputs(board[side], means, binom, x, SIDE_INPUTS * side)


@kernel(nogil=True)
def encode_races(boards, means, binom, out):
    """race_inputs of each board into the rows of out (n, RACE_INPUTS)."""
    for k in range(boards.shape[0]):
        race_inputs(boards[k], means, binom, out[k])


@kernel(fastmath=True, nogil=True)
def _forward(boards, means, binom, w1, b1, w2, b2, out):
    hidden = np.empty(w1.shape[1], np.float32)
    x = np.empty(RACE_INPUTS, np.float32)
    for k in range(boards.shape[0]):
        race_inputs(boards[k], means, binom, x)
        hidden[:] = b1
        for i in range(RACE_INPUTS):
            v = x[i]
            if v != 0.0:
                row = w1[i]
                for h in range(hidden.shape[0]):
                    hidden[h] += v * row[h]
        for h in range(hidden.shape[0]):
            hidden[h] = 1.0 / (1.0 + np.exp(-hidden[h]))
        for o in range(N_OUTPUTS):
            z = b2[o]
            for h in range(hidden.shape[0]):
                z += hidden[h] * w2[h, o]
            out[k, o] = 1.0 / (1.0 + np.exp(-z))


_MEANS: np.ndarray | None = None


def means() -> np.ndarray:
    """home_mean_rolls, computed once per process."""
    global _MEANS
    if _MEANS is None:
        _MEANS = home_mean_rolls()
    return _MEANS


def encode(boards: np.ndarray) -> np.ndarray:
    """(n, 2, 25) afterstates -> (n, RACE_INPUTS) float32 race inputs."""
    boards = np.ascontiguousarray(boards, dtype=np.int8).reshape(-1, 2, 25)
    out = np.zeros((len(boards), RACE_INPUTS), dtype=np.float32)
    encode_races(boards, means(), bearoff.BINOM, out)
    return out


@dataclass(frozen=True)
class RaceNet:
    """RACE_INPUTS -> H sigmoid -> 5 sigmoid; w1 (RACE_INPUTS, H), b1 (H,), w2 (H, 5), b2 (5,)."""

    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray

    name = "race-net"

    def forward(self, boards: np.ndarray) -> np.ndarray:
        """(n, 2, 25) int8 afterstates -> (n, 5) float32 raw outputs."""
        boards = np.ascontiguousarray(boards, dtype=np.int8).reshape(-1, 2, 25)
        out = np.empty((len(boards), N_OUTPUTS), dtype=np.float32)
        _forward(boards, means(), bearoff.BINOM, self.w1, self.b1, self.w2, self.b2, out)
        return out

    def evaluate(self, afterstates: np.ndarray) -> np.ndarray:
        """The evaluator protocol: forward, sanity clamp, impossible gammons zeroed, bear-offs exact."""
        if len(afterstates) == 0:
            return np.zeros((0, N_OUTPUTS))
        probs = rule_out_gammons(afterstates, sanity_clamp(self.forward(afterstates)))
        return bearoff.apply(afterstates, probs)

    def weights(self) -> dict[str, np.ndarray]:
        return {"w1": self.w1, "b1": self.b1, "w2": self.w2, "b2": self.b2}

    def digest(self) -> str:
        return weights_digest(self.weights())

    def save(self, path: Path) -> None:
        """Atomically, as .npz with a version and the weights' digest (engine.netfile)."""
        save_weights(path, self.weights(), version=RACE_NET_VERSION)

    @classmethod
    def load(cls, path: Path) -> RaceNet:
        """The saved net; engine.errors.CheckpointError when missing, damaged or of another version."""

        def check_header(data) -> None:
            if int(data["version"]) != RACE_NET_VERSION:
                raise CheckpointError(f"race net {path} is version {int(data['version'])}, "
                                      f"this code reads {RACE_NET_VERSION}")

        net = cls(**read_weights(path, "race net", check_header))
        if net.w1.shape[0] != RACE_INPUTS:
            raise CheckpointError(f"race net {path} is damaged")
        return net


@kernel(nogil=True)
def _route(boards, out):
    """0: contact (the contact evaluator), 1: race (the race net), 2: both sides home (the databases)."""
    for k in range(boards.shape[0]):
        if bearoff.both_home(boards[k]):
            out[k] = 2
        elif is_race(boards[k]):
            out[k] = 1
        else:
            out[k] = 0


def routes(afterstates: np.ndarray) -> np.ndarray:
    """Per afterstate, which judge answers it under WithRaceNet (see _route)."""
    boards = np.ascontiguousarray(afterstates, dtype=np.int8).reshape(-1, 2, 25)
    out = np.empty(len(boards), dtype=np.int8)
    _route(boards, out)
    return out


class WithRaceNet:
    """An evaluator that answers races with a race judge (a RaceNet, or the one-sided
    engine.race_dists.RaceDistNet) and the rest with `contact`.

    Positions with both sides home get the bear-off databases' values whichever judge
    scored them. Given `pre_move_race` (the search passes it: accepts_pre_move_race), a
    race afterstate goes to the race judge only when the position before the move was a
    race too: the plays of one contact decision, some of which break contact, are then
    all valued by one judge, the contact net. Only the rows each judge answers are sent
    to it, in their order.
    """

    accepts_pre_move_race = True

    def __init__(self, contact: Evaluator, race: Evaluator) -> None:
        self.contact = contact
        self.race = race
        self.name = getattr(contact, "name", "network")

    def evaluate(self, afterstates: np.ndarray, pre_move_race: np.ndarray | None = None) -> np.ndarray:
        afterstates = np.ascontiguousarray(afterstates, dtype=np.int8).reshape(-1, 2, 25)
        route = routes(afterstates)
        probs = np.zeros((len(afterstates), N_OUTPUTS))
        contact = route == 0
        if pre_move_race is not None:
            contact = contact | ~np.asarray(pre_move_race, dtype=bool)
        if contact.all():
            return np.asarray(self.contact.evaluate(afterstates), dtype=np.float64)
        if contact.any():
            probs[contact] = self.contact.evaluate(afterstates[contact])
        probs[~contact] = self.race.evaluate(afterstates[~contact])
        return probs
