"""Where the shipped models live; kept free of torch so the command line starts fast."""

from pathlib import Path

DEFAULT_MODEL = Path(__file__).resolve().parent / "default.pt"
# The previous default: Tesauro's 198 inputs only, kept to pit against and as the
# 198-input network the project promises.
TESAURO_MODEL = Path(__file__).resolve().parent / "tesauro-198-80.pt"
# The one-sided race net (engine/race_dists.py): every network the loader builds answers races with it.
RACE_MODEL = Path(__file__).resolve().parent / "race.npz"
