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
from models.paths import DEFAULT_MODEL, RACE_MODEL

# The builders of the named evaluators parse_evaluator_spec knows.
EVALUATORS: dict[str, Callable[[EvaluatorSpec], Evaluator]] = {
    "pubeval": lambda spec: PubevalEvaluator(),
    "random": lambda spec: RandomEvaluator(spec.seed),
}


def screen_path(checkpoint: Path) -> Path:
    """Where a checkpoint's screen lives: beside it, `NAME.screen.pt` for `NAME.pt`."""
    return checkpoint.with_name(f"{checkpoint.stem}.screen.pt")


def load_network(path: str | Path = DEFAULT_MODEL, race_net: Path | None = RACE_MODEL,
                 screen: bool = True) -> Evaluator:
    """The network (or ensemble) of a checkpoint as an evaluator; CheckpointError if missing or corrupt.

    Races go to the race net at `race_net` (engine.race.WithRaceNet) when that file exists;
    None plays the checkpoint's own net everywhere. Both sides home: the bear-off databases.
    With `screen`, the small net fitted to this one (screen_path) screens the plays whose
    best only matters (engine.search.screened_values) when that file exists.
    """
    from models.inference import NetworkEvaluator, load_inference_net

    path = Path(path)
    if not path.exists():
        hint = (" (no default model: train one, or pass --model PATH or --evaluator pubeval)"
                if path.resolve() == DEFAULT_MODEL else "")
        raise CheckpointError(f"checkpoint {path} does not exist{hint}")
    evaluator = NetworkEvaluator(load_inference_net(path), name=path.name)
    # Races go to the race net when there is one (with none shipped, the network plays them).
    if race_net is not None and not (Path(race_net) == RACE_MODEL and not RACE_MODEL.exists()):
        from engine.race import WithRaceNet
        from engine.race_dists import RaceDistNet

        evaluator = WithRaceNet(evaluator, RaceDistNet.load(Path(race_net)))
    if screen and screen_path(path).exists():
        evaluator.screen = NetworkEvaluator(load_inference_net(screen_path(path)), name=screen_path(path).name,
                                            bearoff=False)
    return evaluator


def load_evaluator(spec: str | None = None, race_net: Path | None = RACE_MODEL) -> Evaluator:
    """`pubeval`, `random`, `random:SEED`, or a checkpoint path (default models/default.pt),
    a network's races answered by `race_net` (load_network)."""
    parsed = parse_evaluator_spec(spec)
    if parsed.kind == "model":
        return load_network(DEFAULT_MODEL if parsed.path is None else parsed.path, race_net)
    return EVALUATORS[parsed.kind](parsed)
