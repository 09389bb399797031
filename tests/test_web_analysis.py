"""'Analyse this game' and hints in a match, through the web API: a finished game graded by the
match-analysis engine (the worse player by construction rates worse), the analysis kept in the
store, a game in progress refused; a match's hints ranked by match equity."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("fastapi")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from engine.analysis.grade import afterstate_equities
from engine.cube.equity import CubeInfo
from engine.evaluator import equity
from engine.position import Position
from scripts.webapp.game import SequenceDice
from scripts.webapp.rules import TurnPlanner
from scripts.webapp.server import create_app
from tests.web_helpers import new_game, post


@pytest.fixture(scope="module")
def pubeval():
    from models.loader import load_evaluator

    return load_evaluator("pubeval")


class HomeGammonEvaluator:
    """pubeval's P(win), and gammons that grow with the mover's checkers in its home board: the
    money equity then differs from the match equity at double match point (gammons void)."""

    name = "home-gammon"

    def __init__(self, base) -> None:
        self.base = base

    def evaluate(self, afterstates: np.ndarray) -> np.ndarray:
        out = np.array(self.base.evaluate(afterstates), dtype=np.float64)
        home = np.asarray(afterstates).reshape(-1, 2, 25)[:, 0, :6].sum(axis=1)
        out[:, 1] = np.minimum(out[:, 0], 0.03 * home)
        return out


def make_client(evaluator, seed=0, tmp_db=":memory:") -> TestClient:
    app = create_app(evaluator, dice_factory=lambda: SequenceDice(seed=seed), seed=seed, db=tmp_db)
    return TestClient(app)


def step_paths(planner: TurnPlanner, taken=()):
    """Every sequence of steps that completes a legal play: {afterstate bytes: steps}."""
    taken = list(taken)
    if planner.complete(taken):
        return {planner.board_after(taken).tobytes(): taken}
    out = {}
    for step in planner.options(taken):
        for key, path in step_paths(planner, taken + [step]).items():
            out.setdefault(key, path)
    return out


def play_ranked(client, gid, token, pick: int) -> dict:
    """Roll if needed, then play the roll's `pick`-th play of /api/hint at 1-ply (0 the best,
    -1 the worst) step by step, and confirm; the new state."""
    view = client.get(f"/api/games/{gid}", params={"token": token}).json()
    if view["can_roll"]:
        view = post(client, gid, "roll", token).json()
    if view["phase"] != "move":
        return view
    if view["legal_steps"]:
        hint = client.get("/api/hint", params={"position_id": view["position_id"],
                                               "dice": "".join(map(str, view["dice"])), "ply": 1}).json()
        target = Position.from_id(hint["plays"][pick]["position_id"]).swap().board.tobytes()
        board = Position.from_id(view["position_id"]).board
        path = step_paths(TurnPlanner(board, *view["dice"]))[target]
        for step in path:
            src, dst = step.points()
            res = post(client, gid, "step", token, **{"from": src, "to": dst, "die": step.die})
            assert res.status_code == 200, res.text
    res = post(client, gid, "confirm", token)
    assert res.status_code == 200, res.text
    return res.json()


def test_a_finished_game_is_analysed_and_the_worse_player_rates_worse(pubeval, tmp_path):
    db = tmp_path / "games.sqlite3"
    client = make_client(pubeval, seed=11, tmp_db=db)
    gid, token, state = new_game(client, mode="hotseat")
    res = client.get(f"/api/games/{gid}/analysis")
    assert res.status_code == 409 and "over" in res.json()["error"]          # in progress: refused
    state = post(client, gid, "roll", token).json()
    while sum(1 for e in state["log"] if e.get("steps") is not None) < 12:
        state = play_ranked(client, gid, token, 0 if state["turn"] == "white" else -1)
    loser = state["turn"]
    state = post(client, gid, "resign", token).json()
    assert state["phase"] == "over", state
    res = client.get(f"/api/games/{gid}/analysis", params={"ply": 1})
    assert res.status_code == 200, res.text
    report = res.json()
    moves = [e for e in state["log"] if e.get("steps") is not None and not e.get("undone")]
    checker = [d for d in report["decisions"] if d["kind"] == "checker"]
    assert len(checker) == len(moves) and [d["played"] for d in checker] == [e["move"] for e in moves]
    assert all(d["error"] >= 0 for d in report["decisions"])
    assert not any(d["kind"] == "cube" for d in report["decisions"])      # a game without the cube
    white, black = report["players"]
    assert (white["name"], black["name"]) == ("White", "Black")
    assert black["checker_error_rate"] > white["checker_error_rate"] + 50
    assert any(d["mark"] == "very bad" for d in checker if d["side"] == 1)
    assert white["rating"] and black["rating"] and isinstance(black["luck"], float)
    assert report["games_analysed"] == 1 and report["ply"] == 1 and report["mat"] == f"/api/games/{gid}/mat"
    assert client.get(report["mat"]).text.count("Wins") == 1
    assert loser in ("white", "black")
    # asked again, by this server or after a restart: read back from the store, not recomputed
    app = client.app
    assert app.state.context.analyses.made == 1
    assert client.get(f"/api/games/{gid}/analysis", params={"ply": 1}).json() == report
    assert app.state.context.analyses.made == 1
    again = make_client(pubeval, seed=11, tmp_db=db)
    assert again.get(f"/api/games/{gid}/analysis", params={"ply": 1}).json() == report
    assert again.app.state.context.analyses.made == 0


def test_analysis_refusals_are_4xx_json(pubeval):
    client = make_client(pubeval)
    assert client.get("/api/games/nope/analysis").status_code == 404
    gid, token, _ = new_game(client, mode="computer", level="easy")
    for ply in ("3", "x"):
        res = client.get(f"/api/games/{gid}/analysis", params={"ply": ply})
        assert res.status_code == 422 and "error" in res.json()
    res = client.get(f"/api/games/{gid}/analysis")
    assert res.status_code == 409 and res.json()["error"]


def test_a_match_is_analysed_game_by_game_at_the_level_ply(pubeval):
    client = make_client(pubeval, seed=5)
    gid, token, state = new_game(client, mode="computer", level="medium", match=3)
    state = post(client, gid, "roll", token).json()
    for _ in range(3):
        state = play_ranked(client, gid, token, 0)
    state = post(client, gid, "resign", token, points=1).json()
    assert state["phase"] != "over" and state["match"]["score"] == {"white": 0, "black": 1}
    report = client.get(f"/api/games/{gid}/analysis").json()
    assert report["games_analysed"] == 1 and report["ply"] == 1 and report["match_length"] == 3
    assert {d["game"] for d in report["decisions"]} == {1}
    assert any(d["kind"] == "cube" for d in report["decisions"])           # the cube is in play in a match


def test_match_hints_rank_plays_by_match_equity(pubeval):
    """At 1-point match (double match point) gammons count for nothing: the hint's equity of a
    play is 2 P(win) - 1 of its afterstate, not the money equity, and the plays are in that order."""
    client = make_client(HomeGammonEvaluator(pubeval), seed=3)
    gid, token, state = new_game(client, mode="hotseat", match=1)
    state = post(client, gid, "roll", token).json()
    assert state["phase"] == "move"
    hint = client.get(f"/api/games/{gid}/hint", params={"token": token}).json()
    assert hint["equity"] == "match"
    values = [p["equity"] for p in hint["plays"]]
    assert values == sorted(values, reverse=True)
    for p in hint["plays"]:
        probs = np.array(p["probabilities"])
        assert p["equity"] == pytest.approx(2 * probs[0] - 1, abs=1e-6)
    assert any(abs(p["equity"] - equity(np.array(p["probabilities"]))) > 1e-3 for p in hint["plays"])
    # a longer match: the analysis's match valuation of each afterstate, at the score
    gid, token, state = new_game(client, mode="hotseat", match=7)
    state = post(client, gid, "roll", token).json()
    hint = client.get(f"/api/games/{gid}/hint", params={"token": token}).json()
    mover = Position.from_id(state["position_id"])
    afters = np.array([Position.from_id(p["position_id"]).swap().board for p in hint["plays"]])
    expected = afterstate_equities(afters, np.array([p["probabilities"] for p in hint["plays"]]),
                                   CubeInfo(match_length=7, score=(0, 0)))
    assert [p["equity"] for p in hint["plays"]] == pytest.approx(list(expected), abs=1e-9)
    assert mover.id == state["position_id"]


def test_money_hints_keep_cubeless_equity(pubeval):
    client = make_client(pubeval, seed=3)
    gid, token, _ = new_game(client, mode="hotseat")
    post(client, gid, "roll", token)
    hint = client.get(f"/api/games/{gid}/hint", params={"token": token}).json()
    assert hint["equity"] == "money"
    for p in hint["plays"]:
        assert p["equity"] == pytest.approx(equity(np.array(p["probabilities"])), abs=1e-6)


class GatedEvaluator:
    """pubeval that, once `gate` is armed, waits for it to open: an analysis held mid-way."""

    name = "gated-pubeval"

    def __init__(self, base) -> None:
        import threading

        self.base = base
        self.armed = False
        self.gate = threading.Event()
        self.waiting = threading.Event()

    def evaluate(self, afterstates):
        if self.armed:
            self.waiting.set()
            assert self.gate.wait(60), "the gate was never opened"
        return self.base.evaluate(afterstates)


def test_live_games_are_served_while_an_analysis_runs_and_it_is_made_once(pubeval):
    from concurrent.futures import ThreadPoolExecutor

    evaluator = GatedEvaluator(pubeval)
    with make_client(evaluator, seed=4) as client:
        gid, token, _ = new_game(client, mode="hotseat")
        post(client, gid, "roll", token)
        for _ in range(2):
            play_ranked(client, gid, token, 0)
        assert post(client, gid, "resign", token).json()["phase"] == "over"
        evaluator.armed = True
        with ThreadPoolExecutor(2) as pool:
            first = pool.submit(client.get, f"/api/games/{gid}/analysis")
            assert evaluator.waiting.wait(30)
            second = pool.submit(client.get, f"/api/games/{gid}/analysis")
            # the analysis is held inside the engine: another game is played meanwhile
            other, other_token, _ = new_game(client, mode="hotseat")
            res = post(client, other, "roll", other_token)
            assert res.status_code == 200 and res.json()["phase"] == "move"
            assert not first.done()
            evaluator.gate.set()
            a, b = first.result(60), second.result(60)
        assert a.status_code == b.status_code == 200 and a.json() == b.json()
        assert client.app.state.context.analyses.made == 1
