"""A GNU Backgammon process as an oracle and opponent: engine/gnubg/driver.py runs inside
`gnubg -t -q -p` and answers one request a line over pipes.

`GnubgPlayer` plays gnubg.findbestmove at PLIES (gnubg's numbering, default 0), cubeless,
no noise. In games with the cube it is also a cube decider: it asks gnubg for its
cubeful analysis of the position (gnubg.cfevaluate at the same PLIES, `cube_analysis`)
and doubles and takes as that analysis says. gnubg is a yardstick only: nothing it
answers goes into training.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from engine.cube.equity import CubeInfo
from engine.errors import TdgammonError
from engine.game import index_of_play
from engine.notation import apply_moves
from engine.position import Position

GNUBG = "/usr/games/gnubg"
DRIVER = Path(__file__).resolve().parent / "driver.py"


@dataclass(frozen=True)
class GnubgCube:
    """gnubg's cube analysis: normalised equities of No double, Double/Take, Double/Pass,
    its cubeless probabilities at the same plies, and its wording of the proper action."""

    no_double: float
    double_take: float
    double_pass: float
    probs: tuple[float, ...]
    action: str

    @property
    def double(self) -> bool:
        """Doubling is right: the opponent's best answer is worth at least No double."""
        return min(self.double_take, self.double_pass) >= self.no_double

    @property
    def take(self) -> bool:
        """The double is a take (gnubg passes at an exact tie)."""
        return self.double_take < self.double_pass


class GnubgProcess:
    """One gnubg process running engine/gnubg/driver.py; best moves over pipes."""

    def __init__(self, gnubg: str | None = None) -> None:
        gnubg = gnubg or GNUBG
        if shutil.which(gnubg) is None:
            raise TdgammonError(f"gnubg is not installed ({gnubg} not found)")
        self.stderr = tempfile.TemporaryFile(mode="w+")  # a file, so gnubg never blocks on it
        self.proc = subprocess.Popen(
            [gnubg, "-t", "-q", "-p", str(DRIVER)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=self.stderr, text=True, bufsize=1)
        self._read("READY")

    def _read(self, word: str) -> str:
        """The next reply starting with `word`, past gnubg's own output; raises on ERROR."""
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise TdgammonError(f"gnubg exited unexpectedly ({self._last_words()})")
            if line.startswith("ERROR "):
                raise RuntimeError(f"gnubg: {line[6:].rstrip()}")
            if line.startswith(word + " ") or line.rstrip("\n") == word:
                return line.rstrip("\n")

    def best_moves(self, position: Position, dice: tuple[int, int], plies: int) -> list[tuple[int, int]]:
        """gnubg's best play as (from, to) points, 25 = bar, 0 = off; [] when none is legal."""
        self.proc.stdin.write(f"{position.id} {dice[0]} {dice[1]} {plies}\n")
        self.proc.stdin.flush()
        line = self._read("MOVE")
        nums = [int(x) for x in line.split()[1:]]
        return list(zip(nums[0::2], nums[1::2]))

    def equity(self, position: Position, plies: int) -> float:
        """gnubg's cubeless equity for the side on roll of `position`, at PLIES (its numbering)."""
        self.proc.stdin.write(f"EVAL {position.id} {plies}\n")
        self.proc.stdin.flush()
        return float(self._read("EQUITY").split()[1])

    def cube_analysis(self, position: Position, cube: CubeInfo, plies: int) -> GnubgCube:
        """gnubg's cubeful analysis of the cube decision of the side on roll, at PLIES."""
        mine, theirs = cube.score
        self.proc.stdin.write(f"CUBE {position.id} {plies} {cube.value} {cube.owner} {cube.match_length} "
                              f"{mine} {theirs} {int(cube.crawford)} {int(cube.jacoby)}\n")
        self.proc.stdin.flush()
        words = self._read("CUBEFUL").split(" ", 9)
        nums = [float(x) for x in words[1:9]]
        return GnubgCube(nums[0], nums[1], nums[2], tuple(nums[3:8]), words[9] if len(words) > 9 else "")

    def _last_words(self) -> str:
        """gnubg's exit status and the last line it wrote to stderr: why it stopped."""
        status = self.proc.wait()
        self.stderr.seek(0)
        lines = [line.strip() for line in self.stderr.read().splitlines() if line.strip()]
        return f"status {status}" + (f": {lines[-1]}" if lines else "")

    def close(self) -> None:
        self.stderr.close()
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=10)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


class GnubgPlayer:
    """engine.game Player backed by a gnubg process at `plies` (gnubg's numbering)."""

    def __init__(self, plies: int = 0, process: GnubgProcess | None = None) -> None:
        self.plies = plies
        self.process = process or GnubgProcess()
        self.name = f"gnubg:{plies}"

    def choose(self, position: Position, dice: tuple[int, int], plays) -> int:
        moves = self.process.best_moves(position, dice, self.plies)
        after = apply_moves(position.board, moves)
        return index_of_play(plays, after, self.name)

    def should_double(self, position: Position, cube: CubeInfo) -> bool:
        """Cube decider: double when gnubg's cubeful analysis at `plies` says so."""
        return cube.may_double() and self.process.cube_analysis(position, cube, self.plies).double

    def accepts(self, position: Position, cube: CubeInfo) -> bool:
        """Cube decider: take when gnubg's analysis from the doubler's side says take."""
        return self.process.cube_analysis(position, cube, self.plies).take

    def close(self) -> None:
        self.process.close()
