"""Grade every decision of a replayed match: checker plays, cube actions, the luck of each roll.

All equities are cubeful and normalised to a 1-cube from the acting side's view (gnubg's
EMG in match play), so an error of 0.06 means the same at any cube or score:

- a play's equity: its afterstate valued at the analysis ply (engine.search), then the
  opponent, on roll with the cube, takes his best cube action (engine.cube.equity,
  Janowski at 1-ply on those probabilities). The best play is the best of the plays the
  search valued at the full ply; the play made is valued at that ply too when the
  search's filter dropped it. Error = best - played (never negative).
- a cube decision (before the roll, whenever the roller may double): No double /
  Double-Take / Double-Pass at the analysis ply (engine.cube). Not doubling
  costs proper - ND, doubling proper - min(DT, DP); a take costs DT - min(DT, DP), a pass
  DP - min(DT, DP) (both in the doubler's equity, which is what the taker gives away).
  A cube decision is "close" (gnubg's "close or actual") when the cube was turned or
  doubling would cost less than CLOSE_CUBE. To save time a decision that is far from
  close at 1-ply keeps its 1-ply values; the others are valued at the analysis ply.
- luck of a roll: the cubeful value of the roller's best play of that roll minus the mean
  over the 21 rolls, best plays picked at settings.luck_ply (engine.luck; gnubg's
  default is its 0-ply, our 1-ply).

Errors and luck are also given as cost: in points (times the cube) in money play, in match
winning chances (MWC) in a match. Forced plays (one legal play) and rolls that cannot
be played are recorded, with their luck, but not graded, as gnubg does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

import numpy as np

from engine.analysis import THRESHOLDS
from engine.cube.equity import (CENTRE, ME_OWNS, OPP_OWNS, CubeInfo, best_cube_value, cash_value, cube_efficiency,
                                to_normalised)
from engine.cube.lookahead import cube_decision_at_ply
from engine.evaluator import Evaluator, flip
from engine.formats.matchid import CENTRED, MatchState, encode_match_id
from engine.formats.matread import MatAction, MatchRecord
from engine.formats.xgid import encode_xgid
from engine.luck import best_afterstates, roll_index
from engine.notation import format_play
from engine.position import Position, game_results
from engine.search import ROLL_WEIGHTS, afterstate_values, check_ply, rank_plays

MARKS = ("doubtful", "bad", "very bad")
CLOSE_CUBE = 0.16
"""A cube decision not taken counts when doubling would lose less than this (gnubg's rule)."""
TOP_PLAYS = 5
"""How many of the best plays a checker decision lists."""


@dataclass(frozen=True)
class AnalysisSettings:
    """Analysis ply, mark thresholds, the ply that picks plays for luck."""

    ply: int = 2
    thresholds: tuple[float, float, float] = THRESHOLDS
    luck_ply: int = 1

    def __post_init__(self) -> None:
        check_ply(self.ply)
        check_ply(self.luck_ply)
        t = self.thresholds
        if len(t) != 3 or not 0 < t[0] <= t[1] <= t[2]:
            raise ValueError(f"mark thresholds must be 0 < doubtful <= bad <= very bad, got {t}")


@dataclass
class Decision:
    """One graded decision; field names are the JSON schema's (docs/analysis.md).

    kind: "checker", "cube" (the roller's double / no double) or "take" (the answer).
    equity_*: cubeful, normalised, acting side's view; error >= 0 in the same unit; cost:
    the error in points (money) or MWC (match). luck / luck_cost: checker decisions only.
    """

    game: int
    move: int
    player: str
    side: int
    kind: str
    position: str
    match_id: str
    xgid: str
    dice: list[int] | None
    played: str
    best: str
    equity_played: float
    equity_best: float
    error: float
    cost: float
    mark: str
    forced: bool = False
    close: bool = True
    luck: float | None = None
    luck_cost: float | None = None
    line: int = 0
    options: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def mark_of(error: float, thresholds: tuple[float, float, float] = THRESHOLDS) -> str:
    """'' , 'doubtful', 'bad' or 'very bad' for an error in normalised equity."""
    label = ""
    for name, limit in zip(MARKS, thresholds):
        if error >= limit:
            label = name
    return label


def cube_for(record: MatchRecord, game_index: int, action: MatAction, side: int) -> CubeInfo:
    """The cube and score from `side`'s view at this action."""
    game = record.games[game_index]
    owner = CENTRE if action.cube_owner == CENTRED else (ME_OWNS if action.cube_owner == side else OPP_OWNS)
    n = record.match_length
    score = (game.score[side], game.score[1 - side]) if n else (0, 0)
    beavers = n == 0 and any(a.kind == "beaver" for g in record.games for a in g.actions)
    return CubeInfo(value=action.cube_value, owner=owner, beavers=beavers, match_length=n, score=score,
                    crawford=game.crawford)


def cost_scale(cube: CubeInfo) -> float:
    """Normalised equity -> points (money) or MWC (match): half the gap between winning and losing the cube."""
    return (cash_value(cube, 1) - cash_value(cube, -1)) / 2.0


def afterstate_equities(afterstates: np.ndarray, probs: np.ndarray, cube: CubeInfo) -> np.ndarray:
    """The mover's cubeful normalised equity after each play (probs: mover's view), the
    opponent then on roll with his best cube action; finished games get their result."""
    afterstates = np.asarray(afterstates, dtype=np.int8).reshape(-1, 2, 25)
    points = game_results(afterstates)
    opp = cube.swapped()
    out = np.empty(len(afterstates))
    for k in range(len(afterstates)):
        if points[k]:
            value = cash_value(cube, int(points[k]))
        else:
            opp_board = afterstates[k][::-1]
            theirs = best_cube_value(flip(probs[k]), opp, cube_efficiency(opp_board), opp_board)
            value = -theirs if cube.is_money else 1.0 - theirs
        out[k] = to_normalised(value, cube)
    return out


def _ids(board: np.ndarray, cube: CubeInfo, side: int, dice: tuple[int, int] | None,
         doubled: bool = False) -> tuple[str, str, str]:
    """(Position ID, Match ID, XGID) of the acting side's position."""
    owner = {CENTRE: CENTRED, ME_OWNS: side, OPP_OWNS: 1 - side}[cube.owner]
    score = [0, 0]
    score[side], score[1 - side] = cube.score
    state = MatchState(cube_value=cube.value, cube_owner=owner, on_roll=side, crawford=cube.crawford,
                       turn=side if not doubled else 1 - side, doubled=doubled, dice=dice or (0, 0),
                       match_length=cube.match_length, score=(score[0], score[1]))
    return Position(board).id, encode_match_id(state), encode_xgid(board, state)


def grade_checker(board: np.ndarray, dice: tuple[int, int], after: np.ndarray, cube: CubeInfo,
                  evaluator: Evaluator, settings: AnalysisSettings) -> dict:
    """played / best notation and equities, error, forced flag and the top plays of one roll."""
    ranked = rank_plays(board, dice, evaluator, settings.ply)
    if not ranked:
        return {"played": "", "best": "", "equity_played": 0.0, "equity_best": 0.0, "error": 0.0,
                "forced": True, "options": []}
    key = np.asarray(after, dtype=np.int8).tobytes()
    played_at = next((i for i, p in enumerate(ranked) if p.afterstate.tobytes() == key), None)
    if played_at is None:
        raise ValueError("the play made is not a legal play of the roll")
    # The plays valued at the full ply compete; the play made joins them, valued at that ply too.
    chosen = [p for p in ranked if p.ply == ranked[0].ply]
    afters = [p.afterstate for p in chosen]
    probs = [p.probs for p in chosen]
    steps = [p.steps for p in chosen]
    if played_at >= len(chosen):
        played = ranked[played_at]
        afters.append(played.afterstate)
        probs.append(afterstate_values(played.afterstate[None], evaluator, settings.ply)[0])
        steps.append(played.steps)
        played_at = len(chosen)
    eqs = afterstate_equities(np.array(afters), np.array(probs), cube)
    order = np.argsort(-eqs, kind="stable")
    best = int(order[0])
    names = [format_play(board, s) for s in steps]
    options = [{"move": names[i], "equity": round(float(eqs[i]), 6)} for i in order[:TOP_PLAYS]]
    return {"played": names[played_at], "best": names[best], "equity_played": float(eqs[played_at]),
            "equity_best": float(eqs[best]), "error": max(0.0, float(eqs[best] - eqs[played_at])),
            "forced": len(ranked) == 1, "options": options}


def roll_luck(board: np.ndarray, dice: tuple[int, int], cube: CubeInfo, evaluator: Evaluator,
              ply: int) -> float:
    """The roll's cubeful value minus the mean over the 21 rolls (normalised, roller's view)."""
    afters, probs = best_afterstates(np.asarray(board)[None], evaluator, ply)
    values = afterstate_equities(afters[0], probs[0], cube)
    return float(values[roll_index(*dice)] - values @ ROLL_WEIGHTS)


def grade_cube(board: np.ndarray, cube: CubeInfo, evaluator: Evaluator, ply: int,
               doubled: bool, answer: str | None) -> tuple[dict, dict | None]:
    """The roller's cube decision and, when he doubled, the opponent's answer ('take',
    'drop' or 'beaver'); each as {played, best, equity_played, equity_best, error, close, options}."""
    dec = cube_decision_at_ply(board, evaluator, cube, 1)
    used = 1
    if ply > 1 and (doubled or dec.no_double - min(dec.double_take, dec.double_pass) < CLOSE_CUBE):
        dec = cube_decision_at_ply(board, evaluator, cube, ply)
        used = ply
    nd, dt, dp = dec.no_double, dec.double_take, dec.double_pass
    doubling = min(dt, dp)
    proper = max(nd, doubling)
    options = [{"move": "no double", "equity": round(nd, 6)}, {"move": "double, take", "equity": round(dt, 6)},
               {"move": "double, pass", "equity": round(dp, 6)}, {"move": "proper", "action": dec.action, "ply": used}]
    played_eq = doubling if doubled else nd
    roller = {"played": "double" if doubled else "no double", "best": "double" if doubling > nd else "no double",
              "equity_played": played_eq, "equity_best": proper, "error": max(0.0, proper - played_eq),
              "close": doubled or nd - doubling < CLOSE_CUBE, "options": options}
    if not doubled or answer is None:
        return roller, None
    taken = answer != "drop"
    # The taker's equities are the negatives of the doubler's.
    taker = {"played": answer if taken else "pass", "best": "take" if dt <= dp else "pass",
             "equity_played": -(dt if taken else dp), "equity_best": -doubling,
             "error": max(0.0, (dt if taken else dp) - doubling), "close": True,
             "options": options[:3]}
    return roller, taker


ProgressFn = Callable[[int], None]


def analyse_game(record: MatchRecord, game_index: int, evaluator: Evaluator,
                 settings: AnalysisSettings = AnalysisSettings(),
                 progress: ProgressFn | None = None) -> list[Decision]:
    """Every decision of one game, in order; progress(1) after each action of the file."""
    game = record.games[game_index]
    names = record.names
    out: list[Decision] = []
    actions = game.actions
    move_number = 0
    for k, action in enumerate(actions):
        side = action.side
        if action.kind == "move":
            move_number += 1
            cube = cube_for(record, game_index, action, side)
            prev = actions[k - 1].kind if k else None
            if prev not in ("take", "beaver") and cube.may_double():
                roller, _ = grade_cube(action.board, cube, evaluator, settings.ply, False, None)
                out.append(_decision(game, move_number, names, action, "cube", cube, roller, settings, None))
            graded = grade_checker(action.board, action.dice, action.after, cube, evaluator, settings)
            if not graded["played"] and not graded["best"]:
                graded["played"] = graded["best"] = "(no play)"
            luck = roll_luck(action.board, action.dice, cube, evaluator, settings.luck_ply)
            out.append(_decision(game, move_number, names, action, "checker", cube, graded, settings, luck))
        elif action.kind == "double":
            cube = cube_for(record, game_index, action, side)
            answer = actions[k + 1] if k + 1 < len(actions) else None
            roller, taker = grade_cube(action.board, cube, evaluator, settings.ply, True,
                                       answer.kind if answer is not None else None)
            out.append(_decision(game, move_number + 1, names, action, "cube", cube, roller, settings, None))
            if taker is not None:
                # The answer is graded on the doubler's position and cube (its IDs are the doubler's).
                out.append(_decision(game, move_number + 1, names, answer, "take", cube, taker, settings,
                                     None, board=action.board))
        if progress is not None:
            progress(1)
    return out


def _decision(game, move: int, names, action: MatAction, kind: str, cube: CubeInfo, graded: dict,
              settings: AnalysisSettings, luck: float | None, board: np.ndarray | None = None) -> Decision:
    board = action.board if board is None else board
    side = action.side
    doubled = kind == "take"
    position_id, match_id, xgid = _ids(board, cube, 1 - side if doubled else side,
                                       action.dice if kind == "checker" else None, doubled)
    forced = bool(graded.get("forced", False))
    error = 0.0 if forced else graded["error"]
    scale = cost_scale(cube)
    return Decision(
        game=game.number, move=move, player=names[side], side=side, kind=kind, position=position_id,
        match_id=match_id, xgid=xgid, dice=list(action.dice) if kind == "checker" else None,
        played=graded["played"], best=graded["best"], equity_played=graded["equity_played"],
        equity_best=graded["equity_best"], error=error, cost=error * scale,
        mark="" if forced else mark_of(error, settings.thresholds), forced=forced,
        close=bool(graded.get("close", True)), luck=luck, luck_cost=None if luck is None else luck * scale,
        line=action.line, options=graded["options"])


def analyse_match(record: MatchRecord, evaluator: Evaluator, settings: AnalysisSettings = AnalysisSettings(),
                  progress: ProgressFn | None = None) -> list[Decision]:
    """analyse_game over every game, in order."""
    out: list[Decision] = []
    for index in range(len(record.games)):
        out.extend(analyse_game(record, index, evaluator, settings, progress))
    return out


def count_actions(record: MatchRecord) -> int:
    """How many actions analyse_match reports progress for."""
    return sum(len(g.actions) for g in record.games)
