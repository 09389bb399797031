"""The position type, always from the side on roll, and gnubg Position IDs.

A board is an int8 array of shape (2, 25): row 0 is the side on roll ("me"), row 1 the
opponent. Each row counts from its own side: index 0..23 = that side's points 1..24,
index 24 = its bar; borne-off checkers are implicit (15 minus the row sum). The point I
call p (index p-1) is the opponent's point 25-p (index 24-p of row 1).

gnubg orders the rows the other way round (board[0] = not on roll); the Position ID
functions below translate.
"""

from __future__ import annotations

import base64

import numpy as np

from engine.errors import PositionIdError

CHECKERS = 15
BAR = 24
ME, OPP = 0, 1

_START = np.zeros((2, 25), dtype=np.int8)
for _side in (ME, OPP):
    _START[_side, 23] = 2   # 24-point
    _START[_side, 12] = 5   # 13-point (mid-point)
    _START[_side, 7] = 3    # 8-point
    _START[_side, 5] = 5    # 6-point
_START.setflags(write=False)


class Position:
    """An immutable board from the side on roll; hashable by its bytes."""

    __slots__ = ("board", "_key")

    def __init__(self, board: np.ndarray) -> None:
        arr = np.array(board, dtype=np.int8).reshape(2, 25)
        arr.setflags(write=False)
        self.board = arr
        self._key = arr.tobytes()

    @classmethod
    def start(cls) -> Position:
        return cls(_START)

    @classmethod
    def from_id(cls, position_id: str) -> Position:
        return cls(decode_position_id(position_id))

    @property
    def id(self) -> str:
        return encode_position_id(self.board)

    def swap(self) -> Position:
        """The same board seen by the other side (turn change)."""
        return Position(self.board[::-1])

    def pips(self) -> tuple[int, int]:
        """Pip counts (mine, opponent's); a checker on the bar counts 25."""
        weights = np.arange(1, 26)
        return int(self.board[ME] @ weights), int(self.board[OPP] @ weights)

    def off(self) -> tuple[int, int]:
        """Checkers borne off (mine, opponent's)."""
        return CHECKERS - int(self.board[ME].sum()), CHECKERS - int(self.board[OPP].sum())

    def is_race(self) -> bool:
        """True when no contact is possible: every checker of mine is past every one of theirs."""
        return is_race(self.board)

    def game_over(self) -> bool:
        return self.off()[ME] == CHECKERS or self.off()[OPP] == CHECKERS

    def result(self) -> int:
        """Points won by the side that has borne off all checkers, signed from row 0's view.

        +1/+2/+3 when row 0 has won a single game / gammon / backgammon, negative when row 1
        has, 0 while the game goes on. Called on an afterstate, row 0 is the side that moved.
        """
        return game_result(self.board)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Position) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"Position({self.id!r})"


def is_race(board: np.ndarray) -> bool:
    """No contact: my rearmost checker is ahead of the opponent's rearmost one."""
    mine = np.nonzero(board[ME])[0]
    theirs = np.nonzero(board[OPP])[0]
    if len(mine) == 0 or len(theirs) == 0:
        return True
    # My index i is the opponent's index 23 - i; bar (24) is farthest back for both.
    return int(mine.max()) + int(theirs.max()) < 23


def race_flags(boards: np.ndarray) -> np.ndarray:
    """is_race of each of (n, 2, 25) boards, as a bool (n,) array."""
    present = np.asarray(boards) > 0
    # Each side's rearmost checker index (bar = 24), -1 for a side with none left.
    rearmost = np.where(present.any(axis=2), BAR - np.argmax(present[:, :, ::-1], axis=2), -1)
    return (rearmost.min(axis=1) < 0) | (rearmost.sum(axis=1) < 23)


def game_result(board: np.ndarray) -> int:
    """Signed points from row 0's view; 0 while both sides still have checkers."""
    for side, sign in ((ME, 1), (OPP, -1)):
        if board[side].sum() == 0:
            loser = board[1 - side]
            if loser.sum() < CHECKERS:
                return sign
            # Loser's bar (24) or the winner's home board = loser's points 19..24.
            if loser[BAR] > 0 or loser[18:24].sum() > 0:
                return 3 * sign
            return 2 * sign
    return 0


def encode_position_id(board: np.ndarray) -> str:
    """gnubg Position ID: the opponent's row then mine, a 1 per checker and a 0 per index."""
    bits = []
    for side in (OPP, ME):
        for count in board[side]:
            bits.extend([1] * int(count))
            bits.append(0)
    bits.extend([0] * (80 - len(bits)))
    key = bytearray(10)
    for i, bit in enumerate(bits):
        if bit:
            key[i >> 3] |= 1 << (i & 7)
    return base64.b64encode(bytes(key)).decode("ascii").rstrip("=")


def decode_position_id(position_id: str) -> np.ndarray:
    """Inverse of encode_position_id; raises PositionIdError on anything malformed."""
    if not isinstance(position_id, str) or len(position_id) != 14:
        raise PositionIdError(f"Position ID must be 14 characters, got {position_id!r}")
    try:
        key = base64.b64decode(position_id + "==", validate=True)
    except ValueError as err:
        raise PositionIdError(f"Position ID {position_id!r} is not valid Base64") from err
    bits = [(key[i >> 3] >> (i & 7)) & 1 for i in range(80)]
    board = np.zeros((2, 25), dtype=np.int8)
    pos = 0
    for side in (OPP, ME):
        for index in range(25):
            count = 0
            while pos < 80 and bits[pos]:
                count += 1
                pos += 1
            if pos >= 80:
                raise PositionIdError(f"Position ID {position_id!r} ends inside the board")
            pos += 1
            if count > CHECKERS:
                raise PositionIdError(f"Position ID {position_id!r} has more than 15 checkers on a point")
            board[side, index] = count
        if board[side].sum() > CHECKERS:
            raise PositionIdError(f"Position ID {position_id!r} has more than 15 checkers for one side")
    if any(bits[pos:]):
        raise PositionIdError(f"Position ID {position_id!r} has stray bits after the board")
    for index in range(24):
        if board[ME, index] and board[OPP, 23 - index]:
            raise PositionIdError(f"Position ID {position_id!r} has both sides on point {index + 1}")
    check_not_empty(board, f"Position ID {position_id!r}")
    return board


def check_not_empty(board: np.ndarray, what: str = "the board") -> None:
    """Refuse a board where neither side has a checker left: a game ends when the first side
    bears off its 15th, so at most one side can have none. (gnubg's CheckPosition accepts
    such a board; its evaluation means nothing. A side with no checkers while the other
    has some is a finished game, which we keep: afterstates of a last bear-off are such.)"""
    if not board[ME].any() and not board[OPP].any():
        raise PositionIdError(f"{what} has no checkers for either side: at most one side can "
                              f"have borne off all {CHECKERS}")
