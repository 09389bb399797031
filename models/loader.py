"""One place that turns a user's evaluator spec into an Evaluator.

The spec is parsed by engine.pit.players.parse_evaluator_spec (`pubeval`, `random`,
`random:SEED`, or else the path of a checkpoint; models/default.pt when none is given);
this module only builds what it names.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from engine.errors import CheckpointError
from engine.evaluator import Evaluator, RandomEvaluator
from engine.pit.players import EvaluatorSpec, parse_evaluator_spec
from engine.pubeval import PubevalEvaluator
from models.paths import DEFAULT_MODEL

# The builders of the named evaluators parse_evaluator_spec knows.
EVALUATORS: dict[str, Callable[[EvaluatorSpec], Evaluator]] = {
    "pubeval": lambda spec: PubevalEvaluator(),
    "random": lambda spec: RandomEvaluator(spec.seed),
}


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
    """`pubeval`, `random`, `random:SEED`, or a checkpoint path (default models/default.pt)."""
    parsed = parse_evaluator_spec(spec)
    if parsed.kind == "model":
        return load_network(DEFAULT_MODEL if parsed.path is None else parsed.path)
    return EVALUATORS[parsed.kind](parsed)
