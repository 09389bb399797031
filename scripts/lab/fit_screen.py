"""Fit a screen: a small net that ranks a model's plays nearly as the model does, so that
searches value only each roll's few best plays with the model (engine.search.screened_values,
as gnubg's pruning nets do).

Self-play only: the positions come from the model's own 1-ply games (its first member), the
plays are every legal play of each of the 21 rolls from them, and the targets are the model's
own evaluation of each play. The fit starts from a small net (default: the shipped
198-input, 80-unit Tesauro net) and prints, on positions of other games, how often the
model's best play is among the screen's K best and the equity a K-play screen loses:

    python -m scripts.lab.fit_screen --model models/default.pt --init models/tesauro-198-80.pt \\
        --games 3000 --positions 30000 --epochs 2 --seed 1 --out models/default.screen.pt
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

from engine.errors import CheckpointError
from engine.evaluator import equity
from engine.position import race_flags
from engine.search import ROLLS, expand
from models.checkpoint import load_checkpoint, load_members, load_play_net, save_checkpoint
from models.inference import InferenceNet
from models.paths import DEFAULT_MODEL
from training.distill import fit, record_positions
from training.selfplay import seed_state

CHUNK = 500_000  # afterstates per model call
KEEPS = (2, 3, 4, 6, 8)  # screen sizes the report measures


def screen_data(model: Path, games: int, positions: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(afterstates, group_start, targets): every play of every roll from `positions` contact
    positions (side on roll in row 0) of the model's self-play, and the model's raw values."""
    members = load_members(model)
    boards = record_positions(members[0].net, games, seed_state(seed, 0))[:, ::-1]  # the opponent to roll
    boards = boards[~race_flags(boards)]
    rng = np.random.default_rng(seed)
    if positions < len(boards):
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--init", type=Path, default=DEFAULT_MODEL.parent / "tesauro-198-80.pt",
                        help="the small net the fit starts from")
    parser.add_argument("--games", type=int, default=3000)
    parser.add_argument("--positions", type=int, default=30_000, help="positions fitted on")
    parser.add_argument("--held-out", type=int, default=2000, help="positions of other games that measure it")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if min(args.games, args.positions, args.held_out, args.epochs) <= 0:
        print("error: --games, --positions, --held-out and --epochs must be positive", file=sys.stderr)
        return 2
    try:
        start = time.perf_counter()
        after, _, targets = screen_data(args.model, args.games, args.positions, args.seed)
        val_after, val_groups, val_targets = screen_data(args.model, max(1, args.games // 10), args.held_out,
                                                         args.seed + 1000)
        print(f"data: {len(after):,} plays to fit, {len(val_after):,} held out ({time.perf_counter() - start:.0f} s)")
        init = load_checkpoint(args.init)
    except (CheckpointError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if init.net.features:
        print(f"error: {args.init} reads features; a screen reads Tesauro's 198 inputs only", file=sys.stderr)
        return 2
    torch.manual_seed(args.seed)
    start = time.perf_counter()
    result = fit(init.net, after, targets, args.epochs, args.lr, batch=1024, seed=args.seed, lr_end=args.lr / 10,
                 validation=(val_after, val_targets))
    print(f"fit: held-out mse {result.val_mse[0]:.3g} -> {result.val_mse[-1]:.3g} ({time.perf_counter() - start:.0f} s)")
    model_eqs = equity(val_targets.astype(np.float64))
    screen_eqs = equity(InferenceNet.from_torch(init.net).forward(val_after).astype(np.float64))
    for keep in KEEPS:
        share, loss = screen_losses(model_eqs, screen_eqs, val_groups, keep)
        print(f"keep {keep}: model's best kept on {share:.1%} of rolls, {loss * 1000:.2f} mEMG lost per roll")
    init.trainer_state = init.state_with("screen", {"model": args.model.name, "games": args.games,
                                                    "positions": args.positions, "epochs": args.epochs,
                                                    "lr": args.lr, "seed": args.seed})
    save_checkpoint(args.out, init)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
