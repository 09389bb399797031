"""The bot side of gnubg's external-player protocol: one FIBS board line in, one answer out.

gnubg (`set player N external HOST:PORT`) sends a `board:` line for each decision of that
player and reads one line back: a play in gnubg notation when the dice are rolled (an empty
line when the roll cannot be played), `roll` (or `double`, when offer_doubles is on) before
rolling, and `take` or `drop` when doubled (the bot never beavers). Cube actions come from
engine.cube.equity (cubeful Janowski equity, money or match play from the board line's match length,
score, cube and may-double flags, Crawford from the did-Crawford flag) at the bot's ply; see
`cube_for`. Anything unreadable gets `Error: ...` back, which gnubg prints, and the bot keeps
serving.

Beavers (money play, offer_doubles): when gnubg beavers our double it sends our side a line
with the decision back on us (engine.formats.fibs.FibsBoard.beavered): the cube already at the
beavered value, owned by gnubg. gnubg reads `take` (the cube doubles once more and stays
with gnubg; we roll) or `drop` (we lose the beavered value) or `beaver`/`redouble` (a
raccoon). The bot answers as gnubg's own player does: it values the beaver as its own double
of the beavered cube and takes unless taking loses more than dropping (Double/Take below -1,
normalised). gnubg 1.07 then pauses: its external-player code (play.c, ComputerTurn) reports
"no progress" when a take leaves the turn with the external player, so a `play` command
resumes the game (a script sends `play` after each `new game`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from engine.cube.equity import CENTRE, ME_OWNS, OPP_OWNS, CubeInfo
from engine.cube.lookahead import cube_decision_at_ply
from engine.errors import TdgammonError
from engine.evaluator import Evaluator
from engine.formats.fibs import FibsBoard, parse_fibs_board
from engine.notation import format_play
from engine.search import best_play

MONEY_LENGTH = 9999
"""FIBS writes unlimited (money) sessions as match length 9999; 0 is read as money too."""


def _one_line(err: object, limit: int = 200) -> str:
    text = " ".join(str(err).split())
    return text if len(text) <= limit else text[:limit] + "..."


def cube_for(fb: FibsBoard, doubler_view: bool) -> CubeInfo:
    """The cube seen by the side that must act, or (doubler_view) by the side that doubled."""
    mine, theirs = fb.scores()
    money = fb.match_length <= 0 or fb.match_length >= MONEY_LENGTH
    if doubler_view:
        # The doubler had the cube: centred at 1, or its own.
        owner = CENTRE if fb.cube == 1 else ME_OWNS
        score = (0, 0) if money else (theirs, mine)
        return CubeInfo(value=fb.cube, owner=owner, match_length=0 if money else fb.match_length, score=score)
    owner = {-1: CENTRE, 0: ME_OWNS, 1: OPP_OWNS}[fb.cube_owner()]
    if money:
        return CubeInfo(value=fb.cube, owner=owner)
    n = fb.match_length
    crawford = (n - mine == 1 or n - theirs == 1) and not fb.did_crawford
    if crawford:
        return CubeInfo(match_length=n, score=(mine, theirs), crawford=True)
    return CubeInfo(value=fb.cube, owner=owner, match_length=n, score=(mine, theirs))


@dataclass
class ExternalBot:
    """Answers board lines with an evaluator at its ply (cube decisions up to 2-ply); counts what it did."""

    evaluator: Evaluator
    ply: int = 1
    offer_doubles: bool = False
    plays: int = 0
    errors: int = 0
    cube_answers: int = 0

    def respond(self, line: str) -> str:
        """The answer to one board line (without newline); never raises.

        Bad input gets `Error: <why>`; an unexpected failure (a bug) gets `Error: internal
        error ...` too, so one line can never stop the server. Both stay on one line.
        """
        try:
            return self._respond(line)
        except TdgammonError as err:
            self.errors += 1
            return "Error: " + _one_line(err)
        except Exception as err:  # noqa: BLE001 - the server must answer and keep serving
            self.errors += 1
            return f"Error: internal error ({type(err).__name__}: {_one_line(err)})"

    def _respond(self, line: str) -> str:
        fb = parse_fibs_board(line)
        board = fb.position_board()
        if fb.beavered:
            # Our double was beavered: our own double of the beavered cube, taken, is what accepting gives us.
            self.cube_answers += 1
            cube = replace(cube_for(fb, doubler_view=False), owner=ME_OWNS)
            return "drop" if self._cube_decision(board, cube).double_take < -1.0 else "take"
        if fb.doubled:
            # The doubler is on roll: its cube decision tells the taker's best answer.
            self.cube_answers += 1
            decision = self._cube_decision(board[::-1].copy(), cube_for(fb, doubler_view=True))
            return "drop" if decision.response == "pass" else decision.response
        d1, d2 = fb.dice()
        if d1 == 0:
            may = fb.player_may_double if fb.decider_is_player else fb.opponent_may_double
            if self.offer_doubles and may and self._cube_decision(board, cube_for(fb, doubler_view=False)).double:
                self.cube_answers += 1
                return "double"
            return "roll"
        self.plays += 1
        play = best_play(board, (d1, d2), self.evaluator, self.ply)
        if play is None:
            return ""
        return format_play(board, play.steps)

    def _cube_decision(self, board, cube: CubeInfo):
        """The cube decision of the side in row 0 of board, at the bot's ply."""
        return cube_decision_at_ply(board, self.evaluator, cube, self.ply)
