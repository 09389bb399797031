"""Reading gnubg's .sgf: the same record and analysis as gnubg's .mat export of the same match; one-line errors.

tests/data/gnubg-analysis-N.sgf and .mat were both written by gnubg (`save match`, `export match
mat`) for the same match by scripts/lab/gnubg_analysis.py: gnubg is the oracle of the format only.
"""

from pathlib import Path

import numpy as np
import pytest

from engine.analysis.grade import AnalysisSettings, analyse_match
from engine.errors import SgfFileError
from engine.formats.matread import load_mat
from engine.formats.records import read_record
from engine.formats.sgfread import load_sgf, read_sgf
from engine.pubeval import PubevalEvaluator
from scripts.cli import main

DATA = Path(__file__).resolve().parent / "data"
PAIRS = sorted(p.stem for p in DATA.glob("gnubg-analysis-*.sgf"))

HEAD = "(;FF[4]GM[6]CA[UTF-8]AP[GNU Backgammon:1.07.001]MI[length:0][game:0][ws:0][bs:0]PW[a]PB[b]RE[W+1]\n"


def _same_record(a, b) -> None:
    assert (a.match_length, a.names, len(a.games)) == (b.match_length, b.names, len(b.games))
    for ga, gb in zip(a.games, b.games):
        assert (ga.number, ga.score, ga.crawford, ga.winner, ga.points, ga.resigned) == \
               (gb.number, gb.score, gb.crawford, gb.winner, gb.points, gb.resigned)
        assert [(x.kind, x.side, x.dice, x.cube_value, x.cube_owner, x.cube_to) for x in ga.actions] == \
               [(y.kind, y.side, y.dice, y.cube_value, y.cube_owner, y.cube_to) for y in gb.actions]
        for x, y in zip(ga.actions, gb.actions):
            assert np.array_equal(x.board, y.board)
            assert (x.after is None) == (y.after is None)
            if x.after is not None:
                assert np.array_equal(x.after, y.after)


@pytest.mark.parametrize("stem", PAIRS)
def test_sgf_gives_the_record_of_gnubgs_mat_export(stem):
    sgf, mat = load_sgf(DATA / f"{stem}.sgf"), load_mat(DATA / f"{stem}.mat")
    _same_record(sgf, mat)
    kinds = {a.kind for g in sgf.games for a in g.actions}
    assert {"move", "double"} <= kinds and kinds & {"take", "drop"}


@pytest.mark.slow
def test_sgf_and_mat_give_the_same_decisions():
    """The match's .sgf and .mat analysed alike: every decision the same but the line it came from."""
    assert len(PAIRS) >= 2
    stem = next(s for s in PAIRS if load_mat(DATA / f"{s}.mat").match_length)   # a match: score, Crawford
    settings = AnalysisSettings(ply=1)
    got = [analyse_match(load(DATA / f"{stem}.{ext}"), PubevalEvaluator(), settings)
           for load, ext in ((load_sgf, "sgf"), (load_mat, "mat"))]
    strip = lambda ds: [{k: v for k, v in d.as_dict().items() if k != "line"} for d in ds]
    assert len(got[0]) > 300 and strip(got[0]) == strip(got[1])
    assert any(d.kind == "take" for d in got[0])


def test_money_resignation_dance_and_analysis_properties_skipped():
    # White opens 31 (gnubg's analysis of it attached), Black answers 64, White resigns a
    # single game (RE[B+1R]: Black wins 1 point, R = resigned).
    text = ("(;FF[4]GM[6]MI[length:0][game:0][ws:0][bs:0]PW[ann]PB[bo]RE[B+1R]GS[M:1 2]\n"
            ";W[31hefe]A[0][hefe E ver 3 0.5 0.1 0 0.1 0 0.1 0C 0 1 0.0 1]MR[]LU[0.1]DO[]\n"
            ";B[64aglp]C[a comment with \\] inside]\n)")
    record = read_sgf(text)
    game = record.games[0]
    assert record.names == ("ann", "bo") and record.match_length == 0
    assert [a.play for a in game.actions] == ["8/5 6/5", "24/18 13/9"]
    assert game.winner == 1 and game.points == 1 and game.resigned
    assert read_record(text).games[0].winner == 1   # told apart from .mat by its first character


@pytest.mark.parametrize("text, line, words", [
    ("", 1, "no game tree"),
    ("hello", 1, "expected '('"),
    ("(;FF[4]GM[1]PW[a]PB[b])", 1, "not a backgammon game"),
    (HEAD + ";W[31hefe]\n;W[64aglp])", 3, "moves twice"),
    (HEAD + ";W[31hemg])", 2, "not a legal play"),
    (HEAD + ";W[71hefe])", 2, "is not a roll and play"),
    (HEAD + ";B[take])", 2, "take without a double"),
    (HEAD + ";W[31hefe]\n;B[double]\n;W[take]\n;B[double])", 5, "opponent owns the cube"),
    (HEAD + ";W[31hefe", 2, "never closed"),
    (HEAD + ";W[31hefe]", 2, "ends inside a game tree"),
    (HEAD.replace("RE[W+1]", "RE[X+1]") + ")", 1, "not a result"),
    (HEAD.replace("length:0", "length:5").replace("ws:0", "ws:5") + ")", 1, "past the 5-point match"),
    (HEAD + ";AB[a][b]W[31hefe])", 2, "position setup"),
    (HEAD.replace("PW[a]", "RU[Nackgammon]PW[a]") + ")", 1, "Nackgammon"),
    ("(;FF[4]GM[6]MI[length:0][game:0]PW[a]PB[b]\n;W[31hefe]\n)(;FF[4]GM[6]MI[length:0][game:1]PW[a]PB[b])",
     3, "game 1 has no result"),
])
def test_malformed_sgf_names_the_line(text, line, words):
    with pytest.raises(SgfFileError) as err:
        read_sgf(text)
    message = str(err.value)
    assert message.startswith(f"line {line}:") and words in message, message


def test_cli_reads_sgf_and_bad_sgf_is_one_line_exit_2(tmp_path, capsys):
    good = tmp_path / "g.sgf"
    good.write_text("(;FF[4]GM[6]MI[length:0][game:0][ws:0][bs:0]PW[ann]PB[bo]RE[B+1R]\n"
                    ";W[31hefe]\n;B[64aglp]\n)")
    assert main(["analyse", str(good), "--ply", "1", "--evaluator", "pubeval", "--no-progress"]) == 0
    assert "Rating" in capsys.readouterr().out
    bad = tmp_path / "b.sgf"
    bad.write_text(HEAD + ";W[31hemg])")
    assert main(["analyse", str(bad), "--evaluator", "pubeval", "--no-progress"]) == 2
    out, err = capsys.readouterr()
    assert not out and err.count("\n") == 1 and "line 2" in err and "not a legal play" in err
