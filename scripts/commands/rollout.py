"""`tdgammon rollout POSITION_ID`: play the position out many times and average (see docs/rollouts.md).

Without --dice: the side on roll's position before its roll. With --dice: the best --top
plays of that roll, each rolled out on the same dice, with the paired difference to the
best. Quasi-random dice, variance reduction (each roll's luck subtracted), truncation,
cubeful money play, stop rules, worker processes or Ray, save and resume.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from engine.errors import TdgammonError
from scripts.cli import EVALUATOR_NAMES
from scripts.commands.files import check_writable
from scripts.commands.options import at_least, read_batch

if TYPE_CHECKING:  # the engine's rollout modules load numba: imported where they run
    from engine.evaluator import Evaluator
    from engine.position import Position
    from engine.rollout.core import RolloutSettings, Summary
    from engine.rollout.runner import CubeRollout, PlayRollout, RolloutResult

PROB_NAMES = ("Win", "W(g)", "W(bg)", "L(g)", "L(bg)")


@dataclass(frozen=True)
class EvaluatorLoader:
    """A picklable factory: the evaluator of a spec, torch on `threads` threads (for workers)."""

    spec: str | None
    threads: int = 1

    def __call__(self) -> Evaluator:
        from models.loader import load_evaluator

        name = (self.spec or "").partition(":")[0]
        if name not in EVALUATOR_NAMES:
            import torch

            torch.set_num_threads(self.threads)
        return load_evaluator(self.spec)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "rollout", help="roll a position (or the plays of a roll) out with the engine: mean and standard errors",
        description="Play the position out many times from the side on roll, before its roll (or each of the "
                    "best plays of --dice), with quasi-random dice and variance reduction, and print the five "
                    "probabilities and the equity with standard errors and 95%% intervals.")
    parser.add_argument("position", nargs="?", metavar="POSITION_ID", help="gnubg Position ID or XGID=... (omit with --batch)")
    parser.add_argument("--dice", metavar="ROLL", help="roll out the best plays of this roll (e.g. 31)")
    parser.add_argument("--top", type=int, default=3, help="with --dice: plays to roll out (default 3)")
    parser.add_argument("--trials", type=at_least(1), default=1296, help="games to play (default 1296)")
    parser.add_argument("--ply", type=int, choices=(1, 2), default=1,
                        help="checker play and luck measured at this ply (default 1; 2 is ~20x slower)")
    parser.add_argument("--truncate", type=int, default=0, metavar="N",
                        help="stop after N plies and score with the evaluator (default 0: play to the end)")
    parser.add_argument("--cube", action="store_true", help="also roll out cubeful money equity (both sides use the cube)")
    parser.add_argument("--cube-decision", action="store_true",
                        help="roll out the side on roll's money cube decision: No double and Double/take on the "
                             "same dice, and the proper cube action")
    parser.add_argument("--owner", choices=("centre", "me"), default="centre",
                        help="with --cube-decision: the cube is centred (default) or the side on roll's")
    parser.add_argument("--no-vr", dest="variance_reduction", action="store_false",
                        help="do not subtract the luck of the rolls (variance reduction is on by default)")
    parser.add_argument("--no-quasi", dest="quasi_random", action="store_false",
                        help="pseudo-random dice for every roll (default: the first two rolls stratified)")
    parser.add_argument("--seed", type=int, default=0, help="dice seed (default 0)")
    parser.add_argument("--batch-trials", type=int, default=216, metavar="B",
                        help="trials played in lock-step (default 216; a multiple of 36)")
    parser.add_argument("--target-se", type=float, default=None, metavar="SE",
                        help="stop once the equity's standard error is at most SE (after --min-trials)")
    parser.add_argument("--stop-behind", type=float, default=None, metavar="N",
                        help="with --dice: stop rolling out a play N standard errors behind the best")
    parser.add_argument("--min-trials", type=int, default=324, help="trials before a stop rule applies (default 324)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (or Ray CPUs; default 1)")
    parser.add_argument("--backend", choices=("local", "ray"), default="local", help="where the workers run")
    parser.add_argument("--ray-address", default=None, metavar="A",
                        help="Ray cluster to join (HOST:PORT or auto; default: a local one)")
    parser.add_argument("--save", metavar="FILE", help="write the trials done after every batch (atomically)")
    parser.add_argument("--resume", metavar="FILE", help="continue the rollout saved in FILE")
    parser.add_argument("--no-progress", "--quiet", dest="no_progress", action="store_true",
                        help="no progress bar (as the other long commands; --quiet is the older name)")
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--model", metavar="PATH", default=None, help="checkpoint (default models/default.pt)")
    who.add_argument("--evaluator", metavar="NAME", default=None,
                     help=f"a built-in evaluator instead: {', '.join(EVALUATOR_NAMES)}")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--batch", action="store_true",
                        help="read 'POSITION_ID [DICE]' per stdin line, print one JSON object per line")
    parser.set_defaults(func=run)


def settings_from_args(args: argparse.Namespace) -> RolloutSettings:
    from engine.rollout.core import RolloutError, RolloutSettings

    if args.truncate < 0:
        raise RolloutError(f"--truncate must be 0 or more plies, got {args.truncate}")
    if args.workers < 1:
        raise RolloutError(f"--workers must be at least 1, got {args.workers}")
    if args.target_se is not None and args.target_se <= 0:
        raise RolloutError(f"--target-se must be positive, got {args.target_se}")
    if args.top < 1:
        raise RolloutError(f"--top must be at least 1, got {args.top}")
    if args.seed < 0:
        raise RolloutError(f"--seed must be 0 or more, got {args.seed}")
    if args.min_trials < 0:
        raise RolloutError(f"--min-trials must be 0 or more, got {args.min_trials}")
    if args.stop_behind is not None and args.stop_behind < 0:
        raise RolloutError(f"--stop-behind must be 0 or more standard errors, got {args.stop_behind}")
    if args.cube_decision and args.dice:
        raise RolloutError("--cube-decision rolls out the position before its roll: drop --dice")
    if args.owner != "centre" and not args.cube_decision:
        raise RolloutError("--owner goes with --cube-decision")
    from engine.rollout.cubeful import CENTRE, ME_OWNS

    return RolloutSettings(trials=args.trials, ply=args.ply, truncate=args.truncate,
                           cube=args.cube or args.cube_decision, variance_reduction=args.variance_reduction,
                           quasi_random=args.quasi_random, seed=args.seed, batch=args.batch_trials,
                           cube_owner=ME_OWNS if args.owner == "me" else CENTRE)


def make_backend(args: argparse.Namespace, loader: EvaluatorLoader):
    from engine.rollout.core import RolloutError
    from engine.rollout.backends import LocalBackend

    if args.backend == "ray":
        from training.rollout_ray import RayBackend

        return RayBackend(loader, args.workers, args.ray_address)
    if args.ray_address is not None:
        raise RolloutError("--ray-address needs --backend ray")
    return LocalBackend(loader, args.workers)


def parse_line(line: str) -> tuple[Position, tuple[int, int] | None]:
    from engine.dice import parse_dice
    from engine.formats.xgid import position_from_text

    fields = line.split()
    if not 1 <= len(fields) <= 2:
        raise TdgammonError(f"expected 'POSITION_ID [DICE]', got {line.strip()!r}")
    return position_from_text(fields[0]), (parse_dice(fields[1]) if len(fields) == 2 else None)


def _r(x, nd: int = 6):
    if x is None:
        return None
    return [round(float(v), nd) for v in x] if np.ndim(x) else round(float(x), nd)


def summary_record(s: Summary) -> dict:
    out = {"trials": s.trials, "probs": _r(s.probs), "equity": _r(s.equity)}
    se = {"probs": _r(s.se_probs), "equity": _r(s.se_equity)}
    ci = {"equity": [_r(s.equity - 1.96 * s.se_equity), _r(s.equity + 1.96 * s.se_equity)]}
    if s.cubeful is not None:
        out["cubeful"] = _r(s.cubeful)
        se["cubeful"] = _r(s.se_cubeful)
        ci["cubeful"] = [_r(s.cubeful - 1.96 * s.se_cubeful), _r(s.cubeful + 1.96 * s.se_cubeful)]
    out["se"] = se
    out["ci95"] = ci
    return out


def position_record(position: Position, result: RolloutResult) -> dict:
    rec = {"position": position.id, **summary_record(result.summary), "seconds": round(result.seconds, 3)}
    if result.interrupted:
        rec["interrupted"] = True
    return rec


def plays_record(position: Position, dice: tuple[int, int], plays: list[PlayRollout]) -> dict:
    from engine.notation import format_play
    from engine.rollout.runner import paired_difference

    best = plays[0]
    rows = []
    for p in plays:
        row = {"move": format_play(position.board, p.steps), **summary_record(p.result.summary),
               "stopped": p.stopped}
        if p is not best:
            diff, se = paired_difference(best, p)
            row["behind"] = {"equity": _r(diff), "se": _r(se)}
        rows.append(row)
    significant = None
    if len(plays) > 1:
        diff, se = paired_difference(best, plays[1])
        significant = bool(diff > 1.96 * se) if np.isfinite(se) else bool(diff > 0)
    seconds = max(p.result.seconds for p in plays)
    rec = {"position": position.id, "dice": list(dice), **{k: v for k, v in rows[0].items() if k != "stopped"},
           "seconds": round(seconds, 3), "plays": rows, "best_significant": significant}
    if any(p.result.interrupted for p in plays):
        rec["interrupted"] = True
    return rec


def cube_record(position: Position, cr: CubeRollout) -> dict:
    """The two lines (cubeful values per unit of the cube at the start) and the verdict."""
    from engine.rollout.cubeful import CODE_OWNER

    nd, dt = cr.no_double.summary, cr.double_take.summary
    rec = {"position": position.id, "owner": CODE_OWNER[cr.no_double.settings.cube_owner],
           "trials": min(nd.trials, dt.trials), "no_double": summary_record(nd),
           "double_take": summary_record(dt), "gain": {"equity": _r(cr.gain[0]), "se": _r(cr.gain[1])},
           "decision": cr.decision.as_dict(), "seconds": round(cr.no_double.seconds, 3)}
    if cr.no_double.interrupted:
        rec["interrupted"] = True
    return rec


def format_cube(rec: dict) -> list[str]:
    d, nd, dt = rec["decision"], rec["no_double"], rec["double_take"]
    verb = "Redouble" if rec["owner"] == "me" else "Double"
    rows = [("No double", d["no_double"], nd["se"]["cubeful"]), (f"{verb}, take", d["double_take"], dt["se"]["cubeful"]),
            (f"{verb}, pass", d["double_pass"], None)]
    lines = [f"  {name:<16}{value:+.4f}" + (f"  (se {se:.4f})" if se is not None else "") for name, value, se in rows]
    return lines + [f"  Proper cube action: {d['action']}",
                    f"  {verb}/take minus no double: {rec['gain']['equity']:+.4f} (se {rec['gain']['se']:.4f}, "
                    f"the same dice in both lines)"]


def _fmt_row(label: str, values, signed_last: bool = True) -> str:
    cells = "".join(f"{v:8.4f}" for v in values[:5])
    last = f"{values[5]:+9.4f}" if signed_last else f"{values[5]:9.4f}"
    return f"  {label:<10}{cells}{last}"


def format_summary(rec: dict, indent: str = "") -> list[str]:
    head = f"  {'':<10}" + "".join(f"{n:>8}" for n in PROB_NAMES) + f"{'Equity':>9}"
    lines = [head, _fmt_row("mean", rec["probs"] + [rec["equity"]]),
             _fmt_row("std error", rec["se"]["probs"] + [rec["se"]["equity"]], signed_last=False)]
    lo, hi = rec["ci95"]["equity"]
    lines.append(f"  {'95% CI':<10}{'':40}  [{lo:+.4f}, {hi:+.4f}]")
    if "cubeful" in rec:
        lo, hi = rec["ci95"]["cubeful"]
        lines.append(f"  cubeful money equity {rec['cubeful']:+.4f}  (se {rec['se']['cubeful']:.4f}, "
                     f"95% CI [{lo:+.4f}, {hi:+.4f}])")
    return [indent + line for line in lines]


def describe(settings: RolloutSettings, evaluator_name: str) -> str:
    parts = [evaluator_name, f"{settings.ply}-ply",
             "variance reduction" if settings.variance_reduction else "no variance reduction",
             "quasi-random dice" if settings.quasi_random else "pseudo-random dice",
             f"truncated at {settings.truncate} plies" if settings.truncate else "full games (bear-off database)",
             "cubeful" if settings.cube else "cubeless", f"seed {settings.seed}"]
    return ", ".join(parts)


def format_text(rec: dict, settings: RolloutSettings, evaluator_name: str) -> str:
    what = "Cube decision rollout" if "decision" in rec else "Rollout"
    cube = f", {'centred cube' if rec['owner'] == 'centre' else 'the cube is ours'}" if "decision" in rec else ""
    lines = [f"{what} of {rec['position']}" + (f", dice {rec['dice'][0]}{rec['dice'][1]}" if "dice" in rec else "")
             + cube + f"  ({describe(settings, evaluator_name)})"]
    if "decision" in rec:
        lines.extend(format_cube(rec))
    elif "plays" in rec:
        for k, p in enumerate(rec["plays"], start=1):
            tail = ""
            if "behind" in p:
                tail = f"   behind the best by {p['behind']['equity']:.4f} (se {p['behind']['se']:.4f})"
            stop = "  [stopped: too far behind]" if p["stopped"] else ""
            lines.append(f"{k}. {p['move']}   {p['trials']} trials{tail}{stop}")
            lines.extend(format_summary(p, indent="  "))
        if rec["best_significant"] is not None:
            lines.append("The best play is " + ("" if rec["best_significant"] else "not ")
                         + "significantly better than the second (95%).")
    else:
        lines.extend(format_summary(rec))
    lines.append(f"{rec['trials']} trials, {rec['seconds']:.1f} s" + ("  (interrupted: partial result)"
                                                                     if rec.get("interrupted") else ""))
    return "\n".join(lines)


class _Bar:
    """tqdm on stderr: trials done, the running equity and its standard error."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.bar = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="trial", file=sys.stderr, leave=False, dynamic_ncols=True)

    def __call__(self, done: int, s: Summary) -> None:
        if self.bar is not None:
            self.bar.n = done
            value, se = (s.cubeful, s.se_cubeful) if s.cubeful is not None else (s.equity, s.se_equity)
            self.bar.set_postfix_str(f"equity {value:+.4f} se {se:.4f}")
            self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def rollout_one(position: Position, dice, settings, backend, evaluator, args) -> dict:
    from engine.rollout.core import RolloutError
    from engine.rollout.runner import rollout_cube_decision, rollout_plays, rollout_position

    if args.cube_decision and dice is not None:
        raise RolloutError("--cube-decision rolls out the position before its roll, without dice")
    bar = _Bar(settings.trials, not args.no_progress)
    try:
        if args.cube_decision:
            return cube_record(position, rollout_cube_decision(
                position.board, backend, settings, target_se=args.target_se, min_trials=args.min_trials,
                progress=bar, save_path=args.save, resume_path=args.resume))
        if dice is None:
            result = rollout_position(position.board, backend, settings, target_se=args.target_se,
                                      min_trials=args.min_trials, progress=bar, save_path=args.save,
                                      resume_path=args.resume)
            return position_record(position, result)
        plays = rollout_plays(position.board, dice, evaluator, backend, settings, top=args.top,
                              stop_behind=args.stop_behind, min_trials=args.min_trials, progress=bar,
                              save_path=args.save, resume_path=args.resume)
        return plays_record(position, dice, plays)
    finally:
        bar.close()


def run(args: argparse.Namespace) -> int:
    from engine.rollout.backends import LocalBackend

    settings = settings_from_args(args)
    if args.evaluator is not None and args.evaluator.partition(":")[0] not in EVALUATOR_NAMES:
        raise TdgammonError(f"unknown evaluator {args.evaluator!r} (choose from {', '.join(EVALUATOR_NAMES)})")
    spec = args.evaluator if args.evaluator is not None else args.model
    if args.batch:
        if args.position is not None:
            raise TdgammonError("give either a POSITION_ID or --batch, not both")
        items = read_batch(sys.stdin, parse_line)
    else:
        if args.position is None:
            raise TdgammonError("a POSITION_ID is required (or --batch to read them from stdin)")
        from engine.formats.xgid import position_from_text
        from engine.dice import parse_dice

        items = [(position_from_text(args.position), parse_dice(args.dice) if args.dice else None)]
    from engine.rollout.core import check_position

    for position, _ in items:
        check_position(position.board)
    if args.save:
        check_writable(args.save, "--save", replaced=True)
    loader = EvaluatorLoader(spec, threads=1)
    evaluator = loader()
    backend = make_backend(args, loader)
    if isinstance(backend, LocalBackend):
        backend._evaluator = evaluator
    interrupted = False
    try:
        for position, dice in items:
            rec = rollout_one(position, dice, settings, backend, evaluator, args)
            interrupted = interrupted or bool(rec.get("interrupted"))
            if args.batch or args.json:
                print(json.dumps(rec), flush=True)
            else:
                print(format_text(rec, settings, evaluator.name), flush=True)
            if interrupted:
                break
    finally:
        backend.close()
    return 130 if interrupted else 0
