"""Hints and evaluations of any position, outside any game: the engine as a service.

The search runs in a worker thread so a 2-ply request does not stall live games.
"""

from __future__ import annotations

import numpy as np
from fastapi import APIRouter, Query
from fastapi.concurrency import run_in_threadpool

from engine.cube.equity import CubeInfo
from engine.dice import check_dice, parse_dice
from engine.evaluator import Evaluator, equity
from engine.formats.xgid import position_from_text
from engine.notation import format_play
from engine.position import Position
from engine.search import RankedPlay, evaluate_position, rank_plays
from scripts.webapp.context import Context

PROBABILITY_NAMES = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")

router = APIRouter(prefix="/api")


@router.get("/hint", summary="Rank the legal plays of a position and roll", tags=["analysis"])
async def hint(context: Context,
               position_id: str = Query(..., description="gnubg Position ID or XGID, side on roll's view"),
               dice: str = Query(..., description="the roll, e.g. 31 or 3-1"),
               ply: int = Query(1, ge=1, le=2, description="1 or 2 (2-ply averages the 21 replies)")
               ) -> dict:
    position = position_from_text(position_id)
    d1, d2 = check_dice(*parse_dice(dice))
    plays = await run_in_threadpool(rank, context.evaluator, position, d1, d2, ply)
    return {"position_id": position.id, "dice": [d1, d2], "ply": ply, "plays": plays}


@router.get("/eval", summary="Evaluate a position before the roll", tags=["analysis"])
async def evaluate(context: Context,
                   position_id: str = Query(..., description="gnubg Position ID or XGID, side on roll's view"),
                   ply: int = Query(1, ge=1, le=2)) -> dict:
    position = position_from_text(position_id)
    probs = await run_in_threadpool(evaluate_before_roll, context.evaluator, position, ply)
    return {"position_id": position.id, "ply": ply,
            "probabilities": {n: float(p) for n, p in zip(PROBABILITY_NAMES, probs)},
            "equity": float(equity(probs))}


@router.get("/games/{game_id}/hint", summary="The best plays of your roll in a game", tags=["analysis"])
async def game_hint(game_id: str, context: Context, token: str = Query(...)) -> dict:
    """The five best plays of the roll being played, at the computer's level's ply (1 in
    hot-seat), from the start of the turn: by cubeless money equity, or in a match by match
    equity (cubeful, normalised to a 1-cube, as the match analysis grades plays). 409 in
    friend games until both players allow hints (POST /api/games/{id}/hints), and when it is not your move."""
    game = context.hub.get(game_id)
    board, (d1, d2), ply, cube = game.hint_request(token)
    if cube is None:
        plays = await run_in_threadpool(rank, context.evaluator, Position(board), d1, d2, ply)
    else:
        plays = await run_in_threadpool(rank_in_match, context.evaluator, Position(board), d1, d2, ply, cube)
    return {"dice": [d1, d2], "ply": ply, "equity": "money" if cube is None else "match", "plays": plays[:5]}


def rank(evaluator: Evaluator, position: Position, d1: int, d2: int, ply: int) -> list[dict]:
    """The legal plays, best first, with equity and probabilities for the side on roll."""
    return [play_json(position, p, p.equity) for p in rank_plays(position.board, (d1, d2), evaluator, ply)]


def rank_in_match(evaluator: Evaluator, position: Position, d1: int, d2: int, ply: int,
                  cube: CubeInfo) -> list[dict]:
    """The legal plays ranked by the mover's match equity, best first: the match analysis's
    valuation (each afterstate's probabilities at `ply`, the opponent then on roll with his
    best cube action, normalised to a 1-cube: gnubg's EMG). As rank, the plays the search
    valued at the full ply come first."""
    from engine.analysis.grade import afterstate_equities

    plays = rank_plays(position.board, (d1, d2), evaluator, ply)
    if not plays:
        return []
    values = afterstate_equities(np.array([p.afterstate for p in plays]), np.array([p.probs for p in plays]), cube)
    order = sorted(range(len(plays)), key=lambda k: (-plays[k].ply, -values[k]))   # full-ply plays first
    return [play_json(position, plays[k], float(values[k])) for k in order]


def play_json(position: Position, play: RankedPlay, value: float) -> dict:
    """One ranked play as the API gives it: notation, `value` as its equity, its ply and
    probabilities, and the Position ID after it from the opponent's side."""
    return {"move": format_play(position.board, play.steps), "equity": value, "ply": play.ply,
            "probabilities": [float(x) for x in play.probs],
            "position_id": Position(play.afterstate).swap().id}


def evaluate_before_roll(evaluator: Evaluator, position: Position, ply: int) -> np.ndarray:
    """Probabilities for the side on roll before its roll."""
    return np.asarray(evaluate_position(position.board, evaluator, ply), dtype=np.float64)
