"""The websocket a page keeps open on its game, so moves by the other side show up live.

Connecting and leaving also count as presence: a friend game's host may take over only
after the friend's socket has been gone for the disconnect timeout.
"""

from __future__ import annotations

from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from scripts.cli import shorten
from scripts.webapp.context import Context

router = APIRouter(prefix="/api/games")


@router.websocket("/{game_id}/ws")
async def watch(ws: WebSocket, game_id: str, context: Context, token: str | None = None) -> None:
    hub = context.hub
    game = hub.find(game_id)
    if game is None:
        await ws.close(code=4404, reason=f"no game with id {shorten(game_id)!r}")
        return
    await ws.accept()
    hub.sockets.setdefault(game_id, []).append((ws, token))
    game.connect(token, +1)
    await hub.broadcast(game)
    try:
        while True:
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                break
            if message.get("bytes") is not None:   # the page sends nothing; a binary frame is refused
                await ws.close(code=1003, reason="this socket accepts no binary frames")
                break
    except WebSocketDisconnect:
        pass
    finally:
        hub.sockets[game_id] = [(w, t) for w, t in hub.sockets.get(game_id, []) if w is not ws]
        game.connect(token, -1)
        await hub.broadcast(game)
