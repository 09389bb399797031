"""Batched 1-ply evaluation speed (encode + network + clamp, one thread): positions/s over the oracle afterstates.

Uses models/default.pt when it exists (or --model PATH), else a randomly initialised
TDNet of --hidden units: the speed does not depend on the weights. The afterstates go
through NetworkEvaluator.evaluate in chunks of --chunk; warm-up is excluded.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from engine.position import decode_position_id
from models.paths import DEFAULT_MODEL

ORACLE = Path(__file__).resolve().parent.parent / "tests" / "data" / "gnubg-legal-moves.jsonl"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", metavar="PATH", default=None,
                        help="checkpoint to time (default: models/default.pt if present, else a random net)")
    parser.add_argument("--hidden", type=int, default=80, help="hidden units of the random net (default 80)")
    parser.add_argument("--chunk", type=int, default=4096, help="positions per evaluator call (default 4096)")
    parser.add_argument("--repeat", type=int, default=10, help="passes over the oracle afterstates (default 10)")


def oracle_afterstates() -> np.ndarray:
    """Every afterstate of the gnubg oracle, (83208, 2, 25) int8."""
    records = [json.loads(line) for line in ORACLE.read_text().splitlines() if line.strip()]
    return np.stack([decode_position_id(a) for r in records for a in r["afterstates"]])


def run(args: argparse.Namespace) -> None:
    import torch  # heavy: only when the benchmark runs

    from models.checkpoint import load_play_net
    from models.network import NetworkEvaluator, TDNet

    torch.set_num_threads(1)
    path = Path(args.model) if args.model else DEFAULT_MODEL
    if args.model or DEFAULT_MODEL.exists():
        net, label = load_play_net(path), str(path)
    else:
        torch.manual_seed(0)
        net, label = TDNet(args.hidden), f"random TDNet({args.hidden})"
    evaluator = NetworkEvaluator(net)
    boards = oracle_afterstates()
    chunk = max(1, args.chunk)
    evaluator.evaluate(boards[:chunk])  # JIT and allocator warm-up
    start = time.perf_counter()
    for _ in range(args.repeat):
        for i in range(0, len(boards), chunk):
            evaluator.evaluate(boards[i:i + chunk])
    elapsed = time.perf_counter() - start
    total = len(boards) * args.repeat
    print(f"{label}, 1 thread, chunks of {chunk}: {total} positions in {elapsed:.2f} s")
    print(f"eval: {total / elapsed:.0f} positions/s")
