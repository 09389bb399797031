"""Fuzz: checkpoint files cut short, with one bit flipped, or written by hand with bad fields.

A file this program wrote is sealed (models.checkpoint.seal), so every truncation and every
single bit flip is refused with a CheckpointError, and through the command line with one
line on stderr and exit 2. A file from before the seal (models/default.pt) has only the
zip's CRC-32s: a flip in a record is refused, and a flip anywhere else is refused or
changes nothing that is read. A crafted payload is refused, or it is a net the format
allows and its outputs are finite probabilities; never a crash.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.encoder import ENCODER_VERSION
from engine.errors import CheckpointError
from engine.features import FEATURES_VERSION, N_FEATURES
from engine.position import Position
from models.checkpoint import Checkpoint, load_members, save_checkpoint, save_ensemble, seal
from models.network import TDNet
from scripts.cli import main

TRIED: dict[str, int] = {}
FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
OPENING = Position.start().id
INPUTS = torch.from_numpy(np.random.default_rng(0).random((8, 198 + N_FEATURES), dtype=np.float32))


def count(name: str) -> None:
    TRIED[name] = TRIED.get(name, 0) + 1


def net(hidden: int, seed: int, features: bool = True) -> TDNet:
    torch.manual_seed(seed)
    return TDNet(hidden, features)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The bytes of a sealed one-net checkpoint, a sealed ensemble and an unsealed file."""
    folder = tmp_path_factory.mktemp("ckpt")
    one = Checkpoint(net(4, 1), {"seed": 1, "hidden": 4}, 120, {"rng_states": [7], "wall_time": 1.5})
    save_checkpoint(folder / "one.pt", one)
    save_ensemble(folder / "ensemble.pt", [one, Checkpoint(net(3, 2))])
    buffer = io.BytesIO()
    torch.save(torch.load(folder / "one.pt", weights_only=True), buffer)   # as before the seal
    return {"one": (folder / "one.pt").read_bytes(), "ensemble": (folder / "ensemble.pt").read_bytes(),
            "unsealed": buffer.getvalue()}


def write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "fuzzed.pt"
    path.write_bytes(data)
    return path


def refused_by_cli(capsys: pytest.CaptureFixture, path: Path) -> str:
    """The one error line of `tdgammon eval --model PATH` (asserted: exit 2, one line)."""
    capsys.readouterr()
    code = main(["eval", OPENING, "--model", str(path)])
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert code == 2 and out == "" and len(lines) == 1, (code, err)
    assert lines[0].startswith("tdgammon eval: error: ") and path.name in lines[0] and len(lines[0]) < 500
    return lines[0]


def content(path: Path) -> list[tuple]:
    """What a load reads from a file: each member's weights, config, games and trainer state."""
    return [(sorted((k, v.numpy().tobytes()) for k, v in m.net.state_dict().items()), m.config,
             m.games_trained, m.trainer_state) for m in load_members(path)]


@FUZZ
@given(name=st.sampled_from(["one", "ensemble"]), data=st.data())
def test_fuzz_truncated_sealed_files_are_refused(files, tmp_path, capsys, name, data):
    whole = files[name]
    cut = data.draw(st.integers(0, len(whole) - 1))
    count("truncation")
    path = write(tmp_path, whole[:cut])
    with pytest.raises(CheckpointError):
        load_members(path)
    if cut % 4 == 0:
        count("truncation_cli")
        refused_by_cli(capsys, path)


@FUZZ
@given(name=st.sampled_from(["one", "ensemble"]), data=st.data())
def test_fuzz_bit_flipped_sealed_files_are_refused(files, tmp_path, capsys, name, data):
    flipped = bytearray(files[name])
    offset, bit = data.draw(st.integers(0, len(flipped) - 1)), data.draw(st.integers(0, 7))
    flipped[offset] ^= 1 << bit
    count("bit_flip")
    path = write(tmp_path, bytes(flipped))
    with pytest.raises(CheckpointError):
        load_members(path)
    if offset % 4 == 0:
        count("bit_flip_cli")
        refused_by_cli(capsys, path)


@pytest.mark.slow
def test_every_truncation_and_a_flip_in_every_byte_of_a_sealed_file(files, tmp_path):
    whole = files["one"]
    rng = np.random.default_rng(0)
    for cut in range(len(whole)):
        count("truncation_sweep")
        with pytest.raises(CheckpointError):
            load_members(write(tmp_path, whole[:cut]))
    for offset in range(len(whole)):
        flipped = bytearray(whole)
        flipped[offset] ^= 1 << int(rng.integers(8))
        count("bit_flip_sweep")
        with pytest.raises(CheckpointError):
            load_members(write(tmp_path, bytes(flipped)))


def record_spans(data: bytes) -> list[range]:
    """The byte ranges of each zip record's data (what its CRC-32 covers)."""
    spans = []
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            header = data[info.header_offset:info.header_offset + 30]
            start = info.header_offset + 30 + int.from_bytes(header[26:28], "little") + int.from_bytes(
                header[28:30], "little")
            spans.append(range(start, start + info.compress_size))
    return spans


@FUZZ
@given(data=st.data())
def test_fuzz_bit_flips_in_a_file_from_before_the_seal(files, tmp_path, data):
    whole = files["unsealed"]
    spans = record_spans(whole)
    in_record = data.draw(st.booleans())
    if in_record:
        span = data.draw(st.sampled_from(spans))
        offset = data.draw(st.integers(span.start, span.stop - 1))
    else:
        offset = data.draw(st.integers(0, len(whole) - 1))
    flipped = bytearray(whole)
    flipped[offset] ^= 1 << data.draw(st.integers(0, 7))
    path = write(tmp_path, bytes(flipped))
    if in_record or any(offset in span for span in spans):
        count("unsealed_record_flip")
        with pytest.raises(CheckpointError):
            load_members(path)
        return
    try:
        got = content(path)
    except CheckpointError:
        count("unsealed_header_flip_refused")
        return
    count("unsealed_header_flip_read_unchanged")
    assert got == content(write(tmp_path, whole))


# -- crafted payloads -------------------------------------------------------------------------

def valid_payload() -> dict:
    return {"format": "tdgammon-checkpoint", "format_version": 1, "encoder_version": ENCODER_VERSION,
            "architecture": {"kind": "TDNet", "hidden": 4, "features": FEATURES_VERSION},
            "state_dict": net(4, 3).state_dict(), "config": {"seed": 1}, "games_trained": 10,
            "trainer_state": {"rng_states": [5]}}


def valid_ensemble() -> dict:
    members = [valid_payload(), valid_payload()]
    return {**{k: members[0][k] for k in ("format", "format_version", "encoder_version")},
            "architecture": {"kind": "ensemble", "members": 2}, "members": members}


def paths(value: object, prefix: tuple = ()) -> list[tuple]:
    """Every place in a payload a crafted file could change: dict keys and list items, nested."""
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return []
    return [p for key, item in items for p in [prefix + (key,)] + paths(item, prefix + (key,))]


BAD_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-2**70, 2**70), st.sampled_from([-5, 0, 1, 2, 3, 9, 8193, 10**13]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8),
    st.lists(st.integers(-3, 3), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.sampled_from(["TDNet", "ensemble", "tdgammon-checkpoint"]),
    st.tuples(st.integers(0, 3), st.integers(0, 240), st.sampled_from([torch.float32, torch.float64, torch.int64]),
              st.sampled_from([0.0, float("nan"), float("inf"), 1e30])).map(
        lambda t: torch.full((t[0], t[1]) if t[0] else (t[1],), t[3]).to(t[2])),
)


@st.composite
def crafted(draw) -> dict:
    payload = draw(st.sampled_from([valid_payload, valid_ensemble]))()
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(paths(payload)))
        parent = payload
        for key in where[:-1]:
            parent = parent[key]
        if draw(st.integers(0, 4)) == 0 and isinstance(parent, dict):
            del parent[where[-1]]
        else:
            parent[where[-1]] = draw(BAD_VALUES)
    return payload


@FUZZ
@given(payload=crafted(), sealed=st.booleans())
def test_fuzz_crafted_payloads_are_refused_or_sound(tmp_path, capsys, payload, sealed):
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    path = write(tmp_path, seal(buffer.getvalue()) if sealed else buffer.getvalue())
    try:
        members = load_members(path)
    except CheckpointError:
        count("crafted_refused")
        refused_by_cli(capsys, path)
        return
    count("crafted_loaded_sound")
    for member in members:
        assert 1 <= member.net.n_hidden <= 8192 and member.games_trained >= 0
        assert isinstance(member.config, dict) and isinstance(member.trainer_state, dict)
        with torch.no_grad():
            probs = member.net(INPUTS[:, :member.net.hidden.in_features])
        assert torch.isfinite(probs).all() and (probs >= 0).all() and (probs <= 1).all()


def test_fuzz_checkpoint_counts(capsys):
    with capsys.disabled():
        print(f"\nfuzz checkpoint cases tried: {TRIED}")
