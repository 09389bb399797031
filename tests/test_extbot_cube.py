"""serve's cube answers come from engine.cube.equity: doubles (when offered) and take/drop.

The board lines were sent by gnubg 1.07 to `tdgammon serve` in a money session: one
before our roll (centred cube), one while gnubg's double from 1 to 2 was pending, and
(beavers on) one after gnubg beavered our double from 1 (cube at 2, gnubg owns it).
"""

import numpy as np

from engine.gnubg.extbot import ExternalBot, cube_for
from engine.formats.fibs import parse_fibs_board

BEFORE_ROLL = ("board:gnubg:root:0:0:0:0:0:-1:1:2:0:3:2:2:0:0:0:-2:2:0:0:-1:-1:-3:-3:-2:0:3:-2:0:0:-1:0:0:0:0:"
               "1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1")
BEAVERED = ("board:gnubg:root:0:0:0:0:-2:0:0:0:0:5:0:4:0:0:0:-5:4:0:0:0:-3:0:-5:0:0:1:0:1:0:-1:0:0:0:0:"
            "2:1:0:1:1:-1:0:25:0:0:0:0:0:0:0:1")
DOUBLED = ("board:root:gnubg:0:0:0:-1:0:0:2:2:2:3:2:0:0:0:0:0:0:0:0:0:0:0:1:0:-4:1:-8:2:0:1:0:0:0:0:"
           "2:1:0:1:1:-1:0:25:0:2:0:0:0:0:0:1")


class Fixed:
    """Every afterstate gets the same probabilities (from the side that just moved)."""

    name = "fixed"

    def __init__(self, probs):
        self.probs = np.array(probs, dtype=np.float64)

    def evaluate(self, afterstates):
        return np.tile(self.probs, (len(afterstates), 1))


def test_cube_settings_from_the_board_lines():
    cube = cube_for(parse_fibs_board(BEFORE_ROLL), doubler_view=False)
    assert cube.is_money and cube.value == 1 and cube.owner == "centre"
    cube = cube_for(parse_fibs_board(DOUBLED), doubler_view=True)
    assert cube.is_money and cube.value == 2 and cube.owner == "me"


def test_doubles_only_when_offered_and_right():
    strong = Fixed([0.2, 0.0, 0.0, 0.0, 0.0])      # the opponent after our play: we win 80%
    weak = Fixed([0.55, 0.0, 0.0, 0.0, 0.0])
    assert ExternalBot(strong, offer_doubles=True).respond(BEFORE_ROLL) == "double"
    assert ExternalBot(strong, offer_doubles=False).respond(BEFORE_ROLL) == "roll"
    assert ExternalBot(weak, offer_doubles=True).respond(BEFORE_ROLL) == "roll"


def test_take_or_drop_by_the_doublers_cube_decision():
    # The doubler is on roll; afterstates are scored from our side after our move.
    assert ExternalBot(Fixed([0.15, 0.0, 0.0, 0.0, 0.0])).respond(DOUBLED) == "drop"   # doubler wins 85%
    assert ExternalBot(Fixed([0.35, 0.0, 0.0, 0.0, 0.0])).respond(DOUBLED) == "take"   # doubler wins 65%


def test_a_beaver_of_our_double_is_answered_by_us():
    # Afterstates are scored from the side that just moved: gnubg before our roll.
    confident = Fixed([0.2, 0.0, 0.0, 0.0, 0.0])      # we win 80%: taking the beaver beats -2
    bot = ExternalBot(confident, offer_doubles=True)
    assert bot.respond(BEAVERED) == "take" and bot.cube_answers == 1 and bot.errors == 0
    crushed = Fixed([0.97, 0.9, 0.3, 0.0, 0.0])       # gnubg wins 97%, mostly gammons: drop for 2
    assert ExternalBot(crushed, offer_doubles=True).respond(BEAVERED) == "drop"


def test_the_beaver_answer_is_our_double_of_the_beavered_cube():
    from engine.cube.equity import cube_decision, cube_efficiency
    from engine.formats.fibs import parse_fibs_board as parse
    from engine.search import evaluate_position

    fb = parse(BEAVERED)
    board = fb.position_board()
    cube = cube_for(fb, doubler_view=False)
    assert cube.is_money and cube.value == 2 and cube.owner == "opponent"
    answers = set()
    for p_win in np.linspace(0.3, 0.95, 14):
        evaluator = Fixed([p_win, 0.6 * p_win, 0.0, 0.0, 0.0])
        d = cube_decision(evaluate_position(board, evaluator, 1),
                          type(cube)(value=2, owner="me"), cube_efficiency(board))
        expected = "drop" if d.double_take < -1.0 else "take"
        assert ExternalBot(evaluator).respond(BEAVERED) == expected
        answers.add(expected)
    assert answers == {"take", "drop"}
