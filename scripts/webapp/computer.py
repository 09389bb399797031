"""The computer opponent of the web game: Easy (1-ply with noise), Medium (1-ply), Hard (2-ply).

Plays are ranked by engine.search.rank_plays (1-ply: every afterstate scored by the
evaluator; 2-ply: the best candidates averaged over the opponent's 21 replies). Easy adds
Gaussian noise to each play's equity before taking the best, as gnubg's weaker levels do.
Cube actions (games "with cube") come from engine.cube.play.EvaluatorCubeDecider, the
decider pit uses: Janowski's money cube at 1-ply for Easy and Medium, the 2-ply cube
decision over the 21 rolls for Hard, without noise. Measured with the default model:
Medium ~0.2 ms a cube decision, Hard 2-5 ms on an idle core (2026-12-07), less than a
Hard 2-ply move, so Hard keeps the 2-ply cube.
"""

from __future__ import annotations

import random

import numpy as np

from engine.cube.equity import CubeInfo, cash_value, cubeful_value
from engine.cube.play import EvaluatorCubeDecider
from engine.evaluator import Evaluator, flip
from engine.position import Position
from engine.search import RankedPlay, evaluate_position, rank_plays

LEVELS = {"easy": (1, 0.15), "medium": (1, 0.0), "hard": (2, 0.0)}
"""level -> (ply, standard deviation of the noise added to each play's equity)."""


def load_game_evaluator(model: str | None) -> Evaluator:
    """The computer's evaluator: the spec or model file given, else the shipped default model, else pubeval."""
    from models.paths import DEFAULT_MODEL
    from models.loader import load_evaluator

    if model:
        return load_evaluator(model)
    if DEFAULT_MODEL.is_file():
        return load_evaluator(str(DEFAULT_MODEL))
    return load_evaluator("pubeval")


class ComputerPlayer:
    """Picks a play for a mover-view board and roll at one of the three levels."""

    def __init__(self, evaluator: Evaluator, level: str = "medium",
                 rng: random.Random | None = None) -> None:
        if level not in LEVELS:
            raise ValueError(f"unknown level {level!r}")
        self.evaluator = evaluator
        self.level = level
        self.ply, self.noise = LEVELS[level]
        self.rng = rng or random.Random()
        self.cube = EvaluatorCubeDecider(evaluator, self.ply)

    def choose(self, board: np.ndarray, d1: int, d2: int) -> RankedPlay | None:
        """The chosen play (engine.search.RankedPlay), or None when no play is legal."""
        plays = rank_plays(board, (d1, d2), self.evaluator, self.ply)
        if not plays:
            return None
        if self.noise <= 0:
            return plays[0]
        return max(plays, key=lambda p: p.equity + self.rng.gauss(0.0, self.noise))

    def should_double(self, board: np.ndarray, cube: CubeInfo) -> bool:
        """Double now? board and cube from the computer's view, on roll before rolling."""
        return self.cube.should_double(Position(board), cube)

    def accepts(self, board: np.ndarray, cube: CubeInfo) -> bool:
        """Take a double? board and cube from the DOUBLER's view (the doubler on roll)."""
        return self.cube.accepts(Position(board), cube)

    def accepts_resignation(self, board: np.ndarray, computer_on_roll: bool, points: int,
                            cube: CubeInfo | None = None) -> bool:
        """Take a resignation of `points` (1 single, 2 gammon, 3 backgammon) times the cube?

        Yes when the offer is worth at least what the computer expects from playing on by its
        own 1-ply probabilities (board from the side on roll's view), cube dead: in money play
        points against its cubeless equity, in a match the match winning chances after the
        offer against the cubeless MWC (engine.cube.equity, the Kazaross-XG2 table). `cube` is
        the computer's view (None: a 1-cube in money play)."""
        cube = cube or CubeInfo()
        probs = evaluate_position(board, self.evaluator, 1)
        if not computer_on_roll:
            probs = flip(probs)
        return cash_value(cube, points) >= cubeful_value(probs, cube, 0.0) - 1e-9


def warm_up(evaluator: Evaluator) -> None:
    """Play one move and one cube decision at every level, so that the kernels are loaded
    (compiled on a first run) before the server answers: the first game's first computer
    move then takes as long as the later ones."""
    board = Position.start().board
    for level in LEVELS:
        player = ComputerPlayer(evaluator, level, random.Random(0))
        player.choose(board, 3, 1)
        player.should_double(board, CubeInfo())
