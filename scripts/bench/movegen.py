"""Move generation speed: afterstates per second over every oracle (position, roll), one process.

JIT compilation is timed separately and excluded from the figure.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from scripts.bench.common import oracle_records
from scripts.commands.options import at_least


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--repeat", type=at_least(1), default=20, help="passes over the oracle (default 20)")


def run(args: argparse.Namespace) -> None:
    from engine.movegen import _ZOBRIST, PlayBuffers
    from engine.position import decode_position_id
    from scripts.bench.kernels import generate_all as _generate_all

    records = oracle_records()
    boards = np.stack([decode_position_id(r["position"]) for r in records])
    dice = np.array([r["dice"] for r in records], dtype=np.int64)
    buf = PlayBuffers()
    start = time.perf_counter()
    _generate_all(boards[:1], dice[:1], buf.boards, buf.steps, buf.hashes, _ZOBRIST)
    print(f"JIT warm-up: {time.perf_counter() - start:.2f} s (excluded)")
    start = time.perf_counter()
    total = 0
    for _ in range(args.repeat):
        total += _generate_all(boards, dice, buf.boards, buf.steps, buf.hashes, _ZOBRIST)
    elapsed = time.perf_counter() - start
    print(f"{len(records)} (position, roll) pairs x {args.repeat} passes: "
          f"{total} afterstates in {elapsed:.2f} s")
    print(f"movegen: {total / elapsed:,.0f} afterstates/s".replace(",", ""))
