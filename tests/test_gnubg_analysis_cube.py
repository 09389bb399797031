"""The cube diagnosis of the gnubg match analysis (scripts/lab/gnubg_analysis_cube.py): its error
definitions are our grading's, its table evaluator sees afterstates from the right side, and
its parallel gnubg runs keep the cases' order."""

import numpy as np
import pytest

from engine.analysis.grade import grade_cube
from engine.cube.equity import ME_OWNS, CubeInfo
from engine.movegen import generate
from engine.position import Position
from engine.search import evaluate_position
from models.loader import load_evaluator
from scripts.lab.gnubg_analysis_cube import _TABLE_SCRIPT, TableEvaluator, cube_error, run_gnubg

# Bob's position when alice doubled him in game 2 of the stored 7-point match.
DOUBLED = "9wMDTAjYBoxwRQ"
OPENING = "4HPwATDgc/ABMA"


def test_cube_error_definitions():
    # Too good: doubling gives away ND - DP; taking gives the doubler DT - DP more.
    assert cube_error(1.2, 1.8, 1.0, "cube", acted=True) == pytest.approx(0.2)
    assert cube_error(1.2, 1.8, 1.0, "cube", acted=False) == 0.0
    assert cube_error(1.2, 1.8, 1.0, "take", acted=True) == pytest.approx(0.8)
    assert cube_error(1.2, 1.8, 1.0, "take", acted=False) == 0.0
    # Double / take: not doubling costs DT - ND, passing DP - DT.
    assert cube_error(0.5, 0.7, 1.0, "cube", acted=False) == pytest.approx(0.2)
    assert cube_error(0.5, 0.7, 1.0, "take", acted=False) == pytest.approx(0.3)


@pytest.mark.parametrize("cube", [CubeInfo(), CubeInfo(match_length=7, score=(0, 1)),
                                  CubeInfo(value=2, owner=ME_OWNS, match_length=7, score=(1, 0))])
def test_cube_error_is_the_gradings(cube):
    """cube_error on grade_cube's own ND / DT / DP gives grade_cube's errors, every action."""
    evaluator = load_evaluator(None)
    board = Position.from_id(DOUBLED).board
    for doubled in (False, True):
        for answer in (("take", "drop") if doubled else (None,)):
            roller, taker = grade_cube(board, cube, evaluator, 1, doubled, answer)
            nd, dt, dp = (o["equity"] for o in roller["options"][:3])
            assert cube_error(nd, dt, dp, "cube", doubled) == pytest.approx(roller["error"], abs=1e-5)
            if answer:
                assert cube_error(nd, dt, dp, "take", answer == "take") == pytest.approx(taker["error"], abs=1e-5)


def test_table_evaluator_sees_each_afterstate_from_the_mover():
    """A table of our own 1-ply values of the side on roll gives back our evaluator's afterstate values."""
    evaluator = load_evaluator(None)
    board = np.ascontiguousarray(Position.from_id(DOUBLED).board)
    afters, _ = generate(board, 6, 4)
    table = {Position(np.ascontiguousarray(a[::-1])).id: evaluate_position(a[::-1], evaluator, 1).tolist()
             for a in afters}
    got = TableEvaluator(table).evaluate(afters)
    assert np.allclose(got, evaluator.evaluate(afters), atol=1e-6)


@pytest.mark.gnubg
def test_parallel_gnubg_keeps_the_order():
    ids = [OPENING, DOUBLED, Position(Position.from_id(DOUBLED).board[::-1].copy()).id]
    one = run_gnubg(_TABLE_SCRIPT, ids, procs=1)
    three = run_gnubg(_TABLE_SCRIPT, ids, procs=3)
    assert np.allclose(one, three)
    assert len(one) == 3 and len({round(p[0], 4) for p in one}) == 3
    assert one[0][0] == pytest.approx(0.5, abs=0.05)
