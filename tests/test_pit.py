"""pit: result fields, duplicate-dice pairing, determinism, spec parsing (pubeval vs random)."""

import json

import numpy as np
import pytest

from engine.errors import TdgammonError
from engine.gnubg.process import GnubgProcess
from engine.pit.harness import SearchPlayer, play_pit_game
from engine.pit.players import parse_player_spec
from engine.pit.stats import GameResult, summarize
from engine.pubeval import PubevalEvaluator
from engine.evaluator import RandomEvaluator
from scripts.cli import main


class Recorder:
    """Wraps a player and records the dice it was given, per game."""

    def __init__(self, inner):
        self.inner, self.name, self.rolls = inner, inner.name, []

    def choose(self, position, dice, plays):
        self.rolls.append(tuple(dice))
        return self.inner.choose(position, dice, plays)


def test_duplicate_pair_swaps_the_dice():
    pub = SearchPlayer(PubevalEvaluator(), 1, "pubeval")
    # Two copies of the same deterministic player: both games of a pair must then be
    # mirror images, and A's rolls in game 0 are B's rolls in game 1.
    a, b = Recorder(pub), Recorder(SearchPlayer(PubevalEvaluator(), 1, "pubeval2"))
    g0 = play_pit_game(a, b, seed=5, index=0, duplicate=True, keep_record=True)
    a_rolls, b_rolls = a.rolls, b.rolls
    a.rolls, b.rolls = [], []
    g1 = play_pit_game(a, b, seed=5, index=1, duplicate=True, keep_record=True)
    assert g1.points == -g0.points
    assert a.rolls == b_rolls and b.rolls == a_rolls
    assert [t[1] for t in g0.mat.turns] == [t[1] for t in g1.mat.turns]
    assert [t[0] for t in g0.mat.turns] == [1 - t[0] for t in g1.mat.turns]


def test_summary_uses_pairs_when_duplicate():
    results = [GameResult(0, 2), GameResult(1, -1), GameResult(2, 1), GameResult(3, 1)]
    dup = summarize(results, duplicate=True)
    assert dup.games == 4 and dup.ppg == pytest.approx(0.75)
    pair_means = np.array([0.5, 1.0])
    assert dup.ci95 == pytest.approx(1.96 * pair_means.std(ddof=1) / np.sqrt(2))
    ind = summarize(results, duplicate=False)
    assert ind.ci95 == pytest.approx(1.96 * np.std([2, -1, 1, 1], ddof=1) / 2)
    assert dup.win_rate == 0.75 and dup.gammon_rate == 0.25 and dup.b_win_rate == 0.25


@pytest.mark.parametrize("text,kind,spec,ply", [
    ("pubeval", "evaluator", "pubeval", 1), ("pubeval@2", "evaluator", "pubeval", 2),
    ("random:3@1", "evaluator", "random:3", 1), ("models/x.pt@2", "evaluator", "models/x.pt", 2),
    ("pubeval@3", "evaluator", "pubeval", 3),
    ("gnubg", "gnubg", "", 0), ("gnubg:1", "gnubg", "", 1),
])
def test_player_specs(text, kind, spec, ply):
    s = parse_player_spec(text)
    assert (s.kind, s.evaluator_spec, s.ply) == (kind, spec, ply)


@pytest.mark.parametrize("text", ["", "pubeval@4", "pubeval@0", "pubeval@x", "gnubg:9", "gnubg@2", "@2"])
def test_bad_specs(text):
    with pytest.raises(TdgammonError):
        parse_player_spec(text)


def run_json(capsys, *argv):
    assert main(["pit", *argv, "--json", "--no-progress"]) == 0
    return json.loads(capsys.readouterr().out)


def test_pit_command_fields_and_determinism(capsys):
    one = run_json(capsys, "pubeval", "random", "--games", "8", "--seed", "11", "--workers", "1")
    for key in ("games", "ppg", "ci95", "win_rate", "gammon_rate", "backgammon_rate", "games_per_s"):
        assert key in one
    assert one["games"] == 8 and one["duplicate"] is True
    assert one["win_rate"] > 0.5 and one["ppg"] > 0
    two = run_json(capsys, "pubeval", "random", "--games", "8", "--seed", "11", "--workers", "2")
    assert {k: two[k] for k in ("ppg", "ci95", "win_rate", "gammon_rate")} == \
           {k: one[k] for k in ("ppg", "ci95", "win_rate", "gammon_rate")}


def test_pit_rejects_odd_duplicate_and_bad_model(capsys):
    assert main(["pit", "pubeval", "random", "--games", "3"]) == 2
    assert main(["pit", "/nonexistent.pt", "random", "--games", "2"]) == 2
    err = capsys.readouterr().err
    assert "even" in err and "does not exist" in err


def test_pit_checks_save_path_and_workers_before_playing(tmp_path, capsys):
    assert main(["pit", "pubeval", "random", "--games", "2", "--save", str(tmp_path / "no" / "x.mat")]) == 2
    assert main(["pit", "pubeval", "random", "--games", "2", "--save", str(tmp_path)]) == 2
    assert main(["pit", "pubeval", "random", "--games", "2", "--workers", "-1"]) == 2
    err = capsys.readouterr().err
    assert err.count("cannot write a file there") == 2 and "--workers must be >= 0" in err


def test_a_gnubg_that_dies_at_start_says_why(tmp_path):
    fake = tmp_path / "gnubg"
    fake.write_text("#!/bin/sh\necho 'cannot create ~/.gnubg' >&2\nexit 3\n")
    fake.chmod(0o755)
    with pytest.raises(TdgammonError, match=r"exited unexpectedly \(status 3: cannot create ~/.gnubg\)"):
        GnubgProcess(str(fake))


def test_pit_without_gnubg_stops_before_its_workers_start(monkeypatch, capsys):
    monkeypatch.setattr("engine.gnubg.process.GNUBG", "/nonexistent/gnubg")
    assert main(["pit", "pubeval", "gnubg", "--games", "2", "--workers", "2", "--no-progress"]) == 2
    assert "gnubg is not installed" in capsys.readouterr().err


def test_random_evaluator_is_reseeded_per_game():
    r = SearchPlayer(RandomEvaluator(0), 1, "random")
    p = SearchPlayer(PubevalEvaluator(), 1, "pubeval")
    first = play_pit_game(r, p, 4, 6, True, True).mat.turns
    play_pit_game(r, p, 4, 2, True)
    assert play_pit_game(r, p, 4, 6, True, True).mat.turns == first


def test_gammon_rates_come_from_each_games_own_result_not_its_points():
    # A cube of 4 makes a single game worth 4 points and a backgammon at 2 worth 6.
    results = [GameResult(0, 4, None, (1,)), GameResult(1, -6, None, (-3,)),
               GameResult(2, 2, None, (2,)), GameResult(3, -1, None, (-1,))]
    s = summarize(results, duplicate=True)
    assert s.ppg == pytest.approx(-0.25) and s.games_played == 4
    assert (s.win_rate, s.gammon_rate, s.backgammon_rate) == (0.5, 0.25, 0.0)
    assert (s.b_win_rate, s.b_gammon_rate, s.b_backgammon_rate) == (0.5, 0.25, 0.25)
    # Matches: one unit per match (wins from its points), rates over all the games in them.
    m = summarize([GameResult(0, 1, None, (1, -2, 2, 3)), GameResult(1, -1, None, (-1, 0))], duplicate=False)
    assert m.games == 2 and m.games_played == 6 and m.win_rate == 0.5
    assert (m.gammon_rate, m.backgammon_rate, m.b_gammon_rate) == (2 / 6, 1 / 6, 1 / 6)


def test_cubeless_results_are_their_own_kinds():
    s = summarize([GameResult(0, 2), GameResult(1, -3), GameResult(2, 1), GameResult(3, 1)], duplicate=True)
    assert s.games_played == 4 and (s.gammon_rate, s.b_backgammon_rate) == (0.25, 0.25)


def test_seating_gives_a_pair_the_same_dice_with_the_players_swapped():
    from engine.pit.harness import seat_pit_game

    a, b = SearchPlayer(PubevalEvaluator(), 1, "a"), SearchPlayer(RandomEvaluator(), 1, "b")
    even = seat_pit_game(a, b, 9, 4, duplicate=True)
    odd = seat_pit_game(a, b, 9, 5, duplicate=True)
    assert even.players == (a, b) and odd.players == (b, a)
    assert even.a_first and not odd.a_first and (even.for_a(3), odd.for_a(3)) == (3, -3)
    assert (even.rng.integers(1, 7, 50) == odd.rng.integers(1, 7, 50)).all()
    free = seat_pit_game(a, b, 9, 5, duplicate=False)
    assert free.a_first and not (free.rng.integers(1, 7, 50) == seat_pit_game(a, b, 9, 4, False).rng.integers(1, 7, 50)).all()


def test_json_is_strict_json_when_the_interval_is_undefined(capsys):
    """One duplicate pair has no standard error: ci95 is null, never the non-JSON Infinity."""
    assert main(["pit", "pubeval", "random", "--games", "2", "--workers", "1", "--json",
                 "--no-progress"]) == 0
    out = json.loads(capsys.readouterr().out, parse_constant=lambda name: pytest.fail(name))
    assert out["games"] == 2 and out["ci95"] is None


def test_the_shared_95_percent_interval() -> None:
    import math
    from engine.pit.stats import ci95
    assert ci95(np.array([1.0, -1.0, 1.0, -1.0])) == pytest.approx(1.96 * math.sqrt(4 / 3) / 2)
    assert math.isnan(ci95(np.array([0.5]))) and ci95([0.5], single=math.inf) == math.inf
