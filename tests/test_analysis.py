"""Match analysis: marks and ratings, grading rules, the pit --save -> analyse round trip, the CLI."""

import json
from pathlib import Path
import numpy as np
import pytest

from engine.analysis.grade import AnalysisSettings, analyse_match, mark_of
from engine.analysis.summary import rating, summarise
from engine.formats.matread import read_mat, load_mat
from engine.pubeval import PubevalEvaluator
from scripts.cli import main

ONE_GAME = (" 0 point match\n\n Game 1\n a : 0                      b : 0\n"
            "  1) 31: 8/5 6/5                 64: 24/14\n"
            "  2) 66: 24/18(2) 13/7(2)         Doubles => 2\n"
            "  3)  Drops\n"
            "                                  Wins 1 point\n")


def test_marks_and_rating_scale():
    assert [mark_of(e) for e in (0.0, 0.029, 0.03, 0.07, 0.2)] == ["", "", "doubtful", "bad", "very bad"]
    assert mark_of(0.05, (0.01, 0.02, 0.04)) == "very bad"
    assert [rating(r) for r in (1, 4.9, 7, 11, 17, 25, 34, 99)] == [
        "Supernatural", "World class", "Expert", "Advanced", "Intermediate", "Casual player", "Beginner", "Awful!"]
    with pytest.raises(ValueError):
        AnalysisSettings(thresholds=(0.06, 0.03, 0.12))


def test_grading_a_short_game():
    record = read_mat(ONE_GAME)
    decisions = analyse_match(record, PubevalEvaluator(), AnalysisSettings(ply=1))
    kinds = [(d.player, d.kind) for d in decisions]
    # every roll is a checker decision; the roller's cube decision comes before; the drop is graded
    assert kinds.count(("a", "checker")) == 2 and kinds.count(("b", "checker")) == 1
    assert ("b", "cube") in kinds and ("a", "take") in kinds
    opening = decisions[[d.kind for d in decisions].index("checker")]
    assert opening.dice == [3, 1] and opening.played == "8/5 6/5" and opening.position == "4HPwATDgc/ABMA"
    assert opening.xgid.startswith("XGID=") and len(opening.match_id) == 12
    for d in decisions:
        assert d.error >= 0 and d.equity_best >= d.equity_played - 1e-9
        assert d.mark == mark_of(d.error)
    # A double out of nowhere early in the game is a clear cube error for the doubler.
    double = next(d for d in decisions if d.kind == "cube" and d.played == "double")
    assert double.best == "no double" and double.error > 0.1
    checker = [d for d in decisions if d.kind == "checker"]
    assert all(d.luck is not None for d in checker)
    players = summarise(record, decisions)
    assert players[0].result == -1 and players[1].result == 1   # a dropped: b wins 1
    assert players[0].luck_adjusted_result == pytest.approx(-1 - (players[0].luck_cost - players[1].luck_cost))


def test_forced_plays_and_dances_are_not_graded():
    from engine.analysis.grade import grade_checker
    from engine.cube.equity import CubeInfo
    from engine.movegen import generate

    board = np.zeros((2, 25), dtype=np.int8)
    board[0, 0] = 1          # my last checker on my 1-point: any roll bears it off, one play
    board[1, 5] = 15
    after = generate(board, 2, 1)[0]
    assert len(after) == 1
    graded = grade_checker(board, (2, 1), after[0], CubeInfo(), PubevalEvaluator(), AnalysisSettings(ply=1))
    assert graded["forced"] and graded["error"] == 0.0
    closed = np.zeros((2, 25), dtype=np.int8)
    closed[0, 24] = 1        # on the bar against a closed board: the roll dances
    closed[0, 5] = 14
    closed[1, 18:24] = 2
    closed[1, 5] = 3
    graded = grade_checker(closed, (6, 6), closed, CubeInfo(), PubevalEvaluator(), AnalysisSettings(ply=1))
    assert graded["forced"] and graded["played"] == ""


def test_pit_save_round_trip_and_json(tmp_path, capsys):
    mat = tmp_path / "x.mat"
    assert main(["pit", "pubeval", "random:3", "--games", "2", "--save", str(mat), "--no-progress",
                 "--workers", "1"]) == 0
    capsys.readouterr()
    record = load_mat(mat)
    moves = sum(a.kind == "move" for g in record.games for a in g.actions)
    html = tmp_path / "x.html"
    assert main(["analyse", str(mat), "--ply", "1", "--evaluator", "pubeval", "--json", "--no-progress",
                 "--html", str(html)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"players", "decisions", "games", "thresholds"} <= set(out)
    checker = [d for d in out["decisions"] if d["kind"] == "checker"]
    assert len(checker) == moves   # every roll of every game
    for d in out["decisions"]:
        assert {"game", "move", "player", "kind", "position", "dice", "played", "best", "error", "mark"} <= set(d)
    rates = {p["name"]: p["checker_error_rate"] for p in out["players"]}
    assert rates["random_3"] > rates["pubeval"] + 50
    assert html.read_text().count("<svg") == len(record.games)


def test_workers_give_the_same_analysis(tmp_path, capsys):
    text = ONE_GAME + ONE_GAME.replace(" 0 point match\n\n Game 1", " Game 2").replace("b : 0\n", "b : 1\n", 1)
    mat = tmp_path / "two.mat"
    mat.write_text(text)
    outs = []
    for workers in ("1", "2"):
        assert main(["analyse", str(mat), "--ply", "1", "--evaluator", "pubeval", "--json", "--no-progress",
                     "--workers", workers]) == 0
        outs.append(json.loads(capsys.readouterr().out)["decisions"])
    assert outs[0] == outs[1] and {d["game"] for d in outs[0]} == {1, 2}


@pytest.mark.parametrize("argv, words", [
    (["--thresholds", "0.1,0.05,0.2"], "thresholds"),
    (["--thresholds", "x"], "thresholds"),
    (["--player", "nobody"], "not in the file"),
    (["--workers", "0"], "workers"),
    (["--evaluator", "nosuch"], "unknown evaluator"),
    (["--ply", "4"], "invalid choice"),
    (["--html", "/nonexistent-dir/x.html"], "cannot write"),
    (["--html", "/proc/x.html"], "cannot write"),
])
def test_cli_errors_are_one_line(tmp_path, capsys, argv, words):
    mat = tmp_path / "g.mat"
    mat.write_text(ONE_GAME)
    assert main(["analyse", str(mat), "--evaluator", "pubeval", "--no-progress"][:4 if "--evaluator" in argv else 5]
                + argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err


def test_text_report_and_player_filter(tmp_path, capsys):
    mat = tmp_path / "g.mat"
    mat.write_text(ONE_GAME)
    assert main(["analyse", str(mat), "--ply", "1", "--evaluator", "pubeval", "--no-progress", "--player", "b"]) == 0
    out = capsys.readouterr().out
    assert "Rating" in out and "per unforced move" in out and "b cube: played double" in out
    assert " a 31" not in out


def test_match_ids_carry_the_score_cube_and_crawford():
    from engine.formats.matchid import decode_match_id

    path = Path(__file__).resolve().parent / "data" / "gnubg-analysis-1.mat"
    record = load_mat(path)
    decisions = analyse_match(record, PubevalEvaluator(), AnalysisSettings(ply=1))
    games = {g.number: g for g in record.games}
    assert any(d.kind == "take" for d in decisions)
    for d in decisions:
        state = decode_match_id(d.match_id)
        game = games[d.game]
        assert state.match_length == record.match_length == 7 and state.score == game.score and state.crawford == game.crawford
        if d.kind == "take":   # the doubler's position, a double pending, the taker to answer
            assert state.doubled and state.on_roll == 1 - d.side and state.turn == d.side
        else:
            assert state.on_roll == d.side and not state.doubled
        if d.kind == "cube":
            assert not game.crawford
