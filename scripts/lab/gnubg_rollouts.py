"""gnubg's own rollouts of a fixed set of positions: the yardstick for `tdgammon rollout`.

    python -m scripts.lab.gnubg_rollouts [--trials 1296] [--out tests/data/gnubg-rollouts.json]

gnubg is a yardstick only: what it computes here is compared against, never trained on
nor fitted to. Settings (recorded in the file): cubeless, gnubg 0-ply checker play, its
lookahead variance reduction, quasi-random dice, one thread, full games (gnubg's default
truncation at its one-sided bear-off database, which is exact), seed 1.

gnubg prints a rollout's result only to a terminal, so it runs under `script` (a pty)
and the "Current Position" lines are parsed. `gnubg_rollout` is shared with
`tdgammon bench rollout --vs-gnubg`.

Positions: the opening position, then a seeded pick from the legal-move oracle's
positions (tests/data/gnubg-legal-moves.jsonl): contact positions and races, so the set
is varied and a full 1,296-trial rollout of all of them takes ~10-15 minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

GNUBG = "/usr/games/gnubg"
ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "tests" / "data" / "gnubg-rollouts.json"
ORACLE = ROOT / "tests" / "data" / "gnubg-legal-moves.jsonl"
OPENING = "4HPwATDgc/ABMA"
MONEY_ON_ROLL = "cIkAAAAAAAAA"  # Match ID: money, centred cube, player 1 on roll, dice not rolled

_NUM = r"([+-]?\d+\.\d+)"
_RESULT = re.compile(rf"^\s*{_NUM}\s+{_NUM}\s+{_NUM}\s+-\s+{_NUM}\s+{_NUM}\s+{_NUM}\s+CL\s+{_NUM}")
_SE = re.compile(rf"^\s*\[\s*{_NUM}\s+{_NUM}\s+{_NUM}\s+-\s+{_NUM}\s+{_NUM}\s+{_NUM}\s+CL\s+{_NUM}\]")
_TIME = re.compile(r"Time elapsed\s+(?:(\d+)h\s*)?(?:(\d+)m\s*)?(\d+)s")


def settings(trials: int, seed: int, ply: int) -> dict:
    return {"trials": trials, "seed": seed, "gnubg_ply": ply, "cubeful": False, "variance_reduction": True,
            "quasi_random": True, "threads": 1, "truncation": "none (one-sided bear-off database)"}


def gnubg_rollout(position_ids: list[str], trials: int = 1296, seed: int = 1, ply: int = 0,
                  timeout: float = 3600.0) -> list[dict]:
    """gnubg's cubeless rollout of each position (side on roll, before its roll).

    Returns per position {"position", "probs" (gnubg's order, mover's view), "equity",
    "se": {"probs", "equity"}, "seconds"}. Raises RuntimeError when gnubg is missing or its
    output cannot be parsed.
    """
    if not os.path.exists(GNUBG) or shutil.which("script") is None:
        raise RuntimeError(f"needs {GNUBG} and util-linux `script`")
    cmds = ["set player 0 human", "set player 1 human", "new session", "set threads 1",
            f"set rollout trials {trials}", "set rollout cubeful off", "set rollout varredn on",
            "set rollout quasirandom on", f"set rollout seed {seed}",
            f"set rollout chequerplay plies {ply}", f"set rollout cubedecision plies {ply}"]
    for pid in position_ids:
        cmds += [f"set gnubgid {pid}:{MONEY_ON_ROLL}", "rollout"]
    cmds.append("quit")
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as fh:
        fh.write("\n".join(cmds) + "\n")
        path = fh.name
    try:
        proc = subprocess.run(["script", "-qc", f"{GNUBG} -t -q < {path}", "/dev/null"],
                              capture_output=True, text=True, timeout=timeout)
    finally:
        os.unlink(path)
    lines = proc.stdout.replace("\r", "\n").splitlines()
    # Progress reprints the same lines; the pair after each "Rollout done" is final.
    finals = _finals(lines)
    if len(finals) != len(position_ids):
        raise RuntimeError(f"could not parse gnubg's rollout output ({len(finals)} of {len(position_ids)} results)")
    out = []
    for pid, (res, se, seconds) in zip(position_ids, finals):
        out.append({"position": pid, "probs": [res[0], res[1], res[2], res[4], res[5]], "equity": res[6],
                    "se": {"probs": [se[0], se[1], se[2], se[4], se[5]], "equity": se[6]},
                    "seconds": seconds})
    return out


def _finals(lines: list[str]) -> list[tuple[list[float], list[float], float]]:
    """(result, se, seconds) printed after each "Rollout done" line (gnubg prints whole seconds)."""
    finals, armed, pending, se = [], False, None, None
    for line in lines:
        if "Rollout done" in line:
            armed, pending, se = True, None, None
        elif armed and (m := _RESULT.match(line)):
            pending = [float(x) for x in m.groups()]
        elif armed and pending is not None and (m := _SE.match(line)):
            se = [float(x) for x in m.groups()]
        elif armed and se is not None and (m := _TIME.search(line)):
            h, mins, secs = (int(g) if g else 0 for g in m.groups())
            finals.append((pending, se, float(3600 * h + 60 * mins + secs)))
            armed, pending, se = False, None, None
        elif armed and se is not None and "Time elapsed" in line:
            finals.append((pending, se, float("nan")))  # an unknown clock format: keep the result
            armed, pending, se = False, None, None
    return finals


def pick_positions(n_contact: int, n_race: int, seed: int = 7) -> list[str]:
    """The opening, then a seeded pick of distinct contact and race positions from the oracle."""
    from engine.position import decode_position_id, game_result, is_race

    ids = list(dict.fromkeys(json.loads(line)["position"] for line in ORACLE.read_text().splitlines()
                             if line.strip()))
    rng = np.random.default_rng(seed)
    rng.shuffle(ids)
    contact, race = [], []
    for pid in ids:
        board = decode_position_id(pid)
        if pid == OPENING or game_result(board) or board.sum() < 20:
            continue
        (race if is_race(board) else contact).append(pid)
    return [OPENING] + contact[:n_contact] + race[:n_race]


def compare(path: Path, model: str | None, trials: int, out: Path | None) -> None:
    """Our rollout (1-ply, VR, full games) and our 1-ply / 2-ply evaluations against the file's
    gnubg rollouts: a markdown row per position as it finishes (also appended to `out`), then the
    summary: mean |equity difference| and the share with P(win) within 0.025."""
    from engine.evaluator import equity
    from engine.position import decode_position_id
    from engine.rollout.core import RolloutSettings
    from engine.rollout.runner import LocalBackend, rollout_position
    from engine.search import evaluate_position
    from scripts.commands.rollout import EvaluatorLoader

    loader = EvaluatorLoader(model, threads=1)
    ev = loader()
    refs = json.loads(path.read_text())["positions"]
    head = ("| position | gnubg equity (se) | rollout equity (se) | diff | gnubg P(win) | rollout P(win) | "
            "1-ply diff | 2-ply diff | s |\n|---|---|---|---|---|---|---|---|---|")
    print(head, flush=True)
    rows = []
    for ref in refs:
        board = decode_position_id(ref["position"])
        res = rollout_position(board, LocalBackend(loader, evaluator=ev), RolloutSettings(trials=trials))
        s = res.summary
        e1 = float(equity(evaluate_position(board, ev, 1)))
        e2 = float(equity(evaluate_position(board, ev, 2)))
        p2 = evaluate_position(board, ev, 2)[0]
        p1 = evaluate_position(board, ev, 1)[0]
        row = {"position": ref["position"], "gnubg": ref["equity"], "rollout": s.equity, "se": s.se_equity,
               "pwin_gnubg": ref["probs"][0], "pwin": float(s.probs[0]), "eval1": e1, "eval2": e2,
               "pwin1": float(p1), "pwin2": float(p2), "seconds": res.seconds}
        rows.append(row)
        line = (f"| {ref['position']} | {ref['equity']:+.3f} ({ref['se']['equity']:.3f}) | {s.equity:+.3f} "
                f"({s.se_equity:.3f}) | {s.equity - ref['equity']:+.3f} | {ref['probs'][0]:.3f} | {s.probs[0]:.3f} | "
                f"{e1 - ref['equity']:+.3f} | {e2 - ref['equity']:+.3f} | {res.seconds:.0f} |")
        print(line, flush=True)
        if out is not None:
            with open(out, "a") as fh:
                fh.write(json.dumps(row) + "\n")
    for key, pkey, name in (("rollout", "pwin", f"rollout {trials}"), ("eval1", "pwin1", "1-ply eval"),
                            ("eval2", "pwin2", "2-ply eval")):
        d = np.array([abs(r[key] - r["gnubg"]) for r in rows])
        w = np.array([abs(r[pkey] - r["pwin_gnubg"]) <= 0.025 for r in rows])
        print(f"{name}: mean |equity diff| {d.mean():.4f}, max {d.max():.4f}, "
              f"P(win) within 0.025 on {w.sum()}/{len(w)} ({100 * w.mean():.0f}%)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1296)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--contact", type=int, default=13)
    parser.add_argument("--race", type=int, default=7)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--compare", action="store_true",
                        help="compare our rollouts and evaluations with the file instead of running gnubg")
    parser.add_argument("--model", default=None, help="with --compare: checkpoint or evaluator spec")
    parser.add_argument("--log", type=Path, default=None, help="with --compare: append a JSON row per position")
    args = parser.parse_args(argv)
    if args.compare:
        compare(args.out, args.model, args.trials, args.log)
        return
    ids = pick_positions(args.contact, args.race)
    start = time.time()
    results = gnubg_rollout(ids, args.trials, args.seed)
    doc = {"generator": "python -m scripts.lab.gnubg_rollouts", "gnubg": settings(args.trials, args.seed, 0),
           "note": "gnubg is a yardstick only: compared against, never trained on or fitted to",
           "seconds": round(time.time() - start, 1), "positions": results}
    tmp = args.out.with_name(args.out.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, args.out)
    print(f"{len(results)} positions, {doc['seconds']} s -> {args.out}")


if __name__ == "__main__":
    main()
