"""`tdgammon eval` with the cube options: text, --json, --batch, Match IDs, errors."""

import io
import json

import pytest

from engine.formats.matchid import decode_match_id
from scripts.cli import main

START = "4HPwATDgc/ABMA"


def run(capsys, monkeypatch, argv, stdin=""):
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_text_shows_gnubg_like_cube_analysis(capsys, monkeypatch):
    code, out, err = run(capsys, monkeypatch, ["eval", START, "--evaluator", "pubeval"])
    assert code == 0 and err == ""
    for text in ("Cube analysis", "No double", "Double, take", "Double, pass", "Proper cube action: No double, take",
                 "Match ID:"):
        assert text in out


def test_batch_json_has_cube_object(capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, ["eval", "--batch", "--evaluator", "pubeval"], f"{START}\n{START}\n")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(lines) == 2
    for rec in lines:
        assert {"position", "probs", "equity", "cube"} <= set(rec)
        cube = rec["cube"]
        assert {"no_double", "double_take", "double_pass", "action"} <= set(cube)
        assert cube["double_pass"] == 1.0
        assert "money play" in cube["settings"] and "Jacoby off" in cube["settings"]


def test_match_options_and_match_id_out_and_in(capsys, monkeypatch):
    code, out, _ = run(capsys, monkeypatch, ["eval", START, "--evaluator", "pubeval", "--json", "--match", "7",
                                             "--score", "3-5", "--cube", "2", "--owner", "me"])
    assert code == 0
    cube = json.loads(out)["cube"]
    assert "mwc" in cube and cube["action"].startswith(("No redouble", "Redouble", "Too good to redouble"))
    state = decode_match_id(cube["match_id"])
    me = state.on_roll
    assert state.match_length == 7 and state.cube_value == 2 and state.cube_owner == me
    assert (state.score[me], state.score[1 - me]) == (3, 5)
    code, out2, _ = run(capsys, monkeypatch, ["eval", START, "--evaluator", "pubeval", "--json",
                                              "--match-id", cube["match_id"]])
    assert code == 0 and json.loads(out2)["cube"] == cube


def test_gnubg_match_id_crawford(capsys, monkeypatch):
    # gnubg printed sgHgAGAAIAAE for a 7-point match at 6-4, Crawford game, player 0 on roll.
    code, out, _ = run(capsys, monkeypatch, ["eval", START, "--evaluator", "pubeval", "--json",
                                             "--match-id", "sgHgAGAAIAAE"])
    cube = json.loads(out)["cube"]
    assert code == 0 and cube["action"] == "Never double, take (dead cube)" and not cube["may_double"]
    assert "Crawford game" in cube["settings"] and "score 6-4" in cube["settings"]


def test_a_position_carrying_its_match_state_sets_the_cube(capsys, monkeypatch):
    """gnubg's "Position ID:Match ID" and an XGID bring their cube and score, in one position and in
    --batch; an explicit cube option replaces what the ID carries."""
    def cube_of(text, *options, batch=False):
        argv = ["eval", "--evaluator", "pubeval", *options] + (["--batch"] if batch else [text, "--json"])
        code, out, err = run(capsys, monkeypatch, argv, f"{text}\n" if batch else "")
        assert code == 0 and err == ""
        return json.loads(out)["cube"]

    crawford = cube_of(f"{START}:sgHgAGAAIAAE")
    assert crawford == cube_of(START, "--match-id", "sgHgAGAAIAAE") and "Crawford game" in crawford["settings"]
    assert cube_of(f"{START}:sgHgAGAAIAAE", batch=True) == crawford
    owned = cube_of("XGID=-b----E-C---eE---c-e----B-:1:1:1:00:0:0:0:0:10")
    assert "money play, cube 2 owned by the side on roll" in owned["settings"]
    assert "centred" in cube_of(f"{START}:sgHgAGAAIAAE", "--cube", "1")["settings"]
    code, out, _ = run(capsys, monkeypatch, ["eval", START, "--evaluator", "pubeval", "--json"])
    assert "cube" not in json.loads(out)  # a bare Position ID asks nothing of the cube


@pytest.mark.parametrize("argv", [
    ["--match-id", "garbage"],
    ["--match-id", "sgHgAGAAIAAE", "--cube", "2"],
    ["--score", "1-2"],
    ["--match", "7", "--score", "7-1"],
    ["--match", "7", "--score", "one-two"],
    ["--match", "7", "--jacoby"],
    ["--cube", "3"],
    ["--match", "30"],
    [":garbage"],
])
def test_bad_cube_input_is_one_line_exit_2(capsys, monkeypatch, argv):
    suffix = argv[0] if argv[0].startswith(":") else ""  # a bad Match ID after the Position ID
    code, out, err = run(capsys, monkeypatch, ["eval", START + suffix, "--evaluator", "pubeval",
                                               *argv[1 if suffix else 0:]])
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "error" in err


def test_ply_3_cube_is_the_3ply_decision(capsys, monkeypatch):
    from engine.cube.equity import CubeInfo
    from engine.cube.lookahead import cube_decision_2ply, cube_decision_3ply
    from engine.position import Position
    from models.loader import load_network

    position = "bF3E4ADNbQYHAA"   # a take at 3-ply, a pass at 2-ply (docs/cube.md)
    code, out, _ = run(capsys, monkeypatch, ["eval", position, "--json", "--ply", "3", "--cube", "1"])
    record = json.loads(out)
    cube = record["cube"]
    board, evaluator = Position.from_id(position).board, load_network()
    want = cube_decision_3ply(board, evaluator, CubeInfo())   # its own cubeless 3-ply; eval hands it its own
    assert code == 0 and cube["ply"] == 3 and cube["action"] == want.action
    assert cube["cubeless_equity"] == record["equity"] == pytest.approx(want.cubeless_equity, abs=1e-6)
    assert (cube["no_double"], cube["double_take"]) == pytest.approx((want.no_double, want.double_take), abs=1e-6)
    two = cube_decision_2ply(board, evaluator, CubeInfo())
    assert abs(two.no_double - want.no_double) > 1e-3   # a ply deeper, another value
