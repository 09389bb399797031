"""The games held in memory and the websockets watching each.

Games live only in this process: a restart forgets them. The count is capped so an
open server cannot be made to hold games without end; finished games go first.
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import WebSocket
from fastapi.concurrency import run_in_threadpool

from scripts.webapp.game import Game, GameError

MAX_GAMES = 1000


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
        """Send each watcher the game's new state, as its own seat sees it."""
        for ws, token in list(self.sockets.get(game.id, [])):
            try:
                await ws.send_json(game.state(token))
            except Exception:  # a socket closing mid-send is dropped by its own handler
                pass

    async def apply(self, game: Game, change: Callable[[], object]) -> None:
        """Run a change off the event loop (the computer may think), then tell the watchers."""
        await run_in_threadpool(change)
        await self.broadcast(game)
