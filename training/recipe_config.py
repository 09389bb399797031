"""A recipe: every stage of a model in one TOML file, validated before anything runs.

    name = "smoke"
    seed = 1
    [[member]]                      # one per ensemble member, in order
    stages = [{ config = "smoke.toml", games = 2000 }]   # TD(lambda) runs, each continuing the last
    seed = 11                       # optional: overrides the stage configs' seed
    [round_defaults]                # every key a [[round]] may set
    games = 40                      # self-play games a member plays for the round's positions
    ...
    [[round]]                       # one per distillation round; keys override round_defaults
    widen = 64                      # optional: widen every member to this many units first
    [gate]
    ...
    [screen]                        # optional: the final model's screen (training.screen)
    ...

Stage configs are paths relative to the recipe file (or the configs/ folder next to it).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from engine.errors import ConfigError
from training.config import TrainConfig, load_config, read_toml


@dataclass(frozen=True)
class Stage:
    """One TD(lambda) run of a member: a train config, to `games` games in total."""

    config: TrainConfig
    source: str      # the config file's name, for the manifest and the model card
    games: int


@dataclass(frozen=True)
class Member:
    stages: tuple[Stage, ...]


@dataclass(frozen=True)
class Round:
    """One search-distillation round: positions, teacher values, fit, gate."""

    games: int = 100                 # self-play games each playing member records
    validation_games: int = 20       # more games per member, valued the same way, that measure the fit and feed the gate
    shard_games: int = 20            # games per shard: a unit of work, a task, and a resumable file
    near_misses: int = 0             # up to this many near misses a position (training.distill.near_misses)
    teacher_ply: int = 2             # the teacher (the last kept ensemble) searches at this ply: 2 or 3
    epochs: int = 4
    lr: float = 1e-3
    lr_end: float = 0.0
    widen: int = 0                   # widen every member to this many hidden units before the fit (0: no)
    players: tuple[int, ...] = ()    # members whose games give positions (empty: all)


@dataclass(frozen=True)
class Gate:
    """How a round's ensemble is judged against the last kept one."""

    positions: int = 200     # validation positions on which both choose a 1-ply play
    judge_ply: int = 2       # the judge: the last kept ensemble at this ply
    pit_games: int = 200     # 1-ply games between them, duplicate dice
    check_games: int = 400   # final model vs random (and pubeval), 1-ply


@dataclass(frozen=True)
class Screen:
    """The final model's screen: a fresh 198-input net fitted to its values of its own plays."""

    games: int = 3000        # self-play games of the model's first member
    positions: int = 30000   # contact positions whose every play of every roll is fitted
    held_out: int = 2000     # positions of other games that measure the screen
    hidden: int = 80
    epochs: int = 3
    lr: float = 3e-3         # a fresh net: 3e-3 fitted closer than 1e-3 (held-out mse 2.8e-4 against 4.2e-4)


@dataclass(frozen=True)
class Recipe:
    name: str
    seed: int
    members: tuple[Member, ...]
    rounds: tuple[Round, ...]
    gate: Gate
    screen: Screen
    path: Path


ROUND_RANGES = {"games": (1, 10**9), "validation_games": (1, 10**9), "shard_games": (1, 10**6),
                "near_misses": (0, 64), "teacher_ply": (2, 3), "epochs": (0, 1000), "widen": (0, 8192)}
GATE_RANGES = {"positions": (1, 10**7), "judge_ply": (1, 3), "pit_games": (2, 10**7), "check_games": (2, 10**7)}
SCREEN_RANGES = {"games": (1, 10**7), "positions": (1, 10**7), "held_out": (1, 10**7), "hidden": (1, 8192),
                 "epochs": (1, 1000)}


def _typed(cls, data: dict[str, Any], ranges: dict[str, tuple[int, int]], where: str):
    """Build a frozen dataclass from TOML data, one ConfigError line for the first bad key."""
    known = {f.name: f for f in fields(cls)}
    values = {}
    for key, value in data.items():
        if key not in known:
            raise ConfigError(f"{where}: unknown key {key!r} (known: {', '.join(known)})")
        kind = known[key].type
        if kind == "int":
            lo, hi = ranges[key]
            if not (isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi):
                raise ConfigError(f"{where}: {key} must be an integer {lo}..{hi}, got {value!r}")
        elif kind == "float":
            if not (isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1):
                raise ConfigError(f"{where}: {key} must be a number in [0, 1], got {value!r}")
            value = float(value)
        else:  # players
            if not (isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
                raise ConfigError(f"{where}: {key} must be a list of member indices, got {value!r}")
            value = tuple(value)
        values[key] = value
    return cls(**values)


def _stage(entry: Any, recipe_path: Path, where: str, seed: int | None) -> Stage:
    if not isinstance(entry, dict) or not isinstance(entry.get("config"), str):
        raise ConfigError(f"{where}: a stage is {{ config = \"FILE.toml\", games = N }}")
    unknown = set(entry) - {"config", "games"}
    if unknown:
        raise ConfigError(f"{where}: unknown key {sorted(unknown)[0]!r} (known: config, games)")
    candidates = [recipe_path.parent / entry["config"], recipe_path.parent.parent / "configs" / entry["config"]]
    found = next((p for p in candidates if p.is_file()), None)
    if found is None:
        raise ConfigError(f"{where}: stage config {entry['config']} not found next to {recipe_path.name}")
    config = load_config(found)
    if seed is not None:
        config = TrainConfig.from_dict({**config.to_dict(), "seed": seed}, str(found))
    games = entry.get("games", config.games)
    if not (isinstance(games, int) and not isinstance(games, bool) and 1 <= games <= 10**12):
        raise ConfigError(f"{where}: games must be a positive integer, got {games!r}")
    return Stage(config, entry["config"], games)


def load_recipe(path: str | Path) -> Recipe:
    """Read and validate a recipe; ConfigError (one line) on the first fault."""
    path = Path(path)
    data = read_toml(path, "recipe")
    unknown = set(data) - {"name", "seed", "member", "round_defaults", "round", "gate", "screen"}
    if unknown:
        raise ConfigError(f"{path}: unknown key {sorted(unknown)[0]!r}")
    name, seed = data.get("name", path.stem), data.get("seed", 1)
    if not isinstance(name, str) or not (isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed < 2**32):
        raise ConfigError(f"{path}: name must be text and seed an integer 0..2^32-1")
    raw_members = data.get("member")
    if not isinstance(raw_members, list) or not raw_members:
        raise ConfigError(f"{path}: a recipe needs at least one [[member]] with its stages")
    members = []
    for i, raw in enumerate(raw_members):
        where = f"{path}: member {i}"
        if not isinstance(raw, dict) or not isinstance(raw.get("stages"), list) or not raw["stages"]:
            raise ConfigError(f"{where}: needs stages = [{{ config = ..., games = ... }}, ...]")
        member_seed = raw.get("seed")
        if member_seed is not None and not (isinstance(member_seed, int) and not isinstance(member_seed, bool)):
            raise ConfigError(f"{where}: seed must be an integer")
        stages = tuple(_stage(s, path, f"{where} stage {j}", member_seed) for j, s in enumerate(raw["stages"]))
        for prev, nxt in zip(stages, stages[1:]):
            if nxt.games <= prev.games or nxt.config.features != prev.config.features:
                raise ConfigError(f"{where}: each stage must go past the last's games with the same features")
        members.append(Member(stages))
    defaults = data.get("round_defaults", {})
    raw_rounds = data.get("round", [])
    if not isinstance(defaults, dict) or not isinstance(raw_rounds, list):
        raise ConfigError(f"{path}: round_defaults is a table and round a list of [[round]] tables")
    rounds = tuple(_typed(Round, {**defaults, **raw}, ROUND_RANGES, f"{path}: round {r + 1}")
                   for r, raw in enumerate(raw_rounds))
    for r, rnd in enumerate(rounds):
        if any(not 0 <= p < len(members) for p in rnd.players):
            raise ConfigError(f"{path}: round {r + 1}: players must be member indices 0..{len(members) - 1}")
    gate = _typed(Gate, data.get("gate", {}), GATE_RANGES, f"{path}: gate")
    screen = _typed(Screen, data.get("screen", {}), SCREEN_RANGES, f"{path}: screen")
    return Recipe(name, seed, tuple(members), rounds, gate, screen, path)
