"""Cold start: seconds from process start to answer of `hint`, `eval` and `moves`, side by side with gnubg -t answering a hint.

Each command runs --runs times as a fresh process of this checkout (`python -m
scripts.cli`, the shipped model, 1-ply); the figures are the median wall and CPU
seconds (user + system) a run. The CPU figure matters on a shared machine, where wall
time waits for a core; gnubg's `-t` process (start, `set board`, `hint`) is timed the
same way when it is installed. Kernel caches are warm: one untimed run of each first.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from scripts.bench.common import gnubg_binary
from scripts.commands.options import at_least

ROOT = Path(__file__).resolve().parents[2]
POSITION, DICE = "4HPwATDgc/ABMA", "31"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs", type=at_least(1), default=5, help="timed runs of each command (default 5)")


def time_process(argv: list[str], stdin: str | None = None) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of argv to its exit."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, input=stdin, text=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run(args: argparse.Namespace) -> None:
    ours = [sys.executable, "-m", "scripts.cli"]
    commands = {"hint": (ours + ["hint", POSITION, DICE], None),
                "eval": (ours + ["eval", POSITION], None),
                "moves": (ours + ["moves", POSITION, DICE], None)}
    gnubg = gnubg_binary()
    if gnubg is not None:
        script = f"new game\nset board {POSITION}\nset dice {DICE[0]} {DICE[1]}\nhint\n"
        commands["gnubg hint"] = ([gnubg, "-t", "-q"], script)
    else:
        print("gnubg is not installed: ours only")
    runs = args.runs
    median: dict[str, tuple[float, float]] = {}
    for name, (argv, stdin) in commands.items():
        time_process(argv, stdin)  # caches warm
        times = [time_process(argv, stdin) for _ in range(runs)]
        median[name] = (statistics.median(t[0] for t in times), statistics.median(t[1] for t in times))
        print(f"{name:<11} wall {median[name][0]:.3f} s  CPU {median[name][1]:.3f} s  "
              f"(median of {runs}; fastest wall {min(t[0] for t in times):.3f} s)")
    figures = ", ".join(f"{median[name][0]:.2f} s {name}" for name in commands)
    print(f"cold: {figures} (median wall)")
