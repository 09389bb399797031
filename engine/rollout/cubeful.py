"""Rollouts' cubeful values over arrays: their cube-owner codes onto engine.cube.equity's
array formulas, and the exact values of small bear-offs.

Rollouts value thousands of afterstates a turn cubefully (for the cubeful variance
reduction and at truncation). Money play, Jacoby off. An owner is a code from the side
valued, so negating it gives the other side's view.
"""

from __future__ import annotations

import numpy as np

from engine import bearoff
from engine.cube import equity as cube_equity

CENTRE, ME_OWNS, OPP_OWNS = 0, 1, -1
"""Cube owner codes from the side whose value is computed (negate for the other side)."""
CODE_OWNER = {CENTRE: cube_equity.CENTRE, ME_OWNS: cube_equity.ME_OWNS, OPP_OWNS: cube_equity.OPP_OWNS}
"""The codes as engine.cube.equity's owner names."""

_OWNER_NAMES = np.array([CODE_OWNER[OPP_OWNS], CODE_OWNER[CENTRE], CODE_OWNER[ME_OWNS]])   # by code + 1


def money_cubeful(probs: np.ndarray, owner: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Cubeful equity per unit cube of each row (engine.cube.equity.money_cubeful_many):
    probs (n, 5) from the side valued; owner (n,) CENTRE / ME_OWNS / OPP_OWNS; x (n,)."""
    return cube_equity.money_cubeful_many(probs, _OWNER_NAMES[np.asarray(owner) + 1], x)


_TABLE_STATE = {CENTRE: bearoff.CENTRED, ME_OWNS: bearoff.ROLLER_OWNS, OPP_OWNS: bearoff.OPPONENT_OWNS}


def race_cubeful(boards: np.ndarray, probs: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """Cubeful equity per unit cube of each side on roll before its cube action: exact from
    the two-sided table where both sides are small bear-offs (max(ND, min(DT, 1)), or ND
    when the cube is the opponent's), else Janowski's money_cubeful."""
    boards = np.asarray(boards)
    owner = np.broadcast_to(np.asarray(owner), (len(boards),))
    out = money_cubeful(probs, owner, cube_equity.cube_efficiencies(boards))
    table = None
    for j, board in enumerate(boards):
        mine, theirs = bearoff.small_index(board[0], bearoff.BINOM), bearoff.small_index(board[1], bearoff.BINOM)
        if mine < 0 or theirs < 0:
            continue
        table = bearoff.cubeful_table() if table is None else table
        nd = table[_TABLE_STATE[int(owner[j])], mine, theirs]
        out[j] = nd if owner[j] == OPP_OWNS else max(nd, min(2.0 * table[bearoff.OPPONENT_OWNS, mine, theirs], 1.0))
    return out
