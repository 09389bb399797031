"""Tesauro's pubeval (1993), the classic benchmark opponent, as an Evaluator.

pubeval is a linear move scorer: 122 inputs of the board after a candidate play, seen
from the mover, dotted with one of two weight vectors. The weights and the encoding in
words are in engine/data/pubeval.json (copied from GNU Backgammon's pub_eval.c).

Which weights: pubeval uses the race weights when the position BEFORE the move is a race.
The Evaluator protocol only sees afterstates, and a play can turn a contact position
into a race, so the afterstate alone is not always enough. `evaluate` therefore takes an
optional `pre_move_race` flag per afterstate; the search (engine.search) passes it to any
evaluator whose `accepts_pre_move_race` is True, which makes the 1-ply player choose
exactly as pubeval would. Without the flags the afterstate's own race status is used
(the same answer except for the play that breaks the last contact).

Probabilities: pubeval has no probabilities, only a score. P(win) = sigmoid(score / 10),
every gammon output 0, so cubeless equity (2 P(win) - 1) is strictly increasing in the
score and move ranking is exactly pubeval's (the scale keeps the sigmoid away from 1.0
in float64 for any reachable score). A play that bears off the last checker scores
+infinity, P(win) = 1.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from engine.cache import kernel

from engine.evaluator import N_OUTPUTS
from engine.position import race_flags

N_PUBEVAL_INPUTS = 122
SCORE_SCALE = 10.0
DATA = Path(__file__).resolve().parent / "data" / "pubeval.json"


def load_weights(path: Path = DATA) -> tuple[np.ndarray, np.ndarray]:
    """(race_weights, contact_weights), float64 (122,) each."""
    data = json.loads(Path(path).read_text())
    race = np.asarray(data["race_weights"], dtype=np.float64)
    contact = np.asarray(data["contact_weights"], dtype=np.float64)
    if race.shape != (N_PUBEVAL_INPUTS,) or contact.shape != (N_PUBEVAL_INPUTS,):
        raise ValueError(f"{path}: pubeval needs 2 x {N_PUBEVAL_INPUTS} weights")
    return race, contact


@kernel
def pubeval_inputs(board, x):
    """Write pubeval's 122 inputs of one afterstate (row 0 = mover) into x (float64[122])."""
    x[:] = 0.0
    for p in range(24, 0, -1):
        n = board[0, p - 1] - board[1, 24 - p]
        k = 5 * (24 - p)
        if n == -1:
            x[k] = 1.0
        elif n == 1:
            x[k + 1] = 1.0
        if n >= 2:
            x[k + 2] = 1.0
        if n == 3:
            x[k + 3] = 1.0
        if n >= 4:
            x[k + 4] = (n - 3) / 2.0
    x[120] = board[1, 24] / 2.0
    on = 0
    for i in range(25):
        on += board[0, i]
    x[121] = (15 - on) / 15.0


@kernel
def pubeval_scores(afterstates, race, race_weights, contact_weights):
    """Raw pubeval scores of a batch; +inf where the mover has borne off all 15."""
    n = afterstates.shape[0]
    out = np.empty(n, dtype=np.float64)
    x = np.empty(N_PUBEVAL_INPUTS, dtype=np.float64)
    for k in range(n):
        on = 0
        for i in range(25):
            on += afterstates[k, 0, i]
        if on == 0:
            out[k] = np.inf
            continue
        pubeval_inputs(afterstates[k], x)
        w = race_weights if race[k] else contact_weights
        s = 0.0
        for i in range(N_PUBEVAL_INPUTS):
            s += w[i] * x[i]
        out[k] = s
    return out


class PubevalEvaluator:
    """engine.evaluator.Evaluator for pubeval: P(win) = sigmoid(score / 10), gammons 0."""

    accepts_pre_move_race = True

    def __init__(self, path: Path = DATA) -> None:
        self.name = "pubeval"
        self.race_weights, self.contact_weights = load_weights(path)

    def scores(self, afterstates: np.ndarray, pre_move_race: np.ndarray | None = None) -> np.ndarray:
        """pubeval's raw scores; pre_move_race chooses the weights (default: the afterstate's race status)."""
        boards = np.ascontiguousarray(afterstates, dtype=np.int8).reshape(-1, 2, 25)
        if pre_move_race is None:
            race = race_flags(boards)
        else:
            race = np.broadcast_to(np.asarray(pre_move_race, dtype=np.bool_), (len(boards),)).copy()
        return pubeval_scores(boards, race, self.race_weights, self.contact_weights)

    def evaluate(self, afterstates: np.ndarray, pre_move_race: np.ndarray | None = None) -> np.ndarray:
        """(n, 2, 25) afterstates -> (n, 5): P(win) = sigmoid(score / 10), the rest 0."""
        s = self.scores(afterstates, pre_move_race)
        out = np.zeros((len(s), N_OUTPUTS))
        with np.errstate(over="ignore"):
            out[:, 0] = 1.0 / (1.0 + np.exp(-s / SCORE_SCALE))
        return out
