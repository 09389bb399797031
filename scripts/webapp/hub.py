"""The games being played: the store on disk, the ones in memory, and the websockets watching each.

The store (scripts.webapp.store) is the truth; memory holds the games in use, loaded on
first sight after a restart and let go (least recently used, never one with a page
connected) past MAX_IN_MEMORY. Every change a Game makes is saved through its
`on_change` hook before the request is answered.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

from fastapi import WebSocket
from fastapi.concurrency import run_in_threadpool

from scripts.webapp.game import Game, GameError
from scripts.webapp.store import GameStore, StoreFull

MAX_IN_MEMORY = 2000


class Hub:
    """The games (stored, and cached in memory) and the websockets watching each."""

    def __init__(self, store: GameStore, revive: Callable[[dict], Game]) -> None:
        self.store = store
        self.revive = revive
        self.games: OrderedDict[str, Game] = OrderedDict()
        self.sockets: dict[str, list[tuple[WebSocket, str | None]]] = {}
        self._lock = threading.Lock()

    def find(self, game_id: str) -> Game | None:
        """The game, from memory or brought back from the store; None when there is none."""
        with self._lock:
            game = self.games.get(game_id)
            if game is not None:
                self.games.move_to_end(game_id)
                return game
        record = self.store.load(game_id)
        if record is None:
            return None
        with self._lock:
            game = self.games.get(game_id)      # another request may have loaded it meanwhile
            if game is None:
                game = self.revive(record)
                self._keep(game)
            return game

    def get(self, game_id: str) -> Game:
        game = self.find(game_id)
        if game is None:
            raise GameError(404, f"no game with id {game_id!r}")
        return game

    def add(self, game: Game, client: str) -> None:
        """Store a new game made from `client`'s address, first removing what the store's rules allow."""
        with self._lock:
            busy = {gid for gid, socks in self.sockets.items() if socks}
            try:
                removed = self.store.make_room(client, busy)
            except StoreFull as full:
                raise GameError(429, str(full)) from None
            for gid in removed:
                self.games.pop(gid, None)
            self.store.save(game.to_record(), client)
            self._keep(game)

    def _keep(self, game: Game) -> None:
        game.on_change = lambda g: self.store.save(g.to_record())
        self.games[game.id] = game
        if len(self.games) > MAX_IN_MEMORY:
            for gid in [g for g in self.games if not self.sockets.get(g)][: len(self.games) - MAX_IN_MEMORY]:
                self.games.pop(gid)

    async def broadcast(self, game: Game) -> None:
        """Send each watcher the game's new state, as its own seat sees it."""
        for ws, token in list(self.sockets.get(game.id, [])):
            try:
                await ws.send_json(game.state(token))
            except Exception:  # a socket closing mid-send is dropped by its own handler
                pass

    async def apply(self, game: Game, change: Callable[[], object]) -> None:
        """Run a change off the event loop (the computer may think, the store commits), then tell the watchers."""
        await run_in_threadpool(change)
        await self.broadcast(game)
