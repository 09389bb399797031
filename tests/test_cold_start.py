"""A command's start-up: what building the parser imports, interpreted kernels for one
position, and compiled kernels loaded from numba's cache in the next process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from models.loader import EVALUATORS
from scripts import cli

ROOT = Path(__file__).resolve().parent.parent
OPENING = "4HPwATDgc/ABMA"


def _python(code: str, env: dict | None = None) -> str:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          check=True, env=env).stdout


def test_building_the_parser_imports_no_command_dependencies() -> None:
    out = _python("import sys; from scripts.cli import build_parser; build_parser(); "
                  "print(' '.join(sorted(sys.modules)))").split()
    heavy = [m for m in out if m.split(".")[0] in ("torch", "numba", "fastapi", "uvicorn", "ray", "scipy")
             or m in ("training.distill", "engine.search", "models.inference")]
    assert heavy == []


def test_the_parser_constants_match_the_engine() -> None:
    from engine.search import MAX_PLY

    assert cli.MAX_PLY == MAX_PLY
    assert cli.EVALUATOR_NAMES == tuple(sorted(EVALUATORS))


def _hint_json(env_extra: dict) -> dict:
    env = dict(os.environ) | env_extra
    out = subprocess.run([sys.executable, "-m", "scripts.cli", "hint", OPENING, "31", "--json"], cwd=ROOT,
                         capture_output=True, text=True, check=True, env=env).stdout
    return json.loads(out)


def test_interpreted_hint_agrees_with_the_compiled_one() -> None:
    interpreted, compiled = _hint_json({}), _hint_json({"TDGAMMON_COMPILED": "1"})
    assert [m["move"] for m in interpreted["moves"]] == [m["move"] for m in compiled["moves"]]
    a = np.array([m["probs"] for m in interpreted["moves"]])
    b = np.array([m["probs"] for m in compiled["moves"]])
    assert np.abs(a - b).max() <= 2e-6  # rounded to 6 decimals; the nets agree to 1e-7


def test_interpreted_kernels_never_load_numba_and_play_the_same_rules() -> None:
    code = ("import sys, numpy as np; from engine import cache; assert cache.interpret_kernels(); "
            "from engine.position import Position, decode_position_id; from engine.movegen import generate; "
            "from engine.encoder import encode; "
            "b = decode_position_id('4HPwATDgc/ABMA'); a, s = generate(b, 6, 6); "
            "print('numba' in sys.modules, len(a), float(encode(a, True).sum()))")
    interpreted = _python(code).split()
    compiled = _python(code.replace("assert cache.interpret_kernels(); ", "")).split()
    assert interpreted[0] == "False"
    assert interpreted[1:] == compiled[1:]


def test_interpreting_after_a_compiled_kernel_changes_nothing() -> None:
    out = _python("from engine import cache; import engine.position; "
                  "print(cache.interpret_kernels(), cache.kernels_compiled())").split()
    assert out == ["False", "True"]


def test_compiled_kernels_load_from_the_cache_in_the_next_process(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"} | {"XDG_CACHE_HOME": str(tmp_path)}
    code = ("from engine.position import decode_position_id; from engine.movegen import generate, generate_into; "
            "generate(decode_position_id('4HPwATDgc/ABMA'), 3, 1); s = generate_into.stats; "
            "print(sum(s.cache_hits.values()), sum(s.cache_misses.values()))")
    first = _python(code, env).split()
    second = _python(code, env).split()
    assert first == ["0", "1"]    # compiled and saved
    assert second == ["1", "0"]   # loaded, not compiled


def test_the_web_game_loads_its_kernels_before_serving() -> None:
    from engine import search
    from models import inference
    from scripts.webapp.computer import load_game_evaluator, warm_up

    warm_up(load_game_evaluator(None))
    assert search._expand.signatures and inference._forward.signatures
