"""serve's cube answers come from engine.cube: doubles (when offered) and take/drop.

The two board lines were sent by gnubg 1.07 to `tdgammon serve` in a money session: one
before our roll (centred cube), one while gnubg's double from 1 to 2 was pending.
"""

import numpy as np

from engine.extbot import ExternalBot, cube_for
from engine.fibs import parse_fibs_board

BEFORE_ROLL = ("board:gnubg:root:0:0:0:0:0:-1:1:2:0:3:2:2:0:0:0:-2:2:0:0:-1:-1:-3:-3:-2:0:3:-2:0:0:-1:0:0:0:0:"
               "1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1")
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
