"""Pit every snapshot of a run against gnubg 0-ply, for the learning-curve figure.

Appends one JSON line per snapshot not yet in OUT (default RUN/gnubg_curve.jsonl):
{"games_trained", "games", "win_rate", "ci95_win", "ppg", "ci95"}. Usage:

    python -m scripts.lab.gnubg_curve runs/default [--games 400] [--ply 1]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="run directory holding checkpoint-NNNNNNNNN.pt snapshots")
    parser.add_argument("--games", type=int, default=400, help="games per snapshot (even)")
    parser.add_argument("--ply", type=int, default=1)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    out = args.out or args.run / "gnubg_curve.jsonl"
    snapshots = sorted(args.run.glob("checkpoint-*.pt"))
    if not snapshots:
        print(f"no checkpoint-*.pt snapshots in {args.run}", file=sys.stderr)
        return 2
    done = set()
    if out.exists():  # snapshots already measured are kept, so a growing run is measured once
        done = {json.loads(line)["games_trained"] for line in out.read_text().splitlines() if line.strip()}
    with open(out, "a") as fh:
        for path in snapshots:
            games_trained = int(re.search(r"checkpoint-(\d+)\.pt", path.name).group(1))
            if games_trained in done:
                continue
            proc = subprocess.run(
                [sys.executable, "-m", "scripts.cli", "pit", f"{path}@{args.ply}", "gnubg",
                 "--games", str(args.games), "--json", "--no-progress"],
                capture_output=True, text=True, check=True)
            result = json.loads(proc.stdout)
            p = result["win_rate"]
            record = {"games_trained": games_trained, "games": result["games"], "win_rate": p,
                      "ci95_win": 1.96 * math.sqrt(p * (1 - p) / result["games"]),
                      "ppg": result["ppg"], "ci95": result["ci95"]}
            fh.write(json.dumps(record) + "\n")
            fh.flush()
            print(json.dumps(record))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
