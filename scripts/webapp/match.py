"""A match to N points in the web game: the score, the Crawford rule and the games played.

A web game created with a match length plays its games one after another in the same
Game (same id, same seat tokens): when a game ends and nobody has reached N, the next
game starts at once with a centred cube and an opening roll. The rules are
engine.cube.play.play_match's: the first game in which a side is 1-away is the Crawford
game (no doubling); the games after it are post-Crawford. The cube in a match is seen
through engine.cube.equity.CubeInfo (match length, score, Crawford flag), so the
computer's cube actions and resignation answers follow the match equity table.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.cube.equity import CENTRE, ME_OWNS, OPP_OWNS, CubeInfo
from engine.cube.match_equity import max_match_length

MAX_MATCH = 25


def check_length(length: int) -> None:
    """Refuse a match length outside 1..25 (the match equity table's reach) with a ValueError."""
    top = min(MAX_MATCH, max_match_length())
    if not isinstance(length, int) or not 1 <= length <= top:
        raise ValueError(f"a match is played to 1-{top} points, got {length!r}")


@dataclass
class Match:
    """The running match: its length, the score (White, Black), the Crawford state, past games.

    `results` holds each finished game's result dict (winner, points, kind) in order;
    the game in progress is number len(results) + 1."""

    length: int
    score: list[int] = field(default_factory=lambda: [0, 0])
    crawford: bool = False          # the game in progress is the Crawford game
    crawford_done: bool = False     # the Crawford game has been played (later games: post-Crawford)
    results: list[dict] = field(default_factory=list)

    def __post_init__(self) -> None:
        check_length(self.length)

    @property
    def game_number(self) -> int:
        return len(self.results) + 1

    @property
    def winner(self) -> int | None:
        """The seat that reached the match length, if any."""
        for side in (0, 1):
            if self.score[side] >= self.length:
                return side
        return None

    @property
    def post_crawford(self) -> bool:
        return self.crawford_done and not self.crawford

    def cube_info(self, side: int, value: int, owner: int | None) -> CubeInfo:
        """The cube and the score as `side` sees them, for engine.cube.equity."""
        who = CENTRE if owner is None else ME_OWNS if owner == side else OPP_OWNS
        score = (self.score[side], self.score[1 - side])
        return CubeInfo(value=value, owner=who, match_length=self.length, score=score, crawford=self.crawford)

    def add_result(self, result: dict, winner: int) -> bool:
        """Count a finished game (points capped at what the winner needs); True when the match is
        over. Otherwise the next game's Crawford flag is set: the first game with a side 1-away."""
        self.results.append(dict(result))
        self.score[winner] = min(self.length, self.score[winner] + int(result["points"]))
        if self.crawford:
            self.crawford, self.crawford_done = False, True
        if self.winner is not None:
            return True
        at_one = self.length - self.score[0] == 1 or self.length - self.score[1] == 1
        if at_one and not self.crawford_done:
            self.crawford = True
        return False

    def score_text(self) -> str:
        """'White 2, Black 0 (match to 3)', with the Crawford or post-Crawford state."""
        text = f"White {self.score[0]}, Black {self.score[1]} (match to {self.length})"
        if self.crawford:
            return text + ": Crawford game, no doubling"
        if self.post_crawford:
            return text + ": post-Crawford"
        return text

    def to_json(self) -> dict:
        return {"length": self.length, "score": list(self.score), "crawford": self.crawford,
                "crawford_done": self.crawford_done, "results": [dict(r) for r in self.results]}

    @classmethod
    def from_json(cls, data: dict | None) -> Match | None:
        if not data:
            return None
        return cls(data["length"], list(data["score"]), data["crawford"], data["crawford_done"],
                   [dict(r) for r in data["results"]])
