"""Every (position, roll) of GNU Backgammon's oracle: same afterstates, same notation, parse back.

tests/data/gnubg-legal-moves.jsonl (copied from ../shared/oracle) lists, for 4,956
positions and rolls, every distinct afterstate gnubg 1.07 generates (sides not swapped)
and gnubg's notation for one play reaching each. A mismatch prints the board, the roll
and the set difference ("divide"), at most a few of them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.formats.ascii_board import render
from engine.movegen import generate
from engine.notation import format_play, parse_play
from engine.position import Position, decode_position_id, encode_position_id

ORACLE = Path(__file__).parent / "data" / "gnubg-legal-moves.jsonl"
SHOWN = 5


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return [json.loads(line) for line in ORACLE.read_text().splitlines() if line.strip()]


def _report(record: dict, title: str, missing, extra) -> str:
    position = Position.from_id(record["position"])
    d1, d2 = record["dice"]
    return (f"{title}: {record['position']} roll {d1}-{d2}\n{render(position)}\n"
            f"  gnubg only: {sorted(missing)}\n  ours only:  {sorted(extra)}")


def test_oracle_file_is_complete(records):
    assert len(records) == 4956
    assert sum(len(r["afterstates"]) for r in records) == 83208


def test_afterstates_equal_gnubg_on_every_line(records):
    failures = []
    for record in records:
        board = decode_position_id(record["position"])
        afters, _ = generate(board, *record["dice"])
        ours = [encode_position_id(a) for a in afters]
        assert len(ours) == len(set(ours)), f"duplicate afterstates for {record['position']}"
        expected = set(record["afterstates"])
        if set(ours) != expected:
            failures.append(_report(record, "afterstates differ", expected - set(ours),
                                    set(ours) - expected))
    assert not failures, (f"{len(failures)} of {len(records)} lines differ; first ones:\n"
                          + "\n\n".join(failures[:SHOWN]))


def test_notation_equals_gnubg_on_every_play(records):
    """Our notation for the play reaching each afterstate is the string gnubg wrote (100%)."""
    failures, total = [], 0
    for record in records:
        board = decode_position_id(record["position"])
        afters, steps = generate(board, *record["dice"])
        ours = {format_play(board, s) for s in steps}
        expected = set(record["moves"])
        total += len(expected)
        if ours != expected:
            failures.append(_report(record, "notation differs", expected - ours, ours - expected))
    assert not failures, (f"notation differs on {len(failures)} lines ({total} plays); first:\n"
                          + "\n\n".join(failures[:SHOWN]))


@pytest.mark.slow
def test_parse_every_gnubg_move_reaches_its_afterstate(records):
    """parse_play(gnubg's string) lands on an afterstate of the line, one per string, all covered."""
    failures = []
    for record in records:
        board = decode_position_id(record["position"])
        dice = tuple(record["dice"])
        reached = [encode_position_id(parse_play(board, move, dice)[0]) for move in record["moves"]]
        if sorted(reached) != sorted(record["afterstates"]):
            failures.append(_report(record, "parsed moves miss afterstates",
                                    set(record["afterstates"]) - set(reached),
                                    set(reached) - set(record["afterstates"])))
        if not record["moves"]:
            after, _ = parse_play(board, "", dice)
            assert (after == board).all()
    assert not failures, "\n\n".join(failures[:SHOWN])


@pytest.mark.slow
def test_position_ids_round_trip_on_every_oracle_id(records):
    for record in records:
        for position_id in [record["position"], *record["afterstates"]]:
            assert Position.from_id(position_id).id == position_id
