"""Fuzz: every run-configuration key with bad values (wrong types, NaN, infinities,
negatives, huge numbers, out of range). Each is refused with one ConfigError line, from
Python (TrainConfig.from_dict) and from a TOML file through `tdgammon train --config`, and
no run directory is made."""

from __future__ import annotations

import json
import math
from dataclasses import fields

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import ConfigError
from scripts.cli import main
from training.config import RANGES, TrainConfig

TRIED: dict[str, int] = {}
FIELDS = {f.name: f.type for f in fields(TrainConfig)}


def bad_values(name: str) -> st.SearchStrategy:
    kind = FIELDS[name]
    wrong_type = st.one_of(st.text(max_size=10), st.lists(st.integers(), max_size=3),
                           st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
    if kind == "bool":
        return st.one_of(wrong_type, st.integers(), st.floats())
    lo, hi, lo_open = RANGES[name]
    if kind == "int":
        return st.one_of(wrong_type, st.booleans(), st.floats(), st.integers(max_value=int(lo) - 1),
                         st.integers(min_value=int(hi) + 1),
                         st.sampled_from([-1, -2**63, 2**63, 2**64, 10**20, 10**400]).filter(
                             lambda v: not lo <= v <= hi))
    below = st.floats(max_value=lo).filter(lambda v: v < lo or (lo_open and v == lo))
    return st.one_of(wrong_type, st.booleans(), st.just(math.nan), st.just(math.inf), st.just(-math.inf),
                     below, st.floats(min_value=hi, exclude_min=True), st.integers(max_value=int(lo) - 1),
                     st.integers(min_value=int(hi) + 1), st.just(10**400))


@st.composite
def bad_item(draw) -> tuple[str, object]:
    name = draw(st.sampled_from(sorted(FIELDS)))
    return name, draw(bad_values(name))


def toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value)
    return str(value)


@settings(max_examples=600, deadline=None)
@given(bad_item())
def test_fuzz_config_from_dict_refuses_bad_values(item):
    name, value = item
    TRIED["from_dict"] = TRIED.get("from_dict", 0) + 1
    with pytest.raises(ConfigError) as err:
        TrainConfig.from_dict({name: value})
    message = str(err.value)
    assert "\n" not in message and len(message) < 300 and repr(name) in message


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bad_item())
def test_fuzz_train_config_file_refuses_bad_values(tmp_path, capsys, item):
    name, value = item
    TRIED["train_config_file"] = TRIED.get("train_config_file", 0) + 1
    path = tmp_path / "bad.toml"
    path.write_text(f"{name} = {toml_value(value)}\n")
    out_dir = tmp_path / "run"
    code = main(["train", "--config", str(path), "--out", str(out_dir), "--no-progress"])
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert code == 2 and len(lines) == 1, (name, value, err)
    assert lines[0].startswith("tdgammon train: error: ") and len(lines[0]) < 500, lines
    assert not out_dir.exists()


def test_every_field_has_a_range_or_is_a_bool():
    assert {n for n, t in FIELDS.items() if t != "bool"} == set(RANGES)


def test_fuzz_config_counts(capsys):
    with capsys.disabled():
        print(f"\nfuzz config cases tried: {TRIED}")
