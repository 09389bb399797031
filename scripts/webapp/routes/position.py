"""The position page: any position (a gnubg Position ID, an XGID or a board set up by hand),
its evaluation before the roll, the cube action and, with dice, the ranked plays.

The side on roll is White on the page (its home board bottom right), so the board the
page draws and the board it sends back are in White's numbering: points[i] is White's
point i+1, positive for the side on roll, negative for the opponent. An XGID carries its
own dice, cube and match score; those replace the request's, and the answer's `settings`
say what was used so the page can show it and put it in the link.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from fastapi import APIRouter
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse
from pydantic import BaseModel, Field

from engine.dice import check_dice
from engine.evaluator import Evaluator, equity
from engine.errors import PositionIdError
from engine.position import BAR, CHECKERS, ME, OPP, Position
from scripts.webapp.context import Context
from scripts.webapp.routes.analysis import PROBABILITY_NAMES, evaluate_before_roll, rank
from scripts.webapp.routes.site import STATIC

router = APIRouter()

Owner = Literal["centre", "me", "opponent"]


class HandBoard(BaseModel):
    points: list[int] = Field(..., min_length=24, max_length=24,
                              description="White's points 1..24: + checkers of the side on roll (White), "
                                          "- the opponent's (Black)")
    bar: list[int] = Field([0, 0], min_length=2, max_length=2,
                           description="checkers on the bar: [side on roll, opponent]")


class PositionQuery(BaseModel):
    position: str | None = Field(None, description="gnubg Position ID, gnubg ID or XGID (give this or board)")
    board: HandBoard | None = Field(None, description="a board set up by hand (give this or position)")
    dice: list[int] | None = Field(None, min_length=2, max_length=2, description="the roll to rank plays for")
    cube: int = Field(1, description="cube value, a power of 2")
    owner: Owner = Field("centre", description="who owns the cube: centre, me (side on roll) or opponent")
    match: int = Field(0, ge=0, le=25, description="match length; 0 = money play")
    score: list[int] = Field([0, 0], min_length=2, max_length=2,
                             description="points won so far in the match: [side on roll, opponent]")
    crawford: bool = Field(False, description="this game is the Crawford game")
    jacoby: bool = Field(False, description="money play: the Jacoby rule")
    ply: int = Field(1, ge=1, le=2, description="1 or 2 (2-ply averages the opponent's 21 replies)")


@router.get("/position", include_in_schema=False)
async def position_page() -> FileResponse:
    return FileResponse(STATIC / "position.html")


@router.post("/api/position", summary="Evaluate a position: probabilities, cube action, ranked plays",
             tags=["analysis"])
async def analyse_position(body: PositionQuery, context: Context) -> dict:
    position, settings = read_position(body)
    return await run_in_threadpool(position_report, context.evaluator, position, settings)


def read_position(body: PositionQuery) -> tuple[Position, dict]:
    """The position asked about and the settings to use (those an XGID or gnubg ID carries,
    else the request's)."""
    from engine.formats.xgid import position_and_state

    if (body.position is None) == (body.board is None):
        raise PositionIdError("give either a position (Position ID or XGID) or a board, not both")
    dice = list(check_dice(*body.dice)) if body.dice else None
    settings = {"dice": dice, "cube": body.cube, "owner": body.owner, "match": body.match,
                "score": list(body.score), "crawford": body.crawford, "jacoby": body.jacoby, "ply": body.ply}
    if body.board is not None:
        return hand_position(body.board), settings
    position, state = position_and_state(body.position)
    if state is None:
        return position, settings
    from scripts.commands.cube_options import cube_from_match_state

    cube, _ = cube_from_match_state(state)
    settings.update(dice=list(state.dice) if state.dice != (0, 0) else None, cube=cube.value,
                    owner=cube.owner, match=cube.match_length,
                    score=list(cube.score), crawford=cube.crawford, jacoby=cube.jacoby)
    return position, settings


def hand_position(hand: HandBoard) -> Position:
    """A board set up by hand as a Position, with the Position ID's checks (at most 15 a side,
    one colour a point, not both sides borne off)."""
    board = np.zeros((2, 25), dtype=np.int8)
    for i, v in enumerate(hand.points):
        if v > 0:
            board[ME, i] = v
        elif v < 0:
            board[OPP, 23 - i] = -v
    board[ME, BAR], board[OPP, BAR] = hand.bar
    if (board < 0).any() or (board.sum(axis=1) > CHECKERS).any():
        raise PositionIdError(f"each side has at most {CHECKERS} checkers and none below zero")
    return Position.from_id(Position(board).id)


def position_report(evaluator: Evaluator, position: Position, settings: dict) -> dict:
    """Everything the page shows, JSON-ready."""
    from engine.cube.equity import CubeInfo
    from scripts.commands.cube_options import cube_report

    match = settings["match"]
    cube = CubeInfo(value=settings["cube"], owner=settings["owner"], jacoby=settings["jacoby"] and not match,
                    match_length=match, score=tuple(settings["score"]) if match else (0, 0),
                    crawford=settings["crawford"] and bool(match))
    ply = settings["ply"]
    probs = evaluate_before_roll(evaluator, position, ply)
    out = {"position_id": position.id, "board": board_json(position), "settings": settings,
           "pips": dict(zip(("white", "black"), position.pips())),
           "evaluation": {"ply": ply, "probabilities": {n: float(p) for n, p in zip(PROBABILITY_NAMES, probs)},
                          "equity": float(equity(probs))},
           "cube": cube_report(position, evaluator, ply, cube, cubeless=probs), "plays": None}
    if settings["dice"]:
        out["plays"] = rank(evaluator, position, *settings["dice"], ply)
    return out


def board_json(position: Position) -> dict:
    """The board as the game's state gives it: White (the side on roll) positive, White's numbering."""
    b = position.board
    points = [int(b[ME, i]) - int(b[OPP, 23 - i]) for i in range(24)]
    off = [CHECKERS - int(b[s].sum()) for s in (ME, OPP)]
    return {"points": points, "bar": {"white": int(b[ME, BAR]), "black": int(b[OPP, BAR])},
            "off": {"white": off[0], "black": off[1]}}
