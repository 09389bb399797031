"""scripts/lab/decision_set.py: the stored, gnubg-judged decisions and the error table on them."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from engine.notation import play_list
from engine.pit.harness import SearchPlayer
from engine.position import Position
from engine.pubeval import PubevalEvaluator
from engine.search import rank_plays
from scripts.lab import decision_set
from scripts.lab.decision_set import DEFAULT_SET, Decision, load_set, losses


def _decision(position: Position, dice: tuple[int, int], favourite: int) -> Decision:
    """Every play worth 0 but the `favourite`-th legal play, worth 0.5."""
    plays = play_list(position, dice)
    worth = {plays[k].after.id: (0.5 if k == favourite else 0.0) for k in range(len(plays))}
    return Decision(position, dice, "test", worth, {k: 2 for k in worth})


def test_decision_round_trips_through_json() -> None:
    d = _decision(Position.start(), (3, 1), 0)
    back = Decision.from_json(d.to_json())
    assert back.position == d.position and back.dice == d.dice and back.worth == d.worth
    assert back.phase == "contact" and back.best == 0.5


def test_losses_are_the_judges_best_minus_the_play() -> None:
    position, dice = Position.start(), (6, 4)
    player = SearchPlayer(PubevalEvaluator(), 1)
    mine = [r.afterstate for r in rank_plays(position.board, dice, PubevalEvaluator(), 1)][0]
    plays = play_list(position, dice)
    chosen = next(k for k in range(len(plays)) if np.array_equal(plays[k].after.board, mine))
    other = (chosen + 1) % len(plays)
    loss = losses(player, [_decision(position, dice, chosen), _decision(position, dice, other)])
    np.testing.assert_allclose(loss, [0.0, 0.5])


def test_score_prints_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    race = np.zeros((2, 25), dtype=np.int8)
    race[0, 12], race[1, 9] = 15, 15
    path = tmp_path / "set.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        for d in (_decision(Position.start(), (3, 1), 0), _decision(Position(race), (5, 2), 0)):
            fh.write(d.to_json() + "\n")
    assert decision_set.main(["score", "pubeval@1", "--set", str(path)]) == 0
    out = capsys.readouterr().out
    assert "| player | all (2) | contact (1) | race (1) |" in out
    assert out.splitlines()[-1].startswith("| pubeval@1 | ")
    assert decision_set.main(["score", "pubeval@1", "pubeval@1", "--set", str(path)]) == 0
    out = capsys.readouterr().out  # the same player twice: a paired difference of nothing
    assert "each player minus pubeval@1" in out and out.splitlines()[-1].startswith("| pubeval@1 | 0.00 ± 0.00")


def test_race_phase_and_its_classes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    race = np.zeros((2, 25), dtype=np.int8)
    race[0, 12], race[1, 4] = 15, 15
    assert decision_set.race_class(Position(race)) == "other side home"
    assert decision_set.race_class(Position(race[::-1].copy())) == "mover home"
    path = tmp_path / "set.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        for d in (_decision(Position.start(), (3, 1), 0), _decision(Position(race), (5, 2), 0)):
            fh.write(d.to_json() + "\n")
    assert decision_set.main(["pubeval@1", "--set", str(path), "--phase", "race"]) == 0
    out = capsys.readouterr().out
    assert "| player | all (1) | contact (0) | race (1) |" in out
    assert out.splitlines()[-1].startswith("| pubeval@1 | - | - | ")
    assert " (1) | - |" in out.splitlines()[-1]


def test_bad_set_is_one_line_and_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert decision_set.main(["pubeval", "--set", str(tmp_path / "missing.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot read the decision set" in err


def test_the_stored_set() -> None:
    """At least 1,500 decisions, both phases well represented, every legal play valued."""
    decisions = load_set(DEFAULT_SET)
    assert len(decisions) >= 1500
    phases = [d.phase for d in decisions]
    assert phases.count("race") >= 300 and phases.count("contact") >= 1000
    assert {d.source for d in decisions} == {"gnubg", "tdgammon"}
    for d in decisions:
        assert {p.after.id for p in play_list(d.position, d.dice)} == set(d.worth)
        assert max(d.plies.values()) in (-1, 2)
    assert DEFAULT_SET.stat().st_size < 2_000_000
    # deepened: every race play at gnubg 2-ply, and in contact every play that was within 0.12
    # of the best (the best moved a little when it was valued again)
    for d in decisions:
        shallow = [k for k, ply in d.plies.items() if ply == 1]
        assert not shallow or (d.phase == "contact" and min(d.best - d.worth[k] for k in shallow) > 0.11)


@pytest.mark.gnubg
def test_deepen_values_the_shallow_plays_again(tmp_path: Path) -> None:
    """A race play valued only at gnubg 1-ply is valued again at 2-ply; a far contact play is not."""
    race = np.zeros((2, 25), dtype=np.int8)
    race[0, 7], race[0, 3], race[1, 2] = 3, 12, 4
    contact = _decision(Position.start(), (6, 5), 0)
    shallow = _decision(Position(race), (4, 2), 0)
    far = next(k for k in contact.worth if contact.worth[k] == 0.0)
    contact.worth[far], contact.plies[far] = -0.5, 1
    for key in shallow.plies:
        shallow.plies[key] = 1
    path, out = tmp_path / "set.jsonl.gz", tmp_path / "deep.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        fh.write(contact.to_json() + "\n" + shallow.to_json() + "\n")
    assert decision_set.main(["deepen", "--set", str(path), "--out", str(out), "--work", str(tmp_path / "w"),
                              "--jobs", "1"]) == 0
    deep = load_set(out)
    assert set(deep[1].plies.values()) == {2} and deep[1].worth != shallow.worth
    assert deep[0].plies[far] == 1 and deep[0].worth == contact.worth
