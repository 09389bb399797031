"""Experiment tools, each run as `python -m scripts.lab.NAME`; see docs/commands.md."""
