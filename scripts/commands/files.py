"""Files a command writes when its work is done (pit --save, rollout --save, analyse --html):
checked before the work starts, so a bad path never costs the games or trials played."""

from __future__ import annotations

import os
from pathlib import Path

from engine.errors import TdgammonError


def check_writable(path: str, option: str, replaced: bool = False) -> None:
    """Fail now unless `path` names a file this process can create or overwrite. A new file
    is really created (and removed): os.access says yes to root everywhere, /proc included.
    A device that fails only on write (/dev/full) passes here; the command's final write
    then reports it after the results. With `replaced` (a file written to a temporary
    name and renamed over the old one) only a regular file will do: a rename would put a
    file in place of a device."""
    target = Path(path)
    if target.is_dir() or not target.parent.is_dir():
        raise TdgammonError(f"{option} {path}: cannot write a file there")
    if replaced and target.exists() and not target.is_file():
        raise TdgammonError(f"{option} {path}: not a regular file")
    if target.exists():
        if not os.access(target, os.W_OK):
            raise TdgammonError(f"{option} {path}: the file is not writable")
        return
    try:
        with open(target, "x"):
            pass
        target.unlink()
    except OSError as err:
        raise TdgammonError(f"{option} {path}: cannot write a file there ({err.strerror or err})") from None
