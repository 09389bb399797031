"""Draw the learning curve of a run: ppg vs pubeval and win rate vs gnubg 0-ply against games trained.

Reads the trainer's `metrics.jsonl` (pubeval benchmarks logged during training) and,
optionally, a JSON lines file of pit results of the run's snapshots against gnubg
(`{"games_trained": N, "win_rate": w, "ci95_win": c, ...}` per line, as written by
`scripts/lab/gnubg_curve.py`), and other runs' metrics to compare against (drawn as the
running mean of 5 benchmarks, 100,000 games). Usage:

    python -m scripts.lab.plot_learning_curve runs/default/metrics.jsonl \
        [--gnubg runs/default/gnubg_curve.jsonl] [--compare LABEL=OTHER/metrics.jsonl ...] \
        --out models/learning_curve.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("metrics", type=Path, help="the run's metrics.jsonl")
    parser.add_argument("--gnubg", type=Path, help="pit results of snapshots vs gnubg 0-ply (JSON lines)")
    parser.add_argument("--compare", action="append", default=[], metavar="LABEL=PATH",
                        help="another run's metrics.jsonl to draw as a running mean (repeatable)")
    parser.add_argument("--label", default="ppg vs pubeval (1-ply, 95% CI)", help="legend of the main run")
    parser.add_argument("--out", type=Path, default=Path("learning_curve.png"))
    args = parser.parse_args(argv)
    compare = []
    for item in args.compare:
        label, sep, path = item.partition("=")
        if not sep or not Path(path).is_file():
            parser.error(f"--compare wants LABEL=PATH to an existing file, got {item!r}")
        compare.append((label, Path(path)))

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in read_jsonl(args.metrics) if "ppg_vs_pubeval" in r]
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=110)
    games = [r["games"] / 1000 for r in rows]
    ppg = [r["ppg_vs_pubeval"] for r in rows]
    ci = [r.get("ci95_vs_pubeval", 0.0) for r in rows]
    ax.errorbar(games, ppg, yerr=ci, color="tab:blue", marker=".", capsize=2, label=args.label)
    for (label, path), color in zip(compare, ["tab:gray", "tab:green", "tab:purple", "tab:orange"]):
        other = [r for r in read_jsonl(path) if "ppg_vs_pubeval" in r]
        ppgs = [r["ppg_vs_pubeval"] for r in other]
        mean = [float(np.mean(ppgs[max(0, i - 4):i + 1])) for i in range(len(ppgs))]
        ax.plot([r["games"] / 1000 for r in other], mean, color=color, linewidth=1.2,
                label=f"{label} (running mean of 5)")
    ax.axhline(0.63, color="tab:blue", linestyle=":", linewidth=1, label="gnubg 0-ply vs pubeval (+0.63)")
    ax.set_xlabel("self-play games trained (thousands)")
    ax.set_ylabel("points per game vs pubeval", color="tab:blue")
    ax.grid(alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    if args.gnubg and args.gnubg.is_file():
        pts = sorted(read_jsonl(args.gnubg), key=lambda r: r["games_trained"])
        ax2 = ax.twinx()
        ax2.errorbar([p["games_trained"] / 1000 for p in pts], [100 * p["win_rate"] for p in pts],
                     yerr=[100 * p.get("ci95_win", 0.0) for p in pts], color="tab:red",
                     marker="o", capsize=2, label="win % vs gnubg 0-ply (1-ply)")
        ax2.set_ylabel("win % vs gnubg 0-ply", color="tab:red")
        h2, l2 = ax2.get_legend_handles_labels()
        handles, labels = handles + h2, labels + l2
    ax.legend(handles, labels, loc="lower right", fontsize=8)
    ax.set_title("tdgammon learning curve (TD(lambda) self-play only)")
    fig.tight_layout()
    fig.savefig(args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
