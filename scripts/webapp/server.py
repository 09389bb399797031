"""The web game's ASGI app: the JSON API (OpenAPI at /docs), a websocket per game, the page.

Every change goes through scripts.webapp.game.Game, which checks the seat token and the
rules before touching anything; a refusal is a 4xx with {"error": "<message>"}. After a
change, every websocket watching the game receives the new state (each with its own
seat's view), so a friend sees moves live. The routes live in scripts.webapp.routes,
one module per resource; this module only wires them to one shared WebContext.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

from fastapi import FastAPI

from engine.evaluator import Evaluator
from scripts.webapp.context import WebContext
from scripts.webapp.errors import ERROR_HANDLERS
from scripts.webapp.game import CryptoDice
from scripts.webapp.presence import presence
from scripts.webapp.store import GameStore
from scripts.webapp.routes import analysis, games, history, live, play, position, site


def create_app(evaluator: Evaluator, dice_factory: Callable[[], object] = CryptoDice,
               disconnect_timeout: float = 120.0, seed: int | None = None,
               db: str | Path = ":memory:") -> FastAPI:
    """The app; `dice_factory` makes each game's dice (CryptoDice unless a test injects one);
    `db` is the SQLite file the games are kept in (":memory:" keeps them for this process only)."""
    app = FastAPI(
        lifespan=presence,
        exception_handlers=ERROR_HANDLERS,
        title="tdgammon play",
        description="Backgammon against the tdgammon engine, hot-seat or against a friend. "
                    "The server rolls, checks every step against the rules and keeps the state; "
                    "points in requests are in the mover's numbering (25 = bar, 0 = off).",
        version="1",
    )
    context = WebContext(evaluator, dice_factory, disconnect_timeout, random.Random(seed), GameStore(db))
    app.state.context = context
    app.state.hub = context.hub
    for module in (site, games, play, analysis, position, history, live):
        app.include_router(module.router)
    site.mount_assets(app)
    return app
