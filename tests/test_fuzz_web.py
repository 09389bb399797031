"""Fuzz: random sequences of web API requests (right, wrong and garbage tokens, steps, cube
actions, malformed bodies, analysis queries). No request gets a 5xx; a refusal is a 4xx
with one bounded {"error"} line and changes nothing; after every request the game keeps
15 checkers a side, a legal turn and a legal cube. A binary websocket frame is refused
with a close, never a traceback.
"""

from __future__ import annotations

import logging
import warnings
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("fastapi")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient
    from starlette.websockets import WebSocketDisconnect

from engine.evaluator import RandomEvaluator
from scripts.cli import LINE_LIMIT
from scripts.webapp.server import create_app

TRIED: dict[str, int] = {}
FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                       HealthCheck.too_slow])
ACTIONS = ["roll", "step", "legal-step", "confirm", "undo-step", "undo-move", "double", "take", "pass",
           "resign", "rematch", "join", "take-over", "get", "hint", "eval", "garbage-body", "hints", "game-hint"]
TEXT = st.text(max_size=30) | st.text(alphabet="x", min_size=500, max_size=2000)


def client() -> TestClient:
    return TestClient(create_app(RandomEvaluator(0), seed=0))


def check_state(state: dict) -> None:
    """The invariants every state the server shows must keep."""
    board = state["board"]
    white = sum(n for n in board["points"] if n > 0) + board["bar"]["white"] + board["off"]["white"]
    black = sum(-n for n in board["points"] if n < 0) + board["bar"]["black"] + board["off"]["black"]
    assert white == black == 15, board
    assert state["turn"] in (None, "white", "black")
    assert state["phase"] in ("waiting", "opening", "roll", "move", "doubled", "resign", "over")
    cube = state["cube"]
    assert cube["value"] >= 1 and cube["value"] & (cube["value"] - 1) == 0
    assert cube["owner"] in (None, "white", "black")
    if not cube["enabled"]:
        assert cube["value"] == 1 and cube["owner"] is None
    consent = state["hints"]["consent"]
    assert (consent is None) == (state["mode"] != "friend")
    assert state["hints"]["on"] == (consent is None or all(consent.values()))


def check_answer(res) -> None:
    assert res.status_code < 500, res.text
    if res.status_code >= 400:
        body = res.json()
        assert set(body) == {"error"} and isinstance(body["error"], str)
        assert "\n" not in body["error"] and len(body["error"]) <= LINE_LIMIT


@FUZZ
@given(mode=st.sampled_from(["computer", "hotseat", "friend"]), cube=st.booleans(),
       script=st.lists(st.tuples(st.sampled_from(ACTIONS), st.sampled_from(["mine", "other", "garbage", "none"]),
                                 st.integers(-3, 28), st.integers(-3, 28), st.integers(-1, 8), TEXT),
                       min_size=1, max_size=40))
def test_fuzz_request_sequences_never_5xx_and_keep_the_invariants(mode, cube, script):
    web = client()
    res = web.post("/api/games", json={"mode": mode, "cube": cube})
    assert res.status_code == 200
    gid, tokens = res.json()["game_id"], [res.json()["token"]]
    for action, who, a, b, die, text in script:
        count(action)
        before = web.get(f"/api/games/{gid}").json()
        token = {"mine": tokens[0], "other": tokens[-1], "garbage": text, "none": None}[who]
        body = {} if token is None else {"token": token}
        if action == "get":
            res = web.get(f"/api/games/{quote(text, safe='') or gid}")
        elif action == "hint":
            res = web.get("/api/hint", params={"position_id": text, "dice": f"{a}{b}"})
        elif action == "eval":
            res = web.get("/api/eval", params={"position_id": text, "ply": die})
        elif action == "hints":
            res = web.post(f"/api/games/{gid}/hints", json={**body, "allow": a % 2 == 0})
        elif action == "game-hint":
            res = web.get(f"/api/games/{gid}/hint", params={} if token is None else {"token": token})
        elif action == "garbage-body":
            res = web.post(f"/api/games/{gid}/roll", content=text.encode(),
                           headers={"content-type": "application/json"})
        elif action == "join":
            res = web.post(f"/api/games/{gid}/join", json=body)
            if res.status_code == 200 and "token" in res.json():
                tokens.append(res.json()["token"])
        elif action in ("step", "legal-step"):
            legal = [] if token is None else web.get(f"/api/games/{gid}", params={"token": token}).json().get(
                "legal_steps", [])
            if action == "legal-step" and legal:
                pick = legal[a % len(legal)]
                body.update({"from": pick["from"], "to": pick["to"], "die": pick.get("die")})
            else:
                body.update({"from": a, "to": b, "die": die})
            res = web.post(f"/api/games/{gid}/step", json=body)
        else:
            res = web.post(f"/api/games/{gid}/{action}", json=body)
        check_answer(res)
        after = web.get(f"/api/games/{gid}").json()
        check_state(after)
        if res.status_code >= 400 and action != "rematch":
            assert after["version"] == before["version"], (action, res.text)


def count(name: str) -> None:
    TRIED[name] = TRIED.get(name, 0) + 1


def test_a_binary_websocket_frame_is_refused_without_a_traceback(caplog):
    web = client()
    gid = web.post("/api/games", json={"mode": "hotseat"}).json()["game_id"]
    with caplog.at_level(logging.DEBUG):
        with web.websocket_connect(f"/api/games/{gid}/ws") as ws:
            ws.receive_json()
            ws.send_bytes(b"\x00\xff binary")
            with pytest.raises(WebSocketDisconnect) as closed:
                ws.receive_json()
        assert closed.value.code == 1003
        # The socket still works for the next client.
        with web.websocket_connect(f"/api/games/{gid}/ws") as ws:
            assert ws.receive_json()["game_id"] == gid
    assert "Traceback" not in caplog.text and not any(r.exc_info for r in caplog.records)


def test_error_messages_echo_input_bounded():
    web = client()
    res = web.get(f"/api/games/{'z' * 3000}")
    assert res.status_code == 404 and len(res.json()["error"]) < 200
    with pytest.raises(WebSocketDisconnect) as closed:
        with web.websocket_connect(f"/api/games/{'z' * 3000}/ws") as ws:
            ws.receive_json()
    assert closed.value.code == 4404 and len(closed.value.reason) <= 123


def test_a_non_ascii_token_is_refused_not_a_500():
    web = client()
    gid = web.post("/api/games", json={"mode": "hotseat"}).json()["game_id"]
    res = web.post(f"/api/games/{gid}/roll", json={"token": "\x80"})
    assert 400 <= res.status_code < 500


def test_fuzz_web_counts(capsys):
    with capsys.disabled():
        print(f"\nfuzz web requests tried: {TRIED}")
