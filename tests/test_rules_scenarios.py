"""One scenario per rule of play, each drawn as the ASCII board `tdgammon show` prints.

X is on roll and moves from 24 down to 1 (points 1-12 along the bottom); O is the
opponent. A stack taller than five shows its count in its fifth row; bar checkers sit
in the BAR column (O's on top, X's below). `diagram()` reads these drawings, and each
test also checks that engine.formats.ascii_board draws the board back exactly as written.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from engine.formats.ascii_board import render
from engine.dice import ALL_ROLLS, opening_roll
from engine.errors import MoveError
from engine.notation import legal_plays, parse_play
from engine.position import BAR, ME, OPP, Position, game_result


def diagram(text: str) -> Position:
    """Read a board drawn like render(): the label line, 5 rows, BAR line, 5 rows, label line."""
    lines = [line.rstrip() for line in textwrap.dedent(text).strip("\n").splitlines()]
    top = next(i for i, line in enumerate(lines) if "+13-14" in line)
    shift = lines[top].index("+")  # render() draws one space before the frame
    rows = [" " + line[shift:].ljust(43) for line in lines[top + 1:top + 12]]
    assert rows[5].strip().startswith("|") and "BAR" in rows[5], "row 6 must be the BAR line"
    board = np.zeros((2, 25), dtype=np.int8)

    def column(half: list[str], start: int) -> tuple[str, int]:
        owner, count = " ", 0
        for row in half:
            cell = row[start:start + 3].strip()
            if cell.isdigit():
                return owner, int(cell)
            if cell in ("X", "O"):
                owner, count = cell, count + 1
        return owner, count

    def put(owner: str, count: int, point: int | None) -> None:
        if owner == "X":
            board[ME, BAR if point is None else point - 1] = count
        elif owner == "O":
            board[OPP, BAR if point is None else 24 - point] = count

    top_half, bottom_half = rows[0:5], rows[6:11][::-1]  # both listed from the edge inwards
    for k in range(6):
        put(*column(top_half, 2 + 3 * k), 13 + k)
        put(*column(top_half, 25 + 3 * k), 19 + k)
        put(*column(bottom_half, 2 + 3 * k), 12 - k)
        put(*column(bottom_half, 25 + 3 * k), 6 - k)
    put(*column(top_half, 21), None)
    put(*column(bottom_half, 21), None)
    position = Position(board)
    drawn = [line[1:44].rstrip() for line in render(position).splitlines()[1:14]]
    assert drawn == [line[shift:shift + 43].rstrip() for line in lines[top:top + 13]], (
        "render() does not draw this diagram back:\n" + "\n".join(drawn))
    return position


def notations(position: Position, dice: tuple[int, int]) -> list[str]:
    return sorted(play.notation for play in legal_plays(position, dice))


FORCED_LARGER_DIE = """
    +13-14-15-16-17-18------19-20-21-22-23-24-+
    | X                |   | O                |
    |                  |   | O                |
    |                  |   | O                |
    |                  |   | O                |
    |                  |   |13                |
    |                  |BAR|                  |
    |                  |   |               14 |
    |                  |   |                X |
    |                  |   |                X |
    |                  |   |             O  X |
    |                  |   |             O  X |
    +12-11-10--9--8--7-------6--5--4--3--2--1-+
"""


def test_only_one_die_playable_the_larger_must_be_played():
    # 6-5: 13/7 and 13/8 are both open, but O's point 2 stops the checker from going on;
    # the 14 checkers on the 1-point may not bear off while the 13 is outside.
    position = diagram(FORCED_LARGER_DIE)
    assert position.id == "4P8DABj/PwAEAA"
    assert notations(position, (6, 5)) == ["13/7"]
    with pytest.raises(MoveError):
        parse_play(position.board, "13/8", (6, 5))


COMPULSORY_SECOND_DIE = """
    +13-14-15-16-17-18------19-20-21-22-23-24-+
    | X                |   | O                |
    |                  |   | O                |
    |                  |   | O                |
    |                  |   | O                |
    |                  |   |13                |
    |                  |BAR|                  |
    |                  |   |               14 |
    |                  |   |                X |
    |                  |   |                X |
    |                O |   |                X |
    |                O |   |                X |
    +12-11-10--9--8--7-------6--5--4--3--2--1-+
"""


def test_a_die_playable_only_after_the_other_is_compulsory():
    # 6-1: the 6 is blocked from 13 (O holds 7) but playable after 13/12, so both must go.
    position = diagram(COMPULSORY_SECOND_DIE)
    assert notations(position, (6, 1)) == ["13/6"]
    with pytest.raises(MoveError):
        parse_play(position.board, "13/12", (6, 1))
    after, _ = parse_play(position.board, "13/12 12/6", (6, 1))
    assert Position(after) == legal_plays(position, (6, 1))[0].after


BEAR_OFF_FROM_HIGHEST = """
    +13-14-15-16-17-18------19-20-21-22-23-24-+
    |                  |   | O                |
    |                  |   | O                |
    |                  |   | O                |
    |                  |   | O                |
    |                  |   | O                |
    |                  |BAR|                  |
    |10                |   |                  |
    | O                |   |                  |
    | O                |   |                  |
    | O                |   |                  |
    | O                |   |       X     X    |
    +12-11-10--9--8--7-------6--5--4--3--2--1-+
"""


def test_bear_off_from_the_highest_point_with_a_larger_die():
    position = diagram(BEAR_OFF_FROM_HIGHEST)
    assert position.off() == (13, 0)
    plays = legal_plays(position, (6, 5))
    assert [p.notation for p in plays] == ["4/off 2/off"]
    assert plays[0].after.result() == 2  # O has borne off none: gammon
    # 2-1: the 2 bears off exactly or moves 4/2; the 1 may not bear off from the 2
    assert notations(position, (2, 1)) == ["4/1", "4/3 2/off"]


BEAR_OFF_MOVE_INSIDE_FIRST = """
    +13-14-15-16-17-18------19-20-21-22-23-24-+
    |                  |   | O                |
    |                  |   | O                |
    |                  |   | O                |
    |                  |   | O                |
    |                  |   | O                |
    |                  |BAR|                  |
    |10                |   |                  |
    | O                |   |                  |
    | O                |   |                  |
    | O                |   |                  |
    | O                |   | X     X          |
    +12-11-10--9--8--7-------6--5--4--3--2--1-+
"""


def test_a_die_smaller_than_the_highest_point_moves_inside_first():
    # 5-5: the 4 may not bear off with a 5 while the 6 is occupied, so 6/1 comes first,
    # then 4/off (now the highest) and 1/off.
    position = diagram(BEAR_OFF_MOVE_INSIDE_FIRST)
    assert notations(position, (5, 5)) == ["6/off 4/off"]
    with pytest.raises(MoveError):
        parse_play(position.board, "4/off", (5, 5))
    # 6-1: the 6 bears off; the 1 may first move 6/5, then the 6 bears off from the 5
    assert notations(position, (6, 1)) == ["6/off", "6/off 4/3"]
    # 4-1: moving inside the home board instead of bearing off exactly is allowed
    assert notations(position, (4, 1)) == ["6/1", "6/2 4/3", "6/5 4/off"]


CLOSED_BOARD = """
    +13-14-15-16-17-18------19-20-21-22-23-24-+
    |                  |   | O  O  O  O  O  O |
    |                  |   | O  O  O  O  O  O |
    |                  |   |                  |
    |                  |   |                  |
    |                  |   |                  |
    |                  |BAR|                  |
    |                  |   |14                |
    |                  |   | X                |
    | O                |   | X                |
    | O                |   | X                |
    | O                | X | X                |
    +12-11-10--9--8--7-------6--5--4--3--2--1-+
"""


def test_dancing_on_a_closed_board():
    position = diagram(CLOSED_BOARD)
    for d1, d2, _ in ALL_ROLLS:
        assert legal_plays(position, (d1, d2)) == [], f"{d1}-{d2} should dance"
        after, steps = parse_play(position.board, "", (d1, d2))
        assert Position(after) == position and (steps == -1).all()
    with pytest.raises(MoveError):
        parse_play(position.board, "6/1", (5, 5))  # the bar checker must enter first


ENTER_WITH_A_HIT = """
    +13-14-15-16-17-18------19-20-21-22-23-24-+
    |                  |   | O  O  O  O  O  O |
    |                  |   | O     O  O  O  O |
    |                  |   |                  |
    |                  |   |                  |
    |                  |   |                  |
    |                  |BAR|                  |
    |                  |   |14                |
    | O                |   | X                |
    | O                |   | X                |
    | O                |   | X                |
    | O                | X | X                |
    +12-11-10--9--8--7-------6--5--4--3--2--1-+
"""


def test_entering_from_the_bar_with_a_hit():
    position = diagram(ENTER_WITH_A_HIT)
    plays = legal_plays(position, (5, 1))
    assert [p.notation for p in plays] == ["bar/20* 6/5"]
    after = plays[0].after
    assert after.board[OPP, BAR] == 1 and after.board[ME, BAR] == 0
    assert after.board[OPP, 24 - 20] == 0 and after.board[ME, 19] == 1
    # both spellings of the bar parse, with or without the star
    for text in ("bar/20* 6/5", "25/20 6/5", "6/5 bar/20"):
        assert Position(parse_play(position.board, text, (5, 1))[0]) == after
    assert legal_plays(position, (6, 4)) == []  # only the 5 enters


NO_BEAR_OFF_FROM_THE_BAR = """
    +13-14-15-16-17-18------19-20-21-22-23-24-+
    |                  |   | O  O             |
    |                  |   | O  O             |
    |                  |   |                  |
    |                  |   |                  |
    |                  |   |                  |
    |                  |BAR|                  |
    |11                |   |14                |
    | O                |   | X                |
    | O                |   | X                |
    | O                |   | X                |
    | O                | X | X                |
    +12-11-10--9--8--7-------6--5--4--3--2--1-+
"""


def test_no_bearing_off_while_a_checker_is_on_the_bar_or_outside():
    position = diagram(NO_BEAR_OFF_FROM_THE_BAR)
    assert legal_plays(position, (6, 5)) == []  # neither die enters: no 6/off either
    assert notations(position, (4, 6)) == ["bar/15"]  # entered checker is outside: no 6/off
    with pytest.raises(MoveError):
        parse_play(position.board, "bar/21 6/off", (4, 6))
    for d1, d2, _ in ALL_ROLLS:
        for play in legal_plays(position, (d1, d2)):
            assert play.after.off()[ME] == 0, f"{d1}-{d2}: {play.notation} bears off"


def _board(x: dict, o: dict) -> np.ndarray:
    """x / o: {point from that side's own view (or 'bar'): count}."""
    board = np.zeros((2, 25), dtype=np.int8)
    for side, spec in ((ME, x), (OPP, o)):
        for point, count in spec.items():
            board[side, BAR if point == "bar" else point - 1] = count
    return board


@pytest.mark.parametrize("o, points", [
    ({6: 14}, 1),               # O bore off one: single game
    ({6: 15}, 2),               # none off, all at home: gammon
    ({13: 15}, 2),              # none off, still outside X's home: gammon
    ({6: 14, 19: 1}, 3),        # a checker in the winner's home board: backgammon
    ({6: 14, "bar": 1}, 3),     # a checker on the bar: backgammon
    ({6: 13, 24: 1}, 1),        # one borne off protects from gammon and backgammon
])
def test_game_results_single_gammon_backgammon(o, points):
    board = _board({}, o)
    assert game_result(board) == points
    assert game_result(board[::-1]) == -points
    assert Position(board).game_over()


def test_game_goes_on_while_both_sides_have_checkers():
    assert game_result(Position.start().board) == 0
    assert not Position.start().game_over()


def test_winning_play_scores_a_backgammon():
    # X bears off its last two; O still has all 15, one of them on X's 5-point.
    position = Position(_board({2: 1, 1: 1}, {6: 14, 20: 1}))
    plays = {p.notation: p for p in legal_plays(position, (2, 1))}
    assert sorted(plays) == ["2/off", "2/off 1/off"]  # 2/1/off leaves one on the 1-point
    assert plays["2/off 1/off"].after.result() == 3
    assert plays["2/off"].after.result() == 0
    winning = plays["2/off 1/off"].after
    assert all(legal_plays(winning, (d1, d2)) == [] for d1, d2, _ in ALL_ROLLS)


def test_starting_position_and_opening_roll():
    start = Position.start()
    assert start.id == "4HPwATDgc/ABMA" and start.pips() == (167, 167)
    assert start.swap() == start
    rng = np.random.default_rng(7)
    starters = []
    for _ in range(2000):
        (d0, d1), starter = opening_roll(rng)
        assert d0 != d1 and 1 <= d0 <= 6 and 1 <= d1 <= 6
        assert starter == (0 if d0 > d1 else 1)
        starters.append(starter)
    assert 0.4 < np.mean(starters) < 0.6


def test_all_rolls_weights():
    assert len(ALL_ROLLS) == 21
    assert sum(w for _, _, w in ALL_ROLLS) == 36
    assert len({(d1, d2) for d1, d2, _ in ALL_ROLLS}) == 21
    assert all(w == (1 if d1 == d2 else 2) for d1, d2, w in ALL_ROLLS)
