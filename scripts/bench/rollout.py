"""Rollout speed: the opening position, full games, 1-ply with variance reduction, one worker (--vs-gnubg: and gnubg's).

Times `engine.rollout` on --trials trials (default 1,296) with one torch thread, after a
JIT warm-up; with --vs-gnubg it then times gnubg's own 0-ply cubeless rollout with its
variance reduction on one thread, the same trials, and prints the ratio. --workers N
also times N worker processes; --ray N a local Ray cluster of N CPUs.
"""

from __future__ import annotations

import argparse
import time

from scripts.commands.options import at_least

START_ID = "4HPwATDgc/ABMA"  # the opening position (engine.position.Position.start().id)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", metavar="PATH", default=None,
                        help="checkpoint or evaluator spec (default models/default.pt)")
    parser.add_argument("--trials", type=at_least(1), default=1296, help="trials (default 1296)")
    parser.add_argument("--vs-gnubg", action="store_true", help="also time gnubg's 0-ply rollout, one thread")
    parser.add_argument("--workers", type=at_least(0), default=0, help="also time N local worker processes")
    parser.add_argument("--ray", type=at_least(0), default=0, help="also time a local Ray cluster of N CPUs")
    parser.add_argument("--position", default=START_ID, help="Position ID (default the opening)")


def _time(board, backend, settings) -> tuple[float, object]:
    from engine.rollout.runner import rollout_position

    res = rollout_position(board, backend, settings)
    return res.seconds, res.summary


def run(args: argparse.Namespace) -> None:
    from engine.position import Position
    from engine.rollout.core import RolloutSettings
    from engine.rollout.backends import LocalBackend
    from engine.rollout.runner import rollout_position
    from scripts.commands.rollout import EvaluatorLoader

    loader = EvaluatorLoader(args.model, threads=1)
    evaluator = loader()
    board = Position.from_id(args.position).board
    settings = RolloutSettings(trials=args.trials)
    t0 = time.perf_counter()
    rollout_position(board, LocalBackend(loader, evaluator=evaluator), RolloutSettings(trials=36, truncate=2))
    print(f"JIT warm-up: {time.perf_counter() - t0:.2f} s (excluded)")
    ours, s = _time(board, LocalBackend(loader, evaluator=evaluator), settings)
    print(f"tdgammon ({evaluator.name}, 1-ply, VR, 1 worker): {args.trials} trials in {ours:.1f} s "
          f"({args.trials / ours:.1f} trials/s), equity {s.equity:+.4f} se {s.se_equity:.4f}")
    if args.workers > 1:
        backend = LocalBackend(loader, workers=args.workers)
        try:
            secs, s2 = _time(board, backend, settings)
        finally:
            backend.close()
        print(f"tdgammon, {args.workers} worker processes: {secs:.1f} s (speed-up {ours / secs:.2f}, "
              f"process start and model load included), equity {s2.equity:+.4f}")
    if args.ray > 0:
        from training.rollout_ray import RayBackend

        backend = RayBackend(loader, workers=args.ray)
        try:
            secs, s3 = _time(board, backend, settings)
        finally:
            backend.close()
        print(f"tdgammon, local Ray cluster of {args.ray} CPUs: {secs:.1f} s (speed-up {ours / secs:.2f}, "
              f"worker start included), equity {s3.equity:+.4f}")
    if args.vs_gnubg:
        from scripts.lab.gnubg_rollouts import gnubg_rollout

        t0 = time.perf_counter()
        (g,) = gnubg_rollout([args.position], trials=args.trials)
        wall = time.perf_counter() - t0
        print(f"gnubg (0-ply, VR, 1 thread): {args.trials} trials in {g['seconds']:.0f} s by its own clock "
              f"({wall:.1f} s with start-up), equity {g['equity']:+.3f} se {g['se']['equity']:.3f}")
        print(f"rollout: {args.trials / ours:.1f} trials/s")
        print(f"ratio tdgammon / gnubg seconds: {ours / max(wall, 1e-9):.2f} (below 1: tdgammon faster)")
    else:
        print(f"rollout: {args.trials / ours:.1f} trials/s")
