"""Batched 1-ply evaluation speed (encode + network + clamp, one thread): positions/s over the oracle afterstates.

Uses models/default.pt when it exists (or --model PATH), else a randomly initialised
TDNet of --hidden units: the speed does not depend on the weights. The afterstates go
through NetworkEvaluator.evaluate in chunks of --chunk; warm-up is excluded. Two figures:
each afterstate summed from scratch (the figure compared with gnubg's), and each valued
from the position it was played from, as every search calls the network (a board's
first layer is its parent's plus the rows of the inputs that differ). With --vs-gnubg,
gnubg's `calibrate` (its static evaluations/s, one thread) runs right after, and the
last line is the ratio ours / gnubg's: the machine's speed moves between hours, so only
figures measured in the same minutes compare.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from scripts.bench.common import add_model_argument, bench_evaluator, gnubg_binary, gnubg_calibrate, oracle_records
from scripts.commands.options import at_least


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_model_argument(parser)
    parser.add_argument("--hidden", type=at_least(1), default=80, help="hidden units of the random net (default 80)")
    parser.add_argument("--chunk", type=at_least(1), default=4096, help="positions per evaluator call (default 4096)")
    parser.add_argument("--repeat", type=at_least(1), default=10, help="passes over the oracle afterstates (default 10)")
    parser.add_argument("--vs-gnubg", action="store_true",
                        help="then time gnubg's calibrate on one thread and print the ratio")


def oracle_afterstates() -> np.ndarray:
    """Every afterstate of the gnubg oracle, (83208, 2, 25) int8."""
    from engine.position import decode_position_id

    return np.stack([decode_position_id(a) for r in oracle_records() for a in r["afterstates"]])


def oracle_parents() -> tuple[np.ndarray, np.ndarray]:
    """The oracle's positions (4956, 2, 25) and, for each of oracle_afterstates(), the row of
    the position it was played from."""
    from engine.position import decode_position_id

    records = oracle_records()
    positions = np.stack([decode_position_id(r["position"]) for r in records])
    return positions, np.repeat(np.arange(len(records)), [len(r["afterstates"]) for r in records])


def _timed(evaluator, boards: np.ndarray, chunk: int, repeat: int,
           parents: tuple[np.ndarray, np.ndarray] | None = None) -> float:
    """Seconds for `repeat` passes over boards in chunks, after one untimed chunk."""
    from engine.evaluator import Parents

    def chunk_parents(i: int) -> Parents | None:
        if parents is None:
            return None
        positions, index = parents[0], parents[1][i:i + chunk]
        return Parents(positions[index[0]:index[-1] + 1], index - index[0])

    evaluator.evaluate(boards[:chunk], chunk_parents(0))  # JIT and allocator warm-up
    start = time.perf_counter()
    for _ in range(repeat):
        for i in range(0, len(boards), chunk):
            evaluator.evaluate(boards[i:i + chunk], chunk_parents(i))
    return time.perf_counter() - start


def run(args: argparse.Namespace) -> None:
    evaluator, label = bench_evaluator(args.model, args.hidden)
    boards = oracle_afterstates()
    positions, index = oracle_parents()
    chunk = args.chunk
    elapsed = _timed(evaluator, boards, chunk, args.repeat)
    total = len(boards) * args.repeat
    from_parents = total / _timed(evaluator, boards, chunk, args.repeat, (positions, index[:len(boards)]))
    print(f"{label}, 1 thread, chunks of {chunk}: {total} positions in {elapsed:.2f} s")
    print(f"eval from the position played from (as searches call it): {from_parents:.0f} positions/s")
    ours = total / elapsed
    if args.vs_gnubg and gnubg_binary() is None:
        print("gnubg is not installed: ours only")
    print(f"eval: {ours:.0f} positions/s")
    if not args.vs_gnubg or gnubg_binary() is None:
        return
    theirs = gnubg_calibrate()
    print(f"gnubg calibrate, 1 thread: {theirs:.0f} static evaluations/s")
    print(f"eval vs gnubg: {ours / theirs:.2f} (ours {ours:.0f} / gnubg {theirs:.0f} positions/s); "
          f"from the position played from {from_parents / theirs:.2f}")
