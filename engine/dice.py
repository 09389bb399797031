"""Dice: parsing a roll typed by a user, rolling with an injected generator, the 21 rolls.

Randomness is always passed in (a numpy Generator), so a seed reproduces a game.
"""

from __future__ import annotations

import re

import numpy as np

from engine.errors import DiceError

# The 21 distinct rolls with their weight out of 36: doubles once, the others twice
# (3-1 and 1-3 are the same roll). Larger die first, as gnubg writes them.
ALL_ROLLS: tuple[tuple[int, int, int], ...] = tuple(
    (d1, d2, 1 if d1 == d2 else 2) for d1 in range(1, 7) for d2 in range(1, d1 + 1)
)
"""(die 1, die 2, weight) for each distinct roll; the weights sum to 36."""

_DICE_RE = re.compile(r"^\s*(\d)\s*[-\s,]?\s*(\d)\s*$")


def parse_dice(text: str) -> tuple[int, int]:
    """Parse `31`, `3-1`, `3 1` (or `3,1`) into (3, 1); raise DiceError on anything else.

    The order is kept as typed: it matters to nobody but the user, and the rules core
    plays both orders anyway.
    """
    if not isinstance(text, str):
        raise DiceError(f"dice must be text like 31 or 3-1, got {text!r}")
    match = _DICE_RE.match(text)
    if match is None:
        raise DiceError(f"dice must be two digits 1-6 like 31, 3-1 or '3 1', got {text!r}")
    d1, d2 = int(match.group(1)), int(match.group(2))
    for die in (d1, d2):
        if not 1 <= die <= 6:
            raise DiceError(f"a die must be 1..6, got {die} in {text!r}")
    return d1, d2


def check_dice(d1: int, d2: int) -> tuple[int, int]:
    """Validate two dice given as numbers (e.g. from JSON); return them as plain ints."""
    for die in (d1, d2):
        if isinstance(die, bool) or not isinstance(die, (int, np.integer)) or not 1 <= die <= 6:
            raise DiceError(f"a die must be an integer 1..6, got {die!r}")
    return int(d1), int(d2)


def roll(rng: np.random.Generator) -> tuple[int, int]:
    """Two independent fair dice from the given generator."""
    d1, d2 = rng.integers(1, 7, size=2)
    return int(d1), int(d2)


def opening_roll(rng: np.random.Generator) -> tuple[tuple[int, int], int]:
    """Each side throws one die, ties are re-thrown; the higher die moves first with both.

    Returns ((die of side 0, die of side 1), starter) where starter is 0 or 1: the side
    whose die was higher. The starter plays the roll (its die, the other die).
    """
    while True:
        d0, d1 = (int(d) for d in rng.integers(1, 7, size=2))
        if d0 != d1:
            return (d0, d1), (0 if d0 > d1 else 1)
