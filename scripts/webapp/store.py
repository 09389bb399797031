"""The games on disk: one SQLite table (standard library sqlite3, WAL journal).

Each game is one row holding its whole record (Game.to_record as JSON) beside the few
columns the queries need; a second table keeps each finished game's analyses
(scripts.webapp.game_analysis), removed with their game. A change is saved and committed
inside the request that made it, before the answer goes out, so a server killed at any
moment (kill -9) restarts with every answered action kept. synchronous=FULL makes the commit survive a power cut too.

What may be removed, and only that: finished games beyond the newest MAX_FINISHED,
games untouched for IDLE_SECONDS, and, when one client address holds more than
MAX_LIVE_PER_CLIENT unfinished games, that client's own games that never started
(nobody has rolled) or sat idle for STALE_SECONDS. A game in progress is never removed to
make room: the request for one more is refused instead.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

MAX_LIVE_PER_CLIENT = 30
MAX_LIVE_TOTAL = 20_000
MAX_FINISHED = 20_000
IDLE_SECONDS = 14 * 24 * 3600.0
STALE_SECONDS = 3600.0
UNSTARTED = ("opening", "waiting")

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY,
    client TEXT NOT NULL,
    guest TEXT,
    phase TEXT NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    finished REAL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS games_client ON games (client, phase);
CREATE INDEX IF NOT EXISTS games_updated ON games (updated);
CREATE INDEX IF NOT EXISTS games_finished ON games (finished);
CREATE TABLE IF NOT EXISTS analyses (
    game_id TEXT NOT NULL,
    ply INTEGER NOT NULL,
    games INTEGER NOT NULL,
    result TEXT NOT NULL,
    PRIMARY KEY (game_id, ply, games)
);
"""


def default_db_path() -> Path:
    """$XDG_DATA_HOME/tdgammon/games.sqlite3, or ~/.local/share/tdgammon/games.sqlite3."""
    import os

    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "tdgammon" / "games.sqlite3"


def open_store_path(path: str | None) -> Path:
    """The database file to use (the default when None), checked to open as SQLite:
    a TdgammonError line otherwise (a directory, no permission, not a database)."""
    from engine.errors import TdgammonError

    target = Path(path) if path else default_db_path()
    try:
        GameStore(target).close()
    except (OSError, sqlite3.Error) as err:
        raise TdgammonError(f"cannot use {target} as the games database: {err}") from None
    return target


@dataclass(frozen=True)
class StoredGame:
    """A row of the history list: the record and who played it from where."""

    id: str
    client: str
    guest: str | None
    finished: float | None
    record: dict


class StoreFull(Exception):
    """No room for another game without ending one in progress: the message says whose."""


class GameStore:
    """The games table; one connection shared by the server's threads behind a lock."""

    def __init__(self, path: str | Path = ":memory:") -> None:
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def journal_mode(self) -> str:
        with self._lock:
            return self._db.execute("PRAGMA journal_mode").fetchone()[0]

    def save(self, record: dict, client: str | None = None) -> None:
        """Insert or update one game; committed when this returns (autocommit, one statement)."""
        now = time.time()
        phase = record["phase"]
        if phase == "opening" and (record.get("match") or {}).get("results"):
            phase = "next game"       # a match under way between games: started, not spare
        with self._lock:
            self._db.execute(
                "INSERT INTO games (id, client, phase, created, updated, finished, record) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
                "phase = excluded.phase, updated = excluded.updated, record = excluded.record, "
                "finished = COALESCE(games.finished, excluded.finished)",
                (record["id"], client or "", phase, now, now, now if phase == "over" else None,
                 json.dumps(record, separators=(",", ":"))))

    def set_guest(self, game_id: str, guest: str) -> None:
        """Record the address of the friend who joined, so the game shows in their history too."""
        with self._lock:
            self._db.execute("UPDATE games SET guest = ? WHERE id = ?", (guest, game_id))

    def load(self, game_id: str) -> dict | None:
        with self._lock:
            row = self._db.execute("SELECT record FROM games WHERE id = ?", (game_id,)).fetchone()
        return json.loads(row[0]) if row else None

    def load_analysis(self, game_id: str, ply: int, games: int) -> dict | None:
        """The stored analysis of a game's first `games` finished games at `ply`, if made before."""
        with self._lock:
            row = self._db.execute("SELECT result FROM analyses WHERE game_id = ? AND ply = ? AND games = ?",
                                   (game_id, ply, games)).fetchone()
        return json.loads(row[0]) if row else None

    def save_analysis(self, game_id: str, ply: int, games: int, result: dict) -> None:
        """Keep an analysis beside its game (removed with it by make_room)."""
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO analyses (game_id, ply, games, result) VALUES (?, ?, ?, ?)",
                             (game_id, ply, games, json.dumps(result, separators=(",", ":"))))

    def count(self, client: str | None = None, live: bool | None = None) -> int:
        """Games stored, of one client address and/or only unfinished (live) or finished ones."""
        where, args = [], []
        if client is not None:
            where.append("client = ?")
            args.append(client)
        if live is not None:
            where.append("phase != 'over'" if live else "phase = 'over'")
        sql = "SELECT COUNT(*) FROM games" + (" WHERE " + " AND ".join(where) if where else "")
        with self._lock:
            return self._db.execute(sql, args).fetchone()[0]

    def finished_of(self, client: str, limit: int = 100) -> list[StoredGame]:
        """The newest finished games created or joined from this address, newest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, client, guest, finished, record FROM games WHERE phase = 'over' "
                "AND (client = ? OR guest = ?) ORDER BY finished DESC LIMIT ?", (client, client, limit)).fetchall()
        return [StoredGame(i, c, g, f, json.loads(r)) for i, c, g, f, r in rows]

    def make_room(self, client: str, busy: set[str]) -> list[str]:
        """Remove what the rules allow so `client` may start one more game; the ids removed.

        `busy` holds the ids with a page connected right now: never removed. Raises
        StoreFull when the client (or the server) would still be over its cap."""
        now = time.time()
        removed: list[str] = []
        with self._lock:
            db = self._db
            idle = [r[0] for r in db.execute("SELECT id FROM games WHERE phase != 'over' AND updated < ?",
                                             (now - IDLE_SECONDS,))]
            excess = db.execute("SELECT id FROM games WHERE phase = 'over' ORDER BY finished DESC "
                                "LIMIT -1 OFFSET ?", (MAX_FINISHED,)).fetchall()
            removed += [i for i in idle if i not in busy]
            live = db.execute("SELECT id, phase, updated FROM games WHERE client = ? AND phase != 'over' "
                              "ORDER BY updated", (client,)).fetchall()
            live = [r for r in live if r[0] not in removed]
            over = len(live) - MAX_LIVE_PER_CLIENT + 1
            if over > 0:
                spare = [i for i, phase, updated in live if i not in busy
                         and (phase in UNSTARTED or updated < now - STALE_SECONDS)]
                if len(spare) < over:
                    raise StoreFull(f"this address already has {len(live)} games in progress: "
                                    "finish or resign one first")
                removed += spare[:over]
            total = db.execute("SELECT COUNT(*) FROM games WHERE phase != 'over'").fetchone()[0]
            if total - len(removed) >= MAX_LIVE_TOTAL:
                raise StoreFull("the server holds as many games in progress as it may: try again later")
            removed += [r[0] for r in excess]
            db.executemany("DELETE FROM games WHERE id = ?", [(i,) for i in removed])
            db.executemany("DELETE FROM analyses WHERE game_id = ?", [(i,) for i in removed])
        return removed
