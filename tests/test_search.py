"""1-, 2- and 3-ply search against slow, obviously correct reference implementations."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from engine.dice import ALL_ROLLS
from engine.evaluator import equity, flip, result_probs
from engine.movegen import generate
from engine.notation import legal_plays
from engine.position import Position, decode_position_id, game_result, game_results
from engine.pubeval import PubevalEvaluator
from engine.search import DEEP_FILTER, MoveFilter, evaluate_position, rank_plays, roll_average

ORACLE = Path(__file__).resolve().parent / "data" / "gnubg-legal-moves.jsonl"


class ToyEvaluator:
    """Deterministic, cheap, and with five distinct outputs, so a wrong flip or a wrong view shows."""

    name = "toy"

    def __init__(self) -> None:
        self.calls = 0

    def evaluate(self, afterstates: np.ndarray) -> np.ndarray:
        self.calls += 1
        a = np.asarray(afterstates, dtype=np.int64).reshape(-1, 2, 25)
        w = np.arange(1, 26)
        mine, theirs = a[:, 0] @ w, a[:, 1] @ w
        blots = (a[:, 0, :24] == 1).sum(axis=1)
        made = (a[:, 0, :24] >= 2).sum(axis=1)
        logit = (theirs - mine - 8) / 25.0 - 0.3 * blots + 0.15 * made + 0.5 * a[:, 1, 24]
        win = 1.0 / (1.0 + np.exp(-logit))
        off_me, off_them = 15 - a[:, 0].sum(axis=1), 15 - a[:, 1].sum(axis=1)
        wg = 0.3 * win * (off_them == 0) * (1 - off_me / 30.0)
        lg = 0.2 * (1 - win) * (off_me == 0)
        return np.stack([win, wg, 0.1 * wg, lg, 0.15 * lg], axis=1)


def _value(ev, board: np.ndarray) -> np.ndarray:
    """One afterstate, exactly: the result if the game is over, else the evaluator."""
    points = game_result(board)
    return result_probs(points) if points else np.asarray(ev.evaluate(board[None])[0], dtype=np.float64)


def _best_reply_value(ev, position: Position, dice) -> np.ndarray:
    """The roller's view after its best 1-ply play; the unchanged board when it cannot move."""
    plays = legal_plays(position, dice)
    if not plays:
        return _value(ev, position.board)
    best = None
    for play in plays:
        p = _value(ev, play.after.board)
        if best is None or equity(p) > equity(best):
            best = p
    return best


def reference_two_ply(ev, after: np.ndarray) -> np.ndarray:
    points = game_result(after)
    if points:
        return result_probs(points)
    opponent = Position(after).swap()
    total = np.zeros(5)
    for d1, d2, weight in ALL_ROLLS:
        total += weight / 36.0 * flip(_best_reply_value(ev, opponent, (d1, d2)))
    return total


def reference_rank(ev, board: np.ndarray, dice, ply: int, filt: MoveFilter):
    """{afterstate bytes: (probs, ply)} for every play."""
    plays = legal_plays(Position(board), dice)
    one = [_value(ev, p.after.board) for p in plays]
    eqs = [float(equity(p)) for p in one]
    order = sorted(range(len(plays)), key=lambda i: -eqs[i])
    out = {plays[i].after.board.tobytes(): (one[i], 1) for i in order}
    if ply == 2 and plays:
        best = eqs[order[0]]
        for i in order[:filt.max_moves]:
            if eqs[i] >= best - filt.threshold:
                out[plays[i].after.board.tobytes()] = (reference_two_ply(ev, plays[i].after.board), 2)
    return out


def reference_position_three_ply(ev, board: np.ndarray) -> np.ndarray:
    """The roller's mean over its 21 rolls of its best play as reference_rank values it at 2-ply."""
    total = np.zeros(5)
    for d1, d2, weight in ALL_ROLLS:
        ranked = reference_rank(ev, board, (d1, d2), 2, MoveFilter())
        if ranked:
            best = max((v for v, ply in ranked.values() if ply == 2), key=lambda v: float(equity(v)))
        else:
            best = reference_two_ply(ev, board)  # no play: the unchanged board is the afterstate
        total += weight / 36.0 * best
    return total


def reference_three_ply_rank(ev, board: np.ndarray, dice) -> dict:
    """reference_rank at 2-ply, then DEEP_FILTER's share of the 2-ply candidates at 3-ply."""
    out = reference_rank(ev, board, dice, 2, MoveFilter())
    two = sorted((k for k, (_, ply) in out.items() if ply == 2), key=lambda k: -float(equity(out[k][0])))
    best = float(equity(out[two[0]][0]))
    for key in two[:DEEP_FILTER.max_moves]:
        if float(equity(out[key][0])) >= best - DEEP_FILTER.threshold:
            after = np.frombuffer(key, dtype=np.int8).reshape(2, 25)
            points = game_result(after)
            value = result_probs(points) if points else flip(reference_position_three_ply(ev, after[::-1].copy()))
            out[key] = (value, 3)
    return out


def _board(mine: dict[int, int], theirs: dict[int, int]) -> np.ndarray:
    b = np.zeros((2, 25), dtype=np.int8)
    for i, n in mine.items():
        b[0, i] = n
    for i, n in theirs.items():
        b[1, i] = n
    return b


# Special positions: the opponent dances often (closed board), replies that end the game,
# a race, a plain opening.
SPECIAL = [
    (_board({0: 2, 1: 2, 2: 2, 3: 2, 4: 2, 12: 3, 23: 2}, {24: 1, 5: 5, 7: 3, 12: 4, 17: 2}), (3, 1)),
    (_board({0: 3, 2: 2, 5: 2}, {0: 1, 1: 1}), (4, 2)),
    (_board({0: 3, 1: 3, 4: 2, 5: 4}, {0: 5, 2: 4, 3: 3, 6: 2}), (6, 5)),
    (Position.start().board, (5, 2)),
    (_board({0: 1, 2: 1}, {0: 2, 18: 1}), (3, 1)),  # mover can bear off both: game over
]


@pytest.fixture(scope="module")
def oracle_cases():
    records = [json.loads(line) for line in ORACLE.read_text().splitlines() if line.strip()]
    picks = np.random.default_rng(3).choice(len(records), 12, replace=False)
    return [(decode_position_id(records[i]["position"]), tuple(records[i]["dice"])) for i in picks]


def test_one_ply_is_the_argmax_and_sorted(oracle_cases):
    ev = ToyEvaluator()
    for board, dice in oracle_cases + SPECIAL:
        plays = rank_plays(board, dice, ev, ply=1)
        afters, _ = generate(board, *dice)
        assert len(plays) == len(afters)
        if not plays:
            continue
        eqs = [p.equity for p in plays]
        assert eqs == sorted(eqs, reverse=True)
        values = np.array([equity(_value(ev, a)) for a in afters])
        assert plays[0].equity == pytest.approx(values.max(), abs=1e-12)
        assert {p.afterstate.tobytes() for p in plays} == {a.tobytes() for a in afters}
        for p in plays:
            np.testing.assert_allclose(p.probs, _value(ev, p.afterstate), atol=1e-12)
            assert p.ply == 1


@pytest.mark.parametrize("filt", [MoveFilter(), MoveFilter(max_moves=3, threshold=0.05)])
def test_two_ply_matches_reference(oracle_cases, filt):
    ev = ToyEvaluator()
    for board, dice in oracle_cases[:6] + SPECIAL:
        plays = rank_plays(board, dice, ev, ply=2, filter=filt)
        ref = reference_rank(ev, board, dice, 2, filt)
        assert {p.afterstate.tobytes() for p in plays} == set(ref)
        for p in plays:
            want, want_ply = ref[p.afterstate.tobytes()]
            assert p.ply == want_ply
            np.testing.assert_allclose(p.probs, want, atol=1e-12)
            assert p.equity == pytest.approx(float(equity(want)), abs=1e-12)
        # The 2-ply candidates come first, best first, then the rest at 1-ply, best first.
        plies = [p.ply for p in plays]
        assert plies == sorted(plies, reverse=True)
        for depth in (1, 2):
            eqs = [p.equity for p in plays if p.ply == depth]
            assert eqs == sorted(eqs, reverse=True)
        assert 0 < plies.count(2) <= filt.max_moves or not plays


@pytest.mark.parametrize("case", [0, 1, 2, 3])
def test_three_ply_matches_reference(case):
    ev = ToyEvaluator()
    board, dice = SPECIAL[case]
    plays = rank_plays(board, dice, ev, ply=3)
    ref = reference_three_ply_rank(ev, board, dice)
    assert {p.afterstate.tobytes() for p in plays} == set(ref)
    for p in plays:
        want, want_ply = ref[p.afterstate.tobytes()]
        assert p.ply == want_ply
        np.testing.assert_allclose(p.probs, want, atol=1e-12)
    plies = [p.ply for p in plays]
    assert plies == sorted(plies, reverse=True) and 0 < plies.count(3) <= DEEP_FILTER.max_moves
    for depth in (1, 2, 3):
        eqs = [p.equity for p in plays if p.ply == depth]
        assert eqs == sorted(eqs, reverse=True)


def test_three_ply_position_matches_reference():
    ev = ToyEvaluator()
    board = SPECIAL[2][0]
    np.testing.assert_allclose(evaluate_position(board, ev, ply=3), reference_position_three_ply(ev, board),
                               atol=1e-12)


def test_two_ply_makes_one_evaluator_call_for_all_replies():
    ev = ToyEvaluator()
    rank_plays(Position.start().board, (3, 1), ev, ply=2, filter=MoveFilter(max_moves=8, threshold=10.0))
    assert ev.calls == 2  # the 1-ply batch, then every reply of every roll of all 8 candidates


def test_evaluate_position_matches_reference(oracle_cases):
    ev = ToyEvaluator()
    for board, _ in oracle_cases[:6] + SPECIAL[:4]:
        np.testing.assert_allclose(evaluate_position(board, ev, ply=1),
                                   flip(ev.evaluate(board[::-1][None])[0]), atol=1e-12)
        want = sum(w / 36.0 * _best_reply_value(ev, Position(board), (d1, d2)) for d1, d2, w in ALL_ROLLS)
        np.testing.assert_allclose(evaluate_position(board, ev, ply=2), want, atol=1e-12)


@pytest.mark.parametrize("theirs, points", [
    ({0: 2, 5: 12}, 1),            # the opponent has borne off one: single game
    ({0: 2, 5: 13}, 2),            # none off, none in my home board: gammon
    ({0: 2, 5: 12, 20: 1}, 3),     # none off, one in my home board (its point 21): backgammon
    ({0: 2, 5: 12, 24: 1}, 3),     # none off, one on the bar: backgammon
])
@pytest.mark.parametrize("ply", [1, 2, 3])
def test_game_ending_play_gets_exact_result(theirs, points, ply):
    board = _board({0: 1, 1: 1}, theirs)
    plays = rank_plays(board, (2, 1), PubevalEvaluator(), ply=ply)
    assert game_result(plays[0].afterstate) == points
    np.testing.assert_array_equal(plays[0].probs, result_probs(points))
    assert plays[0].equity == points
    np.testing.assert_array_equal(game_results(plays[0].afterstate[None]), [points])


def test_finished_position_evaluates_exactly():
    board = _board({}, {5: 15})  # I have borne off everything, the opponent none: a gammon
    for ply in (1, 2, 3):
        np.testing.assert_array_equal(evaluate_position(board, ToyEvaluator(), ply), result_probs(2))


def test_exact_results_agrees_with_game_result(oracle_cases):
    boards = np.stack([b for b, _ in oracle_cases] + [_board({}, {5: 15}), _board({3: 2}, {}),
                                                     _board({}, {0: 14, 20: 1}), _board({}, {0: 14})])
    np.testing.assert_array_equal(game_results(boards), [game_result(b) for b in boards])


def test_roll_average_is_the_mean_over_rolls():
    ev = ToyEvaluator()
    boards = np.stack([Position.start().board, SPECIAL[0][0]])
    got = roll_average(boards, ev)
    for k, board in enumerate(boards):
        want = sum(w / 36.0 * _best_reply_value(ev, Position(board), (d1, d2)) for d1, d2, w in ALL_ROLLS)
        np.testing.assert_allclose(got[k], want, atol=1e-12)


def test_no_legal_play_is_empty():
    board = _board({24: 2, 5: 13}, {0: 2, 1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 12: 3})
    assert rank_plays(board, (6, 6), ToyEvaluator(), ply=2) == []


def test_bad_ply():
    with pytest.raises(ValueError):
        rank_plays(Position.start().board, (3, 1), ToyEvaluator(), ply=4)
    with pytest.raises(ValueError):
        evaluate_position(Position.start().board, ToyEvaluator(), ply=0)


def test_searches_in_threads_give_the_serial_values(oracle_cases):
    """The web server runs searches in a thread pool: one search's afterstates must never be
    another's (each thread expands plays into buffers of its own)."""
    import sys
    from concurrent.futures import ThreadPoolExecutor

    ev = ToyEvaluator()
    sets = [np.stack([c[0] for c in oracle_cases[k::4][:12]]) for k in range(4)]
    want = [roll_average(boards, ev) for boards in sets]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)   # switch threads as often as the interpreter can
    try:
        with ThreadPoolExecutor(4) as pool:
            for _ in range(10):
                got = list(pool.map(lambda boards: roll_average(boards, ev), sets))
                for g, w in zip(got, want):
                    np.testing.assert_array_equal(g, w)
                plays = list(pool.map(lambda case: generate(*case[:1], *case[1])[0], oracle_cases))
                for (board, dice), afters in zip(oracle_cases, plays):
                    np.testing.assert_array_equal(afters, generate(board, *dice)[0])
    finally:
        sys.setswitchinterval(interval)
