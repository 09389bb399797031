"""Checkpoints against pubeval with the same dice, fast: the trainer's numba benchmark kernel.

For A/B tests between runs (each checkpoint plays the same seeded dice, 1-ply, network
only, no bear-off database); `tdgammon pit PATH pubeval` gives the official figures.
Usage:

    python -m scripts.lab.compare_checkpoints runs/a/checkpoint-000300000.pt runs/b/... [--games 10000] [--seed 12345]
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", nargs="+")
    parser.add_argument("--games", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=12345)
    args = parser.parse_args(argv)

    from engine.errors import CheckpointError
    from engine.pit.stats import ci95
    from models.checkpoint import load_checkpoint
    from training.selfplay import Weights, benchmark

    for path in args.checkpoints:
        try:
            ckpt = load_checkpoint(path)
        except CheckpointError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        pts = benchmark(Weights(ckpt.net), "pubeval", args.games, args.seed)
        print(f"{path}: {ckpt.games_trained} games trained, {pts.mean():+.3f} ± {ci95(pts):.3f} ppg, "
              f"{100 * (pts > 0).mean():.1f}% wins", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
