"""Pit two players over many cubeless money games: duplicate dice, statistics, gnubg as a player.

Torch-free: evaluators arrive already built (scripts/commands/pit.py loads them in each worker).

- Duplicate dice: pair k plays game 2k with A as side 0 and game 2k+1 with B as side 0,
  both from a generator seeded with (seed, k). engine.game.play_game gives side 0 the first
  opening die and draws every later roll by turn number, so in the twin game each player
  gets exactly the rolls (opening included) its opponent had.
- ppg is A's mean points per game (engine.pit.stats).
- `gnubg[:PLIES]` plays through a real gnubg process (engine.gnubg.process); player specs
  are parsed in engine.pit.players.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from engine.evaluator import Evaluator
from engine.formats.matfile import MatGame
from engine.game import GameRecord, index_of_play, play_game
from engine.pit.stats import GameResult
from engine.position import Position
from engine.search import MoveFilter, rank_plays


class SearchPlayer:
    """engine.game Player: the best play by engine.search at its ply."""

    def __init__(self, evaluator: Evaluator, ply: int = 1, name: str | None = None,
                 filter: MoveFilter = MoveFilter()) -> None:
        self.evaluator = evaluator
        self.ply = ply
        self.name = name or f"{evaluator.name}@{ply}"
        self.filter = filter

    def choose(self, position: Position, dice: tuple[int, int], plays) -> int:
        best = rank_plays(position.board, dice, self.evaluator, self.ply, self.filter)[0].afterstate
        return index_of_play(plays, best, self.name)


def reseed(player, seed: list[int]) -> None:
    """Give a random evaluator a fresh generator per game, so results do not depend on workers."""
    evaluator = getattr(player, "evaluator", None)
    if evaluator is not None and isinstance(getattr(evaluator, "rng", None), np.random.Generator):
        evaluator.rng = np.random.default_rng(seed)


def to_mat_game(record: GameRecord, a_is_side0: bool) -> MatGame:
    """The record with A always as side 0 of the .mat file."""
    game = MatGame(result=record.result if a_is_side0 else -record.result)
    for turn in record.turns:
        side = turn.player if a_is_side0 else 1 - turn.player
        game.turns.append((side, turn.dice, turn.play.notation if turn.play is not None else ""))
    return game


@dataclass(frozen=True)
class PitSeating:
    """Game `index` of a pit: its two players in seat order, its dice, and whether A sits first."""

    players: tuple
    rng: np.random.Generator
    a_first: bool

    def for_a(self, value: int) -> int:
        """A signed result of side 0 seen from A."""
        return value if self.a_first else -value


def seat_pit_game(player_a, player_b, seed: int, index: int, duplicate: bool) -> PitSeating:
    """Seat game `index`: A is side 0 in even games of a duplicate pair, side 1 in odd ones.

    The dice come from a generator seeded with (seed, pair), so both games of a pair get
    the same rolls; random evaluators are reseeded per game, so results do not depend on
    which worker plays the game. Cubeless, cube and match pits all seat their games here.
    """
    pair = index // 2 if duplicate else index
    a_first = index % 2 == 0 if duplicate else True
    for k, player in enumerate((player_a, player_b)):
        reseed(player, [seed, index, k, 7])
    players = (player_a, player_b) if a_first else (player_b, player_a)
    return PitSeating(players, np.random.default_rng([seed, pair]), a_first)


def play_pit_game(player_a, player_b, seed: int, index: int, duplicate: bool,
                  keep_record: bool = False) -> GameResult:
    """Game `index` of a cubeless pit (seated by seat_pit_game)."""
    seat = seat_pit_game(player_a, player_b, seed, index, duplicate)
    record = play_game(seat.players[0], seat.players[1], seat.rng)
    points = seat.for_a(record.result)
    return GameResult(index, points, to_mat_game(record, seat.a_first) if keep_record else None)


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)
