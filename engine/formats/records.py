"""Open a match record of either kind: gnubg's .sgf or a Jellyfish .mat, told apart by content."""

from __future__ import annotations

from pathlib import Path

from engine.errors import MatFileError
from engine.formats.matread import MatchRecord, read_mat
from engine.formats.sgfread import read_sgf


def read_record(text: str) -> MatchRecord:
    """An SGF collection starts with '(' (gnubg: '(;FF[4]GM[6]'); anything else is read as .mat."""
    return read_sgf(text) if text.lstrip().startswith("(") else read_mat(text)


def load_record(path: str | Path) -> MatchRecord:
    """read_record of a file; MatFileError (or SgfFileError) when it cannot be read."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise MatFileError(f"cannot read {path}: {err.strerror or err}") from None
    return read_record(text)
