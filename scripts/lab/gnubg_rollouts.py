"""gnubg's own rollouts of a fixed set of positions: the yardstick for `tdgammon rollout`.

    python -m scripts.lab.gnubg_rollouts [--trials 1296] [--progress P.jsonl [--reverse]] [--out FILE]
    python -m scripts.lab.gnubg_rollouts --ply 1 --positions ID [ID ...] --out FILE
    python -m scripts.lab.gnubg_rollouts --compare [--model M] [--log L.jsonl]

The first writes the yardstick (default tests/data/gnubg-rollouts.json), one gnubg process
a position, resumable through --progress (a second process with --reverse shares the work);
the second prints our rollout's and our 1-ply / 2-ply evaluations' distance to it. With
`--ply 1 --positions ...` gnubg plays the rollout at its 1-ply (our 2-ply) instead: a check
of the yardstick itself where our rollout and gnubg's 0-ply one disagree.

gnubg is a yardstick only: what it computes here is compared against, never trained on
nor fitted to. Settings (recorded in the file): cubeless, gnubg 0-ply checker play, its
lookahead variance reduction, quasi-random dice, one thread, full games (gnubg's default
truncation at its one-sided bear-off database, which is exact), seed 1.

gnubg prints a rollout's result only to a terminal, so it runs under `script` (a pty)
and the "Current Position" lines are parsed. `gnubg_rollout` is shared with
`tdgammon bench rollout --vs-gnubg`.

Positions: the opening position, then a seeded pick from the legal-move oracle's
positions (tests/data/gnubg-legal-moves.jsonl): contact positions and races, so the set
is varied; a full 1,296-trial rollout of all of them took gnubg 37 minutes on the loaded
shared machine (two processes), ~10-15 minutes of one idle core.
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


def our_values(position_ids: list[str], model: str | None, trials: int, log: Path | None) -> dict[str, dict]:
    """Our rollout (1-ply, VR, full games, seed 0) and our 1-ply / 2-ply evaluations of each
    position, keyed by ID. With `log`, each row is appended to that JSON-lines file as it is
    made, and rows already there for the same model and trials are not redone."""
    from engine.evaluator import equity
    from engine.position import decode_position_id
    from engine.rollout.core import RolloutSettings
    from engine.rollout.backends import LocalBackend
    from engine.rollout.runner import rollout_position
    from engine.search import evaluate_position
    from scripts.commands.rollout import EvaluatorLoader

    loader = EvaluatorLoader(model, threads=1)
    ev = loader()
    rows: dict[str, dict] = {}
    for pid in position_ids:
        rows.update(_rows(log, lambda r: r["model"] == ev.name and r["trials"] == trials))
        if pid in rows:
            continue
        board = decode_position_id(pid)
        res = rollout_position(board, LocalBackend(loader, evaluator=ev), RolloutSettings(trials=trials))
        s = res.summary
        p1, p2 = evaluate_position(board, ev, 1), evaluate_position(board, ev, 2)
        rows[pid] = {"position": pid, "model": ev.name, "trials": trials, "probs": [float(x) for x in s.probs],
                     "equity": s.equity, "se": s.se_equity, "seconds": round(res.seconds, 1),
                     "ply1": [float(x) for x in p1], "ply2": [float(x) for x in p2],
                     "equity1": float(equity(p1)), "equity2": float(equity(p2))}
        print(f"{pid}: rollout {s.equity:+.4f} (se {s.se_equity:.4f}) in {res.seconds:.0f} s", flush=True)
        _append(log, rows[pid])
    return rows


def accuracy_table(refs: list[dict], ours: dict[str, dict]) -> list[str]:
    """Markdown: per position, gnubg's rollout and how far our rollout and our 1-ply / 2-ply
    evaluations are from it; then per method the mean |equity difference| and the share of
    positions with P(win) within 0.025 of gnubg's."""
    lines = ["| position | gnubg equity (se) | our rollout (se) | rollout diff | 1-ply diff | 2-ply diff | "
             "gnubg P(win) | rollout P(win) |", "|---|---|---|---|---|---|---|---|"]
    methods = {"rollout": ("equity", "probs"), "1-ply": ("equity1", "ply1"), "2-ply": ("equity2", "ply2")}
    diffs = {m: [] for m in methods}
    wins = {m: [] for m in methods}
    for ref in refs:
        row = ours.get(ref["position"])
        if row is None:
            continue
        for m, (ekey, pkey) in methods.items():
            diffs[m].append(row[ekey] - ref["equity"])
            wins[m].append(abs(row[pkey][0] - ref["probs"][0]) <= 0.025)
        lines.append(f"| `{ref['position']}` | {ref['equity']:+.3f} ({ref['se']['equity']:.3f}) | "
                     f"{row['equity']:+.3f} ({row['se']:.3f}) | {diffs['rollout'][-1]:+.3f} | "
                     f"{diffs['1-ply'][-1]:+.3f} | {diffs['2-ply'][-1]:+.3f} | {ref['probs'][0]:.3f} | "
                     f"{row['probs'][0]:.3f} |")
    lines += ["", "| ours vs gnubg's rollout | positions | mean abs equity diff | max | P(win) within 0.025 |",
              "|---|---|---|---|---|"]
    for m in methods:
        if diffs[m]:
            d, w = np.abs(diffs[m]), np.array(wins[m])
            lines.append(f"| {m} | {len(d)} | {d.mean():.4f} | {d.max():.4f} | {w.sum()}/{len(w)} "
                         f"({100 * w.mean():.0f}%) |")
    return lines


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
    parser.add_argument("--log", type=Path, default=None,
                        help="with --compare: append a JSON row per position, and skip those already in it")
    parser.add_argument("--reverse", action="store_true",
                        help="take the positions last first (a second process beside the first, "
                             "same --progress or --log)")
    parser.add_argument("--ply", type=int, choices=(0, 1, 2), default=0,
                        help="gnubg's checker-play ply in its rollout (default 0, the yardstick's)")
    parser.add_argument("--positions", nargs="+", default=None, metavar="ID",
                        help="roll out these Position IDs instead of the yardstick's pick")
    parser.add_argument("--progress", type=Path, default=None, metavar="FILE",
                        help="append each gnubg result to this JSON-lines file and skip those already in it")
    args = parser.parse_args(argv)
    if args.compare:
        refs = json.loads(args.out.read_text())["positions"]
        ids = [r["position"] for r in refs]
        ours = our_values(ids[::-1] if args.reverse else ids, args.model, args.trials, args.log)
        print("\n".join(accuracy_table(refs, ours)))
        return
    ids = args.positions or pick_positions(args.contact, args.race)
    start = time.time()
    done = generate(ids[::-1] if args.reverse else ids, args.trials, args.seed, args.progress, args.ply)
    results = [done[pid] for pid in ids]
    doc = {"generator": "python -m scripts.lab.gnubg_rollouts", "gnubg": settings(args.trials, args.seed, args.ply),
           "note": "gnubg is a yardstick only: compared against, never trained on or fitted to",
           "seconds": round(sum(r["seconds"] for r in results), 1), "positions": results}
    tmp = args.out.with_name(args.out.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, args.out)
    print(f"{len(results)} positions, {doc['seconds']} s of gnubg ({time.time() - start:.0f} s now) -> {args.out}")


def generate(ids: list[str], trials: int, seed: int, progress: Path | None, ply: int = 0) -> dict[str, dict]:
    """gnubg's rollout of each position, one gnubg process each; with `progress`, every result is
    appended to that JSON-lines file as it finishes, and positions already there (also those
    another process running beside has finished) are not redone."""
    done: dict[str, dict] = {}
    for k, pid in enumerate(ids, start=1):
        done.update(_rows(progress, lambda r: r.get("trials") == trials and r.get("seed") == seed
                          and r.get("ply", 0) == ply))
        if pid in done:
            continue
        (rec,) = gnubg_rollout([pid], trials, seed, ply, timeout=6 * 3600.0)
        done[pid] = {**rec, "trials": trials, "seed": seed, "ply": ply}
        print(f"{k}/{len(ids)} {pid}: equity {rec['equity']:+.3f} se {rec['se']['equity']:.3f}, "
              f"{rec['seconds']:.0f} s", flush=True)
        _append(progress, done[pid])
    return {pid: {k: v for k, v in done[pid].items() if k not in ("trials", "seed", "ply")} for pid in ids}


def _rows(path: Path | None, keep) -> dict[str, dict]:
    """The rows of a JSON-lines progress file that `keep` accepts, by position."""
    if path is None or not path.exists():
        return {}
    rows = (json.loads(line) for line in path.read_text().splitlines() if line.strip())
    return {r["position"]: r for r in rows if keep(r)}


def _append(path: Path | None, row: dict) -> None:
    if path is not None:
        with open(path, "a") as fh:
            fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
