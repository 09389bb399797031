"""Janowski money cubeful equity over arrays (engine.cube.equity.money_cubeful, vectorised).

Rollouts value thousands of afterstates a turn cubefully (for the cubeful variance
reduction and at truncation); calling the scalar function per row would cost more than the
network. Money play, Jacoby off; tests check it equals engine.cube.equity row by row.
"""

from __future__ import annotations

import numpy as np

from engine import bearoff
from engine.cube.equity import (CONTACT_EFFICIENCY, RACE_BASE, RACE_MAX, RACE_MIN, RACE_PER_PIP)
from engine.evaluator import equity
from engine.position import race_flags

_EPS = 1e-7
CENTRE, ME_OWNS, OPP_OWNS = 0, 1, -1
"""Cube owner codes from the side whose value is computed (negate for the other side)."""
CODE_OWNER = {CENTRE: "centre", ME_OWNS: "me", OPP_OWNS: "opponent"}
"""The codes as engine.cube.equity's owner names."""

_PIPS = np.arange(1, 26)


def efficiency(boards: np.ndarray) -> np.ndarray:
    """engine.cube.equity.cube_efficiency of each (n, 2, 25) board, row 0 = the side valued."""
    boards = np.asarray(boards)
    pips = boards[:, 0].astype(np.int64) @ _PIPS
    race_x = np.clip(RACE_BASE + RACE_PER_PIP * pips, RACE_MIN, RACE_MAX)
    return np.where(race_flags(boards), race_x, CONTACT_EFFICIENCY)


def money_cubeful(probs: np.ndarray, owner: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Cubeful equity per unit cube of each row: (1 - x) dead + x Janowski live.

    probs (n, 5) from the side valued; owner (n,) CENTRE / ME_OWNS / OPP_OWNS; x (n,).
    """
    p = np.asarray(probs, dtype=np.float64).reshape(-1, 5)
    owner = np.broadcast_to(np.asarray(owner), (len(p),))
    dead = equity(p)
    pw = p[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(pw > _EPS, 1.0 + (p[:, 1] + p[:, 2]) / np.maximum(pw, _EPS), 1.0)
        lose = 1.0 - pw
        l_ = np.where(lose > _EPS, 1.0 + (p[:, 3] + p[:, 4]) / np.maximum(lose, _EPS), 1.0)
        tp = (l_ - 0.5) / (w + l_ + 0.5)
        cp = (l_ + 1.0) / (w + l_ + 0.5)
        low_tp = -l_ + (l_ - 1.0) * pw / tp
        high_cp = 1.0 + (w - 1.0) * (pw - cp) / (1.0 - cp)
        centre = np.where(pw < tp, low_tp, np.where(pw < cp, -1.0 + 2.0 * (pw - tp) / (cp - tp), high_cp))
        mine = np.where(pw < cp, -l_ + (1.0 + l_) * pw / cp, high_cp)
        theirs = np.where(pw < tp, low_tp, -1.0 + (w + 1.0) * (pw - tp) / (1.0 - tp))
    live = np.where(owner == CENTRE, centre, np.where(owner == ME_OWNS, mine, theirs))
    out = (1.0 - x) * dead + x * live
    return np.where((pw <= _EPS) | (pw >= 1.0 - _EPS), dead, out)


_TABLE_STATE = {CENTRE: bearoff.CENTRED, ME_OWNS: bearoff.ROLLER_OWNS, OPP_OWNS: bearoff.OPPONENT_OWNS}


def race_cubeful(boards: np.ndarray, probs: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """Cubeful equity per unit cube of each side on roll before its cube action: exact from
    the two-sided table where both sides are small bear-offs (max(ND, min(DT, 1)), or ND
    when the cube is the opponent's), else Janowski's money_cubeful."""
    boards = np.asarray(boards)
    owner = np.broadcast_to(np.asarray(owner), (len(boards),))
    out = money_cubeful(probs, owner, efficiency(boards))
    table = None
    for j, board in enumerate(boards):
        mine, theirs = bearoff.small_index(board[0], bearoff.BINOM), bearoff.small_index(board[1], bearoff.BINOM)
        if mine < 0 or theirs < 0:
            continue
        table = bearoff.cubeful_table() if table is None else table
        nd = table[_TABLE_STATE[int(owner[j])], mine, theirs]
        out[j] = nd if owner[j] == OPP_OWNS else max(nd, min(2.0 * table[bearoff.OPPONENT_OWNS, mine, theirs], 1.0))
    return out
