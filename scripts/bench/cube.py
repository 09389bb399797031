"""Cube decision error against gnubg 2-ply cubeful: mEMG per decision, by class and position type.

The positions are tests/data/cube-benchmark.json (built by scripts/lab/cube_benchmark.py):
each position in several cube states, every state judged by gnubg's cubeful analysis at
2 plies (No double, Double/Take, Double/Pass, normalised to the cube: EMG). One decision
is one position in one cube state, both sides' actions:

- the doubler's error: the judge's equity of its best action, max(ND, min(DT, DP)), minus
  that of the action taken (min(DT, DP) after a double, the opponent answering right; ND
  otherwise);
- the taker's error: |DT - DP| when the answer to a double is the wrong one (asked in
  every state, doubled or not, as the issue of a double is the taker's whole decision).

A wrong action is a decision with either side wrong. Errors are in millipoints (mEMG).
--set picks money play (default) or the 3-, 5- or 7-point match states. gnubg 0-ply's
figures on the same decisions are printed too when the file has them (a reference row).
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from engine.errors import TdgammonError
from scripts.commands.options import at_least

if TYPE_CHECKING:  # the engine's cube and position modules load numba: imported where they run
    from engine.cube.equity import CubeInfo
    from engine.position import Position

BENCHMARK = Path(__file__).resolve().parents[2] / "tests" / "data" / "cube-benchmark.json"
SETS = ("money", "3", "5", "7", "match")
GAMMONISH = 0.2
"""A contact position is gammonish when the judge's P(win gammon) + P(lose gammon) reaches this."""
CLASSES = ("No double", "Double, take", "Double, pass", "Too good")
TYPES = ("contact", "gammonish", "race")


@dataclass(frozen=True)
class Case:
    """One decision of the benchmark: a position, a cube state, the judge's three equities."""

    position: Position
    cube: CubeInfo
    judge: tuple[float, float, float]
    gnubg0: tuple[float, float, float] | None
    probs: tuple[float, ...]
    origin: str


@dataclass(frozen=True)
class Scored:
    """A decision's errors (EMG) and the actions, as the judge's class words."""

    case: Case
    doubler: float
    taker: float
    judge_action: str
    action: str

    @property
    def error(self) -> float:
        return self.doubler + self.taker

    @property
    def wrong(self) -> bool:
        return self.doubler > 0 or self.taker > 0


def load_cases(path: Path = BENCHMARK, which: str = "money") -> list[Case]:
    """The decisions of one set (money, 3, 5, 7 or every match state)."""
    from engine.cube.equity import CubeInfo
    from engine.position import Position

    if which not in SETS:
        raise TdgammonError(f"--set must be one of {', '.join(SETS)}, got {which!r}")
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError) as err:
        raise TdgammonError(f"cannot read the cube benchmark {path}: {err}") from None
    cases = []
    for row in doc["positions"]:
        position = Position.from_id(row["position"])
        for s in row["states"]:
            match = s["match"]
            if (which == "money") != (match == 0) or (which not in ("money", "match") and match != int(which)):
                continue
            cube = CubeInfo(value=s["cube"], owner=s["owner"], match_length=match,
                            score=tuple(s["score"]), crawford=s["crawford"])
            cases.append(Case(position, cube, tuple(s["judge"]), tuple(s["gnubg0"]) if "gnubg0" in s else None,
                              tuple(s["probs"]), row["origin"]))
    return cases


def judge_class(nd: float, dt: float, dp: float) -> str:
    """The judge's proper action, one of CLASSES."""
    if nd > dp:
        return "Too good"
    if min(dt, dp) >= nd:
        return "Double, take" if dt <= dp else "Double, pass"
    return "No double"


def action_words(double: bool, take: bool, nd: float, dt: float, dp: float) -> str:
    """A player's action in the judge's class words (too good = no double where the judge passes)."""
    if double:
        return "Double, take" if take else "Double, pass"
    if not take and nd > dp:
        return "Too good"
    return "No double" if take else "No double/pass"


def score(case: Case, double: bool, take: bool) -> Scored:
    """The doubler's and the taker's error of an action, by the judge's equities."""
    nd, dt, dp = case.judge
    best = max(nd, min(dt, dp))
    doubler = best - (min(dt, dp) if double else nd)
    taker = 0.0 if take == (dt <= dp) else abs(dt - dp)
    return Scored(case, max(0.0, doubler), taker, judge_class(nd, dt, dp), action_words(double, take, nd, dt, dp))


def position_type(case: Case) -> str:
    from engine.position import is_race

    if is_race(case.position.board):
        return "race"
    return "gammonish" if case.probs[1] + case.probs[3] >= GAMMONISH else "contact"


def score_player(cases: list[Case], evaluator, ply: int) -> list[Scored]:
    from engine.cube.lookahead import cube_decision_at_ply

    out = []
    for case in cases:
        d = cube_decision_at_ply(case.position.board, evaluator, case.cube, ply)
        out.append(score(case, d.double, d.response != "pass"))
    return out


def score_gnubg0(cases: list[Case]) -> list[Scored]:
    """gnubg 0-ply's actions from its own recorded equities."""
    out = []
    for case in cases:
        nd, dt, dp = case.gnubg0
        out.append(score(case, min(dt, dp) >= nd, dt < dp))
    return out


def summary(scored: list[Scored]) -> dict:
    """Mean errors in mEMG, wrong actions, and the splits."""
    def mean(xs):
        return 1000.0 * float(np.mean(xs)) if xs else 0.0

    by_class, by_type = defaultdict(list), defaultdict(list)
    for s in scored:
        by_class[s.judge_action].append(s)
        by_type[position_type(s.case)].append(s)

    def block(group):
        return {"n": len(group), "mEMG": mean([s.error for s in group]),
                "doubler": mean([s.doubler for s in group]), "taker": mean([s.taker for s in group]),
                "wrong": sum(s.wrong for s in group)}

    confusions = Counter((s.judge_action, s.action) for s in scored if s.wrong)
    takes = [s for s in scored if s.taker > 0]
    passed = [s.taker for s in takes if s.case.judge[1] <= s.case.judge[2]]
    took = [s.taker for s in takes if s.case.judge[1] > s.case.judge[2]]
    n = max(1, len(scored))
    return {**block(scored),
            "taker_bias": {"passed_takes": len(passed), "passed_takes_mEMG": 1000.0 * sum(passed) / n,
                           "took_passes": len(took), "took_passes_mEMG": 1000.0 * sum(took) / n},
            "classes": {c: block(by_class[c]) for c in CLASSES if by_class[c]},
            "types": {t: block(by_type[t]) for t in TYPES if by_type[t]},
            "confusions": [[j, a, n] for (j, a), n in confusions.most_common()]}


def format_summary(label: str, s: dict) -> list[str]:
    lines = [f"{label}: {s['mEMG']:.2f} mEMG/decision (doubler {s['doubler']:.2f}, taker {s['taker']:.2f}), "
             f"{s['wrong']} wrong actions of {s['n']}"]
    t = s["taker_bias"]
    lines.append(f"  taker: passed {t['passed_takes']} takes ({t['passed_takes_mEMG']:.2f} mEMG/decision), "
                 f"took {t['took_passes']} passes ({t['took_passes_mEMG']:.2f})")
    for title, key in (("by the judge's action", "classes"), ("by position type", "types")):
        lines.append(f"  {title}:")
        for name, b in s[key].items():
            lines.append(f"    {name:<14} n={b['n']:<5} {b['mEMG']:7.2f} mEMG  (doubler {b['doubler']:6.2f}, "
                         f"taker {b['taker']:6.2f})  wrong {b['wrong']}")
    if s["confusions"]:
        lines.append("  wrong actions (judge -> player): " +
                     "; ".join(f"{j} -> {a}: {n}" for j, a, n in s["confusions"]))
    return lines


def worst(scored: list[Scored], n: int) -> list[dict]:
    """The n decisions that lose the most, worst first: where a model's error comes from
    (on the shipped model a few positions hold much of it: docs/cube.md)."""
    rows = []
    for s in sorted(scored, key=lambda s: -s.error)[:n]:
        cube = s.case.cube
        rows.append({"position": s.case.position.id, "cube": cube.value, "owner": cube.owner,
                     "match": cube.match_length, "score": list(cube.score), "judge": s.judge_action,
                     "action": s.action, "mEMG": 1000.0 * s.error, "doubler": 1000.0 * s.doubler,
                     "taker": 1000.0 * s.taker})
    return rows


def format_worst(rows: list[dict]) -> list[str]:
    lines = [f"the {len(rows)} decisions that lose the most (judge -> player):"]
    for r in rows:
        where = f"{r['match']}-point {r['score'][0]}-{r['score'][1]}" if r["match"] else "money"
        lines.append(f"  {r['position']}  {where}, cube {r['cube']} {r['owner']}: {r['judge']} -> {r['action']}, "
                     f"{r['mEMG']:.0f} mEMG (doubler {r['doubler']:.0f}, taker {r['taker']:.0f})")
    return lines


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", metavar="M", default=None,
                        help="checkpoint, pubeval or random (default: models/default.pt)")
    parser.add_argument("--ply", type=int, choices=(1, 2, 3), default=2,
                        help="our ply for the cube decision (1, 2 or 3; default 2)")
    parser.add_argument("--set", default="money", help="money (default), 3, 5, 7 or match (all match scores)")
    parser.add_argument("--data", default=str(BENCHMARK), help="the benchmark file")
    parser.add_argument("--limit", type=at_least(0), default=0, help="score only the first N decisions (0 = all)")
    parser.add_argument("--worst", type=at_least(0), default=0, metavar="N",
                        help="also list the N decisions that lose the most (position, cube, actions, error)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> None:
    cases = load_cases(Path(args.data), args.set)
    if args.limit:
        cases = cases[:args.limit]
    from models.loader import load_evaluator

    evaluator = load_evaluator(args.model)
    start = time.perf_counter()
    scored = score_player(cases, evaluator, args.ply)
    ours = summary(scored)
    elapsed = time.perf_counter() - start
    label = f"{args.model or 'default model'} at {args.ply}-ply"
    out = {"set": args.set, "decisions": len(cases), "player": label, "ours": ours}
    if args.worst:
        out["worst"] = worst(scored, args.worst)
    if cases and all(c.gnubg0 is not None for c in cases):
        out["gnubg0"] = summary(score_gnubg0(cases))
    if args.json:
        print(json.dumps(out))
        return
    print(f"cube benchmark, {args.set} set: {len(cases)} decisions judged by gnubg 2-ply cubeful "
          f"({elapsed:.0f} s)")
    if "gnubg0" in out:
        print("\n".join(format_summary("gnubg 0-ply", out["gnubg0"])))
    print("\n".join(format_summary(label, ours)))
    if args.worst:
        print("\n".join(format_worst(out["worst"])))
    print(f"cube: {ours['mEMG']:.2f} mEMG/decision")
