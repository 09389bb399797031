"""The typed, validated run configuration: every knob of a training run, nothing else."""

from __future__ import annotations

import dataclasses
import math
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
    workers: int = 1                # Hogwild threads, publishing every game; 1 = exactly reproducible
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
        """Every field in its range (RANGES), floats finite: a NaN or infinite learning rate
        would train NaN weights. One ConfigError line for the first bad key."""
        for f in fields(self):
            value = getattr(self, f.name)
            if f.type == "bool":
                if not isinstance(value, bool):
                    raise ConfigError(f"config key {f.name!r} must be true or false, got {_shown(value)}")
                continue
            lo, hi, lo_open = RANGES[f.name]
            if f.type == "int":
                ok = isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi
                if not ok:
                    raise ConfigError(f"config key {f.name!r} must be an integer {lo}..{hi}, got {_shown(value)}")
                continue
            ok = (isinstance(value, (int, float)) and not isinstance(value, bool)
                  and math.isfinite(value) and (lo < value if lo_open else lo <= value) and value <= hi)
            if not ok:
                interval = f"{'(' if lo_open else '['}{lo:g}, {hi:g}]"
                raise ConfigError(f"config key {f.name!r} must be a finite number in {interval}, "
                                  f"got {_shown(value)}")

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
                if ok and isinstance(value, int) and abs(value) > 2**1000:
                    raise ConfigError(f"{source}: key {key!r} is an integer too large for a float")
            if not ok:
                raise ConfigError(f"{source}: key {key!r} must be {expected}, got {_shown(value)}")
        try:
            values = {k: (float(v) if known[k].type == "float" else v) for k, v in data.items()}
            return cls(**values)
        except ConfigError as err:
            raise ConfigError(f"{source}: {err}") from None


def _shown(value: object, limit: int = 60) -> str:
    text = f"{type(value).__name__} {value!r}"
    return text if len(text) <= limit else text[:limit] + "..."


_MAX_GAMES = 10**12
RANGES: dict[str, tuple[float, float, bool]] = {
    # name: (lowest, highest, lowest excluded); ints are inclusive at both ends.
    "seed": (0, 2**63 - 1, False),          # numpy's SeedSequence and torch's manual_seed take it
    "hidden": (1, 8192, False),
    "lr": (0.0, 1.0, True),
    "lr_end": (0.0, 1.0, True),
    "lr_decay_games": (0, _MAX_GAMES, False),
    "td_lambda": (0.0, 1.0, False),
    "epsilon": (0.0, 1.0, False),
    "new_inputs_lr_scale": (0.0, 100.0, True),
    "games": (1, _MAX_GAMES, False),
    "workers": (1, 256, False),
    "chunk_games": (1, 1_000_000, False),
    "checkpoint_every": (1, _MAX_GAMES, False),
    "eval_every": (0, _MAX_GAMES, False),
    "eval_games": (0, 10_000_000, False),
    "snapshot_every": (0, _MAX_GAMES, False),
    "staleness_games": (1, _MAX_GAMES, False),
}
"""Each number's range: wide enough for any real run, narrow enough that nothing overflows."""


def read_toml(path: Path, what: str = "config file") -> dict[str, Any]:
    """A TOML file's table, or one ConfigError line naming `what` the file was meant to be."""
    try:
        return tomllib.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{what} {path} does not exist") from None
    except IsADirectoryError:
        raise ConfigError(f"{what} {path} is a directory, not a TOML file") from None
    except OSError as err:
        raise ConfigError(f"cannot read {what} {path}: {err.strerror or err}") from None
    except UnicodeDecodeError as err:
        raise ConfigError(f"{what} {path} is not UTF-8 text (byte {err.start})") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{what} {path} is not valid TOML: {err}") from None


def load_config(path: str | Path) -> TrainConfig:
    """Read and validate a TOML run configuration."""
    path = Path(path)
    return TrainConfig.from_dict(read_toml(path), source=str(path))
