"""The bear-off databases: hand-checkable cases, consistency, and gnubg's odds and cube values."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from engine import bearoff
from engine.cube.equity import CubeInfo, small_bearoff_values
from engine.cube.lookahead import cube_decision_at_ply
from engine.gnubg.process import GnubgProcess
from engine.position import Position, decode_position_id
from models.loader import load_network
from models.paths import DEFAULT_MODEL
from tests.conftest import GNUBG


def _row(**points: int) -> np.ndarray:
    row = np.zeros(25, dtype=np.int8)
    for name, count in points.items():
        row[int(name[1:]) - 1] = count
    return row


def _dist(row: np.ndarray) -> np.ndarray:
    return bearoff.table()[bearoff.bearoff_index(row, bearoff.BINOM)]


def test_index_is_a_bijection_onto_the_table() -> None:
    seen = set()
    for a in range(16):
        for b in range(16 - a):
            row = _row(p1=a, p6=b)
            seen.add(bearoff.bearoff_index(row, bearoff.BINOM))
    assert len(seen) == 136 and max(seen) < bearoff.N_POSITIONS
    assert bearoff.bearoff_index(np.zeros(25, dtype=np.int8), bearoff.BINOM) == 0


def test_distributions_by_hand() -> None:
    np.testing.assert_allclose(_dist(_row(p1=1))[:3], [0, 1, 0])
    # Two checkers on the 6-point: off in one roll only with 6-6, 5-5, 4-4, 3-3 or any 6-6.
    assert _dist(_row(p6=2))[1] == pytest.approx(4 / 36)
    # Four on the ace point: one roll with a double (6/36), else two rolls.
    np.testing.assert_allclose(_dist(_row(p1=4))[1:3], [6 / 36, 30 / 36])
    table = bearoff.table()
    np.testing.assert_allclose(table.sum(axis=1), 1.0, atol=1e-12)


def test_race_probability_cases() -> None:
    board = np.zeros((2, 25), dtype=np.int8)
    board[0] = _row(p1=1)    # mover has one checker left, but the opponent is on roll
    board[1] = _row(p1=1)
    assert bearoff.exact_race(board)
    assert bearoff.race_win_probability(board, bearoff.table(), bearoff.BINOM) == pytest.approx(0.0)
    board[1] = _row(p6=2)    # opponent needs a double of 3s or better to get off first
    assert bearoff.race_win_probability(board, bearoff.table(), bearoff.BINOM) == pytest.approx(1 - 4 / 36)
    assert not bearoff.exact_race(Position.start().board)


def test_patch_only_touches_exact_races() -> None:
    race = np.zeros((2, 25), dtype=np.int8)
    race[0] = _row(p1=1)
    race[1] = _row(p6=2)
    boards = np.stack([race, Position.start().board])
    probs = np.full((2, 5), 0.3)
    bearoff.apply(boards, probs)
    np.testing.assert_allclose(probs[0], [1 - 4 / 36, 0, 0, 0, 0])
    np.testing.assert_allclose(probs[1], 0.3)


def _gnubg_probs(boards: list[np.ndarray], tmp_path: Path) -> dict[str, list[float]]:
    """gnubg 0-ply's cubeless outputs of each afterstate, keyed by the Position ID gnubg
    sees: the afterstate swapped, so gnubg's side on roll is our row 1."""
    ids = [Position(b).swap().id for b in boards]
    script = tmp_path / "odds.py"
    script.write_text(
        "import gnubg\n"
        "gnubg.command('new session')\n"
        "context = {'cubeful': 0, 'plies': 0, 'deterministic': 1, 'noise': 0.0}\n"
        f"for pid in {ids!r}:\n"
        "    p = gnubg.evaluate(gnubg.positionfromid(pid), gnubg.cubeinfo(), context)\n"
        "    print('P', pid, *p[:5])\n")
    out = subprocess.run([GNUBG, "-t", "-q", "-p", str(script)], capture_output=True, text=True,
                         timeout=120).stdout
    theirs = {line.split()[1]: [float(v) for v in line.split()[2:]] for line in out.splitlines()
              if line.startswith("P ")}
    assert len(theirs) == len(set(ids)), out
    return theirs


@pytest.mark.gnubg
def test_agrees_with_gnubg_bearoff_odds(tmp_path: Path) -> None:
    """gnubg's bear-off odds and ours agree: to 1e-3 typically, within 1% where the policies differ.

    Our table plays each side to minimise its expected rolls (as gnubg's one-sided
    database); gnubg's two-sided database plays to win, which can differ by a few tenths
    of a percent.
    """
    rng = np.random.default_rng(4)
    boards = []
    while len(boards) < 12:
        board = np.zeros((2, 25), dtype=np.int8)
        for side in range(2):
            for _ in range(int(rng.integers(1, 8))):
                board[side, int(rng.integers(0, 6))] += 1
        if bearoff.exact_race(board):
            boards.append(board)
    theirs = _gnubg_probs(boards, tmp_path)
    diffs = []
    for board in boards:
        pid = Position(board).swap().id
        ours = 1.0 - bearoff.race_win_probability(board, bearoff.table(), bearoff.BINOM)
        assert ours == pytest.approx(theirs[pid][0], abs=0.01), pid
        diffs.append(abs(ours - theirs[pid][0]))
    assert np.median(diffs) < 1e-3


def test_table_is_cached_on_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built = bearoff.table()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(bearoff, "_TABLES", {})
    np.save(tmp_path / "unused.npy", np.zeros(1))  # the cache folder may hold other files
    (tmp_path / "tdgammon").mkdir()
    np.save(tmp_path / "tdgammon" / f"bearoff-v{bearoff.VERSION}.npy", built)
    monkeypatch.setattr(bearoff, "_build", lambda *args: pytest.fail("rebuilt despite the cache"))
    np.testing.assert_array_equal(bearoff.table(), built)


def test_table_writes_its_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built = bearoff.table()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(bearoff, "_TABLES", {})
    monkeypatch.setattr(bearoff, "_build", lambda *args: (built, None))
    bearoff.table()
    assert sorted(p.name for p in (tmp_path / "tdgammon").iterdir()) == [f"bearoff-v{bearoff.VERSION}.npy"]


def _home(mine: dict[int, int], theirs: dict[int, int]) -> np.ndarray:
    board = np.zeros((2, 25), dtype=np.int8)
    for side, points in enumerate((mine, theirs)):
        for point, count in points.items():
            board[side, point - 1] = count
    return board


def test_first_off_distribution_by_hand() -> None:
    gammon = bearoff.gammon_table()
    np.testing.assert_allclose(gammon.sum(axis=1), 1.0, atol=1e-12)
    assert gammon[bearoff.bearoff_index(_row(p1=14), bearoff.BINOM), 0] == 1.0  # already off
    # Fifteen on the 6-point: one checker is off in one roll with any 6 (11 rolls of 36),
    # 5-1 and 4-2 (6/1/off, 6/2/off: 4 more), 3-3 and 2-2 (2 more); 4-4, 5-5 and the
    # rest cannot bear off past the checkers left on the 6-point.
    first = gammon[bearoff.bearoff_index(_row(p6=15), bearoff.BINOM)]
    assert first[0] == 0.0 and first[1] == pytest.approx(17 / 36)


def test_home_race_gammons() -> None:
    dist, gammon = bearoff.table(), bearoff.gammon_table()
    out = np.zeros(5)
    # The mover has one checker left against fifteen on the opponent's 6-point: the opponent
    # (on roll) cannot finish first, and stays on 15 checkers unless its first roll takes one off.
    board = _home({1: 1}, {6: 15})
    bearoff.home_race_probabilities(board, dist, gammon, bearoff.BINOM, out)
    assert out[0] == pytest.approx(1.0)
    assert out[1] == pytest.approx(1 - 17 / 36)
    assert out[2] == out[3] == out[4] == 0.0
    # Mirror: the opponent on roll finishes at once and the mover has all fifteen home.
    board = _home({6: 15}, {1: 1})
    bearoff.home_race_probabilities(board, dist, gammon, bearoff.BINOM, out)
    np.testing.assert_allclose(out, [0, 0, 0, 1, 0], atol=1e-12)
    # With both sides past their first checker, the gammons vanish and the win agrees.
    board = _home({1: 1}, {6: 2})
    bearoff.home_race_probabilities(board, dist, gammon, bearoff.BINOM, out)
    np.testing.assert_allclose(out, [1 - 4 / 36, 0, 0, 0, 0])


def test_apply_covers_every_both_home_position() -> None:
    boards = np.stack([_home({1: 1}, {6: 15}), _home({6: 15}, {1: 2}), Position.start().board])
    probs = bearoff.apply(boards, np.full((3, 5), 0.3))
    assert probs[0, 1] == pytest.approx(1 - 17 / 36)
    assert probs[1, 3] > 0.99
    np.testing.assert_allclose(probs[2], 0.3)
    assert bearoff.both_home(boards[0]) and not bearoff.exact_race(boards[0])


@pytest.mark.gnubg
def test_gammons_agree_with_gnubg(tmp_path: Path) -> None:
    """With both sides home and one side still on 15 checkers, our win and gammon chances
    agree with gnubg's bear-off evaluation to within 0.02 (its policies play to win)."""
    rng = np.random.default_rng(5)
    boards = []
    while len(boards) < 12:
        board = np.zeros((2, 25), dtype=np.int8)
        full = int(rng.integers(0, 2))
        for side in range(2):
            for _ in range(15 if side == full else int(rng.integers(1, 6))):
                board[side, int(rng.integers(0, 6))] += 1
        boards.append(board)
    theirs = _gnubg_probs(boards, tmp_path)
    mine = bearoff.apply(np.stack(boards), np.zeros((len(boards), 5)))
    for ours, board in zip(mine, boards):
        pid = Position(board).swap().id
        win, win_gammon, _, lose_gammon, _ = theirs[pid]  # the side on roll's view: our row 1
        assert 1.0 - ours[0] == pytest.approx(win, abs=0.02), pid
        assert ours[3] == pytest.approx(win_gammon, abs=0.02), pid
        assert ours[1] == pytest.approx(lose_gammon, abs=0.02), pid


def _small_sides(rng: np.random.Generator) -> np.ndarray:
    board = np.zeros((2, 25), dtype=np.int8)
    for side in range(2):
        for _ in range(int(rng.integers(1, 7))):
            board[side, int(rng.integers(0, 6))] += 1
    return board


def test_small_races_are_exact_by_their_recursion() -> None:
    """A small bear-off's P(win) for the side on roll is the mean over its 21 rolls of its
    best play's: 1 when it is off, else 1 - the opponent's P(win) on roll after it."""
    from engine.movegen import generate
    from engine.search import ROLLS, ROLL_WEIGHTS

    rng = np.random.default_rng(8)
    for _ in range(20):
        after = _small_sides(rng)  # row 1 on roll
        mine = bearoff.apply(after[None], np.zeros((1, 5)))[0]
        expected = 0.0
        for (d1, d2), w in zip(ROLLS, ROLL_WEIGHTS):
            plays = generate(after[::-1], int(d1), int(d2))[0]  # row 1 moves, now in row 0
            off = plays[:, 0].sum(axis=1) == 0
            values = bearoff.apply(plays, np.zeros((len(plays), 5)))[:, 0]  # row 1's P(win), opponent on roll
            expected += w * (1.0 if off.any() else values.max())
        assert 1.0 - mine[0] == pytest.approx(expected, abs=1e-12)
        assert (mine[1:] == 0).all()


@pytest.mark.gnubg
def test_small_races_agree_with_gnubg_two_sided(tmp_path: Path) -> None:
    """gnubg answers these from its two-sided bear-off database, exact as ours."""
    rng = np.random.default_rng(9)
    boards = [_small_sides(rng) for _ in range(30)]
    theirs = _gnubg_probs(boards, tmp_path)
    ours = bearoff.apply(np.stack(boards), np.zeros((len(boards), 5)))
    for row, board in zip(ours, boards):
        pid = Position(board).swap().id
        assert 1.0 - row[0] == pytest.approx(theirs[pid][0], abs=1e-4), pid  # its stored precision


# ----------------------------------------------------------------------------- the cubeful table


def _board(mine: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    return np.stack([mine, theirs]).astype(np.int8)


def test_last_roll_with_the_cube_owned_is_a_redouble_take() -> None:
    """AgAAKAAAAAAAAA: two checkers (on the 3 and 2 points) against one that is off next
    roll. 25 rolls of 36 bear both off, then the game is over: the cube is dead, No double
    = 25/36 - 11/36 in every cube state and Double/take twice that (Janowski's live cube
    had kept the cube)."""
    board = decode_position_id("AgAAKAAAAAAAAA")
    mine, theirs = bearoff.small_index(board[0], bearoff.BINOM), bearoff.small_index(board[1], bearoff.BINOM)
    np.testing.assert_allclose(bearoff.cubeful_table()[:, mine, theirs], 14 / 36)
    decision = cube_decision_at_ply(board, load_network(DEFAULT_MODEL), CubeInfo(value=2, owner="me"), 1)
    assert decision.action == "Redouble, take"
    assert decision.no_double == pytest.approx(14 / 36) and decision.double_take == pytest.approx(28 / 36)


def test_cubeful_table_orders_the_cube_states_and_stays_in_bounds() -> None:
    """Holding the cube is worth at least a centred one, which is worth at least the
    opponent's; a sure bear-off this roll is a single win in every state."""
    nd = bearoff.cubeful_table()[:, 1:, 1:]  # index 0: a side with nothing left
    assert (nd[bearoff.ROLLER_OWNS] >= nd[bearoff.CENTRED] - 1e-12).all()
    assert (nd[bearoff.CENTRED] >= nd[bearoff.OPPONENT_OWNS] - 1e-12).all()
    assert np.abs(nd).max() <= 1.0 + 1e-12
    one = bearoff.small_index(_row(p1=1), bearoff.BINOM)
    six = bearoff.small_index(_row(p6=6), bearoff.BINOM)
    np.testing.assert_allclose(bearoff.cubeful_table()[:, one, six], 1.0)


def test_only_small_bear_offs_in_money_play_without_beavers_are_exact() -> None:
    small = _board(_row(p2=1, p3=1), _row(p2=1))
    assert small_bearoff_values(small, CubeInfo()) is not None
    assert small_bearoff_values(small, CubeInfo(beavers=True)) is None
    assert small_bearoff_values(small, CubeInfo(match_length=5)) is None
    assert small_bearoff_values(_board(_row(p1=7), _row(p2=1)), CubeInfo()) is None  # seven checkers
    outside = _row(p2=1)
    outside[6] = 1
    assert small_bearoff_values(_board(outside, _row(p2=1)), CubeInfo()) is None  # one not home


@pytest.mark.skipif(GNUBG is None, reason="gnubg is not installed")
def test_cubeful_table_agrees_with_gnubg() -> None:
    """gnubg's 0-ply cubeful analysis of 60 random small bear-offs, in each cube state: its
    two-sided bear-off database's No double and Double/take, to its stored precision."""
    rng = np.random.default_rng(3)
    table = bearoff.cubeful_table()
    gnubg = GnubgProcess()
    try:
        for _ in range(60):
            sides = []
            for _side in range(2):
                row = np.zeros(25, dtype=np.int8)
                for _checker in range(rng.integers(1, 7)):
                    row[rng.integers(0, 6)] += 1
                sides.append(row)
            mine, theirs = (bearoff.small_index(row, bearoff.BINOM) for row in sides)
            for owner, state in (("centre", bearoff.CENTRED), ("me", bearoff.ROLLER_OWNS),
                                 ("opponent", bearoff.OPPONENT_OWNS)):
                theirs_says = gnubg.cube_analysis(Position(_board(*sides)), CubeInfo(owner=owner), 0)
                assert theirs_says.no_double == pytest.approx(table[state, mine, theirs], abs=5e-4)
                if owner != "opponent":
                    assert theirs_says.double_take == pytest.approx(2 * table[bearoff.OPPONENT_OWNS, mine, theirs],
                                                                    abs=1e-3)
    finally:
        gnubg.close()
