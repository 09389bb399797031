"""Train the one-sided race net (training/race_dists.py) and save it as the .npz the engine plays.

Usage: python -m scripts.lab.train_race_dists [--out models/race.npz] [--work DIR] [--positions N]
       [--rounds R] [--layers L] [--hidden H] [--epochs E] [--seed S] [--start NPZ]
       [--stragglers SHARE] [--cdf-weight W]
Self-play only: the positions are our own walks, the targets our own recursion down to
the bear-off databases. --work keeps the positions and each round's net, so a run resumes
from its last round.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="race.npz", help="where the net goes (after every round)")
    parser.add_argument("--work", default=None, help="folder for the positions and each round's net (resumable)")
    parser.add_argument("--positions", type=int, default=30000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--layers", type=int, default=10)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=0.003)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--start", default=None, help="a net to warm-start from")
    parser.add_argument("--stragglers", type=float, default=0.3,
                        help="share of the walks that start from a few stragglers, the rest home")
    parser.add_argument("--cdf-weight", type=float, default=10.0,
                        help="weight of the cumulative distributions' squared error in the loss")
    args = parser.parse_args(argv)
    for name in ("positions", "rounds", "layers", "hidden", "epochs", "batch"):
        if getattr(args, name) < 1:
            print(f"train_race_dists: --{name} must be at least 1", file=sys.stderr)
            return 2
    if not 0 <= args.stragglers <= 0.75 or not args.cdf_weight >= 0:
        print("train_race_dists: --stragglers must be in [0, 0.75] and --cdf-weight at least 0", file=sys.stderr)
        return 2
    import numpy as np
    import torch

    from engine.errors import TdgammonError
    from engine.race_dists import RaceDistNet
    from training.race_dists import positions, train

    torch.set_num_threads(1)
    work = Path(args.work) if args.work else None
    try:
        start = RaceDistNet.load(Path(args.start)) if args.start else None
        done = 0
        if work is not None:
            work.mkdir(parents=True, exist_ok=True)
            rounds = sorted(work.glob("round-*.npz"))
            if rounds and start is None:
                start, done = RaceDistNet.load(rounds[-1]), int(rounds[-1].stem.split("-")[1]) + 1
        rows_file = work / f"positions-{args.positions}-{args.seed}-{args.stragglers:g}.npy" if work else None
        if rows_file is not None and rows_file.exists():
            rows = np.load(rows_file)
        else:
            rows = positions(args.positions, args.seed, args.stragglers)
            if rows_file is not None:
                np.save(rows_file, rows)
        print(f"{len(rows)} one-sided positions; rounds {done}..{args.rounds - 1}", flush=True)

        def save(net: RaceDistNet, round_: int) -> None:
            net.save(Path(args.out))
            if work is not None:
                net.save(work / f"round-{done + round_:03d}.npz")

        train(rows, args.rounds - done, args.layers, args.hidden, args.epochs, args.lr, args.batch,
              args.seed + done, log=lambda line: print(line, flush=True), save=save, start=start,
              cdf_weight=args.cdf_weight)
    except TdgammonError as err:
        print(f"train_race_dists: {err}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
