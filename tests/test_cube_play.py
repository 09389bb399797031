"""Games with the cube and matches: same dice as cubeless games, Crawford rule, pit --cube/--match."""

import io
import json

import numpy as np

from engine.cube.play import play_cube_game, play_match
from engine.game import play_game
from engine.pit.harness import SearchPlayer
from engine.pubeval import PubevalEvaluator
from scripts.cli import main


class Fixed:
    """A cube decider with a fixed policy."""

    def __init__(self, double: bool, take: bool) -> None:
        self.double, self.take = double, take
        self.asked = []

    def should_double(self, position, cube):
        self.asked.append(cube)
        return self.double

    def accepts(self, position, cube):
        return self.take


def _players():
    return SearchPlayer(PubevalEvaluator(), 1), SearchPlayer(PubevalEvaluator(), 1)


def test_never_doubling_replays_the_cubeless_game():
    a, b = _players()
    for seed in range(5):
        cubeless = play_game(a, b, np.random.default_rng(seed))
        cubed = play_cube_game(a, b, Fixed(False, True), Fixed(False, True), np.random.default_rng(seed))
        assert cubed.points == cubeless.result and cubed.cube == 1 and cubed.turns == len(cubeless.turns)


def test_double_and_pass_ends_the_game_for_the_cube():
    a, b = _players()
    rec = play_cube_game(a, b, Fixed(True, False), Fixed(True, False), np.random.default_rng(3))
    assert rec.dropped and abs(rec.points) == 1 and rec.turns == 1   # the opening move, then a double


def test_double_take_turns_the_cube_and_multiplies_the_result():
    a, b = _players()
    da, db = Fixed(True, True), Fixed(True, True)
    rec = play_cube_game(a, b, da, db, np.random.default_rng(4))
    assert rec.doubles >= 2 and rec.cube == 2 ** rec.doubles
    assert rec.points == rec.result * rec.cube
    # Only the cube's owner (or a centred cube) is ever asked.
    for cube in da.asked + db.asked:
        assert cube.owner != "opponent"


def test_match_crawford_rule():
    a, b = _players()
    always = Fixed(True, False)
    m = play_match(a, b, always, always, np.random.default_rng(7), length=3)
    assert m.winner in (0, 1) and max(m.score) >= 3
    # Every game before someone reaches 2 points is a 1-point pass; the Crawford game is
    # played out with no double; afterwards the trailer doubles and the leader passes.
    score = [0, 0]
    crawford_seen = False
    for game in m.games:
        if (3 - score[0] == 1 or 3 - score[1] == 1) and not crawford_seen:
            crawford_seen = True
            assert not game.dropped and game.doubles == 0 and game.result != 0
        else:
            assert game.dropped and abs(game.points) == 1
        score[0 if game.points > 0 else 1] += abs(game.points)
    assert crawford_seen


def _run(capsys, monkeypatch, argv):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_pit_cube_and_match(capsys, monkeypatch):
    code, out, _ = _run(capsys, monkeypatch, ["pit", "pubeval", "random", "--games", "4", "--cube",
                                              "--workers", "1", "--no-progress", "--json"])
    rec = json.loads(out)
    assert code == 0 and rec["cube"] and rec["games"] == 4
    code, out, _ = _run(capsys, monkeypatch, ["pit", "pubeval", "random", "--games", "2", "--match", "3",
                                              "--workers", "1", "--no-progress", "--json"])
    rec = json.loads(out)
    assert code == 0 and rec["match"] == 3 and -1.0 <= rec["ppg"] <= 1.0


def test_pit_cube_refuses_save(capsys, monkeypatch):
    """gnubg may play the cube (tests/test_cube_bench.py); a .mat file holds cubeless games only."""
    code, out, err = _run(capsys, monkeypatch, ["pit", "pubeval", "random", "--save", "x.mat", "--cube", "--games", "2"])
    assert code == 2 and out == "" and err.count("\n") == 1


def test_game_kind_is_the_checker_result_or_a_single_game_for_a_pass():
    from engine.cube.play import CubeGameRecord

    assert CubeGameRecord(points=-4, result=-1, cube=4).kind == -1
    assert CubeGameRecord(points=6, result=3, cube=2).kind == 3
    assert CubeGameRecord(points=1, result=2, cube=1).kind == 2      # Jacoby scored a gammon as 1
    assert CubeGameRecord(points=-2, cube=2, dropped=True).kind == -1
    assert CubeGameRecord().kind == 0


def test_pit_cube_reports_gammons_from_the_games_not_the_points(capsys, monkeypatch):
    from engine.cube.play import EvaluatorCubeDecider, play_cube_pit_game
    from engine.pit.harness import seat_pit_game
    from engine.pit.stats import summarize
    from engine.evaluator import RandomEvaluator

    games, seed = 8, 3
    code, out, _ = _run(capsys, monkeypatch, ["pit", "pubeval", "random:2", "--games", str(games), "--cube",
                                              "--seed", str(seed), "--workers", "1", "--no-progress", "--json"])
    rec = json.loads(out)
    a, b = SearchPlayer(PubevalEvaluator(), 1, "pubeval"), SearchPlayer(RandomEvaluator(2), 1, "random:2")
    kinds, points = [], []
    for i in range(games):
        seat = seat_pit_game(a, b, seed, i, True)
        p0, p1 = seat.players
        game = play_cube_game(p0, p1, EvaluatorCubeDecider(p0.evaluator), EvaluatorCubeDecider(p1.evaluator), seat.rng)
        kinds.append(seat.for_a(game.kind))
        points.append(seat.for_a(game.points))
        assert play_cube_pit_game(a, b, seed, i, True).kinds == (kinds[-1],)
    assert code == 0 and rec["games_played"] == games
    assert rec["ppg"] == np.mean(points)
    assert rec["gammon_rate"] == np.mean(np.array(kinds) >= 2)
    assert rec["backgammon_rate"] == np.mean(np.array(kinds) >= 3)
    assert rec["gammon_rate"] < np.mean(np.array(points) >= 2)     # the cube inflates points, not gammons
    code, out, _ = _run(capsys, monkeypatch, ["pit", "pubeval", "random:2", "--games", "2", "--match", "3",
                                              "--seed", str(seed), "--workers", "1", "--no-progress", "--json"])
    rec = json.loads(out)
    assert rec["games_played"] >= 2 and 0 < rec["gammon_rate"] <= 1
    assert summarize([play_cube_pit_game(a, b, seed, i, True, 3) for i in range(2)], True).gammon_rate == rec["gammon_rate"]
