"""Who answers a position: the evaluator that sends races to a race judge.

Why a judge of its own: once contact is broken the game is a pure running race, which a
contact-trained net plays loosely and the one-sided race net (engine.race_dists) plays
far better. `WithRaceNet` sends race afterstates to that judge and the rest to the
contact evaluator; positions with both sides home get the bear-off databases' values
from either.
"""

from __future__ import annotations

import numpy as np

from engine import bearoff
from engine.cache import kernel
from engine.evaluator import N_OUTPUTS, Evaluator, Parents, evaluate_with_hints
from engine.position import is_race


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
    """An evaluator that answers races with `race` (the one-sided race net,
    engine.race_dists.RaceDistNet) and the rest with `contact`.

    Positions with both sides home get the bear-off databases' values whichever judge
    scored them. Given `pre_move_race` (the search passes it: accepts_pre_move_race), a
    race afterstate goes to the race judge only when the position before the move was a
    race too: the plays of one contact decision, some of which break contact, are then
    all valued by one judge, the contact net. Only the rows each judge answers are sent
    to it, in their order.
    """

    accepts_pre_move_race = True

    @property
    def accepts_parents(self) -> bool:
        return getattr(self.contact, "accepts_parents", False)

    def __init__(self, contact: Evaluator, race: Evaluator) -> None:
        self.contact = contact
        self.race = race
        self.name = getattr(contact, "name", "network")

    def evaluate(self, afterstates: np.ndarray, pre_move_race: np.ndarray | None = None,
                 parents: Parents | None = None) -> np.ndarray:
        afterstates = np.ascontiguousarray(afterstates, dtype=np.int8).reshape(-1, 2, 25)
        route = routes(afterstates)
        probs = np.zeros((len(afterstates), N_OUTPUTS))
        contact = route == 0
        if pre_move_race is not None:
            contact = contact | ~np.asarray(pre_move_race, dtype=bool)
        if contact.all():
            return np.asarray(evaluate_with_hints(self.contact, afterstates, parents=parents), dtype=np.float64)
        if contact.any():
            rows = np.nonzero(contact)[0]
            probs[rows] = evaluate_with_hints(self.contact, afterstates[rows],
                                              parents=None if parents is None else parents.take(rows))
        probs[~contact] = self.race.evaluate(afterstates[~contact])
        return probs
