"""Self-describing, atomic checkpoints.

One file holds the weights, the architecture, the run config, the encoder version, the
games trained and the trainer state (schedules, RNG). Writes go to `PATH.tmp` and are
moved into place with os.replace, so a kill at any moment leaves the old file intact.

A file holds one net (architecture kind "TDNet"), or an ensemble (kind "ensemble"): a list
of whole one-net payloads, played as the mean of their outputs (TDNetEnsemble). Training
takes one net, so load_checkpoint refuses an ensemble; load_members and load_play_net
read both.

Format changelog: 1 = first version; the ensemble kind came with the first ensemble
default (commit 800756b, 2026-12-01; older programs refuse it as an unknown architecture);
the seal came later still (older programs ignore a zip comment).
Nets of an older features version load with zero weights for the newer features (see
_upgrade_inputs), so they play exactly as before.

Damage is refused, never played. A write seals the file: the zip's archive comment holds
the SHA-256 of every byte before it, tensors included (`seal`). A read checks the seal,
each zip record's CRC-32 (torch checks neither; a file from before the seal has only the
CRCs), then every field a crafted file could get wrong, and that every weight is finite.
A write refuses non-finite weights, so a diverged run cannot replace a good file.
"""

from __future__ import annotations

import hashlib
import io
import os
import zipfile
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
MAX_HIDDEN = 8192
"""Widest net a file may declare (training.config's bound on `hidden`)."""
STATE_KEYS = frozenset({"hidden.weight", "hidden.bias", "out.weight", "out.bias"})
SEAL = b"tdgammon-sha256:"
_EOCD = b"PK\x05\x06"   # a zip's end-of-central-directory record: 22 bytes, then the comment
_SEALED_TAIL = 22 + len(SEAL) + 64


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
        members = payload.get("members")
        raise CheckpointError(
            f"{path} is an ensemble of {len(members) if isinstance(members, list) else 'several'} nets, "
            "and this needs one net: "
            f"take one out with `python -m scripts.lab.ensemble extract {path} INDEX --out FILE`")
    return _from_payload(payload, path)


def load_members(path: str | os.PathLike) -> list[Checkpoint]:
    """The nets of a file: one for a checkpoint, each member (in order) for an ensemble."""
    path = Path(path)
    payload = _read(path)
    if not _is_ensemble(payload):
        return [_from_payload(payload, path)]
    members = payload.get("members")
    if not isinstance(members, list) or len(members) < 2 or not _is(payload["architecture"].get("members"), len(members)):
        raise CheckpointError(f"ensemble {path} does not list its member nets")
    nets = [_from_payload(member, path) for member in members]
    check_ensemble([m.net for m in nets])
    return nets


def load_play_net(path: str | os.PathLike) -> TDNet | TDNetEnsemble:
    """The net to play with: a checkpoint's net, or an ensemble of its members' nets."""
    return play_net(load_members(path))


def play_net(members: list[Checkpoint]) -> TDNet | TDNetEnsemble:
    """One member's net as it is; several as their TDNetEnsemble."""
    return members[0].net if len(members) == 1 else TDNetEnsemble([m.net for m in members])


def _payload(ckpt: Checkpoint) -> dict[str, Any]:
    if not _finite(ckpt.net.state_dict()):
        raise CheckpointError("refusing to write NaN or infinite weights")
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
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(seal(buffer.getvalue()))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def seal(data: bytes) -> bytes:
    """A zip (as torch.save writes it, no comment) with its seal as the archive comment:
    SEAL and the SHA-256 of every byte before the comment's length field."""
    if data[-22:-18] != _EOCD or data[-2:] != b"\0\0":
        raise ValueError("not a zip without an archive comment")
    comment = SEAL + hashlib.sha256(data[:-2]).hexdigest().encode()
    return data[:-2] + len(comment).to_bytes(2, "little") + comment


def _check_seal(data: bytes, path: Path) -> None:
    """Refuse a sealed file whose bytes changed by even one bit, or a file that is neither
    sealed nor a plain zip's end (a truncated one)."""
    if data[-_SEALED_TAIL:-_SEALED_TAIL + 4] == _EOCD:
        comment = data[-_SEALED_TAIL + 22:]
        length = int.from_bytes(data[-_SEALED_TAIL + 20:-_SEALED_TAIL + 22], "little")
        if (length != len(comment) or not comment.startswith(SEAL)
                or comment[len(SEAL):] != hashlib.sha256(data[:-len(comment) - 2]).hexdigest().encode()):
            raise CheckpointError(f"checkpoint {path} is corrupt: its bytes do not match its seal")
    elif data[-22:-18] != _EOCD or data[-2:] != b"\0\0":
        raise CheckpointError(f"checkpoint {path} is corrupt or truncated (no end of archive)")


def _read(path: Path) -> dict[str, Any]:
    """The file's payload, once its seal, CRCs, format and versions check out."""
    if not path.is_file():
        raise CheckpointError(f"checkpoint {path} does not exist" if not path.exists()
                              else f"checkpoint {path} is not a file")
    data = path.read_bytes()
    _check_seal(data, path)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            damaged = archive.testzip()     # every record against its CRC-32
        if damaged is None:
            payload = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as err:  # zipfile and torch raise many types for a damaged zip or pickle
        raise CheckpointError(f"checkpoint {path} is corrupt or truncated ({type(err).__name__})") from None
    if damaged is not None:
        raise CheckpointError(f"checkpoint {path} is corrupt: its record {damaged!r} fails its CRC check")
    if not isinstance(payload, dict) or not _is(payload.get("format"), FORMAT):
        raise CheckpointError(f"{path} is not a tdgammon checkpoint")
    if not _is(payload.get("format_version"), FORMAT_VERSION):
        raise CheckpointError(
            f"checkpoint {path} has format version {payload.get('format_version')!r}, "
            f"this program reads {FORMAT_VERSION}")
    if not _is(payload.get("encoder_version"), ENCODER_VERSION):
        raise CheckpointError(
            f"checkpoint {path} was trained with encoder version {payload.get('encoder_version')!r}, "
            f"this program has {ENCODER_VERSION}")
    return payload


def _is_ensemble(payload: dict[str, Any]) -> bool:
    arch = payload.get("architecture")
    return isinstance(arch, dict) and _is(arch.get("kind"), ENSEMBLE)


def _from_payload(payload: Any, path: Path) -> Checkpoint:
    """One net's checkpoint from its payload (a file's, or an ensemble member's), every
    field checked: a crafted file gets a CheckpointError, never a crash or a NaN."""
    if not isinstance(payload, dict):
        raise CheckpointError(f"checkpoint {path} holds {type(payload).__name__} {payload!r} where a net belongs")
    arch = payload.get("architecture", {})
    hidden = arch.get("hidden") if isinstance(arch, dict) else None
    if (not isinstance(arch, dict) or not _is(arch.get("kind"), "TDNet") or not _is_int(hidden)
            or not 1 <= hidden <= MAX_HIDDEN):
        raise CheckpointError(f"checkpoint {path} has an unknown architecture {arch!r}")
    features = arch.get("features", 0)  # 0: Tesauro's 198 inputs only (older files lack the key)
    if not _is_int(features) or (features != 0 and features not in FEATURE_COUNTS):
        raise CheckpointError(f"checkpoint {path} was trained with features version {features!r}, "
                              f"this program reads versions up to {FEATURES_VERSION}")
    state = payload.get("state_dict")
    if (not isinstance(state, dict) or set(state) != STATE_KEYS
            or not all(isinstance(t, torch.Tensor) and t.layout == torch.strided and t.is_floating_point()
                       for t in state.values())):
        raise CheckpointError(f"checkpoint {path} weights do not match its architecture")
    if not _finite(state):
        raise CheckpointError(f"checkpoint {path} has NaN or infinite weights")
    net = TDNet(hidden, features=bool(features))
    try:
        if features and features < FEATURES_VERSION:
            state = {**state, "hidden.weight": _upgrade_inputs(state["hidden.weight"], features)}
        net.load_state_dict(state)
    except (RuntimeError, IndexError) as err:
        raise CheckpointError(f"checkpoint {path} weights do not match its architecture") from err
    config, games, trainer_state = (payload.get("config", {}), payload.get("games_trained", 0),
                                    payload.get("trainer_state", {}))
    if not isinstance(config, dict) or not isinstance(trainer_state, dict) or not _is_int(games) or games < 0:
        raise CheckpointError(f"checkpoint {path} has a malformed config, games count or trainer state")
    return Checkpoint(net=net, config=config, games_trained=games, trainer_state=trainer_state)


def _is(value: Any, expected: str | int) -> bool:
    """`value == expected`, and of the same type: a crafted tensor or bool never compares equal."""
    return type(value) is type(expected) and value == expected


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _finite(state: dict[str, torch.Tensor]) -> bool:
    return all(bool(torch.isfinite(t).all()) for t in state.values())


def _upgrade_inputs(w1: torch.Tensor, version: int) -> torch.Tensor:
    """An older feature net's input weights, with zero weights for the features it never
    read: later versions only append values, so the net computes exactly what it did."""
    missing = N_FEATURES - FEATURE_COUNTS[version]
    return torch.cat([w1, w1.new_zeros(w1.shape[0], missing)], dim=1)
