"""Step-by-step play on top of the full-play generator, for a client that moves one die at a time.

engine.movegen.generate returns every legal *full* play (afterstates). A person moves one
checker one die at a time, so the server offers exactly the single steps that are the
start of some legal full play: a step is offered when, after it, one of the legal
afterstates can still be reached with the dice left. That keeps the both-dice and the
larger-die rules without restating them.

Boards here are mover-view int8 (2, 25) arrays as in engine.position; a step is
(source index, destination index, die) with source 24 = bar and destination -1 = off.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.movegen import generate

BAR = 24
OFF = -1


@dataclass(frozen=True)
class Step:
    """One checker moved by one die, in mover-view indices."""

    src: int
    dst: int
    die: int
    hit: bool = False

    def points(self) -> tuple[int, int]:
        """(from, to) as the mover's point numbers: 25 = bar, 0 = off."""
        return self.src + 1, self.dst + 1


def single_step_legal(board: np.ndarray, src: int, die: int) -> bool:
    """May the mover's checker at index src move die pips (ignoring the full-play rules)?"""
    if board[0, src] <= 0:
        return False
    if board[0, BAR] > 0 and src != BAR:
        return False
    dest = src - die
    if dest >= 0:
        return bool(board[1, 23 - dest] < 2)
    occupied = np.nonzero(board[0])[0]
    back = int(occupied.max())
    return back <= 5 and (src == back or dest == -1)


def apply_step(board: np.ndarray, src: int, die: int) -> tuple[np.ndarray, Step]:
    """The board after one legal step, and the step (with its hit flag)."""
    out = board.copy()
    out[0, src] -= 1
    dest = src - die
    hit = False
    if dest < 0:
        dest = OFF
    else:
        if out[1, 23 - dest] == 1:
            out[1, 23 - dest] = 0
            out[1, BAR] += 1
            hit = True
        out[0, dest] += 1
    return out, Step(src, dest, die, hit)


def dice_list(d1: int, d2: int) -> tuple[int, ...]:
    """The dice to play: four of a kind for doubles."""
    return (d1,) * 4 if d1 == d2 else tuple(sorted((d1, d2), reverse=True))


class TurnPlanner:
    """The legal full plays of one roll, and the single steps that lead into them."""

    def __init__(self, board: np.ndarray, d1: int, d2: int) -> None:
        self.start = np.array(board, dtype=np.int8)
        self.dice = dice_list(d1, d2)
        afterstates, steps = generate(self.start, d1, d2)
        self.afterstates = afterstates
        self.targets = {a.tobytes() for a in afterstates}
        # Every kept play uses the same number of dice (the most that can be played).
        self.n_steps = int((steps[0, :, 0] >= 0).sum()) if len(afterstates) else 0
        self._memo: dict[tuple[bytes, tuple[int, ...]], bool] = {}

    def _remaining(self, taken: list[Step]) -> tuple[int, ...]:
        left = list(self.dice)
        for step in taken:
            left.remove(step.die)
        return tuple(left)

    def _reaches(self, board: np.ndarray, left: tuple[int, ...], need: int) -> bool:
        """Can `need` more steps with the dice `left` end on a legal afterstate?"""
        if need == 0:
            return board.tobytes() in self.targets
        key = (board.tobytes(), left)
        if key in self._memo:
            return self._memo[key]
        found = False
        for die in sorted(set(left)):
            rest = list(left)
            rest.remove(die)
            for src in range(25):
                if single_step_legal(board, src, die):
                    after, _ = apply_step(board, src, die)
                    if self._reaches(after, tuple(rest), need - 1):
                        found = True
                        break
            if found:
                break
        self._memo[key] = found
        return found

    def board_after(self, taken: list[Step]) -> np.ndarray:
        board = self.start
        for step in taken:
            board, _ = apply_step(board, step.src, step.die)
        return board

    def options(self, taken: list[Step]) -> list[Step]:
        """The steps that may come next after `taken` (empty once the play is complete)."""
        need = self.n_steps - len(taken)
        if need <= 0:
            return []
        board = self.board_after(taken)
        left = self._remaining(taken)
        out = []
        for die in sorted(set(left)):
            rest = list(left)
            rest.remove(die)
            for src in range(24, -1, -1):
                if single_step_legal(board, src, die):
                    after, step = apply_step(board, src, die)
                    if self._reaches(after, tuple(rest), need - 1):
                        out.append(step)
        return out

    def complete(self, taken: list[Step]) -> bool:
        return len(taken) == self.n_steps and self.board_after(taken).tobytes() in self.targets
