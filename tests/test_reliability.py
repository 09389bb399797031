"""The README's promises under bad input: one line on stderr and exit 2, a protocol server
that answers garbage with `Error:` and keeps serving, checkpoints that a diverged run
never overwrites, metrics that a kill does not duplicate."""

from __future__ import annotations

import json
import socket
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from engine.errors import PositionIdError, TdgammonError
from engine.features import FEATURES_VERSION
from engine.formats.fibs import FibsBoardError, fibs_line, parse_fibs_board
from engine.game import play_game
from engine.gnubg.extbot import ExternalBot
from engine.position import Position, decode_position_id
from engine.pubeval import PubevalEvaluator
from scripts.cli import main
from scripts.commands.serve import serve_forever
from training.config import TrainConfig, load_config

OPENING = "4HPwATDgc/ABMA"
GOOD_LINE = fibs_line(Position.from_id(OPENING).board, (3, 1))
TINY = dict(seed=3, hidden=8, games=40, workers=1, chunk_games=10, checkpoint_every=20,
            eval_every=0, eval_games=0, lr_decay_games=0)


def cli(capsys, argv):
    """(exit status, stdout, stderr lines) of `tdgammon ARGV`."""
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err.splitlines()


def assert_one_error_line(code, err, command):
    assert code == 2, err
    assert len(err) == 1 and err[0].startswith(f"tdgammon {command}: error: "), err
    assert "Traceback" not in err[0]


def with_field(line: str, index: int, value: object) -> str:
    parts = line.split(":")
    parts[index] = str(value)
    return ":".join(parts)


# -- 1. FIBS lines: every field in range, the bot answers every line --------------------------

@pytest.mark.parametrize("value", [128, -10**20, 261, -251, 16, -16, 10**20])
def test_fibs_board_value_out_of_range_is_refused(value):
    line = with_field(GOOD_LINE, 10, value)
    with pytest.raises(FibsBoardError):
        parse_fibs_board(line)
    answer = ExternalBot(PubevalEvaluator()).respond(line)
    assert answer.startswith("Error: ") and "\n" not in answer


@pytest.mark.parametrize("index,value", [(3, -1), (3, 10**6), (4, 10**12), (32, 2), (37, 8192),
                                         (37, 3), (38, 2), (40, 2), (42, 5), (43, 26), (45, 16),
                                         (48, 16), (49, 5), (50, 2), (51, 2), (52, -1)])
def test_fibs_other_fields_out_of_range_are_refused(index, value):
    with pytest.raises(FibsBoardError):
        parse_fibs_board(with_field(GOOD_LINE, index, value))


def test_fibs_match_scores_must_be_below_the_match_length():
    line = with_field(with_field(GOOD_LINE, 3, 7), 4, 7)
    with pytest.raises(FibsBoardError, match="below the match length"):
        parse_fibs_board(line)


def test_fibs_line_round_trips_the_board():
    board = Position.from_id(OPENING).board
    fb = parse_fibs_board(fibs_line(board, (6, 5)))
    assert (fb.position_board() == board).all() and fb.dice() == (6, 5)


def test_bot_answers_an_internal_failure_and_keeps_serving(monkeypatch):
    bot = ExternalBot(PubevalEvaluator())

    def boom(line):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(bot, "_respond", boom)
    assert bot.respond(GOOD_LINE).startswith("Error: internal error (ZeroDivisionError")
    monkeypatch.undo()
    assert bot.respond(GOOD_LINE) == "8/5 6/5"


# -- serve: threads, bounded lines, idle timeout, load ------------------------------------------

def start_server(bot, connections=0, concurrent=8, idle_timeout=30.0, max_line=4096):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(128)
    thread = threading.Thread(target=serve_forever, daemon=True,
                              args=(srv, bot, connections, concurrent, idle_timeout, None, None, max_line))
    thread.start()
    return srv, thread


class Client:
    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.file = self.sock.makefile("rb")

    def ask(self, line: str | bytes) -> str:
        self.sock.sendall((line.encode() if isinstance(line, str) else line) + b"\n")
        return self.file.readline().decode().rstrip("\n")

    def close(self) -> None:
        self.file.close()
        self.sock.close()


def test_serve_answers_garbage_and_keeps_serving():
    srv, thread = start_server(ExternalBot(PubevalEvaluator()), connections=1, max_line=1000)
    client = Client(srv.getsockname()[1])
    try:
        assert client.ask(with_field(GOOD_LINE, 10, 128)).startswith("Error: ")
        assert client.ask("board:" + "9" * 400).startswith("Error: ")
        assert client.ask(b"\xff\xfe garbage").startswith("Error: ")
        assert client.ask("x" * 5000) == "Error: line longer than 1000 bytes"
        # A long line sent in pieces is refused once and skipped through its newline.
        client.sock.sendall(b"y" * 3000)
        client.sock.sendall(b"y" * 3000 + b"\n")
        assert client.file.readline() == b"Error: line longer than 1000 bytes\n"
        assert client.ask(GOOD_LINE) == "8/5 6/5"
    finally:
        client.close()
    thread.join(timeout=30)
    assert not thread.is_alive()
    srv.close()


def test_serve_closes_an_idle_connection_and_serves_the_next():
    srv, thread = start_server(ExternalBot(PubevalEvaluator()), connections=2, idle_timeout=0.5)
    port = srv.getsockname()[1]
    idle = Client(port)
    assert idle.ask(GOOD_LINE) == "8/5 6/5"
    assert idle.file.readline() == b""          # closed by the server after 0.5 s of silence
    idle.close()
    second = Client(port)
    assert second.ask(GOOD_LINE) == "8/5 6/5"
    second.close()
    thread.join(timeout=30)
    assert not thread.is_alive()
    srv.close()


def game_lines(seed: int) -> list[str]:
    """The board lines of one pubeval self-play game: a roll line and a play line per turn."""
    class Pubeval:
        name = "pubeval"

        def __init__(self):
            from engine.search import best_play
            self.evaluator, self.best_play = PubevalEvaluator(), best_play

        def choose(self, position, dice, plays):
            best = self.best_play(position.board, dice, self.evaluator, 1)
            return next(i for i, p in enumerate(plays) if Position(p.after.board) == Position(best.afterstate))

    record = play_game(Pubeval(), Pubeval(), np.random.default_rng(seed))
    lines = []
    for turn in record.turns:
        lines.append(fibs_line(turn.position.board))
        lines.append(fibs_line(turn.position.board, turn.dice))
    return lines


def test_an_idle_client_does_not_block_others_served_at_once():
    """Six clients connected together, one of them silent: the other five are all answered."""
    srv, thread = start_server(ExternalBot(PubevalEvaluator()), connections=6, concurrent=6, idle_timeout=30.0)
    port = srv.getsockname()[1]
    idle = Client(port)
    answers, clients = [], [Client(port) for _ in range(5)]
    workers = [threading.Thread(target=lambda c=c: answers.append(c.ask(GOOD_LINE))) for c in clients]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=60)
    assert answers == ["8/5 6/5"] * 5
    for c in clients + [idle]:
        c.close()
    thread.join(timeout=30)
    assert not thread.is_alive()
    srv.close()


@pytest.mark.slow
def test_serve_load_50_concurrent_clients_each_a_full_game():
    bot = ExternalBot(PubevalEvaluator())
    srv, thread = start_server(bot, connections=50, concurrent=50)
    port = srv.getsockname()[1]
    games = [game_lines(seed) for seed in range(5)]
    answers: dict[int, list[str]] = {}
    failures = []

    def client(k: int) -> None:
        try:
            c = Client(port)
            answers[k] = [c.ask(line) for line in games[k % len(games)]]
            c.close()
        except Exception as err:  # noqa: BLE001 - reported below
            failures.append((k, repr(err)))

    start = time.perf_counter()
    clients = [threading.Thread(target=client, args=(k,)) for k in range(50)]
    for c in clients:
        c.start()
    for c in clients:
        c.join(timeout=300)
    elapsed = time.perf_counter() - start
    assert not failures
    assert len(answers) == 50
    total = sum(len(a) for a in answers.values())
    assert total == sum(len(games[k % 5]) for k in range(50))
    for k, got in answers.items():
        lines = games[k % 5]
        assert not any(a.startswith("Error") for a in got), k
        rolls = [a for line, a in zip(lines, got) if parse_fibs_board(line).dice() == (0, 0)]
        assert set(rolls) == {"roll"}
    # Every client of the same game got the same answers.
    for k in range(5, 50):
        assert answers[k] == answers[k % 5]
    thread.join(timeout=60)
    assert not thread.is_alive()
    srv.close()
    print(f"50 clients, {total} lines answered in {elapsed:.1f} s")


def test_serve_refuses_negative_connections(capsys):
    code, out, err = cli(capsys, ["serve", "--gnubg", "localhost:0", "--connections", "-1"])
    assert_one_error_line(code, err, "serve")
    code, out, err = cli(capsys, ["serve", "--gnubg", "localhost:0", "--idle-timeout", "nan"])
    assert_one_error_line(code, err, "serve")


# -- 2. a bad learning rate never reaches a checkpoint ------------------------------------------

@pytest.mark.parametrize("text", ["lr = nan", "lr = inf", "lr_end = -inf", "td_lambda = nan",
                                  "epsilon = 1.5", "new_inputs_lr_scale = 0.0"])
def test_config_refuses_non_finite_and_out_of_range_floats(tmp_path, capsys, text):
    path = tmp_path / "c.toml"
    path.write_text(text + "\n")
    with pytest.raises(TdgammonError):
        load_config(path)
    code, out, err = cli(capsys, ["train", "--config", str(path), "--out", str(tmp_path / "run")])
    assert_one_error_line(code, err, "train")
    assert not (tmp_path / "run").exists()


def test_nan_learning_rate_stops_training_and_keeps_the_checkpoint(tmp_path):
    from training.trainer import Trainer

    out = tmp_path / "run"
    Trainer(TrainConfig(**TINY), out, progress=False).run()
    ckpt = out / "checkpoint.pt"
    good = ckpt.read_bytes()
    metrics = (out / "metrics.jsonl").read_text()
    bad = TrainConfig(**TINY)
    object.__setattr__(bad, "lr", float("nan"))      # as if it slipped past validation
    trainer = Trainer(bad, out, resume=ckpt, total_games=100, progress=False)
    with pytest.raises(TdgammonError, match="NaN or infinite.*keeps the last good state"):
        trainer.run()
    assert ckpt.read_bytes() == good
    assert (out / "metrics.jsonl").read_text() == metrics
    assert not list(out.glob("*.tmp"))


def test_training_refuses_to_start_from_non_finite_weights(tmp_path):
    from models.checkpoint import load_checkpoint
    from training.trainer import Trainer

    out = tmp_path / "run"
    Trainer(TrainConfig(**TINY), out, progress=False).run()
    trainer = Trainer(TrainConfig(**TINY), out, resume=out / "checkpoint.pt", total_games=80,
                      progress=False)
    trainer.weights.w2[0, 0] = np.inf
    good = (out / "checkpoint.pt").read_bytes()
    with pytest.raises(TdgammonError, match="starting weights"):
        trainer.run()
    assert (out / "checkpoint.pt").read_bytes() == good
    assert load_checkpoint(out / "checkpoint.pt").games_trained == 40


# -- 4. one line, not a traceback -----------------------------------------------------------

def test_train_config_that_is_a_directory_or_not_utf8(tmp_path, capsys):
    code, out, err = cli(capsys, ["train", "--config", str(tmp_path)])
    assert_one_error_line(code, err, "train")
    bad = tmp_path / "latin1.toml"
    bad.write_bytes("# caf\xe9\nseed = 1\n".encode("latin-1"))
    code, out, err = cli(capsys, ["train", "--config", str(bad)])
    assert_one_error_line(code, err, "train")
    assert "UTF-8" in err[0]


@pytest.mark.parametrize("text", ["seed = -1", "seed = 100000000000000000000", "hidden = 10000000000000",
                                  "games = 0", "workers = 100000", "seed = 1.5", "features = 1",
                                  "lr = 100000000000000000000000000000000000000000000000000000000000"])
def test_train_config_ints_out_of_range(tmp_path, capsys, text):
    path = tmp_path / "c.toml"
    path.write_text(text + "\n")
    code, out, err = cli(capsys, ["train", "--config", str(path), "--out", str(tmp_path / "run")])
    assert_one_error_line(code, err, "train")


def test_pit_seed_out_of_range(capsys):
    for seed in ("-1", str(2**64)):
        code, out, err = cli(capsys, ["pit", "pubeval", "random", "--games", "2", "--workers", "2",
                                      "--seed", seed, "--no-progress"])
        assert_one_error_line(code, err, "pit")


def test_pit_save_unwritable_is_refused_before_playing(capsys):
    code, out, err = cli(capsys, ["pit", "pubeval", "random", "--games", "2", "--workers", "1",
                                  "--save", "/proc/x.mat", "--no-progress"])
    assert_one_error_line(code, err, "pit")
    assert out == ""


@pytest.mark.parametrize("path", ["/proc/x.npz", "/dev/null"])
def test_rollout_save_unwritable_is_refused_before_the_trials(capsys, path):
    """A save is renamed over the old file: a device (/dev/null) is refused, never replaced."""
    code, out, err = cli(capsys, ["rollout", "4HPwATDgc/ABMA", "--evaluator", "pubeval", "--trials", "36",
                                  "--save", path, "--quiet"])
    assert_one_error_line(code, err, "rollout")
    assert f"--save {path}" in err[0] and out == ""
    assert not Path("/dev/null").is_file()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_analyse_html_failing_at_the_end_still_prints_the_report(tmp_path, capsys):
    from tests.test_analysis import ONE_GAME

    mat = tmp_path / "g.mat"
    mat.write_text(ONE_GAME)
    code, out, err = cli(capsys, ["analyse", str(mat), "--ply", "1", "--evaluator", "pubeval", "--no-progress",
                                  "--html", "/dev/full"])
    assert_one_error_line(code, err, "analyse")
    assert "per unforced move" in out


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize("as_json", [False, True])
def test_pit_save_failing_at_the_end_still_prints_the_results(capsys, as_json):
    argv = ["pit", "pubeval", "random", "--games", "2", "--workers", "1", "--save", "/dev/full",
            "--no-progress"] + (["--json"] if as_json else [])
    code, out, err = cli(capsys, argv)
    assert_one_error_line(code, err, "pit")
    assert "not saved" in err[0]
    if as_json:
        assert json.loads(out)["games"] == 2
    else:
        assert "pubeval ppg:" in out


def _crafted(**changes) -> dict:
    """A hand-written one-net payload (no seal, as torch.save writes it), valid unless changed."""
    from engine.encoder import ENCODER_VERSION
    from models.network import TDNet

    payload = {"format": "tdgammon-checkpoint", "format_version": 1, "encoder_version": ENCODER_VERSION,
               "architecture": {"kind": "TDNet", "hidden": 4, "features": 0},
               "state_dict": TDNet(4).state_dict(), "config": {}, "games_trained": 0, "trainer_state": {}}
    for key, value in changes.items():
        if key == "weights":
            payload["state_dict"] = {**payload["state_dict"], **value}
        else:
            payload[key] = value
    return payload


def _ensemble(members: object, count: object = 2) -> dict:
    return {**{k: v for k, v in _crafted().items() if k in ("format", "format_version", "encoder_version")},
            "architecture": {"kind": "ensemble", "members": count}, "members": members}


def _crafted_files() -> dict[str, dict]:
    import torch

    from models.network import TDNet

    return {
        "members = [1, 2]": _ensemble([1, 2]),
        "one member": _ensemble([_crafted()], 1),
        "members count": _ensemble([_crafted(), _crafted()], 3),
        "mixed inputs": _ensemble([_crafted(), _crafted(architecture={"kind": "TDNet", "hidden": 4, "features": FEATURES_VERSION},
                                                        state_dict=TDNet(4, features=True).state_dict())]),
        "hidden = -5": _crafted(architecture={"kind": "TDNet", "hidden": -5, "features": 0}),
        "hidden = true": _crafted(architecture={"kind": "TDNet", "hidden": True, "features": 0}),
        "hidden = 10^13": _crafted(architecture={"kind": "TDNet", "hidden": 10**13, "features": 0}),
        "features = [1]": _crafted(architecture={"kind": "TDNet", "hidden": 4, "features": [1]}),
        "architecture = 7": _crafted(architecture=7),
        "no weights": _crafted(state_dict={}),
        "weights a list": _crafted(state_dict=[1, 2]),
        "NaN weight": _crafted(weights={"out.bias": torch.full((5,), float("nan"))}),
        "infinite weight": _crafted(weights={"hidden.weight": torch.full((4, 198), float("inf"))}),
        "integer weights": _crafted(weights={"out.bias": torch.zeros(5, dtype=torch.int64)}),
        "wrong shape": _crafted(weights={"hidden.weight": torch.zeros(4, 7)}),
        "extra tensor": _crafted(weights={"extra": torch.zeros(1)}),
        "config a list": _crafted(config=[1]),
        "games_trained = -1": _crafted(games_trained=-1),
        "games_trained = 1.5": _crafted(games_trained=1.5),
        "trainer_state a string": _crafted(trainer_state="x"),
        "format_version a list": _crafted(format_version=[1]),
    }


@pytest.mark.parametrize("name", list(_crafted_files()))
def test_crafted_model_files_are_refused_in_one_line(tmp_path, capsys, name):
    import torch

    path = tmp_path / "crafted.pt"
    torch.save(_crafted_files()[name], path)
    code, out, err = cli(capsys, ["eval", OPENING, "--model", str(path)])
    assert_one_error_line(code, err, "eval")
    assert out == ""


@pytest.mark.parametrize("state", [{"rng_states": [-1]}, {"rng_states": [2**64]}, {"rng_states": "x"},
                                   {"rng_states": [True]}, {"wall_time": "x"}, {"wall_time": float("nan")},
                                   {"distilled": 3}])
def test_crafted_trainer_state_is_refused_on_resume(tmp_path, capsys, state):
    import torch

    config = {**TINY, "hidden": 4}
    path = tmp_path / "crafted.pt"
    torch.save(_crafted(config=config, trainer_state=state), path)
    code, out, err = cli(capsys, ["train", "--resume", str(path), "--out", str(tmp_path / "run"), "--no-progress"])
    assert_one_error_line(code, err, "train")
    assert "malformed trainer state" in err[0]


def test_a_hand_written_payload_is_valid_unless_changed(tmp_path):
    """Guards the crafted cases above: each fails for its change, not for the helper."""
    import torch

    from models.checkpoint import load_checkpoint

    torch.save(_crafted(), tmp_path / "ok.pt")
    assert load_checkpoint(tmp_path / "ok.pt").net.n_hidden == 4


def trained(tmp_path: Path) -> Path:
    """A 40-game run's checkpoint (TINY)."""
    from training.trainer import Trainer

    Trainer(TrainConfig(**TINY), tmp_path / "run", progress=False).run()
    return tmp_path / "run" / "checkpoint.pt"


def test_resume_with_a_nan_learning_rate_leaves_the_checkpoint_byte_identical(tmp_path, capsys):
    ckpt = trained(tmp_path)
    good = ckpt.read_bytes()
    config = tmp_path / "nan.toml"
    config.write_text("\n".join(f"{k} = {v}" for k, v in {**TINY, "lr": "nan"}.items()) + "\n")
    code, out, err = cli(capsys, ["train", "--config", str(config), "--resume", str(ckpt),
                                  "--out", str(ckpt.parent), "--games", "100", "--no-progress"])
    assert_one_error_line(code, err, "train")
    assert "'lr'" in err[0] and "finite" in err[0]
    assert ckpt.read_bytes() == good


def test_a_bit_flipped_checkpoint_is_refused_in_one_line(tmp_path, capsys):
    ckpt = trained(tmp_path)
    data = bytearray(ckpt.read_bytes())
    data[len(data) // 2] ^= 0x04
    flipped = tmp_path / "flipped.pt"
    flipped.write_bytes(bytes(data))
    for argv in (["eval", OPENING, "--model", str(flipped)],
                 ["train", "--resume", str(flipped), "--out", str(tmp_path / "more"), "--no-progress"]):
        code, out, err = cli(capsys, argv)
        assert_one_error_line(code, err, argv[0])
        assert "corrupt" in err[0]


def test_a_bit_flip_in_the_shipped_model_weights_is_refused(tmp_path, capsys):
    """models/default.pt is sealed: one flipped bit in a weight is refused by the seal, and
    the same bytes without the seal (a file from before it) by the zip's CRC-32 of the record."""
    import zipfile

    from models.checkpoint import SEAL
    from models.paths import DEFAULT_MODEL

    data = bytearray(DEFAULT_MODEL.read_bytes())
    with zipfile.ZipFile(DEFAULT_MODEL) as archive:
        record = max(archive.infolist(), key=lambda info: info.file_size)   # a weight matrix
    data[record.header_offset + 200 + record.file_size // 2] ^= 0x10
    comment = bytes(data).rindex(SEAL)
    unsealed = bytes(data[:comment - 2]) + b"\0\0"
    for name, payload, message in (("sealed.pt", bytes(data), "do not match its seal"),
                                   ("unsealed.pt", unsealed, "fails its CRC check")):
        flipped = tmp_path / name
        flipped.write_bytes(payload)
        code, out, err = cli(capsys, ["eval", OPENING, "--model", str(flipped)])
        assert_one_error_line(code, err, "eval")
        assert message in err[0]


def test_a_write_never_puts_non_finite_weights_in_place(tmp_path):
    import torch

    from engine.errors import CheckpointError
    from models.checkpoint import Checkpoint, load_checkpoint, save_checkpoint

    ckpt = trained(tmp_path)
    good = ckpt.read_bytes()
    net = load_checkpoint(ckpt).net
    with torch.no_grad():
        net.out.bias[0] = float("nan")
    with pytest.raises(CheckpointError, match="NaN or infinite"):
        save_checkpoint(ckpt, Checkpoint(net))
    assert ckpt.read_bytes() == good and not list(ckpt.parent.glob("*.tmp"))


def test_diverged_training_stops_in_one_line_and_keeps_the_checkpoint(tmp_path, capsys, monkeypatch):
    """A chunk whose weights come back non-finite (here poisoned after the real kernel ran):
    the command stops with one line, and checkpoint and metrics stay as they were."""
    from training.selfplay import SelfPlay

    ckpt = trained(tmp_path)
    good, metrics = ckpt.read_bytes(), (ckpt.parent / "metrics.jsonl").read_text()
    real_train = SelfPlay.train
    calls = []

    def diverging(self, *args):
        result = real_train(self, *args)
        calls.append(1)
        if len(calls) == 2:
            self.weights.w1[0, 0] = np.nan
        return result

    monkeypatch.setattr(SelfPlay, "train", diverging)
    code, out, err = cli(capsys, ["train", "--resume", str(ckpt), "--out", str(ckpt.parent),
                                  "--games", "100", "--no-progress"])
    assert_one_error_line(code, err, "train")
    assert "training stopped at game 50" in err[0] and "keeps the last good state" in err[0]
    assert ckpt.read_bytes() == good
    assert (ckpt.parent / "metrics.jsonl").read_text() == metrics


# -- 5. play, serve and argparse ----------------------------------------------------------------

def test_play_on_a_port_in_use_claims_nothing(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        code, out, err = cli(capsys, ["play", "--port", str(taken.getsockname()[1]), "--model", "pubeval"])
    assert_one_error_line(code, err, "play")
    assert out == ""


@pytest.mark.parametrize("host", ["192.0.2.1", "no-such-host.invalid"])
def test_play_on_an_unassignable_host(capsys, host):
    code, out, err = cli(capsys, ["play", "--host", host, "--port", "8080", "--model", "pubeval"])
    assert_one_error_line(code, err, "play")
    assert out == ""


@pytest.mark.parametrize("argv", [["eval", "--ply", "9", OPENING], ["pit", "pubeval"], ["nope"],
                                  ["hint", OPENING, "31", "--top", "x"], ["train", "--games"]])
def test_argparse_errors_are_one_line(capsys, argv):
    code, out, err = cli(capsys, argv)
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith("tdgammon") and ": error: " in err[0] and err[0].endswith("(see --help)")


def test_help_still_exits_zero(capsys):
    code, out, err = cli(capsys, ["eval", "--help"])
    assert code == 0 and "POSITION_ID" in out


def test_warnings_do_not_come_before_the_error_line(capsys, monkeypatch):
    import scripts.commands.show as show

    def warn_then_fail(args):
        warnings.warn("a torch-style warning", UserWarning)
        raise TdgammonError("the real problem")

    monkeypatch.setattr(show, "run", warn_then_fail)
    code, out, err = cli(capsys, ["show", OPENING])
    assert_one_error_line(code, err, "show")
    assert "the real problem" in err[0]


# -- 7. empty boards, unbounded echoes, metrics, workers -----------------------------------------

def test_empty_board_is_refused(capsys):
    with pytest.raises(PositionIdError, match="no checkers for either side"):
        decode_position_id("AAAAAAAAAAAAAA")
    code, out, err = cli(capsys, ["eval", "AAAAAAAAAAAAAA", "--evaluator", "pubeval"])
    assert_one_error_line(code, err, "eval")


def test_a_finished_game_still_decodes():
    """One side with no checkers is a finished game (the afterstate of a last bear-off)."""
    board = np.zeros((2, 25), dtype=np.int8)
    board[1, 5] = 15
    assert (decode_position_id(Position(board).id) == board).all()


@pytest.mark.parametrize("argv", [["hint", OPENING, "1" * 1_000_000],
                                  ["eval", "Z" * 1_000_000],
                                  ["moves", "4" * 1_000_000, "31"],
                                  ["eval", OPENING, "--match-id", "q" * 1_000_000]])
def test_error_lines_do_not_echo_unbounded_input(capsys, argv):
    code, out, err = cli(capsys, argv)
    assert_one_error_line(code, err, argv[0])
    assert len(err[0]) < 500


def test_resume_drops_metrics_past_the_checkpoint(tmp_path):
    from training.trainer import Trainer

    out = tmp_path / "run"
    Trainer(TrainConfig(**TINY), out, progress=False).run()
    path = out / "metrics.jsonl"
    # A kill between a metrics record and its checkpoint, and one in the middle of a line.
    with open(path, "a") as fh:
        fh.write(json.dumps({"games": 60, "td_error": 0.1}) + "\n" + '{"games": 8')
    Trainer(TrainConfig(**TINY), out, resume=out / "checkpoint.pt", total_games=80, progress=False).run()
    games = [json.loads(line)["games"] for line in path.read_text().splitlines()]
    assert games == sorted(set(games)) == [20, 40, 60, 80]


KILLER = """
import os, signal, sys
import models.checkpoint as checkpoint
import training.trainer as trainer
from scripts.cli import main

where, nth = sys.argv[1], int(sys.argv[2])
calls = []

def dying(real):
    def wrapper(*args, **kwargs):
        calls.append(1)
        if len(calls) == nth:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kwargs)
    return wrapper

if where == "before-checkpoint":    # the metrics record is written, its checkpoint not yet
    trainer.save_checkpoint = dying(trainer.save_checkpoint)
else:                                # the new checkpoint is complete in .tmp, not yet moved in place
    checkpoint.os.replace = dying(checkpoint.os.replace)
sys.exit(main(sys.argv[3:]))
"""


@pytest.mark.slow
def test_killed_twice_the_run_resumes_bit_identical_without_repeated_metrics(tmp_path):
    """SIGKILL at the two worst moments (between a metrics record and its checkpoint; with the
    next checkpoint written to .tmp but not moved in place), resumed each time: the metrics
    hold each record once and the weights equal an uninterrupted run's."""
    import subprocess
    import sys

    import torch

    from models.checkpoint import load_checkpoint
    from training.trainer import Trainer

    config = {**TINY, "games": 100}
    Trainer(TrainConfig(**config), tmp_path / "whole", progress=False).run()
    toml = tmp_path / "c.toml"
    toml.write_text("\n".join(f"{k} = {v}" for k, v in config.items()) + "\n")
    out = tmp_path / "killed"
    train = ["train", "--config", str(toml), "--out", str(out), "--no-progress"]
    resume = ["--resume", str(out / "checkpoint.pt")]
    root = Path(__file__).resolve().parent.parent
    for kill, argv in ((["before-checkpoint", "2"], train), (["in-replace", "2"], train + resume)):
        proc = subprocess.run([sys.executable, "-c", KILLER, *kill, *argv], cwd=root, capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode == -9, proc.stderr
        saved = load_checkpoint(out / "checkpoint.pt").games_trained
        logged = [json.loads(line)["games"] for line in (out / "metrics.jsonl").read_text().splitlines()]
        assert logged[-1] > saved          # the kill left a record past the checkpoint
    assert main(train + resume) == 0
    games = [json.loads(line)["games"] for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert games == [20, 40, 60, 80, 100]
    assert not list(out.glob("*.tmp"))
    whole, resumed = load_checkpoint(tmp_path / "whole" / "checkpoint.pt"), load_checkpoint(out / "checkpoint.pt")
    assert resumed.games_trained == 100
    for name, value in whole.net.state_dict().items():
        assert torch.equal(resumed.net.state_dict()[name], value), name


def test_resume_with_other_workers_warns_in_one_line(tmp_path, capsys):
    from training.trainer import Trainer

    out = tmp_path / "run"
    Trainer(TrainConfig(**TINY), out, progress=False).run()
    config = tmp_path / "two.toml"
    config.write_text("\n".join(f"{k} = {v}" for k, v in {**TINY, "workers": 2}.items()) + "\n")
    code, stdout, err = cli(capsys, ["train", "--config", str(config), "--resume", str(out / "checkpoint.pt"),
                                     "--out", str(out), "--games", "60", "--no-progress"])
    assert code == 0
    assert len(err) == 1 and err[0].startswith("tdgammon train: warning: ") and "workers = 1" in err[0]
