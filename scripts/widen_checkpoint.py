"""Widen a trained network's hidden layer while keeping what it computes (Net2WiderNet).

Training a bigger net from scratch costs millions of games again; widening keeps the
trained units and adds copies of some of them. A copied unit and its original share its
outgoing weights, so the widened net computes what the original did. Each copy's incoming
weights get a little noise (1% of its unit's spread) so TD updates can pull the two apart.
New units with zero outgoing weights would keep the outputs exactly too, but they were
measured to stay idle: after 180,000 games their outgoing weights averaged 0.006 against
the trained units' 0.97. Resume training from the result with a config whose `hidden`
matches:

    python -m scripts.widen_checkpoint models/default.pt --hidden 128 --out runs/wide/start.pt
    tdgammon train --resume runs/wide/start.pt --config configs/CONFIG.toml --out runs/wide
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from engine.errors import CheckpointError
from models.checkpoint import Checkpoint, load_checkpoint, save_checkpoint
from models.network import TDNet


def widen(net: TDNet, hidden: int, seed: int, noise: float = 0.01) -> TDNet:
    """A net with `hidden` units: `net`'s units, then copies of randomly chosen ones."""
    old = net.n_hidden
    if hidden <= old:
        raise ValueError(f"--hidden {hidden} must exceed the network's {old} units")
    gen = torch.Generator().manual_seed(seed)
    sources = torch.cat([torch.randperm(old, generator=gen) for _ in range(-(-(hidden - old) // old))])
    sources = torch.cat([torch.arange(old), sources[: hidden - old]])
    shares = torch.bincount(sources, minlength=old).float()[sources]  # copies of each unit's source
    w1, b1 = net.hidden.weight.detach(), net.hidden.bias.detach()
    wide = TDNet(hidden, net.features)
    with torch.no_grad():
        spread = w1.std(dim=1, keepdim=True)[sources[old:]]
        wide.hidden.weight.copy_(w1[sources])
        wide.hidden.weight[old:] += noise * spread * torch.randn(hidden - old, w1.shape[1], generator=gen)
        wide.hidden.bias.copy_(b1[sources])
        wide.out.weight.copy_(net.out.weight[:, sources] / shares)
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
