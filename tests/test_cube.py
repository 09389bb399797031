"""Cube decisions: textbook cases, consistency rules, and agreement with GNU Backgammon."""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cube.equity import (CENTRE, ME_OWNS, OPP_OWNS, CubeInfo, best_cube_value, cash_value, cube_decision,
                                cube_efficiency, match_cubeful_mwc)
from engine.cube.lookahead import _leaf_values, cube_decision_2ply, cube_decision_3ply
from engine.evaluator import flip
from engine.position import decode_position_id, game_results
from engine.errors import CubeError
from engine.movegen import generate
from engine.position import Position
from tests.conftest import GNUBG

DATA = Path(__file__).parent / "data" / "gnubg-cube-decisions.json"
ORACLE = Path(__file__).parent / "data" / "gnubg-legal-moves.jsonl"


def P(win, wg=0.0, wbg=0.0, lg=0.0, lbg=0.0):
    return np.array([win, wg, wbg, lg, lbg])


def taker_threshold(cube, x, probs_of=lambda p: P(p)):
    """The doubler's P(win) above which the taker passes (bisection on the decision)."""
    lo, hi = 0.0, 1.0
    for _ in range(50):
        mid = (lo + hi) / 2
        if cube_decision(probs_of(mid), cube, x).response == "pass":
            hi = mid
        else:
            lo = mid
    return lo


# ----------------------------------------------------------------------------- textbook

def test_dead_cube_take_point_is_25_percent():
    cube = CubeInfo()
    for k in range(0, 101):
        p = k / 100
        d = cube_decision(P(p), cube, x=0.0)
        assert (d.response == "take") == (1 - p >= 0.25), p
    assert cube_decision(P(0.75), cube, 0.0).response == "take"   # exactly 25%: take


def test_live_cube_money_take_point_near_21_5_percent():
    tp = 1 - taker_threshold(CubeInfo(), 0.68)
    assert tp == pytest.approx(0.215, abs=0.003)
    assert tp == pytest.approx(0.5 / (2 + 0.5 * 0.68), abs=1e-6)   # Janowski: (L-1/2)/(W+L+x/2)


def test_double_pass_is_one_cube_in_money():
    for p in (0.1, 0.5, 0.8, 0.95):
        for cube in (CubeInfo(), CubeInfo(value=4, owner=ME_OWNS), CubeInfo(jacoby=True, beavers=True)):
            assert cube_decision(P(p, 0.2 * p), cube, 0.68).double_pass == 1.0


def test_too_good_with_big_gammon_chances():
    d = cube_decision(P(0.9, 0.6, 0.05), CubeInfo(), 0.68)
    assert d.too_good and not d.double
    assert d.no_double > d.double_pass
    assert d.action == "Too good to double, pass"
    d = cube_decision(P(0.9, 0.6, 0.05), CubeInfo(value=2, owner=ME_OWNS), 0.68)
    assert d.action == "Too good to redouble, pass"


def test_redouble_wording_and_money_window():
    assert cube_decision(P(0.70), CubeInfo(), 0.68).action == "Double, take"
    assert cube_decision(P(0.85), CubeInfo(), 0.68).action == "Double, pass"
    assert cube_decision(P(0.55), CubeInfo(), 0.68).action == "No double, take"
    assert cube_decision(P(0.85), CubeInfo(value=2, owner=ME_OWNS), 0.68).action == "Redouble, pass"
    assert cube_decision(P(0.55), CubeInfo(value=2, owner=ME_OWNS), 0.68).action == "No redouble, take"


def test_beaver_when_the_take_is_profitable():
    d = cube_decision(P(0.40, 0.05, 0.0, 0.05), CubeInfo(beavers=True), 0.68)
    assert d.response == "beaver" and d.action == "No double, beaver"
    d = cube_decision(P(0.40, 0.05, 0.0, 0.05), CubeInfo(beavers=False), 0.68)
    assert d.action == "No double, take"


def test_jacoby_kills_gammons_with_a_centred_cube():
    probs = P(0.75, 0.45, 0.02)
    assert cube_decision(probs, CubeInfo(), 0.68).action == "Too good to double, pass"
    jac = cube_decision(probs, CubeInfo(jacoby=True), 0.68)
    assert jac.double and jac.no_double < 1.0


def _last_roll_board(points):
    """My checkers on my points `points` (1..6), the opponent one checker on his ace point."""
    board = np.zeros((2, 25), dtype=np.int8)
    for pt in points:
        board[0, pt - 1] += 1
    board[1, 0] = 1
    return board


class OpponentAlwaysWins:
    """Exact for these last-roll leaves: the opponent bears off his last checker next turn."""

    name = "last-roll oracle"

    def evaluate(self, afterstates):
        return np.zeros((len(afterstates), 5))


def test_last_roll_positions_2ply():
    seen = set()
    for a in range(1, 7):
        for b in range(a, 7):
            board = _last_roll_board((a, b))
            wins = 0
            for d1 in range(1, 7):
                for d2 in range(1, 7):
                    after, _ = generate(board, d1, d2)
                    wins += any(s[0].sum() == 0 for s in after)
            p = wins / 36
            d = cube_decision_2ply(board, OpponentAlwaysWins(), CubeInfo())
            assert d.no_double == pytest.approx(2 * p - 1)
            assert d.double_take == pytest.approx(2 * (2 * p - 1))
            if p > 0.5:
                assert d.double
            if p < 0.5:
                assert not d.double
            assert (d.response == "take") == (p <= 0.75)
            seen.add(d.action)
    assert {"No double, take", "Double, take", "Double, pass"} <= seen


def test_last_roll_positions_3ply_equal_2ply():
    """The opponent's 2-ply answer to a last roll is the same sure win as his 1-ply one."""
    for points in ((1, 2), (6, 6), (3, 5), (6,)):
        board = _last_roll_board(points)
        for cube in (CubeInfo(), CubeInfo(value=2, owner=ME_OWNS)):
            two = cube_decision_2ply(board, OpponentAlwaysWins(), cube)
            three = cube_decision_3ply(board, OpponentAlwaysWins(), cube)
            assert (three.no_double, three.double_take, three.action) == pytest.approx(
                (two.no_double, two.double_take, two.action))


def _scalar_leaf_values(afterstates, probs, cube):
    """_leaf_values as defined, one leaf at a time (the vectorised money path must equal it)."""
    points = game_results(afterstates)
    out = []
    for k, after in enumerate(afterstates):
        if points[k]:
            pts = int(np.sign(points[k])) if cube.is_money and cube.jacoby and cube.owner == CENTRE else int(points[k])
            out.append(cash_value(cube, pts))
            continue
        opp_board = after[::-1]
        value = best_cube_value(flip(probs[k]), cube.swapped(), cube_efficiency(opp_board), opp_board)
        out.append(-value if cube.is_money else 1.0 - value)
    return np.array(out)


def test_leaf_values_on_arrays_equal_the_scalar_definition():
    records = [json.loads(line) for line in (ORACLE.read_text().splitlines())[::25]]
    boards = np.stack([decode_position_id(a) for r in records for a in r["afterstates"][:6]]
                      + [_last_roll_board((1,)), _last_roll_board((2, 3))[::-1].copy()])
    rng = np.random.default_rng(3)
    n = len(boards)
    win = rng.uniform(0, 1, n)
    win[:8] = [0.0, 1.0, 1e-9, 1 - 1e-9, 0.5, 0.25, 0.75, 0.9]
    wg, lg = win * rng.uniform(0, 0.6, n), (1 - win) * rng.uniform(0, 0.6, n)
    probs = np.stack([win, wg, wg * rng.uniform(0, 0.3, n), lg, lg * rng.uniform(0, 0.3, n)], axis=1)
    assert n > 500
    for cube in (CubeInfo(), CubeInfo(jacoby=True), CubeInfo(value=2, owner=ME_OWNS),
                 CubeInfo(value=4, owner=OPP_OWNS), CubeInfo(value=8, owner=ME_OWNS, jacoby=True),
                 CubeInfo(beavers=True), CubeInfo(match_length=7, score=(2, 4)),
                 CubeInfo(value=2, owner=ME_OWNS, match_length=5, score=(1, 3)),
                 CubeInfo(value=2, owner=OPP_OWNS, match_length=7, score=(5, 2)),
                 CubeInfo(match_length=3, score=(1, 1)), CubeInfo(match_length=5, score=(4, 2), crawford=True),
                 CubeInfo(match_length=5, score=(4, 3)), CubeInfo(match_length=9, score=(0, 0))):
        np.testing.assert_allclose(_leaf_values(boards, probs, cube), _scalar_leaf_values(boards, probs, cube),
                                   rtol=0, atol=1e-12)


# ----------------------------------------------------------------------------- match play

def test_crawford_game_no_doubling():
    for score in ((6, 3), (3, 6)):
        cube = CubeInfo(match_length=7, score=score, crawford=True)
        for p in (0.3, 0.6, 0.9):
            d = cube_decision(P(p, 0.2 * p), cube, 0.68)
            assert not d.may_double and not d.double
            assert d.action == "Never double, take (dead cube)"


def test_post_crawford_trailer_doubles_at_once():
    cube = CubeInfo(match_length=7, score=(3, 6))          # I need 4, the leader needs 1
    for p in (0.3, 0.4, 0.5, 0.6):
        d = cube_decision(P(p, 0.12 * p, 0.0, 0.1 * (1 - p)), cube, 0.68)
        assert d.double, (p, d)
        assert d.response == ("take" if p <= 0.5 else "pass"), (p, d)
    leader = CubeInfo(match_length=7, score=(6, 3))        # the leader can never double
    assert not cube_decision(P(0.7), leader, 0.68).may_double


def test_post_crawford_free_drop():
    cube = CubeInfo(match_length=7, score=(5, 6))          # trailer at 2-away, leader 1-away
    assert cube_decision(P(0.45), cube, 0.68).action == "Double, take"
    assert cube_decision(P(0.55), cube, 0.68).action == "Double, pass"
    # The leader's take point is exactly 50%: passing only brings the trailer to 1-away.
    assert 1 - taker_threshold(cube, 0.68) == pytest.approx(0.5, abs=1e-6)


def test_match_dead_cube_take_point_from_the_met():
    cube = CubeInfo(match_length=5, score=(3, 3))          # 2-away / 2-away: the 2-cube is dead
    assert 1 - taker_threshold(cube, 0.68) == pytest.approx(0.32264, abs=1e-6)


def test_cube_dead_for_me_when_winning_this_game_wins_the_match():
    d = cube_decision(P(0.6), CubeInfo(match_length=7, score=(5, 3), value=2, owner=ME_OWNS), 0.68)
    assert not d.may_double and d.action == "Never redouble, take (dead cube)"


def test_bad_settings_raise():
    for kwargs in (dict(value=3), dict(owner="nobody"), dict(match_length=7, score=(7, 0)),
                   dict(match_length=7, score=(2, 3), crawford=True), dict(match_length=30),
                   dict(match_length=7, jacoby=True), dict(score=(1, 0))):
        with pytest.raises(CubeError):
            CubeInfo(**kwargs)


# ----------------------------------------------------------------------------- consistency

@st.composite
def probabilities(draw):
    w = draw(st.floats(0.0, 1.0))
    wg = draw(st.floats(0.0, 1.0)) * w
    wbg = draw(st.floats(0.0, 1.0)) * wg
    lg = draw(st.floats(0.0, 1.0)) * (1 - w)
    lbg = draw(st.floats(0.0, 1.0)) * lg
    return P(w, wg, wbg, lg, lbg)


@st.composite
def cubes(draw):
    if draw(st.booleans()):
        return CubeInfo(value=1 << draw(st.integers(0, 6)), owner=draw(st.sampled_from([CENTRE, ME_OWNS, OPP_OWNS])),
                        jacoby=draw(st.booleans()), beavers=draw(st.booleans()))
    n = draw(st.integers(1, 25))
    a, b = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
    crawford = (n - a == 1 or n - b == 1) and draw(st.booleans())
    if crawford:
        return CubeInfo(match_length=n, score=(a, b), crawford=True)
    return CubeInfo(match_length=n, score=(a, b), value=1 << draw(st.integers(0, 4)),
                    owner=draw(st.sampled_from([CENTRE, ME_OWNS, OPP_OWNS])))


@settings(max_examples=400, deadline=None)
@given(probabilities(), cubes(), st.floats(0.0, 1.0))
def test_consistency(probs, cube, x):
    d = cube_decision(probs, cube, x)
    assert d.proper_equity == pytest.approx(max(d.no_double, min(d.double_take, d.double_pass)))
    assert d.double_pass == pytest.approx(1.0)
    if d.may_double and probs[1] > 0:
        assert d.too_good == (d.no_double > d.double_pass)
    if d.double:
        assert min(d.double_take, d.double_pass) >= d.no_double - 1e-9
    if not cube.is_money:
        for v in (d.no_double_mwc, d.double_take_mwc, d.double_pass_mwc):
            assert 0.0 <= v <= 1.0
        assert 0.0 <= match_cubeful_mwc(probs, cube, x) <= 1.0


# ----------------------------------------------------------------------------- gnubg

def _cube_from_case(case):
    return CubeInfo(value=case["cube"], owner=case["owner"], jacoby=case["jacoby"], beavers=case["beavers"],
                    match_length=case["match"], score=tuple(case["score"]), crawford=case["crawford"])


def test_agrees_with_recorded_gnubg_cube_analysis():
    """gnubg's 0-ply probabilities in, our cube math out: gnubg's equities and words."""
    cases = json.loads(DATA.read_text())["cases"]
    assert len(cases) >= 100
    for case in cases:
        board = Position.from_id(case["position"]).board
        d = cube_decision(np.array(case["probs"]), _cube_from_case(case), cube_efficiency(board))
        g = case["gnubg"]
        assert d.no_double == pytest.approx(g["no_double"], abs=2e-4), case
        assert d.double_take == pytest.approx(g["double_take"], abs=2e-4), case
        assert d.double_pass == pytest.approx(g["double_pass"], abs=2e-4), case
        assert d.action == g["action"], case


PROBE = r'''
import gnubg, json, os
cases = json.load(open(os.environ["CASES_IN"]))
ec = gnubg.evalcontext(1, 0, 0, 1, 0.0)
out = []
for c in cases:
    board = gnubg.positionfromid(c["position"])
    ci = gnubg.cubeinfo(c["value"], c["owner"], 1, c["match"], tuple(c["score"]), c["crawford"], 0)
    ci["jacoby"] = c["jacoby"]
    ci["beavers"] = c["beavers"]
    probs = gnubg.evaluate(board, ci, ec)
    cf = gnubg.cfevaluate(board, ci, ec)
    out.append({"probs": list(probs[:5]), "cf": list(cf)})
json.dump(out, open(os.environ["CASES_OUT"], "w"))
'''


@pytest.mark.gnubg
def test_agrees_with_live_gnubg(tmp_path):
    """Ask the installed gnubg for a few cube decisions right now and compare."""
    positions = ["3j2BAIQ7dwBAKA", "z1UAgDzOXYIRQA", "4HPMQRCwZ/AAUg", "k4EMSG4GRgbLSQ", "3wDkQgZ+DwAaRA"]
    contexts = [  # gnubg owner: -1 centre, 1 = player on roll (us), score = (opponent, us)
        dict(value=1, owner=-1, match=0, score=[0, 0], crawford=0, jacoby=0, beavers=0),
        dict(value=2, owner=1, match=0, score=[0, 0], crawford=0, jacoby=1, beavers=1),
        dict(value=1, owner=-1, match=9, score=[4, 2], crawford=0, jacoby=0, beavers=0),
        dict(value=2, owner=1, match=11, score=[6, 3], crawford=0, jacoby=0, beavers=0),
        dict(value=1, owner=-1, match=7, score=[6, 4], crawford=0, jacoby=0, beavers=0),
    ]
    cases = [dict(position=p, **c) for p in positions for c in contexts]
    (tmp_path / "in.json").write_text(json.dumps(cases))
    (tmp_path / "probe.py").write_text(PROBE)
    env = dict(os.environ, CASES_IN=str(tmp_path / "in.json"), CASES_OUT=str(tmp_path / "out.json"))
    subprocess.run([GNUBG, "-t", "-q", "-p", str(tmp_path / "probe.py")], env=env, cwd=tmp_path,
                   capture_output=True, timeout=300, check=False)
    out = json.loads((tmp_path / "out.json").read_text())
    assert len(out) == len(cases)
    for c, o in zip(cases, out):
        cube = CubeInfo(value=c["value"], owner={-1: CENTRE, 1: ME_OWNS}[c["owner"]], jacoby=bool(c["jacoby"]),
                        beavers=bool(c["beavers"]), match_length=c["match"], score=(c["score"][1], c["score"][0]))
        board = Position.from_id(c["position"]).board
        d = cube_decision(np.array(o["probs"]), cube, cube_efficiency(board))
        assert d.no_double == pytest.approx(o["cf"][1], abs=2e-4), c
        assert d.double_take == pytest.approx(o["cf"][2], abs=2e-4), c
        assert d.action == o["cf"][5], c
