""""Analyse this game": the match-analysis engine run on a finished web game, kept in the store.

The game's record becomes .mat text (scripts.webapp.record), which engine.formats.matread
replays and engine.analysis grades exactly as `tdgammon analyse` does; the answer is that
command's JSON (docs/analysis.md). Only finished games are graded: a single game once it
is over, a match's games as each one ends (the game being played is left out). The ply is
the computer's level's (Easy and Medium 1, Hard 2), or 2 in games between people. A game
played without the cube has its checker plays graded only (the valuation is the engine's
cubeful one, as for any money game).

An analysis is kept in the store under (game, ply, games graded), so asking again costs
nothing; one lock per key makes a request that comes while the same analysis is being
made wait for it instead of making it a second time.
"""

from __future__ import annotations

import threading

from engine.evaluator import Evaluator
from engine.formats.matfile import format_mat
from scripts.webapp.computer import LEVELS
from scripts.webapp.game import GameError
from scripts.webapp.record import mat_game, player_names
from scripts.webapp.store import GameStore

PEOPLE_PLY = 2
"""The analysis ply of games without a computer level (hot-seat, friend)."""


def finished_games(record: dict) -> int:
    """How many of the record's games are over: a match's finished games, else 1 or 0."""
    match = record.get("match")
    if match:
        return len(match["results"])
    return 1 if record["phase"] == "over" else 0


def level_ply(record: dict) -> int:
    """The ply of the game's computer level, or PEOPLE_PLY."""
    level = record.get("level")
    return LEVELS[level][0] if record["mode"] == "computer" and level in LEVELS else PEOPLE_PLY


def finished_mat(record: dict) -> str:
    """The .mat text of the record's finished games only (a match in progress leaves out its
    current game)."""
    match = record.get("match")
    games = [mat_game(record, n) for n in range(1, finished_games(record) + 1)]
    return format_mat(games, player_names(record), match["length"] if match else 0)


def analyse_record(record: dict, evaluator: Evaluator, ply: int) -> dict:
    """`tdgammon analyse --json` of the record's finished games, plus the game id, the number of
    games graded and the .mat download's address."""
    from engine.analysis.grade import AnalysisSettings, analyse_match
    from engine.analysis.summary import summarise
    from engine.formats.matread import read_mat
    from scripts.commands.analyse import analysis_json

    games = finished_games(record)
    match = read_mat(finished_mat(record))
    settings = AnalysisSettings(ply=ply)
    decisions = analyse_match(match, evaluator, settings)
    if not record.get("cube_enabled"):
        decisions = [d for d in decisions if d.kind == "checker"]   # no cube in the game: no cube decision
    out = analysis_json(f"tdgammon-{record['id']}.mat", match, settings, evaluator.name,
                        summarise(match, decisions), decisions)
    out.update(game_id=record["id"], games_analysed=games, mat=f"/api/games/{record['id']}/mat")
    return out


class GameAnalyses:
    """Analyses made on demand (in a worker thread: call `get` off the event loop) and cached."""

    def __init__(self, store: GameStore, evaluator: Evaluator) -> None:
        self.store = store
        self.evaluator = evaluator
        self._guard = threading.Lock()
        self._busy: dict[tuple[str, int, int], threading.Lock] = {}
        self.made = 0      # analyses computed (not read back from the store): what the cache saves

    def get(self, record: dict, ply: int | None = None) -> dict:
        """The analysis of the record's finished games at `ply` (None: the level's); a 409
        GameError when no game of the record is finished yet."""
        games = finished_games(record)
        if games == 0:
            raise GameError(409, "the game is still being played: it can be analysed when it is over")
        key = (record["id"], ply or level_ply(record), games)
        with self._guard:
            lock = self._busy.setdefault(key, threading.Lock())
        try:
            with lock:
                found = self.store.load_analysis(*key)
                if found is not None:
                    return found
                result = analyse_record(record, self.evaluator, key[1])
                self.store.save_analysis(*key, result)
                self.made += 1
                return result
        finally:
            with self._guard:
                self._busy.pop(key, None)
