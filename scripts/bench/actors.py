"""Actor/learner throughput: games per second learned with actor processes or Ray actors.

Runs the distributed trainer's pipeline (actors play and record games with published
weights, one learner replays them with TD(lambda)) on a fresh net; start-up (process or
Ray start, JIT cache load, the first job) is excluded. Besides games/s it prints the CPU
milliseconds per game of the actors and of the learner, which do not depend on what else
the machine runs: the learner's figure caps the rate of one learner however many actors
play (1000 / learner ms per game), the actors' figure says how many actor cores reach it.
`--backend hogwild` times the single-machine Hogwild threads the same way, for comparison.
"""

from __future__ import annotations

import argparse
import time

from scripts.commands.options import at_least


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--games", type=at_least(1), default=3000, help="games to time (default 3000)")
    parser.add_argument("--backend", choices=("local", "ray", "hogwild"), default="local",
                        help="local actor processes (default), Ray actors, or Hogwild threads")
    parser.add_argument("--actors", type=at_least(1), default=2, help="actors, or threads for hogwild (default 2)")
    parser.add_argument("--ray-address", default=None, help="Ray cluster (default: a local one)")
    parser.add_argument("--hidden", type=at_least(1), default=80, help="hidden units of a fresh net (default 80)")
    parser.add_argument("--chunk-games", type=at_least(1), default=50, help="games per actor job (default 50)")


def _hogwild(args: argparse.Namespace) -> None:
    from training.selfplay import SelfPlay, Weights, initial_net, seed_state

    play = SelfPlay(Weights(initial_net(args.hidden, 1)), args.actors,
                    [int(seed_state(1, w)[0]) for w in range(args.actors)])
    play.train(1, 0.01, 0.7, 0.0)  # JIT warm-up
    per_worker = max(1, args.games // args.actors)
    start, cpu = time.perf_counter(), time.process_time()
    games, moves, _ = play.train(per_worker, 0.01, 0.7, 0.0)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    play.close()
    print(f"fresh {args.hidden}-hidden net, hogwild, {args.actors} thread(s): {games} games, "
          f"{moves / games:.1f} moves/game, {elapsed:.1f} s, CPU {1000 * cpu / games:.2f} ms/game")
    print(f"actors: {games / elapsed:.0f} games/s")


def run(args: argparse.Namespace) -> None:
    if args.backend == "hogwild":
        return _hogwild(args)
    from training.actors import LocalBackend, RayBackend
    from training.config import TrainConfig
    from training.distributed import ActorLearner
    from training.selfplay import Weights, initial_net

    config = TrainConfig(hidden=args.hidden, lr=0.01, lr_end=0.01, lr_decay_games=0,
                         chunk_games=args.chunk_games, staleness_games=500)
    backend = (LocalBackend(args.actors) if args.backend == "local"
               else RayBackend(args.actors, args.ray_address))
    start = time.perf_counter()
    learner = ActorLearner(Weights(initial_net(args.hidden, 1)), config, backend, 0)
    try:
        learner.train(config.chunk_games, config.lr, config.td_lambda, 0.0)
        print(f"start-up and first job: {time.perf_counter() - start:.2f} s (excluded)")
        first = learner.learned
        wall0, learn0, actor0 = learner.learn_seconds, learner.learn_cpu, learner.actor_cpu
        moves = 0
        start = time.perf_counter()
        while learner.learned - first < args.games:
            moves += learner.train(config.chunk_games, config.lr, config.td_lambda, 0.0)[1]
        elapsed = time.perf_counter() - start
    finally:
        learner.close()
    games = learner.learned - first
    busy = (learner.learn_seconds - wall0) / elapsed
    learn_ms = 1000 * (learner.learn_cpu - learn0) / games
    actor_ms = 1000 * (learner.actor_cpu - actor0) / games
    print(f"fresh {args.hidden}-hidden net, {args.backend} backend, {backend.n_actors} actor(s): "
          f"{games} games, {moves / games:.1f} moves/game, {elapsed:.1f} s, learner busy "
          f"{100 * busy:.0f}%; CPU per game: actors {actor_ms:.2f} ms, learner {learn_ms:.2f} ms "
          f"(one learner caps at {1000 / learn_ms:.0f} games/s)")
    print(f"actors: {games / elapsed:.0f} games/s")
