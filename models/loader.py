"""One place that turns a user's evaluator spec into an Evaluator.

A spec is `NAME[:ARG]` for a named evaluator in EVALUATORS (`pubeval`, `random`,
`random:SEED`), or else the path of a checkpoint (models/default.pt when none is given).
Other modules extend the table with register_evaluator (e.g. `gnubg` for pit).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from engine.errors import CheckpointError, TdgammonError
from engine.evaluator import Evaluator
from engine.pubeval import PubevalEvaluator
from engine.evaluator import RandomEvaluator
from models.paths import DEFAULT_MODEL

EvaluatorFactory = Callable[[str | None], Evaluator]
"""Builds an evaluator from the text after the colon (None when the spec has no colon)."""

EVALUATORS: dict[str, EvaluatorFactory] = {}


def register_evaluator(name: str, factory: EvaluatorFactory) -> None:
    """Make `name` and `name:ARG` valid specs; factory(arg) raises a TdgammonError on a bad arg."""
    EVALUATORS[name] = factory


def _pubeval(arg: str | None) -> Evaluator:
    if arg is not None:
        raise TdgammonError(f"pubeval takes no argument, got 'pubeval:{arg}'")
    return PubevalEvaluator()


def _random(arg: str | None) -> Evaluator:
    if arg is None:
        return RandomEvaluator(0)
    try:
        seed = int(arg)
    except ValueError:
        raise TdgammonError(f"random takes an integer seed (random:SEED), got 'random:{arg}'") from None
    if seed < 0:
        raise TdgammonError(f"random seed must be >= 0, got {seed}")
    return RandomEvaluator(seed)


register_evaluator("pubeval", _pubeval)
register_evaluator("random", _random)


def load_network(path: str | Path = DEFAULT_MODEL) -> Evaluator:
    """The network (or ensemble) of a checkpoint as an evaluator; CheckpointError if missing or corrupt."""
    from models.inference import NetworkEvaluator, load_inference_net

    path = Path(path)
    if not path.exists():
        hint = (" (no default model: train one, or pass --model PATH or --evaluator pubeval)"
                if path.resolve() == DEFAULT_MODEL else "")
        raise CheckpointError(f"checkpoint {path} does not exist{hint}")
    return NetworkEvaluator(load_inference_net(path), name=path.name)


def load_evaluator(spec: str | None = None) -> Evaluator:
    """`pubeval`, `random`, `random:SEED`, any registered name, or a checkpoint path (default models/default.pt)."""
    if spec is None or spec == "":
        return load_network(DEFAULT_MODEL)
    name, sep, arg = spec.partition(":")
    if name in EVALUATORS:
        return EVALUATORS[name](arg if sep else None)
    return load_network(spec)
