"""What every route shares, in one typed object the app keeps in app.state.

Routes reach it through the `Context` dependency rather than module globals, so each
app built by create_app (a test builds many) has its own games, dice and evaluator.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends
from starlette.requests import HTTPConnection

from engine.evaluator import Evaluator
from scripts.webapp.computer import LEVELS, ComputerPlayer
from scripts.webapp.game import Game, GameError, color_index
from scripts.webapp.game_analysis import GameAnalyses
from scripts.webapp.hub import Hub
from scripts.webapp.store import GameStore


@dataclass
class WebContext:
    """The evaluator, the games (stored and in memory) and the settings every new game is made with."""

    evaluator: Evaluator
    dice_factory: Callable[[], object]
    disconnect_timeout: float
    rng: random.Random
    store: GameStore = field(default_factory=GameStore)
    hub: Hub = field(init=False)
    analyses: GameAnalyses = field(init=False)

    def __post_init__(self) -> None:
        self.hub = Hub(self.store, self.revive)
        self.analyses = GameAnalyses(self.store, self.evaluator)

    def revive(self, record: dict) -> Game:
        """A stored game back in play after a restart: fresh dice and a fresh computer of its level."""
        opponent = self.computer(record["level"]) if record["mode"] == "computer" else None
        return Game.from_record(record, self.dice_factory(), opponent, self.disconnect_timeout)

    def computer(self, level: str) -> ComputerPlayer:
        """A computer opponent with its own random stream, drawn from the app's seed."""
        if level not in LEVELS:
            raise GameError(400, f"level must be one of {', '.join(LEVELS)}, got {level!r}")
        return ComputerPlayer(self.evaluator, level, random.Random(self.rng.getrandbits(64)))

    def new_game(self, mode: str, level: str, color: str, cube: bool = False, client: str = "",
                 match: int = 0) -> Game:
        """Start a game (a match to `match` points when > 0) and store it; `color` is the creator's
        seat, `client` their address."""
        human = color_index(color)
        game = self._start(mode, self._opponent(mode, level), human, cube, match)
        self.hub.add(game, client)
        return game

    def rematch_of(self, game: Game, client: str = "") -> Game:
        """The finished game's sequel with colours swapped, made once whichever seat asks first."""
        with game.lock:
            if game.rematch_id is None or self.hub.find(game.rematch_id) is None:
                new = self._start(game.mode, self._opponent(game.mode, game.level),
                                  1 - game.host, game.cube_enabled, game.match.length if game.match else 0)
                if game.mode == "friend":
                    new.seats[game.host].token = secrets.token_urlsafe(18)
                    new.phase = "opening"
                new.swap_tokens = {game.seats[s].token: new.seats[1 - s].token for s in (0, 1)
                                   if game.seats[s].token}
                self.hub.add(new, client)
                game.set_rematch(new.id)
            return self.hub.get(game.rematch_id)

    def _opponent(self, mode: str, level: str) -> ComputerPlayer | None:
        return self.computer(level) if mode == "computer" else None

    def _start(self, mode: str, opponent: ComputerPlayer | None, human: int, cube: bool, match: int = 0) -> Game:
        return Game(secrets.token_urlsafe(9), mode, self.dice_factory(), opponent, human,
                    self.disconnect_timeout, cube, match)


def web_context(connection: HTTPConnection) -> WebContext:
    """The context of the app serving this request or websocket."""
    return connection.app.state.context


Context = Annotated[WebContext, Depends(web_context)]
