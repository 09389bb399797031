"""The web game "with cube": double/take/pass through the API, the computer's cube actions,
results times the cube, undo and rematch with the cube, and every refusal (4xx, nothing changed).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("fastapi")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from engine.cube.equity import MAX_CUBE, CubeInfo
from scripts.webapp.computer import ComputerPlayer
from scripts.webapp.game import Game, SequenceDice
from scripts.webapp.server import create_app
from tests.web_helpers import new_game, post


class FixedEvaluator:
    """Every afterstate: the side that just moved wins with probability `win`, no gammons.

    So the side on roll, before its roll, always sees 1 - win: 0.1 makes every side on roll
    a 90% favourite (engine.cube.equity: "Double, pass"), 0.5 an even game ("No double, take").
    """

    name = "fixed"

    def __init__(self, win: float) -> None:
        self.win = win

    def evaluate(self, afterstates: np.ndarray) -> np.ndarray:
        out = np.zeros((len(afterstates), 5))
        out[:, 0] = self.win
        return out


def make_client(dice=None, win=0.5, seed=0):
    evaluator = FixedEvaluator(win)
    app = create_app(evaluator, dice_factory=lambda: SequenceDice(list(dice or []), seed), seed=seed)
    return TestClient(app), evaluator


def ok(res) -> dict:
    assert res.status_code == 200, res.text
    return res.json()


def refused(client, gid, action, token, status, words):
    """A refusal: the status, the words in the message, and the game unchanged."""
    before = client.get(f"/api/games/{gid}").json()
    res = post(client, gid, action, token)
    assert res.status_code == status, res.text
    assert words in res.json()["error"], res.json()["error"]
    assert client.get(f"/api/games/{gid}").json() == before


def play_turn(client, gid, token):
    """Play the first offered step until the move is complete, then confirm."""
    state = client.get(f"/api/games/{gid}", params={"token": token}).json()
    while state["legal_steps"]:
        s = state["legal_steps"][0]
        state = ok(post(client, gid, "step", token, **{"from": s["from"], "to": s["to"], "die": s["die"]}))
    return ok(post(client, gid, "confirm", token))


def game_of(client, gid) -> Game:
    return client.app.state.hub.get(gid)


def test_cubeless_game_refuses_the_cube():
    client, _ = make_client(dice=[5, 3])
    gid, token, state = new_game(client, mode="hotseat")
    assert state["cube"] == {"enabled": False, "value": 1, "owner": None, "offered_by": None, "offered_value": None}
    post(client, gid, "roll", token)
    play_turn(client, gid, token)                     # Black to roll: it could double in a cube game
    before = client.get(f"/api/games/{gid}").json()
    assert before["phase"] == "roll" and not before["can_double"]
    res = post(client, gid, "double", token)
    assert res.status_code == 409 and "without the cube" in res.json()["error"]
    res = post(client, gid, "take", token)
    assert res.status_code == 409 and "no double is pending" in res.json()["error"]
    assert post(client, gid, "pass", token).status_code == 409
    assert client.get(f"/api/games/{gid}").json() == before


def test_hotseat_double_take_redouble_pass():
    client, _ = make_client(dice=[5, 3])
    gid, token, state = new_game(client, mode="hotseat", cube=True)
    assert state["cube"]["enabled"] and not state["can_double"]      # no double before the opening roll
    refused(client, gid, "double", token, 409, "opening roll")
    state = ok(post(client, gid, "roll", token))                    # White opens 5-3
    assert state["turn"] == "white" and state["phase"] == "move" and not state["can_double"]
    refused(client, gid, "double", token, 409, "only before rolling")
    state = play_turn(client, gid, token)
    assert state["turn"] == "black" and state["phase"] == "roll" and state["can_double"]
    assert state["message"] == "Black to roll or double"

    state = ok(post(client, gid, "double", token))
    assert state["phase"] == "doubled" and state["turn"] == "black"
    assert state["cube"] == {"enabled": True, "value": 1, "owner": None, "offered_by": "black", "offered_value": 2}
    assert state["can_take"] and state["can_pass"] and not state["can_roll"] and not state["can_double"]
    assert state["message"] == "Black doubles to 2: White to take or pass"
    assert state["log"][-1]["cube"] == "double" and state["log"][-1]["text"] == "Black doubles to 2"
    pending = client.get(f"/api/games/{gid}").json()
    for action, words in (("roll", "must be taken or passed"), ("double", "must be taken or passed"),
                          ("undo-move", "must be taken or passed"), ("confirm", "must be taken or passed")):
        refused(client, gid, action, token, 409, words)
    assert client.get(f"/api/games/{gid}").json() == pending

    state = ok(post(client, gid, "take", token))
    assert state["cube"]["value"] == 2 and state["cube"]["owner"] == "white"
    assert state["phase"] == "roll" and state["turn"] == "black" and state["can_roll"] and not state["can_double"]
    assert state["log"][-1] == {"side": "white", "dice": None, "move": "", "cube": "take",
                                "text": "White takes: the cube is at 2, White owns it",
                                "steps": None, "takeback": False, "undone": False}
    before = client.get(f"/api/games/{gid}").json()
    refused(client, gid, "double", token, 409, "White owns the cube")
    refused(client, gid, "take", token, 409, "no double is pending")
    assert client.get(f"/api/games/{gid}").json() == before

    ok(post(client, gid, "roll", token))
    state = play_turn(client, gid, token)
    assert state["turn"] == "white" and state["can_double"] and state["message"] == "White to roll or double"
    state = ok(post(client, gid, "double", token))                  # White redoubles to 4
    assert state["cube"]["offered_value"] == 4 and state["message"] == "White doubles to 4: Black to take or pass"
    state = ok(post(client, gid, "pass", token))
    assert state["phase"] == "over"
    assert state["result"] == {"winner": "white", "points": 2, "kind": "double passed", "resigned": False,
                               "passed": True, "cube": 2}
    assert state["message"] == "White wins: Black passed the double: 2 points"
    assert state["log"][-1]["text"] == "Black passes: White wins 2 points"
    assert not state["can_undo_move"]
    refused(client, gid, "undo-move", token, 409, "game is over")
    refused(client, gid, "take", token, 409, "game is over")
    refused(client, gid, "double", token, 409, "game is over")


def test_friend_game_cube_token_rules():
    client, _ = make_client(dice=[5, 3])
    gid, host, _ = new_game(client, mode="friend", cube=True)
    guest = ok(client.post(f"/api/games/{gid}/join"))["token"]
    post(client, gid, "roll", host)                                 # White (host) opens 5-3
    play_turn(client, gid, host)
    before = client.get(f"/api/games/{gid}").json()
    assert before["turn"] == "black"
    refused(client, gid, "double", host, 409, "black's turn, not yours")
    refused(client, gid, "double", "forged-token", 403, "forged or stale")
    state = ok(post(client, gid, "double", guest))
    assert state["cube"]["offered_by"] == "black" and not state["can_take"]   # the doubler's own view
    host_view = client.get(f"/api/games/{gid}", params={"token": host}).json()
    assert host_view["can_take"] and host_view["can_pass"] and not host_view["can_roll"]
    pending = client.get(f"/api/games/{gid}").json()
    refused(client, gid, "take", guest, 409, "you offered the double")
    refused(client, gid, "pass", guest, 409, "you offered the double")
    refused(client, gid, "take", "forged-token", 403, "forged or stale")
    res = post(client, "no-such-game", "take", host)
    assert res.status_code == 404 and "no game with id" in res.json()["error"]
    refused(client, gid, "roll", guest, 409, "must be taken or passed")
    assert client.get(f"/api/games/{gid}").json() == pending
    state = ok(post(client, gid, "take", host))
    assert state["cube"]["owner"] == "white" and state["cube"]["value"] == 2
    # The host now owns the cube; a resignation by the guest, once accepted, counts the cube value.
    assert ok(post(client, gid, "resign", guest))["phase"] == "resign"
    state = ok(post(client, gid, "accept-resign", host))
    assert state["result"]["winner"] == "white" and state["result"]["points"] == 2 and state["result"]["resigned"]
    rematch = ok(post(client, gid, "rematch", host))
    assert rematch["state"]["cube"]["enabled"] and rematch["state"]["cube"]["value"] == 1


@pytest.mark.parametrize("win, answer", [(0.1, "pass"), (0.5, "take")])
def test_the_computer_answers_a_double(win, answer):
    client, evaluator = make_client(dice=[3, 5])                # Black (the computer) opens
    gid, token, _ = new_game(client, mode="computer", level="medium", cube=True)
    state = ok(post(client, gid, "roll", token))
    assert state["turn"] == "white" and state["phase"] == "roll" and state["can_double"]
    evaluator.win = win             # from White's view on roll: 1 - win
    state = ok(post(client, gid, "double", token))
    if answer == "pass":
        assert state["phase"] == "over" and state["result"]["winner"] == "white" and state["result"]["points"] == 1
        assert state["log"][-1]["text"] == "Black passes: White wins 1 point" and state["log"][-1]["cube"] == "pass"
    else:
        assert state["phase"] == "roll" and state["turn"] == "white" and state["can_roll"]
        assert state["cube"]["value"] == 2 and state["cube"]["owner"] == "black" and not state["can_double"]
        assert [e["cube"] for e in state["log"][-2:]] == ["double", "take"]


def test_the_computer_doubles_and_the_human_answers():
    client, evaluator = make_client(dice=[5, 3], win=0.1)    # every side on roll is a 90% favourite
    gid, token, _ = new_game(client, mode="computer", level="easy", cube=True)
    ok(post(client, gid, "roll", token))                     # White opens
    state = play_turn(client, gid, token)                    # then Black (computer) doubles at once
    assert state["phase"] == "doubled" and state["cube"]["offered_by"] == "black"
    assert state["can_take"] and state["can_pass"] and state["message"] == "Black doubles to 2: White to take or pass"
    state = ok(post(client, gid, "take", token))             # Black rolls and moves; the cube is White's
    assert state["phase"] == "roll" and state["turn"] == "white"
    assert state["cube"]["value"] == 2 and state["cube"]["owner"] == "white" and state["can_double"]
    assert state["log"][-1]["side"] == "black" and state["log"][-1]["move"]
    # Undo move never crosses an accepted cube action: White's move before the take stays.
    refused(client, gid, "undo-move", token, 409, "accepted double")
    assert not state["can_undo_move"]
    state = ok(post(client, gid, "double", token))           # White, 90% on roll, redoubles: Black passes
    assert state["result"]["winner"] == "white" and state["result"]["points"] == 2 and state["result"]["passed"]
    refused(client, gid, "undo-move", token, 409, "game is over")


def test_the_computer_answers_for_a_friend_who_left():
    evaluator = FixedEvaluator(0.5)
    app = create_app(evaluator, dice_factory=lambda: SequenceDice([3, 5]), disconnect_timeout=0.0)
    client = TestClient(app)
    gid, host, _ = new_game(client, mode="friend", cube=True)
    guest = ok(client.post(f"/api/games/{gid}/join"))["token"]
    post(client, gid, "roll", host)                          # Black (the guest) opens
    play_turn(client, gid, guest)
    state = ok(post(client, gid, "double", host))
    assert state["phase"] == "doubled"
    state = ok(post(client, gid, "take-over", host))         # the guest left: the computer takes
    assert state["mode"] == "computer" and state["phase"] == "roll" and state["turn"] == "white"
    assert state["cube"]["value"] == 2 and state["cube"]["owner"] == "black"


def test_the_computer_does_not_double_when_the_human_owns_the_cube():
    client, evaluator = make_client(dice=[5, 3], win=0.5)
    gid, token, _ = new_game(client, mode="computer", level="medium", cube=True)
    ok(post(client, gid, "roll", token))
    game = game_of(client, gid)
    game.cube_value, game.cube_owner = 2, 0                 # White owns the cube at 2
    evaluator.win = 0.1
    state = play_turn(client, gid, token)
    assert state["phase"] == "roll" and state["turn"] == "white"    # Black played without doubling
    assert not any(e["cube"] for e in state["log"])


def test_results_and_resignation_count_the_cube():
    client, _ = make_client()
    gid, token, _ = new_game(client, mode="hotseat", cube=True)
    game = game_of(client, gid)
    board = np.zeros((2, 25), dtype=np.int8)
    board[0, 0] = 1            # White's last checker on its 1-point
    board[1, 23] = 15          # all of Black's checkers in White's home: a backgammon
    game.board, game.phase, game.turn = board, "roll", 0
    game.cube_value, game.cube_owner = 2, 1
    game.dice_source.values = [6, 2]
    state = ok(post(client, gid, "roll", token))
    assert not state["can_double"]                          # Black owns the cube
    state = play_turn(client, gid, token)
    assert state["result"] == {"winner": "white", "points": 6, "kind": "backgammon", "resigned": False,
                               "passed": False, "cube": 2}
    assert state["message"] == "White wins a backgammon with the cube at 2: 6 points"

    gid, token, _ = new_game(client, mode="computer", color="black", cube=True)
    game = game_of(client, gid)
    ok(post(client, gid, "roll", token))
    game.cube_value = 4
    state = ok(post(client, gid, "resign", token))
    assert state["result"]["winner"] == "white" and state["result"]["points"] == 4
    assert state["log"][-1]["text"] == "Black resigns a single game: White wins 4 points"


def test_no_double_beyond_the_maximum_cube():
    client, _ = make_client(dice=[5, 3])
    gid, token, _ = new_game(client, mode="hotseat", cube=True)
    post(client, gid, "roll", token)
    play_turn(client, gid, token)
    game = game_of(client, gid)
    game.cube_value, game.cube_owner = MAX_CUBE, 1          # Black, on roll, owns the top cube
    before = client.get(f"/api/games/{gid}").json()
    assert not before["can_double"] and before["message"] == "Black to roll"
    refused(client, gid, "double", token, 409, "maximum")
    assert client.get(f"/api/games/{gid}").json() == before


def test_levels_decide_the_cube_at_their_ply():
    """FixedEvaluator(0.9): whoever has just moved is a 90% favourite. At 1-ply the side on
    roll sees 10% (no double, take); at 2-ply it looks past its own roll and play, where it
    is the 90% favourite (double, pass): Hard's cube is the 2-ply one."""
    board = np.array(Game("x", "hotseat", SequenceDice()).board)
    cube = CubeInfo()
    answers = {}
    for level in ("easy", "medium", "hard"):
        player = ComputerPlayer(FixedEvaluator(0.9), level)
        answers[level] = (player.cube.ply, player.should_double(board, cube), player.accepts(board, cube))
    assert answers == {"easy": (1, False, True), "medium": (1, False, True), "hard": (2, True, False)}


def test_openapi_documents_the_cube():
    client, _ = make_client()
    spec = client.get("/openapi.json").json()
    for name in ("double", "take", "pass"):
        op = spec["paths"][f"/api/games/{{game_id}}/{name}"]["post"]
        assert op["tags"] == ["cube"] and op["description"]
    assert "cube" in spec["components"]["schemas"]["NewGame"]["properties"]


class GammonMoverEvaluator:
    """Every afterstate: the side that just moved wins a gammon for sure. A position before the
    roll is the opponent's afterstate at 1-ply, so the side on roll expects to lose a gammon
    (equity -2) and the other side expects +2."""

    name = "gammon-mover"

    def evaluate(self, afterstates: np.ndarray) -> np.ndarray:
        out = np.zeros((len(afterstates), 5))
        out[:, 0] = out[:, 1] = 1.0
        return out


def test_resign_a_gammon_the_computer_refuses_a_single_game_and_takes_a_gammon():
    client = TestClient(create_app(GammonMoverEvaluator(), dice_factory=lambda: SequenceDice([], 1), seed=1))
    gid, token, _ = new_game(client, mode="computer", level="easy", cube=True)
    state = ok(post(client, gid, "roll", token))
    if state["phase"] != "move":                              # Black opened: White rolls now
        state = ok(post(client, gid, "roll", token))
    assert state["phase"] == "move" and state["turn"] == "white"
    state = ok(client.post(f"/api/games/{gid}/resign", json={"token": token, "points": 1}))
    assert state["phase"] == "move" and state["log"][-1]["text"] == \
        "Black refuses the resignation of a single game: play on"
    state = ok(client.post(f"/api/games/{gid}/resign", json={"token": token, "points": 2}))
    assert state["result"] == {"winner": "black", "points": 2, "kind": "gammon", "resigned": True,
                               "passed": False, "cube": 1}
    assert state["log"][-1]["text"] == "White resigns a gammon: Black wins 2 points"


def test_without_the_cube_a_resignation_is_a_single_game():
    client, _ = make_client()
    gid, token, _ = new_game(client, mode="hotseat")
    ok(post(client, gid, "roll", token))
    res = client.post(f"/api/games/{gid}/resign", json={"token": token, "points": 2})
    assert res.status_code == 409 and "single game" in res.json()["error"]
    res = client.post(f"/api/games/{gid}/resign", json={"token": token, "points": 4})
    assert res.status_code == 422 and res.json()["error"].startswith("bad request")
    assert ok(post(client, gid, "resign", token))["result"]["points"] == 1
