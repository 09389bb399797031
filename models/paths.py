"""Where the shipped model lives; kept free of torch so the command line starts fast."""

from pathlib import Path

DEFAULT_MODEL = Path(__file__).resolve().parent / "default.pt"
