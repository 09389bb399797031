"""Each player's figures from the graded decisions: error rates, marks, rating, luck, result.

Conventions (gnubg's, stated in every report):
- checker error rate = 1000 x total normalised error / unforced moves (mEMG per move);
- cube error rate = 1000 x cube error / close-or-actual cube decisions;
- overall error rate = 1000 x (checker + cube error) / (unforced moves + close cube
  decisions), and the rating label is read off RATING_SCALE with it;
- luck: the sum of each roll's luck (normalised), its cost in points or MWC, and the
  luck-adjusted result = actual result - (own luck cost - the opponent's), as gnubg
  computes it (net points in money play; match winning chance minus 50% in a match).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from engine.analysis.grade import MARKS, Decision
from engine.cube.match_equity import mwc
from engine.formats.matread import MatchRecord

RATING_SCALE = ((2.0, "Supernatural"), (5.0, "World class"), (8.0, "Expert"), (12.0, "Advanced"),
                (18.0, "Intermediate"), (26.0, "Casual player"), (35.0, "Beginner"), (math.inf, "Awful!"))
"""gnubg's rating labels: the first whose bound (mEMG per decision) the error rate is below."""


def rating(rate: float) -> str:
    """gnubg's label for an error rate in mEMG per decision."""
    return next(label for bound, label in RATING_SCALE if rate < bound)


@dataclass
class PlayerSummary:
    """One player's figures; field names are the JSON schema's (docs/analysis.md)."""

    name: str
    side: int
    moves: int = 0
    unforced_moves: int = 0
    checker_error: float = 0.0
    checker_cost: float = 0.0
    checker_error_rate: float = 0.0
    checker_marks: dict = field(default_factory=lambda: {m: 0 for m in MARKS})
    cube_decisions: int = 0
    close_cube_decisions: int = 0
    cube_error: float = 0.0
    cube_cost: float = 0.0
    cube_error_rate: float = 0.0
    cube_marks: dict = field(default_factory=lambda: {m: 0 for m in MARKS})
    total_error: float = 0.0
    error_rate: float = 0.0
    checker_rating: str = ""
    rating: str = ""
    luck: float = 0.0
    luck_cost: float = 0.0
    luck_rate: float = 0.0
    result: float = 0.0
    luck_adjusted_result: float = 0.0

    def as_dict(self) -> dict:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def _rate(error: float, count: int) -> float:
    return 1000.0 * error / count if count else 0.0


def actual_results(record: MatchRecord) -> tuple[float, float]:
    """(left, right) result: money = net points; match = match winning chance - 0.5 at the end."""
    won = [0, 0]
    for game in record.games:
        if game.winner is not None:
            won[game.winner] += game.points
    if not record.match_length:
        return float(won[0] - won[1]), float(won[1] - won[0])
    last = record.games[-1]
    score = list(last.score)
    if last.winner is not None:
        score[last.winner] += last.points
    n = record.match_length
    post = any(g.crawford for g in record.games) and not (last.crawford and last.winner is None)
    left = mwc(n - score[0], n - score[1], post_crawford=post)
    return left - 0.5, 0.5 - left


def summarise(record: MatchRecord, decisions: Sequence[Decision]) -> list[PlayerSummary]:
    """Both players' summaries, left column first."""
    players = [PlayerSummary(record.names[0], 0), PlayerSummary(record.names[1], 1)]
    rolls = [0, 0]
    for d in decisions:
        p = players[d.side]
        if d.kind == "checker":
            p.moves += 1
            rolls[d.side] += 1
            p.luck += d.luck or 0.0
            p.luck_cost += d.luck_cost or 0.0
            if d.forced:
                continue
            p.unforced_moves += 1
            p.checker_error += d.error
            p.checker_cost += d.cost
            if d.mark:
                p.checker_marks[d.mark] += 1
        else:
            p.cube_decisions += 1
            if d.close:
                p.close_cube_decisions += 1
            p.cube_error += d.error
            p.cube_cost += d.cost
            if d.mark:
                p.cube_marks[d.mark] += 1
    results = actual_results(record)
    for p in players:
        p.checker_error_rate = _rate(p.checker_error, p.unforced_moves)
        p.cube_error_rate = _rate(p.cube_error, p.close_cube_decisions)
        p.total_error = p.checker_error + p.cube_error
        p.error_rate = _rate(p.total_error, p.unforced_moves + p.close_cube_decisions)
        p.checker_rating = rating(p.checker_error_rate)
        p.rating = rating(p.error_rate)
        p.luck_rate = _rate(p.luck, rolls[p.side])
        p.result = results[p.side]
    for p in players:
        p.luck_adjusted_result = p.result - (p.luck_cost - players[1 - p.side].luck_cost)
    return players
