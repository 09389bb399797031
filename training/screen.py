"""A model's screen: a small net that ranks the model's plays nearly as the model does, so that
searches value only each roll's few best plays with the model (engine.search.screened_values,
as gnubg's pruning nets do).

Self-play only: the positions come from the model's own 1-ply games (its first member), the
plays are every legal play of each of the 21 rolls from them, and the targets are the model's
own evaluation of each play. The screen reads Tesauro's 198 inputs alone (no features), so it
costs a small fraction of the model a position.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from engine.evaluator import equity
from engine.position import race_flags
from engine.search import ROLLS, SCREEN_KEEP, expand
from models.checkpoint import load_members, load_play_net
from models.inference import InferenceNet
from models.network import TDNet
from training.distill import fit, record_positions
from training.selfplay import seed_state

CHUNK = 500_000  # afterstates per model call
KEEPS = tuple(sorted({2, 3, 4, 6, 8, SCREEN_KEEP}))  # screen sizes the report measures


@dataclass(frozen=True)
class ScreenReport:
    """How the fit went: plays fitted and held out, the held-out error before and after, and
    per screen size K, the share of rolls whose model-best play is among the screen's K best
    and the equity a K-play screen loses per roll (both on positions of other games)."""

    plays: int
    held_out: int
    val_mse: tuple[float, float]
    kept_share: dict[int, float]
    loss_per_roll: dict[int, float]


def screen_data(model: Path, games: int, positions: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(afterstates, group_start, targets): every play of every roll from up to `positions`
    contact positions (side on roll in row 0) of `games` games of the model's self-play, and
    the model's raw values of them."""
    members = load_members(model)
    boards = record_positions(members[0].net, games, seed_state(seed, 0))[:, ::-1]  # the opponent to roll
    boards = boards[~race_flags(boards)]
    if positions < len(boards):
        rng = np.random.default_rng(seed)
        boards = boards[np.sort(rng.choice(len(boards), positions, replace=False))]
    after, group_start = expand(boards, np.broadcast_to(np.arange(len(ROLLS)), (len(boards), len(ROLLS))))
    net = InferenceNet.from_torch(load_play_net(model))
    targets = np.concatenate([net.forward(after[a:a + CHUNK]) for a in range(0, len(after), CHUNK)])
    return after, group_start, targets


def screen_losses(model_eqs: np.ndarray, screen_eqs: np.ndarray, group_start: np.ndarray,
                  keep: int) -> tuple[float, float]:
    """(share of rolls whose model-best play is among the screen's `keep` best, mean equity
    lost per roll by choosing the model's best among those)."""
    hits, loss = 0, 0.0
    groups = len(group_start) - 1
    for g in range(groups):
        a, b = group_start[g], group_start[g + 1]
        kept = np.argsort(-screen_eqs[a:b], kind="stable")[:keep]
        best, chosen = model_eqs[a:b].max(), model_eqs[a:b][kept].max()
        hits += chosen == best
        loss += best - chosen
    return hits / groups, loss / groups


def fit_screen(net: TDNet, model: Path, games: int, positions: int, held_out: int, epochs: int,
               lr: float, seed: int) -> ScreenReport:
    """Fit `net` (198 inputs) in place to the model's values of every play of its self-play
    positions, measured on `held_out` positions of other games (another seed)."""
    if net.features:
        raise ValueError("a screen reads Tesauro's 198 inputs only, not the features")
    after, _, targets = screen_data(model, games, positions, seed)
    val_after, val_groups, val_targets = screen_data(model, max(1, games // 10), held_out, seed + 1000)
    result = fit(net, after, targets, epochs, lr, batch=1024, seed=seed, lr_end=lr / 10,
                 validation=(val_after, val_targets))
    model_eqs = equity(val_targets.astype(np.float64))
    screen_eqs = equity(InferenceNet.from_torch(net).forward(val_after).astype(np.float64))
    measured = {keep: screen_losses(model_eqs, screen_eqs, val_groups, keep) for keep in KEEPS}
    return ScreenReport(len(after), len(val_after), (result.val_mse[0], result.val_mse[-1]),
                        {k: share for k, (share, _) in measured.items()},
                        {k: loss for k, (_, loss) in measured.items()})
