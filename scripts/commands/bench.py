"""`tdgammon bench NAME`: the speed figure of one hot path, last line `NAME: <figure>`.

Each benchmark lives in `scripts/bench/<name>.py` and defines `add_arguments(parser)`
and `run(args)`.
"""

from __future__ import annotations

import argparse
import importlib

# Each module imports what it times inside run(): the parser imports them all.
BENCHES = ("movegen", "selfplay", "eval", "search", "teacher", "actors", "rollout", "cold", "cube")


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("bench", help="measure a hot path (movegen, eval, search, teacher, selfplay, actors, "
                                          "rollout, cold) or the cube error (cube)")
    benches = parser.add_subparsers(dest="bench", required=True, metavar="NAME")
    for name in BENCHES:
        module = importlib.import_module(f"scripts.bench.{name}")
        bench_parser = benches.add_parser(name, help=module.__doc__.splitlines()[0])
        module.add_arguments(bench_parser)
        bench_parser.set_defaults(func=module.run)
