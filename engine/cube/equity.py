"""Cube decisions: cubeful equity from the 5 cubeless probabilities, money and match play.

Everything is seen from the side on roll ("me"), before its roll, and probabilities are
in engine.evaluator's order from my view.

Cubeful equity (Janowski): the true value lies between the dead-cube value (the cubeless
outcome, nobody ever doubles again) and the fully live value (the cube is turned at the
exact take/cash points of an idealised continuous game, so equity is piecewise linear in
P(win)). It is interpolated with the cube efficiency x: cubeful = (1 - x) dead + x live.
x = 0.68 in contact; in a race 0.55 + 0.00125 * (my pips), clamped to 0.6..0.7.

- Money play uses Janowski's closed forms (as gnubg's Cl2CfMoney): W and L are the mean
  values of a win and a loss, the take point with a live cube (L - 1/2)/(W + L + 1/2)
  and the cash point (L + 1)/(W + L + 1/2). Jacoby: with a centred cube gammons count
  single. Beavers: as gnubg, a taker whose take is profitable (Double/Take below 0 from
  the doubler's view) beavers; this names the answer and leaves the equities as they are.
- Small bear-offs (both sides home with at most six checkers), money play without
  beavers, take their exact cubeful values from engine.bearoff's two-sided table instead,
  at every ply: so close to the end the cube's life is no fixed share.
- Match play works in match winning chances (engine.cube.match_equity). The take point of a
  double to cube v is computed recursively from the highest useful cube down (a cube that
  a player cannot use any more is dead: he needs no more than the cube's value, the
  Crawford game, the top cube), mixing the dead and live take points with x; the cubeful
  MWC is then the same piecewise-linear interpolation between the game's outcomes and the
  cash points. Results are reported as normalised equity (EMG: -1 = losing the current
  cube's value, +1 = winning it), as gnubg does, and as MWC.

Decisions (all normalised to the current cube value): No double (ND), Double/Take (DT),
Double/Pass (DP, exactly +1). The taker chooses the smaller of DT and DP (a tie takes);
the doubler doubles when that beats ND; "too good" when ND is above DP. The proper
action's equity is max(ND, min(DT, DP)). The wording follows gnubg's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np

from engine.bearoff import BINOM, CENTRED, OPPONENT_OWNS, ROLLER_OWNS, cubeful_table, small_index
from engine.errors import CubeError
from engine.evaluator import WIN, WIN_BACKGAMMON, WIN_GAMMON, LOSE_BACKGAMMON, LOSE_GAMMON, equity
from engine.cube.match_equity import is_post_crawford, max_match_length, mwc_after, outcome_mwcs
from engine.position import ME, is_race, race_flags

CENTRE, ME_OWNS, OPP_OWNS = "centre", "me", "opponent"
OWNERS = (CENTRE, ME_OWNS, OPP_OWNS)
MAX_CUBE = 1 << 15

CONTACT_EFFICIENCY = 0.68
RACE_BASE, RACE_PER_PIP, RACE_MIN, RACE_MAX = 0.55, 0.00125, 0.6, 0.7

_EPS = 1e-7


@dataclass(frozen=True)
class CubeInfo:
    """The cube and the match, from the side on roll.

    value: the cube value (a power of 2); owner: CENTRE, ME_OWNS or OPP_OWNS.
    match_length 0 = money play (jacoby, beavers apply); else score = (my points,
    opponent's points) already won, crawford = this game is the Crawford game.
    """

    value: int = 1
    owner: str = CENTRE
    jacoby: bool = False
    beavers: bool = False
    match_length: int = 0
    score: tuple[int, int] = (0, 0)
    crawford: bool = False

    def __post_init__(self) -> None:
        v = self.value
        if not isinstance(v, int) or v < 1 or v & (v - 1) or v > MAX_CUBE:
            raise CubeError(f"cube value must be a power of 2 from 1 to {MAX_CUBE}, got {v}")
        if self.owner not in OWNERS:
            raise CubeError(f"cube owner must be one of {', '.join(OWNERS)}, got {self.owner!r}")
        if self.match_length == 0:
            if self.score != (0, 0) or self.crawford:
                raise CubeError("a score or the Crawford flag needs a match length (--match N)")
            return
        n = self.match_length
        if not 1 <= n <= max_match_length():
            raise CubeError(f"match length must be 1..{max_match_length()}, got {n}")
        if self.jacoby or self.beavers:
            raise CubeError("the Jacoby rule and beavers apply to money play only, not to matches")
        a, b = self.score
        if not (0 <= a < n and 0 <= b < n):
            raise CubeError(f"score {a}-{b} is not a running score of a {n}-point match")
        if self.crawford:
            if n - a != 1 and n - b != 1:
                raise CubeError(f"score {a}-{b} in a {n}-point match cannot be the Crawford game "
                                "(nobody is 1-away)")

    @property
    def is_money(self) -> bool:
        return self.match_length == 0

    @property
    def need(self) -> tuple[int, int]:
        """Points still needed (me, opponent) in a match."""
        return self.match_length - self.score[0], self.match_length - self.score[1]

    @property
    def post_crawford(self) -> bool:
        return not self.is_money and is_post_crawford(*self.need, self.crawford)

    def swapped(self) -> CubeInfo:
        """The same cube seen by the opponent (turn change)."""
        owner = {CENTRE: CENTRE, ME_OWNS: OPP_OWNS, OPP_OWNS: ME_OWNS}[self.owner]
        return replace(self, owner=owner, score=(self.score[1], self.score[0]))

    def doubled(self) -> CubeInfo:
        """After I double and the opponent takes: twice the value, on the opponent's side."""
        return replace(self, value=2 * self.value, owner=OPP_OWNS)

    def may_double(self) -> bool:
        """I have the cube (centred or mine) and the rules let me turn it."""
        return self.owner != OPP_OWNS and _can_double(self, self.value)

    def cube_dead_for_me(self) -> bool:
        """A match cube I hold but doubling cannot help: I already win the match by winning this game."""
        return not self.is_money and self.owner != OPP_OWNS and not self.crawford and self.need[0] <= self.value


def _can_double(cube: CubeInfo, value: int) -> bool:
    """May the side on roll turn a cube of this value (ownership aside)? Dead cubes may not."""
    if 2 * value > MAX_CUBE:
        return False
    if cube.is_money:
        return True
    if cube.crawford:
        return False
    return cube.need[0] > value


def cube_efficiency(board: np.ndarray) -> float:
    """x for Janowski's interpolation: 0.68 in contact; races grow with my pip count, 0.6..0.7."""
    board = np.asarray(board)
    if not is_race(board):
        return CONTACT_EFFICIENCY
    pips = int(board[ME] @ np.arange(1, 26))
    return float(min(RACE_MAX, max(RACE_MIN, RACE_BASE + RACE_PER_PIP * pips)))


def cube_efficiencies(boards: np.ndarray) -> np.ndarray:
    """cube_efficiency of each of (n, 2, 25) boards (me in row 0)."""
    boards = np.ascontiguousarray(boards)
    pips = boards[:, ME, :].astype(np.float64) @ np.arange(1, 26)
    race_x = np.clip(RACE_BASE + RACE_PER_PIP * pips, RACE_MIN, RACE_MAX)
    return np.where(race_flags(boards), race_x, CONTACT_EFFICIENCY)


# ---------------------------------------------------------------------------------------
# Money play


def _win_loss_values(p: np.ndarray) -> tuple[float, float]:
    """W, L: the mean number of points of a win and of a loss (1 when there are none)."""
    w = 1.0 + (p[WIN_GAMMON] + p[WIN_BACKGAMMON]) / p[WIN] if p[WIN] > _EPS else 1.0
    lose = 1.0 - p[WIN]
    l_ = 1.0 + (p[LOSE_GAMMON] + p[LOSE_BACKGAMMON]) / lose if lose > _EPS else 1.0
    return float(w), float(l_)


def money_live(p_win: float, w: float, l_: float, owner: str, jacoby: bool = False) -> float:
    """Janowski's fully live cube equity (per cube) as a function of P(win)."""
    tp = (l_ - 0.5) / (w + l_ + 0.5)
    cp = (l_ + 1.0) / (w + l_ + 0.5)
    if owner == CENTRE:
        if p_win < tp:
            return -1.0 if jacoby else -l_ + (l_ - 1.0) * p_win / tp
        if p_win < cp:
            return -1.0 + 2.0 * (p_win - tp) / (cp - tp)
        return 1.0 if jacoby else 1.0 + (w - 1.0) * (p_win - cp) / (1.0 - cp)
    if owner == ME_OWNS:
        if p_win < cp:
            return -l_ + (1.0 + l_) * p_win / cp
        return 1.0 + (w - 1.0) * (p_win - cp) / (1.0 - cp)
    if p_win < tp:
        return -l_ + (l_ - 1.0) * p_win / tp
    return -1.0 + (w + 1.0) * (p_win - tp) / (1.0 - tp)


def money_cubeful(probs: np.ndarray, cube: CubeInfo, x: float) -> float:
    """Cubeful money equity per unit of the current cube, (1 - x) dead + x live."""
    p = np.asarray(probs, dtype=np.float64)
    jacoby = cube.jacoby and cube.owner == CENTRE
    if jacoby:
        dead = 2.0 * p[WIN] - 1.0
    else:
        dead = float(equity(p))
    if p[WIN] <= _EPS or p[WIN] >= 1.0 - _EPS:
        return float(dead)
    w, l_ = _win_loss_values(p)
    live = money_live(float(p[WIN]), w, l_, cube.owner, jacoby)
    return float((1.0 - x) * dead + x * live)


def money_cubeful_many(probs: np.ndarray, owner: str | np.ndarray, x: np.ndarray,
                       jacoby: bool = False) -> np.ndarray:
    """money_cubeful of each row of probs (n, 5) on arrays, for searches and rollouts that
    value hundreds of positions at once: owner one of OWNERS for every row or an array of
    them, x a cube efficiency a row, jacoby the rule (it applies where the cube is centred)."""
    p = np.asarray(probs, dtype=np.float64).reshape(-1, 5)
    owner = np.broadcast_to(np.asarray(owner), (len(p),))
    p_win = p[:, WIN]
    jacoby_rows = (owner == CENTRE) & jacoby
    dead = np.where(jacoby_rows, 2.0 * p_win - 1.0, equity(p))
    with np.errstate(divide="ignore", invalid="ignore"):
        lose = 1.0 - p_win
        w = np.where(p_win > _EPS, 1.0 + (p[:, WIN_GAMMON] + p[:, WIN_BACKGAMMON]) / p_win, 1.0)
        l_ = np.where(lose > _EPS, 1.0 + (p[:, LOSE_GAMMON] + p[:, LOSE_BACKGAMMON]) / lose, 1.0)
        tp = (l_ - 0.5) / (w + l_ + 0.5)
        cp = (l_ + 1.0) / (w + l_ + 0.5)
        above_cash = 1.0 + (w - 1.0) * (p_win - cp) / (1.0 - cp)
        below_take = -l_ + (l_ - 1.0) * p_win / tp
        centred = np.where(p_win < tp, np.where(jacoby_rows, -1.0, below_take),
                           np.where(p_win < cp, -1.0 + 2.0 * (p_win - tp) / (cp - tp),
                                    np.where(jacoby_rows, 1.0, above_cash)))
        mine = np.where(p_win < cp, -l_ + (1.0 + l_) * p_win / cp, above_cash)
        theirs = np.where(p_win < tp, below_take, -1.0 + (w + 1.0) * (p_win - tp) / (1.0 - tp))
    live = np.where(owner == CENTRE, centred, np.where(owner == ME_OWNS, mine, theirs))
    out = (1.0 - x) * dead + x * live
    certain = (p_win <= _EPS) | (p_win >= 1.0 - _EPS)
    return np.where(certain, dead, out)


# ---------------------------------------------------------------------------------------
# Match play


def _gammon_ratios(p: np.ndarray) -> np.ndarray:
    """Shares of single/gammon/backgammon among my wins, then among my losses."""
    r = np.zeros(6)
    if p[WIN] > _EPS:
        r[1] = (p[WIN_GAMMON] - p[WIN_BACKGAMMON]) / p[WIN]
        r[2] = p[WIN_BACKGAMMON] / p[WIN]
    lose = 1.0 - p[WIN]
    if lose > _EPS:
        r[4] = (p[LOSE_GAMMON] - p[LOSE_BACKGAMMON]) / lose
        r[5] = p[LOSE_BACKGAMMON] / lose
    r = np.clip(r, 0.0, 1.0)
    r[0] = max(0.0, 1.0 - r[1] - r[2])
    r[3] = max(0.0, 1.0 - r[4] - r[5])
    return r


@lru_cache(maxsize=65536)
def _outcomes(need_me: int, need_opp: int, value: int, crawford: bool) -> tuple[float, ...]:
    return tuple(outcome_mwcs(need_me, need_opp, value, crawford))


def _win_lose_mwc(ratios: np.ndarray, need_me: int, need_opp: int, value: int,
                  crawford: bool) -> tuple[float, float]:
    """My MWC when I win, and when I lose, a game played for `value` (gammons by ratio)."""
    o = np.array(_outcomes(need_me, need_opp, value, crawford))
    return float(ratios[:3] @ o[:3]), float(ratios[3:] @ o[3:])


def _match_take_point(ratios: np.ndarray, cube: CubeInfo, value: int) -> float:
    """My fully live take point (a P(win) of mine) when doubled to `value`, which I would own.

    Pass: I lose value/2. If I cannot use the cube at `value` (dead for me), the take point
    is where taking (the game's outcomes at `value`) equals passing. Otherwise I redouble
    at my live cash point (1 - the opponent's live take point one level up), so my take
    MWC rises linearly from losing at `value` to cashing `value`. As in gnubg's GetPoints,
    the breakpoints are fully live and the cube efficiency only mixes the final values.
    """
    need_me, need_opp = cube.need
    crawford = cube.crawford
    pass_mwc = mwc_after(need_me, need_opp, -(value // 2), crawford)
    win, lose = _win_lose_mwc(ratios, need_me, need_opp, value, crawford)
    if win - lose <= _EPS:
        return 0.0
    take_point = (pass_mwc - lose) / (win - lose)
    if _can_double(cube, value):
        opp_tp = _match_take_point(ratios[[3, 4, 5, 0, 1, 2]], cube.swapped(), 2 * value)
        cash = mwc_after(need_me, need_opp, value, crawford)
        if cash - lose > _EPS:
            take_point = (1.0 - opp_tp) * (pass_mwc - lose) / (cash - lose)
    return float(min(1.0, max(0.0, take_point)))


def match_cubeful_mwc(probs: np.ndarray, cube: CubeInfo, x: float) -> float:
    """My cubeful match winning chance: (1 - x) dead + x live, live piecewise linear in P(win)."""
    p = np.asarray(probs, dtype=np.float64)
    need_me, need_opp = cube.need
    ratios = _gammon_ratios(p)
    win, lose = _win_lose_mwc(ratios, need_me, need_opp, cube.value, cube.crawford)
    p_win = float(min(1.0, max(0.0, p[WIN])))
    dead = p_win * win + (1.0 - p_win) * lose
    if (need_me, need_opp, cube.value) == (2, 2, 1):
        # gnubg's convention: at 2-away/2-away both sides double at once, so the centred
        # 1-cube is valued dead (no Janowski interpolation).
        return float(min(1.0, max(0.0, dead)))
    points = [(0.0, lose)]
    if cube.owner != ME_OWNS and _can_double(cube.swapped(), cube.value):
        tp = _match_take_point(ratios, cube, 2 * cube.value)
        points.append((tp, mwc_after(need_me, need_opp, -cube.value, cube.crawford)))
    if cube.owner != OPP_OWNS and _can_double(cube, cube.value):
        cp = 1.0 - _match_take_point(ratios[[3, 4, 5, 0, 1, 2]], cube.swapped(), 2 * cube.value)
        points.append((cp, mwc_after(need_me, need_opp, cube.value, cube.crawford)))
    points.append((1.0, win))
    points.sort()
    xs = np.array([pt[0] for pt in points])
    ys = np.array([pt[1] for pt in points])
    live = float(np.interp(p_win, xs, ys))
    return float(min(1.0, max(0.0, (1.0 - x) * dead + x * live)))


def _gammon_ratios_many(p: np.ndarray) -> np.ndarray:
    """_gammon_ratios of each row of p (n, 5)."""
    win, lose = p[:, WIN], 1.0 - p[:, WIN]
    r = np.zeros((len(p), 6))
    with np.errstate(divide="ignore", invalid="ignore"):
        r[:, 1] = np.where(win > _EPS, (p[:, WIN_GAMMON] - p[:, WIN_BACKGAMMON]) / win, 0.0)
        r[:, 2] = np.where(win > _EPS, p[:, WIN_BACKGAMMON] / win, 0.0)
        r[:, 4] = np.where(lose > _EPS, (p[:, LOSE_GAMMON] - p[:, LOSE_BACKGAMMON]) / lose, 0.0)
        r[:, 5] = np.where(lose > _EPS, p[:, LOSE_BACKGAMMON] / lose, 0.0)
    r = np.clip(r, 0.0, 1.0)
    r[:, 0] = np.maximum(0.0, 1.0 - r[:, 1] - r[:, 2])
    r[:, 3] = np.maximum(0.0, 1.0 - r[:, 4] - r[:, 5])
    return r


def _win_lose_mwc_many(ratios: np.ndarray, cube: CubeInfo, value: int) -> tuple[np.ndarray, np.ndarray]:
    o = np.array(_outcomes(*cube.need, value, cube.crawford))
    return ratios[:, :3] @ o[:3], ratios[:, 3:] @ o[3:]


def _match_take_point_many(ratios: np.ndarray, cube: CubeInfo, value: int) -> np.ndarray:
    """_match_take_point of each row of ratios (n, 6)."""
    need_me, need_opp = cube.need
    pass_mwc = mwc_after(need_me, need_opp, -(value // 2), cube.crawford)
    win, lose = _win_lose_mwc_many(ratios, cube, value)
    with np.errstate(divide="ignore", invalid="ignore"):
        take_point = (pass_mwc - lose) / (win - lose)
        if _can_double(cube, value):
            opp_tp = _match_take_point_many(ratios[:, [3, 4, 5, 0, 1, 2]], cube.swapped(), 2 * value)
            cash = mwc_after(need_me, need_opp, value, cube.crawford)
            take_point = np.where(cash - lose > _EPS, (1.0 - opp_tp) * (pass_mwc - lose) / (cash - lose),
                                  take_point)
    return np.where(win - lose <= _EPS, 0.0, np.clip(take_point, 0.0, 1.0))


def match_cubeful_mwc_many(probs: np.ndarray, cube: CubeInfo, x: np.ndarray) -> np.ndarray:
    """match_cubeful_mwc of each row of probs (n, 5), a cube efficiency a row."""
    p = np.asarray(probs, dtype=np.float64)
    need_me, need_opp = cube.need
    ratios = _gammon_ratios_many(p)
    win, lose = _win_lose_mwc_many(ratios, cube, cube.value)
    p_win = np.clip(p[:, WIN], 0.0, 1.0)
    dead = p_win * win + (1.0 - p_win) * lose
    if (need_me, need_opp, cube.value) == (2, 2, 1):
        return np.clip(dead, 0.0, 1.0)
    n = len(p)
    xs, ys = [np.zeros(n)], [lose]
    if cube.owner != ME_OWNS and _can_double(cube.swapped(), cube.value):
        xs.append(_match_take_point_many(ratios, cube, 2 * cube.value))
        ys.append(np.full(n, mwc_after(need_me, need_opp, -cube.value, cube.crawford)))
    if cube.owner != OPP_OWNS and _can_double(cube, cube.value):
        xs.append(1.0 - _match_take_point_many(ratios[:, [3, 4, 5, 0, 1, 2]], cube.swapped(), 2 * cube.value))
        ys.append(np.full(n, mwc_after(need_me, need_opp, cube.value, cube.crawford)))
    xs.append(np.ones(n))
    ys.append(win)
    xp, fp = np.stack(xs, axis=1), np.stack(ys, axis=1)
    order = np.lexsort((fp, xp), axis=-1)          # as the scalar code sorts its (x, y) pairs
    xp, fp = np.take_along_axis(xp, order, 1), np.take_along_axis(fp, order, 1)
    rows = np.arange(n)
    j = np.minimum((xp <= p_win[:, None]).sum(axis=1) - 1, xp.shape[1] - 1)   # np.interp's segment
    nxt = np.minimum(j + 1, xp.shape[1] - 1)
    x0, x1, y0, y1 = xp[rows, j], xp[rows, nxt], fp[rows, j], fp[rows, nxt]
    with np.errstate(divide="ignore", invalid="ignore"):
        live = np.where(x1 > x0, y0 + (y1 - y0) * (p_win - x0) / (x1 - x0), y0)
    return np.clip((1.0 - x) * dead + x * live, 0.0, 1.0)


# ---------------------------------------------------------------------------------------
# One number per cube state, and the decision


def cubeful_value(probs: np.ndarray, cube: CubeInfo, x: float) -> float:
    """Money: cubeful equity in points (normalised equity times the cube value). Match: MWC."""
    if cube.is_money:
        return cube.value * money_cubeful(probs, cube, x)
    return match_cubeful_mwc(probs, cube, x)


def cash_value(cube: CubeInfo, points: int) -> float:
    """The value (points, or MWC) of the game ending now with `points` x cube for me (signed)."""
    if cube.is_money:
        return float(points * cube.value)
    return mwc_after(*cube.need, points * cube.value, cube.crawford)


def to_normalised(value: float, cube: CubeInfo) -> float:
    """A cubeful_value as equity per current cube: money / value; match via gnubg's EMG."""
    if cube.is_money:
        return value / cube.value
    win = cash_value(cube, 1)
    lose = cash_value(cube, -1)
    if win - lose <= _EPS:
        return 0.0
    return (2.0 * value - (win + lose)) / (win - lose)


@dataclass(frozen=True)
class CubeDecision:
    """The cube analysis of a position for the side on roll, normalised to the current cube.

    no_double, double_take, double_pass (+1); response: the opponent's best answer to a double ("take", "pass", "beaver");
    double: whether doubling is right; action: gnubg's wording; the *_mwc fields hold the
    match winning chances in match play (None in money play).
    """

    cubeless_equity: float
    no_double: float
    double_take: float
    double_pass: float
    response: str
    double: bool
    too_good: bool
    may_double: bool
    action: str
    proper_equity: float
    no_double_mwc: float | None = None
    double_take_mwc: float | None = None
    double_pass_mwc: float | None = None

    def as_dict(self) -> dict:
        """JSON-ready (rounded to 6 decimals)."""
        out = {"no_double": self.no_double, "double_take": self.double_take,
               "double_pass": self.double_pass, "action": self.action,
               "cubeless_equity": self.cubeless_equity, "proper_equity": self.proper_equity,
               "double": self.double, "response": self.response, "too_good": self.too_good,
               "may_double": self.may_double}
        if self.no_double_mwc is not None:
            out["mwc"] = {"no_double": self.no_double_mwc, "double_take": self.double_take_mwc,
                          "double_pass": self.double_pass_mwc}
        return _rounded(out)


def _rounded(obj):
    if isinstance(obj, float):
        return round(obj, 6)
    if isinstance(obj, dict):
        return {k: _rounded(v) for k, v in obj.items()}
    return obj


OPTIONAL_EPS = 1e-5
"""Doubling is "optional" when it changes the equity by no more than this (gnubg's wording)."""


def decide(cube: CubeInfo, nd: float, dt: float, cubeless: float, can_gammon: bool = True) -> CubeDecision:
    """The decision from the values of the three cube states (in cubeful_value units).

    The decision tree and wording follow gnubg's (FindBestCubeDecision): double when both
    Double/Take and Double/Pass reach No double; "too good" when No double beats
    Double/Pass and a gammon is possible; a profitable take (-2 <= DT <= 0, money,
    beavers on) is a beaver, and no double when twice DT is below ND. One deliberate
    difference: at an exact DT = DP tie the taker takes (gnubg passes), so that a dead-cube
    take point is exactly 25%.
    """
    dp = cash_value(cube, 1)
    n_nd, n_dt, n_dp = (to_normalised(v, cube) for v in (nd, dt, dp))
    may = cube.may_double()
    passes = n_dt > n_dp
    beaver = cube.is_money and cube.beavers and -2.0 <= n_dt <= 0.0
    response = "pass" if passes else ("beaver" if beaver else "take")
    verb = "redouble" if cube.owner == ME_OWNS else "double"
    double, too_good = False, False
    if not may:
        if cube.owner == OPP_OWNS:
            action = "No double (the opponent owns the cube)"
        elif cube.is_money:
            action = f"No {verb} (the cube is at its maximum)"
        else:
            action = f"Never {verb}, take (dead cube)"
    elif n_dt >= n_nd and n_dp >= n_nd:
        if not passes:
            optional = abs(n_dt - n_nd) <= OPTIONAL_EPS
            if beaver and 2.0 * n_dt < n_nd:
                action = f"No {verb}, beaver"
            else:
                double = True
                action = f"{'Optional ' + verb if optional else verb.capitalize()}, {response}"
        else:
            double = True
            optional = (abs(n_nd - n_dp) <= OPTIONAL_EPS and can_gammon
                        and (not cube.is_money or cube.owner != CENTRE or not cube.jacoby))
            action = f"{'Optional ' + verb if optional else verb.capitalize()}, pass"
    elif n_nd > n_dp:
        too_good = can_gammon
        if too_good:
            action = f"Too good to {verb}, {response}"
        else:
            double = passes
            action = f"{verb.capitalize()}, pass" if passes else f"No {verb}, {response}"
    else:
        action = f"No {verb}, {response}"
    proper = max(n_nd, min(n_dt, n_dp))
    match = not cube.is_money
    return CubeDecision(
        cubeless_equity=float(cubeless), no_double=n_nd, double_take=n_dt, double_pass=n_dp,
        response=response, double=double, too_good=too_good, may_double=may, action=action,
        proper_equity=proper, no_double_mwc=nd if match else None,
        double_take_mwc=dt if match else None, double_pass_mwc=dp if match else None)


def small_bearoff_values(board: np.ndarray | None, cube: CubeInfo) -> tuple[float, float] | None:
    """(ND, DT) in cubeful_value units, exact, from the two-sided table of small bear-offs
    (engine.bearoff.cubeful_table: both sides home with at most six checkers, money play
    without beavers); None for any other position, or no board. Why: so near the end,
    Janowski's live cube misjudges a cube that may never be turned again."""
    if board is None or not cube.is_money or cube.beavers:
        return None
    board = np.asarray(board, dtype=np.int8)
    mine, theirs = small_index(board[0], BINOM), small_index(board[1], BINOM)
    if mine < 0 or theirs < 0:
        return None
    table = cubeful_table()
    state = {CENTRE: CENTRED, ME_OWNS: ROLLER_OWNS, OPP_OWNS: OPPONENT_OWNS}[cube.owner]
    return (cube.value * float(table[state, mine, theirs]),
            2 * cube.value * float(table[OPPONENT_OWNS, mine, theirs]))


def _nd_dt(probs: np.ndarray, cube: CubeInfo, x: float, board: np.ndarray | None) -> tuple[float, float]:
    """No double and Double/take in cubeful_value units: exact for small bear-offs, else Janowski."""
    exact = small_bearoff_values(board, cube)
    if exact is not None:
        return exact
    return cubeful_value(probs, cube, x), cubeful_value(probs, cube.doubled(), x)


def cube_decision(probs: np.ndarray, cube: CubeInfo, x: float, board: np.ndarray | None = None) -> CubeDecision:
    """1-ply cube decision from my cubeless probabilities (before my roll) and efficiency x;
    given the board (me in row 0), small bear-offs get their exact values."""
    p = np.asarray(probs, dtype=np.float64)
    nd, dt = _nd_dt(p, cube, x, board)
    return decide(cube, nd, dt, float(equity(p)), bool(p[WIN_GAMMON] > 0.0))


def best_cube_value(probs: np.ndarray, cube: CubeInfo, x: float, board: np.ndarray | None = None) -> float:
    """My value with my best cube action now, in cubeful_value units: max(ND, min(DT, DP));
    given the board (me in row 0), small bear-offs get their exact values."""
    nd, dt = _nd_dt(np.asarray(probs, dtype=np.float64), cube, x, board)
    if not cube.may_double():
        return nd
    return max(nd, min(dt, cash_value(cube, 1)))


def best_cube_values(probs: np.ndarray, cube: CubeInfo, x: np.ndarray) -> np.ndarray:
    """best_cube_value of each row of probs (n, 5), a cube efficiency a row, by Janowski
    (no exact bear-offs)."""
    def values(c: CubeInfo) -> np.ndarray:
        if c.is_money:
            return c.value * money_cubeful_many(probs, c.owner, x, c.jacoby)
        return match_cubeful_mwc_many(probs, c, x)

    nd = values(cube)
    if not cube.may_double():
        return nd
    return np.maximum(nd, np.minimum(values(cube.doubled()), cash_value(cube, 1)))
