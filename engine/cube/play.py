"""Games with the doubling cube, and matches to N points, between two engine.game Players.

Checker plays come from the players as in engine.game (cubeless choices); cube actions
come from a CubeDecider for each side. Dice are drawn exactly as engine.game.play_game
draws them (the opening roll, then one roll per turn), so duplicate-dice pits keep their
twin games: a cube action consumes no randomness.

Rules: money play (optionally with the Jacoby rule) or a match to N points with the
Crawford rule (no doubling in the Crawford game; the cube may be used from the next game
on). Before each roll except the opening one, a side that may double is asked; a pass
ends the game for the cube's value, a take turns the cube and gives it to the taker.
A beaver answer is played as a take (pit plays without beavers).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from engine.cube.equity import CENTRE, ME_OWNS, OPP_OWNS, CubeInfo
from engine.cube.lookahead import cube_decision_at_ply
from engine.dice import opening_roll, roll
from engine.evaluator import Evaluator
from engine.game import Player
from engine.notation import play_list
from engine.pit.harness import seat_pit_game
from engine.pit.stats import GameResult
from engine.position import Position


class CubeDecider(Protocol):
    def should_double(self, position: Position, cube: CubeInfo) -> bool:
        """position and cube from the view of the side on roll, before its roll."""
        ...

    def accepts(self, position: Position, cube: CubeInfo) -> bool:
        """Take a double? position and cube from the DOUBLER's view (the doubler on roll)."""
        ...


class EvaluatorCubeDecider:
    """Cube actions by engine.cube.equity from an evaluator: 1-ply Janowski, or the 2-ply decision from 2-ply up."""

    def __init__(self, evaluator: Evaluator, ply: int = 1) -> None:
        self.evaluator = evaluator
        self.ply = ply

    def _decide(self, position: Position, cube: CubeInfo):
        return cube_decision_at_ply(position.board, self.evaluator, cube, self.ply)

    def should_double(self, position: Position, cube: CubeInfo) -> bool:
        return cube.may_double() and self._decide(position, cube).double

    def accepts(self, position: Position, cube: CubeInfo) -> bool:
        return self._decide(position, cube).response != "pass"


@dataclass
class CubeGameRecord:
    """points: signed from player 0's view (cube value and gammons included, Jacoby applied);
    result: the checker result (+-1..3, 0 when a pass ended it or max_turns cut it off);
    cube: the final cube value; dropped: a pass ended the game; doubles: cube turns taken."""

    points: int = 0
    result: int = 0
    cube: int = 1
    dropped: bool = False
    doubles: int = 0
    turns: int = 0

    @property
    def kind(self) -> int:
        """The game's own result from player 0's view, cube aside: +-1 single (a pass too),
        +-2 gammon, +-3 backgammon (counted even when the Jacoby rule scores it as 1), 0 cut off."""
        if self.result:
            return self.result
        return (1 if self.points > 0 else -1) if self.dropped else 0


def _view(cube0: CubeInfo, side: int) -> CubeInfo:
    """Player 0's cube info seen by `side`."""
    return cube0 if side == 0 else cube0.swapped()


def play_cube_game(player0: Player, player1: Player, decider0: CubeDecider, decider1: CubeDecider,
                   rng: np.random.Generator, cube: CubeInfo = CubeInfo(), max_turns: int = 10_000) -> CubeGameRecord:
    """One game with the cube. `cube` is the starting cube seen by player 0 (match score too)."""
    players = (player0, player1)
    deciders = (decider0, decider1)
    (die0, die1), starter = opening_roll(rng)
    dice = (die0, die1) if starter == 0 else (die1, die0)
    position = Position.start()
    mover = starter
    record = CubeGameRecord()
    first = True
    for _ in range(max_turns):
        if not first:
            mine = _view(cube, mover)
            if mine.may_double() and deciders[mover].should_double(position, mine):
                if not deciders[1 - mover].accepts(position, mine):
                    sign = 1 if mover == 0 else -1
                    record.points, record.dropped, record.cube = sign * cube.value, True, cube.value
                    return record
                cube = replace(cube, value=2 * cube.value, owner=OPP_OWNS if mover == 0 else ME_OWNS)
                record.doubles += 1
            dice = roll(rng)
        first = False
        plays = play_list(position, dice)
        if plays:
            index = players[mover].choose(position, dice, plays) if len(plays) > 1 else 0
            after = plays[index].after
        else:
            after = position
        record.turns += 1
        points = after.result()
        if points:
            if cube.is_money and cube.jacoby and cube.owner == CENTRE:
                points = 1
            signed = points if mover == 0 else -points
            record.result, record.points, record.cube = signed, signed * cube.value, cube.value
            return record
        position = after.swap()
        mover = 1 - mover
    record.cube = cube.value
    return record


@dataclass
class MatchRecord:
    """winner: 0 or 1 (-1 when a game was cut off); score: final points of each player."""

    winner: int
    score: tuple[int, int]
    games: list[CubeGameRecord]


def play_match(player0: Player, player1: Player, decider0: CubeDecider, decider1: CubeDecider,
               rng: np.random.Generator, length: int, max_games: int = 1000) -> MatchRecord:
    """A match to `length` points with the Crawford rule; every game starts with a centred 1-cube."""
    score = [0, 0]
    games: list[CubeGameRecord] = []
    crawford_done = False
    for _ in range(max_games):
        at_one = length - score[0] == 1 or length - score[1] == 1
        crawford = at_one and not crawford_done
        if crawford:
            crawford_done = True
        cube = CubeInfo(match_length=length, score=(score[0], score[1]), crawford=crawford)
        game = play_cube_game(player0, player1, decider0, decider1, rng, cube)
        games.append(game)
        if game.points == 0:
            return MatchRecord(-1, (score[0], score[1]), games)
        winner = 0 if game.points > 0 else 1
        score[winner] += abs(game.points)
        if score[winner] >= length:
            return MatchRecord(winner, (score[0], score[1]), games)
    return MatchRecord(-1, (score[0], score[1]), games)


def decider_for(player) -> CubeDecider:
    """A player's cube decider: its own when it plays the cube itself (gnubg does), else
    engine.cube.equity from its evaluator at its ply."""
    if hasattr(player, "should_double") and hasattr(player, "accepts"):
        return player
    return EvaluatorCubeDecider(player.evaluator, player.ply)


def play_cube_pit_game(player_a, player_b, seed: int, index: int, duplicate: bool, match_length: int = 0):
    """Game (or, with match_length, match) `index` of a pit with the cube, as engine.pit.harness's GameResult.

    Seated by engine.pit.harness.seat_pit_game, as cubeless pit games (A is side 0 in even games of
    a duplicate pair). Money: points are A's, cube included. Match: +1 when A wins the
    match, -1 when B does (0 if a game was cut off). kinds: every game's own result kind.
    """
    seat = seat_pit_game(player_a, player_b, seed, index, duplicate)
    players = seat.players
    deciders = tuple(decider_for(p) for p in players)
    if match_length:
        m = play_match(players[0], players[1], deciders[0], deciders[1], seat.rng, match_length)
        points = 0 if m.winner < 0 else (1 if m.winner == 0 else -1)
        games = m.games
    else:
        game = play_cube_game(players[0], players[1], deciders[0], deciders[1], seat.rng)
        points, games = game.points, [game]
    return GameResult(index, seat.for_a(points), None, tuple(seat.for_a(g.kind) for g in games))
