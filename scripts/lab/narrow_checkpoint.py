"""Narrow a trained network's hidden layer to its most useful units: a start for compression.

A smaller student fitted to a large model's values (`distill positions --teacher-ply 1`)
learns faster from the large model's own best units than from a smaller net of its own:
a 512-unit member narrowed to 256 units fitted to half the held-out error that the
128-unit round-5 member widened to 256 reached on the same 537,253 positions and epochs.
A unit's use is how much it moves the outputs: the spread of its activation over sample
positions times the size of its outgoing weights. The units left out are replaced by their
mean activation, folded into the output biases, so the narrowed net starts near the original:

    python -m scripts.lab.narrow_checkpoint m0.pt positions.npz --hidden 256 --out m0-256.pt
    python -m scripts.lab.distill fit m0-256.pt positions.npz --epochs 5 --lr 1e-3 --lr-end 0 --out small.pt
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

from engine.encoder import encode
from engine.errors import CheckpointError
from models.checkpoint import Checkpoint, load_checkpoint, save_checkpoint
from models.network import TDNet

SAMPLE = 30_000  # positions that measure the units' spread


def narrow(net: TDNet, hidden: int, boards: np.ndarray) -> TDNet:
    """A net of `hidden` of `net`'s units, those that move its outputs most on `boards`; the
    others' mean activation on them is added to the output biases."""
    if not 0 < hidden < net.n_hidden:
        raise ValueError(f"--hidden {hidden} must be between 1 and the network's {net.n_hidden - 1} units")
    if len(boards) < 2:
        raise ValueError("narrowing needs two or more sample positions")
    with torch.no_grad():
        act = torch.sigmoid(net.hidden(torch.from_numpy(encode(boards, net.features))))
        use = act.std(dim=0) * net.out.weight.abs().sum(dim=0)
        keep = torch.argsort(use, descending=True, stable=True)[:hidden].sort().values
        dropped = torch.ones(net.n_hidden, dtype=torch.bool)
        dropped[keep] = False
        small = TDNet(hidden, net.features)
        small.hidden.weight.copy_(net.hidden.weight[keep])
        small.hidden.bias.copy_(net.hidden.bias[keep])
        small.out.weight.copy_(net.out.weight[:, keep])
        small.out.bias.copy_(net.out.bias + net.out.weight[:, dropped] @ act[:, dropped].mean(dim=0))
    return small


def sample_boards(path: Path, seed: int) -> np.ndarray:
    """Up to SAMPLE boards of a positions file (`distill positions`), drawn with `seed`."""
    try:
        with np.load(path) as data:
            boards = data["boards"]
    except FileNotFoundError:
        raise ValueError(f"{path} does not exist") from None
    except (OSError, KeyError, EOFError):
        raise ValueError(f"{path} is not a positions file (a .npz written by `distill positions`)") from None
    rows = np.random.default_rng(seed).permutation(len(boards))[:SAMPLE]
    return boards[np.sort(rows)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", type=Path, help="the trained one-net checkpoint to narrow")
    parser.add_argument("positions", type=Path, help="a positions file whose boards measure the units")
    parser.add_argument("--hidden", type=int, required=True, help="hidden units of the narrowed net")
    parser.add_argument("--out", type=Path, required=True, help="where to write the narrowed checkpoint")
    parser.add_argument("--seed", type=int, default=0, help="which sample positions measure the units")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    try:
        ckpt = load_checkpoint(args.checkpoint)
        small = narrow(ckpt.net, args.hidden, sample_boards(args.positions, args.seed))
    except (CheckpointError, ValueError) as err:
        print(f"narrow_checkpoint: {err}", file=sys.stderr)
        return 2
    state = ckpt.state_with("narrowed", {"from": ckpt.net.n_hidden, "to": args.hidden,
                                         "positions": args.positions.name, "seed": args.seed})
    save_checkpoint(args.out, Checkpoint(small, {**ckpt.config, "hidden": args.hidden}, ckpt.games_trained, state))
    print(f"{args.checkpoint} ({ckpt.net.n_hidden} hidden) -> {args.out} ({args.hidden} hidden)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
