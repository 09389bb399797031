"""Typed errors for bad input. The command line turns any of these into one line and exit 2."""


class TdgammonError(ValueError):
    """Base of every user-facing input error."""


class PositionIdError(TdgammonError):
    """A gnubg Position ID that cannot be decoded into a legal board."""


class DiceError(TdgammonError):
    """A roll that is not two dice of 1..6."""


class MoveError(TdgammonError):
    """A move in notation that is malformed or not legal in the position."""


class ConfigError(TdgammonError):
    """An unknown key, a wrong type or a bad value in a run configuration."""


class CheckpointError(TdgammonError):
    """A missing, corrupt, truncated or mismatched checkpoint."""


class MatchIdError(TdgammonError):
    """A gnubg Match ID that cannot be decoded into a legal match state."""


class CubeError(TdgammonError):
    """Impossible cube or match settings (cube value, owner, score, match length)."""


class MatFileError(TdgammonError):
    """A .mat match file that cannot be read or replayed (the message names the line)."""


class SgfFileError(MatFileError):
    """A gnubg .sgf match file that cannot be read or replayed (the message names the line)."""
