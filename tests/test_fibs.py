"""FIBS board lines: real lines recorded from gnubg 1.07 (external player), both seats."""

import numpy as np
import pytest

from engine.formats.fibs import FibsBoardError, parse_fibs_board
from engine.position import Position

# Recorded from `gnubg -t` with `set player 0 external ...` (our side is O, turn -1) and
# `set player 1 external ...` (our side is X, turn 1); gnubg always writes colour 1, direction -1.
SEAT0_OPENING = ("board:gnubg:root:0:0:0:0:-2:0:0:0:0:5:0:4:0:0:0:-5:4:0:0:0:-3:0:-5:0:0:1:0:1:0"
                 ":-1:1:4:1:4:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1")
SEAT1_BAR = ("board:gnubg:root:0:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-4:5:0:0:0:-3:0:-5:-1:0:0:1:0:1"
             ":1:5:6:5:6:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1")
SEAT1_ROLL = ("board:gnubg:root:0:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-4:5:0:0:0:-3:0:-5:-1:0:0:1:0:1"
              ":1:0:0:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1")
SEAT1_DOUBLED = ("board:root:gnubg:0:0:0:-1:-2:2:1:4:2:5:0:-1:0:0:0:-1:0:0:0:0:-2:-2:-2:-2:-2:0"
                 ":1:0:0:-1:0:0:0:0:1:1:1:1:1:-1:0:25:0:0:0:0:0:0:0:1")


def board_from(mine: dict[int, int], theirs: dict[int, int]) -> np.ndarray:
    """Our convention from point maps (25 = bar), `theirs` in the opponent's own numbering."""
    b = np.zeros((2, 25), dtype=np.int8)
    for row, points in ((0, mine), (1, theirs)):
        for p, n in points.items():
            b[row, p - 1] = n
    return b


def test_field_order():
    fb = parse_fibs_board(SEAT1_BAR + "\n")
    assert (fb.player, fb.opponent, fb.match_length) == ("gnubg", "root", 0)
    assert (fb.player_score, fb.opponent_score) == (0, 0)
    assert len(fb.board) == 26 and fb.board[25] == 1 and fb.board[20] == -1
    assert fb.turn == 1 and fb.player_dice == (5, 6) and fb.opponent_dice == (5, 6)
    assert (fb.cube, fb.player_may_double, fb.opponent_may_double, fb.was_doubled) == (1, 1, 1, 0)
    assert (fb.colour, fb.direction, fb.home, fb.bar) == (1, -1, 0, 25)
    assert (fb.player_on_home, fb.opponent_on_home, fb.player_on_bar, fb.opponent_on_bar) == (0, 0, 0, 0)
    assert (fb.can_move, fb.forced_move, fb.did_crawford, fb.redoubles) == (0, 0, 0, 1)
    assert fb.to_line() == SEAT1_BAR


def test_seat1_x_direction_minus_one():
    fb = parse_fibs_board(SEAT1_BAR)
    assert fb.decider == 1 and fb.decider_is_player and fb.dice() == (5, 6)
    expected = board_from({6: 5, 8: 3, 13: 5, 23: 1, 25: 1}, {24: 2, 13: 4, 8: 3, 6: 5, 5: 1})
    assert (fb.position_board() == expected).all()


def test_seat0_o_plays_the_other_way():
    fb = parse_fibs_board(SEAT0_OPENING)
    assert fb.decider == -1 and not fb.decider_is_player and fb.dice() == (1, 4)
    mine = {24: 2, 13: 5, 8: 3, 6: 5}
    theirs = {6: 5, 8: 4, 13: 4, 22: 1, 24: 1}
    assert (fb.position_board() == board_from(mine, theirs)).all()
    assert Position(fb.position_board()).swap() == Position(fb.board_for(1))


def test_roll_and_double_states():
    assert parse_fibs_board(SEAT1_ROLL).dice() == (0, 0)
    fb = parse_fibs_board(SEAT1_DOUBLED)
    # gnubg (O, turn -1) doubled; we are X and must answer.
    assert fb.doubled and fb.turn == -1 and fb.decider == 1
    assert fb.cube_owner() == -1
    b = fb.position_board()
    assert b[0].sum() == 15 and b[1].sum() == 15 and b[1, 24] == 1


def _variants(line: str):
    """The same state written four ways: colour and/or direction flipped, seats swapped."""
    fb = parse_fibs_board(line)
    parts = fb.to_line().split(":")
    vals = [int(v) for v in parts[6:32]]
    out = []
    for neg in (False, True):
        for rev in (False, True):
            v = [-x for x in vals] if neg else list(vals)
            if rev:
                v = v[::-1]
            p = list(parts)
            p[6:32] = [str(x) for x in v]
            sign = -1 if neg else 1
            p[32] = str(sign * fb.turn)                       # turn is a colour
            p[41] = str(sign * fb.colour)
            p[42] = str(-fb.direction if rev else fb.direction)
            p[43], p[44] = ("25", "0") if rev else ("0", "25")
            out.append(":".join(p))
            # Seat swap: the same board seen by the other player.
            q = list(p)
            q[1], q[2] = p[2], p[1]
            q[4], q[5] = p[5], p[4]
            q[33:35], q[35:37] = p[35:37], p[33:35]
            q[38], q[39] = p[39], p[38]
            q[41] = str(-int(p[41]))
            q[42] = str(-int(p[42]))
            q[43], q[44] = p[44], p[43]
            q[45], q[46] = p[46], p[45]
            q[47], q[48] = p[48], p[47]
            out.append(":".join(q))
    return fb, out


@pytest.mark.parametrize("line", [SEAT0_OPENING, SEAT1_BAR, SEAT1_ROLL, SEAT1_DOUBLED])
def test_every_colour_direction_and_seat_decodes_the_same(line):
    fb, variants = _variants(line)
    for text in variants:
        other = parse_fibs_board(text)
        assert (other.position_board() == fb.position_board()).all(), text
        assert other.dice() == fb.dice()
        assert other.doubled == fb.doubled


@pytest.mark.parametrize("bad", [
    "", "hello", "board:a:b:0:0:0", SEAT1_BAR.replace(":1:5:6:", ":1:5:x:"),
    SEAT1_BAR.replace(":1:-1:0:25:", ":2:-1:0:25:"), SEAT1_BAR.replace(":5:6:5:6:", ":7:6:7:6:"),
    SEAT1_BAR.replace("board:gnubg:root:0:0:0:0:-2:", "board:gnubg:root:0:0:0:0:-12:"),
])
def test_malformed_lines_raise(bad):
    with pytest.raises(FibsBoardError):
        parse_fibs_board(bad)


def test_nul_bytes_from_gnubg_are_ignored():
    assert parse_fibs_board("\x00" + SEAT1_BAR + "\n\x00").turn == 1


# Recorded from gnubg 1.07 with `set beavers 3`: our double (cube 1, centred) beavered by gnubg.
# Seat 0 (our side O, colour -1) and seat 1 (X, colour 1); turn is still the doubler's colour.
SEAT0_DOUBLE_OFFERED = ("board:gnubg:root:0:0:0:0:-2:0:0:0:0:5:0:4:0:0:0:-5:4:0:0:0:-3:0:-5:0:0:1:0:1:0"
                        ":-1:0:0:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:1")
SEAT0_BEAVERED = ("board:gnubg:root:0:0:0:0:-2:0:0:0:0:5:0:4:0:0:0:-5:4:0:0:0:-3:0:-5:0:0:1:0:1:0"
                  ":-1:0:0:0:0:2:1:0:1:1:-1:0:25:0:0:0:0:0:0:0:1")
SEAT1_BEAVERED = ("board:gnubg:root:0:0:0:0:-1:0:0:-1:0:5:0:3:0:0:0:-4:5:0:0:-1:-3:0:-5:0:0:0:0:2:0"
                  ":1:0:0:0:0:2:0:1:1:1:-1:0:25:0:0:0:0:0:0:0:1")


def test_a_beaver_hands_the_decision_back_to_the_doubler():
    before = parse_fibs_board(SEAT0_DOUBLE_OFFERED)
    fb = parse_fibs_board(SEAT0_BEAVERED)
    assert fb.doubled and fb.beavered and not before.beavered
    assert fb.decider == -1 and fb.cube == 2            # we (O) doubled; the cube is at the beavered value
    assert fb.cube_owner() == 1                          # the beaverer holds it
    assert fb.dice() == (0, 0)
    assert (fb.position_board() == before.position_board()).all()   # our board, as when we doubled
    fb1 = parse_fibs_board(SEAT1_BEAVERED)
    assert fb1.beavered and fb1.decider == 1 and fb1.decider_is_player and fb1.cube_owner() == 1


def test_a_plain_double_is_not_a_beaver():
    for line in (SEAT1_DOUBLED, SEAT0_DOUBLE_OFFERED, SEAT1_ROLL):
        assert not parse_fibs_board(line).beavered
    fb = parse_fibs_board(SEAT1_DOUBLED)
    assert fb.decider == -fb.turn
