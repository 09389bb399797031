"""How refusals reach the client: always a JSON body {"error": "<message>"}.

The page shows that message as it is, so every kind of refusal (a rule, bad input, a
malformed request) takes the same shape instead of FastAPI's default detail lists. The
message is bounded as the command line bounds its error lines (scripts.cli.one_line).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from engine.errors import TdgammonError
from scripts.cli import one_line
from scripts.webapp.game import GameError


async def _game_error(request: Request, err: GameError) -> JSONResponse:
    return JSONResponse({"error": one_line(err.message)}, status_code=err.status)


async def _input_error(request: Request, err: TdgammonError) -> JSONResponse:
    return JSONResponse({"error": one_line(err)}, status_code=400)


async def _validation_error(request: Request, err: RequestValidationError) -> JSONResponse:
    parts = []
    for e in err.errors():
        where = ".".join(str(x) for x in e.get("loc", ()) if x != "body")
        parts.append(f"{where}: {e.get('msg')}")
    return JSONResponse({"error": one_line("bad request: " + "; ".join(parts))}, status_code=422)


async def _http_error(request: Request, err: HTTPException) -> JSONResponse:
    """The router's own refusals (no such path, a method the path does not take)."""
    return JSONResponse({"error": one_line(str(err.detail))}, status_code=err.status_code, headers=err.headers)


ERROR_HANDLERS: dict[type[Exception], Callable[..., Awaitable[JSONResponse]]] = {
    HTTPException: _http_error,
    GameError: _game_error,
    TdgammonError: _input_error,
    RequestValidationError: _validation_error,
}
