"""Reading .mat files: our writer's output, gnubg's export dialect, and one-line errors."""

import numpy as np
import pytest

from engine.errors import MatFileError
from engine.formats.matfile import format_mat
from engine.formats.matread import CENTRED, load_mat, read_mat
from engine.game import RandomPlayer, play_game
from engine.pit.harness import to_mat_game
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def test_reads_back_what_we_write():
    games = []
    for k in range(3):
        rec = play_game(RandomPlayer(np.random.default_rng(k)), RandomPlayer(np.random.default_rng(9 + k)),
                        np.random.default_rng(40 + k))
        games.append(to_mat_game(rec, k % 2 == 0))
    record = read_mat(format_mat(games, ("alice", "bob")))
    assert record.match_length == 0 and record.names == ("alice", "bob")
    assert len(record.games) == 3
    for written, read in zip(games, record.games):
        moves = [a for a in read.actions if a.kind == "move"]
        assert [(a.side, a.dice) for a in moves] == [(s, d) for s, d, _ in written.turns]
        assert read.winner == (0 if written.result > 0 else 1) and read.points == abs(written.result)
        assert not read.resigned


def test_reads_gnubgs_dialect_with_the_cube():
    record = load_mat(DATA / "gnubg-analysis-1.mat")
    assert record.match_length == 7 and record.names == ("alice", "bob")
    kinds = [a.kind for g in record.games for a in g.actions if a.kind != "move"]
    assert "double" in kinds and ("take" in kinds or "drop" in kinds)
    first = record.games[0]
    # gnubg writes the winner of a dropped double in the drop's own row.
    assert first.actions[-1].kind == "drop" and first.winner == 1 and first.points == 1
    scores = [g.score for g in record.games]
    assert scores[0] == (0, 0) and scores[1] == (0, 1)
    moves = [a for g in record.games for a in g.actions if a.kind == "move"]
    assert any(a.play.startswith("25/") or "bar/" in a.play for a in moves)   # gnubg's 25/x entries
    # after a take the taker owns the cube
    for g in record.games:
        for prev, act in zip(g.actions, g.actions[1:]):
            if prev.kind == "take" and act.kind == "move":
                assert act.cube_value == 2 * prev.cube_value and act.cube_owner == prev.side
            if act.kind == "move" and g.actions.index(act) == 0:
                assert act.cube_owner == CENTRED


def test_money_session_and_a_dance():
    text = (" 0 point match\n\n Game 1\n a : 0                      b : 0\n"
            "  1) 31: 8/5 6/5                 \n Wins 1 point\n")
    record = read_mat(text)
    assert record.games[0].resigned and record.games[0].winner == 0


GOOD_HEAD = " 0 point match\n\n Game 1\n a : 0                      b : 0\n"


@pytest.mark.parametrize("text, line, words", [
    ("hello\n", 1, "point match"),
    (GOOD_HEAD + "  1) 31: 8/4 6/5\n", 5, "31"),
    (GOOD_HEAD + "  1) 77: 8/1\n", 5, "cannot read"),
    (GOOD_HEAD + "  1) 31: 8/5 6/5                 42: 8/4 6/4\n  2) 31: 8/5 6/5                  Takes\n", 6,
     "without a double"),
    (GOOD_HEAD + "  1)  Doubles => 4\n", 5, "cube is at 1"),
    (GOOD_HEAD + "  1) 31: 8/5 6/5\n  2) 42: 8/4 6/4\n", 6, "twice"),
    (GOOD_HEAD + "  1) 31: 8/5 6/5\n Game 2\n", 6, "no 'Wins"),
    (" 3 point match\n\n Game 1\n a : 3                      b : 0\n", 4, "past the"),
])
def test_malformed_files_name_the_line(text, line, words):
    with pytest.raises(MatFileError) as err:
        read_mat(text)
    assert f"line {line}:" in str(err.value) and words in str(err.value)


def test_cli_malformed_file_is_one_line_exit_2(tmp_path, capsys):
    from scripts.cli import main

    bad = tmp_path / "bad.mat"
    bad.write_text(GOOD_HEAD + "  1) 31: 8/4 6/5\n")
    assert main(["analyse", str(bad), "--evaluator", "pubeval", "--no-progress"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "line 5" in err
    assert main(["analyse", str(tmp_path / "missing.mat"), "--no-progress"]) == 2
    assert "cannot read" in capsys.readouterr().err
