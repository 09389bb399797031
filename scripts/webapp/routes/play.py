"""What a seat does to its game, each request carrying the seat token: moves, cube, rematch.

Game checks the token and the rules; these handlers only run the change off the event
loop, tell the watchers, and answer with the state as the acting seat sees it.
"""

from __future__ import annotations

from fastapi import APIRouter, Request

from scripts.webapp.bodies import HintsBody, ResignBody, StepBody, TokenBody
from scripts.webapp.context import Context
from scripts.webapp.game import GameError
from scripts.webapp.routes.games import FOREIGN_TOKEN, client_address

router = APIRouter(prefix="/api/games")


def _seat_action(name: str, summary: str, method: str, tag: str = "games", doc: str | None = None) -> None:
    """Route POST /api/games/{game_id}/<name> to Game.<method>(token)."""
    async def handler(game_id: str, body: TokenBody, context: Context) -> dict:
        game = context.hub.get(game_id)
        await context.hub.apply(game, lambda: getattr(game, method)(body.token))
        return game.state(body.token)
    handler.__name__ = name.replace("-", "_")
    handler.__doc__ = doc
    router.post(f"/{{game_id}}/{name}", summary=summary, tags=[tag])(handler)


_seat_action("roll", "Roll the dice (or the opening roll)", "roll")
_seat_action("undo-step", "Take back the last step of the move in progress", "undo_step")
_seat_action("confirm", "End the turn with the steps played", "confirm")
_seat_action("undo-move", "Back to the start of your last move, dice kept (not vs a friend)", "undo_move")
_seat_action("double", "Double (games with cube): offer the cube at twice its value", "double", "cube",
             "Only before rolling, by the side on turn, when the cube is centred or its own. The game "
             "then waits in phase 'doubled' for the opponent's take or pass (the computer answers at "
             "once). 409 in a cubeless game, after rolling, when the opponent owns the cube, or "
             "when it is not your turn.")
_seat_action("take", "Take the pending double: the cube doubles and is yours", "take", "cube",
             "The doubler then rolls. 409 when no double is pending or you are the doubler.")
_seat_action("pass", "Pass the pending double: the doubler wins the cube's value", "drop", "cube",
             "Ends the game; the result has 'passed': true and 'points' = the cube value before "
             "the double. 409 when no double is pending or you are the doubler.")


_seat_action("accept-resign", "Accept the resignation your friend offers: the game ends for its points",
             "accept_resignation", doc="409 when no resignation is offered or you offered it.")
_seat_action("refuse-resign", "Refuse the resignation your friend offers: play goes on",
             "refuse_resignation", doc="409 when no resignation is offered or you offered it.")


@router.post("/{game_id}/step", summary="Move one checker by one die", tags=["games"])
async def step(game_id: str, body: StepBody, context: Context) -> dict:
    """Only steps that start some legal full play are accepted (the state lists them)."""
    game = context.hub.get(game_id)
    await context.hub.apply(game, lambda: game.step(body.token, body.from_point, body.to_point, body.die))
    return game.state(body.token)


@router.post("/{game_id}/resign", summary="Resign a single game, gammon or backgammon", tags=["games"])
async def resign(game_id: str, body: ResignBody, context: Context) -> dict:
    """The opponent wins `points` (1-3; more than 1 only with the cube or in a match) times the
    cube value. The computer accepts or refuses from its evaluation (a refusal is in the log);
    with the cube a friend accepts or refuses in their page (phase 'resign' meanwhile); otherwise the
    points are given at once."""
    game = context.hub.get(game_id)
    await context.hub.apply(game, lambda: game.resign(body.token, body.points))
    return game.state(body.token)


@router.post("/{game_id}/hints", summary="Allow hints in a friend game, or withdraw", tags=["analysis"])
async def allow_hints(game_id: str, body: HintsBody, context: Context) -> dict:
    """Hint is on for both players of a friend game only while both seats allow it; either may
    withdraw. Stored and logged like a move. 403 for a spectator, 409 outside friend games and
    once the game is over."""
    game = context.hub.get(game_id)
    await context.hub.apply(game, lambda: game.allow_hints(body.token, body.allow))
    return game.state(body.token)


@router.post("/{game_id}/take-over", tags=["games"],
             summary="Host continues against the computer after the friend left")
async def take_over(game_id: str, body: TokenBody, context: Context) -> dict:
    game = context.hub.get(game_id)
    await context.hub.apply(game, lambda: game.take_over(body.token, context.computer("medium")))
    return game.state(body.token)


@router.post("/{game_id}/rematch", tags=["games"],
             summary="A new game with White and Black swapped; returns your token for it")
async def rematch(game_id: str, body: TokenBody, context: Context, request: Request) -> dict:
    game = context.hub.get(game_id)
    if not game.seats_of(body.token):
        raise GameError(403, FOREIGN_TOKEN)
    if game.phase != "over":
        raise GameError(409, "a rematch can start only when the game is over")
    new = context.rematch_of(game, client_address(request))
    token = new.swap_tokens[body.token] if game.mode == "friend" else new.creator_token
    await context.hub.broadcast(game)
    return {"game_id": new.id, "token": token, "state": new.state(token)}
