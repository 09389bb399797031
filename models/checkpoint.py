"""Self-describing, atomic checkpoints.

One file holds the weights, the architecture, the run config, the encoder version, the
games trained and the trainer state (schedules, RNG). Writes go to `PATH.tmp` and are
moved into place with os.replace, so a kill at any moment leaves the old file intact.

A file holds one net (architecture kind "TDNet"), or an ensemble (kind "ensemble"): a list
of whole one-net payloads, played as the mean of their outputs (TDNetEnsemble). Training
takes one net, so load_checkpoint refuses an ensemble; load_members and load_play_net
read both.

Format changelog: 1 = first version; the ensemble kind came with the first ensemble
default (commit 800756b, 2026-12-01; older programs refuse it as an unknown architecture).
Nets of an older features version load with zero weights for the newer features (see
_upgrade_inputs), so they play exactly as before.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from engine.encoder import ENCODER_VERSION
from engine.features import FEATURE_COUNTS, FEATURES_VERSION, N_FEATURES
from engine.errors import CheckpointError
from models.network import TDNet, TDNetEnsemble, check_ensemble

FORMAT = "tdgammon-checkpoint"
FORMAT_VERSION = 1
ENSEMBLE = "ensemble"


@dataclass
class Checkpoint:
    net: TDNet
    config: dict[str, Any] = field(default_factory=dict)
    games_trained: int = 0
    trainer_state: dict[str, Any] = field(default_factory=dict)

    def state_with(self, key: str, record: dict[str, Any]) -> dict[str, Any]:
        """The trainer state with `record` appended to its `key` list: how a tool that reshapes or
        refits a net leaves its mark, so later runs still know where the net came from."""
        return {**self.trainer_state, key: [*self.trainer_state.get(key, []), record]}


def save_checkpoint(path: str | os.PathLike, ckpt: Checkpoint) -> None:
    """Write atomically: a temporary file next to the target, then os.replace."""
    _write_atomic(Path(path), _payload(ckpt))


def save_ensemble(path: str | os.PathLike, members: list[Checkpoint]) -> None:
    """Write several nets as one play-time model (TDNetEnsemble), each member whole."""
    check_ensemble([m.net for m in members])
    _write_atomic(Path(path), {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "encoder_version": ENCODER_VERSION,
        "architecture": {"kind": ENSEMBLE, "members": len(members)},
        "members": [_payload(m) for m in members],
    })


def load_checkpoint(path: str | os.PathLike) -> Checkpoint:
    """Read a one-net checkpoint, refusing anything missing, corrupt, built for another
    encoder, or an ensemble (training and the numba tools take one net)."""
    path = Path(path)
    payload = _read(path)
    if _is_ensemble(payload):
        raise CheckpointError(
            f"{path} is an ensemble of {len(payload.get('members', []))} nets, and this needs one net: "
            f"take one out with `python -m scripts.lab.ensemble extract {path} INDEX --out FILE`")
    return _from_payload(payload, path)


def load_members(path: str | os.PathLike) -> list[Checkpoint]:
    """The nets of a file: one for a checkpoint, each member (in order) for an ensemble."""
    path = Path(path)
    payload = _read(path)
    if not _is_ensemble(payload):
        return [_from_payload(payload, path)]
    members = payload.get("members")
    if not isinstance(members, list) or len(members) < 2:
        raise CheckpointError(f"ensemble {path} does not list its member nets")
    return [_from_payload(member, path) for member in members]


def load_play_net(path: str | os.PathLike) -> TDNet | TDNetEnsemble:
    """The net to play with: a checkpoint's net, or an ensemble of its members' nets."""
    return play_net(load_members(path))


def play_net(members: list[Checkpoint]) -> TDNet | TDNetEnsemble:
    """One member's net as it is; several as their TDNetEnsemble."""
    return members[0].net if len(members) == 1 else TDNetEnsemble([m.net for m in members])


def _payload(ckpt: Checkpoint) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "encoder_version": ENCODER_VERSION,
        "architecture": {"kind": "TDNet", "hidden": ckpt.net.n_hidden,
                         "features": FEATURES_VERSION if ckpt.net.features else 0},
        "state_dict": ckpt.net.state_dict(),
        "config": ckpt.config,
        "games_trained": int(ckpt.games_trained),
        "trainer_state": ckpt.trainer_state,
    }


def _write_atomic(path: Path, payload: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as fh:
            torch.save(payload, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _read(path: Path) -> dict[str, Any]:
    """The file's payload, once its format, format version and encoder version check out."""
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path} does not exist")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises many types for a damaged zip or pickle
        raise CheckpointError(f"checkpoint {path} is corrupt or truncated ({type(err).__name__})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a tdgammon checkpoint")
    if payload.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(
            f"checkpoint {path} has format version {payload.get('format_version')}, "
            f"this program reads {FORMAT_VERSION}")
    if payload.get("encoder_version") != ENCODER_VERSION:
        raise CheckpointError(
            f"checkpoint {path} was trained with encoder version {payload.get('encoder_version')}, "
            f"this program has {ENCODER_VERSION}")
    return payload


def _is_ensemble(payload: dict[str, Any]) -> bool:
    arch = payload.get("architecture")
    return isinstance(arch, dict) and arch.get("kind") == ENSEMBLE


def _from_payload(payload: dict[str, Any], path: Path) -> Checkpoint:
    """One net's checkpoint from its payload (a file's, or an ensemble member's)."""
    arch = payload.get("architecture", {})
    if not isinstance(arch, dict) or arch.get("kind") != "TDNet" or not isinstance(arch.get("hidden"), int):
        raise CheckpointError(f"checkpoint {path} has an unknown architecture {arch!r}")
    features = arch.get("features", 0)  # 0: Tesauro's 198 inputs only (older files lack the key)
    if features != 0 and features not in FEATURE_COUNTS:
        raise CheckpointError(f"checkpoint {path} was trained with features version {features}, "
                              f"this program reads versions up to {FEATURES_VERSION}")
    net = TDNet(arch["hidden"], features=bool(features))
    try:
        state = payload["state_dict"]
        if features and features < FEATURES_VERSION:
            state = {**state, "hidden.weight": _upgrade_inputs(state["hidden.weight"], features)}
        net.load_state_dict(state)
    except (RuntimeError, KeyError, TypeError) as err:
        raise CheckpointError(f"checkpoint {path} weights do not match its architecture") from err
    return Checkpoint(net=net, config=payload.get("config", {}),
                      games_trained=payload.get("games_trained", 0),
                      trainer_state=payload.get("trainer_state", {}))


def _upgrade_inputs(w1: torch.Tensor, version: int) -> torch.Tensor:
    """An older feature net's input weights, with zero weights for the features it never
    read: later versions only append values, so the net computes exactly what it did."""
    missing = N_FEATURES - FEATURE_COUNTS[version]
    return torch.cat([w1, w1.new_zeros(w1.shape[0], missing)], dim=1)
