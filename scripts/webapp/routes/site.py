"""Everything outside the JSON API: the page, its static assets and the health probe."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from scripts.webapp.context import Context

STATIC = Path(__file__).resolve().parent.parent / "static"

router = APIRouter(include_in_schema=False)


@router.get("/")
async def index() -> FileResponse:
    return FileResponse(STATIC / "index.html")


@router.get("/healthz")
async def healthz(context: Context) -> dict:
    return {"ok": True, "evaluator": getattr(context.evaluator, "name", "?")}


def mount_assets(app: FastAPI) -> None:
    """Serve static/ at /static; a Mount does not travel through include_router, so it goes on the app."""
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
