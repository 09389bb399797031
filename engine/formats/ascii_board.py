"""An ASCII board in the layout of gnubg's `show board`, for the command line and test failures.

The side on roll is X and plays from 24 down to 1 along the bottom-right; the opponent is
O. Points are numbered from X's view: 13-24 along the top, 12-1 along the bottom.
Checkers on the bar sit in the BAR column (O's in the top half, X's in the bottom half);
a stack taller than five shows its count in the fifth row.
"""

from __future__ import annotations

import numpy as np

from engine.position import BAR, ME, OPP, Position

ROWS = 5
_TOP_LABELS = " +13-14-15-16-17-18------19-20-21-22-23-24-+"
_BOTTOM_LABELS = " +12-11-10--9--8--7-------6--5--4--3--2--1-+"


def _cell(owner: str, count: int, row: int) -> str:
    """Row `row` (0 = nearest the edge) of a stack of `count` checkers of `owner`, 3 wide."""
    if count <= row:
        return "   "
    if row == ROWS - 1 and count > ROWS:
        return f"{count:>2} "
    return f" {owner} "


def _point(board: np.ndarray, point: int) -> tuple[str, int]:
    """(owner, count) on the point numbered `point` from the side on roll's view."""
    mine = int(board[ME, point - 1])
    if mine:
        return "X", mine
    theirs = int(board[OPP, 24 - point])
    return ("O", theirs) if theirs else (" ", 0)


def _half(board: np.ndarray, left: range, right: range, bar: tuple[str, int],
          row: int) -> str:
    cells_left = "".join(_cell(*_point(board, p), row) for p in left)
    cells_right = "".join(_cell(*_point(board, p), row) for p in right)
    return f" |{cells_left}|{_cell(*bar, row)}|{cells_right}|"


def render(position: Position) -> str:
    """The board as text: points, bar, borne-off counts, pip counts, Position ID, X on roll."""
    board = position.board
    pips_x, pips_o = position.pips()
    off_x, off_o = position.off()
    top_side = ["O: opponent", f"{off_o} borne off"]
    bottom_side = [f"{off_x} borne off", "X: on roll"]
    lines = [f" Position ID: {position.id}", _TOP_LABELS + "     " + top_side[0]]
    for row in range(ROWS):
        line = _half(board, range(13, 19), range(19, 25), ("O", int(board[OPP, BAR])), row)
        lines.append(line + ("     " + top_side[1] if row == 0 else ""))
    lines.append(" |                  |BAR|                  |")
    for row in reversed(range(ROWS)):
        line = _half(board, range(12, 6, -1), range(6, 0, -1), ("X", int(board[ME, BAR])), row)
        lines.append(line + ("     " + bottom_side[0] if row == 0 else ""))
    lines.append(_BOTTOM_LABELS + "     " + bottom_side[1])
    lines.append(f"   Pip count  O: {pips_o}  X: {pips_x}")
    return "\n".join(lines)
