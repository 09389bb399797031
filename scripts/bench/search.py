"""Decision time: median and 95th percentile ms per rank_plays(ply=2, or --ply) over oracle (position, roll) pairs.

One thread. Uses models/default.pt when it exists (or --model PATH), else a randomly
initialised TDNet(80); a random net keeps nearly every play within the filter's 0.16,
so its decisions are close to the worst case of 8 candidates. Rolls with no legal play
are not decisions and are skipped; JIT warm-up is excluded.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from scripts.bench.common import add_model_argument, bench_evaluator, oracle_records
from scripts.cli import MAX_PLY


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_model_argument(parser)
    parser.add_argument("--positions", type=int, default=1000,
                        help="oracle (position, roll) pairs to sample, 0 = all (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="sampling seed (default 0)")
    parser.add_argument("--ply", type=int, choices=range(2, MAX_PLY + 1), default=2,
                        help="search depth to time (default 2; 3 is about 40 times slower)")


def run(args: argparse.Namespace) -> None:
    from engine.position import decode_position_id
    from engine.search import MoveFilter, rank_plays

    evaluator, label = bench_evaluator(args.model)
    records = [r for r in oracle_records() if r["afterstates"]]
    if 0 < args.positions < len(records):
        picks = np.random.default_rng(args.seed).choice(len(records), args.positions, replace=False)
        records = [records[i] for i in sorted(picks)]
    cases = [(decode_position_id(r["position"]), tuple(r["dice"])) for r in records]
    start = time.perf_counter()
    rank_plays(cases[0][0], cases[0][1], evaluator, ply=args.ply)
    print(f"JIT warm-up: {time.perf_counter() - start:.2f} s (excluded)")
    filt = MoveFilter()
    times = np.empty(len(cases))
    for k, (board, dice) in enumerate(cases):
        t0 = time.perf_counter()
        rank_plays(board, dice, evaluator, ply=args.ply, filter=filt)
        times[k] = time.perf_counter() - t0
    ms = times * 1000.0
    print(f"{label}, 1 thread, {len(cases)} {args.ply}-ply decisions, filter {filt.max_moves} within {filt.threshold}: "
          f"mean {ms.mean():.2f} ms, max {ms.max():.1f} ms")
    print(f"search: {np.median(ms):.2f} ms median, {np.percentile(ms, 95):.2f} ms p95")
