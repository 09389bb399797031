"""Self-play training throughput: games per second of TD(lambda) self-play with learning on.

Times the trainer's own path (move generation, encoding, forward, TD update) on a copy of
the weights; JIT warm-up is excluded. Use --workers to compare one and two cores.
"""

from __future__ import annotations

import argparse
import time

from models.paths import DEFAULT_MODEL
from scripts.commands.options import at_least


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--games", type=at_least(1), default=10_000, help="games to time (default 10000)")
    parser.add_argument("--workers", type=at_least(1), default=2, help="Hogwild threads (default 2)")
    parser.add_argument("--hidden", type=at_least(1), default=80, help="hidden units of a fresh net (default 80)")
    parser.add_argument("--features", action="store_true",
                        help="a fresh net that also reads engine.features' inputs (implies --fresh)")
    parser.add_argument("--bearoff-target", action="store_true",
                        help="end games at exact bear-off races (the config key bearoff_target)")
    parser.add_argument("--fresh", action="store_true",
                        help="time a freshly initialised net instead of the shipped model")


def run(args: argparse.Namespace) -> None:
    from models.checkpoint import load_members  # heavy (torch): only when the benchmark runs
    from training.selfplay import SelfPlay, Weights, initial_net, seed_state

    if not (args.fresh or args.features) and DEFAULT_MODEL.is_file():
        net, source = load_members(DEFAULT_MODEL)[0].net, f"shipped model ({DEFAULT_MODEL.name}, first net)"
    else:
        net = initial_net(args.hidden, 1, args.features)
        source = f"fresh {args.hidden}-hidden net" + (" with features" if args.features else "")
    weights = Weights(net)
    play = SelfPlay(weights, args.workers, [int(seed_state(1, w)[0]) for w in range(args.workers)],
                    args.bearoff_target)
    start = time.perf_counter()
    play.train(1, 0.01, 0.7, 0.0)
    print(f"JIT warm-up: {time.perf_counter() - start:.2f} s (excluded)")
    per_worker = max(1, args.games // args.workers)
    start = time.perf_counter()
    games, moves, _ = play.train(per_worker, 0.01, 0.7, 0.0)
    elapsed = time.perf_counter() - start
    play.close()
    print(f"{source}, {args.workers} worker(s): {games} games, {moves / games:.1f} moves/game, "
          f"{elapsed:.1f} s")
    print(f"selfplay: {games / elapsed:.0f} games/s")
