"""gnubg Match IDs: round trips, IDs gnubg 1.07 printed, malformed IDs."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.errors import MatchIdError
from engine.formats.matchid import CENTRED, MatchState, decode_match_id, encode_match_id

# (Match ID printed by gnubg 1.07.001, the state set with gnubg commands)
GNUBG_IDS = [
    ("MIHmAAAAAAAE", dict(match_length=7, dice=(5, 1), on_roll=0, turn=0)),            # new match 7
    ("MIHmADAAKAAE", dict(match_length=7, dice=(5, 1), score=(3, 5))),                 # set score 3 5
    ("MoHmADAAKAAE", dict(match_length=7, dice=(5, 1), score=(3, 5), cube_value=4)),   # set cube value 4
    ("EoHmADAAKAAE", dict(match_length=7, dice=(5, 1), score=(3, 5), cube_value=4, cube_owner=1)),
    ("AoHmADAAKAAE", dict(match_length=7, dice=(5, 1), score=(3, 5), cube_value=4, cube_owner=0)),
    ("MoHqADAAKAAE", dict(match_length=7, dice=(5, 2), score=(3, 5), cube_value=4)),   # set dice 5 2
    ("cgngADAAKAAE", dict(match_length=7, score=(3, 5), cube_value=4, on_roll=1, turn=1)),  # set turn 1
    ("sgHgAGAAIAAE", dict(match_length=7, score=(6, 4), cube_value=4, crawford=True)),  # set crawford on
    ("cIkpA4ABaAAE", dict(match_length=25, score=(24, 13), dice=(3, 2), on_roll=1, turn=1)),
    ("cAkXAAAAAAAA", dict(dice=(6, 5), on_roll=1, turn=1, jacoby=True)),                # money, Jacoby on
    ("UQkXAAAAAAAA", dict(dice=(6, 5), on_roll=1, turn=1, jacoby=True, cube_value=2, cube_owner=1)),
    ("MAEOAAAAAAAE", dict(dice=(4, 3), jacoby=False)),                                 # money, Jacoby off
]


@pytest.mark.parametrize("match_id,fields", GNUBG_IDS)
def test_gnubg_ids_decode_and_encode(match_id, fields):
    state = MatchState(**fields)
    assert decode_match_id(match_id) == state
    assert encode_match_id(state) == match_id


states = st.builds(
    lambda log, owner, roll, turn, doubled, resigned, dice, n, s0, s1, jac, gs: MatchState(
        cube_value=1 << log, cube_owner=owner, on_roll=roll, crawford=False, game_state=gs, turn=turn,
        doubled=doubled, resigned=resigned, dice=dice, match_length=n,
        score=(s0 % n, s1 % n) if n else (0, 0), jacoby=jac),
    st.integers(0, 15), st.sampled_from([0, 1, CENTRED]), st.integers(0, 1), st.integers(0, 1),
    st.booleans(), st.integers(0, 3),
    st.one_of(st.just((0, 0)), st.tuples(st.integers(1, 6), st.integers(1, 6))),
    st.integers(0, 64), st.integers(0, 1000), st.integers(0, 1000), st.booleans(), st.integers(0, 4))


@given(states)
def test_round_trip(state):
    match_id = encode_match_id(state)
    assert len(match_id) == 12
    assert decode_match_id(match_id) == state


@pytest.mark.parametrize("bad", ["", "MIHmAAAAAAA", "MIHmAAAAAAAEA", "MIHm*AAAAAAE", 12345,
                                 "////////////",   # stray bits past the 67-bit key
                                 "IIHmAAAAAAAE"])  # cube owner 2
def test_malformed_ids_raise(bad):
    with pytest.raises(MatchIdError):
        decode_match_id(bad)


def _raw_id(die1: int, die2: int) -> str:
    """A key with only the dice fields set (to forge out-of-range dice)."""
    import base64
    return base64.b64encode(((die1 << 15) | (die2 << 18) | (3 << 4) | (1 << 8)).to_bytes(9, "little")).decode()


def test_dice_out_of_range_raise():
    assert decode_match_id(_raw_id(6, 6)).dice == (6, 6)
    for d1, d2 in ((7, 1), (1, 7), (3, 0)):
        with pytest.raises(MatchIdError):
            decode_match_id(_raw_id(d1, d2))


def test_invalid_states_raise():
    with pytest.raises(MatchIdError):
        MatchState(cube_value=3)
    with pytest.raises(MatchIdError):
        MatchState(match_length=5, score=(5, 0))
    with pytest.raises(MatchIdError):
        MatchState(match_length=7, score=(2, 2), crawford=True)
    with pytest.raises(MatchIdError):
        MatchState(dice=(3, 0))
