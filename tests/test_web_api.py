"""The web game's JSON API: legal play end to end, refusals (4xx, clear message, nothing changed)."""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from engine.position import Position
from engine.evaluator import RandomEvaluator
from scripts.webapp.game import Game, SequenceDice
from scripts.webapp.rules import TurnPlanner
from scripts.webapp.server import create_app
from tests.web_helpers import new_game, post

ORACLE = Path(__file__).parent / "data" / "gnubg-legal-moves.jsonl"


def make_client(dice=None, seed=0, timeout=120.0) -> TestClient:
    app = create_app(RandomEvaluator(seed), dice_factory=lambda: SequenceDice(list(dice or []), seed),
                     disconnect_timeout=timeout, seed=seed)
    return TestClient(app)


def play_out(client, gid, tokens, rng, max_actions=3000):
    """Play random legal steps for whichever seat is to act until the game ends."""
    state = client.get(f"/api/games/{gid}").json()
    for _ in range(max_actions):
        if state["phase"] == "over":
            return state
        token = tokens[state["turn"]] if state["turn"] else next(iter(tokens.values()))
        view = client.get(f"/api/games/{gid}", params={"token": token}).json()
        if view["can_roll"]:
            res = post(client, gid, "roll", token)
        elif view["legal_steps"]:
            s = rng.choice(view["legal_steps"])
            res = post(client, gid, "step", token, **{"from": s["from"], "to": s["to"], "die": s["die"]})
        else:
            assert view["can_confirm"], view
            res = post(client, gid, "confirm", token)
        assert res.status_code == 200, res.text
        state = res.json()
    raise AssertionError("game did not finish")


def enumerate_completions(planner, taken):
    if planner.complete(taken):
        return {planner.board_after(taken).tobytes()}
    out = set()
    for step in planner.options(taken):
        out |= enumerate_completions(planner, taken + [step])
    return out


def test_offered_steps_lead_exactly_to_the_legal_plays():
    """Following offered steps reaches every legal afterstate of gnubg's oracle and nothing else."""
    with open(ORACLE) as fh:
        cases = [json.loads(line) for i, line in enumerate(fh) if i % 25 == 0]
    assert len(cases) > 100
    for case in cases:
        board = Position.from_id(case["position"]).board
        planner = TurnPlanner(board, *case["dice"])
        expected = {Position.from_id(a).board.tobytes() for a in case["afterstates"]}
        if planner.n_steps == 0:
            assert planner.options([]) == []
            continue
        assert enumerate_completions(planner, []) == expected, case


def test_larger_die_rule_only_offers_the_six():
    # One White checker on the 13-point, the rest on the 1-point (no bearing off); Black holds
    # White's 2-point. 13/7 or 13/8 can each be played, never both: the larger die must be played.
    board = np.zeros((2, 25), dtype=np.int8)
    board[0, 12] = 1
    board[0, 0] = 14
    board[1, 24 - 2] = 2      # White's 2-point
    board[1, 0] = 13
    planner = TurnPlanner(board, 6, 5)
    assert planner.n_steps == 1
    assert [(s.points(), s.die) for s in planner.options([])] == [((13, 7), 6)]


def test_full_game_against_the_computer_and_result():
    client = make_client(seed=1)
    gid, token, state = new_game(client, mode="computer", level="medium", color="white")
    assert state["phase"] == "opening" and state["seats"]["black"]["kind"] == "computer"
    final = play_out(client, gid, {"white": token, "black": token}, random.Random(1))
    assert final["result"]["points"] in (1, 2, 3)
    assert final["result"]["winner"] in ("white", "black")
    assert final["board"]["off"][final["result"]["winner"]] == 15
    assert any(e["side"] == "black" for e in final["log"])  # the computer moved


@pytest.mark.slow
def test_hotseat_game_finishes():
    client = make_client(seed=2)
    gid, token, _ = new_game(client, mode="hotseat")
    final = play_out(client, gid, {"white": token, "black": token}, random.Random(2))
    assert final["phase"] == "over"


def test_no_legal_play_is_reported_and_passes():
    client = make_client(seed=3)
    gid, token, _ = new_game(client, mode="hotseat")
    game: Game = client.app.state.hub.get(gid)
    board = np.zeros((2, 25), dtype=np.int8)
    board[0, 24] = 1        # White on the bar
    board[0, 5] = 14
    board[1, 0:6] = 2       # Black's home board (White's entry points 24..19) closed
    board[1, 10] = 3
    game.board = board
    game.phase, game.turn = "roll", 0
    game.dice_source.values = [6, 6]
    state = post(client, gid, "roll", token).json()
    assert "no legal play" in state["message"] and state["legal_steps"] == [] and state["can_confirm"]
    state = post(client, gid, "confirm", token).json()
    assert state["turn"] == "black" and state["log"][-1]["text"] == "White 6-6: no legal play"


def test_refusals_are_4xx_with_a_message_and_change_nothing():
    client = make_client(dice=[5, 3, 3, 1], seed=4)
    gid, token, _ = new_game(client, mode="hotseat")
    post(client, gid, "roll", token)                       # opening 5-3: White starts
    before = client.get(f"/api/games/{gid}").json()
    assert before["turn"] == "white" and before["dice"] == [5, 3]

    def refused(res, status, words):
        assert res.status_code == status, res.text
        assert words in res.json()["error"]
        assert client.get(f"/api/games/{gid}").json() == before

    refused(post(client, gid, "step", token, **{"from": 6, "to": 2}), 422, "illegal step 6 → 2")
    refused(post(client, gid, "step", token, **{"from": 24, "to": 18}), 422, "illegal step")  # 24/18 needs a 6
    refused(post(client, gid, "step", token, **{"from": 13, "to": 8, "die": 3}), 422, "illegal step")
    refused(post(client, gid, "step", "forged-token", **{"from": 13, "to": 8}), 403, "forged or stale")
    refused(post(client, gid, "confirm", token), 409, "not complete")
    refused(post(client, gid, "undo-step", token), 409, "no step to undo")
    refused(post(client, gid, "undo-move", token), 409, "between the roll and the confirm")
    refused(post(client, gid, "roll", token), 409, "dice are rolled")
    refused(client.post(f"/api/games/{gid}/step", json={"token": token, "from": "x", "to": 8}), 422, "from")
    refused(client.post(f"/api/games/{gid}/step", json={"from": 13, "to": 8}), 422, "token")
    res = post(client, "no-such-game", "roll", token)
    assert res.status_code == 404 and "no game with id" in res.json()["error"]
    assert client.get("/api/games/nope").status_code == 404
    # A token of another game is refused on this one.
    gid2, token2, _ = new_game(client, mode="hotseat")
    refused(post(client, gid, "roll", token2), 403, "forged or stale")
    refused(client.get(f"/api/games/{gid}", params={"token": token2}), 403, "forged or stale")


def test_undo_step_and_undo_move_keep_the_dice():
    client = make_client(dice=[5, 3], seed=5)
    gid, token, _ = new_game(client, mode="computer", level="easy", color="white")
    state = post(client, gid, "roll", token).json()
    assert state["turn"] == "white" and state["dice"] == [5, 3]
    state = post(client, gid, "step", token, **{"from": 8, "to": 3}).json()
    assert state["board"]["points"][2] == 1 and state["dice_left"] == [3]
    state = post(client, gid, "undo-step", token).json()
    assert state["board"]["points"][2] == 0 and state["dice_left"] == [5, 3]
    post(client, gid, "step", token, **{"from": 8, "to": 3})
    state = post(client, gid, "step", token, **{"from": 6, "to": 3}).json()
    assert state["can_confirm"] and state["legal_steps"] == []
    state = post(client, gid, "confirm", token).json()
    assert state["turn"] == "white" and state["phase"] == "roll"    # the computer has moved
    assert state["log"][-1]["side"] == "black" and state["can_undo_move"]
    state = post(client, gid, "undo-move", token).json()
    assert state["phase"] == "move" and state["dice"] == [5, 3] and state["turn"] == "white"
    assert state["board"]["points"][2] == 0 and state["board"]["points"][7] == 3   # back to the opening
    # The taken-back turns stay in the log, marked undone, and a takeback line follows.
    played = [e for e in state["log"] if e["dice"] and e["side"] in ("white", "black") and e["steps"] is not None]
    assert [e["side"] for e in played] == ["white", "black"] and all(e["undone"] for e in played)
    assert state["log"][-1]["takeback"] and "White takes back the move" in state["log"][-1]["text"]
    assert state["last_move"] is None
    assert not state["can_undo_move"]


def test_bear_off_through_the_tray_and_gammon_result():
    client = make_client(seed=6)
    gid, token, _ = new_game(client, mode="hotseat")
    game: Game = client.app.state.hub.get(gid)
    board = np.zeros((2, 25), dtype=np.int8)
    board[0, 0] = 1          # White's last checker on its 1-point
    board[1, 23] = 15        # Black never left White's home... on its own 24 point
    game.board, game.phase, game.turn = board, "roll", 0
    game.dice_source.values = [6, 2]
    state = post(client, gid, "roll", token).json()
    assert {(s["from"], s["to"]) for s in state["legal_steps"]} == {(1, 0)}
    state = post(client, gid, "step", token, **{"from": 1, "to": 0}).json()
    assert state["steps_taken"][0]["die"] == 2       # the smaller die that fits
    state = post(client, gid, "confirm", token).json()
    assert state["result"] == {"winner": "white", "points": 3, "kind": "backgammon", "resigned": False,
                               "passed": False, "cube": 1}


def test_resign_counts_a_single_game():
    client = make_client(seed=7)
    gid, token, _ = new_game(client, mode="computer", level="medium", color="black")
    post(client, gid, "roll", token)
    state = post(client, gid, "resign", token).json()
    assert state["result"]["winner"] == "white" and state["result"]["points"] == 1
    assert post(client, gid, "roll", token).status_code == 409
    assert post(client, gid, "undo-move", token).status_code == 409


def test_friend_game_tokens_join_and_rematch():
    client = make_client(seed=8)
    gid, host, state = new_game(client, mode="friend")
    assert state["phase"] == "waiting" and state["you"] == ["white"]
    assert post(client, gid, "roll", host).status_code == 409
    joined = client.post(f"/api/games/{gid}/join").json()
    guest = joined["token"]
    assert joined["seat"] == "black" and guest != host
    third = client.post(f"/api/games/{gid}/join")
    assert third.status_code == 409 and "two players" in third.json()["error"]
    assert post(client, gid, "undo-move", host).status_code == 409
    state = post(client, gid, "roll", host).json()
    mover = state["turn"]
    other = guest if mover == "white" else host
    me = host if mover == "white" else guest
    s = client.get(f"/api/games/{gid}", params={"token": me}).json()["legal_steps"][0]
    res = post(client, gid, "step", other, **{"from": s["from"], "to": s["to"]})
    assert res.status_code == 409 and "turn" in res.json()["error"]
    # Taking over needs the friend away for the timeout.
    res = post(client, gid, "take-over", host)
    assert res.status_code == 409 and "not disconnected long enough" in res.json()["error"]
    post(client, gid, "resign", host)
    rm_host = post(client, gid, "rematch", host).json()
    rm_guest = post(client, gid, "rematch", guest).json()
    assert rm_host["game_id"] == rm_guest["game_id"]
    assert rm_host["state"]["you"] == ["black"] and rm_guest["state"]["you"] == ["white"]
    # The old tokens are stale on the new game.
    res = post(client, rm_host["game_id"], "roll", host)
    assert res.status_code == 403


@pytest.mark.slow
def test_friend_take_over_after_disconnect():
    client = make_client(seed=9, timeout=0.0)
    gid, host, _ = new_game(client, mode="friend")
    client.post(f"/api/games/{gid}/join")
    guest_view = client.get(f"/api/games/{gid}", params={"token": host}).json()
    assert guest_view["can_take_over"]
    state = post(client, gid, "take-over", host).json()
    assert state["mode"] == "computer" and state["seats"]["black"]["kind"] == "computer"
    final = play_out(client, gid, {"white": host, "black": host}, random.Random(9))
    assert final["phase"] == "over"


def test_websocket_pushes_moves_to_the_other_seat():
    client = make_client(seed=10)
    gid, host, _ = new_game(client, mode="friend")
    guest = client.post(f"/api/games/{gid}/join").json()["token"]
    with client.websocket_connect(f"/api/games/{gid}/ws?token={guest}") as ws:
        first = ws.receive_json()
        assert first["you"] == ["black"] and first["seats"]["black"]["connected"]
        post(client, gid, "roll", host)
        pushed = ws.receive_json()
        assert pushed["version"] > first["version"] and pushed["dice"] is not None


def test_hint_and_eval_for_any_position_id():
    client = make_client(seed=11)
    start = Position.start().id
    res = client.get("/api/hint", params={"position_id": start, "dice": "31"})
    assert res.status_code == 200, res.text
    plays = res.json()["plays"]
    assert len(plays) == 16 and all("move" in p and len(p["probabilities"]) == 5 for p in plays)
    res = client.get("/api/eval", params={"position_id": start, "ply": 2})
    assert res.status_code == 200 and 0.0 <= res.json()["probabilities"]["win"] <= 1.0
    for bad in ("4HPwATDgc/ABM", "!!!!!!!!!!!!!!", "////////////AA"):
        for url in ("/api/eval", "/api/hint"):
            res = client.get(url, params={"position_id": bad, "dice": "31"})
            assert res.status_code == 400 and "Position ID" in res.json()["error"], (bad, res.text)
    res = client.get("/api/hint", params={"position_id": start, "dice": "71"})
    assert res.status_code == 400 and "a die must be 1..6" in res.json()["error"]
    xgid = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:0:0:10"  # the opening, as players paste it
    for url, params in (("/api/eval", {}), ("/api/hint", {"dice": "31"})):
        res = client.get(url, params={"position_id": xgid, **params})
        assert res.status_code == 200 and res.json()["position_id"] == start, res.text
        res = client.get(url, params={"position_id": "XGID=-b----E-C", **params})
        assert res.status_code == 400 and "XGID" in res.json()["error"], res.text


def test_unknown_paths_and_methods_are_refused_in_the_api_shape():
    """The router's own 404 and 405 answer {"error": ...} like every other refusal."""
    client = make_client()
    for method, url, status in (("GET", "/api/nowhere", 404), ("DELETE", "/api/games", 405),
                                ("GET", "/api/games/%2F", 405)):
        res = client.request(method, url)
        assert res.status_code == status and set(res.json()) == {"error"}, (url, res.text)
    assert "POST" in client.request("DELETE", "/api/games").headers["allow"]


def test_openapi_documents_the_api():
    client = make_client()
    paths = client.get("/openapi.json").json()["paths"]
    for path in ("/api/games", "/api/games/{game_id}/step", "/api/games/{game_id}/undo-move",
                 "/api/hint", "/api/eval", "/api/games/{game_id}/join"):
        assert path in paths


def test_game_hint_ranks_the_roll_from_the_start_of_the_turn_and_not_for_friends():
    client = make_client(dice=[3, 1], seed=2)
    gid, token, _ = new_game(client, mode="computer", level="hard")
    state = post(client, gid, "roll", token).json()
    assert state["can_hint"] and state["dice"] == [3, 1]
    post(client, gid, "step", token, **{"from": 8, "to": 5})
    hint = client.get(f"/api/games/{gid}/hint", params={"token": token}).json()
    assert hint["ply"] == 2 and hint["dice"] == [3, 1] and len(hint["plays"]) == 5
    assert all(p["move"] for p in hint["plays"])        # plays of the whole roll, from before the step
    assert client.get(f"/api/games/{gid}/hint", params={"token": "nope"}).status_code == 403
    fid, host, _ = new_game(client, mode="friend")
    guest = client.post(f"/api/games/{fid}/join").json()["token"]
    state = post(client, fid, "roll", host).json()
    mover = host if state["turn"] == "white" else guest
    res = client.get(f"/api/games/{fid}/hint", params={"token": mover})
    assert res.status_code == 409 and "friend" in res.json()["error"]


def test_friend_hints_are_on_only_while_both_players_allow_them():
    client = make_client(seed=4)
    fid, host, _ = new_game(client, mode="friend")
    guest = client.post(f"/api/games/{fid}/join").json()["token"]
    state = post(client, fid, "roll", host).json()
    mover = host if state["turn"] == "white" else guest
    other = guest if mover == host else host
    hint = lambda: client.get(f"/api/games/{fid}/hint", params={"token": mover})   # noqa: E731
    assert state["hints"] == {"on": False, "consent": {"white": False, "black": False}} and state["can_consent_hints"]
    assert post(client, fid, "hints", "guess", allow=True).status_code == 403              # a spectator cannot
    assert client.get(f"/api/games/{fid}").json()["can_consent_hints"] is False
    state = post(client, fid, "hints", mover, allow=True).json()
    assert state["hints"]["on"] is False and not state["can_hint"]
    res = hint()
    assert res.status_code == 409 and "both players allow" in res.json()["error"]
    state = post(client, fid, "hints", mover, allow=True).json()                          # again: no change
    assert sum(1 for e in state["log"] if e.get("hints")) == 1
    state = post(client, fid, "hints", other, allow=True).json()
    assert state["hints"]["on"] and state["hints"]["consent"] == {"white": True, "black": True}
    assert "both agree" in state["log"][-1]["text"] and state["log"][-1]["hints"] == "allow"
    assert client.get(f"/api/games/{fid}", params={"token": mover}).json()["can_hint"]
    res = hint()
    assert res.status_code == 200 and res.json()["plays"]
    state = post(client, fid, "hints", other, allow=False).json()                         # either may withdraw
    assert not state["hints"]["on"] and "Hint is off" in state["log"][-1]["text"]
    assert hint().status_code == 409
    gid, token, _ = new_game(client, mode="computer")
    res = post(client, gid, "hints", token, allow=True)
    assert res.status_code == 409 and "error" in res.json()
    assert client.post(f"/api/games/{fid}/hints", json={"token": mover, "allow": "perhaps"}).status_code in (400, 422)
