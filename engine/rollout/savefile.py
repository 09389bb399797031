"""Save and resume: a rollout's trials so far in one .npz file, written after every batch.

A file holds one line of trials for a position, two for a cube decision (No double,
Double/take), one a play for the plays of a roll; its metadata names the position, each
line's settings and, for plays, the roll and each play. Resuming checks all of these.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from engine.rollout.backends import batch_ranges
from engine.rollout.core import RolloutError, RolloutSettings, TrialData

FILE_VERSION = 3  # 3: plays of a roll too (older readers must refuse them); 2: any number of lines; 1: one line
READABLE = (1, 2, FILE_VERSION)

_FIELDS = ("ids", "raw", "luck", "cf_raw", "cf_luck", "turns")


def save(path: str | Path, board: np.ndarray, lines: list[tuple[RolloutSettings, TrialData]],
         plays: dict | None = None) -> None:
    """Write the trials done so far of each line (one for a position, two for a cube
    decision, one a play for the plays of a roll, which `plays` describes: the dice and
    each play's afterstate, steps and whether it stopped) atomically (a *.tmp file, then
    os.replace): a failed write leaves the last good save in place."""
    path = Path(path)
    meta = {"version": FILE_VERSION, "position": board.tolist(), "lines": [st.as_dict() for st, _ in lines]}
    if plays is not None:
        meta["plays"] = plays
    arrays = {f"{k}.{name}": a for k, (_, data) in enumerate(lines) for name, a in data.to_arrays().items()}
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as fh:
            np.savez(fh, meta=np.array(json.dumps(meta)), **arrays)
        os.replace(tmp, path)
    except OSError as err:
        raise RolloutError(f"cannot save to {path}: {err.strerror or err}") from None


_KINDS = {"position": "a position rollout", "cube": "a cube decision rollout",
          "plays": "a rollout of the plays of a roll"}


def _read(path: str | Path, board: np.ndarray, kind: str) -> tuple[dict, list[TrialData]]:
    """A save file's description and each line's trials, if it is a rollout of `board` of
    this kind (one of _KINDS)."""
    try:
        with np.load(path) as z:
            meta = json.loads(str(z["meta"]))
            if meta.get("version") == 1:
                meta["lines"], saved_data = [meta["settings"]], [TrialData(*(z[f] for f in _FIELDS))]
            else:
                saved_data = [TrialData(*(z[f"{k}.{f}"] for f in _FIELDS)) for k in range(len(meta["lines"]))]
    except OSError as err:
        raise RolloutError(f"cannot resume from {path}: {err.strerror or err}") from None
    except (ValueError, KeyError, EOFError, TypeError):
        raise RolloutError(f"cannot resume from {path}: not a file written by --save") from None
    if meta.get("version") not in READABLE:
        raise RolloutError(f"cannot resume from {path}: file version {meta.get('version')}")
    if meta["position"] != board.tolist():
        raise RolloutError(f"cannot resume from {path}: it holds a rollout of another position")
    found = "plays" if "plays" in meta else {1: "position", 2: "cube"}.get(len(meta["lines"]))
    if found != kind:
        raise RolloutError(f"cannot resume from {path}: it holds {_KINDS.get(found, 'another rollout')}, "
                           f"not {_KINDS[kind]}")
    return meta, saved_data


def load(path: str | Path, board: np.ndarray, lines: list[RolloutSettings]) -> list[TrialData]:
    """The trials of each line of a saved rollout of the same position and settings (trials
    may differ): one line for a position, two for a cube decision. Reads files of versions
    1 (one line) and 2 too."""
    meta, saved_data = _read(path, board, "position" if len(lines) == 1 else "cube")
    return _checked(path, lines, meta["lines"], saved_data)


def _checked(path: str | Path, lines: list[RolloutSettings], saved_lines: list[dict],
             saved_data: list[TrialData]) -> list[TrialData]:
    """Each line's saved trials below its trial count, if the settings agree (trials may differ)."""
    out = []
    for settings, saved_settings, data in zip(lines, saved_lines, saved_data):
        # Settings added since a file was written take their defaults: what that rollout used.
        saved = {**RolloutSettings().as_dict(), **saved_settings, "trials": settings.trials}
        if saved != settings.as_dict():
            diff = sorted(k for k in saved if saved[k] != settings.as_dict()[k])
            raise RolloutError(f"cannot resume from {path}: different settings ({', '.join(diff)})")
        keep = data.ids < settings.trials
        out.append(TrialData(*(getattr(data, f)[keep] for f in _FIELDS)))
    return out


def load_plays(path: str | Path, board: np.ndarray, dice: tuple[int, int],
               settings: RolloutSettings) -> list[tuple[np.ndarray, np.ndarray, bool, TrialData]]:
    """The plays of a saved rollout of this roll: each one's afterstate, steps, whether it
    stopped, and its trials, whole batches only (a batch cut short is run again)."""
    meta, saved_data = _read(path, board, "plays")
    if tuple(meta["plays"]["dice"]) != tuple(dice):
        raise RolloutError(f"cannot resume from {path}: it holds the plays of another roll")
    data = _checked(path, [settings] * len(saved_data), meta["lines"], saved_data)
    return [(np.array(p["afterstate"], dtype=np.int8), np.array(p["steps"], dtype=np.int8), bool(p["stopped"]),
             _drop(d, [(lo, hi) for lo, hi in batch_ranges(settings) if not has_batch(d, lo, hi)]))
            for p, d in zip(meta["plays"]["plays"], data)]


def resumed(path: str | Path | None, board: np.ndarray,
            lines: list[RolloutSettings]) -> tuple[list[TrialData], list[tuple[int, int]]]:
    """Each line's trials saved in `path` (if it exists) and the batches still to run: a
    batch not saved whole in every line is redone whole."""
    done = [TrialData.empty() for _ in lines]
    if path is not None and Path(path).exists():
        done = load(path, board, lines)
    todo = [(lo, hi) for lo, hi in batch_ranges(lines[0]) if not all(has_batch(d, lo, hi) for d in done)]
    return [_drop(d, todo) for d in done], todo


def has_batch(data: TrialData, lo: int, hi: int) -> bool:
    """Whether data holds every trial of the batch [lo, hi)."""
    return bool(np.isin(np.arange(lo, hi), data.ids).all())


def _drop(data: TrialData, ranges: list[tuple[int, int]]) -> TrialData:
    """data without the trials of these ranges."""
    keep = np.ones(len(data.ids), dtype=bool)
    for lo, hi in ranges:
        keep &= ~((data.ids >= lo) & (data.ids < hi))
    return TrialData(*(getattr(data, f)[keep] for f in _FIELDS))
