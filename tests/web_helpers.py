"""Small helpers shared by the web API tests."""

from __future__ import annotations


def new_game(client, **body):
    """Create a game; (game_id, seat token, state)."""
    res = client.post("/api/games", json=body)
    assert res.status_code == 200, res.text
    data = res.json()
    return data["game_id"], data["token"], data["state"]


def post(client, gid, action, token, **extra):
    """POST a seat action with its token."""
    return client.post(f"/api/games/{gid}/{action}", json={"token": token, **extra})
