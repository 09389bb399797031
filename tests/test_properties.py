"""Property tests (hypothesis) over random legal positions and rolls."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from engine.formats.ascii_board import render
from engine.dice import parse_dice
from engine.evaluator import equity, rule_out_gammons, sanity_clamp
from engine.movegen import generate
from engine.notation import format_play, legal_plays, parse_play
from engine.position import BAR, CHECKERS, ME, OPP, Position

from tests.test_rules_scenarios import diagram
from training.kernels import ruled_equity


@st.composite
def positions(draw) -> Position:
    """A legal board: each point owned by at most one side, 15 checkers a side split
    between owned points, the bar and borne off; not both sides finished."""
    owners = draw(st.lists(st.sampled_from(["me", "opp", "none", "none"]), min_size=24,
                           max_size=24))  # owners[i] = owner of my index i
    board = np.zeros((2, 25), dtype=np.int8)
    for side, tag in ((ME, "me"), (OPP, "opp")):
        own = [i if side == ME else 23 - i for i in range(24) if owners[i] == tag]
        places = own + [BAR, -1]  # -1 = borne off
        weights = draw(st.sampled_from(["spread", "home", "bar-heavy"]))
        if weights == "home":
            home = [i for i in own if i < 6]
            places = (home or own or [BAR]) + [-1]
        elif weights == "bar-heavy":
            places = own + [BAR, BAR, BAR, -1]
        for _ in range(CHECKERS):
            index = draw(st.sampled_from(places))
            if index >= 0:
                board[side, index] += 1
    if board[ME].sum() == 0 and board[OPP].sum() == 0:
        board[OPP, BAR] = 1
    return Position(board)


dice = st.tuples(st.integers(1, 6), st.integers(1, 6))


def _apply_steps(board: np.ndarray, steps) -> np.ndarray:
    """Play the steps one by one with the plain rules (hits go to the bar)."""
    b = board.astype(np.int16).copy()
    for src, dst in steps:
        assert b[ME, src] > 0, f"no checker on index {src}"
        b[ME, src] -= 1
        if dst >= 0:
            assert b[OPP, 23 - dst] <= 1, f"index {dst} is blocked"
            if b[OPP, 23 - dst] == 1:
                b[OPP, 23 - dst] = 0
                b[OPP, BAR] += 1
            b[ME, dst] += 1
    return b.astype(np.int8)


@settings(max_examples=300, deadline=None)
@given(positions(), dice)
def test_plays_conserve_checkers_are_distinct_and_follow_their_steps(position, roll):
    board = position.board
    afters, steps = generate(board, *roll)
    keys = {a.tobytes() for a in afters}
    assert len(keys) == len(afters), "afterstates are not distinct"
    n_dice = 4 if roll[0] == roll[1] else 2
    used = {int((s[:, 0] >= 0).sum()) for s in steps}
    assert len(used) <= 1, "plays use different numbers of dice"
    for after, step in zip(afters, steps):
        played = [(int(a), int(b)) for a, b in step if a >= 0]
        assert 1 <= len(played) <= n_dice
        borne_off = sum(1 for _, dst in played if dst < 0)
        assert after[ME].sum() == board[ME].sum() - borne_off
        assert after[OPP].sum() == board[OPP].sum(), "opponent checkers appeared or vanished"
        assert (after >= 0).all() and after.sum(axis=1).max() <= CHECKERS
        assert (_apply_steps(board, played) == after).all(), "steps do not reach the afterstate"
        for i in range(24):
            assert not (after[ME, i] and after[OPP, 23 - i]), "both sides on one point"


@settings(max_examples=200, deadline=None)
@given(positions(), dice)
def test_notation_parses_back_to_the_same_afterstate(position, roll):
    for play in legal_plays(position, roll):
        after, _ = parse_play(position.board, play.notation, roll)
        assert Position(after) == play.after, play.notation
        assert format_play(position.board, play.steps) == play.notation


@settings(max_examples=300, deadline=None)
@given(positions())
def test_position_id_round_trip_and_swap(position):
    assert Position.from_id(position.id) == position
    assert position.swap().swap() == position
    assert position.swap().pips() == position.pips()[::-1]
    assert position.swap().off() == position.off()[::-1]
    assert position.swap().result() == -position.result()


@settings(max_examples=200, deadline=None)
@given(positions())
def test_ascii_board_draws_back_to_the_same_position(position):
    assert diagram(render(position)) == position


@given(st.integers(1, 6), st.integers(1, 6), st.sampled_from(["{}{}", "{}-{}", "{} {}"]))
def test_parse_dice_accepts_the_three_spellings(d1, d2, spelling):
    assert parse_dice(spelling.format(d1, d2)) == (d1, d2)


def _race_with_a_straggler() -> Position:
    """A race in which my last checker is on the other side's 6 point: backgammon still possible."""
    board = np.zeros((2, 25), dtype=np.int8)
    board[ME, 18], board[ME, 0], board[OPP, 0] = 1, 14, 15
    return Position(board)


@settings(max_examples=100, deadline=None)
@given(st.lists(positions(), min_size=1, max_size=30))
@example([_race_with_a_straggler(), _race_with_a_straggler().swap()])
def test_rule_out_gammons_reads_each_board_as_the_rules_do(batch):
    """Batched, it zeroes exactly: a side's lost gammon once it has borne off, its lost
    backgammon also in a race with none of its checkers in the other's home or on the bar."""
    boards = np.stack([p.board for p in batch])
    got = rule_out_gammons(boards, np.ones((len(batch), 5)))
    for position, probs in zip(batch, got):
        expected = np.ones(5)
        for side, gammon, backgammon in ((ME, 3, 4), (OPP, 1, 2)):
            their_home = [23 - j for j in range(6)]  # the other side's points 1..6, in my indices
            exposed = position.board[side, their_home].sum() + position.board[side, BAR] > 0
            if position.off()[side] > 0:
                expected[[gammon, backgammon]] = 0.0
            elif position.is_race() and not exposed:
                expected[backgammon] = 0.0
        np.testing.assert_array_equal(probs, expected)


@settings(max_examples=200, deadline=None)
@given(positions(), st.lists(st.floats(0.0, 1.0, width=32), min_size=5, max_size=5))
@example(_race_with_a_straggler(), [0.5, 0.9, 0.9, 0.9, 0.9])
@example(_race_with_a_straggler().swap(), [0.5, 0.9, 0.9, 0.9, 0.9])
def test_self_play_scores_moves_as_the_evaluator_does(position, outputs):
    """The TD kernel's one-board equity agrees with the play-time clamp and rule."""
    y = np.array(outputs, dtype=np.float32)
    expected = equity(rule_out_gammons(position.board[None], sanity_clamp(y[None])))[0]
    assert ruled_equity(position.board, y) == pytest.approx(expected, abs=1e-6)
