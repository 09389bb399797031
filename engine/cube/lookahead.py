"""Cube decisions that look ahead: 2-ply and 3-ply, money and match play.

A cube state's value is the mean over my 21 rolls of my best play for that state; at
2-ply each afterstate is valued by the opponent's best 1-ply cube action on it (Janowski,
engine.cube.equity), at 3-ply each roll's few best plays by the opponent's own 2-ply cube
decision. This is gnubg's cubeful n-ply evaluation (its numbering one less), not an
average of 1-ply cube values. Small bear-offs take the two-sided table's exact values at
every ply.
"""

from __future__ import annotations

import numpy as np

from engine.cube.equity import (CENTRE, CubeDecision, CubeInfo, best_cube_value, best_cube_values, cash_value,
                                cube_decision, cube_efficiencies, cube_efficiency, decide, small_bearoff_values)
from engine.evaluator import WIN_GAMMON, Evaluator, Parents, equity, flip
from engine.movegen import generate
from engine.position import game_results, is_race
from engine.search import ROLL_WEIGHTS, ROLLS, evaluate_afterstates, evaluate_position, roll_average


def _leaf_values(afterstates: np.ndarray, probs: np.ndarray, cube: CubeInfo) -> np.ndarray:
    """My value of each afterstate (opponent to roll with `cube`), after his best 1-ply cube action."""
    points = game_results(afterstates)
    opp_cube = cube.swapped()
    opp_boards = afterstates[:, ::-1]
    opp_probs = flip(probs)
    out = _mine(best_cube_values(opp_probs, opp_cube, cube_efficiencies(opp_boards)), cube)
    scalar = points != 0
    if cube.is_money and not cube.beavers:
        scalar |= (opp_boards.sum(axis=2) <= 6).all(axis=1)   # maybe a small bear-off: exact values
    for k in np.flatnonzero(scalar):
        if points[k]:
            pts = int(points[k])
            if cube.is_money and cube.jacoby and cube.owner == CENTRE:
                pts = int(np.sign(pts))
            out[k] = cash_value(cube, pts)
            continue
        opp_board = opp_boards[k]
        out[k] = _mine(best_cube_value(opp_probs[k], opp_cube, cube_efficiency(opp_board), opp_board), cube)
    return out


def _mine(opp_value, cube: CubeInfo):
    """My value where the opponent's is opp_value: its negative in money play (points), one
    minus it in match play (match winning chances)."""
    return -opp_value if cube.is_money else 1.0 - opp_value


def _roll_afterstates(board: np.ndarray, evaluator: Evaluator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """My 21 rolls' afterstates (the board itself where a roll has no play), their
    probabilities, and where each roll's afterstates start and end."""
    groups = []
    for d1, d2 in ROLLS:
        after, _ = generate(board, int(d1), int(d2))
        groups.append(after if len(after) else board[None].copy())
    afterstates = np.concatenate(groups)
    n = len(afterstates)
    probs = evaluate_afterstates(evaluator, afterstates, np.full(n, is_race(board)),
                                 Parents(board[None], np.zeros(n, dtype=np.int64)))
    bounds = np.concatenate([[0], np.cumsum([len(g) for g in groups])])
    return afterstates, probs, bounds


def _roll_mean_of_best(leaves: np.ndarray, bounds: np.ndarray) -> float:
    """The mean over the 21 rolls of each roll's best leaf."""
    best = np.array([leaves[bounds[r]:bounds[r + 1]].max() for r in range(len(bounds) - 1)])
    return float(best @ ROLL_WEIGHTS)


def _nd_dt_2ply(board: np.ndarray, evaluator: Evaluator, cube: CubeInfo,
                expansion: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> tuple[float, float]:
    """No double and Double/take at 2-ply, in cubeful_value units (exact for small bear-offs);
    expansion: the board's _roll_afterstates if already made (they serve every cube)."""
    exact = small_bearoff_values(board, cube)
    if exact is not None:
        return exact
    afterstates, probs, bounds = expansion if expansion is not None else _roll_afterstates(board, evaluator)
    return (_roll_mean_of_best(_leaf_values(afterstates, probs, cube), bounds),
            _roll_mean_of_best(_leaf_values(afterstates, probs, cube.doubled()), bounds))


def cube_decision_2ply(board: np.ndarray, evaluator: Evaluator, cube: CubeInfo,
                       cubeless: np.ndarray | None = None) -> CubeDecision:
    """2-ply cube decision: each cube state's value is the mean over my 21 rolls of my best
    play for that state, each leaf valued by the opponent's 1-ply cube decision. cubeless:
    the board's 2-ply cubeless probabilities when the caller has them (else computed).
    """
    board = np.ascontiguousarray(board, dtype=np.int8)
    nd, dt = _nd_dt_2ply(board, evaluator, cube)
    cubeless_probs = roll_average(board[None], evaluator)[0] if cubeless is None else cubeless
    return decide(cube, nd, dt, float(equity(cubeless_probs)), bool(cubeless_probs[WIN_GAMMON] > 0.0))


# A 3-ply cube decision values each roll's best few plays (by the 2-ply leaves) with the
# opponent's own 2-ply cube decision, as gnubg's move filters keep its cubeful search cheap.
CUBE_3PLY_KEEP = 2


def cube_decision_3ply(board: np.ndarray, evaluator: Evaluator, cube: CubeInfo,
                       cubeless: np.ndarray | None = None) -> CubeDecision:
    """3-ply cube decision (gnubg's 2-ply): each cube state's value is the mean over my 21
    rolls of my best play for that state among the CUBE_3PLY_KEEP best by the 2-ply leaves,
    each valued by the opponent's best cube action at 2-ply. cubeless: the board's 3-ply
    cubeless probabilities when the caller has them (else computed: a fifth of the cost)."""
    board = np.ascontiguousarray(board, dtype=np.int8)
    states = (cube, cube.doubled())
    afterstates, probs, bounds = _roll_afterstates(board, evaluator)
    shallow = [_leaf_values(afterstates, probs, state) for state in states]
    keep: set[int] = set()
    for r in range(len(bounds) - 1):
        for leaves in shallow:
            order = np.argsort(-leaves[bounds[r]:bounds[r + 1]], kind="stable")
            keep.update(int(bounds[r] + i) for i in order[:CUBE_3PLY_KEEP])
    finished = game_results(afterstates) != 0
    deep = [np.full(len(afterstates), -np.inf) for _ in states]
    for k in keep:
        opp_board = np.ascontiguousarray(afterstates[k][::-1])
        expansion = None if finished[k] else _roll_afterstates(opp_board, evaluator)   # one for both states
        for leaves, state, deep_leaves in zip(shallow, states, deep):
            if finished[k]:
                deep_leaves[k] = leaves[k]    # the game's result, exact
                continue
            opp_cube = state.swapped()
            nd, dt = _nd_dt_2ply(opp_board, evaluator, opp_cube, expansion)
            opp = max(nd, min(dt, cash_value(opp_cube, 1))) if opp_cube.may_double() else nd
            deep_leaves[k] = _mine(opp, cube)
    nd, dt = (_roll_mean_of_best(deep_leaves, bounds) for deep_leaves in deep)
    cubeless_probs = evaluate_position(board, evaluator, 3) if cubeless is None else cubeless
    return decide(cube, nd, dt, float(equity(cubeless_probs)), bool(cubeless_probs[WIN_GAMMON] > 0.0))


def cube_decision_at_ply(board: np.ndarray, evaluator: Evaluator, cube: CubeInfo, ply: int,
                         cubeless: np.ndarray | None = None) -> CubeDecision:
    """The cube decision at a ply: 1-ply Janowski, cube_decision_2ply or cube_decision_3ply;
    a small bear-off's exact values at any ply. cubeless: the board's cubeless probabilities
    at this ply (engine.search.evaluate_position) when the caller already has them."""
    if ply >= 2 and small_bearoff_values(board, cube) is None:
        return (cube_decision_3ply if ply >= 3 else cube_decision_2ply)(board, evaluator, cube, cubeless)
    if cubeless is None or ply != 1:
        cubeless = evaluate_position(board, evaluator, 1)
    return cube_decision(cubeless, cube, cube_efficiency(board), board)
