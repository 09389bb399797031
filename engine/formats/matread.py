"""Reading Jellyfish `.mat` files (engine.formats.matfile writes them) into replayed games.

Both dialects are read: ours and gnubg's `export match mat`, which differ in column
widths and in how plays are written (gnubg: `25/24` for a bar entry, `6/0` for a
bear-off, one step at a time as `6/4 4/3`, a bare `63:` for a roll that cannot be
played). A row holds at most two cells, left = the first player named in the game's
header, right = the second; a cell is one of

    52: 13/8 13/11     a roll and its play (nothing after the colon: no legal play)
    Doubles => 2       a double (or redouble) to that value
    Takes  /  Drops    the answer to a double
    Beavers => 4       a take that redoubles at once (money play)

and a game ends with `Wins N point(s)` under the winner's column, on a line of its own
or (gnubg, after a drop) in the drop's row; resignations show only that line. ` 0 point match` is a money session. Lines starting with `;` are
comments (gnubg puts the event's tags there).

`read_mat(text)` parses and replays every game: each action carries the board before
it, from the acting side's view, and the cube and match state, so analysis needs no
rules of its own. Anything malformed raises MatFileError naming the line and the fault.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from engine.dice import check_dice
from engine.errors import MatFileError, TdgammonError
from engine.notation import parse_play
from engine.position import Position, game_result

CENTRED = -1
"""Cube owner of a centred cube (otherwise the side, 0 = left column, 1 = right)."""

_MATCH = re.compile(r"^\s*(\d+)\s+point\s+match\s*$", re.I)
_GAME = re.compile(r"^\s*Game\s+(\d+)\s*$", re.I)
_HEADER = re.compile(r"^\s*(\S.*?)\s*:\s*(\d+)\s+(\S.*?)\s*:\s*(\d+)\s*$")
_ROW = re.compile(r"^\s*(\d+)\)(.*)$")
_WINS = re.compile(r"^(\s*)Wins\s+(\d+)\s+points?(?:\s+and\s+the\s+match)?\s*$", re.I)
_CELL = re.compile(r"(?P<dice>[1-6][1-6]):|(?P<double>Doubles)\s*=>\s*(?P<to>\d+)|(?P<take>Takes)|"
                   r"(?P<drop>Drops|Passes)|(?P<beaver>Beavers)\s*=>\s*(?P<bto>\d+)|"
                   r"(?P<wins>Wins)\s+(?P<points>\d+)\s+points?(?:\s+and\s+the\s+match)?", re.I)


@dataclass(frozen=True)
class MatAction:
    """One decision as the file records it, with the state it was taken in.

    kind: move / double / take / drop / beaver; side: 0 (left column) or 1; dice and
    play (gnubg notation as written; '' for no play) for a move; cube_to for a double or
    beaver. board: int8 (2, 25) before the action from the acting side's view (for a
    take or drop: the taker's view of the doubler's position, i.e. swapped);
    after: the board after a move (mover still in row 0), else None.
    cube_value / cube_owner: the cube before the action; line: 1-based line in the file.
    """

    kind: str
    side: int
    line: int
    board: np.ndarray
    cube_value: int
    cube_owner: int
    dice: tuple[int, int] | None = None
    play: str = ""
    after: np.ndarray | None = None
    cube_to: int = 0


@dataclass
class MatchGameRecord:
    """One game: the score before it (left, right), its actions, the winner and points won."""

    number: int
    score: tuple[int, int]
    crawford: bool
    actions: list[MatAction] = field(default_factory=list)
    winner: int | None = None
    points: int = 0
    resigned: bool = False


@dataclass
class MatchRecord:
    """A whole file: match length (0 = money), the players' names (left, right), the games."""

    match_length: int
    names: tuple[str, str]
    games: list[MatchGameRecord]


class GameReplay:
    """The board and cube of one game while its actions are read: each action is checked
    and recorded with its state (engine.formats.sgfread replays .sgf games through it too)."""

    def __init__(self, game: MatchGameRecord, error: type[MatFileError] = MatFileError) -> None:
        self.game = game
        self.error = error   # the file kind's error class
        self.board = Position.start().board.copy()   # side 0 in row 0
        self.cube = 1
        self.owner = CENTRED
        self.offered: int | None = None   # the side whose double awaits an answer
        self.last_side: int | None = None

    def view(self, side: int) -> np.ndarray:
        return self.board.copy() if side == 0 else self.board[::-1].copy()

    def fail(self, line: int, message: str) -> None:
        raise self.error(f"line {line}: {message}")

    def add(self, kind: str, side: int, line: int, dice=None, play: str = "", cube_to: int = 0) -> None:
        g = self.game
        if g.winner is not None:
            self.fail(line, f"game {g.number} goes on after it was won")
        if game_result(self.board):
            self.fail(line, f"game {g.number} is already over (all checkers borne off)")
        if kind in ("take", "drop", "beaver"):
            if self.offered is None or self.offered == side:
                self.fail(line, f"{kind} without a double to answer")
            action = MatAction(kind, side, line, self.view(side), self.cube, self.owner,
                               cube_to=cube_to)
            doubler = self.offered
            self.offered = None
            if kind == "drop":
                g.actions.append(action)
                g.winner, g.points = doubler, self.cube
                return
            if kind == "beaver" and cube_to != 4 * self.cube:
                self.fail(line, f"a beaver of a {2 * self.cube}-cube goes to {4 * self.cube}, not {cube_to}")
            self.cube = cube_to if kind == "beaver" else 2 * self.cube
            self.owner = side
            g.actions.append(action)
            return
        if self.offered is not None:
            self.fail(line, "a double was not answered (Takes or Drops)")
        if kind == "double":
            if self.owner not in (CENTRED, side):
                self.fail(line, "doubles while the opponent owns the cube")
            if g.crawford:
                self.fail(line, "doubles in the Crawford game")
            if cube_to != 2 * self.cube:
                self.fail(line, f"doubles to {cube_to}, but the cube is at {self.cube}")
            if self.last_side == side:
                self.fail(line, "doubles out of turn")
            g.actions.append(MatAction(kind, side, line, self.view(side), self.cube, self.owner, cube_to=cube_to))
            self.offered = side
            return
        # A move: alternate sides, the only exception a double and its answer between.
        if self.last_side == side:
            self.fail(line, "the same player moves twice in a row")
        board = self.view(side)
        try:
            dice = check_dice(*dice)
            after, _ = parse_play(board, play, dice)
        except TdgammonError as err:
            self.fail(line, f"{dice[0]}{dice[1]}: {play or '(no play)'}: {err}")
        g.actions.append(MatAction(kind, side, line, board, self.cube, self.owner, dice=dice, play=play,
                                   after=np.array(after, dtype=np.int8)))
        self.board = np.array(after, dtype=np.int8) if side == 0 else np.array(after, dtype=np.int8)[::-1].copy()
        self.last_side = side

    def finish(self, side: int, points: int, line: int) -> None:
        g = self.game
        if g.winner is not None:
            if (g.winner, g.points) != (side, points):
                self.fail(line, f"game {g.number}: the drop gives {g.points} to the other result")
            return
        if self.offered is not None:
            self.fail(line, "a double was not answered (Takes or Drops)")
        if points < 1:
            self.fail(line, "a game is won by at least 1 point")
        result = int(game_result(self.view(side)))
        if result < 0:
            self.fail(line, f"the loser of game {g.number} is named the winner")
        if result and result * self.cube != points:
            self.fail(line, f"game {g.number} ends {result} x cube {self.cube} = {result * self.cube} "
                            f"points, the file says {points}")
        g.winner, g.points, g.resigned = side, points, result == 0


def read_mat(text: str) -> MatchRecord:
    """Parse and replay a .mat file's text; MatFileError (naming the line) on any fault."""
    match_length: int | None = None
    names: tuple[str, str] | None = None
    games: list[MatchGameRecord] = []
    replay: GameReplay | None = None
    split = 0
    crawford_done = False
    pending_game: int | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r\n")
        stripped = line.strip()
        if not stripped or stripped.startswith(";"):
            continue
        if match_length is None:
            m = _MATCH.match(line)
            if m is None:
                raise MatFileError(f"line {number}: expected 'N point match' first, got {stripped[:40]!r}")
            match_length = int(m.group(1))
            continue
        m = _GAME.match(line)
        if m is not None:
            if replay is not None and replay.game.winner is None:
                raise MatFileError(f"line {number}: game {replay.game.number} has no 'Wins N points' line")
            pending_game = int(m.group(1))
            replay = None
            continue
        if pending_game is not None:
            m = _HEADER.match(line)
            if m is None:
                raise MatFileError(f"line {number}: expected 'NAME : SCORE   NAME : SCORE', got {stripped[:40]!r}")
            pair = (m.group(1), m.group(3))
            if names is None:
                names = pair
            elif pair != names:
                raise MatFileError(f"line {number}: players {pair} differ from the first game's {names}")
            score = (int(m.group(2)), int(m.group(4)))
            crawford = False
            if match_length:
                if max(score) >= match_length:
                    raise MatFileError(f"line {number}: score {score[0]}-{score[1]} is past the "
                                       f"{match_length}-point match")
                if match_length - 1 in score and not crawford_done:
                    crawford = crawford_done = True
            game = MatchGameRecord(pending_game, score, crawford)
            games.append(game)
            replay = GameReplay(game)
            split = m.start(3) - 2
            pending_game = None
            continue
        if replay is None:
            raise MatFileError(f"line {number}: {stripped[:40]!r} outside a game")
        m = _WINS.match(line)
        if m is not None:
            replay.finish(1 if len(m.group(1)) >= split else 0, int(m.group(2)), number)
            continue
        m = _ROW.match(line)
        if m is None:
            raise MatFileError(f"line {number}: cannot read {stripped[:40]!r}")
        _read_row(replay, line, m.start(2), number, split)
    if match_length is None:
        raise MatFileError("the file is empty: expected 'N point match'")
    if not games:
        raise MatFileError("the file holds no game")
    return MatchRecord(match_length, names or ("", ""), games)


def _read_row(replay: GameReplay, line: str, start: int, number: int, split: int) -> None:
    """The one or two cells of a move row; the first goes right only if it starts there."""
    rest = line[start:]
    cells = list(_CELL.finditer(rest))
    if not cells:
        if rest.strip():
            raise MatFileError(f"line {number}: cannot read {rest.strip()[:40]!r}")
        return
    if rest[:cells[0].start()].strip():
        raise MatFileError(f"line {number}: cannot read {rest[:cells[0].start()].strip()[:40]!r}")
    if len(cells) > 2:
        # A play never contains a cell marker, so a third one is garbage.
        raise MatFileError(f"line {number}: more than two moves in one row")
    first_right = start + cells[0].start() >= split
    if first_right and len(cells) == 2:
        raise MatFileError(f"line {number}: two moves in the right-hand column")
    for k, cell in enumerate(cells):
        side = 1 if (first_right or k == 1) else 0
        end = cells[k + 1].start() if k + 1 < len(cells) else len(rest)
        tail = rest[cell.end():end].strip()
        if cell.group("dice"):
            d = cell.group("dice")
            replay.add("move", side, number, dice=(int(d[0]), int(d[1])), play=tail)
            continue
        if tail:
            raise MatFileError(f"line {number}: unexpected {tail[:40]!r} after {cell.group(0)!r}")
        if cell.group("double"):
            replay.add("double", side, number, cube_to=int(cell.group("to")))
        elif cell.group("take"):
            replay.add("take", side, number)
        elif cell.group("drop"):
            replay.add("drop", side, number)
        elif cell.group("wins"):   # gnubg puts it in the row of the drop
            replay.finish(side, int(cell.group("points")), number)
        else:
            replay.add("beaver", side, number, cube_to=int(cell.group("bto")))


def load_mat(path: str | Path) -> MatchRecord:
    """read_mat of a file; MatFileError when it cannot be read."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise MatFileError(f"cannot read {path}: {err.strerror or err}") from None
    return read_mat(text)
