"""Reading gnubg's `.sgf` match files (`save match`) into the record a `.mat` file gives.

SGF (FF[4]) with GM[6] = backgammon, as gnubg writes it: one game tree per game. The
root node holds MI[length:N][game:K][ws:W][bs:B] (match length, 0 = money; the game's
number from 0; White's and Black's score before it), PW / PB (the names), RU[...]
(`Crawford`, `CrawfordGame` marks the Crawford game; variants are refused) and RE[W+2]
or RE[B+1R] (winner, points, R = resigned). Each further node is one action:

    W[52mhmj]   White rolls 5-2 and plays m->h, m->j (a bare W[52]: no legal play)
    B[double]   B[take]   B[drop]

Point letters are from the mover's side: a..x the points (White's `a` is his 1-point,
Black's `x` is his), `y` the bar, `z` off. White is gnubg's player 0, the left column of
its `.mat` export. Analysis, marks, luck and comments (A, DA, MR, LU, GS, ...) are
skipped; position setup (AB, AW, AE, PL, CV, CP, DI) is refused. Every play is replayed
and checked by engine.formats.matread's GameReplay, so an .sgf and the .mat of the same
match give the same record. Anything malformed raises SgfFileError naming the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from engine.errors import SgfFileError
from engine.formats.matread import GameReplay, MatchGameRecord, MatchRecord

SETUP = ("AB", "AW", "AE", "PL", "CV", "CP", "DI")
"""Properties that set up a position or cube: a game that does not start from the opening."""
VARIANTS = ("Nackgammon", "Hypergammon1", "Hypergammon2", "Hypergammon3", "NoCube")
_RESULT = re.compile(r"^([WB])\+(\d+)(R?)$")
_ROLL = re.compile(r"^([1-6])([1-6])((?:[a-z]{2}){0,4})$")


@dataclass
class Node:
    """One SGF node: the line it starts on and its properties (name -> values)."""

    line: int
    props: dict[str, list[str]]

    def first(self, name: str) -> str | None:
        values = self.props.get(name)
        return values[0] if values else None


class _Lexer:
    """SGF text -> game trees, each as its main line of nodes (the first variation at a fork)."""

    def __init__(self, text: str) -> None:
        self.text, self.i, self.line = text, 0, 1

    def fail(self, message: str, line: int | None = None) -> None:
        raise SgfFileError(f"line {self.line if line is None else line}: {message}")

    def peek(self) -> str:
        while self.i < len(self.text) and self.text[self.i].isspace():
            self.line += self.text[self.i] == "\n"
            self.i += 1
        return self.text[self.i] if self.i < len(self.text) else ""

    def collection(self) -> list[list[Node]]:
        trees = []
        while self.peek() == "(":
            trees.append(self.tree())
        rest = self.peek()
        if rest:
            self.fail(f"expected '(' to start a game tree, got {self.text[self.i:self.i + 20]!r}")
        if not trees:
            self.fail("no game tree: an .sgf file starts with '(;'")
        return trees

    def tree(self) -> list[Node]:
        self.i += 1   # '('
        nodes = []
        while self.peek() == ";":
            self.i += 1
            nodes.append(self.node())
        if not nodes:
            self.fail("a game tree with no node (expected ';')")
        main: list[Node] | None = None
        while self.peek() == "(":
            branch = self.tree()
            main = branch if main is None else main
        if self.peek() != ")":
            found = self.text[self.i:self.i + 20]
            self.fail(f"expected ')' to close the game tree, got {found!r}" if found
                      else "the file ends inside a game tree")
        self.i += 1
        return nodes + (main or [])

    def node(self) -> Node:
        self.peek()
        node = Node(self.line, {})
        while self.peek().isalpha():
            start = self.i
            while self.i < len(self.text) and self.text[self.i].isalpha():
                self.i += 1
            name = self.text[start:self.i]
            if not name.isupper():
                self.fail(f"property name {name!r} is not upper case")
            values = []
            while self.peek() == "[":
                values.append(self.value())
            if not values:
                self.fail(f"property {name} has no [value]")
            node.props.setdefault(name, []).extend(values)
        return node

    def value(self) -> str:
        start_line = self.line
        self.i += 1   # '['
        out = []
        while self.i < len(self.text):
            c = self.text[self.i]
            if c == "]":
                self.i += 1
                return "".join(out)
            if c == "\\" and self.i + 1 < len(self.text):
                self.i += 1
                c = self.text[self.i]
            self.line += c == "\n"
            out.append(c)
            self.i += 1
        self.fail("a [value] is never closed with ']'", start_line)
        return ""


def _point(letter: str, side: int) -> int:
    """An SGF point letter -> the mover's point number (25 = bar, 0 = off)."""
    if letter == "y":
        return 25
    if letter == "z":
        return 0
    index = ord(letter) - ord("a")
    return index + 1 if side == 0 else 24 - index


def _int_field(node: Node, info: dict[str, str], key: str, default: int = 0) -> int:
    text = info.get(key)
    if text is None:
        return default
    if not text.isdigit():
        raise SgfFileError(f"line {node.line}: MI[{key}:{text}] is not a number")
    return int(text)


def _read_game(nodes: list[Node], index: int,
               record: MatchRecord | None) -> tuple[MatchGameRecord, int, tuple[str, str]]:
    """Replay one game tree; (the game, the match length, the names)."""
    root = nodes[0]
    if root.first("GM") != "6":
        raise SgfFileError(f"line {root.line}: not a backgammon game (GM[{root.first('GM') or ''}]; "
                           "gnubg writes GM[6])")
    info = dict(v.partition(":")[::2] for v in root.props.get("MI", []))
    length = _int_field(root, info, "length")
    names = (root.first("PW") or "White", root.first("PB") or "Black")
    score = (_int_field(root, info, "ws"), _int_field(root, info, "bs"))
    rules = set((root.first("RU") or "").split(":"))
    variant = sorted(rules & set(VARIANTS))
    if variant:
        raise SgfFileError(f"line {root.line}: RU[{root.first('RU')}]: the {variant[0]} variant is not supported")
    if length and max(score) >= length:
        raise SgfFileError(f"line {root.line}: score {score[0]}-{score[1]} is past the {length}-point match")
    if record is not None:
        if length != record.match_length:
            raise SgfFileError(f"line {root.line}: MI[length:{length}] differs from the first game's "
                               f"{record.match_length}")
        if names != record.names:
            raise SgfFileError(f"line {root.line}: players {names} differ from the first game's {record.names}")
    game = MatchGameRecord(_int_field(root, info, "game", index) + 1, score, bool(length) and "CrawfordGame" in rules)
    replay = GameReplay(game, SgfFileError)
    for node in nodes:
        setup = [name for name in SETUP if name in node.props]
        if setup:
            raise SgfFileError(f"line {node.line}: position setup ({setup[0]}[...]) is not supported: "
                               "only games from the opening position are read")
        for name, side in (("W", 0), ("B", 1)):
            if name in node.props:
                _read_action(replay, node, node.props[name][0], side)
    result = root.first("RE")
    if result:
        m = _RESULT.match(result.strip())
        if m is None:
            raise SgfFileError(f"line {root.line}: RE[{result}] is not a result like W+2 or B+1R")
        replay.finish(0 if m.group(1) == "W" else 1, int(m.group(2)), root.line)
    return game, length, names


def _read_action(replay: GameReplay, node: Node, value: str, side: int) -> None:
    action = value.strip()
    if action == "double":
        replay.add("double", side, node.line, cube_to=2 * replay.cube)
    elif action in ("take", "drop"):
        replay.add(action, side, node.line)
    else:
        m = _ROLL.match(action)
        if m is None:
            raise SgfFileError(f"line {node.line}: {'BW'[side == 0]}[{value}] is not a roll and play "
                               "(like 52mhmj), double, take or drop")
        pairs = m.group(3)
        steps = [f"{_point(pairs[k], side)}/{_point(pairs[k + 1], side)}" for k in range(0, len(pairs), 2)]
        replay.add("move", side, node.line, dice=(int(m.group(1)), int(m.group(2))), play=" ".join(steps))


def read_sgf(text: str) -> MatchRecord:
    """Parse and replay every game of a gnubg .sgf file; SgfFileError (naming the line) on any fault."""
    record: MatchRecord | None = None
    for index, nodes in enumerate(_Lexer(text).collection()):
        game, length, names = _read_game(nodes, index, record)
        if record is None:
            record = MatchRecord(length, names, [])
        elif record.games[-1].winner is None:
            raise SgfFileError(f"line {nodes[0].line}: game {record.games[-1].number} has no result (RE[...])")
        record.games.append(game)
    assert record is not None
    return record


def load_sgf(path: str | Path) -> MatchRecord:
    """read_sgf of a file; SgfFileError when it cannot be read."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise SgfFileError(f"cannot read {path}: {err.strerror or err}") from None
    return read_sgf(text)
