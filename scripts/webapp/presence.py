"""The app's lifespan: a background task that re-sends friend games' state now and then.

Nothing else changes a friend game while the opponent is silent, so without this push
the host would never learn that the friend left and the game may be taken over.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from fastapi import FastAPI

from scripts.webapp.context import WebContext


async def _push_friend_games(context: WebContext) -> None:
    hub = context.hub
    while True:
        await asyncio.sleep(max(0.5, min(5.0, context.disconnect_timeout / 4)))
        for game in list(hub.games.values()):
            if game.mode == "friend" and game.phase not in ("over", "waiting") and hub.sockets.get(game.id):
                await hub.broadcast(game)


@contextlib.asynccontextmanager
async def presence(app: FastAPI) -> AsyncIterator[None]:
    """Push friend games' state now and then, so the host learns when it may take over."""
    task = asyncio.create_task(_push_friend_games(app.state.context))
    yield
    task.cancel()
