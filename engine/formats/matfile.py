"""Games in the Jellyfish `.mat` text format, which gnubg reads with `import mat FILE`.

Layout (gnubg's export writes the same):

     0 point match            <- 0 = money play (gnubg imports it as a money session)

     Game 1
     Alice : 0                          Bob : 0
      1) 52: 13/8 24/22                 31: 8/5 6/5
      2) 64:                            ...          <- a roll that cannot be played
                                        Wins 2 points

The left column is always the first player. A side that starts second leaves the left
half of move 1 empty. Plays are in gnubg notation (engine.notation).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

COLUMN = 33


@dataclass
class MatGame:
    """One game: turns as (side 0/1, dice, play text or '' for no play), result signed for side 0.

    A cube action is a turn with dice None and its text: 'Doubles => 2', 'Takes', 'Drops'."""

    turns: list[tuple[int, tuple[int, int] | None, str]] = field(default_factory=list)
    result: int = 0


def _cell(turn: tuple[int, tuple[int, int] | None, str] | None) -> str:
    if turn is None:
        return ""
    _, dice, text = turn
    if dice is None:
        return text
    return f"{dice[0]}{dice[1]}: {text}".rstrip()


def format_mat(games: Iterable[MatGame], names: tuple[str, str], match_length: int = 0) -> str:
    """The whole file as text; money play when match_length is 0."""
    names = tuple(n.replace(":", "_") for n in names)
    lines = [f" {match_length} point match", ""]
    scores = [0, 0]
    for number, game in enumerate(games, start=1):
        lines.append(f" Game {number}")
        left = f" {names[0]} : {scores[0]}"
        lines.append(f"{left:<{COLUMN + 5}}{names[1]} : {scores[1]}")
        rows: list[list] = []
        for turn in game.turns:
            side = turn[0]
            if side == 0 or not rows or rows[-1][1] is not None:
                if side == 0:
                    rows.append([turn, None])
                else:
                    rows.append([None, turn])
            else:
                rows[-1][1] = turn
        for i, (a, b) in enumerate(rows, start=1):
            text = f"{i:3d}) {_cell(a):<{COLUMN}}{_cell(b)}".rstrip()
            lines.append(text)
        if game.result:
            points = abs(game.result)
            word = "point" if points == 1 else "points"
            pad = 6 if game.result > 0 else 6 + COLUMN
            lines.append(" " * pad + f"Wins {points} {word}")
            scores[0 if game.result > 0 else 1] += points
        lines.append("")
    return "\n".join(lines) + "\n"


def write_mat(path: str | Path, games: Iterable[MatGame], names: tuple[str, str],
              match_length: int = 0) -> None:
    """Write the games to path (overwriting it)."""
    Path(path).write_text(format_mat(games, names, match_length))
