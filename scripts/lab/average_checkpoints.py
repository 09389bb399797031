"""Average the weights of several snapshots of one training run (stochastic weight averaging).

At a fixed learning rate, TD's weights wander around a level instead of settling on it:
each snapshot carries the noise of its last few thousand games. Snapshots of one run lie
in the same basin, so their mean keeps what they agree on and cancels the noise, the
way a lower learning rate would but without running more games. The result keeps the
newest snapshot's config, games trained and trainer state, so training can resume from
it:

    python -m scripts.lab.average_checkpoints runs/x/checkpoint-0024*.pt runs/x/checkpoint-0025*.pt --out runs/x/swa.pt
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from engine.errors import CheckpointError
from models.checkpoint import Checkpoint, load_checkpoint, save_checkpoint
from models.network import TDNet


def average(checkpoints: list[Checkpoint]) -> Checkpoint:
    """The mean of the checkpoints' weights, with the newest one's config and state."""
    if not checkpoints:
        raise CheckpointError("no checkpoints to average")
    newest = max(checkpoints, key=lambda c: c.games_trained)
    shape = (newest.net.n_hidden, newest.net.features)
    for ckpt in checkpoints:
        if (ckpt.net.n_hidden, ckpt.net.features) != shape:
            raise CheckpointError(
                f"cannot average a net with {ckpt.net.n_hidden} hidden units and features="
                f"{ckpt.net.features} with one with {shape[0]} and features={shape[1]}")
    states = [c.net.state_dict() for c in checkpoints]
    mean = {name: torch.stack([s[name] for s in states]).mean(dim=0) for name in states[0]}
    net = TDNet(*shape)
    net.load_state_dict(mean)
    return Checkpoint(net, newest.config, newest.games_trained, newest.trainer_state)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", type=Path, nargs="+", help="snapshots of one run")
    parser.add_argument("--out", type=Path, required=True, help="where to write the average")
    args = parser.parse_args(argv)
    try:
        result = average([load_checkpoint(path) for path in args.checkpoints])
    except CheckpointError as err:
        print(f"average_checkpoints: {err}", file=sys.stderr)
        return 2
    save_checkpoint(args.out, result)
    print(f"averaged {len(args.checkpoints)} checkpoints -> {args.out} "
          f"({result.games_trained:,} games)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
