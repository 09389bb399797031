"""A small net's named weight arrays as one .npz file, written atomically with the weights'
SHA-256 and read back checked, so a damaged or hand-edited file is refused instead of being
played. The race net (engine.race_dists) and the play net's torch-free copy
(models.inference) keep their weights this way."""

from __future__ import annotations

import hashlib
import os
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from engine.errors import CheckpointError

WEIGHTS = ("w1", "b1", "w2", "b2")  # a two-layer net's arrays, as read_weights reads them


def weights_digest(weights: dict[str, np.ndarray]) -> str:
    """SHA-256 over each weight array's shape and float32 bytes, in the dict's order."""
    sha = hashlib.sha256()
    for array in weights.values():
        sha.update(str(array.shape).encode())
        sha.update(np.ascontiguousarray(array, dtype=np.float32).tobytes())
    return sha.hexdigest()


def save_weights(path: Path, weights: dict[str, np.ndarray], **header: object) -> None:
    """Atomically (a temporary file, then os.replace): the header keys, the digest, the weights."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        np.savez(fh, **header, digest=weights_digest(weights), **weights)
    os.replace(tmp, path)


def read_weights(path: Path, label: str, check_header: Callable[[np.lib.npyio.NpzFile], None]
                 ) -> dict[str, np.ndarray]:
    """The float32 weights of the file at `path`, after `check_header(data)` has accepted its
    header keys (or raised its own CheckpointError); CheckpointError naming `label` when the
    file is missing, not an .npz archive, unreadable or damaged."""
    try:
        data = np.load(path)
    except FileNotFoundError:
        raise CheckpointError(f"{label} {path} does not exist") from None
    except OSError as err:
        raise CheckpointError(f"cannot read {label} {path}: {err}") from None
    except (ValueError, EOFError, zipfile.BadZipFile):
        data = None  # neither .npz nor .npy: np.load took it for a pickle, or it is empty
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise CheckpointError(f"{label} {path} is not a weights file (an .npz archive)")
    try:
        with data:
            check_header(data)
            weights = {k: np.ascontiguousarray(data[k], dtype=np.float32) for k in WEIGHTS}
            digest = str(data["digest"])
    except CheckpointError:
        raise
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as err:
        raise CheckpointError(f"cannot read {label} {path}: {err}") from None
    if digest != weights_digest(weights):
        raise CheckpointError(f"{label} {path} is damaged")
    return weights
