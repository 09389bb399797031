"""README.md's examples run as written and print what the README shows.

Every `tdgammon moves|show|eval|hint ...` command in a fenced ```sh block of README.md
(also after `&&`, as in the quick start) is run through scripts.cli.main and must exit 0.
When a ```text block follows the command's block, it is the output the README promises:
its lines must appear in the real output, in order; a line `...` stands for any number
of lines left out, and lines not separated by `...` must be consecutive. Numbers may
differ by 2e-4 (the last printed digit of a probability), nothing else may.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from scripts.cli import main

README = Path(__file__).resolve().parent.parent / "README.md"
CHECKED = ("moves", "show", "eval", "hint")
TEST_COMMAND = 'pip install torch==2.13.0 -e ".[test,distributed]" && python -m pytest -q'
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
NUMBER = re.compile(r"^[+-]?\d+(\.\d+)?%?$")


def blocks(text: str) -> list[tuple[str, str]]:
    """The fenced blocks of a markdown text, as (language, body), in order."""
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(text)]


def examples() -> list[tuple[str, list[str] | None]]:
    """(command line, expected output lines or None) for each checked command."""
    found = []
    fenced = blocks(README.read_text())
    for i, (lang, body) in enumerate(fenced):
        if lang != "sh":
            continue
        following = fenced[i + 1] if i + 1 < len(fenced) else None
        expected = following[1].rstrip("\n").split("\n") if following and following[0] == "text" else None
        commands = [part.strip() for line in body.splitlines() for part in line.split("&&")]
        commands = [c for c in commands
                    if c.startswith("tdgammon ") and c.split()[1] in CHECKED]
        for command in commands:
            # the promised output belongs to the block's last command
            found.append((command, expected if command == commands[-1] else None))
    return found


def same_line(expected: str, actual: str) -> bool:
    want, got = expected.split(), actual.split()
    if len(want) != len(got):
        return False
    for w, g in zip(want, got):
        if w == g:
            continue
        if NUMBER.match(w) and NUMBER.match(g) and w.endswith("%") == g.endswith("%"):
            if abs(float(w.rstrip("%")) - float(g.rstrip("%"))) <= 2e-4 + 1e-12:
                continue
        return False
    return True


def matches(expected: list[str], actual: list[str]) -> bool:
    """Expected lines, with `...` elisions, found in order in the actual lines."""
    segments, current = [], []
    for line in expected:
        if line.strip() == "...":
            segments.append(current)
            current = []
        else:
            current.append(line)
    segments.append(current)
    position = 0
    for k, segment in enumerate(segments):
        if not segment:
            continue
        anchored = k == 0  # no `...` before the first segment: it starts the output
        starts = [position] if anchored else range(position, len(actual) - len(segment) + 1)
        for start in starts:
            window = actual[start:start + len(segment)]
            if len(window) == len(segment) and all(map(same_line, segment, window)):
                position = start + len(segment)
                break
        else:
            return False
    return not segments[-1] or position == len(actual)  # no trailing `...`: it ends the output


EXAMPLES = examples()


def test_readme_has_an_example_of_each_command():
    shown = {command.split()[1] for command, _ in EXAMPLES}
    assert shown >= set(CHECKED), f"README has no example of {set(CHECKED) - shown}"


@pytest.mark.parametrize("command,expected", EXAMPLES, ids=[c for c, _ in EXAMPLES])
def test_readme_example_runs_as_shown(command, expected, capsys):
    status = main(shlex.split(command)[1:])
    out, err = capsys.readouterr()
    assert status == 0, f"{command} exited {status}: {err}"
    assert out.strip(), f"{command} printed nothing"
    if expected is not None:
        actual = out.rstrip("\n").split("\n")
        assert matches(expected, actual), (
            f"{command} no longer prints what README.md shows.\nREADME:\n"
            + "\n".join(expected) + "\nactual:\n" + out)


def test_readme_setup_commands_come_first():
    lines = README.read_text().splitlines()
    head = "\n".join(lines[:40])
    assert TEST_COMMAND in lines, "CI runs the README's test command: keep it exactly"
    assert TEST_COMMAND in head
    assert "pip install torch==2.13.0 -e . && tdgammon" in head
    assert len(lines) <= 200


def test_matcher():
    actual = ["a 0.5000", "b", "c", "d +0.1234"]
    assert matches(["a 0.5001", "...", "d +0.1234"], actual)
    assert matches(["...", "b", "c", "..."], actual)
    assert not matches(["a 0.5003", "..."], actual)
    assert not matches(["b", "..."], actual)          # must start the output
    assert not matches(["...", "b", "d +0.1234"], actual)  # not consecutive
    assert not matches(["a 0.5000", "...", "c"], actual)   # must end the output
