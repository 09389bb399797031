"""Fit a model's screen (training.screen): a small net that ranks the model's plays nearly as
the model does, written where models.loader pairs it with the model (NAME.screen.pt beside
NAME.pt). The fit starts from a small 198-input net (default: the shipped 198-80 Tesauro
net; `--init fresh` a random 80-unit one) and prints, on positions of other games, how often
the model's best play is among the screen's K best and the equity a K-play screen loses:

    python -m scripts.lab.fit_screen --model models/default.pt --init models/tesauro-198-80.pt \\
        --games 3000 --positions 30000 --epochs 3 --seed 1 --out models/default.screen.pt
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from engine.errors import CheckpointError
from models.checkpoint import Checkpoint, load_checkpoint, save_checkpoint
from models.paths import DEFAULT_MODEL


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--init", default=str(DEFAULT_MODEL.parent / "tesauro-198-80.pt"),
                        help="the 198-input checkpoint the fit starts from, or `fresh` (random, 80 units)")
    parser.add_argument("--games", type=int, default=3000)
    parser.add_argument("--positions", type=int, default=30_000, help="positions fitted on")
    parser.add_argument("--held-out", type=int, default=2000, help="positions of other games that measure it")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if min(args.games, args.positions, args.held_out, args.epochs) <= 0:
        print("error: --games, --positions, --held-out and --epochs must be positive", file=sys.stderr)
        return 2
    import torch  # heavy: after the arguments are checked

    from models.network import TDNet
    from training.screen import fit_screen

    torch.manual_seed(args.seed)
    try:
        start = load_checkpoint(args.init) if args.init != "fresh" else Checkpoint(TDNet(80))
        t0 = time.perf_counter()
        report = fit_screen(start.net, args.model, args.games, args.positions, args.held_out, args.epochs,
                            args.lr, args.seed)
    except (CheckpointError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{report.plays:,} plays fitted, {report.held_out:,} held out; held-out mse "
          f"{report.val_mse[0]:.3g} -> {report.val_mse[1]:.3g} ({time.perf_counter() - t0:.0f} s)")
    for keep, share in report.kept_share.items():
        print(f"keep {keep}: model's best kept on {share:.1%} of rolls, "
              f"{report.loss_per_roll[keep] * 1000:.2f} mEMG lost per roll")
    start.trainer_state = start.state_with("screen", {"model": args.model.name, "games": args.games,
                                                      "positions": args.positions, "epochs": args.epochs,
                                                      "lr": args.lr, "seed": args.seed})
    save_checkpoint(args.out, start)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
