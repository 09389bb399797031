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

from engine.cache import kernel
from engine.errors import PositionIdError

CHECKERS = 15
BAR = 24   # a row's bar index; also the source index of a step entering from the bar
OFF = -1   # the destination index of a step bearing a checker off (engine.movegen)
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
        return bool(is_race(self.board))

    def game_over(self) -> bool:
        return self.off()[ME] == CHECKERS or self.off()[OPP] == CHECKERS

    def result(self) -> int:
        """Points won by the side that has borne off all checkers, signed from row 0's view.

        +1/+2/+3 when row 0 has won a single game / gammon / backgammon, negative when row 1
        has, 0 while the game goes on. Called on an afterstate, row 0 is the side that moved.
        """
        return int(game_result(self.board))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Position) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"Position({self.id!r})"


@kernel(nogil=True)
def rearmost(board, side):
    """Index of the side's rearmost checker (bar = 24), or -1 when it has none left."""
    for i in range(BAR, -1, -1):
        if board[side, i] > 0:
            return i
    return -1


@kernel(nogil=True)
def is_race(board):
    """No contact: my rearmost checker is ahead of the opponent's rearmost one.

    A kernel, so numba code and Python (board: int8 (2, 25)) share one race test.
    """
    mine = rearmost(board, ME)
    theirs = rearmost(board, OPP)
    # My index i is the opponent's index 23 - i; bar (24) is farthest back for both.
    return mine < 0 or theirs < 0 or mine + theirs < 23


@kernel(nogil=True)
def checkers_left(board, side):
    """Checkers the side still has on the board or the bar (CHECKERS minus those borne off)."""
    total = 0
    for i in range(BAR + 1):
        total += board[side, i]
    return total


@kernel(nogil=True)
def game_result(board):
    """Signed points from row 0's view; 0 while both sides still have checkers.

    A kernel, so self-play (numba) and the engine (Python) share one rule: a loser who has
    borne off nothing loses a gammon, a backgammon with a checker on the bar or in the
    winner's home board (the loser's indices 18..23).
    """
    for side in range(2):
        if checkers_left(board, side) == 0:
            sign = 1 if side == ME else -1
            loser = 1 - side
            if checkers_left(board, loser) < CHECKERS:
                return sign
            if rearmost(board, loser) >= 18:
                return 3 * sign
            return 2 * sign
    return 0


@kernel(nogil=True)
def _classify(boards):
    """is_race and game_result of each board, in one pass (both cost little next to an evaluation)."""
    race = np.empty(boards.shape[0], dtype=np.bool_)
    points = np.empty(boards.shape[0], dtype=np.int64)
    for k in range(boards.shape[0]):
        race[k] = is_race(boards[k])
        points[k] = game_result(boards[k])
    return race, points


def race_flags(boards: np.ndarray) -> np.ndarray:
    """is_race of each of (n, 2, 25) boards, as a bool (n,) array."""
    return _classify(np.asarray(boards))[0]


def game_results(boards: np.ndarray) -> np.ndarray:
    """game_result of each of (n, 2, 25) boards, as an int64 (n,) array."""
    return _classify(np.asarray(boards))[1]


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
