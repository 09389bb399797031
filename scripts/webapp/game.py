"""The authoritative state of one web game: seats, dice, steps, undo, results.

The server owns everything a client could cheat with: it rolls the dice (from the dice
source it is given: a cryptographic RNG in production), offers only the steps that
start some legal full play (scripts.webapp.rules), applies them, and decides the result.
Clients send intentions with their seat token; anything else is a GameError with an
HTTP status and a plain message, raised before any state changes.

The board is kept from White's view: row 0 = White, row 1 = Black, each row in its own
numbering (engine.position's layout); the mover's view is that array or its row swap.

A game "with cube" is money play with the doubling cube (centred at 1, Jacoby and
beavers off): before rolling, the side on turn that holds the cube (centred or its own)
may double; the game then waits in phase "doubled" (turn stays with the doubler) until
the opponent takes (the cube doubles and goes to the taker; the doubler rolls) or passes
(the doubler wins the cube's value before the double). Every result, resignation
included, is multiplied by the cube value. The computer's cube actions are engine.cube.equity's.

A match (scripts.webapp.match) is played with the cube, game after game in the same Game:
a game's end adds its points to the score and, until a side reaches the length, deals the
next game (phase "opening", the last game's final position shown until the opening roll). Undo move never crosses a game's end, and in a match it stops
at the opponent's roll. Resigning a gammon or backgammon needs the cube; against a friend
the offer waits in phase "resign" for their accept or refusal.

Hints (the engine's best plays) are on against the computer and in hot-seat; in a friend
game each seat may allow them, and Hint is on for both only while both allow it (either
may withdraw). The consents are part of the stored record and logged like moves.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from engine.cube.equity import CENTRE, ME_OWNS, OPP_OWNS, CubeInfo
from engine.errors import PositionIdError
from engine.notation import format_play
from engine.position import Position, game_result
from scripts.webapp.computer import ComputerPlayer
from scripts.webapp.match import Match
from scripts.webapp.rules import BAR, Step, TurnPlanner

WHITE, BLACK = 0, 1
COLORS = ("white", "black")
MODES = ("computer", "hotseat", "friend")
RESULT_NAMES = {1: "single game", 2: "gammon", 3: "backgammon"}


class GameError(Exception):
    """A refused request: HTTP status and a message for the player."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class CryptoDice:
    """Dice from the operating system's cryptographic RNG, drawn when asked (secrets.SystemRandom)."""

    def __init__(self) -> None:
        self._rng = secrets.SystemRandom()

    def die(self) -> int:
        return self._rng.randint(1, 6)


class SequenceDice:
    """Dice from a fixed list, then from a seeded generator: for tests only."""

    def __init__(self, values: list[int] | None = None, seed: int = 0) -> None:
        import random

        self.values = list(values or [])
        self._rng = random.Random(seed)

    def die(self) -> int:
        return self.values.pop(0) if self.values else self._rng.randint(1, 6)


def color_index(name: str) -> int:
    if name not in COLORS:
        raise GameError(400, f"colour must be 'white' or 'black', got {name!r}")
    return COLORS.index(name)


def step_label(step: Step) -> str:
    """A step as the mover reads it, e.g. '13 → 8 (5)', 'bar → 22 (3)', '6 → off (6)'."""
    src, dst = step.points()
    a = "bar" if src == 25 else str(src)
    b = "off" if dst == 0 else str(dst)
    return f"{a} → {b}{'*' if step.hit else ''} ({step.die})"


@dataclass
class Snapshot:
    """The state at the start of a human's turn, after the roll: what 'Undo move' returns to."""

    board: np.ndarray
    turn: int
    dice: tuple[int, int]
    log_len: int
    cube_value: int = 1
    cube_owner: int | None = None


@dataclass
class Seat:
    kind: str                      # "human" or "computer"
    token: str | None = None       # None: not yet joined (friend) or computer
    connections: int = 0           # live websockets holding this seat's token
    last_seen: float = field(default_factory=time.monotonic)


class Game:
    """One game; every public method takes the lock, checks, then changes state."""

    def __init__(self, game_id: str, mode: str, dice, computer: ComputerPlayer | None = None,
                 human: int = WHITE, disconnect_timeout: float = 120.0, cube: bool = False,
                 match_length: int = 0) -> None:
        if mode not in MODES:
            raise GameError(400, f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        if mode == "computer" and computer is None:
            raise GameError(400, "a game against the computer needs a computer player")
        self.id = game_id
        self.mode = mode
        self.dice_source = dice
        self.computer = computer
        self.level = computer.level if computer is not None and mode == "computer" else None
        self.disconnect_timeout = disconnect_timeout
        self.lock = threading.RLock()
        self.version = 0
        start = Position.start().board
        self.board = np.array(start, dtype=np.int8)
        self.turn: int | None = None
        self.phase = "opening"
        self.dice: tuple[int, int] | None = None
        self.planner: TurnPlanner | None = None
        self.taken: list[Step] = []
        self.log: list[dict] = []
        self.result: dict | None = None
        self.opening: tuple[int, int] | None = None
        self.history: list[Snapshot] = []
        self.rematch_id: str | None = None
        try:
            self.match = Match(match_length) if match_length else None
        except ValueError as err:
            raise GameError(400, str(err)) from None
        self.cube_enabled = bool(cube) or self.match is not None
        self.resign_offer: dict | None = None   # a friend's pending resignation: by, points, phase
        self.cube_value = 1
        self.cube_owner: int | None = None     # None: centred; else the seat that owns it
        self.swap_tokens: dict[str, str] = {}   # old game's token -> this rematch's token
        self.hint_consent = [False, False]      # friend games: each seat's "allow hints"
        self.host = human
        token = secrets.token_urlsafe(18)
        if mode == "computer":
            self.seats = [Seat("human", token), Seat("human", token)]
            self.seats[1 - human] = Seat("computer")
        elif mode == "hotseat":
            self.seats = [Seat("human", token), Seat("human", token)]
        else:
            self.seats = [Seat("human"), Seat("human")]
            self.seats[human].token = token
            self.phase = "waiting"
        self.creator_token = token
        self.on_change: Callable[[Game], None] | None = None

    # ----- who may act -------------------------------------------------------------

    def seats_of(self, token: str | None) -> list[int]:
        """The seats a token controls (both for a hot-seat token), or [] for anything else."""
        if not isinstance(token, str) or not token:
            return []
        given = token.encode("utf-8", "surrogatepass")  # compare_digest takes str only if it is ASCII
        return [s for s in (WHITE, BLACK)
                if self.seats[s].token is not None and secrets.compare_digest(self.seats[s].token.encode(), given)]

    def _require_token(self, token: str | None) -> list[int]:
        seats = self.seats_of(token)
        if not seats:
            raise GameError(403, "this seat token does not belong to this game (forged or stale)")
        return seats

    def _require_turn(self, token: str | None, phase: str | tuple[str, ...]) -> int:
        seats = self._require_token(token)
        phases = (phase,) if isinstance(phase, str) else phase
        if self.phase not in phases:
            raise GameError(409, self._phase_refusal())
        if self.turn not in seats:
            raise GameError(409, f"it is {COLORS[self.turn]}'s turn, not yours")
        return self.turn

    def _phase_refusal(self) -> str:
        return {
            "waiting": "the game has not started: waiting for the friend to join",
            "opening": "the opening roll has not been made yet",
            "roll": "the dice have not been rolled yet",
            "move": "the dice are rolled: move or confirm first",
            "over": "the game is over",
            "doubled": f"{COLORS[self.turn].capitalize() if self.turn is not None else ''} has doubled: "
                       "the double must be taken or passed first",
            "resign": "a resignation is offered: it must be accepted or refused first",
        }[self.phase]

    # ----- the cube ------------------------------------------------------------------

    def cube_info(self, side: int) -> CubeInfo:
        """The cube seen by `side` (money play, Jacoby and beavers off; or the match), for engine.cube.equity."""
        if self.match is not None:
            return self.match.cube_info(side, self.cube_value, self.cube_owner)
        if self.cube_owner is None:
            owner = CENTRE
        else:
            owner = ME_OWNS if self.cube_owner == side else OPP_OWNS
        return CubeInfo(value=self.cube_value, owner=owner)

    def _double_refusal(self, side: int) -> str | None:
        """Why `side` may not double now (None when it may): the rules, ownership aside from turn."""
        if not self.cube_enabled:
            return "this game is played without the cube"
        if self.phase == "move":
            return "you may double only before rolling the dice"
        if self.phase != "roll":
            return self._phase_refusal()
        if self.turn != side:
            return f"it is {COLORS[self.turn]}'s turn, not yours"
        if self.cube_owner is not None and self.cube_owner != side:
            return f"{COLORS[self.cube_owner].capitalize()} owns the cube: only its owner may redouble"
        if self.match is not None and self.match.crawford:
            return "no doubling in the Crawford game"
        if self.match is not None and self.cube_info(side).cube_dead_for_me():
            return f"the cube is dead: winning this game at {self.cube_value} already wins the match"
        if not self.cube_info(side).may_double():
            return f"the cube is at its maximum ({self.cube_value})"
        return None

    def double(self, token: str | None) -> None:
        """Offer the cube at twice its value, before rolling; the opponent must take or pass."""
        with self.lock:
            seats = self._require_token(token)
            if not self.cube_enabled:
                raise GameError(409, "this game is played without the cube")
            side = self.turn if self.turn in seats else seats[0]
            why = self._double_refusal(side)
            if why:
                raise GameError(409, why)
            self._offer_double(side)
            self._run_computer()
            self._changed()

    def _offer_double(self, side: int) -> None:
        self.phase = "doubled"
        self._log(side, None, "", f"{COLORS[side].capitalize()} doubles to {2 * self.cube_value}", cube="double")

    def _require_answer(self, token: str | None) -> int:
        """The seat that answers the pending double, if this token holds it."""
        seats = self._require_token(token)
        if self.phase != "doubled":
            why = "the game is over" if self.phase == "over" else "nobody has doubled"
            raise GameError(409, f"no double is pending: {why}")
        responder = 1 - self.turn
        if responder not in seats:
            raise GameError(409, f"you offered the double: {COLORS[responder].capitalize()} takes or passes")
        return responder

    def take(self, token: str | None) -> None:
        """Accept the pending double: the cube doubles and goes to the taker; the doubler rolls."""
        with self.lock:
            responder = self._require_answer(token)
            self._accept(responder)
            self._run_computer()
            self._changed()

    def drop(self, token: str | None) -> None:
        """Pass (drop) the pending double: the doubler wins the cube's value before the double."""
        with self.lock:
            responder = self._require_answer(token)
            self._decline(responder)
            self._changed()

    def _accept(self, responder: int) -> None:
        self.cube_value *= 2
        self.cube_owner = responder
        self.phase = "roll"
        self.history.clear()          # undo never crosses an accepted cube action
        name = COLORS[responder].capitalize()
        self._log(responder, None, "", f"{name} takes: the cube is at {self.cube_value}, {name} owns it", cube="take")

    def _decline(self, responder: int) -> None:
        winner = 1 - responder
        points = self.cube_value
        self._log(responder, None, "", f"{COLORS[responder].capitalize()} passes: "
                                      f"{COLORS[winner].capitalize()} wins {_points(points)}", cube="pass")
        self._end_game(winner, {"winner": COLORS[winner], "points": points, "kind": "double passed",
                                "resigned": False, "passed": True, "cube": self.cube_value})

    # ----- board views ---------------------------------------------------------------

    def mover_board(self, side: int) -> np.ndarray:
        return self.board if side == WHITE else self.board[::-1].copy()

    def _set_from_mover(self, side: int, mover_board: np.ndarray) -> None:
        self.board = np.array(mover_board if side == WHITE else mover_board[::-1], dtype=np.int8)

    def current_board(self) -> np.ndarray:
        """White-view board including the steps taken so far this turn."""
        if self.phase in ("move", "resign") and self.planner is not None and self.taken:
            after = self.planner.board_after(self.taken)
            return np.array(after if self.turn == WHITE else after[::-1], dtype=np.int8)
        return self.board

    # ----- actions -------------------------------------------------------------------

    def _roll_pair(self) -> tuple[int, int]:
        return self.dice_source.die(), self.dice_source.die()

    def join(self) -> tuple[int, str]:
        """A friend takes the free seat of a friend game: returns (seat, its new token)."""
        with self.lock:
            if self.mode != "friend":
                raise GameError(409, "only a friend game can be joined")
            free = [s for s in (WHITE, BLACK) if self.seats[s].token is None and self.seats[s].kind == "human"]
            if not free or self.phase != "waiting":
                raise GameError(409, "this game already has two players")
            seat = free[0]
            self.seats[seat].token = secrets.token_urlsafe(18)
            self.seats[seat].last_seen = time.monotonic()
            self.phase = "opening"
            self._log(None, None, "", f"{COLORS[seat].capitalize()} joined the game")
            self._changed()
            return seat, self.seats[seat].token

    def roll(self, token: str | None) -> None:
        with self.lock:
            seats = self._require_token(token)
            if self.phase == "opening":
                if self.match is not None:     # the last game's final position stayed until now
                    self.board = np.array(Position.start().board, dtype=np.int8)
                while True:
                    white, black = self._roll_pair()
                    if white != black:
                        break
                    self._log(None, (white, black), "", f"Opening roll: both threw {white}, again")
                self.opening = (white, black)
                starter = WHITE if white > black else BLACK
                self._log(None, (white, black), "",
                          f"Opening roll: White {white}, Black {black}: {COLORS[starter].capitalize()} moves first")
                dice = (white, black) if starter == WHITE else (black, white)
                self._begin_turn(starter, dice)
            else:
                if self.phase != "roll":
                    raise GameError(409, self._phase_refusal())
                if self.turn not in seats:
                    raise GameError(409, f"it is {COLORS[self.turn]}'s turn, not yours")
                self._begin_turn(self.turn, self._roll_pair())
            self._run_computer()
            self._changed()

    def _begin_turn(self, side: int, dice: tuple[int, int]) -> None:
        self.turn = side
        self.dice = dice
        self.taken = []
        self.planner = TurnPlanner(self.mover_board(side), *dice)
        self.phase = "move"
        if self.match is not None:
            self.history.clear()      # in a match, undo stops at the opponent's roll
        if self.seats[side].kind == "human" and self.planner.n_steps > 0:
            self.history.append(Snapshot(self.board.copy(), side, dice, len(self.log),
                                         self.cube_value, self.cube_owner))

    def step(self, token: str | None, src_point: int, dst_point: int, die: int | None = None) -> None:
        """Move one checker from src_point to dst_point (mover's numbering, 25 = bar, 0 = off)."""
        with self.lock:
            side = self._require_turn(token, "move")
            options = self.planner.options(self.taken)
            match = [s for s in options if s.points() == (src_point, dst_point)
                     and (die is None or s.die == die)]
            if not match:
                a = "bar" if src_point == 25 else str(src_point)
                b = "off" if dst_point == 0 else str(dst_point)
                dice = f"{self.dice[0]}-{self.dice[1]}"
                if not options:
                    why = "no more steps can be played: confirm the move"
                else:
                    why = f"not the start of any legal play with {dice}"
                raise GameError(422, f"illegal step {a} → {b}{'' if die is None else f' ({die})'}: {why}")
            # Bearing off with either die: use the smaller die, keeping the larger for later.
            self.taken.append(min(match, key=lambda s: s.die))
            del side
            self._changed()

    def undo_step(self, token: str | None) -> None:
        with self.lock:
            self._require_turn(token, "move")
            if not self.taken:
                raise GameError(409, "no step to undo")
            self.taken.pop()
            self._changed()

    def confirm(self, token: str | None) -> None:
        with self.lock:
            side = self._require_turn(token, "move")
            if not (self.planner.n_steps == 0 or self.planner.complete(self.taken)):
                left = self.planner.n_steps - len(self.taken)
                raise GameError(409, f"the move is not complete: {left} more step{'s' if left > 1 else ''} to play")
            self._finish_turn(side, [(s.src, s.dst) for s in self.taken],
                              self.planner.board_after(self.taken))
            self._run_computer()
            self._changed()

    def _finish_turn(self, side: int, steps: list[tuple[int, int]], after: np.ndarray) -> None:
        before = self.mover_board(side)
        text = format_play(before, steps) if steps else ""
        name = COLORS[side].capitalize()
        dice = f"{self.dice[0]}-{self.dice[1]}"
        line = f"{name} {dice}: {text}" if text else f"{name} {dice}: no legal play"
        self._log(side, self.dice, text, line, steps=[(a + 1, b + 1) for a, b in steps],
                  before=Position(self.board).id)
        self._set_from_mover(side, after)
        self.taken = []
        self.planner = None
        points = game_result(self.mover_board(side))
        if points:
            kind = RESULT_NAMES[abs(points)]
            total = abs(points) * self.cube_value
            cube = f" with the cube at {self.cube_value}" if self.cube_value > 1 else ""
            self._log(None, None, "", f"{name} wins a {kind}{cube} ({_points(total)})")
            self._end_game(side, {"winner": COLORS[side], "points": total, "kind": kind, "resigned": False,
                                  "passed": False, "cube": self.cube_value})
        else:
            self.turn = 1 - side
            self.phase = "roll"
            self.dice = None

    def _end_game(self, winner: int, result: dict) -> None:
        """A game is over: the end of a single game, or in a match its points added to the score
        and, unless the match is won, the next game dealt (centred cube, opening roll)."""
        self.planner, self.taken, self.resign_offer = None, [], None
        self.history.clear()          # undo never crosses the end of a game
        if self.match is None or self.match.add_result(result, winner):
            if self.match is not None:
                result = {**result, "match_winner": COLORS[winner], "score": list(self.match.score)}
                self._log(None, None, "", f"{COLORS[winner].capitalize()} wins the match "
                                          f"{self.match.score[winner]}-{self.match.score[1 - winner]}")
            self.phase, self.result = "over", result
            return
        self._log(None, None, "", f"Score: {self.match.score_text()}")
        self.turn, self.dice, self.opening = None, None, None
        self.cube_value, self.cube_owner = 1, None
        self.phase = "opening"
        self._log(None, None, "", f"Game {self.match.game_number}"
                                  + (" (Crawford game: no doubling)" if self.match.crawford else ""))

    def _run_computer(self) -> None:
        """Let a computer seat answer doubles, double, roll and play until a human has to act."""
        while True:
            if self.phase == "doubled":
                doubler = self.turn
                if self.seats[1 - doubler].kind != "computer":
                    return
                if self.computer.accepts(self.mover_board(doubler), self.cube_info(doubler)):
                    self._accept(1 - doubler)
                else:
                    self._decline(1 - doubler)
                continue
            if self.phase not in ("roll", "move") or self.seats[self.turn].kind != "computer":
                return
            side = self.turn
            if self.phase == "roll":
                if (self._double_refusal(side) is None
                        and self.computer.should_double(self.mover_board(side), self.cube_info(side))):
                    self._offer_double(side)
                    continue
                self._begin_turn(side, self._roll_pair())
            self.taken = []
            choice = self.computer.choose(self.mover_board(side), *self.dice)
            if choice is None:
                self._finish_turn(side, [], self.mover_board(side))
            else:
                steps = [(int(a), int(b)) for a, b in choice.steps if a >= 0]
                self._finish_turn(side, steps, choice.afterstate)

    def undo_refusal(self) -> str | None:
        """Why 'Undo move' is refused now (None when allowed): never in a friend game, never
        across the end of the game or an accepted cube action, never between roll and confirm."""
        if self.mode == "friend":
            return "undo move is not available in a game against a friend"
        if self.phase == "over":
            return "the game is over: a finished game cannot be taken back"
        if self.phase == "doubled":
            return "a double is pending: it must be taken or passed first"
        if self.phase in ("opening", "resign"):
            return self._phase_refusal()
        if self.phase != "roll":
            return "undo move is not available between the roll and the confirm: use undo step"
        if not self.history:
            return "there is no move to undo (undo stops at an accepted double and at the opponent's roll in a match)"
        return None

    def undo_move(self, token: str | None) -> None:
        """Back to the start of the last human move, dice kept (vs computer and hot-seat).

        The taken-back lines stay in the log, marked undone, followed by a takeback line,
        so the game record shows every takeback."""
        with self.lock:
            self._require_token(token)
            why = self.undo_refusal()
            if why:
                raise GameError(409, why)
            snap = self.history.pop()
            self.board = snap.board.copy()
            self.cube_value, self.cube_owner = snap.cube_value, snap.cube_owner
            self.turn = snap.turn
            self.dice = snap.dice
            self.planner = TurnPlanner(self.mover_board(snap.turn), *snap.dice)
            self.taken = []
            self.phase = "move"
            undone = [e for e in self.log[snap.log_len:] if not e.get("undone")]
            for entry in undone:
                entry["undone"] = True
            plays = "; ".join(e["text"] for e in undone if e.get("dice") and e.get("side"))
            name = COLORS[snap.turn].capitalize()
            self._log(snap.turn, None, "", f"{name} takes back the move ({plays}); "
                                            f"the dice {snap.dice[0]}-{snap.dice[1]} are kept", takeback=True)
            # The replayed turn may be taken back again: its start, after the takeback line.
            self.history.append(Snapshot(snap.board.copy(), snap.turn, snap.dice, len(self.log),
                                         snap.cube_value, snap.cube_owner))
            self._changed()

    def resign(self, token: str | None, points: int = 1) -> None:
        """Offer to resign a single game, a gammon or a backgammon (points 1-3, times the cube).

        Without the cube a resignation is a single game (the page's rule). Against the
        computer the offer is accepted or refused from its evaluation; a refusal is logged
        and the game goes on. With the cube (or in a match) a friend accepts or refuses in
        their page (phase "resign" meanwhile); in hot-seat the players sit together, and
        without the cube a single game is all there is to offer: the offer ends the game."""
        with self.lock:
            seats = self._require_token(token)
            if self.phase in ("over", "waiting", "resign"):
                raise GameError(409, self._phase_refusal())
            if points not in RESULT_NAMES:
                raise GameError(400, f"a resignation is of 1, 2 or 3 points (single, gammon, backgammon), got {points}")
            if points > 1 and not self.cube_enabled:
                raise GameError(409, "without the cube a resignation counts as a single game")
            acting = 1 - self.turn if self.phase == "doubled" else self.turn
            loser = acting if acting in seats else seats[0]
            if self.turn is None and len(seats) == 2:
                loser = WHITE
            winner = 1 - loser
            kind = RESULT_NAMES[points]
            offer = f"{COLORS[loser].capitalize()} offers to resign a {kind} ({_points(points * self.cube_value)})"
            if self.seats[winner].kind == "computer" and self.turn is not None:
                on_roll = self.turn
                board = self.mover_board(on_roll)
                if not self.computer.accepts_resignation(board, on_roll == winner, points, self.cube_info(winner)):
                    self._log(None, None, "", f"{COLORS[winner].capitalize()} refuses the resignation of a "
                                             f"{kind}: play on")
                    self._changed()
                    return
            elif self.mode == "friend" and self.cube_enabled:
                self.resign_offer = {"by": loser, "points": points, "phase": self.phase}
                self.phase = "resign"
                self._log(loser, None, "", f"{offer}: {COLORS[winner].capitalize()} to accept or refuse")
                self._changed()
                return
            self._resigned(loser, points)
            self._changed()

    def _resigned(self, loser: int, points: int) -> None:
        winner = 1 - loser
        kind = RESULT_NAMES[points]
        total = points * self.cube_value
        self._log(None, None, "", f"{COLORS[loser].capitalize()} resigns a {kind}: "
                                 f"{COLORS[winner].capitalize()} wins {_points(total)}")
        self._end_game(winner, {"winner": COLORS[winner], "points": total, "kind": kind, "resigned": True,
                                "passed": False, "cube": self.cube_value})

    def accept_resignation(self, token: str | None) -> None:
        self.answer_resignation(token, True)

    def refuse_resignation(self, token: str | None) -> None:
        self.answer_resignation(token, False)

    def answer_resignation(self, token: str | None, accept: bool) -> None:
        """The friend offered a resignation answers it: accept (the game ends for the points
        offered) or refuse (play goes on where it stopped)."""
        with self.lock:
            seats = self._require_token(token)
            offer = self.resign_offer
            if self.phase != "resign" or offer is None:
                raise GameError(409, "no resignation is offered")
            if 1 - offer["by"] not in seats:
                raise GameError(409, "you offered the resignation: your opponent accepts or refuses it")
            self.resign_offer = None
            if accept:
                self._resigned(offer["by"], offer["points"])
            else:
                self.phase = offer["phase"]
                self._log(1 - offer["by"], None, "", f"{COLORS[1 - offer['by']].capitalize()} refuses the "
                                                     f"resignation of a {RESULT_NAMES[offer['points']]}: play on")
            self._changed()

    def hints_on(self) -> bool:
        """Whether Hint may be used: always outside friend games, in one only while both seats allow it."""
        return self.mode != "friend" or all(self.hint_consent)

    def allow_hints(self, token: str | None, allow: bool) -> None:
        """A friend-game seat allows hints in this game (or withdraws): Hint is on for both
        players only while both allow it. Logged, so both pages announce it."""
        with self.lock:
            seats = self._require_token(token)
            if self.mode != "friend":
                raise GameError(409, "hints need no agreement here: they are on against the computer and in hot-seat")
            if self.phase == "over":
                raise GameError(409, self._phase_refusal())
            seat = seats[0]
            if self.hint_consent[seat] == bool(allow):
                return                    # already so (a second tab, a repeated request): nothing changes
            was_on = self.hints_on()
            self.hint_consent[seat] = bool(allow)
            name, other = COLORS[seat].capitalize(), COLORS[1 - seat].capitalize()
            if allow:
                text = (f"{name} allows hints: both agree, Hint is on for both players" if self.hints_on()
                        else f"{name} allows hints: Hint is on once {other} allows them too")
            else:
                text = f"{name} no longer allows hints" + (": Hint is off for both players" if was_on else "")
            self._log(seat, None, "", text, hints="allow" if allow else "withdraw")
            self._changed()

    def hint_request(self, token: str | None) -> tuple[np.ndarray, tuple[int, int], int, CubeInfo | None]:
        """The mover's board at the start of this turn, the dice, the ply for a hint (the
        computer's level's ply; 1 in hot-seat) and, in a match, the cube and score from the
        mover's view (None in money play). Refused off one's own move, and in a friend game
        unless both players allow hints."""
        with self.lock:
            side = self._require_turn(token, "move")
            if not self.hints_on():
                raise GameError(409, "hints are off in a game against a friend unless both players allow them")
            ply = self.computer.ply if self.computer is not None else 1
            cube = self.cube_info(side) if self.match is not None else None
            return self.planner.start.copy(), self.dice, ply, cube

    def set_rematch(self, game_id: str) -> None:
        """Point the finished game at its sequel, so the other seat's page follows it."""
        with self.lock:
            self.rematch_id = game_id
            self._changed()

    def opponent_absent_for(self, seat: int) -> float:
        """Seconds the other seat has had no live connection (0 while connected)."""
        other = self.seats[1 - seat]
        if other.connections > 0:
            return 0.0
        return time.monotonic() - other.last_seen

    def take_over(self, token: str | None, computer: ComputerPlayer) -> None:
        """The host continues against the computer after the friend was away for the timeout."""
        with self.lock:
            seats = self._require_token(token)
            if self.mode != "friend":
                raise GameError(409, "only a friend game can be continued against the computer")
            if self.phase in ("over", "waiting"):
                raise GameError(409, self._phase_refusal())
            seat = seats[0]
            if seat != self.host:
                raise GameError(403, "only the host may continue against the computer")
            away = self.opponent_absent_for(seat)
            if away < self.disconnect_timeout:
                raise GameError(409, f"the opponent is not disconnected long enough "
                                     f"({away:.0f} of {self.disconnect_timeout:.0f} s)")
            other = 1 - seat
            if self.phase == "resign":
                self.phase, self.resign_offer = self.resign_offer["phase"], None
            self.seats[other] = Seat("computer")
            self.mode = "computer"
            self.computer = computer
            self.level = computer.level
            self._log(None, None, "", f"{COLORS[other].capitalize()} left; the computer plays on")
            if self.turn == other and self.phase == "move":
                self.taken = []
            self._run_computer()
            self._changed()

    def connect(self, token: str | None, delta: int) -> None:
        """Count a websocket opening (+1) or closing (-1) for the token's seat."""
        with self.lock:
            for seat in self.seats_of(token):
                self.seats[seat].connections = max(0, self.seats[seat].connections + delta)
                self.seats[seat].last_seen = time.monotonic()
            self._changed(persist=False)

    # ----- the stored record -----------------------------------------------------------

    def to_record(self) -> dict:
        """Everything needed to bring the game back after a restart, as plain JSON types.

        Not kept: websocket counts (live only) and the dice source, the computer's random
        stream and the planner, which are rebuilt (the dice stay unknowable until rolled)."""
        return {
            "id": self.id, "mode": self.mode, "level": self.level, "version": self.version,
            "board": self.board.tolist(), "turn": self.turn, "phase": self.phase,
            "dice": list(self.dice) if self.dice else None,
            "taken": [[s.src, s.dst, s.die, s.hit] for s in self.taken],
            "log": self.log, "result": self.result,
            "opening": list(self.opening) if self.opening else None,
            "history": [{"board": h.board.tolist(), "turn": h.turn, "dice": list(h.dice), "log_len": h.log_len,
                         "cube_value": h.cube_value, "cube_owner": h.cube_owner} for h in self.history],
            "rematch_id": self.rematch_id, "cube_enabled": self.cube_enabled, "cube_value": self.cube_value,
            "cube_owner": self.cube_owner, "swap_tokens": self.swap_tokens, "host": self.host,
            "seats": [{"kind": seat.kind, "token": seat.token} for seat in self.seats],
            "creator_token": self.creator_token,
            "match": self.match.to_json() if self.match is not None else None,
            "resign_offer": self.resign_offer,
            "hint_consent": list(self.hint_consent),
        }

    @classmethod
    def from_record(cls, record: dict, dice, computer: ComputerPlayer | None,
                    disconnect_timeout: float = 120.0) -> Game:
        """The game `to_record` described, with a fresh dice source and computer."""
        game = cls.__new__(cls)
        game.id, game.mode, game.level = record["id"], record["mode"], record["level"]
        game.dice_source, game.computer = dice, computer
        game.disconnect_timeout = disconnect_timeout
        game.lock = threading.RLock()
        game.version = record["version"]
        game.board = np.array(record["board"], dtype=np.int8)
        game.turn, game.phase = record["turn"], record["phase"]
        game.dice = tuple(record["dice"]) if record["dice"] else None
        game.taken = [Step(*t) for t in record["taken"]]
        game.planner = TurnPlanner(game.mover_board(game.turn), *game.dice) if game.phase == "move" else None
        game.log, game.result = record["log"], record["result"]
        game.opening = tuple(record["opening"]) if record["opening"] else None
        game.history = [Snapshot(np.array(h["board"], dtype=np.int8), h["turn"], tuple(h["dice"]), h["log_len"],
                                 h["cube_value"], h["cube_owner"]) for h in record["history"]]
        game.rematch_id = record["rematch_id"]
        game.cube_enabled, game.cube_value = record["cube_enabled"], record["cube_value"]
        game.cube_owner = record["cube_owner"]
        game.swap_tokens, game.host = record["swap_tokens"], record["host"]
        game.seats = [Seat(s["kind"], s["token"]) for s in record["seats"]]
        game.creator_token = record["creator_token"]
        game.match = Match.from_json(record.get("match"))
        game.resign_offer = record.get("resign_offer")
        game.hint_consent = [bool(c) for c in record.get("hint_consent", [False, False])]
        game.on_change = None
        return game

    # ----- bookkeeping ---------------------------------------------------------------

    def _log(self, side: int | None, dice, move: str, text: str, cube: str | None = None,
             steps: list[tuple[int, int]] | None = None, takeback: bool = False, before: str | None = None,
             hints: str | None = None) -> None:
        """One log line; `cube` names a cube action ("double", "take", "pass") for the live region,
        `steps` a turn's (from, to) in the mover's numbering (25 = bar, 0 = off), for the
        last-move marks, and `before` the White-view Position ID it was played from, for its
        replay, `hints` a friend's "allow" or "withdraw" of hints; taken-back lines stay, with
        "undone" set."""
        entry = {"side": None if side is None else COLORS[side],
                 "dice": list(dice) if dice else None, "move": move, "text": text, "cube": cube,
                 "steps": [[a, b] for a, b in steps] if steps is not None else None,
                 "takeback": takeback, "undone": False}
        if before:
            entry["before"] = before
        if hints:
            entry["hints"] = hints
        if self.match is not None:
            entry["game"] = self.match.game_number    # which game of the match, for its .mat
        self.log.append(entry)

    def _changed(self, persist: bool = True) -> None:
        """A new version; `on_change` (the store's save, set by the hub) commits it before
        the request that made it is answered. Presence changes are not stored."""
        self.version += 1
        if persist and self.on_change is not None:
            self.on_change(self)

    def message(self, you: list[int] | None = None) -> str:
        """What the game waits for, as the viewer holding the seats `you` reads it."""
        if self.phase == "waiting":
            if you:
                return "Waiting for your friend to open the link and join"
            free = next(s for s in (WHITE, BLACK) if self.seats[s].token is None)
            return f"You are invited to a game of backgammon: press Join to play {COLORS[free].capitalize()}"
        if self.phase == "opening":
            if self.match is not None and self.match.results:
                return f"{self.match.score_text()}. Game {self.match.game_number}: roll to decide who moves first"
            return "Roll to decide who moves first"
        if self.phase == "resign":
            offer = self.resign_offer
            kind = RESULT_NAMES[offer["points"]]
            return (f"{COLORS[offer['by']].capitalize()} offers to resign a {kind} "
                    f"({_points(offer['points'] * self.cube_value)}): "
                    f"{COLORS[1 - offer['by']].capitalize()} to accept or refuse")
        if self.phase == "over":
            r = self.result
            if r.get("match_winner"):
                a, b = r["score"]
                return (f"{r['match_winner'].capitalize()} wins the match {max(a, b)}-{min(a, b)} "
                        f"(the last game: {r['kind']}, {_points(r['points'])})")
            if r["resigned"]:
                how = " by resignation"
            elif r["passed"]:
                loser = "Black" if r["winner"] == "white" else "White"
                how = f": {loser} passed the double"
            else:
                how = f" a {r['kind']}" + (f" with the cube at {r['cube']}" if r["cube"] > 1 else "")
            return f"{r['winner'].capitalize()} wins{how}: {_points(r['points'])}"
        name = COLORS[self.turn].capitalize()
        if self.phase == "doubled":
            return (f"{name} doubles to {2 * self.cube_value}: "
                    f"{COLORS[1 - self.turn].capitalize()} to take or pass")
        if self.phase == "roll":
            return f"{name} to roll" + (" or double" if self._double_refusal(self.turn) is None else "")
        dice = f"{self.dice[0]}-{self.dice[1]}"
        if self.planner.n_steps == 0:
            return f"{name} rolled {dice}: no legal play. Confirm to pass the turn"
        left = self.planner.n_steps - len(self.taken)
        if left == 0:
            return f"{name} rolled {dice}: confirm the move or undo a step"
        return f"{name} rolled {dice}: {left} step{'s' if left > 1 else ''} to play"

    def _match_json(self) -> dict | None:
        """The match as the page shows it: length, score, game number, Crawford state."""
        m = self.match
        if m is None:
            return None
        return {"length": m.length, "score": {"white": m.score[0], "black": m.score[1]},
                "game": m.game_number if self.phase != "over" else len(m.results),
                "crawford": m.crawford, "post_crawford": m.post_crawford,
                "winner": None if m.winner is None else COLORS[m.winner], "text": m.score_text(),
                "results": [{"winner": r["winner"], "points": r["points"], "kind": r["kind"]} for r in m.results]}

    def last_move(self) -> dict | None:
        """The last turn played and not taken back: side, dice and (from, to) steps in the
        mover's numbering, for the board's last-move marks, and the board it was played from
        (None in games stored without it), for its replay. In a match, of the game whose board
        is shown (between games, the last game's final position stays until the opening roll)."""
        shown = self.match.game_number - (self.phase == "opening") if self.match is not None else 1
        for entry in reversed(self.log):
            if entry.get("steps") is not None and not entry.get("undone") and entry.get("game", 1) == shown:
                return {"side": entry["side"], "dice": entry["dice"], "steps": entry["steps"], "move": entry["move"],
                        "before": _replay_board(entry.get("before"))}
        return None

    def state(self, token: str | None = None) -> dict:
        """The JSON view of the game for a client holding `token` (or a spectator)."""
        with self.lock:
            you = self.seats_of(token)
            board = self.current_board()
            points = [int(board[WHITE, p - 1]) - int(board[BLACK, 24 - p]) for p in range(1, 25)]
            pos = Position(board)
            pips = pos.pips()
            off = pos.off()
            acting = self.turn in you and self.phase == "move"
            options = self.planner.options(self.taken) if self.phase == "move" else []
            steps_left = list(self.planner.dice) if self.phase == "move" else []
            for s in self.taken if self.phase == "move" else []:
                steps_left.remove(s.die)
            complete = self.phase == "move" and (self.planner.n_steps == 0 or self.planner.complete(self.taken))
            if self.phase == "move" and complete:
                steps_left = []
            on_roll = self.turn if self.turn is not None else WHITE
            doubled = self.phase == "doubled"
            answering = doubled and (1 - self.turn) in you
            mover_pos = pos if on_roll == WHITE else pos.swap()
            return {
                "game_id": self.id,
                "version": self.version,
                "mode": self.mode,
                "level": self.level,
                "phase": self.phase,
                "turn": None if self.turn is None else COLORS[self.turn],
                "you": [COLORS[s] for s in you],
                "host": COLORS[self.host],
                "seats": {COLORS[s]: {"kind": self.seats[s].kind,
                                      "joined": self.seats[s].kind == "computer" or self.seats[s].token is not None,
                                      "connected": self.seats[s].connections > 0}
                          for s in (WHITE, BLACK)},
                "board": {"points": points,
                          "bar": {"white": int(board[WHITE, BAR]), "black": int(board[BLACK, BAR])},
                          "off": {"white": off[0], "black": off[1]}},
                "position_id": mover_pos.id,
                "pips": {"white": pips[0], "black": pips[1]},
                "dice": list(self.dice) if self.dice else None,
                "dice_left": steps_left,
                "opening": list(self.opening) if self.opening else None,
                "steps_taken": [_step_json(s) for s in self.taken],
                "legal_steps": [_step_json(s) for s in options] if acting else [],
                "can_roll": self.phase in ("opening", "roll") and bool(you)
                            and (self.phase == "opening" or self.turn in you),
                "can_confirm": acting and complete,
                "can_undo_step": acting and bool(self.taken),
                "can_undo_move": bool(you) and self.undo_refusal() is None,
                "cube": {"enabled": self.cube_enabled, "value": self.cube_value,
                         "owner": None if self.cube_owner is None else COLORS[self.cube_owner],
                         "offered_by": COLORS[self.turn] if doubled else None,
                         "offered_value": 2 * self.cube_value if doubled else None},
                "can_double": self.turn in you and self._double_refusal(self.turn) is None,
                "can_take": answering,
                "can_pass": answering,
                "can_resign": bool(you) and self.phase not in ("over", "waiting", "resign"),
                "resign_offer": None if self.resign_offer is None else {
                    "by": COLORS[self.resign_offer["by"]], "points": self.resign_offer["points"],
                    "value": self.resign_offer["points"] * self.cube_value},
                "can_answer_resign": self.phase == "resign" and (1 - self.resign_offer["by"]) in you,
                "match": self._match_json(),
                "can_hint": acting and self.hints_on() and self.planner.n_steps > 0,
                "hints": {"on": self.hints_on(),
                          "consent": ({COLORS[s]: self.hint_consent[s] for s in (WHITE, BLACK)}
                                      if self.mode == "friend" else None)},
                "can_consent_hints": self.mode == "friend" and bool(you) and self.phase != "over",
                "can_take_over": (self.mode == "friend" and self.host in you and self.phase not in ("over", "waiting")
                                  and self.opponent_absent_for(self.host) >= self.disconnect_timeout),
                "message": self.message(you),
                "last_move": self.last_move(),
                "log": list(self.log),
                "result": self.result,
                "rematch_id": self.rematch_id,
            }


def _points(n: int) -> str:
    return f"{n} point{'s' if n != 1 else ''}"


def _replay_board(position_id: str | None) -> dict | None:
    """The board a logged move was played from, or None (an old record, or a board set up
    outside the rules that a Position ID cannot hold)."""
    if position_id is None:
        return None
    try:
        return board_json(Position.from_id(position_id).board)
    except PositionIdError:
        return None


def board_json(board: np.ndarray) -> dict:
    """A White-view board as the page draws it: White's points 1..24 (+ White, - Black), bars, trays."""
    points = [int(board[WHITE, p - 1]) - int(board[BLACK, 24 - p]) for p in range(1, 25)]
    off = Position(board).off()
    return {"points": points, "bar": {"white": int(board[WHITE, BAR]), "black": int(board[BLACK, BAR])},
            "off": {"white": off[0], "black": off[1]}}


def _step_json(step: Step) -> dict:
    src, dst = step.points()
    return {"from": src, "to": dst, "die": step.die, "hit": step.hit, "label": step_label(step)}
