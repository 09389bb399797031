"""Match winning chances (MWC) from the Kazaross-XG2 match equity table.

The table (engine/data/met-kazaross-xg2.json, as GNU Backgammon ships it) is read once.
Scores are given as points still needed ("away"): 1..25 for each side. A side that needs
0 or fewer points has won the match.

Crawford rule: the first game after one side reaches 1-away is the Crawford game (no
doubling); the pre-Crawford table's row/column 0 holds its value. Every later game is
post-Crawford and uses the post-Crawford row (the trailer's chances against a leader who
needs 1).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from engine.errors import CubeError

MET_PATH = Path(__file__).resolve().parents[1] / "data" / "met-kazaross-xg2.json"

OUTCOMES = ("win", "win_gammon", "win_backgammon", "lose", "lose_gammon", "lose_backgammon")
"""The order of outcome_mwcs: single/gammon/backgammon wins, then the same losses."""


@lru_cache(maxsize=1)
def _tables() -> tuple[np.ndarray, np.ndarray]:
    """(pre (L, L), post (L,)) loaded once; pre[i, j] = P(side needing i+1 beats side needing j+1)."""
    with open(MET_PATH, encoding="utf-8") as fh:
        data = json.load(fh)
    pre = np.array(data["pre_crawford"]["table"], dtype=np.float64)
    post = np.array(data["post_crawford"]["tables"][0]["row"], dtype=np.float64)
    if pre.shape != (data["length"], data["length"]) or post.shape != (data["length"],):
        raise CubeError(f"match equity table {MET_PATH} has an unexpected shape")
    return pre, post


def max_match_length() -> int:
    """The longest match the table covers (25 points)."""
    return int(_tables()[1].shape[0])


def mwc(need_me: int, need_opp: int, post_crawford: bool = False) -> float:
    """My chance to win the match when I need need_me points and the opponent need_opp.

    post_crawford=True means the Crawford game has been played (it only matters when one
    side needs exactly 1). need <= 0 means that side has already won.
    """
    if need_me <= 0:
        return 1.0
    if need_opp <= 0:
        return 0.0
    pre, post = _tables()
    top = len(post)
    if need_me > top or need_opp > top:
        raise CubeError(f"the match equity table covers matches up to {top} points, "
                        f"got a side needing {max(need_me, need_opp)}")
    if post_crawford and (need_me == 1 or need_opp == 1):
        if need_me == 1:
            return float(1.0 - post[need_opp - 1])
        return float(post[need_me - 1])
    return float(pre[need_me - 1, need_opp - 1])


def is_post_crawford(need_me: int, need_opp: int, crawford: bool) -> bool:
    """A game at this score is post-Crawford: someone needs 1 and this is not the Crawford game."""
    return (need_me == 1 or need_opp == 1) and not crawford


def mwc_after(need_me: int, need_opp: int, points: int, crawford: bool) -> float:
    """My MWC after the current game ends with `points` for me (negative: for the opponent).

    The points are already the cube value times 1, 2 or 3. After the Crawford game, or
    after any post-Crawford game, the next game is post-Crawford; a game that first brings
    a side to 1-away is followed by the Crawford game (the pre-Crawford table).
    """
    post = crawford or is_post_crawford(need_me, need_opp, crawford)
    if points >= 0:
        return mwc(need_me - points, need_opp, post)
    return mwc(need_me, need_opp + points, post)


def outcome_mwcs(need_me: int, need_opp: int, cube: int, crawford: bool) -> np.ndarray:
    """My MWC after each of the 6 outcomes (OUTCOMES order) of a game played for `cube`.

    Gammons and backgammons count 2 and 3 times the cube; the MET caps them at the match.
    """
    return np.array([mwc_after(need_me, need_opp, sign * k * cube, crawford)
                     for sign in (1, -1) for k in (1, 2, 3)])
