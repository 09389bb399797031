"""The `tdgammon` command: one subcommand per module `scripts/commands/<name>.py`.

Each module defines `register(subparsers)`, which adds its parser and sets `func`.
Arguments are parsed only here; every user mistake surfaces as a TdgammonError
(a ValueError subclass) and becomes one line on stderr with exit status 2. So does an
argparse error (`tdgammon CMD: error: ... (see --help)`). Each error line is flattened to
one line and the input it echoes is cut to ECHO_LIMIT characters (`one_line`). Warnings
(torch's, numpy's) are not printed: they would come before, and bury, that one line.
An unexpected exception is a bug: one line `internal error` and exit status 1
(TDGAMMON_TRACEBACK=1 shows the traceback).

Start-up is part of every command's answer time, so building the parser imports no
command's dependencies (no numba, torch, fastapi: each command imports them when it
runs), and a command whose work is small (one position at 1-ply) sets `small(args)`:
started from the command line, it then runs its kernels as plain Python
(engine.cache.interpret_kernels), which costs less than loading compiled ones
(TDGAMMON_COMPILED=1 keeps them compiled).
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import warnings

from engine.errors import TdgammonError

ECHO_LIMIT = 60
"""Longest piece of quoted input an error line repeats (longer ones end in '...')."""
LINE_LIMIT = 400
"""Longest error line as a whole."""
_QUOTED = re.compile(r"'(?:[^'\\]|\\.){%d,}'|\"(?:[^\"\\]|\\.){%d,}\"" % (ECHO_LIMIT + 1, ECHO_LIMIT + 1))

MAX_PLY = 3
"""The deepest search the commands offer (engine.search.MAX_PLY, kept here so the parser
does not import the search)."""
EVALUATOR_NAMES = ("pubeval", "random")
"""The built-in evaluators (models.loader.EVALUATORS), for the same reason."""

COMMANDS = ("bench", "eval", "hint", "train", "recipe", "moves", "show", "play", "pit", "serve", "rollout", "analyse")

PLY_HELP = ("1-ply scores every play with the network and takes the best (gnubg calls this "
            "0-ply); 2-ply also averages over the opponent's 21 rolls of its best reply "
            "(gnubg's 1-ply); 3-ply looks one roll deeper still (gnubg's 2-ply), about 40 "
            "times slower, for analysis")


def shorten(text: object, limit: int = ECHO_LIMIT) -> str:
    """`text` as it would be echoed in an error, cut to `limit` characters with '...'."""
    text = str(text)
    return text if len(text) <= limit else text[:limit] + "..."


def one_line(message: object) -> str:
    """An error message as one bounded line: newlines flattened, long quoted input cut."""
    text = str(message)
    if len(text) > 8 * LINE_LIMIT:   # keep the regex below cheap on a megabyte of input
        text = text[:4 * LINE_LIMIT] + " ... " + text[-LINE_LIMIT:]
    text = " ".join(text.split())
    text = _QUOTED.sub(lambda m: m.group(0)[:ECHO_LIMIT + 1] + "..." + m.group(0)[0], text)
    if len(text) > LINE_LIMIT:
        text = text[:LINE_LIMIT - 3] + "..."
    return text


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors: `tdgammon CMD: error: MESSAGE (see --help)`, exit 2."""

    def error(self, message: str):  # noqa: D102 - argparse's hook
        print(f"{self.prog}: error: {one_line(message)} (see --help)", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="tdgammon",
        description="TD-Gammon-style backgammon engine: rules, evaluation, training, play.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"scripts.commands.{name}").register(sub)
    parser.set_defaults(_commands=sub.choices)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command. With argv None (the process is the command) a small command may
    switch the process to interpreted kernels; a caller passing argv keeps its own mode."""
    with warnings.catch_warnings():
        if not os.environ.get("TDGAMMON_WARNINGS"):
            warnings.simplefilter("ignore")
        return _main(argv, from_command_line=argv is None)


def _main(argv: list[str] | None, from_command_line: bool = False) -> int:
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if extra:   # reported by the command's own parser: `tdgammon CMD: error: ...`
            args._commands[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    except SystemExit as exit_:   # --help (0) or a usage error (2, its one line printed)
        return exit_.code if isinstance(exit_.code, int) else 2
    small = getattr(args, "small", None)
    if from_command_line and small is not None and small(args) and not os.environ.get("TDGAMMON_COMPILED"):
        from engine.cache import interpret_kernels

        interpret_kernels()
    try:
        result = args.func(args)
    except TdgammonError as err:
        print(f"tdgammon {args.command}: error: {one_line(err)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"tdgammon {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as err:   # a bug, not bad input: still one line (a traceback on request)
        if os.environ.get("TDGAMMON_TRACEBACK"):
            raise
        print(f"tdgammon {args.command}: internal error: {type(err).__name__}: {one_line(err)} "
              "(TDGAMMON_TRACEBACK=1 shows where)", file=sys.stderr)
        return 1
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
