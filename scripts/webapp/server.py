"""The web game's ASGI app: the JSON API (OpenAPI at /docs), a websocket per game, the page.

Every change goes through scripts.webapp.game.Game, which checks the seat token and the
rules before touching anything; a refusal is a 4xx with {"error": "<message>"}. After a
change, every websocket watching the game receives the new state (each with its own
seat's view), so a friend sees moves live.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable
from pathlib import Path

import numpy as np
from fastapi import FastAPI, Query, Request, WebSocket, WebSocketDisconnect
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field

from engine.dice import check_dice, parse_dice
from engine.errors import TdgammonError
from engine.evaluator import Evaluator, equity
from engine.search import evaluate_position, rank_plays
from engine.notation import format_play
from engine.position import Position
from scripts.webapp.computer import LEVELS, ComputerPlayer
from scripts.webapp.game import COLORS, CryptoDice, Game, GameError, color_index

STATIC = Path(__file__).resolve().parent / "static"
MAX_GAMES = 1000


class NewGame(BaseModel):
    mode: str = Field("computer", description="'computer', 'hotseat' or 'friend'")
    level: str = Field("medium", description="computer strength: 'easy' (1-ply with noise), "
                                             "'medium' (1-ply) or 'hard' (2-ply over the 21 rolls)")
    color: str = Field("white", description="your colour: 'white' or 'black' (vs computer and friend)")
    cube: bool = Field(False, description="play with the doubling cube: money play, cube centred at 1, "
                                          "Jacoby and beavers off; results count the cube value")


class TokenBody(BaseModel):
    token: str = Field(..., description="the seat token returned when the game was created or joined")


class StepBody(TokenBody):
    from_point: int = Field(..., alias="from", ge=0, le=25,
                            description="source point in the mover's numbering; 25 = bar")
    to_point: int = Field(..., alias="to", ge=0, le=25,
                          description="destination point in the mover's numbering; 0 = off")
    die: int | None = Field(None, ge=1, le=6, description="the die to use, when two dice fit")


class Hub:
    """The games in memory and the websockets watching each."""

    def __init__(self) -> None:
        self.games: dict[str, Game] = {}
        self.sockets: dict[str, list[tuple[WebSocket, str | None]]] = {}

    def get(self, game_id: str) -> Game:
        game = self.games.get(game_id)
        if game is None:
            raise GameError(404, f"no game with id {game_id!r}")
        return game

    def add(self, game: Game) -> None:
        if len(self.games) >= MAX_GAMES:
            finished = [g for g, v in self.games.items() if v.phase == "over"] or list(self.games)
            for old in finished[: len(self.games) - MAX_GAMES + 1]:
                self.games.pop(old, None)
        self.games[game.id] = game

    async def broadcast(self, game: Game) -> None:
        for ws, token in list(self.sockets.get(game.id, [])):
            try:
                await ws.send_json(game.state(token))
            except Exception:  # a socket closing mid-send is dropped by its own handler
                pass


def create_app(evaluator: Evaluator, dice_factory: Callable[[], object] = CryptoDice,
               disconnect_timeout: float = 120.0, seed: int | None = None) -> FastAPI:
    """The app; `dice_factory` makes each game's dice (CryptoDice unless a test injects one)."""
    hub = Hub()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        """Push friend games' state now and then, so the host learns when it may take over."""
        async def presence() -> None:
            while True:
                await asyncio.sleep(max(0.5, min(5.0, disconnect_timeout / 4)))
                for game in list(hub.games.values()):
                    if game.mode == "friend" and game.phase not in ("over", "waiting") and hub.sockets.get(game.id):
                        await hub.broadcast(game)
        task = asyncio.create_task(presence())
        yield
        task.cancel()

    app = FastAPI(
        lifespan=lifespan,
        title="tdgammon play",
        description="Backgammon against the tdgammon engine, hot-seat or against a friend. "
                    "The server rolls, checks every step against the rules and keeps the state; "
                    "points in requests are in the mover's numbering (25 = bar, 0 = off).",
        version="1",
    )
    app.state.hub = hub
    import random
    rng = random.Random(seed)

    def computer(level: str) -> ComputerPlayer:
        if level not in LEVELS:
            raise GameError(400, f"level must be one of {', '.join(LEVELS)}, got {level!r}")
        return ComputerPlayer(evaluator, level, random.Random(rng.getrandbits(64)))

    @app.exception_handler(GameError)
    async def _game_error(request: Request, err: GameError) -> JSONResponse:
        return JSONResponse({"error": err.message}, status_code=err.status)

    @app.exception_handler(TdgammonError)
    async def _input_error(request: Request, err: TdgammonError) -> JSONResponse:
        return JSONResponse({"error": str(err)}, status_code=400)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(request: Request, err: RequestValidationError) -> JSONResponse:
        parts = []
        for e in err.errors():
            where = ".".join(str(x) for x in e.get("loc", ()) if x != "body")
            parts.append(f"{where}: {e.get('msg')}")
        return JSONResponse({"error": "bad request: " + "; ".join(parts)}, status_code=422)

    def new_game(mode: str, level: str, color: str, cube: bool = False) -> Game:
        human = color_index(color)
        player = computer(level) if mode == "computer" else None
        game = Game(secrets.token_urlsafe(9), mode, dice_factory(), player, human, disconnect_timeout, cube)
        hub.add(game)
        return game

    async def act(game: Game, fn: Callable[[], object]) -> None:
        await run_in_threadpool(fn)
        await hub.broadcast(game)

    @app.get("/", include_in_schema=False)
    async def index() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    @app.post("/api/games", summary="Start a game", tags=["games"])
    async def create_game(body: NewGame) -> dict:
        """Returns the game id, your seat token (keep it secret) and the state."""
        game = new_game(body.mode, body.level, body.color, body.cube)
        return {"game_id": game.id, "token": game.creator_token, "state": game.state(game.creator_token)}

    @app.get("/api/games/{game_id}", summary="The state of a game", tags=["games"])
    async def get_game(game_id: str, token: str | None = Query(None)) -> dict:
        game = hub.get(game_id)
        if token is not None and not game.seats_of(token):
            raise GameError(403, "this seat token does not belong to this game (forged or stale)")
        return game.state(token)

    @app.post("/api/games/{game_id}/join", summary="Take the free seat of a friend game", tags=["games"])
    async def join(game_id: str) -> dict:
        game = hub.get(game_id)
        seat, token = game.join()
        await hub.broadcast(game)
        return {"game_id": game.id, "token": token, "seat": COLORS[seat], "state": game.state(token)}

    def action(name: str, summary: str, method: str, tag: str = "games", doc: str | None = None) -> None:
        async def handler(game_id: str, body: TokenBody) -> dict:
            game = hub.get(game_id)
            await act(game, lambda: getattr(game, method)(body.token))
            return game.state(body.token)
        handler.__name__ = name.replace("-", "_")
        handler.__doc__ = doc
        app.post(f"/api/games/{{game_id}}/{name}", summary=summary, tags=[tag])(handler)

    action("roll", "Roll the dice (or the opening roll)", "roll")
    action("undo-step", "Take back the last step of the move in progress", "undo_step")
    action("confirm", "End the turn with the steps played", "confirm")
    action("undo-move", "Back to the start of your last move, dice kept (not vs a friend)", "undo_move")
    action("resign", "Resign: the opponent wins a single game (times the cube value)", "resign")
    action("double", "Double (games with cube): offer the cube at twice its value", "double", "cube",
           "Only before rolling, by the side on turn, when the cube is centred or its own. The game "
           "then waits in phase 'doubled' for the opponent's take or pass (the computer answers at "
           "once). 409 in a cubeless game, after rolling, when the opponent owns the cube, or "
           "when it is not your turn.")
    action("take", "Take the pending double: the cube doubles and is yours", "take", "cube",
           "The doubler then rolls. 409 when no double is pending or you are the doubler.")
    action("pass", "Pass the pending double: the doubler wins the cube's value", "drop", "cube",
           "Ends the game; the result has 'passed': true and 'points' = the cube value before "
           "the double. 409 when no double is pending or you are the doubler.")

    @app.post("/api/games/{game_id}/step", summary="Move one checker by one die", tags=["games"])
    async def step(game_id: str, body: StepBody) -> dict:
        """Only steps that start some legal full play are accepted (the state lists them)."""
        game = hub.get(game_id)
        await act(game, lambda: game.step(body.token, body.from_point, body.to_point, body.die))
        return game.state(body.token)

    @app.post("/api/games/{game_id}/take-over", tags=["games"],
              summary="Host continues against the computer after the friend left")
    async def take_over(game_id: str, body: TokenBody) -> dict:
        game = hub.get(game_id)
        await act(game, lambda: game.take_over(body.token, computer("medium")))
        return game.state(body.token)

    @app.post("/api/games/{game_id}/rematch", tags=["games"],
              summary="A new game with White and Black swapped; returns your token for it")
    async def rematch(game_id: str, body: TokenBody) -> dict:
        game = hub.get(game_id)
        seats = game.seats_of(body.token)
        if not seats:
            raise GameError(403, "this seat token does not belong to this game (forged or stale)")
        if game.phase != "over":
            raise GameError(409, "a rematch can start only when the game is over")
        with game.lock:
            if game.rematch_id is None or game.rematch_id not in hub.games:
                new = Game(secrets.token_urlsafe(9), game.mode, dice_factory(),
                           computer(game.level) if game.mode == "computer" else None,
                           1 - game.host, disconnect_timeout, game.cube_enabled)
                if game.mode == "friend":
                    new.seats[game.host].token = secrets.token_urlsafe(18)
                    new.phase = "opening"
                new.swap_tokens = {game.seats[s].token: new.seats[1 - s].token for s in (0, 1)
                                   if game.seats[s].token}
                hub.add(new)
                game.rematch_id = new.id
                game.version += 1
            new = hub.get(game.rematch_id)
        if game.mode == "friend":
            token = new.swap_tokens[body.token]
        else:
            token = new.creator_token
        await hub.broadcast(game)
        return {"game_id": new.id, "token": token, "state": new.state(token)}

    @app.get("/api/hint", summary="Rank the legal plays of a position and roll", tags=["analysis"])
    async def hint(position_id: str = Query(..., description="gnubg Position ID, side on roll's view"),
                   dice: str = Query(..., description="the roll, e.g. 31 or 3-1"),
                   ply: int = Query(1, ge=1, le=2, description="1 or 2 (2-ply averages the 21 replies)")
                   ) -> dict:
        position = Position.from_id(position_id)
        d1, d2 = check_dice(*parse_dice(dice))
        plays = await run_in_threadpool(rank, evaluator, position, d1, d2, ply)
        return {"position_id": position.id, "dice": [d1, d2], "ply": ply, "plays": plays}

    @app.get("/api/eval", summary="Evaluate a position before the roll", tags=["analysis"])
    async def evaluate(position_id: str = Query(..., description="gnubg Position ID, side on roll's view"),
                       ply: int = Query(1, ge=1, le=2)) -> dict:
        position = Position.from_id(position_id)
        probs = await run_in_threadpool(evaluate_before_roll, evaluator, position, ply)
        names = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")
        return {"position_id": position.id, "ply": ply,
                "probabilities": {n: float(p) for n, p in zip(names, probs)},
                "equity": float(equity(probs))}

    @app.websocket("/api/games/{game_id}/ws")
    async def watch(ws: WebSocket, game_id: str, token: str | None = None) -> None:
        game = hub.games.get(game_id)
        if game is None:
            await ws.close(code=4404, reason=f"no game with id {game_id!r}")
            return
        await ws.accept()
        hub.sockets.setdefault(game_id, []).append((ws, token))
        game.connect(token, +1)
        await hub.broadcast(game)
        try:
            while True:
                await ws.receive_text()
        except WebSocketDisconnect:
            pass
        finally:
            hub.sockets[game_id] = [(w, t) for w, t in hub.sockets.get(game_id, []) if w is not ws]
            game.connect(token, -1)
            await hub.broadcast(game)

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict:
        return {"ok": True, "evaluator": getattr(evaluator, "name", "?")}

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


def rank(evaluator: Evaluator, position: Position, d1: int, d2: int, ply: int) -> list[dict]:
    """The legal plays, best first, with equity and probabilities for the side on roll."""
    return [{"move": format_play(position.board, p.steps), "equity": p.equity, "ply": p.ply,
             "probabilities": [float(x) for x in p.probs],
             "position_id": Position(p.afterstate).swap().id}
            for p in rank_plays(position.board, (d1, d2), evaluator, ply)]


def evaluate_before_roll(evaluator: Evaluator, position: Position, ply: int) -> np.ndarray:
    """Probabilities for the side on roll before its roll."""
    return np.asarray(evaluate_position(position.board, evaluator, ply), dtype=np.float64)
