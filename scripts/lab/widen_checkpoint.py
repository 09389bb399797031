"""Widen a trained checkpoint's hidden layer, keeping what it computes (training.widen).

Resume training from the result with a config whose `hidden` matches:

    python -m scripts.lab.widen_checkpoint models/default.pt --hidden 128 --out runs/wide/start.pt
    tdgammon train --resume runs/wide/start.pt --config configs/CONFIG.toml --out runs/wide
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from engine.errors import CheckpointError
from models.checkpoint import load_checkpoint, save_checkpoint
from training.widen import widen_checkpoint


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", type=Path, help="the trained checkpoint to widen")
    parser.add_argument("--hidden", type=int, required=True, help="hidden units of the widened net")
    parser.add_argument("--out", type=Path, required=True, help="where to write the widened checkpoint")
    parser.add_argument("--seed", type=int, default=1, help="seeds which units are copied and their shares")
    args = parser.parse_args(argv)
    try:
        ckpt = load_checkpoint(args.checkpoint)
        wide = widen_checkpoint(ckpt, args.hidden, args.seed)
    except (CheckpointError, ValueError) as err:
        print(f"widen_checkpoint: {err}", file=sys.stderr)
        return 2
    save_checkpoint(args.out, wide)
    print(f"{args.checkpoint} ({ckpt.net.n_hidden} hidden, {ckpt.games_trained:,} games) "
          f"-> {args.out} ({args.hidden} hidden)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
