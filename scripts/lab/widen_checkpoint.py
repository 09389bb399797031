"""Widen a trained network's hidden layer while keeping what it computes (Net2WiderNet).

Training a bigger net from scratch costs millions of games again; widening keeps the
trained units and adds copies of some of them. A unit and its copies split its outgoing
weights between them, so the widened net computes exactly what the original did. The
split is uneven and differs for each output, so TD's very first updates already move a
unit and its copy in different directions. Two cheaper ways were measured to stall:
new units with zero outgoing weights stayed idle (after 180,000 games their outgoing
weights averaged 0.006 against the trained units' 0.97), and even halves with 1% noise on
the copies' incoming weights stayed twins (their distance grew from 0.0111 to 0.0111 in
110,000 games). Resume training from the result with a config whose `hidden` matches:

    python -m scripts.lab.widen_checkpoint models/default.pt --hidden 128 --out runs/wide/start.pt
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


def widen(net: TDNet, hidden: int, seed: int) -> TDNet:
    """A net with `hidden` units: `net`'s units, then copies of randomly chosen ones."""
    old = net.n_hidden
    if hidden <= old:
        raise ValueError(f"--hidden {hidden} must exceed the network's {old} units")
    gen = torch.Generator().manual_seed(seed)
    copies = torch.cat([torch.randperm(old, generator=gen) for _ in range(-(-(hidden - old) // old))])
    sources = torch.cat([torch.arange(old), copies[: hidden - old]])
    # Each unit's outgoing weight to each output is split among the unit and its copies in
    # random shares (0.2 to 1 before normalising), so the shares sum to 1 per source.
    shares = 0.2 + 0.8 * torch.rand(net.out.weight.shape[0], hidden, generator=gen)
    totals = torch.zeros(shares.shape[0], old).index_add_(1, sources, shares)
    shares = shares / totals[:, sources]
    wide = TDNet(hidden, net.features)
    with torch.no_grad():
        wide.hidden.weight.copy_(net.hidden.weight[sources])
        wide.hidden.bias.copy_(net.hidden.bias[sources])
        wide.out.weight.copy_(net.out.weight[:, sources] * shares)
        wide.out.bias.copy_(net.out.bias)
    return wide


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", type=Path, help="the trained checkpoint to widen")
    parser.add_argument("--hidden", type=int, required=True, help="hidden units of the widened net")
    parser.add_argument("--out", type=Path, required=True, help="where to write the widened checkpoint")
    parser.add_argument("--seed", type=int, default=1, help="seeds which units are copied and their shares")
    args = parser.parse_args(argv)
    try:
        ckpt = load_checkpoint(args.checkpoint)
        wide = widen(ckpt.net, args.hidden, args.seed)
    except (CheckpointError, ValueError) as err:
        print(f"widen_checkpoint: {err}", file=sys.stderr)
        return 2
    config = {**ckpt.config, "hidden": args.hidden}
    # Where the extra units came from: later distillation fits and training runs keep it.
    state = ckpt.state_with("widened", {"from": ckpt.net.n_hidden, "to": args.hidden, "seed": args.seed})
    save_checkpoint(args.out, Checkpoint(wide, config, ckpt.games_trained, state))
    print(f"{args.checkpoint} ({ckpt.net.n_hidden} hidden, {ckpt.games_trained:,} games) "
          f"-> {args.out} ({args.hidden} hidden)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
