"""What the benchmarks share: the gnubg oracle's positions and the network they time."""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from models.paths import DEFAULT_MODEL

GNUBG = "/usr/games/gnubg"  # engine.gnubg.process.GNUBG, without loading the engine
ORACLE = Path(__file__).resolve().parents[2] / "tests" / "data" / "gnubg-legal-moves.jsonl"


def oracle_records() -> list[dict[str, Any]]:
    """The 4,956 (position, roll) records: position, dice and the legal afterstates, as Position IDs."""
    return [json.loads(line) for line in ORACLE.read_text().splitlines() if line.strip()]


def add_model_argument(parser: argparse.ArgumentParser) -> None:
    """--model PATH: the checkpoint a network benchmark times."""
    parser.add_argument("--model", metavar="PATH", default=None,
                        help="checkpoint to time (default: models/default.pt if present, else a random net)")


def bench_evaluator(model: str | None, hidden: int = 80, play_time: bool = False) -> tuple[Any, str]:
    """A one-thread NetworkEvaluator and its label: `model`, else models/default.pt, else a random
    TDNet(hidden) (speed does not depend on the weights). With `play_time`, a model file is
    loaded as commands play it (models.loader.load_network: race net and screen)."""
    import torch  # heavy: only when a benchmark runs

    from models.checkpoint import load_play_net
    from models.inference import NetworkEvaluator
    from models.network import TDNet

    torch.set_num_threads(1)
    if model or DEFAULT_MODEL.exists():
        path = Path(model) if model else DEFAULT_MODEL
        if play_time:
            from models.loader import load_network

            return load_network(path), str(path)
        return NetworkEvaluator(load_play_net(path)), str(path)
    torch.manual_seed(0)
    return NetworkEvaluator(TDNet(hidden)), f"random TDNet({hidden})"


def gnubg_binary() -> str | None:
    """gnubg's path, or None when it is not installed."""
    return shutil.which(GNUBG) or shutil.which("gnubg")


def gnubg_calibrate(evaluations: int = 1000) -> float:
    """gnubg's own static evaluations per second on one thread (its `calibrate` command)."""
    out = subprocess.run([gnubg_binary(), "-t", "-q"], input=f"set threads 1\ncalibrate {evaluations}\n",
                         capture_output=True, text=True, timeout=600).stdout
    match = re.search(r"Calibration result: ([\d.]+) static evaluations/second", out)
    if match is None:
        raise RuntimeError("gnubg's calibrate printed no result")
    return float(match.group(1))
