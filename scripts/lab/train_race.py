"""Train the race network (training/race.py) and save it as a .npz the engine plays.

Usage: python -m scripts.lab.train_race [--config configs/race.toml] [--out race.npz]
       [--position-net models/tesauro-198-80.pt] [--teacher MODEL]
The position net's self-play gives the race positions; the teacher (default: the shipped
model) gives round 0's 1-ply targets; later rounds are the race net's own 2-ply search.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from engine.errors import TdgammonError
from models.paths import TESAURO_MODEL

DEFAULT_CONFIG = Path(__file__).resolve().parents[2] / "configs" / "race.toml"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(DEFAULT_CONFIG))
    parser.add_argument("--out", default="race.npz", help="where the race net goes (after every round)")
    parser.add_argument("--position-net", default=str(TESAURO_MODEL),
                        help="a single-net checkpoint whose self-play gives the positions")
    parser.add_argument("--teacher", default=None, help="the evaluator of round 0 (default: the shipped model)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    try:
        from models.checkpoint import load_play_net
        from models.loader import load_evaluator
        from training.race import load_race_config, train_race_net

        cfg = load_race_config(args.config)
        position_net = load_play_net(args.position_net)
        if hasattr(position_net, "members"):
            raise TdgammonError(f"--position-net must be a single net, {args.position_net} is an ensemble")
        teacher = load_evaluator(args.teacher)
        train_race_net(cfg, position_net, teacher, log=lambda line: print(line, flush=True), save=Path(args.out))
    except TdgammonError as err:
        print(f"train_race: {err}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
