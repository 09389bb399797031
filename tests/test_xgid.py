"""XGID: a published example, round trips, gnubg's own conversion, and the commands that take one."""

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from engine.errors import DiceError, PositionIdError
from engine.formats.matchid import CENTRED, MatchState, decode_match_id, encode_match_id
from engine.formats.xgid import (decode_xgid, encode_xgid, position_and_roll, position_and_state,
                                position_from_text)
from engine.position import Position
from tests.conftest import GNUBG

DATA = Path(__file__).resolve().parent / "data"
# The opening position as eXtreme Gammon writes it (X on roll, money, dice not rolled).
OPENING = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"


def oracle_positions(n):
    lines = (DATA / "gnubg-legal-moves.jsonl").read_text().splitlines()[:n]
    return [Position.from_id(json.loads(line)["position"]) for line in lines]


STATES = [MatchState(on_roll=1, turn=1),
          MatchState(cube_value=4, cube_owner=0, on_roll=1, turn=1, dice=(6, 3), match_length=7, score=(2, 5)),
          MatchState(cube_value=2, cube_owner=1, on_roll=1, turn=1, match_length=5, score=(4, 1), crawford=False),
          MatchState(on_roll=1, turn=1, match_length=5, score=(3, 4), crawford=True),
          MatchState(cube_value=2, cube_owner=CENTRED, on_roll=1, turn=0, doubled=True, jacoby=True)]


def test_published_opening_position():
    board, state = decode_xgid(OPENING)
    assert Position(board) == Position.start()
    assert state.cube_value == 1 and state.cube_owner == CENTRED and state.match_length == 0
    assert encode_xgid(board, state) == OPENING


def test_opponent_on_roll_reads_as_the_side_on_roll():
    # The same board with O on roll (field 4 = -1) and O owning a 2-cube at 2-3 to 7.
    board, state = decode_xgid("XGID=-b----E-C---eE---c-e----B-:1:-1:-1:00:2:3:0:7:10")
    assert state.on_roll == 1 and state.cube_owner == 1 and state.score == (2, 3)
    assert encode_xgid(board, state) == "XGID=-b----E-C---eE---c-e----B-:1:1:1:00:3:2:0:7:10"


@pytest.mark.parametrize("state", STATES)
def test_round_trip(state):
    for position in oracle_positions(25):
        text = encode_xgid(position.board, state)
        board, back = decode_xgid(text)
        assert np.array_equal(board, position.board)
        assert back == state
        assert encode_xgid(board, back) == text


@pytest.mark.parametrize("text", [
    "XGID=-b----E-C---eE---c-e----B:0:0:1:00:0:0:0:0:10",     # 25 board characters
    "XGID=-b----E-C---eE---c-e----B-:0:0:2:00:0:0:0:0:10",    # on roll 2
    "XGID=-b----E-C---eE---c-e----B-:0:0:1:71:0:0:0:0:10",    # a die of 7
    "XGID=-b----E-C---eE---c-e----P-:0:0:1:00:0:0:0:0:10",    # 16 checkers
    "XGID=-b----E-C---eE---c-e----B-:0:0:1",                  # too few fields
    "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:7:0:0:5:10",    # score past the match
])
def test_malformed(text):
    with pytest.raises(PositionIdError):
        decode_xgid(text)


def test_position_arguments_take_either_id(capsys):
    from scripts.cli import main

    assert position_from_text(OPENING) == position_from_text("4HPwATDgc/ABMA")
    assert position_from_text("4HPwATDgc/ABMA:cAkAAAAAAAAA") == position_from_text("4HPwATDgc/ABMA")  # gnubg ID
    assert main(["hint", OPENING, "31", "--evaluator", "pubeval", "--json"]) == 0
    by_xgid = json.loads(capsys.readouterr().out)
    assert main(["hint", "4HPwATDgc/ABMA", "31", "--evaluator", "pubeval", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == by_xgid
    assert main(["show", "4HPwATDgc/ABMA", "--xgid"]) == 0
    out = capsys.readouterr().out
    assert OPENING in out and "Position ID: 4HPwATDgc/ABMA" in out
    assert main(["show", "XGID=nonsense"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_the_roll_an_id_carries_is_played_when_no_dice_are_given(capsys):
    """An XGID or gnubg ID rolled mid-turn brings its roll to hint and moves; dice given win;
    an ID with no roll (or a double pending) needs DICE, refused in one line."""
    from scripts.cli import main

    rolled = OPENING.replace(":00:", ":52:")
    gnubg_id = "4HPwATDgc/ABMA:" + encode_match_id(MatchState(on_roll=1, turn=1, dice=(5, 2)))
    start = Position.start()
    assert position_and_roll(rolled, None) == (start, (5, 2)) == position_and_roll(gnubg_id, None)
    assert position_and_roll(rolled, "31") == (start, (3, 1))
    for unrolled in (OPENING, "4HPwATDgc/ABMA", encode_xgid(start.board, STATES[4])):
        with pytest.raises(DiceError):
            position_and_roll(unrolled, None)
    assert main(["hint", rolled, "--evaluator", "pubeval", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["dice"] == [5, 2]
    assert main(["moves", gnubg_id, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["dice"] == [5, 2]
    assert main(["hint", "4HPwATDgc/ABMA", "--evaluator", "pubeval"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.gnubg
def test_gnubg_converts_our_xgids_to_the_same_ids(tmp_path):
    cases = [(p, s) for s in STATES[:4] for p in oracle_positions(8)]
    xgids = [encode_xgid(p.board, s) for p, s in cases]
    script = tmp_path / "conv.py"
    script.write_text("import gnubg\n"
                      f"for x in {xgids!r}:\n"
                      "    gnubg.command('set xgid ' + x)\n"
                      "    print('IDS', gnubg.positionid(), gnubg.matchid())\n")
    out = subprocess.run([GNUBG, "-t", "-q", "-p", str(script)], capture_output=True, text=True, timeout=120).stdout
    ids = [line.split()[1:] for line in out.splitlines() if line.startswith("IDS ")]
    assert len(ids) == len(cases)
    for (position, state), (pid, mid) in zip(cases, ids):
        assert pid == position.id
        got = decode_match_id(mid)
        assert position_and_state(f"{pid}:{mid}") == (position, got)  # gnubg's Copy ID form
        assert (got.cube_value, got.cube_owner, got.on_roll, got.crawford, got.dice, got.match_length,
                got.score) == (state.cube_value, state.cube_owner, state.on_roll, state.crawford, state.dice,
                               state.match_length, state.score)
