"""pubeval: a plain re-implementation of the published formula (pub_eval.c's pos[] layout) as the
reference, the search choosing exactly its plays, and pubeval crushing a random player."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from engine.game import RandomPlayer, play_game
from engine.position import Position, decode_position_id, is_race
from engine.pubeval import PubevalEvaluator
from engine.evaluator import RandomEvaluator
from engine.search import rank_plays

ORACLE = Path(__file__).resolve().parent / "data" / "gnubg-legal-moves.jsonl"
WEIGHTS = json.loads((Path(__file__).resolve().parent.parent / "engine" / "data" / "pubeval.json").read_text())


def reference_score(after: np.ndarray, race: bool) -> float:
    """pub_eval.c, transcribed: pos[1..24] signed counts on the mover's points, pos[0] the
    opponent's bar (negative), pos[26] the mover's checkers off."""
    pos = [0] * 28
    for p in range(1, 25):
        pos[p] = int(after[0, p - 1]) - int(after[1, 24 - p])
    pos[0] = -int(after[1, 24])
    pos[25] = int(after[0, 24])
    pos[26] = 15 - int(after[0].sum())
    if pos[26] == 15:
        return float("inf")
    x = [0.0] * 122
    for j in range(1, 25):
        n = pos[25 - j]
        k = 5 * (j - 1)
        if n != 0:
            if n == -1:
                x[k + 0] = 1.0
            if n == 1:
                x[k + 1] = 1.0
            if n >= 2:
                x[k + 2] = 1.0
            if n == 3:
                x[k + 3] = 1.0
            if n >= 4:
                x[k + 4] = (n - 3) / 2.0
    x[120] = -pos[0] / 2.0
    x[121] = pos[26] / 15.0
    w = WEIGHTS["race_weights"] if race else WEIGHTS["contact_weights"]
    return sum(wi * xi for wi, xi in zip(w, x))


@pytest.fixture(scope="module")
def oracle() -> list[dict]:
    return [json.loads(line) for line in ORACLE.read_text().splitlines() if line.strip()]


def test_scores_match_reference(oracle):
    ev = PubevalEvaluator()
    checked = 0
    for record in oracle[::7]:
        board = decode_position_id(record["position"])
        race = is_race(board)
        afters = np.stack([decode_position_id(a) for a in record["afterstates"]]) if record["afterstates"] else None
        if afters is None:
            continue
        got = ev.scores(afters, pre_move_race=np.full(len(afters), race))
        want = [reference_score(a, race) for a in afters]
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        checked += len(afters)
    assert checked > 5000


def test_search_chooses_pubevals_play_on_oracle_positions(oracle):
    ev = PubevalEvaluator()
    decisions = 0
    for record in oracle[::2]:
        if len(record["afterstates"]) < 2:
            continue
        board = decode_position_id(record["position"])
        race = is_race(board)
        best = rank_plays(board, tuple(record["dice"]), ev, ply=1)[0]
        best_ref = max(reference_score(decode_position_id(a), race) for a in record["afterstates"])
        assert reference_score(best.afterstate, race) == pytest.approx(best_ref, rel=1e-12, abs=1e-12), record
        decisions += 1
    assert decisions > 1900


def test_pre_move_race_decides_the_weights():
    # Contact before the move: my back checker on my 10-point faces the opponent's checker on
    # its 17-point (my 8-point). 6-5 lets me run past it, so the afterstate is a race, but
    # pubeval must still score the play with the contact weights.
    board = np.zeros((2, 25), dtype=np.int8)
    board[0, 9] = 1
    board[0, 0:5] = 2
    board[0, 5] = 4
    board[1, 16] = 1
    board[1, 0:6] = 2
    board[1, 6] = 2
    assert not is_race(board)
    ev = PubevalEvaluator()
    plays = rank_plays(board, (6, 5), ev, ply=1)
    races = [is_race(p.afterstate) for p in plays]
    assert any(races), "the roll should allow breaking contact"
    afters = np.stack([p.afterstate for p in plays])
    contact = ev.scores(afters, pre_move_race=np.zeros(len(afters), dtype=bool))
    np.testing.assert_allclose([2 * p.probs[0] - 1 for p in plays], [p.equity for p in plays])
    assert [p.afterstate.tobytes() for p in plays] == [afters[i].tobytes() for i in np.argsort(-contact, kind="stable")]
    with_race = ev.scores(afters, pre_move_race=np.ones(len(afters), dtype=bool))
    assert not np.allclose(contact, with_race)


def test_bearing_off_the_last_checker_is_best():
    board = np.zeros((2, 25), dtype=np.int8)
    board[0, 0] = 1
    board[0, 3] = 1
    board[1, 5] = 15
    plays = rank_plays(board, (4, 1), PubevalEvaluator(), ply=1)
    assert plays[0].afterstate[0].sum() == 0 and plays[0].probs[0] == 1.0


class _SearchPlayer:
    """A 1-ply player through engine.search (which hands pubeval the pre-move race flag)."""

    def __init__(self, evaluator) -> None:
        self.evaluator = evaluator
        self.name = evaluator.name

    def choose(self, position, dice, plays):
        best = rank_plays(position.board, dice, self.evaluator, ply=1)[0].afterstate
        return next(i for i, p in enumerate(plays) if np.array_equal(p.after.board, best))


def test_pubeval_beats_random():
    rng = np.random.default_rng(2026)
    pubeval, rand = _SearchPlayer(PubevalEvaluator()), RandomPlayer(np.random.default_rng(7))
    games, wins = 300, 0
    for g in range(games):
        if g % 2 == 0:
            wins += play_game(pubeval, rand, rng).result > 0
        else:
            wins += play_game(rand, pubeval, rng).result < 0
    assert wins / games >= 0.85, f"pubeval won only {wins}/{games}"


def test_random_evaluator_is_seeded_and_uniform_over_plays():
    board = Position.start().board
    first = [p.afterstate.tobytes() for p in rank_plays(board, (6, 6), RandomEvaluator(5))]
    again = [p.afterstate.tobytes() for p in rank_plays(board, (6, 6), RandomEvaluator(5))]
    assert first == again
    ev = RandomEvaluator(11)
    n_plays = len(rank_plays(board, (2, 1), ev))
    counts = np.zeros(n_plays)
    order = [p.afterstate.tobytes() for p in sorted(rank_plays(board, (2, 1), ev), key=lambda p: p.afterstate.tobytes())]
    for _ in range(n_plays * 200):
        counts[order.index(rank_plays(board, (2, 1), ev)[0].afterstate.tobytes())] += 1
    assert counts.min() > 100 and counts.max() < 300  # every play chosen, none favoured
