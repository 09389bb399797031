"""`tdgammon train`: TD(lambda) self-play from scratch or from a checkpoint."""

from __future__ import annotations

import argparse
import sys
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
    parser.add_argument("--backend", choices=("hogwild", "local", "ray"), default="hogwild",
                        help="hogwild (default, fastest on one machine): threads of this process, "
                             "each training a copy of the weights it publishes after every game; "
                             "local: actor processes play games, one "
                             "learner applies TD(lambda); ray: the same actors on a Ray cluster "
                             "(pip install -e '.[distributed]')")
    parser.add_argument("--actors", type=int, metavar="N",
                        help="actors for --backend local|ray (default: CPUs of the machine or "
                             "cluster minus one, for the learner)")
    parser.add_argument("--ray-address", metavar="auto|HOST:PORT",
                        help="Ray cluster to join (default: start a local one)")
    parser.set_defaults(func=run)


def warn_if_workers_changed(state: dict, workers: int) -> None:
    """One line on stderr when a resume changes the Hogwild thread count.

    A warning, not a refusal: the run goes on correctly (same weights, games and schedule;
    the threads' dice are reseeded from the seed and the games count), and a later stage
    may well want more threads. Only the promise that the resumed run equals an
    uninterrupted one no longer holds, and that is what the line says."""
    saved = state.get("rng_states")
    if isinstance(saved, list) and len(saved) != workers:
        print(f"tdgammon train: warning: the checkpoint was trained with workers = {len(saved)}, "
              f"this run has {workers}: it continues with reseeded dice and will not equal an "
              "uninterrupted run", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    from models.checkpoint import load_checkpoint
    from training.trainer import Trainer

    if args.games is not None and args.games <= 0:
        raise ConfigError("--games must be positive")
    backend = None
    if args.backend == "hogwild":
        if args.actors is not None or args.ray_address is not None:
            raise ConfigError("--actors and --ray-address need --backend local or ray")
    elif args.backend == "local":
        from training.actors import LocalBackend

        if args.ray_address is not None:
            raise ConfigError("--ray-address needs --backend ray")
        backend = LocalBackend(args.actors)
    else:
        from training.actors import RayBackend

        backend = RayBackend(args.actors, args.ray_address)
    if args.config is not None:
        config, name = load_config(args.config), args.config.stem
    elif args.resume is not None:
        config, name = TrainConfig.from_dict(load_checkpoint(args.resume).config, str(args.resume)), "resumed"
    else:
        default = Path(__file__).resolve().parents[2] / "configs" / "default.toml"
        config, name = load_config(default), "default"
    out = args.out or Path("runs") / f"{name}-h{config.hidden}-s{config.seed}"
    if backend is None and args.resume is not None:
        warn_if_workers_changed(load_checkpoint(args.resume).trainer_state, config.workers)
    if backend is None:
        trainer = Trainer(config, out, resume=args.resume, total_games=args.games,
                          progress=not args.no_progress)
    else:
        from training.distributed import DistributedTrainer

        trainer = DistributedTrainer(config, out, backend, resume=args.resume, total_games=args.games,
                                     progress=not args.no_progress)
        print(f"{backend.name} backend: {backend.n_actors} actors, weights republished every "
              f"{config.staleness_games} games", flush=True)
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
