"""Build an ensemble from trained nets, or take one net back out of it.

Nets trained apart by self-play make different mistakes, so the mean of their outputs
makes fewer (the model card measures it). An ensemble file holds each member whole
(weights, config, games trained, trainer state), so `extract` gives back a checkpoint
that `tdgammon train --resume` continues exactly where that member stopped:

    python -m scripts.lab.ensemble build A.pt B.pt C.pt --out models/default.pt
    python -m scripts.lab.ensemble extract models/default.pt 0 --out runs/member0.pt
    python -m scripts.lab.ensemble list models/default.pt
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from engine.errors import CheckpointError
from models.checkpoint import load_members, save_checkpoint, save_ensemble


def describe(path: Path) -> list[str]:
    """One line per member: index, hidden units, inputs, games trained."""
    return [f"{i}: {m.net.n_hidden} hidden, {m.net.hidden.in_features} inputs, "
            f"{m.games_trained:,} games" for i, m in enumerate(load_members(path))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="write the nets of the files given (in order) as one ensemble")
    build.add_argument("checkpoints", type=Path, nargs="+",
                       help="checkpoints or ensembles (their members join)")
    build.add_argument("--out", type=Path, required=True)
    extract = sub.add_parser("extract", help="write one member as a checkpoint training can resume")
    extract.add_argument("ensemble", type=Path)
    extract.add_argument("index", type=int, help="the member's place, from 0 (see `list`)")
    extract.add_argument("--out", type=Path, required=True)
    listing = sub.add_parser("list", help="print the members")
    listing.add_argument("ensemble", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            members = [m for path in args.checkpoints for m in load_members(path)]
            save_ensemble(args.out, members)
            print(f"{len(members)} nets -> {args.out}")
        elif args.command == "extract":
            members = load_members(args.ensemble)
            if not 0 <= args.index < len(members):
                raise CheckpointError(f"{args.ensemble} has members 0-{len(members) - 1}, not {args.index}")
            save_checkpoint(args.out, members[args.index])
            print(f"member {args.index} of {args.ensemble} -> {args.out}")
        else:
            print("\n".join(describe(args.ensemble)))
    except CheckpointError as err:
        print(f"ensemble: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
