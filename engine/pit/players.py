"""What a user may name as a player or an evaluator: the one parser of those specs.

Torch-free, so pit can check both players before any network loads; models/loader.py
builds evaluators from the EvaluatorSpec parsed here.

- Evaluator: `pubeval`, `random[:SEED]` (seed 0 by default), or a checkpoint path.
- Player: an evaluator with an optional `@PLY` (1 to MAX_PLY), or `gnubg[:PLIES]` (a real
  gnubg process at its own plies, 0..4, default 0).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import TdgammonError
from engine.search import MAX_PLY

GNUBG_MAX_PLIES = 4


@dataclass(frozen=True)
class EvaluatorSpec:
    """`kind` is 'pubeval', 'random' (with its seed) or 'model' (path None: the default model)."""

    kind: str
    seed: int = 0
    path: str | None = None


def parse_evaluator_spec(text: str | None) -> EvaluatorSpec:
    """`pubeval`, `random`, `random:SEED`, or else a checkpoint path (None or '': the default model)."""
    if not text:
        return EvaluatorSpec("model")
    name, sep, arg = text.partition(":")
    if name == "pubeval":
        if sep:
            raise TdgammonError(f"pubeval takes no argument, got 'pubeval:{arg}'")
        return EvaluatorSpec("pubeval")
    if name == "random":
        if not sep:
            return EvaluatorSpec("random")
        try:
            seed = int(arg)
        except ValueError:
            raise TdgammonError(f"random takes an integer seed (random:SEED), got 'random:{arg}'") from None
        if seed < 0:
            raise TdgammonError(f"random seed must be >= 0, got {seed}")
        return EvaluatorSpec("random", seed=seed)
    return EvaluatorSpec("model", path=text)


@dataclass(frozen=True)
class PlayerSpec:
    """`kind` is 'evaluator' (evaluator_spec, searched at `ply`) or 'gnubg' (`ply` = gnubg's plies)."""

    text: str
    kind: str
    evaluator_spec: str
    ply: int

    @property
    def label(self) -> str:
        return self.text


def parse_player_spec(text: str, default_ply: int = 1) -> PlayerSpec:
    """`MODEL|pubeval|random[:SEED]` with optional `@PLY` (1 to MAX_PLY), or `gnubg[:PLIES]` (0..4).

    The evaluator part is checked here too (parse_evaluator_spec), before anything loads.
    """
    if not text:
        raise TdgammonError("a player must be a model path, pubeval, random or gnubg[:PLIES]")
    name, sep, arg = text.partition(":")
    if name.partition("@")[0] == "gnubg":
        if "@" in text:
            raise TdgammonError(f"gnubg sets its depth with gnubg:PLIES, not @: {text!r}")
        plies = 0
        if sep:
            if not arg.isdigit() or not 0 <= int(arg) <= GNUBG_MAX_PLIES:
                raise TdgammonError(f"gnubg:PLIES takes plies 0..4 (gnubg's numbering), got {text!r}")
            plies = int(arg)
        return PlayerSpec(text, "gnubg", "", plies)
    base, at, ply_text = text.rpartition("@")
    if not at:
        base, ply = text, default_ply
    else:
        if not ply_text.isdigit() or not 1 <= int(ply_text) <= MAX_PLY or not base:
            raise TdgammonError(f"a player's ply suffix is @1 to @{MAX_PLY}, got {text!r}")
        ply = int(ply_text)
    if not 1 <= default_ply <= MAX_PLY:
        raise TdgammonError(f"--ply must be 1 to {MAX_PLY}, got {default_ply}")
    parse_evaluator_spec(base)
    return PlayerSpec(text, "evaluator", base, ply)
