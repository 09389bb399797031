"""scripts/lab/move_error.py without gnubg: its players and its --filters (the judging is in test_gnubg_e2e)."""

import pytest

from engine.errors import TdgammonError
from engine.search import MoveFilter
from scripts.lab.move_error import build, parse_filters


def test_filters_parse_and_bad_ones_are_refused() -> None:
    assert parse_filters("8:0.16,16:0.32") == [MoveFilter(8, 0.16), MoveFilter(16, 0.32)]
    for bad in ("8", "8:x", "0:0.1", "8:0.16,"):
        with pytest.raises(TdgammonError, match="--filters"):
            parse_filters(bad)


def test_a_two_ply_player_is_judged_once_per_filter() -> None:
    filters = parse_filters("8:0.16,2:0.04")
    two_ply = build("pubeval@2", filters)
    assert [p.filter for p in two_ply] == filters and [p.ply for p in two_ply] == [2, 2]
    assert len({p.name for p in two_ply}) == 2
    assert [p.ply for p in build("pubeval", filters)] == [1]
    assert build("pubeval@2")[0].filter == MoveFilter()


def test_phases_split_the_loss() -> None:
    import numpy as np
    from engine.position import Position
    from scripts.lab.move_error import phase, phase_lines
    race = np.zeros((2, 25), dtype=np.int8)
    race[0, 10], race[1, 3] = 15, 15
    home = np.zeros((2, 25), dtype=np.int8)
    home[0, 2], home[1, 5] = 15, 15
    held = home.copy()
    held[1, 5], held[1, 22] = 13, 2                      # its anchor on our 2 point, behind us
    assert [phase(Position.start()), phase(Position(held)), phase(Position(race)),
            phase(Position(home))] == ["contact", "contact bear-off", "race", "bear-off"]
    assert phase(Position(held).swap()) == "contact"       # the anchor side is not all home
    lines = phase_lines(np.array([0.003, 0.001, 0.0]), ["contact", "race", "bear-off"])
    assert lines[0] == "  contact: 1 decisions, 3.0 millipoints each, 75% of the loss"
    assert "race: 1 decisions, 1.0 millipoints each, 25%" in lines[1] and "0%" in lines[2]
