"""gnubg Match IDs: the cube, score, match length, turn and dice in 12 Base64 characters.

The match key is 67 bits, least significant bit first in each byte (as the Position ID),
each field stored least significant bit first, padded to 9 bytes and Base64-encoded
without padding (GNU Backgammon manual, "A technical description of the Match ID"):

    bits  0-3   log2 of the cube value        bit  11     turn (who must decide now)
    bits  4-5   cube owner: 0, 1, 3 = centre  bit  12     a double is offered
    bit   6     player on roll                bits 13-14  resignation offered (0..3)
    bit   7     Crawford game                 bits 15-17  first die (0 = not rolled)
    bits  8-10  game state (0 none, 1         bits 18-20  second die
                playing, 2 over, 3 resigned,  bits 21-35  match length (0 = money)
                4 dropped)                    bits 36-50  player 0's score
                                              bits 51-65  player 1's score
                                              bit  66     Jacoby rule OFF

Bit 66 is not in the manual; gnubg 1.07 writes it (set in every match and in money
sessions with `set jacoby off`), so we read and write it too.

Players are gnubg's 0 and 1; the Position ID that goes with a Match ID is seen from the
player on roll (bit 6).
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from engine.errors import MatchIdError

CENTRED = -1
"""cube_owner value for a centred cube (gnubg stores it as 3)."""

_FIELDS = (  # name, width in bits, in key order
    ("cube_log", 4), ("cube_owner", 2), ("on_roll", 1), ("crawford", 1), ("game_state", 3),
    ("turn", 1), ("doubled", 1), ("resigned", 2), ("die1", 3), ("die2", 3),
    ("match_length", 15), ("score0", 15), ("score1", 15), ("no_jacoby", 1),
)
KEY_BITS = sum(width for _, width in _FIELDS)  # 67


@dataclass(frozen=True)
class MatchState:
    """The decoded match key. cube_owner is 0, 1 or CENTRED; dice (0, 0) = not rolled yet."""

    cube_value: int = 1
    cube_owner: int = CENTRED
    on_roll: int = 0
    crawford: bool = False
    game_state: int = 1
    turn: int = 0
    doubled: bool = False
    resigned: int = 0
    dice: tuple[int, int] = (0, 0)
    match_length: int = 0
    score: tuple[int, int] = (0, 0)
    jacoby: bool = False

    def __post_init__(self) -> None:
        validate(self)


def validate(state: MatchState) -> None:
    """Raise MatchIdError when the fields cannot describe a real match."""
    v = state.cube_value
    if v < 1 or v & (v - 1) or v > 1 << 15:
        raise MatchIdError(f"cube value must be a power of 2 from 1 to 32768, got {v}")
    if state.cube_owner not in (0, 1, CENTRED):
        raise MatchIdError(f"cube owner must be 0, 1 or centred, got {state.cube_owner}")
    if state.on_roll not in (0, 1) or state.turn not in (0, 1):
        raise MatchIdError("player on roll and turn must be 0 or 1")
    if not 0 <= state.game_state <= 4:
        raise MatchIdError(f"game state must be 0..4, got {state.game_state}")
    if not 0 <= state.resigned <= 3:
        raise MatchIdError(f"resignation value must be 0..3, got {state.resigned}")
    d1, d2 = state.dice
    if not (0 <= d1 <= 6 and 0 <= d2 <= 6) or (d1 == 0) != (d2 == 0):
        raise MatchIdError(f"dice must both be 1..6 or both 0 (not rolled), got {d1}, {d2}")
    n = state.match_length
    s0, s1 = state.score
    if not 0 <= n < 1 << 15 or s0 < 0 or s1 < 0 or s0 >= 1 << 15 or s1 >= 1 << 15:
        raise MatchIdError(f"match length and scores must be 0..32767, got {n}, {s0}-{s1}")
    if n and (s0 >= n or s1 >= n) and state.game_state in (0, 1):
        raise MatchIdError(f"score {s0}-{s1} is already over in a {n}-point match")
    if state.crawford and (n == 0 or (n - s0 != 1 and n - s1 != 1)):
        raise MatchIdError("the Crawford flag needs a match in which a player is 1-away")


def encode_match_id(state: MatchState) -> str:
    """The 12-character gnubg Match ID of state."""
    values = {
        "cube_log": state.cube_value.bit_length() - 1,
        "cube_owner": 3 if state.cube_owner == CENTRED else state.cube_owner,
        "on_roll": state.on_roll, "crawford": int(state.crawford),
        "game_state": state.game_state, "turn": state.turn, "doubled": int(state.doubled),
        "resigned": state.resigned, "die1": state.dice[0], "die2": state.dice[1],
        "match_length": state.match_length, "score0": state.score[0], "score1": state.score[1],
        "no_jacoby": int(not state.jacoby),
    }
    key = 0
    shift = 0
    for name, width in _FIELDS:
        key |= (values[name] & ((1 << width) - 1)) << shift
        shift += width
    return base64.b64encode(key.to_bytes(9, "little")).decode("ascii")


def decode_match_id(match_id: str) -> MatchState:
    """Inverse of encode_match_id; MatchIdError on anything malformed."""
    if not isinstance(match_id, str) or len(match_id) != 12:
        raise MatchIdError(f"Match ID must be 12 characters, got {match_id!r}")
    try:
        raw = base64.b64decode(match_id, validate=True)
    except (binascii.Error, ValueError) as err:
        raise MatchIdError(f"Match ID {match_id!r} is not valid Base64") from err
    key = int.from_bytes(raw, "little")
    if key >> KEY_BITS:
        raise MatchIdError(f"Match ID {match_id!r} has stray bits after the match key")
    values = {}
    shift = 0
    for name, width in _FIELDS:
        values[name] = (key >> shift) & ((1 << width) - 1)
        shift += width
    if values["cube_owner"] == 2:
        raise MatchIdError(f"Match ID {match_id!r} has an invalid cube owner")
    try:
        return MatchState(
            cube_value=1 << values["cube_log"],
            cube_owner=CENTRED if values["cube_owner"] == 3 else values["cube_owner"],
            on_roll=values["on_roll"], crawford=bool(values["crawford"]),
            game_state=values["game_state"], turn=values["turn"], doubled=bool(values["doubled"]),
            resigned=values["resigned"], dice=(values["die1"], values["die2"]),
            match_length=values["match_length"], score=(values["score0"], values["score1"]),
            jacoby=not values["no_jacoby"],
        )
    except MatchIdError as err:
        raise MatchIdError(f"Match ID {match_id!r}: {err}") from None
