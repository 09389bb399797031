"""Match play in the web game: the score, the Crawford game, post-Crawford dead cubes, the end at
N points, the computer's cube and resignation answers by match equity, undo stopping at the
opponent's roll, a friend's answer to a resignation, the match's .mat, and every level for
either colour."""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("fastapi")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from engine.cube.equity import CubeInfo
from scripts.webapp.game import Game, SequenceDice
from scripts.webapp.record import game_mat
from scripts.webapp.server import create_app
from tests.test_web_cube import GammonMoverEvaluator, game_of, make_client, ok, play_turn, refused
from tests.web_helpers import new_game, post


def resign(client, gid, token, points):
    return ok(client.post(f"/api/games/{gid}/resign", json={"token": token, "points": points}))


@pytest.mark.parametrize("length", [-1, 26, 100, "three", 2.5])
def test_bad_match_lengths_are_refused_with_json(length):
    client, _ = make_client()
    res = client.post("/api/games", json={"mode": "hotseat", "match": length})
    assert res.status_code == 422, res.text
    assert res.json()["error"].startswith("bad request: match")
    assert client.get("/api/history").status_code == 200        # still serving


def test_a_game_object_refuses_a_match_beyond_the_table():
    with pytest.raises(Exception) as err:
        Game("x", "hotseat", SequenceDice(), match_length=26)
    assert getattr(err.value, "status", None) == 400 and "1-25 points" in err.value.message


def test_hotseat_match_score_crawford_post_crawford_and_the_end_at_n_points():
    # Opening rolls: game 1 White 3-1, game 2 Black (1-3), game 3 White (3-1); later dice seeded.
    client, _ = make_client(dice=[3, 1])
    gid, token, state = new_game(client, mode="hotseat", match=3)
    assert state["match"]["length"] == 3 and state["match"]["score"] == {"white": 0, "black": 0}
    assert state["cube"]["enabled"] and state["match"]["game"] == 1 and not state["match"]["crawford"]
    game = game_of(client, gid)

    # Game 1: White resigns a gammon: Black 2, the next game is dealt at once and is the Crawford game.
    ok(post(client, gid, "roll", token))
    state = resign(client, gid, token, 2)
    assert state["phase"] == "opening" and state["result"] is None
    assert state["match"]["score"] == {"white": 0, "black": 2} and state["match"]["game"] == 2
    assert state["match"]["crawford"] and state["match"]["results"][0]["kind"] == "gammon"
    assert state["message"].startswith("White 0, Black 2 (match to 3): Crawford game, no doubling. Game 2")
    assert state["cube"]["value"] == 1 and not state["can_undo_move"]

    # Game 2, Crawford: nobody may double.
    game.dice_source.values = [1, 3]
    state = ok(post(client, gid, "roll", token))
    assert state["turn"] == "black" and state["last_move"] is None
    assert state["board"]["points"][23] == 2 and state["board"]["points"][0] == -2   # a fresh board
    state = play_turn(client, gid, token)
    assert state["phase"] == "roll" and state["turn"] == "white" and not state["can_double"]
    refused(client, gid, "double", token, 409, "Crawford game")
    ok(post(client, gid, "roll", token))
    state = play_turn(client, gid, token)
    assert state["turn"] == "black" and not state["can_double"]
    state = resign(client, gid, token, 1)                          # Black resigns: White 1
    assert state["match"]["score"] == {"white": 1, "black": 2} and state["match"]["game"] == 3
    assert not state["match"]["crawford"] and state["match"]["post_crawford"]

    # Game 3, post-Crawford: the leader's cube is dead, the trailer doubles.
    game.dice_source.values = [3, 1]
    ok(post(client, gid, "roll", token))
    state = play_turn(client, gid, token)
    assert state["turn"] == "black" and not state["can_double"]
    refused(client, gid, "double", token, 409, "the cube is dead")
    # Undo in a match: allowed before the opponent rolls.
    assert state["can_undo_move"]
    state = ok(post(client, gid, "undo-move", token))
    assert state["turn"] == "white" and state["phase"] == "move"
    state = play_turn(client, gid, token)
    ok(post(client, gid, "roll", token))
    state = play_turn(client, gid, token)
    assert state["turn"] == "white" and state["can_double"]
    ok(post(client, gid, "double", token))
    state = ok(post(client, gid, "take", token))
    assert state["cube"]["value"] == 2 and state["cube"]["owner"] == "black"
    ok(post(client, gid, "roll", token))
    state = play_turn(client, gid, token)
    assert state["turn"] == "black"
    state = resign(client, gid, token, 1)                          # 2 points: White reaches 3
    assert state["phase"] == "over" and state["match"]["winner"] == "white"
    assert state["match"]["score"] == {"white": 3, "black": 2}
    assert state["result"]["match_winner"] == "white" and state["result"]["points"] == 2
    assert state["message"].startswith("White wins the match 3-2")
    for action in ("roll", "double", "undo-move"):
        assert post(client, gid, action, token).status_code == 409

    mat = client.get(f"/api/games/{gid}/mat").text
    assert mat.startswith(" 3 point match")
    assert [line.strip() for line in mat.splitlines() if line.strip().startswith("Game")] == \
        ["Game 1", "Game 2", "Game 3"]
    assert "Doubles => 2" in mat and "Takes" in mat
    assert " White : 1" in mat and "Black : 2" in mat                # the score before game 3
    assert mat.count("Wins 2 points") == 2 and mat.count("Wins 1 point\n") == 1
    history = client.get("/api/history").json()["games"]
    assert history[0]["match"] == {"length": 3, "score": [3, 2]}


def test_undo_in_a_match_stops_at_the_computers_roll_and_casual_games_keep_it():
    for match, undo in ((0, True), (3, False)):
        client, _ = make_client(dice=[3, 1], win=0.5)          # even games: the computer never doubles
        gid, token, _ = new_game(client, mode="computer", level="medium", color="white", match=match)
        ok(post(client, gid, "roll", token))
        state = play_turn(client, gid, token)                  # White's move, then the computer's
        assert state["phase"] == "roll" and state["turn"] == "white"
        assert [e["side"] for e in state["log"] if e.get("steps") is not None] == ["white", "black"]
        assert state["can_undo_move"] is undo
        if undo:
            assert ok(post(client, gid, "undo-move", token))["phase"] == "move"
        else:
            refused(client, gid, "undo-move", token, 409, "no move to undo")


def test_a_match_survives_the_store_round_trip():
    client, _ = make_client(dice=[3, 1])
    gid, token, _ = new_game(client, mode="hotseat", match=5)
    ok(post(client, gid, "roll", token))
    resign(client, gid, token, 3)                                  # Black 3 of 5
    game = game_of(client, gid)
    again = Game.from_record(game.to_record(), SequenceDice(), None)
    assert again.state(token) == game.state(token)
    assert game_mat(again.to_record()) == game_mat(game.to_record())


def test_the_computer_doubles_by_match_equity_and_a_one_point_match_has_no_cube():
    # Every side on roll is a 90% favourite without gammons: a money double, a pass.
    client, _ = make_client(win=0.1)
    gid, token, _ = new_game(client, mode="computer", level="medium", color="white", match=1)
    state = ok(post(client, gid, "roll", token))
    for _ in range(6):                                             # a 1-point match: the cube is dead
        if state["phase"] == "over":
            break
        assert state["phase"] != "doubled" and not state["can_double"]
        if state["phase"] == "roll":
            state = ok(post(client, gid, "roll", token))
        state = play_turn(client, gid, token)
    assert not any(e.get("cube") for e in state["log"])

    client, _ = make_client(dice=[3, 1], win=0.1)              # White opens
    gid, token, _ = new_game(client, mode="computer", level="medium", color="white", match=3)
    ok(post(client, gid, "roll", token))
    state = play_turn(client, gid, token)
    # The computer was on roll with a 90% game at 3-away/3-away: it doubled; the human answers.
    assert state["phase"] == "doubled" and state["cube"]["offered_by"] == "black", state["message"]
    state = ok(post(client, gid, "pass", token))
    assert state["match"]["score"] == {"white": 0, "black": 1} and state["phase"] == "opening"
    assert state["log"][-1]["text"] == "Game 2"


def test_the_computer_weighs_a_resignation_by_match_equity():
    game = Game("m", "hotseat", SequenceDice(), match_length=3)
    from scripts.webapp.computer import ComputerPlayer

    computer = ComputerPlayer(GammonMoverEvaluator(), "easy")
    board = game.board                                              # the computer not on roll: a sure gammon
    money, match = CubeInfo(), game.cube_info(1)
    assert not computer.accepts_resignation(board, False, 1, money)
    assert computer.accepts_resignation(board, False, 2, money)
    assert not computer.accepts_resignation(board, False, 1, match)
    assert computer.accepts_resignation(board, False, 2, match)
    # At 1-away a single game wins the match as surely as a gammon: the computer takes it.
    game.match.score = [0, 2]
    assert computer.accepts_resignation(board, False, 1, game.cube_info(1))


def test_resign_against_the_computer_in_a_match_counts_in_the_score():
    client = TestClient(create_app(GammonMoverEvaluator(), dice_factory=lambda: SequenceDice([3, 1], 1), seed=1))
    gid, token, _ = new_game(client, mode="computer", level="easy", match=3)
    state = ok(post(client, gid, "roll", token))
    assert state["turn"] == "white" and state["phase"] == "move"
    state = resign(client, gid, token, 1)
    assert "refuses the resignation of a single game" in state["log"][-1]["text"]
    state = resign(client, gid, token, 2)
    assert state["match"]["score"] == {"white": 0, "black": 2} and state["match"]["crawford"]


def test_a_friend_accepts_or_refuses_a_resignation_in_their_page():
    client, _ = make_client(dice=[3, 1])
    gid, host, _ = new_game(client, mode="friend", color="white", cube=True)
    guest = ok(client.post(f"/api/games/{gid}/join"))["token"]
    ok(post(client, gid, "roll", host))
    state = resign(client, gid, host, 2)
    assert state["phase"] == "resign" and state["resign_offer"] == {"by": "white", "points": 2, "value": 2}
    assert not state["can_answer_resign"] and not state["can_resign"]
    assert state["message"] == "White offers to resign a gammon (2 points): Black to accept or refuse"
    refused(client, gid, "accept-resign", host, 409, "you offered the resignation")
    for action in ("confirm", "undo-step", "double"):
        assert post(client, gid, action, host).status_code == 409
    seen = client.get(f"/api/games/{gid}", params={"token": guest}).json()
    assert seen["can_answer_resign"]
    state = ok(post(client, gid, "refuse-resign", guest))
    assert state["phase"] == "move" and state["turn"] == "white" and state["resign_offer"] is None
    assert state["log"][-1]["text"] == "Black refuses the resignation of a gammon: play on"
    refused(client, gid, "refuse-resign", guest, 409, "no resignation is offered")
    resign(client, gid, host, 1)
    state = ok(post(client, gid, "accept-resign", guest))
    assert state["phase"] == "over" and state["result"]["winner"] == "black" and state["result"]["points"] == 1


@pytest.mark.slow
@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
@pytest.mark.parametrize("color", ["white", "black"])
def test_every_level_plays_either_colour(level, color):
    from models.loader import load_evaluator

    app = create_app(load_evaluator("pubeval"), dice_factory=lambda: SequenceDice(seed=7), seed=7)
    client = TestClient(app)
    gid, token, state = new_game(client, mode="computer", level=level, color=color)
    computer = "black" if color == "white" else "white"
    assert state["level"] == level and state["seats"][computer]["kind"] == "computer"
    state = ok(post(client, gid, "roll", token))
    for _ in range(40):
        played = [e for e in state["log"] if e["side"] == computer and e.get("steps") is not None]
        if len(played) >= 3:
            break
        assert state["turn"] == color, state["message"]
        if state["phase"] == "roll":
            state = ok(post(client, gid, "roll", token))
        state = play_turn(client, gid, token)
    assert len(played) >= 3 and all(e["move"] or e["text"].endswith("no legal play") for e in played)


@pytest.mark.gnubg
def test_gnubg_imports_a_web_match(tmp_path):
    import json
    import subprocess

    from tests.conftest import GNUBG

    client, _ = make_client(dice=[3, 1], seed=4)
    gid, token, _ = new_game(client, mode="hotseat", match=3)
    game = game_of(client, gid)
    ok(post(client, gid, "roll", token))                 # game 1: White opens, Black doubles, White passes
    play_turn(client, gid, token)
    ok(post(client, gid, "double", token))
    ok(post(client, gid, "pass", token))
    game.dice_source.values = [3, 1]                     # game 2: double taken, redouble passed
    ok(post(client, gid, "roll", token))
    play_turn(client, gid, token)
    ok(post(client, gid, "double", token))
    ok(post(client, gid, "take", token))
    ok(post(client, gid, "roll", token))
    play_turn(client, gid, token)
    ok(post(client, gid, "double", token))
    state = ok(post(client, gid, "pass", token))
    assert state["match"]["score"] == {"white": 2, "black": 1} and state["match"]["crawford"]
    for _ in range(1000):                                # the Crawford game and any after: played out
        if state["phase"] == "over":
            break
        if state["phase"] in ("opening", "roll"):
            state = ok(post(client, gid, "roll", token))
        if state["phase"] == "move":
            state = play_turn(client, gid, token)
    assert state["phase"] == "over"
    path = tmp_path / "match.mat"
    path.write_text(client.get(f"/api/games/{gid}/mat").text)
    script = tmp_path / "check.py"
    script.write_text(
        "import gnubg, json\n"
        f"gnubg.command('import mat {path}')\n"
        "m = gnubg.match(analysis=0, boards=0, statistics=0, verbose=0)\n"
        "print('RESULT ' + json.dumps([m['match-info']['match-length'], "
        "[[g['info']['winner'], g['info']['points-won'], g['info']['score-X'], g['info']['score-O']] "
        "for g in m['games']]]))\n")
    proc = subprocess.run([GNUBG, "-t", "-q", "-p", str(script)], capture_output=True, text=True, timeout=120)
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    length, games = json.loads(line[7:])
    results = state["match"]["results"]
    assert length == 3 and len(games) == len(results) >= 3
    assert [g[:2] for g in games] == [["X" if r["winner"] == "white" else "O", r["points"]] for r in results]
    assert [g[2:] for g in games[:3]] == [[0, 0], [0, 1], [2, 1]]


@pytest.mark.parametrize("score, crawford, doubles", [
    (None, False, False),          # money play: an even game is no double
    ([2, 1], False, True),         # post-Crawford, the computer (Black) trails: it doubles at once
    ([2, 1], True, False),         # the Crawford game: no doubling
    ([1, 2], False, False),        # post-Crawford, the computer leads: its cube is dead
])
def test_the_computers_cube_follows_the_match_score(score, crawford, doubles):
    client, _ = make_client(dice=[3, 1], win=0.5)                  # White opens; every game even
    gid, token, _ = new_game(client, mode="computer", level="medium", cube=True, match=0 if score is None else 3)
    game = game_of(client, gid)
    if score is not None:
        game.match.score, game.match.crawford, game.match.crawford_done = score, crawford, not crawford
    ok(post(client, gid, "roll", token))
    state = play_turn(client, gid, token)
    assert (state["phase"] == "doubled") is doubles, state["message"]
    if doubles:
        assert state["cube"]["offered_by"] == "black" and state["can_take"]
    else:
        assert [e["side"] for e in state["log"] if e.get("steps") is not None] == ["white", "black"]


def test_a_friend_match_goes_on_with_the_same_seats_after_an_accepted_resignation():
    client, _ = make_client(dice=[3, 1])
    gid, host, _ = new_game(client, mode="friend", color="white", match=5)
    guest = ok(client.post(f"/api/games/{gid}/join"))["token"]
    ok(post(client, gid, "roll", host))
    s = client.get(f"/api/games/{gid}", params={"token": host}).json()["legal_steps"][0]
    ok(post(client, gid, "step", host, **{"from": s["from"], "to": s["to"], "die": s["die"]}))
    state = resign(client, gid, host, 3)
    assert state["phase"] == "resign" and state["steps_taken"]          # the step stays shown
    state = ok(post(client, gid, "accept-resign", guest))
    assert state["match"]["score"] == {"white": 0, "black": 3} and state["phase"] == "opening"
    assert state["you"] == ["black"] and state["message"].startswith("White 0, Black 3 (match to 5). Game 2")
    state = ok(post(client, gid, "roll", guest))                     # either seat rolls the opening
    assert state["phase"] == "move"


def test_between_games_the_final_position_stays_until_the_opening_roll():
    client, _ = make_client(dice=[3, 1, 5, 2])
    gid, token, _ = new_game(client, mode="hotseat", match=3)
    ok(post(client, gid, "roll", token))
    played = play_turn(client, gid, token)                         # White 3-1, then Black doubles
    ok(post(client, gid, "double", token))
    state = ok(post(client, gid, "pass", token))                   # White passes: Black 1, game 2
    assert state["phase"] == "opening" and state["board"] == played["board"]
    assert state["last_move"]["side"] == "white" and state["last_move"]["dice"] == [3, 1]
    state = ok(post(client, gid, "roll", token))
    assert state["last_move"] is None and state["board"]["points"][5] == 5 and state["board"]["points"][7] == 3
    assert state["board"]["points"][18] == -5 and state["board"]["points"][16] == -3
