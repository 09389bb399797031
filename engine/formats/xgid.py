"""eXtreme Gammon position IDs (XGID), what players paste in forums, to and from our types.

    XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10

Ten fields separated by colons:

1. the board, 26 characters from the bottom player X's view: index 0 = O's bar, 1..24 =
   X's points 1..24, 25 = X's bar; `-` empty, `A`..`O` = 1..15 X checkers, `a`..`o` O's.
2. log2 of the cube value;  3. cube owner: 0 centred, 1 X, -1 O;
4. on roll: 1 X, -1 O;  5. dice: `00` not rolled, `D` a double is offered (`B` beaver,
   `R` raccoon, read as a double), else the two dice;
6., 7. scores of X and O;  8. match: 1 = Crawford game; money: Jacoby (1) + beavers (2);
9. match length (0 = money);  10. log2 of the maximum cube (written as 10).

An XGID carries what a Position ID and a Match ID carry together. Reading one, the side
on roll becomes gnubg's player 1 and the other player 0, exactly as gnubg's own
`set xgid` does; writing one, the side on roll is X (field 4 is 1), so an XGID we write
reads back to the same board and state, relabelled that way. Boards here are ours:
int8 (2, 25), the side on roll in row 0.
"""

from __future__ import annotations

import re

import numpy as np

from engine.dice import parse_dice
from engine.errors import DiceError, PositionIdError
from engine.formats.matchid import CENTRED, MatchState, decode_match_id
from engine.position import BAR, CHECKERS, ME, OPP, Position

PREFIX = "XGID="
MAX_CUBE_LOG = 10
ON_ROLL = 1
"""The gnubg player number a decoded XGID gives the side on roll (gnubg does the same)."""
_FIELD_COUNT = 10


def looks_like_xgid(text: str) -> bool:
    """True when text is meant as an XGID (starts with XGID= or has its colon-separated shape)."""
    text = text.strip()
    return text.upper().startswith(PREFIX) or (text.count(":") >= 8 and len(text.split(":")[0]) == 26)


def encode_xgid(board: np.ndarray, state: MatchState = MatchState(on_roll=ON_ROLL, turn=ON_ROLL)) -> str:
    """The XGID of `board` (the side on roll, gnubg player state.on_roll, in row 0) and the
    match state, with the side on roll as X."""
    board = np.asarray(board, dtype=np.int8).reshape(2, 25)
    x_row, o_row = board[ME], board[OPP]
    me = state.on_roll
    cells = ["-"] * 26
    cells[0] = _count_char(int(o_row[BAR]), upper=False)
    cells[25] = _count_char(int(x_row[BAR]), upper=True)
    for point in range(1, 25):
        x = int(x_row[point - 1])
        o = int(o_row[24 - point])   # O's point 25 - p is X's point p
        if x and o:
            raise PositionIdError(f"point {point} holds checkers of both sides")
        cells[point] = _count_char(x, True) if x else _count_char(o, False)
    owner = 0 if state.cube_owner == CENTRED else (1 if state.cube_owner == me else -1)
    if state.doubled:
        dice = "D"
    else:
        dice = f"{state.dice[0]}{state.dice[1]}"
    score_x, score_o = state.score[me], state.score[1 - me]
    if state.match_length:
        flags = int(state.crawford)
    else:
        flags = int(state.jacoby)
    fields = ["".join(cells), str(state.cube_value.bit_length() - 1), str(owner), "1", dice,
              str(score_x), str(score_o), str(flags), str(state.match_length), str(MAX_CUBE_LOG)]
    return PREFIX + ":".join(fields)


def _count_char(n: int, upper: bool) -> str:
    if n == 0:
        return "-"
    return chr((ord("A") if upper else ord("a")) + n - 1)


def decode_xgid(text: str) -> tuple[np.ndarray, MatchState]:
    """(board with the side on roll in row 0, match state); PositionIdError on anything malformed."""
    raw = text.strip()
    body = raw[len(PREFIX):] if raw.upper().startswith(PREFIX) else raw
    fields = body.split(":")
    if len(fields) < 9:
        raise PositionIdError(f"XGID {raw!r} needs at least 9 ':'-separated fields, got {len(fields)}")
    cells = fields[0]
    if len(cells) != 26 or not re.fullmatch(r"[-A-Oa-o]{26}", cells):
        raise PositionIdError(f"XGID {raw!r}: the board must be 26 characters of '-', A-O, a-o")
    try:
        cube_log, owner, turn = int(fields[1]), int(fields[2]), int(fields[3])
        score_x, score_o, flags, length = (int(f) for f in fields[5:9])
    except ValueError:
        raise PositionIdError(f"XGID {raw!r}: fields 2-4 and 6-9 must be integers") from None
    if turn not in (1, -1) or owner not in (0, 1, -1) or not 0 <= cube_log <= 15:
        raise PositionIdError(f"XGID {raw!r}: on roll must be 1 or -1, cube owner 0, 1 or -1, cube 0..15")
    x_row = np.zeros(25, dtype=np.int8)
    o_row = np.zeros(25, dtype=np.int8)
    for index, ch in enumerate(cells):
        if ch == "-":
            continue
        n = ord(ch.lower()) - ord("a") + 1
        if ch.isupper():
            if index == 0:
                raise PositionIdError(f"XGID {raw!r}: X checkers on O's bar")
            x_row[BAR if index == 25 else index - 1] = n
        else:
            if index == 25:
                raise PositionIdError(f"XGID {raw!r}: O checkers on X's bar")
            o_row[BAR if index == 0 else 24 - index] = n
    for name, row in (("X", x_row), ("O", o_row)):
        if row.sum() > CHECKERS:
            raise PositionIdError(f"XGID {raw!r}: {name} has {int(row.sum())} checkers, at most {CHECKERS}")
    dice_text = fields[4].upper()
    doubled = dice_text in ("D", "B", "R")
    if doubled or dice_text == "00":
        dice = (0, 0)
    elif re.fullmatch(r"[1-6][1-6]", dice_text):
        dice = (int(dice_text[0]), int(dice_text[1]))
    else:
        raise PositionIdError(f"XGID {raw!r}: dice must be 00, D, B, R or two dice 1-6, got {fields[4]!r}")
    x_on_roll = turn == 1
    board = np.stack([x_row, o_row]) if x_on_roll else np.stack([o_row, x_row])
    Position.from_id(Position(board).id)   # the Position ID's checks: a legal, non-empty board
    on_roll = ON_ROLL
    mine, theirs = (score_x, score_o) if x_on_roll else (score_o, score_x)
    score = [0, 0]
    score[on_roll], score[1 - on_roll] = mine, theirs
    cube_owner = CENTRED
    if owner:
        cube_owner = on_roll if (owner == 1) == x_on_roll else 1 - on_roll
    try:
        state = MatchState(
            cube_value=1 << cube_log, cube_owner=cube_owner,
            on_roll=on_roll, crawford=bool(flags & 1) if length else False, game_state=1,
            turn=(1 - on_roll) if doubled else on_roll, doubled=doubled, dice=dice, match_length=length,
            score=(score[0], score[1]), jacoby=bool(flags & 1) if not length else False)
    except ValueError as err:
        raise PositionIdError(f"XGID {raw!r}: {err}") from None
    return board, state


def position_and_state(text: str) -> tuple[Position, MatchState | None]:
    """A Position (the side on roll in row 0) and the match state the text carries, if any:
    an XGID carries one, and so does gnubg's "Position ID:Match ID" (what its Copy ID
    gives, e.g. 4HPwATDgc/ABMA:cAkAAAAAAAAA); a bare Position ID carries none."""
    if looks_like_xgid(text):
        board, state = decode_xgid(text)
        return Position(board), state
    position_id, colon, match_id = text.strip().partition(":")
    return Position.from_id(position_id), (decode_match_id(match_id) if colon else None)


def position_and_roll(text: str, dice: str | None) -> tuple[Position, tuple[int, int]]:
    """A position and the roll to play: `dice` when given (31, 3-1 or '3 1'), else the roll
    the XGID or gnubg ID carries, as a player pastes one mid-turn; DiceError if neither."""
    position, state = position_and_state(text)
    if dice is not None:
        return position, parse_dice(dice)
    if state is None or state.doubled or 0 in state.dice:
        raise DiceError("DICE is required: this position carries no roll")
    return position, (int(state.dice[0]), int(state.dice[1]))


def position_from_text(text: str) -> Position:
    """A Position from a gnubg Position ID, gnubg ID or XGID (the side on roll in row 0)."""
    return position_and_state(text)[0]
