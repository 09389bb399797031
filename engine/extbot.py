"""The bot side of gnubg's external-player protocol: one FIBS board line in, one answer out.

gnubg (`set player N external HOST:PORT`) sends a `board:` line for each decision of that
player and reads one line back: a play in gnubg notation when the dice are rolled (an empty
line when the roll cannot be played), `roll` (never `double`: this bot plays cubeless) before
rolling, and `take` or `drop` when doubled. Cube rule, documented in the README: take when
the cubeless money equity of the doubled side, before the doubler's roll, is >= -0.5
(the cubeless take point; a real cube engine replaces this later). Anything unreadable gets
`Error: ...` back, which gnubg prints, and the bot keeps serving.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import TdgammonError
from engine.evaluator import Evaluator, equity
from engine.fibs import parse_fibs_board
from engine.notation import format_play
from engine.search import best_play, evaluate_position

TAKE_THRESHOLD = -0.5


@dataclass
class ExternalBot:
    """Answers board lines with an evaluator at 1 or 2 ply; counts what it did."""

    evaluator: Evaluator
    ply: int = 1
    plays: int = 0
    errors: int = 0
    cube_answers: int = 0

    def respond(self, line: str) -> str:
        """The answer to one board line (without newline); never raises on bad input."""
        try:
            return self._respond(line)
        except TdgammonError as err:
            self.errors += 1
            return f"Error: {err}"

    def _respond(self, line: str) -> str:
        fb = parse_fibs_board(line)
        board = fb.position_board()
        if fb.doubled:
            # The doubler is on roll: value the position from its side, then negate.
            self.cube_answers += 1
            mine = -float(equity(evaluate_position(board[::-1].copy(), self.evaluator, self.ply)))
            return "take" if mine >= TAKE_THRESHOLD else "drop"
        d1, d2 = fb.dice()
        if d1 == 0:
            return "roll"
        self.plays += 1
        play = best_play(board, (d1, d2), self.evaluator, self.ply)
        if play is None:
            return ""
        return format_play(board, play.steps)
