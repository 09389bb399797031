"""Distillation teacher speed: positions/s valued at 2-ply (roll_average), as `distill positions` batches them.

One thread. The oracle's distinct positions (side on roll), TARGET_BATCH at a time, each
valued by the mean over the 21 rolls of the best 1-ply play: about 500 afterstates a
position, so one batch is one evaluator call of over 100,000 rows. Uses models/default.pt
when it exists (or --model PATH), else a random TDNet(80). Warm-up is excluded.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from scripts.bench.common import add_model_argument, bench_evaluator, oracle_records
from scripts.commands.options import at_least


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_model_argument(parser)
    parser.add_argument("--positions", type=at_least(1), default=1024, help="positions to value (default 1024)")


def run(args: argparse.Namespace) -> None:
    from engine.position import decode_position_id
    from engine.search import roll_average
    from training.distill import TARGET_BATCH  # torch: only when the benchmark runs

    evaluator, label = bench_evaluator(args.model)
    ids = sorted({r["position"] for r in oracle_records()})
    boards = np.stack([decode_position_id(p) for p in ids[:args.positions]])
    roll_average(boards[:8], evaluator)  # JIT and allocator warm-up
    start = time.perf_counter()
    for i in range(0, len(boards), TARGET_BATCH):
        roll_average(boards[i:i + TARGET_BATCH], evaluator)
    elapsed = time.perf_counter() - start
    print(f"{label}, 1 thread, {len(boards)} positions in batches of {TARGET_BATCH}: {elapsed:.2f} s")
    print(f"teacher: {len(boards) / elapsed:.1f} positions/s")
