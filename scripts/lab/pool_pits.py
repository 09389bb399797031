"""Pool pit results run in chunks: one ppg with its 95% interval over all the chunks.

A long pit (thousands of cubeful games against gnubg) is run as chunks of
`tdgammon pit ... --games N --seed S --json`, one JSON file a chunk, so that it resumes
and reports whatever is done. Chunks are independent (distinct seeds): the pooled ppg is
the games-weighted mean of the chunks' ppg, and its standard error combines the chunks'
own (each chunk's interval is 1.96 standard errors, over duplicate pairs when duplicate).
Earlier results known only by their summary enter the same way with --prior.

Usage: python -m scripts.lab.pool_pits FILE.json... [--prior GAMES PPG CI95] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path


def pool(chunks: list[tuple[int, float, float]]) -> dict:
    """(games, ppg, ci95) per chunk -> {"games", "ppg", "ci95"} pooled."""
    total = sum(n for n, _, _ in chunks)
    if total == 0:
        return {"games": 0, "ppg": 0.0, "ci95": math.inf}
    ppg = sum(n * p for n, p, _ in chunks) / total
    var = sum((n * c / 1.96) ** 2 for n, _, c in chunks) / total ** 2
    return {"games": total, "ppg": ppg, "ci95": 1.96 * math.sqrt(var)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--prior", nargs=3, type=float, action="append", default=[],
                        metavar=("GAMES", "PPG", "CI95"), help="an earlier result known by its summary")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    chunks = [(int(n), p, c) for n, p, c in args.prior]
    for path in args.files:
        try:
            doc = json.loads(path.read_text())
            chunks.append((int(doc["games"]), float(doc["ppg"]), float(doc["ci95"])))
        except (OSError, ValueError, KeyError) as err:
            print(f"error: {path}: not a pit --json result ({err})", file=sys.stderr)
            return 2
    result = {**pool(chunks), "chunks": len(chunks)}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{result['games']} games in {result['chunks']} chunks: ppg {result['ppg']:+.3f} "
              f"+- {result['ci95']:.3f} (95%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
