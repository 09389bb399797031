"""A pit's results and statistics, and the interval every yardstick here reports.

ppg is A's mean points per game. Its 95% interval is 1.96 standard errors, computed over
per-pair means when duplicate (the pair is the independent unit) and over games otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from engine.formats.matfile import MatGame


def ci95(values: np.ndarray, single: float = math.nan) -> float:
    """Half-width of the 95% interval of the mean of `values`; `single` for fewer than two."""
    values = np.asarray(values, dtype=np.float64)
    if len(values) < 2:
        return single
    return 1.96 * float(np.std(values, ddof=1)) / math.sqrt(len(values))


@dataclass
class GameResult:
    """One pit unit (a game, or a match with --match), from A's view.

    points: signed, A's points (the cube included), or +-1 for a match won or lost.
    kinds: each game's own result, signed from A's view, whatever the cube made of it:
    1 single game (a pass counts as a single game for the doubler), 2 gammon, 3 backgammon,
    0 cut off. Empty means the points are the result (a cubeless game).
    """

    index: int          # game number; pair = index // 2 when duplicate
    points: int         # signed, from A's view
    mat: MatGame | None = None
    kinds: tuple[int, ...] = ()

    @property
    def game_kinds(self) -> tuple[int, ...]:
        return self.kinds if self.kinds else (self.points,)


@dataclass
class PitStats:
    """ppg over the units (games or matches); win rates from the units' points; gammon and
    backgammon rates over every game played (`games_played`, more than `games` in matches)
    from each game's own result kind."""

    games: int = 0
    ppg: float = 0.0
    ci95: float = 0.0
    win_rate: float = 0.0
    gammon_rate: float = 0.0
    backgammon_rate: float = 0.0
    b_win_rate: float = 0.0
    b_gammon_rate: float = 0.0
    b_backgammon_rate: float = 0.0
    unfinished: int = 0
    games_played: int = 0
    extra: dict = field(default_factory=dict)


def summarize(results: list[GameResult], duplicate: bool) -> PitStats:
    """ppg with a 95% interval (per-pair when duplicate), win/gammon/backgammon rates per side."""
    n = len(results)
    if n == 0:
        return PitStats()
    pts = np.array([r.points for r in results], dtype=np.float64)
    kinds = np.array([k for r in results for k in r.game_kinds], dtype=np.int64)
    if duplicate:
        by_pair: dict[int, list[float]] = {}
        for r in results:
            by_pair.setdefault(r.index // 2, []).append(r.points)
        units = np.array([np.mean(v) for v in by_pair.values()])
    else:
        units = pts
    return PitStats(
        games=n, ppg=float(pts.mean()), ci95=ci95(units, single=math.inf),
        win_rate=float((pts > 0).mean()), gammon_rate=float((kinds >= 2).mean()),
        backgammon_rate=float((kinds >= 3).mean()),
        b_win_rate=float((pts < 0).mean()), b_gammon_rate=float((kinds <= -2).mean()),
        b_backgammon_rate=float((kinds <= -3).mean()), unfinished=int((pts == 0).sum()),
        games_played=len(kinds))
