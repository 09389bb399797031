"""Widen a trained network's hidden layer without changing what it computes.

Training a bigger net from scratch costs millions of games again; widening keeps the
trained units and adds new ones whose outgoing weights are zero, so the widened net's
outputs equal the original's exactly. Their incoming weights are random (the same scale
as a fresh net's), so TD updates give each new unit its own gradient and they learn
different things. Resume training from the result with a config whose `hidden` matches:

    python -m scripts.widen_checkpoint models/default.pt --hidden 128 --out runs/wide/start.pt
    tdgammon train --resume runs/wide/start.pt --config configs/CONFIG.toml --out runs/wide
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

from engine.errors import CheckpointError
from models.checkpoint import Checkpoint, load_checkpoint, save_checkpoint
from models.network import TDNet


def widen(net: TDNet, hidden: int, seed: int) -> TDNet:
    """A net with `hidden` units whose first units are `net`'s and whose outputs equal its."""
    if hidden <= net.n_hidden:
        raise ValueError(f"--hidden {hidden} must exceed the network's {net.n_hidden} units")
    wide = TDNet(hidden, net.features)
    gen = torch.Generator().manual_seed(seed)
    old = net.n_hidden
    with torch.no_grad():
        bound = 1.0 / np.sqrt(net.hidden.in_features)
        wide.hidden.weight.copy_((torch.rand(wide.hidden.weight.shape, generator=gen) * 2 - 1) * bound)
        wide.hidden.bias.copy_((torch.rand(hidden, generator=gen) * 2 - 1) * bound)
        wide.hidden.weight[:old] = net.hidden.weight
        wide.hidden.bias[:old] = net.hidden.bias
        wide.out.weight.zero_()
        wide.out.weight[:, :old] = net.out.weight
        wide.out.bias.copy_(net.out.bias)
    return wide


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", type=Path, help="the trained checkpoint to widen")
    parser.add_argument("--hidden", type=int, required=True, help="hidden units of the widened net")
    parser.add_argument("--out", type=Path, required=True, help="where to write the widened checkpoint")
    parser.add_argument("--seed", type=int, default=1, help="seeds the new units' incoming weights")
    args = parser.parse_args(argv)
    try:
        ckpt = load_checkpoint(args.checkpoint)
        wide = widen(ckpt.net, args.hidden, args.seed)
    except (CheckpointError, ValueError) as err:
        print(f"widen_checkpoint: {err}", file=sys.stderr)
        return 2
    config = {**ckpt.config, "hidden": args.hidden}
    save_checkpoint(args.out, Checkpoint(wide, config, ckpt.games_trained, ckpt.trainer_state))
    print(f"{args.checkpoint} ({ckpt.net.n_hidden} hidden, {ckpt.games_trained:,} games) "
          f"-> {args.out} ({args.hidden} hidden)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
