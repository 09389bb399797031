"""The typed, validated run configuration: every knob of a training run, nothing else."""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from engine.errors import ConfigError


@dataclass(frozen=True)
class TrainConfig:
    """One training run. Each field is a TOML key of the same name."""

    seed: int = 1                   # seeds weight init, dice and exploration: same seed, same run
    hidden: int = 80                # hidden sigmoid units of the 198-H-5 network
    features: bool = False          # also feed engine.features' hand-crafted inputs (198 + 36)
    bearoff_target: bool = False    # end games at exact bear-off races, learning the database's value
    lr: float = 0.1                 # learning rate (alpha) at game 0
    lr_end: float = 0.02            # learning rate reached after lr_decay_games
    lr_decay_games: int = 1_000_000  # linear decay from lr to lr_end over this many games; 0 = constant
    td_lambda: float = 0.7          # trace decay lambda (gamma is 1: reward only at the end)
    epsilon: float = 0.0            # probability of a random play instead of the best (exploration)
    new_inputs_lr_scale: float = 1.0  # lr multiplier for the inputs the newest features version added
    games: int = 1_000_000          # games to train in total (the command's --games overrides)
    workers: int = 1                # Hogwild threads sharing the weights; 1 = exactly reproducible
    chunk_games: int = 50           # games a worker plays between bookkeeping steps
    checkpoint_every: int = 10_000  # games between checkpoints (also written on SIGINT/SIGTERM)
    eval_every: int = 10_000        # games between benchmark evaluations (0 = never)
    eval_games: int = 1_000         # games per benchmark (1-ply vs pubeval and vs random)
    snapshot_every: int = 0         # keep a copy of the checkpoint every N games (0 = never)
    # Actor/learner backends only (train --backend local|ray): the learner republishes its
    # weights to the actors every this many games, so a learned game was played by weights at
    # most staleness_games + 2 * actors * chunk_games games old (charts/policy_lag_games).
    staleness_games: int = 500

    def __post_init__(self) -> None:
        positive = ("hidden", "games", "workers", "chunk_games", "checkpoint_every", "staleness_games")
        for name in positive:
            if getattr(self, name) <= 0:
                raise ConfigError(f"config key {name!r} must be positive, got {getattr(self, name)}")
        for name in ("lr_decay_games", "eval_every", "eval_games", "snapshot_every"):
            if getattr(self, name) < 0:
                raise ConfigError(f"config key {name!r} must not be negative")
        if not 0.0 <= self.td_lambda <= 1.0:
            raise ConfigError(f"config key 'td_lambda' must be in [0, 1], got {self.td_lambda}")
        if not 0.0 <= self.epsilon <= 1.0:
            raise ConfigError(f"config key 'epsilon' must be in [0, 1], got {self.epsilon}")
        if self.lr <= 0 or self.lr_end <= 0 or self.new_inputs_lr_scale <= 0:
            raise ConfigError("config keys 'lr', 'lr_end' and 'new_inputs_lr_scale' must be positive")

    def lr_at(self, games: int) -> float:
        """The learning rate after `games` games of training."""
        if self.lr_decay_games == 0 or games >= self.lr_decay_games:
            return self.lr if self.lr_decay_games == 0 else self.lr_end
        return self.lr + (self.lr_end - self.lr) * games / self.lr_decay_games

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "config") -> TrainConfig:
        """Build from plain data, refusing unknown keys and wrong types."""
        known = {f.name: f for f in fields(cls)}
        for key, value in data.items():
            if key not in known:
                raise ConfigError(f"{source}: unknown key {key!r} (known: {', '.join(known)})")
            expected = known[key].type
            if expected == "bool":
                ok = isinstance(value, bool)
            elif expected == "int":
                ok = isinstance(value, int) and not isinstance(value, bool)
            else:
                ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not ok:
                raise ConfigError(f"{source}: key {key!r} must be {expected}, got {type(value).__name__} {value!r}")
        values = {k: (float(v) if known[k].type == "float" else v) for k, v in data.items()}
        return cls(**values)


def load_config(path: str | Path) -> TrainConfig:
    """Read and validate a TOML run configuration."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"config file {path} is not valid TOML: {err}") from None
    return TrainConfig.from_dict(data, source=str(path))
