"""POST /api/position: a position by Position ID, XGID or a board set up by hand, its evaluation,
cube action and ranked plays; every bad request a 4xx {"error"}."""

from __future__ import annotations

import numpy as np
import pytest
from fastapi.testclient import TestClient

from engine.position import Position
from engine.search import rank_plays
from scripts.webapp.server import create_app
from tests.test_search import ToyEvaluator

START = "4HPwATDgc/ABMA"


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(ToyEvaluator()))


def ask(client, **body):
    res = client.post("/api/position", json=body)
    assert res.status_code == 200, res.text
    return res.json()


def test_position_id_with_dice_ranks_the_plays_as_the_engine(client):
    out = ask(client, position=START, dice=[3, 1])
    best = rank_plays(Position.from_id(START).board, (3, 1), ToyEvaluator(), 1)
    assert [p["equity"] for p in out["plays"]] == pytest.approx([p.equity for p in best])
    assert out["plays"][0]["equity"] >= out["plays"][-1]["equity"]
    assert out["board"]["points"][5] == 5 and out["board"]["points"][18] == -5     # White's 6, Black's 6
    assert out["pips"] == {"white": 167, "black": 167}
    assert set(out["evaluation"]["probabilities"]) == {"win", "win_gammon", "win_backgammon", "lose_gammon",
                                                     "lose_backgammon"}
    assert out["cube"]["action"] and out["cube"]["ply"] == 1


def test_without_dice_there_are_no_plays_and_2ply_is_used(client):
    out = ask(client, position=START, ply=2)
    assert out["plays"] is None and out["evaluation"]["ply"] == 2 and out["cube"]["ply"] == 2


def test_xgid_brings_its_dice_cube_and_score(client):
    out = ask(client, position="XGID=-b----E-C---eE---c-e----B-:1:1:1:52:2:1:0:7:10")
    s = out["settings"]
    assert s["dice"] == [5, 2] and s["cube"] == 2 and s["owner"] == "me"
    assert s["match"] == 7 and s["score"] == [2, 1]
    assert out["plays"] and "7-point match" in out["cube"]["settings"]


def test_gnubg_id_brings_its_match_state(client):
    out = ask(client, position=f"{START}:sgHgAGAAIAAE")  # gnubg: 7-point match at 6-4, Crawford game
    s = out["settings"]
    assert s["match"] == 7 and s["score"] == [6, 4] and s["crawford"]
    assert "Crawford game" in out["cube"]["settings"]


def test_hand_board_gives_the_position_id_of_that_board(client):
    points = [0] * 24
    points[0], points[5], points[23], points[17] = 2, 3, -4, -1       # White on 1 and 6; Black on its 1 and 7
    out = ask(client, board={"points": points, "bar": [1, 0]}, match=5, score=[3, 4], crawford=True)
    board = np.zeros((2, 25), dtype=np.int8)
    board[0, 0], board[0, 5], board[0, 24] = 2, 3, 1
    board[1, 0], board[1, 6] = 4, 1
    assert out["position_id"] == Position(board).id
    assert out["board"]["off"] == {"white": 9, "black": 10}
    assert "Crawford" in out["cube"]["settings"]


@pytest.mark.parametrize("body, status", [
    ({"position": "nonsense"}, 400),
    ({"position": START + ":garbage"}, 400),
    ({"position": "XGID=-b--:0:0:1:52:0:0:0:0:10"}, 400),
    ({}, 400),
    ({"position": START, "board": {"points": [0] * 24}}, 400),
    ({"position": START, "dice": [7, 1]}, 400),
    ({"position": START, "cube": 3}, 400),
    ({"position": START, "match": 5, "score": [5, 0]}, 400),
    ({"position": START, "crawford": True, "match": 5}, 400),
    ({"board": {"points": [16] + [0] * 23}}, 400),
    ({"board": {"points": [0] * 24}}, 400),
    ({"board": {"points": [1] + [0] * 22 + [-1], "bar": [15, 0]}}, 400),
    ({"position": START, "owner": "nobody"}, 422),
    ({"position": START, "ply": 9}, 422),
    ({"board": {"points": [1, 2]}}, 422),
])
def test_bad_requests_are_4xx_with_an_error(client, body, status):
    res = client.post("/api/position", json=body)
    assert res.status_code == status and isinstance(res.json()["error"], str), res.text
    assert client.post("/api/position", content=b"{not json", headers={"Content-Type": "application/json"}
                       ).status_code == 422
    assert ask(client, position=START)["position_id"] == START                   # still serving


def test_the_page_is_served(client):
    res = client.get("/position")
    assert res.status_code == 200 and "Analyse a position" in res.text
