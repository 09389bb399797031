"""Games kept in SQLite: a kill -9 loses nothing, floods end no live game, finished games make a history."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import warnings
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from engine.evaluator import RandomEvaluator
from scripts.webapp import store as store_module
from scripts.webapp.game import SequenceDice
from scripts.webapp.server import create_app
from scripts.webapp.store import GameStore
from tests.web_helpers import new_game, post

ROOT = Path(__file__).resolve().parent.parent


def make_client(db=":memory:", dice=None, seed=0) -> TestClient:
    app = create_app(RandomEvaluator(seed), dice_factory=lambda: SequenceDice(list(dice or []), seed),
                     seed=seed, db=db)
    return TestClient(app)


def play_some(client, gid, token, actions: int) -> dict:
    """Roll, step and confirm as the human for `actions` requests (the computer answers)."""
    state = client.get(f"/api/games/{gid}", params={"token": token}).json()
    for _ in range(actions):
        if state["phase"] == "over":
            break
        if state["can_roll"]:
            res = post(client, gid, "roll", token)
        elif state["legal_steps"]:
            s = state["legal_steps"][0]
            res = post(client, gid, "step", token, **{"from": s["from"], "to": s["to"], "die": s["die"]})
        else:
            res = post(client, gid, "confirm", token)
        assert res.status_code == 200, res.text
        state = res.json()
    return state


def test_the_store_is_wal_and_a_new_app_on_the_same_file_continues_the_game(tmp_path):
    db = tmp_path / "games.sqlite3"
    client = make_client(db)
    assert client.app.state.context.store.journal_mode() == "wal"
    gid, token, _ = new_game(client, mode="computer", level="easy")
    state = play_some(client, gid, token, 12)
    again = make_client(db, seed=9).get(f"/api/games/{gid}", params={"token": token}).json()
    assert again == state
    # The revived game plays on: its planner, dice and computer are rebuilt.
    assert play_some(make_client(db, seed=9), gid, token, 6)["version"] > state["version"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(url: str, body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"},
                                 method="POST" if body is not None else "GET")
    with urllib.request.urlopen(req, timeout=30) as res:
        return json.loads(res.read())


def start_server(db: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "scripts.cli", "play", "--model", "pubeval",
                             "--port", str(port), "--db", str(db)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = proc.stdout.readline()
    assert "serving on" in line, line
    deadline = time.monotonic() + 30
    while True:
        try:
            call(f"http://127.0.0.1:{port}/healthz")
            return proc
        except OSError:
            if time.monotonic() > deadline:
                proc.kill()
                raise
            time.sleep(0.1)


def test_hint_consent_is_stored_and_survives_a_restart(tmp_path):
    db = tmp_path / "games.sqlite3"
    client = make_client(db)
    gid, host, _ = new_game(client, mode="friend")
    guest = client.post(f"/api/games/{gid}/join").json()["token"]
    post(client, gid, "hints", guest, allow=True)
    again = make_client(db)                      # a new server on the same file
    state = again.get(f"/api/games/{gid}", params={"token": host}).json()
    assert state["hints"] == {"on": False, "consent": {"white": False, "black": True}}
    assert post(again, gid, "hints", host, allow=True).json()["hints"]["on"]
    assert make_client(db).get(f"/api/games/{gid}").json()["hints"]["on"]


def test_kill_9_mid_game_and_restart_loses_nothing(tmp_path):
    db, port = tmp_path / "games.sqlite3", free_port()
    base = f"http://127.0.0.1:{port}/api/games"
    proc = start_server(db, port)
    try:
        made = call(base, {"mode": "computer", "level": "medium"})
        gid, token = made["game_id"], made["token"]
        state = made["state"]
        # Play until the human is mid-move: a step taken, not confirmed (the computer has moved before).
        while not (state["steps_taken"] and any(e["side"] == "black" and e["steps"] is not None for e in state["log"])):
            if state["can_roll"]:
                state = call(f"{base}/{gid}/roll", {"token": token})
            elif state["legal_steps"]:
                s = state["legal_steps"][0]
                state = call(f"{base}/{gid}/step", {"token": token, "from": s["from"], "to": s["to"], "die": s["die"]})
            else:
                state = call(f"{base}/{gid}/confirm", {"token": token})
        os.kill(proc.pid, signal.SIGKILL)      # no shutdown, no flush: only what was committed survives
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
    proc = start_server(db, port)
    try:
        after = call(f"{base}/{gid}?token={token}")
        assert after == state
        if after["legal_steps"]:                 # the game goes on (a one-step roll is complete already)
            s = after["legal_steps"][0]
            call(f"{base}/{gid}/step", {"token": token, "from": s["from"], "to": s["to"], "die": s["die"]})
        else:
            call(f"{base}/{gid}/confirm", {"token": token})
    finally:
        proc.kill()
        proc.wait(timeout=10)
        proc.stdout.close()


def test_a_flood_of_games_from_one_address_ends_no_live_game():
    client = make_client()
    other = TestClient(client.app, client=("10.0.0.2", 5000))
    live_gid, live_token, _ = new_game(other, mode="computer", level="easy")
    live = play_some(other, live_gid, live_token, 3)
    own_gid, own_token, _ = new_game(client, mode="computer", level="easy")
    own = play_some(client, own_gid, own_token, 3)          # the flooder's own game in progress
    for _ in range(1100):
        assert client.post("/api/games", json={"mode": "hotseat"}).status_code == 200
    store = client.app.state.context.store
    assert store.count(client="testclient", live=True) == store_module.MAX_LIVE_PER_CLIENT
    assert client.get(f"/api/games/{live_gid}", params={"token": live_token}).json() == live
    assert client.get(f"/api/games/{own_gid}", params={"token": own_token}).json() == own


def test_an_address_whose_games_are_all_in_progress_is_refused_not_evicted(monkeypatch):
    monkeypatch.setattr(store_module, "MAX_LIVE_PER_CLIENT", 3)
    client = make_client()
    games = [new_game(client, mode="hotseat")[:2] for _ in range(3)]
    for gid, token in games:
        assert post(client, gid, "roll", token).status_code == 200       # each one started
    res = client.post("/api/games", json={"mode": "hotseat"})
    assert res.status_code == 429 and "3 games in progress" in res.json()["error"]
    for gid, _ in games:
        assert client.get(f"/api/games/{gid}").status_code == 200


def test_only_finished_and_long_idle_games_expire(tmp_path, monkeypatch):
    monkeypatch.setattr(store_module, "MAX_FINISHED", 2)
    store = GameStore(tmp_path / "g.sqlite3")
    for i, phase in enumerate(["over", "over", "over", "move", "move"]):
        store.save({"id": f"g{i}", "phase": phase}, client=f"c{i}")
    with store._lock:        # g4 was last touched long ago
        store._db.execute("UPDATE games SET updated = updated - ? WHERE id = 'g4'", (store_module.IDLE_SECONDS + 1,))
        store._db.execute("UPDATE games SET finished = finished - 10 WHERE id = 'g0'")
    assert sorted(store.make_room("someone", busy=set())) == ["g0", "g4"]
    assert store.load("g3") is not None and store.count(live=False) == 2
    # A long-idle game with a page connected stays.
    store.save({"id": "g5", "phase": "move"}, client="c5")
    with store._lock:
        store._db.execute("UPDATE games SET updated = 0 WHERE id = 'g5'")
    assert store.make_room("someone", busy={"g5"}) == [] and store.load("g5") is not None


def test_history_lists_finished_games_with_a_mat_download():
    client = make_client(dice=[6, 1], seed=3)
    gid, token, _ = new_game(client, mode="computer", level="easy")
    assert client.get("/api/history").json() == {"games": []}
    play_some(client, gid, token, 8)
    ok = post(client, gid, "resign", token)
    assert ok.status_code == 200
    games = client.get("/api/history").json()["games"]
    assert [g["game_id"] for g in games] == [gid]
    assert games[0]["winner"] == "black" and games[0]["how"] == "resigned" and games[0]["black"] == "tdgammon_easy"
    res = client.get(games[0]["mat"])
    assert res.status_code == 200 and "attachment" in res.headers["content-disposition"]
    text = res.text
    assert text.startswith(" 0 point match") and "White : 0" in text and "tdgammon_easy : 0" in text
    assert " 1) 61: 24/23 24/18" in text and "Wins 1 point" in text
    assert TestClient(client.app, client=("10.9.9.9", 1)).get("/api/history").json() == {"games": []}
    assert client.get("/history").status_code == 200


def test_takebacks_stay_in_the_log_and_out_of_the_mat():
    client = make_client(dice=[6, 1, 3, 2, 5, 5], seed=4)
    gid, token, _ = new_game(client, mode="computer", level="easy")
    play_some(client, gid, token, 4)                          # roll, two steps, confirm; the computer moves
    state = post(client, gid, "undo-move", token).json()
    assert state["log"][-1]["takeback"] and state["phase"] == "move" and state["dice"] == [6, 1]
    record = client.app.state.context.hub.get(gid).to_record()
    from scripts.webapp.record import game_mat

    text = game_mat(record)
    assert "32:" not in text and "61:" not in text            # the taken-back moves are not in the .mat
    state = play_some(client, gid, token, 3)                  # the same dice again, and a new computer roll
    text = game_mat(client.app.state.context.hub.get(gid).to_record())
    assert text.count("61:") == 1 and "55:" in text and "32:" not in text


def test_undo_is_refused_after_the_end_of_the_game():
    client = make_client(dice=[6, 1], seed=3)
    gid, token, _ = new_game(client, mode="computer", level="easy")
    play_some(client, gid, token, 4)
    assert post(client, gid, "undo-move", token).status_code == 200
    play_some(client, gid, token, 3)
    state = post(client, gid, "resign", token).json()
    assert state["phase"] == "over" and not state["can_undo_move"]
    res = post(client, gid, "undo-move", token)
    assert res.status_code == 409 and "game is over" in res.json()["error"]
    assert client.get(f"/api/games/{gid}").json()["phase"] == "over"


@pytest.mark.gnubg
def test_gnubg_imports_a_web_cube_game_with_its_takeback_left_out(tmp_path):
    import subprocess

    from scripts.webapp.record import game_mat
    from tests.conftest import GNUBG

    client = make_client(dice=[6, 1], seed=8)
    gid, token, _ = new_game(client, mode="hotseat", cube=True)
    play_some(client, gid, token, 4)                          # White's opening 6-1, confirmed
    assert post(client, gid, "undo-move", token).status_code == 200
    state = play_some(client, gid, token, 3)
    assert post(client, gid, "double", token).status_code == 200      # Black doubles, White takes
    assert post(client, gid, "take", token).status_code == 200
    state = play_some(client, gid, token, 8)
    while state["turn"] != "white" or state["phase"] != "roll":
        state = play_some(client, gid, token, 1)
    assert post(client, gid, "double", token).status_code == 200      # White redoubles, Black passes
    state = post(client, gid, "pass", token).json()
    assert state["result"]["points"] == 2
    text = game_mat(client.app.state.context.hub.get(gid).to_record())
    assert text.count("61:") == 1 and "Doubles => 2" in text and "Takes" in text and "Doubles => 4" in text
    path = tmp_path / "web.mat"
    path.write_text(text)
    script = tmp_path / "check.py"
    script.write_text(
        "import gnubg, json\n"
        f"gnubg.command('import mat {path}')\n"
        "m = gnubg.match(analysis=0, boards=0, statistics=0, verbose=0)\n"
        "g = m['games'][0]\n"
        "print('RESULT ' + json.dumps([g['info']['winner'], g['info']['points-won'], "
        "[a['action'] for a in g['game']]]))\n")
    proc = subprocess.run([GNUBG, "-t", "-q", "-p", str(script)], capture_output=True, text=True, timeout=120)
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT "))
    winner, points, actions = json.loads(line[7:])
    assert winner == "X" and points == 2                      # X: the left column, White
    assert actions.count("double") == 2 and actions.count("take") == 1 and actions[-1] == "drop"
    assert actions.count("move") == sum(1 for e in state["log"] if e["steps"] is not None and not e["undone"])
