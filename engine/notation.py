"""gnubg move notation (`24/18*/13`, `bar/22*`, `13/7(2)`, `6/off`) and a plain-Python view of legal plays.

Points are numbered from the mover's view: my index i is point i + 1, the bar is 25
(written `bar`) and off is 0 (written `off`). Formatting follows gnubg's FormatMove
(drawboard.c): sort the steps by descending source (then descending destination), join
the steps of one checker (keeping the intermediate point only when it hit a blot), count
identical moves, and star a destination that held an opposing blot the first time it
is reached.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from engine.dice import ALL_ROLLS, check_dice
from engine.errors import MoveError
from engine.movegen import generate
from engine.position import BAR, ME, OPP, Position

OFF_POINT = 0
BAR_POINT = 25


@dataclass(frozen=True)
class Play:
    """One legal play: the afterstate (mover still in row 0), its steps and gnubg notation.

    `steps` holds only the used steps, as (source index, destination index) pairs with
    source 24 = bar and destination -1 = off. `notation` is computed on first use (from
    `before`, the position the play starts from), so listing plays for a bot stays cheap.
    """

    before: Position = field(repr=False, compare=False)
    after: Position
    steps: tuple[tuple[int, int], ...]

    @cached_property
    def notation(self) -> str:
        return format_play(self.before.board, self.steps)


def _used_steps(steps: Iterable) -> list[tuple[int, int]]:
    """The (src, dst) index pairs actually used (movegen pads with (-1, -1))."""
    out = []
    for src, dst in np.asarray(steps, dtype=np.int64).reshape(-1, 2):
        if src < 0:
            break
        out.append((int(src), int(dst)))
    return out


def _point_text(point: int) -> str:
    if point == OFF_POINT:
        return "off"
    if point == BAR_POINT:
        return "bar"
    return str(point)


def format_play(board: np.ndarray, steps: Iterable) -> str:
    """gnubg's notation for the steps played from board (the position before the play).

    Steps are movegen's (4, 2) array or any sequence of (source index, destination index).
    An empty play formats as the empty string.
    """
    board = np.asarray(board)
    # 1-based points: source 25 = bar, destination 0 = off.
    moves = sorted(([src + 1, dst + 1] for src, dst in _used_steps(steps)),
                   key=lambda m: (-m[0], -m[1]))
    chains: list[list[int] | None] = [list(m) for m in moves]

    def blot_at(point: int) -> bool:
        return 1 <= point <= 24 and board[OPP, 24 - point] > 0

    # Combine the steps of one checker; a hit intermediate point is kept.
    for i in range(len(chains)):
        for j in range(i, len(chains)):
            ci, cj = chains[i], chains[j]
            if ci is None or cj is None or i == j:
                continue
            if ci[-1] == cj[0]:
                if blot_at(ci[-1]):
                    ci.append(cj[1])
                else:
                    ci[-1] = cj[1]
                chains[j] = None
    combined = [c for c in chains if c is not None]
    # Count identical moves (whole chains equal).
    counted: list[list] = []
    for chain in combined:
        for entry in counted:
            if entry[0] == chain:
                entry[1] += 1
                break
        else:
            counted.append([chain, 1])
    starred: set[int] = set()
    parts = []
    for chain, count in counted:
        text = _point_text(chain[0])
        for mid in chain[1:-1]:
            text += "/" + _point_text(mid) + "*"
            starred.add(mid)
        dest = chain[-1]
        text += "/" + _point_text(dest)
        if blot_at(dest) and dest not in starred:
            text += "*"
            starred.add(dest)
        if count > 1:
            text += f"({count})"
        parts.append(text)
    return " ".join(parts)


class PlayList(Sequence):
    """The legal plays of one roll as a lazy sequence of Play, plus the raw arrays.

    `afterstates` (n, 2, 25) and `steps` (n, 4, 2) are movegen's arrays, ready for an
    evaluator in one batch; a Play object is built only when it is indexed, which keeps
    whole games between bots cheap.
    """

    def __init__(self, position: Position, afterstates: np.ndarray, steps: np.ndarray) -> None:
        self.position = position
        self.afterstates = afterstates
        self.steps = steps
        self._plays: dict[int, Play] = {}

    def __len__(self) -> int:
        return len(self.afterstates)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"play {index} of {n}")
        index %= n
        play = self._plays.get(index)
        if play is None:
            steps = tuple((int(src), int(dst)) for src, dst in self.steps[index] if src >= 0)
            play = Play(self.position, Position(self.afterstates[index]), steps)
            self._plays[index] = play
        return play

    def __repr__(self) -> str:
        return f"PlayList({len(self)} plays of {self.position.id})"


def play_list(position: Position, dice: tuple[int, int]) -> PlayList:
    """The legal plays of the roll as a lazy PlayList (see legal_plays for a plain list)."""
    d1, d2 = check_dice(*dice)
    afters, steps = generate(position.board, d1, d2)
    return PlayList(position, afters, steps)


def legal_plays(position: Position, dice: tuple[int, int]) -> list[Play]:
    """Every distinct legal play of the roll, in movegen's order; empty when the roll dances."""
    return list(play_list(position, dice))


_TOKEN_RE = re.compile(r"^(bar|\d{1,2})((?:/(?:bar|off|\d{1,2})\*?)+)(?:\((\d)\))?$")
_PASS_WORDS = {"", "pass", "-", "none", "cannot move"}


def _parse_point(text: str, whole: str) -> int:
    if text == "bar":
        return BAR_POINT
    if text == "off":
        return OFF_POINT
    point = int(text)
    if not 0 <= point <= BAR_POINT:
        raise MoveError(f"point {point} is not on the board in {whole!r}")
    return point


def parse_moves(text: str) -> list[tuple[int, int]]:
    """The (from point, to point) single moves written in text; 25 = bar, 0 = off.

    A chain `24/18*/13` gives two moves (24, 18), (18, 13); `13/7(2)` gives (13, 7) twice.
    Stars are accepted and ignored: whether a move hits is decided by the board.
    """
    if not isinstance(text, str):
        raise MoveError(f"a move must be text like '8/5 6/5', got {text!r}")
    normalised = text.strip().lower()
    if normalised in _PASS_WORDS:
        return []
    moves: list[tuple[int, int]] = []
    for token in normalised.split():
        match = _TOKEN_RE.match(token)
        if match is None:
            raise MoveError(f"cannot read {token!r} in {text!r}: write moves like 24/18*/13, "
                            "bar/22, 13/7(2) or 6/off")
        points = [_parse_point(match.group(1), text)]
        points += [_parse_point(p.rstrip("*"), text) for p in match.group(2).split("/")[1:]]
        count = int(match.group(3)) if match.group(3) else 1
        if not 1 <= count <= 4:
            raise MoveError(f"a move can repeat 1..4 times, got ({count}) in {text!r}")
        for src, dst in zip(points, points[1:]):
            if src == OFF_POINT or dst == BAR_POINT or dst >= src:
                raise MoveError(f"{_point_text(src)}/{_point_text(dst)} does not move "
                                f"forward in {text!r}")
        moves.extend(list(zip(points, points[1:])) * count)
    if len(moves) > 4:
        raise MoveError(f"{text!r} moves {len(moves)} times; a roll moves at most 4")
    return moves


def apply_moves(board: np.ndarray, moves: list[tuple[int, int]], text: str = "") -> np.ndarray:
    """The board after moving checkers as written (hits included), without checking the dice."""
    after = np.array(board, dtype=np.int8).reshape(2, 25)
    # Checkers only move down, so playing higher sources first lets a checker continue
    # from the point it has just reached whatever order the user wrote.
    for src, dst in sorted(moves, key=lambda m: -m[0]):
        src_index = BAR if src == BAR_POINT else src - 1
        if after[ME, src_index] == 0:
            raise MoveError(f"no checker of yours on {_point_text(src)} for "
                            f"{_point_text(src)}/{_point_text(dst)} in {text!r}")
        after[ME, src_index] -= 1
        if dst == OFF_POINT:
            continue
        if after[OPP, 24 - dst] >= 2:
            raise MoveError(f"point {dst} is blocked in {text!r}")
        if after[OPP, 24 - dst] == 1:
            after[OPP, 24 - dst] = 0
            after[OPP, BAR] += 1
        after[ME, dst - 1] += 1
    return after


def parse_play(board: np.ndarray, text: str,
               dice: tuple[int, int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Read a play in gnubg notation and check it is legal for the roll.

    With dice=None the play must be legal for at least one of the 21 rolls. Returns the
    afterstate (mover still in row 0) and movegen's steps (4, 2) for that play; an empty
    text (or `pass`) is accepted only when the roll has no legal play. Raises MoveError.
    """
    board = np.asarray(board, dtype=np.int8).reshape(2, 25)
    moves = parse_moves(text)
    target = apply_moves(board, moves, text)
    rolls = [check_dice(*dice)] if dice is not None else [(d1, d2) for d1, d2, _ in ALL_ROLLS]
    for d1, d2 in rolls:
        afters, steps = generate(board, d1, d2)
        if len(afters) == 0:
            if not moves:
                return board.copy(), np.full((4, 2), -1, dtype=np.int8)
            continue
        hits = np.nonzero((afters == target).all(axis=(1, 2)))[0]
        if len(hits):
            return afters[hits[0]].copy(), steps[hits[0]].copy()
    roll_text = f"the roll {rolls[0][0]}-{rolls[0][1]}" if dice is not None else "any roll"
    if not moves:
        raise MoveError(f"passing is not legal with {roll_text}: a play must be made")
    raise MoveError(f"{text.strip()!r} is not a legal play for {roll_text}")
