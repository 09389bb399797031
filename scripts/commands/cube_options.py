"""The cube and match options of `tdgammon eval`, and the cube analysis it prints.

`add_cube_arguments(parser)` adds --cube, --owner, --jacoby, --beavers, --match, --score,
--crawford and --match-id; `cube_from_args(args)` turns them into an engine.cube.equity.CubeInfo
(money play, centred 1-cube, Jacoby and beavers off by default); `cube_report(...)`
computes the JSON-ready `cube` object and `format_cube(...)` renders it like gnubg.
"""

from __future__ import annotations

import argparse
import re

from typing import TYPE_CHECKING

from engine.errors import CubeError
from engine.formats.matchid import CENTRED, MatchState, decode_match_id, encode_match_id

if TYPE_CHECKING:  # engine.cube.equity loads the search: imported where it is used
    import numpy as np

    from engine.cube.equity import CubeInfo
    from engine.evaluator import Evaluator
    from engine.position import Position

ME_PLAYER = 1
"""gnubg's player number for the side on roll when we write a Match ID without one given."""


def add_cube_arguments(parser: argparse.ArgumentParser) -> None:
    """The cube/match options; all optional (default: money, centred 1-cube)."""
    group = parser.add_argument_group(
        "cube and match", "cube analysis settings, seen from the side on roll (default: money play, "
                          "centred cube at 1, Jacoby and beavers off)")
    group.add_argument("--cube", type=int, metavar="V", default=None, help="cube value (1, 2, 4, ...)")
    group.add_argument("--owner", metavar="WHO", default=None, choices=("centre", "center", "me", "opponent"),
                       help="who owns the cube: centre (default), me (the side on roll) or opponent")
    group.add_argument("--jacoby", action="store_true", help="money play: gammons count single while the cube is centred")
    group.add_argument("--beavers", action="store_true", help="money play: a doubled player may beaver")
    group.add_argument("--match", type=int, metavar="N", default=None, help="match play to N points (1..25)")
    group.add_argument("--score", metavar="A-B", default=None,
                       help="points already won in the match: A = side on roll, B = opponent (default 0-0)")
    group.add_argument("--crawford", action="store_true", help="this game is the Crawford game (no doubling)")
    group.add_argument("--match-id", metavar="ID", default=None,
                       help="a gnubg Match ID (or an XGID) giving cube, owner, match length, score and Crawford flag "
                            "(its player on roll is the side on roll); excludes the options above. A position given "
                            "as an XGID or as gnubg's POSITION_ID:MATCH_ID carries these itself, unless an option is given")


def cube_options_given(args: argparse.Namespace) -> bool:
    """Did the user ask about the cube (any cube/match option)?"""
    return (args.cube is not None or args.owner is not None or args.match is not None or args.score is not None
            or args.crawford or args.jacoby or args.beavers or args.match_id is not None)


def _parse_score(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*[-:]\s*(\d+)\s*", text)
    if m is None:
        raise CubeError(f"--score must look like A-B (e.g. 3-5), got {text!r}")
    return int(m.group(1)), int(m.group(2))


def cube_from_args(args: argparse.Namespace, carried: MatchState | None = None) -> tuple[CubeInfo, int]:
    """(CubeInfo from the side on roll's view, gnubg player number of the side on roll).

    carried: the match state the position's text carries (an XGID, or gnubg's "Position
    ID:Match ID"), used when no cube option is given; any cube option replaces it."""
    if carried is not None and not cube_options_given(args):
        return cube_from_match_state(carried)
    if args.match_id is not None:
        others = ((args.cube, args.owner, args.match, args.score) != (None,) * 4
                  or args.crawford or args.jacoby or args.beavers)
        if others:
            raise CubeError("give either --match-id or the cube options (--cube, --owner, --jacoby, "
                            "--beavers, --match, --score, --crawford), not both")
        from engine.formats.xgid import decode_xgid, looks_like_xgid

        if looks_like_xgid(args.match_id):
            return cube_from_match_state(decode_xgid(args.match_id)[1])
        return cube_from_match_state(decode_match_id(args.match_id))
    if args.match is None and (args.score is not None or args.crawford):
        raise CubeError("--score and --crawford need --match N")
    if args.match is not None and args.match < 1:
        raise CubeError(f"--match must be at least 1, got {args.match}")
    from engine.cube.equity import CENTRE, ME_OWNS, OPP_OWNS, CubeInfo

    owners = {"centre": CENTRE, "center": CENTRE, "me": ME_OWNS, "opponent": OPP_OWNS}
    score = _parse_score(args.score) if args.score is not None else (0, 0)
    cube = CubeInfo(value=1 if args.cube is None else args.cube,
                    owner=owners[args.owner or "centre"], jacoby=args.jacoby, beavers=args.beavers,
                    match_length=args.match or 0, score=score, crawford=args.crawford)
    return cube, ME_PLAYER


def cube_from_match_state(state: MatchState) -> tuple[CubeInfo, int]:
    """A decoded Match ID seen from its player on roll."""
    from engine.cube.equity import CENTRE, ME_OWNS, OPP_OWNS, CubeInfo

    me = state.on_roll
    if state.cube_owner == CENTRED:
        owner = CENTRE
    else:
        owner = ME_OWNS if state.cube_owner == me else OPP_OWNS
    n = state.match_length
    score = (state.score[me], state.score[1 - me]) if n else (0, 0)
    cube = CubeInfo(value=state.cube_value, owner=owner, jacoby=state.jacoby and n == 0, beavers=False,
                    match_length=n, score=score, crawford=state.crawford)
    return cube, me


def match_id_for(cube: CubeInfo, me: int) -> str:
    """The gnubg Match ID of these settings, before the roll of player `me`."""
    from engine.cube.equity import CENTRE, ME_OWNS, OPP_OWNS

    owner = {CENTRE: CENTRED, ME_OWNS: me, OPP_OWNS: 1 - me}[cube.owner]
    score = [0, 0]
    score[me], score[1 - me] = cube.score
    return encode_match_id(MatchState(
        cube_value=cube.value, cube_owner=owner, on_roll=me, crawford=cube.crawford, game_state=1, turn=me,
        match_length=cube.match_length, score=(score[0], score[1]), jacoby=cube.jacoby))


def describe(cube: CubeInfo) -> str:
    """One line: the kind of play and the cube."""
    from engine.cube.equity import CENTRE, ME_OWNS, OPP_OWNS

    owner = {CENTRE: "centred", ME_OWNS: "owned by the side on roll", OPP_OWNS: "owned by the opponent"}[cube.owner]
    if cube.is_money:
        rules = f"Jacoby {'on' if cube.jacoby else 'off'}, beavers {'on' if cube.beavers else 'off'}"
        return f"money play, cube {cube.value} {owner}, {rules}"
    kind = "Crawford game" if cube.crawford else ("post-Crawford" if cube.post_crawford else "pre-Crawford")
    need_me, need_opp = cube.need
    return (f"{cube.match_length}-point match, score {cube.score[0]}-{cube.score[1]} "
            f"({need_me}-away / {need_opp}-away, {kind}), cube {cube.value} {owner}")


def cube_report(position: Position, evaluator: Evaluator, ply: int, cube: CubeInfo, me: int = ME_PLAYER,
                cubeless: np.ndarray | None = None) -> dict:
    """The JSON-ready `cube` object: no_double, double_take, double_pass (normalised to the
    current cube), action (gnubg's words), plus the decision's details and the Match ID.
    cubeless: the position's probabilities at `ply`, when the caller has them already.
    """
    from engine.cube.equity import cube_efficiency, small_bearoff_values
    from engine.cube.lookahead import cube_decision_at_ply

    board = position.board
    out = cube_decision_at_ply(board, evaluator, cube, ply, cubeless).as_dict()
    out["ply"] = ply
    out["settings"] = describe(cube)
    # None: the exact values of the small bear-off table, no efficiency involved.
    exact = small_bearoff_values(board, cube) is not None
    out["efficiency"] = None if exact else round(cube_efficiency(board), 6)
    out["match_id"] = match_id_for(cube, me)
    return out


def format_cube(report: dict) -> str:
    """gnubg-like text: cubeful equities best first, with the difference to the best."""
    re_ = "Redouble" if "redouble" in report["action"].lower() else "Double"
    rows = [("No " + re_.lower(), report["no_double"]), (f"{re_}, take", report["double_take"]),
            (f"{re_}, pass", report["double_pass"])]
    rows.sort(key=lambda r: -r[1])
    best = max(r[1] for r in rows)
    unit = "EMG (normalised match equity)" if "mwc" in report else "normalised to the cube"
    lines = [f"Cube analysis ({report['ply']}-ply, {report['settings']})",
             "  Cube efficiency          " + ("exact (small bear-off table)" if report["efficiency"] is None
                                                 else f"{report['efficiency']:.3f}"),
             f"  Cubeless equity          {report['cubeless_equity']:+.4f}",
             f"  Cubeful equities ({unit}):"]
    for k, (name, value) in enumerate(rows, start=1):
        diff = "" if value == best else f"  ({value - best:+.4f})"
        mwc = ""
        if "mwc" in report:
            key = {"No": "no_double", "take": "double_take", "pass": "double_pass"}
            field = key["No"] if name.startswith("No") else key[name.rsplit(" ", 1)[-1]]
            mwc = f"  MWC {100 * report['mwc'][field]:6.2f}%"
        lines.append(f"  {k}. {name:<22}{value:+.4f}{diff}{mwc}")
    lines.append(f"  Proper cube action: {report['action']}")
    lines.append(f"  Match ID: {report['match_id']}")
    return "\n".join(lines)
