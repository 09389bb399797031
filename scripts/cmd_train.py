"""`tdgammon train`: TD(lambda) self-play from scratch or from a checkpoint."""

from __future__ import annotations

import argparse
from pathlib import Path

from engine.errors import ConfigError
from training.config import TrainConfig, load_config


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "train", help="train a network by TD(lambda) self-play",
        description="Train a network by TD(lambda) self-play. Checkpoints go to OUT/checkpoint.pt "
                    "every checkpoint_every games and on Ctrl-C/SIGTERM; TensorBoard logs to OUT "
                    "(view with: tensorboard --logdir runs).")
    parser.add_argument("--config", type=Path, help="TOML run configuration (default: configs/default.toml, "
                        "or the checkpoint's own config with --resume)")
    parser.add_argument("--out", type=Path, help="run directory (default: runs/<config>-h<hidden>-s<seed>)")
    parser.add_argument("--resume", type=Path, metavar="PATH", help="continue from this checkpoint")
    parser.add_argument("--games", type=int, help="train until this many games in total (overrides the config)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar (for logs)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from models.checkpoint import load_checkpoint
    from training.trainer import Trainer

    if args.games is not None and args.games <= 0:
        raise ConfigError("--games must be positive")
    if args.config is not None:
        config, name = load_config(args.config), args.config.stem
    elif args.resume is not None:
        config, name = TrainConfig.from_dict(load_checkpoint(args.resume).config, str(args.resume)), "resumed"
    else:
        default = Path(__file__).resolve().parent.parent / "configs" / "default.toml"
        config, name = load_config(default), "default"
    out = args.out or Path("runs") / f"{name}-h{config.hidden}-s{config.seed}"
    trainer = Trainer(config, out, resume=args.resume, total_games=args.games,
                      progress=not args.no_progress)
    start_games = trainer.games
    result = trainer.run()
    rate = (trainer.games - start_games) / max(trainer.wall_time_this_run, 1e-9)
    print(f"trained {trainer.games - start_games} games ({trainer.games} in total) "
          f"at {rate:.0f} games/s; checkpoint: {out / 'checkpoint.pt'}")
    if result is not None:
        print(f"last benchmark ({result.games} games each, 1-ply): {result.summary()}")
    if trainer.stop_requested:
        print("stopped by signal; resume with: tdgammon train --resume " + str(out / "checkpoint.pt"))
    return 0
