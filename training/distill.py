"""Search distillation: fit a net to our own 2-ply search's values of self-play positions.

Why: a TD(lambda) update moves a position's value toward the one position the dice
happened to give next; the 2-ply search instead averages the outcome over all 21 rolls
after each roll's best reply, so its value of a position is closer to the truth (gnubg
judges our 2-ply to lose about 40% less equity a decision than our 1-ply). Fitting the
1-ply net to those values hands it part of the search's strength at no cost at play time.

It stays self-play: the positions come from the net's own 1-ply games and the targets
from this engine's own search with our own nets; no other program's play or evaluations.

Positions are afterstates (the side that just moved in row 0), as the net reads them.
Finished games and exact bear-off races are left out: at play time the exact result and
the bear-off database answer those, never the net.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from engine.bearoff import exact_race
from engine.encoder import encode
from engine.evaluator import N_OUTPUTS, Evaluator, equity, flip
from engine.movegen import generate
from engine.position import game_results, race_flags
from engine.search import MoveFilter, afterstate_values, evaluate_afterstates, roll_average
from models.network import TDNet
from training.kernels import Scratch
from training.selfplay import Weights
from training.trajectory import record_games

TARGET_BATCH = 256  # positions per roll_average call: one evaluator call of about 130,000 afterstates
NEAR_MISS_BATCH = 1024  # positions per evaluator call in near_misses: about 25,000 afterstates
NEAR_MISS_WINDOW = MoveFilter().threshold  # equity behind the best play: the 2-ply search's own window
# A 3-ply teacher's inner 2-ply replies: 4 candidates within 0.08 value a position in 220 ms
# on one core against 377 ms with the search's own 8 within 0.16, and moved 20 oracle
# positions' equities by at most 0.0125 (commit 381b6b8, 2026-12-04).
THREE_PLY_TEACHER_FILTER = MoveFilter(max_moves=4, threshold=0.08)
TRIM = 0.001  # share of held-out positions, the worst fitted, that the trimmed error leaves out


def record_positions(net: TDNet, games: int, rng: np.ndarray) -> np.ndarray:
    """The afterstates the net's own 1-ply self-play chooses in `games` games, minus those
    the net never answers at play time (finished games, exact bear-off races).

    rng: a 1-element uint64 splitmix64 state (training.selfplay.seed_state); it advances.
    """
    weights = Weights(net)
    boards, _ = record_games(weights.as_tuple(), games, 0.0, rng, Scratch(weights.hidden, weights.inputs))
    return boards[_answered_by_net(boards)]


BACK_GAME_POINTS = 2  # points held in the opponent's home board
BACK_GAME_TRAIL = 30  # pips behind in the race


def holds_back_game(boards: np.ndarray) -> np.ndarray:
    """Mask of the contact afterstates in which a side holds BACK_GAME_POINTS or more points
    in its opponent's home board and trails the race by BACK_GAME_TRAIL pips or more: back
    games, about 1.6% of self-play positions, where the shipped net overrated the other
    side by 0.115 equity against its own rollouts (docs/training.md)."""
    boards = np.asarray(boards, dtype=np.int8).reshape(-1, 2, 25)
    pips = (boards.astype(np.int64) * np.arange(1, 26)).sum(axis=2)
    held = (boards[:, :, 18:24] >= 2).sum(axis=2)
    holds = (held >= BACK_GAME_POINTS) & (pips - pips[:, ::-1] >= BACK_GAME_TRAIL)
    return holds.any(axis=1) & ~race_flags(boards)


CUBE_WINDOW = (0.6, 0.95)  # the favourite's P(win) where cube actions are decided
CUBE_WINDOW_SHARE = 0.25  # of those positions, the share kept: fewer a game, from more games


def in_cube_window(boards: np.ndarray, evaluator: Evaluator, rng: np.random.Generator) -> np.ndarray:
    """Mask of a random CUBE_WINDOW_SHARE of the contact afterstates whose favourite's P(win),
    by the evaluator, lies in CUBE_WINDOW: where the cube benchmark's largest errors were, the
    shipped net's static P(win) 0.05 to 0.17 from its own rollouts (docs/cube.md)."""
    boards = np.asarray(boards, dtype=np.int8).reshape(-1, 2, 25)
    if len(boards) == 0:
        return np.zeros(0, dtype=np.bool_)
    win = evaluate_afterstates(evaluator, boards)[:, 0]
    favourite = np.maximum(win, 1.0 - win)
    window = (favourite >= CUBE_WINDOW[0]) & (favourite <= CUBE_WINDOW[1]) & ~race_flags(boards)
    return window & (rng.random(len(boards)) < CUBE_WINDOW_SHARE)


DISPUTE = 0.025  # cubeless equity between a position's 1-ply and 2-ply values: about a quarter of positions


def disputed(boards: np.ndarray, teacher: Evaluator) -> np.ndarray:
    """Mask of the afterstates whose teacher's 1-ply and 2-ply equities differ by DISPUTE or more.

    Why: a deeper teacher is dear (3-ply values about 30 positions a second a core), and it
    moves the target most where the shallower searches already disagree: on 185 self-play
    positions the 3-ply value lay 0.041 from the 1-ply one on the quarter so chosen, 0.018
    on the rest (2026-12-07). Spending it there buys about twice the correction a position.
    """
    boards = np.asarray(boards, dtype=np.int8).reshape(-1, 2, 25)
    if len(boards) == 0:
        return np.zeros(0, dtype=np.bool_)
    gap = equity(search_targets(boards, teacher, 1)) - equity(search_targets(boards, teacher, 2))
    return np.abs(gap) >= DISPUTE


def _answered_by_net(boards: np.ndarray) -> np.ndarray:
    """Mask of the afterstates the net answers at play time: not finished, not an exact bear-off race."""
    keep = game_results(boards) == 0
    keep &= np.array([not exact_race(b) for b in boards], dtype=np.bool_)
    return keep


def near_misses(boards: np.ndarray, student: Evaluator, most: int, rng: np.random.Generator,
                window: float = NEAR_MISS_WINDOW) -> np.ndarray:
    """The plays the student nearly chose: from the position after each afterstate (the
    opponent on roll), with a fresh roll, its 2nd- to (most+1)-th best plays at the
    student's 1-ply that lie within `window` equity of its best (those the net answers).

    Why: the chosen afterstates alone never show the net the plays it ranks just below
    them, yet each 1-ply choice is decided by exactly those comparisons. A fresh roll is
    as likely as the one the game drew, so the positions keep self-play's distribution.
    """
    dice = rng.integers(1, 7, size=(len(boards), 2))
    found = []
    for start in range(0, len(boards), NEAR_MISS_BATCH):
        groups = [generate(board, int(d1), int(d2))[0] for board, (d1, d2) in
                  zip(boards[start:start + NEAR_MISS_BATCH, ::-1], dice[start:start + NEAR_MISS_BATCH])]
        afterstates = np.concatenate(groups)
        eqs = equity(evaluate_afterstates(student, afterstates))
        ends = np.cumsum([len(g) for g in groups])
        for group, group_eqs in zip(groups, np.split(eqs, ends[:-1])):
            if len(group) < 2:
                continue
            order = np.argsort(-group_eqs, kind="stable")
            rivals = order[1:most + 1]
            found.append(group[rivals[group_eqs[rivals] >= group_eqs[order[0]] - window]])
    found = np.concatenate(found) if found else np.zeros((0, 2, 25), dtype=np.int8)
    return found[_answered_by_net(found)]


def search_targets(boards: np.ndarray, teacher: Evaluator, ply: int = 2) -> np.ndarray:
    """The teacher's value of each afterstate, from the view of its row 0 (the side that
    just moved), as float32 (n, 5): its own evaluation (ply 1: compression, a smaller
    student copying a larger teacher's play), the mean over the opponent's 21 rolls of
    the outcome after its best 1-ply reply (ply 2), or its best 2-ply reply (ply 3,
    about 50 times slower, with THREE_PLY_TEACHER_FILTER)."""
    if ply not in (1, 2, 3):
        raise ValueError(f"the teacher searches at 1, 2 or 3 ply, got {ply}")
    out = np.empty((len(boards), N_OUTPUTS), dtype=np.float32)
    for start in range(0, len(boards), TARGET_BATCH):
        chunk = boards[start:start + TARGET_BATCH]
        if ply == 1:
            out[start:start + len(chunk)] = teacher.evaluate(chunk)
        elif ply == 2:
            out[start:start + len(chunk)] = flip(roll_average(chunk[:, ::-1], teacher))
        else:
            out[start:start + len(chunk)] = afterstate_values(chunk, teacher, 3, filter=THREE_PLY_TEACHER_FILTER)
    return out


@dataclass(frozen=True)
class FitResult:
    """Mean squared error over the held-out positions, before and after each epoch.

    val_trimmed leaves out the worst-fitted TRIM of them: a handful of rare endings whose
    gammon chances every net misvalues can carry half the mean and swing it between files.
    """

    positions: int
    held_out: int
    val_mse: list[float]
    val_trimmed: list[float]


def fit(net: TDNet, boards: np.ndarray, targets: np.ndarray, epochs: int, lr: float,
        batch: int = 128, held_out: float = 0.1, seed: int = 0, lr_end: float | None = None,
        validation: tuple[np.ndarray, np.ndarray] | None = None) -> FitResult:
    """Fit the net's five outputs to targets by mean squared error (Adam), in place.

    Squared error, as TD(lambda)'s own update minimises; held-out positions measure the
    fit, so overfitting shows as a rising val_mse. They are a random `held_out` share of
    the positions, or with `validation` (boards, targets) positions from other games: a
    game's positions and their near misses resemble each other, so a random share of
    them flatters the fit, while other games' positions measure it honestly and all of
    the positions train. With lr_end the step size falls linearly from lr to lr_end over
    the fit: a constant step leaves the error bouncing on a floor that a smaller final
    step gets under.
    """
    if len(boards) != len(targets) or len(boards) < 10:
        raise ValueError(f"fit needs matching boards and targets, at least 10 ({len(boards)}, {len(targets)})")
    boards = np.ascontiguousarray(boards, dtype=np.int8)
    y = torch.from_numpy(np.ascontiguousarray(targets, dtype=np.float32))

    def inputs(rows: torch.Tensor) -> torch.Tensor:
        # Encoded a batch at a time: 50 bytes a position held instead of 936 (234 float32 inputs).
        return torch.from_numpy(encode(boards[rows.numpy()], net.features))

    gen = torch.Generator().manual_seed(seed)
    if validation is None:
        perm = torch.randperm(len(boards), generator=gen)
        n_val = max(1, int(len(boards) * held_out))
        train, x_val, y_val = perm[n_val:], inputs(perm[:n_val]), y[perm[:n_val]]
    else:
        val_boards, val_targets = validation
        if len(val_boards) != len(val_targets) or len(val_boards) < 1:
            raise ValueError(f"fit needs matching validation boards and targets ({len(val_boards)}, {len(val_targets)})")
        train = torch.arange(len(boards))
        x_val = torch.from_numpy(encode(val_boards, net.features))
        y_val = torch.from_numpy(np.ascontiguousarray(val_targets, dtype=np.float32))

    keep = len(x_val) - int(len(x_val) * TRIM)

    def val_errors() -> tuple[float, float]:
        with torch.no_grad():
            per_position = ((net(x_val) - y_val) ** 2).mean(dim=1)
        return float(per_position.mean()), float(per_position.sort().values[:keep].mean())

    history = [val_errors()]
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    steps = epochs * -(-len(train) // batch)
    end = lr if lr_end is None else lr_end
    step = 0
    for _ in range(epochs):
        order = train[torch.randperm(len(train), generator=gen)]
        for start in range(0, len(order), batch):
            b = order[start:start + batch]
            opt.param_groups[0]["lr"] = lr + (end - lr) * step / steps
            step += 1
            loss = ((net(inputs(b)) - y[b]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        history.append(val_errors())
    return FitResult(len(train), len(x_val), [m for m, _ in history], [t for _, t in history])
