"""Finished games: the list of the ones played from your address, each game as a .mat file and
its analysis."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import FileResponse, PlainTextResponse

from scripts.webapp.context import Context
from scripts.webapp.record import game_mat, history_row
from scripts.webapp.routes.games import client_address
from scripts.webapp.routes.site import STATIC

router = APIRouter()


@router.get("/history", include_in_schema=False)
async def history_page() -> FileResponse:
    return FileResponse(STATIC / "history.html")


@router.get("/api/history", summary="Your finished games, newest first", tags=["history"])
async def history(context: Context, request: Request) -> dict:
    """The finished games created or joined from this client address (at most 100)."""
    rows = context.store.finished_of(client_address(request))
    return {"games": [history_row(g.record, g.finished) for g in rows]}


@router.get("/api/games/{game_id}/mat", summary="The game as a .mat file (gnubg: import mat)",
            tags=["history"], response_class=PlainTextResponse)
async def mat(game_id: str, context: Context) -> PlainTextResponse:
    """The moves as played (takebacks left out) and cube actions, Jellyfish .mat text."""
    game = context.hub.get(game_id)
    with game.lock:
        text = game_mat(game.to_record())
    return PlainTextResponse(text, headers={"Content-Disposition": f'attachment; filename="tdgammon-{game.id}.mat"'})


@router.get("/api/games/{game_id}/analysis", summary="Every decision of the finished game graded",
            tags=["history"])
async def analysis(game_id: str, context: Context,
                   ply: int | None = Query(None, ge=1, le=2, description="1 or 2; default the computer "
                                           "level's ply (2 between people)")) -> dict:
    """`tdgammon analyse --json` of the game (a match: its finished games): each decision's
    error and mark, both players' error rates, ratings and luck (docs/analysis.md). Made in
    a worker thread and kept beside the game, so asking again is free. 409 while no game is over."""
    game = context.hub.get(game_id)
    with game.lock:
        record = game.to_record()
    return await run_in_threadpool(context.analyses.get, record, ply)
