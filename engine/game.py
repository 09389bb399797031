"""Playing one whole cubeless game between two players, with a record of every turn.

A Player sees the position from its own side (row 0 = itself), the roll and the legal
plays, and returns the index of the play it picks. Players backed by an Evaluator are
one line: score the afterstates, take the best equity (`EvaluatorPlayer`, which chooses
exactly as engine.search.rank_plays at 1-ply).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from engine.dice import opening_roll, roll
from engine.evaluator import Evaluator, equity
from engine.notation import Play, play_list
from engine.position import Position
from engine.search import play_values


class Player(Protocol):
    name: str

    def choose(self, position: Position, dice: tuple[int, int], plays: Sequence[Play]) -> int:
        """Index into `plays` (never empty) of the play to make; position is from the mover's view.

        play_game passes an engine.notation.PlayList, whose `.afterstates` array lets an
        evaluator score every play in one batch.
        """
        ...


def index_of_play(plays: Sequence[Play], afterstate: np.ndarray, who: str) -> int:
    """The index of `afterstate` among the legal plays: how a player that picks a resulting
    position (a search, gnubg) answers Player.choose."""
    afterstates = getattr(plays, "afterstates", None)
    if afterstates is None:
        afterstates = np.stack([p.after.board for p in plays])
    hits = np.nonzero((afterstates == afterstate).all(axis=(1, 2)))[0]
    if len(hits) == 0:
        raise RuntimeError(f"{who} chose a play that is not among the legal plays")
    return int(hits[0])


class RandomPlayer:
    """Picks a legal play uniformly at random: the weakest baseline and a fuzzer for the rules."""

    def __init__(self, rng: np.random.Generator, name: str = "random") -> None:
        self.rng = rng
        self.name = name

    def choose(self, position: Position, dice: tuple[int, int], plays: Sequence[Play]) -> int:
        return int(self.rng.integers(len(plays)))


class EvaluatorPlayer:
    """1-ply: scores every afterstate with the evaluator and takes the best cubeless equity.

    Scored through engine.search.play_values, as rank_plays scores them: exact results for
    finished games, and the pre-move race flag for evaluators that take it (pubeval picks
    its weights by the position BEFORE the move). Ties go to the first play.
    """

    def __init__(self, evaluator: Evaluator, name: str | None = None) -> None:
        self.evaluator = evaluator
        self.name = name or evaluator.name

    def choose(self, position: Position, dice: tuple[int, int], plays: Sequence[Play]) -> int:
        afterstates = getattr(plays, "afterstates", None)
        if afterstates is None:
            afterstates = np.stack([play.after.board for play in plays])
        return int(np.argmax(equity(play_values(position.board, afterstates, self.evaluator))))


@dataclass(frozen=True)
class Turn:
    """One turn: who moved (0 or 1), the position before it from the mover's view, the roll,
    and the play made (None when the roll could not be played)."""

    player: int
    position: Position
    dice: tuple[int, int]
    play: Play | None


@dataclass
class GameRecord:
    """A finished (or cut-off) game.

    `result` is signed from player 0's view: +1/+2/+3 when player 0 won a single game,
    gammon or backgammon, negative when player 1 did, 0 when `max_turns` cut the game off.
    `final` is the last board with player 0 in row 0.
    """

    opening: tuple[int, int]
    starter: int
    turns: list[Turn] = field(default_factory=list)
    result: int = 0
    final: Position | None = None

    @property
    def finished(self) -> bool:
        return self.result != 0

    @property
    def winner(self) -> int | None:
        if self.result == 0:
            return None
        return 0 if self.result > 0 else 1

    @property
    def points(self) -> int:
        return abs(self.result)


def play_game(player0: Player, player1: Player, rng: np.random.Generator,
              max_turns: int = 10_000, start: Position | None = None) -> GameRecord:
    """Play a cubeless game: opening roll, then alternate turns until someone bears off all 15.

    Dice come only from `rng`, so a seed (and deterministic players) reproduces the game.
    The generator is used for nothing else: the opening dice (side 0's die first), then
    one roll per later turn in turn order. Replaying a seed with the players swapped
    therefore hands each player exactly the rolls its opponent had (duplicate dice).
    `start` (default: the starting position) is seen from the side that wins the opening
    roll. A player is asked only when it has a choice; forced plays and dances are made for it.
    """
    players = (player0, player1)
    (die0, die1), starter = opening_roll(rng)
    dice = (die0, die1) if starter == 0 else (die1, die0)
    record = GameRecord(opening=(die0, die1), starter=starter)
    position = start if start is not None else Position.start()
    mover = starter
    for _ in range(max_turns):
        plays = play_list(position, dice)
        if not plays:
            chosen = None
            after = position
        else:
            index = players[mover].choose(position, dice, plays) if len(plays) > 1 else 0
            if not 0 <= index < len(plays):
                raise IndexError(f"player {players[mover].name!r} chose play {index} "
                                 f"of {len(plays)}")
            chosen = plays[index]
            after = chosen.after
        record.turns.append(Turn(mover, position, dice, chosen))
        points = after.result()
        if points:
            record.result = points if mover == 0 else -points
            record.final = after if mover == 0 else after.swap()
            return record
        position = after.swap()
        mover = 1 - mover
        dice = roll(rng)
    record.final = position if mover == 0 else position.swap()
    return record
