"""FIBS `board:` lines (boardstyle 3), as gnubg's external-player interface sends them.

A line has 53 colon-separated fields:

    board : you : opponent : match length : your score : opponent's score
          : 26 board values : turn : your dice (2) : opponent's dice (2) : cube
          : you may double : opponent may double : was doubled : colour : direction
          : home : bar : your checkers home : opponent's home : your bar : opponent's bar
          : can move : forced move : did Crawford : redoubles

Board values: a positive count belongs to colour +1 (X), a negative one to colour -1 (O).
`colour` says which colour "you" are, `direction` which way you move: -1 means your
point p is index p (home index 0, bar index 25); +1 means your point p is index 25 - p
(home 25, bar 0). The opponent moves the other way. `turn` is the colour on roll (0 when
the game is over). gnubg marks a pending double with was-doubled != 0; the decision then
belongs to the side NOT on turn (gnubg's ProcessFIBSBoardInfo does the same), except after
a beaver (see `FibsBoard.beavered`), when it is back with the doubler, who is on turn. gnubg writes
the board from player 1's side (colour 1, direction -1) for both seats and a NUL byte
after each line; both are handled here.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from engine.errors import TdgammonError
from engine.position import BAR, CHECKERS

N_FIELDS = 53


class FibsBoardError(TdgammonError):
    """A FIBS board line that is malformed or describes an impossible board."""


@dataclass(frozen=True)
class FibsBoard:
    """Every field of a FIBS board line, as written (no perspective change)."""

    player: str
    opponent: str
    match_length: int
    player_score: int
    opponent_score: int
    board: tuple[int, ...]          # 26 values, index 0..25
    turn: int                       # colour on roll, 0 = game over
    player_dice: tuple[int, int]
    opponent_dice: tuple[int, int]
    cube: int
    player_may_double: int
    opponent_may_double: int
    was_doubled: int
    colour: int
    direction: int
    home: int
    bar: int
    player_on_home: int
    opponent_on_home: int
    player_on_bar: int
    opponent_on_bar: int
    can_move: int
    forced_move: int
    did_crawford: int
    redoubles: int

    @property
    def doubled(self) -> bool:
        """A double is pending: the doubled side (or, after a beaver, the doubler) must answer."""
        return self.was_doubled != 0

    def owner_colour(self) -> int:
        """The colour that owns the cube (from the may-double flags), 0 when it is centred."""
        if bool(self.player_may_double) == bool(self.opponent_may_double):
            return 0
        return self.colour if self.player_may_double else -self.colour

    @property
    def beavered(self) -> bool:
        """The side on turn doubled and the other side beavered: the doubler must take or drop.

        gnubg (play.c, MOVE_DOUBLE while a double is pending) doubles the cube value again,
        gives the cube to the beaverer and hands the decision back to the doubler, who is
        still the side on turn; the line then has was-doubled set, the cube field at the
        beavered value and the may-double flags showing the cube on the side NOT on turn.
        A plain double never looks like that (the doubler owned the cube or it was centred;
        FIBS clears both flags). A raccoon would too, but our bot never beavers.
        """
        return self.doubled and self.turn in (1, -1) and self.owner_colour() == -self.turn

    @property
    def decider(self) -> int:
        """The colour that must act now: the side on turn, the doubled side, or after a beaver the doubler."""
        return -self.turn if self.doubled and not self.beavered else self.turn

    @property
    def decider_is_player(self) -> bool:
        return self.decider == self.colour

    def direction_of(self, colour: int) -> int:
        return self.direction if colour == self.colour else -self.direction

    def board_for(self, colour: int) -> np.ndarray:
        """The int8 (2, 25) board with `colour` in row 0 (engine.position convention)."""
        if colour not in (1, -1):
            raise FibsBoardError(f"colour must be 1 or -1, got {colour}")
        direction = self.direction_of(colour)
        values = np.asarray(self.board, dtype=np.int64)
        if direction > 0:          # my point p sits at index 25 - p: reverse to index p
            values = values[::-1]
        out = np.zeros((2, 25), dtype=np.int8)
        mine = np.maximum(colour * values, 0)
        theirs = np.maximum(-colour * values, 0)
        out[0, :24] = mine[1:25]                  # my point p = index p
        out[1, :24] = theirs[24:0:-1]             # their point q = my point 25 - q
        out[0, BAR] = abs(int(values[25]))        # my bar is at the far end, index 25
        out[1, BAR] = abs(int(values[0]))
        for side in (0, 1):
            if int(out[side].sum()) > CHECKERS:
                raise FibsBoardError(f"more than {CHECKERS} checkers for one side in the board")
        return out

    def position_board(self) -> np.ndarray:
        """The board from the decider's side (row 0 = the side that must act)."""
        if self.turn not in (1, -1):
            raise FibsBoardError("the game is over (turn 0): no decision to make")
        return self.board_for(self.decider)

    def dice(self) -> tuple[int, int]:
        """The decider's roll, (0, 0) before rolling; falls back to the other pair as gnubg does."""
        own, other = ((self.player_dice, self.opponent_dice) if self.decider_is_player
                      else (self.opponent_dice, self.player_dice))
        return own if own[0] else other

    def scores(self) -> tuple[int, int]:
        """(decider's score, other's score)."""
        if self.decider_is_player:
            return self.player_score, self.opponent_score
        return self.opponent_score, self.player_score

    def cube_owner(self) -> int:
        """-1 centred, 0 the decider owns the cube, 1 the other side does (from may-double flags)."""
        owner = self.owner_colour()
        if owner == 0:
            return -1
        return 0 if owner == self.decider else 1

    def to_line(self) -> str:
        """The board line again, field for field (no trailing newline)."""
        values: list[object] = ["board"]
        for f in fields(self):
            v = getattr(self, f.name)
            values.extend(v if isinstance(v, tuple) else [v])
        return ":".join(str(v) for v in values)


MAX_CUBE = 4096
"""gnubg's MAX_CUBE: no cube value above it."""
MAX_MATCH = 9999
"""FIBS writes an unlimited (money) session as match length 9999; no longer matches."""

# Each numeric field's range, checked before anything else reads the line (a value outside
# would wrap in the int8 board or overflow numpy). Fields of two values are (name, index).
_RANGES: tuple[tuple[str, int, int], ...] = (
    ("match_length", 0, MAX_MATCH), ("player_score", 0, 10**9), ("opponent_score", 0, 10**9),
    ("turn", -1, 1), ("cube", 1, MAX_CUBE),
    ("player_may_double", 0, 1), ("opponent_may_double", 0, 1), ("was_doubled", 0, 1),
    ("colour", -1, 1), ("direction", -1, 1), ("home", 0, 25), ("bar", 0, 25),
    ("player_on_home", 0, CHECKERS), ("opponent_on_home", 0, CHECKERS),
    ("player_on_bar", 0, CHECKERS), ("opponent_on_bar", 0, CHECKERS),
    ("can_move", 0, 4), ("forced_move", 0, 1), ("did_crawford", 0, 1), ("redoubles", 0, 10**6),
)


def _shown(text: str, limit: int = 30) -> str:
    """A piece of the input for an error message, cut to `limit` characters."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _int(text: str, name: str) -> int:
    # A FIBS number is short; a long run of digits is refused before int() parses it.
    if len(text) > 12:
        raise FibsBoardError(f"field {name} must be a small integer, got {_shown(text)}")
    try:
        return int(text)
    except ValueError:
        raise FibsBoardError(f"field {name} must be an integer, got {_shown(text)}") from None


def parse_fibs_board(line: str) -> FibsBoard:
    """Parse one `board:...` line (NULs and surrounding whitespace ignored); FibsBoardError if malformed."""
    if not isinstance(line, str):
        raise FibsBoardError(f"a FIBS board must be text, got {type(line).__name__}")
    text = line.replace("\x00", "").strip()
    parts = text.split(":")
    if parts[0] != "board":
        raise FibsBoardError(f"a FIBS board line starts with 'board:', got {_shown(text)}")
    if len(parts) != N_FIELDS:
        raise FibsBoardError(f"a FIBS board line has {N_FIELDS} fields, got {len(parts)}")
    nums = [_int(p, f"#{i}") for i, p in enumerate(parts[3:], start=3)]
    board = tuple(nums[3:29])
    rest = nums[29:]
    fb = FibsBoard(
        player=parts[1], opponent=parts[2],
        match_length=nums[0], player_score=nums[1], opponent_score=nums[2],
        board=board, turn=rest[0],
        player_dice=(rest[1], rest[2]), opponent_dice=(rest[3], rest[4]),
        cube=rest[5], player_may_double=rest[6], opponent_may_double=rest[7],
        was_doubled=rest[8], colour=rest[9], direction=rest[10], home=rest[11], bar=rest[12],
        player_on_home=rest[13], opponent_on_home=rest[14], player_on_bar=rest[15],
        opponent_on_bar=rest[16], can_move=rest[17], forced_move=rest[18],
        did_crawford=rest[19], redoubles=rest[20])
    _validate(fb)
    return fb


def _validate(fb: FibsBoard) -> None:
    for index, value in enumerate(fb.board):
        if not -CHECKERS <= value <= CHECKERS:
            raise FibsBoardError(f"board value {index} must be -{CHECKERS}..{CHECKERS} checkers, got {value}")
    for name, lo, hi in _RANGES:
        if not lo <= getattr(fb, name) <= hi:
            raise FibsBoardError(f"field {name} must be {lo}..{hi}, got {getattr(fb, name)}")
    if 0 < fb.match_length < MAX_MATCH and max(fb.player_score, fb.opponent_score) >= fb.match_length:
        raise FibsBoardError(f"scores {fb.player_score}-{fb.opponent_score} must be below the "
                             f"match length {fb.match_length}")
    if fb.colour not in (1, -1):
        raise FibsBoardError(f"colour must be 1 or -1, got {fb.colour}")
    if fb.direction not in (1, -1):
        raise FibsBoardError(f"direction must be 1 or -1, got {fb.direction}")
    if fb.turn not in (1, 0, -1):
        raise FibsBoardError(f"turn must be 1, 0 or -1, got {fb.turn}")
    for name, dice in (("player dice", fb.player_dice), ("opponent dice", fb.opponent_dice)):
        if not all(0 <= d <= 6 for d in dice) or (0 in dice and dice != (0, 0)):
            raise FibsBoardError(f"{name} must be two dice 1..6 or 0:0, got {dice}")
    if fb.cube < 1 or fb.cube & (fb.cube - 1):
        raise FibsBoardError(f"cube must be a power of two, got {fb.cube}")
    if fb.match_length < 0 or fb.player_score < 0 or fb.opponent_score < 0:
        raise FibsBoardError("match length and scores must be >= 0")
    for colour in (1, -1):
        fb.board_for(colour)


def fibs_line(board: np.ndarray, dice: tuple[int, int] = (0, 0), player: str = "tdgammon",
              opponent: str = "gnubg", cube: int = 1, match_length: int = 0,
              score: tuple[int, int] = (0, 0)) -> str:
    """The board line gnubg would send for a decision of the side in row 0 of `board`
    (engine.position convention): that side is "you", colour 1 on turn, direction -1,
    the cube centred. `dice` (0, 0) asks for roll/double. parse_fibs_board(...).position_board()
    gives `board` back."""
    b = np.asarray(board, dtype=np.int64).reshape(2, 25)
    values = [0] * 26
    for p in range(1, 25):
        values[p] += int(b[0, p - 1])           # my point p = index p
        values[25 - p] -= int(b[1, p - 1])      # their point q = my point 25 - q
    values[25] = int(b[0, BAR])
    values[0] = -int(b[1, BAR])
    fb = FibsBoard(
        player=player, opponent=opponent, match_length=match_length,
        player_score=score[0], opponent_score=score[1], board=tuple(values), turn=1,
        player_dice=tuple(dice), opponent_dice=(0, 0), cube=cube,
        player_may_double=1, opponent_may_double=1, was_doubled=0, colour=1, direction=-1,
        home=0, bar=25, player_on_home=CHECKERS - int(b[0].sum()),
        opponent_on_home=CHECKERS - int(b[1].sum()), player_on_bar=int(b[0, BAR]),
        opponent_on_bar=int(b[1, BAR]), can_move=0, forced_move=0, did_crawford=0, redoubles=0)
    return fb.to_line()
