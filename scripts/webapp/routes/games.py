"""Starting, looking at and joining games: the requests made before holding a seat token."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request

from scripts.webapp.bodies import NewGame
from scripts.webapp.context import Context
from scripts.webapp.game import COLORS, GameError

FOREIGN_TOKEN = "this seat token does not belong to this game (forged or stale)"

router = APIRouter(prefix="/api/games")


def client_address(request: Request) -> str:
    """The address a request came from: the key of the per-client cap and of the history."""
    return request.client.host if request.client else ""


@router.post("", summary="Start a game", tags=["games"])
async def create_game(body: NewGame, context: Context, request: Request) -> dict:
    """Returns the game id, your seat token (keep it secret) and the state.

    429 when your address already has too many games in progress (finish or resign one)."""
    game = context.new_game(body.mode, body.level, body.color, body.cube, client_address(request), body.match)
    return {"game_id": game.id, "token": game.creator_token, "state": game.state(game.creator_token)}


@router.get("/{game_id}", summary="The state of a game", tags=["games"])
async def get_game(game_id: str, context: Context, token: str | None = Query(None)) -> dict:
    game = context.hub.get(game_id)
    if token is not None and not game.seats_of(token):
        raise GameError(403, FOREIGN_TOKEN)
    return game.state(token)


@router.post("/{game_id}/join", summary="Take the free seat of a friend game", tags=["games"])
async def join(game_id: str, context: Context, request: Request) -> dict:
    game = context.hub.get(game_id)
    seat, token = game.join()
    context.store.set_guest(game.id, client_address(request))
    await context.hub.broadcast(game)
    return {"game_id": game.id, "token": token, "seat": COLORS[seat], "state": game.state(token)}
