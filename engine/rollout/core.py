"""Play trials of a position out in lock-step: quasi-random dice, luck subtracted, truncation.

A batch of trials (ids `lo..hi`) is played together: at every turn the active trials'
plays of all 21 rolls go to the evaluator in one call (the 21 are needed anyway to measure
each roll's luck), so the network always sees thousands of rows at once.

Per trial the result is kept, not just sums, so that shards from workers, Ray or a saved
file merge into exactly the figures of one uninterrupted run: a trial's dice depend only
on (seed, trial id), and a batch always covers the same ids.

Everything is from the root: the side on roll at the start, before its roll. Probabilities
in engine.evaluator's order; cubeful values in points of money play (by default the cube at
1 and centred at the start; both sides use the cube, Jacoby and beavers off).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from engine import bearoff
from engine.cube.equity import (OPP_OWNS, ME_OWNS, CENTRE, CubeInfo, cube_decision, cube_efficiencies,
                                cube_efficiency)
from engine.cube.lookahead import cube_decision_at_ply
from engine.errors import TdgammonError
from engine.evaluator import Evaluator, equity, flip, result_probs
from engine.luck import N_ROLLS, best_afterstates, roll_index
from engine.position import CHECKERS, game_result
from engine.rollout import cubeful as cf
from engine.position import game_results
from engine.search import ROLL_WEIGHTS, check_ply, position_values

STRATUM = 36
QUASI_BLOCK = STRATUM * STRATUM  # 1,296: every (first roll, second roll) pair once
DICE_CHUNK = 256                 # turns of dice drawn at once per trial


class RolloutError(TdgammonError):
    """Bad rollout settings or a position that cannot be rolled out."""


@dataclass(frozen=True)
class RolloutSettings:
    """How to roll out. truncate: plies to play before scoring with the evaluator (0 = to the
    end); bearoff: stop an exact bear-off race at the database; batch: trials in lock-step
    (a multiple of 36 keeps the quasi-random strata whole).

    With cube: the cube at the start (cube_value, cube_owner from the root's view: 0
    centred, 1 the root's, -1 the opponent's); hold_first: the root does not double before
    its first roll and that roll is always played (the "No double" line of a cube decision
    rollout; harmless in its "Double, take" line, where the root cannot double).
    """

    trials: int = 1296
    ply: int = 1
    truncate: int = 0
    cube: bool = False
    variance_reduction: bool = True
    quasi_random: bool = True
    bearoff: bool = True
    seed: int = 0
    batch: int = 216
    cube_value: int = 1
    cube_owner: int = 0
    hold_first: bool = False

    def __post_init__(self) -> None:
        for name in ("trials", "batch"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise RolloutError(f"{name} must be a positive integer, got {value!r}")
        if not isinstance(self.truncate, (int, np.integer)) or self.truncate < 0:
            raise RolloutError(f"truncate must be 0 (play to the end) or a positive number of plies, "
                               f"got {self.truncate!r}")
        if self.ply not in (1, 2):
            raise RolloutError(f"rollout ply must be 1 or 2, got {self.ply!r}")
        check_ply(self.ply)
        if self.cube_owner not in (cf.CENTRE, cf.ME_OWNS, cf.OPP_OWNS):
            raise RolloutError(f"cube_owner must be 0 (centred), 1 (the root's) or -1, got {self.cube_owner!r}")
        v = self.cube_value
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1 or v & (v - 1):
            raise RolloutError(f"cube_value must be a power of two, got {v!r}")
        if not self.cube and (v != 1 or self.cube_owner != cf.CENTRE or self.hold_first):
            raise RolloutError("a cube state at the start needs a cubeful rollout (cube=True)")

    def as_dict(self) -> dict:
        return {k: (int(v) if isinstance(v, (np.integer,)) else v) for k, v in asdict(self).items()}


def check_position(board: np.ndarray) -> np.ndarray:
    """The board as int8 (2, 25), or RolloutError for an impossible or finished position."""
    board = np.ascontiguousarray(board, dtype=np.int8)
    if board.shape != (2, 25) or (board < 0).any() or (board.sum(axis=1) > CHECKERS).any():
        raise RolloutError("impossible position: each side needs 0..15 checkers on the board")
    if (board[0, :24] * board[1, 23::-1] > 0).any():
        raise RolloutError("impossible position: both sides on the same point")
    if game_result(board):
        raise RolloutError("the game is already over: nothing to roll out")
    return board


@dataclass
class TrialData:
    """Per-trial results (root's view), indexed by trial id.

    raw: (n, 5) the game's outcome (or the evaluation where it was cut short); luck: (n, 5)
    the summed luck of the rolls; cf_raw / cf_luck: (n,) the same in cubeful points;
    turns: plies played.
    """

    ids: np.ndarray
    raw: np.ndarray
    luck: np.ndarray
    cf_raw: np.ndarray
    cf_luck: np.ndarray
    turns: np.ndarray

    @classmethod
    def empty(cls) -> TrialData:
        return cls(np.zeros(0, np.int64), np.zeros((0, 5)), np.zeros((0, 5)), np.zeros(0), np.zeros(0),
                   np.zeros(0, np.int64))

    @classmethod
    def concat(cls, parts: list[TrialData]) -> TrialData:
        parts = [p for p in parts if len(p.ids)]
        if not parts:
            return cls.empty()
        ids = np.concatenate([p.ids for p in parts])
        order = np.argsort(ids, kind="stable")
        if len(np.unique(ids)) != len(ids):
            raise RolloutError("the same trial was merged twice")
        return cls(ids[order], *(np.concatenate([getattr(p, f) for p in parts])[order]
                                 for f in ("raw", "luck", "cf_raw", "cf_luck", "turns")))

    def flipped(self) -> TrialData:
        """The same trials from the other side's view."""
        return TrialData(self.ids, flip(self.raw), _flip_diff(self.luck), -self.cf_raw, -self.cf_luck,
                         self.turns)

    def to_arrays(self) -> dict[str, np.ndarray]:
        return {"ids": self.ids, "raw": self.raw, "luck": self.luck, "cf_raw": self.cf_raw,
                "cf_luck": self.cf_luck, "turns": self.turns}


def _flip_diff(d: np.ndarray) -> np.ndarray:
    """A difference of probability vectors seen by the other side (flip without the 1 -)."""
    return d[..., [0, 3, 4, 1, 2]] * np.array([-1.0, 1.0, 1.0, 1.0, 1.0])


# ---------------------------------------------------------------------------------------
# Dice


def trial_dice(seed: int, trial: int, chunk: int, quasi_random: bool) -> np.ndarray:
    """Turns chunk*DICE_CHUNK.. of trial `trial`: ordered rolls 0..35 (die1 = r // 6 + 1).

    The first two rolls are quasi-random: in each block of 1,296 trials, trial i's first
    roll is the (i mod 36)-th and its second the (i div 36 mod 36)-th of two seeded
    permutations of the 36 rolls, so each block sees every pair of first and second rolls
    once (each first roll once in every 36 trials). Later rolls are pseudo-random from
    (seed, trial, chunk) only, so they do not depend on batching or workers.
    """
    rolls = np.random.default_rng([seed, trial, chunk]).integers(0, 36, size=DICE_CHUNK)
    if quasi_random and chunk == 0:
        block, i = divmod(trial, QUASI_BLOCK)
        perms = np.random.default_rng([seed, 1 << 20, block])
        first, second = perms.permutation(36), perms.permutation(36)
        rolls[0] = first[i % STRATUM]
        rolls[1] = second[i // STRATUM]
    return rolls


_ORDERED_TO_ROW = np.array([roll_index(r // 6 + 1, r % 6 + 1) for r in range(36)], dtype=np.int64)


# ---------------------------------------------------------------------------------------
# One batch in lock-step


def run_trials(board: np.ndarray, evaluator: Evaluator, settings: RolloutSettings, lo: int, hi: int) -> TrialData:
    """Play trials lo..hi-1 of `board` (side on roll, before its roll) in lock-step."""
    s = settings
    n = hi - lo
    ids = np.arange(lo, hi, dtype=np.int64)
    boards = np.repeat(np.ascontiguousarray(board, dtype=np.int8)[None], n, axis=0)
    root_on_roll = np.ones(n, dtype=bool)
    active = np.ones(n, dtype=bool)
    raw = np.zeros((n, 5))
    luck = np.zeros((n, 5))
    cf_raw = np.zeros(n)
    cf_luck = np.zeros(n)
    cube_value = np.full(n, float(s.cube_value))
    owner_root = np.full(n, s.cube_owner, dtype=np.int64)  # cf.CENTRE / ME_OWNS (root) / OPP_OWNS
    turns = np.zeros(n, dtype=np.int64)
    dice = None
    dist = bearoff.table() if s.bearoff else None

    def to_root(probs, k):
        return np.where(root_on_roll[k, None], probs, flip(probs))

    def finish(k, probs_mover, cf_mover):
        """End trials k with outcome probs / cubeful points from the mover's view."""
        raw[k] = to_root(probs_mover, k)
        cf_raw[k] = np.where(root_on_roll[k], cf_mover, -cf_mover)
        active[k] = False

    t = 0
    while active.any():
        if t % DICE_CHUNK == 0:
            chunk = t // DICE_CHUNK
            dice = np.stack([trial_dice(s.seed, int(i), chunk, s.quasi_random) for i in ids])
        k = np.nonzero(active)[0]
        owner_mover = np.where(root_on_roll[k], owner_root[k], -owner_root[k])

        if s.truncate and t >= s.truncate:
            probs = position_values(boards[k], evaluator, s.ply)
            finish(k, probs, cube_value[k] * cf.money_cubeful(probs, owner_mover, cube_efficiencies(boards[k])))
            break

        held = s.hold_first and t == 0
        if dist is not None and not held:
            exact = np.array([bearoff.exact_race(boards[i]) for i in k], dtype=bool)
            if exact.any():
                e = k[exact]
                theirs = np.ascontiguousarray(boards[e][:, ::-1])  # the mover (row 1) on roll
                opp = np.zeros((len(e), 5))
                for j in range(len(e)):
                    opp[j, 0] = bearoff.race_win_probability(theirs[j], dist, bearoff.BINOM)
                probs = flip(bearoff.patch_small_races(theirs, opp))
                own = owner_mover[exact]
                finish(e, probs, cube_value[e] * cf.race_cubeful(boards[e], probs, own))
                k, owner_mover = k[~exact], owner_mover[~exact]
                if len(k) == 0:
                    break

        if s.cube and not held:
            dropped = _cube_actions(boards, k, owner_mover, cube_value, owner_root, root_on_roll, evaluator, s.ply)
            if len(dropped):
                probs = position_values(boards[dropped], evaluator, s.ply)
                finish(dropped, probs, cube_value[dropped])
                keep = ~np.isin(k, dropped)
                k = k[keep]
                if len(k) == 0:
                    t += 1
                    continue
                owner_mover = np.where(root_on_roll[k], owner_root[k], -owner_root[k])

        rows = _ORDERED_TO_ROW[dice[k, t % DICE_CHUNK]]
        chosen = None
        if s.variance_reduction:
            after, probs = _unique_best(boards[k], evaluator, s.ply)
            m = np.arange(len(k))
            chosen_probs = probs[m, rows]  # the luck: the same (screened) values for all 21 rolls
            mean = np.einsum("krj,r->kj", probs, ROLL_WEIGHTS)
            luck[k] += to_root(chosen_probs, k) - to_root(mean, k)  # the 1 of flip cancels
            if s.cube:
                vals = _cubeful_after(after.reshape(-1, 2, 25), probs.reshape(-1, 5),
                                      np.repeat(cube_value[k], N_ROLLS), np.repeat(owner_mover, N_ROLLS))
                vals = vals.reshape(len(k), N_ROLLS)
                d = vals[m, rows] - vals @ ROLL_WEIGHTS
                cf_luck[k] += np.where(root_on_roll[k], d, -d)
            if getattr(evaluator, "screen", None) is None:
                chosen = after[m, rows]  # unscreened: already the play rank_plays makes
        if chosen is None:
            # The play made: every play of the roll valued, as rank_plays chooses (not screened).
            chosen = best_afterstates(boards[k], evaluator, s.ply, roll_rows=rows[:, None], screen=False)[0][:, 0]
        turns[k] += 1
        points = game_results(chosen)
        over = points != 0
        if over.any():
            e = k[over]
            finish(e, np.array([result_probs(int(p)) for p in points[over]]), cube_value[e] * points[over])
        go = k[~over]
        boards[go] = chosen[~over][:, ::-1]
        root_on_roll[go] = ~root_on_roll[go]
        t += 1
    return TrialData(ids, raw, luck, cf_raw, cf_luck, turns)


def _unique_best(boards: np.ndarray, evaluator: Evaluator, ply: int) -> tuple[np.ndarray, np.ndarray]:
    """best_afterstates of each board, computed once per distinct board (early turns of a
    batch repeat the same few boards)."""
    flat = boards.reshape(len(boards), -1)
    uniq, inverse = np.unique(flat, axis=0, return_inverse=True)
    if len(uniq) == len(boards):
        return best_afterstates(boards, evaluator, ply)
    after, probs = best_afterstates(uniq.reshape(-1, 2, 25), evaluator, ply)
    inverse = inverse.reshape(-1)
    return after[inverse], probs[inverse]


def _cube_actions(boards, k, owner_mover, cube_value, owner_root, root_on_roll, evaluator, ply) -> np.ndarray:
    """Each mover that may double decides with engine.cube at the rollout's ply; returns the
    trials that ended by a double and a pass, and applies takes (cube doubled, to the taker)."""
    may = owner_mover != cf.OPP_OWNS
    if not may.any():
        return np.zeros(0, dtype=np.int64)
    kk = k[may]
    probs = position_values(boards[kk], evaluator, 1) if ply == 1 else None
    names = {cf.CENTRE: CENTRE, cf.ME_OWNS: ME_OWNS, cf.OPP_OWNS: OPP_OWNS}
    dropped = []
    for j, i in enumerate(kk):
        cube = CubeInfo(value=int(cube_value[i]), owner=names[int(owner_mover[may][j])])
        if not cube.may_double():
            continue
        if ply == 1:
            decision = cube_decision(probs[j], cube, cube_efficiency(boards[i]), boards[i])
        else:
            decision = cube_decision_at_ply(boards[i], evaluator, cube, ply)
        if not decision.double:
            continue
        if decision.response == "pass":
            dropped.append(i)
        else:
            cube_value[i] *= 2
            # The taker, the side not on roll, owns it.
            owner_root[i] = cf.OPP_OWNS if root_on_roll[i] else cf.ME_OWNS
    return np.array(dropped, dtype=np.int64)


def _cubeful_after(after: np.ndarray, probs: np.ndarray, value: np.ndarray, owner_mover: np.ndarray) -> np.ndarray:
    """The mover's cubeful points of each afterstate (opponent to roll): exact when the game
    is over, else minus the opponent's Janowski no-double value."""
    points = game_results(after)
    opp = np.ascontiguousarray(after[:, ::-1])
    out = -value * cf.money_cubeful(flip(probs), -owner_mover, cube_efficiencies(opp))
    return np.where(points != 0, value * points, out)


# ---------------------------------------------------------------------------------------
# Summary


@dataclass(frozen=True)
class Summary:
    """Means and standard errors over the trials done (variance-reduced when asked)."""

    trials: int
    probs: np.ndarray
    se_probs: np.ndarray
    equity: float
    se_equity: float
    cubeful: float | None
    se_cubeful: float | None

    def interval(self, value: float, se: float) -> tuple[float, float]:
        return value - 1.96 * se, value + 1.96 * se


def estimates(data: TrialData, settings: RolloutSettings) -> tuple[np.ndarray, np.ndarray]:
    """Per-trial estimates: (n, 5) probabilities and (n,) cubeful points, luck subtracted when VR is on."""
    if settings.variance_reduction:
        return data.raw - data.luck, data.cf_raw - data.cf_luck
    return data.raw, data.cf_raw


def summarise(data: TrialData, settings: RolloutSettings) -> Summary:
    n = len(data.ids)
    probs, cubeful = estimates(data, settings)
    eq = equity(probs)

    def se(x):
        return np.std(x, axis=0, ddof=1) / np.sqrt(n) if n > 1 else np.full(np.shape(x)[1:], np.nan)

    return Summary(trials=n, probs=probs.mean(axis=0) if n else np.full(5, np.nan), se_probs=se(probs),
                   equity=float(eq.mean()) if n else float("nan"), se_equity=float(se(eq)),
                   cubeful=float(cubeful.mean()) if settings.cube and n else None,
                   se_cubeful=float(se(cubeful)) if settings.cube else None)
