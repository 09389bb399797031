"""`tdgammon analyse FILE`: grade every decision of a match, each player's error rate and luck.

The engine does the work (engine.formats reads and replays the .mat or .sgf file,
engine.analysis grades and sums up); this module adds the options, the progress bar,
worker processes (one game at a time each) and the text / JSON / HTML outputs.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from engine.analysis import THRESHOLDS
from engine.errors import TdgammonError
from scripts.cli import MAX_PLY, PLY_HELP
from scripts.commands.files import check_writable

if TYPE_CHECKING:  # the analysis loads the search: imported where it runs
    from engine.analysis.grade import AnalysisSettings, Decision
    from engine.analysis.summary import PlayerSummary
    from engine.formats.matread import MatchRecord

_WORKER: dict = {}


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "analyse", help="grade every decision of a .mat or .sgf match: errors, marks, error rates, luck",
        description="Analyse a match or money session from a Jellyfish .mat file (ours, or gnubg's "
                    "`export match mat`) or gnubg's .sgf (`save match`): every checker play and cube "
                    "decision graded against the engine's best at --ply (cubeful, normalised to a "
                    "1-cube; match play in EMG from the Kazaross-XG2 table with the Crawford rule), "
                    "marked doubtful / bad / very bad by gnubg's thresholds, each player's error rates "
                    "(mEMG per unforced move, as gnubg), rating on gnubg's scale, and the luck of every "
                    "roll. See docs/analysis.md.")
    parser.add_argument("file", metavar="FILE", help="the .mat or .sgf file (told apart by content)")
    parser.add_argument("--ply", type=int, choices=range(1, MAX_PLY + 1), default=2,
                        help=f"analysis depth (default 2): {PLY_HELP}")
    who = parser.add_mutually_exclusive_group()
    who.add_argument("--model", metavar="PATH", default=None,
                     help="checkpoint to analyse with (default: the shipped models/default.pt)")
    who.add_argument("--evaluator", metavar="NAME", default=None,
                     help="a built-in evaluator instead of a network (pubeval, random:SEED)")
    parser.add_argument("--json", action="store_true", help="print the analysis as one JSON object")
    parser.add_argument("--html", metavar="OUT.html", default=None,
                        help="also write a self-contained HTML page: moves, marks, an equity plot per game")
    parser.add_argument("--player", metavar="NAME", default=None,
                        help="report only this player's decisions and figures")
    parser.add_argument("--thresholds", metavar="D,B,VB", default=None,
                        help="mark thresholds in normalised equity: doubtful, bad, very bad "
                             f"(default gnubg's {','.join(str(t) for t in THRESHOLDS)})")
    parser.add_argument("--luck-ply", type=int, choices=range(1, MAX_PLY + 1), default=1,
                        help="ply that picks each roll's best play for luck (default 1, gnubg's 0-ply)")
    parser.add_argument("--workers", type=int, default=1, metavar="N",
                        help="worker processes, one game at a time each (default 1)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.set_defaults(func=run)


def parse_thresholds(text: str | None) -> tuple[float, float, float]:
    """'0.03,0.06,0.12' -> a tuple; TdgammonError unless three increasing positive numbers."""
    if text is None:
        return THRESHOLDS
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise TdgammonError(f"--thresholds must be three numbers like 0.03,0.06,0.12, got {text!r}") from None
    if len(values) != 3 or not 0 < values[0] <= values[1] <= values[2]:
        raise TdgammonError(f"--thresholds must be 0 < doubtful <= bad <= very bad, got {text!r}")
    return values


def _evaluator_spec(args: argparse.Namespace) -> str | None:
    if args.evaluator is not None:
        from models.loader import EVALUATORS
        if args.evaluator.partition(":")[0] not in EVALUATORS:
            raise TdgammonError(f"unknown evaluator {args.evaluator!r} (choose from {', '.join(sorted(EVALUATORS))})")
        return args.evaluator
    return args.model


def _init_worker(spec: str | None, record: MatchRecord, settings: AnalysisSettings) -> None:
    from models.loader import load_evaluator

    if "torch" in sys.modules:   # one thread per worker: the workers fill the cores
        sys.modules["torch"].set_num_threads(1)
    _WORKER.update(evaluator=load_evaluator(spec), record=record, settings=settings)


def _analyse(index: int) -> tuple[int, list[Decision]]:
    from engine.analysis.grade import analyse_game

    w = _WORKER
    return index, analyse_game(w["record"], index, w["evaluator"], w["settings"])


def analyse_record(record: MatchRecord, spec: str | None, settings: AnalysisSettings, workers: int = 1,
                   progress: bool = True) -> list[Decision]:
    """Every decision of the record, games in order; a tqdm bar over the file's actions."""
    from engine.analysis.grade import analyse_game, count_actions

    from tqdm import tqdm

    bar = tqdm(total=count_actions(record), unit="decision", disable=not progress, file=sys.stderr,
               dynamic_ncols=True)
    per_game: dict[int, list[Decision]] = {}
    try:
        if workers <= 1 or len(record.games) == 1:
            _init_worker(spec, record, settings)
            for index in range(len(record.games)):
                per_game[index] = analyse_game(record, index, _WORKER["evaluator"], settings, bar.update)
        else:
            ctx = mp.get_context("fork")
            with ctx.Pool(min(workers, len(record.games)), initializer=_init_worker,
                          initargs=(spec, record, settings)) as pool:
                for index, decisions in pool.imap_unordered(_analyse, range(len(record.games))):
                    per_game[index] = decisions
                    bar.update(len(record.games[index].actions))
    finally:
        bar.close()
    return [d for index in sorted(per_game) for d in per_game[index]]


def settings_line(record: MatchRecord, settings: AnalysisSettings, evaluator_name: str) -> str:
    kind = f"{record.match_length}-point match" if record.match_length else "money session"
    t = settings.thresholds
    return (f"{kind}, {len(record.games)} games; {evaluator_name} at {settings.ply}-ply (cube decisions at "
            f"most 2-ply), luck at {settings.luck_ply}-ply; marks: doubtful >= {t[0]}, bad >= {t[1]}, "
            f"very bad >= {t[2]} (normalised equity)")


def analysis_json(path: str, record: MatchRecord, settings: AnalysisSettings, evaluator_name: str,
                  players: list[PlayerSummary], decisions: list[Decision]) -> dict:
    """The --json object (docs/analysis.md)."""
    from engine.analysis.summary import RATING_SCALE

    return {
        "file": path, "match_length": record.match_length, "evaluator": evaluator_name, "ply": settings.ply,
        "luck_ply": settings.luck_ply, "thresholds": list(settings.thresholds),
        "rating_scale": [[b if b != float("inf") else None, label] for b, label in RATING_SCALE],
        "games": [{"game": g.number, "score": list(g.score), "crawford": g.crawford,
                   "winner": None if g.winner is None else record.names[g.winner], "points": g.points,
                   "resigned": g.resigned} for g in record.games],
        "players": [p.as_dict() for p in players],
        "decisions": [d.as_dict() for d in decisions],
    }


def format_text(record: MatchRecord, settings_text: str, players: list[PlayerSummary],
                decisions: list[Decision]) -> str:
    """The readable report: settings, every marked decision, then the players' table."""
    from engine.analysis.summary import RATING_SCALE

    unit = "MWC" if record.match_length else "points"
    lines = [f"Analysis: {settings_text}", ""]
    game = None
    for d in decisions:
        if not d.mark:
            continue
        if d.game != game:
            game = d.game
            lines.append(f"Game {game}")
        dice = f" {d.dice[0]}{d.dice[1]}" if d.dice else ""
        lines.append(f"  {d.move:>3}. {d.player}{dice} {d.kind}: played {d.played or '-'}, best {d.best}, "
                     f"error {d.error:.3f} ({d.mark})  [{d.position}:{d.match_id}]")
    if game is None:
        lines.append("No decision marked.")
    lines.append("")
    width = max(14, *(len(p.name) for p in players))
    rows = [("Moves (unforced)", lambda p: f"{p.moves} ({p.unforced_moves})"),
            ("Checker error", lambda p: f"{1000 * p.checker_error:.1f} mEMG"),
            ("Checker rate", lambda p: f"{p.checker_error_rate:.1f} mEMG/move"),
            ("Checker marks", lambda p: "/".join(str(v) for v in p.checker_marks.values())),
            ("Cube (close)", lambda p: f"{p.cube_decisions} ({p.close_cube_decisions})"),
            ("Cube rate", lambda p: f"{p.cube_error_rate:.1f} mEMG/dec."),
            ("Cube marks", lambda p: "/".join(str(v) for v in p.cube_marks.values())),
            ("Overall rate", lambda p: f"{p.error_rate:.1f} mEMG/dec."),
            ("Rating", lambda p: p.rating),
            ("Luck", lambda p: f"{p.luck:+.3f} EMG ({p.luck_cost:+.3f} {unit})"),
            ("Result", lambda p: f"{p.result:+.3f} {unit}"),
            ("Luck-adjusted", lambda p: f"{p.luck_adjusted_result:+.3f} {unit}")]
    lines.append(f"{'':<18}" + "".join(f"{p.name:>{width + 14}}" for p in players))
    for label, cell in rows:
        lines.append(f"{label:<18}" + "".join(f"{cell(p):>{width + 14}}" for p in players))
    scale = ", ".join(f"{label} < {bound:g}" for bound, label in RATING_SCALE if bound != float("inf"))
    lines += ["", "Marks are doubtful/bad/very bad. Error rates are mEMG (thousandths of a normalised "
              "1-cube equity) per unforced move, or per close-or-actual cube decision (gnubg's convention); "
              f"overall = both errors over both counts. Rating (gnubg's scale, mEMG per decision): {scale}, "
              "else Awful!"]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from engine.analysis.grade import AnalysisSettings
    from engine.analysis.summary import summarise
    from engine.formats.records import load_record

    settings = AnalysisSettings(ply=args.ply, thresholds=parse_thresholds(args.thresholds), luck_ply=args.luck_ply)
    if args.workers < 1:
        raise TdgammonError(f"--workers must be at least 1, got {args.workers}")
    record = load_record(args.file)
    if args.player is not None and args.player not in record.names:
        raise TdgammonError(f"--player {args.player!r} is not in the file (players: {', '.join(record.names)})")
    if args.html is not None:
        check_writable(args.html, "--html")
    spec = _evaluator_spec(args)
    from models.loader import load_evaluator
    evaluator_name = load_evaluator(spec).name
    decisions = analyse_record(record, spec, settings, args.workers, progress=not args.no_progress)
    players = summarise(record, decisions)
    if args.player is not None:
        players = [p for p in players if p.name == args.player]
        decisions = [d for d in decisions if d.player == args.player]
    text = settings_line(record, settings, evaluator_name)
    write_error = None
    if args.html is not None:
        from engine.analysis.html import render_html
        games = [(g.number, f"Game {g.number}: {record.names[0]} {g.score[0]}, {record.names[1]} {g.score[1]}"
                  + (" (Crawford)" if g.crawford else ""), [d for d in decisions if d.game == g.number])
                 for g in record.games]
        page = render_html(f"Analysis of {Path(args.file).name}", {"settings": text,
                           "match_length": record.match_length}, players, games)
        try:
            Path(args.html).write_text(page, encoding="utf-8")
        except OSError as err:  # after the check above, only a device that fails on write
            write_error = f"--html {args.html}: cannot write ({err.strerror or err})"
    if args.json:
        print(json.dumps(analysis_json(args.file, record, settings, evaluator_name, players, decisions)))
    else:
        print(format_text(record, text, players, decisions))
    if write_error:  # the report is printed first: the analysis is not lost
        raise TdgammonError(write_error)
    return 0
